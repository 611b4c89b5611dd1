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

/// Builds the view of a kernel named `name` whose entry is `entry`.
pub fn kernel_view(name: &str, entry: u64, instrs: &[DecodedInstr]) -> KernelView {
    let instrs = instrs
        .iter()
        .map(|d| InstrView {
            offset: d.addr - entry,
            text: d.insn.to_string(),
            class: view_class(&d.insn),
            defs: d.insn.regs_written().into_iter().filter_map(operand).collect(),
            uses: d.insn.regs_read().into_iter().filter_map(operand).collect(),
            guarded: false,
            control: control(&d.insn, d.addr),
            flow: xfpx_common::view::ValueFlow::Opaque,
            location: None,
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
}
