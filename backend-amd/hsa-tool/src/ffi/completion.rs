//! Completions of instrumented launches. Each such dispatch carries a
//! completion signal of the tool's (value 1) in place of the program's;
//! a thread watches them, and when one drops the session reads the launch's
//! table, then the program's own signal gets the decrement the packet
//! processor would have given it. The program thus sees its launch
//! complete only after what the launch recorded is on its way to the CLI.

use super::api::Handle;
use super::runtime::HsaRuntime;
use crate::session::Session;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use xfpx_common::tool_stream::BATCH_AGE;

/// An instrumented launch in flight.
#[derive(Debug, Clone, Copy)]
pub struct Watched {
    pub ticket: u64,
    /// The tool's completion signal.
    pub ours: Handle,
    /// The program's (0: none).
    pub theirs: Handle,
}

/// The launches in flight and the thread that watches them.
#[derive(Debug, Default)]
pub struct Completions {
    watched: Mutex<Vec<Watched>>,
    wake: Condvar,
    started: std::sync::OnceLock<()>,
    quit: std::sync::atomic::AtomicBool,
}

/// The longest the watcher sleeps between looks at its signals.
const LONGEST_NAP: Duration = Duration::from_millis(1);

impl Completions {
    /// Watches one launch (starting the watcher on first use).
    pub fn watch(&'static self, w: Watched, rt: &'static HsaRuntime, session: &'static Mutex<Session>) {
        self.started.get_or_init(|| {
            let spawned =
                std::thread::Builder::new().name("xfpx-completions".into()).spawn(move || self.watch_loop(rt, session));
            if spawned.is_err() {
                lock(session).note("cannot start the thread that reads instrumented launches' tables");
            }
        });
        lock(&self.watched).push(w);
        self.wake.notify_one();
    }

    fn watch_loop(&self, rt: &HsaRuntime, session: &Mutex<Session>) {
        let mut nap = Duration::from_micros(20);
        let mut flushed = Instant::now();
        while !self.quit.load(std::sync::atomic::Ordering::Acquire) {
            if flushed.elapsed() >= BATCH_AGE {
                flushed = Instant::now();
                lock(session).flush_aged_events();
            }
            if self.complete_done(rt, session) {
                nap = Duration::from_micros(20);
                continue;
            }
            let watched = lock(&self.watched);
            if watched.is_empty() {
                drop(self.wake.wait_timeout(watched, Duration::from_millis(100)));
            } else {
                drop(watched);
                std::thread::sleep(nap);
                nap = (nap * 2).min(LONGEST_NAP);
            }
        }
    }

    /// Completes every watched launch whose signal dropped; whether any did.
    fn complete_done(&self, rt: &HsaRuntime, session: &Mutex<Session>) -> bool {
        let done: Vec<Watched> = {
            let mut watched = lock(&self.watched);
            // SAFETY (in `load`): each of our signals lives until completed here.
            let (done, left): (Vec<Watched>, Vec<Watched>) =
                watched.drain(..).partition(|w| unsafe { (rt.saved.signal_load_scacquire)(w.ours) } < 1);
            *watched = left;
            done
        };
        for w in &done {
            lock(session).completed(w.ticket, rt);
            // SAFETY: the program's signal, which its dispatch named, and ours,
            // now done: both handles are the addresses of their amd_signal_t.
            unsafe {
                if w.theirs != 0 {
                    copy_dispatch_times(w.ours, w.theirs);
                    (rt.saved.signal_subtract_screlease)(w.theirs, 1);
                }
                (rt.saved.signal_destroy)(w.ours);
            }
        }
        !done.is_empty()
    }

    /// The run is ending: the watcher stops, and launches still in flight
    /// get up to `within` to complete here.
    pub fn drain(&self, rt: &HsaRuntime, session: &Mutex<Session>, within: Duration) {
        self.quit.store(true, std::sync::atomic::Ordering::Release);
        self.wake.notify_all();
        let start = Instant::now();
        while !lock(&self.watched).is_empty() && start.elapsed() < within {
            if !self.complete_done(rt, session) {
                std::thread::sleep(LONGEST_NAP);
            }
        }
    }
}

/// Gives the program's signal the dispatch's start and end times the
/// packet processor wrote into the tool's (what
/// `hsa_amd_profiling_get_dispatch_time` reads), as it would have written
/// them into the program's own.
///
/// # Safety
/// Both are live signals: handles that are addresses of `amd_signal_t`.
unsafe fn copy_dispatch_times(from: Handle, to: Handle) {
    for at in [crate::hsa::SIGNAL_START_TS, crate::hsa::SIGNAL_END_TS] {
        // SAFETY: a u64 field of each amd_signal_t (caller's contract).
        unsafe {
            let v = std::ptr::read_volatile((from as usize + at) as *const u64);
            std::ptr::write_volatile((to as usize + at) as *mut u64, v);
        }
    }
}

/// Locks `m`, also after a panic elsewhere (the state stays usable).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
