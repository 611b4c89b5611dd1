//! Per-opcode facts the rewriter and the emulator dispatch on, as types:
//! traits (`tables/traits.tsv`), the memory access of memory instructions
//! (`tables/access.tsv`), the wait counters an instruction increments
//! (`tables/counters.tsv`), the hazard a reader of its result faces
//! (`tables/hazard.tsv`), the other operation of an IOC fault
//! (`tables/other.tsv`) and what a conversion writes and reads. The
//! generator compiles them into `src/generated/facts.rs`, so that no
//! consumer takes a mnemonic apart.

use crate::generated::facts;
use crate::opcode::Opcode;
use crate::semantics::Counters;
use xfpx_common::view::SourceFormat;

/// A set of traits an opcode has besides its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Traits(u16);

impl Traits {
    pub const NONE: Traits = Traits(0);
    /// Writes EXEC without naming it as an operand (`v_cmpx_*`, the
    /// `saveexec` and `wrexec` forms).
    pub const WRITES_EXEC: Traits = Traits(1);
    /// Reads its destination as well (accumulating forms: `_mac_`,
    /// `_fmac_`, `dot*c_`, `s_addk`, `s_mulk`, `s_cmov*`, `s_bitset*`,
    /// atomics).
    pub const READS_DESTINATION: Traits = Traits(1 << 1);
    /// A move (`*_mov*`): copies bits, computes nothing.
    pub const MOVE: Traits = Traits(1 << 2);
    /// `v_div_scale*`: the first step of the IEEE division sequence.
    pub const DIV_SCALE: Traits = Traits(1 << 3);
    /// `v_div_fmas*`: the fused step of the division sequence.
    pub const DIV_FMAS: Traits = Traits(1 << 4);
    /// `v_div_fixup*`: the step that makes the quotient.
    pub const DIV_FIXUP: Traits = Traits(1 << 5);
    /// `image_gather4*`: gathers four texels whatever the dmask.
    pub const GATHER4: Traits = Traits(1 << 6);
    /// `*cmpswap*`: its data holds the value and the one compared with.
    pub const CMPSWAP: Traits = Traits(1 << 7);
    /// `v_smfmac*`: a sparse matrix operation (its third source is the
    /// sparsity index, not an accumulator).
    pub const SPARSE: Traits = Traits(1 << 8);
    /// `*f8f6f4*`: matrix sources whose format (and width) a modifier picks.
    pub const F8F6F4: Traits = Traits(1 << 9);
    /// May leave part of its vector destination as it was: a 16-bit
    /// result (taken from a 16-bit type in the mnemonic, so conversions
    /// from one count too), a `d16` load, `v_writelane` (one lane), an
    /// image operation (the channels its dmask picks). Compares, matrix
    /// and packed operations write whole registers.
    pub const PARTIAL_WRITE: Traits = Traits(1 << 10);

    /// These traits and `other`'s.
    pub const fn with(self, other: Traits) -> Traits {
        Traits(self.0 | other.0)
    }

    /// Whether every trait of `other` is among these.
    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What a memory instruction does with memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    Load,
    Store,
    /// Reads and writes in one operation (atomics, and the LDS operations
    /// that combine a value into memory).
    Atomic,
}

/// What a VALU instruction reading an opcode's result right after it must
/// wait for (the rewriter's probes read results right after their
/// instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hazard {
    None,
    /// A matrix result (`v_mfma*`, and every instruction of a matrix
    /// class): readable only after the matrix pipeline drains.
    MatrixResult,
    /// A result of the transcendental unit or a division or square-root
    /// step (classes div, sqrt, rsqrt and transcendental): one wait state
    /// on gfx940 and later.
    TransResult,
}

/// What a conversion (`v_cvt_*`) writes and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversion {
    /// It writes something other than a value of its class's format: an
    /// integer, packed or 8-bit float destination (the table's class names
    /// the source format for those).
    pub writes_other_format: bool,
    /// The format of its source.
    pub source: SourceFormat,
}

impl Opcode {
    /// The opcode's traits.
    pub fn traits(self) -> Traits {
        facts::traits(self)
    }

    /// What a memory instruction does with memory (`None` for other
    /// instructions, and for memory instructions that only move data
    /// between lanes, wait or manage caches).
    pub fn access(self) -> Option<Access> {
        facts::access(self)
    }

    /// The wait counters the instruction increments.
    pub fn counters(self) -> Counters {
        facts::counters(self)
    }

    /// What a VALU reader of the result right after the instruction faces.
    pub fn hazard(self) -> Hazard {
        facts::hazard(self)
    }

    /// The other operation of the same unit and encoding that an IOC fault
    /// executes instead (`v_add_f32_e32`: `v_sub_f32_e32`; `v_add_f64`,
    /// with no `v_sub_f64`: `v_mul_f64`).
    pub fn other_operation(self) -> Option<Opcode> {
        facts::other_operation(self)
    }

    /// What a conversion writes and reads (`None` for other opcodes).
    pub fn conversion(self) -> Option<Conversion> {
        facts::conversion(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::FpFormat;

    #[test]
    fn facts_of_known_opcodes() {
        assert!(Opcode::V_CMPX_LT_F32_E32.traits().contains(Traits::WRITES_EXEC));
        assert!(Opcode::S_AND_SAVEEXEC_B64.traits().contains(Traits::WRITES_EXEC));
        assert!(Opcode::V_FMAC_F32_E32.traits().contains(Traits::READS_DESTINATION));
        assert!(Opcode::V_MOV_B32_E32.traits().contains(Traits::MOVE));
        assert!(!Opcode::S_CMOV_B32.traits().contains(Traits::MOVE));
        assert!(Opcode::S_CMOV_B32.traits().contains(Traits::READS_DESTINATION));
        assert!(Opcode::V_DIV_FIXUP_LEGACY_F16.traits().contains(Traits::DIV_FIXUP));
        assert_eq!(Opcode::V_ADD_F32_E32.traits(), Traits::NONE);
        assert!(Opcode::V_ADD_F16_E32.traits().contains(Traits::PARTIAL_WRITE));
        assert!(Opcode::GLOBAL_LOAD_SHORT_D16_HI.traits().contains(Traits::PARTIAL_WRITE));
        assert!(Opcode::V_WRITELANE_B32.traits().contains(Traits::PARTIAL_WRITE));
        assert!(!Opcode::V_PK_ADD_F16.traits().contains(Traits::PARTIAL_WRITE));
        assert!(!Opcode::V_MFMA_F32_16X16X16F16.traits().contains(Traits::PARTIAL_WRITE));
        assert!(!Opcode::V_CMP_LT_F16_E32.traits().contains(Traits::PARTIAL_WRITE));
        assert!(Opcode::S_BITSET1_B32.traits().contains(Traits::READS_DESTINATION));
        assert_eq!(Opcode::DS_READ_B32.access(), Some(Access::Load));
        assert_eq!(Opcode::DS_WRITE_B32.access(), Some(Access::Store));
        assert_eq!(Opcode::DS_ADD_U32.access(), Some(Access::Atomic));
        assert_eq!(Opcode::DS_SWIZZLE_B32.access(), None);
        assert_eq!(Opcode::S_LOAD_DWORD.access(), Some(Access::Load));
        assert_eq!(Opcode::S_DCACHE_INV.access(), None);
        assert_eq!(Opcode::GLOBAL_ATOMIC_ADD_F32.access(), Some(Access::Atomic));
        assert_eq!(Opcode::V_READLANE_B32.access(), None);
        assert_eq!(Opcode::FLAT_LOAD_DWORD.counters(), Counters { vm: true, lgkm: true, exp: false });
        assert_eq!(Opcode::S_DCACHE_WB.counters(), Counters::default());
        assert_eq!(Opcode::S_SENDMSG.counters(), Counters { vm: false, lgkm: true, exp: false });
        assert_eq!(Opcode::V_ADD_F32_E32.counters(), Counters::default());
        assert_eq!(Opcode::V_MFMA_I32_4X4X4I8.hazard(), Hazard::MatrixResult);
        assert_eq!(Opcode::V_SMFMAC_F32_16X16X32_F16.hazard(), Hazard::MatrixResult);
        assert_eq!(Opcode::V_RCP_F32_E32.hazard(), Hazard::TransResult);
        assert_eq!(Opcode::V_ADD_F32_E32.hazard(), Hazard::None);
    }

    #[test]
    fn other_operations_stay_in_their_unit_and_encoding() {
        assert_eq!(Opcode::V_ADD_F32_E32.other_operation(), Some(Opcode::V_SUB_F32_E32));
        assert_eq!(Opcode::V_MUL_F32_E32.other_operation(), Some(Opcode::V_ADD_F32_E32));
        assert_eq!(Opcode::V_ADD_U32_E32.other_operation(), Some(Opcode::V_SUB_U32_E32));
        assert_eq!(Opcode::V_ADD_F64.other_operation(), Some(Opcode::V_MUL_F64));
        assert_eq!(Opcode::S_AND_B32.other_operation(), Some(Opcode::S_OR_B32));
        assert_eq!(Opcode::V_MAX_F32_E32.other_operation(), Some(Opcode::V_MIN_F32_E32));
        assert_eq!(Opcode::S_ENDPGM.other_operation(), None);
    }

    #[test]
    fn conversions_name_what_they_write_and_read() {
        let c = Opcode::V_CVT_I32_F64_E32.conversion().expect("a conversion");
        assert!(c.writes_other_format);
        assert_eq!(c.source, SourceFormat::Is(FpFormat::F64));
        let c = Opcode::V_CVT_F32_UBYTE0_E32.conversion().expect("a conversion");
        assert!(!c.writes_other_format);
        assert_eq!(c.source, SourceFormat::NotFloat);
        assert_eq!(Opcode::V_ADD_F32_E32.conversion(), None);
    }
}
