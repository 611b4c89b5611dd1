//! SASS: the opcode table, the text parser, the kernel view built from
//! parsed instructions, and compiler idioms the fast detector relies on.

pub mod idioms;
pub mod opcodes;
pub mod parse;
pub mod view;

pub use opcodes::{lookup, OpcodeInfo, OPCODES};
pub use parse::{parse_instruction, parse_listing, ParseError, SassFunction, SassInstr, SassOperand};
pub use view::{build_kernel, SassKernel};
