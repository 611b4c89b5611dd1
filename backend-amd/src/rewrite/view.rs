//! The vendor-neutral view of a kernel's code: each decoded AMDGPU
//! instruction as an `xfpx_common::view::InstrView` (IR class from the
//! decoder's table, registers written and read, control flow).

use xfpx_amd_isa::operand::RegFile as IsaFile;
use xfpx_amd_isa::{ControlFlow, Instruction, Opcode};
use xfpx_common::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange};

/// One decoded instruction of a kernel, with its address.
#[derive(Debug, Clone)]
pub struct DecodedInstr {
    pub addr: u64,
    pub insn: Instruction,
}

fn file(f: IsaFile) -> Option<RegFile> {
    match f {
        IsaFile::Vgpr => Some(RegFile::PerLane),
        IsaFile::Sgpr => Some(RegFile::Uniform),
        IsaFile::Agpr => Some(RegFile::Accumulator),
        IsaFile::Ttmp => None,
    }
}

/// The ISA registers a view operand names, one by one: none for a
/// predicate or an operand that is no register (the inverse of [`file`]).
pub(crate) fn isa_registers(op: &Operand) -> Vec<(IsaFile, u16)> {
    let Operand::Reg(r) = op else { return Vec::new() };
    let f = match r.file {
        RegFile::PerLane => IsaFile::Vgpr,
        RegFile::Uniform => IsaFile::Sgpr,
        RegFile::Accumulator => IsaFile::Agpr,
        RegFile::Predicate => return Vec::new(),
    };
    (0..u16::from(r.count)).map(|i| (f, r.first + i)).collect()
}

fn operand(r: xfpx_amd_isa::RegRange) -> Option<Operand> {
    file(r.file).map(|f| Operand::Reg(RegRange::new(f, r.first, r.count)))
}

/// An instruction's listing text, written into room for most lines at once.
fn listing_text(insn: &Instruction) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(64);
    // Writing into a String cannot fail.
    let _ = write!(text, "{insn}");
    text
}

/// How an instruction at `addr` affects control flow, in the view's terms.
pub fn control(insn: &Instruction, addr: u64) -> Control {
    match insn.control_flow(addr) {
        ControlFlow::Next | ControlFlow::GetPc { .. } => {
            if insn.op == Opcode::S_BARRIER {
                Control::Barrier
            } else {
                Control::None
            }
        }
        ControlFlow::Branch { .. } => Control::Branch,
        ControlFlow::CondBranch { .. } => Control::CondBranch,
        ControlFlow::Call { .. } => Control::Call,
        ControlFlow::Indirect if insn.op == Opcode::S_SWAPPC_B64 => Control::Call,
        ControlFlow::Indirect => Control::Return,
        ControlFlow::End | ControlFlow::Trap => Control::Exit,
    }
}

/// Whether a `v_cvt_*` writes something other than a value of its class's
/// format: the decoder's table names the source format for conversions to
/// integers (`v_cvt_i32_f32` is `f32.conversion`) and for packed or 8-bit
/// float results, whose destinations a check of that format would misread.
/// The destination type is the first type in the mnemonic after the
/// rounding/packing words.
pub fn conversion_writes_other_format(mnemonic: &str) -> bool {
    const PREFIX_WORDS: [&str; 6] = ["flr", "rpi", "norm", "off", "sr", "scalef32"];
    let Some(rest) = mnemonic.strip_prefix("v_cvt_") else { return false };
    let Some(dst) = rest.split('_').find(|t| !PREFIX_WORDS.contains(t)) else { return false };
    dst == "pk" || dst.starts_with('i') || dst.starts_with('u') || dst == "fp8" || dst == "bf8"
}

/// The format a `v_cvt_*` of a floating-point class reads: the type after
/// its destination's in the mnemonic (`v_cvt_f32_f64` reads f64), integers
/// for `i*`/`u*` types and bytes.
pub fn conversion_source(mnemonic: &str) -> xfpx_common::view::SourceFormat {
    use xfpx_common::view::SourceFormat;
    const PREFIX_WORDS: [&str; 6] = ["flr", "rpi", "norm", "off", "sr", "scalef32"];
    let Some(rest) = mnemonic.strip_prefix("v_cvt_") else { return SourceFormat::OfClass };
    let mut types = rest.split('_').filter(|t| !PREFIX_WORDS.contains(t) && !t.starts_with('e'));
    let _dst = types.next();
    match types.next() {
        Some("f64") => SourceFormat::Is(xfpx_common::FpFormat::F64),
        Some("f32") => SourceFormat::Is(xfpx_common::FpFormat::F32),
        Some("f16") => SourceFormat::Is(xfpx_common::FpFormat::F16),
        Some("bf16") => SourceFormat::Is(xfpx_common::FpFormat::Bf16),
        Some(_) => SourceFormat::NotFloat,
        None => SourceFormat::OfClass,
    }
}

/// The class a view gives an instruction: the decoder's, except for
/// conversions whose destination is not of the class's format
/// ([`conversion_writes_other_format`]; `v_cvt_pkrtz_f16_f32`, whose
/// result is f16x2).
pub fn view_class(insn: &Instruction) -> xfpx_common::InstrClass {
    let class = insn.class();
    // Two f32 rounded toward zero into one register's f16 halves.
    if insn.op == Opcode::V_CVT_PKRTZ_F16_F32 {
        return xfpx_common::InstrClass::Arith {
            format: xfpx_common::FpFormat::F16x2,
            op: xfpx_common::FpOp::Conversion,
        };
    }
    if matches!(class, xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Conversion, .. })
        && conversion_writes_other_format(insn.base_mnemonic)
    {
        xfpx_common::InstrClass::Other
    } else {
        class
    }
}

/// The operand a class test (`v_cmp_class_*`, `v_cmpx_class_*`) reads as
/// its integer mask of classes (its second source), where it is a register.
fn class_mask(insn: &Instruction) -> Option<xfpx_amd_isa::RegRange> {
    let m = insn.base_mnemonic;
    if !(m.starts_with("v_cmp_class") || m.starts_with("v_cmpx_class")) {
        return None;
    }
    // the last source: the e32 form lists its `vcc` destination first
    match insn.operands.iter().rfind(|o| !o.written).map(|o| &o.operand) {
        Some(xfpx_amd_isa::operand::Operand::Reg(r)) => Some(*r),
        _ => None,
    }
}

/// The operands an instruction reads, as the view gives them: a class
/// test's mask is no floating-point value (`Other`), so that no tool reads
/// it as one.
fn reads(insn: &Instruction) -> Vec<Operand> {
    let mask = class_mask(insn);
    let mut uses: Vec<(xfpx_amd_isa::RegRange, Operand)> =
        insn.reg_reads().filter_map(|r| operand(r).map(|o| (r, o))).collect();
    if let Some(m) = mask {
        if let Some(u) = uses.iter_mut().rev().find(|(r, _)| *r == m) {
            u.1 = Operand::Other { text: "class mask".into() };
        }
    }
    uses.into_iter().map(|(_, o)| o).collect()
}

/// Builds the view of a kernel named `name` whose entry is `entry`.
pub fn kernel_view(name: &str, entry: u64, instrs: &[DecodedInstr]) -> KernelView {
    let instrs = instrs
        .iter()
        .map(|d| {
            let class = view_class(&d.insn);
            InstrView {
                offset: d.addr - entry,
                text: listing_text(&d.insn),
                class,
                defs: d.insn.reg_writes().filter_map(operand).collect(),
                uses: reads(&d.insn),
                guarded: false,
                control: control(&d.insn, d.addr),
                flow: xfpx_common::view::ValueFlow::Opaque,
                source_format: match class {
                    xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Conversion, .. } => {
                        conversion_source(d.insn.base_mnemonic)
                    }
                    _ => xfpx_common::view::SourceFormat::OfClass,
                },
                location: None,
            }
        })
        .collect();
    KernelView { name: name.to_string(), instrs }
}

#[cfg(test)]
mod tests {
    use super::conversion_writes_other_format as other;

    #[test]
    fn conversions_to_integers_and_packed_formats_are_recognised() {
        for m in [
            "v_cvt_i32_f32_e32",
            "v_cvt_u32_f32_e64",
            "v_cvt_flr_i32_f32_e32",
            "v_cvt_norm_u16_f16_e32",
            "v_cvt_pk_f16_f32",
            "v_cvt_i32_f64_e32",
        ] {
            assert!(other(m), "{m}");
        }
        for m in
            ["v_cvt_f32_i32_e32", "v_cvt_f16_f32_e32", "v_cvt_f64_f32_e64", "v_cvt_f32_ubyte0_e32", "v_add_f32_e32"]
        {
            assert!(!other(m), "{m}");
        }
    }

    #[test]
    fn conversions_read_the_format_after_their_destinations() {
        use xfpx_common::view::SourceFormat::{Is, NotFloat};
        use xfpx_common::FpFormat::*;
        for (m, reads) in [
            ("v_cvt_f32_f64_e32", Is(F64)),
            ("v_cvt_f64_f32_e64", Is(F32)),
            ("v_cvt_f16_f32_e32", Is(F32)),
            ("v_cvt_f32_f16_sdwa", Is(F16)),
            ("v_cvt_f32_i32_e32", NotFloat),
            ("v_cvt_f64_u32_e32", NotFloat),
            ("v_cvt_f32_ubyte0_e32", NotFloat),
        ] {
            assert_eq!(super::conversion_source(m), reads, "{m}");
        }
    }
}
