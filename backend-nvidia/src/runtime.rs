//! The host side of the NVBit tool, free of FFI: which kernels to
//! instrument and when, the site table, the plans and their call
//! insertions ([`planning`]; made before first launches: [`ahead`]), line
//! tables read from dumped cubins ([`lines`]), launch screening
//! ([`screening`]), and the findings the
//! device sends (or, with the counters tool, the count tables of launches,
//! see [`crate::count_run`], or their hardware counters, see [`hardware`]),
//! streamed as events to the CLI or written as a report.

pub mod ahead;
mod cubin_tools;
mod hardware;
mod lines;
mod planning;
mod screening;

pub use cubin_tools::CubinTools;

use crate::capture_run::{CaptureRun, Geometry};
use crate::count_run::CountRun;
use crate::counts::{TableShape, WARP_SIZE};
use crate::record::{decode_chunk, DeviceRecord, RECORD_SIZE};
use crate::screen::device::ScreenPlan;
use crate::screen::ScreenRun;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use xfpx_common::capture::ParamSlot;
use xfpx_common::class::FpFormat;
use xfpx_common::config::{Mode, RunConfig, SourceLines, ToolSettings};
use xfpx_common::counters::CounterSource;
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::observe::ThinStats;
use xfpx_common::report::{ExitStatus, Injection, KernelStatus, Recorded, RunInfo, SiteRef, LAUNCH_UNKNOWN};
use xfpx_common::screened::LaunchCheck;
use xfpx_common::site::{SiteId, SiteTable, SourceLoc};
use xfpx_common::tool::{Detector, ToolKind};
use xfpx_common::tool_stream::ToolStream;

/// A kernel's two names.
#[derive(Debug, Clone, Copy)]
pub struct KernelNames<'a> {
    pub mangled: &'a str,
    pub demangled: &'a str,
}

/// What to do with one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDecision {
    pub instrument: bool,
    /// Serial number of the launch in the run (the per-launch value).
    pub serial: u64,
    /// The scans of its buffers (launch screening), if any.
    pub screen: Option<ScreenPlan>,
    /// Its kernel was being prepared in the background, and this launch,
    /// which could not be screened, cut that short: its code is to be
    /// instrumented now.
    pub prepare_now: bool,
}

/// How a launch reached the tool, and what it knows of its parameters.
#[derive(Debug, Clone, Copy)]
pub enum LaunchWay<'a> {
    /// Launched on a stream, with its parameter bytes and their layout.
    Stream { params: &'a [u8], layout: &'a [ParamSlot] },
    /// Launched on a stream; its parameters could not be read.
    ParamsUnknown,
    /// A node of a CUDA graph.
    Graph,
    /// In a CUDA context the tool does not instrument.
    OtherContext,
}

#[derive(Debug)]
struct KernelEntry {
    launches: u64,
    /// Launch index sampling counts from (a screened finding starts the
    /// kernel's sampling again, as if it were new).
    sample_from: u64,
}

/// How findings reached the host: by a ring record that names the launch
/// serial the device was given, or only from the site table read at the
/// end (launch unknown). Told in a note, so a report shows which path
/// carried its findings and what launch values the device sent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Findings that arrived by a ring record.
    pub by_ring: u64,
    /// Ring records naming a serial no launch had (dated unknown).
    pub unmatched_serials: u64,
    /// Findings known only from the final site table.
    pub by_sweep_only: u64,
    /// Lowest and highest launch serial the ring's records named.
    pub serials: Option<(u32, u32)>,
    /// Distinct serials named (counted up to [`Delivery::DISTINCT_CAP`]).
    pub distinct: HashSet<u32>,
}

impl Delivery {
    const DISTINCT_CAP: usize = 4096;

    fn saw_serial(&mut self, serial: u32) {
        self.serials = Some(match self.serials {
            None => (serial, serial),
            Some((lo, hi)) => (lo.min(serial), hi.max(serial)),
        });
        if self.distinct.len() < Self::DISTINCT_CAP {
            self.distinct.insert(serial);
        }
    }

    /// The note for a run of `launches` launches; none without findings.
    pub fn note(&self, launches: u64) -> Option<String> {
        if self.by_ring == 0 && self.by_sweep_only == 0 {
            return None;
        }
        let serials = match self.serials {
            None => String::new(),
            Some((lo, hi)) => format!(
                " (launch serials named: {}{} distinct, from {lo} to {hi}, of {launches} launches)",
                self.distinct.len(),
                if self.distinct.len() >= Self::DISTINCT_CAP { " or more" } else { "" }
            ),
        };
        let unmatched = if self.unmatched_serials > 0 {
            format!(", {} of them naming a serial no launch had (launch unknown)", self.unmatched_serials)
        } else {
            String::new()
        };
        let swept = if self.by_sweep_only > 0 {
            format!(
                "; {} only from the site table read at the end, whose launch is unknown (their record never \
                 reached the host)",
                self.by_sweep_only
            )
        } else {
            String::new()
        };
        Some(format!("device findings: {} by the record ring{serials}{unmatched}{swept}", self.by_ring))
    }
}

/// The tool's state for one process.
#[derive(Debug)]
pub struct ToolCore {
    config: RunConfig,
    detector: Detector,
    sites: SiteTable,
    /// The events sent to the CLI, and the report kept so far.
    stream: ToolStream,
    kernels: HashMap<String, KernelEntry>,
    /// By launch serial: (kernel name, launch index of that kernel).
    launches: Vec<(String, u64)>,
    /// Occurrences already reported per (site, kind, format).
    sent: HashMap<(SiteId, ExceptionKind, FpFormat), u64>,
    /// Line tables by mangled function name.
    lines: HashMap<String, BTreeMap<u64, SourceLoc>>,
    /// Functions instrumented without a line table, by display name (the
    /// sites' kernel): their mangled names. The executable's cubins are
    /// searched only when one of them has a finding (a search runs the
    /// CUDA tools and costs a few hundred milliseconds).
    lines_pending: HashMap<String, String>,
    cubins_read: HashSet<u64>,
    /// Files whose cubins were read for line tables (the executable and
    /// shared objects).
    scanned_files: HashSet<PathBuf>,
    /// The CUDA tools that read cubins.
    tools: CubinTools,
    /// ISA target of the device, e.g. `sm_90`.
    target: Option<String>,
    /// Also search mapped shared objects for line tables (opt-in:
    /// `tools.source_lines`, `XFPX_NVIDIA_LINES=libs`).
    scan_libraries: bool,
    /// Read line tables at all (off: `XFPX_NVIDIA_LINES=0`).
    lines_enabled: bool,
    /// Fast mode: what thinning did over all kernels so far.
    thinned: ThinStats,
    /// How findings reached the host.
    delivery: Delivery,
    /// This process's rank in a parallel job (from the launcher).
    rank: Option<u32>,
    /// The counters tool: counters instead of exception checks.
    counting: Option<CountRun>,
    /// The counters tool with hardware counters (the CUPTI library): the
    /// launches counted and not read yet; `None` also once the library
    /// said the counters are not available.
    hardware: Option<crate::hw_counts::HwRun>,
    /// The kernel whose first launch the functions instrumented next
    /// belong to (the others are functions it calls).
    instrumenting_for: Option<String>,
    /// The inject tool: device address of its `XfpxInjectState` (0 until
    /// the shim made it), and whether its result was reported.
    inject_state: u64,
    injection_reported: bool,
    /// Launch screening (fast mode's default), while it is on.
    screen: Option<ScreenRun>,
    /// Whether the shim made the screen's device memory (screening starts then).
    screen_ready: bool,
    /// Kernels screened while their disassembly is made in the background.
    preparing: crate::preparing::PreparingKernels,
    /// Screen records that named no launch, or were malformed.
    screen_records_lost: u64,
    /// Mangled names of launched kernels by the name they are shown by.
    kernel_names: HashMap<String, String>,
    /// `--capture`: the launches recorded, and the allocations seen.
    capture: Option<CaptureRun>,
    /// The flow tool: the class label of each probed site, and the classes
    /// delivered so far per (key, kind).
    flow_classes: HashMap<SiteId, String>,
    flow_seen_sent: HashMap<(u32, ExceptionKind), u16>,
    /// Plans made before first launches, and how many were used or
    /// dropped (NVBit's instructions differed).
    ahead: std::sync::Arc<ahead::AheadPlans>,
    ahead_used: u64,
    ahead_differed: u64,
    /// Calls left out because a warpgroup MMA may be in flight where they
    /// would run, and the functions they were left out of.
    in_flight_left_out: (u64, Vec<String>),
}

impl ToolCore {
    /// A core for `config`; connects to the event socket when one is named
    /// (and falls back to writing the report when it cannot).
    pub fn new(config: RunConfig) -> Result<ToolCore, String> {
        if !crate::modes::MODES.contains(&config.mode) {
            return Err(crate::dump::Error::Mode(config.mode).to_string());
        }
        let detector =
            Detector { kinds: config.kinds, instr_range: config.instr_range.map(|(a, b)| a..b), ..Detector::default() };
        let mut notes: Vec<String> = config.sampling_note(config.screens_launches()).into_iter().collect();
        if config.screens_launches() {
            notes.push(
                "launches not instrumented were screened: after each, the device buffers its pointer arguments reach \
                 were scanned for NaN and infinite values (f32, f64, f16 or bf16 elements, by the parameter's type or \
                 the kernel's widest format); a count that grew is a screened finding, located by launch and buffer, \
                 and the kernel's next launch is instrumented again (--screen-launches off turns this off)"
                    .to_string(),
            );
        }
        let run = RunInfo {
            vendor: "nvidia".into(),
            device: "unknown".into(),
            target: None,
            command: xfpx_common::launcher::command_line(),
            mode: match config.tool {
                ToolKind::Counters => "counters".into(),
                ToolKind::Flow => "flow".into(),
                _ => config.mode.name().into(),
            },
            started_unix: xfpx_common::report::unix_now(),
            finished_unix: None,
            exit: ExitStatus::Unknown,
            sample_every: config.reported_sample_every(),
            sample_auto: config.sample_doubling,
            truncated: false,
            notes,
            attached: true,
        };
        let rank = xfpx_common::launcher::rank_from_env().map(|r| r.rank);
        let stream = ToolStream::open(&config, "xfpx-nvbit", run);
        let mut core = ToolCore {
            tools: CubinTools::of(&config.tools),
            lines_enabled: config.tools.source_lines != SourceLines::Off,
            scan_libraries: config.tools.source_lines == SourceLines::WithLibraries,
            config,
            detector,
            sites: SiteTable::new(),
            stream,
            kernels: HashMap::new(),
            launches: Vec::new(),
            sent: HashMap::new(),
            lines: HashMap::new(),
            lines_pending: HashMap::new(),
            cubins_read: HashSet::new(),
            scanned_files: HashSet::new(),
            target: None,
            thinned: ThinStats::default(),
            delivery: Delivery::default(),
            rank,
            counting: None,
            hardware: None,
            instrumenting_for: None,
            inject_state: 0,
            injection_reported: false,
            screen: None,
            screen_ready: false,
            preparing: Default::default(),
            screen_records_lost: 0,
            kernel_names: HashMap::new(),
            capture: None,
            flow_classes: HashMap::new(),
            flow_seen_sent: HashMap::new(),
            ahead: Default::default(),
            ahead_used: 0,
            ahead_differed: 0,
            in_flight_left_out: (0, Vec::new()),
        };
        if core.config.screens_launches() {
            core.screen = Some(ScreenRun::new());
        }
        if let Some(settings) = core.config.capture.clone() {
            core.capture = Some(CaptureRun::new(settings, std::process::id()));
        }
        if core.config.tool == ToolKind::Counters {
            match core.config.counter_source {
                CounterSource::Instrumented => core.counting = Some(CountRun::new(core.config.count_window_blocks)),
                CounterSource::Hardware => core.start_hardware(),
            }
        }
        Ok(core)
    }

    /// A core configured from `XFPX_CONFIG` (see [`RunConfig::from_env`]).
    pub fn from_env() -> Result<ToolCore, String> {
        ToolCore::new(RunConfig::from_env().map_err(|e| e.to_string())?)
    }

    /// The host-side tool settings of the run.
    pub fn tool_settings(&self) -> &ToolSettings {
        &self.config.tools
    }

    fn emit(&mut self, event: Event) {
        self.stream.emit(event);
    }

    /// Something the user should read.
    pub fn note(&mut self, text: &str) {
        self.stream.note(text);
    }

    /// The device the tool attached to.
    pub fn device(&mut self, device: &str, target: Option<&str>) {
        let run = self.stream.collector_mut().run_mut();
        run.device = device.to_string();
        run.target = target.map(str::to_string);
        self.target = target.map(str::to_string);
        if let Some(c) = &mut self.capture {
            c.device(device, target);
        }
        self.emit(Event::Device { vendor: "nvidia".into(), device: device.into(), target: target.map(str::to_string) });
    }

    fn display_name(names: KernelNames) -> String {
        if names.demangled.is_empty() { names.mangled } else { names.demangled }.to_string()
    }

    /// Whether the user's filters admit a kernel.
    pub fn wants_kernel(&self, names: KernelNames) -> bool {
        self.config.filter().admits(&[names.mangled, names.demangled])
    }

    /// A function whose calls could not be inserted after all (the tool's
    /// call record cannot carry them): its status says why, and a note.
    pub fn leave_uninstrumented(&mut self, names: KernelNames, reason: &str) {
        let name = Self::display_name(names);
        let status = KernelStatus::Skipped { reason: reason.to_string() };
        self.stream.collector_mut().kernel_status(&name, status.clone(), 0);
        self.emit(Event::Kernel { name, status, probes: 0 });
        self.note(&format!("{}: left uninstrumented: {reason}", names.mangled));
    }

    /// Note a kernel the filters exclude.
    pub fn exclude_kernel(&mut self, names: KernelNames) {
        let name = Self::display_name(names);
        self.stream.collector_mut().kernel_status(&name, KernelStatus::Excluded, 0);
        self.emit(Event::Kernel { name, status: KernelStatus::Excluded, probes: 0 });
    }

    /// The functions instrumented next are `kernel_mangled` (a kernel about
    /// to be launched for the first time) and the functions it calls.
    pub fn instrumenting_for(&mut self, kernel_mangled: &str) {
        self.instrumenting_for = Some(kernel_mangled.to_string());
    }

    /// Whether the run counts (the counters tool) rather than checks.
    pub fn counting(&self) -> bool {
        self.counting.is_some()
    }

    /// The counters tool: the table of instrumented launch `serial` of
    /// `blocks` thread blocks (0: not known). `None`: the launch must run
    /// its original code.
    pub fn count_table(&mut self, serial: u64, blocks: u64) -> Option<TableShape> {
        self.counting.as_mut()?.table_for(serial, blocks)
    }

    /// The counters tool: the table of launch `serial` read back after it
    /// completed (`None`: it could not be allocated or read). Its counters
    /// go to the report and the CLI.
    pub fn on_count_table(&mut self, serial: u64, table: Option<&[u8]>) {
        let Some(counting) = &mut self.counting else { return };
        let window_blocks = counting.window_blocks();
        let folded = match table {
            Some(t) => counting.fold_table(serial, t).map_err(|e| e.to_string()),
            None => {
                counting.lose(serial);
                Err("its count table could not be allocated or read back".to_string())
            }
        };
        match folded {
            Ok((kernel, launch)) => {
                let source = CounterSource::Instrumented;
                self.stream.collector_mut().add_launch_counters(
                    &kernel,
                    window_blocks,
                    WARP_SIZE,
                    source,
                    launch.clone(),
                );
                self.emit(Event::Counters { kernel, window_blocks, warp_size: WARP_SIZE, source, launch });
            }
            Err(e) => {
                let kernel = self.launches.get(serial as usize).map(|l| format!("{} launch {}", l.0, l.1));
                self.note(&format!("{} not counted: {e}", kernel.unwrap_or_else(|| format!("launch {serial}"))));
            }
        }
    }

    /// Bytes of device memory the run's tool state needs: the inject
    /// tool's state, or the flow tool's scratch (0 for the other tools).
    pub fn inject_bytes(&self) -> u64 {
        match self.config.tool {
            _ if self.config.fault.is_some() => crate::inject::STATE_BYTES,
            ToolKind::Flow => crate::flow::SCRATCH_BYTES,
            _ => 0,
        }
    }

    /// The device address of the inject tool's state.
    pub fn set_inject_state(&mut self, addr: u64) {
        self.inject_state = addr;
    }

    /// The fault's activations as read back at the end; `exact` is false
    /// when only the mapped flag could be read (`activations` 1 if it fired).
    pub fn inject_result(&mut self, activations: u64, exact: bool) {
        let Some(fault) = self.config.fault.clone() else {
            return;
        };
        if std::mem::replace(&mut self.injection_reported, true) {
            return;
        }
        let injection = Injection { fault, activations, exact };
        self.stream.collector_mut().set_injection(injection.clone());
        self.emit(Event::Injection { injection });
    }

    /// The launch capture of the run (`--capture`), if any.
    pub fn capture(&mut self) -> Option<&mut CaptureRun> {
        self.capture.as_mut()
    }

    /// A launch is about to start: capture it when the run captures and
    /// the kernel filter admits it (see [`CaptureRun::begin`]).
    pub fn capture_begin(
        &mut self,
        names: KernelNames,
        geometry: Geometry,
        params: &[u8],
        layout: &[ParamSlot],
    ) -> Option<(u64, Vec<(u64, u64)>)> {
        let admitted = self.wants_kernel(names);
        self.capture.as_mut()?.begin(names, admitted, geometry, params, layout)
    }

    /// Number of site-table keys so far (sites, or for the flow tool one
    /// per site and state): the device table must cover keys below it.
    pub fn site_count(&self) -> u32 {
        let sites = self.sites.len() as u32;
        if self.config.tool == ToolKind::Flow {
            sites.saturating_mul(crate::flow::KEYS_PER_SITE)
        } else {
            sites
        }
    }

    /// The sites so far.
    pub fn sites(&self) -> &SiteTable {
        &self.sites
    }

    /// Decide one launch of a kernel whose parameters are not known.
    pub fn launch(&mut self, names: KernelNames) -> LaunchDecision {
        self.launch_with(names, LaunchWay::ParamsUnknown)
    }

    /// Decide one launch of a kernel: instrumented (as sampling says), or
    /// screened (launch screening, where its buffers are known), or
    /// neither, for a reason the report keeps.
    pub fn launch_with(&mut self, names: KernelNames, way: LaunchWay) -> LaunchDecision {
        let name = Self::display_name(names);
        let admitted = self.wants_kernel(names);
        let entry =
            self.kernels.entry(names.mangled.to_string()).or_insert(KernelEntry { launches: 0, sample_from: 0 });
        let index = entry.launches;
        let since = index - entry.sample_from;
        entry.launches += 1;
        // Where launches are screened, fewer are instrumented; one that
        // turns out not to be screenable is sampled as without screening.
        let sampled = self.config.samples_launch(since);
        let screens = self.screen.is_some() && self.screen_ready && self.counting.is_none();
        let chosen = if screens { self.config.samples_screened_launch(since) } else { sampled };
        let serial = self.launches.len() as u64;
        let elsewhere = matches!(way, LaunchWay::OtherContext);
        // (a kernel being prepared is screened as a sampled-out launch is)
        let preparing = self.preparing.contains(names.mangled);
        let instrumentable = admitted && !elsewhere && !self.stream.collector().full();
        let wanted = instrumentable && chosen;
        let mut instrument = wanted && !preparing;
        if let (Some(counting), true) = (&mut self.counting, instrument) {
            instrument = counting.grant(serial, names.mangled, index);
        }
        // hardware counters instrument nothing
        instrument &= self.config.counter_source == CounterSource::Instrumented;
        if elsewhere && !self.stream.collector().has_kernel(&name) {
            let reason = "launched only in a second CUDA context, which the tool does not instrument".to_string();
            self.stream.collector_mut().kernel_status(&name, KernelStatus::Skipped { reason }, 0);
        }
        if index == 0 {
            self.kernel_names.insert(name.clone(), names.mangled.to_string());
        }
        let counted_by_hardware = admitted && !elsewhere && !self.stream.collector().full();
        let (mut check, mut screen) = if self.hardware_counts(serial, &name, index, counted_by_hardware) {
            (LaunchCheck::Instrumented, None)
        } else {
            self.screen_launch(names, way, serial, admitted, instrument, sampled)
        };
        let unscreened = matches!(check, LaunchCheck::Unchecked(_));
        let by_instruments = self.config.counter_source == CounterSource::Instrumented;
        if unscreened && !instrument && !preparing && instrumentable && sampled && !chosen && by_instruments {
            // Not screenable: instrumented as sampling without screening says.
            instrument = true;
            (check, screen) = self.screen_launch(names, way, serial, admitted, true, sampled);
        }
        let mut prepare_now = false;
        if preparing && (wanted || unscreened && instrumentable && sampled) {
            if matches!(check, LaunchCheck::Unchecked(_)) {
                // Not screened, it would run unchecked: its preparation is
                // cut short, and it is instrumented now (NVBit disassembles
                // what is not cached yet, as it would without preparation).
                self.preparing.ready(names.mangled);
                prepare_now = true;
                instrument = true;
                (check, screen) = self.screen_launch(names, way, serial, admitted, true, sampled);
            } else {
                // (counted: a launch that waited, screened instead of instrumented)
                self.preparing.launch(names.mangled);
            }
        }
        self.launches.push((name.clone(), index));
        self.stream.collector_mut().launch_checked(&name, check);
        self.emit(Event::launch(name, index, check));
        LaunchDecision { instrument, serial, screen, prepare_now }
    }

    /// The mangled name of the kernel shown as `display`.
    fn launch_mangled(&self, display: &str) -> Option<String> {
        if self.kernels.contains_key(display) {
            return Some(display.to_string());
        }
        self.kernel_names.get(display).cloned()
    }

    fn site_ref(&self, id: SiteId) -> Option<(String, SiteRef)> {
        let s = self.sites.get(id)?;
        Some((
            s.kernel.to_string(),
            SiteRef { id, offset: s.offset, instr: s.instr.to_string(), location: s.location.clone() },
        ))
    }

    fn add_finding(
        &mut self,
        site: SiteId,
        kind: ExceptionKind,
        format: FpFormat,
        launch: u64,
        occurrences: u64,
    ) -> Recorded {
        self.resolve_lines(site);
        let Some((kernel, site_ref)) = self.site_ref(site) else {
            return Recorded::Dropped;
        };
        let r = self.stream.collector_mut().record(&kernel, kind, format, site_ref.clone(), launch, occurrences);
        if let (Some(rank), true) = (self.rank, r != Recorded::Dropped) {
            self.stream.collector_mut().add_rank(&kernel, site_ref.offset, kind, format, rank);
        }
        if r != Recorded::Dropped {
            *self.sent.entry((site, kind, format)).or_insert(0) += occurrences;
            self.emit(Event::Finding { kernel, kind, format, site: site_ref, launch, occurrences });
        }
        r
    }

    /// A flow record of the site-table key `key`: `occurrences` more warp
    /// executions and the classes `seen` (lane-word bits).
    fn add_flow(&mut self, key: u32, kind: ExceptionKind, format: FpFormat, launch: u64, occurrences: u64, seen: u16) {
        let (site, state) = crate::flow::of_key(key);
        self.resolve_lines(site);
        let Some((kernel, site_ref)) = self.site_ref(site) else { return };
        let class = self.flow_classes.get(&site).cloned().unwrap_or_default();
        let finding =
            xfpx_common::report::FlowFinding { state, kind, format, site: site_ref, class, launch, occurrences, seen };
        self.stream.collector_mut().record_flow(&kernel, finding.clone());
        *self.sent.entry((SiteId(key), kind, format)).or_insert(0) += occurrences;
        *self.flow_seen_sent.entry((key, kind)).or_insert(0) |= seen;
        self.emit(Event::Flow { kernel, finding });
    }

    /// New findings from the device ring, `RECORD_SIZE` bytes each.
    /// Returns how many records were malformed.
    pub fn on_records(&mut self, bytes: &[u8]) -> usize {
        let mut bad = 0;
        for chunk in bytes.chunks(RECORD_SIZE) {
            match DeviceRecord::decode(chunk) {
                Ok(r) => {
                    self.delivery.saw_serial(r.launch);
                    let launch = match self.launches.get(r.launch as usize) {
                        Some(l) => l.1,
                        None => {
                            self.delivery.unmatched_serials += 1;
                            LAUNCH_UNKNOWN
                        }
                    };
                    for kind in r.kinds.iter() {
                        if !self.sent.contains_key(&(r.site, kind, r.format)) {
                            self.delivery.by_ring += 1;
                            if self.config.tool == ToolKind::Flow {
                                self.add_flow(r.site.0, kind, r.format, launch, 1, 0);
                            } else {
                                self.add_finding(r.site, kind, r.format, launch, 1);
                            }
                        }
                    }
                }
                Err(_) => bad += 1,
            }
        }
        bad
    }

    /// Final counts from a chunk of the device site table whose first site
    /// is `first`: adds what the streamed records did not carry, including
    /// findings whose record never arrived.
    pub fn on_table_chunk(&mut self, first: u32, bytes: &[u8]) -> Result<(), String> {
        for (site, entry) in decode_chunk(first, bytes).map_err(|e| e.to_string())? {
            for (kind, format, count) in entry.findings() {
                let sent = self.sent.get(&(site, kind, format)).copied();
                let total_sent = sent.unwrap_or(0);
                if self.config.tool == ToolKind::Flow {
                    // the key's classes arrive only here
                    let seen = crate::flow::classes_of_byte(entry.classes_of(kind));
                    let had = self.flow_seen_sent.get(&(site.0, kind)).copied().unwrap_or(0);
                    if count > total_sent || seen & !had != 0 {
                        if sent.is_none() {
                            self.delivery.by_sweep_only += 1;
                        }
                        self.add_flow(site.0, kind, format, LAUNCH_UNKNOWN, count.saturating_sub(total_sent), seen);
                    }
                    continue;
                }
                if count > total_sent {
                    // a known finding keeps its first launch; one whose
                    // record never arrived has no known launch
                    if sent.is_none() {
                        self.delivery.by_sweep_only += 1;
                    }
                    self.add_finding(site, kind, format, LAUNCH_UNKNOWN, count - total_sent);
                }
            }
        }
        Ok(())
    }

    /// How findings reached the host so far.
    pub fn delivery(&self) -> &Delivery {
        &self.delivery
    }

    /// The report so far.
    pub fn report(&self) -> xfpx_common::report::Report {
        self.stream.report()
    }

    /// Time passed: launch events that waited their batch's longest go
    /// out (see [`ToolStream::flush_aged`]).
    pub fn tick(&mut self) {
        self.stream.flush_aged();
    }

    /// The program is exiting: tell the CLI, or write the report.
    pub fn finish(&mut self) -> Result<(), String> {
        if self.stream.is_finished() {
            return Ok(());
        }
        if let Some(text) = self.delivery.note(self.launches.len() as u64) {
            self.note(&text);
        }
        if let Some(text) = self.preparing.note() {
            self.note(&text);
        }
        if let Some(notes) = self.capture.as_mut().map(CaptureRun::finish) {
            for n in notes {
                self.note(&n);
            }
        }
        // an inject run whose state was never read back (no GPU context
        // reached the end): nothing is known of the count
        self.inject_result(0, false);
        for text in self.hardware.as_ref().map(crate::hw_counts::HwRun::notes).unwrap_or_default() {
            self.note(&text);
        }
        let unread = self.counting.as_ref().map_or(0, CountRun::unread);
        if unread > 0 {
            self.note(&format!(
                "{unread} counted launches were not read back (the program ended before the tool could read them)"
            ));
        }
        if self.ahead_used + self.ahead_differed > 0 {
            let mut text = format!("{} functions were planned before their first launch", self.ahead_used);
            if self.ahead_differed > 0 {
                text += &format!(
                    "; {} plans made ahead were dropped (NVBit's instructions differed from the disassembly ahead)",
                    self.ahead_differed
                );
            }
            self.note(&text);
        }
        if self.in_flight_left_out.0 > 0 {
            let (calls, functions) = std::mem::take(&mut self.in_flight_left_out);
            let readable: Vec<String> = functions.iter().map(|f| xfpx_common::names::readable(f)).collect();
            self.note(&format!(
                "{calls} calls in {} functions ({}) were left out: they would have run between a warpgroup matrix \
                 multiply (HGMMA) and the wait for it, where a call reads and writes its accumulators before they \
                 are written; the checks (or a fault's calls) they carried do not run there",
                functions.len(),
                xfpx_common::names::listed(&readable, 3, 60)
            ));
        }
        if self.config.tool == ToolKind::Detect && self.config.mode == Mode::Fast && self.thinned.checks > 0 {
            let t = self.thinned;
            let text = format!(
                "fast mode: {} of {} checks dropped: {} because their values reach a later check, {} because \
                 an earlier check looked at the same value, {} because their results cannot be exceptional \
                 ({} of the dropped checks would also have reported subnormals); use --mode detect to check every result",
                t.dropped,
                t.checks,
                t.dropped - t.repeated - t.unexceptional,
                t.repeated,
                t.unexceptional,
                t.dropped_subnormal
            );
            self.note(&text);
        }
        self.stream.finish()
    }
}

#[cfg(test)]
mod tests;
