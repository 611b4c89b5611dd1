//! The tool core with hardware counters (`--counters hardware`, the CUPTI
//! library): which launches are counted, the metric values the library
//! reads back per launch folded into the same `counters` events and
//! report section as instrumented counters (source `hardware`), and what
//! the notes say when the counters are lost or not available.

use super::ToolCore;
use crate::counts::WARP_SIZE;
use crate::hw_counts::{HwRun, METRICS};
use xfpx_common::counters::CounterSource;
use xfpx_common::event::Event;

impl ToolCore {
    /// The run counts with hardware counters: from now on, every admitted
    /// launch is counted.
    pub(super) fn start_hardware(&mut self) {
        self.hardware = Some(HwRun::new());
        self.note(&format!(
            "counters read from the GPU's performance monitors (CUPTI's range profiler, one range per launch, one pass: {}); \
             no kernel is instrumented, launches run one at a time, and divergent branches, reconvergences and the \
             instruction mix are not counted",
            METRICS.join(", ")
        ));
    }

    /// Whether hardware counters count launch `serial` (the `index`-th of
    /// `kernel`), when `wanted` (admitted by the filters, in the first
    /// context, under the record limit).
    pub(super) fn hardware_counts(&mut self, serial: u64, kernel: &str, index: u64, wanted: bool) -> bool {
        match (&mut self.hardware, wanted) {
            (Some(hw), true) => {
                hw.launched(serial, kernel, index);
                true
            }
            _ => false,
        }
    }

    /// Whether this run reads hardware counters (and they are available).
    pub fn hardware_counting(&self) -> bool {
        self.hardware.is_some()
    }

    /// The metric the library reads `index`-th, `None` past the last.
    pub fn hardware_metric(index: usize) -> Option<&'static str> {
        METRICS.get(index).copied()
    }

    /// The metric values of launch `serial` ([`METRICS`] order), read back
    /// after it ran: its counters go to the report and the CLI. Values of
    /// a launch that was not counted (a kernel the filters leave out) are
    /// dropped.
    pub fn on_hardware_counters(&mut self, serial: u64, values: &[f64]) {
        let Some(hw) = &mut self.hardware else { return };
        match hw.fold(serial, values) {
            Ok((kernel, launch)) => {
                let source = CounterSource::Hardware;
                self.stream.collector_mut().add_launch_counters(&kernel, 0, WARP_SIZE, source, launch.clone());
                self.emit(Event::Counters { kernel, window_blocks: 0, warp_size: WARP_SIZE, source, launch });
            }
            Err(crate::hw_counts::HwError::UnknownLaunch(_)) => {}
            Err(e) => {
                let kernel = self.launches.get(serial as usize).map(|l| format!("{} launch {}", l.0, l.1));
                self.note(&format!("{} not counted: {e}", kernel.unwrap_or_else(|| format!("launch {serial}"))));
            }
        }
    }

    /// The values of launch `serial` will not come, for `why` (its range
    /// was dropped, the counter data could not be read).
    pub fn hardware_lost(&mut self, serial: u64, why: &str) {
        if let Some(hw) = &mut self.hardware {
            hw.lose(serial, why);
        }
    }

    /// The library cannot read hardware counters (`why`, one line): nothing
    /// is counted from now on, and launches run unchecked.
    pub fn hardware_unavailable(&mut self, why: &str) {
        if let Some(hw) = self.hardware.take() {
            for text in hw.notes() {
                self.note(&text);
            }
            self.note(&format!("hardware counters are not available: {why}; launches after this ran uncounted"));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::KernelNames;
    use super::*;
    use xfpx_common::config::RunSettings;
    use xfpx_common::report::Report;
    use xfpx_common::tool::ToolKind;

    fn core(name: &str, kernels: Vec<String>) -> (ToolCore, std::path::PathBuf) {
        let report = std::env::temp_dir().join(format!("xfpx-hw-{}-{name}.json", std::process::id()));
        let config = RunSettings {
            report_path: report.clone(),
            tool: ToolKind::Counters,
            counter_source: CounterSource::Hardware,
            exclude: kernels,
            ..RunSettings::default()
        }
        .check()
        .unwrap();
        (ToolCore::new(config).unwrap(), report)
    }

    fn names(n: &'static str) -> KernelNames<'static> {
        KernelNames { mangled: n, demangled: n }
    }

    #[test]
    fn launches_are_counted_from_their_metric_values() {
        let (mut c, path) = core("counted", vec!["^skip".into()]);
        assert!(c.hardware_counting() && !c.counting());
        assert_eq!(
            (0..4).map(ToolCore::hardware_metric).collect::<Vec<_>>(),
            [Some(METRICS[0]), Some(METRICS[1]), Some(METRICS[2]), None]
        );
        let a = c.launch(names("k"));
        let b = c.launch(names("skip_me"));
        let d = c.launch(names("k"));
        assert!(!a.instrument && !d.instrument, "hardware counters instrument nothing");
        // the kernel is not instrumented even when asked to
        assert!(c.instrument_function(names("k"), &[(0, "EXIT ;".into())], 0).is_err());
        c.on_hardware_counters(d.serial, &[2.0, 60.0, 50.0]);
        c.on_hardware_counters(b.serial, &[9.0, 9.0, 9.0]);
        c.on_hardware_counters(a.serial, &[1.0, 32.0, 32.0]);
        c.finish().unwrap();
        let r = Report::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let s = r.counters.unwrap();
        assert_eq!((s.source, s.window_blocks, s.warp_size), (CounterSource::Hardware, 0, 32));
        assert_eq!(s.kernels.len(), 1, "the excluded kernel's values are dropped");
        let launches: Vec<(u64, u64)> =
            s.kernels[0].launches.iter().map(|l| (l.launch, l.windows[0].inactive_lanes)).collect();
        assert_eq!(launches, [(1, 4), (0, 0)]);
        let k = r.kernels.iter().find(|k| k.name == "k").unwrap();
        assert_eq!(k.launches, 2);
        assert!(r.run.notes.iter().any(|n| n.contains("performance monitors")), "{:?}", r.run.notes);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn lost_and_unavailable_counters_are_said() {
        let (mut c, path) = core("lost", vec![]);
        let a = c.launch(names("k"));
        let b = c.launch(names("k"));
        let _pending = c.launch(names("k"));
        c.hardware_lost(a.serial, "its range was dropped");
        c.on_hardware_counters(b.serial, &[1.0, 40.0, 0.0]);
        c.hardware_unavailable("cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
        assert!(!c.hardware_counting());
        let after = c.launch(names("k"));
        c.on_hardware_counters(after.serial, &[1.0, 32.0, 32.0]);
        c.finish().unwrap();
        let r = Report::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(r.counters.is_none());
        let notes = r.run.notes.join("\n");
        for want in [
            "1 launches not counted by the hardware counters: its range was dropped",
            "1 launches not counted by the hardware counters: the metrics do not add up",
            "1 launches counted by the hardware counters were not read back",
            "hardware counters are not available: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; launches after this ran uncounted",
        ] {
            assert!(notes.contains(want), "{want} in {notes}");
        }
        let k = r.kernels.iter().find(|k| k.name == "k").unwrap();
        // the launch after the counters went away is not counted as checked
        assert_eq!((k.launches, k.instrumented_launches), (4, 3));
        let _ = std::fs::remove_file(path);
    }
}
