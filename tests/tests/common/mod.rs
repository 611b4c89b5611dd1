//! Running `xfpx` in a scratch directory with a time limit, and reading
//! what it printed.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What one `xfpx` invocation did.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The stderr lines that are not blank.
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| !l.trim().is_empty()).collect()
    }

    /// Asserts the run failed with `code` and exactly one `error: ...` line.
    pub fn assert_one_line_error(&self, code: i32, needle: &str) {
        assert_eq!(self.code, Some(code), "exit code; stderr: {}", self.stderr);
        let lines = self.stderr_lines();
        assert_eq!(lines.len(), 1, "expected one line on stderr, got: {:?}", lines);
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        assert!(lines[0].contains(needle), "`{needle}` not in `{}`", lines[0]);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
    }
}

/// The scripted stand-in program built by this crate.
pub fn scripted_app() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scripted-event-app"))
}

/// A command for `xfpx` in `dir`, with the variables that steer the tool
/// library lookup cleared.
pub fn xfpx(dir: &Path) -> Command {
    let mut c = Command::new(xfpx_tests::xfpx_binary());
    c.current_dir(dir)
        .env_remove("XFPX_TOOL_LIBRARY")
        .env_remove("XFPX_NVBIT_TOOL")
        .env_remove("XFPX_HSA_TOOL")
        .env_remove("XFPX_HSA_RUNTIME")
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("XFPX_CONFIG")
        .stdin(Stdio::null());
    c
}

/// `xfpx` with the test hook that loads no instrumentation library.
pub fn xfpx_without_library(dir: &Path) -> Command {
    let mut c = xfpx(dir);
    c.env("XFPX_TOOL_LIBRARY", "none");
    c
}

/// Longest any single invocation may take.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Run to completion (killing it after [`LIMIT`]) and collect its output.
pub fn run(mut cmd: Command) -> Outcome {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("start xfpx");
    finish(child)
}

/// Wait for a started child with piped stdout and stderr.
pub fn finish(mut child: Child) -> Outcome {
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("xfpx did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        code: status.code(),
        stdout: out_t.join().expect("stdout reader"),
        stderr: err_t.join().expect("stderr reader"),
    }
}

/// Send `sig` to process `pid` (negative: to the process group `-pid`).
/// The only `unsafe` of these tests.
pub fn send_signal(pid: i32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the tests signal only
    // processes they started.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig}): {}", std::io::Error::last_os_error());
}

/// Write, in `dir`, the events of a small run (one kernel, one launch, one
/// NaN) for `scripted-event-app --events`, and return the file's name.
pub fn scratch_app_events(dir: &Path) -> String {
    use xfpx_common::class::FpFormat;
    use xfpx_common::event::Event;
    use xfpx_common::fp::ExceptionKind;
    let events = [
        Event::Device { vendor: "nvidia".into(), device: "Scripted GPU".into(), target: Some("sm_90".into()) },
        Event::Launch { kernel: "k".into(), index: 0, instrumented: true, screened: false, unchecked: None },
        xfpx_tests::finding("k", ExceptionKind::Nan, FpFormat::F32, 1, 0x10, "FADD R1, R2, R3", None, 0, 1),
    ];
    std::fs::write(dir.join("events.jsonl"), xfpx_tests::event_lines(&events)).expect("write events");
    "events.jsonl".into()
}
