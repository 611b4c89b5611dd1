//! Rendering a rewrite: the lines of appended code and of overwritten
//! instructions (decoded from the words written), made only when read
//! ([`Rendered`]: a rewrite nobody shows renders none), and the text and
//! JSON forms of a [`RewriteOutcome`] that `xfpx dump --rewrite` prints.

use std::fmt::Write as _;
use std::ops::{Deref, Range};
use std::sync::{Arc, OnceLock};

use xfpx_amd_isa::Target;

use super::lower::{Appended, RefusedSite};
use super::outcome::{AnchorLine, KernelState, ListingLine, RewriteOutcome};
use super::view::DecodedInstr;
use crate::builder::Patch;

/// Lines of a rendering, made when first read: a rewrite nobody shows
/// renders none. Reads as a slice of the lines; serialises, compares and
/// prints as their list.
pub struct Rendered<T> {
    lines: OnceLock<Vec<T>>,
    render: Option<Arc<dyn Fn() -> Vec<T> + Send + Sync>>,
}

impl<T> Rendered<T> {
    /// Lines `render` makes when first read.
    pub fn later(render: impl Fn() -> Vec<T> + Send + Sync + 'static) -> Rendered<T> {
        Rendered { lines: OnceLock::new(), render: Some(Arc::new(render)) }
    }
}

impl<T> From<Vec<T>> for Rendered<T> {
    /// Lines already made.
    fn from(lines: Vec<T>) -> Rendered<T> {
        Rendered { lines: OnceLock::from(lines), render: None }
    }
}

impl<T> Default for Rendered<T> {
    fn default() -> Self {
        Rendered { lines: OnceLock::new(), render: None }
    }
}

impl<T> Deref for Rendered<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.lines.get_or_init(|| self.render.as_ref().map(|r| r()).unwrap_or_default())
    }
}

impl<'a, T> IntoIterator for &'a Rendered<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Clone> Clone for Rendered<T> {
    fn clone(&self) -> Self {
        Rendered { lines: self.lines.clone(), render: self.render.clone() }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Rendered<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for Rendered<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Rendered<T> {}

impl<T: serde::Serialize> serde::Serialize for Rendered<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// An overwritten instruction of `instrs` (in address order) and what replaced it.
pub fn anchor_line(target: Target, instrs: &[DecodedInstr], patch: &Patch) -> AnchorLine {
    let original = instrs
        .binary_search_by_key(&patch.addr, |d| d.addr)
        .map(|i| instrs[i].insn.text())
        .unwrap_or_else(|_| "padding".to_string());
    let replaced_by = match xfpx_amd_isa::decode(target, &patch.bytes) {
        Ok(i) => match i.control_flow(patch.addr) {
            xfpx_amd_isa::ControlFlow::Branch { target } => format!("{i}  // {target:#x}"),
            _ => format!("{i} ... (island)"),
        },
        Err(e) => format!("<{e}>"),
    };
    AnchorLine { address: patch.addr, length: patch.bytes.len(), original, replaced_by, reach: None }
}

/// The appended code in `words` (indices into `appended`), instruction by instruction.
pub fn listing(target: Target, appended: &Appended, words: Range<usize>) -> Vec<ListingLine> {
    let end = words.end.min(appended.words.len());
    let from_word = words.start.min(end);
    let bytes: Vec<u8> = appended.words[from_word..end].iter().flat_map(|w| w.to_le_bytes()).collect();
    let base = appended.base + 4 * from_word as u64;
    xfpx_amd_isa::disassemble(target, &bytes, base)
        .map(|(a, r)| ListingLine {
            address: a,
            words: match &r {
                Ok(i) => i.dwords().to_vec(),
                Err(_) => Vec::new(),
            },
            text: match r {
                Ok(i) => match i.control_flow(a) {
                    xfpx_amd_isa::ControlFlow::Branch { target } | xfpx_amd_isa::ControlFlow::CondBranch { target } => {
                        format!("{i}  // {target:#x}")
                    }
                    _ => i.text(),
                },
                Err(e) => format!("<{e}>"),
            },
        })
        .collect()
}

/// The code a rewrite changed in one kernel or function: anchors, refused
/// sites and the appended listing.
/// `C of N FP sites checked` and the refused ones by reason.
pub fn coverage_words(c: &xfpx_common::report::SiteCoverage) -> String {
    let mut s = format!("{} of {} FP sites checked", c.checked, c.fp_sites);
    for r in &c.refused {
        let _ = write!(s, "; {} refused: {}", r.sites, r.reason);
    }
    s
}

/// `, N relays` where entries hop through relays.
fn relays_words(relays: usize) -> String {
    if relays == 0 {
        String::new()
    } else {
        format!(", {relays} relays")
    }
}

fn render_code_changes(s: &mut String, anchors: &[AnchorLine], refused: &[RefusedSite], appended: &[ListingLine]) {
    for a in anchors {
        let reach = a.reach.map(|r| r.words()).unwrap_or_default();
        let _ = writeln!(s, "  {:8x}:  {}  =>  {}{reach}", a.address, a.original, a.replaced_by);
    }
    for r in refused {
        let _ = writeln!(s, "  not instrumented at +{:#x} `{}`: {}", r.offset, r.instr, r.reason);
    }
    if !appended.is_empty() {
        let _ = writeln!(s, "  appended:");
    }
    for l in appended {
        let _ = writeln!(s, "  {:8x}:  {}", l.address, l.text);
    }
}

impl RewriteOutcome {
    /// JSON rendering (the rewritten bytes are not included).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Text rendering for `xfpx dump --rewrite`.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "target {}  mode {:?}", self.target, self.mode);
        match (self.strategy, self.appended_at) {
            (Some(st), Some(at)) => {
                let _ = writeln!(
                    s,
                    "appended {} bytes at {at:#x} ({st:?}); table at {:#x}, {} slots",
                    self.appended_bytes,
                    self.table_address,
                    self.table.slots.len()
                );
            }
            _ => {
                let _ = writeln!(s, "nothing appended");
            }
        }
        for k in &self.kernels {
            let state = match &k.state {
                KernelState::Instrumented => "instrumented".to_string(),
                KernelState::Partial => "partial".to_string(),
                KernelState::Excluded => "excluded".to_string(),
                KernelState::Skipped { reason } => format!("skipped: {reason}"),
            };
            let _ = writeln!(s, "\nkernel {}: {state}", k.name);
            if let Some(c) = &k.coverage {
                let _ = writeln!(s, "  coverage: {}", coverage_words(c));
            }
            if !k.state.instrumented() {
                continue;
            }
            let _ = writeln!(
                s,
                "  {} instructions, {} probes in {} trampolines ({} through islands{}), {} waits added{}",
                k.instructions,
                k.probes,
                k.trampolines,
                k.islands,
                relays_words(k.relays),
                k.waits_added,
                if k.dx10_clamp_cleared { ", DX10_CLAMP cleared" } else { "" }
            );
            if let Some(r) = &k.registers {
                let sgprs = if r.borrowed.sgprs { "SGPRs".to_string() } else { format!("s{}..", r.scratch_sgpr) };
                let vgprs = if r.borrowed.vgprs { "VGPRs".to_string() } else { format!("v{}..", r.scratch_vgpr) };
                let scratch = match (r.borrowed.sgprs, r.borrowed.vgprs) {
                    (false, false) => format!("scratch {sgprs}, {vgprs}"),
                    (true, true) => "scratch: SGPRs and VGPRs dead at each site".to_string(),
                    (true, false) => format!("scratch: SGPRs dead at each site, {vgprs}"),
                    (false, true) => format!("scratch {sgprs}, VGPRs dead at each site"),
                };
                let _ = writeln!(
                    s,
                    "  registers: vgprs {} -> {}, accum_offset {:?} -> {:?}, sgprs {} -> {} ({scratch}){}",
                    r.vgprs_before,
                    r.vgprs_after,
                    r.accum_offset_before,
                    r.accum_offset_after,
                    r.sgprs_before,
                    r.sgprs_after,
                    if r.waves_after < r.waves_before {
                        format!("; occupancy {} -> {} waves per SIMD", r.waves_before, r.waves_after)
                    } else {
                        String::new()
                    }
                );
            }
            if let Some(why) = &k.metadata_counts_kept {
                let _ = writeln!(s, "  metadata register counts not updated: {why}");
            }
            for (f, a, b) in &k.descriptor_diff {
                let _ = writeln!(s, "  descriptor {f}: {a:#010x} -> {b:#010x}");
            }
            render_code_changes(&mut s, &k.anchors, &k.refused_sites, &k.appended);
        }
        for f in &self.functions {
            let state = match &f.state {
                KernelState::Instrumented => "instrumented".to_string(),
                KernelState::Partial => "partial".to_string(),
                KernelState::Excluded => "excluded".to_string(),
                KernelState::Skipped { reason } => format!("skipped: {reason}"),
            };
            let reached = if f.reached_by.is_empty() { "no kernel".to_string() } else { f.reached_by.join(", ") };
            let _ = match f.copy_of {
                Some(original) => writeln!(
                    s,
                    "\nfunction {} copied from {original:#x} to {:#x} for {reached}: {state}",
                    f.name, f.address
                ),
                None => writeln!(s, "\nfunction {} at {:#x} (reached by {reached}): {state}", f.name, f.address),
            };
            if let Some(c) = &f.coverage {
                let _ = writeln!(s, "  coverage: {}", coverage_words(c));
            }
            if !f.state.instrumented() {
                continue;
            }
            let _ = writeln!(
                s,
                "  {} instructions, {} probes in {} trampolines ({} through islands{}), {} waits added",
                f.instructions,
                f.probes,
                f.trampolines,
                f.islands,
                relays_words(f.relays),
                f.waits_added
            );
            match f.scratch {
                Some((sg, vg)) => {
                    let _ = writeln!(s, "  scratch s{sg}.., v{vg}.. (above every register of the kernels reaching it)");
                }
                None => {
                    let _ = writeln!(s, "  scratch: as its kernel's (registers dead at each site)");
                }
            }
            render_code_changes(&mut s, &f.anchors, &f.refused_sites, &f.appended);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::Rendered;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn lines_are_rendered_once_and_only_when_read() {
        let renders = Arc::new(AtomicUsize::new(0));
        let counted = renders.clone();
        let lines = Rendered::later(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            vec!["a", "b"]
        });
        assert_eq!(renders.load(Ordering::Relaxed), 0, "nothing rendered before it is read");
        assert_eq!(&*lines, ["a", "b"]);
        assert_eq!(lines.len(), 2);
        assert_eq!(format!("{lines:?}"), r#"["a", "b"]"#);
        assert_eq!(serde_json::to_string(&lines).expect("serialises"), r#"["a","b"]"#);
        assert_eq!(renders.load(Ordering::Relaxed), 1, "rendered once");
        assert!(Rendered::<u8>::default().is_empty());
    }
}
