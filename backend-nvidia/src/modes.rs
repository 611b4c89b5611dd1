//! The detector's plan for one kernel in a run mode: every result checked
//! (`detect`), or only results not certain to reach a later check (`fast`,
//! thinned by [`xfpx_common::observe`] over the kernel's control flow,
//! without the results [`crate::sass::idioms`] shows cannot be exceptional).

use crate::sass::idioms::{reads_register_test, unexceptional_results};
use crate::sass::SassKernel;
use std::collections::BTreeSet;
use xfpx_common::cfg::CfgError;
use xfpx_common::class::FpFormat;
use xfpx_common::config::Mode;
use xfpx_common::observe::{self, ThinStats};
use xfpx_common::plan::{verify, Plan};
use xfpx_common::probe::{Action, ValueRef, When};
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, Tool};
use xfpx_common::view::Operand;

/// The modes this backend plans (the others are refused in one line).
pub const MODES: &[Mode] = &[Mode::Fast, Mode::Detect];

/// A kernel's plan, and what thinning did to it.
#[derive(Debug, Clone)]
pub struct ModePlan {
    pub plan: Plan,
    /// Fast mode: the thinning; `None` in detect mode.
    pub thinned: Option<ThinStats>,
    /// Fast mode on a kernel whose control flow is not known: every
    /// result is checked, for this reason.
    pub fallback: Option<CfgError>,
    /// Fast mode on a kernel with branches of unknown target: thinned,
    /// but no check is dropped for repeating an earlier one (what was
    /// checked before an instruction is not known there), for this reason.
    pub partial_flow: Option<CfgError>,
    /// The formats of every floating-point value the detector checks
    /// before thinning (what launch screening reads the kernel's buffers as).
    pub formats: BTreeSet<FpFormat>,
}

/// The formats the checks of `plan` look at.
fn checked_formats(plan: &Plan) -> BTreeSet<FpFormat> {
    plan.probes
        .iter()
        .filter_map(|p| match &p.action {
            Action::CheckFp { format, .. } => Some(*format),
            _ => None,
        })
        .collect()
}

/// Plan `kernel` for `mode`; the plan is verified.
pub fn plan_kernel(
    detector: &Detector,
    kernel: &SassKernel,
    sites: &mut SiteTable,
    mode: Mode,
) -> Result<ModePlan, String> {
    let mut plan = detector.plan(&kernel.view, sites);
    let cfg = kernel.cfg();
    // comparisons of the compiler's register tests read no value of the
    // program (both modes)
    if let Ok(cfg) = &cfg {
        drop_register_test_reads(&mut plan, kernel, &cfg.block_of);
    }
    verify(&plan, &kernel.view, sites).map_err(|e| format!("internal: plan rejected: {e}"))?;
    let formats = checked_formats(&plan);
    let unthinned = |plan, formats, fallback| ModePlan { plan, thinned: None, fallback, partial_flow: None, formats };
    if mode == Mode::Detect {
        return Ok(unthinned(plan, formats, None));
    }
    let slots = crate::sass::slots::slot_effects(kernel);
    match cfg {
        Ok(cfg) => {
            // results that cannot be exceptional need no check at all
            let clean = unexceptional_results(kernel, &cfg.block_of);
            let before = plan.probes.len();
            plan.probes.retain(|p| {
                !(p.when == When::After
                    && clean.get(p.instr as usize).copied().unwrap_or(false)
                    && matches!(&p.action, Action::CheckFp { values, .. } if values.iter().all(|v| *v == ValueRef::Def(0))))
            });
            let unexceptional = before - plan.probes.len();
            let (thin, mut stats) = observe::thin_with_slots(&plan, &kernel.view, &cfg, &slots);
            stats.checks += unexceptional;
            stats.dropped += unexceptional;
            stats.unexceptional += unexceptional;
            verify(&thin, &kernel.view, sites).map_err(|e| format!("internal: thinned plan rejected: {e}"))?;
            Ok(ModePlan { plan: thin, thinned: Some(stats), fallback: None, partial_flow: None, formats })
        }
        // an indirect branch: thinned over the graph that knows where it
        // does not go (the compiler-idiom steps, which read a block's
        // instructions as running in sequence, are left out)
        Err(e @ CfgError::UnknownTarget { .. }) => match kernel.cfg_with_unknown_exits() {
            Ok(cfg) => {
                let (thin, stats) = observe::thin_with_slots(&plan, &kernel.view, &cfg, &slots);
                verify(&thin, &kernel.view, sites).map_err(|e| format!("internal: thinned plan rejected: {e}"))?;
                Ok(ModePlan { plan: thin, thinned: Some(stats), fallback: None, partial_flow: Some(e), formats })
            }
            Err(e) => Ok(unthinned(plan, formats, Some(e))),
        },
        Err(e) => Ok(unthinned(plan, formats, Some(e))),
    }
}

/// Remove, from checks placed before an instruction, the values it reads
/// from a register test ([`reads_register_test`]); a check left with no
/// value goes.
fn drop_register_test_reads(plan: &mut Plan, kernel: &SassKernel, block_of: &[usize]) {
    for p in &mut plan.probes {
        let Action::CheckFp { values, .. } = &mut p.action else { continue };
        if p.when != When::Before {
            continue;
        }
        let ins = &kernel.view.instrs[p.instr as usize];
        values.retain(|v| {
            let reg = match v {
                ValueRef::Use(n) => ins.uses.get(*n as usize).and_then(Operand::reg),
                _ => None,
            };
            !reg.is_some_and(|r| reads_register_test(kernel, block_of, p.instr as usize, r))
        });
    }
    plan.probes.retain(|p| !matches!(&p.action, Action::CheckFp { values, .. } if values.is_empty()));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sass::{build_kernel, parse_listing};

    const DIVISION_TEST: &str = "\tFunction : k\n /*0000*/ DFMA R234, R6, R4, R234 ;\n \
        /*0010*/ FFMA R0, RZ, R9, R235 ;\n /*0020*/ FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT ;\n \
        /*0030*/ FSETP.GT.AND P1, PT, |R3|, 1.5, PT ;\n /*0040*/ @P0 BRA 0x60 ;\n /*0050*/ STG.E.64 desc[UR4][R2.64], R234 ;\n \
        /*0060*/ EXIT ;\n";

    /// An f64 accumulator of a loop, stored once after it (as an ODE
    /// integrator's state is): fast mode checks it where the loop exits,
    /// not in every iteration; the store reads both words of the pair.
    #[test]
    fn an_f64_loop_accumulator_stored_after_the_loop_is_checked_at_the_exit() {
        let listing = "\tFunction : k\n /*0000*/ DMUL R4, R2, R2 ;\n /*0010*/ DFMA R6, R4, R8, R6 ;\n \
            /*0020*/ IADD3 R10, R10, 0x1, RZ ;\n /*0030*/ ISETP.GE.AND P0, PT, R10, R11, PT ;\n \
            /*0040*/ @!P0 BRA 0x0 ;\n /*0050*/ STG.E.64 desc[UR4][R12.64], R6 ;\n /*0060*/ EXIT ;\n";
        let k = build_kernel(&parse_listing(listing).unwrap()[0]);
        let mut sites = SiteTable::new();
        let planned = plan_kernel(&Detector::default(), &k, &mut sites, Mode::Fast).unwrap();
        let places: Vec<(u32, When)> = planned.plan.probes.iter().map(|p| (p.instr, p.when)).collect();
        assert_eq!(places, vec![(5, When::Before)], "one check, at the loop's exit: {places:?}");
    }

    #[test]
    fn comparisons_of_register_tests_are_not_checked_in_either_mode() {
        let k = build_kernel(&parse_listing(DIVISION_TEST).unwrap()[0]);
        for mode in [Mode::Detect, Mode::Fast] {
            let mut sites = SiteTable::new();
            let planned = plan_kernel(&Detector::default(), &k, &mut sites, mode).unwrap();
            let at = |i: u32| planned.plan.probes.iter().filter(|p| p.instr == i).count();
            // the quotient is checked (detect), the test's comparison is
            // not, the comparison of a value of the program is
            assert_eq!((at(1), at(2), at(3)), (0, 0, 1), "{mode:?}");
            if mode == Mode::Detect {
                assert_eq!(at(0), 1);
            }
            // what screening reads: the quotient's f64 and the compared f32
            assert_eq!(
                planned.formats.iter().copied().collect::<Vec<_>>(),
                vec![FpFormat::F32, FpFormat::F64],
                "{mode:?}"
            );
        }
    }
}
