//! The inject tool on AMD: what each CDNA instruction is to a fault model
//! ([`InjectFacts`], from the decoder's table), and the vendor-neutral
//! [`Injector`] run over the rewriter's kernel views with those facts.
//!
//! - unit: vector and scalar ALU instructions; floating point where the
//!   view's class is a floating-point one, integer otherwise (moves, lane
//!   selects and bit operations included);
//! - immediate: an ALU instruction with an inline constant or a literal;
//! - memory source: a scalar load (constant memory: its destination is a
//!   scalar register, so only the models that take uniform destinations
//!   touch it) or an LDS read (`ds_read*`);
//! - shared store: `ds_write*` with a register address and data;
//! - index inputs (IAT, IAW, IAC): no instruction reads an index on AMD: a
//!   wave starts with them in registers its kernel descriptor enables. The
//!   work-item index of dimension d (up to `VGPR_WORKITEM_ID`) is bits
//!   `10d..10d+9` of v0 on gfx90a and later, and vd on gfx908; the
//!   workgroup index of a dimension whose `ENABLE_SGPR_WORKGROUP_ID_*` is
//!   set is a system SGPR (they follow the `USER_SGPR_COUNT` user SGPRs in
//!   the order x, y, z, workgroup info, private segment wave offset). The
//!   fault XORs that register, shifted to the index's bits, before the
//!   kernel's first instruction reading it, where nothing has written it,
//!   control flow has not left the entry and no branch leads (so it runs
//!   once per wave): every later read sees the wrong index. An index the
//!   entry does not read is not touched. A mask reaching outside a packed
//!   10-bit index is refused;
//! - lane mask (WV): a `v_cmp_*_e64` writing its lanes' outcomes to a
//!   scalar pair (compares writing VCC have no destination in the view);
//! - guards: AMD instructions have none (IAL `force` touches nothing).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use xfpx_amd_isa::encoding::Encoding;
use xfpx_amd_isa::operand::{Operand as IsaOperand, RegFile as IsaFile};
use xfpx_amd_isa::{Access, ControlFlow};
use xfpx_amd_object::descriptor::{DecodedDescriptor, WorkitemIdLayout};
use xfpx_common::fault::{Dim, ErrorModel, FaultSpec, Unit};
use xfpx_common::inject_tool::{IndexInputs, InjectFacts, Injector, SpecialIndex};
use xfpx_common::plan::Plan;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::Tool;
use xfpx_common::view::{Control, KernelView, RegFile, RegRange};

use crate::rewrite::units::TextCode;
use crate::rewrite::view::{view_class, DecodedInstr};
use crate::CodeObject;

/// The facts of one decoded instruction (all but `special`, which depends
/// on where it is in its kernel).
pub fn facts(d: &DecodedInstr) -> InjectFacts {
    let insn = &d.insn;
    let alu = matches!(
        insn.encoding,
        Encoding::Vop1
            | Encoding::Vop2
            | Encoding::Vop3
            | Encoding::Vop3p
            | Encoding::Vopc
            | Encoding::Sop1
            | Encoding::Sop2
            | Encoding::Sopk
            | Encoding::Sopc
    );
    let unit = alu.then(|| if view_class(insn).is_fp() { Unit::Fp } else { Unit::Int });
    let sources = || insn.operands.iter().filter(|o| !o.written);
    let immediate = alu
        && sources().any(|o| {
            matches!(o.operand, IsaOperand::InlineInt(_) | IsaOperand::InlineFloat { .. } | IsaOperand::Literal { .. })
        });
    let access = insn.op.access();
    let memory_source = matches!(insn.encoding, Encoding::Smem | Encoding::Ds) && access == Some(Access::Load);
    let shared_store = (insn.encoding == Encoding::Ds && access == Some(Access::Store))
        .then(|| {
            let reg = |i: usize| match insn.operands.get(i).map(|o| &o.operand) {
                Some(IsaOperand::Reg(r)) if r.file == IsaFile::Vgpr => Some(*r),
                _ => None,
            };
            let (address, data) = (reg(0)?, reg(1)?);
            let uses = insn.regs_read();
            let at = |r| uses.iter().position(|u| *u == r).and_then(|p| u8::try_from(p).ok());
            Some((at(data)?, at(address)?))
        })
        .flatten();
    // a vector compare's lane mask in a scalar pair (`_e64`; VCC is no def in the view)
    let lane_mask = (insn.encoding == Encoding::Vop3 && insn.op.compare().is_some_and(|c| c.unit.is_vector()))
        .then(|| {
            insn.regs_written()
                .into_iter()
                .filter(|r| r.file != IsaFile::Ttmp)
                .position(|r| r.file == IsaFile::Sgpr && r.count == 2)
                .and_then(|p| u8::try_from(p).ok())
        })
        .flatten();
    InjectFacts {
        unit,
        immediate,
        memory_source,
        shared_store,
        special: None,
        index_inputs: IndexInputs::default(),
        forceable_guard: false,
        lane_mask,
    }
}

/// Bits of one work-item index packed in v0 (gfx90a and later).
const PACKED_INDEX_BITS: u32 = 10;

/// The registers a kernel's waves start with their indices in: (index,
/// register, the index's lowest bit there), from its descriptor.
fn index_registers(d: &DecodedDescriptor) -> Vec<(SpecialIndex, RegRange, u8)> {
    let dims = [Dim::X, Dim::Y, Dim::Z];
    let mut out = Vec::new();
    for (n, &dim) in dims.iter().enumerate().take(d.vgpr_workitem_id as usize + 1) {
        let (first, shift) = match d.workitem_id_layout {
            WorkitemIdLayout::PackedInV0 => (0, PACKED_INDEX_BITS as u8 * n as u8),
            WorkitemIdLayout::Separate { .. } => (n as u16, 0),
        };
        out.push((SpecialIndex::Thread(dim), RegRange::new(RegFile::PerLane, first, 1), shift));
    }
    for s in &d.system_sgprs {
        let dim = match s.name {
            "workgroup_id_x" => Dim::X,
            "workgroup_id_y" => Dim::Y,
            "workgroup_id_z" => Dim::Z,
            _ => continue,
        };
        let Ok(first) = u16::try_from(s.first) else { continue };
        out.push((SpecialIndex::Block(dim), RegRange::new(RegFile::Uniform, first, 1), 0));
    }
    out
}

/// A thread-index fault whose mask reaches outside the 10 bits of a
/// packed index is refused: those bits are another index.
fn check_packed_mask(fault: &FaultSpec, d: &DecodedDescriptor) -> Result<(), crate::rewrite::RewriteError> {
    let (Some(mask), Some(dim)) = (fault.params.mask, fault.params.dim) else { return Ok(()) };
    if !matches!(fault.model, ErrorModel::Iat | ErrorModel::Iaw)
        || d.workitem_id_layout != WorkitemIdLayout::PackedInV0
        || mask >> PACKED_INDEX_BITS == 0
    {
        return Ok(());
    }
    let (name, first) = match dim {
        Dim::X => ("x", 0),
        Dim::Y => ("y", 10),
        Dim::Z => ("z", 20),
    };
    Err(crate::rewrite::RewriteError::Refused(format!(
        "on {} the work-item index {name} is bits {}:{first} of v0 (x 9:0, y 19:10, z 29:20): --mask {mask:#x} reaches outside its 10 bits",
        d.processor,
        first + 9
    )))
}

/// Where one kernel's waves find their indices.
#[derive(Debug, Default)]
struct KernelInputs {
    indices: Vec<(SpecialIndex, RegRange, u8)>,
    /// Offsets from the entry that the kernel's branches lead to.
    branch_targets: HashSet<u64>,
}

impl KernelInputs {
    /// The index of the first instruction of `view` reading `reg`, where
    /// the code from the entry to it runs once per wave (no branch leads
    /// into it, none leaves it) and nothing wrote `reg` before.
    fn first_read(&self, view: &KernelView, reg: RegRange) -> Option<usize> {
        for (i, ins) in view.instrs.iter().enumerate() {
            if self.branch_targets.contains(&ins.offset) {
                return None;
            }
            if ins.uses.iter().filter_map(|o| o.reg()).any(|u| u.contains(&reg)) {
                return Some(i);
            }
            if ins.writes(&reg) || ins.control != Control::None {
                return None;
            }
        }
        None
    }
}

/// The inject tool over one code object's kernels and device functions.
#[derive(Debug)]
pub struct AmdInjector {
    injector: Injector,
    /// Facts by the instruction's text (an instruction's facts depend on
    /// nothing else).
    facts: HashMap<String, InjectFacts>,
    kernels: HashMap<String, KernelInputs>,
    /// Instructions the fault touches, over every view planned.
    targets: Cell<usize>,
    /// Plan nothing but the activations counter (the fault's every site
    /// was refused: the kernel runs as it is).
    inert: bool,
}

impl AmdInjector {
    /// The tool for `fault` over the code object `elf`.
    pub fn new(elf: &[u8], fault: FaultSpec) -> Result<AmdInjector, crate::rewrite::RewriteError> {
        let co = CodeObject::parse(elf)?;
        let processor = co.target.processor;
        let text = TextCode::decode(&co, processor);
        let instrs = text.instructions();
        let facts = instrs.iter().map(|d| (d.insn.to_string(), facts(d))).collect();
        let mut kernels = HashMap::new();
        for k in &co.kernels {
            let descriptor = k.descriptor.decode(processor).ok();
            if let Some(d) = &descriptor {
                check_packed_mask(&fault, d)?;
            }
            let branch_targets = instrs
                .iter()
                .filter(|d| k.code.contains(&d.addr))
                .filter_map(|d| match d.insn.control_flow(d.addr) {
                    ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => target.checked_sub(k.entry),
                    _ => None,
                })
                .collect();
            let indices = descriptor.as_ref().map(index_registers).unwrap_or_default();
            kernels.insert(k.name.clone(), KernelInputs { indices, branch_targets });
        }
        Ok(AmdInjector { injector: Injector { fault }, facts, kernels, targets: Cell::new(0), inert: false })
    }

    /// The same tool planning no injection, only its counter.
    pub fn inert(self) -> AmdInjector {
        AmdInjector { inert: true, targets: Cell::new(0), ..self }
    }

    /// Instructions the fault touched in the views planned so far.
    pub fn targets(&self) -> usize {
        self.targets.get()
    }

    /// What an instruction needs for the fault to touch it.
    pub fn wanted(&self) -> String {
        self.injector.wanted()
    }
}

impl Tool for AmdInjector {
    fn name(&self) -> &'static str {
        self.injector.name()
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut facts: Vec<InjectFacts> =
            view.instrs.iter().map(|i| self.facts.get(&*i.text).copied().unwrap_or_default()).collect();
        if let Some(inputs) = self.kernels.get(&view.name) {
            for &(index, reg, shift) in &inputs.indices {
                if let Some(i) = inputs.first_read(view, reg) {
                    facts[i].index_inputs.set(index, reg, shift);
                }
            }
        }
        if self.inert {
            facts.iter_mut().for_each(|f| *f = InjectFacts::default());
        }
        let planned = self.injector.plan(view, &facts, sites);
        self.targets.set(self.targets.get() + planned.targets);
        planned.plan
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::rewrite::view::{kernel_view, DecodedInstr};
    use xfpx_common::fault::FaultFlags;
    use xfpx_common::probe::{Action, Change};
    use xfpx_common::view::{InstrView, Operand};
    use xfpx_common::InstrClass;

    fn spec(model: &str, dim: &str) -> FaultSpec {
        let lanes = (model == "IAT").then(|| "0-3".to_string());
        let flags = FaultFlags {
            model: Some(model.into()),
            sm: Some("0".into()),
            dim: Some(dim.into()),
            mask: Some("1".into()),
            lanes,
            ..FaultFlags::default()
        };
        flags.spec().unwrap()
    }

    /// (offset, change) of each injection the fault plans in the fixture
    /// kernel `workitem_xyz` (HIP, clang-19 -O3: thread x, y, z and block y).
    fn planned(target: &str, model: &str, dim: &str) -> Vec<(u64, Change)> {
        let path = format!("{}/fixtures/{target}/control.co", env!("CARGO_MANIFEST_DIR"));
        let elf = std::fs::read(path).unwrap();
        let tool = AmdInjector::new(&elf, spec(model, dim)).unwrap();
        let co = CodeObject::parse(&elf).unwrap();
        let k = co.kernels.iter().find(|k| k.name == "workitem_xyz").unwrap();
        let instrs: Vec<DecodedInstr> =
            xfpx_amd_isa::disassemble(co.target.processor, co.kernel_code(k).unwrap(), k.entry)
                .map(|(addr, r)| DecodedInstr { addr, insn: r.unwrap() })
                .collect();
        let view = kernel_view(&k.name, k.entry, &instrs);
        let mut sites = SiteTable::new();
        let plan = tool.plan(&view, &mut sites);
        xfpx_common::plan::verify(&plan, &view, &sites).unwrap();
        plan.probes
            .iter()
            .map(|p| match &p.action {
                Action::Inject { change, .. } => (view.instrs[p.instr as usize].offset, change.clone()),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn indices_are_xored_before_the_first_instruction_reading_their_register() {
        let v = |n| RegRange::new(RegFile::PerLane, n, 1);
        let s = |n| RegRange::new(RegFile::Uniform, n, 1);
        let xor = |at: u64, reg, mask| vec![(at, Change::XorInput { reg, mask })];
        // gfx908: v0, v1, v2; 4 + 2 user SGPRs, then workgroup x (s6, never read) and y (s7)
        assert_eq!(planned("gfx908", "IAT", "x"), xor(0x8, v(0), 1));
        assert_eq!(planned("gfx908", "IAT", "y"), xor(0x8, v(1), 1));
        assert_eq!(planned("gfx908", "IAT", "z"), xor(0xc, v(2), 1));
        assert_eq!(planned("gfx908", "IAC", "y"), xor(0x14, s(7), 1));
        // gfx90a+: x, y, z packed in v0 (the mask moves to the index's bits)
        for t in ["gfx90a", "gfx942"] {
            assert_eq!(planned(t, "IAT", "x"), xor(0x8, v(0), 1));
            assert_eq!(planned(t, "IAT", "y"), xor(0x8, v(0), 1 << 10));
            assert_eq!(planned(t, "IAT", "z"), xor(0x8, v(0), 1 << 20));
        }
        assert_eq!(planned("gfx90a", "IAC", "y"), xor(0x2c, s(7), 1));
        // gfx942: 2 user SGPRs (architected flat scratch): workgroup y in s3
        assert_eq!(planned("gfx942", "IAC", "y"), xor(0x2c, s(3), 1));
        for t in ["gfx908", "gfx90a", "gfx942"] {
            assert!(planned(t, "IAC", "x").is_empty(), "{t}: workgroup x is never read");
            assert!(planned(t, "IAC", "z").is_empty(), "{t}: workgroup z is not enabled");
        }
    }

    #[test]
    fn an_index_is_not_touched_where_its_first_read_may_run_twice_or_reads_another_value() {
        let v0 = RegRange::new(RegFile::PerLane, 0, 1);
        let ins = |offset, defs: Vec<u16>, uses: Vec<u16>, control| {
            let mut i = InstrView::new(offset, "", InstrClass::Other);
            i.defs = defs.into_iter().map(|n| Operand::Reg(RegRange::new(RegFile::PerLane, n, 1))).collect();
            i.uses = uses.into_iter().map(|n| Operand::Reg(RegRange::new(RegFile::PerLane, n, 1))).collect();
            i.control = control;
            i
        };
        let view = |first: InstrView| KernelView {
            name: "k".into(),
            instrs: vec![first, ins(4, vec![1], vec![0], Control::None)],
        };
        let inputs =
            |targets: &[u64]| KernelInputs { indices: Vec::new(), branch_targets: targets.iter().copied().collect() };
        let plain = view(ins(0, vec![2], vec![3], Control::None));
        assert_eq!(inputs(&[]).first_read(&plain, v0), Some(1));
        // a branch leads to the read (or before it): it may run more than once
        assert_eq!(inputs(&[4]).first_read(&plain, v0), None);
        assert_eq!(inputs(&[0]).first_read(&plain, v0), None);
        // v0 is written first, or control flow leaves the entry first
        assert_eq!(inputs(&[]).first_read(&view(ins(0, vec![0], vec![], Control::None)), v0), None);
        assert_eq!(inputs(&[]).first_read(&view(ins(0, vec![], vec![], Control::CondBranch)), v0), None);
        // a read that also writes it is the first read
        assert_eq!(inputs(&[]).first_read(&view(ins(0, vec![0], vec![0], Control::None)), v0), Some(0));
    }
}
