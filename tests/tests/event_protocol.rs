//! The CLI side of a run, end to end, without a GPU: `xfpx run` with the
//! test hook `XFPX_TOOL_LIBRARY=none` starts `scripted-event-app`, which
//! plays the part of the instrumentation library by sending scripted
//! events on the socket named in the run configuration. These tests check
//! the event protocol, live printing, the report file, exit statuses and
//! signal handling of the CLI; they do not exercise any GPU backend.

mod common;

use common::{finish, run, scripted_app, xfpx_without_library, Outcome};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use xfpx_common::class::FpFormat;
use xfpx_common::config::RunConfig;
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{ExitStatus, KernelStatus, Report};
use xfpx_tests::{event_lines, finding};

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

fn device() -> Event {
    Event::Device { vendor: "nvidia".into(), device: "Scripted GPU".into(), target: Some("sm_90".into()) }
}

/// A typical run: a device, two kernels, launches and findings, one
/// of them seen twice.
fn typical_events() -> Vec<Event> {
    vec![
        device(),
        Event::Kernel { name: "gemm".into(), status: KernelStatus::Instrumented, probes: 40 },
        Event::Kernel { name: "copy".into(), status: KernelStatus::Excluded, probes: 0 },
        Event::Launch { kernel: "gemm".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        finding("gemm", ExceptionKind::Nan, FpFormat::F32, 3, 0x130, "FADD R4, R2, R3", Some(("gemm.cu", 42)), 0, 2),
        finding(
            "gemm",
            ExceptionKind::Div0,
            FpFormat::F64,
            7,
            0x2a0,
            "MUFU.RCP64H R9, R7",
            Some(("gemm.cu", 51)),
            0,
            1,
        ),
        Event::Launch { kernel: "copy".into(), index: 0, instrumented: false, screened: false, unchecked: None },
        Event::Launch { kernel: "gemm".into(), index: 1, instrumented: true, screened: false, unchecked: None },
        finding("gemm", ExceptionKind::Nan, FpFormat::F32, 3, 0x130, "FADD R4, R2, R3", Some(("gemm.cu", 42)), 1, 5),
        finding("gemm", ExceptionKind::Sub, FpFormat::F32, 4, 0x150, "FMUL R5, R4, R4", None, 1, 1),
    ]
}

fn write_events(dir: &Path, name: &str, events: &[Event]) -> String {
    std::fs::write(dir.join(name), event_lines(events)).expect("write events");
    name.to_string()
}

fn read_report(path: &Path) -> Report {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "msgpack") {
        Report::from_msgpack(&bytes).expect("msgpack report")
    } else {
        Report::from_json(std::str::from_utf8(&bytes).expect("utf-8")).expect("json report")
    }
}

/// `xfpx run --vendor nvidia FLAGS -- scripted-event-app APP_ARGS` in `dir`.
fn xfpx_run(dir: &Path, flags: &[&str], app_args: &[&str]) -> Outcome {
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia"]).args(flags).arg("--").arg(scripted_app()).args(app_args);
    run(c)
}

fn found_lines(o: &Outcome) -> Vec<&str> {
    o.stderr.lines().filter(|l| l.starts_with("xfpx: found ")).collect()
}

#[test]
fn findings_are_printed_once_and_recorded() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &[], &["--events", &events, "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        found_lines(&o),
        [
            "xfpx: found nan (f32) in gemm at gemm.cu:42: FADD R4, R2, R3 [+0x130]",
            "xfpx: found div0 (f64) in gemm at gemm.cu:51: MUFU.RCP64H R9, R7 [+0x2a0]",
            "xfpx: found sub (f32) in gemm at unknown location: FMUL R5, R4, R4 [+0x150]",
        ],
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("xfpx: device Scripted GPU (sm_90)"), "{}", o.stderr);
    assert!(
        o.stderr.contains("xfpx: 3 findings in 1 of 2 kernels (nvidia, Scripted GPU, sm_90, mode fast)"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "stdout: {}", o.stdout);

    let r = read_report(&d.path().join("xfpx-report.json"));
    assert_eq!(r.run.exit, ExitStatus::Code { code: 0 });
    assert_eq!(r.run.device, "Scripted GPU");
    assert_eq!(r.run.target.as_deref(), Some("sm_90"));
    assert!(r.run.finished_unix.is_some());
    assert!(r.run.command.last().is_some_and(|a| a == "--finish"));
    assert!(r.run.notes.iter().any(|n| n.contains("XFPX_TOOL_LIBRARY=none")), "{:?}", r.run.notes);
    assert!(!r.run.notes.iter().any(|n| n.contains("without finishing")), "{:?}", r.run.notes);
    let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["copy", "gemm"]);
    let copy = &r.kernels[0];
    assert_eq!((copy.status.clone(), copy.launches, copy.instrumented_launches), (KernelStatus::Excluded, 1, 0));
    let gemm = &r.kernels[1];
    assert_eq!((gemm.launches, gemm.instrumented_launches, gemm.probes), (2, 2, 40));
    let recs: Vec<(ExceptionKind, u64, u64, u64)> =
        gemm.records.iter().map(|r| (r.kind, r.site.offset, r.first_launch, r.occurrences)).collect();
    assert_eq!(
        recs,
        [(ExceptionKind::Nan, 0x130, 0, 7), (ExceptionKind::Sub, 0x150, 1, 1), (ExceptionKind::Div0, 0x2a0, 0, 1)]
    );
}

#[test]
fn exit_status_of_the_program_is_kept() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &[], &["--events", &events, "--finish", "--exit", "7"]);
    assert_eq!(o.code, Some(7), "{}", o.stderr);
    assert_eq!(read_report(&d.path().join("xfpx-report.json")).run.exit, ExitStatus::Code { code: 7 });
    assert!(o.stderr.contains("the program exited with status 7"), "{}", o.stderr);
}

#[test]
fn a_crashing_program_still_gets_its_report() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &["--report", "crash.json"], &["--events", &events, "--raise", "SEGV"]);
    assert_eq!(o.code, Some(128 + libc::SIGSEGV), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"));
    assert!(o.stderr.contains("was killed by SIGSEGV"), "{}", o.stderr);
    let r = read_report(&d.path().join("crash.json"));
    assert_eq!(r.run.exit, ExitStatus::Signal { signal: libc::SIGSEGV });
    assert_eq!(r.records().count(), 3);
    assert!(
        r.run.notes.iter().any(|n| n.contains("1 of 1 instrumented process ended without finishing")),
        "{:?}",
        r.run.notes
    );
}

#[test]
fn fail_on_overrides_the_exit_status_when_it_matches() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &["--fail-on", "nan"], &["--events", &events, "--finish"]);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let o = xfpx_run(d.path(), &["--fail-on", "inf"], &["--events", &events, "--finish", "--exit", "4"]);
    assert_eq!(o.code, Some(4), "inf was never found: {}", o.stderr);
    let o = xfpx_run(d.path(), &["--fail-on", "inf,div0"], &["--events", &events, "--finish", "--exit", "4"]);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let launched =
        Event::Launch { kernel: "gemm".into(), index: 0, instrumented: true, screened: false, unchecked: None };
    let clean = write_events(d.path(), "clean.jsonl", &[device(), launched]);
    let o = xfpx_run(d.path(), &["--fail-on", "all"], &["--events", &clean, "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // Attached, but no launch ran instrumented code: nothing was checked.
    let idle = write_events(d.path(), "idle.jsonl", &[device()]);
    let o = xfpx_run(d.path(), &["--fail-on", "all"], &["--events", &idle, "--finish"]);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: nothing was checked: no kernel launch ran instrumented code"), "{}", o.stderr);
}

#[test]
fn several_connections_and_a_child_process_are_merged() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let child = write_events(
        d.path(),
        "child.jsonl",
        &[
            device(),
            Event::Launch { kernel: "reduce".into(), index: 0, instrumented: true, screened: false, unchecked: None },
            finding(
                "reduce",
                ExceptionKind::Inf,
                FpFormat::F16x2,
                9,
                0x80,
                "HFMA2 R1, R2, R3, R4",
                Some(("r.cu", 9)),
                0,
                4,
            ),
            finding(
                "gemm",
                ExceptionKind::Nan,
                FpFormat::F32,
                3,
                0x130,
                "FADD R4, R2, R3",
                Some(("gemm.cu", 42)),
                2,
                1,
            ),
        ],
    );
    let o = xfpx_run(
        d.path(),
        &["--report", "merged.msgpack"],
        &["--events", &events, "--connections", "3", "--child-events", &child, "--finish"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(found_lines(&o).len(), 4, "{}", o.stderr);
    assert_eq!(o.stderr.matches("xfpx: device ").count(), 1, "the device is named once: {}", o.stderr);
    let r = read_report(&d.path().join("merged.msgpack"));
    assert_eq!(r.records().count(), 4);
    let nan = r.records().find(|(k, rec)| *k == "gemm" && rec.kind == ExceptionKind::Nan).expect("nan record");
    assert_eq!(nan.1.occurrences, 8);
    assert!(r.records().any(|(k, rec)| k == "reduce" && rec.format == FpFormat::F16x2));
    assert!(
        !r.run.notes.iter().any(|n| n.contains("without finishing")),
        "4 connections all finished: {:?}",
        r.run.notes
    );
}

#[test]
fn record_limit_truncates() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &["--max-records", "1"], &["--events", &events, "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(found_lines(&o).len(), 1);
    assert!(o.stderr.contains("the record limit was reached"), "{}", o.stderr);
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert!(r.run.truncated);
    assert_eq!(r.records().count(), 1);
}

#[test]
fn sampled_launches_are_never_silent() {
    // fast mode samples by default: the report must not read "every launch"
    let d = scratch();
    let mut events = typical_events();
    for index in 2..10 {
        events.push(Event::Launch {
            kernel: "gemm".into(),
            index,
            instrumented: index < 4 || (index + 1).is_power_of_two(),
            screened: false,
            unchecked: None,
        });
    }
    let events = write_events(d.path(), "events.jsonl", &events);
    let o = xfpx_run(d.path(), &[], &["--events", &events, "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert!(r.run.sample_auto, "auto sampling is reported");
    assert_eq!(r.run.sample_every, 0, "sample_every does not claim every launch");
    assert!(
        o.stderr.contains("xfpx: 5 of 10 launches of 1 instrumented kernel ran unchecked")
            && o.stderr.contains(": gemm (5 of 10); `--sample 1` checks every launch"),
        "{}",
        o.stderr
    );
    // every launch checked: nothing said, sample_every reads 1
    let o = xfpx_run(
        d.path(),
        &["--sample", "1"],
        &["--events", &write_events(d.path(), "all.jsonl", &typical_events()), "--finish"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert_eq!((r.run.sample_every, r.run.sample_auto), (1, false));
    assert!(!o.stderr.contains("unchecked"), "{}", o.stderr);
}

#[test]
fn malformed_lines_are_skipped_with_a_warning() {
    let d = scratch();
    let mut text = event_lines(&typical_events()[..5]);
    text.push_str("{\"event\": \"finding\", \"kernel\": 5}\nnot json at all\n");
    text.push_str(&event_lines(&typical_events()[5..]));
    std::fs::write(d.path().join("events.jsonl"), text).expect("write");
    let o = xfpx_run(d.path(), &[], &["--events", "events.jsonl", "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stderr.matches("warning: ignoring a malformed event").count(), 2, "{}", o.stderr);
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert_eq!(r.records().count(), 3);
    assert!(r.run.notes.iter().any(|n| n == "2 malformed event lines were ignored"), "{:?}", r.run.notes);
}

#[test]
fn json_output_is_the_report() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let o = xfpx_run(d.path(), &["--format", "json"], &["--say", "program output", "--events", &events, "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let printed = Report::from_json(&o.stdout).expect("stdout is the report alone");
    assert!(o.stderr.contains("program output\n"), "the program's stdout goes to stderr: {}", o.stderr);
    assert_eq!(printed, read_report(&d.path().join("xfpx-report.json")));
    assert_eq!(found_lines(&o).len(), 3, "live findings still go to stderr");
}

#[test]
fn saved_reports_are_summarised() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    for name in ["r.json", "r.msgpack"] {
        let o = xfpx_run(d.path(), &["--report", name], &["--events", &events, "--finish"]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let mut c = common::xfpx(d.path());
        c.args(["report", name]);
        let shown = run(c);
        assert_eq!(shown.code, Some(0), "{}", shown.stderr);
        let s = &shown.stdout;
        assert!(s.starts_with("xfpx: 3 findings in 1 of 2 kernels"), "{s}");
        assert!(
            s.contains(
                "\n    gemm.cu:42: nan (f32); 1 finding at 1 instruction, 7 occurrences, first in launch 0\n      \
                 +0x130  FADD R4, R2, R3  nan (f32), first in launch 0, 7 occurrences\n"
            ),
            "{s}"
        );
        let f32_row = s.lines().find(|l| l.trim_start().starts_with("f32 ")).expect("f32 row");
        assert_eq!(f32_row.split_whitespace().collect::<Vec<_>>(), ["f32", "1", "0", "1", "0", "2"], "{s}");
        let mut c = common::xfpx(d.path());
        c.args(["report", name, "--format", "json"]);
        let json = run(c);
        assert_eq!(Report::from_json(&json.stdout).expect("json"), read_report(&d.path().join(name)));
    }
}

#[test]
fn flags_reach_the_backend_configuration() {
    let d = scratch();
    let o = xfpx_run(
        d.path(),
        &[
            "--kernels",
            "^gemm",
            "--kernels",
            "reduce",
            "--exclude",
            "_small$",
            "--sample",
            "4",
            "--instr-range",
            "16:512",
            "--max-records",
            "99",
            "--dump",
            "dumps",
            "--report",
            "out.json",
        ],
        &["--save-config", "config.json", "--finish"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let c = RunConfig::load(&d.path().join("config.json")).expect("configuration");
    assert_eq!(c.kernels, ["^gemm", "reduce"]);
    assert_eq!(c.exclude, ["_small$"]);
    assert_eq!(c.sample_every, 4);
    assert_eq!(c.instr_range, Some((16, 512)));
    assert_eq!(c.max_records, Some(99));
    let root = d.path().canonicalize().expect("canonical");
    let under_root = |p: &Path| p.canonicalize().is_ok_and(|p| p.starts_with(&root));
    assert!(c.dump_dir.as_deref().is_some_and(under_root), "{:?}", c.dump_dir);
    assert!(c.report_path.is_absolute() && c.report_path.ends_with("out.json"));
    let socket = c.events_socket.clone().expect("socket path");
    assert!(!socket.exists(), "the socket is removed after the run");
    assert_eq!(read_report(&d.path().join("out.json")).run.sample_every, 4);
}

/// Live printing and signals: the finding line must appear while the
/// program still runs; SIGTERM sent to `xfpx` is passed on to the
/// program, and the report is written all the same.
#[test]
fn findings_stream_live_and_sigterm_is_forwarded() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events()[..5]);
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--"])
        .arg(scripted_app())
        .args(["--events", &events, "--wait-for-signal"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start xfpx");
    let started = Instant::now();
    let pid = child.id();

    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read stdout");
    assert_eq!(line, "waiting\n", "the program should be waiting for a signal");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    loop {
        let mut l = String::new();
        if stderr.read_line(&mut l).expect("read stderr") == 0 {
            panic!("xfpx ended before printing the finding: {seen}");
        }
        seen.push_str(&l);
        if l.starts_with("xfpx: found nan (f32) in gemm at gemm.cu:42") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no live finding: {seen}");
    }
    assert!(child.try_wait().expect("poll").is_none(), "xfpx must still be running");

    common::send_signal(pid as i32, libc::SIGTERM);
    child.stdout = Some(stdout.into_inner());
    child.stderr = Some(stderr.into_inner());
    let o = finish(child);
    assert_eq!(o.code, Some(128 + libc::SIGTERM), "{seen}{}", o.stderr);
    assert!(started.elapsed() < Duration::from_secs(30), "the program was not stopped by the signal");
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert_eq!(r.run.exit, ExitStatus::Signal { signal: libc::SIGTERM });
    assert_eq!(r.records().count(), 1);
    assert!(r.run.notes.iter().any(|n| n == "xfpx received SIGTERM while the program ran"), "{:?}", r.run.notes);
}

/// A closed stderr (the reader went away) must not stop the report.
#[test]
fn closed_output_pipes_do_not_lose_the_report() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events());
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--", "sh", "-c"])
        .arg(format!("sleep 0.3; exec {} --events {events} --finish --exit 5", scripted_app().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start xfpx");
    drop(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(start.elapsed() < common::LIMIT, "xfpx did not finish");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(5));
    assert_eq!(read_report(&d.path().join("xfpx-report.json")).records().count(), 3);

    let mut c = common::xfpx(d.path());
    c.args(["report", "xfpx-report.json"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("start xfpx report");
    drop(child.stdout.take());
    child.stdout = None;
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err).expect("read");
    let status = child.wait().expect("wait");
    // Nobody reads the summary: a quiet failure (or success, when the
    // summary fit in the pipe before it closed), never a panic.
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?} {err}");
    assert!(err.is_empty(), "{err}");
}

/// Random bytes on the event socket are skipped line by line; the events
/// around them still count and nothing panics.
#[test]
fn garbage_on_the_socket_is_survived() {
    let d = scratch();
    let mut bytes = event_lines(&typical_events()[..5]).into_bytes();
    let mut x: u32 = 0x2545_f491;
    for _ in 0..4000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push((x >> 8) as u8);
    }
    bytes.push(b'\n');
    bytes.extend_from_slice(event_lines(&typical_events()[5..]).as_bytes());
    std::fs::write(d.path().join("events.jsonl"), bytes).expect("write");
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--"]).arg(scripted_app()).args(["--events", "events.jsonl", "--finish"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"));
    assert!(o.stderr.contains("warning: ignoring a malformed event"), "{}", o.stderr);
    assert_eq!(read_report(&d.path().join("xfpx-report.json")).records().count(), 3);
}

/// A signal sent to the whole process group (as `timeout` does) reaches
/// the program directly: the exit status and report are the program's, and
/// passing the signal on to a program already gone is not worth a warning
/// (that case depends on timing here; `run::tests` checks it directly).
#[test]
fn a_signal_to_the_whole_group_is_quiet() {
    let d = scratch();
    let events = write_events(d.path(), "events.jsonl", &typical_events()[..5]);
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--"])
        .arg(scripted_app())
        .args(["--events", &events, "--wait-for-signal"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut child = c.spawn().expect("start xfpx");
    let pid = child.id();
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read stdout");
    assert_eq!(line, "waiting\n");
    common::send_signal(-(pid as i32), libc::SIGTERM);
    child.stdout = Some(stdout.into_inner());
    let o = finish(child);
    assert_eq!(o.code, Some(128 + libc::SIGTERM), "{}", o.stderr);
    assert!(!o.stderr.contains("warning"), "{}", o.stderr);
    assert_eq!(read_report(&d.path().join("xfpx-report.json")).run.exit, ExitStatus::Signal { signal: libc::SIGTERM });
}

/// A process the program leaves behind may keep its connection open: an
/// idle one is waited for briefly, a busy one for a bounded time, and its
/// events up to then are kept.
#[test]
fn processes_left_behind_do_not_hold_the_run() {
    let d = scratch();
    xfpx_tests::xfpx_binary(); // built before the clock starts
    for (every_ms, at_most) in [(0u64, 8u64), (100, 20)] {
        let start = Instant::now();
        let o = xfpx_run(d.path(), &[], &["--leave-behind", &format!("30,{every_ms}"), "--finish"]);
        let took = start.elapsed();
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(took < Duration::from_secs(at_most), "every {every_ms} ms: took {took:?}");
        let r = read_report(&d.path().join("xfpx-report.json"));
        assert!(r.run.notes.iter().any(|n| n == "left behind"), "{:?}", r.run.notes);
    }
}

#[test]
fn screened_launches_and_findings_reach_the_report_and_the_summary() {
    use xfpx_common::screened::{LaunchCheck, ScreenedBefore, ScreenedFinding, Unchecked};
    let d = scratch();
    let mut events =
        vec![device(), Event::Kernel { name: "relax_step".into(), status: KernelStatus::Instrumented, probes: 3 }];
    for index in 0..12u64 {
        let check = match index {
            0..=3 | 7 => LaunchCheck::Instrumented,
            10 => LaunchCheck::Unchecked(Some(Unchecked::Graph)),
            _ => LaunchCheck::Screened,
        };
        events.push(Event::launch("relax_step".into(), index, check));
    }
    let finding = ScreenedFinding {
        kind: ExceptionKind::Nan,
        format: FpFormat::F32,
        param: 3,
        declared: Some("float*".into()),
        bytes: 40_000,
        first_launch: 9,
        before: 0,
        after: 1,
        first_element: Some(9),
        screened_before: Some(ScreenedBefore { kernel: "relax_step".into(), launch: 8, just_before: false }),
        again: 0,
    };
    events.push(Event::Screened { kernel: "relax_step".into(), finding: finding.clone() });
    events.push(Event::Screened {
        kernel: "relax_step".into(),
        finding: ScreenedFinding { first_launch: 11, ..finding },
    });
    events.push(Event::ScreenLost { kernel: "relax_step".into() });
    let events = write_events(d.path(), "events.jsonl", &events);
    let o = xfpx_run(d.path(), &["--fail-on", "nan"], &["--events", &events, "--finish"]);
    // a screened NaN is a NaN: --fail-on nan fails the run
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let printed: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("xfpx: screened ")).collect();
    assert_eq!(printed.len(), 1, "printed once: {}", o.stderr);
    assert!(printed[0].contains("in relax_step launch 9: buffer arg3 (float*, 40000 bytes) held 1 NaN value"));
    assert!(found_lines(&o).is_empty(), "never a precise finding");
    let r = read_report(&d.path().join("xfpx-report.json"));
    let k = &r.kernels[0];
    assert_eq!((k.launches, k.instrumented_launches, k.screened_launches), (12, 5, 5));
    let reasons: Vec<(Unchecked, u64)> = k.unchecked.iter().map(|u| (u.reason, u.launches)).collect();
    assert_eq!(reasons, vec![(Unchecked::Graph, 1), (Unchecked::ScreenFailed, 1)]);
    assert_eq!(k.screened.len(), 1);
    assert_eq!((k.screened[0].first_launch, k.screened[0].again), (9, 1));
    assert!(k.records.is_empty());
    assert!(o.stderr.contains("1 screened finding (by launch and buffer)"), "{}", o.stderr);
    assert!(o.stderr.contains("screened findings (located by launch and buffer, not by source line):"), "{}", o.stderr);
    assert!(
        o.stderr.contains("xfpx: 2 of 12 launches of 1 instrumented kernel ran unchecked [launched by a CUDA graph: 1; the screen could not be enqueued: 1]: relax_step (2 of 12)"),
        "{}",
        o.stderr
    );
}

#[test]
fn flow_events_make_the_flow_section_and_appearances_are_printed() {
    use xfpx_common::flow::{lane, FlowState};
    use xfpx_common::report::{FlowFinding, SiteRef};
    let d = scratch();
    let site = |offset: u64, line: u32, instr: &str| SiteRef {
        id: xfpx_common::site::SiteId(offset as u32),
        offset,
        instr: instr.into(),
        location: Some(xfpx_common::site::SourceLoc::new("k.cu", line)),
    };
    let flow = |state, kind, site, class: &str, launch, occurrences, seen| Event::Flow {
        kernel: "k".into(),
        finding: FlowFinding {
            state,
            kind,
            format: FpFormat::F32,
            site,
            class: class.into(),
            launch,
            occurrences,
            seen,
        },
    };
    let events = vec![
        device(),
        Event::Kernel { name: "k".into(), status: KernelStatus::Instrumented, probes: 3 },
        Event::Kernel { name: "quiet".into(), status: KernelStatus::Instrumented, probes: 1 },
        Event::Launch { kernel: "k".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        flow(FlowState::Appear, ExceptionKind::Nan, site(0x10, 7, "FMUL R4, R2, R3"), "f32.mul", 0, 1, 0),
        flow(FlowState::Propagate, ExceptionKind::Nan, site(0x20, 8, "FADD R5, R4, 1"), "f32.add", 0, 1, 0),
        // the sweep at the end: more executions, and the classes
        flow(
            FlowState::Appear,
            ExceptionKind::Nan,
            site(0x10, 7, "FMUL R4, R2, R3"),
            "f32.mul",
            u64::MAX,
            2,
            lane::SRC_ZERO | lane::SRC_INF,
        ),
    ];
    let events = write_events(d.path(), "events.jsonl", &events);
    let o = xfpx_run(d.path(), &["--tool", "flow", "--fail-on", "nan"], &["--events", &events, "--finish"]);
    assert_eq!(o.code, Some(3), "a NaN flowed: {}", o.stderr);
    let appears: Vec<&str> = o.stderr.lines().filter(|l| l.contains(" appears in ")).collect();
    assert_eq!(appears, ["xfpx: nan (f32) appears in k at k.cu:7: FMUL R4, R2, R3 [+0x10]"], "{}", o.stderr);
    assert!(o.stderr.contains("NaN appears at line 7 (0*inf), propagates through line 8."), "{}", o.stderr);
    let r = read_report(&d.path().join("xfpx-report.json"));
    assert_eq!(r.run.mode, "flow");
    let section = r.flow.expect("a flow section");
    let names: Vec<&str> = section.kernels.iter().map(|k| k.kernel.as_str()).collect();
    assert_eq!(names, ["k", "quiet"], "an instrumented kernel without flows is listed too");
    let k = &section.kernels[0];
    assert_eq!((k.records[0].occurrences, k.records[0].first_launch), (3, 0));
    assert_eq!(k.summary, ["NaN appears at line 7 (0*inf), propagates through line 8."]);
}
