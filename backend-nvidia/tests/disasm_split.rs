//! The splitter against real disassembler output (`fixtures/disasm/`,
//! captured on the H100 by `tests/gpu/launch-check.sh`, nvdisasm of CUDA
//! 13.0, `-b SM90`): for three programs, each function's code as NVBit
//! hands it to the disassembler, the disassembler's output for it alone,
//! and its output for all the functions laid end to end in cubin order.
//! Every function's cut must equal its own run byte for byte.

use std::path::{Path, PathBuf};
use xfpx_nvidia::disasm_split::{split, SplitError};

fn capture(program: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/disasm").join(program)
}

/// The functions of a capture: (mangled name, code, its own listing).
fn functions(program: &str) -> Vec<(String, Vec<u8>, String)> {
    let dir = capture(program);
    let list = std::fs::read_to_string(dir.join("functions.txt")).expect("functions.txt");
    list.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let code = std::fs::read(dir.join(format!("{}.bin", f[0]))).expect("code");
            assert_eq!(code.len().to_string(), f[2], "{l}");
            let own = std::fs::read_to_string(dir.join(format!("{}.nvdisasm.txt", f[0]))).expect("listing");
            (f[1].to_string(), code, own)
        })
        .collect()
}

#[test]
fn every_captured_function_splits_byte_identical_to_its_own_run() {
    let mut checked = 0;
    for program in ["gemm", "late_nan", "reduce_scan"] {
        let funcs = functions(program);
        let batched = std::fs::read_to_string(capture(program).join("all.nvdisasm.txt")).expect("batched listing");
        let sizes: Vec<u64> = funcs.iter().map(|(_, c, _)| c.len() as u64).collect();
        let parts = split(&batched, &sizes).unwrap_or_else(|e| panic!("{program}: {e}"));
        assert_eq!(parts.len(), funcs.len());
        for ((name, _, own), part) in funcs.iter().zip(&parts) {
            let part = part.as_ref().unwrap_or_else(|e| panic!("{program} {name}: refused: {e}"));
            if part != own {
                let diff = part.lines().zip(own.lines()).find(|(a, b)| a != b);
                panic!("{program} {name}: differs from its own run, first at {diff:?}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 10);
}

/// Sizes that disagree with the listing are noticed, never cut blindly.
#[test]
fn a_listing_cut_at_the_wrong_sizes_is_not_mistaken_for_a_good_one() {
    let funcs = functions("gemm");
    let batched = std::fs::read_to_string(capture("gemm").join("all.nvdisasm.txt")).expect("batched listing");
    let (a, b) = (funcs[0].1.len() as u64, funcs[1].1.len() as u64);
    // sizes that disagree with the listing: the lengths do not add up
    assert!(matches!(split(&batched, &[a, b + 16]), Err(SplitError::Length { .. })));
    assert!(matches!(split(&batched, &[a, b - 16]), Err(SplitError::Shape { .. })));
    // the right total cut in the wrong place: sgemm's branches then point
    // outside the piece they fall in, and those pieces are refused
    let parts = split(&batched, &[a + 0x400, b - 0x400]).expect("cut");
    assert!(parts.iter().any(Result::is_err), "a wrong cut went unnoticed");
}
