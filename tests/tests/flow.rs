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
