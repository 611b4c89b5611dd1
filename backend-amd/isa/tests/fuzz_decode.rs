//! Fuzzing of the decoder with random words (proptest): decoding never
//! panics, a decoded instruction has a length of 4, 8, 12 or 16 bytes that
//! fits the input, every accessor works, and cutting the input short gives
//! `Truncated` rather than a guessed instruction.

use proptest::prelude::*;
use xfpx_amd_isa::{decode, disassemble, DecodeError, Target, Variant};

fn check(target: Target, bytes: &[u8]) {
    match decode(target, bytes) {
        Ok(insn) => {
            assert!(matches!(insn.length, 4 | 8 | 12 | 16), "length {}", insn.length);
            assert!(insn.length <= bytes.len());
            let text = insn.to_string();
            assert!(!text.is_empty());
            let _ = (insn.regs_read(), insn.regs_written(), insn.counters(), insn.class());
            let _ = insn.control_flow(0x1000);
            // The same bytes cut before the end must not decode (a fused scaled
            // MFMA falls back to its 8-byte ld_scale half).
            let cut = &bytes[..insn.length - 1];
            match (insn.variant, decode(target, cut)) {
                (_, Err(DecodeError::Truncated { .. })) => {}
                (Variant::ScaledMfma, Ok(half)) if half.length == 8 => {}
                (_, other) => panic!("{text}: shorter input gave {other:?}"),
            }
        }
        Err(DecodeError::Truncated { needed, available }) => {
            assert!(needed > available);
            assert_eq!(available, bytes.len());
        }
        Err(DecodeError::Invalid { .. } | DecodeError::Unsupported { .. }) => {}
    }
}

fn target() -> impl Strategy<Value = Target> {
    prop::sample::select(Target::ALL.to_vec())
}

/// First dwords biased towards the instruction-encoding prefixes.
fn first_word() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        (0u32..64, any::<u32>()).prop_map(|(top, low)| (top << 26) | (low & 0x03FF_FFFF)),
        (0x17Du32..0x180, any::<u32>()).prop_map(|(top, low)| (top << 23) | (low & 0x007F_FFFF)),
        (0x3Eu32..0x40, any::<u32>()).prop_map(|(top, low)| (top << 25) | (low & 0x01FF_FFFF)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn random_words_never_panic(t in target(), w0 in first_word(), rest in prop::collection::vec(any::<u8>(), 0..13)) {
        let mut bytes = w0.to_le_bytes().to_vec();
        bytes.extend_from_slice(&rest);
        check(t, &bytes);
    }

    #[test]
    fn random_streams_walk_every_byte(t in target(), bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut end = 0u64;
        for (addr, res) in disassemble(t, &bytes, 0x100) {
            prop_assert_eq!(addr, 0x100 + end);
            end += match res {
                Ok(i) => i.length as u64,
                Err(DecodeError::Truncated { .. }) => (bytes.len() as u64) - end,
                Err(_) => 4,
            };
        }
        prop_assert_eq!(end, bytes.len() as u64);
    }
}

/// A longer seeded run for manual fuzzing: `cargo test -p xfpx-amd-isa --test
/// fuzz_decode -- --ignored` (XFPX_FUZZ_ITERS sets the number of words).
#[test]
#[ignore]
fn long_random_run() {
    let iters: u64 = std::env::var("XFPX_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000_000);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..iters {
        let a = next();
        let b = next();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        let len = 4 + (i % 13) as usize;
        check(Target::ALL[(i % 4) as usize], &bytes[..len]);
    }
}
