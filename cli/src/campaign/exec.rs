//! Running one command of a campaign: in its own process group (so a
//! program's children go with it), in its own working directory, stdout
//! and stderr kept, killed as a group when its time is up or the campaign
//! is stopped.

use crate::signals;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a command did.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Its exit status when it exited.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub seconds: f64,
}

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(20);

/// Run `argv` in `dir` with `env` added, for at most `timeout`; `stop` set
/// by another thread ends it early (then `None`).
pub fn run(
    argv: &[OsString],
    dir: &Path,
    env: &[(String, String)],
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<Option<Finished>> {
    let (program, args) = argv.split_first().context("empty command")?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    signals::die_with_parent(&mut cmd);
    let started = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("cannot start {}", program.to_string_lossy()))?;
    let pgid = child.id();
    // Readers on their own threads, so a full pipe never stalls the program.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        let stopped = stop.load(Ordering::Relaxed);
        if stopped || started.elapsed() >= timeout {
            timed_out = !stopped;
            let _ = signals::send_group(pgid, libc::SIGKILL);
            let s = child.wait()?;
            if stopped {
                return Ok(None);
            }
            break s;
        }
        std::thread::sleep(POLL);
    };
    let seconds = started.elapsed().as_secs_f64();
    // What the program left behind in its group (daemons, grandchildren) goes too.
    let _ = signals::send_group(pgid, libc::SIGKILL);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Some(Finished { code: status.code(), signal: status.signal(), timed_out, stdout, stderr, seconds }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Finished {
        let dir = tempfile::tempdir().expect("dir");
        let argv: Vec<OsString> = ["sh", "-c", script].map(OsString::from).to_vec();
        run(&argv, dir.path(), &[("X".into(), "y".into())], timeout, &AtomicBool::new(false))
            .expect("runs")
            .expect("not stopped")
    }

    #[test]
    fn outputs_status_signal_and_timeout() {
        let f = sh("echo out; echo err >&2; echo $X; exit 3", Duration::from_secs(20));
        assert_eq!((f.code, f.signal, f.timed_out), (Some(3), None, false));
        assert_eq!(f.stdout, b"out\ny\n");
        assert_eq!(f.stderr, b"err\n");
        let f = sh("kill -SEGV $$", Duration::from_secs(20));
        assert_eq!((f.code, f.signal), (None, Some(libc::SIGSEGV)));
        // a hang whose child holds the pipe open: the whole group is killed
        let t = Instant::now();
        let f = sh("sleep 30 & sleep 30", Duration::from_millis(300));
        assert!(f.timed_out);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}
