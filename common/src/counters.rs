//! Execution counters, vendor-neutral: what one kernel launch executed,
//! per sampling window (a range of thread blocks / workgroups).
//!
//! Counted per *count region* (see [`crate::count_tool`]): a run of
//! instructions that a warp executes together, so one device update per
//! region execution gives every instruction of the region. From the
//! per-region device slots the host folds ([`fold`]):
//! - `warp_instructions`: warp (wave) instructions executed, predicated-off
//!   ones included (NVIDIA `smsp__inst_executed`);
//! - `thread_instructions`: the same, once per active lane
//!   (`smsp__thread_inst_executed`);
//! - `thread_instructions_pred_on`: per active lane whose guard held
//!   (`smsp__thread_inst_executed_pred_on`);
//! - `inactive_lanes`: lane slots left idle by executed warp instructions,
//!   `warp_size * warp_instructions - thread_instructions` (the paper's
//!   INACT counter);
//! - `divergent_branches`: executions of a conditional branch whose active
//!   lanes did not all go the same way (the divergence stack's pushes);
//! - `reconvergences`: warp parts merged at a reconvergence instruction
//!   (NVIDIA `BSYNC`/`WARPSYNC`; the stack's pops);
//! - on targets with no divergence stack but an active-mask register the
//!   program saves and restores itself (AMD EXEC), the stack's pushes are
//!   the executions of instructions that save the mask and narrow it
//!   ([`MaskEffect::Save`], counted as `divergent_branches`) and its pops
//!   those that restore it ([`MaskEffect::Restore`], as `reconvergences`);
//! - `mix`: warp instructions per [`MixClass`] label.
//!
//! Normalised counters ([`Normalised`]) are what operational regions are
//! learnt on ([`crate::region`]).
//!
//! A backend may read some of these counters from the GPU's performance
//! monitors instead ([`CounterSource::Hardware`]): per launch, not per
//! window, and only those the monitors count exactly (see
//! [`CounterSource::measures`]).

use crate::class::InstrClass;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a memory instruction goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Constant,
    /// A generic (flat) address, resolved at run time.
    Generic,
}

impl MemSpace {
    pub fn name(self) -> &'static str {
        match self {
            MemSpace::Global => "global",
            MemSpace::Shared => "shared",
            MemSpace::Local => "local",
            MemSpace::Constant => "constant",
            MemSpace::Generic => "generic",
        }
    }
}

/// What an instruction is for the instruction mix. Backends map their
/// opcodes onto these classes; floating-point work keeps its
/// [`InstrClass`] (format and kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "mix", rename_all = "snake_case")]
pub enum MixClass {
    Fp {
        class: InstrClass,
    },
    Integer,
    Load {
        space: MemSpace,
    },
    Store {
        space: MemSpace,
    },
    Atomic {
        space: MemSpace,
    },
    /// Branches, calls, returns, exits.
    Branch,
    /// Waits for the other threads of a block (`BAR`, `s_barrier`).
    Barrier,
    /// Reconvergence of a diverged warp (`BSYNC`, `WARPSYNC`).
    Reconverge,
    /// Moves, special registers, no-ops and everything else.
    Other,
}

impl MixClass {
    /// The label a report keys the mix by: `f32.fma`, `int`, `load.global`,
    /// `atomic.shared`, `branch`, `barrier`, `reconverge`, `other`.
    pub fn label(self) -> String {
        match self {
            MixClass::Fp { class } => class.label(),
            MixClass::Integer => "int".into(),
            MixClass::Load { space } => format!("load.{}", space.name()),
            MixClass::Store { space } => format!("store.{}", space.name()),
            MixClass::Atomic { space } => format!("atomic.{}", space.name()),
            MixClass::Branch => "branch".into(),
            MixClass::Barrier => "barrier".into(),
            MixClass::Reconverge => "reconverge".into(),
            MixClass::Other => "other".into(),
        }
    }
}

/// One count region of a kernel, as the host folds its device slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionShape {
    /// Instructions `first..end` of the kernel view.
    pub first: u32,
    pub end: u32,
    /// Warp instructions per mix label, for one execution of the region.
    pub mix: BTreeMap<String, u64>,
    /// The region ends in a reconvergence instruction and the next region
    /// is entered only from it: warp parts merged there are
    /// `warps(this) - warps(next)`.
    pub reconverges_into: Option<u32>,
    /// Instructions of the region that save the active mask and narrow it
    /// ([`MaskEffect::Save`]): each execution of the region pushes this many.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mask_saves: u32,
    /// Instructions of the region that restore the active mask
    /// ([`MaskEffect::Restore`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mask_restores: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What an instruction does to the warp's active mask, where the program
/// manages the mask itself (AMD EXEC). A region ends after any instruction
/// that changes the mask, so that one mask holds throughout each region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskEffect {
    /// Leaves the active mask alone.
    #[default]
    None,
    /// Saves the active mask and narrows it (entering divergent control
    /// flow: AMD `s_*_saveexec_*`): a push of the divergence stack.
    Save,
    /// Restores a saved mask (leaving divergent control flow: AMD
    /// `s_or_b64 exec, exec, s[..]`, `s_mov_b64 exec, s[..]`): a pop.
    Restore,
    /// Changes the active mask otherwise (lanes leaving a loop, a vector
    /// compare that writes the mask).
    Write,
}

/// How the device slots of one kernel fold into counters: the regions
/// (slots `0..regions.len()`) and, after them, one slot per guarded
/// instruction (lanes whose guard held).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountLayout {
    pub kernel: String,
    pub regions: Vec<RegionShape>,
    /// Per guard slot: the region of its instruction.
    pub guards: Vec<u32>,
    /// Lanes per warp (32 on NVIDIA, 64 on CDNA).
    pub warp_size: u32,
}

impl CountLayout {
    /// Device slots per window.
    pub fn slots(&self) -> usize {
        self.regions.len() + self.guards.len()
    }

    /// Instructions counted per execution of each region.
    pub fn instructions(&self) -> u64 {
        self.regions.iter().map(|r| u64::from(r.end - r.first)).sum()
    }
}

/// What the device accumulates in one slot during one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SlotCount {
    /// Warp executions of the region (guard slots: unused).
    pub warps: u64,
    /// Active lanes summed over those executions (guard slots: lanes whose
    /// guard held).
    pub lanes: u64,
    /// Executions of the region's closing conditional branch that split
    /// the warp.
    pub divergent: u64,
}

/// The counters of one sampling window of one launch.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WindowCounters {
    /// Index of the window in its launch (blocks `index * window_blocks`
    /// onwards; 0 when the launch is one window).
    pub index: u32,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub thread_instructions_pred_on: u64,
    pub inactive_lanes: u64,
    pub divergent_branches: u64,
    pub reconvergences: u64,
    /// Warp instructions per [`MixClass::label`].
    pub mix: BTreeMap<String, u64>,
}

/// Why device slots could not be folded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("kernel `{kernel}`: {got} counter slots, its layout has {want}")]
    Slots { kernel: String, got: usize, want: usize },
    #[error("kernel `{kernel}`: guard slot {slot} names region {region}, which does not exist")]
    Guard { kernel: String, slot: usize, region: u32 },
}

/// Fold one window's device slots (`layout.slots()` of them) into counters.
pub fn fold(layout: &CountLayout, index: u32, slots: &[SlotCount]) -> Result<WindowCounters, FoldError> {
    if slots.len() != layout.slots() {
        return Err(FoldError::Slots { kernel: layout.kernel.clone(), got: slots.len(), want: layout.slots() });
    }
    let mut w = WindowCounters { index, ..WindowCounters::default() };
    let ws = u64::from(layout.warp_size);
    for (r, s) in layout.regions.iter().zip(slots) {
        let n = u64::from(r.end - r.first);
        w.warp_instructions += s.warps * n;
        w.thread_instructions += s.lanes * n;
        w.inactive_lanes += (ws * s.warps).saturating_sub(s.lanes) * n;
        w.divergent_branches += s.divergent + s.warps * u64::from(r.mask_saves);
        w.reconvergences += s.warps * u64::from(r.mask_restores);
        for (label, per) in &r.mix {
            *w.mix.entry(label.clone()).or_default() += per * s.warps;
        }
        if let Some(next) = r.reconverges_into {
            let after = slots.get(next as usize).map_or(0, |x| x.warps);
            w.reconvergences += s.warps.saturating_sub(after);
        }
    }
    w.thread_instructions_pred_on = w.thread_instructions;
    for (g, &region) in layout.guards.iter().enumerate() {
        let r = slots
            .get(region as usize)
            .filter(|_| (region as usize) < layout.regions.len())
            .ok_or(FoldError::Guard { kernel: layout.kernel.clone(), slot: g, region })?;
        let held = slots[layout.regions.len() + g].lanes;
        w.thread_instructions_pred_on -= r.lanes.saturating_sub(held).min(w.thread_instructions_pred_on);
    }
    w.mix.retain(|_, v| *v > 0);
    Ok(w)
}

/// Most sampling windows one launch is counted in; blocks past the last
/// window count into it.
pub const MAX_WINDOWS: u32 = 1024;

/// Sampling windows of a launch of `blocks` thread blocks (workgroups)
/// with `window_blocks` blocks per window (0: the launch is one window):
/// `ceil(blocks / window_blocks)`, at least 1 and at most [`MAX_WINDOWS`].
pub fn window_count(blocks: u64, window_blocks: u32) -> u32 {
    if window_blocks == 0 {
        return 1;
    }
    blocks.div_ceil(u64::from(window_blocks)).clamp(1, u64::from(MAX_WINDOWS)) as u32
}

/// The counters of one launch of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchCounters {
    /// Index (from 0) of the kernel's launch.
    pub launch: u64,
    pub windows: Vec<WindowCounters>,
}

/// The counters of one kernel over the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelCounters {
    pub kernel: String,
    pub launches: Vec<LaunchCounters>,
}

impl KernelCounters {
    /// Every window of every launch summed.
    pub fn total(&self) -> WindowCounters {
        let mut t = WindowCounters::default();
        for w in self.launches.iter().flat_map(|l| &l.windows) {
            t.add(w);
        }
        t
    }
}

impl WindowCounters {
    pub fn add(&mut self, o: &WindowCounters) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.thread_instructions_pred_on += o.thread_instructions_pred_on;
        self.inactive_lanes += o.inactive_lanes;
        self.divergent_branches += o.divergent_branches;
        self.reconvergences += o.reconvergences;
        for (k, v) in &o.mix {
            *self.mix.entry(k.clone()).or_default() += v;
        }
    }

    /// The normalised counters of this window.
    pub fn normalised(&self, warp_size: u32) -> Normalised {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let slots = self.warp_instructions * u64::from(warp_size);
        Normalised {
            inact: ratio(self.inactive_lanes, slots),
            stack: ratio(self.divergent_branches + self.reconvergences, self.divergent_branches),
            lane_efficiency: ratio(self.thread_instructions, slots),
            pred_on: ratio(self.thread_instructions_pred_on, self.thread_instructions),
            divergence: ratio(self.divergent_branches, self.warp_instructions),
        }
    }
}

/// Where a run's counters come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CounterSource {
    /// Counted by instrumented code, one device update per count region:
    /// every field, per sampling window.
    #[default]
    Instrumented,
    /// Read from the GPU's performance monitors, one value per launch
    /// (NVIDIA: CUPTI's range profiler): warp, thread and predicated-on
    /// thread instructions (inactive lanes follow from the first two);
    /// divergent branches, reconvergences and the mix are not counted.
    Hardware,
}

impl CounterSource {
    /// The normalised counters a source measures (see [`Normalised::NAMES`]).
    const HARDWARE_MEASURES: [&'static str; 3] = ["inact", "lane_efficiency", "pred_on"];

    pub fn name(self) -> &'static str {
        match self {
            CounterSource::Instrumented => "instrumented",
            CounterSource::Hardware => "hardware",
        }
    }

    /// `instrumented` or `hardware`.
    pub fn parse(text: &str) -> Option<CounterSource> {
        match text {
            "instrumented" => Some(CounterSource::Instrumented),
            "hardware" => Some(CounterSource::Hardware),
            _ => None,
        }
    }

    /// Whether counters of this source give the normalised counter `name`.
    pub fn measures(self, name: &str) -> bool {
        match self {
            CounterSource::Instrumented => Normalised::NAMES.contains(&name),
            CounterSource::Hardware => Self::HARDWARE_MEASURES.contains(&name),
        }
    }

    /// The normalised counters this source measures, in [`Normalised::NAMES`] order.
    pub fn measured(self) -> Vec<&'static str> {
        Normalised::NAMES.into_iter().filter(|n| self.measures(n)).collect()
    }

    /// Whether divergent branches, reconvergences and the mix are counted.
    pub fn counts_branches(self) -> bool {
        self == CounterSource::Instrumented
    }
}

/// The counters of a run: the section `counters` of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountersSection {
    /// Where the counters come from (absent in reports written before
    /// hardware counters existed: instrumented).
    #[serde(default)]
    pub source: CounterSource,
    /// Thread blocks per sampling window (0: each launch is one window).
    pub window_blocks: u32,
    /// Lanes per warp of the device.
    pub warp_size: u32,
    pub kernels: Vec<KernelCounters>,
    /// The windows outside an operational region, when the run or report
    /// was checked against one (`--region`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_check: Option<RegionCheck>,
}

/// A window outside its kernel's region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    pub kernel: String,
    pub launch: u64,
    pub window: u32,
    pub counter: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
}

/// The outcome of checking a run's counters against an operational
/// region ([`crate::region`]), as the report keeps it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RegionCheck {
    /// Windows compared with a region.
    pub windows_checked: u64,
    pub deviations: Vec<Deviation>,
    /// Kernels with counters that the region does not know (not faults).
    pub unknown_kernels: Vec<String>,
}

/// The counters of several processes' reports in one section: each
/// kernel's launches in input order (a parallel job's ranks). Sections
/// with other windows, warp sizes or sources than the first are left out,
/// with a note naming them.
pub fn merge_sections<'a>(
    inputs: impl Iterator<Item = (&'a str, Option<&'a CountersSection>)>,
) -> (Option<CountersSection>, Option<String>) {
    let mut out: Option<CountersSection> = None;
    let mut left_out = Vec::new();
    for (label, s) in inputs {
        let Some(s) = s else { continue };
        let o = out.get_or_insert_with(|| CountersSection {
            source: s.source,
            window_blocks: s.window_blocks,
            warp_size: s.warp_size,
            kernels: Vec::new(),
            region_check: None,
        });
        if (o.window_blocks, o.warp_size, o.source) != (s.window_blocks, s.warp_size, s.source) {
            left_out.push(label.to_string());
            continue;
        }
        for k in &s.kernels {
            match o.kernels.iter_mut().find(|x| x.kernel == k.kernel) {
                Some(x) => x.launches.extend(k.launches.iter().cloned()),
                None => o.kernels.push(k.clone()),
            }
        }
    }
    let note = (!left_out.is_empty())
        .then(|| format!("counters of {} left out: other sampling windows, warp size or source", left_out.join(", ")));
    (out, note)
}

/// Counters normalised per window, each in [0, 1] except `stack`
/// (pushes and pops per divergence: 0 without divergence, else at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Normalised {
    /// Inactive lane slots per lane slot of the executed warp instructions.
    pub inact: f64,
    /// (divergent branches + reconvergences) / divergent branches.
    pub stack: f64,
    /// Active lanes per lane slot (`1 - inact`).
    pub lane_efficiency: f64,
    /// Thread instructions whose guard held, per thread instruction.
    pub pred_on: f64,
    /// Divergent branches per warp instruction.
    pub divergence: f64,
}

impl Normalised {
    /// The names of the normalised counters, as region files and the
    /// command line name them.
    pub const NAMES: [&'static str; 5] = ["inact", "stack", "lane_efficiency", "pred_on", "divergence"];

    /// The values counter `name` can take: `stack` is 0 or at least 1
    /// (no upper bound), every other counter a fraction in [0, 1].
    pub fn span(name: &str) -> (f64, f64) {
        match name {
            "stack" => (0.0, f64::MAX),
            _ => (0.0, 1.0),
        }
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "inact" => self.inact,
            "stack" => self.stack,
            "lane_efficiency" => self.lane_efficiency,
            "pred_on" => self.pred_on,
            "divergence" => self.divergence,
            _ => return None,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mask_saves_and_restores_count_per_region_execution() {
        let shape = |first, end, saves, restores| RegionShape {
            first,
            end,
            mix: BTreeMap::new(),
            reconverges_into: None,
            mask_saves: saves,
            mask_restores: restores,
        };
        let l = CountLayout {
            kernel: "k".into(),
            regions: vec![shape(0, 3, 1, 0), shape(3, 5, 0, 1), shape(5, 6, 1, 2)],
            guards: vec![],
            warp_size: 64,
        };
        let slots = [
            SlotCount { warps: 4, lanes: 256, divergent: 0 },
            SlotCount { warps: 3, lanes: 40, divergent: 0 },
            SlotCount { warps: 2, lanes: 128, divergent: 0 },
        ];
        let w = fold(&l, 0, &slots).unwrap();
        assert_eq!((w.divergent_branches, w.reconvergences), (4 + 2, 3 + 4));
        assert_eq!(w.warp_instructions, 4 * 3 + 3 * 2 + 2);
        assert_eq!(w.inactive_lanes, (3 * 64 - 40) * 2);
        // a layout written before these fields existed still reads
        let old = r#"{"first":0,"end":1,"mix":{},"reconverges_into":null}"#;
        let r: RegionShape = serde_json::from_str(old).unwrap();
        assert_eq!((r.mask_saves, r.mask_restores), (0, 0));
        assert_eq!(serde_json::to_string(&r).unwrap(), old);
    }

    fn layout() -> CountLayout {
        let mix = |pairs: &[(&str, u64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        CountLayout {
            kernel: "k".into(),
            regions: vec![
                // 3 instructions ending in a divergent-capable branch
                RegionShape {
                    first: 0,
                    end: 3,
                    mix: mix(&[("int", 2), ("branch", 1)]),
                    reconverges_into: None,
                    mask_saves: 0,
                    mask_restores: 0,
                },
                // 2 instructions ending in BSYNC, merging into region 2
                RegionShape {
                    first: 3,
                    end: 5,
                    mix: mix(&[("f32.add", 1), ("reconverge", 1)]),
                    reconverges_into: Some(2),
                    mask_saves: 0,
                    mask_restores: 0,
                },
                RegionShape {
                    first: 5,
                    end: 6,
                    mix: mix(&[("branch", 1)]),
                    reconverges_into: None,
                    mask_saves: 0,
                    mask_restores: 0,
                },
            ],
            guards: vec![0],
            warp_size: 32,
        }
    }

    #[test]
    fn folds_regions_guards_and_reconvergence() {
        // one warp of 32 lanes splits 20/12 at region 0's branch; both
        // parts run region 1 and merge before region 2; the guarded
        // instruction of region 0 held on 20 lanes
        let slots = [
            SlotCount { warps: 1, lanes: 32, divergent: 1 },
            SlotCount { warps: 2, lanes: 32, divergent: 0 },
            SlotCount { warps: 1, lanes: 32, divergent: 0 },
            SlotCount { warps: 0, lanes: 20, divergent: 0 },
        ];
        let w = fold(&layout(), 0, &slots).unwrap();
        assert_eq!(w.warp_instructions, 3 + 2 * 2 + 1);
        assert_eq!(w.thread_instructions, 32 * 3 + 32 * 2 + 32);
        assert_eq!(w.thread_instructions_pred_on, w.thread_instructions - 12);
        assert_eq!(w.inactive_lanes, 2 * 32 * 2 - 64);
        assert_eq!((w.divergent_branches, w.reconvergences), (1, 1));
        assert_eq!(w.mix["f32.add"], 2);
        assert_eq!(w.mix["branch"], 2);
        let n = w.normalised(32);
        assert_eq!(n.stack, 2.0);
        assert!((n.inact - 64.0 / (8.0 * 32.0)).abs() < 1e-12);
        assert!((n.inact + n.lane_efficiency - 1.0).abs() < 1e-12);
        assert!(fold(&layout(), 0, &slots[..3]).is_err());
    }

    #[test]
    fn windows_cover_the_launch_up_to_the_cap() {
        assert_eq!(window_count(1000, 0), 1);
        assert_eq!(window_count(0, 16), 1);
        assert_eq!(window_count(16, 16), 1);
        assert_eq!(window_count(17, 16), 2);
        assert_eq!(window_count(u64::MAX, 1), MAX_WINDOWS);
    }

    #[test]
    fn hardware_counters_give_the_lane_counters_only() {
        assert_eq!(CounterSource::Hardware.measured(), ["inact", "lane_efficiency", "pred_on"]);
        assert_eq!(CounterSource::Instrumented.measured(), Normalised::NAMES);
        assert!(!CounterSource::Hardware.measures("stack") && !CounterSource::Hardware.counts_branches());
        for s in [CounterSource::Instrumented, CounterSource::Hardware] {
            assert_eq!(CounterSource::parse(s.name()), Some(s));
        }
        assert_eq!(CounterSource::parse("pmu"), None);
        // a section written before the source existed is instrumented
        let old = r#"{"window_blocks":0,"warp_size":32,"kernels":[]}"#;
        let s: CountersSection = serde_json::from_str(old).unwrap();
        assert_eq!(s.source, CounterSource::Instrumented);
        let hw = CountersSection { source: CounterSource::Hardware, ..s.clone() };
        assert!(serde_json::to_string(&hw).unwrap().contains(r#""source":"hardware""#));
        // sections of both sources are not merged
        let (merged, note) = merge_sections([("a", Some(&s)), ("b", Some(&hw))].into_iter());
        assert_eq!(merged.map(|m| m.source), Some(CounterSource::Instrumented));
        assert!(note.unwrap().contains("counters of b left out"));
    }

    #[test]
    fn an_idle_window_normalises_to_zero() {
        let n = WindowCounters::default().normalised(32);
        assert_eq!(n, Normalised::default());
        assert_eq!(Normalised::NAMES.iter().filter(|c| n.get(c).is_some()).count(), 5);
        assert_eq!(n.get("bogus"), None);
    }
}
