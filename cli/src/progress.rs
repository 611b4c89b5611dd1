//! Progress of long work on stderr, only when stderr is a terminal (logs
//! and pipes stay clean): a bar over an emulated launch's workgroups or the
//! kernels of a code object being rewritten, which appears once the work
//! has run for a second and is cleared when it ends;
//! during `xfpx run`, whose program writes to the same terminal, a plain
//! line now and then with the kernels instrumented so far.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work shorter than this shows no bar.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// How often the bar is brought up to date.
const TICK: Duration = Duration::from_millis(100);

/// A bar on stderr fed by a reading of (done, total); stopped and cleared
/// when dropped.
#[derive(Debug)]
pub struct Bar {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// Start watching; `None` when stderr is not a terminal. `template` is
    /// indicatif's, e.g. `xfpx: replaying [{bar:30}] {pos}/{len} workgroups`.
    fn start(template: &'static str, read: impl Fn() -> (u64, u64) + Send + 'static) -> Option<Bar> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread =
            std::thread::Builder::new().name("xfpx-progress".into()).spawn(move || show(template, &read, &s)).ok()?;
        Some(Bar { stop, thread: Some(thread) })
    }

    /// A bar over the workgroups of an emulated launch, fed by the
    /// backend's counters.
    pub fn workgroups(work: Arc<xfpx_common::backend::Progress>) -> Option<Bar> {
        Bar::start("xfpx: replaying [{bar:30}] {pos}/{len} workgroups, {eta} left", move || {
            (work.done.load(Ordering::Relaxed), work.total.load(Ordering::Relaxed))
        })
    }

    /// A bar over the injection runs of a campaign: `done` of `total`
    /// (runs finished before a restart count as done).
    pub fn runs(total: u64, done: Arc<AtomicU64>) -> Option<Bar> {
        Bar::start("xfpx: campaign [{bar:30}] {pos}/{len} runs, {eta} left", move || {
            (done.load(Ordering::Relaxed), total)
        })
    }

    /// A bar over the kernels of a code object being rewritten, fed by the
    /// rewriter's counters.
    pub fn kernels(work: Arc<xfpx_common::backend::Progress>) -> Option<Bar> {
        Bar::start("xfpx: rewriting [{bar:30}] {pos}/{len} kernels", move || {
            (work.done.load(Ordering::Relaxed), work.total.load(Ordering::Relaxed))
        })
    }
}

fn show(template: &str, read: &dyn Fn() -> (u64, u64), stop: &AtomicBool) {
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        let (done, total) = read();
        if bar.is_none() && started.elapsed() >= SHOW_AFTER && total > 0 {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(template) {
                b.set_style(style.progress_chars("=> "));
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How often a run in progress says how far it is.
const RUN_EVERY: Duration = Duration::from_secs(10);

/// The kernels instrumented and launches seen so far in `xfpx run`, said
/// in one plain line every [`RUN_EVERY`] while they change (no bar: the
/// program's own output shares the terminal).
#[derive(Debug)]
pub struct RunProgress {
    on: bool,
    started: Instant,
    last_said: Instant,
    said: (u64, u64),
}

impl RunProgress {
    pub fn start() -> RunProgress {
        let now = Instant::now();
        RunProgress { on: std::io::stderr().is_terminal(), started: now, last_said: now, said: (0, 0) }
    }

    /// The line to say now, if any, for `kernels` instrumented and `launches` seen.
    pub fn line(&mut self, kernels: u64, launches: u64) -> Option<String> {
        self.line_at(Instant::now(), kernels, launches)
    }

    fn line_at(&mut self, now: Instant, kernels: u64, launches: u64) -> Option<String> {
        if !self.on || now.duration_since(self.last_said) < RUN_EVERY || (kernels, launches) == self.said {
            return None;
        }
        self.last_said = now;
        self.said = (kernels, launches);
        Some(format!(
            "xfpx: {kernels} kernel{} instrumented, {launches} launch{} so far ({} s)",
            if kernels == 1 { "" } else { "s" },
            if launches == 1 { "" } else { "es" },
            now.duration_since(self.started).as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_says_how_far_it_is_now_and_then_while_it_changes() {
        let t0 = Instant::now();
        let mut p = RunProgress { on: true, started: t0, last_said: t0, said: (0, 0) };
        assert_eq!(p.line_at(t0 + Duration::from_secs(3), 5, 9), None, "too early");
        let line = p.line_at(t0 + Duration::from_secs(11), 5, 9).expect("after 10 s");
        assert_eq!(line, "xfpx: 5 kernels instrumented, 9 launches so far (11 s)");
        assert_eq!(p.line_at(t0 + Duration::from_secs(30), 5, 9), None, "nothing changed");
        assert!(p.line_at(t0 + Duration::from_secs(31), 6, 12).is_some());
        let mut off = RunProgress { on: false, ..p };
        assert_eq!(off.line_at(t0 + Duration::from_secs(99), 7, 20), None, "not a terminal");
    }
}
