//! The typed identity of an instruction: [`Opcode`], one variant per mnemonic
//! of `tables/gfx9.tsv`, with its mnemonic and control-flow kind (from
//! `tables/control.tsv`). Both are generated into `src/generated/opcode.rs`.

pub use crate::generated::opcode::Opcode;
use crate::generated::opcode::{control, ALL, MNEMONICS};
use crate::semantics::ControlKind;

impl Opcode {
    /// Every opcode, in the mnemonics' alphabetical order.
    pub fn all() -> &'static [Opcode] {
        &ALL
    }

    /// The mnemonic as the table spells it (`v_add_f32_e32`).
    pub fn mnemonic(self) -> &'static str {
        MNEMONICS[self as usize]
    }

    /// The opcode of a mnemonic the table defines (exact spelling).
    pub fn from_mnemonic(mnemonic: &str) -> Option<Opcode> {
        MNEMONICS.binary_search(&mnemonic).ok().map(|i| ALL[i])
    }

    /// How the instruction affects the program counter.
    pub fn control(self) -> ControlKind {
        control(self)
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mnemonic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_round_trip_and_are_sorted() {
        assert!(MNEMONICS.windows(2).all(|w| w[0] < w[1]));
        for (i, op) in Opcode::all().iter().enumerate() {
            assert_eq!(*op as usize, i);
            assert_eq!(Opcode::from_mnemonic(op.mnemonic()), Some(*op));
        }
        assert_eq!(Opcode::from_mnemonic("v_add_f32_e32"), Some(Opcode::V_ADD_F32_E32));
        assert_eq!(Opcode::V_ADD_F32_E32.to_string(), "v_add_f32_e32");
        assert_eq!(Opcode::from_mnemonic("v_add_f32"), None);
    }

    #[test]
    fn every_row_names_its_opcode() {
        for row in crate::table::rows() {
            assert_eq!(Opcode::from_mnemonic(row.mnemonic()), Some(row.op));
        }
    }

    #[test]
    fn control_kinds_come_from_the_control_table() {
        assert_eq!(Opcode::S_BRANCH.control(), ControlKind::Branch);
        assert_eq!(Opcode::S_CBRANCH_EXECZ.control(), ControlKind::CondBranch);
        assert_eq!(Opcode::S_CALL_B64.control(), ControlKind::Call);
        assert_eq!(Opcode::S_GETPC_B64.control(), ControlKind::GetPc);
        assert_eq!(Opcode::S_SETPC_B64.control(), ControlKind::Indirect);
        assert_eq!(Opcode::S_ENDPGM.control(), ControlKind::End);
        assert_eq!(Opcode::S_TRAP.control(), ControlKind::Trap);
        assert_eq!(Opcode::V_ADD_F32_E32.control(), ControlKind::None);
        let table = include_str!("../tables/control.tsv");
        let listed = table.lines().skip(1).filter(|l| !l.is_empty()).count();
        assert_eq!(Opcode::all().iter().filter(|o| o.control() != ControlKind::None).count(), listed);
    }
}
