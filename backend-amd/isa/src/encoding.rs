//! Instruction encodings of gfx9/CDNA: how a first dword selects its format,
//! where each field sits, and the opcode field of each format. These are the
//! only places that know bit positions.

use std::fmt;

/// An instruction encoding (microcode format). FLAT segments are separate
/// encodings because each has its own opcode map and syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop2,
    Vop1,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Scratch,
    Global,
    Mubuf,
    Mtbuf,
    Mimg,
    Exp,
    Vintrp,
}

impl Encoding {
    /// Name used in the instruction table (`VOP3P`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Sop2 => "SOP2",
            Encoding::Sopk => "SOPK",
            Encoding::Sop1 => "SOP1",
            Encoding::Sopc => "SOPC",
            Encoding::Sopp => "SOPP",
            Encoding::Smem => "SMEM",
            Encoding::Vop2 => "VOP2",
            Encoding::Vop1 => "VOP1",
            Encoding::Vopc => "VOPC",
            Encoding::Vop3 => "VOP3",
            Encoding::Vop3p => "VOP3P",
            Encoding::Ds => "DS",
            Encoding::Flat => "FLAT",
            Encoding::Scratch => "SCRATCH",
            Encoding::Global => "GLOBAL",
            Encoding::Mubuf => "MUBUF",
            Encoding::Mtbuf => "MTBUF",
            Encoding::Mimg => "MIMG",
            Encoding::Exp => "EXP",
            Encoding::Vintrp => "VINTRP",
        }
    }

    /// Size of the encoding itself, before any trailing literal or DPP/SDWA dword.
    pub fn base_length(self) -> usize {
        match self {
            Encoding::Sop2
            | Encoding::Sopk
            | Encoding::Sop1
            | Encoding::Sopc
            | Encoding::Sopp
            | Encoding::Vop2
            | Encoding::Vop1
            | Encoding::Vopc
            | Encoding::Vintrp => 4,
            _ => 8,
        }
    }

    /// Whether an operand code of 255 in a source field is followed by a 32-bit literal.
    pub fn takes_literal(self) -> bool {
        matches!(
            self,
            Encoding::Sop2 | Encoding::Sop1 | Encoding::Sopc | Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc
        )
    }

    /// Vector ALU encodings (execute per lane).
    pub fn is_valu(self) -> bool {
        matches!(self, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p)
    }

    pub fn is_scalar(self) -> bool {
        matches!(
            self,
            Encoding::Sop2 | Encoding::Sopk | Encoding::Sop1 | Encoding::Sopc | Encoding::Sopp | Encoding::Smem
        )
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a first dword is recognised: `(mask, value, encoding)`, checked in order
/// (the more specific prefixes first).
const IDENTIFY: &[(u32, u32, Encoding)] = &[
    (0xFF80_0000, 0xBF80_0000, Encoding::Sopp),
    (0xFF80_0000, 0xBF00_0000, Encoding::Sopc),
    (0xFF80_0000, 0xBE80_0000, Encoding::Sop1),
    (0xF000_0000, 0xB000_0000, Encoding::Sopk),
    (0xC000_0000, 0x8000_0000, Encoding::Sop2),
    (0xFE00_0000, 0x7E00_0000, Encoding::Vop1),
    (0xFE00_0000, 0x7C00_0000, Encoding::Vopc),
    (0x8000_0000, 0x0000_0000, Encoding::Vop2),
    (0xFF80_0000, 0xD380_0000, Encoding::Vop3p),
    (0xFC00_0000, 0xD000_0000, Encoding::Vop3),
    (0xFC00_0000, 0xC000_0000, Encoding::Smem),
    (0xFC00_0000, 0xC400_0000, Encoding::Exp),
    (0xFC00_0000, 0xD400_0000, Encoding::Vintrp),
    (0xFC00_0000, 0xD800_0000, Encoding::Ds),
    (0xFC00_C000, 0xDC00_0000, Encoding::Flat),
    (0xFC00_C000, 0xDC00_4000, Encoding::Scratch),
    (0xFC00_C000, 0xDC00_8000, Encoding::Global),
    (0xFC00_0000, 0xE000_0000, Encoding::Mubuf),
    (0xFC00_0000, 0xE800_0000, Encoding::Mtbuf),
    (0xFC00_0000, 0xF000_0000, Encoding::Mimg),
];

/// The encoding of a first dword, if it names one.
pub fn identify(word0: u32) -> Option<Encoding> {
    IDENTIFY.iter().find(|(mask, value, _)| word0 & mask == *value).map(|&(_, _, e)| e)
}

/// A named instruction field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Op,
    Sdst,
    Ssrc0,
    Ssrc1,
    Simm16,
    Sdata,
    Sbase,
    SmemImm,
    SmemGlc,
    SmemSoe,
    SmemOffset,
    SmemSoffset,
    Vdst,
    Src0,
    Src1,
    Src2,
    Vsrc1,
    Abs,
    OpSel,
    OpSelHi2,
    Clamp,
    Omod,
    Neg,
    OpSelHi,
    Offset0,
    Offset1,
    Gds,
    DsAcc,
    Addr,
    Data0,
    Data1,
    Data,
    Saddr,
    FlatOffset,
    FlatLds,
    Glc,
    Slc,
    Nv,
    FlatAcc,
    Vaddr,
    Vdata,
    Srsrc,
    Soffset,
    BufOffset,
    Offen,
    Idxen,
    BufLds,
    BufAcc,
    Dfmt,
    Nfmt,
    Dmask,
    Unorm,
    Da,
    R128,
    Tfe,
    Lwe,
    D16,
    Ssamp,
    MimgSlc,
    MimgAcc,
}

/// Field positions: `(encoding, field, dword, low bit, width)`. For FLAT the
/// three segments share one layout (listed under `Flat`).
const LAYOUT: &[(Encoding, Field, u8, u8, u8)] = &[
    (Encoding::Sop2, Field::Op, 0, 23, 7),
    (Encoding::Sop2, Field::Sdst, 0, 16, 7),
    (Encoding::Sop2, Field::Ssrc1, 0, 8, 8),
    (Encoding::Sop2, Field::Ssrc0, 0, 0, 8),
    (Encoding::Sopk, Field::Op, 0, 23, 5),
    (Encoding::Sopk, Field::Sdst, 0, 16, 7),
    (Encoding::Sopk, Field::Simm16, 0, 0, 16),
    (Encoding::Sop1, Field::Sdst, 0, 16, 7),
    (Encoding::Sop1, Field::Op, 0, 8, 8),
    (Encoding::Sop1, Field::Ssrc0, 0, 0, 8),
    (Encoding::Sopc, Field::Op, 0, 16, 7),
    (Encoding::Sopc, Field::Ssrc1, 0, 8, 8),
    (Encoding::Sopc, Field::Ssrc0, 0, 0, 8),
    (Encoding::Sopp, Field::Op, 0, 16, 7),
    (Encoding::Sopp, Field::Simm16, 0, 0, 16),
    (Encoding::Smem, Field::Op, 0, 18, 8),
    (Encoding::Smem, Field::SmemImm, 0, 17, 1),
    (Encoding::Smem, Field::SmemGlc, 0, 16, 1),
    (Encoding::Smem, Field::Nv, 0, 15, 1),
    (Encoding::Smem, Field::SmemSoe, 0, 14, 1),
    (Encoding::Smem, Field::Sdata, 0, 6, 7),
    (Encoding::Smem, Field::Sbase, 0, 0, 6),
    (Encoding::Smem, Field::SmemOffset, 1, 0, 21),
    (Encoding::Smem, Field::SmemSoffset, 1, 25, 7),
    (Encoding::Vop2, Field::Op, 0, 25, 6),
    (Encoding::Vop2, Field::Vdst, 0, 17, 8),
    (Encoding::Vop2, Field::Vsrc1, 0, 9, 8),
    (Encoding::Vop2, Field::Src0, 0, 0, 9),
    (Encoding::Vop1, Field::Vdst, 0, 17, 8),
    (Encoding::Vop1, Field::Op, 0, 9, 8),
    (Encoding::Vop1, Field::Src0, 0, 0, 9),
    (Encoding::Vopc, Field::Op, 0, 17, 8),
    (Encoding::Vopc, Field::Vsrc1, 0, 9, 8),
    (Encoding::Vopc, Field::Src0, 0, 0, 9),
    (Encoding::Vop3, Field::Op, 0, 16, 10),
    (Encoding::Vop3, Field::Clamp, 0, 15, 1),
    (Encoding::Vop3, Field::OpSel, 0, 11, 4),
    (Encoding::Vop3, Field::Abs, 0, 8, 3),
    (Encoding::Vop3, Field::Sdst, 0, 8, 7),
    (Encoding::Vop3, Field::Vdst, 0, 0, 8),
    (Encoding::Vop3, Field::Neg, 1, 29, 3),
    (Encoding::Vop3, Field::Omod, 1, 27, 2),
    (Encoding::Vop3, Field::Src2, 1, 18, 9),
    (Encoding::Vop3, Field::Src1, 1, 9, 9),
    (Encoding::Vop3, Field::Src0, 1, 0, 9),
    (Encoding::Vop3p, Field::Op, 0, 16, 7),
    (Encoding::Vop3p, Field::Clamp, 0, 15, 1),
    (Encoding::Vop3p, Field::OpSelHi2, 0, 14, 1),
    (Encoding::Vop3p, Field::OpSel, 0, 11, 3),
    (Encoding::Vop3p, Field::Abs, 0, 8, 3),
    (Encoding::Vop3p, Field::Vdst, 0, 0, 8),
    (Encoding::Vop3p, Field::Neg, 1, 29, 3),
    (Encoding::Vop3p, Field::OpSelHi, 1, 27, 2),
    (Encoding::Vop3p, Field::Src2, 1, 18, 9),
    (Encoding::Vop3p, Field::Src1, 1, 9, 9),
    (Encoding::Vop3p, Field::Src0, 1, 0, 9),
    (Encoding::Ds, Field::DsAcc, 0, 25, 1),
    (Encoding::Ds, Field::Op, 0, 17, 8),
    (Encoding::Ds, Field::Gds, 0, 16, 1),
    (Encoding::Ds, Field::Offset1, 0, 8, 8),
    (Encoding::Ds, Field::Offset0, 0, 0, 8),
    (Encoding::Ds, Field::Vdst, 1, 24, 8),
    (Encoding::Ds, Field::Data1, 1, 16, 8),
    (Encoding::Ds, Field::Data0, 1, 8, 8),
    (Encoding::Ds, Field::Addr, 1, 0, 8),
    (Encoding::Flat, Field::Op, 0, 18, 7),
    (Encoding::Flat, Field::Slc, 0, 17, 1),
    (Encoding::Flat, Field::Glc, 0, 16, 1),
    (Encoding::Flat, Field::FlatLds, 0, 13, 1),
    (Encoding::Flat, Field::FlatOffset, 0, 0, 13),
    (Encoding::Flat, Field::Vdst, 1, 24, 8),
    (Encoding::Flat, Field::FlatAcc, 1, 23, 1),
    (Encoding::Flat, Field::Saddr, 1, 16, 7),
    (Encoding::Flat, Field::Data, 1, 8, 8),
    (Encoding::Flat, Field::Addr, 1, 0, 8),
    (Encoding::Mubuf, Field::Op, 0, 18, 7),
    (Encoding::Mubuf, Field::Slc, 0, 17, 1),
    (Encoding::Mubuf, Field::BufLds, 0, 16, 1),
    (Encoding::Mubuf, Field::Glc, 0, 14, 1),
    (Encoding::Mubuf, Field::Idxen, 0, 13, 1),
    (Encoding::Mubuf, Field::Offen, 0, 12, 1),
    (Encoding::Mubuf, Field::BufOffset, 0, 0, 12),
    (Encoding::Mubuf, Field::Soffset, 1, 24, 8),
    (Encoding::Mubuf, Field::BufAcc, 1, 23, 1),
    (Encoding::Mubuf, Field::Srsrc, 1, 16, 5),
    (Encoding::Mubuf, Field::Vdata, 1, 8, 8),
    (Encoding::Mubuf, Field::Vaddr, 1, 0, 8),
    (Encoding::Mtbuf, Field::Nfmt, 0, 23, 3),
    (Encoding::Mtbuf, Field::Dfmt, 0, 19, 4),
    (Encoding::Mtbuf, Field::Op, 0, 15, 4),
    (Encoding::Mtbuf, Field::Glc, 0, 14, 1),
    (Encoding::Mtbuf, Field::Idxen, 0, 13, 1),
    (Encoding::Mtbuf, Field::Offen, 0, 12, 1),
    (Encoding::Mtbuf, Field::BufOffset, 0, 0, 12),
    (Encoding::Mtbuf, Field::Soffset, 1, 24, 8),
    (Encoding::Mtbuf, Field::BufAcc, 1, 23, 1),
    (Encoding::Mtbuf, Field::Slc, 1, 22, 1),
    (Encoding::Mtbuf, Field::Srsrc, 1, 16, 5),
    (Encoding::Mtbuf, Field::Vdata, 1, 8, 8),
    (Encoding::Mtbuf, Field::Vaddr, 1, 0, 8),
    (Encoding::Mimg, Field::MimgSlc, 0, 25, 1),
    (Encoding::Mimg, Field::Op, 0, 18, 7),
    (Encoding::Mimg, Field::Lwe, 0, 17, 1),
    (Encoding::Mimg, Field::Tfe, 0, 16, 1),
    (Encoding::Mimg, Field::R128, 0, 15, 1),
    (Encoding::Mimg, Field::Da, 0, 14, 1),
    (Encoding::Mimg, Field::Glc, 0, 13, 1),
    (Encoding::Mimg, Field::Unorm, 0, 12, 1),
    (Encoding::Mimg, Field::Dmask, 0, 8, 4),
    (Encoding::Mimg, Field::D16, 1, 31, 1),
    (Encoding::Mimg, Field::Ssamp, 1, 21, 5),
    (Encoding::Mimg, Field::Srsrc, 1, 16, 5),
    (Encoding::Mimg, Field::Vdata, 1, 8, 8),
    (Encoding::Mimg, Field::Vaddr, 1, 0, 8),
    (Encoding::Vintrp, Field::Vdst, 0, 18, 8),
    (Encoding::Vintrp, Field::Op, 0, 16, 2),
];

#[inline]
fn layout_encoding(e: Encoding) -> Encoding {
    match e {
        Encoding::Scratch | Encoding::Global => Encoding::Flat,
        other => other,
    }
}

/// Position of `field` in `encoding`: `(dword, low bit, width)`.
#[inline]
pub fn field_position(encoding: Encoding, field: Field) -> Option<(u8, u8, u8)> {
    // The first row of `LAYOUT` for each (encoding, field), indexed once.
    type Positions = (usize, Vec<Option<(u8, u8, u8)>>);
    static POSITIONS: std::sync::OnceLock<Positions> = std::sync::OnceLock::new();
    let (fields, at) = POSITIONS.get_or_init(|| {
        let fields = LAYOUT.iter().map(|r| r.1 as usize + 1).max().unwrap_or(0);
        let encodings = LAYOUT.iter().map(|r| r.0 as usize + 1).max().unwrap_or(0);
        let mut at = vec![None; fields * encodings];
        for r in LAYOUT {
            at[r.0 as usize * fields + r.1 as usize].get_or_insert((r.2, r.3, r.4));
        }
        (fields, at)
    });
    let e = layout_encoding(encoding) as usize;
    let f = field as usize;
    if f >= *fields {
        return None;
    }
    at.get(e * fields + f).copied().flatten()
}

/// Value of `field` in the dwords of an instruction of `encoding`; 0 when the
/// encoding has no such field or the dword is absent.
pub fn field(encoding: Encoding, field: Field, words: &[u32]) -> u32 {
    match field_position(encoding, field) {
        Some((dw, lo, width)) => {
            let w = words.get(dw as usize).copied().unwrap_or(0);
            let mask = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
            (w >> lo) & mask
        }
        None => 0,
    }
}

/// Opcode of a first dword in its encoding (0 for encodings without one).
pub fn opcode(encoding: Encoding, word0: u32) -> u16 {
    field(encoding, Field::Op, &[word0]) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies_formats_of_known_words() {
        assert_eq!(identify(0xBF81_0000), Some(Encoding::Sopp));
        assert_eq!(identify(0x7E02_0302), Some(Encoding::Vop1));
        assert_eq!(identify(0x040A_0501), Some(Encoding::Vop2));
        assert_eq!(identify(0xD3C2_0050), Some(Encoding::Vop3p));
        assert_eq!(identify(0xD1CB_0050), Some(Encoding::Vop3));
        assert_eq!(identify(0xDC50_8000), Some(Encoding::Global));
        assert_eq!(identify(0xFFFF_FFFF), None);
        assert_eq!(opcode(Encoding::Vop1, 0x7E02_0302), 1);
    }

    #[test]
    fn every_encoding_has_an_opcode_field_or_is_fixed() {
        for &(_, _, e) in IDENTIFY {
            if e != Encoding::Exp {
                assert!(field_position(e, Field::Op).is_some(), "{e}");
            }
        }
    }
}
