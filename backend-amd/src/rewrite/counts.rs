//! The counters tool on AMD: the count plan of a decoded unit (its control
//! flow from the decoded branch targets, the mix class and EXEC effect of
//! each instruction), and how a run's table folds into counters.
//!
//! AMD has no per-instruction guard: an instruction runs on the lanes of
//! EXEC, so thread instructions are the lanes active in EXEC when each
//! wave instruction issues, and every one of them has its "guard" on. The
//! divergence stack is the program's own: `s_*_saveexec_*` pushes, an
//! `s_or`/`s_mov` into EXEC pops ([`Instruction::exec_effect`]). A count
//! region ends after every instruction that writes EXEC, so one EXEC holds
//! throughout it; its trampoline, before the region's first instruction,
//! adds `popcount(EXEC)` and 1 (the wave) to the region's two adjacent
//! table slots with one single-lane 64-bit atomic.
//!
//! [`Instruction::exec_effect`]: xfpx_amd_isa::Instruction::exec_effect

use super::table::{CounterValue, SlotKind};
use super::view::{control, DecodedInstr};
use xfpx_amd_isa::{Access, ControlFlow, DataType, Encoding, Instruction, Opcode, Traits};
use xfpx_common::cfg::{Cfg, CfgError, Target};
use xfpx_common::count_tool::{CountPlan, Counters};
use xfpx_common::counters::{fold, CountLayout, FoldError, MemSpace, MixClass, SlotCount, WindowCounters};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{Control, KernelView};

/// Lanes per wave on CDNA (wave64).
pub const WAVE_SIZE: u32 = 64;

/// The two table slots of count region `region`: lanes (the low dword of
/// the pair the trampoline adds to) and waves (the high dword).
pub fn region_slots(region: usize) -> [SlotKind; 2] {
    [
        SlotKind::Counter { name: format!("region{region}.lanes"), per_lane: true },
        SlotKind::Counter { name: format!("region{region}.waves"), per_lane: false },
    ]
}

/// The mix class of a decoded instruction.
pub fn mix_class(insn: &Instruction, control: Control) -> MixClass {
    let class = super::view::view_class(insn);
    if class.is_fp() {
        return MixClass::Fp { class };
    }
    if insn.op == Opcode::S_BARRIER {
        return MixClass::Barrier;
    }
    if control != Control::None && control != Control::Barrier {
        return MixClass::Branch;
    }
    let access = |space| match insn.op.access() {
        Some(Access::Atomic) => MixClass::Atomic { space },
        Some(Access::Load) => MixClass::Load { space },
        Some(Access::Store) => MixClass::Store { space },
        None => MixClass::Other,
    };
    match insn.encoding {
        Encoding::Smem => access(MemSpace::Constant),
        Encoding::Global | Encoding::Mubuf | Encoding::Mtbuf | Encoding::Mimg => access(MemSpace::Global),
        Encoding::Flat => access(MemSpace::Generic),
        Encoding::Scratch => access(MemSpace::Local),
        Encoding::Ds => access(MemSpace::Shared),
        _ if insn.op.traits().contains(Traits::MOVE) => MixClass::Other,
        _ => match insn.op.data_type() {
            Some(DataType::F16 | DataType::Bf16 | DataType::F32 | DataType::F64) | None => MixClass::Other,
            Some(_) => MixClass::Integer,
        },
    }
}

/// The control-flow graph of a decoded unit: branch targets resolved to
/// instruction indices, calls leaving the unit.
pub fn cfg(view: &KernelView, instrs: &[DecodedInstr]) -> Result<Cfg, CfgError> {
    Cfg::build(view, |i| {
        let d = &instrs[i];
        match d.insn.control_flow(d.addr) {
            ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => {
                instrs.iter().position(|x| x.addr == target).map_or(Target::Unknown, Target::Instr)
            }
            _ => Target::Unknown,
        }
    })
}

/// The count plan of a decoded unit whose view is `view`.
pub fn plan(view: &KernelView, instrs: &[DecodedInstr], sites: &mut SiteTable) -> Result<CountPlan, CfgError> {
    let cfg = cfg(view, instrs)?;
    let mix: Vec<MixClass> = instrs.iter().map(|d| mix_class(&d.insn, control(&d.insn, d.addr))).collect();
    let masks: Vec<_> = instrs.iter().map(|d| d.insn.exec_effect()).collect();
    Ok(Counters { warp_size: WAVE_SIZE }.plan_masked(view, &cfg, &mix, &masks, sites))
}

/// Folds the table's counter values of the unit `layout` describes.
pub fn fold_table(layout: &CountLayout, values: &[CounterValue]) -> Result<WindowCounters, FoldError> {
    let get = |kind: &SlotKind| {
        let SlotKind::Counter { name, .. } = kind else { return 0 };
        values.iter().find(|v| v.kernel == layout.kernel && &v.name == name).map_or(0, |v| u64::from(v.value))
    };
    let slots: Vec<SlotCount> = (0..layout.regions.len())
        .map(|r| {
            let [lanes, waves] = region_slots(r);
            SlotCount { warps: get(&waves), lanes: get(&lanes), divergent: 0 }
        })
        .collect();
    fold(layout, 0, &slots)
}
