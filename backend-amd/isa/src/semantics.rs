//! What an instruction does beyond its syntax: registers read and written,
//! the wait counters it increments, and its effect on control flow.

use crate::decode::Instruction;
use crate::encoding::Encoding;
use crate::opcode::Opcode;
use crate::operand::{Operand, RegFile, RegRange, SpecialReg};

/// Memory counters an instruction increments (the ones `s_waitcnt` waits on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Vector memory (loads, stores and atomics; in order among themselves).
    pub vm: bool,
    /// LDS, GDS, scalar memory and messages.
    pub lgkm: bool,
    /// Exports and GDS-ordered writes.
    pub exp: bool,
}

/// Effect of an instruction on the program counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlFlow {
    /// Falls through to the next instruction.
    Next,
    /// Unconditional PC-relative branch to `target`.
    Branch { target: u64 },
    /// Conditional PC-relative branch to `target` (falls through otherwise).
    CondBranch { target: u64 },
    /// `s_call_b64`: PC-relative call to `target`, return address to an SGPR pair.
    Call { target: u64 },
    /// `s_getpc_b64`: writes the address of the next instruction.
    GetPc { value: u64 },
    /// `s_setpc_b64`, `s_swappc_b64`, `s_rfe_b64`: jump to an address in SGPRs.
    Indirect,
    /// `s_endpgm` and friends: the wave ends.
    End,
    /// A trap or other transfer the program does not control.
    Trap,
}

/// How an opcode affects the program counter, independent of its address
/// (the `kind` column of `tables/control.tsv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    /// Falls through to the next instruction.
    None,
    /// Unconditional PC-relative branch.
    Branch,
    /// Conditional PC-relative branch.
    CondBranch,
    /// PC-relative call.
    Call,
    /// Reads the program counter.
    GetPc,
    /// Jumps to an address held in registers.
    Indirect,
    /// Ends the wave.
    End,
    /// Traps.
    Trap,
}

impl Instruction {
    /// Effect on the program counter when this instruction is at `addr`.
    /// PC-relative targets are `addr + 4 + 4 * simm16`.
    pub fn control_flow(&self, addr: u64) -> ControlFlow {
        let simm = (self.words[0] & 0xFFFF) as u16 as i16 as i64;
        let target = (addr as i64 + 4 + 4 * simm) as u64;
        match self.op.control() {
            ControlKind::Branch => ControlFlow::Branch { target },
            ControlKind::CondBranch => ControlFlow::CondBranch { target },
            ControlKind::Call => ControlFlow::Call { target },
            ControlKind::GetPc => ControlFlow::GetPc { value: addr + 4 },
            ControlKind::Indirect => ControlFlow::Indirect,
            ControlKind::End => ControlFlow::End,
            ControlKind::Trap => ControlFlow::Trap,
            ControlKind::None => ControlFlow::Next,
        }
    }

    /// Whether the instruction's behaviour depends on its own address.
    pub fn is_pc_relative(&self) -> bool {
        matches!(
            self.control_flow(0),
            ControlFlow::Branch { .. }
                | ControlFlow::CondBranch { .. }
                | ControlFlow::Call { .. }
                | ControlFlow::GetPc { .. }
        )
    }

    /// Counters this instruction increments.
    pub fn counters(&self) -> Counters {
        match self.encoding {
            // Scalar cache invalidates and write-backs wait on nothing.
            Encoding::Smem => Counters {
                lgkm: !matches!(
                    self.op,
                    Opcode::S_DCACHE_INV | Opcode::S_DCACHE_INV_VOL | Opcode::S_DCACHE_WB | Opcode::S_DCACHE_WB_VOL
                ),
                ..Default::default()
            },
            Encoding::Ds => Counters { lgkm: true, ..Default::default() },
            Encoding::Flat => Counters { vm: true, lgkm: true, exp: false },
            Encoding::Global | Encoding::Scratch | Encoding::Mubuf | Encoding::Mtbuf | Encoding::Mimg => {
                Counters { vm: true, ..Default::default() }
            }
            Encoding::Exp => Counters { exp: true, ..Default::default() },
            Encoding::Sopp if matches!(self.op, Opcode::S_SENDMSG | Opcode::S_SENDMSGHALT) => {
                Counters { lgkm: true, ..Default::default() }
            }
            _ => Counters::default(),
        }
    }

    /// Special registers the instruction writes, explicit or implied by the
    /// encoding (VCC of VOPC `_e32` and of carry-out VOP2 forms, EXEC of `v_cmpx`).
    pub fn specials_written(&self) -> Vec<SpecialReg> {
        let m = self.base_mnemonic;
        let mut out: Vec<SpecialReg> = self
            .operands
            .iter()
            .filter(|o| o.written)
            .filter_map(|o| match o.operand {
                Operand::Special { reg, .. } => Some(reg),
                _ => None,
            })
            .collect();
        let fixed_vcc_first = self
            .operands
            .iter()
            .skip(usize::from(self.encoding != Encoding::Vopc))
            .take(1)
            .any(|o| o.operand == Operand::Fixed("vcc"));
        if fixed_vcc_first {
            out.push(SpecialReg::Vcc);
        }
        if m.starts_with("v_cmpx_") || m.contains("saveexec") || m.contains("_wrexec") {
            out.push(SpecialReg::Exec);
        }
        out.dedup();
        out
    }

    /// Special registers the instruction reads, explicit or implied (the
    /// trailing VCC of `v_cndmask_b32_e32` and carry-in VOP2 forms).
    pub fn specials_read(&self) -> Vec<SpecialReg> {
        let mut out: Vec<SpecialReg> = self
            .operands
            .iter()
            .filter(|o| !o.written)
            .filter_map(|o| match o.operand {
                Operand::Special { reg, .. } => Some(reg),
                _ => None,
            })
            .collect();
        if self.operands.len() > 2 && self.operands.last().is_some_and(|o| o.operand == Operand::Fixed("vcc")) {
            out.push(SpecialReg::Vcc);
        }
        out
    }

    /// Registers named by operands the instruction writes.
    pub fn regs_written(&self) -> Vec<RegRange> {
        self.operands.iter().filter(|o| o.written).filter_map(|o| reg_of(&o.operand)).collect()
    }

    /// Registers named by operands the instruction reads (including read-modify-write
    /// destinations of accumulating instructions).
    pub fn regs_read(&self) -> Vec<RegRange> {
        let m = self.base_mnemonic;
        let rmw = m.contains("_mac_")
            || m.contains("_fmac_")
            || m.contains("dot2c_")
            || m.contains("dot4c_")
            || m.contains("dot8c_")
            || m.starts_with("s_addk")
            || m.starts_with("s_mulk")
            || m.starts_with("s_cmovk")
            || m.starts_with("s_cmov_")
            || m.contains("_atomic_");
        self.operands.iter().filter(|o| !o.written || rmw).filter_map(|o| reg_of(&o.operand)).collect()
    }
}

/// The register range of an operand, special pairs included (VCC and EXEC
/// as SGPR-file aliases are reported by their own names, so they are left out).
fn reg_of(op: &Operand) -> Option<RegRange> {
    match op {
        Operand::Reg(r) => Some(*r),
        Operand::Special { reg: SpecialReg::M0, .. } => Some(RegRange::new(RegFile::Sgpr, 124, 1)),
        _ => None,
    }
}
