//! Lowering a verified plan to NVBit call insertions: for each probe, the
//! device function, before or after which instruction, and its arguments
//! in the kinds of NVBit's `nvbit_add_call_arg_*`.

use crate::abi::{self, ArgKind, DeviceFunction};
use crate::record::{
    META_DIVISION, META_GUARDED, META_GUARD_NEGATED, META_GUARD_SHIFT, META_HIGH_WORD, META_KINDS_SHIFT,
    META_RECIPROCAL,
};
use crate::sass::idioms::{division_slow_path, reciprocal_feeds_quotient, reciprocal_format, DivisionSlowPath};
use crate::sass::warpgroup::InFlight;
use crate::sass::SassKernel;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use xfpx_common::cfg::Cfg;
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::lower::Lowering;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, ValueRef, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange};

/// One argument of an inserted call, as NVBit passes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "arg", rename_all = "snake_case")]
pub enum CallArg {
    /// `nvbit_add_call_arg_guard_pred_val`.
    GuardPred,
    /// `nvbit_add_call_arg_const_val32`.
    Const32 { value: u32 },
    /// `nvbit_add_call_arg_const_val64`.
    Const64 { value: u64 },
    /// `nvbit_add_call_arg_reg_val`.
    Reg { num: u16 },
    /// `nvbit_add_call_arg_ureg_val`.
    UReg { num: u16 },
    /// `nvbit_add_call_arg_cbank_val`.
    Cbank { bank: u32, offset: u32 },
    /// `nvbit_add_call_arg_launch_val64` at offset 0.
    LaunchVal64,
    /// `nvbit_add_call_arg_pred_reg`: all predicate registers.
    Preds,
}

impl CallArg {
    /// Whether this argument can fill a parameter of `kind`.
    pub fn fits(self, kind: ArgKind) -> bool {
        match kind {
            ArgKind::GuardPred => self == CallArg::GuardPred,
            ArgKind::Value32 => matches!(
                self,
                CallArg::Reg { .. } | CallArg::UReg { .. } | CallArg::Cbank { .. } | CallArg::Const32 { .. }
            ),
            ArgKind::Const32 => matches!(self, CallArg::Const32 { .. }),
            ArgKind::Const64 => matches!(self, CallArg::Const64 { .. }),
            ArgKind::Launch64 => self == CallArg::LaunchVal64,
            ArgKind::Preds => self == CallArg::Preds,
        }
    }

    /// Short form for dumps: `R4`, `UR2`, `c[0x0][0x160]`, `0x3f800000`.
    pub fn describe(self) -> String {
        match self {
            CallArg::GuardPred => "guard".into(),
            CallArg::Const32 { value } => format!("{value:#x}"),
            CallArg::Const64 { value } => format!("{value:#x}"),
            CallArg::Reg { num } => format!("R{num}"),
            CallArg::UReg { num } => format!("UR{num}"),
            CallArg::Cbank { bank, offset } => format!("c[{bank:#x}][{offset:#x}]"),
            CallArg::LaunchVal64 => "launch".into(),
            CallArg::Preds => "preds".into(),
        }
    }
}

/// One call to insert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallInsertion {
    /// Index of the instruction in the function.
    pub instr: u32,
    pub when: When,
    pub function: String,
    pub args: Vec<CallArg>,
}

/// Why a plan could not be lowered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    #[error("probe {probe}: {what} cannot be lowered by the NVIDIA backend yet")]
    Unsupported { probe: usize, what: String },
    #[error("probe {probe}: value {value:?} of instruction {instr} is not a register or a known value")]
    BadValue { probe: usize, instr: u32, value: ValueRef },
    #[error("call to {function} does not match its declaration: {detail}")]
    Abi { function: String, detail: String },
    #[error(transparent)]
    Declaration(#[from] abi::AbiError),
    #[error(
        "{calls} of its count calls would run where a warpgroup matrix multiply may be in flight (an NVBit call \
         there reads and writes its accumulators before they are written), so it cannot be counted exactly"
    )]
    CountInFlight { calls: usize },
}

/// Lowers plans for one parsed kernel.
#[derive(Debug)]
pub struct NvbitLowering<'k> {
    kernel: &'k SassKernel,
    /// Device address of the device state (`XfpxDeviceState`).
    state_addr: u64,
    functions: Vec<DeviceFunction>,
    /// Put checks of unguarded instructions that are still intact at a
    /// common later point of their block into one call (fast mode).
    grouped: bool,
    /// The counters tool: the first slot of this function's counters in
    /// its launch's count table.
    count_base: u32,
    /// The flow tool: device address of the tool-state memory holding the
    /// flow scratch (see [`crate::flow`]).
    flow_scratch: u64,
    /// Calls the last [`Lowering::lower`] left out because a warpgroup
    /// MMA may be in flight where they would run ([`InFlight`]).
    left_out_in_flight: usize,
}

impl<'k> NvbitLowering<'k> {
    pub fn new(kernel: &'k SassKernel, state_addr: u64) -> Result<Self, LowerError> {
        Ok(NvbitLowering {
            kernel,
            state_addr,
            functions: abi::device_functions()?,
            grouped: false,
            count_base: 0,
            flow_scratch: 0,
            left_out_in_flight: 0,
        })
    }

    /// Calls the last lowering left out: they would have run where a
    /// warpgroup MMA may be in flight.
    pub fn left_out_in_flight(&self) -> usize {
        self.left_out_in_flight
    }

    /// The flow tool: the tool-state memory that holds the flow scratch.
    pub fn flow_scratch(mut self, addr: u64) -> Self {
        self.flow_scratch = addr;
        self
    }

    /// The counters tool: this function's slots start at `base` in its
    /// launch's count table (see [`crate::counts`]).
    pub fn count_slots_from(mut self, base: u32) -> Self {
        self.count_base = base;
        self
    }

    /// Group checks, up to [`GROUP_SLOTS`] per call (see [`group_checks`]).
    pub fn grouping(mut self, on: bool) -> Self {
        self.grouped = on;
        self
    }

    /// Fast mode: a reciprocal's result (`MUFU.RCP R10, R5`) is checked
    /// through the word it reads, as (lo, hi) arguments the device turns
    /// into the reciprocal's kinds. The divisor stays intact longer (until
    /// the quotient is made), so its check can share the quotient's call.
    fn reciprocal_source(
        &self,
        p: &xfpx_common::probe::Probe,
        values: &[ValueRef],
        ins: &InstrView,
        format: FpFormat,
    ) -> Option<(CallArg, CallArg)> {
        if !self.grouped || p.when != When::After || values != [ValueRef::Def(0)] || ins.guarded {
            return None;
        }
        if reciprocal_format(&self.kernel.instrs[p.instr as usize]) != Some(format) {
            return None;
        }
        let (Some(Operand::Reg(u)), Some(Operand::Reg(d))) = (ins.uses.first(), ins.defs.first()) else {
            return None;
        };
        if u.file != RegFile::PerLane || u.overlaps(d) {
            return None;
        }
        // an f32, or the high word of an f64 (the 64H rule)
        let (word, zero) = (CallArg::Reg { num: u.first }, CallArg::Const32 { value: 0 });
        Some(if format == FpFormat::F64 { (zero, word) } else { (word, zero) })
    }

    fn check_abi(&self, call: &CallInsertion) -> Result<(), LowerError> {
        let abi_err = |detail: String| LowerError::Abi { function: call.function.clone(), detail };
        let f = self
            .functions
            .iter()
            .find(|f| f.name == call.function)
            .ok_or_else(|| abi_err("not declared in abi.def".into()))?;
        if f.params.len() != call.args.len() {
            return Err(abi_err(format!("{} arguments for {} parameters", call.args.len(), f.params.len())));
        }
        for (a, p) in call.args.iter().zip(&f.params) {
            if !a.fits(p.kind) {
                return Err(abi_err(format!("{a:?} cannot fill parameter `{}`", p.name)));
            }
        }
        Ok(())
    }
}

/// The (lo, hi) argument pairs that carry one checked operand.
pub(crate) fn value_args(op: &Operand, format: FpFormat, high_word: bool) -> Option<Vec<(CallArg, CallArg)>> {
    let zero = CallArg::Const32 { value: 0 };
    match op {
        Operand::Reg(r) => {
            let reg = |n: u16| match r.file {
                RegFile::PerLane => Some(CallArg::Reg { num: n }),
                RegFile::Uniform => Some(CallArg::UReg { num: n }),
                RegFile::Predicate | RegFile::Accumulator | RegFile::Stack => None,
            };
            let mut out = Vec::new();
            if format == FpFormat::F64 {
                if high_word {
                    out.push((zero, reg(r.first + 1)?));
                } else {
                    for pair in 0..u16::from(r.count / 2) {
                        out.push((reg(r.first + 2 * pair)?, reg(r.first + 2 * pair + 1)?));
                    }
                }
            } else {
                for w in 0..u16::from(r.count) {
                    out.push((reg(r.first + w)?, zero));
                }
            }
            Some(out)
        }
        Operand::Known { bits } => {
            Some(vec![(CallArg::Const32 { value: *bits as u32 }, CallArg::Const32 { value: (*bits >> 32) as u32 })])
        }
        Operand::Memory { .. } | Operand::Other { .. } => None,
    }
}

impl Lowering for NvbitLowering<'_> {
    type Output = Vec<CallInsertion>;
    type Error = LowerError;

    fn lower(&mut self, view: &KernelView, plan: &Plan, _sites: &SiteTable) -> Result<Vec<CallInsertion>, LowerError> {
        let mut calls = Vec::new();
        let mut counting = false;
        for (i, p) in plan.probes.iter().enumerate() {
            let ins = &view.instrs[p.instr as usize];
            match &p.action {
                Action::CheckFp { values, format, kinds } => {
                    let mut meta = u32::from(format.code()) | (u32::from(kinds.0) << META_KINDS_SHIFT);
                    if kinds.contains(ExceptionKind::Div0) {
                        meta |= META_DIVISION;
                    }
                    // the (lo, hi, meta) of every value the probe checks
                    let mut slots: Vec<(CallArg, CallArg, u32)> = Vec::new();
                    if let Some((lo, hi)) = self.reciprocal_source(p, values, ins, *format) {
                        slots.push((lo, hi, meta | META_RECIPROCAL));
                    } else {
                        for v in values {
                            let live;
                            let (op, high_word) = match v {
                                ValueRef::Def(n) => (
                                    ins.defs.get(*n as usize),
                                    self.kernel.high_word.get(p.instr as usize).copied().unwrap_or(false),
                                ),
                                ValueRef::Use(n) => (ins.uses.get(*n as usize), false),
                                ValueRef::Reg(r) => {
                                    live = Operand::Reg(*r);
                                    (Some(&live), false)
                                }
                            };
                            let bad = || LowerError::BadValue { probe: i, instr: p.instr, value: *v };
                            let op = op.ok_or_else(bad)?;
                            // a predicate holds no floating-point value: nothing to check
                            if matches!(op, Operand::Reg(r) if r.file == RegFile::Predicate) {
                                continue;
                            }
                            let meta = if high_word { meta | META_HIGH_WORD } else { meta };
                            let pairs = value_args(op, *format, high_word).ok_or_else(bad)?;
                            slots.extend(pairs.into_iter().map(|(lo, hi)| (lo, hi, meta)));
                        }
                    }
                    for (lo, hi, meta) in slots {
                        let call = CallInsertion {
                            instr: p.instr,
                            when: p.when,
                            function: abi::CHECK_VALUE.to_string(),
                            args: vec![
                                CallArg::GuardPred,
                                lo,
                                hi,
                                CallArg::Const32 { value: p.site.0 },
                                CallArg::Const32 { value: meta },
                                CallArg::Const64 { value: self.state_addr },
                                CallArg::LaunchVal64,
                            ],
                        };
                        self.check_abi(&call)?;
                        calls.push(call);
                    }
                }
                Action::Count { counter } => {
                    // the counters tool: the table is the per-launch value
                    let call = crate::counts::count_call(self.kernel, plan, i, p, *counter, self.count_base)?;
                    self.check_abi(&call)?;
                    calls.push(call);
                    counting = true;
                }
                Action::Inject { change, threads, .. } => {
                    // the inject tool: `state_addr` is the run's XfpxInjectState
                    for call in crate::inject::inject_calls(self.kernel, i, p, change, threads, self.state_addr)? {
                        self.check_abi(&call)?;
                        calls.push(call);
                    }
                }
                Action::Flow { .. } => {
                    for call in crate::flow::flow_calls(self.kernel, i, p, self.state_addr, self.flow_scratch)? {
                        self.check_abi(&call)?;
                        calls.push(call);
                    }
                }
                _ => return Err(LowerError::Unsupported { probe: i, what: "this action".into() }),
            }
        }
        if counting {
            calls = crate::counts::merge_guard_counts(self.kernel, plan, self.count_base, calls);
            for c in &calls {
                self.check_abi(c)?;
            }
        }
        if self.grouped {
            calls = move_to_slow_paths(self.kernel, calls);
            calls = group_checks(self.kernel, calls, self.state_addr);
            for c in &calls {
                self.check_abi(c)?;
            }
        }
        // no call where a warpgroup MMA may be in flight: a count left out
        // would make the counts wrong, a check or fault left out is said
        let windows = InFlight::of(self.kernel);
        self.left_out_in_flight = 0;
        if windows.any() {
            let before = calls.len();
            calls.retain(|c| !windows.at(c.instr, c.when));
            let left_out = before - calls.len();
            if counting && left_out > 0 {
                return Err(LowerError::CountInFlight { calls: left_out });
            }
            self.left_out_in_flight = left_out;
        }
        Ok(calls)
    }
}

/// Fast mode: the checks an f64 division's fast path needs only when it
/// fails, those of the quotient its test reads and of the divisor through
/// the reciprocal that quotient is made from, move to the entry of the
/// slow block ([`division_slow_path`]): every exceptional quotient or
/// divisor goes there with the registers the check reads intact, and a
/// clean division never runs them. A check whose registers its block
/// still overwrites after it stays where it is.
pub fn move_to_slow_paths(kernel: &SassKernel, calls: Vec<CallInsertion>) -> Vec<CallInsertion> {
    let Ok(cfg) = kernel.cfg() else { return calls };
    let mut paths: HashMap<usize, Option<DivisionSlowPath>> = HashMap::new();
    calls
        .into_iter()
        .map(|mut c| {
            if let Some(entry) = slow_path_of(kernel, &cfg, &mut paths, &c) {
                c.instr = entry as u32;
                c.when = When::Before;
            }
            c
        })
        .collect()
}

/// Where the check `c` can move to (see [`move_to_slow_paths`]).
fn slow_path_of(
    kernel: &SassKernel,
    cfg: &Cfg,
    paths: &mut HashMap<usize, Option<DivisionSlowPath>>,
    c: &CallInsertion,
) -> Option<usize> {
    let [_, lo, hi, _, CallArg::Const32 { value: meta }, _, _] = c.args[..] else { return None };
    let i = c.instr as usize;
    if c.function != abi::CHECK_VALUE || kernel.view.instrs.get(i)?.guarded {
        return None;
    }
    if FpFormat::from_code((meta & ((1 << META_KINDS_SHIFT) - 1)) as u8) != Some(FpFormat::F64) {
        return None;
    }
    let block = *cfg.block_of.get(i)?;
    let path = paths.entry(block).or_insert_with(|| division_slow_path(kernel, cfg, block)).as_ref()?;
    let q = path.quotient.first;
    let quotient = meta & META_RECIPROCAL == 0 && (lo, hi) == (CallArg::Reg { num: q }, CallArg::Reg { num: q + 1 });
    let divisor = meta & META_RECIPROCAL != 0 && reciprocal_feeds_quotient(kernel, cfg, i, path);
    if !(quotient || divisor) {
        return None;
    }
    // intact from the check to the end of its block
    let regs: Vec<RegRange> = [lo, hi].into_iter().filter_map(arg_reg).collect();
    let from = if c.when == When::After { i + 1 } else { i };
    let overwritten = (from..cfg.blocks[block].end).any(|j| regs.iter().any(|r| kernel.view.instrs[j].writes(r)));
    (!overwritten).then_some(path.slow_entry)
}

/// Values one grouped call checks, at most.
pub const GROUP_SLOTS: usize = 3;

/// A single check waiting for its group: the registers it reads, its
/// site and meta packed as a grouped call carries them, and the single
/// call (guard, lo, hi, site, meta, state, launch) it replaces.
struct PendingCheck {
    regs: Vec<RegRange>,
    site_meta: u64,
    /// Its instruction is guarded: the slot carries the guard.
    guarded: bool,
    single: CallInsertion,
}

fn arg_reg(a: CallArg) -> Option<RegRange> {
    match a {
        CallArg::Reg { num } => Some(RegRange::new(RegFile::PerLane, num, 1)),
        CallArg::UReg { num } => Some(RegRange::new(RegFile::Uniform, num, 1)),
        _ => None,
    }
}

/// Group value checks: a check can wait until later in its basic block as
/// long as nothing writes its registers, so checks are collected and
/// emitted `GROUP_SLOTS` at a time, before the first instruction that
/// would overwrite one of them, before the block's control or barrier
/// instruction, or after its last instruction. The check of a guarded
/// instruction (`@P0 ...`, `@!P0 ...`) joins a group with its guard: the
/// slot counts only where the predicate, which must stay intact too,
/// held ([`META_GUARDED`]). Calls are never placed at a guarded
/// instruction (they would run only where its guard holds, seen on the
/// H100); a group with no unguarded place, and a guarded check left
/// alone, keep their own calls where they were. A kernel whose control
/// flow is unknown keeps every call as it is.
pub fn group_checks(kernel: &SassKernel, calls: Vec<CallInsertion>, state_addr: u64) -> Vec<CallInsertion> {
    let view = &kernel.view;
    let Ok(cfg) = kernel.cfg() else { return calls };
    let n = view.instrs.len();
    // by position: 2i before instruction i, 2i+1 after it
    let mut ready: Vec<Vec<PendingCheck>> = (0..2 * n).map(|_| Vec::new()).collect();
    let mut out = Vec::new();
    for c in calls {
        let (site, meta) = match c.args[..] {
            [_, _, _, CallArg::Const32 { value: site }, CallArg::Const32 { value: meta }, _, _]
                if c.function == abi::CHECK_VALUE && (c.instr as usize) < n =>
            {
                (site, meta)
            }
            _ => {
                out.push(c);
                continue;
            }
        };
        let mut regs: Vec<RegRange> = [c.args[1], c.args[2]].into_iter().filter_map(arg_reg).collect();
        let mut meta = meta;
        let guarded = view.instrs[c.instr as usize].guarded;
        if guarded {
            match slot_guard(kernel, c.instr as usize, c.when) {
                Some((guard_bits, pred)) => {
                    meta |= guard_bits;
                    regs.push(pred);
                }
                None => {
                    out.push(c);
                    continue;
                }
            }
        }
        let pos = 2 * c.instr as usize + usize::from(c.when == When::After);
        ready[pos].push(PendingCheck { regs, site_meta: u64::from(site) | u64::from(meta) << 32, guarded, single: c });
    }
    // the group's place: the first unguarded of the places offered
    let emit = |out: &mut Vec<CallInsertion>, pending: &mut Vec<PendingCheck>, places: &[Option<(usize, When)>]| {
        let Some((instr, when)) = places.iter().flatten().copied().find(|&(i, _)| !view.instrs[i].guarded) else {
            out.extend(pending.drain(..).map(|p| p.single));
            return;
        };
        for chunk in pending.chunks(GROUP_SLOTS) {
            let call = match chunk {
                [one] if one.guarded => one.single.clone(),
                [one] => CallInsertion { instr: instr as u32, when, ..one.single.clone() },
                _ => {
                    // (lo, hi, site | meta << 32) per slot; empty slots check nothing
                    let empty =
                        [CallArg::Const32 { value: 0 }, CallArg::Const32 { value: 0 }, CallArg::Const64 { value: 0 }];
                    let mut args = vec![CallArg::Preds];
                    args.extend(
                        chunk
                            .iter()
                            .map(|p| [p.single.args[1], p.single.args[2], CallArg::Const64 { value: p.site_meta }])
                            .chain(std::iter::repeat(empty))
                            .take(GROUP_SLOTS)
                            .flatten(),
                    );
                    args.extend([CallArg::Const64 { value: state_addr }, CallArg::LaunchVal64]);
                    CallInsertion { instr: instr as u32, when, function: abi::CHECK_VALUES3.to_string(), args }
                }
            };
            out.push(call);
        }
        pending.clear();
    };
    for b in &cfg.blocks {
        let mut pending: Vec<PendingCheck> = Vec::new();
        // where the latest pending check became ready, and the latest
        // unguarded place since: every pending value is intact at both
        let mut last = (b.start, When::Before);
        let mut spot: Option<(usize, When)> = None;
        for j in b.start..b.end {
            if !ready[2 * j].is_empty() {
                pending.append(&mut ready[2 * j]);
                last = (j, When::Before);
                spot = None;
            }
            let ins = &view.instrs[j];
            let writes = pending.iter().any(|p| p.regs.iter().any(|r| ins.writes(r)));
            if !pending.is_empty() && (writes || ins.control != Control::None) {
                // before this instruction everything pending is intact too
                emit(&mut out, &mut pending, &[Some(last), Some((j, When::Before)), spot]);
            } else if pending.len() >= GROUP_SLOTS && !ins.guarded {
                // a full group that waited for an unguarded place
                emit(&mut out, &mut pending, &[Some((j, When::Before))]);
            }
            if !ready[2 * j + 1].is_empty() {
                pending.append(&mut ready[2 * j + 1]);
                last = (j, When::After);
                spot = None;
            }
            if !ins.guarded && ins.control == Control::None {
                spot = Some((j, When::After));
            }
            if j + 1 == b.end && !pending.is_empty() {
                emit(&mut out, &mut pending, &[Some(last), spot]);
            } else if pending.len() >= GROUP_SLOTS && !view.instrs[last.0].guarded {
                emit(&mut out, &mut pending, &[Some(last)]);
            }
        }
    }
    out.sort_by_key(|c| (c.instr, c.when));
    out
}

/// The meta bits and the predicate register of the guard of instruction
/// `i`, for a grouped slot of its check; `None` when the guard is not a
/// per-lane predicate register, or the instruction writes it (a check
/// after it would read the new value).
pub(crate) fn slot_guard(kernel: &SassKernel, i: usize, when: When) -> Option<(u32, RegRange)> {
    let guard = kernel.instrs[i].guard.as_ref()?;
    let p = &guard.pred;
    if p.kind != crate::sass::parse::RegKind::P || p.is_zero() || p.num > 7 {
        return None;
    }
    let pred = RegRange::new(RegFile::Predicate, p.num, 1);
    if when == When::After && kernel.view.instrs[i].writes(&pred) {
        return None;
    }
    let negated = if p.negated { META_GUARD_NEGATED } else { 0 };
    Some((META_GUARDED | negated | (u32::from(p.num) << META_GUARD_SHIFT), pred))
}

#[cfg(test)]
mod tests;
