//! Signals: each an `amd_signal_t` in host memory whose address is the
//! handle and whose `value` field is the signal's value (so a tool or
//! program reading it directly sees what the runtime sees). Waiters sleep
//! until any signal changes (every change through the runtime bumps one
//! generation counter) or a short poll interval passes, which also catches
//! values written straight to memory. Asynchronous handlers
//! (`hsa_amd_signal_async_handler`) run on one runtime thread.

use crate::ffi::generated::*;
use crate::ffi::host::HostBlock;
use crate::ffi::types::{amd_signal_t, AMD_SIGNAL_KIND_DOORBELL, AMD_SIGNAL_KIND_USER};
use std::collections::HashMap;
use std::mem::offset_of;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// How long a waiter sleeps at most before looking again.
const POLL: Duration = Duration::from_millis(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    User,
    /// The doorbell of a queue the runtime's packet processor serves.
    Doorbell,
    /// The doorbell of an intercept queue (by its `hsa_queue_t` address):
    /// a store runs the queue's interceptors in the storing thread.
    InterceptDoorbell(u64),
}

#[derive(Debug)]
pub struct Signal {
    block: HostBlock,
    pub kind: Kind,
}

impl Signal {
    pub fn handle(&self) -> u64 {
        self.block.address()
    }

    pub fn value(&self) -> &AtomicI64 {
        self.block.atomic_i64(offset_of!(amd_signal_t, value))
    }

    /// Records when the dispatch that completes this signal ran (system
    /// timestamps), where AMD's packet processor writes them.
    pub fn set_times(&self, start: u64, end: u64) {
        self.block.write(offset_of!(amd_signal_t, start_ts), &start.to_le_bytes());
        self.block.write(offset_of!(amd_signal_t, end_ts), &end.to_le_bytes());
    }

    pub fn times(&self) -> (u64, u64) {
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        self.block.read(offset_of!(amd_signal_t, start_ts), &mut a);
        self.block.read(offset_of!(amd_signal_t, end_ts), &mut b);
        (u64::from_le_bytes(a), u64::from_le_bytes(b))
    }
}

static SIGNALS: OnceLock<RwLock<HashMap<u64, Arc<Signal>>>> = OnceLock::new();

fn registry() -> &'static RwLock<HashMap<u64, Arc<Signal>>> {
    SIGNALS.get_or_init(|| RwLock::new(HashMap::new()))
}

/// A new signal of `kind` holding `initial`; `queue` is the `amd_queue_t`
/// of a doorbell's queue (0 otherwise).
pub fn create(initial: i64, kind: Kind, queue: u64) -> Option<Arc<Signal>> {
    let block = HostBlock::zeroed(std::mem::size_of::<amd_signal_t>(), 64)?;
    let amd_kind = if kind == Kind::User { AMD_SIGNAL_KIND_USER } else { AMD_SIGNAL_KIND_DOORBELL };
    block.write(offset_of!(amd_signal_t, kind), &amd_kind.to_le_bytes());
    block.write(offset_of!(amd_signal_t, queue_ptr), &queue.to_le_bytes());
    let s = Arc::new(Signal { block, kind });
    s.value().store(initial, Ordering::Release);
    registry().write().unwrap_or_else(|e| e.into_inner()).insert(s.handle(), s.clone());
    Some(s)
}

pub fn get(handle: u64) -> Option<Arc<Signal>> {
    registry().read().unwrap_or_else(|e| e.into_inner()).get(&handle).cloned()
}

pub fn destroy(handle: u64) -> bool {
    registry().write().unwrap_or_else(|e| e.into_inner()).remove(&handle).is_some()
}

pub fn destroy_all() {
    registry().write().unwrap_or_else(|e| e.into_inner()).clear();
    async_handlers().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

static GENERATION: Mutex<u64> = Mutex::new(0);
static CHANGED: Condvar = Condvar::new();

/// Tells every waiter that some signal (or queue) changed.
pub fn changed() {
    let mut g = GENERATION.lock().unwrap_or_else(|e| e.into_inner());
    *g = g.wrapping_add(1);
    CHANGED.notify_all();
}

pub fn generation() -> u64 {
    *GENERATION.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sleeps until a change after generation `seen`, or `at_most` passes.
pub fn wait_for_change(seen: u64, at_most: Duration) {
    let g = GENERATION.lock().unwrap_or_else(|e| e.into_inner());
    if *g == seen {
        let _ = CHANGED.wait_timeout(g, at_most.min(POLL));
    }
}

pub fn condition_met(condition: hsa_signal_condition_t, value: i64, compare: i64) -> bool {
    match condition {
        HSA_SIGNAL_CONDITION_EQ => value == compare,
        HSA_SIGNAL_CONDITION_NE => value != compare,
        HSA_SIGNAL_CONDITION_LT => value < compare,
        HSA_SIGNAL_CONDITION_GTE => value >= compare,
        _ => false,
    }
}

/// Waits until `condition` holds for the signal's value or `timeout`
/// passes; returns the value last read.
pub fn wait(signal: &Signal, condition: hsa_signal_condition_t, compare: i64, timeout: Option<Duration>) -> i64 {
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    loop {
        let seen = generation();
        let v = signal.value().load(Ordering::Acquire);
        if condition_met(condition, v, compare) {
            return v;
        }
        let left = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => return v,
            },
            None => POLL,
        };
        wait_for_change(seen, left);
    }
}

/// What an asynchronous handler does with the value that met its
/// condition; false removes it.
pub type Handler = Box<dyn FnMut(i64) -> bool + Send>;

struct AsyncHandler {
    signal: Arc<Signal>,
    condition: hsa_signal_condition_t,
    compare: i64,
    run: Handler,
}

fn async_handlers() -> &'static Mutex<Vec<AsyncHandler>> {
    static HANDLERS: OnceLock<Mutex<Vec<AsyncHandler>>> = OnceLock::new();
    HANDLERS.get_or_init(|| {
        std::thread::Builder::new()
            .name("hsa-async".into())
            .spawn(run_async_handlers)
            .expect("the runtime starts its handler thread");
        Mutex::new(Vec::new())
    })
}

/// Runs `run` on the runtime's handler thread once `signal` meets the condition.
pub fn add_async_handler(signal: Arc<Signal>, condition: hsa_signal_condition_t, compare: i64, run: Handler) {
    async_handlers().lock().unwrap_or_else(|e| e.into_inner()).push(AsyncHandler { signal, condition, compare, run });
    changed();
}

fn run_async_handlers() {
    loop {
        let seen = generation();
        // Take the due handlers out, run them unlocked (they may add more).
        let due: Vec<(AsyncHandler, i64)> = {
            let mut all = async_handlers().lock().unwrap_or_else(|e| e.into_inner());
            let mut due = Vec::new();
            let mut i = 0;
            while i < all.len() {
                let v = all[i].signal.value().load(Ordering::Acquire);
                if condition_met(all[i].condition, v, all[i].compare) {
                    due.push((all.swap_remove(i), v));
                } else {
                    i += 1;
                }
            }
            due
        };
        for (mut h, v) in due {
            if (h.run)(v) {
                async_handlers().lock().unwrap_or_else(|e| e.into_inner()).push(h);
            }
        }
        // A handler kept with its condition still met runs again after the
        // next change (or poll), not in a busy loop.
        wait_for_change(seen, POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_see_changes_from_other_threads() {
        let s = create(3, Kind::User, 0).expect("signal");
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            s2.value().fetch_sub(3, Ordering::AcqRel);
            changed();
        });
        assert_eq!(wait(&s, HSA_SIGNAL_CONDITION_EQ, 0, None), 0);
        t.join().expect("joins");
        // A wait with a timeout returns the value when it runs out.
        let started = Instant::now();
        assert_eq!(wait(&s, HSA_SIGNAL_CONDITION_GTE, 5, Some(Duration::from_millis(30))), 0);
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert!(destroy(s.handle()));
        assert!(get(s.handle()).is_none());
    }
}
