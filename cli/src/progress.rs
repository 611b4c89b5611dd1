//! Progress of long work on stderr: a bar that appears only when stderr is
//! a terminal and the work has run for a second, and is cleared when the
//! work ends. Nothing is printed otherwise (logs and pipes stay clean).

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
