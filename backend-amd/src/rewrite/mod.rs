//! Rewriting CDNA code objects for the exception detector. A kernel's
//! decoded code becomes a vendor-neutral view, the detector's plan is
//! verified and lowered to trampolines in appended code ([`lower`]), the
//! descriptor grows to hold the scratch registers ([`regs`]), memory waits
//! are inserted where a probe reads a register a load may still write
//! ([`waitcnt`]), and the ELF is rebuilt around the new code ([`layout`]).
//! Device functions that kernels call ([`calls`]) are instrumented like
//! kernels; their trampolines use scratch registers above everything every
//! kernel reaching them uses, and those kernels' descriptors grow to match.
//! Two modes: `Detect` (per-instruction checks, one table slot per
//! (site, kind, format)) and `Screen` (the wave's sticky TRAPSTS exception
//! bits at `s_endpgm`, one slot per kernel). See `asm-snippets/amd/README.md`
//! for the code shapes and the hardware behaviour screening relies on.

pub mod calls;
pub mod encode;
pub mod layout;
pub mod lower;
pub mod note;
pub mod regs;
pub mod table;
pub mod view;
pub mod waitcnt;

use std::fmt::Write as _;

use serde::Serialize;
use xfpx_amd_isa::{DecodeError, Opcode, Target};
use xfpx_common::config::KernelFilter;
use xfpx_common::lower::Lowering;
use xfpx_common::plan::{self, Plan};
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, Tool};

use std::collections::BTreeMap;

use crate::code_object::{CodeObject, Kernel};
use crate::descriptor::{raw::rsrc1, DescriptorWord, KernelDescriptor};
use calls::CallGraph;
use layout::{Patch, Strategy};
use lower::{AmdLowering, Appended, KernelLowering, RefusedSite, Scratch};
use regs::RegisterChange;
use table::TableLayout;
use view::DecodedInstr;
use waitcnt::WaitAnalysis;

/// Why a rewrite, a kernel or a site failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The input could not be read as a code object.
    #[error("{0}")]
    Input(#[from] crate::error::Error),
    /// The ELF cannot be rebuilt with appended code.
    #[error("layout: {0}")]
    Layout(String),
    /// An instruction could not be encoded (an internal inconsistency).
    #[error("encoding: {0}")]
    Encode(String),
    /// A kernel cannot be instrumented.
    #[error("{0}")]
    Kernel(String),
    /// A mode the rewriter does not lower.
    #[error("mode {} is not available for AMD rewrites (detect, screen, count)", .0.name())]
    Mode(Mode),
    /// A site cannot be instrumented (the kernel still is, without it).
    #[error("{0}")]
    Refused(String),
}

/// What the appended code does: the common mode list. `Detect` checks the
/// results of FP instructions, one record per (site, kind, format);
/// `Screen` reads TRAPSTS exception bits at the end of each wave, one record
/// per kernel; `Count` counts the wave instructions each kernel executes (a
/// counter probe before every instruction: the relocation of every kind of
/// instruction, branches and calls included, is exercised by this mode).
/// `Fast` is not lowered here.
pub use xfpx_common::config::Mode;

/// Options of [`rewrite`].
#[derive(Debug, Clone)]
pub struct RewriteOptions {
    pub mode: Mode,
    /// Only kernels this filter admits (by mangled or demangled name).
    pub kernels: KernelFilter,
    /// Device address of the table (patched into the code).
    pub table_address: u64,
    /// Place appended code at least this far above the last segment (forces a
    /// new segment; tests use it to exercise far returns).
    pub min_distance: Option<u64>,
    /// Insert the memory waits probes need (on by default; off only to show,
    /// in tests, the hazards that follow without them).
    pub insert_waits: bool,
    /// Counts of the kernels lowered so far, for a progress display.
    pub progress: Option<std::sync::Arc<Progress>>,
}

/// How far a rewrite is: kernels lowered (`done`) of those to lower
/// (`total`; both start again from 0 when placement starts over).
pub use xfpx_common::backend::Progress;

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions {
            mode: Mode::Detect,
            kernels: KernelFilter::default(),
            table_address: 0,
            min_distance: None,
            insert_waits: true,
            progress: None,
        }
    }
}

/// Whether a kernel was rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KernelState {
    Instrumented,
    Excluded,
    Skipped { reason: String },
}

/// One line of appended code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListingLine {
    pub address: u64,
    pub words: Vec<u32>,
    pub text: String,
}

/// An instruction of the original code that was overwritten (an anchor, or
/// padding that became a long-jump island).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnchorLine {
    pub address: u64,
    /// The original instruction (or `padding`).
    pub original: String,
    /// The first instruction written over it.
    pub replaced_by: String,
}

/// The rewrite of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelOutcome {
    pub name: String,
    #[serde(flatten)]
    pub state: KernelState,
    pub instructions: usize,
    pub probes: usize,
    pub trampolines: usize,
    pub waits_added: usize,
    /// Long-jump islands placed in `.text` padding.
    pub islands: usize,
    pub refused_sites: Vec<RefusedSite>,
    pub registers: Option<RegisterChange>,
    /// Descriptor words that changed: (field, before, after).
    pub descriptor_diff: Vec<(String, u64, u64)>,
    /// Original instructions overwritten by branches to the trampolines.
    pub anchors: Vec<AnchorLine>,
    /// Appended code of this kernel's trampolines.
    pub appended: Vec<ListingLine>,
    /// Screen mode: DX10_CLAMP was cleared so TRAPSTS records exceptions.
    pub dx10_clamp_cleared: bool,
    /// Why the metadata note's register counts were left as they were.
    pub metadata_counts_kept: Option<String>,
}

/// The rewrite of one device function (code outside the kernels, reached by
/// calls). Its sites are named by the function and the offset from its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionOutcome {
    pub name: String,
    pub address: u64,
    /// The kernels that can reach it (all of them where some call on their
    /// paths has a target the rewriter cannot tell).
    pub reached_by: Vec<String>,
    #[serde(flatten)]
    pub state: KernelState,
    pub instructions: usize,
    pub probes: usize,
    pub trampolines: usize,
    pub waits_added: usize,
    pub islands: usize,
    pub refused_sites: Vec<RefusedSite>,
    /// First scratch SGPR and VGPR of its trampolines: above every register
    /// of every kernel reaching it (whose descriptors grow to hold them).
    pub scratch: Option<(u16, u16)>,
    pub anchors: Vec<AnchorLine>,
    pub appended: Vec<ListingLine>,
}

/// The result of [`rewrite`].
#[derive(Debug, Clone, Serialize)]
pub struct RewriteOutcome {
    #[serde(skip)]
    pub bytes: Vec<u8>,
    #[serde(skip)]
    pub sites: SiteTable,
    pub target: String,
    pub mode: Mode,
    pub strategy: Option<Strategy>,
    /// Address of the first appended byte.
    pub appended_at: Option<u64>,
    pub appended_bytes: u64,
    pub table_address: u64,
    pub table: TableLayout,
    /// The sites the table's slots name, by id (for readers of the JSON).
    #[serde(rename = "sites")]
    pub site_list: Vec<xfpx_common::site::SiteInfo>,
    pub kernels: Vec<KernelOutcome>,
    /// Device functions the kernels call.
    pub functions: Vec<FunctionOutcome>,
    /// What a reader of the findings should know (e.g. unreadable line tables).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Decodes `bytes` at `addr`; the first undecodable word is an error.
fn decode_all(target: Target, bytes: &[u8], addr: u64) -> Result<Vec<DecodedInstr>, (u64, DecodeError)> {
    xfpx_amd_isa::disassemble(target, bytes, addr)
        .map(|(a, r)| r.map(|insn| DecodedInstr { addr: a, insn }).map_err(|e| (a, e)))
        .collect()
}

/// Every decodable instruction of `.text` (for register use).
fn all_code(co: &CodeObject<'_>, target: Target) -> Vec<DecodedInstr> {
    let Some(text) = co.elf.section_by_name(".text") else { return Vec::new() };
    let Ok(data) = co.elf.section_data(text) else { return Vec::new() };
    xfpx_amd_isa::disassemble(target, data, text.addr)
        .filter_map(|(a, r)| r.ok().map(|insn| DecodedInstr { addr: a, insn }))
        .collect()
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

/// Work for one kernel, carried between the two placement attempts.
struct Prepared<'k> {
    kernel: &'k Kernel,
    /// Index in the code object's kernels.
    index: usize,
    instrs: Vec<DecodedInstr>,
    view: xfpx_common::view::KernelView,
    plan: Plan,
    waits: WaitAnalysis,
    /// Registers its code names (with what it may call): (next SGPR, next VGPR).
    used: (u16, u16),
}

/// Rewrites the code object `bytes`: detect mode lowers the exception
/// detector's plans, count mode the [`InstructionCounter`]'s, screen mode
/// instruments every `s_endpgm`.
pub fn rewrite(bytes: &[u8], opts: &RewriteOptions) -> Result<RewriteOutcome, RewriteError> {
    let detector = Detector::default();
    let tool: Option<&dyn Tool> = match opts.mode {
        Mode::Detect => Some(&detector),
        Mode::Count => Some(&InstructionCounter),
        Mode::Screen => None,
        Mode::Fast => return Err(RewriteError::Mode(Mode::Fast)),
    };
    rewrite_planned(bytes, opts, tool)
}

/// Rewrites `bytes` lowering the plans of any `tool` (the mode recorded in
/// the outcome is `opts.mode`; with [`Mode::Screen`] the tool is not used).
pub fn rewrite_with(bytes: &[u8], opts: &RewriteOptions, tool: &dyn Tool) -> Result<RewriteOutcome, RewriteError> {
    rewrite_planned(bytes, opts, (opts.mode != Mode::Screen).then_some(tool))
}

fn rewrite_planned(
    bytes: &[u8],
    opts: &RewriteOptions,
    tool: Option<&dyn Tool>,
) -> Result<RewriteOutcome, RewriteError> {
    let co = CodeObject::parse(bytes)?;
    let target = co.target.processor;
    let processor = target;
    let code = all_code(&co, target);
    // Code outside every kernel (device functions): what a calling kernel may also run.
    let functions: Vec<DecodedInstr> =
        code.iter().filter(|d| !co.kernels.iter().any(|k| k.code.contains(&d.addr))).cloned().collect();
    let callee_regs = regs::used_registers(&functions);
    let kernel_code: Vec<Result<Vec<DecodedInstr>, RewriteError>> =
        co.kernels.iter().map(|k| decode_kernel(&co, k, target)).collect();
    let graph = CallGraph::build(
        &co,
        target,
        &kernel_code.iter().map(|c| c.as_ref().ok().map(Vec::as_slice)).collect::<Vec<_>>(),
        &calls::written_sgprs(&functions),
    );
    let mut sites = SiteTable::new();
    let mut outcomes = Vec::new();
    let mut prepared = Vec::new();
    for (ki, (k, instrs)) in co.kernels.iter().zip(kernel_code).enumerate() {
        let mut o = KernelOutcome {
            name: k.name.clone(),
            state: KernelState::Instrumented,
            instructions: 0,
            probes: 0,
            trampolines: 0,
            waits_added: 0,
            islands: 0,
            refused_sites: Vec::new(),
            registers: None,
            descriptor_diff: Vec::new(),
            anchors: Vec::new(),
            appended: Vec::new(),
            dx10_clamp_cleared: false,
            metadata_counts_kept: None,
        };
        if !opts.kernels.admits(&[&k.name]) {
            o.state = KernelState::Excluded;
            outcomes.push(o);
            continue;
        }
        match instrs.and_then(|instrs| prepare(k, ki, instrs, tool, &mut sites, callee_regs)) {
            Ok(p) => {
                o.instructions = p.instrs.len();
                prepared.push((outcomes.len(), p));
            }
            Err(e) => o.state = KernelState::Skipped { reason: e.to_string() },
        }
        outcomes.push(o);
    }
    let (function_outcomes, candidates) = prepare_functions(&co, &graph, &outcomes, &prepared, tool, &mut sites)?;
    let notes = locate_sites(&co, &graph, &mut sites);
    let mut island_pool = lower::IslandPool::from_code(&code);
    // Padding inside a kernel's own range, or a function's that may be
    // instrumented, stays out of the pool (its instructions may be anchors themselves).
    island_pool.free.retain(|r| {
        !co.kernels.iter().any(|k| r.start < k.code.end && k.code.start < r.end)
            && !candidates.iter().any(|c| {
                let f = &graph.functions[c.index].code;
                r.start < f.end && f.start < r.end
            })
    });
    // Place the code after .text when it fits, else in a new segment.
    let mut region = match (opts.min_distance, layout::grow_region(&co)) {
        (None, Some(r)) => r,
        (d, _) => layout::new_segment_region(&co, d.unwrap_or(0))?,
    };
    // Functions left out because a kernel reaching them could not be instrumented.
    let mut blocked: BTreeMap<usize, String> = BTreeMap::new();
    'placement: loop {
        let mut outs = outcomes.clone();
        let mut fouts = function_outcomes.clone();
        let mut table = TableLayout::default();
        let mut appended = Appended { base: region.start, words: Vec::new() };
        let mut patches = Vec::new();
        let mut islands = island_pool.clone();
        // Device functions first: which of them end up instrumented decides
        // which kernels' descriptors must hold their scratch registers.
        let mut live: BTreeMap<usize, Scratch> = BTreeMap::new();
        for c in &candidates {
            let o = &mut fouts[c.index];
            if let Some(why) = blocked.get(&c.index) {
                o.state = KernelState::Skipped { reason: why.clone() };
                continue;
            }
            let mark = appended.words.len();
            match lower_function(c, target, opts, &mut table, &mut appended, &mut islands, &sites) {
                Ok(low) => {
                    o.probes = low.probes;
                    o.trampolines = low.trampolines;
                    o.waits_added = low.waits_added;
                    o.islands = low.islands;
                    o.refused_sites = low.refused;
                    o.scratch = Some((c.scratch.sgpr, c.scratch.vgpr));
                    o.appended = listing(target, &appended, mark);
                    if low.trampolines == 0 {
                        o.state = KernelState::Skipped { reason: nothing_instrumented(&o.refused_sites) };
                        o.scratch = None;
                        continue;
                    }
                    o.anchors = low.anchors.iter().map(|a| anchor_line(target, &c.instrs, a)).collect();
                    patches.extend(low.anchors);
                    live.insert(c.index, c.scratch);
                }
                Err(e) => o.state = KernelState::Skipped { reason: e.to_string() },
            }
        }
        if let Some(work) = &opts.progress {
            work.total.store(prepared.len() as u64, std::sync::atomic::Ordering::Relaxed);
            work.done.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        for (i, p) in &prepared {
            if let Some(work) = &opts.progress {
                work.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let o = &mut outs[*i];
            // Scratch above the kernel's own registers and those of the
            // instrumented functions it reaches (their scratch is above it).
            let reached: Vec<usize> = graph.reach[p.index].iter().copied().filter(|f| live.contains_key(f)).collect();
            // (A kernel reaching a function has a readable descriptor: its base was known.)
            let own = regs::scratch_base(processor, &p.kernel.descriptor, p.used)
                .unwrap_or(Scratch { sgpr: p.used.0, vgpr: p.used.1 });
            let used = if reached.is_empty() {
                p.used
            } else {
                reached.iter().map(|f| live[f]).fold((own.sgpr, own.vgpr), |(s, v), c| (s.max(c.sgpr), v.max(c.vgpr)))
            };
            match lower_kernel(&co, p, target, used, opts, &mut table, &mut appended, &mut islands, &sites) {
                Ok((low, descriptor, change, cleared, listing_from)) => {
                    o.probes = low.probes;
                    o.trampolines = low.trampolines;
                    o.waits_added = low.waits_added;
                    o.islands = low.islands;
                    o.refused_sites = low.refused;
                    o.descriptor_diff = descriptor_diff(&p.kernel.descriptor, &descriptor);
                    o.registers = Some(change);
                    o.dx10_clamp_cleared = cleared;
                    o.appended = listing(target, &appended, listing_from);
                    // A kernel reaching instrumented functions keeps its grown
                    // descriptor even with no trampoline of its own.
                    if low.trampolines == 0 && reached.is_empty() {
                        o.state = KernelState::Skipped { reason: nothing_instrumented(&o.refused_sites) };
                        o.descriptor_diff.clear();
                        o.registers = None;
                        continue;
                    }
                    o.anchors = low.anchors.iter().map(|a| anchor_line(target, &p.instrs, a)).collect();
                    patches.extend(low.anchors);
                    patches.push(Patch { addr: p.kernel.descriptor_address, bytes: descriptor.to_bytes().to_vec() });
                    if let Some(change) = &o.registers {
                        let (v, s) = regs::metadata_counts(change);
                        match note::count_patches(&co, &p.kernel.name, v, s) {
                            Ok(ps) => patches.extend(ps),
                            Err(why) => o.metadata_counts_kept = Some(why),
                        }
                    }
                }
                Err(e) => {
                    if !reached.is_empty() {
                        // Its descriptor cannot hold the functions' scratch:
                        // leave those functions alone and start again.
                        for f in reached {
                            blocked.insert(
                                f,
                                format!("kernel {} reaching it could not be instrumented: {e}", p.kernel.name),
                            );
                        }
                        continue 'placement;
                    }
                    o.state = KernelState::Skipped { reason: e.to_string() };
                }
            }
        }
        let code = appended.bytes();
        let fits = region.limit.is_none_or(|l| region.start + layout::footprint(&region, code.len() as u64) <= l);
        if !fits {
            region = layout::new_segment_region(&co, opts.min_distance.unwrap_or(0))?;
            continue;
        }
        let out = match layout::apply(bytes, &co, &region, &code, &patches) {
            Ok(out) => out,
            // A layout that cannot grow in place after all: a new segment.
            Err(RewriteError::Layout(_)) if region.strategy == Strategy::GrowText => {
                region = layout::new_segment_region(&co, opts.min_distance.unwrap_or(0))?;
                continue;
            }
            Err(e) => return Err(e),
        };
        // The result must read back as a code object with the same kernels.
        let check = CodeObject::parse(&out)
            .map_err(|e| RewriteError::Layout(format!("rewritten object does not parse: {e}")))?;
        if check.kernels.len() != co.kernels.len() {
            return Err(RewriteError::Layout("rewritten object lost kernels".into()));
        }
        let site_list = sites.iter().map(|(_, info)| info.clone()).collect();
        return Ok(RewriteOutcome {
            site_list,
            bytes: out,
            sites,
            target: target.name().to_string(),
            mode: opts.mode,
            strategy: (!code.is_empty()).then_some(region.strategy),
            appended_at: (!code.is_empty()).then_some(region.start),
            appended_bytes: code.len() as u64,
            table_address: opts.table_address,
            table,
            kernels: outs,
            functions: fouts,
            notes,
        });
    }
}

/// Give the sites of kernels and device functions the source positions of
/// the object's line tables (where it was built with `-g`); returns a note
/// when the tables are there but cannot be read.
fn locate_sites(co: &CodeObject<'_>, graph: &CallGraph, sites: &mut SiteTable) -> Vec<String> {
    let lines = match crate::lines::SourceLines::read(&co.elf) {
        Ok(Some(lines)) => lines,
        Ok(None) => return Vec::new(),
        Err(e) => return vec![format!("source lines are unknown: {e}")],
    };
    for k in &co.kernels {
        sites.locate(&k.name, |offset| lines.locate(k.entry + offset));
    }
    for f in &graph.functions {
        sites.locate(&f.name, |offset| lines.locate(f.code.start + offset));
    }
    Vec::new()
}

/// Why a unit with no trampoline is left as it was.
fn nothing_instrumented(refused: &[RefusedSite]) -> String {
    match refused.first() {
        Some(r) => format!("no site could be instrumented (first: +{:#x}: {})", r.offset, r.reason),
        None => "nothing to instrument".into(),
    }
}

/// Decodes a kernel's code (after a kernarg preload header); the first undecodable word is an error.
fn decode_kernel(co: &CodeObject<'_>, k: &Kernel, target: Target) -> Result<Vec<DecodedInstr>, RewriteError> {
    let code = co.kernel_code(k)?;
    let skip = k.preload_header_bytes as usize;
    let body = code.get(skip..).unwrap_or(&[]);
    decode_all(target, body, k.code.start + skip as u64)
        .map_err(|(a, e)| RewriteError::Kernel(format!("cannot decode the instruction at {a:#x}: {e}")))
}

fn prepare<'k>(
    k: &'k Kernel,
    index: usize,
    instrs: Vec<DecodedInstr>,
    tool: Option<&dyn Tool>,
    sites: &mut SiteTable,
    callee_regs: (u16, u16),
) -> Result<Prepared<'k>, RewriteError> {
    let view = view::kernel_view(&k.name, k.entry, &instrs);
    let plan = plan_for(&view, &k.name, tool, sites)?;
    let waits = WaitAnalysis::run(&instrs);
    let own = regs::used_registers(&instrs);
    let calls = view.instrs.iter().any(|i| i.control == xfpx_common::view::Control::Call);
    let used = if calls { (own.0.max(callee_regs.0), own.1.max(callee_regs.1)) } else { own };
    Ok(Prepared { kernel: k, index, instrs, view, plan, waits, used })
}

/// The tool's verified plan for `view` (an empty one without a tool).
fn plan_for(
    view: &xfpx_common::view::KernelView,
    name: &str,
    tool: Option<&dyn Tool>,
    sites: &mut SiteTable,
) -> Result<Plan, RewriteError> {
    match tool {
        Some(tool) => {
            let plan = tool.plan(view, sites);
            plan::verify(&plan, view, sites).map_err(|e| RewriteError::Kernel(format!("plan rejected: {e}")))?;
            Ok(plan)
        }
        None => Ok(Plan::new(name.to_string())),
    }
}

/// Work for one device function that will be instrumented unless a kernel
/// reaching it fails later.
struct PreparedFunction {
    /// Index in the call graph's functions.
    index: usize,
    instrs: Vec<DecodedInstr>,
    view: xfpx_common::view::KernelView,
    plan: Plan,
    waits: WaitAnalysis,
    /// Shared by every kernel reaching it: above all their registers.
    scratch: Scratch,
}

/// The outcome of every device function, and those to instrument: a
/// function is instrumented when every kernel reaching it is being
/// instrumented and can grow to hold the function's scratch registers.
fn prepare_functions(
    co: &CodeObject<'_>,
    graph: &CallGraph,
    outcomes: &[KernelOutcome],
    prepared: &[(usize, Prepared<'_>)],
    tool: Option<&dyn Tool>,
    sites: &mut SiteTable,
) -> Result<(Vec<FunctionOutcome>, Vec<PreparedFunction>), RewriteError> {
    let processor = co.target.processor;
    let by_kernel: BTreeMap<usize, &Prepared<'_>> = prepared.iter().map(|(_, p)| (p.index, p)).collect();
    // The scratch base each kernel needs so far (its own, raised by the functions accepted).
    let mut needed: BTreeMap<usize, Scratch> = BTreeMap::new();
    for (&k, p) in &by_kernel {
        if let Ok(s) = regs::scratch_base(processor, &p.kernel.descriptor, p.used) {
            needed.insert(k, s);
        }
    }
    let mut out = Vec::new();
    let mut candidates = Vec::new();
    for (fi, f) in graph.functions.iter().enumerate() {
        let callers = graph.callers_of(fi);
        let mut o = FunctionOutcome {
            name: f.name.clone(),
            address: f.code.start,
            reached_by: callers.iter().map(|&k| co.kernels[k].name.clone()).collect(),
            state: KernelState::Instrumented,
            instructions: f.instrs.as_ref().map(Vec::len).unwrap_or(0),
            probes: 0,
            trampolines: 0,
            waits_added: 0,
            islands: 0,
            refused_sites: Vec::new(),
            scratch: None,
            anchors: Vec::new(),
            appended: Vec::new(),
        };
        let skip = |reason: String| KernelState::Skipped { reason };
        let blocker = callers.iter().find(|&&k| !by_kernel.contains_key(&k) || !needed.contains_key(&k));
        let ready = match (tool, &f.instrs, blocker) {
            (None, _, _) => {
                Err(skip("screen mode reads at the calling kernels' s_endpgm the bits its exceptions set".into()))
            }
            (_, _, _) if callers.is_empty() => Err(skip("no kernel calls it".into())),
            (_, _, Some(&k)) => {
                let why = match outcomes.iter().find(|o| o.name == co.kernels[k].name).map(|o| &o.state) {
                    Some(KernelState::Excluded) => "is excluded".to_string(),
                    Some(KernelState::Skipped { reason }) => format!("is not instrumented ({reason})"),
                    _ => "has an unreadable descriptor".to_string(),
                };
                Err(skip(format!("reached by kernel {}, which {why}", co.kernels[k].name)))
            }
            (Some(_), Err(e), None) => Err(skip(format!("cannot decode the instruction {e}"))),
            (Some(tool), Ok(instrs), None) => {
                let view = view::kernel_view(&f.name, f.code.start, instrs);
                match plan_for(&view, &f.name, Some(tool), sites) {
                    Ok(plan) if plan.probes.is_empty() => Err(skip("nothing to instrument".into())),
                    Ok(plan) => Ok((view, plan)),
                    Err(e) => Err(skip(e.to_string())),
                }
            }
        };
        let (view, plan) = match ready {
            Ok(x) => x,
            Err(state) => {
                o.state = state;
                out.push(o);
                continue;
            }
        };
        // Scratch above every register of every kernel reaching it.
        let scratch = callers
            .iter()
            .map(|k| needed[k])
            .fold(Scratch { sgpr: 0, vgpr: 0 }, |a, b| Scratch { sgpr: a.sgpr.max(b.sgpr), vgpr: a.vgpr.max(b.vgpr) });
        let mut refusal = None;
        for &k in &callers {
            let kernel = &co.kernels[k];
            let n = needed[&k];
            let want = (n.sgpr.max(scratch.sgpr), n.vgpr.max(scratch.vgpr));
            if let Err(e) = regs::grow(processor, &kernel.descriptor, want, max_workgroup(co, &kernel.name)) {
                refusal = Some(format!("kernel {} cannot hold its scratch registers: {e}", kernel.name));
                break;
            }
        }
        if let Some(reason) = refusal {
            o.state = KernelState::Skipped { reason };
            out.push(o);
            continue;
        }
        for &k in &callers {
            let n = needed.get_mut(&k).expect("checked above");
            *n = Scratch { sgpr: n.sgpr.max(scratch.sgpr), vgpr: n.vgpr.max(scratch.vgpr) };
        }
        let instrs = f.instrs.clone().unwrap_or_default();
        let waits = WaitAnalysis::run(&instrs);
        candidates.push(PreparedFunction { index: fi, instrs, view, plan, waits, scratch });
        out.push(o);
    }
    Ok((out, candidates))
}

/// The metadata's `max_flat_workgroup_size` of a kernel (None: unknown).
fn max_workgroup(co: &CodeObject<'_>, kernel: &str) -> Option<u64> {
    co.metadata
        .as_ref()
        .and_then(|m| m.kernels.iter().find(|km| km.name == kernel))
        .map(|km| km.max_flat_workgroup_size)
        .filter(|&w| w > 0)
}

/// Lowers a device function's plan with its shared scratch registers.
fn lower_function(
    f: &PreparedFunction,
    target: Target,
    opts: &RewriteOptions,
    table: &mut TableLayout,
    appended: &mut Appended,
    islands: &mut lower::IslandPool,
    sites: &SiteTable,
) -> Result<KernelLowering, RewriteError> {
    let mark = appended.words.len();
    let slots = table.slots.len();
    let pool = islands.clone();
    let mut lowering = AmdLowering {
        enc: encode::Encoder { target },
        entry: f.instrs.first().map(|d| d.addr).unwrap_or(0),
        instrs: &f.instrs,
        waits: &f.waits,
        scratch: f.scratch,
        table,
        table_address: opts.table_address,
        appended,
        islands,
        insert_waits: opts.insert_waits,
    };
    let result = lowering.lower(&f.view, &f.plan, sites);
    if result.is_err() {
        lowering.appended.words.truncate(mark);
        lowering.table.slots.truncate(slots);
        *lowering.islands = pool;
    }
    result
}

/// Name of the counter of [`Mode::Count`].
pub const WAVE_INSTRUCTIONS: &str = "wave_instructions";

/// A tool counting wave executions of every instruction (one counter,
/// [`WAVE_INSTRUCTIONS`], probed before each instruction).
#[derive(Debug, Clone, Copy, Default)]
pub struct InstructionCounter;

impl Tool for InstructionCounter {
    fn name(&self) -> &'static str {
        "instruction-counter"
    }

    fn plan(&self, view: &xfpx_common::view::KernelView, sites: &mut SiteTable) -> Plan {
        use xfpx_common::probe::{Action, CounterDef, CounterId, CounterKind, Probe, When};
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: WAVE_INSTRUCTIONS.into(), kind: CounterKind::WarpExecutions });
        for (i, ins) in view.instrs.iter().enumerate() {
            let site = sites.intern(&view.name, ins.offset, &ins.text, None);
            plan.probes.push(Probe {
                instr: i as u32,
                site,
                when: When::Before,
                action: Action::Count { counter: CounterId(0) },
            });
        }
        plan
    }
}

type Lowered = (KernelLowering, KernelDescriptor, RegisterChange, bool, usize);

#[allow(clippy::too_many_arguments)]
fn lower_kernel(
    co: &CodeObject<'_>,
    p: &Prepared<'_>,
    target: Target,
    used: (u16, u16),
    opts: &RewriteOptions,
    table: &mut TableLayout,
    appended: &mut Appended,
    islands: &mut lower::IslandPool,
    sites: &SiteTable,
) -> Result<Lowered, RewriteError> {
    let processor = co.target.processor;
    let max_wg = max_workgroup(co, &p.kernel.name);
    let (scratch, mut descriptor, change) = regs::grow(processor, &p.kernel.descriptor, used, max_wg)?;
    let mark = appended.words.len();
    let slots = table.slots.len();
    let pool = islands.clone();
    let mut lowering = AmdLowering {
        enc: encode::Encoder { target },
        entry: p.kernel.entry,
        instrs: &p.instrs,
        waits: &p.waits,
        scratch,
        table,
        table_address: opts.table_address,
        appended,
        islands,
        insert_waits: opts.insert_waits,
    };
    let mut cleared = false;
    let result = match opts.mode {
        Mode::Detect | Mode::Count | Mode::Fast => lowering.lower(&p.view, &p.plan, sites),
        Mode::Screen => {
            let mut out = KernelLowering::default();
            let ends: Vec<usize> =
                p.instrs.iter().enumerate().filter(|(_, d)| d.insn.op == Opcode::S_ENDPGM).map(|(i, _)| i).collect();
            let mut err = None;
            for i in ends {
                if let Err(e) = lowering.screen_endpgm(&p.kernel.name, i, &mut out) {
                    err = Some(e);
                    break;
                }
            }
            match err {
                Some(e) => Err(e),
                None => {
                    // DX10_CLAMP keeps TRAPSTS from recording FP exceptions
                    // before gfx12; it also turns clamped NaNs into 0, so it
                    // is cleared only when no instruction uses `clamp`.
                    let clamps = p
                        .instrs
                        .iter()
                        .any(|d| d.insn.modifiers.iter().any(|m| matches!(m, xfpx_amd_isa::Modifier::Flag("clamp"))));
                    if !clamps && descriptor.field(DescriptorWord::ComputePgmRsrc1, rsrc1::ENABLE_DX10_CLAMP) != 0 {
                        descriptor
                            .set_field(DescriptorWord::ComputePgmRsrc1, rsrc1::ENABLE_DX10_CLAMP, 0)
                            .map_err(|e| RewriteError::Kernel(e.to_string()))?;
                        cleared = true;
                    }
                    Ok(out)
                }
            }
        }
    };
    match result {
        Ok(low) => Ok((low, descriptor, change, cleared, mark)),
        Err(e) => {
            lowering.appended.words.truncate(mark);
            lowering.table.slots.truncate(slots);
            *lowering.islands = pool;
            Err(e)
        }
    }
}

fn anchor_line(target: Target, instrs: &[DecodedInstr], patch: &Patch) -> AnchorLine {
    let original = instrs
        .iter()
        .find(|d| d.addr == patch.addr)
        .map(|d| d.insn.to_string())
        .unwrap_or_else(|| "padding".to_string());
    let replaced_by = match xfpx_amd_isa::decode(target, &patch.bytes) {
        Ok(i) => match i.control_flow(patch.addr) {
            xfpx_amd_isa::ControlFlow::Branch { target } => format!("{i}  // {target:#x}"),
            _ => format!("{i} ... (island)"),
        },
        Err(e) => format!("<{e}>"),
    };
    AnchorLine { address: patch.addr, original, replaced_by }
}

fn listing(target: Target, appended: &Appended, from_word: usize) -> Vec<ListingLine> {
    let words = &appended.words[from_word.min(appended.words.len())..];
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let base = appended.base + 4 * from_word as u64;
    xfpx_amd_isa::disassemble(target, &bytes, base)
        .map(|(a, r)| ListingLine {
            address: a,
            words: match &r {
                Ok(i) => i.dwords().to_vec(),
                Err(_) => Vec::new(),
            },
            text: match r {
                Ok(i) => match i.control_flow(a) {
                    xfpx_amd_isa::ControlFlow::Branch { target } | xfpx_amd_isa::ControlFlow::CondBranch { target } => {
                        format!("{i}  // {target:#x}")
                    }
                    _ => i.to_string(),
                },
                Err(e) => format!("<{e}>"),
            },
        })
        .collect()
}

/// The code a rewrite changed in one kernel or function: anchors, refused
/// sites and the appended listing.
fn render_code_changes(s: &mut String, anchors: &[AnchorLine], refused: &[RefusedSite], appended: &[ListingLine]) {
    for a in anchors {
        let _ = writeln!(s, "  {:8x}:  {}  =>  {}", a.address, a.original, a.replaced_by);
    }
    for r in refused {
        let _ = writeln!(s, "  not instrumented at +{:#x} `{}`: {}", r.offset, r.instr, r.reason);
    }
    if !appended.is_empty() {
        let _ = writeln!(s, "  appended:");
    }
    for l in appended {
        let _ = writeln!(s, "  {:8x}:  {}", l.address, l.text);
    }
}

impl RewriteOutcome {
    /// JSON rendering (the rewritten bytes are not included).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Text rendering for `xfpx dump --rewrite`.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "target {}  mode {:?}", self.target, self.mode);
        match (self.strategy, self.appended_at) {
            (Some(st), Some(at)) => {
                let _ = writeln!(
                    s,
                    "appended {} bytes at {at:#x} ({st:?}); table at {:#x}, {} slots",
                    self.appended_bytes,
                    self.table_address,
                    self.table.slots.len()
                );
            }
            _ => {
                let _ = writeln!(s, "nothing appended");
            }
        }
        for k in &self.kernels {
            let state = match &k.state {
                KernelState::Instrumented => "instrumented".to_string(),
                KernelState::Excluded => "excluded".to_string(),
                KernelState::Skipped { reason } => format!("skipped: {reason}"),
            };
            let _ = writeln!(s, "\nkernel {}: {state}", k.name);
            if k.state != KernelState::Instrumented {
                continue;
            }
            let _ = writeln!(
                s,
                "  {} instructions, {} probes in {} trampolines ({} through islands), {} waits added{}",
                k.instructions,
                k.probes,
                k.trampolines,
                k.islands,
                k.waits_added,
                if k.dx10_clamp_cleared { ", DX10_CLAMP cleared" } else { "" }
            );
            if let Some(r) = &k.registers {
                let _ = writeln!(
                    s,
                    "  registers: vgprs {} -> {}, accum_offset {:?} -> {:?}, sgprs {} -> {} (scratch s{}.., v{}..)",
                    r.vgprs_before,
                    r.vgprs_after,
                    r.accum_offset_before,
                    r.accum_offset_after,
                    r.sgprs_before,
                    r.sgprs_after,
                    r.scratch_sgpr,
                    r.scratch_vgpr
                );
            }
            if let Some(why) = &k.metadata_counts_kept {
                let _ = writeln!(s, "  metadata register counts not updated: {why}");
            }
            for (f, a, b) in &k.descriptor_diff {
                let _ = writeln!(s, "  descriptor {f}: {a:#010x} -> {b:#010x}");
            }
            render_code_changes(&mut s, &k.anchors, &k.refused_sites, &k.appended);
        }
        for f in &self.functions {
            let state = match &f.state {
                KernelState::Instrumented => "instrumented".to_string(),
                KernelState::Excluded => "excluded".to_string(),
                KernelState::Skipped { reason } => format!("skipped: {reason}"),
            };
            let _ = writeln!(s, "\nfunction {} at {:#x} (reached by {}): {state}", f.name, f.address, {
                if f.reached_by.is_empty() {
                    "no kernel".to_string()
                } else {
                    f.reached_by.join(", ")
                }
            });
            if f.state != KernelState::Instrumented {
                continue;
            }
            let _ = writeln!(
                s,
                "  {} instructions, {} probes in {} trampolines ({} through islands), {} waits added",
                f.instructions, f.probes, f.trampolines, f.islands, f.waits_added
            );
            if let Some((sg, vg)) = f.scratch {
                let _ = writeln!(s, "  scratch s{sg}.., v{vg}.. (above every register of the kernels reaching it)");
            }
            render_code_changes(&mut s, &f.anchors, &f.refused_sites, &f.appended);
        }
        s
    }
}
