//! Probes: one action placed before or after one instruction.
//!
//! Today's actions are [`Action::CheckFp`] (the exception detector) and
//! [`Action::Count`] (counters). The IR is shaped so that the next tools are
//! new actions lowered by the same backends, not new architectures:
//! - the *analyzer* will add `Record { values, when }` to capture the values
//!   of sources before and of the destination after an instruction, from
//!   which flow states (an exception appears, propagates, disappears) follow;
//! - *counters* beyond instruction counts (instruction mix per class,
//!   inactive lanes, divergence) are new [`CounterKind`]s behind the same
//!   `Count` action;
//! - *fault injection* will add `Inject { target, model, threads }` to
//!   change a destination, a predicate or a source register for chosen
//!   threads (the permanent-fault models of prior work).

use crate::class::FpFormat;
use crate::fp::ExceptionKinds;
use crate::site::SiteId;
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
    CheckFp { values: Vec<ValueRef>, format: FpFormat, kinds: ExceptionKinds },
    /// Add to a counter.
    Count { counter: CounterId },
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
