//! LDS instructions (DS): reads, writes, atomics and the lane permutes.

use super::memory::AtomicOp;
use super::subdword::SubDword;
use super::*;
use xfpx_amd_isa::{DataType, Family};

impl Wave {
    pub(crate) fn ds(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let m = inst.mnemonic;
        let off0 = w0 & 0xFF;
        let off1 = (w0 >> 8) & 0xFF;
        let off16 = w0 & 0xFFFF;
        let addr_r = (w1 & 0xFF) as u16;
        let d0 = ((w1 >> 8) & 0xFF) as u16;
        let d1 = ((w1 >> 16) & 0xFF) as u16;
        let vdst = ((w1 >> 24) & 0xFF) as u16;
        let exec = self.exec();
        let obs = &mut *env.obs;
        let mut regs = Vec::new();
        if inst.op == Opcode::DS_BPERMUTE_B32 || inst.op == Opcode::DS_PERMUTE_B32 {
            // Lane crossing through the LDS hardware, without touching LDS:
            // bpermute pulls data0 from lane addr/4, permute pushes it there.
            let mut out = [0u32; 64];
            for lane in lanes(exec) {
                let target = (self.rv(obs, addr_r, lane).wrapping_add(off16) / 4 % 64) as usize;
                if inst.op == Opcode::DS_BPERMUTE_B32 {
                    out[lane] = if exec >> target & 1 != 0 { self.rv(obs, d0, target) } else { 0 };
                } else {
                    out[target] = self.rv(obs, d0, lane);
                }
            }
            for lane in lanes(exec) {
                self.wv(obs, vdst, lane, out[lane]);
            }
            self.timing.issue(Counter::Lds, self.cur_pc, vec![Reg::Vgpr(vdst)]);
            return Ok(Step::Continue);
        }
        let sub = SubDword::of(inst.op);
        for lane in lanes(exec) {
            let base = self.rv(obs, addr_r, lane);
            let cur_pc = self.cur_pc;
            let fault = move |a: u32| ExecError::MemoryFault { pc: cur_pc, addr: a as u64, what: "LDS access" };
            let rd = |lds: &Lds, a: u32| -> R<u32> {
                let mut b = [0u8; 4];
                if lds.read(a, &mut b) {
                    Ok(u32::from_le_bytes(b))
                } else {
                    Err(fault(a))
                }
            };
            if let Some(sub) = sub {
                // Bytes and shorts; d16 forms keep the other half of the
                // register or store its high half.
                let a = base.wrapping_add(off16);
                if sub.load {
                    let mut b = [0u8; 2];
                    if !env.lds.read(a, &mut b[..sub.bytes]) {
                        return Err(fault(a));
                    }
                    let old = self.vgpr[vdst as usize % NUM_VGPRS][lane];
                    self.wv(obs, vdst, lane, sub.loaded(&b, old));
                } else if !env.lds.write(a, &sub.stored(self.rv(obs, d0, lane))[..sub.bytes]) {
                    return Err(fault(a));
                }
                continue;
            }
            match inst.op {
                Opcode::DS_WRITE_B32 | Opcode::DS_WRITE_B64 | Opcode::DS_WRITE_B96 | Opcode::DS_WRITE_B128 => {
                    let n = match inst.op {
                        Opcode::DS_WRITE_B32 => 1,
                        Opcode::DS_WRITE_B64 => 2,
                        Opcode::DS_WRITE_B96 => 3,
                        _ => 4,
                    };
                    for i in 0..n {
                        let a = base.wrapping_add(off16 + 4 * i);
                        let v = self.rv(obs, d0 + i as u16, lane);
                        if !env.lds.write(a, &v.to_le_bytes()) {
                            return Err(fault(a));
                        }
                    }
                }
                Opcode::DS_WRITE2_B32
                | Opcode::DS_WRITE2ST64_B32
                | Opcode::DS_WRITE2_B64
                | Opcode::DS_WRITE2ST64_B64 => {
                    let b64 = matches!(inst.op, Opcode::DS_WRITE2_B64 | Opcode::DS_WRITE2ST64_B64);
                    let st64 = matches!(inst.op, Opcode::DS_WRITE2ST64_B32 | Opcode::DS_WRITE2ST64_B64);
                    let unit = if b64 { 8 } else { 4 } * if st64 { 64 } else { 1 };
                    for (k, (off, d)) in [(off0, d0), (off1, d1)].into_iter().enumerate() {
                        let _ = k;
                        for i in 0..if b64 { 2 } else { 1 } {
                            let a = base.wrapping_add(off * unit + 4 * i);
                            let v = self.rv(obs, d + i as u16, lane);
                            if !env.lds.write(a, &v.to_le_bytes()) {
                                return Err(fault(a));
                            }
                        }
                    }
                }
                Opcode::DS_READ_B32 | Opcode::DS_READ_B64 | Opcode::DS_READ_B96 | Opcode::DS_READ_B128 => {
                    let n = match inst.op {
                        Opcode::DS_READ_B32 => 1,
                        Opcode::DS_READ_B64 => 2,
                        Opcode::DS_READ_B96 => 3,
                        _ => 4,
                    };
                    for i in 0..n {
                        let v = rd(env.lds, base.wrapping_add(off16 + 4 * i))?;
                        self.wv(obs, vdst + i as u16, lane, v);
                    }
                }
                Opcode::DS_READ2_B32 | Opcode::DS_READ2ST64_B32 | Opcode::DS_READ2_B64 | Opcode::DS_READ2ST64_B64 => {
                    let b64 = matches!(inst.op, Opcode::DS_READ2_B64 | Opcode::DS_READ2ST64_B64);
                    let st64 = matches!(inst.op, Opcode::DS_READ2ST64_B32 | Opcode::DS_READ2ST64_B64);
                    let n = if b64 { 2 } else { 1 };
                    let unit = if b64 { 8 } else { 4 } * if st64 { 64 } else { 1 };
                    for (k, off) in [off0, off1].into_iter().enumerate() {
                        for i in 0..n {
                            let v = rd(env.lds, base.wrapping_add(off * unit + 4 * i))?;
                            self.wv(obs, vdst + (k as u16 * n as u16 + i as u16), lane, v);
                        }
                    }
                }
                _ => {
                    // Atomics: ds_<op>_u32 (no return) and ds_<op>_rtn_u32.
                    if !matches!(inst.op.data_type(), Some(DataType::U32 | DataType::B32 | DataType::I32)) {
                        return self.unsupported(m);
                    }
                    let rtn = inst.op.family() == Family::LdsReturn;
                    let a = base.wrapping_add(off16);
                    let old = rd(env.lds, a)? as u64;
                    let data = self.rv(obs, d0, lane) as u64;
                    let cmp = self.rv(obs, d1, lane) as u64;
                    let Some(atomic) = lds_atomic(inst.op) else { return self.unsupported(m) };
                    let new = atomic.apply(old, data, cmp, false);
                    env.lds.write(a, &(new as u32).to_le_bytes());
                    if rtn {
                        self.wv(obs, vdst, lane, old as u32);
                    }
                }
            }
        }
        if matches!(inst.op.family(), Family::LdsRead | Family::LdsReturn) {
            let n = match inst.op {
                Opcode::DS_READ_B64 | Opcode::DS_READ2_B32 | Opcode::DS_READ2ST64_B32 => 2,
                Opcode::DS_READ_B96 => 3,
                Opcode::DS_READ_B128 | Opcode::DS_READ2_B64 | Opcode::DS_READ2ST64_B64 => 4,
                _ => 1,
            };
            for i in 0..n {
                regs.push(Reg::Vgpr(vdst + i));
            }
        }
        self.timing.issue(Counter::Lds, self.cur_pc, regs);
        Ok(Step::Continue)
    }
}

/// The operation of a 32-bit DS atomic the emulator executes (with or
/// without return).
fn lds_atomic(op: Opcode) -> Option<AtomicOp> {
    use Opcode as O;
    Some(match op {
        O::DS_ADD_U32 | O::DS_ADD_RTN_U32 => AtomicOp::Add,
        O::DS_SUB_U32 | O::DS_SUB_RTN_U32 => AtomicOp::Sub,
        O::DS_INC_U32 | O::DS_INC_RTN_U32 => AtomicOp::Inc,
        O::DS_DEC_U32 | O::DS_DEC_RTN_U32 => AtomicOp::Dec,
        O::DS_MIN_I32 | O::DS_MIN_RTN_I32 => AtomicOp::SMin,
        O::DS_MAX_I32 | O::DS_MAX_RTN_I32 => AtomicOp::SMax,
        O::DS_MIN_U32 | O::DS_MIN_RTN_U32 => AtomicOp::UMin,
        O::DS_MAX_U32 | O::DS_MAX_RTN_U32 => AtomicOp::UMax,
        O::DS_AND_B32 | O::DS_AND_RTN_B32 => AtomicOp::And,
        O::DS_OR_B32 | O::DS_OR_RTN_B32 => AtomicOp::Or,
        O::DS_XOR_B32 | O::DS_XOR_RTN_B32 => AtomicOp::Xor,
        _ => return None,
    })
}
