//! A fault injection the AMD rewriter cannot lower (here an IOC fault on a
//! scalar load, which has no other operation) is refused with a stated
//! reason, never a panic or a kernel silently without it.

use std::path::Path;
use xfpx_amd::rewrite::{self, KernelState, RewriteOptions};
use xfpx_common::fault::FaultLocation;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, Change, CounterDef, CounterId, CounterKind, Probe, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::KernelView;

/// An IOC fault on every kernel's first memory load.
#[derive(Debug)]
struct OtherOperationOfALoad;

impl xfpx_common::tool::Tool for OtherOperationOfALoad {
    fn name(&self) -> &'static str {
        "ioc-on-a-load"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: "activations".into(), kind: CounterKind::ThreadExecutions });
        let instr = view.instrs.iter().position(|i| i.text.starts_with("s_load")).expect("a scalar load");
        let ins = &view.instrs[instr];
        let site = sites.intern(&view.name, ins.offset, ins.text.clone(), None);
        let change = Change::OtherOperation { def: 0 };
        plan.probes.push(Probe {
            instr: instr as u32,
            site,
            when: When::After,
            action: Action::Inject { change, threads: FaultLocation::sm(0), activations: CounterId(0) },
        });
        plan
    }
}

#[test]
fn an_injection_amd_cannot_lower_is_refused_with_a_reason() {
    let co = Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/gfx942/elem_f32.co");
    let bytes = std::fs::read(&co).expect("fixture");
    match rewrite::rewrite_with(&bytes, &RewriteOptions::default(), &OtherOperationOfALoad) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(out) => {
            assert!(!out.kernels.is_empty());
            for k in &out.kernels {
                match &k.state {
                    KernelState::Skipped { reason } => {
                        assert!(reason.contains("no other operation"), "{}: {reason}", k.name)
                    }
                    other => panic!("{} was {other:?}, not refused", k.name),
                }
            }
        }
    }
}
