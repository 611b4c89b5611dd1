//! Device functions cloned for a kernel. A function that stays as it is in
//! place (another kernel reaching it is excluded, not instrumented, or
//! cannot hold its scratch registers) gets a copy in the appended code for
//! each instrumented kernel that reaches it: the function's bytes, whose
//! branches within it still land in the copy, with the instructions whose
//! effect depends on where they run moved into trampolines (`s_getpc_b64`
//! gives the original's address, so the code's data and callees stay
//! where they are; `s_call_b64` and branches out of it go where the
//! original's went), its plan's probes lowered with the kernel's scratch
//! registers, and the calls to cloned functions (the kernel's and the
//! copies') redirected to the kernel's copies. The original runs for the
//! other kernels as it always did. A copy's sites are the function's own
//! (same name and offsets), so its records read as the function's.

use std::collections::BTreeMap;

use super::*;

/// Where a pass stands, to go back to when a kernel fails after its copies.
pub(super) struct PassMark {
    words: usize,
    slots: usize,
    islands: super::super::reach::PoolMark,
    patches: usize,
}

impl<'u> Pass<'u, '_> {
    pub(super) fn mark(&self) -> PassMark {
        PassMark {
            words: self.appended.words.len(),
            slots: self.table.slots.len(),
            islands: self.islands.mark(),
            patches: self.patches.len(),
        }
    }

    pub(super) fn restore(&mut self, m: PassMark) {
        self.appended.truncate(m.words);
        self.table.truncate(m.slots);
        self.islands.rollback(&m.islands);
        self.patches.truncate(m.patches);
    }

    /// The functions kernel `k` gets copies of: those it reaches (through
    /// calls whose targets are all known) that are not instrumented in
    /// place and have probes to lower.
    pub(super) fn clones_for(&self, k: &KernelUnit) -> Vec<&'u FunctionUnit> {
        let units: &'u Units<'_> = self.units;
        if units.graph.unresolved[k.index].is_some() {
            return Vec::new();
        }
        let reach = &units.graph.reach[k.index];
        let mut out: Vec<&'u FunctionUnit> = units
            .clonable
            .iter()
            .chain(units.functions.iter().filter(|f| !self.live.contains_key(&f.index)))
            .filter(|f| reach.contains(&f.index))
            .collect();
        out.sort_by_key(|f| f.index);
        out.dedup_by_key(|f| f.index);
        out
    }

    /// Copies, for kernel `k` with scratch registers `scratch`, the
    /// functions [`Self::clones_for`] names and lowers their plans; returns
    /// their outcomes and code, and the relocation of the kernel's own code
    /// (its calls to them redirected). A kernel at its register budget
    /// gives each copy's sites their registers (`scavengers`, by function).
    /// A copy that cannot be made leaves every function as it is for this
    /// kernel (nothing is redirected).
    pub(super) fn clone_functions(
        &mut self,
        k: &KernelUnit,
        scratch: Scratch,
        scavengers: Option<&BTreeMap<usize, Scavenger>>,
    ) -> (Vec<(FunctionOutcome, UnitCode)>, Relocation) {
        let units = self.units;
        let none = || (Vec::new(), Relocation::default());
        let cloned = self.clones_for(k);
        if cloned.is_empty() || scavengers.is_some_and(|s| cloned.iter().any(|f| !s.contains_key(&f.index))) {
            return none();
        }
        let mark = self.mark();
        // The copies' bytes first (calls between copies need every entry).
        let mut entries: BTreeMap<u64, u64> = BTreeMap::new();
        for f in &cloned {
            let code = &units.graph.functions[f.index].code;
            let Ok(bytes) = units.co.elf.bytes_at_addr(code.start, code.end - code.start) else {
                self.restore(mark);
                return none();
            };
            entries.insert(code.start, self.appended.here());
            self.appended.words.extend(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
        }
        let redirects = |calls: &[crate::rewrite::calls::CallSite], delta: u64| -> BTreeMap<u64, u64> {
            calls.iter().filter_map(|c| Some((c.addr.wrapping_add(delta), *entries.get(&c.target?)?))).collect()
        };
        let mut made = Vec::new();
        for f in &cloned {
            let original = units.graph.functions[f.index].code.start;
            let at = entries[&original];
            let delta = at.wrapping_sub(original);
            let instrs: Vec<DecodedInstr> = f
                .instrs
                .iter()
                .map(|d| DecodedInstr { addr: d.addr.wrapping_add(delta), insn: d.insn.clone() })
                .collect();
            let relocation = Relocation::of_copy(
                &instrs,
                original.wrapping_sub(at),
                redirects(&units.graph.function_calls[f.index], delta),
            );
            // (a unit's view does not depend on where its code lies: the copy's is the function's)
            let view = &f.view;
            let unit = Unit { entry: at, instrs: &instrs, waits: &f.waits, view, plan: &f.plan };
            let scavenger = scavengers.and_then(|s| s.get(&f.index));
            let regs = UnitRegs { scratch, scavenger, relocation: Some(&relocation) };
            let (low, words) = match self.lower(unit, regs) {
                Ok(x) => x,
                Err(_) => {
                    self.restore(mark);
                    return none();
                }
            };
            let mut made_one = self.copy_outcome(k, f, instrs, view, at, low, words);
            made_one.0.scratch = scavengers.is_none().then_some((scratch.sgpr, scratch.vgpr));
            made.push(made_one);
        }
        let kernel = Relocation::of_copy(&k.instrs, 0, redirects(&units.graph.kernel_calls[k.index], 0));
        (made, kernel)
    }

    /// The outcome of the copy of `f` at `at` for kernel `k`; its anchors
    /// in the copy are written into the appended code (others, in padding,
    /// go into the file with the other patches).
    #[allow(clippy::too_many_arguments)]
    fn copy_outcome(
        &mut self,
        k: &KernelUnit,
        f: &FunctionUnit,
        instrs: Vec<DecodedInstr>,
        view: &KernelView,
        at: u64,
        low: KernelLowering,
        words: Range<usize>,
    ) -> (FunctionOutcome, UnitCode) {
        let units = self.units;
        let original = &units.function_outcomes[f.index];
        let mut o = original.clone();
        o.address = at;
        o.copy_of = Some(original.address);
        o.reached_by = vec![units.co.kernels[k.index].name.clone()];
        o.coverage = coverage(self.opts.mode, view, &f.plan, &low.refused, None);
        o.state = if low.refused.is_empty() { KernelState::Instrumented } else { KernelState::Partial };
        took(&mut o, &low);
        let base = self.appended.base;
        let end = self.appended.here();
        for p in &low.anchors {
            if p.addr >= base && p.addr < end {
                let w = ((p.addr - base) / 4) as usize;
                for (i, c) in p.bytes.chunks_exact(4).enumerate() {
                    self.appended.words[w + i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            } else {
                self.patches.push(p.clone());
            }
        }
        // Its anchor lines, rendered when read.
        let (target, patches) = (units.target, low.anchors);
        let reach: BTreeMap<u64, Reach> = low.reach.iter().copied().collect();
        o.anchors = crate::rewrite::listing::Rendered::later(move || {
            let mut anchors: Vec<_> =
                patches.iter().map(|p| crate::rewrite::listing::anchor_line(target, &instrs, p)).collect();
            for a in &mut anchors {
                a.reach = reach.get(&a.address).copied();
            }
            anchors
        });
        let start = ((at - base) / 4) as usize;
        (o, UnitCode { words: Some(start.min(words.start)..words.end), anchors: Vec::new(), reach: Vec::new() })
    }
}
