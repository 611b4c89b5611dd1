//! The appended code as placement builds it: its words at a known address
//! and the words that will hold the table's address, the reach of a
//! PC-relative branch, and the padding in `.text` where long-jump islands
//! go when a trampoline is beyond `s_branch` reach of its anchor.

use xfpx_amd_isa::{ControlFlow, Opcode};

use super::view::DecodedInstr;

/// The appended code being built, at a known address.
#[derive(Debug, Clone)]
pub struct Appended {
    pub base: u64,
    pub words: Vec<u32>,
    /// Words that hold half of the table's address, to be written when the
    /// address is known ([`super::table::TableAddress::Patchable`]).
    pub table_literals: Vec<TableLiteral>,
}

/// A literal dword of the appended code holding half of the table's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLiteral {
    /// Index of the word in the appended code.
    pub word: usize,
    /// The high half (else the low one).
    pub high: bool,
}

impl Appended {
    pub fn new(base: u64) -> Appended {
        Appended { base, words: Vec::new(), table_literals: Vec::new() }
    }
    pub fn here(&self) -> u64 {
        self.base + 4 * self.words.len() as u64
    }
    /// Drops the words from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.words.truncate(len);
        self.table_literals.retain(|l| l.word < len);
    }
    /// Writes the table's address into its literal words.
    pub fn set_table_address(&mut self, address: u64) {
        for l in &self.table_literals {
            self.words[l.word] = if l.high { (address >> 32) as u32 } else { address as u32 };
        }
    }
    pub(super) fn push(&mut self, w: Vec<u32>) {
        self.words.extend(w);
    }
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// `simm16` of a PC-relative SOPP at `from` reaching `to`, if in reach.
pub(super) fn rel16(from: u64, to: u64) -> Option<u16> {
    let d = (to as i64 - (from as i64 + 4)) / 4;
    i16::try_from(d).ok().map(|v| v as u16)
}

/// Bytes of a long-jump island: save SCC, `s_getpc_b64`, add a 64-bit
/// offset, `s_setpc_b64`.
pub const ISLAND_BYTES: u64 = 28;

/// Padding inside `.text` that no path executes (runs of `s_nop 0` right
/// after an instruction that always leaves), where islands can go when a
/// trampoline is beyond `s_branch` reach of its anchor.
#[derive(Debug, Clone, Default)]
pub struct IslandPool {
    pub free: Vec<std::ops::Range<u64>>,
}

impl IslandPool {
    /// The pool of a code object's code (`code` in address order), leaving
    /// out the final run (the code-end padding, which stays as it is).
    pub fn from_code(code: &[DecodedInstr]) -> IslandPool {
        let mut free = Vec::new();
        let mut i = 0;
        while i < code.len() {
            let leaves = matches!(
                code[i].insn.control_flow(code[i].addr),
                ControlFlow::Branch { .. } | ControlFlow::End | ControlFlow::Indirect
            ) && code[i].insn.op != Opcode::S_SWAPPC_B64;
            i += 1;
            if !leaves {
                continue;
            }
            let start = i;
            while i < code.len() && code[i].insn.op == Opcode::S_NOP && code[i].insn.words[0] & 0xFFFF == 0 {
                i += 1;
            }
            if i > start && i < code.len() {
                free.push(code[start].addr..code[i].addr);
            }
        }
        IslandPool { free }
    }

    /// Takes room for one island within `s_branch` reach of `anchor`.
    pub(super) fn take(&mut self, anchor: u64) -> Option<u64> {
        let slot =
            self.free.iter_mut().find(|r| r.end - r.start >= ISLAND_BYTES && rel16(anchor, r.start).is_some())?;
        let at = slot.start;
        slot.start += ISLAND_BYTES;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn islands_take_padding_within_reach_only() {
        let mut pool = IslandPool { free: vec![0x1000..0x1040, 0x40000..0x40100] };
        assert_eq!(pool.take(0x1100), Some(0x1000));
        assert_eq!(pool.take(0x1100), Some(0x1000 + ISLAND_BYTES));
        // 0x1038 leaves 8 bytes: the next island near 0x1100 is out of room.
        assert_eq!(pool.take(0x1100), None);
        assert_eq!(pool.take(0x40200), Some(0x40000));
    }
}
