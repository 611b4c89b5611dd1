//! Where the emulator places each wave: a documented, deterministic model of
//! compute units and SIMDs, so that a wave's `HW_ID` (and `XCC_ID`) reads
//! are reproducible and a fault located on a compute unit, SIMD, wave slot
//! and lanes hits exactly the waves this model says.
//!
//! - Workgroup `i` (linear: `x + nx * (y + ny * z)`) runs on compute-unit
//!   slot `i mod N`, `N` the target's compute units (MI100/gfx908: 120;
//!   MI210/gfx90a: 104; MI300X/gfx942: 304; MI355X/gfx950: 256) unless the
//!   launch or the caller sets another number.
//! - Wave `w` of a workgroup runs on SIMD `w mod 4`, in wave slot `w / 4`
//!   of that SIMD (the emulator runs one workgroup at a time, so slots are
//!   counted within the workgroup).
//! - On targets with several dies (gfx942: 38 compute units per die,
//!   gfx950: 32), slot `c` is on die `c / per_die` as unit `c mod per_die`;
//!   elsewhere all units are on die 0. The unit on its die fills `HW_ID`'s
//!   `CU_ID` [11:8], `SH_ID` [12] and `SE_ID` [15:13] as one number, so the
//!   compute-unit number ([`xfpx_amd_isa::hwid::compute_unit_number`]) of
//!   slot `c` is `die << 8 | unit`.

use xfpx_amd_isa::hwid::{CU_ON_DIE, SIMD_ID, WAVE_ID};
use xfpx_amd_isa::Target;

/// SIMDs per compute unit on CDNA.
pub const SIMDS_PER_CU: u32 = 4;

/// The compute units of `target`'s reference device (public specifications).
pub fn default_compute_units(target: Target) -> u32 {
    match target {
        Target::Gfx908 => 120,
        Target::Gfx90a => 104,
        Target::Gfx942 => 304,
        Target::Gfx950 => 256,
    }
}

/// Compute units per die (all of them where the target has one die).
fn units_per_die(target: Target) -> Option<u32> {
    match target {
        Target::Gfx942 => Some(38),
        Target::Gfx950 => Some(32),
        Target::Gfx908 | Target::Gfx90a => None,
    }
}

/// Where one wave runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavePlace {
    /// The value of `HW_ID` the wave reads.
    pub hw_id: u32,
    /// The value of `XCC_ID` the wave reads (0 where the target has none).
    pub xcc_id: u32,
}

/// The placement model of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub target: Target,
    /// Compute units workgroups are spread over.
    pub compute_units: u32,
}

impl Placement {
    /// The model for `target` with `compute_units` (None or 0: the target's default).
    pub fn new(target: Target, compute_units: Option<u32>) -> Placement {
        let n = compute_units.filter(|&n| n > 0).unwrap_or_else(|| default_compute_units(target));
        Placement { target, compute_units: n }
    }

    /// The compute-unit slot of linear workgroup `workgroup`.
    pub fn slot(&self, workgroup: u64) -> u32 {
        (workgroup % u64::from(self.compute_units)) as u32
    }

    /// (die, unit on the die) of slot `slot`.
    pub fn die_and_unit(&self, slot: u32) -> (u32, u32) {
        match units_per_die(self.target) {
            Some(per) => (slot / per, slot % per),
            None => (0, slot),
        }
    }

    /// The compute-unit number (`XCC_ID << 8 | HW_ID[15:8]`) of linear workgroup `workgroup`.
    pub fn compute_unit_number(&self, workgroup: u64) -> u32 {
        let (die, unit) = self.die_and_unit(self.slot(workgroup));
        die << 8 | unit
    }

    /// Where wave `wave` of linear workgroup `workgroup` runs.
    pub fn place(&self, workgroup: u64, wave: u32) -> WavePlace {
        let (die, unit) = self.die_and_unit(self.slot(workgroup));
        let hw_id = WAVE_ID.put(wave / SIMDS_PER_CU) | SIMD_ID.put(wave % SIMDS_PER_CU) | CU_ON_DIE.put(unit);
        WavePlace { hw_id, xcc_id: die }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::hwid::compute_unit_number;

    #[test]
    fn workgroups_cycle_over_units_and_waves_over_simds() {
        let p = Placement::new(Target::Gfx90a, None);
        assert_eq!(p.compute_units, 104);
        let w = p.place(105, 6);
        assert_eq!(compute_unit_number(w.hw_id, w.xcc_id), 1);
        assert_eq!((SIMD_ID.of(w.hw_id), WAVE_ID.of(w.hw_id)), (2, 1));
        // gfx942: slot 40 is unit 2 of die 1.
        let p = Placement::new(Target::Gfx942, None);
        let w = p.place(40, 0);
        assert_eq!((w.xcc_id, CU_ON_DIE.of(w.hw_id)), (1, 2));
        assert_eq!(p.compute_unit_number(40), 1 << 8 | 2);
        assert_eq!(Placement::new(Target::Gfx942, Some(4)).compute_unit_number(6), 2);
    }
}
