//! Tests of the thinning: which checks fast mode drops, and why.

use super::*;
use crate::cfg::{CfgError, Target};
use crate::class::{FpFormat, FpOp, InstrClass};
use crate::plan::verify;
use crate::site::SiteTable;
use crate::tool::{Detector, Tool};
use crate::view::InstrView;

fn r(n: u16) -> Operand {
    Operand::Reg(RegRange::new(RegFile::PerLane, n, 1))
}

fn fp(offset: u64, op: FpOp, def: u16, uses: &[u16]) -> InstrView {
    let mut v = InstrView::new(offset, format!("F{op:?} R{def}"), InstrClass::Arith { format: FpFormat::F32, op });
    v.defs = vec![r(def)].into();
    v.uses = uses.iter().map(|&u| r(u)).collect();
    if matches!(op, FpOp::Add | FpOp::Mul | FpOp::Fma) {
        v.flow = ValueFlow::Propagates;
    }
    v
}

fn other(offset: u64, text: &str, defs: &[u16], uses: &[u16], control: Control) -> InstrView {
    let mut v = InstrView::new(offset, text, InstrClass::Other);
    v.defs = defs.iter().map(|&u| r(u)).collect();
    v.uses = uses.iter().map(|&u| r(u)).collect();
    v.control = control;
    v
}

/// Kept checks, by instruction index.
fn kept(view: &KernelView, target: impl Fn(usize) -> Target) -> (Vec<u32>, ThinStats) {
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(view, &mut sites);
    let cfg = Cfg::build(view, target).unwrap();
    let (thin, stats) = thin(&plan, view, &cfg);
    verify(&thin, view, &sites).unwrap();
    (thin.probes.iter().map(|p| p.instr).collect(), stats)
}

/// acc = fma(a, b, acc) in a loop; after the loop acc * alpha is stored.
fn loop_kernel(store_acc_directly: bool) -> KernelView {
    let mut instrs = vec![
        other(0x00, "LDG R2", &[2], &[], Control::None),
        fp(0x10, FpOp::Fma, 4, &[2, 2, 4]),
        fp(0x20, FpOp::Fma, 4, &[2, 3, 4]),
        other(0x30, "@P0 BRA 0x10", &[], &[], Control::CondBranch),
    ];
    if store_acc_directly {
        instrs.push(other(0x40, "STG R4", &[], &[4], Control::None));
    } else {
        instrs.push(fp(0x40, FpOp::Mul, 5, &[4, 6]));
        instrs.push(other(0x50, "STG R5", &[], &[5], Control::None));
    }
    instrs.push(other(0x60, "EXIT", &[], &[], Control::Exit));
    KernelView { name: "k".into(), instrs }
}

/// `FSETP P0, R{a}, R{b}`: a comparison, whose operands the detector
/// checks for NaN before it.
fn cmp(offset: u64, a: u16, b: u16) -> InstrView {
    let mut v = InstrView::new(offset, format!("FSETP P0, R{a}, R{b}"), InstrClass::Compare { format: FpFormat::F32 });
    v.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
    v.uses = vec![r(a), r(b)].into();
    v
}

/// An instruction that reads `src` and hides its NaN (a reciprocal
/// seen as opaque), writing `def`.
fn opaque_use(offset: u64, def: u16, src: u16) -> InstrView {
    let mut v = fp(offset, FpOp::Div, def, &[src]);
    v.flow = ValueFlow::Opaque;
    v
}

/// `instrs`, then a store of `stored` and an exit.
fn stored(mut instrs: Vec<InstrView>, stored: u16) -> KernelView {
    let at = instrs.last().map_or(0, |i| i.offset + 0x10);
    instrs.push(other(at, "STG", &[], &[stored], Control::None));
    instrs.push(other(at + 0x10, "EXIT", &[], &[], Control::Exit));
    KernelView { name: "k".into(), instrs }
}

/// A value whose check stays (its only reader hides a NaN), then
/// compared: `R3 = R1 + R2` (checked), `R4 = MUFU.RCP R3`-like opaque
/// use, then `FSETP R3, R9` and a store.
fn compare_after_check(between: Option<InstrView>, other_operand: u16) -> KernelView {
    let mut instrs = vec![fp(0x00, FpOp::Add, 3, &[1, 2]), opaque_use(0x10, 4, 3)];
    instrs.extend(between);
    instrs.push(cmp(0x30, 3, other_operand));
    stored(instrs, 4)
}

/// `R3 = R1 + R2`, spilled to a slot, the slot loaded into R5 after
/// `between`, and `R6 = R5 * R5` stored: R3's check is kept or not.
fn spilled(between: Option<(InstrView, SlotEffect)>) -> (Vec<u32>, usize) {
    let stack = RegRange::new(RegFile::Stack, 2, 1);
    let reg = |n: u16| RegRange::new(RegFile::PerLane, n, 1);
    let mut instrs = vec![fp(0x00, FpOp::Add, 3, &[1, 2]), other(0x10, "STL [R1+0x8], R3", &[], &[3], Control::None)];
    let mut slots = vec![SlotEffect::None, SlotEffect::Store { slot: stack, from: reg(3) }];
    if let Some((ins, effect)) = between {
        instrs.push(ins);
        slots.push(effect);
    }
    let at = instrs.last().map_or(0, |i| i.offset) + 0x10;
    instrs.push(other(at, "LDL R5, [R1+0x8]", &[5], &[], Control::None));
    slots.push(SlotEffect::Load { slot: stack, to: reg(5) });
    instrs.push(fp(at + 0x10, FpOp::Mul, 6, &[5, 5]));
    let view = stored(instrs, 6);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&view, &mut sites);
    let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
    let (thin, _) = thin_with_slots(&plan, &view, &cfg, &slots);
    let n = view.instrs.len();
    (thin.probes.iter().map(|p| p.instr).collect(), n)
}

#[test]
fn a_spilled_value_is_observed_where_its_reload_is() {
    // R3 reaches the checked R6 through the slot: only R6 is checked
    let (kept, n) = spilled(None);
    assert_eq!(kept, vec![n as u32 - 3], "the product alone");
    // the slot written again in between: R5 is not R3
    let again = other(0x20, "STL [R1+0x8], RZ", &[], &[], Control::None);
    let (kept, _) = spilled(Some((again, SlotEffect::Writes(vec![RegRange::new(RegFile::Stack, 2, 1)]))));
    assert_eq!(kept[0], 0, "R3 checked where it is made: {kept:?}");
    // the stack pointer changed in between: no slot is known
    let moved = other(0x20, "VIADD R1, R1, -0x20", &[1], &[1], Control::None);
    let (kept, _) = spilled(Some((moved, SlotEffect::Clobber)));
    assert_eq!(kept[0], 0, "{kept:?}");
    // another slot written in between changes nothing
    let elsewhere = other(0x20, "STL [R1+0x10], RZ", &[], &[], Control::None);
    let (kept, _) = spilled(Some((elsewhere, SlotEffect::Writes(vec![RegRange::new(RegFile::Stack, 4, 1)]))));
    assert!(!kept.contains(&0), "{kept:?}");
}

#[test]
fn a_branch_of_unknown_target_ends_what_is_known_after_it() {
    // 0: R3 = R1 + R2; 1: BRX (or BRA to 2); 2: R4 = R3 * R3;
    // 3: R5 = opaque(R4); 4: STG R5; 5: EXIT
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            fp(0x00, FpOp::Add, 3, &[1, 2]),
            other(0x10, "BRX R6", &[], &[6], Control::Branch),
            fp(0x20, FpOp::Mul, 4, &[3, 3]),
            opaque_use(0x30, 5, 4),
            other(0x40, "STG R5", &[], &[5], Control::None),
            other(0x50, "EXIT", &[], &[], Control::Exit),
        ],
    };
    let unknown = |i: usize| if i == 1 { Target::Unknown } else { Target::Leave };
    assert_eq!(Cfg::build(&view, unknown), Err(CfgError::UnknownTarget { instr: 1 }));
    let cfg = Cfg::build_with_unknown_exits(&view, unknown).unwrap();
    assert_eq!(cfg.unknown_exits, vec![cfg.block_of[1]]);
    assert!(cfg.blocks[cfg.block_of[1]].opaque_exit && cfg.blocks[cfg.block_of[1]].succs.is_empty());
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&view, &mut sites);
    let (thin_plan, stats) = thin(&plan, &view, &cfg);
    verify(&thin_plan, &view, &sites).unwrap();
    let unknown_kept: Vec<u32> = thin_plan.probes.iter().map(|p| p.instr).collect();
    // the branch's target known: R3 reaches the check of R4, and is not checked itself
    let (known, _) = kept(&view, |i| if i == 1 { Target::Instr(2) } else { Target::Leave });
    assert!(!known.contains(&0), "{known:?}");
    // not known: nothing after the branch is known, R3 is checked where it is made
    assert!(unknown_kept.contains(&0), "{unknown_kept:?}");
    assert_eq!(stats.repeated, 0);
}

#[test]
fn a_subroutine_reaching_a_branch_of_unknown_target_writes_what_is_not_known() {
    // 0: CALL 3; 1: STG R9; 2: EXIT; 3: R9 = R1 + R2; 4: @P0 BRX R6; 5: RET
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            other(0x00, "CALL 0x30", &[], &[], Control::Call),
            other(0x10, "STG R9", &[], &[9], Control::None),
            other(0x20, "EXIT", &[], &[], Control::Exit),
            fp(0x30, FpOp::Add, 9, &[1, 2]),
            other(0x40, "@P0 BRX R6", &[], &[6], Control::CondBranch),
            other(0x50, "RET", &[], &[], Control::Return),
        ],
    };
    let target = |unknown: bool| {
        move |i: usize| match i {
            0 => Target::Instr(3),
            4 if unknown => Target::Unknown,
            4 => Target::Instr(5),
            _ => Target::Leave,
        }
    };
    let known = Cfg::build(&view, target(false)).unwrap();
    assert!(known.blocks[0].call_writes.is_some());
    let cfg = Cfg::build_with_unknown_exits(&view, target(true)).unwrap();
    assert_eq!(cfg.blocks[0].callee, Some(cfg.block_of[3]));
    assert_eq!(cfg.blocks[0].call_writes, None, "the subroutine may go anywhere");
    assert!(cfg.blocks[0].opaque_exit);
}

#[test]
fn a_call_writes_the_slots_its_subroutine_stores_to() {
    // 0: R3 = R1 + R2; 1: STL slot 2 <- R3; 2: CALL 7; 3: LDL R5 <- slot 2;
    // 4: R6 = R5 * R5; 5: STG R6; 6: EXIT; 7: STL slot `written` <- R9; 8: RET
    let run = |written: u16| {
        let stack = |w: u16| RegRange::new(RegFile::Stack, w, 1);
        let reg = |n: u16| RegRange::new(RegFile::PerLane, n, 1);
        let view = KernelView {
            name: "k".into(),
            instrs: vec![
                fp(0x00, FpOp::Add, 3, &[1, 2]),
                other(0x10, "STL", &[], &[3], Control::None),
                other(0x20, "CALL 0x70", &[], &[], Control::Call),
                other(0x30, "LDL R5", &[5], &[], Control::None),
                fp(0x40, FpOp::Mul, 6, &[5, 5]),
                other(0x50, "STG R6", &[], &[6], Control::None),
                other(0x60, "EXIT", &[], &[], Control::Exit),
                other(0x70, "STL", &[], &[9], Control::None),
                other(0x80, "RET", &[], &[], Control::Return),
            ],
        };
        let slots = vec![
            SlotEffect::None,
            SlotEffect::Store { slot: stack(2), from: reg(3) },
            SlotEffect::None,
            SlotEffect::Load { slot: stack(2), to: reg(5) },
            SlotEffect::None,
            SlotEffect::None,
            SlotEffect::None,
            SlotEffect::Store { slot: stack(written), from: reg(9) },
            SlotEffect::None,
        ];
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let cfg = Cfg::build(&view, |i| if i == 2 { Target::Instr(7) } else { Target::Leave }).unwrap();
        let (thin, _) = thin_with_slots(&plan, &view, &cfg, &slots);
        thin.probes.iter().map(|p| p.instr).collect::<Vec<u32>>()
    };
    assert_eq!(run(5), vec![4], "the subroutine stores elsewhere: R3 is observed through its slot");
    assert_eq!(run(2), vec![0, 4], "the subroutine stores to R3's slot");
}

#[test]
fn a_comparison_of_a_checked_value_needs_no_check_of_its_own() {
    let view = compare_after_check(None, 9);
    let (kept, stats) = kept(&view, |_| Target::Leave);
    // R3 checked where it is made (its reader hides a NaN); the
    // comparison's check of R3 repeats it, its check of R9 (loaded)
    // stays; the division's check stays
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&view, &mut sites);
    let before: Vec<u32> = plan.probes.iter().map(|p| p.instr).collect();
    assert_eq!(before, vec![0, 1, 2]);
    assert_eq!(kept, vec![0, 1, 2], "the comparison keeps a check for R9");
    let cfg = Cfg::build(&view, |_| Target::Leave).unwrap();
    let (thin_plan, _) = thin(&plan, &view, &cfg);
    let cmp_values: Vec<&crate::probe::CheckedValues> = thin_plan
        .probes
        .iter()
        .filter(|p| p.instr == 2)
        .filter_map(|p| match &p.action {
            Action::CheckFp { values, .. } => Some(values),
            _ => None,
        })
        .collect();
    assert_eq!(cmp_values.iter().map(|v| v.len()).sum::<usize>(), 2, "one check of both operands, kept whole");
    assert_eq!(stats.repeated, 0);
}

#[test]
fn repeated_checks_of_one_value_are_dropped() {
    // FSETP R3, R5 after R3 was checked where it was made and copied to R5
    let mut mov = other(0x20, "MOV R5, R3", &[5], &[3], Control::None);
    mov.flow = ValueFlow::Copies(0);
    let view = stored(vec![fp(0x00, FpOp::Add, 3, &[1, 2]), opaque_use(0x10, 4, 3), mov, cmp(0x30, 3, 5)], 4);
    let (kept, stats) = kept(&view, |_| Target::Leave);
    assert_eq!(kept, vec![0, 1], "the comparison reads R3 and its copy");
    assert_eq!(stats.repeated, 1);
}

#[test]
fn a_source_of_a_checked_result_counts_as_checked() {
    // R5 = R3 * R3 is checked (read by an opaque instruction only);
    // FSETP R3, R3 afterwards needs no check
    let view = stored(vec![fp(0x00, FpOp::Mul, 5, &[3, 3]), opaque_use(0x10, 6, 5), cmp(0x20, 3, 3)], 6);
    let (kept, stats) = kept(&view, |_| Target::Leave);
    assert_eq!(kept, vec![0, 1]);
    assert_eq!(stats.repeated, 1);
}

#[test]
fn a_check_on_one_path_only_or_before_a_redefinition_is_not_repeated() {
    // R3 written again (by a load) between the check and the comparison
    // (without the load, the comparison's check would be a repeat)
    let (k, stats) = kept(&compare_after_check(None, 3), |_| Target::Leave);
    assert_eq!((k, stats.repeated), (vec![0, 1], 1));
    let view = compare_after_check(Some(other(0x20, "LDG R3", &[3], &[], Control::None)), 3);
    let (k, stats) = kept(&view, |_| Target::Leave);
    assert!(k.contains(&3), "{k:?}");
    assert_eq!(stats.repeated, 0);
    // the check on one side of a branch only: 0 branches over 1
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            other(0x00, "@P1 BRA 0x20", &[], &[], Control::CondBranch),
            fp(0x10, FpOp::Add, 3, &[3, 3]),
            cmp(0x20, 3, 3),
            other(0x30, "EXIT", &[], &[], Control::Exit),
        ],
    };
    let (k, stats) = kept(&view, |i| if i == 0 { Target::Instr(2) } else { Target::Leave });
    assert!(k.contains(&2), "{k:?}");
    assert_eq!(stats.repeated, 0);
    // a check at a guarded instruction looks only where the guard holds
    let mut guarded = fp(0x00, FpOp::Add, 3, &[1, 2]);
    guarded.guarded = true;
    let view = stored(vec![guarded, opaque_use(0x10, 4, 3), cmp(0x20, 3, 3)], 4);
    let (k, stats) = kept(&view, |_| Target::Leave);
    assert!(k.contains(&2), "{k:?}");
    assert_eq!(stats.repeated, 0);
}

#[test]
fn two_repeats_of_each_other_keep_one() {
    // two comparisons of a loaded R3, nothing else: the second repeats
    // the first, which stays
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            other(0x00, "LDG R3", &[3], &[], Control::None),
            cmp(0x10, 3, 3),
            cmp(0x20, 3, 3),
            other(0x30, "EXIT", &[], &[], Control::Exit),
        ],
    };
    let (kept, stats) = kept(&view, |_| Target::Leave);
    assert_eq!(kept, vec![1]);
    assert_eq!(stats.repeated, 1);
}

#[test]
fn loop_accumulators_are_checked_where_they_leave() {
    let view = loop_kernel(false);
    let (kept, stats) = kept(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave });
    // both FMAs feed the multiply after the loop on every path: only
    // the stored product is checked
    assert_eq!(kept, vec![4]);
    assert_eq!(stats, ThinStats { checks: 3, dropped: 2, dropped_subnormal: 2, ..ThinStats::default() });
}

#[test]
fn a_loop_result_stored_after_the_loop_is_checked_where_the_loop_exits() {
    let view = loop_kernel(true);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&view, &mut sites);
    let cfg = Cfg::build(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave }).unwrap();
    let (thin, stats) = thin(&plan, &view, &cfg);
    verify(&thin, &view, &sites).unwrap();
    // the first FMA feeds the second; the second's result leaves the
    // loop for the store: one check of R4 before the store, named by
    // the second FMA's site, replaces both checks in the loop
    assert_eq!(thin.probes.len(), 1);
    let p = &thin.probes[0];
    assert_eq!((p.instr, p.when), (4, When::Before));
    assert_eq!(sites.get(p.site).map(|s| s.offset), Some(0x20));
    assert!(
        matches!(&p.action, Action::CheckFp { values, .. } if values == &vec![ValueRef::Reg(RegRange::new(RegFile::PerLane, 4, 1))])
    );
    assert_eq!(
        stats,
        ThinStats { checks: 2, dropped: 2, dropped_subnormal: 2, loop_exit_checks: 1, ..ThinStats::default() }
    );
}

#[test]
fn a_jump_back_that_closes_no_cycle_is_no_loop() {
    // a divergent warp's out-of-line path, laid out after the exit:
    // it jumps back into the middle and runs on; nothing cycles, so
    // nothing is checked "where a loop exits" (at the second store,
    // where R4 would hold what the first path made)
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            other(0x00, "LDG R2", &[2], &[], Control::None),
            other(0x10, "BRA.DIV 0x60", &[], &[], Control::CondBranch),
            fp(0x20, FpOp::Add, 4, &[2, 2]),
            other(0x30, "BRA.DIV 0x80", &[], &[], Control::CondBranch),
            other(0x40, "STG R4", &[], &[4], Control::None),
            other(0x50, "EXIT", &[], &[], Control::Exit),
            fp(0x60, FpOp::Mul, 4, &[2, 2]),
            other(0x70, "BRA 0x20", &[], &[], Control::Branch),
            other(0x80, "STG R4", &[], &[4], Control::None),
            other(0x90, "EXIT", &[], &[], Control::Exit),
        ],
    };
    let target = |i| match i {
        1 => Target::Instr(6),
        3 => Target::Instr(8),
        7 => Target::Instr(2),
        _ => Target::Leave,
    };
    let (checked, stats) = kept(&view, target);
    assert_eq!(stats.loop_exit_checks, 0, "{checked:?}");
    assert!(!checked.contains(&8), "{checked:?}");
}

#[test]
fn a_value_dead_after_the_loop_keeps_its_check_inside() {
    // the loop's result is overwritten right after the loop: nothing to
    // check at the exit, so the check stays in the loop
    let mut view = loop_kernel(true);
    view.instrs[4] = other(0x40, "MOV R4, R9", &[4], &[9], Control::None);
    let (kept, _) = kept(&view, |i| if i == 3 { Target::Instr(1) } else { Target::Leave });
    assert_eq!(kept, vec![2]);
}

#[test]
fn guarded_redefinitions_opaque_uses_divisions_and_copies() {
    let mut rcp = fp(0x10, FpOp::Div, 3, &[1]);
    rcp.flow = ValueFlow::Opaque;
    let mut guarded = fp(0x30, FpOp::Add, 6, &[5, 5]);
    guarded.guarded = true;
    let mut mov = other(0x40, "MOV R7, R6", &[7], &[6], Control::None);
    mov.flow = ValueFlow::Copies(0);
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            fp(0x00, FpOp::Add, 1, &[0, 0]), // read only by the reciprocal: kept
            rcp,                             // a division: always kept
            fp(0x20, FpOp::Mul, 5, &[3, 3]), // read by a guarded add only: kept
            guarded,                         // copied to R7, then read by an add: dropped
            mov,
            fp(0x50, FpOp::Add, 8, &[7, 7]), // stored: kept
            other(0x60, "STG R8", &[], &[8], Control::None),
            other(0x70, "EXIT", &[], &[], Control::Exit),
        ],
    };
    let (kept, stats) = kept(&view, |_| Target::Leave);
    assert_eq!(kept, vec![0, 1, 2, 5]);
    assert_eq!(stats.dropped, 1);
}

#[test]
fn guarded_in_place_updates_keep_the_value_observed() {
    // r = a + a; @P0 r = r * 2^24; s = r + r; store s
    let mut scale = fp(0x10, FpOp::Mul, 1, &[1, 2]);
    scale.guarded = true;
    let mut elsewhere = fp(0x10, FpOp::Mul, 3, &[1, 2]);
    elsewhere.guarded = true;
    let view = |second: InstrView| KernelView {
        name: "k".into(),
        instrs: vec![
            fp(0x00, FpOp::Add, 1, &[0, 0]),
            second,
            fp(0x20, FpOp::Add, 4, &[1, 1]),
            other(0x30, "STG R4", &[], &[4], Control::None),
            other(0x40, "EXIT", &[], &[], Control::Exit),
        ],
    };
    assert_eq!(kept(&view(scale), |_| Target::Leave).0, vec![2]);
    // a guarded write to another register observes nothing
    assert_eq!(kept(&view(elsewhere), |_| Target::Leave).0, vec![1, 2]);
}

#[test]
fn values_survive_calls_of_subroutines_that_leave_them_alone() {
    let view = |callee_writes_r1: bool| {
        let mut instrs = vec![
            fp(0x00, FpOp::Add, 1, &[0, 0]),
            other(0x10, "CALL 0x40", &[], &[], Control::Call),
            fp(0x20, FpOp::Add, 2, &[1, 1]),
            other(0x30, "EXIT", &[], &[], Control::Exit),
        ];
        let written = if callee_writes_r1 { 1 } else { 5 };
        instrs.push(other(0x40, "MOV", &[written], &[9], Control::None));
        instrs.push(other(0x50, "RET", &[], &[], Control::Return));
        KernelView { name: "k".into(), instrs }
    };
    let target = |i: usize| {
        if i == 1 {
            Target::Instr(4)
        } else {
            Target::Leave
        }
    };
    assert_eq!(kept(&view(false), target).0, vec![2]);
    assert_eq!(kept(&view(true), target).0, vec![0, 2]);
    // a call whose target is unknown observes nothing
    assert_eq!(kept(&view(false), |i| if i == 1 { Target::Unknown } else { Target::Leave }).0, vec![0, 2]);
}

#[test]
fn compare_sources_observed_later_lose_their_check() {
    let view = |second: u16| {
        let mut setp = InstrView::new(0x10, "FSETP P0, R1, R2", InstrClass::Compare { format: FpFormat::F32 });
        setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
        setp.uses = vec![r(1), r(2)].into();
        KernelView {
            name: "k".into(),
            instrs: vec![
                other(0x00, "LDG R1", &[1, 2], &[], Control::None),
                setp,
                fp(0x20, FpOp::Add, 3, &[1, second]),
                other(0x30, "STG R3", &[], &[3], Control::None),
                other(0x40, "EXIT", &[], &[], Control::Exit),
            ],
        }
    };
    // both sources feed the add: the comparison's check goes
    assert_eq!(kept(&view(2), |_| Target::Leave).0, vec![2]);
    // R2 is never read again: the comparison's check stays
    assert_eq!(kept(&view(1), |_| Target::Leave).0, vec![1, 2]);
}

#[test]
fn compare_sources_not_observed_keep_their_check() {
    let mut setp = InstrView::new(0x10, "FSETP P0, R1, R2", InstrClass::Compare { format: FpFormat::F32 });
    setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
    setp.uses = vec![r(1), r(2)].into();
    let view = KernelView {
        name: "k".into(),
        instrs: vec![
            other(0x00, "LDG R1", &[1, 2], &[], Control::None),
            setp,
            fp(0x20, FpOp::Add, 3, &[1, 1]),
            other(0x30, "STG R3", &[], &[3], Control::None),
            other(0x40, "EXIT", &[], &[], Control::Exit),
        ],
    };
    // R2 is never read again: the comparison's check stays
    let (kept, _) = kept(&view, |_| Target::Leave);
    assert_eq!(kept, vec![1, 2]);
}
