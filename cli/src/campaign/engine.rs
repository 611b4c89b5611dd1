//! The campaign's engine: the golden run (once per campaign directory), the
//! command of each faulty run, and the workers that run, classify and
//! record them; a signal stops the workers and kills their runs, leaving
//! every finished run recorded.

use super::classify::{classify, Observed, Outcome};
use super::exec::{self, Finished};
use super::results::{self, Journal, RunResult};
use super::Definition;
use crate::console::say;
use crate::signals;
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xfpx_common::fault::FaultSpec;

/// Where `xfpx replay` writes a launch's output buffers in a run's directory.
pub const REPLAY_OUT: &str = "out";
/// The report each faulty run writes in its directory (with the injection's activations).
const RUN_REPORT: &str = "inject-report.json";
/// Runs a golden run may take at most when no --timeout is given.
const GOLDEN_LIMIT: Duration = Duration::from_secs(3600);

/// The program that runs faulty runs: `XFPX_CAMPAIGN_RUNNER`, else this `xfpx`.
fn runner() -> Result<OsString> {
    match std::env::var_os("XFPX_CAMPAIGN_RUNNER").filter(|v| !v.is_empty()) {
        Some(r) => Ok(r),
        None => Ok(std::env::current_exe().context("cannot find the xfpx executable")?.into_os_string()),
    }
}

/// The command of one faulty run: `xfpx run --tool inject FAULT --report R -- APP`,
/// or `xfpx replay --tool inject FAULT --report R --out out LAUNCH`.
pub fn injection_command(exe: &OsString, def: &Definition, fault: &FaultSpec) -> Vec<OsString> {
    let mut argv = vec![exe.clone()];
    let words = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
    argv.extend(words(&[if def.replay.is_some() { "replay" } else { "run" }, "--tool", "inject"]));
    argv.extend(fault.to_args().into_iter().map(OsString::from));
    argv.extend(words(&["--report", RUN_REPORT]));
    match &def.replay {
        Some(launch) => {
            argv.extend(words(&["--out", REPLAY_OUT]));
            argv.extend(target_args(def));
            argv.push(launch.clone().into_os_string());
        }
        None => {
            argv.push("--".into());
            argv.extend(def.command.iter().map(OsString::from));
        }
    }
    argv
}

/// `--target T` of a replay campaign with a target.
fn target_args(def: &Definition) -> Vec<OsString> {
    def.target.iter().flat_map(|t| [OsString::from("--target"), OsString::from(t)]).collect()
}

/// The golden run's command: the program itself, or a plain replay.
fn golden_command(def: &Definition) -> Result<Vec<OsString>> {
    Ok(match &def.replay {
        Some(launch) => {
            let exe = std::env::current_exe().context("cannot find the xfpx executable")?;
            let mut v: Vec<OsString> = vec![exe.into(), "replay".into(), "--no-report".into(), "--out".into()];
            v.push(REPLAY_OUT.into());
            v.extend(target_args(def));
            v.push(launch.clone().into_os_string());
            v
        }
        None => def.command.iter().map(OsString::from).collect(),
    })
}

/// A fresh, empty directory for a run.
fn fresh(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// The named outputs a run left in `dir`: a directory stands for the files
/// in it (`out/a.bin`); `keys` (the golden run's) fixes what is read.
fn read_outputs(dir: &Path, names: &[String], keys: Option<&[String]>) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let keys: Vec<String> = match keys {
        Some(k) => k.to_vec(),
        None => {
            let mut k = Vec::new();
            for n in names {
                let p = dir.join(n);
                match std::fs::read_dir(&p) {
                    Ok(entries) => {
                        let mut files: Vec<String> = entries
                            .filter_map(|e| e.ok())
                            .filter(|e| e.path().is_file())
                            .map(|e| format!("{n}/{}", e.file_name().to_string_lossy()))
                            .collect();
                        files.sort();
                        k.extend(files);
                    }
                    Err(_) => k.push(n.clone()),
                }
            }
            k
        }
    };
    for k in keys {
        out.insert(k.clone(), std::fs::read(dir.join(&k)).ok());
    }
    out
}

/// The golden run: `dir/golden/observed.json`, made once (a campaign's
/// shards may race to make it: the first to finish is kept).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Golden {
    code: Option<i32>,
    signal: Option<i32>,
    seconds: f64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    outputs: BTreeMap<String, Option<Vec<u8>>>,
}

impl Golden {
    fn observed(&self) -> Observed {
        Observed {
            finished: Finished {
                code: self.code,
                signal: self.signal,
                timed_out: false,
                stdout: self.stdout.clone(),
                stderr: self.stderr.clone(),
                seconds: self.seconds,
            },
            outputs: self.outputs.clone(),
        }
    }
}

fn golden(dir: &Path, def: &Definition, stop: &AtomicBool) -> Result<Golden> {
    let path = dir.join("golden.json");
    if let Ok(bytes) = std::fs::read(&path) {
        return serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged: remove it", path.display()));
    }
    let work = dir.join("work").join(format!("golden-{}", std::process::id()));
    fresh(&work)?;
    let limit = def.timeout.map_or(GOLDEN_LIMIT, Duration::from_secs_f64);
    let Some(f) = exec::run(&golden_command(def)?, &work, &[], limit, stop)? else {
        bail!("stopped during the golden run");
    };
    if f.timed_out {
        bail!("the golden run did not finish in {} s", limit.as_secs());
    }
    if let Some(sig) = f.signal {
        bail!("the golden run was killed by {}", signals::name(sig));
    }
    let outputs = read_outputs(&work, &def.outputs, None);
    if let Some((name, _)) = outputs.iter().find(|(_, v)| v.is_none()) {
        bail!("the golden run wrote no {name} (named by --output; paths are relative to the run's directory)");
    }
    let g = Golden { code: f.code, signal: f.signal, seconds: f.seconds, stdout: f.stdout, stderr: f.stderr, outputs };
    let tmp = dir.join(format!("golden.json.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(&g)?).with_context(|| format!("cannot write {}", tmp.display()))?;
    // a shard that finished first keeps its own
    if std::fs::hard_link(&tmp, &path).is_err() && !path.exists() {
        bail!("cannot write {}", path.display());
    }
    let _ = std::fs::remove_file(&tmp);
    let _ = std::fs::remove_dir_all(&work);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged: remove it", path.display()))
}

/// The dynamic instances a faulty run corrupted, from its report's
/// `injection.activations` (`None` when it wrote none).
fn activations(report: &Path) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(report).ok()?).ok()?;
    v.get("injection")?.get("activations")?.as_u64()
}

/// Run the faults `ids` of `def`, skipping those already in `journal`,
/// on `jobs` workers; `sort` rewrites the journal sorted, with its CSV,
/// once every run is in.
pub fn run_campaign(
    dir: &Path,
    def: &Definition,
    ids: &[u32],
    jobs: usize,
    gpus: &[u32],
    journal: &Path,
    sort: bool,
) -> Result<i32> {
    let exe = runner()?;
    signals::install().map_err(anyhow::Error::msg)?;
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if !signals::received().is_empty() {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let result = run_all(dir, def, ids, jobs, gpus, journal, &exe, &stop);
    let stopped = !signals::received().is_empty();
    stop.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    let finished = result?;
    let mine: BTreeMap<u32, RunResult> = finished.into_iter().filter(|(id, _)| ids.contains(id)).collect();
    if stopped {
        say!(
            "xfpx: campaign stopped: {} of {} runs finished and recorded; run the same command to go on",
            mine.len(),
            ids.len()
        );
        return Ok(130);
    }
    if sort {
        results::write_sorted(dir, &mine)?;
    }
    summary(&mine);
    Ok(0)
}

#[allow(clippy::too_many_arguments)]
fn run_all(
    dir: &Path,
    def: &Definition,
    ids: &[u32],
    jobs: usize,
    gpus: &[u32],
    journal_path: &Path,
    exe: &OsString,
    stop: &Arc<AtomicBool>,
) -> Result<BTreeMap<u32, RunResult>> {
    let golden = golden(dir, def, stop)?;
    let timeout = Duration::from_secs_f64(def.timeout.unwrap_or((golden.seconds * 10.0).max(10.0)));
    let done_before = results::load(journal_path)?;
    let journal = Journal::open(journal_path)?;
    let pending: VecDeque<u32> = ids.iter().copied().filter(|id| !done_before.contains_key(id)).collect();
    let total = ids.len() as u64;
    let done = Arc::new(AtomicU64::new(total - pending.len() as u64));
    let queue = Mutex::new(pending);
    let finished = Mutex::new(done_before);
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let golden_obs = golden.observed();
    {
        let _bar = crate::progress::Bar::runs(total, done.clone());
        std::thread::scope(|s| {
            for w in 0..jobs {
                let (queue, finished, failure, journal, done, golden_obs) =
                    (&queue, &finished, &failure, &journal, &done, &golden_obs);
                let mut env: Vec<(String, String)> = Vec::new();
                if !gpus.is_empty() {
                    let g = gpus[w % gpus.len()].to_string();
                    env.push(("CUDA_VISIBLE_DEVICES".into(), g.clone()));
                    env.push(("HIP_VISIBLE_DEVICES".into(), g));
                }
                let work = dir.join("work").join(format!("w{w}-{}", std::process::id()));
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Some(id) = queue.lock().ok().and_then(|mut q| q.pop_front()) else { break };
                        match one_run(id, def, exe, &work, &env, timeout, golden_obs, stop)
                            .and_then(|r| r.map(|r| journal.append(&r).map(|()| r)).transpose())
                        {
                            Ok(Some(r)) => {
                                done.fetch_add(1, Ordering::Relaxed);
                                if let Ok(mut f) = finished.lock() {
                                    f.insert(id, r);
                                }
                            }
                            Ok(None) => break,
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                if let Ok(mut f) = failure.lock() {
                                    f.get_or_insert(e);
                                }
                            }
                        }
                    }
                    let _ = std::fs::remove_dir_all(&work);
                });
            }
        });
    }
    // other shards may still use it
    let _ = std::fs::remove_dir(dir.join("work"));
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    finished.into_inner().map_err(|_| anyhow::anyhow!("results poisoned"))
}

/// One faulty run, classified (`None`: stopped before it ended).
#[allow(clippy::too_many_arguments)]
fn one_run(
    id: u32,
    def: &Definition,
    exe: &OsString,
    work: &Path,
    env: &[(String, String)],
    timeout: Duration,
    golden: &Observed,
    stop: &AtomicBool,
) -> Result<Option<RunResult>> {
    let fault = &def.faults[id as usize];
    fresh(work)?;
    let argv = injection_command(exe, def, fault);
    let Some(finished) = exec::run(&argv, work, env, timeout, stop)? else { return Ok(None) };
    if cannot_inject(&finished, &work.join(RUN_REPORT)) {
        let text = String::from_utf8_lossy(&finished.stderr);
        let line = text.lines().rev().find(|l| l.starts_with("error: ")).unwrap_or("error: (no message)");
        bail!("faulty run {id} could not inject ({}), so no run of this campaign can: {}", fault, &line[7..]);
    }
    let keys: Vec<String> = golden.outputs.keys().cloned().collect();
    let mut run = Observed { outputs: read_outputs(work, &def.outputs, Some(&keys)), finished };
    let act = activations(&work.join(RUN_REPORT));
    let (outcome, detail) = if def.replay.is_some() {
        // a replay's stdout is xfpx's own summary: the launch's output buffers are its data
        let mut golden = golden.clone();
        golden.finished.stdout.clear();
        run.finished.stdout.clear();
        classify(&golden, &run, act, def.tolerance)
    } else {
        classify(golden, &run, act, def.tolerance)
    };
    Ok(Some(RunResult {
        id,
        model: fault.model,
        outcome,
        detail,
        activations: act,
        exit_status: run.finished.code,
        signal: run.finished.signal,
        seconds: (run.finished.seconds * 1000.0).round() / 1000.0,
        fault: fault.clone(),
    }))
}

/// A faulty run that injected nothing because xfpx itself refused (no
/// GPU, a fault it cannot lower): it wrote no report and ended with its
/// own `error:` line, neither killed nor timed out.
fn cannot_inject(f: &exec::Finished, report: &Path) -> bool {
    !f.timed_out
        && f.signal.is_none()
        && f.code != Some(0)
        && !report.exists()
        && String::from_utf8_lossy(&f.stderr).lines().any(|l| l.starts_with("error: "))
}

/// Counts per model and class on stderr.
pub fn summary(results: &BTreeMap<u32, RunResult>) {
    let mut by_model: BTreeMap<_, [usize; 4]> = BTreeMap::new();
    for r in results.values() {
        let i = Outcome::ALL.iter().position(|o| *o == r.outcome).unwrap_or(0);
        by_model.entry(r.model).or_default()[i] += 1;
    }
    say!("{:<6} {:>8} {:>8} {:>8} {:>14}", "model", "Masked", "SDC", "DUE", "not-activated");
    for (m, c) in &by_model {
        say!("{:<6} {:>8} {:>8} {:>8} {:>14}", m.name(), c[0], c[1], c[2], c[3]);
    }
    say!("xfpx: {} runs", results.len());
}

/// Where a shard of a Slurm array writes its results.
pub fn shard_journal(dir: &Path, index: u32) -> PathBuf {
    dir.join("shards").join(format!("shard-{index}.jsonl"))
}
