//! Conversions from the 8-bit floats of gfx940+ (`v_cvt_f32_fp8/bf8`, one
//! byte to f32; `v_cvt_pk_f32_fp8/bf8`, two bytes of a word to two f32) in
//! the generation's encoding (FNUZ on gfx940-gfx942, OCP on gfx950; exact),
//! and gfx950's `v_cvt_pk_bf16_f32` (two f32 rounded to bf16, nearest even,
//! NaNs kept quiet, packed with source 0 low). SDWA selects pick the byte
//! or word; the VOP3 forms' op_sel selects stop as unsupported. Only the
//! single conversions' results are observed for the report: the project's
//! view of instructions does not count packed conversions (`v_cvt_pk_*`,
//! bar `v_cvt_pkrtz_f16_f32`) as floating-point sites, and the emulated
//! report keeps to what detect mode checks. The conversions from f32 to
//! the 8-bit floats (`v_cvt_pk_fp8_f32`,
//! `v_cvt_sr_*`) are not modelled: their saturation and NaN rules are not
//! documented publicly.

use super::matrix::generation;
use super::valu::Valu;
use super::*;
use crate::minifloat::{self, F8};

/// An f32 rounded to bf16 (nearest, ties to even); a NaN stays a quiet NaN
/// of the same sign.
pub(crate) fn f32_to_bf16(x: u32) -> u16 {
    if f32::from_bits(x).is_nan() {
        return ((x >> 16) | 0x40) as u16;
    }
    let round = 0x7FFF + ((x >> 16) & 1);
    ((x as u64 + round as u64) >> 16) as u16
}

impl Wave {
    /// Runs `inst` if it is one of this module's conversions.
    pub(crate) fn convert(&mut self, inst: &Instruction, f: &Valu, env: &mut Env<'_>) -> Option<R<()>> {
        let (format, pair) = match inst.op {
            Opcode::V_CVT_F32_FP8_E32 => (F8::E4m3, false),
            Opcode::V_CVT_F32_BF8_E32 => (F8::E5m2, false),
            Opcode::V_CVT_PK_F32_FP8_E32 => (F8::E4m3, true),
            Opcode::V_CVT_PK_F32_BF8_E32 => (F8::E5m2, true),
            Opcode::V_CVT_PK_BF16_F32 => return Some(self.cvt_pk_bf16(inst, f, env.obs)),
            _ => return None,
        };
        Some(self.cvt_from_f8(inst, f, env, format, pair))
    }

    fn cvt_from_f8(&mut self, inst: &Instruction, f: &Valu, env: &mut Env<'_>, format: F8, pair: bool) -> R<()> {
        let m = inst.mnemonic;
        if f.op_sel != 0 || f.src_hi != 0 || (f.abs | f.neg) != 0 || f.clamp || f.omod != 0 {
            return self.unsupported(format!("{m} with modifiers or op_sel"));
        }
        if pair && f.sdwa.is_some_and(|s| s.dst_sel != super::sdwa::Sel::Dword) {
            return self.unsupported(format!("{m} with a destination select"));
        }
        let encoding = generation(env.target).f8_encoding();
        let obs = &mut *env.obs;
        let mut kinds = 0u8;
        for lane in lanes(self.exec()) {
            let v = self.operand(obs, f, 0, inst.literal, Ty::B32, lane)?;
            for (r, byte) in (0..if pair { 2 } else { 1 }).map(|r| (r, v >> (8 * r) & 0xFF)) {
                let x = minifloat::f8_to_f32(byte as u8, format, encoding);
                kinds |= classify(x.is_nan(), x.is_infinite(), false, false);
                if pair {
                    self.wv(obs, f.dst + r as u16, lane, x.to_bits());
                } else {
                    self.write_result(obs, f, lane, x.to_bits());
                }
            }
        }
        if kinds != 0 && !pair {
            self.observe(obs, FpFormat::F32, kinds);
        }
        Ok(())
    }

    fn cvt_pk_bf16(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        if f.op_sel != 0 || f.clamp || f.omod != 0 {
            return self.unsupported(format!("{} with op_sel, clamp or omod", inst.mnemonic));
        }
        let mode = self.fp_mode()?;
        let mut flags = 0;
        for lane in lanes(self.exec()) {
            let mut halves = [0u32; 2];
            for (i, h) in halves.iter_mut().enumerate() {
                // Input denormals as MODE says for f32.
                let x = fpu::in32(f32::from_bits(self.fp_src32(obs, f, i, inst.literal, lane)?), mode, &mut flags);
                *h = f32_to_bf16(x.to_bits()) as u32;
            }
            self.wv(obs, f.dst, lane, halves[0] | halves[1] << 16);
        }
        self.raise(flags & fpu::flag::INPUT_DENORM);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16(1.0f32.to_bits()), 0x3F80);
        // 1 + 2^-8 is a tie: to even (down); 1 + 3·2^-9 rounds up.
        assert_eq!(f32_to_bf16(0x3F80_8000), 0x3F80);
        assert_eq!(f32_to_bf16(0x3F81_8000), 0x3F82);
        assert_eq!(f32_to_bf16(0x3F80_C000), 0x3F81);
        // The largest finite f32 rounds to infinity; infinities and NaNs stay.
        assert_eq!(f32_to_bf16(f32::MAX.to_bits()), 0x7F80);
        assert_eq!(f32_to_bf16(f32::NEG_INFINITY.to_bits()), 0xFF80);
        assert_eq!(f32_to_bf16(0xFF80_0001), 0xFFC0);
        // Subnormals round like the rest.
        assert_eq!(f32_to_bf16(0x0000_8001), 0x0001);
    }
}
