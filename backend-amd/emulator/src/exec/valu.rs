//! The vector ALU: operand fields of VOP1/VOP2/VOPC/VOP3/VOP3P, routing of
//! a VALU instruction to its family, lane moves, and integer operations.

use super::dpp::{self, Dpp};
use super::scalar::bfe;
use super::sdwa::{self, Sdwa};
use super::vfloat::float_kind;
use super::*;
use xfpx_amd_isa::Family;

/// VALU operand fields, unified over VOP1/VOP2/VOPC/VOP3/VOP3P.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Valu {
    pub(crate) dst: u16,
    pub(crate) src: [u16; 3],
    /// VOP3B scalar destination, VOPC destination (VCC in e32).
    pub(crate) sdst: u16,
    pub(crate) abs: u8,
    pub(crate) neg: u8,
    pub(crate) clamp: bool,
    pub(crate) omod: u8,
    pub(crate) op_sel: u8,
    pub(crate) op_sel_hi: u8,
    pub(crate) neg_hi: u8,
    /// The selects of an SDWA form.
    pub(crate) sdwa: Option<Sdwa>,
    /// The lane control and write masks of a DPP form.
    pub(crate) dpp: Option<Dpp>,
    /// VOP3 16-bit operations: sources (bits 0-2) read from their high
    /// half, as op_sel says.
    pub(crate) src_hi: u8,
}

impl Wave {
    pub(crate) fn valu_fields(&self, inst: &Instruction) -> R<Valu> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let mut f = Valu::default();
        match inst.encoding {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if inst.sdwa => {
                if sdwa::fields(inst.encoding, w0, w1, &mut f).is_none() {
                    return self.unsupported(format!("{} with a reserved SDWA select", inst.mnemonic));
                }
            }
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if inst.dpp => dpp::fields(w0, w1, &mut f),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if !inst.vop3 => {
                f.src[0] = (w0 & 0x1FF) as u16;
                f.src[1] = 256 + ((w0 >> 9) & 0xFF) as u16;
                f.dst = ((w0 >> 17) & 0xFF) as u16;
                f.sdst = VCC;
                f.src[2] = VCC; // carry-in / mask of e32 forms
            }
            Encoding::Vop3p => {
                f.dst = (w0 & 0xFF) as u16;
                f.neg_hi = ((w0 >> 8) & 7) as u8;
                f.op_sel = ((w0 >> 11) & 7) as u8;
                f.clamp = (w0 >> 15) & 1 != 0;
                f.src = [(w1 & 0x1FF) as u16, ((w1 >> 9) & 0x1FF) as u16, ((w1 >> 18) & 0x1FF) as u16];
                f.op_sel_hi = (((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2) as u8;
                f.neg = ((w1 >> 29) & 7) as u8;
            }
            _ => {
                f.dst = (w0 & 0xFF) as u16;
                f.abs = ((w0 >> 8) & 7) as u8;
                f.sdst = ((w0 >> 8) & 0x7F) as u16;
                f.clamp = (w0 >> 15) & 1 != 0;
                f.src = [(w1 & 0x1FF) as u16, ((w1 >> 9) & 0x1FF) as u16, ((w1 >> 18) & 0x1FF) as u16];
                f.omod = ((w1 >> 27) & 3) as u8;
                f.neg = ((w1 >> 29) & 7) as u8;
                if is_16bit(inst.op) {
                    f.op_sel = ((w0 >> 11) & 0xF) as u8;
                    f.src_hi = f.op_sel & 7;
                }
                if inst.encoding == Encoding::Vopc {
                    f.sdst = (w0 & 0xFF) as u16;
                }
            }
        }
        self.index_vgprs(&mut f);
        Ok(f)
    }

    pub(crate) fn valu(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<()> {
        let f = self.valu_fields(inst)?;
        match f.dpp {
            Some(d) => self.valu_dpp(inst, env, &f, d),
            None => self.valu_lanes(inst, env, &f),
        }
    }

    /// A VALU instruction over the lanes of EXEC.
    pub(crate) fn valu_lanes(&mut self, inst: &Instruction, env: &mut Env<'_>, f: &Valu) -> R<()> {
        let f = *f;
        // op_sel's destination bit writes the high half; whether the other
        // half is kept or zeroed is not modelled (v_pack_b32_f16's op_sel
        // selects sources only).
        if f.op_sel & 8 != 0 && inst.op != Opcode::V_PACK_B32_F16 {
            return self.unsupported(format!("{} with op_sel on the destination", inst.mnemonic));
        }
        if f.omod != 0 && !takes_omod(inst.op) {
            return self.unsupported(format!("{} with an output modifier", inst.mnemonic));
        }
        if let Some(compare) = inst.op.compare() {
            return self.vcmp(inst, &f, compare, env.obs);
        }
        let family = inst.op.family();
        if (inst.sdwa || inst.dpp)
            && matches!(family, Family::Matrix | Family::AccvgprMove | Family::FmaMix | Family::Packed)
        {
            let form = if inst.sdwa { "SDWA" } else { "DPP" };
            return self.unsupported(format!("{} in the {form} form", inst.mnemonic));
        }
        match family {
            // Their operands come from the decoder, not through indexing.
            Family::Matrix | Family::AccvgprMove if self.gpr_idx_on => {
                return self.unsupported(format!("{} in VGPR indexing mode", inst.mnemonic))
            }
            Family::Matrix | Family::AccvgprMove => return self.matrix(inst, env),
            Family::FmaMix => return self.fma_mix(inst, &f, env.obs),
            Family::Packed => return self.vop3p(inst, &f, env.obs),
            _ => {}
        }
        match inst.op {
            Opcode::V_READFIRSTLANE_B32 => {
                let e = self.exec();
                let lane = if e == 0 { 0 } else { e.trailing_zeros() as usize };
                let v = self.operand(env.obs, &f, 0, inst.literal, Ty::B32, lane)?;
                self.ws(env.obs, f.dst, v);
                return Ok(());
            }
            Opcode::V_READLANE_B32 => {
                let lane = self.ssrc(env.obs, f.src[1], inst.literal, Ty::B32)? as usize & 63;
                let v = self.vsrc(env.obs, f.src[0], inst.literal, Ty::B32, lane)?;
                self.ws(env.obs, f.dst, v);
                return Ok(());
            }
            Opcode::V_WRITELANE_B32 => {
                let v = self.ssrc(env.obs, f.src[0], inst.literal, Ty::B32)?;
                let lane = self.ssrc(env.obs, f.src[1], inst.literal, Ty::B32)? as usize & 63;
                self.wv(env.obs, f.dst, lane, v);
                return Ok(());
            }
            _ => {}
        }
        if matches!(inst.op, Opcode::V_CVT_I32_F64_E32 | Opcode::V_CVT_U32_F64_E32) {
            let exec = self.exec();
            let mut fl = 0;
            for lane in lanes(exec) {
                let x = f64::from_bits(self.fp_src64(env.obs, &f, 0, inst.literal, lane)?);
                if x.is_nan() {
                    fl |= flag::INVALID;
                }
                let r = if inst.op == Opcode::V_CVT_I32_F64_E32 { x as i32 as u32 } else { x as u32 };
                self.wv(env.obs, f.dst, lane, r);
            }
            self.raise(fl);
            return Ok(());
        }
        if let Some(result) = self.convert(inst, &f, env) {
            return result;
        }
        if let Some(op) = int_op(inst.op) {
            return self.vint(inst, &f, op, env.obs);
        }
        self.vfloat(inst, &f, env.obs)
    }

    /// Lane-wise integer VALU.
    pub(crate) fn vint(&mut self, inst: &Instruction, f: &Valu, op: IntOp, obs: &mut Observations) -> R<()> {
        let exec = self.exec();
        let lit = inst.literal;
        let e32 = !inst.vop3 && inst.encoding != Encoding::Vop3;
        let saturate = f.clamp && op.saturates();
        if f.clamp && !saturate {
            return self.unsupported(format!("{} with clamp", inst.mnemonic));
        }
        // (The abs field's bits are VOP3B's scalar destination: only neg
        // is checked.)
        if f.neg != 0 && !matches!(op, IntOp::Cndmask) {
            return self.unsupported(format!("{} with neg source modifiers", inst.mnemonic));
        }
        let mut carry_out = 0u64;
        for lane in lanes(exec) {
            let s = |w: &Self, obs: &mut Observations, i: usize| w.operand(obs, f, i, lit, Ty::B32, lane);
            let mask_in = |w: &Self, obs: &mut Observations| -> R<bool> {
                let m = if e32 { w.vcc() } else { w.ssrc64(obs, f.src[2], lit, Ty::B64)? };
                Ok(m >> lane & 1 != 0)
            };
            let r: u64 = match op {
                IntOp::Mov => s(self, obs, 0)? as u64,
                IntOp::Bin(g) => g(s(self, obs, 0)?, s(self, obs, 1)?) as u64,
                IntOp::Tri(g) => g(s(self, obs, 0)?, s(self, obs, 1)?, s(self, obs, 2)?) as u64,
                IntOp::Un(g) => g(s(self, obs, 0)?) as u64,
                IntOp::Lane(g) => g(s(self, obs, 0)?, s(self, obs, 1)?, lane) as u64,
                IntOp::Mov64 => {
                    let v = self.src64(obs, f, 0, lit, Ty::B64, lane)?;
                    self.wv(obs, f.dst, lane, v as u32);
                    self.wv(obs, f.dst + 1, lane, (v >> 32) as u32);
                    continue;
                }
                // The selected source with its abs/neg (sign-bit) modifiers:
                // compilers fold a negated or absolute select into them.
                IntOp::Cndmask => {
                    let i = if mask_in(self, obs)? { 1 } else { 0 };
                    self.fp_src32(obs, f, i, lit, lane)? as u64
                }
                IntOp::AddCo | IntOp::SubCo | IntOp::SubrevCo | IntOp::Addc | IntOp::Subb | IntOp::Subbrev => {
                    let (a, b) = (s(self, obs, 0)? as u64, s(self, obs, 1)? as u64);
                    let cin = match op {
                        IntOp::Addc | IntOp::Subb | IntOp::Subbrev => mask_in(self, obs)? as u64,
                        _ => 0,
                    };
                    let (a, b) = if matches!(op, IntOp::SubrevCo | IntOp::Subbrev) { (b, a) } else { (a, b) };
                    let (r, c) = match op {
                        IntOp::AddCo | IntOp::Addc => {
                            let t = a + b + cin;
                            (t as u32, t >> 32 != 0)
                        }
                        _ => (a.wrapping_sub(b).wrapping_sub(cin) as u32, b + cin > a),
                    };
                    if c {
                        carry_out |= 1 << lane;
                    }
                    match (saturate, c, op) {
                        (true, true, IntOp::AddCo | IntOp::Addc) => u32::MAX as u64,
                        (true, true, _) => 0,
                        _ => r as u64,
                    }
                }
                IntOp::MadU64U32 | IntOp::MadI64I32 => {
                    let (a, b) = (s(self, obs, 0)?, s(self, obs, 1)?);
                    let c = self.vsrc64(obs, f.src[2], lit, Ty::B64, lane)?;
                    let p = if op == IntOp::MadU64U32 {
                        a as u128 * b as u128
                    } else {
                        (a as i32 as i128 * b as i32 as i128) as u128
                    };
                    let t = p.wrapping_add(if op == IntOp::MadU64U32 { c as u128 } else { c as i64 as i128 as u128 });
                    let carry = if op == IntOp::MadU64U32 { t >> 64 != 0 } else { false };
                    if carry {
                        carry_out |= 1 << lane;
                    }
                    self.wv(obs, f.dst, lane, t as u32);
                    self.wv(obs, f.dst + 1, lane, (t >> 32) as u32);
                    continue;
                }
                IntOp::Shift64(g) => {
                    let a = s(self, obs, 0)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let r = g(b, a);
                    self.wv(obs, f.dst, lane, r as u32);
                    self.wv(obs, f.dst + 1, lane, (r >> 32) as u32);
                    continue;
                }
                IntOp::LshlAdd64 => {
                    let a = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    let sh = s(self, obs, 1)? & 63;
                    let c = self.vsrc64(obs, f.src[2], lit, Ty::B64, lane)?;
                    let r = (a << sh).wrapping_add(c);
                    self.wv(obs, f.dst, lane, r as u32);
                    self.wv(obs, f.dst + 1, lane, (r >> 32) as u32);
                    continue;
                }
            };
            self.write_result(obs, f, lane, r as u32);
        }
        if matches!(
            op,
            IntOp::AddCo
                | IntOp::SubCo
                | IntOp::SubrevCo
                | IntOp::Addc
                | IntOp::Subb
                | IntOp::Subbrev
                | IntOp::MadU64U32
                | IntOp::MadI64I32
        ) {
            let sdst = if e32 { VCC } else { f.sdst };
            self.ws64(obs, sdst, carry_out);
        }
        Ok(())
    }
}

/// A VOP3 operation on 16-bit values, whose op_sel picks source halves.
fn is_16bit(op: Opcode) -> bool {
    use xfpx_amd_isa::DataType;
    matches!(op.data_type(), Some(DataType::F16 | DataType::I16 | DataType::U16 | DataType::B16))
        && !matches!(op.family(), Family::Packed | Family::FmaMix | Family::Matrix)
}

/// Whether the output modifier (omod) of `op` is modelled: float results
/// of the lane-wise float VALU (`vfloat`), not compares, integer results,
/// packed or matrix operations.
fn takes_omod(op: Opcode) -> bool {
    op.compare().is_none()
        && matches!(op.family(), Family::Other | Family::Convert)
        && int_op(op).is_none()
        && float_kind(op).is_some()
        && !matches!(op, Opcode::V_CVT_I32_F64_E32 | Opcode::V_CVT_U32_F64_E32 | Opcode::V_PACK_B32_F16)
}

/// Integer VALU operations.
#[derive(Clone, Copy)]
pub(crate) enum IntOp {
    Mov,
    Un(fn(u32) -> u32),
    Bin(fn(u32, u32) -> u32),
    Tri(fn(u32, u32, u32) -> u32),
    Cndmask,
    AddCo,
    SubCo,
    SubrevCo,
    Addc,
    Subb,
    Subbrev,
    MadU64U32,
    MadI64I32,
    /// 64-bit shift: (value, amount) -> result.
    Shift64(fn(u64, u32) -> u64),
    LshlAdd64,
    /// Two sources and the lane index.
    Lane(fn(u32, u32, usize) -> u32),
    Mov64,
}

impl IntOp {
    /// Whether clamp (unsigned saturation) is modelled for the operation:
    /// the carry-out additions and subtractions, whose carry says when the
    /// 32-bit result wrapped.
    fn saturates(self) -> bool {
        matches!(self, IntOp::AddCo | IntOp::SubCo | IntOp::SubrevCo | IntOp::Addc | IntOp::Subb | IntOp::Subbrev)
    }
}

impl PartialEq for IntOp {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

impl std::fmt::Debug for IntOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IntOp")
    }
}

/// The integer VALU table: opcode (of the mnemonic stem) -> semantics.
pub(crate) fn int_op(op: Opcode) -> Option<IntOp> {
    use IntOp::*;
    Some(match op {
        Opcode::V_MOV_B32_E32 => Mov,
        Opcode::V_NOT_B32_E32 => Un(|a| !a),
        Opcode::V_BFREV_B32_E32 => Un(|a| a.reverse_bits()),
        Opcode::V_FFBH_U32_E32 => Un(|a| if a == 0 { u32::MAX } else { a.leading_zeros() }),
        Opcode::V_FFBL_B32_E32 => Un(|a| if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        // Leading bits equal to the sign bit; -1 for 0 and -1.
        Opcode::V_FFBH_I32_E32 => Un(|a| {
            if a == 0 || a == u32::MAX {
                u32::MAX
            } else if a >> 31 == 1 {
                a.leading_ones()
            } else {
                a.leading_zeros()
            }
        }),
        Opcode::V_CVT_U32_F32_E32 => Un(|a| f32::from_bits(a) as u32),
        // Exponent e with x = m * 2^e, 0.5 <= |m| < 1; 0 for 0, inf, NaN.
        Opcode::V_FREXP_EXP_I32_F32_E32 => Un(|a| {
            let x = f32::from_bits(a);
            if x == 0.0 || !x.is_finite() {
                0
            } else {
                let mut e = (x.abs() as f64).log2().floor() as i32 + 1;
                let m = (x.abs() as f64) * (2f64).powi(-e);
                if m >= 1.0 {
                    e += 1;
                } else if m < 0.5 {
                    e -= 1;
                }
                e as u32
            }
        }),
        Opcode::V_CVT_I32_F32_E32 => Un(|a| f32::from_bits(a) as i32 as u32),
        // Float to integer conversions saturate, NaN giving 0 (as
        // v_cvt_i32_f32 above): floor, floor of x + 1/2 (exact in f64), and
        // from f16 toward zero.
        Opcode::V_CVT_FLR_I32_F32_E32 => Un(|a| (f32::from_bits(a) as f64).floor() as i32 as u32),
        Opcode::V_CVT_RPI_I32_F32_E32 => Un(|a| (f32::from_bits(a) as f64 + 0.5).floor() as i32 as u32),
        Opcode::V_CVT_I16_F16_E32 => Un(|a| fpu::f16_to_f64(a as u16) as i16 as u16 as u32),
        Opcode::V_CVT_U16_F16_E32 => Un(|a| fpu::f16_to_f64(a as u16) as u16 as u32),
        // Two i16 saturated to u8, packed in the low half.
        Opcode::V_SAT_PK_U8_I16_E32 => Un(|a| {
            let sat = |h: u32| (h as u16 as i16).clamp(0, 255) as u32;
            sat(a) | sat(a >> 16) << 8
        }),
        // Two 32-bit values saturated to 16 bits, packed (source 0 low).
        Opcode::V_CVT_PK_I16_I32 => Bin(|a, b| {
            (a as i32).clamp(-32768, 32767) as u16 as u32 | ((b as i32).clamp(-32768, 32767) as u16 as u32) << 16
        }),
        Opcode::V_CVT_PK_U16_U32 => Bin(|a, b| a.min(0xFFFF) | b.min(0xFFFF) << 16),
        Opcode::V_XNOR_B32_E32 => Bin(|a, b| !(a ^ b)),
        Opcode::V_MUL_HI_U32_U24_E32 => Bin(|a, b| (((a & 0xFF_FFFF) as u64 * (b & 0xFF_FFFF) as u64) >> 32) as u32),
        Opcode::V_MUL_HI_I32_I24_E32 => {
            Bin(|a, b| ((((a << 8) as i32 >> 8) as i64 * ((b << 8) as i32 >> 8) as i64) >> 32) as u32)
        }
        Opcode::V_MAD_I32_I24 => {
            Tri(|a, b, c| (((a << 8) as i32 >> 8).wrapping_mul((b << 8) as i32 >> 8) as u32).wrapping_add(c))
        }
        // Bytes c[1:0].. of the 64-bit {a, b} (b low).
        Opcode::V_ALIGNBYTE_B32 => Tri(|a, b, c| ((((a as u64) << 32) | b as u64) >> (8 * (c & 3))) as u32),
        Opcode::V_MAD_U32_U16 => Tri(|a, b, c| (a & 0xFFFF).wrapping_mul(b & 0xFFFF).wrapping_add(c)),
        Opcode::V_MAD_I32_I16 => {
            Tri(|a, b, c| ((a as i16 as i32).wrapping_mul(b as i16 as i32) as u32).wrapping_add(c))
        }
        Opcode::V_MAD_U16 => Tri(|a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u32),
        Opcode::V_MAD_I16 => Tri(|a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u32),
        Opcode::V_MIN3_I16 => Tri(|a, b, c| (a as i16).min(b as i16).min(c as i16) as u16 as u32),
        Opcode::V_MAX3_I16 => Tri(|a, b, c| (a as i16).max(b as i16).max(c as i16) as u16 as u32),
        Opcode::V_MIN3_U16 => Tri(|a, b, c| (a as u16).min(b as u16).min(c as u16) as u32),
        Opcode::V_MAX3_U16 => Tri(|a, b, c| (a as u16).max(b as u16).max(c as u16) as u32),
        Opcode::V_MED3_I16 => Tri(|a, b, c| {
            let (a, b, c) = (a as i16, b as i16, c as i16);
            a.max(b).min(a.min(b).max(c)) as u16 as u32
        }),
        Opcode::V_MED3_U16 => Tri(|a, b, c| {
            let (a, b, c) = (a as u16, b as u16, c as u16);
            a.max(b).min(a.min(b).max(c)) as u32
        }),
        // Signed additions (clamp, signed saturation, is refused).
        Opcode::V_ADD_I32 => Bin(|a, b| a.wrapping_add(b)),
        Opcode::V_SUB_I32 => Bin(|a, b| a.wrapping_sub(b)),
        Opcode::V_ADD_I16 => Bin(|a, b| (a as u16).wrapping_add(b as u16) as u32),
        Opcode::V_SUB_I16 => Bin(|a, b| (a as u16).wrapping_sub(b as u16) as u32),
        Opcode::V_ADD_U32_E32 => Bin(|a, b| a.wrapping_add(b)),
        Opcode::V_SUB_U32_E32 => Bin(|a, b| a.wrapping_sub(b)),
        Opcode::V_SUBREV_U32_E32 => Bin(|a, b| b.wrapping_sub(a)),
        Opcode::V_AND_B32_E32 => Bin(|a, b| a & b),
        Opcode::V_OR_B32_E32 => Bin(|a, b| a | b),
        Opcode::V_XOR_B32_E32 => Bin(|a, b| a ^ b),
        Opcode::V_LSHLREV_B32_E32 => Bin(|a, b| b << (a & 31)),
        Opcode::V_LSHRREV_B32_E32 => Bin(|a, b| b >> (a & 31)),
        Opcode::V_ASHRREV_I32_E32 => Bin(|a, b| ((b as i32) >> (a & 31)) as u32),
        Opcode::V_LSHLREV_B16_E32 => Bin(|a, b| ((b as u16) << (a & 15)) as u32),
        Opcode::V_LSHRREV_B16_E32 => Bin(|a, b| ((b as u16) >> (a & 15)) as u32),
        // 16-bit integer operations: the low halves, the high half zeroed.
        Opcode::V_ASHRREV_I16_E32 => Bin(|a, b| ((b as i16) >> (a & 15)) as u16 as u32),
        Opcode::V_ADD_U16_E32 => Bin(|a, b| (a as u16).wrapping_add(b as u16) as u32),
        Opcode::V_SUB_U16_E32 => Bin(|a, b| (a as u16).wrapping_sub(b as u16) as u32),
        Opcode::V_SUBREV_U16_E32 => Bin(|a, b| (b as u16).wrapping_sub(a as u16) as u32),
        Opcode::V_MUL_LO_U16_E32 => Bin(|a, b| (a as u16).wrapping_mul(b as u16) as u32),
        Opcode::V_MAX_U16_E32 => Bin(|a, b| (a as u16).max(b as u16) as u32),
        Opcode::V_MIN_U16_E32 => Bin(|a, b| (a as u16).min(b as u16) as u32),
        Opcode::V_MAX_I16_E32 => Bin(|a, b| (a as i16).max(b as i16) as u16 as u32),
        Opcode::V_MIN_I16_E32 => Bin(|a, b| (a as i16).min(b as i16) as u16 as u32),
        Opcode::V_MUL_LO_U32 => Bin(|a, b| a.wrapping_mul(b)),
        Opcode::V_MUL_HI_U32 => Bin(|a, b| ((a as u64 * b as u64) >> 32) as u32),
        Opcode::V_MUL_HI_I32 => Bin(|a, b| ((a as i32 as i64 * b as i32 as i64) >> 32) as u32),
        Opcode::V_MUL_U32_U24_E32 => Bin(|a, b| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)),
        Opcode::V_MUL_I32_I24_E32 => Bin(|a, b| (((a << 8) as i32 >> 8).wrapping_mul((b << 8) as i32 >> 8)) as u32),
        Opcode::V_MIN_I32_E32 => Bin(|a, b| (a as i32).min(b as i32) as u32),
        Opcode::V_MAX_I32_E32 => Bin(|a, b| (a as i32).max(b as i32) as u32),
        Opcode::V_MIN_U32_E32 => Bin(|a, b| a.min(b)),
        Opcode::V_MAX_U32_E32 => Bin(|a, b| a.max(b)),
        Opcode::V_BCNT_U32_B32 => Bin(|a, b| a.count_ones().wrapping_add(b)),
        Opcode::V_BFM_B32 => Bin(|a, b| (((1u64 << (a & 31)) - 1) as u32) << (b & 31)),
        Opcode::V_CVT_PKRTZ_F16_F32 => return None,
        Opcode::V_LSHL_ADD_U32 => Tri(|a, b, c| (a << (b & 31)).wrapping_add(c)),
        Opcode::V_ADD_LSHL_U32 => Tri(|a, b, c| a.wrapping_add(b) << (c & 31)),
        Opcode::V_LSHL_OR_B32 => Tri(|a, b, c| (a << (b & 31)) | c),
        Opcode::V_AND_OR_B32 => Tri(|a, b, c| (a & b) | c),
        Opcode::V_OR3_B32 => Tri(|a, b, c| a | b | c),
        Opcode::V_XAD_U32 => Tri(|a, b, c| (a ^ b).wrapping_add(c)),
        Opcode::V_ADD3_U32 => Tri(|a, b, c| a.wrapping_add(b).wrapping_add(c)),
        Opcode::V_MAD_U32_U24 => Tri(|a, b, c| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c)),
        Opcode::V_BFE_U32 => Tri(|a, b, c| bfe(a, b & 31, c & 31, false)),
        Opcode::V_BFE_I32 => Tri(|a, b, c| bfe(a, b & 31, c & 31, true)),
        Opcode::V_BFI_B32 => Tri(|a, b, c| (a & b) | (!a & c)),
        Opcode::V_ALIGNBIT_B32 => Tri(|a, b, c| ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32),
        Opcode::V_PERM_B32 => Tri(|a, b, sel| {
            let data = (a as u64) << 32 | b as u64;
            let byte = |s: u32| -> u32 {
                match s {
                    0..=7 => (data >> (8 * s) & 0xFF) as u32,
                    8 => 0xFF * (data >> 15 & 1) as u32,
                    9 => 0xFF * (data >> 31 & 1) as u32,
                    10 => 0xFF * (data >> 47 & 1) as u32,
                    11 => 0xFF * (data >> 63 & 1) as u32,
                    12 => 0,
                    _ => 0xFF,
                }
            };
            (0..4).map(|k| byte(sel >> (8 * k) & 0xFF) << (8 * k)).fold(0, |x, y| x | y)
        }),
        Opcode::V_MIN3_I32 => Tri(|a, b, c| (a as i32).min(b as i32).min(c as i32) as u32),
        Opcode::V_MAX3_I32 => Tri(|a, b, c| (a as i32).max(b as i32).max(c as i32) as u32),
        Opcode::V_MIN3_U32 => Tri(|a, b, c| a.min(b).min(c)),
        Opcode::V_MED3_I32 => Tri(|a, b, c| {
            let (a, b, c) = (a as i32, b as i32, c as i32);
            a.max(b).min(a.min(b).max(c)) as u32
        }),
        Opcode::V_MED3_U32 => Tri(|a, b, c| a.max(b).min(a.min(b).max(c))),
        Opcode::V_MAX3_U32 => Tri(|a, b, c| a.max(b).max(c)),
        Opcode::V_CNDMASK_B32_E32 => Cndmask,
        Opcode::V_ADD_CO_U32_E32 => AddCo,
        Opcode::V_SUB_CO_U32_E32 => SubCo,
        Opcode::V_SUBREV_CO_U32_E32 => SubrevCo,
        Opcode::V_ADDC_CO_U32_E32 => Addc,
        Opcode::V_SUBB_CO_U32_E32 => Subb,
        Opcode::V_SUBBREV_CO_U32_E32 => Subbrev,
        Opcode::V_MAD_U64_U32 => MadU64U32,
        Opcode::V_MAD_I64_I32 => MadI64I32,
        Opcode::V_LSHLREV_B64 => Shift64(|v, s| v << (s & 63)),
        Opcode::V_LSHRREV_B64 => Shift64(|v, s| v >> (s & 63)),
        Opcode::V_ASHRREV_I64 => Shift64(|v, s| ((v as i64) >> (s & 63)) as u64),
        Opcode::V_LSHL_ADD_U64 => LshlAdd64,
        Opcode::V_MOV_B64_E32 => Mov64,
        // Bits of S0 below this lane (low / high 32 lanes) plus S1.
        Opcode::V_MBCNT_LO_U32_B32 => Lane(|a, b, lane| {
            let mask = if lane >= 32 { u32::MAX } else { (1u32 << lane) - 1 };
            (a & mask).count_ones().wrapping_add(b)
        }),
        Opcode::V_MBCNT_HI_U32_B32 => Lane(|a, b, lane| {
            let mask = if lane < 32 {
                0
            } else if lane == 63 {
                u32::MAX >> 1
            } else {
                (1u32 << (lane - 32)) - 1
            };
            (a & mask).count_ones().wrapping_add(b)
        }),
        _ => return None,
    })
}
