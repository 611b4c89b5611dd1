//! From parsed SASS to the vendor-neutral [`KernelView`]: classes from the
//! opcode table, operands as register ranges (FP64 pairs, the 64H rule),
//! immediates as known bits, control flow from the control table.

use super::opcodes::{self, DefRole, OpcodeInfo};
use super::parse::{RegKind, Register, SassFunction, SassInstr, SassOperand};
use xfpx_common::cfg::{Cfg, CfgError, Target};
use xfpx_common::class::{FpFormat, InstrClass};
use xfpx_common::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange, SourceFormat, ValueFlow};

/// Control-flow effect of opcodes that have one (one place for this fact).
pub static CONTROL: &[(&str, Control)] = &[
    ("BRA", Control::Branch),
    ("BRX", Control::Branch),
    ("JMP", Control::Branch),
    ("JMX", Control::Branch),
    ("EXIT", Control::Exit),
    ("RET", Control::Return),
    ("CALL", Control::Call),
    ("BAR", Control::Barrier),
    ("BSYNC", Control::Barrier),
    ("WARPSYNC", Control::Barrier),
];

/// Stores: their first operand is the address, and the data register they
/// read is as wide as their size modifier (`STG.E.64 [R2.64], R216` reads
/// R216 and R217).
static STORES: &[&str] = &["ST", "STG", "STS", "STL"];

/// Other opcodes whose first operand is read, not written.
static NO_DEF: &[&str] = &["RED", "REDUX", "BSSY", "BSYNC", "BAR", "BRA", "CALL", "RET", "EXIT", "NOP", "WARPSYNC"];

/// A kernel as the NVIDIA backend sees it: the vendor-neutral view, plus
/// the SASS facts lowering needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SassKernel {
    pub view: KernelView,
    /// Per instruction: its result is the high word of an f64 pair (64H).
    pub high_word: Vec<bool>,
    /// The parsed instructions, in view order.
    pub instrs: Vec<SassInstr>,
}

fn control_of(ins: &SassInstr) -> Control {
    let c = CONTROL.iter().find(|(op, _)| *op == ins.opcode).map(|(_, c)| *c).unwrap_or_default();
    if (ins.is_guarded() || has_condition_operand(ins)) && c.leaves() {
        Control::CondBranch
    } else {
        c
    }
}

/// Whether a branch names its condition as an operand (`BRA !P0, 0x2ff0`,
/// `BRA.U UP1, 0x4b40`, as cuBLAS's sm_90 kernels write it): a predicate
/// other than `PT` makes it conditional, as a guard does; so does `.DIV`
/// (`BRA.DIV UR4, 0x2860`: taken only where the warp has diverged, before
/// a warp-synchronous sequence such as a shuffle reduction).
fn has_condition_operand(ins: &SassInstr) -> bool {
    ins.modifiers.iter().any(|m| m == "DIV")
        || ins.operands.iter().any(|o| {
            matches!(o, SassOperand::Reg(r) if matches!(r.kind, RegKind::P | RegKind::Up) && (!r.is_zero() || r.negated))
        })
}

/// How NaN and infinity travel through one instruction, from the tables
/// of [`opcodes`].
fn value_flow(ins: &SassInstr, class: InstrClass) -> ValueFlow {
    let mods = ins.modifier_refs();
    if class != InstrClass::Other
        && opcodes::PROPAGATING.contains(&ins.opcode.as_str())
        && !mods.iter().any(|m| opcodes::CLAMPING.contains(m))
    {
        return ValueFlow::Propagates;
    }
    opcodes::COPIES
        .iter()
        .find(|(op, m, _)| *op == ins.opcode && m.is_none_or(|m| mods.contains(&m)))
        .map_or(ValueFlow::Opaque, |(_, _, source)| ValueFlow::Copies(*source))
}

impl SassKernel {
    /// Where control instruction `i` goes: a target printed as an offset
    /// in the function (`BRA 0x1a0`, `CALL.REL.NOINC 0x400`) is resolved;
    /// exits and returns leave; labels, register targets (`BRX`, `JMX`)
    /// and absolute jumps are unknown.
    pub fn branch_target(&self, i: usize) -> Target {
        let ins = &self.instrs[i];
        match ins.opcode.as_str() {
            "EXIT" | "RET" => return Target::Leave,
            "BRA" | "CALL" if !ins.modifiers.iter().any(|m| m == "ABS") => {}
            _ => return Target::Unknown,
        }
        let offset = ins.operands.iter().rev().find_map(|o| match o {
            SassOperand::ImmBits { bits, .. } => Some(*bits),
            _ => None,
        });
        match offset.and_then(|o| self.instrs.binary_search_by_key(&o, |x| x.offset).ok()) {
            Some(t) => Target::Instr(t),
            None => Target::Unknown,
        }
    }

    /// The kernel's control-flow graph.
    pub fn cfg(&self) -> Result<Cfg, CfgError> {
        Cfg::build(&self.view, |i| self.branch_target(i))
    }

    /// The graph with a branch of unknown target (`BRX`, `JMX`) as an exit
    /// after which nothing is known ([`Cfg::build_with_unknown_exits`]).
    pub fn cfg_with_unknown_exits(&self) -> Result<Cfg, CfgError> {
        Cfg::build_with_unknown_exits(&self.view, |i| self.branch_target(i))
    }
}

/// Round an f64 to IEEE binary16 bits (round to nearest even).
pub fn f16_bits(v: f64) -> u16 {
    let bits32 = (v as f32).to_bits();
    let sign = ((bits32 >> 16) & 0x8000) as u16;
    if v.is_nan() {
        return sign | 0x7e00;
    }
    let a = v.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    // scale into the integer grid of binary16 and round to nearest even
    let (exp, quantum) = if a < f64::powi(2.0, -14) {
        (0u16, f64::powi(2.0, -24))
    } else {
        let e = a.log2().floor() as i32;
        ((e + 15) as u16, f64::powi(2.0, e - 10))
    };
    let q = (a / quantum).round_ties_even() as u32;
    if exp == 0 {
        return sign | q as u16;
    }
    // q in [1024, 2048]; 2048 carries into the next exponent
    let (exp, mant) = if q >= 2048 { (exp + 1, 0) } else { (exp, (q - 1024) as u16) };
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | (exp << 10) | mant
}

/// Bits of a decimal immediate read as a value of `format`.
pub fn immediate_bits(value: f64, format: FpFormat) -> u64 {
    match format {
        FpFormat::F64 => value.to_bits(),
        FpFormat::F32 => u64::from((value as f32).to_bits()),
        FpFormat::F16 => u64::from(f16_bits(value)),
        FpFormat::F16x2 => {
            let h = u64::from(f16_bits(value));
            h | (h << 16)
        }
        FpFormat::Bf16 | FpFormat::Bf16x2 => {
            let b = u64::from(bf16_bits(value));
            if format == FpFormat::Bf16x2 {
                b | (b << 16)
            } else {
                b
            }
        }
    }
}

fn bf16_bits(v: f64) -> u16 {
    let b = (v as f32).to_bits();
    if (v as f32).is_nan() {
        return ((b >> 16) as u16) | 0x0040;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

fn reg_operand(r: &Register, words: u8) -> Operand {
    let file = match r.kind {
        RegKind::R => RegFile::PerLane,
        RegKind::Ur => RegFile::Uniform,
        RegKind::P | RegKind::Up => RegFile::Predicate,
    };
    if r.is_zero() {
        // RZ/URZ read zero; PT reads true (false when negated)
        let bits = match r.kind {
            RegKind::R | RegKind::Ur => 0,
            RegKind::P | RegKind::Up => u64::from(!r.negated),
        };
        return Operand::Known { bits };
    }
    let words = if file == RegFile::Predicate { 1 } else { words };
    Operand::Reg(RegRange::new(file, r.num, words))
}

/// The view operand of a source, given the format its value has.
fn use_operand(op: &SassOperand, format: Option<FpFormat>, words: u8) -> Operand {
    match op {
        SassOperand::Reg(r) => reg_operand(r, words),
        SassOperand::ImmBits { bits, .. } => Operand::Known { bits: *bits },
        SassOperand::ImmValue { value, text } => match format {
            Some(f) => Operand::Known { bits: immediate_bits(*value, f) },
            None if value.fract() == 0.0 && value.is_finite() => Operand::Known { bits: *value as i64 as u64 },
            None => Operand::Other { text: text.clone() },
        },
        SassOperand::ConstBank { text, .. } | SassOperand::Memory { text } => Operand::Memory { text: text.clone() },
        SassOperand::Other { text } => Operand::Other { text: text.clone() },
    }
}

/// Packed-half immediates are printed as two values (`HFMA2 R0, R2, 1, 1, R5`):
/// join each such pair into one operand.
fn join_half_immediates(ops: &[SassOperand], format: FpFormat) -> Vec<Operand> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        if let (SassOperand::ImmValue { value: a, .. }, Some(SassOperand::ImmValue { value: b, .. })) =
            (&ops[i], ops.get(i + 1))
        {
            let lane = |v: f64| match format {
                FpFormat::Bf16x2 => u64::from(bf16_bits(v)),
                _ => u64::from(f16_bits(v)),
            };
            out.push(Operand::Known { bits: lane(*a) | (lane(*b) << 16) });
            i += 2;
            continue;
        }
        out.push(use_operand(&ops[i], Some(format), 1));
        i += 1;
    }
    out
}

/// What the view of an FP instruction holds: class, defs, uses, whether it
/// writes a high word, and what its sources are.
type FpView = (InstrClass, Vec<Operand>, Vec<Operand>, bool, SourceFormat);

fn fp_instr_view(ins: &SassInstr, row: &OpcodeInfo) -> FpView {
    let mods = ins.modifier_refs();
    let class = row.class(&mods);
    let ndefs = (row.defs as usize).min(ins.operands.len());
    let def_words = row.def_words(&mods);
    let high_word = row.def_role == DefRole::HighWord;
    let defs = ins.operands[..ndefs]
        .iter()
        .map(|op| match op {
            // 64H: the odd register written is the high word of the pair below it
            SassOperand::Reg(r) if high_word && r.kind == RegKind::R && !r.is_zero() && r.num % 2 == 1 => {
                Operand::Reg(RegRange::new(RegFile::PerLane, r.num - 1, 2))
            }
            SassOperand::Reg(r) => reg_operand(r, def_words),
            other => use_operand(other, None, 1),
        })
        .collect();
    let sources = &ins.operands[ndefs..];
    let src_format = row.source_format(&mods);
    let uses = if row.integer_sources() {
        sources.iter().map(|o| use_operand(o, None, 1)).collect()
    } else if src_format.lanes() == 2 {
        join_half_immediates(sources, src_format)
    } else {
        let words = if high_word { 1 } else { src_format.register_words() };
        sources.iter().map(|o| use_operand(o, Some(src_format), words)).collect()
    };
    let reads = if row.integer_sources() {
        SourceFormat::NotFloat
    } else if Some(src_format) != class.format() {
        SourceFormat::Is(src_format)
    } else {
        SourceFormat::OfClass
    };
    (class, defs, uses, high_word, reads)
}

/// Registers written by an instruction outside the opcode table: the
/// leading operands up to the first general or uniform register (so
/// `SHFL.DOWN PT, R5, ...` writes R5), that register widened by
/// [`opcodes::written_words`]. Stores and control instructions write none.
fn other_instr_view(ins: &SassInstr) -> (Vec<Operand>, Vec<Operand>) {
    let store = STORES.contains(&ins.opcode.as_str());
    let writes = !store
        && !NO_DEF.contains(&ins.opcode.as_str())
        && matches!(ins.operands.first(), Some(SassOperand::Reg(r)) if !r.negated);
    let ndefs = if writes {
        ins.operands
            .iter()
            .position(
                |o| matches!(o, SassOperand::Reg(r) if matches!(r.kind, RegKind::R | RegKind::Ur) && !r.is_zero()),
            )
            .filter(|&p| {
                ins.operands[..p]
                    .iter()
                    .all(|o| matches!(o, SassOperand::Reg(r) if matches!(r.kind, RegKind::P | RegKind::Up)))
            })
            .map_or(1, |p| p + 1)
    } else {
        0
    };
    let words = opcodes::written_words(&ins.opcode, &ins.modifier_refs());
    let defs = ins.operands[..ndefs]
        .iter()
        .map(|o| match o {
            SassOperand::Reg(r) if matches!(r.kind, RegKind::R | RegKind::Ur) => reg_operand(r, words),
            other => use_operand(other, None, 1),
        })
        .collect();
    let read = if store { opcodes::stored_words(&ins.modifier_refs()) } else { 1 };
    let uses = ins.operands[ndefs..].iter().map(|o| use_operand(o, None, read)).collect();
    (defs, uses)
}

/// Both multiplicands (the first two sources) read zero.
fn zero_product(ins: &SassInstr) -> bool {
    let zero = |o: Option<&SassOperand>| matches!(o, Some(SassOperand::Reg(r)) if r.kind == RegKind::R && r.is_zero());
    zero(ins.operands.get(1)) && zero(ins.operands.get(2))
}

/// One multiplicand (of the first two sources) reads zero: the result is
/// the addend, or NaN where the other multiplicand is infinite (a NaN or
/// infinite addend still shows, so for the analyses it is the addend's
/// copy).
fn zero_multiplicand(ins: &SassInstr) -> bool {
    let zero = |o: Option<&SassOperand>| matches!(o, Some(SassOperand::Reg(r)) if r.kind == RegKind::R && r.is_zero());
    zero(ins.operands.get(1)) || zero(ins.operands.get(2))
}

/// The compiler's register test `FFMA R0, RZ, x, R235` (see
/// [`OpcodeInfo::zero_multiplicand_is_test`]).
pub fn is_register_test(ins: &SassInstr) -> bool {
    !ins.never_executes()
        && opcodes::lookup(&ins.opcode, &ins.modifier_refs()).is_some_and(|r| r.zero_multiplicand_is_test)
        && zero_multiplicand(ins)
}

/// Build the view of one function.
pub fn build_kernel(func: &SassFunction) -> SassKernel {
    into_kernel(func.clone())
}

/// Build the view of one function, which the kernel keeps (no copy of its
/// instructions: a large kernel's are megabytes, faulted in fresh at a
/// kernel's first launch).
pub fn into_kernel(func: SassFunction) -> SassKernel {
    let mut instrs = Vec::with_capacity(func.instrs.len());
    let mut high = Vec::with_capacity(func.instrs.len());
    for ins in &func.instrs {
        let row = if ins.never_executes() { None } else { opcodes::lookup(&ins.opcode, &ins.modifier_refs()) };
        let row = row.filter(|r| !(r.zero_product_is_move && zero_product(ins)));
        // a test, not arithmetic; the addend's register is the third source
        let moved = is_register_test(ins);
        let row = row.filter(|_| !moved);
        let (class, defs, uses, high_word, source_format) = match row {
            Some(row) => fp_instr_view(ins, row),
            None => {
                let (d, u) = other_instr_view(ins);
                (InstrClass::Other, d, u, false, SourceFormat::OfClass)
            }
        };
        instrs.push(InstrView {
            offset: ins.offset,
            text: ins.text.as_str().into(),
            class,
            defs: defs.into(),
            uses: uses.into(),
            guarded: ins.is_guarded(),
            control: control_of(ins),
            flow: if moved && !ins.is_guarded() { ValueFlow::Copies(2) } else { value_flow(ins, class) },
            source_format,
            location: ins.location.clone(),
        });
        high.push(high_word);
    }
    SassKernel { view: KernelView { name: func.name, instrs }, high_word: high, instrs: func.instrs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::parse::parse_instruction;
    use xfpx_common::class::FpOp;

    fn one(text: &str) -> (InstrView, bool) {
        let f = SassFunction { name: "k".into(), instrs: vec![parse_instruction(text).expect("parses")] };
        let k = build_kernel(&f);
        (k.view.instrs[0].clone(), k.high_word[0])
    }

    fn r(first: u16, count: u8) -> Operand {
        Operand::Reg(RegRange::new(RegFile::PerLane, first, count))
    }

    #[test]
    fn fp64_pairs_and_the_64h_rule() {
        let (v, hw) = one("DFMA R6, R2, R4, R6");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma });
        assert_eq!(v.defs, vec![r(6, 2)]);
        assert_eq!(v.uses, vec![r(2, 2), r(4, 2), r(6, 2)]);
        assert!(!hw);
        let (v, hw) = one("MUFU.RCP64H R5, R3");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::F64, op: FpOp::Div });
        assert_eq!(v.defs, vec![r(4, 2)]);
        assert_eq!(v.uses, vec![r(3, 1)]);
        assert!(hw);
    }

    #[test]
    fn predicates_immediates_and_zero_registers() {
        let (v, _) = one("@P1 FSETP.GT.AND P0, PT, R1, 1.5, PT");
        assert!(v.guarded);
        assert_eq!(v.class, InstrClass::Compare { format: FpFormat::F32 });
        assert_eq!(v.defs, vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1)), Operand::Known { bits: 1 }]);
        assert_eq!(v.uses, vec![r(1, 1), Operand::Known { bits: 1.5f32.to_bits() as u64 }, Operand::Known { bits: 1 }]);
        let (v, _) = one("DADD R2, RZ, -0.5");
        assert_eq!(v.uses, vec![Operand::Known { bits: 0 }, Operand::Known { bits: (-0.5f64).to_bits() }]);
        let (v, _) = one("FADD R1, R2, c[0x0][0x160]");
        assert!(matches!(v.uses[1], Operand::Memory { .. }));
        let (v, _) = one("FMUL R1, R2, UR4");
        assert_eq!(v.uses[1], Operand::Reg(RegRange::new(RegFile::Uniform, 4, 1)));
    }

    #[test]
    fn packed_halves_join_immediate_pairs() {
        let (v, _) = one("HFMA2.MMA R0, R2, 1, 1, R5");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::F16x2, op: FpOp::Fma });
        assert_eq!(v.uses, vec![r(2, 1), Operand::Known { bits: 0x3c00_3c00 }, r(5, 1)]);
        let (v, _) = one("HFMA2.MMA R7, -RZ, RZ, 1.875, 0");
        assert_eq!(v.class, InstrClass::Other, "constant-load idiom");
        // f64 division's magnitude test of the quotient's high word
        let (v, _) = one("FFMA R0, RZ, 2.6096560955047607422, R235");
        assert_eq!((v.class, v.flow), (InstrClass::Other, ValueFlow::Copies(2)), "a test that copies");
        assert_eq!(v.uses[2], r(235, 1));
        let (v, _) = one("FFMA R0, -RZ, RZ, R3");
        assert_eq!((v.class, v.flow), (InstrClass::Other, ValueFlow::Copies(2)));
        let (v, _) = one("@P0 FFMA R0, RZ, 2, R3");
        assert_eq!((v.class, v.flow), (InstrClass::Other, ValueFlow::Opaque), "a guarded move may not run");
        // a register multiplicand may be infinite (0 * inf is NaN): a test
        // of the divisor's high word too, and still the addend's copy for
        // the analyses
        let (v, _) = one("FFMA R0, RZ, R9, R235");
        assert_eq!((v.class, v.flow), (InstrClass::Other, ValueFlow::Copies(2)));
        let (v, _) = one("FFMA R0, R1, +INF, R3");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::F32, op: FpOp::Fma });
        let (v, _) = one("DFMA R2, RZ, 2, R4");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma }, "pairs stay arithmetic");
        let (v, _) = one("HMUL2.BF16_V2 R3, R0, R9");
        assert_eq!(v.class, InstrClass::Arith { format: FpFormat::Bf16x2, op: FpOp::Mul });
    }

    #[test]
    fn matrix_and_control() {
        let (v, _) = one("HMMA.16816.F32 R16, R4.reuse, R12, RZ");
        assert_eq!(v.class, InstrClass::Matrix { format: FpFormat::F32 });
        assert_eq!(v.defs, vec![r(16, 4)]);
        let (v, _) = one("@P0 EXIT");
        assert_eq!(v.control, Control::CondBranch);
        let (v, _) = one("EXIT");
        assert_eq!(v.control, Control::Exit);
        let (v, _) = one("STG.E desc[UR4][R8.64], R13");
        assert!(v.defs.is_empty());
        let (v, _) = one("@!PT FADD R1, R2, R3");
        assert_eq!(v.class, InstrClass::Other);
        // a condition written as an operand, as cuBLAS's sm_90 kernels branch
        for conditional in [
            "BRA !P0, 0x2ff0",
            "BRA P3, 0x1770",
            "BRA.U !UP2, 0x8d0",
            "BRA.U UP1, 0x4b40",
            "BRA !PT, 0x10",
            "BRA.DIV UR4, 0x2860",
        ] {
            assert_eq!(one(conditional).0.control, Control::CondBranch, "{conditional}");
        }
        for always in ["BRA 0x2ff0", "BRA PT, 0x1770", "BRA.U UPT, 0x8d0"] {
            assert_eq!(one(always).0.control, Control::Branch, "{always}");
        }
    }

    #[test]
    fn a_branch_with_a_condition_operand_falls_through_too() {
        let listing = "\tFunction : k\n\
            /*0000*/  BRA !P0, 0x20 ;\n\
            /*0010*/  FADD R1, R2, R3 ;\n\
            /*0020*/  EXIT ;\n";
        let k = build_kernel(&crate::sass::parse_listing(listing).expect("parses")[0]);
        let cfg = k.cfg().expect("a graph");
        let first = &cfg.blocks[cfg.block_of[0]];
        let mut succs: Vec<usize> = first.succs.iter().map(|&b| cfg.blocks[b].start).collect();
        succs.sort_unstable();
        assert_eq!(succs, [1, 2], "both the target and the next instruction follow the branch");
    }

    #[test]
    fn registers_written_outside_the_table() {
        let (v, _) = one("SHFL.DOWN PT, R5, R4, 0x1, 0x1f");
        assert_eq!(v.defs, vec![Operand::Known { bits: 1 }, r(5, 1)]);
        assert_eq!(v.uses[0], r(4, 1));
        let (v, _) = one("IMAD.WIDE.U32 R6, R5, 0x100, R2");
        assert_eq!(v.defs, vec![r(6, 2)]);
        let (v, _) = one("LDG.E.128.CONSTANT R8, desc[UR6][R2.64]");
        assert_eq!(v.defs, vec![r(8, 4)]);
        let (v, _) = one("CS2R R4, SRZ");
        assert_eq!(v.defs, vec![r(4, 2)]);
        let (v, _) = one("CS2R.32 R4, SR_CLOCKLO");
        assert_eq!(v.defs, vec![r(4, 1)]);
        let (v, _) = one("STS [R3], R0");
        assert!(v.defs.is_empty());
        // a store reads as many words of its data register as it stores
        let (v, _) = one("STG.E.64 desc[UR6][R2.64], R216");
        assert!(v.defs.is_empty());
        assert_eq!(v.uses.last(), Some(&r(216, 2)));
        let (v, _) = one("STS.128 [R3+0x10], R4");
        assert_eq!(v.uses.last(), Some(&r(4, 4)));
        let (v, _) = one("STL.U16 [R1+0x8], R7");
        assert_eq!(v.uses.last(), Some(&r(7, 1)));
        let (v, _) = one("MOV R2, R7");
        assert_eq!(v.flow, ValueFlow::Copies(0));
        let (v, _) = one("IMAD.MOV.U32 R2, RZ, RZ, R7");
        assert_eq!(v.flow, ValueFlow::Copies(2));
        let (v, _) = one("FADD.SAT R1, R2, R3");
        assert_eq!(v.flow, ValueFlow::Opaque);
        let (v, _) = one("DFMA R2, R4, R6, R2");
        assert_eq!(v.flow, ValueFlow::Propagates);
        let (v, _) = one("FMNMX R1, R2, R3, !PT");
        assert_eq!(v.flow, ValueFlow::Opaque);
    }

    #[test]
    fn half_conversion() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(1e6), 0x7c00);
        assert_eq!(f16_bits(f64::powi(2.0, -24)), 0x0001);
        assert_eq!(f16_bits(0.0), 0);
        assert_eq!(f16_bits(f64::NAN) & 0x7e00, 0x7e00);
        assert_eq!(bf16_bits(1.0), 0x3f80);
    }
}
