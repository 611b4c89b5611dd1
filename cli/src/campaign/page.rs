//! `xfpx campaign report DIR`: the results as one self-contained HTML page,
//! a stacked bar per error model (Masked, SDC, DUE, not activated) and the
//! counts as a table.

use super::classify::Outcome;
use super::{load_definition, results};
use crate::html::chart::{stacked, StackedBar};
use crate::html::{self, escape};
use crate::report_io::{self, FileKind};
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Each class's colour, in [`Outcome::ALL`] order.
const COLOURS: [&str; 4] = ["#4c9a5b", "#e07000", "#c62828", "#9aa1ad"];

/// The page of the campaign in `dir`.
pub fn page(dir: &Path) -> Result<String> {
    let def = load_definition(dir)?;
    let all = results::gather(dir)?;
    let mut by_model: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for r in all.values() {
        let i = Outcome::ALL.iter().position(|o| *o == r.outcome).unwrap_or(0);
        by_model.entry(r.model).or_insert_with(|| vec![0; 4])[i] += 1;
    }
    let bars: Vec<StackedBar> =
        by_model.iter().map(|(m, c)| StackedBar { label: m.name().to_string(), counts: c.clone() }).collect();
    let segments: Vec<(&str, &str)> = Outcome::ALL.iter().map(|o| o.name()).zip(COLOURS).collect();
    let program = match &def.replay {
        Some(l) => format!("replay of {}", l.display()),
        None => def.command.join(" "),
    };
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<header>\n<h1>xfpx fault-injection campaign</h1>\n<p class=\"headline\">{} of {} runs finished</p>\n\
         <dl class=\"run\"><dt>program</dt><dd><code>{}</code></dd><dt>faults</dt><dd>{}, seed {}</dd></dl>\n</header>",
        all.len(),
        def.faults.len(),
        escape(&program),
        if def.exhaustive { "every SM and lane" } else { "drawn at random" },
        def.seed
    );
    body.push_str("<h2>Outcome per error model</h2>\n");
    if bars.is_empty() {
        body.push_str("<p class=\"muted\">No finished runs.</p>\n");
    } else {
        body.push_str(&stacked("outcomes", &bars, &segments));
    }
    body.push_str("<h2>Counts</h2>\n<table id=\"counts\"><tr><th>model</th>");
    for o in Outcome::ALL {
        let _ = write!(body, "<th>{}</th>", o.name());
    }
    body.push_str("<th>runs</th></tr>\n");
    for b in &bars {
        let _ = write!(body, "<tr><td>{}</td>", escape(&b.label));
        for n in &b.counts {
            let _ = write!(body, "<td class=\"num\">{n}</td>");
        }
        let _ = writeln!(body, "<td class=\"num\">{}</td></tr>", b.counts.iter().sum::<usize>());
    }
    body.push_str("</table>\n");
    Ok(html::standalone("xfpx campaign", &body))
}

pub fn write(dir: &Path, out: Option<&Path>) -> Result<i32> {
    let default = dir.join("report.html");
    let out = out.unwrap_or(&default);
    html::check_target(out)?;
    let text = page(dir)?;
    report_io::write_file(out, text.as_bytes(), FileKind::HtmlPage)?;
    crate::console::say!("xfpx: wrote {}", out.display());
    Ok(0)
}
