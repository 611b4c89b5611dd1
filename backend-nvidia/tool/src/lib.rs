//! The Rust core of the NVBit tool, as a static library: the C++ shim
//! (`shim/xfpx_nvbit.cu`) forwards NVBit's callbacks here through the flat
//! C interface of [`ffi`] (declared for C in `shim/xfpx_nvbit.h`); the
//! decisions are taken by [`xfpx_nvidia::runtime::ToolCore`]. The CUPTI
//! library of hardware counters (`shim/xfpx_cupti.cpp`) links the same
//! core and adds the entries of [`hw_ffi`]; [`prepare_ffi`] holds those of
//! the disassembly made in the background at a kernel's first launch.

pub mod ffi;
pub mod hw_ffi;
pub mod prepare_ffi;
