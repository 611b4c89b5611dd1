//! Where a warpgroup matrix multiply may be in flight (sm_90 `HGMMA` and
//! its integer and 8-bit kin): such an instruction writes its accumulator
//! registers asynchronously, until a `WARPGROUP.DEPBAR.LE gsb0, 0x0`
//! waits for every group issued. Reading or writing those registers before
//! that wait is undefined, and an NVBit call does both (it saves and
//! restores the registers around the device function), so no call may run
//! where a group may still be in flight. The answer is per instruction,
//! over the kernel's control flow: in flight on some path from the entry.

use super::opcodes::WARPGROUP_MMA;
use super::parse::{SassInstr, SassOperand};
use super::view::SassKernel;
use xfpx_common::probe::When;

/// Whether a warpgroup MMA may be in flight before and after each
/// instruction of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    before: Vec<bool>,
    after: Vec<bool>,
}

impl InFlight {
    /// The kernel's windows. A kernel without a warpgroup MMA has none; one
    /// whose control-flow graph cannot be built is taken to be in flight
    /// everywhere.
    pub fn of(kernel: &SassKernel) -> InFlight {
        let n = kernel.instrs.len();
        let none = InFlight { before: vec![false; n], after: vec![false; n] };
        if !kernel.instrs.iter().any(issues) {
            return none;
        }
        match kernel.cfg_with_unknown_exits() {
            Ok(cfg) => {
                let mut entry = vec![false; cfg.blocks.len()];
                let mut exit = vec![false; cfg.blocks.len()];
                let mut changed = true;
                while changed {
                    changed = false;
                    let anywhere = cfg.unknown_exits.iter().any(|&b| exit[b]);
                    for (b, block) in cfg.blocks.iter().enumerate() {
                        let mut state = entry[b] || anywhere;
                        for ins in &kernel.instrs[block.start..block.end] {
                            state = after(ins, state);
                        }
                        if state != exit[b] {
                            exit[b] = state;
                            changed = true;
                        }
                        if !state {
                            continue;
                        }
                        for &s in block.succs.iter().chain(block.callee.iter()) {
                            if !entry[s] {
                                entry[s] = true;
                                changed = true;
                            }
                        }
                    }
                }
                let anywhere = cfg.unknown_exits.iter().any(|&b| exit[b]);
                let mut windows = none;
                for (b, block) in cfg.blocks.iter().enumerate() {
                    let mut state = entry[b] || anywhere;
                    for i in block.start..block.end {
                        windows.before[i] = state;
                        state = after(&kernel.instrs[i], state);
                        windows.after[i] = state;
                    }
                }
                windows
            }
            Err(_) => InFlight { before: vec![true; n], after: vec![true; n] },
        }
    }

    /// Whether a call at instruction `instr`, `when` it runs, may find a
    /// warpgroup MMA in flight.
    pub fn at(&self, instr: u32, when: When) -> bool {
        let table = match when {
            When::Before => &self.before,
            When::After => &self.after,
        };
        table.get(instr as usize).copied().unwrap_or(false)
    }

    /// Whether any instruction is in such a window.
    pub fn any(&self) -> bool {
        self.before.iter().chain(&self.after).any(|w| *w)
    }
}

/// Whether `ins` issues a warpgroup MMA.
fn issues(ins: &SassInstr) -> bool {
    WARPGROUP_MMA.contains(&ins.opcode.as_str()) && !ins.never_executes()
}

/// Whether `ins` waits for every warpgroup MMA issued: an unguarded
/// `WARPGROUP.DEPBAR.LE gsb0, 0x0` (a count other than 0 leaves groups in
/// flight).
fn waits_for_all(ins: &SassInstr) -> bool {
    ins.opcode == "WARPGROUP"
        && !ins.is_guarded()
        && ins.modifiers.iter().any(|m| m == "DEPBAR")
        && matches!(ins.operands.last(), Some(SassOperand::ImmBits { bits: 0, .. }))
}

/// The state after `ins` from the state before it.
fn after(ins: &SassInstr, in_flight: bool) -> bool {
    if issues(ins) {
        true
    } else if waits_for_all(ins) {
        false
    } else {
        in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{LowerError, NvbitLowering};
    use crate::sass::{build_kernel, parse_listing};
    use xfpx_common::lower::Lowering;
    use xfpx_common::site::SiteTable;
    use xfpx_common::tool::{Detector, Tool};

    /// Two groups issued, a compare and a branch while they are in flight,
    /// a wait for all of them, a join reached from inside the window, a
    /// wait that leaves one group in flight, and a last full wait.
    const LISTING: &str = "\tFunction : wg\n\
        /*0000*/  WARPGROUP.ARRIVE ;\n\
        /*0010*/  HGMMA.64x128x16.F32 R24, gdesc[UR16].tnspA, R24, !UP1 ;\n\
        /*0020*/  HGMMA.64x128x16.F32 R24, gdesc[UR16].tnspA, R24, gsb0 ;\n\
        /*0030*/  FSETP.EQ.AND P5, PT, RZ, R18, PT ;\n\
        /*0040*/  @P0 BRA 0x70 ;\n\
        /*0050*/  WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n\
        /*0060*/  FFMA R24, R17, R24, RZ ;\n\
        /*0070*/  FADD R30, R2, R3 ;\n\
        /*0080*/  WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n\
        /*0090*/  FMUL R31, R2, R3 ;\n\
        /*00a0*/  WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n\
        /*00b0*/  FMUL R32, R2, R3 ;\n\
        /*00c0*/  EXIT ;\n";

    fn kernel() -> SassKernel {
        build_kernel(&parse_listing(LISTING).expect("parses")[0])
    }

    #[test]
    fn windows_open_at_an_mma_and_close_at_a_wait_for_every_group() {
        let w = InFlight::of(&kernel());
        let before: Vec<bool> = (0..13).map(|i| w.at(i, When::Before)).collect();
        let after: Vec<bool> = (0..13).map(|i| w.at(i, When::After)).collect();
        let (t, f) = (true, false);
        assert_eq!(before, [f, f, t, t, t, t, f, t, t, t, t, f, f]);
        assert_eq!(after, [f, t, t, t, t, f, f, t, t, t, f, f, f]);
        assert!(w.any());
        let plain = parse_listing("\tFunction : p\n/*0000*/ FADD R1, R2, R3 ;\n/*0010*/ EXIT ;\n").expect("parses");
        assert!(!InFlight::of(&build_kernel(&plain[0])).any());
    }

    #[test]
    fn checks_in_a_window_are_left_out_and_counts_refused() {
        let k = kernel();
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&k.view, &mut sites);
        let planned_at: Vec<u32> = plan.probes.iter().map(|p| p.instr).collect();
        for i in [3, 6, 7, 9, 11] {
            assert!(planned_at.contains(&i), "instruction {i} has a probe: {planned_at:?}");
        }
        let mut lowering = NvbitLowering::new(&k, 0x1000).expect("abi");
        let calls = lowering.lower(&k.view, &plan, &sites).expect("lowers");
        let at: Vec<u32> = calls.iter().map(|c| c.instr).collect();
        assert!(at.contains(&6) && at.contains(&11), "calls after the waits are kept: {at:?}");
        assert!(!at.iter().any(|i| [3, 7, 9].contains(i)), "no call in a window: {at:?}");
        assert!(lowering.left_out_in_flight() >= 3, "{}", lowering.left_out_in_flight());

        let (cp, _) = crate::counts::plan_counts(&k, &mut sites);
        let counted = NvbitLowering::new(&k, 0).expect("abi").lower(&k.view, &cp.plan, &sites);
        assert!(matches!(counted, Err(LowerError::CountInFlight { calls }) if calls > 0), "{counted:?}");
    }
}
