//! Exactness of the counters on the emulator: every fixture launch of the
//! emulator suite and every application launch (tests/apps/amd) runs
//! original and rewritten for the counters tool on gfx90a and gfx942. The
//! counters folded from the rewritten kernel's own table equal the
//! emulator's own counts of the original kernel (wave and thread
//! instructions, EXEC saves and restores), its outputs are bit-identical
//! and the emulator sees no hazard in the rewritten code. A kernel the
//! counters tool must refuse (`common::REFUSED_KERNEL`) is refused with
//! its reason.

mod common;
mod emulated;

use common::REFUSED_KERNEL as REFUSED;

use xfpx_common::counters::WindowCounters;

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
    let mut refused = 0;
    let mut failures = Vec::new();
    emulated::each_original(|name, launch, opts, original| {
        let counted = match xfpx_amd::replay::replay_counters(launch, opts) {
            Ok(r) => r,
            Err(e) => {
                let why = format!("{e:#}");
                let (kernel, reason) = REFUSED;
                if launch.file_stem().is_some_and(|f| f == kernel) && why.contains(reason) {
                    refused += 1;
                } else {
                    failures.push(format!("{name}: {why}"));
                }
                return;
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
        emulated::check_transparent(name, original, &counted, &mut failures);
        checked += 1;
    });
    assert!(failures.is_empty(), "{} of {checked} launches wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 130, "only {checked} launches checked");
    // Each refusal named above happens, on both targets.
    assert_eq!(refused, 2, "{} refused on both targets", REFUSED.0);
}
