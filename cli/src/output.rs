//! How a command that produced a report ends: the report written where
//! the user asked (a file, standard output, or nowhere), the HTML page,
//! and the summary. Every write error is the command's error, after the
//! other outputs were still attempted.

use crate::args::OutputFormat;
use crate::console::{say, say_raw, show_raw};
use crate::html;
use crate::report_io::{self, Destination};
use anyhow::Result;
use std::path::Path;
use xfpx_common::report::Report;

/// Where a command's outputs go.
#[derive(Debug)]
pub struct Outputs<'a> {
    /// The report (`None`: none was asked for).
    pub report: Option<&'a Destination>,
    /// Say that no report was written (`--no-report`).
    pub said_no_report: bool,
    pub html: Option<&'a Path>,
    pub format: OutputFormat,
    /// The summary goes to standard output (`replay`, `demo`) unless that
    /// carries the report; otherwise to standard error (`run`, whose
    /// program owns standard output).
    pub summary_on_stdout: bool,
}

impl<'a> Outputs<'a> {
    /// `xfpx run`'s: the summary on standard error, `--no-report` said.
    pub fn of_run(report: Option<&'a Destination>, html: Option<&'a Path>, format: OutputFormat) -> Outputs<'a> {
        Outputs { report, said_no_report: true, html, format, summary_on_stdout: false }
    }

    /// Check, before any work, that every output can be written.
    pub fn check(&self) -> Result<()> {
        if let Some(d) = self.report {
            report_io::check(d)?;
        }
        if let Some(page) = self.html {
            html::check_target(page)?;
        }
        Ok(())
    }

    /// Write the report and the page, show `text` (the summary) in text
    /// format, and the JSON report on standard output where asked.
    pub fn finish(&self, report: &Report, text: &str) -> Result<()> {
        let written = match self.report {
            Some(d @ Destination::File(_)) => report_io::write(report, d),
            _ => Ok(()),
        };
        let page = self.html.map(|p| html::write(report, p)).transpose();
        let to_stdout = self.format == OutputFormat::Json || self.report == Some(&Destination::Stdout);
        if self.format == OutputFormat::Text {
            if self.summary_on_stdout && !to_stdout {
                show_raw!(text);
            } else {
                say_raw!(text);
            }
            match (self.report, &written) {
                (Some(Destination::File(p)), Ok(())) => say!("xfpx: report written to {}", p.display()),
                (None, _) if self.said_no_report => say!("xfpx: no report written (--no-report)"),
                _ => {}
            }
            if let (Some(p), Ok(_)) = (self.html, &page) {
                say!("xfpx: HTML page written to {}", p.display());
            }
        }
        let shown = if to_stdout { report_io::write(report, &Destination::Stdout) } else { Ok(()) };
        written.and(page.map(|_| ())).and(shown)
    }
}
