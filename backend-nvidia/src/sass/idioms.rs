//! Compiler idioms whose floating-point results cannot be exceptional, so
//! that the fast detector need not check them.
//!
//! The reciprocal of a constant that is finite, nonzero and whose
//! reciprocal is normal (`MUFU.RCP64H R7, 11.50899505615234375`, a
//! division by a constant) is neither NaN, infinite nor subnormal.
//!
//! The subnormal-range scaling that CUDA's IEEE `rsqrtf`, `sqrt`,
//! division and logarithms emit before a `MUFU`:
//!
//! ```text
//! FSETP.GEU.AND P1, PT, |R16|, 1.175494350822287508e-38, PT
//! @!P1 FMUL R16, R16, 16777216
//! ```
//!
//! The multiplication runs only where `|R16|` is below the bound and a
//! number, and scales exactly by a power of two large enough that no
//! nonzero result is subnormal and small enough that none overflows: its
//! result is never NaN, infinite or subnormal. The comparisons and
//! scalings that qualify are tables in [`super::opcodes`].
//!
//! The fast path of CUDA's f64 division, which every exceptional quotient
//! leaves for the slow path (a subroutine that computes the quotient
//! again):
//!
//! ```text
//! DFMA R234, R6, R4, R234                  // the quotient q
//! FFMA R0, RZ, 2.6096560955047607422, R235 // q's high word, as an f32
//! FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT
//! @P0 BRA P1, 0xad90                       // fast: P0 and P1
//! ...                                      // slow: CALL.REL.NOINC ...
//! ```
//!
//! The high word of an f64 infinity or NaN is an f32 NaN, for which the
//! comparison is false; that of a zero or subnormal f64 is at most the
//! bound. So an exceptional q always falls through to the slow block.
//! A reciprocal (`MUFU.RCP64H`, which flushes subnormals) of a zero,
//! subnormal or NaN divisor is infinite or NaN, and a quotient made from
//! it by additions and multiplications is too: that divisor also takes
//! the slow path. [`division_slow_path`] finds such blocks.

use super::opcodes::{MAGNITUDE_ABOVE, MAGNITUDE_AT_MOST, RECIPROCALS, SCALINGS};
use super::parse::{RegKind, Register, SassInstr, SassOperand};
use super::view::is_register_test;
use super::SassKernel;
use xfpx_common::cfg::Cfg;
use xfpx_common::class::FpFormat;
use xfpx_common::view::{Operand, RegFile, RegRange, ValueFlow};

/// Per instruction: its result cannot be NaN, infinite or subnormal.
/// `block_of` gives each instruction's basic block (the guard's
/// comparison is looked for in the same block).
pub fn unexceptional_results(kernel: &SassKernel, block_of: &[usize]) -> Vec<bool> {
    (0..kernel.instrs.len())
        .map(|i| constant_reciprocal(kernel, i) || bounded_scaling(kernel, block_of, i).unwrap_or(false))
        .collect()
}

/// Whether the value of `reg` read by instruction `i` was written, in the
/// same block, by the compiler's register test (`FFMA R0, RZ, R9, R235`
/// before `FSETP.GT.AND P0, PT, |R0|, ...` in an f64 division): the
/// high word of an f64 seen as an f32, not a value of the program. A NaN
/// there is the f64's infinity or NaN, checked where the f64 is made.
pub fn reads_register_test(kernel: &SassKernel, block_of: &[usize], i: usize, reg: RegRange) -> bool {
    latest_write_in_block(kernel, block_of, i, reg)
        .is_some_and(|j| is_register_test(&kernel.instrs[j]) && !kernel.view.instrs[j].guarded)
}

/// A block ending in the fast-path test of an f64 division (see the
/// module comment): the quotient it tests and the first instruction of
/// the slow block, which every exceptional quotient reaches with the
/// quotient's registers as the test saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivisionSlowPath {
    pub block: usize,
    pub quotient: RegRange,
    pub slow_entry: usize,
}

/// The high word of the largest subnormal f64, seen as an f32: a test
/// bound at least this sends zero and subnormal quotients to the slow path.
const SUBNORMAL_HIGH_WORD_BOUND: u32 = 0x000F_FFFF;

/// Whether `block` ends in an f64 division's fast-path test.
pub fn division_slow_path(kernel: &SassKernel, cfg: &Cfg, block: usize) -> Option<DivisionSlowPath> {
    let b = cfg.blocks.get(block)?;
    let last = b.end.checked_sub(1)?;
    let bra = &kernel.instrs[last];
    let guard = bra.guard.as_ref()?;
    // `@P0 BRA [P1,] target`: falls through wherever P0 is false
    if bra.opcode != "BRA" || guard.pred.negated || guard.pred.is_zero() {
        return None;
    }
    // the slow block: entered only by falling through, at an unguarded instruction
    let slow_entry = b.end;
    let slow = *cfg.block_of.get(slow_entry)?;
    let entered_from: Vec<usize> = (0..cfg.blocks.len()).filter(|&x| cfg.blocks[x].succs.contains(&slow)).collect();
    if cfg.blocks[slow].start != slow_entry || entered_from != [block] || kernel.view.instrs[slow_entry].guarded {
        return None;
    }
    let block_of = &cfg.block_of;
    // P0 = |t| > bound, false for NaN
    let cmp = latest_write_in_block(kernel, block_of, last, RegRange::new(RegFile::Predicate, guard.pred.num, 1))?;
    let c = &kernel.instrs[cmp];
    if c.opcode != "FSETP" || c.guard.is_some() || !c.modifiers.iter().any(|m| m == "AND") {
        return None;
    }
    if !MAGNITUDE_ABOVE.iter().any(|m| c.modifiers.iter().any(|x| x == m)) {
        return None;
    }
    let (p, t, bound, combine) =
        (reg(c.operands.first())?, reg(c.operands.get(2))?, imm(c.operands.get(3))?, reg(c.operands.get(4))?);
    if p.kind != RegKind::P || p.num != guard.pred.num || p.negated || !combine.is_zero() || combine.negated {
        return None;
    }
    // NaN bounds compare as not large enough
    let large_enough = bound >= f64::from(f32::from_bits(SUBNORMAL_HIGH_WORD_BOUND));
    if t.kind != RegKind::R || !t.absolute || t.is_zero() || !large_enough {
        return None;
    }
    // t = q's high word, by the register test
    let test = latest_write_in_block(kernel, block_of, cmp, RegRange::new(RegFile::PerLane, t.num, 1))?;
    let ins = &kernel.instrs[test];
    if !is_register_test(ins) || ins.guard.is_some() {
        return None;
    }
    let high = reg(ins.operands.get(3)).filter(|h| h.kind == RegKind::R && !h.is_zero() && h.num % 2 == 1)?;
    let quotient = RegRange::new(RegFile::PerLane, high.num - 1, 2);
    // the tested word is the one the block ends with
    if (test + 1..=last).any(|j| kernel.view.instrs[j].writes(&quotient)) {
        return None;
    }
    Some(DivisionSlowPath { block, quotient, slow_entry })
}

/// Whether the f64 reciprocal at `rcp` (a `MUFU.RCP64H`) feeds the
/// quotient `path` tests, through unguarded arithmetic of its block that
/// keeps an infinity or NaN ([`ValueFlow::Propagates`]).
pub fn reciprocal_feeds_quotient(kernel: &SassKernel, cfg: &Cfg, rcp: usize, path: &DivisionSlowPath) -> bool {
    let ins = &kernel.instrs[rcp];
    if reciprocal_format(ins) != Some(FpFormat::F64) || cfg.block_of.get(rcp) != Some(&path.block) {
        return false;
    }
    let Some(first) = kernel.view.instrs[rcp].defs.first().and_then(Operand::reg) else {
        return false;
    };
    // registers holding a value made from the reciprocal, word by word
    // (MUFU.RCP64H writes the high word of its pair)
    let word = |n: u16| RegRange::new(RegFile::PerLane, n, 1);
    let words = |r: RegRange| (r.first..r.first + u16::from(r.count)).map(word);
    let mut tainted: Vec<RegRange> = words(first).collect();
    let mut quotient_tainted = false;
    for j in rcp + 1..cfg.blocks[path.block].end {
        let v = &kernel.view.instrs[j];
        let regs = |ops: &[Operand]| -> Vec<RegRange> {
            ops.iter().filter_map(Operand::reg).filter(|r| r.file == RegFile::PerLane).collect()
        };
        let reads = regs(&v.uses).iter().any(|u| tainted.iter().any(|t| t.overlaps(u)));
        let carries = reads && v.flow == ValueFlow::Propagates && !v.guarded;
        for d in regs(&v.defs) {
            tainted.retain(|t| !t.overlaps(&d));
            if carries {
                tainted.extend(words(d));
            }
            if d.overlaps(&path.quotient) {
                quotient_tainted = carries && d.contains(&path.quotient);
            }
        }
    }
    quotient_tainted
}

/// The last instruction before `i`, in `i`'s block, that writes `reg`.
fn latest_write_in_block(kernel: &SassKernel, block_of: &[usize], i: usize, reg: RegRange) -> Option<usize> {
    (0..i).rev().take_while(|&j| block_of.get(j) == block_of.get(i)).find(|&j| kernel.view.instrs[j].writes(&reg))
}

/// The format a reciprocal the compiler starts divisions with reads
/// ([`RECIPROCALS`]), if `ins` is one (`MUFU.RCP`, `MUFU.RCP64H`).
pub fn reciprocal_format(ins: &SassInstr) -> Option<FpFormat> {
    RECIPROCALS.iter().find(|(op, m, _)| *op == ins.opcode && ins.modifiers == [*m]).map(|&(_, _, f)| f)
}

/// The reciprocal of a constant with a normal, finite reciprocal.
fn constant_reciprocal(kernel: &SassKernel, i: usize) -> bool {
    let ins = &kernel.instrs[i];
    let Some(format) = reciprocal_format(ins) else {
        return false;
    };
    let Some(v) = imm(ins.operands.get(1)) else {
        return false;
    };
    let (min, max) = match format {
        FpFormat::F64 => (f64::MIN_POSITIVE, f64::MAX),
        _ => (f64::from(f32::MIN_POSITIVE), f64::from(f32::MAX)),
    };
    v.is_finite() && v != 0.0 && (1.0 / v).abs() >= min && (1.0 / v).abs() <= max
}

fn imm(o: Option<&SassOperand>) -> Option<f64> {
    match o {
        Some(SassOperand::ImmValue { value, .. }) => Some(*value),
        _ => None,
    }
}

fn reg(o: Option<&SassOperand>) -> Option<&Register> {
    match o {
        Some(SassOperand::Reg(r)) => Some(r),
        _ => None,
    }
}

/// `Some(true)` when instruction `i` is a guarded in-place scaling whose
/// guard bounds the scaled magnitude (see the module comment).
fn bounded_scaling(kernel: &SassKernel, block_of: &[usize], i: usize) -> Option<bool> {
    let ins = &kernel.instrs[i];
    let &(_, format, mantissa) = SCALINGS.iter().find(|(op, _, _)| *op == ins.opcode)?;
    if !ins.modifiers.is_empty() {
        return None; // .FTZ, .SAT and rounding modes: keep it simple
    }
    let guard = ins.guard.as_ref()?;
    let (dst, src, scale) = (reg(ins.operands.first())?, reg(ins.operands.get(1))?, imm(ins.operands.get(2))?);
    if dst.kind != RegKind::R || src.kind != RegKind::R || dst.num != src.num || dst.is_zero() {
        return None;
    }
    // an exact power-of-two scale of at least 2^mantissa
    if !(scale.is_finite() && scale >= 1.0) || scale.log2().fract() != 0.0 || scale.log2() < f64::from(mantissa) {
        return None;
    }
    let words = if format == FpFormat::F64 { 2 } else { 1 };
    let value = RegRange::new(RegFile::PerLane, dst.num, words);
    let pred = RegRange::new(RegFile::Predicate, guard.pred.num, 1);
    // the latest write of the predicate, in the same block, with the value
    // untouched since
    let cmp = latest_write_in_block(kernel, block_of, i, pred)?;
    if latest_write_in_block(kernel, block_of, i, value).is_some_and(|w| w > cmp) {
        return None;
    }
    let c = &kernel.instrs[cmp];
    if c.guard.is_some() || !c.modifiers.iter().any(|m| m == "AND") {
        return None;
    }
    let &(_, negated) = MAGNITUDE_AT_MOST.iter().find(|(m, _)| c.modifiers.iter().any(|x| x == m))?;
    if negated != guard.pred.negated {
        return None;
    }
    // P = (|x| cmp bound) AND PT
    let (p, x, bound, combine) =
        (reg(c.operands.first())?, reg(c.operands.get(2))?, imm(c.operands.get(3))?, reg(c.operands.get(4))?);
    if p.num != guard.pred.num || p.kind != RegKind::P || !combine.is_zero() || combine.negated || !x.absolute {
        return None;
    }
    // the magnitude bound, in the scaled format: the f64 itself, or its
    // high word compared as an f32 (an f64 NaN or infinity makes that
    // word a NaN, which the guard excludes)
    let bound = match (c.opcode.as_str(), format) {
        ("FSETP", FpFormat::F32) if x.num == dst.num => bound,
        ("FSETP", FpFormat::F64) if x.num == dst.num + 1 => f64::from_bits(u64::from((bound as f32).to_bits()) << 32),
        ("DSETP", FpFormat::F64) if x.num == dst.num => bound,
        _ => return None,
    };
    let max = if format == FpFormat::F64 { f64::MAX } else { f64::from(f32::MAX) };
    Some(bound.is_finite() && bound.abs() * scale <= max)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sass::{build_kernel, parse_instruction, SassFunction};

    fn flags(lines: &[&str]) -> Vec<bool> {
        let instrs = lines.iter().map(|t| parse_instruction(t).unwrap()).collect();
        let k = build_kernel(&SassFunction { name: "k".into(), instrs });
        unexceptional_results(&k, &vec![0; lines.len()])
    }

    const CMP: &str = "FSETP.GEU.AND P1, PT, |R16|, 1.175494350822287508e-38, PT";

    #[test]
    fn rsqrt_range_scaling_is_unexceptional() {
        assert_eq!(flags(&[CMP, "FFMA R10, R7, R7, R8", "@!P1 FMUL R16, R16, 16777216"]), vec![false, false, true]);
        // f64: the high word compared as an f32, or the pair itself
        let hi = "FSETP.GEU.AND P1, PT, |R229|, 6.5827683646048100446e-37, PT";
        assert_eq!(flags(&[hi, "@!P1 DMUL R228, R228, 18014398509481984"]), vec![false, true]);
        assert_eq!(flags(&[hi, "@!P1 DMUL R228, R228, 16777216"]), vec![false, false], "2^24 leaves f64 subnormals");
        assert_eq!(flags(&[hi, "@!P1 DMUL R230, R230, 18014398509481984"]), vec![false, false], "another pair");
        assert_eq!(
            flags(&["DSETP.LT.AND P0, PT, |R4|, 1e-300, PT", "@P0 DMUL R4, R4, 4503599627370496"]),
            vec![false, true]
        );
    }

    #[test]
    fn anything_else_keeps_its_check() {
        let cases: &[&[&str]] = &[
            &[CMP, "@P1 FMUL R16, R16, 16777216"], // the guard's other side
            &["FSETP.GT.AND P1, PT, |R16|, 1e-38, PT", "@!P1 FMUL R16, R16, 16777216"], // NaN runs it
            &[CMP, "@!P1 FMUL R16, R16, 3"],       // not a power of two
            &[CMP, "@!P1 FMUL R16, R16, 4096"],    // subnormals stay
            &[CMP, "@!P1 FMUL R16, R17, 16777216"], // not in place
            &[CMP, "FADD R16, R16, 1", "@!P1 FMUL R16, R16, 16777216"], // written in between
            &["FSETP.GEU.AND P1, PT, |R16|, 1e30, PT", "@!P1 FMUL R16, R16, 1.2676506002282294015e+30"], // overflow
            &["FSETP.GEU.AND P1, PT, R16, 1e-38, PT", "@!P1 FMUL R16, R16, 16777216"], // no magnitude
            &["FSETP.GEU.OR P1, PT, |R16|, 1e-38, P2", "@!P1 FMUL R16, R16, 16777216"], // another predicate joins
            &["FMUL R16, R16, 16777216"],          // no guard
        ];
        for lines in cases {
            assert!(!flags(lines).iter().any(|f| *f), "{lines:?}");
        }
    }

    #[test]
    fn reciprocals_of_constants() {
        assert_eq!(
            flags(&["MUFU.RCP64H R7, 11.50899505615234375", "MUFU.RCP R1, 3", "MUFU.RCP R1, R2"]),
            vec![true, true, false]
        );
        assert_eq!(
            flags(&["MUFU.RCP R1, 0", "MUFU.RCP R1, 1e38", "MUFU.RCP R1, +INF", "MUFU.RSQ R1, 4"]),
            vec![false; 4]
        );
        assert_eq!(flags(&["MUFU.RCP64H R7, 1e300"]), vec![true], "1e-300 is a normal f64");
    }

    #[test]
    fn comparisons_of_register_tests() {
        let lines = [
            "FFMA R0, RZ, R9, R235",
            "FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT",
            "FADD R0, R1, R2",
            "FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT",
        ];
        let instrs = lines.iter().map(|t| parse_instruction(t).unwrap()).collect();
        let k = build_kernel(&SassFunction { name: "k".into(), instrs });
        let r0 = RegRange::new(RegFile::PerLane, 0, 1);
        assert!(reads_register_test(&k, &[0; 4], 1, r0));
        assert!(!reads_register_test(&k, &[0; 4], 3, r0), "written again by arithmetic");
        assert!(!reads_register_test(&k, &[0, 1, 1, 1], 1, r0), "another block");
    }

    #[test]
    fn the_comparison_must_be_in_the_same_block() {
        let instrs = [CMP, "@!P1 FMUL R16, R16, 16777216"].iter().map(|t| parse_instruction(t).unwrap()).collect();
        let k = build_kernel(&SassFunction { name: "k".into(), instrs });
        assert_eq!(unexceptional_results(&k, &[0, 1]), vec![false, false]);
    }
}
