//! Flows in a comparison: where both reports have a flow section (`--tool
//! flow`), each kernel's sentences on each side and, per source line, the
//! (kind, state) pairs each side recorded there and what only one side has.

use crate::flow_text::record_place;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use xfpx_common::report::{FlowSection, KernelFlow};

/// One source line's flows on each side, as `kind state` items.
#[derive(Debug, Clone, Serialize)]
pub struct FlowLineDiff {
    /// `file:line`, or the instruction offset where a report has no lines.
    pub place: String,
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

impl FlowLineDiff {
    pub fn differs(&self) -> bool {
        !self.only_a.is_empty() || !self.only_b.is_empty()
    }
}

/// A kernel's flows on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct KernelFlows {
    pub summary_a: Vec<String>,
    pub summary_b: Vec<String>,
    pub lines: Vec<FlowLineDiff>,
}

impl KernelFlows {
    pub fn differs(&self) -> bool {
        self.lines.iter().any(FlowLineDiff::differs)
    }
}

/// `file:line` -> the `kind state` items of a kernel's records there.
fn by_place(k: Option<&KernelFlow>) -> BTreeMap<String, BTreeSet<String>> {
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in k.iter().flat_map(|k| &k.records) {
        m.entry(record_place(r)).or_default().insert(format!("{} {}", r.kind.name(), r.state.name()));
    }
    m
}

/// The flows of kernel `a` (named so in report A) against `b` (in B), when
/// both reports have a flow section.
pub fn kernel_flows(
    sections: (Option<&FlowSection>, Option<&FlowSection>),
    a: Option<&str>,
    b: Option<&str>,
) -> Option<KernelFlows> {
    let (Some(sa), Some(sb)) = sections else { return None };
    let ka = a.and_then(|n| sa.kernel(n));
    let kb = b.and_then(|n| sb.kernel(n));
    let (pa, pb) = (by_place(ka), by_place(kb));
    let places: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    let empty = BTreeSet::new();
    let mut lines: Vec<FlowLineDiff> = places
        .into_iter()
        .map(|place| {
            let (ia, ib) = (pa.get(place).unwrap_or(&empty), pb.get(place).unwrap_or(&empty));
            FlowLineDiff {
                place: place.clone(),
                a: ia.iter().cloned().collect(),
                b: ib.iter().cloned().collect(),
                only_a: ia.difference(ib).cloned().collect(),
                only_b: ib.difference(ia).cloned().collect(),
            }
        })
        .collect();
    lines.sort_by_key(|l| super::model::line_order(&l.place));
    Some(KernelFlows {
        summary_a: ka.map(|k| k.summary.clone()).unwrap_or_default(),
        summary_b: kb.map(|k| k.summary.clone()).unwrap_or_default(),
        lines,
    })
}
