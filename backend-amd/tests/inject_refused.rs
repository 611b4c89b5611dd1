//! Fault-injection actions are not lowered on AMD yet: the rewriter must
//! refuse a plan that asks for one with a stated reason, never panic or
//! emit a kernel without it.

use std::path::Path;
use xfpx_amd::rewrite::{self, KernelState, RewriteOptions};
use xfpx_common::fault::FaultLocation;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, Change, CounterDef, CounterId, CounterKind, Probe, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::KernelView;

/// A trap before every kernel's first instruction.
#[derive(Debug)]
struct TrapAtEntry;

impl xfpx_common::tool::Tool for TrapAtEntry {
    fn name(&self) -> &'static str {
        "trap-at-entry"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: "activations".into(), kind: CounterKind::ThreadExecutions });
        let ins = &view.instrs[0];
        let site = sites.intern(&view.name, ins.offset, &ins.text, None);
        plan.probes.push(Probe {
            instr: 0,
            site,
            when: When::Before,
            action: Action::Inject { change: Change::Trap, threads: FaultLocation::sm(0), activations: CounterId(0) },
        });
        plan
    }
}

#[test]
fn injection_plans_are_refused_with_a_reason() {
    let co = Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/gfx942/elem_f32.co");
    let bytes = std::fs::read(&co).expect("fixture");
    match rewrite::rewrite_with(&bytes, &RewriteOptions::default(), &TrapAtEntry) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(out) => {
            assert!(!out.kernels.is_empty());
            for k in &out.kernels {
                match &k.state {
                    KernelState::Skipped { reason } => assert!(reason.contains("not lowered"), "{}: {reason}", k.name),
                    other => panic!("{} was {other:?}, not refused", k.name),
                }
            }
        }
    }
}
