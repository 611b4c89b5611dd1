//! `xfpx report FILE`: print a saved report (JSON or MessagePack) as the
//! text summary, or as JSON, or write it as an HTML page (`--html`);
//! `xfpx report --merge FILE...` first combines the reports of several
//! processes of a parallel job into one. With `--fail-on KINDS` it gates
//! on the report as `xfpx run --fail-on` gates on a run.

use crate::args::{self, OutputFormat, ReportArgs};
use crate::console::{say, show_raw};
use crate::exit::{ExitError, EXIT_USAGE};
use crate::report_io::Destination;
use crate::{html, report_io, run, summary};
use anyhow::Result;
use xfpx_common::merge::merge;
use xfpx_common::report::Report;

pub fn report(a: &ReportArgs) -> Result<i32> {
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on).transpose()?;
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
    let merged_to_stdout = a.output.as_deref().map(Destination::from_arg) == Some(Destination::Stdout);
    if let Some(page) = &a.html {
        html::write(&report, page)?;
        say!("xfpx: HTML page written to {}", page.display());
    } else if !merged_to_stdout {
        // (`-o -` already put the merged report alone on stdout)
        match a.format {
            OutputFormat::Text => show_raw!(summary::summary(&report, true)),
            OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
        }
    }
    Ok(fail_on.and_then(|kinds| run::gate(&report, kinds)).unwrap_or(0))
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
