//! `xfpx run`: check the flags, start the program with the instrumentation
//! library and the run configuration, collect the events it streams, and
//! write the report however the program ends. With `--tool counters` the
//! report carries the counters, the per-kernel table follows the summary,
//! and `--region` checks them against an operational region.

use crate::args::{self, Inject, Mode, OutputFormat, RunArgs};
use crate::console::say;
use crate::events::{EventSocket, Message};
use crate::exit::{ExitError, EXIT_FINDINGS, EXIT_NOTHING_CHECKED, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_USAGE};
use crate::output::Outputs;
use crate::progress::RunProgress;
use crate::report_io::Destination;
use crate::report_name::{self, NameFields};
use crate::tool_library::{self, ToolLoad, TOOL_LIBRARY_ENV};
use crate::{region_cmd, signals, summary, vendor};
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use xfpx_common::backend::{LaunchEnv, Launching, LiveBackend, Refusal};
use xfpx_common::capture;
use xfpx_common::config::{CaptureSettings, RunConfig, RunSettings, CONFIG_ENV};
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKinds;
use xfpx_common::report::{Collector, ExitStatus, KernelStatus, Recorded, Report, RunInfo};
use xfpx_common::screened::LaunchCheck;

/// How long to wait, after the program exits, for connections still open
/// (held by a process it left behind) to deliver anything more.
const LINGER: Duration = Duration::from_secs(2);
/// The longest wait after the program exits, however busy such leftover
/// processes keep their connections.
const LINGER_MAX: Duration = Duration::from_secs(10);
/// How often the loop looks for signals and new connections.
const POLL: Duration = Duration::from_millis(20);
/// Malformed event lines reported one by one; later ones are only counted.
const MALFORMED_SHOWN: u64 = 5;

/// Everything `xfpx run` needs, checked.
#[derive(Debug)]
struct RunPlan {
    config: RunConfig,
    /// Where the report goes (`None`: `--no-report`).
    report: Option<Destination>,
    fail_on: Option<args::FailOn>,
    /// `--region`: the operational region the counters are checked against.
    region: Option<PathBuf>,
    format: OutputFormat,
    inject: Inject,
    command: Vec<OsString>,
    /// Where the HTML page goes, if asked.
    html: Option<PathBuf>,
    /// With `--emulate`: the target of the emulated device.
    target: Option<String>,
    /// What the report's notes say of the plan itself.
    notes: Vec<String>,
}

impl RunPlan {
    /// The plan as `live` runs it ([`LiveBackend::settle`]): the mode it
    /// lowers, with its notes; a setting it refuses is an error (a usage
    /// error, status 2, where the setting means nothing on that vendor).
    fn settled(mut self, live: &dyn LiveBackend) -> Result<RunPlan> {
        let mode = match live.settle(&self.config) {
            Ok(settled) => {
                self.notes.extend(settled.notes);
                settled.mode
            }
            Err(Refusal::Usage(e)) => return Err(ExitError::new(EXIT_USAGE, e).into()),
            Err(Refusal::Unavailable(e)) => bail!(e),
        };
        if mode != self.config.mode {
            let settings = RunSettings { mode, ..self.config.settings().clone() };
            self.config = settings.check()?;
        }
        Ok(self)
    }
}

fn plan(a: RunArgs) -> Result<RunPlan> {
    let counters = a.tool == xfpx_common::tool::ToolKind::Counters;
    if !counters && a.counters.is_some() {
        return Err(ExitError::new(EXIT_USAGE, "--counters needs --tool counters".to_string()).into());
    }
    let hardware = a.counters == Some(xfpx_common::counters::CounterSource::Hardware);
    if hardware && a.inject == args::InjectChoice::Preload {
        let e = "--counters hardware loads its library through CUDA_INJECTION64_PATH: leave out --inject preload";
        return Err(ExitError::new(EXIT_USAGE, e.to_string()).into());
    }
    let flowing = a.tool == xfpx_common::tool::ToolKind::Flow;
    let (sample_every, sample_doubling) = match a.sample.as_deref() {
        // counters count and the flow tool follows every launch unless asked otherwise
        None if a.mode == Mode::Fast && !counters && !flowing => (1, true),
        None => (1, false),
        Some("auto") => (1, true),
        Some(k) => match k.parse::<u32>() {
            Ok(0) => bail!("invalid --sample 0: instrument every K-th launch needs K >= 1"),
            Ok(k) => (k, false),
            Err(_) => bail!("invalid --sample {k}: expected a number K >= 1 or `auto`"),
        },
    };
    let instr_range = a.instr_range.as_deref().map(args::parse_instr_range).transpose()?;
    let fault = a.fault.check_run(a.tool)?;
    // a permanent fault is in every launch: no sampling
    let (sample_every, sample_doubling) = if fault.is_some() { (1, false) } else { (sample_every, sample_doubling) };
    let screen_launches = match a.screen_launches {
        Some(args::Switch::On) if a.tool != xfpx_common::tool::ToolKind::Detect => {
            return Err(ExitError::new(
                EXIT_USAGE,
                "--screen-launches on needs the detector (--tool detect)".to_string(),
            )
            .into())
        }
        Some(s) => s == args::Switch::On,
        None => a.mode == Mode::Fast && a.tool == xfpx_common::tool::ToolKind::Detect,
    };
    // The one check of the configuration, before anything is created; the
    // settings that environment variables give are read here, once.
    let capture = match &a.capture {
        Some(dir) => Some(CaptureSettings {
            dir: capture_folder(dir)?,
            max_launches: a.capture_max_launches.unwrap_or(capture::DEFAULT_MAX_LAUNCHES),
            max_bytes: match a.capture_max_bytes.as_deref() {
                Some(b) => args::parse_bytes("--capture-max-bytes", b)?,
                None => capture::DEFAULT_MAX_BYTES,
            },
        }),
        None => None,
    };
    if a.capture_max_launches == Some(0) {
        bail!("invalid --capture-max-launches 0: capture at least one launch, or leave out --capture");
    }
    let config = RunSettings {
        capture,
        mode: a.mode,
        kernels: a.kernels,
        exclude: a.exclude,
        sample_every,
        sample_doubling,
        screen_launches,
        instr_range,
        max_records: a.max_records,
        dump_dir: a.dump.as_deref().map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf())),
        tool: a.tool,
        count_window_blocks: a.window_blocks,
        counter_source: a.counters.unwrap_or_default(),
        fault,
        ..RunSettings::from_environment(|name| std::env::var_os(name))
    }
    .check()?;
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on_gates).transpose()?;
    let fail_on_region = fail_on.is_some_and(|f| f.region);
    if !counters && (a.region.is_some() || a.window_blocks != 0) {
        let flag = if a.region.is_some() { "--region" } else { "--window-blocks" };
        return Err(ExitError::new(EXIT_USAGE, format!("{flag} needs --tool counters")).into());
    }
    if fail_on_region && a.region.is_none() {
        return Err(ExitError::new(EXIT_USAGE, "--fail-on region needs --region REGION".to_string()).into());
    }
    if let Some(r) = &a.region {
        // a bad region file is found before the program runs
        region_cmd::read(r)?;
    }
    let report = (!a.no_report)
        .then(|| report_name::expand(&a.report, &NameFields::of_this_process()))
        .transpose()?
        .map(|name| Destination::from_arg(&name).absolute());
    Outputs::of_run(report.as_ref(), a.html.as_deref(), a.format).check()?;
    // The backend writes this file only when it cannot reach the event
    // socket; for stdout or no report, `run` points it into its scratch folder.
    let report_path = match &report {
        Some(Destination::File(p)) => p.clone(),
        _ => RunSettings::default().report_path,
    };
    if let Some(d) = &a.dump {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create dump directory {}", d.display()))?;
    }
    if let Some(c) = &config.capture {
        std::fs::create_dir_all(&c.dir)
            .with_context(|| format!("cannot create the capture folder {}", c.dir.display()))?;
    }
    let config = config.reporting_to(None, report_path);
    Ok(RunPlan {
        config,
        report,
        fail_on,
        region: a.region,
        format: a.format,
        // the hardware counters' library starts when the driver does
        inject: if hardware { Inject::DriverHook } else { a.inject.for_command(&a.command) },
        command: a.command,
        html: a.html,
        target: a.target,
        notes: Vec::new(),
    })
}

/// The capture folder `dir`, absolute: a new one, or an existing empty
/// folder (nothing in it is replaced). Created once the run is checked.
fn capture_folder(dir: &Path) -> Result<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!("the capture folder {} is not empty: name a new or empty folder", dir.display());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) if dir.exists() && !dir.is_dir() => {
            bail!("the capture folder {} is not a folder", dir.display())
        }
        Err(e) => bail!("cannot read the capture folder {}: {e}", dir.display()),
    }
    std::path::absolute(dir).with_context(|| format!("cannot resolve the capture folder {}", dir.display()))
}

/// A private directory for the configuration file and the event socket,
/// removed when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn create() -> Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("xfpx-{}-{nanos:08x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create a private directory {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Scratch {
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `xfpx run`; returns the exit code.
pub fn run(a: RunArgs) -> Result<i32> {
    let (vendor_choice, emulate) = (a.vendor, a.emulate);
    let p = plan(a)?;
    // Vendor first (so no-GPU machines hear about that), then the tool
    // library, then the driver: a missing library is reported the same
    // way on machines with and without a GPU.
    let drivers = vendor::Drivers::probe(Path::new("/"));
    let vendor = vendor::resolve(vendor_choice, drivers, false, emulate)?;
    let live = vendor.live()?;
    let p = p.settled(live)?;
    let load = tool_library::for_counters(tool_library::resolve(live)?, p.config.counter_source)?;
    if load != ToolLoad::Nothing {
        vendor::resolve(vendor_choice, drivers, true, emulate)?;
        live.check_machine().map_err(|e| anyhow::anyhow!(e))?;
    }

    let scratch = Scratch::create()?;
    let socket_path = scratch.0.join("events.sock");
    let mut socket = EventSocket::bind(&socket_path)
        .with_context(|| format!("cannot create the event socket {}", socket_path.display()))?;
    let report_path = match p.report {
        Some(Destination::File(_)) => p.config.report_path.clone(),
        _ => scratch.0.join("unused-report.json"),
    };
    let config = p.config.clone().reporting_to(Some(socket_path), report_path);
    let config_path = scratch.0.join("config.json");
    std::fs::write(&config_path, config.to_json())
        .with_context(|| format!("cannot write the run configuration {}", config_path.display()))?;

    let mut cmd = Command::new(&p.command[0]);
    cmd.args(&p.command[1..]).env(CONFIG_ENV, &config_path);
    let existing = |name: &str| std::env::var_os(name);
    let env = injection_env(live, &load, p.inject, &existing, scratch.path(), p.target.as_deref())?;
    cmd.envs(env.vars);
    if p.format == OutputFormat::Json || p.report == Some(Destination::Stdout) {
        // stdout carries the report alone; the program's output goes to stderr.
        use std::os::fd::AsFd;
        let stderr = std::io::stderr().as_fd().try_clone_to_owned().context("cannot duplicate stderr")?;
        cmd.stdout(std::process::Stdio::from(stderr));
    }
    let mut notes = p.notes.clone();
    for w in env.warnings {
        say!("xfpx: warning: {w}");
        notes.push(w);
    }
    if load == ToolLoad::Nothing {
        notes.push(format!(
            "test hook {TOOL_LIBRARY_ENV}=none: no instrumentation library was loaded; events came from the program itself"
        ));
    }

    signals::install().map_err(anyhow::Error::msg)?;
    let program = p.command[0].to_string_lossy().into_owned();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ExitError::new(EXIT_NOT_FOUND, format!("program not found: {program}")).into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(
                ExitError::new(EXIT_NOT_EXECUTABLE, format!("cannot execute {program}: permission denied")).into()
            )
        }
        Err(e) => return Err(ExitError::new(EXIT_NOT_EXECUTABLE, format!("cannot start {program}: {e}")).into()),
    };
    let pid = child.id();
    let started_unix = xfpx_common::report::unix_now();

    let (tx, rx) = mpsc::channel::<Message>();
    let waiter_tx = tx.clone();
    std::thread::Builder::new()
        .name("xfpx-wait".into())
        .spawn(move || {
            let status = child.wait().ok();
            let _ = waiter_tx.send(Message::ProgramExited(status));
        })
        .context("cannot start a thread to wait for the program")?;

    let run_info = RunInfo {
        vendor: vendor.name().to_string(),
        device: "unknown".into(),
        target: None,
        command: p.command.iter().map(|s| s.to_string_lossy().into_owned()).collect(),
        mode: run_mode(&config),
        started_unix,
        finished_unix: None,
        exit: ExitStatus::Unknown,
        sample_every: config.reported_sample_every(),
        sample_auto: config.sample_doubling,
        truncated: false,
        notes,
        attached: false,
    };
    let mut state = LoopState::new(Collector::new(run_info, config.max_records));
    let exit = state.pump(&mut socket, &tx, &rx, pid);
    let mut report = state.finish(exit, &load, p.inject);
    drop(scratch);
    let captured = p.config.capture.as_ref().map(|c| finish_capture(&c.dir, &report));
    // the region check goes into the report; a failed check still leaves
    // the report written, then is the command's error
    let checked = p.region.as_deref().map(|r| region_cmd::check(&mut report, &p.command[0].to_string_lossy(), r));
    let text = format!("{}{}", summary::summary(&report, false), region_cmd::table(&report));
    Outputs::of_run(p.report.as_ref(), p.html.as_deref(), p.format).finish(&report, &text)?;
    if let Some(line) = captured {
        say!("{line}");
    }
    let outside = match checked.transpose()? {
        Some(outcome) => !outcome.deviations.is_empty(),
        None => false,
    };
    if p.fail_on.is_some_and(|f| f.region) && outside {
        return Ok(EXIT_FINDINGS);
    }
    Ok(exit_code_gated(&report, p.fail_on))
}

/// Assemble the capture's manifest from the parts the program's processes
/// wrote; returns the line that says what was captured where.
fn finish_capture(dir: &Path, report: &Report) -> String {
    match capture::assemble(dir, report.run.command.clone()) {
        Ok(Some(m)) => {
            let complete = m.launches.iter().filter(|l| l.complete).count();
            let bytes: u64 = m.launches.iter().map(|l| l.bytes).sum();
            let mut line = format!(
                "xfpx: capture: {complete} launch{} written to {} ({} of memory images; manifest {})",
                if complete == 1 { "" } else { "es" },
                dir.display(),
                xfpx_common::limits::human_bytes(bytes),
                capture::MANIFEST
            );
            if m.launches.len() > complete {
                line.push_str(&format!("; {} incomplete (see the manifest)", m.launches.len() - complete));
            }
            if !m.not_captured.is_empty() {
                line.push_str(&format!(
                    "; {} note{} of what was not captured in the report and manifest",
                    m.not_captured.len(),
                    if m.not_captured.len() == 1 { "" } else { "s" }
                ));
            }
            line
        }
        Ok(None) => format!(
            "xfpx: capture: nothing was captured into {} (no process of the program captured a launch)",
            dir.display()
        ),
        Err(e) => format!("xfpx: capture: {e}"),
    }
}

/// The run's mode as the report names it: the counters tool's runs are
/// `counters` (the detector's modes do not apply to them).
pub fn run_mode(config: &RunConfig) -> String {
    match config.tool {
        xfpx_common::tool::ToolKind::Counters => "counters".into(),
        xfpx_common::tool::ToolKind::Flow => "flow".into(),
        _ => config.mode.name().into(),
    }
}

/// The environment that loads the tool library into the program (the
/// live backend's), none under the test hook.
pub fn injection_env(
    live: &dyn LiveBackend,
    load: &ToolLoad,
    inject: Inject,
    existing: &dyn Fn(&str) -> Option<OsString>,
    scratch: &Path,
    target: Option<&str>,
) -> Result<LaunchEnv> {
    let ToolLoad::Library(library) = load else { return Ok(LaunchEnv::default()) };
    let launching = Launching { library, inject, existing, scratch, target };
    live.environment(&launching).map_err(|e| anyhow::anyhow!(e))
}

/// The exit code of `xfpx run`: with `--fail-on`, [`EXIT_FINDINGS`] when it
/// matches a record and [`EXIT_NOTHING_CHECKED`] when nothing was checked;
/// otherwise the program's own status (128 + signal if killed).
pub fn exit_code(report: &Report, fail_on: Option<ExceptionKinds>) -> i32 {
    if let Some(code) = fail_on.and_then(|kinds| gate(report, kinds)) {
        return code;
    }
    match report.run.exit {
        ExitStatus::Code { code } => code,
        ExitStatus::Signal { signal } => 128 + signal,
        ExitStatus::Unknown => 1,
    }
}

/// The exit code of a run or replay gated by `--fail-on`: [`exit_code`]
/// for its kinds, and with `coverage` [`EXIT_FINDINGS`] when a kernel was
/// partly or not instrumented.
pub fn exit_code_gated(report: &Report, fail_on: Option<args::FailOn>) -> i32 {
    match fail_on {
        Some(f) if f.coverage => coverage_gate(report).unwrap_or_else(|| exit_code(report, f.kinds)),
        f => exit_code(report, f.and_then(|f| f.kinds)),
    }
}

/// The verdict of `--fail-on coverage` on a report, if it fails: a kernel
/// partly or not instrumented, or nothing checked at all.
pub fn coverage_gate(report: &Report) -> Option<i32> {
    if report.coverage_lost().next().is_some() {
        Some(EXIT_FINDINGS)
    } else if report.nothing_checked().is_some() {
        Some(EXIT_NOTHING_CHECKED)
    } else {
        None
    }
}

/// The verdict of `--fail-on KINDS` on a report, if it fails: a finding
/// (precise or screened) of those kinds, or nothing checked at all.
pub fn gate(report: &Report, kinds: ExceptionKinds) -> Option<i32> {
    // a flow record of a kind means a value of that kind was there
    let flowed = report.flow.iter().flat_map(|f| &f.kernels).flat_map(|k| &k.records).any(|r| kinds.contains(r.kind));
    let screened = report.screened().any(|(_, f)| kinds.contains(f.kind));
    if flowed || screened || report.records().any(|(_, r)| kinds.contains(r.kind)) {
        Some(EXIT_FINDINGS)
    } else if report.nothing_checked().is_some() {
        Some(EXIT_NOTHING_CHECKED)
    } else {
        None
    }
}

/// Pass `sig` on to the program; returns a warning when that failed for
/// another reason than the program being gone already (as when the signal
/// went to the whole process group and its exit is on the way).
fn forward(pid: u32, sig: i32) -> Option<String> {
    match signals::send(pid, sig) {
        Ok(()) => None,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => None,
        Err(e) => Some(format!("xfpx: warning: cannot pass {} on to the program: {e}", signals::name(sig))),
    }
}

/// What the event loop keeps track of.
#[derive(Debug)]
struct LoopState {
    collector: Collector,
    open: u64,
    connections: u64,
    finished: BTreeSet<u64>,
    /// The rank each connection's process gave in its hello.
    ranks: BTreeMap<u64, u32>,
    malformed: u64,
    warned_full: bool,
    /// Kernels instrumented and launches seen, for the progress line.
    kernels: u64,
    launches: u64,
    progress: RunProgress,
}

impl LoopState {
    fn new(collector: Collector) -> LoopState {
        LoopState {
            collector,
            open: 0,
            connections: 0,
            finished: BTreeSet::new(),
            ranks: BTreeMap::new(),
            malformed: 0,
            warned_full: false,
            kernels: 0,
            launches: 0,
            progress: RunProgress::start(),
        }
    }

    /// Handle messages until the program has exited and its connections
    /// are drained; returns how the program ended.
    fn pump(
        &mut self,
        socket: &mut EventSocket,
        tx: &mpsc::Sender<Message>,
        rx: &mpsc::Receiver<Message>,
        pid: u32,
    ) -> ExitStatus {
        let mut exit: Option<ExitStatus> = None;
        let mut last_activity = Instant::now();
        let mut exited_at = Instant::now();
        loop {
            let accepted = socket.accept_pending(tx);
            self.open += accepted;
            self.connections += accepted;
            if exit.is_none() {
                for sig in signals::take_to_forward() {
                    if let Some(warning) = forward(pid, sig) {
                        say!("{warning}");
                    }
                }
            }
            if let Some(line) = self.progress.line(self.kernels, self.launches) {
                say!("{line}");
            }
            match rx.recv_timeout(POLL) {
                Ok(Message::ProgramExited(status)) => {
                    exit = Some(match status {
                        Some(s) => match (s.code(), s.signal()) {
                            (Some(code), _) => ExitStatus::Code { code },
                            (None, Some(signal)) => ExitStatus::Signal { signal },
                            (None, None) => ExitStatus::Unknown,
                        },
                        None => ExitStatus::Unknown,
                    });
                    exited_at = Instant::now();
                    // Connections made before the exit are all queued now.
                    let accepted = socket.accept_pending(tx);
                    self.open += accepted;
                    self.connections += accepted;
                    last_activity = Instant::now();
                }
                Ok(Message::Closed) => {
                    self.open = self.open.saturating_sub(1);
                    last_activity = Instant::now();
                }
                Ok(Message::Event { conn, event }) => {
                    self.event(conn, event);
                    last_activity = Instant::now();
                }
                Ok(Message::Malformed { conn, error }) => {
                    self.malformed += 1;
                    if self.malformed <= MALFORMED_SHOWN {
                        say!("xfpx: warning: ignoring a malformed event on connection {conn}: {error}");
                    }
                    last_activity = Instant::now();
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            if let Some(e) = &exit {
                if self.open == 0 || last_activity.elapsed() > LINGER || exited_at.elapsed() > LINGER_MAX {
                    return e.clone();
                }
            }
        }
    }

    fn event(&mut self, conn: u64, event: Event) {
        match event {
            Event::Hello { process, .. } => {
                if let Some(rank) = process.rank {
                    self.ranks.insert(conn, rank);
                }
                self.collector.add_process(process);
                self.collector.run_mut().attached = true;
            }
            Event::Device { vendor, device, target } => {
                let run = self.collector.run_mut();
                // Each process of the program reports its device; say it once.
                if run.device != device || run.target != target {
                    say!("xfpx: device {device}{}", target.as_deref().map(|t| format!(" ({t})")).unwrap_or_default());
                }
                run.vendor = vendor;
                run.device = device;
                run.target = target;
            }
            Event::Kernel { name, status, probes } => {
                self.kernels += u64::from(status == KernelStatus::Instrumented);
                // a flow run's report has a flow section, empty where nothing flowed
                if status == KernelStatus::Instrumented && self.collector.run_mut().mode == "flow" {
                    self.collector.expect_flow(&name);
                }
                self.collector.kernel_status(&name, status, probes);
            }
            Event::Coverage { kernel, coverage } => self.collector.kernel_coverage(&kernel, coverage),
            Event::Launch { .. } => {
                let check = event.launch_check().unwrap_or(LaunchCheck::Unchecked(None));
                let Event::Launch { kernel, .. } = event else { return };
                self.launches += 1;
                self.collector.launch_checked(&kernel, check);
            }
            Event::Screened { kernel, finding } => {
                let mut line = crate::screen_lines::screened_line(&kernel, &finding);
                if let Some(rank) = self.ranks.get(&conn) {
                    line.push_str(&format!(" on rank {rank}"));
                }
                if self.collector.screened(&kernel, finding) {
                    say!("{line}");
                }
            }
            Event::ScreenLost { kernel } => self.collector.screen_lost(&kernel),
            Event::Finding { kernel, kind, format, site, launch, occurrences } => {
                let rank = self.ranks.get(&conn).copied();
                let mut line = summary::finding_line(&kernel, kind, format, &site);
                if let Some(rank) = rank {
                    line.push_str(&format!(" on rank {rank}"));
                }
                let offset = site.offset;
                let recorded = self.collector.record(&kernel, kind, format, site, launch, occurrences);
                if let (Some(rank), true) = (rank, recorded != Recorded::Dropped) {
                    self.collector.add_rank(&kernel, offset, kind, format, rank);
                }
                match recorded {
                    Recorded::New => say!("{line}"),
                    Recorded::Known => {}
                    Recorded::Dropped => {
                        if !self.warned_full {
                            self.warned_full = true;
                            say!("xfpx: the record limit was reached; further new findings are not recorded");
                        }
                    }
                }
            }
            Event::Counters { kernel, window_blocks, warp_size, source, launch } => {
                if !self.collector.add_launch_counters(&kernel, window_blocks, warp_size, source, launch) {
                    let text = format!(
                        "counters of kernel {kernel} left out: other sampling windows, warp size or source than the run's first"
                    );
                    let notes = &mut self.collector.run_mut().notes;
                    if !notes.contains(&text) {
                        notes.push(text);
                    }
                }
            }
            Event::Flow { kernel, finding } => {
                let line = (finding.state == xfpx_common::flow::FlowState::Appear).then(|| {
                    format!(
                        "xfpx: {} ({}) appears in {} at {}: {} [+{:#x}]",
                        finding.kind.name(),
                        finding.format.name(),
                        xfpx_common::names::readable(&kernel),
                        finding.site.location.as_ref().map_or_else(|| "unknown location".into(), ToString::to_string),
                        finding.site.instr,
                        finding.site.offset
                    )
                });
                if self.collector.record_flow(&kernel, finding) {
                    if let Some(line) = line {
                        say!("{line}");
                    }
                }
            }
            Event::Note { text } => {
                say!("xfpx: note: {text}");
                let notes = &mut self.collector.run_mut().notes;
                if !notes.contains(&text) {
                    notes.push(text);
                }
            }
            Event::Injection { injection } => {
                let fired = match (injection.activations, injection.exact) {
                    (0, _) => "never fired (not activated)".to_string(),
                    (n, true) => format!("corrupted {n} thread instances"),
                    (_, false) => "fired (its count was lost with the GPU context)".to_string(),
                };
                say!("xfpx: fault `{}` {fired}", injection.fault);
                self.collector.set_injection(injection);
            }
            Event::Finished => {
                self.finished.insert(conn);
            }
        }
    }

    /// The final report, with notes on anything unusual about the run.
    fn finish(mut self, exit: ExitStatus, load: &ToolLoad, inject: Inject) -> Report {
        let mut extra = Vec::new();
        let unfinished = self.connections.saturating_sub(self.finished.len() as u64);
        if unfinished > 0 {
            extra.push(format!(
                "{unfinished} of {} instrumented process{} ended without finishing (crashed or killed); findings up to then are included",
                self.connections,
                if self.connections == 1 { "" } else { "es" }
            ));
        }
        if !self.collector.run_mut().attached {
            extra.push(never_attached(self.connections, exit == (ExitStatus::Code { code: 127 }), load, inject));
        }
        if self.malformed > 0 {
            extra.push(format!(
                "{} malformed event line{} ignored",
                self.malformed,
                if self.malformed == 1 { " was" } else { "s were" }
            ));
        }
        for sig in signals::received() {
            extra.push(format!("xfpx received {} while the program ran", signals::name(sig)));
        }
        let run = self.collector.run_mut();
        run.exit = exit;
        run.finished_unix = Some(xfpx_common::report::unix_now());
        run.notes.extend(extra);
        self.collector.report()
    }
}

/// Why the instrumentation may never have attached, and what to try.
fn never_attached(connections: u64, exit_127: bool, load: &ToolLoad, inject: Inject) -> String {
    let head = "the instrumentation library never attached";
    if connections > 0 {
        return format!(
            "{head}: {connections} connection{} sent no hello (an instrumentation library of another xfpx version?)",
            if connections == 1 { "" } else { "s" }
        );
    }
    if !matches!(load, ToolLoad::Library(_)) {
        return format!("{head} (test hook {TOOL_LIBRARY_ENV}=none: the program itself sent no hello)");
    }
    if exit_127 {
        // The dynamic loader's own status when a preloaded library cannot
        // be loaded (e.g. an unresolved symbol).
        return format!(
            "{head}: the program exited with status 127, so the library may have failed to load (see the loader's message above)"
        );
    }
    match inject {
        Inject::Preload => format!(
            "{head}: the program may not have used the GPU, or it (or its launcher) reset LD_PRELOAD: try --inject cuda-injection"
        ),
        Inject::DriverHook => format!(
            "{head}: the program may not have used the GPU, or its launcher dropped CUDA_INJECTION64_PATH from the environment: make sure it reaches the program, or try --inject preload"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::class::FpFormat;
    use xfpx_common::fp::ExceptionKind;
    use xfpx_common::report::SiteRef;
    use xfpx_common::site::SiteId;

    fn collector() -> Collector {
        Collector::new(RunInfo { attached: false, ..RunInfo::new("nvidia", "unknown", "detect") }, None)
    }

    #[test]
    fn injection() {
        let nvidia = crate::vendor::Vendor::Nvidia.live().expect("live");
        let lib = ToolLoad::Library(PathBuf::from("/opt/x/libxfpx_nvbit.so"));
        let env = |load: &ToolLoad, inject, existing: Option<&str>| {
            let existing = move |name: &str| existing.filter(|_| name == "LD_PRELOAD").map(OsString::from);
            injection_env(nvidia, load, inject, &existing, Path::new("/nonexistent"), None)
                .expect("no failure")
                .vars
                .into_iter()
                .map(|(k, v)| (k.into_string().expect("utf-8"), v.into_string().expect("utf-8")))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            env(&lib, Inject::Preload, Some("libfoo.so")),
            [("LD_PRELOAD".into(), "libfoo.so:/opt/x/libxfpx_nvbit.so".into())]
        );
        assert_eq!(
            env(&lib, Inject::DriverHook, Some("libfoo.so")),
            [("CUDA_INJECTION64_PATH".into(), "/opt/x/libxfpx_nvbit.so".into())]
        );
        assert!(env(&ToolLoad::Nothing, Inject::Preload, Some("libfoo.so")).is_empty());
    }

    #[test]
    fn forwarding_to_a_finished_program_is_quiet() {
        let mut c = Command::new("true").spawn().expect("start true");
        let pid = c.id();
        c.wait().expect("wait");
        // Signal 0 delivers nothing, so a reused process id is never hurt.
        assert_eq!(forward(pid, 0), None);
        assert_eq!(forward(std::process::id(), 0), None);
    }

    #[test]
    fn notes_about_a_library_that_never_reported() {
        let lib = ToolLoad::Library(PathBuf::from("libxfpx_nvbit.so"));
        let notes = |exit, inject| LoopState::new(collector()).finish(exit, &lib, inject).run.notes;
        let n = notes(ExitStatus::Code { code: 127 }, Inject::Preload);
        assert!(n.iter().any(|n| n.contains("may have failed to load")), "{n:?}");
        let n = notes(ExitStatus::Code { code: 0 }, Inject::Preload);
        assert!(n.iter().any(|n| n.contains("try --inject cuda-injection")), "{n:?}");
        // Already in use: another remedy is named.
        let n = notes(ExitStatus::Code { code: 0 }, Inject::DriverHook);
        assert!(n.iter().any(|n| n.contains("CUDA_INJECTION64_PATH")), "{n:?}");
        assert!(!n.iter().any(|n| n.contains("try --inject cuda-injection")), "{n:?}");
        let mut attached = LoopState::new(collector());
        attached.event(
            0,
            Event::Hello { tool: "t".into(), version: "v".into(), process: xfpx_common::launcher::this_process() },
        );
        let quiet = attached.finish(ExitStatus::Code { code: 0 }, &lib, Inject::Preload).run.notes;
        assert!(!quiet.iter().any(|n| n.contains("never attached")), "{quiet:?}");
    }

    #[test]
    fn fail_on_coverage_gates_partial_and_skipped_kernels() {
        use xfpx_common::report::SiteCoverage;
        let mut c = collector();
        c.run_mut().exit = ExitStatus::Code { code: 0 };
        c.run_mut().attached = true;
        c.launch("k", true);
        c.kernel_coverage("k", SiteCoverage { fp_sites: 4, checked: 4, refused: Vec::new() });
        let gate = |kinds| Some(args::FailOn { kinds, coverage: true, region: false });
        assert_eq!(exit_code_gated(&c.report(), gate(None)), 0);
        let mut partial = SiteCoverage { fp_sites: 4, checked: 3, refused: Vec::new() };
        partial.refuse("island out of reach", 1);
        c.kernel_status("k", KernelStatus::Partial, 3);
        c.kernel_coverage("k", partial);
        assert_eq!(exit_code_gated(&c.report(), gate(None)), EXIT_FINDINGS);
        assert_eq!(exit_code_gated(&c.report(), gate(Some(ExceptionKinds::ALL))), EXIT_FINDINGS);
        // Without `coverage` a partial kernel does not fail the run.
        let kinds_only = args::FailOn { kinds: Some(ExceptionKinds::ALL), coverage: false, region: false };
        assert_eq!(exit_code_gated(&c.report(), Some(kinds_only)), 0);
        let text = summary::summary(&c.report(), true);
        assert!(text.contains("coverage: 3 of 4 FP sites checked; 1 kernel partly or not instrumented"), "{text}");
        assert!(text.contains("k (partial): 3 of 4 checked; 1 refused: island out of reach"), "{text}");
        let mut skipped = collector();
        skipped.run_mut().attached = true;
        skipped.launch("other", true);
        skipped.kernel_status("k", KernelStatus::Skipped { reason: "too many registers".into() }, 0);
        assert_eq!(exit_code_gated(&skipped.report(), gate(None)), EXIT_FINDINGS);
    }

    #[test]
    fn exit_codes() {
        let mut c = collector();
        c.record(
            "k",
            ExceptionKind::Inf,
            FpFormat::F32,
            SiteRef { id: SiteId(0), offset: 0, instr: "FMUL".into(), location: None },
            0,
            1,
        );
        c.run_mut().exit = ExitStatus::Code { code: 7 };
        c.run_mut().attached = true;
        c.launch("k", true);
        let r = c.report();
        assert_eq!(exit_code(&r, None), 7);
        assert_eq!(exit_code(&r, Some(ExceptionKinds::NONE.with(ExceptionKind::Nan))), 7);
        assert_eq!(exit_code(&r, Some(ExceptionKinds::NONE.with(ExceptionKind::Inf))), EXIT_FINDINGS);
        c.run_mut().exit = ExitStatus::Signal { signal: 11 };
        assert_eq!(exit_code(&c.report(), None), 139);
        let mut unchecked = collector();
        unchecked.run_mut().exit = ExitStatus::Code { code: 0 };
        assert_eq!(exit_code(&unchecked.report(), None), 0);
        assert_eq!(exit_code(&unchecked.report(), Some(ExceptionKinds::ALL)), EXIT_NOTHING_CHECKED);
        unchecked.run_mut().attached = true;
        assert_eq!(exit_code(&unchecked.report(), Some(ExceptionKinds::ALL)), EXIT_NOTHING_CHECKED, "no launch");
        unchecked.launch("k", true);
        assert_eq!(exit_code(&unchecked.report(), Some(ExceptionKinds::ALL)), 0);
    }

    #[test]
    fn flag_checks() {
        use clap::Parser;
        let parse = |extra: &[&str]| {
            let mut v = vec!["xfpx", "run"];
            v.extend_from_slice(extra);
            v.extend_from_slice(&["--", "./app"]);
            let crate::args::Cli { command: crate::args::Command::Run(a) } =
                crate::args::Cli::try_parse_from(v).expect("grammar")
            else {
                panic!("not run")
            };
            plan(a)
        };
        assert!(parse(&[]).is_ok());
        assert!(parse(&["--sample", "0"]).is_err());
        assert!(parse(&["--instr-range", "9:3"]).is_err());
        assert!(parse(&["--exclude", "[z-a]"]).is_err());
        assert!(parse(&["--fail-on", "nope"]).is_err());
        assert!(parse(&["--report", "/nonexistent-dir/r.json"]).is_err());
        let ok = parse(&["--kernels", "^gemm", "--sample", "4", "--instr-range", "2:9", "--max-records", "3"])
            .expect("valid");
        assert_eq!(ok.config.kernels, vec!["^gemm"]);
        assert_eq!(ok.config.sample_every, 4);
        assert!(!ok.config.sample_doubling);
        let default = parse(&[]).expect("parses");
        assert!(default.config.sample_doubling, "fast mode samples launches unless told otherwise");
        let every = parse(&["--sample", "1"]).expect("parses");
        assert!(!every.config.sample_doubling);
        let detect = parse(&["--mode", "detect"]).expect("parses");
        assert_eq!((detect.config.mode, detect.config.sample_doubling), (Mode::Detect, false));
        assert!(parse(&["--sample", "often"]).is_err());
        // launch screening: on in fast mode, off in detect mode, either way on request
        assert!(default.config.screen_launches && default.config.screens_launches());
        assert!(every.config.screen_launches && !every.config.screens_launches(), "nothing left to screen");
        assert!(!detect.config.screen_launches);
        let off = parse(&["--screen-launches", "off"]).expect("parses");
        assert!(!off.config.screens_launches());
        let on = parse(&["--mode", "detect", "--sample", "8", "--screen-launches", "on"]).expect("parses");
        assert!(on.config.screens_launches());
        let maybe = ["xfpx", "run", "--screen-launches", "maybe", "--", "./app"];
        assert!(crate::args::Cli::try_parse_from(maybe).is_err());
        assert!(parse(&["--tool", "counters", "--screen-launches", "on"]).is_err());
        assert!(!parse(&["--tool", "counters"]).expect("parses").config.screen_launches);
        assert_eq!(ok.config.instr_range, Some((2, 9)));
        assert_eq!(ok.config.max_records, Some(3));
        assert!(ok.config.report_path.is_absolute());
        assert_eq!(parse(&["--report", "-"]).expect("valid").report, Some(Destination::Stdout));
        assert_eq!(parse(&["--no-report"]).expect("valid").report, None);
    }
}
