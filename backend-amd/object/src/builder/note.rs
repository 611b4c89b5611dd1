//! Register counts in the metadata note (`.vgpr_count`, `.sgpr_count`),
//! patched in place after a kernel's allocation grew. The runtime only
//! reports these counts (it reads the allocation from the descriptor), so a
//! count whose new value does not fit its MessagePack encoding is left as
//! it was and the outcome says so, rather than rebuilding the note.

use crate::code_object::CodeObject;
use crate::metadata::{NOTE_OWNER_AMDGPU, NT_AMDGPU_METADATA};

use super::Patch;

/// End of the MessagePack value starting at `at` (None if malformed).
fn skip(b: &[u8], at: usize) -> Option<usize> {
    let t = *b.get(at)?;
    let be = |from: usize, n: usize| -> Option<usize> {
        let s = b.get(from..from + n)?;
        Some(s.iter().fold(0usize, |a, &x| (a << 8) | usize::from(x)))
    };
    let items = |mut p: usize, n: usize| -> Option<usize> {
        for _ in 0..n {
            p = skip(b, p)?;
        }
        Some(p)
    };
    match t {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => Some(at + 1),
        0x80..=0x8f => items(at + 1, 2 * usize::from(t & 0xf)),
        0x90..=0x9f => items(at + 1, usize::from(t & 0xf)),
        0xa0..=0xbf => Some(at + 1 + usize::from(t & 0x1f)),
        0xcc | 0xd0 => Some(at + 2),
        0xcd | 0xd1 => Some(at + 3),
        0xce | 0xd2 | 0xca => Some(at + 5),
        0xcf | 0xd3 | 0xcb => Some(at + 9),
        0xd9 | 0xc4 => Some(at + 2 + be(at + 1, 1)?),
        0xda | 0xc5 => Some(at + 3 + be(at + 1, 2)?),
        0xdb | 0xc6 => Some(at + 5 + be(at + 1, 4)?),
        0xdc => items(at + 3, be(at + 1, 2)?),
        0xdd => items(at + 5, be(at + 1, 4)?),
        0xde => items(at + 3, 2 * be(at + 1, 2)?),
        0xdf => items(at + 5, 2 * be(at + 1, 4)?),
        _ => None,
    }
}

/// The string at `at`, if it is one.
fn string(b: &[u8], at: usize) -> Option<&str> {
    let end = skip(b, at)?;
    let start = match *b.get(at)? {
        0xa0..=0xbf => at + 1,
        0xd9 => at + 2,
        0xda => at + 3,
        0xdb => at + 5,
        _ => return None,
    };
    std::str::from_utf8(b.get(start..end)?).ok()
}

/// Map entries at `at`: (key, value offset) pairs and the map's end.
fn entries(b: &[u8], at: usize) -> Option<Vec<(String, usize)>> {
    let t = *b.get(at)?;
    let (n, mut p) = match t {
        0x80..=0x8f => (usize::from(t & 0xf), at + 1),
        0xde => (usize::from(u16::from_be_bytes([*b.get(at + 1)?, *b.get(at + 2)?])), at + 3),
        _ => return None,
    };
    let mut out = Vec::new();
    for _ in 0..n {
        let key = string(b, p).map(String::from).unwrap_or_default();
        let v = skip(b, p)?;
        out.push((key, v));
        p = skip(b, v)?;
    }
    Some(out)
}

/// `value` encoded in the width of the unsigned integer at `at`.
fn same_width(b: &[u8], at: usize, value: u64) -> Option<Vec<u8>> {
    match *b.get(at)? {
        0x00..=0x7f if value < 0x80 => Some(vec![value as u8]),
        0xcc if value <= 0xff => Some(vec![0xcc, value as u8]),
        0xcd if value <= 0xffff => Some([&[0xcd][..], &(value as u16).to_be_bytes()].concat()),
        0xce if value <= 0xffff_ffff => Some([&[0xce][..], &(value as u32).to_be_bytes()].concat()),
        _ => None,
    }
}

/// Address of the metadata note's descriptor bytes and the bytes.
fn metadata_desc<'a>(co: &CodeObject<'a>) -> Option<(u64, &'a [u8])> {
    for s in co.elf.sections.iter().filter(|s| s.sh_type == crate::elf::SHT_NOTE && s.addr != 0) {
        let data = co.elf.section_data(s).ok()?;
        let mut at = 0usize;
        while at + 12 <= data.len() {
            let word = |o: usize| crate::bytes::u32_at(data, o as u64, "note header").ok().map(|w| w as usize);
            let (namesz, descsz, ntype) = (word(at)?, word(at + 4)?, word(at + 8)?);
            let name = data.get(at + 12..at + 12 + namesz)?;
            let desc_at = (at + 12 + namesz).div_ceil(4) * 4;
            let owner = name.split(|&c| c == 0).next().unwrap_or(&[]);
            if owner == NOTE_OWNER_AMDGPU.as_bytes() && ntype == NT_AMDGPU_METADATA as usize {
                return Some((s.addr + desc_at as u64, data.get(desc_at..desc_at + descsz)?));
            }
            at = (desc_at + descsz).div_ceil(4) * 4;
        }
    }
    None
}

/// The metadata note's kernel entries, read once per object: the note's
/// address and bytes, and each kernel's name with the offset of its map.
#[derive(Debug, Clone)]
pub struct NoteKernels<'a> {
    addr: u64,
    bytes: &'a [u8],
    kernels: Vec<(String, usize)>,
}

impl<'a> NoteKernels<'a> {
    /// The kernel entries of `co`'s metadata note, or why there are none.
    pub fn read(co: &CodeObject<'a>) -> Result<NoteKernels<'a>, String> {
        let (addr, b) = metadata_desc(co).ok_or("no metadata note")?;
        let root = entries(b, 0).ok_or("metadata note is not a map")?;
        let kernels_at =
            root.iter().find(|(k, _)| k == "amdhsa.kernels").map(|&(_, v)| v).ok_or("no amdhsa.kernels")?;
        let (n, mut p) = match *b.get(kernels_at).ok_or("truncated")? {
            t @ 0x90..=0x9f => (usize::from(t & 0xf), kernels_at + 1),
            0xdc => (usize::from(u16::from_be_bytes([b[kernels_at + 1], b[kernels_at + 2]])), kernels_at + 3),
            _ => return Err("amdhsa.kernels is not an array".into()),
        };
        let mut kernels = Vec::with_capacity(n);
        for _ in 0..n {
            let map = entries(b, p).ok_or("kernel entry is not a map")?;
            if let Some(name) = map.iter().find(|(k, _)| k == ".name").and_then(|&(_, v)| string(b, v)) {
                kernels.push((name.to_string(), p));
            }
            p = skip(b, p).ok_or("malformed kernel entry")?;
        }
        Ok(NoteKernels { addr, bytes: b, kernels })
    }
}

/// Patches raising `kernel`'s `.vgpr_count` and `.sgpr_count` to at least
/// `vgprs` and `sgprs` in the note `note` read; `Err` says why they stay as
/// they were.
pub fn count_patches(
    note: &Result<NoteKernels<'_>, String>,
    kernel: &str,
    vgprs: u64,
    sgprs: u64,
) -> Result<Vec<Patch>, String> {
    let note = note.as_ref().map_err(Clone::clone)?;
    let b = note.bytes;
    let &(_, at) = note.kernels.iter().find(|(n, _)| n == kernel).ok_or(format!("no metadata for kernel {kernel}"))?;
    let map = entries(b, at).ok_or("kernel entry is not a map")?;
    let mut patches = Vec::new();
    for (key, want) in [(".vgpr_count", vgprs), (".sgpr_count", sgprs)] {
        let Some(&(_, v)) = map.iter().find(|(k, _)| k == key) else { continue };
        let old =
            rmpv::decode::read_value(&mut &b[v..]).ok().and_then(|x| x.as_u64()).ok_or("count is not an integer")?;
        if want <= old {
            continue;
        }
        let bytes = same_width(b, v, want).ok_or_else(|| format!("{key} {want} does not fit the encoding of {old}"))?;
        patches.push(Patch { addr: note.addr + v as u64, bytes });
    }
    Ok(patches)
}
