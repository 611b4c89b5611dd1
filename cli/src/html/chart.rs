//! The page's inline SVG chart: one horizontal bar per kernel with
//! findings, split by kind, its length the kernel's number of findings.

use super::escape;
use crate::findings::KernelFindings;
use crate::summary;
use std::fmt::Write as _;
use xfpx_common::fp::ExceptionKind;

/// Kernels drawn at most; the rest are counted below the chart.
const MAX_BARS: usize = 30;
/// Characters of a kernel name drawn before it is shortened (the full
/// name is the label's tooltip).
const LABEL_CHARS: usize = 44;
const LABEL_WIDTH: usize = 320;
const BAR_WIDTH: usize = 520;
const ROW: usize = 24;
const TOP: usize = 30;

/// The fill of a kind's bars (the same colours as the page's kind badges).
fn colour(kind: ExceptionKind) -> &'static str {
    match kind {
        ExceptionKind::Nan => "#c62828",
        ExceptionKind::Inf => "#e07000",
        ExceptionKind::Sub => "#1f6fb4",
        ExceptionKind::Div0 => "#7b3fa6",
    }
}

/// The chart of `kernels` (those with findings), with its legend.
pub fn bars(kernels: &[KernelFindings]) -> String {
    let shown = &kernels[..kernels.len().min(MAX_BARS)];
    let most = shown.iter().map(|k| k.findings).max().unwrap_or(1).max(1);
    let width = LABEL_WIDTH + BAR_WIDTH + 60;
    let height = TOP + ROW * shown.len() + 8;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg id=\"chart\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"findings per kernel and kind\">"
    );
    for (i, kind) in ExceptionKind::ALL.iter().enumerate() {
        let x = LABEL_WIDTH + i * 80;
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"16\">{}</text>",
            colour(*kind),
            x + 16,
            kind.name()
        );
    }
    for (row, k) in shown.iter().enumerate() {
        let y = TOP + row * ROW;
        let _ = writeln!(
            out,
            "<g class=\"bar\" data-kernel=\"{0}\"><title>{0}: {1} finding{2}</title>\
             <text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>",
            escape(k.kernel.display_name()),
            k.findings,
            crate::summary::plural(k.findings),
            LABEL_WIDTH - 8,
            y + 15,
            escape(&summary::shorten_to(k.kernel.display_name(), LABEL_CHARS))
        );
        let mut x = LABEL_WIDTH;
        for kind in ExceptionKind::ALL {
            let n = k.kernel.records.iter().filter(|r| r.kind == kind).count();
            if n == 0 {
                continue;
            }
            // At least a pixel per kind found, so none vanishes.
            let w = (n * BAR_WIDTH / most).max(1);
            let _ = writeln!(
                out,
                "<rect x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"{}\" fill=\"{}\" data-kind=\"{}\" data-count=\"{n}\">\
                 <title>{}: {n}</title></rect>",
                y + 3,
                ROW - 6,
                colour(kind),
                kind.name(),
                kind.name()
            );
            x += w;
        }
        let _ = writeln!(out, "<text x=\"{}\" y=\"{}\">{}</text></g>", x + 6, y + 15, k.findings);
    }
    out.push_str("</svg>\n");
    if kernels.len() > shown.len() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">... and {} more kernels with findings (in the tables below).</p>",
            kernels.len() - shown.len()
        );
    }
    out
}

/// One bar of a [`stacked`] chart: a label and a count per segment.
#[derive(Debug, Clone)]
pub struct StackedBar {
    pub label: String,
    pub counts: Vec<usize>,
}

/// Horizontal bars of equal length, each split into its segments' shares
/// (named and coloured by `segments`), with a legend and the counts as
/// tooltips and `data-` attributes.
pub fn stacked(id: &str, bars: &[StackedBar], segments: &[(&str, &str)]) -> String {
    let width = LABEL_WIDTH + BAR_WIDTH + 60;
    let height = TOP + ROW * bars.len() + 8;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg id=\"{}\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\">",
        escape(id)
    );
    for (i, (name, fill)) in segments.iter().enumerate() {
        let x = LABEL_WIDTH + i * 110;
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{fill}\"/><text x=\"{}\" y=\"16\">{}</text>",
            x + 16,
            escape(name)
        );
    }
    for (row, b) in bars.iter().enumerate() {
        let y = TOP + row * ROW;
        let total: usize = b.counts.iter().sum();
        let _ = writeln!(
            out,
            "<g class=\"bar\" data-label=\"{0}\"><text x=\"{1}\" y=\"{2}\" text-anchor=\"end\">{0}</text>",
            escape(&b.label),
            LABEL_WIDTH - 8,
            y + 15
        );
        let mut x = LABEL_WIDTH;
        for (&n, (name, fill)) in b.counts.iter().zip(segments) {
            if n == 0 {
                continue;
            }
            let w = (n * BAR_WIDTH / total.max(1)).max(1);
            let _ = writeln!(
                out,
                "<rect x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"{}\" fill=\"{fill}\" data-segment=\"{}\" \
                 data-count=\"{n}\"><title>{}: {n} of {total}</title></rect>",
                y + 3,
                ROW - 6,
                escape(name),
                escape(name)
            );
            x += w;
        }
        let _ = writeln!(out, "<text x=\"{}\" y=\"{}\">{total}</text></g>", LABEL_WIDTH + BAR_WIDTH + 8, y + 15);
    }
    out.push_str("</svg>\n");
    out
}
