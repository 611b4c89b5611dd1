//! Division by zero is told from an overflowing quotient by the divisor:
//! `xfpx replay --mode detect` of divisions whose divisor is zero, infinite,
//! NaN, subnormal or 0.1 under a huge numerand (f32 and f64, the IEEE
//! division sequence) records exactly the expected kinds at the sequence's
//! `v_div_fixup`, with outputs bit-identical to a plain replay and no hazard.

mod common;

use common::{run, xfpx};
use std::path::{Path, PathBuf};
use xfpx_common::report::Report;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/emulator/fixtures")
}

/// (launch case, the kinds recorded: all at the v_div_fixup).
const CASES: [(&str, &[&str]); 6] = [
    ("div_by_zero", &["div0"]),
    ("div_by_inf", &[]),
    ("div_by_nan", &["nan"]),
    ("div_by_subnormal", &["inf"]),
    ("div_by_tenth", &["inf"]),
    ("div_zero_by_zero", &["nan"]),
];

fn replay(dir: &Path, target: &str, launch: &Path, detect: bool, out: &str) -> Option<Report> {
    let mut c = xfpx(dir);
    c.args(["replay", "--target", target, "--out", out]);
    if detect {
        c.args(["--mode", "detect", "--report", "r.json"]);
    }
    c.arg(launch);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{target} {}: {}", launch.display(), o.stderr);
    detect.then(|| Report::from_json(&std::fs::read_to_string(dir.join("r.json")).expect("report")).expect("valid"))
}

#[test]
fn division_by_zero_only_where_the_divisor_is_zero() {
    let mut ran = 0;
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        if !fixtures().join(target).join("divisors.co").exists() {
            eprintln!("NOT CHECKED: no {target}/divisors.co (regen.sh builds gfx950 with clang-22)");
            continue;
        }
        for (case, kinds) in CASES {
            for format in ["f32", "f64"] {
                let d = tempfile::tempdir().expect("scratch");
                let launch = fixtures().join("launches").join(format!("{case}_{format}.json"));
                replay(d.path(), target, &launch, false, "plain");
                let r = replay(d.path(), target, &launch, true, "detect").expect("report");
                let what = format!("{target} {case}_{format}");
                let plain = std::fs::read(d.path().join("plain/q.bin")).expect("plain output");
                let detected = std::fs::read(d.path().join("detect/q.bin")).expect("detect output");
                assert!(plain == detected, "{what}: outputs differ from the plain replay");
                assert!(!r.run.notes.iter().any(|n| n.contains("hazard")), "{what}: {:?}", r.run.notes);
                let mut got: Vec<(String, String)> = r
                    .records()
                    .map(|(_, e)| {
                        let mnemonic = e.site.instr.split_whitespace().next().unwrap_or("").to_string();
                        (e.kind.name().to_string(), mnemonic)
                    })
                    .collect();
                got.sort();
                let want: Vec<(String, String)> =
                    kinds.iter().map(|k| (k.to_string(), format!("v_div_fixup_{format}"))).collect();
                assert_eq!(got, want, "{what}");
                ran += 1;
            }
        }
    }
    assert!(ran >= 36, "only {ran} cases ran");
}
