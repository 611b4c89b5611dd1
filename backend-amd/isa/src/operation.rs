//! What an opcode's mnemonic says about its operation, as types: the data
//! type it names last, the comparison it makes, and its operation family
//! (`tables/family.tsv`). The generator derives them from the mnemonics
//! into `src/generated/operation.rs`, so that consumers (the emulator) never
//! take mnemonics apart.

use crate::generated::operation;
use crate::opcode::Opcode;

/// A data type a mnemonic names (`_f32`, `_u64`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    B16,
    B32,
    B64,
    I8,
    U8,
    I16,
    U16,
    I24,
    U24,
    I32,
    U32,
    I64,
    U64,
    F16,
    Bf16,
    F32,
    F64,
}

impl DataType {
    /// A 64-bit type.
    pub fn is_64(self) -> bool {
        matches!(self, DataType::B64 | DataType::I64 | DataType::U64 | DataType::F64)
    }
}

/// The condition of a comparison, as the mnemonic spells it (`lg` of the
/// float and scalar compares and `ne` of the vector integer ones are kept
/// apart, as are `tru` and `t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpCond {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ge,
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
    Tru,
    Ne,
    T,
    /// `v_cmp_class_*`: a test of the value's class against a mask.
    Class,
}

/// Which unit compares, and where the result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpUnit {
    /// `s_cmp_*`: two scalar operands, result in SCC.
    Scalar,
    /// `s_cmpk_*`: an SGPR and a 16-bit immediate, result in SCC.
    ScalarImm,
    /// `v_cmp_*`: a lane mask in VCC or an SGPR pair.
    Vector,
    /// `v_cmpx_*`: the lane mask also written to EXEC.
    VectorExec,
}

impl CmpUnit {
    /// A vector compare (`v_cmp_*`, `v_cmpx_*`): a lane mask.
    pub fn is_vector(self) -> bool {
        matches!(self, CmpUnit::Vector | CmpUnit::VectorExec)
    }
}

/// A comparison instruction (`v_cmp_lt_f32_e32` is a vector `Lt` of `F32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compare {
    pub unit: CmpUnit,
    pub cond: CmpCond,
    pub ty: DataType,
}

/// Operation families that span many opcodes (`tables/family.tsv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `v_pk_*`: packed math on two halves (or two dwords).
    Packed,
    /// `v_fma_mix*`: FMA of mixed f16/f32 sources.
    FmaMix,
    /// `v_mfma*`, `v_smfmac*`: matrix multiply-accumulate.
    Matrix,
    /// `v_accvgpr_*`: moves to, from and between AGPRs.
    AccvgprMove,
    /// `v_cvt_*`: conversions.
    Convert,
    /// `flat_atomic_*`, `global_atomic_*`.
    FlatAtomic,
    /// `ds_read*`: LDS reads.
    LdsRead,
    /// `ds_*_rtn_*`: LDS atomics returning the previous value.
    LdsReturn,
    /// `s_*_saveexec_b64`: EXEC saved to an SGPR pair, then combined.
    SaveExec,
    /// None of the above.
    Other,
}

impl Opcode {
    /// The data type the mnemonic names last (its form suffix `_e32`/`_e64`
    /// aside): `F32` for `v_add_f32_e32`, `F64` (the source) for
    /// `v_cvt_f32_f64`; `None` where the last part is not a type.
    pub fn data_type(self) -> Option<DataType> {
        operation::data_type(self)
    }

    /// The comparison of `s_cmp_*`, `s_cmpk_*`, `v_cmp_*` and `v_cmpx_*`.
    pub fn compare(self) -> Option<Compare> {
        operation::compare(self)
    }

    /// The operation family (`Family::Other` for most opcodes).
    pub fn family(self) -> Family {
        operation::family(self)
    }

    /// The opcode standing for every form of this mnemonic: the `_e32` one
    /// where the table has it (`V_MOV_B32_E64` → `V_MOV_B32_E32`), else itself.
    pub fn stem(self) -> Opcode {
        operation::stem(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_follow_the_mnemonics() {
        assert_eq!(Opcode::V_ADD_F32_E64.data_type(), Some(DataType::F32));
        assert_eq!(Opcode::V_CVT_F32_F64_E32.data_type(), Some(DataType::F64));
        assert_eq!(Opcode::FLAT_ATOMIC_ADD_X2.data_type(), None);
        assert_eq!(
            Opcode::V_CMPX_CLASS_F16_E64.compare(),
            Some(Compare { unit: CmpUnit::VectorExec, cond: CmpCond::Class, ty: DataType::F16 })
        );
        assert_eq!(
            Opcode::S_CMPK_GE_I32.compare(),
            Some(Compare { unit: CmpUnit::ScalarImm, cond: CmpCond::Ge, ty: DataType::I32 })
        );
        assert_eq!(Opcode::S_BITCMP0_B32.compare(), None);
        assert_eq!(Opcode::V_PK_FMA_F16.family(), Family::Packed);
        assert_eq!(Opcode::V_SMFMAC_F32_16X16X32_F16.family(), Family::Matrix);
        assert_eq!(Opcode::DS_ADD_RTN_U32.family(), Family::LdsReturn);
        assert_eq!(Opcode::DS_ADD_U32.family(), Family::Other);
        assert_eq!(Opcode::S_ANDN1_SAVEEXEC_B64.family(), Family::SaveExec);
        assert_eq!(Opcode::V_MOV_B32_E64.stem(), Opcode::V_MOV_B32_E32);
        assert_eq!(Opcode::V_FMA_F32.stem(), Opcode::V_FMA_F32);
    }

    #[test]
    fn every_compare_mnemonic_has_a_compare() {
        for op in Opcode::all() {
            let m = op.mnemonic();
            let named = ["v_cmp_", "v_cmpx_", "s_cmp_", "s_cmpk_"].iter().any(|p| m.starts_with(p));
            assert_eq!(op.compare().is_some(), named, "{m}");
        }
    }
}
