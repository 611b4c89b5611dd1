//! The inject tool on NVIDIA: the facts its plan needs from SASS
//! ([`facts`]), the lowering of `Inject` probes to calls of `xfpx_inject`
//! (declared in `abi.def`, operations in `xfpx_layout.h`), the dump of an
//! injection plan, and the host-side mirror of the device state.
//!
//! How each change is made with NVBit's register API (all for the selected
//! threads only, and at a guarded instruction only where its guard held):
//! - a destination XOR (IIO, IMS, IAT/IAW/IAC): one call after; a block
//!   index read into a uniform register (`S2UR`) is XORed for the warp
//!   when any of its lanes is selected (the count is the selected lanes);
//! - a source XOR for one instruction (IMD): XOR and save before, restore after;
//!   a shared-memory address is the base register of the address operand;
//! - a substituted source (IRA): save it and copy the wrong register into
//!   it before, restore after;
//! - a redirected or discarded destination (IRA, IAL ignore): save it
//!   before; after, copy the result to the wrong register (redirect) and
//!   put the saved value back;
//! - another operation (IOC): before, the other operation of the first two
//!   sources' (low) words as the registers hold them (no modifiers) is
//!   computed and saved; after, it replaces the result's (low) word. The
//!   other operation: integer unit `a ^ b`; floating-point unit the f32
//!   product, or the f32 sum when the instruction multiplies;
//! - an inverted predicate (WV): one call after;
//! - a forced guard (IAL force): after the instruction before it (in the
//!   same block, unguarded), the guard is turned on where it was off, and
//!   after the instruction it is turned off again;
//! - a trap (IVOC, IVRA): one call before; the count is also flagged in
//!   mapped host memory, which outlives the context the trap destroys.
//!
//! Threads are selected on the device by `%smid`, the sub-partition
//! `%warpid % 4` (four per SM on Volta to Hopper), the warp slot
//! `%warpid / 4` and `%laneid`.

use crate::abi;
use crate::dump::render_kernel;
use crate::lower::{CallArg, CallInsertion, LowerError, NvbitLowering};
use crate::sass::mix::mix_class;
use crate::sass::parse::{Bank, RegKind, SassOperand};
use crate::sass::SassKernel;
use std::fmt::Write as _;
use xfpx_common::config::OutputFormat;
use xfpx_common::counters::{MemSpace, MixClass};
use xfpx_common::fault::{Dim, FaultLocation, FaultSpec, Unit};
use xfpx_common::inject_tool::{InjectFacts, InjectPlan, Injector, SpecialIndex};
use xfpx_common::lower::Lowering;
use xfpx_common::plan::verify;
use xfpx_common::probe::{Change, Probe, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{Control, Operand, RegFile, RegRange};

/// Operations of `xfpx_inject` (mirrors `XFPX_INJECT_*` in xfpx_layout.h).
pub mod op {
    pub const XOR: u64 = 1;
    pub const INVERT_PRED: u64 = 2;
    pub const SAVE: u64 = 3;
    pub const DISCARD: u64 = 4;
    pub const REDIRECT: u64 = 5;
    pub const SUBSTITUTE: u64 = 6;
    pub const RESTORE: u64 = 7;
    pub const OTHER_OP: u64 = 8;
    pub const WRITE_SCRATCH: u64 = 9;
    pub const FORCE_SET: u64 = 10;
    pub const FORCE_RESTORE: u64 = 11;
    pub const TRAP: u64 = 12;
    pub const XOR_SAVE: u64 = 13;
    pub const XOR_UNIFORM: u64 = 14;
    /// Details of OTHER_OP.
    pub const OTHER_XOR: u64 = 0;
    pub const OTHER_FMUL: u64 = 1;
    pub const OTHER_FADD: u64 = 2;
}

/// Bytes of `XfpxInjectState`: a 32-byte header, then 64 warps x 32 lanes
/// x 8 scratch words.
pub const STATE_BYTES: u64 = 32 + 64 * 32 * 8 * 4;
/// Offset of `fired_host` in the state.
pub const FIRED_HOST_OFFSET: u64 = 8;

/// The activations the device counted, from the state header's bytes.
pub fn read_activations(header: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(header.get(0..8)?.try_into().ok()?))
}

/// What the inject tool needs of each instruction of `kernel`.
pub fn facts(kernel: &SassKernel) -> Vec<InjectFacts> {
    let cfg = kernel.cfg().ok();
    let view = &kernel.view;
    kernel
        .instrs
        .iter()
        .zip(&view.instrs)
        .enumerate()
        .map(|(i, (s, v))| {
            let mix = mix_class(s, v.class);
            let ndefs = v.defs.len().min(s.operands.len());
            let sources = &s.operands[ndefs..];
            let unit = match mix {
                MixClass::Fp { .. } => Some(Unit::Fp),
                MixClass::Integer => Some(Unit::Int),
                _ => None,
            };
            let immediate =
                sources.iter().any(|o| matches!(o, SassOperand::ImmBits { .. } | SassOperand::ImmValue { .. }));
            // the paper's IMS: an operand in constant memory (a constant-bank
            // operand, `LDC`: the launch's parameters among them) or a load
            // from shared memory; corrupting a parameter that holds a
            // pointer is the model's bad memory source, often a DUE
            let memory_source = sources.iter().any(|o| matches!(o, SassOperand::ConstBank { .. }))
                || matches!(mix, MixClass::Load { space: MemSpace::Shared | MemSpace::Constant });
            let shared_store = (matches!(mix, MixClass::Store { space: MemSpace::Shared })
                && matches!(v.uses.get(1), Some(Operand::Reg(r)) if r.file == RegFile::PerLane)
                && s.operands.first().and_then(address_register).is_some())
            .then_some((1, 0));
            let special = match (s.opcode.as_str(), s.operands.get(1)) {
                ("S2R" | "S2UR", Some(SassOperand::Other { text })) => special_index(text),
                _ => None,
            };
            let forceable_guard = s.guard.as_ref().is_some_and(|g| {
                let p = &g.pred;
                let own = RegRange::new(RegFile::Predicate, p.num, 1);
                p.kind == RegKind::P
                    && !p.is_zero()
                    && i > 0
                    && !v.writes(&own)
                    && !view.instrs[i - 1].guarded
                    && view.instrs[i - 1].control == Control::None
                    && cfg.as_ref().is_some_and(|c| c.block_of.get(i - 1) == c.block_of.get(i))
            });
            // every index is read with S2R: none arrives in a register
            InjectFacts {
                unit,
                immediate,
                memory_source,
                shared_store,
                special,
                index_inputs: Default::default(),
                forceable_guard,
                lane_mask: None,
            }
        })
        .collect()
}

fn special_index(text: &str) -> Option<SpecialIndex> {
    let dim = |d: &str| match d {
        "X" => Some(Dim::X),
        "Y" => Some(Dim::Y),
        "Z" => Some(Dim::Z),
        _ => None,
    };
    if let Some(d) = text.strip_prefix("SR_TID.") {
        return dim(d).map(SpecialIndex::Thread);
    }
    text.strip_prefix("SR_CTAID.").and_then(dim).map(SpecialIndex::Block)
}

/// The per-lane base register of an address operand (`[R1+0x10]`, `[R1]`).
fn address_register(o: &SassOperand) -> Option<u16> {
    let SassOperand::Memory { text } = o else { return None };
    let inner = text.strip_prefix('[')?.split(']').next()?;
    let base = inner.split('+').next()?.trim();
    let num = base.strip_prefix('R')?.split('.').next()?;
    let n: u16 = num.parse().ok()?;
    (n < 255).then_some(n)
}

/// Integer comparisons and predicate logic write only their leading
/// predicates; the kernel view, built for the detector, counts the first
/// general register among their written operands (as for `SHFL`). The
/// inject tool, which changes what is written, sees them corrected.
fn predicate_writers_corrected(kernel: &SassKernel) -> SassKernel {
    let mut k = kernel.clone();
    for (s, v) in k.instrs.iter().zip(k.view.instrs.iter_mut()) {
        if !["ISETP", "UISETP", "PLOP3", "UPLOP3"].contains(&s.opcode.as_str()) {
            continue;
        }
        let preds = v.defs.iter().take_while(|o| !matches!(o, Operand::Reg(r) if r.file != RegFile::Predicate)).count();
        v.uses = v.defs[preds..].iter().chain(v.uses.iter()).cloned().collect();
        v.defs.truncate(preds);
    }
    k
}

/// The inject plan of `kernel`, verified, with the kernel it was made on
/// (see [`predicate_writers_corrected`]).
pub fn plan_injection(
    kernel: &SassKernel,
    fault: &FaultSpec,
    sites: &mut SiteTable,
) -> Result<(InjectPlan, SassKernel), String> {
    let kernel = predicate_writers_corrected(kernel);
    let ip = Injector { fault: fault.clone() }.plan(&kernel.view, &facts(&kernel), sites);
    verify(&ip.plan, &kernel.view, sites).map_err(|e| format!("internal: injection plan rejected: {e}"))?;
    Ok((ip, kernel))
}

/// `where` and `warps` of a location (see abi.def).
fn location_args(loc: &FaultLocation) -> (u64, u64) {
    let sub = loc.subpartition.map_or(0, |s| (u64::from(s) + 1).min(0xff));
    let at = (loc.lanes.0 & 0xffff_ffff) | (u64::from(loc.sm) & 0xffff) << 32 | sub << 48;
    let warps = match &loc.warps {
        None => u64::MAX,
        Some(ranges) => {
            ranges.iter().flat_map(|&(a, b)| a.min(64)..=b.min(63)).filter(|&w| w < 64).fold(0u64, |m, w| m | 1 << w)
        }
    };
    (at, warps)
}

fn op_word(code: u64, reg: u16, count: u8, other: u16, detail: u64) -> u64 {
    code | u64::from(reg & 0xff) << 8 | u64::from(count) << 16 | u64::from(other & 0xff) << 24 | detail << 32
}

/// A source as a 32-bit call argument (its low word), for OTHER_OP.
fn source_arg(kernel: &SassKernel, instr: usize, n: usize) -> CallArg {
    let v = &kernel.view.instrs[instr];
    let zero = CallArg::Const32 { value: 0 };
    match v.uses.get(n) {
        Some(Operand::Reg(r)) if r.file == RegFile::PerLane => CallArg::Reg { num: r.first },
        Some(Operand::Reg(r)) if r.file == RegFile::Uniform => CallArg::UReg { num: r.first },
        Some(Operand::Known { bits }) => CallArg::Const32 { value: *bits as u32 },
        Some(Operand::Memory { .. }) => {
            let s = &kernel.instrs[instr];
            match s.operands.get(v.defs.len() + n) {
                Some(SassOperand::ConstBank { bank: Bank::Index(b), offset, .. }) if *offset >= 0 => {
                    CallArg::Cbank { bank: *b, offset: *offset as u32 }
                }
                _ => zero,
            }
        }
        _ => zero,
    }
}

/// The calls of one `Inject` probe; `state` is the device address of the
/// `XfpxInjectState`.
pub fn inject_calls(
    kernel: &SassKernel,
    index: usize,
    p: &Probe,
    change: &Change,
    threads: &FaultLocation,
    state: u64,
) -> Result<Vec<CallInsertion>, LowerError> {
    let i = p.instr as usize;
    let ins = &kernel.view.instrs[i];
    let unsupported = |what: &str| LowerError::Unsupported { probe: index, what: what.to_string() };
    let lane_reg = |o: Option<&Operand>| match o {
        Some(Operand::Reg(r)) if r.file == RegFile::PerLane && r.first as u32 + r.count as u32 <= 255 => Ok(*r),
        _ => Err(unsupported("an injection into a value that is not a general register")),
    };
    let (at, warps) = location_args(threads);
    let zero = CallArg::Const32 { value: 0 };
    let call =
        |instr: u32, when: When, code: u64, reg: RegRange, other: u16, detail: u64, value: u64, args: [CallArg; 2]| {
            CallInsertion {
                instr,
                when,
                function: abi::INJECT.into(),
                args: vec![
                    CallArg::GuardPred,
                    args[0],
                    args[1],
                    CallArg::Const64 { value: op_word(code, reg.first, reg.count, other, detail) },
                    CallArg::Const64 { value },
                    CallArg::Const64 { value: at },
                    CallArg::Const64 { value: warps },
                    CallArg::Const64 { value: state },
                ],
            }
        };
    let me = p.instr;
    let none = RegRange::new(RegFile::PerLane, 0, 0);
    let pair = |code_before: u64, code_after: u64, r: RegRange, other: u16, value: u64| {
        vec![
            call(me, When::Before, code_before, r, other, 0, value, [zero, zero]),
            call(me, When::After, code_after, r, other, 0, 0, [zero, zero]),
        ]
    };
    Ok(match *change {
        Change::SpecialRead { def, mask } if matches!(ins.defs.get(def as usize), Some(Operand::Reg(r)) if r.file == RegFile::Uniform && r.first < 63) =>
        {
            let Some(Operand::Reg(r)) = ins.defs.get(def as usize) else { unreachable!() };
            vec![call(me, When::After, op::XOR_UNIFORM, *r, 0, 0, mask, [zero, zero])]
        }
        Change::XorDef { def, mask } | Change::SpecialRead { def, mask } => {
            vec![call(me, When::After, op::XOR, lane_reg(ins.defs.get(def as usize))?, 0, 0, mask, [zero, zero])]
        }
        Change::XorUse { use_index, mask } => {
            let r = match ins.uses.get(use_index as usize) {
                Some(Operand::Memory { .. }) => {
                    let s = &kernel.instrs[i];
                    let base = s
                        .operands
                        .get(ins.defs.len() + use_index as usize)
                        .and_then(address_register)
                        .ok_or_else(|| unsupported("an address without a general base register"))?;
                    RegRange::new(RegFile::PerLane, base, 1)
                }
                o => lane_reg(o)?,
            };
            pair(op::XOR_SAVE, op::RESTORE, r, 0, mask)
        }
        Change::SubstituteUse { use_index, from } => {
            let r = lane_reg(ins.uses.get(use_index as usize))?;
            lane_reg(Some(&Operand::Reg(from)))?;
            pair(op::SUBSTITUTE, op::RESTORE, r, from.first, 0)
        }
        Change::RedirectDef { def, to } => {
            let r = lane_reg(ins.defs.get(def as usize))?;
            lane_reg(Some(&Operand::Reg(to)))?;
            pair(op::SAVE, op::REDIRECT, r, to.first, 0)
        }
        Change::DiscardDef { def } => pair(op::SAVE, op::DISCARD, lane_reg(ins.defs.get(def as usize))?, 0, 0),
        Change::OtherOperation { def } => {
            let r = lane_reg(ins.defs.get(def as usize))?;
            let multiplies = ["FMUL", "DMUL", "HMUL2", "FMUL32I"].contains(&kernel.instrs[i].opcode.as_str());
            let detail = match (ins.class.is_fp(), multiplies) {
                (false, _) => op::OTHER_XOR,
                (true, true) => op::OTHER_FADD,
                (true, false) => op::OTHER_FMUL,
            };
            let args = [source_arg(kernel, i, 0), source_arg(kernel, i, 1)];
            vec![
                call(me, When::Before, op::OTHER_OP, r, 0, detail, 0, args),
                call(me, When::After, op::WRITE_SCRATCH, r, 0, 0, 0, [zero, zero]),
            ]
        }
        Change::InvertPredicate { def } => match ins.defs.get(def as usize) {
            Some(Operand::Reg(r)) if r.file == RegFile::Predicate && r.first < 7 => {
                let pred = RegRange::new(RegFile::Predicate, r.first, 1);
                vec![call(me, When::After, op::INVERT_PRED, pred, 0, 0, 0, [zero, zero])]
            }
            _ => return Err(unsupported("a uniform predicate")),
        },
        Change::ForceGuard => {
            let g = kernel.instrs[i].guard.as_ref().ok_or_else(|| unsupported("a forced guard without a guard"))?;
            if g.pred.kind != RegKind::P || g.pred.is_zero() || i == 0 {
                return Err(unsupported("forcing a uniform guard"));
            }
            let pred = RegRange::new(RegFile::Predicate, g.pred.num, 1);
            let negated = u64::from(g.pred.negated);
            vec![
                call(me - 1, When::After, op::FORCE_SET, pred, 0, negated, 0, [zero, zero]),
                call(me, When::After, op::FORCE_RESTORE, pred, 0, negated, 0, [zero, zero]),
            ]
        }
        Change::Trap => vec![call(me, When::Before, op::TRAP, none, 0, 0, 0, [zero, zero])],
        // S2R/S2UR read every index on NVIDIA: none arrives in a register
        Change::XorInput { .. } => {
            return Err(unsupported("an index received in a register (NVIDIA reads indices with S2R)"))
        }
    })
}

/// The inject tool's dump of one kernel: the instructions with their
/// calls, and a line saying how many instructions the fault touches (or,
/// when none, what the model needs).
pub fn dump_injection(
    kernel: &SassKernel,
    fault: &FaultSpec,
    sites: &mut SiteTable,
    format: OutputFormat,
) -> Result<String, String> {
    let (ip, kernel) = plan_injection(kernel, fault, sites)?;
    let calls = NvbitLowering::new(&kernel, 0)
        .and_then(|mut l| l.lower(&kernel.view, &ip.plan, sites))
        .map_err(|e| e.to_string())?;
    let mut out = render_kernel(&kernel, &ip.plan, &calls, format);
    if format == OutputFormat::Text {
        if ip.targets == 0 {
            let wanted = Injector { fault: fault.clone() }.wanted();
            let _ =
                writeln!(out, "inject: {} touches nothing in {}: it has no {wanted}", fault.model, kernel.view.name);
        } else {
            let _ = writeln!(
                out,
                "inject: {} touches {} instructions of {} with {} calls (fault `{fault}`)",
                fault.model,
                ip.targets,
                kernel.view.name,
                calls.len()
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::type_complexity)]
mod tests;
