//! `xfpx compare` end to end on emulator replays of one kernel built with
//! denormals kept and with `-fgpu-flush-denormals-to-zero`
//! (tests/compare/): the per-line difference and the output difference
//! are found and the denormal mode named as their cause; two replays of
//! the same launch, and the same build on two targets, compare equal; bad
//! input is one `error:` line.

mod common;

use common::{run, xfpx};
use std::path::{Path, PathBuf};

fn launch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("compare/launches").join(format!("{name}.json"))
}

/// `xfpx replay` of `name` on `target` (plain replay, or `mode`), its report
/// and buffers under `tag`.
fn replay(dir: &Path, name: &str, target: &str, mode: Option<&str>, tag: &str) {
    let mut c = xfpx(dir);
    c.args(["replay", "--target", target, "--out", tag, "--report", &format!("{tag}.json")]);
    if let Some(m) = mode {
        c.args(["--mode", m]);
    }
    c.arg(launch(name));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

fn compare(dir: &Path, args: &[&str]) -> common::Outcome {
    let mut c = xfpx(dir);
    c.arg("compare").args(args);
    run(c)
}

const DENORMAL_CAUSE: &str = "cause: denormal mode: A keeps f32 denormals, B flushes f32 denormals";

#[test]
fn flushing_denormals_is_found_per_line_and_named_as_the_cause() {
    let d = tempfile::tempdir().expect("scratch");
    replay(d.path(), "keep", "gfx942", None, "keep");
    replay(d.path(), "flush", "gfx942", None, "flush");
    let o = compare(d.path(), &["keep.json", "flush.json", "--out-a", "keep", "--out-b", "flush"]);
    assert_eq!(o.code, Some(3), "something differs: {}{}", o.stdout, o.stderr);
    let text = &o.stdout;
    // line 11: x * s, a subnormal product kept on A, flushed to zero on B
    assert!(text.contains("  denorm.hip:11: A: sub (f32) x1; B: none\n    only A: sub (f32)\n    "), "{text}");
    // line 12: rcp of a subnormal: overflow to inf on A, a division by zero on B
    assert!(text.contains("  denorm.hip:12: A: inf (f32) x1; B: div0 (f32) x1\n"), "{text}");
    assert_eq!(text.matches(DENORMAL_CAUSE).count(), 3, "two lines and one buffer: {text}");
    assert!(!text.contains("cause unknown"), "{text}");
    assert!(text.contains("  inv (f32): identical (64 elements)\n"), "{text}");
    assert!(
        text.contains("  out (f32): 2 of 64 elements differ, max 12291 ULP, first at [5]: A 1.7223e-41, B 0e0\n"),
        "{text}"
    );
    assert!(text.contains("cause: the first difference is a subnormal on A and zero on B"), "{text}");

    // the same as JSON
    let o = compare(d.path(), &["keep.json", "flush.json", "--out-a", "keep", "--out-b", "flush", "--format", "json"]);
    assert_eq!(o.code, Some(3));
    let j: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON on stdout");
    assert_eq!(j["schema"], "xfpx-compare/1");
    assert_eq!(j["same"], false);
    let k = &j["kernels"][0];
    assert_eq!(
        (k["name"].as_str(), k["denormals_a"]["f32"].as_str(), k["denormals_b"]["f32"].as_str()),
        (Some("scale_tiny"), Some("keep"), Some("flush"))
    );
    assert_eq!(k["lines"][0]["place"], "denorm.hip:11");
    assert_eq!(k["lines"][0]["only_a"][0], "sub (f32)");
    assert_eq!(k["lines"][1]["only_b"][0], "div0 (f32)");
    let out = j["outputs"].as_array().expect("outputs").iter().find(|o| o["buffer"] == "out").expect("out");
    assert_eq!(
        (out["elem"].as_str(), out["differing"].as_u64(), out["first_difference"]["index"].as_u64()),
        (Some("f32"), Some(2), Some(5))
    );

    // the rewritten detector on gfx90a sees the same line differ for the same cause
    replay(d.path(), "keep", "gfx90a", Some("detect"), "dkeep");
    replay(d.path(), "flush", "gfx90a", Some("detect"), "dflush");
    let o = compare(d.path(), &["dkeep.json", "dflush.json"]);
    assert_eq!(o.code, Some(3), "{}", o.stdout);
    assert!(o.stdout.contains("  denorm.hip:11: A: sub (f32) x1; B: none\n"), "{}", o.stdout);
    assert!(o.stdout.contains(DENORMAL_CAUSE), "{}", o.stdout);

    // the HTML page has the lines and the causes
    let o = compare(d.path(), &["keep.json", "flush.json", "--out-a", "keep", "--out-b", "flush", "--html", "c.html"]);
    assert_eq!(o.code, Some(3));
    let page = std::fs::read_to_string(d.path().join("c.html")).expect("page");
    assert!(page.contains("<tr class=\"differs\"><td>denorm.hip:11</td>"), "{page}");
    assert!(page.contains("denormal mode: A keeps f32 denormals"), "{page}");
    assert!(page.contains("<p id=\"result\">different</p>"), "{page}");
}

#[test]
fn the_same_launch_twice_is_no_difference() {
    let d = tempfile::tempdir().expect("scratch");
    replay(d.path(), "keep", "gfx942", None, "a");
    replay(d.path(), "keep", "gfx942", None, "b");
    let o = compare(d.path(), &["a.json", "b.json", "--out-a", "a", "--out-b", "b"]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.ends_with("result: no difference\n"), "{}", o.stdout);
    assert!(o.stdout.contains("  out (f32): identical (64 elements)\n"), "{}", o.stdout);
    // the same build on another target: the same classes, the same outputs
    replay(d.path(), "keep", "gfx90a", None, "c");
    let o = compare(d.path(), &["a.json", "c.json", "--out-a", "a", "--out-b", "c", "--format", "json"]);
    assert_eq!(o.code, Some(0), "{}", o.stdout);
    let j: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON");
    assert_eq!(j["same"], true);
}

#[test]
fn bad_input_is_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    replay(d.path(), "keep", "gfx942", None, "a");
    replay(d.path(), "flush", "gfx942", None, "b");
    std::fs::write(d.path().join("text.json"), "not a report").expect("write");
    let report = std::fs::read_to_string(d.path().join("a.json")).expect("report");
    std::fs::write(d.path().join("v9.json"), report.replace("\"xfpx-report/1\"", "\"xfpx-report/9\"")).expect("write");
    compare(d.path(), &["text.json", "a.json"]).assert_one_line_error(1, "cannot read report text.json");
    compare(d.path(), &["a.json", "v9.json"]).assert_one_line_error(1, "schema `xfpx-report/9`");
    compare(d.path(), &["a.json", "missing.json"]).assert_one_line_error(1, "cannot read report missing.json");
    compare(d.path(), &["a.json", "b.json", "--out-a", "a", "--out-b", "nowhere"])
        .assert_one_line_error(1, "nowhere is not a directory");
    // buffers of another kernel's launch
    std::fs::write(d.path().join("b/outputs.json"), "{\"kernel\": \"other\", \"outputs\": []}").expect("write");
    compare(d.path(), &["a.json", "b.json", "--out-a", "a", "--out-b", "b"])
        .assert_one_line_error(1, "different launches");
}
