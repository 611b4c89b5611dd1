//! Bad input for the rewriter: damaged or truncated objects give a one-line
//! error or a consistent result, never a panic; a kernel that cannot be
//! instrumented (undecodable word, no room for scratch VGPRs, occupancy its
//! workgroup size needs) is left alone with a reason while the others are
//! still instrumented.

mod common;

use proptest::prelude::*;
use xfpx_amd::descriptor::{raw, DescriptorWord};
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd::CodeObject;

fn fixture(target: &str, name: &str) -> Vec<u8> {
    common::read(&common::fixtures().join(target).join(format!("{name}.co")))
}

fn opts(mode: Mode) -> RewriteOptions {
    RewriteOptions { mode, table: TableAddress::Known(0x1000_0000), ..Default::default() }
}

/// File offset of a kernel's descriptor.
fn descriptor_offset(bytes: &[u8], kernel: &str) -> usize {
    let co = CodeObject::parse(bytes).expect("parses");
    let k = co.kernel(kernel).expect("kernel");
    let rodata = co.elf.section_at_addr(k.descriptor_address).expect("section");
    (rodata.offset + (k.descriptor_address - rodata.addr)) as usize
}

fn state<'a>(out: &'a rewrite::RewriteOutcome, kernel: &str) -> &'a KernelState {
    &out.kernels.iter().find(|k| k.name == kernel).expect("kernel").state
}

#[test]
fn garbage_is_a_one_line_error() {
    for bytes in [&b""[..], b"\x7fELF", b"not an object at all", &[0u8; 64][..]] {
        let e = rewrite::rewrite(bytes, &opts(Mode::Detect)).expect_err("rejected");
        let msg = e.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
    }
}

#[test]
fn an_undecodable_word_skips_only_its_kernel() {
    let mut bytes = fixture("gfx90a", "fp32");
    let at = {
        let co = CodeObject::parse(&bytes).expect("parses");
        let k = co.kernel("fp32_mixed").expect("kernel");
        let text = co.elf.section_by_name(".text").expect("text");
        // The kernel's third dword becomes a word no CDNA target decodes.
        (text.offset + (k.entry - text.addr)) as usize + 8
    };
    bytes[at..at + 4].copy_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites the others");
    match state(&out, "fp32_mixed") {
        KernelState::Skipped { reason } => assert!(reason.contains("cannot decode"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&out, "fp32_axpy"), &KernelState::Instrumented);
    assert_eq!(state(&out, "fp32_transcendental"), &KernelState::Instrumented);
}

/// `kernel` of `name` (gfx90a) with its descriptor asking for `granule`
/// (VGPR granule) and `accum` (ACCUM_OFFSET field): the bytes and where
/// the descriptor is.
fn with_vgprs(name: &str, kernel: &str, granule: u32, accum: u32) -> (Vec<u8>, usize, Vec<u8>) {
    let mut bytes = fixture("gfx90a", name);
    let at = descriptor_offset(&bytes, kernel);
    let mut kd = xfpx_amd::KernelDescriptor::parse(&bytes[at..at + 64]).expect("kd");
    kd.set_field(DescriptorWord::ComputePgmRsrc1, raw::rsrc1::GRANULATED_WORKITEM_VGPR_COUNT, granule).expect("set");
    kd.set_field(DescriptorWord::ComputePgmRsrc3, raw::rsrc3_gfx90a::ACCUM_OFFSET, accum).expect("set");
    bytes[at..at + 64].copy_from_slice(&kd.to_bytes());
    (bytes, at, kd.to_bytes().to_vec())
}

/// The VGPR granule of the descriptor at `at`.
fn vgpr_granule(bytes: &[u8], at: usize) -> u32 {
    let kd = xfpx_amd::KernelDescriptor::parse(&bytes[at..at + 64]).expect("kd");
    kd.field(DescriptorWord::ComputePgmRsrc1, raw::rsrc1::GRANULATED_WORKITEM_VGPR_COUNT)
}

#[test]
fn a_kernel_with_256_vgprs_borrows_dead_ones_or_is_refused_clearly() {
    // 256 architected VGPRs, no AGPRs: the whole architected file. Every
    // site borrows VGPRs dead there; the VGPR count stays.
    let (bytes, at, kd) = with_vgprs("fp32", "fp32_axpy", 31, 63);
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    assert_eq!(state(&out, "fp32_axpy"), &KernelState::Instrumented);
    let k = out.kernels.iter().find(|k| k.name == "fp32_axpy").expect("kernel");
    assert!(k.registers.as_ref().is_some_and(|r| r.borrowed.vgprs && r.vgprs_after == 256), "{:?}", k.registers);
    assert_eq!(vgpr_granule(&out.bytes, at), vgpr_granule(&kd, 0));
    assert_eq!(state(&out, "fp32_mixed"), &KernelState::Instrumented);
    // A kernel that calls device functions borrows by the liveness across
    // its calls: its VGPR count stays too.
    let (bytes, at, kd) = with_vgprs("control", "calls", 31, 63);
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    assert_eq!(state(&out, "calls"), &KernelState::Instrumented);
    let k = out.kernels.iter().find(|k| k.name == "calls").expect("kernel");
    assert!(k.registers.as_ref().is_some_and(|r| r.borrowed.vgprs && r.vgprs_after == 256), "{:?}", k.registers);
    assert_eq!(vgpr_granule(&out.bytes, at), vgpr_granule(&kd, 0));
    // One whose call goes where the code does not say (its s_swappc_b64
    // made to jump through s[40:41], which nothing sets) has no liveness:
    // refused with both reasons, its descriptor untouched.
    let mut bytes = bytes;
    common::call_through_an_unknown_pair(&mut bytes, "calls");
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    match state(&out, "calls") {
        KernelState::Skipped { reason } => {
            assert!(reason.contains("VGPRs above v255") && reason.contains("target the code does not say"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(&out.bytes[at..at + 64], &kd[..]);
}

#[test]
fn a_kernel_whose_growth_would_break_its_workgroup_keeps_its_vgpr_count() {
    // 128 VGPRs: 4 waves per SIMD, just what a 1024-lane workgroup needs.
    let (bytes, at, kd) = with_vgprs("fp32", "fp32_axpy", 15, 31);
    let co = CodeObject::parse(&bytes).expect("parses");
    let wg = co
        .metadata
        .as_ref()
        .and_then(|m| m.kernels.iter().find(|k| k.name == "fp32_axpy"))
        .map(|k| k.max_flat_workgroup_size);
    assert_eq!(wg, Some(1024));
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    assert_eq!(state(&out, "fp32_axpy"), &KernelState::Instrumented);
    let r = out.kernels.iter().find(|k| k.name == "fp32_axpy").and_then(|k| k.registers.clone()).expect("registers");
    assert_eq!((r.vgprs_after, r.waves_before, r.waves_after, r.borrowed.vgprs), (128, 4, 4, true));
    assert_eq!(vgpr_granule(&out.bytes, at), vgpr_granule(&kd, 0));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Random byte damage anywhere: an error or a result that parses.
    #[test]
    fn damaged_objects_never_panic(seed in 0usize..6, edits in proptest::collection::vec((any::<u32>(), any::<u8>()), 1..16)) {
        let names = [("gfx90a", "fp32"), ("gfx942", "control"), ("gfx908", "mfma"), ("gfx90a", "noslack"), ("gfx942", "preload"), ("gfx950", "fp64")];
        let (t, n) = names[seed];
        let mut bytes = fixture(t, n);
        for (pos, v) in edits {
            let i = pos as usize % bytes.len();
            bytes[i] = v;
        }
        for mode in [Mode::Detect, Mode::Screen, Mode::Count] {
            match rewrite::rewrite(&bytes, &opts(mode)) {
                Ok(out) => prop_assert!(CodeObject::parse(&out.bytes).is_ok()),
                Err(e) => prop_assert!(!e.to_string().contains('\n')),
            }
        }
    }

    /// Truncation at any length.
    #[test]
    fn truncated_objects_never_panic(cut in 0usize..100_000) {
        let bytes = fixture("gfx942", "fp32");
        let cut = cut % bytes.len();
        if let Err(e) = rewrite::rewrite(&bytes[..cut], &opts(Mode::Detect)) {
            prop_assert!(!e.to_string().contains('\n'));
        }
    }
}

/// A PT_GNU_STACK entry listed before the loadable segments: the new
/// PT_LOAD still comes after every other, so the loaded image's last
/// segment has the highest address.
#[test]
fn new_segment_stays_last_when_the_free_slot_comes_first() {
    let mut bytes = fixture("gfx90a", "noslack");
    let (phoff, phnum) = {
        let co = CodeObject::parse(&bytes).expect("parses");
        (co.elf.header.e_phoff as usize, co.elf.segments.len())
    };
    let stack = (0..phnum)
        .find(|&i| bytes[phoff + 56 * i..phoff + 56 * i + 4] == 0x6474_e551u32.to_le_bytes())
        .expect("GNU_STACK");
    // Move GNU_STACK to index 1, before the PT_LOADs.
    let mut entries: Vec<Vec<u8>> = bytes[phoff..phoff + 56 * phnum].chunks(56).map(<[u8]>::to_vec).collect();
    let e = entries.remove(stack);
    entries.insert(1, e);
    bytes[phoff..phoff + 56 * phnum].copy_from_slice(&entries.concat());
    let out = rewrite::rewrite(&bytes, &opts(Mode::Detect)).expect("rewrites");
    assert_eq!(out.strategy, Some(xfpx_amd::builder::Strategy::NewSegment));
    let co = CodeObject::parse(&out.bytes).expect("parses");
    let loads: Vec<_> = co.elf.segments.iter().filter(|s| s.p_type == 1).collect();
    assert!(loads.windows(2).all(|w| w[0].vaddr < w[1].vaddr), "PT_LOADs out of order");
    assert_eq!(loads.last().map(|s| s.vaddr), out.appended_at);
}

/// The JSON rendering is self-contained: every slot's site is listed.
#[test]
fn json_lists_the_sites_the_table_names() {
    let out = rewrite::rewrite(&fixture("gfx942", "fp32"), &opts(Mode::Detect)).expect("rewrites");
    let v: serde_json::Value = serde_json::from_str(&out.to_json()).expect("json");
    let sites = v["sites"].as_array().expect("sites").len();
    let slots = v["table"]["slots"].as_array().expect("slots");
    assert!(!slots.is_empty());
    for s in slots {
        let id = s["site"].as_u64().expect("site id") as usize;
        assert!(id < sites);
    }
    assert!(out.to_text().contains("appended:"));
}

/// Screen mode clears DX10_CLAMP (so TRAPSTS records FP exceptions) in the
/// descriptors of kernels that use no `clamp` modifier, and only there.
#[test]
fn screening_clears_dx10_clamp_in_the_descriptor() {
    let original = fixture("gfx90a", "fp32");
    let out = rewrite::rewrite(&original, &opts(Mode::Screen)).expect("rewrites");
    let before = CodeObject::parse(&original).expect("parses");
    let after = CodeObject::parse(&out.bytes).expect("parses");
    for k in &out.kernels {
        let a = before.kernel(&k.name).expect("kernel").descriptor;
        let b = after.kernel(&k.name).expect("kernel").descriptor;
        let dx10 =
            |d: &xfpx_amd::KernelDescriptor| d.field(DescriptorWord::ComputePgmRsrc1, raw::rsrc1::ENABLE_DX10_CLAMP);
        assert_eq!(dx10(&a), 1, "HIP kernels start with DX10_CLAMP");
        assert!(k.dx10_clamp_cleared, "{}", k.name);
        assert_eq!(dx10(&b), 0, "{}", k.name);
    }
    let detect = rewrite::rewrite(&original, &opts(Mode::Detect)).expect("rewrites");
    assert!(detect.kernels.iter().all(|k| !k.dx10_clamp_cleared));
}
