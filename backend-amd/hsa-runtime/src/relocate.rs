//! Dynamic relocations of a code object's image, applied where it is
//! loaded: `R_AMDGPU_RELATIVE64` (load base + addend) and `R_AMDGPU_ABS64`
//! (symbol address + addend), the kinds a linked AMDGPU code object carries
//! in `.rela.dyn` (pointer-valued globals, function tables). Anything else
//! is refused with its type, never ignored.

use crate::ffi::host::HostBlock;
use xfpx_amd_object::CodeObject;

const SHT_RELA: u32 = 4;
const R_AMDGPU_NONE: u32 = 0;
const R_AMDGPU_ABS64: u32 = 3;
const R_AMDGPU_RELATIVE64: u32 = 13;

/// Applies the dynamic relocations of `co` to its image in `block`.
pub fn apply(co: &CodeObject<'_>, block: &HostBlock) -> Result<(), String> {
    let base = block.address();
    for rela in co.elf.sections.iter().filter(|s| s.sh_type == SHT_RELA && s.name == ".rela.dyn") {
        let data = co.elf.section_data(rela).map_err(|e| e.to_string())?;
        let symbols = co
            .elf
            .sections
            .get(rela.link as usize)
            .map(|s| co.elf.symbols(s.sh_type).map_err(|e| e.to_string()))
            .transpose()?
            .unwrap_or_default();
        for entry in data.chunks_exact(24) {
            let word = |i: usize| u64::from_le_bytes(entry[i..i + 8].try_into().unwrap_or([0; 8]));
            let (offset, info, addend) = (word(0), word(8), word(16) as i64);
            let (kind, sym) = (info as u32, (info >> 32) as usize);
            let value = match kind {
                R_AMDGPU_NONE => continue,
                R_AMDGPU_RELATIVE64 => base.wrapping_add_signed(addend),
                R_AMDGPU_ABS64 => {
                    let s =
                        symbols.get(sym).ok_or_else(|| format!("relocation names symbol {sym}, not in the table"))?;
                    if s.shndx == 0 {
                        return Err(format!("relocation against undefined symbol {}", s.name));
                    }
                    base.wrapping_add(s.value).wrapping_add_signed(addend)
                }
                other => return Err(format!("dynamic relocation type {other} is not supported")),
            };
            if !block.write(offset as usize, &value.to_le_bytes()) {
                return Err(format!("relocation at {offset:#x} outside the image"));
            }
        }
    }
    Ok(())
}
