//! Instruction sites: a stable identity for "this instruction of this
//! kernel", and the host-side table that maps ids back to what a user
//! needs to see (kernel, offset, instruction text, source line).

use serde::{Deserialize, Serialize};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::hash::FastKeys;

/// Index of a site in its [`SiteTable`]. Ids are dense and fit the 32-bit
/// keys of the device-side tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SiteId(pub u32);

/// A source position: the innermost frame of an instruction (where its
/// code was written, a header's inline function included) and, when that
/// code was inlined, the outermost frame it was inlined into (the line of
/// the kernel or called function the compiler emitted it in).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    /// Column (from 1), when the line table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The outermost frame, when this one was inlined into it (its own
    /// `inlined_at` is always absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inlined_at: Option<Box<SourceLoc>>,
}

impl SourceLoc {
    /// `file:line`, no column, not inlined.
    pub fn new(file: impl Into<String>, line: u32) -> SourceLoc {
        SourceLoc { file: file.into(), line, column: None, inlined_at: None }
    }

    /// This position, inlined into `outer` (no change when `outer` is this
    /// very position).
    pub fn inlined_into(mut self, outer: SourceLoc) -> SourceLoc {
        let same = outer.file == self.file && outer.line == self.line && outer.column == self.column;
        if !same {
            self.inlined_at = Some(Box::new(SourceLoc { inlined_at: None, ..outer }));
        }
        self
    }

    /// The user's line: the outermost frame when inlined, else this one.
    pub fn outermost(&self) -> &SourceLoc {
        self.inlined_at.as_deref().unwrap_or(self)
    }
}

/// `file:line`, and ` (inlined at file:line)` when inlined.
impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(outer) = &self.inlined_at {
            write!(f, " (inlined at {}:{})", outer.file, outer.line)?;
        }
        Ok(())
    }
}

/// What the host knows of a site. The kernel's name and the instruction's
/// text are shared (with the kernel's other sites, and with the view the
/// text came from), not copied per site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteInfo {
    pub kernel: Arc<str>,
    /// Byte offset of the instruction from the kernel's start.
    pub offset: u64,
    /// Disassembly text of the instruction.
    pub instr: Arc<str>,
    pub location: Option<SourceLoc>,
}

/// All sites of a run. A site keeps its id for the whole run, however many
/// times its kernel is loaded or instrumented.
#[derive(Debug, Default, Clone)]
pub struct SiteTable {
    sites: Vec<SiteInfo>,
    /// The sites of each kernel, by offset.
    index: HashMap<Arc<str>, KernelSites, FastKeys>,
}

/// One kernel's sites: its name, shared by them, and their ids by offset.
#[derive(Debug, Default, Clone)]
struct KernelSites {
    name: Arc<str>,
    by_offset: HashMap<u64, SiteId, FastKeys>,
}

impl SiteTable {
    pub fn new() -> SiteTable {
        SiteTable::default()
    }

    /// Room for `additional` more sites of `kernel` (a planner that knows
    /// how many it may make spares the table growing step by step).
    pub fn reserve(&mut self, kernel: &str, additional: usize) {
        self.sites.reserve(additional);
        self.kernel_sites(kernel).by_offset.reserve(additional);
    }

    /// The sites of `kernel`, made empty on first sight.
    fn kernel_sites(&mut self, kernel: &str) -> &mut KernelSites {
        let name: Arc<str> = match self.index.get_key_value(kernel) {
            Some((name, _)) => name.clone(),
            None => kernel.into(),
        };
        self.index.entry(name.clone()).or_insert_with(|| KernelSites { name, by_offset: HashMap::default() })
    }

    /// The id of (kernel, offset), creating the site on first sight (only
    /// then is `instr` made into the site's text: an `Arc<str>` is shared).
    pub fn intern(
        &mut self,
        kernel: &str,
        offset: u64,
        instr: impl Into<Arc<str>>,
        location: Option<SourceLoc>,
    ) -> SiteId {
        let sites = match self.index.get_mut(kernel) {
            Some(sites) => sites,
            None => {
                let name: Arc<str> = kernel.into();
                self.index.entry(name.clone()).or_insert(KernelSites { name, by_offset: HashMap::default() })
            }
        };
        let next = SiteId(u32::try_from(self.sites.len()).unwrap_or(u32::MAX));
        match sites.by_offset.entry(offset) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                e.insert(next);
                self.sites.push(SiteInfo { kernel: sites.name.clone(), offset, instr: instr.into(), location });
                next
            }
        }
    }

    pub fn lookup(&self, kernel: &str, offset: u64) -> Option<SiteId> {
        self.index.get(kernel)?.by_offset.get(&offset).copied()
    }

    pub fn get(&self, id: SiteId) -> Option<&SiteInfo> {
        self.sites.get(id.0 as usize)
    }

    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// Give the sites of `kernel` that have no source position the one
    /// `at(offset)` knows (line tables read after the sites were made).
    pub fn locate(&mut self, kernel: &str, at: impl Fn(u64) -> Option<SourceLoc>) {
        let Some(ids) = self.index.get(kernel) else { return };
        for id in ids.by_offset.values() {
            let s = &mut self.sites[id.0 as usize];
            if s.location.is_none() {
                s.location = at(s.offset);
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (SiteId, &SiteInfo)> {
        self.sites.iter().enumerate().map(|(i, s)| (SiteId(i as u32), s))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let mut t = SiteTable::new();
        let a = t.intern("k", 0x10, "FADD R1, R2, R3", None);
        let b = t.intern("k", 0x20, "FMUL R1, R2, R3", None);
        let a2 = t.intern("k", 0x10, "ignored", None);
        assert_eq!(a, a2);
        assert_ne!(a, b);
        assert_eq!(t.get(a).map(|s| &*s.instr), Some("FADD R1, R2, R3"));
        assert_eq!(t.lookup("k", 0x20), Some(b));
        assert_eq!(t.lookup("other", 0x20), None);
    }

    #[test]
    fn late_line_tables_fill_only_missing_positions() {
        let mut t = SiteTable::new();
        let known = SourceLoc::new("a.cu", 3);
        let a = t.intern("k", 0x10, "FADD R1, R2, R3", Some(known.clone()));
        let b = t.intern("k", 0x20, "FMUL R1, R2, R3", None);
        let c = t.intern("other", 0x20, "FMUL R1, R2, R3", None);
        t.locate("k", |off| Some(SourceLoc::new("b.cu", off as u32)));
        assert_eq!(t.get(a).and_then(|s| s.location.clone()), Some(known));
        assert_eq!(t.get(b).and_then(|s| s.location.clone()).map(|l| l.to_string()), Some("b.cu:32".into()));
        assert_eq!(t.get(c).and_then(|s| s.location.clone()), None);
    }

    #[test]
    fn inlined_positions_name_the_outermost_frame() {
        let inner = SourceLoc { column: Some(12), ..SourceLoc::new("<cuda>/include/cuda_fp16.hpp", 264) };
        let at = inner.clone().inlined_into(SourceLoc::new("half.cu", 13));
        assert_eq!(at.to_string(), "<cuda>/include/cuda_fp16.hpp:264 (inlined at half.cu:13)");
        assert_eq!(at.outermost(), &SourceLoc::new("half.cu", 13));
        assert_eq!(inner.outermost(), &inner);
        // the same frame twice is no inlining
        assert_eq!(inner.clone().inlined_into(inner.clone()), inner);
        // written only when present: a plain position reads as before
        let plain = serde_json::to_string(&SourceLoc::new("a.cu", 7)).unwrap();
        assert_eq!(plain, r#"{"file":"a.cu","line":7}"#);
        let back: SourceLoc = serde_json::from_str(&serde_json::to_string(&at).unwrap()).unwrap();
        assert_eq!(back, at);
    }
}
