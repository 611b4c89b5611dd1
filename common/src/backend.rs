//! The seam between the command line and a GPU vendor's backend. The CLI
//! drives every vendor through [`Backend`]: describe the kernels of a saved
//! image as vendor-neutral views, dump an image as it is or with the plans
//! of a run configuration lowered, run a program live on a GPU
//! ([`LiveBackend`], which also says how it takes a run configuration:
//! the mode it lowers, or why it refuses it) or a captured launch on an emulator
//! ([`EmulatedBackend`]). A new tool is a new [`Mode`] (and the actions and
//! plans behind it) that backends lower; the CLI's commands stay as they are.
//!
//! [`Mode`]: crate::config::Mode

use crate::config::{KernelFilter, Mode, OutputFormat, RunConfig};
use crate::fp::ExceptionKind;
use crate::report::Report;
use crate::view::KernelView;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A backend's failure: a message whose causes read as one line.
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// How far a long piece of work is, for a progress display: `done` of
/// `total` units (kernels rewritten, workgroups run). The backend sets
/// `total` (again, when it starts over) and counts `done`.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: Arc<AtomicU64>,
    pub total: AtomicU64,
}

/// What [`Backend::dump`] shows.
#[derive(Debug, Clone, Default)]
pub struct DumpRequest<'a> {
    /// Only the kernels this filter admits (all when `None`; an error when
    /// the image has none it admits).
    pub kernel: Option<&'a KernelFilter>,
    pub format: OutputFormat,
    /// Lower the plans of this configuration (its mode, its kernel filter)
    /// and show the instrumented kernels; `None`: the image as it is, where
    /// the backend can show one.
    pub lower: Option<&'a RunConfig>,
    /// Counts the kernels lowered.
    pub progress: Option<Arc<Progress>>,
    /// The lowered image is saved to be run later: where the backend
    /// places runtime data (the AMD record table) is left for whoever runs
    /// it to fill in, and recorded in the image.
    pub runnable: bool,
}

/// What [`Backend::dump`] produced.
#[derive(Debug, Clone)]
pub struct Dumped {
    /// The rendering, in the format asked for.
    pub text: String,
    /// The instrumented image, where lowering writes one (AMD code objects).
    pub image: Option<Vec<u8>>,
}

/// One GPU vendor's backend.
pub trait Backend {
    /// The vendor's name, as reports and messages give it.
    fn name(&self) -> &'static str;

    /// The vendor-neutral views of the kernels in a saved image (a SASS
    /// listing, a code object) that `kernels` admits: what a tool plans over.
    fn describe(&self, image: &[u8], kernels: &KernelFilter) -> Result<Vec<KernelView>, BackendError>;

    /// Show a saved image, as it is or instrumented (`xfpx dump`).
    fn dump(&self, image: &[u8], request: &DumpRequest<'_>) -> Result<Dumped, BackendError>;

    /// Running programs on this vendor's GPUs, where the backend can.
    fn live(&self) -> Option<&dyn LiveBackend> {
        None
    }

    /// Running captured launches on an emulator, where the backend has one.
    fn emulated(&self) -> Option<&dyn EmulatedBackend> {
        None
    }
}

/// How the instrumentation library enters the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inject {
    /// Preloaded by the dynamic loader (`LD_PRELOAD`, appended to a value
    /// already there).
    Preload,
    /// Loaded by the GPU driver's own injection hook, only into processes
    /// that use the GPU.
    DriverHook,
}

/// What the environment a live backend gives the program is made from.
pub struct Launching<'a> {
    /// The instrumentation library ([`LiveBackend::library`]'s).
    pub library: &'a Path,
    pub inject: Inject,
    /// A variable's value in xfpx's own environment (which the program
    /// inherits), e.g. to add to `LD_PRELOAD` rather than replace it.
    pub existing: &'a dyn Fn(&str) -> Option<OsString>,
    /// A private folder of the run, removed when it ends.
    pub scratch: &'a Path,
    /// The device target an emulated device takes (`--target`).
    pub target: Option<&'a str>,
}

impl std::fmt::Debug for Launching<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launching")
            .field("library", &self.library)
            .field("inject", &self.inject)
            .field("scratch", &self.scratch)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// The environment variables that load the library into the program, and
/// what the user should hear about them (one line each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchEnv {
    pub vars: Vec<(OsString, OsString)>,
    pub warnings: Vec<String>,
}

/// How a live backend runs a configuration ([`LiveBackend::settle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The mode it lowers: the configuration's, or the one it checks in instead.
    pub mode: Mode,
    /// What the report says of a setting taken otherwise (one line each).
    pub notes: Vec<String>,
}

/// Why a live backend does not run a configuration (one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A setting that means nothing on this vendor's GPUs (a usage error).
    Usage(String),
    /// Something this vendor's instrumentation does not do.
    Unavailable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Usage(line) | Refusal::Unavailable(line) => f.write_str(line),
        }
    }
}

/// A program run on a GPU with instrumentation loaded into it. The CLI
/// settles the run configuration with [`LiveBackend::settle`], starts the
/// program with [`LiveBackend::environment`] and the configuration's file,
/// and collects the events it streams.
pub trait LiveBackend {
    /// The mode a run of `config` lowers on this vendor's GPUs, with what
    /// the report should say of settings it takes otherwise, or why it
    /// does not run it; the instrumentation library settles it the same
    /// way. By default every configuration runs as it is.
    fn settle(&self, config: &RunConfig) -> Result<Settled, Refusal> {
        Ok(Settled { mode: config.mode, notes: Vec::new() })
    }

    /// The instrumentation library programs load.
    fn library(&self) -> Result<PathBuf, BackendError>;

    /// Check, before the program starts, what the instrumentation needs on
    /// this machine besides the library (e.g. a disassembler).
    fn check_machine(&self) -> Result<(), BackendError>;

    /// The environment that loads the library into the program.
    fn environment(&self, launching: &Launching<'_>) -> Result<LaunchEnv, BackendError>;
}

/// A captured kernel launch to run on the emulator.
#[derive(Debug, Clone)]
pub struct ReplayRequest<'a> {
    /// The launch description.
    pub launch: &'a Path,
    /// The device target (fills `{target}` in the launch's image path and
    /// picks a bundle's entry).
    pub target: Option<&'a str>,
    /// Run this image instead of the one the launch names.
    pub code_object: Option<&'a Path>,
    /// Instrument the launch's kernel for this configuration (its mode, or
    /// its tool and fault) and report what the instrumentation recorded; `None`: report what
    /// the emulator observes in the original kernel.
    pub instrument: Option<&'a RunConfig>,
    /// Instruction limit (0: the emulator's).
    pub max_instructions: u64,
    /// Launches of more waves are refused before they start (0: the
    /// emulator's limit).
    pub max_waves: u64,
    /// Loads within this many bytes before or past a buffer read zeros
    /// instead of faulting (0: the launch's `guard_bytes`, else none).
    pub guard_bytes: u64,
    /// Counts the workgroups run.
    pub progress: Option<Arc<Progress>>,
}

/// One output buffer of a replayed launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBuffer {
    pub name: String,
    /// Element type from the launch (`f32`, `f64`, `f16`, `u32`, ...), when known.
    pub elem: Option<String>,
    pub bytes: Vec<u8>,
}

/// What a replay produced.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub report: Report,
    /// The launch's output buffers.
    pub outputs: Vec<OutputBuffer>,
    /// Kinds whose exception bits waves ended with (screen mode): they are
    /// findings for `--fail-on` though no record names an instruction.
    pub screened_kinds: Vec<ExceptionKind>,
    /// Why the kernel stopped, when an injected fault stopped it (as a
    /// crash would stop a program); the report is still whole.
    pub failure: Option<String>,
}

/// Captured launches run on an emulator.
pub trait EmulatedBackend {
    fn replay(&self, request: &ReplayRequest<'_>) -> Result<Replayed, BackendError>;
}
