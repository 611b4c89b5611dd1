//! NVIDIA backend of xfpx: the CLI's seam ([`backend`]), SASS instruction knowledge ([`sass`]), lowering
//! of plans to NVBit call insertions ([`lower`]) against the shared device
//! function declaration ([`abi`]), decoding of what the device sends
//! ([`record`]), the host side of the NVBit tool ([`runtime`]) and its launch capture ([`capture_run`]), debug dumps
//! ([`dump`]), the plan of each run mode ([`modes`]), the counters tool's
//! plan and calls ([`counts`]) and its tables during a run ([`count_run`]), the flow
//! tool's calls and keys ([`flow`]), where the built tool is found ([`tool_library`]),
//! the cache of NVBit's disassembler calls ([`disasm_cache`]) and one
//! disassembler run cut into many functions' listings ([`disasm_split`]), fat binaries
//! and cubins ([`fatbin`]) and where files hold them ([`mapped`]), the disassembly of a program's functions
//! ahead of NVBit ([`prefill`]), the screening of launches left
//! uninstrumented ([`screen`]) and how the tool library is built
//! ([`toolbuild`]).
//!
//! The NVBit tool itself is the `xfpx-nvbit` crate (`backend-nvidia/tool`),
//! a static library linked with a C++ shim by `xfpx setup nvidia`.
#![forbid(unsafe_code)]

pub mod abi;
pub mod backend;
pub mod capture_run;
pub mod count_run;
pub mod counts;
pub mod disasm_cache;
pub mod disasm_split;
pub mod dump;
pub mod fatbin;
pub mod flow;
pub mod hw_counts;
pub mod inject;
pub mod lower;
pub mod mapped;
pub mod modes;
pub mod module_image;
pub mod prefill;
pub mod preparing;
pub mod record;
pub mod runtime;
pub mod sass;
pub mod screen;
pub mod toolbuild;
mod toolpath;

pub use backend::Nvidia;
pub use lower::{CallArg, CallInsertion, LowerError, NvbitLowering};
pub use toolpath::{cupti_library, tool_library, ToolError, CUPTI_TOOL_FILE_NAME, TOOL_ENV, TOOL_FILE_NAME};
