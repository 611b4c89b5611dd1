//! Memory waits for instrumentation: a forward data-flow pass over a
//! kernel's original code that tracks which registers may still be the
//! destination of an outstanding memory operation, and the weakest
//! `s_waitcnt` that makes a probe's reads of such registers safe.
//!
//! Vector memory retires in issue order (a register loaded with `n` newer
//! vector operations behind it is safe after `vmcnt(n)`); LDS retires in
//! order among LDS operations; scalar memory may complete out of order, so
//! only `lgkmcnt(0)` retires it. FLAT counts in both counters.

use xfpx_amd_isa::encoding::Encoding;
use xfpx_amd_isa::operand::RegFile;
use xfpx_amd_isa::{ControlFlow, Instruction, Opcode};

use super::liveness::RegSet;
use super::view::DecodedInstr;

/// `s_waitcnt` immediate layout on gfx9: vmcnt [3:0] and [15:14], expcnt
/// [6:4], lgkmcnt [11:8]; a field at its maximum does not wait.
pub const VMCNT_MAX: u8 = 63;
pub const LGKMCNT_MAX: u8 = 15;
const EXPCNT_MAX: u16 = 7;

/// The `simm16` of `s_waitcnt vmcnt(vm) expcnt(7) lgkmcnt(lgkm)`.
pub fn waitcnt_imm(vm: u8, lgkm: u8) -> u16 {
    let vm = u16::from(vm.min(VMCNT_MAX));
    let lgkm = u16::from(lgkm.min(LGKMCNT_MAX));
    (vm & 0xF) | ((vm >> 4) << 14) | (EXPCNT_MAX << 4) | (lgkm << 8)
}

/// Decodes an `s_waitcnt` immediate into (vmcnt, lgkmcnt).
fn waitcnt_fields(imm: u16) -> (u8, u8) {
    let vm = (imm & 0xF) | ((imm >> 14) << 4);
    (vm as u8, ((imm >> 8) & 0xF) as u8)
}

/// A register that may be in flight: newer operations queued behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    /// Vector-memory operations issued after it (None: not vector memory).
    vm: Option<u8>,
    /// LDS operations issued after it, or `Smem` (only lgkmcnt(0) retires it).
    lgkm: Option<Lgkm>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lgkm {
    Ordered(u8),
    Smem,
}

/// A register in flight, by (file key, number).
type Entry = ((u8, u16), Pending);

/// Registers in flight, sorted and each once.
type State = Vec<Entry>;

/// The register file of a key.
fn file_of(k: u8) -> RegFile {
    match k {
        0 => RegFile::Sgpr,
        1 => RegFile::Vgpr,
        _ => RegFile::Agpr,
    }
}

fn key(file: RegFile) -> Option<u8> {
    match file {
        RegFile::Sgpr => Some(0),
        RegFile::Vgpr => Some(1),
        RegFile::Agpr => Some(2),
        RegFile::Ttmp => None,
    }
}

/// The pending of a register reached both ways: the nearer retirement of each counter.
fn merge(pa: Pending, pb: Pending) -> Pending {
    let vm = match (pa.vm, pb.vm) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    let lgkm = match (pa.lgkm, pb.lgkm) {
        (Some(Lgkm::Smem), _) | (_, Some(Lgkm::Smem)) => Some(Lgkm::Smem),
        (Some(Lgkm::Ordered(x)), Some(Lgkm::Ordered(y))) => Some(Lgkm::Ordered(x.min(y))),
        (x, y) => x.or(y),
    };
    Pending { vm, lgkm }
}

/// Joins `b` into `a`; whether `a` changed.
fn join(a: &mut State, b: &State) -> bool {
    if b.is_empty() {
        return false;
    }
    if a.is_empty() {
        a.clone_from(b);
        return true;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut changed = false;
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(ka, pa)), Some(&(kb, pb))) if ka == kb => {
                let new = merge(pa, pb);
                changed |= new != pa;
                out.push((ka, new));
                i += 1;
                j += 1;
            }
            (Some(&x), Some(&(kb, _))) if x.0 < kb => {
                out.push(x);
                i += 1;
            }
            (Some(&x), None) => {
                out.push(x);
                i += 1;
            }
            (_, Some(&y)) => {
                out.push(y);
                changed = true;
                j += 1;
            }
            (None, None) => unreachable!("the loop runs while either has more"),
        }
    }
    if changed {
        *a = out;
    }
    changed
}

fn find(state: &State, k: (u8, u16)) -> Result<usize, usize> {
    state.binary_search_by_key(&k, |&(x, _)| x)
}

/// Applies one original instruction to the state.
fn transfer(state: &mut State, insn: &Instruction) {
    if insn.op == Opcode::S_WAITCNT {
        let (vm, lg) = waitcnt_fields((insn.words[0] & 0xFFFF) as u16);
        state.retain_mut(|(_, p)| {
            if p.vm.is_some_and(|n| n >= vm) {
                p.vm = None;
            }
            match p.lgkm {
                Some(Lgkm::Smem) if lg == 0 => p.lgkm = None,
                Some(Lgkm::Ordered(n)) if n >= lg => p.lgkm = None,
                _ => {}
            }
            p.vm.is_some() || p.lgkm.is_some()
        });
        return;
    }
    // Registers the instruction overwrites itself are no longer pending from
    // older operations (a VALU write would be a hazard the compiler avoided).
    let c = insn.counters();
    let smem = insn.encoding == Encoding::Smem;
    if c.vm {
        for (_, p) in state.iter_mut() {
            if let Some(n) = p.vm.as_mut() {
                *n = n.saturating_add(1).min(VMCNT_MAX);
            }
        }
    }
    if c.lgkm && !smem {
        for (_, p) in state.iter_mut() {
            if let Some(Lgkm::Ordered(n)) = p.lgkm.as_mut() {
                *n = n.saturating_add(1).min(LGKMCNT_MAX);
            }
        }
    }
    let memory = c.vm || c.lgkm;
    for r in insn.reg_writes() {
        let Some(k) = key(r.file) else { continue };
        for i in 0..u16::from(r.count) {
            if memory {
                let p = Pending {
                    vm: c.vm.then_some(0),
                    lgkm: c.lgkm.then_some(if smem { Lgkm::Smem } else { Lgkm::Ordered(0) }),
                };
                match find(state, (k, r.first + i)) {
                    Ok(at) => state[at].1 = p,
                    Err(at) => state.insert(at, ((k, r.first + i), p)),
                }
            } else if let Ok(at) = find(state, (k, r.first + i)) {
                state.remove(at);
            }
        }
    }
}

/// In-flight state before and after each instruction of a kernel.
#[derive(Debug, Clone)]
pub struct WaitAnalysis {
    before: Vec<State>,
    after: Vec<State>,
}

impl WaitAnalysis {
    /// Runs the pass to a fixed point over `instrs` (program order; branch
    /// targets resolved by address; leaving the kernel ends a path).
    pub fn run(instrs: &[DecodedInstr]) -> WaitAnalysis {
        let n = instrs.len();
        let index_of = |addr: u64| instrs.binary_search_by_key(&addr, |d| d.addr).ok();
        let mut before: Vec<State> = vec![State::new(); n];
        let mut after: Vec<State> = vec![State::new(); n];
        let mut work: Vec<usize> = (0..n).rev().collect();
        let mut queued = vec![true; n];
        while let Some(i) = work.pop() {
            queued[i] = false;
            after[i].clone_from(&before[i]);
            transfer(&mut after[i], &instrs[i].insn);
            let next = (i + 1 < n).then_some(i + 1);
            let (first, second) = match instrs[i].insn.control_flow(instrs[i].addr) {
                ControlFlow::Branch { target } => (index_of(target), None),
                ControlFlow::CondBranch { target } => (index_of(target), next),
                ControlFlow::End | ControlFlow::Trap => (None, None),
                ControlFlow::Indirect if instrs[i].insn.op != Opcode::S_SWAPPC_B64 => (None, None),
                _ => (next, None),
            };
            for j in first.into_iter().chain(second) {
                if join(&mut before[j], &after[i]) && !queued[j] {
                    queued[j] = true;
                    work.push(j);
                }
            }
        }
        WaitAnalysis { before, after }
    }

    /// The registers a memory operation may still write before (`after ==
    /// false`) or after instruction `index`.
    pub fn in_flight(&self, index: usize, after: bool) -> impl Iterator<Item = (RegFile, u16)> + '_ {
        let state = if after { self.after.get(index) } else { self.before.get(index) };
        state.into_iter().flat_map(|s| s.iter().map(|&((k, r), _)| (file_of(k), r)))
    }

    /// Per instruction, the registers a memory operation may still write
    /// before or after it (a state equal to the one before it read once).
    pub fn in_flight_around(&self) -> Vec<RegSet> {
        let same_keys = |x: &[Entry], y: &[Entry]| x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.0 == b.0);
        // The last state read, and its registers (none, to begin with).
        let mut last: (&[Entry], RegSet) = (&[], RegSet::default());
        let mut out = Vec::with_capacity(self.before.len());
        for (b, a) in self.before.iter().zip(&self.after) {
            let mut m = RegSet::default();
            for s in [b, a] {
                if !same_keys(last.0, s) {
                    let mut set = RegSet::default();
                    s.iter().for_each(|&((k, r), _)| set.insert(file_of(k), r));
                    last = (s, set);
                }
                m.union(&last.1);
            }
            out.push(m);
        }
        out
    }

    /// The weakest wait (vmcnt, lgkmcnt) that makes reading `regs` safe
    /// before (`after == false`) or after instruction `index`; None if no wait is needed.
    pub fn wait_for(&self, index: usize, after: bool, regs: &[(RegFile, u16)]) -> Option<(u8, u8)> {
        let state = if after { self.after.get(index)? } else { self.before.get(index)? };
        let mut vm = VMCNT_MAX;
        let mut lg = LGKMCNT_MAX;
        let mut any = false;
        for &(f, r) in regs {
            let Some(p) = key(f).and_then(|k| find(state, (k, r)).ok()).map(|at| &state[at].1) else { continue };
            any = true;
            if let Some(n) = p.vm {
                vm = vm.min(n);
            }
            match p.lgkm {
                Some(Lgkm::Smem) => lg = 0,
                Some(Lgkm::Ordered(n)) => lg = lg.min(n),
                None => {}
            }
        }
        any.then_some((vm, lg))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use xfpx_amd_isa::Target;

    /// `words` decoded for gfx90a from 0x1000 (the liveness tests use it too).
    pub(in crate::rewrite) fn instrs(words: &[u32]) -> Vec<DecodedInstr> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::disassemble(Target::Gfx90a, &bytes, 0x1000)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("decodes") })
            .collect()
    }

    #[test]
    fn waitcnt_immediates_match_the_documented_words() {
        assert_eq!(0xBF8C_0000u32 | u32::from(waitcnt_imm(17, 15)), 0xBF8C_4F71);
        assert_eq!(0xBF8C_0000u32 | u32::from(waitcnt_imm(63, 0)), 0xBF8C_C07F);
        assert_eq!(waitcnt_fields(waitcnt_imm(17, 3)), (17, 3));
    }

    #[test]
    fn weakest_wait_follows_vector_order_and_scalar_rules() {
        // global_load_dword v1, v[2:3], off ; global_load_dword v4, v[2:3], off
        // s_load_dword s5, s[0:1], 0x0 ; s_waitcnt vmcnt(1) ; s_endpgm
        let code = instrs(&[
            0xDC50_8000,
            0x017F_0002,
            0xDC50_8000,
            0x047F_0002,
            0xC002_0140,
            0x0000_0000,
            0xBF8C_0F71,
            0xBF81_0000,
        ]);
        assert_eq!(code.len(), 5);
        let w = WaitAnalysis::run(&code);
        // Before the s_load: v1 needs vmcnt(1) (one newer vector op), v4 vmcnt(0).
        assert_eq!(w.wait_for(2, false, &[(RegFile::Vgpr, 1)]), Some((1, LGKMCNT_MAX)));
        assert_eq!(w.wait_for(2, false, &[(RegFile::Vgpr, 4)]), Some((0, LGKMCNT_MAX)));
        // After the s_load, s5 needs lgkmcnt(0); after vmcnt(1), v1 is safe.
        assert_eq!(w.wait_for(2, true, &[(RegFile::Sgpr, 5)]), Some((VMCNT_MAX, 0)));
        assert_eq!(w.wait_for(3, true, &[(RegFile::Vgpr, 1)]), None);
        assert_eq!(w.wait_for(3, true, &[(RegFile::Vgpr, 4)]), Some((0, LGKMCNT_MAX)));
        assert_eq!(w.wait_for(0, false, &[(RegFile::Vgpr, 1)]), None);
    }
}
