//! The inject tool: one permanent fault ([`FaultSpec`]) as a plan of
//! [`Action::Inject`] probes over a kernel.
//!
//! Which instructions a model touches, and how (after Guerrero-Balaguera et
//! al., SC'23):
//! - IOC: instructions of the chosen unit (int or fp) writing a per-lane
//!   register: the result is replaced by another operation of that unit on
//!   the same sources ([`Change::OtherOperation`]; the backend documents which);
//! - IVOC: instructions of the integer or floating-point units: the thread
//!   stops as on an invalid instruction ([`Change::Trap`]);
//! - IRA: instructions with the chosen operand as a per-lane register: a
//!   source reads the wrong register (restored after), a destination's
//!   result goes to the wrong register and the right one keeps its value;
//! - IVRA: the same instructions; a register outside the thread's
//!   allocation is refused by the hardware with an out-of-range register
//!   error, injected as the trap that error raises;
//! - IIO, IMS: instructions with an immediate operand (IIO), reading
//!   constant or shared memory (IMS; on NVIDIA constant-bank operands, the
//!   launch's parameters among them, and shared loads; on AMD scalar memory
//!   loads, the kernel arguments among them, and LDS reads): their result
//!   is XORed with the mask;
//! - IMD: stores to shared memory: their data or address XORed, for that
//!   store only;
//! - WV: instructions writing the chosen predicate write its inverse (where
//!   there are no predicate registers, compares writing a lane mask);
//! - IAT, IAW / IAC: the thread / block index in the chosen dimension is
//!   XORed with the mask. Where an instruction reads it from a special
//!   register, that read's result ([`Change::SpecialRead`]; a read into a
//!   uniform register, one per warp, changes it for the whole warp); where
//!   the thread group receives it in a register when it starts, that
//!   register, for good, before the first instruction that reads it
//!   ([`Change::XorInput`]; the mask shifted to the index's bits when
//!   several indices share the register);
//! - IAL: the unit's instructions in the selected lanes: results dropped
//!   (`ignore`), or guarded instructions executed where their guard is off
//!   (`force`, where the backend can set the guard just before).
//!
//! Every probe selects the fault's threads
//! ([`FaultLocation`](crate::fault::FaultLocation)) and adds the corrupted
//! thread instances to the plan's one counter, `activations`.
//! What a model needs of an instruction beyond the kernel view comes from
//! the backend's ISA tables as [`InjectFacts`].

use crate::fault::{Dim, ErrorModel, FaultSpec, LaneFault, OperandSel, StoreTarget, Unit};
use crate::plan::{check_injection, Plan};
use crate::probe::{Action, Change, CounterDef, CounterId, CounterKind, Probe, When};
use crate::site::SiteTable;
use crate::view::{InstrView, KernelView, Operand, RegFile, RegRange};

/// Name of the inject plan's one counter.
pub const ACTIVATIONS: &str = "activations";

/// An index a special-register read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialIndex {
    /// The thread's index in its block.
    Thread(Dim),
    /// The block's index in the grid.
    Block(Dim),
}

/// Where indices a thread group receives in registers when it starts are
/// read: for each of the thread and block indices in x, y and z, the
/// register that holds it and the index's lowest bit there (several may
/// share a register).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexInputs([Option<(RegRange, u8)>; 6]);

impl IndexInputs {
    fn slot(index: SpecialIndex) -> usize {
        let dim = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        match index {
            SpecialIndex::Thread(d) => dim(d),
            SpecialIndex::Block(d) => 3 + dim(d),
        }
    }

    /// `index` is held in `reg` from bit `shift` on.
    pub fn set(&mut self, index: SpecialIndex, reg: RegRange, shift: u8) {
        self.0[Self::slot(index)] = Some((reg, shift));
    }

    /// The register and lowest bit of `index`, if read here.
    pub fn get(&self, index: SpecialIndex) -> Option<(RegRange, u8)> {
        self.0[Self::slot(index)]
    }

    /// No index is read here.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
}

/// What the inject tool needs to know of one instruction, from the
/// backend's ISA tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InjectFacts {
    /// The functional unit that executes it (integer or floating point).
    pub unit: Option<Unit>,
    /// It has an immediate operand.
    pub immediate: bool,
    /// A load from memory (IMS): the backend says which memory spaces.
    pub memory_source: bool,
    /// A store to shared memory: (use index of the data, use index of the address).
    pub shared_store: Option<(u8, u8)>,
    /// A read of a thread or block index.
    pub special: Option<SpecialIndex>,
    /// The indices a thread group receives in registers when it starts
    /// that this instruction is the first to read.
    pub index_inputs: IndexInputs,
    /// Its guard is a per-lane predicate and every execution passes right
    /// before it through a point where the backend can set that guard.
    pub forceable_guard: bool,
    /// A compare writing its per-lane outcome as a lane mask into general
    /// registers (where there are no predicate registers): the def that WV
    /// inverts, whichever predicate number the fault names.
    pub lane_mask: Option<u8>,
}

/// The inject tool's plan of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectPlan {
    pub plan: Plan,
    /// Instructions the fault touches.
    pub targets: usize,
}

/// The inject tool: one fault.
#[derive(Debug, Clone)]
pub struct Injector {
    pub fault: FaultSpec,
}

impl Injector {
    pub fn name(&self) -> &'static str {
        "inject"
    }

    /// What an instruction needs for the model to touch it, for the line
    /// that says a kernel has none.
    pub fn wanted(&self) -> String {
        let p = &self.fault.params;
        let unit = match p.unit {
            Some(Unit::Int) => "integer",
            _ => "floating-point",
        };
        let operand = match p.operand {
            Some(OperandSel::Src(n)) => format!("a register source {n}"),
            _ => "a register destination".to_string(),
        };
        let dim = match p.dim {
            Some(Dim::X) => "x",
            Some(Dim::Y) => "y",
            _ => "z",
        };
        match self.fault.model {
            ErrorModel::Ioc => format!("{unit} instructions writing a register"),
            ErrorModel::Ivoc => "integer or floating-point instructions".into(),
            ErrorModel::Ira | ErrorModel::Ivra => format!("instructions with {operand}"),
            ErrorModel::Iio => "instructions with an immediate operand writing a register".into(),
            ErrorModel::Ims => "loads from memory into a register".into(),
            ErrorModel::Imd => "stores to shared memory through registers".into(),
            ErrorModel::Wv => format!("instructions writing P{}", p.predicate.unwrap_or(0)),
            ErrorModel::Iat | ErrorModel::Iaw => format!("reads of the thread index ({dim})"),
            ErrorModel::Iac => format!("reads of the block index ({dim})"),
            ErrorModel::Ial if p.lane_fault == Some(LaneFault::Force) => {
                format!("guarded {unit} instructions whose guard can be forced")
            }
            ErrorModel::Ial => format!("{unit} instructions writing a register"),
        }
    }

    /// The change (and where it runs) the fault makes to one instruction,
    /// if it touches it.
    fn change(&self, ins: &InstrView, facts: &InjectFacts) -> Option<(Change, When)> {
        let p = &self.fault.params;
        let mask = p.mask.unwrap_or(0);
        let lane_def = first_lane_def(ins);
        let unit_def = || lane_def.filter(|_| facts.unit.is_some() && facts.unit == p.unit);
        let change = match self.fault.model {
            ErrorModel::Ioc => unit_def().map(|(d, _)| (Change::OtherOperation { def: d }, When::After)),
            ErrorModel::Ivoc => facts.unit.map(|_| (Change::Trap, When::Before)),
            ErrorModel::Ira | ErrorModel::Ivra => {
                let wrong = |r: RegRange| RegRange::new(RegFile::PerLane, p.register.unwrap_or(0), r.count);
                let ivra = self.fault.model == ErrorModel::Ivra;
                match p.operand? {
                    OperandSel::Src(n) => match ins.uses.get(n as usize) {
                        Some(Operand::Reg(r)) if r.file == RegFile::PerLane && ivra => {
                            Some((Change::Trap, When::Before))
                        }
                        Some(Operand::Reg(r)) if r.file == RegFile::PerLane => {
                            Some((Change::SubstituteUse { use_index: n, from: wrong(*r) }, When::Before))
                        }
                        _ => None,
                    },
                    OperandSel::Dst if ivra => lane_def.map(|_| (Change::Trap, When::Before)),
                    OperandSel::Dst => {
                        lane_def.map(|(d, r)| (Change::RedirectDef { def: d, to: wrong(r) }, When::After))
                    }
                }
            }
            ErrorModel::Iio if facts.immediate => lane_def.map(|(d, _)| (Change::XorDef { def: d, mask }, When::After)),
            ErrorModel::Ims if facts.memory_source => {
                lane_def.map(|(d, _)| (Change::XorDef { def: d, mask }, When::After))
            }
            ErrorModel::Imd => facts.shared_store.map(|(data, address)| {
                let use_index = if p.target == Some(StoreTarget::Address) { address } else { data };
                (Change::XorUse { use_index, mask }, When::Before)
            }),
            ErrorModel::Wv => {
                let n = u16::from(p.predicate?);
                ins.defs
                    .iter()
                    .position(|o| matches!(o, Operand::Reg(r) if r.file == RegFile::Predicate && r.first == n && r.count == 1))
                    .map(|d| d as u8)
                    .or(facts.lane_mask)
                    .map(|d| (Change::InvertPredicate { def: d }, When::After))
            }
            ErrorModel::Iat | ErrorModel::Iaw | ErrorModel::Iac => {
                let want = match self.fault.model {
                    ErrorModel::Iac => SpecialIndex::Block(p.dim?),
                    _ => SpecialIndex::Thread(p.dim?),
                };
                // an index read into a uniform register (one per warp) counts too
                let read = (facts.special == Some(want))
                    .then(|| first_def_in(ins, &[RegFile::PerLane, RegFile::Uniform]))
                    .flatten()
                    .map(|(d, _)| (Change::SpecialRead { def: d, mask }, When::After));
                read.or_else(|| {
                    let (reg, shift) = facts.index_inputs.get(want)?;
                    // bits the shift would push out of 64 are no bits of the register
                    let shifted = mask.checked_shl(u32::from(shift)).filter(|m| m >> shift == mask)?;
                    Some((Change::XorInput { reg, mask: shifted }, When::Before))
                })
            }
            ErrorModel::Ial => match p.lane_fault? {
                LaneFault::Ignore => unit_def().map(|(d, _)| (Change::DiscardDef { def: d }, When::After)),
                LaneFault::Force => {
                    (facts.unit.is_some() && facts.unit == p.unit && ins.guarded && facts.forceable_guard)
                        .then_some((Change::ForceGuard, When::Before))
                }
            },
            ErrorModel::Iio | ErrorModel::Ims => None,
        }?;
        check_injection(&change.0, change.1, ins).ok().map(|()| change)
    }

    /// The plan for `view`; `facts[i]` describes instruction `i`.
    pub fn plan(&self, view: &KernelView, facts: &[InjectFacts], sites: &mut SiteTable) -> InjectPlan {
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: ACTIVATIONS.into(), kind: CounterKind::ThreadExecutions });
        let mut targets = 0;
        for (i, ins) in view.instrs.iter().enumerate() {
            let Some(f) = facts.get(i) else { continue };
            let Some((change, when)) = self.change(ins, f) else { continue };
            targets += 1;
            let site = sites.intern(&view.name, ins.offset, ins.text.clone(), ins.location.clone());
            plan.probes.push(Probe {
                instr: i as u32,
                site,
                when,
                action: Action::Inject { change, threads: self.fault.location.clone(), activations: CounterId(0) },
            });
        }
        plan.normalize();
        InjectPlan { plan, targets }
    }
}

/// The first written per-lane register, with its position among the defs.
fn first_lane_def(ins: &InstrView) -> Option<(u8, RegRange)> {
    first_def_in(ins, &[RegFile::PerLane])
}

fn first_def_in(ins: &InstrView, files: &[RegFile]) -> Option<(u8, RegRange)> {
    ins.defs.iter().enumerate().find_map(|(d, o)| match o {
        Operand::Reg(r) if files.contains(&r.file) => Some((d as u8, *r)),
        _ => None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
