//! Combining the reports of several processes of one parallel job (one
//! report per rank) into one: kernels by name, findings by kernel,
//! instruction offset, kind and format, each with the ranks that saw it.
//! Inputs of different vendors are refused; other differences (program,
//! version, mode, device) are kept as notes of the merged report.

use crate::launcher::ranks_text;
use crate::report::{ExceptionRecord, ExitStatus, KernelReport, KernelStatus, Report, ToolInfo, SCHEMA};
use std::collections::BTreeMap;

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    #[error("no reports to merge")]
    Empty,
    #[error("cannot merge reports of different vendors: {first} is {first_vendor}, {other} is {other_vendor}")]
    Vendors { first: String, first_vendor: String, other: String, other_vendor: String },
}

/// The merged report and the notes the merge added to it (for the user
/// to read at once; they are in `report.run.notes` too).
#[derive(Debug, Clone)]
pub struct Merged {
    pub report: Report,
    pub notes: Vec<String>,
}

/// How bad an exit is: a clean exit, an exit status, unknown, a signal.
fn severity(exit: &ExitStatus) -> u8 {
    match exit {
        ExitStatus::Code { code: 0 } => 0,
        ExitStatus::Code { .. } => 1,
        ExitStatus::Unknown => 2,
        ExitStatus::Signal { .. } => 3,
    }
}

fn merged_status(a: &KernelStatus, b: &KernelStatus) -> KernelStatus {
    match (a, b) {
        (KernelStatus::Instrumented, _) | (_, KernelStatus::Instrumented) => KernelStatus::Instrumented,
        (KernelStatus::Partial, _) | (_, KernelStatus::Partial) => KernelStatus::Partial,
        (KernelStatus::Skipped { .. }, _) => a.clone(),
        (_, KernelStatus::Skipped { .. }) => b.clone(),
        _ => KernelStatus::Excluded,
    }
}

/// Distinct values in input order, with the first input that had each.
fn distinct<'a, T: PartialEq>(inputs: &'a [(String, Report)], get: impl Fn(&'a Report) -> T) -> Vec<(T, &'a str)> {
    let mut seen: Vec<(T, &str)> = Vec::new();
    for (label, r) in inputs {
        let v = get(r);
        if !seen.iter().any(|(s, _)| *s == v) {
            seen.push((v, label));
        }
    }
    seen
}

/// A note when inputs differ in `what`.
fn differ_note<T>(what: &str, values: &[(T, &str)], show: impl Fn(&T) -> String) -> Option<String> {
    (values.len() > 1).then(|| {
        let list: Vec<String> = values.iter().map(|(v, label)| format!("{} ({label})", show(v))).collect();
        format!("the merged reports differ in {what}: {}", list.join(", "))
    })
}

/// Merge `inputs` (a label, e.g. the file name, and a report each).
pub fn merge(inputs: &[(String, Report)]) -> Result<Merged, MergeError> {
    let Some((first_label, first)) = inputs.first() else { return Err(MergeError::Empty) };
    if let Some((label, r)) = inputs.iter().find(|(_, r)| r.run.vendor != first.run.vendor) {
        return Err(MergeError::Vendors {
            first: first_label.clone(),
            first_vendor: first.run.vendor.clone(),
            other: label.clone(),
            other_vendor: r.run.vendor.clone(),
        });
    }
    let mut notes = Vec::new();
    let commands = distinct(inputs, |r| &r.run.command);
    notes.extend(differ_note("program", &commands, |c| format!("`{}`", c.join(" "))));
    notes.extend(differ_note("xfpx version", &distinct(inputs, |r| &r.tool.version), |v| v.to_string()));
    notes.extend(differ_note("mode", &distinct(inputs, |r| &r.run.mode), |m| m.to_string()));
    let devices = distinct(inputs, |r| (&r.run.device, &r.run.target));
    notes.extend(differ_note("device", &devices, |(d, t)| {
        t.as_ref().map_or_else(|| d.to_string(), |t| format!("{d} {t}"))
    }));
    let samplings = distinct(inputs, |r| (r.run.sample_auto, r.run.sample_every));
    notes.extend(differ_note("sampling", &samplings, |(auto, k)| {
        if *auto {
            "`--sample auto`".to_string()
        } else {
            format!("`--sample {k}`")
        }
    }));
    let unattached: Vec<&str> = inputs.iter().filter(|(_, r)| !r.run.attached).map(|(l, _)| l.as_str()).collect();
    if !unattached.is_empty() {
        notes.push(format!(
            "the instrumentation never attached in {}: nothing was checked there",
            unattached.join(", ")
        ));
    }

    // Which inputs each rank came from.
    let mut rank_inputs: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut rankless = Vec::new();
    for (label, r) in inputs {
        let ranks = r.ranks();
        if ranks.is_empty() {
            rankless.push(label.as_str());
        }
        for rank in ranks {
            rank_inputs.entry(rank).or_default().push(label);
        }
    }
    for (rank, labels) in rank_inputs.iter().filter(|(_, l)| l.len() > 1) {
        notes.push(format!("rank {rank} appears in {} of the merged reports: {}", labels.len(), labels.join(", ")));
    }
    if !rankless.is_empty() {
        notes.push(format!(
            "{} of the merged reports name{} no rank (no instrumented process reported one): {}",
            rankless.len(),
            if rankless.len() == 1 { "s" } else { "" },
            rankless.join(", ")
        ));
    }

    let mut kernels: BTreeMap<String, KernelReport> = BTreeMap::new();
    let mut index: BTreeMap<(String, u64, crate::fp::ExceptionKind, crate::class::FpFormat), usize> = BTreeMap::new();
    let mut processes = Vec::new();
    for (_, r) in inputs {
        let input_ranks = r.ranks();
        // A record without ranks belongs to the report's one rank, if it has one.
        let fallback: Vec<u32> = if input_ranks.len() == 1 { input_ranks.clone() } else { Vec::new() };
        processes.extend(r.processes.iter().cloned());
        for k in &r.kernels {
            let merged = kernels.entry(k.name.clone()).or_insert_with(|| KernelReport {
                denormals: k.denormals.clone(),
                ..KernelReport::empty(k.name.clone(), k.demangled.clone(), k.status.clone())
            });
            merged.status = merged_status(&merged.status, &k.status);
            merged.launches = merged.launches.saturating_add(k.launches);
            merged.instrumented_launches = merged.instrumented_launches.saturating_add(k.instrumented_launches);
            merged.screened_launches = merged.screened_launches.saturating_add(k.screened_launches);
            for u in &k.unchecked {
                crate::screened::add_unchecked(&mut merged.unchecked, u.reason, u.launches);
            }
            for f in &k.screened {
                crate::screened::add_screened(&mut merged.screened, f.clone());
            }
            merged.probes = merged.probes.max(k.probes);
            // The input that checked the most sites says the coverage.
            if k.coverage.as_ref().map(|c| c.checked) > merged.coverage.as_ref().map(|c| c.checked) {
                merged.coverage = k.coverage.clone();
            }
            for rec in &k.records {
                let ranks = if rec.ranks.is_empty() { &fallback } else { &rec.ranks };
                let key = (k.name.clone(), rec.site.offset, rec.kind, rec.format);
                match index.get(&key) {
                    Some(&i) => add_sighting(&mut merged.records[i], rec, ranks),
                    None => {
                        index.insert(key, merged.records.len());
                        let mut new = ExceptionRecord { ranks: Vec::new(), ..rec.clone() };
                        add_ranks(&mut new.ranks, ranks);
                        merged.records.push(new);
                    }
                }
            }
        }
    }
    let mut kernels: Vec<KernelReport> = kernels.into_values().collect();
    for k in &mut kernels {
        k.records.sort_by_key(|r| (r.site.offset, r.kind, r.format));
    }
    processes.sort();
    processes.dedup();

    let mut run = first.run.clone();
    run.device = devices.iter().map(|((d, _), _)| d.as_str()).collect::<Vec<_>>().join(", ");
    if devices.len() > 1 {
        run.target = None;
    }
    run.started_unix = inputs.iter().map(|(_, r)| r.run.started_unix).min().unwrap_or(first.run.started_unix);
    run.finished_unix = inputs.iter().filter_map(|(_, r)| r.run.finished_unix).max();
    run.exit = inputs.iter().map(|(_, r)| &r.run.exit).fold(first.run.exit.clone(), |worst, e| {
        if severity(e) > severity(&worst) {
            e.clone()
        } else {
            worst
        }
    });
    run.sample_auto = samplings.iter().any(|((auto, _), _)| *auto);
    run.sample_every = if run.sample_auto { 0 } else { samplings.iter().map(|((_, k), _)| *k).max().unwrap_or(1) };
    run.truncated = inputs.iter().any(|(_, r)| r.run.truncated);
    run.attached = inputs.iter().any(|(_, r)| r.run.attached);
    run.notes = Vec::new();
    for n in inputs.iter().flat_map(|(_, r)| &r.run.notes) {
        if !run.notes.contains(n) {
            run.notes.push(n.clone());
        }
    }
    let ranks: Vec<u32> = rank_inputs.keys().copied().collect();
    let merged_from = if ranks.is_empty() {
        format!("merged from {} reports", inputs.len())
    } else {
        format!("merged from {} reports of ranks {}", inputs.len(), ranks_text(&ranks))
    };
    let (counters, counter_note) =
        crate::counters::merge_sections(inputs.iter().map(|(l, r)| (l.as_str(), r.counters.as_ref())));
    let notes: Vec<String> = notes.into_iter().chain(counter_note).collect();
    run.notes.push(merged_from);
    run.notes.extend(notes.iter().cloned());
    let report = Report {
        schema: SCHEMA.to_string(),
        tool: ToolInfo { name: "xfpx".into(), version: env!("CARGO_PKG_VERSION").into() },
        run,
        kernels,
        processes,
        counters,
        injection: merge_injections(inputs.iter().filter_map(|(_, r)| r.injection.as_ref())),
        flow: crate::report::FlowSection::merge(inputs.iter().filter_map(|(_, r)| r.flow.as_ref())),
    };
    Ok(Merged { report, notes })
}

/// The processes of one faulty run report the same fault: their
/// activations add up (the first fault is kept if they differ).
fn merge_injections<'a>(
    mut all: impl Iterator<Item = &'a crate::report::Injection>,
) -> Option<crate::report::Injection> {
    let mut merged = all.next()?.clone();
    for i in all.filter(|i| i.fault == merged.fault) {
        merged.activations = merged.activations.saturating_add(i.activations);
        merged.exact &= i.exact;
    }
    Some(merged)
}

fn add_ranks(into: &mut Vec<u32>, ranks: &[u32]) {
    for &r in ranks {
        if let Err(at) = into.binary_search(&r) {
            into.insert(at, r);
        }
    }
}

fn add_sighting(into: &mut ExceptionRecord, rec: &ExceptionRecord, ranks: &[u32]) {
    into.occurrences = into.occurrences.saturating_add(rec.occurrences);
    if let Some(launch) = rec.known_first_launch() {
        into.saw_in_launch(launch);
    }
    if into.site.location.is_none() {
        into.site.location.clone_from(&rec.site.location);
    }
    add_ranks(&mut into.ranks, ranks);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::FpFormat;
    use crate::fp::ExceptionKind;
    use crate::report::{Collector, ProcessInfo, RunInfo, SiteRef};
    use crate::site::{SiteId, SourceLoc};

    fn site(id: u32, offset: u64, line: Option<u32>) -> SiteRef {
        SiteRef {
            id: SiteId(id),
            offset,
            instr: "FADD R1, R2, R3".into(),
            location: line.map(|line| SourceLoc::new("a.cu", line)),
        }
    }

    /// The report one rank's run writes: `findings` as (kernel, offset, kind, occurrences).
    fn rank_report(rank: Option<u32>, exit: ExitStatus, findings: &[(&str, u64, ExceptionKind, u64)]) -> Report {
        let run = RunInfo {
            target: Some("sm_90".into()),
            command: vec!["./app".into()],
            started_unix: 100 + u64::from(rank.unwrap_or(0)),
            finished_unix: Some(200 + u64::from(rank.unwrap_or(0))),
            exit,
            notes: vec!["launches sampled".into()],
            ..RunInfo::new("nvidia", "GPU", "fast")
        };
        let mut c = Collector::new(run, None);
        c.add_process(ProcessInfo {
            rank,
            size: Some(4),
            host: "node".into(),
            pid: 1000 + rank.unwrap_or(99),
            launcher: rank.map(|_| "open-mpi".into()),
        });
        for (i, &(kernel, offset, kind, occ)) in findings.iter().enumerate() {
            c.launch(kernel, true);
            c.kernel_status(kernel, KernelStatus::Instrumented, 10);
            // Site ids differ between processes; offsets identify the instruction.
            let id = i as u32 + rank.unwrap_or(0) * 10;
            c.record(kernel, kind, FpFormat::F32, site(id, offset, Some(7)), rank.map_or(0, u64::from), occ);
            if let Some(r) = rank {
                c.add_rank(kernel, offset, kind, FpFormat::F32, r);
            }
        }
        c.report()
    }

    /// (kernel, offset, kind, occurrences, first launch, ranks) of a record.
    type Seen<'a> = (&'a str, u64, ExceptionKind, u64, u64, &'a [u32]);

    fn ok0() -> ExitStatus {
        ExitStatus::Code { code: 0 }
    }

    #[test]
    fn findings_are_merged_per_instruction_with_their_ranks() {
        use ExceptionKind::{Inf, Nan};
        let inputs = vec![
            ("r.0.json".to_string(), rank_report(Some(0), ok0(), &[("gemm", 0x10, Nan, 2), ("gemm", 0x20, Inf, 1)])),
            ("r.1.json".to_string(), rank_report(Some(1), ok0(), &[("gemm", 0x10, Nan, 3)])),
            ("r.2.json".to_string(), rank_report(Some(2), ok0(), &[])),
            ("r.3.json".to_string(), rank_report(Some(3), ok0(), &[("reduce", 0x10, Nan, 1), ("gemm", 0x10, Nan, 1)])),
        ];
        let m = merge(&inputs).expect("merges");
        assert!(m.notes.is_empty(), "{:?}", m.notes);
        let r = &m.report;
        assert_eq!(r.ranks(), [0, 1, 2, 3], "rank 2 ran, found nothing");
        let got: Vec<Seen<'_>> = r
            .records()
            .map(|(k, x)| (k, x.site.offset, x.kind, x.occurrences, x.first_launch, x.ranks.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                ("gemm", 0x10, Nan, 6, 0, &[0, 1, 3][..]),
                ("gemm", 0x20, Inf, 1, 0, &[0][..]),
                ("reduce", 0x10, Nan, 1, 3, &[3][..]),
            ]
        );
        let gemm = &r.kernels[0];
        assert_eq!((gemm.launches, gemm.instrumented_launches, gemm.probes), (4, 4, 10));
        assert_eq!((r.run.started_unix, r.run.finished_unix), (100, Some(203)));
        assert_eq!(r.run.notes, ["launches sampled", "merged from 4 reports of ranks 0-3"]);
        assert_eq!(r.processes.len(), 4);
        assert_eq!(Report::from_json(&r.to_json()).expect("json"), *r);
    }

    #[test]
    fn auto_sampling_survives_a_merge() {
        let mut auto = rank_report(Some(0), ok0(), &[]);
        (auto.run.sample_auto, auto.run.sample_every) = (true, 0);
        let every = rank_report(Some(1), ok0(), &[]);
        let m = merge(&[("r.0".to_string(), auto.clone()), ("r.1".to_string(), every)]).expect("merges");
        assert_eq!((m.report.run.sample_auto, m.report.run.sample_every), (true, 0));
        assert!(
            m.notes
                .iter()
                .any(|n| n == "the merged reports differ in sampling: `--sample auto` (r.0), `--sample 1` (r.1)"),
            "{:?}",
            m.notes
        );
        let m = merge(&[("a".to_string(), auto.clone()), ("b".to_string(), auto)]).expect("merges");
        assert_eq!((m.report.run.sample_auto, m.report.run.sample_every), (true, 0));
    }

    #[test]
    fn the_worst_exit_wins() {
        let with = |exits: Vec<ExitStatus>| {
            let inputs: Vec<(String, Report)> = exits
                .into_iter()
                .enumerate()
                .map(|(i, e)| (format!("r.{i}"), rank_report(Some(i as u32), e, &[])))
                .collect();
            merge(&inputs).expect("merges").report.run.exit
        };
        assert_eq!(with(vec![ok0(), ok0()]), ok0());
        assert_eq!(with(vec![ok0(), ExitStatus::Code { code: 2 }, ok0()]), ExitStatus::Code { code: 2 });
        assert_eq!(
            with(vec![ExitStatus::Code { code: 1 }, ExitStatus::Signal { signal: 11 }, ExitStatus::Unknown]),
            ExitStatus::Signal { signal: 11 }
        );
        assert_eq!(with(vec![ExitStatus::Code { code: 1 }, ExitStatus::Unknown]), ExitStatus::Unknown);
    }

    #[test]
    fn different_vendors_are_refused_other_differences_noted() {
        let a = rank_report(Some(0), ok0(), &[]);
        let mut b = rank_report(Some(1), ok0(), &[]);
        b.run.vendor = "amd".into();
        let e = merge(&[("a.json".into(), a.clone()), ("b.json".into(), b)]).expect_err("refused");
        assert_eq!(e.to_string(), "cannot merge reports of different vendors: a.json is nvidia, b.json is amd");
        assert_eq!(merge(&[]).expect_err("empty"), MergeError::Empty);

        let mut c = rank_report(Some(1), ok0(), &[]);
        c.run.command = vec!["./other".into()];
        c.tool.version = "0.0.1".into();
        c.run.device = "Other GPU".into();
        let m = merge(&[("a.json".into(), a.clone()), ("c.json".into(), c)]).expect("merges");
        assert_eq!(m.notes.len(), 3, "{:?}", m.notes);
        assert!(m.notes[0].contains("program: `./app` (a.json), `./other` (c.json)"), "{:?}", m.notes);
        assert!(m.notes.iter().all(|n| !n.contains('\n')));
        assert_eq!(m.report.run.device, "GPU, Other GPU");
        assert_eq!(m.report.run.target, None);
        assert!(m.report.run.notes.ends_with(&m.notes));
    }

    #[test]
    fn duplicate_and_missing_ranks_are_noted() {
        use ExceptionKind::Nan;
        let a = rank_report(Some(0), ok0(), &[("k", 0x10, Nan, 1)]);
        // A report whose records carry no ranks (an older run of one rank).
        let mut old = rank_report(Some(1), ok0(), &[("k", 0x10, Nan, 1)]);
        for k in &mut old.kernels {
            for r in &mut k.records {
                r.ranks.clear();
            }
        }
        let plain = rank_report(None, ok0(), &[("k", 0x10, Nan, 1)]);
        let inputs = vec![
            ("a.json".to_string(), a.clone()),
            ("again.json".to_string(), a),
            ("old.json".to_string(), old),
            ("plain.json".to_string(), plain),
        ];
        let m = merge(&inputs).expect("merges");
        assert_eq!(
            m.notes,
            [
                "rank 0 appears in 2 of the merged reports: a.json, again.json",
                "1 of the merged reports names no rank (no instrumented process reported one): plain.json",
            ]
        );
        let rec = &m.report.kernels[0].records[0];
        assert_eq!((rec.occurrences, rec.ranks.as_slice()), (4, &[0, 1][..]));
    }
}
