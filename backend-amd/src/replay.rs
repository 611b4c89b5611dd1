//! `xfpx replay --mode detect|screen`: the AMD exception detector end to
//! end without a GPU. The launch's code object is rewritten
//! ([`crate::rewrite`]) with its table placed in emulated memory, the
//! rewritten kernel runs on the emulator, and the table it filled becomes
//! the report: what the instrumentation itself recorded, not what the
//! emulator observed.

use crate::rewrite::{self, table, KernelState, Mode, RewriteOptions};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use xfpx_amd_emu::launch::{BufferSpec, Elem, Launch};
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::ReplayOptions;
use xfpx_common::backend::OutputBuffer;
use xfpx_common::config::KernelFilter;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::limits;
use xfpx_common::report::{Collector, KernelStatus, Report};

/// Name of the extra buffer that holds the instrumentation's table.
const TABLE_BUFFER: &str = "xfpx.table";

/// What a replay of the rewritten kernel produced.
#[derive(Debug)]
pub struct RewrittenReplay {
    pub report: Report,
    /// The launch's output buffers (the table left out).
    pub outputs: Vec<OutputBuffer>,
    /// Kinds the screening bits stand for (screen mode).
    pub screened_kinds: Vec<ExceptionKind>,
}

/// The code object file a launch names, `{target}` filled in.
pub fn code_object_path(launch: &Launch, target: Option<&str>, explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let rel = if launch.code_object.contains("{target}") {
        let t = target
            .ok_or_else(|| anyhow!("the launch's code object {} needs a target (--target)", launch.code_object))?;
        launch.code_object.replace("{target}", t)
    } else {
        launch.code_object.clone()
    };
    Ok(launch.dir.join(rel))
}

/// Replay the launch in `launch_path` rewritten for `mode`, with the
/// target, code object and limits of `opts` (its `out_dir` is not used).
pub fn replay_rewritten(launch_path: &Path, mode: Mode, opts: &ReplayOptions) -> Result<RewrittenReplay> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let target = opts.target.as_deref();
    let path = code_object_path(&launch, target, opts.code_object.as_deref())?;
    let bytes = limits::read(&path, limits::CODE_OBJECT)
        .with_context(|| format!("cannot read code object {}", path.display()))?;
    let extracted = crate::image::code_object_for(&bytes, target).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let elf: &[u8] = &extracted.bytes;
    let mut rewrite_opts =
        RewriteOptions { mode, kernels: KernelFilter::exactly(&launch.kernel), ..Default::default() };

    // The table goes after the launch's buffers, which the emulator maps
    // in order from a fresh address space: the same allocations here give
    // its address, which the rewrite patches into the code.
    let sizing = rewrite::rewrite(elf, &rewrite_opts).with_context(|| format!("cannot rewrite {}", path.display()))?;
    let table_bytes = usize::try_from(sizing.table.bytes()).unwrap_or(0).max(4);
    let mut layout = GlobalMemory::new();
    for b in &launch.buffers {
        layout.allocate(b.bytes.clone());
    }
    rewrite_opts.table_address = layout.allocate(vec![0; table_bytes]);
    let rewritten =
        rewrite::rewrite(elf, &rewrite_opts).with_context(|| format!("cannot rewrite {}", path.display()))?;
    let state = rewritten.kernels.iter().find(|k| k.name == launch.kernel).map(|k| k.state.clone());
    if let Some(KernelState::Skipped { reason }) = &state {
        bail!("kernel {} was not instrumented: {reason}", launch.kernel);
    }

    let mut run = launch.clone();
    if run.buffers.iter().any(|b| b.name == TABLE_BUFFER) {
        bail!("the launch already has a buffer named {TABLE_BUFFER}");
    }
    run.buffers.push(BufferSpec {
        name: TABLE_BUFFER.into(),
        elem: Elem::U8,
        count: table_bytes,
        bytes: vec![0; table_bytes],
    });
    run.outputs.push(TABLE_BUFFER.into());
    let object = xfpx_amd_emu::Program::parse(&rewritten.bytes)
        .map_err(|e| anyhow!("the rewritten code object does not load: {e}"))?;
    let started = xfpx_common::report::unix_now();
    let (mut outputs, stats) =
        xfpx_amd_emu::run_launch_with(&run, &object, &opts.limits()).map_err(|e| anyhow!("rewritten kernel: {e}"))?;
    let table_out =
        outputs.iter().position(|o| o.name == TABLE_BUFFER).ok_or_else(|| anyhow!("the table was not read back"))?;
    let table = outputs.remove(table_out);
    let outputs = outputs.into_iter().map(|o| OutputBuffer { name: o.name, bytes: o.bytes }).collect();
    let contents =
        table::decode(&rewritten.table, &rewritten.sites, &table.bytes, 0).map_err(|e| anyhow!("table: {e}"))?;

    let mode_name = mode.name();
    let mut notes = vec![format!(
        "the rewritten kernel ran {} wave instructions in {} waves of {} workgroups on the emulator",
        stats.instructions, stats.waves, stats.workgroups
    )];
    let hazards = stats.hazards();
    if !hazards.is_empty() {
        notes.push(format!(
            "{} memory hazards in the rewritten code (first at pc {:#x})",
            hazards.len(),
            hazards[0].pc
        ));
    }
    let command = vec!["replay".into(), "--mode".into(), mode_name.into(), launch_path.display().to_string()];
    let run_info = xfpx_amd_emu::replay::emulated_run_info(&rewritten.target, command, mode_name, started, notes);
    let mut c = Collector::new(run_info, None);
    c.run_mut().notes.extend(rewritten.notes.iter().cloned());
    for k in &rewritten.kernels {
        let status = match &k.state {
            KernelState::Instrumented => KernelStatus::Instrumented,
            KernelState::Excluded => KernelStatus::Excluded,
            KernelState::Skipped { reason } => KernelStatus::Skipped { reason: reason.clone() },
        };
        if k.name == launch.kernel {
            c.kernel_status(&k.name, status, k.probes as u64);
            c.launch(&k.name, true);
            if k.waits_added > 0 {
                c.run_mut().notes.push(format!("{}: {} memory waits added by the rewrite", k.name, k.waits_added));
            }
        }
    }
    for (kernel, r) in contents.records {
        c.record(&kernel, r.kind, r.format, r.site, r.first_launch, r.occurrences);
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
    if mode == Mode::Screen && contents.screened.is_empty() {
        c.run_mut().notes.push(format!("{}: no exception bits set at the end of its waves", launch.kernel));
    }
    Ok(RewrittenReplay { report: c.report(), outputs, screened_kinds })
}
