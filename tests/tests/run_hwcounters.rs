//! `xfpx run --tool counters --counters hardware` on the CLI side, end to
//! end without a GPU: the scripted stand-in program sends the `counters`
//! events the CUPTI library sends after each pass (source `hardware`, one
//! window per launch; test hook `XFPX_TOOL_LIBRARY=none`). The run's
//! configuration carries the source, the table says what the hardware does
//! not count, `xfpx region build` learns `inact` and `pred_on` from three
//! runs, `--fail-on region` fails a run whose lanes went idle, and a region
//! of one source checked against counters of the other is refused in one
//! line (misused flags: `run_counters.rs`).

mod common;

use common::{run, scripted_app, xfpx, xfpx_without_library, Outcome};
use std::path::Path;
use xfpx_common::config::RunConfig;
use xfpx_common::counters::{CounterSource, LaunchCounters, WindowCounters};
use xfpx_common::event::Event;
use xfpx_common::report::Report;
use xfpx_tests::event_lines;

/// One launch of `reduce` as the hardware counts it: 1000 warp
/// instructions, `idle` lanes of each inactive, 900 of every 1000 thread
/// instructions with their guard held.
fn launch(index: u64, idle: u64, source: CounterSource, window_blocks: u32) -> Event {
    let thread = 1000 * (32 - idle);
    let w = WindowCounters {
        index: 0,
        warp_instructions: 1000,
        thread_instructions: thread,
        thread_instructions_pred_on: thread / 10 * 9,
        inactive_lanes: 1000 * idle,
        ..WindowCounters::default()
    };
    Event::Counters {
        kernel: "reduce".into(),
        window_blocks,
        warp_size: 32,
        source,
        launch: LaunchCounters { launch: index, windows: vec![w] },
    }
}

/// `xfpx run --vendor nvidia --tool counters FLAGS -- scripted-event-app`
/// sending two launches of `reduce` with counters from `source`.
fn counted_run(dir: &Path, name: &str, idle: [u64; 2], source: CounterSource, flags: &[&str]) -> Outcome {
    let events = [
        Event::Device { vendor: "nvidia".into(), device: "Scripted GPU".into(), target: Some("sm_90".into()) },
        Event::Launch { kernel: "reduce".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        Event::Launch { kernel: "reduce".into(), index: 1, instrumented: true, screened: false, unchecked: None },
        launch(0, idle[0], source, 0),
        launch(1, idle[1], source, 0),
    ];
    let file = format!("{name}.jsonl");
    std::fs::write(dir.join(&file), event_lines(&events)).expect("events");
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia", "--tool", "counters", "--report"])
        .arg(format!("{name}.json"))
        .args(flags)
        .arg("--")
        .arg(scripted_app())
        .args(["--events", &file, "--finish", "--save-config", &format!("{name}.config.json")]);
    run(c)
}

const HW: CounterSource = CounterSource::Hardware;

#[test]
fn hardware_counters_report_tabulate_and_check_their_region() {
    let d = tempfile::tempdir().expect("scratch");
    let dir = d.path();
    let o = counted_run(dir, "run0", [0, 2], HW, &["--counters", "hardware"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let c = RunConfig::load(&dir.join("run0.config.json")).expect("configuration");
    assert_eq!((c.counter_source, c.count_window_blocks, c.sample_every), (HW, 0, 1));
    // the table says what the hardware does not count
    let table = o.stderr.split("counters (whole launches, from the hardware counters").nth(1).expect("table");
    let row = table.lines().find(|l| l.trim_start().starts_with("reduce")).expect("a row for reduce");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["reduce", "2", "2000", &(1000 * (32 + 30)).to_string()], "{row}");
    assert_eq!(&cells[6..], ["-", "-", "-"], "{row}");
    let r = Report::from_json(&std::fs::read_to_string(dir.join("run0.json")).expect("report")).expect("valid");
    assert_eq!(r.counters.expect("counters").source, HW);

    // a region from three fault-free runs, on what the hardware counts
    for (name, idle) in [("run1", [1, 0]), ("run2", [2, 1])] {
        assert_eq!(counted_run(dir, name, idle, HW, &["--counters", "hardware"]).code, Some(0));
    }
    let mut c = xfpx(dir);
    c.args(["region", "build", "run0.json", "run1.json", "run2.json", "-o", "region.json"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("(inact, pred_on, margin 1)"), "{}", o.stderr);
    let region: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("region.json")).expect("region")).expect("json");
    assert_eq!(region["source"], "hardware");
    // STACK is not measured by the hardware: refused in one line
    let mut c = xfpx(dir);
    c.args(["region", "build", "run0.json", "-o", "stack.json", "--counters", "inact,stack"]);
    run(c).assert_one_line_error(1, "counter `stack` is not measured by hardware counters");

    // the in-field check: inside passes, idle lanes past the region fail
    let check = ["--counters", "hardware", "--region", "region.json", "--fail-on", "region"];
    let o = counted_run(dir, "run3", [1, 2], HW, &check);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: region: 2 windows checked, 0 outside their region"), "{}", o.stderr);
    let o = counted_run(dir, "run4", [0, 9], HW, &check);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: region: kernel reduce launch 1 window 0: inact"), "{}", o.stderr);

    // instrumented counters against the hardware region: one line
    let o = counted_run(dir, "inst", [0, 0], CounterSource::Instrumented, &[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let mut c = xfpx(dir);
    c.args(["report", "inst.json", "--region", "region.json"]);
    run(c).assert_one_line_error(1, "mismatched region: inst.json has instrumented counters, the region hardware ones");
    // nor is a region learnt from both
    let mut c = xfpx(dir);
    c.args(["region", "build", "run0.json", "inst.json", "-o", "mixed.json", "--counters", "inact"]);
    run(c).assert_one_line_error(1, "inst.json has instrumented counters, the others hardware ones");
}
