//! `xfpx report FILE`: print a saved report (JSON or MessagePack) as the
//! text summary, or as JSON, or write it as an HTML page (`--html`);
//! `xfpx report --merge FILE...` first combines the reports of several
//! processes of a parallel job into one. With `--fail-on KINDS` it gates
//! on the report as `xfpx run --fail-on` gates on a run; with `--region
//! FILE` its counters are checked against an operational region
//! (`--fail-on region`: status 3 when a window is outside).

use crate::args::{self, OutputFormat, ReportArgs};
use crate::console::{say, show_raw};
use crate::exit::{ExitError, EXIT_USAGE};
use crate::report_io::Destination;
use crate::{html, region_cmd, report_io, run, summary};
use anyhow::Result;
use xfpx_common::merge::merge;
use xfpx_common::report::Report;

pub fn report(a: &ReportArgs) -> Result<i32> {
    let gates = a.fail_on.as_deref().map(args::parse_fail_on_gates).transpose()?.unwrap_or_default();
    let fail_on_region = gates.region;
    if fail_on_region && a.region.is_none() {
        return Err(ExitError::new(EXIT_USAGE, "--fail-on region needs --region REGION".to_string()).into());
    }
    if let Some(page) = &a.html {
        html::check_target(page)?;
    }
    let report = if a.merge {
        merged(a)?
    } else {
        let [file] = a.files.as_slice() else {
            return Err(ExitError::new(
                EXIT_USAGE,
                format!("{} reports given: name one, or use --merge to combine several", a.files.len()),
            )
            .into());
        };
        report_io::read(file)?
    };
    let mut report = report;
    let outside = match &a.region {
        Some(path) => {
            let name = a.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
            !region_cmd::check(&mut report, &name, path)?.deviations.is_empty()
        }
        None => false,
    };
    let merged_to_stdout = a.output.as_deref().map(Destination::from_arg) == Some(Destination::Stdout);
    if let Some(page) = &a.html {
        html::write(&report, page)?;
        say!("xfpx: HTML page written to {}", page.display());
    } else if !merged_to_stdout {
        // (`-o -` already put the merged report alone on stdout)
        match a.format {
            OutputFormat::Text => {
                show_raw!(format!("{}{}", summary::summary(&report, true), region_cmd::table(&report)))
            }
            OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
        }
    }
    if fail_on_region && outside {
        return Ok(crate::exit::EXIT_FINDINGS);
    }
    if gates.coverage {
        if let Some(code) = run::coverage_gate(&report) {
            return Ok(code);
        }
    }
    Ok(gates.kinds.and_then(|kinds| run::gate(&report, kinds)).unwrap_or(0))
}

/// The merged report of all files, written to `--output` when given.
fn merged(a: &ReportArgs) -> Result<Report> {
    let out = a.output.as_deref().map(Destination::from_arg);
    if let Some(out) = &out {
        report_io::check(out)?;
    }
    let inputs =
        a.files.iter().map(|f| Ok((f.display().to_string(), report_io::read(f)?))).collect::<Result<Vec<_>>>()?;
    let m = merge(&inputs)?;
    for note in &m.notes {
        say!("xfpx: warning: {note}");
    }
    if let Some(out) = &out {
        report_io::write(&m.report, out)?;
        if let Destination::File(p) = out {
            say!("xfpx: merged report written to {}", p.display());
        }
    }
    Ok(m.report)
}
