//! Differential test on the code-object fixture corpus of the AMD backend
//! (`backend-amd/fixtures/<target>/<name>.objdump`, llvm-objdump's golden
//! disassembly of each `.co`). The instruction bytes listed in the golden
//! text are reassembled into the code stream and walked with
//! [`disassemble`]; every instruction must decode at the same address, with
//! the same length and the same text.

use std::path::{Path, PathBuf};
use xfpx_amd_isa::{disassemble, Target};

struct GoldenInsn {
    addr: u64,
    words: Vec<u32>,
    text: String,
}

/// Instructions of one golden listing, grouped into runs of contiguous addresses.
fn parse(listing: &str) -> Vec<Vec<GoldenInsn>> {
    let mut runs: Vec<Vec<GoldenInsn>> = Vec::new();
    for line in listing.lines() {
        let Some((text, rest)) = line.split_once("// ") else { continue };
        let Some((addr, hex)) = rest.split_once(": ") else { continue };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else { continue };
        let words: Vec<u32> = hex
            .split_whitespace()
            .take_while(|w| w.len() == 8)
            .map_while(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        if words.is_empty() {
            continue;
        }
        let insn = GoldenInsn { addr, words, text: text.trim().to_string() };
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|p| p.addr + 4 * p.words.len() as u64 == addr) => run.push(insn),
            _ => runs.push(vec![insn]),
        }
    }
    runs
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

#[test]
fn fixture_corpus_disassembles_like_llvm_objdump() {
    let mut files = 0;
    let mut total = 0;
    let mut mismatches = Vec::new();
    for target in Target::ALL {
        let dir = fixtures_dir().join(target.name());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            println!("note: no fixtures for {target} in {}", dir.display());
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        let mut per_target = (0usize, 0usize);
        for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "objdump")) {
            files += 1;
            let listing = std::fs::read_to_string(path).expect("read golden listing");
            for run in parse(&listing) {
                let bytes: Vec<u8> = run.iter().flat_map(|i| i.words.iter().flat_map(|w| w.to_le_bytes())).collect();
                let ours: Vec<_> = disassemble(target, &bytes, run[0].addr).collect();
                let mut k = 0;
                for g in &run {
                    total += 1;
                    per_target.0 += 1;
                    let got = ours.iter().find(|(a, _)| *a == g.addr);
                    let ok = match got {
                        Some((_, Ok(i))) => {
                            i.length == 4 * g.words.len() && i.to_string() == g.text && i.text() == g.text
                        }
                        Some((_, Err(_))) => g.text.starts_with(".long"),
                        None => false,
                    };
                    if !ok {
                        per_target.1 += 1;
                        let ours_text = match got {
                            Some((_, Ok(i))) => format!("{} ({} bytes)", i, i.length),
                            Some((_, Err(e))) => e.to_string(),
                            None => "no instruction at this address".into(),
                        };
                        if mismatches.len() < 60 {
                            mismatches.push(format!(
                                "{}:{:#x}\n  llvm: {}\n  ours: {}",
                                path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
                                g.addr,
                                g.text,
                                ours_text
                            ));
                        }
                    }
                    k += 1;
                }
                let _ = k;
            }
        }
        println!("{target}: {} instructions, {} mismatches", per_target.0, per_target.1);
    }
    if files == 0 {
        println!("note: fixture corpus not found; nothing compared");
        return;
    }
    for m in &mismatches {
        println!("{m}");
    }
    println!("{files} listings, {total} instructions, {} mismatches shown", mismatches.len());
    assert!(mismatches.is_empty(), "disassembly differs from llvm-objdump on the fixture corpus");
}
