//! xfpx-common: the vendor-neutral core of xfpx.
//!
//! Nothing in this crate knows a GPU vendor. It owns:
//! - [`class`]: what an instruction does numerically (format and kind of
//!   floating-point work), the vocabulary every backend maps its ISA onto;
//! - [`view`]: a vendor-neutral view of one kernel's instructions, which a
//!   backend builds from SASS or AMDGPU code;
//! - [`site`]: stable instruction sites and the host-side site table;
//! - [`probe`] and [`plan`]: what to check or count, before or after which
//!   instruction, and the invariants a backend may assume when lowering;
//! - [`tool`]: the tools that produce plans (the exception detector) and
//!   the tool a run uses ([`tool::ToolKind`]);
//! - [`count_tool`] and [`counters`]: the counters tool (one update per
//!   count region) and the counters a run reports; [`region`]: operational
//!   regions learnt from counters, and the in-field check against them;
//! - [`lower`]: the one trait each backend implements to lower a plan;
//! - [`cfg`](mod@cfg): a kernel's control-flow graph (blocks, calls, loops);
//!   [`observe`]: the analysis over it of which results are certain to
//!   reach a later check (the fast detector's thinning);
//!   [`range_set`]: the small sorted sets of register ranges its analyses use;
//! - [`fp`]: host-side classification of floating-point bit patterns;
//! - [`hash`]: a fast hash for maps keyed by the program's own data;
//! - [`report`]: the `xfpx-report/1` report model (JSON and MessagePack);
//!   [`screened`]: launch screening in it (how launches were checked, what
//!   screens found);
//! - [`config`]: the run configuration handed from the CLI to a backend,
//!   checked once, and the one mode and output-format enums;
//! - [`backend`]: the seam every vendor's backend implements for the CLI;
//! - [`event`]: the event stream from the instrumented processes to the CLI;
//!   [`tool_stream`]: its instrumented end, shared by the vendors' tool libraries;
//! - [`fault`]: permanent-fault error models, their locations and the fault spec of a run;
//!   [`inject_tool`]: the plan of Inject probes one fault makes of a kernel;
//! - [`flow`]: flow analysis (where exceptional values appear, propagate,
//!   disappear or reach a comparison), its tool and its sentences;
//! - [`launcher`]: a process's rank as a parallel launcher sets it;
//! - [`merge`]: combining the reports of several processes into one;
//! - [`limits`]: size limits on the files xfpx reads, and their reader;
//! - [`names`]: kernel names as people read them (demangling);
//! - [`capture`]: the capture format (launches recorded on a GPU, replayed
//!   on the emulator) and the device memory a launch's parameters point into.
//! - [`toolpath`]: where the libraries loaded into programs are found.

pub mod backend;
pub mod capture;
pub mod cfg;
pub mod class;
pub mod config;
pub mod count_tool;
pub mod counters;
pub mod event;
pub mod fault;
pub mod flow;
pub mod fp;
pub mod hash;
pub mod inject_tool;
pub mod launcher;
pub mod limits;
pub mod lower;
pub mod merge;
pub mod names;
pub mod observe;
pub mod operands;
pub mod plan;
pub mod probe;
pub mod range_set;
pub mod region;
pub mod report;
pub mod screened;
pub mod site;
pub mod tool;
pub mod tool_stream;
pub mod toolpath;
pub mod view;

pub use class::{FpFormat, FpOp, InstrClass};
pub use fp::ExceptionKind;
