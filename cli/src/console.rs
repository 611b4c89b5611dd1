//! Printing that never fails: `xfpx run` must write its report even when
//! stderr or stdout is a closed pipe (e.g. `xfpx report r.json | head`), so
//! write errors on the terminal streams are ignored instead of panicking
//! as `println!` would.

/// A line on stderr.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Text on stderr, as it is.
macro_rules! say_raw {
    ($text:expr) => {{
        use std::io::Write as _;
        let _ = std::io::stderr().write_all($text.as_bytes());
    }};
}

/// Text on stdout, as it is.
macro_rules! show_raw {
    ($text:expr) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all($text.as_bytes());
        let _ = out.flush();
    }};
}

pub(crate) use {say, say_raw, show_raw};
