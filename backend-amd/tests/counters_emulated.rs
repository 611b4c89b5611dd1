//! Exactness of the counters on the emulator: every fixture launch of the
//! emulator suite and every application launch (tests/apps/amd) runs
//! original and rewritten for the counters tool on gfx90a and gfx942. The
//! counters folded from the rewritten kernel's own table equal the
//! emulator's own counts of the original kernel (wave and thread
//! instructions, EXEC saves and restores), its outputs are bit-identical
//! and the emulator sees no hazard in the rewritten code.

use std::path::{Path, PathBuf};

use xfpx_amd_emu::{replay, ReplayOptions};
use xfpx_common::counters::WindowCounters;

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

fn launches(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("launches")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    v.sort();
    v
}

fn all_launches() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = launches(&root.join("emulator/fixtures/launches"));
    v.extend(launches(&root.join("../tests/apps/amd/launches")));
    v
}

/// Instructions or operand forms the emulator does not execute yet (its
/// own coverage, not the counters').
fn emulator_lacks(e: &str) -> bool {
    e.contains("Unsupported") || e.contains("unsupported")
}

/// A launch built for other targets only.
fn not_for(e: &str) -> bool {
    e.contains("the launch is for")
}

/// What the counters of a launch must be, from the emulator's own counts.
fn expected(c: &xfpx_amd_emu::ExecCounts) -> WindowCounters {
    WindowCounters {
        index: 0,
        warp_instructions: c.wave_instructions,
        thread_instructions: c.thread_instructions,
        thread_instructions_pred_on: c.thread_instructions,
        inactive_lanes: 64 * c.wave_instructions - c.thread_instructions,
        divergent_branches: c.mask_saves,
        reconvergences: c.mask_restores,
        mix: Default::default(),
    }
}

#[test]
fn instrumented_counts_equal_the_emulators_own() {
    let mut checked = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for launch in all_launches() {
        for target in TARGETS {
            let name = format!("{} on {target}", launch.display());
            let opts = ReplayOptions { target: Some(target.to_string()), ..ReplayOptions::default() };
            let original = match replay(&launch, &opts) {
                Ok(o) => o,
                Err(e) if not_for(&e.0) => continue,
                Err(e) if emulator_lacks(&e.0) => {
                    skipped.push(format!("{name}: {}", e.0));
                    continue;
                }
                Err(e) => panic!("{name}: the original does not replay: {}", e.0),
            };
            let counted = match xfpx_amd::replay::replay_counters(&launch, &opts) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{name}: {e:#}"));
                    continue;
                }
            };
            let section = counted.report.counters.as_ref().expect("a counters section");
            let got = section.kernels[0].total();
            let mix_total: u64 = got.mix.values().sum();
            let got = WindowCounters { mix: Default::default(), ..got };
            let want = expected(&original.stats.counts);
            if got != want {
                failures.push(format!("{name}: counted {got:?}, the emulator executed {want:?}"));
            }
            if mix_total != want.warp_instructions {
                failures.push(format!("{name}: the mix sums to {mix_total}, not {}", want.warp_instructions));
            }
            let outputs: Vec<(&str, &[u8])> =
                original.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
            let rewritten: Vec<(&str, &[u8])> =
                counted.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
            if outputs != rewritten {
                failures.push(format!("{name}: outputs differ from the original's"));
            }
            if counted.hazards != 0 {
                failures.push(format!("{name}: {} hazards in the rewritten code", counted.hazards));
            }
            checked += 1;
        }
    }
    for s in &skipped {
        eprintln!("SKIPPED (the emulator cannot run the original): {s}");
    }
    assert!(failures.is_empty(), "{} of {checked} launches wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 130, "only {checked} launches checked");
}
