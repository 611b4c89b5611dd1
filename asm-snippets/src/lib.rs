//! Device-side code xfpx injects, as sources: NVBit device functions
//! (`nvidia/`) and AMDGPU trampoline snippets (`amd/`).
//!
//! The NVIDIA device functions are compiled by `xfpx setup nvidia` (nvcc,
//! steps in `xfpx_nvidia::toolbuild`), not by cargo; this crate exposes the texts that the Rust side
//! must agree with, chiefly the ABI declaration of the device functions.

/// The declaration of the NVIDIA device functions' argument lists
/// (`nvidia/abi.def`), read by the CUDA side through the preprocessor and
/// by the Rust side through `xfpx_nvidia::abi`.
pub const NVIDIA_ABI_DEF: &str = include_str!("../nvidia/abi.def");

/// The CUDA source of the NVIDIA device functions.
pub const NVIDIA_DEVICE_SOURCE: &str = include_str!("../nvidia/xfpx_device.cu");

/// The CUDA source of the fault-injection device function, included by
/// [`NVIDIA_DEVICE_SOURCE`].
pub const NVIDIA_INJECT_SOURCE: &str = include_str!("../nvidia/xfpx_inject.cuh");

/// The CUDA source of the flow tool's device functions, included by
/// [`NVIDIA_DEVICE_SOURCE`].
pub const NVIDIA_FLOW_SOURCE: &str = include_str!("../nvidia/xfpx_flow.cuh");

/// The layout of the device state and records shared by the device
/// functions and the tool shim.
pub const NVIDIA_LAYOUT_HEADER: &str = include_str!("../nvidia/xfpx_layout.h");

/// The CUDA source of launch screening's scan kernel, compiled into the
/// tool shim (not injected: the shim launches it on the program's streams).
pub const NVIDIA_SCREEN_SOURCE: &str = include_str!("../nvidia/xfpx_screen.cuh");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_source_includes_the_abi() {
        assert!(NVIDIA_DEVICE_SOURCE.contains("#include \"abi.def\""));
        assert!(NVIDIA_ABI_DEF.contains("XFPX_DEVICE_FN(xfpx_check_value"));
        assert!(NVIDIA_DEVICE_SOURCE.contains("#include \"xfpx_inject.cuh\""));
        assert!(NVIDIA_INJECT_SOURCE.contains("void xfpx_inject("));
        assert!(NVIDIA_SCREEN_SOURCE
            .contains("__global__ void xfpx_screen_scan(XfpxScreenState *state, XfpxScreenLaunch scan)"));
        assert!(NVIDIA_DEVICE_SOURCE.contains("#include \"xfpx_flow.cuh\""));
        assert!(NVIDIA_FLOW_SOURCE.contains("void xfpx_flow("));
    }
}
