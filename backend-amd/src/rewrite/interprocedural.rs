//! Liveness of a kernel and the device functions it reaches, for a kernel
//! at its register budget whose sites (its own, and those of the copies of
//! the functions made for it) borrow dead registers. Each function is
//! summarised bottom-up ([`Summary`]: what it may read before writing,
//! what it may write, whether it may put lanes to sleep), solved with
//! nothing live after its returns; a call reads its callee's summary. Then
//! top-down, callers first: a function's returns find live what is live
//! after every call to it in the kernel's reach (context-insensitive), its
//! entry holds what the callers may have defined there, and memory
//! operations in flight at any call stay in flight throughout it. A call
//! graph with an unknown target, a cycle (recursion) or a function that
//! cannot be decoded or solved gives no liveness, and says why.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::calls::{CallGraph, CallSite};
use super::liveness::{Around, LiveSets, Liveness, Prepared, RegSet, Solved, Summary};
use super::view::DecodedInstr;
use super::waitcnt::WaitAnalysis;

/// One unit's code and its calls: call instruction address → the function
/// called (an index into the functions given with it).
#[derive(Debug, Clone, Copy)]
pub struct UnitCode<'a> {
    pub name: &'a str,
    pub instrs: &'a [DecodedInstr],
    pub waits: &'a WaitAnalysis,
    pub calls: &'a BTreeMap<u64, usize>,
}

/// The liveness of a kernel and of each function it reaches.
#[derive(Debug, Clone)]
pub struct Livenesses {
    pub kernel: Liveness,
    pub functions: BTreeMap<usize, Liveness>,
}

/// A function as its callers see it, and all of its liveness that does
/// not depend on what they give it.
#[derive(Debug, Clone)]
pub struct Known {
    summary: Summary,
    prepared: Prepared,
}

/// Functions' summaries (or why a function has no liveness), the same for
/// every kernel of one object.
pub type Summaries = BTreeMap<usize, Result<Known, String>>;

/// What the callers of a function give it: live after its returns,
/// defined at its entry, in flight from before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Incoming {
    returns: LiveSets,
    at_entry: RegSet,
    in_flight: RegSet,
}

impl Incoming {
    fn union(&mut self, o: &Incoming) {
        self.returns.union(&o.returns);
        self.at_entry.union(&o.at_entry);
        self.in_flight.union(&o.in_flight);
    }
}

/// A function solved with what its callers give it: its liveness, and
/// what it gives each function it calls.
#[derive(Debug, Clone)]
struct Given {
    liveness: Liveness,
    passes_on: Vec<(usize, Incoming)>,
}

/// Functions solved so far, by what their callers gave them (the same
/// function given the same solves the same, whichever kernel calls it).
type Solutions = HashMap<(usize, Incoming), Given>;

/// Liveness of `kernel` (its dispatch setting `at_entry`) and of every
/// function of `functions` it reaches; `summaries` keeps what is learnt
/// of each function for the next kernel. Why not where some call's target
/// is not in `functions`, the calls recurse, or some unit has no liveness.
pub fn run(
    kernel: UnitCode<'_>,
    at_entry: RegSet,
    functions: &BTreeMap<usize, UnitCode<'_>>,
    summaries: &mut Summaries,
) -> Result<Livenesses, String> {
    run_with(kernel, at_entry, functions, summaries, &mut Solutions::new())
}

/// [`run`], reusing and keeping in `solutions` the functions solved with
/// what their callers give them.
fn run_with(
    kernel: UnitCode<'_>,
    at_entry: RegSet,
    functions: &BTreeMap<usize, UnitCode<'_>>,
    summaries: &mut Summaries,
    solutions: &mut Solutions,
) -> Result<Livenesses, String> {
    let order = callees_first(kernel.calls, functions)?;
    for &f in &order {
        if !summaries.contains_key(&f) {
            let u = &functions[&f];
            let known = around(u.calls, summaries).and_then(|a| {
                let around = Around { returns: Some(LiveSets::default()), ..a };
                let prepared =
                    Prepared::new(u.instrs, u.waits, &around.calls, true).map_err(|e| format!("in {}: {e}", u.name))?;
                Ok(Known { summary: prepared.solve(&around).summary(), prepared })
            });
            summaries.insert(f, known);
        }
        if let Err(why) = &summaries[&f] {
            return Err(why.clone());
        }
    }
    let mut incoming: BTreeMap<usize, Incoming> = BTreeMap::new();
    let solved = Solved::run(kernel.instrs, kernel.waits, &Around { at_entry, ..around(kernel.calls, summaries)? })?;
    for (f, given) in passes_on(&kernel, &solved) {
        incoming.entry(f).or_default().union(&given);
    }
    let mut out = Livenesses { kernel: solved.liveness(), functions: BTreeMap::new() };
    for &f in order.iter().rev() {
        let given = incoming.get(&f).copied().unwrap_or_default();
        let known = match solutions.entry((f, given)) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(slot) => {
                let u = &functions[&f];
                let prepared = match &summaries[&f] {
                    Ok(known) => &known.prepared,
                    Err(why) => return Err(why.clone()),
                };
                let around = Around {
                    returns: Some(given.returns),
                    at_entry: given.at_entry,
                    in_flight: given.in_flight,
                    ..Around::default()
                };
                let solved = prepared.solve(&around);
                slot.insert(Given { liveness: solved.liveness(), passes_on: passes_on(u, &solved) })
            }
        };
        for (g, given) in &known.passes_on {
            incoming.entry(*g).or_default().union(given);
        }
        out.functions.insert(f, known.liveness.clone());
    }
    Ok(out)
}

/// The calls of a unit with their callees' summaries (all made before).
fn around(calls: &BTreeMap<u64, usize>, summaries: &Summaries) -> Result<Around, String> {
    let mut around = Around::default();
    for (&addr, f) in calls {
        let summary = match summaries.get(f) {
            Some(Ok(known)) => known.summary,
            Some(Err(why)) => return Err(why.clone()),
            None => return Err("a callee is not summarised".into()),
        };
        around.calls.insert(addr, summary);
    }
    Ok(around)
}

/// What `unit` (solved) gives each function it calls, call by call.
fn passes_on(unit: &UnitCode<'_>, solved: &Solved) -> Vec<(usize, Incoming)> {
    let mut out = Vec::new();
    for (&addr, &f) in unit.calls {
        let Ok(i) = unit.instrs.binary_search_by_key(&addr, |d| d.addr) else { continue };
        let (returns, at_entry, in_flight) = solved.at_call(i, unit.waits);
        out.push((f, Incoming { returns, at_entry, in_flight }));
    }
    out
}

/// The functions reachable through `calls`, every one after the functions
/// it calls; why not where a target is not in `functions` or the calls recurse.
fn callees_first(
    calls: &BTreeMap<u64, usize>,
    functions: &BTreeMap<usize, UnitCode<'_>>,
) -> Result<Vec<usize>, String> {
    let mut order = Vec::new();
    let mut done = BTreeSet::new();
    // (function, its callees still to visit); a function on the stack is being visited.
    let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut on_stack = BTreeSet::new();
    let callees = |f: usize| -> Result<Vec<usize>, String> {
        let u = functions.get(&f).ok_or("a callee's code is not known")?;
        Ok(u.calls.values().copied().collect())
    };
    for &root in calls.values() {
        if done.contains(&root) {
            continue;
        }
        stack.push((root, callees(root)?));
        on_stack.insert(root);
        while let Some((f, rest)) = stack.last_mut() {
            match rest.pop() {
                Some(g) if on_stack.contains(&g) => {
                    let name = functions.get(&g).map_or("a function", |u| u.name);
                    return Err(format!("{name} calls itself (recursion)"));
                }
                Some(g) if done.contains(&g) => {}
                Some(g) => {
                    let next = callees(g)?;
                    on_stack.insert(g);
                    stack.push((g, next));
                }
                None => {
                    let f = *f;
                    on_stack.remove(&f);
                    done.insert(f);
                    order.push(f);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}

/// What liveness learns of an object's device functions, kept for its
/// next kernel: their memory waits, calls and summaries.
#[derive(Debug, Default)]
pub struct ObjectLiveness {
    waits: BTreeMap<usize, WaitAnalysis>,
    /// Or why not: some call's target is unknown, or not a function's entry.
    calls: BTreeMap<usize, Result<BTreeMap<u64, usize>, String>>,
    summaries: Summaries,
    solutions: Solutions,
    /// Each kernel's liveness (by its index and what its dispatch sets), once found.
    kernels: HashMap<(usize, RegSet), Result<Livenesses, String>>,
}

impl ObjectLiveness {
    /// [`run`] for kernel `k` of `graph` (its code `instrs` with `waits`).
    pub fn kernel(
        &mut self,
        graph: &CallGraph,
        k: usize,
        instrs: &[DecodedInstr],
        waits: &WaitAnalysis,
        at_entry: RegSet,
    ) -> Result<Livenesses, String> {
        if let Some(known) = self.kernels.get(&(k, at_entry)) {
            return known.clone();
        }
        let solve = |this: &mut ObjectLiveness| -> Result<Livenesses, String> {
            if let Some(Some(at)) = graph.unresolved.get(k) {
                return Err(format!("the call at {at:#x} has a target the code does not say"));
            }
            let kernel_calls = callees(graph, graph.kernel_calls.get(k).map_or(&[][..], |c| c))?;
            let reach = graph.reach.get(k).cloned().unwrap_or_default();
            for &f in &reach {
                let code =
                    graph.functions[f].instrs.as_ref().map_err(|e| format!("{}: {e}", graph.functions[f].name))?;
                this.waits.entry(f).or_insert_with(|| WaitAnalysis::run(code));
                this.calls.entry(f).or_insert_with(|| callees(graph, &graph.function_calls[f]));
            }
            let mut functions = BTreeMap::new();
            for &f in &reach {
                let Ok(instrs) = graph.functions[f].instrs.as_ref() else { continue };
                let name = graph.functions[f].name.as_str();
                let calls = this.calls[&f].as_ref().map_err(|e| format!("in {name}: {e}"))?;
                functions.insert(f, UnitCode { name, instrs, waits: &this.waits[&f], calls });
            }
            let kernel = UnitCode { name: "the kernel", instrs, waits, calls: &kernel_calls };
            run_with(kernel, at_entry, &functions, &mut this.summaries, &mut this.solutions)
        };
        let found = solve(self);
        self.kernels.insert((k, at_entry), found.clone());
        found
    }
}

/// Call instruction address → the function whose entry it calls; why not
/// where some target is unknown or not a function's entry.
fn callees(graph: &CallGraph, calls: &[CallSite]) -> Result<BTreeMap<u64, usize>, String> {
    calls
        .iter()
        .map(|c| {
            let f = c.target.and_then(|t| graph.functions.iter().position(|f| f.code.start == t));
            f.map(|f| (c.addr, f))
                .ok_or_else(|| format!("the call at {:#x} has no function's entry as its target", c.addr))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::waitcnt::tests::instrs as decode;
    use super::*;
    use xfpx_amd_isa::operand::RegFile;

    /// A kernel at 0x1000 — 0 v_mov_b32 v3, 1.0; 1 v_mov_b32 v7, 1.0; 2
    /// v_add_f32 v4, v0, v0 (its site); 3 s_call_b64 s[30:31], f; 4
    /// v_add_f32 v5, v7, v7; 5 s_endpgm — and f at 0x1018: 0 v_add_f32 v6,
    /// v3, v3 (its site); 1 s_setpc_b64 s[30:31].
    const CODE: [u32; 8] =
        [0x7E06_02F2, 0x7E0E_02F2, 0x0208_0100, 0xBA9E_0002, 0x020A_0F07, 0xBF81_0000, 0x020C_0703, 0xBE80_1D1E];

    #[test]
    fn a_register_the_callee_reads_is_live_across_the_call_and_what_the_caller_reads_after_it_is_live_in_the_callee() {
        let code = decode(&CODE);
        let (kernel, function) = code.split_at(6);
        assert_eq!(function[0].addr, 0x1018);
        let (kw, fw) = (WaitAnalysis::run(kernel), WaitAnalysis::run(function));
        let kernel_calls = BTreeMap::from([(0x100c, 0)]);
        let no_calls = BTreeMap::new();
        let functions = BTreeMap::from([(0, UnitCode { name: "f", instrs: function, waits: &fw, calls: &no_calls })]);
        let mut entry = RegSet::default();
        entry.insert(RegFile::Vgpr, 0);
        let unit = UnitCode { name: "k", instrs: kernel, waits: &kw, calls: &kernel_calls };
        let l = run(unit, entry, &functions, &mut Summaries::new()).expect("known calls");
        // v3: written at 0, read by the callee only; v7 read after the call.
        let at_site = l.kernel.busy(2..=2);
        assert!(at_site.contains(RegFile::Vgpr, 3) && at_site.contains(RegFile::Vgpr, 7));
        // v6: the callee writes it, nothing reads it.
        assert!(!at_site.contains(RegFile::Vgpr, 6));
        // A callee that reads nothing would leave v3 dead at the site.
        let mut reads_nothing = Around::kernel(entry);
        reads_nothing.calls.insert(0x100c, Summary::default());
        let blind = Solved::run(kernel, &kw, &reads_nothing).expect("known calls").liveness();
        assert!(!blind.busy(2..=2).contains(RegFile::Vgpr, 3));
        // In the callee: v7 (the caller reads it after the return) and the
        // return address; not v5 (written after the return).
        let in_callee = l.functions[&0].busy(0..=0);
        assert!(in_callee.contains(RegFile::Vgpr, 7) && in_callee.contains(RegFile::Sgpr, 30));
        assert!(!in_callee.contains(RegFile::Vgpr, 5));
        // Not after the kernel's own last read either: v7 is dead at 5.
        assert!(!l.kernel.busy(5..=5).contains(RegFile::Vgpr, 7));
    }

    #[test]
    fn a_tail_call_reads_what_its_callee_reads_and_the_callees_returns_find_live_what_the_callers_read() {
        // f tail-calls g: f = v_add_f32 v6, v0, v0; s_setpc_b64 s[4:5] (to
        // g); g at 0x1020 = v_add_f32 v8, v3, v3; s_setpc_b64 s[30:31].
        let mut words = CODE[..6].to_vec();
        words.extend([0x020C_0100, 0xBE80_1D04, 0x0210_0703, 0xBE80_1D1E]);
        let code = decode(&words);
        let (kernel, rest) = code.split_at(6);
        let (f, g) = rest.split_at(2);
        assert_eq!(g[0].addr, 0x1020);
        let (kw, fw, gw) = (WaitAnalysis::run(kernel), WaitAnalysis::run(f), WaitAnalysis::run(g));
        let kernel_calls = BTreeMap::from([(0x100c, 0)]);
        let tail = BTreeMap::from([(0x101c, 1)]);
        let no_calls = BTreeMap::new();
        let functions = BTreeMap::from([
            (0, UnitCode { name: "f", instrs: f, waits: &fw, calls: &tail }),
            (1, UnitCode { name: "g", instrs: g, waits: &gw, calls: &no_calls }),
        ]);
        let mut entry = RegSet::default();
        entry.insert(RegFile::Vgpr, 0);
        let unit = UnitCode { name: "k", instrs: kernel, waits: &kw, calls: &kernel_calls };
        let l = run(unit, entry, &functions, &mut Summaries::new()).expect("a tail call to a known function");
        // v3: written at 0, read by g only, through f's tail call; v8
        // written by g, read by nobody.
        let at_site = l.kernel.busy(2..=2);
        assert!(at_site.contains(RegFile::Vgpr, 3) && !at_site.contains(RegFile::Vgpr, 8));
        // In g and in f: v7, which the kernel reads after f (and so g) returns.
        assert!(l.functions[&1].busy(0..=0).contains(RegFile::Vgpr, 7));
        assert!(l.functions[&0].busy(0..=0).contains(RegFile::Vgpr, 7));
        // f's tail call reads the target pair; g's return reads the return address.
        assert!(l.functions[&0].busy(1..=1).contains(RegFile::Sgpr, 4));
        assert!(l.functions[&1].busy(0..=0).contains(RegFile::Sgpr, 30));
    }

    #[test]
    fn unknown_targets_recursion_and_calls_missing_from_the_map_have_no_liveness() {
        let code = decode(&CODE);
        let (kernel, function) = code.split_at(6);
        let (kw, fw) = (WaitAnalysis::run(kernel), WaitAnalysis::run(function));
        let calls = BTreeMap::from([(0x100c, 0)]);
        let no_calls = BTreeMap::new();
        let unit = UnitCode { name: "k", instrs: kernel, waits: &kw, calls: &calls };
        // The callee is not among the functions given.
        assert!(run(unit, RegSet::default(), &BTreeMap::new(), &mut Summaries::new()).is_err());
        // A function that calls itself (its return's address taken as a call).
        let itself = BTreeMap::from([(0x101c, 0)]);
        let recursive = BTreeMap::from([(0, UnitCode { name: "f", instrs: function, waits: &fw, calls: &itself })]);
        assert!(run(unit, RegSet::default(), &recursive, &mut Summaries::new()).is_err_and(|e| e.contains("recursion")));
        // A kernel's call with no callee known.
        let unknown = UnitCode { name: "k", instrs: kernel, waits: &kw, calls: &no_calls };
        let fine = BTreeMap::from([(0, UnitCode { name: "f", instrs: function, waits: &fw, calls: &no_calls })]);
        assert!(
            run(unknown, RegSet::default(), &fine, &mut Summaries::new()).is_err_and(|e| e.contains("unknown target"))
        );
    }
}
