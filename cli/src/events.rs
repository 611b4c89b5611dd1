//! The event socket: a Unix stream socket on which the instrumentation
//! library in the program (and in each of its child processes) sends
//! [`Event`]s as JSON lines. Connections are accepted by the caller's loop
//! (so none made before the program exited can be missed); each is read
//! on its own thread, and everything arrives on one channel.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc::Sender;
use xfpx_common::event::Event;

/// Longest event line accepted; a longer one ends its connection.
pub const MAX_LINE: usize = xfpx_common::limits::EVENT_LINE.bytes as usize;

/// What the readers tell the run loop.
#[derive(Debug)]
pub enum Message {
    Event {
        conn: u64,
        event: Event,
    },
    /// A line that is not a valid event.
    Malformed {
        conn: u64,
        error: String,
    },
    /// The connection ended (end of file or read error).
    Closed,
    /// The program under test exited (`None`: its status could not be read).
    ProgramExited(Option<std::process::ExitStatus>),
}

/// The listening socket and the number of connections accepted.
#[derive(Debug)]
pub struct EventSocket {
    listener: UnixListener,
    accepted: u64,
}

impl EventSocket {
    pub fn bind(path: &Path) -> std::io::Result<EventSocket> {
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        Ok(EventSocket { listener, accepted: 0 })
    }

    /// Accept every pending connection, start a reader for each, and
    /// return how many were accepted.
    pub fn accept_pending(&mut self, tx: &Sender<Message>) -> u64 {
        let mut n = 0;
        while let Ok((stream, _)) = self.listener.accept() {
            let conn = self.accepted;
            self.accepted += 1;
            n += 1;
            let reader_tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("xfpx-events-{conn}"))
                .spawn(move || read_connection(conn, stream, &reader_tx));
            if spawned.is_err() {
                // No thread, no reader: the connection is dropped unread.
                let _ = tx.send(Message::Malformed { conn, error: "cannot start a reader thread".into() });
                let _ = tx.send(Message::Closed);
            }
        }
        n
    }
}

fn read_connection(conn: u64, stream: UnixStream, tx: &Sender<Message>) {
    let _ = stream.set_nonblocking(false);
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line);
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE {
            let _ = tx.send(Message::Malformed { conn, error: format!("event line longer than {MAX_LINE} bytes") });
            break;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let msg = match Event::from_line(&text) {
            Ok(event) => Message::Event { conn, event },
            Err(e) => Message::Malformed { conn, error: e.to_string() },
        };
        if tx.send(msg).is_err() {
            return;
        }
    }
    let _ = tx.send(Message::Closed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::mpsc;

    fn read_all(bytes: &[u8]) -> Vec<Message> {
        let (mut a, b) = UnixStream::pair().expect("socket pair");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || read_connection(7, b, &tx));
        // A reader that stops early closes its end; later writes may fail.
        let _ = a.write_all(bytes);
        drop(a);
        reader.join().expect("reader");
        rx.try_iter().collect()
    }

    #[test]
    fn events_then_end_of_file() {
        let mut bytes = Event::Note { text: "hi".into() }.to_line().into_bytes();
        bytes.extend_from_slice(b"\n  \n{\"event\":\"finished\"}"); // blank lines, no final newline
        let msgs = read_all(&bytes);
        assert!(
            matches!(&msgs[0], Message::Event { conn: 7, event: Event::Note { text } } if text == "hi"),
            "{msgs:?}"
        );
        assert!(matches!(&msgs[1], Message::Event { event: Event::Finished, .. }), "{msgs:?}");
        assert!(matches!(msgs[2], Message::Closed));
        assert_eq!(msgs.len(), 3);
    }

    #[test]
    fn an_overlong_line_ends_the_connection() {
        let mut bytes = vec![b'x'; MAX_LINE + 10];
        bytes.push(b'\n');
        bytes.extend_from_slice(Event::Finished.to_line().as_bytes());
        let msgs = read_all(&bytes);
        assert!(matches!(&msgs[0], Message::Malformed { error, .. } if error.contains("longer than")), "{msgs:?}");
        assert!(matches!(msgs[1], Message::Closed));
        assert_eq!(msgs.len(), 2, "nothing is read after an overlong line");
    }

    #[test]
    fn invalid_utf8_and_bad_json_are_malformed() {
        let msgs = read_all(b"\xff\xfe{\n{\"event\":\"launch\"}\n");
        let malformed = msgs.iter().filter(|m| matches!(m, Message::Malformed { .. })).count();
        assert_eq!(malformed, 2, "{msgs:?}");
    }
}
