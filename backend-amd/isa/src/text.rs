//! Where an instruction's text is written: a formatter (the `Display`
//! impls of instructions, operands and modifiers) or a `String` directly,
//! without the formatter in between (listings render every instruction).
//! One renderer serves both, so the two texts cannot differ.

use std::fmt;

/// A place text is written to.
pub(crate) trait Sink {
    fn put(&mut self, s: &str) -> fmt::Result;
    fn put_char(&mut self, c: char) -> fmt::Result;
    fn put_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result;
}

impl Sink for fmt::Formatter<'_> {
    fn put(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
    fn put_char(&mut self, c: char) -> fmt::Result {
        fmt::Write::write_char(self, c)
    }
    fn put_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        self.write_fmt(args)
    }
}

impl Sink for String {
    fn put(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
    fn put_char(&mut self, c: char) -> fmt::Result {
        self.push(c);
        Ok(())
    }
    fn put_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        fmt::Write::write_fmt(self, args)
    }
}
