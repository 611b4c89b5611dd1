//! Device-side code xfpx injects, as sources: NVBit device functions (nvidia/) and AMDGPU trampoline snippets (amd/).
