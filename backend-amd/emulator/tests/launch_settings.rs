//! The launch settings of format 3: the stack of a kernel with a dynamic
//! stack (`stack_bytes`), the guard zone around buffers (`guard_bytes`),
//! and by-value aggregate arguments; each needs `"format": 3`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use xfpx_amd_emu::{replay, ReplayOptions};

fn launches() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches")
}

/// A fixture launch with its relative paths made absolute, edited by `edit`,
/// written to a file of its own in `dir`.
fn edited(dir: &Path, fixture: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(launches().join(format!("{fixture}.json"))).expect("launch");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    let abs = |p: &str| launches().join(p).to_string_lossy().into_owned();
    if let Some(co) = v["code_object"].as_str().map(abs) {
        v["code_object"] = json!(co);
    }
    if let Some(bufs) = v["buffers"].as_object_mut() {
        for b in bufs.values_mut() {
            if let Some(f) = b["init"]["file"].as_str().map(abs) {
                b["init"]["file"] = json!(f);
            }
        }
    }
    edit(&mut v);
    let path = dir.join(format!("{fixture}-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("json")).expect("write");
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xfpx-launch-settings-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    dir
}

fn run(path: &Path, target: &str) -> Result<xfpx_amd_emu::ReplayOutcome, String> {
    replay(path, &ReplayOptions { target: Some(target.into()), ..Default::default() }).map_err(|e| e.to_string())
}

/// The recursive kernel runs in the runtime's default stack (the fixture
/// suite checks its values); a stack smaller than its recursion needs is a
/// one-line fault, and `stack_bytes` needs format 3.
#[test]
fn a_dynamic_stack_gets_the_runtime_stack() {
    let dir = temp_dir("stack");
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let default = edited(&dir, "stack_recursive", |_| {});
        run(&default, target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let small = edited(&dir, "stack_recursive", |v| {
            v["format"] = json!(3);
            v["stack_bytes"] = json!(64);
        });
        let e = run(&small, target).expect_err("a 64-byte stack is too small");
        assert!(e.contains("private (scratch) access") && !e.contains('\n'), "{target}: {e}");
        let big = edited(&dir, "stack_recursive", |v| {
            v["format"] = json!(3);
            v["stack_bytes"] = json!(4096);
        });
        run(&big, target).unwrap_or_else(|e| panic!("{target}: {e}"));
    }
    let old = edited(&dir, "stack_recursive", |v| v["stack_bytes"] = json!(4096));
    let e = run(&old, "gfx942").expect_err("format 1");
    assert!(e.contains("\"stack_bytes\" needs \"format\": 3"), "{e}");
    let huge = edited(&dir, "stack_recursive", |v| {
        v["format"] = json!(3);
        v["stack_bytes"] = json!(1u64 << 40);
    });
    assert!(run(&huge, "gfx942").expect_err("too big").contains("\"stack_bytes\" must be at most"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// saxpy over 1000 elements with `x` four elements short: the last four
/// work-items read past `x`. Without a guard zone that is a fault; with
/// one (the launch's `guard_bytes`, or the replay's option) they read zeros.
#[test]
fn reads_past_a_buffer_fault_or_read_zeros_from_the_guard_zone() {
    let dir = temp_dir("guard");
    let short = |v: &mut Value| {
        v["buffers"]["x"] = json!({"elem": "f32", "count": 996, "init": {"range": {"start": 1, "step": 1}}});
        v["buffers"]["y"] = json!({"elem": "f32", "count": 1000, "init": {"range": {"start": 0.5, "step": 1}}});
        v["args"][3] = json!({"f32": 2.0});
    };
    let plain = edited(&dir, "saxpy", short);
    let e = run(&plain, "gfx942").expect_err("reads past x");
    assert!(e.contains("memory fault") && !e.contains('\n'), "{e}");
    let want: Vec<f32> =
        (0..1000).map(|i| if i < 996 { 2.0 * (1.0 + i as f32) } else { 0.0 } + (0.5 + i as f32)).collect();
    let check = |o: &xfpx_amd_emu::ReplayOutcome| {
        let got: Vec<f32> =
            o.outputs[0].bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().expect("f32"))).collect();
        assert_eq!(got, want);
        assert_eq!(o.stats.guarded_loads, 4);
        let notes = &o.report.run.notes;
        assert!(notes.iter().any(|n| n.contains("guard zone of 16 bytes around buffers: 4 lane loads")), "{notes:?}");
    };
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let guarded = edited(&dir, "saxpy", |v| {
            short(v);
            v["format"] = json!(3);
            v["guard_bytes"] = json!(16);
        });
        check(&run(&guarded, target).unwrap_or_else(|e| panic!("{target}: {e}")));
        // The replay's option on a format 1 file.
        let opts = ReplayOptions { target: Some(target.into()), guard_bytes: 16, ..Default::default() };
        check(&replay(&plain, &opts).unwrap_or_else(|e| panic!("{target}: {e}")));
    }
    // A guard zone too small for the last read still faults.
    let opts = ReplayOptions { target: Some("gfx942".into()), guard_bytes: 12, ..Default::default() };
    assert!(replay(&plain, &opts).expect_err("x[999] lies 12 to 16 bytes past").to_string().contains("memory fault"));
    let old = edited(&dir, "saxpy", |v| v["guard_bytes"] = json!(16));
    assert!(run(&old, "gfx942").expect_err("format 1").contains("\"guard_bytes\" needs \"format\": 3"));
    let _ = std::fs::remove_dir_all(&dir);
}
