//! Decoding the code a rewrite reads, once. `.text` is decoded in one pass;
//! a unit (a kernel or a device function) takes its instructions from that
//! pass when its code lies in `.text`, starts on an instruction the pass
//! decoded, ends where an instruction ends and holds no undecodable word:
//! exactly what decoding the unit alone gives. Any other unit (code
//! outside `.text`, or damaged code whose first bad word must be reported
//! as decoding it alone reports it) is decoded alone.

use std::ops::Range;

use xfpx_amd_isa::{DecodeError, Instruction, Target};

use super::view::DecodedInstr;
use crate::code_object::CodeObject;

/// Why a unit's code could not be decoded.
#[derive(Debug, Clone)]
pub enum UnitError {
    /// Its bytes are not in the file.
    Bytes(crate::error::Error),
    /// The first undecodable word, and why.
    Decode(u64, DecodeError),
}

/// One pass over `.text`.
#[derive(Debug, Default)]
pub struct TextCode {
    /// Index of `.text` among the sections (None: no readable `.text`).
    section: Option<usize>,
    range: Range<u64>,
    /// Every position the pass visited, in address order.
    entries: Vec<(u64, Result<Instruction, DecodeError>)>,
}

impl TextCode {
    /// Decodes the `.text` of `co`.
    pub fn decode(co: &CodeObject<'_>, target: Target) -> TextCode {
        let Some(text) = co.elf.section_by_name(".text") else { return TextCode::default() };
        let Ok(data) = co.elf.section_data(text) else { return TextCode::default() };
        TextCode {
            section: Some(text.index),
            range: text.addr..text.addr.saturating_add(data.len() as u64),
            entries: xfpx_amd_isa::disassemble(target, data, text.addr).collect(),
        }
    }

    /// Every decodable instruction of `.text`, in address order.
    pub fn instructions(&self) -> Vec<DecodedInstr> {
        self.entries
            .iter()
            .filter_map(|(a, r)| r.as_ref().ok().map(|i| DecodedInstr { addr: *a, insn: i.clone() }))
            .collect()
    }

    /// The instructions of the code at `code`, after its first `skip` bytes
    /// (a kernarg preload header); the first undecodable word is an error.
    pub fn unit(
        &self,
        co: &CodeObject<'_>,
        target: Target,
        code: &Range<u64>,
        skip: u64,
    ) -> Result<Vec<DecodedInstr>, UnitError> {
        let len = code.end.saturating_sub(code.start);
        if let Some(instrs) = self.slice(co, code, skip) {
            return Ok(instrs);
        }
        let bytes = co.elf.bytes_at_addr(code.start, len).map_err(UnitError::Bytes)?;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        let body = bytes.get(skip..).unwrap_or(&[]);
        xfpx_amd_isa::disassemble(target, body, code.start + skip as u64)
            .map(|(a, r)| r.map(|insn| DecodedInstr { addr: a, insn }).map_err(|e| UnitError::Decode(a, e)))
            .collect()
    }

    /// The unit's instructions from the `.text` pass, where they are what
    /// decoding it alone gives.
    fn slice(&self, co: &CodeObject<'_>, code: &Range<u64>, skip: u64) -> Option<Vec<DecodedInstr>> {
        let section = self.section?;
        // Its bytes must be those of `.text` (the section that holds its start).
        if co.elf.section_at_addr(code.start).map(|s| s.index) != Some(section)
            || code.start < self.range.start
            || code.end > self.range.end
        {
            return None;
        }
        let start = code.start.checked_add(skip)?;
        if start >= code.end {
            return None;
        }
        let first = self.entries.partition_point(|(a, _)| *a < start);
        if self.entries.get(first).map(|(a, _)| *a) != Some(start) {
            return None;
        }
        let mut out = Vec::new();
        for (addr, r) in self.entries[first..].iter().take_while(|(a, _)| *a < code.end) {
            let insn = r.as_ref().ok()?;
            if addr + insn.length as u64 > code.end {
                return None;
            }
            out.push(DecodedInstr { addr: *addr, insn: insn.clone() });
        }
        Some(out)
    }
}
