//! A bounds-checked reader for 64-bit little-endian ELF files: header,
//! section headers, program headers, symbols and notes. It serves both AMDGPU
//! code objects and host executables (for their `.hip_fatbin` section). Every
//! offset and size from the file is checked; malformed input is an error.

use serde::Serialize;

use crate::bytes::{cstr_at, slice, u16_at, u32_at, u64_at};
use crate::error::{Error, Result};

pub const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
pub const ELFCLASS64: u8 = 2;
pub const ELFDATA2LSB: u8 = 1;
pub const EM_AMDGPU: u16 = 224;
pub const EM_X86_64: u16 = 62;
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;

pub const SHT_PROGBITS: u32 = 1;
pub const SHT_SYMTAB: u32 = 2;
pub const SHT_NOTE: u32 = 7;
pub const SHT_NOBITS: u32 = 8;
pub const SHT_DYNSYM: u32 = 11;
pub const SHF_ALLOC: u64 = 0x2;
pub const SHF_EXECINSTR: u64 = 0x4;

pub const PT_LOAD: u32 = 1;
pub const PT_NOTE: u32 = 4;
pub const PT_GNU_STACK: u32 = 0x6474_e551;
pub const PF_X: u32 = 1;
pub const PF_R: u32 = 4;

/// Sizes of one ELF64 program header and section header.
pub const ELF64_PHDR_SIZE: usize = 56;
pub const ELF64_SHDR_SIZE: usize = 64;

pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;

/// Limits that keep hostile counts from driving huge allocations.
const MAX_SECTIONS: u64 = 1 << 16;
const MAX_SEGMENTS: u64 = 1 << 16;

/// The fields of the ELF header this crate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ElfHeader {
    pub os_abi: u8,
    pub abi_version: u8,
    pub e_type: u16,
    pub e_machine: u16,
    pub e_flags: u32,
    pub e_entry: u64,
    pub e_phoff: u64,
    pub e_shoff: u64,
    pub e_phnum: u16,
    pub e_shnum: u16,
    pub e_shstrndx: u16,
}

/// A section header with its name resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    pub index: usize,
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub addralign: u64,
    pub entsize: u64,
}

impl Section {
    pub fn is_executable(&self) -> bool {
        self.flags & SHF_EXECINSTR != 0
    }

    /// Whether `addr` lies in this section's address range.
    pub fn contains_addr(&self, addr: u64) -> bool {
        addr >= self.addr && addr - self.addr < self.size
    }
}

/// A program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// A symbol table entry with its name resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    pub kind: u8,
    pub bind: u8,
    pub visibility: u8,
    pub shndx: u16,
}

/// One note: owner name, type and descriptor bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note<'a> {
    pub name: String,
    pub n_type: u32,
    pub desc: &'a [u8],
}

/// A parsed ELF64 LE file borrowing its bytes.
#[derive(Debug, Clone)]
pub struct ElfFile<'a> {
    pub bytes: &'a [u8],
    pub header: ElfHeader,
    pub sections: Vec<Section>,
    pub segments: Vec<Segment>,
}

/// Whether `bytes` starts with the ELF magic.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(&ELF_MAGIC)
}

impl<'a> ElfFile<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        let ident = slice(bytes, 0, 16, "ELF identification")?;
        if ident[..4] != ELF_MAGIC {
            return Err(Error::malformed("ELF header", "bad magic"));
        }
        if ident[4] != ELFCLASS64 || ident[5] != ELFDATA2LSB {
            return Err(Error::unsupported("ELF", "only 64-bit little-endian ELF files are read"));
        }
        let header = ElfHeader {
            os_abi: ident[7],
            abi_version: ident[8],
            e_type: u16_at(bytes, 16, "ELF header")?,
            e_machine: u16_at(bytes, 18, "ELF header")?,
            e_entry: u64_at(bytes, 24, "ELF header")?,
            e_phoff: u64_at(bytes, 32, "ELF header")?,
            e_shoff: u64_at(bytes, 40, "ELF header")?,
            e_flags: u32_at(bytes, 48, "ELF header")?,
            e_phnum: u16_at(bytes, 56, "ELF header")?,
            e_shnum: u16_at(bytes, 60, "ELF header")?,
            e_shstrndx: u16_at(bytes, 62, "ELF header")?,
        };
        let phentsize = u16_at(bytes, 54, "ELF header")?;
        let shentsize = u16_at(bytes, 58, "ELF header")?;

        let mut segments = Vec::new();
        if header.e_phnum > 0 {
            if phentsize < 56 {
                return Err(Error::malformed("ELF header", format!("e_phentsize {phentsize} < 56")));
            }
            if u64::from(header.e_phnum) > MAX_SEGMENTS {
                return Err(Error::malformed("ELF header", "too many program headers"));
            }
            for i in 0..u64::from(header.e_phnum) {
                let at = i
                    .checked_mul(u64::from(phentsize))
                    .and_then(|o| o.checked_add(header.e_phoff))
                    .ok_or_else(|| Error::malformed("program header table", "offset overflows"))?;
                let ph = slice(bytes, at, 56, "program header")?;
                segments.push(Segment {
                    p_type: u32_at(ph, 0, "program header")?,
                    flags: u32_at(ph, 4, "program header")?,
                    offset: u64_at(ph, 8, "program header")?,
                    vaddr: u64_at(ph, 16, "program header")?,
                    paddr: u64_at(ph, 24, "program header")?,
                    filesz: u64_at(ph, 32, "program header")?,
                    memsz: u64_at(ph, 40, "program header")?,
                    align: u64_at(ph, 48, "program header")?,
                });
            }
        }

        let mut raw_sections = Vec::new();
        if header.e_shoff != 0 && header.e_shnum > 0 {
            if shentsize < 64 {
                return Err(Error::malformed("ELF header", format!("e_shentsize {shentsize} < 64")));
            }
            if u64::from(header.e_shnum) > MAX_SECTIONS {
                return Err(Error::malformed("ELF header", "too many sections"));
            }
            for i in 0..u64::from(header.e_shnum) {
                let at = i
                    .checked_mul(u64::from(shentsize))
                    .and_then(|o| o.checked_add(header.e_shoff))
                    .ok_or_else(|| Error::malformed("section header table", "offset overflows"))?;
                let sh = slice(bytes, at, 64, "section header")?;
                raw_sections.push((
                    u32_at(sh, 0, "section header")?,
                    Section {
                        index: i as usize,
                        name: String::new(),
                        sh_type: u32_at(sh, 4, "section header")?,
                        flags: u64_at(sh, 8, "section header")?,
                        addr: u64_at(sh, 16, "section header")?,
                        offset: u64_at(sh, 24, "section header")?,
                        size: u64_at(sh, 32, "section header")?,
                        link: u32_at(sh, 40, "section header")?,
                        info: u32_at(sh, 44, "section header")?,
                        addralign: u64_at(sh, 48, "section header")?,
                        entsize: u64_at(sh, 56, "section header")?,
                    },
                ));
            }
        }
        let shstr = match raw_sections.get(usize::from(header.e_shstrndx)) {
            Some((_, s)) if header.e_shstrndx != 0 => Some(slice(bytes, s.offset, s.size, "section name table")?),
            _ => None,
        };
        let mut sections = Vec::with_capacity(raw_sections.len());
        for (name_off, mut s) in raw_sections {
            if let Some(table) = shstr {
                s.name = cstr_at(table, u64::from(name_off), "section name")?;
            }
            sections.push(s);
        }
        Ok(ElfFile { bytes, header, sections, segments })
    }

    pub fn section_by_name(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// File bytes of a section (empty for `SHT_NOBITS`).
    pub fn section_data(&self, section: &Section) -> Result<&'a [u8]> {
        if section.sh_type == SHT_NOBITS {
            return Ok(&[]);
        }
        slice(self.bytes, section.offset, section.size, "section contents")
    }

    /// File bytes of a segment.
    pub fn segment_data(&self, segment: &Segment) -> Result<&'a [u8]> {
        slice(self.bytes, segment.offset, segment.filesz, "segment contents")
    }

    /// The section (with file contents) that holds virtual address `addr`.
    pub fn section_at_addr(&self, addr: u64) -> Option<&Section> {
        self.sections.iter().find(|s| s.index != 0 && s.flags & 0x2 != 0 && s.contains_addr(addr))
    }

    /// `len` bytes at virtual address `addr`, through the section that holds them.
    pub fn bytes_at_addr(&self, addr: u64, len: u64) -> Result<&'a [u8]> {
        let section = self
            .section_at_addr(addr)
            .ok_or_else(|| Error::malformed("address", format!("0x{addr:x} is in no allocated section")))?;
        let data = self.section_data(section)?;
        slice(data, addr - section.addr, len, "data at address")
    }

    /// Symbols of the first table of type `sh_type` (`SHT_SYMTAB` or `SHT_DYNSYM`).
    pub fn symbols(&self, sh_type: u32) -> Result<Vec<Symbol>> {
        let Some(table) = self.sections.iter().find(|s| s.sh_type == sh_type) else {
            return Ok(Vec::new());
        };
        let data = self.section_data(table)?;
        let strtab = self
            .sections
            .get(table.link as usize)
            .ok_or_else(|| Error::malformed("symbol table", "sh_link names no string table"))?;
        let strings = self.section_data(strtab)?;
        let count = data.len() / 24;
        let mut out = Vec::with_capacity(count);
        for i in 0..count as u64 {
            let e = slice(data, i * 24, 24, "symbol")?;
            let name_off = u32_at(e, 0, "symbol")?;
            let info = e[4];
            out.push(Symbol {
                name: cstr_at(strings, u64::from(name_off), "symbol name")?,
                kind: info & 0xf,
                bind: info >> 4,
                visibility: e[5] & 3,
                shndx: u16_at(e, 6, "symbol")?,
                value: u64_at(e, 8, "symbol")?,
                size: u64_at(e, 16, "symbol")?,
            });
        }
        Ok(out)
    }

    /// Notes of every `PT_NOTE` segment, or of `SHT_NOTE` sections when there is none.
    pub fn notes(&self) -> Result<Vec<Note<'a>>> {
        let mut regions = Vec::new();
        for seg in self.segments.iter().filter(|s| s.p_type == PT_NOTE) {
            regions.push(self.segment_data(seg)?);
        }
        if regions.is_empty() {
            for s in self.sections.iter().filter(|s| s.sh_type == SHT_NOTE) {
                regions.push(self.section_data(s)?);
            }
        }
        let mut notes = Vec::new();
        for region in regions {
            parse_notes(region, &mut notes)?;
        }
        Ok(notes)
    }
}

fn align4(v: u64) -> Option<u64> {
    v.checked_add(3).map(|x| x & !3)
}

fn parse_notes<'a>(region: &'a [u8], out: &mut Vec<Note<'a>>) -> Result<()> {
    let mut at = 0u64;
    let end = region.len() as u64;
    while at + 12 <= end {
        let namesz = u64::from(u32_at(region, at, "note header")?);
        let descsz = u64::from(u32_at(region, at + 4, "note header")?);
        let n_type = u32_at(region, at + 8, "note header")?;
        let name_at = at + 12;
        let name_bytes = slice(region, name_at, namesz, "note name")?;
        let name_end = name_bytes.iter().position(|&b| b == 0).unwrap_or(name_bytes.len());
        let name = String::from_utf8_lossy(&name_bytes[..name_end]).into_owned();
        let desc_at = align4(name_at + namesz).ok_or_else(|| Error::malformed("note", "size overflows"))?;
        let desc = slice(region, desc_at, descsz, "note descriptor")?;
        out.push(Note { name, n_type, desc });
        at = align4(desc_at + descsz).ok_or_else(|| Error::malformed("note", "size overflows"))?;
    }
    Ok(())
}
