//! CUDA fat binaries: the `.nv_fatbin` section of a host executable or
//! library, the device code objects it carries (cubins for a SASS target,
//! PTX), and the functions of a cubin with their code bytes.
//!
//! Layout, little-endian, as nvcc 13.0 writes it and `cuobjdump -xelf`
//! reads it (checked on the H100: the 53,392-byte sm_90 cubin that
//! `cuobjdump` extracts from a benchmark program is the payload of an ELF
//! entry here, byte for byte):
//!
//! - a section is a sequence of containers, each a 16-byte header
//!   ([`CONTAINER_MAGIC`], version, header size, size of what follows)
//!   and entries up to that size;
//! - an entry is a header of at least [`MIN_ENTRY_HEADER`] bytes (kind,
//!   version, header size, payload size, target, flags, and the size of
//!   the uncompressed payload) followed by its payload, padded.
//!
//! Everything here is hostile input (a closed-source program's file):
//! sizes are checked against the bytes at hand, and a malformed container
//! is an error, never a panic.

use std::fmt;

/// First word of every container.
pub const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
/// Size of a container header.
pub const CONTAINER_HEADER: usize = 16;
/// Smallest entry header that holds every field read here.
pub const MIN_ENTRY_HEADER: usize = 64;

/// Offsets of an entry header's fields.
mod entry_field {
    pub const KIND: usize = 0; // u16
    pub const HEADER_SIZE: usize = 4; // u32
    pub const PAYLOAD_SIZE: usize = 8; // u64, padded
    pub const COMPRESSED_SIZE: usize = 16; // u32, 0 when stored as is
    pub const TARGET: usize = 28; // u32, e.g. 90 for sm_90
    pub const FLAGS: usize = 40; // u64
    pub const UNCOMPRESSED_SIZE: usize = 56; // u64
}

/// Entry flags: the payload is a zstd frame (nvcc 13 compresses PTX so).
pub const FLAG_ZSTD: u64 = 0x8000;
/// Entry flags: the payload is LZ4-compressed (older toolkits); not read.
pub const FLAG_LZ4: u64 = 0x2000;

/// Largest payload inflated here: a cubin beyond this is not read.
const MAX_INFLATED: u64 = 512 << 20;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Ptx,
    Cubin,
    Other(u16),
}

/// One device code object of a fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinEntry<'a> {
    pub kind: EntryKind,
    /// The target's number: 90 for sm_90 (a cubin) or compute_90 (PTX).
    pub target: u32,
    pub flags: u64,
    /// The payload as stored (compressed when the flags say so).
    pub payload: &'a [u8],
    /// Size of the payload once inflated (0 when not recorded).
    pub uncompressed_size: u64,
    /// Size of the stored payload without padding (0 when not recorded).
    pub compressed_size: u32,
}

/// Why a fat binary or cubin could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FatbinError {
    /// A container does not start with [`CONTAINER_MAGIC`].
    BadMagic { offset: usize },
    /// A header or payload runs past the end of the bytes.
    Truncated { offset: usize, what: &'static str },
    /// A payload is compressed in a way this reader does not inflate.
    Compressed { flags: u64 },
    /// A payload could not be inflated or read as ELF.
    Corrupt(String),
}

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatbinError::BadMagic { offset } => write!(f, "no fat binary container at offset {offset:#x}"),
            FatbinError::Truncated { offset, what } => write!(f, "{what} at offset {offset:#x} runs past the end"),
            FatbinError::Compressed { flags } => {
                write!(f, "payload compressed in an unsupported way (flags {flags:#x})")
            }
            FatbinError::Corrupt(e) => write!(f, "corrupt payload: {e}"),
        }
    }
}

impl std::error::Error for FatbinError {}

/// Little-endian fields of device-code headers (fat binaries, ELF):
/// `None` past the bytes at hand.
pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u32_at(b, at)?) | (u64::from(u32_at(b, at + 4)?) << 32))
}

/// Bytes of the container whose header `header` begins with: the header
/// (at least [`CONTAINER_HEADER`] bytes, as its own size field says) and
/// what follows it; `None` when `header` is short or the sum overflows.
pub fn container_size(header: &[u8]) -> Option<u64> {
    u64::from(u16_at(header, 6)?).max(CONTAINER_HEADER as u64).checked_add(u64_at(header, 8)?)
}

/// Every entry of every container in `section` (a `.nv_fatbin` section,
/// or a `.fatbin` file). Zero padding between containers is skipped.
pub fn entries(section: &[u8]) -> Result<Vec<FatbinEntry<'_>>, FatbinError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < section.len() {
        // containers are 8-byte aligned; the linker pads with zeros
        if section[at..].iter().take(8).all(|&b| b == 0) {
            at += 8;
            continue;
        }
        let magic = u32_at(section, at).ok_or(FatbinError::Truncated { offset: at, what: "container header" })?;
        if magic != CONTAINER_MAGIC {
            return Err(FatbinError::BadMagic { offset: at });
        }
        let header = u16_at(section, at + 6).map(usize::from);
        let body = u64_at(section, at + 8);
        let (Some(header), Some(body)) = (header, body) else {
            return Err(FatbinError::Truncated { offset: at, what: "container header" });
        };
        let start = at.checked_add(header.max(CONTAINER_HEADER));
        let end = start.and_then(|s| usize::try_from(body).ok().and_then(|b| s.checked_add(b)));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(FatbinError::Truncated { offset: at, what: "container" });
        };
        if end > section.len() {
            return Err(FatbinError::Truncated { offset: at, what: "container" });
        }
        let mut e = start;
        while e < end {
            let (entry, next) = entry_at(section, e, end)?;
            out.push(entry);
            e = next;
        }
        at = end;
    }
    Ok(out)
}

/// The entry at `at`, and where the next one starts.
fn entry_at(b: &[u8], at: usize, end: usize) -> Result<(FatbinEntry<'_>, usize), FatbinError> {
    use entry_field as f;
    let short = FatbinError::Truncated { offset: at, what: "entry header" };
    let header = u32_at(b, at + f::HEADER_SIZE).ok_or(short.clone())? as usize;
    if header < MIN_ENTRY_HEADER || at.checked_add(header).is_none_or(|h| h > end) {
        return Err(short);
    }
    let h = &b[at..at + header];
    let kind = match u16_at(h, f::KIND).ok_or(short.clone())? {
        1 => EntryKind::Ptx,
        2 => EntryKind::Cubin,
        k => EntryKind::Other(k),
    };
    let payload_size = u64_at(h, f::PAYLOAD_SIZE).ok_or(short.clone())?;
    let start = at + header;
    let stop = usize::try_from(payload_size).ok().and_then(|p| start.checked_add(p));
    let Some(stop) = stop.filter(|&s| s <= end) else {
        return Err(FatbinError::Truncated { offset: at, what: "entry payload" });
    };
    let entry = FatbinEntry {
        kind,
        target: u32_at(h, f::TARGET).ok_or(short.clone())?,
        flags: u64_at(h, f::FLAGS).ok_or(short.clone())?,
        payload: &b[start..stop],
        uncompressed_size: u64_at(h, f::UNCOMPRESSED_SIZE).ok_or(short.clone())?,
        compressed_size: u32_at(h, f::COMPRESSED_SIZE).ok_or(short)?,
    };
    Ok((entry, stop))
}

impl FatbinEntry<'_> {
    /// The payload as a plain object: stored bytes, or the inflated zstd
    /// frame. LZ4 payloads are refused.
    pub fn contents(&self) -> Result<std::borrow::Cow<'_, [u8]>, FatbinError> {
        if self.flags & FLAG_ZSTD != 0 {
            if self.uncompressed_size > MAX_INFLATED {
                return Err(FatbinError::Corrupt(format!("{} bytes once inflated", self.uncompressed_size)));
            }
            let stored = match self.compressed_size as usize {
                0 => self.payload,
                n => self.payload.get(..n).ok_or_else(|| FatbinError::Corrupt("compressed size".into()))?,
            };
            let mut out = Vec::new();
            let decoder = zstd::stream::read::Decoder::new(stored).map_err(|e| FatbinError::Corrupt(e.to_string()))?;
            use std::io::Read as _;
            decoder.take(MAX_INFLATED).read_to_end(&mut out).map_err(|e| FatbinError::Corrupt(e.to_string()))?;
            return Ok(std::borrow::Cow::Owned(out));
        }
        if self.flags & FLAG_LZ4 != 0 {
            return Err(FatbinError::Compressed { flags: self.flags });
        }
        Ok(std::borrow::Cow::Borrowed(self.payload))
    }
}

/// The `.nv_fatbin` section of a host ELF file (an executable, a shared
/// library or an object), if it has one.
pub fn host_fatbin(elf: &[u8]) -> Result<Option<&[u8]>, FatbinError> {
    use object::{Object as _, ObjectSection as _};
    let file = object::File::parse(elf).map_err(|e| FatbinError::Corrupt(e.to_string()))?;
    match file.section_by_name(".nv_fatbin") {
        Some(s) => s.data().map(Some).map_err(|e| FatbinError::Corrupt(e.to_string())),
        None => Ok(None),
    }
}

/// A function of a cubin: its (mangled) name and its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFunction {
    pub name: String,
    pub code: Vec<u8>,
}

/// Every function of a cubin: its `.text.<name>` sections.
pub fn cubin_functions(cubin: &[u8]) -> Result<Vec<DeviceFunction>, FatbinError> {
    each_function(cubin, |name, code| DeviceFunction { name: name.to_string(), code: code.to_vec() })
}

/// The names of the functions of a cubin (its `.text.<name>` sections).
pub fn cubin_function_names(cubin: &[u8]) -> Result<Vec<String>, FatbinError> {
    each_function(cubin, |name, _| name.to_string())
}

/// What `keep` makes of each function of a cubin (a `.text.<name>`
/// section with a name and code), from its name and code.
fn each_function<T>(cubin: &[u8], mut keep: impl FnMut(&str, &[u8]) -> T) -> Result<Vec<T>, FatbinError> {
    use object::{Object as _, ObjectSection as _};
    let file = object::File::parse(cubin).map_err(|e| FatbinError::Corrupt(e.to_string()))?;
    let mut out = Vec::new();
    for s in file.sections() {
        let Some(name) = s.name().ok().and_then(|n| n.strip_prefix(".text.")) else { continue };
        let code = s.data().map_err(|e| FatbinError::Corrupt(e.to_string()))?;
        if name.is_empty() || code.is_empty() {
            continue;
        }
        out.push(keep(name, code));
    }
    Ok(out)
}

/// The names of the functions of every cubin for `sm` in a fat binary
/// (entries that cannot be read are skipped).
pub fn function_names_for_target(section: &[u8], sm: u32) -> Result<Vec<String>, FatbinError> {
    for_target(section, sm, cubin_function_names).map(|(names, _)| names)
}

/// The functions of every cubin for `sm` (e.g. 90) in a fat binary. An
/// entry that cannot be read is skipped and counted in the second value.
pub fn functions_for_target(section: &[u8], sm: u32) -> Result<(Vec<DeviceFunction>, usize), FatbinError> {
    for_target(section, sm, cubin_functions)
}

/// What `read` gives of every cubin for `sm` in a fat binary, and how many
/// such cubins could not be read.
fn for_target<T>(
    section: &[u8],
    sm: u32,
    read: impl Fn(&[u8]) -> Result<Vec<T>, FatbinError>,
) -> Result<(Vec<T>, usize), FatbinError> {
    let mut out = Vec::new();
    let mut unreadable = 0;
    for e in entries(section)? {
        if e.kind != EntryKind::Cubin || e.target != sm {
            continue;
        }
        match e.contents().and_then(|c| read(&c)) {
            Ok(found) => out.extend(found),
            Err(_) => unreadable += 1,
        }
    }
    Ok((out, unreadable))
}

/// The SASS targets a fat binary has cubins for, sorted, without repeats.
pub fn cubin_targets(section: &[u8]) -> Result<Vec<u32>, FatbinError> {
    let mut t: Vec<u32> =
        entries(section)?.into_iter().filter(|e| e.kind == EntryKind::Cubin).map(|e| e.target).collect();
    t.sort_unstable();
    t.dedup();
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(entries: &[(u16, u32, u64, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (kind, target, flags, payload) in entries {
            let mut h = vec![0u8; 72];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
            h[4..8].copy_from_slice(&72u32.to_le_bytes());
            h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            h[28..32].copy_from_slice(&target.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            body.extend_from_slice(&h);
            body.extend_from_slice(payload);
        }
        let mut c = Vec::new();
        c.extend_from_slice(&CONTAINER_MAGIC.to_le_bytes());
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(body.len() as u64).to_le_bytes());
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn containers_and_entries_are_read_in_order() {
        let mut s = container(&[(2, 90, 0x11, b"cubin-a"), (1, 90, 0x11, b"ptx")]);
        s.extend_from_slice(&[0u8; 8]); // alignment padding between containers
        s.extend_from_slice(&container(&[(2, 80, 0x11, b"cubin-b")]));
        let e = entries(&s).expect("entries");
        let got: Vec<_> = e.iter().map(|e| (e.kind, e.target, e.payload)).collect();
        assert_eq!(
            got,
            vec![
                (EntryKind::Cubin, 90, &b"cubin-a"[..]),
                (EntryKind::Ptx, 90, &b"ptx"[..]),
                (EntryKind::Cubin, 80, &b"cubin-b"[..])
            ]
        );
        assert_eq!(cubin_targets(&s).expect("targets"), vec![80, 90]);
    }

    #[test]
    fn malformed_containers_are_errors() {
        let good = container(&[(2, 90, 0x11, b"cubin")]);
        assert_eq!(entries(b"\x01\x02\x03\x04\x05\x06\x07\x08"), Err(FatbinError::BadMagic { offset: 0 }));
        for cut in 1..good.len() {
            assert!(entries(&good[..cut]).is_err(), "a container cut at {cut} is refused");
        }
        // an entry header smaller than the fields read
        let mut small = good.clone();
        small[16 + 4..16 + 8].copy_from_slice(&8u32.to_le_bytes());
        assert!(entries(&small).is_err());
        // a payload size past the container
        let mut long = good;
        long[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(entries(&long).is_err());
    }

    #[test]
    fn lz4_payloads_are_refused_and_zstd_inflated() {
        let frame = zstd::encode_all(&b"inflated"[..], 3).expect("zstd");
        let s = container(&[(2, 90, 0x11 | FLAG_LZ4, b"x"), (2, 90, 0x11 | FLAG_ZSTD, &frame)]);
        let e = entries(&s).expect("entries");
        assert_eq!(e[0].contents(), Err(FatbinError::Compressed { flags: 0x11 | FLAG_LZ4 }));
        assert_eq!(&*e[1].contents().expect("zstd"), b"inflated");
    }
}
