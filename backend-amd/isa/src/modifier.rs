//! Instruction modifiers printed after the operand list (offsets, cache
//! policy bits, clamp/omod, op_sel arrays, DPP and SDWA controls).

use std::fmt;

use crate::text::Sink;

/// One trailing modifier of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Modifier {
    /// A bare flag: `glc`, `slc`, `clamp`, `offen`, `gds`, `sc0`, ...
    Flag(&'static str),
    /// `name:value` in decimal (`offset:16`, `cbsz:4`).
    Dec(&'static str, i64),
    /// `name:0xvalue` (`offset:0x8`, `row_mask:0xf`).
    Hex(&'static str, u32),
    /// `name:[a,b,...]` (`op_sel:[0,1]`, `quad_perm:[1,0,3,2]`).
    Array(&'static str, Vec<u8>),
    /// `name:VALUE` with a symbolic value (`dst_sel:WORD_1`, `mul:2`).
    Named(&'static str, &'static str),
    /// A DPP control without a value (`row_mirror`).
    Word(&'static str),
    /// Preformatted text (`format:[...]`).
    Text(String),
    /// A note the reference disassembler prints in a comment.
    Comment(&'static str),
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl Modifier {
    pub(crate) fn render<S: Sink>(&self, f: &mut S) -> fmt::Result {
        match self {
            Modifier::Flag(s) | Modifier::Word(s) => f.put(s),
            Modifier::Dec(n, v) => f.put_fmt(format_args!("{n}:{v}")),
            Modifier::Hex(n, v) => f.put_fmt(format_args!("{n}:0x{v:x}")),
            Modifier::Array(n, v) => {
                f.put_fmt(format_args!("{n}:["))?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.put(",")?;
                    }
                    f.put_fmt(format_args!("{x}"))?;
                }
                f.put("]")
            }
            Modifier::Named(n, v) => f.put_fmt(format_args!("{n}:{v}")),
            Modifier::Text(s) => f.put(s),
            Modifier::Comment(s) => f.put_fmt(format_args!("  /* {s} */")),
        }
    }
}
