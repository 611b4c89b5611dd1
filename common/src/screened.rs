//! Launch screening in the report model: how each launch was checked
//! ([`LaunchCheck`]), why a launch ran unchecked ([`Unchecked`]), and what a
//! screen found ([`ScreenedFinding`]).
//!
//! A screened launch ran its original code; after it, a scan of the device
//! buffers its pointer arguments reach counted NaN and infinite values. A
//! screened finding says that a buffer held more of them after a launch
//! than when it was last screened: it is located by launch and buffer, never
//! by instruction or source line (precise findings are
//! [`crate::report::ExceptionRecord`]s).

use crate::class::FpFormat;
use crate::fp::ExceptionKind;
use serde::{Deserialize, Serialize};

/// Why a launch of a kernel ran neither instrumented nor screened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unchecked {
    /// Left out by `--sample` with launch screening off.
    Sampled,
    /// No pointer argument reaches a device allocation the tool saw made
    /// (or every one reaches read-only or non-floating-point data).
    NoBuffers,
    /// Its code has no floating-point result: there is nothing to check
    /// (detect mode would find nothing in it either).
    NothingToCheck,
    /// Launched by a CUDA graph: its buffers are not screened.
    Graph,
    /// Launched in a CUDA context other than the first (another GPU, or
    /// after a device reset): the tool does not instrument or screen there.
    OtherContext,
    /// Its parameters could not be read.
    ParamsUnknown,
    /// The screen's limits (buffers tracked at once) were reached.
    Limits,
    /// The screen could not be enqueued (a CUDA error; the notes say which).
    ScreenFailed,
}

impl Unchecked {
    pub const ALL: [Unchecked; 8] = [
        Unchecked::Sampled,
        Unchecked::NoBuffers,
        Unchecked::NothingToCheck,
        Unchecked::Graph,
        Unchecked::OtherContext,
        Unchecked::ParamsUnknown,
        Unchecked::Limits,
        Unchecked::ScreenFailed,
    ];

    /// The reason in a few words, for summaries.
    pub fn words(self) -> &'static str {
        match self {
            Unchecked::Sampled => "sampled out, screening off",
            Unchecked::NoBuffers => "no pointer argument into device memory the tool saw allocated",
            Unchecked::NothingToCheck => "no floating-point result in its code",
            Unchecked::Graph => "launched by a CUDA graph",
            Unchecked::OtherContext => "launched in a second CUDA context",
            Unchecked::ParamsUnknown => "parameters unreadable",
            Unchecked::Limits => "the screen's limits were reached",
            Unchecked::ScreenFailed => "the screen could not be enqueued",
        }
    }

    /// Whether such a launch could have raised an exception a check would
    /// find: all but [`Unchecked::NothingToCheck`].
    pub fn hides_anything(self) -> bool {
        self != Unchecked::NothingToCheck
    }
}

/// How one launch was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchCheck {
    /// It ran instrumented code.
    Instrumented,
    /// It ran its original code and its buffers were screened after it.
    Screened,
    /// Neither; the reason when the backend gives one (none for kernels
    /// the user's filters exclude, and from backends that do not screen).
    Unchecked(Option<Unchecked>),
}

/// Launches of one kernel that ran unchecked for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UncheckedLaunches {
    pub reason: Unchecked,
    pub launches: u64,
}

/// Adds `n` launches unchecked for `reason` to `list` (kept by reason).
pub fn add_unchecked(list: &mut Vec<UncheckedLaunches>, reason: Unchecked, n: u64) {
    match list.iter_mut().find(|u| u.reason == reason) {
        Some(u) => u.launches = u.launches.saturating_add(n),
        None => {
            list.push(UncheckedLaunches { reason, launches: n });
            list.sort_by_key(|u| u.reason);
        }
    }
}

/// Moves one screened launch to the launches unchecked for `reason` (its
/// screen was decided but could not run).
pub fn unscreen(screened: &mut u64, list: &mut Vec<UncheckedLaunches>, reason: Unchecked) {
    *screened = screened.saturating_sub(1);
    add_unchecked(list, reason, 1);
}

/// The launch after which the buffer was screened before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenedBefore {
    /// Its kernel's name.
    pub kernel: String,
    /// That kernel's launch index (from 0).
    pub launch: u64,
    /// True when that screen ran just before the launch of the finding
    /// (the buffer's first screen), so nothing else can have written it
    /// in between.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub just_before: bool,
}

/// What a screen found: a buffer of a launch held more NaN (or infinite)
/// values of one format after it than when it was last screened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenedFinding {
    /// `nan` or `inf` (a screen cannot tell a division by zero).
    pub kind: ExceptionKind,
    /// How the buffer was read: `f32` words, `f64`, `f16` or `bf16` halves.
    pub format: FpFormat,
    /// The kernel parameter (from 0) whose value pointed into the buffer.
    pub param: u32,
    /// That parameter's declared type, when the kernel's name gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// Bytes screened: the whole device allocation the pointer is in.
    pub bytes: u64,
    /// The launch of the kernel (from 0) after which the count first grew.
    pub first_launch: u64,
    /// Values of this kind in the buffer when it was screened before, and
    /// after that launch.
    pub before: u64,
    pub after: u64,
    /// Lowest element index holding a NaN or infinite value after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_element: Option<u64>,
    /// The screen before (absent: the buffer's count started at zero when
    /// the tool first saw it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened_before: Option<ScreenedBefore>,
    /// Later launches of the kernel after which the count grew again.
    #[serde(default)]
    pub again: u64,
}

impl ScreenedFinding {
    /// Findings that are the same (parameter, kind, format) of a kernel.
    pub fn key(&self) -> (u32, ExceptionKind, FpFormat) {
        (self.param, self.kind, self.format)
    }
}

/// Adds `f` to a kernel's screened findings: a new (parameter, kind,
/// format) is appended; a known one counts one more launch. Returns true
/// when it was new.
pub fn add_screened(list: &mut Vec<ScreenedFinding>, f: ScreenedFinding) -> bool {
    match list.iter_mut().find(|s| s.key() == f.key()) {
        Some(s) => {
            let again = s.again.saturating_add(f.again).saturating_add(1);
            if f.first_launch < s.first_launch {
                *s = f;
            }
            s.again = again;
            false
        }
        None => {
            list.push(f);
            list.sort_by_key(ScreenedFinding::key);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(launch: u64) -> ScreenedFinding {
        ScreenedFinding {
            kind: ExceptionKind::Nan,
            format: FpFormat::F32,
            param: 3,
            declared: Some("float*".into()),
            bytes: 40_000,
            first_launch: launch,
            before: 0,
            after: 1,
            first_element: Some(5000),
            screened_before: Some(ScreenedBefore {
                kernel: "relax_step".into(),
                launch: launch - 1,
                just_before: false,
            }),
            again: 0,
        }
    }

    #[test]
    fn unchecked_launches_add_up_by_reason() {
        let mut l = Vec::new();
        add_unchecked(&mut l, Unchecked::Graph, 2);
        add_unchecked(&mut l, Unchecked::NoBuffers, 1);
        add_unchecked(&mut l, Unchecked::Graph, 3);
        assert_eq!(
            l,
            vec![
                UncheckedLaunches { reason: Unchecked::NoBuffers, launches: 1 },
                UncheckedLaunches { reason: Unchecked::Graph, launches: 5 }
            ]
        );
        let mut screened = 4;
        unscreen(&mut screened, &mut l, Unchecked::ScreenFailed);
        assert_eq!(screened, 3);
        assert_eq!(l.last(), Some(&UncheckedLaunches { reason: Unchecked::ScreenFailed, launches: 1 }));
        assert!(Unchecked::ALL.iter().filter(|u| !u.hides_anything()).eq([&Unchecked::NothingToCheck]));
    }

    #[test]
    fn a_screened_finding_keeps_its_first_launch_and_counts_the_others() {
        let mut l = Vec::new();
        assert!(add_screened(&mut l, finding(5000)));
        assert!(!add_screened(&mut l, finding(6000)));
        assert_eq!((l[0].first_launch, l[0].again), (5000, 1));
        // an earlier launch arriving late (another process) takes the lead
        assert!(!add_screened(&mut l, finding(10)));
        assert_eq!((l[0].first_launch, l[0].again), (10, 2));
        let other = ScreenedFinding { kind: ExceptionKind::Inf, ..finding(7) };
        assert!(add_screened(&mut l, other));
        assert_eq!(l.len(), 2);
    }

    #[test]
    fn json_is_as_documented() {
        let text = serde_json::to_string(&finding(5000)).expect("serialises");
        assert_eq!(
            text,
            r#"{"kind":"nan","format":"f32","param":3,"declared":"float*","bytes":40000,"first_launch":5000,"before":0,"after":1,"first_element":5000,"screened_before":{"kernel":"relax_step","launch":4999},"again":0}"#
        );
        let back: ScreenedFinding = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, finding(5000));
        let u = serde_json::to_string(&UncheckedLaunches { reason: Unchecked::NoBuffers, launches: 2 }).expect("ok");
        assert_eq!(u, r#"{"reason":"no_buffers","launches":2}"#);
    }
}
