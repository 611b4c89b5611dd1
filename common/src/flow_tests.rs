use super::*;

/// (instruction, when, sources, result, division) of a flow probe.
type Planned = (u32, When, Vec<ValueRef>, Option<ValueRef>, bool);
use crate::plan::{verify, PlanError};
use crate::report::{Collector, FlowFinding, RunInfo, SiteRef, LAUNCH_UNKNOWN};
use crate::site::{SiteId, SourceLoc};
use crate::view::{InstrView, RegRange};
use std::collections::BTreeSet;

fn f32b(v: f32) -> u64 {
    u64::from(v.to_bits())
}

fn cats(word: u16) -> Vec<(FlowState, ExceptionKind)> {
    categories_of(word).map(|c| (c.state, c.kind)).collect()
}

/// The states written plainly, per kind: the table must say the same.
fn reference(word: u16) -> BTreeSet<(FlowState, ExceptionKind)> {
    let mut out = BTreeSet::new();
    let nores = word & NO_RESULT != 0;
    let res_exc = word & (RES_NAN | RES_INF | RES_SUB) != 0;
    for (k, s, r) in [
        (ExceptionKind::Nan, SRC_NAN, RES_NAN),
        (ExceptionKind::Inf, SRC_INF, RES_INF),
        (ExceptionKind::Sub, SRC_SUB, RES_SUB),
    ] {
        let (s, r) = (word & s != 0, word & r != 0);
        if nores {
            if s {
                out.insert((FlowState::Compare, k));
            }
            continue;
        }
        if r && !s {
            let div0 = k == ExceptionKind::Inf && word & DIVISION != 0 && word & SRC_ZERO != 0;
            out.insert((FlowState::Appear, if div0 { ExceptionKind::Div0 } else { k }));
        }
        if r && s {
            out.insert((FlowState::Propagate, k));
        }
        if s && !res_exc {
            out.insert((FlowState::Disappear, k));
        }
    }
    out
}

#[test]
fn the_category_table_is_the_plain_rule_for_every_lane_word() {
    for word in 0..(1u16 << 12) {
        // a lane has one result class at most, or none
        let res = (word >> 5) & 0x1f;
        if res.count_ones() > 1 || (word & NO_RESULT != 0 && res != 0) {
            continue;
        }
        let got: Vec<(FlowState, ExceptionKind)> = cats(word);
        let set: BTreeSet<_> = got.iter().copied().collect();
        assert_eq!(set.len(), got.len(), "{word:#x}: a pair twice");
        assert_eq!(set, reference(word), "{word:#x}");
        for &(s, k) in &got {
            assert!(pair_index(s, k).is_some(), "{s:?} {k:?} has no slot");
        }
    }
}

#[test]
fn lane_words_of_known_operations() {
    let w = |srcs: &[f32], res: Option<f32>, div: bool| {
        let s: Vec<u64> = srcs.iter().map(|v| f32b(*v)).collect();
        lane_word(FpFormat::F32, &s, FpFormat::F32, res.map(f32b), div)
    };
    // 0/0: NaN appears
    assert_eq!(cats(w(&[0.0, 0.0], Some(f32::NAN), true)), [(FlowState::Appear, ExceptionKind::Nan)]);
    // 1/0 at a division: division by zero; the same infinity elsewhere: an infinity
    assert_eq!(cats(w(&[1.0, 0.0], Some(f32::INFINITY), true)), [(FlowState::Appear, ExceptionKind::Div0)]);
    assert_eq!(cats(w(&[1e30, 1e30], Some(f32::INFINITY), false)), [(FlowState::Appear, ExceptionKind::Inf)]);
    assert_eq!(cats(w(&[1e-30], Some(f32::INFINITY), true)), [(FlowState::Appear, ExceptionKind::Inf)]);
    // NaN + 1: propagates; max(NaN, 0) = 0: disappears; inf - inf: NaN appears, the infinity is gone into it
    assert_eq!(cats(w(&[f32::NAN, 1.0], Some(f32::NAN), false)), [(FlowState::Propagate, ExceptionKind::Nan)]);
    assert_eq!(cats(w(&[f32::NAN, 0.0], Some(0.0), false)), [(FlowState::Disappear, ExceptionKind::Nan)]);
    assert_eq!(
        cats(w(&[f32::INFINITY, f32::NEG_INFINITY], Some(f32::NAN), false)),
        [(FlowState::Appear, ExceptionKind::Nan)]
    );
    // a comparison with NaN; a subnormal product
    assert_eq!(cats(w(&[f32::NAN, 1.0], None, false)), [(FlowState::Compare, ExceptionKind::Nan)]);
    assert_eq!(cats(w(&[1e-20, 1e-20], Some(1e-40), false)), [(FlowState::Appear, ExceptionKind::Sub)]);
    // nothing exceptional: no category
    assert!(cats(w(&[1.0, 2.0], Some(3.0), false)).is_empty());
    // f64 and the halves
    let d = lane_word(FpFormat::F64, &[f64::NAN.to_bits()], FpFormat::F64, Some(2.0f64.to_bits()), false);
    assert_eq!(cats(d), [(FlowState::Disappear, ExceptionKind::Nan)]);
    let h = lane_word(FpFormat::F16, &[0x7c00, 0x3c00], FpFormat::F16, Some(0x7c00), false);
    assert_eq!(cats(h), [(FlowState::Propagate, ExceptionKind::Inf)]);
    // a subnormal f64 converted to f32 becomes 0: it disappears there
    let c = lane_word(FpFormat::F64, &[1e-320f64.to_bits()], FpFormat::F32, Some(f32b(0.0)), false);
    assert_eq!(cats(c), [(FlowState::Disappear, ExceptionKind::Sub)]);
}

#[test]
fn classes_round_trip() {
    let word = SRC_ZERO | SRC_NORMAL | RES_NAN | DIVISION;
    let (s, r) = classes_of(word);
    assert_eq!((s.as_slice(), r.as_slice()), (&[FlowClass::Zero, FlowClass::Normal][..], &[FlowClass::Nan][..]));
    assert_eq!(seen_of(&s, &r), word & lane::CLASSES);
}

fn reg(first: u16, count: u8) -> Operand {
    Operand::Reg(RegRange::new(RegFile::PerLane, first, count))
}

fn kernel() -> KernelView {
    let mut add = InstrView::new(0x0, "FADD R1, R2, 1", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Add });
    add.defs = vec![reg(1, 1)].into();
    add.uses = vec![reg(2, 1), Operand::Known { bits: f32b(1.0) }].into();
    let mut rcp = InstrView::new(0x10, "MUFU.RCP R4, R1", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Div });
    rcp.defs = vec![reg(4, 1)].into();
    rcp.uses = vec![reg(1, 1)].into();
    let mut dfma =
        InstrView::new(0x20, "DFMA R6, R2, R4, R6", InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma });
    dfma.defs = vec![reg(6, 2)].into();
    dfma.uses = vec![reg(2, 2), reg(4, 2), reg(6, 2)].into();
    let mut setp = InstrView::new(0x30, "FSETP.GT P0, R1, R9, P1", InstrClass::Compare { format: FpFormat::F32 });
    setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
    setp.uses = vec![reg(1, 1), reg(9, 1), Operand::Reg(RegRange::new(RegFile::Predicate, 1, 1))].into();
    let mut isinf = InstrView::new(0x38, "FSETP.GTU P0, |R1|, +INF", InstrClass::Compare { format: FpFormat::F32 });
    isinf.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
    isinf.uses = vec![reg(1, 1), Operand::Known { bits: f32b(f32::INFINITY) }].into();
    let mut hadd =
        InstrView::new(0x40, "HADD2 R3, R3, R5", InstrClass::Arith { format: FpFormat::F16x2, op: FpOp::Add });
    hadd.defs = vec![reg(3, 1)].into();
    hadd.uses = vec![reg(3, 1), reg(5, 1)].into();
    let mut mnmx = InstrView::new(0x50, "FMNMX R7, R1, RZ, !PT", InstrClass::MinMax { format: FpFormat::F32 });
    mnmx.defs = vec![reg(7, 1)].into();
    mnmx.uses = vec![reg(1, 1)].into();
    let mut f2f =
        InstrView::new(0x60, "F2F.F32.F64 R8, R2", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Conversion });
    f2f.defs = vec![reg(8, 1)].into();
    f2f.uses = vec![reg(2, 2)].into();
    f2f.source_format = crate::view::SourceFormat::Is(FpFormat::F64);
    let mut i2f = InstrView::new(0x70, "I2F R9, R3", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Conversion });
    i2f.defs = vec![reg(9, 1)].into();
    i2f.uses = vec![reg(3, 1)].into();
    i2f.source_format = crate::view::SourceFormat::NotFloat;
    let mut exit = InstrView::new(0x80, "EXIT", InstrClass::Other);
    exit.control = crate::view::Control::Exit;
    KernelView { name: "k".into(), instrs: vec![add, rcp, dfma, setp, isinf, hadd, mnmx, f2f, i2f, exit] }
}

#[test]
fn the_tool_plans_one_probe_per_value_instruction() {
    let view = kernel();
    let mut sites = SiteTable::new();
    let plan = FlowTool::default().plan(&view, &mut sites);
    verify(&plan, &view, &sites).expect("flow plans verify");
    let got: Vec<Planned> = plan
        .probes
        .iter()
        .map(|p| match &p.action {
            Action::Flow { sources, result, division, .. } => (p.instr, p.when, sources.clone(), *result, *division),
            other => panic!("{other:?}"),
        })
        .collect();
    let u = ValueRef::Use;
    assert_eq!(
        got,
        vec![
            (0, When::After, vec![u(0), u(1)], Some(ValueRef::Def(0)), false),
            (1, When::After, vec![u(0)], Some(ValueRef::Def(0)), true),
            // DFMA overwrites R6, a source: the backend reads it before
            (2, When::After, vec![u(0), u(1), u(2)], Some(ValueRef::Def(0)), false),
            // a comparison: before it, its predicates left out
            (3, When::Before, vec![u(0), u(1)], None, false),
            // a comparison with a constant threshold reads its register only
            // (an arithmetic instruction's constant is a source: FADD above)
            (4, When::Before, vec![u(0)], None, false),
            // HADD2 (packed) has none
            (6, When::After, vec![u(0)], Some(ValueRef::Def(0)), false),
            // a conversion reads its f64 pair; one from an integer reads nothing
            (7, When::After, vec![u(0)], Some(ValueRef::Def(0)), false),
            (8, When::After, vec![], Some(ValueRef::Def(0)), false),
        ]
    );
    let formats: Vec<(FpFormat, FpFormat)> = plan
        .probes
        .iter()
        .filter_map(|p| match &p.action {
            Action::Flow { source_format, format, .. } => Some((*source_format, *format)),
            _ => None,
        })
        .collect();
    assert_eq!(formats[6], (FpFormat::F64, FpFormat::F32));
    let only = FlowTool { instr_range: Some(1..3) }.plan(&view, &mut sites);
    assert_eq!(only.probes.iter().map(|p| p.instr).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn the_verifier_rejects_broken_flow_probes() {
    let view = kernel();
    let mut sites = SiteTable::new();
    let plan = FlowTool::default().plan(&view, &mut sites);
    let broken = |edit: &dyn Fn(&mut Probe)| {
        let mut p = plan.clone();
        edit(&mut p.probes[0]);
        verify(&p, &view, &sites)
    };
    let set = |sources: Vec<ValueRef>, result: Option<ValueRef>, format: FpFormat, when: When| {
        move |p: &mut Probe| {
            p.action =
                Action::Flow { sources: sources.clone(), source_format: format, result, format, division: false };
            p.when = when;
        }
    };
    let is_bad = |r: Result<(), PlanError>| matches!(r, Err(PlanError::BadFlow { .. }));
    let u = ValueRef::Use;
    assert!(broken(&set(vec![u(0)], Some(ValueRef::Def(0)), FpFormat::F32, When::After)).is_ok());
    // a result read before the instruction, a comparison's probe after it
    assert!(is_bad(broken(&set(vec![u(0)], Some(ValueRef::Def(0)), FpFormat::F32, When::Before))));
    assert!(is_bad(broken(&set(vec![u(0)], None, FpFormat::F32, When::After))));
    // a destination as a source, a source as the result, a missing source
    assert!(is_bad(broken(&set(vec![ValueRef::Def(0)], Some(ValueRef::Def(0)), FpFormat::F32, When::After))));
    assert!(is_bad(broken(&set(vec![u(0)], Some(u(0)), FpFormat::F32, When::After))));
    assert!(is_bad(broken(&set(vec![u(5)], Some(ValueRef::Def(0)), FpFormat::F32, When::After))));
    // a packed format, too many sources, an f64 read from one register
    assert!(is_bad(broken(&set(vec![u(0)], Some(ValueRef::Def(0)), FpFormat::F16x2, When::After))));
    assert!(is_bad(broken(&set(vec![u(0); 4], Some(ValueRef::Def(0)), FpFormat::F32, When::After))));
    assert!(is_bad(broken(&set(vec![u(0)], Some(ValueRef::Def(0)), FpFormat::F64, When::After))));
    // nothing to read
    assert!(is_bad(broken(&set(vec![], None, FpFormat::F32, When::Before))));
}

fn finding(
    state: FlowState,
    kind: ExceptionKind,
    offset: u64,
    line: u32,
    class: &str,
    instr: &str,
    seen: u16,
) -> FlowFinding {
    FlowFinding {
        state,
        kind,
        format: FpFormat::F32,
        site: SiteRef {
            id: SiteId(offset as u32),
            offset,
            instr: instr.into(),
            location: Some(SourceLoc::new("flows.hip", line)),
        },
        class: class.into(),
        launch: 0,
        occurrences: 1,
        seen,
    }
}

#[test]
fn stories_tell_each_kind_by_line() {
    let mut c = Collector::new(RunInfo::new("amd-emulated", "gfx90a", "flow"), None);
    use ExceptionKind::*;
    use FlowState::*;
    let f = [
        finding(Appear, Nan, 0x10, 42, "f32.div", "v_div_fixup_f32 v1, v2, v3, v4", SRC_ZERO | RES_NAN),
        finding(Propagate, Nan, 0x20, 42, "f32.fma", "v_fma_f32 v1, v2, v3, v4", SRC_NAN | RES_NAN),
        finding(Propagate, Nan, 0x30, 43, "f32.add", "v_add_f32 v1, v2, v3", SRC_NAN | RES_NAN),
        finding(Propagate, Nan, 0x40, 44, "f32.mul", "v_mul_f32 v1, v2, v3", SRC_NAN | RES_NAN),
        finding(Disappear, Nan, 0x50, 45, "f32.minmax", "v_max_f32 v1, 0, v3", SRC_NAN | RES_ZERO),
        finding(Compare, Nan, 0x60, 47, "f32.cmp", "v_cmp_gt_f32 vcc, v1, v3", SRC_NAN | SRC_NORMAL),
        finding(Appear, Div0, 0x70, 50, "f32.div", "v_rcp_f32 v5, v6", SRC_ZERO | RES_INF),
        finding(Disappear, Inf, 0x80, 51, "f32.conversion", "v_cvt_f16_f32 v5, v6", SRC_INF | RES_NORMAL),
    ];
    for x in f {
        assert!(c.record_flow("k", x));
    }
    // the same record again adds occurrences and classes
    assert!(!c.record_flow(
        "k",
        FlowFinding {
            launch: LAUNCH_UNKNOWN,
            seen: SRC_ZERO | SRC_NORMAL | RES_NAN,
            ..finding(Appear, Nan, 0x10, 42, "f32.div", "", 0)
        }
    ));
    let r = c.report();
    let k = &r.flow.as_ref().expect("flow section").kernels[0];
    assert_eq!(k.records.len(), 8);
    assert_eq!(k.records[0].occurrences, 2);
    assert_eq!(k.records[0].sources, [FlowClass::Zero, FlowClass::Normal]);
    assert_eq!(
        k.summary,
        [
            "NaN appears at line 42 (0/0), propagates through lines 43–44, disappears at line 45 in a max (result 0), \
             reaches a comparison at line 47.",
            "Inf appears at line 50 (division by zero), disappears at line 51 in a conversion.",
        ]
    );
    // round trips, and merges with itself into doubled occurrences
    assert_eq!(crate::report::Report::from_json(&r.to_json()).expect("json"), r);
    let section = r.flow.as_ref().expect("flow section");
    let merged = crate::report::FlowSection::merge([section, section].into_iter()).expect("merged");
    assert_eq!(merged.kernels[0].records[0].occurrences, 4);
    assert_eq!(merged.kernels[0].summary, k.summary);
}

#[test]
fn stories_without_lines_name_instructions_and_inputs() {
    let mut c = Collector::new(RunInfo::new("nvidia", "h100", "flow"), None);
    let mut a = finding(FlowState::Propagate, ExceptionKind::Inf, 0x10, 1, "f32.add", "FADD R1, R2, R3", 0);
    a.site.location = None;
    let mut b = finding(
        FlowState::Disappear,
        ExceptionKind::Inf,
        0x20,
        1,
        "f32.minmax",
        "FMNMX R1, R2, R3, PT",
        SRC_INF | RES_NORMAL,
    );
    b.site.location = None;
    c.record_flow("k", a);
    c.record_flow("k", b);
    let r = c.report();
    assert_eq!(
        r.flow.expect("flow section").kernels[0].summary,
        ["Inf comes from memory or an argument, propagates through instruction 0x10, disappears at instruction 0x20 in a min."]
    );
}
