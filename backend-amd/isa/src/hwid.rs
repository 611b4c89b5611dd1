//! The hardware-ID registers a wave reads with `s_getreg_b32`, and the
//! compute-unit number xfpx derives from them (what a fault location calls
//! an SM on AMD).
//!
//! `HW_ID` (hardware register 4 on gfx9/CDNA): `WAVE_ID` [3:0] (the wave's
//! slot on its SIMD), `SIMD_ID` [5:4], `PIPE_ID` [7:6], `CU_ID` [11:8],
//! `SH_ID` [12], `SE_ID` [15:13] (shader engine), then thread-group, VM,
//! queue, state and micro-engine IDs. gfx940 and later (gfx942, gfx950) are
//! built of several accelerator complex dies; `XCC_ID` (hardware register
//! 20, bits [3:0]) says which one the wave runs on, and `HW_ID` is per die.
//!
//! The compute-unit number is `XCC_ID << 8 | HW_ID[15:8]`: the hardware's
//! own (engine, array, unit) identifier, not a dense index (a die whose
//! arrays have fewer than 16 units has gaps). Targets without `XCC_ID`
//! read it as 0.

use crate::Target;

/// Hardware register number of `HW_ID`.
pub const HW_REG_HW_ID: u16 = 4;
/// Hardware register number of `XCC_ID` (gfx940 and later).
pub const HW_REG_XCC_ID: u16 = 20;

/// A field of a hardware register: its first bit and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwField {
    pub reg: u16,
    pub offset: u16,
    pub size: u16,
}

impl HwField {
    /// The `simm16` of `s_getreg_b32` reading this field: id [5:0],
    /// offset [10:6], size - 1 [15:11].
    pub fn getreg_imm(self) -> u16 {
        self.reg | self.offset << 6 | (self.size - 1) << 11
    }

    /// This field of a register's value.
    pub fn of(self, value: u32) -> u32 {
        (value >> self.offset) & ((1u64 << self.size) - 1) as u32
    }

    /// `v` placed in this field.
    pub fn put(self, v: u32) -> u32 {
        (v & ((1u64 << self.size) - 1) as u32) << self.offset
    }
}

/// `HW_ID.WAVE_ID`: the wave's slot on its SIMD.
pub const WAVE_ID: HwField = HwField { reg: HW_REG_HW_ID, offset: 0, size: 4 };
/// `HW_ID.SIMD_ID`: the SIMD within the compute unit.
pub const SIMD_ID: HwField = HwField { reg: HW_REG_HW_ID, offset: 4, size: 2 };
/// `HW_ID[15:8]`: `SE_ID`, `SH_ID` and `CU_ID` together, the compute unit on its die.
pub const CU_ON_DIE: HwField = HwField { reg: HW_REG_HW_ID, offset: 8, size: 8 };
/// `XCC_ID.XCC_ID`: the die (gfx940 and later).
pub const XCC_ID: HwField = HwField { reg: HW_REG_XCC_ID, offset: 0, size: 4 };

/// Whether `target` has the `XCC_ID` register.
pub fn has_xcc_id(target: Target) -> bool {
    target.is_gfx940_plus()
}

/// The compute-unit number of a wave from its `HW_ID` and `XCC_ID` values.
pub fn compute_unit_number(hw_id: u32, xcc_id: u32) -> u32 {
    XCC_ID.of(xcc_id) << 8 | CU_ON_DIE.of(hw_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getreg_immediates_match_the_assembler() {
        // llvm-mc: s_getreg_b32 s0, hwreg(HW_REG_HW_ID) encodes simm16 0xf804,
        // hwreg(HW_REG_XCC_ID) 0xf814 (all 32 bits).
        let whole = |reg| HwField { reg, offset: 0, size: 32 }.getreg_imm();
        assert_eq!(whole(HW_REG_HW_ID), 0xF804);
        assert_eq!(whole(HW_REG_XCC_ID), 0xF814);
        assert_eq!(CU_ON_DIE.getreg_imm(), 4 | 8 << 6 | 7 << 11);
    }

    #[test]
    fn the_compute_unit_number_packs_die_and_unit() {
        let hw = SIMD_ID.put(3) | CU_ON_DIE.put(37) | WAVE_ID.put(2);
        assert_eq!(compute_unit_number(hw, 0), 37);
        assert_eq!(compute_unit_number(hw, 5), 5 << 8 | 37);
        assert_eq!(SIMD_ID.of(hw), 3);
        assert_eq!(WAVE_ID.of(hw), 2);
    }
}
