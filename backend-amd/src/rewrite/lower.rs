//! Lowering a verified plan to trampolines. Each instrumented instruction is
//! overwritten by an `s_branch` (plus `s_nop 0` filling an 8-byte slot) to
//! appended code (or, far from it, a long jump over a window of
//! instructions: see `trampoline` and [`super::reach`]) that runs the
//! `before` probes, re-executes the displaced instruction (relocated when
//! it is PC-relative), runs the `after` probes and branches back (a long
//! jump through `s_setpc_b64` when the return is out of `s_branch` reach). SCC is saved around every stretch that writes
//! it; EXEC is saved around the single-lane table update; VCC and M0 are
//! never written. The scratch registers lie above the kernel's allocation,
//! or, in a kernel at its register budget, are a site's own (see
//! [`super::scratch`]; SGPRs live there are kept in lanes meanwhile, see
//! `lanes`).
//! Reading the exception flags ([`Action::ReadExceptionFlags`]) has its own
//! trampoline at `s_endpgm`: the wave's sticky TRAPSTS bits, one table slot
//! per bit and kernel.

use std::collections::BTreeSet;
use std::sync::Arc;
use xfpx_amd_isa::operand::{RegFile as IsaFile, SpecialReg};
use xfpx_amd_isa::{ControlFlow, Hazard, Instruction, Opcode};
use xfpx_common::lower::Lowering;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, CounterKind, Probe, ValueRef, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{KernelView, Operand, RegFile};
use xfpx_common::{ExceptionKind, FpFormat, FpOp, InstrClass};

use super::division::{self, Divisor, Role};
use super::encode::{Encoder, Src, Words};
use super::facts::UnitFacts;
use super::halves;
pub use super::reach::{rel16, IslandPool, PoolMark, Reach, ISLAND_BYTES};
pub use super::scratch::{Scavenger, Scratch, SiteNeeds, SCRATCH_SGPRS, SCRATCH_VGPRS};
use super::table::{SlotKind, TableAddress, TableLayout, TRAPSTS_EXCP_BITS};
use super::view::DecodedInstr;
use super::waitcnt::{waitcnt_imm, WaitAnalysis};
use super::RewriteError;
use crate::builder::Patch;
use checks::{Checks, Half, Lanes, Value, CLASS_INF, CLASS_NAN, CLASS_SUBNORMAL, CLASS_ZERO};

#[path = "checks.rs"]
mod checks;
#[path = "flow.rs"]
mod flow;
#[path = "inject.rs"]
mod inject;
#[path = "lanes.rs"]
mod lanes;
#[path = "memo.rs"]
mod memo;
#[path = "trampoline.rs"]
mod trampoline;
use inject::Part;
pub use memo::CodeMemo;
use memo::Jump;

/// How the reason of a site refused for reach begins.
const OUT_OF_REACH: &str = "out of reach";

/// How the reason of a unit refused for an instruction that must move
/// (relocated or redirected) goes on, before the instruction's own reason.
const MUST_MOVE: &str = "must move and cannot: ";

/// Whether `e` refuses a whole unit for want of a way to a trampoline (a
/// kernel screens the ends of all its waves or none, so one far `s_endpgm`
/// refuses it; an instruction that must move, a call redirected to a copy
/// of its callee, refuses its unit).
pub fn unit_out_of_reach(e: &RewriteError) -> bool {
    matches!(e, RewriteError::Kernel(why)
        if why.starts_with(OUT_OF_REACH) || why.contains(&format!("{MUST_MOVE}{OUT_OF_REACH}")))
}

/// The appended code being built, at a known address.
#[derive(Debug, Clone)]
pub struct Appended {
    pub base: u64,
    pub words: Vec<u32>,
    /// Words that hold half of the table's address, to be written when the
    /// address is known ([`TableAddress::Patchable`]).
    pub table_literals: Vec<TableLiteral>,
    /// Relay zones (addresses) reserved in it.
    pub zones: Vec<std::ops::Range<u64>>,
}

/// A literal dword of the appended code holding half of the table's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLiteral {
    /// Index of the word in the appended code.
    pub word: usize,
    /// The high half (else the low one).
    pub high: bool,
}

impl Appended {
    pub fn new(base: u64) -> Appended {
        Appended { base, words: Vec::new(), table_literals: Vec::new(), zones: Vec::new() }
    }
    pub fn here(&self) -> u64 {
        self.base + 4 * self.words.len() as u64
    }
    /// Drops the words from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.words.truncate(len);
        self.table_literals.retain(|l| l.word < len);
        let end = self.base + 4 * len as u64;
        self.zones.retain(|z| z.end <= end);
    }
    /// Writes the table's address into its literal words.
    pub fn set_table_address(&mut self, address: u64) {
        for l in &self.table_literals {
            self.words[l.word] = if l.high { (address >> 32) as u32 } else { address as u32 };
        }
    }
    fn push(&mut self, w: &[u32]) {
        self.words.extend_from_slice(w);
    }
}

/// A site the lowering left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusedSite {
    pub offset: u64,
    pub instr: String,
    pub reason: String,
    /// Refused because its trampoline was out of reach (placement may
    /// start over with relay zones).
    #[serde(skip)]
    pub out_of_reach: bool,
}

/// What lowering produced for one kernel.
#[derive(Debug, Clone, Default)]
pub struct KernelLowering {
    pub anchors: Vec<Patch>,
    pub trampolines: usize,
    pub probes: usize,
    pub waits_added: usize,
    /// Long-jump islands placed for trampolines beyond `s_branch` reach.
    pub islands: usize,
    /// Relays the entries of trampolines beyond `s_branch` reach hop through.
    pub relays: usize,
    /// How each site's anchor (by address) reaches its trampoline.
    pub reach: Vec<(u64, Reach)>,
    pub refused: Vec<RefusedSite>,
    /// The anchors by address (kept by the methods below).
    anchor_starts: BTreeSet<(u64, usize)>,
    /// The most bytes an anchor patch holds.
    longest_anchor: u64,
}

impl KernelLowering {
    /// Adds an anchor patch.
    pub(super) fn push_anchor(&mut self, patch: Patch) {
        self.anchor_starts.insert((patch.addr, self.anchors.len()));
        self.longest_anchor = self.longest_anchor.max(patch.bytes.len() as u64);
        self.anchors.push(patch);
    }

    /// Drops the anchor patches from `len` on.
    pub(super) fn truncate_anchors(&mut self, len: usize) {
        for (i, p) in self.anchors.iter().enumerate().skip(len) {
            self.anchor_starts.remove(&(p.addr, i));
        }
        self.anchors.truncate(len);
    }

    /// The first anchor patch (in the order they were added) holding all
    /// of `addr..end`, found among those starting at most the longest
    /// patch's length before `addr`.
    pub(super) fn anchor_holding(&mut self, addr: u64, end: u64) -> Option<&mut Patch> {
        let from = addr.saturating_sub(self.longest_anchor);
        let anchors = &self.anchors;
        let first = self
            .anchor_starts
            .range((from, 0)..=(addr, usize::MAX))
            .map(|&(_, i)| i)
            .filter(|&i| end <= anchors[i].addr + anchors[i].bytes.len() as u64)
            .min()?;
        self.anchors.get_mut(first)
    }
}

/// The AMD lowering of one kernel's plan into `appended`.
#[derive(Debug)]
pub struct AmdLowering<'a> {
    pub enc: Encoder,
    pub entry: u64,
    pub instrs: &'a [DecodedInstr],
    /// What lowering asks of `instrs` at many places, found once.
    pub facts: UnitFacts,
    pub waits: &'a WaitAnalysis,
    pub scratch: Scratch,
    pub table: &'a mut TableLayout,
    /// The kernel's name as `table` shares it (its slots found by address).
    pub kernel_name: Arc<str>,
    pub table_address: TableAddress,
    pub appended: &'a mut Appended,
    /// Never-executed padding inside `.text` for long-jump islands.
    pub islands: &'a mut IslandPool,
    pub insert_waits: bool,
    /// Where the unit's flow routine is, once emitted (see `flow`).
    pub flow_routine: Option<u64>,
    /// In a kernel at its register budget: each trampoline's own registers.
    pub scavenger: Option<&'a Scavenger>,
    /// A copy of a device function, or calls that go to copies.
    pub relocation: Option<&'a Relocation>,
    /// The instructions that load the table's address, once encoded (by
    /// the register pair they load; see [`Self::table_address_to`]).
    pub table_words: Option<(u16, [Words; 2])>,
    /// Code encoded once and copied (see `memo`).
    pub memo: &'a mut CodeMemo,
}

/// How a unit's code runs elsewhere than it was linked, or calls elsewhere:
/// a device function copied for one kernel ([`super::placement`]), and the
/// calls (the kernel's and the copies') that go to copies.
#[derive(Debug, Clone, Default)]
pub struct Relocation {
    /// Added to a unit address, the address the original code had there (0
    /// for code in place): what `s_getpc_b64` must give, and where branches
    /// out of the unit go.
    pub origin: u64,
    /// Calls, by unit address, that go to a copy instead: the copy's entry.
    pub redirects: std::collections::BTreeMap<u64, u64>,
    /// Instructions (by index) a trampoline must run even without probes:
    /// those whose effect depends on where they run, and redirected calls.
    pub forced: std::collections::BTreeSet<usize>,
}

impl Relocation {
    /// The relocation of `instrs` copied from their linked addresses to
    /// `origin` less: every instruction that reads the PC or leaves the
    /// unit PC-relatively, and every call in `redirects`.
    pub fn of_copy(
        instrs: &[DecodedInstr],
        origin: u64,
        redirects: std::collections::BTreeMap<u64, u64>,
    ) -> Relocation {
        let range = instrs.first().map_or(0, |d| d.addr)..instrs.last().map_or(0, |d| d.addr + d.insn.length as u64);
        let forced = instrs
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                redirects.contains_key(&d.addr)
                    || match d.insn.control_flow(d.addr) {
                        ControlFlow::GetPc { .. } | ControlFlow::Call { .. } => origin != 0,
                        ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => {
                            origin != 0 && !range.contains(&target)
                        }
                        _ => false,
                    }
            })
            .map(|(i, _)| i)
            .collect();
        Relocation { origin, redirects, forced }
    }
}

/// What a failed lowering gives back: the appended code, the table's slots
/// and the island pool as they were.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    words: usize,
    slots: usize,
    islands: PoolMark,
}

/// Class-mask bits of `v_cmp_class_*`: sNaN, qNaN, -inf, -normal, -denormal,
/// -0, +0, +denormal, +normal, +inf.
impl AmdLowering<'_> {
    fn e(&self) -> Encoder {
        self.enc
    }

    /// The state [`Self::rollback`] returns to.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { words: self.appended.words.len(), slots: self.table.slots.len(), islands: self.islands.mark() }
    }

    /// Forgets what was lowered since `c` (a checkpoint may be returned to again).
    pub fn rollback(&mut self, c: &Checkpoint) {
        self.appended.truncate(c.words);
        self.table.truncate(c.slots);
        self.islands.rollback(&c.islands);
    }

    fn emit(&mut self, w: impl AsRef<[u32]>) {
        self.appended.push(w.as_ref());
    }

    /// Jump from the end of the appended code to `target`: `s_branch` when in
    /// reach, else `s_getpc_b64`/`s_add_u32`/`s_addc_u32`/`s_setpc_b64` with SCC kept.
    /// It leaves the trampoline: SGPRs saved in lanes are read back first.
    fn jump_to(&mut self, target: u64) -> Result<(), RewriteError> {
        let start = self.appended.words.len();
        self.restore_from_lanes()?;
        if let Some(rel) = rel16(self.appended.here(), target) {
            let w = self.e().sopp(Opcode::S_BRANCH, rel)?;
            self.emit(w);
            return Ok(());
        }
        // Out of reach: the address first (the SCC save still scratch), then the restores.
        self.appended.truncate(start);
        self.jump_regs_dead(false)?;
        let j = self.scratch.jump();
        self.save_scc()?;
        let pc = self.appended.here() + 4;
        self.emit(self.jump_words(Jump::GetPc, j)?);
        self.add_to_pair(j, target.wrapping_sub(pc))?;
        self.restore_scc()?;
        self.restore_from_lanes()?;
        self.emit(self.jump_words(Jump::SetPc, j)?);
        Ok(())
    }

    fn save_scc(&mut self) -> Result<(), RewriteError> {
        let w = self.scc_save_words()?;
        self.emit(w);
        Ok(())
    }

    fn restore_scc(&mut self) -> Result<(), RewriteError> {
        let w = self.scc_restore_words()?;
        self.emit(w);
        Ok(())
    }

    /// Re-executes `d` in the appended code. Returns false when the
    /// instruction leaves (no return jump follows).
    fn displaced(&mut self, d: &DecodedInstr) -> Result<bool, RewriteError> {
        let e = self.e();
        let insn = &d.insn;
        let origin = self.relocation.map_or(0, |r| r.origin);
        let redirect = self.relocation.and_then(|r| r.redirects.get(&d.addr).copied());
        let unit = self.instrs.first().map_or(0, |f| f.addr)..self.instrs.last().map_or(0, |l| l.addr + 8);
        // Where a branch goes: out of a copied unit, where the original went.
        let target_of = |t: u64| if unit.contains(&t) { t } else { t.wrapping_add(origin) };
        let original = insn.control_flow(d.addr);
        let flow = match original {
            ControlFlow::Branch { target } => ControlFlow::Branch { target: target_of(target) },
            ControlFlow::CondBranch { target } => ControlFlow::CondBranch { target: target_of(target) },
            ControlFlow::GetPc { value } => ControlFlow::GetPc { value: value.wrapping_add(origin) },
            ControlFlow::Call { target } => {
                ControlFlow::Call { target: redirect.unwrap_or(target.wrapping_add(origin)) }
            }
            other => other,
        };
        match flow {
            ControlFlow::Indirect if redirect.is_some() && insn.op == Opcode::S_SWAPPC_B64 => {
                // A call that goes to a copy: the return address as the
                // original's, then the copy's entry.
                let sdst = (insn.words[0] >> 16 & 0x7F) as u16;
                self.emit(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(sdst)), None)?);
                let got = self.appended.here();
                self.adjust_pair(sdst, (d.addr + 4).wrapping_sub(got))?;
                self.jump_to(redirect.unwrap_or_default())?;
                return Ok(false);
            }
            ControlFlow::Indirect if redirect.is_some() && insn.op == Opcode::S_SETPC_B64 => {
                // a tail call that goes to a copy
                self.jump_to(redirect.unwrap_or_default())?;
                return Ok(false);
            }
            _ => {}
        }
        match flow {
            ControlFlow::Next | ControlFlow::End => {
                self.emit(insn.dwords());
                Ok(!matches!(original, ControlFlow::End))
            }
            ControlFlow::Branch { target } => {
                self.jump_to(target)?;
                Ok(false)
            }
            ControlFlow::CondBranch { target } => {
                if matches!(
                    insn.op,
                    Opcode::S_CBRANCH_CDBGSYS
                        | Opcode::S_CBRANCH_CDBGSYS_AND_USER
                        | Opcode::S_CBRANCH_CDBGSYS_OR_USER
                        | Opcode::S_CBRANCH_CDBGUSER
                        | Opcode::S_CBRANCH_G_FORK
                        | Opcode::S_CBRANCH_I_FORK
                ) {
                    return Err(RewriteError::Refused(format!("{} cannot be moved", insn.base_mnemonic)));
                }
                // Taken: over the fall-through jump to a jump to the target.
                let at = self.appended.words.len();
                self.emit(insn.dwords());
                // Fall-through path continues in the trampoline: branch over the taken path.
                let over = self.appended.words.len();
                self.emit(e.sopp(Opcode::S_BRANCH, 0)?);
                let taken = self.appended.here();
                let rel = rel16(self.appended.base + 4 * at as u64, taken)
                    .ok_or_else(|| RewriteError::Refused("branch in trampoline out of reach".into()))?;
                self.appended.words[at] = (self.appended.words[at] & 0xFFFF_0000) | u32::from(rel);
                self.jump_to(target)?;
                let cont = self.appended.here();
                let rel = rel16(self.appended.base + 4 * over as u64, cont)
                    .ok_or_else(|| RewriteError::Refused("branch in trampoline out of reach".into()))?;
                self.appended.words[over] = (self.appended.words[over] & 0xFFFF_0000) | u32::from(rel);
                Ok(true)
            }
            ControlFlow::GetPc { value } => {
                // s_getpc_b64 sdst, then correct it to the original address + 4.
                self.emit(insn.dwords());
                let got = self.appended.here();
                let sdst = insn.words[0] >> 16 & 0x7F;
                self.adjust_pair(sdst as u16, value.wrapping_sub(got))?;
                Ok(true)
            }
            ControlFlow::Call { target } => {
                let sdst = (insn.words[0] >> 16 & 0x7F) as u16;
                let w = e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(sdst)), None)?;
                self.emit(w);
                let got = self.appended.here();
                self.adjust_pair(sdst, (d.addr + 4).wrapping_sub(got))?;
                self.jump_to(target)?;
                Ok(false)
            }
            ControlFlow::Indirect if insn.op == Opcode::S_SETPC_B64 => {
                self.restore_from_lanes()?;
                self.emit(insn.dwords());
                Ok(false)
            }
            ControlFlow::Indirect if insn.op == Opcode::S_SWAPPC_B64 => {
                // sdst = address after the original; jump to ssrc (copied
                // first, as sdst may overlap it).
                let sdst = (insn.words[0] >> 16 & 0x7F) as u16;
                let ssrc = (insn.words[0] & 0xFF) as u16;
                self.jump_regs_dead(true)?;
                self.restore_from_lanes()?;
                let j = self.scratch.jump();
                self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(j)), Some(Src::Sgpr(ssrc)))?);
                self.emit(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(sdst)), None)?);
                let got = self.appended.here();
                self.adjust_pair(sdst, (d.addr + 4).wrapping_sub(got))?;
                self.emit(e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(j)))?);
                Ok(false)
            }
            ControlFlow::Indirect | ControlFlow::Trap => Err(RewriteError::Refused(format!(
                "{} cannot be moved (its effect depends on where it runs)",
                insn.base_mnemonic
            ))),
        }
    }

    /// `s[r:r+1] += delta` with SCC kept.
    fn adjust_pair(&mut self, r: u16, delta: u64) -> Result<(), RewriteError> {
        self.save_scc()?;
        self.add_to_pair(r, delta)?;
        self.restore_scc()
    }

    /// `s[r:r+1] += delta` (clobbers SCC).
    fn add_to_pair(&mut self, r: u16, delta: u64) -> Result<(), RewriteError> {
        for w in self.pair_add(r, delta)? {
            self.emit(w);
        }
        Ok(())
    }

    /// Single-lane atomic `op` of `v_data` into slot `slot` of the table.
    fn record(&mut self, slot: u32, op: Opcode, data: Src) -> Result<(), RewriteError> {
        self.record_slot(slot, op, data).map(|_| ())
    }

    /// [`Self::record`]; returns the word of the slot's byte offset (None
    /// where it is an inline constant).
    fn record_slot(&mut self, slot: u32, op: Opcode, data: Src) -> Result<Option<usize>, RewriteError> {
        let e = self.e();
        let s = self.scratch;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(Src::Special(SpecialReg::Exec)))?);
        let kept = self.one_lane(&[s.v_addr(), s.v_data()])?;
        let offset = e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), Src::Literal(slot * 4))?;
        self.emit(offset);
        let at = (offset.len() == 2).then(|| self.appended.words.len() - 1);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_data(), data)?);
        self.table_address_to(s.table())?;
        self.emit(e.global_atomic(op, s.v_addr(), s.v_data(), s.table())?);
        self.restore_lane(&kept)?;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(s.exec_save())))?);
        Ok(at)
    }

    /// EXEC := one lane, for a single-lane table update that writes
    /// `vgprs`: lane 0, or with a site's borrowed registers the first
    /// active lane (lane 63 where none is), whose values of `vgprs` are
    /// kept in SGPRs ([`Scratch::lane_keep`], returned as (VGPR, SGPR) for
    /// [`Self::restore_lane`]): borrowed VGPRs are dead at most in the
    /// lanes active at the site. EXEC must be saved already.
    fn one_lane(&mut self, vgprs: &[u16]) -> Result<Vec<(u16, u16)>, RewriteError> {
        let e = self.e();
        let s = self.scratch;
        let exec = Src::Special(SpecialReg::Exec);
        if s.site.is_none() {
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(exec), Some(Src::Int(1)))?);
            return Ok(Vec::new());
        }
        let keep = s.lane_keep();
        if vgprs.len() > keep.len() {
            return Err(RewriteError::Encode("too many VGPRs to keep in one lane".into()));
        }
        // the lane's index first where its values go next
        self.emit(e.sop1(Opcode::S_FF1_I32_B64, Some(Src::Sgpr(keep[0])), Some(exec))?);
        self.emit(e.sop2(Opcode::S_LSHL_B64, exec, Src::Int(1), Src::Sgpr(keep[0]))?);
        let kept: Vec<(u16, u16)> = vgprs.iter().copied().zip(keep).collect();
        for &(v, sg) in &kept {
            self.emit(e.vop1(Opcode::V_READFIRSTLANE_B32, sg, Src::Vgpr(v))?);
        }
        Ok(kept)
    }

    /// Puts back the values [`Self::one_lane`] kept (EXEC still that lane).
    fn restore_lane(&mut self, kept: &[(u16, u16)]) -> Result<(), RewriteError> {
        for &(v, sg) in kept {
            let w = self.e().vop1(Opcode::V_MOV_B32_E32, v, Src::Sgpr(sg))?;
            self.emit(w);
        }
        Ok(())
    }

    /// A count region's update (see [`super::counts`]): one single-lane
    /// 64-bit atomic adds `popcount(EXEC)` to the region's lanes slot and,
    /// through the high dword, 1 to its waves slot (the lanes of one region
    /// never reach 2^32 in a window, so no carry crosses).
    fn count_region(&mut self, kernel: &str, region: usize) -> Result<(), RewriteError> {
        let [lanes, waves] = super::counts::region_slots(region);
        let lo = self.table.slot(kernel, lanes);
        let hi = self.table.slot(kernel, waves);
        if hi != lo + 1 || !lo.is_multiple_of(2) {
            return Err(RewriteError::Refused(format!("region {region}'s count slots are not an aligned pair")));
        }
        let e = self.e();
        let s = self.scratch;
        // the data pair starts at an even VGPR (gfx90a+ align 64-bit operands)
        let data = match s.site {
            Some(_) => self.value_reg()?,
            None if s.vgpr.is_multiple_of(2) => s.vgpr + 2,
            None => s.vgpr + 1,
        };
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(Src::Special(SpecialReg::Exec)))?);
        self.emit(e.sop1(Opcode::S_BCNT1_I32_B64, Some(s.tmp()), Some(Src::Special(SpecialReg::Exec)))?);
        let kept = self.one_lane(&[s.v_addr(), data, data + 1])?;
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), Src::Literal(lo * 4))?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, data, s.tmp())?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, data + 1, Src::Int(1))?);
        self.table_address_to(s.table())?;
        self.emit(e.global_atomic(Opcode::GLOBAL_ATOMIC_ADD_X2, s.v_addr(), data, s.table())?);
        self.restore_lane(&kept)?;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(s.exec_save())))?);
        Ok(())
    }

    /// `s[reg:reg+1]` := the table's address (literals recorded when patchable).
    fn table_address_to(&mut self, reg: u16) -> Result<(), RewriteError> {
        let e = self.e();
        let loads = match self.table_words {
            Some((r, loads)) if r == reg => loads,
            _ => {
                let load = |reg: u16, high: bool| {
                    let value = match self.table_address {
                        TableAddress::Known(a) => Src::Literal(if high { (a >> 32) as u32 } else { a as u32 }),
                        TableAddress::Patchable => Src::FixedLiteral(0),
                    };
                    e.sop1(Opcode::S_MOV_B32, Some(Src::Sgpr(reg)), Some(value))
                };
                let loads = [load(reg, false)?, load(reg + 1, true)?];
                self.table_words = Some((reg, loads));
                loads
            }
        };
        for (words, high) in [(loads[0], false), (loads[1], true)] {
            if self.table_address == TableAddress::Patchable {
                let word = self.appended.words.len() + words.len() - 1;
                self.appended.table_literals.push(TableLiteral { word, high });
            }
            self.emit(words);
        }
        Ok(())
    }

    /// The code of one probe.
    fn probe(&mut self, view: &KernelView, plan: &Plan, p: &Probe) -> Result<(), RewriteError> {
        let e = self.e();
        let s = self.scratch;
        match &p.action {
            Action::CheckFp { values, format, kinds } => self.check(view, p, values, *format, *kinds),
            Action::Count { counter } => {
                let def = plan
                    .counters
                    .get(counter.0 as usize)
                    .ok_or_else(|| RewriteError::Refused(format!("counter {} undeclared", counter.0)))?;
                if let CounterKind::Region { .. } = def.kind {
                    let region = counter.0 as usize;
                    return self.count_region(&view.name, region);
                }
                let per_lane = matches!(def.kind, CounterKind::ThreadExecutions);
                let slot = self.table.slot(&self.kernel_name, SlotKind::Counter { name: def.name.clone(), per_lane });
                let data = if per_lane {
                    self.emit(e.sop1(Opcode::S_BCNT1_I32_B64, Some(s.tmp()), Some(Src::Special(SpecialReg::Exec)))?);
                    s.tmp()
                } else {
                    Src::Int(1)
                };
                self.record(slot, Opcode::GLOBAL_ATOMIC_ADD, data)
            }
            Action::Inject { .. } => self.inject(view, plan, p, Part::Main),
            Action::Flow { .. } => self.flow_probe(view, p),
            other => Err(RewriteError::Refused(format!("action {other:?} is not lowered on AMD"))),
        }
    }

    /// Registers a group of probes reads from the kernel (for waits), into `out`.
    fn probe_reads(view: &KernelView, probes: &[&Probe], out: &mut Vec<(IsaFile, u16)>) {
        for p in probes {
            let ins = &view.instrs[p.instr as usize];
            // a flow probe before its instruction reads its sources, one after it its result
            if matches!(p.action, Action::Flow { .. }) {
                out.extend(flow::flow_reads(view, p, p.when == When::Before));
            }
            if let Action::CheckFp { values, .. } = &p.action {
                for v in values {
                    let op = match v {
                        ValueRef::Def(n) => ins.defs.get(*n as usize),
                        ValueRef::Use(n) => ins.uses.get(*n as usize),
                        ValueRef::Reg(_) => None,
                    };
                    // (one operand's registers, not flattened twice)
                    if let Some(op) = op {
                        out.extend(super::view::isa_registers(op));
                    }
                }
            }
        }
    }

    /// An empty buffer for the registers probes read (the memo's, kept from step to step).
    fn reads_buffer(&mut self) -> Vec<(IsaFile, u16)> {
        let mut reads = std::mem::take(&mut self.memo.reads);
        reads.clear();
        reads
    }

    fn wait(
        &mut self,
        index: usize,
        after: bool,
        regs: &[(IsaFile, u16)],
        count: &mut usize,
    ) -> Result<(), RewriteError> {
        if !self.insert_waits {
            return Ok(());
        }
        if let Some((vm, lg)) = self.waits.wait_for(index, after, regs) {
            let w = self.e().sopp(Opcode::S_WAITCNT, waitcnt_imm(vm, lg))?;
            self.emit(w);
            *count += 1;
        }
        Ok(())
    }

    /// Wait states after the displaced instruction before the probes read its results.
    fn hazard_nops(&mut self, insn: &Instruction) -> Result<(), RewriteError> {
        let e = self.e();
        match insn.op.hazard() {
            Hazard::MatrixResult => {
                // Matrix results are read by VALU only after the pipeline
                // drains: 4 x 8 wait states cover the longest pass counts.
                for _ in 0..4 {
                    self.emit(e.sopp(Opcode::S_NOP, 7)?);
                }
            }
            // gfx940+: a transcendental result needs one wait state before a
            // VALU reads it (the division steps are covered too, harmlessly).
            Hazard::TransResult if self.enc.target.is_gfx940_plus() => self.emit(e.sopp(Opcode::S_NOP, 0)?),
            Hazard::TransResult | Hazard::None => {}
        }
        Ok(())
    }

    /// Whether instruction `index` ends the wave (`s_endpgm`).
    fn ends_wave(&self, index: usize) -> bool {
        index < self.instrs.len() && self.facts.flow(index) == ControlFlow::End
    }

    /// Points the SOPP branch at word `at` to the current end of the code.
    fn patch_skip(&mut self, at: usize) -> Result<(), RewriteError> {
        let rel = rel16(self.appended.base + 4 * at as u64, self.appended.here())
            .ok_or_else(|| RewriteError::Refused("probe too long".into()))?;
        self.appended.words[at] |= u32::from(rel);
        Ok(())
    }
}

/// `hwreg(HW_REG_TRAPSTS, 0, 9)`: hardware register 3, bits [8:0] (the
/// `simm16` packs id [5:0], offset [10:6], size-1 [15:11]).
pub fn hwreg_trapsts_excp() -> u16 {
    const HW_REG_TRAPSTS: u16 = 3;
    HW_REG_TRAPSTS | ((TRAPSTS_EXCP_BITS as u16 - 1) << 11)
}

impl Lowering for AmdLowering<'_> {
    type Output = KernelLowering;
    type Error = RewriteError;

    /// Lowers every probe group; a group refused is left out (the site is
    /// listed as refused), except the flag reads at `s_endpgm`: a kernel
    /// screens the ends of all its waves or none (a count missing some
    /// waves would mislead), so such a refusal fails the kernel.
    fn lower(&mut self, view: &KernelView, plan: &Plan, _sites: &SiteTable) -> Result<KernelLowering, RewriteError> {
        debug_assert_eq!(*self.kernel_name, *view.name, "lowered for its own kernel");
        let mut out = KernelLowering::default();
        // (a kernel whose trampolines borrow registers per site refuses flow probes)
        let borrows = self.scavenger.is_some_and(|s| s.always);
        if !borrows && plan.probes.iter().any(|p| matches!(p.action, Action::Flow { .. })) {
            self.ensure_flow_routine()?;
        }
        self.lower_groups(view, plan, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::view::kernel_view;
    use xfpx_amd_isa::Target;
    use xfpx_common::tool::{InstructionCounter, Tool};

    #[test]
    fn the_anchor_holding_some_bytes_is_the_first_added_that_holds_them() {
        let patch = |addr: u64, len: usize| Patch { addr, bytes: vec![0; len] };
        let mut out = KernelLowering::default();
        out.push_anchor(patch(0x100, 4));
        out.push_anchor(patch(0x200, 28));
        out.push_anchor(patch(0x210, 4));
        out.push_anchor(patch(0x108, 8));
        let at = |out: &mut KernelLowering, a: u64, e: u64| out.anchor_holding(a, e).map(|p| (p.addr, p.bytes.len()));
        // inside the long window, even where a later patch starts
        assert_eq!(at(&mut out, 0x210, 0x214), Some((0x200, 28)));
        assert_eq!(at(&mut out, 0x204, 0x21c), Some((0x200, 28)));
        assert_eq!(at(&mut out, 0x10c, 0x110), Some((0x108, 8)));
        // not wholly inside any
        assert_eq!(at(&mut out, 0x218, 0x220), None);
        assert_eq!(at(&mut out, 0x104, 0x108), None);
        // dropped patches hold nothing
        out.truncate_anchors(1);
        assert_eq!(at(&mut out, 0x210, 0x214), None);
        assert_eq!(at(&mut out, 0x100, 0x104), Some((0x100, 4)));
        out.push_anchor(patch(0x210, 4));
        assert_eq!(at(&mut out, 0x210, 0x214), Some((0x210, 4)));
    }

    pub(super) fn decode_all(target: Target, words: &[u32], base: u64) -> Vec<DecodedInstr> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::disassemble(target, &bytes, base)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("decodes") })
            .collect()
    }

    /// Lowers `view`'s plan over `instrs` (scratch from s40 and v8, waits
    /// inserted), every site: what lowering made, the appended code (at
    /// 0x2000) and the table.
    pub(super) fn lowered_unit(
        instrs: &[DecodedInstr],
        view: &KernelView,
        plan: &Plan,
        sites: &SiteTable,
        table_address: TableAddress,
        memo: &mut CodeMemo,
    ) -> (KernelLowering, Appended, TableLayout) {
        let target = Target::Gfx90a;
        let waits = WaitAnalysis::run(instrs);
        let mut table = TableLayout::default();
        let mut appended = Appended::new(0x2000);
        let mut islands = IslandPool::default();
        let kernel_name = table.shared_name(&view.name);
        let out = AmdLowering {
            enc: Encoder { target },
            entry: 0x1000,
            instrs,
            facts: UnitFacts::of(instrs),
            waits: &waits,
            scratch: Scratch::new(40, 8),
            table: &mut table,
            kernel_name,
            table_address,
            appended: &mut appended,
            islands: &mut islands,
            insert_waits: true,
            flow_routine: None,
            scavenger: None,
            relocation: None,
            table_words: None,
            memo,
        }
        .lower(view, plan, sites)
        .expect("lowers");
        assert!(out.refused.is_empty(), "{:?}", out.refused);
        (out, appended, table)
    }

    #[test]
    fn a_unit_refused_for_an_instruction_that_must_move_out_of_reach_asks_for_more_ways() {
        let far = format!("`s_swappc_b64 s[30:31], s[16:17]` at +0xed0 {MUST_MOVE}{OUT_OF_REACH}: no island");
        assert!(unit_out_of_reach(&RewriteError::Kernel(far)));
        assert!(unit_out_of_reach(&RewriteError::Kernel(format!("{OUT_OF_REACH}: a far s_endpgm"))));
        let registers = format!("`s_swappc_b64 s[30:31], s[16:17]` at +0xed0 {MUST_MOVE}needs 7 SGPRs");
        assert!(!unit_out_of_reach(&RewriteError::Kernel(registers)));
    }

    /// Value of the 64-bit add of a literal pair following `at` (s_add_u32, s_addc_u32).
    fn added(code: &[DecodedInstr], at: usize) -> u64 {
        let lit = |d: &DecodedInstr| if d.insn.length == 8 { u64::from(d.insn.words[1]) } else { 0 };
        let adds: Vec<&DecodedInstr> =
            code[at..].iter().filter(|d| matches!(d.insn.op, Opcode::S_ADD_U32 | Opcode::S_ADDC_U32)).take(2).collect();
        lit(adds[0]) | lit(adds[1]) << 32
    }

    #[test]
    fn pc_relative_instructions_are_relocated() {
        let target = Target::Gfx90a;
        // 0x1000 s_getpc_b64 s[4:5]; 0x1004 s_cbranch_scc0 (to 0x1010);
        // 0x1008 s_call_b64 s[30:31] (to 0x1010); 0x100c s_branch (to 0x1000); 0x1010 s_endpgm
        let instrs = decode_all(target, &[0xBE84_1C00, 0xBF84_0002, 0xBA9E_0001, 0xBF82_FFFC, 0xBF81_0000], 0x1000);
        assert_eq!(instrs[2].insn.op, Opcode::S_CALL_B64);
        let view = kernel_view("k", 0x1000, &instrs);
        let mut sites = SiteTable::new();
        let plan = InstructionCounter.plan(&view, &mut sites);
        let (out, appended, _) =
            lowered_unit(&instrs, &view, &plan, &sites, TableAddress::Known(0x10_0000), &mut CodeMemo::default());
        assert_eq!(out.anchors.len(), 5);
        let code = decode_all(target, &appended.words, 0x2000);
        // Each anchor branches to its trampoline.
        let starts: Vec<u64> = out
            .anchors
            .iter()
            .map(|a| match xfpx_amd_isa::decode(target, &a.bytes).expect("anchor").control_flow(a.addr) {
                ControlFlow::Branch { target } => target,
                other => panic!("{other:?}"),
            })
            .collect();
        let at = |addr: u64| code.iter().position(|d| d.addr == addr).expect("trampoline start");
        let branches_from = |from: usize, to: usize| -> Vec<u64> {
            code[from..to]
                .iter()
                .filter_map(|d| match d.insn.control_flow(d.addr) {
                    ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => Some(target),
                    _ => None,
                })
                .collect()
        };
        // s_getpc_b64: re-executed, then corrected to the original address + 4.
        let t0 = at(starts[0]);
        let g = code[t0..].iter().position(|d| d.insn.op == Opcode::S_GETPC_B64).expect("getpc") + t0;
        assert_eq!((code[g].addr + 4).wrapping_add(added(&code, g)), 0x1004);
        assert!(branches_from(t0, at(starts[1])).contains(&0x1004), "returns after the original");
        // s_cbranch_scc0: taken to the original target, else back after the original.
        let b = branches_from(at(starts[1]), at(starts[2]));
        assert!(b.contains(&0x1010) && b.contains(&0x1008), "{b:x?}");
        // s_call_b64: the return address is the original's + 4, the jump its target.
        let t2 = at(starts[2]);
        let g = code[t2..].iter().position(|d| d.insn.op == Opcode::S_GETPC_B64).expect("getpc") + t2;
        assert_eq!(code[g].insn.to_string(), "s_getpc_b64 s[30:31]");
        assert_eq!((code[g].addr + 4).wrapping_add(added(&code, g)), 0x100c);
        assert!(branches_from(t2, at(starts[3])).contains(&0x1010));
        // s_branch: to the original target, from the new address.
        assert!(branches_from(at(starts[3]), at(starts[4])).contains(&0x1000));
        // s_endpgm ends the last trampoline.
        assert_eq!(code.last().map(|d| d.insn.op), Some(Opcode::S_ENDPGM));
    }
}
