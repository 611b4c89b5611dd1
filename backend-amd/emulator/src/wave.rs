//! One wave64: its registers and the execution of one instruction. Semantics
//! are keyed by the decoded mnemonic, grouped by encoding; anything the
//! emulator does not implement stops with [`ExecError::Unsupported`].

use crate::decode::Target;
use crate::decode::{Encoding, Instruction};
use crate::fpu::{self, flag, BinOp, Flags, FpMode};
use crate::matrix::{self, Generation};
use crate::memory::{GlobalMemory, Lds};
use crate::timing::{Counter, Hazard, HazardKind, Reg, Timing};
use std::collections::{BTreeMap, BTreeSet};
use xfpx_amd_isa::{Opcode, Operand as IsaOperand, RegFile};
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;

pub const VCC: u16 = 106;
pub const M0: u16 = 124;
pub const EXEC: u16 = 126;
pub const NUM_VGPRS: usize = 512;
/// Dword 3 of the private segment buffer descriptor the dispatcher hands to
/// kernels: MUBUF accesses through it reach the wave's private memory.
pub const PRIVATE_BUFFER_MARK: u32 = 0x5C5C_F00D;
/// FLAT apertures: generic addresses in [base, base + 4 GiB) reach the
/// workgroup's LDS or the lane's private memory (src_shared_base,
/// src_private_base read these).
pub const SHARED_APERTURE: u64 = 0x1000_0000_0000_0000;
pub const PRIVATE_APERTURE: u64 = 0x2000_0000_0000_0000;

fn aperture(code: u16) -> Option<u64> {
    Some(match code {
        235 => SHARED_APERTURE,
        236 => SHARED_APERTURE + 0xFFFF_FFFF,
        237 => PRIVATE_APERTURE,
        238 => PRIVATE_APERTURE + 0xFFFF_FFFF,
        _ => return None,
    })
}

/// Why a wave stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// An instruction (or operand form) the emulator does not implement.
    Unsupported { pc: u64, what: String },
    /// A memory access outside every allocation.
    MemoryFault { pc: u64, addr: u64, what: &'static str },
    /// Bytes at the PC that do not decode.
    Decode { pc: u64, what: String },
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Unsupported { pc, what } => write!(f, "Unsupported({what} at pc {pc:#x})"),
            ExecError::MemoryFault { pc, addr, what } => {
                write!(f, "memory fault at pc {pc:#x}: {what} of address {addr:#x}")
            }
            ExecError::Decode { pc, what } => write!(f, "cannot decode the instruction at pc {pc:#x}: {what}"),
        }
    }
}

/// Per-instruction observations of FP results (for reports): keyed by
/// (pc, kind, format), the number of wave executions that produced one.
#[derive(Debug, Clone, Default)]
pub struct Observations {
    pub results: BTreeMap<(u64, ExceptionKind, FpFormat), u64>,
    pub hazards: BTreeSet<Hazard>,
}

/// Shared state an instruction may touch besides its wave.
#[derive(Debug)]
pub struct Env<'a> {
    pub global: &'a mut GlobalMemory,
    pub lds: &'a mut Lds,
    pub obs: &'a mut Observations,
    /// The processor name (gfx90a, gfx942, ...): selects target-specific forms.
    pub target: &'a str,
}

/// What the scheduler must do after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Continue,
    Barrier,
    End,
}

/// The state of one wave.
#[derive(Debug, Clone)]
pub struct Wave {
    pub sgpr: [u32; 128],
    pub vgpr: Vec<[u32; 64]>,
    pub pc: u64,
    pub scc: bool,
    pub mode: u32,
    pub trapsts: u32,
    pub timing: Timing,
    pub instructions: u64,
    pub done: bool,
    pub at_barrier: bool,
    /// Private (scratch) memory: 64 lanes of `private_size` bytes each.
    pub private: Vec<u8>,
    pub private_size: usize,
    /// Per-lane FP flags of the current instruction (ORed into TRAPSTS).
    cur_pc: u64,
    /// Where AGPR a0 lies in `vgpr`: gfx908 has a separate file of 256 AGPRs
    /// (kept at 256..512 here); gfx90a and later one unified file of 512
    /// registers where AGPRs start at the descriptor's ACCUM_OFFSET.
    pub acc_base: usize,
    /// Wait states so far: one per instruction, plus `n` for `s_nop n`.
    pub wait_states: u64,
    /// Results of matrix instructions still being produced.
    matrix_pending: Vec<PendingMatrix>,
}

/// Registers a matrix instruction writes, and when they may be read.
#[derive(Debug, Clone, Copy)]
struct PendingMatrix {
    /// First register and count, as indices into `Wave::vgpr`.
    first: usize,
    count: usize,
    /// The wait-state count from which the result may be read.
    ready_at: u64,
    pc: u64,
}

/// VALU operand fields, unified over VOP1/VOP2/VOPC/VOP3/VOP3P.
#[derive(Debug, Clone, Copy, Default)]
struct Valu {
    dst: u16,
    src: [u16; 3],
    /// VOP3B scalar destination, VOPC destination (VCC in e32).
    sdst: u16,
    abs: u8,
    neg: u8,
    clamp: bool,
    omod: u8,
    op_sel: u8,
    op_sel_hi: u8,
    neg_hi: u8,
}

type R<T> = Result<T, ExecError>;

fn lanes(exec: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |l| exec >> l & 1 != 0)
}

fn f32_inline(code: u16) -> Option<u32> {
    Some(match code {
        240 => 0x3F00_0000,
        241 => 0xBF00_0000,
        242 => 0x3F80_0000,
        243 => 0xBF80_0000,
        244 => 0x4000_0000,
        245 => 0xC000_0000,
        246 => 0x4080_0000,
        247 => 0xC080_0000,
        248 => 0x3E22_F983,
        _ => return None,
    })
}
fn f64_inline(code: u16) -> Option<u64> {
    Some(match code {
        240 => 0x3FE0_0000_0000_0000,
        241 => 0xBFE0_0000_0000_0000,
        242 => 0x3FF0_0000_0000_0000,
        243 => 0xBFF0_0000_0000_0000,
        244 => 0x4000_0000_0000_0000,
        245 => 0xC000_0000_0000_0000,
        246 => 0x4010_0000_0000_0000,
        247 => 0xC010_0000_0000_0000,
        248 => 0x3FC4_5F30_6DC9_C882,
        _ => return None,
    })
}
fn f16_inline(code: u16) -> Option<u32> {
    Some(match code {
        240 => 0x3800,
        241 => 0xB800,
        242 => 0x3C00,
        243 => 0xBC00,
        244 => 0x4000,
        245 => 0xC000,
        246 => 0x4400,
        247 => 0xC400,
        248 => 0x3118,
        _ => return None,
    })
}

/// How an operand's inline float constants read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    B32,
    F16,
    F64,
    B64,
}

impl Wave {
    pub fn new(pc: u64, mode: u32) -> Wave {
        Wave {
            sgpr: [0; 128],
            vgpr: vec![[0; 64]; NUM_VGPRS],
            pc,
            scc: false,
            mode,
            trapsts: 0,
            timing: Timing::default(),
            instructions: 0,
            done: false,
            at_barrier: false,
            private: Vec::new(),
            private_size: 0,
            cur_pc: pc,
            acc_base: 256,
            wait_states: 0,
            matrix_pending: Vec::new(),
        }
    }

    pub fn exec(&self) -> u64 {
        self.sgpr[EXEC as usize] as u64 | (self.sgpr[EXEC as usize + 1] as u64) << 32
    }
    fn set_exec(&mut self, v: u64) {
        self.sgpr[EXEC as usize] = v as u32;
        self.sgpr[EXEC as usize + 1] = (v >> 32) as u32;
    }
    pub fn vcc(&self) -> u64 {
        self.sgpr[VCC as usize] as u64 | (self.sgpr[VCC as usize + 1] as u64) << 32
    }
    fn unsupported<T>(&self, what: impl Into<String>) -> R<T> {
        Err(ExecError::Unsupported { pc: self.cur_pc, what: what.into() })
    }

    fn hazard(&self, obs: &mut Observations, reg: Reg, kind: HazardKind) {
        if let Some(issued_pc) = self.timing.in_flight(reg) {
            obs.hazards.insert(Hazard { pc: self.cur_pc, reg, kind, issued_pc });
        }
    }

    // ------------------------------------------------------------ registers
    fn rs(&self, obs: &mut Observations, n: u16) -> u32 {
        self.hazard(obs, Reg::Sgpr(n), HazardKind::ReadInFlight);
        self.sgpr[n as usize & 127]
    }
    fn ws(&mut self, obs: &mut Observations, n: u16, v: u32) {
        self.hazard(obs, Reg::Sgpr(n), HazardKind::WriteInFlight);
        if (n as usize) < 128 {
            self.sgpr[n as usize] = v;
        }
    }
    fn ws64(&mut self, obs: &mut Observations, n: u16, v: u64) {
        self.ws(obs, n, v as u32);
        self.ws(obs, n + 1, (v >> 32) as u32);
    }
    fn rv(&self, obs: &mut Observations, n: u16, lane: usize) -> u32 {
        self.hazard(obs, Reg::Vgpr(n), HazardKind::ReadInFlight);
        if !self.matrix_pending.is_empty() {
            self.matrix_hazard(obs, n as usize % NUM_VGPRS, Reg::Vgpr(n));
        }
        self.vgpr[n as usize % NUM_VGPRS][lane]
    }
    fn wv(&mut self, obs: &mut Observations, n: u16, lane: usize, v: u32) {
        if lane == 0 || !self.timing.is_idle() {
            self.hazard(obs, Reg::Vgpr(n), HazardKind::WriteInFlight);
        }
        self.vgpr[n as usize % NUM_VGPRS][lane] = v;
    }

    /// A scalar operand code (SSRC) as 32 bits.
    fn ssrc(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty) -> R<u32> {
        Ok(match code {
            0..=127 => self.rs(obs, code),
            128..=192 => (code - 128) as u32,
            193..=208 => (-((code - 192) as i32)) as u32,
            240..=248 => match ty {
                Ty::F16 => f16_inline(code).unwrap_or(0),
                Ty::F64 | Ty::B64 => (f64_inline(code).unwrap_or(0) >> 32) as u32,
                Ty::B32 => f32_inline(code).unwrap_or(0),
            },
            235..=238 => (aperture(code).unwrap_or(0) >> 32) as u32,
            251 => (self.vcc() == 0) as u32,
            252 => (self.exec() == 0) as u32,
            253 => self.scc as u32,
            255 => match lit {
                Some(l) => l,
                None => return self.unsupported("literal operand without a literal"),
            },
            _ => return self.unsupported(format!("operand code {code}")),
        })
    }
    fn ssrc64(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty) -> R<u64> {
        Ok(match code {
            0..=127 => self.rs(obs, code) as u64 | (self.rs(obs, code + 1) as u64) << 32,
            128..=208 => self.ssrc(obs, code, lit, Ty::B32)? as i32 as i64 as u64,
            235..=238 => aperture(code).unwrap_or(0),
            240..=248 => match ty {
                Ty::F64 | Ty::B64 => f64_inline(code).unwrap_or(0),
                _ => f32_inline(code).unwrap_or(0) as u64,
            },
            255 => {
                let l = self.ssrc(obs, code, lit, ty)? as u64;
                if ty == Ty::F64 {
                    l << 32
                } else {
                    l
                }
            }
            _ => self.ssrc(obs, code, lit, ty)? as u64,
        })
    }
    /// A 9-bit vector operand as 32 bits in `lane`.
    fn vsrc(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty, lane: usize) -> R<u32> {
        if code >= 256 {
            return Ok(self.rv(obs, code - 256, lane));
        }
        self.ssrc(obs, code, lit, ty)
    }
    fn vsrc64(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty, lane: usize) -> R<u64> {
        if code >= 256 {
            return Ok(self.rv(obs, code - 256, lane) as u64 | (self.rv(obs, code - 255, lane) as u64) << 32);
        }
        self.ssrc64(obs, code, lit, ty)
    }

    fn fp_mode(&self) -> R<FpMode> {
        if self.mode & 0xF != 0 {
            return self.unsupported("rounding modes other than round-to-nearest-even");
        }
        Ok(FpMode::from_mode(self.mode))
    }

    /// Records FP flags: sticky in TRAPSTS unless DX10_CLAMP (MODE bit 8) is
    /// set, which before GFX12 keeps exceptions from being recorded.
    fn raise(&mut self, flags: Flags) {
        if self.mode & (1 << 8) == 0 {
            self.trapsts |= flags & 0x7F;
        }
    }

    // ------------------------------------------------------------- dispatch
    /// Executes `inst` (at `self.pc`).
    pub fn step(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        self.cur_pc = self.pc;
        self.instructions += 1;
        self.wait_states += 1;
        if inst.op == Opcode::S_NOP {
            self.wait_states += (inst.words[0] & 0xF) as u64;
        }
        if !self.matrix_pending.is_empty() {
            let now = self.wait_states;
            self.matrix_pending.retain(|p| p.ready_at > now);
        }
        let next = self.pc + inst.len as u64;
        self.pc = next;
        match inst.encoding {
            Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopk | Encoding::Sopc => self.scalar(inst, env),
            Encoding::Sopp => self.program(inst, env),
            Encoding::Smem => self.smem(inst, env),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => {
                self.valu(inst, env)?;
                Ok(Step::Continue)
            }
            Encoding::Ds | Encoding::Mubuf if env.target != "gfx908" && Self::agpr_data(inst) => {
                self.unsupported(format!("{} with AGPR data", inst.mnemonic))
            }
            Encoding::Ds => self.ds(inst, env),
            Encoding::Flat | Encoding::Global => self.flat(inst, env),
            Encoding::Scratch => self.scratch(inst, env),
            Encoding::Mubuf => self.mubuf(inst, env),
        }
    }

    // --------------------------------------------------------------- scalar
    fn scalar(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
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
                        self.scc = cmp_i(&m[7..9], a as i64, simm as i64);
                    }
                    Opcode::S_CMPK_EQ_U32
                    | Opcode::S_CMPK_LG_U32
                    | Opcode::S_CMPK_GT_U32
                    | Opcode::S_CMPK_GE_U32
                    | Opcode::S_CMPK_LT_U32
                    | Opcode::S_CMPK_LE_U32 => {
                        let a = self.rs(obs, sdst);
                        self.scc = cmp_i(&m[7..9], a as i64, imm as i64);
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
                let ty =
                    if m.ends_with("_b64") || m.ends_with("_i64") || m.ends_with("_u64") { Ty::B64 } else { Ty::B32 };
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
                if let Some(op) = m.strip_suffix("_saveexec_b64") {
                    let s = self.ssrc64(obs, c0, lit, Ty::B64)?;
                    let e = self.exec();
                    self.ws64(obs, sdst, e);
                    let r = logic64(&op[2..], s, e).ok_or(()).or_else(|_| self.unsupported(m))?;
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
                    if m.ends_with("_b64") {
                        let d = self.rs(obs, sdst) as u64 | (self.rs(obs, sdst + 1) as u64) << 32;
                        let v = if m.starts_with("s_bitset1") { d | 1 << (bit & 63) } else { d & !(1 << (bit & 63)) };
                        self.ws64(obs, sdst, v);
                    } else {
                        let d = self.rs(obs, sdst);
                        let v = if m.starts_with("s_bitset1") { d | 1 << (bit & 31) } else { d & !(1 << (bit & 31)) };
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
                if m.ends_with("_b64") && !m.starts_with("s_lsh") && !m.starts_with("s_ashr") && !m.starts_with("s_bfe")
                    || inst.op == Opcode::S_CSELECT_B64
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
                        let r = logic64(&m[2..m.len() - 4], a, b).ok_or(()).or_else(|_| self.unsupported(m))?;
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
                        self.scc = lt == m.contains("min");
                        if self.scc {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::S_MIN_U32 | Opcode::S_MAX_U32 => {
                        let lt = a < b;
                        self.scc = lt == m.contains("min");
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
                        let sh = (m.as_bytes()[6] - b'0') as u32;
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
                    _ => match logic32(&m[2..m.len() - 4], a, b) {
                        Some(r) if m.ends_with("_b32") => {
                            self.scc = r != 0;
                            r
                        }
                        _ => return self.unsupported(m),
                    },
                };
                self.ws(obs, sdst, r);
            }
            Encoding::Sopc => {
                let is64 = m.ends_with("_u64");
                if is64 {
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
                        _ if m.ends_with("_i32") => cmp_i(&m[6..8], a as i32 as i64, b as i32 as i64),
                        _ if m.ends_with("_u32") => cmp_i(&m[6..8], a as i64, b as i64),
                        _ => return self.unsupported(m),
                    };
                }
            }
            _ => return self.unsupported(m),
        }
        Ok(Step::Continue)
    }

    fn hwreg_read(&self, imm: u16) -> R<u32> {
        let (id, off, size) = (imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1);
        let v = match id {
            1 => self.mode,
            3 => self.trapsts,
            _ => return self.unsupported(format!("s_getreg of hardware register {id}")),
        };
        let mask = if size >= 32 { u32::MAX } else { (1u32 << size) - 1 };
        Ok((v >> off) & mask)
    }
    fn hwreg_write(&mut self, imm: u16, v: u32) -> R<()> {
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

    fn program(&mut self, inst: &Instruction, _env: &mut Env<'_>) -> R<Step> {
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

    // --------------------------------------------------------------- memory
    fn smem(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
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
            let v = env.global.read_u32(a).ok_or(ExecError::MemoryFault {
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
    fn flat_read(&self, global: &GlobalMemory, lds: &Lds, flat: bool, lane: usize, addr: u64, out: &mut [u8]) -> bool {
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
        global.read(addr, out)
    }
    fn flat_write(
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

    fn flat(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let m = inst.mnemonic;
        let global = inst.encoding == Encoding::Global;
        let offset: i64 = if global { ((w0 & 0x1FFF) << 19) as i32 as i64 >> 19 } else { (w0 & 0xFFF) as i64 };
        let glc = (w0 >> 16) & 1 != 0;
        let vaddr = (w1 & 0xFF) as u16;
        // gfx90a+: with the acc bit the data registers are AGPRs, here as
        // their index in the unified file.
        let data_base = if env.target != "gfx908" && Self::agpr_data(inst) { self.acc_base as u16 } else { 0 };
        let vdata = ((w1 >> 8) & 0xFF) as u16 + data_base;
        let saddr = ((w1 >> 16) & 0x7F) as u16;
        let vdst = ((w1 >> 24) & 0xFF) as u16 + data_base;
        let use_saddr = global && saddr != 0x7F;
        let exec = self.exec();
        let op = &m[m.find('_').map(|i| i + 1).unwrap_or(0)..];
        let counter = if global { Counter::Vm } else { Counter::Flat };
        let mut regs = Vec::new();
        let obs = &mut *env.obs;
        let sbase = if use_saddr { self.rs(obs, saddr) as u64 | (self.rs(obs, saddr + 1) as u64) << 32 } else { 0 };
        let (kind, size, dwords): (u8, usize, usize) = match inst.op {
            Opcode::FLAT_LOAD_UBYTE
            | Opcode::GLOBAL_LOAD_UBYTE
            | Opcode::FLAT_LOAD_SBYTE
            | Opcode::GLOBAL_LOAD_SBYTE => (b'l', 1, 1),
            Opcode::FLAT_LOAD_USHORT
            | Opcode::GLOBAL_LOAD_USHORT
            | Opcode::FLAT_LOAD_SSHORT
            | Opcode::GLOBAL_LOAD_SSHORT => (b'l', 2, 1),
            Opcode::FLAT_LOAD_DWORD | Opcode::GLOBAL_LOAD_DWORD => (b'l', 4, 1),
            Opcode::FLAT_LOAD_DWORDX2 | Opcode::GLOBAL_LOAD_DWORDX2 => (b'l', 8, 2),
            Opcode::FLAT_LOAD_DWORDX3 | Opcode::GLOBAL_LOAD_DWORDX3 => (b'l', 12, 3),
            Opcode::FLAT_LOAD_DWORDX4 | Opcode::GLOBAL_LOAD_DWORDX4 => (b'l', 16, 4),
            Opcode::FLAT_LOAD_SHORT_D16
            | Opcode::GLOBAL_LOAD_SHORT_D16
            | Opcode::FLAT_LOAD_SHORT_D16_HI
            | Opcode::GLOBAL_LOAD_SHORT_D16_HI => (b'l', 2, 1),
            Opcode::FLAT_STORE_BYTE | Opcode::GLOBAL_STORE_BYTE => (b's', 1, 1),
            Opcode::FLAT_STORE_SHORT | Opcode::GLOBAL_STORE_SHORT => (b's', 2, 1),
            Opcode::FLAT_STORE_DWORD | Opcode::GLOBAL_STORE_DWORD => (b's', 4, 1),
            Opcode::FLAT_STORE_DWORDX2 | Opcode::GLOBAL_STORE_DWORDX2 => (b's', 8, 2),
            Opcode::FLAT_STORE_DWORDX3 | Opcode::GLOBAL_STORE_DWORDX3 => (b's', 12, 3),
            Opcode::FLAT_STORE_DWORDX4 | Opcode::GLOBAL_STORE_DWORDX4 => (b's', 16, 4),
            _ if op.starts_with("atomic_") => {
                (b'a', if op.ends_with("_x2") { 8 } else { 4 }, if op.ends_with("_x2") { 2 } else { 1 })
            }
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
                    match inst.op {
                        Opcode::FLAT_LOAD_UBYTE | Opcode::GLOBAL_LOAD_UBYTE => self.wv(obs, vdst, lane, buf[0] as u32),
                        Opcode::FLAT_LOAD_SBYTE | Opcode::GLOBAL_LOAD_SBYTE => {
                            self.wv(obs, vdst, lane, buf[0] as i8 as i32 as u32)
                        }
                        Opcode::FLAT_LOAD_USHORT | Opcode::GLOBAL_LOAD_USHORT => {
                            self.wv(obs, vdst, lane, u16::from_le_bytes([buf[0], buf[1]]) as u32)
                        }
                        Opcode::FLAT_LOAD_SSHORT | Opcode::GLOBAL_LOAD_SSHORT => {
                            self.wv(obs, vdst, lane, i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32)
                        }
                        Opcode::FLAT_LOAD_SHORT_D16 | Opcode::GLOBAL_LOAD_SHORT_D16 => {
                            let old = self.vgpr[vdst as usize][lane];
                            self.wv(obs, vdst, lane, (old & 0xFFFF_0000) | u16::from_le_bytes([buf[0], buf[1]]) as u32);
                        }
                        Opcode::FLAT_LOAD_SHORT_D16_HI | Opcode::GLOBAL_LOAD_SHORT_D16_HI => {
                            let old = self.vgpr[vdst as usize][lane];
                            self.wv(
                                obs,
                                vdst,
                                lane,
                                (old & 0xFFFF) | (u16::from_le_bytes([buf[0], buf[1]]) as u32) << 16,
                            );
                        }
                        _ => {
                            for i in 0..dwords {
                                self.wv(obs, vdst + i as u16, lane, word(i));
                            }
                        }
                    }
                }
                b's' => {
                    let mut buf = [0u8; 16];
                    for i in 0..dwords {
                        buf[4 * i..4 * i + 4].copy_from_slice(&self.rv(obs, vdata + i as u16, lane).to_le_bytes());
                    }
                    if !self.flat_write(env.global, env.lds, !global, lane, addr, &buf[..size]) {
                        return Err(fault("store"));
                    }
                }
                _ => {
                    let name = &op[7..];
                    let name = name.strip_suffix("_x2").unwrap_or(name);
                    let mut buf = [0u8; 8];
                    if !self.flat_read(env.global, env.lds, !global, lane, addr, &mut buf[..size]) {
                        return Err(fault("atomic"));
                    }
                    let old = u64::from_le_bytes(buf);
                    let data = self.rv(obs, vdata, lane) as u64
                        | if dwords == 2 { (self.rv(obs, vdata + 1, lane) as u64) << 32 } else { 0 };
                    let cmp = if dwords == 2 {
                        self.rv(obs, vdata + 2, lane) as u64 | (self.rv(obs, vdata + 3, lane) as u64) << 32
                    } else {
                        self.rv(obs, vdata + 1, lane) as u64
                    };
                    let new = match atomic(name, old, data, cmp, dwords == 2) {
                        Some(v) => v,
                        None => return self.unsupported(m),
                    };
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
    fn mem_shape(op: Opcode) -> Option<(bool, usize, usize)> {
        Some(match op {
            Opcode::SCRATCH_LOAD_DWORD | Opcode::BUFFER_LOAD_DWORD => (true, 4, 1),
            Opcode::SCRATCH_LOAD_DWORDX2 | Opcode::BUFFER_LOAD_DWORDX2 => (true, 8, 2),
            Opcode::SCRATCH_LOAD_DWORDX3 | Opcode::BUFFER_LOAD_DWORDX3 => (true, 12, 3),
            Opcode::SCRATCH_LOAD_DWORDX4 | Opcode::BUFFER_LOAD_DWORDX4 => (true, 16, 4),
            Opcode::SCRATCH_STORE_DWORD | Opcode::BUFFER_STORE_DWORD => (false, 4, 1),
            Opcode::SCRATCH_STORE_DWORDX2 | Opcode::BUFFER_STORE_DWORDX2 => (false, 8, 2),
            Opcode::SCRATCH_STORE_DWORDX3 | Opcode::BUFFER_STORE_DWORDX3 => (false, 12, 3),
            Opcode::SCRATCH_STORE_DWORDX4 | Opcode::BUFFER_STORE_DWORDX4 => (false, 16, 4),
            Opcode::SCRATCH_LOAD_UBYTE
            | Opcode::BUFFER_LOAD_UBYTE
            | Opcode::SCRATCH_LOAD_SBYTE
            | Opcode::BUFFER_LOAD_SBYTE => (true, 1, 1),
            Opcode::SCRATCH_LOAD_USHORT
            | Opcode::BUFFER_LOAD_USHORT
            | Opcode::SCRATCH_LOAD_SSHORT
            | Opcode::BUFFER_LOAD_SSHORT => (true, 2, 1),
            Opcode::SCRATCH_STORE_BYTE | Opcode::BUFFER_STORE_BYTE => (false, 1, 1),
            Opcode::SCRATCH_STORE_SHORT | Opcode::BUFFER_STORE_SHORT => (false, 2, 1),
            _ => return None,
        })
    }

    /// One lane's private access at byte offset `addr`.
    fn private_access(
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
            match op {
                Opcode::SCRATCH_LOAD_UBYTE | Opcode::BUFFER_LOAD_UBYTE => self.wv(obs, vdst, lane, buf[0] as u32),
                Opcode::SCRATCH_LOAD_SBYTE | Opcode::BUFFER_LOAD_SBYTE => {
                    self.wv(obs, vdst, lane, buf[0] as i8 as i32 as u32)
                }
                Opcode::SCRATCH_LOAD_USHORT | Opcode::BUFFER_LOAD_USHORT => {
                    self.wv(obs, vdst, lane, u16::from_le_bytes([buf[0], buf[1]]) as u32)
                }
                Opcode::SCRATCH_LOAD_SSHORT | Opcode::BUFFER_LOAD_SSHORT => {
                    self.wv(obs, vdst, lane, i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32)
                }
                _ => {
                    for i in 0..dwords {
                        self.wv(obs, vdst + i as u16, lane, v(i));
                    }
                }
            }
        } else {
            let mut buf = [0u8; 16];
            for i in 0..dwords {
                buf[4 * i..4 * i + 4].copy_from_slice(&self.rv(obs, vdata + i as u16, lane).to_le_bytes());
            }
            self.private[at..at + size].copy_from_slice(&buf[..size]);
        }
        Ok(())
    }

    /// scratch_* (FLAT segment 1): lane-private offset = VGPR (gfx940+: when
    /// SVE is set; before: when no SGPR is named) + SGPR + offset.
    fn scratch(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let obs = &mut *env.obs;
        let offset = ((w0 & 0x1FFF) << 19) as i32 as i64 >> 19;
        let vaddr = (w1 & 0xFF) as u16;
        let data_base = if env.target != "gfx908" && Self::agpr_data(inst) { self.acc_base as u16 } else { 0 };
        let vdata = ((w1 >> 8) & 0xFF) as u16 + data_base;
        let saddr = ((w1 >> 16) & 0x7F) as u16;
        let vdst = ((w1 >> 24) & 0xFF) as u16 + data_base;
        let gfx940 = matches!(env.target, "gfx940" | "gfx941" | "gfx942" | "gfx950");
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
    /// buffer the emulator provides): lane-private offset = soffset + VGPR
    /// (offen) + offset. Any other descriptor stops as unsupported.
    fn mubuf(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
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

    fn ds(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<Step> {
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
        let op = &m[3..];
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
                    let b64 = op.ends_with("b64");
                    let unit = if b64 { 8 } else { 4 } * if op.contains("st64") { 64 } else { 1 };
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
                Opcode::DS_WRITE_B16 | Opcode::DS_WRITE_B8 => {
                    let a = base.wrapping_add(off16);
                    let v = self.rv(obs, d0, lane).to_le_bytes();
                    let n = if inst.op == Opcode::DS_WRITE_B16 { 2 } else { 1 };
                    if !env.lds.write(a, &v[..n]) {
                        return Err(fault(a));
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
                    let b64 = op.ends_with("b64");
                    let n = if b64 { 2 } else { 1 };
                    let unit = if b64 { 8 } else { 4 } * if op.contains("st64") { 64 } else { 1 };
                    for (k, off) in [off0, off1].into_iter().enumerate() {
                        for i in 0..n {
                            let v = rd(env.lds, base.wrapping_add(off * unit + 4 * i))?;
                            self.wv(obs, vdst + (k as u16 * n as u16 + i as u16), lane, v);
                        }
                    }
                }
                Opcode::DS_READ_U16 | Opcode::DS_READ_I16 | Opcode::DS_READ_U8 | Opcode::DS_READ_I8 => {
                    let a = base.wrapping_add(off16);
                    let mut b = [0u8; 2];
                    let n = if op.ends_with("16") { 2 } else { 1 };
                    if !env.lds.read(a, &mut b[..n]) {
                        return Err(fault(a));
                    }
                    let v = match inst.op {
                        Opcode::DS_READ_U16 => u16::from_le_bytes(b) as u32,
                        Opcode::DS_READ_I16 => i16::from_le_bytes(b) as i32 as u32,
                        Opcode::DS_READ_U8 => b[0] as u32,
                        _ => b[0] as i8 as i32 as u32,
                    };
                    self.wv(obs, vdst, lane, v);
                }
                _ => {
                    // Atomics: ds_<op>_u32 (no return) and ds_<op>_rtn_u32.
                    let (name, rtn) = match op
                        .strip_suffix("_u32")
                        .or_else(|| op.strip_suffix("_b32"))
                        .or_else(|| op.strip_suffix("_i32"))
                    {
                        Some(n) => match n.strip_suffix("_rtn") {
                            Some(n) => (n, true),
                            None => (n, false),
                        },
                        None => return self.unsupported(m),
                    };
                    let a = base.wrapping_add(off16);
                    let old = rd(env.lds, a)? as u64;
                    let data = self.rv(obs, d0, lane) as u64;
                    let cmp = self.rv(obs, d1, lane) as u64;
                    let signed = op.ends_with("_i32");
                    let name = match (name, signed) {
                        ("min", true) => "smin",
                        ("max", true) => "smax",
                        ("min", false) => "umin",
                        ("max", false) => "umax",
                        (n, _) => n,
                    };
                    let Some(new) = atomic(name, old, data, cmp, false) else { return self.unsupported(m) };
                    env.lds.write(a, &(new as u32).to_le_bytes());
                    if rtn {
                        self.wv(obs, vdst, lane, old as u32);
                    }
                }
            }
        }
        if op.starts_with("read") || op.contains("_rtn") {
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

    // ----------------------------------------------------------------- VALU
    fn valu_fields(&self, inst: &Instruction) -> Valu {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let mut f = Valu::default();
        match inst.encoding {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if !inst.vop3 => {
                f.src[0] = (w0 & 0x1FF) as u16;
                f.src[1] = 256 + ((w0 >> 9) & 0xFF) as u16;
                f.dst = ((w0 >> 17) & 0xFF) as u16;
                f.sdst = VCC;
                f.src[2] = VCC; // carry-in / mask of e32 forms
            }
            Encoding::Vop3p => {
                f.dst = (w0 & 0xFF) as u16;
                f.neg_hi = ((w0 >> 8) & 7) as u8;
                f.op_sel = ((w0 >> 11) & 7) as u8;
                f.clamp = (w0 >> 15) & 1 != 0;
                f.src = [(w1 & 0x1FF) as u16, ((w1 >> 9) & 0x1FF) as u16, ((w1 >> 18) & 0x1FF) as u16];
                f.op_sel_hi = (((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2) as u8;
                f.neg = ((w1 >> 29) & 7) as u8;
            }
            _ => {
                f.dst = (w0 & 0xFF) as u16;
                f.abs = ((w0 >> 8) & 7) as u8;
                f.sdst = ((w0 >> 8) & 0x7F) as u16;
                f.clamp = (w0 >> 15) & 1 != 0;
                f.src = [(w1 & 0x1FF) as u16, ((w1 >> 9) & 0x1FF) as u16, ((w1 >> 18) & 0x1FF) as u16];
                f.omod = ((w1 >> 27) & 3) as u8;
                f.neg = ((w1 >> 29) & 7) as u8;
                if inst.encoding == Encoding::Vopc {
                    f.sdst = (w0 & 0xFF) as u16;
                }
            }
        }
        f
    }

    fn observe(&mut self, obs: &mut Observations, format: FpFormat, kinds: u8) {
        for (bit, kind) in
            [(1u8, ExceptionKind::Nan), (2, ExceptionKind::Inf), (4, ExceptionKind::Sub), (8, ExceptionKind::Div0)]
        {
            if kinds & bit != 0 {
                *obs.results.entry((self.cur_pc, kind, format)).or_insert(0) += 1;
            }
        }
    }

    fn valu(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<()> {
        let f = self.valu_fields(inst);
        let m = inst.mnemonic;
        let base = m.strip_suffix("_e64").or_else(|| m.strip_suffix("_e32")).unwrap_or(m);
        if f.omod != 0 {
            return self.unsupported(format!("{m} with an output modifier"));
        }
        if let Some(rest) = base.strip_prefix("v_cmp_") {
            return self.vcmp(inst, &f, rest, false, env.obs);
        }
        if let Some(rest) = base.strip_prefix("v_cmpx_") {
            return self.vcmp(inst, &f, rest, true, env.obs);
        }
        if base.starts_with("v_mfma") || base.starts_with("v_smfmac") || base.starts_with("v_accvgpr_") {
            return self.matrix(inst, env);
        }
        if base.starts_with("v_fma_mix") {
            return self.fma_mix(inst, &f, env.obs);
        }
        if base.starts_with("v_pk_") {
            return self.vop3p(inst, &f, env.obs);
        }
        match inst.op {
            Opcode::V_READFIRSTLANE_B32 => {
                let e = self.exec();
                let lane = if e == 0 { 0 } else { e.trailing_zeros() as usize };
                let v = self.vsrc(env.obs, f.src[0], inst.literal, Ty::B32, lane)?;
                self.ws(env.obs, f.dst, v);
                return Ok(());
            }
            Opcode::V_READLANE_B32 => {
                let lane = self.ssrc(env.obs, f.src[1], inst.literal, Ty::B32)? as usize & 63;
                let v = self.vsrc(env.obs, f.src[0], inst.literal, Ty::B32, lane)?;
                self.ws(env.obs, f.dst, v);
                return Ok(());
            }
            Opcode::V_WRITELANE_B32 => {
                let v = self.ssrc(env.obs, f.src[0], inst.literal, Ty::B32)?;
                let lane = self.ssrc(env.obs, f.src[1], inst.literal, Ty::B32)? as usize & 63;
                self.wv(env.obs, f.dst, lane, v);
                return Ok(());
            }
            _ => {}
        }
        if matches!(inst.op, Opcode::V_CVT_I32_F64_E32 | Opcode::V_CVT_U32_F64_E32) {
            let exec = self.exec();
            let mut fl = 0;
            for lane in lanes(exec) {
                let x = f64::from_bits(self.fp_src64(env.obs, &f, 0, inst.literal, lane)?);
                if x.is_nan() {
                    fl |= flag::INVALID;
                }
                let r = if inst.op == Opcode::V_CVT_I32_F64_E32 { x as i32 as u32 } else { x as u32 };
                self.wv(env.obs, f.dst, lane, r);
            }
            self.raise(fl);
            return Ok(());
        }
        if let Some(op) = int_op(inst.op) {
            return self.vint(inst, &f, op, env.obs);
        }
        self.vfloat(inst, &f, base, env.obs)
    }

    /// Lane-wise integer VALU.
    fn vint(&mut self, inst: &Instruction, f: &Valu, op: IntOp, obs: &mut Observations) -> R<()> {
        let exec = self.exec();
        let lit = inst.literal;
        let e32 = !inst.vop3 && inst.encoding != Encoding::Vop3;
        let mut carry_out = 0u64;
        for lane in lanes(exec) {
            let s = |w: &Self, obs: &mut Observations, i: usize| w.vsrc(obs, f.src[i], lit, Ty::B32, lane);
            let mask_in = |w: &Self, obs: &mut Observations| -> R<bool> {
                let m = if e32 { w.vcc() } else { w.ssrc64(obs, f.src[2], lit, Ty::B64)? };
                Ok(m >> lane & 1 != 0)
            };
            let r: u64 = match op {
                IntOp::Mov => s(self, obs, 0)? as u64,
                IntOp::Bin(g) => g(s(self, obs, 0)?, s(self, obs, 1)?) as u64,
                IntOp::Tri(g) => g(s(self, obs, 0)?, s(self, obs, 1)?, s(self, obs, 2)?) as u64,
                IntOp::Un(g) => g(s(self, obs, 0)?) as u64,
                IntOp::Lane(g) => g(s(self, obs, 0)?, s(self, obs, 1)?, lane) as u64,
                IntOp::Mov64 => {
                    let v = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    self.wv(obs, f.dst, lane, v as u32);
                    self.wv(obs, f.dst + 1, lane, (v >> 32) as u32);
                    continue;
                }
                IntOp::Cndmask => {
                    if mask_in(self, obs)? {
                        s(self, obs, 1)? as u64
                    } else {
                        s(self, obs, 0)? as u64
                    }
                }
                IntOp::AddCo | IntOp::SubCo | IntOp::SubrevCo | IntOp::Addc | IntOp::Subb | IntOp::Subbrev => {
                    let (a, b) = (s(self, obs, 0)? as u64, s(self, obs, 1)? as u64);
                    let cin = match op {
                        IntOp::Addc | IntOp::Subb | IntOp::Subbrev => mask_in(self, obs)? as u64,
                        _ => 0,
                    };
                    let (a, b) = if matches!(op, IntOp::SubrevCo | IntOp::Subbrev) { (b, a) } else { (a, b) };
                    let (r, c) = match op {
                        IntOp::AddCo | IntOp::Addc => {
                            let t = a + b + cin;
                            (t as u32, t >> 32 != 0)
                        }
                        _ => (a.wrapping_sub(b).wrapping_sub(cin) as u32, b + cin > a),
                    };
                    if c {
                        carry_out |= 1 << lane;
                    }
                    r as u64
                }
                IntOp::MadU64U32 | IntOp::MadI64I32 => {
                    let (a, b) = (s(self, obs, 0)?, s(self, obs, 1)?);
                    let c = self.vsrc64(obs, f.src[2], lit, Ty::B64, lane)?;
                    let p = if op == IntOp::MadU64U32 {
                        a as u128 * b as u128
                    } else {
                        (a as i32 as i128 * b as i32 as i128) as u128
                    };
                    let t = p.wrapping_add(if op == IntOp::MadU64U32 { c as u128 } else { c as i64 as i128 as u128 });
                    let carry = if op == IntOp::MadU64U32 { t >> 64 != 0 } else { false };
                    if carry {
                        carry_out |= 1 << lane;
                    }
                    self.wv(obs, f.dst, lane, t as u32);
                    self.wv(obs, f.dst + 1, lane, (t >> 32) as u32);
                    continue;
                }
                IntOp::Shift64(g) => {
                    let a = s(self, obs, 0)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let r = g(b, a);
                    self.wv(obs, f.dst, lane, r as u32);
                    self.wv(obs, f.dst + 1, lane, (r >> 32) as u32);
                    continue;
                }
                IntOp::LshlAdd64 => {
                    let a = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    let sh = s(self, obs, 1)? & 63;
                    let c = self.vsrc64(obs, f.src[2], lit, Ty::B64, lane)?;
                    let r = (a << sh).wrapping_add(c);
                    self.wv(obs, f.dst, lane, r as u32);
                    self.wv(obs, f.dst + 1, lane, (r >> 32) as u32);
                    continue;
                }
            };
            self.wv(obs, f.dst, lane, r as u32);
        }
        if matches!(
            op,
            IntOp::AddCo
                | IntOp::SubCo
                | IntOp::SubrevCo
                | IntOp::Addc
                | IntOp::Subb
                | IntOp::Subbrev
                | IntOp::MadU64U32
                | IntOp::MadI64I32
        ) {
            let sdst = if e32 { VCC } else { f.sdst };
            self.ws64(obs, sdst, carry_out);
        }
        Ok(())
    }

    fn vcmp(&mut self, inst: &Instruction, f: &Valu, rest: &str, x: bool, obs: &mut Observations) -> R<()> {
        let (cond, ty) = rest.rsplit_once('_').ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?;
        let lit = inst.literal;
        let exec = self.exec();
        let mut out = 0u64;
        let mode = self.fp_mode()?;
        let mut flags = 0;
        for lane in lanes(exec) {
            let r = match ty {
                "f32" => {
                    let a = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                    if cond == "class" {
                        let mask = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)?;
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
                "f64" => {
                    let a = f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?);
                    if cond == "class" {
                        let mask = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)?;
                        mask >> fpu::class64(a) & 1 != 0
                    } else {
                        let b = f64::from_bits(self.fp_src64(obs, f, 1, lit, lane)?);
                        cmp_f(cond, a, b, &mut flags).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                    }
                }
                "f16" => {
                    let a = fpu::f16_to_f64(self.fp_src16(obs, f, 0, lit, lane)? as u16);
                    if cond == "class" {
                        let mask = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)?;
                        let h = self.fp_src16(obs, f, 0, lit, lane)? as u16;
                        let snan = a.is_nan() && h & 0x200 == 0;
                        let sub = h & 0x7C00 == 0 && h & 0x3FF != 0;
                        mask >> fpu::class_bit64(a, snan, sub) & 1 != 0
                    } else {
                        let b = fpu::f16_to_f64(self.fp_src16(obs, f, 1, lit, lane)? as u16);
                        cmp_f(cond, a, b, &mut flags).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                    }
                }
                "i32" | "u32" => {
                    let a = self.vsrc(obs, f.src[0], lit, Ty::B32, lane)?;
                    let b = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)?;
                    let (a, b) = if ty == "i32" { (a as i32 as i64, b as i32 as i64) } else { (a as i64, b as i64) };
                    cmp_int(cond, a as i128, b as i128).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                "i64" | "u64" => {
                    let a = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let (a, b) =
                        if ty == "i64" { (a as i64 as i128, b as i64 as i128) } else { (a as i128, b as i128) };
                    cmp_int(cond, a, b).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                "i16" | "u16" => {
                    let a = self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? as u16;
                    let b = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)? as u16;
                    let (a, b) =
                        if ty == "i16" { (a as i16 as i128, b as i16 as i128) } else { (a as i128, b as i128) };
                    cmp_int(cond, a, b).ok_or(()).or_else(|_| self.unsupported(inst.mnemonic))?
                }
                _ => return self.unsupported(inst.mnemonic),
            };
            if r {
                out |= 1 << lane;
            }
        }
        self.raise(flags);
        let e32 = !inst.vop3;
        self.ws64(obs, if e32 { VCC } else { f.sdst }, out);
        if x {
            self.set_exec(out);
        }
        Ok(())
    }

    /// FP source with VOP3 abs/neg modifiers applied.
    fn fp_src32(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u32> {
        let mut v = self.vsrc(obs, f.src[i], lit, Ty::B32, lane)?;
        if f.abs >> i & 1 != 0 {
            v &= 0x7FFF_FFFF;
        }
        if f.neg >> i & 1 != 0 {
            v ^= 0x8000_0000;
        }
        Ok(v)
    }
    fn fp_src64(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u64> {
        let mut v = self.vsrc64(obs, f.src[i], lit, Ty::F64, lane)?;
        if f.abs >> i & 1 != 0 {
            v &= !(1 << 63);
        }
        if f.neg >> i & 1 != 0 {
            v ^= 1 << 63;
        }
        Ok(v)
    }
    fn fp_src16(&self, obs: &mut Observations, f: &Valu, i: usize, lit: Option<u32>, lane: usize) -> R<u32> {
        let mut v = self.vsrc(obs, f.src[i], lit, Ty::F16, lane)? & 0xFFFF;
        if f.abs >> i & 1 != 0 {
            v &= 0x7FFF;
        }
        if f.neg >> i & 1 != 0 {
            v ^= 0x8000;
        }
        Ok(v)
    }

    /// Lane-wise floating-point VALU.
    fn vfloat(&mut self, inst: &Instruction, f: &Valu, base: &str, obs: &mut Observations) -> R<()> {
        let m = inst.mnemonic;
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let Some(kind) = float_kind(base) else { return self.unsupported(m) };
        let e32 = !inst.vop3 && inst.encoding != Encoding::Vop3;
        let mut vcc_out = 0u64;
        let mut kinds = 0u8;
        let mut all_flags = 0;
        let format = match kind.1 {
            W::F16 => FpFormat::F16,
            W::F32 => FpFormat::F32,
            W::F64 => FpFormat::F64,
        };
        for lane in lanes(exec) {
            let mut fl: Flags = 0;
            let mut classify_div0 = false;
            let res: u64 = match kind.1 {
                W::F32 => {
                    let a = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<f32> {
                        Ok(f32::from_bits(w.fp_src32(obs, f, i, lit, lane)?))
                    };
                    let r: f32 = match inst.op {
                        Opcode::V_ADD_F32_E32 => fpu::op32(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUB_F32_E32 => fpu::op32(BinOp::Sub, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUBREV_F32_E32 => fpu::op32(BinOp::Sub, src(self, obs, 1)?, a, mode, &mut fl),
                        Opcode::V_MUL_F32_E32 => fpu::op32(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F32 => fpu::fma32(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        // v_mad*: unfused (product rounded) and always flushing
                        // f32 denormals, whatever MODE says.
                        Opcode::V_MAD_F32 | Opcode::V_MADMK_F32 | Opcode::V_MADAK_F32 => {
                            let flush = FpMode { denorm32: 0, ..mode };
                            let k = f32::from_bits(lit.unwrap_or(0));
                            let (b, c) = match inst.op {
                                Opcode::V_MAD_F32 => (src(self, obs, 1)?, src(self, obs, 2)?),
                                Opcode::V_MADMK_F32 => (k, src(self, obs, 1)?),
                                _ => (src(self, obs, 1)?, k),
                            };
                            let p = fpu::op32(BinOp::Mul, a, b, flush, &mut fl);
                            fpu::op32(BinOp::Add, p, c, flush, &mut fl)
                        }
                        Opcode::V_FMAC_F32_E32 => {
                            let c = f32::from_bits(self.rv(obs, f.dst, lane));
                            fpu::fma32(a, src(self, obs, 1)?, c, mode, &mut fl)
                        }
                        Opcode::V_FMAMK_F32 => {
                            fpu::fma32(a, f32::from_bits(lit.unwrap_or(0)), src(self, obs, 1)?, mode, &mut fl)
                        }
                        Opcode::V_FMAAK_F32 => {
                            fpu::fma32(a, src(self, obs, 1)?, f32::from_bits(lit.unwrap_or(0)), mode, &mut fl)
                        }
                        Opcode::V_MIN_F32_E32 => fpu::minmax32(a, src(self, obs, 1)?, false, mode, &mut fl),
                        Opcode::V_MAX_F32_E32 => fpu::minmax32(a, src(self, obs, 1)?, true, mode, &mut fl),
                        Opcode::V_MAX3_F32 | Opcode::V_MIN3_F32 => {
                            let mx = inst.op == Opcode::V_MAX3_F32;
                            let t = fpu::minmax32(a, src(self, obs, 1)?, mx, mode, &mut fl);
                            fpu::minmax32(t, src(self, obs, 2)?, mx, mode, &mut fl)
                        }
                        Opcode::V_MED3_F32 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let (a, b, c) =
                                (fpu::in32(a, mode, &mut fl), fpu::in32(b, mode, &mut fl), fpu::in32(c, mode, &mut fl));
                            if a.is_nan() || b.is_nan() || c.is_nan() {
                                let t = fpu::minmax32(a, b, false, mode, &mut fl);
                                fpu::minmax32(t, c, false, mode, &mut fl)
                            } else {
                                let mx = a.max(b).max(c);
                                if mx == a {
                                    b.max(c)
                                } else if mx == b {
                                    a.max(c)
                                } else {
                                    a.max(b)
                                }
                            }
                        }
                        // Revolutions: sin(2*pi*x), valid for |x| <= 256.
                        Opcode::V_SIN_F32_E32 | Opcode::V_COS_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl) as f64;
                            if x.is_infinite() {
                                fl |= flag::INVALID;
                            }
                            let t = 2.0 * std::f64::consts::PI * x;
                            let r = if inst.op == Opcode::V_SIN_F32_E32 { t.sin() } else { t.cos() };
                            fpu::round32(r, false, x.is_nan(), false, mode, &mut fl)
                        }
                        Opcode::V_FREXP_MANT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x.is_nan() || x.is_infinite() {
                                f32::NAN
                            } else if x == 0.0 {
                                x
                            } else {
                                let e = (x.abs() as f64).log2().floor() as i32 + 1;
                                let m = x as f64 * (2f64).powi(-e);
                                // Guard against log2 rounding at exact powers of two.
                                let m = if m.abs() >= 1.0 {
                                    m / 2.0
                                } else if m.abs() < 0.5 {
                                    m * 2.0
                                } else {
                                    m
                                };
                                m as f32
                            }
                        }
                        Opcode::V_TRUNC_F32_E32 => fpu::in32(a, mode, &mut fl).trunc(),
                        Opcode::V_FLOOR_F32_E32 => fpu::in32(a, mode, &mut fl).floor(),
                        Opcode::V_CEIL_F32_E32 => fpu::in32(a, mode, &mut fl).ceil(),
                        Opcode::V_RNDNE_F32_E32 => fpu::in32(a, mode, &mut fl).round_ties_even(),
                        Opcode::V_FRACT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x.is_infinite() {
                                f32::NAN
                            } else {
                                (x - x.floor()).min(f32::from_bits(0x3F7F_FFFF))
                            }
                        }
                        Opcode::V_RCP_F32_E32 | Opcode::V_RCP_IFLAG_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= if inst.op == Opcode::V_RCP_IFLAG_F32_E32 { flag::INT_DIV0 } else { flag::DIV0 };
                                classify_div0 = true;
                            }
                            let r = (1.0 / x as f64) as f32;
                            let exact = x == 0.0 || x.is_infinite() || r as f64 * x as f64 == 1.0;
                            fpu::round32(r as f64, exact, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_RSQ_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::round32(1.0 / (x as f64).sqrt(), false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_SQRT_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            let r = (x as f64).sqrt();
                            fpu::round32(r, r * r == x as f64, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_EXP_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            fpu::round32((x as f64).exp2(), false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_LOG_F32_E32 => {
                            let x = fpu::in32(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                            }
                            fpu::round32(
                                (x as f64).log2(),
                                false,
                                x.is_nan(),
                                x.is_infinite() || x == 0.0,
                                mode,
                                &mut fl,
                            )
                        }
                        Opcode::V_LDEXP_F32 => {
                            let e = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)? as i32;
                            let x = fpu::in32(a, mode, &mut fl);
                            fpu::round32(
                                x as f64 * (2f64).powi(e.clamp(-400, 400)),
                                false,
                                x.is_nan(),
                                x.is_infinite(),
                                mode,
                                &mut fl,
                            )
                        }
                        Opcode::V_CVT_F32_I32_E32 => (self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? as i32) as f32,
                        Opcode::V_CVT_F32_U32_E32 => self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? as f32,
                        Opcode::V_CVT_F32_F64_E32 => {
                            let x = f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?);
                            fpu::round32(x, false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_CVT_F32_F16_E32 => {
                            fpu::f16_to_f64(self.fp_src16(obs, f, 0, lit, lane)? as u16) as f32
                        }
                        Opcode::V_CVT_F32_UBYTE0_E32 => (self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? & 0xFF) as f32,
                        Opcode::V_DIV_SCALE_F32 => {
                            let (r, v) = fpu::div_scale32(a, src(self, obs, 1)?, src(self, obs, 2)?);
                            if v {
                                vcc_out |= 1 << lane;
                            }
                            r
                        }
                        Opcode::V_DIV_FMAS_F32 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let scale = if self.vcc() >> lane & 1 != 0 {
                                if fpu::exp32(c) > 127 {
                                    64
                                } else {
                                    -64
                                }
                            } else {
                                0
                            };
                            fpu::fma32_scaled(a, b, c, scale, mode, &mut fl)
                        }
                        Opcode::V_DIV_FIXUP_F32 => {
                            let (den, num) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            if den == 0.0 && num != 0.0 && !num.is_nan() {
                                classify_div0 = true;
                            }
                            let q = fpu::div_fixup(
                                a as f64,
                                den as f64,
                                num as f64,
                                -150,
                                (fpu::exp32(num), fpu::exp32(den)),
                                255,
                                &mut fl,
                            ) as f32;
                            // Output denormals flush as MODE says.
                            if q.is_subnormal() && mode.denorm32 & 2 == 0 {
                                0.0f32.copysign(q)
                            } else {
                                q
                            }
                        }
                        _ => return self.unsupported(m),
                    };
                    // Clamp to [0, 1]; with DX10_CLAMP a NaN clamps to 0.
                    let r = match (f.clamp, r.is_nan()) {
                        (true, false) => r.clamp(0.0, 1.0),
                        (true, true) if self.mode & (1 << 8) != 0 => 0.0,
                        _ => r,
                    };
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), classify_div0);
                    r.to_bits() as u64
                }
                W::F64 => {
                    // Conversions to f64 read a 32-bit source: no 64-bit read.
                    let a = if matches!(
                        inst.op,
                        Opcode::V_CVT_F64_I32_E32 | Opcode::V_CVT_F64_U32_E32 | Opcode::V_CVT_F64_F32_E32
                    ) {
                        0.0
                    } else {
                        f64::from_bits(self.fp_src64(obs, f, 0, lit, lane)?)
                    };
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<f64> {
                        Ok(f64::from_bits(w.fp_src64(obs, f, i, lit, lane)?))
                    };
                    let r: f64 = match inst.op {
                        Opcode::V_ADD_F64 => fpu::op64(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_MUL_F64 => fpu::op64(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F64 => fpu::fma64(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        Opcode::V_FMAC_F64_E32 => {
                            let c = f64::from_bits(
                                self.rv(obs, f.dst, lane) as u64 | (self.rv(obs, f.dst + 1, lane) as u64) << 32,
                            );
                            fpu::fma64(a, src(self, obs, 1)?, c, mode, &mut fl)
                        }
                        Opcode::V_MIN_F64 => fpu::minmax64(a, src(self, obs, 1)?, false, mode, &mut fl),
                        Opcode::V_MAX_F64 => fpu::minmax64(a, src(self, obs, 1)?, true, mode, &mut fl),
                        Opcode::V_TRUNC_F64_E32 => fpu::in64(a, mode, &mut fl).trunc(),
                        Opcode::V_FLOOR_F64_E32 => fpu::in64(a, mode, &mut fl).floor(),
                        Opcode::V_CEIL_F64_E32 => fpu::in64(a, mode, &mut fl).ceil(),
                        Opcode::V_RNDNE_F64_E32 => fpu::in64(a, mode, &mut fl).round_ties_even(),
                        Opcode::V_FRACT_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x.is_infinite() {
                                f64::NAN
                            } else {
                                (x - x.floor()).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
                            }
                        }
                        Opcode::V_RCP_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::finish64(1.0 / x, false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_RSQ_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            if x == 0.0 {
                                fl |= flag::DIV0;
                                classify_div0 = true;
                            }
                            fpu::finish64(1.0 / x.sqrt(), false, x.is_nan(), true, mode, &mut fl)
                        }
                        Opcode::V_SQRT_F64_E32 => {
                            let x = fpu::in64(a, mode, &mut fl);
                            fpu::finish64(x.sqrt(), false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_LDEXP_F64 => {
                            let e = self.vsrc(obs, f.src[1], lit, Ty::B32, lane)? as i32;
                            let x = fpu::in64(a, mode, &mut fl);
                            let e = e.clamp(-2200, 2200);
                            // Two steps keep intermediate scale factors finite.
                            let r = x * (2f64).powi(e / 2) * (2f64).powi(e - e / 2);
                            fpu::finish64(r, true, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_CVT_F64_I32_E32 => (self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? as i32) as f64,
                        Opcode::V_CVT_F64_U32_E32 => self.vsrc(obs, f.src[0], lit, Ty::B32, lane)? as f64,
                        Opcode::V_CVT_F64_F32_E32 => {
                            let x = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                            fpu::in32(x, mode, &mut fl) as f64
                        }
                        Opcode::V_DIV_SCALE_F64 => {
                            let (r, v) = fpu::div_scale64(a, src(self, obs, 1)?, src(self, obs, 2)?);
                            if v {
                                vcc_out |= 1 << lane;
                            }
                            r
                        }
                        Opcode::V_DIV_FMAS_F64 => {
                            let (b, c) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            let r = fpu::fma64(a, b, c, mode, &mut fl);
                            if self.vcc() >> lane & 1 != 0 {
                                r * (2f64).powi(if fpu::exp64(c) > 1023 { 128 } else { -128 })
                            } else {
                                r
                            }
                        }
                        Opcode::V_DIV_FIXUP_F64 => {
                            let (den, num) = (src(self, obs, 1)?, src(self, obs, 2)?);
                            if den == 0.0 && num != 0.0 && !num.is_nan() {
                                classify_div0 = true;
                            }
                            let q =
                                fpu::div_fixup(a, den, num, -1075, (fpu::exp64(num), fpu::exp64(den)), 2047, &mut fl);
                            if q.is_subnormal() && mode.denorm16_64 & 2 == 0 {
                                0.0f64.copysign(q)
                            } else {
                                q
                            }
                        }
                        _ => return self.unsupported(m),
                    };
                    let r = match (f.clamp, r.is_nan()) {
                        (true, false) => r.clamp(0.0, 1.0),
                        (true, true) if self.mode & (1 << 8) != 0 => 0.0,
                        _ => r,
                    };
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), classify_div0);
                    r.to_bits()
                }
                W::F16 => {
                    let a = self.fp_src16(obs, f, 0, lit, lane)? as u16;
                    let src = |w: &Self, obs: &mut Observations, i: usize| -> R<u16> {
                        Ok(w.fp_src16(obs, f, i, lit, lane)? as u16)
                    };
                    let r: u16 = match inst.op {
                        Opcode::V_ADD_F16_E32 => fpu::op16(BinOp::Add, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUB_F16_E32 => fpu::op16(BinOp::Sub, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_SUBREV_F16_E32 => fpu::op16(BinOp::Sub, src(self, obs, 1)?, a, mode, &mut fl),
                        Opcode::V_MUL_F16_E32 => fpu::op16(BinOp::Mul, a, src(self, obs, 1)?, mode, &mut fl),
                        Opcode::V_FMA_F16 => fpu::fma16(a, src(self, obs, 1)?, src(self, obs, 2)?, mode, &mut fl),
                        Opcode::V_CVT_F16_F32_E32 => {
                            let x = f32::from_bits(self.fp_src32(obs, f, 0, lit, lane)?);
                            fpu::round16(x as f64, false, x.is_nan(), x.is_infinite(), mode, &mut fl)
                        }
                        Opcode::V_PACK_B32_F16 => {
                            let lo = self.fp_src16(obs, f, 0, lit, lane)?;
                            let hi = self.fp_src16(obs, f, 1, lit, lane)?;
                            let lo = if f.op_sel & 1 != 0 {
                                self.vsrc(obs, f.src[0], lit, Ty::F16, lane)? >> 16
                            } else {
                                lo
                            };
                            let hi = if f.op_sel & 2 != 0 {
                                self.vsrc(obs, f.src[1], lit, Ty::F16, lane)? >> 16
                            } else {
                                hi
                            };
                            self.wv(obs, f.dst, lane, (lo & 0xFFFF) | (hi & 0xFFFF) << 16);
                            continue;
                        }
                        _ => return self.unsupported(m),
                    };
                    let h = r & 0x7FFF;
                    kinds |= classify(h > 0x7C00, h == 0x7C00, h != 0 && h < 0x400, false);
                    r as u64
                }
            };
            all_flags |= fl;
            // Result width follows the destination type of the mnemonic.
            let dst_w = dst_width(base, kind.1);
            match dst_w {
                64 => {
                    self.wv(obs, f.dst, lane, res as u32);
                    self.wv(obs, f.dst + 1, lane, (res >> 32) as u32);
                }
                16 => {
                    // gfx9 f16 VALU zeroes the high half of the destination.
                    self.wv(obs, f.dst, lane, res as u32 & 0xFFFF);
                }
                _ => self.wv(obs, f.dst, lane, res as u32),
            }
        }
        if base.starts_with("v_div_scale") {
            let sdst = if e32 { VCC } else { f.sdst };
            self.ws64(obs, sdst, vcc_out);
        }
        self.raise(all_flags);
        if kinds != 0 && (!base.starts_with("v_cvt_") || base.starts_with("v_cvt_f")) {
            self.observe(obs, format, kinds);
        }
        Ok(())
    }

    /// `v_fma_mix_f32` / `v_fma_mixlo_f16` / `v_fma_mixhi_f16`: sources are
    /// f32, or f16 halves where op_sel_hi says so (op_sel picks the half); neg
    /// and (in neg_hi) abs modifiers; the FMA rounds to f32, and the f16 forms
    /// then convert, writing one half and keeping the other.
    #[allow(clippy::needless_range_loop)]
    fn fma_mix(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let mut all = 0;
        let mut kinds = 0u8;
        for lane in lanes(exec) {
            let mut v = [0f32; 3];
            for i in 0..3 {
                let f16 = f.op_sel_hi >> i & 1 != 0;
                let raw = self.vsrc(obs, f.src[i], lit, if f16 { Ty::F16 } else { Ty::B32 }, lane)?;
                let mut x = if f16 {
                    let h = if f.op_sel >> i & 1 != 0 { raw >> 16 } else { raw } as u16;
                    fpu::f16_to_f64(h) as f32
                } else {
                    f32::from_bits(raw)
                };
                if f.neg_hi >> i & 1 != 0 {
                    x = x.abs();
                }
                if f.neg >> i & 1 != 0 {
                    x = -x;
                }
                v[i] = x;
            }
            let mut fl = 0;
            let r = fpu::fma32(v[0], v[1], v[2], mode, &mut fl);
            let out = match inst.op {
                Opcode::V_FMA_MIX_F32 => {
                    kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), false);
                    r.to_bits()
                }
                _ => {
                    let h = fpu::round16(r as f64, false, r.is_nan(), r.is_infinite(), mode, &mut fl);
                    let a = h & 0x7FFF;
                    kinds |= classify(a > 0x7C00, a == 0x7C00, a != 0 && a < 0x400, false);
                    let old = self.rv(obs, f.dst, lane);
                    if inst.op == Opcode::V_FMA_MIXLO_F16 {
                        (old & 0xFFFF_0000) | h as u32
                    } else {
                        (old & 0xFFFF) | (h as u32) << 16
                    }
                }
            };
            all |= fl;
            self.wv(obs, f.dst, lane, out);
        }
        self.raise(all);
        if kinds != 0 {
            self.observe(obs, if inst.op == Opcode::V_FMA_MIX_F32 { FpFormat::F32 } else { FpFormat::F16 }, kinds);
        }
        Ok(())
    }

    #[allow(clippy::needless_range_loop)]
    fn vop3p(&mut self, inst: &Instruction, f: &Valu, obs: &mut Observations) -> R<()> {
        let lit = inst.literal;
        let mode = self.fp_mode()?;
        let exec = self.exec();
        let mut all = 0;
        let mut kinds = 0u8;
        let format;
        match inst.op {
            Opcode::V_PK_MOV_B32 => {
                // Low dword from S0, high dword from S1; op_sel picks each one's half.
                for lane in lanes(exec) {
                    let a = self.vsrc64(obs, f.src[0], lit, Ty::B64, lane)?;
                    let b = self.vsrc64(obs, f.src[1], lit, Ty::B64, lane)?;
                    let lo = if f.op_sel & 1 != 0 { (a >> 32) as u32 } else { a as u32 };
                    let hi = if f.op_sel & 2 != 0 { (b >> 32) as u32 } else { b as u32 };
                    self.wv(obs, f.dst, lane, lo);
                    self.wv(obs, f.dst + 1, lane, hi);
                }
                return Ok(());
            }
            Opcode::V_PK_ADD_F16 | Opcode::V_PK_MUL_F16 | Opcode::V_PK_FMA_F16 => {
                format = FpFormat::F16x2;
                let nsrc = if inst.op == Opcode::V_PK_FMA_F16 { 3 } else { 2 };
                for lane in lanes(exec) {
                    let mut lo_hi = [[0u16; 3]; 2];
                    for i in 0..nsrc {
                        let v = self.vsrc(obs, f.src[i], lit, Ty::F16, lane)?;
                        let lo = if f.op_sel >> i & 1 != 0 { v >> 16 } else { v } as u16;
                        let hi = if f.op_sel_hi >> i & 1 != 0 { v >> 16 } else { v } as u16;
                        lo_hi[0][i] = lo ^ if f.neg >> i & 1 != 0 { 0x8000 } else { 0 };
                        lo_hi[1][i] = hi ^ if f.neg_hi >> i & 1 != 0 { 0x8000 } else { 0 };
                    }
                    let mut out = [0u16; 2];
                    for h in 0..2 {
                        let s = lo_hi[h];
                        let mut fl = 0;
                        out[h] = match inst.op {
                            Opcode::V_PK_ADD_F16 => fpu::op16(BinOp::Add, s[0], s[1], mode, &mut fl),
                            Opcode::V_PK_MUL_F16 => fpu::op16(BinOp::Mul, s[0], s[1], mode, &mut fl),
                            _ => fpu::fma16(s[0], s[1], s[2], mode, &mut fl),
                        };
                        all |= fl;
                        let a = out[h] & 0x7FFF;
                        kinds |= classify(a > 0x7C00, a == 0x7C00, a != 0 && a < 0x400, false);
                    }
                    self.wv(obs, f.dst, lane, out[0] as u32 | (out[1] as u32) << 16);
                }
            }
            Opcode::V_PK_ADD_F32 | Opcode::V_PK_MUL_F32 | Opcode::V_PK_FMA_F32 => {
                format = FpFormat::F32;
                let nsrc = if inst.op == Opcode::V_PK_FMA_F32 { 3 } else { 2 };
                for lane in lanes(exec) {
                    let mut v = [[0f32; 3]; 2];
                    for i in 0..nsrc {
                        let x = self.vsrc64(obs, f.src[i], lit, Ty::B64, lane)?;
                        let pick = |sel: bool| if sel { (x >> 32) as u32 } else { x as u32 };
                        let lo = pick(f.op_sel >> i & 1 != 0) ^ if f.neg >> i & 1 != 0 { 0x8000_0000 } else { 0 };
                        let hi = pick(f.op_sel_hi >> i & 1 != 0) ^ if f.neg_hi >> i & 1 != 0 { 0x8000_0000 } else { 0 };
                        v[0][i] = f32::from_bits(lo);
                        v[1][i] = f32::from_bits(hi);
                    }
                    let mut out = [0u32; 2];
                    for h in 0..2 {
                        let s = v[h];
                        let mut fl = 0;
                        let r = match inst.op {
                            Opcode::V_PK_ADD_F32 => fpu::op32(BinOp::Add, s[0], s[1], mode, &mut fl),
                            Opcode::V_PK_MUL_F32 => fpu::op32(BinOp::Mul, s[0], s[1], mode, &mut fl),
                            _ => fpu::fma32(s[0], s[1], s[2], mode, &mut fl),
                        };
                        all |= fl;
                        kinds |= classify(r.is_nan(), r.is_infinite(), r.is_subnormal(), false);
                        out[h] = r.to_bits();
                    }
                    self.wv(obs, f.dst, lane, out[0]);
                    self.wv(obs, f.dst + 1, lane, out[1]);
                }
            }
            _ => return self.unsupported(inst.mnemonic),
        }
        self.raise(all);
        if kinds != 0 {
            self.observe(obs, format, kinds);
        }
        Ok(())
    }
}

// ------------------------------------------------------- matrix and AGPRs
impl Wave {
    /// gfx90a+: whether a memory instruction's data registers are AGPRs (its
    /// acc bit, as the ISA decoder's field table places it). FLAT, GLOBAL and
    /// SCRATCH execute it; DS and MUBUF stop as unsupported.
    fn agpr_data(inst: &Instruction) -> bool {
        use xfpx_amd_isa::{encoding::field, Encoding as E, Field};
        let (e, f) = match inst.encoding {
            Encoding::Ds => (E::Ds, Field::DsAcc),
            Encoding::Mubuf => (E::Mubuf, Field::BufAcc),
            _ => (E::Flat, Field::FlatAcc),
        };
        field(e, f, &inst.words) != 0
    }

    /// A matrix instruction's result read too soon is a hazard.
    fn matrix_hazard(&self, obs: &mut Observations, index: usize, reg: Reg) {
        let now = self.wait_states;
        if let Some(p) =
            self.matrix_pending.iter().find(|p| p.ready_at > now && (p.first..p.first + p.count).contains(&index))
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
    fn vector_slot(&self, file: RegFile, index: u16) -> R<usize> {
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
    fn matrix_operand(&self, obs: &mut Observations, op: &IsaOperand, r: usize, lane: usize, wide: bool) -> R<u32> {
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

    fn write_vector(&mut self, obs: &mut Observations, file: RegFile, index: u16, lane: usize, v: u32) -> R<()> {
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
    fn matrix(&mut self, inst: &Instruction, env: &mut Env<'_>) -> R<()> {
        let obs = &mut *env.obs;
        let Some(target) = Target::from_name(env.target) else {
            return self.unsupported(format!("{} on target {}", inst.mnemonic, env.target));
        };
        let bytes: Vec<u8> = inst.words[..inst.len as usize / 4].iter().flat_map(|w| w.to_le_bytes()).collect();
        let full = match xfpx_amd_isa::decode(target, &bytes) {
            Ok(i) => i,
            Err(e) => return Err(ExecError::Decode { pc: self.cur_pc, what: e.to_string() }),
        };
        let ops: Vec<IsaOperand> = full.operands.iter().map(|o| o.operand.clone()).collect();
        let exec = self.exec();
        let m = inst.mnemonic;
        if m.starts_with("v_accvgpr_") {
            let (Some(IsaOperand::Reg(dst)), Some(src)) = (ops.first(), ops.get(1)) else {
                return self.unsupported(format!("{m} operands"));
            };
            for lane in lanes(exec) {
                let v = self.matrix_operand(obs, src, 0, lane, false)?;
                self.write_vector(obs, dst.file, dst.first, lane, v)?;
            }
            return Ok(());
        }
        let Some(shape) = matrix::shape(inst.op) else {
            return self.unsupported(format!("{m} (unsupported matrix instruction)"));
        };
        let generation = match target {
            Target::Gfx908 => Generation::Gfx908,
            Target::Gfx90a => Generation::Gfx90a,
            Target::Gfx942 => Generation::Gfx940,
            Target::Gfx950 => Generation::Gfx950,
        };
        if shape.passes(generation) == 0 {
            return self.unsupported(format!("{m} on {}", env.target));
        }
        let mods: Vec<String> = full
            .modifiers
            .iter()
            .filter(|x| !matches!(x, xfpx_amd_isa::Modifier::Comment(_)))
            .map(|x| x.to_string())
            .collect();
        if !mods.is_empty() {
            return self.unsupported(format!("{m} with {}", mods.join(" ")));
        }
        if exec != u64::MAX {
            return self.unsupported(format!("{m} with EXEC {exec:#x} (only a full EXEC mask is modelled)"));
        }
        let (Some(IsaOperand::Reg(dst)), Some(a_op), Some(b_op), Some(c_op)) =
            (ops.first(), ops.get(1), ops.get(2), ops.get(3))
        else {
            return self.unsupported(format!("{m} operands"));
        };
        let dst_first = self.vector_slot(dst.file, dst.first)?;
        let wide_c = shape.output == matrix::MatrixElem::F64;
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
        let a = gather(self, obs, a_op, shape.input_regs(), shape.input == matrix::MatrixElem::F64)?;
        let b = gather(self, obs, b_op, shape.input_regs(), shape.input == matrix::MatrixElem::F64)?;
        let c = gather(self, obs, c_op, shape.output_regs(), wide_c)?;
        let (d, flags) = matrix::multiply(shape, &a, &b, &c, self.fp_mode()?);
        let mut kinds = 0u8;
        for (r, reg) in d.iter().enumerate() {
            for (lane, &v) in reg.iter().enumerate() {
                self.write_vector(obs, dst.file, dst.first + r as u16, lane, v)?;
                match shape.output {
                    matrix::MatrixElem::F32 => {
                        let x = f32::from_bits(v);
                        kinds |= classify(x.is_nan(), x.is_infinite(), x.is_subnormal(), false);
                    }
                    matrix::MatrixElem::F64 if r % 2 == 0 => {
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
            ready_at: self.wait_states + shape.result_wait_states(generation) + 1,
            pc: self.cur_pc,
        });
        Ok(())
    }
}

/// The high dword of the f64 element whose low dword is register `r`.
fn reg_hi(d: &[[u32; 64]], r: usize, lane: usize) -> u32 {
    d[r + 1][lane]
}

fn classify(nan: bool, inf: bool, sub: bool, div0: bool) -> u8 {
    let mut k = 0;
    if nan {
        k |= 1;
    }
    if inf {
        k |= if div0 { 8 } else { 2 };
    }
    if sub {
        k |= 4;
    }
    k
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum W {
    F16,
    F32,
    F64,
}

/// The source width of an FP mnemonic (by its type suffix or conversion source).
fn float_kind(base: &str) -> Option<((), W)> {
    let w = if let Some(rest) = base.strip_prefix("v_cvt_") {
        match rest.rsplit('_').next()? {
            "f16" => W::F16,
            "f64" => W::F64,
            _ => W::F32,
        }
    } else if base.ends_with("_f16") || base == "v_pack_b32_f16" {
        W::F16
    } else if base.ends_with("_f64") {
        W::F64
    } else if base.ends_with("_f32") {
        W::F32
    } else {
        return None;
    };
    // Conversions produce the destination type: route by destination.
    let w = match base {
        "v_cvt_f32_i32" | "v_cvt_f32_u32" | "v_cvt_f32_f64" | "v_cvt_f32_f16" | "v_cvt_f32_ubyte0" => W::F32,
        "v_cvt_f64_i32" | "v_cvt_f64_u32" | "v_cvt_f64_f32" => W::F64,
        "v_cvt_f16_f32" => W::F16,
        _ => w,
    };
    Some(((), w))
}

fn dst_width(base: &str, w: W) -> u32 {
    match w {
        W::F64 => 64,
        W::F16 if base != "v_pack_b32_f16" => 16,
        _ => 32,
    }
}

fn cmp_i(cond: &str, a: i64, b: i64) -> bool {
    match cond {
        "eq" => a == b,
        "lg" | "ne" => a != b,
        "gt" => a > b,
        "ge" => a >= b,
        "lt" => a < b,
        "le" => a <= b,
        _ => false,
    }
}

fn cmp_int(cond: &str, a: i128, b: i128) -> Option<bool> {
    Some(match cond {
        "f" => false,
        "t" => true,
        "eq" => a == b,
        "ne" | "lg" => a != b,
        "gt" => a > b,
        "ge" => a >= b,
        "lt" => a < b,
        "le" => a <= b,
        _ => return None,
    })
}

#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::nonminimal_bool, clippy::double_comparisons)]
/// FP comparisons; signalling ones (all but eq/neq/u/o/...) raise INVALID on NaN.
fn cmp_f(cond: &str, a: f64, b: f64, flags: &mut Flags) -> Option<bool> {
    let un = a.is_nan() || b.is_nan();
    if un && a.is_nan() && a.to_bits() & 0x0008_0000_0000_0000 == 0 {
        *flags |= flag::INVALID;
    }
    Some(match cond {
        "f" => false,
        "tru" => true,
        "lt" => a < b,
        "eq" => a == b,
        "le" => a <= b,
        "gt" => a > b,
        "lg" => a < b || a > b,
        "ge" => a >= b,
        "o" => !un,
        "u" => un,
        "nge" => !(a >= b),
        "nlg" => !(a < b || a > b),
        "ngt" => !(a > b),
        "nle" => !(a <= b),
        "neq" => a != b,
        "nlt" => !(a < b),
        _ => return None,
    })
}

fn logic64(op: &str, a: u64, b: u64) -> Option<u64> {
    Some(match op {
        "and" => a & b,
        "or" => a | b,
        "xor" => a ^ b,
        "andn2" => a & !b,
        "orn2" => a | !b,
        "nand" => !(a & b),
        "nor" => !(a | b),
        "xnor" => !(a ^ b),
        _ => return None,
    })
}
fn logic32(op: &str, a: u32, b: u32) -> Option<u32> {
    logic64(op, a as u64, b as u64).map(|v| v as u32)
}

fn bfe(a: u32, off: u32, width: u32, signed: bool) -> u32 {
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

fn atomic(op: &str, old: u64, data: u64, cmp: u64, wide: bool) -> Option<u64> {
    let mask = if wide { u64::MAX } else { 0xFFFF_FFFF };
    let sx = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
    Some(
        match op {
            "add" => old.wrapping_add(data),
            "sub" => old.wrapping_sub(data),
            "swap" => data,
            "cmpswap" => {
                if old & mask == cmp & mask {
                    data
                } else {
                    old
                }
            }
            "and" => old & data,
            "or" => old | data,
            "xor" => old ^ data,
            "umin" => old.min(data),
            "umax" => old.max(data),
            "smin" => {
                if sx(old) < sx(data) {
                    old
                } else {
                    data
                }
            }
            "smax" => {
                if sx(old) > sx(data) {
                    old
                } else {
                    data
                }
            }
            "inc" => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            "dec" => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            _ => return None,
        } & mask,
    )
}

/// Integer VALU operations.
#[derive(Clone, Copy)]
enum IntOp {
    Mov,
    Un(fn(u32) -> u32),
    Bin(fn(u32, u32) -> u32),
    Tri(fn(u32, u32, u32) -> u32),
    Cndmask,
    AddCo,
    SubCo,
    SubrevCo,
    Addc,
    Subb,
    Subbrev,
    MadU64U32,
    MadI64I32,
    /// 64-bit shift: (value, amount) -> result.
    Shift64(fn(u64, u32) -> u64),
    LshlAdd64,
    /// Two sources and the lane index.
    Lane(fn(u32, u32, usize) -> u32),
    Mov64,
}

impl PartialEq for IntOp {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

impl std::fmt::Debug for IntOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IntOp")
    }
}

/// The integer VALU table: opcode (of the mnemonic stem) -> semantics.
fn int_op(op: Opcode) -> Option<IntOp> {
    use IntOp::*;
    Some(match op {
        Opcode::V_MOV_B32_E32 => Mov,
        Opcode::V_NOT_B32_E32 => Un(|a| !a),
        Opcode::V_BFREV_B32_E32 => Un(|a| a.reverse_bits()),
        Opcode::V_FFBH_U32_E32 => Un(|a| if a == 0 { u32::MAX } else { a.leading_zeros() }),
        Opcode::V_FFBL_B32_E32 => Un(|a| if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        // Leading bits equal to the sign bit; -1 for 0 and -1.
        Opcode::V_FFBH_I32_E32 => Un(|a| {
            if a == 0 || a == u32::MAX {
                u32::MAX
            } else if a >> 31 == 1 {
                a.leading_ones()
            } else {
                a.leading_zeros()
            }
        }),
        Opcode::V_CVT_U32_F32_E32 => Un(|a| f32::from_bits(a) as u32),
        // Exponent e with x = m * 2^e, 0.5 <= |m| < 1; 0 for 0, inf, NaN.
        Opcode::V_FREXP_EXP_I32_F32_E32 => Un(|a| {
            let x = f32::from_bits(a);
            if x == 0.0 || !x.is_finite() {
                0
            } else {
                let mut e = (x.abs() as f64).log2().floor() as i32 + 1;
                let m = (x.abs() as f64) * (2f64).powi(-e);
                if m >= 1.0 {
                    e += 1;
                } else if m < 0.5 {
                    e -= 1;
                }
                e as u32
            }
        }),
        Opcode::V_CVT_I32_F32_E32 => Un(|a| f32::from_bits(a) as i32 as u32),
        Opcode::V_ADD_U32_E32 => Bin(|a, b| a.wrapping_add(b)),
        Opcode::V_SUB_U32_E32 => Bin(|a, b| a.wrapping_sub(b)),
        Opcode::V_SUBREV_U32_E32 => Bin(|a, b| b.wrapping_sub(a)),
        Opcode::V_AND_B32_E32 => Bin(|a, b| a & b),
        Opcode::V_OR_B32_E32 => Bin(|a, b| a | b),
        Opcode::V_XOR_B32_E32 => Bin(|a, b| a ^ b),
        Opcode::V_LSHLREV_B32_E32 => Bin(|a, b| b << (a & 31)),
        Opcode::V_LSHRREV_B32_E32 => Bin(|a, b| b >> (a & 31)),
        Opcode::V_ASHRREV_I32_E32 => Bin(|a, b| ((b as i32) >> (a & 31)) as u32),
        Opcode::V_LSHLREV_B16_E32 => Bin(|a, b| ((b as u16) << (a & 15)) as u32),
        Opcode::V_LSHRREV_B16_E32 => Bin(|a, b| ((b as u16) >> (a & 15)) as u32),
        Opcode::V_MUL_LO_U32 => Bin(|a, b| a.wrapping_mul(b)),
        Opcode::V_MUL_HI_U32 => Bin(|a, b| ((a as u64 * b as u64) >> 32) as u32),
        Opcode::V_MUL_HI_I32 => Bin(|a, b| ((a as i32 as i64 * b as i32 as i64) >> 32) as u32),
        Opcode::V_MUL_U32_U24_E32 => Bin(|a, b| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)),
        Opcode::V_MUL_I32_I24_E32 => Bin(|a, b| (((a << 8) as i32 >> 8).wrapping_mul((b << 8) as i32 >> 8)) as u32),
        Opcode::V_MIN_I32_E32 => Bin(|a, b| (a as i32).min(b as i32) as u32),
        Opcode::V_MAX_I32_E32 => Bin(|a, b| (a as i32).max(b as i32) as u32),
        Opcode::V_MIN_U32_E32 => Bin(|a, b| a.min(b)),
        Opcode::V_MAX_U32_E32 => Bin(|a, b| a.max(b)),
        Opcode::V_BCNT_U32_B32 => Bin(|a, b| a.count_ones().wrapping_add(b)),
        Opcode::V_BFM_B32 => Bin(|a, b| (((1u64 << (a & 31)) - 1) as u32) << (b & 31)),
        Opcode::V_CVT_PKRTZ_F16_F32 => return None,
        Opcode::V_LSHL_ADD_U32 => Tri(|a, b, c| (a << (b & 31)).wrapping_add(c)),
        Opcode::V_ADD_LSHL_U32 => Tri(|a, b, c| a.wrapping_add(b) << (c & 31)),
        Opcode::V_LSHL_OR_B32 => Tri(|a, b, c| (a << (b & 31)) | c),
        Opcode::V_AND_OR_B32 => Tri(|a, b, c| (a & b) | c),
        Opcode::V_OR3_B32 => Tri(|a, b, c| a | b | c),
        Opcode::V_XAD_U32 => Tri(|a, b, c| (a ^ b).wrapping_add(c)),
        Opcode::V_ADD3_U32 => Tri(|a, b, c| a.wrapping_add(b).wrapping_add(c)),
        Opcode::V_MAD_U32_U24 => Tri(|a, b, c| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c)),
        Opcode::V_BFE_U32 => Tri(|a, b, c| bfe(a, b & 31, c & 31, false)),
        Opcode::V_BFE_I32 => Tri(|a, b, c| bfe(a, b & 31, c & 31, true)),
        Opcode::V_BFI_B32 => Tri(|a, b, c| (a & b) | (!a & c)),
        Opcode::V_ALIGNBIT_B32 => Tri(|a, b, c| ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32),
        Opcode::V_PERM_B32 => Tri(|a, b, sel| {
            let data = (a as u64) << 32 | b as u64;
            let byte = |s: u32| -> u32 {
                match s {
                    0..=7 => (data >> (8 * s) & 0xFF) as u32,
                    8 => 0xFF * (data >> 15 & 1) as u32,
                    9 => 0xFF * (data >> 31 & 1) as u32,
                    10 => 0xFF * (data >> 47 & 1) as u32,
                    11 => 0xFF * (data >> 63 & 1) as u32,
                    12 => 0,
                    _ => 0xFF,
                }
            };
            (0..4).map(|k| byte(sel >> (8 * k) & 0xFF) << (8 * k)).fold(0, |x, y| x | y)
        }),
        Opcode::V_MIN3_I32 => Tri(|a, b, c| (a as i32).min(b as i32).min(c as i32) as u32),
        Opcode::V_MAX3_I32 => Tri(|a, b, c| (a as i32).max(b as i32).max(c as i32) as u32),
        Opcode::V_MIN3_U32 => Tri(|a, b, c| a.min(b).min(c)),
        Opcode::V_MED3_I32 => Tri(|a, b, c| {
            let (a, b, c) = (a as i32, b as i32, c as i32);
            a.max(b).min(a.min(b).max(c)) as u32
        }),
        Opcode::V_MED3_U32 => Tri(|a, b, c| a.max(b).min(a.min(b).max(c))),
        Opcode::V_MAX3_U32 => Tri(|a, b, c| a.max(b).max(c)),
        Opcode::V_CNDMASK_B32_E32 => Cndmask,
        Opcode::V_ADD_CO_U32_E32 => AddCo,
        Opcode::V_SUB_CO_U32_E32 => SubCo,
        Opcode::V_SUBREV_CO_U32_E32 => SubrevCo,
        Opcode::V_ADDC_CO_U32_E32 => Addc,
        Opcode::V_SUBB_CO_U32_E32 => Subb,
        Opcode::V_SUBBREV_CO_U32_E32 => Subbrev,
        Opcode::V_MAD_U64_U32 => MadU64U32,
        Opcode::V_MAD_I64_I32 => MadI64I32,
        Opcode::V_LSHLREV_B64 => Shift64(|v, s| v << (s & 63)),
        Opcode::V_LSHRREV_B64 => Shift64(|v, s| v >> (s & 63)),
        Opcode::V_ASHRREV_I64 => Shift64(|v, s| ((v as i64) >> (s & 63)) as u64),
        Opcode::V_LSHL_ADD_U64 => LshlAdd64,
        Opcode::V_MOV_B64_E32 => Mov64,
        // Bits of S0 below this lane (low / high 32 lanes) plus S1.
        Opcode::V_MBCNT_LO_U32_B32 => Lane(|a, b, lane| {
            let mask = if lane >= 32 { u32::MAX } else { (1u32 << lane) - 1 };
            (a & mask).count_ones().wrapping_add(b)
        }),
        Opcode::V_MBCNT_HI_U32_B32 => Lane(|a, b, lane| {
            let mask = if lane < 32 {
                0
            } else if lane == 63 {
                u32::MAX >> 1
            } else {
                (1u32 << (lane - 32)) - 1
            };
            (a & mask).count_ones().wrapping_add(b)
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Target};

    fn run(wave: &mut Wave, words: &[u32]) -> R<Step> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let inst = decode(Target::Gfx942, &bytes).map_err(|e| ExecError::Decode { pc: 0, what: e.to_string() })?;
        let mut global = GlobalMemory::new();
        let mut lds = Lds::new(0);
        let mut obs = Observations::default();
        wave.step(&inst, &mut Env { global: &mut global, lds: &mut lds, obs: &mut obs, target: "gfx942" })
    }

    fn wave(mode: u32) -> Wave {
        let mut w = Wave::new(0, mode);
        w.sgpr[EXEC as usize] = u32::MAX;
        w.sgpr[EXEC as usize + 1] = u32::MAX;
        w
    }

    // v_rcp_f32_e32 v0, v1 / s_getreg_b32 s0, hwreg(HW_REG_TRAPSTS, 0, 9) /
    // s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS, 0, 9), 0 (encodings from llvm-mc).
    const V_RCP_V0_V1: u32 = 0x7E00_4501;
    const S_GETREG_TRAPSTS: u32 = 0xB880_4003;
    const S_SETREG_IMM_TRAPSTS: [u32; 2] = [0xBA00_4003, 0];

    #[test]
    fn trapsts_is_sticky_readable_clearable_and_gated_by_dx10_clamp() {
        // IEEE mode, denormals kept, DX10_CLAMP clear: 1/0 records DIV0.
        let mut w = wave(0xF0 | 1 << 9);
        w.vgpr[1][7] = 0; // lane 7 divides by zero, the others by 0 too (zeroed file)
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts & flag::DIV0, flag::DIV0);
        // Sticky: a clean operation keeps the bit.
        for l in 0..64 {
            w.vgpr[1][l] = 2.0f32.to_bits();
        }
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts & flag::DIV0, flag::DIV0);
        run(&mut w, &[S_GETREG_TRAPSTS]).expect("runs");
        assert_eq!(w.sgpr[0] & flag::DIV0, flag::DIV0);
        run(&mut w, &S_SETREG_IMM_TRAPSTS).expect("runs");
        assert_eq!(w.trapsts, 0);
        run(&mut w, &[S_GETREG_TRAPSTS]).expect("runs");
        assert_eq!(w.sgpr[0], 0);
        // DX10_CLAMP set: the same division records nothing.
        let mut w = wave(0xF0 | 1 << 9 | 1 << 8);
        run(&mut w, &[V_RCP_V0_V1]).expect("runs");
        assert_eq!(w.trapsts, 0);
        assert_eq!(w.vgpr[0][0], f32::INFINITY.to_bits());
    }

    #[test]
    fn matrix_instructions_outside_the_table_or_with_broadcasts_are_refused() {
        let mut w = wave(0xF0);
        // v_mfma_f32_16x16x32_fp8_fp8 v[2:5], v[2:3], v[4:5], 0
        let e = run(&mut w, &[0xD3F3_0002, 0x0202_0902]).expect_err("fp8 is not modelled");
        assert!(e.to_string().contains("unsupported matrix instruction"), "{e}");
        // v_mfma_f32_16x16x16_f16 with cbsz:1 (bit 8 of the first word).
        let e = run(&mut w, &[0xD3CD_0102, 0x0202_0902]).expect_err("cbsz is not modelled");
        assert!(e.to_string().contains("cbsz"), "{e}");
        // The plain form runs, and a partial EXEC mask is refused.
        run(&mut w, &[0xD3CD_0002, 0x0202_0902]).expect("runs");
        w.sgpr[EXEC as usize] = 1;
        let e = run(&mut w, &[0xD3CD_0002, 0x0202_0902]).expect_err("partial EXEC");
        assert!(e.to_string().contains("EXEC"), "{e}");
    }

    #[test]
    fn agprs_live_at_the_accumulation_offset_of_the_unified_file() {
        let mut w = wave(0xF0);
        w.acc_base = 8;
        for l in 0..64 {
            w.vgpr[1][l] = l as u32;
        }
        // v_accvgpr_write_b32 a2, v1 (gfx942: VOP3P opcode 0x59)
        let bytes: Vec<u8> = [0xD3D9_4002u32, 0x1800_0101].iter().flat_map(|x| x.to_le_bytes()).collect();
        let i = xfpx_amd_isa::decode(xfpx_amd_isa::Target::Gfx942, &bytes).expect("decodes");
        assert_eq!(i.to_string(), "v_accvgpr_write_b32 a2, v1");
        run(&mut w, &[0xD3D9_4002, 0x1800_0101]).expect("runs");
        assert_eq!(w.vgpr[10][5], 5, "a2 is register 8 + 2 of the unified file");
        // v_accvgpr_read_b32 v3, a2 back.
        let bytes: Vec<u8> = [0xD3D8_4003u32, 0x1800_0102].iter().flat_map(|x| x.to_le_bytes()).collect();
        let i = xfpx_amd_isa::decode(xfpx_amd_isa::Target::Gfx942, &bytes).expect("decodes");
        assert_eq!(i.to_string(), "v_accvgpr_read_b32 v3, a2");
        run(&mut w, &[0xD3D8_4003, 0x1800_0102]).expect("runs");
        assert_eq!(w.vgpr[3][63], 63);
        // v_accvgpr_mov_b32 a1, a2 (VOP1; llvm-mc-19 encoding 0x7E02A502).
        run(&mut w, &[0x7E02_A502]).expect("runs");
        assert_eq!(w.vgpr[9][17], 17);
    }
}
