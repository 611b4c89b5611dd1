//! The table of matrix instructions the emulator executes: dimensions,
//! element types and passes per generation. Shapes, types and CDNA1-3 pass
//! counts (cycles / 4) as AMD's matrix instruction calculator gives them
//! (`tools/mfma_layouts.py` writes its facts; the `layouts_match_the_calculator`
//! check compares them with this table); the gfx950-only instructions take
//! as many passes as their gfx940 counterparts of half the depth (4 for
//! 16x16, 8 for 32x32), which the `s_nop`s LLVM emits in the fixtures meet
//! exactly.

use super::MatrixElem::*;
use super::{MatrixElem, MatrixShape, Pipe};
use xfpx_amd_isa::Opcode as O;

#[allow(clippy::too_many_arguments)]
const fn row(
    names: &'static [O],
    m: usize,
    n: usize,
    k: usize,
    blocks: usize,
    (a, b, output): (MatrixElem, MatrixElem, MatrixElem),
    passes: [u8; 2],
    sparse: bool,
) -> MatrixShape {
    let pipe = match (a, output) {
        (F64, _) => Pipe::Double,
        (F32, _) => Pipe::Single,
        _ => Pipe::Xdl,
    };
    MatrixShape { names, m, n, k, blocks, a, b, output, passes, pipe, sparse }
}

const F32X: (MatrixElem, MatrixElem, MatrixElem) = (F32, F32, F32);
const F16X: (MatrixElem, MatrixElem, MatrixElem) = (F16, F16, F32);
const BF16X: (MatrixElem, MatrixElem, MatrixElem) = (Bf16, Bf16, F32);
const I8X: (MatrixElem, MatrixElem, MatrixElem) = (I8, I8, I32);
const F64X: (MatrixElem, MatrixElem, MatrixElem) = (F64, F64, F64);
const FP8FP8: (MatrixElem, MatrixElem, MatrixElem) = (Fp8, Fp8, F32);
const FP8BF8: (MatrixElem, MatrixElem, MatrixElem) = (Fp8, Bf8, F32);
const BF8FP8: (MatrixElem, MatrixElem, MatrixElem) = (Bf8, Fp8, F32);
const BF8BF8: (MatrixElem, MatrixElem, MatrixElem) = (Bf8, Bf8, F32);

/// Passes: `[gfx908/gfx90a, gfx940+]`; 0 where the generation has no such
/// instruction.
pub const SHAPES: &[MatrixShape] = &[
    // f32 inputs.
    row(&[O::V_MFMA_F32_32X32X1F32, O::V_MFMA_F32_32X32X1_2B_F32], 32, 32, 1, 2, F32X, [16, 16], false),
    row(&[O::V_MFMA_F32_16X16X1F32, O::V_MFMA_F32_16X16X1_4B_F32], 16, 16, 1, 4, F32X, [8, 8], false),
    row(&[O::V_MFMA_F32_4X4X1F32, O::V_MFMA_F32_4X4X1_16B_F32], 4, 4, 1, 16, F32X, [2, 2], false),
    row(&[O::V_MFMA_F32_32X32X2F32, O::V_MFMA_F32_32X32X2_F32], 32, 32, 2, 1, F32X, [16, 16], false),
    row(&[O::V_MFMA_F32_16X16X4F32, O::V_MFMA_F32_16X16X4_F32], 16, 16, 4, 1, F32X, [8, 8], false),
    // f16 inputs.
    row(&[O::V_MFMA_F32_32X32X4F16, O::V_MFMA_F32_32X32X4_2B_F16], 32, 32, 4, 2, F16X, [16, 16], false),
    row(&[O::V_MFMA_F32_16X16X4F16, O::V_MFMA_F32_16X16X4_4B_F16], 16, 16, 4, 4, F16X, [8, 8], false),
    row(&[O::V_MFMA_F32_4X4X4F16, O::V_MFMA_F32_4X4X4_16B_F16], 4, 4, 4, 16, F16X, [2, 2], false),
    row(&[O::V_MFMA_F32_32X32X8F16, O::V_MFMA_F32_32X32X8_F16], 32, 32, 8, 1, F16X, [16, 8], false),
    row(&[O::V_MFMA_F32_16X16X16F16, O::V_MFMA_F32_16X16X16_F16], 16, 16, 16, 1, F16X, [8, 4], false),
    row(&[O::V_MFMA_F32_16X16X32_F16], 16, 16, 32, 1, F16X, [0, 4], false),
    row(&[O::V_MFMA_F32_32X32X16_F16], 32, 32, 16, 1, F16X, [0, 8], false),
    // bf16 inputs: the gfx908 forms (two per register), the "_1k" forms of
    // gfx90a and their gfx940+ spellings, and gfx950's.
    row(&[O::V_MFMA_F32_32X32X2BF16], 32, 32, 2, 2, BF16X, [16, 0], false),
    row(&[O::V_MFMA_F32_16X16X2BF16], 16, 16, 2, 4, BF16X, [8, 0], false),
    row(&[O::V_MFMA_F32_4X4X2BF16], 4, 4, 2, 16, BF16X, [2, 0], false),
    row(&[O::V_MFMA_F32_32X32X4BF16], 32, 32, 4, 1, BF16X, [16, 0], false),
    row(&[O::V_MFMA_F32_16X16X8BF16], 16, 16, 8, 1, BF16X, [8, 0], false),
    row(&[O::V_MFMA_F32_32X32X4BF16_1K, O::V_MFMA_F32_32X32X4_2B_BF16], 32, 32, 4, 2, BF16X, [16, 16], false),
    row(&[O::V_MFMA_F32_16X16X4BF16_1K, O::V_MFMA_F32_16X16X4_4B_BF16], 16, 16, 4, 4, BF16X, [8, 8], false),
    row(&[O::V_MFMA_F32_4X4X4BF16_1K, O::V_MFMA_F32_4X4X4_16B_BF16], 4, 4, 4, 16, BF16X, [2, 2], false),
    row(&[O::V_MFMA_F32_32X32X8BF16_1K, O::V_MFMA_F32_32X32X8_BF16], 32, 32, 8, 1, BF16X, [16, 8], false),
    row(&[O::V_MFMA_F32_16X16X16BF16_1K, O::V_MFMA_F32_16X16X16_BF16], 16, 16, 16, 1, BF16X, [8, 4], false),
    row(&[O::V_MFMA_F32_16X16X32_BF16], 16, 16, 32, 1, BF16X, [0, 4], false),
    row(&[O::V_MFMA_F32_32X32X16_BF16], 32, 32, 16, 1, BF16X, [0, 8], false),
    // i8 inputs.
    row(&[O::V_MFMA_I32_32X32X4I8, O::V_MFMA_I32_32X32X4_2B_I8], 32, 32, 4, 2, I8X, [16, 16], false),
    row(&[O::V_MFMA_I32_16X16X4I8, O::V_MFMA_I32_16X16X4_4B_I8], 16, 16, 4, 4, I8X, [8, 8], false),
    row(&[O::V_MFMA_I32_4X4X4I8, O::V_MFMA_I32_4X4X4_16B_I8], 4, 4, 4, 16, I8X, [2, 2], false),
    row(&[O::V_MFMA_I32_32X32X8I8], 32, 32, 8, 1, I8X, [16, 0], false),
    row(&[O::V_MFMA_I32_16X16X16I8], 16, 16, 16, 1, I8X, [8, 0], false),
    row(&[O::V_MFMA_I32_32X32X16_I8], 32, 32, 16, 1, I8X, [0, 8], false),
    row(&[O::V_MFMA_I32_16X16X32_I8], 16, 16, 32, 1, I8X, [0, 4], false),
    row(&[O::V_MFMA_I32_16X16X64_I8], 16, 16, 64, 1, I8X, [0, 4], false),
    row(&[O::V_MFMA_I32_32X32X32_I8], 32, 32, 32, 1, I8X, [0, 8], false),
    // f64.
    row(&[O::V_MFMA_F64_16X16X4F64, O::V_MFMA_F64_16X16X4_F64], 16, 16, 4, 1, F64X, [8, 8], false),
    row(&[O::V_MFMA_F64_4X4X4F64, O::V_MFMA_F64_4X4X4_4B_F64], 4, 4, 4, 4, F64X, [4, 4], false),
    // 8-bit floats (gfx940+), A type first.
    row(&[O::V_MFMA_F32_16X16X32_FP8_FP8], 16, 16, 32, 1, FP8FP8, [0, 4], false),
    row(&[O::V_MFMA_F32_16X16X32_FP8_BF8], 16, 16, 32, 1, FP8BF8, [0, 4], false),
    row(&[O::V_MFMA_F32_16X16X32_BF8_FP8], 16, 16, 32, 1, BF8FP8, [0, 4], false),
    row(&[O::V_MFMA_F32_16X16X32_BF8_BF8], 16, 16, 32, 1, BF8BF8, [0, 4], false),
    row(&[O::V_MFMA_F32_32X32X16_FP8_FP8], 32, 32, 16, 1, FP8FP8, [0, 8], false),
    row(&[O::V_MFMA_F32_32X32X16_FP8_BF8], 32, 32, 16, 1, FP8BF8, [0, 8], false),
    row(&[O::V_MFMA_F32_32X32X16_BF8_FP8], 32, 32, 16, 1, BF8FP8, [0, 8], false),
    row(&[O::V_MFMA_F32_32X32X16_BF8_BF8], 32, 32, 16, 1, BF8BF8, [0, 8], false),
    // Sparse A (4:2), gfx940+.
    row(&[O::V_SMFMAC_F32_16X16X32_F16], 16, 16, 32, 1, F16X, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X16_F16], 32, 32, 16, 1, F16X, [0, 8], true),
    row(&[O::V_SMFMAC_F32_16X16X32_BF16], 16, 16, 32, 1, BF16X, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X16_BF16], 32, 32, 16, 1, BF16X, [0, 8], true),
    row(&[O::V_SMFMAC_I32_16X16X64_I8], 16, 16, 64, 1, I8X, [0, 4], true),
    row(&[O::V_SMFMAC_I32_32X32X32_I8], 32, 32, 32, 1, I8X, [0, 8], true),
    row(&[O::V_SMFMAC_F32_16X16X64_FP8_FP8], 16, 16, 64, 1, FP8FP8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X64_FP8_BF8], 16, 16, 64, 1, FP8BF8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X64_BF8_FP8], 16, 16, 64, 1, BF8FP8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X64_BF8_BF8], 16, 16, 64, 1, BF8BF8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X32_FP8_FP8], 32, 32, 32, 1, FP8FP8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X32_FP8_BF8], 32, 32, 32, 1, FP8BF8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X32_BF8_FP8], 32, 32, 32, 1, BF8FP8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X32_BF8_BF8], 32, 32, 32, 1, BF8BF8, [0, 8], true),
    // gfx950's sparse forms of twice the depth.
    row(&[O::V_SMFMAC_F32_16X16X64_F16], 16, 16, 64, 1, F16X, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X32_F16], 32, 32, 32, 1, F16X, [0, 8], true),
    row(&[O::V_SMFMAC_F32_16X16X64_BF16], 16, 16, 64, 1, BF16X, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X32_BF16], 32, 32, 32, 1, BF16X, [0, 8], true),
    row(&[O::V_SMFMAC_I32_16X16X128_I8], 16, 16, 128, 1, I8X, [0, 4], true),
    row(&[O::V_SMFMAC_I32_32X32X64_I8], 32, 32, 64, 1, I8X, [0, 8], true),
    row(&[O::V_SMFMAC_F32_16X16X128_FP8_FP8], 16, 16, 128, 1, FP8FP8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X128_FP8_BF8], 16, 16, 128, 1, FP8BF8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X128_BF8_FP8], 16, 16, 128, 1, BF8FP8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_16X16X128_BF8_BF8], 16, 16, 128, 1, BF8BF8, [0, 4], true),
    row(&[O::V_SMFMAC_F32_32X32X64_FP8_FP8], 32, 32, 64, 1, FP8FP8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X64_FP8_BF8], 32, 32, 64, 1, FP8BF8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X64_BF8_FP8], 32, 32, 64, 1, BF8FP8, [0, 8], true),
    row(&[O::V_SMFMAC_F32_32X32X64_BF8_BF8], 32, 32, 64, 1, BF8BF8, [0, 8], true),
];
