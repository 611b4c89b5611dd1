//! The counters tool on NVIDIA: its plan over a SASS kernel (mix classes
//! from [`crate::sass::mix`]) and the lowering of its `Count` probes to
//! calls of `xfpx_count_region` / `xfpx_count_guard` /
//! `xfpx_count_guards` / `xfpx_count_region_guards` (declared in
//! `abi.def`; guards counted together, and with their region, where their
//! predicates hold their values, [`merge_guard_counts`]), and the
//! host-side mirror of the device count table.
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
use crate::record::{META_GUARD_NEGATED, META_GUARD_SHIFT};
use crate::sass::mix::mix_class;
use crate::sass::parse::RegKind;
use crate::sass::SassKernel;
use std::collections::HashMap;
use std::fmt::Write as _;
use xfpx_common::cfg::{Block, Cfg, CfgError};
use xfpx_common::config::OutputFormat;
use xfpx_common::count_tool::{CountPlan, Counters};
use xfpx_common::counters::{MixClass, SlotCount};
use xfpx_common::lower::Lowering;
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
/// The region's call also counts its branch's guard (the lanes where it
/// held), into the slot `COUNT_HELD_SHIFT` bits up the meta say, counted
/// from the region's slot.
pub const COUNT_HELD: u32 = 1 << 5;
pub const COUNT_HELD_SHIFT: u32 = 6;

/// Bytes of the count table's header and of one slot (`XfpxCountTable`,
/// `XfpxCountSlot`).
pub const TABLE_HEADER_BYTES: usize = 32;
pub const SLOT_BYTES: usize = 32;

/// Most copies (shards) of a table's slots: a warp counts into copy
/// `%smid % shards`, so warps of different SMs counting the same slot add
/// to different memory instead of queueing on one address (on an H200, a
/// loop counted by every warp ran 5.3x faster with 8 or more copies 4 KiB
/// apart than with one).
pub const MAX_SHARDS: u32 = 16;
/// Copies start this many slots apart (4 KiB): closer copies share the
/// memory that serialises the additions.
pub const SHARD_ALIGN_SLOTS: u64 = 128;
/// Fewer copies are made where they would take a table past this size.
pub const SHARDED_TABLE_BYTES: usize = 16 << 20;

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
        .map(|i| Block { start: i, end: i + 1, succs: Vec::new(), opaque_exit: true, call_writes: None, callee: None })
        .collect();
    Cfg { blocks, block_of: (0..n).collect(), unknown_exits: Vec::new() }
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

/// Most guards one `xfpx_count_guards` call counts.
pub const GUARDS_PER_CALL: usize = 7;

/// Guard counts together: the lanes whose guard held at a guarded
/// instruction are the lanes whose guard predicate holds at any point of
/// its count region (one active mask throughout) where the predicate has
/// the value it has there: after its last write before the instruction,
/// up to the instruction that next writes it. Consecutive guard counts of
/// a region (consecutive slots) whose spans share an unguarded
/// instruction become one `xfpx_count_guards` call before the latest such
/// instruction, reading every lane's predicates, for up to
/// [`GUARDS_PER_CALL`] guards. A guard that is not a per-lane predicate
/// register, and a guard no other joins, keeps its own call. A region
/// call that reads no branch moves to the place of its region's first
/// group with a place and counts the region and the group in one
/// `xfpx_count_region_guards` call. The guard of
/// a branch whose region's call already reads it (to count divergence)
/// is counted by that call ([`COUNT_HELD`]). Slots count from `base`.
pub fn merge_guard_counts(
    kernel: &SassKernel,
    plan: &Plan,
    base: u32,
    mut calls: Vec<CallInsertion>,
) -> Vec<CallInsertion> {
    let view = &kernel.view;
    let n = view.instrs.len();
    held_by_region_calls(plan, base, &mut calls);
    let mut region_of: Vec<Option<(usize, usize)>> = vec![None; n];
    for d in &plan.counters {
        if let CounterKind::Region { first, end, .. } = d.kind {
            for r in region_of.iter_mut().take(end as usize).skip(first as usize) {
                *r = Some((first as usize, end as usize));
            }
        }
    }
    let writes = |j: usize, p: &RegRange| view.instrs[j].writes(p);
    let mut out: Vec<CallInsertion> = Vec::with_capacity(calls.len());
    // region calls free to move in their region (no branch to read), by
    // the region's first instruction: where in `out`
    let mut movable: HashMap<usize, usize> = HashMap::new();
    let mut group: Vec<GuardCount> = Vec::new();
    let flush = |out: &mut Vec<CallInsertion>, group: &mut Vec<GuardCount>, movable: &mut HashMap<usize, usize>| {
        let Some(first) = group.first() else { return };
        let mut spec = first.slot | (group.len() as u64) << 32;
        for (k, g) in group.iter().enumerate() {
            spec |= u64::from(g.pred) << (35 + 4 * k);
        }
        let spec = CallArg::Const64 { value: spec };
        match (first.place, first.place.and_then(|_| movable.remove(&first.region))) {
            (Some(place), Some(at)) => {
                // the region's call moves here and counts the guards too
                let region = out[at].args[1];
                out[at] = CallInsertion {
                    instr: place as u32,
                    when: When::Before,
                    function: abi::COUNT_REGION_GUARDS.into(),
                    args: vec![CallArg::Preds, region, spec, CallArg::LaunchVal64],
                };
            }
            (Some(place), None) if group.len() > 1 => out.push(CallInsertion {
                instr: place as u32,
                when: When::Before,
                function: abi::COUNT_GUARDS.into(),
                args: vec![CallArg::Preds, spec, CallArg::LaunchVal64],
            }),
            _ => out.extend(group.iter().map(|g| g.call.clone())),
        }
        group.clear();
    };
    for c in calls {
        let i = c.instr as usize;
        let slot = match (c.function == abi::COUNT_GUARD, slot_arg(&c)) {
            (true, Some(value)) if i < n && c.when == When::Before => value,
            _ => {
                let free = slot_arg(&c).is_some_and(|v| !measures_branch(v));
                if let (true, true, Some(Some((first, _)))) =
                    (c.function == abi::COUNT_REGION && c.when == When::Before, free, region_of.get(i))
                {
                    movable.insert(*first, out.len());
                }
                out.push(c);
                continue;
            }
        };
        let (Some((first, end)), Some((bits, pred))) =
            (region_of[i], crate::lower::slot_guard(kernel, i, When::Before))
        else {
            flush(&mut out, &mut group, &mut movable);
            out.push(c);
            continue;
        };
        // where the guard predicate has its value at i: lo..=hi
        let lo = (first..i).rev().find(|&j| writes(j, &pred)).map_or(first, |j| j + 1);
        let hi = (i..end).find(|&j| writes(j, &pred)).unwrap_or(end - 1);
        let code = ((bits >> META_GUARD_SHIFT) & 7) as u8 | if bits & META_GUARD_NEGATED != 0 { 8 } else { 0 };
        // the latest unguarded instruction in the spans of `g` and this guard
        let place_with = |g: &[GuardCount]| -> Option<usize> {
            let (lo, hi) = g.iter().fold((lo, hi), |(l, h), x| (l.max(x.lo), h.min(x.hi)));
            (lo..=hi).rev().find(|&j| !view.instrs[j].guarded)
        };
        let joined = group
            .last()
            .filter(|last| last.region == first && last.slot + 1 == slot && group.len() < GUARDS_PER_CALL)
            .and_then(|_| place_with(&group));
        if joined.is_none() {
            flush(&mut out, &mut group, &mut movable);
        }
        let place = joined.or_else(|| place_with(&[]));
        for g in group.iter_mut() {
            g.place = place;
        }
        group.push(GuardCount { call: c, region: first, slot, pred: code, lo, hi, place });
    }
    flush(&mut out, &mut group, &mut movable);
    out.sort_by_key(|c| (c.instr, c.when));
    out
}

/// A count call's slot argument: its first slot, its meta bits above bit 32.
fn slot_arg(c: &CallInsertion) -> Option<u64> {
    match c.args.get(1) {
        Some(CallArg::Const64 { value }) => Some(*value),
        _ => None,
    }
}

/// Whether a region call's slot argument says it measures its closing branch.
fn measures_branch(slot_arg: u64) -> bool {
    (slot_arg >> 32) as u32 & COUNT_BRANCH != 0
}

/// Let each region call that reads its closing branch's guard count that
/// guard too, and drop the branch's own guard call.
fn held_by_region_calls(plan: &Plan, base: u32, calls: &mut Vec<CallInsertion>) {
    let guard_at: HashMap<u32, (usize, u64)> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.function == abi::COUNT_GUARD && c.when == When::Before)
        .filter_map(|(k, c)| Some((c.instr, (k, slot_arg(c)?))))
        .collect();
    let mut dropped = Vec::new();
    for c in calls.iter_mut().filter(|c| c.function == abi::COUNT_REGION) {
        let Some(value) = slot_arg(c) else { continue };
        let (slot, meta) = (value & 0xffff_ffff, (value >> 32) as u32);
        let region = slot.checked_sub(u64::from(base)).and_then(|r| plan.counters.get(r as usize));
        let Some(CounterKind::Region { branch: Some(b), .. }) = region.map(|d| &d.kind) else { continue };
        let b = *b;
        let Some(&(k, guard)) = guard_at.get(&b) else { continue };
        let delta = guard.wrapping_sub(slot);
        if meta & COUNT_BRANCH == 0 || guard <= slot || delta >= 1 << (32 - COUNT_HELD_SHIFT) {
            continue;
        }
        let meta = meta | COUNT_HELD | (delta as u32) << COUNT_HELD_SHIFT;
        c.args[1] = CallArg::Const64 { value: slot | u64::from(meta) << 32 };
        dropped.push(k);
    }
    dropped.sort_unstable();
    for k in dropped.into_iter().rev() {
        calls.remove(k);
    }
}

struct GuardCount {
    call: CallInsertion,
    /// First instruction of its count region.
    region: usize,
    slot: u64,
    /// Predicate number, with 8 when negated.
    pred: u8,
    /// Its span: instructions before which the predicate has its value.
    lo: usize,
    hi: usize,
    /// Where the group's call can go (an unguarded instruction in every
    /// member's span), if anywhere.
    place: Option<usize>,
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
        let measured = region_calls.iter().filter(|c| slot_arg(c).is_some_and(measures_branch)).count();
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
    /// Copies of the windows' slots, added up when read back.
    pub shards: u32,
}

impl TableShape {
    /// The table of a launch of `blocks` thread blocks with `slots` slots
    /// per window and `window_blocks` blocks per window: one copy per
    /// block up to [`MAX_SHARDS`] (no more SMs can run the launch), fewer
    /// where the table would pass [`SHARDED_TABLE_BYTES`].
    pub fn new(slots: u32, blocks: u64, window_blocks: u32) -> TableShape {
        let windows = xfpx_common::counters::window_count(blocks, window_blocks);
        let one = TableShape { slots, windows, window_blocks: if windows == 1 { 0 } else { window_blocks }, shards: 1 };
        let mut shards = blocks.clamp(1, u64::from(MAX_SHARDS)) as u32;
        while shards > 1 && (TableShape { shards, ..one }).bytes() > SHARDED_TABLE_BYTES {
            shards /= 2;
        }
        TableShape { shards, ..one }
    }

    /// Slots from one copy's start to the next's: the windows' slots,
    /// rounded up to [`SHARD_ALIGN_SLOTS`] when there are several copies.
    pub fn shard_slots(&self) -> u64 {
        let used = u64::from(self.windows) * u64::from(self.slots);
        if self.shards > 1 {
            used.next_multiple_of(SHARD_ALIGN_SLOTS)
        } else {
            used
        }
    }

    /// Bytes of the table: header and `shards` copies of `windows * slots` slots.
    pub fn bytes(&self) -> usize {
        TABLE_HEADER_BYTES + (u64::from(self.shards) * self.shard_slots()) as usize * SLOT_BYTES
    }

    /// The header as the device reads it (little-endian).
    pub fn header(&self) -> [u8; TABLE_HEADER_BYTES] {
        let mut h = [0u8; TABLE_HEADER_BYTES];
        let words = [self.slots, self.windows, self.window_blocks, self.shards, self.shard_slots() as u32];
        for (i, v) in words.into_iter().enumerate() {
            h[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// The header of a table read back; `None` when it is short or its
    /// copies' spacing is not the one its shape makes.
    pub fn parse(table: &[u8]) -> Option<TableShape> {
        let word = |i: usize| table.get(4 * i..4 * i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let shape = TableShape { slots: word(0)?, windows: word(1)?, window_blocks: word(2)?, shards: word(3)? };
        (shape.shards >= 1 && u64::from(word(4)?) == shape.shard_slots()).then_some(shape)
    }
}

/// Read a count table's slots for one window from its bytes as the
/// device wrote them (little-endian `XfpxCountSlot`s after the header),
/// the copies of each slot added up.
pub fn read_window(table: &[u8], shape: &TableShape, window: usize) -> Option<Vec<SlotCount>> {
    let word = |at: usize| table.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    let slots = shape.slots as usize;
    let stride = usize::try_from(shape.shard_slots()).ok()?;
    (0..slots)
        .map(|s| {
            let mut sum = SlotCount { warps: 0, lanes: 0, divergent: 0 };
            for shard in 0..shape.shards as usize {
                let at = TABLE_HEADER_BYTES + (shard * stride + window * slots + s) * SLOT_BYTES;
                sum.warps = sum.warps.wrapping_add(word(at)?);
                sum.lanes = sum.lanes.wrapping_add(word(at + 8)?);
                sum.divergent = sum.divergent.wrapping_add(word(at + 16)?);
            }
            Some(sum)
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
        let regions: Vec<&CallInsertion> = calls
            .iter()
            .filter(|c| c.function == abi::COUNT_REGION || c.function == abi::COUNT_REGION_GUARDS)
            .collect();
        assert_eq!(regions.len(), cp.layout.regions.len());
        assert_eq!(cp.layout.instructions(), k.view.instrs.len() as u64);
        // region 0 (0..3) ends in @P0 BRA: its call goes after the ISETP
        assert_eq!((regions[0].instr, regions[0].when), (1, When::After));
        assert_eq!(regions[0].args[2], CallArg::LaunchVal64);
        // the branch's guard is counted by region 0's call, which reads it
        // anyway; the guarded store's by region 1's, moved before the BSYNC
        assert!(calls.iter().all(|c| c.function != abi::COUNT_GUARD && c.function != abi::COUNT_GUARDS));
        assert_eq!((regions[1].instr, regions[1].function.as_str()), (5, abi::COUNT_REGION_GUARDS));
        let held = u64::from(COUNT_BRANCH | COUNT_HELD | (cp.layout.regions.len() as u32) << COUNT_HELD_SHIFT);
        assert_eq!(regions[0].args[1], CallArg::Const64 { value: held << 32 });
        check_guard_counts(&k, &cp.plan, &calls);
        // table bytes read back per window
        let shape = TableShape { slots: cp.layout.slots() as u32, windows: 2, window_blocks: 1, shards: 1 };
        let mut bytes = vec![0u8; shape.bytes()];
        let at = TABLE_HEADER_BYTES + (cp.layout.slots() + 1) * SLOT_BYTES;
        bytes[at..at + 8].copy_from_slice(&7u64.to_le_bytes());
        let w1 = read_window(&bytes, &shape, 1).unwrap();
        assert_eq!(w1[1].warps, 7);
        assert!(read_window(&bytes, &TableShape { windows: 3, ..shape }, 2).is_none());
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

    /// Check the count calls of `calls` (slots from 0) against the plan:
    /// every region and every guard counted once, a region's call inside
    /// it, a guard counted with others at an unguarded instruction of its
    /// region with no write of its predicate between that place and the
    /// guarded instruction. Returns the number of guards of each call that
    /// counts guards by `spec` (region and guards, or guards alone).
    fn check_guard_counts(k: &SassKernel, plan: &Plan, calls: &[CallInsertion]) -> Vec<usize> {
        let region = |i: usize| {
            plan.counters.iter().position(|d| matches!(d.kind, CounterKind::Region { first, end, .. } if (first as usize..end as usize).contains(&i)))
        };
        let guard_of = |slot: u64| match plan.counters[slot as usize].kind {
            CounterKind::GuardHeld { instr } => instr as usize,
            _ => panic!("slot {slot} is not a guard count"),
        };
        let mut counted = vec![0; plan.counters.len()];
        let mut sizes = Vec::new();
        for c in calls {
            let CallArg::Const64 { value } = c.args[1] else { continue };
            let (slot, meta) = (value & 0xffff_ffff, (value >> 32) as u32);
            let place = c.instr as usize;
            if c.function == abi::COUNT_REGION || c.function == abi::COUNT_REGION_GUARDS {
                counted[slot as usize] += 1;
                let CounterKind::Region { branch, .. } = plan.counters[slot as usize].kind else {
                    panic!("a region call of another counter")
                };
                if c.when == When::Before && meta & COUNT_BRANCH == 0 {
                    assert_eq!(region(place), Some(slot as usize), "region {slot} counted at {place}");
                }
                if meta & COUNT_HELD != 0 {
                    // the branch closing the region: its guard read by the region's call
                    let held = slot + u64::from(meta >> COUNT_HELD_SHIFT);
                    counted[held as usize] += 1;
                    let b = guard_of(held);
                    assert_eq!(branch, Some(b as u32));
                    let guard = &k.instrs[b].guard.as_ref().unwrap().pred;
                    assert_eq!(
                        (meta >> COUNT_PRED_SHIFT & 7, meta & COUNT_NEGATED != 0),
                        (u32::from(guard.num), guard.negated)
                    );
                }
            }
            let spec = match c.function.as_str() {
                abi::COUNT_GUARD => {
                    counted[value as usize] += 1;
                    assert_eq!(guard_of(value), place);
                    continue;
                }
                abi::COUNT_GUARDS => value,
                abi::COUNT_REGION_GUARDS => {
                    assert_eq!(meta, 0, "a region call that moved reads no branch");
                    let CallArg::Const64 { value } = c.args[2] else { panic!("spec") };
                    value
                }
                _ => continue,
            };
            let n = (spec >> 32 & 7) as usize;
            let least = if c.function == abi::COUNT_GUARDS { 2 } else { 1 };
            assert!((least..=GUARDS_PER_CALL).contains(&n), "{spec:#x}");
            assert!(!k.view.instrs[place].guarded && c.when == When::Before);
            for g in 0..n {
                let slot = (spec & 0xffff_ffff) + g as u64;
                counted[slot as usize] += 1;
                let i = guard_of(slot);
                let code = (spec >> (35 + 4 * g)) & 15;
                let guard = &k.instrs[i].guard.as_ref().unwrap().pred;
                assert_eq!(code, u64::from(guard.num) | if guard.negated { 8 } else { 0 });
                assert_eq!(region(i), region(place), "guard {i} counted at {place}");
                let pred = RegRange::new(RegFile::Predicate, guard.num, 1);
                let between = if place <= i { place..i } else { i..place };
                assert!(
                    between.clone().all(|j| !k.view.instrs[j].writes(&pred)),
                    "P{} written in {between:?}",
                    guard.num
                );
            }
            sizes.push(n);
        }
        for (id, d) in plan.counters.iter().enumerate() {
            assert_eq!(counted[id], 1, "counter {id} ({:?}) counted {} times", d.kind, counted[id]);
        }
        sizes
    }

    #[test]
    fn guards_whose_predicates_hold_their_values_together_share_a_call() {
        // rsqrtf's scaling of tiny inputs, twice, as nvcc schedules it
        const RSQRT: &str = "\tFunction : r\n\
            /*0000*/  FSETP.GEU.AND P1, PT, |R16|, 1.175494350822287508e-38, PT ;\n\
            /*0010*/  @!P1 FMUL R16, R16, 16777216 ;\n\
            /*0020*/  FSETP.GEU.AND P2, PT, |R29|, 1.175494350822287508e-38, PT ;\n\
            /*0030*/  MUFU.RSQ R26, R16 ;\n\
            /*0040*/  @!P2 FMUL R29, R29, 16777216 ;\n\
            /*0050*/  @!P1 FMUL R26, R26, 4096 ;\n\
            /*0060*/  FSETP.GEU.AND P1, PT, |R18|, 1.175494350822287508e-38, PT ;\n\
            /*0070*/  @!P1 FMUL R18, R18, 16777216 ;\n\
            /*0080*/  @P0 FADD R1, R1, R1 ;\n\
            /*0090*/  EXIT ;\n";
        let k = build_kernel(&parse_listing(RSQRT).unwrap()[0]);
        let mut sites = SiteTable::new();
        let (cp, _) = plan_counts(&k, &mut sites);
        let calls = NvbitLowering::new(&k, 0).unwrap().lower(&k.view, &cp.plan, &sites).unwrap();
        assert_eq!(check_guard_counts(&k, &cp.plan, &calls), vec![3, 2]);
        // the region's call (slot 0) moved to the first three guards' place,
        // before the FSETP that rewrites P1 (slots 1-3: !P1, !P2, !P1); the
        // last two (!P1, P0) before the EXIT
        let spec = |first: u64, guards: &[u64]| CallArg::Const64 {
            value: guards
                .iter()
                .enumerate()
                .fold(first | (guards.len() as u64) << 32, |s, (k, g)| s | g << (35 + 4 * k)),
        };
        let made: Vec<(u32, &str, Vec<CallArg>)> =
            calls.iter().map(|c| (c.instr, c.function.as_str(), c.args.clone())).collect();
        let region = CallArg::Const64 { value: 0 };
        assert_eq!(
            made,
            vec![
                (6, abi::COUNT_REGION_GUARDS, vec![CallArg::Preds, region, spec(1, &[9, 10, 9]), CallArg::LaunchVal64]),
                (9, abi::COUNT_GUARDS, vec![CallArg::Preds, spec(4, &[9, 0]), CallArg::LaunchVal64]),
            ]
        );
        // a guard on a uniform predicate keeps its own call
        let uniform = RSQRT.replace("@P0 FADD", "@UP0 FADD");
        let k = build_kernel(&parse_listing(&uniform).unwrap()[0]);
        let (cp, _) = plan_counts(&k, &mut sites);
        let calls = NvbitLowering::new(&k, 0).unwrap().lower(&k.view, &cp.plan, &sites).unwrap();
        assert_eq!(check_guard_counts(&k, &cp.plan, &calls), vec![3]);
    }

    #[test]
    fn guard_counts_of_the_gpu_listings_are_each_counted_once_where_their_predicate_holds() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/gpu/listings");
        let (mut kernels, mut guards, mut regions, mut calls_made) = (0, 0, 0, 0);
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "sass") {
                continue;
            }
            for f in parse_listing(&std::fs::read_to_string(&path).unwrap()).unwrap() {
                let k = build_kernel(&f);
                let mut sites = SiteTable::new();
                let (cp, _) = plan_counts(&k, &mut sites);
                let calls = NvbitLowering::new(&k, 0).unwrap().lower(&k.view, &cp.plan, &sites).unwrap();
                check_guard_counts(&k, &cp.plan, &calls);
                kernels += 1;
                guards += cp.layout.guards.len();
                regions += cp.layout.regions.len();
                calls_made += calls.len();
            }
        }
        // (64 kernels: 5,319 regions and 306 guards counted by 5,504 calls, 5,625 alone)
        assert!(
            kernels > 20 && calls_made < regions + guards,
            "{kernels} kernels, {guards} guards and {regions} regions in {calls_made} calls"
        );
    }

    #[test]
    fn table_shapes_match_the_device_layout() {
        // XfpxCountTable: u32 slots, windows, window_blocks, shards,
        // shard_slots, 3 reserved; then XfpxCountSlot { u64 warps, lanes,
        // divergent, reserved }
        let t = TableShape::new(3, 100, 16);
        assert_eq!((t.windows, t.window_blocks, t.shards), (7, 16, MAX_SHARDS));
        // each copy of the 21 slots starts on a 4 KiB boundary
        assert_eq!(t.shard_slots(), 128);
        assert_eq!(t.bytes(), 32 + 16 * 128 * 32);
        assert_eq!(&t.header()[..20], &[3, 0, 0, 0, 7, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0, 128, 0, 0, 0]);
        assert_eq!(TableShape::parse(&t.header()), Some(t));
        // a header whose copies are spaced otherwise is not this layout
        let mut h = t.header();
        h[16] = 64;
        assert_eq!(TableShape::parse(&h), None);
        // a launch that fits one window is one window; no more copies than blocks
        assert_eq!(TableShape::new(3, 10, 16), TableShape { slots: 3, windows: 1, window_blocks: 0, shards: 10 });
        let one = TableShape::new(3, 1, 0);
        assert_eq!((one.shards, one.shard_slots(), one.bytes()), (1, 3, 32 + 3 * 32));
        // copies that would make a table too large are not made
        let big = TableShape::new(5000, u64::MAX, 1);
        assert_eq!((big.windows, big.shards), (xfpx_common::counters::MAX_WINDOWS, 1));
        let mid = TableShape::new(70_000, 64, 0);
        assert!(mid.shards > 1 && mid.shards < MAX_SHARDS && mid.bytes() <= SHARDED_TABLE_BYTES, "{mid:?}");
        assert_eq!(TableShape::parse(&[1, 2]), None);
    }

    #[test]
    fn the_copies_of_a_slot_are_added_up() {
        let t = TableShape::new(2, 3, 2);
        assert_eq!((t.windows, t.shards, t.shard_slots()), (2, 3, 128));
        let mut table = vec![0u8; t.bytes()];
        table[..TABLE_HEADER_BYTES].copy_from_slice(&t.header());
        // window 1, slot 0: 3 warps of 32 lanes in copy 0, 4 warps (one divergent) in copy 2
        for (shard, warps, divergent) in [(0usize, 3u64, 0u64), (2, 4, 1)] {
            let at = TABLE_HEADER_BYTES + (shard * 128 + 2) * SLOT_BYTES;
            table[at..at + 8].copy_from_slice(&warps.to_le_bytes());
            table[at + 8..at + 16].copy_from_slice(&(32 * warps).to_le_bytes());
            table[at + 16..at + 24].copy_from_slice(&divergent.to_le_bytes());
        }
        let w1 = read_window(&table, &t, 1).unwrap();
        assert_eq!((w1[0].warps, w1[0].lanes, w1[0].divergent), (7, 224, 1));
        assert_eq!((w1[1].warps, w1[1].lanes), (0, 0));
        assert!(read_window(&table, &t, 0).unwrap().iter().all(|c| c.warps == 0));
        // a table cut short is not read (the last copy ends after its 4 slots)
        assert!(read_window(&table[..TABLE_HEADER_BYTES + (2 * 128 + 4) * SLOT_BYTES], &t, 1).is_some());
        assert!(read_window(&table[..TABLE_HEADER_BYTES + (2 * 128 + 3) * SLOT_BYTES], &t, 1).is_none());
    }
}
