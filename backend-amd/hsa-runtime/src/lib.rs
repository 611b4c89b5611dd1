//! An HSA runtime over xfpx's CDNA emulator, built as
//! `libhsa-runtime64.so.1`: HSA programs (and the tools `HSA_TOOLS_LIB`
//! names) run on it without an AMD GPU. One CPU agent and one GPU agent of
//! the target `XFPX_HSA_TARGET` names (default gfx942); device memory is host
//! memory; a host thread per queue runs AQL packets, kernel dispatches on
//! the emulator. Every exported `hsa_*` function calls through the API table
//! tools receive in `OnLoad` (see [`ffi::table`]).
//!
//! The C boundary (types, tables, entry points, raw memory) is all in
//! [`ffi`]; the rest is safe Rust over it.

pub mod agents;
pub mod code;
pub mod device;
pub mod ffi;
pub mod memory;
pub mod queues;
mod relocate;
pub mod signals;
pub mod state;
