//! Packed and mixed-precision VOP3P math: v_pk_* (two halves or two f32
//! lanes per register) and v_fma_mix*.

use super::*;

impl Wave {
    /// `v_fma_mix_f32` / `v_fma_mixlo_f16` / `v_fma_mixhi_f16`: sources are
    /// f32, or f16 halves where op_sel_hi says so (op_sel picks the half); neg
    /// and (in neg_hi) abs modifiers; the FMA rounds to f32, and the f16 forms
    /// then convert, writing one half and keeping the other.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn fma_mix(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let mut all = 0;
        let mut kinds = 0u8;
        for lane in lanes(exec) {
            let mut v = [0f32; 3];
            for i in 0..3 {
                let f16 = f.op_sel_hi >> i & 1 != 0;
                let raw = self.vsrc(obs, f.src[i], lit, if f16 { Ty::F16 } else { Ty::B32 }, lane)?;
                let mut x = if f16 {
                    let h = if f.op_sel >> i & 1 != 0 { raw >> 16 } else { raw } as u16;
                    fpu::f16_to_f64(h) as f32
                } else {
                    f32::from_bits(raw)
                };
                if f.neg_hi >> i & 1 != 0 {
                    x = x.abs();
                }
                if f.neg >> i & 1 != 0 {
                    x = -x;
                }
                v[i] = x;
            }
            let mut fl = 0;
            let r = fpu::fma32(v[0], v[1], v[2], mode, &mut fl);
            let out = match inst.op {
                Opcode::V_FMA_MIX_F32 => {
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), false);
                    r.to_bits()
                }
                _ => {
                    let h = fpu::round16(r as f64, false, r.is_nan(), r.is_infinite(), mode, &mut fl);
                    let a = h & 0x7FFF;
                    kinds |= classify(a > 0x7C00, a == 0x7C00, a != 0 && a < 0x400, false);
                    let old = self.rv(obs, f.dst, lane);
                    if inst.op == Opcode::V_FMA_MIXLO_F16 {
                        (old & 0xFFFF_0000) | h as u32
                    } else {
                        (old & 0xFFFF) | (h as u32) << 16
                    }
                }
            };
            all |= fl;
            self.wv(obs, f.dst, lane, out);
        }
        self.raise(all);
        if kinds != 0 {
            self.observe(obs, if inst.op == Opcode::V_FMA_MIX_F32 { FpFormat::F32 } else { FpFormat::F16 }, kinds);
        }
        Ok(())
    }

    #[allow(clippy::needless_range_loop)]
    pub(crate) fn vop3p(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let mut all = 0;
        let mut kinds = 0u8;
        let format;
        match inst.op {
            Opcode::V_PK_MOV_B32 => {
                // Low dword from S0, high dword from S1; op_sel picks each one's half.
                for lane in lanes(exec) {
                    let a = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let lo = if f.op_sel & 1 != 0 { (a >> 32) as u32 } else { a as u32 };
                    let hi = if f.op_sel & 2 != 0 { (b >> 32) as u32 } else { b as u32 };
                    self.wv(obs, f.dst, lane, lo);
                    self.wv(obs, f.dst + 1, lane, hi);
                }
                return Ok(());
            }
            Opcode::V_PK_ADD_F16
            | Opcode::V_PK_MUL_F16
            | Opcode::V_PK_FMA_F16
            | Opcode::V_PK_MIN_F16
            | Opcode::V_PK_MAX_F16
            | Opcode::V_PK_FMAC_F16_E32 => {
                format = FpFormat::F16x2;
                let nsrc = if inst.op == Opcode::V_PK_FMA_F16 { 3 } else { 2 };
                // The VOP2 form (v_pk_fmac_f16) has no op_sel: halves stay in place.
                let (op_sel, op_sel_hi) =
                    if inst.encoding == Encoding::Vop3p { (f.op_sel, f.op_sel_hi) } else { (0, 7) };
                for lane in lanes(exec) {
                    let mut lo_hi = [[0u16; 3]; 2];
                    for i in 0..nsrc {
                        let v = self.vsrc(obs, f.src[i], lit, Ty::F16, lane)?;
                        let lo = if op_sel >> i & 1 != 0 { v >> 16 } else { v } as u16;
                        let hi = if op_sel_hi >> i & 1 != 0 { v >> 16 } else { v } as u16;
                        lo_hi[0][i] = lo ^ if f.neg >> i & 1 != 0 { 0x8000 } else { 0 };
                        lo_hi[1][i] = hi ^ if f.neg_hi >> i & 1 != 0 { 0x8000 } else { 0 };
                    }
                    if inst.op == Opcode::V_PK_FMAC_F16_E32 {
                        let acc = self.rv(obs, f.dst, lane);
                        lo_hi[0][2] = acc as u16;
                        lo_hi[1][2] = (acc >> 16) as u16;
                    }
                    let mut out = [0u16; 2];
                    for h in 0..2 {
                        let s = lo_hi[h];
                        let mut fl = 0;
                        out[h] = match inst.op {
                            Opcode::V_PK_ADD_F16 => fpu::op16(BinOp::Add, s[0], s[1], mode, &mut fl),
                            Opcode::V_PK_MUL_F16 => fpu::op16(BinOp::Mul, s[0], s[1], mode, &mut fl),
                            Opcode::V_PK_MIN_F16 | Opcode::V_PK_MAX_F16 => {
                                let (x, y) = (fpu::in16(s[0], mode, &mut fl), fpu::in16(s[1], mode, &mut fl));
                                let mx = inst.op == Opcode::V_PK_MAX_F16;
                                fpu::f64_to_f16(fpu::minmax64(x, y, mx, mode, &mut fl))
                            }
                            _ => fpu::fma16(s[0], s[1], s[2], mode, &mut fl),
                        };
                        if f.clamp {
                            out[h] = super::vfloat::clamp16(out[h], self.mode & (1 << 8) != 0);
                        }
                        all |= fl;
                        let a = out[h] & 0x7FFF;
                        kinds |= classify(a > 0x7C00, a == 0x7C00, a != 0 && a < 0x400, false);
                    }
                    self.wv(obs, f.dst, lane, out[0] as u32 | (out[1] as u32) << 16);
                }
            }
            Opcode::V_PK_ADD_F32 | Opcode::V_PK_MUL_F32 | Opcode::V_PK_FMA_F32 => {
                format = FpFormat::F32;
                let nsrc = if inst.op == Opcode::V_PK_FMA_F32 { 3 } else { 2 };
                for lane in lanes(exec) {
                    let mut v = [[0f32; 3]; 2];
                    for i in 0..nsrc {
                        let x = self.vsrc64(obs, f.src[i], lit, Ty::B64, lane)?;
                        let pick = |sel: bool| if sel { (x >> 32) as u32 } else { x as u32 };
                        let lo = pick(f.op_sel >> i & 1 != 0) ^ if f.neg >> i & 1 != 0 { 0x8000_0000 } else { 0 };
                        let hi = pick(f.op_sel_hi >> i & 1 != 0) ^ if f.neg_hi >> i & 1 != 0 { 0x8000_0000 } else { 0 };
                        v[0][i] = f32::from_bits(lo);
                        v[1][i] = f32::from_bits(hi);
                    }
                    let mut out = [0u32; 2];
                    for h in 0..2 {
                        let s = v[h];
                        let mut fl = 0;
                        let r = match inst.op {
                            Opcode::V_PK_ADD_F32 => fpu::op32(BinOp::Add, s[0], s[1], mode, &mut fl),
                            Opcode::V_PK_MUL_F32 => fpu::op32(BinOp::Mul, s[0], s[1], mode, &mut fl),
                            _ => fpu::fma32(s[0], s[1], s[2], mode, &mut fl),
                        };
                        let r = match (f.clamp, r.is_nan()) {
                            (true, false) => r.clamp(0.0, 1.0),
                            (true, true) if self.mode & (1 << 8) != 0 => 0.0,
                            _ => r,
                        };
                        all |= fl;
                        kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), false);
                        out[h] = r.to_bits();
                    }
                    self.wv(obs, f.dst, lane, out[0]);
                    self.wv(obs, f.dst + 1, lane, out[1]);
                }
            }
            _ => return self.unsupported(inst.mnemonic),
        }
        self.raise(all);
        if kinds != 0 {
            self.observe(obs, format, kinds);
        }
        Ok(())
    }
}
