//! Progress of long work on stderr, only when stderr is a terminal (logs
//! and pipes stay clean): a bar over an emulated launch's workgroups that
//! appears once the work has run for a second and is cleared when it ends;
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

/// A bar over the workgroups of an emulated launch, fed by the counter the
/// emulator increments; stopped when dropped.
#[derive(Debug)]
pub struct Workgroups {
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Workgroups {
    /// Start watching `total` workgroups; `None` when stderr is not a terminal.
    pub fn start(total: u64) -> Option<Workgroups> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let done = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (d, s) = (done.clone(), stop.clone());
        let thread =
            std::thread::Builder::new().name("xfpx-progress".into()).spawn(move || show(total, &d, &s)).ok()?;
        Some(Workgroups { done, stop, thread: Some(thread) })
    }

    /// The counter the work increments.
    pub fn counter(&self) -> Arc<AtomicU64> {
        self.done.clone()
    }
}

fn show(total: u64, done: &AtomicU64, stop: &AtomicBool) {
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        if bar.is_none() && started.elapsed() >= SHOW_AFTER {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("xfpx: replaying [{bar:30}] {pos}/{len} workgroups, {eta} left")
            {
                b.set_style(style.progress_chars("=> "));
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done.load(Ordering::Relaxed));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

impl Drop for Workgroups {
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
