//! The [`Collector`]: merges the findings, launches, kernel states,
//! flow records, counters and injection outcomes a backend delivers into
//! one [`Report`], keyed so that repeats add occurrences and the record
//! limit holds.

use super::{
    ExceptionRecord, FlowRecord, FlowSection, Injection, KernelFlow, KernelReport, KernelStatus, ProcessInfo, Report,
    RunInfo, SiteCoverage, SiteRef, ToolInfo, LAUNCH_UNKNOWN, SCHEMA,
};
use crate::class::FpFormat;
use crate::fp::ExceptionKind;
use crate::screened::{add_screened, add_unchecked, unscreen, LaunchCheck, ScreenedFinding, Unchecked};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Merges findings, launches and kernel states into a [`Report`].
/// Findings are keyed by (kernel, instruction offset, kind, format): the
/// first sighting creates the record, later ones only add occurrences.
/// (Not by site id: each process numbers its sites itself.)
#[derive(Debug, Clone)]
pub struct Collector {
    run: RunInfo,
    kernels: BTreeMap<String, KernelReport>,
    index: BTreeMap<(String, u64, ExceptionKind, FpFormat), usize>,
    processes: Vec<ProcessInfo>,
    max_records: Option<u64>,
    records: u64,
    counters: Option<crate::counters::CountersSection>,
    injection: Option<Injection>,
    flow: BTreeMap<String, BTreeMap<FlowKey, FlowRecord>>,
}

/// A flow record's identity in the collector: (offset, state, kind, format).
type FlowKey = (u64, crate::flow::FlowState, ExceptionKind, FpFormat);

/// One flow finding as a backend delivers it ([`Collector::record_flow`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowFinding {
    pub state: crate::flow::FlowState,
    pub kind: ExceptionKind,
    pub format: FpFormat,
    pub site: SiteRef,
    pub class: String,
    /// Launch index ([`LAUNCH_UNKNOWN`]: not known).
    pub launch: u64,
    pub occurrences: u64,
    /// OR of the lane words (their class bits) of the lanes that showed it.
    pub seen: u16,
}

/// What [`Collector::record`] did with a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// A new (site, kind, format): worth telling the user now.
    New,
    /// Already known: occurrences were added.
    Known,
    /// Dropped because the record limit was reached.
    Dropped,
}

impl Collector {
    pub fn new(run: RunInfo, max_records: Option<u64>) -> Collector {
        Collector {
            run,
            kernels: BTreeMap::new(),
            index: BTreeMap::new(),
            processes: Vec::new(),
            max_records,
            records: 0,
            counters: None,
            injection: None,
            flow: BTreeMap::new(),
        }
    }

    /// Note a flow finding ([`crate::flow`]): the first of its (kernel,
    /// offset, state, kind, format) makes the record, later ones add their
    /// occurrences and classes. Returns whether it was new.
    pub fn record_flow(&mut self, kernel: &str, f: FlowFinding) -> bool {
        let records = self.flow.entry(kernel.to_string()).or_default();
        let key = (f.site.offset, f.state, f.kind, f.format);
        if let Some(r) = records.get_mut(&key) {
            r.occurrences += f.occurrences;
            let (sources, results) = crate::flow::classes_of(r.seen() | f.seen);
            (r.sources, r.results) = (sources, results);
            if f.launch != LAUNCH_UNKNOWN && (r.first_launch_unknown || f.launch < r.first_launch) {
                r.first_launch = f.launch;
                r.first_launch_unknown = false;
            }
            return false;
        }
        let (sources, results) = crate::flow::classes_of(f.seen);
        let unknown = f.launch == LAUNCH_UNKNOWN;
        records.insert(
            key,
            FlowRecord {
                state: f.state,
                kind: f.kind,
                format: f.format,
                site: f.site,
                class: f.class,
                first_launch: if unknown { 0 } else { f.launch },
                first_launch_unknown: unknown,
                occurrences: f.occurrences,
                sources,
                results,
            },
        );
        true
    }

    /// Mark the run as a flow run: its report has a flow section, empty
    /// where nothing exceptional flowed.
    pub fn expect_flow(&mut self, kernel: &str) {
        self.flow.entry(kernel.to_string()).or_default();
    }

    /// Note an instrumented process that introduced itself.
    pub fn add_process(&mut self, process: ProcessInfo) {
        if !self.processes.contains(&process) {
            self.processes.push(process);
        }
    }

    pub fn run_mut(&mut self) -> &mut RunInfo {
        &mut self.run
    }

    fn kernel(&mut self, name: &str) -> &mut KernelReport {
        self.kernels.entry(name.to_string()).or_insert_with(|| {
            KernelReport::empty(name.to_string(), crate::names::demangle(name), KernelStatus::Instrumented)
        })
    }

    /// Whether the kernel is known (a status, launch or finding was noted).
    pub fn has_kernel(&self, name: &str) -> bool {
        self.kernels.contains_key(name)
    }

    /// Note how many of a kernel's floating-point sites are checked.
    pub fn kernel_coverage(&mut self, name: &str, coverage: SiteCoverage) {
        self.kernel(name).coverage = Some(coverage);
    }

    /// Note a kernel's status and number of probes.
    pub fn kernel_status(&mut self, name: &str, status: KernelStatus, probes: u64) {
        let k = self.kernel(name);
        k.status = status;
        k.probes = probes;
    }

    /// Note one launch of a kernel; returns its index (from 0).
    pub fn launch(&mut self, name: &str, instrumented: bool) -> u64 {
        let check = if instrumented { LaunchCheck::Instrumented } else { LaunchCheck::Unchecked(None) };
        self.launch_checked(name, check)
    }

    /// Note one launch of a kernel and how it was checked; returns its
    /// index (from 0).
    pub fn launch_checked(&mut self, name: &str, check: LaunchCheck) -> u64 {
        let k = self.kernel(name);
        let idx = k.launches;
        k.launches += 1;
        match check {
            LaunchCheck::Instrumented => k.instrumented_launches += 1,
            LaunchCheck::Screened => k.screened_launches += 1,
            LaunchCheck::Unchecked(Some(reason)) => add_unchecked(&mut k.unchecked, reason, 1),
            LaunchCheck::Unchecked(None) => {}
        }
        idx
    }

    /// A launch counted as screened whose screen could not run: it moves
    /// to the launches unchecked for [`Unchecked::ScreenFailed`].
    pub fn screen_lost(&mut self, name: &str) {
        let k = self.kernel(name);
        unscreen(&mut k.screened_launches, &mut k.unchecked, Unchecked::ScreenFailed);
    }

    /// Note what a screen found in a launch of `kernel`; true when the
    /// (parameter, kind, format) is new for the kernel.
    pub fn screened(&mut self, kernel: &str, finding: ScreenedFinding) -> bool {
        add_screened(&mut self.kernel(kernel).screened, finding)
    }

    /// Note a finding of `occurrences` warp executions in launch `launch`
    /// ([`LAUNCH_UNKNOWN`] when the launch is not known).
    pub fn record(
        &mut self,
        kernel: &str,
        kind: ExceptionKind,
        format: FpFormat,
        site: SiteRef,
        launch: u64,
        occurrences: u64,
    ) -> Recorded {
        let key = (kernel.to_string(), site.offset, kind, format);
        if let Some(&i) = self.index.get(&key) {
            let k = self.kernel(kernel);
            let r = &mut k.records[i];
            r.occurrences += occurrences;
            r.saw_in_launch(launch);
            return Recorded::Known;
        }
        if self.max_records.is_some_and(|m| self.records >= m) {
            self.run.truncated = true;
            return Recorded::Dropped;
        }
        self.records += 1;
        let k = self.kernel(kernel);
        k.records.push(ExceptionRecord::new(kind, format, site, launch, occurrences));
        let i = k.records.len() - 1;
        self.index.insert(key, i);
        Recorded::New
    }

    /// Note that the process of `rank` saw the finding at (kernel, offset,
    /// kind, format), if it is recorded.
    pub fn add_rank(&mut self, kernel: &str, offset: u64, kind: ExceptionKind, format: FpFormat, rank: u32) {
        let Some(&i) = self.index.get(&(kernel.to_string(), offset, kind, format)) else { return };
        let ranks = &mut self.kernel(kernel).records[i].ranks;
        if let Err(at) = ranks.binary_search(&rank) {
            ranks.insert(at, rank);
        }
    }

    /// True once the record limit is reached.
    pub fn full(&self) -> bool {
        self.max_records.is_some_and(|m| self.records >= m)
    }

    /// The report so far (kernels by name, records by offset, kind, format).
    pub fn report(&self) -> Report {
        let mut kernels: Vec<KernelReport> = self.kernels.values().cloned().collect();
        for k in &mut kernels {
            k.records.sort_by_key(|r| (r.site.offset, r.kind, r.format));
        }
        Report {
            schema: SCHEMA.to_string(),
            tool: ToolInfo { name: "xfpx".into(), version: env!("CARGO_PKG_VERSION").into() },
            run: self.run.clone(),
            kernels,
            processes: {
                let mut p = self.processes.clone();
                p.sort();
                p
            },
            counters: self.counters.clone(),
            injection: self.injection.clone(),
            flow: self.flow_section(),
        }
    }

    /// The flow section: kernels by name, records by (offset, state, kind,
    /// format), with their sentences; None when no flow was recorded or expected.
    pub(super) fn flow_section(&self) -> Option<FlowSection> {
        if self.flow.is_empty() {
            return None;
        }
        let kernels = self
            .flow
            .iter()
            .map(|(kernel, records)| {
                let records: Vec<FlowRecord> = records.values().cloned().collect();
                let summary = crate::flow::stories(&records).into_iter().map(|s| s.text).collect();
                KernelFlow { kernel: kernel.clone(), records, summary }
            })
            .collect();
        Some(FlowSection { kernels })
    }

    /// The fault of an inject run and its activations; a process reporting
    /// the same fault again adds its activations.
    pub fn set_injection(&mut self, injection: Injection) {
        self.injection = Some(match self.injection.take() {
            Some(old) if old.fault == injection.fault => Injection {
                activations: old.activations.saturating_add(injection.activations),
                exact: old.exact && injection.exact,
                ..old
            },
            _ => injection,
        });
    }

    /// The run's counters (`--tool counters`), replacing any set before.
    pub fn set_counters(&mut self, counters: crate::counters::CountersSection) {
        self.counters = Some(counters);
    }

    /// Add the counters of one launch of `kernel` (in arrival order). A
    /// launch counted with other sampling windows, another warp size or
    /// from another source than the first one added is left out: returns
    /// false.
    pub fn add_launch_counters(
        &mut self,
        kernel: &str,
        window_blocks: u32,
        warp_size: u32,
        source: crate::counters::CounterSource,
        launch: crate::counters::LaunchCounters,
    ) -> bool {
        let s = self.counters.get_or_insert_with(|| crate::counters::CountersSection {
            source,
            window_blocks,
            warp_size,
            kernels: Vec::new(),
            region_check: None,
        });
        if (s.window_blocks, s.warp_size, s.source) != (window_blocks, warp_size, source) {
            return false;
        }
        match s.kernels.iter_mut().find(|k| k.kernel == kernel) {
            Some(k) => k.launches.push(launch),
            None => {
                s.kernels.push(crate::counters::KernelCounters { kernel: kernel.to_string(), launches: vec![launch] })
            }
        }
        true
    }
}
