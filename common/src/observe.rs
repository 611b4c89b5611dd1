//! Observed values: which floating-point results are certain to reach a
//! later check, so that the fast detector can drop their own checks.
//!
//! NaN and infinity propagate: a NaN or infinite source of an add, a
//! multiply or a fused multiply-add makes its result NaN or infinite
//! ([`ValueFlow::Propagates`]). If an instruction's result is read by such
//! an instruction, unconditionally and before the register is written
//! again, and that instruction's result is itself checked or observed, a
//! NaN or infinity produced there cannot go unnoticed. A backward
//! must-analysis over the kernel's control-flow graph computes, at every
//! point, the registers whose current value is observed on every path;
//! a check on a result that is observed right after its instruction is
//! dropped. Loop accumulators (a GEMM's, an ODE integrator's) are then
//! checked once, where they leave the loop, instead of once per iteration.
//!
//! What the thinned plan gives up, by construction:
//! - a subnormal result that is observed downstream is not reported
//!   (subnormals do not propagate);
//! - an infinity may be reported as the NaN it turns into downstream
//!   (`inf * 0`, `inf - inf`), at the downstream instruction;
//! - findings are located where the value is checked, which can be after
//!   the instruction that first produced it.
//!
//! Divisions (whose checks also report division by zero) keep their
//! checks. A kernel whose control flow the backend cannot resolve
//! (indirect branches) is not thinned.

use crate::fp::{ExceptionKind, ExceptionKinds};
use crate::plan::Plan;
use crate::probe::{Action, ValueRef, When};
use crate::view::{Control, KernelView, Operand, RegFile, RegRange, ValueFlow};
use std::collections::HashSet;

/// Where a control transfer goes, as the backend decoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The instruction with this index in the view.
    Instr(usize),
    /// Out of the function (exit, return).
    Leave,
    /// Not known (indirect branches, unresolved labels).
    Unknown,
}

/// Why a kernel's control flow could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CfgError {
    #[error("instruction {instr} transfers control to an unknown target")]
    UnknownTarget { instr: usize },
    #[error("instruction {instr} branches to instruction {target}, outside the kernel")]
    OutOfRange { instr: usize, target: usize },
}

/// One basic block: instructions `start..end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    /// Blocks control may reach next (after a call: the block it returns
    /// to).
    pub succs: Vec<usize>,
    /// Control may leave the function here, or enter a subroutine whose
    /// effect on registers is not known: nothing is observed after.
    pub opaque_exit: bool,
    /// The block ends with a call of a subroutine inside the function:
    /// the registers the subroutine may write.
    pub call_writes: Option<Vec<RegRange>>,
}

/// The control-flow graph of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// The block of each instruction.
    pub block_of: Vec<usize>,
}

impl Cfg {
    /// Build the graph; `target(i)` is asked for every instruction whose
    /// control is a branch, conditional branch or call.
    pub fn build(view: &KernelView, target: impl Fn(usize) -> Target) -> Result<Cfg, CfgError> {
        let n = view.instrs.len();
        let mut targets = vec![None; n];
        let mut target_instrs = Vec::new();
        for (i, ins) in view.instrs.iter().enumerate() {
            if matches!(ins.control, Control::Branch | Control::CondBranch | Control::Call) {
                let t = target(i);
                match t {
                    // a call of an unknown target is another function:
                    // nothing is observed across it (see below)
                    Target::Unknown if ins.control == Control::Call => {}
                    Target::Unknown => return Err(CfgError::UnknownTarget { instr: i }),
                    Target::Instr(t) if t >= n => return Err(CfgError::OutOfRange { instr: i, target: t }),
                    Target::Instr(t) => target_instrs.push(t),
                    Target::Leave => {}
                }
                targets[i] = Some(t);
            }
        }
        let starts = view.block_starts(&target_instrs);
        let mut block_of = vec![0usize; n];
        for (b, &s) in starts.iter().enumerate() {
            let e = starts.get(b + 1).copied().unwrap_or(n);
            block_of[s..e].fill(b);
        }
        let mut blocks = Vec::with_capacity(starts.len());
        for (b, &start) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            let last = end - 1;
            let control = view.instrs[last].control;
            let mut succs = Vec::new();
            let mut opaque_exit = false;
            let fall = |succs: &mut Vec<usize>, opaque: &mut bool| {
                if end < n {
                    succs.push(block_of[end]);
                } else {
                    *opaque = true;
                }
            };
            match control {
                Control::Branch => match targets[last] {
                    Some(Target::Instr(t)) => succs.push(block_of[t]),
                    _ => opaque_exit = true,
                },
                Control::CondBranch => {
                    match targets[last] {
                        Some(Target::Instr(t)) => succs.push(block_of[t]),
                        _ => opaque_exit = true,
                    }
                    fall(&mut succs, &mut opaque_exit);
                }
                Control::Call => {
                    // resolved below, once every block exists
                    opaque_exit = true;
                    fall(&mut succs, &mut opaque_exit);
                }
                Control::Return | Control::Exit => opaque_exit = true,
                Control::None | Control::Barrier => fall(&mut succs, &mut opaque_exit),
            }
            succs.sort_unstable();
            succs.dedup();
            blocks.push(Block { start, end, succs, opaque_exit, call_writes: None });
        }
        // calls of subroutines in the function: the caller's values survive
        // the call except in the registers the subroutine writes
        for b in 0..blocks.len() {
            let last = blocks[b].end - 1;
            if view.instrs[last].control != Control::Call {
                continue;
            }
            if let Some(Target::Instr(t)) = targets[last] {
                if let Some(written) = subroutine_writes(view, &blocks, block_of[t]) {
                    let returns = blocks[b].end < n;
                    blocks[b].opaque_exit = !returns;
                    blocks[b].call_writes = Some(written);
                }
            }
        }
        Ok(Cfg { blocks, block_of })
    }
}

/// Registers written by the subroutine whose first block is `entry`: by
/// every instruction reachable from it before its returns. `None` when it
/// calls further subroutines or leaves in other ways than returning.
fn subroutine_writes(view: &KernelView, blocks: &[Block], entry: usize) -> Option<Vec<RegRange>> {
    let mut seen = vec![false; blocks.len()];
    let mut stack = vec![entry];
    let mut written = Vec::new();
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut seen[b], true) {
            continue;
        }
        let block = &blocks[b];
        for ins in &view.instrs[block.start..block.end] {
            if ins.control == Control::Call {
                return None;
            }
            written.extend(ins.defs.iter().filter_map(Operand::reg));
        }
        let last = view.instrs[block.end - 1].control;
        if block.opaque_exit && !matches!(last, Control::Return | Control::Exit | Control::CondBranch) {
            return None;
        }
        stack.extend(block.succs.iter().copied());
    }
    Some(written)
}

/// A set of register ranges whose current values are observed; `None` is
/// the universal set (the optimistic start of the fixpoint).
type Observed = Option<HashSet<RegRange>>;

fn meet(a: &Observed, b: &Observed) -> Observed {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(a.intersection(b).copied().collect()),
    }
}

fn value_reg(op: &Operand) -> Option<RegRange> {
    op.reg().filter(|r| matches!(r.file, RegFile::PerLane | RegFile::Uniform))
}

/// What the analysis needs to know about the plan: which instructions'
/// results are checked for NaN (so a NaN reaching them is reported), and
/// which registers checks placed before an instruction read.
struct Checks {
    result_checked: Vec<bool>,
    before: Vec<Vec<RegRange>>,
}

/// The register range a check's value names, if it is one.
fn value_range(view: &KernelView, instr: u32, v: &ValueRef) -> Option<RegRange> {
    let ins = &view.instrs[instr as usize];
    match v {
        ValueRef::Def(n) => ins.defs.get(*n as usize).and_then(value_reg),
        ValueRef::Use(n) => ins.uses.get(*n as usize).and_then(value_reg),
        ValueRef::Reg(r) => value_reg(&Operand::Reg(*r)),
    }
}

impl Checks {
    fn of(plan: &Plan, view: &KernelView) -> Checks {
        let n = view.instrs.len();
        let mut c = Checks { result_checked: vec![false; n], before: vec![Vec::new(); n] };
        // a check observes a value when it looks for every kind a NaN or an
        // infinity can turn into downstream
        let mut wanted = ExceptionKinds::NONE;
        for p in &plan.probes {
            if let Action::CheckFp { kinds, .. } = &p.action {
                wanted = ExceptionKinds(wanted.0 | (kinds.0 & PROPAGATING_KINDS.0));
            }
        }
        for p in &plan.probes {
            let Action::CheckFp { values, kinds, .. } = &p.action else { continue };
            let i = p.instr as usize;
            if i >= n || !kinds.contains(ExceptionKind::Nan) {
                continue;
            }
            match p.when {
                When::After if values.iter().any(|v| matches!(v, ValueRef::Def(0))) => c.result_checked[i] = true,
                When::Before if kinds.0 & wanted.0 == wanted.0 => {
                    c.before[i].extend(values.iter().filter_map(|v| value_range(view, p.instr, v)));
                }
                _ => {}
            }
        }
        c
    }
}

/// One instruction, backwards: from the set observed after it to the set
/// observed before it.
fn transfer(view: &KernelView, checks: &Checks, i: usize, after: &mut HashSet<RegRange>) {
    let ins = &view.instrs[i];
    let first_def = ins.defs.iter().find_map(value_reg);
    let copied = match ins.flow {
        ValueFlow::Copies(n) if !ins.guarded => match (first_def, ins.uses.get(n as usize).and_then(value_reg)) {
            (Some(d), Some(s)) if after.contains(&d) => Some(s),
            _ => None,
        },
        _ => None,
    };
    // a guarded in-place update (`@P0 FMUL R1, R1, 16777216`) leaves a NaN
    // or an infinity in its register whether it runs or not
    let in_place = match first_def {
        Some(d) if ins.guarded && ins.flow == ValueFlow::Propagates && after.contains(&d) => {
            ins.uses.iter().filter_map(value_reg).any(|u| u == d).then_some(d)
        }
        _ => None,
    };
    for d in ins.defs.iter().filter_map(Operand::reg) {
        after.retain(|r| !r.overlaps(&d));
    }
    // the result is always observed: it is checked, or observed downstream
    if ins.flow == ValueFlow::Propagates && !ins.guarded && checks.result_checked[i] && first_def.is_some() {
        after.extend(ins.uses.iter().filter_map(value_reg));
    }
    after.extend(in_place);
    after.extend(copied);
    after.extend(checks.before[i].iter().copied());
}

/// The sets observed right after each instruction.
fn observed_after(view: &KernelView, cfg: &Cfg, checks: &Checks) -> Vec<HashSet<RegRange>> {
    let nb = cfg.blocks.len();
    let mut block_in: Vec<Observed> = vec![None; nb];
    let block_out = |block_in: &Vec<Observed>, b: &Block| -> Observed {
        if b.opaque_exit || b.succs.is_empty() {
            return Some(HashSet::new());
        }
        let mut acc: Observed = None;
        for &s in &b.succs {
            acc = meet(&acc, &block_in[s]);
        }
        if let (Some(set), Some(written)) = (&mut acc, &b.call_writes) {
            set.retain(|r| !written.iter().any(|w| w.overlaps(r)));
        }
        acc
    };
    // the greatest fixpoint: start from "everything observed" and shrink;
    // a block all of whose successors are still universal waits
    let mut changed = true;
    while changed {
        changed = false;
        for (bi, b) in cfg.blocks.iter().enumerate().rev() {
            let Some(mut set) = block_out(&block_in, b) else { continue };
            for i in (b.start..b.end).rev() {
                transfer(view, checks, i, &mut set);
            }
            let new = Some(set);
            if block_in[bi] != new {
                block_in[bi] = new;
                changed = true;
            }
        }
    }
    let mut out = vec![HashSet::new(); view.instrs.len()];
    for b in &cfg.blocks {
        let mut set = block_out(&block_in, b).unwrap_or_default();
        for i in (b.start..b.end).rev() {
            out[i] = set.clone();
            transfer(view, checks, i, &mut set);
        }
    }
    out
}

/// One 32-bit register of a range.
type Word = (RegFile, u16);

fn words(r: RegRange) -> impl Iterator<Item = Word> {
    (0..u16::from(r.count)).map(move |k| (r.file, r.first + k))
}

/// Registers live at each block's entry. Only register operands count as
/// reads (addresses inside memory operands do not), so the sets are
/// smaller than the truth: a register said live is read before written.
fn live_in(view: &KernelView, cfg: &Cfg) -> Vec<HashSet<Word>> {
    let nb = cfg.blocks.len();
    let mut live: Vec<HashSet<Word>> = vec![HashSet::new(); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for (bi, b) in cfg.blocks.iter().enumerate().rev() {
            let mut set: HashSet<Word> = HashSet::new();
            if !b.opaque_exit {
                for &s in &b.succs {
                    set.extend(live[s].iter().copied());
                }
                // what a called subroutine writes is not the caller's value
                if let Some(written) = &b.call_writes {
                    for w in written.iter().flat_map(|r| words(*r)) {
                        set.remove(&w);
                    }
                }
            }
            for ins in view.instrs[b.start..b.end].iter().rev() {
                if !ins.guarded {
                    for d in ins.defs.iter().filter_map(Operand::reg) {
                        for w in words(d) {
                            set.remove(&w);
                        }
                    }
                }
                for u in ins.uses.iter().filter_map(value_reg) {
                    set.extend(words(u));
                }
            }
            if set != live[bi] {
                live[bi] = set;
                changed = true;
            }
        }
    }
    live
}

/// Loops, as ranges of blocks in layout order: a branch back to an earlier
/// block (or itself) closes the range from that block to the branching one.
fn loops(cfg: &Cfg) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = Vec::new();
    for (b, block) in cfg.blocks.iter().enumerate() {
        for &s in &block.succs {
            if s <= b {
                v.push((s, b));
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// What thinning did to one plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThinStats {
    /// Checks in the precise plan.
    pub checks: usize,
    /// Checks dropped because their values are observed downstream.
    pub dropped: usize,
    /// Of those, checks that also looked for subnormals.
    pub dropped_subnormal: usize,
    /// Checks added where a loop exits, for values the loop produced.
    pub loop_exit_checks: usize,
}

impl std::ops::AddAssign for ThinStats {
    fn add_assign(&mut self, o: ThinStats) {
        self.checks += o.checks;
        self.dropped += o.dropped;
        self.dropped_subnormal += o.dropped_subnormal;
        self.loop_exit_checks += o.loop_exit_checks;
    }
}

/// The kinds a value carries forward through propagating arithmetic.
const PROPAGATING_KINDS: ExceptionKinds = ExceptionKinds(0b0011);

/// Whether a check looks only at values (not for division by zero, which
/// only its own instruction can tell).
fn checks_values_only(kinds: ExceptionKinds) -> bool {
    kinds.0 & !ExceptionKinds::VALUE.0 == 0
}

/// Rounds of moving checks out of loops (one per loop nesting level).
const MAX_ROUNDS: usize = 8;

/// Whether `p` is dropped: a check, not of a division, all of whose
/// values are observed after its instruction (and, for a check placed
/// before it, not overwritten by it).
fn droppable(p: &crate::probe::Probe, view: &KernelView, after: &[HashSet<RegRange>]) -> bool {
    let Action::CheckFp { values, kinds, .. } = &p.action else { return false };
    if !checks_values_only(*kinds) {
        return false;
    }
    let ins = &view.instrs[p.instr as usize];
    values.iter().all(|v| match value_range(view, p.instr, v) {
        Some(r) => {
            let overwritten =
                p.when == When::Before && ins.defs.iter().filter_map(Operand::reg).any(|d| d.overlaps(&r));
            let observed = &after[p.instr as usize];
            // a comparison reading one word of an observed pair (the high
            // word of an f64, compared as an f32) sees the pair's NaN
            let within =
                p.when == When::Before && matches!(v, ValueRef::Use(_)) && observed.iter().any(|o| o.contains(&r));
            (observed.contains(&r) || within) && !overwritten
        }
        None => false,
    })
}

/// Drop the checks of `plan` whose values are observed later; a check
/// left inside a loop on a value that leaves the loop live is replaced by
/// a check where the loop exits (named by the same site). Counters and
/// checks that report division by zero are kept.
pub fn thin(plan: &Plan, view: &KernelView, cfg: &Cfg) -> (Plan, ThinStats) {
    let live = live_in(view, cfg);
    let loop_ranges = loops(cfg);
    let innermost =
        |b: usize| loop_ranges.iter().filter(|(h, l)| *h <= b && b <= *l).min_by_key(|(h, l)| l - h).copied();
    let mut work = plan.clone();
    let mut added: HashSet<(u32, RegRange)> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let after = observed_after(view, cfg, &Checks::of(&work, view));
        let mut new = Vec::new();
        for p in &work.probes {
            let Action::CheckFp { values, format, kinds } = &p.action else { continue };
            if values.len() != 1 || !checks_values_only(*kinds) || droppable(p, view, &after) {
                continue;
            }
            let r = match (&values[0], p.when) {
                (ValueRef::Def(0), When::After) | (ValueRef::Reg(_), When::Before) => {
                    value_range(view, p.instr, &values[0])
                }
                _ => None,
            };
            let (Some(r), Some((h, l))) = (r, innermost(cfg.block_of[p.instr as usize])) else { continue };
            for x in h..=l {
                for &e in &cfg.blocks[x].succs {
                    // a check before a guarded instruction may run only
                    // where the guard holds: no exit check there
                    let start_guarded = view.instrs[cfg.blocks[e].start].guarded;
                    if (h..=l).contains(&e) || start_guarded || !words(r).all(|w| live[e].contains(&w)) {
                        continue;
                    }
                    // the register may hold a value from another path
                    // (a loaded input): look only for what propagates
                    let exit_kinds = ExceptionKinds(kinds.0 & PROPAGATING_KINDS.0);
                    let at = cfg.blocks[e].start as u32;
                    if !exit_kinds.is_empty() && added.insert((at, r)) {
                        new.push(crate::probe::Probe {
                            instr: at,
                            site: p.site,
                            when: When::Before,
                            action: Action::CheckFp {
                                values: vec![ValueRef::Reg(r)],
                                format: *format,
                                kinds: exit_kinds,
                            },
                        });
                    }
                }
            }
        }
        if new.is_empty() {
            break;
        }
        work.probes.extend(new);
        work.normalize();
    }
    let after = observed_after(view, cfg, &Checks::of(&work, view));
    let mut stats = ThinStats::default();
    let mut out = Plan { kernel: plan.kernel.clone(), probes: Vec::new(), counters: plan.counters.clone() };
    for p in &work.probes {
        let Action::CheckFp { values, kinds, .. } = &p.action else {
            out.probes.push(p.clone());
            continue;
        };
        let at_exit = values.iter().all(|v| matches!(v, ValueRef::Reg(_)));
        if !at_exit {
            stats.checks += 1;
        }
        if droppable(p, view, &after) {
            if !at_exit {
                stats.dropped += 1;
                if kinds.contains(ExceptionKind::Sub) {
                    stats.dropped_subnormal += 1;
                }
            }
        } else {
            if at_exit {
                stats.loop_exit_checks += 1;
            }
            out.probes.push(p.clone());
        }
    }
    (out, stats)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::class::{FpFormat, FpOp, InstrClass};
    use crate::plan::verify;
    use crate::site::SiteTable;
    use crate::tool::{Detector, Tool};
    use crate::view::InstrView;

    fn r(n: u16) -> Operand {
        Operand::Reg(RegRange::new(RegFile::PerLane, n, 1))
    }

    fn fp(offset: u64, op: FpOp, def: u16, uses: &[u16]) -> InstrView {
        let mut v = InstrView::new(offset, format!("F{op:?} R{def}"), InstrClass::Arith { format: FpFormat::F32, op });
        v.defs = vec![r(def)];
        v.uses = uses.iter().map(|&u| r(u)).collect();
        if matches!(op, FpOp::Add | FpOp::Mul | FpOp::Fma) {
            v.flow = ValueFlow::Propagates;
        }
        v
    }

    fn other(offset: u64, text: &str, defs: &[u16], uses: &[u16], control: Control) -> InstrView {
        let mut v = InstrView::new(offset, text, InstrClass::Other);
        v.defs = defs.iter().map(|&u| r(u)).collect();
        v.uses = uses.iter().map(|&u| r(u)).collect();
        v.control = control;
        v
    }

    /// Kept checks, by instruction index.
    fn kept(view: &KernelView, target: impl Fn(usize) -> Target) -> (Vec<u32>, ThinStats) {
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(view, &mut sites);
        let cfg = Cfg::build(view, target).unwrap();
        let (thin, stats) = thin(&plan, view, &cfg);
        verify(&thin, view, &sites).unwrap();
        (thin.probes.iter().map(|p| p.instr).collect(), stats)
    }

    /// acc = fma(a, b, acc) in a loop; after the loop acc * alpha is stored.
    fn loop_kernel(store_acc_directly: bool) -> KernelView {
        let mut instrs = vec![
            other(0x00, "LDG R2", &[2], &[], Control::None),
            fp(0x10, FpOp::Fma, 4, &[2, 2, 4]),
            fp(0x20, FpOp::Fma, 4, &[2, 3, 4]),
            other(0x30, "@P0 BRA 0x10", &[], &[], Control::CondBranch),
        ];
        if store_acc_directly {
            instrs.push(other(0x40, "STG R4", &[], &[4], Control::None));
        } else {
            instrs.push(fp(0x40, FpOp::Mul, 5, &[4, 6]));
            instrs.push(other(0x50, "STG R5", &[], &[5], Control::None));
        }
        instrs.push(other(0x60, "EXIT", &[], &[], Control::Exit));
        KernelView { name: "k".into(), instrs }
    }

    #[test]
    fn loop_accumulators_are_checked_where_they_leave() {
        let view = loop_kernel(false);
        let (kept, stats) = kept(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave });
        // both FMAs feed the multiply after the loop on every path: only
        // the stored product is checked
        assert_eq!(kept, vec![4]);
        assert_eq!(stats, ThinStats { checks: 3, dropped: 2, dropped_subnormal: 2, loop_exit_checks: 0 });
    }

    #[test]
    fn a_loop_result_stored_after_the_loop_is_checked_where_the_loop_exits() {
        let view = loop_kernel(true);
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let cfg = Cfg::build(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave }).unwrap();
        let (thin, stats) = thin(&plan, &view, &cfg);
        verify(&thin, &view, &sites).unwrap();
        // the first FMA feeds the second; the second's result leaves the
        // loop for the store: one check of R4 before the store, named by
        // the second FMA's site, replaces both checks in the loop
        assert_eq!(thin.probes.len(), 1);
        let p = &thin.probes[0];
        assert_eq!((p.instr, p.when), (4, When::Before));
        assert_eq!(sites.get(p.site).map(|s| s.offset), Some(0x20));
        assert!(
            matches!(&p.action, Action::CheckFp { values, .. } if values == &vec![ValueRef::Reg(RegRange::new(RegFile::PerLane, 4, 1))])
        );
        assert_eq!(stats, ThinStats { checks: 2, dropped: 2, dropped_subnormal: 2, loop_exit_checks: 1 });
    }

    #[test]
    fn a_value_dead_after_the_loop_keeps_its_check_inside() {
        // the loop's result is overwritten right after the loop: nothing to
        // check at the exit, so the check stays in the loop
        let mut view = loop_kernel(true);
        view.instrs[4] = other(0x40, "MOV R4, R9", &[4], &[9], Control::None);
        let (kept, _) = kept(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave });
        assert_eq!(kept, vec![2]);
    }

    #[test]
    fn guarded_redefinitions_opaque_uses_divisions_and_copies() {
        let mut rcp = fp(0x10, FpOp::Div, 3, &[1]);
        rcp.flow = ValueFlow::Opaque;
        let mut guarded = fp(0x30, FpOp::Add, 6, &[5, 5]);
        guarded.guarded = true;
        let mut mov = other(0x40, "MOV R7, R6", &[7], &[6], Control::None);
        mov.flow = ValueFlow::Copies(0);
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                fp(0x00, FpOp::Add, 1, &[0, 0]), // read only by the reciprocal: kept
                rcp,                             // a division: always kept
                fp(0x20, FpOp::Mul, 5, &[3, 3]), // read by a guarded add only: kept
                guarded,                         // copied to R7, then read by an add: dropped
                mov,
                fp(0x50, FpOp::Add, 8, &[7, 7]), // stored: kept
                other(0x60, "STG R8", &[], &[8], Control::None),
                other(0x70, "EXIT", &[], &[], Control::Exit),
            ],
        };
        let (kept, stats) = kept(&view, |_| Target::Leave);
        assert_eq!(kept, vec![0, 1, 2, 5]);
        assert_eq!(stats.dropped, 1);
    }

    #[test]
    fn guarded_in_place_updates_keep_the_value_observed() {
        // r = a + a; @P0 r = r * 2^24; s = r + r; store s
        let mut scale = fp(0x10, FpOp::Mul, 1, &[1, 2]);
        scale.guarded = true;
        let mut elsewhere = fp(0x10, FpOp::Mul, 3, &[1, 2]);
        elsewhere.guarded = true;
        let view = |second: InstrView| KernelView {
            name: "k".into(),
            instrs: vec![
                fp(0x00, FpOp::Add, 1, &[0, 0]),
                second,
                fp(0x20, FpOp::Add, 4, &[1, 1]),
                other(0x30, "STG R4", &[], &[4], Control::None),
                other(0x40, "EXIT", &[], &[], Control::Exit),
            ],
        };
        assert_eq!(kept(&view(scale), |_| Target::Leave).0, vec![2]);
        // a guarded write to another register observes nothing
        assert_eq!(kept(&view(elsewhere), |_| Target::Leave).0, vec![1, 2]);
    }

    #[test]
    fn values_survive_calls_of_subroutines_that_leave_them_alone() {
        let view = |callee_writes_r1: bool| {
            let mut instrs = vec![
                fp(0x00, FpOp::Add, 1, &[0, 0]),
                other(0x10, "CALL 0x40", &[], &[], Control::Call),
                fp(0x20, FpOp::Add, 2, &[1, 1]),
                other(0x30, "EXIT", &[], &[], Control::Exit),
            ];
            let written = if callee_writes_r1 { 1 } else { 5 };
            instrs.push(other(0x40, "MOV", &[written], &[9], Control::None));
            instrs.push(other(0x50, "RET", &[], &[], Control::Return));
            KernelView { name: "k".into(), instrs }
        };
        let target = |i: usize| if i == 1 { Target::Instr(4) } else { Target::Leave };
        assert_eq!(kept(&view(false), target).0, vec![2]);
        assert_eq!(kept(&view(true), target).0, vec![0, 2]);
        // a call whose target is unknown observes nothing
        assert_eq!(kept(&view(false), |i| if i == 1 { Target::Unknown } else { Target::Leave }).0, vec![0, 2]);
    }

    #[test]
    fn unknown_targets_refuse_the_graph() {
        let view = loop_kernel(false);
        assert_eq!(Cfg::build(&view, |_| Target::Unknown), Err(CfgError::UnknownTarget { instr: 3 }));
        assert!(matches!(Cfg::build(&view, |_| Target::Instr(99)), Err(CfgError::OutOfRange { .. })));
    }

    #[test]
    fn compare_sources_observed_later_lose_their_check() {
        let view = |second: u16| {
            let mut setp = InstrView::new(0x10, "FSETP P0, R1, R2", InstrClass::Compare { format: FpFormat::F32 });
            setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))];
            setp.uses = vec![r(1), r(2)];
            KernelView {
                name: "k".into(),
                instrs: vec![
                    other(0x00, "LDG R1", &[1, 2], &[], Control::None),
                    setp,
                    fp(0x20, FpOp::Add, 3, &[1, second]),
                    other(0x30, "STG R3", &[], &[3], Control::None),
                    other(0x40, "EXIT", &[], &[], Control::Exit),
                ],
            }
        };
        // both sources feed the add: the comparison's check goes
        assert_eq!(kept(&view(2), |_| Target::Leave).0, vec![2]);
        // R2 is never read again: the comparison's check stays
        assert_eq!(kept(&view(1), |_| Target::Leave).0, vec![1, 2]);
    }

    #[test]
    fn compare_sources_not_observed_keep_their_check() {
        let mut setp = InstrView::new(0x10, "FSETP P0, R1, R2", InstrClass::Compare { format: FpFormat::F32 });
        setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))];
        setp.uses = vec![r(1), r(2)];
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "LDG R1", &[1, 2], &[], Control::None),
                setp,
                fp(0x20, FpOp::Add, 3, &[1, 1]),
                other(0x30, "STG R3", &[], &[3], Control::None),
                other(0x40, "EXIT", &[], &[], Control::Exit),
            ],
        };
        // R2 is never read again: the comparison's check stays
        let (kept, _) = kept(&view, |_| Target::Leave);
        assert_eq!(kept, vec![1, 2]);
    }
}
