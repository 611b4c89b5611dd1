//! Flow analysis on the emulator: the launch's code object rewritten for
//! the flow tool ([`xfpx_common::flow::FlowTool`]) and run, its table read
//! into the report's flow section ([`replay_flow`]); and the emulator's own
//! view of the original code under the same plans ([`observe_flow`]): the
//! values of each probed instruction's sources just before it and of its
//! result just after, per lane, classified by the common rules. That view
//! is the oracle the rewritten kernel's records are held to.

use crate::replay::{read_code_object, run, Instrumented, RewrittenReplay};
use crate::rewrite::prepare::{Planner, Units};
use crate::rewrite::{self, Mode, RewriteOptions, RewriteRecord, TableAddress};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::wave::Wave;
use xfpx_amd_emu::{LaunchMemory, Observer, ReplayOptions, StepObserver};
use xfpx_common::config::KernelFilter;
use xfpx_common::flow::{lane_word, FlowState, FlowTool, CATEGORIES};
use xfpx_common::fp::ExceptionKind;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, ValueRef};
use xfpx_common::view::{KernelView, Operand, RegFile};
use xfpx_common::FpFormat;

/// The options of a flow rewrite: every kernel (a device function is
/// instrumented only when every kernel reaching it is), the table placed
/// after the launch's buffers.
fn rewrite_options() -> RewriteOptions {
    RewriteOptions {
        mode: Mode::Detect,
        kernels: KernelFilter::default(),
        table: TableAddress::Patchable,
        ..Default::default()
    }
}

/// Replays the launch in `launch_path` with its code object rewritten for
/// the flow tool; the report's flow section is what the kernel's own
/// table recorded.
pub fn replay_flow(launch_path: &Path, opts: &ReplayOptions) -> Result<RewrittenReplay> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let (path, elf) = read_code_object(&launch, opts)?;
    if RewriteRecord::read(&elf).map_err(|e| anyhow!("{}: {e}", path.display()))?.is_some() {
        bail!("{} was rewritten already: the flow replay rewrites the original code object", path.display());
    }
    let prepared = rewrite::prepare_with(&elf, &rewrite_options(), &FlowTool::default())
        .with_context(|| format!("cannot rewrite {}", path.display()))?;
    run(&launch, launch_path, &path, Instrumented::Prepared(Box::new(prepared)), opts, None, true)
}

/// What the emulator saw of one (kernel or device function, instruction
/// offset, state, kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Wave executions with a lane in it.
    pub executions: u64,
    /// The OR of those lanes' words (their class bits).
    pub classes: u16,
    /// The instruction's class label (`f32.minmax`).
    pub class: String,
}

/// What the emulator saw, per (unit, offset, state, kind).
pub type FlowObservation = BTreeMap<(String, u64, FlowState, ExceptionKind), Seen>;

/// One probed instruction, by code address.
#[derive(Debug, Clone)]
struct Probed {
    unit: String,
    offset: u64,
    sources: Vec<Operand>,
    result: Option<Operand>,
    source_format: FpFormat,
    format: FpFormat,
    division: bool,
    class: String,
}

/// The source values of each active lane, read before an instruction.
type LaneSources = Vec<(usize, Vec<u64>)>;

/// The observer: reads sources before and the result after each probed
/// instruction, and tallies the categories of the lanes.
#[derive(Debug, Default)]
struct FlowObserver {
    probes: HashMap<u64, Probed>,
    /// Sources read before the instruction at this address, per lane.
    pending: Option<(u64, LaneSources)>,
    seen: FlowObservation,
}

/// The bits of `op` (of `format`) in `lane`.
fn read(wave: &Wave, op: &Operand, format: FpFormat, lane: usize) -> u64 {
    let Operand::Reg(r) = op else {
        return match op {
            Operand::Known { bits } => *bits,
            _ => 0,
        };
    };
    let word = |i: u16| -> u64 {
        let n = usize::from(r.first + i);
        let v = match r.file {
            RegFile::PerLane => wave.vgpr.get(n).map_or(0, |v| v[lane]),
            RegFile::Uniform => wave.sgpr.get(n).copied().unwrap_or(0),
            RegFile::Accumulator => wave.vgpr.get(wave.acc_base + n).map_or(0, |v| v[lane]),
            RegFile::Predicate | RegFile::Stack => 0,
        };
        u64::from(v)
    };
    match format {
        FpFormat::F64 => word(0) | word(1) << 32,
        _ => word(0),
    }
}

fn lanes(exec: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |l| exec >> l & 1 != 0)
}

impl FlowObserver {
    fn tally(&mut self, p: &Probed, words: &[u16]) {
        for c in CATEGORIES.iter() {
            let matching: Vec<u16> = words.iter().copied().filter(|w| w & c.mask == c.want).collect();
            if matching.is_empty() {
                continue;
            }
            let e = self.seen.entry((p.unit.clone(), p.offset, c.state, c.kind)).or_default();
            e.executions += 1;
            e.classes |= matching.iter().fold(0, |a, w| a | w) & xfpx_common::flow::lane::CLASSES;
            e.class.clone_from(&p.class);
        }
    }
}

impl StepObserver for FlowObserver {
    fn before(&mut self, pc: u64, wave: &Wave) {
        let Some(p) = self.probes.get(&pc).cloned() else { return };
        let read_sources: Vec<(usize, Vec<u64>)> = lanes(wave.exec())
            .map(|l| (l, p.sources.iter().map(|s| read(wave, s, p.source_format, l)).collect()))
            .collect();
        if p.result.is_none() {
            let words: Vec<u16> =
                read_sources.iter().map(|(_, s)| lane_word(p.source_format, s, p.format, None, p.division)).collect();
            self.tally(&p, &words);
        } else {
            self.pending = Some((pc, read_sources));
        }
    }

    fn after(&mut self, pc: u64, wave: &Wave) {
        let Some((at, sources)) = self.pending.take() else { return };
        let Some(p) = self.probes.get(&at).cloned() else { return };
        let Some(result) = &p.result else { return };
        if at != pc {
            return;
        }
        // the lanes active after the instruction, with their sources as they were
        let exec = wave.exec();
        let words: Vec<u16> = sources
            .iter()
            .filter(|(l, _)| exec >> l & 1 != 0)
            .map(|(l, s)| lane_word(p.source_format, s, p.format, Some(read(wave, result, p.format, *l)), p.division))
            .collect();
        self.tally(&p, &words);
    }
}

/// The probes of one unit's plan, by the code address of their instruction.
fn probed(view: &KernelView, plan: &Plan, start: u64, out: &mut HashMap<u64, Probed>) {
    for p in &plan.probes {
        let Action::Flow { sources, source_format, result, format, division } = &p.action else { continue };
        let ins = &view.instrs[p.instr as usize];
        let operand = |v: &ValueRef| match v {
            ValueRef::Use(n) => ins.uses.get(usize::from(*n)).cloned(),
            ValueRef::Def(n) => ins.defs.get(usize::from(*n)).cloned(),
            ValueRef::Reg(r) => Some(Operand::Reg(*r)),
        };
        out.insert(
            start + ins.offset,
            Probed {
                unit: view.name.clone(),
                offset: ins.offset,
                sources: sources.iter().filter_map(operand).collect(),
                result: result.as_ref().and_then(operand),
                source_format: *source_format,
                format: *format,
                division: *division,
                class: ins.class.label(),
            },
        );
    }
}

/// Runs the launch's original code on the emulator and observes, at every
/// instruction the flow tool plans a probe for (the plans of a flow
/// rewrite of the same code object), what the probe would record.
pub fn observe_flow(launch_path: &Path, opts: &ReplayOptions) -> Result<FlowObservation> {
    let launch = Launch::load(launch_path).map_err(|e| anyhow!("{}", e.0))?;
    opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
    let (path, elf) = read_code_object(&launch, opts)?;
    let tool = FlowTool::default();
    let units = Units::read(&elf, &rewrite_options(), Planner::Tool(&tool), None)
        .with_context(|| format!("cannot plan {}", path.display()))?;
    let mut probes = HashMap::new();
    for k in &units.kernels {
        probed(&k.view, &k.plan, units.co.kernels[k.index].entry, &mut probes);
    }
    for f in &units.functions {
        probed(&f.view, &f.plan, units.graph.functions[f.index].code.start, &mut probes);
    }
    let program = xfpx_amd_emu::Program::parse(&elf).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let observer = Arc::new(Mutex::new(FlowObserver { probes, ..FlowObserver::default() }));
    let mut limits = opts.limits();
    limits.observer = Some(Observer(observer.clone()));
    LaunchMemory::new(&launch).run(&launch, &program, &limits).map_err(|e| anyhow!("{e}"))?;
    drop(limits);
    let seen = std::mem::take(&mut observer.lock().unwrap_or_else(|p| p.into_inner()).seen);
    Ok(seen)
}

/// A flow section as an observation, to compare with [`observe_flow`].
pub fn observation_of(section: &xfpx_common::report::FlowSection) -> FlowObservation {
    let mut out = FlowObservation::new();
    for k in &section.kernels {
        for r in &k.records {
            let e = out.entry((k.kernel.clone(), r.site.offset, r.state, r.kind)).or_default();
            e.executions += r.occurrences;
            e.classes |= r.seen();
            e.class.clone_from(&r.class);
        }
    }
    out
}
