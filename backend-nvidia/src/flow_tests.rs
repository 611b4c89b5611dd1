use super::*;
use crate::lower::NvbitLowering;
use crate::sass::{build_kernel, parse_listing};
use xfpx_common::flow::{FlowTool, CATEGORIES};
use xfpx_common::lower::Lowering;
use xfpx_common::plan::verify;
use xfpx_common::site::SiteTable;

fn header_define(name: &str) -> u64 {
    let h = xfpx_asm_snippets::NVIDIA_LAYOUT_HEADER;
    let line = h
        .lines()
        .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in xfpx_layout.h"));
    let v = line.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
    let v = v.trim_start_matches('(').trim_end_matches(')');
    if let Some(shift) = v.strip_prefix("1u << ") {
        return 1 << shift.parse::<u64>().expect("shift");
    }
    v.trim_end_matches('u').parse().expect("number")
}

#[test]
fn constants_match_the_device_header() {
    for (name, bits) in LANE_BITS {
        assert_eq!(header_define(name), u64::from(bits), "{name}");
    }
    assert_eq!(header_define("XFPX_FLOW_KEYS_PER_SITE"), u64::from(KEYS_PER_SITE));
    assert_eq!(header_define("XFPX_FLOW_META_SOURCE_SHIFT"), u64::from(meta::SOURCE_SHIFT));
    assert_eq!(header_define("XFPX_FLOW_META_SOURCES_SHIFT"), u64::from(meta::SOURCES_SHIFT));
    assert_eq!(header_define("XFPX_FLOW_META_RESULT"), u64::from(meta::RESULT));
    assert_eq!(header_define("XFPX_FLOW_META_DIVISION"), u64::from(meta::DIVISION));
    assert_eq!(header_define("XFPX_FLOW_SCRATCH_OFFSET"), SCRATCH_OFFSET);
    assert_eq!(header_define("XFPX_FLOW_MAX_SMS"), MAX_SMS);
    assert_eq!(header_define("XFPX_FLOW_MAX_WARPS"), MAX_WARPS);
}

#[test]
fn the_device_categories_are_the_common_ones() {
    let src = xfpx_asm_snippets::NVIDIA_FLOW_SOURCE;
    let start = src.find("#define XFPX_FLOW_CATEGORIES(C)").expect("the category list");
    let rows: Vec<[u32; 4]> = src[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("C("))
        .map(|l| {
            let inner = l.trim().trim_start_matches("C(").split(')').next().expect("row");
            let n: Vec<u32> = inner
                .split(',')
                .map(|t| {
                    let t = t.trim().trim_end_matches('u');
                    match t.strip_prefix("0x") {
                        Some(h) => u32::from_str_radix(h, 16).expect("hex"),
                        None => t.parse().expect("number"),
                    }
                })
                .collect();
            [n[0], n[1], n[2], n[3]]
        })
        .collect();
    let want: Vec<[u32; 4]> = CATEGORIES
        .iter()
        .map(|c| [u32::from(c.mask), u32::from(c.want), u32::from(c.state.code()), u32::from(c.kind.code())])
        .collect();
    assert_eq!(rows, want);
}

#[test]
fn keys_and_class_bytes() {
    for state in FlowState::ALL {
        assert_eq!(of_key(key(SiteId(77), state)), (SiteId(77), state));
    }
    // sources zero and normal, result zero
    assert_eq!(classes_of_byte(0b010_1000 | 0b1_0000), lane::SRC_ZERO | lane::SRC_NORMAL | lane::RES_ZERO);
    assert_eq!(classes_of_byte(1 << 6), lane::RES_NORMAL);
}

/// A listing with each shape of flow call.
const LISTING: &str = "\tFunction : k\n\
    /*0000*/  FADD R1, R2, R3 ;\n\
    /*0010*/  FFMA R6, R1, R2, R6 ;\n\
    /*0020*/  FSETP.GT.AND P0, PT, R1, R2, PT ;\n\
    /*0030*/  MUFU.RCP R4, R1 ;\n\
    /*0040*/  F2F.F32.F64 R5, R8 ;\n\
    /*0050*/  DADD R10, R8, 2 ;\n\
    /*0060*/  FMNMX R7, R1, UR4, !PT ;\n\
    /*0070*/  HADD2 R9, R9, R3 ;\n\
    /*0080*/  EXIT ;\n";

#[test]
fn flow_plans_lower_to_one_call_or_a_held_pair() {
    let k = build_kernel(&parse_listing(LISTING).expect("parses")[0]);
    let mut sites = SiteTable::new();
    let plan = flow_plan(&k, &FlowTool::default(), &mut sites);
    verify(&plan, &k.view, &sites).expect("verifies");
    let calls = NvbitLowering::new(&k, 0xdead_0000)
        .expect("abi")
        .flow_scratch(0xbeef_0000)
        .lower(&k.view, &plan, &sites)
        .expect("lowers (and every call matches abi.def)");
    let shape: Vec<(u32, When, &str)> = calls.iter().map(|c| (c.instr, c.when, c.function.as_str())).collect();
    assert_eq!(
        shape,
        vec![
            (0, When::After, abi::FLOW),
            // FFMA writes R6, one of its sources: held from before it
            (1, When::Before, abi::FLOW_HOLD),
            (1, When::After, abi::FLOW_HELD),
            // a comparison: before it, no result
            (2, When::Before, abi::FLOW),
            (3, When::After, abi::FLOW),
            (4, When::After, abi::FLOW),
            (5, When::After, abi::FLOW),
            (6, When::After, abi::FLOW),
        ]
    );
    let r = |num| CallArg::Reg { num };
    let c = |value| CallArg::Const32 { value };
    let meta_of = |a: &CallArg| match a {
        CallArg::Const64 { value } => (*value >> 32) as u32,
        other => panic!("{other:?}"),
    };
    let f32c = u32::from(xfpx_common::FpFormat::F32.code());
    let f64c = u32::from(xfpx_common::FpFormat::F64.code());
    let fmt = |result: u32, sources: u32, n: u32| result | sources << meta::SOURCE_SHIFT | n << meta::SOURCES_SHIFT;
    // FADD R1, R2, R3: result R1, sources R2 and R3
    assert_eq!(calls[0].args[1..9], [r(1), c(0), r(2), c(0), r(3), c(0), c(0), c(0)]);
    assert_eq!(meta_of(&calls[0].args[9]), fmt(f32c, f32c, 2) | meta::RESULT);
    assert_eq!(calls[0].args[10], CallArg::Const64 { value: 0xdead_0000 });
    // the held pair: sources before into the scratch, the result after
    assert_eq!(calls[1].args[1..7], [r(1), c(0), r(2), c(0), r(6), c(0)]);
    assert_eq!(calls[1].args[8], CallArg::Const64 { value: 0xbeef_0000 });
    assert_eq!(calls[2].args[1..3], [r(6), c(0)]);
    assert_eq!(meta_of(&calls[2].args[3]), fmt(f32c, f32c, 3) | meta::RESULT);
    // FSETP: no result
    assert_eq!(meta_of(&calls[3].args[9]), fmt(f32c, f32c, 2));
    // MUFU.RCP divides
    assert_eq!(meta_of(&calls[4].args[9]) & meta::DIVISION, meta::DIVISION);
    // F2F.F32.F64 reads the pair R8:R9 as f64
    assert_eq!(calls[5].args[3..5], [r(8), r(9)]);
    assert_eq!(meta_of(&calls[5].args[9]), fmt(f32c, f64c, 1) | meta::RESULT);
    // DADD with an immediate: the f64 pair and the known value's words
    assert_eq!(calls[6].args[1..3], [r(10), r(11)]);
    assert_eq!(calls[6].args[3..5], [r(8), r(9)]);
    assert_eq!(calls[6].args[5..7], [c(0), c(0x4000_0000)]);
    // FMNMX reads a uniform register; its !PT is no value
    assert_eq!(calls[7].args[3..9], [r(1), c(0), CallArg::UReg { num: 4 }, c(0), c(0), c(0)]);
    assert_eq!(meta_of(&calls[7].args[9]), fmt(f32c, f32c, 2) | meta::RESULT);
    // the plain tool would read the predicate constants as values
    let raw = FlowTool::default().plan(&k.view, &mut sites);
    assert_ne!(raw, plan);
    // every flow call's site is the probe's
    for (call, p) in calls.iter().filter(|c| c.function != abi::FLOW_HOLD).zip(&plan.probes) {
        let from_end = if call.function == abi::FLOW_HELD { 3 } else { 2 };
        let site = match call.args.iter().rev().nth(from_end) {
            Some(CallArg::Const64 { value }) => *value as u32,
            other => panic!("{other:?}"),
        };
        assert_eq!(site, p.site.0);
    }
}

#[test]
fn the_runtime_turns_keys_into_flow_records() {
    use crate::record::{DeviceRecord, SITE_ENTRY_SIZE};
    use crate::runtime::{KernelNames, ToolCore};
    use xfpx_common::config::RunSettings;
    use xfpx_common::fp::{ExceptionKind, ExceptionKinds};
    use xfpx_common::FpFormat;
    let report = std::env::temp_dir().join(format!("xfpx-nvidia-flow-{}.json", std::process::id()));
    let config =
        RunSettings { tool: xfpx_common::tool::ToolKind::Flow, report_path: report.clone(), ..RunSettings::default() }
            .check()
            .expect("valid");
    let mut core = ToolCore::new(config).expect("core");
    core.set_lines_enabled(false);
    assert_eq!(core.inject_bytes(), SCRATCH_BYTES, "the flow scratch is the tool state");
    core.set_inject_state(0x7000_0000);
    let names = KernelNames { mangled: "_Z1kPf", demangled: "k(float*)" };
    let instrs = vec![
        (0, "MUFU.RCP R4, R1 ;".to_string()),
        (0x10, "FFMA R4, R4, R2, R4 ;".to_string()),
        (0x20, "EXIT ;".to_string()),
    ];
    let calls = core.instrument_function(names, &instrs, 0x1000).expect("instrumented");
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[1].args.last(), Some(&CallArg::Const64 { value: 0x7000_0000 }), "the scratch");
    assert_eq!(core.site_count(), 2 * KEYS_PER_SITE);
    assert!(core.launch(names).instrument);
    // the device: division by zero appears at the reciprocal, then propagates
    let appear = key(SiteId(0), FlowState::Appear);
    let rec = DeviceRecord {
        site: SiteId(appear),
        launch: 0,
        kinds: ExceptionKinds::NONE.with(ExceptionKind::Div0),
        format: FpFormat::F32,
        seq: 1,
    };
    assert_eq!(core.on_records(&rec.encode()), 0);
    let mut chunk = vec![0u8; 8 * SITE_ENTRY_SIZE];
    let mut entry = |key: u32, kind: ExceptionKind, count: u64, classes: u8| {
        let e = &mut chunk[SITE_ENTRY_SIZE * key as usize..];
        let seen = u32::from_le_bytes(e[0..4].try_into().expect("4")) | u32::from(kind.bit()) << 16;
        e[0..4].copy_from_slice(&seen.to_le_bytes());
        e[4 + kind.code() as usize] = classes;
        let at = 8 + 8 * kind.code() as usize;
        e[at..at + 8].copy_from_slice(&count.to_le_bytes());
    };
    // sources zero (bit 3); propagate: sources inf and normal (bits 1, 4)
    entry(appear, ExceptionKind::Div0, 3, 0b0_1000);
    entry(key(SiteId(1), FlowState::Propagate), ExceptionKind::Inf, 2, 0b1_0010);
    core.on_table_chunk(0, &chunk).expect("chunk");
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let _ = std::fs::remove_file(&report);
    assert_eq!(r.run.mode, "flow");
    let k = &r.flow.as_ref().expect("a flow section").kernels[0];
    let got: Vec<(u64, FlowState, ExceptionKind, u64, String)> =
        k.records.iter().map(|r| (r.site.offset, r.state, r.kind, r.occurrences, r.class.clone())).collect();
    assert_eq!(
        got,
        vec![
            (0, FlowState::Appear, ExceptionKind::Div0, 3, "f32.div".to_string()),
            (0x10, FlowState::Propagate, ExceptionKind::Inf, 2, "f32.fma".to_string()),
        ]
    );
    assert_eq!(k.records[0].first_launch, 0);
    assert_eq!(k.records[0].sources, [xfpx_common::flow::FlowClass::Zero]);
    assert_eq!(k.summary, ["Inf appears at instruction 0x0 (division by zero), propagates through instruction 0x10."]);
}
