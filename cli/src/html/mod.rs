//! The HTML page of a report (`--html FILE`): one self-contained file, with
//! its style, its sorting script and its chart inline, so it opens anywhere
//! without a network. A header with the run, its notes, a chart of findings
//! per kernel and kind, per kernel a table of its source lines (kinds,
//! formats, counts, first launch, instructions), the flows of a flow run
//! ([`flow`]), and a table of all kernels. Every text taken from the report is escaped.

pub mod chart;
mod flow;

use crate::findings::{self, KernelFindings, LineFindings};
use crate::report_io::{self, FileKind};
use crate::summary;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{KernelReport, Report};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A self-contained page with the report's style around `body` (HTML).
pub fn standalone(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// Fail early when the page cannot be written at `path`.
pub fn check_target(path: &Path) -> Result<()> {
    report_io::check_file(path, FileKind::HtmlPage)
}

/// Write the page of `report` to `path` (as reports are written: never
/// replacing what the user named by something else).
pub fn write(report: &Report, path: &Path) -> Result<()> {
    report_io::write_file(path, page(report).as_bytes(), FileKind::HtmlPage)
}

/// The whole page.
pub fn page(report: &Report) -> String {
    let mut out = String::new();
    let program = report.run.command.join(" ");
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>xfpx report: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body data-ready=\"0\">\n",
        escape(&program)
    );
    header(&mut out, report);
    let grouped = findings::by_line(report);
    out.push_str("<h2>Findings per kernel and kind</h2>\n");
    if grouped.is_empty() {
        out.push_str("<p class=\"muted\">No findings.</p>\n");
    } else {
        out.push_str(&chart::bars(&grouped));
    }
    out.push_str("<h2>Findings by source line</h2>\n");
    if grouped.is_empty() {
        out.push_str("<p class=\"muted\">No findings.</p>\n");
    }
    for (i, k) in grouped.iter().enumerate() {
        kernel_lines(&mut out, i, k);
    }
    flow::section(&mut out, report);
    kernels_table(&mut out, report);
    let _ = write!(out, "<script>\n{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

fn header(out: &mut String, report: &Report) {
    let run = &report.run;
    let _ = writeln!(
        out,
        "<header>\n<h1>xfpx report</h1>\n<p class=\"headline\">{}</p>",
        escape(&summary::headline(report))
    );
    out.push_str("<dl class=\"run\">\n");
    let mut item = |name: &str, value: String| {
        let _ = writeln!(out, "<dt>{name}</dt><dd>{value}</dd>");
    };
    item("vendor", escape(&run.vendor));
    item("device", escape(&run.device));
    if let Some(t) = &run.target {
        item("target", escape(t));
    }
    item("program", format!("<code>{}</code>", escape(&run.command.join(" "))));
    item("mode", escape(&run.mode));
    if run.vendor == "amd-emulated" {
        item("ran", "replayed on the emulator".into());
    } else {
        item("exit", escape(&format!("the program {}", summary::exit_words(&run.exit))));
    }
    if let Some(line) = summary::unchecked_line(report) {
        item("unchecked", escape(&line));
    } else if let Some(s) = summary::sampling_words(run) {
        item("sampling", escape(&s));
    }
    item("started", utc(run.started_unix));
    if let Some(f) = run.finished_unix {
        item("finished", format!("{} ({} s)", utc(f), f.saturating_sub(run.started_unix)));
    }
    item("written by", escape(&format!("{} {}", report.tool.name, report.tool.version)));
    out.push_str("</dl>\n</header>\n");
    if run.truncated || !run.notes.is_empty() {
        out.push_str("<h2>Coverage and notes</h2>\n<ul class=\"notes\">\n");
        if run.truncated {
            out.push_str("<li class=\"warn\">The record limit was reached; later new findings were dropped.</li>\n");
        }
        for n in &run.notes {
            let _ = writeln!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ul>\n");
    }
}

/// `YYYY-MM-DD hh:mm:ss UTC` of seconds since the Unix epoch.
fn utc(unix: u64) -> String {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian), by
    // 400-year eras of 146097 days starting on March 1st.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", secs / 3600, secs / 60 % 60, secs % 60)
}

/// `<th>` cells: (column id, header text, numeric).
fn head(out: &mut String, id: &str, columns: &[(&str, &str, bool)]) {
    let _ = write!(out, "<table class=\"sortable\" id=\"{id}\">\n<thead><tr>");
    for (col, text, numeric) in columns {
        let kind = if *numeric { "num" } else { "text" };
        let _ = write!(out, "<th data-col=\"{col}\" data-type=\"{kind}\">{text}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
}

fn num(n: impl std::fmt::Display) -> String {
    format!("<td class=\"num\">{n}</td>")
}

fn kernels_table(out: &mut String, report: &Report) {
    out.push_str("<h2>Kernels</h2>\n");
    if report.kernels.is_empty() {
        out.push_str("<p class=\"muted\">No kernels were seen.</p>\n");
        return;
    }
    let mut columns = vec![
        ("kernel", "kernel", false),
        ("status", "status", false),
        ("launches", "launches", true),
        ("instrumented", "instrumented", true),
        ("probes", "probes", true),
    ];
    columns.extend(ExceptionKind::ALL.iter().map(|k| (k.name(), k.name(), true)));
    columns.push(("findings", "findings", true));
    head(out, "kernels", &columns);
    for k in &report.kernels {
        kernel_row(out, k);
    }
    out.push_str("</tbody>\n</table>\n");
}

fn kernel_row(out: &mut String, k: &KernelReport) {
    let class = if k.records.is_empty() { " class=\"clean\"" } else { "" };
    let _ = write!(
        out,
        "<tr{class}><td class=\"name\">{}</td><td>{}</td>{}{}{}",
        escape(k.display_name()),
        escape(&summary::status_words(&k.status)),
        num(k.launches),
        num(k.instrumented_launches),
        num(k.probes)
    );
    for kind in ExceptionKind::ALL {
        out.push_str(&num(k.records.iter().filter(|r| r.kind == kind).count()));
    }
    let _ = writeln!(out, "{}</tr>", num(k.records.len()));
}

fn kernel_lines(out: &mut String, index: usize, k: &KernelFindings) {
    let _ = writeln!(
        out,
        "<h3 id=\"kernel-{index}\">{}</h3>\n<p class=\"muted\">{} finding{} at {} instruction{} on {} source line{}</p>",
        escape(k.kernel.display_name()),
        k.findings,
        summary::plural(k.findings),
        k.instructions,
        summary::plural(k.instructions),
        k.lines.len(),
        summary::plural(k.lines.len()),
    );
    let columns = [
        ("line", "source line", false),
        ("kinds", "kinds", false),
        ("formats", "formats", false),
        ("findings", "findings", true),
        ("instructions", "instructions", true),
        ("occurrences", "occurrences", true),
        ("first-launch", "first launch", true),
        ("at", "at instructions", false),
    ];
    head(out, &format!("lines-{index}"), &columns);
    for line in &k.lines {
        line_row(out, line);
    }
    out.push_str("</tbody>\n</table>\n");
}

fn line_row(out: &mut String, line: &LineFindings) {
    // Known lines sort by file, then line number; the unknown location last.
    let key = line.location.map_or_else(|| "\u{10ffff}".to_string(), |l| format!("{}:{:010}", l.file, l.line));
    let kinds: String = line
        .kinds
        .iter()
        .map(|c| {
            format!(
                "<span class=\"kind {0}\" title=\"{1} finding{2}, {3} occurrence{4}\">{0} ({5}) &times;{1}</span>",
                c.kind.name(),
                c.findings,
                summary::plural(c.findings),
                c.occurrences,
                summary::plural(c.occurrences as usize),
                c.format.name()
            )
        })
        .collect();
    let mut formats: Vec<&str> = line.kinds.iter().map(|c| c.format.name()).collect();
    formats.sort_unstable();
    formats.dedup();
    let _ = write!(
        out,
        "<tr><td class=\"mono\" data-v=\"{}\">{}</td><td class=\"kinds\">{kinds}</td><td>{}</td>{}{}{}{}<td><ul class=\"instrs\">",
        escape(&key),
        escape(&line.place()),
        formats.join(", "),
        num(line.findings),
        num(line.instructions.len()),
        num(line.occurrences),
        line.first_launch.map_or_else(|| num("unknown"), num)
    );
    for i in &line.instructions {
        let found: Vec<String> = i
            .records
            .iter()
            .map(|r| {
                format!(
                    "<span>{} ({}) &times;{} from&nbsp;launch&nbsp;{}</span>",
                    r.kind.name(),
                    r.format.name(),
                    r.occurrences,
                    r.known_first_launch().map_or_else(|| "unknown".to_string(), |l| l.to_string())
                )
            })
            .collect();
        let _ = write!(
            out,
            "<li><code>+{:#x}</code> <code>{}</code> <span class=\"found\">{}</span></li>",
            i.offset,
            escape(i.instr),
            found.join("; ")
        );
    }
    out.push_str("</ul></td></tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_report_is_escaped() {
        assert_eq!(escape("void f<int>(a&b, \"c\", 'd')"), "void f&lt;int&gt;(a&amp;b, &quot;c&quot;, &#39;d&#39;)");
        let mut r = crate::findings::tests::division_report();
        r.kernels[1].name = "void k<float, 2>(float*, int&)".into();
        r.run.notes.push("<script>alert(1)</script>".into());
        let p = page(&r);
        assert!(p.contains("void k&lt;float, 2&gt;(float*, int&amp;)"), "kernel name escaped");
        assert!(!p.contains("k<float"), "kernel name appears unescaped somewhere");
        assert!(p.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert_eq!(p.matches("<script>").count(), 1, "only the page's own script");
    }

    #[test]
    fn the_page_is_self_contained() {
        let p = page(&crate::findings::tests::division_report());
        for outside in ["http://", "https://", "src=", "href=", "@import", "url("] {
            assert!(!p.contains(outside), "the page refers to something outside it: {outside}");
        }
        assert!(p.contains("<table class=\"sortable\" id=\"lines-0\">"));
        assert!(p.contains("<td class=\"mono\" data-v=\"div.cu:0000000012\">div.cu:12</td>"), "{p}");
        assert!(p.contains("<td class=\"mono\" data-v=\"\u{10ffff}\">unknown location</td>"));
        assert!(p.contains("<svg"));
    }

    #[test]
    fn flows_have_their_sentences_and_lines() {
        use xfpx_common::flow::{lane, FlowState};
        use xfpx_common::report::{Collector, FlowFinding, RunInfo, SiteRef};
        let mut c = Collector::new(RunInfo::new("amd-emulated", "gfx90a", "flow"), None);
        let site = |offset: u64, line: u32, instr: &str| SiteRef {
            id: xfpx_common::site::SiteId(offset as u32),
            offset,
            instr: instr.into(),
            location: Some(xfpx_common::site::SourceLoc::new("f<1>.hip", line)),
        };
        let f = |state, kind, site, class: &str, seen| FlowFinding {
            state,
            kind,
            format: xfpx_common::FpFormat::F32,
            site,
            class: class.into(),
            launch: 0,
            occurrences: 2,
            seen,
        };
        c.record_flow(
            "k",
            f(
                FlowState::Appear,
                ExceptionKind::Nan,
                site(0x10, 3, "v_div_fixup_f32 v1, v2, v3, v4"),
                "f32.div",
                lane::SRC_ZERO | lane::RES_NAN,
            ),
        );
        c.record_flow(
            "k",
            f(
                FlowState::Disappear,
                ExceptionKind::Nan,
                site(0x20, 4, "v_max_f32 v1, 0, v2"),
                "f32.minmax",
                lane::SRC_NAN | lane::RES_ZERO,
            ),
        );
        let p = page(&c.report());
        assert!(p.contains("<h2 id=\"flows\">Flows</h2>"), "{p}");
        assert!(p.contains("<li>NaN appears at line 3 (0/0), disappears at line 4 in a max (result 0).</li>"), "{p}");
        assert!(p.contains("<td class=\"mono\" data-v=\"f&lt;1&gt;.hip:0000000004\">f&lt;1&gt;.hip:4</td>"), "{p}");
        assert!(p.contains("<code>v_max_f32 v1, 0, v2</code> <span class=\"found\">disappear &times;2</span>"), "{p}");
        // no flow section without flows
        assert!(!page(&crate::findings::tests::division_report()).contains("id=\"flows\""));
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_767_225_599), "2025-12-31 23:59:59 UTC");
    }
}
