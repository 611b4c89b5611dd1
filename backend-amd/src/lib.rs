//! AMD backend: CDNA code objects read through `xfpx-amd-object` (re-exported
//! here: containers, the AMDGPU ELF, kernel descriptors, the metadata note),
//! their source lines ([`lines`]), rendering them with [`dump`],
//! rewriting them ([`rewrite`]), replaying a launch of a rewritten kernel on
//! the emulator ([`replay`]; the flow tool's replay and its emulator oracle:
//! [`flow`]), programs run with the HSA tool library ([`live`]), and the
//! CLI's seam over all of it ([`backend`]).
//! The instruction decoder lives in `xfpx-amd-isa`, the emulator in `xfpx-amd-emu`.
//!
//! ```
//! use xfpx_amd::{extract, CodeObject, OutputFormat, DumpOptions, Target};
//! use xfpx_common::config::KernelFilter;
//!
//! let bundle = include_bytes!("../fixtures/bundles/multi.bundle");
//! for entry in extract(bundle)? {
//!     let co = CodeObject::parse(&entry.bytes)?;
//!     let axpy = co.kernel("fp32_axpy").expect("kernel");
//!     let regs = axpy.descriptor.decode(co.target.processor)?.registers;
//!     println!("{} {}: {} VGPRs, entry 0x{:x}", entry.target_id.unwrap_or_default(), axpy.name, regs.vgprs, axpy.entry);
//!     assert!(matches!(co.target.processor, Target::Gfx908 | Target::Gfx90a));
//! }
//! let text = xfpx_amd::dump(bundle, &DumpOptions { kernel: Some(KernelFilter::exactly("fp32_axpy")), format: OutputFormat::Text })?;
//! assert!(text.contains("v_fmac_f32") || text.contains("v_fma_f32"));
//! # Ok::<(), xfpx_amd::Error>(())
//! ```

pub mod backend;
pub mod dump;
pub mod flow;
pub mod inject;
pub mod lines;
pub mod live;
pub mod replay;
pub mod rewrite;

pub use backend::Amd;
pub use dump::{dump, DumpOptions};
pub use lines::SourceLines;
pub use xfpx_amd_object::{
    builder, bytes, code_object, container, descriptor, elf, error, image, metadata, target, BundleId, CodeObject,
    ContainerKind, DecodedDescriptor, Error, ExtractedCodeObject, FeatureSetting, Function, HipFatBinaryWrapper,
    Kernel, KernelArg, KernelDescriptor, KernelMetadata, Metadata, Result, Target, TargetId, TextLayout,
};
pub use xfpx_amd_object::{extract, render_amdhsa};
pub use xfpx_common::config::OutputFormat;
