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
        .collect();
    assert_eq!(files.len(), 2, "the launch's outputs only, not the table: {files:?}");

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
