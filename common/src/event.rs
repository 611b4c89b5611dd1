//! Events a backend streams to the CLI while the program runs (one JSON
//! object per line). The CLI builds the report from them, so a report
//! survives a program that crashes or is killed.

use crate::class::FpFormat;
use crate::counters::LaunchCounters;
use crate::fp::ExceptionKind;
use crate::report::{KernelStatus, ProcessInfo, SiteRef};
use crate::screened::{LaunchCheck, ScreenedFinding, Unchecked};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The instrumentation library attached to a process: the first event
    /// of every connection (a run without one checked nothing), naming the
    /// tool and the process (its id, host and, in a parallel job, its rank).
    Hello {
        tool: String,
        version: String,
        #[serde(flatten)]
        process: ProcessInfo,
    },
    /// The backend attached to a device.
    Device { vendor: String, device: String, target: Option<String> },
    /// A kernel was seen for the first time and instrumented (or not).
    Kernel { name: String, status: KernelStatus, probes: u64 },
    /// How many of a kernel's floating-point sites its instrumentation
    /// checks (backends that know: AMD rewrites), after its `kernel` event.
    Coverage { kernel: String, coverage: crate::report::SiteCoverage },
    /// A kernel was launched: instrumented, or (not instrumented) screened
    /// after it ran, or neither, with the reason when the backend gives one.
    Launch {
        kernel: String,
        index: u64,
        instrumented: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        screened: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unchecked: Option<Unchecked>,
    },
    /// A screen found more NaN or infinite values in a buffer of a launch
    /// of `kernel` than before it (located by launch and buffer).
    Screened { kernel: String, finding: ScreenedFinding },
    /// The screen of a launch counted as screened could not run.
    ScreenLost { kernel: String },
    /// Exception findings.
    Finding { kernel: String, kind: ExceptionKind, format: FpFormat, site: SiteRef, launch: u64, occurrences: u64 },
    /// The counters of one launch, read back after it completed (the
    /// counters tool): `window_blocks`, `warp_size` and `source` as in the
    /// report's `counters` section (`source` absent: instrumented).
    Counters {
        kernel: String,
        window_blocks: u32,
        warp_size: u32,
        #[serde(default)]
        source: crate::counters::CounterSource,
        launch: LaunchCounters,
    },
    /// A flow record of the flow tool ([`crate::flow`]): new ones as the
    /// device finds them, the rest of their occurrences at the end.
    Flow {
        kernel: String,
        #[serde(flatten)]
        finding: crate::report::FlowFinding,
    },
    /// The fault of an inject run and its activations, read at the end.
    Injection { injection: crate::report::Injection },
    /// Something the user should read.
    Note { text: String },
    /// The backend is done (the program is exiting normally).
    Finished,
}

impl Event {
    /// The launch event of launch `index` of `kernel`, checked as `check`.
    pub fn launch(kernel: String, index: u64, check: LaunchCheck) -> Event {
        let (instrumented, screened, unchecked) = match check {
            LaunchCheck::Instrumented => (true, false, None),
            LaunchCheck::Screened => (false, true, None),
            LaunchCheck::Unchecked(why) => (false, false, why),
        };
        Event::Launch { kernel, index, instrumented, screened, unchecked }
    }

    /// How a launch event's launch was checked (`None` for other events).
    pub fn launch_check(&self) -> Option<LaunchCheck> {
        match self {
            Event::Launch { instrumented: true, .. } => Some(LaunchCheck::Instrumented),
            Event::Launch { screened: true, .. } => Some(LaunchCheck::Screened),
            Event::Launch { unchecked, .. } => Some(LaunchCheck::Unchecked(*unchecked)),
            _ => None,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_lines_carry_how_the_launch_was_checked() {
        let plain = Event::launch("k".into(), 3, LaunchCheck::Instrumented);
        assert_eq!(plain.to_line(), "{\"event\":\"launch\",\"kernel\":\"k\",\"index\":3,\"instrumented\":true}\n");
        // lines written before screening existed read as before
        let old = Event::from_line(r#"{"event":"launch","kernel":"k","index":3,"instrumented":false}"#).expect("reads");
        assert_eq!(old.launch_check(), Some(LaunchCheck::Unchecked(None)));
        for check in [
            LaunchCheck::Instrumented,
            LaunchCheck::Screened,
            LaunchCheck::Unchecked(None),
            LaunchCheck::Unchecked(Some(Unchecked::Graph)),
        ] {
            let e = Event::launch("k".into(), 1, check);
            assert_eq!(Event::from_line(&e.to_line()).expect("round trip").launch_check(), Some(check));
        }
        let screened = Event::launch("k".into(), 1, LaunchCheck::Unchecked(Some(Unchecked::NoBuffers)));
        assert!(screened.to_line().contains(r#""unchecked":"no_buffers""#));
    }

    #[test]
    fn hello_reads_as_documented() {
        // The example of docs/report-schema.md.
        let line = r#"{"event":"hello","tool":"xfpx-nvbit","version":"0.1.0","rank":2,"size":4,"host":"node07","pid":41877,"launcher":"open-mpi"}"#;
        let hello = Event::Hello {
            tool: "xfpx-nvbit".into(),
            version: "0.1.0".into(),
            process: ProcessInfo {
                rank: Some(2),
                size: Some(4),
                host: "node07".into(),
                pid: 41877,
                launcher: Some("open-mpi".into()),
            },
        };
        assert_eq!(Event::from_line(line).expect("parses"), hello);
        assert_eq!(hello.to_line(), format!("{line}\n"));
        let plain =
            r#"{"event":"hello","tool":"t","version":"v","rank":null,"size":null,"host":"h","pid":1,"launcher":null}"#;
        assert!(matches!(Event::from_line(plain), Ok(Event::Hello { process: ProcessInfo { rank: None, .. }, .. })));
    }

    #[test]
    fn flow_events_carry_their_finding_flat() {
        let line = r#"{"event":"flow","kernel":"k","state":"appear","kind":"div0","format":"f32","site":{"id":3,"offset":16,"instr":"MUFU.RCP R4, R1","location":null},"class":"f32.div","launch":0,"occurrences":2,"seen":8}"#;
        let e = Event::from_line(line).expect("parses");
        match &e {
            Event::Flow { kernel, finding } => {
                assert_eq!(
                    (kernel.as_str(), finding.state, finding.kind),
                    ("k", crate::flow::FlowState::Appear, ExceptionKind::Div0)
                );
                assert_eq!((finding.site.offset, finding.seen), (16, crate::flow::lane::SRC_ZERO));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.to_line(), format!("{line}\n"));
    }
}
