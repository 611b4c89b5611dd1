//! The instrumented process's end of the event stream, shared by every
//! vendor's tool library: the connection to `xfpx run`'s socket (the
//! `hello` first, then each event as it happens, launches in batches), the
//! report kept so far, and the end of the run (`finished`, or, when no CLI
//! listens, the report written to the configured path).

use crate::config::RunConfig;
use crate::event::Event;
use crate::report::{Collector, Report, RunInfo};
use std::io::Write as _;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Launch events (one per kernel launch, thousands a second) wait in the
/// stream and go out in one write with the next other event, once this
/// many bytes wait, or once the first has waited [`BATCH_AGE`].
const BATCH_BYTES: usize = 16 * 1024;

/// The longest a launch event waits (checked at each event and at
/// [`ToolStream::flush_aged`]).
pub const BATCH_AGE: Duration = Duration::from_millis(20);

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
    /// Event lines not written yet (launches), and since when.
    waiting: String,
    waiting_since: Option<Instant>,
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
        let mut stream = ToolStream {
            sink,
            waiting: String::new(),
            waiting_since: None,
            collector,
            report_path: config.report_path.clone(),
            finished: false,
        };
        // The first event of the connection: the CLI knows the tool attached, and to which process.
        stream.emit(Event::Hello { tool: tool.into(), version: env!("CARGO_PKG_VERSION").into(), process });
        for text in notes {
            stream.emit(Event::Note { text });
        }
        stream
    }

    /// Sends one event, in order: a launch may wait until the batch it is
    /// in is sent. A closed socket turns the stream into a report written
    /// at the end.
    pub fn emit(&mut self, event: Event) {
        if !matches!(self.sink, Sink::Socket(_)) {
            return;
        }
        self.waiting.push_str(&event.to_line());
        let since = *self.waiting_since.get_or_insert_with(Instant::now);
        let batched = matches!(event, Event::Launch { .. });
        if !batched || self.waiting.len() >= BATCH_BYTES || since.elapsed() >= BATCH_AGE {
            self.write_waiting();
        }
    }

    /// Sends the launches that have waited [`BATCH_AGE`] or longer (for a
    /// caller that ticks while the program launches nothing).
    pub fn flush_aged(&mut self) {
        if self.waiting_since.is_some_and(|t| t.elapsed() >= BATCH_AGE) {
            self.write_waiting();
        }
    }

    fn write_waiting(&mut self) {
        self.waiting_since = None;
        if let Sink::Socket(s) = &mut self.sink {
            if s.write_all(self.waiting.as_bytes()).is_err() {
                self.sink = Sink::Report;
                self.collector.run_mut().notes.push("the event socket closed; the report is written at exit".into());
            }
        }
        self.waiting.clear();
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
        // (the last batch and `finished` may find the socket closed: then
        // the report is written after all)
        self.emit(Event::Finished);
        match &self.sink {
            Sink::Socket(_) => Ok(()),
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

    /// A scratch folder `name`, a listening socket in it, and a stream
    /// opened on it with `run`.
    fn listened(name: &str, run: RunInfo) -> (PathBuf, UnixListener, ToolStream) {
        let dir = scratch(name);
        let sock = dir.join("events.sock");
        let listener = UnixListener::bind(&sock).unwrap();
        let config = RunSettings::default().check().unwrap().reporting_to(Some(sock), dir.join("r.json"));
        let stream = ToolStream::open(&config, "t", run);
        (dir, listener, stream)
    }

    #[test]
    fn events_reach_the_socket_in_order() {
        let mut run = RunInfo::new("amd", "unknown", "detect");
        run.notes.push("first".into());
        let (dir, listener, mut s) = listened("socket", run);
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

    fn launch(index: u64) -> Event {
        Event::Launch { kernel: "k".into(), index, instrumented: false, screened: true, unchecked: None }
    }

    #[test]
    fn launches_wait_for_a_batch_and_keep_their_order() {
        let (dir, listener, mut s) = listened("batch", RunInfo::new("nvidia", "unknown", "fast"));
        let (conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut lines = BufReader::new(conn).lines();
        assert!(matches!(Event::from_line(&lines.next().unwrap().unwrap()).unwrap(), Event::Hello { .. }));
        s.emit(launch(0));
        s.emit(launch(1));
        // nothing written yet: the read times out
        assert!(lines.next().unwrap().is_err());
        s.note("after");
        let got: Vec<Event> = (0..3).map(|_| Event::from_line(&lines.next().unwrap().unwrap()).unwrap()).collect();
        assert_eq!(got, [launch(0), launch(1), Event::Note { text: "after".into() }]);
        // a launch that waited long enough goes out at the next tick
        s.emit(launch(2));
        s.flush_aged();
        assert!(lines.next().unwrap().is_err());
        std::thread::sleep(BATCH_AGE + Duration::from_millis(5));
        s.flush_aged();
        assert_eq!(Event::from_line(&lines.next().unwrap().unwrap()).unwrap(), launch(2));
        // a full batch goes out at once
        let per_line = launch(3).to_line().len();
        for i in 0..(BATCH_BYTES / per_line + 1) as u64 {
            s.emit(launch(3 + i));
        }
        assert_eq!(Event::from_line(&lines.next().unwrap().unwrap()).unwrap(), launch(3));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_socket_closed_under_the_last_batch_still_leaves_the_report() {
        let (dir, listener, mut s) = listened("closed", RunInfo::new("nvidia", "unknown", "fast"));
        let (conn, _) = listener.accept().unwrap();
        drop(conn);
        drop(listener);
        // launches wait in the batch; the closed socket is met only at the end
        s.emit(launch(0));
        s.collector_mut().run_mut().notes.push("gathered".into());
        s.finish().unwrap();
        let written = Report::from_json(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
        assert!(written.run.notes.contains(&"gathered".to_string()));
        assert!(written.run.notes.iter().any(|n| n.starts_with("the event socket closed")));
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
