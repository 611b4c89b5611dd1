//! The vendor-neutral view of a kernel's code: each decoded AMDGPU
//! instruction as an `xfpx_common::view::InstrView` (IR class from the
//! decoder's table, registers written and read, control flow).

use xfpx_amd_isa::operand::RegFile as IsaFile;
use xfpx_amd_isa::{CmpCond, ControlFlow, Instruction, Opcode};
use xfpx_common::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange, Uses};

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
pub(crate) fn isa_registers(op: &Operand) -> impl Iterator<Item = (IsaFile, u16)> {
    let regs = match op {
        Operand::Reg(r) => match r.file {
            RegFile::PerLane => Some((IsaFile::Vgpr, *r)),
            RegFile::Uniform => Some((IsaFile::Sgpr, *r)),
            RegFile::Accumulator => Some((IsaFile::Agpr, *r)),
            RegFile::Predicate => None,
        },
        _ => None,
    };
    regs.into_iter().flat_map(|(f, r)| (0..u16::from(r.count)).map(move |i| (f, r.first + i)))
}

fn operand(r: xfpx_amd_isa::RegRange) -> Option<Operand> {
    file(r.file).map(|f| Operand::Reg(RegRange::new(f, r.first, r.count)))
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

/// Whether a conversion writes something other than a value of its
/// class's format: the decoder's table names the source format for
/// conversions to integers (`v_cvt_i32_f32` is `f32.conversion`) and for
/// packed or 8-bit float results, whose destinations a check of that
/// format would misread.
pub fn conversion_writes_other_format(op: Opcode) -> bool {
    op.conversion().is_some_and(|c| c.writes_other_format)
}

/// The format a conversion of a floating-point class reads (`v_cvt_f32_f64`
/// reads f64; integers and bytes are no float).
pub fn conversion_source(op: Opcode) -> xfpx_common::view::SourceFormat {
    op.conversion().map_or(xfpx_common::view::SourceFormat::OfClass, |c| c.source)
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
        && conversion_writes_other_format(insn.op)
    {
        xfpx_common::InstrClass::Other
    } else {
        class
    }
}

/// The operand a class test (`v_cmp_class_*`, `v_cmpx_class_*`) reads as
/// its integer mask of classes (its second source), where it is a register.
fn class_mask(insn: &Instruction) -> Option<xfpx_amd_isa::RegRange> {
    if !insn.op.compare().is_some_and(|c| c.cond == CmpCond::Class && c.unit.is_vector()) {
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
fn reads(insn: &Instruction) -> Uses {
    let mut uses: Uses = insn.reg_reads().filter_map(operand).collect();
    let Some(mask) = class_mask(insn) else { return uses };
    // The last of the uses that names the mask's registers.
    let viewed = insn.reg_reads().filter(|r| file(r.file).is_some());
    if let Some((i, _)) = viewed.enumerate().filter(|(_, r)| *r == mask).last() {
        uses[i] = Operand::Other { text: "class mask".into() };
    }
    uses
}

/// Builds the view of a kernel named `name` whose entry is `entry`.
pub fn kernel_view(name: &str, entry: u64, instrs: &[DecodedInstr]) -> KernelView {
    // Each text is rendered here and kept in one allocation of its own size.
    let mut text = String::with_capacity(128);
    let instrs = instrs
        .iter()
        .map(|d| {
            let class = view_class(&d.insn);
            text.clear();
            d.insn.write_text(&mut text);
            InstrView {
                offset: d.addr - entry,
                text: text.as_str().into(),
                class,
                defs: d.insn.reg_writes().filter_map(operand).collect(),
                uses: reads(&d.insn),
                guarded: false,
                control: control(&d.insn, d.addr),
                flow: xfpx_common::view::ValueFlow::Opaque,
                source_format: match class {
                    xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Conversion, .. } => {
                        conversion_source(d.insn.op)
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
    use xfpx_amd_isa::Opcode;

    #[test]
    fn conversions_to_integers_and_packed_formats_are_recognised() {
        for op in [
            Opcode::V_CVT_I32_F32_E32,
            Opcode::V_CVT_U32_F32_E64,
            Opcode::V_CVT_FLR_I32_F32_E32,
            Opcode::V_CVT_NORM_U16_F16_E32,
            Opcode::V_CVT_PK_F16_F32,
            Opcode::V_CVT_I32_F64_E32,
        ] {
            assert!(other(op), "{op}");
        }
        for op in [
            Opcode::V_CVT_F32_I32_E32,
            Opcode::V_CVT_F16_F32_E32,
            Opcode::V_CVT_F64_F32_E64,
            Opcode::V_CVT_F32_UBYTE0_E32,
            Opcode::V_ADD_F32_E32,
        ] {
            assert!(!other(op), "{op}");
        }
    }

    #[test]
    fn conversions_read_the_format_after_their_destinations() {
        use xfpx_common::view::SourceFormat::{Is, NotFloat, OfClass};
        use xfpx_common::FpFormat::*;
        for (op, reads) in [
            (Opcode::V_CVT_F32_F64_E32, Is(F64)),
            (Opcode::V_CVT_F64_F32_E64, Is(F32)),
            (Opcode::V_CVT_F16_F32_E32, Is(F32)),
            (Opcode::V_CVT_F32_F16_E32, Is(F16)),
            (Opcode::V_CVT_F32_I32_E32, NotFloat),
            (Opcode::V_CVT_F64_U32_E32, NotFloat),
            (Opcode::V_CVT_F32_UBYTE0_E32, NotFloat),
            (Opcode::V_ADD_F32_E32, OfClass),
        ] {
            assert_eq!(super::conversion_source(op), reads, "{op}");
        }
    }
}
