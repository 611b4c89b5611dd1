//! AMD backend: reading CDNA code objects — containers (HIP fat binaries,
//! offload bundles, compressed bundles), the AMDGPU ELF, kernel descriptors
//! and the metadata note — their source lines ([`lines`]), and rendering
//! them with [`dump`]. The instruction decoder lives in `xfpx-amd-isa`.
//!
//! ```
//! use xfpx_amd::{extract, CodeObject, DumpFormat, DumpOptions, Processor};
//!
//! let bundle = include_bytes!("../fixtures/bundles/multi.bundle");
//! for entry in extract(bundle)? {
//!     let co = CodeObject::parse(&entry.bytes)?;
//!     let axpy = co.kernel("fp32_axpy").expect("kernel");
//!     let regs = axpy.descriptor.decode(co.target.processor)?.registers;
//!     println!("{} {}: {} VGPRs, entry 0x{:x}", entry.target_id.unwrap_or_default(), axpy.name, regs.vgprs, axpy.entry);
//!     assert!(matches!(co.target.processor, Processor::Gfx908 | Processor::Gfx90a));
//! }
//! let text = xfpx_amd::dump(bundle, &DumpOptions { kernel: Some("fp32_axpy".into()), format: DumpFormat::Text })?;
//! assert!(text.contains("v_fmac_f32") || text.contains("v_fma_f32"));
//! # Ok::<(), xfpx_amd::Error>(())
//! ```

pub mod bytes;
pub mod code_object;
pub mod container;
pub mod descriptor;
pub mod dump;
pub mod elf;
pub mod error;
pub mod lines;
pub mod metadata;
pub mod rewrite;
pub mod target;

pub use code_object::{CodeObject, Function, Kernel, TextLayout};
pub use container::{extract, BundleId, ContainerKind, ExtractedCodeObject, HipFatBinaryWrapper};
pub use descriptor::{render_amdhsa, DecodedDescriptor, KernelDescriptor};
pub use dump::{dump, DumpFormat, DumpOptions};
pub use error::{Error, Result};
pub use lines::SourceLines;
pub use metadata::{KernelArg, KernelMetadata, Metadata};
pub use target::{FeatureSetting, Processor, TargetId};
