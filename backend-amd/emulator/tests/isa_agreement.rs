//! The emulator's opcode table against the project's ISA decoder
//! (xfpx-amd-isa): both read every instruction of the fixture listings and of
//! tools/extra.s as the same mnemonic with the same length.

use std::path::Path;
use xfpx_amd_emu::decode::{decode, Target};

fn isa_target(t: &str) -> xfpx_amd_isa::Target {
    match t {
        "gfx908" => xfpx_amd_isa::Target::Gfx908,
        "gfx90a" => xfpx_amd_isa::Target::Gfx90a,
        "gfx942" => xfpx_amd_isa::Target::Gfx942,
        _ => xfpx_amd_isa::Target::Gfx950,
    }
}

/// Known disagreement, where llvm-mc and llvm-objdump side with the emulator:
/// xfpx-amd-isa rejects returning FLAT atomics (`flat_atomic_* v0, v[2:3],
/// v4 glc`) on gfx908/gfx90a as invalid words.
fn known(target: &str, mnemonic: &str, isa_error: bool) -> bool {
    isa_error && matches!(target, "gfx908" | "gfx90a") && mnemonic.starts_with("flat_atomic_")
}

fn strip(m: &str) -> &str {
    m.strip_suffix("_e32").or_else(|| m.strip_suffix("_e64")).unwrap_or(m)
}

#[test]
fn emulator_and_isa_decoders_agree() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut checked = 0;
    let mut disagreements = Vec::new();
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let ours = Target::from_name(target).expect("target");
        let theirs = isa_target(target);
        let mut encodings: Vec<Vec<u8>> = Vec::new();
        for entry in std::fs::read_dir(fixtures.join(target)).expect("dir").filter_map(|e| e.ok()) {
            let p = entry.path();
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext != "objdump" && ext != "mc" {
                continue;
            }
            for line in std::fs::read_to_string(&p).expect("listing").lines() {
                let Some((_, enc)) = line.rsplit_once("//") else { continue };
                let enc = enc.split_once(':').map(|(_, w)| w).unwrap_or(enc);
                let words: Vec<u32> = enc.split_whitespace().map_while(|w| if w.len() == 8 { u32::from_str_radix(w, 16).ok() } else { None }).collect();
                if !words.is_empty() {
                    encodings.push(words.iter().flat_map(|w| w.to_le_bytes()).collect());
                }
            }
        }
        for bytes in encodings {
            let a = decode(ours, &bytes).expect("emulator decodes its goldens");
            match xfpx_amd_isa::decode(theirs, &bytes) {
                Ok(b) => {
                    if strip(a.mnemonic) != strip(&b.mnemonic()) || a.len as usize != b.length {
                        disagreements.push(format!("{target} {:08x?}: emulator {} ({}), isa {} ({})", a.words, a.mnemonic, a.len, b.mnemonic(), b.length));
                    }
                }
                Err(_) if known(target, a.mnemonic, true) => {}
                Err(e) => disagreements.push(format!("{target} {:08x?}: emulator {}, isa error {e}", a.words, a.mnemonic)),
            }
            checked += 1;
        }
    }
    disagreements.sort();
    disagreements.dedup();
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.iter().take(60).cloned().collect::<Vec<_>>().join("\n"));
    println!("{checked} instructions: both decoders agree");
}
