//! `xfpx replay --tool flow` end to end on the flow fixtures
//! (`backend-amd/emulator/fixtures/src/flows.hip`, built with `-g`): the
//! report's flow section tells, line by line, where the NaN of a 0/0 and
//! the infinity of a 1/0 appear, propagate, disappear (in a max with 0)
//! and reach a comparison, and where a subnormal appears and disappears
//! (in a conversion and a multiply); the text summary says the same; the
//! outputs are those of a plain replay; `--fail-on` gates on the kinds
//! that flowed; bad combinations are one-line errors.

mod common;

use common::{run, xfpx};
use std::path::{Path, PathBuf};
use xfpx_common::report::Report;

fn launch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../backend-amd/emulator/fixtures/launches/{name}.json"))
}

fn co(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../backend-amd/emulator/fixtures/{target}/flows.co"))
}

const F32: [&str; 2] = [
    "NaN appears at line 14 (0/0), propagates through lines 15–16, disappears at line 17 in a max (result 0), \
     reaches a comparison at line 19.",
    "Inf appears at line 14 (division by zero), propagates through lines 15–17, reaches a comparison at line 19.",
];

const F64: [&str; 1] =
    ["A subnormal appears at line 24 (underflow), propagates through line 25, disappears at lines 26 \
                         in a conversion (result 0) and 27 in a multiply."];

fn flow(dir: &Path, target: &str, name: &str, extra: &[&str]) -> common::Outcome {
    let mut c = xfpx(dir);
    c.args(["replay", "--tool", "flow", "--target", target]).args(extra).arg(launch(name));
    run(c)
}

#[test]
fn flows_are_told_line_by_line_on_every_target() {
    let mut ran = 0;
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        if !co(target).exists() {
            eprintln!("NOT CHECKED: no {target}/flows.co (regen.sh builds gfx950 with clang-22)");
            continue;
        }
        for (name, want, outputs) in
            [("flow_f32", &F32[..], ["out", "hits"]), ("flow_f64", &F64[..], ["out", "narrow"])]
        {
            let d = tempfile::tempdir().expect("scratch");
            let o = flow(d.path(), target, name, &["--report", "r.json", "--out", "flowed"]);
            let what = format!("{target} {name}");
            assert_eq!(o.code, Some(0), "{what}: {}", o.stderr);
            let r =
                Report::from_json(&std::fs::read_to_string(d.path().join("r.json")).expect("report")).expect("valid");
            assert_eq!(r.run.mode, "flow", "{what}");
            let section = r.flow.as_ref().unwrap_or_else(|| panic!("{what}: no flow section"));
            let k = section.kernel(name).unwrap_or_else(|| panic!("{what}: no flow of {name}"));
            assert_eq!(k.summary, want, "{what}");
            for s in want {
                assert!(o.stdout.contains(s), "{what}: the summary lacks `{s}`:\n{}", o.stdout);
            }
            assert!(!r.run.notes.iter().any(|n| n.contains("hazard")), "{what}: {:?}", r.run.notes);
            // the same outputs as a plain replay
            let mut c = xfpx(d.path());
            c.args(["replay", "--target", target, "--out", "plain", "--no-report"]).arg(launch(name));
            assert_eq!(run(c).code, Some(0), "{what}: plain replay");
            for out in outputs {
                let a = std::fs::read(d.path().join(format!("plain/{out}.bin"))).expect("plain output");
                let b = std::fs::read(d.path().join(format!("flowed/{out}.bin"))).expect("flow output");
                assert!(a == b, "{what}: {out} differs from the plain replay");
            }
            ran += 1;
        }
    }
    assert!(ran >= 6, "only {ran} replays checked");
}

#[test]
fn fail_on_gates_on_the_kinds_that_flowed_and_bad_use_is_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    let code = |name: &str, kinds: &str| flow(d.path(), "gfx90a", name, &["--no-report", "--fail-on", kinds]).code;
    assert_eq!(code("flow_f32", "nan"), Some(3));
    assert_eq!(code("flow_f32", "div0"), Some(3));
    assert_eq!(code("flow_f32", "sub"), Some(0));
    assert_eq!(code("flow_f64", "sub"), Some(3));
    assert_eq!(code("flow_f64", "nan,inf"), Some(0));
    let o = flow(d.path(), "gfx90a", "flow_f32", &["--mode", "detect"]);
    o.assert_one_line_error(2, "--tool flow rewrites the kernel itself");
}

#[test]
fn compare_shows_the_flows_of_each_side_and_what_only_one_has() {
    let d = tempfile::tempdir().expect("scratch");
    for (target, file) in [("gfx90a", "a.json"), ("gfx942", "b.json")] {
        let o = flow(d.path(), target, "flow_f32", &["--report", file]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    let compare = |b: &str, extra: &[&str]| {
        let mut c = xfpx(d.path());
        c.args(["compare", "a.json", b]).args(extra);
        run(c)
    };
    let same = compare("b.json", &[]);
    assert_eq!(same.code, Some(0), "{}{}", same.stdout, same.stderr);
    for s in F32 {
        assert!(same.stdout.contains(&format!("flows A: {s}")), "{}", same.stdout);
        assert!(same.stdout.contains(&format!("flows B: {s}")), "{}", same.stdout);
    }
    assert!(same.stdout.contains("flows differ on 0 of 5 lines"), "{}", same.stdout);
    // B without the NaN's disappearance in the max
    let mut r = Report::from_json(&std::fs::read_to_string(d.path().join("b.json")).expect("b")).expect("valid");
    let k = &mut r.flow.as_mut().expect("flows").kernels[0];
    let before = k.records.len();
    k.records.retain(|r| !(r.state == xfpx_common::flow::FlowState::Disappear && r.kind.name() == "nan"));
    assert_eq!(k.records.len(), before - 1);
    std::fs::write(d.path().join("c.json"), r.to_json()).expect("write");
    let differ = compare("c.json", &[]);
    assert_eq!(differ.code, Some(3), "{}{}", differ.stdout, differ.stderr);
    assert!(
        differ.stdout.contains("src/flows.hip:17: flows A: inf propagate, nan disappear; B: inf propagate"),
        "{}",
        differ.stdout
    );
    assert!(differ.stdout.contains("    only A: nan disappear"), "{}", differ.stdout);
    let json = compare("c.json", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let lines = &v["kernels"][0]["flows"]["lines"];
    let l17 = lines.as_array().expect("lines").iter().find(|l| l["place"] == "src/flows.hip:17").expect("line 17");
    assert_eq!(l17["only_a"], serde_json::json!(["nan disappear"]));
    let html = compare("c.json", &["--html", "c.html"]);
    assert_eq!(html.code, Some(3));
    let page = std::fs::read_to_string(d.path().join("c.html")).expect("page");
    assert!(
        page.contains("<td>src/flows.hip:17</td><td>inf propagate, nan disappear</td><td>inf propagate</td>"),
        "{page}"
    );
}
