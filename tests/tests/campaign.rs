//! `xfpx campaign` with real processes: a workload (a shell script) that
//! really crashes, hangs, exits non-zero, prints a CUDA error, corrupts its
//! output file or stdout, or behaves identically, as the fault it is told
//! of says; and a stand-in for the inject tool (which is not lowered yet)
//! that takes the arguments `xfpx run --tool inject` gets, writes the
//! report's activation count and runs the workload. The campaign's
//! classifier, runner, journal, resume, report page and Slurm job array
//! are the real ones; the Slurm test runs a real single-node Slurm
//! (slurmctld, slurmd and munged started here).

mod common;

use common::{finish, run, send_signal, xfpx};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The stand-in for `xfpx run --tool inject`: same arguments.
const RUNNER: &str = r#"#!/bin/sh
model=; report=
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break;;
    --model) model=$2; shift 2;;
    --report) report=$2; shift 2;;
    *) shift;;
  esac
done
[ -n "$CAMPAIGN_LOG" ] && echo "$model" >> "$CAMPAIGN_LOG"
case $model in IAL) n=0;; *) n=3;; esac
printf '{"injection":{"activations":%d}}' $n > "$report"
FAULT_MODEL=$model exec "$@"
"#;

/// The workload: writes out.txt and prints a sum, misbehaving as told.
const APP: &str = r#"#!/bin/sh
v="1.0 2.0 3.0"
[ -n "$APP_DELAY" ] && sleep "$APP_DELAY"
case "$FAULT_MODEL" in
  IVOC) kill -SEGV $$;;
  IAT) sleep 60;;
  IOC) echo "sum 6"; exit 3;;
  IRA) v="1.0 2.5 3.0";;
  IIO) echo "$v" > out.txt; echo "sum 7"; exit 0;;
  WV) echo "CUDA error: an illegal memory access was encountered" >&2;;
  IMD) v="1.0 2.0000000001 3.0";;
esac
echo "$v" > out.txt
echo "sum 6"
"#;

/// What each model makes the workload do, as the campaign must classify it.
const EXPECTED: &[(&str, &str, &str)] = &[
    ("IVOC", "DUE", "killed by SIGSEGV"),
    ("IAT", "DUE", "hang (timed out)"),
    ("IOC", "DUE", "exit status 3"),
    ("IRA", "SDC", "out.txt differs"),
    ("IIO", "SDC", "stdout differs"),
    ("WV", "DUE", "GPU runtime error (CUDA error)"),
    ("IMD", "SDC", "out.txt differs"),
    ("IMS", "Masked", ""),
    ("IAL", "not-activated", "the fault never fired"),
];

fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

/// `xfpx campaign` in `dir` with the stand-in runner, the workload last.
fn campaign(dir: &Path, args: &[&str]) -> Command {
    let app = dir.join("app.sh");
    campaign_of(dir, args, &app.to_string_lossy())
}

/// The same, the workload named by `app`.
fn campaign_of(dir: &Path, args: &[&str], app: &str) -> Command {
    let runner = script(dir, "runner.sh", RUNNER);
    script(dir, "app.sh", APP);
    let mut c = xfpx(dir);
    c.env("XFPX_CAMPAIGN_RUNNER", runner).env_remove("FAULT_MODEL").arg("campaign").args(args).arg("--");
    c.arg(app);
    c
}

/// The results of a campaign directory, by id: (model, outcome, detail, activations, fault).
type Row = (String, String, String, Option<u64>, String);

fn results(dir: &Path) -> BTreeMap<u64, Row> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results.jsonl");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let s = |k: &str| v[k].as_str().expect(k).to_string();
            (
                v["id"].as_u64().expect("id"),
                (s("model"), s("outcome"), s("detail"), v["activations"].as_u64(), v["fault"].to_string()),
            )
        })
        .collect()
}

const MODELS: &str = "IVOC,IAT,IOC,IRA,IIO,WV,IMD,IMS,IAL";

#[test]
fn every_outcome_is_classified_from_real_processes() {
    let tmp = tempfile::tempdir().expect("dir");
    let args =
        ["--dir", "c", "--models", MODELS, "--runs", "18", "--jobs", "2", "--timeout", "2", "--output", "out.txt"];
    let t = Instant::now();
    let out = run(campaign(tmp.path(), &args));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(t.elapsed() < Duration::from_secs(40), "hangs were not cut at the timeout: {:?}", t.elapsed());
    let got = results(&tmp.path().join("c"));
    assert_eq!(got.len(), 18);
    for (model, outcome, detail) in EXPECTED {
        let runs: Vec<_> = got.values().filter(|r| r.0 == *model).collect();
        assert_eq!(runs.len(), 2, "{model}");
        for r in runs {
            assert_eq!((r.1.as_str(), r.2.as_str()), (*outcome, *detail), "{model}");
            assert_eq!(r.3, Some(if *model == "IAL" { 0 } else { 3 }), "{model}");
        }
    }
    // the summary table and the CSV
    assert!(
        out.stderr.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["IVOC", "0", "0", "2", "0"]),
        "{}",
        out.stderr
    );
    let csv = std::fs::read_to_string(tmp.path().join("c/results.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 19);
    assert!(csv.starts_with("id,model,outcome,detail,activations,exit_status,signal,seconds,fault\n"));
    assert!(csv.contains(",IVOC,DUE,\"killed by SIGSEGV\",3,,11,"), "{csv}");
    // a second start finds every run done and runs nothing
    let log = tmp.path().join("log");
    let mut again = campaign(tmp.path(), &args);
    again.env("CAMPAIGN_LOG", &log);
    let out = run(again);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!log.exists(), "finished runs were run again");
    // the page
    let out = run({
        let mut c = xfpx(tmp.path());
        c.args(["campaign", "report", "c"]);
        c
    });
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let page = std::fs::read_to_string(tmp.path().join("c/report.html")).expect("page");
    assert!(page.contains("18 of 18 runs finished"));
    assert!(page.contains("data-label=\"IVOC\""));
    assert!(page.contains("data-segment=\"DUE\" data-count=\"2\""));
    assert!(page.contains("data-segment=\"not-activated\" data-count=\"2\""));
    browser_check(&tmp.path().join("c/report.html"));
}

#[test]
fn a_tolerance_masks_small_numeric_differences() {
    let tmp = tempfile::tempdir().expect("dir");
    let args = ["--dir", "c", "--models", "IMD,IRA", "--runs", "2", "--output", "out.txt", "--tolerance", "1e-6"];
    // the program named relatively, as users do: runs start in their own directories
    let out = run(campaign_of(tmp.path(), &args, "./app.sh"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let got: Vec<String> = results(&tmp.path().join("c")).into_values().map(|r| format!("{} {}", r.0, r.1)).collect();
    assert_eq!(got, ["IMD Masked", "IRA SDC"]);
}

#[test]
fn a_killed_campaign_restarts_without_losing_or_rerunning_finished_runs() {
    let tmp = tempfile::tempdir().expect("dir");
    let log = tmp.path().join("log");
    let args = ["--dir", "c", "--models", "IMS,IRA", "--runs", "16", "--jobs", "2", "--output", "out.txt"];
    let mut first = campaign(tmp.path(), &args);
    first.env("APP_DELAY", "0.3").env("CAMPAIGN_LOG", &log).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = first.spawn().expect("start");
    let journal = tmp.path().join("c/results.jsonl");
    let t = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |s| s.lines().count()) < 5 {
        assert!(t.elapsed() < Duration::from_secs(30), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    send_signal(child.id() as i32, libc::SIGKILL);
    let _ = child.wait();
    let before = std::fs::read_to_string(&journal).expect("journal");
    let before: Vec<serde_json::Value> = before.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(before.len() >= 5 && before.len() < 16, "{}", before.len());
    let mut second = campaign(tmp.path(), &args);
    second.env("APP_DELAY", "0.3").env("CAMPAIGN_LOG", &log);
    let out = run(second);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let after = std::fs::read_to_string(&journal).expect("journal");
    let after: BTreeMap<u64, serde_json::Value> = after
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("line"))
        .map(|v| (v["id"].as_u64().expect("id"), v))
        .collect();
    assert_eq!(after.len(), 16);
    for v in &before {
        assert_eq!(&after[&v["id"].as_u64().expect("id")], v, "a finished run changed");
    }
    // runs in flight at the kill ran again; finished ones did not
    let invocations = std::fs::read_to_string(&log).expect("log").lines().count();
    assert!((16..=16 + 2).contains(&invocations), "{invocations} invocations");
}

#[test]
fn bad_campaigns_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().expect("dir");
    let mut c = campaign(tmp.path(), &["--dir", "c", "--models", "IRA,BOGUS"]);
    run_refused(&mut c, "unknown error model `BOGUS`");
    let mut c = campaign(tmp.path(), &["--dir", "c", "--lanes", "0-70"]);
    run_refused(&mut c, "lane 64");
    // a campaign in d (with the stand-in), then the same directory with another seed
    let c = campaign(tmp.path(), &["--dir", "d", "--runs", "2", "--output", "out.txt"]);
    assert_eq!(run(c).code, Some(0));
    let mut c = campaign(tmp.path(), &["--dir", "d", "--runs", "2", "--seed", "9"]);
    run_refused(&mut c, "holds another campaign");
    // an output the golden run does not write
    let mut c = campaign(tmp.path(), &["--dir", "e", "--runs", "2", "--output", "missing.bin"]);
    run_refused(&mut c, "the golden run wrote no missing.bin");
}

#[test]
fn faulty_runs_check_the_fault() {
    let tmp = tempfile::tempdir().expect("dir");
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--tool", "inject", "--model", "IRA", "--sm", "3", "--", "true"], "the IRA model needs --operand"),
        (
            &["run", "--tool", "inject", "--model", "WV", "--predicate", "1", "--mask", "4", "--sm", "0", "--", "true"],
            "--mask does not apply to the WV model",
        ),
        (&["run", "--tool", "inject", "--model", "XX", "--sm", "0", "--", "true"], "unknown error model `XX`"),
        (&["run", "--model", "IVOC", "--sm", "0", "--", "true"], "need --tool inject (or --tool counters)"),
        (&["replay", "--tool", "counters", "--model", "IVOC", "--sm", "0", "l.json"], "need --tool inject"),
        (
            &[
                "run",
                "--tool",
                "counters",
                "--model",
                "WV",
                "--predicate",
                "0",
                "--mask",
                "1",
                "--sm",
                "0",
                "--",
                "true",
            ],
            "--mask does not apply to the WV model",
        ),
        (
            // counters with a fault in the run: a valid fault goes on to the run
            &["run", "--tool", "counters", "--model", "WV", "--predicate", "0", "--sm", "0", "--", "true"],
            "no supported GPU found",
        ),
        (
            &[
                "run",
                "--tool",
                "inject",
                "--model",
                "IRA",
                "--operand",
                "src0",
                "--register",
                "7",
                "--sm",
                "3",
                "--lanes",
                "0-3",
                "--",
                "true",
            ],
            // a valid fault goes on to the run, which needs an NVIDIA GPU
            "no supported GPU found",
        ),
        (
            &["replay", "--tool", "inject", "--model", "IMD", "--mask", "1", "--store", "data", "--sm", "0", "l.json"],
            // a valid fault goes on to the replay, which needs its launch
            "cannot replay l.json",
        ),
    ];
    for (args, needle) in cases {
        let mut c = xfpx(tmp.path());
        c.args(*args);
        run(c).assert_one_line_error(1, needle);
    }
}

fn run_refused(c: &mut Command, needle: &str) {
    let out = run(std::mem::replace(c, Command::new("true")));
    out.assert_one_line_error(1, needle);
}

/// The page opened in headless Chromium: the chart is in the DOM the
/// browser built. Without Chromium: SKIP loudly, a failure under CI.
fn browser_check(page: &Path) {
    let Some(exe) = ["chromium", "chromium-browser"].iter().find_map(|n| which(n)) else {
        if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false") {
            panic!("chromium is not installed (CI needs it)");
        }
        eprintln!("SKIP: chromium not found; the campaign page was not opened in a browser");
        return;
    };
    let profile = tempfile::tempdir().expect("profile");
    let mut c = Command::new(exe);
    c.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()));
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = finish(c.spawn().expect("start chromium"));
    assert!(out.stdout.contains("<svg id=\"outcomes\""), "{}", out.stderr);
    assert_eq!(out.stdout.matches("<g class=\"bar\"").count(), 9, "one bar per model");
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// A single-node Slurm (munged, slurmctld, slurmd) in a scratch directory,
/// shut down when dropped.
struct Slurm {
    dir: tempfile::TempDir,
}

impl Slurm {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn start() -> Result<Slurm, String> {
        for tool in ["munged", "mungekey", "slurmctld", "slurmd", "sbatch"] {
            which(tool).or_else(|| which_sbin(tool)).ok_or(format!("{tool} is not installed (Debian: slurm-wlm)"))?;
        }
        let uid = Command::new("id").arg("-u").output().map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("the daemons need root here (they run jobs as root)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let t = dir.path().to_path_buf();
        let slurm = Slurm { dir };
        for d in ["state", "spool"] {
            std::fs::create_dir_all(t.join(d)).map_err(|e| e.to_string())?;
        }
        let sh = |cmd: &str| -> Result<(), String> {
            // the daemons live in /usr/sbin, which a user's PATH may lack
            let path = format!("{}:/usr/sbin:/sbin", std::env::var("PATH").unwrap_or_default());
            let out = Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .env("PATH", path)
                .env("SLURM_CONF", t.join("slurm.conf"))
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("`{cmd}` failed: {}", String::from_utf8_lossy(&out.stderr)))
            }
        };
        let (p1, p2) = (free_port(), free_port());
        let host = String::from_utf8_lossy(&Command::new("hostname").output().map_err(|e| e.to_string())?.stdout)
            .trim()
            .to_string();
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let t_ = t.display();
        let conf = format!(
            "ClusterName=xfpxtest\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nAuthInfo=socket={t_}/munge.sock\nCredType=cred/munge\n\
             StateSaveLocation={t_}/state\nSlurmdSpoolDir={t_}/spool\nSlurmctldPidFile={t_}/ctld.pid\n\
             SlurmdPidFile={t_}/d.pid\nSlurmctldPort={p1}\nSlurmdPort={p2}\nProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\nSchedulerType=sched/builtin\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\nReturnToService=2\nMpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             SlurmctldLogFile={t_}/ctld.log\nSlurmdLogFile={t_}/d.log\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n"
        );
        std::fs::write(slurm.conf(), conf).map_err(|e| e.to_string())?;
        sh(&format!("mungekey -c -k {t_}/munge.key && chmod 600 {t_}/munge.key"))?;
        sh(&format!(
            "munged --force --socket={t_}/munge.sock --key-file={t_}/munge.key --pid-file={t_}/munged.pid \
             --log-file={t_}/munged.log --seed-file={t_}/munge.seed"
        ))?;
        sh("slurmctld -i")?;
        sh("slurmd")?;
        let t0 = Instant::now();
        loop {
            let out = Command::new("sinfo").args(["-h", "-o", "%t"]).env("SLURM_CONF", slurm.conf()).output();
            if out.as_ref().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle") {
                return Ok(slurm);
            }
            if t0.elapsed() > Duration::from_secs(30) {
                return Err(format!("the node did not come up: {:?}; {}", out, slurm.logs()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn logs(&self) -> String {
        ["ctld.log", "d.log", "munged.log"]
            .iter()
            .map(|f| format!("{f}: {}", std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default()))
            .collect()
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let _ = Command::new("scontrol").arg("shutdown").env("SLURM_CONF", self.conf()).output();
        std::thread::sleep(Duration::from_secs(1));
        for pid in ["ctld.pid", "d.pid", "munged.pid"] {
            if let Ok(p) = std::fs::read_to_string(self.dir.path().join(pid)) {
                let _ = Command::new("kill").arg(p.trim()).output();
            }
        }
    }
}

fn which_sbin(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

#[test]
fn a_slurm_job_array_merges_to_the_local_results() {
    let slurm = match Slurm::start() {
        Ok(s) => s,
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false") {
                panic!("cannot start a single-node Slurm under CI: {why}");
            }
            eprintln!("SKIP: no single-node Slurm: {why}");
            return;
        }
    };
    // real faulty replays on the emulator, no stand-in runner
    let tmp = tempfile::tempdir().expect("dir");
    let launch = micro_launch();
    let common = [
        "--replay", &launch, "--target", "gfx942", "--runs", "12", "--seed", "5", "--sms", "0-2", "--warps", "2",
        "--lanes", "0-63",
    ];
    let real = |args: &[&str]| {
        let mut c = xfpx(tmp.path());
        c.env_remove("XFPX_CAMPAIGN_RUNNER").arg("campaign").args(args).args(common);
        c
    };
    let out = run(real(&["--dir", "local", "--jobs", "2"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = run(real(&["--dir", "cluster", "--slurm", "--shards", "3"]));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let cluster = tmp.path().join("cluster");
    let script = std::fs::read_to_string(cluster.join("campaign.sbatch")).expect("array script");
    assert!(script.contains("#SBATCH --array=0-2"), "{script}");
    // submit as a user would, with the cluster's configuration
    let submit = Command::new(cluster.join("submit.sh"))
        .current_dir(tmp.path())
        .env("SLURM_CONF", slurm.conf())
        .env_remove("XFPX_CAMPAIGN_RUNNER")
        .output()
        .expect("submit");
    assert!(submit.status.success(), "{}", String::from_utf8_lossy(&submit.stderr));
    let t = Instant::now();
    let merge_log = cluster.join("slurm/merge.out");
    while !std::fs::read_to_string(&merge_log).is_ok_and(|s| s.contains("xfpx: 12 runs")) {
        assert!(t.elapsed() < Duration::from_secs(120), "the merge job never ended: {}", slurm.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    for i in 0..3 {
        assert!(cluster.join(format!("shards/shard-{i}.jsonl")).exists(), "shard {i} wrote nothing");
    }
    let local = results(&tmp.path().join("local"));
    assert!(local.values().any(|r| r.1 == "SDC" && r.3.is_some_and(|a| a > 0)), "real injections: {local:?}");
    assert_eq!(local, results(&cluster), "local and Slurm classifications differ");
}

/// The AMD fault-injection micro-kernel's launch.
fn micro_launch() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/tests/inject/micro.json").to_string_lossy().into()
}

#[test]
fn a_replay_campaign_injects_for_real_on_the_emulator() {
    let tmp = tempfile::tempdir().expect("dir");
    let launch = micro_launch();
    let go = |dir: &str| {
        let mut c = xfpx(tmp.path());
        c.env_remove("XFPX_CAMPAIGN_RUNNER").args(["campaign", "--dir", dir, "--replay"]).arg(&launch);
        c.args([
            "--target", "gfx90a", "--runs", "24", "--seed", "3", "--sms", "0-2", "--warps", "2", "--lanes", "0-63",
        ]);
        let o = c.output().expect("campaign runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        results(&tmp.path().join(dir))
    };
    let first = go("a");
    assert_eq!(first.len(), 24);
    let outcomes: std::collections::BTreeSet<String> = first.values().map(|r| r.1.clone()).collect();
    // real injections: some runs fire and change the output, the IVOC trap is a DUE
    assert!(outcomes.contains("SDC") && outcomes.contains("DUE"), "{first:?}");
    assert_eq!(go("b"), first, "same seed, same classifications");
}

#[test]
fn a_replay_campaign_fires_index_faults_on_the_emulator() {
    // the index micro-kernel: 6 workgroups on compute units 0-5, two waves
    // each on SIMDs 0 and 1, wave slot 0; every location drawn runs a wave
    let tmp = tempfile::tempdir().expect("dir");
    let launch = Path::new(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/tests/inject/index.json");
    let mut c = xfpx(tmp.path());
    c.env_remove("XFPX_CAMPAIGN_RUNNER").args(["campaign", "--dir", "c", "--replay"]).arg(&launch);
    c.args(["--target", "gfx90a", "--models", "IAT,IAW,IAC", "--runs", "9", "--seed", "2"]);
    c.args(["--sms", "0-5", "--subpartitions", "2", "--warps", "1", "--lanes", "0-63"]);
    let o = c.output().expect("campaign runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = results(&tmp.path().join("c"));
    assert_eq!(rows.len(), 9);
    for model in ["IAT", "IAW", "IAC"] {
        let of: Vec<&Row> = rows.values().filter(|r| r.0 == model).collect();
        assert_eq!(of.len(), 3, "{rows:?}");
        // the index arrives in a register: the fault fires in every run
        assert!(of.iter().all(|r| r.3.is_some_and(|a| a > 0)), "{model} never fired: {of:?}");
        for r in of {
            let swaps_halves = r.4.contains(r#""mask":32"#);
            let want: &[&str] = match model {
                // one lane does another's work of its wave: its own slot stays unwritten
                "IAT" => &["SDC"],
                // tx ^ 32 swaps the halves of the wave: the same stores
                "IAW" if swaps_halves => &["Masked"],
                // a wave moved to another wave's or workgroup's slots (or past the buffer)
                _ => &["SDC", "DUE"],
            };
            assert!(want.contains(&r.1.as_str()), "{model}: {r:?}");
        }
    }
}

#[test]
fn a_program_campaign_that_cannot_inject_stops_after_the_first_run() {
    let tmp = tempfile::tempdir().expect("dir");
    let mut c = xfpx(tmp.path());
    c.env_remove("XFPX_CAMPAIGN_RUNNER").args(["campaign", "--dir", "c", "--runs", "5", "--", "true"]);
    run(c).assert_one_line_error(1, "could not inject");
}
