//! What a user names is never harmed, a run that checked nothing never
//! passes, and no input is read without end: end to end, without a GPU
//! (`xfpx run` under the test hook with the scripted program, `report`,
//! `dump`, `replay` and `demo` on files made here).

mod common;

use common::{run, scratch_app_events, scripted_app, xfpx, xfpx_without_library, Outcome};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use xfpx_common::report::Report;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

/// `xfpx run --vendor nvidia FLAGS -- scripted-event-app --events E --finish` in `dir`.
fn run_scripted(dir: &Path, flags: &[&str]) -> Outcome {
    let events = scratch_app_events(dir);
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia"]).args(flags).arg("--").arg(scripted_app());
    c.args(["--events", &events, "--finish"]);
    run(c)
}

fn report_at(path: &Path) -> Report {
    Report::from_json(&std::fs::read_to_string(path).expect("report")).expect("valid report")
}

#[test]
fn a_symlink_given_as_report_is_written_through() {
    let d = scratch();
    let target = d.path().join("real.json");
    std::fs::write(&target, "old").expect("write");
    std::os::unix::fs::symlink("real.json", d.path().join("link.json")).expect("symlink");
    let o = run_scripted(d.path(), &["--report", "link.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let meta = std::fs::symlink_metadata(d.path().join("link.json")).expect("stat");
    assert!(meta.file_type().is_symlink(), "the link was replaced by a {:?}", meta.file_type());
    assert_eq!(report_at(&target).records().count(), 1);
    let leftovers: Vec<_> = std::fs::read_dir(d.path()).expect("list").flatten().map(|e| e.file_name()).collect();
    assert!(!leftovers.iter().any(|n| n.to_string_lossy().contains("tmp")), "{leftovers:?}");
}

#[test]
fn a_fifo_given_as_report_receives_it_and_stays_a_fifo() {
    let d = scratch();
    let fifo = d.path().join("report.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    // The reader is left behind if the FIFO is replaced (it would wait forever).
    let reader_path = fifo.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read_to_string(&reader_path));
    });
    let o = run_scripted(d.path(), &["--report", "report.fifo"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let kind = std::fs::symlink_metadata(&fifo).expect("stat").file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by a {kind:?}");
    let text = rx.recv_timeout(Duration::from_secs(20)).expect("the reader got the report").expect("read");
    assert_eq!(Report::from_json(&text).expect("valid report").records().count(), 1);
}

#[test]
fn a_device_node_given_as_report_survives() {
    let d = scratch();
    let node = d.path().join("null");
    // A character device equal to /dev/null (1, 3), made here: only root may.
    let made = std::process::Command::new("mknod").arg(&node).args(["c", "1", "3"]).stderr(Stdio::null()).status();
    if !made.is_ok_and(|s| s.success()) || std::fs::OpenOptions::new().write(true).open(&node).is_err() {
        eprintln!("SKIPPED a_device_node_given_as_report_survives: cannot make a usable device node here (not root, or a nodev mount)");
        return;
    }
    let o = run_scripted(d.path(), &["--report", "null"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let kind = std::fs::symlink_metadata(&node).expect("stat").file_type();
    assert!(kind.is_char_device(), "the device node was replaced by a {kind:?}");
    assert!(o.stderr.contains("report written to"), "{}", o.stderr);
}

#[test]
fn refused_destinations_stop_before_the_program_runs() {
    let d = scratch();
    std::fs::create_dir(d.path().join("folder")).expect("mkdir");
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--report", "folder", "--", "touch", "ran"]);
    run(c).assert_one_line_error(1, "is a directory");
    assert!(!d.path().join("ran").exists());
}

#[test]
fn report_dash_is_json_on_stdout_and_no_file() {
    let d = scratch();
    let o = run_scripted(d.path(), &["--report", "-"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let r = Report::from_json(&o.stdout).expect("the report, alone, on stdout");
    assert_eq!(r.records().count(), 1);
    assert!(!d.path().join("-").exists(), "a file named - was created");
    assert!(o.stderr.contains("xfpx: 1 finding"), "the summary stays on stderr: {}", o.stderr);

    let o = run_scripted(d.path(), &["--no-report"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!d.path().join("xfpx-report.json").exists());
    let names: Vec<_> = std::fs::read_dir(d.path()).expect("list").flatten().map(|e| e.file_name()).collect();
    assert_eq!(names.len(), 1, "only the events file: {names:?}");

    let mut c = xfpx(d.path());
    c.args(["demo", "--report", "-"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(Report::from_json(&o.stdout).expect("demo report on stdout").kernels.len(), 3);
    assert!(!d.path().join("-").exists());
}

#[test]
fn a_library_that_never_attaches_fails_the_gate() {
    let d = scratch();
    // The program never connects: as when a launcher drops the preload.
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--fail-on", "nan", "--report", "r.json", "--"]);
    c.arg(scripted_app()).args(["--connections", "0"]);
    let o = run(c);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(o.stderr.contains("xfpx: nothing was checked: the instrumentation library never attached"), "{}", o.stderr);
    let r = report_at(&d.path().join("r.json"));
    assert!(!r.run.attached);

    // Without --fail-on the program's status stands, and the headline still says so.
    let mut c = xfpx_without_library(d.path());
    c.args(["run", "--vendor", "nvidia", "--report", "r.json", "--"]).arg(scripted_app());
    c.args(["--connections", "1", "--no-hello", "--exit", "0"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("nothing was checked"), "{}", o.stderr);
    assert!(o.stderr.contains("sent no hello"), "{}", o.stderr);

    // The saved report fails `xfpx report --fail-on` too.
    let mut c = xfpx(d.path());
    c.args(["report", "r.json", "--fail-on", "all"]);
    let o = run(c);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(o.stdout.starts_with("xfpx: nothing was checked"), "{}", o.stdout);
}

#[test]
fn report_fail_on_gates_a_saved_report() {
    let d = scratch();
    let o = run_scripted(d.path(), &["--report", "r.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let gate = |kinds: &str| {
        let mut c = xfpx(d.path());
        c.args(["report", "r.json", "--fail-on", kinds]);
        run(c)
    };
    assert_eq!(gate("nan").code, Some(3));
    assert_eq!(gate("inf,div0").code, Some(0));
    gate("bogus").assert_one_line_error(1, "unknown exception kind `bogus`");
}

/// Run `xfpx` with stdout on `/dev/full`.
fn to_dev_full(dir: &Path, args: &[&str]) -> Outcome {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("open /dev/full");
    let mut c = xfpx(dir);
    c.args(args);
    c.stdout(full).stderr(Stdio::piped());
    let child = c.spawn().expect("start xfpx");
    let out = child.wait_with_output().expect("wait");
    Outcome { code: out.status.code(), stdout: String::new(), stderr: String::from_utf8_lossy(&out.stderr).into() }
}

#[test]
fn a_full_stdout_is_an_error() {
    let d = scratch();
    let o = run_scripted(d.path(), &["--report", "r.json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for args in [&["report", "--format", "json", "r.json"][..], &["report", "r.json"], &["demo"]] {
        to_dev_full(d.path(), args).assert_one_line_error(1, "cannot write to standard output");
    }
}

/// A 6 GB file that takes no space.
fn huge_sparse_file(dir: &Path) -> PathBuf {
    let p = dir.join("huge.bin");
    let f = std::fs::File::create(&p).expect("create");
    f.set_len(6_000_000_000).expect("set_len");
    p
}

/// `xfpx ARGS` must fail within a few seconds with one line naming a limit.
fn ends_quickly_naming_a_limit(dir: &Path, args: &[&str]) {
    let start = Instant::now();
    let mut c = xfpx(dir);
    c.args(args);
    let o = run(c);
    let took = start.elapsed();
    o.assert_one_line_error(1, "the limit for");
    assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
}

#[test]
fn huge_inputs_and_endless_devices_end_quickly() {
    let d = scratch();
    let huge = huge_sparse_file(d.path());
    let huge = huge.to_str().expect("utf-8 path");
    for input in [huge, "/dev/zero"] {
        ends_quickly_naming_a_limit(d.path(), &["report", input]);
        ends_quickly_naming_a_limit(d.path(), &["dump", "--vendor", "amd", input]);
        ends_quickly_naming_a_limit(d.path(), &["dump", "--vendor", "nvidia", input]);
        ends_quickly_naming_a_limit(d.path(), &["replay", input]);
    }
    // A code object given to replay, from a launch that is fine.
    let launch = fixture_launch("div_special.json");
    let launch = launch.to_str().expect("utf-8 path");
    for input in [huge, "/dev/zero"] {
        ends_quickly_naming_a_limit(d.path(), &["replay", "--target", "gfx942", "--code-object", input, launch]);
        ends_quickly_naming_a_limit(
            d.path(),
            &["replay", "--mode", "detect", "--target", "gfx942", "--code-object", input, launch],
        );
    }
}

fn fixture_launch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/emulator/fixtures/launches").join(name)
}

/// A fixture launch with its paths made absolute (to be edited and written elsewhere).
fn absolute_fixture_launch(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture_launch(name)).expect("fixture");
    let mut launch: serde_json::Value = serde_json::from_str(&text).expect("json");
    let dir = fixture_launch("");
    let code = launch["code_object"].as_str().expect("code object").to_string();
    launch["code_object"] = dir.join(code).to_string_lossy().into_owned().into();
    if let Some(buffers) = launch["buffers"].as_object_mut() {
        for b in buffers.values_mut() {
            if let Some(f) = b["init"]["file"].as_str() {
                b["init"]["file"] = dir.join(f).to_string_lossy().into_owned().into();
            }
        }
    }
    launch
}

#[test]
fn replay_refuses_launches_beyond_the_wave_limit() {
    let d = scratch();
    let mut launch = absolute_fixture_launch("div_special.json");
    launch["grid"] = serde_json::json!([4_000_000, 1, 1]);
    std::fs::write(d.path().join("big.json"), launch.to_string()).expect("write");
    for mode in [&[][..], &["--mode", "detect"]] {
        let start = Instant::now();
        let mut c = xfpx(d.path());
        c.args(["replay", "--target", "gfx942", "big.json"]).args(mode);
        let o = run(c);
        o.assert_one_line_error(1, "more than the limit of 262144 (raise it with --max-waves N or XFPX_MAX_WAVES=N)");
        assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    }
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "big.json"]).env("XFPX_MAX_WAVES", "10");
    run(c).assert_one_line_error(1, "more than the limit of 10");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx942", "--max-waves", "0", "big.json"]);
    run(c).assert_one_line_error(1, "invalid --max-waves 0");
}

/// A launch whose last work-items read past a buffer: a one-line fault,
/// unless `--guard-bytes` lets such loads read zeros (noted in the report).
#[test]
fn replay_reads_past_a_buffer_only_with_guard_bytes() {
    let d = scratch();
    let mut launch = absolute_fixture_launch("saxpy.json");
    launch["buffers"]["x"] = serde_json::json!({"elem": "f32", "count": 996, "init": "zero"});
    std::fs::write(d.path().join("short.json"), launch.to_string()).expect("write");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx90a", "--no-report", "short.json"]);
    run(c).assert_one_line_error(1, "memory fault");
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx90a", "--guard-bytes", "16", "--report", "r.json", "short.json"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let report = report_at(&d.path().join("r.json"));
    assert!(
        report.run.notes.iter().any(|n| n == "guard zone of 16 bytes around buffers: 4 lane loads read zeros from it"),
        "{:?}",
        report.run.notes
    );
    let mut c = xfpx(d.path());
    c.args(["replay", "--target", "gfx90a", "--guard-bytes", "0", "short.json"]);
    assert_eq!(run(c).code, Some(2), "--guard-bytes 0 is refused by the argument parser");
}
