//! Parallel jobs as HPC sites run them, through the event stream without a
//! GPU: Open MPI's `mpirun` starts four copies of `scripted-event-app`,
//! each sending the hello (with the rank the launcher set) and findings of
//! its own. Both ways are checked: `xfpx run -- mpirun ...` (one xfpx, one
//! report naming the ranks) and `mpirun ... xfpx run --report r.%r.json`
//! (one report per rank, combined by `xfpx report --merge`); both must give
//! the same findings. Without `mpirun` the MPI tests print a SKIP line, and
//! fail when the variable CI is set (CI installs Open MPI).

mod common;

use common::{run, scripted_app, xfpx, xfpx_without_library, Outcome};
use std::path::Path;
use std::process::Command;
use xfpx_common::class::FpFormat;
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{ExitStatus, KernelStatus, Report};
use xfpx_common::site::SiteId;
use xfpx_tests::{event_lines, finding};

const RANKS: u32 = 4;

/// Variables through which a launcher names a rank: cleared where a test
/// needs a run without one, whatever started the tests.
const LAUNCHER_VARS: [&str; 7] = [
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "SLURM_PROCID",
    "SLURM_NTASKS",
];

/// `mpirun -np 4` with what this machine needs (oversubscribing two cores;
/// root as in CI containers), or `None` after a loud SKIP line.
fn mpirun() -> Option<Command> {
    let found = Command::new("mpirun").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "mpirun is missing on CI: .ci/run must install openmpi-bin");
        eprintln!("SKIP: mpirun (Open MPI) not found; the MPI tests did not run");
        return None;
    }
    let mut c = Command::new("mpirun");
    c.args(["-np", &RANKS.to_string(), "--oversubscribe"]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.arg("--allow-run-as-root");
    }
    Some(c)
}

/// The events rank `rank` sends: every rank finds the NaN in gemm (under a
/// site id of its own: ids are per process), ranks 1 and 3 a division by
/// zero, rank 2 an infinity in another kernel.
fn rank_events(rank: u32) -> Vec<Event> {
    let r = u64::from(rank);
    let id = |n: u32| n + 10 * rank;
    let mut e = vec![
        Event::Device { vendor: "nvidia".into(), device: "Scripted GPU".into(), target: Some("sm_90".into()) },
        Event::Kernel { name: "gemm".into(), status: KernelStatus::Instrumented, probes: 40 },
        Event::Launch { kernel: "gemm".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        finding(
            "gemm",
            ExceptionKind::Nan,
            FpFormat::F32,
            id(0),
            0x130,
            "FADD R4, R2, R3",
            Some(("gemm.cu", 42)),
            0,
            r + 1,
        ),
    ];
    if rank % 2 == 1 {
        e.push(finding("gemm", ExceptionKind::Div0, FpFormat::F64, id(1), 0x2a0, "MUFU.RCP64H R9, R7", None, 0, 1));
    }
    if rank == 2 {
        e.push(Event::Launch {
            kernel: "reduce".into(),
            index: 0,
            instrumented: true,
            screened: false,
            unchecked: None,
        });
        e.push(finding("reduce", ExceptionKind::Inf, FpFormat::F32, id(2), 0x80, "FMUL R1, R2, R3", None, 0, 4));
    }
    e
}

fn write_rank_events(dir: &Path) {
    for rank in 0..RANKS {
        std::fs::write(dir.join(format!("events.{rank}.jsonl")), event_lines(&rank_events(rank))).expect("write");
    }
}

fn app_args() -> Vec<String> {
    let app = scripted_app().to_string_lossy().into_owned();
    vec![app, "--events".into(), "events.{rank}.jsonl".into(), "--finish".into()]
}

fn read(path: &Path) -> Report {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Report::from_json(&text).expect("a valid report")
}

/// (kernel, offset, kind, occurrences, ranks) of every record.
fn findings(r: &Report) -> Vec<(String, u64, ExceptionKind, u64, Vec<u32>)> {
    r.records().map(|(k, x)| (k.to_string(), x.site.offset, x.kind, x.occurrences, x.ranks.clone())).collect()
}

/// What the four ranks' events add up to.
fn expected() -> Vec<(String, u64, ExceptionKind, u64, Vec<u32>)> {
    vec![
        ("gemm".into(), 0x130, ExceptionKind::Nan, 1 + 2 + 3 + 4, vec![0, 1, 2, 3]),
        ("gemm".into(), 0x2a0, ExceptionKind::Div0, 2, vec![1, 3]),
        ("reduce".into(), 0x80, ExceptionKind::Inf, 4, vec![2]),
    ]
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

#[test]
fn xfpx_around_mpirun_names_every_rank() {
    let Some(mpirun) = mpirun() else { return };
    let d = scratch();
    write_rank_events(d.path());
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--report", "job.json", "--"]);
    c.arg(mpirun.get_program()).args(mpirun.get_args()).args(app_args());
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = read(&d.path().join("job.json"));
    assert_eq!(r.ranks(), [0, 1, 2, 3], "{:?}", r.processes);
    assert!(r.processes.iter().all(|p| p.size == Some(RANKS) && p.launcher.as_deref() == Some("open-mpi")));
    assert_eq!(findings(&r), expected());
    assert!(o.stderr.contains("xfpx: ranks 0-3 reported (4 processes on 1 host)"), "{}", o.stderr);
    assert!(
        o.stderr.contains("+0x130  FADD R4, R2, R3  nan (f32), first in launch 0, 10 occurrences, on ranks 0-3\n"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("+0x2a0  MUFU.RCP64H R9, R7  div0 (f64), first in launch 0, 2 occurrences, on ranks 1,3"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains(" on rank "), "live finding lines name their rank: {}", o.stderr);
    assert!(!r.run.notes.iter().any(|n| n.contains("without finishing")), "{:?}", r.run.notes);
}

#[test]
fn one_report_per_rank_merges_into_the_same_findings() {
    let Some(mut per_rank) = mpirun() else { return };
    let d = scratch();
    write_rank_events(d.path());
    std::fs::create_dir(d.path().join("out")).expect("mkdir");
    let xfpx_bin = xfpx_tests::xfpx_binary();
    per_rank.current_dir(d.path()).env("XFPX_TOOL_LIBRARY", "none").env_remove("XFPX_CONFIG");
    per_rank.arg(&xfpx_bin).args(["run", "--vendor", "nvidia", "--report", "out/r.%r.json", "--"]).args(app_args());
    let o = run(per_rank);
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    let files: Vec<String> = (0..RANKS).map(|r| format!("out/r.{r}.json")).collect();
    for (rank, f) in files.iter().enumerate() {
        let r = read(&d.path().join(f));
        assert_eq!(r.ranks(), [rank as u32], "{f} holds its own rank only");
    }
    let mut names: Vec<String> = std::fs::read_dir(d.path().join("out"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["r.0.json", "r.1.json", "r.2.json", "r.3.json"], "exactly one file per rank");

    let mut c = xfpx(d.path());
    c.args(["report", "--merge"]).args(&files).args(["-o", "merged.json"]);
    let m = run(c);
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert_eq!(m.stderr.trim(), "xfpx: merged report written to merged.json");
    let merged = read(&d.path().join("merged.json"));
    assert_eq!(findings(&merged), expected());
    assert_eq!(merged.ranks(), [0, 1, 2, 3]);
    assert_eq!(merged.run.exit, ExitStatus::Code { code: 0 });
    let gemm = merged.kernels.iter().find(|k| k.name == "gemm").expect("gemm");
    assert_eq!((gemm.launches, gemm.instrumented_launches), (4, 4));
    assert!(m.stdout.contains("xfpx: ranks 0-3 reported (4 processes on 1 host)"), "{}", m.stdout);
    assert!(m.stdout.contains("merged from 4 reports of ranks 0-3"), "{}", m.stdout);
    assert!(
        m.stdout.contains("+0x80  FMUL R1, R2, R3  inf (f32), first in launch 0, 4 occurrences, on rank 2\n"),
        "{}",
        m.stdout
    );

    // The merged report of one rank per file equals xfpx around mpirun.
    let Some(around) = mpirun() else { return };
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--report", "job.json", "--"]);
    c.arg(around.get_program()).args(around.get_args()).args(app_args());
    assert_eq!(run(c).code, Some(0));
    // Site ids are each process's own: compare all but those.
    let without_ids = |r: Report| {
        let mut kernels = r.kernels;
        kernels.iter_mut().flat_map(|k| &mut k.records).for_each(|x| x.site.id = SiteId(0));
        kernels
    };
    assert_eq!(without_ids(read(&d.path().join("job.json"))), without_ids(merged));
}

#[test]
fn a_run_without_a_launcher_is_unchanged() {
    let d = scratch();
    std::fs::write(d.path().join("events.jsonl"), event_lines(&rank_events(1))).expect("write");
    let app = scripted_app();
    let plain = |flags: &[&str]| {
        let mut c = xfpx_without_library(d.path());
        for v in LAUNCHER_VARS {
            c.env_remove(v);
        }
        c.args(["run", "--vendor", "nvidia"]).args(flags).arg("--").arg(&app);
        c.args(["--events", "events.jsonl", "--finish"]);
        run(c)
    };
    let o = plain(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("rank"), "{}", o.stderr);
    let r = read(&d.path().join("xfpx-report.json"));
    assert_eq!(r.processes.len(), 1);
    assert_eq!((r.processes[0].rank, r.processes[0].launcher.as_deref()), (None, None));
    assert!(r.records().all(|(_, x)| x.ranks.is_empty()));
    let json = std::fs::read_to_string(d.path().join("xfpx-report.json")).expect("read");
    assert!(!json.contains("\"ranks\""), "no ranks field without ranks");

    // %r needs a rank; %p and %% do not.
    let o = plain(&["--report", "r.%r.json"]);
    o.assert_one_line_error(1, "uses %r, but no launcher set a rank");
    let o = plain(&["--report", "r.%p.100%%.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let written: Vec<String> = std::fs::read_dir(d.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("r."))
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(
        written[0].ends_with(".100%.json")
            && written[0][2..].split('.').next().is_some_and(|p| p.parse::<u32>().is_ok())
    );
}

#[test]
fn a_rank_set_by_hand_names_the_report() {
    // What tests/gpu/ranks-check.sh does on a machine without a launcher.
    let d = scratch();
    std::fs::write(d.path().join("events.2.jsonl"), event_lines(&rank_events(2))).expect("write");
    let mut c = xfpx_without_library(d.path());
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.env("OMPI_COMM_WORLD_RANK", "2").env("OMPI_COMM_WORLD_SIZE", "4");
    c.args(["run", "--vendor", "nvidia", "--report", "r.%r.json", "--"]).args(app_args());
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = read(&d.path().join("r.2.json"));
    assert_eq!(r.ranks(), [2]);
    assert!(o.stderr.contains("of 4 ranks, 0-1,3 never reported"), "{}", o.stderr);
}

#[test]
fn merging_refuses_mixed_vendors_and_needs_the_flag_for_several_files() {
    let d = scratch();
    let mut r = Report {
        schema: xfpx_common::report::SCHEMA.into(),
        tool: xfpx_common::report::ToolInfo { name: "xfpx".into(), version: "0".into() },
        run: read_run(),
        kernels: vec![],
        processes: vec![],
        counters: None,
        injection: None,
        flow: None,
    };
    std::fs::write(d.path().join("a.json"), r.to_json()).expect("write");
    r.run.vendor = "amd-emulated".into();
    std::fs::write(d.path().join("b.json"), r.to_json()).expect("write");
    let report = |args: &[&str]| {
        let mut c = xfpx(d.path());
        c.arg("report").args(args);
        run(c)
    };
    report(&["--merge", "a.json", "b.json", "-o", "m.json"]).assert_one_line_error(
        1,
        "cannot merge reports of different vendors: a.json is nvidia, b.json is amd-emulated",
    );
    assert!(!d.path().join("m.json").exists());
    report(&["a.json", "b.json"]).assert_one_line_error(2, "2 reports given: name one, or use --merge");
    report(&["--merge", "a.json", "missing.json"]).assert_one_line_error(1, "missing.json");
    // The same report twice: merged, with a note on stderr.
    let o: Outcome = report(&["--merge", "a.json", "a.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("merged from 2 reports"), "{}", o.stdout);
    assert!(o.stderr.contains("xfpx: warning: 2 of the merged reports name no rank"), "{}", o.stderr);
    // `-o -`: the merged report alone on stdout.
    let o: Outcome = report(&["--merge", "a.json", "a.json", "-o", "-"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let merged = Report::from_json(&o.stdout).expect("stdout is the merged report alone");
    assert!(merged.run.notes.iter().any(|n| n.contains("merged from 2 reports")), "{:?}", merged.run.notes);
}

fn read_run() -> xfpx_common::report::RunInfo {
    xfpx_common::report::RunInfo {
        command: vec!["./app".into()],
        finished_unix: Some(1),
        exit: ExitStatus::Code { code: 0 },
        ..xfpx_common::report::RunInfo::new("nvidia", "d", "fast")
    }
}
