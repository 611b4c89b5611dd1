//! Text a user reads: the line printed for each new finding while the
//! program runs, and the end-of-run summary (per kernel, per format and
//! kind) shared by `xfpx run` and `xfpx report`.

use crate::{findings, signals};
use std::fmt::Write as _;
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::launcher::ranks_text;
use xfpx_common::report::{
    ExceptionRecord, ExitStatus, KernelReport, KernelStatus, Report, RunInfo, SiteCoverage, SiteRef,
};

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

pub fn status_words(s: &KernelStatus) -> String {
    match s {
        KernelStatus::Instrumented => "instrumented".into(),
        KernelStatus::Partial => "partial".into(),
        KernelStatus::Excluded => "excluded".into(),
        KernelStatus::Skipped { reason } => format!("skipped: {reason}"),
    }
}

fn shorten(name: &str) -> String {
    shorten_to(name, NAME_WIDTH)
}

/// `name` cut to `width` characters, the cut marked with `...`.
pub fn shorten_to(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        name.to_string()
    } else {
        let head: String = name.chars().take(width.saturating_sub(3)).collect();
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

/// `N findings in K of M kernels (vendor, device, target, mode M)`, or,
/// never silent, `nothing was checked: WHY (...)` first.
pub fn headline(report: &Report) -> String {
    let run = &report.run;
    let records: usize = report.kernels.iter().map(|k| k.records.len()).sum();
    let with_findings = report.kernels.iter().filter(|k| !k.records.is_empty()).count();
    let target = run.target.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
    let about = format!("{}, {}{target}, mode {}", run.vendor, run.device, run.mode);
    match report.nothing_checked() {
        Some(reason) => {
            format!(
                "nothing was checked: {reason} ({} kernel{} seen; {about})",
                report.kernels.len(),
                plural(report.kernels.len())
            )
        }
        // a flow run follows exceptional values (its sentences follow)
        None if records == 0 && report.flow.is_some() => {
            let section = report.flow.as_ref().map(crate::flow_text::headline_words).unwrap_or_default();
            format!("{section} of {} kernel{} ({about})", report.kernels.len(), plural(report.kernels.len()))
        }
        // a counters run finds nothing: it counts (its table follows)
        None if records == 0 && report.counters.is_some() => {
            let counted = report.counters.as_ref().map_or(0, |s| s.kernels.len());
            format!(
                "counters of {counted} of {} kernel{} ({about})",
                report.kernels.len(),
                plural(report.kernels.len())
            )
        }
        None => {
            let screened = report.screened().count();
            let screened = if screened > 0 {
                format!(", {screened} screened finding{} (by launch and buffer)", plural(screened))
            } else {
                String::new()
            };
            format!(
                "{records} finding{} in {with_findings} of {} kernel{}{screened} ({about})",
                plural(records),
                report.kernels.len(),
                plural(report.kernels.len())
            )
        }
    }
}

/// The summary of a report: headline, per-kernel and per-format tables,
/// the findings by kernel and source line, and the notes. `full` lists
/// every source line and instruction (for `xfpx report`, where the findings
/// were not seen live); otherwise long lists are cut short.
pub fn summary(report: &Report, full: bool) -> String {
    let mut out = String::new();
    let run = &report.run;
    let records: usize = report.kernels.iter().map(|k| k.records.len()).sum();
    let _ = writeln!(out, "xfpx: {}", headline(report));
    // a replay names itself first; a program run on the emulated HSA runtime is a program
    if run.vendor == "amd-emulated" && run.command.first().is_some_and(|c| c == "replay") {
        let _ = writeln!(out, "xfpx: replayed on the emulator: {}", run.command.join(" "));
    } else {
        let _ = writeln!(out, "xfpx: the program {}: {}", exit_words(&run.exit), run.command.join(" "));
    }
    if let Some(line) = ranks_line(report) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = crate::screen_lines::screened_launches_line(report) {
        let _ = writeln!(out, "xfpx: {line}");
    }
    if let Some(line) = unchecked_line(report) {
        let _ = writeln!(out, "xfpx: {line}");
    } else if let (Some(s), None) = (sampling_words(run), crate::screen_lines::screened_launches_line(report)) {
        let _ = writeln!(out, "xfpx: {s}");
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
    for line in coverage_lines(report) {
        let _ = writeln!(out, "xfpx: {line}");
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
    if records > 0 {
        let limits = if full { Limits::NONE } else { Limits::LIVE };
        by_line(&mut out, report, limits);
    }
    crate::screen_lines::screened_section(&mut out, report);
    out.push_str(&crate::flow_text::flow_text(report));
    if !run.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &run.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

/// The kernels' coverage: FP sites checked of all, then each kernel that
/// lost some, with its sites refused by reason; nothing when no kernel
/// says its coverage.
pub fn coverage_lines(report: &Report) -> Vec<String> {
    let covered: Vec<(&KernelReport, &SiteCoverage)> =
        report.kernels.iter().filter_map(|k| k.coverage.as_ref().map(|c| (k, c))).collect();
    if covered.is_empty() {
        return Vec::new();
    }
    let fp_sites: u64 = covered.iter().map(|(_, c)| c.fp_sites).sum();
    let checked: u64 = covered.iter().map(|(_, c)| c.checked).sum();
    let lost: Vec<&KernelReport> = report.coverage_lost().collect();
    let mut lines = vec![format!(
        "coverage: {checked} of {fp_sites} FP site{} checked{}",
        plural(fp_sites as usize),
        if lost.is_empty() {
            String::new()
        } else {
            format!("; {} kernel{} partly or not instrumented", lost.len(), plural(lost.len()))
        }
    )];
    for k in lost {
        let refused = k.coverage.as_ref().map(|c| c.refused.as_slice()).unwrap_or_default();
        let why: Vec<String> = refused.iter().map(|r| format!("{} refused: {}", r.sites, r.reason)).collect();
        let (checked, of) = k.coverage.as_ref().map_or((0, 0), |c| (c.checked, c.fp_sites));
        lines.push(format!(
            "  {} ({}): {checked} of {of} checked{}{}",
            shorten(k.display_name()),
            status_words(&k.status),
            if why.is_empty() { "" } else { "; " },
            why.join("; ")
        ));
    }
    lines
}

/// Which ranks of a parallel job reported, and which of the job's ranks
/// did not; `None` when no process named a rank.
fn ranks_line(report: &Report) -> Option<String> {
    let ranks = report.ranks();
    if ranks.is_empty() {
        return None;
    }
    let processes = report.processes.len();
    let mut hosts: Vec<&str> = report.processes.iter().map(|p| p.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut line = format!(
        "xfpx: ranks {} reported ({processes} process{} on {} host{})",
        ranks_text(&ranks),
        if processes == 1 { "" } else { "es" },
        hosts.len(),
        plural(hosts.len())
    );
    // The job's size, as the launcher gave it (guarded against absurd values).
    let size = report.processes.iter().filter_map(|p| p.size).max().filter(|&s| s <= 1 << 20);
    if let Some(size) = size {
        let missing: Vec<u32> = (0..size).filter(|r| ranks.binary_search(r).is_err()).collect();
        if !missing.is_empty() {
            let _ = write!(line, "; of {size} ranks, {} never reported", ranks_text(&missing));
        }
    }
    Some(line)
}

/// `first in launch 5000`, or that no launch is known (a finding the tool
/// learned of only from counters read at the end of the run).
fn first_in_launch(launch: Option<u64>) -> String {
    launch.map_or_else(|| "launch unknown".to_string(), |l| format!("first in launch {l}"))
}

/// `, on ranks 0-3` for a finding of a parallel job.
fn seen_on(ranks: &[u32]) -> String {
    match ranks {
        [] => String::new(),
        [one] => format!(", on rank {one}"),
        many => format!(", on ranks {}", ranks_text(many)),
    }
}

/// How much of the findings by source line a summary lists.
#[derive(Debug, Clone, Copy)]
struct Limits {
    kernels: usize,
    lines_per_kernel: usize,
    instructions_per_line: usize,
}

impl Limits {
    const NONE: Limits =
        Limits { kernels: usize::MAX, lines_per_kernel: usize::MAX, instructions_per_line: usize::MAX };
    /// After a run, whose findings were printed as they came.
    const LIVE: Limits = Limits { kernels: 20, lines_per_kernel: 10, instructions_per_line: 4 };
}

/// Longest instruction text before the records at it are aligned past it.
const INSTR_WIDTH: usize = 40;

/// Findings by kernel, then source line (its kinds and counts), with the
/// instructions of each line under it.
fn by_line(out: &mut String, report: &Report, limits: Limits) {
    out.push_str("\nfindings by source line:\n");
    let kernels = findings::by_line(report);
    for k in kernels.iter().take(limits.kernels) {
        let _ = writeln!(
            out,
            "  {}: {} finding{} at {} instruction{}",
            k.kernel.display_name(),
            k.findings,
            plural(k.findings),
            k.instructions,
            plural(k.instructions)
        );
        let offset_width = k.lines.iter().flat_map(|l| &l.instructions).map(|i| hex(i.offset).len()).max().unwrap_or(0);
        for line in k.lines.iter().take(limits.lines_per_kernel) {
            let _ = writeln!(
                out,
                "    {}: {}; {} finding{} at {} instruction{}, {} occurrence{}, {}",
                line.place(),
                kinds_words(&line.kinds),
                line.findings,
                plural(line.findings),
                line.instructions.len(),
                plural(line.instructions.len()),
                line.occurrences,
                plural(line.occurrences as usize),
                first_in_launch(line.first_launch)
            );
            let instr_width =
                line.instructions.iter().map(|i| i.instr.chars().count()).max().unwrap_or(0).min(INSTR_WIDTH);
            for i in line.instructions.iter().take(limits.instructions_per_line) {
                let records: Vec<String> = i
                    .records
                    .iter()
                    .map(|r| {
                        format!(
                            "{} ({}), {}, {} occurrence{}{}",
                            r.kind.name(),
                            r.format.name(),
                            first_in_launch(r.known_first_launch()),
                            r.occurrences,
                            plural(r.occurrences as usize),
                            seen_on(&r.ranks)
                        )
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "      {:>offset_width$}  {:<instr_width$}  {}",
                    hex(i.offset),
                    i.instr,
                    records.join("; ")
                );
            }
            more(out, "      ", line.instructions.len(), limits.instructions_per_line, ("instruction", "instructions"));
        }
        more(out, "    ", k.lines.len(), limits.lines_per_kernel, ("source line", "source lines"));
    }
    more(out, "  ", kernels.len(), limits.kernels, ("kernel with findings", "kernels with findings"));
}

/// `nan (f32, f64), div0 (f32)`: the kinds of a line, each with its formats.
fn kinds_words(kinds: &[findings::KindCount]) -> String {
    let mut words: Vec<(ExceptionKind, Vec<&str>)> = Vec::new();
    for c in kinds {
        match words.last_mut() {
            Some((kind, formats)) if *kind == c.kind => formats.push(c.format.name()),
            _ => words.push((c.kind, vec![c.format.name()])),
        }
    }
    words.iter().map(|(k, f)| format!("{} ({})", k.name(), f.join(", "))).collect::<Vec<_>>().join(", ")
}

fn hex(offset: u64) -> String {
    format!("+{offset:#x}")
}

/// `... and N more THINGS (xfpx report lists them all)` when a list was cut.
fn more(out: &mut String, indent: &str, total: usize, shown: usize, (one, many): (&str, &str)) {
    if total > shown {
        let n = total - shown;
        let things = if n == 1 { one } else { many };
        let _ = writeln!(out, "{indent}... and {n} more {things} (`xfpx report` lists them all)");
    }
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

/// How launches were sampled, in words (as the run's own note says where
/// it has one); `None` when every launch was.
pub fn sampling_words(run: &RunInfo) -> Option<String> {
    if run.sample_auto {
        let how = run
            .notes
            .iter()
            .find_map(|n| n.strip_prefix(xfpx_common::config::SAMPLING_NOTE))
            .unwrap_or("launches 1-4 of each kernel, then launches 8, 16, 32, ...");
        Some(format!("launches sampled (`--sample auto`, the default in fast mode): {how}"))
    } else if run.sample_every > 1 {
        let k = run.sample_every;
        let th = match (k % 10, k % 100) {
            (1, n) if n != 11 => "st",
            (2, n) if n != 12 => "nd",
            (3, n) if n != 13 => "rd",
            _ => "th",
        };
        Some(format!("every {k}{th} launch of each kernel was instrumented (`--sample {k}`)"))
    } else {
        None
    }
}

/// Kernels named in the line on unchecked launches; the rest are counted.
const UNCHECKED_KERNELS_NAMED: usize = 5;

/// Launches of kernel `k` neither instrumented nor screened, leaving out
/// those with nothing to check (no floating-point result in its code).
pub fn unchecked_launches(k: &KernelReport) -> u64 {
    let nothing: u64 = k.unchecked.iter().filter(|u| !u.reason.hides_anything()).map(|u| u.launches).sum();
    k.launches.saturating_sub(k.instrumented_launches).saturating_sub(k.screened_launches).saturating_sub(nothing)
}

/// The launches of instrumented kernels that ran without checks (neither
/// instrumented nor screened), by kernel, why and how to check them all;
/// `None` when every launch of every instrumented kernel was checked.
pub fn unchecked_line(report: &Report) -> Option<String> {
    let mut kernels: Vec<(&KernelReport, u64)> = report
        .kernels
        .iter()
        .filter(|k| k.status == KernelStatus::Instrumented)
        .map(|k| (k, unchecked_launches(k)))
        .filter(|(_, n)| *n > 0)
        .collect();
    if kernels.is_empty() {
        return None;
    }
    // the reasons the backend gave, and the launches it gave none for
    // (sampling without screening, in reports before screening existed)
    let mut reasons: Vec<xfpx_common::screened::UncheckedLaunches> = Vec::new();
    let mut unexplained = 0u64;
    for (k, n) in &kernels {
        let mut given = 0;
        for u in k.unchecked.iter().filter(|u| u.reason.hides_anything()) {
            xfpx_common::screened::add_unchecked(&mut reasons, u.reason, u.launches);
            given += u.launches;
        }
        unexplained += n.saturating_sub(given);
    }
    kernels.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.name.cmp(&b.0.name)));
    let unchecked: u64 = kernels.iter().map(|(_, n)| n).sum();
    let launches: u64 = kernels.iter().map(|(k, _)| k.launches).sum();
    let mut named: Vec<String> = kernels
        .iter()
        .take(UNCHECKED_KERNELS_NAMED)
        .map(|(k, n)| format!("{} ({n} of {})", shorten(&xfpx_common::names::readable(k.display_name())), k.launches))
        .collect();
    if kernels.len() > UNCHECKED_KERNELS_NAMED {
        let rest = kernels.len() - UNCHECKED_KERNELS_NAMED;
        named.push(format!("{rest} more kernel{}", plural(rest)));
    }
    let run = &report.run;
    let mut why: Vec<String> = reasons.iter().map(|u| format!("{}: {}", u.reason.words(), u.launches)).collect();
    if unexplained > 0 || reasons.is_empty() {
        why.extend(sampling_words(run));
    }
    if run.truncated {
        why.push("the record limit was reached (`--max-records`)".into());
    }
    let why = if why.is_empty() { String::new() } else { format!(" [{}]", why.join("; ")) };
    let fix = if run.sample_auto || run.sample_every > 1 {
        "; `--sample 1` checks every launch"
    } else if run.truncated {
        "; a larger `--max-records` checks more"
    } else {
        ""
    };
    Some(format!(
        "{unchecked} of {launches} launch{} of {} instrumented kernel{} ran unchecked{why}: {}{fix}",
        if launches == 1 { "" } else { "es" },
        kernels.len(),
        plural(kernels.len()),
        named.join(", ")
    ))
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::report::Collector;
    use xfpx_common::site::{SiteId, SourceLoc};

    fn sample() -> Report {
        let run = RunInfo {
            target: Some("sm_90".into()),
            command: vec!["./app".into(), "7".into()],
            finished_unix: Some(1),
            exit: ExitStatus::Signal { signal: libc::SIGSEGV },
            notes: vec!["a note".into()],
            ..RunInfo::new("nvidia", "NVIDIA H100", "detect")
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
    fn unchecked_launches_are_counted_by_kernel_with_the_fix() {
        let mut r = sample();
        assert_eq!(unchecked_line(&r), None, "every launch checked");
        assert!(!summary(&r, false).contains("unchecked"));
        // auto sampling: 2,000 launches of `step`, 12 instrumented
        r.run.sample_auto = true;
        r.run.sample_every = 0;
        let mut c = Collector::new(r.run.clone(), None);
        c.kernel_status("step", KernelStatus::Instrumented, 3);
        c.kernel_status("copy", KernelStatus::Excluded, 0);
        c.kernel_status("init", KernelStatus::Instrumented, 3);
        for i in 0..2000u64 {
            c.launch("step", i < 4 || (i + 1).is_power_of_two());
            c.launch("copy", false);
        }
        c.launch("init", true);
        let r = c.report();
        let line = unchecked_line(&r).expect("a line");
        assert_eq!(
            line,
            "1988 of 2000 launches of 1 instrumented kernel ran unchecked [launches sampled (`--sample auto`, the \
             default in fast mode): launches 1-4 of each kernel, then launches 8, 16, 32, ...]: step (1988 of 2000); \
             `--sample 1` checks every launch"
        );
        assert!(summary(&r, false).contains(&format!("xfpx: {line}\n")));
        // a stride, and more kernels than are named
        let mut c = Collector::new(RunInfo { sample_every: 2, sample_auto: false, ..r.run.clone() }, None);
        for k in 0..7 {
            let name = format!("k{k}");
            c.kernel_status(&name, KernelStatus::Instrumented, 1);
            for i in 0..10 + k {
                c.launch(&name, i % 2 == 0);
            }
        }
        let line = unchecked_line(&c.report()).expect("a line");
        assert!(line.starts_with("44 of 91 launches of 7 instrumented kernels ran unchecked [every 2nd"), "{line}");
        assert!(
            line.contains(": k6 (8 of 16), k4 (7 of 14), k5 (7 of 15), k2 (6 of 12), k3 (6 of 13), 2 more kernels;"),
            "{line}"
        );
    }

    #[test]
    fn screened_launches_are_checked_and_the_rest_say_why() {
        use xfpx_common::screened::{LaunchCheck, Unchecked};
        let run = RunInfo { sample_auto: true, sample_every: 0, ..RunInfo::new("nvidia", "H100", "fast") };
        let mut c = Collector::new(run, None);
        c.kernel_status("step", KernelStatus::Instrumented, 3);
        c.kernel_status("fill", KernelStatus::Instrumented, 0);
        for i in 0..2000u64 {
            let check = match i {
                _ if i < 4 || (i + 1).is_power_of_two() => LaunchCheck::Instrumented,
                1000..=1004 => LaunchCheck::Unchecked(Some(Unchecked::Graph)),
                1500..=1502 => LaunchCheck::Unchecked(Some(Unchecked::NoBuffers)),
                _ => LaunchCheck::Screened,
            };
            c.launch_checked("step", check);
        }
        for _ in 0..6 {
            c.launch_checked("fill", LaunchCheck::Unchecked(Some(Unchecked::NothingToCheck)));
        }
        let r = c.report();
        let line = unchecked_line(&r).expect("a line");
        assert_eq!(
            line,
            "8 of 2000 launches of 1 instrumented kernel ran unchecked [no pointer argument into device memory the \
             tool saw allocated: 3; launched by a CUDA graph: 5]: step (8 of 2000); `--sample 1` checks every launch"
        );
        let s = summary(&r, false);
        assert!(s.contains("xfpx: 1980 launches of 1 kernel ran uninstrumented and were screened"), "{s}");
        assert!(!s.contains("fill ("), "nothing to check is no gap: {s}");
        // every launch screened or instrumented: no line on unchecked launches
        let mut c = Collector::new(r.run.clone(), None);
        c.kernel_status("step", KernelStatus::Instrumented, 3);
        c.launch_checked("step", LaunchCheck::Instrumented);
        c.launch_checked("step", LaunchCheck::Screened);
        assert_eq!(unchecked_line(&c.report()), None);
    }

    #[test]
    fn sampling_is_told_as_the_run_s_note_says() {
        let settings = xfpx_common::config::RunSettings { sample_doubling: true, ..Default::default() };
        let config = settings.check().expect("valid");
        let mut run = RunInfo { sample_auto: true, sample_every: 0, ..RunInfo::new("nvidia", "H100", "fast") };
        let words = |run: &RunInfo| sampling_words(run).expect("sampled");
        assert!(words(&run).ends_with("launches 1-4 of each kernel, then launches 8, 16, 32, ..."), "no note");
        run.notes = config.sampling_note(true).into_iter().collect();
        let screened = words(&run);
        assert!(
            screened
                .starts_with("launches sampled (`--sample auto`, the default in fast mode): the first launch of each"),
            "{screened}"
        );
        run.notes = config.sampling_note(false).into_iter().collect();
        assert!(words(&run).contains(": launches 1-4 of each kernel"), "{}", words(&run));
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
        let full = summary(&sample(), true);
        assert!(full.contains("\n    app.cu:42: nan (f32), div0 (f64); 2 findings at 2 instructions, 6 occurrences, first in launch 0\n      +0x130  FADD R1, R2, R3  nan (f32), first in launch 0, 5 occurrences\n      +0x200  FADD R1, R2, R3  div0 (f64), first in launch 0, 1 occurrence\n"), "{full}");
    }

    #[test]
    fn an_unknown_first_launch_is_said_not_claimed() {
        let mut r = sample();
        for rec in &mut r.kernels[1].records {
            rec.first_launch_unknown = true;
        }
        let full = summary(&r, true);
        assert!(full.contains("6 occurrences, launch unknown\n"), "{full}");
        assert!(full.contains("nan (f32), launch unknown, 5 occurrences"), "{full}");
        assert!(!full.contains("first in launch 0"), "{full}");
        // one known launch in the line dates the line
        r.kernels[1].records[1].first_launch_unknown = false;
        r.kernels[1].records[1].first_launch = 9;
        assert!(summary(&r, true).contains("6 occurrences, first in launch 9\n"));
    }

    /// The layout of the findings by source line, pinned in
    /// `cli/testdata/summary-by-line.txt` (`XFPX_BLESS=1` rewrites it).
    #[test]
    fn findings_by_source_line_golden() {
        let r = crate::findings::tests::division_report();
        let text = format!(
            "== xfpx report (full) ==\n{}\n== after xfpx run (cut short) ==\n{}",
            summary(&r, true),
            summary(&r, false)
        );
        let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/summary-by-line.txt");
        if std::env::var_os("XFPX_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&golden, &text).expect("write golden");
        }
        let want = std::fs::read_to_string(&golden).expect("golden summary (XFPX_BLESS=1 writes it)");
        assert!(
            want == text,
            "summary differs from {}; rerun with XFPX_BLESS=1 after checking:\n{text}",
            golden.display()
        );
    }

    #[test]
    fn long_lists_are_cut_short_after_a_run() {
        let r = crate::findings::tests::division_report();
        let cut = summary(&r, false);
        assert!(cut.contains("      ... and 8 more instructions (`xfpx report` lists them all)\n"), "{cut}");
        let full = summary(&r, true);
        assert!(!full.contains("more instructions"), "{full}");
        assert_eq!(full.matches("FFMA R1, R2, R3, R4").count(), 12, "{full}");
        assert!(full.contains("\n    div.cu:12: nan (f32), div0 (f32); 14 findings at 12 instructions, 26 occurrences, first in launch 0\n"), "{full}");
        assert!(full.contains("\n  k: 16 findings at 14 instructions\n    div.cu:3: "), "{full}");
        let unknown = full.find("    unknown location: sub (f32)").expect("unknown location group");
        assert!(unknown > full.find("div.cu:12").expect("line 12"), "unknown location comes last: {full}");
    }

    #[test]
    fn a_run_that_checked_nothing_says_so_first() {
        let mut r = sample();
        r.run.attached = false;
        let s = summary(&r, false);
        assert!(
            s.starts_with("xfpx: nothing was checked: the instrumentation library never attached to the program"),
            "{s}"
        );
        let mut r = sample();
        for k in &mut r.kernels {
            k.instrumented_launches = 0;
            k.records.clear();
        }
        let s = summary(&r, false);
        assert!(
            s.starts_with("xfpx: nothing was checked: no kernel launch ran instrumented code (2 kernels seen"),
            "{s}"
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
            k.instrumented_launches = 2;
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
    fn ranks_are_named() {
        use xfpx_common::report::ProcessInfo;
        let mut r = sample();
        assert!(!summary(&r, false).contains("rank"), "a plain run says nothing of ranks");
        let p = |rank, host: &str| ProcessInfo { rank, size: Some(8), host: host.into(), pid: 1, launcher: None };
        r.processes = vec![p(Some(0), "a"), p(Some(1), "a"), p(Some(2), "b"), p(Some(5), "b"), p(None, "a")];
        r.kernels[1].records[0].ranks = vec![0, 1, 2];
        r.kernels[1].records[1].ranks = vec![5];
        let s = summary(&r, false);
        assert!(
            s.contains("xfpx: ranks 0-2,5 reported (5 processes on 2 hosts); of 8 ranks, 3-4,6-7 never reported\n"),
            "{s}"
        );
        assert!(
            s.contains("+0x130  FADD R1, R2, R3  nan (f32), first in launch 0, 5 occurrences, on ranks 0-2\n"),
            "{s}"
        );
        assert!(s.contains("+0x200  FADD R1, R2, R3  div0 (f64), first in launch 0, 1 occurrence, on rank 5\n"), "{s}");
    }

    #[test]
    fn long_names_are_shortened() {
        let long = "k".repeat(200);
        assert_eq!(shorten(&long).chars().count(), NAME_WIDTH);
        assert_eq!(shorten("short"), "short");
    }
}
