//! Sub-dword addressing (SDWA) of VOP1/VOP2/VOPC: the fields of the SDWA
//! dword, the source selects (a byte or word of a 32-bit source, zero- or
//! sign-extended) and the destination select (where the result lands, and
//! what happens to the bits it does not cover).

use super::*;

/// A part of a dword, as SDWA's `*_sel` fields name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sel {
    Byte(u8),
    Word(u8),
    Dword,
}

impl Sel {
    /// The select of a 3-bit field (0-3 bytes, 4-5 words, 6 the dword);
    /// `None` for the unused code 7 (the decoder rejects it).
    fn of(code: u32) -> Option<Sel> {
        Some(match code {
            0..=3 => Sel::Byte(code as u8),
            4 | 5 => Sel::Word(code as u8 - 4),
            6 => Sel::Dword,
            _ => return None,
        })
    }

    /// (bit offset, width) of the part.
    fn bits(self) -> (u32, u32) {
        match self {
            Sel::Byte(n) => (8 * n as u32, 8),
            Sel::Word(n) => (16 * n as u32, 16),
            Sel::Dword => (0, 32),
        }
    }

    /// The selected part of `v` in the low bits, zero- or sign-extended.
    pub(crate) fn extract(self, v: u32, sext: bool) -> u32 {
        let (at, width) = self.bits();
        if width == 32 {
            return v;
        }
        let part = v >> at & ((1u32 << width) - 1);
        if sext {
            ((part << (32 - width)) as i32 >> (32 - width)) as u32
        } else {
            part
        }
    }
}

/// What happens to the destination bits outside `dst_sel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unused {
    /// Zero.
    Pad,
    /// Bits above the part copy its top bit; bits below are zero.
    Sext,
    /// Kept from the register's previous value.
    Preserve,
}

/// The SDWA controls of one instruction (source modifiers abs/neg, clamp
/// and omod go to the common [`Valu`] fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sdwa {
    pub(crate) src_sel: [Sel; 2],
    pub(crate) sext: [bool; 2],
    pub(crate) dst_sel: Sel,
    pub(crate) dst_unused: Unused,
}

impl Sdwa {
    /// Places a 32-bit result into the destination's previous value `old`.
    pub(crate) fn place(&self, result: u32, old: u32) -> u32 {
        let (at, width) = self.dst_sel.bits();
        if width == 32 {
            return result;
        }
        let mask = ((1u32 << width) - 1) << at;
        let part = (result << at) & mask;
        match self.dst_unused {
            Unused::Pad => part,
            Unused::Sext if result >> (width - 1) & 1 != 0 => part | !((1u64 << (at + width)) - 1) as u32,
            Unused::Sext => part,
            Unused::Preserve => (old & !mask) | part,
        }
    }
}

/// Fills `f` from a VOP1/VOP2/VOPC instruction's first dword `w0` and SDWA
/// dword `d`: sources (bit 23/31: source 0/1 is an SGPR or constant code
/// rather than a VGPR), selects, extension, abs/neg, and for VOP1/VOP2
/// dst_sel, dst_unused, clamp and omod, for VOPC the mask destination
/// (bit 15: the SGPR pair in [14:8], else VCC).
pub(crate) fn fields(encoding: Encoding, w0: u32, d: u32, f: &mut Valu) -> Option<()> {
    f.src[0] = (d & 0xFF) as u16 + if d & (1 << 23) != 0 { 0 } else { 256 };
    f.src[1] = ((w0 >> 9) & 0xFF) as u16 + if d & (1 << 31) != 0 { 0 } else { 256 };
    f.src[2] = VCC;
    f.dst = ((w0 >> 17) & 0xFF) as u16;
    f.neg = ((d >> 20) & 1 | ((d >> 28) & 1) << 1) as u8;
    f.abs = ((d >> 21) & 1 | ((d >> 29) & 1) << 1) as u8;
    let (dst_sel, dst_unused) = if encoding == Encoding::Vopc {
        f.sdst = if d & (1 << 15) != 0 { ((d >> 8) & 0x7F) as u16 } else { VCC };
        (Sel::Dword, Unused::Pad)
    } else {
        f.sdst = VCC;
        f.clamp = d & (1 << 13) != 0;
        f.omod = ((d >> 14) & 3) as u8;
        let unused = match (d >> 11) & 3 {
            0 => Unused::Pad,
            1 => Unused::Sext,
            2 => Unused::Preserve,
            _ => return None,
        };
        (Sel::of((d >> 8) & 7)?, unused)
    };
    f.sdwa = Some(Sdwa {
        src_sel: [Sel::of((d >> 16) & 7)?, Sel::of((d >> 24) & 7)?],
        sext: [d & (1 << 19) != 0, d & (1 << 27) != 0],
        dst_sel,
        dst_unused,
    });
    Some(())
}

impl Wave {
    /// Source `i` of a VALU instruction as 32 bits in `lane`, after its SDWA
    /// select (sources 0 and 1 of an SDWA form) or op_sel's half (VOP3
    /// 16-bit operations); source 0 of a DPP form as gathered.
    pub(crate) fn operand(
        &self,
        obs: &mut Observations,
        f: &Valu,
        i: usize,
        lit: Option<u32>,
        ty: Ty,
        lane: usize,
    ) -> R<u32> {
        if i == 0 && f.dpp.is_some() {
            return Ok(self.dpp_src0(0, lane));
        }
        let v = self.vsrc(obs, f.src[i], lit, ty, lane)?;
        Ok(match f.sdwa {
            Some(s) if i < 2 => s.src_sel[i].extract(v, s.sext[i]),
            _ if f.src_hi >> i & 1 != 0 => v >> 16,
            _ => v,
        })
    }

    /// Source `i` of a VALU instruction as 64 bits in `lane` (source 0 of a
    /// DPP form from the lane its control names).
    pub(crate) fn src64(
        &self,
        obs: &mut Observations,
        f: &Valu,
        i: usize,
        lit: Option<u32>,
        ty: Ty,
        lane: usize,
    ) -> R<u64> {
        if i == 0 && f.dpp.is_some() {
            return Ok(self.dpp_src0(0, lane) as u64 | (self.dpp_src0(1, lane) as u64) << 32);
        }
        self.vsrc64(obs, f.src[i], lit, ty, lane)
    }

    /// Writes a 32-bit result of a VALU instruction to its destination in
    /// `lane`, through the SDWA destination select where there is one.
    pub(crate) fn write_result(&mut self, obs: &mut Observations, f: &Valu, lane: usize, v: u32) {
        let v = match f.sdwa {
            Some(s) if s.dst_sel != Sel::Dword => {
                let old = if s.dst_unused == Unused::Preserve { self.rv(obs, f.dst, lane) } else { 0 };
                s.place(v, old)
            }
            _ => v,
        };
        self.wv(obs, f.dst, lane, v);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, wave};
    use super::*;

    /// IEEE mode (MODE bit 9) off, denormals kept: where compilers use omod.
    const NO_IEEE: u32 = 0xF0;
    const IEEE: u32 = 0xF0 | 1 << 9;

    fn f16(x: f32) -> u32 {
        crate::fpu::f64_to_f16(x as f64) as u32
    }

    /// Encodings from llvm-mc-19 (gfx90a and gfx942 give the same words).
    #[test]
    fn sdwa_forms_select_extend_and_place() {
        let mut w = wave(IEEE);
        // v_mul_u32_u24_sdwa v7, v4, s14 dst_sel:DWORD dst_unused:UNUSED_PAD
        //   src0_sel:WORD_0 src1_sel:DWORD (the Sobel app's form; s14 by S1)
        w.vgpr[4][0] = 0xABCD_1234;
        w.sgpr[14] = 0x0100_0003;
        run(&mut w, &[0x100E_1CF9, 0x8604_0604]).expect("runs");
        assert_eq!(w.vgpr[7][0], 0x1234 * 3);
        // v_sub_u32_sdwa v10, v9, v0 ... src1_sel:BYTE_0 (the sort app's form)
        w.vgpr[9][0] = 1000;
        w.vgpr[0][0] = 0x1_FF05;
        run(&mut w, &[0x6A14_00F9, 0x0006_0609]).expect("runs");
        assert_eq!(w.vgpr[10][0], 995);
        // v_cvt_f32_f16_sdwa v0, v1 src0_sel:WORD_1
        w.vgpr[1][0] = f16(3.0) << 16 | f16(1.0);
        run(&mut w, &[0x7E00_16F9, 0x0005_0601]).expect("runs");
        assert_eq!(w.vgpr[0][0], 3.0f32.to_bits());
        // v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE
        //   src0_sel:WORD_1 src1_sel:WORD_0
        w.vgpr[0][0] = 0xDEAD_BEEF;
        w.vgpr[1][0] = f16(2.0) << 16;
        w.vgpr[2][0] = 0x1111_0000 | f16(1.0);
        run(&mut w, &[0x3E00_04F9, 0x0405_1501]).expect("runs");
        assert_eq!(w.vgpr[0][0], f16(3.0) << 16 | 0xBEEF);
        // v_add_u32_sdwa v0, sext(v1), v2 src0_sel:BYTE_1 src1_sel:WORD_1
        w.vgpr[1][0] = 0x0000_FE00;
        w.vgpr[2][0] = 0x0010_FFFF;
        run(&mut w, &[0x6800_04F9, 0x0509_0601]).expect("runs");
        assert_eq!(w.vgpr[0][0], 14);
        // v_mov_b32_sdwa v0, v1 dst_sel:BYTE_2 dst_unused:UNUSED_SEXT src0_sel:BYTE_0
        w.vgpr[1][0] = 0x1285;
        w.vgpr[1][1] = 0x127F;
        run(&mut w, &[0x7E00_02F9, 0x0000_0A01]).expect("runs");
        assert_eq!((w.vgpr[0][0], w.vgpr[0][1]), (0xFF85_0000, 0x007F_0000));
        // v_cndmask_b32_sdwa v0, v1, v2, vcc dst_sel:WORD_0 dst_unused:UNUSED_PAD
        //   src0_sel:BYTE_3 src1_sel:BYTE_1
        w.sgpr[VCC as usize] = 0b01;
        w.vgpr[1][0] = 0xAB00_0000;
        w.vgpr[1][1] = 0xAB00_0000;
        w.vgpr[2][0] = 0x0000_CD00;
        w.vgpr[2][1] = 0x0000_CD00;
        run(&mut w, &[0x0000_04F9, 0x0103_0401]).expect("runs");
        assert_eq!((w.vgpr[0][0], w.vgpr[0][1]), (0xCD, 0xAB));
        // v_add_co_u32_sdwa v0, vcc, v1, v2 clamp: unsigned saturation.
        w.vgpr[1][0] = 0xFFFF_FFF0;
        w.vgpr[2][0] = 0x20;
        w.vgpr[1][1] = 1;
        w.vgpr[2][1] = 2;
        run(&mut w, &[0x3200_04F9, 0x0606_2601]).expect("runs");
        assert_eq!((w.vgpr[0][0], w.vgpr[0][1]), (u32::MAX, 3));
        assert_eq!(w.sgpr[VCC as usize] & 3, 0b01);
    }

    #[test]
    fn sdwa_float_modifiers_and_inline_constants() {
        let mut w = wave(IEEE);
        // v_mul_f32_sdwa v0, -|v1|, v2 clamp dst_sel:DWORD dst_unused:UNUSED_PAD
        //   src0_sel:DWORD src1_sel:WORD_0
        w.vgpr[1][0] = (-2.0f32).to_bits();
        w.vgpr[2][0] = 0x1234_0000; // WORD_0 is +0.0 as f32 bits
        w.vgpr[1][1] = (-2.0f32).to_bits();
        w.vgpr[2][1] = 0x0000_0001; // WORD_0 is the smallest subnormal
        run(&mut w, &[0x0A00_04F9, 0x0436_2601]).expect("runs");
        // -2 * +0 = -0, which clamp keeps (the whole dword would be a
        // positive number and give +0).
        assert_eq!(w.vgpr[0][0], (-0.0f32).to_bits());
        // -|-2| * 2^-149 < 0 clamps to +0 (without neg or abs the product is
        // positive, without clamp negative).
        assert_eq!(w.vgpr[0][1], 0);
        // v_mul_f16_sdwa v0, |v1|, -v2 dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE
        //   src0_sel:WORD_1 src1_sel:WORD_1
        w.vgpr[0][0] = 0x1234_5678;
        w.vgpr[1][0] = f16(-2.0) << 16 | f16(7.0);
        w.vgpr[2][0] = f16(4.0) << 16 | f16(7.0);
        run(&mut w, &[0x4400_04F9, 0x1525_1401]).expect("runs");
        assert_eq!(w.vgpr[0][0], 0x1234_0000 | f16(-8.0));
        // v_add_f32_sdwa v0, 1.0, v2: source 0 an inline constant (S0).
        w.vgpr[2][0] = 2.0f32.to_bits();
        run(&mut w, &[0x0200_04F9, 0x0686_06F2]).expect("runs");
        assert_eq!(w.vgpr[0][0], 3.0f32.to_bits());
    }

    #[test]
    fn sdwa_compares_select_and_name_their_mask() {
        let mut w = wave(IEEE);
        w.sgpr[VCC as usize] = 0xAAAA;
        // v_cmp_gt_f16_sdwa s[2:3], v1, v2 src0_sel:WORD_1 src1_sel:WORD_0
        for l in 0..64 {
            w.vgpr[1][l] = f16(if l % 2 == 0 { 2.0 } else { 0.5 }) << 16 | f16(9.0);
            w.vgpr[2][l] = f16(5.0) << 16 | f16(1.0);
        }
        run(&mut w, &[0x7C48_04F9, 0x0405_8201]).expect("runs");
        assert_eq!(w.sgpr[2], 0x5555_5555);
        assert_eq!(w.sgpr[3], 0x5555_5555);
        assert_eq!(w.sgpr[VCC as usize], 0xAAAA, "VCC is not the destination");
        // v_cmp_lt_i32_sdwa vcc, sext(v1), v2 src0_sel:BYTE_0 src1_sel:DWORD
        for l in 0..64 {
            w.vgpr[1][l] = 0x77FF;
            w.vgpr[2][l] = 0;
        }
        run(&mut w, &[0x7D82_04F9, 0x0608_0001]).expect("runs");
        assert_eq!(w.vcc(), u64::MAX, "-1 < 0 for every lane");
    }

    #[test]
    fn output_modifier_scales_without_ieee_mode_and_is_refused_with_it() {
        // v_cvt_f16_f32_sdwa v0, v1 mul:2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE
        let words = [0x7E00_14F9, 0x0006_5501];
        let mut w = wave(NO_IEEE);
        w.vgpr[0][0] = 0x1234_5678;
        w.vgpr[1][0] = 1.5f32.to_bits();
        run(&mut w, &words).expect("runs");
        assert_eq!(w.vgpr[0][0], f16(3.0) << 16 | 0x5678);
        let mut w = wave(IEEE);
        let e = run(&mut w, &words).expect_err("omod under IEEE mode");
        assert!(e.to_string().contains("output modifier under IEEE mode"), "{e}");
    }

    #[test]
    fn selects_extract_and_extend() {
        let v = 0x8A7F_C301;
        assert_eq!(Sel::Byte(0).extract(v, false), 0x01);
        assert_eq!(Sel::Byte(1).extract(v, false), 0xC3);
        assert_eq!(Sel::Byte(1).extract(v, true), 0xFFFF_FFC3);
        assert_eq!(Sel::Byte(2).extract(v, true), 0x7F);
        assert_eq!(Sel::Byte(3).extract(v, false), 0x8A);
        assert_eq!(Sel::Word(0).extract(v, true), 0xFFFF_C301);
        assert_eq!(Sel::Word(1).extract(v, false), 0x8A7F);
        assert_eq!(Sel::Word(1).extract(v, true), 0xFFFF_8A7F);
        assert_eq!(Sel::Dword.extract(v, true), v);
    }

    #[test]
    fn destination_selects_pad_extend_or_preserve() {
        let s = |dst_sel, dst_unused| Sdwa { src_sel: [Sel::Dword; 2], sext: [false; 2], dst_sel, dst_unused };
        let old = 0x1234_5678;
        assert_eq!(s(Sel::Word(1), Unused::Pad).place(0xABCD_8001, old), 0x8001_0000);
        assert_eq!(s(Sel::Word(1), Unused::Preserve).place(0xABCD_8001, old), 0x8001_5678);
        assert_eq!(s(Sel::Word(0), Unused::Sext).place(0x0000_8001, old), 0xFFFF_8001);
        assert_eq!(s(Sel::Word(0), Unused::Sext).place(0x0000_7001, old), 0x0000_7001);
        assert_eq!(s(Sel::Byte(1), Unused::Sext).place(0x80, old), 0xFFFF_8000);
        assert_eq!(s(Sel::Byte(2), Unused::Preserve).place(0xEE, old), 0x12EE_5678);
        assert_eq!(s(Sel::Byte(3), Unused::Sext).place(0xFF, old), 0xFF00_0000);
        assert_eq!(s(Sel::Dword, Unused::Preserve).place(0xABCD_8001, old), 0xABCD_8001);
    }
}
