//! Kernels whose instrumented code is still being prepared: first
//! launched before the disassembly NVBit needs for them was cached, they
//! run screened while it is made in the background
//! ([`crate::prefill::at_launch`]); this counts their launches for the
//! summary.

use std::collections::BTreeSet;

/// The kernels being prepared now, and what waiting cost so far.
#[derive(Debug, Default)]
pub struct PreparingKernels {
    /// Their mangled names.
    now: BTreeSet<String>,
    /// Kernels that waited (now or before), and their launches meanwhile.
    kernels: u64,
    launches: u64,
}

impl PreparingKernels {
    /// `kernel` runs uninstrumented until [`PreparingKernels::ready`].
    pub fn start(&mut self, kernel: &str) {
        if self.now.insert(kernel.to_string()) {
            self.kernels += 1;
        }
    }

    /// Whether a launch of `kernel` must run uninstrumented (counted).
    pub fn launch(&mut self, kernel: &str) -> bool {
        if !self.now.contains(kernel) {
            return false;
        }
        self.launches += 1;
        true
    }

    /// `kernel` can be instrumented; whether it was being prepared.
    pub fn ready(&mut self, kernel: &str) -> bool {
        self.now.remove(kernel)
    }

    /// Whether `kernel` is being prepared.
    pub fn contains(&self, kernel: &str) -> bool {
        self.now.contains(kernel)
    }

    /// The summary's line (none when no kernel waited).
    pub fn note(&self) -> Option<String> {
        if self.kernels == 0 {
            return None;
        }
        let still = if self.now.is_empty() {
            String::new()
        } else {
            format!("; {} were still being prepared when the program ended", self.now.len())
        };
        let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        Some(format!(
            "{} of {} ran screened instead of instrumented while the disassembly NVBit needs \
             for them was made in the background (their first launches in a run that did not find it \
             cached{still}); a later run instruments them from their first launch \
             (XFPX_BACKGROUND_DISASSEMBLY=0 waits for the disassembly instead)",
            count(self.launches, "launch", "launches"),
            count(self.kernels, "kernel", "kernels")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_while_preparing_are_counted_until_ready() {
        let mut p = PreparingKernels::default();
        assert_eq!(p.note(), None);
        assert!(!p.launch("k"));
        p.start("k");
        p.start("k");
        assert!(p.launch("k") && p.launch("k") && p.contains("k"));
        assert!(p.ready("k") && !p.ready("k") && !p.launch("k"));
        p.start("j");
        assert!(p.launch("j"));
        let note = p.note().expect("a note");
        assert!(note.starts_with("3 launches of 2 kernels ran screened"), "{note}");
        assert!(note.contains("; 1 were still being prepared"), "{note}");
    }
}
