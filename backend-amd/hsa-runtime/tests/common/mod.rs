//! What the runtime's end-to-end tests share: a folder holding the built
//! runtime under its real names (`libhsa-runtime64.so.1` and the
//! `libhsa-runtime64.so` link), the HSA programs built there by gcc against
//! the installed headers and that library, and a runner with a time limit.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const PROGRAMS: [&str; 5] = ["vector_add", "reduce", "multi", "fpe", "unrewritable"];
/// Programs of the tests themselves (`tests/c`).
pub const TEST_PROGRAMS: [&str; 2] = ["api_checks", "queue_error"];

/// The programs' folder (kernels, code objects per target, sources).
pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

/// The cdylib cargo built beside this test.
fn built_runtime() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let deps = exe.parent().expect("deps folder");
    let lib = deps.join("libhsa_runtime64.so");
    assert!(lib.is_file(), "{} is missing: cargo builds it with this package's tests", lib.display());
    lib
}

pub struct Setup {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out =
        cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e} (install gcc, g++ and libhsa-runtime-dev)"));
    assert!(out.status.success(), "{what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// The runtime and the programs, built once per test binary.
pub fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        std::fs::copy(built_runtime(), root.join("libhsa-runtime64.so.1")).expect("copy the runtime");
        std::os::unix::fs::symlink("libhsa-runtime64.so.1", root.join("libhsa-runtime64.so")).expect("link");
        let src = programs_dir().join("src");
        let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
        let all = PROGRAMS.iter().map(|p| src.join(format!("{p}.c")));
        let all = all.chain(TEST_PROGRAMS.iter().map(|p| tests.join(format!("{p}.c"))));
        for (path, p) in all.zip(PROGRAMS.iter().chain(TEST_PROGRAMS.iter())) {
            run_ok(
                Command::new("gcc")
                    .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I/usr/include/hsa"])
                    .arg(format!("-I{}", src.display()))
                    .arg(path)
                    .arg("-o")
                    .arg(root.join(p))
                    .arg(format!("-L{}", root.display()))
                    .args(["-lhsa-runtime64", "-lm"]),
                &format!("gcc {p}.c"),
            );
        }
        Setup { _dir: dir, root }
    })
}

/// Builds the test tool `tests/tools/count_dispatches.cpp` as `lib<name>.so`
/// with `defines` (once per name); returns its path.
pub fn build_tool(name: &str, defines: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let s = setup();
    let out = s.root.join(format!("lib{name}.so"));
    if built.iter().any(|b| b == name) {
        return out;
    }
    built.push(name.to_string());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/count_dispatches.cpp");
    run_ok(
        Command::new("g++")
            .args(["-std=c++17", "-shared", "-fPIC", "-Wall", "-Werror", "-DAMD_INTERNAL_BUILD", "-I/usr/include/hsa"])
            .arg(format!("-DTOOL_NAME=\"{name}\""))
            .args(defines)
            .arg(&src)
            .arg("-o")
            .arg(&out),
        &format!("g++ tool {name}"),
    );
    out
}

/// Runs program `name` on the emulated runtime with `env`; kills it after two minutes.
pub fn run(name: &str, env: &[(&str, &str)]) -> Output {
    run_with(name, &[], env)
}

/// [`run`] with arguments after the programs' folder.
pub fn run_with(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let s = setup();
    let mut cmd = Command::new(s.root.join(name));
    cmd.arg(programs_dir())
        .args(args)
        .env("LD_LIBRARY_PATH", &s.root)
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("XFPX_HSA_TARGET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{name}: {e}"));
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{name} ran for more than two minutes");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
