//! `xfpx replay --tool inject` on the AMD fault-injection micro-kernels
//! (`backend-amd/tests/inject/micro.s`, and `index.s`, which reads each
//! index in an instruction that neither copies nor masks it): the fault
//! comes from the command line's flags, the inject tool plans it over the
//! AMD kernel view, the rewriter lowers it and the emulator runs it
//! (workgroup `i` on compute unit `i`, wave `w` on SIMD `w mod 4`). The
//! output buffer equals the faulty output computed here by hand from the
//! golden one, bit for bit, and the report's activations are exact, on
//! gfx90a and gfx942 (and gfx908, whose work-item indices arrive in v0, v1
//! and v2 rather than packed in v0, for `index`).

use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_tests::xfpx_binary;

const K: u32 = 1000;
const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];
const INDEX_TARGETS: [&str; 3] = ["gfx908", "gfx90a", "gfx942"];
/// Work-items 64-67 of workgroup 1: lanes 0-3 of its second wave.
const HIT: std::ops::RangeInclusive<usize> = 192..=195;
const AT: [&str; 6] = ["--sm", "1", "--subpartition", "1", "--lanes", "0-3"];

fn inject_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/tests/inject")
}

/// The fault-free output (see `micro.s`): out[g] = ((g + k) ^ 0x55) | (t < 8) << 16.
fn golden() -> Vec<u32> {
    (0..384u32).map(|g| ((g + K) ^ 0x55) | u32::from(g % 128 < 8) << 16).collect()
}

/// The fault-free output of `index.s`: workgroup W = bx + 3 by of the 3 x 2
/// grid, work-item L = tx + 64 ty of its 64 x 2 block:
/// out[128 W + L] = 0x01000000 | by << 16 | bx << 12 | L.
fn index_golden() -> Vec<u32> {
    (0..768u32).map(|g| index_value(g / 128, g % 128)).collect()
}

fn index_value(w: u32, l: u32) -> u32 {
    0x0100_0000 | (w / 3) << 16 | (w % 3) << 12 | l
}

struct Replayed {
    code: Option<i32>,
    stderr: String,
    stdout: String,
    out: Option<Vec<u32>>,
    activations: Option<u64>,
}

/// A fault on the micro-kernel, at lanes 0-3 of workgroup 1's second wave.
fn replay(target: &str, fault: &[&str]) -> Replayed {
    replay_launch("micro.json", target, &[fault, &AT[..]].concat())
}

/// `xfpx replay --tool inject` of a launch in the inject directory, with
/// the fault's and the location's flags in `args`.
fn replay_launch(launch: &str, target: &str, args: &[&str]) -> Replayed {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = Command::new(xfpx_binary())
        .current_dir(dir.path())
        .args(["replay", "--target", target, "--tool", "inject"])
        .args(args)
        .args(["--out", "out", "--report", "r.json"])
        .arg(inject_dir().join(launch))
        .output()
        .expect("xfpx runs");
    let out = std::fs::read(dir.path().join("out/out.bin"))
        .ok()
        .map(|b| b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
    let report: Option<serde_json::Value> =
        std::fs::read(dir.path().join("r.json")).ok().map(|b| serde_json::from_slice(&b).expect("json"));
    Replayed {
        code: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        out,
        activations: report.as_ref().and_then(|r| r["injection"]["activations"].as_u64()),
    }
}

/// The replay succeeded with the predicted output and activations.
fn expect(r: &Replayed, what: &str, want: &[u32], activations: u64) {
    assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
    assert_eq!(r.activations, Some(activations), "{what}: activations");
    assert!(!r.stdout.contains("memory hazards"), "{what}: {}", r.stdout);
    let out = r.out.as_ref().expect("output written");
    assert_eq!(out.len(), want.len(), "{what}");
    for (i, (a, b)) in out.iter().zip(want).enumerate() {
        assert_eq!(a, b, "{what}: out[{i}] is {a:#x}, predicted {b:#x}");
    }
}

/// A fault on `index.s`, on every target: the predicted output and activations.
fn check_index(args: &[&str], want: &[u32], activations: u64) {
    for t in INDEX_TARGETS {
        expect(&replay_launch("index.json", t, args), &format!("{t} {args:?}"), want, activations);
    }
}

fn check(fault: &[&str], want: &[u32], activations: u64) {
    for t in TARGETS {
        expect(&replay(t, fault), &format!("{t} {fault:?}"), want, activations);
    }
}

#[test]
fn iat_xors_the_work_item_index_where_the_kernel_reads_it() {
    // v0 ^= 1 for lanes 0-3 before v_and_b32 v1, 0x3ff, v0 (its first read),
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
    // the micro-kernel's descriptor enables no workgroup index in y
    for t in TARGETS {
        let r = replay(t, &["--model", "IAC", "--dim", "y", "--mask", "1"]);
        assert_eq!(r.code, Some(0), "{t}: {}", r.stderr);
        assert_eq!(r.activations, Some(0));
        assert_eq!(r.out.expect("output"), golden());
        assert!(r.stdout.contains("never fired"), "{}", r.stdout);
        assert!(r.stdout.contains("touches no instruction"), "{}", r.stdout);
    }
}

#[test]
fn iac_xors_the_workgroup_index_where_the_kernel_reads_it() {
    // s2 (workgroup x) ^= 1 before s_mov_b32 s7, s2 in the selected wave,
    // the second of workgroup 1: it computes workgroup 0's second half
    // (the same values, stored there) and its own stays unwritten. The
    // SGPR is the whole wave's; the count is its 4 selected lanes.
    let mut want = golden();
    want[192..256].fill(0);
    check(&["--model", "IAC", "--dim", "x", "--mask", "1"], &want, 4);
}

#[test]
fn iat_xors_the_index_itself_where_its_first_read_is_a_shift() {
    // Lanes 0-2 of workgroup 4's second wave (ty = 1) read tx ^ 1: lane 2
    // does lane 3's work, so slot 128 * 4 + 64 + 2 is never written. (The
    // first read of v0 on gfx90a+ is v_lshrrev_b32 v2, 10, v0, the y
    // index: XORing its result would move the lanes to the other wave.)
    let mut want = index_golden();
    want[128 * 4 + 64 + 2] = 0;
    check_index(
        &["--model", "IAT", "--dim", "x", "--mask", "1", "--sm", "4", "--subpartition", "1", "--lanes", "0-2"],
        &want,
        3,
    );
    // y: lanes 0-2 of workgroup 2's first wave read ty = 1 and redo the
    // second wave's lanes 0-2 (packed: bit 10 of v0; gfx908: v1)
    let mut want = index_golden();
    want[256..259].fill(0);
    check_index(
        &["--model", "IAT", "--dim", "y", "--mask", "1", "--sm", "2", "--subpartition", "0", "--lanes", "0-2"],
        &want,
        3,
    );
}

#[test]
fn iaw_moves_a_whole_wave_to_another_ones_indices() {
    // tx ^ 64 in the first wave of workgroup 3: it redoes the second wave's work
    let mut want = index_golden();
    want[384..448].fill(0);
    check_index(
        &["--model", "IAW", "--dim", "x", "--mask", "64", "--sm", "3", "--subpartition", "0", "--warps", "0"],
        &want,
        64,
    );
}

#[test]
fn iac_xors_the_workgroup_index_where_its_first_read_is_arithmetic() {
    // workgroup 1 (bx = 1) reads bx = 0 in both waves: it redoes workgroup 0
    // (the same values) and its own slots stay unwritten; 4 lanes per wave
    let mut want = index_golden();
    want[128..256].fill(0);
    check_index(&["--model", "IAC", "--dim", "x", "--mask", "1", "--sm", "1", "--lanes", "0-3"], &want, 8);
    // one wave of it only
    let mut want = index_golden();
    want[192..256].fill(0);
    check_index(
        &["--model", "IAC", "--dim", "x", "--mask", "1", "--sm", "1", "--subpartition", "1", "--lanes", "0-3"],
        &want,
        4,
    );
    // y, first read by s_mul_i32 s7, s3, 3: workgroup 4 (1, 1) reads by = 0 and redoes workgroup 1
    let mut want = index_golden();
    want[512..640].fill(0);
    check_index(&["--model", "IAC", "--dim", "y", "--mask", "1", "--sm", "4", "--lanes", "0-3"], &want, 8);
}

#[test]
fn an_index_fault_where_nothing_runs_or_nothing_reads_never_fires() {
    // six workgroups run on compute units 0-5; no workgroup index in z
    for args in [["--dim", "x", "--sm", "7"], ["--dim", "z", "--sm", "1"]] {
        for t in INDEX_TARGETS {
            let r = replay_launch("index.json", t, &[&["--model", "IAC", "--mask", "1"][..], &args[..]].concat());
            expect(&r, &format!("{t} {args:?}"), &index_golden(), 0);
            assert!(r.stdout.contains("never fired"), "{}", r.stdout);
            if args[1] == "z" {
                assert!(r.stdout.contains("it has no reads of the block index (z)"), "{}", r.stdout);
            }
        }
    }
}

#[test]
fn a_mask_outside_a_packed_work_item_index_is_refused() {
    for t in ["gfx90a", "gfx942"] {
        let r = replay_launch(
            "index.json",
            t,
            &["--model", "IAT", "--dim", "x", "--mask", "0x400", "--sm", "0", "--lanes", "0"],
        );
        assert_ne!(r.code, Some(0), "{t}");
        let errors: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{}", r.stderr);
        assert!(errors[0].contains("bits 9:0 of v0") && errors[0].contains("0x400"), "{}", errors[0]);
        assert!(!errors[0].contains("cannot read"), "{}", errors[0]);
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
