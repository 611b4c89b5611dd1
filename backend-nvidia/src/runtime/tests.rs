//! Tests of the tool's core: launch decisions, sampling, findings and
//! what the report says of them.

use super::*;
use crate::lower::CallArg;
use crate::record::SITE_ENTRY_SIZE;
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;
use xfpx_common::config::RunSettings;
use xfpx_common::fp::ExceptionKinds;

fn instrs() -> Vec<(u64, String)> {
    vec![(0, "FADD R1, R2, R3 ;".into()), (0x10, "MUFU.RCP R4, R1 ;".into()), (0x20, "EXIT ;".into())]
}

const NAMES: KernelNames = KernelNames { mangled: "_Z1kPf", demangled: "k(float*)" };

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("xfpx-nvidia-rt-{}-{name}", std::process::id()))
}

/// A core for `settings` (which must be valid).
fn core_with(settings: RunSettings) -> ToolCore {
    ToolCore::new(settings.check().expect("valid")).expect("core")
}

/// A detect-mode core writing its report to `report`, instrumenting every
/// `sample_every`-th launch.
fn detect_core(report: &std::path::Path, sample_every: u32) -> ToolCore {
    core_with(RunSettings {
        mode: Mode::Detect,
        report_path: report.to_path_buf(),
        sample_every,
        ..RunSettings::default()
    })
}

#[test]
fn report_without_socket() {
    let report = temp("report.json");
    let mut core = detect_core(&report, 2);
    core.device("NVIDIA H100", Some("sm_90"));
    core.load_listing_lines("\tFunction : _Z1kPf\n\t//## File \"k.cu\", line 9\n        /*0010*/  MUFU.RCP R4, R1 ;\n")
        .expect("lines");
    let calls = core.instrument_function(NAMES, &instrs(), 0x1000).expect("instrumented");
    assert_eq!(calls.len(), 2);
    assert_eq!(core.site_count(), 2);
    let site_of_rcp = match calls[1].args[3] {
        CallArg::Const32 { value } => value,
        _ => panic!("site"),
    };
    assert_eq!(core.launch(NAMES), LaunchDecision { instrument: true, serial: 0, screen: None, prepare_now: false });
    assert_eq!(core.launch(NAMES), LaunchDecision { instrument: false, serial: 1, screen: None, prepare_now: false });
    assert_eq!(core.launch(NAMES), LaunchDecision { instrument: true, serial: 2, screen: None, prepare_now: false });
    let rec = DeviceRecord {
        site: SiteId(site_of_rcp),
        launch: 2,
        kinds: ExceptionKinds::NONE.with(ExceptionKind::Div0),
        format: FpFormat::F32,
        seq: 1,
    };
    let mut bytes = rec.encode().to_vec();
    bytes.extend_from_slice(&[0xff; 16]);
    assert_eq!(core.on_records(&bytes), 1);
    // the table says 7 warp executions raised div0 there
    let mut chunk = vec![0u8; 2 * SITE_ENTRY_SIZE];
    let e = &mut chunk[SITE_ENTRY_SIZE * site_of_rcp as usize..];
    e[0..4].copy_from_slice(&(0b1000u32 << 16).to_le_bytes());
    e[8 + 24..8 + 32].copy_from_slice(&7u64.to_le_bytes());
    core.on_table_chunk(0, &chunk).expect("chunk");
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let k = &r.kernels[0];
    assert_eq!(k.name, "k(float*)");
    assert_eq!((k.launches, k.instrumented_launches, k.probes), (3, 2, 2));
    assert_eq!(k.records.len(), 1);
    let rec = &k.records[0];
    assert_eq!((rec.kind, rec.format, rec.occurrences, rec.first_launch), (ExceptionKind::Div0, FpFormat::F32, 7, 2));
    assert_eq!(rec.site.location.as_ref().map(|l| l.to_string()), Some("k.cu:9".into()));
    assert_eq!(r.run.target.as_deref(), Some("sm_90"));
    let _ = std::fs::remove_file(report);
}

#[test]
fn launches_come_from_records_and_a_swept_finding_has_none() {
    let report = temp("late.json");
    let mut core = detect_core(&report, 1);
    core.set_lines_enabled(false);
    let other = KernelNames { mangled: "_Z4fillPf", demangled: "fill(float*)" };
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    // serial 0 is another kernel's; k's launch 5 is serial 6
    assert_eq!(core.launch(other).serial, 0);
    for i in 0..8 {
        assert_eq!(
            core.launch(NAMES),
            LaunchDecision { instrument: true, serial: i + 1, screen: None, prepare_now: false }
        );
    }
    let rec = |site, launch, seq| DeviceRecord {
        site: SiteId(site),
        launch,
        kinds: ExceptionKinds::NONE.with(ExceptionKind::Nan),
        format: FpFormat::F32,
        seq,
    };
    let mut bytes = rec(0, 6, 1).encode().to_vec();
    bytes.extend_from_slice(&rec(1, 99, 2).encode()); // a serial no launch had
    assert_eq!(core.on_records(&bytes), 0);
    assert_eq!(core.delivery().by_ring, 2);
    assert_eq!(core.delivery().unmatched_serials, 1);
    // the table knows three findings: the two above and an inf at site 0
    let mut chunk = vec![0u8; 2 * SITE_ENTRY_SIZE];
    chunk[0..4].copy_from_slice(&(0b0011u32 << 16).to_le_bytes());
    chunk[8..16].copy_from_slice(&3u64.to_le_bytes());
    chunk[16..24].copy_from_slice(&2u64.to_le_bytes());
    chunk[SITE_ENTRY_SIZE..SITE_ENTRY_SIZE + 4].copy_from_slice(&(0b0001u32 << 16).to_le_bytes());
    chunk[SITE_ENTRY_SIZE + 8..SITE_ENTRY_SIZE + 16].copy_from_slice(&1u64.to_le_bytes());
    core.on_table_chunk(0, &chunk).expect("chunk");
    assert_eq!(core.delivery().by_sweep_only, 1);
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let k = r.kernels.iter().find(|k| k.name == "k(float*)").expect("k");
    let found: Vec<(u64, ExceptionKind, Option<u64>, u64)> =
        k.records.iter().map(|x| (x.site.offset, x.kind, x.known_first_launch(), x.occurrences)).collect();
    assert_eq!(
        found,
        [(0, ExceptionKind::Nan, Some(5), 3), (0, ExceptionKind::Inf, None, 2), (0x10, ExceptionKind::Nan, None, 1)]
    );
    let note = r.run.notes.iter().find(|n| n.starts_with("device findings:")).expect("delivery note");
    assert_eq!(
        note,
        "device findings: 2 by the record ring (launch serials named: 2 distinct, from 6 to 99, of 9 launches), \
         1 of them naming a serial no launch had (launch unknown); 1 only from the site table read at the end, \
         whose launch is unknown (their record never reached the host)"
    );
    let _ = std::fs::remove_file(report);
}

#[test]
fn one_tool_plans_each_run_and_only_the_detector_plans_ahead() {
    use xfpx_common::counters::CounterSource;
    let fault = ioc_fault();
    let cases = [
        (RunSettings::default(), true),
        (RunSettings { mode: Mode::Detect, ..RunSettings::default() }, true),
        (RunSettings { tool: ToolKind::Counters, ..RunSettings::default() }, false),
        (RunSettings { tool: ToolKind::Counters, fault: Some(fault.clone()), ..RunSettings::default() }, false),
        (RunSettings { tool: ToolKind::Inject, fault: Some(fault), ..RunSettings::default() }, false),
        (RunSettings { tool: ToolKind::Flow, ..RunSettings::default() }, false),
        (
            RunSettings { tool: ToolKind::Counters, counter_source: CounterSource::Hardware, ..RunSettings::default() },
            false,
        ),
    ];
    for (settings, ahead) in cases {
        let what = format!("{:?} {:?}", settings.tool, settings.counter_source);
        let mut core = core_with(settings);
        core.set_lines_enabled(false);
        assert_eq!(core.ahead_planner().is_some(), ahead, "{what}");
        // the detector's plan is two checks; every other tool plans its own
        // calls, or (hardware counters) none, with a reason
        let planned = core.instrument_function(NAMES, &instrs(), 0);
        let detector_calls = planned.as_ref().is_ok_and(|c| c.iter().all(|c| c.function.starts_with("xfpx_check")));
        assert_eq!(detector_calls, ahead, "{what}: {planned:?}");
    }
}

/// A wrong-opcode fault of the FP unit on SM 3.
fn ioc_fault() -> xfpx_common::fault::FaultSpec {
    xfpx_common::fault::FaultFlags {
        model: Some("IOC".into()),
        unit: Some("fp".into()),
        sm: Some("3".into()),
        ..Default::default()
    }
    .spec()
    .expect("fault")
}

#[test]
fn a_counted_run_can_carry_a_fault() {
    let report = temp("counted-fault.json");
    let fault = ioc_fault();
    let mut core = core_with(RunSettings {
        report_path: report.clone(),
        tool: ToolKind::Counters,
        fault: Some(fault.clone()),
        ..RunSettings::default()
    });
    core.set_lines_enabled(false);
    assert!(core.counting());
    assert_eq!(core.inject_bytes(), crate::inject::STATE_BYTES);
    core.set_inject_state(0x7000);
    core.instrumenting_for(NAMES.mangled);
    let calls = core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    // the count region's call, then the fault's: before and after the
    // FADD and the MUFU (their results replaced), on the fault's state
    let functions: Vec<&str> = calls.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(functions[1..], [crate::abi::INJECT; 4]);
    assert_ne!(functions[0], crate::abi::INJECT);
    assert!(calls[1..].iter().all(|c| c.args[7] == CallArg::Const64 { value: 0x7000 }));
    assert_eq!(calls[1..].iter().map(|c| c.instr).collect::<Vec<_>>(), [0, 0, 1, 1]);
    core.inject_result(12, true);
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let i = r.injection.expect("injection in the counted run's report");
    assert_eq!((i.fault, i.activations, i.exact), (fault, 12, true));
    let _ = std::fs::remove_file(report);
}

#[test]
fn the_counters_tool_counts_launches_into_tables_of_their_own() {
    use crate::counts::{SLOT_BYTES, TABLE_HEADER_BYTES};
    let report = temp("counters.json");
    let mut core = core_with(RunSettings {
        report_path: report.clone(),
        tool: ToolKind::Counters,
        count_window_blocks: 2,
        ..RunSettings::default()
    });
    core.set_lines_enabled(false);
    assert!(core.counting());
    // a callee first, then the kernel whose first launch it belongs to
    core.instrumenting_for(NAMES.mangled);
    let callee = KernelNames { mangled: "_Z1fv", demangled: "f()" };
    let f_calls = core.instrument_function(
        callee,
        &[(0, "FADD R1, R2, R3 ;".into()), (0x10, "RET.REL.NODEC R20 0x0 ;".into())],
        0,
    );
    let calls = core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    // one region each: the callee's slot 0, the kernel's slot 1, both
    // counting into the launch's table
    assert_eq!(f_calls.expect("callee")[0].args[1], CallArg::Const64 { value: 0 });
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].args[1], CallArg::Const64 { value: 1 });
    assert_eq!(calls[0].args[2], CallArg::LaunchVal64);
    // a kernel the tool could not plan is not counted: it runs as it is
    let other = KernelNames { mangled: "_Z1gv", demangled: "g()" };
    assert!(!core.launch(other).instrument);
    let d = core.launch(NAMES);
    assert_eq!(d, LaunchDecision { instrument: true, serial: 1, screen: None, prepare_now: false });
    assert_eq!(core.count_table(0, 4), None, "not granted");
    let shape = core.count_table(1, 3).expect("table");
    assert_eq!((shape.slots, shape.windows, shape.window_blocks), (2, 2, 2));
    let mut table = vec![0u8; shape.bytes()];
    table[..TABLE_HEADER_BYTES].copy_from_slice(&shape.header());
    // window 1: a warp of 32 lanes ran the kernel (3 instructions) and
    // called f (2) once
    for slot in 0..2 {
        let at = TABLE_HEADER_BYTES + (2 + slot) * SLOT_BYTES;
        table[at..at + 8].copy_from_slice(&1u64.to_le_bytes());
        table[at + 8..at + 16].copy_from_slice(&32u64.to_le_bytes());
    }
    core.on_count_table(1, Some(&table));
    // a second launch whose table was lost
    let d = core.launch(NAMES);
    core.count_table(d.serial, 1).expect("table");
    core.on_count_table(d.serial, None);
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let c = r.counters.expect("counters");
    assert_eq!((c.window_blocks, c.warp_size, c.kernels.len()), (2, 32, 1));
    let k = &c.kernels[0];
    assert_eq!((k.kernel.as_str(), k.launches.len(), k.launches[0].launch), ("k(float*)", 1, 0));
    let w = &k.launches[0].windows;
    assert_eq!((w.len(), w[0].warp_instructions, w[1].warp_instructions), (2, 0, 5));
    assert_eq!(w[1].thread_instructions, 5 * 32);
    assert!(r.run.notes.iter().any(|n| n.contains("k(float*) launch 1 not counted")), "{:?}", r.run.notes);
    let _ = std::fs::remove_file(report);
}

#[test]
fn a_refused_function_is_reported_as_skipped() {
    let report = temp("refused.json");
    let mut core = core_with(RunSettings { report_path: report.clone(), ..RunSettings::default() });
    core.set_lines_enabled(false);
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    core.leave_uninstrumented(NAMES, "a call has 13 arguments");
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    assert_eq!(r.kernels[0].status, KernelStatus::Skipped { reason: "a call has 13 arguments".into() });
    assert!(r.run.notes.iter().any(|n| n.contains("left uninstrumented")));
    let _ = std::fs::remove_file(report);
}

#[test]
fn events_stream_to_the_socket_and_filters_apply() {
    let sock = temp("events.sock");
    let _ = std::fs::remove_file(&sock);
    let listener = UnixListener::bind(&sock).expect("bind");
    let mut core = core_with(RunSettings {
        events_socket: Some(sock.clone()),
        kernels: vec!["^k".into()],
        ..RunSettings::default()
    });
    let (conn, _) = listener.accept().expect("accept");
    core.set_lines_enabled(false);
    assert!(core.wants_kernel(NAMES));
    assert!(!core.wants_kernel(KernelNames { mangled: "_Z5otherv", demangled: "other()" }));
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    core.launch(NAMES);
    let rec = DeviceRecord { site: SiteId(0), launch: 0, kinds: ExceptionKinds(0b0011), format: FpFormat::F32, seq: 1 };
    core.on_records(&rec.encode());
    core.finish().expect("finished");
    drop(core);
    let events: Vec<Event> =
        BufReader::new(conn).lines().map(|l| Event::from_line(&l.expect("line")).expect("event")).collect();
    let findings = events.iter().filter(|e| matches!(e, Event::Finding { .. })).count();
    assert_eq!(findings, 2);
    assert!(
        matches!(&events[0], Event::Hello { tool, process, .. } if tool == "xfpx-nvbit" && process.pid == std::process::id()),
        "{events:?}"
    );
    assert!(matches!(events.get(1), Some(Event::Kernel { probes: 2, .. })), "{events:?}");
    assert_eq!(events.last(), Some(&Event::Finished));
    let _ = std::fs::remove_file(sock);
}

/// The source position a site has so far.
fn location(core: &ToolCore, site: SiteId) -> Option<String> {
    core.sites.get(site).and_then(|s| s.location.clone()).map(|l| l.to_string())
}

/// A core whose cubin tools are fake scripts in `dir`: `cuobjdump`
/// runs `cuobjdump_body`, `nvdisasm` prints a line table giving
/// `_Z1kPf`'s instruction 0x10 the line k.cu:41.
fn core_with_fake_tools(dir: &std::path::Path, cuobjdump_body: &str, report: &str) -> ToolCore {
    let nvdisasm = "printf '\\t.section\\t.text._Z1kPf,\"ax\",@progbits\\n\\t//## File \"k.cu\", line 41\\n        /*0010*/  MUFU.RCP R4, R1 ;\\n'";
    core_with_tools(dir, cuobjdump_body, nvdisasm, report)
}

fn core_with_tools(dir: &std::path::Path, cuobjdump_body: &str, nvdisasm_body: &str, report: &str) -> ToolCore {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).expect("mkdir");
    let script = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    };
    let cuobjdump = script("cuobjdump", cuobjdump_body);
    let nvdisasm = script("nvdisasm", nvdisasm_body);
    let mut core = core_with(RunSettings { report_path: temp(report), ..RunSettings::default() });
    core.set_cubin_tools(CubinTools { cuobjdump, nvdisasm, max_file_bytes: 1 << 20, listings: None });
    core.device("test", Some("sm_90"));
    core
}

#[test]
fn line_tables_from_embedded_cubins() {
    let dir = temp("fake-tools");
    // a fake cuobjdump: device code only in files named *with-cubin*
    let mut core = core_with_fake_tools(
        &dir,
        "case \"$3\" in *with-cubin*) echo x > app.1.$2.cubin;; *) exit 255;; esac",
        "lines.json",
    );
    let without = dir.join("plain.so");
    let with = dir.join("lib-with-cubin.so");
    std::fs::write(&without, b"").expect("write");
    std::fs::write(&with, b"").expect("write");
    assert_eq!(core.load_file_lines(&without, "sm_90"), Ok(0));
    assert_eq!(core.load_file_lines(&with, "sm_90"), Ok(1));
    assert_eq!(core.load_file_lines(&with, "sm_90"), Ok(0), "each file once");
    assert!(core.has_lines("_Z1kPf"));
    core.set_lines_enabled(true);
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    let site = core.sites.lookup("k(float*)", 0x10).expect("site");
    assert_eq!(location(&core, site).as_deref(), Some("k.cu:41"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn line_listings_are_kept_across_runs() {
    let dir = temp("kept-listings");
    let runs = dir.join("runs");
    let nvdisasm = format!(
        "echo run >> '{}'; printf '\\t.section\\t.text._Z1kPf,\"ax\",@progbits\\n\\t//## File \"k.cu\", line 41\\n        /*0010*/  MUFU.RCP R4, R1 ;\\n'",
        runs.display()
    );
    let file = dir.join("app");
    let cache = dir.join("cache");
    let run = |cubin: &str| {
        let mut core = core_with_tools(&dir, &format!("echo {cubin} > app.1.$2.cubin"), &nvdisasm, "kept.json");
        core.tools.listings = Some(cache.clone());
        // the same disassembler in every run (its tag has its modification time)
        {
            // (closed before it runs: a file open for writing cannot be executed)
            let script = std::fs::File::options().write(true).open(dir.join("nvdisasm")).expect("script");
            script.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30)).expect("mtime");
        }
        std::fs::write(&file, b"").expect("write");
        assert_eq!(core.load_file_lines(&file, "sm_90"), Ok(1));
        assert!(core.has_lines("_Z1kPf"));
    };
    let count = || std::fs::read_to_string(&runs).map_or(0, |r| r.lines().count());
    run("x");
    assert_eq!(count(), 1, "the first run disassembles");
    run("x");
    assert_eq!(count(), 1, "a later run reads the kept listing");
    run("y");
    assert_eq!(count(), 2, "other bytes are disassembled again");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inlined_lines_name_the_line_they_were_inlined_into() {
    // nvdisasm -gi writes the chain of frames; an nvdisasm that refuses
    // -gi is asked for -g (the innermost line only)
    let listing = |chain: &str| {
        format!("printf '\\t.section\\t.text._Z1kPf,\"ax\",@progbits\\n{chain}        /*0010*/  MUFU.RCP R4, R1 ;\\n'")
    };
    let gi = listing("\\t//## File \"x.hpp\", line 9 inlined at \"k.cu\", line 41\\n\\t//## File \"k.cu\", line 41\\n");
    let g = listing("\\t//## File \"x.hpp\", line 9\\n");
    for (body, want) in [
        (format!("[ \"$2\" = -gi ] || exit 1; {gi}"), "x.hpp:9 (inlined at k.cu:41)"),
        (format!("[ \"$2\" = -gi ] && exit 1; {g}"), "x.hpp:9"),
    ] {
        let dir = temp("inline-tools");
        let mut core = core_with_tools(&dir, "echo x > app.1.$2.cubin", &body, "inline.json");
        let file = dir.join("app");
        std::fs::write(&file, b"").expect("write");
        assert_eq!(core.load_file_lines(&file, "sm_90"), Ok(1), "{body}");
        core.set_lines_enabled(true);
        core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
        let site = core.sites.lookup("k(float*)", 0x10).expect("site");
        assert_eq!(location(&core, site).as_deref(), Some(want));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn line_tables_are_searched_only_for_findings() {
    let dir = temp("lazy-tools");
    // every call of the fake cuobjdump leaves a mark
    let marks = dir.join("marks");
    let mut core =
        core_with_fake_tools(&dir, &format!("echo run >> {}; echo x > app.1.$2.cubin", marks.display()), "lazy.json");
    core.set_lines_enabled(true);
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    core.launch(NAMES);
    assert!(!marks.exists(), "no search while instrumenting");
    let site = core.sites.lookup("k(float*)", 0x10).expect("site");
    assert_eq!(location(&core, site), None);
    for seq in 1..=2 {
        let rec = DeviceRecord { site, launch: 0, kinds: ExceptionKinds(1 << (seq - 1)), format: FpFormat::F32, seq };
        core.on_records(&rec.encode());
    }
    let runs = std::fs::read_to_string(&marks).expect("searched").lines().count();
    assert_eq!(runs, 1, "one search for the kernel's findings");
    assert_eq!(location(&core, site).as_deref(), Some("k.cu:41"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unparsable_sass_skips_the_kernel() {
    let mut core = core_with(RunSettings { report_path: temp("unused.json"), ..RunSettings::default() });
    core.set_lines_enabled(false);
    let e = core.instrument_function(NAMES, &[(0, "FADD R1,, R2".into())], 0).expect_err("skipped");
    assert!(e.contains("0x0"), "{e}");
    assert!(matches!(core.report().kernels[0].status, KernelStatus::Skipped { .. }));
}

#[test]
fn dumps_go_to_the_dump_folder_and_a_failed_one_is_a_note() {
    let dir = temp("dumps");
    let _ = std::fs::remove_dir_all(&dir);
    let report = dir.join("r.json");
    let with_dump = |dump: std::path::PathBuf| {
        core_with(RunSettings { report_path: report.clone(), dump_dir: Some(dump), ..RunSettings::default() })
    };
    let mut core = with_dump(dir.join("dump"));
    core.set_lines_enabled(false);
    core.instrument_function(NAMES, &instrs(), 0).expect("instrumented");
    let text = std::fs::read_to_string(dir.join("dump/_Z1kPf.sass.txt")).expect("dumped");
    assert!(text.contains("MUFU.RCP R4, R1"), "{text}");
    // a dump folder that cannot be made: the function is still planned
    std::fs::write(dir.join("file"), b"x").expect("write");
    let mut core = with_dump(dir.join("file"));
    core.set_lines_enabled(false);
    assert!(core.instrument_function(NAMES, &instrs(), 0).is_ok());
    assert!(core.report().run.notes.iter().any(|n| n.starts_with("cannot write dump")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// An MMA in flight over a branch and a compare: the compare's check is
/// left out and the notes count it; a counted run, whose regions after
/// the branch would start in the window, refuses the function.
fn in_flight_instrs() -> Vec<(u64, String)> {
    [
        "HGMMA.64x128x16.F32 R24, gdesc[UR16].tnspA, R24, gsb0 ;",
        "@P0 BRA 0x30 ;",
        "FSETP.EQ.AND P5, PT, RZ, R18, PT ;",
        "WARPGROUP.DEPBAR.LE gsb0, 0x0 ;",
        "FADD R30, R24, R25 ;",
        "EXIT ;",
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| (i as u64 * 16, t.to_string()))
    .collect()
}

#[test]
fn calls_in_a_warpgroup_window_are_left_out_and_said() {
    let report = temp("in-flight.json");
    let mut core = detect_core(&report, 1);
    core.set_lines_enabled(false);
    let calls = core.instrument_function(NAMES, &in_flight_instrs(), 0x1000).expect("instrumented");
    assert!(calls.iter().all(|c| c.instr == 4), "only the add after the wait is checked: {calls:?}");
    assert!(!calls.is_empty());
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    assert!(
        r.run
            .notes
            .iter()
            .any(|n| n.starts_with("1 calls in 1 functions (k(float*)) were left out: they would have run")),
        "{:?}",
        r.run.notes
    );

    let report = temp("in-flight-counted.json");
    let mut core =
        core_with(RunSettings { tool: ToolKind::Counters, report_path: report.clone(), ..RunSettings::default() });
    core.set_lines_enabled(false);
    let refused = core.instrument_function(NAMES, &in_flight_instrs(), 0);
    assert!(refused.as_ref().is_err_and(|e| e.contains("cannot be counted exactly")), "{refused:?}");
    core.finish().expect("written");
    let r = xfpx_common::report::Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    assert!(matches!(&r.kernels[0].status, KernelStatus::Skipped { reason } if reason.contains("warpgroup")));
    let _ = std::fs::remove_file(report);
}
