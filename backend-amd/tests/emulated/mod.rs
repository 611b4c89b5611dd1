//! Shared by the tests that run every launch original and rewritten on the
//! emulator (counters, flow): the launches, their replay on each target and
//! the checks every rewritten run must pass whatever the tool.

use std::path::{Path, PathBuf};

use xfpx_amd::replay::RewrittenReplay;
use xfpx_amd_emu::{replay, ReplayOptions, ReplayOutcome};

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

/// Every fixture launch of the emulator suite and every application launch
/// (tests/apps/amd).
fn all_launches() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = launches(&root.join("emulator/fixtures/launches"));
    v.extend(launches(&root.join("../tests/apps/amd/launches")));
    v
}

/// Instructions or operand forms the emulator does not execute yet (its
/// own coverage, not the tool's).
fn emulator_lacks(e: &str) -> bool {
    e.contains("Unsupported") || e.contains("unsupported")
}

/// A launch built for other targets only.
fn not_for(e: &str) -> bool {
    e.contains("the launch is for")
}

/// Replays every launch on every target it is built for and hands `check`
/// its name, the launch, the options and the original's run. Launches the
/// emulator cannot execute are printed as SKIPPED; one whose original does
/// not replay otherwise is a panic.
pub fn each_original(mut check: impl FnMut(&str, &Path, &ReplayOptions, &ReplayOutcome)) {
    let mut skipped = Vec::new();
    for launch in all_launches() {
        for target in TARGETS {
            let name = format!("{} on {target}", launch.display());
            let opts = ReplayOptions { target: Some(target.to_string()), ..ReplayOptions::default() };
            match replay(&launch, &opts) {
                Ok(original) => check(&name, &launch, &opts, &original),
                Err(e) if not_for(&e.0) => {}
                Err(e) if emulator_lacks(&e.0) => skipped.push(format!("{name}: {}", e.0)),
                Err(e) => panic!("{name}: the original does not replay: {}", e.0),
            }
        }
    }
    for s in &skipped {
        eprintln!("SKIPPED (the emulator cannot run the original): {s}");
    }
}

/// What every rewritten run must keep: outputs bit-identical to the
/// original's and no hazard in the rewritten code; each breach is pushed.
pub fn check_transparent(
    name: &str,
    original: &ReplayOutcome,
    rewritten: &RewrittenReplay,
    failures: &mut Vec<String>,
) {
    let outputs: Vec<(&str, &[u8])> = original.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
    let got: Vec<(&str, &[u8])> = rewritten.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
    if outputs != got {
        failures.push(format!("{name}: outputs differ from the original's"));
    }
    if rewritten.hazards != 0 {
        failures.push(format!("{name}: {} hazards in the rewritten code", rewritten.hazards));
    }
}
