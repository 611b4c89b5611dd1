//! Hostile input: mutated and truncated corpus files through every parser
//! (containers, ELF, code object, descriptor, metadata note, dump). Any
//! outcome but a panic is acceptable; errors must be one line.

mod common;

use proptest::prelude::*;
use xfpx_amd::descriptor::KernelDescriptor;
use xfpx_amd::{dump, extract, metadata, CodeObject, DumpOptions, OutputFormat, Target};

/// Every corpus file: code objects and containers.
fn corpus() -> Vec<Vec<u8>> {
    let mut files: Vec<Vec<u8>> = common::code_objects().into_iter().map(|(_, _, p)| common::read(&p)).collect();
    for b in [
        "multi.bundle",
        "unaligned.bundle",
        "compressed-v2.ccob",
        "compressed-v3.ccob",
        "host-fatbin.o",
        "host-fatbin.exe",
        "libhost-fatbin.so",
    ] {
        files.push(common::read(&common::fixtures().join("bundles").join(b)));
    }
    files
}

#[derive(Debug, Clone)]
enum Mutation {
    /// XOR a byte.
    Flip { at: usize, mask: u8 },
    /// Overwrite 8 bytes with an extreme or random value (offsets, sizes, counts).
    Word { at: usize, value: u64 },
    /// Cut the input.
    Truncate { at: usize },
    /// Insert bytes (shifts everything after).
    Insert { at: usize, bytes: Vec<u8> },
    /// Overwrite one 8-byte field of a section header (of an ELF input) with an extreme value.
    SectionField { section: usize, field: usize, value: u64 },
}

fn extreme() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        Just(u64::MAX - 0xff),
        Just(0x8000_0000_0000_0000),
        0u64..0x10000,
        any::<u64>()
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let pos = any::<usize>();
    prop_oneof![
        (pos, 1u8..=255).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        (
            // Bias towards the ELF header, program and section header tables and bundle headers.
            prop_oneof![0usize..128, any::<usize>()],
            prop_oneof![Just(0u64), Just(u64::MAX), Just(u64::MAX / 2), Just(0x8000_0000), 0u64..0x10000, any::<u64>()]
        )
            .prop_map(|(at, value)| Mutation::Word { at, value }),
        pos.prop_map(|at| Mutation::Truncate { at }),
        (pos, proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (0usize..16, 0usize..8, extreme()).prop_map(|(section, field, value)| Mutation::SectionField {
            section,
            field,
            value
        }),
    ]
}

fn apply(mut data: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        if data.is_empty() {
            break;
        }
        let n = data.len();
        match m {
            Mutation::Flip { at, mask } => data[at % n] ^= mask,
            Mutation::Word { at, value } => {
                let at = at % n;
                for (i, b) in value.to_le_bytes().iter().enumerate() {
                    if let Some(slot) = data.get_mut(at + i) {
                        *slot = *b;
                    }
                }
            }
            Mutation::Truncate { at } => data.truncate(at % n),
            Mutation::Insert { at, bytes } => {
                let at = at % n;
                data.splice(at..at, bytes.iter().copied());
            }
            Mutation::SectionField { section, field, value } => set_section_field(&mut data, *section, *field, *value),
        }
    }
    data
}

/// Overwrites 8 bytes at `field * 8` of section header `section`, if `data` is an ELF64 with one.
fn set_section_field(data: &mut [u8], section: usize, field: usize, value: u64) {
    if data.len() < 64 || !data.starts_with(b"\x7fELF") {
        return;
    }
    let shoff = u64::from_le_bytes(data[40..48].try_into().unwrap_or([0; 8])) as usize;
    let shnum = u16::from_le_bytes([data[60], data[61]]) as usize;
    if shnum == 0 {
        return;
    }
    let at = shoff.saturating_add((section % shnum) * 64).saturating_add((field % 8) * 8);
    if let Some(slot) = data.get_mut(at..at.saturating_add(8)) {
        if slot.len() == 8 {
            slot.copy_from_slice(&value.to_le_bytes());
        }
    }
}

/// Runs every reader over `data`; returns normally unless something panics.
pub fn exercise(data: &[u8]) {
    let one_line = |e: &xfpx_amd::Error| {
        let s = e.to_string();
        assert!(!s.is_empty() && !s.contains('\n'), "error is not one line: {s:?}");
    };
    match extract(data) {
        Err(e) => one_line(&e),
        Ok(list) => {
            for co in list {
                match CodeObject::parse(&co.bytes) {
                    Err(e) => one_line(&e),
                    Ok(obj) => {
                        for k in &obj.kernels {
                            let _ = k.descriptor.decode(obj.target.processor);
                            let _ = xfpx_amd::render_amdhsa(&k.name, &k.descriptor, obj.target.processor, obj.version);
                            let _ = obj.kernel_code(k);
                        }
                    }
                }
            }
        }
    }
    for format in [OutputFormat::Text, OutputFormat::Json] {
        if let Err(e) = dump(data, &DumpOptions { kernel: None, format }) {
            one_line(&e);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_corpus_never_panics(file in any::<prop::sample::Index>(), muts in proptest::collection::vec(mutation(), 1..6)) {
        let files = corpus();
        let data = apply(files[file.index(files.len())].clone(), &muts);
        exercise(&data);
    }

    #[test]
    fn descriptor_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 64)) {
        let kd = KernelDescriptor::parse(&bytes).expect("64 bytes parse");
        prop_assert_eq!(kd.to_bytes().to_vec(), bytes);
        for p in Target::ALL {
            if let Err(e) = kd.decode(p) {
                prop_assert!(!e.to_string().contains('\n'));
            }
            let text = xfpx_amd::render_amdhsa("k", &kd, p, 5);
            prop_assert!(text.ends_with(".end_amdhsa_kernel\n"));
        }
    }

    #[test]
    fn descriptor_short_input_is_an_error(len in 0usize..64) {
        prop_assert!(KernelDescriptor::parse(&vec![0u8; len]).is_err());
    }

    #[test]
    fn metadata_mutations_never_panic(file in any::<prop::sample::Index>(), muts in proptest::collection::vec(mutation(), 1..6)) {
        let files: Vec<Vec<u8>> = common::code_objects().into_iter().map(|(_, _, p)| common::read(&p)).collect();
        let data = &files[file.index(files.len())];
        let elf = xfpx_amd::elf::ElfFile::parse(data).expect("corpus ELF");
        let notes = elf.notes().expect("notes");
        let desc = notes.iter().find(|n| n.n_type == metadata::NT_AMDGPU_METADATA).expect("metadata note").desc.to_vec();
        match metadata::parse(&apply(desc, &muts)) {
            Ok(_) => {}
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
        }
    }
}

#[test]
fn every_prefix_of_a_code_object_is_handled() {
    // Exhaustive truncation of one small code object (every length).
    let data = common::read(&common::fixtures().join("gfx90a/preload.co"));
    for len in 0..data.len() {
        exercise(&data[..len]);
    }
}

/// Random-mutation runner for longer campaigns than `cargo test` runs:
/// `XFPX_FUZZ_SECONDS=600 cargo test -p xfpx-amd --release --test robustness -- --ignored --nocapture`.
#[test]
#[ignore = "long-running fuzz campaign; set XFPX_FUZZ_SECONDS"]
fn fuzz_campaign() {
    let seconds: u64 = std::env::var("XFPX_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let files = corpus();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    // xorshift64*: deterministic from the seed, printed for replay.
    let mut state: u64 =
        std::env::var("XFPX_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9e37_79b9_7f4a_7c15);
    println!("seed {state}");
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut runs = 0u64;
    while std::time::Instant::now() < deadline {
        let mut data = files[(next() % files.len() as u64) as usize].clone();
        for _ in 0..(1 + next() % 8) {
            if data.is_empty() {
                break;
            }
            let n = data.len() as u64;
            match next() % 5 {
                4 => {
                    let v = [0, u64::MAX, u64::MAX - 0xff, 0x8000_0000_0000_0000, next()][(next() % 5) as usize];
                    set_section_field(&mut data, (next() % 16) as usize, (next() % 8) as usize, v);
                }
                0 => data[(next() % n) as usize] ^= (next() % 255 + 1) as u8,
                1 => {
                    let at = if next() % 2 == 0 { next() % 128.min(n) } else { next() % n } as usize;
                    let v = [0, u64::MAX, 0x8000_0000, next() % 0x10000, next()][(next() % 5) as usize];
                    for (i, b) in v.to_le_bytes().iter().enumerate() {
                        if let Some(s) = data.get_mut(at + i) {
                            *s = *b;
                        }
                    }
                }
                2 => data.truncate((next() % n) as usize),
                _ => {
                    let at = (next() % n) as usize;
                    data.insert(at, next() as u8);
                }
            }
        }
        exercise(&data);
        runs += 1;
    }
    println!("{runs} mutated inputs in {seconds} s without a panic");
}
