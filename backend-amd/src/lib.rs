//! AMD backend: reading CDNA code objects — containers (HIP fat binaries,
//! offload bundles, compressed bundles), the AMDGPU ELF, kernel descriptors
//! and the metadata note — and rendering them with [`dump`]. The instruction
//! decoder lives in `xfpx-amd-isa`.

pub mod bytes;
pub mod code_object;
pub mod container;
pub mod descriptor;
pub mod dump;
pub mod elf;
pub mod error;
pub mod metadata;
pub mod rewrite;
pub mod target;

pub use code_object::{CodeObject, Kernel, TextLayout};
pub use container::{extract, BundleId, ContainerKind, ExtractedCodeObject, HipFatBinaryWrapper};
pub use descriptor::{render_amdhsa, DecodedDescriptor, KernelDescriptor};
pub use dump::{dump, DumpFormat, DumpOptions};
pub use error::{Error, Result};
pub use metadata::{KernelArg, KernelMetadata, Metadata};
pub use target::{FeatureSetting, Processor, TargetId};
