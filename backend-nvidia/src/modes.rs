//! The detector's plan for one kernel in a run mode: every result checked
//! (`detect`), or only results not certain to reach a later check (`fast`,
//! thinned by [`xfpx_common::observe`] over the kernel's control flow,
//! without the results [`crate::sass::idioms`] shows cannot be exceptional).

use crate::sass::idioms::unexceptional_results;
use crate::sass::SassKernel;
use xfpx_common::config::Mode;
use xfpx_common::observe::{self, CfgError, ThinStats};
use xfpx_common::plan::{verify, Plan};
use xfpx_common::probe::{Action, ValueRef, When};
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, Tool};

/// A kernel's plan, and what thinning did to it.
#[derive(Debug, Clone)]
pub struct ModePlan {
    pub plan: Plan,
    /// Fast mode: the thinning; `None` in detect mode.
    pub thinned: Option<ThinStats>,
    /// Fast mode on a kernel whose control flow is not known: every
    /// result is checked, for this reason.
    pub fallback: Option<CfgError>,
}

/// Plan `kernel` for `mode`; the plan is verified.
pub fn plan_kernel(
    detector: &Detector,
    kernel: &SassKernel,
    sites: &mut SiteTable,
    mode: Mode,
) -> Result<ModePlan, String> {
    let plan = detector.plan(&kernel.view, sites);
    verify(&plan, &kernel.view, sites).map_err(|e| format!("internal: plan rejected: {e}"))?;
    if mode == Mode::Detect {
        return Ok(ModePlan { plan, thinned: None, fallback: None });
    }
    match kernel.cfg() {
        Ok(cfg) => {
            // results that cannot be exceptional need no check at all
            let clean = unexceptional_results(kernel, &cfg.block_of);
            let mut plan = plan;
            let before = plan.probes.len();
            plan.probes.retain(|p| {
                !(p.when == When::After
                    && clean.get(p.instr as usize).copied().unwrap_or(false)
                    && matches!(&p.action, Action::CheckFp { values, .. } if values.iter().all(|v| *v == ValueRef::Def(0))))
            });
            let unexceptional = before - plan.probes.len();
            let (thin, mut stats) = observe::thin(&plan, &kernel.view, &cfg);
            stats.checks += unexceptional;
            stats.dropped += unexceptional;
            stats.unexceptional += unexceptional;
            verify(&thin, &kernel.view, sites).map_err(|e| format!("internal: thinned plan rejected: {e}"))?;
            Ok(ModePlan { plan: thin, thinned: Some(stats), fallback: None })
        }
        Err(e) => Ok(ModePlan { plan, thinned: None, fallback: Some(e) }),
    }
}
