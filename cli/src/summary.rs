//! Text a user reads: the line printed for each new finding while the
//! program runs, and the end-of-run summary (per kernel, per format and
//! kind) shared by `xfpx run` and `xfpx report`.

use crate::signals;
use std::fmt::Write as _;
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{ExceptionRecord, ExitStatus, KernelReport, KernelStatus, Report, SiteRef};

/// Longest kernel name shown in tables; longer ones are shortened.
const NAME_WIDTH: usize = 60;
/// Up to this many kernels, the per-kernel table lists them all; beyond,
/// only those with findings or skipped, and a count of the rest.
const ALL_KERNELS_UP_TO: usize = 20;

/// The line printed when a finding is first seen.
pub fn finding_line(kernel: &str, kind: ExceptionKind, format: FpFormat, site: &SiteRef) -> String {
    format!(
        "xfpx: found {} ({}) in {} at {}: {} [+{:#x}]",
        kind.name(),
        format.name(),
        xfpx_common::names::readable(kernel),
        location(site),
        site.instr,
        site.offset
    )
}

fn location(site: &SiteRef) -> String {
    site.location.as_ref().map_or_else(|| "unknown location".to_string(), ToString::to_string)
}

/// How the program ended, in words.
pub fn exit_words(exit: &ExitStatus) -> String {
    match exit {
        ExitStatus::Code { code } => format!("exited with status {code}"),
        ExitStatus::Signal { signal } => format!("was killed by {}", signals::name(*signal)),
        ExitStatus::Unknown => "ended in an unknown way".to_string(),
    }
}

fn status_words(s: &KernelStatus) -> String {
    match s {
        KernelStatus::Instrumented => "instrumented".into(),
        KernelStatus::Excluded => "excluded".into(),
        KernelStatus::Skipped { reason } => format!("skipped: {reason}"),
    }
}

fn shorten(name: &str) -> String {
    if name.chars().count() <= NAME_WIDTH {
        name.to_string()
    } else {
        let head: String = name.chars().take(NAME_WIDTH - 3).collect();
        format!("{head}...")
    }
}

fn count_kind(records: &[ExceptionRecord], kind: ExceptionKind) -> u64 {
    records.iter().filter(|r| r.kind == kind).count() as u64
}

/// Lay out rows under headers; columns from `numeric_from` on are right-aligned.
fn table(out: &mut String, headers: &[&str], rows: &[Vec<String>], numeric_from: usize) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &[String]| {
        let mut l = String::from(" ");
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            l.push(' ');
            if i >= numeric_from {
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
            } else {
                l.push_str(cell);
                if i + 1 < cells.len() {
                    l.push_str(&" ".repeat(pad));
                }
            }
            l.push(' ');
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&headers.iter().map(|h| (*h).to_string()).collect::<Vec<_>>());
    for row in rows {
        line(row);
    }
}

/// The summary of a report. `with_records` lists every record too (for
/// `xfpx report`, where the findings were not seen live).
pub fn summary(report: &Report, with_records: bool) -> String {
    let mut out = String::new();
    let run = &report.run;
    let records: usize = report.kernels.iter().map(|k| k.records.len()).sum();
    let with_findings = report.kernels.iter().filter(|k| !k.records.is_empty()).count();
    let target = run.target.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "xfpx: {records} finding{} in {with_findings} of {} kernel{} ({}, {}{target}, mode {})",
        plural(records),
        report.kernels.len(),
        plural(report.kernels.len()),
        run.vendor,
        run.device,
        run.mode
    );
    if run.vendor == "amd-emulated" {
        let _ = writeln!(out, "xfpx: replayed on the emulator: {}", run.command.join(" "));
    } else {
        let _ = writeln!(out, "xfpx: the program {}: {}", exit_words(&run.exit), run.command.join(" "));
    }
    if run.sample_every > 1 {
        let _ = writeln!(out, "xfpx: every {}th launch of each kernel was instrumented", run.sample_every);
    }
    if run.truncated {
        let _ = writeln!(out, "xfpx: the record limit was reached; later new findings were dropped");
    }
    if !report.kernels.is_empty() {
        out.push_str("\nper kernel:\n");
        let mut headers = vec!["kernel", "status", "launches", "instrumented", "probes"];
        headers.extend(ExceptionKind::ALL.iter().map(|k| k.name()));
        // Large runs (libraries launch hundreds of kernels) list only the
        // kernels worth reading; the rest are counted in one line.
        let all = report.kernels.len() <= ALL_KERNELS_UP_TO;
        let worth =
            |k: &&KernelReport| all || !k.records.is_empty() || matches!(k.status, KernelStatus::Skipped { .. });
        let rows: Vec<Vec<String>> = report.kernels.iter().filter(worth).map(kernel_row).collect();
        if !rows.is_empty() {
            table(&mut out, &headers, &rows, 2);
        }
        let rest: Vec<&KernelReport> = report.kernels.iter().filter(|k| !worth(k)).collect();
        if !rest.is_empty() {
            let instrumented = rest.iter().filter(|k| k.status == KernelStatus::Instrumented).count();
            let launches: u64 = rest.iter().map(|k| k.launches).sum();
            let _ = writeln!(
                out,
                "  ... and {} more kernel{} without findings ({instrumented} instrumented, {} excluded; {launches} launch{})",
                rest.len(),
                plural(rest.len()),
                rest.len() - instrumented,
                if launches == 1 { "" } else { "es" }
            );
        }
    }
    let totals = report.totals();
    if !totals.is_empty() {
        out.push_str("\nper format and kind:\n");
        let mut headers = vec!["format"];
        headers.extend(ExceptionKind::ALL.iter().map(|k| k.name()));
        headers.push("total");
        let mut rows = Vec::new();
        for format in FpFormat::ALL {
            let counts: Vec<u64> =
                ExceptionKind::ALL.iter().map(|k| totals.get(&(format, *k)).copied().unwrap_or(0)).collect();
            let total: u64 = counts.iter().sum();
            if total > 0 {
                let mut row = vec![format.name().to_string()];
                row.extend(counts.iter().map(u64::to_string));
                row.push(total.to_string());
                rows.push(row);
            }
        }
        table(&mut out, &headers, &rows, 1);
    }
    if with_records && records > 0 {
        out.push_str("\nfindings:\n");
        for k in report.kernels.iter().filter(|k| !k.records.is_empty()) {
            let _ = writeln!(out, "  {}", k.display_name());
            for r in &k.records {
                let _ = writeln!(
                    out,
                    "    {} ({}) at {}: {} [+{:#x}], first in launch {}, {} occurrence{}",
                    r.kind.name(),
                    r.format.name(),
                    location(&r.site),
                    r.site.instr,
                    r.site.offset,
                    r.first_launch,
                    r.occurrences,
                    plural(r.occurrences as usize)
                );
            }
        }
    }
    if !run.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &run.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

fn kernel_row(k: &KernelReport) -> Vec<String> {
    let mut row = vec![
        shorten(k.display_name()),
        status_words(&k.status),
        k.launches.to_string(),
        k.instrumented_launches.to_string(),
        k.probes.to_string(),
    ];
    row.extend(ExceptionKind::ALL.iter().map(|kind| count_kind(&k.records, *kind).to_string()));
    row
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::report::{Collector, RunInfo};
    use xfpx_common::site::{SiteId, SourceLoc};

    fn sample() -> Report {
        let run = RunInfo {
            vendor: "nvidia".into(),
            device: "NVIDIA H100".into(),
            target: Some("sm_90".into()),
            command: vec!["./app".into(), "7".into()],
            mode: "detect".into(),
            started_unix: 0,
            finished_unix: Some(1),
            exit: ExitStatus::Signal { signal: libc::SIGSEGV },
            sample_every: 1,
            truncated: false,
            notes: vec!["a note".into()],
        };
        let mut c = Collector::new(run, None);
        c.kernel_status("gemm", KernelStatus::Instrumented, 12);
        c.launch("gemm", true);
        let site = SiteRef {
            id: SiteId(0),
            offset: 0x130,
            instr: "FADD R1, R2, R3".into(),
            location: Some(SourceLoc::new("app.cu", 42)),
        };
        c.record("gemm", ExceptionKind::Nan, FpFormat::F32, site.clone(), 0, 5);
        c.record("gemm", ExceptionKind::Div0, FpFormat::F64, SiteRef { id: SiteId(1), offset: 0x200, ..site }, 0, 1);
        c.kernel_status("copy", KernelStatus::Excluded, 0);
        c.report()
    }

    #[test]
    fn finding_line_has_everything() {
        let r = sample();
        let rec = &r.kernels[1].records[0];
        let l = finding_line("gemm", rec.kind, rec.format, &rec.site);
        assert_eq!(l, "xfpx: found nan (f32) in gemm at app.cu:42: FADD R1, R2, R3 [+0x130]");
    }

    #[test]
    fn summary_tables() {
        let s = summary(&sample(), false);
        assert!(s.starts_with("xfpx: 2 findings in 1 of 2 kernels (nvidia, NVIDIA H100, sm_90, mode detect)\n"), "{s}");
        assert!(s.contains("was killed by SIGSEGV: ./app 7"), "{s}");
        let gemm = s.lines().find(|l| l.trim_start().starts_with("gemm")).expect("gemm row");
        let cells: Vec<&str> = gemm.split_whitespace().collect();
        assert_eq!(cells, ["gemm", "instrumented", "1", "1", "12", "1", "0", "0", "1"], "{s}");
        let f32_row = s.lines().find(|l| l.trim_start().starts_with("f32")).expect("f32 row");
        assert_eq!(f32_row.split_whitespace().collect::<Vec<_>>(), ["f32", "1", "0", "0", "0", "1"]);
        assert!(s.contains("  - a note"));
        assert!(!s.contains("findings:\n"));
        let full = summary(&sample(), true);
        assert!(
            full.contains("div0 (f64) at app.cu:42: FADD R1, R2, R3 [+0x200], first in launch 0, 1 occurrence\n"),
            "{full}"
        );
    }

    #[test]
    fn large_runs_list_only_kernels_worth_reading() {
        let mut r = sample();
        let clean = r.kernels[0].clone();
        for i in 0..30 {
            let mut k = clean.clone();
            k.name = format!("clean_{i:02}");
            k.status = KernelStatus::Instrumented;
            k.launches = 2;
            r.kernels.push(k);
        }
        let mut skipped = clean.clone();
        skipped.name = "big".into();
        skipped.status = KernelStatus::Skipped { reason: "too many registers".into() };
        r.kernels.push(skipped);
        let s = summary(&r, false);
        assert!(s.lines().any(|l| l.trim_start().starts_with("gemm ")), "{s}");
        assert!(s.contains("skipped: too many registers"), "{s}");
        assert!(!s.contains("clean_0"), "{s}");
        assert!(
            s.contains("  ... and 31 more kernels without findings (30 instrumented, 1 excluded; 60 launches)"),
            "{s}"
        );
        let small = summary(&sample(), false);
        assert!(small.lines().any(|l| l.trim_start().starts_with("copy ")), "small runs list every kernel: {small}");
    }

    #[test]
    fn mangled_kernel_names_are_shown_demangled() {
        let mut r = sample();
        let mangled = "_Z11lines_scaleIfEvPT_PKS0_S0_";
        let readable = "void lines_scale<float>(float*, float const*, float)";
        r.kernels[1].name = mangled.into();
        r.kernels[1].demangled = xfpx_common::names::demangle(mangled);
        let s = summary(&r, true);
        assert!(s.lines().any(|l| l.trim_start().starts_with(&format!("{readable} "))), "table row: {s}");
        assert!(s.contains(&format!("\n  {readable}\n")), "findings header: {s}");
        assert!(!s.contains(mangled), "{s}");
        let rec = &r.kernels[1].records[0];
        assert!(finding_line(mangled, rec.kind, rec.format, &rec.site).contains(&format!(" in {readable} at ")));
    }

    #[test]
    fn long_names_are_shortened() {
        let long = "k".repeat(200);
        assert_eq!(shorten(&long).chars().count(), NAME_WIDTH);
        assert_eq!(shorten("short"), "short");
    }
}
