//! The counters tool during a run, free of FFI: the slot range of each
//! instrumented function, the table each counted launch gets (its shape
//! from the launch's grid), and the fold of a table read back into the
//! launch's per-window counters.
//!
//! Slots (see [`crate::counts`]): a called (non-kernel) function gets the
//! next range of the program-wide callee slots; a kernel's slots follow
//! all callee slots given out when it is instrumented. Its launches' tables
//! therefore hold the slots of every function it can call (its callees are
//! instrumented with it, before it), and the counts of the functions it
//! called are added to its own, as the hardware counts a kernel's
//! instructions.

use crate::counts::{read_window, TableShape};
use std::collections::{BTreeMap, HashMap};
use xfpx_common::counters::{fold, CountLayout, LaunchCounters, SlotCount, WindowCounters};

/// A kernel's counters: its first slot and its layout.
#[derive(Debug, Clone)]
struct CountedKernel {
    /// The name its counters are reported under.
    display: String,
    base: u32,
    layout: CountLayout,
}

/// A launch handed a table and not read back yet.
#[derive(Debug, Clone)]
struct PendingLaunch {
    /// The kernel's mangled name.
    kernel: String,
    /// Index of the launch among the kernel's launches.
    index: u64,
    shape: TableShape,
}

/// The counters of a run so far.
#[derive(Debug, Default)]
pub struct CountRun {
    /// Thread blocks per sampling window (0: one window per launch).
    window_blocks: u32,
    /// Callee slots given out so far.
    callee_slots: u32,
    /// Called functions: first slot and layout.
    callees: Vec<(u32, CountLayout)>,
    /// By mangled name.
    kernels: HashMap<String, CountedKernel>,
    /// Launches decided to be counted, by serial: kernel and index.
    granted: HashMap<u64, (String, u64)>,
    /// Launches given a table, by serial.
    pending: BTreeMap<u64, PendingLaunch>,
}

/// Why a table read back was not folded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("no counted launch has serial {0}")]
    UnknownLaunch(u64),
    #[error("the count table of launch {serial} has {got} bytes, {want} expected")]
    Size { serial: u64, got: usize, want: usize },
    #[error("the count table of launch {0} has another header than it was given")]
    Header(u64),
    #[error("{0}")]
    Fold(#[from] xfpx_common::counters::FoldError),
}

impl CountRun {
    pub fn new(window_blocks: u32) -> CountRun {
        CountRun { window_blocks, ..CountRun::default() }
    }

    /// Thread blocks per sampling window (0: whole launches).
    pub fn window_blocks(&self) -> u32 {
        self.window_blocks
    }

    /// The first slot of a function about to be lowered: a kernel's own
    /// slots follow every callee slot so far; a called function takes the
    /// next callee range ([`CountRun::add_callee`] records it).
    pub fn next_base(&self) -> u32 {
        self.callee_slots
    }

    /// Record a called function lowered from [`CountRun::next_base`].
    pub fn add_callee(&mut self, base: u32, layout: CountLayout) {
        self.callee_slots = base + layout.slots() as u32;
        self.callees.push((base, layout));
    }

    /// Record a kernel lowered from [`CountRun::next_base`], reported as
    /// `display`.
    pub fn add_kernel(&mut self, mangled: &str, display: &str, base: u32, layout: CountLayout) {
        self.kernels.insert(mangled.to_string(), CountedKernel { display: display.to_string(), base, layout });
    }

    /// Launch `serial`, the `index`-th of `mangled`, is to run instrumented:
    /// false when the kernel has no counters (it was not planned), and the
    /// launch must then run its original code.
    pub fn grant(&mut self, serial: u64, mangled: &str, index: u64) -> bool {
        let known = self.kernels.contains_key(mangled);
        if known {
            self.granted.insert(serial, (mangled.to_string(), index));
        }
        known
    }

    /// The table of granted launch `serial` of `blocks` thread blocks (0:
    /// not known, as for a launch from a graph: the most windows, and the
    /// empty ones past the last block left out), now pending; `None` for
    /// a launch not granted.
    pub fn table_for(&mut self, serial: u64, blocks: u64) -> Option<TableShape> {
        let (kernel, index) = self.granted.remove(&serial)?;
        let k = self.kernels.get(&kernel)?;
        let blocks = if blocks == 0 { u64::MAX } else { blocks };
        let shape = TableShape::new(k.base + k.layout.slots() as u32, blocks, self.window_blocks);
        self.pending.insert(serial, PendingLaunch { kernel, index, shape });
        Some(shape)
    }

    /// A pending launch whose table was lost (not allocated, or not read
    /// back): forgotten; true when it was pending.
    pub fn lose(&mut self, serial: u64) -> bool {
        self.granted.remove(&serial);
        self.pending.remove(&serial).is_some()
    }

    /// Fold the table of launch `serial` as the device left it: the name
    /// the kernel is reported under and the launch's counters.
    pub fn fold_table(&mut self, serial: u64, table: &[u8]) -> Result<(String, LaunchCounters), TableError> {
        let p = self.pending.remove(&serial).ok_or(TableError::UnknownLaunch(serial))?;
        let want = p.shape.bytes();
        if table.len() != want {
            return Err(TableError::Size { serial, got: table.len(), want });
        }
        if TableShape::parse(table) != Some(p.shape) {
            return Err(TableError::Header(serial));
        }
        let k = self.kernels.get(&p.kernel).ok_or(TableError::UnknownLaunch(serial))?;
        let mut windows = Vec::with_capacity(p.shape.windows as usize);
        for w in 0..p.shape.windows {
            let all =
                read_window(table, &p.shape, w as usize).ok_or(TableError::Size { serial, got: table.len(), want })?;
            let range = |base: u32, layout: &CountLayout| -> &[SlotCount] {
                let from = (base as usize).min(all.len());
                &all[from..(from + layout.slots()).min(all.len())]
            };
            let mut c = fold(&k.layout, w, range(k.base, &k.layout))?;
            for (base, layout) in &self.callees {
                let s = range(*base, layout);
                // callees given slots after this kernel's are not in its table
                if s.len() == layout.slots() && s.iter().any(|x| x.warps != 0 || x.lanes != 0) {
                    let mut called = fold(layout, w, s)?;
                    called.index = w;
                    c.add(&called);
                }
            }
            windows.push(WindowCounters { index: w, ..c });
        }
        if p.shape.windows == xfpx_common::counters::MAX_WINDOWS {
            // blocks not known (or past the cap): no window after the last that ran
            let ran = windows.iter().rposition(|w| w.warp_instructions > 0).map_or(1, |i| i + 1);
            windows.truncate(ran);
        }
        Ok((k.display.clone(), LaunchCounters { launch: p.index, windows }))
    }

    /// Launches given a table that was never read back (the program
    /// ended first, or the table could not be allocated or read).
    pub fn unread(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::counts::{plan_counts, SLOT_BYTES, TABLE_HEADER_BYTES};
    use crate::sass::{build_kernel, parse_listing};
    use xfpx_common::site::SiteTable;

    /// A kernel that calls a function: 5 instructions, one guarded store.
    const KERNEL: &str = "\tFunction : k\n\
        /*0000*/  S2R R0, SR_TID.X ;\n\
        /*0010*/  ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n\
        /*0020*/  CALL.REL.NOINC 0x60 ;\n\
        /*0030*/  @P0 STG.E desc[UR4][R4.64], R1 ;\n\
        /*0040*/  EXIT ;\n";
    /// The called function: 2 instructions.
    const CALLEE: &str = "\tFunction : f\n\
        /*0000*/  FADD R1, R2, R3 ;\n\
        /*0010*/  RET.REL.NODEC R20 0x0 ;\n";

    fn layout(listing: &str) -> CountLayout {
        let k = build_kernel(&parse_listing(listing).unwrap()[0]);
        plan_counts(&k, &mut SiteTable::new()).0.layout
    }

    /// Write one slot of a table's first copy: window `w`, slot `s`.
    fn put(table: &mut [u8], slots: u32, w: u32, s: u32, v: SlotCount) {
        let at = TABLE_HEADER_BYTES + ((w * slots + s) as usize) * SLOT_BYTES;
        put_at(table, at, v);
    }

    /// Write one slot of copy `shard` of a table of `shape`.
    fn put_in(table: &mut [u8], shape: &TableShape, shard: u64, w: u32, s: u32, v: SlotCount) {
        let at = TABLE_HEADER_BYTES + (shard * shape.shard_slots()) as usize * SLOT_BYTES;
        put_at(table, at + ((w * shape.slots + s) as usize) * SLOT_BYTES, v);
    }

    fn put_at(table: &mut [u8], at: usize, v: SlotCount) {
        for (i, x) in [v.warps, v.lanes, v.divergent].into_iter().enumerate() {
            table[at + 8 * i..at + 8 * i + 8].copy_from_slice(&x.to_le_bytes());
        }
    }

    #[test]
    fn a_launch_folds_its_kernel_and_the_functions_it_called() {
        let (callee, kernel) = (layout(CALLEE), layout(KERNEL));
        let mut run = CountRun::new(4);
        let cb = run.next_base();
        run.add_callee(cb, callee.clone());
        let kb = run.next_base();
        assert_eq!((cb, kb), (0, callee.slots() as u32));
        run.add_kernel("_Z1kv", "k()", kb, kernel.clone());
        assert!(!run.grant(9, "_Z1nonev", 0));
        assert!(run.table_for(9, 1).is_none());
        // 6 blocks in windows of 4: two windows
        assert!(run.grant(7, "_Z1kv", 3));
        let shape = run.table_for(7, 6).unwrap();
        assert_eq!((shape.slots, shape.windows, shape.window_blocks), (kb + kernel.slots() as u32, 2, 4));
        let mut table = vec![0u8; shape.bytes()];
        table[..TABLE_HEADER_BYTES].copy_from_slice(&shape.header());
        // window 1: one warp of 32 runs every kernel region once and the
        // callee once; the guarded store held on 20 lanes
        for r in 0..kernel.regions.len() as u32 {
            put(&mut table, shape.slots, 1, kb + r, SlotCount { warps: 1, lanes: 32, divergent: 0 });
        }
        for g in 0..kernel.guards.len() as u32 {
            let s = kb + kernel.regions.len() as u32 + g;
            put(&mut table, shape.slots, 1, s, SlotCount { warps: 0, lanes: 20, divergent: 0 });
        }
        // (counted on another SM: into the table's last copy)
        assert_eq!(shape.shards, 6);
        for r in 0..callee.regions.len() as u32 {
            put_in(&mut table, &shape, 5, 1, cb + r, SlotCount { warps: 1, lanes: 32, divergent: 0 });
        }
        let (name, launch) = run.fold_table(7, &table).unwrap();
        assert_eq!((name.as_str(), launch.launch, launch.windows.len()), ("k()", 3, 2));
        assert_eq!(launch.windows[0], WindowCounters::default());
        let w = &launch.windows[1];
        assert_eq!(w.index, 1);
        assert_eq!(w.warp_instructions, 5 + 2);
        assert_eq!(w.thread_instructions, 32 * 7);
        assert_eq!(w.thread_instructions_pred_on, 32 * 7 - 12);
        assert_eq!(w.mix.get("f32.add"), Some(&1));
        assert_eq!(run.unread(), 0);
        // each table is read once, and only at its size and header
        assert_eq!(run.fold_table(7, &table), Err(TableError::UnknownLaunch(7)));
        let again = |run: &mut CountRun, serial| {
            assert!(run.grant(serial, "_Z1kv", 4));
            run.table_for(serial, 6).unwrap()
        };
        again(&mut run, 8);
        assert!(matches!(run.fold_table(8, &table[..40]), Err(TableError::Size { .. })));
        again(&mut run, 8);
        let mut other = table.clone();
        other[4] = 9;
        assert_eq!(run.fold_table(8, &other), Err(TableError::Header(8)));
        again(&mut run, 10);
        assert_eq!(run.unread(), 1);
        assert!(run.lose(10));
        assert_eq!(run.unread(), 0);
        // a launch of unknown size gets the most windows; the empty ones
        // after the last that ran are left out
        assert!(run.grant(11, "_Z1kv", 5));
        let shape = run.table_for(11, 0).unwrap();
        assert_eq!(shape.windows, xfpx_common::counters::MAX_WINDOWS);
        let mut table = vec![0u8; shape.bytes()];
        table[..TABLE_HEADER_BYTES].copy_from_slice(&shape.header());
        put(&mut table, shape.slots, 2, kb, SlotCount { warps: 1, lanes: 32, divergent: 0 });
        let (_, launch) = run.fold_table(11, &table).unwrap();
        assert_eq!(launch.windows.len(), 3);
    }
}
