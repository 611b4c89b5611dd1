//! AMD code objects, read once for every consumer (the dump, the rewriter and
//! the emulator): containers (HIP fat binaries, offload bundles, compressed
//! bundles, host executables), the AMDGPU ELF, kernel descriptors (raw and
//! decoded per target) and the metadata note. The target type is the ISA
//! crate's [`Target`]; [`target`] adds the ELF and register-file facts.
//! [`builder`] writes rewritten code objects (patches, appended code and
//! sections, note count patches) with every existing address kept.
//!
//! ```
//! use xfpx_amd_object::{extract, CodeObject, Target};
//!
//! let bundle = include_bytes!("../../fixtures/bundles/multi.bundle");
//! for entry in extract(bundle)? {
//!     let co = CodeObject::parse(&entry.bytes)?;
//!     let axpy = co.kernel("fp32_axpy").expect("kernel");
//!     let regs = axpy.descriptor.decode(co.target.processor)?.registers;
//!     println!("{} {}: {} VGPRs, entry 0x{:x}", entry.target_id.unwrap_or_default(), axpy.name, regs.vgprs, axpy.entry);
//!     assert!(matches!(co.target.processor, Target::Gfx908 | Target::Gfx90a));
//! }
//! # Ok::<(), xfpx_amd_object::Error>(())
//! ```

pub mod builder;
pub mod bytes;
pub mod code_object;
pub mod container;
pub mod descriptor;
pub mod elf;
pub mod error;
pub mod image;
pub mod metadata;
pub mod target;

pub use code_object::{CodeObject, Function, Kernel, TextLayout};
pub use container::{extract, BundleId, ContainerKind, ExtractedCodeObject, HipFatBinaryWrapper};
pub use descriptor::{render_amdhsa, DecodedDescriptor, KernelDescriptor};
pub use error::{Error, Result};
pub use metadata::{KernelArg, KernelMetadata, Metadata};
pub use target::{FeatureSetting, Target, TargetId};
