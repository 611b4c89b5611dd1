//! SASS: the opcode table, the text parser, the kernel view built from
//! parsed instructions, compiler idioms the fast detector relies on, the
//! instruction-mix classes of the counters ([`mix`]) and what
//! instructions do to the stack's spill slots ([`slots`]).

pub mod idioms;
pub mod mix;
pub mod opcodes;
pub mod parse;
pub mod slots;
pub mod view;
pub mod warpgroup;

pub use opcodes::{lookup, OpcodeInfo, OPCODES};
pub use parse::{instruction_text, parse_instruction, parse_listing, ParseError, SassFunction, SassInstr, SassOperand};
pub use view::{build_kernel, into_kernel, SassKernel};
