//! xfpx-amd-emu: a CDNA (gfx90a, gfx942; gfx908/gfx950 where instructions are
//! shared) wave64 emulator. It is a test and replay engine, not a performance
//! tool: it runs real compiled kernels instruction by instruction so that an
//! original and a rewritten kernel can be compared, and a captured launch can
//! be replayed without an AMD GPU.

pub mod arguments;
pub mod captured;
pub mod decode;
pub mod dispatch;
mod exec;
pub mod fpu;
pub mod launch;
pub mod matrix;
pub mod memory;
pub mod minifloat;
pub mod placement;
pub mod program;
pub mod replay;
pub mod timing;
pub mod wave;

pub use dispatch::{
    run_dispatch, run_kernel, Dispatch, DispatchAddresses, ExecCounts, LoadedCode, Observer, RunError, RunLimits,
    RunStats, StepObserver, DEFAULT_MAX_WAVES,
};
pub use launch::{Launch, LaunchError};
pub use program::{Program, ProgramError};
pub use replay::{
    compare, replay, run_launch, run_launch_with, Comparison, Error, LaunchMemory, OutputBuffer, ReplayOptions,
    ReplayOutcome,
};
pub use timing::{Hazard, HazardKind, Reg};
