//! Lane-wise floating-point VALU (f16, f32, f64): arithmetic, conversions,
//! transcendentals and the division helpers, with source modifiers, MODE,
//! exception flags and result observations.

use super::*;
use xfpx_amd_isa::{DataType, Family};

impl Wave {
    /// FP source with VOP3 abs/neg modifiers applied.
    pub(crate) fn fp_src32(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u32> {
        let mut v = self.operand(obs, f, i, lit, Ty::B32, lane)?;
        if f.abs >> i & 1 != 0 {
            v &= 0x7FFF_FFFF;
        }
        if f.neg >> i & 1 != 0 {
            v ^= 0x8000_0000;
        }
        Ok(v)
    }
    pub(crate) fn fp_src64(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u64> {
        let mut v = self.src64(obs, f, i, lit, Ty::F64, lane)?;
        if f.abs >> i & 1 != 0 {
            v &= !(1 << 63);
        }
        if f.neg >> i & 1 != 0 {
            v ^= 1 << 63;
        }
        Ok(v)
    }
    pub(crate) fn fp_src16(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u32> {
        let mut v = self.operand(obs, f, i, lit, Ty::F16, lane)? & 0xFFFF;
        if f.abs >> i & 1 != 0 {
            v &= 0x7FFF;
        }
        if f.neg >> i & 1 != 0 {
            v ^= 0x8000;
        }
        Ok(v)
    }

    /// Lane-wise floating-point VALU.
    pub(crate) fn vfloat(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        let m = inst.mnemonic;
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let Some(kind) = float_kind(inst.op) else { return self.unsupported(m) };
        if f.omod != 0 && self.mode & (1 << 9) != 0 {
            // Compilers use omod only with IEEE mode off; what the hardware
            // does with it under IEEE mode is not documented.
            return self.unsupported(format!("{m} with an output modifier under IEEE mode"));
        }
        let e32 = !inst.vop3 && inst.encoding != Encoding::Vop3;
        let mut vcc_out = 0u64;
        let mut kinds = 0u8;
        // Results of the f16x2 conversion (`v_cvt_pkrtz_f16_f32`).
        let mut packed_kinds = 0u8;
        let mut all_flags = 0;
        let format = match kind.1 {
            W::F16 => FpFormat::F16,
            W::F32 => FpFormat::F32,
            W::F64 => FpFormat::F64,
        };
        for lane in lanes(exec) {
            let mut fl: Flags = 0;
            let mut classify_div0 = false;
            let res: u64 = match kind.1 {
                W::F32 => {
                    let a = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<f32> {
                        Ok(f32::from_bits(w.fp_src32(obs, f, i, lit, lane)?))
                    };
                    let r: f32 = match inst.op {
                        Opcode::V_ADD_F32_E32 => fpu::op32(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUB_F32_E32 => fpu::op32(BinOp::Sub, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUBREV_F32_E32 => fpu::op32(BinOp::Sub, src(self, obs, 1)?, a, mode, &mut fl),
                        Opcode::V_MUL_F32_E32 => fpu::op32(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F32 => fpu::fma32(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        // v_mad*: unfused (product rounded) and always flushing
                        // f32 denormals, whatever MODE says.
                        Opcode::V_MAD_F32 | Opcode::V_MAC_F32_E32 | Opcode::V_MADMK_F32 | Opcode::V_MADAK_F32 => {
                            let flush = FpMode { denorm32: 0, ..mode };
                            let k = f32::from_bits(lit.unwrap_or(0));
                            let (b, c) = match inst.op {
                                Opcode::V_MAD_F32 => (src(self, obs, 1)?, src(self, obs, 2)?),
                                Opcode::V_MAC_F32_E32 => {
                                    (src(self, obs, 1)?, f32::from_bits(self.rv(obs, f.dst, lane)))
                                }
                                Opcode::V_MADMK_F32 => (k, src(self, obs, 1)?),
                                _ => (src(self, obs, 1)?, k),
                            };
                            let p = fpu::op32(BinOp::Mul, a, b, flush, &mut fl);
                            fpu::op32(BinOp::Add, p, c, flush, &mut fl)
                        }
                        Opcode::V_FMAC_F32_E32 => {
                            let c = f32::from_bits(self.rv(obs, f.dst, lane));
                            fpu::fma32(a, src(self, obs, 1)?, c, mode, &mut fl)
                        }
                        Opcode::V_FMAMK_F32 => {
                            fpu::fma32(a, f32::from_bits(lit.unwrap_or(0)), src(self, obs, 1)?, mode, &mut fl)
                        }
                        Opcode::V_FMAAK_F32 => {
                            fpu::fma32(a, src(self, obs, 1)?, f32::from_bits(lit.unwrap_or(0)), mode, &mut fl)
                        }
                        Opcode::V_MIN_F32_E32 => fpu::minmax32(a, src(self, obs, 1)?, false, mode, &mut fl),
                        Opcode::V_MAX_F32_E32 => fpu::minmax32(a, src(self, obs, 1)?, true, mode, &mut fl),
                        Opcode::V_MAX3_F32 | Opcode::V_MIN3_F32 => {
                            let mx = inst.op == Opcode::V_MAX3_F32;
                            let t = fpu::minmax32(a, src(self, obs, 1)?, mx, mode, &mut fl);
                            fpu::minmax32(t, src(self, obs, 2)?, mx, mode, &mut fl)
                        }
                        Opcode::V_MED3_F32 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let (a, b, c) =
                                (fpu::in32(a, mode, &mut fl), fpu::in32(b, mode, &mut fl), fpu::in32(c, mode, &mut fl));
                            if a.is_nan() || b.is_nan() || c.is_nan() {
                                let t = fpu::minmax32(a, b, false, mode, &mut fl);
                                fpu::minmax32(t, c, false, mode, &mut fl)
                            } else {
                                let mx = a.max(b).max(c);
                                if mx == a {
                                    b.max(c)
                                } else if mx == b {
                                    a.max(c)
                                } else {
                                    a.max(b)
                                }
                            }
                        }
                        // Revolutions: sin(2*pi*x), valid for |x| <= 256.
                        Opcode::V_SIN_F32_E32 | Opcode::V_COS_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl) as f64;
                            if x.is_infinite() {
                                fl |= flag::INVALID;
                            }
                            let t = 2.0 * std::f64::consts::PI * x;
                            let r = if inst.op == Opcode::V_SIN_F32_E32 { t.sin() } else { t.cos() };
                            fpu::round32(r, false, x.is_nan(), false, mode, &mut fl)
                        }
                        Opcode::V_FREXP_MANT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x.is_nan() || x.is_infinite() {
                                f32::NAN
                            } else if x == 0.0 {
                                x
                            } else {
                                let e = (x.abs() as f64).log2().floor() as i32 + 1;
                                let m = x as f64 * (2f64).powi(-e);
                                // Guard against log2 rounding at exact powers of two.
                                let m = if m.abs() >= 1.0 {
                                    m / 2.0
                                } else if m.abs() < 0.5 {
                                    m * 2.0
                                } else {
                                    m
                                };
                                m as f32
                            }
                        }
                        Opcode::V_TRUNC_F32_E32 => fpu::in32(a, mode, &mut fl).trunc(),
                        Opcode::V_FLOOR_F32_E32 => fpu::in32(a, mode, &mut fl).floor(),
                        Opcode::V_CEIL_F32_E32 => fpu::in32(a, mode, &mut fl).ceil(),
                        Opcode::V_RNDNE_F32_E32 => fpu::in32(a, mode, &mut fl).round_ties_even(),
                        Opcode::V_FRACT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x.is_infinite() {
                                f32::NAN
                            } else {
                                (x - x.floor()).min(f32::from_bits(0x3F7F_FFFF))
                            }
                        }
                        Opcode::V_RCP_F32_E32 | Opcode::V_RCP_IFLAG_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= if inst.op == Opcode::V_RCP_IFLAG_F32_E32 { flag::INT_DIV0 } else { flag::DIV0 };
                                classify_div0 = true;
                            }
                            let r = (1.0 / x as f64) as f32;
                            let exact = x == 0.0 || x.is_infinite() || r as f64 * x as f64 == 1.0;
                            fpu::round32(r as f64, exact, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_RSQ_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::round32(1.0 / (x as f64).sqrt(), false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_SQRT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            let r = (x as f64).sqrt();
                            fpu::round32(r, r * r == x as f64, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_EXP_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            fpu::round32((x as f64).exp2(), false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_LOG_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                            }
                            fpu::round32(
                                (x as f64).log2(),
                                false,
                                x.is_nan(),
                                x.is_infinite() || x == 0.0,
                                mode,
                                &mut fl,
                            )
                        }
                        Opcode::V_LDEXP_F32 => {
                            let e = self.operand(obs, f, 1, lit, Ty::B32, lane)? as i32;
                            let x = fpu::in32(a, mode, &mut fl);
                            fpu::round32(
                                x as f64 * (2f64).powi(e.clamp(-400, 400)),
                                false,
                                x.is_nan(),
                                x.is_infinite(),
                                mode,
                                &mut fl,
                            )
                        }
                        // A signed 4-bit integer in sixteenths.
                        Opcode::V_CVT_OFF_F32_I4_E32 => {
                            let v = self.operand(obs, f, 0, lit, Ty::B32, lane)?;
                            ((v << 28) as i32 >> 28) as f32 / 16.0
                        }
                        // Two f32 to f16 halves, rounded toward zero: an f16x2 result.
                        Opcode::V_CVT_PKRTZ_F16_F32 => {
                            let lo = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                            let hi = f32::from_bits(self.fp_src32(obs, f, 1, lit, lane)?);
                            let (lo, hi) = (fpu::in32(lo, mode, &mut fl), fpu::in32(hi, mode, &mut fl));
                            let halves = [fpu::f32_to_f16_rtz(lo), fpu::f32_to_f16_rtz(hi)];
                            for h in halves {
                                let a = h & 0x7FFF;
                                packed_kinds |= classify(a > 0x7C00, a == 0x7C00, a != 0 && a < 0x400, false);
                            }
                            all_flags |= fl;
                            self.write_result(obs, f, lane, halves[0] as u32 | (halves[1] as u32) << 16);
                            continue;
                        }
                        Opcode::V_CVT_F32_I32_E32 => (self.operand(obs, f, 0, lit, Ty::B32, lane)? as i32) as f32,
                        Opcode::V_CVT_F32_U32_E32 => self.operand(obs, f, 0, lit, Ty::B32, lane)? as f32,
                        Opcode::V_CVT_F32_F64_E32 => {
                            let x = f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?);
                            fpu::round32(x, false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_CVT_F32_F16_E32 => {
                            fpu::f16_to_f64(self.fp_src16(obs, f, 0, lit, lane)? as u16) as f32
                        }
                        Opcode::V_CVT_F32_UBYTE0_E32
                        | Opcode::V_CVT_F32_UBYTE1_E32
                        | Opcode::V_CVT_F32_UBYTE2_E32
                        | Opcode::V_CVT_F32_UBYTE3_E32 => {
                            let byte = ubyte_index(inst.op);
                            (self.operand(obs, f, 0, lit, Ty::B32, lane)? >> (8 * byte) & 0xFF) as f32
                        }
                        Opcode::V_DIV_SCALE_F32 => {
                            let (r, v) = fpu::div_scale32(a, src(self, obs, 1)?, src(self, obs, 2)?);
                            if v {
                                vcc_out |= 1 << lane;
                            }
                            r
                        }
                        Opcode::V_DIV_FMAS_F32 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let scale = if self.vcc() >> lane & 1 != 0 {
                                if fpu::exp32(c) > 127 {
                                    64
                                } else {
                                    -64
                                }
                            } else {
                                0
                            };
                            fpu::fma32_scaled(a, b, c, scale, mode, &mut fl)
                        }
                        Opcode::V_DIV_FIXUP_F32 => {
                            let (den, num) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            if den == 0.0 && num != 0.0 && !num.is_nan() {
                                classify_div0 = true;
                            }
                            let q = fpu::div_fixup(
                                a as f64,
                                den as f64,
                                num as f64,
                                -150,
                                (fpu::exp32(num), fpu::exp32(den)),
                                255,
                                &mut fl,
                            ) as f32;
                            // Output denormals flush as MODE says.
                            if q.is_subnormal() && mode.denorm32 & 2 == 0 {
                                0.0f32.copysign(q)
                            } else {
                                q
                            }
                        }
                        _ => return self.unsupported(m),
                    };
                    let r = match omod_factor(f.omod) {
                        Some(k) => fpu::op32(BinOp::Mul, r, k as f32, mode, &mut fl),
                        None => r,
                    };
                    // Clamp to [0, 1]; with DX10_CLAMP a NaN clamps to 0.
                    let r = match (f.clamp, r.is_nan()) {
                        (true, false) => r.clamp(0.0, 1.0),
                        (true, true) if self.mode & (1 << 8) != 0 => 0.0,
                        _ => r,
                    };
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), classify_div0);
                    r.to_bits() as u64
                }
                W::F64 => {
                    // Conversions to f64 read a 32-bit source: no 64-bit read.
                    let a = if matches!(
                        inst.op,
                        Opcode::V_CVT_F64_I32_E32 | Opcode::V_CVT_F64_U32_E32 | Opcode::V_CVT_F64_F32_E32
                    ) {
                        0.0
                    } else {
                        f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?)
                    };
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<f64> {
                        Ok(f64::from_bits(w.fp_src64(obs, f, i, lit, lane)?))
                    };
                    let r: f64 = match inst.op {
                        Opcode::V_ADD_F64 => fpu::op64(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_MUL_F64 => fpu::op64(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F64 => fpu::fma64(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        Opcode::V_FMAC_F64_E32 => {
                            let c = f64::from_bits(
                                self.rv(obs, f.dst, lane) as u64 | (self.rv(obs, f.dst + 1, lane) as u64) << 32,
                            );
                            fpu::fma64(a, src(self, obs, 1)?, c, mode, &mut fl)
                        }
                        Opcode::V_MIN_F64 => fpu::minmax64(a, src(self, obs, 1)?, false, mode, &mut fl),
                        Opcode::V_MAX_F64 => fpu::minmax64(a, src(self, obs, 1)?, true, mode, &mut fl),
                        Opcode::V_FREXP_MANT_F64_E32 => frexp_mant(fpu::in64(a, mode, &mut fl)),
                        Opcode::V_TRUNC_F64_E32 => fpu::in64(a, mode, &mut fl).trunc(),
                        Opcode::V_FLOOR_F64_E32 => fpu::in64(a, mode, &mut fl).floor(),
                        Opcode::V_CEIL_F64_E32 => fpu::in64(a, mode, &mut fl).ceil(),
                        Opcode::V_RNDNE_F64_E32 => fpu::in64(a, mode, &mut fl).round_ties_even(),
                        Opcode::V_FRACT_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x.is_infinite() {
                                f64::NAN
                            } else {
                                (x - x.floor()).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
                            }
                        }
                        Opcode::V_RCP_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::finish64(1.0 / x, false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_RSQ_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::finish64(1.0 / x.sqrt(), false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_SQRT_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            fpu::finish64(x.sqrt(), false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_LDEXP_F64 => {
                            let e = self.operand(obs, f, 1, lit, Ty::B32, lane)? as i32;
                            let x = fpu::in64(a, mode, &mut fl);
                            let e = e.clamp(-2200, 2200);
                            // Two steps keep intermediate scale factors finite.
                            let r = x * (2f64).powi(e / 2) * (2f64).powi(e - e / 2);
                            fpu::finish64(r, true, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_CVT_F64_I32_E32 => (self.operand(obs, f, 0, lit, Ty::B32, lane)? as i32) as f64,
                        Opcode::V_CVT_F64_U32_E32 => self.operand(obs, f, 0, lit, Ty::B32, lane)? as f64,
                        Opcode::V_CVT_F64_F32_E32 => {
                            let x = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                            fpu::in32(x, mode, &mut fl) as f64
                        }
                        Opcode::V_DIV_SCALE_F64 => {
                            let (r, v) = fpu::div_scale64(a, src(self, obs, 1)?, src(self, obs, 2)?);
                            if v {
                                vcc_out |= 1 << lane;
                            }
                            r
                        }
                        Opcode::V_DIV_FMAS_F64 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let r = fpu::fma64(a, b, c, mode, &mut fl);
                            if self.vcc() >> lane & 1 != 0 {
                                r * (2f64).powi(if fpu::exp64(c) > 1023 { 128 } else { -128 })
                            } else {
                                r
                            }
                        }
                        Opcode::V_DIV_FIXUP_F64 => {
                            let (den, num) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            if den == 0.0 && num != 0.0 && !num.is_nan() {
                                classify_div0 = true;
                            }
                            let q =
                                fpu::div_fixup(a, den, num, -1075, (fpu::exp64(num), fpu::exp64(den)), 2047, &mut fl);
                            if q.is_subnormal() && mode.denorm16_64 & 2 == 0 {
                                0.0f64.copysign(q)
                            } else {
                                q
                            }
                        }
                        _ => return self.unsupported(m),
                    };
                    let r = match omod_factor(f.omod) {
                        Some(k) => fpu::op64(BinOp::Mul, r, k, mode, &mut fl),
                        None => r,
                    };
                    let r = match (f.clamp, r.is_nan()) {
                        (true, false) => r.clamp(0.0, 1.0),
                        (true, true) if self.mode & (1 << 8) != 0 => 0.0,
                        _ => r,
                    };
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), classify_div0);
                    r.to_bits()
                }
                W::F16 => {
                    let a = self.fp_src16(obs, f, 0, lit, lane)? as u16;
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<u16> {
                        Ok(w.fp_src16(obs, f, i, lit, lane)? as u16)
                    };
                    let r: u16 = match inst.op {
                        Opcode::V_ADD_F16_E32 => fpu::op16(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUB_F16_E32 => fpu::op16(BinOp::Sub, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUBREV_F16_E32 => fpu::op16(BinOp::Sub, src(self, obs, 1)?, a, mode, &mut fl),
                        Opcode::V_MUL_F16_E32 => fpu::op16(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F16 => fpu::fma16(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        Opcode::V_CVT_F16_F32_E32 => {
                            let x = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                            fpu::round16(x as f64, false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_PACK_B32_F16 => {
                            // op_sel's source halves are applied by the operand reads.
                            let lo = self.fp_src16(obs, f, 0, lit, lane)?;
                            let hi = self.fp_src16(obs, f, 1, lit, lane)?;
                            self.wv(obs, f.dst, lane, (lo & 0xFFFF) | (hi & 0xFFFF) << 16);
                            continue;
                        }
                        Opcode::V_FMA_LEGACY_F16 => {
                            fpu::fma16(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl)
                        }
                        // Unfused, with f16 denormals flushed like v_mad_f32's
                        // f32 ones (the compiler forms them only where f16
                        // denormals are flushed).
                        Opcode::V_MAD_F16
                        | Opcode::V_MAD_LEGACY_F16
                        | Opcode::V_MAC_F16_E32
                        | Opcode::V_MADMK_F16
                        | Opcode::V_MADAK_F16 => {
                            let flush = FpMode { denorm16_64: 0, ..mode };
                            let k = lit.unwrap_or(0) as u16;
                            let (b, c) = match inst.op {
                                Opcode::V_MADMK_F16 => (k, src(self, obs, 1)?),
                                Opcode::V_MADAK_F16 => (src(self, obs, 1)?, k),
                                Opcode::V_MAC_F16_E32 => (src(self, obs, 1)?, self.rv(obs, f.dst, lane) as u16),
                                _ => (src(self, obs, 1)?, src(self, obs, 2)?),
                            };
                            let p = fpu::op16(BinOp::Mul, a, b, flush, &mut fl);
                            fpu::op16(BinOp::Add, p, c, flush, &mut fl)
                        }
                        Opcode::V_MIN_F16_E32 | Opcode::V_MAX_F16_E32 => {
                            let (x, y) = (fpu::in16(a, mode, &mut fl), fpu::in16(src(self, obs, 1)?, mode, &mut fl));
                            let mx = inst.op == Opcode::V_MAX_F16_E32;
                            fpu::f64_to_f16(fpu::minmax64(x, y, mx, mode, &mut fl))
                        }
                        Opcode::V_MIN3_F16 | Opcode::V_MAX3_F16 => {
                            let mx = inst.op == Opcode::V_MAX3_F16;
                            let (x, y) = (fpu::in16(a, mode, &mut fl), fpu::in16(src(self, obs, 1)?, mode, &mut fl));
                            let z = fpu::in16(src(self, obs, 2)?, mode, &mut fl);
                            let t = fpu::minmax64(x, y, mx, mode, &mut fl);
                            fpu::f64_to_f16(fpu::minmax64(t, z, mx, mode, &mut fl))
                        }
                        Opcode::V_MED3_F16 => {
                            let (x, y) = (fpu::in16(a, mode, &mut fl), fpu::in16(src(self, obs, 1)?, mode, &mut fl));
                            let z = fpu::in16(src(self, obs, 2)?, mode, &mut fl);
                            fpu::f64_to_f16(fpu::med3_64(x, y, z, mode, &mut fl))
                        }
                        Opcode::V_FLOOR_F16_E32
                        | Opcode::V_CEIL_F16_E32
                        | Opcode::V_TRUNC_F16_E32
                        | Opcode::V_RNDNE_F16_E32
                        | Opcode::V_FRACT_F16_E32 => {
                            let x = fpu::in16(a, mode, &mut fl);
                            let r = match inst.op {
                                Opcode::V_FLOOR_F16_E32 => x.floor(),
                                Opcode::V_CEIL_F16_E32 => x.ceil(),
                                Opcode::V_TRUNC_F16_E32 => x.trunc(),
                                Opcode::V_RNDNE_F16_E32 => x.round_ties_even(),
                                // Below 1: the largest f16 under 1.
                                _ if x.is_infinite() => f64::NAN,
                                _ => (x - x.floor()).min(fpu::f16_to_f64(0x3BFF)),
                            };
                            fpu::round16(r, true, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_LDEXP_F16_E32 => {
                            let e = self.operand(obs, f, 1, lit, Ty::B32, lane)? as i32;
                            let x = fpu::in16(a, mode, &mut fl);
                            let r = x * (2f64).powi(e.clamp(-100, 100));
                            fpu::round16(r, false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_FREXP_MANT_F16_E32 => {
                            let x = fpu::in16(a, mode, &mut fl);
                            fpu::f64_to_f16(frexp_mant(x))
                        }
                        Opcode::V_CVT_F16_I16_E32 | Opcode::V_CVT_F16_U16_E32 => {
                            let v = self.operand(obs, f, 0, lit, Ty::B32, lane)? as u16;
                            let x = if inst.op == Opcode::V_CVT_F16_I16_E32 { v as i16 as f64 } else { v as f64 };
                            fpu::round16(x, false, false, false, mode, &mut fl)
                        }
                        // Approximate, as their f32 forms: computed in f64, rounded once.
                        Opcode::V_SQRT_F16_E32
                        | Opcode::V_RCP_F16_E32
                        | Opcode::V_RSQ_F16_E32
                        | Opcode::V_EXP_F16_E32
                        | Opcode::V_LOG_F16_E32
                        | Opcode::V_SIN_F16_E32
                        | Opcode::V_COS_F16_E32 => {
                            let x = fpu::in16(a, mode, &mut fl);
                            let r = match inst.op {
                                Opcode::V_SQRT_F16_E32 => x.sqrt(),
                                Opcode::V_RCP_F16_E32 => 1.0 / x,
                                Opcode::V_RSQ_F16_E32 => 1.0 / x.sqrt(),
                                Opcode::V_EXP_F16_E32 => x.exp2(),
                                Opcode::V_LOG_F16_E32 => x.log2(),
                                Opcode::V_SIN_F16_E32 => (2.0 * std::f64::consts::PI * x).sin(),
                                _ => (2.0 * std::f64::consts::PI * x).cos(),
                            };
                            if x == 0.0
                                && matches!(
                                    inst.op,
                                    Opcode::V_RCP_F16_E32 | Opcode::V_RSQ_F16_E32 | Opcode::V_LOG_F16_E32
                                )
                            {
                                fl |= flag::DIV0;
                                classify_div0 = inst.op != Opcode::V_LOG_F16_E32;
                            }
                            if x.is_infinite() && matches!(inst.op, Opcode::V_SIN_F16_E32 | Opcode::V_COS_F16_E32) {
                                fl |= flag::INVALID;
                            }
                            fpu::round16(r, false, x.is_nan(), x.is_infinite() || x == 0.0, mode, &mut fl)
                        }
                        Opcode::V_DIV_FIXUP_F16 | Opcode::V_DIV_FIXUP_LEGACY_F16 => {
                            let (den, num) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let (q, d, n) = (fpu::f16_to_f64(a), fpu::f16_to_f64(den), fpu::f16_to_f64(num));
                            if d == 0.0 && n != 0.0 && !n.is_nan() {
                                classify_div0 = true;
                            }
                            let exp16 = |h: u16| ((h >> 10) & 0x1F) as i32;
                            let r = fpu::div_fixup(q, d, n, -25, (exp16(num), exp16(den)), 31, &mut fl);
                            let h = fpu::f64_to_f16(r);
                            if h & 0x7C00 == 0 && h & 0x3FF != 0 && mode.denorm16_64 & 2 == 0 {
                                h & 0x8000
                            } else {
                                h
                            }
                        }
                        _ => return self.unsupported(m),
                    };
                    let r = match omod_factor(f.omod) {
                        Some(k) => fpu::op16(BinOp::Mul, r, fpu::f64_to_f16(k), mode, &mut fl),
                        None => r,
                    };
                    let r = if f.clamp { clamp16(r, self.mode & (1 << 8) != 0) } else { r };
                    let h = r & 0x7FFF;
                    kinds |= classify(h > 0x7C00, h == 0x7C00, h != 0 && h < 0x400, classify_div0);
                    r as u64
                }
            };
            all_flags |= fl;
            // Result width follows the destination type of the mnemonic.
            let dst_w = dst_width(inst.op, kind.1);
            match dst_w {
                64 => {
                    self.wv(obs, f.dst, lane, res as u32);
                    self.wv(obs, f.dst + 1, lane, (res >> 32) as u32);
                }
                16 => {
                    // gfx9 f16 VALU zeroes the high half of the destination
                    // (an SDWA destination select places the half instead).
                    self.write_result(obs, f, lane, res as u32 & 0xFFFF);
                }
                _ => self.write_result(obs, f, lane, res as u32),
            }
        }
        if matches!(inst.op, Opcode::V_DIV_SCALE_F32 | Opcode::V_DIV_SCALE_F64) {
            let sdst = if e32 { VCC } else { f.sdst };
            self.ws64(obs, sdst, vcc_out);
        }
        self.raise(all_flags);
        // Every conversion executed here produces a float (v_cvt_f*), so
        // every result with a class of interest is observed.
        if kinds != 0 {
            self.observe(obs, format, kinds);
        }
        if packed_kinds != 0 {
            self.observe(obs, FpFormat::F16x2, packed_kinds);
        }
        Ok(())
    }
}

/// The mantissa of `x` in [0.5, 1) with `x`'s sign (`v_frexp_mant_*`);
/// NaN for infinities and NaN, `x` itself for zeros.
fn frexp_mant(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    if x == 0.0 {
        return x;
    }
    // The exponent field (or, for subnormals, the leading bit) gives e with
    // 2^(e-1) <= |x| < 2^e.
    let e = if x.is_subnormal() {
        -1022 - (x.abs().to_bits().leading_zeros() as i32 - 12)
    } else {
        ((x.to_bits() >> 52) & 0x7FF) as i32 - 1022
    };
    // Two steps keep the scale factor finite for subnormal x.
    x * (2f64).powi(-e / 2) * (2f64).powi(-e + e / 2)
}

/// The factor of an output modifier (1: ×2, 2: ×4, 3: ×0.5; 0: none).
fn omod_factor(omod: u8) -> Option<f64> {
    match omod {
        1 => Some(2.0),
        2 => Some(4.0),
        3 => Some(0.5),
        _ => None,
    }
}

/// An f16 result clamped to [0, 1] as f32 and f64 results are (-0 stays);
/// a NaN clamps to 0 with DX10_CLAMP.
pub(crate) fn clamp16(h: u16, dx10: bool) -> u16 {
    let nan = h & 0x7FFF > 0x7C00;
    match (nan, h >> 15 != 0) {
        (true, _) if dx10 => 0,
        (true, _) => h,
        (false, true) if h == 0x8000 => h,
        (false, true) => 0,
        (false, false) => h.min(0x3C00),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum W {
    F16,
    F32,
    F64,
}

/// The lane width of an FP opcode: its source type (the type its mnemonic
/// names last), except that conversions to f32 and f64 and `v_cvt_f16_f32`
/// go by their destination, and other conversions from neither f16 nor f64
/// run as f32. `None` for an opcode named by no float type.
pub(crate) fn float_kind(op: Opcode) -> Option<((), W)> {
    use Opcode as O;
    let w = match op {
        O::V_CVT_F32_I32_E32
        | O::V_CVT_F32_U32_E32
        | O::V_CVT_F32_F64_E32
        | O::V_CVT_F32_F16_E32
        | O::V_CVT_F32_UBYTE0_E32
        | O::V_CVT_F32_UBYTE1_E32
        | O::V_CVT_F32_UBYTE2_E32
        | O::V_CVT_F32_UBYTE3_E32 => W::F32,
        O::V_CVT_F64_I32_E32 | O::V_CVT_F64_U32_E32 | O::V_CVT_F64_F32_E32 => W::F64,
        O::V_CVT_F16_F32_E32 | O::V_CVT_F16_I16_E32 | O::V_CVT_F16_U16_E32 => W::F16,
        _ => match (op.family() == Family::Convert, op.data_type()) {
            (_, Some(DataType::F16)) => W::F16,
            (_, Some(DataType::F64)) => W::F64,
            (true, _) | (false, Some(DataType::F32)) => W::F32,
            _ => return None,
        },
    };
    Some(((), w))
}

/// Which byte of its source `v_cvt_f32_ubyteN` converts (N).
fn ubyte_index(op: Opcode) -> u32 {
    match op {
        Opcode::V_CVT_F32_UBYTE1_E32 => 1,
        Opcode::V_CVT_F32_UBYTE2_E32 => 2,
        Opcode::V_CVT_F32_UBYTE3_E32 => 3,
        _ => 0,
    }
}

/// The destination width in bits: f16 results fill the low half, except
/// `v_pack_b32_f16`'s two halves.
pub(crate) fn dst_width(op: Opcode, w: W) -> u32 {
    match w {
        W::F64 => 64,
        W::F16 if op != Opcode::V_PACK_B32_F16 => 16,
        _ => 32,
    }
}
