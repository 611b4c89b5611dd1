//! Decoding the code a rewrite reads, once. `.text` is decoded in one pass;
//! a unit (a kernel or a device function) takes its instructions from that
//! pass when its code lies in `.text`, starts on an instruction the pass
//! decoded, ends where an instruction ends and holds no undecodable word:
//! exactly what decoding the unit alone gives. Any other unit (code
//! outside `.text`, or damaged code whose first bad word must be reported
//! as decoding it alone reports it) is decoded alone. A unit's
//! instructions ([`Decoded`]) are a stretch of the pass's, shared, never
//! copied.

use std::ops::{Deref, Range};
use std::sync::Arc;

use xfpx_amd_isa::{DecodeError, Target};

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

/// Decoded instructions in address order: a stretch of a decoding shared
/// by every unit cut from it (cloning one shares them). Reads as a slice.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    all: Arc<Vec<DecodedInstr>>,
    range: Range<usize>,
}

impl Decoded {
    /// Instructions decoded for one unit alone.
    pub fn own(instrs: Vec<DecodedInstr>) -> Decoded {
        let range = 0..instrs.len();
        Decoded { all: Arc::new(instrs), range }
    }

    /// The instructions at `range` of this stretch.
    pub fn slice(&self, range: Range<usize>) -> Decoded {
        let start = self.range.start + range.start;
        Decoded { all: self.all.clone(), range: start..start + range.len() }
    }
}

impl Deref for Decoded {
    type Target = [DecodedInstr];
    fn deref(&self) -> &[DecodedInstr] {
        &self.all[self.range.clone()]
    }
}

impl<'a> IntoIterator for &'a Decoded {
    type Item = &'a DecodedInstr;
    type IntoIter = std::slice::Iter<'a, DecodedInstr>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// One pass over `.text`.
#[derive(Debug, Default)]
pub struct TextCode {
    /// Index of `.text` among the sections (None: no readable `.text`).
    section: Option<usize>,
    range: Range<u64>,
    /// Every instruction the pass decoded, in address order.
    decoded: Decoded,
    /// Where the pass found undecodable words, in address order.
    undecodable: Vec<u64>,
}

impl TextCode {
    /// Decodes the `.text` of `co`.
    pub fn decode(co: &CodeObject<'_>, target: Target) -> TextCode {
        let Some(text) = co.elf.section_by_name(".text") else { return TextCode::default() };
        let Ok(data) = co.elf.section_data(text) else { return TextCode::default() };
        // Instructions take 4 to 16 bytes: room for all of them at once.
        let mut instrs = Vec::with_capacity(data.len() / 4);
        let mut undecodable = Vec::new();
        for (addr, r) in xfpx_amd_isa::disassemble(target, data, text.addr) {
            match r {
                Ok(insn) => instrs.push(DecodedInstr { addr, insn }),
                Err(_) => undecodable.push(addr),
            }
        }
        TextCode {
            section: Some(text.index),
            range: text.addr..text.addr.saturating_add(data.len() as u64),
            decoded: Decoded::own(instrs),
            undecodable,
        }
    }

    /// Every decodable instruction of `.text`, in address order.
    pub fn instructions(&self) -> &[DecodedInstr] {
        &self.decoded
    }

    /// The decodable instructions of `.text` outside every range of
    /// `units` (the kernels' code), in address order.
    pub fn outside<'t>(&'t self, units: &[Range<u64>]) -> impl Iterator<Item = &'t DecodedInstr> {
        let mut ranges: Vec<Range<u64>> = units.iter().filter(|r| r.start < r.end).cloned().collect();
        ranges.sort_by_key(|r| r.start);
        // Merged, so that the ranges a position may fall in are the one before it.
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        // The stretches of instructions between them.
        let all: &[DecodedInstr] = &self.decoded;
        let mut stretches = Vec::with_capacity(merged.len() + 1);
        let mut from = 0;
        for r in &merged {
            let start = all.partition_point(|d| d.addr < r.start);
            if start > from {
                stretches.push(from..start);
            }
            from = from.max(all.partition_point(|d| d.addr < r.end));
        }
        stretches.push(from..all.len());
        stretches.into_iter().flat_map(move |s| &all[s])
    }

    /// The instructions of the code at `code`, after its first `skip` bytes
    /// (a kernarg preload header); the first undecodable word is an error.
    pub fn unit(
        &self,
        co: &CodeObject<'_>,
        target: Target,
        code: &Range<u64>,
        skip: u64,
    ) -> Result<Decoded, UnitError> {
        let len = code.end.saturating_sub(code.start);
        if let Some(instrs) = self.slice(co, code, skip) {
            return Ok(instrs);
        }
        let bytes = co.elf.bytes_at_addr(code.start, len).map_err(UnitError::Bytes)?;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        let body = bytes.get(skip..).unwrap_or(&[]);
        xfpx_amd_isa::disassemble(target, body, code.start + skip as u64)
            .map(|(a, r)| r.map(|insn| DecodedInstr { addr: a, insn }).map_err(|e| UnitError::Decode(a, e)))
            .collect::<Result<Vec<_>, _>>()
            .map(Decoded::own)
    }

    /// The unit's instructions from the `.text` pass, where they are what
    /// decoding it alone gives.
    fn slice(&self, co: &CodeObject<'_>, code: &Range<u64>, skip: u64) -> Option<Decoded> {
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
        // No undecodable word in it.
        let bad = self.undecodable.partition_point(|&a| a < start);
        if self.undecodable.get(bad).is_some_and(|&a| a < code.end) {
            return None;
        }
        let all = &self.decoded;
        let first = all.partition_point(|d| d.addr < start);
        if all.get(first).map(|d| d.addr) != Some(start) {
            return None;
        }
        let end = first + all[first..].partition_point(|d| d.addr < code.end);
        // It ends where its last instruction ends.
        let last = &all[end - 1];
        if last.addr + last.insn.length as u64 > code.end {
            return None;
        }
        Some(all.slice(first..end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` instructions of 4 bytes from `base` (`s_nop 0`).
    fn nops(base: u64, n: usize) -> Decoded {
        let bytes: Vec<u8> = (0..n).flat_map(|_| 0xBF80_0000u32.to_le_bytes()).collect();
        let instrs = xfpx_amd_isa::disassemble(Target::Gfx90a, &bytes, base)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("s_nop decodes") })
            .collect();
        Decoded::own(instrs)
    }

    #[test]
    fn stretches_share_the_decoding_they_are_cut_from() {
        let all = nops(0x100, 6);
        let middle = all.slice(1..4);
        assert_eq!(middle.iter().map(|d| d.addr).collect::<Vec<_>>(), [0x104, 0x108, 0x10c]);
        let inner = middle.slice(1..2);
        assert_eq!(inner.iter().map(|d| d.addr).collect::<Vec<_>>(), [0x108]);
        assert!(std::ptr::eq(&inner[0], &all[2]), "no copy");
    }

    #[test]
    fn code_outside_overlapping_and_unordered_ranges() {
        let text = TextCode { decoded: nops(0x100, 6), ..TextCode::default() };
        let units = [0x108..0x110, 0x104..0x10c, 0x200..0x200];
        let outside: Vec<u64> = text.outside(&units).map(|d| d.addr).collect();
        assert_eq!(outside, [0x100, 0x110, 0x114]);
        assert_eq!(text.outside(&[]).count(), 6);
        assert_eq!(
            text.outside(&[0x0..0x104, 0x110..0x200]).map(|d| d.addr).collect::<Vec<_>>(),
            [0x104, 0x108, 0x10c]
        );
        assert_eq!(text.outside(&[0x0..0x100, 0x100..0x200]).count(), 0);
    }
}
