//! Counters on the command line: `xfpx region build REPORTS... -o FILE`
//! learns each kernel's operational region from fault-free runs' reports;
//! [`check`] applies a region file to a report (`xfpx report --region`),
//! printing each window outside its region and each kernel the region
//! does not know; [`table`] is the per-kernel counters table.

use crate::args::RegionArgs;
use crate::console::say;
use crate::report_io;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;
use xfpx_common::counters::RegionCheck;
use xfpx_common::region::{self, Region};
use xfpx_common::report::Report;

pub fn build(a: &RegionArgs) -> Result<i32> {
    let reports = a
        .reports
        .iter()
        .map(|f| Ok((f.display().to_string(), report_io::read(f)?)))
        .collect::<Result<Vec<(String, Report)>>>()?;
    // the default counters are those the first report's counters measure
    let source = reports.iter().find_map(|(_, r)| r.counters.as_ref()).map(|c| c.source).unwrap_or_default();
    let counters = match &a.counters {
        Some(list) => region::parse_counters(list)?,
        None => region::default_counters(source),
    };
    let runs: Vec<(String, Option<&xfpx_common::counters::CountersSection>)> =
        reports.iter().map(|(name, r)| (name.clone(), r.counters.as_ref())).collect();
    let mut learnt = region::learn(&runs, &counters)?;
    learnt.widen(a.margin)?;
    std::fs::write(&a.output, learnt.to_json() + "\n")
        .with_context(|| format!("cannot write region {}", a.output.display()))?;
    say!(
        "xfpx: region of {} kernels from {} runs ({}, margin {}) written to {}",
        learnt.kernels.len(),
        reports.len(),
        counters.join(", "),
        learnt.margin,
        a.output.display()
    );
    Ok(0)
}

/// Read a region file.
pub fn read(path: &Path) -> Result<Region> {
    let text = xfpx_common::limits::read_text(path, xfpx_common::limits::REPORT)
        .with_context(|| format!("cannot read region {}", path.display()))?;
    Region::from_json(&text).with_context(|| format!("region {}", path.display()))
}

/// Check `report` (named `name`) against the region file at `path`: the
/// outcome goes into the report's counters section and each deviation and
/// unknown kernel is printed on stderr.
pub fn check(report: &mut Report, name: &str, path: &Path) -> Result<RegionCheck> {
    let region = read(path)?;
    let section = report
        .counters
        .as_mut()
        .ok_or_else(|| region::RegionError::NoCountersIn(name.to_string()))
        .with_context(|| format!("cannot check against region {}", path.display()))?;
    let outcome = region.check(name, section).with_context(|| format!("region {}", path.display()))?;
    for k in &outcome.unknown_kernels {
        say!("xfpx: region: kernel {k} is not in the region (not checked)");
    }
    for d in &outcome.deviations {
        say!(
            "xfpx: region: kernel {} launch {} window {}: {} {:.6} outside [{:.6}, {:.6}]",
            d.kernel,
            d.launch,
            d.window,
            d.counter,
            d.value,
            d.min,
            d.max
        );
    }
    say!(
        "xfpx: region: {} windows checked, {} outside their region",
        outcome.windows_checked,
        outcome
            .deviations
            .iter()
            .map(|d| (&d.kernel, d.launch, d.window))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
    section.region_check = Some(outcome.clone());
    Ok(outcome)
}

/// The per-kernel counters table of a report, empty when it has none.
pub fn table(report: &Report) -> String {
    let Some(s) = &report.counters else { return String::new() };
    let mut out = String::new();
    let branches = s.source.counts_branches();
    let _ = writeln!(
        out,
        "counters ({}{}):",
        if s.window_blocks == 0 {
            "whole launches".to_string()
        } else {
            format!("windows of {} blocks", s.window_blocks)
        },
        if branches { "" } else { ", from the hardware counters: no divergence, reconvergence or mix counted" }
    );
    let _ = writeln!(
        out,
        "  {:<28} {:>8} {:>14} {:>16} {:>8} {:>8} {:>10} {:>10}  mix",
        "kernel", "launches", "warp instrs", "thread instrs", "lanes", "pred on", "divergent", "reconverge"
    );
    for k in &s.kernels {
        let t = k.total();
        let n = t.normalised(s.warp_size);
        let mut mix: Vec<(&String, &u64)> = t.mix.iter().collect();
        mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = mix
            .iter()
            .take(4)
            .map(|(l, v)| format!("{l} {:.0}%", 100.0 * **v as f64 / t.warp_instructions.max(1) as f64))
            .collect();
        let or_dash = |v: u64| if branches { v.to_string() } else { "-".to_string() };
        let _ = writeln!(
            out,
            "  {:<28} {:>8} {:>14} {:>16} {:>7.1}% {:>7.1}% {:>10} {:>10}  {}",
            k.kernel,
            k.launches.len(),
            t.warp_instructions,
            t.thread_instructions,
            100.0 * n.lane_efficiency,
            100.0 * n.pred_on,
            or_dash(t.divergent_branches),
            or_dash(t.reconvergences),
            if branches { top.join(", ") } else { "-".to_string() }
        );
    }
    out
}
