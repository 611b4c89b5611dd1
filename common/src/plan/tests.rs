//! The verifier's checks of injections.

use super::*;
use crate::class::InstrClass;
use crate::fault::{FaultLocation, LaneSet};
use crate::probe::{CounterId, CounterKind};
use crate::view::{Control, InstrView};

fn r(first: u16, count: u8) -> RegRange {
    RegRange::new(RegFile::PerLane, first, count)
}

/// `R2 = R0 + R1`, `@P0 R3 = R3 * R1`, `P1 = R0 < R1`, `BRA` reading R4.
fn kernel() -> KernelView {
    let mut add = InstrView::new(0, "FADD R2, R0, R1", InstrClass::Other);
    add.defs = vec![Operand::Reg(r(2, 1))].into();
    add.uses = vec![Operand::Reg(r(0, 1)), Operand::Reg(r(1, 1))].into();
    let mut mul = InstrView::new(16, "@P0 FMUL R3, R3, R1", InstrClass::Other);
    mul.defs = vec![Operand::Reg(r(3, 1))].into();
    mul.uses = vec![Operand::Reg(r(3, 1)), Operand::Reg(r(1, 1))].into();
    mul.guarded = true;
    let mut set = InstrView::new(32, "FSETP P1, R0, R1", InstrClass::Other);
    set.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 1, 1))].into();
    set.uses = vec![Operand::Reg(r(0, 1)), Operand::Reg(r(1, 1))].into();
    let mut bra = InstrView::new(48, "BRX R4", InstrClass::Other);
    bra.uses = vec![Operand::Reg(r(4, 1))].into();
    bra.control = Control::Branch;
    KernelView { name: "k".into(), instrs: vec![add, mul, set, bra] }
}

fn check(instr: u32, when: When, change: Change, lanes: u64) -> Result<(), PlanError> {
    let view = kernel();
    let mut sites = SiteTable::new();
    let site = sites.intern("k", view.instrs[instr as usize].offset, "", None);
    let mut plan = Plan::new("k");
    plan.counters.push(CounterDef { name: "activations".into(), kind: CounterKind::ThreadExecutions });
    let threads = FaultLocation { lanes: LaneSet(lanes), ..FaultLocation::sm(0) };
    plan.probes.push(Probe {
        instr,
        site,
        when,
        action: Action::Inject { change, threads, activations: CounterId(0) },
    });
    verify(&plan, &view, &sites)
}

fn why(res: Result<(), PlanError>) -> String {
    match res {
        Err(PlanError::BadInjection { why, .. }) => why,
        other => panic!("not a refused injection: {other:?}"),
    }
}

#[test]
fn valid_injections_verify() {
    use Change::*;
    let ok = [
        (0, When::After, XorDef { def: 0, mask: 1 << 31 }),
        (0, When::Before, XorUse { use_index: 1, mask: 4 }),
        (0, When::Before, SubstituteUse { use_index: 0, from: r(9, 1) }),
        (0, When::After, RedirectDef { def: 0, to: r(9, 1) }),
        (1, When::After, DiscardDef { def: 0 }),
        (0, When::After, OtherOperation { def: 0 }),
        (2, When::After, InvertPredicate { def: 0 }),
        (1, When::Before, ForceGuard),
        (0, When::After, SpecialRead { def: 0, mask: 8 }),
        (3, When::Before, Trap),
        // an index input is never restored: the instruction may overwrite it or leave
        (1, When::Before, XorInput { reg: r(3, 1), mask: 1 << 10 }),
        (3, When::Before, XorInput { reg: r(4, 1), mask: 1 }),
    ];
    for (instr, when, change) in ok {
        check(instr, when, change.clone(), 1).unwrap_or_else(|e| panic!("{change:?}: {e}"));
    }
}

#[test]
fn broken_injections_are_refused_with_the_reason() {
    use Change::*;
    let cases = [
        (0, When::Before, XorDef { def: 0, mask: 1 }, "after the instruction"),
        (0, When::After, XorDef { def: 1, mask: 1 }, "no destination 1"),
        (0, When::After, XorDef { def: 0, mask: 0 }, "zero mask"),
        (0, When::After, XorUse { use_index: 0, mask: 1 }, "before the instruction"),
        (1, When::Before, XorUse { use_index: 0, mask: 1 }, "overwritten by the instruction"),
        (3, When::Before, SubstituteUse { use_index: 0, from: r(5, 1) }, "cannot be restored"),
        (0, When::Before, SubstituteUse { use_index: 0, from: r(8, 2) }, "file and width"),
        (0, When::Before, SubstituteUse { use_index: 0, from: r(0, 1) }, "the operand itself"),
        (0, When::After, RedirectDef { def: 0, to: RegRange::new(RegFile::Uniform, 2, 1) }, "file and width"),
        (0, When::After, InvertPredicate { def: 0 }, "not a predicate"),
        (0, When::Before, ForceGuard, "no guard predicate"),
        (1, When::After, ForceGuard, "before the instruction"),
        (0, When::After, Trap, "before the instruction"),
        (0, When::After, XorInput { reg: r(0, 1), mask: 1 }, "before the instruction"),
        (0, When::Before, XorInput { reg: r(3, 1), mask: 1 }, "does not read"),
        (0, When::Before, XorInput { reg: r(0, 2), mask: 1 }, "does not read"),
        (0, When::Before, XorInput { reg: r(1, 1), mask: 0 }, "zero mask"),
    ];
    for (instr, when, change, expected) in cases {
        let w = why(check(instr, when, change.clone(), 1));
        assert!(w.contains(expected), "{change:?}: `{w}` lacks `{expected}`");
    }
    assert!(why(check(0, When::After, XorDef { def: 0, mask: 1 }, 0)).contains("no lane"));
}

#[test]
fn an_undeclared_activation_counter_is_refused() {
    let view = kernel();
    let mut sites = SiteTable::new();
    let site = sites.intern("k", 0, "", None);
    let mut plan = Plan::new("k");
    let action = Action::Inject {
        change: Change::XorDef { def: 0, mask: 1 },
        threads: FaultLocation::sm(0),
        activations: CounterId(0),
    };
    plan.probes.push(Probe { instr: 0, site, when: When::After, action });
    assert!(matches!(verify(&plan, &view, &sites), Err(PlanError::UnknownCounter { counter: 0, .. })));
}
