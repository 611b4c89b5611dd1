//! Shared helpers of the integration tests: the fixture corpus on disk.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub const TARGETS: [&str; 4] = ["gfx908", "gfx90a", "gfx942", "gfx950"];

/// The emulator fixture kernel that detect, count and counters must
/// refuse, and what the refusal says: at its VGPR budget, it reads
/// registers through M0, so no check or count can borrow registers
/// (`budget_indexed.hip`; screen mode still checks it).
pub const REFUSED_KERNEL: (&str, &str) = ("budget_indexed", "reaches registers through M0");

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every `<target>/<name>.co` of the corpus, as (target, name, path).
pub fn code_objects() -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for t in TARGETS {
        let dir = fixtures().join(t);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "co"))
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            out.push((t.to_string(), name, p));
        }
    }
    assert!(out.len() >= 30, "fixture corpus missing ({} code objects)", out.len());
    out
}

pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The `.amdhsa_kernel NAME` ... `.end_amdhsa_kernel` blocks of a golden file.
pub fn amdhsa_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix(".amdhsa_kernel ") {
            current = Some((name.to_string(), format!("{line}\n")));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
            if line == ".end_amdhsa_kernel" {
                out.extend(current.take());
            }
        }
    }
    out
}

/// Points the first `s_swappc_b64 s[30:31], …` of `kernel` in `bytes` at
/// s[40:41], a pair nothing sets: a call whose target the code does not say.
pub fn call_through_an_unknown_pair(bytes: &mut [u8], kernel: &str) {
    let at = {
        let co = xfpx_amd::CodeObject::parse(bytes).expect("parses");
        let k = co.kernel(kernel).expect("kernel");
        let code = co.kernel_code(k).expect("code");
        let i = code
            .chunks_exact(4)
            .position(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) & 0xFFFF_FF00 == 0xBE9E_1E00)
            .expect("a swappc");
        let t = co.elf.section_by_name(".text").expect(".text");
        t.offset as usize + (k.entry - t.addr) as usize + 4 * i
    };
    bytes[at..at + 4].copy_from_slice(&0xBE9E_1E28u32.to_le_bytes());
}
