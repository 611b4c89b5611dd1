//! The run configuration the CLI hands to a backend: one JSON file, named
//! by the environment variable [`CONFIG_ENV`] in the program under test.
//!
//! [`RunSettings`] is what the file holds, unchecked; [`RunConfig`] is a
//! checked one (its kernel patterns compiled once), made only by
//! [`RunSettings::check`] or by loading a file. Every setting that changes
//! what a backend does is a field here; the environment variables that may
//! also set some of them are read in one place, [`RunSettings::from_environment`].

use crate::fp::ExceptionKinds;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the configuration file.
pub const CONFIG_ENV: &str = "XFPX_CONFIG";

/// What instrumented code does: the one list of modes. Each command and
/// backend accepts the modes it lowers and refuses the others in one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Check only results not certain to reach a later check.
    ///
    /// See [`crate::observe`]: NaN, infinity and division by zero are
    /// found in every kernel where they occur; subnormals only where they
    /// are checked; findings may be located downstream of their origin.
    #[default]
    Fast,
    /// Check every floating-point result.
    ///
    /// Precise: every finding is located at its instruction.
    Detect,
    /// Read each wave's sticky exception bits at its end (cheap, per kernel).
    ///
    /// AMD rewrites only: one record per kernel, no instruction located.
    Screen,
    /// Count the wave instructions each kernel executes.
    ///
    /// AMD rewrites only, a test of the rewriter: a counter before every
    /// instruction exercises the relocation of every kind of instruction.
    Count,
}

impl Mode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [Mode; 4] = [Mode::Fast, Mode::Detect, Mode::Screen, Mode::Count];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Fast => "fast",
            Mode::Detect => "detect",
            Mode::Screen => "screen",
            Mode::Count => "count",
        }
    }

    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// How a command renders what it shows: the one text/JSON choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

/// Where source lines of findings are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceLines {
    /// Not at all.
    Off,
    /// In the program's own device code.
    #[default]
    Program,
    /// Also in the shared libraries with device code the program maps
    /// (opt-in: a PyTorch run that searched them did not finish in 200 s).
    WithLibraries,
}

/// Where a cache (NVIDIA's disassembly, AMD's rewritten code objects) is
/// kept between runs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheFolder {
    /// The user's cache folder (`$XDG_CACHE_HOME/xfpx/NAME`, else
    /// `~/.cache/xfpx/NAME`).
    #[default]
    Default,
    /// No cache.
    Off,
    /// This folder.
    At(PathBuf),
}

impl CacheFolder {
    /// The folder of the cache `name` this setting names (`var` reads the
    /// variables `XDG_CACHE_HOME` and `HOME`); `None` when it is off or no
    /// folder can be named.
    pub fn resolve(&self, name: &str, var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        match self {
            CacheFolder::Off => None,
            CacheFolder::At(dir) => Some(dir.clone()),
            CacheFolder::Default => {
                match (var("XDG_CACHE_HOME").filter(|v| !v.is_empty()), var("HOME").filter(|v| !v.is_empty())) {
                    (Some(x), _) => Some(Path::new(&x).join("xfpx").join(name)),
                    (None, Some(h)) => Some(Path::new(&h).join(".cache/xfpx").join(name)),
                    (None, None) => None,
                }
            }
        }
    }

    /// The setting an environment variable's value asks for: a folder, or
    /// `0` for none (unset or empty: the default).
    fn from_variable(value: Option<OsString>) -> CacheFolder {
        match value.filter(|v| !v.is_empty()) {
            Some(v) if v == "0" => CacheFolder::Off,
            Some(v) => CacheFolder::At(PathBuf::from(v)),
            None => CacheFolder::Default,
        }
    }
}

/// Settings of the backend's host-side tools: where source lines come
/// from and how functions are disassembled. Each has an environment
/// variable (read by [`RunSettings::from_environment`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolSettings {
    /// Where line tables are read (`XFPX_NVIDIA_LINES`: `0` off, `libs`
    /// with the libraries).
    pub source_lines: SourceLines,
    /// Mapped files larger than this many MiB are not searched for line
    /// tables (`XFPX_NVIDIA_LINES_MAX_MB`, default 64).
    pub lines_max_file_mb: u64,
    /// Keep a copy of each device code image read for line tables in this
    /// folder (`XFPX_NVIDIA_KEEP_CUBIN`).
    pub keep_device_code: Option<PathBuf>,
    /// The disassembler that reads line tables (`XFPX_NVDISASM`, default
    /// `nvdisasm` on `PATH`).
    pub line_disassembler: PathBuf,
    /// The tool that extracts device code from files (`XFPX_CUOBJDUMP`,
    /// default `cuobjdump` on `PATH`).
    pub device_code_extractor: PathBuf,
    /// The disassembly cache (`XFPX_NVDISASM_CACHE`: a folder, or `0`).
    pub disassembly_cache: CacheFolder,
    /// Functions disassembled ahead of the instrumentation framework, the
    /// program's first (`XFPX_PREFILL`, default 512; 0: none).
    pub disassemble_ahead: usize,
    /// A kernel first launched before the disassembly NVBit needs for it is
    /// cached runs screened while it is disassembled in the background,
    /// and is instrumented from its first launch after
    /// (`XFPX_BACKGROUND_DISASSEMBLY`, default on where launches are
    /// screened; `0`: NVBit disassembles it at that launch).
    pub background_disassembly: bool,
    /// Where AMD code objects rewritten for a run are kept, by content
    /// (`XFPX_AMD_REWRITE_CACHE`: a folder, or `0`).
    pub rewrite_cache: CacheFolder,
}

/// Functions disassembled ahead unless `XFPX_PREFILL` says.
pub const DEFAULT_DISASSEMBLE_AHEAD: usize = 512;

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            source_lines: SourceLines::Program,
            lines_max_file_mb: 64,
            keep_device_code: None,
            line_disassembler: PathBuf::from("nvdisasm"),
            device_code_extractor: PathBuf::from("cuobjdump"),
            disassembly_cache: CacheFolder::Default,
            disassemble_ahead: DEFAULT_DISASSEMBLE_AHEAD,
            background_disassembly: true,
            rewrite_cache: CacheFolder::Default,
        }
    }
}

/// The environment variables [`RunSettings::from_environment`] reads.
pub const SETTINGS_ENV: [&str; 9] = [
    "XFPX_NVIDIA_LINES",
    "XFPX_NVIDIA_LINES_MAX_MB",
    "XFPX_NVIDIA_KEEP_CUBIN",
    "XFPX_NVDISASM",
    "XFPX_CUOBJDUMP",
    "XFPX_NVDISASM_CACHE",
    "XFPX_PREFILL",
    "XFPX_BACKGROUND_DISASSEMBLY",
    "XFPX_AMD_REWRITE_CACHE",
];

impl ToolSettings {
    /// The settings the environment variables ask for (`var` reads one),
    /// the defaults where a variable is unset or not understood.
    pub fn from_environment(var: impl Fn(&str) -> Option<OsString>) -> ToolSettings {
        let d = ToolSettings::default();
        let text = |name: &str| var(name).map(|v| v.to_string_lossy().into_owned());
        let lines = text("XFPX_NVIDIA_LINES");
        ToolSettings {
            source_lines: match lines.as_deref() {
                Some("0") => SourceLines::Off,
                Some("libs") => SourceLines::WithLibraries,
                _ => SourceLines::Program,
            },
            lines_max_file_mb: text("XFPX_NVIDIA_LINES_MAX_MB")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(d.lines_max_file_mb),
            keep_device_code: var("XFPX_NVIDIA_KEEP_CUBIN").map(PathBuf::from),
            line_disassembler: var("XFPX_NVDISASM").map_or(d.line_disassembler, PathBuf::from),
            device_code_extractor: var("XFPX_CUOBJDUMP").map_or(d.device_code_extractor, PathBuf::from),
            disassembly_cache: CacheFolder::from_variable(var("XFPX_NVDISASM_CACHE")),
            disassemble_ahead: match text("XFPX_PREFILL").as_deref().map(str::trim) {
                None | Some("") => DEFAULT_DISASSEMBLE_AHEAD,
                Some(v) => v.parse().unwrap_or(DEFAULT_DISASSEMBLE_AHEAD),
            },
            background_disassembly: text("XFPX_BACKGROUND_DISASSEMBLY").as_deref().map(str::trim) != Some("0"),
            rewrite_cache: CacheFolder::from_variable(var("XFPX_AMD_REWRITE_CACHE")),
        }
    }
}

/// Everything a backend needs to know about the run, as the configuration
/// file holds it. Unchecked: [`RunSettings::check`] makes a [`RunConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSettings {
    pub mode: Mode,
    /// Exception kinds to look for.
    pub kinds: ExceptionKinds,
    /// Instrument only kernels whose (demangled or mangled) name matches
    /// one of these regular expressions (all when empty).
    pub kernels: Vec<String>,
    /// Never instrument kernels whose name matches one of these.
    pub exclude: Vec<String>,
    /// Instrument every k-th launch of each kernel (1: every launch).
    pub sample_every: u32,
    /// Instead: instrument launches 0 to 3 of each kernel, then launches
    /// 7, 15, 31, ... (gaps that double), so that a kernel launched n
    /// times costs about log2(n) instrumented launches.
    #[serde(default)]
    pub sample_doubling: bool,
    /// Screen the launches sampling leaves uninstrumented (NVIDIA): after
    /// each, the device buffers its pointer arguments reach are scanned
    /// for NaN and infinite values, and a kernel whose buffers gain some is
    /// instrumented again. Off in configurations written before it existed.
    #[serde(default)]
    pub screen_launches: bool,
    /// Only instructions whose index in the kernel is in [start, end).
    pub instr_range: Option<(u32, u32)>,
    /// Stop recording new findings after this many.
    pub max_records: Option<u64>,
    /// Where the final report goes.
    pub report_path: PathBuf,
    /// A Unix socket on which the CLI listens for events (JSON lines).
    pub events_socket: Option<PathBuf>,
    /// Write per-kernel instrumentation dumps here.
    pub dump_dir: Option<PathBuf>,
    /// The backend's host-side tools (source lines, disassembly).
    #[serde(default)]
    pub tools: ToolSettings,
    /// What the instrumentation does (detect exceptions by default).
    #[serde(default)]
    pub tool: crate::tool::ToolKind,
    /// The counters tool: thread blocks (workgroups) per sampling window,
    /// by linear block index; 0 (the default) counts each launch as one
    /// window. A launch has at most [`crate::counters::MAX_WINDOWS`]
    /// windows: blocks past the last count into it.
    #[serde(default)]
    pub count_window_blocks: u32,
    /// The counters tool: where the counters come from: instrumented code
    /// (the default) or the GPU's performance monitors, read per launch
    /// with nothing instrumented (NVIDIA, through CUPTI; see
    /// [`crate::counters::CounterSource`]).
    #[serde(default)]
    pub counter_source: crate::counters::CounterSource,
    /// The one permanent fault of an inject run (`tool` is `inject`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::fault::FaultSpec>,
    /// Record launches of the selected kernels (`--capture DIR`): their
    /// parameters and the memory they point into, before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureSettings>,
}

/// What `xfpx run --capture` records (the format: [`crate::capture`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureSettings {
    /// The capture folder (absolute; created by the command line, empty).
    pub dir: PathBuf,
    /// Launches captured at most, over the run (`--capture-max-launches`).
    pub max_launches: u64,
    /// Bytes of memory images written at most, before and after images
    /// together (`--capture-max-bytes`); a launch that would pass it is
    /// not captured, and a note says so.
    pub max_bytes: u64,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            mode: Mode::Fast,
            kinds: ExceptionKinds::ALL,
            kernels: Vec::new(),
            exclude: Vec::new(),
            sample_every: 1,
            sample_doubling: false,
            screen_launches: false,
            instr_range: None,
            max_records: None,
            report_path: PathBuf::from("xfpx-report.json"),
            events_socket: None,
            dump_dir: None,
            tools: ToolSettings::default(),
            tool: crate::tool::ToolKind::Detect,
            count_window_blocks: 0,
            counter_source: crate::counters::CounterSource::Instrumented,
            fault: None,
            capture: None,
        }
    }
}

/// Failure to read or use a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration {path}: {source}")]
    Read { path: PathBuf, source: crate::limits::ReadError },
    #[error("configuration {path} is invalid: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    /// A kernel pattern that is not a regular expression; `list` is the
    /// flag it came from (`--kernels`, `--exclude`), `reason` one line.
    #[error("invalid {list} pattern `{pattern}`: {reason}")]
    Pattern { list: &'static str, pattern: String, reason: String },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl RunSettings {
    /// The defaults, with the settings the environment variables ask for
    /// (the one place they are read; `var` reads one).
    pub fn from_environment(var: impl Fn(&str) -> Option<OsString>) -> RunSettings {
        RunSettings { tools: ToolSettings::from_environment(var), ..RunSettings::default() }
    }

    /// Check the settings and compile their kernel patterns: the one
    /// validation of a run configuration.
    pub fn check(self) -> Result<RunConfig, ConfigError> {
        if self.sample_every == 0 {
            return Err(ConfigError::Invalid("sample_every must be at least 1".into()));
        }
        if let Some((a, b)) = self.instr_range {
            if a >= b {
                return Err(ConfigError::Invalid(format!("empty instruction range {a}:{b}")));
            }
        }
        match (&self.fault, self.tool) {
            (None, crate::tool::ToolKind::Inject) => {
                return Err(ConfigError::Invalid("the inject tool needs a fault".into()))
            }
            // the counters tool counts a run with the fault in it
            (Some(f), crate::tool::ToolKind::Inject | crate::tool::ToolKind::Counters) => {
                f.validate().map_err(|e| ConfigError::Invalid(format!("invalid fault: {e}")))?
            }
            (Some(_), _) => {
                return Err(ConfigError::Invalid("a fault is injected only by the inject and counters tools".into()))
            }
            (None, _) => {}
        }
        if self.counter_source == crate::counters::CounterSource::Hardware {
            self.check_hardware_counters()?;
        }
        if let Some(c) = &self.capture {
            if self.tool != crate::tool::ToolKind::Detect {
                return Err(ConfigError::Invalid(format!(
                    "a capture records launches of the detect tool only, not of the {} tool",
                    self.tool.name()
                )));
            }
            if c.max_launches == 0 || c.max_bytes == 0 {
                return Err(ConfigError::Invalid("a capture needs room for at least one launch and one byte".into()));
            }
            if !c.dir.is_absolute() {
                return Err(ConfigError::Invalid(format!("the capture folder {} is not absolute", c.dir.display())));
            }
        }
        let filter = KernelFilter::new(&self.kernels, &self.exclude)?;
        Ok(RunConfig { settings: self, filter })
    }
}

impl RunSettings {
    /// Hardware counters are read per launch, for every launch, with
    /// nothing instrumented: no windows, sampling, fault or dump.
    fn check_hardware_counters(&self) -> Result<(), ConfigError> {
        let refuse = |what: &str| Err(ConfigError::Invalid(format!("hardware counters {what}")));
        if self.tool != crate::tool::ToolKind::Counters {
            return refuse(&format!("are read by the counters tool, not the {} tool", self.tool.name()));
        }
        if self.count_window_blocks != 0 {
            return refuse("are read per launch: sampling windows need instrumented counters");
        }
        if self.sample_every != 1 || self.sample_doubling {
            return refuse("count every launch: sampling launches needs instrumented counters");
        }
        if self.fault.is_some() {
            return refuse("instrument nothing: a fault needs instrumented counters");
        }
        if self.dump_dir.is_some() {
            return refuse("instrument nothing: there is no instrumented code to dump");
        }
        Ok(())
    }
}

/// How the note of a sampled run ([`RunConfig::sampling_note`]) starts:
/// reports are read for it to say how their launches were chosen.
pub const SAMPLING_NOTE: &str = "launches sampled: ";

/// A checked run configuration: its settings (read through `Deref`) and
/// its compiled kernel filter.
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    settings: RunSettings,
    filter: KernelFilter,
}

impl PartialEq for RunConfig {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings
    }
}

impl std::ops::Deref for RunConfig {
    type Target = RunSettings;
    fn deref(&self) -> &RunSettings {
        &self.settings
    }
}

impl RunConfig {
    /// The settings, e.g. to write them for another process.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// The compiled kernel filter.
    pub fn filter(&self) -> &KernelFilter {
        &self.filter
    }

    /// The same configuration reporting to `events_socket` and writing its
    /// report (when it cannot reach the socket) to `report_path`: settings
    /// that need no check.
    pub fn reporting_to(mut self, events_socket: Option<PathBuf>, report_path: PathBuf) -> RunConfig {
        self.settings.events_socket = events_socket;
        self.settings.report_path = report_path;
        self
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.settings).unwrap_or_default()
    }

    pub fn from_json(text: &str, path: &Path) -> Result<RunConfig, ConfigError> {
        let s: RunSettings =
            serde_json::from_str(text).map_err(|source| ConfigError::Parse { path: path.to_path_buf(), source })?;
        s.check()
    }

    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = crate::limits::read_text(path, crate::limits::CONFIG)
            .map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
        RunConfig::from_json(&text, path)
    }

    /// The configuration of an instrumented process: the file named by
    /// [`CONFIG_ENV`] (which holds every setting), or, when that is unset,
    /// the defaults with the environment's settings
    /// ([`RunSettings::from_environment`]).
    pub fn from_env() -> Result<RunConfig, ConfigError> {
        match std::env::var_os(CONFIG_ENV) {
            Some(p) => RunConfig::load(Path::new(&p)),
            None => RunSettings::from_environment(|k| std::env::var_os(k)).check(),
        }
    }

    /// The report's `sample_every`: the stride, or 0 when the launches
    /// are chosen with doubling gaps (`sample_auto`), never a false 1.
    pub fn reported_sample_every(&self) -> u32 {
        if self.sample_doubling {
            0
        } else {
            self.sample_every
        }
    }

    /// Whether launches left out by sampling are screened: asked for, by
    /// the detector, with sampling that leaves launches out, and looking
    /// for NaN or infinity (what a screen finds).
    pub fn screens_launches(&self) -> bool {
        use crate::fp::ExceptionKind;
        self.screen_launches
            && self.tool == crate::tool::ToolKind::Detect
            && (self.sample_doubling || self.sample_every > 1)
            && (self.kinds.contains(ExceptionKind::Nan)
                || self.kinds.contains(ExceptionKind::Inf)
                || self.kinds.contains(ExceptionKind::Div0))
    }

    /// The note a run sampled with doubling gaps carries (none otherwise);
    /// `screened`: its other launches are screened, so the first launch of
    /// each kernel alone is instrumented. It starts with [`SAMPLING_NOTE`].
    pub fn sampling_note(&self, screened: bool) -> Option<String> {
        self.sample_doubling.then(|| {
            let how = if screened {
                "the first launch of each kernel was instrumented, and its later launches screened; a launch \
                 that could not be screened was instrumented when it was launch 1-4, 8, 16, 32, ... of its kernel"
            } else {
                "launches 1-4 of each kernel, then launches 8, 16, 32, ... were instrumented"
            };
            format!("{SAMPLING_NOTE}{how} (--sample 1 instruments every launch)")
        })
    }

    /// Whether launch number `index` (from 0) of a kernel is instrumented.
    pub fn samples_launch(&self, index: u64) -> bool {
        if self.sample_doubling {
            return index < 4 || (index + 1).is_power_of_two();
        }
        index.is_multiple_of(u64::from(self.sample_every.max(1)))
    }

    /// Whether launch number `index` (from 0) of a kernel whose launches
    /// are screened is instrumented: with `--sample auto`, its first only,
    /// every later one screened (a launch that cannot be screened falls
    /// back to [`RunConfig::samples_launch`]); a stride is kept as it is.
    pub fn samples_screened_launch(&self, index: u64) -> bool {
        if self.sample_doubling {
            return index == 0;
        }
        self.samples_launch(index)
    }
}

/// Include/exclude regular expressions over kernel names, compiled. A
/// kernel is known by its mangled name and, where it has one, its
/// demangled name: a pattern matching either selects it.
#[derive(Debug, Clone, Default)]
pub struct KernelFilter {
    include: Vec<Regex>,
    /// Names selected exactly (as by [`KernelFilter::exactly`]).
    names: Vec<String>,
    exclude: Vec<Regex>,
}

impl KernelFilter {
    /// Compile the patterns; a bad one is refused with a one-line reason.
    pub fn new(include: &[String], exclude: &[String]) -> Result<KernelFilter, ConfigError> {
        Ok(KernelFilter {
            include: compile("--kernels", include)?,
            names: Vec::new(),
            exclude: compile("--exclude", exclude)?,
        })
    }

    /// Only the kernel whose mangled or demangled name is `name` exactly.
    pub fn exactly(name: &str) -> KernelFilter {
        KernelFilter { include: Vec::new(), names: vec![name.to_string()], exclude: Vec::new() }
    }

    /// The patterns and names that select kernels, for messages (`a|b`).
    pub fn describe(&self) -> String {
        let mut all: Vec<&str> = self.include.iter().map(Regex::as_str).collect();
        all.extend(self.names.iter().map(String::as_str));
        all.join("|")
    }

    /// True when a kernel known by any of `names` (e.g. mangled and
    /// demangled) is to be instrumented. A mangled name is also tried in
    /// its demangled form.
    pub fn admits(&self, names: &[&str]) -> bool {
        let demangled: Vec<String> = names.iter().filter_map(|n| crate::names::demangle(n)).collect();
        let all: Vec<&str> = names.iter().copied().chain(demangled.iter().map(String::as_str)).collect();
        let inc = (self.include.is_empty() && self.names.is_empty())
            || all.iter().any(|n| self.include.iter().any(|r| r.is_match(n)) || self.names.iter().any(|x| x == n));
        let exc = all.iter().any(|n| self.exclude.iter().any(|r| r.is_match(n)));
        inc && !exc
    }
}

/// Compile each pattern of `list`, the first bad one an error in one line
/// (`regex`'s own messages span several).
fn compile(list: &'static str, patterns: &[String]) -> Result<Vec<Regex>, ConfigError> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|e| {
                let reason = match &e {
                    regex::Error::Syntax(text) => {
                        text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("syntax error").trim().to_string()
                    }
                    other => other.to_string(),
                };
                let reason = reason.strip_prefix("error: ").unwrap_or(&reason).to_string();
                ConfigError::Pattern { list, pattern: p.clone(), reason }
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_validation() {
        let c = RunSettings { kernels: vec!["^gemm".into()], sample_every: 3, ..RunSettings::default() };
        let back =
            RunConfig::from_json(&c.clone().check().expect("valid").to_json(), Path::new("c.json")).expect("valid");
        assert_eq!(back.settings(), &c);
        let bad = RunSettings { kernels: vec!["(".into()], ..RunSettings::default() };
        let e = bad.check().expect_err("bad pattern");
        assert!(matches!(e, ConfigError::Pattern { .. }));
        let e = e.to_string();
        assert!(
            !e.contains('\n') && e.starts_with("invalid --kernels pattern `(`: ") && e.contains("unclosed group"),
            "{e}"
        );
        let bad = RunSettings { sample_every: 0, ..RunSettings::default() };
        assert!(bad.check().is_err());
        assert!(RunConfig::from_json("{", Path::new("c.json")).is_err());
        // a file written before the tool settings existed still reads
        let old = r#"{"mode":"detect","kinds":15,"kernels":[],"exclude":[],"sample_every":1,"instr_range":null,"max_records":null,"report_path":"r.json","events_socket":null,"dump_dir":null}"#;
        let c = RunConfig::from_json(old, Path::new("c.json")).expect("old file");
        assert_eq!(c.tools, ToolSettings::default());
        // and one naming some tool settings only
        let some = old.replace("}", r#","tools":{"keep_device_code":"/k","source_lines":"with_libraries"}}"#);
        let c = RunConfig::from_json(&some, Path::new("c.json")).expect("partial tools");
        assert_eq!(c.tools.keep_device_code, Some(PathBuf::from("/k")));
        assert_eq!(c.tools.source_lines, SourceLines::WithLibraries);
        assert_eq!(c.tools.disassemble_ahead, DEFAULT_DISASSEMBLE_AHEAD);
    }

    #[test]
    fn capture_settings_are_checked() {
        let capture = |dir: &str, n, b| Some(CaptureSettings { dir: dir.into(), max_launches: n, max_bytes: b });
        let ok = RunSettings { capture: capture("/tmp/c", 4, 1 << 20), ..RunSettings::default() };
        let back = RunConfig::from_json(&ok.clone().check().expect("valid").to_json(), Path::new("c.json"));
        assert_eq!(back.expect("round trip").capture, ok.capture);
        for (bad, want) in [
            (RunSettings { capture: capture("/tmp/c", 0, 1), ..RunSettings::default() }, "at least one launch"),
            (RunSettings { capture: capture("/tmp/c", 1, 0), ..RunSettings::default() }, "at least one launch"),
            (RunSettings { capture: capture("rel", 1, 1), ..RunSettings::default() }, "not absolute"),
            (
                RunSettings {
                    capture: capture("/tmp/c", 1, 1),
                    tool: crate::tool::ToolKind::Counters,
                    ..RunSettings::default()
                },
                "detect tool only",
            ),
        ] {
            let e = bad.check().expect_err(want).to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn hardware_counters_are_checked() {
        use crate::counters::CounterSource;
        use crate::tool::ToolKind;
        let hw =
            RunSettings { tool: ToolKind::Counters, counter_source: CounterSource::Hardware, ..RunSettings::default() };
        let back = RunConfig::from_json(&hw.clone().check().expect("valid").to_json(), Path::new("c.json"));
        assert_eq!(back.expect("round trip").counter_source, CounterSource::Hardware);
        let fault = crate::fault::FaultFlags {
            model: Some("IOC".into()),
            unit: Some("fp".into()),
            sm: Some("3".into()),
            ..Default::default()
        }
        .spec()
        .expect("fault");
        for (bad, want) in [
            (RunSettings { tool: ToolKind::Detect, ..hw.clone() }, "not the detect tool"),
            (RunSettings { count_window_blocks: 8, ..hw.clone() }, "per launch"),
            (RunSettings { sample_every: 2, ..hw.clone() }, "every launch"),
            (RunSettings { sample_doubling: true, ..hw.clone() }, "every launch"),
            (RunSettings { dump_dir: Some("/d".into()), ..hw.clone() }, "no instrumented code to dump"),
        ] {
            let e = bad.check().expect_err(want).to_string();
            assert!(e.contains(want) && e.starts_with("invalid configuration: hardware counters "), "{e}");
        }
        let e = RunSettings { fault: Some(fault), ..hw.clone() }.check().expect_err("fault").to_string();
        assert!(e.contains("a fault needs instrumented counters"), "{e}");
        // a configuration written before the setting existed counts by instrumentation
        let old = r#"{"mode":"detect","kinds":15,"kernels":[],"exclude":[],"sample_every":1,"instr_range":null,"max_records":null,"report_path":"r.json","events_socket":null,"dump_dir":null,"tool":"counters"}"#;
        let c = RunConfig::from_json(old, Path::new("c.json")).expect("old file");
        assert_eq!(c.counter_source, CounterSource::Instrumented);
    }

    #[test]
    fn settings_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(*v))
        };
        assert_eq!(ToolSettings::from_environment(env(&[])), ToolSettings::default());
        let t = ToolSettings::from_environment(env(&[
            ("XFPX_NVIDIA_LINES", "libs"),
            ("XFPX_NVIDIA_LINES_MAX_MB", "8"),
            ("XFPX_NVIDIA_KEEP_CUBIN", "/k"),
            ("XFPX_NVDISASM", "/n"),
            ("XFPX_CUOBJDUMP", "/c"),
            ("XFPX_NVDISASM_CACHE", "0"),
            ("XFPX_PREFILL", " 7 "),
            ("XFPX_BACKGROUND_DISASSEMBLY", "0"),
        ]));
        assert_eq!(
            t,
            ToolSettings {
                source_lines: SourceLines::WithLibraries,
                lines_max_file_mb: 8,
                keep_device_code: Some("/k".into()),
                line_disassembler: "/n".into(),
                device_code_extractor: "/c".into(),
                disassembly_cache: CacheFolder::Off,
                disassemble_ahead: 7,
                background_disassembly: false,
                rewrite_cache: CacheFolder::Default,
            }
        );
        let t = ToolSettings::from_environment(env(&[
            ("XFPX_NVIDIA_LINES", "0"),
            ("XFPX_NVIDIA_LINES_MAX_MB", "many"),
            ("XFPX_NVDISASM_CACHE", "/c"),
            ("XFPX_PREFILL", "x"),
        ]));
        assert_eq!(t.source_lines, SourceLines::Off);
        assert_eq!(t.lines_max_file_mb, 64);
        assert_eq!(t.disassembly_cache, CacheFolder::At("/c".into()));
        assert_eq!(t.disassemble_ahead, DEFAULT_DISASSEMBLE_AHEAD);
        assert!(t.background_disassembly);
        let t = ToolSettings::from_environment(env(&[("XFPX_AMD_REWRITE_CACHE", "/r")]));
        assert_eq!(t.rewrite_cache, CacheFolder::At("/r".into()));
        let none = |_: &str| None;
        assert_eq!(t.rewrite_cache.resolve("amd", none), Some(PathBuf::from("/r")));
        let home = |k: &str| (k == "HOME").then(|| "/h".to_string());
        assert_eq!(CacheFolder::Default.resolve("amd", home), Some(PathBuf::from("/h/.cache/xfpx/amd")));
        assert_eq!(CacheFolder::Default.resolve("amd", none), None);
        assert_eq!(CacheFolder::Off.resolve("amd", home), None);
        assert_eq!(
            ToolSettings::from_environment(env(&[("XFPX_NVIDIA_LINES", "1")])).source_lines,
            SourceLines::Program
        );
    }

    #[test]
    fn filter_and_sampling() {
        let f = KernelFilter::new(&["gemm".into()], &["_small".into()]).expect("patterns");
        assert!(f.admits(&["_Z4gemmPf", "gemm(float*)"]));
        assert!(!f.admits(&["gemm_small"]));
        assert!(!f.admits(&["reduce"]));
        // a mangled name alone is matched in both forms
        let f = KernelFilter::new(&["^void lines_scale<float>".into()], &[]).expect("patterns");
        assert!(f.admits(&["_Z11lines_scaleIfEvPT_PKS0_S0_"]));
        assert!(!f.admits(&["_Z11lines_scaleIdEvPT_PKS0_S0_"]));
        let f = KernelFilter::new(&[], &["^app::".into()]).expect("patterns");
        assert!(!f.admits(&["_ZN3app10normalizedEPfPKfi"]));
        assert!(f.admits(&["_ZN3lib10normalizedEPfPKfi"]));
        let f = KernelFilter::exactly("k.x");
        assert!(f.admits(&["k.x"]) && !f.admits(&["kax"]) && !f.admits(&["k.x2"]));
        assert!(KernelFilter::default().admits(&["anything"]));
        let c = |s: RunSettings| s.check().expect("valid");
        assert_eq!(c(RunSettings { sample_every: 4, ..RunSettings::default() }).reported_sample_every(), 4);
        assert_eq!(c(RunSettings { sample_doubling: true, ..RunSettings::default() }).reported_sample_every(), 0);
        let every4 = c(RunSettings { sample_every: 4, ..RunSettings::default() });
        let sampled: Vec<u64> = (0..9).filter(|i| every4.samples_launch(*i)).collect();
        assert_eq!(sampled, vec![0, 4, 8]);
        let screened = |s: RunSettings| c(RunSettings { screen_launches: true, ..s }).screens_launches();
        assert!(screened(RunSettings { sample_doubling: true, ..RunSettings::default() }));
        assert!(screened(RunSettings { sample_every: 4, ..RunSettings::default() }));
        assert!(!screened(RunSettings::default()), "every launch instrumented: nothing to screen");
        assert!(!c(RunSettings { sample_doubling: true, ..RunSettings::default() }).screens_launches());
        let subnormals = crate::fp::ExceptionKinds::NONE.with(crate::fp::ExceptionKind::Sub);
        assert!(!screened(RunSettings { sample_doubling: true, kinds: subnormals, ..RunSettings::default() }));
        let doubling = c(RunSettings { sample_doubling: true, ..RunSettings::default() });
        let sampled: Vec<u64> = (0..100).filter(|i| doubling.samples_launch(*i)).collect();
        assert_eq!(sampled, vec![0, 1, 2, 3, 7, 15, 31, 63]);
        let screened: Vec<u64> = (0..100).filter(|i| doubling.samples_screened_launch(*i)).collect();
        assert_eq!(screened, vec![0], "screened launches: the first alone is instrumented");
        let screened: Vec<u64> = (0..9).filter(|i| every4.samples_screened_launch(*i)).collect();
        assert_eq!(screened, vec![0, 4, 8], "a stride is kept");
    }
}
