//! A vendor-neutral view of one kernel's instructions.
//!
//! A backend decodes its ISA (SASS, AMDGPU) and describes each instruction
//! here: its class, the registers it defines and uses, whether it is
//! guarded by a predicate, and how it affects control flow. Tools read only
//! this view, never the ISA.

use crate::class::InstrClass;
use crate::site::SourceLoc;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Register files, named by what they hold rather than by vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegFile {
    /// One value per thread/lane (NVIDIA `R`, AMD `v`).
    PerLane,
    /// One value per warp/wave (NVIDIA `UR`, AMD `s`).
    Uniform,
    /// Matrix accumulators held apart from the per-lane file (AMD `a`).
    Accumulator,
    /// Per-lane predicates (NVIDIA `P`).
    Predicate,
    /// Per-lane stack memory in 4-byte words from the stack pointer a
    /// function keeps (spill slots): named only by the analyses that follow
    /// a value through a store and the load that reads it back.
    Stack,
}

/// A contiguous range of registers, e.g. a 64-bit pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RegRange {
    pub file: RegFile,
    pub first: u16,
    pub count: u8,
}

impl RegRange {
    pub fn new(file: RegFile, first: u16, count: u8) -> RegRange {
        RegRange { file, first, count }
    }

    /// Every register of `other` is one of this range's.
    pub fn contains(&self, other: &RegRange) -> bool {
        self.file == other.file
            && self.first <= other.first
            && other.first as u32 + other.count as u32 <= self.first as u32 + self.count as u32
    }

    pub fn overlaps(&self, other: &RegRange) -> bool {
        self.file == other.file
            && (self.first as u32) < other.first as u32 + other.count as u32
            && (other.first as u32) < self.first as u32 + self.count as u32
    }
}

/// One operand of an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Operand {
    /// A register range.
    Reg(RegRange),
    /// A value known when the code is instrumented (an immediate, or a
    /// constant the backend can read), as raw bits.
    Known { bits: u64 },
    /// A value that lives in memory the tool cannot read at instrumentation
    /// time (e.g. a constant bank), with its textual form.
    Memory { text: String },
    /// Anything else (labels, modifiers, special registers).
    Other { text: String },
}

impl Operand {
    pub fn reg(&self) -> Option<RegRange> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }
}

/// How an instruction affects control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// Falls through to the next instruction.
    #[default]
    None,
    /// Always jumps.
    Branch,
    /// May jump or fall through.
    CondBranch,
    /// Calls a subroutine and returns after it.
    Call,
    /// Returns from a subroutine.
    Return,
    /// Ends the thread/wave.
    Exit,
    /// Waits for the other threads of a group.
    Barrier,
}

impl Control {
    /// True when the next instruction in program order may not run after
    /// this one (so an `After` probe cannot be placed here).
    pub fn leaves(self) -> bool {
        matches!(self, Control::Branch | Control::Return | Control::Exit)
    }

    /// True when this instruction ends a basic block.
    pub fn ends_block(self) -> bool {
        !matches!(self, Control::None | Control::Barrier)
    }
}

/// How an instruction moves floating-point values from its register
/// sources to its destination, as far as NaN and infinity are concerned.
/// The backend says so from its ISA tables; tools use it to know when an
/// exceptional value is certain to reach a later instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(tag = "flow", content = "source", rename_all = "snake_case")]
pub enum ValueFlow {
    /// Nothing is promised (integer work, comparisons, min/max, clamping,
    /// transcendentals, lane selections).
    #[default]
    Opaque,
    /// A NaN or infinity in any register source makes the first written
    /// value NaN or infinite (add, multiply, fused multiply-add, matrix
    /// multiply-accumulate, format conversions; never with saturation).
    Propagates,
    /// The first written register is a copy of the register source with
    /// this index among the uses.
    Copies(u8),
}

/// The format of the floating-point values an instruction reads, where
/// its class does not say it: a conversion reads another format than it
/// writes (`f64` for an f64 → f32 conversion), or integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(tag = "reads", content = "format", rename_all = "snake_case")]
pub enum SourceFormat {
    /// The class's format (or the instruction reads no floating-point value).
    #[default]
    OfClass,
    /// This format.
    Is(crate::class::FpFormat),
    /// Integers (a conversion from an integer).
    NotFloat,
}

/// The operands an instruction writes (most write one or two).
pub type Defs = crate::operands::Operands<2>;
/// The operands an instruction reads (most read up to three).
pub type Uses = crate::operands::Operands<3>;

/// One instruction, as tools see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstrView {
    /// Byte offset from the start of the kernel.
    pub offset: u64,
    /// Disassembly text, for humans (shared with the sites made from it).
    pub text: Arc<str>,
    pub class: InstrClass,
    /// Operands written, in ISA order.
    pub defs: Defs,
    /// Operands read, in ISA order.
    pub uses: Uses,
    /// Executes only where a guard predicate holds.
    pub guarded: bool,
    pub control: Control,
    /// How NaN and infinity travel from sources to the result.
    #[serde(default)]
    pub flow: ValueFlow,
    /// The format of the values it reads, where the class does not say.
    #[serde(default)]
    pub source_format: SourceFormat,
    pub location: Option<SourceLoc>,
}

impl InstrView {
    /// A plain instruction with no operands, for building views in tests.
    pub fn new(offset: u64, text: impl Into<Arc<str>>, class: InstrClass) -> InstrView {
        InstrView {
            offset,
            text: text.into(),
            class,
            defs: Defs::new(),
            uses: Uses::new(),
            guarded: false,
            control: Control::None,
            flow: ValueFlow::Opaque,
            source_format: SourceFormat::OfClass,
            location: None,
        }
    }

    /// The format of the floating-point values it reads (None: integers,
    /// or no floating-point class).
    pub fn source_format(&self) -> Option<crate::class::FpFormat> {
        match self.source_format {
            SourceFormat::OfClass => self.class.format(),
            SourceFormat::Is(f) => Some(f),
            SourceFormat::NotFloat => None,
        }
    }

    /// Whether the instruction writes any part of `r`.
    pub fn writes(&self, r: &RegRange) -> bool {
        self.defs.iter().filter_map(Operand::reg).any(|d| d.overlaps(r))
    }
}

/// The instructions of one kernel in program order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelView {
    pub name: String,
    pub instrs: Vec<InstrView>,
}

impl KernelView {
    /// Indices of the first instruction of each basic block: the entry,
    /// every instruction after one that ends a block, and every branch
    /// target the backend reported in `targets` (instruction indices).
    pub fn block_starts(&self, targets: &[usize]) -> Vec<usize> {
        let mut starts = vec![false; self.instrs.len()];
        if let Some(first) = starts.first_mut() {
            *first = true;
        }
        for (i, ins) in self.instrs.iter().enumerate() {
            if ins.control.ends_block() && i + 1 < starts.len() {
                starts[i + 1] = true;
            }
        }
        for &t in targets {
            if t < starts.len() {
                starts[t] = true;
            }
        }
        starts.iter().enumerate().filter(|(_, s)| **s).map(|(i, _)| i).collect()
    }
}
