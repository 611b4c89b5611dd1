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
        "gemm", "batched_gemm", "stencil3d", "reduce_scan", "ode_chem", "black_scholes", "cfd_flux", "nbody", "spmv",
        "train_mlp.py",
    ] {
        assert!(t.contains(p), "dry run does not mention {p}:\n{t}");
    }
    assert!(t.starts_with("dry run: 10 programs"), "{t}");
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
        assert!(t.contains("built 9 programs"), "{t}");
    } else {
        eprintln!("note: nvcc not found (set NVCC=/path/to/nvcc): the suite was not compiled");
    }
}
