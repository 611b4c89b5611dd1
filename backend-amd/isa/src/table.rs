//! Types of the generated instruction table (`generated/gfx9.rs`, produced
//! from `tables/gfx9.tsv` by the `tablegen` crate) and its lookup.

use crate::encoding::{Encoding, Field};
use crate::opcode::Opcode;
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

/// How source modifiers print at an operand position (learned from the
/// oracle): `abs` as `|x|`, `neg` as `-x`/`neg(x)`, or the neg bit as `sext(x)`.
/// A modifier the position never prints is accepted and not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotMods {
    pub abs: bool,
    pub neg: bool,
    pub sext: bool,
}

impl SlotMods {
    pub const NONE: SlotMods = SlotMods { abs: false, neg: false, sext: false };
}

/// One operand position of an instruction, as the oracle prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub field: Field,
    pub kind: SlotKind,
    /// Number of 32-bit registers (1 for scalars and fixed text).
    pub width: u8,
    pub mods: SlotMods,
    /// Notes the reference prints after an operand of a class this slot does
    /// not accept: `(category, register class)` with category `c` (constant:
    /// "Invalid immediate"), `s` (scalar), `v` (VGPR) or `a` (AGPR).
    pub invalid: &'static [(char, &'static str)],
}

/// Flags learned per opcode from the oracle: which optional variants exist and
/// which groups of modifier bits the opcode accepts.
pub mod flags {
    pub const DPP: u128 = 1 << 0;
    pub const SDWA: u128 = 1 << 1;
    pub const ABS0: u128 = 1 << 2;
    pub const ABS1: u128 = 1 << 3;
    pub const ABS2: u128 = 1 << 4;
    pub const OPSEL0: u128 = 1 << 5;
    pub const OPSEL1: u128 = 1 << 6;
    pub const OPSEL2: u128 = 1 << 7;
    pub const OPSEL3: u128 = 1 << 8;
    pub const CLAMP: u128 = 1 << 9;
    pub const OMOD: u128 = 1 << 10;
    pub const NEG0: u128 = 1 << 11;
    pub const NEG1: u128 = 1 << 12;
    pub const NEG2: u128 = 1 << 13;
    pub const NEGHI: u128 = 1 << 14;
    pub const OPSEL: u128 = 1 << 15;
    pub const DPPMODS0: u128 = 1 << 16;
    pub const DPPMODS1: u128 = 1 << 17;
    pub const SDWANEG0: u128 = 1 << 18;
    pub const SDWANEG1: u128 = 1 << 19;
    pub const SDWASEXT0: u128 = 1 << 20;
    pub const SDWASEXT1: u128 = 1 << 21;
    pub const SDWASGPR: u128 = 1 << 22;
    pub const SDWACLAMP: u128 = 1 << 23;
    pub const SDWAOMOD: u128 = 1 << 24;
    pub const SDWASDST: u128 = 1 << 25;
    pub const IMM: u128 = 1 << 26;
    pub const GLC: u128 = 1 << 27;
    pub const SOE: u128 = 1 << 28;
    pub const SDWAUNUSED: u128 = 1 << 29;
    pub const SADDR: u128 = 1 << 30;
    pub const ACC: u128 = 1 << 31;
    pub const LDS: u128 = 1 << 32;
    pub const SC1: u128 = 1 << 33;
    pub const GDS: u128 = 1 << 34;
    pub const P_OPSEL: u128 = 1 << 35;
    pub const P_OPSELHI: u128 = 1 << 36;
    pub const P_NEGLO: u128 = 1 << 37;
    pub const P_NEGHI: u128 = 1 << 38;
    pub const P_CLAMP: u128 = 1 << 39;
    pub const P_OMOD: u128 = 1 << 40;
    pub const P_GDS: u128 = 1 << 41;
    pub const P_GLC: u128 = 1 << 42;
    pub const P_OFFSET: u128 = 1 << 43;
    pub const P_DSTSEL: u128 = 1 << 44;
    pub const P_ABS: u128 = 1 << 45;
    pub const P_NEG: u128 = 1 << 46;
    pub const XSRC1: u128 = 1 << 47;
    pub const XSRC2: u128 = 1 << 48;
    pub const P_OFFSET01: u128 = 1 << 49;
    pub const XADDR: u128 = 1 << 50;
    pub const XDATA0: u128 = 1 << 51;
    pub const XDATA1: u128 = 1 << 52;
    pub const XVDST: u128 = 1 << 53;
    pub const XIMM: u128 = 1 << 54;
    pub const P_SCC: u128 = 1 << 55;
    pub const P_OPSEL2: u128 = 1 << 56;
    pub const P_OPSEL3: u128 = 1 << 57;
    pub const P_OPSEL4: u128 = 1 << 58;
    pub const OPSELHI2: u128 = 1 << 59;
    pub const CGLC: u128 = 1 << 60;
    pub const P_MFMANEG: u128 = 1 << 61;
    pub const XIDXOFF: u128 = 1 << 62;
    pub const XVADDR: u128 = 1 << 63;
    pub const XVDATA: u128 = 1 << 64;
    pub const RLDS: u128 = 1 << 65;
    pub const P_DPPMODS: u128 = 1 << 66;
    pub const P_SDWAMODS: u128 = 1 << 67;
    pub const RGDS: u128 = 1 << 68;
    pub const P_DPPSEXT: u128 = 1 << 69;
    pub const D16: u128 = 1 << 70;
}

/// Which words a modifier group applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupScope {
    Any,
    Dpp,
    Sdwa,
}

/// A modifier group: `(flag, encodings, scope, dword, mask)`.
pub type ModifierGroup = (u128, &'static [Encoding], GroupScope, usize, u32);

/// Modifier groups: `(flag, encodings, scope, dword, mask)`. A word with bits
/// of a group set is valid only if its opcode has the group's flag. Mirrored by
/// `MODIFIER_GROUPS` in `tools/mktable.py`, which learns the flags.
pub const MODIFIER_GROUPS: &[ModifierGroup] = &[
    (flags::ABS0, &[Encoding::Vop3], GroupScope::Any, 0, 0x100),
    (flags::ABS1, &[Encoding::Vop3], GroupScope::Any, 0, 0x200),
    (flags::ABS2, &[Encoding::Vop3], GroupScope::Any, 0, 0x400),
    (flags::OPSEL0, &[Encoding::Vop3], GroupScope::Any, 0, 0x800),
    (flags::OPSEL1, &[Encoding::Vop3], GroupScope::Any, 0, 0x1000),
    (flags::OPSEL2, &[Encoding::Vop3], GroupScope::Any, 0, 0x2000),
    (flags::OPSEL3, &[Encoding::Vop3], GroupScope::Any, 0, 0x4000),
    (flags::CLAMP, &[Encoding::Vop3, Encoding::Vop3p], GroupScope::Any, 0, 0x8000),
    (flags::OMOD, &[Encoding::Vop3], GroupScope::Any, 1, 0x1800_0000),
    (flags::NEG0, &[Encoding::Vop3, Encoding::Vop3p], GroupScope::Any, 1, 0x2000_0000),
    (flags::NEG1, &[Encoding::Vop3, Encoding::Vop3p], GroupScope::Any, 1, 0x4000_0000),
    (flags::NEG2, &[Encoding::Vop3, Encoding::Vop3p], GroupScope::Any, 1, 0x8000_0000),
    (flags::NEGHI, &[Encoding::Vop3p], GroupScope::Any, 0, 0x700),
    (flags::OPSEL, &[Encoding::Vop3p], GroupScope::Any, 0, 0x3800),
    (flags::DPPMODS0, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Dpp, 1, 0x0030_0000),
    (flags::DPPMODS1, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Dpp, 1, 0x00C0_0000),
    (flags::SDWANEG0, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x0030_0000),
    (flags::SDWANEG1, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x3000_0000),
    (flags::SDWASEXT0, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x0008_0000),
    (flags::SDWASEXT1, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x0800_0000),
    (flags::SDWASGPR, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x8080_0000),
    (flags::SDWACLAMP, &[Encoding::Vop1, Encoding::Vop2, Encoding::Vopc], GroupScope::Sdwa, 1, 0x0000_2000),
    (flags::SDWAOMOD, &[Encoding::Vop1, Encoding::Vop2], GroupScope::Sdwa, 1, 0x0000_C000),
    (flags::SDWASDST, &[Encoding::Vopc], GroupScope::Sdwa, 1, 0x0000_8000),
    (flags::SDWAUNUSED, &[Encoding::Vop1, Encoding::Vop2], GroupScope::Sdwa, 1, 0x0000_1800),
    (flags::SADDR, &[Encoding::Flat], GroupScope::Any, 1, 0x007F_0000),
    (
        flags::ACC,
        &[Encoding::Flat, Encoding::Global, Encoding::Scratch, Encoding::Mubuf, Encoding::Mtbuf],
        GroupScope::Any,
        1,
        0x0080_0000,
    ),
    (flags::LDS, &[Encoding::Flat, Encoding::Global, Encoding::Scratch], GroupScope::Any, 0, 0x2000),
    (flags::SC1, &[Encoding::Flat, Encoding::Global, Encoding::Scratch], GroupScope::Any, 0, 0x0200_0000),
    (flags::LDS, &[Encoding::Mubuf], GroupScope::Any, 0, 0x1_0000),
    (flags::SC1, &[Encoding::Mubuf], GroupScope::Any, 0, 0x8000),
    (flags::GDS, &[Encoding::Ds], GroupScope::Any, 0, 0x1_0000),
    (flags::OPSELHI2, &[Encoding::Vop3p], GroupScope::Any, 0, 0x4000),
    (flags::CGLC, &[Encoding::Flat, Encoding::Global, Encoding::Scratch], GroupScope::Any, 0, 0x1_0000),
    (flags::CGLC, &[Encoding::Mubuf], GroupScope::Any, 0, 0x4000),
    (flags::ACC, &[Encoding::Ds], GroupScope::Any, 0, 0x0200_0000),
    (flags::IMM, &[Encoding::Smem], GroupScope::Any, 0, 0x2_0000),
    (flags::GLC, &[Encoding::Smem], GroupScope::Any, 0, 0x1_0000),
    (flags::SOE, &[Encoding::Smem], GroupScope::Any, 0, 0x4000),
    (flags::D16, &[Encoding::Mimg], GroupScope::Any, 1, 0x8000_0000),
];

/// One row of the instruction table.
#[derive(Debug, Clone, Copy)]
pub struct OpcodeRow {
    pub encoding: Encoding,
    pub opcode: u16,
    /// Bit set of `Target::mask()` values.
    pub targets: u8,
    /// The instruction's opcode (its mnemonic, typed).
    pub op: Opcode,
    pub operands: &'static [Slot],
    pub flags: u128,
    pub class: InstrClass,
}

/// Fields an opcode's template may leave out: `(encoding, template field,
/// field checked, flag)`. A nonzero value in the checked field is invalid when
/// the template lacks the template field, unless the opcode has the flag
/// (learned from the oracle). Mirrored by `UNUSED_FIELDS` in `tools/mktable.py`.
pub const UNUSED_FIELDS: &[(Encoding, Field, Field, u128)] = &[
    (Encoding::Mubuf, Field::Vaddr, Field::Offen, flags::XIDXOFF),
    (Encoding::Mubuf, Field::Vaddr, Field::Idxen, flags::XIDXOFF),
    (Encoding::Mubuf, Field::Vaddr, Field::Vaddr, flags::XVADDR),
    (Encoding::Mubuf, Field::Vdata, Field::Vdata, flags::XVDATA),
    (Encoding::Vop3, Field::Src1, Field::Src1, flags::XSRC1),
    (Encoding::Vop3p, Field::Src1, Field::Src1, flags::XSRC1),
    (Encoding::Vop3, Field::Src2, Field::Src2, flags::XSRC2),
    (Encoding::Vop3p, Field::Src2, Field::Src2, flags::XSRC2),
    (Encoding::Vop3p, Field::Vdst, Field::Vdst, flags::XVDST),
    (Encoding::Ds, Field::Addr, Field::Addr, flags::XADDR),
    (Encoding::Ds, Field::Data0, Field::Data0, flags::XDATA0),
    (Encoding::Ds, Field::Data1, Field::Data1, flags::XDATA1),
    (Encoding::Ds, Field::Vdst, Field::Vdst, flags::XVDST),
    (Encoding::Sopp, Field::Simm16, Field::Simm16, flags::XIMM),
];

impl OpcodeRow {
    /// The mnemonic as the table spells it.
    pub fn mnemonic(&self) -> &'static str {
        self.op.mnemonic()
    }
}

/// The row describing `(encoding, opcode)` on `target`.
pub fn lookup(target: Target, encoding: Encoding, opcode: u16) -> Option<&'static OpcodeRow> {
    position(target, encoding, opcode).map(|at| &rows()[at])
}

/// Where in [`rows`] the row describing `(encoding, opcode)` on `target` is.
pub fn position(target: Target, encoding: Encoding, opcode: u16) -> Option<usize> {
    let rows = rows();
    let (start, end) = spans().get(encoding as usize)?.get(opcode as usize).copied()?;
    (start as usize..end as usize).find(|&at| rows[at].targets & target.mask() != 0)
}

/// The rows of each encoding's opcodes, `[encoding][opcode]` as a range of
/// [`rows`] (empty where none), indexed once.
fn spans() -> &'static [Vec<(u32, u32)>] {
    static SPANS: std::sync::OnceLock<Vec<Vec<(u32, u32)>>> = std::sync::OnceLock::new();
    SPANS.get_or_init(|| {
        let mut spans: Vec<Vec<(u32, u32)>> = Vec::new();
        for (at, r) in rows().iter().enumerate() {
            let (e, op) = (r.encoding as usize, r.opcode as usize);
            if spans.len() <= e {
                spans.resize(e + 1, Vec::new());
            }
            if spans[e].len() <= op {
                spans[e].resize(op + 1, (0, 0));
            }
            let span = &mut spans[e][op];
            if span.0 == span.1 {
                *span = (at as u32, at as u32);
            }
            span.1 = at as u32 + 1;
        }
        spans
    })
}

/// All rows, sorted by encoding and opcode.
pub fn rows() -> &'static [OpcodeRow] {
    crate::generated::gfx9::OPCODES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_finds_the_row_a_search_of_the_table_finds() {
        for target in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            for r in rows() {
                let searched = rows()
                    .iter()
                    .position(|s| s.encoding == r.encoding && s.opcode == r.opcode && s.targets & target.mask() != 0);
                assert_eq!(position(target, r.encoding, r.opcode), searched, "{:?} {}", r.encoding, r.opcode);
            }
            assert_eq!(position(target, Encoding::Vop3, u16::MAX), None);
        }
    }
}
