//! Exactness of the flow tool on the emulator: every fixture launch of the
//! emulator suite and every application launch (tests/apps/amd) runs
//! original and rewritten for the flow tool on gfx90a and gfx942. The flow
//! records the rewritten kernel's own table holds equal, kernel by kernel,
//! what the emulator observes of the original kernel's values at the same
//! instructions (sources before, result after, classified by the common
//! rules); its outputs are bit-identical to the original's and the
//! emulator sees no hazard in the rewritten code. Kernels at their register
//! budget (the `budget_*` launches), which the flow tool refuses (its
//! probes need scratch above the allocation), are listed as skipped.

mod emulated;

use xfpx_amd::flow::{observation_of, observe_flow, replay_flow};

#[test]
fn instrumented_flows_equal_the_emulators_own() {
    let mut checked = 0;
    let mut with_flows = 0;
    let mut failures = Vec::new();
    let mut at_budget = Vec::new();
    emulated::each_original(|name, launch, opts, original| {
        let oracle = match observe_flow(launch, opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: the emulator's observation failed: {e:#}"));
                return;
            }
        };
        let flowed = match replay_flow(launch, opts) {
            Ok(r) => r,
            // The flow tool does not borrow registers: a kernel at its
            // register budget is not flow-instrumented (detect and screen are).
            Err(e)
                if ["at its register budget", "no site can borrow dead registers"]
                    .iter()
                    .any(|why| format!("{e:#}").contains(why)) =>
            {
                eprintln!("SKIPPED (the flow tool refuses kernels at their register budget): {name}: {e:#}");
                at_budget.push(name.to_string());
                return;
            }
            Err(e) => {
                failures.push(format!("{name}: {e:#}"));
                return;
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
        emulated::check_transparent(name, original, &flowed, &mut failures);
        checked += 1;
        with_flows += usize::from(!oracle.is_empty());
    });
    assert!(failures.is_empty(), "{} of {checked} launches wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 130, "only {checked} launches checked");
    assert!(at_budget.iter().all(|n| n.contains("/budget_")), "refused at the register budget: {at_budget:?}");
    assert!(with_flows >= 20, "only {with_flows} launches have any flow: the comparison proves little");
}
