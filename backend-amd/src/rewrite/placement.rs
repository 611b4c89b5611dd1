//! Placing the prepared units: one [`Pass`] lowers device functions first
//! (which of them end up instrumented decides which kernels' descriptors
//! must hold their scratch registers), then kernels, into appended code at
//! one region. A pass starts over when a kernel reaching instrumented
//! functions cannot hold their scratch (those functions are then left out),
//! or in a new segment when the code does not fit after `.text` or `.text`
//! cannot grow after all. The last pass's code is laid out into the file.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::Ordering;

use xfpx_common::plan::Plan;
use xfpx_common::probe::Action;
use xfpx_common::report::SiteCoverage;
use xfpx_common::view::KernelView;

use super::encode::Encoder;
use super::layout::{self, Patch, Region, Strategy};
use super::lower::{AmdLowering, Appended, IslandPool, KernelLowering, RefusedSite, Scratch};
use super::note;
use super::outcome::{FunctionOutcome, KernelOutcome, KernelState, Mode, RewriteError, RewriteOptions};
use super::prepare::{max_workgroup, KernelUnit, Units};
use super::regs::{self, RegisterChange};
use super::table::TableLayout;
use super::view::DecodedInstr;
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
}

/// Places every unit, starting over as the module says, and lays the file out.
pub fn place(units: &Units<'_>, bytes: &[u8], opts: &RewriteOptions) -> Result<Placed, RewriteError> {
    let co = &units.co;
    let new_segment = || layout::new_segment_region(co, opts.min_distance.unwrap_or(0));
    // Place the code after .text when it fits, else in a new segment.
    let mut region = match (opts.min_distance, layout::grow_region(co)) {
        (None, Some(r)) => r,
        _ => new_segment()?,
    };
    // Functions left out because a kernel reaching them could not be instrumented.
    let mut blocked: BTreeMap<usize, String> = BTreeMap::new();
    loop {
        let mut pass = Pass::new(units, opts, region);
        pass.place_functions(&blocked);
        if let Some(more) = pass.place_kernels() {
            blocked.extend(more);
            continue;
        }
        let code = pass.appended.bytes();
        if region.limit.is_some_and(|l| region.start + layout::footprint(&region, code.len() as u64) > l) {
            region = new_segment()?;
            continue;
        }
        let patches: Vec<Patch> = pass.patches.drain(..).collect();
        match layout::apply(bytes, co, &region, &code, &patches) {
            Ok(out) => return Ok(pass.finish(out)),
            // A layout that cannot grow in place after all: a new segment.
            Err(RewriteError::Layout(_)) if region.strategy == Strategy::GrowText => region = new_segment()?,
            Err(e) => return Err(e),
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
    kernels: Vec<KernelOutcome>,
    functions: Vec<FunctionOutcome>,
    kernel_code: Vec<UnitCode>,
    function_code: Vec<UnitCode>,
    /// Instrumented device functions and their scratch registers.
    live: BTreeMap<usize, Scratch>,
}

/// A kernel lowered: its trampolines, its grown descriptor and its code.
struct LoweredKernel {
    lowering: KernelLowering,
    descriptor: KernelDescriptor,
    registers: RegisterChange,
    dx10_clamp_cleared: bool,
    words: Range<usize>,
}

impl<'u, 'a> Pass<'u, 'a> {
    fn new(units: &'u Units<'a>, opts: &'u RewriteOptions, region: Region) -> Self {
        Pass {
            units,
            opts,
            region,
            table: TableLayout::default(),
            appended: Appended::new(region.start),
            islands: units.islands.clone(),
            patches: Vec::new(),
            kernels: units.kernel_outcomes.clone(),
            functions: units.function_outcomes.clone(),
            kernel_code: vec![UnitCode::default(); units.kernel_outcomes.len()],
            function_code: vec![UnitCode::default(); units.function_outcomes.len()],
            live: BTreeMap::new(),
        }
    }

    fn place_functions(&mut self, blocked: &BTreeMap<usize, String>) {
        for f in &self.units.functions {
            if let Some(why) = blocked.get(&f.index) {
                self.functions[f.index].state = KernelState::Skipped { reason: why.clone() };
                continue;
            }
            let entry = f.instrs.first().map(|d| d.addr).unwrap_or(0);
            let lowered = self.lower(entry, &f.instrs, &f.waits, f.scratch, &f.view, &f.plan);
            let o = &mut self.functions[f.index];
            let (low, words) = match lowered {
                Ok(x) => x,
                Err(e) => {
                    o.state = KernelState::Skipped { reason: e.to_string() };
                    o.coverage = coverage(self.opts.mode, &f.view, &f.plan, &[], Some(&e.to_string()));
                    continue;
                }
            };
            o.coverage = coverage(self.opts.mode, &f.view, &f.plan, &low.refused, None);
            o.probes = low.probes;
            o.trampolines = low.trampolines;
            o.waits_added = low.waits_added;
            o.islands = low.islands;
            o.refused_sites = low.refused;
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
            self.function_code[f.index].anchors = low.anchors.clone();
            self.patches.extend(low.anchors);
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
        // The metadata note's kernel entries, read once for all kernels.
        let note = note::NoteKernels::read(&units.co);
        for k in &units.kernels {
            if let Some(work) = &self.opts.progress {
                work.done.fetch_add(1, Ordering::Relaxed);
            }
            let kernel = &self.units.co.kernels[k.index];
            // Scratch above the kernel's own registers and those of the
            // instrumented functions it reaches (their scratch is above it).
            let reached: Vec<usize> =
                self.units.graph.reach[k.index].iter().copied().filter(|f| self.live.contains_key(f)).collect();
            if k.plan.probes.is_empty() && reached.is_empty() {
                // Nothing to check: it runs as it is, fully covered.
                self.kernels[k.index].coverage = coverage(self.opts.mode, &k.view, &k.plan, &[], None);
                continue;
            }
            // (A kernel reaching a function has a readable descriptor: its base was known.)
            let own = regs::scratch_base(processor, &kernel.descriptor, k.used)
                .unwrap_or(Scratch { sgpr: k.used.0, vgpr: k.used.1 });
            let used = if reached.is_empty() {
                k.used
            } else {
                reached
                    .iter()
                    .map(|f| self.live[f])
                    .fold((own.sgpr, own.vgpr), |(s, v), c| (s.max(c.sgpr), v.max(c.vgpr)))
            };
            let l = match self.lower_kernel(k, used) {
                Ok(l) => l,
                Err(e) if !reached.is_empty() => {
                    // Its descriptor cannot hold the functions' scratch:
                    // leave those functions alone and start again.
                    let why = format!("kernel {} reaching it could not be instrumented: {e}", kernel.name);
                    return Some(reached.into_iter().map(|f| (f, why.clone())).collect());
                }
                Err(e) => {
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
            self.kernel_code[k.index].anchors = l.lowering.anchors.clone();
            self.patches.extend(l.lowering.anchors);
            self.patches.push(Patch { addr: kernel.descriptor_address, bytes: l.descriptor.to_bytes().to_vec() });
            let (v, s) = regs::metadata_counts(&l.registers);
            match note::count_patches(&note, &kernel.name, v, s) {
                Ok(ps) => self.patches.extend(ps),
                Err(why) => o.metadata_counts_kept = Some(why),
            }
        }
        None
    }

    /// Grows the kernel's descriptor to hold scratch above `used` and lowers its plan.
    fn lower_kernel(&mut self, k: &KernelUnit, used: (u16, u16)) -> Result<LoweredKernel, RewriteError> {
        let co = &self.units.co;
        let kernel = &co.kernels[k.index];
        let max_wg = max_workgroup(co, &kernel.name);
        let screen_only =
            !k.plan.probes.is_empty() && k.plan.probes.iter().all(|p| p.action == Action::ReadExceptionFlags);
        let (scratch, mut descriptor, registers) =
            match regs::grow(co.target.processor, &kernel.descriptor, used, max_wg) {
                Ok(grown) => grown,
                // Screening runs where the wave ends: its registers are free then.
                Err(e) if screen_only => regs::within_allocation(co.target.processor, &kernel.descriptor).ok_or(e)?,
                Err(e) => return Err(e),
            };
        let reads_flags = k.plan.probes.iter().any(|p| p.action == Action::ReadExceptionFlags);
        let dx10_clamp_cleared = reads_flags && clear_dx10_clamp(&k.instrs, &mut descriptor)?;
        let (lowering, words) = self.lower(kernel.entry, &k.instrs, &k.waits, scratch, &k.view, &k.plan)?;
        Ok(LoweredKernel { lowering, descriptor, registers, dx10_clamp_cleared, words })
    }

    /// Lowers one unit's plan into the appended code; nothing of it stays
    /// when it fails.
    fn lower(
        &mut self,
        entry: u64,
        instrs: &[DecodedInstr],
        waits: &super::waitcnt::WaitAnalysis,
        scratch: Scratch,
        view: &xfpx_common::view::KernelView,
        plan: &xfpx_common::plan::Plan,
    ) -> Result<(KernelLowering, Range<usize>), RewriteError> {
        use xfpx_common::lower::Lowering;
        let start = self.appended.words.len();
        let mut lowering = AmdLowering {
            enc: Encoder { target: self.units.target },
            entry,
            instrs,
            waits,
            scratch,
            table: &mut self.table,
            table_address: self.opts.table,
            appended: &mut self.appended,
            islands: &mut self.islands,
            insert_waits: self.opts.insert_waits,
            flow_routine: None,
        };
        let checkpoint = lowering.checkpoint();
        match lowering.lower(view, plan, &self.units.sites) {
            Ok(low) => Ok((low, start..self.appended.words.len())),
            Err(e) => {
                lowering.rollback(checkpoint);
                Err(e)
            }
        }
    }

    fn finish(self, bytes: Vec<u8>) -> Placed {
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
