//! Reading what the emulator needs from an AMDGPU code object: the loadable
//! image, kernel symbols and descriptors, and the kernel arguments of the
//! metadata note (MessagePack). Also unwraps an uncompressed offload bundle.
//! The input is untrusted: every offset is checked and every failure is a
//! one-line [`CodeObjectError`].

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObjectError(pub String);

impl std::fmt::Display for CodeObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, CodeObjectError> {
    Err(CodeObjectError(msg.into()))
}

fn rd<const N: usize>(b: &[u8], off: u64) -> Result<[u8; N], CodeObjectError> {
    let o = usize::try_from(off).map_err(|_| CodeObjectError("offset out of range".into()))?;
    b.get(o..o.saturating_add(N))
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| CodeObjectError(format!("truncated ELF: read of {N} bytes at {off:#x}")))
}
fn u16_at(b: &[u8], off: u64) -> Result<u16, CodeObjectError> {
    Ok(u16::from_le_bytes(rd::<2>(b, off)?))
}
fn u32_at(b: &[u8], off: u64) -> Result<u32, CodeObjectError> {
    Ok(u32::from_le_bytes(rd::<4>(b, off)?))
}
fn u64_at(b: &[u8], off: u64) -> Result<u64, CodeObjectError> {
    Ok(u64::from_le_bytes(rd::<8>(b, off)?))
}
fn slice(b: &[u8], off: u64, len: u64) -> Result<&[u8], CodeObjectError> {
    let end = off.checked_add(len).ok_or_else(|| CodeObjectError("section overflows".into()))?;
    b.get(off as usize..end as usize)
        .ok_or_else(|| CodeObjectError(format!("section at {off:#x}+{len:#x} lies outside the file")))
}

/// The 64-byte kernel descriptor, as the hardware and loader read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
}

impl KernelDescriptor {
    pub fn parse(b: &[u8]) -> Result<KernelDescriptor, CodeObjectError> {
        if b.len() < 64 {
            return err("kernel descriptor shorter than 64 bytes");
        }
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(b, 0)?,
            private_segment_fixed_size: u32_at(b, 4)?,
            kernarg_size: u32_at(b, 8)?,
            kernel_code_entry_byte_offset: u64_at(b, 16)? as i64,
            compute_pgm_rsrc3: u32_at(b, 44)?,
            compute_pgm_rsrc1: u32_at(b, 48)?,
            compute_pgm_rsrc2: u32_at(b, 52)?,
            kernel_code_properties: u16_at(b, 56)?,
            kernarg_preload: u16_at(b, 58)?,
        })
    }
    pub fn user_sgpr_count(&self) -> u32 {
        (self.compute_pgm_rsrc2 >> 1) & 0x1F
    }
}

/// One argument of the metadata note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub name: Option<String>,
    pub offset: u32,
    pub size: u32,
    pub value_kind: String,
}

impl KernelArg {
    /// Hidden arguments are filled by the runtime (here: by dispatch).
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// A kernel: descriptor, entry and metadata.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    /// Virtual address of the descriptor and of the first instruction.
    pub descriptor_vaddr: u64,
    pub entry_vaddr: u64,
    pub descriptor: KernelDescriptor,
    pub args: Vec<KernelArg>,
    pub kernarg_segment_size: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
}

/// A loaded code object: its memory image (vaddr 0 at offset 0) and kernels.
#[derive(Debug, Clone)]
pub struct CodeObject {
    pub image: Vec<u8>,
    pub target: String,
    pub kernels: Vec<Kernel>,
    /// (vaddr, size) of `.text`.
    pub text: (u64, u64),
}

const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// The code object for `target` inside an offload bundle, or `bytes` itself
/// when it is not a bundle.
pub fn unbundle<'a>(bytes: &'a [u8], target: Option<&str>) -> Result<&'a [u8], CodeObjectError> {
    if bytes.starts_with(b"CCOB") {
        return err("compressed offload bundles are not supported by the emulator; decompress it first");
    }
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return Ok(bytes);
    }
    let count = u64_at(bytes, 24)?;
    let mut off = 32u64;
    let mut found = Vec::new();
    for _ in 0..count.min(4096) {
        let (eo, es, il) = (u64_at(bytes, off)?, u64_at(bytes, off + 8)?, u64_at(bytes, off + 16)?);
        let id = String::from_utf8_lossy(slice(bytes, off + 24, il)?).into_owned();
        off += 24 + il;
        if id.starts_with("hip") && id.contains("amdgcn") {
            found.push((id, eo, es));
        }
    }
    let pick = found.iter().find(|(id, _, _)| match target {
        Some(t) => id.split("--").nth(1).map(|r| r.split(':').next() == Some(t)).unwrap_or(false),
        None => true,
    });
    match pick {
        Some((_, eo, es)) => slice(bytes, *eo, *es),
        None => err(format!(
            "offload bundle has no AMDGPU code object{}",
            target.map(|t| format!(" for {t}")).unwrap_or_default()
        )),
    }
}

impl CodeObject {
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, CodeObjectError> {
        if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
            return err("not an ELF file");
        }
        if bytes[4] != 2 || bytes[5] != 1 || u16_at(bytes, 18)? != 224 {
            return err("not a 64-bit little-endian AMDGPU ELF");
        }
        let phoff = u64_at(bytes, 32)?;
        let shoff = u64_at(bytes, 40)?;
        let phentsize = u16_at(bytes, 54)? as u64;
        let phnum = u16_at(bytes, 56)? as u64;
        let shentsize = u16_at(bytes, 58)? as u64;
        let shnum = u16_at(bytes, 60)? as u64;
        let shstrndx = u16_at(bytes, 62)? as u64;
        if phentsize < 56 || shentsize < 64 {
            return err("bad ELF header entry sizes");
        }
        // Loadable image.
        let mut image = Vec::new();
        for i in 0..phnum {
            let p = phoff + i * phentsize;
            if u32_at(bytes, p)? != 1 {
                continue;
            }
            let (off, vaddr, filesz, memsz) =
                (u64_at(bytes, p + 8)?, u64_at(bytes, p + 16)?, u64_at(bytes, p + 32)?, u64_at(bytes, p + 40)?);
            let end = vaddr.checked_add(memsz).filter(|&e| e <= 1 << 30 && filesz <= memsz);
            let Some(end) = end else { return err("PT_LOAD segment too large or inconsistent") };
            if image.len() < end as usize {
                image.resize(end as usize, 0);
            }
            let data = slice(bytes, off, filesz)?;
            image[vaddr as usize..(vaddr + filesz) as usize].copy_from_slice(data);
        }
        // Sections.
        struct Sh {
            name: u32,
            kind: u32,
            addr: u64,
            off: u64,
            size: u64,
            link: u32,
        }
        let mut shs = Vec::new();
        for i in 0..shnum.min(65535) {
            let s = shoff + i * shentsize;
            shs.push(Sh {
                name: u32_at(bytes, s)?,
                kind: u32_at(bytes, s + 4)?,
                addr: u64_at(bytes, s + 16)?,
                off: u64_at(bytes, s + 24)?,
                size: u64_at(bytes, s + 32)?,
                link: u32_at(bytes, s + 40)?,
            });
        }
        let shstr = shs.get(shstrndx as usize).map(|s| (s.off, s.size));
        let sec_name = |n: u32| -> String {
            shstr
                .and_then(|(o, sz)| slice(bytes, o, sz).ok())
                .and_then(|t| t.get(n as usize..))
                .map(|t| String::from_utf8_lossy(t.split(|&c| c == 0).next().unwrap_or(&[])).into_owned())
                .unwrap_or_default()
        };
        let text = shs.iter().find(|s| sec_name(s.name) == ".text").map(|s| (s.addr, s.size)).unwrap_or((0, 0));
        // Symbols: prefer .symtab, else .dynsym.
        let symtab = shs.iter().find(|s| s.kind == 2).or_else(|| shs.iter().find(|s| s.kind == 11));
        let mut symbols = Vec::new();
        if let Some(st) = symtab {
            let strtab =
                shs.get(st.link as usize).ok_or_else(|| CodeObjectError("symbol table without string table".into()))?;
            let strs = slice(bytes, strtab.off, strtab.size)?;
            let syms = slice(bytes, st.off, st.size)?;
            for e in syms.chunks_exact(24) {
                let name_off = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
                let value = u64::from_le_bytes(e[8..16].try_into().unwrap_or([0; 8]));
                let size = u64::from_le_bytes(e[16..24].try_into().unwrap_or([0; 8]));
                let name = strs
                    .get(name_off..)
                    .map(|t| String::from_utf8_lossy(t.split(|&c| c == 0).next().unwrap_or(&[])).into_owned())
                    .unwrap_or_default();
                symbols.push((name, value, size));
            }
        }
        // Metadata note.
        let mut meta = Value::Null;
        for s in shs.iter().filter(|s| s.kind == 7) {
            let notes = slice(bytes, s.off, s.size)?;
            let mut p = 0u64;
            while p + 12 <= notes.len() as u64 {
                let (namesz, descsz, kind) =
                    (u32_at(notes, p)? as u64, u32_at(notes, p + 4)? as u64, u32_at(notes, p + 8)?);
                let name = slice(notes, p + 12, namesz)?;
                let desc_off = p + 12 + namesz.div_ceil(4) * 4;
                let desc = slice(notes, desc_off, descsz)?;
                if kind == 32 && name.starts_with(b"AMDGPU") {
                    meta = rmp_serde::from_slice(desc)
                        .map_err(|e| CodeObjectError(format!("unreadable metadata note: {e}")))?;
                }
                p = desc_off + descsz.div_ceil(4) * 4;
            }
        }
        if meta.is_null() {
            return err("code object has no AMDGPU metadata note");
        }
        let target = meta
            .get("amdhsa.target")
            .and_then(Value::as_str)
            .and_then(|t| t.split("--").nth(1))
            .map(|t| t.split(':').next().unwrap_or(t).to_string())
            .unwrap_or_default();
        let mut kernels = Vec::new();
        for k in meta.get("amdhsa.kernels").and_then(Value::as_array).map(|v| v.as_slice()).unwrap_or(&[]) {
            let name = k.get(".name").and_then(Value::as_str).unwrap_or("").to_string();
            let symbol = k.get(".symbol").and_then(Value::as_str).unwrap_or("").to_string();
            let num = |key: &str| k.get(key).and_then(Value::as_u64).unwrap_or(0) as u32;
            let Some(&(_, kd_vaddr, _)) = symbols.iter().find(|(n, _, _)| *n == symbol) else {
                return err(format!("kernel {name}: descriptor symbol {symbol} not found"));
            };
            let kd = KernelDescriptor::parse(image.get(kd_vaddr as usize..).unwrap_or(&[]))
                .map_err(|e| CodeObjectError(format!("kernel {name}: {e}")))?;
            let entry = (kd_vaddr as i64).wrapping_add(kd.kernel_code_entry_byte_offset) as u64;
            if entry as usize >= image.len() {
                return err(format!("kernel {name}: entry {entry:#x} outside the image"));
            }
            let mut args = Vec::new();
            for a in k.get(".args").and_then(Value::as_array).map(|v| v.as_slice()).unwrap_or(&[]) {
                args.push(KernelArg {
                    name: a.get(".name").and_then(Value::as_str).map(str::to_string),
                    offset: a.get(".offset").and_then(Value::as_u64).unwrap_or(0) as u32,
                    size: a.get(".size").and_then(Value::as_u64).unwrap_or(0) as u32,
                    value_kind: a.get(".value_kind").and_then(Value::as_str).unwrap_or("").to_string(),
                });
            }
            kernels.push(Kernel {
                name,
                descriptor_vaddr: kd_vaddr,
                entry_vaddr: entry,
                descriptor: kd,
                args,
                kernarg_segment_size: num(".kernarg_segment_size"),
                group_segment_fixed_size: num(".group_segment_fixed_size"),
                private_segment_fixed_size: num(".private_segment_fixed_size"),
            });
        }
        Ok(CodeObject { image, target, kernels, text })
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(CodeObject::parse(b"hello").is_err());
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let base = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/gfx942/elem_f32.co")).expect("fixture");
        assert!(CodeObject::parse(&base).is_ok());
        for _ in 0..1000 {
            let mut b = base.clone();
            for _ in 0..8 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let i = (s as usize) % b.len();
                b[i] = (s >> 32) as u8;
            }
            let _ = CodeObject::parse(&b);
            let cut = (s as usize) % b.len();
            let _ = CodeObject::parse(&b[..cut]);
        }
    }
}
