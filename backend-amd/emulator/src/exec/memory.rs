//! Memory instructions other than the LDS: scalar loads (SMEM), FLAT and
//! GLOBAL accesses (with the LDS and private apertures), SCRATCH and MUBUF
//! through the private segment, and the atomic operations they share.

use super::subdword::SubDword;
use super::*;
use xfpx_amd_isa::Family;

impl Wave {
    pub(crate) fn smem(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let obs = &mut *env.obs;
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let sbase = ((w0 & 0x3F) * 2) as u16;
        let sdata = ((w0 >> 6) & 0x7F) as u16;
        let imm = (w0 >> 17) & 1 != 0;
        let soe = (w0 >> 14) & 1 != 0;
        let mut off: i64 =
            if imm { ((w1 & 0x1F_FFFF) << 11) as i32 as i64 >> 11 } else { self.rs(obs, (w1 & 0x7F) as u16) as i64 };
        if soe {
            off += self.rs(obs, ((w1 >> 25) & 0x7F) as u16) as i64;
        }
        let base = self.rs(obs, sbase) as u64 | ((self.rs(obs, sbase + 1) as u64 & 0xFFFF) << 32);
        let addr = (base as i64 + off) as u64 & !3;
        let n = match inst.op {
            Opcode::S_LOAD_DWORD => 1,
            Opcode::S_LOAD_DWORDX2 => 2,
            Opcode::S_LOAD_DWORDX4 => 4,
            Opcode::S_LOAD_DWORDX8 => 8,
            Opcode::S_LOAD_DWORDX16 => 16,
            _ => return self.unsupported(inst.mnemonic),
        };
        let mut regs = Vec::new();
        for i in 0..n {
            let a = addr + 4 * i as u64;
            let v = env.global.load_u32(a).ok_or(ExecError::MemoryFault {
                pc: self.cur_pc,
                addr: a,
                what: "scalar load",
            })?;
            self.ws(obs, sdata + i as u16, v);
            regs.push(Reg::Sgpr(sdata + i as u16));
        }
        self.timing.issue(Counter::Smem, self.cur_pc, regs);
        Ok(Step::Continue)
    }

    /// Reads `out.len()` bytes at a FLAT/GLOBAL address of `lane`: global
    /// memory, or (FLAT only) the LDS or private aperture.
    pub(crate) fn flat_read(
        &self,
        global: &GlobalMemory,
        lds: &Lds,
        flat: bool,
        lane: usize,
        addr: u64,
        out: &mut [u8],
    ) -> bool {
        if flat && (SHARED_APERTURE..SHARED_APERTURE + (1 << 32)).contains(&addr) {
            return lds.read((addr - SHARED_APERTURE) as u32, out);
        }
        if flat && (PRIVATE_APERTURE..PRIVATE_APERTURE + (1 << 32)).contains(&addr) {
            let off = (addr - PRIVATE_APERTURE) as usize;
            if off + out.len() > self.private_size {
                return false;
            }
            let at = lane * self.private_size + off;
            out.copy_from_slice(&self.private[at..at + out.len()]);
            return true;
        }
        global.load(addr, out)
    }
    pub(crate) fn flat_write(
        &mut self,
        global: &mut GlobalMemory,
        lds: &mut Lds,
        flat: bool,
        lane: usize,
        addr: u64,
        data: &[u8],
    ) -> bool {
        if flat && (SHARED_APERTURE..SHARED_APERTURE + (1 << 32)).contains(&addr) {
            return lds.write((addr - SHARED_APERTURE) as u32, data);
        }
        if flat && (PRIVATE_APERTURE..PRIVATE_APERTURE + (1 << 32)).contains(&addr) {
            let off = (addr - PRIVATE_APERTURE) as usize;
            if off + data.len() > self.private_size {
                return false;
            }
            let at = lane * self.private_size + off;
            self.private[at..at + data.len()].copy_from_slice(data);
            return true;
        }
        global.write(addr, data)
    }

    pub(crate) fn flat(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let m = inst.mnemonic;
        let global = inst.encoding == Encoding::Global;
        let offset: i64 = if global { ((w0 & 0x1FFF) << 19) as i32 as i64 >> 19 } else { (w0 & 0xFFF) as i64 };
        let glc = (w0 >> 16) & 1 != 0;
        let vaddr = (w1 & 0xFF) as u16;
        // gfx90a+: with the acc bit the data registers are AGPRs, here as
        // their index in the unified file.
        let data_base = if env.target.is_gfx90a_plus() && Self::agpr_data(inst) { self.acc_base as u16 } else { 0 };
        let vdata = ((w1 >> 8) & 0xFF) as u16 + data_base;
        let saddr = ((w1 >> 16) & 0x7F) as u16;
        let vdst = ((w1 >> 24) & 0xFF) as u16 + data_base;
        let use_saddr = global && saddr != 0x7F;
        let exec = self.exec();
        let counter = if global { Counter::Vm } else { Counter::Flat };
        let mut regs = Vec::new();
        let obs = &mut *env.obs;
        let sbase = if use_saddr { self.rs(obs, saddr) as u64 | (self.rs(obs, saddr + 1) as u64) << 32 } else { 0 };
        let sub = SubDword::of(inst.op);
        let (kind, size, dwords): (u8, usize, usize) = match (sub, inst.op) {
            (Some(s), _) => (if s.load { b'l' } else { b's' }, s.bytes, 1),
            (None, Opcode::FLAT_LOAD_DWORD | Opcode::GLOBAL_LOAD_DWORD) => (b'l', 4, 1),
            (None, Opcode::FLAT_LOAD_DWORDX2 | Opcode::GLOBAL_LOAD_DWORDX2) => (b'l', 8, 2),
            (None, Opcode::FLAT_LOAD_DWORDX3 | Opcode::GLOBAL_LOAD_DWORDX3) => (b'l', 12, 3),
            (None, Opcode::FLAT_LOAD_DWORDX4 | Opcode::GLOBAL_LOAD_DWORDX4) => (b'l', 16, 4),
            (None, Opcode::FLAT_STORE_DWORD | Opcode::GLOBAL_STORE_DWORD) => (b's', 4, 1),
            (None, Opcode::FLAT_STORE_DWORDX2 | Opcode::GLOBAL_STORE_DWORDX2) => (b's', 8, 2),
            (None, Opcode::FLAT_STORE_DWORDX3 | Opcode::GLOBAL_STORE_DWORDX3) => (b's', 12, 3),
            (None, Opcode::FLAT_STORE_DWORDX4 | Opcode::GLOBAL_STORE_DWORDX4) => (b's', 16, 4),
            // The float atomics are 32-bit here and stop as unsupported below.
            (None, op) if op.family() == Family::FlatAtomic => match AtomicOp::of_flat(inst.op) {
                Some((_, true)) => (b'a', 8, 2),
                _ => (b'a', 4, 1),
            },
            _ => return self.unsupported(m),
        };
        for lane in lanes(exec) {
            let addr = if use_saddr {
                sbase.wrapping_add(self.rv(obs, vaddr, lane) as u64)
            } else {
                self.rv(obs, vaddr, lane) as u64 | (self.rv(obs, vaddr + 1, lane) as u64) << 32
            };
            let addr = (addr as i64).wrapping_add(offset) as u64;
            let cur_pc = self.cur_pc;
            let fault = move |what| ExecError::MemoryFault { pc: cur_pc, addr, what };
            match kind {
                b'l' => {
                    let mut buf = [0u8; 16];
                    if !self.flat_read(env.global, env.lds, !global, lane, addr, &mut buf[..size]) {
                        return Err(fault("load"));
                    }
                    let word =
                        |i: usize| u32::from_le_bytes([buf[4 * i], buf[4 * i + 1], buf[4 * i + 2], buf[4 * i + 3]]);
                    if let Some(sub) = sub {
                        // d16 forms keep the other half of the register.
                        let old = self.vgpr[vdst as usize % NUM_VGPRS][lane];
                        self.wv(obs, vdst, lane, sub.loaded(&buf, old));
                    } else {
                        for i in 0..dwords {
                            self.wv(obs, vdst + i as u16, lane, word(i));
                        }
                    }
                }
                b's' => {
                    let mut buf = [0u8; 16];
                    for i in 0..dwords {
                        buf[4 * i..4 * i + 4].copy_from_slice(&self.rv(obs, vdata + i as u16, lane).to_le_bytes());
                    }
                    if let Some(sub) = sub {
                        let data = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
                        buf[..2].copy_from_slice(&sub.stored(data));
                    }
                    if !self.flat_write(env.global, env.lds, !global, lane, addr, &buf[..size]) {
                        return Err(fault("store"));
                    }
                }
                _ => {
                    let mut buf = [0u8; 8];
                    if !self.flat_read(env.global, env.lds, !global, lane, addr, &mut buf[..size]) {
                        return Err(fault("atomic"));
                    }
                    let old = u64::from_le_bytes(buf);
                    let data = self.rv(obs, vdata, lane) as u64
                        | if dwords == 2 { (self.rv(obs, vdata + 1, lane) as u64) << 32 } else { 0 };
                    let Some((atomic, _)) = AtomicOp::of_flat(inst.op) else { return self.unsupported(m) };
                    // Only a compare-swap reads the registers after its data.
                    let cmp = match (atomic, dwords) {
                        (AtomicOp::CmpSwap, 2) => {
                            self.rv(obs, vdata + 2, lane) as u64 | (self.rv(obs, vdata + 3, lane) as u64) << 32
                        }
                        (AtomicOp::CmpSwap, _) => self.rv(obs, vdata + 1, lane) as u64,
                        _ => 0,
                    };
                    let new = atomic.apply(old, data, cmp, dwords == 2);
                    self.flat_write(env.global, env.lds, !global, lane, addr, &new.to_le_bytes()[..size]);
                    if glc {
                        self.wv(obs, vdst, lane, old as u32);
                        if dwords == 2 {
                            self.wv(obs, vdst + 1, lane, (old >> 32) as u32);
                        }
                    }
                }
            }
        }
        if kind == b'l' || (kind == b'a' && glc) {
            for i in 0..dwords {
                regs.push(Reg::Vgpr(vdst + i as u16));
            }
        }
        self.timing.issue(counter, self.cur_pc, regs);
        Ok(Step::Continue)
    }

    /// Whether a scratch or buffer opcode loads, its size in bytes and dword count.
    pub(crate) fn mem_shape(op: Opcode) -> Option<(bool, usize, usize)> {
        if let Some(sub) = SubDword::of(op) {
            return Some((sub.load, sub.bytes, 1));
        }
        Some(match op {
            Opcode::SCRATCH_LOAD_DWORD | Opcode::BUFFER_LOAD_DWORD => (true, 4, 1),
            Opcode::SCRATCH_LOAD_DWORDX2 | Opcode::BUFFER_LOAD_DWORDX2 => (true, 8, 2),
            Opcode::SCRATCH_LOAD_DWORDX3 | Opcode::BUFFER_LOAD_DWORDX3 => (true, 12, 3),
            Opcode::SCRATCH_LOAD_DWORDX4 | Opcode::BUFFER_LOAD_DWORDX4 => (true, 16, 4),
            Opcode::SCRATCH_STORE_DWORD | Opcode::BUFFER_STORE_DWORD => (false, 4, 1),
            Opcode::SCRATCH_STORE_DWORDX2 | Opcode::BUFFER_STORE_DWORDX2 => (false, 8, 2),
            Opcode::SCRATCH_STORE_DWORDX3 | Opcode::BUFFER_STORE_DWORDX3 => (false, 12, 3),
            Opcode::SCRATCH_STORE_DWORDX4 | Opcode::BUFFER_STORE_DWORDX4 => (false, 16, 4),
            _ => return None,
        })
    }

    /// One lane's private access at byte offset `addr`.
    pub(crate) fn private_access(
        &mut self,
        obs: &mut Observations,
        op: Opcode,
        lane: usize,
        addr: u64,
        vdata: u16,
        vdst: u16,
    ) -> R<()> {
        let Some((load, size, dwords)) = Self::mem_shape(op) else { return self.unsupported(format!("private {op}")) };
        let lane_base = lane * self.private_size;
        let fault = ExecError::MemoryFault { pc: self.cur_pc, addr, what: "private (scratch) access" };
        if addr.checked_add(size as u64).is_none_or(|e| e > self.private_size as u64) {
            return Err(fault);
        }
        let at = lane_base + addr as usize;
        if load {
            let mut buf = [0u8; 16];
            buf[..size].copy_from_slice(&self.private[at..at + size]);
            let v = |i: usize| u32::from_le_bytes([buf[4 * i], buf[4 * i + 1], buf[4 * i + 2], buf[4 * i + 3]]);
            if let Some(sub) = SubDword::of(op) {
                // d16 forms keep the other half of the register.
                let old = self.vgpr[vdst as usize % NUM_VGPRS][lane];
                self.wv(obs, vdst, lane, sub.loaded(&buf, old));
            } else {
                for i in 0..dwords {
                    self.wv(obs, vdst + i as u16, lane, v(i));
                }
            }
        } else {
            let mut buf = [0u8; 16];
            for i in 0..dwords {
                buf[4 * i..4 * i + 4].copy_from_slice(&self.rv(obs, vdata + i as u16, lane).to_le_bytes());
            }
            if let Some(sub) = SubDword::of(op) {
                let data = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
                buf[..2].copy_from_slice(&sub.stored(data));
            }
            self.private[at..at + size].copy_from_slice(&buf[..size]);
        }
        Ok(())
    }

    /// scratch_* (FLAT segment 1): lane-private offset = VGPR (gfx940+: when
    /// SVE is set; before: when no SGPR is named) + SGPR + offset.
    pub(crate) fn scratch(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let obs = &mut *env.obs;
        let offset = ((w0 & 0x1FFF) << 19) as i32 as i64 >> 19;
        let vaddr = (w1 & 0xFF) as u16;
        let data_base = if env.target.is_gfx90a_plus() && Self::agpr_data(inst) { self.acc_base as u16 } else { 0 };
        let vdata = ((w1 >> 8) & 0xFF) as u16 + data_base;
        let saddr = ((w1 >> 16) & 0x7F) as u16;
        let vdst = ((w1 >> 24) & 0xFF) as u16 + data_base;
        let gfx940 = env.target.is_gfx940_plus();
        let use_v = if gfx940 { (w0 >> 13) & 1 != 0 } else { saddr == 0x7F };
        let sbase = if saddr != 0x7F { self.rs(obs, saddr) as i64 } else { 0 };
        let op = inst.op;
        let Some((load, _, dwords)) = Self::mem_shape(op) else { return self.unsupported(inst.mnemonic) };
        for lane in lanes(self.exec()) {
            let v = if use_v { self.rv(obs, vaddr, lane) as i64 } else { 0 };
            let addr = (sbase + v + offset) as u64;
            self.private_access(obs, op, lane, addr, vdata, vdst)?;
        }
        let regs = if load { (0..dwords as u16).map(|i| Reg::Vgpr(vdst + i)).collect() } else { Vec::new() };
        self.timing.issue(Counter::Vm, self.cur_pc, regs);
        Ok(Step::Continue)
    }

    /// buffer_* through the private segment buffer descriptor (the only
    /// buffer the emulator provides): lane-private offset = soffset / 64 +
    /// VGPR (offen) + offset. The private segment is swizzled (dword `d` of
    /// lane `l` at byte `256·d + 4·l` of the wave's area), so soffset, a
    /// byte offset into that area (the wave's scratch offset, or the stack
    /// pointer, which compilers keep scaled by the wave size), moves each
    /// lane by soffset / 64 bytes; an soffset that is not a multiple of 256
    /// (part of a dword row) stops as unsupported. Any other descriptor
    /// stops as unsupported.
    pub(crate) fn mubuf(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        if matches!(
            inst.op,
            Opcode::BUFFER_WBINVL1
                | Opcode::BUFFER_WBINVL1_VOL
                | Opcode::BUFFER_WBL2
                | Opcode::BUFFER_INVL2
                | Opcode::BUFFER_INV
        ) {
            // Cache write-back/invalidate: emulated memory is coherent. They
            // still count in vmcnt.
            self.timing.issue(Counter::Vm, self.cur_pc, Vec::new());
            return Ok(Step::Continue);
        }
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let obs = &mut *env.obs;
        let offset = (w0 & 0xFFF) as i64;
        let offen = (w0 >> 12) & 1 != 0;
        let idxen = (w0 >> 13) & 1 != 0;
        let lds = (w0 >> 16) & 1 != 0;
        let vaddr = (w1 & 0xFF) as u16;
        let vdata = ((w1 >> 8) & 0xFF) as u16;
        let srsrc = (((w1 >> 16) & 0x1F) * 4) as u16;
        let soffset = ((w1 >> 24) & 0xFF) as u16;
        if idxen || lds {
            return self.unsupported(format!("{} with idxen/lds", inst.mnemonic));
        }
        if self.rs(obs, srsrc + 3) != PRIVATE_BUFFER_MARK {
            return self.unsupported(format!("{} on a buffer other than the private segment", inst.mnemonic));
        }
        let so = self.ssrc(obs, soffset, None, Ty::B32)? as i64;
        if so % 256 != 0 {
            return self
                .unsupported(format!("{} with soffset {so:#x} (not whole dword rows of the wave)", inst.mnemonic));
        }
        let so = so / 64;
        let op = inst.op;
        let Some((load, _, dwords)) = Self::mem_shape(op) else { return self.unsupported(inst.mnemonic) };
        for lane in lanes(self.exec()) {
            let v = if offen { self.rv(obs, vaddr, lane) as i64 } else { 0 };
            self.private_access(obs, op, lane, (so + v + offset) as u64, vdata, vdata)?;
        }
        let regs = if load { (0..dwords as u16).map(|i| Reg::Vgpr(vdata + i)).collect() } else { Vec::new() };
        self.timing.issue(Counter::Vm, self.cur_pc, regs);
        Ok(Step::Continue)
    }

    /// gfx90a+: whether a memory instruction's data registers are AGPRs (its
    /// acc bit, as the ISA decoder's field table places it). FLAT, GLOBAL and
    /// SCRATCH execute it; DS and MUBUF stop as unsupported.
    pub(crate) fn agpr_data(inst: &Instruction) -> bool {
        use xfpx_amd_isa::{encoding::field, Encoding as E, Field};
        let (e, f) = match inst.encoding {
            Encoding::Ds => (E::Ds, Field::DsAcc),
            Encoding::Mubuf => (E::Mubuf, Field::BufAcc),
            _ => (E::Flat, Field::FlatAcc),
        };
        field(e, f, &inst.words) != 0
    }
}

/// Read-modify-write operations of the atomics (FLAT, GLOBAL and DS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    Add,
    Sub,
    Swap,
    CmpSwap,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
    Inc,
    Dec,
}

impl AtomicOp {
    /// The operation of a FLAT/GLOBAL atomic and whether it is 64-bit
    /// (`_x2`); `None` for the float atomics, which the emulator lacks.
    fn of_flat(op: Opcode) -> Option<(AtomicOp, bool)> {
        use Opcode as O;
        Some(match op {
            O::FLAT_ATOMIC_ADD | O::GLOBAL_ATOMIC_ADD => (AtomicOp::Add, false),
            O::FLAT_ATOMIC_ADD_X2 | O::GLOBAL_ATOMIC_ADD_X2 => (AtomicOp::Add, true),
            O::FLAT_ATOMIC_SUB | O::GLOBAL_ATOMIC_SUB => (AtomicOp::Sub, false),
            O::FLAT_ATOMIC_SUB_X2 | O::GLOBAL_ATOMIC_SUB_X2 => (AtomicOp::Sub, true),
            O::FLAT_ATOMIC_SWAP | O::GLOBAL_ATOMIC_SWAP => (AtomicOp::Swap, false),
            O::FLAT_ATOMIC_SWAP_X2 | O::GLOBAL_ATOMIC_SWAP_X2 => (AtomicOp::Swap, true),
            O::FLAT_ATOMIC_CMPSWAP | O::GLOBAL_ATOMIC_CMPSWAP => (AtomicOp::CmpSwap, false),
            O::FLAT_ATOMIC_CMPSWAP_X2 | O::GLOBAL_ATOMIC_CMPSWAP_X2 => (AtomicOp::CmpSwap, true),
            O::FLAT_ATOMIC_AND | O::GLOBAL_ATOMIC_AND => (AtomicOp::And, false),
            O::FLAT_ATOMIC_AND_X2 | O::GLOBAL_ATOMIC_AND_X2 => (AtomicOp::And, true),
            O::FLAT_ATOMIC_OR | O::GLOBAL_ATOMIC_OR => (AtomicOp::Or, false),
            O::FLAT_ATOMIC_OR_X2 | O::GLOBAL_ATOMIC_OR_X2 => (AtomicOp::Or, true),
            O::FLAT_ATOMIC_XOR | O::GLOBAL_ATOMIC_XOR => (AtomicOp::Xor, false),
            O::FLAT_ATOMIC_XOR_X2 | O::GLOBAL_ATOMIC_XOR_X2 => (AtomicOp::Xor, true),
            O::FLAT_ATOMIC_SMIN | O::GLOBAL_ATOMIC_SMIN => (AtomicOp::SMin, false),
            O::FLAT_ATOMIC_SMIN_X2 | O::GLOBAL_ATOMIC_SMIN_X2 => (AtomicOp::SMin, true),
            O::FLAT_ATOMIC_SMAX | O::GLOBAL_ATOMIC_SMAX => (AtomicOp::SMax, false),
            O::FLAT_ATOMIC_SMAX_X2 | O::GLOBAL_ATOMIC_SMAX_X2 => (AtomicOp::SMax, true),
            O::FLAT_ATOMIC_UMIN | O::GLOBAL_ATOMIC_UMIN => (AtomicOp::UMin, false),
            O::FLAT_ATOMIC_UMIN_X2 | O::GLOBAL_ATOMIC_UMIN_X2 => (AtomicOp::UMin, true),
            O::FLAT_ATOMIC_UMAX | O::GLOBAL_ATOMIC_UMAX => (AtomicOp::UMax, false),
            O::FLAT_ATOMIC_UMAX_X2 | O::GLOBAL_ATOMIC_UMAX_X2 => (AtomicOp::UMax, true),
            O::FLAT_ATOMIC_INC | O::GLOBAL_ATOMIC_INC => (AtomicOp::Inc, false),
            O::FLAT_ATOMIC_INC_X2 | O::GLOBAL_ATOMIC_INC_X2 => (AtomicOp::Inc, true),
            O::FLAT_ATOMIC_DEC | O::GLOBAL_ATOMIC_DEC => (AtomicOp::Dec, false),
            O::FLAT_ATOMIC_DEC_X2 | O::GLOBAL_ATOMIC_DEC_X2 => (AtomicOp::Dec, true),
            _ => return None,
        })
    }

    /// The new memory value from the `old` one, the `data` operand and (for
    /// compare-swap) the `cmp` operand, over 32 or 64 (`wide`) bits.
    pub(crate) fn apply(self, old: u64, data: u64, cmp: u64, wide: bool) -> u64 {
        let mask = if wide { u64::MAX } else { 0xFFFF_FFFF };
        let sx = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
        (match self {
            AtomicOp::Add => old.wrapping_add(data),
            AtomicOp::Sub => old.wrapping_sub(data),
            AtomicOp::Swap => data,
            AtomicOp::CmpSwap => {
                if old & mask == cmp & mask {
                    data
                } else {
                    old
                }
            }
            AtomicOp::And => old & data,
            AtomicOp::Or => old | data,
            AtomicOp::Xor => old ^ data,
            AtomicOp::UMin => old.min(data),
            AtomicOp::UMax => old.max(data),
            AtomicOp::SMin => {
                if sx(old) < sx(data) {
                    old
                } else {
                    data
                }
            }
            AtomicOp::SMax => {
                if sx(old) > sx(data) {
                    old
                } else {
                    data
                }
            }
            AtomicOp::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            AtomicOp::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
        }) & mask
    }
}
