//! Probes: one action placed before or after one instruction.
//!
//! Today's actions are [`Action::CheckFp`] (the exception detector),
//! [`Action::Count`] (counters), [`Action::ReadExceptionFlags`] (the
//! screener: the hardware's sticky exception flags at a thread group's
//! end) and [`Action::Flow`] (the flow analysis of [`crate::flow`]: the
//! classes of an instruction's sources before it and of its result after
//! it). The IR is shaped so that the next tools are
//! new actions lowered by the same backends, not new architectures:
//! - *counters* beyond instruction counts (instruction mix per class,
//!   inactive lanes, divergence) are new [`CounterKind`]s behind the same
//!   `Count` action;
//! - *fault injection* is [`Action::Inject`]: change a destination, a
//!   source (restored after), a predicate, a special-register read or an
//!   index a thread group starts with, for the threads a [`FaultLocation`]
//!   selects (the error models of [`crate::fault`]), planned by
//!   [`crate::inject_tool`] and lowered by both backends.

use crate::class::FpFormat;
use crate::fault::FaultLocation;
use crate::fp::ExceptionKinds;
use crate::site::SiteId;
use crate::view::RegRange;
use serde::{Deserialize, Serialize};

/// Whether a probe runs before or after its instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum When {
    Before,
    After,
}

/// A value of the instrumented instruction, by operand position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueRef {
    /// The n-th operand the instruction writes.
    Def(u8),
    /// The n-th operand the instruction reads.
    Use(u8),
    /// A register that holds a value live at this point, not an operand
    /// of the instruction (a loop's result checked where the loop exits).
    Reg(crate::view::RegRange),
}

impl crate::operands::Unused for ValueRef {
    const UNUSED: ValueRef = ValueRef::Def(0);
}

/// The values one check reads (most check one or two).
pub type CheckedValues = crate::operands::InlineList<ValueRef, 2>;

/// Index of a counter in its plan's counter list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CounterId(pub u16);

/// What a counter counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CounterKind {
    /// Executions of the probed instructions, one per warp/wave.
    WarpExecutions,
    /// Executions of the probed instructions, one per active thread/lane.
    ThreadExecutions,
    /// Executions of the count region `first..end` (instruction indices):
    /// warps and their active lanes, counted once per region execution at
    /// the probe (see [`crate::count_tool`]). `branch`: the region's
    /// closing conditional branch, whose executions that split the warp
    /// are counted too.
    Region { first: u32, end: u32, branch: Option<u32> },
    /// Lanes whose guard held at the guarded instruction `instr`, counted
    /// by a probe before it.
    GuardHeld { instr: u32 },
}

/// A counter declared by a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CounterDef {
    pub name: String,
    pub kind: CounterKind,
}

/// What a probe does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// Check `values` (each of `format`) for the exception `kinds`, and
    /// record each (site, kind, format) found.
    CheckFp { values: CheckedValues, format: FpFormat, kinds: ExceptionKinds },
    /// Add to a counter.
    Count { counter: CounterId },
    /// Read the exception flags the hardware accumulated for the warp/wave
    /// (sticky status bits) and record, per kernel, each flag found set.
    /// Runs `before` an instruction that ends the warp/wave.
    ReadExceptionFlags,
    /// Corrupt one value of the instruction for the selected threads, and
    /// add the number of corrupted thread instances to `activations` (so a
    /// fault that never fires is known as such).
    Inject { change: Change, threads: FaultLocation, activations: CounterId },
    /// Classify, per lane, the instruction's `sources` as they are before
    /// it runs and its `result` as it is after, and record the flow
    /// categories the lane falls into ([`crate::flow`]). With a result the
    /// probe is `after` the instruction and the backend reads the sources
    /// before it (the instruction may overwrite one); without one (a
    /// comparison) the probe is `before` it. `format` is the result's,
    /// `source_format` the sources' (they differ for conversions).
    /// `division`: the instruction divides (an infinite result from a ±0
    /// source is division by zero).
    Flow { sources: Vec<ValueRef>, source_format: FpFormat, result: Option<ValueRef>, format: FpFormat, division: bool },
}

/// What an injection changes. A change of a destination is placed `after`
/// its instruction and one of a source, guard or special register
/// `before`; a backend adds the other half a change needs (the old
/// destination saved before, a source restored after).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// XOR the n-th written value with `mask` (IIO, IMS).
    XorDef { def: u8, mask: u64 },
    /// XOR the n-th read value with `mask` for this instruction only (IMD
    /// on a store's data or address); for a memory operand, the register
    /// that addresses it.
    XorUse { use_index: u8, mask: u64 },
    /// Read register `from` in place of the n-th source (IRA, IVRA).
    SubstituteUse { use_index: u8, from: RegRange },
    /// Write the n-th result into `to`; the destination keeps its old
    /// value (IRA, IVRA on the destination).
    RedirectDef { def: u8, to: RegRange },
    /// The destination keeps its old value: the result is dropped (IAL ignore).
    DiscardDef { def: u8 },
    /// The result of another valid operation of the same unit on the same
    /// sources; the backend documents which (IOC).
    OtherOperation { def: u8 },
    /// Invert the n-th written value, a predicate (WV).
    InvertPredicate { def: u8 },
    /// Execute where the guard predicate is off (IAL force).
    ForceGuard,
    /// XOR the index a special-register read returns (thread or block
    /// index: IAT, IAW, IAC), the read's n-th written value.
    SpecialRead { def: u8, mask: u64 },
    /// XOR an index the thread group receives in register `reg` when it
    /// starts (where no instruction reads it from a special register) with
    /// `mask`, for good: placed `before` the first instruction reading
    /// `reg`, where nothing has written it yet, and never restored, so that
    /// every later read sees the wrong index (IAT, IAW, IAC). A uniform
    /// register changes for the whole warp when any selected lane is active.
    XorInput { reg: RegRange, mask: u64 },
    /// Stop the thread as an invalid instruction would (IVOC).
    Trap,
}

/// One probe of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Probe {
    /// Index of the instruction in its [`crate::view::KernelView`].
    pub instr: u32,
    pub site: SiteId,
    pub when: When,
    pub action: Action,
}
