//! Instruction execution, one module per family. Each adds the methods of
//! its family to [`Wave`]; `Wave::step` routes an instruction by encoding.

mod compare;
mod convert;
mod dpp;
mod gpr_idx;
mod lds;
mod matrix;
mod memory;
mod packed;
mod scalar;
mod sdwa;
mod subdword;
mod valu;
mod vfloat;

pub(crate) use valu::Valu;

use crate::decode::{Encoding, Instruction, Target};
use crate::fpu::{self, flag, BinOp, Flags, FpMode};
use crate::matrix::Generation;
use crate::memory::{GlobalMemory, Lds};
use crate::timing::{Counter, Hazard, HazardKind, Reg};
use crate::wave::*;
use xfpx_amd_isa::{Opcode, Operand as IsaOperand, RegFile};
use xfpx_common::class::FpFormat;

pub(crate) fn classify(nan: bool, inf: bool, sub: bool, div0: bool) -> u8 {
    let mut k = 0;
    if nan {
        k |= 1;
    }
    if inf {
        k |= if div0 { 8 } else { 2 };
    }
    if sub {
        k |= 4;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;

    pub(super) fn run(wave: &mut Wave, words: &[u32]) -> R<Step> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let inst = decode(Target::Gfx942, &bytes).map_err(|e| ExecError::Decode { pc: 0, what: e.to_string() })?;
        let mut global = GlobalMemory::new();
        let mut lds = Lds::new(0);
        let mut obs = Observations::default();
        wave.step(&inst, &mut Env { global: &mut global, lds: &mut lds, obs: &mut obs, target: Target::Gfx942 })
    }

    pub(super) fn wave(mode: u32) -> Wave {
        let mut w = Wave::new(0, mode);
        w.sgpr[EXEC as usize] = u32::MAX;
        w.sgpr[EXEC as usize + 1] = u32::MAX;
        w
    }

    // v_rcp_f32_e32 v0, v1 / s_getreg_b32 s0, hwreg(HW_REG_TRAPSTS, 0, 9) /
    // s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS, 0, 9), 0 (encodings from llvm-mc).
    const V_RCP_V0_V1: u32 = 0x7E00_4501;
    const S_GETREG_TRAPSTS: u32 = 0xB880_4003;
    const S_SETREG_IMM_TRAPSTS: [u32; 2] = [0xBA00_4003, 0];

    #[test]
    fn trapsts_is_sticky_readable_clearable_and_gated_by_dx10_clamp() {
        // IEEE mode, denormals kept, DX10_CLAMP clear: 1/0 records DIV0.
        let mut w = wave(0xF0 | 1 << 9);
        w.vgpr[1][7] = 0; // lane 7 divides by zero, the others by 0 too (zeroed file)
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts & flag::DIV0, flag::DIV0);
        // Sticky: a clean operation keeps the bit.
        for l in 0..64 {
            w.vgpr[1][l] = 2.0f32.to_bits();
        }
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts & flag::DIV0, flag::DIV0);
        run(&mut w, &[S_GETREG_TRAPSTS]).expect("runs");
        assert_eq!(w.sgpr[0] & flag::DIV0, flag::DIV0);
        run(&mut w, &S_SETREG_IMM_TRAPSTS).expect("runs");
        assert_eq!(w.trapsts, 0);
        run(&mut w, &[S_GETREG_TRAPSTS]).expect("runs");
        assert_eq!(w.sgpr[0], 0);
        // DX10_CLAMP set: the same division records nothing.
        let mut w = wave(0xF0 | 1 << 9 | 1 << 8);
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts, 0);
        assert_eq!(w.vgpr[0][0], f32::INFINITY.to_bits());
    }

    #[test]
    fn matrix_instructions_outside_the_table_or_with_broadcasts_are_refused() {
        let mut w = wave(0xF0);
        // v_mfma_f32_16x16x8_xf32 v[0:3], v[2:3], v[4:5], 0 (llvm-mc-19):
        // xf32's internal rounding is not public.
        let e = run(&mut w, &[0xD3BE_0000, 0x0202_0902]).expect_err("xf32 is not modelled");
        assert!(e.to_string().contains("unsupported matrix instruction"), "{e}");
        // v_mfma_f32_16x16x16_f16 with cbsz:1 (bit 8 of the first word).
        let e = run(&mut w, &[0xD3CD_0102, 0x0202_0902]).expect_err("cbsz is not modelled");
        assert!(e.to_string().contains("cbsz"), "{e}");
        // The plain form runs, and a partial EXEC mask is refused.
        run(&mut w, &[0xD3CD_0002, 0x0202_0902]).expect("runs");
        w.sgpr[EXEC as usize] = 1;
        let e = run(&mut w, &[0xD3CD_0002, 0x0202_0902]).expect_err("partial EXEC");
        assert!(e.to_string().contains("EXEC"), "{e}");
    }

    #[test]
    fn cvt_f32_ubyte_n_converts_byte_n() {
        let mut w = wave(0xF0);
        for l in 0..64 {
            w.vgpr[1][l] = 0xC8A0_3C00 | l as u32;
        }
        // v_cvt_f32_ubyteN_e32 v0, v1 (llvm-mc-19), then ubyte3's VOP3 form.
        for (words, byte) in [
            (&[0x7E00_2301u32][..], 0),
            (&[0x7E00_2501][..], 1),
            (&[0x7E00_2701][..], 2),
            (&[0x7E00_2901][..], 3),
            (&[0xD154_0000, 0x0000_0101][..], 3),
        ] {
            run(&mut w, words).expect("runs");
            for l in [0usize, 5, 63] {
                let want = ((0xC8A0_3C00u32 | l as u32) >> (8 * byte) & 0xFF) as f32;
                assert_eq!(w.vgpr[0][l], want.to_bits(), "byte {byte} lane {l}");
            }
        }
    }

    /// The integer operations and conversions added with the opcode
    /// coverage list, one lane each (encodings from llvm-mc-19, gfx942).
    #[test]
    fn integer_operations_and_conversions() {
        let mut w = wave(0xF0);
        let set = |w: &mut Wave, r: usize, v: u32| w.vgpr[r][0] = v;
        let cases: &[(&[u32], [u32; 3], u32)] = &[
            // v_cvt_flr_i32_f32 v0, v1: floor(-2.5) = -3; v_cvt_rpi: floor(-2.5 + 0.5) = -2.
            (&[0x7E00_1B01], [(-2.5f32).to_bits(), 0, 0], -3i32 as u32),
            (&[0x7E00_1901], [(-2.5f32).to_bits(), 0, 0], -2i32 as u32),
            // v_cvt_i16_f16 of -3.75 (0xC380): -3; v_cvt_u16_f16 of 70000 (inf in f16): 65535.
            (&[0x7E00_7901], [0xC380, 0, 0], 0xFFFD),
            (&[0x7E00_7701], [0x7C00, 0, 0], 0xFFFF),
            // v_sat_pk_u8_i16 of (300, -5): (255, 0).
            (&[0x7E00_9F01], [300 | 0xFFFB << 16, 0, 0], 0x00FF),
            // v_xnor_b32, v_mul_hi_u32_u24 (0xFFFFFF²>>32), v_mul_hi_i32_i24 (-1 · 5 >> 32 = -1).
            (&[0x7A00_0501], [0xF0F0_F0F0, 0xFF00_FF00, 0], 0xF00F_F00F),
            (&[0x1200_0501], [0xFFFF_FFFF, 0x00FF_FFFF, 0], 0xFFFF),
            (&[0x0E00_0501], [0x00FF_FFFF, 5, 0], u32::MAX),
            // v_mad_i32_i24: -2 · 3 + 10; v_alignbyte_b32: bytes 1-4 of {v1, v2}.
            (&[0xD1C2_0000, 0x040E_0501], [0x00FF_FFFE, 3, 10], 4),
            (&[0xD1CF_0000, 0x040E_0501], [0x1122_3344, 0x5566_7788, 1], 0x4455_6677),
            // v_mad_u32_u16 (low halves), v_med3_i16, v_min3_u16.
            (&[0xD1F1_0000, 0x040E_0501], [0x1_0003, 0x2_0004, 100], 112),
            (&[0xD1FB_0000, 0x040E_0501], [0xFFFF, 7, 3], 3),
            (&[0xD1F6_0000, 0x040E_0501], [0xFFFF, 7, 3], 3),
            // v_add_i32 wraps without clamp; v_cvt_pk_i16_i32 saturates.
            (&[0xD29C_0000, 0x0002_0501], [i32::MAX as u32, 1, 0], i32::MIN as u32),
            (&[0xD298_0000, 0x0002_0501], [70000, -70000i32 as u32, 0], 0x8000_7FFF),
        ];
        for (words, [a, b, c], want) in cases {
            set(&mut w, 1, *a);
            set(&mut w, 2, *b);
            set(&mut w, 3, *c);
            run(&mut w, words).unwrap_or_else(|e| panic!("{words:x?}: {e}"));
            assert_eq!(w.vgpr[0][0], *want, "{words:x?}");
        }
    }

    #[test]
    fn agprs_live_at_the_accumulation_offset_of_the_unified_file() {
        let mut w = wave(0xF0);
        w.acc_base = 8;
        for l in 0..64 {
            w.vgpr[1][l] = l as u32;
        }
        // v_accvgpr_write_b32 a2, v1 (gfx942: VOP3P opcode 0x59)
        let bytes: Vec<u8> = [0xD3D9_4002u32, 0x1800_0101].iter().flat_map(|x| x.to_le_bytes()).collect();
        let i = xfpx_amd_isa::decode(xfpx_amd_isa::Target::Gfx942, &bytes).expect("decodes");
        assert_eq!(i.to_string(), "v_accvgpr_write_b32 a2, v1");
        run(&mut w, &[0xD3D9_4002, 0x1800_0101]).expect("runs");
        assert_eq!(w.vgpr[10][5], 5, "a2 is register 8 + 2 of the unified file");
        // v_accvgpr_read_b32 v3, a2 back.
        let bytes: Vec<u8> = [0xD3D8_4003u32, 0x1800_0102].iter().flat_map(|x| x.to_le_bytes()).collect();
        let i = xfpx_amd_isa::decode(xfpx_amd_isa::Target::Gfx942, &bytes).expect("decodes");
        assert_eq!(i.to_string(), "v_accvgpr_read_b32 v3, a2");
        run(&mut w, &[0xD3D8_4003, 0x1800_0102]).expect("runs");
        assert_eq!(w.vgpr[3][63], 63);
        // v_accvgpr_mov_b32 a1, a2 (VOP1; llvm-mc-19 encoding 0x7E02A502).
        run(&mut w, &[0x7E02_A502]).expect("runs");
        assert_eq!(w.vgpr[9][17], 17);
    }
}
