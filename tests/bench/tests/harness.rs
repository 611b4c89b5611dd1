//! Runs the benchmark harness's Python tests, its dry run and argument
//! checks (no GPU needed), and compiles the suite where nvcc is available.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Python 3 interpreter, or None (the caller prints why it skips).
fn python() -> Option<String> {
    ["python3", "python"].into_iter().map(String::from).find(|p| {
        Command::new(p)
            .args(["-c", "import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn run_bench(py: &str, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(bench_dir().join("run-bench.sh"))
        .args(args)
        .env("PYTHON", py)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("XFPX")
        .env_remove("XFPX_MODES")
        .env_remove("GPUFPX_DETECTOR")
        .output()
        .expect("bash runs")
}

#[test]
fn harness_python_tests_pass() {
    let Some(py) = python() else {
        eprintln!("note: no python3 found: the benchmark harness tests were skipped");
        return;
    };
    let harness = bench_dir().join("harness");
    let out = Command::new(&py)
        .args(["-m", "unittest", "discover", "-s"])
        .arg(&harness)
        .args(["-p", "test_*.py"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python runs");
    assert!(out.status.success(), "harness tests failed:\n{}", text(&out));
}

#[test]
fn dry_run_lists_every_program_and_runs_nothing() {
    let Some(py) = python() else {
        eprintln!("note: no python3 found: the dry run was skipped");
        return;
    };
    let out_dir = std::env::temp_dir().join(format!("xfpx-bench-dry-{}", std::process::id()));
    let out = run_bench(&py, &["--dry-run", "--xfpx", "", "--out", out_dir.to_str().expect("utf-8 temp dir")]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for p in [
        "gemm",
        "batched_gemm",
        "stencil3d",
        "reduce_scan",
        "ode_chem",
        "black_scholes",
        "cfd_flux",
        "nbody",
        "spmv",
        "late_nan",
        "train_mlp.py",
    ] {
        assert!(t.contains(p), "dry run does not mention {p}:\n{t}");
    }
    assert!(t.starts_with("dry run: 11 programs"), "{t}");
    assert!(!Path::new(&out_dir).exists(), "a dry run wrote {}", out_dir.display());
}

#[test]
fn bad_arguments_give_one_line_errors() {
    let Some(py) = python() else {
        eprintln!("note: no python3 found: the argument checks were skipped");
        return;
    };
    for args in [&["--programs", "nosuch"][..], &["--gpufpx", "/nonexistent/detector.so"][..]] {
        let out = run_bench(&py, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

/// Compiles every suite program for sm_90 with `-lineinfo -O3` when nvcc is
/// available (NVCC or PATH); skipped with a note otherwise.
#[test]
fn suite_compiles_where_nvcc_is_available() {
    let nvcc = std::env::var("NVCC").unwrap_or_else(|_| "nvcc".into());
    if Command::new(&nvcc).arg("--version").output().map(|o| o.status.success()).unwrap_or(false) {
        let out_dir = std::env::temp_dir().join(format!("xfpx-bench-build-{}", std::process::id()));
        let out = Command::new("bash")
            .arg(bench_dir().join("build.sh"))
            .env("NVCC", &nvcc)
            .env("BENCH_OUT", &out_dir)
            .output()
            .expect("bash runs");
        let t = text(&out);
        let _ = std::fs::remove_dir_all(&out_dir);
        assert!(out.status.success(), "build.sh failed:\n{t}");
        assert!(t.contains("built 10 programs"), "{t}");
    } else {
        eprintln!("note: nvcc not found (set NVCC=/path/to/nvcc): the suite was not compiled");
    }
}

/// `tests/gpu/vs-gpufpx.py` on hand-made logs: a class GPU-FPX found and
/// xfpx missed fails the comparison, and classes only xfpx found (or in
/// formats GPU-FPX does not check) are listed as extra.
#[test]
fn gpufpx_comparison_reports_missed_classes() {
    let Some(py) = python() else {
        eprintln!("note: no Python 3; skipping the GPU-FPX comparison test");
        return;
    };
    let script = bench_dir().join("../gpu/vs-gpufpx.py");
    let dir = std::env::temp_dir().join(format!("xfpx-vs-gpufpx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let gpufpx = "#GPU-FPX LOC-EXCEP INFO: in kernel [k1], NaN found @ /unknown_path in [k1]:0 [FP32]\n\
                  #GPU-FPX LOC-EXCEP INFO: in kernel [k2], INF found @ /unknown_path in [k2]:0 [FP64]\n";
    let report = |records: &str| {
        format!(
            "{{\"schema\":\"xfpx-report/1\",\"run\":{{}},\"kernels\":[\
             {{\"name\":\"k1(float*)\",\"records\":[{records}]}}]}}"
        )
    };
    let nan32 = "{\"kind\":\"nan\",\"format\":\"f32\",\"site\":{}}";
    let nan16 = "{\"kind\":\"nan\",\"format\":\"f16x2\",\"site\":{}}";
    std::fs::write(dir.join("p.gpufpx.log"), gpufpx).expect("write");
    std::fs::write(dir.join("p.fast.report.json"), report(&format!("{nan32},{nan16}"))).expect("write");
    let run = || Command::new(&py).arg(&script).arg(&dir).arg("p").output().expect("python runs");
    let out = run();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("k2 inf f64"), "the class xfpx missed is named: {t}");
    assert!(!t.contains("f16x2"), "formats GPU-FPX does not check are left out: {t}");
    // with the missing class found, the comparison passes
    let both = "{\"name\":\"k2\",\"records\":[{\"kind\":\"inf\",\"format\":\"f64\",\"site\":{}}]}";
    let full = report(nan32).replace("]}]}", &format!("]}},{both}]}}"));
    std::fs::write(dir.join("p.fast.report.json"), full).expect("write");
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
