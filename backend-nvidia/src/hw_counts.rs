//! The counters tool with hardware counters (`--counters hardware`), free
//! of FFI: the performance-monitor metrics the CUPTI library reads per
//! launch, which counters of [`xfpx_common::counters`] each gives, and the
//! launches waiting for their values.
//!
//! The CUPTI library (`xfpx_cupti.cpp`) instruments nothing: CUPTI's range
//! profiler, in auto-range mode with one pass, makes every kernel launch a
//! range and reads [`METRICS`] for it. How each matches the instrumented
//! counter (checked against Nsight Compute by `tests/gpu/hwcounters-check.sh`):
//!
//! | metric | counter | match |
//! |---|---|---|
//! | `smsp__inst_executed.sum` | `warp_instructions` | the same count: warp instructions executed, predicated-off ones included |
//! | `smsp__thread_inst_executed.sum` | `thread_instructions` | the same count: once per active lane |
//! | `smsp__thread_inst_executed_pred_on.sum` | `thread_instructions_pred_on` | the same count: once per active lane whose guard held |
//! | (formed) `32 * warp - thread` | `inactive_lanes` | exact: the same formula as the instrumented fold |
//!
//! Divergent branches, reconvergences and the instruction mix have no
//! performance-monitor counter: Nsight Compute's branch metrics
//! (`smsp__sass_branch_targets*`) are `sass` metrics, counted by patching
//! the kernel's code, i.e. instrumentation. They are left at 0 and the
//! section's source says they were not counted, so `stack` and
//! `divergence` cannot be formed; `inact`, `lane_efficiency` and `pred_on`
//! can, per launch (the monitors give a launch's total, not a window's).

use std::collections::{BTreeMap, HashMap};
use xfpx_common::counters::{LaunchCounters, WindowCounters};

/// The metrics read per launch, in the order the CUPTI library hands
/// their values over.
pub const METRICS: [&str; 3] =
    ["smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "smsp__thread_inst_executed_pred_on.sum"];

/// Lanes per warp on NVIDIA GPUs.
const WARP_SIZE: u64 = crate::counts::WARP_SIZE as u64;

/// Why a launch's metric values were not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HwError {
    #[error("no counted launch has serial {0}")]
    UnknownLaunch(u64),
    #[error("{got} metric values, {} expected", METRICS.len())]
    Values { got: usize },
    #[error("metric {metric} is {value}, not a count")]
    NotACount { metric: &'static str, value: f64 },
    #[error("the metrics do not add up: {0}")]
    Inconsistent(String),
}

/// The counters of one launch from the values of [`METRICS`]: one window
/// (index 0) holding the launch's totals.
pub fn fold_metrics(values: &[f64]) -> Result<WindowCounters, HwError> {
    let [warp, thread, pred_on] = values else { return Err(HwError::Values { got: values.len() }) };
    let count = |metric, value: f64| {
        // counts up to 2^53 are exact in a double
        if (0.0..9.007_199_254_740_992e15).contains(&value) && value.fract() == 0.0 {
            Ok(value as u64)
        } else {
            Err(HwError::NotACount { metric, value })
        }
    };
    let (warp, thread, pred_on) =
        (count(METRICS[0], *warp)?, count(METRICS[1], *thread)?, count(METRICS[2], *pred_on)?);
    if thread > WARP_SIZE * warp || pred_on > thread {
        return Err(HwError::Inconsistent(format!(
            "{warp} warp instructions, {thread} thread instructions, {pred_on} with their guard held"
        )));
    }
    Ok(WindowCounters {
        index: 0,
        warp_instructions: warp,
        thread_instructions: thread,
        thread_instructions_pred_on: pred_on,
        inactive_lanes: WARP_SIZE * warp - thread,
        divergent_branches: 0,
        reconvergences: 0,
        mix: BTreeMap::new(),
    })
}

/// The launches counted by the hardware so far, waiting for their values.
#[derive(Debug, Default)]
pub struct HwRun {
    /// By serial: the kernel's reported name and the launch's index.
    pending: HashMap<u64, (String, u64)>,
    /// Launches whose values did not arrive, per reason.
    lost: BTreeMap<String, u64>,
}

impl HwRun {
    pub fn new() -> HwRun {
        HwRun::default()
    }

    /// Launch `serial`, the `index`-th of `kernel`, is counted.
    pub fn launched(&mut self, serial: u64, kernel: &str, index: u64) {
        self.pending.insert(serial, (kernel.to_string(), index));
    }

    /// The counters of launch `serial` from its metric values.
    pub fn fold(&mut self, serial: u64, values: &[f64]) -> Result<(String, LaunchCounters), HwError> {
        let (kernel, index) = self.pending.remove(&serial).ok_or(HwError::UnknownLaunch(serial))?;
        match fold_metrics(values) {
            Ok(w) => Ok((kernel, LaunchCounters { launch: index, windows: vec![w] })),
            Err(e) => {
                *self.lost.entry(e.to_string()).or_default() += 1;
                Err(e)
            }
        }
    }

    /// Launch `serial`'s values will not come, for `why`; false when it
    /// was not counted (a kernel the filters leave out).
    pub fn lose(&mut self, serial: u64, why: &str) -> bool {
        let known = self.pending.remove(&serial).is_some();
        if known {
            *self.lost.entry(why.to_string()).or_default() += 1;
        }
        known
    }

    /// What the run's notes say of launches counted but not read: one
    /// line per reason, and one for those still pending.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .lost
            .iter()
            .map(|(why, n)| format!("{n} launches not counted by the hardware counters: {why}"))
            .collect();
        if !self.pending.is_empty() {
            out.push(format!(
                "{} launches counted by the hardware counters were not read back (the program ended before the tool could read them)",
                self.pending.len()
            ));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn metric_values_fold_into_one_window_per_launch() {
        // matmul's launch on the H100 (tests/apps/results/h100.txt)
        let w = fold_metrics(&[27852800.0, 891289600.0, 848560128.0]).unwrap();
        assert_eq!((w.index, w.warp_instructions, w.thread_instructions), (0, 27852800, 891289600));
        assert_eq!(w.thread_instructions_pred_on, 848560128);
        assert_eq!(w.inactive_lanes, 0);
        assert_eq!((w.divergent_branches, w.reconvergences, w.mix.len()), (0, 0, 0));
        // reduce: a few lanes idle
        let w = fold_metrics(&[5656755.0, 180666635.0, 170426885.0]).unwrap();
        assert_eq!(w.inactive_lanes, 32 * 5656755 - 180666635);
        let n = w.normalised(32);
        assert!((n.inact + n.lane_efficiency - 1.0).abs() < 1e-12);
    }

    #[test]
    fn values_that_are_no_counts_are_refused() {
        assert_eq!(fold_metrics(&[1.0, 2.0]), Err(HwError::Values { got: 2 }));
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e17] {
            let e = fold_metrics(&[bad, 0.0, 0.0]).unwrap_err();
            assert!(matches!(e, HwError::NotACount { metric: "smsp__inst_executed.sum", .. }), "{bad}: {e}");
        }
        assert!(matches!(fold_metrics(&[1.0, 33.0, 0.0]), Err(HwError::Inconsistent(_))));
        assert!(matches!(fold_metrics(&[1.0, 32.0, 33.0]), Err(HwError::Inconsistent(_))));
        assert!(fold_metrics(&[0.0, 0.0, 0.0]).is_ok());
    }

    #[test]
    fn launches_wait_for_their_values_once() {
        let mut run = HwRun::new();
        run.launched(4, "k", 0);
        run.launched(5, "k", 1);
        run.launched(6, "j", 0);
        let (k, l) = run.fold(5, &[2.0, 64.0, 60.0]).unwrap();
        assert_eq!((k.as_str(), l.launch, l.windows.len()), ("k", 1, 1));
        assert_eq!(run.fold(5, &[2.0, 64.0, 60.0]), Err(HwError::UnknownLaunch(5)));
        assert!(run.fold(4, &[1.0, 64.0, 0.0]).is_err());
        assert!(run.lose(6, "its range was dropped"));
        assert!(!run.lose(9, "never counted"));
        run.launched(7, "k", 2);
        assert_eq!(
            run.notes(),
            [
                "1 launches not counted by the hardware counters: its range was dropped",
                "1 launches not counted by the hardware counters: the metrics do not add up: 1 warp instructions, 64 thread instructions, 0 with their guard held",
                "1 launches counted by the hardware counters were not read back (the program ended before the tool could read them)",
            ]
        );
    }
}
