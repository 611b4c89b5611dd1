//! Vector compares (v_cmp_*, v_cmpx_*): integer, floating-point and class
//! tests writing a lane mask to VCC or an SGPR pair (and EXEC for v_cmpx).

use super::*;
use xfpx_amd_isa::{CmpCond, CmpUnit, Compare, DataType};

impl Wave {
    pub(crate) fn vcmp(&mut self, inst: &Instruction, f: &Valu, compare: Compare, obs: &mut Observations) -> R<()> {
        let (cond, ty) = (compare.cond, compare.ty);
        let lit = inst.literal;
        let exec = self.exec();
        let mut out = 0u64;
        let mode = self.fp_mode()?;
        let mut flags = 0;
        for lane in lanes(exec) {
            let r = match ty {
                DataType::F32 => {
                    let a = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                    if cond == CmpCond::Class {
                        let mask = self.operand(obs, f, 1, lit, Ty::B32, lane)?;
                        mask >> fpu::class32(a) & 1 != 0
                    } else {
                        let b = f32::from_bits(self.fp_src32(obs, f, 1, lit, lane)?);
                        let b = fpu::in32(b, mode, &mut flags);
                        let a = fpu::in32(a, mode, &mut flags);
                        cmp_f(cond, a as f64, b as f64, &mut flags)
                            .ok_or(())
                            .or_else(|_| self.unsupported(inst.mnemonic))?
                    }
                }
                DataType::F64 => {
                    let a = f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?);
                    if cond == CmpCond::Class {
                        let mask = self.operand(obs, f, 1, lit, Ty::B32, lane)?;
                        mask >> fpu::class64(a) & 1 != 0
                    } else {
                        let b = f64::from_bits(self.fp_src64(obs, f, 1, lit, lane)?);
                        cmp_f(cond, a, b, &mut flags).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                    }
                }
                DataType::F16 => {
                    let a = fpu::f16_to_f64(self.fp_src16(obs, f, 0, lit, lane)? as u16);
                    if cond == CmpCond::Class {
                        let mask = self.operand(obs, f, 1, lit, Ty::B32, lane)?;
                        let h = self.fp_src16(obs, f, 0, lit, lane)? as u16;
                        let snan = a.is_nan() && h & 0x200 == 0;
                        let sub = h & 0x7C00 == 0 && h & 0x3FF != 0;
                        mask >> fpu::class_bit64(a, snan, sub) & 1 != 0
                    } else {
                        let b = fpu::f16_to_f64(self.fp_src16(obs, f, 1, lit, lane)? as u16);
                        cmp_f(cond, a, b, &mut flags).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                    }
                }
                DataType::I32 | DataType::U32 => {
                    let a = self.operand(obs, f, 0, lit, Ty::B32, lane)?;
                    let b = self.operand(obs, f, 1, lit, Ty::B32, lane)?;
                    let (a, b) =
                        if ty == DataType::I32 { (a as i32 as i64, b as i32 as i64) } else { (a as i64, b as i64) };
                    cmp_int(cond, a as i128, b as i128).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                DataType::I64 | DataType::U64 => {
                    let a = self.src64(obs, f, 0, lit, Ty::B64, lane)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let (a, b) =
                        if ty == DataType::I64 { (a as i64 as i128, b as i64 as i128) } else { (a as i128, b as i128) };
                    cmp_int(cond, a, b).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                DataType::I16 | DataType::U16 => {
                    let a = self.operand(obs, f, 0, lit, Ty::B32, lane)? as u16;
                    let b = self.operand(obs, f, 1, lit, Ty::B32, lane)? as u16;
                    let (a, b) =
                        if ty == DataType::I16 { (a as i16 as i128, b as i16 as i128) } else { (a as i128, b as i128) };
                    cmp_int(cond, a, b).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                _ => return self.unsupported(inst.mnemonic),
            };
            if r {
                out |= 1 << lane;
            }
        }
        self.raise(flags);
        // VCC in e32, the SGPR pair of VOP3 and of SDWA's SD bit.
        self.ws64(obs, f.sdst, out);
        if compare.unit == CmpUnit::VectorExec {
            self.set_exec(out);
        }
        Ok(())
    }
}

/// An integer vector comparison; `None` for a condition integer compares lack.
fn cmp_int(cond: CmpCond, a: i128, b: i128) -> Option<bool> {
    Some(match cond {
        CmpCond::F => false,
        CmpCond::T => true,
        CmpCond::Eq => a == b,
        CmpCond::Ne | CmpCond::Lg => a != b,
        CmpCond::Gt => a > b,
        CmpCond::Ge => a >= b,
        CmpCond::Lt => a < b,
        CmpCond::Le => a <= b,
        _ => return None,
    })
}

#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::nonminimal_bool, clippy::double_comparisons)]
/// FP comparisons; signalling ones (all but eq/neq/u/o/...) raise INVALID on
/// NaN; `None` for a condition float compares lack.
fn cmp_f(cond: CmpCond, a: f64, b: f64, flags: &mut Flags) -> Option<bool> {
    let un = a.is_nan() || b.is_nan();
    if un && a.is_nan() && a.to_bits() & 0x0008_0000_0000_0000 == 0 {
        *flags |= flag::INVALID;
    }
    Some(match cond {
        CmpCond::F => false,
        CmpCond::Tru => true,
        CmpCond::Lt => a < b,
        CmpCond::Eq => a == b,
        CmpCond::Le => a <= b,
        CmpCond::Gt => a > b,
        CmpCond::Lg => a < b || a > b,
        CmpCond::Ge => a >= b,
        CmpCond::O => !un,
        CmpCond::U => un,
        CmpCond::Nge => !(a >= b),
        CmpCond::Nlg => !(a < b || a > b),
        CmpCond::Ngt => !(a > b),
        CmpCond::Nle => !(a <= b),
        CmpCond::Neq => a != b,
        CmpCond::Nlt => !(a < b),
        _ => return None,
    })
}
