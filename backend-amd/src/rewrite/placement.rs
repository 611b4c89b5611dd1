//! Placing the prepared units: one [`Pass`] lowers device functions first
//! (which of them end up instrumented decides which kernels' descriptors
//! must hold their scratch registers), then kernels, into appended code at
//! one region. A pass starts over when a kernel reaching instrumented
//! functions cannot hold their scratch (those functions are then left out;
//! one out of reach gets more ways first), with more ways to far
//! trampolines when some site found none (`Ways`),
//! or in a new segment when the code does not fit after `.text` (the pass
//! stops as soon as its code outgrows the region; more ways, when a site it
//! lowered found none, are offered there too) or `.text` cannot grow after
//! all. The last pass's code is laid out into the file.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::Ordering;

use xfpx_common::plan::Plan;
use xfpx_common::probe::Action;
use xfpx_common::report::SiteCoverage;
use xfpx_common::view::KernelView;

use super::encode::Encoder;
use super::interprocedural::{Livenesses, ObjectLiveness};
use super::lower::{
    unit_out_of_reach, AmdLowering, Appended, CodeMemo, IslandPool, KernelLowering, RefusedSite, Relocation, Scavenger,
    Scratch,
};
use super::outcome::{FunctionOutcome, KernelOutcome, KernelState, Mode, RewriteError, RewriteOptions};
use super::prepare::{max_workgroup, FunctionUnit, KernelUnit, Units};
use super::reach::{Reach, Zones};
use super::regs::{self, RegisterChange};
use super::table::TableLayout;
use super::view::DecodedInstr;
use crate::builder::{self, note, Patch, Region, Strategy};
use crate::descriptor::{raw::rsrc1, DescriptorWord, KernelDescriptor};

/// What the placed units left behind, laid out into the file.
#[derive(Debug)]
pub struct Placed {
    pub region: Region,
    pub table: TableLayout,
    pub appended: Appended,
    pub kernels: Vec<KernelOutcome>,
    pub functions: Vec<FunctionOutcome>,
    /// Per kernel and per function: its code, for the listing (where placed).
    pub kernel_code: Vec<UnitCode>,
    pub function_code: Vec<UnitCode>,
    /// The rewritten file.
    pub bytes: Vec<u8>,
}

/// The code one unit got: its words of the appended code and the
/// instructions it overwrote (shown for instrumented units only).
#[derive(Debug, Clone, Default)]
pub struct UnitCode {
    pub words: Option<Range<usize>>,
    pub anchors: Vec<Patch>,
    /// How each site's anchor (by address) reaches its trampoline.
    pub reach: Vec<(u64, Reach)>,
}

/// Places every unit, starting over as the module says, and lays the file out.
pub fn place(units: &Units<'_>, bytes: &[u8], opts: &RewriteOptions) -> Result<Placed, RewriteError> {
    let co = &units.co;
    let new_segment = || builder::new_segment_region(co, opts.min_distance.unwrap_or(0));
    // Place the code after .text when it fits, else in a new segment.
    let mut region = match (opts.min_distance, builder::grow_region(co)) {
        (None, Some(r)) => r,
        _ => new_segment()?,
    };
    // Functions left out because a kernel reaching them could not be instrumented.
    let mut blocked: BTreeMap<usize, String> = BTreeMap::new();
    // The ways to far trampolines: more of them once some site is out of reach.
    let mut ways = Ways::Islands;
    // The most words a pass appended so far (room the next one takes at once).
    let mut words = 0;
    let slots = expected_slots(units);
    // What liveness learns of the object's units, the same in every pass.
    let mut learnt = ObjectLiveness::default();
    // The metadata note's kernel entries, read once (when a kernel first needs them).
    let note = OnceCell::new();
    loop {
        let mut pass = Pass::new(units, opts, region, ways, (words, slots), &note);
        pass.liveness = std::mem::take(&mut learnt);
        pass.place_functions(&blocked);
        let more = pass.place_kernels();
        learnt = std::mem::take(&mut pass.liveness);
        words = words.max(pass.appended.words.len());
        if let Some(more) = more {
            blocked.extend(more);
            continue;
        }
        if pass.out_of_reach() {
            if let Some(more) = ways.more(near_text(co, &region)) {
                ways = more;
                // A kernel refused for reach may hold its functions' scratch
                // now: the functions it blocked get their chance again.
                blocked.clear();
                // (The new segment offers them too, when the code outgrew the region.)
                if pass.overflows() {
                    region = new_segment()?;
                }
                continue;
            }
        }
        // Code that outgrew the region (the pass stopped there): a new segment.
        if pass.overflows() {
            region = new_segment()?;
            continue;
        }
        let patches = std::mem::take(&mut pass.patches);
        match builder::apply(bytes, co, &region, &pass.appended.words, &patches) {
            Ok(out) => return Ok(pass.finish(out, patches)),
            // A layout that cannot grow in place after all: a new segment.
            Err(_) if region.strategy == Strategy::GrowText => region = new_segment()?,
            Err(e) => return Err(e.into()),
        }
    }
}

/// One placement pass: the appended code, the table and the patches so far.
struct Pass<'u, 'a> {
    units: &'u Units<'a>,
    opts: &'u RewriteOptions,
    region: Region,
    table: TableLayout,
    appended: Appended,
    islands: IslandPool,
    patches: Vec<Patch>,
    /// Which of `patches` are a unit's anchors, in order (moved into its
    /// code once applied).
    anchor_patches: Vec<AnchorPatches>,
    kernels: Vec<KernelOutcome>,
    functions: Vec<FunctionOutcome>,
    kernel_code: Vec<UnitCode>,
    function_code: Vec<UnitCode>,
    /// Instrumented device functions and their scratch registers.
    live: BTreeMap<usize, Scratch>,
    /// Whether a site out of reach makes the next pass offer more ways.
    more_ways: bool,
    /// Whether some unit was refused whole for want of a way to a
    /// trampoline (a kernel whose wave ends cannot all be screened).
    unit_out_of_reach: bool,
    /// What liveness has learnt of the device functions so far.
    liveness: ObjectLiveness,
    /// Code encoded once and copied.
    memo: CodeMemo,
    /// The metadata note's kernel entries, read when first needed.
    note: &'u OnceCell<NoteEntries<'a>>,
}

/// Which of a pass's patches are a unit's anchors: (whether a kernel, its index, the patches).
type AnchorPatches = (bool, usize, Range<usize>);

/// The metadata note's kernel entries, or why there are none.
type NoteEntries<'a> = Result<note::NoteKernels<'a>, String>;

/// The code of a unit to lower.
#[derive(Clone, Copy)]
struct Unit<'x> {
    entry: u64,
    instrs: &'x [DecodedInstr],
    waits: &'x super::waitcnt::WaitAnalysis,
    view: &'x KernelView,
    plan: &'x Plan,
}

/// The registers a unit's trampolines use, and where its code runs.
#[derive(Clone, Copy)]
struct UnitRegs<'x> {
    scratch: Scratch,
    scavenger: Option<&'x Scavenger>,
    relocation: Option<&'x Relocation>,
}

/// A kernel lowered: its trampolines, its grown descriptor and its code.
struct LoweredKernel {
    lowering: KernelLowering,
    descriptor: KernelDescriptor,
    registers: RegisterChange,
    dx10_clamp_cleared: bool,
    words: Range<usize>,
    /// The copies of device functions made for it.
    clones: Vec<(FunctionOutcome, UnitCode)>,
}

impl<'u, 'a> Pass<'u, 'a> {
    /// A pass with room for (`words` of appended code, `slots` of the table).
    fn new(
        units: &'u Units<'a>,
        opts: &'u RewriteOptions,
        region: Region,
        ways: Ways,
        room: (usize, usize),
        note: &'u OnceCell<NoteEntries<'a>>,
    ) -> Self {
        let (words, slots) = room;
        let mut islands = units.islands.clone();
        islands.long_jumps = ways >= Ways::LongJumps;
        if ways == Ways::Zones {
            let groups = units.kernels.iter().map(|k| k.plan.by_instr().count()).sum::<usize>()
                + units.functions.iter().map(|f| f.plan.by_instr().count()).sum::<usize>();
            islands.zones = Some(Zones::new(groups));
        }
        Pass {
            units,
            opts,
            region,
            table: TableLayout::with_capacity(slots),
            appended: Appended { words: Vec::with_capacity(words), ..Appended::new(region.start) },
            islands,
            patches: Vec::new(),
            anchor_patches: Vec::new(),
            kernels: units.kernel_outcomes.clone(),
            functions: units.function_outcomes.clone(),
            kernel_code: vec![UnitCode::default(); units.kernel_outcomes.len()],
            function_code: vec![UnitCode::default(); units.function_outcomes.len()],
            live: BTreeMap::new(),
            more_ways: ways.more(near_text(&units.co, &region)).is_some(),
            unit_out_of_reach: false,
            liveness: ObjectLiveness::default(),
            memo: CodeMemo::default(),
            note,
        }
    }

    /// Whether the appended code so far (and its padding) outgrew the
    /// region: the pass stops there, as its code cannot be placed in it.
    fn overflows(&self) -> bool {
        let r = &self.region;
        r.limit.is_some_and(|l| r.start + builder::footprint(r, 4 * self.appended.words.len() as u64) > l)
    }

    /// Whether some site, or some unit whole, was refused for want of a
    /// way to its trampoline.
    fn out_of_reach(&self) -> bool {
        self.unit_out_of_reach
            || self
                .kernels
                .iter()
                .flat_map(|k| &k.refused_sites)
                .chain(self.functions.iter().flat_map(|f| &f.refused_sites))
                .any(|r| r.out_of_reach)
    }

    fn place_functions(&mut self, blocked: &BTreeMap<usize, String>) {
        for f in &self.units.functions {
            if self.overflows() {
                return;
            }
            // (no mark of the pool outlives a unit)
            self.islands.settle();
            if let Some(why) = blocked.get(&f.index) {
                self.functions[f.index].state = KernelState::Skipped { reason: why.clone() };
                continue;
            }
            let entry = f.instrs.first().map(|d| d.addr).unwrap_or(0);
            let unit = Unit { entry, instrs: &f.instrs, waits: &f.waits, view: &f.view, plan: &f.plan };
            let lowered = self.lower(unit, UnitRegs { scratch: f.scratch, scavenger: None, relocation: None });
            let o = &mut self.functions[f.index];
            let (low, words) = match lowered {
                Ok(x) => x,
                Err(e) => {
                    self.unit_out_of_reach |= unit_out_of_reach(&e);
                    o.state = KernelState::Skipped { reason: e.to_string() };
                    o.coverage = coverage(self.opts.mode, &f.view, &f.plan, &[], Some(&e.to_string()));
                    continue;
                }
            };
            o.coverage = coverage(self.opts.mode, &f.view, &f.plan, &low.refused, None);
            took(o, &low);
            o.scratch = Some((f.scratch.sgpr, f.scratch.vgpr));
            self.function_code[f.index].words = Some(words);
            if low.trampolines == 0 {
                let reason = nothing_instrumented(&o.refused_sites);
                o.coverage = coverage(self.opts.mode, &f.view, &f.plan, &[], Some(&reason));
                o.state = KernelState::Skipped { reason };
                o.scratch = None;
                continue;
            }
            if !o.refused_sites.is_empty() {
                o.state = KernelState::Partial;
            }
            self.function_code[f.index].reach = low.reach.clone();
            extend_anchors(&mut self.patches, &mut self.anchor_patches, (false, f.index), low.anchors);
            self.live.insert(f.index, f.scratch);
        }
    }

    /// Places every kernel; returns the functions to leave out when a kernel
    /// reaching them cannot be instrumented (the pass must start over).
    fn place_kernels(&mut self) -> Option<Vec<(usize, String)>> {
        let processor = self.units.co.target.processor;
        if let Some(work) = &self.opts.progress {
            work.total.store(self.units.kernels.len() as u64, Ordering::Relaxed);
            work.done.store(0, Ordering::Relaxed);
        }
        let units = self.units;
        let note = self.note;
        // Whether some kernel from each on reaches an instrumented function.
        let mut reaching_on: Vec<bool> = units
            .kernels
            .iter()
            .map(|k| units.graph.reach[k.index].iter().any(|f| self.live.contains_key(f)))
            .collect();
        for i in (1..reaching_on.len()).rev() {
            reaching_on[i - 1] |= reaching_on[i];
        }
        for (i, k) in units.kernels.iter().enumerate() {
            // Once a site is out of reach where the next pass offers more
            // ways, that pass follows this one, unless a kernel still to
            // come fails for the functions it reaches (this pass then
            // starts over without them): the rest is not lowered. Nor is
            // it once the code outgrew the region: a new segment follows.
            if self.more_ways && !reaching_on[i] && self.out_of_reach() || self.overflows() {
                break;
            }
            if let Some(work) = &self.opts.progress {
                work.done.fetch_add(1, Ordering::Relaxed);
            }
            // (no mark of the pool outlives a unit)
            self.islands.settle();
            let kernel = &self.units.co.kernels[k.index];
            // Scratch above the kernel's own registers and those of the
            // instrumented functions it reaches (their scratch is above it).
            let reached: Vec<usize> =
                self.units.graph.reach[k.index].iter().copied().filter(|f| self.live.contains_key(f)).collect();
            if k.plan.probes.is_empty() && reached.is_empty() && self.clones_for(k).is_empty() {
                // Nothing to check: it runs as it is, fully covered.
                self.kernels[k.index].coverage = coverage(self.opts.mode, &k.view, &k.plan, &[], None);
                continue;
            }
            // (A kernel reaching a function has a readable descriptor: its base was known.)
            let own =
                regs::scratch_base(processor, &kernel.descriptor, k.used).unwrap_or(Scratch::new(k.used.0, k.used.1));
            let used = if reached.is_empty() {
                k.used
            } else {
                reached
                    .iter()
                    .map(|f| self.live[f])
                    .fold((own.sgpr, own.vgpr), |(s, v), c| (s.max(c.sgpr), v.max(c.vgpr)))
            };
            let l = match self.lower_kernel(k, used, !reached.is_empty()) {
                Ok(l) => l,
                // A kernel out of reach while the next pass offers more
                // ways: that pass follows, with its functions still in.
                Err(e) if !reached.is_empty() && self.more_ways && unit_out_of_reach(&e) => {
                    self.unit_out_of_reach = true;
                    break;
                }
                Err(e) if !reached.is_empty() => {
                    // Its descriptor cannot hold the functions' scratch:
                    // leave those functions alone and start again.
                    let why = format!("kernel {} reaching it could not be instrumented: {e}", kernel.name);
                    return Some(reached.into_iter().map(|f| (f, why.clone())).collect());
                }
                Err(e) => {
                    self.unit_out_of_reach |= unit_out_of_reach(&e);
                    let o = &mut self.kernels[k.index];
                    o.coverage = coverage(self.opts.mode, &k.view, &k.plan, &[], Some(&e.to_string()));
                    o.state = KernelState::Skipped { reason: e.to_string() };
                    continue;
                }
            };
            let o = &mut self.kernels[k.index];
            o.coverage = coverage(self.opts.mode, &k.view, &k.plan, &l.lowering.refused, None);
            o.probes = l.lowering.probes;
            o.trampolines = l.lowering.trampolines;
            o.waits_added = l.lowering.waits_added;
            o.islands = l.lowering.islands;
            o.relays = l.lowering.relays;
            o.refused_sites = l.lowering.refused;
            o.descriptor_diff = descriptor_diff(&kernel.descriptor, &l.descriptor);
            o.dx10_clamp_cleared = l.dx10_clamp_cleared;
            self.kernel_code[k.index].words = Some(l.words);
            // A kernel reaching instrumented functions keeps its grown
            // descriptor even with no trampoline of its own.
            if l.lowering.trampolines == 0 && reached.is_empty() {
                let reason = nothing_instrumented(&o.refused_sites);
                o.coverage = coverage(self.opts.mode, &k.view, &k.plan, &[], Some(&reason));
                o.state = KernelState::Skipped { reason };
                o.descriptor_diff.clear();
                continue;
            }
            if !o.refused_sites.is_empty() {
                o.state = KernelState::Partial;
            }
            o.registers = Some(l.registers.clone());
            for (outcome, code) in l.clones {
                self.functions.push(outcome);
                self.function_code.push(code);
            }
            self.kernel_code[k.index].reach = l.lowering.reach.clone();
            extend_anchors(&mut self.patches, &mut self.anchor_patches, (true, k.index), l.lowering.anchors);
            self.patches.push(Patch { addr: kernel.descriptor_address, bytes: l.descriptor.to_bytes().to_vec() });
            let (v, s) = regs::metadata_counts(&l.registers);
            match note::count_patches(note.get_or_init(|| note::NoteKernels::read(&units.co)), &kernel.name, v, s) {
                Ok(ps) => self.patches.extend(ps),
                Err(why) => o.metadata_counts_kept = Some(why),
            }
        }
        None
    }

    /// Grows the kernel's descriptor to hold scratch above `used` and lowers
    /// its plan. A kernel at its register budget (reaching no instrumented
    /// function, whose scratch must lie above it) grows what still can, and
    /// each of its trampolines, and those of the copies of the functions it
    /// calls, borrows the rest from registers dead at its site (liveness
    /// across its calls, [`super::interprocedural`]); screening, at the end
    /// of its waves, uses its own allocation.
    fn lower_kernel(
        &mut self,
        k: &KernelUnit,
        used: (u16, u16),
        reaches_functions: bool,
    ) -> Result<LoweredKernel, RewriteError> {
        let co = &self.units.co;
        let processor = co.target.processor;
        let kernel = &co.kernels[k.index];
        let max_wg = max_workgroup(co, &kernel.name);
        let screen_only =
            !k.plan.probes.is_empty() && k.plan.probes.iter().all(|p| p.action == Action::ReadExceptionFlags);
        let grown = regs::grow(processor, &kernel.descriptor, used, max_wg);
        let at_entry = regs::at_entry(processor, &kernel.descriptor);
        let units = self.units;
        let mut liveness = || {
            let at_entry = at_entry.ok_or("its descriptor cannot be read")?;
            self.liveness.kernel(&units.graph, k.index, &k.instrs, &k.waits, at_entry)
        };
        let borrowable = regs::borrowable(processor, &kernel.descriptor);
        let scavenger = |liveness: &Livenesses, files: regs::Files, always| {
            let (sgprs, vgprs, agprs) = borrowable?;
            let mut named_in_reach = liveness.kernel.named_anywhere();
            liveness.functions.values().for_each(|l| named_in_reach.union(&l.named_anywhere()));
            Some(Scavenger {
                liveness: liveness.kernel.clone(),
                sgprs: files.sgprs.then_some(sgprs),
                vgprs: files.vgprs.then_some(vgprs),
                agprs,
                always,
                named_in_reach,
            })
        };
        // The kernel's scavenger, and its copies' of the functions it reaches.
        let (scratch, mut descriptor, registers, scavenger, copies) = match grown {
            Ok((s, d, r)) => (s, d, r, None, None),
            // Screening runs where the wave ends: its registers are free then
            // (a long jump over instructions before it borrows dead ones).
            Err(e) if screen_only => {
                let (s, d, r) = regs::at_wave_end(processor, &kernel.descriptor, used, max_wg).ok_or(e)?;
                let all = regs::Files { sgprs: true, vgprs: true };
                (s, d, r, liveness().ok().and_then(|l| scavenger(&l, all, false)), None)
            }
            Err(e) if reaches_functions => return Err(e),
            Err(e) => {
                let liveness = liveness().map_err(|why| {
                    RewriteError::Kernel(format!("{e}; no site can borrow dead registers instead: {why}"))
                })?;
                let (s, d, r) = [(true, false), (false, true), (false, false)]
                    .into_iter()
                    .find_map(|(sgprs, vgprs)| {
                        regs::grow_files(processor, &kernel.descriptor, used, max_wg, regs::Files { sgprs, vgprs }).ok()
                    })
                    .ok_or(e.clone())?;
                let sc = scavenger(&liveness, r.borrowed, true).ok_or(e)?;
                let copies: BTreeMap<usize, Scavenger> =
                    liveness.functions.into_iter().map(|(f, l)| (f, sc.with_liveness(l))).collect();
                (s, d, r, Some(sc), Some(copies))
            }
        };
        let reads_flags = k.plan.probes.iter().any(|p| p.action == Action::ReadExceptionFlags);
        let dx10_clamp_cleared = reads_flags && clear_dx10_clamp(&k.instrs, &mut descriptor)?;
        // Copies of the functions it reaches that stay as they are in
        // place, its calls to them redirected (see `clones`).
        let mark = self.mark();
        let (clones, relocation) = self.clone_functions(k, scratch, copies.as_ref());
        let unit = Unit { entry: kernel.entry, instrs: &k.instrs, waits: &k.waits, view: &k.view, plan: &k.plan };
        let regs = UnitRegs { scratch, scavenger: scavenger.as_ref(), relocation: Some(&relocation) };
        match self.lower(unit, regs) {
            // Calls redirected to copies, but no probe placed in the kernel
            // or in them (a tool whose probes cannot borrow registers): it
            // stays as it is.
            Ok((lowering, _))
                if !clones.is_empty() && lowering.probes == 0 && clones.iter().all(|c| c.0.probes == 0) =>
            {
                self.restore(mark);
                let refused: Vec<RefusedSite> =
                    lowering.refused.iter().chain(clones.iter().flat_map(|c| &c.0.refused_sites)).cloned().collect();
                Err(RewriteError::Kernel(nothing_instrumented(&refused)))
            }
            Ok((lowering, words)) => {
                Ok(LoweredKernel { lowering, descriptor, registers, dx10_clamp_cleared, words, clones })
            }
            Err(e) => {
                self.restore(mark);
                Err(e)
            }
        }
    }

    /// Lowers one unit's plan into the appended code; nothing of it stays
    /// when it fails.
    fn lower(&mut self, unit: Unit<'_>, regs: UnitRegs<'_>) -> Result<(KernelLowering, Range<usize>), RewriteError> {
        use xfpx_common::lower::Lowering;
        let start = self.appended.words.len();
        let kernel_name = self.table.shared_name(&unit.view.name);
        let mut lowering = AmdLowering {
            enc: Encoder { target: self.units.target },
            entry: unit.entry,
            instrs: unit.instrs,
            facts: super::facts::UnitFacts::of(unit.instrs),
            waits: unit.waits,
            scratch: regs.scratch,
            table: &mut self.table,
            kernel_name,
            table_address: self.opts.table,
            appended: &mut self.appended,
            islands: &mut self.islands,
            insert_waits: self.opts.insert_waits,
            flow_routine: None,
            scavenger: regs.scavenger,
            relocation: regs.relocation,
            table_words: None,
            memo: &mut self.memo,
        };
        let checkpoint = lowering.checkpoint();
        match lowering.lower(unit.view, unit.plan, &self.units.sites) {
            Ok(low) => Ok((low, start..self.appended.words.len())),
            Err(e) => {
                lowering.rollback(&checkpoint);
                Err(e)
            }
        }
    }

    /// The pass's outcome, its `patches` applied: each unit's anchors move into its code.
    fn finish(mut self, bytes: Vec<u8>, patches: Vec<Patch>) -> Placed {
        let mut patches = patches.into_iter().enumerate();
        for (kernel, index, range) in std::mem::take(&mut self.anchor_patches) {
            let anchors = patches.by_ref().skip_while(|(i, _)| *i < range.start).take(range.len()).map(|(_, p)| p);
            let code = if kernel { &mut self.kernel_code[index] } else { &mut self.function_code[index] };
            code.anchors = anchors.collect();
        }
        Placed {
            region: self.region,
            table: self.table,
            appended: self.appended,
            kernels: self.kernels,
            functions: self.functions,
            kernel_code: self.kernel_code,
            function_code: self.function_code,
            bytes,
        }
    }
}

/// A unit's anchors (of unit (whether a kernel, its index)) into the
/// `patches`, their place in them noted in `at` (the unit's code takes
/// them once they are applied).
fn extend_anchors(patches: &mut Vec<Patch>, at: &mut Vec<AnchorPatches>, unit: (bool, usize), anchors: Vec<Patch>) {
    let start = patches.len();
    patches.extend(anchors);
    at.push((unit.0, unit.1, start..patches.len()));
}

/// The ways a placement pass offers anchors whose trampoline is beyond
/// `s_branch` reach: each next one only when the pass before left some
/// site out of reach (see [`super::reach`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ways {
    /// Long-jump islands in `.text` padding.
    Islands,
    /// Those, and long jumps in place of straight-line windows.
    LongJumps,
    /// Those, and relays and islands in zones reserved in the appended code
    /// (only where it starts near `.text`).
    Zones,
}

impl Ways {
    fn more(self, near_text: bool) -> Option<Ways> {
        match self {
            Ways::Islands => Some(Ways::LongJumps),
            Ways::LongJumps if near_text => Some(Ways::Zones),
            _ => None,
        }
    }
}

/// About how many table slots the units' probes make (a check one per
/// kind it tests, any other probe one): room the table takes at once.
fn expected_slots(units: &Units<'_>) -> usize {
    let plans = units.kernels.iter().map(|k| &k.plan).chain(units.functions.iter().map(|f| &f.plan));
    plans
        .flat_map(|plan| &plan.probes)
        .map(|p| match &p.action {
            Action::CheckFp { kinds, .. } => kinds.iter().count(),
            _ => 1,
        })
        .sum()
}

/// What lowering a function (or a copy of one) took: its counts and the sites refused.
fn took(o: &mut FunctionOutcome, low: &KernelLowering) {
    o.probes = low.probes;
    o.trampolines = low.trampolines;
    o.waits_added = low.waits_added;
    o.islands = low.islands;
    o.relays = low.relays;
    o.refused_sites = low.refused.clone();
}

/// Whether code at `region` starts within `s_branch` reach of `.text`'s
/// end (relay zones there help far anchors; code placed farther, as
/// `min_distance` asks, is reached through islands only).
fn near_text(co: &crate::code_object::CodeObject<'_>, region: &Region) -> bool {
    co.text.as_ref().is_some_and(|t| super::reach::rel16(t.text.end, region.start).is_some())
}

#[path = "clones.rs"]
mod clones;

/// DX10_CLAMP keeps TRAPSTS from recording FP exceptions before gfx12; it
/// also turns clamped NaNs into 0, so it is cleared only when no
/// instruction uses `clamp`. Returns whether it was cleared.
fn clear_dx10_clamp(instrs: &[DecodedInstr], descriptor: &mut KernelDescriptor) -> Result<bool, RewriteError> {
    let clamps =
        instrs.iter().any(|d| d.insn.modifiers.iter().any(|m| matches!(m, xfpx_amd_isa::Modifier::Flag("clamp"))));
    if clamps || descriptor.field(DescriptorWord::ComputePgmRsrc1, rsrc1::ENABLE_DX10_CLAMP) == 0 {
        return Ok(false);
    }
    descriptor
        .set_field(DescriptorWord::ComputePgmRsrc1, rsrc1::ENABLE_DX10_CLAMP, 0)
        .map_err(|e| RewriteError::Kernel(e.to_string()))?;
    Ok(true)
}

fn descriptor_diff(a: &KernelDescriptor, b: &KernelDescriptor) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for (name, x, y) in [
        ("compute_pgm_rsrc1", a.compute_pgm_rsrc1, b.compute_pgm_rsrc1),
        ("compute_pgm_rsrc2", a.compute_pgm_rsrc2, b.compute_pgm_rsrc2),
        ("compute_pgm_rsrc3", a.compute_pgm_rsrc3, b.compute_pgm_rsrc3),
    ] {
        if x != y {
            out.push((name.to_string(), u64::from(x), u64::from(y)));
        }
    }
    out
}

/// How many of a unit's floating-point sites its lowered plan checks:
/// those planned less those `refused`, or none (all planned sites refused
/// for `skipped`) when the unit was left as it was. Screening checks every
/// site of an instrumented unit through the bits it reads at the end of
/// every wave. None in count mode, which checks no site.
fn coverage(
    mode: Mode,
    view: &KernelView,
    plan: &Plan,
    refused: &[RefusedSite],
    skipped: Option<&str>,
) -> Option<SiteCoverage> {
    let fp_sites = view.instrs.iter().filter(|i| i.class.format().is_some()).count() as u64;
    let planned = match mode {
        Mode::Detect => plan.by_instr().count() as u64,
        Mode::Screen => fp_sites,
        Mode::Count | Mode::Fast => return None,
    };
    let mut c = SiteCoverage { fp_sites, checked: 0, refused: Vec::new() };
    match skipped {
        Some(reason) => {
            if planned > 0 {
                c.refuse(reason, planned);
            }
        }
        // A wave end left unscreened leaves every site unchecked on its paths.
        None if mode == Mode::Screen => match refused.first() {
            Some(r) if fp_sites > 0 => c.refuse(&r.reason, fp_sites),
            _ => c.checked = fp_sites,
        },
        None => {
            c.refuse_each(refused.iter().map(|r| r.reason.as_str()));
            c.checked = planned.saturating_sub(c.refused_sites());
        }
    }
    Some(c)
}

/// Why a unit with no trampoline is left as it was.
fn nothing_instrumented(refused: &[RefusedSite]) -> String {
    match refused.first() {
        Some(r) => format!("no site could be instrumented (first: +{:#x}: {})", r.offset, r.reason),
        None => "nothing to instrument".into(),
    }
}
