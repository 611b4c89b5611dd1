//! `xfpx replay --tool inject` on the AMD fault-injection micro-kernel
//! (`backend-amd/tests/inject/micro.s`): the fault comes from the command
//! line's flags, the inject tool plans it over the AMD kernel view, the
//! rewriter lowers it and the emulator runs it (workgroup `i` on compute
//! unit `i`, wave `w` on SIMD `w mod 4`). The output buffer equals the
//! faulty output computed here by hand, bit for bit, and the report's
//! activations are exact, on gfx90a and gfx942.

use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_tests::xfpx_binary;

const K: u32 = 1000;
const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];
/// Work-items 64-67 of workgroup 1: lanes 0-3 of its second wave.
const HIT: std::ops::RangeInclusive<usize> = 192..=195;
const AT: [&str; 6] = ["--sm", "1", "--subpartition", "1", "--lanes", "0-3"];

fn launch() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/tests/inject/micro.json")
}

/// The fault-free output (see `micro.s`): out[g] = ((g + k) ^ 0x55) | (t < 8) << 16.
fn golden() -> Vec<u32> {
    (0..384u32).map(|g| ((g + K) ^ 0x55) | u32::from(g % 128 < 8) << 16).collect()
}

struct Replayed {
    code: Option<i32>,
    stderr: String,
    stdout: String,
    out: Option<Vec<u32>>,
    activations: Option<u64>,
}

fn replay(target: &str, fault: &[&str]) -> Replayed {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = Command::new(xfpx_binary())
        .current_dir(dir.path())
        .args(["replay", "--target", target, "--tool", "inject"])
        .args(fault)
        .args(AT)
        .args(["--out", "out", "--report", "r.json"])
        .arg(launch())
        .output()
        .expect("xfpx runs");
    let out = std::fs::read(dir.path().join("out/out.bin"))
        .ok()
        .map(|b| b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).expect("report written")).expect("json");
    Replayed {
        code: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        out,
        activations: report["injection"]["activations"].as_u64(),
    }
}

fn check(fault: &[&str], want: &[u32], activations: u64) {
    for t in TARGETS {
        let r = replay(t, fault);
        assert_eq!(r.code, Some(0), "{t} {fault:?}: {}", r.stderr);
        assert_eq!(r.activations, Some(activations), "{t} {fault:?}");
        let out = r.out.expect("output written");
        for (i, (a, b)) in out.iter().zip(want).enumerate() {
            assert_eq!(a, b, "{t} {fault:?}: out[{i}] is {a:#x}, predicted {b:#x}");
        }
    }
}

#[test]
fn iat_xors_the_work_item_index_where_the_kernel_reads_it() {
    // v_and_b32 v1, 0x3ff, v0 is the read of the x index: v1 ^= 1 for lanes 0-3,
    // so work-item t computes for t ^ 1 and stores at out[128 + (t ^ 1)].
    let mut want = golden();
    for t in 64u32..68 {
        let g = 128 + (t ^ 1);
        want[g as usize] = ((g + K) ^ 0x55) | u32::from((t ^ 1) < 8) << 16;
    }
    check(&["--model", "IAT", "--dim", "x", "--mask", "1"], &want, 4);
}

#[test]
fn ims_corrupts_the_lds_read() {
    let mut want = golden();
    for g in HIT {
        want[g] ^= 1 << 31;
    }
    check(&["--model", "IMS", "--mask", "0x80000000"], &want, 4);
}

#[test]
fn imd_corrupts_the_data_of_the_shared_store() {
    let mut want = golden();
    for g in HIT {
        want[g] ^= 0x4000_0000;
    }
    check(&["--model", "IMD", "--store", "data", "--mask", "0x40000000"], &want, 4);
}

#[test]
fn a_fault_that_touches_nothing_never_fires() {
    // workgroup indices are not read by an instruction on AMD
    for t in TARGETS {
        let r = replay(t, &["--model", "IAC", "--dim", "x", "--mask", "1"]);
        assert_eq!(r.code, Some(0), "{t}: {}", r.stderr);
        assert_eq!(r.activations, Some(0));
        assert_eq!(r.out.expect("output"), golden());
        assert!(r.stdout.contains("never fired"), "{}", r.stdout);
        assert!(r.stdout.contains("touches no instruction"), "{}", r.stdout);
    }
}

#[test]
fn ivoc_traps_and_the_replay_fails_with_the_report_written() {
    for t in TARGETS {
        let r = replay(t, &["--model", "IVOC"]);
        assert_eq!(r.code, Some(1), "{t}: {}", r.stderr);
        let errors: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{}", r.stderr);
        assert!(errors[0].contains("s_trap"), "{}", errors[0]);
        // the first integer/fp instruction of the selected wave traps: 4 lanes counted
        assert_eq!(r.activations, Some(4), "{t}");
    }
}

#[test]
fn wv_inverts_the_lane_mask_of_the_compare() {
    // v_cmp_gt_u32_e64 s[10:11] is the kernel's one compare writing a lane
    // mask: lanes 0-3 (t = 64..68, t >= 8) read it as true, so bit 16 is set.
    let mut want = golden();
    for g in HIT {
        want[g] ^= 1 << 16;
    }
    check(&["--model", "WV", "--predicate", "0"], &want, 4);
}

#[test]
fn a_fault_refused_at_every_site_injects_nothing_and_says_why() {
    // matmul's only floating-point instruction writing a register is
    // v_fmac_f32, which has no other operation: IOC on the fp unit is
    // refused there, the kernel runs as it is and the fault never fires
    let launch = Path::new(env!("CARGO_MANIFEST_DIR")).join("apps/amd/launches/matmul.json");
    let o = Command::new(xfpx_binary())
        .args(["replay", "--target", "gfx90a", "--tool", "inject", "--model", "IOC", "--unit", "fp"])
        .args(["--sm", "0", "--no-report"])
        .arg(launch)
        .output()
        .expect("xfpx runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("was refused, nothing was injected"), "{stdout}");
    assert!(stdout.contains("never fired"), "{stdout}");
}
