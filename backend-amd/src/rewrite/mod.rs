//! Rewriting CDNA code objects for a tool's plans. Each unit (kernel or
//! device function) is decoded once ([`units`]) into a vendor-neutral
//! view, the tool's plan is verified ([`prepare`]) and lowered to
//! trampolines in appended code ([`lower`]), placed after `.text` or in a
//! new segment ([`placement`]), with descriptors grown to hold the scratch
//! registers ([`regs`]), memory waits inserted where a probe reads a
//! register a load may still write ([`waitcnt`]), and the ELF rebuilt
//! around the new code by the object layer's builder ([`crate::builder`]).
//! Device functions that kernels call
//! ([`calls`]) are instrumented like kernels; their trampolines use scratch
//! registers above everything every kernel reaching them uses, and those
//! kernels' descriptors grow to match; a function that must stay as it is
//! for some kernel is copied for each other kernel reaching it (see
//! `placement`'s `clones`). Far sites are reached as [`reach`] says;
//! kernels at their register budget borrow registers dead at each site
//! ([`scratch`], [`liveness`]; across calls, [`interprocedural`]).
//!
//! Two steps: [`prepare`] does all of that and knows the size of the table
//! the code writes; [`Prepared::emit`] writes the table's address and
//! makes the outcome, whose listings render when read ([`listing`]).
//! Modes ([`Mode`]) pick the tool: `Detect` (per-instruction checks, one
//! table slot per (site, kind, format)), `Screen` (the wave's sticky
//! TRAPSTS exception bits at `s_endpgm`, one slot per bit and kernel) and
//! `Count`; other tools' plans
//! ([`prepare_with`]: the inject tool, the flow tool, whose probes call a
//! routine of their unit, see `lower`'s `flow`) are lowered the same way. See
//! `asm-snippets/amd/README.md` for the code shapes and the hardware
//! behaviour screening relies on.

pub mod calls;
pub mod counts;
pub mod division;
pub mod emit;
pub mod encode;
pub mod facts;
pub mod halves;
pub mod interprocedural;
pub mod listing;
pub mod liveness;
pub mod lower;
pub mod outcome;
pub mod placement;
pub mod prepare;
pub mod reach;
pub mod record;
pub mod regs;
pub mod scratch;
pub mod spread;
pub mod table;
pub mod units;
pub mod view;
pub mod waitcnt;

use xfpx_common::tool::Tool;

pub use emit::Prepared;
pub use outcome::{
    AnchorLine, FunctionOutcome, KernelOutcome, KernelState, ListingLine, Mode, Progress, RewriteError, RewriteOptions,
    RewriteOutcome,
};
pub use prepare::ObjectCode;
pub use record::RewriteRecord;
pub use table::TableAddress;

/// Decodes, plans, places and lays out `bytes` for the tool of `opts.mode`.
pub fn prepare(bytes: &[u8], opts: &RewriteOptions) -> Result<Prepared, RewriteError> {
    prepare_with(bytes, opts, outcome::mode_tool(opts.mode)?.as_ref())
}

/// [`prepare`] for the plans of any `tool` (the mode recorded is `opts.mode`).
pub fn prepare_with(bytes: &[u8], opts: &RewriteOptions, tool: &dyn Tool) -> Result<Prepared, RewriteError> {
    prepare_planned(bytes, opts, prepare::Planner::Tool(tool))
}

/// [`prepare`] for the counters tool ([`counts`]); `opts.mode` should be
/// [`Mode::Count`]. The prepared rewrite carries each unit's count layout
/// ([`Prepared::count_layouts`]).
pub fn prepare_counters(bytes: &[u8], opts: &RewriteOptions) -> Result<Prepared, RewriteError> {
    prepare_planned(bytes, opts, prepare::Planner::Counters)
}

fn prepare_planned(
    bytes: &[u8],
    opts: &RewriteOptions,
    planner: prepare::Planner<'_>,
) -> Result<Prepared, RewriteError> {
    prepare_read(bytes, opts, planner, None)
}

/// [`prepare_with`] of the code object `object` read before
/// ([`ObjectCode::read`]): for a run that rewrites one kernel at a time
/// (`opts.kernels`), only that kernel is read again. The same outputs as
/// [`prepare_with`] of its bytes.
pub fn prepare_known(object: &ObjectCode, opts: &RewriteOptions, tool: &dyn Tool) -> Result<Prepared, RewriteError> {
    prepare_read(object.bytes(), opts, prepare::Planner::Tool(tool), Some(object))
}

fn prepare_read(
    bytes: &[u8],
    opts: &RewriteOptions,
    planner: prepare::Planner<'_>,
    known: Option<&ObjectCode>,
) -> Result<Prepared, RewriteError> {
    let units = prepare::Units::read(bytes, opts, planner, known)?;
    let placed = placement::place(&units, bytes, opts)?;
    Prepared::new(units, placed, opts)
}

/// Rewrites `bytes` in one step: [`prepare`], then [`Prepared::emit`] with
/// the known table address (a patchable table is left at address 0).
pub fn rewrite(bytes: &[u8], opts: &RewriteOptions) -> Result<RewriteOutcome, RewriteError> {
    let prepared = prepare(bytes, opts)?;
    let at = prepared.known_table_address().unwrap_or(0);
    prepared.emit(at)
}

/// [`rewrite`] for the plans of any `tool`.
pub fn rewrite_with(bytes: &[u8], opts: &RewriteOptions, tool: &dyn Tool) -> Result<RewriteOutcome, RewriteError> {
    let prepared = prepare_with(bytes, opts, tool)?;
    let at = prepared.known_table_address().unwrap_or(0);
    prepared.emit(at)
}
