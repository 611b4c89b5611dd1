//! SASS opcodes as instruction-mix classes ([`MixClass`]): floating-point
//! work keeps its class from the opcode table; memory instructions are
//! named by space; the rest by what they do. One table, by base opcode.

use super::parse::SassInstr;
use xfpx_common::class::InstrClass;
use xfpx_common::counters::{MemSpace, MixClass};

/// Base opcodes of each non-floating-point class.
static TABLE: &[(&[&str], MixClass)] = &[
    (&["LDG", "LD"], MixClass::Load { space: MemSpace::Generic }),
    (&["STG", "ST"], MixClass::Store { space: MemSpace::Generic }),
    (&["LDS", "LDSM"], MixClass::Load { space: MemSpace::Shared }),
    (&["STS"], MixClass::Store { space: MemSpace::Shared }),
    (&["LDL"], MixClass::Load { space: MemSpace::Local }),
    (&["STL"], MixClass::Store { space: MemSpace::Local }),
    (&["LDC", "ULDC"], MixClass::Load { space: MemSpace::Constant }),
    (&["ATOMG", "ATOM", "RED", "REDG"], MixClass::Atomic { space: MemSpace::Generic }),
    (&["ATOMS"], MixClass::Atomic { space: MemSpace::Shared }),
    (&["BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BREAK", "BPT"], MixClass::Branch),
    (&["BAR"], MixClass::Barrier),
    (&["BSYNC", "WARPSYNC"], MixClass::Reconverge),
    (
        &[
            "IADD3", "IADD", "IMAD", "IMUL", "ISETP", "ISCADD", "LOP3", "LOP", "SHF", "SHL", "SHR", "LEA", "IMNMX",
            "VIMNMX", "IABS", "POPC", "FLO", "BREV", "PRMT", "SEL", "IDP", "BMSK", "SGXT", "UIADD3", "UIMAD", "ULOP3",
            "USHF", "ULEA", "UISETP", "USEL", "UPRMT", "UFLO", "UPOPC", "UBREV", "USGXT", "UBMSK", "PLOP3", "UPLOP3",
        ],
        MixClass::Integer,
    ),
];

/// The mix class of one instruction whose class in the kernel view is `class`.
pub fn mix_class(ins: &SassInstr, class: InstrClass) -> MixClass {
    if class.is_fp() {
        return MixClass::Fp { class };
    }
    let op = ins.opcode.as_str();
    let mut found = TABLE.iter().find(|(ops, _)| ops.contains(&op)).map_or(MixClass::Other, |(_, m)| *m);
    // global and generic accesses: `.E` addressing of LDG/STG/ATOMG is global
    if matches!(op, "LDG" | "STG" | "ATOMG" | "REDG") || (op == "RED" && ins.modifiers.iter().any(|m| m == "E")) {
        found = match found {
            MixClass::Load { .. } => MixClass::Load { space: MemSpace::Global },
            MixClass::Store { .. } => MixClass::Store { space: MemSpace::Global },
            MixClass::Atomic { .. } => MixClass::Atomic { space: MemSpace::Global },
            other => other,
        };
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sass::parse_instruction;

    #[test]
    fn classes() {
        let m = |t: &str| mix_class(&parse_instruction(t).unwrap(), InstrClass::Other).label();
        assert_eq!(m("LDG.E R0, desc[UR4][R2.64]"), "load.global");
        assert_eq!(m("LD.E R0, [R2.64]"), "load.generic");
        assert_eq!(m("STS [R1], R0"), "store.shared");
        assert_eq!(m("ATOMS.ADD R0, [R1], R2"), "atomic.shared");
        assert_eq!(m("@P0 BRA 0x40"), "branch");
        assert_eq!(m("BSYNC B0"), "reconverge");
        assert_eq!(m("BAR.SYNC.DEFER_BLOCKING 0x0"), "barrier");
        assert_eq!(m("IMAD R0, R1, R2, R3"), "int");
        assert_eq!(m("MOV R0, R1"), "other");
    }
}
