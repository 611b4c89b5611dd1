//! Printing. Standard output carries what the user asked for (a report, a
//! dump, a summary), so a failed write there (a full disk, `/dev/full`) is
//! an error: [`show_raw!`] returns it from the calling command, which then
//! ends with one `error:` line and a non-zero status (quietly when stdout
//! is a closed pipe, as in `xfpx report r.json | head`). Messages on stderr
//! ([`say!`], [`say_raw!`]) ignore write errors, since there is nowhere
//! left to report them; `xfpx run` writes its report first either way.

use anyhow::{Context, Result};
use std::io::Write;

/// A line on stderr, in one write: the program under `xfpx run` shares the
/// terminal or log, and a line written in pieces (stderr is unbuffered) could
/// be split by the program's own output.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }};
}

/// Text on stderr, as it is.
macro_rules! say_raw {
    ($text:expr) => {{
        use std::io::Write as _;
        let _ = std::io::stderr().write_all($text.as_bytes());
    }};
}

/// Text on stdout, as it is; a write error returns from the calling
/// function (which returns `anyhow::Result`).
macro_rules! show_raw {
    ($text:expr) => {{
        $crate::console::show_bytes($text.as_bytes())?;
    }};
}

pub(crate) use {say, say_raw, show_raw};

/// What a failed write on stdout says.
pub const STDOUT_ERROR: &str = "cannot write to standard output";

/// Write `bytes` to stdout and flush.
pub fn show_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).context(STDOUT_ERROR)
}

/// Whether `e` is a write to stdout that failed because nobody reads it
/// any more (a closed pipe): such runs end quietly.
pub fn is_closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.to_string() == STDOUT_ERROR)
        && e.chain()
            .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
