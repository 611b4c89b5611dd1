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
//! around it. A unit whose flow or register use the code does not say
//! (calls, indirect jumps, M0-relative register access) has no liveness.

use std::ops::RangeInclusive;

use xfpx_amd_isa::operand::{Operand as IsaOperand, RegFile, SpecialReg};
use xfpx_amd_isa::{ControlFlow, Instruction, Modifier, Opcode, Traits, Variant};

use super::view::DecodedInstr;
use super::waitcnt::WaitAnalysis;

/// A set of SGPRs (0..128), VGPRs and AGPRs (0..256 each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegSet {
    s: u128,
    v: [u64; 4],
    a: [u64; 4],
}

impl RegSet {
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

    fn union(&mut self, o: &RegSet) {
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

    fn minus(&mut self, o: &RegSet) {
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

fn effect(insn: &Instruction) -> Effect {
    let mut e = Effect::default();
    // Destinations an instruction keeps part of (`s_bitset*`) are read too.
    e.reads.add_ranges(insn.regs_read());
    e.writes.add_ranges(insn.regs_written());
    e.kills = if writes_whole_vectors(insn) { e.writes } else { e.writes.scalar() };
    let exec =
        |o: &xfpx_amd_isa::operand::OperandSlot| matches!(o.operand, IsaOperand::Special { reg: SpecialReg::Exec, .. });
    // EXEC |= x (a join, `s_or_saveexec`) keeps every active lane active.
    let grows = insn.op == Opcode::S_OR_SAVEEXEC_B64
        || (insn.op == Opcode::S_OR_B64 && insn.operands.iter().any(|o| !o.written && exec(o)));
    e.narrows_exec = insn.writes_exec() && !grows;
    e
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
    /// Liveness of `instrs` (one kernel, program order, entered at the
    /// first) with the memory operations `waits` says may be in flight and
    /// the registers the dispatch sets `at_entry`; None where the code does
    /// not say its flow or the registers it reaches.
    pub fn run(instrs: &[DecodedInstr], waits: &WaitAnalysis, at_entry: &RegSet) -> Option<Liveness> {
        let n = instrs.len();
        let index_of = |addr: u64| instrs.binary_search_by_key(&addr, |d| d.addr).ok();
        let mut succ: Vec<Vec<usize>> = Vec::with_capacity(n);
        let mut effects = Vec::with_capacity(n);
        for (i, d) in instrs.iter().enumerate() {
            if indexes_registers(d.insn.op) {
                return None;
            }
            let next = (i + 1 < n).then_some(i + 1);
            succ.push(match d.insn.control_flow(d.addr) {
                ControlFlow::Next | ControlFlow::GetPc { .. } => next.into_iter().collect(),
                ControlFlow::Branch { target } => vec![index_of(target)?],
                ControlFlow::CondBranch { target } => {
                    if matches!(d.insn.op, Opcode::S_CBRANCH_G_FORK | Opcode::S_CBRANCH_I_FORK | Opcode::S_CBRANCH_JOIN)
                    {
                        return None;
                    }
                    let mut s = vec![index_of(target)?];
                    s.extend(next);
                    s
                }
                // the wave ends (or aborts)
                ControlFlow::End | ControlFlow::Trap => Vec::new(),
                ControlFlow::Call { .. } | ControlFlow::Indirect => return None,
            });
            effects.push(effect(&d.insn));
        }
        let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, s) in succ.iter().enumerate() {
            for &j in s {
                pred[j].push(i);
            }
        }
        // Live with no vector kills (scalar kills only), then per lane.
        let no_kill = solve(n, &succ, &pred, &|i, out| {
            let e = &effects[i];
            let mut s = *out;
            s.minus(&e.writes.scalar());
            s.union(&e.reads);
            s
        });
        let live = solve(n, &succ, &pred, &|i, out| {
            let e = &effects[i];
            let mut s = if e.narrows_exec {
                // Past an EXEC write some lanes may sleep: only scalar writes kill.
                let mut s = RegSet::default();
                for &j in &succ[i] {
                    s.union(&no_kill.live_in[j]);
                }
                s.minus(&e.writes.scalar());
                s
            } else {
                let mut s = *out;
                s.minus(&e.kills);
                s
            };
            s.union(&e.reads);
            s
        });
        // Registers some path from the entry may have written: the others
        // hold nothing yet, live or not.
        let defined = solve(n, &pred, &succ, &|i, before| {
            let mut s = *before;
            s.union(&effects[i].writes);
            if i == 0 {
                s.union(at_entry);
            }
            s
        });
        let mut busy = Vec::with_capacity(n);
        let mut named = Vec::with_capacity(n);
        for (i, e) in effects.iter().enumerate() {
            let mut m = e.reads;
            m.union(&e.writes);
            for after in [false, true] {
                for (f, r) in waits.in_flight(i, after) {
                    m.insert(f, r);
                }
            }
            named.push(m);
            let mut b = live.live_in[i];
            b.union(&live.live_out[i]);
            b.intersect(&defined.live_in[i]);
            b.union(&m);
            busy.push(b);
        }
        Some(Liveness { busy, named })
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

fn union_of(sets: &[RegSet], span: RangeInclusive<usize>) -> RegSet {
    let mut b = RegSet::default();
    for i in span {
        if let Some(x) = sets.get(i) {
            b.union(x);
        }
    }
    b
}

/// Live-in and live-out sets per instruction.
#[derive(Debug, Clone)]
struct Solution {
    live_in: Vec<RegSet>,
    live_out: Vec<RegSet>,
}

/// The least fixed point of a backward problem over the graph, given the
/// transfer from the live set after an instruction to the one before it.
fn solve(n: usize, succ: &[Vec<usize>], pred: &[Vec<usize>], transfer: &dyn Fn(usize, &RegSet) -> RegSet) -> Solution {
    let mut live_in = vec![RegSet::default(); n];
    let mut live_out = vec![RegSet::default(); n];
    let mut work: Vec<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    while let Some(i) = work.pop() {
        queued[i] = false;
        let mut out = RegSet::default();
        for &j in &succ[i] {
            out.union(&live_in[j]);
        }
        live_out[i] = out;
        let new_in = transfer(i, &out);
        if new_in != live_in[i] {
            live_in[i] = new_in;
            for &k in &pred[i] {
                if !queued[k] {
                    queued[k] = true;
                    work.push(k);
                }
            }
        }
    }
    Solution { live_in, live_out }
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
