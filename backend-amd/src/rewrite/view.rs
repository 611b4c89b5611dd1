//! The vendor-neutral view of a kernel's code: each decoded AMDGPU
//! instruction as an `xfpx_common::view::InstrView` (IR class from the
//! decoder's table, registers written and read, control flow).

use xfpx_amd_isa::operand::RegFile as IsaFile;
use xfpx_amd_isa::{ControlFlow, Instruction};
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
            if insn.base_mnemonic == "s_barrier" {
                Control::Barrier
            } else {
                Control::None
            }
        }
        ControlFlow::Branch { .. } => Control::Branch,
        ControlFlow::CondBranch { .. } => Control::CondBranch,
        ControlFlow::Call { .. } => Control::Call,
        ControlFlow::Indirect if insn.base_mnemonic == "s_swappc_b64" => Control::Call,
        ControlFlow::Indirect => Control::Return,
        ControlFlow::End | ControlFlow::Trap => Control::Exit,
    }
}

/// Builds the view of a kernel named `name` whose entry is `entry`.
pub fn kernel_view(name: &str, entry: u64, instrs: &[DecodedInstr]) -> KernelView {
    let instrs = instrs
        .iter()
        .map(|d| InstrView {
            offset: d.addr - entry,
            text: d.insn.to_string(),
            class: d.insn.class(),
            defs: d.insn.regs_written().into_iter().filter_map(operand).collect(),
            uses: d.insn.regs_read().into_iter().filter_map(operand).collect(),
            guarded: false,
            control: control(&d.insn, d.addr),
            location: None,
        })
        .collect();
    KernelView { name: name.to_string(), instrs }
}
