//! The memory-timing model: a load's destination registers stay "in flight"
//! from issue until an `s_waitcnt` retires the load. Vector memory (vmcnt)
//! retires in issue order; LDS/GDS (lgkmcnt) in order among themselves;
//! scalar memory loads may complete out of order, so only `lgkmcnt(0)` is
//! taken to retire them; FLAT counts in both counters. Reading or
//! overwriting an in-flight register is a [`Hazard`], and so is reading the
//! result of a matrix instruction too soon (tracked by the wave).

/// A register of the wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    Sgpr(u16),
    /// Register n of the vector file (gfx90a+: the unified file, where
    /// AGPR k of a load is register ACCUM_OFFSET + k).
    Vgpr(u16),
    /// An accumulation register (AGPR), by its index in the AGPR file.
    Agpr(u16),
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reg::Sgpr(n) => write!(f, "s{n}"),
            Reg::Vgpr(n) => write!(f, "v{n}"),
            Reg::Agpr(n) => write!(f, "a{n}"),
        }
    }
}

/// What went wrong with an in-flight register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    /// Read before the load writing it was waited for.
    ReadInFlight,
    /// Written while a load to it was still in flight (the load may land later).
    WriteInFlight,
    /// A result of the matrix instruction at `issued_pc` read before the
    /// wait states that instruction needs (`s_nop` or independent
    /// instructions) have passed.
    MatrixResultNotReady,
}

/// A memory-ordering bug found while running: at `pc`, `reg` was used while
/// the memory operation issued at `issued_pc` had not been waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hazard {
    pub pc: u64,
    pub reg: Reg,
    pub kind: HazardKind,
    pub issued_pc: u64,
}

impl std::fmt::Display for Hazard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            HazardKind::ReadInFlight => "reads",
            HazardKind::WriteInFlight => "overwrites",
            HazardKind::MatrixResultNotReady => {
                return write!(
                    f,
                    "pc {:#x} reads {} too soon after the matrix instruction at pc {:#x} (missing wait states)",
                    self.pc, self.reg, self.issued_pc
                )
            }
        };
        write!(
            f,
            "pc {:#x} {what} {} while the load at pc {:#x} is in flight (missing s_waitcnt)",
            self.pc, self.reg, self.issued_pc
        )
    }
}

/// Which counters an operation counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Global/scratch (vmcnt).
    Vm,
    /// LDS (lgkmcnt, in order).
    Lds,
    /// Scalar memory (lgkmcnt, out of order).
    Smem,
    /// FLAT: vmcnt and lgkmcnt.
    Flat,
}

#[derive(Debug, Clone)]
struct InFlight {
    counter: Counter,
    pc: u64,
    regs: Vec<Reg>,
    vm_done: bool,
    lgkm_done: bool,
}

/// Outstanding memory operations of one wave.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    ops: Vec<InFlight>,
    sgpr_mask: u128,
    vgpr_mask: [u64; 8],
}

impl Timing {
    pub fn is_idle(&self) -> bool {
        self.ops.is_empty()
    }

    /// Notes an issued operation whose results land in `regs`.
    pub fn issue(&mut self, counter: Counter, pc: u64, regs: Vec<Reg>) {
        let (vm_done, lgkm_done) = match counter {
            Counter::Vm => (false, true),
            Counter::Lds | Counter::Smem => (true, false),
            Counter::Flat => (false, false),
        };
        for r in &regs {
            self.mark(*r);
        }
        self.ops.push(InFlight { counter, pc, regs, vm_done, lgkm_done });
    }

    fn mark(&mut self, r: Reg) {
        match r {
            Reg::Sgpr(n) if n < 128 => self.sgpr_mask |= 1 << n,
            Reg::Vgpr(n) if n < 512 => self.vgpr_mask[n as usize / 64] |= 1 << (n % 64),
            _ => {}
        }
    }

    /// The in-flight operation writing `r`, if any.
    pub fn in_flight(&self, r: Reg) -> Option<u64> {
        let hit = match r {
            Reg::Sgpr(n) => n < 128 && self.sgpr_mask & (1 << n) != 0,
            Reg::Vgpr(n) => n < 512 && self.vgpr_mask[n as usize / 64] & (1 << (n % 64)) != 0,
            Reg::Agpr(_) => false,
        };
        if !hit {
            return None;
        }
        self.ops.iter().rev().find(|o| o.regs.contains(&r)).map(|o| o.pc)
    }

    /// `s_waitcnt` with the decoded counts (vmcnt, lgkmcnt).
    pub fn wait(&mut self, vmcnt: u32, lgkmcnt: u32) {
        // Vector memory retires in order.
        let vm: Vec<usize> = (0..self.ops.len()).filter(|&i| !self.ops[i].vm_done).collect();
        if vm.len() > vmcnt as usize {
            for &i in &vm[..vm.len() - vmcnt as usize] {
                self.ops[i].vm_done = true;
            }
        }
        let lg: Vec<usize> = (0..self.ops.len()).filter(|&i| !self.ops[i].lgkm_done).collect();
        if lg.len() > lgkmcnt as usize {
            if lgkmcnt == 0 {
                for &i in &lg {
                    self.ops[i].lgkm_done = true;
                }
            } else if lg.iter().all(|&i| self.ops[i].counter != Counter::Smem) {
                for &i in &lg[..lg.len() - lgkmcnt as usize] {
                    self.ops[i].lgkm_done = true;
                }
            }
            // With scalar loads outstanding, a non-zero lgkmcnt says nothing
            // about which operation completed: nothing is retired.
        }
        self.ops.retain(|o| !(o.vm_done && o.lgkm_done));
        self.sgpr_mask = 0;
        self.vgpr_mask = [0; 8];
        let regs: Vec<Reg> = self.ops.iter().flat_map(|o| o.regs.iter().copied()).collect();
        for r in regs {
            self.mark(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_loads_retire_in_order_scalar_only_at_zero() {
        let mut t = Timing::default();
        t.issue(Counter::Vm, 0x10, vec![Reg::Vgpr(1)]);
        t.issue(Counter::Vm, 0x18, vec![Reg::Vgpr(2)]);
        t.wait(1, 15);
        assert_eq!(t.in_flight(Reg::Vgpr(1)), None);
        assert_eq!(t.in_flight(Reg::Vgpr(2)), Some(0x18));
        t.issue(Counter::Smem, 0x20, vec![Reg::Sgpr(4)]);
        t.issue(Counter::Smem, 0x28, vec![Reg::Sgpr(5)]);
        t.wait(63, 1);
        assert_eq!(t.in_flight(Reg::Sgpr(4)), Some(0x20));
        t.wait(63, 0);
        assert_eq!(t.in_flight(Reg::Sgpr(4)), None);
        assert_eq!(t.in_flight(Reg::Vgpr(2)), Some(0x18));
        t.wait(0, 0);
        assert!(t.is_idle());
    }

    #[test]
    fn lds_retires_in_order() {
        let mut t = Timing::default();
        t.issue(Counter::Lds, 1, vec![Reg::Vgpr(3)]);
        t.issue(Counter::Lds, 2, vec![Reg::Vgpr(4)]);
        t.wait(63, 1);
        assert_eq!(t.in_flight(Reg::Vgpr(3)), None);
        assert_eq!(t.in_flight(Reg::Vgpr(4)), Some(2));
    }
}
