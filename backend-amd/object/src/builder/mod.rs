//! The builder of rewritten code objects: patches written over existing
//! bytes, appended code, and appended non-loaded sections, every existing
//! address kept where it was. Appended code goes
//! - after `.text`, growing it in place when the slack before the next
//!   segment holds the new code (the file bytes after `.text` move by whole
//!   pages, so every later segment keeps its offset/address congruence);
//! - otherwise into a new `PT_LOAD` above all others, in the program-header
//!   slot of `PT_GNU_STACK`, with a rebuilt section-header table that names it.
//!
//! The code-end padding (`s_nop 0` after the last kernel) is repeated after
//! the appended code, and the gap up to the appended code is `s_nop 0` too.
//! A non-allocated section can be appended too ([`append_section`]: the
//! rewrite's record), and the metadata note's register counts are patched
//! in place ([`note`]).
//!
//! Why not the `object` crate's ELF builder (`object::build::elf::Builder`,
//! 0.40), evaluated on the fixture code objects: reading and writing an
//! object unchanged is not byte-identical (it rebuilds `.shstrtab` and
//! `.strtab`, moving both); growing `.text` fails ("Unsupported sh_offset
//! value 0x1180 for section '.dynamic', expected at least 0x1280": it keeps
//! the offsets of later allocated sections and refuses the overlap rather
//! than moving them by whole pages); and a new `PT_LOAD` fails too, as its
//! program header grows the table into `.note` ("Unsupported sh_offset
//! value 0x238 for section '.note', expected at least 0x270"), where this
//! builder reuses the `PT_GNU_STACK` slot.

pub mod note;

use serde::Serialize;

use crate::bytes;
use crate::code_object::CodeObject;
use crate::elf::{
    ELF64_PHDR_SIZE, ELF64_SHDR_SIZE, PF_R, PF_X, PT_GNU_STACK, PT_LOAD, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS,
};

/// Why the file cannot be rebuilt around the new code (one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

const PAGE: u64 = 0x1000;
/// The largest segment alignment accepted from a code object (AMDGPU
/// objects use one page); a larger one is damage, not layout.
const MAX_SEGMENT_ALIGN: u64 = 0x10_0000;
/// Alignment of the appended code (kernels are 256-byte aligned).
pub const CODE_ALIGN: u64 = 256;
/// Name of the section holding appended code in a new segment.
pub const APPENDED_SECTION: &str = ".xfpx.text";
/// `s_nop 0`: the filler the compiler uses after the code.
const S_NOP_0: [u8; 4] = 0xBF80_0000u32.to_le_bytes();

/// How the appended code is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    GrowText,
    NewSegment,
}

/// The address range offered to appended code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Region {
    pub strategy: Strategy,
    /// Address of the first appended byte.
    pub start: u64,
    /// Appended code plus padding must end at or below this address.
    pub limit: Option<u64>,
    /// Bytes of `s_nop 0` repeated after the appended code.
    pub trailing_padding: u64,
}

/// Bytes to write over the original contents at an address (anchors, descriptors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub addr: u64,
    pub bytes: Vec<u8>,
}

/// `a + b`, or a layout error where a damaged header would overflow.
fn sum(a: u64, b: u64) -> Result<u64, LayoutError> {
    a.checked_add(b).ok_or_else(|| LayoutError(format!("offset {a:#x} + {b:#x} overflows")))
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// Length of the run of `s_nop 0` that ends `.text`.
fn code_end_padding(co: &CodeObject<'_>) -> u64 {
    let Some(text) = co.elf.section_by_name(".text") else { return 0 };
    let Ok(data) = co.elf.section_data(text) else { return 0 };
    let mut n = 0u64;
    for w in data.rchunks_exact(4) {
        if w != S_NOP_0 {
            break;
        }
        n += 4;
    }
    n
}

/// The in-place region after `.text`, if the code object has slack there.
pub fn grow_region(co: &CodeObject<'_>) -> Option<Region> {
    let t = co.text.as_ref()?;
    let start = align_up(t.text.end, CODE_ALIGN);
    let limit = t.next_segment_vaddr.unwrap_or(u64::MAX);
    (start < limit).then_some(Region {
        strategy: Strategy::GrowText,
        start,
        limit: Some(limit),
        trailing_padding: code_end_padding(co),
    })
}

/// A region in a new segment above every other, at least `min_gap` bytes
/// above the end of the highest segment (a test knob that forces far code).
pub fn new_segment_region(co: &CodeObject<'_>, min_gap: u64) -> Result<Region, LayoutError> {
    let top = co
        .segments()
        .iter()
        .filter(|s| s.p_type == PT_LOAD)
        .map(|s| s.vaddr.saturating_add(s.memsz))
        .max()
        .ok_or_else(|| LayoutError("no PT_LOAD segment".into()))?;
    if !co.segments().iter().any(|s| s.p_type == PT_GNU_STACK) {
        return Err(LayoutError("no spare program header (PT_GNU_STACK) for a new segment".into()));
    }
    Ok(Region {
        strategy: Strategy::NewSegment,
        start: align_up(top.saturating_add(min_gap), PAGE),
        limit: None,
        trailing_padding: code_end_padding(co),
    })
}

fn rd(b: &[u8], at: usize, n: usize) -> Result<u64, LayoutError> {
    bytes::uint_at(b, at as u64, n, "ELF header field").map_err(|e| LayoutError(e.to_string()))
}

fn wr(b: &mut [u8], at: usize, n: usize, v: u64) -> Result<(), LayoutError> {
    bytes::put_uint(b, at as u64, n, v, "ELF header field").map_err(|e| LayoutError(e.to_string()))
}

fn to_usize(v: u64) -> Result<usize, LayoutError> {
    usize::try_from(v).map_err(|_| LayoutError(format!("offset {v:#x} too large")))
}

/// File offset of address `addr` through the section holding it.
fn file_offset(co: &CodeObject<'_>, addr: u64, len: u64) -> Result<u64, LayoutError> {
    let s =
        co.elf.section_at_addr(addr).ok_or_else(|| LayoutError(format!("patch address {addr:#x} is in no section")))?;
    if addr + len > s.addr + s.size {
        return Err(LayoutError(format!("patch at {addr:#x} runs past section {}", s.name)));
    }
    Ok(s.offset + (addr - s.addr))
}

/// Writes the appended bytes at the end of `out`: the `code` words
/// (little-endian), then the trailing padding.
fn put_appended(out: &mut Vec<u8>, region: &Region, code: &[u32]) {
    out.reserve(appended_len(region, code));
    // (through a small buffer: each byte of `out` is written once, with
    // no zeros written first)
    let mut buf = [0u8; 1024];
    for words in code.chunks(buf.len() / 4) {
        let bytes = &mut buf[..4 * words.len()];
        for (b, w) in bytes.chunks_exact_mut(4).zip(words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(bytes);
    }
    for _ in 0..region.trailing_padding / 4 {
        out.extend_from_slice(&S_NOP_0);
    }
}

/// Bytes the appended `code` and its trailing padding take.
fn appended_len(region: &Region, code: &[u32]) -> usize {
    4 * code.len() + 4 * (region.trailing_padding as usize / 4)
}

/// Size the appended code plus its padding takes.
pub fn footprint(region: &Region, code_len: u64) -> u64 {
    code_len + region.trailing_padding
}

/// Builds the rewritten file: `patches` written over the original bytes,
/// the `code` words placed at `region.start` (written once, into the
/// file's buffer).
pub fn apply(
    original: &[u8],
    co: &CodeObject<'_>,
    region: &Region,
    code: &[u32],
    patches: &[Patch],
) -> Result<Vec<u8>, LayoutError> {
    // (room for the code in a new segment, page-aligned, and its headers)
    let room = if code.is_empty() || region.strategy == Strategy::GrowText {
        0
    } else {
        appended_len(region, code) + 2 * PAGE as usize
    };
    let mut b = Vec::with_capacity(original.len() + room);
    b.extend_from_slice(original);
    for p in patches {
        let off = to_usize(file_offset(co, p.addr, p.bytes.len() as u64)?)?;
        b[off..off + p.bytes.len()].copy_from_slice(&p.bytes);
    }
    if code.is_empty() {
        return Ok(b);
    }
    match region.strategy {
        Strategy::GrowText => grow_text(b, co, region, code),
        Strategy::NewSegment => new_segment(b, region, code),
    }
}

struct Header {
    phoff: usize,
    phentsize: usize,
    phnum: usize,
    shoff: u64,
    shentsize: usize,
    shnum: usize,
    shstrndx: usize,
}

/// The ELF header fields the layout code uses, validated so that every
/// program and section header lies inside the file (hostile input).
fn header(b: &[u8]) -> Result<Header, LayoutError> {
    let h = Header {
        phoff: to_usize(rd(b, 32, 8)?)?,
        shoff: rd(b, 40, 8)?,
        phentsize: rd(b, 54, 2)? as usize,
        phnum: rd(b, 56, 2)? as usize,
        shentsize: rd(b, 58, 2)? as usize,
        shnum: rd(b, 60, 2)? as usize,
        shstrndx: rd(b, 62, 2)? as usize,
    };
    if h.phentsize != ELF64_PHDR_SIZE || h.shentsize != ELF64_SHDR_SIZE {
        return Err(LayoutError("ELF header sizes are not those of ELF64".into()));
    }
    let inside = |off: usize, n: usize, size: usize| off.checked_add(n * size).is_some_and(|end| end <= b.len());
    if !inside(h.phoff, h.phnum, h.phentsize) {
        return Err(LayoutError("program headers out of the file".into()));
    }
    if !inside(to_usize(h.shoff)?, h.shnum, h.shentsize) || h.shstrndx >= h.shnum {
        return Err(LayoutError("section headers out of the file".into()));
    }
    Ok(h)
}

fn grow_text(mut b: Vec<u8>, co: &CodeObject<'_>, region: &Region, code: &[u32]) -> Result<Vec<u8>, LayoutError> {
    let t = co.text.as_ref().ok_or_else(|| LayoutError("no .text".into()))?;
    let text = co.elf.section_by_name(".text").ok_or_else(|| LayoutError("no .text".into()))?.clone();
    let new_end = region.start + appended_len(region, code) as u64;
    if region.limit.is_some_and(|l| new_end > l) {
        return Err(LayoutError(format!("{new_end:#x} runs into the next segment")));
    }
    let grow = new_end - t.text.end;
    let file_end = sum(text.offset, text.size)?;
    let h = header(&b)?;
    // Later file contents move by whole pages (and by the largest alignment of
    // any later segment) so that offsets stay congruent to addresses.
    let mut align = PAGE;
    for i in 0..h.phnum {
        let at = h.phoff + i * h.phentsize;
        if rd(&b, at + 8, 8)? >= file_end {
            let p_align = rd(&b, at + 48, 8)?.max(1);
            if !p_align.is_power_of_two() || p_align > MAX_SEGMENT_ALIGN {
                return Err(LayoutError(format!("segment {i} has an implausible alignment {p_align:#x}")));
            }
            align = align.max(p_align);
        }
    }
    let shift = align_up(grow, align);
    // Program headers.
    let seg = t.segment;
    for i in 0..h.phnum {
        let at = h.phoff + i * h.phentsize;
        let off = rd(&b, at + 8, 8)?;
        let filesz = rd(&b, at + 32, 8)?;
        if i == seg {
            if off.checked_add(filesz) != Some(file_end) {
                return Err(LayoutError("the code segment does not end with .text".into()));
            }
            wr(&mut b, at + 32, 8, sum(filesz, grow)?)?;
            let memsz = rd(&b, at + 40, 8)?;
            wr(&mut b, at + 40, 8, sum(memsz, grow)?)?;
        } else if off >= file_end && !(off == 0 && filesz == 0) {
            wr(&mut b, at + 8, 8, sum(off, shift)?)?;
        } else if off < file_end && off.saturating_add(filesz) > file_end {
            return Err(LayoutError(format!("segment {i} spans the end of .text in the file")));
        }
    }
    // Section headers.
    for i in 0..h.shnum {
        let at = to_usize(h.shoff)? + i * h.shentsize;
        let off = rd(&b, at + 24, 8)?;
        if i == text.index {
            wr(&mut b, at + 32, 8, sum(text.size, grow)?)?;
        } else if off >= file_end && i != 0 {
            wr(&mut b, at + 24, 8, sum(off, shift)?)?;
        }
    }
    if h.shoff >= file_end {
        wr(&mut b, 40, 8, sum(h.shoff, shift)?)?;
    }
    let cut = to_usize(file_end)?;
    if cut > b.len() {
        return Err(LayoutError(".text ends beyond the end of the file".into()));
    }
    let mut out = Vec::with_capacity(b.len() + shift as usize);
    out.extend_from_slice(&b[..cut]);
    let gap = region.start - t.text.end;
    for _ in 0..gap / 4 {
        out.extend_from_slice(&S_NOP_0);
    }
    put_appended(&mut out, region, code);
    out.resize(cut + shift as usize, 0);
    out.extend_from_slice(&b[cut..]);
    Ok(out)
}

fn new_segment(mut b: Vec<u8>, region: &Region, code: &[u32]) -> Result<Vec<u8>, LayoutError> {
    let h = header(&b)?;
    // The code, page-aligned in the file as it is in memory.
    let code_off = align_up(b.len() as u64, PAGE);
    b.resize(to_usize(code_off)?, 0);
    put_appended(&mut b, region, code);
    let size = appended_len(region, code) as u64;
    let kind = |b: &[u8], i: usize| rd(b, h.phoff + i * h.phentsize, 4).ok();
    let mut slot = (0..h.phnum)
        .find(|&i| kind(&b, i) == Some(u64::from(PT_GNU_STACK)))
        .ok_or_else(|| LayoutError("no PT_GNU_STACK slot".into()))?;
    // Loadable segments stay sorted by address: move the freed slot after
    // the last PT_LOAD (the entries between shift down by one).
    if let Some(last_load) = (0..h.phnum).rev().find(|&i| kind(&b, i) == Some(u64::from(PT_LOAD))) {
        if last_load > slot {
            let table = h.phoff..h.phoff + h.phnum * h.phentsize;
            let mut entries: Vec<Vec<u8>> = b
                .get(table.clone())
                .ok_or_else(|| LayoutError("program headers out of the file".into()))?
                .chunks(h.phentsize)
                .map(<[u8]>::to_vec)
                .collect();
            let freed = entries.remove(slot);
            entries.insert(last_load, freed);
            b[table].copy_from_slice(&entries.concat());
            slot = last_load;
        }
    }
    let at = h.phoff + slot * h.phentsize;
    for (o, n, v) in [
        (0, 4, u64::from(PT_LOAD)),
        (4, 4, u64::from(PF_R | PF_X)),
        (8, 8, code_off),
        (16, 8, region.start),
        (24, 8, region.start),
        (32, 8, size),
        (40, 8, size),
        (48, 8, PAGE),
    ] {
        wr(&mut b, at + o, n, v)?;
    }
    push_section(
        &mut b,
        &h,
        APPENDED_SECTION,
        &[
            (4, 4, u64::from(SHT_PROGBITS)),
            (8, 8, SHF_ALLOC | SHF_EXECINSTR),
            (16, 8, region.start),
            (24, 8, code_off),
            (32, 8, size),
            (48, 8, CODE_ALIGN),
        ],
    )?;
    Ok(b)
}

/// `b` with a non-allocated section `name` holding `contents` at its end
/// (the loader ignores it; readers find it by name).
pub fn append_section(mut b: Vec<u8>, name: &str, contents: &[u8]) -> Result<Vec<u8>, LayoutError> {
    let h = header(&b)?;
    let at = b.len() as u64;
    b.extend_from_slice(contents);
    push_section(
        &mut b,
        &h,
        name,
        &[(4, 4, u64::from(SHT_PROGBITS)), (24, 8, at), (32, 8, contents.len() as u64), (48, 8, 1)],
    )?;
    Ok(b)
}

/// Appends a copy of the section-name table with `name` added and a copy of
/// the section-header table with one more header (`fields`: offset in the
/// header, width, value; the name is set here), and points the ELF header
/// at them (`h`: the headers as they were).
fn push_section(b: &mut Vec<u8>, h: &Header, name: &str, fields: &[(usize, usize, u64)]) -> Result<(), LayoutError> {
    // New section-name table: the old names plus ours.
    let shoff = to_usize(h.shoff)?;
    let strhdr = shoff + h.shstrndx * h.shentsize;
    let (str_off, str_size) = (to_usize(rd(b, strhdr + 24, 8)?)?, to_usize(rd(b, strhdr + 32, 8)?)?);
    let mut names = b
        .get(str_off..str_off.saturating_add(str_size))
        .ok_or_else(|| LayoutError("section name table out of the file".into()))?
        .to_vec();
    let name_at = names.len() as u64;
    names.extend_from_slice(name.as_bytes());
    names.push(0);
    let names_off = b.len() as u64;
    b.extend_from_slice(&names);
    // New section-header table: the old headers plus one for the code.
    let table = b
        .get(shoff..shoff + h.shnum * h.shentsize)
        .ok_or_else(|| LayoutError("section header table out of the file".into()))?
        .to_vec();
    let new_shoff = align_up(b.len() as u64, 8);
    b.resize(to_usize(new_shoff)?, 0);
    b.extend_from_slice(&table);
    let entsize = h.shentsize;
    let strhdr = to_usize(new_shoff)? + h.shstrndx * entsize;
    wr(b, strhdr + 24, 8, names_off)?;
    wr(b, strhdr + 32, 8, names.len() as u64)?;
    let mut sh = vec![0u8; entsize];
    wr(&mut sh, 0, 4, name_at)?;
    for &(o, n, v) in fields {
        wr(&mut sh, o, n, v)?;
    }
    b.extend_from_slice(&sh);
    wr(b, 40, 8, new_shoff)?;
    wr(b, 60, 2, (h.shnum + 1) as u64)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] = include_bytes!("../../../fixtures/gfx942/fp32.co");

    /// Every allocated section and loaded segment of `before` is where it
    /// was in `after` (only `.text` may have grown).
    fn addresses_kept(before: &CodeObject<'_>, after: &CodeObject<'_>) {
        for s in before.elf.sections.iter().filter(|s| s.addr != 0) {
            let t = after.elf.section_by_name(&s.name).unwrap_or_else(|| panic!("{} is gone", s.name));
            assert_eq!(t.addr, s.addr, "{}", s.name);
            assert!(t.size == s.size || (s.name == ".text" && t.size > s.size), "{}", s.name);
        }
        for s in before.segments().iter().filter(|s| s.p_type == PT_LOAD) {
            assert!(after.segments().iter().any(|t| t.p_type == PT_LOAD && t.vaddr == s.vaddr), "{:#x}", s.vaddr);
        }
    }

    #[test]
    fn appended_code_keeps_every_address_in_both_strategies() {
        let co = CodeObject::parse(FIXTURE).expect("fixture");
        let words: Vec<u32> = (0..64u32).map(|i| 0xBF80_0000 | i).collect();
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let grown = grow_region(&co).expect("slack after .text");
        let far = new_segment_region(&co, 0).expect("a spare program header");
        for region in [grown, far] {
            let out = apply(FIXTURE, &co, &region, &words, &[]).expect("laid out");
            let new = CodeObject::parse(&out).expect("parses");
            addresses_kept(&co, &new);
            assert_eq!(new.elf.bytes_at_addr(region.start, code.len() as u64).expect("mapped"), &code[..]);
        }
        assert_eq!((grown.strategy, far.strategy), (Strategy::GrowText, Strategy::NewSegment));
    }

    #[test]
    fn patches_overwrite_bytes_in_place_and_bad_ones_are_refused() {
        let co = CodeObject::parse(FIXTURE).expect("fixture");
        let text = co.elf.section_by_name(".text").expect(".text").clone();
        let patch = Patch { addr: text.addr, bytes: vec![0xAA; 8] };
        let out = apply(FIXTURE, &co, &grow_region(&co).expect("region"), &[], &[patch]).expect("patched");
        assert_eq!(out.len(), FIXTURE.len());
        let new = CodeObject::parse(&out).expect("parses");
        assert_eq!(new.elf.bytes_at_addr(text.addr, 8).expect("mapped"), &[0xAA; 8]);
        let outside = Patch { addr: text.addr + text.size - 4, bytes: vec![0; 8] };
        assert!(apply(FIXTURE, &co, &grow_region(&co).expect("region"), &[], &[outside]).is_err());
    }
}
