//! The xfpx tool library for AMD GPUs (`libxfpx_hsa.so`), loaded by the
//! HSA runtime through `HSA_TOOLS_LIB` (`xfpx run --vendor amd` sets it).
//! At `OnLoad` it checks the API table's layout, then replaces the entries
//! that load code objects and make queues: every code object is kept by
//! content, each frozen executable's kernel objects are mapped to their
//! kernels, and the program's queues become interception queues whose
//! dispatch packets the tool sees first. A sampled launch runs the kernel's
//! instrumented copy (rewritten on first use, cached on disk) with a
//! completion signal of the tool's; when it completes, what the copy
//! recorded in its table goes to `xfpx run` as findings of that launch,
//! through the event stream NVIDIA's tool uses.
//!
//! [`ffi`] holds everything unsafe: the entry points and the table.
//! [`session`] takes the decisions (which code objects and kernels the
//! program has, which dispatch runs an instrumented copy, what a completed
//! launch recorded) free of FFI; [`cache`] rewrites kernels and keeps them
//! on disk. [`layout`] holds the facts of the runtime's API table it relies
//! on and [`hsa`] the HSA types and constants it uses.
#![deny(unsafe_code)]

/// The rewriter makes and frees many small buffers: the allocator the CLI uses too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod cache;
pub mod ffi;
pub mod hsa;
pub mod layout;
pub mod session;
