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
//! - special (IAT/IAW): a wave starts with the work-item index in v0, so
//!   the kernel's first instruction reading v0 before anything writes it,
//!   control flow or not, is the read of the x index (gfx90a and later pack
//!   y and z into v0 too; the fault then hits the packed word). Workgroup
//!   indices arrive in scalar registers the descriptor enables and are not
//!   located: IAC touches no instruction on AMD;
//! - lane mask (WV): a `v_cmp_*_e64` writing its lanes' outcomes to a
//!   scalar pair (compares writing VCC have no destination in the view);
//! - guards: AMD instructions have none (IAL `force` touches nothing).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use xfpx_amd_isa::encoding::Encoding;
use xfpx_amd_isa::operand::{Operand as IsaOperand, RegFile as IsaFile};
use xfpx_amd_isa::Access;
use xfpx_common::fault::{Dim, FaultSpec, Unit};
use xfpx_common::inject_tool::{InjectFacts, Injector, SpecialIndex};
use xfpx_common::plan::Plan;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::Tool;
use xfpx_common::view::{Control, KernelView, Operand, RegFile};

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
    InjectFacts { unit, immediate, memory_source, shared_store, special: None, forceable_guard: false, lane_mask }
}

/// The index of the first instruction of a kernel reading the work-item
/// index (v0) before anything writes v0 or control flow leaves the entry.
fn thread_index_read(view: &KernelView) -> Option<usize> {
    let v0 = |o: &Operand| matches!(o, Operand::Reg(r) if r.file == RegFile::PerLane && r.first == 0);
    for (i, ins) in view.instrs.iter().enumerate() {
        if ins.uses.iter().any(v0) {
            return Some(i);
        }
        if ins.defs.iter().any(v0) || ins.control != Control::None {
            return None;
        }
    }
    None
}

/// The inject tool over one code object's kernels and device functions.
#[derive(Debug)]
pub struct AmdInjector {
    injector: Injector,
    /// Facts by the instruction's text (an instruction's facts depend on
    /// nothing else).
    facts: HashMap<String, InjectFacts>,
    kernels: HashSet<String>,
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
        let text = TextCode::decode(&co, co.target.processor);
        let facts = text.instructions().iter().map(|d| (d.insn.to_string(), facts(d))).collect();
        let kernels = co.kernels.iter().map(|k| k.name.clone()).collect();
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
            view.instrs.iter().map(|i| self.facts.get(&i.text).copied().unwrap_or_default()).collect();
        if self.kernels.contains(&view.name) {
            if let Some(i) = thread_index_read(view) {
                facts[i].special = Some(SpecialIndex::Thread(Dim::X));
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
