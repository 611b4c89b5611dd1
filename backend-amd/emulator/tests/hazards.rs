//! The memory-timing model catches planted bugs: a fixture kernel with one
//! `s_waitcnt` binary-patched away is reported with the PC and register.

use std::path::{Path, PathBuf};
use xfpx_amd_emu::decode::decode;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::replay::{load_code_object, run_launch};
use xfpx_amd_emu::Program;
use xfpx_amd_emu::{HazardKind, Reg, ReplayOptions};

const S_NOP_0: u32 = 0xBF80_0000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn load(target: &str) -> (Launch, Program) {
    let launch = Launch::load(&fixtures().join("launches/saxpy.json")).expect("launch");
    let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    let object = load_code_object(&launch, &opts).expect("code object");
    (launch, object)
}

/// Image offsets of the instructions of `kernel`, up to its s_endpgm.
fn instructions(object: &Program, kernel: &str) -> Vec<(u64, u32, &'static str, [u32; 3])> {
    let k = object.kernel(kernel).expect("kernel");
    let mut pc = k.entry_vaddr;
    let mut out = Vec::new();
    loop {
        let i = decode(object.target, &object.image[pc as usize..]).expect("decodes");
        out.push((pc, i.words[0], i.mnemonic, i.words));
        if i.mnemonic == "s_endpgm" {
            return out;
        }
        pc += i.len as u64;
    }
}

/// Patches the `nth` occurrence of `word` in the kernel to `with`; returns its offset.
fn patch(object: &mut Program, kernel: &str, word: u32, nth: usize, with: u32) -> u64 {
    let at = instructions(object, kernel).into_iter().filter(|i| i.1 == word).nth(nth).expect("waitcnt present").0;
    object.image[at as usize..at as usize + 4].copy_from_slice(&with.to_le_bytes());
    at
}

#[test]
fn removing_a_vmcnt_wait_is_reported_with_pc_and_register() {
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let (launch, mut object) = load(target);
        // The unpatched kernel is clean.
        let (_, clean) = run_launch(&launch, &object, 0).expect("runs");
        assert!(clean.hazards().is_empty(), "{target}: {:?}", clean.hazards());
        // s_waitcnt vmcnt(0) before the add that consumes the second load.
        let at = patch(&mut object, "saxpy", 0xBF8C_0F70, 0, S_NOP_0);
        let (_, stats) = run_launch(&launch, &object, 0).expect("runs");
        let hazards = stats.hazards();
        assert!(!hazards.is_empty(), "{target}: planted bug not reported");
        let h = hazards[0];
        assert_eq!(h.kind, HazardKind::ReadInFlight);
        assert_eq!(h.pc, at + 4, "{target}: hazard at the instruction after the removed wait");
        // The register is the destination of the load the hazard names.
        let load = decode(object.target, &object.image[h.issued_pc as usize..]).expect("decodes");
        assert!(load.mnemonic.starts_with("global_load"), "{}", load.mnemonic);
        let vdst = (load.words[1] >> 24) as u16;
        assert_eq!(h.reg, Reg::Vgpr(vdst));
        println!("{target}: {h}");
    }
}

#[test]
fn scalar_loads_need_lgkmcnt_zero() {
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let (launch, mut object) = load(target);
        // Weaken the second lgkmcnt(0) (two scalar loads outstanding) to lgkmcnt(1):
        // scalar memory may return out of order, so neither load is safe.
        let at = patch(&mut object, "saxpy", 0xBF8C_C07F, 1, 0xBF8C_C17F);
        let (_, stats) = run_launch(&launch, &object, 0).expect("runs");
        let hazards = stats.hazards();
        assert!(!hazards.is_empty(), "{target}: weakened wait not reported");
        assert!(hazards.iter().all(|h| matches!(h.reg, Reg::Sgpr(_))), "{hazards:?}");
        assert!(hazards.iter().all(|h| h.pc > at));
    }
}

#[test]
fn side_by_side_comparison_finds_changed_results_and_new_hazards() {
    let (launch, original) = load("gfx942");
    let same = xfpx_amd_emu::compare(&launch, &original, &original, 0).expect("runs");
    assert!(same.outputs_identical());
    assert_eq!(same.instruction_ratio(), 1.0);
    // A missing wait: same results (values land at issue), but a hazard.
    let mut nowait = original.clone();
    patch(&mut nowait, "saxpy", 0xBF8C_0F70, 0, S_NOP_0);
    let c = xfpx_amd_emu::compare(&launch, &original, &nowait, 0).expect("runs");
    assert!(c.outputs_identical());
    assert!(c.original.hazards().is_empty() && !c.rewritten.hazards().is_empty());
    // v_add_f32 turned into v_sub_f32 (VOP2 opcode 1 -> 2): results differ.
    let mut wrong = original.clone();
    let add = instructions(&wrong, "saxpy").into_iter().find(|i| i.2 == "v_add_f32").expect("v_add_f32").0 as usize;
    let w = u32::from_le_bytes(wrong.image[add..add + 4].try_into().expect("4 bytes"));
    wrong.image[add..add + 4].copy_from_slice(&((w & !(0x3F << 25)) | (2 << 25)).to_le_bytes());
    let c = xfpx_amd_emu::compare(&launch, &original, &wrong, 0).expect("runs");
    assert_eq!(c.first_difference.as_ref().map(|d| d.0.as_str()), Some("out"));
}
