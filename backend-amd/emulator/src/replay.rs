//! `xfpx replay`: runs a launch description on the emulator and reports what
//! happened in the `xfpx-report/1` schema (vendor `amd-emulated`), with the
//! output buffers. Also the building block for running an original and a
//! rewritten code object on the same launch: [`run_launch`].

use crate::dispatch::{run_kernel, Dispatch, LoadedCode, RunLimits, RunStats, DEFAULT_MAX_WAVES};
use crate::launch::Launch;
use crate::memory::GlobalMemory;
use crate::program::Program;
use crate::timing::Hazard;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use xfpx_common::report::{Collector, ExitStatus, RunInfo, SiteRef};
use xfpx_common::site::SiteId;

/// A one-line error of replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Error {}

/// Options of a replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Replaces `{target}` in the launch's code-object path, and picks the
    /// entry of an offload bundle.
    pub target: Option<String>,
    /// Runs this code object instead of the launch's (e.g. a rewritten one).
    pub code_object: Option<PathBuf>,
    /// Writes each output buffer to `DIR/<name>.bin`.
    pub out_dir: Option<PathBuf>,
    /// Instruction limit (0: the default).
    pub max_instructions: u64,
    /// Launches of more waves are refused before they start (0: the
    /// default, [`DEFAULT_MAX_WAVES`]).
    pub max_waves: u64,
    /// Counts the workgroups finished, for a progress display.
    pub progress: Option<Arc<AtomicU64>>,
    /// Loads within this many bytes before or past a buffer read zeros
    /// instead of faulting (0: the launch's `guard_bytes`, else none).
    pub guard_bytes: u64,
}

impl ReplayOptions {
    /// The run limits these options set.
    pub fn limits(&self) -> RunLimits {
        let d = RunLimits::default();
        RunLimits {
            max_instructions: if self.max_instructions == 0 { d.max_instructions } else { self.max_instructions },
            progress: self.progress.clone(),
            compute_units: None,
            observer: None,
            stack_bytes: d.stack_bytes,
            guard_bytes: self.guard_bytes,
        }
    }

    /// Refuse a launch beyond the wave limit, before anything runs.
    pub fn check_work(&self, launch: &Launch) -> Result<(), Error> {
        let max = if self.max_waves == 0 { DEFAULT_MAX_WAVES } else { self.max_waves };
        let waves = launch.waves();
        if waves > max {
            return Err(Error(format!(
                "the launch runs {waves} waves, more than the limit of {max} (raise it with --max-waves N or XFPX_MAX_WAVES=N)"
            )));
        }
        Ok(())
    }
}

/// One output buffer after the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBuffer {
    pub name: String,
    /// The launch's element type for it (`f32`, `u32`, ...).
    pub elem: String,
    pub bytes: Vec<u8>,
}

/// What a replay produced.
#[derive(Debug, Clone)]
pub struct ReplayOutcome {
    pub report: xfpx_common::report::Report,
    pub outputs: Vec<OutputBuffer>,
    pub stats: RunStats,
    pub target: String,
}

impl ReplayOutcome {
    pub fn hazards(&self) -> Vec<Hazard> {
        self.stats.hazards()
    }
    pub fn output(&self, name: &str) -> Option<&[u8]> {
        self.outputs.iter().find(|o| o.name == name).map(|o| o.bytes.as_slice())
    }
}

/// Reads the code object a launch names (or `override_path`).
pub fn load_code_object(launch: &Launch, opts: &ReplayOptions) -> Result<Program, Error> {
    if let (None, Some(t)) = (&opts.code_object, opts.target.as_deref()) {
        if launch.code_object.contains("{target}") && !launch.runs_on(t) {
            return Err(Error(format!(
                "the launch is for {} only, not {t}",
                launch.targets.as_deref().unwrap_or_default().join(", ")
            )));
        }
    }
    let path = launch.code_object_path(opts.target.as_deref(), opts.code_object.as_deref()).map_err(|e| Error(e.0))?;
    let bytes = xfpx_common::limits::read(&path, xfpx_common::limits::CODE_OBJECT)
        .map_err(|e| Error(format!("cannot read code object {}: {e}", path.display())))?;
    Program::read(&bytes, opts.target.as_deref()).map_err(|e| Error(format!("{}: {e}", path.display())))
}

/// Runs a parsed launch on `object`: allocates its buffers, lays out the
/// arguments against the kernel's metadata, runs, and returns the output
/// buffers with the run's statistics.
pub fn run_launch(
    launch: &Launch,
    object: &Program,
    max_instructions: u64,
) -> Result<(Vec<OutputBuffer>, RunStats), Error> {
    let limits = if max_instructions == 0 {
        RunLimits::default()
    } else {
        RunLimits { max_instructions, ..RunLimits::default() }
    };
    run_launch_with(launch, object, &limits)
}

/// [`run_launch`] with all the run's limits.
pub fn run_launch_with(
    launch: &Launch,
    object: &Program,
    limits: &RunLimits,
) -> Result<(Vec<OutputBuffer>, RunStats), Error> {
    LaunchMemory::new(launch).run(launch, object, limits)
}

/// Emulated memory holding a launch's buffers (allocated in the launch's
/// order) before its run. What else the run needs (an instrumentation's
/// table) is allocated after them, at the address the memory gives.
#[derive(Debug)]
pub struct LaunchMemory {
    mem: GlobalMemory,
    /// (name, address) of each buffer.
    buffers: Vec<(String, u64)>,
}

impl LaunchMemory {
    /// Memory with the buffers of `launch`.
    pub fn new(launch: &Launch) -> LaunchMemory {
        let mut mem = GlobalMemory::new();
        let buffers = launch.buffers.iter().map(|b| (b.name.clone(), mem.allocate(b.bytes.clone()))).collect();
        LaunchMemory { mem, buffers }
    }

    /// Allocates `bytes`; returns their address.
    pub fn allocate(&mut self, bytes: Vec<u8>) -> u64 {
        self.mem.allocate(bytes)
    }

    /// The allocation at `base` (as the run left it).
    pub fn allocation(&self, base: u64) -> Option<&[u8]> {
        self.mem.allocation(base)
    }

    /// Runs `launch` on `object` in this memory: lays out the arguments
    /// against the kernel's metadata, runs, and returns the output buffers
    /// with the run's statistics.
    pub fn run(
        &mut self,
        launch: &Launch,
        object: &Program,
        limits: &RunLimits,
    ) -> Result<(Vec<OutputBuffer>, RunStats), Error> {
        let kernel = object.kernel(&launch.kernel).ok_or_else(|| match &launch.captured {
            Some(on) => {
                let readable = on.demangled.clone().or_else(|| xfpx_common::names::demangle(&launch.kernel));
                let shown = readable.map_or_else(String::new, |d| format!(" ({d})"));
                Error(format!(
                    "the AMD build has no kernel {}{shown}: the launch captured on {} cannot be replayed with it",
                    launch.kernel, on.vendor
                ))
            }
            None => {
                let names: Vec<&str> = object.kernels.iter().map(|k| k.name.as_str()).collect();
                Error(format!(
                    "kernel \"{}\" not found in the code object (it has: {})",
                    launch.kernel,
                    names.join(", ")
                ))
            }
        })?;
        let explicit: Vec<_> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
        if let Some(params) = &launch.params {
            let placed: Vec<u64> = self.buffers.iter().map(|(_, a)| *a).collect();
            let buffers = crate::captured::Placed::all(&launch.buffers, &placed);
            let kernarg = crate::captured::kernarg(&kernel.name, &explicit, params, &buffers).map_err(Error)?;
            return self.dispatch(launch, object, kernel, &kernarg, limits);
        }
        let address_of = |name: &str| self.buffers.iter().find(|(n, _)| n == name).map_or(0, |(_, a)| *a);
        let kernarg =
            crate::arguments::explicit_args(&kernel.name, &kernel.args, &launch.args, &address_of).map_err(Error)?;
        self.dispatch(launch, object, kernel, &kernarg, limits)
    }

    /// Runs `kernel` with its kernarg bytes laid out, and reads the outputs.
    fn dispatch(
        &mut self,
        launch: &Launch,
        object: &Program,
        kernel: &crate::program::Kernel,
        kernarg: &[u8],
        limits: &RunLimits,
    ) -> Result<(Vec<OutputBuffer>, RunStats), Error> {
        let (mem, addrs) = (&mut self.mem, &self.buffers);
        let code = LoadedCode::load(mem, object.clone());
        let d = Dispatch { grid: launch.grid, block: launch.block, dynamic_lds: launch.dynamic_lds };
        let mut limits = limits.clone();
        limits.compute_units = limits.compute_units.or(launch.compute_units);
        if let Some(bytes) = launch.stack_bytes {
            limits.stack_bytes = bytes;
        }
        if limits.guard_bytes == 0 {
            limits.guard_bytes = launch.guard_bytes.unwrap_or(0);
        }
        let stats = run_kernel(mem, &code, kernel, kernarg, &d, &limits)
            .map_err(|e| Error(format!("kernel \"{}\": {e}", kernel.name)))?;
        let mut outputs = Vec::new();
        for name in &launch.outputs {
            let addr = addrs.iter().find(|(n, _)| n == name).map(|(_, a)| *a).unwrap_or(0);
            let elem = launch.buffers.iter().find(|b| &b.name == name).map_or("u8", |b| b.elem.name());
            outputs.push(OutputBuffer {
                name: name.clone(),
                elem: elem.to_string(),
                bytes: mem.allocation(addr).unwrap_or(&[]).to_vec(),
            });
        }
        Ok((outputs, stats))
    }
}

/// `xfpx replay LAUNCH`: loads the launch file, runs it, writes outputs to
/// `opts.out_dir` if given, and returns the report and buffers.
pub fn replay(launch_path: &Path, opts: &ReplayOptions) -> Result<ReplayOutcome, Error> {
    let launch = Launch::load(launch_path).map_err(|e| Error(e.0))?;
    opts.check_work(&launch)?;
    let object = load_code_object(&launch, opts)?;
    let started = xfpx_common::report::unix_now();
    let (outputs, stats) = run_launch_with(&launch, &object, &opts.limits())?;
    if let Some(dir) = &opts.out_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error(format!("cannot create {}: {e}", dir.display())))?;
        for o in &outputs {
            let p = dir.join(format!("{}.bin", o.name));
            std::fs::write(&p, &o.bytes).map_err(|e| Error(format!("cannot write {}: {e}", p.display())))?;
        }
    }
    let report = build_report(&launch, &object, &stats, launch_path, started);
    Ok(ReplayOutcome { report, outputs, stats, target: object.target.name().to_string() })
}

/// The run information of a report made on the emulator (vendor
/// `amd-emulated`), finished now with status 0.
pub fn emulated_run_info(target: &str, command: Vec<String>, mode: &str, started: u64, notes: Vec<String>) -> RunInfo {
    RunInfo {
        vendor: "amd-emulated".into(),
        device: format!("xfpx CDNA emulator ({target})"),
        target: Some(target.to_string()),
        command,
        mode: mode.into(),
        started_unix: started,
        finished_unix: Some(xfpx_common::report::unix_now()),
        exit: ExitStatus::Code { code: 0 },
        sample_every: 1,
        sample_auto: false,
        truncated: false,
        notes,
        attached: true,
    }
}

/// The report of an emulated run: one record per (instruction, kind, format)
/// whose results were NaN, infinite, subnormal or a division by zero, with
/// the number of wave executions that produced one.
pub fn build_report(
    launch: &Launch,
    object: &Program,
    stats: &RunStats,
    launch_path: &Path,
    started: u64,
) -> xfpx_common::report::Report {
    let mut notes = vec![
        format!("{} wave instructions in {} waves of {} workgroups", stats.instructions, stats.waves, stats.workgroups),
        format!("TRAPSTS exception bits (OR over waves): {:#x}", stats.trapsts),
    ];
    if stats.guard_bytes > 0 {
        notes.push(format!(
            "guard zone of {} bytes around buffers: {} lane loads read zeros from it",
            stats.guard_bytes, stats.guarded_loads
        ));
    }
    for h in &stats.hazards() {
        notes.push(format!("hazard: {h}"));
    }
    let command = vec!["replay".into(), launch_path.display().to_string()];
    let run = emulated_run_info(object.target.name(), command, "replay", started, notes);
    let mut c = Collector::new(run, None);
    let launch_idx = c.launch(&launch.kernel, true);
    let entry = object.kernel(&launch.kernel).map(|k| k.entry_vaddr).unwrap_or(0);
    for (&(pc, kind, format), &n) in &stats.observations.results {
        let vaddr = pc.wrapping_sub(stats.code_base);
        let instr = object
            .image
            .get(vaddr as usize..)
            .and_then(|b| crate::decode::decode(object.target, b).ok())
            .map(|i| i.mnemonic.to_string())
            .unwrap_or_default();
        let offset = vaddr.wrapping_sub(entry);
        let site = SiteRef { id: SiteId(offset as u32), offset, instr, location: None };
        c.record(&launch.kernel, kind, format, site, launch_idx, n);
    }
    c.report()
}

/// An original and a rewritten code object run on the same launch.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub original: RunStats,
    pub rewritten: RunStats,
    /// The first output element (buffer, byte offset) that differs, if any.
    pub first_difference: Option<(String, usize)>,
}

impl Comparison {
    pub fn outputs_identical(&self) -> bool {
        self.first_difference.is_none()
    }
    /// Dynamic instruction ratio rewritten / original.
    pub fn instruction_ratio(&self) -> f64 {
        self.rewritten.instructions as f64 / self.original.instructions.max(1) as f64
    }
}

/// Runs `launch` on both objects (each in its own fresh memory) and compares
/// their output buffers byte for byte.
pub fn compare(
    launch: &Launch,
    original: &Program,
    rewritten: &Program,
    max_instructions: u64,
) -> Result<Comparison, Error> {
    let (a_out, a) = run_launch(launch, original, max_instructions).map_err(|e| Error(format!("original: {e}")))?;
    let (b_out, b) = run_launch(launch, rewritten, max_instructions).map_err(|e| Error(format!("rewritten: {e}")))?;
    let first_difference = a_out
        .iter()
        .zip(&b_out)
        .find_map(|(x, y)| x.bytes.iter().zip(&y.bytes).position(|(p, q)| p != q).map(|i| (x.name.clone(), i)));
    Ok(Comparison { original: a, rewritten: b, first_difference })
}
