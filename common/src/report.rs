//! The report model, schema `xfpx-report/1` (documented in
//! `docs/report-schema.md`), written as JSON or MessagePack, and the
//! [`Collector`] that merges findings into it.

use crate::class::FpFormat;
use crate::fp::ExceptionKind;
use crate::screened::{ScreenedFinding, UncheckedLaunches};
use crate::site::{SiteId, SourceLoc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod collector;
pub use collector::{Collector, FlowFinding, Recorded};

/// Schema name and version written into every report.
pub const SCHEMA: &str = "xfpx-report/1";

/// Seconds since the Unix epoch (0 if the clock is before it), as reports
/// record times.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// How the program under test ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum ExitStatus {
    /// Exited with this code.
    Code { code: i32 },
    /// Killed by this signal.
    Signal { signal: i32 },
    /// Still running or unknown (e.g. the report was written early).
    Unknown,
}

/// The run as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `nvidia`, `amd`, or `amd-emulated`.
    pub vendor: String,
    /// Device name (e.g. `NVIDIA H100 80GB HBM3`) or emulated target.
    pub device: String,
    /// ISA target (e.g. `sm_90`, `gfx942`), when known.
    pub target: Option<String>,
    pub command: Vec<String>,
    /// Instrumentation mode.
    pub mode: String,
    /// Seconds since the Unix epoch.
    pub started_unix: u64,
    pub finished_unix: Option<u64>,
    pub exit: ExitStatus,
    /// Every k-th launch of a kernel was instrumented (1: all); 0 when
    /// `sample_auto` chose the launches instead.
    pub sample_every: u32,
    /// Launches were sampled with gaps that double (`--sample auto`):
    /// launches 0-3 of each kernel, then 7, 15, 31, ... (from 0). Reports
    /// written before this field existed read as false.
    #[serde(default)]
    pub sample_auto: bool,
    /// Recording stopped early because the record limit was reached.
    pub truncated: bool,
    /// Anything a user should know about how to read this report.
    pub notes: Vec<String>,
    /// Whether the instrumentation attached to the program (always true
    /// on the emulator). False: nothing was checked. Reports written
    /// before this field existed read as attached.
    #[serde(default = "attached_by_default")]
    pub attached: bool,
}

fn attached_by_default() -> bool {
    true
}

impl RunInfo {
    /// A run of `vendor`'s `device` in `mode`, not started yet: no command,
    /// no times, exit unknown, every launch, attached, no notes.
    pub fn new(vendor: impl Into<String>, device: impl Into<String>, mode: impl Into<String>) -> RunInfo {
        RunInfo {
            vendor: vendor.into(),
            device: device.into(),
            target: None,
            command: Vec::new(),
            mode: mode.into(),
            started_unix: 0,
            finished_unix: None,
            exit: ExitStatus::Unknown,
            sample_every: 1,
            sample_auto: false,
            truncated: false,
            notes: Vec::new(),
            attached: true,
        }
    }
}

/// The launch value of a finding whose launch is not known (in
/// [`Collector::record`] and the event stream's findings).
pub const LAUNCH_UNKNOWN: u64 = u64::MAX;

/// Where a finding happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteRef {
    pub id: SiteId,
    /// Byte offset of the instruction in its kernel.
    pub offset: u64,
    /// The instruction's disassembly.
    pub instr: String,
    pub location: Option<SourceLoc>,
}

/// One (site, kind, format) found, with how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExceptionRecord {
    pub kind: ExceptionKind,
    pub format: FpFormat,
    pub site: SiteRef,
    /// Index (from 0) of the kernel's first launch that raised it; 0 and
    /// meaningless when `first_launch_unknown` is set.
    pub first_launch: u64,
    /// No launch index is known for it: the tool learned of it only from
    /// counters read at the end of the run, never from a record that named
    /// its launch. Reports written before this field existed read as false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_launch_unknown: bool,
    /// Warp (wave) executions that raised it, over all instrumented launches.
    pub occurrences: u64,
    /// Ranks of the parallel job whose processes saw it (sorted; absent
    /// when no process named a rank).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<u32>,
}

impl ExceptionRecord {
    /// A first sighting in `launch` ([`LAUNCH_UNKNOWN`]: not known).
    pub fn new(kind: ExceptionKind, format: FpFormat, site: SiteRef, launch: u64, occurrences: u64) -> ExceptionRecord {
        let unknown = launch == LAUNCH_UNKNOWN;
        ExceptionRecord {
            kind,
            format,
            site,
            first_launch: if unknown { 0 } else { launch },
            first_launch_unknown: unknown,
            occurrences,
            ranks: Vec::new(),
        }
    }

    /// The first launch known to raise it.
    pub fn known_first_launch(&self) -> Option<u64> {
        (!self.first_launch_unknown).then_some(self.first_launch)
    }

    /// Fold in a sighting in `launch` ([`LAUNCH_UNKNOWN`]: not known): the
    /// earliest known launch wins, an unknown one changes nothing.
    pub fn saw_in_launch(&mut self, launch: u64) {
        if launch == LAUNCH_UNKNOWN {
            return;
        }
        if self.first_launch_unknown || launch < self.first_launch {
            self.first_launch = launch;
            self.first_launch_unknown = false;
        }
    }
}

/// One instrumented process of the run, as it introduced itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Its rank in the parallel job (from the launcher's environment).
    pub rank: Option<u32>,
    /// The job's number of processes, when the launcher says.
    pub size: Option<u32>,
    pub host: String,
    pub pid: u32,
    /// Whose variables gave the rank: `open-mpi`, `pmi`, `pmix`, `slurm`.
    pub launcher: Option<String>,
}

/// Whether and how a kernel was instrumented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KernelStatus {
    Instrumented,
    /// Instrumented, but some of its floating-point sites were refused
    /// (its `coverage` says which and why).
    Partial,
    /// Filtered out by the user's include/exclude patterns.
    Excluded,
    /// Could not be instrumented; the reason says why.
    Skipped {
        reason: String,
    },
}

/// One kernel of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelReport {
    /// The name the backend gives (on AMD the symbol, mangled for C++ kernels).
    pub name: String,
    /// The demangled form of `name` when `name` is a mangled C++ name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    pub status: KernelStatus,
    /// Launches seen.
    pub launches: u64,
    /// Launches that ran instrumented code.
    pub instrumented_launches: u64,
    /// Launches that ran their original code and whose buffers were
    /// screened after them (NVIDIA fast mode; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub screened_launches: u64,
    /// Launches neither instrumented nor screened, by reason (absent when
    /// the backend gave no reason, as for sampling without screening in
    /// older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<UncheckedLaunches>,
    /// Probes placed in the kernel.
    pub probes: u64,
    /// How many of its floating-point sites are checked (absent where the
    /// backend does not say, and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<SiteCoverage>,
    /// How the kernel's code object sets denormal handling at launch
    /// (AMD: the descriptor's `FLOAT_DENORM_MODE_*`; absent where the
    /// backend does not say, and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denormals: Option<Denormals>,
    pub records: Vec<ExceptionRecord>,
    /// What launch screening found: located by launch and buffer, not by
    /// instruction (absent when nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screened: Vec<ScreenedFinding>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Denormal handling a kernel starts with, per format group. Each value is
/// `keep`, `flush` (inputs and results), `flush-inputs` or `flush-results`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denormals {
    pub f32: String,
    pub f16_f64: String,
}

/// How many of a kernel's floating-point sites its instrumentation checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteCoverage {
    /// Floating-point instructions in the kernel's own code.
    pub fp_sites: u64,
    /// Of those, the ones the instrumentation checks (in screen mode: all,
    /// through the exception bits read at the end of every wave).
    pub checked: u64,
    /// Sites that were meant to be checked but were refused, by reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedSites>,
}

/// Sites refused for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedSites {
    pub reason: String,
    pub sites: u64,
}

impl SiteCoverage {
    /// Sites refused for any reason.
    pub fn refused_sites(&self) -> u64 {
        self.refused.iter().map(|r| r.sites).sum()
    }

    /// Adds `n` sites refused for `reason`.
    pub fn refuse(&mut self, reason: &str, n: u64) {
        match self.refused.iter_mut().find(|r| r.reason == reason) {
            Some(r) => r.sites += n,
            None => self.refused.push(RefusedSites { reason: reason.to_string(), sites: n }),
        }
    }

    /// Adds one site refused for each of `reasons`: what [`Self::refuse`]
    /// called once per reason gives (same order, same counts), in time
    /// linear in their number however many reasons differ.
    pub fn refuse_each<'r>(&mut self, reasons: impl IntoIterator<Item = &'r str>) {
        let reasons = reasons.into_iter();
        let earlier = self.refused.len();
        let mut at: std::collections::HashMap<&'r str, usize> =
            std::collections::HashMap::with_capacity(reasons.size_hint().0);
        for reason in reasons {
            if let Some(&i) = at.get(reason) {
                self.refused[i].sites += 1;
                continue;
            }
            let i = self.refused[..earlier].iter().position(|r| r.reason == reason).unwrap_or_else(|| {
                self.refused.push(RefusedSites { reason: reason.to_string(), sites: 0 });
                self.refused.len() - 1
            });
            self.refused[i].sites += 1;
            at.insert(reason, i);
        }
    }
}

impl KernelReport {
    /// A kernel with nothing counted or found yet.
    pub fn empty(name: String, demangled: Option<String>, status: KernelStatus) -> KernelReport {
        KernelReport {
            name,
            demangled,
            status,
            launches: 0,
            instrumented_launches: 0,
            screened_launches: 0,
            unchecked: Vec::new(),
            probes: 0,
            coverage: None,
            denormals: None,
            records: Vec::new(),
            screened: Vec::new(),
        }
    }

    /// The name to show a person: the demangled one when there is one.
    pub fn display_name(&self) -> &str {
        self.demangled.as_deref().unwrap_or(&self.name)
    }
}

/// Name and version of the tool that wrote a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

/// A whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub tool: ToolInfo,
    pub run: RunInfo,
    pub kernels: Vec<KernelReport>,
    /// The instrumented processes that reported (absent in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessInfo>,
    /// Execution counters (`--tool counters`; absent otherwise and in
    /// older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::counters::CountersSection>,
    /// The fault of an inject run and how often it fired (`--tool
    /// inject`; absent otherwise and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection: Option<Injection>,
    /// How exceptional values flow through each kernel (`--tool flow`;
    /// absent otherwise and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSection>,
}

/// The flow tool's findings ([`crate::flow`]), per kernel.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowSection {
    pub kernels: Vec<KernelFlow>,
}

/// One kernel's flow records and the sentences they make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelFlow {
    pub kernel: String,
    /// By instruction offset, then state, kind and format.
    pub records: Vec<FlowRecord>,
    /// One sentence per kind ([`crate::flow::stories`]), derived from the
    /// records when the report is written.
    #[serde(default)]
    pub summary: Vec<String>,
}

/// One (site, state, kind, format) of the flow tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowRecord {
    pub state: crate::flow::FlowState,
    pub kind: ExceptionKind,
    pub format: FpFormat,
    pub site: SiteRef,
    /// What the instruction does (`f32.minmax`, `f64.div`: the class label).
    pub class: String,
    /// Index (from 0) of the kernel's first launch that showed it; 0 and
    /// meaningless when `first_launch_unknown` is set.
    pub first_launch: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_launch_unknown: bool,
    /// Warp (wave) executions in which some lane showed it.
    pub occurrences: u64,
    /// The classes the sources of those lanes had.
    #[serde(default)]
    pub sources: Vec<crate::flow::FlowClass>,
    /// The classes their results had.
    #[serde(default)]
    pub results: Vec<crate::flow::FlowClass>,
}

impl FlowRecord {
    /// The lane-word classes of this record ([`crate::flow::lane::CLASSES`] bits).
    pub fn seen(&self) -> u16 {
        crate::flow::seen_of(&self.sources, &self.results)
    }
}

impl FlowSection {
    /// The records of `kernel`.
    pub fn kernel(&self, kernel: &str) -> Option<&KernelFlow> {
        self.kernels.iter().find(|k| k.kernel == kernel)
    }

    /// The sections of several reports as one: records of the same
    /// (kernel, offset, state, kind, format) add their occurrences and
    /// classes; None when no report has a section.
    pub fn merge<'a>(sections: impl Iterator<Item = &'a FlowSection>) -> Option<FlowSection> {
        let mut c = Collector::new(RunInfo::new("", "", ""), None);
        let mut any = false;
        for s in sections {
            any = true;
            for k in &s.kernels {
                c.expect_flow(&k.kernel);
                for r in &k.records {
                    let launch = if r.first_launch_unknown { LAUNCH_UNKNOWN } else { r.first_launch };
                    let f = FlowFinding {
                        state: r.state,
                        kind: r.kind,
                        format: r.format,
                        site: r.site.clone(),
                        class: r.class.clone(),
                        launch,
                        occurrences: r.occurrences,
                        seen: r.seen(),
                    };
                    c.record_flow(&k.kernel, f);
                }
            }
        }
        if any {
            c.flow_section()
        } else {
            None
        }
    }
}

/// The report's record of an injected fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    pub fault: crate::fault::FaultSpec,
    /// Dynamic thread instances the fault corrupted (0: it never fired).
    pub activations: u64,
    /// False when the count could not be read back (the GPU context was
    /// lost, e.g. by the fault's own trap): `activations` is then a lower
    /// bound (1 when the fault was seen to fire, else 0).
    #[serde(default = "exact_default", skip_serializing_if = "is_true")]
    pub exact: bool,
}

fn exact_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Failure to read or write a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("report is not valid JSON of schema {SCHEMA}: {0}")]
    Json(#[from] serde_json::Error),
    #[error("report is not valid MessagePack of schema {SCHEMA}: {0}")]
    MsgpackDecode(#[from] rmp_serde::decode::Error),
    #[error("report could not be encoded as MessagePack: {0}")]
    MsgpackEncode(#[from] rmp_serde::encode::Error),
    #[error("report has schema `{0}`, expected `{SCHEMA}`")]
    Schema(String),
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<Report, ReportError> {
        let r: Report = serde_json::from_str(text)?;
        r.check_schema()
    }

    /// MessagePack with field names (maps), so readers need no schema.
    pub fn to_msgpack(&self) -> Result<Vec<u8>, ReportError> {
        Ok(rmp_serde::to_vec_named(self)?)
    }

    pub fn from_msgpack(bytes: &[u8]) -> Result<Report, ReportError> {
        let r: Report = rmp_serde::from_slice(bytes)?;
        r.check_schema()
    }

    fn check_schema(self) -> Result<Report, ReportError> {
        if self.schema == SCHEMA {
            Ok(self)
        } else {
            Err(ReportError::Schema(self.schema))
        }
    }

    /// All records of all kernels, with their kernel's name.
    pub fn records(&self) -> impl Iterator<Item = (&str, &ExceptionRecord)> {
        self.kernels.iter().flat_map(|k| k.records.iter().map(move |r| (k.name.as_str(), r)))
    }

    /// The ranks of the processes that reported, sorted, each once.
    pub fn ranks(&self) -> Vec<u32> {
        let mut ranks: Vec<u32> = self.processes.iter().filter_map(|p| p.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        ranks
    }

    /// Why nothing was checked in this run, if so: the instrumentation
    /// never attached, or no kernel launch ran instrumented code (nor was
    /// screened).
    pub fn nothing_checked(&self) -> Option<&'static str> {
        if !self.run.attached {
            Some("the instrumentation library never attached to the program")
        } else if self.kernels.iter().all(|k| {
            k.instrumented_launches == 0 && k.screened_launches == 0 && k.records.is_empty() && k.screened.is_empty()
        }) {
            Some("no kernel launch ran instrumented code")
        } else {
            None
        }
    }

    /// Every screened finding, with its kernel's name.
    pub fn screened(&self) -> impl Iterator<Item = (&str, &ScreenedFinding)> {
        self.kernels.iter().flat_map(|k| k.screened.iter().map(move |f| (k.name.as_str(), f)))
    }

    /// The kernels whose floating-point sites were not all checked: partial
    /// or skipped (not those the user excluded).
    pub fn coverage_lost(&self) -> impl Iterator<Item = &KernelReport> {
        self.kernels.iter().filter(|k| matches!(k.status, KernelStatus::Partial | KernelStatus::Skipped { .. }))
    }

    /// Counts of records per (format, kind) over the whole run.
    pub fn totals(&self) -> BTreeMap<(FpFormat, ExceptionKind), u64> {
        let mut m = BTreeMap::new();
        for (_, r) in self.records() {
            *m.entry((r.format, r.kind)).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run() -> RunInfo {
        RunInfo {
            target: Some("sm_90".into()),
            command: vec!["./app".into()],
            started_unix: 1,
            ..RunInfo::new("nvidia", "test", "detect")
        }
    }

    fn site(id: u32, offset: u64) -> SiteRef {
        SiteRef { id: SiteId(id), offset, instr: "FADD R1, R2, R3".into(), location: None }
    }

    #[test]
    fn refusing_each_counts_as_refusing_one_by_one() {
        let reasons = ["far", "busy", "far", "odd", "busy", "far"];
        let mut one_by_one = SiteCoverage { fp_sites: 9, checked: 0, refused: Vec::new() };
        one_by_one.refuse("busy", 2);
        let mut each = one_by_one.clone();
        for r in reasons {
            one_by_one.refuse(r, 1);
        }
        each.refuse_each(reasons);
        assert_eq!(each, one_by_one);
        assert_eq!(
            each.refused.iter().map(|r| (r.reason.as_str(), r.sites)).collect::<Vec<_>>(),
            [("busy", 4), ("far", 3), ("odd", 1)]
        );
    }

    #[test]
    fn collector_dedups_and_limits() {
        let mut c = Collector::new(run(), Some(2));
        c.launch("k", true);
        assert_eq!(c.record("k", ExceptionKind::Nan, FpFormat::F32, site(0, 0x10), 0, 3), Recorded::New);
        assert_eq!(c.record("k", ExceptionKind::Nan, FpFormat::F32, site(0, 0x10), 1, 2), Recorded::Known);
        assert_eq!(c.record("k", ExceptionKind::Inf, FpFormat::F32, site(0, 0x10), 1, 1), Recorded::New);
        assert_eq!(c.record("k", ExceptionKind::Sub, FpFormat::F32, site(1, 0x20), 1, 1), Recorded::Dropped);
        let r = c.report();
        assert!(r.run.truncated);
        assert_eq!(r.kernels[0].records.len(), 2);
        assert_eq!(r.kernels[0].records[0].occurrences, 5);
        assert_eq!(r.kernels[0].records[0].first_launch, 0);
    }

    #[test]
    fn an_unknown_launch_says_so_and_yields_to_a_known_one() {
        let mut c = Collector::new(run(), None);
        let nan =
            |c: &mut Collector, launch| c.record("k", ExceptionKind::Nan, FpFormat::F32, site(0, 0x10), launch, 1);
        assert_eq!(nan(&mut c, LAUNCH_UNKNOWN), Recorded::New);
        let r = c.report();
        let rec = &r.kernels[0].records[0];
        assert_eq!((rec.first_launch_unknown, rec.known_first_launch()), (true, None));
        assert!(r.to_json().contains("\"first_launch_unknown\": true"), "{}", r.to_json());
        assert_eq!(Report::from_json(&r.to_json()).expect("json"), r);
        // a known launch replaces the unknown one; a later unknown changes nothing
        nan(&mut c, 5000);
        nan(&mut c, LAUNCH_UNKNOWN);
        nan(&mut c, 7000);
        let rec = c.report().kernels[0].records[0].clone();
        assert_eq!((rec.first_launch_unknown, rec.known_first_launch(), rec.occurrences), (false, Some(5000), 4));
        assert!(!c.report().to_json().contains("first_launch_unknown"), "absent when known");
    }

    #[test]
    fn launch_counters_gather_per_kernel_and_other_windows_are_left_out() {
        use crate::counters::{CounterSource, LaunchCounters, WindowCounters};
        const I: CounterSource = CounterSource::Instrumented;
        let launch = |n: u64| LaunchCounters {
            launch: n,
            windows: vec![WindowCounters { warp_instructions: 10 * (n + 1), ..WindowCounters::default() }],
        };
        let mut c = Collector::new(run(), None);
        assert!(c.report().counters.is_none());
        assert!(c.add_launch_counters("k", 0, 32, I, launch(0)));
        assert!(c.add_launch_counters("j", 0, 32, I, launch(0)));
        assert!(c.add_launch_counters("k", 0, 32, I, launch(1)));
        assert!(!c.add_launch_counters("k", 64, 32, I, launch(2)));
        assert!(!c.add_launch_counters("k", 0, 32, CounterSource::Hardware, launch(2)));
        let s = c.report().counters.expect("counters");
        assert_eq!((s.window_blocks, s.warp_size), (0, 32));
        let k: Vec<u64> = s.kernels[0].launches.iter().map(|l| l.launch).collect();
        assert_eq!((s.kernels[0].kernel.as_str(), k), ("k", vec![0, 1]));
        assert_eq!(s.kernels[0].total().warp_instructions, 30);
        assert_eq!(s.kernels[1].kernel, "j");
    }

    #[test]
    fn ranks_are_kept_per_record_and_sites_are_keyed_by_offset() {
        let mut c = Collector::new(run(), None);
        // Two processes numbered the same instruction differently.
        assert_eq!(c.record("k", ExceptionKind::Nan, FpFormat::F32, site(0, 0x10), 0, 1), Recorded::New);
        c.add_rank("k", 0x10, ExceptionKind::Nan, FpFormat::F32, 3);
        assert_eq!(c.record("k", ExceptionKind::Nan, FpFormat::F32, site(5, 0x10), 0, 1), Recorded::Known);
        c.add_rank("k", 0x10, ExceptionKind::Nan, FpFormat::F32, 1);
        c.add_rank("k", 0x10, ExceptionKind::Nan, FpFormat::F32, 3);
        // The same id at another offset is another instruction.
        assert_eq!(c.record("k", ExceptionKind::Nan, FpFormat::F32, site(0, 0x40), 0, 1), Recorded::New);
        c.add_rank("k", 0x99, ExceptionKind::Nan, FpFormat::F32, 9); // nothing recorded there: ignored
        let p = |rank, pid| ProcessInfo { rank, size: Some(4), host: "h".into(), pid, launcher: None };
        c.add_process(p(Some(3), 30));
        c.add_process(p(Some(1), 10));
        c.add_process(p(Some(3), 30));
        let r = c.report();
        let recs: Vec<(u64, u64, &[u32])> =
            r.kernels[0].records.iter().map(|x| (x.site.offset, x.occurrences, x.ranks.as_slice())).collect();
        assert_eq!(recs, [(0x10, 2, &[1, 3][..]), (0x40, 1, &[][..])]);
        assert_eq!(r.ranks(), [1, 3]);
        assert_eq!(r.processes.iter().map(|p| p.pid).collect::<Vec<_>>(), [10, 30]);
        assert_eq!(Report::from_json(&r.to_json()).expect("json"), r);
        assert_eq!(Report::from_msgpack(&r.to_msgpack().expect("encode")).expect("msgpack"), r);
    }

    #[test]
    fn reports_without_ranks_read_and_write_as_before() {
        let mut c = Collector::new(run(), None);
        c.record("k", ExceptionKind::Inf, FpFormat::F32, site(0, 0x10), 0, 1);
        let json = c.report().to_json();
        assert!(!json.contains("ranks") && !json.contains("processes"), "{json}");
        assert_eq!(Report::from_json(&json).expect("json").processes, []);
    }

    #[test]
    fn json_and_msgpack_round_trip() {
        let mut c = Collector::new(run(), None);
        c.kernel_status("k", KernelStatus::Skipped { reason: "too many registers".into() }, 0);
        c.record("k", ExceptionKind::Div0, FpFormat::F64, site(3, 0x30), 0, 1);
        let r = c.report();
        assert_eq!(Report::from_json(&r.to_json()).expect("json"), r);
        assert_eq!(Report::from_msgpack(&r.to_msgpack().expect("encode")).expect("msgpack"), r);
        let bad = r.to_json().replace(SCHEMA, "xfpx-report/0");
        assert!(matches!(Report::from_json(&bad), Err(ReportError::Schema(_))));
    }

    #[test]
    fn mangled_kernels_gain_their_demangled_name() {
        let mut c = Collector::new(run(), None);
        c.launch("_Z11lines_scaleIfEvPT_PKS0_S0_", true);
        c.launch("exc_nan", true);
        let r = c.report();
        let k = &r.kernels[0];
        assert_eq!(k.name, "_Z11lines_scaleIfEvPT_PKS0_S0_");
        assert_eq!(k.display_name(), "void lines_scale<float>(float*, float const*, float)");
        assert_eq!(r.kernels[1].demangled, None);
        assert_eq!(r.kernels[1].display_name(), "exc_nan");
        assert!(!r.to_json().contains("\"demangled\": null"), "absent, not null");
        assert_eq!(Report::from_msgpack(&r.to_msgpack().expect("encode")).expect("msgpack"), r);
    }
}
