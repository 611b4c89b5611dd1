//! The xfpx tool library for AMD GPUs (`libxfpx_hsa.so`), loaded by the
//! HSA runtime through `HSA_TOOLS_LIB`.
//!
//! [`ffi`] holds everything unsafe: the entry points and the table.
//! [`session`] takes the decisions (which code objects and kernels the
//! program has, which dispatch runs an instrumented copy, what a completed
//! launch recorded) free of FFI; [`cache`] rewrites kernels and keeps them
//! on disk. [`layout`] holds the facts of the runtime's API table it relies
//! on and [`hsa`] the HSA types and constants it uses.
#![deny(unsafe_code)]

pub mod cache;
pub mod ffi;
pub mod hsa;
pub mod layout;
pub mod session;
