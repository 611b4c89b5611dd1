//! The applications suite (`tests/apps`) on the emulator, through `xfpx
//! replay`: every launch of `tests/apps/amd/launches` on gfx90a and gfx942
//! gives its host reference's outputs bit for bit with no hazard, and
//! `--mode detect` leaves the outputs bit-identical, checks every FP site and
//! records exactly the (site, kind, format) set the emulator observed in the
//! plain run, plus NaN operands of comparisons and min/max (which detect mode
//! checks and the emulator does not observe as results). The committed code
//! objects and launches are what `tests/apps/amd/regen.sh` produces, checked
//! where clang-19 is installed.

mod common;

use common::{run, xfpx};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_amd_isa::{Opcode, Target};
use xfpx_common::report::Report;
use xfpx_common::{ExceptionKind, FpFormat, InstrClass};

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

/// The paper's seven applications, by code object.
const APPS: [&str; 7] = ["fft", "gray", "matmul", "reduce", "sobel", "sort", "transpose"];

/// Launches the emulator cannot run yet, with what it says: listed, not
/// passed. When the emulator learns the instruction, the test fails until
/// the launch is removed from here (and is then checked like the others).
const EMULATOR_GAPS: [(&str, &str); 0] = [];

/// Launches whose plain run observes exceptional results, by (launch,
/// kind, format, occurrences): Sobel's square-root sequence meets NaN at its
/// flat pixels (see `tests/apps/src/sobel.cu`), 494 wave executions in the
/// committed image. Every other launch observes none.
const EXPECTED_FINDINGS: [(&str, ExceptionKind, FpFormat, u64); 1] =
    [("sobel", ExceptionKind::Nan, FpFormat::F32, 494)];

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
/// `dir/out`, the report to `dir/r.json` (plain or detect mode).
fn replay(dir: &Path, launch: &Path, target: &str, detect: bool) -> common::Outcome {
    let mut c = xfpx(dir);
    c.args(["replay", "--target", target, "--out", "out", "--report", "r.json"]);
    if detect {
        c.args(["--mode", "detect"]);
    }
    c.arg(launch);
    run(c)
}

fn report_in(dir: &Path) -> Result<Report, String> {
    Report::from_json(&std::fs::read_to_string(dir.join("r.json")).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())
}

/// (site offset, kind, format, occurrences) of a kernel's records, and the
/// site's instruction text by offset.
type Findings = BTreeSet<(u64, ExceptionKind, FpFormat, u64)>;

fn findings(report: &Report, kernel: &str) -> Result<(Findings, Vec<(u64, String)>), String> {
    let k = report.kernels.iter().find(|k| k.name == kernel).ok_or("kernel missing from the report")?;
    let set = k.records.iter().map(|r| (r.site.offset, r.kind, r.format, r.occurrences)).collect();
    let text = k.records.iter().map(|r| (r.site.offset, r.site.instr.clone())).collect();
    Ok((set, text))
}

/// Whether detect mode also checks NaN operands of the instruction printed
/// as `text` (comparisons and min/max, see docs/cli.md), read through the
/// decoder's facts of its mnemonic.
fn checks_nan_operands(text: &str, target: &str) -> bool {
    let Some(op) = text.split_whitespace().next().and_then(Opcode::from_mnemonic) else { return false };
    let target: Target = target.parse().expect("target");
    op.compare().is_some()
        || xfpx_amd_isa::table::rows()
            .iter()
            .any(|r| r.op == op && r.targets & target.mask() != 0 && matches!(r.class, InstrClass::MinMax { .. }))
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
    let kernel = read_json(launch)["kernel"].as_str().ok_or("launch without kernel")?.to_string();
    let plain_report = report_in(plain_dir.path())?;
    if plain_report.run.notes.iter().any(|n| n.contains("hazard")) {
        return Err(format!("hazards: {:?}", plain_report.run.notes));
    }
    let (observed, _) = findings(&plain_report, &kernel)?;
    let expected: Findings = EXPECTED_FINDINGS
        .iter()
        .filter(|(n, ..)| *n == name)
        .map(|&(_, k, f, n)| (k, f, n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .flat_map(|(k, f, n)| observed.iter().filter(move |o| (o.1, o.2, o.3) == (k, f, n)).copied())
        .collect();
    let expected_count = EXPECTED_FINDINGS.iter().filter(|(n, ..)| *n == name).count();
    if observed != expected || expected.len() != expected_count {
        return Err(format!(
            "the emulator observed {observed:?}, expected {expected_count} findings as EXPECTED_FINDINGS"
        ));
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
    let report = report_in(det_dir.path())?;
    if report.run.notes.iter().any(|n| n.contains("hazard")) {
        return Err(format!("hazards in the rewritten kernel: {:?}", report.run.notes));
    }
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
    // Detect mode records what the emulator observed, plus NaN operands of
    // comparisons and min/max with the count of the NaN they read.
    let (found, text) = findings(&report, &kernel)?;
    let missing: Vec<_> = observed.difference(&found).collect();
    let extra: Vec<_> = found
        .difference(&observed)
        .filter(|(off, kind, ..)| {
            let t = text.iter().find(|(o, _)| o == off).map(|(_, t)| t.as_str()).unwrap_or("");
            !(*kind == ExceptionKind::Nan && checks_nan_operands(t, target))
        })
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(format!("detect mode's records differ from the emulator's: missing {missing:?}, extra {extra:?}"));
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
