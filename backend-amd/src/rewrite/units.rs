//! Decoding the code a rewrite reads, once. `.text` is decoded in one pass;
//! a unit (a kernel or a device function) takes its instructions from that
//! pass when its code lies in `.text`, starts on an instruction the pass
//! decoded, ends where an instruction ends and holds no undecodable word:
//! exactly what decoding the unit alone gives. Any other unit (code
//! outside `.text`, or damaged code whose first bad word must be reported
//! as decoding it alone reports it) is decoded alone. A unit's
//! instructions ([`Decoded`]) are a stretch of the pass's, shared, never
//! copied. The pass, and the per-unit work of reading ([`super::spread`]), run on
//! the machine's threads; what they give is what one thread gives, in the
//! same order.

use std::ops::{Deref, Range};
use std::sync::Arc;

use xfpx_amd_isa::{DecodeError, Target};

use super::spread::{spread, threads};
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
    /// Decodes the `.text` of `co`: cut at kernel starts into stretches
    /// decoded at once, each checked to start where the one before it ended
    /// (else decoded again from there), so that the result is the one pass's.
    pub fn decode(co: &CodeObject<'_>, target: Target) -> TextCode {
        let Some(text) = co.elf.section_by_name(".text") else { return TextCode::default() };
        let Ok(data) = co.elf.section_data(text) else { return TextCode::default() };
        let starts = co
            .kernels
            .iter()
            .filter_map(|k| k.code.start.checked_sub(text.addr))
            .filter_map(|o| usize::try_from(o).ok());
        let cuts = if data.len() < PARALLEL_BYTES { Vec::new() } else { cuts(data.len(), starts, threads()) };
        let (instrs, undecodable) = decode_cut(target, data, text.addr, &cuts);
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

/// Below this many bytes of `.text`, one thread decodes it all.
const PARALLEL_BYTES: usize = 16 * 1024;

/// Offsets inside `len` bytes where `.text` is cut into `parts` stretches:
/// for each even cut, the first kernel start at or after it.
fn cuts(len: usize, starts: impl Iterator<Item = usize>, parts: usize) -> Vec<usize> {
    let mut starts: Vec<usize> = starts.filter(|&s| s > 0 && s < len).collect();
    starts.sort_unstable();
    let mut out: Vec<usize> = Vec::new();
    for i in 1..parts {
        let even = len / parts * i;
        let next = starts.get(starts.partition_point(|&s| s < even)).copied();
        if let Some(s) = next.filter(|&s| out.last().is_none_or(|&l| s > l)) {
            out.push(s);
        }
    }
    out
}

/// The instructions of `data` (at address `base`) and its undecodable
/// words, as one pass finds them, decoded as stretches cut at `cuts`
/// (ascending offsets) at once.
fn decode_cut(target: Target, data: &[u8], base: u64, cuts: &[usize]) -> (Vec<DecodedInstr>, Vec<u64>) {
    let bounds: Vec<Range<usize>> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .zip(cuts.iter().copied().chain(std::iter::once(data.len())))
        .map(|(from, to)| from..to)
        .collect();
    // Instructions take 4 to 16 bytes: the first stretch has room for all of
    // them, so that the others are appended to it without moving it.
    let room = |i: usize| if i == 0 { data.len() / 4 } else { bounds[i].len() / 4 };
    let stretches = spread(bounds.len(), |i| stretch(target, data, base, bounds[i].clone(), room(i)));
    let mut instrs: Vec<DecodedInstr> = Vec::new();
    let mut undecodable = Vec::new();
    let mut at = 0;
    for (i, (bound, found)) in bounds.iter().zip(stretches).enumerate() {
        // An instruction of the stretch before crossed this cut: decode from where it ended.
        let found = if bound.start == at { found } else { stretch(target, data, base, at..bound.end, room(i)) };
        if i == 0 {
            instrs = found.instrs;
        } else {
            instrs.extend(found.instrs);
        }
        undecodable.extend(found.undecodable);
        at = found.end;
    }
    (instrs, undecodable)
}

/// What decoding one stretch of `.text` found.
struct Stretch {
    instrs: Vec<DecodedInstr>,
    undecodable: Vec<u64>,
    /// Where the instruction after the stretch starts.
    end: usize,
}

/// Decodes `data` (at address `base`) from `range.start` until an
/// instruction would start at or after `range.end` (the bytes after it
/// read as the whole pass reads them), into room for `room` instructions.
fn stretch(target: Target, data: &[u8], base: u64, range: Range<usize>, room: usize) -> Stretch {
    let from = range.start.min(data.len());
    let mut walk = xfpx_amd_isa::disassemble(target, &data[from..], base + from as u64);
    let mut instrs = Vec::with_capacity(room);
    let mut undecodable = Vec::new();
    while from + walk.offset() < range.end {
        let Some((addr, r)) = walk.next() else { break };
        match r {
            Ok(insn) => instrs.push(DecodedInstr { addr, insn }),
            Err(_) => undecodable.push(addr),
        }
    }
    Stretch { instrs, undecodable, end: from + walk.offset() }
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
    fn code_cut_anywhere_decodes_as_one_pass() {
        // 4- and 8-byte instructions (a literal, a VOP3) and an invalid word.
        let words: [u32; 9] = [
            0xBF80_0000,
            0x7E02_02FF,
            0x3F80_0000,
            0xD100_0001,
            0x0002_0501,
            0xFFFF_FFFF,
            0xBF80_0000,
            0x7E02_0302,
            0xBF81_0000,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let key = |(instrs, bad): (Vec<DecodedInstr>, Vec<u64>)| {
            (instrs.iter().map(|d| (d.addr, d.insn.text())).collect::<Vec<_>>(), bad)
        };
        let one = key(decode_cut(Target::Gfx942, &bytes, 0x100, &[]));
        assert_eq!(one.0.len(), 6, "{one:?}");
        assert_eq!(one.1, [0x114]);
        for a in (4..bytes.len()).step_by(4) {
            assert_eq!(key(decode_cut(Target::Gfx942, &bytes, 0x100, &[a])), one, "cut at {a}");
            for b in (a + 4..bytes.len()).step_by(4) {
                assert_eq!(key(decode_cut(Target::Gfx942, &bytes, 0x100, &[a, b])), one, "cut at {a} and {b}");
            }
        }
        // A truncated last instruction is read as the one pass reads it.
        let cut = &bytes[..bytes.len() - 20];
        let one = key(decode_cut(Target::Gfx942, cut, 0, &[]));
        assert_eq!(key(decode_cut(Target::Gfx942, cut, 0, &[8])), one);
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
