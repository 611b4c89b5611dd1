//! Fuzz target: the ELF reader and the code-object model built on it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use xfpx_amd::elf::{ElfFile, SHT_DYNSYM, SHT_SYMTAB};

fuzz_target!(|data: &[u8]| {
    if let Ok(elf) = ElfFile::parse(data) {
        let _ = elf.symbols(SHT_SYMTAB);
        let _ = elf.symbols(SHT_DYNSYM);
        let _ = elf.notes();
    }
    if let Ok(co) = xfpx_amd::CodeObject::parse(data) {
        for k in &co.kernels {
            let _ = co.kernel_code(k);
        }
    }
});
