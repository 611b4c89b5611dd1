//! The flow records of one kernel as sentences a person can follow, one
//! per kind: where the kind appears (and from what), the lines it
//! propagates through, where it disappears (and in what) and where it
//! reaches a comparison. Lines are the user's (the outermost frame of an
//! inlined position); without line tables, instruction offsets. Where a
//! kind appears and goes on to later lines, what disappears or is compared
//! on its own line is left out (the steps of a division, say).

use super::{FlowClass, FlowState};
use crate::fp::ExceptionKind;
use crate::report::FlowRecord;
use std::collections::{BTreeMap, BTreeSet};

/// One kind's sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    pub kind: ExceptionKind,
    pub text: String,
}

/// Where a record is, as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Line { file: String, line: u32 },
    Offset(u64),
}

fn place(r: &FlowRecord) -> Place {
    match &r.site.location {
        Some(l) => {
            let o = l.outermost();
            Place::Line { file: o.file.clone(), line: o.line }
        }
        None => Place::Offset(r.site.offset),
    }
}

/// What an appearance came from, from the instruction's class and the
/// classes its sources had.
fn cause(r: &FlowRecord) -> &'static str {
    let has = |c: FlowClass| r.sources.contains(&c);
    let op = r.class.rsplit('.').next().unwrap_or("");
    match r.kind {
        ExceptionKind::Div0 => "division by zero",
        ExceptionKind::Nan => match op {
            "div" if has(FlowClass::Zero) => "0/0",
            "div" if has(FlowClass::Inf) => "inf/inf",
            "mul" | "fma" if has(FlowClass::Zero) && has(FlowClass::Inf) => "0*inf",
            "add" | "fma" if has(FlowClass::Inf) => "inf-inf",
            "sqrt" | "rsqrt" | "transcendental" => "operand outside the domain",
            _ => "invalid operation",
        },
        ExceptionKind::Inf if op == "div" && has(FlowClass::Sub) => "x/subnormal",
        ExceptionKind::Inf => "overflow",
        ExceptionKind::Sub => "underflow",
    }
}

/// What kind of instruction a record's is, for "disappears ... in a max".
fn what(r: &FlowRecord) -> String {
    let text = r.site.instr.to_ascii_lowercase();
    let op = r.class.rsplit('.').next().unwrap_or("");
    let s = match op {
        "minmax" if text.contains("max") || (text.contains("fmnmx") && text.contains("!pt")) => "a max",
        "minmax" if text.contains("min") || text.contains("fmnmx") => "a min",
        "minmax" => "a min/max",
        "sel" => "a select",
        "cmp" => "a comparison",
        "conversion" => "a conversion",
        "div" => "a division step",
        "add" => "an add",
        "mul" => "a multiply",
        "fma" => "a fused multiply-add",
        "sqrt" => "a square root",
        "rsqrt" => "a reciprocal square root",
        "transcendental" => "a transcendental",
        _ => "an instruction",
    };
    let mut s = s.to_string();
    if r.state == FlowState::Disappear && r.results == [FlowClass::Zero] {
        s.push_str(" (result 0)");
    }
    s
}

fn kind_name(k: ExceptionKind) -> &'static str {
    match k {
        ExceptionKind::Nan => "NaN",
        ExceptionKind::Inf | ExceptionKind::Div0 => "Inf",
        ExceptionKind::Sub => "A subnormal",
    }
}

/// `line 42`, `lines 43–44 and 47`, `a.hip:3 and b.h:9`, `0x40`.
fn places_text(places: &[Place], one_file: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut lines = 0;
    let mut i = 0;
    while i < places.len() {
        match &places[i] {
            Place::Line { file, line } => {
                let mut j = i;
                while let (Some(Place::Line { file: f2, line: l2 }), Place::Line { line: l1, .. }) =
                    (places.get(j + 1), &places[j])
                {
                    if f2 != file || *l2 != l1 + 1 {
                        break;
                    }
                    j += 1;
                }
                let last = match &places[j] {
                    Place::Line { line, .. } => *line,
                    Place::Offset(_) => *line,
                };
                lines += j - i + 1;
                let prefix = if one_file { String::new() } else { format!("{file}:") };
                parts.push(if last == *line { format!("{prefix}{line}") } else { format!("{prefix}{line}–{last}") });
                i = j + 1;
            }
            Place::Offset(o) => {
                parts.push(format!("{o:#x}"));
                i += 1;
            }
        }
    }
    let joined = match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
    };
    let any_line = places.iter().any(|p| matches!(p, Place::Line { .. }));
    match (any_line && one_file, lines) {
        (true, 1) => format!("line {joined}"),
        (true, _) => format!("lines {joined}"),
        (false, _) if any_line => joined,
        _ => format!("instruction{} {joined}", if places.len() > 1 { "s" } else { "" }),
    }
}

/// Places with their notes: `line 42 (0/0)`, `lines 12 (0/0) and 30
/// (inf-inf)`, `instructions 0x74 in a max and 0x80 in a min` (each note
/// between `open` and `close`).
fn noted(m: &BTreeMap<Place, BTreeSet<String>>, one_file: bool, open: &str, close: &str) -> String {
    let items: Vec<String> = m
        .iter()
        .map(|(p, notes)| {
            let notes: Vec<&str> = notes.iter().map(String::as_str).filter(|n| !n.is_empty()).collect();
            let at = match p {
                Place::Line { file, line } if !one_file => format!("{file}:{line}"),
                Place::Line { line, .. } => line.to_string(),
                Place::Offset(o) => format!("{o:#x}"),
            };
            if notes.is_empty() {
                at
            } else {
                format!("{at}{open}{}{close}", notes.join(", "))
            }
        })
        .collect();
    let joined = match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    };
    let lines = m.keys().filter(|p| matches!(p, Place::Line { .. })).count();
    let s = if m.len() > 1 { "s" } else { "" };
    match (lines, one_file) {
        (0, _) => format!("instruction{s} {joined}"),
        (_, true) => format!("line{s} {joined}"),
        (_, false) => joined,
    }
}

/// One sentence per kind seen in `records` (NaN, Inf with division by
/// zero, subnormal), in that order.
pub fn stories(records: &[FlowRecord]) -> Vec<Story> {
    let files: BTreeSet<&str> =
        records.iter().filter_map(|r| r.site.location.as_ref()).map(|l| l.outermost().file.as_str()).collect();
    let one_file = files.len() <= 1;
    let mut out = Vec::new();
    for kind in [ExceptionKind::Nan, ExceptionKind::Inf, ExceptionKind::Sub] {
        let of_kind: Vec<&FlowRecord> = records
            .iter()
            .filter(|r| r.kind == kind || (kind == ExceptionKind::Inf && r.kind == ExceptionKind::Div0))
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        // per state: place -> the notes of that place (causes, instructions)
        let mut by_state: BTreeMap<FlowState, BTreeMap<Place, BTreeSet<String>>> = BTreeMap::new();
        for r in &of_kind {
            let note = match r.state {
                FlowState::Appear => cause(r).to_string(),
                FlowState::Disappear => what(r),
                FlowState::Propagate | FlowState::Compare => String::new(),
            };
            by_state.entry(r.state).or_default().entry(place(r)).or_default().insert(note);
        }
        let appear = by_state.remove(&FlowState::Appear).unwrap_or_default();
        let mut propagate = by_state.remove(&FlowState::Propagate).unwrap_or_default();
        propagate.retain(|p, _| !appear.contains_key(p));
        let mut disappear = by_state.remove(&FlowState::Disappear).unwrap_or_default();
        let mut compare = by_state.remove(&FlowState::Compare).unwrap_or_default();
        // at a line where the kind appears, a disappearance or comparison
        // is the line's own work (a division's steps) when the value goes
        // on to a later line
        let last = propagate.keys().chain(disappear.keys()).chain(compare.keys()).max().cloned();
        let inner = |p: &Place| appear.contains_key(p) && last.as_ref().is_some_and(|l| l > p);
        disappear.retain(|p, _| !inner(p));
        compare.retain(|p, _| !inner(p));
        let mut parts = Vec::new();
        if appear.is_empty() {
            parts.push(format!("{} comes from memory or an argument", kind_name(kind)));
        } else {
            parts.push(format!("{} appears at {}", kind_name(kind), noted(&appear, one_file, " (", ")")));
        }
        if !propagate.is_empty() {
            let places: Vec<Place> = propagate.keys().cloned().collect();
            parts.push(format!("propagates through {}", places_text(&places, one_file)));
        }
        if !disappear.is_empty() {
            parts.push(format!("disappears at {}", noted(&disappear, one_file, " in ", "")));
        }
        if !compare.is_empty() {
            let places: Vec<Place> = compare.keys().cloned().collect();
            parts.push(format!("reaches a comparison at {}", places_text(&places, one_file)));
        }
        out.push(Story { kind, text: format!("{}.", parts.join(", ")) });
    }
    out
}
