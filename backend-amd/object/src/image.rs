//! A code object as a loader maps it: its `PT_LOAD` segments placed in one
//! memory image (address 0 at offset 0, bytes past a segment's file size
//! zero), and the device code object a container holds for a target.

use crate::container::{extract, ExtractedCodeObject};
use crate::elf::{ElfFile, PT_LOAD};
use crate::error::{Error, Result};

/// Largest image [`load_image`] builds (1 GiB): more is a hostile header.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// The memory image of `elf`'s loadable segments.
pub fn load_image(elf: &ElfFile<'_>) -> Result<Vec<u8>> {
    let mut image = Vec::new();
    for s in elf.segments.iter().filter(|s| s.p_type == PT_LOAD) {
        let end = s.vaddr.checked_add(s.memsz).filter(|&e| e <= MAX_IMAGE_BYTES && s.filesz <= s.memsz);
        let Some(end) = end else {
            return Err(Error::malformed("program header", "PT_LOAD segment too large or inconsistent"));
        };
        if image.len() < end as usize {
            image.resize(end as usize, 0);
        }
        let data = elf.segment_data(s)?;
        image[s.vaddr as usize..(s.vaddr + s.filesz) as usize].copy_from_slice(data);
    }
    Ok(image)
}

/// The device code object in `bytes` (a code object or any container that
/// [`extract`] reads) for the processor `target` names (`gfx90a`), or the
/// first one when `target` is `None`. A plain code object is returned
/// whatever `target` says: it is checked where it runs.
pub fn code_object_for<'a>(bytes: &'a [u8], target: Option<&str>) -> Result<ExtractedCodeObject<'a>> {
    let mut entries = extract(bytes)?;
    let plain = entries.len() == 1 && entries[0].bundle_id.is_none();
    let processor =
        |e: &ExtractedCodeObject<'_>| e.target_id.as_deref().map(|id| id.split(':').next().unwrap_or(id).to_string());
    let at = match target {
        _ if plain => Some(0),
        Some(t) => entries.iter().position(|e| processor(e).as_deref() == Some(t)),
        None => (!entries.is_empty()).then_some(0),
    };
    match at {
        Some(i) => Ok(entries.swap_remove(i)),
        None => {
            let found: Vec<String> = entries.iter().filter_map(processor).collect();
            Err(Error::unsupported(
                "container",
                format!(
                    "no AMDGPU code object{} (it has: {})",
                    target.map(|t| format!(" for {t}")).unwrap_or_default(),
                    if found.is_empty() { "none".to_string() } else { found.join(", ") }
                ),
            ))
        }
    }
}
