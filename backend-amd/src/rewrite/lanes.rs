//! SGPRs a trampoline saves in lanes, and what a site's checks need of
//! SGPRs. In a kernel at its SGPR budget a site's trampoline takes its
//! SGPRs ([`super::scratch::SiteRegs`]) from those dead at the site first;
//! where too few are, it also uses SGPRs live there that none of its
//! instructions names, each kept meanwhile in one lane of a VGPR that is
//! free in every lane: `v_writelane_b32` at the trampoline's start,
//! `v_readlane_b32` back before each way out (its return, the taken path of
//! a branch it moves, a jump it moves).
//!
//! Why this keeps the kernel's values:
//! - Both instructions ignore EXEC: they write and read their lane whatever
//!   lanes are active. So the VGPR must be free in all 64 lanes, not only
//!   in the active ones (a VGPR the liveness calls dead may still hold, in
//!   lanes asleep at the site, values the kernel reads once EXEC widens
//!   again). It is the kernel's scratch VGPR above its allocation that a
//!   site's checks leave unused (`v_class`: their masks go in an SGPR),
//!   where the VGPR allocation grew, or else a VGPR of the allocation that
//!   no instruction of the kernel names and no memory operation writes
//!   (liveness, and so borrowing, exists only for kernels without calls,
//!   indirect jumps or M0-relative register access, so nothing else
//!   reaches it). Nothing but these saves and restores writes it, and each
//!   trampoline reads its lanes back before it leaves: no value is held
//!   from one trampoline to another.
//! - The saved SGPRs are named by none of the span's instructions (read,
//!   written, or written by a memory operation in flight around them): the
//!   moved instructions neither read the trampoline's values in them nor
//!   write values the restore would undo.
//! - Code outside the saved stretch writes the jump pair (a long jump out
//!   of the trampoline, whose address is made before the restores and
//!   which goes through the pair after them) and the SCC save (a long jump
//!   into it, from an island or a window, before the saves): where a
//!   trampoline needs those and they are saved in lanes, it is lowered
//!   again with them dead ([`NEEDS_DEAD_JUMP`], [`NEEDS_DEAD_ENTRY`]), or
//!   refused.
//! - Neither instruction reads or writes SCC or EXEC; SCC is restored from
//!   its save before the lanes are read back.
//! - Wait states: the lane moves are VALU instructions that read or write
//!   SGPRs next to the kernel's own instructions. A VMEM instruction
//!   reading an SGPR a VALU wrote needs 5 (the kernel's next instruction
//!   may load through a restored SGPR); on gfx940+ a VALU reading an SGPR a
//!   VALU wrote needs 2 (the kernel's instruction before the site may have
//!   written a saved SGPR), and a lane read after a VALU write of EXEC 4
//!   (a moved `v_cmpx`). `s_nop 4` goes before the saves and before and
//!   after the restores. The lane index is an inline constant (no
//!   lane-select hazard). The emulator does not model these wait states.

use super::*;
use crate::rewrite::scratch::SiteNeeds;

/// The refusal of a long jump out of the trampoline where its jump pair
/// is saved in lanes (the trampoline is lowered again with it dead).
pub(super) const NEEDS_DEAD_JUMP: &str = "at its register budget: a long jump needs its SGPR pair dead at the site";

/// The refusal of a long jump into the trampoline (its code runs before
/// the saves) where its jump pair or the SCC save is saved in lanes.
pub(super) const NEEDS_DEAD_ENTRY: &str =
    "at its register budget: a long jump needs its SGPR pair and the SCC save dead at the site";

impl AmdLowering<'_> {
    /// What the probes of a span's instructions (`(index, probes)`) need of
    /// a site's SGPRs; `long_jump`: entered by one.
    pub(super) fn site_needs<'p>(
        &self,
        view: &KernelView,
        plan: &Plan,
        steps: impl IntoIterator<Item = (usize, &'p [&'p Probe])>,
        long_jump: bool,
    ) -> SiteNeeds {
        let mut needs = SiteNeeds { dead_jump: long_jump, dead_entry: long_jump, ..SiteNeeds::default() };
        for (index, probes) in steps {
            let after: Vec<&Probe> = probes.iter().copied().filter(|p| p.when == When::After).collect();
            needs.zero_divisor |= self.splits_by_divisor(view, index, &after);
            for p in probes {
                match &p.action {
                    Action::ReadExceptionFlags => needs.own_tmp = true,
                    Action::Count { counter } => {
                        let region = plan.counters.get(counter.0 as usize);
                        needs.third_kept |= region.is_some_and(|c| matches!(c.kind, CounterKind::Region { .. }));
                    }
                    _ => {}
                }
            }
        }
        needs
    }

    /// `s_cselect` of all-ones or zero into the SCC save (a pair or one SGPR).
    pub(super) fn scc_save_words(&self) -> Result<Words, RewriteError> {
        self.scc_words(0)
    }

    /// SCC := the SCC save is not zero.
    pub(super) fn scc_restore_words(&self) -> Result<Words, RewriteError> {
        self.scc_words(1)
    }

    /// The SCC save's (0) or restore's (1) words, both encoded once per SCC save.
    fn scc_words(&self, which: usize) -> Result<Words, RewriteError> {
        let (reg, pair) = self.scratch.scc();
        let key = (self.enc.target, reg, pair);
        if self.memo.scc.get() != Some(key) {
            let save = if pair { Opcode::S_CSELECT_B64 } else { Opcode::S_CSELECT_B32 };
            let save = self.e().sop2(save, reg, Src::Int(-1), Src::Int(0))?;
            let restore = if pair { Opcode::S_CMP_LG_U64 } else { Opcode::S_CMP_LG_U32 };
            let restore = self.e().sopc(restore, reg, Src::Int(0))?;
            self.memo.scc_words[0].set(save);
            self.memo.scc_words[1].set(restore);
            self.memo.scc.set(Some(key));
        }
        Ok(self.memo.scc_words[which].get())
    }

    /// At the trampoline's start: the live SGPRs the site uses, each into
    /// its lane of the lanes VGPR.
    pub(super) fn save_in_lanes(&mut self) -> Result<(), RewriteError> {
        let Some(site) = self.scratch.site else { return Ok(()) };
        if site.in_lanes().is_empty() {
            return Ok(());
        }
        self.lane_wait_states()?;
        for (lane, &r) in site.in_lanes().iter().enumerate() {
            let w = self.e().lane_move(Opcode::V_WRITELANE_B32, site.lanes, Src::Sgpr(r), lane as u8)?;
            self.emit(w);
        }
        Ok(())
    }

    /// Before a way out of the trampoline: the SGPRs saved in lanes back,
    /// and the wait states a VMEM read of them needs.
    pub(super) fn restore_from_lanes(&mut self) -> Result<(), RewriteError> {
        let Some(site) = self.scratch.site else { return Ok(()) };
        if site.in_lanes().is_empty() {
            return Ok(());
        }
        self.lane_wait_states()?;
        for (lane, &r) in site.in_lanes().iter().enumerate() {
            let w = self.e().lane_move(Opcode::V_READLANE_B32, r, Src::Vgpr(site.lanes), lane as u8)?;
            self.emit(w);
        }
        self.lane_wait_states()
    }

    /// `s_nop 4`: the 5 wait states around the lane moves (see the module's doc).
    fn lane_wait_states(&mut self) -> Result<(), RewriteError> {
        let w = self.e().sopp(Opcode::S_NOP, 4)?;
        self.emit(w);
        Ok(())
    }

    /// Refuses where the jump pair (and for a jump into the trampoline,
    /// `entry`, the SCC save), about to be written outside the saved
    /// stretch, is saved in lanes.
    pub(super) fn jump_regs_dead(&self, entry: bool) -> Result<(), RewriteError> {
        let Some(site) = self.scratch.site else { return Ok(()) };
        let j = self.scratch.jump();
        let saved = |r: u16| site.in_lanes().contains(&r);
        if entry && (saved(j) || saved(j + 1) || saved(site.scc)) {
            return Err(RewriteError::Refused(NEEDS_DEAD_ENTRY.into()));
        }
        if saved(j) || saved(j + 1) {
            return Err(RewriteError::Refused(NEEDS_DEAD_JUMP.into()));
        }
        Ok(())
    }
}
