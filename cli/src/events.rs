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
pub const MAX_LINE: usize = 1 << 20;

/// What the readers tell the run loop.
#[derive(Debug)]
pub enum Message {
    Event { conn: u64, event: Event },
    /// A line that is not a valid event.
    Malformed { conn: u64, error: String },
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
