//! The command-line grammar of `xfpx` (clap derive) and the checks that turn
//! raw flag values into validated settings.

use anyhow::{anyhow, bail, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
pub use xfpx_common::backend::Inject;
pub use xfpx_common::config::{Mode, OutputFormat};
use xfpx_common::fp::ExceptionKinds;
use xfpx_common::region::DEFAULT_MARGIN;

/// The modes `xfpx dump --vendor nvidia` offers.
pub const RUN_MODES: &[Mode] = &[Mode::Fast, Mode::Detect];
/// The modes `xfpx run` offers (`screen`: AMD only).
pub const LIVE_MODES: &[Mode] = &[Mode::Fast, Mode::Detect, Mode::Screen];
/// The modes an AMD rewrite offers (`dump --rewrite`, `replay --mode`).
pub const REWRITE_MODES: &[Mode] = &[Mode::Detect, Mode::Screen];

/// A flag taking one of `modes` (the common mode enum, a subset per flag).
fn modes(modes: &'static [Mode]) -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(modes.iter().filter_map(ValueEnum::to_possible_value))
        .map(|name| Mode::from_name(&name).unwrap_or_default())
}

/// Find floating-point exceptions (NaN, Inf, subnormals, division by zero)
/// in unmodified GPU programs.
#[derive(Debug, Parser)]
#[command(name = "xfpx", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a program with floating-point exception detection.
    Run(RunArgs),
    /// Show how a kernel listing or code object would be instrumented.
    Dump(DumpArgs),
    /// Print a saved report as a summary, or merge the reports of several processes (--merge).
    Report(ReportArgs),
    /// Run a captured AMD kernel launch on the emulator (no GPU needed).
    Replay(ReplayArgs),
    /// A bundled demo on the emulator: a NaN, an overflow and a division by zero (no GPU needed).
    Demo(DemoArgs),
    /// Build and install the NVIDIA tool library for this machine's GPUs (needs nvcc and NVBit).
    Setup(SetupArgs),
    /// Fault-injection campaigns: a golden run, then runs with one permanent fault each, classified Masked, SDC, DUE or not activated.
    Campaign(crate::campaign::CampaignArgs),
    /// Operational regions of kernels' counters: `region build REPORTS... -o region.json`.
    #[command(subcommand)]
    Region(RegionCommand),
    /// Compare two reports per kernel and source line (and the output buffers of the same launch), with the likely cause of each difference; status 0 when nothing differs, 3 when something does.
    Compare(crate::compare::CompareArgs),
}

#[derive(Debug, Subcommand)]
pub enum RegionCommand {
    /// Learn each kernel's operational region (min and max of each normalised counter per sampling window) from the reports of fault-free runs with counters.
    Build(RegionArgs),
}

#[derive(Debug, Args)]
pub struct RegionArgs {
    /// Reports of fault-free runs made with counters.
    #[arg(value_name = "REPORT", required = true, num_args = 1..)]
    pub reports: Vec<PathBuf>,
    /// Where the region is written (JSON, schema xfpx-region/1).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Normalised counters to learn: inact, stack, lane_efficiency, pred_on, divergence (default: inact,stack).
    #[arg(long, value_name = "LIST")]
    pub counters: Option<String>,
    /// Widen each learnt range by this fraction of its width on each side (default 1; 0: the runs' min and max, as in the paper).
    #[arg(long, value_name = "FRACTION", default_value_t = DEFAULT_MARGIN)]
    pub margin: f64,
}

/// Which GPU vendor's backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VendorChoice {
    /// NVIDIA when an NVIDIA driver is present, AMD when /dev/kfd is.
    Auto,
    Nvidia,
    Amd,
}

/// How the instrumentation library is loaded into the program (`--inject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InjectChoice {
    /// `cuda-injection` when the program is a parallel launcher (mpirun, mpiexec, srun, ...), else `preload`.
    Auto,
    /// Through LD_PRELOAD (appended to an existing value).
    Preload,
    /// Through CUDA_INJECTION64_PATH (for launchers that reset LD_PRELOAD).
    CudaInjection,
}

/// Parallel launchers, by executable name: around them the library goes
/// only into the processes that use CUDA (`CUDA_INJECTION64_PATH`); through
/// `LD_PRELOAD` it also entered the launcher itself, and on a GPU machine
/// with Open MPI 4.1 the ranks then never attached.
const LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "orterun", "prterun", "srun", "aprun", "jsrun", "hydra_pmi_proxy"];

impl InjectChoice {
    /// The way used for `command`: `Auto` decided by its executable's name.
    pub fn for_command(self, command: &[OsString]) -> Inject {
        let launcher = command
            .first()
            .and_then(|c| Path::new(c).file_name())
            .and_then(|n| n.to_str())
            .is_some_and(|n| LAUNCHERS.contains(&n));
        match self {
            InjectChoice::Auto if launcher => Inject::DriverHook,
            InjectChoice::Auto | InjectChoice::Preload => Inject::Preload,
            InjectChoice::CudaInjection => Inject::DriverHook,
        }
    }
}

/// A setting that is on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// GPU vendor.
    #[arg(long, value_enum, default_value = "auto")]
    pub vendor: VendorChoice,
    /// `fast`: check only results that do not reach a later check (finds NaN, infinity and division by zero per kernel at a fraction of the cost; subnormals only where checked); `detect`: check every floating-point result, located at its instruction; `screen` (AMD): each wave's sticky exception bits, per kernel. AMD runs check in detect mode when asked for fast.
    #[arg(long, value_parser = modes(LIVE_MODES), default_value = "fast")]
    pub mode: Mode,
    /// AMD: run the program on xfpx's emulated HSA runtime (no GPU needed).
    #[arg(long)]
    pub emulate: bool,
    /// With --emulate: the GPU the emulated runtime is (gfx908, gfx90a, gfx942, gfx950; default gfx942).
    #[arg(long, value_name = "TARGET", requires = "emulate")]
    pub target: Option<String>,
    /// Instrument only kernels whose name matches this regular expression (repeatable).
    #[arg(long = "kernels", value_name = "RE")]
    pub kernels: Vec<String>,
    /// Never instrument kernels whose name matches this regular expression (repeatable).
    #[arg(long = "exclude", value_name = "RE")]
    pub exclude: Vec<String>,
    /// Instrument every K-th launch of each kernel, or `auto` (the default in fast mode; detect mode instruments every launch): on NVIDIA, where launches are screened, the first launch of each kernel (and the first after a screened finding), any other launch screened; otherwise launches 1-4 of each kernel, then launches 8, 16, 32, ...
    #[arg(long, value_name = "K|auto")]
    pub sample: Option<String>,
    /// NVIDIA: after each launch sampling leaves uninstrumented, scan the device buffers its pointer arguments reach for NaN and infinity, and instrument that kernel again when they gain some (`on`: the default in fast mode; `off`: the default in detect mode).
    #[arg(long = "screen-launches", value_enum, value_name = "on|off")]
    pub screen_launches: Option<Switch>,
    /// Instrument only instructions whose index in the kernel is in [A, B).
    #[arg(long = "instr-range", value_name = "A:B")]
    pub instr_range: Option<String>,
    /// Stop recording new findings after N.
    #[arg(long = "max-records", value_name = "N")]
    pub max_records: Option<u64>,
    /// Where to write the report (`.msgpack` for MessagePack, JSON otherwise; `-`: JSON on stdout).
    #[arg(long, value_name = "FILE", default_value = "xfpx-report.json")]
    pub report: PathBuf,
    /// Also write the findings as one self-contained HTML page here.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Write no report.
    #[arg(long = "no-report", conflicts_with = "report")]
    pub no_report: bool,
    /// `text`: live findings and a summary on stderr; `json`: the report as JSON on stdout (the program's stdout goes to stderr).
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Exit with status 3 when a finding of these kinds (nan,inf,sub,div0,all) is recorded (`coverage`: a kernel partly or not instrumented; `region`: a window outside --region), 4 when nothing was checked.
    #[arg(long = "fail-on", value_name = "KINDS")]
    pub fail_on: Option<String>,
    /// With --tool counters: thread blocks per sampling window, by linear block index (0: each launch is one window; at most 1024 windows a launch, the last taking the remaining blocks).
    #[arg(long = "window-blocks", value_name = "N", default_value_t = 0)]
    pub window_blocks: u32,
    /// With --tool counters: where the counters come from: `instrumented` (default: every counter, per window) or `hardware` (NVIDIA: the GPU's performance monitors read per launch through CUPTI, nothing instrumented: warp, thread and predicated-on thread instructions; no divergence or mix).
    #[arg(long = "counters", value_name = "SOURCE", value_parser = parse_counter_source)]
    pub counters: Option<xfpx_common::counters::CounterSource>,
    /// With --tool counters: check the run's counters against this operational region (from `xfpx region build`) at the end; every window outside it is printed.
    #[arg(long, value_name = "REGION")]
    pub region: Option<PathBuf>,
    /// Write per-kernel instrumentation dumps into this directory.
    #[arg(long, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// How to load the instrumentation library into the program.
    #[arg(long, value_enum, default_value = "auto")]
    pub inject: InjectChoice,
    /// What the run does: `detect` floating-point exceptions, `counters` (NVIDIA: instructions, mix, active lanes and divergence per kernel and launch), `inject` one permanent fault, or `flow` (where exceptional values appear, propagate, disappear or reach a comparison, per source line; see docs/cli.md).
    #[arg(long, value_name = "TOOL", default_value = "detect", value_parser = parse_tool)]
    pub tool: xfpx_common::tool::ToolKind,
    #[command(flatten)]
    pub fault: crate::fault_args::FaultArgs,
    /// Record the launches of the selected kernels (--kernels) into this new or empty folder: parameters, and the device memory they point into before and after each launch, for `xfpx replay --code-object AMD_BUILD DIR`.
    #[arg(long, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// With --capture: launches captured at most (default 64).
    #[arg(long = "capture-max-launches", value_name = "N", requires = "capture")]
    pub capture_max_launches: Option<u64>,
    /// With --capture: bytes of memory images written at most, before and after together (suffixes K, M, G: binary units; default 1G); a launch over it is not captured, and the summary says so.
    #[arg(long = "capture-max-bytes", value_name = "B", requires = "capture")]
    pub capture_max_bytes: Option<String>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Which backend reads FILE: `nvidia` (a SASS listing) or `amd` (a code object).
    #[arg(long, value_enum)]
    pub vendor: DumpVendor,
    /// The SASS listing (`cuobjdump -sass` or `nvdisasm` output) or AMD code object.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Show only the kernels whose mangled or demangled name matches this regular expression (an exact name is one).
    #[arg(long, value_name = "RE")]
    pub kernel: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// NVIDIA: show the plan of this run mode.
    #[arg(long, value_parser = modes(RUN_MODES), default_value = "fast")]
    pub mode: Mode,
    /// NVIDIA: show the plan of this tool (`detect`; `counters`: one count per region of each kernel; `inject`: the calls one fault makes, with the fault flags).
    #[arg(long, value_name = "TOOL", default_value = "detect", value_parser = parse_tool)]
    pub tool: xfpx_common::tool::ToolKind,
    #[command(flatten)]
    pub fault: crate::fault_args::FaultArgs,
    /// AMD only: rewrite the code object for this mode and show the rewritten kernels (with --kernel RE: only the kernels whose mangled or demangled name matches the regular expression).
    #[arg(long, value_parser = modes(REWRITE_MODES), value_name = "MODE")]
    pub rewrite: Option<Mode>,
    /// With --rewrite: write the rewritten code object here.
    #[arg(long, value_name = "NEW", requires = "rewrite")]
    pub out: Option<PathBuf>,
}

/// Vendors whose inputs `xfpx dump` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpVendor {
    Nvidia,
    Amd,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report written by `xfpx run` (JSON or MessagePack); with --merge, several.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Combine the reports of the processes of a parallel job (e.g. one per MPI rank) into one: findings per kernel and instruction, with the ranks that saw each.
    #[arg(long)]
    pub merge: bool,
    /// With --merge: write the merged report to this file (`.msgpack` for MessagePack, JSON otherwise).
    #[arg(short = 'o', long = "output", value_name = "FILE", requires = "merge")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Write the report as one self-contained HTML page here instead of printing it.
    #[arg(long, value_name = "OUT.html", conflicts_with = "format")]
    pub html: Option<PathBuf>,
    /// Exit with status 3 when the report has a finding of these kinds (nan,inf,sub,div0,all; `coverage`: a kernel partly or not instrumented; `region`: a window outside --region), 4 when its run checked nothing.
    #[arg(long = "fail-on", value_name = "KINDS")]
    pub fail_on: Option<String>,
    /// Check the report's counters against this operational region (from `xfpx region build`): every window outside it is printed.
    #[arg(long, value_name = "REGION")]
    pub region: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Also write the report here (`.msgpack` for MessagePack, JSON otherwise; `-`: JSON on stdout).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Also write the findings as one self-contained HTML page here.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The launch description (JSON: code object, kernel, grid, buffers, arguments).
    #[arg(value_name = "LAUNCH")]
    pub launch: PathBuf,
    /// The AMD target (e.g. gfx942): fills `{target}` in the launch's code-object path.
    #[arg(long, value_name = "GFX")]
    pub target: Option<String>,
    /// Run this code object instead of the one the launch names.
    #[arg(long = "code-object", value_name = "FILE")]
    pub code_object: Option<PathBuf>,
    /// Rewrite the kernel for this mode and report what its instrumentation
    /// recorded (without: what the emulator observes in the original kernel).
    #[arg(long, value_parser = modes(REWRITE_MODES), value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Write each output buffer to DIR/<name>.bin.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where to write the report (`.msgpack` for MessagePack, JSON otherwise; `-`: JSON on stdout).
    #[arg(long, value_name = "FILE", default_value = "xfpx-report.json")]
    pub report: PathBuf,
    /// Also write the findings as one self-contained HTML page here.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Write no report.
    #[arg(long = "no-report", conflicts_with = "report")]
    pub no_report: bool,
    /// Stop after this many wave instructions (default: the emulator's limit).
    #[arg(long = "max-instructions", value_name = "N")]
    pub max_instructions: Option<u64>,
    /// Refuse launches of more waves than this (default 262144).
    #[arg(long = "max-waves", value_name = "N", env = "XFPX_MAX_WAVES")]
    pub max_waves: Option<u64>,
    /// Loads within BYTES before or past a buffer read zeros instead of faulting (real programs read a little past their buffers; off by default; at most 1048576).
    #[arg(long = "guard-bytes", value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=1048576))]
    pub guard_bytes: Option<u64>,
    /// Exit with status 3 when a finding of these kinds (nan,inf,sub,div0,all) is recorded (`coverage`: the kernel partly or not instrumented; `region`: a window outside --region).
    #[arg(long = "fail-on", value_name = "KINDS")]
    pub fail_on: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// What the replay does: `detect` (the default), `counters` (the kernel rewritten to count what it executes), `inject` one permanent fault, or `flow` (the kernel rewritten to follow exceptional values through its instructions).
    #[arg(long, value_name = "TOOL", default_value = "detect", value_parser = parse_tool)]
    pub tool: xfpx_common::tool::ToolKind,
    /// With --tool counters: check the counters against this operational region (from `xfpx region build`).
    #[arg(long, value_name = "REGION")]
    pub region: Option<PathBuf>,
    #[command(flatten)]
    pub fault: crate::fault_args::FaultArgs,
}

/// What `xfpx setup` prepares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SetupVendor {
    /// The NVBit tool library `xfpx run` loads into programs.
    Nvidia,
    /// The HSA tool library and the emulated HSA runtime `xfpx run --vendor amd` loads.
    Amd,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    #[arg(value_enum, value_name = "VENDOR")]
    pub vendor: SetupVendor,
    /// NVBit's release tarball or unpacked folder (without: the release is downloaded with curl or wget).
    #[arg(long, value_name = "TARBALL|DIR")]
    pub nvbit: Option<PathBuf>,
    /// GPU targets to build for, e.g. sm_90,sm_80 (default: this machine's GPUs, from nvidia-smi).
    #[arg(long, value_name = "LIST")]
    pub arch: Option<String>,
    /// Install into this folder (default: beside the xfpx executable, where `xfpx run` looks).
    #[arg(long, value_name = "DIR")]
    pub dest: Option<PathBuf>,
    /// Link this libxfpx_nvbit.a (`cargo build --release -p xfpx-nvbit`) instead of the tool core carried by this xfpx.
    #[arg(long = "core-lib", value_name = "FILE", env = "XFPX_STATICLIB")]
    pub core_lib: Option<PathBuf>,
    /// Print each nvcc command and its output.
    #[arg(long, short)]
    pub verbose: bool,
}

/// What `--fail-on` names: exception kinds (None when it names only
/// gates) and the gates `coverage` (a kernel partly or not instrumented)
/// and `region` (a counter window outside the region; `xfpx report` only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailOn {
    pub kinds: Option<ExceptionKinds>,
    pub coverage: bool,
    pub region: bool,
}

/// Split `--fail-on` into its exception kinds and gates.
pub fn parse_fail_on_gates(s: &str) -> Result<FailOn> {
    let named = |gate: &str| s.split(',').any(|k| k.trim() == gate);
    let (coverage, region) = (named("coverage"), named("region"));
    let rest: Vec<&str> = s.split(',').map(str::trim).filter(|k| !matches!(*k, "coverage" | "region")).collect();
    let kinds = if (coverage || region) && rest.iter().all(|k| k.is_empty()) {
        None
    } else {
        Some(parse_fail_on(&rest.join(","))?)
    };
    Ok(FailOn { kinds, coverage, region })
}

/// Parse a tool name (`detect`, `counters`, `inject`, `flow`).
pub fn parse_tool(s: &str) -> Result<xfpx_common::tool::ToolKind, String> {
    xfpx_common::tool::ToolKind::from_name(s)
        .ok_or_else(|| format!("unknown tool `{s}` (detect, counters, inject, flow)"))
}

/// Parse a counter source (`instrumented`, `hardware`).
pub fn parse_counter_source(s: &str) -> Result<xfpx_common::counters::CounterSource, String> {
    xfpx_common::counters::CounterSource::parse(s)
        .ok_or_else(|| format!("unknown counter source `{s}` (instrumented, hardware)"))
}

/// Parse `A:B` into a half-open instruction index range with `A < B`.
pub fn parse_instr_range(s: &str) -> Result<(u32, u32)> {
    let bad = || anyhow!("invalid --instr-range `{s}`: expected A:B with whole numbers A < B");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    if a >= b {
        bail!("invalid --instr-range `{s}`: the range is empty (A must be less than B)");
    }
    Ok((a, b))
}

/// Parse a byte count with an optional binary suffix: `4096`, `512K`,
/// `64M`, `1G` (also `KiB`, `MiB`, `GiB`); at least 1.
pub fn parse_bytes(flag: &str, s: &str) -> Result<u64> {
    let bad = || anyhow!("invalid {flag} `{s}`: expected a number of bytes, optionally with K, M or G (binary units)");
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n.parse().map_err(|_| bad())?;
    let shift = match unit.trim() {
        "" => 0,
        "K" | "k" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        _ => return Err(bad()),
    };
    let bytes = n.checked_shl(shift).filter(|b| b >> shift == n).ok_or_else(bad)?;
    if bytes == 0 {
        bail!("invalid {flag} `{s}`: at least one byte");
    }
    Ok(bytes)
}

/// Parse the `--fail-on` list; an empty list is an error.
pub fn parse_fail_on(s: &str) -> Result<ExceptionKinds> {
    let kinds = ExceptionKinds::parse_list(s).map_err(|e| anyhow!("invalid --fail-on: {e}"))?;
    if kinds.is_empty() {
        bail!("invalid --fail-on `{s}`: name at least one of nan, inf, sub, div0 or all");
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("--b", "4096").expect("valid"), 4096);
        assert_eq!(parse_bytes("--b", "512K").expect("valid"), 512 << 10);
        assert_eq!(parse_bytes("--b", "64MiB").expect("valid"), 64 << 20);
        assert_eq!(parse_bytes("--b", "1G").expect("valid"), 1 << 30);
        for bad in ["", "G", "1T", "-1", "0", "99999999999999999999G", "1.5M"] {
            let e = parse_bytes("--b", bad).expect_err("invalid").to_string();
            assert!(e.starts_with("invalid --b") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn instr_range() {
        assert_eq!(parse_instr_range("0:10").expect("valid"), (0, 10));
        assert_eq!(parse_instr_range(" 5 : 6 ").expect("valid"), (5, 6));
        for bad in ["", "5", "5:", ":5", "a:b", "6:5", "5:5", "-1:3", "1:2:3", "0:99999999999"] {
            assert!(parse_instr_range(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn fail_on() {
        let k = parse_fail_on("nan,div0").expect("valid");
        assert!(k.contains(xfpx_common::ExceptionKind::Nan));
        assert!(!k.contains(xfpx_common::ExceptionKind::Inf));
        assert_eq!(parse_fail_on("all").expect("valid"), ExceptionKinds::ALL);
        assert!(parse_fail_on("").is_err());
        assert!(parse_fail_on("nan,bogus").is_err());
        let f = parse_fail_on_gates("coverage").expect("valid");
        assert_eq!((f.kinds, f.coverage), (None, true));
        let f = parse_fail_on_gates("nan, coverage").expect("valid");
        assert_eq!((f.kinds, f.coverage), (Some(ExceptionKinds::NONE.with(xfpx_common::ExceptionKind::Nan)), true));
        assert!(parse_fail_on_gates("region").expect("valid").region);
        let f = parse_fail_on_gates("region,all").expect("valid");
        assert_eq!((f.kinds, f.coverage, f.region), (Some(ExceptionKinds::ALL), false, true));
        assert!(parse_fail_on_gates("coverage,bogus").is_err());
    }

    #[test]
    fn grammar() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["xfpx", "run", "--kernels", "a", "--kernels", "b", "--", "./app", "-x"])
            .expect("parses");
        let Command::Run(r) = cli.command else { panic!("not run") };
        assert_eq!(r.kernels, vec!["a", "b"]);
        assert_eq!(r.command, vec![OsString::from("./app"), OsString::from("-x")]);
        assert!(Cli::try_parse_from(["xfpx", "run", "--bogus", "--", "./app"]).is_err());
        assert!(Cli::try_parse_from(["xfpx", "run"]).is_err());
        let cli =
            Cli::try_parse_from(["xfpx", "report", "--merge", "a.json", "b.json", "-o", "m.json"]).expect("parses");
        let Command::Report(r) = cli.command else { panic!("not report") };
        assert!(r.merge);
        assert_eq!(r.files, [PathBuf::from("a.json"), PathBuf::from("b.json")]);
        assert_eq!(r.output, Some(PathBuf::from("m.json")));
        assert!(Cli::try_parse_from(["xfpx", "report", "a.json", "-o", "m.json"]).is_err(), "-o needs --merge");
        assert!(Cli::try_parse_from(["xfpx", "report", "--merge"]).is_err());
        // one mode enum, a subset per flag
        let mode = |args: &[&str]| Cli::try_parse_from(args.iter().copied()).map(|c| c.command);
        assert!(
            matches!(mode(&["xfpx", "run", "--mode", "detect", "--", "a"]), Ok(Command::Run(r)) if r.mode == Mode::Detect)
        );
        // screen is offered to runs (AMD's; an NVIDIA run refuses it), not count
        assert!(
            matches!(mode(&["xfpx", "run", "--mode", "screen", "--", "a"]), Ok(Command::Run(r)) if r.mode == Mode::Screen)
        );
        assert!(mode(&["xfpx", "run", "--mode", "count", "--", "a"]).is_err());
        // --target belongs to --emulate
        assert!(mode(&["xfpx", "run", "--target", "gfx90a", "--", "a"]).is_err());
        assert!(
            matches!(mode(&["xfpx", "run", "--emulate", "--target", "gfx90a", "--", "a"]), Ok(Command::Run(r)) if r.emulate && r.target.as_deref() == Some("gfx90a"))
        );
        assert!(
            matches!(mode(&["xfpx", "replay", "--mode", "screen", "l.json"]), Ok(Command::Replay(r)) if r.mode == Some(Mode::Screen))
        );
        assert!(mode(&["xfpx", "replay", "--mode", "fast", "l.json"]).is_err());
        assert!(mode(&["xfpx", "dump", "--vendor", "amd", "--rewrite", "count", "f"]).is_err());
    }

    #[test]
    fn parallel_launchers_get_the_library_through_cuda_injection() {
        let cmd = |c: &[&str]| c.iter().map(OsString::from).collect::<Vec<_>>();
        let auto = InjectChoice::Auto;
        assert_eq!(auto.for_command(&cmd(&["/usr/bin/mpirun", "-np", "4", "./app"])), Inject::DriverHook);
        assert_eq!(auto.for_command(&cmd(&["srun", "./app"])), Inject::DriverHook);
        assert_eq!(auto.for_command(&cmd(&["./app", "mpirun"])), Inject::Preload);
        assert_eq!(auto.for_command(&cmd(&["python3", "train.py"])), Inject::Preload);
        assert_eq!(InjectChoice::Preload.for_command(&cmd(&["mpirun", "./app"])), Inject::Preload);
        assert_eq!(InjectChoice::CudaInjection.for_command(&cmd(&["./app"])), Inject::DriverHook);
    }
}
