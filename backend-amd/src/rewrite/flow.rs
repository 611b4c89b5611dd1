//! Lowering of flow probes ([`Action::Flow`]) on AMD.
//!
//! A probe builds one word per lane ([`xfpx_common::flow::lane`]) in the
//! held scratch VGPR (the last one, above those the table update and the
//! class tests use): the classes of the sources, tested before the
//! instruction (so that a source it overwrites is read as it was), then
//! the class of the result, tested after it, and the instruction's facts
//! (it divides; it writes no value). Each class is one `v_cmp_class` into
//! the mask pair and one `v_cndmask` of its bit. When some lane has an
//! exceptional source or result, the site calls its unit's flow routine
//! (emitted once per kernel or device function in the appended code, ahead
//! of the unit's first trampoline): for each category of [`CATEGORIES`],
//! the lanes whose word matches; when some lane does, one lane adds 1 to
//! the category's count slot and those lanes OR their words into its
//! classes slot. A site's slots are one block, a (count, classes) pair per
//! (state, kind) of [`PAIRS`]; the routine gets the block's byte offset in
//! the tmp SGPR and returns through the `any` pair. Everything runs inside
//! the trampoline's SCC save, and VCC is never written.

use super::*;
use xfpx_common::flow::{lane, lane_word, pair_index, CATEGORIES, PAIRS};

/// The held scratch VGPR: the lane words, from before the instruction to
/// the routine.
fn held(s: &Scratch) -> u16 {
    s.vgpr + 4
}

/// `v_cmp_class` masks of the five classes, with their bits in a word's
/// source position.
const CLASS_BITS: [(i8, u32); 5] = [
    (lane::SRC_NAN as i8, CLASS_NAN),
    (lane::SRC_INF as i8, CLASS_INF),
    (lane::SRC_SUB as i8, CLASS_SUBNORMAL),
    (lane::SRC_ZERO as i8, CLASS_ZERO),
    (lane::SRC_NORMAL as i8, CLASS_NORMAL),
];

/// -normal and +normal.
const CLASS_NORMAL: u32 = 0b01_0000_1000;

/// The class test of a format (bf16 is shifted into the high half and
/// tested as f32).
fn class_cmp(format: FpFormat) -> Opcode {
    match format {
        FpFormat::F64 => Opcode::V_CMP_CLASS_F64_E64,
        FpFormat::F16 | FpFormat::F16x2 => Opcode::V_CMP_CLASS_F16_E64,
        _ => Opcode::V_CMP_CLASS_F32_E64,
    }
}

/// Registers a flow probe reads before its instruction (`before`) or after it.
pub(super) fn flow_reads(view: &KernelView, p: &Probe, before: bool) -> Vec<(IsaFile, u16)> {
    let Action::Flow { sources, result, .. } = &p.action else { return Vec::new() };
    let ins = &view.instrs[p.instr as usize];
    let values: Vec<Option<&Operand>> = if before {
        sources.iter().map(|v| if let ValueRef::Use(n) = v { ins.uses.get(*n as usize) } else { None }).collect()
    } else {
        result.iter().map(|v| if let ValueRef::Def(n) = v { ins.defs.get(*n as usize) } else { None }).collect()
    };
    values.into_iter().flatten().flat_map(crate::rewrite::view::isa_registers).collect()
}

/// Whether a probe is a flow probe placed after its instruction (its
/// sources are read before it).
pub(super) fn reads_before(p: &Probe) -> bool {
    matches!(p.action, Action::Flow { .. }) && p.when == When::After
}

impl AmdLowering<'_> {
    /// Before the instruction: the held word starts with the instruction's
    /// facts and the classes of its sources.
    pub(super) fn flow_sources(&mut self, view: &KernelView, p: &Probe) -> Result<(), RewriteError> {
        let Action::Flow { sources, source_format: format, division, .. } = &p.action else { return Ok(()) };
        let ins = &view.instrs[p.instr as usize];
        let e = self.e();
        let held = held(&self.scratch);
        let init = if *division { lane::DIVISION } else { 0 };
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, held, Src::Literal(u32::from(init)))?);
        for v in sources {
            let op = match v {
                ValueRef::Use(n) => ins.uses.get(*n as usize),
                _ => None,
            }
            .ok_or_else(|| RewriteError::Refused(format!("flow source {v:?} does not exist")))?;
            if let Operand::Known { bits } = op {
                let bit = lane_word(*format, &[*bits], *format, None, false) & 0x1f;
                self.emit(e.vop2(Opcode::V_OR_B32_E32, held, Src::Literal(u32::from(bit)), held)?);
                continue;
            }
            for value in self.values(op, *format)? {
                self.classify(value, *format, held)?;
            }
        }
        Ok(())
    }

    /// The flow probe itself: the result's classes (or, for a probe before
    /// its instruction, the sources' and the no-result fact), then the
    /// routine when some lane is exceptional.
    pub(super) fn flow_probe(&mut self, view: &KernelView, p: &Probe) -> Result<(), RewriteError> {
        let Action::Flow { result, format, .. } = &p.action else { return Ok(()) };
        let e = self.e();
        let s = self.scratch;
        let held = held(&s);
        match result {
            None => {
                self.flow_sources(view, p)?;
                self.emit(e.vop2(Opcode::V_OR_B32_E32, held, Src::Literal(u32::from(lane::NO_RESULT)), held)?);
            }
            Some(ValueRef::Def(n)) => {
                let op = view.instrs[p.instr as usize]
                    .defs
                    .get(*n as usize)
                    .ok_or_else(|| RewriteError::Refused(format!("flow result {n} does not exist")))?;
                let values = self.values(op, *format)?;
                // classes in source position, then moved to the result's
                self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), Src::Int(0))?);
                for value in values {
                    self.classify(value, *format, s.v_addr())?;
                }
                self.emit(e.vop2(Opcode::V_LSHLREV_B32_E32, s.v_addr(), Src::Int(5), s.v_addr())?);
                self.emit(e.vop2(Opcode::V_OR_B32_E32, held, Src::Vgpr(s.v_addr()), held)?);
            }
            Some(other) => return Err(RewriteError::Refused(format!("flow result {other:?} is not a destination"))),
        }
        self.flow_call(view, p)
    }

    /// ORs the class bits of `v` (of `format`) into `acc`, in source position.
    fn classify(&mut self, v: Value, format: FpFormat, acc: u16) -> Result<(), RewriteError> {
        if v.agpr.is_some() && format == FpFormat::F64 {
            return Err(RewriteError::Refused("f64 values in accumulation registers are not analysed".into()));
        }
        let e = self.e();
        let s = self.scratch;
        let src = self.load_value(v, format, Src::Vgpr(s.v_class()))?;
        for (bit, mask) in CLASS_BITS {
            self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_class(), Src::Literal(mask))?);
            self.emit(e.vop3_cmp(class_cmp(format), s.mask(), src, Src::Vgpr(s.v_class()))?);
            self.emit(e.vop3(
                Opcode::V_CNDMASK_B32_E64,
                s.v_data(),
                Src::Int(0),
                Src::Int(bit),
                Src::Sgpr(s.mask()),
            )?);
            self.emit(e.vop2(Opcode::V_OR_B32_E32, acc, Src::Vgpr(s.v_data()), acc)?);
        }
        Ok(())
    }

    /// The site's block of slots: a (count, classes) pair per (state,
    /// kind) of [`PAIRS`], contiguous; returns its first slot.
    fn flow_slots(&mut self, view: &KernelView, p: &Probe, format: FpFormat) -> Result<u32, RewriteError> {
        let class = view.instrs[p.instr as usize].class.label();
        let mut first = None;
        for (i, &(state, kind)) in PAIRS.iter().enumerate() {
            for seen in [false, true] {
                let kind = SlotKind::Flow { site: p.site, state, kind, format, class: class.clone(), seen };
                let n = self.table.slot(&self.kernel_name, kind);
                let want = first.map_or(n, |f: u32| f + 2 * i as u32 + u32::from(seen));
                if n != want {
                    return Err(RewriteError::Refused("the site's flow slots are not one block".into()));
                }
                first.get_or_insert(n);
            }
        }
        first.ok_or_else(|| RewriteError::Refused("no flow slots".into()))
    }

    /// When some lane's word is exceptional: the block's byte offset into
    /// tmp, the return address into `any`, and a jump to the routine.
    fn flow_call(&mut self, view: &KernelView, p: &Probe) -> Result<(), RewriteError> {
        let Action::Flow { format, .. } = &p.action else { return Ok(()) };
        let e = self.e();
        let s = self.scratch;
        let held = held(&s);
        let routine = self.flow_routine.ok_or_else(|| RewriteError::Refused("the unit has no flow routine".into()))?;
        let first = self.flow_slots(view, p, *format)?;
        self.emit(e.vop2(Opcode::V_AND_B32_E32, s.v_data(), Src::Literal(u32::from(lane::EXCEPTIONAL)), held)?);
        self.emit(e.vop3_cmp(Opcode::V_CMP_NE_U32_E64, s.mask(), Src::Int(0), Src::Vgpr(s.v_data()))?);
        self.emit(e.sopc(Opcode::S_CMP_LG_U64, Src::Sgpr(s.mask()), Src::Int(0))?);
        let skip = self.appended.words.len();
        self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
        self.emit(e.sop1(Opcode::S_MOV_B32, Some(s.tmp()), Some(Src::Literal(first * 4)))?);
        // the return address: after s_getpc_b64, plus the distance patched below
        let any = s.any();
        self.emit(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(any)), None)?);
        let got = self.appended.here();
        let add = self.appended.words.len();
        self.emit(e.sop2(Opcode::S_ADD_U32, Src::Sgpr(any), Src::Sgpr(any), Src::FixedLiteral(0))?);
        self.emit(e.sop2(Opcode::S_ADDC_U32, Src::Sgpr(any + 1), Src::Sgpr(any + 1), Src::Int(0))?);
        match rel16(self.appended.here(), routine) {
            Some(rel) => self.emit(e.sopp(Opcode::S_BRANCH, rel)?),
            None => {
                // a far routine: through the jump pair (SCC may be clobbered here)
                let j = s.jump();
                let pc = self.appended.here() + 4;
                self.emit(e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(j)), None)?);
                self.add_to_pair(j, routine.wrapping_sub(pc))?;
                self.emit(e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(j)))?);
            }
        }
        let back = self.appended.here() - got;
        self.appended.words[add + 1] = back as u32;
        self.patch_skip(skip)
    }

    /// Emits the unit's flow routine at the end of the appended code (where
    /// no path runs into it), once.
    pub(super) fn ensure_flow_routine(&mut self) -> Result<(), RewriteError> {
        if self.flow_routine.is_some() {
            return Ok(());
        }
        let at = self.appended.here();
        let e = self.e();
        let s = self.scratch;
        let held = held(&s);
        let exec = Src::Special(SpecialReg::Exec);
        self.table_address_to(s.table())?;
        for c in CATEGORIES {
            let pair =
                pair_index(c.state, c.kind).ok_or_else(|| RewriteError::Encode("category without slot".into()))?;
            let offset = (8 * pair) as u16;
            self.emit(e.vop2(Opcode::V_AND_B32_E32, s.v_data(), Src::Literal(u32::from(c.mask)), held)?);
            self.emit(e.vop2(Opcode::V_XOR_B32_E32, s.v_data(), Src::Literal(u32::from(c.want)), s.v_data())?);
            self.emit(e.vop3_cmp(Opcode::V_CMP_EQ_U32_E64, s.mask(), Src::Int(0), Src::Vgpr(s.v_data()))?);
            self.emit(e.sopc(Opcode::S_CMP_LG_U64, Src::Sgpr(s.mask()), Src::Int(0))?);
            let skip = self.appended.words.len();
            self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.exec_save())), Some(exec))?);
            // one lane counts the wave execution
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(exec), Some(Src::Int(1)))?);
            self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), s.tmp())?);
            self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_data(), Src::Int(1))?);
            self.emit(e.global_atomic_at(Opcode::GLOBAL_ATOMIC_ADD, s.v_addr(), s.v_data(), s.table(), offset)?);
            // the category's lanes OR their words
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(exec), Some(Src::Sgpr(s.mask())))?);
            self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_addr(), s.tmp())?);
            self.emit(e.global_atomic_at(Opcode::GLOBAL_ATOMIC_OR, s.v_addr(), held, s.table(), offset + 4)?);
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(exec), Some(Src::Sgpr(s.exec_save())))?);
            self.patch_skip(skip)?;
        }
        self.emit(e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(s.any())))?);
        self.flow_routine = Some(at);
        Ok(())
    }
}
