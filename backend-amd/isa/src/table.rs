//! Types of the generated instruction table (`generated/gfx9.rs`, produced
//! from `tables/gfx9.tsv` by `tools/tablegen.rs`) and its lookup.

use crate::encoding::{Encoding, Field};
use crate::target::Target;
use xfpx_common::InstrClass;

/// How constants in an operand-code field print (their operand type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstType {
    /// 32-bit: float inline constants as floats, literals as 32-bit hex.
    B32,
    /// 64-bit: 1/(2*pi) with double precision.
    B64,
    /// 16-bit float: literals print their low 16 bits.
    F16,
    /// 16-bit integer: float inline constants print as half-precision bit patterns.
    I16,
}

/// How a 16-bit immediate prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImmStyle {
    /// Unsigned decimal.
    Udec,
    /// Decimal up to 64, hexadecimal above.
    Hex,
    /// `hwreg(id, offset, size)`.
    Hwreg,
    /// `sendmsg(...)`.
    Sendmsg,
    /// `vmcnt(..) expcnt(..) lgkmcnt(..)`.
    Waitcnt,
    /// `gpr_idx(SRC0,...)`.
    GprIdx,
}

/// What an operand slot of the template holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// An operand code (SGPR, special register, constant, literal or VGPR).
    Code(ConstType),
    /// A VGPR index.
    Vgpr,
    /// An AGPR index.
    Agpr,
    /// Fixed text such as `vcc` or `off`.
    Fixed(&'static str),
    /// A 16-bit immediate field.
    Imm(ImmStyle),
    /// The trailing constant of madmk/madak-style instructions (16 or 32 bits).
    Constant,
    /// SMEM offset operand (immediate or SGPR).
    SmemOffset,
    /// A field printed as a plain decimal number.
    Number,
    /// The oracle printed something this table does not model.
    Unknown,
}

/// One operand position of an instruction, as the oracle prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub field: Field,
    pub kind: SlotKind,
    /// Number of 32-bit registers (1 for scalars and fixed text).
    pub width: u8,
}

/// Flags learned per opcode: which optional variants and modifiers exist.
pub mod flags {
    pub const DPP: u16 = 1;
    pub const SDWA: u16 = 2;
    pub const ABS: u16 = 4;
    pub const NEG: u16 = 8;
    pub const CLAMP: u16 = 16;
    pub const OMOD: u16 = 32;
    pub const OPSEL: u16 = 64;
}

/// One row of the instruction table.
#[derive(Debug, Clone, Copy)]
pub struct OpcodeRow {
    pub encoding: Encoding,
    pub opcode: u16,
    /// Bit set of `Target::mask()` values.
    pub targets: u8,
    pub mnemonic: &'static str,
    pub operands: &'static [Slot],
    pub flags: u16,
    pub class: InstrClass,
}

/// The row describing `(encoding, opcode)` on `target`.
pub fn lookup(target: Target, encoding: Encoding, opcode: u16) -> Option<&'static OpcodeRow> {
    let rows = crate::generated::gfx9::OPCODES;
    let start = rows.partition_point(|r| (r.encoding, r.opcode) < (encoding, opcode));
    rows[start..]
        .iter()
        .take_while(|r| r.encoding == encoding && r.opcode == opcode)
        .find(|r| r.targets & target.mask() != 0)
}

/// All rows, sorted by encoding and opcode.
pub fn rows() -> &'static [OpcodeRow] {
    crate::generated::gfx9::OPCODES
}
