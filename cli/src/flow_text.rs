//! The flow section of a report as text: per kernel, one sentence per kind
//! (where it appears, propagates, disappears, reaches a comparison), then
//! a table of source lines with the wave (warp) executions of each state.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use xfpx_common::flow::FlowState;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{FlowRecord, FlowSection, Report};

/// Where a record is: `file:line`, or the instruction offset without lines.
pub fn record_place(r: &FlowRecord) -> String {
    match &r.site.location {
        Some(l) => {
            let o = l.outermost();
            format!("{}:{}", o.file, o.line)
        }
        None => format!("{:#x}", r.site.offset),
    }
}

/// Sort key of a place: by file and line, then offset.
fn place_key(r: &FlowRecord) -> (String, u32, u64) {
    match &r.site.location {
        Some(l) => (l.outermost().file.clone(), l.outermost().line, 0),
        None => (String::new(), 0, r.site.offset),
    }
}

/// Per place and kind, the executions of each state.
pub type LineStates = BTreeMap<((String, u32, u64), String, ExceptionKind), BTreeMap<FlowState, u64>>;

/// The records of one kernel by place and kind.
pub fn line_states(records: &[FlowRecord]) -> LineStates {
    let mut m: LineStates = BTreeMap::new();
    for r in records {
        let e = m.entry((place_key(r), record_place(r), r.kind)).or_default();
        *e.entry(r.state).or_default() += r.occurrences;
    }
    m
}

/// `  (name)` headline words of a flow run: how many kernels had flows.
pub fn headline_words(section: &FlowSection) -> String {
    let with = section.kernels.iter().filter(|k| !k.records.is_empty()).count();
    let records: usize = section.kernels.iter().map(|k| k.records.len()).sum();
    format!("{records} flow record{} in {with} kernel{}", crate::summary::plural(records), crate::summary::plural(with))
}

/// The flow part of a summary (nothing when the report has no flow section).
pub fn flow_text(report: &Report) -> String {
    let mut out = String::new();
    let Some(section) = &report.flow else { return out };
    out.push_str("\nflows (where exceptional values appear, propagate, disappear or reach a comparison):\n");
    if section.kernels.iter().all(|k| k.records.is_empty()) {
        out.push_str("  no exceptional value met a checked instruction\n");
        return out;
    }
    for k in section.kernels.iter().filter(|k| !k.records.is_empty()) {
        let _ = writeln!(out, "  {}:", xfpx_common::names::readable(&k.kernel));
        for s in &k.summary {
            let _ = writeln!(out, "    {s}");
        }
        let states = line_states(&k.records);
        let width = states.keys().map(|(_, p, _)| p.chars().count()).max().unwrap_or(0);
        for ((_, place, kind), by_state) in &states {
            let cells: Vec<String> = by_state.iter().map(|(s, n)| format!("{} {n}", s.name())).collect();
            let _ = writeln!(out, "      {place:<width$}  {:<4}  {}", kind.name(), cells.join(", "));
        }
    }
    out
}
