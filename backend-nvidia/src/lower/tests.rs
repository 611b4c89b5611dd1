//! Tests of the lowering: the calls a plan becomes, their arguments and
//! metadata, and the plans it refuses.

use super::*;
use crate::sass::{build_kernel, parse_listing};
use xfpx_common::plan::verify;
use xfpx_common::tool::{Detector, Tool};

const LISTING: &str = "\tFunction : k\n\
    /*0000*/  FADD R1, R2, R3 ;\n\
    /*0010*/  MUFU.RCP64H R5, R3 ;\n\
    /*0020*/  DFMA R6, R2, R4, R6 ;\n\
    /*0030*/  @P1 FSETP.GT.AND P0, PT, R1, UR4, PT ;\n\
    /*0040*/  HMMA.16816.F32 R16, R4, R12, RZ ;\n\
    /*0050*/  EXIT ;\n";

#[test]
fn detector_plan_lowers_to_calls() {
    let f = parse_listing(LISTING).expect("parses");
    let k = build_kernel(&f[0]);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&k.view, &mut sites);
    verify(&plan, &k.view, &sites).expect("verifies");
    let calls = NvbitLowering::new(&k, 0xdead_0000).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    let summary: Vec<(u32, When, CallArg, CallArg, u32)> = calls
        .iter()
        .map(|c| {
            let meta = match c.args[4] {
                CallArg::Const32 { value } => value,
                _ => panic!("meta"),
            };
            (c.instr, c.when, c.args[1], c.args[2], meta)
        })
        .collect();
    let f32m = 4 | (0b0111 << 8);
    let f64div = 5 | (0b1111 << 8) | META_DIVISION | META_HIGH_WORD;
    let nan_f32 = 4 | (0b0001 << 8);
    let zero = CallArg::Const32 { value: 0 };
    assert_eq!(
        summary,
        vec![
            (0, When::After, CallArg::Reg { num: 1 }, zero, f32m),
            (1, When::After, zero, CallArg::Reg { num: 5 }, f64div),
            (2, When::After, CallArg::Reg { num: 6 }, CallArg::Reg { num: 7 }, 5 | (0b0111 << 8)),
            (3, When::Before, CallArg::Reg { num: 1 }, zero, nan_f32),
            (3, When::Before, CallArg::UReg { num: 4 }, zero, nan_f32),
            (4, When::After, CallArg::Reg { num: 16 }, zero, f32m),
            (4, When::After, CallArg::Reg { num: 17 }, zero, f32m),
            (4, When::After, CallArg::Reg { num: 18 }, zero, f32m),
            (4, When::After, CallArg::Reg { num: 19 }, zero, f32m),
        ]
    );
    assert!(calls.iter().all(|c| c.args[0] == CallArg::GuardPred
        && c.args[5] == CallArg::Const64 { value: 0xdead_0000 }
        && c.args[6] == CallArg::LaunchVal64));
    // sites are per instruction
    assert_eq!(calls[3].args[3], calls[4].args[3]);
    assert_ne!(calls[0].args[3], calls[1].args[3]);
}

#[test]
fn grouped_checks_fill_pairs_within_a_block() {
    let listing = "\tFunction : k\n\
        /*0000*/  FADD R1, R2, R3 ;\n\
        /*0010*/  FMUL R4, R2, R3 ;\n\
        /*0020*/  @P0 FADD R5, R2, R3 ;\n\
        /*0030*/  DADD R6, R2, R8 ;\n\
        /*0040*/  MOV R1, R9 ;\n\
        /*0050*/  FADD R10, R2, R3 ;\n\
        /*0058*/  FADD R12, R2, R3 ;\n\
        /*0060*/  @P1 BRA 0x80 ;\n\
        /*0070*/  FADD R11, R2, R3 ;\n\
        /*0080*/  EXIT ;\n";
    let f = parse_listing(listing).expect("parses");
    let k = build_kernel(&f[0]);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&k.view, &mut sites);
    let single = NvbitLowering::new(&k, 7).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    let calls = NvbitLowering::new(&k, 7).expect("abi").grouping(true).lower(&k.view, &plan, &sites).expect("lowers");
    let summary: Vec<(u32, When, &str, Vec<CallArg>)> = calls
        .iter()
        .map(|c| {
            let regs = c.args.iter().copied().filter(|a| matches!(a, CallArg::Reg { .. })).collect();
            (c.instr, c.when, c.function.as_str(), regs)
        })
        .collect();
    let r = |num| CallArg::Reg { num };
    assert_eq!(
        summary,
        vec![
            // three slots fill: R1, R4 and the guarded add's R5 (with
            // its guard); the call waits for the next unguarded
            // instruction (a call at the guarded add would run only where
            // its guard holds)
            (3, When::Before, "xfpx_check_values3", vec![r(1), r(4), r(5)]),
            // the f64 pair, R10 and R12 go where R12 became ready, not at
            // the guarded branch that ends the block
            (6, When::After, "xfpx_check_values3", vec![r(6), r(7), r(10), r(12)]),
            // R11 is in the next block
            (8, When::After, "xfpx_check_value", vec![r(11)]),
        ]
    );
    // the guarded add's slot carries its guard, P0
    let guard_bits = META_GUARDED | META_GUARD_NEGATED | (7 << META_GUARD_SHIFT);
    assert_eq!(call_slots(&calls[0])[2].3 & guard_bits, META_GUARDED);
    assert_eq!(single.len(), 7);
    // every check's (value, site, meta) is still made, once
    let slots = |cs: &[CallInsertion]| {
        let mut v: Vec<(CallArg, u32, u32)> = cs
            .iter()
            .flat_map(call_slots)
            .map(|(lo, _, site, meta)| (lo, site, meta & !(guard_bits | 0xff << META_GUARD_SHIFT)))
            .collect();
        v.sort_by_key(|t| format!("{t:?}"));
        v
    };
    assert_eq!(slots(&calls), slots(&single));
}

/// The (lo, hi, site, meta) of every value a check call carries.
fn call_slots(c: &CallInsertion) -> Vec<(CallArg, CallArg, u32, u32)> {
    let c32 = |a: CallArg| match a {
        CallArg::Const32 { value } => value,
        _ => u32::MAX,
    };
    match c.function.as_str() {
        abi::CHECK_VALUE => vec![(c.args[1], c.args[2], c32(c.args[3]), c32(c.args[4]))],
        // after the predicates, three slots; empty ones (meta 0) carry no check
        abi::CHECK_VALUES3 => c.args[1..10]
            .chunks(3)
            .map(|s| match s[2] {
                CallArg::Const64 { value } => (s[0], s[1], value as u32, (value >> 32) as u32),
                _ => (s[0], s[1], u32::MAX, u32::MAX),
            })
            .filter(|s| s.3 != 0)
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn fast_mode_checks_a_reciprocal_through_its_divisor() {
    let f = parse_listing(
        "\tFunction : k\n /*0000*/ MUFU.RCP R10, R5 ;\n /*0010*/ FFMA R11, -R5, R10, 1 ;\n \
         /*0020*/ FFMA R10, R0, R11, RZ ;\n /*0030*/ MUFU.RCP64H R7, R13 ;\n /*0040*/ MUFU.RCP R6, R6 ;\n \
         /*0050*/ EXIT ;\n",
    )
    .expect("parses");
    let k = build_kernel(&f[0]);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&k.view, &mut sites);
    let rcp_meta = |calls: &[CallInsertion], site: u32| -> Option<(CallArg, CallArg, u32)> {
        calls.iter().flat_map(call_slots).find(|s| s.2 == site).map(|(lo, hi, _, meta)| (lo, hi, meta))
    };
    let site = |off| sites.lookup("k", off).expect("site").0;
    let detect = NvbitLowering::new(&k, 7).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    let fast = NvbitLowering::new(&k, 7).expect("abi").grouping(true).lower(&k.view, &plan, &sites).expect("lowers");
    let zero = CallArg::Const32 { value: 0 };
    // detect mode: the reciprocal itself
    let (lo, _, meta) = rcp_meta(&detect, site(0x00)).expect("checked");
    assert_eq!((lo, meta & META_RECIPROCAL), (CallArg::Reg { num: 10 }, 0));
    // fast mode: the divisor, flagged, sharing the quotient's call
    let (lo, hi, meta) = rcp_meta(&fast, site(0x00)).expect("checked");
    assert_eq!((lo, hi), (CallArg::Reg { num: 5 }, zero));
    assert_ne!(meta & META_RECIPROCAL, 0);
    assert!(fast.iter().any(|c| c.function != abi::CHECK_VALUE
        && call_slots(c).iter().any(|s| s.2 == site(0x00))
        && call_slots(c).iter().any(|s| s.2 == site(0x20))));
    // f64: the high word the reciprocal reads
    let (lo, hi, meta) = rcp_meta(&fast, site(0x30)).expect("checked");
    assert_eq!((lo, hi), (zero, CallArg::Reg { num: 13 }));
    assert_ne!(meta & META_RECIPROCAL, 0);
    // a reciprocal that overwrites its source keeps the usual check
    let (lo, _, meta) = rcp_meta(&fast, site(0x40)).expect("checked");
    assert_eq!((lo, meta & META_RECIPROCAL), (CallArg::Reg { num: 6 }, 0));
}

/// An f64 division as nvcc emits it: reciprocal of the divisor's high
/// word, Newton steps, the quotient in R10:R11, the register test of
/// its high word, and a slow block that computes it again. `edit`
/// changes the listing (by replacing one line) for the variants.
fn f64_division(edit: Option<(&str, &str)>) -> String {
    let text = "\tFunction : k\n\
         /*0000*/ MUFU.RCP64H R7, R3 ;\n\
         /*0010*/ IMAD.MOV.U32 R6, RZ, RZ, 0x1 ;\n\
         /*0020*/ DFMA R8, -R2, R6, 1 ;\n\
         /*0030*/ DFMA R6, R6, R8, R6 ;\n\
         /*0040*/ DMUL R10, R4, R6 ;\n\
         /*0050*/ DFMA R12, -R2, R10, R4 ;\n\
         /*0060*/ DFMA R10, R6, R12, R10 ;\n\
         /*0070*/ FFMA R0, RZ, R3, R11 ;\n\
         /*0080*/ FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT ;\n\
         /*0090*/ @P0 BRA 0xc0 ;\n\
         /*00a0*/ IMAD.MOV.U32 R14, RZ, RZ, R4 ;\n\
         /*00b0*/ DADD R10, R14, R2 ;\n\
         /*00c0*/ STG.E.64 desc[UR4][R16.64], R10 ;\n\
         /*00d0*/ EXIT ;\n"
        .to_string();
    match edit {
        Some((from, to)) => {
            assert!(text.contains(from), "{from}");
            text.replace(from, to)
        }
        None => text,
    }
}

/// Fast mode's calls for a listing: (instruction, when, sites checked).
fn fast_calls(listing: &str) -> (Vec<(u32, When, Vec<u32>)>, SiteTable) {
    let k = build_kernel(&parse_listing(listing).expect("parses")[0]);
    let mut sites = SiteTable::new();
    let planned = crate::modes::plan_kernel(&Detector::default(), &k, &mut sites, xfpx_common::config::Mode::Fast)
        .expect("plans");
    let calls =
        NvbitLowering::new(&k, 7).expect("abi").grouping(true).lower(&k.view, &planned.plan, &sites).expect("lowers");
    (calls.iter().map(|c| (c.instr, c.when, call_slots(c).iter().map(|s| s.2).collect())).collect(), sites)
}

#[test]
fn f64_division_checks_run_on_its_slow_path() {
    let (calls, sites) = fast_calls(&f64_division(None));
    let site = |off| sites.lookup("k", off).expect("site").0;
    // the quotient and the divisor (through its reciprocal) share one
    // call at the slow block's entry, before instruction 10
    let slow: Vec<_> = calls.iter().filter(|c| c.0 == 10 && c.1 == When::Before).collect();
    assert_eq!(slow.len(), 1, "{calls:?}");
    let mut checked = slow[0].2.clone();
    checked.sort_unstable();
    assert_eq!(checked, vec![site(0x00), site(0x60)]);
    // nothing of the division is checked on the fast path
    assert!(calls.iter().all(|c| c.0 >= 10), "{calls:?}");
}

#[test]
fn f64_division_by_a_constant_with_a_dividend_test_checks_on_its_slow_path() {
    // `M / c`: the register test multiplies by the constant's high word,
    // and the branch also needs the dividend's test (`BRA P1`)
    let listing = f64_division(Some(("FFMA R0, RZ, R3, R11", "FFMA R0, RZ, 2.6096560955047607422, R11")))
        .replace("@P0 BRA 0xc0", "@P0 BRA P1, 0xc0")
        .replace(
            "/*0080*/ FSETP.GT.AND",
            "/*0078*/ FSETP.GEU.AND P1, PT, |R5|, 6.5827683646048100446e-37, PT ;\n /*0080*/ FSETP.GT.AND",
        );
    let (calls, _) = fast_calls(&listing);
    // the slow entry is instruction 11 (one more instruction before it)
    assert!(calls.iter().all(|c| c.0 >= 11), "{calls:?}");
}

#[test]
fn division_checks_stay_unless_every_exception_takes_the_slow_path() {
    let variants: &[(&str, &str, &str)] = &[
        ("@P0 BRA 0xc0", "@!P0 BRA 0xc0", "the slow path is where the test holds"),
        ("|R0|, 1.469367938527859385e-39", "|R0|, 1e-45", "subnormal quotients pass the test"),
        ("FSETP.GT.AND", "FSETP.GTU.AND", "a NaN passes the test"),
        ("/*00a0*/ IMAD.MOV.U32 R14", "/*00a0*/ @P1 IMAD.MOV.U32 R14", "the slow entry is guarded"),
        ("FFMA R0, RZ, R3, R11", "FFMA R0, RZ, R3, R13", "the test reads another register"),
        ("/*0070*/ FFMA", "/*0070*/ FADD", "no register test"),
        ("/*00d0*/ EXIT", "/*00d0*/ @P2 BRA 0xa0", "the slow block has a second entry"),
    ];
    for (from, to, why) in variants {
        let (calls, sites) = fast_calls(&f64_division(Some((from, to))));
        let quotient = sites.lookup("k", 0x60).expect("site").0;
        let q = calls.iter().find(|c| c.2.contains(&quotient));
        assert!(q.is_some_and(|c| c.0 != 10), "{why}: {calls:?}");
    }
    // the quotient written again after its test: the new value is not
    // what the test saw, and is checked where it is made
    let (calls, sites) = fast_calls(&f64_division(Some((
        "/*0090*/ @P0 BRA 0xc0",
        "/*0088*/ DADD R10, R10, R4 ;\n /*0090*/ @P0 BRA 0xc0",
    ))));
    let again = sites.lookup("k", 0x88).expect("site").0;
    assert!(calls.iter().any(|c| c.2.contains(&again) && (c.0, c.1) == (9, When::After)), "{calls:?}");
    assert!(calls.iter().all(|c| c.0 != 11), "{calls:?}");
}

/// Fast mode's calls for a listing with every check kept (no thinning).
fn grouped_calls(listing: &str) -> Vec<CallInsertion> {
    let k = build_kernel(&parse_listing(listing).expect("parses")[0]);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&k.view, &mut sites);
    NvbitLowering::new(&k, 7).expect("abi").grouping(true).lower(&k.view, &plan, &sites).expect("lowers")
}

/// The meta of each slot of a call.
fn slot_metas(c: &CallInsertion) -> Vec<u32> {
    call_slots(c).iter().map(|s| s.3).collect()
}

#[test]
fn guarded_checks_join_groups_with_their_guard() {
    let calls = grouped_calls(
        "\tFunction : k\n /*0000*/ FADD R2, R3, R4 ;\n /*0010*/ @P0 FMUL R5, R6, R6 ;\n \
         /*0020*/ @!P1 FMUL R7, R6, R6 ;\n /*0030*/ @P0 LOP3.LUT R8, R5, 0x1, RZ, 0xc0, !PT ;\n \
         /*0040*/ STG.E desc[UR4][R10.64], R2 ;\n /*0050*/ EXIT ;\n",
    );
    // one call, before the first unguarded instruction after them
    assert_eq!(calls.len(), 1, "{calls:?}");
    let c = &calls[0];
    assert_eq!((c.function.as_str(), c.instr, c.when), (abi::CHECK_VALUES3, 4, When::Before));
    assert_eq!(c.args[0], CallArg::Preds);
    let metas = slot_metas(c);
    assert_eq!(metas.len(), 3);
    assert_eq!(metas[0] & META_GUARDED, 0, "the unguarded FADD");
    assert_eq!(metas[1] & (META_GUARDED | META_GUARD_NEGATED | (7 << META_GUARD_SHIFT)), META_GUARDED);
    assert_eq!(
        metas[2] & (META_GUARDED | META_GUARD_NEGATED | (7 << META_GUARD_SHIFT)),
        META_GUARDED | META_GUARD_NEGATED | (1 << META_GUARD_SHIFT)
    );
}

#[test]
fn a_guarded_check_keeps_its_call_when_it_cannot_be_grouped() {
    // its guard is written before any other check joins
    let calls = grouped_calls(
        "\tFunction : k\n /*0000*/ @P0 FMUL R5, R6, R6 ;\n /*0010*/ ISETP.NE.AND P0, PT, R1, RZ, PT ;\n \
         /*0020*/ FADD R2, R3, R4 ;\n /*0030*/ STG.E desc[UR4][R10.64], R2 ;\n /*0040*/ EXIT ;\n",
    );
    let at0: Vec<_> = calls.iter().filter(|c| c.instr == 0).collect();
    assert_eq!(at0.len(), 1, "{calls:?}");
    assert_eq!((at0[0].function.as_str(), at0[0].when), (abi::CHECK_VALUE, When::After));
    // an instruction that writes its own guard, and a uniform guard
    for listing in [
        "\tFunction : k\n /*0000*/ @P0 FSETP.GT.AND P0, PT, R6, R7, PT ;\n /*0010*/ FADD R2, R3, R4 ;\n \
         /*0020*/ FADD R8, R3, R4 ;\n /*0030*/ STG.E desc[UR4][R10.64], R2 ;\n /*0040*/ EXIT ;\n",
        "\tFunction : k\n /*0000*/ @UP0 FMUL R5, R6, R6 ;\n /*0010*/ FADD R2, R3, R4 ;\n \
         /*0020*/ FADD R8, R3, R4 ;\n /*0030*/ STG.E desc[UR4][R10.64], R2 ;\n /*0040*/ EXIT ;\n",
    ] {
        let calls = grouped_calls(listing);
        assert!(calls.iter().all(|c| slot_metas(c).iter().all(|m| m & META_GUARDED == 0)), "{calls:?}");
        assert!(calls.iter().any(|c| c.instr == 0 && c.function == abi::CHECK_VALUE), "{calls:?}");
    }
}

#[test]
fn predicate_sources_are_not_checked() {
    let f =
        parse_listing("\tFunction : k\n /*0000*/ FSEL R1, R2, R3, P0 ;\n /*0010*/ FSETP.GT.AND P1, PT, R1, R2, P0 ;\n")
            .expect("parses");
    let k = build_kernel(&f[0]);
    let mut sites = SiteTable::new();
    let plan = Detector::default().plan(&k.view, &mut sites);
    verify(&plan, &k.view, &sites).expect("verifies");
    let calls = NvbitLowering::new(&k, 0).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    let checked: Vec<(u32, CallArg)> = calls.iter().map(|c| (c.instr, c.args[1])).collect();
    assert_eq!(checked, vec![(0, CallArg::Reg { num: 1 }), (1, CallArg::Reg { num: 1 }), (1, CallArg::Reg { num: 2 })]);
}

#[test]
fn known_values_become_constants_counters_are_refused_and_injections_lowered() {
    let f = parse_listing(LISTING).expect("parses");
    let k = build_kernel(&f[0]);
    let mut sites = SiteTable::new();
    let site = sites.intern("k", 0x30, "", None);
    let mut plan = Plan::new("k");
    plan.probes.push(xfpx_common::probe::Probe {
        instr: 3,
        site,
        when: When::Before,
        action: Action::CheckFp {
            values: [ValueRef::Use(2)].into(),
            format: FpFormat::F32,
            kinds: xfpx_common::fp::ExceptionKinds::ALL,
        },
    });
    verify(&plan, &k.view, &sites).expect("verifies");
    let calls = NvbitLowering::new(&k, 1).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    assert_eq!(calls[0].args[1], CallArg::Const32 { value: 1 });
    plan.counters.push(xfpx_common::probe::CounterDef {
        name: "n".into(),
        kind: xfpx_common::probe::CounterKind::WarpExecutions,
    });
    plan.probes[0].action = Action::Count { counter: xfpx_common::probe::CounterId(0) };
    assert!(matches!(
        NvbitLowering::new(&k, 1).expect("abi").lower(&k.view, &plan, &sites),
        Err(LowerError::Unsupported { .. })
    ));
    plan.probes[0].action = Action::Inject {
        change: xfpx_common::probe::Change::Trap,
        threads: xfpx_common::fault::FaultLocation::sm(0),
        activations: xfpx_common::probe::CounterId(0),
    };
    verify(&plan, &k.view, &sites).expect("verifies");
    let calls = NvbitLowering::new(&k, 1).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
    assert_eq!((calls[0].function.as_str(), calls[0].instr, calls[0].when), (abi::INJECT, 3, When::Before));
}
