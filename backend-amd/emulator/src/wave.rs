//! One wave64: its state (SGPRs, VGPRs/AGPRs, EXEC, VCC, SCC, PC, MODE,
//! TRAPSTS, private memory, in-flight memory and matrix results), operand
//! reads and writes with hazard tracking, and [`Wave::step`], which routes an
//! instruction by encoding to its family in `exec/` (semantics keyed by the
//! typed opcode); anything the emulator does not implement stops with
//! [`ExecError::Unsupported`].

use crate::decode::{Encoding, Instruction, Target};
use crate::fpu::{Flags, FpMode};
use crate::memory::{GlobalMemory, Lds};
use crate::timing::{Hazard, HazardKind, Reg, Timing};
use std::collections::{BTreeMap, BTreeSet};
use xfpx_amd_isa::Opcode;
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

pub(crate) fn aperture(code: u16) -> Option<u64> {
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
    /// `s_trap`: the emulator has no trap handler, so the wave (and the
    /// run) stops, as a kernel does on a GPU whose handler aborts it.
    Trap { pc: u64, id: u8 },
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Unsupported { pc, what } => write!(f, "Unsupported({what} at pc {pc:#x})"),
            ExecError::MemoryFault { pc, addr, what } => {
                write!(f, "memory fault at pc {pc:#x}: {what} of address {addr:#x}")
            }
            ExecError::Decode { pc, what } => write!(f, "cannot decode the instruction at pc {pc:#x}: {what}"),
            ExecError::Trap { pc, id } => write!(f, "the wave trapped (s_trap {id}) at pc {pc:#x}"),
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
    /// The processor: selects target-specific forms.
    pub target: Target,
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
    pub(crate) cur_pc: u64,
    /// Where AGPR a0 lies in `vgpr`: gfx908 has a separate file of 256 AGPRs
    /// (kept at 256..512 here); gfx90a and later one unified file of 512
    /// registers where AGPRs start at the descriptor's ACCUM_OFFSET.
    pub acc_base: usize,
    /// Wait states so far: one per instruction, plus `n` for `s_nop n`.
    pub wait_states: u64,
    /// Results of matrix instructions still being produced.
    pub(crate) matrix_pending: Vec<PendingMatrix>,
    /// What `s_getreg_b32` of `HW_ID` reads (see [`crate::placement`]).
    pub hw_id: u32,
    /// What `s_getreg_b32` of `XCC_ID` reads; `None` where the target has no such register.
    pub xcc_id: Option<u32>,
    /// VGPR indexing mode (`s_set_gpr_idx_on` until `s_set_gpr_idx_off`).
    pub gpr_idx_on: bool,
    /// The current instruction accesses memory (its reads of matrix
    /// results follow the memory rules).
    pub(crate) memory_access: bool,
    /// Source 0 of the DPP-form instruction being executed, gathered from
    /// the lanes its control names (one entry per register).
    pub(crate) dpp_src0: Vec<[u32; 64]>,
}

/// Registers a matrix instruction writes, and when they may be read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingMatrix {
    /// First register and count, as indices into `Wave::vgpr`.
    pub(crate) first: usize,
    pub(crate) count: usize,
    /// The wait-state counts from which a VALU and a memory instruction
    /// may read the result.
    pub(crate) ready_valu: u64,
    pub(crate) ready_memory: u64,
    pub(crate) pc: u64,
}

pub(crate) type R<T> = Result<T, ExecError>;

pub(crate) fn lanes(exec: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |l| exec >> l & 1 != 0)
}

pub(crate) fn f32_inline(code: u16) -> Option<u32> {
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
pub(crate) fn f64_inline(code: u16) -> Option<u64> {
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
pub(crate) fn f16_inline(code: u16) -> Option<u32> {
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
pub(crate) enum Ty {
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
            hw_id: 0,
            xcc_id: None,
            gpr_idx_on: false,
            memory_access: false,
            dpp_src0: Vec::new(),
        }
    }

    pub fn exec(&self) -> u64 {
        self.sgpr[EXEC as usize] as u64 | (self.sgpr[EXEC as usize + 1] as u64) << 32
    }
    pub(crate) fn set_exec(&mut self, v: u64) {
        self.sgpr[EXEC as usize] = v as u32;
        self.sgpr[EXEC as usize + 1] = (v >> 32) as u32;
    }
    pub fn vcc(&self) -> u64 {
        self.sgpr[VCC as usize] as u64 | (self.sgpr[VCC as usize + 1] as u64) << 32
    }
    pub(crate) fn unsupported<T>(&self, what: impl Into<String>) -> R<T> {
        Err(ExecError::Unsupported { pc: self.cur_pc, what: what.into() })
    }

    pub(crate) fn hazard(&self, obs: &mut Observations, reg: Reg, kind: HazardKind) {
        if let Some(issued_pc) = self.timing.in_flight(reg) {
            obs.hazards.insert(Hazard { pc: self.cur_pc, reg, kind, issued_pc });
        }
    }

    // ------------------------------------------------------------ registers
    pub(crate) fn rs(&self, obs: &mut Observations, n: u16) -> u32 {
        self.hazard(obs, Reg::Sgpr(n), HazardKind::ReadInFlight);
        self.sgpr[n as usize & 127]
    }
    pub(crate) fn ws(&mut self, obs: &mut Observations, n: u16, v: u32) {
        self.hazard(obs, Reg::Sgpr(n), HazardKind::WriteInFlight);
        if (n as usize) < 128 {
            self.sgpr[n as usize] = v;
        }
    }
    pub(crate) fn ws64(&mut self, obs: &mut Observations, n: u16, v: u64) {
        self.ws(obs, n, v as u32);
        self.ws(obs, n + 1, (v >> 32) as u32);
    }
    pub(crate) fn rv(&self, obs: &mut Observations, n: u16, lane: usize) -> u32 {
        self.hazard(obs, Reg::Vgpr(n), HazardKind::ReadInFlight);
        if !self.matrix_pending.is_empty() {
            self.matrix_hazard(obs, n as usize % NUM_VGPRS, Reg::Vgpr(n));
        }
        self.vgpr[n as usize % NUM_VGPRS][lane]
    }
    pub(crate) fn wv(&mut self, obs: &mut Observations, n: u16, lane: usize, v: u32) {
        if lane == 0 || !self.timing.is_idle() {
            self.hazard(obs, Reg::Vgpr(n), HazardKind::WriteInFlight);
        }
        self.vgpr[n as usize % NUM_VGPRS][lane] = v;
    }

    /// A scalar operand code (SSRC) as 32 bits.
    pub(crate) fn ssrc(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty) -> R<u32> {
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
    pub(crate) fn ssrc64(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty) -> R<u64> {
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
    pub(crate) fn vsrc(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty, lane: usize) -> R<u32> {
        if code >= 256 {
            return Ok(self.rv(obs, code - 256, lane));
        }
        self.ssrc(obs, code, lit, ty)
    }
    pub(crate) fn vsrc64(&self, obs: &mut Observations, code: u16, lit: Option<u32>, ty: Ty, lane: usize) -> R<u64> {
        if code >= 256 {
            return Ok(self.rv(obs, code - 256, lane) as u64 | (self.rv(obs, code - 255, lane) as u64) << 32);
        }
        self.ssrc64(obs, code, lit, ty)
    }

    pub(crate) fn fp_mode(&self) -> R<FpMode> {
        if self.mode & 0xF != 0 {
            return self.unsupported("rounding modes other than round-to-nearest-even");
        }
        Ok(FpMode::from_mode(self.mode))
    }

    /// Records FP flags: sticky in TRAPSTS unless DX10_CLAMP (MODE bit 8) is
    /// set, which before GFX12 keeps exceptions from being recorded.
    pub(crate) fn raise(&mut self, flags: Flags) {
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
            self.matrix_pending.retain(|p| p.ready_valu.max(p.ready_memory) > now);
        }
        self.memory_access = matches!(
            inst.encoding,
            Encoding::Ds | Encoding::Flat | Encoding::Global | Encoding::Scratch | Encoding::Mubuf
        );
        let next = self.pc + inst.len as u64;
        self.pc = next;
        if let Some(step) = self.set_gpr_idx(inst, env.obs)? {
            return Ok(step);
        }
        match inst.encoding {
            Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopk | Encoding::Sopc => self.scalar(inst, env),
            Encoding::Sopp => self.program(inst, env),
            Encoding::Smem => self.smem(inst, env),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => {
                self.valu(inst, env)?;
                Ok(Step::Continue)
            }
            Encoding::Ds | Encoding::Mubuf if env.target.is_gfx90a_plus() && Self::agpr_data(inst) => {
                self.unsupported(format!("{} with AGPR data", inst.mnemonic))
            }
            Encoding::Ds => self.ds(inst, env),
            Encoding::Flat | Encoding::Global => self.flat(inst, env),
            Encoding::Scratch => self.scratch(inst, env),
            Encoding::Mubuf => self.mubuf(inst, env),
        }
    }

    pub(crate) fn observe(&mut self, obs: &mut Observations, format: FpFormat, kinds: u8) {
        for (bit, kind) in
            [(1u8, ExceptionKind::Nan), (2, ExceptionKind::Inf), (4, ExceptionKind::Sub), (8, ExceptionKind::Div0)]
        {
            if kinds & bit != 0 {
                *obs.results.entry((self.cur_pc, kind, format)).or_insert(0) += 1;
            }
        }
    }
}
