//! Plans: the ordered probes of one kernel, and the verifier that states the
//! invariants a backend may assume when it lowers a plan.

use crate::probe::{Action, Change, CounterDef, CounterKind, Probe, ValueRef, When};
use crate::site::SiteTable;
use crate::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange};
use serde::{Deserialize, Serialize};

/// Everything one tool asks of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Plan {
    pub kernel: String,
    pub probes: Vec<Probe>,
    pub counters: Vec<CounterDef>,
}

impl Plan {
    pub fn new(kernel: impl Into<String>) -> Plan {
        Plan { kernel: kernel.into(), probes: Vec::new(), counters: Vec::new() }
    }

    /// Put probes in the order the verifier requires, keeping the relative
    /// order of probes at the same point (a stable sort).
    pub fn normalize(&mut self) {
        // (Tools mostly plan in order: nothing to move then.)
        if !self.probes.is_sorted_by_key(|p| (p.instr, p.when)) {
            self.probes.sort_by_key(|p| (p.instr, p.when));
        }
    }

    /// Probes grouped by instruction index, in order.
    pub fn by_instr(&self) -> impl Iterator<Item = (u32, &[Probe])> {
        self.probes.chunk_by(|a, b| a.instr == b.instr).map(|c| (c[0].instr, c))
    }
}

/// A broken plan invariant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("plan is for kernel `{plan}` but the view is of `{view}`")]
    WrongKernel { plan: String, view: String },
    #[error("probe {probe}: instruction index {instr} is outside the kernel ({len} instructions)")]
    InstrOutOfRange { probe: usize, instr: u32, len: usize },
    #[error("probe {probe}: probes are not ordered by (instruction, before/after)")]
    Unordered { probe: usize },
    #[error("probe {probe}: its site is not (kernel, offset {offset:#x}) of instruction {instr}")]
    SiteMismatch { probe: usize, instr: u32, offset: u64 },
    #[error("probe {probe}: an `after` probe on instruction {instr}, which leaves the block (it would never run)")]
    AfterLeavingInstr { probe: usize, instr: u32 },
    #[error("probe {probe}: value {value:?} does not exist on instruction {instr}")]
    NoSuchValue { probe: usize, instr: u32, value: ValueRef },
    #[error("probe {probe}: value {value:?} of instruction {instr} is not a register of at least {words} word(s)")]
    NotARegister { probe: usize, instr: u32, value: ValueRef, words: u8 },
    #[error("probe {probe}: `after` probe reads source {value:?}, which instruction {instr} overwrites")]
    ClobberedUse { probe: usize, instr: u32, value: ValueRef },
    #[error("probe {probe}: a check with no values or no exception kinds")]
    EmptyCheck { probe: usize },
    #[error("probe {probe}: counter {counter} is not declared by the plan")]
    UnknownCounter { probe: usize, counter: u16 },
    #[error("probe {probe}: injection on instruction {instr}: {why}")]
    BadInjection { probe: usize, instr: u32, why: String },
    #[error("probe {probe}: counter {counter} ({what}) is placed at instruction {instr}, where it cannot count")]
    MisplacedCount { probe: usize, counter: u16, instr: u32, what: &'static str },
    #[error("counter {counter}: its region or branch does not fit the kernel")]
    BadRegion { counter: u16 },
    #[error("probe {probe}: exception flags are read only before an instruction that ends the thread group ({instr} does not)")]
    FlagsNotAtExit { probe: usize, instr: u32 },
    #[error("probe {probe}: flow probe on instruction {instr}: {why}")]
    BadFlow { probe: usize, instr: u32, why: String },
}

/// Check the invariants lowering may assume:
/// 1. the plan names the view's kernel;
/// 2. every probe's instruction exists, and probes are sorted by
///    (instruction, `before` then `after`);
/// 3. every probe's site is the (kernel, offset) of its instruction, or,
///    for a check of live registers only, a site of the same kernel;
/// 4. no `after` probe sits on an instruction that always leaves (branch,
///    return, exit);
/// 5. every checked value is a register range wide enough for the format
///    (or a value known at instrumentation time); an `after` probe reads
///    no source that the instruction overwrites;
/// 6. checks have at least one value and one kind; counters are declared;
/// 7. an injection ([`check_injection`]) changes a register the
///    instruction has, at the point its change needs, for some lane;
/// 8. a region counter spans instructions of the kernel, its branch is its
///    last instruction and a conditional branch; its probe runs `before`
///    the region's first unguarded instruction (its first when all are
///    guarded); a guard counter's probe runs `before` its guarded
///    instruction.
/// 9. exception flags are read `before` an instruction that exits.
/// 10. a flow probe ([`check_flow`]) reads sources of the instruction (at
///     most [`crate::flow::MAX_SOURCES`], registers of its format or known
///     values) and a written register as its result; it is `after` the
///     instruction when it has a result (its sources are read before the
///     instruction, so one the instruction overwrites is allowed) and
///     `before` it when not.
pub fn verify(plan: &Plan, view: &KernelView, sites: &SiteTable) -> Result<(), PlanError> {
    if plan.kernel != view.name {
        return Err(PlanError::WrongKernel { plan: plan.kernel.clone(), view: view.name.clone() });
    }
    for (c, def) in plan.counters.iter().enumerate() {
        let bad = PlanError::BadRegion { counter: c as u16 };
        if let CounterKind::Region { first, end, branch } = def.kind {
            if first >= end || end as usize > view.instrs.len() {
                return Err(bad);
            }
            if let Some(b) = branch {
                if b + 1 != end || view.instrs[b as usize].control != Control::CondBranch {
                    return Err(bad);
                }
            }
        }
    }
    let mut last: Option<(u32, When)> = None;
    for (i, p) in plan.probes.iter().enumerate() {
        let ins = view.instrs.get(p.instr as usize).ok_or(PlanError::InstrOutOfRange {
            probe: i,
            instr: p.instr,
            len: view.instrs.len(),
        })?;
        if let Some(prev) = last {
            if (p.instr, p.when) < prev {
                return Err(PlanError::Unordered { probe: i });
            }
        }
        last = Some((p.instr, p.when));
        // a check of live registers names the instruction that produced them
        let live_only =
            matches!(&p.action, Action::CheckFp { values, .. } if values.iter().all(|v| matches!(v, ValueRef::Reg(_))));
        match sites.get(p.site) {
            Some(s) if *s.kernel == *view.name && (s.offset == ins.offset || live_only) => {}
            _ => return Err(PlanError::SiteMismatch { probe: i, instr: p.instr, offset: ins.offset }),
        }
        if p.when == When::After && ins.control.leaves() {
            return Err(PlanError::AfterLeavingInstr { probe: i, instr: p.instr });
        }
        match &p.action {
            Action::CheckFp { values, format, kinds } => {
                if values.is_empty() || kinds.is_empty() {
                    return Err(PlanError::EmptyCheck { probe: i });
                }
                for v in values {
                    let live;
                    let op = match v {
                        ValueRef::Def(n) => ins.defs.get(*n as usize),
                        ValueRef::Use(n) => ins.uses.get(*n as usize),
                        ValueRef::Reg(r) => {
                            live = Operand::Reg(*r);
                            Some(&live)
                        }
                    }
                    .ok_or(PlanError::NoSuchValue { probe: i, instr: p.instr, value: *v })?;
                    let words = format.register_words();
                    match op {
                        Operand::Reg(r) if r.count >= words => {
                            if p.when == When::After
                                && matches!(v, ValueRef::Use(_) | ValueRef::Reg(_))
                                && ins.writes(r)
                            {
                                return Err(PlanError::ClobberedUse { probe: i, instr: p.instr, value: *v });
                            }
                        }
                        Operand::Known { .. } => {}
                        _ => return Err(PlanError::NotARegister { probe: i, instr: p.instr, value: *v, words }),
                    }
                }
            }
            Action::Count { counter } => {
                let def = plan
                    .counters
                    .get(counter.0 as usize)
                    .ok_or(PlanError::UnknownCounter { probe: i, counter: counter.0 })?;
                let misplaced = |what| PlanError::MisplacedCount { probe: i, counter: counter.0, instr: p.instr, what };
                match def.kind {
                    CounterKind::Region { first, end, .. } => {
                        let head = (first..end).find(|&j| !view.instrs[j as usize].guarded).unwrap_or(first);
                        if p.when != When::Before || p.instr != head {
                            return Err(misplaced("a region's count"));
                        }
                    }
                    CounterKind::GuardHeld { instr } => {
                        if p.when != When::Before || p.instr != instr || !ins.guarded {
                            return Err(misplaced("a guard's count"));
                        }
                    }
                    CounterKind::WarpExecutions | CounterKind::ThreadExecutions => {}
                }
            }
            Action::Inject { change, threads, activations } => {
                if activations.0 as usize >= plan.counters.len() {
                    return Err(PlanError::UnknownCounter { probe: i, counter: activations.0 });
                }
                if threads.lanes.0 == 0 {
                    return Err(PlanError::BadInjection { probe: i, instr: p.instr, why: "it selects no lane".into() });
                }
                check_injection(change, p.when, ins).map_err(|why| PlanError::BadInjection {
                    probe: i,
                    instr: p.instr,
                    why,
                })?;
            }
            Action::ReadExceptionFlags => {
                if p.when != When::Before || ins.control != Control::Exit {
                    return Err(PlanError::FlagsNotAtExit { probe: i, instr: p.instr });
                }
            }
            Action::Flow { sources, source_format, result, format, .. } => {
                check_flow(sources, *source_format, *result, *format, p.when, ins)
                    .map_err(|why| PlanError::BadFlow { probe: i, instr: p.instr, why })?;
            }
        }
    }
    Ok(())
}

/// A flow probe fits its instruction (rule 10 of [`verify`]).
pub fn check_flow(
    sources: &[ValueRef],
    source_format: crate::class::FpFormat,
    result: Option<ValueRef>,
    format: crate::class::FpFormat,
    when: When,
    ins: &InstrView,
) -> Result<(), String> {
    for f in [format, source_format] {
        if !crate::flow::analysed_format(f) {
            return Err(format!("{f} packs two values in a register; flow analyses one"));
        }
    }
    if sources.len() > crate::flow::MAX_SOURCES {
        return Err(format!("{} sources, at most {}", sources.len(), crate::flow::MAX_SOURCES));
    }
    let value_reg = |op: Option<&Operand>, what: String, format: crate::class::FpFormat| match op {
        Some(Operand::Reg(r)) if r.file != RegFile::Predicate && r.count >= format.register_words() => Ok(()),
        Some(Operand::Known { .. }) if what.starts_with("source") => Ok(()),
        Some(_) => Err(format!("{what} is not a register of {format}")),
        None => Err(format!("the instruction has no {what}")),
    };
    for v in sources {
        match v {
            ValueRef::Use(n) => value_reg(ins.uses.get(*n as usize), format!("source {n}"), source_format)?,
            other => return Err(format!("a source is read from the instruction's sources, not {other:?}")),
        }
    }
    match (result, when) {
        (Some(ValueRef::Def(n)), When::After) => {
            value_reg(ins.defs.get(n as usize), format!("destination {n}"), format)
        }
        (Some(ValueRef::Def(_)), When::Before) => Err("a result is read after the instruction".into()),
        (Some(other), _) => Err(format!("a result is a destination of the instruction, not {other:?}")),
        (None, When::After) => Err("without a result the probe runs before the instruction".into()),
        (None, When::Before) if sources.is_empty() => Err("nothing to read".into()),
        (None, When::Before) => Ok(()),
    }
}

/// An injection's change fits its instruction: a destination is changed
/// `after` and a source, guard or special read `before` (and an
/// instruction that leaves cannot have a source restored after it); the
/// operand is a register; a substitute or redirect register is of the same
/// file and width and not the operand itself; a restored source is not
/// overwritten by the instruction; a mask is non-zero; an inverted value
/// is a predicate (or a lane mask: a uniform register pair); a forced guard
/// exists; an index input is changed `before` an instruction that reads
/// that register (never restored, so the instruction may leave or
/// overwrite it).
pub fn check_injection(change: &Change, when: When, ins: &InstrView) -> Result<(), String> {
    let def = |n: u8| -> Result<RegRange, String> {
        if when != When::After {
            return Err("a destination is changed after the instruction".into());
        }
        match ins.defs.get(n as usize) {
            Some(Operand::Reg(r)) => Ok(*r),
            Some(_) => Err(format!("destination {n} is not a register")),
            None => Err(format!("the instruction has no destination {n}")),
        }
    };
    let source = |n: u8| -> Result<RegRange, String> {
        if when != When::Before {
            return Err("a source is changed before the instruction".into());
        }
        if ins.control.leaves() {
            return Err("the instruction leaves, so its source cannot be restored after it".into());
        }
        match ins.uses.get(n as usize) {
            Some(Operand::Reg(r)) if ins.writes(r) => {
                Err(format!("source {n} is overwritten by the instruction, so restoring it would undo the result"))
            }
            Some(Operand::Reg(r)) => Ok(*r),
            Some(_) => Err(format!("source {n} is not a register")),
            None => Err(format!("the instruction has no source {n}")),
        }
    };
    let nonzero = |mask: u64| if mask == 0 { Err("a zero mask changes nothing".to_string()) } else { Ok(()) };
    let same_shape = |r: RegRange, other: RegRange| {
        if other.file != r.file || other.count != r.count {
            Err(format!("register {other:?} is not of the file and width of {r:?}"))
        } else if other.overlaps(&r) {
            Err(format!("register {other:?} is the operand itself"))
        } else {
            Ok(())
        }
    };
    match *change {
        Change::XorDef { def: n, mask } | Change::SpecialRead { def: n, mask } => def(n).and(nonzero(mask)),
        // a memory operand's address is changed for this instruction only
        Change::XorUse { use_index, mask }
            if when == When::Before
                && !ins.control.leaves()
                && matches!(ins.uses.get(use_index as usize), Some(Operand::Memory { .. })) =>
        {
            nonzero(mask)
        }
        Change::XorUse { use_index, mask } => source(use_index).and(nonzero(mask)),
        Change::SubstituteUse { use_index, from } => same_shape(source(use_index)?, from),
        Change::RedirectDef { def: n, to } => same_shape(def(n)?, to),
        Change::DiscardDef { def: n } | Change::OtherOperation { def: n } => def(n).map(|_| ()),
        // AMD has no predicate registers: a compare's wave64 lane mask (a
        // uniform register pair) is its predicate; the backend checks the
        // instruction is a compare.
        Change::InvertPredicate { def: n } => match def(n)? {
            RegRange { file: RegFile::Predicate, .. } | RegRange { file: RegFile::Uniform, count: 2, .. } => Ok(()),
            _ => Err(format!("destination {n} is not a predicate or a lane mask")),
        },
        Change::XorInput { reg, mask } => {
            if when != When::Before {
                Err("an index input is changed before the instruction that reads it".into())
            } else if reg.file == RegFile::Predicate {
                Err(format!("{reg:?} is a predicate, not an index input"))
            } else if !ins.uses.iter().filter_map(Operand::reg).any(|u| u.contains(&reg)) {
                Err(format!("the instruction does not read {reg:?}"))
            } else {
                nonzero(mask)
            }
        }
        Change::ForceGuard if when != When::Before => Err("a guard is forced before the instruction".into()),
        Change::ForceGuard if !ins.guarded => Err("the instruction has no guard predicate".into()),
        Change::Trap if when != When::Before => Err("a trap is placed before the instruction".into()),
        Change::ForceGuard | Change::Trap => Ok(()),
    }
}

#[cfg(test)]
mod tests;
