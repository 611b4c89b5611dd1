//! Coverage in the rewrite's outcome, its record and replay's report: a
//! kernel some of whose sites were refused reads `partial`, with its FP
//! sites, the sites checked and those refused by reason; a kernel with no
//! floating-point instruction runs as it is, fully covered, instead of
//! being refused with "nothing to instrument".

use std::path::{Path, PathBuf};

use xfpx_amd::replay::{replay_rewritten, replay_saved};
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, RewriteRecord, TableAddress};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::ReplayOptions;
use xfpx_common::report::KernelStatus;

fn launch_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/launches").join(format!("{name}.json"))
}

fn options(target: &str, code_object: Option<PathBuf>) -> ReplayOptions {
    ReplayOptions { target: Some(target.into()), code_object, ..Default::default() }
}

/// Far placement (appended code 4 MiB away, beyond `s_branch` reach) of a
/// whole object: every site gets a way in (padding islands, or long jumps
/// in place of straight-line windows) but one: `call_shared_b`'s own only
/// site on gfx908 follows a call's return and ends the code, where neither
/// padding nor a window is left. That kernel (instrumented for the device
/// function it calls) reads `partial`, its coverage says the site was
/// refused and why, and the record and replay's report carry both; the
/// other kernels here are whole. (A kernel left with no instrumented code
/// reads `skipped` the same way.)
#[test]
fn refused_sites_show_in_outcome_record_and_report() {
    let mut refused = Vec::new();
    for target in ["gfx908", "gfx90a", "gfx942"] {
        for name in ["exc_nan", "exc_div0", "f32_div", "daxpy", "f64_divsqrt", "uniform_loop", "call_shared_b"] {
            if refused_when_far(target, name) {
                refused.push(format!("{target}/{name}"));
            }
        }
    }
    assert_eq!(refused, ["gfx908/call_shared_b"], "the test needs exactly the kernel left without a way in");
}

/// Checks the launch `name` rewritten far away with every kernel of its
/// object (which take the padding islands need); whether sites were refused.
fn refused_when_far(target: &str, name: &str) -> bool {
    let path = launch_path(name);
    let launch = Launch::load(&path).expect("launch");
    let original = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))).expect("co");
    let opts = RewriteOptions {
        mode: Mode::Detect,
        min_distance: Some(4 << 20),
        table: TableAddress::Patchable,
        ..Default::default()
    };
    let out = rewrite::rewrite(&original, &opts).expect("rewrites");
    let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel");
    let c = k.coverage.as_ref().expect("coverage");
    if k.refused_sites.is_empty() {
        assert_eq!((&k.state, c.refused.len(), c.checked), (&KernelState::Instrumented, 0, c.fp_sites));
        return false;
    }
    assert!(c.refused.iter().all(|r| r.reason.contains("out of reach")), "{c:?}");
    assert!(c.checked + c.refused_sites() <= c.fp_sites, "{c:?}");
    let (status, words) = match &k.state {
        KernelState::Partial => {
            assert_eq!(c.refused_sites(), k.refused_sites.len() as u64);
            (KernelStatus::Partial, "partial".to_string())
        }
        KernelState::Skipped { reason } => {
            assert!(reason.starts_with("no site could be instrumented"), "{reason}");
            (KernelStatus::Skipped { reason: reason.clone() }, format!("skipped: {reason}"))
        }
        other => panic!("{other:?}"),
    };
    let state = k.state.clone();
    let listing = out.to_text();
    assert!(listing.contains(&format!("kernel {}: {words}", launch.kernel)), "{listing}");
    assert!(listing.contains(&format!("coverage: {} of {} FP sites checked; ", c.checked, c.fp_sites)), "{listing}");

    let record = RewriteRecord::read(&out.bytes).expect("reads").expect("a record");
    let recorded = record.kernels.iter().find(|r| r.name == launch.kernel).expect("recorded");
    assert_eq!((&recorded.state, recorded.coverage.as_ref()), (&state, Some(c)));

    let dir = tempfile::tempdir().expect("tempdir");
    let saved = dir.path().join("rewritten.co");
    std::fs::write(&saved, &out.bytes).expect("write");
    let replayed = replay_saved(&path, &options(target, Some(saved))).expect("replays").expect("instrumented");
    let kr = replayed.report.kernels.iter().find(|r| r.name == launch.kernel).expect("kernel report");
    assert_eq!(kr.status, status);
    assert_eq!(kr.coverage.as_ref(), Some(c));
    assert_eq!(replayed.report.coverage_lost().count(), 1);
    true
}

/// A fully instrumented kernel: every planned site checked, none refused.
#[test]
fn a_fully_instrumented_kernel_reports_every_site_checked() {
    let replayed = replay_rewritten(&launch_path("exc_nan"), Mode::Detect, &options("gfx942", None)).expect("replays");
    let k = &replayed.report.kernels[0];
    assert_eq!(k.status, KernelStatus::Instrumented);
    let c = k.coverage.as_ref().expect("coverage");
    assert!(c.checked > 0 && c.refused.is_empty(), "{c:?}");
    assert_eq!(replayed.report.coverage_lost().count(), 0);
    // Screening checks every site through the bits read at the wave's end.
    let screened = replay_rewritten(&launch_path("exc_nan"), Mode::Screen, &options("gfx942", None)).expect("replays");
    let s = screened.report.kernels[0].coverage.as_ref().expect("coverage");
    assert_eq!((s.checked, s.fp_sites), (s.fp_sites, c.fp_sites));
}

/// `replay --mode detect` of a kernel with no floating-point instruction
/// runs it (zero sites, fully covered) instead of refusing it.
#[test]
fn a_kernel_without_fp_instructions_runs_under_detect() {
    for name in ["atomics_mix", "collatz"] {
        let path = launch_path(name);
        let plain = xfpx_amd_emu::replay::replay(&path, &options("gfx942", None)).expect("plain replay");
        let replayed =
            replay_rewritten(&path, Mode::Detect, &options("gfx942", None)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let k = &replayed.report.kernels[0];
        assert_eq!((k.status.clone(), k.probes, k.instrumented_launches), (KernelStatus::Instrumented, 0, 1));
        assert_eq!(k.coverage.as_ref().map(|c| (c.fp_sites, c.checked)), Some((0, 0)), "{name}");
        let plain_outputs: Vec<(String, Vec<u8>)> = plain.outputs.into_iter().map(|o| (o.name, o.bytes)).collect();
        let outputs: Vec<(String, Vec<u8>)> = replayed.outputs.into_iter().map(|o| (o.name, o.bytes)).collect();
        assert_eq!(outputs, plain_outputs, "{name}");
    }
}
