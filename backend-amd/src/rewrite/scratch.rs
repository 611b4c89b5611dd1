//! The scratch registers a trampoline uses, by role: consecutive from a
//! kernel-wide base above everything the kernel holds (its descriptor grows
//! to hold them), or, in a kernel at its register budget, a site's own
//! ([`SiteRegs`], chosen by [`Scavenger`]): registers dead at the site
//! ([`super::liveness`]); where too few VGPRs are dead, VGPRs saved into
//! free AGPRs around each stretch of code that uses them; where too few
//! SGPRs are dead, SGPRs the site's instructions do not name, saved in
//! lanes of a VGPR free in every lane around the trampoline (see `lower`'s
//! `lanes` for why that is sound).
//!
//! A site's checks need few SGPRs at once, so its roles share them: SCC is
//! saved in one SGPR; one pair holds `any` while testing, the EXEC save
//! while recording, and the jump pair (no check runs while a jump's code
//! does); one the class test's mask while testing, and the one lane's index
//! and kept values while recording; one the table's address while
//! recording, its low SGPR `tmp` (the class mask, a count) before. Only a
//! division whose checks split by divisor adds the zero-divisor pair,
//! screening a `tmp` of its own and a region count a third kept SGPR
//! ([`SiteNeeds`]): 7 SGPRs, at most 10, in place of 14.

use std::ops::RangeInclusive;

use xfpx_amd_isa::operand::RegFile;

use super::encode::Src;
use super::liveness::{Liveness, RegSet};

/// Scratch SGPRs the trampolines use, from the first one up.
pub const SCRATCH_SGPRS: u16 = 14;
/// Scratch VGPRs the trampolines use.
pub const SCRATCH_VGPRS: u16 = 5;

/// The scratch registers of one kernel (and, at its register budget, of one site).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scratch {
    /// First scratch SGPR (a multiple of 4).
    pub sgpr: u16,
    /// First scratch VGPR.
    pub vgpr: u16,
    /// A site's own registers, in place of those from the bases.
    pub site: Option<SiteRegs>,
}

/// What a trampoline's code needs of a site's SGPRs besides the SCC save
/// and the three pairs every check uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiteNeeds {
    /// A division whose checks split infinite quotients by divisor: the
    /// zero-divisor pair, held from before the division to its checks.
    pub zero_divisor: bool,
    /// Screening: a `tmp` of its own (the exception bits are held across
    /// the records).
    pub own_tmp: bool,
    /// A region count: a third SGPR for the values the one lane keeps.
    pub third_kept: bool,
    /// Left by a long jump: the first pair (the jump pair) dead at the
    /// site, as the jump goes through it after the SGPRs saved in lanes are
    /// back.
    pub dead_jump: bool,
    /// Entered by a long jump: the jump pair and the SCC save dead at the
    /// site (the jump's code runs before the saves).
    pub dead_entry: bool,
}

/// Most SGPRs a site saves in lanes: the SCC save, four pairs and two singles.
pub const MAX_LANE_SAVES: usize = 11;

/// A site's scratch registers, dead there (or saved around their use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteRegs {
    /// SCC saved as all-ones or zero (one SGPR).
    pub scc: u16,
    /// Three pairs (even): `any` while testing, the EXEC save while
    /// recording and the jump pair; the class test's mask while testing,
    /// the first lane's index and kept values while recording; the table
    /// address while recording.
    pub pairs: [u16; 3],
    /// The zero-divisor pair, where the site needs one.
    pub zero: Option<u16>,
    /// The class mask or a count before its record: the table pair's low
    /// SGPR (free until the record writes the address), or one of its own.
    pub tmp: u16,
    /// A third SGPR for the one lane's kept values, where needed.
    pub third: Option<u16>,
    /// `v_addr`, `v_data`: dead at the site where some are, else VGPRs the
    /// span does not name (the one lane a table update writes keeps its
    /// values of them meanwhile, see `one_lane`). No `v_class`: the class
    /// masks go in `tmp`.
    pub vgprs: [u16; 2],
    /// `v_value` (an even pair) for values that must be moved before their
    /// test (AGPRs, halves, SGPRs); None where no pair is dead or savable.
    pub value: Option<u16>,
    /// VGPRs live at the site, saved into AGPRs around each stretch of code
    /// that uses them: (VGPR, AGPR), the first `saved_count`.
    pub saved: [(u16, u16); SCRATCH_VGPRS as usize],
    pub saved_count: usize,
    /// SGPRs live at the site (named by none of its instructions) that it
    /// uses anyway: lane k of `lanes` keeps `in_lanes[k]` from the
    /// trampoline's start to each of its exits, the first `in_lanes_count`.
    pub in_lanes: [u16; MAX_LANE_SAVES],
    pub in_lanes_count: usize,
    /// A VGPR free in every lane (see the module's doc).
    pub lanes: u16,
}

impl SiteRegs {
    /// The VGPRs saved into AGPRs: (VGPR, AGPR).
    pub fn saves(&self) -> &[(u16, u16)] {
        &self.saved[..self.saved_count]
    }

    /// The SGPRs saved in lanes of [`SiteRegs::lanes`], lane k the k-th.
    pub fn in_lanes(&self) -> &[u16] {
        &self.in_lanes[..self.in_lanes_count]
    }

    /// A site's registers from the kernel's scratch bases (above its
    /// allocation): the SCC save, the pairs, the zero-divisor pair, `tmp`
    /// and the third kept SGPR within [`SCRATCH_SGPRS`] of `base.sgpr`.
    fn from_base(base: Scratch) -> SiteRegs {
        let s = base.sgpr;
        SiteRegs {
            scc: s,
            pairs: [s + 2, s + 4, s + 6],
            zero: Some(s + 8),
            tmp: s + 12,
            third: Some(s + 10),
            vgprs: [base.vgpr, base.vgpr + 1],
            value: Some(base.vgpr + 3),
            saved: [(0, 0); SCRATCH_VGPRS as usize],
            saved_count: 0,
            in_lanes: [0; MAX_LANE_SAVES],
            in_lanes_count: 0,
            lanes: base.vgpr + 2,
        }
    }
}

impl Scratch {
    /// Scratch consecutive from these bases.
    pub fn new(sgpr: u16, vgpr: u16) -> Scratch {
        Scratch { sgpr, vgpr, site: None }
    }
    fn pair(&self, role: usize) -> u16 {
        self.sgpr + 2 * role as u16
    }
    fn vgpr(&self, role: usize) -> u16 {
        match &self.site {
            Some(s) => s.vgprs[role.min(1)],
            None => self.vgpr + role as u16,
        }
    }
    /// Where SCC is saved as all-ones or zero: a pair (the kernel's
    /// scratch), or one SGPR (a site's), and whether it is a pair.
    pub(crate) fn scc(&self) -> (Src, bool) {
        match &self.site {
            Some(s) => (Src::Sgpr(s.scc), false),
            None => (Src::Sgpr(self.pair(0)), true),
        }
    }
    pub(crate) fn tmp(&self) -> Src {
        Src::Sgpr(self.site.map_or(self.sgpr + 12, |s| s.tmp))
    }
    pub(crate) fn exec_save(&self) -> u16 {
        self.site.map_or(self.pair(1), |s| s.pairs[0])
    }
    pub(crate) fn mask(&self) -> u16 {
        self.site.map_or(self.pair(2), |s| s.pairs[1])
    }
    /// Some lane's tests: a site's EXEC-save pair (tests and records do not overlap).
    pub(crate) fn any(&self) -> u16 {
        self.site.map_or(self.pair(3), |s| s.pairs[0])
    }
    pub(crate) fn table(&self) -> u16 {
        self.site.map_or(self.pair(4), |s| s.pairs[2])
    }
    /// The pair a long jump goes through: a site's EXEC-save pair (no
    /// check runs while a jump's code does).
    pub(crate) fn jump(&self) -> u16 {
        self.site.map_or(self.pair(5), |s| s.pairs[0])
    }
    /// The lanes whose divisor is ±0, from the divisor's test before a
    /// division to its checks after (the kernel's jump pair, unused in
    /// between); None at a site that has no such pair.
    pub(crate) fn zero_divisor(&self) -> Option<u16> {
        match &self.site {
            Some(s) => s.zero,
            None => Some(self.pair(5)),
        }
    }
    /// Where a single-lane table update keeps the one lane's index first
    /// (then its values of the VGPRs it writes, see `one_lane`), and those
    /// values: the mask pair and a site's third SGPR.
    pub(crate) fn lane_keep(&self) -> Vec<u16> {
        match &self.site {
            Some(s) => [s.pairs[1], s.pairs[1] + 1].into_iter().chain(s.third).collect(),
            None => vec![self.mask(), self.mask() + 1, self.any(), self.any() + 1],
        }
    }
    pub(crate) fn v_addr(&self) -> u16 {
        self.vgpr(0)
    }
    pub(crate) fn v_data(&self) -> u16 {
        self.vgpr(1)
    }
    pub(crate) fn v_class(&self) -> u16 {
        self.vgpr(2)
    }
    /// The value scratch (a pair); None where a site has none.
    pub(crate) fn value(&self) -> Option<u16> {
        match &self.site {
            Some(s) => s.value,
            None => Some(self.vgpr + 3),
        }
    }
}

/// Chooses each site's registers in a kernel at its register budget.
#[derive(Debug, Clone)]
pub struct Scavenger {
    pub liveness: Liveness,
    /// The kernel's own SGPRs `s0..sgprs` to borrow from (None: SGPRs come
    /// from the base, above its allocation).
    pub sgprs: Option<u16>,
    /// The same for VGPRs.
    pub vgprs: Option<u16>,
    /// AGPRs `a0..agprs` its allocation holds, where dead ones may keep
    /// saved VGPRs.
    pub agprs: u16,
    /// Every trampoline borrows (else only those over several instructions:
    /// a kernel screened within its allocation, where a single `s_endpgm`
    /// finds every register dead).
    pub always: bool,
    /// Registers some instruction of the kernel or of a function it reaches
    /// names (or a memory operation of theirs writes): the others are free
    /// in every lane everywhere, in the kernel and in its copies alike.
    pub named_in_reach: RegSet,
}

impl Scavenger {
    /// The same choice of registers for another unit (a copy of a function
    /// the kernel calls), whose dead registers `liveness` says.
    pub fn with_liveness(&self, liveness: Liveness) -> Scavenger {
        let Scavenger { sgprs, vgprs, agprs, always, named_in_reach, .. } = *self;
        Scavenger { liveness, sgprs, vgprs, agprs, always, named_in_reach }
    }

    /// The registers of a trampoline over the instructions of `span` that
    /// `needs` what it says, from `base` where the kernel's allocation
    /// grew; why not where too few are dead or savable.
    pub fn choose(&self, span: RangeInclusive<usize>, base: Scratch, needs: SiteNeeds) -> Result<SiteRegs, String> {
        let busy = self.liveness.busy(span.clone());
        let named = self.liveness.named(span);
        let mut site = SiteRegs::from_base(base);
        if let Some(limit) = self.sgprs {
            self.choose_sgprs(limit, &busy, &named, needs, base, &mut site)?;
        }
        if let Some(limit) = self.vgprs {
            let lanes = (site.in_lanes_count > 0).then_some(site.lanes);
            self.choose_vgprs(limit, &busy, &named, lanes, &mut site)?;
        }
        Ok(site)
    }

    /// A VGPR free in every lane at every site: the kernel's scratch VGPR
    /// that a site's checks leave unused (`v_class`: their masks go in
    /// `tmp`) where its VGPR allocation grew, else one below its allocation
    /// that no instruction of the kernel names (nor a memory operation
    /// writes).
    fn lanes_vgpr(&self, base: Scratch) -> Option<u16> {
        match self.vgprs {
            None => Some(base.vgpr + 2),
            Some(limit) => (0..limit).find(|&v| !self.named_in_reach.contains(RegFile::Vgpr, v)),
        }
    }

    /// The SCC save, the pairs and singles `needs` asks for: SGPRs dead at
    /// the site first, then SGPRs live there that the span does not name,
    /// saved in lanes of a VGPR free in every lane.
    fn choose_sgprs(
        &self,
        limit: u16,
        busy: &RegSet,
        named: &RegSet,
        needs: SiteNeeds,
        base: Scratch,
        site: &mut SiteRegs,
    ) -> Result<(), String> {
        let dead = |r: u16| r < limit && !busy.contains(RegFile::Sgpr, r);
        let savable = |r: u16| r < limit && !named.contains(RegFile::Sgpr, r);
        let pairs_needed = 3 + usize::from(needs.zero_divisor);
        let singles_needed = 1 + usize::from(needs.own_tmp) + usize::from(needs.third_kept);
        let needed = 2 * pairs_needed + singles_needed;
        let dead_count = (0..limit).filter(|&r| dead(r)).count();
        // Pairs whose two SGPRs are dead or savable, fewest saved first.
        let cost = |r: u16| usize::from(!dead(r)) + usize::from(!dead(r + 1));
        let mut candidates: Vec<u16> =
            (0..limit.saturating_sub(1)).step_by(2).filter(|&r| savable(r) && savable(r + 1)).collect();
        candidates.sort_by_key(|&r| (cost(r), r));
        let mut taken = RegSet::default();
        let free = |taken: &RegSet, r: u16| !taken.contains(RegFile::Sgpr, r);
        // First what must be dead: the jump pair where a long jump leaves
        // through it, the SCC save where one enters (a dead SGPR whose mate
        // is not, where there is one, leaving dead pairs whole).
        let jump = needs.dead_jump.then(|| candidates.iter().copied().find(|&r| cost(r) == 0)).flatten();
        if let Some(r) = jump {
            taken.insert(RegFile::Sgpr, r);
            taken.insert(RegFile::Sgpr, r + 1);
        }
        let scc = needs
            .dead_entry
            .then(|| {
                (0..limit)
                    .filter(|&r| free(&taken, r) && dead(r))
                    .min_by_key(|&r| (free(&taken, r ^ 1) && dead(r ^ 1), r))
            })
            .flatten();
        if let Some(r) = scc {
            taken.insert(RegFile::Sgpr, r);
        }
        let mut pairs: Vec<u16> = jump.into_iter().collect();
        while pairs.len() < pairs_needed && (jump.is_some() || !needs.dead_jump) {
            let Some(r) = candidates.iter().copied().find(|&r| free(&taken, r) && free(&taken, r + 1)) else { break };
            taken.insert(RegFile::Sgpr, r);
            taken.insert(RegFile::Sgpr, r + 1);
            pairs.push(r);
        }
        let mut singles: Vec<u16> = scc.into_iter().collect();
        while singles.len() < singles_needed && (scc.is_some() || !needs.dead_entry) {
            let dead_one = (0..limit).find(|&r| free(&taken, r) && dead(r));
            let Some(r) = dead_one.or_else(|| (0..limit).find(|&r| free(&taken, r) && savable(r))) else { break };
            taken.insert(RegFile::Sgpr, r);
            singles.push(r);
        }
        let chosen: Vec<u16> = pairs.iter().flat_map(|&p| [p, p + 1]).chain(singles.iter().copied()).collect();
        let in_lanes: Vec<u16> = chosen.iter().copied().filter(|&r| !dead(r)).collect();
        let lanes = if in_lanes.is_empty() { None } else { self.lanes_vgpr(base) };
        if (needs.dead_jump && jump.is_none()) || (needs.dead_entry && scc.is_none()) {
            return Err(format!(
                "at its register budget: a long jump needs an even SGPR pair{} dead at the site, {dead_count} SGPRs are",
                if needs.dead_entry { " and another SGPR" } else { "" }
            ));
        }
        if pairs.len() < pairs_needed || singles.len() < singles_needed {
            let usable = (0..limit).filter(|&r| savable(r)).count();
            return Err(format!(
                "at its register budget: needs {needed} SGPRs ({pairs_needed} of them even pairs) dead at the site or \
                 named by none of its instructions, {usable} are ({dead_count} dead)"
            ));
        }
        if !in_lanes.is_empty() && lanes.is_none() {
            return Err(format!(
                "at its register budget: needs {needed} SGPRs ({pairs_needed} of them even pairs) dead at the site, \
                 {dead_count} are, and no VGPR is free in every lane to save live ones in"
            ));
        }
        let mut singles = singles.into_iter();
        site.pairs.copy_from_slice(&pairs[..3]);
        site.zero = pairs.get(3).copied();
        site.scc = singles.next().unwrap_or_default();
        site.tmp = if needs.own_tmp { singles.next().unwrap_or_default() } else { site.pairs[2] };
        site.third = singles.next();
        site.in_lanes_count = in_lanes.len().min(MAX_LANE_SAVES);
        site.in_lanes[..site.in_lanes_count].copy_from_slice(&in_lanes[..site.in_lanes_count]);
        if let Some(v) = lanes {
            site.lanes = v;
        }
        Ok(())
    }

    /// `v_value` (an even pair: dead, else saved into dead AGPRs, else
    /// none) and `v_addr`, `v_data`; never `lanes`, the VGPR that keeps
    /// SGPRs saved in lanes.
    fn choose_vgprs(
        &self,
        limit: u16,
        busy: &RegSet,
        named: &RegSet,
        lanes: Option<u16>,
        site: &mut SiteRegs,
    ) -> Result<(), String> {
        let dead = |r: u16| r < limit && !busy.contains(RegFile::Vgpr, r) && Some(r) != lanes;
        let unnamed = |r: u16| r < limit && !named.contains(RegFile::Vgpr, r) && Some(r) != lanes;
        let homes: Vec<u16> = (0..self.agprs).filter(|&a| !busy.contains(RegFile::Agpr, a)).take(2).collect();
        let pairs = || (0..limit.saturating_sub(1)).step_by(2);
        site.value = None;
        site.saved_count = 0;
        if let Some(p) = pairs().find(|&r| dead(r) && dead(r + 1)) {
            site.value = Some(p);
        } else if let (Some(p), 2) = (pairs().find(|&r| unnamed(r) && unnamed(r + 1)), homes.len()) {
            site.value = Some(p);
            site.saved[0] = (p, homes[0]);
            site.saved[1] = (p + 1, homes[1]);
            site.saved_count = 2;
        }
        let in_value = |r: u16| site.value.is_some_and(|p| r == p || r == p + 1);
        let mut singles = (0..limit).filter(|&r| dead(r) && !in_value(r)).collect::<Vec<_>>();
        singles.extend((0..limit).filter(|&r| unnamed(r) && !dead(r) && !in_value(r)));
        let [a, b, ..] = singles[..] else {
            return Err("at its register budget: no two VGPRs at the site are dead or unnamed".into());
        };
        site.vgprs = [a, b];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::waitcnt::tests::instrs as decode;
    use super::super::waitcnt::WaitAnalysis;
    use super::*;

    /// 0 v_add_f32 v4, v0, v0 (the site); 1-4 s_cmp_eq_u64 reading s0-s15
    /// (set at entry, so live at the site and named by it not at all); 5
    /// s_endpgm. Its SGPRs `s0..sgprs` borrowable, VGPRs from the base or `v0..vgprs`.
    fn scavenger(sgprs: u16, vgprs: Option<u16>) -> Scavenger {
        let code = decode(&[0x0208_0100, 0xBF12_0200, 0xBF12_0604, 0xBF12_0A08, 0xBF12_0E0C, 0xBF81_0000]);
        let waits = WaitAnalysis::run(&code);
        let mut entry = RegSet::default();
        (0..16).for_each(|r| entry.insert(RegFile::Sgpr, r));
        entry.insert(RegFile::Vgpr, 0);
        let liveness = Liveness::run(&code, &waits, &entry).expect("known flow");
        let named_in_reach = liveness.named_anywhere();
        Scavenger { liveness, sgprs: Some(sgprs), vgprs, agprs: 0, always: true, named_in_reach }
    }

    fn sgprs_of(site: &SiteRegs) -> Vec<u16> {
        let mut all: Vec<u16> = site.pairs.iter().chain(&site.zero).flat_map(|&p| [p, p + 1]).collect();
        all.push(site.scc);
        all.extend(site.third);
        all
    }

    #[test]
    fn roles_share_seven_sgprs_and_live_ones_are_saved_in_lanes_of_a_vgpr_free_in_every_lane() {
        let base = Scratch::new(40, 8);
        // No SGPR dead: all 7 saved, in lanes of the base's unused v_class.
        let site = scavenger(16, None).choose(0..=0, base, SiteNeeds::default()).expect("chooses");
        let mut all = sgprs_of(&site);
        assert_eq!((all.len(), site.in_lanes().len(), site.lanes, site.tmp), (7, 7, 10, site.pairs[2]));
        assert!(site.pairs.iter().all(|p| p % 2 == 0) && all.iter().all(|&r| r < 16));
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 7, "{site:?}");
        // s16-s19 dead: two pairs from them, the third pair and the SCC save saved.
        let site = scavenger(20, None).choose(0..=0, base, SiteNeeds::default()).expect("chooses");
        assert_eq!((&site.pairs[..2], site.in_lanes().len()), (&[16, 18][..], 3));
        // A division's zero-divisor pair and a third kept SGPR: 10.
        let needs = SiteNeeds { zero_divisor: true, third_kept: true, ..SiteNeeds::default() };
        let site = scavenger(20, None).choose(0..=0, base, needs).expect("chooses");
        assert_eq!((sgprs_of(&site).len(), site.in_lanes().len()), (10, 6));
        // A long jump in: its pair and the SCC save dead, never saved.
        let needs = SiteNeeds { dead_jump: true, dead_entry: true, ..SiteNeeds::default() };
        let site = scavenger(20, None).choose(0..=0, base, needs).expect("chooses");
        assert_eq!((site.pairs[0], site.scc), (16, 18));
        assert!(!site.in_lanes().iter().any(|&r| (16..=18).contains(&r)), "{site:?}");
        let why = scavenger(18, None).choose(0..=0, base, needs).expect_err("only one dead pair");
        assert!(why.contains("a long jump needs an even SGPR pair and another SGPR dead"), "{why}");
    }

    #[test]
    fn with_vgprs_borrowed_the_lanes_are_a_vgpr_the_kernel_never_names() {
        // v0 and v4 are named: v1 is free in every lane, and no other role takes it.
        let site = scavenger(16, Some(8)).choose(0..=0, Scratch::new(40, 8), SiteNeeds::default()).expect("chooses");
        assert_eq!(site.lanes, 1);
        assert!(!site.vgprs.contains(&1) && site.value.is_some_and(|p| p > 1), "{site:?}");
        // Within v0 alone, nothing is free to save SGPRs in.
        let why = scavenger(16, Some(1)).choose(0..=0, Scratch::new(40, 8), SiteNeeds::default()).expect_err("none");
        assert!(why.contains("no VGPR is free in every lane"), "{why}");
    }
}
