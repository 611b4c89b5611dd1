//! The appended code of chosen corpus kernels, checked three ways: its
//! listing equals the committed `asm-snippets/amd/<target>-<name>.s`
//! (rewritten only with `XFPX_BLESS=1`), its bytes equal the committed
//! `.bin`, and — when `llvm-mc-19` is installed — LLVM's assembler turns the
//! `.s` into exactly those bytes (`asm-snippets/amd/regen.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use xfpx_amd::rewrite::{self, Mode, RewriteOptions, TableAddress};
use xfpx_common::config::KernelFilter;

/// (target, fixture, kernel, mode, snippet name).
const CASES: &[(&str, &str, &str, Mode, &str)] = &[
    ("gfx90a", "fp32", "fp32_axpy", Mode::Detect, "detect-f32"),
    ("gfx942", "fp64", "fp64_daxpy", Mode::Detect, "detect-f64"),
    ("gfx90a", "fp16", "fp16_packed", Mode::Detect, "detect-f16x2"),
    ("gfx90a", "mfma", "mfma_f32_32x32x1", Mode::Detect, "detect-mfma"),
    ("gfx908", "mfma", "mfma_f32_16x16x16_f16", Mode::Detect, "detect-mfma"),
    ("gfx942", "fp32", "fp32_axpy", Mode::Screen, "screen"),
];

const TABLE_ADDRESS: u64 = 0x7f00_0000_0000;

fn snippets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../asm-snippets/amd")
}

fn appended(target: &str, fixture: &str, kernel: &str, mode: Mode) -> (String, Vec<u8>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(target).join(format!("{fixture}.co"));
    let bytes = std::fs::read(&path).expect("fixture");
    let opts = RewriteOptions {
        mode,
        kernels: KernelFilter::exactly(kernel),
        table: TableAddress::Known(TABLE_ADDRESS),
        ..Default::default()
    };
    let out = rewrite::rewrite(&bytes, &opts).expect("rewrites");
    let k = out.kernels.iter().find(|k| k.name == kernel).expect("kernel");
    assert!(!k.appended.is_empty(), "{target}/{kernel}: nothing appended: {:?}", k.state);
    let mut text = format!("// {target} {fixture}.co {kernel} ({mode:?}), table at {TABLE_ADDRESS:#x}\n");
    let mut code = Vec::new();
    for l in &k.appended {
        text.push_str(&format!("    {}\n", l.text));
        code.extend(l.words.iter().flat_map(|w| w.to_le_bytes()));
    }
    (text, code)
}

#[test]
fn appended_code_matches_committed_snippets_and_the_assembler() {
    let bless = std::env::var("XFPX_BLESS").is_ok_and(|v| v == "1");
    let mc = Command::new("llvm-mc-19").arg("--version").output().is_ok_and(|o| o.status.success())
        && Command::new("llvm-objcopy-19").arg("--version").output().is_ok_and(|o| o.status.success());
    if bless {
        for &(target, fixture, kernel, mode, name) in CASES {
            let (text, code) = appended(target, fixture, kernel, mode);
            std::fs::write(snippets().join(format!("{target}-{name}.s")), &text).expect("write .s");
            std::fs::write(snippets().join(format!("{target}-{name}.bin")), &code).expect("write .bin");
        }
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    if mc {
        let st = Command::new(snippets().join("regen.sh")).arg(tmp.path()).status().expect("regen.sh runs");
        assert!(st.success());
    } else {
        println!("note: llvm-mc-19/llvm-objcopy-19 not installed; snippets not reassembled");
    }
    for &(target, fixture, kernel, mode, name) in CASES {
        let (text, code) = appended(target, fixture, kernel, mode);
        let base = format!("{target}-{name}");
        let s_path = snippets().join(format!("{base}.s"));
        let bin_path = snippets().join(format!("{base}.bin"));
        let committed = std::fs::read_to_string(&s_path)
            .unwrap_or_else(|e| panic!("{}: {e} (XFPX_BLESS=1 writes it)", s_path.display()));
        assert_eq!(committed, text, "{base}.s is stale (XFPX_BLESS=1 rewrites it)");
        let bin = std::fs::read(&bin_path).expect("committed .bin");
        assert_eq!(bin, code, "{base}.bin differs from the rewriter's bytes");
        if mc {
            let assembled = std::fs::read(tmp.path().join(format!("{base}.bin"))).expect("assembled");
            assert_eq!(assembled, code, "{base}: llvm-mc assembles the listing to other bytes");
        }
    }
}
