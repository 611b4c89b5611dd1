//! The comparison as text for a person: the two reports, per kernel its
//! differing lines with their causes (and how many lines agree), kernels
//! only one side has, the output buffers, and a one-line result.

use super::buffers::BufferDiff;
use super::flows::KernelFlows;
use super::model::{Class, Comparison, KernelDiff, ReportInfo, Side};
use std::fmt::Write as _;
use xfpx_common::report::Denormals;

fn side(r: &ReportInfo) -> String {
    let target = r.target.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
    format!("{} ({}{target})", r.file, r.vendor)
}

fn classes(c: &[Class]) -> String {
    if c.is_empty() {
        return "none".to_string();
    }
    c.iter().map(|c| format!("{} ({}) x{}", c.kind, c.format, c.occurrences)).collect::<Vec<_>>().join(", ")
}

fn denormals(d: Option<&Denormals>) -> String {
    d.map_or_else(|| "unknown".to_string(), |d| format!("f32 {}, f16/f64 {}", d.f32, d.f16_f64))
}

fn letter(s: Side) -> &'static str {
    match s {
        Side::A => "A",
        Side::B => "B",
    }
}

fn kernel(out: &mut String, k: &KernelDiff) {
    if let Some(s) = k.only_in {
        let lines = k.lines.len();
        let _ = writeln!(out, "kernel {}: only in {} ({lines} lines with findings)", k.display_name(), letter(s));
        if let Some(f) = &k.flows {
            flows(out, f);
        }
        return;
    }
    let differing: Vec<_> = k.lines.iter().filter(|l| l.differs()).collect();
    let _ = writeln!(
        out,
        "kernel {}: {} of {} lines with findings differ",
        k.display_name(),
        differing.len(),
        k.lines.len()
    );
    if k.denormals_a != k.denormals_b {
        let _ = writeln!(
            out,
            "  denormals: A {}; B {}",
            denormals(k.denormals_a.as_ref()),
            denormals(k.denormals_b.as_ref())
        );
    }
    if let Some(f) = &k.flows {
        flows(out, f);
    }
    for l in differing {
        let _ = writeln!(out, "  {}: A: {}; B: {}", l.place, classes(&l.a), classes(&l.b));
        if !l.only_a.is_empty() {
            let _ = writeln!(out, "    only A: {}", l.only_a.join(", "));
        }
        if !l.only_b.is_empty() {
            let _ = writeln!(out, "    only B: {}", l.only_b.join(", "));
        }
        for c in &l.causes {
            let _ = writeln!(out, "    cause: {c}");
        }
    }
}

/// The flows of a kernel on each side: the sentences, then the lines
/// whose flows differ.
fn flows(out: &mut String, f: &KernelFlows) {
    for (s, summary) in [("A", &f.summary_a), ("B", &f.summary_b)] {
        if summary.is_empty() {
            let _ = writeln!(out, "  flows {s}: none");
        }
        for line in summary {
            let _ = writeln!(out, "  flows {s}: {line}");
        }
    }
    let differing: Vec<_> = f.lines.iter().filter(|l| l.differs()).collect();
    let _ = writeln!(out, "  flows differ on {} of {} lines", differing.len(), f.lines.len());
    let items = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    for l in differing {
        let _ = writeln!(out, "  {}: flows A: {}; B: {}", l.place, items(&l.a), items(&l.b));
        if !l.only_a.is_empty() {
            let _ = writeln!(out, "    only A: {}", l.only_a.join(", "));
        }
        if !l.only_b.is_empty() {
            let _ = writeln!(out, "    only B: {}", l.only_b.join(", "));
        }
    }
}

fn buffer(out: &mut String, d: &BufferDiff) {
    if let Some(s) = d.only_in {
        let _ = writeln!(out, "  {}: only in {}", d.buffer, letter(s));
        return;
    }
    if d.size_a != d.size_b {
        let _ = writeln!(out, "  {} ({}): sizes differ ({} and {} bytes)", d.buffer, d.elem, d.size_a, d.size_b);
        return;
    }
    if d.identical {
        let _ = writeln!(out, "  {} ({}): identical ({} elements)", d.buffer, d.elem, d.elements);
        return;
    }
    let shown = d.as_f32.as_deref().unwrap_or(d);
    let ulp = match shown.max_ulp {
        Some(u64::MAX) => ", a NaN against a number".to_string(),
        Some(u) => format!(", max {u} ULP"),
        None => String::new(),
    };
    let first = shown
        .first_difference
        .as_ref()
        .map(|f| format!(", first at [{}]: A {}, B {}", f.index, f.a, f.b))
        .unwrap_or_default();
    let read_as = if d.as_f32.is_some() { " read as f32" } else { "" };
    let _ = writeln!(
        out,
        "  {} ({}{read_as}): {} of {} elements differ{ulp}{first}",
        d.buffer, shown.elem, shown.differing, shown.elements
    );
    for c in &d.causes {
        let _ = writeln!(out, "    cause: {c}");
    }
}

/// The whole comparison.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "xfpx compare: A = {}, B = {}", side(&c.a), side(&c.b));
    for k in &c.kernels {
        kernel(&mut out, k);
    }
    if !c.outputs.is_empty() {
        let _ = writeln!(out, "output buffers:");
        for d in &c.outputs {
            buffer(&mut out, d);
        }
    }
    if c.same {
        let _ = writeln!(out, "result: no difference");
    } else {
        let lines: usize = c.kernels.iter().map(|k| k.lines.iter().filter(|l| l.differs()).count()).sum();
        let only = c.kernels.iter().filter(|k| k.only_in.is_some()).count();
        let bufs = c.outputs.iter().filter(|o| !o.identical).count();
        let _ =
            writeln!(out, "result: different ({lines} lines, {only} kernels on one side only, {bufs} output buffers)");
    }
    out
}
