//! How a division's check tells division by zero from overflow. An
//! infinite quotient is division by zero only where the divisor was ±0
//! (else the quotient overflowed: infinity). The divisor is tested before
//! the instruction runs (it may overwrite it). The IEEE division sequence
//! (`v_div_scale`, `v_rcp`, FMAs, `v_div_fmas`, `v_div_fixup`) is judged as
//! a whole at `v_div_fixup`, whose operands are the quotient estimate, the
//! divisor and the numerand: the scale and fmas steps hold scaled
//! intermediates and get no check of their own.

use super::view::DecodedInstr;
use xfpx_amd_isa::operand::{Operand, RegFile, RegRange};
use xfpx_amd_isa::{ControlFlow, Encoding, Instruction, Traits, Variant};
use xfpx_common::{FpFormat, FpOp, InstrClass};

/// What a division instruction is to its checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It makes a quotient (`v_rcp*`, `v_div_fixup*`): its divisor is its
    /// source with this index among the sources it reads.
    Quotient { divisor: usize },
    /// An intermediate step of the division sequence (`v_div_scale*`,
    /// `v_div_fmas*`), judged at the sequence's `v_div_fixup`.
    Step,
}

/// The role of `insn`, if it is a division.
pub fn role(insn: &Instruction) -> Option<Role> {
    let traits = insn.op.traits();
    if traits.contains(Traits::DIV_SCALE) || traits.contains(Traits::DIV_FMAS) {
        return Some(Role::Step);
    }
    if !matches!(insn.class(), InstrClass::Arith { op: FpOp::Div, .. }) {
        return None;
    }
    let divisor = if traits.contains(Traits::DIV_FIXUP) { 1 } else { 0 };
    Some(Role::Quotient { divisor })
}

/// How far back from an instruction a `v_div_scale` opening its sequence is looked for.
pub(super) const SEQUENCE_REACH: usize = 64;

/// Whether instruction `index` of `code` (one unit, in order) is an
/// intermediate step of an IEEE division sequence: a `v_div_scale` or
/// `v_div_fmas`, or an instruction of the same straight-line stretch that
/// reads (transitively) a `v_div_scale` result before the sequence's
/// `v_div_fixup` (the reciprocal of the scaled divisor and the Newton
/// refinement). (Lowering asks [`super::facts::UnitFacts`], which finds
/// the sequence's start without the scan.)
pub fn is_step(code: &[DecodedInstr], index: usize) -> bool {
    // The earliest v_div_scale of the stretch before `index`, with no
    // v_div_fixup after it (that would close its sequence).
    let mut start = None;
    for j in (index.saturating_sub(SEQUENCE_REACH)..index.min(code.len())).rev() {
        let insn = &code[j].insn;
        if insn.control_flow(code[j].addr) != ControlFlow::Next || insn.op.traits().contains(Traits::DIV_FIXUP) {
            break;
        }
        if insn.op.traits().contains(Traits::DIV_SCALE) {
            start = Some(j);
        }
    }
    is_step_from(code, index, start)
}

/// [`is_step`] given the earliest `v_div_scale` of the stretch before
/// `index` with no `v_div_fixup` after it (`start`).
fn is_step_from(code: &[DecodedInstr], index: usize, start: Option<usize>) -> bool {
    match step_role(code, index) {
        Some(known) => known,
        None => {
            let Some(start) = start else { return false };
            let mut taint = Taint::default();
            code.iter().take(index).skip(start).for_each(|d| taint.pass(&d.insn));
            taint.read_by(&code[index].insn)
        }
    }
}

/// Whether instruction `index` is a division step by its role alone (a
/// step, or a quotient whose divisor is its second source: not one);
/// None where that takes the values it reads.
pub(super) fn step_role(code: &[DecodedInstr], index: usize) -> Option<bool> {
    let Some(here) = code.get(index) else { return Some(false) };
    match role(&here.insn) {
        Some(Role::Step) => Some(true),
        Some(Role::Quotient { divisor: 1 }) => Some(false),
        _ => None,
    }
}

/// The VGPRs holding values derived from a `v_div_scale` result, as bits,
/// after the instructions passed so far (from the sequence's start).
#[derive(Debug, Clone, Default)]
pub(super) struct Taint {
    bits: Vec<u64>,
}

impl Taint {
    fn has(&self, r: u16) -> bool {
        self.bits.get(usize::from(r / 64)).is_some_and(|w| w >> (r % 64) & 1 == 1)
    }

    /// Whether `insn` reads a tainted VGPR.
    pub(super) fn read_by(&self, insn: &Instruction) -> bool {
        vgpr_numbers(insn.reg_reads()).any(|r| self.has(r))
    }

    /// Passes `insn`: the VGPRs it writes are tainted where it is a
    /// `v_div_scale` or reads a tainted one, else clean.
    pub(super) fn pass(&mut self, insn: &Instruction) {
        let taints = insn.op.traits().contains(Traits::DIV_SCALE) || self.read_by(insn);
        for r in vgpr_numbers(insn.reg_writes()) {
            let word = usize::from(r / 64);
            if taints && self.bits.len() <= word {
                self.bits.resize(word + 1, 0);
            }
            if let Some(w) = self.bits.get_mut(word) {
                if taints {
                    *w |= 1 << (r % 64);
                } else {
                    *w &= !(1 << (r % 64));
                }
            }
        }
    }

    /// Forgets every taint.
    pub(super) fn clear(&mut self) {
        self.bits.clear();
    }
}

/// The VGPR numbers of `ranges`.
fn vgpr_numbers(ranges: impl Iterator<Item = RegRange>) -> impl Iterator<Item = u16> {
    ranges.filter(|r| r.file == RegFile::Vgpr).flat_map(|r| r.first..r.first + u16::from(r.count))
}

/// The divisor of a quotient, as its zero test reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Divisor {
    /// A VGPR (or the first of a pair).
    Vgpr { reg: u16, high_half: bool },
    /// An SGPR (or the first of a pair).
    Sgpr { reg: u16 },
    /// A constant: whether it is ±0.
    Constant { zero: bool },
}

/// The divisor of `insn` (of role [`Role::Quotient`] with index `index`),
/// or why it cannot be tested.
pub fn divisor(insn: &Instruction, index: usize, format: FpFormat) -> Result<Divisor, String> {
    if insn.variant == Variant::Dpp {
        return Err(format!("the divisor of {} (DPP form) is not tested for zero", insn.base_mnemonic));
    }
    let slot = insn
        .operands
        .iter()
        .filter(|s| !s.written)
        .nth(index)
        .ok_or_else(|| format!("{} has no divisor operand", insn.base_mnemonic))?;
    // An f16 source of a VOP3 form may be the high half (op_sel), one of an
    // SDWA form the word its select names (SDWA_SEL: 4 WORD_0, 5 WORD_1, 6 DWORD).
    let high_half = match insn.variant {
        Variant::Sdwa => match (format, insn.words[1] >> (16 + 8 * index.min(1)) & 7) {
            (_, 6) | (FpFormat::F16, 4) => false,
            (FpFormat::F16, 5) => true,
            _ => {
                return Err(format!(
                    "the divisor of {} is part of its register (SDWA select): not tested for zero",
                    insn.base_mnemonic
                ))
            }
        },
        _ => format == FpFormat::F16 && insn.encoding == Encoding::Vop3 && insn.words[0] >> (11 + index) & 1 == 1,
    };
    match &slot.operand {
        Operand::Reg(r) if r.file == RegFile::Vgpr => Ok(Divisor::Vgpr { reg: r.first, high_half }),
        Operand::Reg(r) if r.file == RegFile::Sgpr && !high_half => Ok(Divisor::Sgpr { reg: r.first }),
        Operand::InlineInt(v) => Ok(Divisor::Constant { zero: *v == 0 }),
        Operand::InlineFloat { .. } => Ok(Divisor::Constant { zero: false }),
        Operand::Literal { value, .. } => {
            let magnitude = match format {
                FpFormat::F16 => value & 0x7FFF,
                _ => value & 0x7FFF_FFFF,
            };
            Ok(Divisor::Constant { zero: magnitude == 0 })
        }
        other => Err(format!("the divisor {other} of {} is not tested for zero", insn.base_mnemonic)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::Target;

    fn insn(words: &[u32]) -> Instruction {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::decode(Target::Gfx90a, &bytes).expect("decodes")
    }

    #[test]
    fn roles_and_divisors_of_the_division_steps() {
        // v_rcp_f32_e32 v1, v2
        let rcp = insn(&[0x7E02_4502]);
        assert_eq!(rcp.base_mnemonic, "v_rcp_f32_e32");
        assert_eq!(role(&rcp), Some(Role::Quotient { divisor: 0 }));
        assert_eq!(divisor(&rcp, 0, FpFormat::F32), Ok(Divisor::Vgpr { reg: 2, high_half: false }));
        // v_div_fixup_f32 v0, v3, v1, v4
        let fixup = insn(&[0xD1DE_0000, 0x0412_0303]);
        assert_eq!(fixup.base_mnemonic, "v_div_fixup_f32");
        assert_eq!(role(&fixup), Some(Role::Quotient { divisor: 1 }));
        assert_eq!(divisor(&fixup, 1, FpFormat::F32), Ok(Divisor::Vgpr { reg: 1, high_half: false }));
        // v_div_scale_f32 v2, s[0:1], v1, v1, v0
        let scale = insn(&[0xD1E0_0002, 0x0402_0301]);
        assert_eq!(scale.base_mnemonic, "v_div_scale_f32");
        assert_eq!(role(&scale), Some(Role::Step));
        // v_add_f32_e32 v1, v2, v3: not a division
        assert_eq!(role(&insn(&[0x0202_0702])), None);
    }
}
