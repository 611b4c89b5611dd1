//! The xfpx tool library for AMD GPUs (`libxfpx_hsa.so`), loaded by the
//! HSA runtime through `HSA_TOOLS_LIB`.
//!
//! [`layout`] holds the facts of the runtime's API table it relies on and
//! [`hsa`] the HSA types and constants it uses.
#![deny(unsafe_code)]

pub mod hsa;
pub mod layout;
