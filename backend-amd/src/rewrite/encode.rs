//! Encoding of the few instructions the rewriter emits, named by their typed
//! [`Opcode`], each into a [`Words`] (no allocation). Opcode numbers come from the decoder's instruction table
//! (looked up by opcode, encoding and target), field
//! positions from the decoder's encoding layout, and operand codes from the
//! decoder's operand space: this module holds no instruction fact of its own.
//! Every emitted instruction is decoded back by the tests and compared with
//! the assembler's output for the snippets in `asm-snippets/amd/`.

use std::sync::OnceLock;

use xfpx_amd_isa::encoding::{field_position, identify, Encoding, Field};
use xfpx_amd_isa::operand::{Operand, SpecialReg, LITERAL_CODE};
use xfpx_amd_isa::table::{self, ConstType};
use xfpx_amd_isa::{Opcode, Target};

use super::RewriteError;

/// A source or destination operand of an emitted instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// `s<n>` (or the first of a pair/tuple).
    Sgpr(u16),
    /// `v<n>`.
    Vgpr(u16),
    /// `a<n>` (only as an `accvgpr` source).
    Agpr(u16),
    /// A special register (`vcc`, `exec`, `m0`), low half for 64-bit operands.
    Special(SpecialReg),
    /// An integer inline constant (-16..=64).
    Int(i8),
    /// A 32-bit literal dword (an inline constant where the value fits one).
    Literal(u32),
    /// A 32-bit literal dword even where the value fits an inline constant
    /// (a value written again after encoding).
    FixedLiteral(u32),
}

/// The operand code of a special register, found in the decoder's code space
/// (the lowest code naming it).
fn special_code(reg: SpecialReg) -> Option<u16> {
    // By register: the first code that names it.
    static CODES: OnceLock<Vec<Option<u16>>> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        let mut m: Vec<Option<u16>> = Vec::new();
        for code in 0u16..512 {
            if let Operand::Special { reg, half: 0, .. } = Operand::from_code(code, 1, ConstType::B32, None) {
                if m.len() <= reg as usize {
                    m.resize(reg as usize + 1, None);
                }
                m[reg as usize].get_or_insert(code);
            }
        }
        m
    });
    codes.get(reg as usize).copied().flatten()
}

/// The operand code of an integer inline constant, found in the decoder's code space.
fn int_code(value: i8) -> Option<u16> {
    // By value + 16 (-16..=64): the first code that names it.
    static CODES: OnceLock<[Option<u16>; 81]> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        let mut m = [None; 81];
        for c in 128u16..=208 {
            if let Operand::InlineInt(v) = Operand::from_code(c, 1, ConstType::B32, None) {
                if let Some(slot) = usize::try_from(i16::from(v) + 16).ok().and_then(|i| m.get_mut(i)) {
                    slot.get_or_insert(c);
                }
            }
        }
        m
    });
    usize::try_from(i16::from(value) + 16).ok().and_then(|i| codes.get(i).copied().flatten())
}

/// The dwords of one encoded instruction (at most four), held inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Words {
    words: [u32; 4],
    len: u8,
}

impl Words {
    /// `len` zero dwords (at most four).
    fn zeros(len: usize) -> Words {
        Words { words: [0; 4], len: len.min(4) as u8 }
    }

    /// Appends a dword (a literal); an instruction has at most four.
    pub fn push(&mut self, w: u32) {
        if let Some(slot) = self.words.get_mut(self.len as usize) {
            *slot = w;
            self.len += 1;
        }
    }
}

impl std::ops::Deref for Words {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.words[..self.len as usize]
    }
}

impl std::ops::DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u32] {
        &mut self.words[..self.len as usize]
    }
}

impl Extend<u32> for Words {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for w in iter {
            self.push(w);
        }
    }
}

impl IntoIterator for Words {
    type Item = u32;
    type IntoIter = std::iter::Take<std::array::IntoIter<u32, 4>>;
    fn into_iter(self) -> Self::IntoIter {
        self.words.into_iter().take(self.len as usize)
    }
}

impl AsRef<[u32]> for Words {
    fn as_ref(&self) -> &[u32] {
        self
    }
}

impl Src {
    /// 9-bit source code (VGPRs at 256..) and the literal dword it needs, if any.
    #[inline]
    fn code(self) -> Result<(u16, Option<u32>), RewriteError> {
        let code = match self {
            Src::Sgpr(n) if n < 102 => Some(n),
            Src::Vgpr(n) if n < 256 => Some(256 + n),
            Src::Special(r) => special_code(r),
            Src::Int(v) => int_code(v),
            // Small values need no literal dword.
            Src::Literal(v) if v <= 64 => int_code(v as i8),
            Src::Literal(v) | Src::FixedLiteral(v) => return Ok((LITERAL_CODE, Some(v))),
            _ => None,
        };
        code.map(|c| (c, None)).ok_or_else(|| self.no_code())
    }

    #[cold]
    fn no_code(self) -> RewriteError {
        RewriteError::Encode(format!("operand {self:?} has no source code"))
    }

    /// 8-bit scalar code (no VGPRs).
    #[inline]
    fn scalar(self) -> Result<(u32, Option<u32>), RewriteError> {
        match self {
            Src::Vgpr(_) | Src::Agpr(_) => Err(RewriteError::Encode(format!("{self:?} is not a scalar operand"))),
            s => s.code().map(|(c, l)| (u32::from(c), l)),
        }
    }
}

/// The fixed prefix bits of an encoding: the smallest first dword the
/// decoder identifies as that encoding (all fields zero).
fn prefix(enc: Encoding) -> Result<u32, RewriteError> {
    // By encoding: the first word that identifies as it.
    static PREFIXES: OnceLock<Vec<Option<u32>>> = OnceLock::new();
    let p = PREFIXES.get_or_init(|| {
        let mut m = Vec::new();
        for hi in 0u32..512 {
            for seg in 0u32..4 {
                let w = (hi << 23) | (seg << 14);
                if let Some(e) = identify(w) {
                    if m.len() <= e as usize {
                        m.resize(e as usize + 1, None);
                    }
                    m[e as usize].get_or_insert(w);
                }
            }
        }
        m
    });
    p.get(enc as usize).copied().flatten().ok_or_else(|| RewriteError::Encode(format!("no prefix for {enc}")))
}

/// One row of the decoder's table for an opcode: its encoding, targets,
/// opcode number, and its dwords with every field but the opcode zero
/// (None where the encoding has no prefix or opcode field to place it in).
type OpcodeRow = (Encoding, u8, u16, Option<Words>);

/// The first row of `op` in `enc` on `target`, in table order (indexed once).
#[inline]
fn opcode_row(target: Target, enc: Encoding, op: Opcode) -> Option<&'static OpcodeRow> {
    static INDEX: OnceLock<Vec<Vec<OpcodeRow>>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m: Vec<Vec<OpcodeRow>> = Vec::new();
        for r in table::rows() {
            if m.len() <= r.op as usize {
                m.resize(r.op as usize + 1, Vec::new());
            }
            let words = prefix(r.encoding).ok().and_then(|first| {
                let mut words = Words::zeros(r.encoding.base_length() / 4);
                words[0] = first;
                put(&mut words, r.encoding, Field::Op, u32::from(r.opcode)).ok().map(|()| words)
            });
            m[r.op as usize].push((r.encoding, r.targets, r.opcode, words));
        }
        m
    });
    index.get(op as usize)?.iter().find(|(e, t, _, _)| *e == enc && t & target.mask() != 0)
}

/// The opcode number of `op` in `enc` on `target`, from the decoder's table;
/// an error only where `op` is not of that encoding or not on that target.
pub fn opcode(target: Target, enc: Encoding, op: Opcode) -> Result<u16, RewriteError> {
    opcode_row(target, enc, op)
        .map(|&(_, _, number, _)| number)
        .ok_or_else(|| RewriteError::Encode(format!("{op} ({enc}) is not an instruction of {target}")))
}

#[inline]
fn put(words: &mut [u32], enc: Encoding, f: Field, value: u32) -> Result<(), RewriteError> {
    if let Some((dw, lo, width)) = field_position(enc, f) {
        if let Some(w) = words.get_mut(dw as usize).filter(|_| fits(value, width)) {
            *w |= value << lo;
            return Ok(());
        }
    }
    Err(put_error(enc, f, value))
}

/// Whether `value` fits a field `width` bits wide.
#[inline]
fn fits(value: u32, width: u8) -> bool {
    width >= 32 || value >> width == 0
}

/// Why [`put`] could not place `value` in field `f` of `enc`.
#[cold]
#[inline(never)]
fn put_error(enc: Encoding, f: Field, value: u32) -> RewriteError {
    RewriteError::Encode(match field_position(enc, f) {
        None => format!("{enc} has no field {f:?}"),
        Some((_, _, width)) if !fits(value, width) => format!("{value:#x} does not fit field {f:?} of {enc}"),
        Some(_) => format!("{enc} field {f:?} out of range"),
    })
}

/// An encoder for one target: each method returns the instruction's dwords.
#[derive(Debug, Clone, Copy)]
pub struct Encoder {
    pub target: Target,
}

impl Encoder {
    #[inline]
    fn base(&self, enc: Encoding, op: Opcode, fields: &[(Field, u32)]) -> Result<Words, RewriteError> {
        // (a row without words: its error is found again below)
        let mut words = match opcode_row(self.target, enc, op).and_then(|r| r.3) {
            Some(w) => w,
            None => return Err(self.no_base(enc, op)),
        };
        for &(f, v) in fields {
            put(&mut words, enc, f, v)?;
        }
        Ok(words)
    }

    /// Why [`Self::base`] found no dwords for `op` in `enc` (a row always
    /// has them where the encoding has a prefix and an opcode field).
    #[cold]
    #[inline(never)]
    fn no_base(&self, enc: Encoding, op: Opcode) -> RewriteError {
        let mut words = Words::zeros(enc.base_length() / 4);
        let made = prefix(enc)
            .map(|p| words[0] = p)
            .and_then(|()| opcode(self.target, enc, op))
            .and_then(|n| put(&mut words, enc, Field::Op, u32::from(n)));
        made.err().unwrap_or_else(|| RewriteError::Encode(format!("{op} ({enc}) has no dwords")))
    }

    /// SOPP with a 16-bit immediate (`s_nop`, `s_branch`, `s_waitcnt`, ...).
    pub fn sopp(&self, op: Opcode, simm16: u16) -> Result<Words, RewriteError> {
        self.base(Encoding::Sopp, op, &[(Field::Simm16, u32::from(simm16))])
    }

    /// SOP1 `sdst = op(ssrc0)`; `sdst` None for `s_setpc_b64`.
    pub fn sop1(&self, op: Opcode, sdst: Option<Src>, ssrc0: Option<Src>) -> Result<Words, RewriteError> {
        let sdst = sdst.map(Src::scalar).transpose()?;
        let ssrc0 = ssrc0.map(Src::scalar).transpose()?;
        let mut w = self.base(Encoding::Sop1, op, &[])?;
        if let Some((d, _)) = sdst {
            put(&mut w, Encoding::Sop1, Field::Sdst, d)?;
        }
        if let Some((c, l)) = ssrc0 {
            put(&mut w, Encoding::Sop1, Field::Ssrc0, c)?;
            w.extend(l);
        }
        Ok(w)
    }

    /// SOP2 `sdst = op(ssrc0, ssrc1)`.
    pub fn sop2(&self, op: Opcode, sdst: Src, a: Src, b: Src) -> Result<Words, RewriteError> {
        let (ca, la) = a.scalar()?;
        let (cb, lb) = b.scalar()?;
        if la.is_some() && lb.is_some() {
            return Err(RewriteError::Encode("two literals in one SOP2".into()));
        }
        let mut w =
            self.base(Encoding::Sop2, op, &[(Field::Sdst, sdst.scalar()?.0), (Field::Ssrc0, ca), (Field::Ssrc1, cb)])?;
        w.extend(la.or(lb));
        Ok(w)
    }

    /// SOPC comparison setting SCC.
    pub fn sopc(&self, op: Opcode, a: Src, b: Src) -> Result<Words, RewriteError> {
        let (ca, la) = a.scalar()?;
        let (cb, lb) = b.scalar()?;
        let mut w = self.base(Encoding::Sopc, op, &[(Field::Ssrc0, ca), (Field::Ssrc1, cb)])?;
        w.extend(la.or(lb));
        Ok(w)
    }

    /// SOPK with a register and a 16-bit immediate (`s_movk_i32`, `s_getreg_b32`, `s_setreg_b32`).
    pub fn sopk(&self, op: Opcode, sdst: Src, simm16: u16) -> Result<Words, RewriteError> {
        self.base(Encoding::Sopk, op, &[(Field::Sdst, sdst.scalar()?.0), (Field::Simm16, u32::from(simm16))])
    }

    /// VOP1 `vdst = op(src0)` (`v_mov_b32_e32`).
    pub fn vop1(&self, op: Opcode, vdst: u16, src0: Src) -> Result<Words, RewriteError> {
        let (c, l) = src0.code()?;
        let mut w = self.base(Encoding::Vop1, op, &[(Field::Vdst, u32::from(vdst)), (Field::Src0, u32::from(c))])?;
        w.extend(l);
        Ok(w)
    }

    /// VOP2 `vdst = op(src0, vsrc1)`.
    pub fn vop2(&self, op: Opcode, vdst: u16, src0: Src, vsrc1: u16) -> Result<Words, RewriteError> {
        let (c, l) = src0.code()?;
        let mut w = self.base(
            Encoding::Vop2,
            op,
            &[(Field::Vdst, u32::from(vdst)), (Field::Src0, u32::from(c)), (Field::Vsrc1, u32::from(vsrc1))],
        )?;
        w.extend(l);
        Ok(w)
    }

    /// VOP3 comparison writing an SGPR pair (`v_cmp_class_f32_e64 s[n:n+1], src0, src1`).
    pub fn vop3_cmp(&self, op: Opcode, sdst: u16, src0: Src, src1: Src) -> Result<Words, RewriteError> {
        let (c0, l0) = src0.code()?;
        let (c1, l1) = src1.code()?;
        if l0.is_some() || l1.is_some() {
            return Err(RewriteError::Encode("VOP3 takes no literal on gfx9".into()));
        }
        self.base(
            Encoding::Vop3,
            op,
            &[(Field::Vdst, u32::from(sdst)), (Field::Src0, u32::from(c0)), (Field::Src1, u32::from(c1))],
        )
    }

    /// `v_writelane_b32 vdst, src, lane` (an SGPR into one lane of a VGPR)
    /// or `v_readlane_b32 sdst, src, lane` (one lane of a VGPR into an
    /// SGPR): VOP3, the lane an inline constant; both ignore EXEC.
    pub fn lane_move(&self, op: Opcode, dst: u16, src: Src, lane: u8) -> Result<Words, RewriteError> {
        if lane > 63 || !matches!(op, Opcode::V_WRITELANE_B32 | Opcode::V_READLANE_B32) {
            return Err(RewriteError::Encode(format!("no lane move {op:?} of lane {lane}")));
        }
        self.vop3_cmp(op, dst, src, Src::Int(lane as i8))
    }

    /// VOP3 `vdst = op(src0, src1, src2)` without modifiers
    /// (`v_cndmask_b32_e64 v1, 0, 4, s[8:9]`).
    pub fn vop3(&self, op: Opcode, vdst: u16, src0: Src, src1: Src, src2: Src) -> Result<Words, RewriteError> {
        let (c0, l0) = src0.code()?;
        let (c1, l1) = src1.code()?;
        let (c2, l2) = src2.code()?;
        if l0.is_some() || l1.is_some() || l2.is_some() {
            return Err(RewriteError::Encode("VOP3 takes no literal on gfx9".into()));
        }
        self.base(
            Encoding::Vop3,
            op,
            &[
                (Field::Vdst, u32::from(vdst)),
                (Field::Src0, u32::from(c0)),
                (Field::Src1, u32::from(c1)),
                (Field::Src2, u32::from(c2)),
            ],
        )
    }

    /// `v_accvgpr_read_b32 vdst, a<n>` (VOP3P).
    /// The unused `op_sel_hi` bits are set as LLVM's assembler sets them
    /// (all three on gfx908, the two of dword 1 on gfx90a+); the snippet
    /// test holds this to llvm-mc's output.
    pub fn accvgpr_read(&self, vdst: u16, agpr: u16) -> Result<Words, RewriteError> {
        let op_sel_hi2 = u32::from(!self.target.is_gfx90a_plus());
        self.base(
            Encoding::Vop3p,
            Opcode::V_ACCVGPR_READ_B32,
            &[
                (Field::Vdst, u32::from(vdst)),
                (Field::Src0, 256 + u32::from(agpr)),
                (Field::OpSelHi, 3),
                (Field::OpSelHi2, op_sel_hi2),
            ],
        )
    }

    /// `v_accvgpr_write_b32 a<n>, vsrc` (VOP3P), with the unused
    /// `op_sel_hi` bits as llvm-mc 19 sets them on every target.
    pub fn accvgpr_write(&self, agpr: u16, vsrc: u16) -> Result<Words, RewriteError> {
        self.base(
            Encoding::Vop3p,
            Opcode::V_ACCVGPR_WRITE_B32,
            &[
                (Field::Vdst, u32::from(agpr)),
                (Field::Src0, 256 + u32::from(vsrc)),
                (Field::OpSelHi, 3),
                (Field::OpSelHi2, 1),
            ],
        )
    }

    /// `insn` again with opcode `op` (of the same encoding) and its
    /// destination field `dst_field` set to `dst`; every other bit (sources,
    /// modifiers, literal) as it was.
    pub fn reencode(
        &self,
        insn: &xfpx_amd_isa::Instruction,
        op: Opcode,
        dst_field: Field,
        dst: u32,
    ) -> Result<Words, RewriteError> {
        let enc = insn.encoding;
        let mut words = Words::zeros(0);
        words.extend(insn.dwords().iter().copied());
        for (f, v) in [(Field::Op, u32::from(opcode(self.target, enc, op)?)), (dst_field, dst)] {
            let (dw, lo, width) =
                field_position(enc, f).ok_or_else(|| RewriteError::Encode(format!("{enc} has no field {f:?}")))?;
            let mask = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
            if let Some(w) = words.get_mut(dw as usize) {
                *w &= !(mask << lo);
            }
            put(&mut words, enc, f, v)?;
        }
        Ok(words)
    }

    /// A GLOBAL atomic without return: `op vaddr, vdata, s[saddr:saddr+1]`.
    pub fn global_atomic(&self, op: Opcode, vaddr: u16, vdata: u16, saddr: u16) -> Result<Words, RewriteError> {
        self.global_atomic_at(op, vaddr, vdata, saddr, 0)
    }

    /// [`Encoder::global_atomic`] at `offset` bytes past the address (0..4096).
    pub fn global_atomic_at(
        &self,
        op: Opcode,
        vaddr: u16,
        vdata: u16,
        saddr: u16,
        offset: u16,
    ) -> Result<Words, RewriteError> {
        if offset >= 4096 {
            return Err(RewriteError::Encode(format!("global offset {offset} is out of range")));
        }
        let fields =
            [(Field::Addr, u32::from(vaddr)), (Field::Data, u32::from(vdata)), (Field::Saddr, u32::from(saddr))];
        let mut w = self.base(Encoding::Global, op, &fields)?;
        if offset != 0 {
            put(&mut w, Encoding::Global, Field::FlatOffset, u32::from(offset))?;
        }
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(target: Target, words: &[u32]) -> String {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let insn = xfpx_amd_isa::decode(target, &bytes).expect("decodes");
        assert_eq!(insn.length, bytes.len(), "length of {insn}");
        insn.to_string()
    }

    #[test]
    fn emitted_instructions_decode_to_what_was_asked() {
        for target in Target::ALL {
            let e = Encoder { target };
            assert_eq!(text(target, &e.sopp(Opcode::S_BRANCH, 0xfffe).expect("enc")), "s_branch 65534");
            assert_eq!(
                text(
                    target,
                    &e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(20)), Some(Src::Special(SpecialReg::Exec))).expect("e")
                ),
                "s_mov_b64 s[20:21], exec"
            );
            assert_eq!(
                text(
                    target,
                    &e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Int(1))).expect("e")
                ),
                "s_mov_b64 exec, 1"
            );
            assert_eq!(
                text(target, &e.sop2(Opcode::S_CSELECT_B64, Src::Sgpr(4), Src::Int(-1), Src::Int(0)).expect("e")),
                "s_cselect_b64 s[4:5], -1, 0"
            );
            assert_eq!(
                text(target, &e.sopc(Opcode::S_CMP_LG_U32, Src::Sgpr(3), Src::Int(0)).expect("e")),
                "s_cmp_lg_u32 s3, 0"
            );
            assert_eq!(
                text(target, &e.vop1(Opcode::V_MOV_B32_E32, 7, Src::Literal(0x204)).expect("e")),
                "v_mov_b32_e32 v7, 0x204"
            );
            assert_eq!(
                text(target, &e.vop3_cmp(Opcode::V_CMP_CLASS_F32_E64, 30, Src::Vgpr(2), Src::Vgpr(7)).expect("e")),
                "v_cmp_class_f32_e64 s[30:31], v2, v7"
            );
            assert_eq!(
                text(target, &e.global_atomic(Opcode::GLOBAL_ATOMIC_ADD, 5, 6, 40).expect("e")),
                "global_atomic_add v5, v6, s[40:41]"
            );
            assert_eq!(text(target, &e.accvgpr_read(9, 3).expect("e")), "v_accvgpr_read_b32 v9, a3");
            assert_eq!(
                text(
                    target,
                    &e.vop3(Opcode::V_CNDMASK_B32_E64, 4, Src::Int(0), Src::Int(16), Src::Sgpr(30)).expect("e")
                ),
                "v_cndmask_b32_e64 v4, 0, 16, s[30:31]"
            );
            assert_eq!(
                text(target, &e.global_atomic_at(Opcode::GLOBAL_ATOMIC_OR, 5, 6, 40, 100).expect("e")),
                "global_atomic_or v5, v6, s[40:41] offset:100"
            );
            assert_eq!(
                text(target, &e.sop2(Opcode::S_CSELECT_B32, Src::Sgpr(7), Src::Int(-1), Src::Int(0)).expect("e")),
                "s_cselect_b32 s7, -1, 0"
            );
            let write = e.lane_move(Opcode::V_WRITELANE_B32, 10, Src::Sgpr(3), 2).expect("e");
            let read = e.lane_move(Opcode::V_READLANE_B32, 3, Src::Vgpr(10), 2).expect("e");
            assert_eq!(text(target, &write), "v_writelane_b32 v10, s3, 2");
            assert_eq!(text(target, &read), "v_readlane_b32 s3, v10, 2");
            // llvm-mc 19's words (gfx9 VOP3)
            assert_eq!((&write[..], &read[..]), (&[0xD28A_000A, 0x0001_0403][..], &[0xD289_0003, 0x0001_050A][..]));
            assert!(e.lane_move(Opcode::V_READLANE_B32, 3, Src::Vgpr(10), 64).is_err());
        }
    }

    #[test]
    fn impossible_operands_are_errors() {
        let e = Encoder { target: Target::Gfx90a };
        assert!(e.sop1(Opcode::S_MOV_B32, Some(Src::Vgpr(1)), Some(Src::Int(0))).is_err());
        assert!(e.vop3_cmp(Opcode::V_CMP_CLASS_F32_E64, 2, Src::Vgpr(1), Src::Literal(0x204)).is_err());
        // An opcode of another encoding, or one the target lacks.
        assert!(e.sopp(Opcode::S_MOV_B32, 0).is_err());
        assert!(Encoder { target: Target::Gfx908 }.sop1(Opcode::S_MOV_B64, None, None).is_ok());
        assert!(opcode(Target::Gfx908, Encoding::Vop3, Opcode::V_LSHL_ADD_U64).is_err());
        assert!(opcode(Target::Gfx942, Encoding::Vop3, Opcode::V_LSHL_ADD_U64).is_ok());
        assert!(e.vop1(Opcode::V_MOV_B32_E32, 1, Src::Int(100)).is_err());
    }
}
