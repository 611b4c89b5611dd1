//! Checks of the GPU suite that need no GPU: every program has an
//! expected-findings file that agrees with its source markers and with the
//! captured SASS, the comparison rules hold on hand-made reports, the
//! many-sites program is as large as it claims, and (where nvcc is
//! present) the committed listings are what the current sources compile to.

use std::path::{Path, PathBuf};
use std::process::Command;

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("gpu")
}

fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// Runs a Python script of the suite; skips (with a note) without python3.
fn run_python(args: &[&str]) {
    if !have("python3") {
        eprintln!("note: python3 not found, skipping `{}`", args.join(" "));
        return;
    }
    let out = Command::new("python3").args(args).current_dir(suite_dir()).output().expect("python3 runs");
    assert!(
        out.status.success(),
        "`python3 {}` failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn programs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(suite_dir().join("src"))
        .expect("src/ exists")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".cu")).map(str::to_string))
        .collect();
    v.sort();
    v
}

#[test]
fn expected_files_match_markers_and_listings() {
    run_python(&["gen-expected.py", "--check"]);
}

#[test]
fn comparison_rules_hold_on_hand_made_reports() {
    run_python(&["compare.py", "selftest"]);
}

#[test]
fn the_screen_checks_report_reader_holds_on_hand_made_reports() {
    run_python(&["screen_report.py", "selftest"]);
}

#[test]
fn flow_comparison_rules_hold_on_hand_made_logs() {
    run_python(&["flow_vs_gpufpx.py", "selftest"]);
}

#[test]
fn every_program_has_a_well_formed_expected_file_and_listings() {
    let kinds = ["nan", "inf", "sub", "div0"];
    let formats = ["f16", "f16x2", "bf16", "bf16x2", "f32", "f64"];
    let mut names = programs();
    assert!(names.len() >= 6, "suite programs: {names:?}");
    for p in &names {
        for ext in ["sass", "lines.sass"] {
            let listing = suite_dir().join("listings").join(format!("{p}.{ext}"));
            let len = std::fs::metadata(&listing).map(|m| m.len()).unwrap_or(0);
            assert!(len > 0, "{} is missing or empty", listing.display());
        }
    }
    names.extend(["torch_matmul_nan", "torch_compile_nan", "torch_half_gemm"].map(String::from));
    for p in &names {
        let path = suite_dir().join("src").join(format!("{p}.expected.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(doc["program"], p.as_str(), "{}", path.display());
        assert!(doc["command"].as_array().is_some_and(|c| !c.is_empty()), "{}: command", path.display());
        let findings = doc["findings"].as_array().unwrap_or_else(|| panic!("{}: findings", path.display()));
        for f in findings {
            assert!(kinds.contains(&f["kind"].as_str().unwrap_or("")), "{}: kind in {f}", path.display());
            assert!(formats.contains(&f["format"].as_str().unwrap_or("")), "{}: format in {f}", path.display());
            assert!(f["kernel"].is_string() || f["kernel_regex"].is_string(), "{}: kernel in {f}", path.display());
        }
        if p == "fpx_clean" {
            assert!(findings.is_empty(), "the clean program expects no findings");
        } else {
            assert!(!findings.is_empty(), "{p} expects findings");
        }
    }
}

#[test]
fn many_sites_has_over_200000_fp_instructions() {
    let path = suite_dir().join("listings/many_sites.fp-count");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n: u64 = text.trim().parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(n > 200_000, "many_sites has only {n} floating-point instructions");
}

#[test]
fn listings_are_current_where_nvcc_is_present() {
    if !have("nvcc") {
        eprintln!("note: nvcc not on PATH, not recompiling the suite to check listings/ (capture-listings.sh)");
        return;
    }
    let tmp = tempfile::tempdir().expect("temporary directory");
    let status = Command::new("bash")
        .arg(suite_dir().join("capture-listings.sh"))
        .env("LISTINGS_OUT", tmp.path())
        .status()
        .expect("bash runs");
    assert!(status.success(), "capture-listings.sh failed");
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(tmp.path()).expect("capture output").filter_map(|e| e.ok()) {
        let committed = suite_dir().join("listings").join(entry.file_name());
        if std::fs::read(entry.path()).ok() != std::fs::read(&committed).ok() {
            stale.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    assert!(stale.is_empty(), "listings out of date (run tests/gpu/capture-listings.sh): {stale:?}");
}
