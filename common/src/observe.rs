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
//! A value the compiler spills to the stack and loads back is followed
//! through its slot, as the backend names what each instruction does to
//! the slots ([`SlotEffect`]).
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
//! checks. In a kernel with branches the backend cannot resolve (indirect
//! branches), nothing is taken as known after such a branch
//! ([`Cfg::build_with_unknown_exits`]) and no check is dropped for
//! repeating an earlier one.

use crate::cfg::{loops, predecessors, reachable, Block, Cfg};
use crate::fp::{ExceptionKind, ExceptionKinds};
use crate::hash::FastKeys;
use crate::plan::Plan;
use crate::probe::{Action, ValueRef, When};
use crate::range_set::{RangeKinds, RangeSet};
use crate::view::{Control, KernelView, Operand, RegFile, RegRange, ValueFlow};

/// Sets of the program's registers and probes, hashed fast.
type HashSet<T> = std::collections::HashSet<T, FastKeys>;

/// What an instruction does to the stack's spill slots
/// ([`RegFile::Stack`] ranges), as the backend reads it: a value stored to
/// a slot and loaded back is followed through the slot, as through a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotEffect {
    /// Touches no slot.
    None,
    /// Stores register `from` into `slot` (unguarded).
    Store { slot: RegRange, from: RegRange },
    /// Loads `slot` into register `to` (unguarded).
    Load { slot: RegRange, to: RegRange },
    /// May write these slots with values not followed (a guarded store, a
    /// store of a constant).
    Writes(Vec<RegRange>),
    /// May write any slot (a store whose address is not known, a change of
    /// the stack pointer, a call of code not in the function).
    Clobber,
}

/// A set of register ranges whose current values are observed; `None` is
/// the universal set (the optimistic start of the fixpoint).
type Observed = Option<RangeSet>;

fn meet(a: &Observed, b: &Observed) -> Observed {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(a.intersection(b)),
    }
}

fn value_reg(op: &Operand) -> Option<RegRange> {
    op.reg().filter(|r| matches!(r.file, RegFile::PerLane | RegFile::Uniform))
}

/// What the analysis needs to know about the plan: which instructions'
/// results are checked for NaN (so a NaN reaching them is reported), and
/// which registers checks placed before an instruction read.
struct Checks<'s> {
    result_checked: Vec<bool>,
    before: Vec<Vec<RegRange>>,
    /// Per instruction (empty: none known), calls with what their
    /// subroutines do to the slots.
    slots: &'s [SlotEffect],
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

impl<'s> Checks<'s> {
    /// The checks of `plan` except those in `skip` (by probe key).
    fn without(plan: &Plan, view: &KernelView, skip: &HashSet<ProbeKey>, slots: &'s [SlotEffect]) -> Checks<'s> {
        let n = view.instrs.len();
        let mut c = Checks { result_checked: vec![false; n], before: vec![Vec::new(); n], slots };
        // a check observes a value when it looks for every kind a NaN or an
        // infinity can turn into downstream
        let mut wanted = ExceptionKinds::NONE;
        for p in &plan.probes {
            if let Action::CheckFp { kinds, .. } = &p.action {
                wanted = ExceptionKinds(wanted.0 | (kinds.0 & PROPAGATING_KINDS.0));
            }
        }
        for p in &plan.probes {
            let Action::CheckFp { values, kinds, .. } = &p.action else {
                continue;
            };
            let i = p.instr as usize;
            if i >= n || !kinds.contains(ExceptionKind::Nan) || skip.contains(&key(p)) {
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
fn transfer(view: &KernelView, checks: &Checks, i: usize, after: &mut RangeSet) {
    let ins = &view.instrs[i];
    let slot = checks.slots.get(i).unwrap_or(&SlotEffect::None);
    // a load observes its slot where its register is observed
    let loaded = matches!(slot, SlotEffect::Load { to, .. } if after.contains(to));
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
        after.remove_overlapping(&d);
    }
    // the result is always observed: it is checked, or observed downstream
    if ins.flow == ValueFlow::Propagates && !ins.guarded && checks.result_checked[i] && first_def.is_some() {
        after.extend(ins.uses.iter().filter_map(value_reg));
    }
    after.extend(in_place);
    after.extend(copied);
    after.extend(checks.before[i].iter().copied());
    match slot {
        SlotEffect::None => {}
        SlotEffect::Load { slot, .. } => {
            if loaded {
                after.insert(*slot);
            }
        }
        SlotEffect::Store { slot, from } => {
            let observed = after.contains(slot);
            after.remove_overlapping(slot);
            if observed {
                after.insert(*from);
            }
        }
        SlotEffect::Writes(slots) => slots.iter().for_each(|s| after.remove_overlapping(s)),
        SlotEffect::Clobber => after.retain(|r| r.file != RegFile::Stack),
    }
}

/// `slots` with each call of a subroutine in the function standing for
/// what the subroutine does to the slots: the slots it stores to, or any
/// (where it calls further, changes the stack pointer or stores where the
/// backend cannot say). Empty when `slots` is.
fn with_calls(view: &KernelView, cfg: &Cfg, slots: &[SlotEffect]) -> Vec<SlotEffect> {
    if slots.is_empty() {
        return Vec::new();
    }
    let mut out = slots.to_vec();
    out.resize(view.instrs.len(), SlotEffect::None);
    for b in &cfg.blocks {
        let last = b.end - 1;
        if view.instrs[last].control != Control::Call {
            continue;
        }
        out[last] = match b.callee {
            Some(entry) => subroutine_slots(view, cfg, slots, entry),
            None => SlotEffect::Clobber,
        };
    }
    out
}

/// What the subroutine whose first block is `entry` does to the slots.
fn subroutine_slots(view: &KernelView, cfg: &Cfg, slots: &[SlotEffect], entry: usize) -> SlotEffect {
    let mut written = Vec::new();
    for b in reachable(&cfg.blocks, entry) {
        if cfg.unknown_exits.contains(&b) {
            return SlotEffect::Clobber;
        }
        let block = &cfg.blocks[b];
        for i in block.start..block.end {
            if view.instrs[i].control == Control::Call {
                return SlotEffect::Clobber;
            }
            match slots.get(i) {
                Some(SlotEffect::Store { slot, .. }) => written.push(*slot),
                Some(SlotEffect::Writes(w)) => written.extend(w.iter().copied()),
                Some(SlotEffect::Clobber) => return SlotEffect::Clobber,
                _ => {}
            }
        }
    }
    SlotEffect::Writes(written)
}

/// The probes of `plan` (their indices) at each of `n` instructions.
fn probes_by_instr(plan: &Plan, n: usize) -> Vec<Vec<usize>> {
    let mut at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, p) in plan.probes.iter().enumerate() {
        if let Some(list) = at.get_mut(p.instr as usize) {
            list.push(k);
        }
    }
    at
}

/// Which probes of `plan` are [`droppable`] under `checks`, and, per
/// instruction, whether its first value written is observed right after
/// it (see [`observed_after`]).
fn droppable_probes(view: &KernelView, cfg: &Cfg, checks: &Checks, plan: &Plan) -> (Vec<bool>, Vec<bool>) {
    let at = probes_by_instr(plan, view.instrs.len());
    let mut drop = vec![false; plan.probes.len()];
    let def_observed = observed_after(view, cfg, checks, |i, set| {
        for &k in &at[i] {
            drop[k] = droppable(&plan.probes[k], view, set);
        }
    });
    (drop, def_observed)
}

/// The set observed right after each instruction, shown to `visit`;
/// returns, per instruction, whether its first value written is observed
/// right after it.
fn observed_after(view: &KernelView, cfg: &Cfg, checks: &Checks, mut visit: impl FnMut(usize, &RangeSet)) -> Vec<bool> {
    let nb = cfg.blocks.len();
    let mut block_in: Vec<Observed> = vec![None; nb];
    let block_out = |block_in: &Vec<Observed>, b: &Block| -> Observed {
        if b.opaque_exit || b.succs.is_empty() {
            return Some(RangeSet::new());
        }
        let mut acc: Observed = None;
        for &s in &b.succs {
            acc = meet(&acc, &block_in[s]);
        }
        if let (Some(set), Some(written)) = (&mut acc, &b.call_writes) {
            written.iter().for_each(|w| set.remove_overlapping(w));
        }
        acc
    };
    // the greatest fixpoint: start from "everything observed" and shrink;
    // a block all of whose successors are still universal waits
    let preds = predecessors(cfg);
    let mut work = Worklist::new((0..nb).rev());
    while let Some(bi) = work.pop() {
        let b = &cfg.blocks[bi];
        let Some(mut set) = block_out(&block_in, b) else {
            continue;
        };
        for i in (b.start..b.end).rev() {
            transfer(view, checks, i, &mut set);
        }
        let new = Some(set);
        if block_in[bi] != new {
            block_in[bi] = new;
            work.extend(&preds[bi]);
        }
    }
    let mut def_observed = vec![false; view.instrs.len()];
    for b in &cfg.blocks {
        let mut set = block_out(&block_in, b).unwrap_or_default();
        for i in (b.start..b.end).rev() {
            def_observed[i] = view.instrs[i].defs.iter().find_map(value_reg).is_some_and(|d| set.contains(&d));
            visit(i, &set);
            transfer(view, checks, i, &mut set);
        }
    }
    def_observed
}

/// The blocks a fixpoint still has to visit, each queued once at a time:
/// a block is visited again only when what it reads changed.
struct Worklist {
    queue: std::collections::VecDeque<usize>,
    queued: Vec<bool>,
}

impl Worklist {
    /// Every block of `order` (all blocks, in the order to visit first).
    fn new(order: impl ExactSizeIterator<Item = usize>) -> Worklist {
        let mut queued = vec![false; order.len()];
        let queue = order.inspect(|&b| queued[b] = true).collect();
        Worklist { queue, queued }
    }

    fn pop(&mut self) -> Option<usize> {
        let b = self.queue.pop_front()?;
        self.queued[b] = false;
        Some(b)
    }

    fn extend(&mut self, blocks: &[usize]) {
        for &b in blocks {
            if !std::mem::replace(&mut self.queued[b], true) {
                self.queue.push_back(b);
            }
        }
    }
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
    let mut live: Vec<HashSet<Word>> = vec![HashSet::default(); nb];
    let preds = predecessors(cfg);
    let mut work = Worklist::new((0..nb).rev());
    while let Some(bi) = work.pop() {
        let b = &cfg.blocks[bi];
        let mut set: HashSet<Word> = HashSet::default();
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
            work.extend(&preds[bi]);
        }
    }
    live
}

/// A probe's identity across the rounds of thinning.
type ProbeKey = (u32, When, crate::site::SiteId);

fn key(p: &crate::probe::Probe) -> ProbeKey {
    (p.instr, p.when, p.site)
}

/// Registers whose current value a check has already looked at, with the
/// kinds it looked for.
type CheckedSet = RangeKinds;

/// A [`CheckedSet`], or `None`: the universal set (the optimistic start of
/// the fixpoint).
type Checked = Option<CheckedSet>;

/// Who is shown a [`CheckedSet`] before and after an instruction.
type ShowChecked<'a> = &'a mut dyn FnMut(When, &CheckedSet);

fn meet_checked(a: &Checked, b: &Checked) -> Checked {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(a.meet(b)),
    }
}

/// The checks that provide: unguarded (a check at a guarded instruction
/// looks only where the guard holds), of values only, not in `skip`.
fn provider_values<'a>(
    plan: &'a Plan,
    view: &'a KernelView,
    skip: &'a HashSet<ProbeKey>,
) -> impl Iterator<Item = (u32, When, RegRange, u8)> + 'a {
    plan.probes.iter().flat_map(move |p| {
        let mut out = Vec::new();
        if let Action::CheckFp { values, kinds, .. } = &p.action {
            let i = p.instr as usize;
            if i < view.instrs.len() && !view.instrs[i].guarded && checks_values_only(*kinds) && !skip.contains(&key(p))
            {
                for v in values {
                    if let Some(r) = value_range(view, p.instr, v) {
                        out.push((p.instr, p.when, r, kinds.0));
                    }
                }
            }
        }
        out
    })
}

/// Forward must-analysis: the registers whose current value was checked
/// on every path, shown to `visit` at each instruction: right before it (`When::Before`) and right after it once it has run
/// (`When::After`, before the checks placed after it).
///
/// A NaN source of propagating arithmetic whose result is checked there,
/// or observed after it (`observed`, from [`observed_after`]), has been
/// seen too: its register counts as checked for NaN.
fn checked_at(
    view: &KernelView,
    cfg: &Cfg,
    plan: &Plan,
    skip: &HashSet<ProbeKey>,
    observed: Option<&[bool]>,
    mut visit: impl FnMut(usize, When, &CheckedSet),
) {
    let n = view.instrs.len();
    let mut before: Vec<Vec<(RegRange, u8)>> = vec![Vec::new(); n];
    let mut after: Vec<Vec<(RegRange, u8)>> = vec![Vec::new(); n];
    for (i, when, r, k) in provider_values(plan, view, skip) {
        match when {
            When::Before => before[i as usize].push((r, k)),
            When::After => after[i as usize].push((r, k)),
        }
    }
    // one instruction forwards; shows the two sets when asked
    let step = |i: usize, set: &mut CheckedSet, mut show: Option<ShowChecked>| {
        let ins = &view.instrs[i];
        if let Some(show) = show.as_mut() {
            show(When::Before, set);
        }
        for (r, k) in &before[i] {
            set.add(*r, *k);
        }
        // a copy carries what was checked of its source (one word of a
        // checked pair: what a NaN or an infinity of the pair shows)
        let copied = match ins.flow {
            ValueFlow::Copies(c) if !ins.guarded => ins.uses.get(c as usize).and_then(value_reg).and_then(|src| {
                set.get(&src).or_else(|| {
                    set.iter().filter(|(r, _)| r.contains(&src)).map(|(_, k)| k & PROPAGATING_KINDS.0).max()
                })
            }),
            _ => None,
        };
        for d in ins.defs.iter().filter_map(Operand::reg) {
            set.remove_overlapping(&d);
        }
        let def = ins.defs.iter().find_map(value_reg);
        if let (Some(k), Some(d)) = (copied.filter(|k| *k != 0), def) {
            set.insert(d, k);
        }
        if let Some(show) = show {
            show(When::After, set);
        }
        for (r, k) in &after[i] {
            set.add(*r, *k);
        }
        if let Some(d) = def.filter(|_| ins.flow == ValueFlow::Propagates && !ins.guarded) {
            let nan = ExceptionKind::Nan.bit();
            let seen = set.get(&d).is_some_and(|k| k & nan != 0) || observed.is_some_and(|o| o[i]);
            if seen {
                for u in ins.uses.iter().filter_map(value_reg).filter(|u| !u.overlaps(&d)) {
                    set.add(u, nan);
                }
            }
        }
    };
    let nb = cfg.blocks.len();
    let preds = predecessors(cfg);
    let mut block_out: Vec<Checked> = vec![None; nb];
    // a block with predecessors none of which has been reached yet
    let unreached =
        |block_out: &Vec<Checked>, b: usize| !preds[b].is_empty() && preds[b].iter().all(|&p| block_out[p].is_none());
    let block_in = |block_out: &Vec<Checked>, b: usize| -> CheckedSet {
        // an entry (the kernel's, a subroutine's) starts with nothing
        if preds[b].is_empty() {
            return CheckedSet::default();
        }
        let mut acc: Checked = None;
        for &p in &preds[b] {
            let mut out = block_out[p].clone();
            if let (Some(set), Some(written)) = (&mut out, &cfg.blocks[p].call_writes) {
                written.iter().for_each(|w| set.remove_overlapping(w));
            }
            acc = meet_checked(&acc, &out);
        }
        acc.unwrap_or_default()
    };
    let mut work = Worklist::new(0..nb);
    while let Some(bi) = work.pop() {
        if unreached(&block_out, bi) {
            continue;
        }
        let b = &cfg.blocks[bi];
        let mut set = block_in(&block_out, bi);
        for i in b.start..b.end {
            step(i, &mut set, None);
        }
        let new = Some(set);
        if block_out[bi] != new {
            block_out[bi] = new;
            work.extend(&b.succs);
        }
    }
    for (bi, b) in cfg.blocks.iter().enumerate() {
        // blocks no entry reaches: nothing is known there
        let mut set = if unreached(&block_out, bi) { CheckedSet::default() } else { block_in(&block_out, bi) };
        for i in b.start..b.end {
            step(i, &mut set, Some(&mut |when: When, set: &CheckedSet| visit(i, when, set)));
        }
    }
}

/// Checks whose values a check that is not itself one of them has
/// already looked at, for every kind they look for, on every path: the
/// same value (`FSETP` reading a result checked where it was made), a
/// copy of it, or one word of a checked pair (the high word of an f64
/// read by a single-precision comparison: a NaN or an infinity there is
/// the pair's).
fn repeated_checks(
    plan: &Plan,
    view: &KernelView,
    cfg: &Cfg,
    skip: &HashSet<ProbeKey>,
    observed: Option<&[bool]>,
) -> HashSet<ProbeKey> {
    let at = probes_by_instr(plan, view.instrs.len());
    let mut out = HashSet::default();
    checked_at(view, cfg, plan, skip, observed, |i, when, set| {
        for p in at[i].iter().map(|&k| &plan.probes[k]).filter(|p| p.when == when) {
            let Action::CheckFp { values, kinds, .. } = &p.action else {
                continue;
            };
            if !checks_values_only(*kinds) || values.is_empty() {
                continue;
            }
            let covered = values.iter().all(|v| match value_range(view, p.instr, v) {
                Some(r) => {
                    let exact = set.get(&r).is_some_and(|k| kinds.0 & !k == 0);
                    let within = kinds.0 & !PROPAGATING_KINDS.0 == 0
                        && set.iter().any(|(w, k)| w.contains(&r) && kinds.0 & !k == 0);
                    exact || within
                }
                None => false,
            });
            if covered {
                out.insert(key(p));
            }
        }
    });
    out
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
    /// Checks dropped because a check before them, on every path, looked
    /// at the same value.
    pub repeated: usize,
    /// Checks dropped because the backend knows their results cannot be
    /// exceptional (compiler idioms).
    pub unexceptional: usize,
}

impl ThinStats {
    /// One check dropped, which looked for `kinds`.
    fn drop_check(&mut self, kinds: ExceptionKinds) {
        self.dropped += 1;
        if kinds.contains(ExceptionKind::Sub) {
            self.dropped_subnormal += 1;
        }
    }
}

impl std::ops::AddAssign for ThinStats {
    fn add_assign(&mut self, o: ThinStats) {
        self.checks += o.checks;
        self.dropped += o.dropped;
        self.dropped_subnormal += o.dropped_subnormal;
        self.loop_exit_checks += o.loop_exit_checks;
        self.repeated += o.repeated;
        self.unexceptional += o.unexceptional;
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
fn droppable(p: &crate::probe::Probe, view: &KernelView, observed: &RangeSet) -> bool {
    let Action::CheckFp { values, kinds, .. } = &p.action else {
        return false;
    };
    if !checks_values_only(*kinds) {
        return false;
    }
    let ins = &view.instrs[p.instr as usize];
    values.iter().all(|v| match value_range(view, p.instr, v) {
        Some(r) => {
            let overwritten = p.when == When::Before && ins.writes(&r);
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
    thin_with_slots(plan, view, cfg, &[])
}

/// [`thin`], following values through the stack's spill slots as
/// `slots` says each instruction touches them (empty: none known).
pub fn thin_with_slots(plan: &Plan, view: &KernelView, cfg: &Cfg, slots: &[SlotEffect]) -> (Plan, ThinStats) {
    let slots = with_calls(view, cfg, slots);
    let live = live_in(view, cfg);
    let all_loops = loops(cfg);
    let innermost = |b: usize| all_loops.iter().filter(|l| l.body[b]).min_by_key(|l| l.size);
    let mut work = plan.clone();
    // checks that repeat an earlier one observe nothing for the analysis
    // below; they are dropped at the end if what they repeat is kept. Not
    // where an instruction may be entered from a branch of unknown target:
    // what was checked on every path before it is not known there.
    let repeats = if cfg.unknown_exits.is_empty() {
        repeated_checks(plan, view, cfg, &HashSet::default(), None)
    } else {
        HashSet::default()
    };
    let mut added: HashSet<(u32, RegRange)> = HashSet::default();
    for _ in 0..MAX_ROUNDS {
        let (drop, _) = droppable_probes(view, cfg, &Checks::without(&work, view, &repeats, &slots), &work);
        let mut new = Vec::new();
        for (p, dropped) in work.probes.iter().zip(drop) {
            let Action::CheckFp { values, format, kinds } = &p.action else {
                continue;
            };
            if values.len() != 1 || !checks_values_only(*kinds) || dropped {
                continue;
            }
            let r = match (&values[0], p.when) {
                (ValueRef::Def(0), When::After) | (ValueRef::Reg(_), When::Before) => {
                    value_range(view, p.instr, &values[0])
                }
                _ => None,
            };
            let (Some(r), Some(lp)) = (r, innermost(cfg.block_of[p.instr as usize])) else {
                continue;
            };
            for x in (0..cfg.blocks.len()).filter(|&x| lp.body[x]) {
                for &e in &cfg.blocks[x].succs {
                    // a check before a guarded instruction may run only
                    // where the guard holds: no exit check there
                    let start_guarded = view.instrs[cfg.blocks[e].start].guarded;
                    if lp.body[e] || start_guarded || !words(r).all(|w| live[e].contains(&w)) {
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
                                values: [ValueRef::Reg(r)].into(),
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
    let (drop, def_observed) = droppable_probes(view, cfg, &Checks::without(&work, view, &repeats, &slots), &work);
    let mut stats = ThinStats::default();
    let mut out = Plan { kernel: plan.kernel.clone(), probes: Vec::new(), counters: plan.counters.clone() };
    for (p, dropped) in work.probes.iter().zip(drop) {
        let Action::CheckFp { values, kinds, .. } = &p.action else {
            out.probes.push(p.clone());
            continue;
        };
        let at_exit = values.iter().all(|v| matches!(v, ValueRef::Reg(_)));
        if !at_exit {
            stats.checks += 1;
        }
        if dropped {
            if !at_exit {
                stats.drop_check(*kinds);
            }
        } else {
            if at_exit {
                stats.loop_exit_checks += 1;
            }
            out.probes.push(p.clone());
        }
    }
    // what the kept checks (none of them a repeat) have looked at
    let still = if repeats.is_empty() {
        HashSet::default()
    } else {
        repeated_checks(&out, view, cfg, &repeats, Some(&def_observed))
    };
    out.probes.retain(|p| {
        let repeat = repeats.contains(&key(p)) && still.contains(&key(p));
        if let (true, Action::CheckFp { kinds, .. }) = (repeat, &p.action) {
            stats.drop_check(*kinds);
            stats.repeated += 1;
        }
        !repeat
    });
    (out, stats)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
