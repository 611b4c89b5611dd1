//! AMDGPU gfx9/CDNA instruction decoder (gfx908, gfx90a, gfx942, gfx950).
//!
//! Instruction facts (mnemonics per target, operand templates, modifier
//! availability, IR classes) live in `tables/gfx9.tsv`, swept from the LLVM
//! disassembler by `tools/probe.py` + `tools/mktable.py`, and compiled into
//! `src/generated/gfx9.rs` by the `tablegen` crate, which also generates
//! [`Opcode`] (one variant per mnemonic) and its control-flow kinds from
//! `tables/control.tsv`, its operation facts (data type, compare,
//! family; [`operation`]) from the mnemonics and `tables/family.tsv`, and
//! the facts lowering and execution dispatch on (traits, memory access,
//! wait counters, hazards, IOC's other operation, conversions; [`facts`])
//! from the rule tables `tables/{traits,access,counters,hazard,other}.tsv`.
//! Encoding bit positions live
//! in [`encoding`]; the operand-code space in [`operand`].
//!
//! ```
//! use xfpx_amd_isa::{decode, Target};
//! let insn = decode(Target::Gfx942, &0x7E02_0302u32.to_le_bytes()).unwrap();
//! assert_eq!(insn.length, 4);
//! assert_eq!(insn.to_string(), "v_mov_b32_e32 v1, v2");
//! ```

pub mod decode;
pub mod encoding;
pub mod facts;
pub mod hwid;
pub mod modifier;
pub mod opcode;
pub mod operand;
pub mod operation;
mod render;
pub mod semantics;
pub mod symbolic;
pub mod table;
pub mod target;
mod text;

#[allow(clippy::all)]
pub(crate) mod generated {
    pub mod facts;
    pub mod gfx9;
    pub mod opcode;
    pub mod operation;
}

pub use decode::{decode, disassemble, DecodeError, Disassembly, Instruction, Variant};
pub use encoding::{Encoding, Field};
pub use facts::{Access, Conversion, Hazard, Traits};
pub use modifier::Modifier;
pub use opcode::Opcode;
pub use operand::{InvalidOperand, LiteralForm, Operand, OperandSlot, RegFile, RegRange, SpecialReg, SrcMods};
pub use operation::{CmpCond, CmpUnit, Compare, DataType, Family};
pub use semantics::{ControlFlow, ControlKind, Counters};
pub use target::{Target, UnknownTarget};
