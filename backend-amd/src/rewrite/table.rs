//! The GPU-side table the appended code writes: one 32-bit slot per
//! (site, kind, format) of a check, per counter, per screened kernel, and
//! two per (site, state, kind) of a flow probe. A check's slot counts the
//! wave executions that found its kind; a counter's slot accumulates; a
//! screening slot ORs the wave's TRAPSTS exception bits; a flow probe's
//! pair counts the wave executions with a lane in its (state, kind) and
//! ORs those lanes' words ([`xfpx_common::flow`]). The appended code loads the table's address from two
//! `s_mov_b32` literals, written when the object is rewritten or, for a
//! patchable object, again by whoever places the table; after the run its
//! bytes decode into report records.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xfpx_common::flow::FlowState;
use xfpx_common::hash::FastKeys;
use xfpx_common::report::{ExceptionRecord, FlowFinding, SiteRef};
use xfpx_common::site::{SiteId, SiteTable};
use xfpx_common::{ExceptionKind, FpFormat};

/// Bytes per slot.
pub const SLOT_BYTES: u64 = 4;

/// Where the appended code finds the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableAddress {
    /// Known before the code is placed: each half of the address takes its
    /// shortest encoding (an inline constant where it fits one).
    Known(u64),
    /// Given when the placed code is emitted: each half is a 32-bit literal
    /// whose address the rewritten object records, so that the table can be
    /// placed again (see [`super::record`]).
    Patchable,
}

/// What a slot holds (a screened kernel has one slot per TRAPSTS bit).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "slot", rename_all = "snake_case")]
pub enum SlotKind {
    /// Wave executions at `site` that produced `kind` in `format`.
    Exception { site: SiteId, kind: ExceptionKind, format: FpFormat },
    /// A plan counter.
    Counter { name: String, per_lane: bool },
    /// Waves of the kernel that ended with TRAPSTS exception bit `bit` set.
    Screen { bit: u8 },
    /// Wave executions at `site` with a lane in (`state`, `kind`); with
    /// `seen`, the OR of those lanes' words instead. `class` is the
    /// instruction's class label.
    Flow { site: SiteId, state: FlowState, kind: ExceptionKind, format: FpFormat, class: String, seen: bool },
}

/// One slot of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSlot {
    /// The kernel's name (shared by its slots).
    #[serde(serialize_with = "name_out", deserialize_with = "name_in")]
    pub kernel: Arc<str>,
    #[serde(flatten)]
    pub kind: SlotKind,
}

fn name_out<S: serde::Serializer>(name: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(name)
}

fn name_in<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    String::deserialize(d).map(Arc::from)
}

/// The table's layout: slot `i` is at byte `4 * i`.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct TableLayout {
    pub slots: Vec<TableSlot>,
    /// Each slot's index by kernel (its number in `kernels`) and kind, for
    /// the first `indexed` slots (all of them but after a layout is read
    /// back: then it is rebuilt); the keys are the rewrite's own, so a fast
    /// hash serves.
    #[serde(skip)]
    index: HashMap<(u32, SlotKind), u32, FastKeys>,
    /// The checks' slots (most of them), by site: per site number, its
    /// newest slot + 1 (0: none), each slot chained to the site's slot
    /// before it (see [`Link`]).
    #[serde(skip)]
    exceptions: Vec<u32>,
    /// Per slot indexed: its kernel's number and, for a check's slot, the
    /// site's slot before it + 1 (0: none).
    #[serde(skip)]
    links: Vec<Link>,
    /// The kernels named so far, numbered.
    #[serde(skip)]
    kernels: HashMap<Arc<str>, u32, FastKeys>,
    /// The kernel named last, and its number.
    #[serde(skip)]
    last: Option<(Arc<str>, u32)>,
    #[serde(skip)]
    indexed: usize,
}

/// A slot's kernel number and, for a check's slot, the one before it at its site.
#[derive(Debug, Clone, Copy)]
struct Link {
    kernel: u32,
    previous: u32,
}

impl PartialEq for TableLayout {
    fn eq(&self, other: &Self) -> bool {
        self.slots == other.slots
    }
}

impl Eq for TableLayout {}

impl std::fmt::Debug for TableLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableLayout").field("slots", &self.slots).finish()
    }
}

impl TableLayout {
    /// An empty layout with room for about `slots` slots.
    pub fn with_capacity(slots: usize) -> TableLayout {
        let mut t = TableLayout::default();
        t.slots.reserve(slots);
        t.links.reserve(slots);
        t
    }

    /// The index of a slot, created on first use (so each key is recorded once).
    pub fn slot(&mut self, kernel: &str, kind: SlotKind) -> u32 {
        if let SlotKind::Exception { site, kind, format } = kind {
            return self.exception_slot(kernel, site, kind, format);
        }
        if self.indexed != self.slots.len() {
            self.reindex();
        }
        let k = self.kernel(kernel).1;
        let i = self.slots.len() as u32;
        let kind = match self.index_slot(k, kind, i) {
            Ok(kind) => kind,
            Err(found) => return found,
        };
        let name = self.last.as_ref().map_or_else(|| kernel.into(), |(name, _)| name.clone());
        self.slots.push(TableSlot { kernel: name, kind });
        self.indexed = self.slots.len();
        i
    }

    /// [`Self::slot`] of a check's kind (most slots): the index of the
    /// slot of (`kernel`, `site`, `kind`, `format`), created on first use.
    pub fn exception_slot(&mut self, kernel: &str, site: SiteId, kind: ExceptionKind, format: FpFormat) -> u32 {
        if self.indexed != self.slots.len() {
            self.reindex();
        }
        let k = self.kernel(kernel).1;
        let i = self.slots.len() as u32;
        if let Err(found) = self.index_exception(k, site, kind, format, i) {
            return found;
        }
        let name = self.last.as_ref().map_or_else(|| kernel.into(), |(name, _)| name.clone());
        self.slots.push(TableSlot { kernel: name, kind: SlotKind::Exception { site, kind, format } });
        self.indexed = self.slots.len();
        i
    }

    /// Indexes check slot `i` of kernel number `k` at `site`; the slot
    /// already indexed under that key instead, if any.
    fn index_exception(
        &mut self,
        k: u32,
        site: SiteId,
        kind: ExceptionKind,
        format: FpFormat,
        i: u32,
    ) -> Result<(), u32> {
        let (found, head) = self.find_exception(k, site, kind, format);
        if let Some(found) = found {
            return Err(found);
        }
        let s = site.0 as usize;
        if self.exceptions.len() <= s {
            self.exceptions.resize(s + 1, 0);
        }
        self.exceptions[s] = i + 1;
        self.links.push(Link { kernel: k, previous: head });
        Ok(())
    }

    /// The first check slot at `site` (newest first) whose kernel is `k`
    /// and whose kind and format are `kind` and `format`; and the site's
    /// newest slot + 1 (0: none).
    fn find_exception(&self, k: u32, site: SiteId, kind: ExceptionKind, format: FpFormat) -> (Option<u32>, u32) {
        let head = self.exceptions.get(site.0 as usize).copied().unwrap_or(0);
        let mut at = head;
        while at != 0 {
            let i = at - 1;
            let link = self.links[i as usize];
            if link.kernel == k {
                if let SlotKind::Exception { kind: e, format: f, .. } = self.slots[i as usize].kind {
                    if e == kind && f == format {
                        return (Some(i), head);
                    }
                }
            }
            at = link.previous;
        }
        (None, head)
    }

    /// Indexes (kernel number `k`, `kind`) as slot `i` and gives `kind`
    /// back; the slot already indexed under that key instead, if any.
    fn index_slot(&mut self, k: u32, kind: SlotKind, i: u32) -> Result<SlotKind, u32> {
        debug_assert_eq!(self.links.len(), i as usize);
        match kind {
            SlotKind::Exception { site, kind: e, format } => self.index_exception(k, site, e, format, i).map(|()| kind),
            other => match self.index.entry((k, other)) {
                Entry::Occupied(o) => Err(*o.get()),
                Entry::Vacant(v) => {
                    let kind = v.key().1.clone();
                    v.insert(i);
                    self.links.push(Link { kernel: k, previous: 0 });
                    Ok(kind)
                }
            },
        }
    }

    /// The layout's shared copy of `kernel`'s name: passed back to
    /// [`Self::slot`], it is known by its address (no comparison of names).
    pub fn shared_name(&mut self, kernel: &str) -> Arc<str> {
        self.kernel(kernel).0.clone()
    }

    /// The shared name of `kernel` and its number (numbered on first use).
    fn kernel(&mut self, kernel: &str) -> &(Arc<str>, u32) {
        // (the name last used itself, still held here, is that name)
        let same = |name: &Arc<str>| std::ptr::eq(name.as_ptr(), kernel.as_ptr()) && name.len() == kernel.len();
        if self.last.as_ref().is_none_or(|(name, _)| !same(name) && **name != *kernel) {
            let next = self.kernels.len() as u32;
            let named = match self.kernels.get_key_value(kernel) {
                Some((name, &k)) => (name.clone(), k),
                None => {
                    let name: Arc<str> = kernel.into();
                    self.kernels.insert(name.clone(), next);
                    (name, next)
                }
            };
            self.last = Some(named);
        }
        self.last.as_ref().expect("named")
    }

    /// Drops the slots from `len` on (those a failed lowering made).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.slots.len() {
            return;
        }
        if self.indexed == self.slots.len() {
            // (newest first: each check slot is then its site's newest)
            for (i, s) in self.slots.iter().enumerate().skip(len).rev() {
                match s.kind {
                    SlotKind::Exception { site, .. } => {
                        if let Some(head) = self.exceptions.get_mut(site.0 as usize).filter(|h| **h == i as u32 + 1) {
                            *head = self.links[i].previous;
                        }
                    }
                    _ => {
                        if let Some(&k) = self.kernels.get(&s.kernel) {
                            self.index.remove(&(k, s.kind.clone()));
                        }
                    }
                }
            }
            self.links.truncate(len);
            self.indexed = len;
        }
        self.slots.truncate(len);
    }

    /// Indexes every slot (the first of equal keys, as a search would find).
    fn reindex(&mut self) {
        self.index.clear();
        self.exceptions.clear();
        self.links.clear();
        self.kernels.clear();
        self.last = None;
        for i in 0..self.slots.len() {
            let (name, k) = self.kernel(&self.slots[i].kernel.clone()).clone();
            self.slots[i].kernel = name;
            // (the first of equal keys keeps its index; a later one is not indexed)
            if self.index_slot(k, self.slots[i].kind.clone(), i as u32).is_err() {
                self.links.push(Link { kernel: k, previous: 0 });
            }
        }
        self.indexed = self.slots.len();
    }

    /// Size of the table in bytes.
    pub fn bytes(&self) -> u64 {
        self.slots.len() as u64 * SLOT_BYTES
    }
}

/// TRAPSTS exception bits (EXCP, same order as the MODE enables): invalid,
/// input denormal, divide by zero, overflow, underflow, inexact, integer divide by zero.
pub const TRAPSTS_EXCP_BITS: u32 = 9;
const TRAPSTS_NAMES: [&str; 7] =
    ["invalid", "input_denormal", "div_zero", "overflow", "underflow", "inexact", "int_div_zero"];

/// What a screened kernel's TRAPSTS bits say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScreenFinding {
    pub kernel: String,
    pub trapsts: u32,
    /// Names of the bits set.
    pub exceptions: Vec<&'static str>,
    /// The report kinds they correspond to (invalid → NaN, div_zero → div0,
    /// overflow → inf, underflow → sub).
    pub kinds: Vec<ExceptionKind>,
}

/// A counter's value after a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CounterValue {
    pub kernel: String,
    pub name: String,
    pub value: u32,
}

/// Everything a run left in the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TableContents {
    /// (kernel, record) for every exception slot that is not zero.
    pub records: Vec<(String, ExceptionRecord)>,
    pub counters: Vec<CounterValue>,
    pub screened: Vec<ScreenFinding>,
    /// (kernel, finding) for every flow count slot that is not zero.
    pub flows: Vec<(String, FlowFinding)>,
}

/// Decodes the table's bytes after a run (`launch` is the launch index the
/// records name as their first).
pub fn decode(layout: &TableLayout, sites: &SiteTable, bytes: &[u8], launch: u64) -> Result<TableContents, String> {
    if (bytes.len() as u64) < layout.bytes() {
        return Err(format!("table has {} bytes, its layout needs {}", bytes.len(), layout.bytes()));
    }
    let mut out = TableContents::default();
    let value = |i: usize| {
        let at = i * SLOT_BYTES as usize;
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    };
    for (i, slot) in layout.slots.iter().enumerate() {
        let v = value(i);
        if v == 0 && !matches!(slot.kind, SlotKind::Counter { .. }) {
            continue;
        }
        match &slot.kind {
            SlotKind::Exception { site, kind, format } => {
                let info = sites.get(*site).ok_or_else(|| format!("slot {i} names unknown site {}", site.0))?;
                out.records.push((
                    slot.kernel.to_string(),
                    ExceptionRecord::new(
                        *kind,
                        *format,
                        SiteRef {
                            id: *site,
                            offset: info.offset,
                            instr: info.instr.to_string(),
                            location: info.location.clone(),
                        },
                        launch,
                        u64::from(v),
                    ),
                ));
            }
            SlotKind::Counter { name, .. } => {
                out.counters.push(CounterValue { kernel: slot.kernel.to_string(), name: name.clone(), value: v });
            }
            SlotKind::Flow { seen: true, .. } => {}
            SlotKind::Flow { site, state, kind, format, class, seen: false } => {
                let info = sites.get(*site).ok_or_else(|| format!("slot {i} names unknown site {}", site.0))?;
                // the lowering puts each count's classes slot right after it
                let j = i + 1;
                let paired = layout.slots.get(j).is_some_and(|s| {
                    s.kernel == slot.kernel
                        && matches!(&s.kind, SlotKind::Flow { site: s2, state: t2, kind: k2, seen: true, .. }
                            if s2 == site && t2 == state && k2 == kind)
                });
                if !paired {
                    return Err(format!("flow slot {i} is not followed by its classes slot"));
                }
                out.flows.push((
                    slot.kernel.to_string(),
                    FlowFinding {
                        state: *state,
                        kind: *kind,
                        format: *format,
                        site: SiteRef {
                            id: *site,
                            offset: info.offset,
                            instr: info.instr.to_string(),
                            location: info.location.clone(),
                        },
                        class: class.clone(),
                        launch,
                        occurrences: u64::from(v),
                        seen: (value(j) as u16) & xfpx_common::flow::lane::CLASSES,
                    },
                ));
            }
            SlotKind::Screen { bit } => {
                let bits = 1u32 << bit;
                match out.screened.iter_mut().find(|f| *f.kernel == *slot.kernel) {
                    Some(f) => *f = screen_finding(&slot.kernel, f.trapsts | bits),
                    None => out.screened.push(screen_finding(&slot.kernel, bits)),
                }
            }
        }
    }
    Ok(out)
}

impl TableContents {
    /// Adds this run's findings to a report: every exception record of the
    /// table (launch `launch`), and for screened kernels a note per kernel
    /// naming the TRAPSTS exceptions its waves ended with.
    pub fn record_into(&self, collector: &mut xfpx_common::report::Collector, launch: u64) {
        for (kernel, r) in &self.records {
            collector.record(kernel, r.kind, r.format, r.site.clone(), launch, r.occurrences);
        }
        for (kernel, f) in &self.flows {
            collector.record_flow(kernel, FlowFinding { launch, ..f.clone() });
        }
        for f in &self.screened {
            collector.run_mut().notes.push(format!(
                "screen: kernel {} ended with TRAPSTS {:#x} ({})",
                f.kernel,
                f.trapsts,
                f.exceptions.join(", ")
            ));
        }
    }
}

/// Interprets TRAPSTS exception bits.
pub fn screen_finding(kernel: &str, trapsts: u32) -> ScreenFinding {
    let exceptions =
        TRAPSTS_NAMES.iter().enumerate().filter(|(b, _)| trapsts & (1 << b) != 0).map(|(_, n)| *n).collect();
    let mut kinds = Vec::new();
    for (bit, kind) in
        [(0, ExceptionKind::Nan), (2, ExceptionKind::Div0), (3, ExceptionKind::Inf), (4, ExceptionKind::Sub)]
    {
        if trapsts & (1 << bit) != 0 {
            kinds.push(kind);
        }
    }
    ScreenFinding { kernel: kernel.to_string(), trapsts, exceptions, kinds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn slot_index_follows_truncation_and_read_back() {
        let bit = |bit| SlotKind::Screen { bit };
        let mut t = TableLayout::default();
        assert_eq!((t.slot("k", bit(0)), t.slot("k", bit(1))), (0, 1));
        // Dropped slots are made again, after the kept ones.
        t.truncate(1);
        assert_eq!(t.slot("j", bit(1)), 1);
        assert_eq!(t.slot("k", bit(1)), 2);
        assert_eq!(t.slots.len(), 3);
        // A layout read back finds its slots without making them again.
        let mut back: TableLayout = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        assert_eq!((back.slot("k", bit(1)), back.slot("k", bit(0)), back.slot("k", bit(2))), (2, 0, 3));
        // Checks' slots (indexed apart) too.
        let nan = |site| SlotKind::Exception { site: SiteId(site), kind: ExceptionKind::Nan, format: FpFormat::F32 };
        assert_eq!((t.slot("k", nan(7)), t.slot("j", nan(7)), t.slot("k", nan(7))), (3, 4, 3));
        t.truncate(4);
        assert_eq!((t.slot("k", nan(8)), t.slot("j", nan(7)), t.slot("k", nan(7))), (4, 5, 3));
        let mut back: TableLayout = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!((back.slot("j", nan(7)), back.slot("k", nan(8)), back.slot("j", nan(8))), (5, 4, 6));
    }

    #[test]
    fn slots_are_unique_per_key_and_decode() {
        let mut sites = SiteTable::new();
        let s = sites.intern("k", 0x40, "v_add_f32_e32 v1, v2, v3", None);
        let mut t = TableLayout::default();
        let a = t.slot("k", SlotKind::Exception { site: s, kind: ExceptionKind::Nan, format: FpFormat::F32 });
        let b = t.slot("k", SlotKind::Exception { site: s, kind: ExceptionKind::Inf, format: FpFormat::F32 });
        assert_eq!(t.slot("k", SlotKind::Exception { site: s, kind: ExceptionKind::Nan, format: FpFormat::F32 }), a);
        let c = t.slot("k", SlotKind::Screen { bit: 0 });
        let d = t.slot("k", SlotKind::Screen { bit: 4 });
        assert_eq!((a, b, c, d, t.bytes()), (0, 1, 2, 3, 16));
        let mut bytes = vec![0u8; 16];
        bytes[0] = 3;
        bytes[8] = 2;
        bytes[12] = 1;
        let got = decode(&t, &sites, &bytes, 0).expect("decodes");
        assert_eq!(got.screened.len(), 1);
        assert_eq!(got.screened[0].trapsts, 0b1_0001);
        assert_eq!(got.records.len(), 1);
        assert_eq!(got.records[0].1.kind, ExceptionKind::Nan);
        assert_eq!(got.records[0].1.occurrences, 3);
        assert_eq!(got.screened[0].kinds, vec![ExceptionKind::Nan, ExceptionKind::Sub]);
        assert!(decode(&t, &sites, &bytes[..8], 0).is_err());
        let run = xfpx_common::report::RunInfo {
            vendor: "amd-emulated".into(),
            device: "test".into(),
            target: None,
            command: Vec::new(),
            mode: "detect".into(),
            started_unix: 0,
            finished_unix: None,
            exit: xfpx_common::report::ExitStatus::Unknown,
            sample_every: 1,
            sample_auto: false,
            truncated: false,
            notes: Vec::new(),
            attached: true,
        };
        let mut c = xfpx_common::report::Collector::new(run, None);
        got.record_into(&mut c, 0);
        let report = c.report();
        assert_eq!(report.records().count(), 1);
        assert_eq!(report.run.notes.len(), 1);
    }
}
