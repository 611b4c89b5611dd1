//! Events a backend streams to the CLI while the program runs (one JSON
//! object per line). The CLI builds the report from them, so a report
//! survives a program that crashes or is killed.

use crate::class::FpFormat;
use crate::fp::ExceptionKind;
use crate::report::{KernelStatus, SiteRef};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The instrumentation library attached to the program: the first
    /// event of every connection. A run without one checked nothing.
    Hello { tool: String, version: String },
    /// The backend attached to a device.
    Device { vendor: String, device: String, target: Option<String> },
    /// A kernel was seen for the first time and instrumented (or not).
    Kernel { name: String, status: KernelStatus, probes: u64 },
    /// A kernel was launched.
    Launch { kernel: String, index: u64, instrumented: bool },
    /// Exception findings.
    Finding { kernel: String, kind: ExceptionKind, format: FpFormat, site: SiteRef, launch: u64, occurrences: u64 },
    /// Something the user should read.
    Note { text: String },
    /// The backend is done (the program is exiting normally).
    Finished,
}

impl Event {
    /// One line of JSON, with its newline.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    pub fn from_line(line: &str) -> Result<Event, serde_json::Error> {
        serde_json::from_str(line.trim_end())
    }
}
