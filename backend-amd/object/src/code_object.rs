//! An AMDGPU code object (ELF64, `EM_AMDGPU`, code object v4-v6): its target,
//! kernels (`name` + `name.kd`), each kernel's descriptor, entry and code
//! range, the metadata note, and the section/segment layout including the
//! slack between the end of `.text` and the next loadable segment.

use std::ops::Range;

use serde::Serialize;

use crate::descriptor::{raw, raw::KERNEL_DESCRIPTOR_SIZE, KernelDescriptor};
use crate::elf::{self, ElfFile, Segment, Symbol};
use crate::error::{Error, Result};
use crate::metadata::{self, Metadata};
use crate::target::TargetId;

/// A kernel of a code object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kernel {
    pub name: String,
    /// Address of the 64-byte descriptor (`name.kd`).
    pub descriptor_address: u64,
    pub descriptor: KernelDescriptor,
    /// Address of the first instruction: descriptor address + `kernel_code_entry_byte_offset`.
    pub entry: u64,
    /// Addresses of the kernel's code: from the function symbol's size, or up
    /// to the next function (or the end of its section) when the size is 0.
    pub code: Range<u64>,
    /// File offset of `entry`.
    pub code_file_offset: u64,
    /// Bytes at `entry` that are the kernarg preload compatibility header
    /// (`s_trap 2` + `s_nop 0`s, 256 bytes) rather than the kernel's code: 0
    /// when the descriptor preloads nothing or the header is absent.
    pub preload_header_bytes: u64,
}

/// A function symbol in executable code (kernels and the device functions they call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Function {
    pub name: String,
    /// Code addresses, from the symbol size or up to the next function.
    pub code: Range<u64>,
    /// Whether a kernel descriptor (`name.kd`) names this function.
    pub is_kernel: bool,
}

/// Where `.text` ends and how much room follows it before the next segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextLayout {
    pub text: Range<u64>,
    /// Index of the `PT_LOAD` holding `.text`.
    pub segment: usize,
    /// Start address of the next `PT_LOAD` above `.text` (none if `.text` is the last).
    pub next_segment_vaddr: Option<u64>,
    /// Bytes between the end of `.text` and the next `PT_LOAD` (0: no room to grow in place).
    pub slack: Option<u64>,
}

/// A parsed code object.
#[derive(Debug, Clone)]
pub struct CodeObject<'a> {
    pub elf: ElfFile<'a>,
    pub target: TargetId,
    /// Code object version (4, 5 or 6) from the ELF ABI version.
    pub version: u32,
    pub kernels: Vec<Kernel>,
    /// Every function in executable code, kernels included, by address.
    pub functions: Vec<Function>,
    pub metadata: Option<Metadata>,
    pub text: Option<TextLayout>,
}

/// Code object version for an `EI_ABIVERSION` of the AMDHSA OS ABI.
fn version_from_abi(abi_version: u8) -> Result<u32> {
    match abi_version {
        2 => Ok(4),
        3 => Ok(5),
        4 => Ok(6),
        v => Err(Error::unsupported("code object", format!("ABI version {v} (only code object v4-v6 are read)"))),
    }
}

impl<'a> CodeObject<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        Self::parse_with(bytes, |notes| metadata::from_notes(notes))
    }

    /// [`Self::parse`], with the metadata note as a parse of the same bytes
    /// read it before (a caller parsing one object many times decodes its
    /// note once).
    pub fn parse_with_metadata(bytes: &'a [u8], known: Option<&Metadata>) -> Result<Self> {
        Self::parse_with(bytes, |_| Ok(known.cloned()))
    }

    fn parse_with(
        bytes: &'a [u8],
        read_metadata: impl FnOnce(&[crate::elf::Note<'a>]) -> Result<Option<Metadata>>,
    ) -> Result<Self> {
        let elf = ElfFile::parse(bytes)?;
        if elf.header.e_machine != elf::EM_AMDGPU {
            return Err(Error::unsupported(
                "ELF",
                format!("e_machine {} is not EM_AMDGPU (224)", elf.header.e_machine),
            ));
        }
        if elf.header.os_abi != elf::ELFOSABI_AMDGPU_HSA {
            return Err(Error::unsupported("code object", format!("OS ABI {} is not AMDGPU HSA", elf.header.os_abi)));
        }
        let version = version_from_abi(elf.header.abi_version)?;
        let target = TargetId::from_e_flags(elf.header.e_flags)?;
        let notes = elf.notes()?;
        let metadata = read_metadata(&notes)?;
        if let Some(t) = metadata.as_ref().and_then(|m| m.target.as_deref()) {
            let from_note = TargetId::parse(t)?;
            if from_note.processor != target.processor {
                return Err(Error::malformed(
                    "code object",
                    format!("e_flags say {} but the metadata note says {t}", target.processor),
                ));
            }
        }
        let symbols = {
            let s = elf.symbols(elf::SHT_SYMTAB)?;
            if s.is_empty() {
                elf.symbols(elf::SHT_DYNSYM)?
            } else {
                s
            }
        };
        let kernels = find_kernels(&elf, &symbols)?;
        let functions = find_functions(&elf, &symbols, &kernels);
        let text = text_layout(&elf);
        Ok(CodeObject { elf, target, version, kernels, functions, metadata, text })
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The code bytes of a kernel.
    pub fn kernel_code(&self, kernel: &Kernel) -> Result<&'a [u8]> {
        self.elf.bytes_at_addr(kernel.code.start, kernel.code.end - kernel.code.start)
    }

    /// The code bytes of a function.
    pub fn function_code(&self, function: &Function) -> Result<&'a [u8]> {
        self.elf.bytes_at_addr(function.code.start, function.code.end - function.code.start)
    }

    pub fn segments(&self) -> &[Segment] {
        &self.elf.segments
    }
}

fn find_kernels(elf: &ElfFile<'_>, symbols: &[Symbol]) -> Result<Vec<Kernel>> {
    let mut functions: Vec<&Symbol> = symbols.iter().filter(|s| s.kind == elf::STT_FUNC && s.shndx != 0).collect();
    functions.sort_by_key(|s| s.value);
    let mut kernels = Vec::new();
    for kd_sym in symbols.iter().filter(|s| s.kind == elf::STT_OBJECT && s.name.ends_with(".kd")) {
        let name = kd_sym.name.trim_end_matches(".kd").to_string();
        if kernels.iter().any(|k: &Kernel| k.name == name) {
            continue;
        }
        let bytes = elf.bytes_at_addr(kd_sym.value, KERNEL_DESCRIPTOR_SIZE as u64)?;
        let descriptor = KernelDescriptor::parse(bytes)?;
        let entry = descriptor.entry_address(kd_sym.value).ok_or_else(|| {
            Error::malformed("kernel descriptor", format!("{name}: kernel_code_entry_byte_offset overflows"))
        })?;
        let section = elf.section_at_addr(entry).filter(|s| s.is_executable()).ok_or_else(|| {
            Error::malformed("kernel", format!("{name}: entry 0x{entry:x} is not in executable code"))
        })?;
        let section_end = section.addr.saturating_add(section.size);
        let func = functions.iter().find(|f| f.value == entry);
        let end = match func {
            Some(f) if f.size > 0 => f
                .value
                .checked_add(f.size)
                .filter(|&e| e <= section_end)
                .ok_or_else(|| Error::malformed("symbol", format!("{name}: size runs past its section")))?,
            _ => functions.iter().map(|f| f.value).find(|&v| v > entry && v < section_end).unwrap_or(section_end),
        };
        let code_file_offset = section
            .offset
            .checked_add(entry - section.addr)
            .ok_or_else(|| Error::malformed("section header", format!("{}: offset overflows", section.name)))?;
        let preload_header_bytes = if descriptor.kernarg_preload != 0 {
            preload_header_len(elf.bytes_at_addr(entry, end - entry).unwrap_or(&[]))
        } else {
            0
        };
        kernels.push(Kernel {
            name,
            descriptor_address: kd_sym.value,
            descriptor,
            entry,
            code: entry..end,
            code_file_offset,
            preload_header_bytes,
        });
    }
    kernels.sort_by_key(|k| k.entry);
    Ok(kernels)
}

fn find_functions(elf: &ElfFile<'_>, symbols: &[Symbol], kernels: &[Kernel]) -> Vec<Function> {
    let mut starts: Vec<&Symbol> = symbols.iter().filter(|s| s.kind == elf::STT_FUNC && s.shndx != 0).collect();
    starts.sort_by_key(|s| s.value);
    starts.dedup_by_key(|s| s.value);
    let mut out = Vec::new();
    for f in &starts {
        let Some(section) = elf.section_at_addr(f.value).filter(|s| s.is_executable()) else { continue };
        let section_end = section.addr.saturating_add(section.size);
        let end = match f.value.checked_add(f.size) {
            Some(e) if f.size > 0 && e <= section_end => e,
            _ => starts.iter().map(|g| g.value).find(|&v| v > f.value && v < section_end).unwrap_or(section_end),
        };
        out.push(Function {
            name: f.name.clone(),
            code: f.value..end,
            is_kernel: kernels.iter().any(|k| k.entry == f.value),
        });
    }
    out
}

/// Length of the kernarg preload header at the start of `code` (0 if absent).
fn preload_header_len(code: &[u8]) -> u64 {
    let n = raw::KERNARG_PRELOAD_HEADER_BYTES as usize;
    let Some(header) = code.get(..n) else { return 0 };
    let mut words = header.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    let trap = words.next() == Some(raw::KERNARG_PRELOAD_HEADER_TRAP);
    if trap && words.all(|w| w == raw::KERNARG_PRELOAD_HEADER_NOP) {
        raw::KERNARG_PRELOAD_HEADER_BYTES
    } else {
        0
    }
}

fn text_layout(elf: &ElfFile<'_>) -> Option<TextLayout> {
    let text = elf.section_by_name(".text")?;
    let start = text.addr;
    let end = text.addr.checked_add(text.size)?;
    let loads: Vec<(usize, &Segment)> =
        elf.segments.iter().enumerate().filter(|(_, s)| s.p_type == elf::PT_LOAD).collect();
    let (segment, _) =
        loads.iter().find(|(_, s)| s.vaddr <= start && s.vaddr.checked_add(s.memsz).is_some_and(|e| end <= e))?;
    let next_segment_vaddr = loads.iter().map(|(_, s)| s.vaddr).filter(|&v| v >= end).min();
    Some(TextLayout {
        text: start..end,
        segment: *segment,
        next_segment_vaddr,
        slack: next_segment_vaddr.map(|v| v - end),
    })
}
