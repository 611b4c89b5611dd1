//! The counters tool on NVIDIA: its plan over a SASS kernel (mix classes
//! from [`crate::sass::mix`]) and the lowering of its `Count` probes to
//! calls of `xfpx_count_region` / `xfpx_count_guard` (declared in
//! `abi.def`), and the host-side mirror of the device count table.
//!
//! Each counted launch has a table of its own, its address the launch's
//! per-launch value; a function's slots start at a base the run gives it
//! ([`NvbitLowering::count_slots_from`]): called functions get bases
//! across the program, and a kernel's slots follow those of every
//! function called so far, so one table holds a kernel and its callees.
//!
//! A region's call can run anywhere in its region (the active mask is the
//! same throughout), so when the region ends in a conditional branch the
//! call moves to the latest unguarded point before it at which the
//! branch's guard predicate already holds its final value; the device then
//! sees each lane's guard and counts executions that split the warp. A
//! branch with no such point (its guard is written by a guarded
//! instruction of the region, or every instruction is guarded) or guarded
//! by a uniform predicate (which cannot split a warp) is not measured.

use crate::abi;
use crate::dump::render_kernel;
use crate::lower::NvbitLowering;
use crate::lower::{CallArg, CallInsertion, LowerError};
use crate::sass::mix::mix_class;
use crate::sass::parse::RegKind;
use crate::sass::SassKernel;
use std::fmt::Write as _;
use xfpx_common::config::OutputFormat;
use xfpx_common::count_tool::{CountPlan, Counters};
use xfpx_common::counters::{MixClass, SlotCount};
use xfpx_common::lower::Lowering;
use xfpx_common::observe::{Block, Cfg, CfgError};
use xfpx_common::plan::verify;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{CounterId, CounterKind, Probe, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{RegFile, RegRange};

/// Lanes per warp on NVIDIA GPUs.
pub const WARP_SIZE: u32 = 32;

/// Meta bits of `xfpx_count_region` (mirrors `XFPX_COUNT_*` in xfpx_layout.h).
pub const COUNT_BRANCH: u32 = 1;
pub const COUNT_PRED_SHIFT: u32 = 1;
pub const COUNT_NEGATED: u32 = 1 << 4;

/// Bytes of the count table's header and of one slot (`XfpxCountTable`,
/// `XfpxCountSlot`).
pub const TABLE_HEADER_BYTES: usize = 16;
pub const SLOT_BYTES: usize = 32;

/// The counters tool's plan for `kernel`. A kernel whose control flow is
/// not known (a branch to a label or register) is counted one instruction
/// per region, which is exact whatever the targets are, with no branch
/// measured for divergence; the reason is returned with the plan.
pub fn plan_counts(kernel: &SassKernel, sites: &mut SiteTable) -> (CountPlan, Option<CfgError>) {
    let mix: Vec<MixClass> =
        kernel.instrs.iter().zip(&kernel.view.instrs).map(|(s, v)| mix_class(s, v.class)).collect();
    let (cfg, unknown) = match kernel.cfg() {
        Ok(cfg) => (cfg, None),
        Err(e) => (per_instruction(kernel.view.instrs.len()), Some(e)),
    };
    (Counters { warp_size: WARP_SIZE }.plan(&kernel.view, &cfg, &mix, sites), unknown)
}

/// A graph of one block per instruction, with no edges.
fn per_instruction(n: usize) -> Cfg {
    let blocks = (0..n)
        .map(|i| Block { start: i, end: i + 1, succs: Vec::new(), opaque_exit: true, call_writes: None })
        .collect();
    Cfg { blocks, block_of: (0..n).collect() }
}

/// The call of one `Count` probe; the function's slots start at `base`
/// in its launch's table (the per-launch value).
pub fn count_call(
    kernel: &SassKernel,
    plan: &Plan,
    index: usize,
    p: &Probe,
    counter: CounterId,
    base: u32,
) -> Result<CallInsertion, LowerError> {
    let def = plan
        .counters
        .get(counter.0 as usize)
        .ok_or_else(|| LowerError::Unsupported { probe: index, what: "an undeclared counter".into() })?;
    let slot = u64::from(base) + u64::from(counter.0);
    match def.kind {
        CounterKind::Region { branch, .. } => {
            let (instr, when, meta) = match branch.and_then(|b| branch_point(kernel, p.instr, b)) {
                Some((instr, when, meta)) => (instr, when, meta),
                None => (p.instr, p.when, 0),
            };
            Ok(CallInsertion {
                instr,
                when,
                function: abi::COUNT_REGION.into(),
                args: vec![
                    CallArg::Preds,
                    CallArg::Const64 { value: slot | (u64::from(meta) << 32) },
                    CallArg::LaunchVal64,
                ],
            })
        }
        CounterKind::GuardHeld { .. } => Ok(CallInsertion {
            instr: p.instr,
            when: p.when,
            function: abi::COUNT_GUARD.into(),
            args: vec![CallArg::GuardPred, CallArg::Const64 { value: slot }, CallArg::LaunchVal64],
        }),
        _ => Err(LowerError::Unsupported { probe: index, what: "a per-instruction counter".into() }),
    }
}

/// Where the region call of a region headed at `head` and closed by the
/// conditional branch `branch` sees the branch's final guard, and the
/// meta bits naming that guard (see the module doc).
fn branch_point(kernel: &SassKernel, head: u32, branch: u32) -> Option<(u32, When, u32)> {
    let guard = kernel.instrs.get(branch as usize)?.guard.as_ref()?;
    let p = &guard.pred;
    if p.kind != RegKind::P || p.is_zero() {
        return None;
    }
    let pred = RegRange::new(RegFile::Predicate, p.num, 1);
    let meta = COUNT_BRANCH | (u32::from(p.num) << COUNT_PRED_SHIFT) | if p.negated { COUNT_NEGATED } else { 0 };
    for j in (head..branch).rev() {
        let ins = &kernel.view.instrs[j as usize];
        if !ins.guarded && !ins.control.leaves() {
            return Some((j, When::After, meta));
        }
        if ins.writes(&pred) {
            return None;
        }
    }
    None
}

/// The counters tool's dump of one kernel: the instructions with their
/// calls, the plan, and a line per region (instructions, mix, what its
/// call measures); the regions' instructions sum to the kernel's.
pub fn dump_counts(kernel: &SassKernel, sites: &mut SiteTable, format: OutputFormat) -> Result<String, String> {
    let (cp, unknown) = plan_counts(kernel, sites);
    verify(&cp.plan, &kernel.view, sites).map_err(|e| format!("internal: counting plan rejected: {e}"))?;
    let calls = NvbitLowering::new(kernel, 0)
        .and_then(|mut l| l.lower(&kernel.view, &cp.plan, sites))
        .map_err(|e| e.to_string())?;
    let mut out = render_kernel(kernel, &cp.plan, &calls, format);
    if format == OutputFormat::Text {
        let region_calls: Vec<&CallInsertion> = calls.iter().filter(|c| c.function == abi::COUNT_REGION).collect();
        let measured = region_calls
            .iter()
            .filter(|c| matches!(c.args.get(1), Some(CallArg::Const64 { value }) if (value >> 32) as u32 & COUNT_BRANCH != 0))
            .count();
        let branches =
            cp.plan.counters.iter().filter(|d| matches!(d.kind, CounterKind::Region { branch: Some(_), .. })).count();
        let _ = writeln!(
            out,
            "counters: {} regions covering {} instructions, {} guard counts, {} of {} conditional branches measured for divergence, {} regions with every instruction guarded",
            cp.layout.regions.len(),
            cp.layout.instructions(),
            cp.layout.guards.len(),
            measured,
            branches,
            cp.guarded_heads.len()
        );
        if let Some(e) = unknown {
            let _ = writeln!(out, "counters: control flow unknown ({e}): one region per instruction");
        }
        for (r, shape) in cp.layout.regions.iter().enumerate() {
            let mix: Vec<String> = shape.mix.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let merge = shape.reconverges_into.map(|n| format!(", merges into region {n}")).unwrap_or_default();
            let _ =
                writeln!(out, "  region {r}: instructions {}..{} ({}){merge}", shape.first, shape.end, mix.join(", "));
        }
    }
    Ok(out)
}

/// The header of one launch's count table (`XfpxCountTable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableShape {
    /// Slots per window.
    pub slots: u32,
    pub windows: u32,
    /// Thread blocks per window (0: one window).
    pub window_blocks: u32,
}

impl TableShape {
    /// The table of a launch of `blocks` thread blocks with `slots` slots
    /// per window and `window_blocks` blocks per window.
    pub fn new(slots: u32, blocks: u64, window_blocks: u32) -> TableShape {
        let windows = xfpx_common::counters::window_count(blocks, window_blocks);
        TableShape { slots, windows, window_blocks: if windows == 1 { 0 } else { window_blocks } }
    }

    /// Bytes of the table: header and `windows * slots` slots.
    pub fn bytes(&self) -> usize {
        TABLE_HEADER_BYTES + self.windows as usize * self.slots as usize * SLOT_BYTES
    }

    /// The header as the device reads it (little-endian).
    pub fn header(&self) -> [u8; TABLE_HEADER_BYTES] {
        let mut h = [0u8; TABLE_HEADER_BYTES];
        for (i, v) in [self.slots, self.windows, self.window_blocks, 0].into_iter().enumerate() {
            h[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// The header of a table read back.
    pub fn parse(table: &[u8]) -> Option<TableShape> {
        let word = |i: usize| table.get(4 * i..4 * i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Some(TableShape { slots: word(0)?, windows: word(1)?, window_blocks: word(2)? })
    }
}

/// Read a count table's slots for one window from its bytes as the
/// device wrote them (little-endian `XfpxCountSlot`s after the header).
pub fn read_window(table: &[u8], slots: usize, window: usize) -> Option<Vec<SlotCount>> {
    let word = |at: usize| table.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    (0..slots)
        .map(|s| {
            let at = TABLE_HEADER_BYTES + (window * slots + s) * SLOT_BYTES;
            Some(SlotCount { warps: word(at)?, lanes: word(at + 8)?, divergent: word(at + 16)? })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sass::{build_kernel, parse_listing};

    const LISTING: &str = "\tFunction : k\n\
        /*0000*/  S2R R0, SR_TID.X ;\n\
        /*0010*/  ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n\
        /*0020*/  @P0 BRA 0x60 ;\n\
        /*0030*/  FADD R1, R2, R3 ;\n\
        /*0040*/  @!P0 STG.E desc[UR4][R4.64], R1 ;\n\
        /*0050*/  BSYNC B0 ;\n\
        /*0060*/  EXIT ;\n";

    #[test]
    fn regions_lower_to_one_call_each_and_branches_see_their_guard() {
        let k = build_kernel(&parse_listing(LISTING).unwrap()[0]);
        let mut sites = SiteTable::new();
        let (cp, unknown) = plan_counts(&k, &mut sites);
        assert!(unknown.is_none());
        verify(&cp.plan, &k.view, &sites).unwrap();
        let calls = NvbitLowering::new(&k, 0x1000).unwrap().lower(&k.view, &cp.plan, &sites).unwrap();
        let regions: Vec<&CallInsertion> = calls.iter().filter(|c| c.function == abi::COUNT_REGION).collect();
        assert_eq!(regions.len(), cp.layout.regions.len());
        assert_eq!(cp.layout.instructions(), k.view.instrs.len() as u64);
        // region 0 (0..3) ends in @P0 BRA: its call goes after the ISETP
        assert_eq!((regions[0].instr, regions[0].when), (1, When::After));
        assert_eq!(regions[0].args[1], CallArg::Const64 { value: u64::from(COUNT_BRANCH) << 32 });
        assert_eq!(regions[0].args[2], CallArg::LaunchVal64);
        // the guarded store has its own guard count
        let guards: Vec<u32> = calls.iter().filter(|c| c.function == abi::COUNT_GUARD).map(|c| c.instr).collect();
        assert_eq!(guards, vec![2, 4]);
        // table bytes read back per window
        let mut bytes = vec![0u8; TABLE_HEADER_BYTES + 2 * cp.layout.slots() * SLOT_BYTES];
        let at = TABLE_HEADER_BYTES + (cp.layout.slots() + 1) * SLOT_BYTES;
        bytes[at..at + 8].copy_from_slice(&7u64.to_le_bytes());
        let w1 = read_window(&bytes, cp.layout.slots(), 1).unwrap();
        assert_eq!(w1[1].warps, 7);
        assert!(read_window(&bytes, cp.layout.slots(), 2).is_none());
        // slots from a base: the same calls, moved up
        let based = NvbitLowering::new(&k, 0).unwrap().count_slots_from(40).lower(&k.view, &cp.plan, &sites).unwrap();
        for (a, b) in calls.iter().zip(&based) {
            let slot = |c: &CallInsertion| match c.args[1] {
                CallArg::Const64 { value } => value,
                _ => panic!("slot"),
            };
            assert_eq!(slot(b), slot(a) + 40);
        }
    }

    #[test]
    fn table_shapes_match_the_device_layout() {
        // XfpxCountTable: u32 slots, windows, window_blocks, reserved; then
        // XfpxCountSlot { u64 warps, lanes, divergent, reserved }
        let t = TableShape::new(3, 100, 16);
        assert_eq!((t.windows, t.window_blocks), (7, 16));
        assert_eq!(t.bytes(), 16 + 7 * 3 * 32);
        assert_eq!(&t.header()[..12], &[3, 0, 0, 0, 7, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(TableShape::parse(&t.header()), Some(t));
        // a launch that fits one window is one window
        assert_eq!(TableShape::new(3, 10, 16), TableShape { slots: 3, windows: 1, window_blocks: 0 });
        assert_eq!(TableShape::parse(&[1, 2]), None);
    }
}
