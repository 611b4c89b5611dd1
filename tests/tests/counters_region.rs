//! The in-field check end to end: reports with counters of a real kernel
//! (the counting plan and fold of `fpx_loops`' `loop_f64_nan` from its
//! committed SASS listing) are written, `xfpx region build` learns the
//! operational region from five fault-free runs, and `xfpx report
//! --region` flags the windows of a run whose lanes went inactive, lists a
//! kernel the region does not know, and refuses bad region files with one
//! line. The device's slot values are made here (no GPU): every warp of a
//! window runs every region, with the lanes an input leaves active.

mod common;

use common::{run, xfpx};
use std::path::{Path, PathBuf};
use xfpx_common::counters::{fold, CountLayout, CountersSection, KernelCounters, LaunchCounters, SlotCount};
use xfpx_common::report::{Collector, RunInfo};
use xfpx_common::site::SiteTable;
use xfpx_nvidia::sass::{build_kernel, parse_listing};

const KERNEL: &str = "loop_f64_nan";

fn layout() -> CountLayout {
    let listing = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("gpu/listings/fpx_loops.sass"))
        .expect("listing");
    let f = parse_listing(&listing).expect("parses").into_iter().find(|f| f.name == KERNEL).expect("kernel");
    let (plan, unknown) = xfpx_nvidia::counts::plan_counts(&build_kernel(&f), &mut SiteTable::new());
    assert!(unknown.is_none());
    plan.layout
}

/// One run's report: 4 windows of 8 warps; in every region after the
/// first, `idle[w]` lanes per warp of window `w` are inactive; each guard
/// held on the active lanes.
fn report(dir: &Path, name: &str, kernel: &str, idle: [u64; 4], window_blocks: u32) -> PathBuf {
    let l = layout();
    let warps = 8u64;
    let windows = idle
        .iter()
        .enumerate()
        .map(|(w, &off)| {
            let mut slots: Vec<SlotCount> = (0..l.regions.len())
                .map(|r| {
                    let lanes = if r == 0 { 32 } else { 32 - off };
                    SlotCount { warps, lanes: warps * lanes, divergent: u64::from(r == 0 && off > 0) * warps }
                })
                .collect();
            let held: Vec<SlotCount> = l
                .guards
                .iter()
                .map(|&r| SlotCount { warps: 0, lanes: slots[r as usize].lanes, divergent: 0 })
                .collect();
            slots.extend(held);
            fold(&l, w as u32, &slots).expect("folds")
        })
        .collect();
    let mut c = Collector::new(RunInfo::new("nvidia", "test", "counters"), None);
    c.set_counters(CountersSection {
        source: xfpx_common::counters::CounterSource::Instrumented,
        window_blocks,
        warp_size: 32,
        kernels: vec![KernelCounters { kernel: kernel.into(), launches: vec![LaunchCounters { launch: 0, windows }] }],
        region_check: None,
    });
    let path = dir.join(name);
    std::fs::write(&path, c.report().to_json()).expect("write");
    path
}

#[test]
fn regions_are_learnt_and_windows_outside_them_flagged() {
    let d = tempfile::tempdir().expect("scratch");
    let dir = d.path();
    let runs: Vec<PathBuf> = [[0, 2, 4, 1], [1, 1, 3, 0], [0, 0, 0, 0], [2, 4, 2, 2], [3, 0, 1, 4]]
        .iter()
        .enumerate()
        .map(|(i, idle)| report(dir, &format!("run{i}.json"), KERNEL, *idle, 4))
        .collect();
    let mut c = xfpx(dir);
    c.args(["region", "build"]).args(&runs).args(["-o", "region.json", "--counters", "inact,stack,lane_efficiency"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let region: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("region.json")).expect("region")).expect("json");
    assert_eq!(region["schema"], "xfpx-region/1");
    assert_eq!(region["kernels"][KERNEL]["windows"], 20);
    assert_eq!(region["kernels"][KERNEL]["bounds"]["inact"]["min"], 0.0);

    // a new fault-free input inside the region
    let good = report(dir, "good.json", KERNEL, [1, 3, 2, 0], 4);
    let mut c = xfpx(dir);
    c.args(["report"]).arg(&good).args(["--region", "region.json", "--fail-on", "region"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("4 windows checked, 0 outside"), "{}", o.stderr);
    assert!(o.stdout.contains(KERNEL) && o.stdout.contains("counters (windows of 4 blocks)"), "{}", o.stdout);

    // lanes stuck inactive in window 2: flagged, status 3, in the report
    let bad = report(dir, "bad.json", KERNEL, [1, 3, 9, 0], 4);
    let mut c = xfpx(dir);
    c.args(["report"]).arg(&bad).args(["--region", "region.json", "--fail-on", "region", "--format", "json"]);
    let o = run(c);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(o.stderr.contains(&format!("kernel {KERNEL} launch 0 window 2: inact")), "{}", o.stderr);
    assert!(o.stderr.contains("4 windows checked, 1 outside"), "{}", o.stderr);
    let checked: serde_json::Value = serde_json::from_str(&o.stdout).expect("json report");
    let devs = checked["counters"]["region_check"]["deviations"].as_array().expect("deviations");
    assert!(devs.iter().all(|d| d["window"] == 2) && !devs.is_empty());

    // without --fail-on region the deviation is reported, the status is 0
    let mut c = xfpx(dir);
    c.args(["report"]).arg(&bad).args(["--region", "region.json"]);
    assert_eq!(run(c).code, Some(0));

    // a kernel the region does not know: listed, not a fault
    let other = report(dir, "other.json", "another_kernel", [9, 9, 9, 9], 4);
    let mut c = xfpx(dir);
    c.args(["report"]).arg(&other).args(["--region", "region.json", "--fail-on", "region"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("kernel another_kernel is not in the region (not checked)"), "{}", o.stderr);
}

#[test]
fn bad_region_inputs_are_one_line_each() {
    let d = tempfile::tempdir().expect("scratch");
    let dir = d.path();
    let a = report(dir, "a.json", KERNEL, [0, 1, 2, 3], 4);
    let other_windows = report(dir, "w.json", KERNEL, [0, 1, 2, 3], 8);
    let mut plain = Collector::new(RunInfo::new("nvidia", "test", "fast"), None).report();
    plain.counters = None;
    std::fs::write(dir.join("plain.json"), plain.to_json()).expect("write");
    std::fs::write(dir.join("broken.json"), "{").expect("write");
    std::fs::write(dir.join("future.json"), r#"{"schema":"xfpx-region/9"}"#).expect("write");

    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec![
                "region".into(),
                "build".into(),
                "a.json".into(),
                "-o".into(),
                "r.json".into(),
                "--counters".into(),
                "inact,bogus".into(),
            ],
            1,
            "unknown counter `bogus`",
        ),
        (
            vec!["region".into(), "build".into(), "a.json".into(), "w.json".into(), "-o".into(), "r.json".into()],
            1,
            "windows of 8 blocks",
        ),
        (
            vec!["region".into(), "build".into(), "plain.json".into(), "-o".into(), "r.json".into()],
            1,
            "has no counters",
        ),
        (vec!["report".into(), "a.json".into(), "--region".into(), "broken.json".into()], 1, "not valid JSON"),
        (vec!["report".into(), "a.json".into(), "--region".into(), "future.json".into()], 1, "schema `xfpx-region/9`"),
        (vec!["report".into(), "a.json".into(), "--fail-on".into(), "region".into()], 2, "needs --region"),
    ];
    for (args, code, needle) in cases {
        let mut c = xfpx(dir);
        c.args(&args);
        run(c).assert_one_line_error(code, needle);
    }
    // a region learnt on windows of 4 blocks does not apply to windows of 8
    let mut c = xfpx(dir);
    c.args(["region", "build"]).arg(&a).args(["-o", "r.json"]);
    assert_eq!(run(c).code, Some(0));
    let mut c = xfpx(dir);
    c.args(["report"]).arg(&other_windows).args(["--region", "r.json"]);
    run(c).assert_one_line_error(1, "windows of 8 blocks");
    assert!(!dir.join("nothing.json").exists());
}

/// `xfpx dump --tool counters` on every committed SASS listing: per
/// kernel, one region call per region, regions tiling the kernel's
/// instructions in order, one guard count per guarded instruction of the
/// listing (`@P..`, `@!P..`; not `@PT`), alone, with others in one call,
/// or (a branch's) by its region's call.
#[test]
fn counting_plans_of_the_gpu_listings_cover_every_instruction_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("gpu/listings");
    let mut listings: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("listings")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sass"))
        .collect();
    listings.sort();
    assert!(listings.len() >= 14);
    let mut kernels = 0;
    for l in &listings {
        let mut c = xfpx(&dir);
        c.args(["dump", "--vendor", "nvidia", "--tool", "counters", "--format", "json"]).arg(l);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}: {}", l.display(), o.stderr);
        let dumps: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
        for k in dumps.as_array().expect("kernels") {
            kernels += 1;
            let instrs = k["instructions"].as_array().expect("instructions");
            let regions: Vec<(u64, u64)> = k["plan"]["counters"]
                .as_array()
                .expect("counters")
                .iter()
                .filter(|c| c["kind"]["kind"] == "region")
                .map(|c| (c["kind"]["first"].as_u64().expect("first"), c["kind"]["end"].as_u64().expect("end")))
                .collect();
            let mut next = 0;
            for (first, end) in &regions {
                assert_eq!(*first, next, "{}: regions tile the kernel", k["kernel"]);
                next = *end;
            }
            assert_eq!(next as usize, instrs.len(), "{}", k["kernel"]);
            let calls = k["calls"].as_array().expect("calls");
            let of = |f: &str| calls.iter().filter(|c| c["function"] == f).count();
            assert_eq!(of("xfpx_count_region") + of("xfpx_count_region_guards"), regions.len(), "{}", k["kernel"]);
            let guarded = instrs
                .iter()
                .filter(|i| {
                    let t = i["sass"].as_str().expect("sass");
                    t.starts_with('@') && !t.starts_with("@PT ")
                })
                .count();
            // guards counted alone, and n at a time (spec bits 32-34)
            let together: u64 = calls
                .iter()
                .filter_map(|c| match c["function"].as_str() {
                    Some("xfpx_count_guards") => c["args"][1]["value"].as_u64(),
                    Some("xfpx_count_region_guards") => c["args"][2]["value"].as_u64(),
                    _ => None,
                })
                .map(|spec| spec >> 32 & 7)
                .sum();
            // and branches' guards counted by their regions' calls (meta bit 5)
            let by_regions = calls
                .iter()
                .filter(|c| c["function"] == "xfpx_count_region")
                .filter(|c| c["args"][1]["value"].as_u64().expect("slot and meta") >> 37 & 1 == 1)
                .count();
            assert_eq!(of("xfpx_count_guard") + together as usize + by_regions, guarded, "{}", k["kernel"]);
            assert_eq!(calls.len(), regions.len() + of("xfpx_count_guard") + of("xfpx_count_guards"));
        }
    }
    assert!(kernels > 20, "{kernels}");
}
