//! Exactness of the flow tool on the emulator: every fixture launch of the
//! emulator suite and every application launch (tests/apps/amd) runs
//! original and rewritten for the flow tool on gfx90a and gfx942. The flow
//! records the rewritten kernel's own table holds equal, kernel by kernel,
//! what the emulator observes of the original kernel's values at the same
//! instructions (sources before, result after, classified by the common
//! rules); its outputs are bit-identical to the original's and the
//! emulator sees no hazard in the rewritten code.

use std::path::{Path, PathBuf};

use xfpx_amd::flow::{observation_of, observe_flow, replay_flow};
use xfpx_amd_emu::{replay, ReplayOptions};

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

/// Instructions or operand forms the emulator does not execute yet.
fn emulator_lacks(e: &str) -> bool {
    e.contains("Unsupported") || e.contains("unsupported")
}

fn not_for(e: &str) -> bool {
    e.contains("the launch is for")
}

#[test]
fn instrumented_flows_equal_the_emulators_own() {
    let mut checked = 0;
    let mut with_flows = 0;
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
            let oracle = match observe_flow(&launch, &opts) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name}: the emulator's observation failed: {e:#}"));
                    continue;
                }
            };
            let flowed = match replay_flow(&launch, &opts) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{name}: {e:#}"));
                    continue;
                }
            };
            let section = flowed.report.flow.as_ref().expect("a flow section");
            let got = observation_of(section);
            if got != oracle {
                let only_got: Vec<_> = got.iter().filter(|(k, v)| oracle.get(*k) != Some(v)).collect();
                let only_want: Vec<_> = oracle.iter().filter(|(k, v)| got.get(*k) != Some(v)).collect();
                failures.push(format!("{name}: recorded {only_got:?}, the emulator saw {only_want:?}"));
            }
            let refused: Vec<String> = flowed
                .report
                .kernels
                .iter()
                .filter_map(|k| k.coverage.as_ref())
                .flat_map(|c| c.refused.iter().map(|r| r.reason.clone()))
                .collect();
            if !refused.is_empty() {
                failures.push(format!("{name}: sites refused: {refused:?}"));
            }
            let outputs: Vec<(&str, &[u8])> =
                original.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
            let rewritten: Vec<(&str, &[u8])> =
                flowed.outputs.iter().map(|o| (o.name.as_str(), o.bytes.as_slice())).collect();
            if outputs != rewritten {
                failures.push(format!("{name}: outputs differ from the original's"));
            }
            if flowed.hazards != 0 {
                failures.push(format!("{name}: {} hazards in the rewritten code", flowed.hazards));
            }
            checked += 1;
            with_flows += usize::from(!oracle.is_empty());
        }
    }
    for s in &skipped {
        eprintln!("SKIPPED (the emulator cannot run the original): {s}");
    }
    assert!(failures.is_empty(), "{} of {checked} launches wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 130, "only {checked} launches checked");
    assert!(with_flows >= 20, "only {with_flows} launches have any flow: the comparison proves little");
}
