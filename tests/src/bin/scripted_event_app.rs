//! A stand-in for an instrumented program, for testing the CLI's event
//! protocol and report writing without a GPU: it reads the run
//! configuration that `xfpx run` hands over, connects to the event socket
//! and sends a scripted list of events, then ends the way it is told.
//! It exercises the CLI only; no GPU code and no backend are involved.
//!
//! ```text
//! scripted-event-app [--events FILE] [--connections N] [--finish]
//!                    [--child-events FILE] [--pause-ms MS] [--wait-for-signal]
//!                    [--exit CODE | --raise SIGNAL] [--save-config FILE] [--say TEXT]
//!                    [--leave-behind SECS,EVERY_MS] [--no-hello] [--capture-part]
//! ```
//! `--capture-part`: when the configuration asks for a capture, write this
//! process's part of it (one launch listed), as the tool library does.
//! Each connection first says hello, as the instrumentation library does
//! (`--no-hello`: it does not; `--connections 0`: the library never attached).
//! `FILE` holds one event (JSON) per line, sent as bytes round-robin over the N
//! connections. `--child-events` starts a copy of this program (a second
//! process with its own connection) sending that file, and waits for it.
//! `--wait-for-signal` prints `waiting` on stdout and sleeps (up to 20
//! seconds) so a test can signal `xfpx`. `--raise` accepts SEGV, ABRT, KILL.
//! `--save-config` copies the configuration it was given into FILE;
//! `--say TEXT` prints TEXT on stdout first. `--leave-behind SECS,EVERY_MS`
//! starts a copy that outlives this process, holding its own connection for
//! SECS seconds and sending a note every EVERY_MS (0: once). The hello
//! names the process (id, host, the launcher's rank); `{rank}` in
//! `--events` is replaced by that rank, so each process of an MPI job
//! sends its own.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use xfpx_common::config::RunConfig;
use xfpx_common::event::Event;

#[derive(Debug, Default)]
struct Script {
    events: Option<String>,
    connections: usize,
    finish: bool,
    child_events: Option<String>,
    pause_ms: u64,
    wait_for_signal: bool,
    exit: u8,
    raise: Option<i32>,
    save_config: Option<String>,
    say: Option<String>,
    leave_behind: Option<(u64, u64)>,
    hold_open: Option<(u64, u64)>,
    no_hello: bool,
    capture_part: bool,
}

fn parse(args: &[String]) -> Result<Script, String> {
    let mut s = Script { connections: 1, ..Script::default() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--events" => s.events = Some(value()?),
            "--connections" => s.connections = value()?.parse().map_err(|e| format!("--connections: {e}"))?,
            "--finish" => s.finish = true,
            "--no-hello" => s.no_hello = true,
            "--capture-part" => s.capture_part = true,
            "--child-events" => s.child_events = Some(value()?),
            "--pause-ms" => s.pause_ms = value()?.parse().map_err(|e| format!("--pause-ms: {e}"))?,
            "--wait-for-signal" => s.wait_for_signal = true,
            "--exit" => s.exit = value()?.parse().map_err(|e| format!("--exit: {e}"))?,
            "--raise" => {
                s.raise = Some(match value()?.as_str() {
                    "SEGV" => libc::SIGSEGV,
                    "ABRT" => libc::SIGABRT,
                    "KILL" => libc::SIGKILL,
                    other => return Err(format!("unknown signal {other}")),
                })
            }
            "--save-config" => s.save_config = Some(value()?),
            "--say" => s.say = Some(value()?),
            "--leave-behind" | "--hold-open" => {
                let v = value()?;
                let (secs, every) = v.split_once(',').ok_or(format!("{a} takes SECS,EVERY_MS"))?;
                let pair =
                    (secs.parse().map_err(|e| format!("{a}: {e}"))?, every.parse().map_err(|e| format!("{a}: {e}"))?);
                if a == "--leave-behind" {
                    s.leave_behind = Some(pair);
                } else {
                    s.hold_open = Some(pair);
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(s)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match script(&args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("scripted-event-app: {e}");
            ExitCode::from(90)
        }
    }
}

fn script(args: &[String]) -> Result<u8, String> {
    let s = parse(args)?;
    if let Some(text) = &s.say {
        println!("{text}");
    }
    let path = std::env::var_os(xfpx_common::config::CONFIG_ENV).ok_or("XFPX_CONFIG is not set")?;
    let config = RunConfig::load(std::path::Path::new(&path)).map_err(|e| e.to_string())?;
    if let Some(path) = &s.save_config {
        std::fs::write(path, config.to_json()).map_err(|e| format!("{path}: {e}"))?;
    }
    if let (true, Some(c)) = (s.capture_part, &config.capture) {
        let launch = xfpx_common::capture::CapturedLaunch {
            dir: "0001-k".into(),
            kernel: "k".into(),
            demangled: None,
            launch: 0,
            pid: std::process::id(),
            bytes: 4096,
            complete: true,
            problem: None,
        };
        let part = xfpx_common::capture::ProcessPart {
            pid: std::process::id(),
            launches: vec![launch],
            not_captured: vec!["2 launches of k not captured: over --capture-max-launches (1)".into()],
            ..Default::default()
        };
        part.write(&c.dir).map_err(|e| e.to_string())?;
    }
    let socket = config.events_socket.clone().ok_or("the configuration names no event socket")?;
    let mut conns = (0..s.connections)
        .map(|_| UnixStream::connect(&socket).map_err(|e| format!("connect {}: {e}", socket.display())))
        .collect::<Result<Vec<_>, _>>()?;
    let me = xfpx_common::launcher::this_process();
    if !s.no_hello {
        let hello =
            Event::Hello { tool: "scripted-event-app".into(), version: "0".into(), process: me.clone() }.to_line();
        for c in &mut conns {
            c.write_all(hello.as_bytes()).map_err(|e| e.to_string())?;
        }
    }
    if let Some(path) = &s.events {
        let path = &match me.rank {
            Some(rank) => path.replace("{rank}", &rank.to_string()),
            None if path.contains("{rank}") => return Err(format!("{path}: no launcher rank for {{rank}}")),
            None => path.clone(),
        };
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace));
        for (i, line) in lines.enumerate() {
            let n = conns.len();
            let conn = &mut conns[i % n];
            // Lines are sent as written, malformed ones included.
            conn.write_all(line).and_then(|()| conn.write_all(b"\n")).map_err(|e| e.to_string())?;
            if s.pause_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(s.pause_ms));
            }
        }
    }
    if let Some((secs, every)) = s.hold_open {
        // A process left behind: keep the connection and send a note every
        // EVERY_MS (0: once) for SECS seconds.
        let start = std::time::Instant::now();
        let mut sent = false;
        while start.elapsed() < std::time::Duration::from_secs(secs) {
            if !sent || every > 0 {
                let note = Event::Note { text: "left behind".into() }.to_line();
                if conns[0].write_all(note.as_bytes()).is_err() {
                    break;
                }
                if !sent {
                    // Tell the parent it may exit now.
                    println!("connected");
                    let _ = std::io::stdout().flush();
                }
                sent = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(if every > 0 { every } else { 100 }));
        }
        return Ok(0);
    }
    if let Some((secs, every)) = s.leave_behind {
        let me = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut holder = std::process::Command::new(me)
            .args(["--hold-open", &format!("{secs},{every}")])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        // Wait until it has connected and sent its first note.
        let out = holder.stdout.take().ok_or("no pipe to the process left behind")?;
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).map_err(|e| e.to_string())?;
        if line.trim() != "connected" {
            return Err(format!("the process left behind said {line:?}"));
        }
    }
    if let Some(child_events) = &s.child_events {
        let me = std::env::current_exe().map_err(|e| e.to_string())?;
        let status = std::process::Command::new(me)
            .args(["--events", child_events, "--finish"])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("child failed: {status}"));
        }
    }
    if s.finish {
        for c in &mut conns {
            c.write_all(Event::Finished.to_line().as_bytes()).map_err(|e| e.to_string())?;
        }
    }
    if s.wait_for_signal {
        println!("waiting");
        let _ = std::io::stdout().flush();
        std::thread::sleep(std::time::Duration::from_secs(20));
        return Ok(99);
    }
    if let Some(sig) = s.raise {
        // SAFETY: restoring the default action and raising a signal in a
        // single-threaded test program.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return Ok(98);
    }
    Ok(s.exit)
}
