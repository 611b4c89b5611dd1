//! Module images a program hands the driver from memory
//! (`cuModuleLoadData`, `cuModuleLoadDataEx`, `cuModuleLoadFatBinary`,
//! `cuLibraryLoadData`): cuBLAS, for one, loads kernels so that are in
//! no file's fat binary, and NVBit cannot dump their modules. What an
//! image is (a fat binary container, a cubin, the wrapper the CUDA
//! runtime registers, or something else such as PTX text) and how many
//! bytes it spans are read here through a reader, within the extent the
//! image's own headers declare; [`copy_from_memory`] reads the program's
//! memory so that an image whose headers lie gives nothing instead of a
//! fault in the program.

use crate::fatbin::{self, DeviceFunction, CONTAINER_HEADER, CONTAINER_MAGIC};
use crate::mapped::{self, OwnMemory};

/// First word of the wrapper the CUDA runtime registers a fat binary with
/// (`__fatBinC_Wrapper_t`: magic, version, then a pointer to the container).
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// Offset of the wrapper's pointer to its container.
pub const WRAPPER_DATA_OFFSET: u64 = 8;
/// Largest image copied (larger ones are left to NVBit).
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;

/// What the first bytes of an image say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// A fat binary container.
    Container,
    /// An ELF cubin.
    Cubin,
    /// The runtime's wrapper: the container is where its pointer says.
    Wrapper,
    /// PTX text, or anything else: nothing to read ahead.
    Other,
}

/// The kind of an image from its first four bytes (shorter: other).
pub fn kind(image: &[u8]) -> ImageKind {
    let Some(first) = image.get(..4) else { return ImageKind::Other };
    match (fatbin::u32_at(first, 0), first) {
        (Some(CONTAINER_MAGIC), _) => ImageKind::Container,
        (Some(WRAPPER_MAGIC), _) => ImageKind::Wrapper,
        (_, b"\x7fELF") => ImageKind::Cubin,
        _ => ImageKind::Other,
    }
}

/// How many bytes an image of kind `kind` spans, from what `read(offset,
/// len)` gives of it (its headers only; `None` when they cannot be read);
/// `None` for the wrapper and other kinds, a malformed header, or an
/// image over [`MAX_IMAGE_BYTES`].
pub fn extent(kind: ImageKind, read: impl Fn(u64, usize) -> Option<Vec<u8>>) -> Option<u64> {
    let size = match kind {
        ImageKind::Container => fatbin::container_size(&read(0, CONTAINER_HEADER)?)?,
        ImageKind::Cubin => {
            // (no table read past the largest image copied)
            let bounded =
                |at: u64, n: usize| (at.checked_add(n as u64)? <= MAX_IMAGE_BYTES).then(|| read(at, n)).flatten();
            let headers = mapped::elf_headers(bounded)?;
            let mut end = headers.section_table_end.max(headers.program_table_end?);
            for s in headers.sections.iter().filter(|s| s.kind != mapped::SHT_NOBITS) {
                end = end.max(s.offset.checked_add(s.size)?);
            }
            end
        }
        ImageKind::Wrapper | ImageKind::Other => return None,
    };
    (size <= MAX_IMAGE_BYTES).then_some(size)
}

/// How many bytes of `bytes` the image at their start spans (see
/// [`extent`]; its kind read from its first bytes).
pub fn extent_in(bytes: &[u8]) -> Option<u64> {
    extent(kind(bytes), |at, n| {
        let at = usize::try_from(at).ok()?;
        bytes.get(at..at.checked_add(n)?).map(<[u8]>::to_vec)
    })
}

/// The bytes of the module image at address `addr` of this process (the
/// runtime's wrapper followed to its container), over the extent its
/// headers declare; `None` for PTX and other kinds, malformed or unreadable
/// headers, and images inside a mapped file's fat binary (read from the
/// file instead).
pub fn copy_from_memory(memory: &OwnMemory, mut addr: u64) -> Option<Vec<u8>> {
    for _ in 0..2 {
        if addr == 0 {
            return None;
        }
        let first = memory.read(addr, 4)?;
        let kind = kind(&first);
        if kind == ImageKind::Wrapper {
            let pointer = memory.read(addr.checked_add(WRAPPER_DATA_OFFSET)?, 8)?;
            addr = u64::from_le_bytes(pointer.try_into().ok()?);
            continue;
        }
        // (PTX and the like: nothing to read, and no need to place it)
        if kind == ImageKind::Other || mapped::in_mapped_fatbin(addr) {
            return None;
        }
        let size = extent(kind, |at, n| memory.read(addr.checked_add(at)?, n))?;
        return memory.read(addr, usize::try_from(size).ok()?);
    }
    None
}

/// The functions of an image for SASS target `sm`: every cubin of that
/// target in a container, or all of a bare cubin's (the driver loads a
/// bare cubin only on its own target). Unreadable parts give nothing.
pub fn functions(image: &[u8], sm: u32) -> Vec<DeviceFunction> {
    match kind(image) {
        ImageKind::Container => fatbin::functions_for_target(image, sm).map(|(f, _)| f).unwrap_or_default(),
        ImageKind::Cubin => fatbin::cubin_functions(image).unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cubin of one function, `.text.k`, built with the object crate.
    fn cubin(code: &[u8]) -> Vec<u8> {
        use object::write::{Object, StandardSection};
        let mut o = Object::new(object::BinaryFormat::Elf, object::Architecture::X86_64, object::Endianness::Little);
        let _ = StandardSection::Text;
        let s = o.add_section(Vec::new(), b".text.k".to_vec(), object::SectionKind::Text);
        o.append_section_data(s, code, 128);
        o.write().expect("elf")
    }

    /// A fat binary container of `body` bytes of zeros.
    fn container(body: usize) -> Vec<u8> {
        let mut c = CONTAINER_MAGIC.to_le_bytes().to_vec();
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(body as u64).to_le_bytes());
        c.resize(16 + body, 0);
        c
    }

    #[test]
    fn images_are_copied_from_memory_over_their_declared_extent_only() {
        let memory = OwnMemory::open().expect("/proc/self/mem");
        let image = container(48);
        // the image, then what follows it in memory
        let mut bytes = image.clone();
        bytes.extend_from_slice(&[0xEE; 256]);
        assert_eq!(copy_from_memory(&memory, bytes.as_ptr() as u64), Some(image.clone()));
        // the runtime's wrapper: magic, version, then the container's address
        let mut wrapper = WRAPPER_MAGIC.to_le_bytes().to_vec();
        wrapper.extend_from_slice(&1u32.to_le_bytes());
        wrapper.extend_from_slice(&(bytes.as_ptr() as u64).to_le_bytes());
        wrapper.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(copy_from_memory(&memory, wrapper.as_ptr() as u64), Some(image));
        let ptx = b".version 9.0\n.target sm_90\n".to_vec();
        assert_eq!(copy_from_memory(&memory, ptx.as_ptr() as u64), None, "PTX");
        assert_eq!(copy_from_memory(&memory, 0), None);
        // a wrapper pointing where nothing is mapped gives nothing (no fault)
        let mut nowhere = WRAPPER_MAGIC.to_le_bytes().to_vec();
        nowhere.extend_from_slice(&[1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(copy_from_memory(&memory, nowhere.as_ptr() as u64), None);
    }

    #[test]
    fn kinds_are_told_by_their_first_word() {
        assert_eq!(kind(&CONTAINER_MAGIC.to_le_bytes()), ImageKind::Container);
        assert_eq!(kind(&WRAPPER_MAGIC.to_le_bytes()), ImageKind::Wrapper);
        assert_eq!(kind(b"\x7fELF"), ImageKind::Cubin);
        assert_eq!(kind(b".ver"), ImageKind::Other);
        assert_eq!(kind(b"\x7fEL"), ImageKind::Other, "short");
    }

    #[test]
    fn a_cubin_spans_its_sections_and_headers_and_gives_its_functions() {
        let elf = cubin(&[0xAB; 256]);
        assert_eq!(extent_in(&elf), Some(elf.len() as u64));
        // what follows the image in memory is not part of it
        let mut more = elf.clone();
        more.extend_from_slice(&[0xEE; 4096]);
        assert_eq!(extent_in(&more), Some(elf.len() as u64));
        let f = functions(&elf, 90);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].name.as_str(), f[0].code.len()), ("k", 256));
    }

    #[test]
    fn a_container_spans_its_header_and_body() {
        assert_eq!(extent_in(&container(40)), Some(56));
    }

    #[test]
    fn malformed_or_huge_images_have_no_extent() {
        assert_eq!(extent_in(b"\x7fELF"), None);
        let mut elf = cubin(&[1; 16]);
        elf[4] = 1; // ELF32
        assert_eq!(extent_in(&elf), None);
        let mut c = CONTAINER_MAGIC.to_le_bytes().to_vec();
        c.extend_from_slice(&[1, 0, 16, 0]);
        c.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(extent_in(&c), None);
        assert_eq!(extent_in(b"anything"), None);
        assert!(functions(b"PTX text", 90).is_empty());
    }
}
