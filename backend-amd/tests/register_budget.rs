//! Kernels at their register budget: detect mode, whose checks need
//! scratch registers, borrows them at each site from registers dead there
//! (the descriptor's counts untouched); screen mode, which reads the
//! exception flags where the wave ends and every register is free, screens
//! it within its own allocation. The emulator confirms that both compute
//! what the original computes, with no hazard, and that the records are
//! what the original raises. (The fixture kernels `budget_vgpr` and
//! `budget_sgpr`, compiled at the budget, run through every emulated test.)

#[allow(dead_code)]
mod exact_records;

use std::path::{Path, PathBuf};

use exact_records::{detect_run, observed, rewritten_records, run, screen_check, TARGETS};

use xfpx_amd::descriptor::{raw, DescriptorWord};
use xfpx_amd::replay::replay_rewritten;
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd::CodeObject;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::ReplayOptions;
use xfpx_common::config::KernelFilter;
use xfpx_common::report::KernelStatus;
use xfpx_common::ExceptionKind;

fn launch_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/launches").join(format!("{name}.json"))
}

/// `exceptions.co` for gfx90a with `kernel`'s descriptor asking for the
/// whole architected file (256 VGPRs, no AGPRs), and that descriptor.
fn at_vgpr_budget(kernel: &str) -> (Vec<u8>, usize, Vec<u8>) {
    at_vgpr_budget_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/gfx90a/exceptions.co"), kernel)
}

/// [`at_vgpr_budget`] for a kernel of the gfx90a object at `path`.
fn at_vgpr_budget_in(path: &Path, kernel: &str) -> (Vec<u8>, usize, Vec<u8>) {
    let mut bytes = std::fs::read(path).expect("object");
    let co = CodeObject::parse(&bytes).expect("parses");
    let k = co.kernel(kernel).expect("kernel");
    let rodata = co.elf.section_at_addr(k.descriptor_address).expect("section");
    let at = (rodata.offset + (k.descriptor_address - rodata.addr)) as usize;
    let mut kd = xfpx_amd::KernelDescriptor::parse(&bytes[at..at + 64]).expect("kd");
    kd.set_field(DescriptorWord::ComputePgmRsrc1, raw::rsrc1::GRANULATED_WORKITEM_VGPR_COUNT, 31).expect("set");
    kd.set_field(DescriptorWord::ComputePgmRsrc3, raw::rsrc3_gfx90a::ACCUM_OFFSET, 63).expect("set");
    bytes[at..at + 64].copy_from_slice(&kd.to_bytes());
    (bytes, at, kd.to_bytes().to_vec())
}

#[test]
fn a_kernel_at_its_vgpr_budget_is_checked_with_borrowed_registers_and_screened() {
    let (bytes, at, kd) = at_vgpr_budget("exc_nan");
    let opts = |mode| RewriteOptions { mode, table: TableAddress::Known(0x1000_0000), ..Default::default() };
    let state =
        |out: &rewrite::RewriteOutcome| out.kernels.iter().find(|k| k.name == "exc_nan").expect("kernel").clone();
    // Detect: every site checked, SGPRs grown, VGPRs borrowed at each site.
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    let k = state(&out);
    assert_eq!(k.state, KernelState::Instrumented);
    let c = k.coverage.as_ref().expect("coverage");
    assert_eq!((c.checked, c.refused.len()), (c.fp_sites, 0), "{c:?}");
    let r = k.registers.as_ref().expect("registers");
    assert_eq!((r.vgprs_before, r.vgprs_after, r.borrowed.vgprs, r.borrowed.sgprs), (256, 256, true, false));
    assert!(out.to_text().contains("VGPRs dead at each site"), "{}", out.to_text());
    // Screen: instrumented with scratch inside its own allocation; the
    // register counts stay, only DX10_CLAMP is cleared.
    let out = rewrite::rewrite(&bytes, &opts(Mode::Screen)).expect("rewrites");
    let k = state(&out);
    assert_eq!(k.state, KernelState::Instrumented);
    let r = k.registers.expect("registers");
    assert_eq!(
        (r.vgprs_before, r.vgprs_after, r.sgprs_before, r.sgprs_after),
        (256, 256, r.sgprs_before, r.sgprs_before)
    );
    assert_eq!((r.scratch_sgpr, r.scratch_vgpr), (0, 0));
    // DX10_CLAMP is bit 21 of compute_pgm_rsrc1.
    let diff: Vec<(&str, u64)> = k.descriptor_diff.iter().map(|(f, a, b)| (f.as_str(), a ^ b)).collect();
    assert_eq!(diff, vec![("compute_pgm_rsrc1", 1 << 21)]);
    assert_ne!(&out.bytes[at..at + 64], &kd[..], "DX10_CLAMP is cleared");

    // On the emulator: the same outputs as the original, no hazard, and the
    // NaN the kernel makes screened as an invalid operation.
    let dir = tempfile::tempdir().expect("tempdir");
    let patched = dir.path().join("exceptions.co");
    std::fs::write(&patched, &bytes).expect("write");
    let ropts = ReplayOptions { target: Some("gfx90a".into()), code_object: Some(patched), ..Default::default() };
    let plain = xfpx_amd_emu::replay(&launch_path("exc_nan"), &ropts).expect("original runs");
    let screened = replay_rewritten(&launch_path("exc_nan"), Mode::Screen, &ropts).expect("screened runs");
    assert_eq!(screened.hazards, 0);
    assert_eq!(
        screened.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>(),
        plain.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>()
    );
    let kr = screened.report.kernels.iter().find(|k| k.name == "exc_nan").expect("kernel report");
    assert_eq!(kr.status, KernelStatus::Instrumented);
    assert!(screened.screened_kinds.contains(&ExceptionKind::Nan), "{:?}", screened.screened_kinds);
    // Detect on the emulator: the same outputs, no hazard, and the records
    // the emulator observes in the original run.
    let checked = replay_rewritten(&launch_path("exc_nan"), Mode::Detect, &ropts).expect("checked runs");
    assert_eq!(checked.hazards, 0);
    assert_eq!(
        checked.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>(),
        plain.outputs.iter().map(|b| (&b.name, &b.bytes)).collect::<Vec<_>>()
    );
    let records = |r: &xfpx_common::report::Report| -> std::collections::BTreeSet<_> {
        r.records().map(|(_, x)| (x.site.offset, x.kind, x.format)).collect()
    };
    assert!(!records(&plain.report).is_empty());
    assert_eq!(records(&checked.report), records(&plain.report));
}

/// `register_limit` (the real-style fixture without launch bounds) on gfx90a
/// with its descriptor asking for the whole architected file: neither its
/// SGPRs (104, at the budget) nor its VGPRs grow, and most sites have too
/// few dead SGPRs. Each such site saves live SGPRs it does not name in
/// lanes of a VGPR the kernel never names (one above the 112 it uses):
/// every site is checked, the launch runs bit-identical with no hazard, and
/// the records are exactly what the emulator observes.
#[test]
fn a_kernel_at_both_budgets_saves_sgprs_in_lanes_of_a_vgpr_it_never_names() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/realcode/fixtures");
    let path = fixtures.join("launches/register_limit.json");
    let launch = xfpx_amd_emu::launch::Launch::load(&path).expect("launch");
    let (patched, _, _) = at_vgpr_budget_in(&fixtures.join("gfx90a/reglimit.co"), "register_limit");
    let (rw, out) = exact_records::detect_run(&launch, &patched, KernelFilter::exactly("register_limit"));
    let k = out.kernels.iter().find(|k| k.name == "register_limit").expect("kernel");
    let c = k.coverage.as_ref().expect("coverage");
    assert_eq!((&k.state, c.checked), (&KernelState::Instrumented, c.fp_sites), "{c:?}");
    let r = k.registers.as_ref().expect("registers");
    assert_eq!((r.vgprs_before, r.vgprs_after, r.borrowed.sgprs, r.borrowed.vgprs), (256, 256, true, true));
    // The saves are there: v_writelane_b32 in the appended code.
    let writelanes = k
        .appended
        .iter()
        .filter(|l| {
            let bytes: Vec<u8> = l.words.iter().flat_map(|w| w.to_le_bytes()).collect();
            xfpx_amd_isa::decode(xfpx_amd_isa::Target::Gfx90a, &bytes)
                .is_ok_and(|i| i.op == xfpx_amd_isa::Opcode::V_WRITELANE_B32)
        })
        .count();
    assert!(writelanes > 100, "{writelanes} saves in lanes");

    let orig = exact_records::run(&launch, &|_| patched.clone()).expect("the original runs");
    let expected = exact_records::observed(&path, "gfx90a", &patched, &orig).expect("observed");
    let (mut failures, mut not_proven) = (Vec::new(), Vec::new());
    let found = exact_records::rewritten_records("register_limit", &orig, rw, &out, &mut failures, &mut not_proven)
        .map(|(_, _, found)| found);
    assert!(failures.is_empty() && not_proven.is_empty(), "{failures:?} {not_proven:?}");
    assert!(!expected.is_empty());
    assert_eq!(found, Some(expected));
}

/// Kernels at their register budget that call device functions (built at
/// -O0, `budget_calls.hip`: one out of SGPRs, two out of VGPRs, one of them
/// reaching a function through another's tail call): the kernel
/// and the copies of the functions it reaches are checked at every site
/// with registers dead there (liveness across the calls), and on the
/// emulator the rewritten kernel computes what the original computes, with
/// no hazard and exactly the records the original raises, in the kernel and
/// in the functions; screening still covers them.
#[test]
fn kernels_at_their_budget_that_call_functions_are_checked_in_the_kernel_and_the_functions() {
    let mut failures = Vec::new();
    let mut not_proven = Vec::new();
    for target in TARGETS {
        for (kernel, file) in
            [("budget_calls_sgpr", "sgprs"), ("budget_calls_vgpr", "vgprs"), ("budget_calls_tail", "vgprs")]
        {
            let name = format!("{target}/{kernel}");
            let launch = Launch::load(&launch_path(kernel)).expect("launch");
            let co = launch.dir.join(launch.code_object.replace("{target}", target));
            let original = std::fs::read(co).expect("budget_calls.co");
            let orig = run(&launch, &|_| original.clone()).expect("the original runs");
            let expected = observed(&launch_path(kernel), target, &original, &orig).expect("observed");
            assert!(expected.iter().any(|k| k.0 == kernel), "{name}: no record in the kernel: {expected:?}");
            assert!(expected.iter().any(|k| k.0 != kernel), "{name}: no record in a function: {expected:?}");
            let (rw, out) = detect_run(&launch, &original, KernelFilter::exactly(kernel));
            let k = out.kernels.iter().find(|k| k.name == kernel).expect("kernel");
            assert_eq!(k.state, KernelState::Instrumented, "{name}");
            let c = k.coverage.as_ref().expect("coverage");
            assert_eq!((c.checked, c.refused.len()), (c.fp_sites, 0), "{name}: {c:?}");
            let r = k.registers.as_ref().expect("registers");
            let borrowed = if file == "sgprs" { r.borrowed.sgprs } else { r.borrowed.vgprs };
            assert!(borrowed, "{name}: {file} are not borrowed: {r:?}");
            let copies: Vec<_> =
                out.functions.iter().filter(|f| f.copy_of.is_some() && f.reached_by == [kernel]).collect();
            assert!(copies.len() >= 2, "{name}: copies {copies:?}");
            for f in copies {
                let c = f.coverage.as_ref().expect("coverage");
                assert_eq!((&f.state, c.checked), (&KernelState::Instrumented, c.fp_sites), "{name}: {}", f.name);
            }
            let Some((_, _, found)) = rewritten_records(&name, &orig, rw, &out, &mut failures, &mut not_proven) else {
                continue;
            };
            if found != expected {
                failures.push(format!(
                    "{name}: records differ: missing {:?}, extra {:?}",
                    expected.difference(&found).collect::<Vec<_>>(),
                    found.difference(&expected).collect::<Vec<_>>()
                ));
            }
            screen_check(&name, &launch, &original, &orig, &mut failures, &mut not_proven);
        }
    }
    assert!(not_proven.is_empty(), "{not_proven:?}");
    assert!(failures.is_empty(), "{failures:#?}");
}
