//! The units of a rewrite, made ready to place: every kernel and device
//! function decoded once ([`super::units`]), viewed, planned by the tool and
//! verified, with its memory-wait analysis and the registers it uses; the
//! call graph that says which kernels reach which functions; the padding
//! that long-jump islands may use; and the sites, located in the line
//! tables.

use std::collections::BTreeMap;
use std::sync::Arc;

use xfpx_amd_isa::Target;
use xfpx_common::counters::CountLayout;
use xfpx_common::plan::{self, Plan};
use xfpx_common::site::SiteTable;
use xfpx_common::tool::Tool;
use xfpx_common::view::KernelView;

use super::calls::{self, CallGraph};
use super::lower::{IslandPool, Scratch};
use super::outcome::{FunctionOutcome, KernelOutcome, KernelState, Mode, RewriteError, RewriteOptions};
use super::regs;
use super::units::{Decoded, TextCode, UnitError};
use super::view::{self, DecodedInstr};
use super::waitcnt::WaitAnalysis;
use crate::code_object::CodeObject;

/// A kernel to instrument.
#[derive(Debug)]
pub struct KernelUnit {
    /// Index in the code object's kernels (and in the kernel outcomes).
    pub index: usize,
    pub instrs: Decoded,
    pub view: KernelView,
    pub plan: Plan,
    pub waits: WaitAnalysis,
    /// Registers its code names (with what it may call): (next SGPR, next VGPR).
    pub used: (u16, u16),
    /// How its count table folds (the counters planner only).
    pub counts: Option<CountLayout>,
}

/// A device function to instrument unless a kernel reaching it fails.
#[derive(Debug)]
pub struct FunctionUnit {
    /// Index in the call graph's functions (and in the function outcomes).
    pub index: usize,
    pub instrs: Decoded,
    pub view: KernelView,
    pub plan: Plan,
    pub waits: WaitAnalysis,
    /// Shared by every kernel reaching it: above all their registers.
    pub scratch: Scratch,
    /// How its count table folds (the counters planner only).
    pub counts: Option<CountLayout>,
}

/// What reading an admitted kernel's code gives before it is planned.
struct ReadKernel {
    view: KernelView,
    waits: WaitAnalysis,
    /// Registers its own code names.
    own: (u16, u16),
}

/// How a rewrite plans each unit.
#[derive(Clone, Copy)]
pub enum Planner<'t> {
    /// A tool over the unit's view.
    Tool(&'t dyn Tool),
    /// The counters tool ([`super::counts`]), which needs the decoded
    /// branch targets besides the view.
    Counters,
}

impl std::fmt::Debug for Planner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Planner::Tool(t) => write!(f, "Planner::Tool({})", t.name()),
            Planner::Counters => write!(f, "Planner::Counters"),
        }
    }
}

/// Everything placement needs, computed once.
#[derive(Debug)]
pub struct Units<'a> {
    pub co: CodeObject<'a>,
    pub target: Target,
    pub graph: Arc<CallGraph>,
    pub kernels: Vec<KernelUnit>,
    pub functions: Vec<FunctionUnit>,
    /// Functions left as they are in place, whose copies the kernels that
    /// can hold them get instead ([`super::placement`]).
    pub clonable: Vec<FunctionUnit>,
    /// The outcome of every kernel and function before placement.
    pub kernel_outcomes: Vec<KernelOutcome>,
    pub function_outcomes: Vec<FunctionOutcome>,
    /// Padding no instrumented code covers, for long-jump islands.
    pub islands: IslandPool,
    pub sites: SiteTable,
    /// What a reader of the findings should know (e.g. unreadable line tables).
    pub notes: Vec<String>,
}

impl<'a> Units<'a> {
    /// Decodes, views, plans and verifies every unit of `bytes`; with the
    /// `known` reading of their code ([`ObjectCode::read`], whose bytes
    /// these are), only the kernels `opts` admits are read again.
    pub fn read(
        bytes: &'a [u8],
        opts: &RewriteOptions,
        tool: Planner<'_>,
        known: Option<&ObjectCode>,
    ) -> Result<Units<'a>, RewriteError> {
        let co = match known {
            Some(known) => CodeObject::parse_with_metadata(bytes, known.metadata.as_ref())?,
            None => CodeObject::parse(bytes)?,
        };
        let target = co.target.processor;
        let code = match known {
            Some(known) => Code::Known(known),
            None => Code::Own(TextReading::read(&co, target)),
        };
        let (kernel_code, callee_regs) = code.kernels();
        let admitted: Vec<bool> = co.kernels.iter().map(|k| opts.kernels.admits(&[&k.name])).collect();
        let mut sites = SiteTable::new();
        let mut kernel_outcomes = Vec::new();
        let mut kernels = Vec::new();
        // The call graph (unless known) on a thread of its own while the
        // kernels are viewed across threads and planned here in order.
        let graph = std::thread::scope(|s| {
            let graph = match &code {
                Code::Own(r) => Graph::Building(s.spawn(|| Arc::new(r.graph(&co, target)))),
                Code::Known(k) => Graph::Known(k.graph.clone()),
            };
            let read = |texts: &mut view::TextCache, i: usize| match &kernel_code[i] {
                Ok(instrs) if admitted[i] => Some(ReadKernel {
                    view: view::kernel_view_with(&co.kernels[i].name, co.kernels[i].entry, instrs, texts),
                    waits: WaitAnalysis::run(instrs),
                    own: regs::used_registers(instrs.iter()),
                }),
                _ => None,
            };
            super::spread::spread_in_order_with(co.kernels.len(), view::TextCache::default, read, |index, got| {
                let k = &co.kernels[index];
                let mut o = KernelOutcome::new(&k.name, KernelState::Instrumented);
                if !admitted[index] {
                    o.state = KernelState::Excluded;
                    kernel_outcomes.push(o);
                    return;
                }
                let unit = match (&kernel_code[index], got) {
                    (Ok(instrs), Some(ReadKernel { view, waits, own })) => plan_for(&view, instrs, tool, &mut sites)
                        .map(|(plan, counts)| {
                            let calls = view.instrs.iter().any(|i| i.control == xfpx_common::view::Control::Call);
                            let used = if calls { (own.0.max(callee_regs.0), own.1.max(callee_regs.1)) } else { own };
                            KernelUnit { index, instrs: instrs.clone(), view, plan, waits, used, counts }
                        }),
                    (Err(e), _) => Err(e.clone()),
                    (Ok(_), None) => Err(RewriteError::Kernel("its code was not read".into())),
                };
                match unit {
                    Ok(unit) => {
                        o.instructions = unit.instrs.len();
                        kernels.push(unit);
                    }
                    Err(e) => o.state = KernelState::Skipped { reason: e.to_string() },
                }
                kernel_outcomes.push(o);
            });
            match graph {
                Graph::Building(graph) => graph.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Graph::Known(graph) => graph,
            }
        });
        let mut units = Units {
            islands: code.islands(),
            co,
            target,
            graph,
            kernels,
            functions: Vec::new(),
            clonable: Vec::new(),
            kernel_outcomes,
            function_outcomes: Vec::new(),
            sites,
            notes: Vec::new(),
        };
        units.prepare_functions(opts.mode, tool);
        units.notes = units.locate_sites();
        // Padding inside a kernel's own range, or a function's that may be
        // instrumented, stays out of the pool (its instructions may be anchors themselves).
        let (co, graph, functions) = (&units.co, &units.graph, &units.functions);
        units.islands.free.retain(|r| {
            !co.kernels.iter().any(|k| r.start < k.code.end && k.code.start < r.end)
                && !functions.iter().any(|c| {
                    let f = &graph.functions[c.index].code;
                    r.start < f.end && f.start < r.end
                })
        });
        Ok(units)
    }

    /// The outcome of every device function, and those to instrument: a
    /// function is instrumented when every kernel reaching it is being
    /// instrumented and can grow to hold the function's scratch registers.
    fn prepare_functions(&mut self, mode: Mode, tool: Planner<'_>) {
        let co = &self.co;
        let processor = co.target.processor;
        let by_kernel: BTreeMap<usize, &KernelUnit> = self.kernels.iter().map(|k| (k.index, k)).collect();
        // The scratch base each kernel needs so far (its own, raised by the functions accepted).
        let mut needed: BTreeMap<usize, Scratch> = BTreeMap::new();
        for (&k, unit) in &by_kernel {
            if let Ok(s) = regs::scratch_base(processor, &co.kernels[k].descriptor, unit.used) {
                needed.insert(k, s);
            }
        }
        // The views of the functions some kernel calls, across threads.
        let graph = &self.graph;
        let mut views = super::spread::spread_with(graph.functions.len(), view::TextCache::default, |texts, fi| {
            match &graph.functions[fi].instrs {
                Ok(instrs) if mode != Mode::Screen && !graph.callers_of(fi).is_empty() => Some(view::kernel_view_with(
                    &graph.functions[fi].name,
                    graph.functions[fi].code.start,
                    instrs,
                    texts,
                )),
                _ => None,
            }
        });
        for (fi, f) in self.graph.functions.iter().enumerate() {
            let callers = self.graph.callers_of(fi);
            let mut o = FunctionOutcome {
                name: f.name.clone(),
                address: f.code.start,
                copy_of: None,
                reached_by: callers.iter().map(|&k| co.kernels[k].name.clone()).collect(),
                state: KernelState::Instrumented,
                instructions: f.instrs.as_ref().map(|c| c.len()).unwrap_or(0),
                probes: 0,
                trampolines: 0,
                waits_added: 0,
                islands: 0,
                relays: 0,
                refused_sites: Vec::new(),
                coverage: None,
                scratch: None,
                anchors: Default::default(),
                appended: Default::default(),
            };
            let skip = |reason: String| KernelState::Skipped { reason };
            let blocker = callers.iter().find(|&&k| !by_kernel.contains_key(&k) || !needed.contains_key(&k));
            // Its plan, where it has code some kernel calls.
            let planned = match &f.instrs {
                _ if mode == Mode::Screen => {
                    Err(skip("screen mode reads at the calling kernels' s_endpgm the bits its exceptions set".into()))
                }
                _ if callers.is_empty() => Err(skip("no kernel calls it".into())),
                Err(e) => Err(skip(format!("cannot decode the instruction {e}"))),
                Ok(instrs) => {
                    let view = views[fi].take().unwrap_or_else(|| view::kernel_view(&f.name, f.code.start, instrs));
                    match plan_for(&view, instrs, tool, &mut self.sites) {
                        Ok((plan, _)) if plan.probes.is_empty() => Err(skip("nothing to instrument".into())),
                        Ok((plan, counts)) => Ok((view, plan, counts)),
                        Err(e) => Err(skip(e.to_string())),
                    }
                }
            };
            // A unit for the copies cloned for the kernels that can hold them.
            let clone = |(view, plan, counts): (KernelView, Plan, Option<CountLayout>)| {
                let instrs = f.instrs.clone().unwrap_or_default();
                let waits = WaitAnalysis::run(&instrs);
                FunctionUnit { index: fi, instrs, view, plan, waits, scratch: Scratch::new(0, 0), counts }
            };
            let ready = match (planned, blocker) {
                (Err(state), _) => Err(state),
                (Ok(planned), Some(&k)) => {
                    self.clonable.push(clone(planned));
                    let name = &co.kernels[k].name;
                    let why = match self.kernel_outcomes.iter().find(|o| &o.name == name).map(|o| &o.state) {
                        Some(KernelState::Excluded) => "is excluded".to_string(),
                        Some(KernelState::Skipped { reason }) => format!("is not instrumented ({reason})"),
                        _ => "has an unreadable descriptor".to_string(),
                    };
                    Err(skip(format!("reached by kernel {}, which {why}", co.kernels[k].name)))
                }
                (Ok(planned), None) => Ok(planned),
            };
            let (view, plan, counts) = match ready {
                Ok(x) => x,
                Err(state) => {
                    o.state = state;
                    self.function_outcomes.push(o);
                    continue;
                }
            };
            // Scratch above every register of every kernel reaching it.
            let scratch = callers
                .iter()
                .map(|k| needed[k])
                .fold(Scratch::new(0, 0), |a, b| Scratch::new(a.sgpr.max(b.sgpr), a.vgpr.max(b.vgpr)));
            let refusal = callers.iter().find_map(|&k| {
                let kernel = &co.kernels[k];
                let n = needed[&k];
                let want = (n.sgpr.max(scratch.sgpr), n.vgpr.max(scratch.vgpr));
                regs::grow(processor, &kernel.descriptor, want, max_workgroup(co, &kernel.name))
                    .err()
                    .map(|e| format!("kernel {} cannot hold its scratch registers: {e}", kernel.name))
            });
            if let Some(reason) = refusal {
                o.state = KernelState::Skipped { reason };
                self.function_outcomes.push(o);
                self.clonable.push(clone((view, plan, counts)));
                continue;
            }
            for &k in &callers {
                let n = needed.get_mut(&k).expect("checked above");
                *n = Scratch::new(n.sgpr.max(scratch.sgpr), n.vgpr.max(scratch.vgpr));
            }
            let instrs = f.instrs.clone().unwrap_or_default();
            let waits = WaitAnalysis::run(&instrs);
            self.functions.push(FunctionUnit { index: fi, instrs, view, plan, waits, scratch, counts });
            self.function_outcomes.push(o);
        }
    }

    /// Give the sites of kernels and device functions the source positions of
    /// the object's line tables (where it was built with `-g`); returns a note
    /// when the tables are there but cannot be read.
    fn locate_sites(&mut self) -> Vec<String> {
        let lines = match crate::lines::SourceLines::read(&self.co.elf) {
            Ok(Some(lines)) => lines,
            Ok(None) => return Vec::new(),
            Err(e) => return vec![format!("source lines are unknown: {e}")],
        };
        for k in &self.co.kernels {
            self.sites.locate(&k.name, |offset| lines.locate(k.entry + offset));
        }
        for f in &self.graph.functions {
            self.sites.locate(&f.name, |offset| lines.locate(f.code.start + offset));
        }
        Vec::new()
    }
}

/// What reading a code object's code gives, whatever of it is rewritten:
/// its metadata note; its one decoding of `.text`, cut into each kernel's
/// code; the call graph; the registers code outside the kernels names; the
/// padding long-jump islands may use. A run that rewrites one kernel at a
/// time (at its first launch) reads each object once, then rewrites each
/// kernel with it ([`super::prepare_known`]): the outputs are those of a
/// rewrite that reads it all again. It holds its own copy of the bytes.
#[derive(Debug)]
pub struct ObjectCode {
    bytes: Arc<[u8]>,
    kernel_code: Vec<Result<Decoded, RewriteError>>,
    callee_regs: (u16, u16),
    graph: Arc<CallGraph>,
    islands: IslandPool,
    /// Its metadata note (not decoded again).
    metadata: Option<crate::Metadata>,
}

impl ObjectCode {
    pub fn read(bytes: &[u8]) -> Result<ObjectCode, RewriteError> {
        let co = CodeObject::parse(bytes)?;
        let target = co.target.processor;
        let reading = TextReading::read(&co, target);
        let graph = Arc::new(reading.graph(&co, target));
        Ok(ObjectCode {
            bytes: bytes.into(),
            islands: reading.islands(),
            kernel_code: reading.kernel_code,
            callee_regs: reading.callee_regs,
            graph,
            metadata: co.metadata.clone(),
        })
    }

    /// The code object read.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The call graph of a rewrite: being built on its own thread, or known before.
enum Graph<'s> {
    Building(std::thread::ScopedJoinHandle<'s, Arc<CallGraph>>),
    Known(Arc<CallGraph>),
}

/// The code a rewrite reads: known before, or read for it alone.
enum Code<'k> {
    Known(&'k ObjectCode),
    Own(TextReading),
}

impl Code<'_> {
    /// Each kernel's code, and the registers of the code outside the kernels.
    fn kernels(&self) -> (&[Result<Decoded, RewriteError>], (u16, u16)) {
        match self {
            Code::Known(k) => (&k.kernel_code, k.callee_regs),
            Code::Own(r) => (&r.kernel_code, r.callee_regs),
        }
    }

    /// The padding long-jump islands may use.
    fn islands(&self) -> IslandPool {
        match self {
            Code::Known(k) => k.islands.clone(),
            Code::Own(r) => r.islands(),
        }
    }
}

/// `.text` decoded once, cut into each kernel's code, and the registers
/// of the code outside every kernel (device functions).
struct TextReading {
    text: TextCode,
    kernel_ranges: Vec<std::ops::Range<u64>>,
    kernel_code: Vec<Result<Decoded, RewriteError>>,
    callee_regs: (u16, u16),
}

impl TextReading {
    fn read(co: &CodeObject<'_>, target: Target) -> TextReading {
        let text = TextCode::decode(co, target);
        let kernel_ranges: Vec<std::ops::Range<u64>> = co.kernels.iter().map(|k| k.code.clone()).collect();
        let callee_regs = regs::used_registers(text.outside(&kernel_ranges));
        let kernel_code = co
            .kernels
            .iter()
            .map(|k| match text.unit(co, target, &k.code, k.preload_header_bytes) {
                Ok(instrs) => Ok(instrs),
                Err(UnitError::Bytes(e)) => Err(RewriteError::Input(e)),
                Err(UnitError::Decode(a, e)) => {
                    Err(RewriteError::Kernel(format!("cannot decode the instruction at {a:#x}: {e}")))
                }
            })
            .collect();
        TextReading { text, kernel_ranges, kernel_code, callee_regs }
    }

    /// The padding long-jump islands may use.
    fn islands(&self) -> IslandPool {
        IslandPool::from_code(self.text.instructions())
    }

    /// The call graph of the object's kernels and device functions.
    fn graph(&self, co: &CodeObject<'_>, target: Target) -> CallGraph {
        let decode_function = |code: &std::ops::Range<u64>| match self.text.unit(co, target, code, 0) {
            Ok(instrs) => Ok(instrs),
            Err(UnitError::Bytes(e)) => Err(e.to_string()),
            Err(UnitError::Decode(a, e)) => Err(format!("at {a:#x}: {e}")),
        };
        CallGraph::build(
            co,
            &decode_function,
            &self.kernel_code.iter().map(|c| c.as_ref().ok().map(|c| &**c)).collect::<Vec<_>>(),
            &calls::written_registers(self.text.outside(&self.kernel_ranges)),
        )
    }
}

/// The metadata's `max_flat_workgroup_size` of a kernel (None: unknown).
pub fn max_workgroup(co: &CodeObject<'_>, kernel: &str) -> Option<u64> {
    co.metadata
        .as_ref()
        .and_then(|m| m.kernels.iter().find(|km| km.name == kernel))
        .map(|km| km.max_flat_workgroup_size)
        .filter(|&w| w > 0)
}

/// The verified plan for `view` (decoded as `instrs`), and for the
/// counters how their table folds.
fn plan_for(
    view: &KernelView,
    instrs: &[DecodedInstr],
    planner: Planner<'_>,
    sites: &mut SiteTable,
) -> Result<(Plan, Option<CountLayout>), RewriteError> {
    let (plan, counts) = match planner {
        Planner::Tool(tool) => (tool.plan(view, sites), None),
        Planner::Counters => {
            let cp = super::counts::plan(view, instrs, sites)
                .map_err(|e| RewriteError::Kernel(format!("control flow not known, not counted: {e}")))?;
            (cp.plan, Some(cp.layout))
        }
    };
    plan::verify(&plan, view, sites).map_err(|e| RewriteError::Kernel(format!("plan rejected: {e}")))?;
    Ok((plan, counts))
}
