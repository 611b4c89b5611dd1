//! Lowering of fault injections ([`Action::Inject`]) on AMD.
//!
//! **Which threads.** A wave is selected when its compute-unit number
//! (`XCC_ID << 8 | HW_ID[15:8]`, see [`xfpx_amd_isa::hwid`]) is the
//! location's SM, its `HW_ID.SIMD_ID` the sub-partition (when named) and its
//! `HW_ID.WAVE_ID` one of the warp slots (when named); within it, the
//! selected lanes are the location's lanes that EXEC has on. The mask of
//! selected lanes is computed in a scratch SGPR pair; vector changes run
//! with EXEC set to it. A change of a uniform (SGPR) value happens when the
//! mask is not empty. Each injection adds the number of selected lanes (the
//! dynamic lane instances corrupted) to its activations counter's slot.
//!
//! **What changes** (placements as [`Change`] states; `S`: the selected lanes):
//! - `XorDef`, `SpecialRead`: after the instruction, the destination's first
//!   64 bits are XORed with the mask.
//! - `XorInput` (IAT, IAW, IAC): a wave starts with its work-item indices
//!   in v0 (packed x [9:0], y [19:10], z [29:20] on gfx90a and later; v0,
//!   v1, v2 on gfx908) and its workgroup indices in the SGPRs its
//!   descriptor enables ([`crate::inject`] locates them). Before the
//!   kernel's first instruction reading the register, it is XORed with the
//!   mask in the selected lanes (an SGPR: for the whole wave, when any
//!   selected lane is active) and never restored. The count is the
//!   selected lanes, as for every change of a uniform value.
//! - `XorUse`: before, the source is XORed; after, XORed back.
//! - `SubstituteUse`: before, the source is saved and the substitute copied
//!   in; after, the source is restored.
//! - `RedirectDef`: before, the destination's old value is saved; after, the
//!   result is copied to the wrong register and the old value restored.
//! - `DiscardDef`: the old value is saved before and restored after.
//! - `OtherOperation`: before, the other operation ([`Opcode::other_operation`])
//!   runs on the same operands into scratch; after, its result replaces the
//!   destination.
//! - `InvertPredicate` (WV): AMD has no predicate registers; the analogue
//!   is the lane mask a vector compare writes to an SGPR pair (`v_cmp_*_e64`):
//!   after it, the selected lanes' bits are inverted. Compares writing VCC
//!   (`_e32`) or SCC have no destination in the kernel view and are not
//!   targets.
//! - `Trap` (IVOC): before, a wave with selected lanes counts them and
//!   executes `s_trap 2` (the runtime's handler aborts the dispatch).
//! - `ForceGuard` is refused: AMD instructions have no guard predicate.
//!
//! Saved values live in the scratch VGPRs above the two the table update
//! uses (up to 3 registers) or in a scratch SGPR pair; wider operands and
//! accumulation registers are refused, as is more than one injection on an
//! instruction when one of them has two parts.

use super::*;
use xfpx_amd_isa::encoding::Field;
use xfpx_amd_isa::hwid::{self, HwField};
use xfpx_common::fault::FaultLocation;
use xfpx_common::probe::Change;
use xfpx_common::view::RegRange;

/// Which part of an injection is lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// Before the instruction, for a change placed after it.
    Pre,
    /// Where the change is placed.
    Main,
    /// After the instruction, for a change placed before it.
    Post,
}

/// Whether a change placed after its instruction needs a part before it.
pub(super) fn has_pre(change: &Change) -> bool {
    matches!(change, Change::RedirectDef { .. } | Change::DiscardDef { .. } | Change::OtherOperation { .. })
}

/// Whether a change placed before its instruction needs a part after it.
pub(super) fn has_post(change: &Change) -> bool {
    matches!(change, Change::XorUse { .. } | Change::SubstituteUse { .. })
}

/// The change of an injection probe, if it is one.
pub(super) fn change_of(p: &Probe) -> Option<&Change> {
    match &p.action {
        Action::Inject { change, .. } => Some(change),
        _ => None,
    }
}

impl AmdLowering<'_> {
    /// The selected-lanes pair.
    fn selected(&self) -> u16 {
        self.scratch.any()
    }

    /// A second scalar temporary.
    fn tmp2(&self) -> Src {
        Src::Sgpr(self.scratch.sgpr + 13)
    }

    fn sgpr(n: u16) -> Result<Src, RewriteError> {
        if n < 102 {
            Ok(Src::Sgpr(n))
        } else {
            Err(RewriteError::Refused(format!("s{n} is not injected (only s0-s101)")))
        }
    }

    /// The first scratch VGPR of a save area of `count` registers (a pair
    /// starts on an even register).
    fn save_area(&self, r: RegRange) -> Result<u16, RewriteError> {
        let first = self.scratch.v_class();
        match (r.file, r.count) {
            (RegFile::PerLane, 1 | 3) => Ok(first),
            (RegFile::PerLane, 2) => Ok(first + first % 2),
            (RegFile::Uniform, 1 | 2) => Ok(self.scratch.mask()),
            _ => Err(RewriteError::Refused(format!(
                "a {:?} operand of {} registers is not injected on AMD",
                r.file, r.count
            ))),
        }
    }

    /// `s_getreg_b32` of a field into `dst`.
    fn getreg(&mut self, dst: Src, field: HwField) -> Result<(), RewriteError> {
        let w = self.e().sopk(Opcode::S_GETREG_B32, dst, field.getreg_imm())?;
        self.emit(w);
        Ok(())
    }

    /// S := the location's lanes that are active in this wave, or 0 when the
    /// wave is elsewhere. Ends with a branch (returned, to be patched) taken
    /// when S is empty.
    fn select(&mut self, at: &FaultLocation) -> Result<usize, RewriteError> {
        let e = self.e();
        let s = self.selected();
        let (t, t2) = (self.scratch.tmp(), self.tmp2());
        let mut to_done = Vec::new();
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s)), Some(Src::Int(0)))?);
        self.getreg(t, hwid::CU_ON_DIE)?;
        if hwid::has_xcc_id(e.target) {
            self.getreg(t2, hwid::XCC_ID)?;
            self.emit(e.sop2(Opcode::S_LSHL_B32, t2, t2, Src::Int(8))?);
            self.emit(e.sop2(Opcode::S_OR_B32, t, t, t2)?);
        }
        let differs = |this: &mut Self, value: u32, to_done: &mut Vec<usize>| -> Result<(), RewriteError> {
            this.emit(e.sopc(Opcode::S_CMP_LG_U32, t, Src::Literal(value))?);
            to_done.push(this.appended.words.len());
            this.emit(e.sopp(Opcode::S_CBRANCH_SCC1, 0)?);
            Ok(())
        };
        differs(self, at.sm, &mut to_done)?;
        if let Some(simd) = at.subpartition {
            self.getreg(t, hwid::SIMD_ID)?;
            differs(self, simd, &mut to_done)?;
        }
        if let Some(ranges) = &at.warps {
            self.getreg(t, hwid::WAVE_ID)?;
            let mut to_hit = Vec::new();
            for &(a, b) in ranges {
                // t - a <= b - a (unsigned) exactly when a <= t <= b.
                self.emit(e.sop2(Opcode::S_SUB_U32, t2, t, Src::Literal(a))?);
                self.emit(e.sopc(Opcode::S_CMP_LE_U32, t2, Src::Literal(b - a))?);
                to_hit.push(self.appended.words.len());
                self.emit(e.sopp(Opcode::S_CBRANCH_SCC1, 0)?);
            }
            to_done.push(self.appended.words.len());
            self.emit(e.sopp(Opcode::S_BRANCH, 0)?);
            for at in to_hit {
                self.patch_skip(at)?;
            }
        }
        let lanes = at.lanes.0;
        self.emit(e.sop1(Opcode::S_MOV_B32, Some(Src::Sgpr(s)), Some(Src::Literal(lanes as u32)))?);
        self.emit(e.sop1(Opcode::S_MOV_B32, Some(Src::Sgpr(s + 1)), Some(Src::Literal((lanes >> 32) as u32)))?);
        self.emit(e.sop2(Opcode::S_AND_B64, Src::Sgpr(s), Src::Sgpr(s), Src::Special(SpecialReg::Exec))?);
        for at in to_done {
            self.patch_skip(at)?;
        }
        self.skip_if_none_selected()
    }

    /// A branch (returned, to be patched) taken when S is empty.
    fn skip_if_none_selected(&mut self) -> Result<usize, RewriteError> {
        let e = self.e();
        self.emit(e.sopc(Opcode::S_CMP_EQ_U64, Src::Sgpr(self.selected()), Src::Int(0))?);
        let at = self.appended.words.len();
        self.emit(e.sopp(Opcode::S_CBRANCH_SCC1, 0)?);
        Ok(at)
    }

    /// Runs `body` with EXEC = S (vector operands only).
    fn on_selected(
        &mut self,
        file: RegFile,
        body: impl FnOnce(&mut Self) -> Result<(), RewriteError>,
    ) -> Result<(), RewriteError> {
        if file != RegFile::PerLane {
            return body(self);
        }
        let e = self.e();
        let s = self.scratch;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(Src::Special(SpecialReg::Exec)))?);
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(self.selected())))?);
        body(self)?;
        self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Special(SpecialReg::Exec)), Some(Src::Sgpr(s.exec_save())))?);
        Ok(())
    }

    /// Copies `count` registers of `file` from `from` to `to` (lanes as EXEC says).
    fn copy_regs(&mut self, file: RegFile, to: u16, from: u16, count: u8) -> Result<(), RewriteError> {
        let e = self.e();
        for k in 0..u16::from(count) {
            let w = match file {
                RegFile::PerLane => e.vop1(Opcode::V_MOV_B32_E32, to + k, Src::Vgpr(from + k))?,
                RegFile::Uniform => {
                    e.sop1(Opcode::S_MOV_B32, Some(Self::sgpr(to + k)?), Some(Self::sgpr(from + k)?))?
                }
                other => return Err(RewriteError::Refused(format!("{other:?} registers are not injected on AMD"))),
            };
            self.emit(w);
        }
        Ok(())
    }

    /// XORs the first 64 bits of `r` with `mask`.
    fn xor_regs(&mut self, r: RegRange, mask: u64) -> Result<(), RewriteError> {
        let e = self.e();
        for k in 0..u16::from(r.count.min(2)) {
            let m = (mask >> (32 * k)) as u32;
            if m == 0 {
                continue;
            }
            let n = r.first + k;
            let w = match r.file {
                RegFile::PerLane => e.vop2(Opcode::V_XOR_B32_E32, n, Src::Literal(m), n)?,
                RegFile::Uniform => e.sop2(Opcode::S_XOR_B32, Self::sgpr(n)?, Self::sgpr(n)?, Src::Literal(m))?,
                other => return Err(RewriteError::Refused(format!("{other:?} registers are not injected on AMD"))),
            };
            self.emit(w);
        }
        Ok(())
    }

    /// Adds the number of selected lanes to the activations slot.
    fn count_activations(&mut self, kernel: &str, plan: &Plan, counter: u16) -> Result<(), RewriteError> {
        let def = plan
            .counters
            .get(counter as usize)
            .ok_or_else(|| RewriteError::Refused(format!("counter {counter} undeclared")))?;
        let slot = self.table.slot(kernel, SlotKind::Counter { name: def.name.clone(), per_lane: true });
        let t = self.scratch.tmp();
        let w = self.e().sop1(Opcode::S_BCNT1_I32_B64, Some(t), Some(Src::Sgpr(self.selected())))?;
        self.emit(w);
        self.record(slot, Opcode::GLOBAL_ATOMIC_ADD, t)
    }

    /// The `n`-th destination or source register of instruction `ins`.
    fn reg_of(ops: &[Operand], n: u8, what: &str) -> Result<RegRange, RewriteError> {
        match ops.get(n as usize) {
            Some(Operand::Reg(r)) if r.file != RegFile::Accumulator => Ok(*r),
            Some(Operand::Reg(_)) => Err(RewriteError::Refused(format!("{what} {n} is an accumulation register"))),
            _ => Err(RewriteError::Refused(format!("{what} {n} is not a register"))),
        }
    }

    /// One part of an injection probe.
    pub(super) fn inject(&mut self, view: &KernelView, plan: &Plan, p: &Probe, part: Part) -> Result<(), RewriteError> {
        let Action::Inject { change, threads, activations } = &p.action else {
            return Err(RewriteError::Refused("not an injection".into()));
        };
        let ins = &view.instrs[p.instr as usize];
        let d = self.instrs[p.instr as usize].clone();
        let e = self.e();
        let skip = match part {
            Part::Pre => self.select(threads)?,
            Part::Main if has_pre(change) => self.skip_if_none_selected()?,
            Part::Main => self.select(threads)?,
            Part::Post => self.skip_if_none_selected()?,
        };
        let count = |this: &mut Self| this.count_activations(&view.name, plan, activations.0);
        match (change.clone(), part) {
            (Change::XorDef { def, mask } | Change::SpecialRead { def, mask }, Part::Main) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                self.on_selected(r.file, |this| this.xor_regs(r, mask))?;
                count(self)?;
            }
            (Change::XorInput { reg, mask }, Part::Main) => {
                if reg.file == RegFile::Accumulator {
                    return Err(RewriteError::Refused("an accumulation register is no index input".into()));
                }
                self.on_selected(reg.file, |this| this.xor_regs(reg, mask))?;
                count(self)?;
            }
            (Change::XorUse { use_index, mask }, Part::Main | Part::Post) => {
                let r = Self::reg_of(&ins.uses, use_index, "source")?;
                self.on_selected(r.file, |this| this.xor_regs(r, mask))?;
                if part == Part::Main {
                    count(self)?;
                }
            }
            (Change::SubstituteUse { use_index, from }, Part::Main | Part::Post) => {
                let r = Self::reg_of(&ins.uses, use_index, "source")?;
                let area = self.save_area(r)?;
                if part == Part::Main {
                    self.on_selected(r.file, |this| {
                        this.copy_regs(r.file, area, r.first, r.count)?;
                        this.copy_regs(r.file, r.first, from.first, r.count)
                    })?;
                    count(self)?;
                } else {
                    self.on_selected(r.file, |this| this.copy_regs(r.file, r.first, area, r.count))?;
                }
            }
            (Change::RedirectDef { def, .. } | Change::DiscardDef { def }, Part::Pre) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                let area = self.save_area(r)?;
                self.on_selected(r.file, |this| this.copy_regs(r.file, area, r.first, r.count))?;
            }
            (Change::RedirectDef { def, to }, Part::Main) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                let area = self.save_area(r)?;
                self.on_selected(r.file, |this| {
                    this.copy_regs(r.file, to.first, r.first, r.count)?;
                    this.copy_regs(r.file, r.first, area, r.count)
                })?;
                count(self)?;
            }
            (Change::DiscardDef { def }, Part::Main) | (Change::OtherOperation { def }, Part::Main) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                let area = self.save_area(r)?;
                self.on_selected(r.file, |this| this.copy_regs(r.file, r.first, area, r.count))?;
                count(self)?;
            }
            (Change::OtherOperation { def }, Part::Pre) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                let area = self.save_area(r)?;
                if d.insn.variant != xfpx_amd_isa::Variant::Plain || ins.defs.len() != 1 {
                    return Err(RewriteError::Refused(format!("{} has no other operation defined", d.insn.mnemonic())));
                }
                let other = d.insn.op.other_operation().ok_or_else(|| {
                    RewriteError::Refused(format!("{} has no other operation defined", d.insn.mnemonic()))
                })?;
                let (field, dst) = match r.file {
                    RegFile::PerLane => (Field::Vdst, u32::from(area)),
                    _ => (Field::Sdst, u32::from(area)),
                };
                let words = e.reencode(&d.insn, other, field, dst)?;
                // The operation may read SCC (a carry): give it the kernel's.
                self.restore_scc()?;
                self.on_selected(r.file, |this| {
                    this.emit(words);
                    Ok(())
                })?;
            }
            (Change::InvertPredicate { def }, Part::Main) => {
                let r = Self::reg_of(&ins.defs, def, "destination")?;
                if !(r.file == RegFile::Uniform
                    && r.count == 2
                    && d.insn.op.compare().is_some_and(|c| c.unit.is_vector()))
                {
                    return Err(RewriteError::Refused(
                        "on AMD a work-flow violation inverts the lane mask of a vector compare (an SGPR pair)".into(),
                    ));
                }
                let s = Src::Sgpr(self.selected());
                self.emit(e.sop2(Opcode::S_XOR_B64, Self::sgpr(r.first)?, Self::sgpr(r.first)?, s)?);
                count(self)?;
            }
            (Change::Trap, Part::Main) => {
                count(self)?;
                self.emit(e.sopp(Opcode::S_WAITCNT, waitcnt_imm(0, 0))?);
                self.emit(e.sopp(Opcode::S_TRAP, 2)?);
            }
            (Change::ForceGuard, _) => {
                return Err(RewriteError::Refused("AMD instructions have no guard predicate to force".into()))
            }
            (change, part) => {
                return Err(RewriteError::Refused(format!("{change:?} has no {part:?} part")));
            }
        }
        self.patch_skip(skip)
    }

    /// Registers an injection part reads from the kernel (for waits).
    pub(super) fn inject_reads(view: &KernelView, p: &Probe, part: Part) -> Vec<(IsaFile, u16)> {
        let Some(change) = change_of(p) else { return Vec::new() };
        let ins = &view.instrs[p.instr as usize];
        let op = match (change.clone(), part) {
            (Change::XorUse { use_index, .. } | Change::SubstituteUse { use_index, .. }, _) => {
                ins.uses.get(use_index as usize)
            }
            (Change::Trap | Change::ForceGuard, _) => None,
            (Change::XorInput { reg, .. }, _) => return regs_of(&Operand::Reg(reg)),
            (Change::OtherOperation { .. }, Part::Pre) => {
                return ins.uses.iter().flat_map(regs_of).collect();
            }
            (
                Change::XorDef { def, .. }
                | Change::SpecialRead { def, .. }
                | Change::RedirectDef { def, .. }
                | Change::DiscardDef { def }
                | Change::OtherOperation { def }
                | Change::InvertPredicate { def },
                _,
            ) => ins.defs.get(def as usize),
        };
        op.map(regs_of).unwrap_or_default()
    }
}

/// The ISA registers of a view operand.
fn regs_of(op: &Operand) -> Vec<(IsaFile, u16)> {
    let Operand::Reg(r) = op else { return Vec::new() };
    let f = match r.file {
        RegFile::PerLane => IsaFile::Vgpr,
        RegFile::Uniform => IsaFile::Sgpr,
        RegFile::Accumulator => IsaFile::Agpr,
        RegFile::Predicate | RegFile::Stack => return Vec::new(),
    };
    (0..u16::from(r.count)).map(|i| (f, r.first + i)).collect()
}
