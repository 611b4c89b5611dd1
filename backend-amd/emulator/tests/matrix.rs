//! Matrix instructions on the fixture kernels: the planted NaN and infinity
//! inputs show up as NaN and Inf results of the MFMA itself (and nowhere
//! else), the compiled kernels run without hazards, and a result read with
//! too few wait states after its MFMA is reported.

mod common;

use std::path::{Path, PathBuf};
use xfpx_amd_emu::decode::decode;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::replay::{load_code_object, run_launch};
use xfpx_amd_emu::Program;
use xfpx_amd_emu::{HazardKind, Reg, ReplayOptions};
use xfpx_common::fp::ExceptionKind;

const TARGETS: [&str; 4] = ["gfx908", "gfx90a", "gfx942", "gfx950"];

fn launch(name: &str) -> Launch {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches");
    let path = dir.join(format!("{name}.json"));
    let path = if path.exists() { path } else { dir.join(format!("matrix/{name}.json")) };
    Launch::load(&path).expect("launch")
}

fn object(launch: &Launch, target: &str) -> Program {
    let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    load_code_object(launch, &opts).expect("code object")
}

/// (offset, mnemonic, first word) of the instructions of `kernel`, up to s_endpgm.
fn instructions(object: &Program, kernel: &str) -> Vec<(u64, &'static str, u32)> {
    let t = object.target;
    let mut pc = object.kernel(kernel).expect("kernel").entry_vaddr;
    let mut out = Vec::new();
    loop {
        let i = decode(t, &object.image[pc as usize..]).expect("decodes");
        out.push((pc, i.mnemonic, i.words[0]));
        if i.mnemonic == "s_endpgm" {
            return out;
        }
        pc += i.len as u64;
    }
}

/// The launches of `mfma.hip` (with planted NaN and Inf inputs), or with
/// `all`, those of `mfma_shapes.hip` too (one per shape).
fn matrix_launches(all: bool) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches");
    let dirs = if all { vec![dir.clone(), dir.join("matrix")] } else { vec![dir] };
    let mut v: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("launches"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let prefix = n.starts_with("mfma_") || all && (n.starts_with("shape_") || n.starts_with("sparse_"));
            prefix && n.ends_with(".json") && !n.ends_with(".expect.json")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn planted_nan_and_inf_inputs_are_observed_at_the_mfma() {
    let mut checked = 0;
    for path in matrix_launches(false) {
        let launch = Launch::load(&path).expect("launch");
        for target in TARGETS.iter().filter(|t| launch.runs_on(t)) {
            let object = object(&launch, target);
            let (_, stats) =
                run_launch(&launch, &object, 0).unwrap_or_else(|e| panic!("{target}/{}: {e}", launch.kernel));
            assert!(stats.hazards().is_empty(), "{target}/{}: {:?}", launch.kernel, stats.hazards());
            let code = instructions(&object, &launch.kernel);
            let at = |pc: u64| code.iter().find(|i| i.0 == pc - stats.code_base).map(|i| i.1).unwrap_or("?");
            let kinds: Vec<(ExceptionKind, &str)> =
                stats.observations.results.keys().map(|&(pc, k, _)| (k, at(pc))).collect();
            if launch.kernel.contains("i8") {
                assert!(kinds.is_empty(), "{target}/{}: {kinds:?}", launch.kernel);
            } else {
                // Every exceptional result comes from an MFMA; NaN and Inf both occur.
                assert!(kinds.iter().all(|k| k.1.starts_with("v_mfma")), "{target}/{}: {kinds:?}", launch.kernel);
                for want in [ExceptionKind::Nan, ExceptionKind::Inf] {
                    assert!(kinds.iter().any(|k| k.0 == want), "{target}/{}: no {want:?} in {kinds:?}", launch.kernel);
                }
            }
            checked += 1;
        }
    }
    println!("{checked} MFMA launch runs checked");
    assert!(checked >= 16, "only {checked} MFMA launch runs");
}

#[test]
fn reading_an_mfma_result_too_soon_is_a_hazard() {
    let l = launch("mfma_f32_16x16x16_f16");
    for target in TARGETS {
        let mut object = object(&l, target);
        let code = instructions(&object, &l.kernel);
        let last_mfma = code.iter().rposition(|i| i.1.starts_with("v_mfma")).expect("an MFMA");
        let nop = code[last_mfma..].iter().find(|i| i.1 == "s_nop").expect("s_nop after the MFMA").0 as usize;
        // s_nop 7 (or 6) becomes s_nop 0: 6 or more wait states short.
        object.image[nop..nop + 4].copy_from_slice(&0xBF80_0000u32.to_le_bytes());
        let (_, stats) = run_launch(&l, &object, 0).expect("runs");
        let hazards = stats.hazards();
        assert!(!hazards.is_empty(), "{target}: shortened wait not reported");
        let h = hazards[0];
        assert_eq!(h.kind, HazardKind::MatrixResultNotReady);
        assert_eq!(h.issued_pc, code[last_mfma].0, "{target}: {h}");
        // gfx908 reads the accumulators with v_accvgpr_read; later targets
        // accumulate in VGPRs and store them.
        let agpr = matches!(h.reg, Reg::Agpr(_));
        assert_eq!(agpr, target == "gfx908", "{target}: {h}");
        println!("{target}: {h}");
    }
}

/// The wait-state rules are exactly as strict as LLVM's: every compiled
/// kernel meets them (no hazard above), and one wait state fewer after the
/// last MFMA (its following `s_nop n` as `s_nop n-1`) is reported.
#[test]
fn one_wait_state_fewer_than_llvm_emits_is_a_hazard() {
    let mut checked = 0;
    for path in matrix_launches(true) {
        let l = Launch::load(&path).expect("launch");
        for target in TARGETS.iter().filter(|t| l.runs_on(t)) {
            let mut object = object(&l, target);
            let code = instructions(&object, &l.kernel);
            let last_mfma = code.iter().rposition(|i| is_matrix(i.1)).expect("an MFMA");
            let &(at, _, word) = code[last_mfma..].iter().find(|i| i.1 == "s_nop").expect("s_nop after the MFMA");
            let at = at as usize;
            // s_nop n -> s_nop n-1, or an s_nop 0 dropped for another s_nop 0
            // of the run shortened (the last one with n > 0).
            let run: Vec<_> =
                code[last_mfma..].iter().skip_while(|i| i.0 as usize != at).take_while(|i| i.1 == "s_nop").collect();
            let (pos, w) = run.iter().rev().find(|i| i.2 & 0xF > 0).map(|i| (i.0 as usize, i.2)).unwrap_or((at, word));
            assert!(w & 0xF > 0, "{target}/{}: no s_nop to shorten", l.kernel);
            object.image[pos..pos + 4].copy_from_slice(&(w - 1).to_le_bytes());
            let (_, stats) = run_launch(&l, &object, 0).expect("runs");
            let hazards = stats.hazards();
            assert!(
                hazards.iter().any(|h| h.kind == HazardKind::MatrixResultNotReady && h.issued_pc == code[last_mfma].0),
                "{target}/{}: one wait state fewer is not reported",
                l.kernel
            );
            checked += 1;
        }
    }
    println!("{checked} MFMA kernels: one wait state fewer is a hazard");
    assert!(checked >= 190, "{checked}");
}

fn is_matrix(mnemonic: &str) -> bool {
    mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac")
}

/// Random damage to the MFMA words (operand fields, register files, the
/// cbsz/abid/blgp bits, the opcode) ends in a one-line error or a completed
/// run, never a panic.
#[test]
fn damaged_mfma_words_never_panic() {
    let mut next = common::xorshift(0x9E37_79B9_7F4A_7C15u64);
    let (mut ok, mut errors) = (0, 0);
    for name in [
        "mfma_f32_32x32x1",
        "mfma_agpr_f16",
        "mfma_f64_16x16x4",
        "mfma_bf16_1k",
        "shape_ctl_f16_4x4x4",
        "sparse_f16_16x16x32",
        "shape_fp8_bf8_32x32x16_gfx942",
    ] {
        let l = launch(name);
        for target in TARGETS.iter().filter(|t| l.runs_on(t)) {
            let original = object(&l, target);
            let mfmas: Vec<usize> =
                instructions(&original, &l.kernel).iter().filter(|i| is_matrix(i.1)).map(|i| i.0 as usize).collect();
            for _ in 0..40 {
                let mut object = original.clone();
                let at = mfmas[next() as usize % mfmas.len()] + 4 * (next() % 2) as usize;
                let w = u32::from_le_bytes(object.image[at..at + 4].try_into().expect("word"));
                let flip = (next() as u32) & if next().is_multiple_of(2) { 0x01FF_FFFF } else { 0xE000_FFFF };
                object.image[at..at + 4].copy_from_slice(&(w ^ flip).to_le_bytes());
                match run_launch(&l, &object, 100_000) {
                    Ok(_) => ok += 1,
                    Err(e) => {
                        assert!(!e.to_string().contains('\n'), "{e}");
                        errors += 1;
                    }
                }
            }
        }
    }
    println!("{ok} damaged MFMA runs completed, {errors} stopped with a one-line error");
    assert!(errors > 0 && ok > 0);
}
