//! Flow analysis: how exceptional values (NaN, infinity, subnormals) move
//! through a kernel's floating-point instructions.
//!
//! For every executed floating-point instruction and every lane, the
//! classes of its sources (read before it runs) and of its result (read
//! after) make one *lane word* ([`lane`]); the word falls into
//! [`CATEGORIES`], each a (state, kind) of the instruction:
//! - **appear**: the result is exceptional of a kind no source has (a NaN
//!   from `0/0`; an infinity from an overflow or, at a division whose
//!   source is ±0, division by zero: kind `div0`; a subnormal from an
//!   underflow);
//! - **propagate**: the result has a kind a source has;
//! - **disappear**: a source is exceptional and the result is not (a max
//!   with 0, a select, a conversion to an integer-valued result);
//! - **compare**: an exceptional source reaches an instruction that writes
//!   no value but a predicate or lane mask (a comparison, a class test),
//!   so the exception decides control flow. A comparison's sources are
//!   its registers: a constant it holds (`|x| > +INF`, the compiler's test
//!   for infinity) is its threshold, not a value reaching it.
//!
//! These are GPU-FPX's analyzer states, per lane and per kind, with two
//! differences: sources are always read before the instruction (GPU-FPX
//! reads them after it, which loses a source the result overwrites), and
//! selects and min/max, whose results are values, are classified like
//! arithmetic (GPU-FPX calls any exceptional value there a comparison).
//!
//! Backends record, per (site, state, kind), the warp/wave executions in
//! which some lane fell into it, and the OR of those lanes' words (which
//! classes met there); [`stories`] turns the records of a kernel into one
//! sentence per kind a person can follow.

use crate::class::{FpFormat, FpOp, InstrClass};
use crate::fp::{classify_scalar, ExceptionKind, ValueClass};
use crate::plan::Plan;
use crate::probe::{Action, Probe, ValueRef, When};
use crate::site::SiteTable;
use crate::tool::Tool;
use crate::view::{KernelView, Operand, RegFile};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// How an instruction treated an exceptional value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowState {
    Appear,
    Propagate,
    Disappear,
    Compare,
}

impl FlowState {
    pub const ALL: [FlowState; 4] = [FlowState::Appear, FlowState::Propagate, FlowState::Disappear, FlowState::Compare];

    pub fn name(self) -> &'static str {
        match self {
            FlowState::Appear => "appear",
            FlowState::Propagate => "propagate",
            FlowState::Disappear => "disappear",
            FlowState::Compare => "compare",
        }
    }

    /// Stable code (device keys, table slots).
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<FlowState> {
        Self::ALL.get(c as usize).copied()
    }
}

/// Bits of a lane word: the classes of the sources (any of them), of the
/// result, and two facts of the instruction the lowering ORs into every
/// lane. Device code uses the same values (NVIDIA: `xfpx_layout.h`; AMD:
/// the rewriter's flow routine).
pub mod lane {
    pub const SRC_NAN: u16 = 1 << 0;
    pub const SRC_INF: u16 = 1 << 1;
    pub const SRC_SUB: u16 = 1 << 2;
    pub const SRC_ZERO: u16 = 1 << 3;
    pub const SRC_NORMAL: u16 = 1 << 4;
    pub const RES_NAN: u16 = 1 << 5;
    pub const RES_INF: u16 = 1 << 6;
    pub const RES_SUB: u16 = 1 << 7;
    pub const RES_ZERO: u16 = 1 << 8;
    pub const RES_NORMAL: u16 = 1 << 9;
    /// The instruction divides (an infinite result from a ±0 source is
    /// division by zero).
    pub const DIVISION: u16 = 1 << 10;
    /// The instruction writes no floating-point value (a comparison).
    pub const NO_RESULT: u16 = 1 << 11;
    /// An exceptional source or result: the lanes worth a look.
    pub const EXCEPTIONAL: u16 = SRC_NAN | SRC_INF | SRC_SUB | RES_NAN | RES_INF | RES_SUB;
    /// The classes of a word (what a record's `seen` keeps).
    pub const CLASSES: u16 = 0x3ff;
}

/// One (state, kind) and the lanes it holds for: `word & mask == want`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    pub state: FlowState,
    pub kind: ExceptionKind,
    pub mask: u16,
    pub want: u16,
}

const fn cat(state: FlowState, kind: ExceptionKind, mask: u16, want: u16) -> Category {
    Category { state, kind, mask, want }
}

use lane::*;
const RES_EXC: u16 = RES_NAN | RES_INF | RES_SUB;

/// Every category, in the order devices test them. Two entries share
/// (appear, inf): one for instructions that do not divide, one for lanes
/// of a division with no ±0 source (the [`lane::DIVISION`] bit is the same
/// in every lane of an execution, so at most one of them holds in it).
pub const CATEGORIES: [Category; 14] = [
    cat(FlowState::Appear, ExceptionKind::Nan, SRC_NAN | RES_NAN, RES_NAN),
    cat(FlowState::Appear, ExceptionKind::Inf, SRC_INF | RES_INF | DIVISION, RES_INF),
    cat(FlowState::Appear, ExceptionKind::Inf, SRC_INF | RES_INF | DIVISION | SRC_ZERO, RES_INF | DIVISION),
    cat(FlowState::Appear, ExceptionKind::Div0, SRC_INF | RES_INF | DIVISION | SRC_ZERO, RES_INF | DIVISION | SRC_ZERO),
    cat(FlowState::Appear, ExceptionKind::Sub, SRC_SUB | RES_SUB, RES_SUB),
    cat(FlowState::Propagate, ExceptionKind::Nan, SRC_NAN | RES_NAN, SRC_NAN | RES_NAN),
    cat(FlowState::Propagate, ExceptionKind::Inf, SRC_INF | RES_INF, SRC_INF | RES_INF),
    cat(FlowState::Propagate, ExceptionKind::Sub, SRC_SUB | RES_SUB, SRC_SUB | RES_SUB),
    cat(FlowState::Disappear, ExceptionKind::Nan, SRC_NAN | RES_EXC | NO_RESULT, SRC_NAN),
    cat(FlowState::Disappear, ExceptionKind::Inf, SRC_INF | RES_EXC | NO_RESULT, SRC_INF),
    cat(FlowState::Disappear, ExceptionKind::Sub, SRC_SUB | RES_EXC | NO_RESULT, SRC_SUB),
    cat(FlowState::Compare, ExceptionKind::Nan, SRC_NAN | NO_RESULT, SRC_NAN | NO_RESULT),
    cat(FlowState::Compare, ExceptionKind::Inf, SRC_INF | NO_RESULT, SRC_INF | NO_RESULT),
    cat(FlowState::Compare, ExceptionKind::Sub, SRC_SUB | NO_RESULT, SRC_SUB | NO_RESULT),
];

/// The distinct (state, kind) pairs of [`CATEGORIES`], in order: a site's
/// block of records (its slots) follows this order.
pub const PAIRS: [(FlowState, ExceptionKind); 13] = [
    (FlowState::Appear, ExceptionKind::Nan),
    (FlowState::Appear, ExceptionKind::Inf),
    (FlowState::Appear, ExceptionKind::Div0),
    (FlowState::Appear, ExceptionKind::Sub),
    (FlowState::Propagate, ExceptionKind::Nan),
    (FlowState::Propagate, ExceptionKind::Inf),
    (FlowState::Propagate, ExceptionKind::Sub),
    (FlowState::Disappear, ExceptionKind::Nan),
    (FlowState::Disappear, ExceptionKind::Inf),
    (FlowState::Disappear, ExceptionKind::Sub),
    (FlowState::Compare, ExceptionKind::Nan),
    (FlowState::Compare, ExceptionKind::Inf),
    (FlowState::Compare, ExceptionKind::Sub),
];

/// Index of (state, kind) in [`PAIRS`].
pub fn pair_index(state: FlowState, kind: ExceptionKind) -> Option<usize> {
    PAIRS.iter().position(|&p| p == (state, kind))
}

/// The bit of one source value's class.
fn source_bit(c: ValueClass) -> u16 {
    match c {
        ValueClass::Nan => SRC_NAN,
        ValueClass::Infinite => SRC_INF,
        ValueClass::Subnormal => SRC_SUB,
        ValueClass::Zero => SRC_ZERO,
        ValueClass::Normal => SRC_NORMAL,
    }
}

/// The lane word of one lane: `sources` are register values of
/// `source_format`, `result` one of `format` (one scalar each: f16 and
/// bf16 in the low half).
pub fn lane_word(
    source_format: FpFormat,
    sources: &[u64],
    format: FpFormat,
    result: Option<u64>,
    division: bool,
) -> u16 {
    let mut w = 0;
    for &s in sources {
        w |= source_bit(classify_scalar(source_format, s));
    }
    match result {
        Some(r) => w |= source_bit(classify_scalar(format, r)) << 5,
        None => w |= NO_RESULT,
    }
    if division {
        w |= DIVISION;
    }
    w
}

/// The categories a lane word falls into.
pub fn categories_of(word: u16) -> impl Iterator<Item = &'static Category> {
    CATEGORIES.iter().filter(move |c| word & c.mask == c.want)
}

/// A value class as records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowClass {
    Nan,
    Inf,
    Sub,
    Zero,
    Normal,
}

impl FlowClass {
    pub const ALL: [FlowClass; 5] =
        [FlowClass::Nan, FlowClass::Inf, FlowClass::Sub, FlowClass::Zero, FlowClass::Normal];

    pub fn name(self) -> &'static str {
        match self {
            FlowClass::Nan => "nan",
            FlowClass::Inf => "inf",
            FlowClass::Sub => "sub",
            FlowClass::Zero => "zero",
            FlowClass::Normal => "normal",
        }
    }
}

/// The source and result classes an OR of lane words holds.
pub fn classes_of(seen: u16) -> (Vec<FlowClass>, Vec<FlowClass>) {
    let pick = |shift: u16| -> Vec<FlowClass> {
        FlowClass::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| seen >> (shift + *i as u16) & 1 != 0)
            .map(|(_, c)| *c)
            .collect()
    };
    (pick(0), pick(5))
}

/// The lane-word classes of a record's class lists (the inverse of [`classes_of`]).
pub fn seen_of(sources: &[FlowClass], results: &[FlowClass]) -> u16 {
    let bit = |c: &FlowClass| 1u16 << FlowClass::ALL.iter().position(|x| x == c).unwrap_or(0);
    sources.iter().map(bit).fold(0, |a, b| a | b) | results.iter().map(bit).fold(0, |a, b| a | b) << 5
}

/// The flow tool: one [`Action::Flow`] probe per floating-point
/// instruction of one value per register (packed pairs and matrix
/// instructions are left out), reading its register sources of the
/// instruction's format and, for instructions that write a value, the
/// result.
#[derive(Debug, Clone, Default)]
pub struct FlowTool {
    /// Only instructions whose index in the kernel is in this range.
    pub instr_range: Option<Range<u32>>,
}

/// Sources one flow probe reads, at most (the NVIDIA call carries three).
pub const MAX_SOURCES: usize = 3;

/// The formats the flow tool analyses: one value per register.
pub fn analysed_format(format: FpFormat) -> bool {
    format.lanes() == 1
}

impl FlowTool {
    /// The flow probe of instruction `i`, if it has one.
    pub fn action(&self, view: &KernelView, i: usize) -> Option<(Action, When)> {
        let ins = &view.instrs[i];
        let format = ins.class.format()?;
        if !analysed_format(format) || matches!(ins.class, InstrClass::Matrix { .. }) {
            return None;
        }
        let value_file = |f: RegFile| matches!(f, RegFile::PerLane | RegFile::Uniform | RegFile::Accumulator);
        let result = if ins.class.produces_fp_value() {
            if ins.control.leaves() {
                return None;
            }
            let words = format.register_words();
            let d = ins.defs.iter().position(|d| d.reg().is_some_and(|r| value_file(r.file) && r.count == words))?;
            Some(ValueRef::Def(d as u8))
        } else {
            None
        };
        // sources of another format are read only where it is one value per register;
        // a comparison's constants are its thresholds (`|x| > +INF` tests for
        // infinity), not values that reach it: it reads registers only
        let source_format = ins.source_format().filter(|f| analysed_format(*f));
        let constants_are_sources = result.is_some();
        let sources: Vec<ValueRef> = match source_format {
            Some(sf) => ins
                .uses
                .iter()
                .enumerate()
                .filter(|(_, u)| match u {
                    Operand::Reg(r) => value_file(r.file) && r.count == sf.register_words(),
                    Operand::Known { .. } => constants_are_sources,
                    _ => false,
                })
                .map(|(n, _)| ValueRef::Use(n as u8))
                .take(MAX_SOURCES)
                .collect(),
            None => Vec::new(),
        };
        if sources.is_empty() && result.is_none() {
            return None;
        }
        let division = matches!(ins.class, InstrClass::Arith { op: FpOp::Div, .. });
        let when = if result.is_some() { When::After } else { When::Before };
        let source_format = source_format.unwrap_or(format);
        Some((Action::Flow { sources, source_format, result, format, division }, when))
    }
}

impl Tool for FlowTool {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        for i in 0..view.instrs.len() {
            if self.instr_range.as_ref().is_some_and(|r| !r.contains(&(i as u32))) {
                continue;
            }
            let Some((action, when)) = self.action(view, i) else { continue };
            let ins = &view.instrs[i];
            let site = sites.intern(&view.name, ins.offset, ins.text.clone(), ins.location.clone());
            plan.probes.push(Probe { instr: i as u32, site, when, action });
        }
        plan.normalize();
        plan
    }
}

#[path = "flow_story.rs"]
mod story;
pub use story::{stories, Story};

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
