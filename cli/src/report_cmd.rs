//! `xfpx report FILE`: print a saved report (JSON or MessagePack) as the
//! text summary, or as JSON; with `--fail-on KINDS`, gate on it as
//! `xfpx run --fail-on` gates on a run.

use crate::args::{self, OutputFormat, ReportArgs};
use crate::console::show_raw;
use crate::{report_io, run, summary};
use anyhow::Result;

pub fn report(a: &ReportArgs) -> Result<i32> {
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on).transpose()?;
    let report = report_io::read(&a.file)?;
    match a.format {
        OutputFormat::Text => show_raw!(summary::summary(&report, true)),
        OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
    }
    Ok(fail_on.and_then(|kinds| run::gate(&report, kinds)).unwrap_or(0))
}
