//! The applications suite (`tests/apps`) on the emulator, through `xfpx
//! replay`: every launch of `tests/apps/amd/launches` on gfx90a and gfx942
//! gives its host reference's outputs bit for bit, and `--mode detect` finds
//! no exception and leaves the outputs bit-identical. The committed code
//! objects and launches are what `tests/apps/amd/regen.sh` produces, checked
//! where clang-19 is installed.

mod common;

use common::{run, xfpx};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_common::report::Report;

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

/// The paper's seven applications, by code object.
const APPS: [&str; 7] = ["fft", "gray", "matmul", "reduce", "sobel", "sort", "transpose"];

/// Launches the emulator cannot run yet, with what it says: listed, not
/// passed. When the emulator learns the instruction, the test fails until
/// the launch is removed from here (and is then checked like the others;
/// Sobel's detect run will then report the NaNs that the square-root
/// sequence meets at flat pixels, see `tests/apps/src/sobel.cu`, which its
/// check must expect).
const EMULATOR_GAPS: [(&str, &str); 2] =
    [("sobel", "unsupported operand form SDWA"), ("sort_merge_block", "unsupported operand form SDWA")];

/// Launches whose kernel has no floating-point instruction (transpose only
/// moves values): detect mode runs them with no probe, zero sites covered.
const NO_FP_INSTRUCTIONS: [&str; 1] = ["transpose"];

fn apps_amd() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("apps/amd")
}

fn launches() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(apps_amd().join("launches"))
        .expect("tests/apps/amd/launches")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem().expect("file name").to_string_lossy().into_owned()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `xfpx replay` of `launch` on `target` in `dir`, output buffers to
/// `dir/out`, the report to `dir/r.json` (detect mode) or none.
fn replay(dir: &Path, launch: &Path, target: &str, detect: bool) -> common::Outcome {
    let mut c = xfpx(dir);
    c.args(["replay", "--target", target, "--out", "out"]);
    if detect {
        c.args(["--mode", "detect", "--report", "r.json"]);
    } else {
        c.arg("--no-report");
    }
    c.arg(launch);
    run(c)
}

/// Checks one launch on one target; Err says what went wrong.
fn check(launch: &Path, target: &str, gaps: &mut Vec<String>) -> Result<(), String> {
    let name = stem(launch);
    let plain_dir = tempfile::tempdir().expect("scratch");
    let plain = replay(plain_dir.path(), launch, target, false);
    if let Some((_, says)) = EMULATOR_GAPS.iter().find(|(n, _)| *n == name) {
        if plain.code == Some(1) && plain.stderr.contains(says) {
            gaps.push(format!("{target} {name}: the emulator cannot run it yet ({says})"));
            return Ok(());
        }
        return Err(format!(
            "listed as an emulator gap ({says}) but replay gave exit {:?}: {} (remove it from EMULATOR_GAPS if it runs now)",
            plain.code, plain.stderr
        ));
    }
    if plain.code != Some(0) {
        return Err(format!("replay exit {:?}: {}", plain.code, plain.stderr.trim()));
    }
    // Outputs against the host reference, byte for byte (the suite is exact by
    // construction: every expect file states a tolerance of 0 ULP).
    let expect = read_json(&launch.with_extension("expect.json"));
    let outputs = expect["outputs"].as_object().ok_or("expect file without outputs")?;
    if outputs.is_empty() {
        return Err("no outputs to check".into());
    }
    for (buf, spec) in outputs {
        if spec["ulp"].as_f64() != Some(0.0) {
            return Err(format!("{buf}: the suite's references are exact, yet the expect file allows {}", spec["ulp"]));
        }
        let want_path = launch.parent().expect("dir").join(spec["expected"].as_str().ok_or("bad expected")?);
        let want = std::fs::read(&want_path).map_err(|e| format!("{}: {e}", want_path.display()))?;
        let got = std::fs::read(plain_dir.path().join(format!("out/{buf}.bin"))).map_err(|e| format!("{buf}: {e}"))?;
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            return Err(format!(
                "{buf}: differs from the host reference at byte {at} ({} vs {} bytes)",
                got.len(),
                want.len()
            ));
        }
    }
    // Detect mode: the rewritten kernel finds nothing and computes the same.
    let det_dir = tempfile::tempdir().expect("scratch");
    let det = replay(det_dir.path(), launch, target, true);
    let no_fp = NO_FP_INSTRUCTIONS.contains(&name.as_str());
    if det.code != Some(0) {
        return Err(format!("detect replay exit {:?}: {}", det.code, det.stderr.trim()));
    }
    let report = Report::from_json(&std::fs::read_to_string(det_dir.path().join("r.json")).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let kernel = read_json(launch)["kernel"].as_str().ok_or("launch without kernel")?.to_string();
    let k = report.kernels.iter().find(|k| k.name == kernel).ok_or("kernel missing from the report")?;
    if k.instrumented_launches != 1 || (k.probes == 0) != no_fp {
        return Err(format!(
            "detect mode did not instrument {kernel} as expected: {} launches, {} probes",
            k.instrumented_launches, k.probes
        ));
    }
    let coverage = k.coverage.as_ref().ok_or("no coverage in the report")?;
    if !coverage.refused.is_empty() || (coverage.fp_sites == 0) != no_fp {
        return Err(format!("{kernel}: coverage {coverage:?}"));
    }
    if let Some((kernel, r)) = report.records().next() {
        return Err(format!("detect mode found an exception in {kernel}: {r:?}"));
    }
    for buf in outputs.keys() {
        let a = std::fs::read(plain_dir.path().join(format!("out/{buf}.bin"))).map_err(|e| e.to_string())?;
        let b = std::fs::read(det_dir.path().join(format!("out/{buf}.bin"))).map_err(|e| format!("{buf}: {e}"))?;
        if a != b {
            return Err(format!("{buf}: the instrumented kernel's output differs from the original's"));
        }
    }
    Ok(())
}

#[test]
fn every_application_launch_matches_its_host_reference_on_the_emulator() {
    let list = launches();
    let apps: BTreeSet<String> = list
        .iter()
        .map(|l| {
            let co = read_json(l)["code_object"].as_str().expect("code_object").to_string();
            co.rsplit('/').next().expect("name").trim_end_matches(".co").to_string()
        })
        .collect();
    assert_eq!(apps, APPS.iter().map(|s| s.to_string()).collect(), "every application has a launch");
    let names: BTreeSet<String> = list.iter().map(|l| stem(l)).collect();
    for (gap, _) in EMULATOR_GAPS {
        assert!(names.contains(gap), "EMULATOR_GAPS names {gap}, which has no launch");
    }
    let (mut failures, mut gaps, mut passed) = (Vec::new(), Vec::new(), 0);
    for target in TARGETS {
        for l in &list {
            match check(l, target, &mut gaps) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{target} {}: {e}", stem(l))),
            }
        }
    }
    println!(
        "{} of {} application launches on {} match their host reference (detect mode: no finding, outputs identical)",
        passed - gaps.len(),
        list.len() * TARGETS.len(),
        TARGETS.join(", ")
    );
    for g in &gaps {
        println!("NOT CHECKED: {g}");
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

fn files_under(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn committed_application_fixtures_are_current() {
    let amd = apps_amd();
    for tool in ["clang-19", "clang++-19", "llvm-objdump-19"] {
        if Command::new(tool).arg("--version").output().is_err() {
            println!("SKIPPED: tests/apps/amd/regen.sh not rerun ({tool} is not installed)");
            return;
        }
    }
    let out = Command::new("clang-19").arg("--version").output().expect("clang-19 --version");
    let installed = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string() + "\n";
    let recorded = std::fs::read_to_string(amd.join("TOOLS.txt")).expect("TOOLS.txt");
    if installed != recorded {
        println!(
            "SKIPPED: tests/apps/amd/regen.sh not rerun (installed {installed:?}, fixtures made with {recorded:?})"
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("scratch");
    let status = Command::new("bash").arg(amd.join("regen.sh")).arg(tmp.path()).status().expect("run regen.sh");
    assert!(status.success(), "regen.sh failed");
    let generated = files_under(tmp.path());
    let committed: Vec<String> = files_under(&amd).into_iter().filter(|f| f != "regen.sh" && f != "gen.cpp").collect();
    assert_eq!(generated, committed, "file lists differ (rerun tests/apps/amd/regen.sh)");
    let stale: Vec<&String> = generated
        .iter()
        .filter(|f| std::fs::read(tmp.path().join(f)).ok() != std::fs::read(amd.join(f)).ok())
        .collect();
    assert!(stale.is_empty(), "stale files (rerun tests/apps/amd/regen.sh): {stale:?}");
    println!("{} generated files identical to the committed ones", generated.len());
}
