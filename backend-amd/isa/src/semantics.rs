//! What an instruction does beyond its syntax: registers read and written,
//! the wait counters it increments, and its effect on control flow.

use crate::decode::Instruction;
use crate::encoding::Encoding;
use crate::facts::Traits;
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

    /// Counters this instruction increments (`tables/counters.tsv`).
    pub fn counters(&self) -> Counters {
        self.op.counters()
    }

    /// Special registers the instruction writes, explicit or implied by the
    /// encoding (VCC of VOPC `_e32` and of carry-out VOP2 forms, EXEC of `v_cmpx`).
    pub fn specials_written(&self) -> Vec<SpecialReg> {
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
        if self.op.traits().contains(Traits::WRITES_EXEC) {
            out.push(SpecialReg::Exec);
        }
        out.dedup();
        out
    }

    /// Whether the instruction writes EXEC (explicitly, or implied as by
    /// `v_cmpx_*` and the `saveexec`/`wrexec` forms), without allocating:
    /// the emulator asks at every step.
    pub fn writes_exec(&self) -> bool {
        self.operands.iter().any(|o| o.written && matches!(o.operand, Operand::Special { reg: SpecialReg::Exec, .. }))
            || self.op.traits().contains(Traits::WRITES_EXEC)
    }

    /// What the instruction does to EXEC, for the counters' divergence
    /// stack analogue: the `s_*_saveexec_*` family saves EXEC and combines
    /// it (a push); an `s_or` or `s_mov` into EXEC restores a saved mask (a
    /// pop); any other write of EXEC changes it (`s_andn2_b64 exec` as lanes
    /// leave a loop, `s_xor_b64 exec` entering an else, `v_cmpx_*`).
    pub fn exec_effect(&self) -> xfpx_common::counters::MaskEffect {
        use xfpx_common::counters::MaskEffect;
        if self.op.family() == crate::Family::SaveExec {
            return MaskEffect::Save;
        }
        if !self.writes_exec() {
            return MaskEffect::None;
        }
        match self.op {
            Opcode::S_OR_B64 | Opcode::S_OR_B32 | Opcode::S_MOV_B64 | Opcode::S_MOV_B32 => MaskEffect::Restore,
            _ => MaskEffect::Write,
        }
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
        self.reg_writes().collect()
    }

    /// [`Self::regs_written`], one by one.
    pub fn reg_writes(&self) -> impl Iterator<Item = RegRange> + '_ {
        self.operands.iter().filter(|o| o.written).filter_map(|o| reg_of(&o.operand))
    }

    /// Registers named by operands the instruction reads (including read-modify-write
    /// destinations of accumulating instructions).
    pub fn regs_read(&self) -> Vec<RegRange> {
        self.reg_reads().collect()
    }

    /// [`Self::regs_read`], one by one.
    pub fn reg_reads(&self) -> impl Iterator<Item = RegRange> + '_ {
        let rmw = self.op.traits().contains(Traits::READS_DESTINATION);
        self.operands.iter().filter(move |o| !o.written || rmw).filter_map(|o| reg_of(&o.operand))
    }

    /// Registers named by any operand, read or written (with repeats).
    pub fn regs_named(&self) -> impl Iterator<Item = RegRange> + '_ {
        self.operands.iter().filter_map(|o| reg_of(&o.operand))
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

#[cfg(test)]
mod tests {
    use crate::{decode, Target};
    use xfpx_common::counters::MaskEffect;

    #[test]
    fn exec_effects_follow_the_mnemonics() {
        let cases: [(u32, &str, MaskEffect); 4] = [
            (0xBE80_206A, "s_and_saveexec_b64", MaskEffect::Save),
            (0x87FE_007E, "s_or_b64", MaskEffect::Restore),
            (0x89FE_007E, "s_andn2_b64", MaskEffect::Write),
            (0x8780_7E6A, "s_or_b64", MaskEffect::None),
        ];
        for (word, mnemonic, effect) in cases {
            let insn = decode(Target::Gfx90a, &word.to_le_bytes()).expect("decodes");
            assert_eq!((insn.base_mnemonic, insn.exec_effect()), (mnemonic, effect), "{insn}");
        }
    }
}
