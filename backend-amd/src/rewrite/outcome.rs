//! The public face of a rewrite: its options, its errors, and the outcome
//! of every kernel and device function (what the listing and the JSON show).

use serde::{Deserialize, Serialize};
use xfpx_common::config::KernelFilter;
use xfpx_common::report::SiteCoverage;
use xfpx_common::site::SiteTable;

use super::listing::Rendered;
use super::lower::RefusedSite;
use super::regs::RegisterChange;
use super::table::{TableAddress, TableLayout};
use crate::builder::{LayoutError, Strategy};

/// Why a rewrite, a kernel or a site failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The input could not be read as a code object.
    #[error("{0}")]
    Input(#[from] crate::error::Error),
    /// The ELF cannot be rebuilt with appended code.
    #[error("layout: {0}")]
    Layout(String),
    /// An instruction could not be encoded (an internal inconsistency).
    #[error("encoding: {0}")]
    Encode(String),
    /// A kernel cannot be instrumented.
    #[error("{0}")]
    Kernel(String),
    /// A site cannot be instrumented (the kernel still is, without it).
    #[error("{0}")]
    Refused(String),
    /// A mode the rewriter does not lower.
    #[error("mode {} is not available for AMD rewrites (detect, screen, count)", .0.name())]
    Mode(Mode),
    /// A rewritten object's record of its instrumentation cannot be read or applied.
    #[error("rewrite record: {0}")]
    Record(String),
}

impl From<LayoutError> for RewriteError {
    fn from(e: LayoutError) -> Self {
        RewriteError::Layout(e.0)
    }
}

/// What the appended code does: the common mode list. `Detect` checks the
/// results of FP instructions, one record per (site, kind, format);
/// `Screen` reads TRAPSTS exception bits at the end of each wave, one record
/// per kernel; `Count` counts the wave instructions each kernel executes
/// ([`xfpx_common::tool::InstructionCounter`]). `Fast` is not lowered here.
pub use xfpx_common::config::Mode;

/// The tool whose plans a mode lowers.
pub fn mode_tool(mode: Mode) -> Result<Box<dyn xfpx_common::tool::Tool>, RewriteError> {
    match mode {
        Mode::Detect => Ok(Box::new(xfpx_common::tool::Detector::default())),
        Mode::Screen => Ok(Box::new(xfpx_common::tool::Screener)),
        Mode::Count => Ok(Box::new(xfpx_common::tool::InstructionCounter)),
        Mode::Fast => Err(RewriteError::Mode(mode)),
    }
}

/// Options of a rewrite ([`super::prepare`]).
#[derive(Debug, Clone)]
pub struct RewriteOptions {
    pub mode: Mode,
    /// Only kernels this filter admits (by mangled or demangled name).
    pub kernels: KernelFilter,
    /// Where the appended code finds the table: known now, or given when
    /// the prepared rewrite is emitted.
    pub table: TableAddress,
    /// Place appended code at least this far above the last segment (forces a
    /// new segment; tests use it to exercise far returns).
    pub min_distance: Option<u64>,
    /// Insert the memory waits probes need (on by default; off only to show,
    /// in tests, the hazards that follow without them).
    pub insert_waits: bool,
    /// Counts of the kernels lowered so far, for a progress display.
    pub progress: Option<std::sync::Arc<Progress>>,
}

/// How far a rewrite is: kernels lowered (`done`) of those to lower
/// (`total`; both start again from 0 when placement starts over).
pub use xfpx_common::backend::Progress;

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions {
            mode: Mode::Detect,
            kernels: KernelFilter::default(),
            table: TableAddress::Known(0),
            min_distance: None,
            insert_waits: true,
            progress: None,
        }
    }
}

/// Whether a kernel was rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KernelState {
    Instrumented,
    /// Instrumented, but some of its floating-point sites were refused.
    Partial,
    Excluded,
    Skipped {
        reason: String,
    },
}

/// One line of appended code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListingLine {
    pub address: u64,
    pub words: Vec<u32>,
    pub text: String,
}

/// An instruction of the original code that was overwritten (an anchor, or
/// padding that became a long-jump island).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnchorLine {
    pub address: u64,
    /// Bytes written over the original code from `address` on.
    pub length: usize,
    /// The original instruction (or `padding`).
    pub original: String,
    /// The first instruction written over it.
    pub replaced_by: String,
    /// For a site's anchor: how it reaches its trampoline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reach: Option<super::reach::Reach>,
}

/// The rewrite of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelOutcome {
    pub name: String,
    #[serde(flatten)]
    pub state: KernelState,
    pub instructions: usize,
    pub probes: usize,
    pub trampolines: usize,
    pub waits_added: usize,
    /// Long-jump islands placed in `.text` padding.
    pub islands: usize,
    /// Relays (`s_branch` in padding or relay zones) entries hop through.
    pub relays: usize,
    pub refused_sites: Vec<RefusedSite>,
    /// How many of its floating-point sites are checked (None: excluded,
    /// or a mode that checks none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<SiteCoverage>,
    pub registers: Option<RegisterChange>,
    /// Descriptor words that changed: (field, before, after).
    pub descriptor_diff: Vec<(String, u64, u64)>,
    /// Original instructions overwritten by branches to the trampolines.
    pub anchors: Rendered<AnchorLine>,
    /// Appended code of this kernel's trampolines.
    pub appended: Rendered<ListingLine>,
    /// Exception flags are read: DX10_CLAMP was cleared so TRAPSTS records exceptions.
    pub dx10_clamp_cleared: bool,
    /// Why the metadata note's register counts were left as they were.
    pub metadata_counts_kept: Option<String>,
}

/// The rewrite of one device function (code outside the kernels, reached by
/// calls). Its sites are named by the function and the offset from its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionOutcome {
    pub name: String,
    pub address: u64,
    /// For a copy made for one kernel (the function stays as it is in
    /// place for the others): the original's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<u64>,
    /// The kernels that can reach it (all of them where some call on their
    /// paths has a target the rewriter cannot tell).
    pub reached_by: Vec<String>,
    #[serde(flatten)]
    pub state: KernelState,
    pub instructions: usize,
    pub probes: usize,
    pub trampolines: usize,
    pub waits_added: usize,
    pub islands: usize,
    pub relays: usize,
    pub refused_sites: Vec<RefusedSite>,
    /// How many of its floating-point sites are checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<SiteCoverage>,
    /// First scratch SGPR and VGPR of its trampolines: above every register
    /// of every kernel reaching it (whose descriptors grow to hold them).
    /// None for a copy made for a kernel at its register budget, whose
    /// sites borrow registers dead there as the kernel's do.
    pub scratch: Option<(u16, u16)>,
    pub anchors: Rendered<AnchorLine>,
    pub appended: Rendered<ListingLine>,
}

/// The result of a rewrite ([`super::Prepared::emit`]).
#[derive(Debug, Clone, Serialize)]
pub struct RewriteOutcome {
    #[serde(skip)]
    pub bytes: Vec<u8>,
    pub target: String,
    pub mode: Mode,
    pub strategy: Option<Strategy>,
    /// Address of the first appended byte.
    pub appended_at: Option<u64>,
    pub appended_bytes: u64,
    pub table_address: u64,
    pub table: TableLayout,
    /// The sites the table's slots name (listed by id in the JSON).
    #[serde(serialize_with = "site_list")]
    pub sites: SiteTable,
    pub kernels: Vec<KernelOutcome>,
    /// Device functions the kernels call.
    pub functions: Vec<FunctionOutcome>,
    /// What a reader of the findings should know (e.g. unreadable line tables).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The sites of `table` in the order of their ids.
fn site_list<S: serde::Serializer>(table: &SiteTable, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(table.iter().map(|(_, info)| info))
}

impl KernelState {
    /// Whether the unit runs instrumented code (all or part of its sites).
    pub fn instrumented(&self) -> bool {
        matches!(self, KernelState::Instrumented | KernelState::Partial)
    }
}

impl KernelOutcome {
    /// The outcome of kernel `name` before anything is lowered.
    pub fn new(name: &str, state: KernelState) -> KernelOutcome {
        KernelOutcome {
            name: name.to_string(),
            state,
            instructions: 0,
            probes: 0,
            trampolines: 0,
            waits_added: 0,
            islands: 0,
            relays: 0,
            refused_sites: Vec::new(),
            coverage: None,
            registers: None,
            descriptor_diff: Vec::new(),
            anchors: Rendered::default(),
            appended: Rendered::default(),
            dx10_clamp_cleared: false,
            metadata_counts_kept: None,
        }
    }
}
