//! TRAPSTS after each exception fixture matches the IEEE events its inputs
//! cause. The expected bits come from the host build: the same operations
//! run on the host with its floating-point environment read back (fenv),
//! mapped to TRAPSTS bit positions (invalid 0, div0 2, overflow 3,
//! underflow 4, inexact 5). Input-denormal (bit 1) has no host counterpart.

use std::path::{Path, PathBuf};
use xfpx_amd_emu::{replay, ReplayOptions};
use xfpx_common::fp::ExceptionKind;

const HOST_VISIBLE: u32 = 0x3D;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

#[test]
fn trapsts_matches_host_ieee_flags() {
    let cases = [
        ("exc_nan", Some(ExceptionKind::Nan)),
        ("exc_overflow", Some(ExceptionKind::Inf)),
        ("exc_subnormal", Some(ExceptionKind::Sub)),
        ("exc_div0", Some(ExceptionKind::Div0)),
        ("exc_none", None),
        // Fused multiply-adds of an MFMA raise flags like other VALU operations.
        ("mfma_trapsts", Some(ExceptionKind::Nan)),
    ];
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        for (name, kind) in cases {
            let launch = fixtures().join(format!("launches/{name}.json"));
            let out =
                replay(&launch, &ReplayOptions { target: Some(target.into()), ..Default::default() }).expect("replays");
            let host =
                std::fs::read(fixtures().join(format!("data/{name}.flags.expected.bin"))).expect("expected flags");
            let host = u32::from_le_bytes([host[0], host[1], host[2], host[3]]);
            assert_eq!(
                out.stats.trapsts & HOST_VISIBLE,
                host,
                "{target} {name}: TRAPSTS {:#x}, host flags {host:#x}",
                out.stats.trapsts
            );
            // What the kernel itself read with s_getreg agrees.
            let own = out.output("flags").expect("flags");
            assert_eq!(u32::from_le_bytes([own[0], own[1], own[2], own[3]]) & HOST_VISIBLE, host);
            let kinds: Vec<ExceptionKind> =
                out.report.records().filter(|(k, _)| *k == name).map(|(_, r)| r.kind).collect();
            match kind {
                Some(k) => assert!(kinds.contains(&k), "{target} {name}: {kinds:?}"),
                None => assert!(kinds.is_empty(), "{target} {name}: {kinds:?}"),
            }
        }
        // Without clearing DX10_CLAMP nothing is recorded: saxpy's inputs are
        // ordinary, but check the rule on a kernel that leaves MODE alone.
        let out = replay(
            &fixtures().join("launches/f32_div.json"),
            &ReplayOptions { target: Some(target.into()), ..Default::default() },
        )
        .expect("replays");
        assert_eq!(out.stats.trapsts, 0, "{target}: DX10_CLAMP set, yet TRAPSTS {:#x}", out.stats.trapsts);
    }
}
