//! The comparison as one self-contained HTML page (the report page's
//! style): the two reports, per kernel a table of its lines (classes on
//! each side, what only one side has, causes), and a table of the output
//! buffers. Every text taken from the reports is escaped.

use super::model::{Class, Comparison, Side};
use crate::html::{escape, standalone};
use std::fmt::Write as _;

fn classes(c: &[Class]) -> String {
    c.iter().map(|c| format!("{} ({}) ×{}", c.kind, c.format, c.occurrences)).collect::<Vec<_>>().join(", ")
}

/// A kernel's flows: the sentences of each side, and a table of its lines.
fn flows(b: &mut String, f: &super::flows::KernelFlows) {
    let _ = writeln!(b, "<h3>flows</h3>\n<table class=\"flows\"><tbody>");
    for (s, summary) in [("A", &f.summary_a), ("B", &f.summary_b)] {
        let text: Vec<String> = summary.iter().map(|l| escape(l)).collect();
        let text = if text.is_empty() { "none".to_string() } else { text.join("<br>") };
        let _ = writeln!(b, "<tr><th>{s}</th><td>{text}</td></tr>");
    }
    let _ = writeln!(b, "</tbody></table>");
    let _ = writeln!(b, "<table class=\"lines\"><thead><tr><th>line</th><th>flows A</th><th>flows B</th><th>only A</th><th>only B</th></tr></thead><tbody>");
    for l in &f.lines {
        let class = if l.differs() { " class=\"differs\"" } else { "" };
        let _ = writeln!(
            b,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&l.place),
            escape(&l.a.join(", ")),
            escape(&l.b.join(", ")),
            escape(&l.only_a.join(", ")),
            escape(&l.only_b.join(", "))
        );
    }
    let _ = writeln!(b, "</tbody></table>");
}

pub fn page(c: &Comparison) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>xfpx compare</h1>\n<table id=\"sides\"><tbody>");
    for (s, r) in [("A", &c.a), ("B", &c.b)] {
        let _ = writeln!(
            b,
            "<tr><th>{s}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.file),
            escape(&r.vendor),
            escape(&r.device),
            escape(r.target.as_deref().unwrap_or(""))
        );
    }
    let verdict = if c.same { "no difference" } else { "different" };
    let _ = writeln!(b, "</tbody></table>\n<p id=\"result\">{verdict}</p>");
    for k in &c.kernels {
        let name = escape(k.display_name());
        match k.only_in {
            Some(s) => {
                let s = if s == Side::A { "A" } else { "B" };
                let _ = writeln!(b, "<h2>{name}</h2>\n<p class=\"only\">only in {s}</p>");
            }
            None => {
                let _ = writeln!(b, "<h2>{name}</h2>\n<table class=\"lines\"><thead><tr><th>line</th><th>A</th><th>B</th><th>only A</th><th>only B</th><th>causes</th></tr></thead><tbody>");
                for l in &k.lines {
                    let class = if l.differs() { " class=\"differs\"" } else { "" };
                    let _ = writeln!(
                        b,
                        "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&l.place),
                        escape(&classes(&l.a)),
                        escape(&classes(&l.b)),
                        escape(&l.only_a.join(", ")),
                        escape(&l.only_b.join(", ")),
                        escape(&l.causes.join("; "))
                    );
                }
                let _ = writeln!(b, "</tbody></table>");
            }
        }
        if let Some(f) = &k.flows {
            flows(&mut b, f);
        }
    }
    if !c.outputs.is_empty() {
        let _ = writeln!(b, "<h2>output buffers</h2>\n<table id=\"outputs\"><thead><tr><th>buffer</th><th>type</th><th>differing</th><th>max ULP</th><th>first difference</th><th>causes</th></tr></thead><tbody>");
        for d in &c.outputs {
            let shown = d.as_f32.as_deref().unwrap_or(d);
            let first = shown.first_difference.as_ref().map(|f| format!("[{}] A {} B {}", f.index, f.a, f.b));
            let status = if d.identical {
                "identical".to_string()
            } else {
                format!("{} of {}", shown.differing, shown.elements)
            };
            let _ = writeln!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&d.buffer),
                escape(&shown.elem),
                escape(&status),
                shown.max_ulp.map(|u| u.to_string()).unwrap_or_default(),
                escape(&first.unwrap_or_default()),
                escape(&d.causes.join("; "))
            );
        }
        let _ = writeln!(b, "</tbody></table>");
    }
    standalone("xfpx compare", &b)
}
