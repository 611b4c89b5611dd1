//! `xfpx replay` of instrumented AMD code: the exception detector (or the
//! screener) end to end without a GPU. The launch's code object is either
//! rewritten here (`--mode detect|screen`: prepared once, its table
//! allocated in emulated memory after the launch's buffers, then emitted
//! with that address), or was rewritten already (`xfpx dump --rewrite MODE
//! --out`), in which case its rewrite record gives the mode, the table's
//! size and where its address goes. The rewritten kernel runs on the
//! emulator, and the table it filled becomes the report: what the
//! instrumentation itself recorded, not what the emulator observed.

use crate::rewrite::{self, counts, table, KernelState, Mode, Prepared, RewriteOptions, RewriteRecord, TableAddress};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::{LaunchMemory, ReplayOptions};
use xfpx_common::backend::OutputBuffer;
use xfpx_common::config::KernelFilter;
use xfpx_common::counters::{CountersSection, KernelCounters, LaunchCounters, WindowCounters};
use xfpx_common::fault::FaultSpec;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::inject_tool::ACTIVATIONS;
use xfpx_common::limits;
use xfpx_common::report::{Collector, ExitStatus, Injection, KernelStatus, Report};

use crate::inject::AmdInjector;

/// What a replay of the rewritten kernel produced.
#[derive(Debug)]
pub struct RewrittenReplay {
    pub report: Report,
    /// The launch's output buffers.
    pub outputs: Vec<OutputBuffer>,
    /// Kinds the screening bits stand for (screen mode).
    pub screened_kinds: Vec<ExceptionKind>,
    /// The counters in the table (counters tool).
    pub counter_values: Vec<table::CounterValue>,
    /// Memory hazards the emulator saw in the rewritten code.
    pub hazards: usize,
    /// Why the kernel stopped, when an injected fault stopped it (its trap):
    /// the report is still whole, with the injection's count.
    pub failure: Option<String>,
}

/// The code object file a launch names, `{target}` filled in (or `explicit`).
pub fn code_object_path(launch: &Launch, target: Option<&str>, explicit: Option<&Path>) -> Result<PathBuf> {
    launch.code_object_path(target, explicit).map_err(|e| anyhow!("{e}"))
}

/// The instrumented code to run.
pub(crate) enum Instrumented {
    /// Rewritten here, but for the table's address.
    Prepared(Box<Prepared>),
    /// Rewritten by `xfpx dump --rewrite --out`.
    Saved { elf: Vec<u8>, record: Box<RewriteRecord> },
}

/// Replays the launch in `launch_path` rewritten for `mode` (or as its
/// code object was rewritten already, for that mode).
pub fn replay_rewritten(launch_path: &Path, mode: Mode, opts: &ReplayOptions) -> Result<RewrittenReplay> {
    replay_instrumented(launch_path, Some(mode), opts)?.ok_or_else(|| anyhow!("the code object was not rewritten"))
}

/// Replays the launch in `launch_path` with `fault` injected: its code
/// object rewritten with the inject tool's plans, the activations counter
/// read back into the report's `injection` section.
pub fn replay_injected(launch_path: &Path, fault: &FaultSpec, opts: &ReplayOptions) -> Result<RewrittenReplay> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let (path, elf) = read_code_object(&launch, opts)?;
    if RewriteRecord::read(&elf).map_err(|e| anyhow!("{}: {e}", path.display()))?.is_some() {
        bail!("{} was rewritten already; inject into the original code object", path.display());
    }
    let tool = AmdInjector::new(&elf, fault.clone()).map_err(|e| match e {
        rewrite::RewriteError::Input(_) => anyhow!(e).context(format!("cannot read {}", path.display())),
        other => anyhow!("{other}"),
    })?;
    let ropts = RewriteOptions {
        mode: Mode::Count,
        kernels: KernelFilter::exactly(&launch.kernel),
        table: TableAddress::Patchable,
        ..Default::default()
    };
    let prepare = |tool: &AmdInjector| {
        rewrite::prepare_with(&elf, &ropts, tool).with_context(|| format!("cannot rewrite {}", path.display()))
    };
    let mut prepared = prepare(&tool)?;
    let mut injected = Injected { fault, targets: tool.targets(), wanted: tool.wanted(), refused: None };
    let state = prepared.record().kernels.iter().find(|k| k.name == launch.kernel).map(|k| k.state.clone());
    if let (Some(KernelState::Skipped { reason }), true) = (state, injected.targets > 0) {
        // every instruction the fault touches was refused by the lowering:
        // nothing is injected, the kernel runs as it is
        prepared = prepare(&tool.inert())?;
        injected.refused = Some(reason);
    }
    run(&launch, launch_path, &path, Instrumented::Prepared(Box::new(prepared)), opts, Some(injected), false)
}

/// The fault a replay injects, and how many instructions it touches.
pub(crate) struct Injected<'a> {
    fault: &'a FaultSpec,
    targets: usize,
    wanted: String,
    /// Why nothing was injected where the fault touches instructions.
    refused: Option<String>,
}

/// The launch's code object (the one for the target, out of a bundle).
pub(crate) fn read_code_object(launch: &Launch, opts: &ReplayOptions) -> Result<(PathBuf, Vec<u8>)> {
    let target = opts.target.as_deref();
    let path = code_object_path(launch, target, opts.code_object.as_deref())?;
    let bytes = limits::read(&path, limits::CODE_OBJECT)
        .with_context(|| format!("cannot read code object {}", path.display()))?;
    let extracted = crate::image::code_object_for(&bytes, target).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok((path, extracted.bytes.to_vec()))
}

/// Replays the launch in `launch_path` as its code object was rewritten
/// already; None when it was not (or cannot be read: the plain replay says why).
pub fn replay_saved(launch_path: &Path, opts: &ReplayOptions) -> Result<Option<RewrittenReplay>> {
    replay_instrumented(launch_path, None, opts)
}

/// Replays the launch instrumented: rewritten for `mode`, or as its code
/// object was rewritten already; None without a mode and a rewritten object.
fn replay_instrumented(
    launch_path: &Path,
    mode: Option<Mode>,
    opts: &ReplayOptions,
) -> Result<Option<RewrittenReplay>> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let elf = read_code_object(&launch, opts);
    let (path, elf) = match (elf, mode) {
        (Ok(x), _) => x,
        (Err(_), None) => return Ok(None),
        (Err(e), Some(_)) => return Err(e),
    };
    let saved = RewriteRecord::read(&elf).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let instrumented = match (saved, mode) {
        (None, None) => return Ok(None),
        (None, Some(mode)) => {
            let opts = RewriteOptions {
                mode,
                kernels: KernelFilter::exactly(&launch.kernel),
                table: TableAddress::Patchable,
                ..Default::default()
            };
            let prepared =
                rewrite::prepare(&elf, &opts).with_context(|| format!("cannot rewrite {}", path.display()))?;
            Instrumented::Prepared(Box::new(prepared))
        }
        (Some(record), asked) => {
            let recorded = record.mode.name();
            if record.mode == Mode::Count {
                bail!("{} was rewritten to count instructions; replay reads detect and screen tables", path.display());
            }
            if let Some(asked) = asked.filter(|&m| m != record.mode) {
                bail!(
                    "{} was rewritten for --mode {recorded}, not {}: replay it with --mode {recorded} or without --mode",
                    path.display(),
                    asked.name()
                );
            }
            Instrumented::Saved { elf, record: Box::new(record) }
        }
    };
    run(&launch, launch_path, &path, instrumented, opts, None, false).map(Some)
}

/// Allocates the table after the launch's buffers, writes its address into
/// the code, runs it and reads the table into a report (`flow`: the flow
/// tool's, with its section).
pub(crate) fn run(
    launch: &Launch,
    launch_path: &Path,
    path: &Path,
    instrumented: Instrumented,
    opts: &ReplayOptions,
    injected: Option<Injected<'_>>,
    flow: bool,
) -> Result<RewrittenReplay> {
    let table_bytes = match &instrumented {
        Instrumented::Prepared(p) => p.table_bytes(),
        Instrumented::Saved { record, .. } => record.table_bytes(),
    };
    let table_bytes = usize::try_from(table_bytes).unwrap_or(0).max(4);
    let mut memory = LaunchMemory::new(launch);
    let table_address = memory.allocate(vec![0; table_bytes]);
    let (code, record, command) = match instrumented {
        Instrumented::Prepared(p) => {
            let record = p.record().clone();
            let counting = !p.count_layouts().is_empty();
            let out = p.emit(table_address).with_context(|| format!("cannot rewrite {}", path.display()))?;
            let mut command = vec!["replay".into()];
            match &injected {
                Some(i) => {
                    command.extend(["--tool".into(), "inject".into()]);
                    command.extend(i.fault.to_string().split_whitespace().map(String::from));
                }
                None if counting => command.extend(["--tool".into(), "counters".into()]),
                None if flow => command.extend(["--tool".into(), "flow".into()]),
                None => command.extend(["--mode".into(), record.mode.name().into()]),
            }
            command.push(launch_path.display().to_string());
            (out.bytes, record, command)
        }
        Instrumented::Saved { elf, record } => {
            let code = record.place_table(&elf, table_address).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let command = vec![
                "replay".into(),
                "--code-object".into(),
                path.display().to_string(),
                launch_path.display().to_string(),
            ];
            (code, *record, command)
        }
    };
    // A kernel the rewrite refused runs as it is under detect and screen
    // (its code was left unchanged): the report says it was skipped and why,
    // and its coverage. A fault or the flow tool's probes need its code.
    match record.kernels.iter().find(|k| k.name == launch.kernel).map(|k| &k.state) {
        Some(KernelState::Skipped { reason }) if injected.is_some() || flow => {
            bail!("kernel {} was not instrumented: {reason}", launch.kernel)
        }
        Some(KernelState::Excluded) => {
            bail!("kernel {} was not instrumented: {} was rewritten without it", launch.kernel, path.display())
        }
        _ => {}
    }
    let object =
        xfpx_amd_emu::Program::parse(&code).map_err(|e| anyhow!("the rewritten code object does not load: {e}"))?;
    let started = xfpx_common::report::unix_now();
    let ran = memory.run(launch, &object, &opts.limits());
    // a fault's trap stops the kernel as it would stop the program: the
    // table it filled so far is still read
    let (ran, failure) = match (ran, &injected) {
        (Ok(r), _) => (Some(r), None),
        (Err(e), Some(_)) => (None, Some(format!("the faulty kernel stopped: {e}"))),
        (Err(e), None) => bail!("rewritten kernel: {e}"),
    };
    let (outputs, stats) = ran.unwrap_or_default();
    let outputs =
        outputs.into_iter().map(|o| OutputBuffer { name: o.name, elem: Some(o.elem), bytes: o.bytes }).collect();
    let table = memory.allocation(table_address).ok_or_else(|| anyhow!("the table was not read back"))?;
    let contents = table::decode(&record.table, &record.site_table(), table, 0).map_err(|e| anyhow!("table: {e}"))?;
    let counter_values = contents.counters.clone();

    let mode_name = match (&injected, flow) {
        (Some(_), _) => "inject",
        (None, true) => "flow",
        (None, false) => record.mode.name(),
    };
    let mut notes = Vec::new();
    if failure.is_none() {
        notes.push(format!(
            "the rewritten kernel ran {} wave instructions in {} waves of {} workgroups on the emulator",
            stats.instructions, stats.waves, stats.workgroups
        ));
    }
    let hazards = stats.hazards();
    if !hazards.is_empty() {
        notes.push(format!(
            "{} memory hazards in the rewritten code (first at pc {:#x})",
            hazards.len(),
            hazards[0].pc
        ));
    }
    let run_info = xfpx_amd_emu::replay::emulated_run_info(&record.target, command, mode_name, started, notes);
    let mut c = Collector::new(run_info, None);
    c.run_mut().notes.extend(record.notes.iter().cloned());
    for k in record.kernels.iter().filter(|k| k.name == launch.kernel) {
        let status = match &k.state {
            KernelState::Instrumented => KernelStatus::Instrumented,
            KernelState::Partial => KernelStatus::Partial,
            KernelState::Excluded => KernelStatus::Excluded,
            KernelState::Skipped { reason } => KernelStatus::Skipped { reason: reason.clone() },
        };
        c.kernel_status(&k.name, status, k.probes as u64);
        if let Some(coverage) = &k.coverage {
            c.kernel_coverage(&k.name, coverage.clone());
        }
        c.launch(&k.name, k.state.instrumented());
        if let KernelState::Skipped { reason } = &k.state {
            c.run_mut().notes.push(format!("{}: not instrumented, its original code ran: {reason}", k.name));
        }
        if k.waits_added > 0 {
            c.run_mut().notes.push(format!("{}: {} memory waits added by the rewrite", k.name, k.waits_added));
        }
    }
    for (kernel, r) in contents.records {
        c.record(&kernel, r.kind, r.format, r.site, r.first_launch, r.occurrences);
    }
    if flow {
        c.expect_flow(&launch.kernel);
    }
    for (kernel, f) in contents.flows {
        c.record_flow(&kernel, f);
    }
    let mut screened_kinds = Vec::new();
    for s in &contents.screened {
        let kinds: Vec<&str> = s.kinds.iter().map(|k| k.name()).collect();
        c.run_mut().notes.push(format!(
            "{}: waves ended with exception bits {} ({}), kinds {}",
            s.kernel,
            s.exceptions.join(", "),
            format_args!("{:#x}", s.trapsts),
            if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") }
        ));
        screened_kinds.extend(s.kinds.iter().copied());
    }
    if record.mode == Mode::Screen && contents.screened.is_empty() {
        c.run_mut().notes.push(format!("{}: no exception bits set at the end of its waves", launch.kernel));
    }
    if let Some(i) = &injected {
        let activations =
            contents.counters.iter().filter(|v| v.name == ACTIVATIONS).map(|v| u64::from(v.value)).sum::<u64>();
        if i.targets == 0 {
            c.run_mut().notes.push(format!(
                "fault `{}` touches no instruction of kernel {}: it has no {}",
                i.fault, launch.kernel, i.wanted
            ));
        }
        if let Some(why) = &i.refused {
            c.run_mut().notes.push(format!(
                "fault `{}`: every instruction it touches in kernel {} was refused, nothing was injected ({why})",
                i.fault, launch.kernel
            ));
        }
        c.set_injection(Injection { fault: i.fault.clone(), activations, exact: true });
        if let Some(f) = &failure {
            c.run_mut().exit = ExitStatus::Unknown;
            c.run_mut().notes.push(f.clone());
        }
    }
    Ok(RewrittenReplay { report: c.report(), outputs, screened_kinds, counter_values, hazards: hazards.len(), failure })
}

/// Replays the launch in `launch_path` with its kernel rewritten for the
/// counters tool ([`crate::rewrite::counts`]); the report's counters
/// section is what the kernel's own table says, folded (one window: the
/// whole launch). A kernel, or a device function it reaches, that could
/// not be counted everywhere is an error: partial counts would mislead.
pub fn replay_counters(launch_path: &Path, opts: &ReplayOptions) -> Result<RewrittenReplay> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let (path, elf) = read_code_object(&launch, opts)?;
    if RewriteRecord::read(&elf).map_err(|e| anyhow!("{}: {e}", path.display()))?.is_some() {
        bail!("{} was rewritten already: the counters replay rewrites the original code object", path.display());
    }
    // every kernel: a device function shared with another kernel is
    // instrumented only when all its callers are; only this one runs
    let ropts = RewriteOptions {
        mode: Mode::Count,
        kernels: KernelFilter::default(),
        table: TableAddress::Patchable,
        ..Default::default()
    };
    let prepared =
        rewrite::prepare_counters(&elf, &ropts).with_context(|| format!("cannot rewrite {}", path.display()))?;
    let (kernels, functions) = prepared.outcomes();
    for k in kernels.iter().filter(|k| k.name == launch.kernel) {
        if let KernelState::Skipped { reason } = &k.state {
            bail!("kernel {} cannot be counted: {reason}", k.name);
        }
        if let Some(r) = k.refused_sites.first() {
            bail!(
                "kernel {} cannot be counted: the count at {:#x} ({}) is refused: {}",
                k.name,
                r.offset,
                r.instr,
                r.reason
            );
        }
    }
    // (a function left as it is for some kernel runs as a copy made for this one)
    let copied = |f: &rewrite::FunctionOutcome| {
        functions.iter().any(|c| c.copy_of == Some(f.address) && c.reached_by == [launch.kernel.as_str()])
    };
    for f in functions.iter().filter(|f| f.reached_by.contains(&launch.kernel)) {
        match (&f.state, f.refused_sites.first()) {
            (KernelState::Skipped { .. }, _) if copied(f) => {}
            (KernelState::Skipped { reason }, _) => {
                bail!("kernel {} cannot be counted: device function {} is not counted: {reason}", launch.kernel, f.name)
            }
            (_, Some(r)) => bail!(
                "kernel {} cannot be counted: device function {}'s count at {:#x} is refused: {}",
                launch.kernel,
                f.name,
                r.offset,
                r.reason
            ),
            _ => {}
        }
    }
    let layouts = prepared.count_layouts().to_vec();
    let mut replayed = run(&launch, launch_path, &path, Instrumented::Prepared(Box::new(prepared)), opts, None, false)?;
    let mut window = WindowCounters::default();
    for layout in &layouts {
        let w = counts::fold_table(layout, &replayed.counter_values).map_err(|e| anyhow!("counters: {e}"))?;
        window.add(&w);
    }
    replayed.report.counters = Some(CountersSection {
        source: xfpx_common::counters::CounterSource::Instrumented,
        window_blocks: 0,
        warp_size: counts::WAVE_SIZE,
        kernels: vec![KernelCounters {
            kernel: launch.kernel.clone(),
            launches: vec![LaunchCounters { launch: 0, windows: vec![window] }],
        }],
        region_check: None,
    });
    Ok(replayed)
}
