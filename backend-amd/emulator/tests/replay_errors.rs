//! Bad launches give one clear line, never a panic.

use std::path::{Path, PathBuf};
use xfpx_amd_emu::{replay, ReplayOptions};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn write_launch(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

fn one_line_error(path: &Path, want: &str) {
    let opts = ReplayOptions { target: Some("gfx942".into()), ..Default::default() };
    let e = replay(path, &opts).expect_err("must fail").to_string();
    assert!(!e.contains('\n'), "multi-line error: {e}");
    assert!(e.contains(want), "{e:?} does not say {want:?}");
}

#[test]
fn malformed_missing_kernel_and_mismatched_arguments() {
    let dir = std::env::temp_dir().join(format!("xfpx-emu-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let co = fixtures().join("gfx942/elem_f32.co");
    let co = co.to_string_lossy();
    one_line_error(&write_launch(&dir, "bad.json", "{ \"kernel\": "), "malformed launch file");
    one_line_error(&dir.join("absent.json"), "cannot read launch file");
    let missing =
        format!(r#"{{"code_object": "{co}", "kernel": "no_such_kernel", "grid": [1], "block": [64], "args": []}}"#);
    one_line_error(&write_launch(&dir, "missing.json", &missing), "kernel \"no_such_kernel\" not found");
    let count = format!(
        r#"{{"code_object": "{co}", "kernel": "saxpy", "grid": [1], "block": [64],
            "buffers": {{"o": {{"elem": "f32", "count": 64}}}},
            "args": [{{"buffer": "o"}}, {{"buffer": "o"}}], "outputs": ["o"]}}"#
    );
    one_line_error(&write_launch(&dir, "count.json", &count), "argument mismatch");
    // A launch whose kernel exists only on other targets.
    let opts = ReplayOptions { target: Some("gfx908".into()), ..Default::default() };
    let e = replay(&fixtures().join("launches/mfma_f64_16x16x4.json"), &opts)
        .expect_err("no f64 MFMA on gfx908")
        .to_string();
    assert!(!e.contains('\n') && e.contains("only, not gfx908"), "{e}");
    let kind = format!(
        r#"{{"code_object": "{co}", "kernel": "saxpy", "grid": [1], "block": [64],
            "buffers": {{"o": {{"elem": "f32", "count": 64}}}},
            "args": [{{"buffer": "o"}}, {{"buffer": "o"}}, {{"buffer": "o"}}, {{"f64": 2.0}}, {{"u32": 64}}]}}"#
    );
    one_line_error(&write_launch(&dir, "kind.json", &kind), "argument mismatch: args[3] is f64 (8 bytes)");
    let scalar_for_buffer = format!(
        r#"{{"code_object": "{co}", "kernel": "saxpy", "grid": [1], "block": [64],
            "args": [{{"u64": 0}}, {{"u64": 0}}, {{"u64": 0}}, {{"f32": 2.0}}, {{"u32": 64}}]}}"#
    );
    one_line_error(&write_launch(&dir, "sfb.json", &scalar_for_buffer), "argument mismatch: args[0]");
    let not_elf = write_launch(&dir, "junk.co", "not an elf");
    let junk = format!(
        r#"{{"code_object": "{}", "kernel": "k", "grid": [1], "block": [1], "args": []}}"#,
        not_elf.to_string_lossy()
    );
    one_line_error(&write_launch(&dir, "junk.json", &junk), "unrecognized input: not an ELF");
    // A kernel reading outside its buffers faults cleanly (n larger than the buffers).
    let oob = format!(
        r#"{{"code_object": "{co}", "kernel": "saxpy", "grid": [1], "block": [64],
            "buffers": {{"o": {{"elem": "f32", "count": 4}}}},
            "args": [{{"buffer": "o"}}, {{"buffer": "o"}}, {{"buffer": "o"}}, {{"f32": 2.0}}, {{"u32": 64}}]}}"#
    );
    one_line_error(&write_launch(&dir, "oob.json", &oob), "memory fault");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn replay_writes_outputs_and_a_report() {
    let dir = std::env::temp_dir().join(format!("xfpx-emu-out-{}", std::process::id()));
    let opts = ReplayOptions { target: Some("gfx90a".into()), out_dir: Some(dir.clone()), ..Default::default() };
    let out = replay(&fixtures().join("launches/exc_nan.json"), &opts).expect("replays");
    let written = std::fs::read(dir.join("out.bin")).expect("output written");
    assert_eq!(written, out.output("out").expect("out"));
    let r = &out.report;
    assert_eq!(r.run.vendor, "amd-emulated");
    assert_eq!(r.run.target.as_deref(), Some("gfx90a"));
    // exc_nan multiplies 0 * inf and inf * -0: one NaN-producing instruction.
    let recs: Vec<_> = r.records().collect();
    assert!(
        recs.iter().any(|(k, rec)| *k == "exc_nan"
            && rec.kind == xfpx_common::fp::ExceptionKind::Nan
            && rec.site.instr.starts_with("v_mul_f32")),
        "{recs:?}"
    );
    let json = r.to_json();
    assert!(json.contains("xfpx-report/1"));
    std::fs::remove_dir_all(&dir).ok();
}
