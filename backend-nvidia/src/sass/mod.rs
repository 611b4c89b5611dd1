//! SASS: the opcode table, the text parser, the kernel view built from
//! parsed instructions, compiler idioms the fast detector relies on, and
//! the instruction-mix classes of the counters ([`mix`]).

pub mod idioms;
pub mod mix;
pub mod opcodes;
pub mod parse;
pub mod view;

pub use opcodes::{lookup, OpcodeInfo, OPCODES};
pub use parse::{parse_instruction, parse_listing, ParseError, SassFunction, SassInstr, SassOperand};
pub use view::{build_kernel, SassKernel};
