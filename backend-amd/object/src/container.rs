//! Containers that carry AMDGPU code objects: the HIP fat-binary wrapper
//! (`HIPF`), clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`, entries not
//! necessarily aligned), compressed bundles (`CCOB` v1-v3, zlib or zstd), host
//! ELF files with a `.hip_fatbin` section, and plain code objects.
//! [`extract`] turns any of them into the list of device code objects.

use std::borrow::Cow;
use std::io::Read;

use serde::Serialize;

use crate::bytes::{slice, u16_at, u32_at, u64_at};
use crate::elf::{self, ElfFile};
use crate::error::{Error, Result};

pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const COMPRESSED_BUNDLE_MAGIC: &[u8; 4] = b"CCOB";
/// `HIPF` as the little-endian u32 at the start of the wrapper.
pub const HIP_FAT_BINARY_MAGIC: u32 = 0x4849_5046;
/// Size of the wrapper `{u32 magic, u32 version, u64 bundle, u64 reserved}`.
pub const HIP_FAT_BINARY_WRAPPER_SIZE: usize = 24;
pub const HIP_FATBIN_SECTION: &str = ".hip_fatbin";
pub const HIP_FATBIN_WRAPPER_SECTION: &str = ".hipFatBinSegment";

/// Largest decompressed size accepted (hostile headers must not exhaust memory).
pub const MAX_DECOMPRESSED_SIZE: u64 = 1 << 30;
/// Nested containers accepted (a compressed bundle inside a fat binary, ...).
const MAX_NESTING: u32 = 4;

/// The kind of container an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ContainerKind {
    /// An AMDGPU code object.
    CodeObject,
    /// An uncompressed clang offload bundle.
    OffloadBundle,
    /// A compressed offload bundle.
    CompressedBundle,
    /// A host ELF with a `.hip_fatbin` section.
    HostElf,
}

/// Recognizes a container by its first bytes.
pub fn identify(bytes: &[u8]) -> Option<ContainerKind> {
    if bytes.starts_with(BUNDLE_MAGIC) {
        Some(ContainerKind::OffloadBundle)
    } else if bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        Some(ContainerKind::CompressedBundle)
    } else if elf::is_elf(bytes) {
        match ElfFile::parse(bytes).map(|e| e.header.e_machine) {
            Ok(elf::EM_AMDGPU) => Some(ContainerKind::CodeObject),
            Ok(_) => Some(ContainerKind::HostElf),
            Err(_) => Some(ContainerKind::CodeObject),
        }
    } else {
        None
    }
}

/// Parsed bundle id, `<kind>-<arch>-<vendor>-<os>-<env>-<target id>`, e.g.
/// `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleId {
    /// Offload kind: `hip`, `hipv4`, `openmp`, `host`.
    pub kind: String,
    /// Target triple without an empty environment (`amdgcn-amd-amdhsa`).
    pub triple: String,
    /// Target id (`gfx90a:xnack+`); empty for host entries.
    pub target_id: String,
}

impl BundleId {
    /// Parses `<kind>-<triple>-<target id>`: the triple has four components,
    /// the last (environment) usually empty, so the target id follows `--`
    /// (`hipv4-amdgcn-amd-amdhsa--gfx90a`). Older ids omit the environment
    /// (`hip-amdgcn-amd-amdhsa-gfx906`); host ids have no target id.
    pub fn parse(id: &str) -> Result<Self> {
        let bad = || Error::malformed("bundle id", format!("'{id}' is not <kind>-<triple>-<target>"));
        let (kind, rest) = id.split_once('-').ok_or_else(bad)?;
        let (triple, target_id) = match rest.split_once("--") {
            Some((triple, target)) => (triple.to_string(), target.to_string()),
            None => {
                let parts: Vec<&str> = rest.split('-').collect();
                match parts.as_slice() {
                    [a, b, c, t] if t.starts_with("gfx") => (format!("{a}-{b}-{c}"), (*t).to_string()),
                    [a, b, c, env, t] => (format!("{a}-{b}-{c}-{env}"), (*t).to_string()),
                    [a, b, c, env] => (format!("{a}-{b}-{c}-{env}"), String::new()),
                    _ => return Err(bad()),
                }
            }
        };
        if kind.is_empty() || triple.split('-').count() < 3 {
            return Err(bad());
        }
        Ok(BundleId { kind: kind.to_string(), triple, target_id })
    }

    /// Whether this entry holds host code (no device code object).
    pub fn is_host(&self) -> bool {
        self.kind == "host"
    }

    /// Whether this entry holds an AMDGPU device code object.
    pub fn is_amdgpu(&self) -> bool {
        self.triple.starts_with("amdgcn-")
    }
}

/// One entry of an uncompressed offload bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    pub id: String,
    /// Offset of the entry's contents from the start of the bundle.
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// Reads the entry table of an uncompressed offload bundle.
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<BundleEntry<'_>>> {
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return Err(Error::malformed("offload bundle", "missing __CLANG_OFFLOAD_BUNDLE__ magic"));
    }
    let count = u64_at(bytes, 24, "offload bundle header")?;
    let mut at = 32u64;
    let mut entries = Vec::new();
    for _ in 0..count {
        let offset = u64_at(bytes, at, "bundle entry")?;
        let size = u64_at(bytes, at + 8, "bundle entry")?;
        let id_len = u64_at(bytes, at + 16, "bundle entry")?;
        let id = slice(bytes, at + 24, id_len, "bundle entry id")?;
        let id = std::str::from_utf8(id).map_err(|_| Error::malformed("bundle entry id", "not UTF-8"))?.to_string();
        let contents = slice(bytes, offset, size, "bundle entry contents")?;
        entries.push(BundleEntry { id, offset, bytes: contents });
        at = at + 24 + id_len;
    }
    Ok(entries)
}

/// Total size in bytes of the offload bundle or compressed bundle at the start
/// of `bytes` (the end of its furthest entry), for callers that only have a
/// pointer to it, like the `bundle` field of a `HIPF` wrapper.
pub fn bundle_extent(bytes: &[u8]) -> Result<u64> {
    if bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        let h = CompressedBundleHeader::parse(bytes)?;
        return match h.total_size {
            Some(t) => Ok(t),
            None => Err(Error::unsupported("compressed bundle", "version 1 does not record its total size")),
        };
    }
    let count = u64_at(bytes, 24, "offload bundle header")?;
    let mut at = 32u64;
    let mut end = at;
    for _ in 0..count {
        let offset = u64_at(bytes, at, "bundle entry")?;
        let size = u64_at(bytes, at + 8, "bundle entry")?;
        let id_len = u64_at(bytes, at + 16, "bundle entry")?;
        at = at
            .checked_add(24)
            .and_then(|a| a.checked_add(id_len))
            .ok_or_else(|| Error::malformed("bundle entry", "id length overflows"))?;
        let entry_end = offset.checked_add(size).ok_or_else(|| Error::malformed("bundle entry", "size overflows"))?;
        end = end.max(at).max(entry_end);
    }
    Ok(end)
}

/// Compression method of a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CompressionMethod {
    Zlib,
    Zstd,
}

impl CompressionMethod {
    pub fn from_code(code: u16) -> Result<Self> {
        match code {
            0 => Ok(CompressionMethod::Zlib),
            1 => Ok(CompressionMethod::Zstd),
            m => Err(Error::unsupported("compressed bundle", format!("compression method {m}"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CompressionMethod::Zlib => "zlib",
            CompressionMethod::Zstd => "zstd",
        }
    }
}

/// Header of a compressed bundle (`CCOB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompressedBundleHeader {
    pub version: u16,
    pub method: CompressionMethod,
    /// Size of the whole compressed bundle, header included (v2, v3).
    pub total_size: Option<u64>,
    pub uncompressed_size: u64,
    /// First 8 bytes of the MD5 of the uncompressed bundle.
    pub truncated_hash: u64,
    /// Offset of the compressed payload.
    pub payload_offset: u64,
}

impl CompressedBundleHeader {
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        if !bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
            return Err(Error::malformed("compressed bundle", "missing CCOB magic"));
        }
        let version = u16_at(bytes, 4, "compressed bundle header")?;
        let method = CompressionMethod::from_code(u16_at(bytes, 6, "compressed bundle header")?)?;
        let (total_size, uncompressed_size, hash_at) = match version {
            1 => (None, u64::from(u32_at(bytes, 8, "compressed bundle header")?), 12),
            2 => (
                Some(u64::from(u32_at(bytes, 8, "compressed bundle header")?)),
                u64::from(u32_at(bytes, 12, "compressed bundle header")?),
                16,
            ),
            3 => (
                Some(u64_at(bytes, 8, "compressed bundle header")?),
                u64_at(bytes, 16, "compressed bundle header")?,
                24,
            ),
            v => return Err(Error::unsupported("compressed bundle", format!("version {v}"))),
        };
        let truncated_hash = u64_at(bytes, hash_at, "compressed bundle header")?;
        Ok(CompressedBundleHeader {
            version,
            method,
            total_size,
            uncompressed_size,
            truncated_hash,
            payload_offset: hash_at + 8,
        })
    }
}

/// Decompresses a compressed bundle into the uncompressed bundle it holds.
pub fn decompress_bundle(bytes: &[u8]) -> Result<Vec<u8>> {
    let h = CompressedBundleHeader::parse(bytes)?;
    if h.uncompressed_size > MAX_DECOMPRESSED_SIZE {
        return Err(Error::unsupported(
            "compressed bundle",
            format!("uncompressed size {} exceeds the {} byte limit", h.uncompressed_size, MAX_DECOMPRESSED_SIZE),
        ));
    }
    let end = match h.total_size {
        Some(t) if t < h.payload_offset => {
            return Err(Error::malformed("compressed bundle", format!("total size {t} is smaller than its header")))
        }
        Some(t) => t,
        None => bytes.len() as u64,
    };
    let payload = slice(bytes, h.payload_offset, end - h.payload_offset, "compressed bundle payload")?;
    let limit = h.uncompressed_size;
    let mut out = Vec::new();
    let fail = |detail: String| Error::decompress(h.method.name(), detail);
    match h.method {
        CompressionMethod::Zlib => {
            flate2::read::ZlibDecoder::new(payload)
                .take(limit + 1)
                .read_to_end(&mut out)
                .map_err(|e| fail(e.to_string()))?;
        }
        CompressionMethod::Zstd => {
            let decoder = zstd::stream::read::Decoder::new(payload).map_err(|e| fail(e.to_string()))?;
            decoder.take(limit + 1).read_to_end(&mut out).map_err(|e| fail(e.to_string()))?;
        }
    }
    if out.len() as u64 != limit {
        return Err(fail(format!("produced {} bytes, header says {}", out.len(), limit)));
    }
    Ok(out)
}

/// The `HIPF` wrapper passed to `__hipRegisterFatBinary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HipFatBinaryWrapper {
    pub magic: u32,
    pub version: u32,
    /// Address of the offload bundle (in the host process, or 0 before relocation).
    pub bundle: u64,
    pub reserved: u64,
}

impl HipFatBinaryWrapper {
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let magic = u32_at(bytes, 0, "HIP fat binary wrapper")?;
        if magic != HIP_FAT_BINARY_MAGIC {
            return Err(Error::malformed("HIP fat binary wrapper", format!("magic 0x{magic:08x} is not HIPF")));
        }
        Ok(HipFatBinaryWrapper {
            magic,
            version: u32_at(bytes, 4, "HIP fat binary wrapper")?,
            bundle: u64_at(bytes, 8, "HIP fat binary wrapper")?,
            reserved: u64_at(bytes, 16, "HIP fat binary wrapper")?,
        })
    }
}

/// A device code object found in a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedCodeObject<'a> {
    /// The bundle id it was stored under (`None` for a plain code object).
    pub bundle_id: Option<String>,
    /// The target id from the bundle id (or `None` for a plain code object).
    pub target_id: Option<String>,
    /// How it was found, outermost container first.
    pub path: Vec<ContainerKind>,
    pub bytes: Cow<'a, [u8]>,
}

/// Extracts every AMDGPU device code object from `bytes`: a code object
/// itself, an offload bundle, a compressed bundle, or a host ELF with a
/// `.hip_fatbin` section. Host entries of bundles are skipped.
pub fn extract(bytes: &[u8]) -> Result<Vec<ExtractedCodeObject<'_>>> {
    let mut out = Vec::new();
    extract_into(Cow::Borrowed(bytes), &mut Vec::new(), None, &mut out, 0)?;
    Ok(out)
}

fn extract_into<'a>(
    bytes: Cow<'a, [u8]>,
    path: &mut Vec<ContainerKind>,
    bundle_id: Option<&str>,
    out: &mut Vec<ExtractedCodeObject<'a>>,
    depth: u32,
) -> Result<()> {
    if depth > MAX_NESTING {
        return Err(Error::malformed("container", "containers nested too deeply"));
    }
    let kind = identify(&bytes).ok_or(Error::UnknownFormat)?;
    path.push(kind);
    match kind {
        ContainerKind::CodeObject => {
            // Reject what is not even a well-formed ELF here, with its reason.
            ElfFile::parse(&bytes)?;
            let target_id = bundle_id.map(|id| BundleId::parse(id).map(|b| b.target_id)).transpose()?;
            out.push(ExtractedCodeObject {
                bundle_id: bundle_id.map(str::to_string),
                target_id,
                path: path.clone(),
                bytes,
            });
        }
        ContainerKind::OffloadBundle => {
            let owned;
            let entries = match &bytes {
                Cow::Borrowed(b) => parse_bundle(b)?
                    .into_iter()
                    .map(|e| (e.id, Cow::Borrowed(e.bytes)))
                    .collect::<Vec<(String, Cow<'a, [u8]>)>>(),
                Cow::Owned(v) => {
                    owned = parse_bundle(v)?.into_iter().map(|e| (e.id, Cow::Owned(e.bytes.to_vec()))).collect::<Vec<(
                        String,
                        Cow<'a, [u8]>,
                    )>>(
                    );
                    owned
                }
            };
            for (id, contents) in entries {
                let parsed = BundleId::parse(&id)?;
                if parsed.is_host() || contents.is_empty() {
                    continue;
                }
                if !parsed.is_amdgpu() {
                    continue;
                }
                extract_into(contents, path, Some(&id), out, depth + 1)?;
            }
        }
        ContainerKind::CompressedBundle => {
            let inner = decompress_bundle(&bytes)?;
            extract_into(Cow::Owned(inner), path, bundle_id, out, depth + 1)?;
        }
        ContainerKind::HostElf => {
            let elf = ElfFile::parse(&bytes)?;
            let bundles = host_fat_binaries(&elf)?;
            if bundles.is_empty() {
                return Err(Error::malformed(
                    "host ELF",
                    format!("no {HIP_FATBIN_SECTION} section: not a HIP program or library"),
                ));
            }
            for b in bundles {
                let owned = Cow::Owned(b.to_vec());
                extract_into(owned, path, bundle_id, out, depth + 1)?;
            }
        }
    }
    path.pop();
    Ok(())
}

/// The offload bundles a host ELF embeds. Each `HIPF` wrapper in
/// `.hipFatBinSegment` whose bundle pointer is resolved (a linked file)
/// points at one; otherwise (a relocatable object) the `.hip_fatbin`
/// section holds one bundle per 4096-aligned slot.
pub fn host_fat_binaries<'a>(elf: &ElfFile<'a>) -> Result<Vec<&'a [u8]>> {
    let mut out = Vec::new();
    let Some(fatbin) = elf.section_by_name(HIP_FATBIN_SECTION) else {
        return Ok(out);
    };
    let data = elf.section_data(fatbin)?;
    if let Some(seg) = elf.section_by_name(HIP_FATBIN_WRAPPER_SECTION) {
        let wrappers = elf.section_data(seg)?;
        for chunk in wrappers.chunks_exact(HIP_FAT_BINARY_WRAPPER_SIZE) {
            let w = HipFatBinaryWrapper::parse(chunk)?;
            if w.bundle != 0 && fatbin.contains_addr(w.bundle) {
                let start = w.bundle - fatbin.addr;
                let rest = slice(data, start, data.len() as u64 - start, "HIP fat binary")?;
                let len = bundle_extent(rest)?;
                out.push(slice(rest, 0, len, "HIP fat binary")?);
            }
        }
        if !out.is_empty() {
            return Ok(out);
        }
    }
    // Unresolved wrappers: walk the bundles laid out in the section.
    let mut at = 0u64;
    while at < data.len() as u64 {
        let rest = &data[at as usize..];
        if !(rest.starts_with(BUNDLE_MAGIC) || rest.starts_with(COMPRESSED_BUNDLE_MAGIC)) {
            break;
        }
        let len = bundle_extent(rest)?;
        out.push(slice(rest, 0, len, "HIP fat binary")?);
        // Bundles in one section are 4096-aligned.
        at = at
            .checked_add(len.max(1))
            .map(|e| e.div_ceil(4096) * 4096)
            .ok_or_else(|| Error::malformed("HIP fat binary", "size overflows"))?;
    }
    Ok(out)
}
