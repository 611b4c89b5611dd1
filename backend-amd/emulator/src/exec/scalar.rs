//! Scalar ALU (SOP1, SOP2, SOPK, SOPC) and program control (SOPP): SGPRs,
//! SCC, EXEC and the program counter, hardware registers (MODE, TRAPSTS).

use super::*;
use xfpx_amd_isa::{CmpCond, DataType, Family};

impl Wave {
    pub(crate) fn scalar(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let obs = &mut *env.obs;
        let w = inst.words[0];
        let lit = inst.literal;
        let m = inst.mnemonic;
        let sdst = ((w >> 16) & 0x7F) as u16;
        let c0 = (w & 0xFF) as u16;
        let c1 = ((w >> 8) & 0xFF) as u16;
        match inst.encoding {
            Encoding::Sopk => {
                let imm = (w & 0xFFFF) as u16;
                let simm = imm as i16 as i32;
                match inst.op {
                    Opcode::S_MOVK_I32 => self.ws(obs, sdst, simm as u32),
                    Opcode::S_CMOVK_I32 => {
                        if self.scc {
                            self.ws(obs, sdst, simm as u32)
                        }
                    }
                    Opcode::S_ADDK_I32 => {
                        let a = self.rs(obs, sdst) as i32;
                        let (r, o) = a.overflowing_add(simm);
                        self.scc = o;
                        self.ws(obs, sdst, r as u32);
                    }
                    Opcode::S_MULK_I32 => {
                        let a = self.rs(obs, sdst) as i32;
                        self.ws(obs, sdst, a.wrapping_mul(simm) as u32);
                    }
                    Opcode::S_CMPK_EQ_I32
                    | Opcode::S_CMPK_LG_I32
                    | Opcode::S_CMPK_GT_I32
                    | Opcode::S_CMPK_GE_I32
                    | Opcode::S_CMPK_LT_I32
                    | Opcode::S_CMPK_LE_I32 => {
                        let a = self.rs(obs, sdst) as i32;
                        self.scc = cmp_i(cond(inst.op), a as i64, simm as i64);
                    }
                    Opcode::S_CMPK_EQ_U32
                    | Opcode::S_CMPK_LG_U32
                    | Opcode::S_CMPK_GT_U32
                    | Opcode::S_CMPK_GE_U32
                    | Opcode::S_CMPK_LT_U32
                    | Opcode::S_CMPK_LE_U32 => {
                        let a = self.rs(obs, sdst);
                        self.scc = cmp_i(cond(inst.op), a as i64, imm as i64);
                    }
                    Opcode::S_GETREG_B32 => {
                        let v = self.hwreg_read(imm)?;
                        self.ws(obs, sdst, v);
                    }
                    Opcode::S_SETREG_B32 => {
                        let v = self.rs(obs, sdst);
                        self.hwreg_write(imm, v)?;
                    }
                    Opcode::S_SETREG_IMM32_B32 => {
                        let v = lit.unwrap_or(0);
                        self.hwreg_write(imm, v)?;
                    }
                    Opcode::S_CALL_B64 => {
                        self.ws64(obs, sdst, self.pc);
                        self.pc = (self.pc as i64 + 4 * simm as i64) as u64;
                    }
                    _ => return self.unsupported(m),
                }
            }
            Encoding::Sop1 => {
                let wide = matches!(inst.op.data_type(), Some(DataType::B64 | DataType::I64 | DataType::U64));
                let ty = if wide { Ty::B64 } else { Ty::B32 };
                match inst.op {
                    Opcode::S_GETPC_B64 => {
                        let pc = self.pc;
                        self.ws64(obs, sdst, pc);
                        return Ok(Step::Continue);
                    }
                    Opcode::S_SETPC_B64 => {
                        self.pc = self.ssrc64(obs, c0, lit, Ty::B64)?;
                        return Ok(Step::Continue);
                    }
                    Opcode::S_SWAPPC_B64 => {
                        let target = self.ssrc64(obs, c0, lit, Ty::B64)?;
                        let ret = self.pc;
                        self.ws64(obs, sdst, ret);
                        self.pc = target;
                        return Ok(Step::Continue);
                    }
                    _ => {}
                }
                if inst.op.family() == Family::SaveExec {
                    let s = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let e = self.exec();
                    self.ws64(obs, sdst, e);
                    let Some(logic) = Logic::of(inst.op) else { return self.unsupported(m) };
                    let r = logic.apply(s, e);
                    self.set_exec(r);
                    self.scc = r != 0;
                    return Ok(Step::Continue);
                }
                if matches!(
                    inst.op,
                    Opcode::S_FF1_I32_B64
                        | Opcode::S_FLBIT_I32_B64
                        | Opcode::S_BCNT1_I32_B64
                        | Opcode::S_FF0_I32_B64
                        | Opcode::S_BCNT0_I32_B64
                ) {
                    let s = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let r = match inst.op {
                        Opcode::S_FF1_I32_B64 => {
                            if s == 0 {
                                u32::MAX
                            } else {
                                s.trailing_zeros()
                            }
                        }
                        Opcode::S_FF0_I32_B64 => {
                            if s == u64::MAX {
                                u32::MAX
                            } else {
                                s.trailing_ones()
                            }
                        }
                        Opcode::S_FLBIT_I32_B64 => {
                            if s == 0 {
                                u32::MAX
                            } else {
                                s.leading_zeros()
                            }
                        }
                        Opcode::S_BCNT0_I32_B64 => {
                            self.scc = s != u64::MAX;
                            s.count_zeros()
                        }
                        _ => {
                            self.scc = s != 0;
                            s.count_ones()
                        }
                    };
                    self.ws(obs, sdst, r);
                    return Ok(Step::Continue);
                }
                if matches!(
                    inst.op,
                    Opcode::S_BITSET0_B64 | Opcode::S_BITSET1_B64 | Opcode::S_BITSET0_B32 | Opcode::S_BITSET1_B32
                ) {
                    let bit = self.ssrc(obs, c0, lit, Ty::B32)?;
                    let set = matches!(inst.op, Opcode::S_BITSET1_B32 | Opcode::S_BITSET1_B64);
                    if matches!(inst.op, Opcode::S_BITSET0_B64 | Opcode::S_BITSET1_B64) {
                        let d = self.rs(obs, sdst) as u64 | (self.rs(obs, sdst + 1) as u64) << 32;
                        let v = if set { d | 1 << (bit & 63) } else { d & !(1 << (bit & 63)) };
                        self.ws64(obs, sdst, v);
                    } else {
                        let d = self.rs(obs, sdst);
                        let v = if set { d | 1 << (bit & 31) } else { d & !(1 << (bit & 31)) };
                        self.ws(obs, sdst, v);
                    }
                    return Ok(Step::Continue);
                }
                if ty == Ty::B64 {
                    let s = self.ssrc64(obs, c0, lit, ty)?;
                    let r = match inst.op {
                        Opcode::S_MOV_B64 => s,
                        Opcode::S_NOT_B64 => {
                            self.scc = !s != 0;
                            !s
                        }
                        Opcode::S_BREV_B64 => s.reverse_bits(),
                        _ => return self.unsupported(m),
                    };
                    self.ws64(obs, sdst, r);
                } else {
                    let s = self.ssrc(obs, c0, lit, ty)?;
                    let r = match inst.op {
                        Opcode::S_MOV_B32 => s,
                        Opcode::S_CMOV_B32 => {
                            if !self.scc {
                                return Ok(Step::Continue);
                            }
                            s
                        }
                        Opcode::S_NOT_B32 => {
                            self.scc = !s != 0;
                            !s
                        }
                        Opcode::S_BREV_B32 => s.reverse_bits(),
                        Opcode::S_BCNT1_I32_B32 => {
                            self.scc = s != 0;
                            s.count_ones()
                        }
                        Opcode::S_FF1_I32_B32 => {
                            if s == 0 {
                                u32::MAX
                            } else {
                                s.trailing_zeros()
                            }
                        }
                        Opcode::S_FLBIT_I32_B32 => {
                            if s == 0 {
                                u32::MAX
                            } else {
                                s.leading_zeros()
                            }
                        }
                        Opcode::S_SEXT_I32_I8 => s as i8 as i32 as u32,
                        Opcode::S_SEXT_I32_I16 => s as i16 as i32 as u32,
                        Opcode::S_ABS_I32 => {
                            let r = (s as i32).unsigned_abs();
                            self.scc = r != 0;
                            r
                        }
                        _ => return self.unsupported(m),
                    };
                    self.ws(obs, sdst, r);
                }
            }
            Encoding::Sop2 => {
                // 64-bit logic (and s_cselect_b64, s_bfm_b64): two 64-bit sources.
                if inst.op.data_type() == Some(DataType::B64)
                    && !matches!(inst.op, Opcode::S_LSHL_B64 | Opcode::S_LSHR_B64)
                {
                    let a = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let b = self.ssrc64(obs, c1, lit, Ty::B64)?;
                    let r = if inst.op == Opcode::S_CSELECT_B64 {
                        if self.scc {
                            a
                        } else {
                            b
                        }
                    } else {
                        let Some(logic) = Logic::of(inst.op) else { return self.unsupported(m) };
                        let r = logic.apply(a, b);
                        self.scc = r != 0;
                        r
                    };
                    self.ws64(obs, sdst, r);
                    return Ok(Step::Continue);
                }
                if matches!(inst.op, Opcode::S_LSHL_B64 | Opcode::S_LSHR_B64 | Opcode::S_ASHR_I64) {
                    let a = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let b = self.ssrc(obs, c1, lit, Ty::B32)? & 63;
                    let r = match inst.op {
                        Opcode::S_LSHL_B64 => a << b,
                        Opcode::S_LSHR_B64 => a >> b,
                        _ => ((a as i64) >> b) as u64,
                    };
                    self.scc = r != 0;
                    self.ws64(obs, sdst, r);
                    return Ok(Step::Continue);
                }
                let a = self.ssrc(obs, c0, lit, Ty::B32)?;
                let b = self.ssrc(obs, c1, lit, Ty::B32)?;
                let r = match inst.op {
                    Opcode::S_ADD_U32 => {
                        let (r, c) = a.overflowing_add(b);
                        self.scc = c;
                        r
                    }
                    Opcode::S_SUB_U32 => {
                        let (r, c) = a.overflowing_sub(b);
                        self.scc = c;
                        r
                    }
                    Opcode::S_ADDC_U32 => {
                        let t = a as u64 + b as u64 + self.scc as u64;
                        self.scc = t >> 32 != 0;
                        t as u32
                    }
                    Opcode::S_SUBB_U32 => {
                        let t = (a as u64).wrapping_sub(b as u64).wrapping_sub(self.scc as u64);
                        self.scc = (b as u64 + self.scc as u64) > a as u64;
                        t as u32
                    }
                    Opcode::S_ADD_I32 => {
                        let (r, o) = (a as i32).overflowing_add(b as i32);
                        self.scc = o;
                        r as u32
                    }
                    Opcode::S_SUB_I32 => {
                        let (r, o) = (a as i32).overflowing_sub(b as i32);
                        self.scc = o;
                        r as u32
                    }
                    Opcode::S_MUL_I32 => a.wrapping_mul(b),
                    Opcode::S_MUL_HI_U32 => ((a as u64 * b as u64) >> 32) as u32,
                    Opcode::S_MUL_HI_I32 => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
                    Opcode::S_MIN_I32 | Opcode::S_MAX_I32 => {
                        let lt = (a as i32) < (b as i32);
                        self.scc = lt == (inst.op == Opcode::S_MIN_I32);
                        if self.scc {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::S_MIN_U32 | Opcode::S_MAX_U32 => {
                        let lt = a < b;
                        self.scc = lt == (inst.op == Opcode::S_MIN_U32);
                        if self.scc {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::S_CSELECT_B32 => {
                        if self.scc {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::S_LSHL_B32 | Opcode::S_LSHR_B32 | Opcode::S_ASHR_I32 => {
                        let r = match inst.op {
                            Opcode::S_LSHL_B32 => a << (b & 31),
                            Opcode::S_LSHR_B32 => a >> (b & 31),
                            _ => ((a as i32) >> (b & 31)) as u32,
                        };
                        self.scc = r != 0;
                        r
                    }
                    Opcode::S_LSHL1_ADD_U32
                    | Opcode::S_LSHL2_ADD_U32
                    | Opcode::S_LSHL3_ADD_U32
                    | Opcode::S_LSHL4_ADD_U32 => {
                        let sh = match inst.op {
                            Opcode::S_LSHL1_ADD_U32 => 1,
                            Opcode::S_LSHL2_ADD_U32 => 2,
                            Opcode::S_LSHL3_ADD_U32 => 3,
                            _ => 4,
                        };
                        let t = ((a as u64) << sh) + b as u64;
                        self.scc = t >> 32 != 0;
                        t as u32
                    }
                    Opcode::S_BFE_U32 | Opcode::S_BFE_I32 => {
                        let off = b & 31;
                        let width = (b >> 16) & 0x7F;
                        let r = bfe(a, off, width, inst.op == Opcode::S_BFE_I32);
                        self.scc = r != 0;
                        r
                    }
                    Opcode::S_PACK_LL_B32_B16 => (a & 0xFFFF) | (b << 16),
                    Opcode::S_PACK_LH_B32_B16 => (a & 0xFFFF) | (b & 0xFFFF_0000),
                    Opcode::S_PACK_HH_B32_B16 => (a >> 16) | (b & 0xFFFF_0000),
                    _ => match Logic::of(inst.op) {
                        Some(logic) => {
                            let r = logic.apply(a as u64, b as u64) as u32;
                            self.scc = r != 0;
                            r
                        }
                        None => return self.unsupported(m),
                    },
                };
                self.ws(obs, sdst, r);
            }
            Encoding::Sopc => {
                let compare = inst.op.compare();
                if compare.is_some_and(|c| c.ty == DataType::U64) {
                    let a = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let b = self.ssrc64(obs, c1, lit, Ty::B64)?;
                    self.scc = match inst.op {
                        Opcode::S_CMP_EQ_U64 => a == b,
                        Opcode::S_CMP_LG_U64 => a != b,
                        _ => return self.unsupported(m),
                    };
                } else {
                    let a = self.ssrc(obs, c0, lit, Ty::B32)?;
                    let b = self.ssrc(obs, c1, lit, Ty::B32)?;
                    self.scc = match inst.op {
                        Opcode::S_BITCMP0_B32 => a >> (b & 31) & 1 == 0,
                        Opcode::S_BITCMP1_B32 => a >> (b & 31) & 1 == 1,
                        _ => match compare {
                            Some(c) if c.ty == DataType::I32 => cmp_i(c.cond, a as i32 as i64, b as i32 as i64),
                            Some(c) if c.ty == DataType::U32 => cmp_i(c.cond, a as i64, b as i64),
                            _ => return self.unsupported(m),
                        },
                    };
                }
            }
            _ => return self.unsupported(m),
        }
        Ok(Step::Continue)
    }

    pub(crate) fn hwreg_read(&self, imm: u16) -> R<u32> {
        let (id, off, size) = (imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1);
        let v = match id {
            1 => self.mode,
            3 => self.trapsts,
            xfpx_amd_isa::hwid::HW_REG_HW_ID => self.hw_id,
            xfpx_amd_isa::hwid::HW_REG_XCC_ID if self.xcc_id.is_some() => self.xcc_id.unwrap_or(0),
            _ => return self.unsupported(format!("s_getreg of hardware register {id}")),
        };
        let mask = if size >= 32 { u32::MAX } else { (1u32 << size) - 1 };
        Ok((v >> off) & mask)
    }
    pub(crate) fn hwreg_write(&mut self, imm: u16, v: u32) -> R<()> {
        let (id, off, size) = (imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1);
        let mask = if size >= 32 { u32::MAX } else { ((1u32 << size) - 1) << off };
        let reg = match id {
            1 => &mut self.mode,
            3 => &mut self.trapsts,
            _ => return self.unsupported(format!("s_setreg of hardware register {id}")),
        };
        *reg = (*reg & !mask) | ((v << off) & mask);
        Ok(())
    }

    pub(crate) fn program(&mut self, inst: &Instruction, _env: &mut Env<'_>) -> R<Step> {
        let imm = (inst.words[0] & 0xFFFF) as u16;
        let target = (self.pc as i64 + 4 * (imm as i16 as i64)) as u64;
        let take = match inst.op {
            Opcode::S_NOP
            | Opcode::S_SLEEP
            | Opcode::S_SETPRIO
            | Opcode::S_SETHALT
            | Opcode::S_ICACHE_INV
            | Opcode::S_INCPERFLEVEL
            | Opcode::S_DECPERFLEVEL
            | Opcode::S_TTRACEDATA => return Ok(Step::Continue),
            Opcode::S_ENDPGM => {
                self.done = true;
                return Ok(Step::End);
            }
            Opcode::S_BARRIER => return Ok(Step::Barrier),
            Opcode::S_TRAP => return Err(ExecError::Trap { pc: self.cur_pc, id: imm as u8 }),
            Opcode::S_WAITCNT => {
                let vm = (imm as u32 & 0xF) | ((imm as u32 >> 14) & 3) << 4;
                let lgkm = (imm as u32 >> 8) & 0xF;
                self.timing.wait(vm, lgkm);
                return Ok(Step::Continue);
            }
            Opcode::S_BRANCH => true,
            Opcode::S_CBRANCH_SCC0 => !self.scc,
            Opcode::S_CBRANCH_SCC1 => self.scc,
            Opcode::S_CBRANCH_VCCZ => self.vcc() == 0,
            Opcode::S_CBRANCH_VCCNZ => self.vcc() != 0,
            Opcode::S_CBRANCH_EXECZ => self.exec() == 0,
            Opcode::S_CBRANCH_EXECNZ => self.exec() != 0,
            _ => return self.unsupported(inst.mnemonic),
        };
        if take {
            self.pc = target;
        }
        Ok(Step::Continue)
    }
}

/// The condition of a compare opcode (`F`, never true, for any other).
fn cond(op: Opcode) -> CmpCond {
    op.compare().map_or(CmpCond::F, |c| c.cond)
}

/// A scalar comparison (SCC): false for conditions scalar compares lack.
fn cmp_i(cond: CmpCond, a: i64, b: i64) -> bool {
    match cond {
        CmpCond::Eq => a == b,
        CmpCond::Lg | CmpCond::Ne => a != b,
        CmpCond::Gt => a > b,
        CmpCond::Ge => a >= b,
        CmpCond::Lt => a < b,
        CmpCond::Le => a <= b,
        _ => false,
    }
}

/// Bitwise operations of the scalar ALU (`s_<op>_b32`, `s_<op>_b64`,
/// `s_<op>_saveexec_b64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Logic {
    And,
    Or,
    Xor,
    Andn2,
    Orn2,
    Nand,
    Nor,
    Xnor,
}

impl Logic {
    /// The operation of a scalar logic opcode.
    fn of(op: Opcode) -> Option<Logic> {
        use Opcode as O;
        Some(match op {
            O::S_AND_B32 | O::S_AND_B64 | O::S_AND_SAVEEXEC_B64 => Logic::And,
            O::S_OR_B32 | O::S_OR_B64 | O::S_OR_SAVEEXEC_B64 => Logic::Or,
            O::S_XOR_B32 | O::S_XOR_B64 | O::S_XOR_SAVEEXEC_B64 => Logic::Xor,
            O::S_ANDN2_B32 | O::S_ANDN2_B64 | O::S_ANDN2_SAVEEXEC_B64 => Logic::Andn2,
            O::S_ORN2_B32 | O::S_ORN2_B64 | O::S_ORN2_SAVEEXEC_B64 => Logic::Orn2,
            O::S_NAND_B32 | O::S_NAND_B64 | O::S_NAND_SAVEEXEC_B64 => Logic::Nand,
            O::S_NOR_B32 | O::S_NOR_B64 | O::S_NOR_SAVEEXEC_B64 => Logic::Nor,
            O::S_XNOR_B32 | O::S_XNOR_B64 | O::S_XNOR_SAVEEXEC_B64 => Logic::Xnor,
            _ => return None,
        })
    }

    fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            Logic::And => a & b,
            Logic::Or => a | b,
            Logic::Xor => a ^ b,
            Logic::Andn2 => a & !b,
            Logic::Orn2 => a | !b,
            Logic::Nand => !(a & b),
            Logic::Nor => !(a | b),
            Logic::Xnor => !(a ^ b),
        }
    }
}

pub(crate) fn bfe(a: u32, off: u32, width: u32, signed: bool) -> u32 {
    if width == 0 {
        return 0;
    }
    let w = width.min(32);
    let v = if off + w >= 32 { a >> off } else { (a >> off) & ((1u32 << w) - 1) };
    if signed && w < 32 && v >> (w - 1) & 1 != 0 {
        v | !((1u32 << w) - 1)
    } else {
        v
    }
}
