//! What a check tests: the values a probe reads, brought to a class
//! test's source (AGPRs copied, f16/bf16 halves shifted, scalars moved
//! where the mask is scalar), the class tests themselves, and a division's
//! divisor test that splits its infinite quotients into division by zero
//! and infinity.

use super::*;
use xfpx_common::fp::ExceptionKinds;

pub(super) const CLASS_NAN: u32 = 0b00_0000_0011;
pub(super) const CLASS_INF: u32 = 0b10_0000_0100;
pub(super) const CLASS_SUBNORMAL: u32 = 0b00_1001_0000;
pub(super) const CLASS_ZERO: u32 = 0b00_0110_0000;

/// The class mask that finds `kind` in the result of an instruction of
/// `class`, and the lanes it counts in. A division's infinite quotient is
/// division by zero where the divisor was ±0, infinity elsewhere.
pub(super) fn class_mask(kind: ExceptionKind, class: InstrClass) -> (u32, Lanes) {
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
pub(super) enum Lanes {
    All,
    ZeroDivisor,
    NonzeroDivisor,
}

/// How one value is brought to a `v_cmp_class` source.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value {
    pub(super) src: Src,
    /// For AGPRs: copy (1 or 2 registers) into the value scratch first.
    pub(super) agpr: Option<u16>,
    /// f16x2/bf16 halves: shift the value into the low/high half first.
    pub(super) half: Half,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Half {
    Whole,
    HighToLow,
    LowToHigh,
    High,
}

/// A check's tests: per kind, its class mask and the lanes it counts.
pub(super) type Checks = [(ExceptionKind, (u32, Lanes))];

impl AmdLowering<'_> {
    /// The code of a check probe: the class tests of `values` for each of
    /// `kinds` the instruction may produce, each recording into the site's
    /// slot of its kind when some lane is in its class (with several
    /// kinds, one test of them all first skips the rest where none is).
    /// Encoded once per shape and copied (see `memo`).
    pub(super) fn check(
        &mut self,
        view: &KernelView,
        p: &Probe,
        values: &[ValueRef],
        format: FpFormat,
        kinds: ExceptionKinds,
    ) -> Result<(), RewriteError> {
        let ins = &view.instrs[p.instr as usize];
        if let Some(why) = self.facts.in_indexing_region(self.instrs, p.instr as usize) {
            return Err(RewriteError::Refused(why));
        }
        // bf16 values are shifted into the high half and tested as f32.
        let cmp = match format {
            FpFormat::F64 => Opcode::V_CMP_CLASS_F64_E64,
            FpFormat::F16 | FpFormat::F16x2 => Opcode::V_CMP_CLASS_F16_E64,
            _ => Opcode::V_CMP_CLASS_F32_E64,
        };
        // (the values' buffer is the memo's, kept from check to check)
        let mut vals = std::mem::take(&mut self.memo.values);
        vals.clear();
        let insn = &self.instrs[p.instr as usize].insn;
        for v in values {
            let op = match v {
                ValueRef::Def(n) => ins.defs.get(*n as usize),
                ValueRef::Use(n) => ins.uses.get(*n as usize),
                ValueRef::Reg(_) => None,
            }
            .ok_or_else(|| RewriteError::Refused(format!("value {v:?} does not exist")))?;
            let which = if matches!(v, ValueRef::Def(_)) { halves::Value::Result } else { halves::Value::Source(op) };
            // An f16 value in the high half is shifted down before its test.
            let high = halves::high_half(insn, which, format).map_err(RewriteError::Refused)?;
            let from = vals.len();
            self.values_into(op, format, &mut vals)?;
            for x in &mut vals[from..] {
                if high && x.half == Half::Whole {
                    x.half = Half::HighToLow;
                }
            }
        }
        let mut checks = [(ExceptionKind::Nan, (0, Lanes::All)); ExceptionKind::ALL.len()];
        let mut n = 0;
        for k in kinds.iter() {
            let test = class_mask(k, ins.class);
            if let (true, Some(c)) = (test.0 != 0, checks.get_mut(n)) {
                *c = (k, test);
                n += 1;
            }
        }
        // Steps of a division sequence are judged at its v_div_fixup.
        let step = self.facts.is_step(self.instrs, p.instr as usize);
        let lowered = if n == 0 || vals.is_empty() || step {
            Ok(())
        } else {
            self.check_code(p, cmp, format, &vals, &checks[..n])
        };
        self.memo.values = vals;
        lowered
    }

    /// The code of a check of `vals` (see [`Self::check`]).
    fn check_code(
        &mut self,
        p: &Probe,
        cmp: Opcode,
        format: FpFormat,
        vals: &[Value],
        checks: &Checks,
    ) -> Result<(), RewriteError> {
        let e = self.e();
        let slot_of =
            |table: &mut TableLayout, kernel: &str, k: usize| table.exception_slot(kernel, p.site, checks[k].0, format);
        if self.copy_check(cmp, format, vals, checks, slot_of) {
            return Ok(());
        }
        let start = self.check_start();
        let mut slot_words = [None; ExceptionKind::ALL.len()];
        // Fast path: one test for every kind at once; the per-kind
        // tests and records run only when some lane is exceptional.
        let union = checks.iter().fold(0, |a, &(_, (m, _))| a | m);
        let skip_all = if checks.len() > 1 {
            self.class_test(cmp, vals, format, union)?;
            let at = self.appended.words.len();
            self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
            Some(at)
        } else {
            None
        };
        for (k, &(_, (mask, lanes))) in checks.iter().enumerate() {
            let slot = slot_of(self.table, &self.kernel_name, k);
            let found = self.class_test(cmp, vals, format, mask)?;
            match lanes {
                Lanes::All => {}
                Lanes::ZeroDivisor => {
                    self.emit(e.sop2(Opcode::S_AND_B64, found, found, Src::Sgpr(self.zero_divisor()?))?)
                }
                Lanes::NonzeroDivisor => {
                    self.emit(e.sop2(Opcode::S_ANDN2_B64, found, found, Src::Sgpr(self.zero_divisor()?))?)
                }
            }
            let skip = self.appended.words.len();
            self.emit(e.sopp(Opcode::S_CBRANCH_SCC0, 0)?);
            slot_words[k] = self.record_slot(slot, Opcode::GLOBAL_ATOMIC_ADD, Src::Int(1))?;
            self.patch_skip(skip)?;
        }
        if let Some(at) = skip_all {
            self.patch_skip(at)?;
        }
        self.keep_check(start, &slot_words[..checks.len()]);
        Ok(())
    }

    /// The values a check reads, register by register (pairs for f64).
    pub(super) fn values(&self, op: &Operand, format: FpFormat) -> Result<Vec<Value>, RewriteError> {
        let mut out = Vec::new();
        self.values_into(op, format, &mut out)?;
        Ok(out)
    }

    /// [`Self::values`], appended to `out`.
    fn values_into(&self, op: &Operand, format: FpFormat, out: &mut Vec<Value>) -> Result<(), RewriteError> {
        let Operand::Reg(r) = op else { return Ok(()) };
        let words = u16::from(format.register_words());
        let mut i = 0u16;
        while i + words <= u16::from(r.count) {
            let n = r.first + i;
            let (src, agpr) = match r.file {
                RegFile::PerLane => (Src::Vgpr(n), None),
                RegFile::Uniform => (Src::Sgpr(n), None),
                RegFile::Accumulator => (Src::Vgpr(self.value_reg()?), Some(n)),
                RegFile::Predicate => return Err(RewriteError::Refused("predicate values cannot be checked".into())),
                RegFile::Stack => return Err(RewriteError::Refused("stack slots cannot be checked".into())),
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
        Ok(())
    }

    /// Brings a value to a VOP3 source beside the class mask `class`,
    /// through the value scratch when needed.
    pub(super) fn load_value(&mut self, v: Value, format: FpFormat, class: Src) -> Result<Src, RewriteError> {
        let e = self.e();
        let t = match (v.agpr, v.half, v.src) {
            (None, Half::Whole, src) if !Self::needs_vgpr(src, class) => return Ok(src),
            _ => self.value_reg()?,
        };
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
            Half::Whole if v.agpr.is_none() => {
                // a scalar value, moved for a test whose mask is scalar
                let Src::Sgpr(n) = v.src else { return Ok(v.src) };
                for k in 0..u16::from(format.register_words()) {
                    self.emit(e.vop1(Opcode::V_MOV_B32_E32, t + k, Src::Sgpr(n + k))?);
                }
                Src::Vgpr(t)
            }
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

    /// SCC := some active lane has a value of `vals` in class `mask`;
    /// returns the pair holding those lanes.
    pub(super) fn class_test(
        &mut self,
        cmp: Opcode,
        vals: &[Value],
        format: FpFormat,
        mask: u32,
    ) -> Result<Src, RewriteError> {
        let e = self.e();
        let s = self.scratch;
        let class = self.class_mask(mask)?;
        let result = if vals.len() == 1 { s.mask() } else { s.any() };
        if vals.len() > 1 {
            self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(s.any())), Some(Src::Int(0)))?);
        }
        for &v in vals {
            let src = self.load_value(v, format, class)?;
            self.emit(e.vop3_cmp(cmp, s.mask(), src, class)?);
            if vals.len() > 1 {
                self.emit(e.sop2(Opcode::S_OR_B64, Src::Sgpr(s.any()), Src::Sgpr(s.any()), Src::Sgpr(s.mask()))?);
            }
        }
        self.emit(e.sopc(Opcode::S_CMP_LG_U64, Src::Sgpr(result), Src::Int(0))?);
        Ok(Src::Sgpr(result))
    }

    /// A class test's mask as its second source: in `v_class`, or, with a
    /// site's borrowed registers, an inline constant where it fits (a NaN
    /// test), else in `tmp` (the tested value is then a VGPR: one SGPR
    /// source).
    pub(super) fn class_mask(&mut self, mask: u32) -> Result<Src, RewriteError> {
        let e = self.e();
        let s = self.scratch;
        if s.site.is_some() && mask <= 64 {
            return Ok(Src::Int(mask as i8));
        }
        if s.site.is_some() {
            self.emit(e.sop1(Opcode::S_MOV_B32, Some(s.tmp()), Some(Src::Literal(mask)))?);
            return Ok(s.tmp());
        }
        self.emit(e.vop1(Opcode::V_MOV_B32_E32, s.v_class(), Src::Literal(mask))?);
        Ok(Src::Vgpr(s.v_class()))
    }

    /// Whether a value at `src` must be moved into a VGPR before a class test
    /// whose mask is `class` takes it (a mask in an SGPR leaves the value
    /// no SGPR source).
    pub(super) fn needs_vgpr(src: Src, class: Src) -> bool {
        matches!(class, Src::Sgpr(_)) && !matches!(src, Src::Vgpr(_))
    }

    /// The value scratch pair, or why a site has none.
    pub(super) fn value_reg(&self) -> Result<u16, RewriteError> {
        self.scratch.value().ok_or_else(|| {
            RewriteError::Refused(
                "at its register budget: the value must be moved into a VGPR pair, and none is dead or savable at the site"
                    .into(),
            )
        })
    }

    /// Before a division whose checks split infinite quotients by divisor
    /// ([`Lanes`]): the lanes whose divisor is ±0 into the zero-divisor pair
    /// (read now, as the division may overwrite its divisor). Writes
    /// neither SCC nor VCC.
    pub(super) fn divisor_test(
        &mut self,
        view: &KernelView,
        index: usize,
        after: &[&Probe],
    ) -> Result<(), RewriteError> {
        if !self.splits_by_divisor(view, index, after) {
            return Ok(());
        }
        let d = &self.instrs[index];
        let Some(Role::Quotient { divisor }) = division::role(&d.insn) else { return Ok(()) };
        let Some(format) = view.instrs[index].class.format() else { return Ok(()) };
        let e = self.e();
        let pair = self.zero_divisor()?;
        let (src, half) = match division::divisor(&d.insn, divisor, format).map_err(RewriteError::Refused)? {
            Divisor::Constant { zero } => {
                let lanes = if zero { Src::Special(SpecialReg::Exec) } else { Src::Int(0) };
                self.emit(e.sop1(Opcode::S_MOV_B64, Some(Src::Sgpr(pair)), Some(lanes))?);
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
        let class = self.class_mask(CLASS_ZERO)?;
        let value = self.load_value(Value { src, agpr: None, half }, format, class)?;
        self.emit(e.vop3_cmp(cmp, pair, value, class)?);
        Ok(())
    }

    /// Whether instruction `index` is a division whose `after` checks split
    /// infinite quotients by divisor ([`Lanes`]): its divisor is tested first.
    pub(super) fn splits_by_divisor(&self, view: &KernelView, index: usize, after: &[&Probe]) -> bool {
        let Some(d) = self.instrs.get(index) else { return false };
        matches!(division::role(&d.insn), Some(Role::Quotient { .. }))
            && !self.facts.is_step(self.instrs, index)
            && view.instrs[index].class.format().is_some()
            && after.iter().any(|p| match &p.action {
                Action::CheckFp { kinds, .. } => {
                    kinds.contains(ExceptionKind::Div0) || kinds.contains(ExceptionKind::Inf)
                }
                _ => false,
            })
    }

    /// The zero-divisor pair, or why the site has none.
    pub(super) fn zero_divisor(&self) -> Result<u16, RewriteError> {
        self.scratch
            .zero_divisor()
            .ok_or_else(|| RewriteError::Encode("a division's check at a site without a zero-divisor pair".into()))
    }
}
