//! Matrix instructions (MFMA, and the 4:2 sparse SMFMAC of gfx940+): the
//! table of their shapes and timing (`shapes.rs`), the lane layout of their
//! A, B, C and D operands, the broadcast controls, and the arithmetic.
//!
//! Layout (AMD's matrix instruction calculator, CDNA1-3, checked entry by
//! entry by `layouts_match_the_calculator`): for an M×N×K instruction with
//! `blocks` blocks, a lane holds `kpl = K·M·blocks/64` consecutive
//! k-elements of one row of A (packed low to high in its registers):
//! A[b][i][k] lies in lane `i + M·(b + blocks·⌊k/kpl⌋)` at position
//! `k mod kpl`; B[b][k][j] likewise with `j` and N. C and D are written in
//! groups of H rows (H = 4; H = 1 for 64-bit results): with G = 64/N groups
//! per register and `bpr = max(1, 64·H/(M·N))` blocks side by side in one
//! register, D[b][i][j] is element `b·⌊M·N/64⌋ + H·⌊i/(H·G)⌋ + i mod H` of
//! lane `N·(b mod bpr) + N·bpr·(⌊i/H⌋ mod G) + j`.
//!
//! Sparse A: each group of four consecutive k holds two stored values (the
//! others are zero); the stored matrix is M×K/2 and lies like a dense A of
//! depth K/2. The index operand (a VGPR) gives, per group, two 2-bit
//! positions (bits [1:0] for the first stored value, [3:2] for the second),
//! four bits per group in the order of the stored pairs in the lane; ABID
//! selects which set of index bits (with CBSZ 0), as the calculator
//! documents for CDNA3. gfx950's deeper sparse and dense forms follow the
//! same rules (no calculator covers CDNA4; extrapolated, not checked).
//!
//! Arithmetic (the hardware's internal order and rounding are not public;
//! this is the emulator's choice, documented in its README): D[i][j] starts
//! at C[i][j] and takes one fused multiply-add per k in increasing k, each
//! rounded to the output format (f32 for f16/bf16/fp8/bf8/f32 inputs, whose
//! conversion to f32 is exact; f64 for f64). A sparse instruction multiplies
//! only its stored values, at the positions their indices give. Integer
//! instructions add products of signed 8-bit values into a wrapping i32.
//! MODE's denormal setting applies as to other f32/f64 operations; flags are
//! raised per fused multiply-add.

mod shapes;

pub use shapes::SHAPES;

use crate::fpu::{self, Flags, FpMode};
use crate::minifloat::{self, F8Encoding, F8};
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
    /// 8-bit float E4M3 (FNUZ on gfx940-gfx942, OCP on gfx950).
    Fp8,
    /// 8-bit float E5M2 (FNUZ on gfx940-gfx942, OCP on gfx950).
    Bf8,
}

impl MatrixElem {
    /// Bits of one element.
    pub fn bits(self) -> usize {
        match self {
            MatrixElem::F32 | MatrixElem::I32 => 32,
            MatrixElem::F64 => 64,
            MatrixElem::F16 | MatrixElem::Bf16 => 16,
            MatrixElem::I8 | MatrixElem::Fp8 | MatrixElem::Bf8 => 8,
        }
    }
}

/// The pipeline an instruction runs in (its hazard rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// f32-input MFMA ("SMFMA" in LLVM's hazard rules).
    Single,
    /// Low-precision inputs (f16, bf16, i8, fp8, bf8): the XDL pipeline.
    Xdl,
    /// f64 ("DGEMM").
    Double,
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

impl Generation {
    /// The encoding of the 8-bit float formats.
    pub fn f8_encoding(self) -> F8Encoding {
        if self == Generation::Gfx950 {
            F8Encoding::Ocp
        } else {
            F8Encoding::Fnuz
        }
    }
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
    /// Element types of A, B, and C/D.
    pub a: MatrixElem,
    pub b: MatrixElem,
    pub output: MatrixElem,
    /// Passes (4 cycles each) on gfx908/gfx90a and on gfx940+ (gfx950
    /// included); 0 where the generation has no such instruction.
    pub passes: [u8; 2],
    pub pipe: Pipe,
    /// 4:2 structured-sparse A (SMFMAC): the index operand replaces C, and
    /// D accumulates in place.
    pub sparse: bool,
}

/// The broadcast and negation controls of one matrix instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Controls {
    /// Dense: blocks of A broadcast in groups of 2^cbsz from block `abid`
    /// of each group. Sparse: with cbsz 0, `abid` selects the index set.
    pub cbsz: u8,
    pub abid: u8,
    /// Lane pattern of B (dense, not f64 on gfx940+).
    pub blgp: u8,
    /// Negation of A, B and C (f64 on gfx940+, encoded in the blgp bits).
    pub neg: [bool; 3],
}

/// The table row of a matrix opcode, if the emulator executes it.
pub fn shape(op: Opcode) -> Option<&'static MatrixShape> {
    SHAPES.iter().find(|s| s.names.contains(&op))
}

impl MatrixShape {
    /// The depth of A as stored (half of K for sparse A).
    fn stored_k(&self) -> usize {
        if self.sparse {
            self.k / 2
        } else {
            self.k
        }
    }
    /// Stored A elements per lane.
    pub fn a_per_lane(&self) -> usize {
        self.stored_k() * self.m * self.blocks / 64
    }
    /// B elements per lane.
    pub fn b_per_lane(&self) -> usize {
        self.k * self.n * self.blocks / 64
    }
    /// 32-bit registers of A per lane.
    pub fn a_regs(&self) -> usize {
        (self.a_per_lane() * self.a.bits()).div_ceil(32)
    }
    /// 32-bit registers of B per lane.
    pub fn b_regs(&self) -> usize {
        (self.b_per_lane() * self.b.bits()).div_ceil(32)
    }
    /// C (or D) elements per lane.
    pub fn output_per_lane(&self) -> usize {
        self.m * self.n * self.blocks / 64
    }
    /// 32-bit registers of C (or D) per lane.
    pub fn output_regs(&self) -> usize {
        self.output_per_lane() * self.output.bits() / 32
    }
    /// (lane, element) of stored A[b][i][k] (k below the stored depth).
    pub fn a_slot(&self, b: usize, i: usize, k: usize) -> (usize, usize) {
        let kpl = self.a_per_lane();
        (i + self.m * (b + self.blocks * (k / kpl)), k % kpl)
    }
    /// (lane, element) of B[b][k][j].
    pub fn b_slot(&self, b: usize, k: usize, j: usize) -> (usize, usize) {
        let kpl = self.b_per_lane();
        (j + self.n * (b + self.blocks * (k / kpl)), k % kpl)
    }
    /// (lane, element) of C[b][i][j] and D[b][i][j].
    pub fn output_slot(&self, b: usize, i: usize, j: usize) -> (usize, usize) {
        let h = if self.output.bits() == 64 { 1 } else { 4 };
        let g = 64 / self.n;
        let bpr = (64 * h / (self.m * self.n)).max(1);
        let e = b * (self.m * self.n / 64) + h * (i / (h * g)) + i % h;
        (self.n * (b % bpr) + self.n * bpr * ((i / h) % g) + j, e)
    }
    /// (lane, low bit) of the four index bits of group `g` (four k) of
    /// sparse A row `i`.
    pub fn index_slot(&self, i: usize, g: usize, set: usize) -> (usize, usize) {
        let (lane, e) = self.a_slot(0, i, 2 * g);
        // Four bits per stored pair; a set covers one lane's pairs.
        (lane, 4 * (e / 2) + set * 2 * self.a_per_lane())
    }
    /// Passes on `generation` (0: not available there).
    pub fn passes(&self, generation: Generation) -> u8 {
        self.passes[matches!(generation, Generation::Gfx940 | Generation::Gfx950) as usize]
    }
    /// Wait states a VALU instruction (`memory` false) or a memory
    /// instruction needs between this instruction and its read of the
    /// result: the rules of LLVM's AMDGPU hazard recognizer. gfx908: passes
    /// plus 2 before `v_accvgpr_read`; gfx90a: passes plus 3; gfx940+: passes
    /// plus 2 for f32 inputs, plus 3 for XDL (gfx950: plus 4 beyond two
    /// passes); f64 on
    /// gfx90a+: 11 (16x16; gfx950: 19) or 6 (4x4) for VALU reads, 18 or 9
    /// for memory (the gfx950 figure is what LLVM 22 emits).
    pub fn result_wait_states(&self, generation: Generation, memory: bool) -> u64 {
        let p = self.passes(generation) as u64;
        match (generation, self.pipe) {
            (Generation::Gfx908, _) => p + 2,
            (_, Pipe::Double) => match (self.m, memory) {
                (4, false) => 6,
                (4, true) => 9,
                (_, false) if generation == Generation::Gfx950 => 19,
                (_, false) => 11,
                (_, true) => 18,
            },
            (Generation::Gfx90a, _) => p + 3,
            (_, Pipe::Single) => p + 2,
            (Generation::Gfx940, _) => p + 3,
            (Generation::Gfx950, _) => p + 3 + (p != 2) as u64,
        }
    }
    /// Why `controls` cannot apply to this instruction, if they cannot.
    pub fn check_controls(&self, c: &Controls) -> Result<(), String> {
        if self.sparse {
            if c.blgp != 0 || c.neg != [false; 3] {
                return Err("blgp on a sparse matrix instruction".into());
            }
            // With cbsz 0, abid picks one of the index sets of a register.
            let sets = 32 / (2 * self.a_per_lane());
            if c.cbsz == 0 && c.abid as usize >= sets {
                return Err(format!("abid:{} beyond the {sets} index sets", c.abid));
            }
            return Ok(());
        }
        if c.cbsz != 0 || c.abid != 0 {
            let group = 1usize << c.cbsz;
            if group > self.blocks || c.abid as usize >= group {
                return Err(format!("cbsz:{} abid:{} on {} blocks", c.cbsz, c.abid, self.blocks));
            }
        }
        Ok(())
    }
}

/// The lane of B that lane `lane` reads under BLGP pattern `blgp`.
fn blgp_lane(lane: usize, blgp: u8) -> usize {
    match blgp {
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        4..=7 => 16 * (blgp as usize - 4) + lane % 16,
        _ => lane,
    }
}

/// Element `e` of `bits` bits of an operand given as per-register lane values.
fn element(regs: &[[u32; 64]], bits: usize, lane: usize, e: usize) -> u64 {
    match bits {
        64 => regs[2 * e][lane] as u64 | (regs[2 * e + 1][lane] as u64) << 32,
        32 => regs[e][lane] as u64,
        16 => (regs[e / 2][lane] >> (16 * (e % 2)) & 0xFFFF) as u64,
        _ => (regs[e / 4][lane] >> (8 * (e % 4)) & 0xFF) as u64,
    }
}

/// A non-f64, non-integer input element as f32 (exact).
fn input_f32(ty: MatrixElem, bits: u64, encoding: F8Encoding) -> f32 {
    match ty {
        MatrixElem::F16 => fpu::f16_to_f64(bits as u16) as f32,
        MatrixElem::Bf16 => minifloat::bf16_to_f32(bits as u16),
        MatrixElem::Fp8 => minifloat::f8_to_f32(bits as u8, F8::E4m3, encoding),
        MatrixElem::Bf8 => minifloat::f8_to_f32(bits as u8, F8::E5m2, encoding),
        _ => f32::from_bits(bits as u32),
    }
}

/// The operands of one matrix instruction, as per-register lane values: A,
/// B, C (the accumulator; D's registers for sparse instructions) and, for
/// sparse ones, the index register.
#[derive(Debug)]
pub struct Operands<'a> {
    pub a: &'a [[u32; 64]],
    pub b: &'a [[u32; 64]],
    pub c: &'a [[u32; 64]],
    pub index: Option<&'a [u32; 64]>,
}

/// D = A·B + C over all 64 lanes; the result has `output_regs()` registers.
/// Returns the result and the OR of the raised flags.
pub fn multiply(
    s: &MatrixShape,
    generation: Generation,
    ops: &Operands<'_>,
    controls: &Controls,
    mode: FpMode,
) -> (Vec<[u32; 64]>, Flags) {
    let mut d = vec![[0u32; 64]; s.output_regs()];
    let mut flags: Flags = 0;
    let encoding = generation.f8_encoding();
    let sign = |neg: bool, x: f64| if neg { -x } else { x };
    // The (A, B) element bits multiplied into D[blk][i][j], in k order.
    let terms = |blk: usize, i: usize, j: usize| -> Vec<(u64, u64)> {
        let b_at = |k: usize| {
            let (lb, eb) = s.b_slot(blk, k, j);
            element(ops.b, s.b.bits(), blgp_lane(lb, controls.blgp), eb)
        };
        if !s.sparse {
            let group = 1usize << controls.cbsz;
            let a_blk = blk / group * group + controls.abid as usize;
            return (0..s.k)
                .map(|k| {
                    let (la, ea) = s.a_slot(a_blk, i, k);
                    (element(ops.a, s.a.bits(), la, ea), b_at(k))
                })
                .collect();
        }
        let set = if controls.cbsz == 0 { controls.abid as usize } else { 0 };
        let mut out = Vec::with_capacity(s.k / 2);
        for g in 0..s.k / 4 {
            let (li, bit) = s.index_slot(i, g, set);
            let nibble = ops.index.map_or(0, |r| r[li] >> bit & 0xF) as usize;
            let stored = [(2 * g, nibble & 3), (2 * g + 1, nibble >> 2)];
            for p in 0..4 {
                for &(kc, pos) in &stored {
                    if pos == p {
                        let (la, ea) = s.a_slot(0, i, kc);
                        out.push((element(ops.a, s.a.bits(), la, ea), b_at(4 * g + p)));
                    }
                }
            }
        }
        out
    };
    for blk in 0..s.blocks {
        for i in 0..s.m {
            for j in 0..s.n {
                let (lane, e) = s.output_slot(blk, i, j);
                match s.output {
                    MatrixElem::F32 => {
                        let mut acc = f32::from_bits(element(ops.c, 32, lane, e) as u32);
                        for (x, y) in terms(blk, i, j) {
                            let (x, y) = (input_f32(s.a, x, encoding), input_f32(s.b, y, encoding));
                            acc = fpu::fma32(x, y, acc, mode, &mut flags);
                        }
                        d[e][lane] = acc.to_bits();
                    }
                    MatrixElem::F64 => {
                        let mut acc = sign(controls.neg[2], f64::from_bits(element(ops.c, 64, lane, e)));
                        for (x, y) in terms(blk, i, j) {
                            let x = sign(controls.neg[0], f64::from_bits(x));
                            let y = sign(controls.neg[1], f64::from_bits(y));
                            acc = fpu::fma64(x, y, acc, mode, &mut flags);
                        }
                        d[2 * e][lane] = acc.to_bits() as u32;
                        d[2 * e + 1][lane] = (acc.to_bits() >> 32) as u32;
                    }
                    _ => {
                        let mut acc = element(ops.c, 32, lane, e) as u32 as i32;
                        for (x, y) in terms(blk, i, j) {
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
mod tests;
