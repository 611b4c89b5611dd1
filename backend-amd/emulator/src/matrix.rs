//! Matrix (MFMA) instructions: one table of their shapes and timing, the
//! lane layout of their A, B, C and D operands, and the arithmetic.
//!
//! Layout (AMD CDNA ISA guides; AMD's matrix instruction calculator prints
//! the same placement): for an M×N×K instruction with `blocks` independent
//! blocks, a lane holds `K·M·blocks/64` consecutive k-elements of one row of
//! A (packed low to high in its registers): element A[b][i][k] lies in lane
//! `i + M·(b·K/kpl + k/kpl)`, at position `k mod kpl` (kpl = elements per
//! lane); B[b][k][j] likewise with `j` for `i`. The result D[b][i][j] (and C)
//! lies in lane `j + N·((i/4) mod (64/N))`, at element
//! `b·(M·N/64) + 4·(i / (4·64/N)) + i mod 4` (rows in groups of four); the
//! f64 instruction instead spreads rows one by one, D[i][j] in lane
//! `j + N·(i mod (64/N))` at element `i / (64/N)`, each element two
//! registers. Checked entry by entry against AMD's matrix instruction
//! calculator (CDNA1-3) for every instruction of the table.
//!
//! Arithmetic (the hardware's internal order and rounding are not public;
//! this is the emulator's choice, documented in its README): D[i][j] starts
//! at C[i][j] and takes one fused multiply-add per k in increasing k, each
//! rounded to the output format (f32 for f16/bf16/f32 inputs, whose
//! conversion to f32 is exact; f64 for f64). Integer instructions add
//! products of signed 8-bit values into a wrapping i32. MODE's denormal
//! setting applies as to other f32/f64 operations; flags are raised per
//! fused multiply-add.

use crate::fpu::{self, Flags, FpMode};
use xfpx_amd_isa::Opcode;

/// The element type of an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixElem {
    F32,
    F64,
    F16,
    Bf16,
    I8,
    I32,
}

impl MatrixElem {
    /// Bits of one element.
    pub fn bits(self) -> usize {
        match self {
            MatrixElem::F32 | MatrixElem::I32 => 32,
            MatrixElem::F64 => 64,
            MatrixElem::F16 | MatrixElem::Bf16 => 16,
            MatrixElem::I8 => 8,
        }
    }
}

/// The pipeline an instruction runs in on gfx940+ (its hazard rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// f32-input MFMA ("SMFMA" in LLVM's hazard rules).
    Single,
    /// Low-precision inputs (f16, bf16, i8): the XDL pipeline.
    Xdl,
    /// f64 ("DGEMM").
    Double,
}

/// How the rows of C and D spread over lane groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSpread {
    /// Four consecutive rows per lane group, then the next group.
    Fours,
    /// One row per lane group, round robin (f64 results).
    Single,
}

/// The CDNA generation, for per-generation facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    Gfx908,
    Gfx90a,
    /// gfx940, gfx941 and gfx942.
    Gfx940,
    Gfx950,
}

/// One matrix instruction (all its target-specific spellings).
#[derive(Debug)]
pub struct MatrixShape {
    /// The opcodes of this operation (gfx908/gfx90a and gfx940+ spellings).
    pub names: &'static [Opcode],
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub blocks: usize,
    /// Element type of A and B.
    pub input: MatrixElem,
    /// Element type of C and D.
    pub output: MatrixElem,
    /// Passes (4 cycles each) on gfx908/gfx90a and on gfx940+ (gfx950
    /// included); 0 where the
    /// generation has no such instruction.
    pub passes: [u8; 2],
    pub pipe: Pipe,
    pub rows: RowSpread,
}

use MatrixElem::*;

/// The matrix instructions the emulator executes. Pass counts: cycles / 4 as
/// AMD's CDNA 1/2/3 instruction tables give them; the wait-state rules built
/// on them (see [`MatrixShape::result_wait_states`]) are checked against the
/// `s_nop`s LLVM emits in the fixtures (the fixture suite runs with zero
/// hazards).
pub const SHAPES: &[MatrixShape] = &[
    MatrixShape {
        names: &[Opcode::V_MFMA_F32_32X32X1F32, Opcode::V_MFMA_F32_32X32X1_2B_F32],
        m: 32,
        n: 32,
        k: 1,
        blocks: 2,
        input: F32,
        output: F32,
        passes: [16, 16],
        pipe: Pipe::Single,
        rows: RowSpread::Fours,
    },
    MatrixShape {
        names: &[Opcode::V_MFMA_F32_16X16X16F16, Opcode::V_MFMA_F32_16X16X16_F16],
        m: 16,
        n: 16,
        k: 16,
        blocks: 1,
        input: F16,
        output: F32,
        passes: [8, 4],
        pipe: Pipe::Xdl,
        rows: RowSpread::Fours,
    },
    MatrixShape {
        names: &[Opcode::V_MFMA_F32_16X16X16BF16_1K, Opcode::V_MFMA_F32_16X16X16_BF16],
        m: 16,
        n: 16,
        k: 16,
        blocks: 1,
        input: Bf16,
        output: F32,
        passes: [8, 4],
        pipe: Pipe::Xdl,
        rows: RowSpread::Fours,
    },
    MatrixShape {
        names: &[Opcode::V_MFMA_I32_16X16X16I8],
        m: 16,
        n: 16,
        k: 16,
        blocks: 1,
        input: I8,
        output: I32,
        passes: [8, 0],
        pipe: Pipe::Xdl,
        rows: RowSpread::Fours,
    },
    MatrixShape {
        names: &[Opcode::V_MFMA_I32_16X16X32_I8],
        m: 16,
        n: 16,
        k: 32,
        blocks: 1,
        input: I8,
        output: I32,
        passes: [0, 4],
        pipe: Pipe::Xdl,
        rows: RowSpread::Fours,
    },
    MatrixShape {
        names: &[Opcode::V_MFMA_F64_16X16X4F64, Opcode::V_MFMA_F64_16X16X4_F64],
        m: 16,
        n: 16,
        k: 4,
        blocks: 1,
        input: F64,
        output: F64,
        passes: [8, 8],
        pipe: Pipe::Double,
        rows: RowSpread::Single,
    },
];

/// The table row of a matrix opcode, if the emulator executes it.
pub fn shape(op: Opcode) -> Option<&'static MatrixShape> {
    SHAPES.iter().find(|s| s.names.contains(&op))
}

impl MatrixShape {
    /// A (or B) elements per lane.
    pub fn input_per_lane(&self) -> usize {
        self.k * self.m * self.blocks / 64
    }
    /// 32-bit registers of A (or B) per lane.
    pub fn input_regs(&self) -> usize {
        (self.input_per_lane() * self.input.bits()).div_ceil(32)
    }
    /// C (or D) elements per lane.
    pub fn output_per_lane(&self) -> usize {
        self.m * self.n * self.blocks / 64
    }
    /// 32-bit registers of C (or D) per lane.
    pub fn output_regs(&self) -> usize {
        self.output_per_lane() * self.output.bits() / 32
    }
    /// (lane, element) of A[b][i][k]; B[b][k][j] is `input_slot(b, j, k)`.
    pub fn input_slot(&self, b: usize, row: usize, k: usize) -> (usize, usize) {
        let kpl = self.input_per_lane();
        (row + self.m * (b * (self.k / kpl) + k / kpl), k % kpl)
    }
    /// (lane, element) of C[b][i][j] and D[b][i][j].
    pub fn output_slot(&self, b: usize, i: usize, j: usize) -> (usize, usize) {
        let groups = 64 / self.n;
        let block = b * (self.m * self.n / 64);
        match self.rows {
            RowSpread::Fours => (j + self.n * ((i / 4) % groups), block + 4 * (i / (4 * groups)) + i % 4),
            RowSpread::Single => (j + self.n * (i % groups), block + i / groups),
        }
    }
    /// Passes on `generation` (0: not available there).
    pub fn passes(&self, generation: Generation) -> u8 {
        self.passes[matches!(generation, Generation::Gfx940 | Generation::Gfx950) as usize]
    }
    /// Wait states (independent instructions or `s_nop` cycles) a VALU or
    /// memory instruction needs between this instruction and its read of the
    /// result: the rules of LLVM's AMDGPU hazard recognizer. gfx908: passes
    /// plus 2 before `v_accvgpr_read`; gfx90a: passes plus 3, f64 16x16: 18;
    /// gfx940+: passes plus 2 for f32 inputs, plus 3 for XDL (gfx950: plus
    /// 4), f64 16x16: 18.
    pub fn result_wait_states(&self, generation: Generation) -> u64 {
        let p = self.passes(generation) as u64;
        match (generation, self.pipe) {
            (Generation::Gfx908, _) => p + 2,
            (_, Pipe::Double) => 18,
            (Generation::Gfx90a, _) => p + 3,
            (_, Pipe::Single) => p + 2,
            (Generation::Gfx940, _) => p + 3,
            (Generation::Gfx950, _) => p + 4,
        }
    }
}

/// Element `e` of an operand given as per-register lane values.
fn element(regs: &[[u32; 64]], ty: MatrixElem, lane: usize, e: usize) -> u64 {
    match ty.bits() {
        64 => regs[2 * e][lane] as u64 | (regs[2 * e + 1][lane] as u64) << 32,
        32 => regs[e][lane] as u64,
        16 => (regs[e / 2][lane] >> (16 * (e % 2)) & 0xFFFF) as u64,
        _ => (regs[e / 4][lane] >> (8 * (e % 4)) & 0xFF) as u64,
    }
}

/// An f16/bf16/f32 input element as f32 (exact).
fn input_f32(ty: MatrixElem, bits: u64) -> f32 {
    match ty {
        F16 => fpu::f16_to_f64(bits as u16) as f32,
        Bf16 => f32::from_bits((bits as u32) << 16),
        _ => f32::from_bits(bits as u32),
    }
}

/// D = A·B + C over all 64 lanes. `a`, `b`, `c` hold each operand's
/// registers (lane values); the result has `output_regs()` registers.
/// Returns the result and the OR of the raised flags.
pub fn multiply(
    s: &MatrixShape,
    a: &[[u32; 64]],
    b: &[[u32; 64]],
    c: &[[u32; 64]],
    mode: FpMode,
) -> (Vec<[u32; 64]>, Flags) {
    let mut d = vec![[0u32; 64]; s.output_regs()];
    let mut flags: Flags = 0;
    for blk in 0..s.blocks {
        for i in 0..s.m {
            for j in 0..s.n {
                let (lane, e) = s.output_slot(blk, i, j);
                let ab = |k: usize| {
                    let (la, ea) = s.input_slot(blk, i, k);
                    let (lb, eb) = s.input_slot(blk, j, k);
                    (element(a, s.input, la, ea), element(b, s.input, lb, eb))
                };
                match s.output {
                    F32 => {
                        let mut acc = f32::from_bits(element(c, F32, lane, e) as u32);
                        for k in 0..s.k {
                            let (x, y) = ab(k);
                            acc = fpu::fma32(input_f32(s.input, x), input_f32(s.input, y), acc, mode, &mut flags);
                        }
                        d[e][lane] = acc.to_bits();
                    }
                    F64 => {
                        let mut acc = f64::from_bits(element(c, F64, lane, e));
                        for k in 0..s.k {
                            let (x, y) = ab(k);
                            acc = fpu::fma64(f64::from_bits(x), f64::from_bits(y), acc, mode, &mut flags);
                        }
                        d[2 * e][lane] = acc.to_bits() as u32;
                        d[2 * e + 1][lane] = (acc.to_bits() >> 32) as u32;
                    }
                    _ => {
                        let mut acc = element(c, I32, lane, e) as u32 as i32;
                        for k in 0..s.k {
                            let (x, y) = ab(k);
                            acc = acc.wrapping_add((x as u8 as i8 as i32) * (y as u8 as i8 as i32));
                        }
                        d[e][lane] = acc as u32;
                    }
                }
            }
        }
    }
    (d, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_is_used_exactly_once() {
        for s in SHAPES {
            let mut seen_in = vec![0u32; 64 * s.input_per_lane()];
            let mut seen_out = vec![0u32; 64 * s.output_per_lane()];
            for b in 0..s.blocks {
                for r in 0..s.m {
                    for k in 0..s.k {
                        let (l, e) = s.input_slot(b, r, k);
                        assert!(l < 64 && e < s.input_per_lane(), "{}", s.names[0]);
                        seen_in[l * s.input_per_lane() + e] += 1;
                    }
                    for j in 0..s.n {
                        let (l, e) = s.output_slot(b, r, j);
                        assert!(l < 64 && e < s.output_per_lane(), "{}", s.names[0]);
                        seen_out[l * s.output_per_lane() + e] += 1;
                    }
                }
            }
            assert!(seen_in.iter().all(|&n| n == 1), "{}: A slots", s.names[0]);
            assert!(seen_out.iter().all(|&n| n == 1), "{}: D slots", s.names[0]);
        }
    }

    #[test]
    fn register_counts_match_the_decoder() {
        // The decoder's table gives each instruction's operand widths.
        for s in SHAPES {
            for name in s.names {
                let rows: Vec<_> = xfpx_amd_isa::table::rows().iter().filter(|r| r.op == *name).collect();
                assert!(!rows.is_empty(), "{name} not in the decoder's table");
                for r in rows {
                    let w = |f: xfpx_amd_isa::encoding::Field| {
                        r.operands.iter().find(|o| o.field == f).map(|o| o.width as usize)
                    };
                    assert_eq!(w(xfpx_amd_isa::encoding::Field::Vdst), Some(s.output_regs()), "{name}");
                    assert_eq!(w(xfpx_amd_isa::encoding::Field::Src0), Some(s.input_regs()), "{name}");
                }
            }
        }
    }

    #[test]
    fn known_layouts() {
        let s = shape(Opcode::V_MFMA_F32_32X32X1F32).expect("row");
        // Block 1's A row 5 is lane 37; D[1][9][3]: lane 3 (rows 8-11 lie in
        // the lower half), register 16 + 4 + 1; D[0][4][3]: lane 35, register 0.
        assert_eq!(s.input_slot(1, 5, 0), (37, 0));
        assert_eq!(s.output_slot(1, 9, 3), (3, 21));
        assert_eq!(s.output_slot(0, 4, 3), (35, 0));
        let s = shape(Opcode::V_MFMA_F32_16X16X16F16).expect("row");
        // A[2][7]: lane 2 + 16, half 3; D[6][1]: lane 1 + 16, register 2.
        assert_eq!(s.input_slot(0, 2, 7), (18, 3));
        assert_eq!(s.output_slot(0, 6, 1), (17, 2));
        let s = shape(Opcode::V_MFMA_F64_16X16X4F64).expect("row");
        // D[1][0]: lane 16, v[0:1]; D[5][1]: lane 17, v[2:3]; D[14][15]: lane 47, v[6:7].
        assert_eq!(s.output_slot(0, 1, 0), (16, 0));
        assert_eq!(s.output_slot(0, 5, 1), (17, 1));
        assert_eq!(s.output_slot(0, 14, 15), (47, 3));
    }

    #[test]
    fn f16_product_accumulates_in_k_order() {
        let s = shape(Opcode::V_MFMA_F32_16X16X16_F16).expect("row");
        // A = all 1.0, B = all 2.0, C = 0.5: every D element is 32.5.
        let one = 0x3C00u32 | 0x3C00 << 16;
        let two = 0x4000u32 | 0x4000 << 16;
        let a = vec![[one; 64]; 2];
        let b = vec![[two; 64]; 2];
        let c = vec![[0.5f32.to_bits(); 64]; 4];
        let (d, fl) = multiply(s, &a, &b, &c, FpMode::from_mode(0xF0));
        assert!(d.iter().all(|r| r.iter().all(|&x| f32::from_bits(x) == 32.5)));
        assert_eq!(fl, 0);
    }

    #[test]
    fn a_nan_input_reaches_one_row_only() {
        let s = shape(Opcode::V_MFMA_F64_16X16X4F64).expect("row");
        let mut a = vec![[0u32; 64]; 2];
        a[0] = [1.0f64.to_bits() as u32; 64];
        a[1] = [(1.0f64.to_bits() >> 32) as u32; 64];
        let (l, _) = s.input_slot(0, 3, 2);
        a[0][l] = f64::NAN.to_bits() as u32;
        a[1][l] = (f64::NAN.to_bits() >> 32) as u32;
        let b = a.clone();
        // A quiet NaN propagates without raising a flag.
        let (d, fl) = multiply(s, &a, &b, &vec![[0; 64]; 8], FpMode::from_mode(0xF0));
        assert_eq!(fl, 0);
        for i in 0..16 {
            for j in 0..16 {
                let (l, e) = s.output_slot(0, i, j);
                let v = f64::from_bits(d[2 * e][l] as u64 | (d[2 * e + 1][l] as u64) << 32);
                assert_eq!(v.is_nan(), i == 3 || j == 3, "D[{i}][{j}] = {v}");
            }
        }
    }
}
