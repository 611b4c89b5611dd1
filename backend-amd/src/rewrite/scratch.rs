//! The scratch registers a trampoline uses, by role: consecutive from a
//! kernel-wide base above everything the kernel holds (its descriptor grows
//! to hold them), or, in a kernel at its register budget, a site's own
//! ([`SiteRegs`], chosen by [`Scavenger`]): registers dead at the site
//! ([`super::liveness`]), and where too few VGPRs are dead, VGPRs saved
//! into free AGPRs around each stretch of code that uses them.

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

/// A site's scratch registers, dead there (or saved around their use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteRegs {
    /// SCC save, EXEC save, mask, any, table and jump pairs (even).
    pub pairs: [u16; 6],
    pub tmp: u16,
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
}

impl SiteRegs {
    /// The VGPRs saved into AGPRs: (VGPR, AGPR).
    pub fn saves(&self) -> &[(u16, u16)] {
        &self.saved[..self.saved_count]
    }
}

impl Scratch {
    /// Scratch consecutive from these bases.
    pub fn new(sgpr: u16, vgpr: u16) -> Scratch {
        Scratch { sgpr, vgpr, site: None }
    }
    fn pair(&self, role: usize) -> u16 {
        match &self.site {
            Some(s) => s.pairs[role],
            None => self.sgpr + 2 * role as u16,
        }
    }
    fn vgpr(&self, role: usize) -> u16 {
        match &self.site {
            Some(s) => s.vgprs[role.min(1)],
            None => self.vgpr + role as u16,
        }
    }
    /// A pair: SCC is saved as all-ones or zero.
    pub(crate) fn scc(&self) -> Src {
        Src::Sgpr(self.pair(0))
    }
    pub(crate) fn tmp(&self) -> Src {
        Src::Sgpr(self.site.map_or(self.sgpr + 12, |s| s.tmp))
    }
    pub(crate) fn exec_save(&self) -> u16 {
        self.pair(1)
    }
    pub(crate) fn mask(&self) -> u16 {
        self.pair(2)
    }
    pub(crate) fn any(&self) -> u16 {
        self.pair(3)
    }
    pub(crate) fn table(&self) -> u16 {
        self.pair(4)
    }
    pub(crate) fn jump(&self) -> u16 {
        self.pair(5)
    }
    /// The lanes whose divisor is ±0, from the divisor's test before a
    /// division to its checks after (the jump pair, unused in between).
    pub(crate) fn zero_divisor(&self) -> u16 {
        self.pair(5)
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
}

impl Scavenger {
    /// The same choice of registers for another unit (a copy of a function
    /// the kernel calls), whose dead registers `liveness` says.
    pub fn with_liveness(&self, liveness: Liveness) -> Scavenger {
        Scavenger { liveness, sgprs: self.sgprs, vgprs: self.vgprs, agprs: self.agprs, always: self.always }
    }

    /// The registers of a trampoline over the instructions of `span`, from
    /// `base` where the kernel's allocation grew; why not where too few are dead.
    pub fn choose(&self, span: RangeInclusive<usize>, base: Scratch) -> Result<SiteRegs, String> {
        let busy = self.liveness.busy(span.clone());
        let named = self.liveness.named(span);
        let mut site = SiteRegs {
            pairs: std::array::from_fn(|r| base.sgpr + 2 * r as u16),
            tmp: base.sgpr + 12,
            vgprs: [base.vgpr, base.vgpr + 1],
            value: Some(base.vgpr + 3),
            saved: [(0, 0); SCRATCH_VGPRS as usize],
            saved_count: 0,
        };
        if let Some(limit) = self.sgprs {
            let free = |r: u16| r < limit && !busy.contains(RegFile::Sgpr, r);
            let pairs: Vec<u16> = (0..limit).step_by(2).filter(|&r| free(r) && free(r + 1)).take(6).collect();
            let single = (0..limit).find(|&r| free(r) && !pairs.iter().any(|&p| r == p || r == p + 1));
            match (pairs.get(..6), single) {
                (Some(p), Some(t)) => {
                    site.pairs.copy_from_slice(p);
                    site.tmp = t;
                }
                _ => {
                    let dead = (0..limit).filter(|&r| free(r)).count();
                    return Err(format!(
                        "at its register budget: needs 6 SGPR pairs and an SGPR dead at the site, {dead} SGPRs are"
                    ));
                }
            }
        }
        if let Some(limit) = self.vgprs {
            self.choose_vgprs(limit, &busy, &named, &mut site)?;
        }
        Ok(site)
    }

    /// `v_value` (an even pair: dead, else saved into dead AGPRs, else
    /// none) and `v_addr`, `v_data`.
    fn choose_vgprs(&self, limit: u16, busy: &RegSet, named: &RegSet, site: &mut SiteRegs) -> Result<(), String> {
        let dead = |r: u16| r < limit && !busy.contains(RegFile::Vgpr, r);
        let unnamed = |r: u16| r < limit && !named.contains(RegFile::Vgpr, r);
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
