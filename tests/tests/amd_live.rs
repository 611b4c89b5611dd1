//! `xfpx run --vendor amd --emulate` end to end: the HSA programs of the
//! emulated runtime (`backend-amd/hsa-runtime/programs`), built by gcc
//! against ROCm 5.2's headers, run plain and under xfpx, whose tool
//! library the runtime loads through `HSA_TOOLS_LIB`. Outputs (each
//! program checks its own against the host's) must be unchanged, the
//! findings exactly the known ones (kernel, kind, format, source line),
//! and the emulator must see no memory hazard in any instrumented kernel.
//! Then the flags as on NVIDIA (`--sample`, `--kernels`, `--fail-on`,
//! `--report`), a program that crashes or is killed, and bad input.

mod common;

use common::{run, xfpx, Outcome};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xfpx_common::report::{KernelStatus, Report};

/// The programs of the emulated runtime, with `fpe_repeat` of these tests.
const PROGRAMS: [&str; 5] = ["vector_add", "reduce", "multi", "fpe", "unrewritable"];

struct Setup {
    _dir: tempfile::TempDir,
    /// The built programs, and the runtime under its SONAME for plain runs.
    bin: PathBuf,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn programs_dir() -> PathBuf {
    workspace().join("backend-amd/hsa-runtime/programs")
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let built = xfpx_tests::amd_live_built();
        let dir = tempfile::tempdir().expect("tmp");
        let bin = dir.path().to_path_buf();
        std::fs::copy(built.join("libhsa_runtime64.so"), bin.join("libhsa-runtime64.so.1")).expect("copy runtime");
        std::os::unix::fs::symlink("libhsa-runtime64.so.1", bin.join("libhsa-runtime64.so")).expect("link");
        let src = programs_dir().join("src");
        let sources = PROGRAMS.iter().map(|p| (p.to_string(), src.join(format!("{p}.c")))).chain([
            ("fpe_repeat".to_string(), workspace().join("tests/amd-live/fpe_repeat.c")),
            ("api_checks".to_string(), workspace().join("backend-amd/hsa-runtime/tests/c/api_checks.c")),
        ]);
        for (name, source) in sources {
            let out = Command::new("gcc")
                .args(["-std=c11", "-O1", "-Wall", "-Werror", "-I/usr/include/hsa"])
                .arg(format!("-I{}", src.display()))
                .arg(&source)
                .arg("-o")
                .arg(bin.join(&name))
                .arg(format!("-L{}", bin.display()))
                .args(["-lhsa-runtime64", "-lm"])
                .output()
                .expect("gcc (install gcc and libhsa-runtime-dev)");
            assert!(out.status.success(), "gcc {name}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Setup { _dir: dir, bin }
    })
}

/// The program run plain on the emulated runtime.
fn plain(program: &str, args: &[&str]) -> std::process::Output {
    let s = setup();
    Command::new(s.bin.join(program))
        .args(args)
        .env("LD_LIBRARY_PATH", &s.bin)
        .env_remove("HSA_TOOLS_LIB")
        .output()
        .expect("runs")
}

/// `xfpx run --vendor amd --emulate FLAGS -- PROGRAM ARGS` in `dir`, its
/// report in `dir/r.json`.
fn under_xfpx(dir: &Path, flags: &[&str], program: &str, args: &[&str]) -> Outcome {
    let s = setup();
    let mut c = xfpx(dir);
    c.args(["run", "--vendor", "amd", "--emulate", "--report", "r.json"]).args(flags).arg("--");
    c.arg(s.bin.join(program)).args(args);
    run(c)
}

fn report(dir: &Path) -> Report {
    Report::from_json(&std::fs::read_to_string(dir.join("r.json")).expect("the report was written")).expect("reads")
}

/// (kernel, kind, format, source file, line) of every finding.
type Finding = (String, String, String, String, u32);

fn findings(r: &Report) -> BTreeSet<Finding> {
    r.records()
        .map(|(k, rec)| {
            let loc = rec.site.location.as_ref().expect("every finding has its source line");
            let file = Path::new(&loc.file).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            (k.to_string(), rec.kind.name().to_string(), rec.format.name().to_string(), file, loc.line)
        })
        .collect()
}

/// The findings `programs/kernels/fpe.expect.json` names.
fn fpe_expected() -> BTreeSet<Finding> {
    let text = std::fs::read_to_string(programs_dir().join("kernels/fpe.expect.json")).expect("expect file");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let source = v["source"].as_str().expect("source").to_string();
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().expect(k).to_string();
            (s("kernel"), s("kind"), s("format"), source.clone(), f["line"].as_u64().expect("line") as u32)
        })
        .collect()
}

fn no_hazards(o: &Outcome) {
    assert!(!o.stderr.contains("memory hazard"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

#[test]
fn every_program_runs_unchanged_with_exactly_the_known_findings() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    for program in PROGRAMS {
        let before = plain(program, &[pdir]);
        assert!(before.status.success(), "{program} plain: {}", String::from_utf8_lossy(&before.stderr));
        let o = under_xfpx(dir.path(), &["--sample", "1"], program, &[pdir]);
        assert_eq!(o.code, Some(0), "{program}: {}", o.stderr);
        assert_eq!(o.stdout, String::from_utf8_lossy(&before.stdout), "{program}: its output changed");
        no_hazards(&o);
        let r = report(dir.path());
        assert_eq!(r.run.vendor, "amd-emulated");
        assert_eq!(r.run.target.as_deref(), Some("gfx942"));
        let expected = if program == "fpe" { fpe_expected() } else { BTreeSet::new() };
        assert_eq!(findings(&r), expected, "{program}");
        for k in &r.kernels {
            if program == "unrewritable" {
                assert!(matches!(k.status, KernelStatus::Skipped { .. }), "{program}/{}: {:?}", k.name, k.status);
                assert_eq!((k.launches, k.instrumented_launches), (1, 0), "{program}/{}: runs unmodified", k.name);
            } else {
                assert_eq!(k.launches, k.instrumented_launches, "{program}/{}: --sample 1", k.name);
                assert_eq!(k.status, KernelStatus::Instrumented, "{program}/{}", k.name);
                assert!(k.coverage.is_some(), "{program}/{}", k.name);
            }
        }
        if program == "unrewritable" {
            assert!(o.stderr.contains("nothing was checked"), "{}", o.stderr);
        }
        let kernels = r.kernels.len();
        let want = match program {
            "multi" => 4,
            "fpe" => 3,
            _ => 1,
        };
        assert_eq!(kernels, want, "{program}: kernels seen");
    }
}

#[test]
fn the_runtimes_api_answers_the_same_under_xfpx() {
    // bad calls' statuses, refused and damaged code objects, the deprecated
    // path, symbols, signals: the emulated runtime's own API checks
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    let before = plain("api_checks", &[pdir]);
    assert!(before.status.success(), "{}", String::from_utf8_lossy(&before.stderr));
    let o = under_xfpx(dir.path(), &[], "api_checks", &[pdir]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, String::from_utf8_lossy(&before.stdout));
    no_hazards(&o);
    // calls the runtime refuses are the program's business: xfpx adds no note
    for quiet in ["interception queue", "cannot be read"] {
        assert!(!o.stderr.contains(quiet), "{}", o.stderr);
    }
}

#[test]
fn another_target_finds_the_same_and_rewrites_are_kept() {
    let dir = tempfile::tempdir().expect("tmp");
    let cache = dir.path().join("cache");
    let pdir = programs_dir();
    let s = setup();
    let mut modified = Vec::new();
    for _ in 0..2 {
        let mut c = xfpx(dir.path());
        c.env("XFPX_AMD_REWRITE_CACHE", &cache);
        c.args(["run", "--vendor", "amd", "--emulate", "--target", "gfx90a", "--report", "r.json", "--"]);
        c.arg(s.bin.join("fpe")).arg(&pdir);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        no_hazards(&o);
        let r = report(dir.path());
        assert_eq!(r.run.target.as_deref(), Some("gfx90a"));
        assert_eq!(findings(&r), fpe_expected());
        // one rewrite per kernel, made by the first run, read by the second
        let mut files: Vec<_> = std::fs::read_dir(&cache)
            .expect("the cache folder")
            .map(|f| {
                let f = f.expect("entry");
                (f.file_name(), f.metadata().and_then(|m| m.modified()).expect("mtime"))
            })
            .collect();
        files.sort();
        assert_eq!(files.len(), 3, "{files:?}");
        modified.push(files);
    }
    assert_eq!(modified[0], modified[1], "the second run rewrote nothing");
}

#[test]
fn kernels_fail_on_and_report_behave_as_on_nvidia() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    // --kernels: the others are excluded, their launches run as they are
    let o = under_xfpx(dir.path(), &["--kernels", "^fpe_nan$"], "fpe", &[pdir]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = report(dir.path());
    assert_eq!(findings(&r).into_iter().map(|f| f.1).collect::<Vec<_>>(), ["nan"]);
    for k in r.kernels.iter().filter(|k| k.name != "fpe_nan") {
        assert_eq!((&k.status, k.instrumented_launches), (&KernelStatus::Excluded, 0), "{}", k.name);
    }
    // --fail-on: 3 on a finding of those kinds, the program's status otherwise, 4 when nothing was checked
    for (flags, program, code) in [
        (&["--fail-on", "nan"][..], "fpe", 3),
        (&["--fail-on", "div0"], "fpe", 3),
        (&["--fail-on", "sub"], "fpe", 0),
        (&["--fail-on", "all"], "vector_add", 0),
        (&["--fail-on", "nan"], "unrewritable", 4),
        (&["--fail-on", "coverage"], "unrewritable", 3),
    ] {
        let o = under_xfpx(dir.path(), flags, program, &[pdir]);
        assert_eq!(o.code, Some(code), "{flags:?} {program}: {}", o.stderr);
    }
    // --mode screen: each kernel's sticky exception bits, in notes
    let o = under_xfpx(dir.path(), &["--mode", "screen"], "fpe", &[pdir]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    no_hazards(&o);
    let r = report(dir.path());
    assert_eq!(r.run.mode, "screen");
    for (kernel, kind) in [("fpe_nan", "nan"), ("fpe_overflow", "inf"), ("fpe_div0", "div0")] {
        let said = r
            .run
            .notes
            .iter()
            .any(|n| n.starts_with(&format!("{kernel}: waves ended")) && n.contains(&format!("kinds {kind}")));
        assert!(said, "{kernel}: {:?}", r.run.notes);
    }
    // --report -: the report alone on stdout, the program's output on stderr
    let s = setup();
    let mut c = xfpx(dir.path());
    c.args(["run", "--vendor", "amd", "--emulate", "--report", "-", "--"]).arg(s.bin.join("fpe")).arg(pdir);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = Report::from_json(&o.stdout).expect("stdout is the report");
    assert_eq!(findings(&r), fpe_expected());
    assert!(o.stderr.contains("fpe: NaN, overflow and division by zero where planted"), "{}", o.stderr);
}

#[test]
fn sampling_chooses_the_launches_as_on_nvidia() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    // launches 0-3 and 7 of 9 (auto, the default); every third; every one
    for (flags, instrumented) in [(&[][..], 5), (&["--sample", "3"], 3), (&["--sample", "1"], 9)] {
        let o = under_xfpx(dir.path(), flags, "fpe_repeat", &[pdir, "9", "exit"]);
        assert_eq!(o.code, Some(0), "{flags:?}: {}", o.stderr);
        assert!(o.stdout.contains("every result equals the host's"), "{}", o.stdout);
        no_hazards(&o);
        let r = report(dir.path());
        let k = r.kernels.iter().find(|k| k.name == "fpe_nan").expect("fpe_nan");
        assert_eq!((k.launches, k.instrumented_launches), (9, instrumented), "{flags:?}");
        let nan = k.records.iter().find(|x| x.kind.name() == "nan").expect("the NaN");
        // one wave of the 4 raises it in each instrumented launch, read when that launch completed
        assert_eq!((nan.first_launch, nan.occurrences), (0, instrumented), "{flags:?}");
        assert!(!nan.first_launch_unknown, "{flags:?}");
    }
}

#[test]
fn a_crash_or_a_kill_still_writes_the_report() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    for (how, signal) in [("abort", libc::SIGABRT), ("kill", libc::SIGKILL)] {
        let o = under_xfpx(dir.path(), &["--sample", "1"], "fpe_repeat", &[pdir, "2", how]);
        assert_eq!(o.code, Some(128 + signal), "{how}: {}", o.stderr);
        let r = report(dir.path());
        let k = r.kernels.iter().find(|k| k.name == "fpe_nan").expect("fpe_nan");
        assert_eq!(k.instrumented_launches, 2, "{how}");
        assert!(k.records.iter().any(|x| x.kind.name() == "nan"), "{how}: the finding before the end is kept");
        assert!(r.run.notes.iter().any(|n| n.contains("ended without finishing (crashed or killed)")), "{how}");
    }
}

#[test]
fn chains_with_a_tool_already_in_hsa_tools_lib() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    // the emulated runtime's test tool: counts the packets it intercepts on
    // every queue the program makes, says the counts at OnUnload
    let tool = dir.path().join("libcount.so");
    let source = workspace().join("backend-amd/hsa-runtime/tests/tools/count_dispatches.cpp");
    let built = Command::new("g++")
        .args(["-std=c++17", "-shared", "-fPIC", "-DAMD_INTERNAL_BUILD", "-I/usr/include/hsa", "-DTOOL_NAME=\"count\""])
        .arg(&source)
        .arg("-o")
        .arg(&tool)
        .output()
        .expect("g++");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let s = setup();
    let mut c = xfpx(dir.path());
    c.env("HSA_TOOLS_LIB", &tool).args(["run", "--vendor", "amd", "--emulate", "--report", "r.json", "--"]);
    c.arg(s.bin.join("fpe")).arg(pdir);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    no_hazards(&o);
    assert!(o.stderr.contains("tool count: OnUnload queues=1 dispatches=3 barriers=0"), "{}", o.stderr);
    assert_eq!(findings(&report(dir.path())), fpe_expected());
}

#[test]
fn bad_chains_cost_one_line_and_the_program_runs() {
    let dir = tempfile::tempdir().expect("tmp");
    let pdir = programs_dir();
    let pdir = pdir.to_str().expect("utf-8");
    let before = plain("fpe", &[pdir]);
    // a chained tool that is not there: xfpx says so (the runtime may too), the run goes on
    let missing = dir.path().join("gone/libtracer.so");
    let s = setup();
    let mut c = xfpx(dir.path());
    c.env("HSA_TOOLS_LIB", &missing).args(["run", "--vendor", "amd", "--emulate", "--report", "r.json", "--"]);
    c.arg(s.bin.join("fpe")).arg(pdir);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, String::from_utf8_lossy(&before.stdout));
    let said: Vec<&str> =
        o.stderr.lines().filter(|l| l.starts_with("xfpx: warning:") && l.contains("gone/libtracer.so")).collect();
    assert_eq!(said.len(), 1, "{}", o.stderr);
    assert_eq!(findings(&report(dir.path())), fpe_expected());
    // a chained file that is no library: the runtime's own line, the run goes on
    let junk = dir.path().join("libjunk.so");
    std::fs::write(&junk, b"not a library").expect("write");
    let mut c = xfpx(dir.path());
    c.env("HSA_TOOLS_LIB", &junk).args(["run", "--vendor", "amd", "--emulate", "--report", "r.json", "--"]);
    c.arg(s.bin.join("fpe")).arg(pdir);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(findings(&report(dir.path())), fpe_expected());
    // xfpx's own tool already named: loaded once
    let tool = xfpx_tests::amd_live_built().join("libxfpx_hsa.so");
    let mut c = xfpx(dir.path());
    c.env("HSA_TOOLS_LIB", &tool).args(["run", "--vendor", "amd", "--emulate", "--report", "r.json", "--"]);
    c.arg(s.bin.join("fpe")).arg(pdir);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("loaded twice"), "{}", o.stderr);
    assert_eq!(findings(&report(dir.path())), fpe_expected());
    // a target the emulator does not run: one line, nothing started
    let mut c = xfpx(dir.path());
    c.args(["run", "--vendor", "amd", "--emulate", "--target", "gfx1100", "--"]).arg(s.bin.join("fpe")).arg(pdir);
    run(c).assert_one_line_error(1, "--target gfx1100 is not a target the emulator runs");
    // no emulated runtime where it is looked for: one line
    let mut c = xfpx(dir.path());
    c.env("XFPX_HSA_RUNTIME", dir.path().join("none.so"));
    c.args(["run", "--vendor", "amd", "--emulate", "--"]).arg(s.bin.join("fpe")).arg(pdir);
    run(c).assert_one_line_error(1, "XFPX_HSA_RUNTIME names");
}
