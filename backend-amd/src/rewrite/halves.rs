//! Which half of its register an f16 value of an instruction lies in, for
//! the checks that read it: the result of `v_fma_mixhi_f16`, of a VOP3
//! 16-bit operation whose op_sel selects the destination's high half, or of
//! an SDWA form with `dst_sel:WORD_1` is the high half; so is a source that
//! op_sel or an SDWA `src_sel:WORD_1` selects. A value a check cannot read
//! as a whole (a byte of a register, or an f32 result an SDWA destination
//! select cuts to part of its register) is refused with the reason, as is
//! any value inside a VGPR indexing region, where the check's own VGPR
//! operands would be indexed too.

use xfpx_amd_isa::operand::{Operand as IsaOperand, RegFile as IsaFile};
use xfpx_amd_isa::{Encoding, Field, Instruction, Opcode, Variant};
use xfpx_common::view::{Operand, RegFile};
use xfpx_common::FpFormat;

/// The value of an instruction a check reads.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// Its result.
    Result,
    /// A source register.
    Source(&'a Operand),
}

/// The SDWA select codes (`*_sel` fields).
const WORD_0: u32 = 4;
const WORD_1: u32 = 5;
const DWORD: u32 = 6;

/// How far back [`in_indexing_region`] looks: compilers open a region for
/// a few moves (`s_set_gpr_idx_on`, `v_mov_b32`, `s_set_gpr_idx_off`).
pub(super) const INDEXING_REACH: usize = 256;

/// Why the instruction at `index` of `code` lies inside a VGPR indexing
/// region (`s_set_gpr_idx_on` with no `s_set_gpr_idx_off` between them on
/// the straight-line code of the [`INDEXING_REACH`] instructions before
/// it), if it does. (Lowering asks [`super::facts::UnitFacts`], which
/// answers the same without the scan.)
pub fn in_indexing_region(code: &[crate::rewrite::view::DecodedInstr], index: usize) -> Option<String> {
    let end = index.min(code.len());
    for d in code[end.saturating_sub(INDEXING_REACH)..end].iter().rev() {
        match d.insn.op {
            Opcode::S_SET_GPR_IDX_ON | Opcode::S_SET_GPR_IDX_OFF => return opens_indexing_region(d),
            _ if d.insn.control_flow(d.addr) != xfpx_amd_isa::ControlFlow::Next => return None,
            _ => {}
        }
    }
    None
}

/// Why the code after `d` is indexed, where `d` opens an indexing region.
pub(super) fn opens_indexing_region(d: &crate::rewrite::view::DecodedInstr) -> Option<String> {
    (d.insn.op == Opcode::S_SET_GPR_IDX_ON).then(|| {
        format!(
            "inside a VGPR indexing region (s_set_gpr_idx_on at {:#x}): a check's own VGPR operands would be indexed",
            d.addr
        )
    })
}

/// Whether `value` of `insn`, read as `format`, is the high half of its
/// register; an error names why the check cannot read it.
pub fn high_half(insn: &Instruction, value: Value<'_>, format: FpFormat) -> Result<bool, String> {
    let sel = match insn.variant {
        Variant::Sdwa => match value {
            Value::Result if insn.encoding == Encoding::Vopc => return Ok(false),
            Value::Result => Some((insn.words[1] >> 8) & 7),
            Value::Source(op) => match source_index(insn, op)? {
                0 => Some((insn.words[1] >> 16) & 7),
                1 => Some((insn.words[1] >> 24) & 7),
                _ => None,
            },
        },
        _ => None,
    };
    if let Some(sel) = sel {
        return match (format, sel) {
            (_, DWORD) | (FpFormat::F16, WORD_0) => Ok(false),
            (FpFormat::F16, WORD_1) => Ok(true),
            _ => Err(format!(
                "{}: the SDWA select puts part of the {} value in a register",
                insn.mnemonic(),
                format.name()
            )),
        };
    }
    if format != FpFormat::F16 {
        return Ok(false);
    }
    match value {
        Value::Result if insn.op == Opcode::V_FMA_MIXHI_F16 => Ok(true),
        // op_sel of a VOP3 16-bit operation: bit 3 the destination, bit i source i.
        Value::Result if insn.encoding == Encoding::Vop3 => Ok(insn.words[0] >> 14 & 1 == 1),
        Value::Source(op) if insn.encoding == Encoding::Vop3 => {
            let i = source_index(insn, op)?;
            Ok(i < 3 && insn.words[0] >> (11 + i) & 1 == 1)
        }
        _ => Ok(false),
    }
}

/// The source position (0, 1, 2) of register operand `op` of `insn`; an
/// error where it is read at two positions.
fn source_index(insn: &Instruction, op: &Operand) -> Result<usize, String> {
    let Operand::Reg(r) = op else { return Err(format!("{}: not a register", insn.mnemonic())) };
    let file = match r.file {
        RegFile::PerLane => IsaFile::Vgpr,
        RegFile::Uniform => IsaFile::Sgpr,
        RegFile::Accumulator => IsaFile::Agpr,
        RegFile::Predicate => return Err(format!("{}: a predicate is not a value", insn.mnemonic())),
        RegFile::Stack => return Err(format!("{}: a stack slot is not a register", insn.mnemonic())),
    };
    // Positions by the operand template's fields (VOPC's mask destination
    // is a fixed operand, not a source).
    let at: Vec<usize> = insn
        .row
        .operands
        .iter()
        .zip(&insn.operands)
        .filter(|(_, s)| matches!(s.operand, IsaOperand::Reg(x) if x.file == file && x.first == r.first))
        .filter_map(|(slot, _)| match slot.field {
            Field::Src0 => Some(0),
            Field::Src1 | Field::Vsrc1 => Some(1),
            Field::Src2 => Some(2),
            _ => None,
        })
        .collect();
    match at.as_slice() {
        [i] => Ok(*i),
        [] => Ok(usize::MAX),
        _ => Err(format!("{}: one register read as two sources", insn.mnemonic())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::Target;
    use xfpx_common::view::RegRange;

    fn insn(words: &[u32]) -> Instruction {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::decode(Target::Gfx90a, &bytes).expect("decodes")
    }

    fn vgpr(n: u16) -> Operand {
        Operand::Reg(RegRange::new(RegFile::PerLane, n, 1))
    }

    /// Encodings from llvm-mc-19 (gfx90a).
    #[test]
    fn halves_follow_sdwa_selects_op_sel_and_mixhi() {
        // v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
        let i = insn(&[0x3E00_04F9, 0x0405_1501]);
        assert_eq!(high_half(&i, Value::Result, FpFormat::F16), Ok(true));
        assert_eq!(high_half(&i, Value::Source(&vgpr(1)), FpFormat::F16), Ok(true));
        assert_eq!(high_half(&i, Value::Source(&vgpr(2)), FpFormat::F16), Ok(false));
        // v_cmp_gt_f16_sdwa s[2:3], v1, v2 src0_sel:WORD_1 src1_sel:WORD_0
        let i = insn(&[0x7C48_04F9, 0x0405_8201]);
        assert_eq!(high_half(&i, Value::Source(&vgpr(1)), FpFormat::F16), Ok(true));
        assert_eq!(high_half(&i, Value::Source(&vgpr(2)), FpFormat::F16), Ok(false));
        // v_mul_f32_sdwa v0, -|v1|, v2 clamp ... src1_sel:WORD_0: a 16-bit piece as f32.
        let i = insn(&[0x0A00_04F9, 0x0436_2601]);
        assert_eq!(high_half(&i, Value::Result, FpFormat::F32), Ok(false));
        assert!(high_half(&i, Value::Source(&vgpr(2)), FpFormat::F32).is_err());
        // v_mov_b32_sdwa v0, v1 dst_sel:BYTE_2 ... is no FP value, but a byte is refused.
        let i = insn(&[0x7E00_02F9, 0x0000_0A01]);
        assert!(high_half(&i, Value::Result, FpFormat::F16).is_err());
        // v_fma_mixhi_f16 v0, v1, v2, v3
        let i = insn(&[0xD3A2_0000, 0x040E_0501]);
        assert_eq!(i.op, Opcode::V_FMA_MIXHI_F16);
        assert_eq!(high_half(&i, Value::Result, FpFormat::F16), Ok(true));
        // v_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0,1]: source 0 and the result high.
        let i = insn(&[0xD206_4800, 0x040E_0501]);
        assert_eq!(high_half(&i, Value::Result, FpFormat::F16), Ok(true));
        assert_eq!(high_half(&i, Value::Source(&vgpr(1)), FpFormat::F16), Ok(true));
        assert_eq!(high_half(&i, Value::Source(&vgpr(2)), FpFormat::F16), Ok(false));
        // v_add_f16_e32 v0, v1, v2: low halves.
        let i = insn(&[0x3E00_0501]);
        assert_eq!(high_half(&i, Value::Result, FpFormat::F16), Ok(false));
    }
}
