//! `xfpx run --tool counters` on the CLI side, end to end without a GPU:
//! the scripted stand-in program sends the `counters` events the NVIDIA
//! tool sends after each launch (test hook `XFPX_TOOL_LIBRARY=none`). The
//! run's configuration carries the tool and its sampling windows, the
//! report carries the counters, the per-kernel table follows the summary,
//! a region learnt from three runs passes a fourth and `--fail-on region`
//! fails a run whose lanes went idle; misused flags get one line each.

mod common;

use common::{run, scripted_app, xfpx, xfpx_without_library, Outcome};
use std::path::Path;
use xfpx_common::config::RunConfig;
use xfpx_common::counters::{LaunchCounters, WindowCounters};
use xfpx_common::event::Event;
use xfpx_common::report::{KernelStatus, Report};
use xfpx_common::tool::ToolKind;
use xfpx_tests::event_lines;

/// One launch of `reduce` in two windows: 100 warp instructions per
/// window, `idle[w]` of each warp's 32 lanes inactive, 4 divergent
/// branches and 4 reconvergences.
fn launch(index: u64, idle: [u64; 2]) -> Event {
    let windows = idle
        .iter()
        .enumerate()
        .map(|(w, &off)| WindowCounters {
            index: w as u32,
            warp_instructions: 100,
            thread_instructions: 100 * (32 - off),
            thread_instructions_pred_on: 100 * (32 - off),
            inactive_lanes: 100 * off,
            divergent_branches: 4,
            reconvergences: 4,
            mix: [("int".to_string(), 60), ("f32.fma".to_string(), 40)].into_iter().collect(),
        })
        .collect();
    Event::Counters {
        kernel: "reduce".into(),
        window_blocks: 4,
        warp_size: 32,
        source: xfpx_common::counters::CounterSource::Instrumented,
        launch: LaunchCounters { launch: index, windows },
    }
}

/// `xfpx run --vendor nvidia --tool counters --window-blocks 4 FLAGS --
/// scripted-event-app APP_ARGS` sending two launches of `reduce`.
fn counted_run(dir: &Path, name: &str, idle: [[u64; 2]; 2], flags: &[&str], app_args: &[&str]) -> Outcome {
    let events = [
        Event::Device { vendor: "nvidia".into(), device: "Scripted GPU".into(), target: Some("sm_90".into()) },
        Event::Kernel { name: "reduce".into(), status: KernelStatus::Instrumented, probes: 12 },
        Event::Launch { kernel: "reduce".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        Event::Launch { kernel: "reduce".into(), index: 1, instrumented: true, screened: false, unchecked: None },
        launch(0, idle[0]),
        launch(1, idle[1]),
    ];
    let file = format!("{name}.jsonl");
    std::fs::write(dir.join(&file), event_lines(&events)).expect("events");
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia", "--tool", "counters", "--window-blocks", "4", "--report"])
        .arg(format!("{name}.json"))
        .args(flags)
        .arg("--")
        .arg(scripted_app())
        .args(["--events", &file, "--finish"])
        .args(app_args);
    run(c)
}

#[test]
fn counted_runs_report_tabulate_and_check_their_region() {
    let d = tempfile::tempdir().expect("scratch");
    let dir = d.path();
    // the configuration the backend reads: the tool, its windows, every launch
    let o = counted_run(dir, "run0", [[0, 2], [1, 1]], &[], &["--save-config", "config.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let c = RunConfig::load(&dir.join("config.json")).expect("configuration");
    assert_eq!((c.tool, c.count_window_blocks, c.sample_every, c.sample_doubling), (ToolKind::Counters, 4, 1, false));
    // the table after the summary
    assert!(
        o.stderr.contains("xfpx: counters of 1 of 1 kernel (nvidia, Scripted GPU, sm_90, mode counters)"),
        "{}",
        o.stderr
    );
    let table = o.stderr.split("counters (windows of 4 blocks):").nth(1).unwrap_or_default();
    let row = table.lines().find(|l| l.trim_start().starts_with("reduce")).expect("a row for reduce");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["reduce", "2", "400", &(100 * (32 + 30 + 31 + 31)).to_string()], "{row}");
    assert!(row.contains("int 60%, f32.fma 40%"), "{row}");
    let r = Report::from_json(&std::fs::read_to_string(dir.join("run0.json")).expect("report")).expect("valid");
    let s = r.counters.expect("counters");
    assert_eq!((s.window_blocks, s.kernels.len(), s.kernels[0].launches.len()), (4, 1, 2));
    assert_eq!(s.kernels[0].total().inactive_lanes, 100 * 4);

    // a region from three fault-free runs; a fourth inside it passes
    for (name, idle) in [("run1", [[2, 0], [0, 1]]), ("run2", [[1, 1], [2, 2]])] {
        assert_eq!(counted_run(dir, name, idle, &[], &[]).code, Some(0));
    }
    let mut c = xfpx(dir);
    c.args(["region", "build", "run0.json", "run1.json", "run2.json", "-o", "region.json"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let o = counted_run(dir, "run3", [[1, 0], [2, 1]], &["--region", "region.json", "--fail-on", "region"], &[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: region: 4 windows checked, 0 outside their region"), "{}", o.stderr);
    let r = Report::from_json(&std::fs::read_to_string(dir.join("run3.json")).expect("report")).expect("valid");
    let check = r.counters.and_then(|s| s.region_check).expect("the check is in the report");
    assert_eq!((check.windows_checked, check.deviations.len()), (4, 0));

    // idle lanes past the region: printed, and status 3 with --fail-on region
    let o = counted_run(dir, "run4", [[1, 9], [0, 0]], &["--region", "region.json", "--fail-on", "region"], &[]);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: region: kernel reduce launch 0 window 1: inact"), "{}", o.stderr);
    assert!(dir.join("run4.json").exists(), "the report is written");
    // without --fail-on region the program's status stands
    let o = counted_run(dir, "run5", [[1, 9], [0, 0]], &["--region", "region.json"], &[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn counters_flags_misused_get_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    let dir = d.path();
    let xfpx_run = |flags: &[&str]| {
        let mut c = xfpx_without_library(dir);
        c.args(["run", "--vendor", "nvidia"]).args(flags).arg("--").arg(scripted_app()).arg("--finish");
        run(c)
    };
    xfpx_run(&["--region", "region.json"]).assert_one_line_error(2, "--region needs --tool counters");
    xfpx_run(&["--window-blocks", "8"]).assert_one_line_error(2, "--window-blocks needs --tool counters");
    xfpx_run(&["--tool", "counters", "--fail-on", "region"])
        .assert_one_line_error(2, "--fail-on region needs --region REGION");
    // hardware counters: read per launch, every launch, nothing instrumented
    xfpx_run(&["--counters", "hardware"]).assert_one_line_error(2, "--counters needs --tool counters");
    let hw = ["--tool", "counters", "--counters", "hardware"];
    let with = |more: &[&str]| xfpx_run(&[&hw[..], more].concat());
    with(&["--window-blocks", "8"]).assert_one_line_error(1, "hardware counters are read per launch");
    with(&["--sample", "2"]).assert_one_line_error(1, "hardware counters count every launch");
    with(&["--inject", "preload"]).assert_one_line_error(2, "--counters hardware loads its library through");
    with(&["--model", "IOC", "--unit", "fp", "--sm", "3"])
        .assert_one_line_error(1, "a fault needs instrumented counters");
    // a bad region file is refused before the program runs
    std::fs::write(dir.join("bad.json"), "{ not a region").expect("write");
    xfpx_run(&["--tool", "counters", "--region", "bad.json"]).assert_one_line_error(1, "bad.json");
    assert!(!dir.join("xfpx-report.json").exists(), "the program did not run");
}
