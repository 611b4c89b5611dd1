//! Matrix instructions (v_mfma_*, v_accvgpr_*): AGPR access, operands read
//! through the ISA decoder, the multiply, and result-latency hazards.

use super::*;
use crate::matrix::{Controls, MatrixElem, Operands};
use xfpx_amd_isa::Family;

impl Wave {
    /// A matrix instruction's result read too soon is a hazard.
    pub(crate) fn matrix_hazard(&self, obs: &mut Observations, index: usize, reg: Reg) {
        let now = self.wait_states;
        let ready = |p: &PendingMatrix| if self.memory_access { p.ready_memory } else { p.ready_valu };
        if let Some(p) =
            self.matrix_pending.iter().find(|p| ready(p) > now && (p.first..p.first + p.count).contains(&index))
        {
            obs.hazards.insert(Hazard {
                pc: self.cur_pc,
                reg,
                kind: HazardKind::MatrixResultNotReady,
                issued_pc: p.pc,
            });
        }
    }

    /// Index in `vgpr` of register `index` of `file` (VGPR or AGPR).
    pub(crate) fn vector_slot(&self, file: RegFile, index: u16) -> R<usize> {
        let slot = match file {
            RegFile::Vgpr => index as usize,
            RegFile::Agpr => self.acc_base + index as usize,
            _ => return self.unsupported(format!("{file:?} operand of a matrix instruction")),
        };
        if slot >= NUM_VGPRS {
            return self.unsupported(format!("a{index} beyond the register file (AGPRs start at {})", self.acc_base));
        }
        Ok(slot)
    }

    /// Dword `r` of operand `op` in `lane`; `wide` reads 64-bit constants
    /// (an f64 operand's low dword at even `r`, high at odd).
    pub(crate) fn matrix_operand(
        &self,
        obs: &mut Observations,
        op: &IsaOperand,
        r: usize,
        lane: usize,
        wide: bool,
    ) -> R<u32> {
        Ok(match op {
            IsaOperand::Reg(range) if matches!(range.file, RegFile::Vgpr | RegFile::Agpr) => {
                let index = range.first + r as u16;
                if range.file == RegFile::Vgpr {
                    return Ok(self.rv(obs, index, lane));
                }
                let slot = self.vector_slot(range.file, index)?;
                self.hazard(obs, Reg::Vgpr(slot as u16), HazardKind::ReadInFlight);
                self.matrix_hazard(obs, slot, Reg::Agpr(index));
                self.vgpr[slot][lane]
            }
            IsaOperand::Reg(range) if range.file == RegFile::Sgpr => self.rs(obs, range.first + r as u16),
            IsaOperand::InlineInt(v) => {
                let v = *v as i64 as u64;
                if wide && r % 2 == 1 {
                    (v >> 32) as u32
                } else {
                    v as u32
                }
            }
            IsaOperand::InlineFloat { code, .. } if wide => {
                let v = f64_inline(*code as u16).unwrap_or(0);
                if r % 2 == 1 {
                    (v >> 32) as u32
                } else {
                    v as u32
                }
            }
            IsaOperand::InlineFloat { code, .. } => f32_inline(*code as u16).unwrap_or(0),
            other => return self.unsupported(format!("matrix operand {other}")),
        })
    }

    pub(crate) fn write_vector(
        &mut self,
        obs: &mut Observations,
        file: RegFile,
        index: u16,
        lane: usize,
        v: u32,
    ) -> R<()> {
        if file == RegFile::Vgpr {
            self.wv(obs, index, lane, v);
            return Ok(());
        }
        let slot = self.vector_slot(file, index)?;
        if lane == 0 || !self.timing.is_idle() {
            self.hazard(obs, Reg::Vgpr(slot as u16), HazardKind::WriteInFlight);
        }
        self.vgpr[slot][lane] = v;
        Ok(())
    }

    /// `v_accvgpr_*` and `v_mfma_*`: operands (with their VGPR/AGPR files)
    /// come from the ISA decoder.
    pub(crate) fn matrix(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<()> {
        let obs = &mut *env.obs;
        let target = env.target;
        let bytes: Vec<u8> = inst.words[..inst.len as usize / 4].iter().flat_map(|w| w.to_le_bytes()).collect();
        let full = match xfpx_amd_isa::decode(target, &bytes) {
            Ok(i) => i,
            Err(e) => return Err(ExecError::Decode { pc: self.cur_pc, what: e.to_string() }),
        };
        let ops: Vec<IsaOperand> = full.operands.iter().map(|o| o.operand.clone()).collect();
        let exec = self.exec();
        let m = inst.mnemonic;
        if inst.op.family() == Family::AccvgprMove {
            let (Some(IsaOperand::Reg(dst)), Some(src)) = (ops.first(), ops.get(1)) else {
                return self.unsupported(format!("{m} operands"));
            };
            for lane in lanes(exec) {
                let v = self.matrix_operand(obs, src, 0, lane, false)?;
                self.write_vector(obs, dst.file, dst.first, lane, v)?;
            }
            return Ok(());
        }
        let Some(shape) = crate::matrix::shape(inst.op) else {
            return self.unsupported(format!("{m} (unsupported matrix instruction)"));
        };
        let generation = generation(target);
        if shape.passes(generation) == 0 {
            return self.unsupported(format!("{m} on {}", env.target));
        }
        let controls = self.matrix_controls(m, &full.modifiers)?;
        if let Err(why) = shape.check_controls(&controls) {
            return self.unsupported(format!("{m} with {why}"));
        }
        if exec != u64::MAX {
            return self.unsupported(format!("{m} with EXEC {exec:#x} (only a full EXEC mask is modelled)"));
        }
        let (Some(IsaOperand::Reg(dst)), Some(a_op), Some(b_op), Some(src2)) =
            (ops.first(), ops.get(1), ops.get(2), ops.get(3))
        else {
            return self.unsupported(format!("{m} operands"));
        };
        // A sparse instruction accumulates into D; its third source is the index.
        let (c_op, index_op) = if shape.sparse { (&ops[0], Some(src2)) } else { (src2, None) };
        let dst_first = self.vector_slot(dst.file, dst.first)?;
        let wide = |e: MatrixElem| e == MatrixElem::F64;
        // Accumulating into the previous matrix result in place (same
        // registers) is forwarded without wait states.
        if let IsaOperand::Reg(c) = c_op {
            let c_first = self.vector_slot(c.file, c.first)?;
            self.matrix_pending.retain(|p| !(p.first == c_first && p.count == c.count as usize));
        }
        let gather =
            |w: &Self, obs: &mut Observations, op: &IsaOperand, regs: usize, wide: bool| -> R<Vec<[u32; 64]>> {
                let mut v = vec![[0u32; 64]; regs];
                for (r, reg) in v.iter_mut().enumerate() {
                    for (lane, x) in reg.iter_mut().enumerate() {
                        *x = w.matrix_operand(obs, op, r, lane, wide)?;
                    }
                }
                Ok(v)
            };
        let a = gather(self, obs, a_op, shape.a_regs(), wide(shape.a))?;
        let b = gather(self, obs, b_op, shape.b_regs(), wide(shape.b))?;
        let c = gather(self, obs, c_op, shape.output_regs(), wide(shape.output))?;
        let index = match index_op {
            Some(op) => Some(gather(self, obs, op, 1, false)?),
            None => None,
        };
        let operands = Operands { a: &a, b: &b, c: &c, index: index.as_ref().map(|r| &r[0]) };
        let (d, flags) = crate::matrix::multiply(shape, generation, &operands, &controls, self.fp_mode()?);
        let mut kinds = 0u8;
        for (r, reg) in d.iter().enumerate() {
            for (lane, &v) in reg.iter().enumerate() {
                self.write_vector(obs, dst.file, dst.first + r as u16, lane, v)?;
                match shape.output {
                    MatrixElem::F32 => {
                        let x = f32::from_bits(v);
                        kinds |= classify(x.is_nan(), x.is_infinite(), x.is_subnormal(), false);
                    }
                    MatrixElem::F64 if r % 2 == 0 => {
                        let x = f64::from_bits(v as u64 | (reg_hi(&d, r, lane) as u64) << 32);
                        kinds |= classify(x.is_nan(), x.is_infinite(), x.is_subnormal(), false);
                    }
                    _ => {}
                }
            }
        }
        self.raise(flags);
        if let (xfpx_common::InstrClass::Matrix { format }, true) = (full.class(), kinds != 0) {
            self.observe(obs, format, kinds);
        }
        let count = shape.output_regs();
        self.matrix_pending.retain(|p| p.first + p.count <= dst_first || dst_first + count <= p.first);
        self.matrix_pending.push(PendingMatrix {
            first: dst_first,
            count,
            ready_valu: self.wait_states + shape.result_wait_states(generation, false) + 1,
            ready_memory: self.wait_states + shape.result_wait_states(generation, true) + 1,
            pc: self.cur_pc,
        });
        Ok(())
    }

    /// The cbsz/abid/blgp controls (and the f64 negation) of a matrix
    /// instruction; any other modifier is refused.
    fn matrix_controls(&self, m: &str, modifiers: &[xfpx_amd_isa::Modifier]) -> R<Controls> {
        use xfpx_amd_isa::Modifier;
        let mut c = Controls::default();
        for x in modifiers {
            match x {
                Modifier::Comment(_) => {}
                Modifier::Dec("cbsz", v) => c.cbsz = *v as u8,
                Modifier::Dec("abid", v) => c.abid = *v as u8,
                Modifier::Dec("blgp", v) => c.blgp = *v as u8,
                Modifier::Array("neg", v) if v.len() == 3 => c.neg = [v[0] != 0, v[1] != 0, v[2] != 0],
                other => return self.unsupported(format!("{m} with {other}")),
            }
        }
        Ok(c)
    }
}

/// The matrix generation of a target.
pub(crate) fn generation(target: Target) -> Generation {
    match target {
        Target::Gfx908 => Generation::Gfx908,
        Target::Gfx90a => Generation::Gfx90a,
        Target::Gfx942 => Generation::Gfx940,
        Target::Gfx950 => Generation::Gfx950,
    }
}

/// The high dword of the f64 element whose low dword is register `r`.
pub(crate) fn reg_hi(d: &[[u32; 64]], r: usize, lane: usize) -> u32 {
    d[r + 1][lane]
}
