//! Dispatch of a kernel over a grid: the kernel-argument segment (explicit
//! and hidden arguments), the dispatch packet, the initial SGPR/VGPR state of
//! every wave as the kernel descriptor asks, and a scheduler that runs the
//! waves of each workgroup with `s_barrier` and a shared LDS.

use crate::decode::{decode, Instruction, Target};
use crate::memory::{GlobalMemory, Lds};
use crate::placement::Placement;
use crate::program::{Kernel, Program};
use crate::timing::Hazard;
use crate::wave::{Env, ExecError, Observations, Step, Wave, EXEC, PRIVATE_BUFFER_MARK};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use xfpx_amd_isa::hwid::has_xcc_id;

/// Grid and workgroup shape of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatch {
    /// Number of workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Work-items per workgroup in x, y, z.
    pub block: [u32; 3],
    /// Dynamic LDS bytes added to the kernel's static group segment.
    pub dynamic_lds: u32,
}

/// Sees every wave instruction just before and just after it executes,
/// with its PC as an offset in the code image (a virtual address of the
/// code object): an oracle for instrumentation that reads values.
pub trait StepObserver: Send {
    fn before(&mut self, pc: u64, wave: &Wave);
    fn after(&mut self, pc: u64, wave: &Wave);
}

/// A shared [`StepObserver`] for [`RunLimits::observer`].
#[derive(Clone)]
pub struct Observer(pub Arc<std::sync::Mutex<dyn StepObserver>>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

/// Limits of a run, and where it tells its progress.
#[derive(Debug, Clone)]
pub struct RunLimits {
    /// Stop with an error after this many wave instructions in total.
    pub max_instructions: u64,
    /// Counts the workgroups finished, for a progress display.
    pub progress: Option<Arc<AtomicU64>>,
    /// Compute units the waves are placed on (None: the target's; see
    /// [`crate::placement`]).
    pub compute_units: Option<u32>,
    /// Told of every instruction every wave executes (slow: for tests and oracles).
    pub observer: Option<Observer>,
    /// Private bytes per work-item of a kernel with a dynamic stack (where
    /// its fixed private size is smaller): the stack the runtime gives it.
    pub stack_bytes: u32,
    /// Loads within this many bytes before or past an allocation read
    /// zeros instead of faulting (0: off; see [`crate::memory`]).
    pub guard_bytes: u64,
}

/// The HIP runtime's default stack per work-item (`hipLimitStackSize`),
/// given to kernels with a dynamic stack.
pub const DEFAULT_STACK_BYTES: u32 = 1024;

/// Launches of more waves than this are refused before they start
/// (`xfpx replay --max-waves`).
pub const DEFAULT_MAX_WAVES: u64 = 1 << 18;

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits {
            max_instructions: 4_000_000_000,
            progress: None,
            compute_units: None,
            observer: None,
            stack_bytes: DEFAULT_STACK_BYTES,
            guard_bytes: 0,
        }
    }
}

/// What one kernel run produced besides memory contents.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Wave instructions executed (dynamic count).
    pub instructions: u64,
    pub waves: u64,
    pub workgroups: u64,
    /// OR of the TRAPSTS exception bits [8:0] of all waves at s_endpgm.
    pub trapsts: u32,
    pub observations: Observations,
    /// Global address of the code image (PCs minus this are image offsets).
    pub code_base: u64,
    /// What the kernel executed, counted as the counters tool defines it.
    pub counts: ExecCounts,
    /// The guard zone around allocations the run had (0: none), and the
    /// lane loads that read zeros from it.
    pub guard_bytes: u64,
    pub guarded_loads: u64,
}

/// The emulator's own counts of what a kernel executed, by the counters
/// tool's definitions (`xfpx_common::counters`): each executed wave
/// instruction counts once, and once per lane active in EXEC when it
/// issued (scalar instructions too: AMD has no per-instruction guard, so
/// thread instructions and those with the guard on are the same); EXEC
/// saves and restores are what the decoder's `exec_effect` says. The
/// oracle for instrumented counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecCounts {
    pub wave_instructions: u64,
    pub thread_instructions: u64,
    pub mask_saves: u64,
    pub mask_restores: u64,
}

impl ExecCounts {
    fn record(&mut self, inst: &Instruction, exec: u64) {
        use xfpx_common::counters::MaskEffect;
        self.wave_instructions += 1;
        self.thread_instructions += u64::from(exec.count_ones());
        match inst.exec {
            MaskEffect::Save => self.mask_saves += 1,
            MaskEffect::Restore => self.mask_restores += 1,
            MaskEffect::None | MaskEffect::Write => {}
        }
    }
}

impl RunStats {
    /// Hazards found, with PCs as code-object virtual addresses (what
    /// llvm-objdump prints), sorted by PC.
    pub fn hazards(&self) -> Vec<Hazard> {
        self.observations
            .hazards
            .iter()
            .map(|h| Hazard {
                pc: h.pc.wrapping_sub(self.code_base),
                issued_pc: h.issued_pc.wrapping_sub(self.code_base),
                ..*h
            })
            .collect()
    }
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    Exec(ExecError),
    Launch(String),
    InstructionLimit(u64),
    Deadlock,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Exec(e) => e.fmt(f),
            RunError::Launch(s) => f.write_str(s),
            RunError::InstructionLimit(n) => write!(f, "stopped after the limit of {n} instructions"),
            RunError::Deadlock => write!(f, "waves of a workgroup wait at different barriers forever"),
        }
    }
}

/// A code object placed in emulated memory, ready to launch its kernels.
#[derive(Debug, Clone)]
pub struct LoadedCode {
    pub object: Program,
    /// Global address of the image (vaddr 0).
    pub base: u64,
}

impl LoadedCode {
    pub fn load(mem: &mut GlobalMemory, object: Program) -> LoadedCode {
        let base = mem.allocate(object.image.clone());
        LoadedCode { object, base }
    }
}

/// Builds the kernarg segment: `explicit` (the explicit arguments laid out at
/// their metadata offsets) followed by the hidden arguments the metadata lists.
pub fn kernarg_segment(kernel: &Kernel, explicit: &[u8], d: &Dispatch) -> Vec<u8> {
    let size = (kernel.kernarg_segment_size.max(kernel.descriptor.kernarg_size) as usize).max(explicit.len()).max(16);
    let mut seg = vec![0u8; size.div_ceil(64) * 64 + 256];
    seg[..explicit.len()].copy_from_slice(explicit);
    let dims = if d.grid[2] * d.block[2] > 1 {
        3
    } else if d.grid[1] * d.block[1] > 1 {
        2
    } else {
        1
    };
    for a in kernel.args.iter().filter(|a| a.is_hidden()) {
        let o = a.offset as usize;
        let mut put = |v: u64| {
            let n = (a.size as usize).min(8);
            if o + n <= seg.len() {
                seg[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
            }
        };
        match a.value_kind.as_str() {
            "hidden_block_count_x" => put(d.grid[0] as u64),
            "hidden_block_count_y" => put(d.grid[1] as u64),
            "hidden_block_count_z" => put(d.grid[2] as u64),
            "hidden_group_size_x" => put(d.block[0] as u64),
            "hidden_group_size_y" => put(d.block[1] as u64),
            "hidden_group_size_z" => put(d.block[2] as u64),
            "hidden_grid_dims" => put(dims),
            "hidden_dynamic_lds_size" => put(d.dynamic_lds as u64),
            _ => put(0),
        }
    }
    seg
}

/// Where a dispatch finds its kernarg segment, AQL dispatch packet and
/// queue in emulated memory, and its dispatch id: what a host runtime that
/// placed them there (an emulated HSA queue) hands the waves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchAddresses {
    pub kernarg: u64,
    pub packet: u64,
    /// The queue (`amd_queue_t`); 0 where there is none.
    pub queue: u64,
    pub dispatch_id: u64,
}

/// Refuses shapes the emulator cannot run, before anything runs.
fn check_shape(kernel: &Kernel, d: &Dispatch) -> Result<u32, RunError> {
    if kernel.descriptor.kernel_code_properties & (1 << 10) != 0 {
        return Err(RunError::Launch(format!("kernel {} is wave32; the emulator runs wave64 only", kernel.name)));
    }
    if d.block.iter().product::<u32>() == 0 || d.grid.iter().product::<u32>() == 0 {
        return Err(RunError::Launch("grid and block sizes must be non-zero".into()));
    }
    let threads = d.block.iter().product::<u32>();
    if threads > 1024 {
        return Err(RunError::Launch(format!("{threads} work-items per workgroup exceed 1024")));
    }
    Ok(threads)
}

/// Runs `kernel` of `code` over the grid. `explicit_args` are the explicit
/// kernel arguments, laid out at their metadata offsets; the kernarg
/// segment (with the hidden arguments) and the dispatch packet are built
/// and placed in `mem` here.
pub fn run_kernel(
    mem: &mut GlobalMemory,
    code: &LoadedCode,
    kernel: &Kernel,
    explicit_args: &[u8],
    d: &Dispatch,
    limits: &RunLimits,
) -> Result<RunStats, RunError> {
    check_shape(kernel, d)?;
    let kernarg = kernarg_segment(kernel, explicit_args, d);
    let kernarg_addr = mem.allocate(kernarg);
    // hsa_kernel_dispatch_packet_t
    let mut pkt = vec![0u8; 64];
    pkt[2..4].copy_from_slice(
        &((if d.grid[2] * d.block[2] > 1 {
            3u16
        } else if d.grid[1] * d.block[1] > 1 {
            2
        } else {
            1
        })
        .to_le_bytes()),
    );
    for i in 0..3 {
        pkt[4 + 2 * i..6 + 2 * i].copy_from_slice(&(d.block[i] as u16).to_le_bytes());
        pkt[12 + 4 * i..16 + 4 * i].copy_from_slice(&(d.grid[i] * d.block[i]).to_le_bytes());
    }
    pkt[24..28].copy_from_slice(&kernel.private_segment_fixed_size.to_le_bytes());
    pkt[28..32].copy_from_slice(&(kernel.group_segment_fixed_size + d.dynamic_lds).to_le_bytes());
    pkt[32..40].copy_from_slice(&(code.base + kernel.descriptor_vaddr).to_le_bytes());
    pkt[40..48].copy_from_slice(&kernarg_addr.to_le_bytes());
    let pkt_addr = mem.allocate(pkt);
    let at = DispatchAddresses { kernarg: kernarg_addr, packet: pkt_addr, queue: 0, dispatch_id: 0 };
    run_dispatch(mem, code, kernel, &at, d, limits)
}

/// Runs `kernel` of `code` over the grid with a kernarg segment, dispatch
/// packet and queue already in `mem` at `at` (placed by the caller, hidden
/// arguments included). The packet is not read: `d` gives the shape.
pub fn run_dispatch(
    mem: &mut GlobalMemory,
    code: &LoadedCode,
    kernel: &Kernel,
    at: &DispatchAddresses,
    d: &Dispatch,
    limits: &RunLimits,
) -> Result<RunStats, RunError> {
    let threads = check_shape(kernel, d)?;
    let isa = code.object.target;
    let kd = &kernel.descriptor;
    let (kernarg_addr, pkt_addr) = (at.kernarg, at.packet);
    let rsrc1 = kd.compute_pgm_rsrc1;
    let rsrc2 = kd.compute_pgm_rsrc2;
    // MODE from rsrc1: FLOAT_ROUND [15:12] -> [3:0], FLOAT_DENORM [19:16] -> [7:4],
    // DX10_CLAMP 21 -> 8, IEEE 23 -> 9.
    let mode = ((rsrc1 >> 12) & 0xF) | ((rsrc1 >> 16) & 0xF) << 4 | ((rsrc1 >> 21) & 1) << 8 | ((rsrc1 >> 23) & 1) << 9;
    let preload_len = (kd.kernarg_preload & 0x7F) as usize;
    let preload_off = (kd.kernarg_preload >> 7) as u64;
    let preloaded = (0..preload_len as u64)
        .map(|i| mem.read_u32(kernarg_addr + 4 * (preload_off + i)))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| {
            RunError::Launch(format!("the kernarg segment at {kernarg_addr:#x} lacks the dwords the kernel preloads"))
        })?;
    let entry = code.base + kernel.entry_vaddr + if preload_len > 0 { 256 } else { 0 };
    let vgpr_ids = (rsrc2 >> 11) & 3;
    // gfx90a and later receive the workitem ids packed in v0.
    let packed = isa.is_gfx90a_plus();

    let mut stats = RunStats { code_base: code.base, guard_bytes: limits.guard_bytes, ..RunStats::default() };
    mem.set_guard(limits.guard_bytes);
    let guarded_before = mem.guarded_loads();
    let mut cache: HashMap<u64, Instruction> = HashMap::new();
    let lds_size = (kernel.group_segment_fixed_size.max(kd.group_segment_fixed_size) + d.dynamic_lds) as usize;
    let nwaves = threads.div_ceil(64);
    let placement = Placement::new(isa, limits.compute_units);
    // Per-lane private memory: the fixed size, or for a kernel with a
    // dynamic stack at least the stack the runtime gives.
    let fixed = kernel.private_segment_fixed_size.max(kd.private_segment_fixed_size);
    let private_size = if kernel.uses_dynamic_stack { fixed.max(limits.stack_bytes) } else { fixed } as usize;
    for gz in 0..d.grid[2] {
        for gy in 0..d.grid[1] {
            for gx in 0..d.grid[0] {
                let mut lds = Lds::new(lds_size);
                let mut waves = Vec::new();
                for w in 0..nwaves {
                    let mut wave = Wave::new(entry, mode);
                    let workgroup =
                        u64::from(gx) + u64::from(d.grid[0]) * (u64::from(gy) + u64::from(d.grid[1]) * u64::from(gz));
                    let place = placement.place(workgroup, w);
                    wave.hw_id = place.hw_id;
                    wave.xcc_id = has_xcc_id(isa).then_some(place.xcc_id);
                    // gfx90a+: AGPRs start at ACCUM_OFFSET (rsrc3 [5:0] = offset/4 - 1)
                    // of the unified file; gfx908 keeps them apart.
                    if isa != Target::Gfx908 {
                        wave.acc_base = ((kd.compute_pgm_rsrc3 & 0x3F) as usize + 1) * 4;
                    }
                    wave.private_size = private_size;
                    wave.private = vec![0; 64 * private_size];
                    // User SGPRs in descriptor order.
                    let mut s = 0usize;
                    let props = kd.kernel_code_properties;
                    if props & 1 != 0 {
                        // Private segment buffer: a marked descriptor that the
                        // emulator maps to the wave's private memory.
                        wave.sgpr[s + 2] = private_size as u32;
                        wave.sgpr[s + 3] = PRIVATE_BUFFER_MARK;
                        s += 4;
                    }
                    let put64 = |wave: &mut Wave, s: &mut usize, v: u64| {
                        if *s + 1 < 128 {
                            wave.sgpr[*s] = v as u32;
                            wave.sgpr[*s + 1] = (v >> 32) as u32;
                        }
                        *s += 2;
                    };
                    if props & 2 != 0 {
                        put64(&mut wave, &mut s, pkt_addr);
                    }
                    if props & 4 != 0 {
                        put64(&mut wave, &mut s, at.queue);
                    }
                    if props & 8 != 0 {
                        put64(&mut wave, &mut s, kernarg_addr);
                    }
                    if props & 16 != 0 {
                        put64(&mut wave, &mut s, at.dispatch_id);
                    }
                    if props & 32 != 0 {
                        put64(&mut wave, &mut s, 0);
                    }
                    if props & 64 != 0 {
                        s += 1;
                    }
                    for &dword in &preloaded {
                        if s < 128 {
                            wave.sgpr[s] = dword;
                        }
                        s += 1;
                    }
                    // System SGPRs follow the user SGPRs.
                    let mut s = kd.user_sgpr_count() as usize;
                    for (bit, id) in [(7, gx), (8, gy), (9, gz)] {
                        if rsrc2 >> bit & 1 != 0 {
                            wave.sgpr[s] = id;
                            s += 1;
                        }
                    }
                    if rsrc2 >> 10 & 1 != 0 {
                        wave.sgpr[s] = 0;
                        s += 1;
                    }
                    let _ = s; // private segment wave offset: zero (no scratch)
                    let mut exec = 0u64;
                    for lane in 0..64u32 {
                        let t = w * 64 + lane;
                        if t >= threads {
                            break;
                        }
                        exec |= 1 << lane;
                        let x = t % d.block[0];
                        let y = (t / d.block[0]) % d.block[1];
                        let z = t / (d.block[0] * d.block[1]);
                        let (y, z) = (if vgpr_ids >= 1 { y } else { 0 }, if vgpr_ids >= 2 { z } else { 0 });
                        if packed {
                            wave.vgpr[0][lane as usize] = x | y << 10 | z << 20;
                        } else {
                            wave.vgpr[0][lane as usize] = x;
                            wave.vgpr[1][lane as usize] = y;
                            wave.vgpr[2][lane as usize] = z;
                        }
                    }
                    wave.sgpr[EXEC as usize] = exec as u32;
                    wave.sgpr[EXEC as usize + 1] = (exec >> 32) as u32;
                    waves.push(wave);
                }
                run_workgroup(mem, &mut lds, &mut waves, &mut cache, isa, &mut stats, limits)?;
                stats.workgroups += 1;
                if let Some(p) = &limits.progress {
                    p.fetch_add(1, Ordering::Relaxed);
                }
                stats.waves += waves.len() as u64;
                for w in &waves {
                    stats.trapsts |= w.trapsts & 0x1FF;
                }
            }
        }
    }
    stats.guarded_loads = mem.guarded_loads() - guarded_before;
    Ok(stats)
}

fn fetch(
    mem: &GlobalMemory,
    cache: &mut HashMap<u64, Instruction>,
    isa: Target,
    pc: u64,
) -> Result<Instruction, ExecError> {
    if let Some(i) = cache.get(&pc) {
        return Ok(*i);
    }
    let mut buf = [0u8; 16];
    let mut n = 16;
    while n > 0 && !mem.read(pc, &mut buf[..n]) {
        n -= 4;
    }
    if n == 0 {
        return Err(ExecError::MemoryFault { pc, addr: pc, what: "instruction fetch" });
    }
    let inst = decode(isa, &buf[..n]).map_err(|e| ExecError::Decode { pc, what: e.to_string() })?;
    cache.insert(pc, inst);
    Ok(inst)
}

fn run_workgroup(
    mem: &mut GlobalMemory,
    lds: &mut Lds,
    waves: &mut [Wave],
    cache: &mut HashMap<u64, Instruction>,
    isa: Target,
    stats: &mut RunStats,
    limits: &RunLimits,
) -> Result<(), RunError> {
    loop {
        let mut progressed = false;
        for wave in waves.iter_mut() {
            if wave.done || wave.at_barrier {
                continue;
            }
            progressed = true;
            loop {
                let pc = wave.pc;
                let inst = fetch(mem, cache, isa, pc).map_err(RunError::Exec)?;
                stats.counts.record(&inst, wave.exec());
                let observer = limits.observer.as_ref().map(|o| &o.0);
                if let Some(o) = observer {
                    o.lock().unwrap_or_else(|p| p.into_inner()).before(pc.wrapping_sub(stats.code_base), wave);
                }
                let mut env = Env { global: mem, lds, obs: &mut stats.observations, target: isa };
                let step = wave.step(&inst, &mut env).map_err(RunError::Exec)?;
                if let Some(o) = observer {
                    o.lock().unwrap_or_else(|p| p.into_inner()).after(pc.wrapping_sub(stats.code_base), wave);
                }
                stats.instructions += 1;
                if stats.instructions > limits.max_instructions {
                    return Err(RunError::InstructionLimit(limits.max_instructions));
                }
                match step {
                    Step::Continue => {}
                    Step::Barrier => {
                        wave.at_barrier = true;
                        break;
                    }
                    Step::End => break,
                }
            }
        }
        if waves.iter().all(|w| w.done) {
            return Ok(());
        }
        // Every live wave waits at a barrier: release them.
        if waves.iter().all(|w| w.done || w.at_barrier) {
            for w in waves.iter_mut() {
                w.at_barrier = false;
            }
            continue;
        }
        if !progressed {
            return Err(RunError::Deadlock);
        }
    }
}
