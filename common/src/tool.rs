//! Tools turn a kernel view into a plan: the exception detector, the
//! screener (the hardware's sticky exception flags at each exit) and an
//! instruction counter; the counters, fault injection and the flow
//! analysis are further tools with modules of their own
//! ([`crate::count_tool`], [`crate::inject_tool`], [`crate::flow`]).

use crate::class::{FpOp, InstrClass};
use crate::fp::{ExceptionKind, ExceptionKinds};
use crate::plan::Plan;
use crate::probe::{Action, CounterDef, CounterId, CounterKind, Probe, ValueRef, When};
use crate::site::SiteTable;
use crate::view::{Control, KernelView, Operand};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The tool a run, replay or dump uses: the exception detector, the
/// counters ([`crate::count_tool`]), the injection of one permanent
/// fault ([`crate::fault`]), or the flow analysis ([`crate::flow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    #[default]
    Detect,
    Counters,
    Inject,
    Flow,
}

impl ToolKind {
    pub const ALL: [ToolKind; 4] = [ToolKind::Detect, ToolKind::Counters, ToolKind::Inject, ToolKind::Flow];

    pub fn name(self) -> &'static str {
        match self {
            ToolKind::Detect => "detect",
            ToolKind::Counters => "counters",
            ToolKind::Inject => "inject",
            ToolKind::Flow => "flow",
        }
    }

    pub fn from_name(s: &str) -> Option<ToolKind> {
        ToolKind::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// Something that decides what to check or count in a kernel.
pub trait Tool {
    fn name(&self) -> &'static str;
    /// Build the plan for one kernel, interning the sites it uses.
    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan;
}

/// Options of the exception detector.
#[derive(Debug, Clone)]
pub struct Detector {
    /// Exception kinds to look for.
    pub kinds: ExceptionKinds,
    /// Only instructions whose index in the kernel is in this range.
    pub instr_range: Option<Range<u32>>,
    /// Also check the register sources of comparisons and min/max for NaN:
    /// these instructions can hide a NaN (a comparison with NaN is false,
    /// `min(x, NaN)` is `x`), so a NaN that reaches them is reported where
    /// it disappears.
    pub check_hiding_sources: bool,
}

impl Default for Detector {
    fn default() -> Self {
        Detector { kinds: ExceptionKinds::ALL, instr_range: None, check_hiding_sources: true }
    }
}

impl Detector {
    /// The kinds a destination check looks for on an instruction of `class`.
    fn dest_kinds(&self, class: InstrClass) -> ExceptionKinds {
        let mut k = ExceptionKinds(self.kinds.0 & ExceptionKinds::VALUE.0);
        let is_div = matches!(class, InstrClass::Arith { op: FpOp::Div, .. });
        if is_div && self.kinds.contains(ExceptionKind::Div0) {
            k = k.with(ExceptionKind::Div0);
        }
        k
    }
}

impl Tool for Detector {
    fn name(&self) -> &'static str {
        "detector"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        // Room for a probe per instruction: most of them where the code is FP work.
        plan.probes.reserve(view.instrs.len());
        // A site at most per instruction of a format.
        sites.reserve(&view.name, view.instrs.iter().filter(|ins| ins.class.format().is_some()).count());
        for (i, ins) in view.instrs.iter().enumerate() {
            let idx = i as u32;
            if let Some(r) = &self.instr_range {
                if !r.contains(&idx) {
                    continue;
                }
            }
            let Some(format) = ins.class.format() else { continue };
            let mut site = || sites_intern(sites, view, i);
            // (Pushed after a `Before` probe of the same instruction: the
            // plan is then in order already.)
            let mut after = None;
            if ins.class.produces_fp_value() && !ins.control.leaves() {
                let words = format.register_words();
                let first_def = ins.defs.iter().position(|d| d.reg().is_some_and(|r| r.count >= words));
                let kinds = self.dest_kinds(ins.class);
                if let (Some(d), false) = (first_def, kinds.is_empty()) {
                    let site = site();
                    after = Some(Probe {
                        instr: idx,
                        site,
                        when: When::After,
                        action: Action::CheckFp { values: [ValueRef::Def(d as u8)].into(), format, kinds },
                    });
                }
            }
            let hides = matches!(ins.class, InstrClass::Compare { .. } | InstrClass::MinMax { .. });
            if self.check_hiding_sources && hides && self.kinds.contains(ExceptionKind::Nan) {
                let words = format.register_words();
                let values: crate::probe::CheckedValues = ins
                    .uses
                    .iter()
                    .enumerate()
                    .filter(|(_, u)| matches!(u, Operand::Reg(r) if r.count >= words))
                    .map(|(n, _)| ValueRef::Use(n as u8))
                    .collect();
                if !values.is_empty() {
                    let site = site();
                    plan.probes.push(Probe {
                        instr: idx,
                        site,
                        when: When::Before,
                        action: Action::CheckFp {
                            values,
                            format,
                            kinds: ExceptionKinds::NONE.with(ExceptionKind::Nan),
                        },
                    });
                }
            }
            plan.probes.extend(after);
        }
        plan.normalize();
        plan
    }
}

/// The screener: before every instruction that ends the thread group, read
/// the exception flags the hardware accumulated ([`Action::ReadExceptionFlags`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Screener;

impl Tool for Screener {
    fn name(&self) -> &'static str {
        "screener"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        for (i, ins) in view.instrs.iter().enumerate() {
            if ins.control == Control::Exit {
                let site = sites_intern(sites, view, i);
                plan.probes.push(Probe {
                    instr: i as u32,
                    site,
                    when: When::Before,
                    action: Action::ReadExceptionFlags,
                });
            }
        }
        plan
    }
}

/// Name of the [`InstructionCounter`]'s counter.
pub const WAVE_INSTRUCTIONS: &str = "wave_instructions";

/// Counts warp/wave executions of every instruction: one counter,
/// [`WAVE_INSTRUCTIONS`], probed before each instruction (which exercises
/// the relocation of every kind of instruction, branches and calls included).
#[derive(Debug, Clone, Copy, Default)]
pub struct InstructionCounter;

impl Tool for InstructionCounter {
    fn name(&self) -> &'static str {
        "instruction-counter"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: WAVE_INSTRUCTIONS.into(), kind: CounterKind::WarpExecutions });
        for i in 0..view.instrs.len() {
            let site = sites_intern(sites, view, i);
            plan.probes.push(Probe {
                instr: i as u32,
                site,
                when: When::Before,
                action: Action::Count { counter: CounterId(0) },
            });
        }
        plan
    }
}

fn sites_intern(sites: &mut SiteTable, view: &KernelView, i: usize) -> crate::site::SiteId {
    let ins = &view.instrs[i];
    sites.intern(&view.name, ins.offset, ins.text.clone(), ins.location.clone())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::class::{FpFormat, FpOp};
    use crate::plan::verify;
    use crate::view::{Control, InstrView, RegFile, RegRange};

    fn reg(first: u16, count: u8) -> Operand {
        Operand::Reg(RegRange::new(RegFile::PerLane, first, count))
    }

    fn kernel() -> KernelView {
        let mut add =
            InstrView::new(0x0, "FADD R1, R2, R3", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Add });
        add.defs = vec![reg(1, 1)].into();
        add.uses = vec![reg(2, 1), reg(3, 1)].into();
        let mut rcp =
            InstrView::new(0x10, "MUFU.RCP R4, R1", InstrClass::Arith { format: FpFormat::F32, op: FpOp::Div });
        rcp.defs = vec![reg(4, 1)].into();
        rcp.uses = vec![reg(1, 1)].into();
        let mut dfma =
            InstrView::new(0x20, "DFMA R6, R2, R4, R6", InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma });
        dfma.defs = vec![reg(6, 2)].into();
        dfma.uses = vec![reg(2, 2), reg(4, 2), reg(6, 2)].into();
        let mut setp = InstrView::new(0x30, "FSETP.GT P0, R1, 1", InstrClass::Compare { format: FpFormat::F32 });
        setp.defs = vec![Operand::Reg(RegRange::new(RegFile::Predicate, 0, 1))].into();
        setp.uses = vec![reg(1, 1), Operand::Known { bits: 1f32.to_bits() as u64 }].into();
        let mut exit = InstrView::new(0x40, "EXIT", InstrClass::Other);
        exit.control = Control::Exit;
        KernelView { name: "k".into(), instrs: vec![add, rcp, dfma, setp, exit] }
    }

    #[test]
    fn detector_checks_destinations_and_hiding_sources() {
        let view = kernel();
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        verify(&plan, &view, &sites).expect("detector plans verify");
        let summary: Vec<(u32, When, u8)> = plan
            .probes
            .iter()
            .map(|p| match &p.action {
                Action::CheckFp { kinds, .. } => (p.instr, p.when, kinds.0),
                Action::Count { .. } | Action::Inject { .. } | Action::ReadExceptionFlags | Action::Flow { .. } => {
                    (p.instr, p.when, 0xff)
                }
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, When::After, 0b0111),
                (1, When::After, 0b1111),
                (2, When::After, 0b0111),
                (3, When::Before, 0b0001)
            ]
        );
        assert_eq!(sites.len(), 4);
    }

    #[test]
    fn instruction_range_limits_probes() {
        let view = kernel();
        let mut sites = SiteTable::new();
        let det = Detector { instr_range: Some(1..2), ..Detector::default() };
        let plan = det.plan(&view, &mut sites);
        assert_eq!(plan.probes.len(), 1);
        assert_eq!(plan.probes[0].instr, 1);
    }

    #[test]
    fn verifier_rejects_broken_plans() {
        let view = kernel();
        let mut sites = SiteTable::new();
        let mut plan = Detector::default().plan(&view, &mut sites);
        plan.probes.swap(0, 1);
        assert!(matches!(verify(&plan, &view, &sites), Err(crate::plan::PlanError::Unordered { .. })));
        let mut plan = Detector::default().plan(&view, &mut sites);
        plan.probes[0].instr = 4;
        assert!(verify(&plan, &view, &sites).is_err());
        let mut plan = Detector::default().plan(&view, &mut sites);
        if let Action::CheckFp { values, .. } = &mut plan.probes[2].action {
            values[0] = ValueRef::Use(2);
        }
        assert!(matches!(verify(&plan, &view, &sites), Err(crate::plan::PlanError::ClobberedUse { .. })));
    }

    #[test]
    fn screener_reads_flags_before_exits_only() {
        let view = kernel();
        let mut sites = SiteTable::new();
        let plan = Screener.plan(&view, &mut sites);
        verify(&plan, &view, &sites).expect("screener plans verify");
        assert_eq!(plan.probes.len(), 1);
        assert_eq!((plan.probes[0].instr, plan.probes[0].when), (4, When::Before));
        let mut after = plan.clone();
        after.probes[0].when = When::After;
        assert!(verify(&after, &view, &sites).is_err());
        let mut not_exit = plan.clone();
        not_exit.probes[0].instr = 0;
        not_exit.probes[0].site = sites.intern("k", 0x0, "FADD R1, R2, R3", None);
        assert!(matches!(verify(&not_exit, &view, &sites), Err(crate::plan::PlanError::FlagsNotAtExit { .. })));
    }

    #[test]
    fn counter_counts_every_instruction() {
        let view = kernel();
        let mut sites = SiteTable::new();
        let plan = InstructionCounter.plan(&view, &mut sites);
        verify(&plan, &view, &sites).expect("counter plans verify");
        assert_eq!(plan.probes.len(), view.instrs.len());
        assert_eq!(plan.counters[0].name, WAVE_INSTRUCTIONS);
    }
}
