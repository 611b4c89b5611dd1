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
mod tests {
    use super::*;
    use crate::cfg::{CfgError, Target};
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
        v.defs = vec![r(def)].into();
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

    /// `FSETP P0, R{a}, R{b}`: a comparison, whose operands the detector
    /// checks for NaN before it.
    fn cmp(offset: u64, a: u16, b: u16) -> InstrView {
        let mut v =
            InstrView::new(offset, format!("FSETP P0, R{a}, R{b}"), InstrClass::Compare { format: FpFormat::F32 });
        v.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
        v.uses = vec![r(a), r(b)].into();
        v
    }

    /// An instruction that reads `src` and hides its NaN (a reciprocal
    /// seen as opaque), writing `def`.
    fn opaque_use(offset: u64, def: u16, src: u16) -> InstrView {
        let mut v = fp(offset, FpOp::Div, def, &[src]);
        v.flow = ValueFlow::Opaque;
        v
    }

    /// `instrs`, then a store of `stored` and an exit.
    fn stored(mut instrs: Vec<InstrView>, stored: u16) -> KernelView {
        let at = instrs.last().map_or(0, |i| i.offset + 0x10);
        instrs.push(other(at, "STG", &[], &[stored], Control::None));
        instrs.push(other(at + 0x10, "EXIT", &[], &[], Control::Exit));
        KernelView { name: "k".into(), instrs }
    }

    /// A value whose check stays (its only reader hides a NaN), then
    /// compared: `R3 = R1 + R2` (checked), `R4 = MUFU.RCP R3`-like opaque
    /// use, then `FSETP R3, R9` and a store.
    fn compare_after_check(between: Option<InstrView>, other_operand: u16) -> KernelView {
        let mut instrs = vec![fp(0x00, FpOp::Add, 3, &[1, 2]), opaque_use(0x10, 4, 3)];
        instrs.extend(between);
        instrs.push(cmp(0x30, 3, other_operand));
        stored(instrs, 4)
    }

    /// `R3 = R1 + R2`, spilled to a slot, the slot loaded into R5 after
    /// `between`, and `R6 = R5 * R5` stored: R3's check is kept or not.
    fn spilled(between: Option<(InstrView, SlotEffect)>) -> (Vec<u32>, usize) {
        let stack = RegRange::new(RegFile::Stack, 2, 1);
        let reg = |n: u16| RegRange::new(RegFile::PerLane, n, 1);
        let mut instrs =
            vec![fp(0x00, FpOp::Add, 3, &[1, 2]), other(0x10, "STL [R1+0x8], R3", &[], &[3], Control::None)];
        let mut slots = vec![SlotEffect::None, SlotEffect::Store { slot: stack, from: reg(3) }];
        if let Some((ins, effect)) = between {
            instrs.push(ins);
            slots.push(effect);
        }
        let at = instrs.last().map_or(0, |i| i.offset) + 0x10;
        instrs.push(other(at, "LDL R5, [R1+0x8]", &[5], &[], Control::None));
        slots.push(SlotEffect::Load { slot: stack, to: reg(5) });
        instrs.push(fp(at + 0x10, FpOp::Mul, 6, &[5, 5]));
        let view = stored(instrs, 6);
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
        let (thin, _) = thin_with_slots(&plan, &view, &cfg, &slots);
        let n = view.instrs.len();
        (thin.probes.iter().map(|p| p.instr).collect(), n)
    }

    #[test]
    fn a_spilled_value_is_observed_where_its_reload_is() {
        // R3 reaches the checked R6 through the slot: only R6 is checked
        let (kept, n) = spilled(None);
        assert_eq!(kept, vec![n as u32 - 3], "the product alone");
        // the slot written again in between: R5 is not R3
        let again = other(0x20, "STL [R1+0x8], RZ", &[], &[], Control::None);
        let (kept, _) = spilled(Some((again, SlotEffect::Writes(vec![RegRange::new(RegFile::Stack, 2, 1)]))));
        assert_eq!(kept[0], 0, "R3 checked where it is made: {kept:?}");
        // the stack pointer changed in between: no slot is known
        let moved = other(0x20, "VIADD R1, R1, -0x20", &[1], &[1], Control::None);
        let (kept, _) = spilled(Some((moved, SlotEffect::Clobber)));
        assert_eq!(kept[0], 0, "{kept:?}");
        // another slot written in between changes nothing
        let elsewhere = other(0x20, "STL [R1+0x10], RZ", &[], &[], Control::None);
        let (kept, _) = spilled(Some((elsewhere, SlotEffect::Writes(vec![RegRange::new(RegFile::Stack, 4, 1)]))));
        assert!(!kept.contains(&0), "{kept:?}");
    }

    #[test]
    fn a_branch_of_unknown_target_ends_what_is_known_after_it() {
        // 0: R3 = R1 + R2; 1: BRX (or BRA to 2); 2: R4 = R3 * R3;
        // 3: R5 = opaque(R4); 4: STG R5; 5: EXIT
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                fp(0x00, FpOp::Add, 3, &[1, 2]),
                other(0x10, "BRX R6", &[], &[6], Control::Branch),
                fp(0x20, FpOp::Mul, 4, &[3, 3]),
                opaque_use(0x30, 5, 4),
                other(0x40, "STG R5", &[], &[5], Control::None),
                other(0x50, "EXIT", &[], &[], Control::Exit),
            ],
        };
        let unknown = |i: usize| if i == 1 { Target::Unknown } else { Target::Leave };
        assert_eq!(Cfg::build(&view, unknown), Err(CfgError::UnknownTarget { instr: 1 }));
        let cfg = Cfg::build_with_unknown_exits(&view, unknown).unwrap();
        assert_eq!(cfg.unknown_exits, vec![cfg.block_of[1]]);
        assert!(cfg.blocks[cfg.block_of[1]].opaque_exit && cfg.blocks[cfg.block_of[1]].succs.is_empty());
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let (thin_plan, stats) = thin(&plan, &view, &cfg);
        verify(&thin_plan, &view, &sites).unwrap();
        let unknown_kept: Vec<u32> = thin_plan.probes.iter().map(|p| p.instr).collect();
        // the branch's target known: R3 reaches the check of R4, and is not checked itself
        let (known, _) = kept(&view, |i| if i == 1 { Target::Instr(2) } else { Target::Leave });
        assert!(!known.contains(&0), "{known:?}");
        // not known: nothing after the branch is known, R3 is checked where it is made
        assert!(unknown_kept.contains(&0), "{unknown_kept:?}");
        assert_eq!(stats.repeated, 0);
    }

    #[test]
    fn a_subroutine_reaching_a_branch_of_unknown_target_writes_what_is_not_known() {
        // 0: CALL 3; 1: STG R9; 2: EXIT; 3: R9 = R1 + R2; 4: @P0 BRX R6; 5: RET
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "CALL 0x30", &[], &[], Control::Call),
                other(0x10, "STG R9", &[], &[9], Control::None),
                other(0x20, "EXIT", &[], &[], Control::Exit),
                fp(0x30, FpOp::Add, 9, &[1, 2]),
                other(0x40, "@P0 BRX R6", &[], &[6], Control::CondBranch),
                other(0x50, "RET", &[], &[], Control::Return),
            ],
        };
        let target = |unknown: bool| {
            move |i: usize| match i {
                0 => Target::Instr(3),
                4 if unknown => Target::Unknown,
                4 => Target::Instr(5),
                _ => Target::Leave,
            }
        };
        let known = Cfg::build(&view, target(false)).unwrap();
        assert!(known.blocks[0].call_writes.is_some());
        let cfg = Cfg::build_with_unknown_exits(&view, target(true)).unwrap();
        assert_eq!(cfg.blocks[0].callee, Some(cfg.block_of[3]));
        assert_eq!(cfg.blocks[0].call_writes, None, "the subroutine may go anywhere");
        assert!(cfg.blocks[0].opaque_exit);
    }

    #[test]
    fn a_call_writes_the_slots_its_subroutine_stores_to() {
        // 0: R3 = R1 + R2; 1: STL slot 2 <- R3; 2: CALL 7; 3: LDL R5 <- slot 2;
        // 4: R6 = R5 * R5; 5: STG R6; 6: EXIT; 7: STL slot `written` <- R9; 8: RET
        let run = |written: u16| {
            let stack = |w: u16| RegRange::new(RegFile::Stack, w, 1);
            let reg = |n: u16| RegRange::new(RegFile::PerLane, n, 1);
            let view = KernelView {
                name: "k".into(),
                instrs: vec![
                    fp(0x00, FpOp::Add, 3, &[1, 2]),
                    other(0x10, "STL", &[], &[3], Control::None),
                    other(0x20, "CALL 0x70", &[], &[], Control::Call),
                    other(0x30, "LDL R5", &[5], &[], Control::None),
                    fp(0x40, FpOp::Mul, 6, &[5, 5]),
                    other(0x50, "STG R6", &[], &[6], Control::None),
                    other(0x60, "EXIT", &[], &[], Control::Exit),
                    other(0x70, "STL", &[], &[9], Control::None),
                    other(0x80, "RET", &[], &[], Control::Return),
                ],
            };
            let slots = vec![
                SlotEffect::None,
                SlotEffect::Store { slot: stack(2), from: reg(3) },
                SlotEffect::None,
                SlotEffect::Load { slot: stack(2), to: reg(5) },
                SlotEffect::None,
                SlotEffect::None,
                SlotEffect::None,
                SlotEffect::Store { slot: stack(written), from: reg(9) },
                SlotEffect::None,
            ];
            let mut sites = SiteTable::new();
            let plan = Detector::default().plan(&view, &mut sites);
            let cfg = Cfg::build(&view, |i| if i == 2 { Target::Instr(7) } else { Target::Leave }).unwrap();
            let (thin, _) = thin_with_slots(&plan, &view, &cfg, &slots);
            thin.probes.iter().map(|p| p.instr).collect::<Vec<u32>>()
        };
        assert_eq!(run(5), vec![4], "the subroutine stores elsewhere: R3 is observed through its slot");
        assert_eq!(run(2), vec![0, 4], "the subroutine stores to R3's slot");
    }

    #[test]
    fn a_comparison_of_a_checked_value_needs_no_check_of_its_own() {
        let view = compare_after_check(None, 9);
        let (kept, stats) = kept(&view, |_| Target::Leave);
        // R3 checked where it is made (its reader hides a NaN); the
        // comparison's check of R3 repeats it, its check of R9 (loaded)
        // stays; the division's check stays
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let before: Vec<u32> = plan.probes.iter().map(|p| p.instr).collect();
        assert_eq!(before, vec![0, 1, 2]);
        assert_eq!(kept, vec![0, 1, 2], "the comparison keeps a check for R9");
        let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
        let (thin_plan, _) = thin(&plan, &view, &cfg);
        let cmp_values: Vec<&crate::probe::CheckedValues> = thin_plan
            .probes
            .iter()
            .filter(|p| p.instr == 2)
            .filter_map(|p| match &p.action {
                Action::CheckFp { values, .. } => Some(values),
                _ => None,
            })
            .collect();
        assert_eq!(cmp_values.iter().map(|v| v.len()).sum::<usize>(), 2, "one check of both operands, kept whole");
        assert_eq!(stats.repeated, 0);
    }

    #[test]
    fn repeated_checks_of_one_value_are_dropped() {
        // FSETP R3, R5 after R3 was checked where it was made and copied to R5
        let mut mov = other(0x20, "MOV R5, R3", &[5], &[3], Control::None);
        mov.flow = ValueFlow::Copies(0);
        let view = stored(vec![fp(0x00, FpOp::Add, 3, &[1, 2]), opaque_use(0x10, 4, 3), mov, cmp(0x30, 3, 5)], 4);
        let (kept, stats) = kept(&view, |_| Target::Leave);
        assert_eq!(kept, vec![0, 1], "the comparison reads R3 and its copy");
        assert_eq!(stats.repeated, 1);
    }

    #[test]
    fn a_source_of_a_checked_result_counts_as_checked() {
        // R5 = R3 * R3 is checked (read by an opaque instruction only);
        // FSETP R3, R3 afterwards needs no check
        let view = stored(vec![fp(0x00, FpOp::Mul, 5, &[3, 3]), opaque_use(0x10, 6, 5), cmp(0x20, 3, 3)], 6);
        let (kept, stats) = kept(&view, |_| Target::Leave);
        assert_eq!(kept, vec![0, 1]);
        assert_eq!(stats.repeated, 1);
    }

    #[test]
    fn a_check_on_one_path_only_or_before_a_redefinition_is_not_repeated() {
        // R3 written again (by a load) between the check and the comparison
        // (without the load, the comparison's check would be a repeat)
        let (k, stats) = kept(&compare_after_check(None, 3), |_| Target::Leave);
        assert_eq!((k, stats.repeated), (vec![0, 1], 1));
        let view = compare_after_check(Some(other(0x20, "LDG R3", &[3], &[], Control::None)), 3);
        let (k, stats) = kept(&view, |_| Target::Leave);
        assert!(k.contains(&3), "{k:?}");
        assert_eq!(stats.repeated, 0);
        // the check on one side of a branch only: 0 branches over 1
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "@P1 BRA 0x20", &[], &[], Control::CondBranch),
                fp(0x10, FpOp::Add, 3, &[3, 3]),
                cmp(0x20, 3, 3),
                other(0x30, "EXIT", &[], &[], Control::Exit),
            ],
        };
        let (k, stats) = kept(&view, |i| if i == 0 { Target::Instr(2) } else { Target::Leave });
        assert!(k.contains(&2), "{k:?}");
        assert_eq!(stats.repeated, 0);
        // a check at a guarded instruction looks only where the guard holds
        let mut guarded = fp(0x00, FpOp::Add, 3, &[1, 2]);
        guarded.guarded = true;
        let view = stored(vec![guarded, opaque_use(0x10, 4, 3), cmp(0x20, 3, 3)], 4);
        let (k, stats) = kept(&view, |_| Target::Leave);
        assert!(k.contains(&2), "{k:?}");
        assert_eq!(stats.repeated, 0);
    }

    #[test]
    fn two_repeats_of_each_other_keep_one() {
        // two comparisons of a loaded R3, nothing else: the second repeats
        // the first, which stays
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "LDG R3", &[3], &[], Control::None),
                cmp(0x10, 3, 3),
                cmp(0x20, 3, 3),
                other(0x30, "EXIT", &[], &[], Control::Exit),
            ],
        };
        let (kept, stats) = kept(&view, |_| Target::Leave);
        assert_eq!(kept, vec![1]);
        assert_eq!(stats.repeated, 1);
    }

    #[test]
    fn loop_accumulators_are_checked_where_they_leave() {
        let view = loop_kernel(false);
        let (kept, stats) = kept(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave });
        // both FMAs feed the multiply after the loop on every path: only
        // the stored product is checked
        assert_eq!(kept, vec![4]);
        assert_eq!(stats, ThinStats { checks: 3, dropped: 2, dropped_subnormal: 2, ..ThinStats::default() });
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
        assert_eq!(
            stats,
            ThinStats { checks: 2, dropped: 2, dropped_subnormal: 2, loop_exit_checks: 1, ..ThinStats::default() }
        );
    }

    #[test]
    fn a_jump_back_that_closes_no_cycle_is_no_loop() {
        // a divergent warp's out-of-line path, laid out after the exit:
        // it jumps back into the middle and runs on; nothing cycles, so
        // nothing is checked "where a loop exits" (at the second store,
        // where R4 would hold what the first path made)
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "LDG R2", &[2], &[], Control::None),
                other(0x10, "BRA.DIV 0x60", &[], &[], Control::CondBranch),
                fp(0x20, FpOp::Add, 4, &[2, 2]),
                other(0x30, "BRA.DIV 0x80", &[], &[], Control::CondBranch),
                other(0x40, "STG R4", &[], &[4], Control::None),
                other(0x50, "EXIT", &[], &[], Control::Exit),
                fp(0x60, FpOp::Mul, 4, &[2, 2]),
                other(0x70, "BRA 0x20", &[], &[], Control::Branch),
                other(0x80, "STG R4", &[], &[4], Control::None),
                other(0x90, "EXIT", &[], &[], Control::Exit),
            ],
        };
        let target = |i| match i {
            1 => Target::Instr(6),
            3 => Target::Instr(8),
            7 => Target::Instr(2),
            _ => Target::Leave,
        };
        let (checked, stats) = kept(&view, target);
        assert_eq!(stats.loop_exit_checks, 0, "{checked:?}");
        assert!(!checked.contains(&8), "{checked:?}");
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
        let target = |i: usize| {
            if i == 1 {
                Target::Instr(4)
            } else {
                Target::Leave
            }
        };
        assert_eq!(kept(&view(false), target).0, vec![2]);
        assert_eq!(kept(&view(true), target).0, vec![0, 2]);
        // a call whose target is unknown observes nothing
        assert_eq!(kept(&view(false), |i| if i == 1 { Target::Unknown } else { Target::Leave }).0, vec![0, 2]);
    }

    #[test]
    fn compare_sources_observed_later_lose_their_check() {
        let view = |second: u16| {
            let mut setp = InstrView::new(0x10, "FSETP P0, R1, R2", InstrClass::Compare { format: FpFormat::F32 });
            setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
            setp.uses = vec![r(1), r(2)].into();
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
        setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
        setp.uses = vec![r(1), r(2)].into();
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
