//! The instrumented process's end of the event stream, shared by every
//! vendor's tool library: the connection to `xfpx run`'s socket (the
//! `hello` first, then each event as it happens), the report kept so far,
//! and the end of the run (`finished`, or, when no CLI listens, the report
//! written to the configured path).

use crate::config::RunConfig;
use crate::event::Event;
use crate::report::{Collector, Report, RunInfo};
use std::io::Write as _;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// Where events go.
#[derive(Debug)]
enum Sink {
    Socket(UnixStream),
    /// No CLI listening: the report is written at the end.
    Report,
}

/// A tool's event stream and the report it keeps.
#[derive(Debug)]
pub struct ToolStream {
    sink: Sink,
    collector: Collector,
    report_path: PathBuf,
    finished: bool,
}

impl ToolStream {
    /// Connects to the configuration's event socket (falling back to
    /// writing the report at the end, with a note, when it cannot) and
    /// introduces this process as `tool`. `run` is the report's run so far;
    /// its notes are sent after the hello.
    pub fn open(config: &RunConfig, tool: &str, mut run: RunInfo) -> ToolStream {
        let sink = match &config.events_socket {
            Some(p) => match UnixStream::connect(p) {
                Ok(s) => Sink::Socket(s),
                Err(e) => {
                    run.notes.push(format!(
                        "could not connect to the event socket {}: {e}; writing the report at exit",
                        p.display()
                    ));
                    Sink::Report
                }
            },
            None => Sink::Report,
        };
        let notes = run.notes.clone();
        let process = crate::launcher::this_process();
        let mut collector = Collector::new(run, config.max_records);
        collector.add_process(process.clone());
        let mut stream = ToolStream { sink, collector, report_path: config.report_path.clone(), finished: false };
        // The first event of the connection: the CLI knows the tool attached, and to which process.
        stream.emit(Event::Hello { tool: tool.into(), version: env!("CARGO_PKG_VERSION").into(), process });
        for text in notes {
            stream.emit(Event::Note { text });
        }
        stream
    }

    /// Sends one event (a closed socket turns the stream into a report
    /// written at the end).
    pub fn emit(&mut self, event: Event) {
        if let Sink::Socket(s) = &mut self.sink {
            if s.write_all(event.to_line().as_bytes()).is_err() {
                self.sink = Sink::Report;
                self.collector.run_mut().notes.push("the event socket closed; the report is written at exit".into());
            }
        }
    }

    /// Something the user should read, once: kept in the report and sent.
    pub fn note(&mut self, text: &str) {
        if self.collector.run_mut().notes.iter().any(|n| n == text) {
            return;
        }
        self.collector.run_mut().notes.push(text.to_string());
        self.emit(Event::Note { text: text.to_string() });
    }

    /// The report kept so far.
    pub fn collector(&self) -> &Collector {
        &self.collector
    }

    pub fn collector_mut(&mut self) -> &mut Collector {
        &mut self.collector
    }

    /// The report so far.
    pub fn report(&self) -> Report {
        self.collector.report()
    }

    /// Whether [`ToolStream::finish`] ran.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The run is ending: tell the CLI, or write the report (once).
    pub fn finish(&mut self) -> Result<(), String> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        self.collector.run_mut().finished_unix = Some(crate::report::unix_now());
        match &self.sink {
            Sink::Socket(_) => {
                self.emit(Event::Finished);
                Ok(())
            }
            Sink::Report => std::fs::write(&self.report_path, self.collector.report().to_json())
                .map_err(|e| format!("cannot write the report {}: {e}", self.report_path.display())),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::RunSettings;
    use std::io::{BufRead as _, BufReader};
    use std::os::unix::net::UnixListener;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xfpx-tool-stream-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn events_reach_the_socket_in_order() {
        let dir = scratch("socket");
        let sock = dir.join("events.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let config = RunSettings::default().check().unwrap().reporting_to(Some(sock), dir.join("r.json"));
        let mut run = RunInfo::new("amd", "unknown", "detect");
        run.notes.push("first".into());
        let mut s = ToolStream::open(&config, "t", run);
        s.note("second");
        s.note("second");
        s.finish().unwrap();
        s.finish().unwrap();
        drop(s);
        let (conn, _) = listener.accept().unwrap();
        let events: Vec<Event> = BufReader::new(conn).lines().map(|l| Event::from_line(&l.unwrap()).unwrap()).collect();
        assert!(matches!(&events[0], Event::Hello { tool, .. } if tool == "t"));
        assert_eq!(
            events[1..],
            [Event::Note { text: "first".into() }, Event::Note { text: "second".into() }, Event::Finished]
        );
        assert!(!dir.join("r.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_cli_the_report_is_written() {
        let dir = scratch("report");
        let report = dir.join("r.json");
        let config =
            RunSettings::default().check().unwrap().reporting_to(Some(dir.join("nobody.sock")), report.clone());
        let mut s = ToolStream::open(&config, "t", RunInfo::new("amd", "unknown", "detect"));
        s.note("kept");
        s.finish().unwrap();
        let written = Report::from_json(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert!(written.run.notes.iter().any(|n| n.starts_with("could not connect to the event socket")));
        assert!(written.run.notes.contains(&"kept".to_string()));
        assert!(written.run.finished_unix.is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
