//! VGPR indexing mode (`s_set_gpr_idx_on/off/idx/mode`): while it is on,
//! the VGPR operands of VALU instructions that M0's mode bits name (bit 12
//! source 0, 13 source 1, 14 source 2, 15 the destination) address the
//! register M0[7:0] further on.

use super::*;

impl Wave {
    /// Executes an `s_set_gpr_idx_*` instruction; `None` for any other.
    pub(crate) fn set_gpr_idx(&mut self, inst: &Instruction, obs: &mut Observations) -> R<Option<Step>> {
        let w = inst.words[0];
        if !matches!(
            inst.op,
            Opcode::S_SET_GPR_IDX_ON
                | Opcode::S_SET_GPR_IDX_OFF
                | Opcode::S_SET_GPR_IDX_IDX
                | Opcode::S_SET_GPR_IDX_MODE
        ) {
            return Ok(None);
        }
        let m0 = self.rs(obs, M0);
        match inst.op {
            // SOPC: S0 the index, the S1 field's raw bits the mode.
            Opcode::S_SET_GPR_IDX_ON => {
                let idx = self.ssrc(obs, (w & 0xFF) as u16, inst.literal, Ty::B32)? & 0xFF;
                let mode = (w >> 8) & 0xF;
                self.ws(obs, M0, (m0 & !0xF0FF) | mode << 12 | idx);
                self.gpr_idx_on = true;
            }
            Opcode::S_SET_GPR_IDX_OFF => self.gpr_idx_on = false,
            Opcode::S_SET_GPR_IDX_IDX => {
                let idx = self.ssrc(obs, (w & 0xFF) as u16, inst.literal, Ty::B32)? & 0xFF;
                self.ws(obs, M0, (m0 & !0xFF) | idx);
            }
            Opcode::S_SET_GPR_IDX_MODE => self.ws(obs, M0, (m0 & !0xF000) | (w & 0xF) << 12),
            _ => return Ok(None),
        }
        Ok(Some(Step::Continue))
    }

    /// Offsets the VGPR operands of `f` that indexing mode names.
    pub(crate) fn index_vgprs(&self, f: &mut Valu) {
        if !self.gpr_idx_on {
            return;
        }
        let m0 = self.sgpr[M0 as usize];
        let (idx, mode) = ((m0 & 0xFF) as u16, (m0 >> 12) & 0xF);
        for i in 0..3 {
            if mode >> i & 1 != 0 && f.src[i] >= 256 {
                f.src[i] = 256 + (f.src[i] - 256 + idx) % 256;
            }
        }
        if mode & 8 != 0 {
            f.dst = (f.dst + idx) % 256;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, wave};
    use super::*;

    /// Encodings from llvm-mc-19 (gfx942).
    #[test]
    fn indexing_mode_offsets_the_named_operands_until_switched_off() {
        let mut w = wave(0xF0);
        for r in 0..12 {
            w.vgpr[r] = [100 + r as u32; 64];
        }
        w.sgpr[2] = 3;
        w.sgpr[3] = 5;
        // s_set_gpr_idx_on s2, gpr_idx(SRC0); v_mov_b32_e32 v1, v4 reads v7.
        run(&mut w, &[0xBF11_0102]).expect("runs");
        assert_eq!(w.sgpr[M0 as usize] & 0xF0FF, 0x1003);
        run(&mut w, &[0x7E02_0304]).expect("runs");
        assert_eq!(w.vgpr[1][9], 107);
        // s_set_gpr_idx_mode gpr_idx(SRC0,SRC1,SRC2,DST); s_set_gpr_idx_idx s3;
        // v_mov_b32_e32 v1, v4 then writes v6 from v9.
        run(&mut w, &[0xBF9D_000F]).expect("runs");
        run(&mut w, &[0xBE80_3203]).expect("runs");
        run(&mut w, &[0x7E02_0304]).expect("runs");
        assert_eq!((w.vgpr[6][0], w.vgpr[1][0]), (109, 107));
        // s_set_gpr_idx_off: v_mov_b32_e32 v1, v4 is itself again.
        run(&mut w, &[0xBF9C_0000]).expect("runs");
        run(&mut w, &[0x7E02_0304]).expect("runs");
        assert_eq!(w.vgpr[1][0], 104);
    }
}
