//! SASS: the opcode table, the text parser, and the kernel view built
//! from parsed instructions.

pub mod opcodes;
pub mod parse;
pub mod view;

pub use opcodes::{lookup, OpcodeInfo, OPCODES};
pub use parse::{parse_instruction, parse_listing, ParseError, SassFunction, SassInstr, SassOperand};
pub use view::{build_kernel, SassKernel};
