//! Bad input to `xfpx` gives one clear line and a non-zero exit, never a
//! panic; the program under test is not started when the flags are wrong.

mod common;

use common::{run, xfpx, xfpx_without_library};
use std::path::Path;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

/// `xfpx run` with `flags`, on a program that would leave a marker file.
fn run_flags_then_touch(dir: &Path, flags: &[&str]) -> common::Outcome {
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia"]).args(flags).args(["--", "touch", "ran"]);
    run(c)
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.args(["run", "--no-such-flag", "--", "true"]);
    let o = run(c);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.starts_with("error: unexpected argument '--no-such-flag'"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"));
}

#[test]
fn run_without_a_program_is_a_usage_error() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.arg("run");
    assert_eq!(run(c).code, Some(2));
    let mut c = xfpx(d.path());
    c.args(["run", "--vendor", "intel", "--", "true"]);
    let o = run(c);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("invalid value 'intel'"), "{}", o.stderr);
}

#[test]
fn help_and_version_succeed() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.arg("--help");
    let o = run(c);
    assert_eq!(o.code, Some(0));
    for cmd in ["run", "dump", "report"] {
        assert!(o.stdout.contains(cmd), "{}", o.stdout);
    }
    let mut c = xfpx(d.path());
    c.arg("--version");
    let o = run(c);
    assert_eq!(o.code, Some(0));
    assert!(o.stdout.starts_with("xfpx "), "{}", o.stdout);
}

#[test]
fn missing_program_exits_127() {
    let d = scratch();
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--", "./no-such-program", "arg"]);
    run(c).assert_one_line_error(127, "program not found: ./no-such-program");
}

#[test]
fn non_executable_program_exits_126() {
    let d = scratch();
    std::fs::write(d.path().join("data.txt"), "not a program").expect("write");
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--", "./data.txt"]);
    run(c).assert_one_line_error(126, "cannot execute ./data.txt");
}

#[test]
fn bad_flag_values_stop_before_the_program_runs() {
    let cases: &[(&[&str], &str)] = &[
        (&["--kernels", "("], "invalid --kernels pattern `(`: unclosed group"),
        (&["--exclude", "a{2,1}"], "invalid --exclude pattern"),
        (&["--instr-range", "10:5"], "invalid --instr-range `10:5`"),
        (&["--instr-range", "x"], "invalid --instr-range `x`"),
        (&["--sample", "0"], "invalid --sample 0"),
        (&["--fail-on", "nan,overflow"], "unknown exception kind `overflow`"),
        (&["--report", "no/such/dir/r.json"], "does not exist"),
        (
            &["--html", "no/such/dir/r.html"],
            "cannot write HTML page no/such/dir/r.html: directory no/such/dir does not exist",
        ),
        (&["--html", "."], "--html . is a directory"),
    ];
    for (flags, needle) in cases {
        let d = scratch();
        let o = run_flags_then_touch(d.path(), flags);
        o.assert_one_line_error(1, needle);
        assert!(!d.path().join("ran").exists(), "the program ran despite {flags:?}");
    }
}

#[test]
fn nvidia_without_tool_library_says_how_to_build_it() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.env("XFPX_NVBIT_TOOL", d.path().join("missing.so"));
    c.args(["run", "--vendor", "nvidia", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "XFPX_NVBIT_TOOL names");
    assert!(!d.path().join("ran").exists());

    // Without the variable, the lookup comes up empty unless a tool
    // library was built in one of the places it looks.
    let bin = xfpx_tests::xfpx_binary();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let places = [
        bin.with_file_name("libxfpx_nvbit.so"),
        bin.with_file_name("../lib/libxfpx_nvbit.so"),
        workspace.join("target/nvbit-tool/libxfpx_nvbit.so"),
    ];
    if let Some(built) = places.iter().find(|p| p.exists()) {
        eprintln!("note: {} exists; the not-found message is not checked", built.display());
        return;
    }
    let mut c = xfpx(d.path());
    c.args(["run", "--vendor", "nvidia", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "xfpx setup nvidia");
}

#[test]
fn amd_runs_without_a_gpu_are_refused_in_one_line() {
    if Path::new("/dev/kfd").exists() {
        eprintln!("note: /dev/kfd exists; the no-AMD-GPU message is not checked here");
        return;
    }
    let d = scratch();
    // a tool library is there: the missing GPU is what stops the run
    let tool = d.path().join("libxfpx_hsa.so");
    std::fs::write(&tool, b"").expect("write");
    let mut c = xfpx(d.path());
    c.env("XFPX_HSA_TOOL", &tool).args(["run", "--vendor", "amd", "--", "touch", "ran"]);
    let o = run(c);
    o.assert_one_line_error(1, "no AMD GPU found (/dev/kfd is missing); --emulate runs the program");
    assert!(!d.path().join("ran").exists());
    // a tool library that is not there is said first, on any machine
    let mut c = xfpx(d.path());
    c.env("XFPX_HSA_TOOL", d.path().join("none.so")).args(["run", "--vendor", "amd", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "XFPX_HSA_TOOL names");
    assert!(!d.path().join("ran").exists());
}

#[test]
fn auto_without_any_gpu_is_an_error() {
    let gpu = ["/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/kfd"].iter().any(|p| Path::new(p).exists());
    if gpu {
        eprintln!("note: a GPU driver is present; the no-GPU message is not checked here");
        return;
    }
    let d = scratch();
    let mut c = xfpx(d.path());
    c.args(["run", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "no supported GPU found");
}

#[test]
fn bad_test_hook_value_is_rejected() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.env("XFPX_TOOL_LIBRARY", "yes");
    c.args(["run", "--vendor", "nvidia", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "XFPX_TOOL_LIBRARY accepts only `none`");
}

#[test]
fn report_of_unreadable_or_foreign_files() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.args(["report", "missing.json"]);
    run(c).assert_one_line_error(1, "cannot read report missing.json");

    std::fs::write(d.path().join("half.json"), "{\"schema\": \"xfpx-report/1\", ").expect("write");
    let mut c = xfpx(d.path());
    c.args(["report", "half.json"]);
    run(c).assert_one_line_error(1, "not valid JSON");

    std::fs::write(d.path().join("other.json"), "{\"schema\": \"other/9\"}").expect("write");
    let mut c = xfpx(d.path());
    c.args(["report", "other.json"]);
    run(c).assert_one_line_error(1, "cannot read report other.json");

    std::fs::write(d.path().join("noise.msgpack"), [0x93u8, 0x01, 0xc1, 0xff]).expect("write");
    let mut c = xfpx(d.path());
    c.args(["report", "noise.msgpack"]);
    run(c).assert_one_line_error(1, "not valid MessagePack");
}

#[test]
fn dump_of_a_missing_file() {
    let d = scratch();
    for vendor in ["nvidia", "amd"] {
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", vendor, "missing.sass"]);
        run(c).assert_one_line_error(1, "cannot read missing.sass");
    }
}

#[test]
fn flags_of_the_other_vendor_are_refused_in_one_line() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.args(["run", "--vendor", "nvidia", "--mode", "screen", "--", "touch", "ran"]);
    run(c).assert_one_line_error(2, "--mode screen reads the sticky exception bits of AMD waves");
    let mut c = xfpx(d.path());
    c.args(["run", "--vendor", "amd", "--tool", "counters", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "--tool counters is not available for AMD runs");
    let mut c = xfpx(d.path());
    c.args(["run", "--vendor", "nvidia", "--emulate", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "--emulate runs AMD programs");
    assert!(!d.path().join("ran").exists());
}

#[test]
fn setup_amd_says_what_it_cannot_do_in_one_line() {
    let d = scratch();
    let mut c = xfpx(d.path());
    c.args(["setup", "amd", "--arch", "sm_90"]);
    run(c).assert_one_line_error(1, "--arch is for `xfpx setup nvidia`");
    let mut c = xfpx(d.path());
    c.args(["setup", "amd", "--dest"]).arg(d.path().join("nope"));
    run(c).assert_one_line_error(1, "does not exist");
    // the tests' xfpx is a debug build, which carries no AMD libraries
    let mut c = xfpx(d.path());
    c.args(["setup", "amd", "--dest"]).arg(d.path());
    run(c).assert_one_line_error(1, "this xfpx carries no AMD libraries");
    assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0, "nothing was written");
}
