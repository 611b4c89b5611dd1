//! Reach independent of object size: `reach.co` (12 kernels, 1920 to 2688
//! floating-point sites) instrumented whole needs far more appended code
//! than `s_branch` reaches (±128 KiB). Every site gets its trampoline —
//! directly, through relays or islands, or through a long jump in place of
//! a window of straight-line code — and the dump says which way each site
//! takes. Three of its kernels (the first in the code, the farthest from
//! the appended code; one in the middle; the last) run from the object
//! rewritten whole: outputs bit-identical to the original's, no hazard,
//! and the records exactly the (site, kind, format) set the emulator
//! observes in the original run (planted NaN, infinity, overflow,
//! subnormal); screened, the TRAPSTS bits the emulator saw.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use xfpx_amd::descriptor::{raw, DescriptorWord};
use xfpx_amd::replay::replay_saved;
use xfpx_amd::rewrite::{self, reach::Reach, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::ReplayOptions;
use xfpx_common::{ExceptionKind, FpFormat};

const TARGETS: [&str; 4] = ["gfx908", "gfx90a", "gfx942", "gfx950"];
const LAUNCHES: [&str; 3] = ["reach_10", "reach_22", "reach_33"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures")
}

/// (offset, kind, format) of a report's records.
fn records(report: &xfpx_common::report::Report) -> BTreeSet<(u64, ExceptionKind, FpFormat)> {
    report.records().map(|(_, r)| (r.site.offset, r.kind, r.format)).collect()
}

#[test]
fn every_site_of_an_object_beyond_s_branch_reach_is_checked_and_runs_as_the_original() {
    let mut far = 0usize;
    for target in TARGETS {
        let original = std::fs::read(fixtures().join(target).join("reach.co")).expect("reach.co");
        for mode in [Mode::Detect, Mode::Screen] {
            let opts = RewriteOptions { mode, table: TableAddress::Patchable, ..Default::default() };
            let out = rewrite::rewrite(&original, &opts).expect("rewrites");
            let (mut fp_sites, mut checked) = (0, 0);
            for k in &out.kernels {
                let c = k.coverage.as_ref().expect("coverage");
                assert_eq!(
                    (&k.state, c.checked),
                    (&KernelState::Instrumented, c.fp_sites),
                    "{target} {mode:?} {}",
                    k.name
                );
                fp_sites += c.fp_sites;
                checked += c.checked;
                for a in &k.anchors {
                    far += usize::from(a.reach.is_some_and(|r| r != Reach::Direct));
                }
            }
            println!("{target} {mode:?}: {checked} of {fp_sites} FP sites checked");
            let listing = out.to_text();
            if mode == Mode::Detect {
                assert!(out.appended_bytes > 4 * 128 * 1024, "{target}: only {} bytes appended", out.appended_bytes);
                assert!(listing.contains("(long jump in place of "), "{target}: no site took a long jump");
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let saved = dir.path().join("reach.co");
            std::fs::write(&saved, &out.bytes).expect("write");
            for kernel in LAUNCHES {
                let name = format!("{target} {mode:?} {kernel}");
                let (launch, opts, plain, rw) = runs_as_the_original(target, kernel, &saved, &name);
                match mode {
                    Mode::Detect => {
                        let observed = records(&plain.report);
                        assert!(observed.len() > 50, "{name}: the planted values raise too little: {observed:?}");
                        assert_eq!(records(&rw.report), observed, "{name}");
                    }
                    _ => screened_as_the_original_raises(&original, &launch, &opts, &rw, kernel, &name),
                }
            }
        }
    }
    assert!(far > 1000, "only {far} anchors took a far way");
}

/// A wave end beyond reach with no padding near it and no straight-line
/// window of its own: `far_ends.co`'s first kernel ends at an `s_endpgm`
/// its bounds check branches to, followed by some 190 KiB of device
/// functions. It is screened all the same (an island in the room a long
/// jump frees before it), and runs as the original.
#[test]
fn a_far_wave_end_with_no_padding_near_it_is_screened_and_runs_as_the_original() {
    for target in TARGETS {
        let original = std::fs::read(fixtures().join(target).join("far_ends.co")).expect("far_ends.co");
        let opts = RewriteOptions { mode: Mode::Screen, table: TableAddress::Patchable, ..Default::default() };
        let out = rewrite::rewrite(&original, &opts).expect("rewrites");
        for k in &out.kernels {
            assert_eq!(k.state, KernelState::Instrumented, "{target} {}", k.name);
        }
        let first = out.kernels.iter().find(|k| k.name == "far_first").expect("far_first");
        let reach: Vec<Reach> = first.anchors.iter().filter_map(|a| a.reach).collect();
        assert!(reach.iter().any(|r| matches!(r, Reach::LongJump { .. })), "{target}: {reach:?}");
        assert!(reach.iter().any(|r| matches!(r, Reach::Island { .. })), "{target}: {reach:?}");
        let dir = tempfile::tempdir().expect("tempdir");
        let saved = dir.path().join("far_ends.co");
        std::fs::write(&saved, &out.bytes).expect("write");
        let name = format!("{target} far_first");
        let (launch, opts, _, rw) = runs_as_the_original(target, "far_first", &saved, &name);
        screened_as_the_original_raises(&original, &launch, &opts, &rw, "far_first", &name);
    }
}

/// Runs the launch of `kernel` from the original fixture and from the
/// rewritten object `saved`: no hazard, outputs bit-identical. Returns the
/// launch, the rewritten run's options and both runs.
fn runs_as_the_original(
    target: &str,
    kernel: &str,
    saved: &Path,
    name: &str,
) -> (PathBuf, ReplayOptions, xfpx_amd_emu::ReplayOutcome, xfpx_amd::replay::RewrittenReplay) {
    let launch = fixtures().join("launches").join(format!("{kernel}.json"));
    let plain_opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    let plain = xfpx_amd_emu::replay(&launch, &plain_opts).expect("the original runs");
    let opts = ReplayOptions { code_object: Some(saved.to_path_buf()), ..plain_opts };
    let rw = replay_saved(&launch, &opts).expect("replays").expect("rewritten");
    assert_eq!(rw.hazards, 0, "{name}");
    assert_eq!(
        rw.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>(),
        plain.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>(),
        "{name}: outputs differ"
    );
    (launch, opts, plain, rw)
}

/// The screened bits (a note of the rewritten run's report) are the wave's
/// TRAPSTS bits, as the original records them with DX10_CLAMP cleared, and
/// the planted values raise at least a NaN.
fn screened_as_the_original_raises(
    original: &[u8],
    launch: &Path,
    opts: &ReplayOptions,
    rw: &xfpx_amd::replay::RewrittenReplay,
    kernel: &str,
    name: &str,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let unclamped = dir.path().join("unclamped.co");
    std::fs::write(&unclamped, without_dx10_clamp(original)).expect("write");
    let opts = ReplayOptions { code_object: Some(unclamped), ..opts.clone() };
    let bits = xfpx_amd_emu::replay(launch, &opts).expect("runs").stats.trapsts & 0x1ff;
    assert_ne!(bits, 0, "{name}");
    let note = format!("{kernel}: waves ended with exception bits ");
    let screened = rw.report.run.notes.iter().find(|n| n.starts_with(&note)).expect("screened");
    assert!(screened.contains(&format!("({bits:#x})")), "{name}: {screened}");
    assert!(rw.screened_kinds.contains(&ExceptionKind::Nan), "{name}: {screened}");
}

/// `bytes` with DX10_CLAMP cleared in every kernel descriptor (what screen
/// mode does), so that the wave's TRAPSTS records exceptions.
fn without_dx10_clamp(bytes: &[u8]) -> Vec<u8> {
    let co = xfpx_amd::CodeObject::parse(bytes).expect("parses");
    let mut out = bytes.to_vec();
    for k in &co.kernels {
        let rodata = co.elf.section_at_addr(k.descriptor_address).expect("section");
        let at = (rodata.offset + (k.descriptor_address - rodata.addr)) as usize;
        let mut kd = xfpx_amd::KernelDescriptor::parse(&out[at..at + 64]).expect("kd");
        kd.set_field(DescriptorWord::ComputePgmRsrc1, raw::rsrc1::ENABLE_DX10_CLAMP, 0).expect("set");
        out[at..at + 64].copy_from_slice(&kd.to_bytes());
    }
    out
}
