//! Trampolines and the ways into them. One trampoline covers a span of
//! consecutive instructions: usually the one instrumented instruction,
//! whose slot becomes an `s_branch` to it (directly, or through relays and
//! islands, see [`super::reach`]); or, where no such way reaches the
//! appended code, a window of straight-line instructions (at least
//! [`LONG_JUMP_BYTES`], none of them a branch target but the first) that
//! becomes a long jump in place: SCC saved, `s_getpc_b64`, a 64-bit add,
//! `s_setpc_b64` through the site's jump pair; or, where neither fits (an
//! `s_endpgm` that branches land on, with no padding after it), an island
//! in the never-executed bytes a long jump over the instructions right
//! before the site frees (see `carved`); where those instructions are
//! sites lowered just before, their trampolines are taken back and their
//! probes run in the long jump's trampoline instead (so a wave end after
//! code that is all sites, as in count mode, still gets its probe). The
//! trampoline then runs,
//! for each instruction of its span in order, the `before` probes, the
//! instruction (relocated when PC-relative), the `after` probes, and
//! jumps back after the last one.

use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};
use std::ops::RangeInclusive;

use super::lanes::{NEEDS_DEAD_ENTRY, NEEDS_DEAD_JUMP};
use super::*;

/// Bytes of a long jump: save SCC, `s_getpc_b64`, `s_add_u32` with a
/// literal, `s_addc_u32` with an inline high half, `s_setpc_b64`.
pub const LONG_JUMP_BYTES: u64 = 24;

/// One instruction of a trampoline's span and its probes (none for an
/// instruction a long jump displaces only).
pub(super) struct Step<'p> {
    index: usize,
    probes: StepProbes<'p>,
}

/// A step's probes: a few held inline (most instructions have one or
/// two), more in a vector.
enum StepProbes<'p> {
    /// The first `n` (the rest repeat the first).
    Few([&'p Probe; FEW_PROBES], usize),
    Many(Vec<&'p Probe>),
}

/// Probes a step holds inline.
const FEW_PROBES: usize = 4;

impl<'p> StepProbes<'p> {
    fn of(probes: &'p [Probe]) -> StepProbes<'p> {
        match probes.first() {
            Some(first) if probes.len() <= FEW_PROBES => {
                let mut few = [first; FEW_PROBES];
                for (slot, p) in few.iter_mut().zip(probes) {
                    *slot = p;
                }
                StepProbes::Few(few, probes.len())
            }
            _ => StepProbes::Many(probes.iter().collect()),
        }
    }
}

impl<'p> std::ops::Deref for StepProbes<'p> {
    type Target = [&'p Probe];
    fn deref(&self) -> &[&'p Probe] {
        match self {
            StepProbes::Few(few, n) => &few[..*n],
            StepProbes::Many(v) => v,
        }
    }
}

/// How many groups lowered one by one a carved window may take back (more
/// than its bytes can cover).
const MAX_TAKEN_BACK: usize = 16;

/// A trampoline's groups (from `group` on), the instructions it covers
/// (`start..=end`) and where the lowering stood before it, to take it back.
struct Recent {
    group: usize,
    start: usize,
    end: usize,
    mark: Mark,
    floor: usize,
}

/// A far site's carved window (see [`AmdLowering::carved`]): the site, the
/// lowest instruction the window may start at (or where it must), the
/// unit's branch targets and sites, and the sites it may take back with
/// their probes.
struct Carve<'c, 'p> {
    index: usize,
    floor: usize,
    from: Option<usize>,
    targets: &'c Indices,
    sites: &'c Indices,
    taken: &'c [(usize, &'p [Probe])],
}

impl AmdLowering<'_> {
    /// Lowers the probe groups of `plan` in order into `out` (see
    /// [`Lowering::lower`]).
    pub(super) fn lower_groups(
        &mut self,
        view: &KernelView,
        plan: &Plan,
        out: &mut KernelLowering,
    ) -> Result<(), RewriteError> {
        // The probe groups, and the instructions a relocation must move (without probes).
        let mut groups: Vec<(usize, &[Probe])> = plan.by_instr().map(|(i, p)| (i as usize, p)).collect();
        if let Some(r) = self.relocation.filter(|r| !r.forced.is_empty()) {
            let planned: BTreeSet<usize> = groups.iter().map(|(i, _)| *i).collect();
            groups.extend(r.forced.iter().filter(|i| !planned.contains(i)).map(|&i| (i, &[][..])));
            groups.sort_by_key(|(i, _)| *i);
        }
        let targets = if self.islands.long_jumps { self.branch_targets() } else { None };
        let sites = Indices::of(groups.iter().map(|(i, _)| *i));
        // Instructions before `floor` are anchored already: a window starts at or after it.
        let mut floor = 0usize;
        // The latest run of groups lowered one by one, to take back where a
        // far site's carved window covers them (see `carved`).
        let mut recent: VecDeque<Recent> = VecDeque::new();
        // Sites whose carved window over earlier sites failed (lowered again without).
        let mut no_carve_over: BTreeSet<usize> = BTreeSet::new();
        // The steps of a window's trampoline (the buffer reused).
        let mut window_steps: Vec<Step> = Vec::new();
        let mut g = 0usize;
        while g < groups.len() {
            self.reserve_zone()?;
            let (index, probes) = groups[g];
            let floor_before = floor;
            let mark = Mark::of(self, out);
            let single = [Step { index, probes: StepProbes::of(probes) }];
            // Islands are kept for the sites no window covers.
            self.islands.hold_islands = targets.is_some();
            // A far site no way reaches with islands held (where its
            // trampoline would borrow no registers) is known far without
            // lowering it (the reason is written where it is refused).
            let known_far = !self.scavenger.is_some_and(|s| s.always)
                && self.instrs.get(index).is_some_and(|d| self.islands.held_out_of_reach(d.addr, self.appended.here()));
            let mut lowered = if known_far {
                Err(RewriteError::Refused(OUT_OF_REACH.into()))
            } else {
                self.span(view, plan, &single, None, out)
            };
            self.islands.hold_islands = false;
            let mut consumed = 1;
            // The first instruction the group's trampoline covers.
            let mut covered = index;
            let far = |l: &Result<(), RewriteError>| matches!(l, Err(RewriteError::Refused(r)) if r.starts_with(OUT_OF_REACH));
            if let (true, Some(targets)) = (far(&lowered), &targets) {
                mark.restore(self, out);
                if let Some((w, padding)) = self.window(index, floor, targets, &sites) {
                    let n = groups[g..].iter().take_while(|(i, _)| w.contains(i)).count();
                    window_steps.clear();
                    // (the groups are in instruction order, one per instruction)
                    let mut planned = groups[g..g + n].iter().peekable();
                    window_steps.extend(w.clone().map(|k| {
                        while planned.next_if(|(i, _)| *i < k).is_some() {}
                        let probes = planned.next_if(|(i, _)| *i == k).map_or(&[][..], |&(_, p)| p);
                        Step { index: k, probes: StepProbes::of(probes) }
                    }));
                    lowered = self.span(view, plan, &window_steps, Some(padding), out);
                    if lowered.is_ok() {
                        consumed = n;
                        covered = *w.start();
                        floor = w.end() + 1;
                    }
                }
                if far(&lowered) {
                    mark.restore(self, out);
                    lowered = self.span(view, plan, &single, None, out);
                }
                if far(&lowered) {
                    mark.restore(self, out);
                    let carve = Carve { index, floor, from: None, targets, sites: &sites, taken: &[] };
                    match self.carved(view, plan, &carve, &single, out) {
                        Some(Ok(first)) => {
                            lowered = Ok(());
                            covered = first;
                        }
                        // the reason stays the first one
                        _ => mark.restore(self, out),
                    }
                }
                if far(&lowered) && !no_carve_over.contains(&index) && !recent.is_empty() {
                    // A window over sites lowered just before: take them back
                    // and lower them in the window's trampoline.
                    let taken = &groups[recent[0].group..g];
                    let carve = Carve { index, floor: recent[0].start, from: None, targets, sites: &sites, taken };
                    let back = self.carve_start(&carve).and_then(|at| {
                        let back = recent.iter().position(|r| r.end >= at)?;
                        Some((back, at.min(recent[back].start)))
                    });
                    if let Some((back, from)) = back {
                        let r = recent.drain(back..).next().expect("recent");
                        r.mark.restore(self, out);
                        let carve = Carve { floor: r.floor, from: Some(from), taken: &groups[r.group..g], ..carve };
                        match self.carved(view, plan, &carve, &single, out) {
                            Some(Ok(_)) => {
                                lowered = Ok(());
                                covered = from;
                                recent.clear();
                                // The groups taken back are done again (the
                                // mark restored the zones' count of them).
                                (r.group..g).for_each(|_| self.islands.group_done());
                            }
                            _ => {
                                // Lower those sites again as they were, without this window.
                                r.mark.restore(self, out);
                                no_carve_over.insert(index);
                                recent.truncate(back);
                                floor = r.floor;
                                g = r.group;
                                continue;
                            }
                        }
                    }
                }
            }
            let lowered_here = lowered.is_ok();
            match lowered {
                Ok(()) => floor = floor.max(index + 1),
                Err(RewriteError::Refused(why)) if self.ends_wave(index) && reads_flags(probes) => {
                    // A kernel screens the ends of all its waves or none.
                    return Err(RewriteError::Kernel(why));
                }
                Err(RewriteError::Refused(reason)) if probes.is_empty() => {
                    // a relocated or redirected instruction must move
                    let ins = &view.instrs[index];
                    return Err(RewriteError::Kernel(format!(
                        "`{}` at +{:#x} {MUST_MOVE}{reason}",
                        ins.text, ins.offset
                    )));
                }
                Err(RewriteError::Refused(reason)) => {
                    mark.restore(self, out);
                    let ins = &view.instrs[index];
                    let out_of_reach = reason.starts_with(OUT_OF_REACH);
                    out.refused.push(RefusedSite {
                        offset: ins.offset,
                        instr: ins.text.to_string(),
                        reason,
                        out_of_reach,
                    });
                }
                Err(other) => return Err(other),
            }
            for _ in 0..consumed {
                self.islands.group_done();
            }
            if lowered_here {
                recent.push_back(Recent { group: g, start: covered, end: floor - 1, mark, floor: floor_before });
                if recent.len() > MAX_TAKEN_BACK {
                    recent.pop_front();
                }
            } else {
                recent.clear();
            }
            g += consumed;
        }
        Ok(())
    }

    /// One trampoline for the instructions of `steps` (consecutive, in
    /// order): entered by an `s_branch` at the first, or by a long jump
    /// over all of them and `long_jump` bytes of padding after them.
    fn span(
        &mut self,
        view: &KernelView,
        plan: &Plan,
        steps: &[Step],
        long_jump: Option<u64>,
        out: &mut KernelLowering,
    ) -> Result<(), RewriteError> {
        // The code, with the scratch registers chosen.
        let code = |this: &mut Self, out: &mut KernelLowering| -> Result<(), RewriteError> {
            let instrs = this.instrs;
            let instr = |i: usize| instrs.get(i).ok_or_else(|| RewriteError::Refused("no such instruction".into()));
            let first = instr(steps[0].index)?;
            let last = instr(steps[steps.len() - 1].index)?;
            let start = this.appended.here();
            let rel = match long_jump {
                Some(_) => {
                    this.restore_scc()?;
                    None
                }
                None => Some(this.entry_branch(first, out)?),
            };
            this.save_in_lanes()?;
            let mut waits = 0usize;
            let mut returns = true;
            for (k, step) in steps.iter().enumerate() {
                if !returns {
                    return Err(RewriteError::Refused("an instruction inside a long jump's window leaves".into()));
                }
                returns = if reads_flags_refs(&step.probes) {
                    if step.probes.len() > 1 {
                        return Err(RewriteError::Refused(
                            "exception flags are read only by a probe of their own".into(),
                        ));
                    }
                    if k + 1 != steps.len() {
                        return Err(RewriteError::Refused("the end of a wave inside a long jump's window".into()));
                    }
                    this.screen_body(&view.name, step.index)?
                } else {
                    this.step(view, plan, step.index, &step.probes, &mut waits)?
                };
            }
            if returns {
                this.jump_to(last.addr + last.insn.length as u64)?;
            }
            // The anchor: s_branch to the trampoline, or the long jump over
            // the window, then s_nop 0 over the rest.
            let nop = this.e().sopp(Opcode::S_NOP, 0)?;
            let anchor = match rel {
                Some(rel) => anchor_bytes(&this.e().sopp(Opcode::S_BRANCH, rel)?, &nop, first.insn.length),
                None => {
                    let window = last.addr + last.insn.length as u64 + long_jump.unwrap_or(0) - first.addr;
                    let code = this.long_jump(first.addr, start)?;
                    if code.len() as u64 * 4 > window {
                        return Err(RewriteError::Refused("the long jump does not fit its window".into()));
                    }
                    out.reach.push((first.addr, Reach::LongJump { instructions: steps.len() }));
                    anchor_bytes(&code, &nop, window as usize)
                }
            };
            out.push_anchor(Patch { addr: first.addr, bytes: anchor });
            out.trampolines += 1;
            out.probes += steps.iter().map(|s| s.probes.len()).sum::<usize>();
            out.waits_added += waits;
            Ok(())
        };
        let base = self.scratch;
        let borrows = self.scavenger.filter(|s| s.always || steps.len() > 1 || long_jump.is_some());
        let Some(scavenger) = borrows else { return code(self, out) };
        if let Some(p) = steps.iter().flat_map(|s| s.probes.iter()).find(|p| !borrowing(&p.action)) {
            return Err(RewriteError::Refused(format!(
                "the kernel is at its register budget, and a {} probe needs scratch registers above its allocation",
                action_name(&p.action)
            )));
        }
        let span = steps[0].index..=steps[steps.len() - 1].index;
        let mut needs =
            self.site_needs(view, plan, steps.iter().map(|s| (s.index, &s.probes[..])), long_jump.is_some());
        loop {
            self.scratch.site = Some(scavenger.choose(span.clone(), base, needs).map_err(RewriteError::Refused)?);
            let mark = Mark::of(self, out);
            let lowered = code(self, out);
            self.scratch = base;
            // A jump's code outside the saved stretch: again with its SGPRs dead.
            let again = match &lowered {
                Err(RewriteError::Refused(why)) if why == NEEDS_DEAD_JUMP && !needs.dead_jump => {
                    SiteNeeds { dead_jump: true, ..needs }
                }
                Err(RewriteError::Refused(why)) if why == NEEDS_DEAD_ENTRY && !needs.dead_entry => {
                    SiteNeeds { dead_jump: true, dead_entry: true, ..needs }
                }
                _ => return lowered,
            };
            mark.restore(self, out);
            needs = again;
        }
    }

    /// The code of instruction `index` in a trampoline: its `before`
    /// probes, the instruction, its `after` probes. Returns whether the
    /// instruction falls through.
    fn step<'p>(
        &mut self,
        view: &KernelView,
        plan: &Plan,
        index: usize,
        probes: &[&'p Probe],
        waits: &mut usize,
    ) -> Result<bool, RewriteError> {
        let instrs = self.instrs;
        let d = instrs.get(index).ok_or_else(|| RewriteError::Refused("no such instruction".into()))?;
        // (most instructions have probes of one side only: no copy of them)
        let side = |when: When| -> Cow<[&'p Probe]> {
            if probes.iter().all(|p| p.when == when) {
                Cow::Borrowed(probes)
            } else {
                Cow::Owned(probes.iter().copied().filter(|p| p.when == when).collect())
            }
        };
        let (before, after) = (side(When::Before), side(When::After));
        if !after.is_empty() && matches!(view.instrs[index].control, xfpx_common::view::Control::Call) {
            return Err(RewriteError::Refused("an `after` probe on a call would run only after the return".into()));
        }
        // (most steps have neither injections nor flow probes: nothing to sort out)
        let plain = probes.iter().all(|p| !matches!(p.action, Action::Inject { .. } | Action::Flow { .. }));
        let picked = |from: &[&'p Probe], pick: fn(&Probe) -> bool| -> Vec<&'p Probe> {
            if plain {
                Vec::new()
            } else {
                from.iter().copied().filter(|p| pick(p)).collect()
            }
        };
        // Injections of two parts: the part before an `after` change, the
        // part after a `before` one (see `inject`).
        let pre = picked(&after, |p| inject::change_of(p).is_some_and(inject::has_pre));
        let post = picked(&before, |p| inject::change_of(p).is_some_and(inject::has_post));
        // flow probes after the instruction read its sources before it
        let flow_pre = picked(&after, flow::reads_before);
        let injections = if plain { 0 } else { probes.iter().filter(|p| inject::change_of(p).is_some()).count() };
        if pre.len() + post.len() > 0 && injections > 1 {
            return Err(RewriteError::Refused(
                "an injection of two parts shares its instruction with another injection".into(),
            ));
        }
        if !before.is_empty() || !pre.is_empty() || !flow_pre.is_empty() {
            let mut reads = self.reads_buffer();
            Self::probe_reads(view, &before, &mut reads);
            reads.extend(flow_pre.iter().flat_map(|p| flow::flow_reads(view, p, true)));
            if injections > 0 {
                reads.extend(before.iter().chain(&pre).flat_map(|p| {
                    Self::inject_reads(view, p, if p.when == When::After { Part::Pre } else { Part::Main })
                }));
            }
            self.wait(index, false, &reads, waits)?;
            self.memo.reads = reads;
            self.save_scc()?;
            let saved = self.save_vgprs()?;
            for p in before.iter() {
                self.probe(view, plan, p)?;
            }
            for p in &pre {
                self.inject(view, plan, p, Part::Pre)?;
            }
            for p in &flow_pre {
                self.flow_sources(view, p)?;
            }
            self.restore_vgprs(saved)?;
            self.restore_scc()?;
        }
        let saved = self.save_vgprs()?;
        self.divisor_test(view, index, &after)?;
        self.restore_vgprs(saved)?;
        let returns = self.displaced(d)?;
        if !after.is_empty() || !post.is_empty() {
            if !returns {
                return Err(RewriteError::Refused("an `after` probe on an instruction that leaves".into()));
            }
            self.hazard_nops(&d.insn)?;
            let mut reads = self.reads_buffer();
            Self::probe_reads(view, &after, &mut reads);
            if injections > 0 {
                reads.extend(after.iter().chain(&post).flat_map(|p| {
                    Self::inject_reads(view, p, if p.when == When::Before { Part::Post } else { Part::Main })
                }));
            }
            self.wait(index, true, &reads, waits)?;
            self.memo.reads = reads;
            self.save_scc()?;
            let saved = self.save_vgprs()?;
            for p in &post {
                self.inject(view, plan, p, Part::Post)?;
            }
            for p in after.iter() {
                self.probe(view, plan, p)?;
            }
            self.restore_vgprs(saved)?;
            self.restore_scc()?;
        }
        Ok(returns)
    }

    /// The screening code at an `s_endpgm` (instruction `index`): for each
    /// TRAPSTS exception bit the wave has set, add 1 to the kernel's slot
    /// of that bit (so the table holds, per bit, how many waves raised
    /// it); then end the wave. A wave that ends in a trap is not screened
    /// (the trap is not moved: its handler may return after it).
    fn screen_body(&mut self, kernel: &str, index: usize) -> Result<bool, RewriteError> {
        let instrs = self.instrs;
        let d = instrs.get(index).ok_or_else(|| RewriteError::Refused("no such instruction".into()))?;
        if self.facts.flow(index) != ControlFlow::End {
            return Err(RewriteError::Refused(format!(
                "{} is not moved (its handler may return after it): waves ending here are not screened",
                d.insn.base_mnemonic
            )));
        }
        let e = self.e();
        let s = self.scratch;
        let bits = s.tmp();
        let one_bit = Src::Sgpr(s.mask());
        // Memory still in flight may read (stores) or write (loads) any
        // register, and the scratch may lie within the kernel's own
        // allocation (at its register budget): wait for all of it first.
        self.emit(e.sopp(Opcode::S_WAITCNT, waitcnt_imm(0, 0))?);
        // Wait states before reading TRAPSTS: 2 after an `s_setreg` of it
        // (the ISA's setreg-getreg hazard), and time for the exception bits
        // of the last VALU operations to land (assumed; see the snippets' README).
        self.emit(e.sopp(Opcode::S_NOP, 4)?);
        self.emit(e.sopk(Opcode::S_GETREG_B32, bits, hwreg_trapsts_excp())?);
        self.emit(e.sopc(Opcode::S_CMP_EQ_U32, bits, Src::Int(0))?);
        let skip_all = self.appended.words.len();
        self.emit(e.sopp(Opcode::S_CBRANCH_SCC1, 0)?);
        for bit in 0..TRAPSTS_EXCP_BITS {
            let slot = self.table.slot(kernel, SlotKind::Screen { bit: bit as u8 });
            self.emit(e.sop2(Opcode::S_AND_B32, one_bit, bits, Src::Literal(1 << bit))?);
            let skip = self.appended.words.len();
            self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
            self.record(slot, Opcode::GLOBAL_ATOMIC_ADD, Src::Int(1))?;
            self.patch_skip(skip)?;
        }
        self.patch_skip(skip_all)?;
        self.emit(d.insn.dwords());
        Ok(false)
    }

    /// Saves the live VGPRs a site borrows into their AGPRs (a stretch of
    /// code that uses the scratch VGPRs begins); returns where the saves
    /// start and end in the appended code.
    fn save_vgprs(&mut self) -> Result<(usize, usize), RewriteError> {
        let start = self.appended.words.len();
        if let Some(site) = self.scratch.site {
            for &(v, a) in site.saves() {
                let w = self.e().accvgpr_write(a, v)?;
                self.emit(w);
            }
        }
        Ok((start, self.appended.words.len()))
    }

    /// Restores what [`Self::save_vgprs`] saved (the stretch ends); where the
    /// stretch emitted nothing, the saves are taken back instead.
    fn restore_vgprs(&mut self, (start, end): (usize, usize)) -> Result<(), RewriteError> {
        if self.appended.words.len() == end {
            self.appended.truncate(start);
            return Ok(());
        }
        if let Some(site) = self.scratch.site {
            for &(v, a) in site.saves() {
                let w = self.e().accvgpr_read(v, a)?;
                self.emit(w);
            }
        }
        Ok(())
    }

    /// The anchor's `s_branch` offset to the trampoline starting now:
    /// direct when in reach, else through relays and islands (an island
    /// saves SCC; the trampoline restores it first).
    fn entry_branch(&mut self, d: &DecodedInstr, out: &mut KernelLowering) -> Result<u16, RewriteError> {
        let start = self.appended.here();
        if let Some(rel) = rel16(d.addr, start) {
            out.reach.push((d.addr, Reach::Direct));
            return Ok(rel);
        }
        let Some(entry) = self.islands.take_entry(d.addr, start) else {
            // (most far sites then take a window: the reason is written once)
            let ways = (self.islands.relays(), self.islands.long_jumps);
            let why = match &self.memo.no_way {
                Some((w, why)) if *w == ways => why.clone(),
                _ => {
                    let why = format!(
                        "{OUT_OF_REACH}: the trampoline is beyond s_branch reach (±128 KiB) and no padding within reach is free for a long-jump island{}{}",
                        if ways.0 { " or a chain of relays" } else { "" },
                        if ways.1 { ", nor is a window of straight-line code around it long enough for a long jump" } else { "" },
                    );
                    self.memo.no_way = Some((ways, why.clone()));
                    why
                }
            };
            return Err(RewriteError::Refused(why));
        };
        // Each relay branches to the next hop: the next relay, the island, the trampoline.
        let hops: Vec<u64> = entry.relays.iter().copied().chain(entry.island).chain([start]).collect();
        for (i, &slot) in entry.relays.iter().enumerate() {
            let rel = rel16(slot, hops[i + 1]).ok_or_else(|| RewriteError::Encode("relay out of reach".into()))?;
            let words = self.e().sopp(Opcode::S_BRANCH, rel)?;
            self.write_at(slot, &words, out);
        }
        out.relays += entry.relays.len();
        let reach = match entry.island {
            None => Reach::Relays { hops: entry.relays.len() },
            Some(island) => {
                let mut code = self.long_jump(island, start)?;
                // Small offsets encode as inline constants: fill the rest of the slot.
                while (code.len() as u64) * 4 < ISLAND_BYTES {
                    code.extend(self.e().sopp(Opcode::S_NOP, 0)?);
                }
                if code.len() as u64 * 4 != ISLAND_BYTES {
                    return Err(RewriteError::Encode("island size".into()));
                }
                self.write_at(island, &code, out);
                out.islands += 1;
                self.restore_scc()?;
                Reach::Island { relays: entry.relays.len() }
            }
        };
        out.reach.push((d.addr, reach));
        rel16(d.addr, hops[0]).ok_or_else(|| RewriteError::Encode("entry out of reach".into()))
    }

    /// A long jump placed at `at` to `to`: SCC saved into the SCC save (the
    /// code at `to` restores it), `s_getpc_b64`, a 64-bit add, `s_setpc_b64`
    /// through the jump pair (both dead at a site whose SGPRs are borrowed).
    fn long_jump(&self, at: u64, to: u64) -> Result<Vec<u32>, RewriteError> {
        self.jump_regs_dead(true)?;
        let j = self.scratch.jump();
        let mut code = Vec::with_capacity(ISLAND_BYTES as usize / 4);
        code.extend_from_slice(&self.scc_save_words()?);
        code.extend_from_slice(&self.jump_words(Jump::GetPc, j)?);
        for w in self.pair_add(j, to.wrapping_sub(at + 8))? {
            code.extend_from_slice(&w);
        }
        code.extend_from_slice(&self.jump_words(Jump::SetPc, j)?);
        Ok(code)
    }

    /// Writes `words` at `addr`: into the appended code (a relay zone), or
    /// over `.text` padding (a patch).
    fn write_at(&mut self, addr: u64, words: &[u32], out: &mut KernelLowering) {
        let base = self.appended.base;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let end = addr + bytes.len() as u64;
        if addr >= base && addr < self.appended.here() {
            let at = ((addr - base) / 4) as usize;
            self.appended.words[at..at + words.len()].copy_from_slice(words);
        } else if let Some(p) = out.anchor_holding(addr, end) {
            // Room inside a long jump's window (see `carved`): one patch still.
            let at = (addr - p.addr) as usize;
            p.bytes[at..at + bytes.len()].copy_from_slice(&bytes);
        } else {
            out.push_anchor(Patch { addr, bytes });
        }
    }

    /// Reserves the relay zone due before the trampoline about to start, if any.
    fn reserve_zone(&mut self) -> Result<(), RewriteError> {
        let at = self.appended.here();
        if let Some(size) = self.islands.zone_due(at) {
            let nop = self.e().sopp(Opcode::S_NOP, 0)?;
            for _ in 0..size.bytes() / 4 {
                self.emit(nop);
            }
            self.appended.zones.push(at..at + size.bytes());
            self.islands.zone_reserved(at, size);
        }
        Ok(())
    }

    /// The instructions some branch of the unit may land on (other than its
    /// first), by index; None when the unit jumps where the code does not
    /// say (an `s_setpc_b64` other than a device function's return through
    /// `s[30:31]`), so that no window is safe.
    fn branch_targets(&self) -> Option<Indices> {
        let index = |addr: u64| self.instrs.binary_search_by_key(&addr, |d| d.addr).ok();
        let mut out = Vec::new();
        for (i, d) in self.instrs.iter().enumerate() {
            match self.facts.flow(i) {
                ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => out.extend(index(target)),
                // a call returns to the next instruction
                ControlFlow::Call { .. } => out.push(i + 1),
                ControlFlow::Indirect if d.insn.op == Opcode::S_SWAPPC_B64 => out.push(i + 1),
                ControlFlow::Indirect if d.insn.op == Opcode::S_SETPC_B64 && d.insn.words[0] & 0xFF == 30 => {}
                ControlFlow::Indirect | ControlFlow::Trap => return None,
                _ => {}
            }
        }
        Some(Indices::of(out))
    }

    /// Room for an island where no padding within reach is free: the
    /// straight-line instructions right before the far site (at least a
    /// long jump and an island long, from `floor` on, only the first a
    /// branch target, no site among them but those `taken` back with their
    /// probes) move to a trampoline of their own behind a long jump, and
    /// the never-executed bytes after the jump hold the island through
    /// which the `single` site's anchor enters its trampoline. Padding (the
    /// pool's room) never moves. The site may be a branch target (an
    /// `s_endpgm` every path branches to) and the instruction before it may
    /// leave. None when there is no such window; else the window's first
    /// instruction once lowered.
    fn carved(
        &mut self,
        view: &KernelView,
        plan: &Plan,
        carve: &Carve,
        single: &[Step],
        out: &mut KernelLowering,
    ) -> Option<Result<usize, RewriteError>> {
        let first = self.carve_start(carve)?;
        let last = carve.index - 1;
        let probes_of =
            |i: usize| StepProbes::of(carve.taken.iter().find(|(k, _)| *k == i).map_or(&[][..], |&(_, p)| p));
        let steps: Vec<Step> = (first..=last).map(|i| Step { index: i, probes: probes_of(i) }).collect();
        if let Err(e) = self.span(view, plan, &steps, Some(0), out) {
            return Some(Err(e));
        }
        let d = &self.instrs[last];
        let room = self.instrs[first].addr + LONG_JUMP_BYTES..d.addr + d.insn.length as u64;
        self.islands.insert_free(room.clone());
        let lowered = self.span(view, plan, single, None, out);
        // What the site left of the room is no one else's.
        self.islands.drop_free_within(&room);
        Some(lowered.map(|()| first))
    }

    /// The first instruction of the window [`Self::carved`] moves for the
    /// far site `carve.index`; None when there is none.
    fn carve_start(&self, carve: &Carve) -> Option<usize> {
        let last = carve.index.checked_sub(1).filter(|&k| k >= carve.floor)?;
        let falls_through = |i: usize| matches!(self.facts.flow(i), ControlFlow::Next | ControlFlow::GetPc { .. });
        // (padding is the pool's room, which other anchors may hold)
        let movable = |i: usize| {
            self.facts.in_indexing_region(self.instrs, i).is_none()
                && (!carve.sites.contains(&i) || carve.taken.iter().any(|(k, _)| *k == i))
                && !crate::rewrite::reach::is_padding(self.instrs, i)
        };
        let d = &self.instrs[last];
        let last_moves = matches!(
            self.facts.flow(last),
            ControlFlow::Next | ControlFlow::GetPc { .. } | ControlFlow::Branch { .. } | ControlFlow::CondBranch { .. }
        );
        if !last_moves || !movable(last) {
            return None;
        }
        let end = d.addr + d.insn.length as u64;
        if let Some(from) = carve.from {
            let fits = from >= carve.floor
                && end - self.instrs[from].addr >= LONG_JUMP_BYTES + ISLAND_BYTES
                && (from..last).all(|i| falls_through(i) && movable(i))
                && (from + 1..=last).all(|i| !carve.targets.contains(&i));
            return fits.then_some(from);
        }
        let mut first = last;
        while end - self.instrs[first].addr < LONG_JUMP_BYTES + ISLAND_BYTES {
            let grows = first > carve.floor
                && !carve.targets.contains(&first)
                && falls_through(first - 1)
                && movable(first - 1);
            if !grows {
                return None;
            }
            first -= 1;
        }
        Some(first)
    }

    /// The window (first..=last) of straight-line instructions a long jump
    /// may replace to cover instruction `index`: at least
    /// [`LONG_JUMP_BYTES`], grown forward, then backward (not below
    /// `floor`); only its first instruction may be a branch target, every
    /// one but the last falls through, and none lies in a VGPR indexing
    /// region; where it ends a wave, never-executed padding after it may
    /// complete it (the bytes of padding it takes are returned too). Where
    /// the rest of the straight-line run after it would be too short for a
    /// window of its own and holds one of the `sites`, the window takes the
    /// rest too.
    fn window(
        &mut self,
        index: usize,
        floor: usize,
        targets: &Indices,
        sites: &Indices,
    ) -> Option<(RangeInclusive<usize>, u64)> {
        let falls_through = |i: usize| matches!(self.facts.flow(i), ControlFlow::Next | ControlFlow::GetPc { .. });
        let movable = |i: usize| self.facts.in_indexing_region(self.instrs, i).is_none();
        // Whether the window may grow from `b` to `b + 1`.
        let grows =
            |b: usize| b + 1 < self.instrs.len() && !targets.contains(&(b + 1)) && falls_through(b) && movable(b + 1);
        if !movable(index) {
            return None;
        }
        let length = |i: usize| self.instrs[i].insn.length as u64;
        let (mut a, mut b) = (index, index);
        // (the bytes of a..=b)
        let mut bytes = length(index);
        let mut padding = 0;
        while bytes < LONG_JUMP_BYTES {
            if grows(b) {
                b += 1;
                bytes += length(b);
            } else if a > floor && !targets.contains(&a) && falls_through(a - 1) && movable(a - 1) {
                a -= 1;
                bytes += length(a);
            } else {
                // The wave ends at `b`: padding right after it (`s_nop 0` of
                // the unit that no probe needs, or free room of the pool) may
                // complete the window.
                let d = &self.instrs[b];
                let short = LONG_JUMP_BYTES - bytes;
                let end = d.addr + d.insn.length as u64;
                if self.facts.flow(b) != ControlFlow::End {
                    return None;
                }
                let nops = self.instrs[b + 1..]
                    .iter()
                    .zip(b + 1..)
                    .take_while(|(n, i)| {
                        n.insn.op == Opcode::S_NOP && n.insn.words[0] & 0xFFFF == 0 && !sites.contains(i)
                    })
                    .map(|(n, _)| n.insn.length as u64)
                    .sum::<u64>();
                if nops < short && !self.islands.take_at(end, short) {
                    return None;
                }
                padding = short;
                break;
            }
        }
        if padding > 0 {
            return Some((a..=b, padding));
        }
        // The rest of the run, followed only as long as it is too short.
        let (mut end, mut rest) = (b, 0);
        while rest < LONG_JUMP_BYTES && grows(end) {
            end += 1;
            rest += self.instrs[end].insn.length as u64;
        }
        if end > b && rest < LONG_JUMP_BYTES && sites.any_in(b + 1..=end) {
            b = end;
        }
        Some((a..=b, 0))
    }
}

/// An anchor's bytes: `code`, then `nop` until `length` bytes.
fn anchor_bytes(code: &[u32], nop: &[u32], length: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(length.max(4 * code.len()));
    let push = |out: &mut Vec<u8>, words: &[u32]| words.iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    push(&mut out, code);
    while out.len() < length {
        push(&mut out, nop);
    }
    out
}

/// Instruction indices (a unit's sites, its branch targets), sorted.
struct Indices(Vec<usize>);

impl Indices {
    fn of(indices: impl IntoIterator<Item = usize>) -> Indices {
        let mut v: Vec<usize> = indices.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        Indices(v)
    }

    fn contains(&self, i: &usize) -> bool {
        self.0.binary_search(i).is_ok()
    }

    /// Whether one of them lies in `r`.
    fn any_in(&self, r: RangeInclusive<usize>) -> bool {
        let at = self.0.partition_point(|&i| i < *r.start());
        self.0.get(at).is_some_and(|i| r.contains(i))
    }
}

/// Whether a probe group reads the exception flags.
fn reads_flags(probes: &[Probe]) -> bool {
    probes.iter().any(|p| p.action == Action::ReadExceptionFlags)
}

fn reads_flags_refs(probes: &[&Probe]) -> bool {
    probes.iter().any(|p| p.action == Action::ReadExceptionFlags)
}

/// What a refused group gives back: the appended code, the table's slots,
/// the island pool and the lowering's counts as they were.
struct Mark {
    checkpoint: Checkpoint,
    anchors: usize,
    islands: usize,
    relays: usize,
    reach: usize,
    trampolines: usize,
    probes: usize,
    waits_added: usize,
    refused: usize,
}

impl Mark {
    fn of(l: &AmdLowering<'_>, out: &KernelLowering) -> Mark {
        Mark {
            checkpoint: l.checkpoint(),
            anchors: out.anchors.len(),
            islands: out.islands,
            relays: out.relays,
            reach: out.reach.len(),
            trampolines: out.trampolines,
            probes: out.probes,
            waits_added: out.waits_added,
            refused: out.refused.len(),
        }
    }

    fn restore(&self, l: &mut AmdLowering<'_>, out: &mut KernelLowering) {
        l.rollback(&self.checkpoint);
        out.truncate_anchors(self.anchors);
        out.islands = self.islands;
        out.relays = self.relays;
        out.reach.truncate(self.reach);
        out.trampolines = self.trampolines;
        out.probes = self.probes;
        out.waits_added = self.waits_added;
        out.refused.truncate(self.refused);
    }
}

/// Whether a probe's code may borrow a site's dead registers: checks, the
/// flag reads and counts (their vector registers are written in the lanes
/// active at the site, or in one lane whose values they keep); flow probes
/// share a routine per unit and injections keep values in scratch
/// registers across their instruction.
fn borrowing(action: &Action) -> bool {
    matches!(action, Action::CheckFp { .. } | Action::ReadExceptionFlags | Action::Count { .. })
}

fn action_name(action: &Action) -> &'static str {
    match action {
        Action::Count { .. } => "count",
        Action::Flow { .. } => "flow",
        Action::Inject { .. } => "inject",
        _ => "probe of another tool",
    }
}
