//! AMDGPU gfx9/CDNA instruction decoder (gfx908, gfx90a, gfx942, gfx950).
