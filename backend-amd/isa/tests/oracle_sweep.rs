//! Differential test against the committed oracle sweep (`tests/golden/*.txt`,
//! produced by `tools/probe.py` from llvm-objdump): for every probe word and
//! target, our length, validity and rendering must equal the oracle's.

use std::collections::BTreeMap;
use xfpx_amd_isa::{decode, DecodeError, Target};

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    decoded: usize,
    matched: usize,
    unsupported: usize,
    oracle_unknown: usize,
    oracle_crash: usize,
    length_mismatch: usize,
    validity_mismatch: usize,
    text_mismatch: usize,
}

fn golden(prefix: &str, target: Target) -> String {
    let path = format!("{}/tests/golden/{prefix}{}.txt", env!("CARGO_MANIFEST_DIR"), target.name());
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn sweep(prefix: &str, target: Target, examples: &mut BTreeMap<String, Vec<String>>) -> Tally {
    let mut t = Tally::default();
    for line in golden(prefix, target).lines().filter(|l| !l.starts_with('#')) {
        let mut cols = line.splitn(3, '\t');
        let (Some(hex), Some(len), Some(text)) = (cols.next(), cols.next(), cols.next()) else {
            panic!("malformed golden line: {line}");
        };
        let words: Vec<u32> = hex.split(' ').map(|w| u32::from_str_radix(w, 16).expect("hex word")).collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let len: i64 = len.parse().expect("length");
        t.cases += 1;
        let ours = decode(target, &bytes);
        let mut note = |kind: &str, msg: String| {
            let v = examples.entry(format!("{prefix}{} {kind}", target.name())).or_default();
            if v.len() < 100_000 {
                v.push(msg);
            }
        };
        match (len, ours) {
            (-1, _) => t.oracle_crash += 1,
            (0, Ok(i)) => {
                t.validity_mismatch += 1;
                note("validity", format!("{hex}: oracle <unknown>, ours {i}"));
            }
            (0, Err(_)) => t.oracle_unknown += 1,
            (_, Err(DecodeError::Unsupported { .. })) => {
                t.unsupported += 1;
                note("unsupported", format!("{hex}: oracle {text}"));
            }
            (_, Err(e)) => {
                t.validity_mismatch += 1;
                note("validity", format!("{hex}: oracle {text}, ours {e}"));
            }
            (n, Ok(i)) => {
                t.decoded += 1;
                if i.length as i64 != n {
                    t.length_mismatch += 1;
                    note("length", format!("{hex}: oracle {n} {text}, ours {} {i}", i.length));
                } else if i.to_string() != text || i.text() != text {
                    t.text_mismatch += 1;
                    note("text", format!("{hex}:\n  oracle {text}\n  ours   {i}"));
                } else {
                    t.matched += 1;
                }
            }
        }
    }
    t
}

/// Known disagreements on the random words (`tests/golden/random-*.txt`,
/// `tools/probe.py --random 20000 --seed 1 --prefix random-`): combinations of
/// fields no compiler emits (misaligned register tuples on gfx90a+, reserved
/// bits, odd modifier mixes). Lengths must agree here too.
const KNOWN_RANDOM_MISMATCHES: [(Target, usize); 4] =
    [(Target::Gfx908, 453), (Target::Gfx90a, 139), (Target::Gfx942, 124), (Target::Gfx950, 458)];

/// Known disagreements per target (validity + text) on the opcode sweep: none
/// remain, so any disagreement fails the test. Lengths must always agree.
const KNOWN_MISMATCHES: [(Target, usize); 4] =
    [(Target::Gfx908, 0), (Target::Gfx90a, 0), (Target::Gfx942, 0), (Target::Gfx950, 0)];

fn check(prefix: &str, known: &[(Target, usize)], min_decoded: usize) {
    let mut examples = BTreeMap::new();
    let mut failures = Vec::new();
    for target in Target::ALL {
        let t = sweep(prefix, target, &mut examples);
        println!(
            "{prefix}{}: {} cases, decoded {} (matched {}), unsupported {}, llvm-unknown {}, oracle crashes {}; mismatches: length {}, validity {}, text {}",
            target.name(), t.cases, t.decoded, t.matched, t.unsupported, t.oracle_unknown, t.oracle_crash,
            t.length_mismatch, t.validity_mismatch, t.text_mismatch
        );
        let known = known.iter().find(|k| k.0 == target).map_or(0, |k| k.1);
        if t.length_mismatch != 0 {
            failures.push(format!("{target}: {} length mismatches", t.length_mismatch));
        }
        if t.validity_mismatch + t.text_mismatch > known {
            failures.push(format!(
                "{target}: {} validity/text mismatches, more than the {known} known",
                t.validity_mismatch + t.text_mismatch
            ));
        }
        assert!(t.decoded > min_decoded, "{target}: only {} words decoded", t.decoded);
    }
    if let Ok(path) = std::env::var("XFPX_SWEEP_REPORT") {
        let mut out = String::new();
        for (k, v) in &examples {
            out.push_str(&format!("== {k}\n"));
            for e in v {
                out.push_str(e);
                out.push('\n');
            }
        }
        std::fs::write(format!("{path}{prefix}"), out).expect("write report");
    }
    assert!(failures.is_empty(), "{} (set XFPX_SWEEP_REPORT=FILE for details)", failures.join("; "));
}

#[test]
fn opcode_sweep_matches_llvm_objdump() {
    check("", &KNOWN_MISMATCHES, 20_000);
}

/// Random words (seeded, biased towards the encodings) disassembled by the
/// oracle: a differential fuzz run with committed results.
#[test]
fn random_words_match_llvm_objdump() {
    check("random-", &KNOWN_RANDOM_MISMATCHES, 5_000);
}
