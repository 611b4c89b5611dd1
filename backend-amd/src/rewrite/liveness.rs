//! Which registers a trampoline may borrow in a kernel at its register
//! budget: those dead at its site. Liveness runs backward over the unit's
//! control-flow graph, per lane as far as the code says: a vector write
//! kills a VGPR only for the lanes it writes, so a write counts as a kill
//! only when it writes whole registers and no write of EXEC lies between
//! it and the point asked about (past an EXEC write, every register some
//! later instruction reads is live). A trampoline writes vector registers
//! only in the lanes active at its site, so a VGPR dead for those lanes is
//! free for it. Scalar registers are whole. A site's busy registers are
//! those live before or after its instruction, those the instruction
//! names, and the destinations of memory operations still in flight
//! around it. A call reads what its callee may read before writing it
//! (its [`Summary`]), its own operands, and keeps alive everything live
//! after it (what the callee writes kills nothing); a call into a callee
//! that may put lanes to sleep counts as a write of EXEC. A device
//! function's returns (`s_setpc_b64 s[30:31]`) find live what is live
//! after the calls to it ([`Around`], from [`super::interprocedural`]). A
//! tail call (`s_setpc_b64` to a known function) is a call followed by a
//! return. A unit whose flow or register use the code does not say
//! (unknown call targets, indirect jumps, M0-relative register access) has
//! no liveness.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use xfpx_amd_isa::operand::{Operand as IsaOperand, RegFile, SpecialReg};
use xfpx_amd_isa::{ControlFlow, Instruction, Modifier, Opcode, Traits, Variant};

use super::view::DecodedInstr;
use super::waitcnt::WaitAnalysis;
use solver::{solve, Direction, Graph, Solution, Transfer};

mod solver;

/// A set of SGPRs (0..128), VGPRs and AGPRs (0..256 each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RegSet {
    s: u128,
    v: [u64; 4],
    a: [u64; 4],
}

impl RegSet {
    /// Every register.
    const ALL: RegSet = RegSet { s: u128::MAX, v: [u64::MAX; 4], a: [u64::MAX; 4] };

    pub fn insert(&mut self, file: RegFile, r: u16) {
        match file {
            RegFile::Sgpr if r < 128 => self.s |= 1 << r,
            RegFile::Vgpr if r < 256 => self.v[r as usize / 64] |= 1 << (r % 64),
            RegFile::Agpr if r < 256 => self.a[r as usize / 64] |= 1 << (r % 64),
            _ => {}
        }
    }

    pub fn contains(&self, file: RegFile, r: u16) -> bool {
        match file {
            RegFile::Sgpr => r < 128 && self.s >> r & 1 != 0,
            RegFile::Vgpr => r < 256 && self.v[r as usize / 64] >> (r % 64) & 1 != 0,
            RegFile::Agpr => r < 256 && self.a[r as usize / 64] >> (r % 64) & 1 != 0,
            RegFile::Ttmp => false,
        }
    }

    pub fn union(&mut self, o: &RegSet) {
        self.s |= o.s;
        for k in 0..4 {
            self.v[k] |= o.v[k];
            self.a[k] |= o.a[k];
        }
    }

    fn intersect(&mut self, o: &RegSet) {
        self.s &= o.s;
        for k in 0..4 {
            self.v[k] &= o.v[k];
            self.a[k] &= o.a[k];
        }
    }

    pub fn minus(&mut self, o: &RegSet) {
        self.s &= !o.s;
        for k in 0..4 {
            self.v[k] &= !o.v[k];
            self.a[k] &= !o.a[k];
        }
    }

    /// The scalar part only.
    fn scalar(&self) -> RegSet {
        RegSet { s: self.s, ..RegSet::default() }
    }

    fn add_ranges(&mut self, ranges: impl IntoIterator<Item = xfpx_amd_isa::operand::RegRange>) {
        for r in ranges {
            for k in 0..u16::from(r.count) {
                self.insert(r.file, r.first + k);
            }
        }
    }
}

/// What is live at one point: per lane (`live`), and with no vector write
/// counted as a kill (`no_kill`, what some lane may still read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LiveSets {
    pub live: RegSet,
    pub no_kill: RegSet,
}

impl LiveSets {
    pub fn union(&mut self, o: &LiveSets) {
        self.live.union(&o.live);
        self.no_kill.union(&o.no_kill);
    }
}

/// What a call to a device function does to registers, as its callers see it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Registers it may read before writing them, from its entry to its returns.
    pub live_in: LiveSets,
    /// Registers it (or a function it calls) may write.
    pub writes: RegSet,
    /// It (or a function it calls) writes EXEC where a lane may go to sleep.
    pub narrows_exec: bool,
    /// Registers a memory operation it (or its callees) issued may still
    /// write after it returns.
    pub leaves_in_flight: RegSet,
}

/// What a unit's liveness knows of the code around it.
#[derive(Debug, Clone, Default)]
pub struct Around {
    /// The callee of each call instruction (`s_call_b64`, `s_swappc_b64`), by
    /// address; a call not listed has no liveness.
    pub calls: BTreeMap<u64, Summary>,
    /// A device function: what is live after its returns. None for a kernel
    /// (which does not return).
    pub returns: Option<LiveSets>,
    /// Registers set before its first instruction (by the dispatch, or by
    /// the callers).
    pub at_entry: RegSet,
    /// Registers a memory operation issued before its entry may still write.
    pub in_flight: RegSet,
}

impl Around {
    /// A kernel that calls nothing: its dispatch sets `at_entry`.
    pub fn kernel(at_entry: RegSet) -> Around {
        Around { at_entry, ..Around::default() }
    }
}

/// What one instruction does to registers, for liveness.
#[derive(Debug, Clone, Copy, Default)]
struct Effect {
    reads: RegSet,
    writes: RegSet,
    /// Registers it overwrites whole in every lane it runs (scalar
    /// destinations; vector ones of a plain full write).
    kills: RegSet,
    /// It writes EXEC, where some lane active before may be inactive after.
    narrows_exec: bool,
    /// A call: what the callee reads after the call's own writes.
    callee_reads: LiveSets,
    /// Registers it or its callee may write (its own writes and the callee's).
    may_write: RegSet,
    /// A device function's return: what is live after it is the callers'.
    returns: bool,
}

/// Instructions that reach registers through M0 or the indexing mode (the
/// decoder's table has no `v_movrel*` for these targets).
fn indexes_registers(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::S_MOVRELS_B32
            | Opcode::S_MOVRELS_B64
            | Opcode::S_MOVRELD_B32
            | Opcode::S_MOVRELD_B64
            | Opcode::S_SET_GPR_IDX_ON
            | Opcode::S_SET_GPR_IDX_IDX
            | Opcode::S_SET_GPR_IDX_MODE
    )
}

/// Whether the vector destinations of `insn` are written whole in every
/// active lane (not a lane, a half, or the lanes a DPP mask picks).
fn writes_whole_vectors(insn: &Instruction) -> bool {
    !(insn.variant != Variant::Plain
        || insn.op.traits().contains(Traits::PARTIAL_WRITE)
        || insn.modifiers.iter().any(|x| matches!(x, Modifier::Array("op_sel", _))))
}

impl Effect {
    /// What is read after its own reads and writes: by its callee (a
    /// call), and by its callers (a return: `exit`, what is live after it).
    fn reads_after(&self, exit: &LiveSets) -> LiveSets {
        let mut r = self.callee_reads;
        if self.returns {
            r.union(exit);
        }
        r
    }

    /// What is live before it, given `after` (what is live after it, and
    /// read after it by its callee or callers) and what it kills.
    fn through(&self, kill: RegSet, after: &RegSet) -> RegSet {
        Transfer { kill, gen: self.reads }.apply(after)
    }

    /// A call into a function that `c` summarises: it reads what the
    /// callee reads after the call's own writes, and may write what the
    /// callee writes.
    fn enter(&mut self, c: &Summary) {
        let mut reads = c.live_in;
        reads.live.minus(&self.writes);
        reads.no_kill.minus(&self.writes);
        self.callee_reads = reads;
        self.may_write.union(&c.writes);
        self.narrows_exec |= c.narrows_exec;
    }
}

fn effect(insn: &Instruction) -> Effect {
    let mut e = Effect::default();
    // Destinations an instruction keeps part of (`s_bitset*`) are read too.
    e.reads.add_ranges(insn.reg_reads());
    e.writes.add_ranges(insn.reg_writes());
    e.kills = if writes_whole_vectors(insn) { e.writes } else { e.writes.scalar() };
    e.may_write = e.writes;
    let exec =
        |o: &xfpx_amd_isa::operand::OperandSlot| matches!(o.operand, IsaOperand::Special { reg: SpecialReg::Exec, .. });
    // EXEC |= x (a join, `s_or_saveexec`) keeps every active lane active.
    let grows = insn.op == Opcode::S_OR_SAVEEXEC_B64
        || (insn.op == Opcode::S_OR_B64 && insn.operands.iter().any(|o| !o.written && exec(o)));
    e.narrows_exec = insn.writes_exec() && !grows;
    e
}

/// Whether `insn` (whose flow is `flow`) calls a function: `s_call_b64`, `s_swappc_b64`.
fn is_call(insn: &Instruction, flow: &ControlFlow) -> bool {
    matches!(flow, ControlFlow::Call { .. }) || insn.op == Opcode::S_SWAPPC_B64
}

/// Whether `insn` returns from a device function: `s_setpc_b64 s[30:31]`,
/// the return address pair of the calling convention.
fn is_return(insn: &Instruction) -> bool {
    insn.op == Opcode::S_SETPC_B64
        && insn.operands.iter().any(|o| {
            !o.written && matches!(o.operand.reg(), Some(r) if r.file == RegFile::Sgpr && r.first == 30 && r.count == 2)
        })
}

/// The busy registers of every instruction of a unit.
#[derive(Debug, Clone)]
pub struct Liveness {
    busy: Vec<RegSet>,
    /// Registers each instruction reads or writes, or a memory operation
    /// may still write around it: no trampoline there may even save them.
    named: Vec<RegSet>,
}

impl Liveness {
    /// Liveness of `instrs` (one kernel calling nothing, program order,
    /// entered at the first) with the memory operations `waits` says may
    /// be in flight and the registers the dispatch sets `at_entry`; None
    /// where the code does not say its flow or the registers it reaches.
    pub fn run(instrs: &[DecodedInstr], waits: &WaitAnalysis, at_entry: &RegSet) -> Option<Liveness> {
        Some(Solved::run(instrs, waits, &Around::kernel(*at_entry)).ok()?.liveness())
    }

    /// Registers the instructions of `span` (by index) leave no trampoline to use.
    pub fn busy(&self, span: RangeInclusive<usize>) -> RegSet {
        union_of(&self.busy, span)
    }

    /// Registers the instructions of `span` read or write, or memory
    /// operations in flight around them may write.
    pub fn named(&self, span: RangeInclusive<usize>) -> RegSet {
        union_of(&self.named, span)
    }

    /// Registers some instruction of the unit reads or writes, or a memory
    /// operation in flight writes: the others are free in every lane everywhere.
    pub fn named_anywhere(&self) -> RegSet {
        union_of(&self.named, 0..=self.named.len().saturating_sub(1))
    }
}

/// A unit's liveness solved: per instruction what is live and what some
/// path from the entry may have defined.
#[derive(Debug, Clone)]
pub struct Solved {
    live: Solution,
    no_kill: Solution,
    /// Forward: `live_in` is after the instruction.
    defined: Solution,
    named: Vec<RegSet>,
    /// What it may write (with its callees), whether it may narrow EXEC,
    /// and what memory operations may still write at its returns.
    writes: RegSet,
    narrows_exec: bool,
    at_returns_in_flight: RegSet,
    /// Registers a memory operation may write anywhere in it: in flight at
    /// its entry, or left by its callees.
    in_flight_anywhere: RegSet,
    /// What is live after its returns, and which instructions return
    /// (tail calls included).
    exit: LiveSets,
    returns: Vec<bool>,
}

/// A unit's flow and what each of its instructions does to registers:
/// all of its liveness that does not depend on what its callers give it.
#[derive(Debug, Clone)]
pub struct Prepared {
    graph: Graph,
    effects: Vec<Effect>,
    /// What each instruction names, with what memory operations its
    /// callees leave may write (all but what is in flight at the entry).
    named: Vec<RegSet>,
    writes: RegSet,
    narrows_exec: bool,
    at_returns_in_flight: RegSet,
    /// Registers a memory operation its callees issued may still write.
    left_in_flight: RegSet,
    returns: Vec<bool>,
}

impl Solved {
    /// Solves `instrs` (program order, entered at the first) in the code
    /// `around` it; why not where the code does not say its flow or the
    /// registers it reaches.
    pub fn run(instrs: &[DecodedInstr], waits: &WaitAnalysis, around: &Around) -> Result<Solved, String> {
        Ok(Prepared::new(instrs, waits, &around.calls, around.returns.is_some())?.solve(around))
    }
}

impl Prepared {
    /// `instrs` (program order, entered at the first), whose calls by
    /// address reach the functions `calls` summarises, a device function
    /// when it `returns`; why not where the code does not say its flow or
    /// the registers it reaches.
    pub fn new(
        instrs: &[DecodedInstr],
        waits: &WaitAnalysis,
        calls: &BTreeMap<u64, Summary>,
        returns: bool,
    ) -> Result<Prepared, String> {
        let n = instrs.len();
        let mut succ_start: Vec<u32> = Vec::with_capacity(n + 1);
        let mut succ: Vec<u32> = Vec::with_capacity(n + n / 8);
        let mut effects = Vec::with_capacity(n);
        let mut left_in_flight = RegSet::default();
        for (i, d) in instrs.iter().enumerate() {
            let not_known = |what: &str| format!("`{}` at {:#x} {what}", d.insn.base_mnemonic, d.addr);
            let index_of = |addr: u64| {
                instrs
                    .binary_search_by_key(&addr, |d| d.addr)
                    .map(|j| j as u32)
                    .map_err(|_| not_known("branches out of its unit"))
            };
            if indexes_registers(d.insn.op) {
                return Err(not_known("reaches registers through M0"));
            }
            let mut e = effect(&d.insn);
            let next = (i + 1 < n).then_some(i as u32 + 1);
            let callee = calls.get(&d.addr);
            succ_start.push(succ.len() as u32);
            match d.insn.control_flow(d.addr) {
                // a call of a known callee returns to the next instruction
                flow if is_call(&d.insn, &flow) => {
                    let c = callee.ok_or_else(|| not_known("calls an unknown target"))?;
                    e.enter(c);
                    left_in_flight.union(&c.leaves_in_flight);
                    succ.extend(next);
                }
                // a tail call: the callee runs, then returns to this
                // function's callers
                ControlFlow::Indirect if d.insn.op == Opcode::S_SETPC_B64 && returns && callee.is_some() => {
                    let c = callee.expect("a tail call's callee");
                    e.enter(c);
                    e.returns = true;
                    left_in_flight.union(&c.leaves_in_flight);
                }
                ControlFlow::Next | ControlFlow::GetPc { .. } => succ.extend(next),
                ControlFlow::Branch { target } => succ.push(index_of(target)?),
                ControlFlow::CondBranch { target } => {
                    if matches!(d.insn.op, Opcode::S_CBRANCH_G_FORK | Opcode::S_CBRANCH_I_FORK | Opcode::S_CBRANCH_JOIN)
                    {
                        return Err(not_known("forks or joins"));
                    }
                    succ.push(index_of(target)?);
                    succ.extend(next);
                }
                // the wave ends (or aborts)
                ControlFlow::End | ControlFlow::Trap => {}
                // a return is to the callers
                ControlFlow::Indirect if callee.is_none() && returns && is_return(&d.insn) => {
                    e.returns = true;
                }
                ControlFlow::Call { .. } | ControlFlow::Indirect => {
                    return Err(not_known("jumps where the code does not say (an indirect jump or a tail call)"))
                }
            }
            effects.push(e);
        }
        succ_start.push(succ.len() as u32);
        let graph = Graph::new(succ_start, succ);
        let mut named = Vec::with_capacity(n);
        let mut writes = RegSet::default();
        let mut at_returns_in_flight = RegSet::default();
        let in_flight = waits.in_flight_around();
        for (i, e) in effects.iter().enumerate() {
            let mut m = e.reads;
            m.union(&e.writes);
            m.union(&left_in_flight);
            if let Some(around) = in_flight.get(i) {
                m.union(around);
            }
            if e.returns {
                for (f, r) in waits.in_flight(i, false) {
                    at_returns_in_flight.insert(f, r);
                }
            }
            named.push(m);
            writes.union(&e.may_write);
        }
        let narrows_exec = effects.iter().any(|e| e.narrows_exec);
        let returns = effects.iter().map(|e| e.returns).collect();
        Ok(Prepared { graph, effects, named, writes, narrows_exec, at_returns_in_flight, left_in_flight, returns })
    }

    /// Solved in the code `around` it: what is live after its returns,
    /// defined at its entry and in flight there (its calls are those it
    /// was prepared with).
    pub fn solve(&self, around: &Around) -> Solved {
        let (graph, effects) = (&self.graph, &self.effects);
        let exit = around.returns.unwrap_or_default();
        // Live with no vector kills (scalar kills only), then per lane.
        let transfers: Vec<Transfer> = effects
            .iter()
            .map(|e| {
                let kill = e.kills.scalar();
                Transfer { kill, gen: e.through(kill, &e.reads_after(&exit).no_kill) }
            })
            .collect();
        let no_kill = solve(graph, Direction::Backward, &transfers);
        let transfers: Vec<Transfer> = effects
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if e.narrows_exec {
                    // Past an EXEC write some lanes may sleep: only scalar
                    // writes kill, and what is live after it is what some
                    // lane may read.
                    let mut after = e.reads_after(&exit).no_kill;
                    for &j in graph.succs(i) {
                        after.union(&no_kill.live_in[j as usize]);
                    }
                    Transfer { kill: RegSet::ALL, gen: e.through(e.kills.scalar(), &after) }
                } else {
                    Transfer { kill: e.kills, gen: e.through(e.kills, &e.reads_after(&exit).live) }
                }
            })
            .collect();
        let live = solve(graph, Direction::Backward, &transfers);
        // Registers some path from the entry may have written: the others
        // hold nothing yet, live or not.
        let transfers: Vec<Transfer> = effects
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut gen = e.may_write;
                if i == 0 {
                    gen.union(&around.at_entry);
                }
                Transfer { kill: RegSet::default(), gen }
            })
            .collect();
        let defined = solve(graph, Direction::Forward, &transfers);
        let mut in_flight_anywhere = self.left_in_flight;
        in_flight_anywhere.union(&around.in_flight);
        let mut named = self.named.clone();
        if around.in_flight != RegSet::default() {
            named.iter_mut().for_each(|m| m.union(&around.in_flight));
        }
        Solved {
            live,
            no_kill,
            defined,
            named,
            writes: self.writes,
            narrows_exec: self.narrows_exec,
            at_returns_in_flight: self.at_returns_in_flight,
            in_flight_anywhere,
            exit,
            returns: self.returns.clone(),
        }
    }
}

impl Solved {
    /// The busy and named registers of every instruction.
    pub fn liveness(&self) -> Liveness {
        let busy = (0..self.named.len())
            .map(|i| {
                let mut b = self.live.live_in[i];
                b.union(&self.live.live_out[i]);
                b.intersect(&self.defined.live_in[i]);
                b.union(&self.named[i]);
                b
            })
            .collect();
        Liveness { busy, named: self.named.clone() }
    }

    /// What a call to this unit does, as its callers see it (solved with
    /// nothing live after its returns).
    pub fn summary(&self) -> Summary {
        let at = |s: &Solution| s.live_in.first().copied().unwrap_or_default();
        let mut leaves_in_flight = self.at_returns_in_flight;
        leaves_in_flight.union(&self.in_flight_anywhere);
        Summary {
            live_in: LiveSets { live: at(&self.live), no_kill: at(&self.no_kill) },
            writes: self.writes,
            narrows_exec: self.narrows_exec,
            leaves_in_flight,
        }
    }

    /// At a call (instruction `i`): what is live after it, what some path
    /// may have defined by then, and what memory operations may still
    /// write when the callee starts.
    pub fn at_call(&self, i: usize, waits: &WaitAnalysis) -> (LiveSets, RegSet, RegSet) {
        let mut live = LiveSets { live: self.live.live_out[i], no_kill: self.no_kill.live_out[i] };
        if self.returns[i] {
            // a tail call: after its callee, this function's callers go on
            live.union(&self.exit);
        }
        let mut in_flight = self.in_flight_anywhere;
        for (f, r) in waits.in_flight(i, false) {
            in_flight.insert(f, r);
        }
        (live, self.defined.live_in[i], in_flight)
    }
}

fn union_of(sets: &[RegSet], span: RangeInclusive<usize>) -> RegSet {
    let mut b = RegSet::default();
    for i in span {
        if let Some(x) = sets.get(i) {
            b.union(x);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::super::waitcnt::tests::instrs as decode;
    use super::*;

    fn busy_at(words: &[u32], i: usize) -> RegSet {
        let code = decode(words);
        let waits = WaitAnalysis::run(&code);
        let mut entry = RegSet::default();
        entry.insert(RegFile::Vgpr, 0);
        Liveness::run(&code, &waits, &entry).expect("known flow").busy(i..=i)
    }

    /// 0 v_mov_b32 v3, 1.0; 1 v_add_f32 v4, v0, v0 (the site); 2 [s_and_saveexec_b64
    /// s[2:3], vcc]; 3 v_mov_b32 v3, 0; 4 s_or_b64 exec, exec, s[2:3]; 5 v_add_f32 v5,
    /// v3, v3; 6 s_endpgm.
    #[test]
    fn a_vector_write_kills_only_where_no_lane_may_have_slept() {
        let with_narrowing =
            [0x7E06_02F2, 0x0208_0100, 0xBE82_206A, 0x7E06_0280, 0x87FE_027E, 0x020A_0703, 0xBF81_0000];
        // The lanes the saveexec puts to sleep keep v3 from 0 to 5: busy at the site.
        assert!(busy_at(&with_narrowing, 1).contains(RegFile::Vgpr, 3));
        // v5 and v6: nothing reads them before writing them.
        assert!(!busy_at(&with_narrowing, 1).contains(RegFile::Vgpr, 6));
        // Without the saveexec (an s_nop in its place) the write at 3 kills v3 for every lane.
        let mut plain = with_narrowing;
        plain[2] = 0xBF80_0000;
        assert!(!busy_at(&plain, 1).contains(RegFile::Vgpr, 3));
        // A join (EXEC |= saved) keeps lanes awake: after it, the kill holds again.
        assert!(busy_at(&with_narrowing, 4).contains(RegFile::Vgpr, 3), "v3 is read at 5");
        // The site's own registers and what no path has written yet.
        let at_site = busy_at(&plain, 1);
        assert!(at_site.contains(RegFile::Vgpr, 4) && at_site.contains(RegFile::Vgpr, 0));
        assert!(!busy_at(&plain, 0).contains(RegFile::Vgpr, 7));
    }
}
