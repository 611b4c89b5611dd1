//! Facts of a unit's code that lowering asks about at many of its
//! instructions, found in one pass over the unit instead of a backward
//! scan per question: where the VGPR indexing region an instruction may
//! lie in opens ([`super::halves::in_indexing_region`]) and where the
//! division sequence an instruction may be a step of starts
//! ([`super::division::is_step`]), and each instruction's control flow.
//! The answers are those of the scans.

use xfpx_amd_isa::{ControlFlow, Opcode, Traits};

use std::cell::RefCell;

use super::division::{self, Taint};
use super::halves;
use super::view::DecodedInstr;

/// The facts of one unit's instructions (in address order).
#[derive(Debug, Clone, Default)]
pub struct UnitFacts {
    /// Per position 0..=len: the last instruction before it that ends the
    /// indexing scan (`s_set_gpr_idx_on`, `s_set_gpr_idx_off`, or one that
    /// does not fall through).
    indexing_stop: Vec<Option<u32>>,
    /// Per instruction: the first instruction after the last one before it
    /// that ends a division stretch (one that does not fall through, or a
    /// `v_div_fixup`), 0 where none does; and how many of `scales` lie
    /// before it.
    stretch_start: Vec<(u32, u32)>,
    /// The `v_div_scale` instructions, in order.
    scales: Vec<u32>,
    /// Where the last division scan stood (see [`UnitFacts::is_step`]).
    scan: RefCell<StepScan>,
    /// Per instruction: its control flow at its address.
    flows: Vec<ControlFlow>,
}

/// A division sequence's taints from its `v_div_scale` (`start`) through
/// the instructions before `next`: the next question about the same
/// sequence, further on, goes on from there.
#[derive(Debug, Clone, Default)]
struct StepScan {
    start: usize,
    next: usize,
    taint: Taint,
}

impl UnitFacts {
    /// The facts of `code`.
    pub fn of(code: &[DecodedInstr]) -> UnitFacts {
        let mut facts = UnitFacts {
            indexing_stop: Vec::with_capacity(code.len() + 1),
            stretch_start: Vec::with_capacity(code.len()),
            scales: Vec::new(),
            scan: RefCell::default(),
            flows: Vec::with_capacity(code.len()),
        };
        let (mut stop, mut start) = (None, 0u32);
        for (i, d) in code.iter().enumerate() {
            facts.indexing_stop.push(stop);
            facts.stretch_start.push((start, facts.scales.len() as u32));
            let flow = d.insn.control_flow(d.addr);
            facts.flows.push(flow);
            let next = flow == ControlFlow::Next;
            if !next || matches!(d.insn.op, Opcode::S_SET_GPR_IDX_ON | Opcode::S_SET_GPR_IDX_OFF) {
                stop = Some(i as u32);
            }
            let traits = d.insn.op.traits();
            if !next || traits.contains(Traits::DIV_FIXUP) {
                start = i as u32 + 1;
            } else if traits.contains(Traits::DIV_SCALE) {
                facts.scales.push(i as u32);
            }
        }
        facts.indexing_stop.push(stop);
        facts
    }

    /// The control flow of instruction `index` (of the code these facts
    /// are of) at its address.
    pub fn flow(&self, index: usize) -> ControlFlow {
        self.flows[index]
    }

    /// [`halves::in_indexing_region`] of instruction `index` of `code`
    /// (the code these facts are of).
    pub fn in_indexing_region(&self, code: &[DecodedInstr], index: usize) -> Option<String> {
        let end = index.min(code.len());
        let at = self.indexing_stop.get(end).copied().flatten()? as usize;
        if end - at > halves::INDEXING_REACH {
            return None;
        }
        halves::opens_indexing_region(&code[at])
    }

    /// [`division::is_step`] of instruction `index` of `code` (the code
    /// these facts are of). Questions in address order about one sequence
    /// take its instructions once: the taints found for the last one are
    /// kept.
    pub fn is_step(&self, code: &[DecodedInstr], index: usize) -> bool {
        let Some(&(floor, _)) = self.stretch_start.get(index) else { return false };
        if let Some(known) = division::step_role(code, index) {
            return known;
        }
        let lowest = (floor as usize).max(index.saturating_sub(division::SEQUENCE_REACH));
        let first = self.stretch_start[lowest].1 as usize;
        let Some(start) = self.scales.get(first).map(|&s| s as usize).filter(|&s| s < index) else { return false };
        let mut scan = self.scan.borrow_mut();
        if scan.start != start || scan.next < start || scan.next > index {
            scan.start = start;
            scan.next = start;
            scan.taint.clear();
        }
        for d in &code[scan.next..index] {
            scan.taint.pass(&d.insn);
        }
        scan.next = index;
        scan.taint.read_by(&code[index].insn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::Target;

    /// Every fixture's kernels: the facts answer as the scans do at every instruction.
    #[test]
    fn facts_answer_as_the_scans() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for dir in ["fixtures/gfx90a", "fixtures/gfx942", "tests/sweep"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
            for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
                if p.extension().is_none_or(|x| x != "co") {
                    continue;
                }
                let Ok(bytes) = std::fs::read(&p) else { continue };
                let Ok(co) = crate::code_object::CodeObject::parse(&bytes) else { continue };
                let target = co.target.processor;
                let text = super::super::units::TextCode::decode(&co, target);
                let code = text.instructions();
                let facts = UnitFacts::of(code);
                for i in 0..=code.len() {
                    assert_eq!(facts.in_indexing_region(code, i), halves::in_indexing_region(code, i), "{p:?} {i}");
                    if let Some(d) = code.get(i) {
                        assert_eq!(facts.flow(i), d.insn.control_flow(d.addr), "{p:?} {i}");
                    }
                    assert_eq!(facts.is_step(code, i), division::is_step(code, i), "{p:?} {i}");
                    checked += 1;
                }
                // Questions out of order (each one after a later one) too.
                for i in (0..=code.len()).rev() {
                    assert_eq!(facts.is_step(code, i), division::is_step(code, i), "{p:?} {i}, backward");
                }
            }
        }
        assert!(checked > 10_000, "{checked} instructions checked");
        let _ = Target::Gfx90a;
    }

    /// Hand-made code: regions opened and closed, breaks, the reach.
    #[test]
    fn indexing_regions_and_division_stretches() {
        // s_set_gpr_idx_on s0, gpr_idx(SRC0); v_mov_b32 v0, v1; s_set_gpr_idx_off;
        // v_mov_b32 v0, v1; s_set_gpr_idx_on; s_branch +0; v_mov_b32 v0, v1
        let words = [0xBF11_0100u32, 0x7E00_0301, 0xBF9C_0000, 0x7E00_0301, 0xBF11_0100, 0xBF82_0000, 0x7E00_0301];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let code: Vec<DecodedInstr> = xfpx_amd_isa::disassemble(Target::Gfx90a, &bytes, 0x100)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("decodes") })
            .collect();
        assert_eq!(code[0].insn.op, Opcode::S_SET_GPR_IDX_ON);
        assert_eq!(code[2].insn.op, Opcode::S_SET_GPR_IDX_OFF);
        let facts = UnitFacts::of(&code);
        let inside: Vec<bool> = (0..=code.len()).map(|i| facts.in_indexing_region(&code, i).is_some()).collect();
        assert_eq!(inside, [false, true, true, false, false, true, false, false]);
        for i in 0..=code.len() {
            assert_eq!(facts.in_indexing_region(&code, i), halves::in_indexing_region(&code, i));
            assert_eq!(facts.is_step(&code, i), division::is_step(&code, i));
        }
    }
}
