//! Findings grouped the way a person reads them: per kernel, per source
//! line (findings without a location under one "unknown location" group,
//! listed last), per (kind, format), with the instructions of each line.
//! Shared by the text summary and the HTML page.

use std::collections::BTreeMap;
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{ExceptionRecord, KernelReport, Report};
use xfpx_common::site::SourceLoc;

/// One (kind, format) found on a source line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindCount {
    pub kind: ExceptionKind,
    pub format: FpFormat,
    /// Records (instructions) of this kind and format on the line.
    pub findings: usize,
    pub occurrences: u64,
}

/// One instruction of a line, with every record found at it.
#[derive(Debug, Clone)]
pub struct InstrFindings<'a> {
    pub offset: u64,
    pub instr: &'a str,
    /// In the order of kind, then format.
    pub records: Vec<&'a ExceptionRecord>,
}

/// The findings of one source line (or of no known line).
#[derive(Debug, Clone)]
pub struct LineFindings<'a> {
    pub location: Option<&'a SourceLoc>,
    /// In the order of kind, then format.
    pub kinds: Vec<KindCount>,
    /// In the order of their offset.
    pub instructions: Vec<InstrFindings<'a>>,
    pub findings: usize,
    pub occurrences: u64,
    /// The earliest launch known to raise any of them (none known: `None`).
    pub first_launch: Option<u64>,
}

impl LineFindings<'_> {
    /// `file:line`, or `unknown location`.
    pub fn place(&self) -> String {
        self.location.map_or_else(|| "unknown location".to_string(), ToString::to_string)
    }
}

/// The findings of one kernel, by source line.
#[derive(Debug, Clone)]
pub struct KernelFindings<'a> {
    pub kernel: &'a KernelReport,
    /// Known lines by file and line number, then the unknown location.
    pub lines: Vec<LineFindings<'a>>,
    pub findings: usize,
    pub instructions: usize,
}

/// Every kernel with findings, in report order.
pub fn by_line(report: &Report) -> Vec<KernelFindings<'_>> {
    report.kernels.iter().filter(|k| !k.records.is_empty()).map(by_line_of).collect()
}

/// The findings of one kernel, by source line.
pub fn by_line_of(kernel: &KernelReport) -> KernelFindings<'_> {
    // Key: no location sorts after every known one; a line inlined into
    // two places of the caller is two lines.
    type LineKey<'a> = (bool, &'a str, u32, Option<(&'a str, u32)>);
    let mut lines: BTreeMap<LineKey, Vec<&ExceptionRecord>> = BTreeMap::new();
    for r in &kernel.records {
        let key = match &r.site.location {
            Some(l) => (false, l.file.as_str(), l.line, l.inlined_at.as_deref().map(|o| (o.file.as_str(), o.line))),
            None => (true, "", 0, None),
        };
        lines.entry(key).or_default().push(r);
    }
    let lines: Vec<LineFindings> = lines.into_values().map(line_findings).collect();
    let instructions = lines.iter().map(|l| l.instructions.len()).sum();
    KernelFindings { kernel, lines, findings: kernel.records.len(), instructions }
}

fn line_findings(records: Vec<&ExceptionRecord>) -> LineFindings<'_> {
    let mut kinds: BTreeMap<(ExceptionKind, FpFormat), KindCount> = BTreeMap::new();
    let mut instrs: BTreeMap<u64, InstrFindings> = BTreeMap::new();
    for r in &records {
        let k = kinds.entry((r.kind, r.format)).or_insert(KindCount {
            kind: r.kind,
            format: r.format,
            findings: 0,
            occurrences: 0,
        });
        k.findings += 1;
        k.occurrences += r.occurrences;
        instrs
            .entry(r.site.offset)
            .or_insert_with(|| InstrFindings { offset: r.site.offset, instr: &r.site.instr, records: Vec::new() })
            .records
            .push(r);
    }
    let mut instructions: Vec<InstrFindings> = instrs.into_values().collect();
    for i in &mut instructions {
        i.records.sort_by_key(|r| (r.kind, r.format));
    }
    LineFindings {
        location: records[0].site.location.as_ref(),
        kinds: kinds.into_values().collect(),
        instructions,
        findings: records.len(),
        occurrences: records.iter().map(|r| r.occurrences).sum(),
        first_launch: records.iter().filter_map(|r| r.known_first_launch()).min(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use xfpx_common::report::{Collector, ExitStatus, RunInfo, SiteRef};
    use xfpx_common::site::SiteId;

    /// One source division that gives many findings at several
    /// instructions, another line, and findings with no location.
    pub(crate) fn division_report() -> Report {
        let run = RunInfo {
            command: vec!["./a".into()],
            exit: ExitStatus::Code { code: 0 },
            ..RunInfo::new("nvidia", "d", "detect")
        };
        let mut c = Collector::new(run, None);
        let site = |id: u32, offset: u64, instr: &str, line: Option<u32>| SiteRef {
            id: SiteId(id),
            offset,
            instr: instr.into(),
            location: line.map(|line| SourceLoc::new("div.cu", line)),
        };
        for i in 0..12u32 {
            let s = site(i, 0x100 + 16 * u64::from(i), "FFMA R1, R2, R3, R4", Some(12));
            c.record("k", ExceptionKind::Nan, FpFormat::F32, s.clone(), u64::from(i % 3), 2);
            if i < 2 {
                c.record("k", ExceptionKind::Div0, FpFormat::F32, s, 1, 1);
            }
        }
        c.record("k", ExceptionKind::Inf, FpFormat::F64, site(20, 0x40, "DADD R2, R4, R6", Some(3)), 4, 1);
        c.record("k", ExceptionKind::Sub, FpFormat::F32, site(21, 0x20, "FMUL R5, R4, R4", None), 0, 1);
        c.kernel_status("clean", xfpx_common::report::KernelStatus::Instrumented, 3);
        c.report()
    }

    #[test]
    fn one_division_is_one_line_with_its_instructions() {
        let r = division_report();
        let g = by_line(&r);
        assert_eq!(g.len(), 1, "kernels without findings are left out");
        let k = &g[0];
        assert_eq!((k.findings, k.instructions), (16, 14));
        let places: Vec<String> = k.lines.iter().map(LineFindings::place).collect();
        assert_eq!(places, ["div.cu:3", "div.cu:12", "unknown location"]);
        let div = &k.lines[1];
        assert_eq!((div.findings, div.instructions.len(), div.occurrences, div.first_launch), (14, 12, 26, Some(0)));
        let kinds: Vec<(ExceptionKind, usize, u64)> =
            div.kinds.iter().map(|c| (c.kind, c.findings, c.occurrences)).collect();
        assert_eq!(kinds, [(ExceptionKind::Nan, 12, 24), (ExceptionKind::Div0, 2, 2)]);
        let first = &div.instructions[0];
        assert_eq!(first.offset, 0x100);
        let at_first: Vec<ExceptionKind> = first.records.iter().map(|r| r.kind).collect();
        assert_eq!(at_first, [ExceptionKind::Nan, ExceptionKind::Div0]);
        assert!(div.instructions.windows(2).all(|w| w[0].offset < w[1].offset));
        assert_eq!(k.lines[0].first_launch, Some(4));
    }
}
