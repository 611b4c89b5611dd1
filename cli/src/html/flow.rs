//! The flow section of the HTML page: per kernel, its sentences (where
//! each kind appears, propagates, disappears, reaches a comparison) and a
//! sortable table of source lines with the executions of each state and
//! the instructions behind them.

use super::{escape, head, num};
use crate::flow_text::{line_states, record_place};
use std::fmt::Write as _;
use xfpx_common::flow::FlowState;
use xfpx_common::report::Report;

/// The section (nothing when the report has no flow section).
pub fn section(out: &mut String, report: &Report) {
    let Some(flow) = &report.flow else { return };
    out.push_str("<h2 id=\"flows\">Flows</h2>\n");
    let kernels: Vec<_> = flow.kernels.iter().filter(|k| !k.records.is_empty()).collect();
    if kernels.is_empty() {
        out.push_str("<p class=\"muted\">No exceptional value met a checked instruction.</p>\n");
        return;
    }
    for (i, k) in kernels.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h3 id=\"flow-{i}\">{}</h3>\n<ul class=\"stories\">",
            escape(&xfpx_common::names::readable(&k.kernel))
        );
        for s in &k.summary {
            let _ = writeln!(out, "<li>{}</li>", escape(s));
        }
        out.push_str("</ul>\n");
        let mut columns = vec![("line", "source line", false), ("kind", "kind", false)];
        columns.extend(FlowState::ALL.iter().map(|s| (s.name(), s.name(), true)));
        columns.push(("at", "at instructions", false));
        head(out, &format!("flow-lines-{i}"), &columns);
        for ((key, place, kind), states) in line_states(&k.records) {
            let sort =
                if key.0.is_empty() { format!("\u{10ffff}{:016x}", key.2) } else { format!("{}:{:010}", key.0, key.1) };
            let _ = write!(
                out,
                "<tr><td class=\"mono\" data-v=\"{}\">{}</td><td><span class=\"kind {2}\">{2}</span></td>",
                escape(&sort),
                escape(&place),
                kind.name()
            );
            for s in FlowState::ALL {
                out.push_str(&num(states.get(&s).copied().unwrap_or(0)));
            }
            out.push_str("<td><ul class=\"instrs\">");
            for r in k.records.iter().filter(|r| r.kind == kind && record_place(r) == place) {
                let _ = write!(
                    out,
                    "<li><code>+{:#x}</code> <code>{}</code> <span class=\"found\">{} &times;{}</span></li>",
                    r.site.offset,
                    escape(&r.site.instr),
                    r.state.name(),
                    r.occurrences
                );
            }
            out.push_str("</ul></td></tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
    }
}
