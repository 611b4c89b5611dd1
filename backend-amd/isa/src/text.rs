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
    #[inline]
    fn put(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
    #[inline]
    fn put_char(&mut self, c: char) -> fmt::Result {
        fmt::Write::write_char(self, c)
    }
    fn put_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        self.write_fmt(args)
    }
}

// Inlined into the renderers: a listing writes a few pieces per operand,
// most of them a character or two.
impl Sink for String {
    #[inline]
    fn put(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
    #[inline]
    fn put_char(&mut self, c: char) -> fmt::Result {
        self.push(c);
        Ok(())
    }
    fn put_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        fmt::Write::write_fmt(self, args)
    }
}
