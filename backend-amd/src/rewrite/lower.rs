//! Lowering a verified plan to trampolines. Each instrumented instruction is
//! overwritten by an `s_branch` (plus `s_nop 0` filling an 8-byte slot) to
//! appended code that runs the `before` probes, re-executes the displaced
//! instruction (relocated when it is PC-relative), runs the `after` probes
//! and branches back (a long jump through `s_setpc_b64` when the return is
//! out of `s_branch` reach). SCC is saved around every stretch that writes
//! it; EXEC is saved around the single-lane table update; VCC and M0 are
//! never written. All scratch registers lie above the kernel's allocation.
//! Reading the exception flags ([`Action::ReadExceptionFlags`]) has its own
//! trampoline at `s_endpgm`: the wave's sticky TRAPSTS bits, one table slot
//! per bit and kernel.

use xfpx_amd_isa::operand::{RegFile as IsaFile, SpecialReg};
use xfpx_amd_isa::{ControlFlow, Instruction, Opcode};
use xfpx_common::lower::Lowering;
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, CounterKind, Probe, ValueRef, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{KernelView, Operand, RegFile};
use xfpx_common::{ExceptionKind, FpFormat, FpOp, InstrClass};

use super::division::{self, Divisor, Role};
use super::encode::{Encoder, Src};
use super::halves;
use super::layout::Patch;
use super::table::{SlotKind, TableAddress, TableLayout, TRAPSTS_EXCP_BITS};
use super::view::DecodedInstr;
use super::waitcnt::{waitcnt_imm, WaitAnalysis};
use super::RewriteError;

#[path = "flow.rs"]
mod flow;
#[path = "inject.rs"]
mod inject;
use inject::Part;
pub use inject::{other_operation, OTHER_OPERATION};

/// Scratch SGPRs the trampolines use, from the first one up.
pub const SCRATCH_SGPRS: u16 = 14;
/// Scratch VGPRs the trampolines use.
pub const SCRATCH_VGPRS: u16 = 5;

/// The scratch registers of one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scratch {
    /// First scratch SGPR (a multiple of 4).
    pub sgpr: u16,
    /// First scratch VGPR.
    pub vgpr: u16,
}

impl Scratch {
    /// A pair: SCC is saved as all-ones or zero.
    fn scc(&self) -> Src {
        Src::Sgpr(self.sgpr)
    }
    fn tmp(&self) -> Src {
        Src::Sgpr(self.sgpr + 12)
    }
    fn exec_save(&self) -> u16 {
        self.sgpr + 2
    }
    fn mask(&self) -> u16 {
        self.sgpr + 4
    }
    fn any(&self) -> u16 {
        self.sgpr + 6
    }
    fn table(&self) -> u16 {
        self.sgpr + 8
    }
    fn jump(&self) -> u16 {
        self.sgpr + 10
    }
    /// The lanes whose divisor is ±0, from the divisor's test before a
    /// division to its checks after (the jump pair, unused in between).
    fn zero_divisor(&self) -> u16 {
        self.sgpr + 10
    }
    fn v_addr(&self) -> u16 {
        self.vgpr
    }
    fn v_data(&self) -> u16 {
        self.vgpr + 1
    }
    fn v_class(&self) -> u16 {
        self.vgpr + 2
    }
    fn v_value(&self) -> u16 {
        self.vgpr + 3
    }
}

/// The appended code being built, at a known address.
#[derive(Debug, Clone)]
pub struct Appended {
    pub base: u64,
    pub words: Vec<u32>,
    /// Words that hold half of the table's address, to be written when the
    /// address is known ([`TableAddress::Patchable`]).
    pub table_literals: Vec<TableLiteral>,
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
        Appended { base, words: Vec::new(), table_literals: Vec::new() }
    }
    pub fn here(&self) -> u64 {
        self.base + 4 * self.words.len() as u64
    }
    /// Drops the words from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.words.truncate(len);
        self.table_literals.retain(|l| l.word < len);
    }
    /// Writes the table's address into its literal words.
    pub fn set_table_address(&mut self, address: u64) {
        for l in &self.table_literals {
            self.words[l.word] = if l.high { (address >> 32) as u32 } else { address as u32 };
        }
    }
    fn push(&mut self, w: Vec<u32>) {
        self.words.extend(w);
    }
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// `simm16` of a PC-relative SOPP at `from` reaching `to`, if in reach.
fn rel16(from: u64, to: u64) -> Option<u16> {
    let d = (to as i64 - (from as i64 + 4)) / 4;
    i16::try_from(d).ok().map(|v| v as u16)
}

/// A site the lowering left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusedSite {
    pub offset: u64,
    pub instr: String,
    pub reason: String,
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
    pub refused: Vec<RefusedSite>,
}

/// The AMD lowering of one kernel's plan into `appended`.
#[derive(Debug)]
pub struct AmdLowering<'a> {
    pub enc: Encoder,
    pub entry: u64,
    pub instrs: &'a [DecodedInstr],
    pub waits: &'a WaitAnalysis,
    pub scratch: Scratch,
    pub table: &'a mut TableLayout,
    pub table_address: TableAddress,
    pub appended: &'a mut Appended,
    /// Never-executed padding inside `.text` for long-jump islands.
    pub islands: &'a mut IslandPool,
    pub insert_waits: bool,
    /// Where the unit's flow routine is, once emitted (see `flow`).
    pub flow_routine: Option<u64>,
}

/// What a failed lowering gives back: the appended code, the table's slots
/// and the island pool as they were.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    words: usize,
    slots: usize,
    islands: IslandPool,
}

/// Bytes of a long-jump island: save SCC, `s_getpc_b64`, add a 64-bit
/// offset, `s_setpc_b64`.
pub const ISLAND_BYTES: u64 = 28;

/// Padding inside `.text` that no path executes (runs of `s_nop 0` right
/// after an instruction that always leaves), where islands can go when a
/// trampoline is beyond `s_branch` reach of its anchor.
#[derive(Debug, Clone, Default)]
pub struct IslandPool {
    pub free: Vec<std::ops::Range<u64>>,
}

impl IslandPool {
    /// The pool of a code object's code (`code` in address order), leaving
    /// out the final run (the code-end padding, which stays as it is).
    pub fn from_code(code: &[DecodedInstr]) -> IslandPool {
        let mut free = Vec::new();
        let mut i = 0;
        while i < code.len() {
            let leaves = matches!(
                code[i].insn.control_flow(code[i].addr),
                ControlFlow::Branch { .. } | ControlFlow::End | ControlFlow::Indirect
            ) && code[i].insn.op != Opcode::S_SWAPPC_B64;
            i += 1;
            if !leaves {
                continue;
            }
            let start = i;
            while i < code.len() && code[i].insn.op == Opcode::S_NOP && code[i].insn.words[0] & 0xFFFF == 0 {
                i += 1;
            }
            if i > start && i < code.len() {
                free.push(code[start].addr..code[i].addr);
            }
        }
        IslandPool { free }
    }

    /// Takes room for one island within `s_branch` reach of `anchor`.
    fn take(&mut self, anchor: u64) -> Option<u64> {
        let slot =
            self.free.iter_mut().find(|r| r.end - r.start >= ISLAND_BYTES && rel16(anchor, r.start).is_some())?;
        let at = slot.start;
        slot.start += ISLAND_BYTES;
        Some(at)
    }
}

/// Class-mask bits of `v_cmp_class_*`: sNaN, qNaN, -inf, -normal, -denormal,
/// -0, +0, +denormal, +normal, +inf.
const CLASS_NAN: u32 = 0b00_0000_0011;
const CLASS_INF: u32 = 0b10_0000_0100;
const CLASS_SUBNORMAL: u32 = 0b00_1001_0000;
const CLASS_ZERO: u32 = 0b00_0110_0000;

/// The class mask that finds `kind` in the result of an instruction of
/// `class`, and the lanes it counts in. A division's infinite quotient is
/// division by zero where the divisor was ±0, infinity elsewhere.
fn class_mask(kind: ExceptionKind, class: InstrClass) -> (u32, Lanes) {
    let is_div = matches!(class, InstrClass::Arith { op: FpOp::Div, .. });
    match kind {
        ExceptionKind::Nan => (CLASS_NAN, Lanes::All),
        ExceptionKind::Sub => (CLASS_SUBNORMAL, Lanes::All),
        ExceptionKind::Inf if !is_div => (CLASS_INF, Lanes::All),
        ExceptionKind::Inf => (CLASS_INF, Lanes::NonzeroDivisor),
        ExceptionKind::Div0 if is_div => (CLASS_INF, Lanes::ZeroDivisor),
        _ => (0, Lanes::All),
    }
}

/// The lanes a class test counts: all, or those whose divisor was (not) ±0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lanes {
    All,
    ZeroDivisor,
    NonzeroDivisor,
}

/// How one value is brought to a `v_cmp_class` source.
#[derive(Debug, Clone, Copy)]
struct Value {
    src: Src,
    /// For AGPRs: copy (1 or 2 registers) into the value scratch first.
    agpr: Option<u16>,
    /// f16x2/bf16 halves: shift the value into the low/high half first.
    half: Half,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Half {
    Whole,
    HighToLow,
    LowToHigh,
    High,
}

impl AmdLowering<'_> {
    fn e(&self) -> Encoder {
        self.enc
    }

    /// The state [`Self::rollback`] returns to.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { words: self.appended.words.len(), slots: self.table.slots.len(), islands: self.islands.clone() }
    }

    /// Forgets what was lowered since `c`.
    pub fn rollback(&mut self, c: Checkpoint) {
        self.appended.truncate(c.words);
        self.table.slots.truncate(c.slots);
        *self.islands = c.islands;
    }

    fn emit(&mut self, w: Vec<u32>) {
        self.appended.push(w);
    }

    /// Jump from the end of the appended code to `target`: `s_branch` when in
    /// reach, else `s_getpc_b64`/`s_add_u32`/`s_addc_u32`/`s_setpc_b64` with SCC kept.
    fn jump_to(&mut self, target: u64) -> Result<(), RewriteError> {
        if let Some(rel) = rel16(self.appended.here(), target) {
            let w = self.e().sopp(Opcode::S_BRANCH, rel)?;
            self.emit(w);
            return Ok(());
        }
        let j = self.scratch.jump();
        let e = self.e();
        self.emit(e.sop2(Opcode::S_CSELECT_B64, self.scratch.scc(), Src::Int(-1), Src::Int(0))?);
        let pc = self.appended.here() + 4;
        self.emit(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(j)), None)?);
        self.add_to_pair(j, target.wrapping_sub(pc))?;
        self.emit(e.sopc(Opcode::S_CMP_LG_U64, self.scratch.scc(), Src::Int(0))?);
        self.emit(e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(j)))?);
        Ok(())
    }

    fn save_scc(&mut self) -> Result<(), RewriteError> {
        let w = self.e().sop2(Opcode::S_CSELECT_B64, self.scratch.scc(), Src::Int(-1), Src::Int(0))?;
        self.emit(w);
        Ok(())
    }

    fn restore_scc(&mut self) -> Result<(), RewriteError> {
        let w = self.e().sopc(Opcode::S_CMP_LG_U64, self.scratch.scc(), Src::Int(0))?;
        self.emit(w);
        Ok(())
    }

    /// Re-executes `d` in the appended code. Returns false when the
    /// instruction leaves (no return jump follows).
    fn displaced(&mut self, d: &DecodedInstr) -> Result<bool, RewriteError> {
        let e = self.e();
        let insn = &d.insn;
        match insn.control_flow(d.addr) {
            ControlFlow::Next | ControlFlow::End => {
                self.emit(insn.dwords().to_vec());
                Ok(!matches!(insn.control_flow(d.addr), ControlFlow::End))
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
                self.emit(insn.dwords().to_vec());
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
                self.emit(insn.dwords().to_vec());
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
                self.emit(insn.dwords().to_vec());
                Ok(false)
            }
            ControlFlow::Indirect if insn.op == Opcode::S_SWAPPC_B64 => {
                // sdst = address after the original; jump to ssrc (copied
                // first, as sdst may overlap it).
                let sdst = (insn.words[0] >> 16 & 0x7F) as u16;
                let ssrc = (insn.words[0] & 0xFF) as u16;
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
        let e = self.e();
        self.emit(e.sop2(Opcode::S_ADD_U32, Src::Sgpr(r), Src::Sgpr(r), Src::Literal(delta as u32))?);
        self.emit(e.sop2(
            Opcode::S_ADDC_U32,
            Src::Sgpr(r + 1),
            Src::Sgpr(r + 1),
            Src::Literal((delta >> 32) as u32),
        )?);
        Ok(())
    }

    /// Single-lane atomic `op` of `v_data` into slot `slot` of the table.
    fn record(&mut self, slot: u32, op: Opcode, data: Src) -> Result<(), RewriteError> {
        let e = self.e();
        let s = self.scratch;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(Src::Special(SpecialReg::Exec)))?);
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Int(1)))?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), Src::Literal(slot * 4))?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_data(), data)?);
        self.table_address_to(s.table())?;
        self.emit(e.global_atomic(op, s.v_addr(), s.v_data(), s.table())?);
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(s.exec_save())))?);
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
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(Src::Special(SpecialReg::Exec)))?);
        self.emit(e.sop1(Opcode::S_BCNT1_I32_B64, Some(s.tmp()), Some(Src::Special(SpecialReg::Exec)))?);
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Int(1)))?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), Src::Literal(lo * 4))?);
        // the data pair starts at an even VGPR (gfx90a+ align 64-bit operands)
        let data = if s.vgpr.is_multiple_of(2) { s.vgpr + 2 } else { s.vgpr + 1 };
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, data, s.tmp())?);
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, data + 1, Src::Int(1))?);
        self.table_address_to(s.table())?;
        self.emit(e.global_atomic(Opcode::GLOBAL_ATOMIC_ADD_X2, s.v_addr(), data, s.table())?);
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(s.exec_save())))?);
        Ok(())
    }

    /// `s[reg:reg+1]` := the table's address (literals recorded when patchable).
    fn table_address_to(&mut self, reg: u16) -> Result<(), RewriteError> {
        let e = self.e();
        for (reg, high) in [(reg, false), (reg + 1, true)] {
            let value = match self.table_address {
                TableAddress::Known(a) => Src::Literal(if high { (a >> 32) as u32 } else { a as u32 }),
                TableAddress::Patchable => Src::FixedLiteral(0),
            };
            let words = e.sop1(Opcode::S_MOV_B32, Some(Src::Sgpr(reg)), Some(value))?;
            if self.table_address == TableAddress::Patchable {
                let word = self.appended.words.len() + words.len() - 1;
                self.appended.table_literals.push(TableLiteral { word, high });
            }
            self.emit(words);
        }
        Ok(())
    }

    /// The values a check reads, register by register (pairs for f64).
    fn values(&self, op: &Operand, format: FpFormat) -> Result<Vec<Value>, RewriteError> {
        let Operand::Reg(r) = op else { return Ok(Vec::new()) };
        let words = u16::from(format.register_words());
        let mut out = Vec::new();
        let mut i = 0u16;
        while i + words <= u16::from(r.count) {
            let n = r.first + i;
            let (src, agpr) = match r.file {
                RegFile::PerLane => (Src::Vgpr(n), None),
                RegFile::Uniform => (Src::Sgpr(n), None),
                RegFile::Accumulator => (Src::Vgpr(self.scratch.v_value()), Some(n)),
                RegFile::Predicate => return Err(RewriteError::Refused("predicate values cannot be checked".into())),
            };
            let halves: &[Half] = match format {
                FpFormat::F32 | FpFormat::F64 | FpFormat::F16 => &[Half::Whole],
                FpFormat::F16x2 => &[Half::Whole, Half::HighToLow],
                FpFormat::Bf16 => &[Half::LowToHigh],
                FpFormat::Bf16x2 => &[Half::LowToHigh, Half::High],
            };
            for &half in halves {
                out.push(Value { src, agpr, half });
            }
            i += words;
        }
        Ok(out)
    }

    /// Brings a value to a VOP3 source, through the value scratch when needed.
    fn load_value(&mut self, v: Value, format: FpFormat) -> Result<Src, RewriteError> {
        let e = self.e();
        let t = self.scratch.v_value();
        if let Some(a) = v.agpr {
            for k in 0..u16::from(format.register_words()) {
                self.emit(e.accvgpr_read(t + k, a + k)?);
            }
        }
        let vsrc = |src: Src, this: &mut Self| -> Result<u16, RewriteError> {
            match src {
                Src::Vgpr(n) => Ok(n),
                other => {
                    this.emit(e.vop1(Opcode::V_MOV_B32_E32, t, other)?);
                    Ok(t)
                }
            }
        };
        Ok(match v.half {
            Half::Whole => v.src,
            Half::HighToLow => {
                let n = vsrc(v.src, self)?;
                self.emit(e.vop2(Opcode::V_LSHRREV_B32_E32, t, Src::Int(16), n)?);
                Src::Vgpr(t)
            }
            Half::LowToHigh => {
                let n = vsrc(v.src, self)?;
                self.emit(e.vop2(Opcode::V_LSHLREV_B32_E32, t, Src::Int(16), n)?);
                Src::Vgpr(t)
            }
            Half::High => {
                let n = vsrc(v.src, self)?;
                self.emit(e.vop2(Opcode::V_AND_B32_E32, t, Src::Literal(0xFFFF_0000), n)?);
                Src::Vgpr(t)
            }
        })
    }

    /// The code of one probe.
    fn probe(&mut self, view: &KernelView, plan: &Plan, p: &Probe) -> Result<(), RewriteError> {
        let e = self.e();
        let s = self.scratch;
        let ins = &view.instrs[p.instr as usize];
        match &p.action {
            Action::CheckFp { values, format, kinds } => {
                if let Some(why) = halves::in_indexing_region(self.instrs, p.instr as usize) {
                    return Err(RewriteError::Refused(why));
                }
                // bf16 values are shifted into the high half and tested as f32.
                let cmp = match format {
                    FpFormat::F64 => Opcode::V_CMP_CLASS_F64_E64,
                    FpFormat::F16 | FpFormat::F16x2 => Opcode::V_CMP_CLASS_F16_E64,
                    _ => Opcode::V_CMP_CLASS_F32_E64,
                };
                let mut vals = Vec::new();
                let insn = &self.instrs[p.instr as usize].insn;
                for v in values {
                    let op = match v {
                        ValueRef::Def(n) => ins.defs.get(*n as usize),
                        ValueRef::Use(n) => ins.uses.get(*n as usize),
                        ValueRef::Reg(_) => None,
                    }
                    .ok_or_else(|| RewriteError::Refused(format!("value {v:?} does not exist")))?;
                    let which =
                        if matches!(v, ValueRef::Def(_)) { halves::Value::Result } else { halves::Value::Source(op) };
                    // An f16 value in the high half is shifted down before its test.
                    let high = halves::high_half(insn, which, *format).map_err(RewriteError::Refused)?;
                    vals.extend(self.values(op, *format)?.into_iter().map(|mut x| {
                        if high && x.half == Half::Whole {
                            x.half = Half::HighToLow;
                        }
                        x
                    }));
                }
                let checks: Vec<(ExceptionKind, (u32, Lanes))> =
                    kinds.iter().map(|k| (k, class_mask(k, ins.class))).filter(|&(_, (m, _))| m != 0).collect();
                // Steps of a division sequence are judged at its v_div_fixup.
                let step = division::is_step(self.instrs, p.instr as usize);
                if checks.is_empty() || vals.is_empty() || step {
                    return Ok(());
                }
                // Fast path: one test for every kind at once; the per-kind
                // tests and records run only when some lane is exceptional.
                let union = checks.iter().fold(0, |a, &(_, (m, _))| a | m);
                let skip_all = if checks.len() > 1 {
                    self.class_test(cmp, &vals, *format, union)?;
                    let at = self.appended.words.len();
                    self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
                    Some(at)
                } else {
                    None
                };
                for (kind, (mask, lanes)) in checks {
                    let slot = self.table.slot(&view.name, SlotKind::Exception { site: p.site, kind, format: *format });
                    let found = self.class_test(cmp, &vals, *format, mask)?;
                    let zero = Src::Sgpr(s.zero_divisor());
                    match lanes {
                        Lanes::All => {}
                        Lanes::ZeroDivisor => self.emit(e.sop2(Opcode::S_AND_B64, found, found, zero)?),
                        Lanes::NonzeroDivisor => self.emit(e.sop2(Opcode::S_ANDN2_B64, found, found, zero)?),
                    }
                    let skip = self.appended.words.len();
                    self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
                    self.record(slot, Opcode::GLOBAL_ATOMIC_ADD, Src::Int(1))?;
                    self.patch_skip(skip)?;
                }
                if let Some(at) = skip_all {
                    self.patch_skip(at)?;
                }
                Ok(())
            }
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
                let slot = self.table.slot(&view.name, SlotKind::Counter { name: def.name.clone(), per_lane });
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

    /// Registers a group of probes reads from the kernel (for waits).
    fn probe_reads(view: &KernelView, probes: &[&Probe]) -> Vec<(IsaFile, u16)> {
        let mut out = Vec::new();
        for p in probes {
            let ins = &view.instrs[p.instr as usize];
            // a flow probe before its instruction reads its sources, one after it its result
            out.extend(flow::flow_reads(view, p, p.when == When::Before));
            if let Action::CheckFp { values, .. } = &p.action {
                for v in values {
                    let op = match v {
                        ValueRef::Def(n) => ins.defs.get(*n as usize),
                        ValueRef::Use(n) => ins.uses.get(*n as usize),
                        ValueRef::Reg(_) => None,
                    };
                    out.extend(op.map(super::view::isa_registers).unwrap_or_default());
                }
            }
        }
        out
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
        if matches!(insn.class(), InstrClass::Matrix { .. }) || insn.base_mnemonic.starts_with("v_mfma") {
            // Matrix results are read by VALU only after the pipeline drains:
            // 4 x 8 wait states cover the longest pass counts.
            for _ in 0..4 {
                self.emit(e.sopp(Opcode::S_NOP, 7)?);
            }
        } else if self.enc.target.is_gfx940_plus()
            && matches!(
                insn.class(),
                InstrClass::Arith { op: FpOp::Div | FpOp::Sqrt | FpOp::Rsqrt | FpOp::Transcendental, .. }
            )
        {
            // gfx940+: a transcendental result needs one wait state before a
            // VALU reads it (the division steps are covered too, harmlessly).
            self.emit(e.sopp(Opcode::S_NOP, 0)?);
        }
        Ok(())
    }

    /// One trampoline for the probes of instruction `index`.
    pub fn trampoline(
        &mut self,
        view: &KernelView,
        plan: &Plan,
        index: usize,
        probes: &[&Probe],
        out: &mut KernelLowering,
    ) -> Result<(), RewriteError> {
        let instrs = self.instrs;
        let d = instrs.get(index).ok_or_else(|| RewriteError::Refused("no such instruction".into()))?;
        let rel = self.entry_branch(d, out)?;
        let before: Vec<&Probe> = probes.iter().copied().filter(|p| p.when == When::Before).collect();
        let after: Vec<&Probe> = probes.iter().copied().filter(|p| p.when == When::After).collect();
        if !after.is_empty() && matches!(view.instrs[index].control, xfpx_common::view::Control::Call) {
            return Err(RewriteError::Refused("an `after` probe on a call would run only after the return".into()));
        }
        // Injections of two parts: the part before an `after` change, the
        // part after a `before` one (see `inject`).
        let pre: Vec<&Probe> =
            after.iter().copied().filter(|p| inject::change_of(p).is_some_and(inject::has_pre)).collect();
        let post: Vec<&Probe> =
            before.iter().copied().filter(|p| inject::change_of(p).is_some_and(inject::has_post)).collect();
        // flow probes after the instruction read its sources before it
        let flow_pre: Vec<&Probe> = after.iter().copied().filter(|p| flow::reads_before(p)).collect();
        let injections = probes.iter().filter(|p| inject::change_of(p).is_some()).count();
        if pre.len() + post.len() > 0 && injections > 1 {
            return Err(RewriteError::Refused(
                "an injection of two parts shares its instruction with another injection".into(),
            ));
        }
        let mut waits = 0usize;
        if !before.is_empty() || !pre.is_empty() || !flow_pre.is_empty() {
            let mut reads = Self::probe_reads(view, &before);
            reads.extend(flow_pre.iter().flat_map(|p| flow::flow_reads(view, p, true)));
            reads.extend(
                before.iter().chain(&pre).flat_map(|p| {
                    Self::inject_reads(view, p, if p.when == When::After { Part::Pre } else { Part::Main })
                }),
            );
            self.wait(index, false, &reads, &mut waits)?;
            self.save_scc()?;
            for p in &before {
                self.probe(view, plan, p)?;
            }
            for p in &pre {
                self.inject(view, plan, p, Part::Pre)?;
            }
            for p in &flow_pre {
                self.flow_sources(view, p)?;
            }
            self.restore_scc()?;
        }
        self.divisor_test(view, index, &after)?;
        let returns = self.displaced(d)?;
        if !after.is_empty() || !post.is_empty() {
            if !returns {
                return Err(RewriteError::Refused("an `after` probe on an instruction that leaves".into()));
            }
            self.hazard_nops(&d.insn)?;
            let mut reads = Self::probe_reads(view, &after);
            reads.extend(after.iter().chain(&post).flat_map(|p| {
                Self::inject_reads(view, p, if p.when == When::Before { Part::Post } else { Part::Main })
            }));
            self.wait(index, true, &reads, &mut waits)?;
            self.save_scc()?;
            for p in &post {
                self.inject(view, plan, p, Part::Post)?;
            }
            for p in &after {
                self.probe(view, plan, p)?;
            }
            self.restore_scc()?;
        }
        if returns {
            self.jump_to(d.addr + d.insn.length as u64)?;
        }
        // The anchor: s_branch to the trampoline, s_nop 0 over the rest of the slot.
        let mut anchor = self.e().sopp(Opcode::S_BRANCH, rel)?;
        while anchor.len() * 4 < d.insn.length {
            anchor.extend(self.e().sopp(Opcode::S_NOP, 0)?);
        }
        out.anchors.push(Patch { addr: d.addr, bytes: anchor.iter().flat_map(|w| w.to_le_bytes()).collect() });
        out.trampolines += 1;
        out.probes += probes.len();
        out.waits_added += waits;
        Ok(())
    }

    /// The screening trampoline at an `s_endpgm`: for each TRAPSTS
    /// exception bit the wave has set, add 1 to the kernel's slot of that
    /// bit (so the table holds, per bit, how many waves raised it); then end
    /// the wave. A wave that ends in a trap is not screened (the trap is not
    /// moved: its handler may return after it).
    pub fn screen_exit(&mut self, kernel: &str, index: usize, out: &mut KernelLowering) -> Result<(), RewriteError> {
        let instrs = self.instrs;
        let d = instrs.get(index).ok_or_else(|| RewriteError::Refused("no such instruction".into()))?;
        if d.insn.control_flow(d.addr) != ControlFlow::End {
            return Err(RewriteError::Refused(format!(
                "{} is not moved (its handler may return after it): waves ending here are not screened",
                d.insn.base_mnemonic
            )));
        }
        let rel = self.entry_branch(d, out)?;
        let e = self.e();
        let s = self.scratch;
        let bits = s.tmp();
        let one_bit = Src::Sgpr(s.mask());
        // Memory still in flight may read (stores) or write (loads) any
        // register, and the scratch may lie within the kernel's own
        // allocation (at its register budget): wait for all of it first.
        self.emit(e.sopp(Opcode::S_WAITCNT, waitcnt_imm(0, 0))?);
        // Wait states before reading TRAPSTS: 2 after an `s_setreg` of it
        // (the ISA's setreg-getreg hazard), and time for the exception bits
        // of the last VALU operations to land (assumed; see the snippets' README).
        self.emit(e.sopp(Opcode::S_NOP, 4)?);
        self.emit(e.sopk(Opcode::S_GETREG_B32, bits, hwreg_trapsts_excp())?);
        self.emit(e.sopc(Opcode::S_CMP_EQ_U32, bits, Src::Int(0))?);
        let skip_all = self.appended.words.len();
        self.emit(e.sopp(Opcode::S_CBRANCH_SCC1, 0)?);
        for bit in 0..TRAPSTS_EXCP_BITS {
            let slot = self.table.slot(kernel, SlotKind::Screen { bit: bit as u8 });
            self.emit(e.sop2(Opcode::S_AND_B32, one_bit, bits, Src::Literal(1 << bit))?);
            let skip = self.appended.words.len();
            self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
            self.record(slot, Opcode::GLOBAL_ATOMIC_ADD, Src::Int(1))?;
            self.patch_skip(skip)?;
        }
        self.patch_skip(skip_all)?;
        self.emit(d.insn.dwords().to_vec());
        out.anchors.push(Patch {
            addr: d.addr,
            bytes: e.sopp(Opcode::S_BRANCH, rel)?.iter().flat_map(|w| w.to_le_bytes()).collect(),
        });
        out.trampolines += 1;
        out.probes += 1;
        Ok(())
    }

    /// The anchor's `s_branch` offset to the trampoline starting now: direct
    /// when in reach, else through an island in never-executed padding near
    /// the anchor (the island saves SCC; the trampoline restores it first).
    fn entry_branch(&mut self, d: &DecodedInstr, out: &mut KernelLowering) -> Result<u16, RewriteError> {
        let start = self.appended.here();
        if let Some(rel) = rel16(d.addr, start) {
            return Ok(rel);
        }
        let island = self.islands.take(d.addr).ok_or_else(|| {
            RewriteError::Refused(format!(
                "trampoline at {start:#x} is beyond s_branch reach (±128 KiB) of {:#x} and no padding within reach is free for a long-jump island",
                d.addr
            ))
        })?;
        let e = self.e();
        let j = self.scratch.jump();
        let mut code = e.sop2(Opcode::S_CSELECT_B64, self.scratch.scc(), Src::Int(-1), Src::Int(0))?;
        code.extend(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(j)), None)?);
        let delta = start.wrapping_sub(island + 8);
        code.extend(e.sop2(Opcode::S_ADD_U32, Src::Sgpr(j), Src::Sgpr(j), Src::Literal(delta as u32))?);
        code.extend(e.sop2(
            Opcode::S_ADDC_U32,
            Src::Sgpr(j + 1),
            Src::Sgpr(j + 1),
            Src::Literal((delta >> 32) as u32),
        )?);
        code.extend(e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(j)))?);
        // Small offsets encode as inline constants: fill the rest of the slot.
        while (code.len() as u64) * 4 < ISLAND_BYTES {
            code.extend(e.sopp(Opcode::S_NOP, 0)?);
        }
        if code.len() as u64 * 4 != ISLAND_BYTES {
            return Err(RewriteError::Encode("island size".into()));
        }
        out.anchors.push(Patch { addr: island, bytes: code.iter().flat_map(|w| w.to_le_bytes()).collect() });
        out.islands += 1;
        self.restore_scc()?;
        rel16(d.addr, island).ok_or_else(|| RewriteError::Refused("island out of reach".into()))
    }

    /// SCC := some active lane has a value of `vals` in class `mask`;
    /// returns the pair holding those lanes.
    fn class_test(&mut self, cmp: Opcode, vals: &[Value], format: FpFormat, mask: u32) -> Result<Src, RewriteError> {
        let e = self.e();
        let s = self.scratch;
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_class(), Src::Literal(mask))?);
        let result = if vals.len() == 1 { s.mask() } else { s.any() };
        if vals.len() > 1 {
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.any())), Some(Src::Int(0)))?);
        }
        for &v in vals {
            let src = self.load_value(v, format)?;
            self.emit(e.vop3_cmp(cmp, s.mask(), src, Src::Vgpr(s.v_class()))?);
            if vals.len() > 1 {
                self.emit(e.sop2(Opcode::S_OR_B64, Src::Sgpr(s.any()), Src::Sgpr(s.any()), Src::Sgpr(s.mask()))?);
            }
        }
        self.emit(e.sopc(Opcode::S_CMP_LG_U64, Src::Sgpr(result), Src::Int(0))?);
        Ok(Src::Sgpr(result))
    }

    /// Before a division whose checks split infinite quotients by divisor
    /// ([`Lanes`]): the lanes whose divisor is ±0 into the zero-divisor pair
    /// (read now, as the division may overwrite its divisor). Writes
    /// neither SCC nor VCC.
    fn divisor_test(&mut self, view: &KernelView, index: usize, after: &[&Probe]) -> Result<(), RewriteError> {
        let d = &self.instrs[index];
        let Some(Role::Quotient { divisor }) = division::role(&d.insn) else { return Ok(()) };
        if division::is_step(self.instrs, index) {
            return Ok(());
        }
        let Some(format) = view.instrs[index].class.format() else { return Ok(()) };
        let splits = after.iter().any(|p| match &p.action {
            Action::CheckFp { kinds, .. } => kinds.contains(ExceptionKind::Div0) || kinds.contains(ExceptionKind::Inf),
            _ => false,
        });
        if !splits {
            return Ok(());
        }
        let e = self.e();
        let s = self.scratch;
        let (src, half) = match division::divisor(&d.insn, divisor, format).map_err(RewriteError::Refused)? {
            Divisor::Constant { zero } => {
                let lanes = if zero { Src::Special(SpecialReg::Exec) } else { Src::Int(0) };
                self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.zero_divisor())), Some(lanes))?);
                return Ok(());
            }
            Divisor::Vgpr { reg, high_half } => (Src::Vgpr(reg), if high_half { Half::HighToLow } else { Half::Whole }),
            Divisor::Sgpr { reg } => (Src::Sgpr(reg), Half::Whole),
        };
        let cmp = match format {
            FpFormat::F64 => Opcode::V_CMP_CLASS_F64_E64,
            FpFormat::F16 => Opcode::V_CMP_CLASS_F16_E64,
            _ => Opcode::V_CMP_CLASS_F32_E64,
        };
        let value = self.load_value(Value { src, agpr: None, half }, format)?;
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_class(), Src::Literal(CLASS_ZERO))?);
        self.emit(e.vop3_cmp(cmp, s.zero_divisor(), value, Src::Vgpr(s.v_class()))?);
        Ok(())
    }

    /// Whether instruction `index` ends the wave (`s_endpgm`).
    fn ends_wave(&self, index: usize) -> bool {
        self.instrs.get(index).is_some_and(|d| d.insn.control_flow(d.addr) == ControlFlow::End)
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
        let mut out = KernelLowering::default();
        if plan.probes.iter().any(|p| matches!(p.action, Action::Flow { .. })) {
            self.ensure_flow_routine()?;
        }
        for (instr, probes) in plan.by_instr() {
            let refs: Vec<&Probe> = probes.iter().collect();
            let checkpoint = self.checkpoint();
            let (anchors, islands) = (out.anchors.len(), out.islands);
            let reads_flags = probes.iter().any(|p| p.action == Action::ReadExceptionFlags);
            let lowered = match (reads_flags, probes.len()) {
                (false, _) => self.trampoline(view, plan, instr as usize, &refs, &mut out),
                (true, 1) => self.screen_exit(&view.name, instr as usize, &mut out).map_err(|e| match e {
                    RewriteError::Refused(why) if self.ends_wave(instr as usize) => RewriteError::Kernel(why),
                    other => other,
                }),
                (true, _) => Err(RewriteError::Refused("exception flags are read only by a probe of their own".into())),
            };
            if let Err(err) = lowered {
                match err {
                    RewriteError::Refused(reason) => {
                        self.rollback(checkpoint);
                        out.anchors.truncate(anchors);
                        out.islands = islands;
                        let ins = &view.instrs[instr as usize];
                        out.refused.push(RefusedSite { offset: ins.offset, instr: ins.text.clone(), reason });
                    }
                    other => return Err(other),
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::view::kernel_view;
    use xfpx_amd_isa::Target;
    use xfpx_common::tool::{InstructionCounter, Tool};

    fn decode_all(target: Target, words: &[u32], base: u64) -> Vec<DecodedInstr> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::disassemble(target, &bytes, base)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("decodes") })
            .collect()
    }

    /// Value of the 64-bit add of a literal pair following `at` (s_add_u32, s_addc_u32).
    fn added(code: &[DecodedInstr], at: usize) -> u64 {
        let lit = |d: &DecodedInstr| if d.insn.length == 8 { u64::from(d.insn.words[1]) } else { 0 };
        let adds: Vec<&DecodedInstr> =
            code[at..].iter().filter(|d| d.insn.base_mnemonic.starts_with("s_add")).take(2).collect();
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
        let waits = WaitAnalysis::run(&instrs);
        let mut table = TableLayout::default();
        let mut appended = Appended::new(0x2000);
        let mut islands = IslandPool::default();
        let mut low = AmdLowering {
            enc: Encoder { target },
            entry: 0x1000,
            instrs: &instrs,
            waits: &waits,
            scratch: Scratch { sgpr: 40, vgpr: 8 },
            table: &mut table,
            table_address: TableAddress::Known(0x10_0000),
            appended: &mut appended,
            islands: &mut islands,
            insert_waits: true,
            flow_routine: None,
        };
        let out = low.lower(&view, &plan, &sites).expect("lowers");
        assert!(out.refused.is_empty(), "{:?}", out.refused);
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

    #[test]
    fn islands_take_padding_within_reach_only() {
        let mut pool = IslandPool { free: vec![0x1000..0x1040, 0x40000..0x40100] };
        assert_eq!(pool.take(0x1100), Some(0x1000));
        assert_eq!(pool.take(0x1100), Some(0x1000 + ISLAND_BYTES));
        // 0x1038 leaves 8 bytes: the next island near 0x1100 is out of room.
        assert_eq!(pool.take(0x1100), None);
        assert_eq!(pool.take(0x40200), Some(0x40000));
    }
}
