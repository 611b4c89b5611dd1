//! Probes: one action placed before or after one instruction.
//!
//! Today's actions are [`Action::CheckFp`] (the exception detector),
//! [`Action::Count`] (counters) and [`Action::ReadExceptionFlags`] (the
//! screener: the hardware's sticky exception flags at a thread group's end). The IR is shaped so that the next tools are
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
    /// Read the exception flags the hardware accumulated for the warp/wave
    /// (sticky status bits) and record, per kernel, each flag found set.
    /// Runs `before` an instruction that ends the warp/wave.
    ReadExceptionFlags,
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
