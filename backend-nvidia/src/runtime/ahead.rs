//! Plans made before a function's first launch: where the disassembly
//! ahead ([`crate::prefill`]) has a program function's listing, the
//! detector's plan of it is made on that background thread, so that the
//! launch, which waits for its plan, finds it made.
//!
//! NVBit gives the launch the same disassembler's listing of the same
//! bytes, as its own instruction strings; a plan made ahead is used only
//! when every instruction's offset and text ([`instruction_text`]) agree
//! with those strings, and is otherwise dropped for one made there. It is
//! planned with a site table of its own; the launch gives its sites their
//! run-wide ids in the order the detector made them (the order a plan made
//! at the launch would intern them in), with the source lines known then.

use crate::modes::{plan_kernel, ModePlan};
use crate::sass::{instruction_text, into_kernel, parse_listing, SassKernel};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use xfpx_common::config::Mode;
use xfpx_common::site::{SiteId, SiteTable, SourceLoc};
use xfpx_common::tool::Detector;

/// A function's plan, made ahead.
#[derive(Debug)]
pub struct AheadPlan {
    pub kernel: SassKernel,
    pub planned: ModePlan,
    sites: SiteTable,
}

#[derive(Debug)]
enum Slot {
    Planning,
    Ready(Box<AheadPlan>),
    /// Planned at its launch (or its plan taken): not planned ahead again.
    Launched,
}

/// The plans made ahead, by mangled name, shared by the planning thread
/// and the launches.
#[derive(Debug, Default)]
pub struct AheadPlans {
    slots: Mutex<HashMap<String, Slot>>,
    changed: Condvar,
    /// Instructions planned ahead so far (bounded by [`MAX_INSTRUCTIONS`]).
    instructions: AtomicUsize,
}

/// How long a launch waits for a plan being made ahead before making its
/// own (the planning thread is not waiting for anything else by then).
pub const WAIT: Duration = Duration::from_secs(5);

/// Most instructions planned ahead in one process: functions beyond it
/// are planned at their first launch (memory for plans never used).
pub const MAX_INSTRUCTIONS: usize = 1 << 20;

/// What the plans are made with: the run's detector and mode.
#[derive(Debug, Clone)]
pub struct AheadPlanner {
    pub plans: Arc<AheadPlans>,
    pub detector: Detector,
    pub mode: Mode,
}

impl AheadPlanner {
    /// Plan function `mangled` from `listing`, the disassembler's output
    /// for it alone. A listing that does not parse, or that the detector
    /// refuses, leaves nothing (the launch plans as it would have).
    /// Returns the instructions planned.
    pub fn plan(&self, mangled: &str, listing: &str) -> usize {
        if !self.plans.start(mangled) {
            return 0;
        }
        // a planner that failed must not leave the launch waiting
        let made =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.make(mangled, listing))).ok().flatten();
        let n = made.as_ref().map_or(0, |p| p.kernel.instrs.len());
        self.plans.finish(mangled, made);
        n
    }

    fn make(&self, mangled: &str, listing: &str) -> Option<AheadPlan> {
        let text = format!("\tFunction : {mangled}\n{listing}");
        let mut functions = parse_listing(&text).ok()?;
        let function = functions.pop().filter(|f| functions.is_empty() && !f.instrs.is_empty())?;
        let n = function.instrs.len();
        if self.plans.instructions.fetch_add(n, Ordering::Relaxed) + n > MAX_INSTRUCTIONS {
            return None;
        }
        let kernel = into_kernel(function);
        let mut sites = SiteTable::new();
        let planned = plan_kernel(&self.detector, &kernel, &mut sites, self.mode).ok()?;
        Some(AheadPlan { kernel, planned, sites })
    }
}

impl AheadPlans {
    /// Mark `mangled` as being planned; false when it is (or was) already.
    fn start(&self, mangled: &str) -> bool {
        let Ok(mut slots) = self.slots.lock() else { return false };
        if slots.contains_key(mangled) {
            return false;
        }
        slots.insert(mangled.to_string(), Slot::Planning);
        true
    }

    fn finish(&self, mangled: &str, made: Option<AheadPlan>) {
        if let Ok(mut slots) = self.slots.lock() {
            match made {
                Some(p) => slots.insert(mangled.to_string(), Slot::Ready(Box::new(p))),
                None => slots.remove(mangled),
            };
        }
        self.changed.notify_all();
    }

    /// The plan made ahead for `mangled`, if any: waited for (at most
    /// `wait`) while it is being made. Taken: a later instrumentation of the
    /// function plans anew, and the planner no longer plans it.
    pub fn take(&self, mangled: &str, wait: Duration) -> Option<AheadPlan> {
        let slots = self.slots.lock().ok()?;
        let (mut slots, _) =
            self.changed.wait_timeout_while(slots, wait, |s| matches!(s.get(mangled), Some(Slot::Planning))).ok()?;
        match slots.insert(mangled.to_string(), Slot::Launched) {
            Some(Slot::Ready(p)) => Some(*p),
            // still being made after the wait: the launch plans, and the
            // planner's plan goes to nobody
            Some(Slot::Planning) => {
                slots.insert(mangled.to_string(), Slot::Planning);
                None
            }
            Some(Slot::Launched) | None => None,
        }
    }
}

impl AheadPlan {
    /// Whether NVBit's instructions (offset, text) are the ones planned.
    pub fn matches(&self, instrs: &[(u64, String)]) -> bool {
        instrs.len() == self.kernel.instrs.len()
            && instrs.iter().zip(&self.kernel.instrs).all(|((offset, text), planned)| {
                *offset == planned.offset && instruction_text(text).is_ok_and(|t| t == planned.text)
            })
    }

    /// The plan for a launch of the function shown as `name`, its sites
    /// interned into the run's `sites` with the source lines `lines` gives.
    pub fn adopt(
        mut self,
        name: &str,
        lines: Option<&BTreeMap<u64, SourceLoc>>,
        sites: &mut SiteTable,
    ) -> (SassKernel, ModePlan) {
        let at = |offset: u64| lines.and_then(|t| t.get(&offset).cloned());
        for (ins, view) in self.kernel.instrs.iter_mut().zip(&mut self.kernel.view.instrs) {
            ins.location = at(ins.offset);
            view.location = ins.location.clone();
        }
        self.kernel.view.name = name.to_string();
        let ids: Vec<SiteId> =
            self.sites.iter().map(|(_, s)| sites.intern(name, s.offset, s.instr.clone(), at(s.offset))).collect();
        for p in &mut self.planned.plan.probes {
            // (every probe's site is one of the function's own table)
            p.site = ids.get(p.site.0 as usize).copied().unwrap_or(p.site);
        }
        self.planned.plan.kernel = name.to_string();
        (self.kernel, self.planned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planner() -> AheadPlanner {
        AheadPlanner { plans: Arc::default(), detector: Detector::default(), mode: Mode::Fast }
    }

    const LISTING: &str =
        "        /*0000*/  FADD R1, R2, R3 ;\n        /*0010*/  MUFU.RCP R4, R1 ;\n        /*0020*/  EXIT ;\n";

    #[test]
    fn a_launch_waits_for_the_plan_being_made_and_takes_it_once() {
        let p = planner();
        assert!(p.plans.start("k"));
        assert!(!p.plans.start("k"), "one planner per function");
        let made = p.make("k", LISTING);
        assert!(made.is_some());
        let plans = p.plans.clone();
        let finishing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            plans.finish("k", made);
        });
        let taken = p.plans.take("k", WAIT).expect("waited for it");
        assert_eq!(taken.kernel.instrs.len(), 3);
        assert!(p.plans.take("k", Duration::ZERO).is_none(), "taken once");
        assert!(!p.plans.start("k"), "not planned again once launched");
        finishing.join().expect("joined");
    }

    #[test]
    fn a_plan_still_being_made_after_the_wait_is_left_to_the_launch() {
        let p = planner();
        assert!(p.plans.start("k"));
        assert!(p.plans.take("k", Duration::from_millis(10)).is_none());
        assert!(!p.plans.start("k"), "still being made");
        // a function launched before its planning started is not planned
        assert!(p.plans.take("m", Duration::ZERO).is_none());
        assert_eq!(p.plan("m", LISTING), 0);
        // what does not parse leaves no plan
        assert_eq!(p.plan("j", "not a listing\n"), 0);
        assert!(p.plans.take("j", WAIT).is_none());
    }

    #[test]
    fn nvbit_strings_match_by_offset_and_text() {
        let p = planner().make("k", LISTING).expect("made");
        let nvbit = |third: &str| {
            vec![(0, "FADD R1, R2, R3 ;".into()), (0x10, "MUFU.RCP R4, R1 ;".into()), (0x20, third.into())]
        };
        assert!(p.matches(&nvbit("EXIT ;")));
        assert!(p.matches(&nvbit("EXIT")), "the `;` is not part of the text");
        assert!(!p.matches(&nvbit("RET ;")));
        assert!(!p.matches(&nvbit("EXIT ;")[..2]));
        let mut moved = nvbit("EXIT ;");
        moved[2].0 = 0x30;
        assert!(!p.matches(&moved));
    }
}
