//! Text about launch screening: the line printed when a screen finds
//! something, the summary's section of screened findings and its line on
//! screened launches. Screened findings are located by launch and buffer,
//! never by source line, and the text says so.

use crate::summary::shorten_to;
use std::fmt::Write as _;
use xfpx_common::names::readable;
use xfpx_common::report::Report;
use xfpx_common::screened::ScreenedFinding;

/// Longest kernel name in these lines.
const NAME_WIDTH: usize = 60;
/// Screened findings listed in a summary; the rest are counted.
const LISTED: usize = 20;

/// `arg3 (float*, 40000 bytes)`: the buffer of a screened finding.
fn buffer_words(f: &ScreenedFinding) -> String {
    match &f.declared {
        Some(t) => format!("arg{} ({t}, {} bytes)", f.param, f.bytes),
        None => format!("arg{} ({} bytes, read as {})", f.param, f.bytes, f.format.name()),
    }
}

/// `1 NaN after it, 0 before`.
fn counts_words(f: &ScreenedFinding) -> String {
    let what = match f.kind {
        xfpx_common::ExceptionKind::Nan => "NaN",
        _ => "infinite",
    };
    let element = f.first_element.map(|e| format!(" (lowest at element {e})")).unwrap_or_default();
    format!("{} {what} value{} after it, {} before{element}", f.after, if f.after == 1 { "" } else { "s" }, f.before)
}

/// The line printed when a screen first finds something in a kernel.
pub fn screened_line(kernel: &str, f: &ScreenedFinding) -> String {
    format!(
        "xfpx: screened {} ({}) in {} launch {}: buffer {} held {}; its next launch is instrumented to find the line",
        f.kind.name(),
        f.format.name(),
        shorten_to(&readable(kernel), NAME_WIDTH),
        f.first_launch,
        buffer_words(f),
        counts_words(f)
    )
}

/// The summary's section of screened findings (nothing when none).
pub fn screened_section(out: &mut String, report: &Report) {
    let all: Vec<(&str, &ScreenedFinding)> = report.screened().collect();
    if all.is_empty() {
        return;
    }
    out.push_str("\nscreened findings (located by launch and buffer, not by source line):\n");
    for (kernel, f) in all.iter().take(LISTED) {
        let name = report.kernels.iter().find(|k| k.name == *kernel).map_or(*kernel, |k| k.display_name());
        let before = match &f.screened_before {
            Some(b) if b.just_before => "; screened just before it".to_string(),
            Some(b) => {
                format!("; screened before after launch {} of {}", b.launch, shorten_to(&readable(&b.kernel), 40))
            }
            None => "; not screened before".to_string(),
        };
        let again = match f.again {
            0 => String::new(),
            n => format!("; grew again after {n} later launch{}", if n == 1 { "" } else { "es" }),
        };
        let _ = writeln!(
            out,
            "  {} launch {}: {} ({}) in {}: {}{before}{again}",
            shorten_to(&readable(name), NAME_WIDTH),
            f.first_launch,
            f.kind.name(),
            f.format.name(),
            buffer_words(f),
            counts_words(f)
        );
    }
    if all.len() > LISTED {
        let _ = writeln!(out, "  ... and {} more (`xfpx report --format json` lists them all)", all.len() - LISTED);
    }
    let unlocated = all.iter().filter(|(kernel, f)| !found_at_an_instruction(report, kernel, f)).count();
    if unlocated > 0 {
        let _ = writeln!(
            out,
            "  {unlocated} of them {} at no instruction: no instrumented launch of {} kernel raised {} again; \
             `--sample 1` instruments every launch (`--kernels RE` keeps that to the kernels named)",
            if unlocated == 1 { "was found" } else { "were found" },
            if unlocated == 1 { "its" } else { "their" },
            if unlocated == 1 { "it" } else { "them" },
        );
    }
}

/// Whether a precise record of its kernel has a screened finding's kind
/// and format (an instrumented launch located it at an instruction).
fn found_at_an_instruction(report: &Report, kernel: &str, f: &ScreenedFinding) -> bool {
    report
        .kernels
        .iter()
        .filter(|k| k.name == kernel)
        .flat_map(|k| &k.records)
        .any(|r| r.kind == f.kind && r.format == f.format)
}

/// `N launches not instrumented were screened ...`; `None` when no launch
/// was screened.
pub fn screened_launches_line(report: &Report) -> Option<String> {
    let screened: u64 = report.kernels.iter().map(|k| k.screened_launches).sum();
    if screened == 0 {
        return None;
    }
    let kernels = report.kernels.iter().filter(|k| k.screened_launches > 0).count();
    Some(format!(
        "{screened} launch{} of {kernels} kernel{} ran uninstrumented and {} screened: the buffers their pointer \
         arguments reach were scanned for NaN and infinity after them (found by launch and buffer, not by line)",
        if screened == 1 { "" } else { "es" },
        if kernels == 1 { "" } else { "s" },
        if screened == 1 { "was" } else { "were" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::class::FpFormat;
    use xfpx_common::fp::ExceptionKind;
    use xfpx_common::report::{Collector, KernelStatus, RunInfo, SiteRef};
    use xfpx_common::screened::{LaunchCheck, ScreenedBefore};
    use xfpx_common::site::SiteId;

    fn finding() -> ScreenedFinding {
        ScreenedFinding {
            kind: ExceptionKind::Nan,
            format: FpFormat::F32,
            param: 3,
            declared: Some("float*".into()),
            bytes: 40_000,
            first_launch: 5000,
            before: 0,
            after: 1,
            first_element: Some(5000),
            screened_before: Some(ScreenedBefore { kernel: "relax_step".into(), launch: 4999, just_before: false }),
            again: 0,
        }
    }

    #[test]
    fn the_live_line_names_launch_buffer_and_counts() {
        assert_eq!(
            screened_line("relax_step", &finding()),
            "xfpx: screened nan (f32) in relax_step launch 5000: buffer arg3 (float*, 40000 bytes) held 1 NaN value \
             after it, 0 before (lowest at element 5000); its next launch is instrumented to find the line"
        );
        let unknown =
            ScreenedFinding { declared: None, kind: ExceptionKind::Inf, after: 3, first_element: None, ..finding() };
        assert!(screened_line("k", &unknown)
            .contains("buffer arg3 (40000 bytes, read as f32) held 3 infinite values after it, 0 before;"));
    }

    #[test]
    fn the_summary_lists_screened_findings_and_launches() {
        let mut c = Collector::new(RunInfo::new("nvidia", "H100", "fast"), None);
        c.kernel_status("relax_step", KernelStatus::Instrumented, 3);
        let mut out = String::new();
        screened_section(&mut out, &c.report());
        assert!(out.is_empty());
        assert_eq!(screened_launches_line(&c.report()), None);
        for i in 0..6 {
            c.launch_checked("relax_step", if i < 4 { LaunchCheck::Instrumented } else { LaunchCheck::Screened });
        }
        c.screened("relax_step", finding());
        c.screened("relax_step", ScreenedFinding { first_launch: 5003, ..finding() });
        let r = c.report();
        screened_section(&mut out, &r);
        assert_eq!(
            out,
            "\nscreened findings (located by launch and buffer, not by source line):\n  relax_step launch 5000: nan \
             (f32) in arg3 (float*, 40000 bytes): 1 NaN value after it, 0 before (lowest at element 5000); screened \
             before after launch 4999 of relax_step; grew again after 1 later launch\n  1 of them was found at no \
             instruction: no instrumented launch of its kernel raised it again; `--sample 1` instruments every launch \
             (`--kernels RE` keeps that to the kernels named)\n"
        );
        let line = screened_launches_line(&r).expect("a line");
        assert!(line.starts_with("2 launches of 1 kernel ran uninstrumented and were screened"), "{line}");
        // an instrumented launch that raised the same class at an instruction locates it
        let site = SiteRef { id: SiteId(0), offset: 0x40, instr: "FADD R1, R2, R3".into(), location: None };
        c.record("relax_step", ExceptionKind::Inf, FpFormat::F32, site.clone(), 5001, 1);
        let mut out = String::new();
        screened_section(&mut out, &c.report());
        assert!(out.contains("1 of them was found at no instruction"), "{out}");
        c.record("relax_step", ExceptionKind::Nan, FpFormat::F32, site, 5001, 1);
        let mut out = String::new();
        screened_section(&mut out, &c.report());
        assert!(!out.contains("at no instruction"), "{out}");
    }
}
