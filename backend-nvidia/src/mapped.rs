//! Device code in files on disk, read without loading them whole: where
//! a host ELF file's `.nv_fatbin` section lies (from its section headers
//! alone), its fat binary containers one at a time under a byte budget,
//! and the files mapped into this process (`/proc/self/maps`) that carry
//! device code (cuBLAS, cuDNN, PyTorch's libraries: hundreds of MB each).

use crate::fatbin::{container_size, u16_at, u32_at, u64_at, CONTAINER_HEADER, CONTAINER_MAGIC};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where a section lies in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionRange {
    pub offset: u64,
    pub size: u64,
}

/// One entry of an ELF section header table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfSection {
    /// Offset of its name in the section names' section.
    pub name: u32,
    /// Its type (`SHT_*`).
    pub kind: u32,
    pub offset: u64,
    pub size: u64,
}

/// `SHT_NOBITS`: a section that takes no bytes of the file.
pub const SHT_NOBITS: u32 = 8;

/// What the headers of an ELF64 little-endian file (a host library, a
/// cubin) say, read through `read(offset, len)` from the headers alone:
/// a file on disk and an image in memory are read alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfHeaders {
    pub sections: Vec<ElfSection>,
    /// Index of the section that holds the sections' names.
    pub names_section: usize,
    /// Where the section header table ends.
    pub section_table_end: u64,
    /// Where the program header table ends (`None`: past `u64`).
    pub program_table_end: Option<u64>,
}

/// The headers of the ELF64 little-endian file `read` gives (`None`: not
/// one, a section header entry under 64 bytes, no sections, or a table
/// that cannot be read).
pub fn elf_headers(read: impl Fn(u64, usize) -> Option<Vec<u8>>) -> Option<ElfHeaders> {
    let eh = read(0, 64)?;
    if eh.get(0..6) != Some(&b"\x7fELF\x02\x01"[..]) {
        return None;
    }
    let (shoff, shentsize, shnum) = (u64_at(&eh, 40)?, u64::from(u16_at(&eh, 58)?), u64::from(u16_at(&eh, 60)?));
    if shentsize < 64 || shnum == 0 {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(&eh, 32)?, u64::from(u16_at(&eh, 54)?), u64::from(u16_at(&eh, 56)?));
    let table = read(shoff, (shentsize * shnum) as usize)?;
    let sections = table
        .chunks_exact(shentsize as usize)
        .map(|h| {
            Some(ElfSection { name: u32_at(h, 0)?, kind: u32_at(h, 4)?, offset: u64_at(h, 24)?, size: u64_at(h, 32)? })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(ElfHeaders {
        sections,
        names_section: usize::from(u16_at(&eh, 62)?),
        section_table_end: shoff.checked_add(shentsize * shnum)?,
        program_table_end: phoff.checked_add(phentsize * phnum),
    })
}

/// The `.nv_fatbin` section of an ELF64 little-endian file, read from its
/// section headers only. Anything unreadable: `None`.
pub fn fatbin_section(path: &Path) -> Option<SectionRange> {
    use std::os::unix::fs::FileExt as _;
    let file = std::fs::File::open(path).ok()?;
    let read = |at: u64, n: usize| {
        let mut bytes = vec![0u8; n];
        file.read_exact_at(&mut bytes, at).ok()?;
        Some(bytes)
    };
    let headers = elf_headers(read)?;
    let names_section = headers.sections.get(headers.names_section)?;
    if names_section.size > 1 << 24 {
        return None;
    }
    let names = read(names_section.offset, names_section.size as usize)?;
    headers.sections.iter().find_map(|s| {
        names
            .get(s.name as usize..)
            .is_some_and(|n| n.starts_with(b".nv_fatbin\0"))
            .then_some(SectionRange { offset: s.offset, size: s.size })
    })
}

/// Whether a file has a `.nv_fatbin` section (device code).
pub fn has_fatbin_section(path: &Path) -> bool {
    fatbin_section(path).is_some()
}

/// How far a read of a fat binary section got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContainersRead {
    /// Containers handed on.
    pub containers: usize,
    /// Bytes of the section read.
    pub bytes: u64,
    /// Bytes of the section left unread: over the budget, or after a
    /// malformed container.
    pub left: u64,
}

/// Hand each fat binary container of the section at `range` of `path`
/// (header and entries, as [`crate::fatbin::entries`] reads them) to
/// `each` with its offset in the file, one at a time, reading at most
/// `budget` bytes of the section;
/// `each` answers false to stop (that container counts as left unread).
pub fn for_each_container(
    path: &Path,
    range: SectionRange,
    budget: u64,
    mut each: impl FnMut(u64, &[u8]) -> bool,
) -> std::io::Result<ContainersRead> {
    let mut f = std::fs::File::open(path)?;
    let mut read = ContainersRead::default();
    let mut at = 0u64;
    let mut buf = Vec::new();
    while at + 8 <= range.size {
        let mut head = [0u8; CONTAINER_HEADER];
        let n = head.len().min((range.size - at) as usize);
        f.seek(SeekFrom::Start(range.offset + at))?;
        f.read_exact(&mut head[..n])?;
        // containers are 8-byte aligned; the linker pads with zeros
        if head[..8].iter().all(|&b| b == 0) {
            at += 8;
            continue;
        }
        if n < CONTAINER_HEADER || u32_at(&head, 0) != Some(CONTAINER_MAGIC) {
            break;
        }
        let Some(whole) = container_size(&head).filter(|w| at + w <= range.size) else { break };
        if read.bytes + whole > budget {
            break;
        }
        buf.resize(whole as usize, 0);
        f.seek(SeekFrom::Start(range.offset + at))?;
        f.read_exact(&mut buf)?;
        if !each(range.offset + at, &buf) {
            break;
        }
        read.containers += 1;
        read.bytes += whole;
        at += whole;
    }
    read.left = range.size.saturating_sub(at);
    Ok(read)
}

/// The absolute paths of the files in a `/proc/<pid>/maps` text, each
/// once, in mapping order.
pub fn paths_in_maps(maps: &str) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|p| p.starts_with('/') && seen.insert(*p))
        .map(PathBuf::from)
        .collect()
}

/// The file an address of a process lies in and its offset there, from
/// that process's `/proc/<pid>/maps` text (`None`: anonymous memory, or
/// not mapped).
pub fn file_offset_in_maps(maps: &str, addr: u64) -> Option<(PathBuf, u64)> {
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
        if !(start..end).contains(&addr) {
            return None;
        }
        let offset = u64::from_str_radix(fields.nth(1)?, 16).ok()?;
        let path = fields.nth(2).filter(|p| p.starts_with('/'))?;
        Some((PathBuf::from(path), addr - start + offset))
    })
}

/// Whether an address of this process lies in the `.nv_fatbin` section of
/// a file mapped here (device code a file's index reads anyway).
pub fn in_mapped_fatbin(addr: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return false };
    file_offset_in_maps(&maps, addr).is_some_and(|(path, at)| {
        fatbin_section(&path).is_some_and(|r| (r.offset..r.offset.saturating_add(r.size)).contains(&at))
    })
}

/// This process's memory, read through `/proc/self/mem`: a read of an
/// address that is not mapped (or not readable) fails instead of faulting,
/// so memory a program only points at can be read safely.
#[derive(Debug)]
pub struct OwnMemory(std::fs::File);

impl OwnMemory {
    /// `None` where `/proc/self/mem` cannot be opened.
    pub fn open() -> Option<OwnMemory> {
        std::fs::File::open("/proc/self/mem").ok().map(OwnMemory)
    }

    /// `n` bytes from address `addr`; `None` when any of them cannot be read.
    pub fn read(&self, addr: u64, n: usize) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt as _;
        let mut bytes = vec![0u8; n];
        self.0.read_exact_at(&mut bytes, addr).ok()?;
        Some(bytes)
    }
}

/// Regular files mapped into this process with device code, no larger
/// than `max_bytes`, in mapping order; the xfpx tool library is left out.
pub fn files_with_device_code(max_bytes: u64) -> Vec<PathBuf> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    paths_in_maps(&maps)
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(crate::TOOL_FILE_NAME))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= max_bytes) && has_fatbin_section(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("xfpx-mapped-{}-{name}", std::process::id()))
    }

    #[test]
    fn own_memory_reads_fail_where_nothing_is_mapped() {
        let memory = OwnMemory::open().expect("/proc/self/mem");
        let bytes = b"some bytes of this process".to_vec();
        assert_eq!(memory.read(bytes.as_ptr() as u64, bytes.len()), Some(bytes.clone()));
        assert_eq!(memory.read(bytes.as_ptr() as u64 + 5, 5), Some(b"bytes".to_vec()));
        assert_eq!(memory.read(0x10, 4), None, "the zero page");
        assert_eq!(memory.read(u64::MAX - 8, 4), None);
    }

    #[test]
    fn addresses_are_placed_in_their_mapped_file() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/app\n\
                    7f0000000000-7f0000100000 r--p 00200000 08:02 99 /lib/libx.so\n\
                    7f0000100000-7f0000200000 rw-p 00000000 00:00 0 \n";
        assert_eq!(file_offset_in_maps(maps, 0x400010), Some((PathBuf::from("/usr/bin/app"), 0x10)));
        assert_eq!(file_offset_in_maps(maps, 0x7f0000000020), Some((PathBuf::from("/lib/libx.so"), 0x200020)));
        assert_eq!(file_offset_in_maps(maps, 0x7f0000100020), None, "anonymous memory");
        assert_eq!(file_offset_in_maps(maps, 0x10), None, "not mapped");
        assert_eq!(file_offset_in_maps("garbage line\n", 0x10), None);
    }

    #[test]
    fn fatbin_sections_are_found_from_headers() {
        // an ELF64 with sections "", ".nv_fatbin", ".shstrtab"
        let names = b"\0.nv_fatbin\0.shstrtab\0";
        let shoff = 64 + names.len() as u64;
        let mut elf = vec![0u8; 64];
        elf[0..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[40..48].copy_from_slice(&shoff.to_le_bytes());
        elf[58..60].copy_from_slice(&64u16.to_le_bytes());
        elf[60..62].copy_from_slice(&3u16.to_le_bytes());
        elf[62..64].copy_from_slice(&2u16.to_le_bytes());
        elf.extend_from_slice(names);
        for (name, off, size) in [(0u32, 0u64, 0u64), (1, 7, 9), (12, 64, names.len() as u64)] {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[24..32].copy_from_slice(&off.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            elf.extend_from_slice(&h);
        }
        let path = temp("fatbin.elf");
        std::fs::write(&path, &elf).expect("write");
        assert_eq!(fatbin_section(&path), Some(SectionRange { offset: 7, size: 9 }));
        elf[65 + 3] = b'x'; // ".nv_xatbin"
        std::fs::write(&path, &elf).expect("write");
        assert!(!has_fatbin_section(&path));
        std::fs::write(&path, &elf[..70]).expect("write");
        assert!(!has_fatbin_section(&path), "truncated");
        assert!(!has_fatbin_section(Path::new("/proc/self/status")));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn maps_name_each_file_once() {
        let maps = "\
7f00-7f01 r--p 00000000 08:01 12 /usr/lib/libcublas.so.12
7f01-7f02 r-xp 00001000 08:01 12 /usr/lib/libcublas.so.12
7f02-7f03 rw-p 00000000 00:00 0 
7f03-7f04 rw-p 00000000 00:00 0 [heap]
7f04-7f05 r--p 00000000 08:01 13 /opt/app/libtorch_cuda.so
";
        assert_eq!(
            paths_in_maps(maps),
            [PathBuf::from("/usr/lib/libcublas.so.12"), PathBuf::from("/opt/app/libtorch_cuda.so")]
        );
    }
}
