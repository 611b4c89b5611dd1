use super::*;
use crate::class::{FpFormat, FpOp, InstrClass};
use crate::fault::{FaultFlags, FaultLocation};
use crate::plan::verify;
use crate::view::Control;

fn reg(first: u16, count: u8) -> Operand {
    Operand::Reg(RegRange::new(RegFile::PerLane, first, count))
}

/// 0: S2R R0, SR_TID.X; 1: IADD3 R1, R0, 0x4, RZ; 2: LDS R2, [R1];
/// 3: FADD R3, R2, R2; 4: ISETP P0, R3, 1; 5: @P0 FMUL R4, R3, R3;
/// 6: STS [R1], R4; 7: EXIT
fn kernel() -> (KernelView, Vec<InjectFacts>) {
    let fp = InstrClass::Arith { format: FpFormat::F32, op: FpOp::Add };
    let mut v = vec![
        InstrView::new(0x00, "S2R R0, SR_TID.X", InstrClass::Other),
        InstrView::new(0x10, "IADD3 R1, R0, 0x4, RZ", InstrClass::Other),
        InstrView::new(0x20, "LDS R2, [R1]", InstrClass::Other),
        InstrView::new(0x30, "FADD R3, R2, R2", fp),
        InstrView::new(0x40, "ISETP.GT.AND P0, PT, R3, 0x1, PT", InstrClass::Other),
        InstrView::new(0x50, "@P0 FMUL R4, R3, R3", fp),
        InstrView::new(0x60, "STS [R1], R4", InstrClass::Other),
        InstrView::new(0x70, "EXIT", InstrClass::Other),
    ];
    v[0].defs = vec![reg(0, 1)].into();
    v[1].defs = vec![reg(1, 1)].into();
    v[1].uses = vec![reg(0, 1), Operand::Known { bits: 4 }].into();
    v[2].defs = vec![reg(2, 1)].into();
    v[2].uses = vec![reg(1, 1)].into();
    v[3].defs = vec![reg(3, 1)].into();
    v[3].uses = vec![reg(2, 1), reg(2, 1)].into();
    v[4].defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
    v[4].uses = vec![reg(3, 1), Operand::Known { bits: 1 }].into();
    v[5].defs = vec![reg(4, 1)].into();
    v[5].uses = vec![reg(3, 1), reg(3, 1)].into();
    v[5].guarded = true;
    v[6].uses = vec![reg(1, 1), reg(4, 1)].into();
    v[7].control = Control::Exit;
    let int = Some(Unit::Int);
    let fpu = Some(Unit::Fp);
    let facts = vec![
        InjectFacts { special: Some(SpecialIndex::Thread(Dim::X)), ..InjectFacts::default() },
        InjectFacts { unit: int, immediate: true, ..InjectFacts::default() },
        InjectFacts { memory_source: true, ..InjectFacts::default() },
        InjectFacts { unit: fpu, ..InjectFacts::default() },
        InjectFacts { unit: int, immediate: true, ..InjectFacts::default() },
        InjectFacts { unit: fpu, forceable_guard: true, ..InjectFacts::default() },
        InjectFacts { shared_store: Some((1, 0)), ..InjectFacts::default() },
        InjectFacts::default(),
    ];
    (KernelView { name: "k".into(), instrs: v }, facts)
}

fn spec(args: &[(&str, &str)]) -> FaultSpec {
    let mut f = FaultFlags { sm: Some("3".into()), ..FaultFlags::default() };
    for (k, v) in args {
        let v = Some(v.to_string());
        match *k {
            "model" => f.model = v,
            "unit" => f.unit = v,
            "mask" => f.mask = v,
            "operand" => f.operand = v,
            "register" => f.register = v,
            "store" => f.target = v,
            "predicate" => f.predicate = v,
            "dim" => f.dim = v,
            "lane-fault" => f.lane_fault = v,
            "lanes" => f.lanes = v,
            "warps" => f.warps = v,
            _ => panic!("{k}"),
        }
    }
    f.spec().unwrap()
}

/// (instruction, when, change) of each probe; the plan verifies.
fn planned(args: &[(&str, &str)]) -> Vec<(u32, When, Change)> {
    let (view, facts) = kernel();
    let mut sites = SiteTable::new();
    let fault = spec(args);
    let ip = Injector { fault: fault.clone() }.plan(&view, &facts, &mut sites);
    verify(&ip.plan, &view, &sites).unwrap();
    assert_eq!(ip.targets, ip.plan.probes.len());
    assert_eq!(ip.plan.counters[0].name, ACTIVATIONS);
    ip.plan
        .probes
        .iter()
        .map(|p| match &p.action {
            Action::Inject { change, threads, activations } => {
                assert_eq!(threads, &fault.location);
                assert_eq!(*activations, CounterId(0));
                (p.instr, p.when, change.clone())
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn each_model_touches_its_instructions() {
    use Change::*;
    use When::*;
    assert_eq!(planned(&[("model", "IOC"), ("unit", "int")]), vec![(1, After, OtherOperation { def: 0 })]);
    assert_eq!(
        planned(&[("model", "IOC"), ("unit", "fp")]),
        vec![(3, After, OtherOperation { def: 0 }), (5, After, OtherOperation { def: 0 })]
    );
    assert_eq!(
        planned(&[("model", "IVOC")]).iter().map(|t| (t.0, t.2.clone())).collect::<Vec<_>>(),
        vec![(1, Trap), (3, Trap), (4, Trap), (5, Trap)]
    );
    let wrong = |n, c| RegRange::new(RegFile::PerLane, n, c);
    // R2 is read twice by the FADD: substituting source 0 keeps source 1 intact only
    // in the register file, which is what a wrong address field does
    let ira = planned(&[("model", "IRA"), ("operand", "src0"), ("register", "9")]);
    assert_eq!(ira[0], (1, Before, SubstituteUse { use_index: 0, from: wrong(9, 1) }));
    assert_eq!(ira.len(), 6, "{ira:?}");
    let ira_dst = planned(&[("model", "IRA"), ("operand", "dst"), ("register", "9")]);
    assert_eq!(ira_dst.len(), 5, "{ira_dst:?}");
    assert!(ira_dst.iter().all(|t| t.1 == After && matches!(t.2, RedirectDef { def: 0, .. })));
    assert!(planned(&[("model", "IVRA"), ("operand", "dst")]).iter().all(|t| t.2 == Trap && t.1 == Before));
    assert_eq!(planned(&[("model", "IIO"), ("mask", "0x10")]), vec![(1, After, XorDef { def: 0, mask: 0x10 })]);
    assert_eq!(planned(&[("model", "IMS"), ("mask", "1")]), vec![(2, After, XorDef { def: 0, mask: 1 })]);
    assert_eq!(
        planned(&[("model", "IMD"), ("mask", "4"), ("store", "address")]),
        vec![(6, Before, XorUse { use_index: 0, mask: 4 })]
    );
    assert_eq!(
        planned(&[("model", "IMD"), ("mask", "4"), ("store", "data")]),
        vec![(6, Before, XorUse { use_index: 1, mask: 4 })]
    );
    assert_eq!(planned(&[("model", "WV"), ("predicate", "0")]), vec![(4, After, InvertPredicate { def: 0 })]);
    assert!(planned(&[("model", "WV"), ("predicate", "1")]).is_empty());
    assert_eq!(
        planned(&[("model", "IAT"), ("dim", "x"), ("mask", "1"), ("lanes", "0-3")]),
        vec![(0, After, SpecialRead { def: 0, mask: 1 })]
    );
    assert!(planned(&[("model", "IAT"), ("dim", "y"), ("mask", "1"), ("lanes", "0")]).is_empty());
    assert!(planned(&[("model", "IAC"), ("dim", "x"), ("mask", "1")]).is_empty());
    assert_eq!(
        planned(&[("model", "IAL"), ("unit", "fp"), ("lane-fault", "ignore"), ("lanes", "5")]),
        vec![(3, After, DiscardDef { def: 0 }), (5, After, DiscardDef { def: 0 })]
    );
    assert_eq!(planned(&[("model", "IAL"), ("unit", "fp"), ("lane-fault", "force")]), vec![(5, Before, ForceGuard)]);
    assert!(planned(&[("model", "IAL"), ("unit", "int"), ("lane-fault", "force")]).is_empty());
}

#[test]
fn a_kernel_without_targets_says_what_was_wanted() {
    let (mut view, facts) = kernel();
    view.instrs.truncate(1);
    let mut sites = SiteTable::new();
    let inj = Injector { fault: spec(&[("model", "IMD"), ("mask", "1"), ("store", "data")]) };
    let ip = inj.plan(&view, &facts[..1], &mut sites);
    assert_eq!(ip.targets, 0);
    assert_eq!(inj.wanted(), "stores to shared memory through registers");
    assert_eq!(FaultLocation::sm(3), spec(&[("model", "IVOC")]).location);
}

#[test]
fn runs_carry_the_fault_and_reports_add_activations() {
    use crate::config::RunSettings;
    use crate::report::{Collector, Injection, RunInfo};
    use crate::tool::ToolKind;
    let fault = spec(&[("model", "IVOC")]);
    // the fault travels in the run configuration, only with the inject tool
    let s = RunSettings { tool: ToolKind::Inject, fault: Some(fault.clone()), ..RunSettings::default() };
    let back = crate::config::RunConfig::from_json(&s.clone().check().unwrap().to_json(), "c".as_ref()).unwrap();
    assert_eq!(back.fault.as_ref(), Some(&fault));
    assert!(RunSettings { tool: ToolKind::Inject, ..RunSettings::default() }.check().is_err());
    assert!(RunSettings { fault: Some(fault.clone()), ..RunSettings::default() }.check().is_err());
    // two processes of one run: activations add up, exactness is kept only if both were exact
    let mut c = Collector::new(RunInfo::new("nvidia", "d", "detect"), None);
    c.set_injection(Injection { fault: fault.clone(), activations: 3, exact: true });
    c.set_injection(Injection { fault: fault.clone(), activations: 1, exact: false });
    let r = c.report();
    assert_eq!(r.injection, Some(Injection { fault, activations: 4, exact: false }));
    let json = r.to_json();
    assert!(json.contains("\"activations\": 4") && json.contains("\"exact\": false"), "{json}");
}

#[test]
fn wv_inverts_a_lane_mask_where_there_are_no_predicate_registers() {
    // a compare writing its lanes' outcomes into a uniform register pair
    let mut cmp = InstrView::new(0x00, "v_cmp_gt_u32_e64 s[10:11], 8, v1", InstrClass::Other);
    cmp.defs = vec![Operand::Reg(RegRange::new(RegFile::Uniform, 10, 2))].into();
    cmp.uses = vec![Operand::Known { bits: 8 }, reg(1, 1)].into();
    let mut end = InstrView::new(0x08, "s_endpgm", InstrClass::Other);
    end.control = Control::Exit;
    let view = KernelView { name: "k".into(), instrs: vec![cmp, end] };
    let wv = Injector { fault: spec(&[("model", "WV"), ("predicate", "0")]) };
    let mut sites = SiteTable::new();
    let plain = [InjectFacts { unit: Some(Unit::Int), ..InjectFacts::default() }, InjectFacts::default()];
    assert_eq!(wv.plan(&view, &plain, &mut sites).targets, 0, "no predicate, no lane mask: untouched");
    let masked = [InjectFacts { lane_mask: Some(0), ..plain[0] }, InjectFacts::default()];
    let ip = wv.plan(&view, &masked, &mut sites);
    assert_eq!(ip.targets, 1);
    assert!(matches!(&ip.plan.probes[0].action, Action::Inject { change: Change::InvertPredicate { def: 0 }, .. }));
}

#[test]
fn an_index_received_in_a_register_is_xored_before_its_first_read() {
    use Change::*;
    use When::*;
    let uniform = |n| RegRange::new(RegFile::Uniform, n, 1);
    let v0 = RegRange::new(RegFile::PerLane, 0, 1);
    // 0: v_lshrrev_b32 v2, 10, v0 (thread x and y packed in v0); 1: s_mul_i32 s7, s3, 3 (block y)
    let mut shift = InstrView::new(0x0, "v_lshrrev_b32_e32 v2, 10, v0", InstrClass::Other);
    shift.defs = vec![reg(2, 1)].into();
    shift.uses = vec![Operand::Known { bits: 10 }, reg(0, 1)].into();
    let mut mul = InstrView::new(0x4, "s_mul_i32 s7, s3, 3", InstrClass::Other);
    mul.defs = vec![Operand::Reg(uniform(7))].into();
    mul.uses = vec![Operand::Reg(uniform(3)), Operand::Known { bits: 3 }].into();
    let view = KernelView { name: "k".into(), instrs: vec![shift, mul] };
    let mut facts = vec![InjectFacts::default(); 2];
    facts[0].index_inputs.set(SpecialIndex::Thread(Dim::X), v0, 0);
    facts[0].index_inputs.set(SpecialIndex::Thread(Dim::Y), v0, 10);
    facts[1].index_inputs.set(SpecialIndex::Block(Dim::Y), uniform(3), 0);
    let planned = |args: &[(&str, &str)]| {
        let mut sites = SiteTable::new();
        let ip = Injector { fault: spec(args) }.plan(&view, &facts, &mut sites);
        verify(&ip.plan, &view, &sites).unwrap();
        ip.plan
            .probes
            .iter()
            .map(|p| match &p.action {
                Action::Inject { change, .. } => (p.instr, p.when, change.clone()),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    let lanes = ("lanes", "0-3");
    assert_eq!(
        planned(&[("model", "IAT"), ("dim", "x"), ("mask", "1"), lanes]),
        vec![(0, Before, XorInput { reg: v0, mask: 1 })]
    );
    // y's bits start at 10: the mask moves there
    assert_eq!(
        planned(&[("model", "IAT"), ("dim", "y"), ("mask", "1"), lanes]),
        vec![(0, Before, XorInput { reg: v0, mask: 1 << 10 })]
    );
    assert_eq!(
        planned(&[("model", "IAC"), ("dim", "y"), ("mask", "2")]),
        vec![(1, Before, XorInput { reg: uniform(3), mask: 2 })]
    );
    assert!(planned(&[("model", "IAT"), ("dim", "z"), ("mask", "1"), lanes]).is_empty());
    assert!(planned(&[("model", "IAC"), ("dim", "x"), ("mask", "1")]).is_empty());
    // a mask the shift pushes past 64 bits names no bit of the register
    assert!(planned(&[("model", "IAT"), ("dim", "y"), ("mask", "0x8000000000000000"), lanes]).is_empty());
}
