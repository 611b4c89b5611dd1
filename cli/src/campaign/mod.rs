//! `xfpx campaign`: fault-injection campaigns. A golden run of the
//! program, then one run per fault (`xfpx run --tool inject FAULT -- APP`,
//! or `xfpx replay --tool inject FAULT LAUNCH` on the emulator), each
//! classified Masked / SDC / DUE / not activated; in parallel, resumable,
//! locally or as a Slurm job array whose shards `merge` combines.
//!
//! The runs' command is built in one place ([`engine::injection_command`]).
//! Faulty runs are `xfpx run --tool inject` (NVIDIA) or `xfpx replay
//! --tool inject` (AMD, on the emulator). `XFPX_CAMPAIGN_RUNNER` names a
//! program to run in place of `xfpx` for them (the test suite's hook for
//! crashes and hangs). A faulty run that could not inject at all (no
//! report, an `error:` from xfpx itself) stops the campaign with that line.

mod classify;
mod engine;
mod exec;
mod faults;
mod page;
mod results;
mod slurm;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use xfpx_common::fault::{parse_ranges, ErrorModel, FaultSpec};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CampaignArgs {
    #[command(subcommand)]
    pub action: Option<CampaignAction>,
    #[command(flatten)]
    pub start: StartArgs,
}

#[derive(Debug, Subcommand)]
pub enum CampaignAction {
    /// Write the results of DIR as an HTML page with a stacked bar chart per error model.
    Report {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Where to write the page (default DIR/report.html).
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
    },
    /// Combine the results of a Slurm job array's shards into DIR/results.jsonl and DIR/results.csv.
    Merge {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Run one shard of a campaign written with --slurm (what each array task runs).
    Shard {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// This shard: runs whose index modulo COUNT is INDEX.
        #[arg(long, value_name = "INDEX")]
        index: u32,
        #[arg(long, value_name = "COUNT")]
        count: u32,
        /// Runs at a time (default: SLURM_CPUS_PER_TASK, else 1).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
    },
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The campaign's directory: its definition, golden run, results and scratch space (a restart with the same arguments goes on where it stopped).
    #[arg(long, value_name = "DIR", default_value = "xfpx-campaign")]
    pub dir: PathBuf,
    /// Error models to inject (comma-separated; default all: IOC, IVOC, IRA, IVRA, IIO, IMS, IMD, WV, IAT, IAW, IAC, IAL).
    #[arg(long, value_name = "LIST")]
    pub models: Option<String>,
    /// Number of faulty runs, drawn at random from --seed (the models in turn).
    #[arg(long, value_name = "N", default_value_t = 100, conflicts_with = "exhaustive")]
    pub runs: u32,
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// One run per model, SM and lane (IAW: per warp) instead of random draws.
    #[arg(long)]
    pub exhaustive: bool,
    /// SMs (AMD: compute units) to place faults on, e.g. 0-3.
    #[arg(long, value_name = "LIST", default_value = "0")]
    pub sms: String,
    /// Sub-partitions (AMD: SIMDs) per SM.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub subpartitions: u32,
    /// Warp slots per sub-partition to draw from.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub warps: u32,
    /// Lanes to place faults on.
    #[arg(long, value_name = "LIST", default_value = "0-31")]
    pub lanes: String,
    /// Highest register an IRA fault may address.
    #[arg(long = "max-register", value_name = "N", default_value_t = 31)]
    pub max_register: u16,
    /// A file or directory the program writes, compared with the golden run's (repeatable; relative to the run's directory).
    #[arg(long = "output", value_name = "PATH")]
    pub outputs: Vec<String>,
    /// Compare stdout and outputs as text whose numbers may differ by this relative amount (default: bit for bit).
    #[arg(long, value_name = "REL")]
    pub tolerance: Option<f64>,
    /// Seconds after which a run is a hang (default: 10 times the golden run, at least 10).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Runs at a time (default: one per GPU given, else one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// GPUs to spread runs over (CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES per worker), e.g. 0,1.
    #[arg(long, value_name = "LIST")]
    pub gpus: Option<String>,
    /// Inject into a captured AMD launch on the emulator (`xfpx replay`) instead of running a program.
    #[arg(long, value_name = "LAUNCH", conflicts_with = "command")]
    pub replay: Option<PathBuf>,
    /// With --replay: the device target the launch's code object is for (e.g. gfx90a).
    #[arg(long, value_name = "TARGET", requires = "replay")]
    pub target: Option<String>,
    /// Write a Slurm job array (DIR/campaign.sbatch, DIR/merge.sbatch, DIR/submit.sh) instead of running.
    #[arg(long)]
    pub slurm: bool,
    /// With --slurm: array tasks (each runs every COUNT-th fault).
    #[arg(long, value_name = "COUNT", default_value_t = 4, requires = "slurm")]
    pub shards: u32,
    /// With --slurm: an extra `#SBATCH` line, e.g. `--partition=gpu` (repeatable).
    #[arg(long = "sbatch", value_name = "OPTION", requires = "slurm", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// The program and its arguments.
    #[arg(last = true, value_name = "CMD", required_unless_present = "replay")]
    pub command: Vec<OsString>,
}

/// What a campaign is: stored as DIR/campaign.json, read back by a restart,
/// each shard and `merge`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    pub command: Vec<String>,
    pub replay: Option<PathBuf>,
    /// The replay's device target (`--target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub outputs: Vec<String>,
    pub tolerance: Option<f64>,
    pub timeout: Option<f64>,
    pub seed: u64,
    pub exhaustive: bool,
    pub space: faults::Space,
    pub faults: Vec<FaultSpec>,
}

pub fn campaign(a: CampaignArgs) -> Result<i32> {
    match a.action {
        Some(CampaignAction::Report { dir, html }) => page::write(&dir, html.as_deref()),
        Some(CampaignAction::Merge { dir }) => slurm::merge(&dir),
        Some(CampaignAction::Shard { dir, index, count, jobs }) => slurm::shard(&dir, index, count, jobs),
        None => start(a.start),
    }
}

fn parse_models(s: Option<&str>) -> Result<Vec<ErrorModel>> {
    let Some(s) = s else { return Ok(ErrorModel::ALL.to_vec()) };
    let mut models = Vec::new();
    for name in s.split(',') {
        let m = ErrorModel::parse(name).map_err(|e| anyhow::anyhow!("invalid --models: {e}"))?;
        if !models.contains(&m) {
            models.push(m);
        }
    }
    Ok(models)
}

fn parse_list(flag: &str, s: &str) -> Result<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    for (a, b) in parse_ranges(flag, s)? {
        if b - a > 4096 {
            bail!("invalid {flag} `{s}`: range {a}-{b} is too long");
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn definition(a: &StartArgs) -> Result<Definition> {
    let lanes = parse_list("--lanes", &a.lanes)?;
    if let Some(l) = lanes.iter().find(|&&l| l > 63) {
        bail!("invalid --lanes `{}`: lane {l} (lanes are 0 to 63)", a.lanes);
    }
    if a.subpartitions == 0 || a.warps == 0 {
        bail!("--subpartitions and --warps must be at least 1");
    }
    if a.tolerance.is_some_and(|t| !(t >= 0.0 && t.is_finite())) {
        bail!("invalid --tolerance: a relative tolerance is a finite number >= 0");
    }
    if a.timeout.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
        bail!("invalid --timeout: seconds > 0");
    }
    let space = faults::Space {
        models: parse_models(a.models.as_deref())?,
        sms: parse_list("--sms", &a.sms)?,
        subpartitions: a.subpartitions,
        warps: a.warps,
        lanes,
        max_register: a.max_register,
    };
    let faults = if a.exhaustive { faults::exhaustive(&space, a.seed) } else { faults::random(&space, a.runs, a.seed) };
    if faults.is_empty() {
        bail!("the campaign has no runs (--runs 0)");
    }
    let mut command = a
        .command
        .iter()
        .map(|c| c.to_str().map(String::from).context("the program's arguments must be UTF-8 text"))
        .collect::<Result<Vec<_>>>()?;
    // runs start in their own directories: a program named by a path is named absolutely
    if let Some(program) = command.first_mut().filter(|p| p.contains('/')) {
        let abs = std::path::absolute(&*program).with_context(|| format!("bad program path {program}"))?;
        *program = abs.to_string_lossy().into_owned();
    }
    let replay = a
        .replay
        .as_ref()
        .map(|l| std::fs::canonicalize(l).with_context(|| format!("cannot read launch {}", l.display())))
        .transpose()?;
    let mut outputs = a.outputs.clone();
    if replay.is_some() && !outputs.iter().any(|o| o == engine::REPLAY_OUT) {
        outputs.push(engine::REPLAY_OUT.into());
    }
    Ok(Definition {
        command,
        replay,
        target: a.target.clone(),
        outputs,
        tolerance: a.tolerance,
        timeout: a.timeout,
        seed: a.seed,
        exhaustive: a.exhaustive,
        space,
        faults,
    })
}

/// Store `def` in `dir`, or check that `dir` holds the same campaign.
fn settle(dir: &Path, def: &Definition) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("campaign.json");
    match std::fs::read(&path) {
        Ok(bytes) => {
            let old: Definition = serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a campaign definition", path.display()))?;
            if &old != def {
                bail!(
                    "{} holds another campaign (other program, options or seed): give another --dir, or remove it",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(_) => std::fs::write(&path, serde_json::to_string_pretty(def)?)
            .with_context(|| format!("cannot write {}", path.display())),
    }
}

/// Read DIR/campaign.json.
pub fn load_definition(dir: &Path) -> Result<Definition> {
    let path = dir.join("campaign.json");
    let bytes = std::fs::read(&path).with_context(|| format!("{} is not a campaign directory", dir.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not a campaign definition", path.display()))
}

fn start(a: StartArgs) -> Result<i32> {
    let def = definition(&a)?;
    let gpus = a.gpus.as_deref().map(|g| parse_list("--gpus", g)).transpose()?.unwrap_or_default();
    let dir = std::path::absolute(&a.dir).with_context(|| format!("bad --dir {}", a.dir.display()))?;
    settle(&dir, &def)?;
    if a.slurm {
        return slurm::write_scripts(&dir, &def, a.shards, &a.sbatch);
    }
    let jobs = a.jobs.unwrap_or(if gpus.is_empty() {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        gpus.len()
    });
    let all: Vec<u32> = (0..def.faults.len() as u32).collect();
    engine::run_campaign(&dir, &def, &all, jobs.max(1), &gpus, &dir.join("results.jsonl"), true)
}
