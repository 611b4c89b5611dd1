//! The flow tool on NVIDIA: `Flow` probes ([`xfpx_common::flow`]) lowered
//! to calls of the device functions `xfpx_flow`, `xfpx_flow_hold` and
//! `xfpx_flow_held` (declared in `abi.def`, written in `xfpx_flow.cuh`),
//! and what the host reads back.
//!
//! An instruction none of whose sources it overwrites gets one call: after
//! it (before it for a comparison), with its result and up to three
//! sources as (lo, hi) words. One that overwrites a source (`FFMA R6, R1,
//! R2, R6`) gets two: before it, `xfpx_flow_hold` keeps the sources'
//! classes in the thread's word of the flow scratch (indexed by `%smid`,
//! `%warpid`, `%laneid`; a thread stays on its SM and slot from one call
//! to the next); after it, `xfpx_flow_held` adds the result's. The scratch
//! lies in the run's tool-state memory (the memory the shim makes for the
//! inject tool), after the bytes the shim writes at its start.
//!
//! The device counts each (site, state) in the site table under the key
//! `site * KEYS_PER_SITE + state`; its entry's `seen` and counts are per
//! kind as for the detector, and its `classes` a byte per kind of the
//! classes the lanes met ([`classes_of_byte`]).

use crate::abi;
use crate::lower::{value_args, CallArg, CallInsertion, LowerError};
use crate::sass::parse::{RegKind, SassOperand};
use crate::sass::SassKernel;
use xfpx_common::flow::{lane, FlowState};
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, Probe, ValueRef, When};
use xfpx_common::site::SiteId;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::Tool;
use xfpx_common::view::Operand;

/// `meta` bits of the flow calls (`XFPX_FLOW_META_*` in xfpx_layout.h):
/// bits 0-7 the result's format code.
pub mod meta {
    pub const SOURCE_SHIFT: u32 = 8;
    pub const SOURCES_SHIFT: u32 = 16;
    pub const RESULT: u32 = 1 << 18;
    pub const DIVISION: u32 = 1 << 19;
}

/// Site-table keys per site: one per flow state.
pub const KEYS_PER_SITE: u32 = 4;
/// Where the flow scratch starts in the tool-state memory.
pub const SCRATCH_OFFSET: u64 = 32;
/// SMs and warp slots per SM the scratch has words for.
pub const MAX_SMS: u64 = 1024;
pub const MAX_WARPS: u64 = 64;
// the scratch starts after what the shim writes into the tool state
const _: () = assert!(SCRATCH_OFFSET >= crate::inject::FIRED_HOST_OFFSET + 8);

/// Bytes of tool-state memory the flow tool needs.
pub const SCRATCH_BYTES: u64 = SCRATCH_OFFSET + MAX_SMS * MAX_WARPS * 32 * 4;

/// The site-table key of (site, state).
pub fn key(site: SiteId, state: FlowState) -> u32 {
    site.0.wrapping_mul(KEYS_PER_SITE) + u32::from(state.code())
}

/// The (site, state) of a site-table key.
pub fn of_key(key: u32) -> (SiteId, FlowState) {
    let state = FlowState::from_code((key % KEYS_PER_SITE) as u8).unwrap_or(FlowState::Appear);
    (SiteId(key / KEYS_PER_SITE), state)
}

/// The lane-word classes a kind's byte of an entry's `classes` holds:
/// sources in bits 0-4, result zero and normal in bits 5 and 6.
pub fn classes_of_byte(b: u8) -> u16 {
    u16::from(b & 31) | (u16::from(b >> 5) & 3) << 8
}

/// The flow tool's plan of a function: the common tool's, without the
/// predicate constants (`PT`, `!PT`) the view gives as known values (the
/// view's sources are the SASS operands after the destinations, one each;
/// packed pairs, whose immediates it joins, are not analysed).
pub fn flow_plan(kernel: &SassKernel, tool: &xfpx_common::flow::FlowTool, sites: &mut SiteTable) -> Plan {
    let mut plan = tool.plan(&kernel.view, sites);
    for p in &mut plan.probes {
        let i = p.instr as usize;
        let Action::Flow { sources, .. } = &mut p.action else { continue };
        let first_source = kernel.view.instrs[i].defs.len();
        sources.retain(|v| {
            let ValueRef::Use(n) = v else { return true };
            let raw = kernel.instrs.get(i).and_then(|ins| ins.operands.get(first_source + usize::from(*n)));
            !matches!(raw, Some(SassOperand::Reg(r)) if matches!(r.kind, RegKind::P | RegKind::Up))
        });
    }
    // a comparison left with nothing to read has no probe
    plan.probes.retain(|p| !matches!(&p.action, Action::Flow { sources, result: None, .. } if sources.is_empty()));
    plan
}

/// The (lo, hi) words of one operand of the probe's instruction (a value
/// the instruction reads or writes: register, uniform register or known).
fn words(
    op: Option<&Operand>,
    format: xfpx_common::FpFormat,
    high_word: bool,
    bad: &dyn Fn() -> LowerError,
) -> Result<(CallArg, CallArg), LowerError> {
    let pairs = value_args(op.ok_or_else(bad)?, format, high_word).ok_or_else(bad)?;
    pairs.first().copied().ok_or_else(bad)
}

/// The calls of flow probe `p` (index `probe` of its plan).
pub fn flow_calls(
    kernel: &SassKernel,
    probe: usize,
    p: &Probe,
    state_addr: u64,
    scratch: u64,
) -> Result<Vec<CallInsertion>, LowerError> {
    let Action::Flow { sources, source_format, result, format, division } = &p.action else {
        return Ok(Vec::new());
    };
    let i = p.instr as usize;
    let ins = &kernel.view.instrs[i];
    let high_word = kernel.high_word.get(i).copied().unwrap_or(false);
    let zero = CallArg::Const32 { value: 0 };
    let mut source_args = Vec::new();
    let mut overwritten = false;
    for v in sources {
        let bad = || LowerError::BadValue { probe, instr: p.instr, value: *v };
        let ValueRef::Use(n) = v else { return Err(bad()) };
        let op = ins.uses.get(*n as usize);
        overwritten |= matches!(op, Some(Operand::Reg(r)) if ins.writes(r));
        let (lo, hi) = words(op, *source_format, false, &bad)?;
        source_args.extend([lo, hi]);
    }
    if source_args.len() > 6 {
        return Err(LowerError::Unsupported { probe, what: "a flow probe of more than three sources".into() });
    }
    let n = (source_args.len() / 2) as u32;
    source_args.resize(6, zero);
    let (r_lo, r_hi) = match result {
        Some(v) => {
            let bad = || LowerError::BadValue { probe, instr: p.instr, value: *v };
            let ValueRef::Def(d) = v else { return Err(bad()) };
            words(ins.defs.get(*d as usize), *format, high_word, &bad)?
        }
        None => (zero, zero),
    };
    let mut m =
        u32::from(format.code()) | u32::from(source_format.code()) << meta::SOURCE_SHIFT | n << meta::SOURCES_SHIFT;
    if result.is_some() {
        m |= meta::RESULT;
    }
    if *division {
        m |= meta::DIVISION;
    }
    let site_meta = CallArg::Const64 { value: u64::from(p.site.0) | u64::from(m) << 32 };
    let state = CallArg::Const64 { value: state_addr };
    if overwritten && result.is_some() {
        let scratch = CallArg::Const64 { value: scratch };
        let mut hold = vec![CallArg::GuardPred];
        hold.extend(&source_args);
        hold.extend([CallArg::Const32 { value: m }, scratch]);
        let held = vec![CallArg::GuardPred, r_lo, r_hi, site_meta, scratch, state, CallArg::LaunchVal64];
        return Ok(vec![
            CallInsertion { instr: p.instr, when: When::Before, function: abi::FLOW_HOLD.into(), args: hold },
            CallInsertion { instr: p.instr, when: When::After, function: abi::FLOW_HELD.into(), args: held },
        ]);
    }
    let mut args = vec![CallArg::GuardPred, r_lo, r_hi];
    args.extend(&source_args);
    args.extend([site_meta, state, CallArg::LaunchVal64]);
    Ok(vec![CallInsertion { instr: p.instr, when: p.when, function: abi::FLOW.into(), args }])
}

/// What the device's lane word constants are: tested against the layout header.
pub const LANE_BITS: [(&str, u16); 8] = [
    ("XFPX_FLOW_SRC_NAN", lane::SRC_NAN),
    ("XFPX_FLOW_SRC_INF", lane::SRC_INF),
    ("XFPX_FLOW_SRC_SUB", lane::SRC_SUB),
    ("XFPX_FLOW_SRC_ZERO", lane::SRC_ZERO),
    ("XFPX_FLOW_SRC_NORMAL", lane::SRC_NORMAL),
    ("XFPX_FLOW_DIVISION", lane::DIVISION),
    ("XFPX_FLOW_NO_RESULT", lane::NO_RESULT),
    ("XFPX_FLOW_RESULT_SHIFT", 5),
];

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
