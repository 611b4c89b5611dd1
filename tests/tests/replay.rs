//! `xfpx replay` end to end on the emulator's committed launch fixtures (no
//! GPU needed).

mod common;

use common::{run, xfpx};
use std::path::PathBuf;
use xfpx_common::report::Report;

fn launch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/emulator/fixtures/launches").join(name)
}

#[test]
fn replay_reports_the_exceptions_of_a_launch() {
    let d = tempfile::tempdir().expect("scratch");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--out", "out", "--report", "r.json"]).arg(launch("div_special.json"));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("(amd-emulated, "), "{}", o.stdout);
    assert!(o.stdout.contains("\nfindings by source line:\n"), "{}", o.stdout);
    // The launch names its outputs: q (f32 quotients) and qd (f64).
    assert!(o.stdout.contains("output buffers (q, qd) written to out"), "{}", o.stdout);
    for name in ["q", "qd"] {
        let bytes = std::fs::read(d.path().join(format!("out/{name}.bin"))).expect("output buffer");
        assert!(!bytes.is_empty());
    }
    let r = Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
    assert_eq!(r.run.vendor, "amd-emulated");
    assert!(r.records().count() > 0, "special operands must raise something");

    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--fail-on", "all", "--format", "json", "--report", "r2.msgpack"])
        .arg(launch("div_special.json"));
    let o = run(c);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let printed = Report::from_json(&o.stdout).expect("json on stdout");
    assert_eq!(printed.records().count(), r.records().count());
}

#[test]
fn replay_of_bad_input_is_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    std::fs::write(d.path().join("bad.json"), "{\"kernel\": 5").expect("write");
    let mut c = xfpx(d.path());
    c.args(["replay", "bad.json"]);
    run(c).assert_one_line_error(1, "cannot replay bad.json");

    let mut c = xfpx(d.path());
    c.args(["replay", "missing.json"]);
    run(c).assert_one_line_error(1, "missing.json");

    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--code-object", "missing.co"]).arg(launch("div_special.json"));
    run(c).assert_one_line_error(1, "cannot replay");

    // A launch naming a kernel the code object lacks, and one whose
    // arguments do not match the kernel's: one line each, in both paths.
    let co = launch("../gfx942/exceptions.co");
    let wrong_kernel = format!(
        r#"{{"code_object": "{}", "kernel": "no_such_kernel", "grid": [1], "block": [64],
            "buffers": {{"out": {{"elem": "f32", "count": 64, "init": "zero"}}}},
            "args": [{{"buffer": "out"}}], "outputs": ["out"]}}"#,
        co.display()
    );
    std::fs::write(d.path().join("wrong_kernel.json"), wrong_kernel).expect("write");
    let wrong_args = format!(
        r#"{{"code_object": "{}", "kernel": "exc_div0", "grid": [1], "block": [64],
            "buffers": {{"out": {{"elem": "f32", "count": 64, "init": "zero"}}}},
            "args": [{{"buffer": "out"}}, {{"f32": 1.5}}, {{"buffer": "out"}}], "outputs": ["out"]}}"#,
        co.display()
    );
    std::fs::write(d.path().join("wrong_args.json"), wrong_args).expect("write");
    for mode in [None, Some("detect")] {
        for (file, needle) in [("wrong_kernel.json", "no_such_kernel"), ("wrong_args.json", "argument mismatch")] {
            let mut c = xfpx(d.path());
            c.arg("replay");
            if let Some(m) = mode {
                c.args(["--mode", m]);
            }
            c.arg(file);
            run(c).assert_one_line_error(1, needle);
        }
    }
}

/// With `--mode`, the kernel is rewritten and the report is what its
/// instrumentation recorded in the table.
#[test]
fn replay_of_the_rewritten_kernel() {
    let d = tempfile::tempdir().expect("scratch");
    let mut c = xfpx(d.path());
    c.args(["replay", "--mode", "detect", "--target", "gfx942", "--out", "out", "--report", "detect.json"])
        .arg(launch("div_special.json"));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = Report::from_json(&std::fs::read_to_string(d.path().join("detect.json")).expect("report")).expect("valid");
    assert_eq!(r.run.mode, "detect");
    assert!(r.kernels.iter().any(|k| k.name == "div_special" && k.probes > 0), "{:?}", r.kernels);
    let kinds: std::collections::BTreeSet<_> = r.records().map(|(_, rec)| rec.kind).collect();
    assert!(kinds.contains(&xfpx_common::ExceptionKind::Nan), "{kinds:?}");
    assert!(kinds.contains(&xfpx_common::ExceptionKind::Div0), "{kinds:?}");
    assert!(r.records().all(|(_, rec)| rec.site.instr.starts_with('v')), "instructions are named");
    let files: Vec<String> = std::fs::read_dir(d.path().join("out"))
        .expect("out")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".bin"))
        .collect();
    assert_eq!(files.len(), 2, "the launch's outputs only, not the table: {files:?}");
    let manifest = std::fs::read_to_string(d.path().join("out/outputs.json")).expect("outputs.json");
    assert!(manifest.contains("\"kernel\": \"div_special\"") && manifest.contains("\"elem\": \"f64\""), "{manifest}");

    let mut c = xfpx(d.path());
    c.args(["replay", "--mode", "screen", "--target", "gfx942", "--fail-on", "nan", "--report", "screen.json"])
        .arg(launch("div_special.json"));
    let o = run(c);
    assert_eq!(o.code, Some(3), "the screened bits include invalid (NaN): {}", o.stdout);
    assert!(o.stdout.contains("waves ended with exception bits"), "{}", o.stdout);

    let mut c = xfpx(d.path());
    c.args(["replay", "--mode", "detect"]).arg(launch("div_special.json"));
    run(c).assert_one_line_error(1, "needs a target");
}

#[test]
fn replay_names_source_lines_from_a_code_object_with_line_tables() {
    // The demo's code object is the emulator's `exceptions` fixture with a
    // line table; both replay paths resolve their findings' lines from it
    // (column as llvm-addr2line-19 gives it for the v_rcp_f32 at 0x2530).
    let d = tempfile::tempdir().expect("scratch");
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/demo");
    std::fs::copy(demo.join("exceptions.gfx942.co"), d.path().join("exceptions.co")).expect("copy");
    std::fs::copy(demo.join("div0.json"), d.path().join("div0.json")).expect("copy");
    for mode in [None, Some("detect")] {
        let mut c = xfpx(d.path());
        c.args(["replay", "--report", "r.json"]);
        c.args(mode.map(|m| vec!["--mode", m]).unwrap_or_default());
        c.arg("div0.json");
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(
            o.stdout.contains("\n    xfpx_kernel.h:28 (inlined at exceptions.hip:34): div0 (f32)"),
            "{mode:?}:\n{}",
            o.stdout
        );
        let r = Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
        let at = r.records().find_map(|(_, rec)| rec.site.location.clone()).expect("a located finding");
        assert_eq!((at.file.as_str(), at.line, at.column), ("xfpx_kernel.h", 28, Some(57)), "{mode:?}");
        let outer = at.inlined_at.expect("inlined");
        assert_eq!((outer.file.as_str(), outer.line), ("exceptions.hip", 34), "{mode:?}");
    }
}

/// A launch of `kernel` in the container `file` (of `backend-amd/fixtures/bundles`), written into `dir`.
fn container_launch(dir: &std::path::Path, file: &str, kernel: &str, buffers: &str, args: &str) -> PathBuf {
    let co = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/fixtures/bundles").join(file);
    let text = format!(
        r#"{{"code_object": {co:?}, "kernel": "{kernel}", "grid": [1, 1, 1], "block": [64, 1, 1],
            "buffers": {{{buffers}}}, "args": [{args}], "outputs": ["out"]}}"#,
        co = co.to_string_lossy()
    );
    let path = dir.join(format!("{kernel}.json"));
    std::fs::write(&path, text).expect("launch file");
    path
}

/// The f32 elements of output buffer `out` of a replay with `--out out` in `dir`.
fn f32_output(dir: &std::path::Path) -> Vec<f32> {
    let bytes = std::fs::read(dir.join("out/out.bin")).expect("output buffer");
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The little-endian 16-bit words of output buffer `out` of a replay with `--out out` in `dir`.
fn u16_output(dir: &std::path::Path) -> Vec<u16> {
    let bytes = std::fs::read(dir.join("out/out.bin")).expect("output buffer");
    bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
}

/// Replay reads what dump reads: the entry of a compressed bundle (CCOB,
/// versions 2 and 3) for the chosen target, and the device code embedded in
/// a HIP host executable.
#[test]
fn replay_reads_compressed_bundles_and_host_executables() {
    let d = tempfile::tempdir().expect("scratch");
    let buffers = r#""out": {"elem": "f16", "count": 64},
        "a": {"elem": "f16", "count": 64, "init": {"constant": 2}},
        "b": {"elem": "f16", "count": 64, "init": {"constant": 3}}"#;
    let args = r#"{"buffer": "out"}, {"buffer": "a"}, {"buffer": "b"}"#;
    for (file, targets) in [("compressed-v2.ccob", ["gfx908", "gfx942"]), ("compressed-v3.ccob", ["gfx942", "gfx950"])]
    {
        let fp16 = container_launch(d.path(), file, "fp16_scalar", buffers, args);
        for target in targets {
            let mut c = xfpx(d.path());
            c.args(["replay", "--target", target, "--out", "out", "--report", "r.json"]).arg(&fp16);
            let o = run(c);
            assert_eq!(o.code, Some(0), "{file} {target}: {}", o.stderr);
            // 2 * 3 + 2 - 2 = 6.0 (f16 0x4600) per element.
            assert_eq!(u16_output(d.path()), vec![0x4600; 64], "{file} {target}");
            let r =
                Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
            assert_eq!(r.run.target.as_deref(), Some(target));
        }
    }
    let fp16 = container_launch(d.path(), "compressed-v3.ccob", "fp16_scalar", buffers, args);
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx908"]).arg(&fp16);
    run(c).assert_one_line_error(1, "no AMDGPU code object for gfx908");

    let host = container_launch(
        d.path(),
        "host-fatbin.exe",
        "host_scale",
        r#""out": {"elem": "f32", "count": 64}, "x": {"elem": "f32", "count": 64, "init": {"constant": 1.5}}"#,
        r#"{"buffer": "out"}, {"buffer": "x"}, {"f32": 3}"#,
    );
    for target in ["gfx90a", "gfx942"] {
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", target, "--out", "out", "--report", "r.json"]).arg(&host);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{target}: {}", o.stderr);
        assert_eq!(f32_output(d.path()), vec![4.5; 64], "{target}");
    }
}

/// The records of a report, as (kernel, kind, format, site offset, occurrences).
fn records(r: &Report) -> Vec<String> {
    let mut v: Vec<String> = r
        .kernels
        .iter()
        .flat_map(|k| {
            k.records
                .iter()
                .map(move |x| format!("{} {:?} {:?} +{:#x} {}", k.name, x.kind, x.format, x.site.offset, x.occurrences))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_code_object_rewritten_by_dump_replays_as_it_was_rewritten() {
    let d = tempfile::tempdir().expect("scratch");
    for (target, launch_name) in
        [("gfx90a", "exc_nan.json"), ("gfx942", "div_special.json"), ("gfx90a", "call_f64.json")]
    {
        let l = launch(launch_name);
        let text = std::fs::read_to_string(&l).expect("launch");
        let co = text.split('"').find(|s| s.contains("{target}")).expect("code object").replace("{target}", target);
        let rewritten = d.path().join(format!("{launch_name}.{target}.co"));
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "amd", "--rewrite", "detect", "--out"])
            .arg(&rewritten)
            .arg(l.parent().expect("dir").join(&co));
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);

        // Replayed as it is (no --mode): what the instrumentation recorded...
        let mut c = xfpx(d.path());
        c.args(["replay", "--format", "json", "--report", "-", "--code-object"]).arg(&rewritten).arg(&l);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{launch_name}: {}", o.stderr);
        let saved = Report::from_json(&o.stdout).expect("json on stdout");
        // ... equal to a replay that rewrites the original for detect mode.
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", target, "--mode", "detect", "--format", "json", "--report", "-"]).arg(&l);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{launch_name}: {}", o.stderr);
        let fresh = Report::from_json(&o.stdout).expect("json on stdout");
        assert_eq!(saved.run.mode, "detect");
        assert!(saved.run.notes.iter().any(|n| n.starts_with("the rewritten kernel ran")), "{:?}", saved.run.notes);
        assert_eq!(records(&saved), records(&fresh), "{launch_name} on {target}");
        assert_eq!(saved.kernels[0].probes, fresh.kernels[0].probes);
        assert!(!records(&saved).is_empty() || launch_name == "call_f64.json");

        // With --mode, the mode it was rewritten for.
        let mut c = xfpx(d.path());
        c.args(["replay", "--mode", "detect", "--format", "json", "--report", "-", "--code-object"])
            .arg(&rewritten)
            .arg(&l);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert_eq!(records(&Report::from_json(&o.stdout).expect("json")), records(&fresh));
        let mut c = xfpx(d.path());
        c.args(["replay", "--mode", "screen", "--code-object"]).arg(&rewritten).arg(&l);
        run(c).assert_one_line_error(1, "was rewritten for --mode detect, not screen");
    }
}

#[test]
fn replaying_an_original_code_object_explicitly_is_unchanged() {
    // Without --mode, an original object is run as it is and checked by the emulator.
    let d = tempfile::tempdir().expect("scratch");
    let l = launch("exc_nan.json");
    let co = l.parent().expect("dir").join("../gfx90a/exceptions.co");
    let report = |args: &[&str]| {
        let mut c = xfpx(d.path());
        c.args(args).args(["--format", "json", "--report", "-"]).arg(&l);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        Report::from_json(&o.stdout).expect("json")
    };
    let explicit = report(&["replay", "--code-object", co.to_str().expect("path")]);
    let by_target = report(&["replay", "--target", "gfx90a"]);
    assert_ne!(explicit.run.mode, "detect");
    assert_eq!(explicit.run.mode, by_target.run.mode);
    assert_eq!(records(&explicit), records(&by_target));
    assert!(!records(&explicit).is_empty());
}

/// The application launch `name` (tests/apps/amd), written to `dir` with
/// its paths made absolute and its last argument replaced by `n`.
fn app_launch_with_size(dir: &std::path::Path, name: &str, n: u32) -> PathBuf {
    let apps = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("apps/amd/launches");
    let text = std::fs::read_to_string(apps.join(name)).expect("launch");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let abs = |p: &str| apps.join(p).display().to_string();
    v["code_object"] = abs(v["code_object"].as_str().expect("path")).into();
    for (_, b) in v["buffers"].as_object_mut().expect("buffers") {
        if let Some(f) = b["init"].get("file").and_then(|f| f.as_str()).map(str::to_string) {
            b["init"]["file"] = abs(&f).into();
        }
    }
    let args = v["args"].as_array_mut().expect("args");
    *args.last_mut().expect("an argument") = serde_json::json!({ "u32": n });
    let out = dir.join(format!("{n}-{name}"));
    std::fs::write(&out, v.to_string()).expect("write");
    out
}

#[test]
fn replay_with_the_counters_tool_checks_an_operational_region() {
    let d = tempfile::tempdir().expect("scratch");
    let fault_free = app_launch_with_size(d.path(), "reduce_partial.json", 100000);
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--tool", "counters", "--report", "r.json"]).arg(&fault_free);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("counters (whole launches):"), "{}", o.stdout);
    let r = Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
    let s = r.counters.expect("a counters section");
    assert_eq!((s.warp_size, s.kernels[0].kernel.as_str()), (64, "reduce_sum"));
    let w = s.kernels[0].total();
    assert!(w.warp_instructions > 0 && w.divergent_branches > 0 && w.reconvergences > 0, "{w:?}");
    assert_eq!(w.inactive_lanes, 64 * w.warp_instructions - w.thread_instructions);

    let mut c = xfpx(d.path());
    c.args(["region", "build", "r.json", "-o", "region.json"]);
    assert_eq!(run(c).code, Some(0));
    let check = |launch: &PathBuf| {
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", "gfx942", "--tool", "counters", "--no-report"])
            .args(["--region", "region.json", "--fail-on", "region"])
            .arg(launch);
        run(c)
    };
    let o = check(&fault_free);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // a size argument of 99000: lanes idle in the last grid stride
    let o = check(&app_launch_with_size(d.path(), "reduce_partial.json", 99000));
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(o.stderr.contains("kernel reduce_sum launch 0 window 0: inact"), "{}", o.stderr);

    for (args, says, code) in [
        (&["--region", "region.json"][..], "--region needs --tool counters", 2),
        (&["--tool", "counters", "--fail-on", "region"][..], "--fail-on region needs --region", 2),
        (&["--tool", "counters", "--mode", "detect"][..], "leave out --mode", 2),
        (&["--tool", "counters", "--region", "nothing.json"][..], "cannot read region nothing.json", 1),
    ] {
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", "gfx942", "--no-report"]).args(args).arg(&fault_free);
        let o = run(c);
        assert_eq!(o.code, Some(code), "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(says) && o.stderr.trim().lines().count() == 1, "{args:?}: {}", o.stderr);
    }
}

/// The kernel at its register budget (at the register limit, without
/// launch bounds: most of its sites have too few dead SGPRs, and save live
/// ones in lanes of a VGPR) is checked whole under `--mode detect`: the
/// summary and report say `instrumented` with every FP site checked, and
/// `--fail-on coverage` passes. (How a refused kernel reads:
/// `replay_shows_a_kernel_detect_mode_refuses`.)
#[test]
fn replay_checks_the_kernel_at_its_register_budget_whole() {
    let d = tempfile::tempdir().expect("scratch");
    let launch = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("realcode/fixtures/launches/register_limit.json");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--mode", "detect", "--report", "r.json"]).arg(&launch);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stdout.contains("partly or not instrumented"), "{}", o.stdout);
    let r = Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
    let k = &r.kernels[0];
    assert_eq!(k.status, xfpx_common::report::KernelStatus::Instrumented, "{:?}", k.status);
    let c = k.coverage.as_ref().expect("coverage");
    assert!(c.checked > 1000 && c.refused.is_empty() && c.checked == c.fp_sites, "{c:?}");
    assert!(r.records().next().is_some(), "the launch plants exceptions");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--mode", "detect", "--no-report", "--fail-on", "coverage"]).arg(&launch);
    assert_eq!(run(c).code, Some(0));
}

/// A kernel detect mode must refuse (at its VGPR budget, reading a vector
/// element through M0, so no site can borrow registers: the fixture
/// `budget_indexed`) reads as such in the summary and the report: the
/// kernel's status says why, the coverage line counts its sites as not
/// checked, `--fail-on coverage` exits 3, and the run that checked nothing
/// says so on its first line. Its original code ran: the outputs equal the host's.
/// Screen mode, which needs no registers, still checks it.
#[test]
fn replay_shows_a_kernel_detect_mode_refuses() {
    let d = tempfile::tempdir().expect("scratch");
    let launch = launch("budget_indexed.json");
    for target in ["gfx908", "gfx942"] {
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", target, "--mode", "detect", "--out", "out", "--report", "r.json"]).arg(&launch);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(o.stdout.starts_with("xfpx: nothing was checked"), "{}", o.stdout);
        assert!(o.stdout.contains("1 kernel partly or not instrumented"), "{}", o.stdout);
        assert!(o.stdout.contains("budget_indexed (skipped: "), "{}", o.stdout);
        assert!(o.stdout.contains("`s_set_gpr_idx_on` at "), "{}", o.stdout);
        let r = Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
        let k = &r.kernels[0];
        assert!(matches!(k.status, xfpx_common::report::KernelStatus::Skipped { .. }), "{:?}", k.status);
        let c = k.coverage.as_ref().expect("coverage");
        assert!(c.fp_sites > 0 && c.checked == 0 && !c.refused.is_empty(), "{c:?}");
        let out = std::fs::read(d.path().join("out/out.bin")).expect("output");
        let expect = launch.with_file_name("../data/budget_indexed.out.expected.bin");
        assert_eq!(out, std::fs::read(expect).expect("expected output"), "{target}: the original's outputs");

        let mut c = xfpx(d.path());
        c.args(["replay", "--target", target, "--mode", "detect", "--no-report", "--fail-on", "coverage"]).arg(&launch);
        assert_eq!(run(c).code, Some(3));

        let mut c = xfpx(d.path());
        c.args(["replay", "--target", target, "--mode", "screen", "--no-report"]).arg(&launch);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(o.stdout.contains("budget_indexed  instrumented"), "{}", o.stdout);
        assert!(o.stdout.contains("budget_indexed: waves ended with exception bits overflow"), "{}", o.stdout);
    }
}
