//! `xfpx report FILE`: print a saved report (JSON or MessagePack) as the
//! text summary, or as JSON, or write it as an HTML page (`--html`).

use crate::args::{OutputFormat, ReportArgs};
use crate::console::{say, show_raw};
use crate::{html, report_io, summary};
use anyhow::Result;

pub fn report(a: &ReportArgs) -> Result<i32> {
    let report = report_io::read(&a.file)?;
    if let Some(page) = &a.html {
        html::check_target(page)?;
        html::write(&report, page)?;
        say!("xfpx: HTML page written to {}", page.display());
        return Ok(0);
    }
    match a.format {
        OutputFormat::Text => show_raw!(summary::summary(&report, true)),
        OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
    }
    Ok(0)
}
