//! The counters tool: a plan that counts every instruction of a kernel
//! with one device update per *count region*, not per instruction.
//!
//! A count region is a run of instructions of one basic block that a warp
//! executes with one active mask: a block, split after each reconvergence
//! instruction (where parts of a diverged warp merge) and, where the
//! program manages the active mask itself, after each instruction that
//! changes it ([`MaskEffect`], given by the backend like the mix). Each region gets
//! one `Count` probe at its first unguarded instruction (a call placed at
//! a guarded instruction runs only where the guard holds); the device
//! adds the warp's execution and its active lanes to the region's slot,
//! warp-aggregated (one lane updates). A region whose every instruction
//! is guarded is counted at its first instruction and listed in
//! [`CountPlan::guarded_heads`]: its counts cover only warps in which the
//! guard held somewhere. Each guarded instruction gets a `Count` probe
//! of its own, which adds the lanes whose guard held. A region ending in a
//! conditional branch inside the kernel names it, so the lowering can
//! also count executions that split the warp.
//!
//! Counting only on edges outside a maximum spanning tree (Knuth;
//! Ball–Larus) would save further updates for lane counts, which are
//! conserved along edges; warp counts are not (a divergent branch turns
//! one warp execution into two), so every region is counted here.

use crate::cfg::Cfg;
use crate::counters::{CountLayout, MaskEffect, MixClass, RegionShape};
use crate::plan::Plan;
use crate::probe::{Action, CounterDef, CounterId, CounterKind, Probe, When};
use crate::site::SiteTable;
use crate::view::{Control, KernelView};
use std::collections::BTreeMap;

/// The counters tool's options.
#[derive(Debug, Clone)]
pub struct Counters {
    /// Lanes per warp of the target (32 on NVIDIA, 64 on CDNA).
    pub warp_size: u32,
}

/// A counting plan and how the host folds its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountPlan {
    pub plan: Plan,
    pub layout: CountLayout,
    /// Regions whose every instruction is guarded (see the module doc).
    pub guarded_heads: Vec<u32>,
}

impl Counters {
    pub fn name(&self) -> &'static str {
        "counters"
    }

    /// Plan `view`, whose control-flow graph is `cfg`; `mix[i]` is the
    /// mix class of instruction `i`.
    pub fn plan(&self, view: &KernelView, cfg: &Cfg, mix: &[MixClass], sites: &mut SiteTable) -> CountPlan {
        self.plan_masked(view, cfg, mix, &[], sites)
    }

    /// [`Counters::plan`] where `masks[i]` says what instruction `i` does to
    /// the active mask (missing entries: nothing): a region ends after each
    /// instruction that changes it, and counts its saves and restores.
    pub fn plan_masked(
        &self,
        view: &KernelView,
        cfg: &Cfg,
        mix: &[MixClass],
        masks: &[MaskEffect],
        sites: &mut SiteTable,
    ) -> CountPlan {
        let mask = |i: usize| masks.get(i).copied().unwrap_or_default();
        let mut regions: Vec<RegionShape> = Vec::new();
        let mut branches: Vec<Option<u32>> = Vec::new();
        for block in &cfg.blocks {
            let mut first = block.start;
            for i in block.start..block.end {
                let last_of_block = i + 1 == block.end;
                let reconverges = mix.get(i) == Some(&MixClass::Reconverge);
                let changes_mask = mask(i) != MaskEffect::None;
                if !(last_of_block || reconverges || changes_mask) {
                    continue;
                }
                let mut counts: BTreeMap<String, u64> = BTreeMap::new();
                for m in &mix[first.min(mix.len())..(i + 1).min(mix.len())] {
                    *counts.entry(m.label()).or_default() += 1;
                }
                let next = regions.len() as u32 + 1;
                let into = (reconverges && !last_of_block).then_some(next);
                regions.push(RegionShape {
                    first: first as u32,
                    end: i as u32 + 1,
                    mix: counts,
                    reconverges_into: into,
                    mask_saves: (first..=i).filter(|&j| mask(j) == MaskEffect::Save).count() as u32,
                    mask_restores: (first..=i).filter(|&j| mask(j) == MaskEffect::Restore).count() as u32,
                });
                let ins = &view.instrs[i];
                let splits =
                    last_of_block && ins.control == Control::CondBranch && ins.guarded && block.succs.len() == 2;
                branches.push(splits.then_some(i as u32));
                first = i + 1;
            }
        }
        let mut plan = Plan::new(view.name.clone());
        let mut guarded_heads = Vec::new();
        let site = |sites: &mut SiteTable, i: usize| {
            let ins = &view.instrs[i];
            sites.intern(&view.name, ins.offset, ins.text.clone(), ins.location.clone())
        };
        for (r, shape) in regions.iter().enumerate() {
            let range = shape.first as usize..shape.end as usize;
            let head = range.clone().find(|&i| !view.instrs[i].guarded).unwrap_or_else(|| {
                guarded_heads.push(r as u32);
                range.start
            });
            plan.counters.push(CounterDef {
                name: format!("region{r}"),
                kind: CounterKind::Region { first: shape.first, end: shape.end, branch: branches[r] },
            });
            let s = site(sites, head);
            plan.probes.push(Probe {
                instr: head as u32,
                site: s,
                when: When::Before,
                action: Action::Count { counter: CounterId(r as u16) },
            });
        }
        let mut guards = Vec::new();
        for (r, shape) in regions.iter().enumerate() {
            for i in shape.first..shape.end {
                if !view.instrs[i as usize].guarded {
                    continue;
                }
                let id = CounterId((regions.len() + guards.len()) as u16);
                guards.push(r as u32);
                plan.counters.push(CounterDef { name: format!("guard{i}"), kind: CounterKind::GuardHeld { instr: i } });
                let s = site(sites, i as usize);
                plan.probes.push(Probe {
                    instr: i,
                    site: s,
                    when: When::Before,
                    action: Action::Count { counter: id },
                });
            }
        }
        plan.normalize();
        let layout = CountLayout { kernel: view.name.clone(), regions, guards, warp_size: self.warp_size };
        CountPlan { plan, layout, guarded_heads }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::cfg::Target;
    use crate::class::{FpFormat, FpOp, InstrClass};
    use crate::plan::verify;
    use crate::view::InstrView;

    /// 0: ISETP; 1: @P0 BRA 4; 2: FADD; 3: BSYNC; 4: @P1 STG (branch
    /// target, guarded); 5: EXIT
    fn kernel() -> (KernelView, Vec<MixClass>) {
        let mut v = vec![
            InstrView::new(0x00, "ISETP.GT.AND P0, PT, R0, 1, PT", InstrClass::Other),
            InstrView::new(0x10, "@P0 BRA 0x40", InstrClass::Other),
            InstrView::new(0x20, "FADD R1, R2, R3", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Add }),
            InstrView::new(0x30, "BSYNC B0", InstrClass::Other),
            InstrView::new(0x40, "@P1 STG.E [R2], R1", InstrClass::Other),
            InstrView::new(0x50, "EXIT", InstrClass::Other),
        ];
        v[1].guarded = true;
        v[1].control = Control::CondBranch;
        v[3].control = Control::Barrier;
        v[4].guarded = true;
        v[5].control = Control::Exit;
        let mix = vec![
            MixClass::Integer,
            MixClass::Branch,
            MixClass::Fp { class: v[2].class },
            MixClass::Reconverge,
            MixClass::Store { space: crate::counters::MemSpace::Global },
            MixClass::Branch,
        ];
        (KernelView { name: "k".into(), instrs: v }, mix)
    }

    #[test]
    fn one_probe_per_region_and_guarded_instruction() {
        let (view, mix) = kernel();
        let cfg = Cfg::build(&view, |i| if i == 1 { Target::Instr(4) } else { Target::Leave }).unwrap();
        let mut sites = SiteTable::new();
        let cp = Counters { warp_size: 32 }.plan(&view, &cfg, &mix, &mut sites);
        verify(&cp.plan, &view, &sites).unwrap();
        let spans: Vec<(u32, u32)> = cp.layout.regions.iter().map(|r| (r.first, r.end)).collect();
        // blocks 0..2, 2..4 (BSYNC ends its region), 4..6
        assert_eq!(spans, vec![(0, 2), (2, 4), (4, 6)]);
        // the BSYNC is the block's last instruction: no merge measured
        assert_eq!(cp.layout.regions[1].reconverges_into, None);
        assert_eq!(cp.layout.instructions(), view.instrs.len() as u64);
        assert_eq!(cp.layout.guards, vec![0, 2]);
        let at: Vec<u32> = cp.plan.probes.iter().map(|p| p.instr).collect();
        // region heads 0, 2, 5 (4 is guarded), guards at 1 and 4
        assert_eq!(at, vec![0, 1, 2, 4, 5]);
        assert!(matches!(cp.plan.counters[0].kind, CounterKind::Region { branch: Some(1), .. }));
        assert!(cp.guarded_heads.is_empty());
        // the verifier rejects a region count moved off its head, a guard
        // count off its instruction, a branch that is not the region's end
        let mut moved = cp.plan.clone();
        moved.probes[2].instr = 3;
        moved.probes[2].site = sites.intern("k", 0x30, "BSYNC B0", None);
        assert!(matches!(verify(&moved, &view, &sites), Err(crate::plan::PlanError::MisplacedCount { .. })));
        let mut moved = cp.plan.clone();
        moved.probes[1].instr = 2;
        moved.normalize();
        assert!(verify(&moved, &view, &sites).is_err());
        let mut bad = cp.plan.clone();
        bad.counters[1].kind = CounterKind::Region { first: 2, end: 4, branch: Some(2) };
        assert!(matches!(verify(&bad, &view, &sites), Err(crate::plan::PlanError::BadRegion { .. })));
    }

    #[test]
    fn a_change_of_the_active_mask_ends_its_region() {
        let (mut view, mix) = kernel();
        view.instrs[1].control = Control::None;
        view.instrs[1].guarded = false;
        view.instrs[4].guarded = false;
        let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
        let mut sites = SiteTable::new();
        let mix = vec![MixClass::Integer; mix.len()];
        let masks = [MaskEffect::None, MaskEffect::Save, MaskEffect::None, MaskEffect::Write, MaskEffect::Restore];
        let cp = Counters { warp_size: 64 }.plan_masked(&view, &cfg, &mix, &masks, &mut sites);
        verify(&cp.plan, &view, &sites).unwrap();
        let spans: Vec<(u32, u32)> = cp.layout.regions.iter().map(|r| (r.first, r.end)).collect();
        assert_eq!(spans, vec![(0, 2), (2, 4), (4, 5), (5, 6)]);
        let pushes: Vec<(u32, u32)> = cp.layout.regions.iter().map(|r| (r.mask_saves, r.mask_restores)).collect();
        assert_eq!(pushes, vec![(1, 0), (0, 0), (0, 1), (0, 0)]);
        assert_eq!(cp.layout.instructions(), view.instrs.len() as u64);
    }

    #[test]
    fn a_reconvergence_inside_a_block_splits_it() {
        let (mut view, mix) = kernel();
        view.instrs[1].control = Control::None; // no branch: one block
        view.instrs[1].guarded = false;
        let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
        let mut sites = SiteTable::new();
        let cp = Counters { warp_size: 32 }.plan(&view, &cfg, &mix, &mut sites);
        verify(&cp.plan, &view, &sites).unwrap();
        let spans: Vec<(u32, u32)> = cp.layout.regions.iter().map(|r| (r.first, r.end)).collect();
        assert_eq!(spans, vec![(0, 4), (4, 6)]);
        assert_eq!(cp.layout.regions[0].reconverges_into, Some(1));
    }
}
