//! A code object as the emulator runs it: the memory image of its loadable
//! segments and, per kernel of the metadata note, its descriptor, entry and
//! arguments. Everything is read through `xfpx-amd-object` (the one reader
//! of containers, ELF, descriptors and metadata); this module only gathers
//! what a dispatch needs.

use xfpx_amd_isa::Target;
use xfpx_amd_object::descriptor::raw::kernel_code_properties::USES_DYNAMIC_STACK;
use xfpx_amd_object::image::{code_object_for, load_image};
use xfpx_amd_object::{CodeObject, KernelArg, KernelDescriptor};

/// Why a code object cannot run on the emulator (one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramError(pub String);

impl std::fmt::Display for ProgramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProgramError {}

impl From<xfpx_amd_object::Error> for ProgramError {
    fn from(e: xfpx_amd_object::Error) -> Self {
        ProgramError(e.to_string())
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
    /// The kernel's stack grows by an amount not known when it was compiled
    /// (recursion, calls through pointers): the metadata's
    /// `.uses_dynamic_stack` or the descriptor's bit.
    pub uses_dynamic_stack: bool,
}

/// A loaded code object: its memory image (vaddr 0 at offset 0) and kernels.
#[derive(Debug, Clone)]
pub struct Program {
    pub image: Vec<u8>,
    pub target: Target,
    pub kernels: Vec<Kernel>,
}

impl Program {
    /// The program of the device code object in `bytes` (a code object or
    /// any container the object layer reads) for `target` (e.g. `gfx90a`;
    /// the first one when `None`).
    pub fn read(bytes: &[u8], target: Option<&str>) -> Result<Program, ProgramError> {
        Program::parse(&code_object_for(bytes, target)?.bytes)
    }

    /// The program of one AMDGPU code object (ELF).
    pub fn parse(bytes: &[u8]) -> Result<Program, ProgramError> {
        let co = CodeObject::parse(bytes)?;
        let image = load_image(&co.elf)?;
        let meta =
            co.metadata.as_ref().ok_or_else(|| ProgramError("code object has no AMDGPU metadata note".into()))?;
        let mut kernels = Vec::new();
        for m in &meta.kernels {
            let descriptor_symbol = m.symbol.strip_suffix(".kd").unwrap_or(&m.symbol);
            let Some(k) = co.kernel(descriptor_symbol) else {
                return Err(ProgramError(format!("kernel {}: descriptor symbol {} not found", m.name, m.symbol)));
            };
            if k.entry as usize >= image.len() {
                return Err(ProgramError(format!("kernel {}: entry {:#x} outside the image", m.name, k.entry)));
            }
            kernels.push(Kernel {
                name: m.name.clone(),
                descriptor_vaddr: k.descriptor_address,
                entry_vaddr: k.entry,
                descriptor: k.descriptor,
                args: m.args.clone(),
                kernarg_segment_size: m.kernarg_segment_size as u32,
                group_segment_fixed_size: m.group_segment_fixed_size as u32,
                private_segment_fixed_size: m.private_segment_fixed_size as u32,
                uses_dynamic_stack: m.uses_dynamic_stack == Some(true)
                    || USES_DYNAMIC_STACK.get(k.descriptor.kernel_code_properties as u32) != 0,
            });
        }
        Ok(Program { image, target: co.target.processor, kernels })
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
        assert!(Program::parse(b"hello").is_err());
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let base = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/gfx942/elem_f32.co")).expect("fixture");
        assert!(Program::parse(&base).is_ok());
        for _ in 0..1000 {
            let mut b = base.clone();
            for _ in 0..8 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let i = (s as usize) % b.len();
                b[i] = (s >> 32) as u8;
            }
            let _ = Program::parse(&b);
            let cut = (s as usize) % b.len();
            let _ = Program::parse(&b[..cut]);
        }
    }

    #[test]
    fn reads_compressed_bundles_for_a_target() {
        let ccob = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/bundles/compressed-v3.ccob"))
            .expect("fixture");
        let p = Program::read(&ccob, Some("gfx950")).expect("gfx950 entry");
        assert_eq!(p.target, Target::Gfx950);
        let p = Program::read(&ccob, Some("gfx942")).expect("gfx942 entry");
        assert_eq!(p.target, Target::Gfx942);
        let e = Program::read(&ccob, Some("gfx908")).expect_err("no gfx908 entry");
        assert!(e.0.contains("for gfx908"), "{e}");
    }
}
