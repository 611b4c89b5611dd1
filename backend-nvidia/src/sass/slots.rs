//! Spill slots: what each instruction does to the stack memory a function
//! addresses from its stack pointer `R1` (`STL [R1+0x58], R52`,
//! `LDL R54, [R1+0x88]`), so that fast mode's analysis follows a value
//! the compiler spilled and reloaded ([`xfpx_common::observe::SlotEffect`]).
//!
//! Only stores and loads whose address is `R1` plus a constant name a
//! slot. Anything else that may write the stack (a local store elsewhere,
//! a generic store, a write of `R1`) may write every slot; calls are
//! resolved by the analysis from what their subroutines do.

use super::opcodes::stored_words;
use super::parse::{RegKind, SassOperand};
use super::SassKernel;
use xfpx_common::observe::SlotEffect;
use xfpx_common::view::{RegFile, RegRange};

/// Stores that may reach the stack without naming a slot of it: generic
/// stores and atomics (the local ones are read below).
const GENERIC_WRITES: &[&str] = &["ST", "ATOM", "RED"];

/// Modifiers of loads and stores narrower than a word: such a store
/// changes part of a slot, such a load reads part of one.
const SUBWORD: &[&str] = &["U8", "S8", "U16", "S16"];

/// Per instruction of `kernel`, what it does to the stack's slots.
pub fn slot_effects(kernel: &SassKernel) -> Vec<SlotEffect> {
    let stack_pointer = RegRange::new(RegFile::PerLane, 1, 1);
    kernel
        .instrs
        .iter()
        .zip(&kernel.view.instrs)
        .map(|(ins, view)| {
            if ins.never_executes() {
                return SlotEffect::None;
            }
            let modifiers = ins.modifier_refs();
            let subword = modifiers.iter().any(|m| SUBWORD.contains(m));
            let words = stored_words(&modifiers);
            match ins.opcode.as_str() {
                "STL" => {
                    let (Some(slot), Some(data)) =
                        (ins.operands.first().and_then(|a| slot(a, words)), ins.operands.get(1))
                    else {
                        return SlotEffect::Clobber;
                    };
                    match data {
                        SassOperand::Reg(r)
                            if r.kind == RegKind::R && !r.is_zero() && !subword && !ins.is_guarded() =>
                        {
                            SlotEffect::Store { slot, from: RegRange::new(RegFile::PerLane, r.num, words) }
                        }
                        _ => SlotEffect::Writes(vec![slot]),
                    }
                }
                "LDL" if !ins.is_guarded() && !subword => {
                    let loaded = ins.operands.get(1).and_then(|a| slot(a, words));
                    let to = view.defs.first().and_then(|d| d.reg()).filter(|r| r.file == RegFile::PerLane);
                    match (loaded, to) {
                        (Some(slot), Some(to)) if to.count == slot.count => SlotEffect::Load { slot, to },
                        _ => SlotEffect::None,
                    }
                }
                op if GENERIC_WRITES.contains(&op) => SlotEffect::Clobber,
                _ if view.defs.iter().filter_map(|d| d.reg()).any(|d| d.overlaps(&stack_pointer)) => {
                    SlotEffect::Clobber
                }
                _ => SlotEffect::None,
            }
        })
        .collect()
}

/// The slot `[R1]` or `[R1+0x58]` names, `words` words wide (none for any
/// other address, or one not on a word boundary).
fn slot(address: &SassOperand, words: u8) -> Option<RegRange> {
    let SassOperand::Memory { text } = address else { return None };
    let inner = text.strip_prefix('[')?.strip_suffix(']')?.trim();
    let offset = match inner.strip_prefix("R1") {
        Some("") => 0,
        Some(rest) => {
            let hex = rest.trim().strip_prefix('+')?.trim().strip_prefix("0x")?;
            u64::from_str_radix(hex, 16).ok()?
        }
        None => return None,
    };
    if offset % 4 != 0 {
        return None;
    }
    Some(RegRange::new(RegFile::Stack, u16::try_from(offset / 4).ok()?, words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::{build_kernel, parse_listing};

    fn effects(body: &str) -> Vec<SlotEffect> {
        let listing = format!("\tFunction : k\n{body}");
        slot_effects(&build_kernel(&parse_listing(&listing).expect("parses")[0]))
    }

    fn stack(word: u16, count: u8) -> RegRange {
        RegRange::new(RegFile::Stack, word, count)
    }

    fn r(n: u16, count: u8) -> RegRange {
        RegRange::new(RegFile::PerLane, n, count)
    }

    #[test]
    fn spills_and_reloads_from_the_stack_pointer_name_slots() {
        let e = effects(
            " /*0000*/ STL.64 [R1+0x58], R52 ;\n /*0010*/ LDL.LU.64 R54, [R1+0x58] ;\n \
             /*0020*/ STL [R1], R7 ;\n /*0030*/ LDL R8, [R1] ;\n /*0040*/ STL.128 [R1+0x10], R20 ;\n",
        );
        assert_eq!(
            e,
            vec![
                SlotEffect::Store { slot: stack(22, 2), from: r(52, 2) },
                SlotEffect::Load { slot: stack(22, 2), to: r(54, 2) },
                SlotEffect::Store { slot: stack(0, 1), from: r(7, 1) },
                SlotEffect::Load { slot: stack(0, 1), to: r(8, 1) },
                SlotEffect::Store { slot: stack(4, 4), from: r(20, 4) },
            ]
        );
    }

    #[test]
    fn what_cannot_be_followed_writes_slots_or_any() {
        let e = effects(
            " /*0000*/ @P0 STL [R1+0x8], R7 ;\n /*0010*/ STL [R1+0x8], RZ ;\n /*0020*/ STL.U8 [R1+0x8], R7 ;\n \
             /*0030*/ STL [R2+0x8], R7 ;\n /*0040*/ ST.E [R4.64], R7 ;\n /*0050*/ VIADD R1, R1, -0x20 ;\n \
             /*0060*/ @P0 LDL R8, [R1+0x8] ;\n /*0070*/ LDL R8, [R2] ;\n /*0080*/ STG.E desc[UR4][R2.64], R7 ;\n",
        );
        let slot2 = SlotEffect::Writes(vec![stack(2, 1)]);
        assert_eq!(
            e,
            vec![
                slot2.clone(),
                slot2.clone(),
                slot2,
                SlotEffect::Clobber,
                SlotEffect::Clobber,
                SlotEffect::Clobber,
                SlotEffect::None,
                SlotEffect::None,
                SlotEffect::None,
            ]
        );
    }
}
