//! FLAT-segment words (not GLOBAL/SCRATCH) with the GLC bit (`glc` on
//! gfx908/gfx90a, `sc0` on gfx940+) and the other cache bits. The words were
//! assembled with llvm-mc (19 for gfx908/gfx90a/gfx942, 22 for gfx950) and the
//! expected text is what llvm-objdump of the same release prints for them.
#![allow(clippy::unwrap_used)]

use xfpx_amd_isa::{decode, RegFile, RegRange, Target};

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// (words, gfx908/gfx90a text, gfx942/gfx950 text); every word is valid on all
/// four targets.
const FLAT_CACHE_WORDS: [([u32; 2], &str, &str); 5] = [
    ([0xDC51_0000, 0x0000_0002], "flat_load_dword v0, v[2:3] glc", "flat_load_dword v0, v[2:3] sc0"),
    ([0xDD09_0000, 0x0000_0402], "flat_atomic_add v0, v[2:3], v4 glc", "flat_atomic_add v0, v[2:3], v4 sc0"),
    (
        [0xDC57_0010, 0x0A00_0014],
        "flat_load_dwordx2 v[10:11], v[20:21] offset:16 glc slc",
        "flat_load_dwordx2 v[10:11], v[20:21] offset:16 sc0 nt",
    ),
    (
        [0xDD85_0000, 0x0000_0402],
        "flat_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7] glc",
        "flat_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7] sc0",
    ),
    ([0xDC71_0000, 0x0000_0402], "flat_store_dword v[2:3], v4 glc", "flat_store_dword v[2:3], v4 sc0"),
];

#[test]
fn flat_words_with_glc_decode_on_every_target() {
    for target in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let gfx940 = matches!(target, Target::Gfx942 | Target::Gfx950);
        for (words, old_text, new_text) in FLAT_CACHE_WORDS {
            let want = if gfx940 { new_text } else { old_text };
            let i = decode(target, &bytes(&words)).unwrap_or_else(|e| panic!("{}: {words:08x?}: {e}", target.name()));
            assert_eq!(i.length, 8, "{}: {want}", target.name());
            assert_eq!(i.to_string(), want, "{}: {words:08x?}", target.name());
        }
    }
}

#[test]
fn flat_sc1_decodes_on_gfx940() {
    // flat_load_dword v0, v[2:3] sc0 sc1 (bit 25 is sc1 on gfx940+)
    for target in [Target::Gfx942, Target::Gfx950] {
        let i = decode(target, &bytes(&[0xDE51_0000, 0x0000_0002])).unwrap();
        assert_eq!(i.to_string(), "flat_load_dword v0, v[2:3] sc0 sc1");
    }
}

#[test]
fn glc_selects_the_returning_flat_atomic() {
    let v0 = RegRange::new(RegFile::Vgpr, 0, 1);
    for target in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let returning = decode(target, &bytes(&[0xDD09_0000, 0x0000_0402])).unwrap();
        assert!(returning.regs_written().contains(&v0), "{}: {returning}", target.name());
        // The same word without GLC: no destination (llvm-mc encodes
        // `flat_atomic_add v[2:3], v4` as dd080000 00000402).
        let plain = decode(target, &bytes(&[0xDD08_0000, 0x0000_0402])).unwrap();
        assert_eq!(plain.to_string(), "flat_atomic_add v[2:3], v4");
        assert!(!plain.regs_written().contains(&v0), "{}: {plain}", target.name());
    }
}
