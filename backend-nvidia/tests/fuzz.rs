//! Property-based fuzzing of the SASS parsers, the dump and the fat
//! binary reader: any text or bytes, and mutations of real listing lines
//! and of a real fat binary, give a value or an error, never a panic.

use proptest::prelude::*;
use xfpx_nvidia::dump::{dump_listing, DumpOptions};
use xfpx_nvidia::record::{decode_chunk, DeviceRecord};
use xfpx_nvidia::sass::{build_kernel, parse_instruction, parse_listing, SassFunction};

fn real_lines() -> Vec<String> {
    let text = include_str!("fixtures/ops.sm_90.nvdisasm.sass");
    text.lines().filter(|l| l.contains("/*0")).map(str::to_string).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_text_instruction(s in "\\PC{0,80}") {
        if let Ok(i) = parse_instruction(&s) {
            let _ = build_kernel(&SassFunction { name: "k".into(), instrs: vec![i] });
        }
    }

    #[test]
    fn sass_like_text(s in "(@!?U?P[0-7T] )?[A-Z0-9]{1,6}(\\.[A-Z0-9_]{1,6}){0,3} ([-|!~]?(R|UR|P|UP)?[0-9ZT]{1,3}(\\.reuse|\\.H0_H0|\\.64)?|c\\[0x[0-9]\\]\\[0x[0-9a-f]{1,4}\\]|[-+]?[0-9.]{1,6}|[-+]QNAN|\\[R[0-9]\\.64\\+0x10\\]|[,|\\[\\]]){0,8} ;") {
        if let Ok(i) = parse_instruction(&s) {
            let k = build_kernel(&SassFunction { name: "k".into(), instrs: vec![i] });
            let _ = xfpx_common::tool::Tool::plan(&xfpx_common::tool::Detector::default(), &k.view, &mut xfpx_common::site::SiteTable::new());
        }
    }

    #[test]
    fn mutated_listing_lines(idx in 0usize..500, cut in 0usize..80, insert in "[ ,.\\[\\]|@!0-9A-Z-]{0,4}") {
        let lines = real_lines();
        let line = &lines[idx % lines.len()];
        let at = line.char_indices().map(|(i, _)| i).nth(cut % line.chars().count().max(1)).unwrap_or(0);
        let mutated = format!("{}{}{}", &line[..at], insert, &line[at..]);
        let listing = format!("\tFunction : k\n{mutated}\n");
        if let Ok(fs) = parse_listing(&listing) {
            for f in &fs { let _ = build_kernel(f); }
        }
        let _ = dump_listing(&listing, &DumpOptions::default());
    }

    #[test]
    fn device_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200), first in any::<u32>()) {
        let _ = DeviceRecord::decode(&bytes);
        if let Ok(sites) = decode_chunk(first, &bytes) {
            for (_, e) in sites { let _ = e.findings(); }
        }
    }
}

fn real_fatbin() -> &'static [u8] {
    include_bytes!("fixtures/ops.sm_90.fatbin")
}

/// Everything the prefill reads from a fat binary, read to the end.
fn read_fatbin(bytes: &[u8]) {
    if let Ok(entries) = xfpx_nvidia::fatbin::entries(bytes) {
        for e in entries {
            if let Ok(c) = e.contents() {
                let _ = xfpx_nvidia::fatbin::cubin_functions(&c);
            }
        }
    }
    let _ = xfpx_nvidia::fatbin::functions_for_target(bytes, 90);
    read_image(bytes);
}

/// The bytes as a module image loaded from memory: its extent, read
/// through a reader that refuses what lies past them, and its functions.
fn read_image(bytes: &[u8]) {
    use xfpx_nvidia::module_image;
    if let Some(size) = module_image::extent_in(bytes) {
        let _ = module_image::functions(&bytes[..(size as usize).min(bytes.len())], 90);
    }
}

/// The fixture's sm_90 cubin, as `cuModuleLoadData` takes one.
fn real_cubin() -> Vec<u8> {
    let entries = xfpx_nvidia::fatbin::entries(real_fatbin()).expect("fixture");
    let cubin = entries.iter().find(|e| e.kind == xfpx_nvidia::fatbin::EntryKind::Cubin).expect("a cubin");
    cubin.contents().expect("readable").to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_as_fatbin(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        read_fatbin(&bytes);
        let _ = xfpx_nvidia::fatbin::host_fatbin(&bytes);
    }

    #[test]
    fn mutated_fatbin(edits in proptest::collection::vec((0usize..1 << 20, any::<u8>()), 1..8), cut in 0usize..1 << 20) {
        let mut bytes = real_fatbin().to_vec();
        for (at, v) in edits {
            let n = bytes.len();
            bytes[at % n] = v;
        }
        // headers are where the sizes live: hit them more often than chance
        let n = bytes.len();
        bytes[cut % 96] ^= 0x40;
        bytes.truncate(n - (cut % 64));
        read_fatbin(&bytes);
    }

    #[test]
    fn mutated_cubin_image(edits in proptest::collection::vec((0usize..1 << 20, any::<u8>()), 1..8), cut in 0usize..1 << 20) {
        let mut bytes = real_cubin();
        for (at, v) in edits {
            let n = bytes.len();
            bytes[at % n] = v;
        }
        // the ELF header holds the extent's fields
        bytes[cut % 64] ^= 0x10;
        read_image(&bytes);
    }
}
