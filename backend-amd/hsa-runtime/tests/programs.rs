//! The HSA programs (built by gcc against the installed headers, linked
//! against the runtime as `-lhsa-runtime64`) run on the emulated runtime for
//! gfx942 and gfx90a and their outputs equal the host's references (each
//! program checks its own and exits non-zero on a mismatch); a target the
//! emulator does not run is refused with one line.

mod common;

use common::{run, text, PROGRAMS};

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
