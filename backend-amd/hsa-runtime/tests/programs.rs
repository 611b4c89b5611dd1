//! The HSA programs (built by gcc against the installed headers, linked
//! against the runtime as `-lhsa-runtime64`) run on the emulated runtime for
//! gfx942 and gfx90a and their outputs equal the host's references (each
//! program checks its own and exits non-zero on a mismatch); a target the
//! emulator does not run is refused with one line. The API beyond the
//! programs (`tests/c/api_checks.c`) answers as the headers specify, and a
//! dispatch the GPU cannot complete reaches the queue's error callback or,
//! without one, stops the process with a line.

mod common;

use common::{run, run_with, text, PROGRAMS};

#[test]
fn every_program_equals_the_host_on_gfx942_and_gfx90a() {
    for target in ["gfx942", "gfx90a"] {
        for p in PROGRAMS {
            let out = run(p, &[("XFPX_HSA_TARGET", target)]);
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            assert!(out.status.success(), "{p} on {target}: {:?}\n{stdout}{stderr}", out.status);
            assert!(stdout.contains("equal the host's"), "{p} on {target}: {stdout}");
            assert!(stderr.is_empty(), "{p} on {target} wrote to stderr: {stderr}");
        }
    }
}

#[test]
fn the_default_target_is_gfx942_and_an_unknown_one_is_refused() {
    let out = run("vector_add", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run("vector_add", &[("XFPX_HSA_TARGET", "gfx1030")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines[0].contains("XFPX_HSA_TARGET=gfx1030 is not a target the emulator runs"), "{stderr}");
    assert!(lines[1].starts_with("error: hsa_init()"), "{stderr}");
    // A GPU whose code objects the program lacks: the program's own error.
    let out = run("vector_add", &[("XFPX_HSA_TARGET", "gfx908")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("gfx908/vector_add.co"), "{}", text(&out.stderr));
}

#[test]
fn the_api_answers_as_the_headers_specify() {
    for target in ["gfx942", "gfx90a"] {
        let out = run("api_checks", &[("XFPX_HSA_TARGET", target)]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{target}: {stdout}{stderr}");
        assert!(stdout.contains("checks hold"), "{stdout}");
        // The two code objects it makes the runtime refuse, one line each.
        let other = if target == "gfx90a" { "gfx942" } else { "gfx90a" };
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [
                "warning: xfpx emulated HSA runtime: code object not loaded: malformed ELF header: bad magic".to_string(),
                format!("warning: xfpx emulated HSA runtime: code object not loaded: the code object is for {other}, the agent is {target}"),
            ],
            "{target}"
        );
    }
}

#[test]
fn a_failed_dispatch_reaches_the_error_callback_or_stops_the_process() {
    // A store through an unmapped pointer: a memory aperture violation.
    let out = run_with("queue_error", &["fault", "callback"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "queue error callback: status 0x29, completion signal 1");
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("kernel vector_add") && stderr.contains("store of address 0x10"), "{stderr}");
    // A packet naming no kernel: an invalid packet.
    let out = run_with("queue_error", &["object", "callback"], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(text(&out.stdout).trim(), "queue error callback: status 0x1009, completion signal 1");
    assert!(text(&out.stderr).contains("is not a kernel of a loaded executable"));
    // Without a callback the process aborts, after saying why.
    let out = run_with("queue_error", &["fault", "none"], &[]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(6), "{:?}", out.status);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.lines().nth(1).is_some_and(|l| l.contains("no error callback; aborting")), "{stderr}");
}

/// A program linked against AMD's library (Debian's, whose symbols carry the
/// version `ROCR_1`) runs on the emulated one without a loader warning.
#[test]
fn a_program_linked_against_amds_runtime_runs_on_this_one() {
    let real = std::path::Path::new("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so");
    if !real.exists() {
        eprintln!("SKIPPED: {} (libhsa-runtime-dev) is not installed", real.display());
        return;
    }
    let s = common::setup();
    let exe = s.root.join("vector_add_amd");
    let st = std::process::Command::new("gcc")
        .args(["-std=c11", "-O1", "-I/usr/include/hsa"])
        .arg(common::programs_dir().join("src/vector_add.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lhsa-runtime64")
        .status()
        .expect("gcc");
    assert!(st.success());
    let out = std::process::Command::new(&exe)
        .arg(common::programs_dir())
        .env("LD_LIBRARY_PATH", &s.root)
        .env_remove("HSA_TOOLS_LIB")
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("equal the host's"));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}
