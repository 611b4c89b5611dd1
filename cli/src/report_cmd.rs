//! `xfpx report FILE`: print a saved report (JSON or MessagePack) as the
//! text summary, or as JSON.

use crate::args::{OutputFormat, ReportArgs};
use crate::console::show_raw;
use crate::{report_io, summary};
use anyhow::Result;

pub fn report(a: &ReportArgs) -> Result<i32> {
    let report = report_io::read(&a.file)?;
    match a.format {
        OutputFormat::Text => show_raw!(summary::summary(&report, true)),
        OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
    }
    Ok(0)
}
