//! Entry points of signals: creation, the atomic operations in every
//! memory order (all sequentially consistent here, which every order
//! allows), waits, groups and asynchronous handlers.

use crate::ffi::generated::*;
use crate::ffi::out::{self, put, require_open};
use crate::signals::{self, Kind, Signal};
use std::ffi::c_void;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The signal of a handle; an unknown one is reported once.
fn signal(h: hsa_signal_t) -> Option<Arc<Signal>> {
    let s = signals::get(h.handle);
    if s.is_none() {
        static REPORTED: OnceLock<()> = OnceLock::new();
        REPORTED.get_or_init(|| {
            eprintln!(
                "error: xfpx emulated HSA runtime: signal {:#x} is not a signal (the call does nothing)",
                h.handle
            )
        });
    }
    s
}

/// A store: wakes waiters, and an intercept queue's doorbell runs its interceptors.
fn store(h: hsa_signal_t, v: i64) {
    let Some(s) = signal(h) else { return };
    s.value().store(v, SeqCst);
    signals::changed();
    if let Kind::InterceptDoorbell(queue) = s.kind {
        crate::ffi::intercept::doorbell(queue);
    }
}

fn load(h: hsa_signal_t) -> i64 {
    signal(h).map_or(0, |s| s.value().load(SeqCst))
}

/// A read-modify-write; returns the previous value.
fn update(h: hsa_signal_t, f: impl Fn(&Signal) -> i64) -> i64 {
    let Some(s) = signal(h) else { return 0 };
    let old = f(&s);
    signals::changed();
    old
}

fn timeout(hint: u64) -> Option<Duration> {
    (hint != u64::MAX).then(|| Duration::from_nanos(hint))
}

fn create(initial: i64, out: *mut hsa_signal_t) -> hsa_status_t {
    require_open!();
    if out.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    match signals::create(initial, Kind::User, 0) {
        // SAFETY: checked non-null.
        Some(s) => unsafe { put(out, hsa_signal_t { handle: s.handle() }) },
        None => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
    }
}

pub unsafe extern "C" fn hsa_signal_create(
    initial_value: hsa_signal_value_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    create(initial_value, signal)
}

pub unsafe extern "C" fn hsa_amd_signal_create(
    initial_value: hsa_signal_value_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    _attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    create(initial_value, signal)
}

pub unsafe extern "C" fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
    require_open!();
    match signals::get(signal.handle) {
        Some(s) if s.kind == Kind::User => {
            signals::destroy(signal.handle);
            HSA_STATUS_SUCCESS
        }
        _ => HSA_STATUS_ERROR_INVALID_SIGNAL,
    }
}

pub unsafe extern "C" fn hsa_amd_signal_value_pointer(
    signal: hsa_signal_t,
    value_ptr: *mut *mut hsa_signal_value_t,
) -> hsa_status_t {
    require_open!();
    match signals::get(signal.handle) {
        // SAFETY: the API's promise on `value_ptr`; the value lives as long as the signal.
        Some(s) => unsafe { put(value_ptr, s.value().as_ptr()) },
        None => HSA_STATUS_ERROR_INVALID_SIGNAL,
    }
}

/// The four memory-order variants of one operation.
macro_rules! orders {
    ($(($relaxed:ident, $acq:ident, $rel:ident, $acqrel:ident) => |$s:ident, $v:ident| $body:expr;)*) => {
        $(
            pub unsafe extern "C" fn $relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) {
                let $v = value;
                update(signal, |$s| $body);
            }
            pub unsafe extern "C" fn $acq(signal: hsa_signal_t, value: hsa_signal_value_t) {
                let $v = value;
                update(signal, |$s| $body);
            }
            pub unsafe extern "C" fn $rel(signal: hsa_signal_t, value: hsa_signal_value_t) {
                let $v = value;
                update(signal, |$s| $body);
            }
            pub unsafe extern "C" fn $acqrel(signal: hsa_signal_t, value: hsa_signal_value_t) {
                let $v = value;
                update(signal, |$s| $body);
            }
        )*
    };
}

orders! {
    (hsa_signal_add_relaxed, hsa_signal_add_scacquire, hsa_signal_add_screlease, hsa_signal_add_scacq_screl)
        => |s, v| s.value().fetch_add(v, SeqCst);
    (hsa_signal_subtract_relaxed, hsa_signal_subtract_scacquire, hsa_signal_subtract_screlease,
        hsa_signal_subtract_scacq_screl) => |s, v| s.value().fetch_sub(v, SeqCst);
    (hsa_signal_and_relaxed, hsa_signal_and_scacquire, hsa_signal_and_screlease, hsa_signal_and_scacq_screl)
        => |s, v| s.value().fetch_and(v, SeqCst);
    (hsa_signal_or_relaxed, hsa_signal_or_scacquire, hsa_signal_or_screlease, hsa_signal_or_scacq_screl)
        => |s, v| s.value().fetch_or(v, SeqCst);
    (hsa_signal_xor_relaxed, hsa_signal_xor_scacquire, hsa_signal_xor_screlease, hsa_signal_xor_scacq_screl)
        => |s, v| s.value().fetch_xor(v, SeqCst);
}

macro_rules! exchanges {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t {
                update(signal, |s| s.value().swap(value, SeqCst))
            }
        )*
    };
}

exchanges!(
    hsa_signal_exchange_relaxed,
    hsa_signal_exchange_scacquire,
    hsa_signal_exchange_screlease,
    hsa_signal_exchange_scacq_screl
);

macro_rules! compare_exchanges {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(
                signal: hsa_signal_t,
                expected: hsa_signal_value_t,
                value: hsa_signal_value_t,
            ) -> hsa_signal_value_t {
                update(signal, |s| match s.value().compare_exchange(expected, value, SeqCst, SeqCst) {
                    Ok(v) | Err(v) => v,
                })
            }
        )*
    };
}

compare_exchanges!(
    hsa_signal_cas_relaxed,
    hsa_signal_cas_scacquire,
    hsa_signal_cas_screlease,
    hsa_signal_cas_scacq_screl
);

macro_rules! loads {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(signal: hsa_signal_t) -> hsa_signal_value_t {
                load(signal)
            }
        )*
    };
}

loads!(hsa_signal_load_relaxed, hsa_signal_load_scacquire);

macro_rules! stores {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
                store(signal, value)
            }
        )*
    };
}

stores!(
    hsa_signal_store_relaxed,
    hsa_signal_store_screlease,
    hsa_signal_silent_store_relaxed,
    hsa_signal_silent_store_screlease
);

macro_rules! waits {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(
                signal: hsa_signal_t,
                condition: hsa_signal_condition_t,
                compare_value: hsa_signal_value_t,
                timeout_hint: u64,
                _wait_state_hint: hsa_wait_state_t,
            ) -> hsa_signal_value_t {
                match self::signal(signal) {
                    Some(s) => signals::wait(&s, condition, compare_value, timeout(timeout_hint)),
                    None => 0,
                }
            }
        )*
    };
}

waits!(hsa_signal_wait_relaxed, hsa_signal_wait_scacquire);

/// Waits until one of `list` meets its condition; its index and value.
fn wait_any(list: &[(Arc<Signal>, hsa_signal_condition_t, i64)], limit: Option<Duration>) -> Option<(usize, i64)> {
    let deadline = limit.and_then(|t| std::time::Instant::now().checked_add(t));
    loop {
        let seen = signals::generation();
        for (i, (s, c, v)) in list.iter().enumerate() {
            let now = s.value().load(SeqCst);
            if signals::condition_met(*c, now, *v) {
                return Some((i, now));
            }
        }
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return None;
        }
        signals::wait_for_change(seen, Duration::from_millis(2));
    }
}

pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals: *mut hsa_signal_t,
    conds: *mut hsa_signal_condition_t,
    values: *mut hsa_signal_value_t,
    timeout_hint: u64,
    _wait_hint: hsa_wait_state_t,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    if signal_count == 0 || signals.is_null() || conds.is_null() || values.is_null() {
        return u32::MAX;
    }
    let n = signal_count as usize;
    // SAFETY: the API's promise: `signal_count` entries in each array.
    let (sigs, cs, vs) = unsafe {
        (
            std::slice::from_raw_parts(signals, n),
            std::slice::from_raw_parts(conds, n),
            std::slice::from_raw_parts(values, n),
        )
    };
    let mut list = Vec::new();
    for i in 0..n {
        match signal(sigs[i]) {
            Some(s) => list.push((s, cs[i], vs[i])),
            None => return u32::MAX,
        }
    }
    match wait_any(&list, timeout(timeout_hint)) {
        Some((i, v)) => {
            if !satisfying_value.is_null() {
                // SAFETY: checked non-null.
                unsafe { satisfying_value.write_unaligned(v) };
            }
            i as u32
        }
        None => u32::MAX,
    }
}

static GROUPS: Mutex<Vec<(u64, Vec<hsa_signal_t>)>> = Mutex::new(Vec::new());

pub unsafe extern "C" fn hsa_signal_group_create(
    num_signals: u32,
    signals: *const hsa_signal_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    signal_group: *mut hsa_signal_group_t,
) -> hsa_status_t {
    require_open!();
    if num_signals == 0 || signals.is_null() || signal_group.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API's promise: `num_signals` signals.
    let list = unsafe { std::slice::from_raw_parts(signals, num_signals as usize) }.to_vec();
    if list.iter().any(|s| signals::get(s.handle).is_none()) {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    }
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let handle = groups.iter().map(|g| g.0).max().unwrap_or(0x7866_7900_0000) + 16;
    groups.push((handle, list));
    // SAFETY: checked non-null.
    unsafe { put(signal_group, hsa_signal_group_t { handle }) }
}

pub unsafe extern "C" fn hsa_signal_group_destroy(signal_group: hsa_signal_group_t) -> hsa_status_t {
    require_open!();
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let before = groups.len();
    groups.retain(|g| g.0 != signal_group.handle);
    if groups.len() == before {
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    } else {
        HSA_STATUS_SUCCESS
    }
}

macro_rules! group_waits {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(
                signal_group: hsa_signal_group_t,
                conditions: *const hsa_signal_condition_t,
                compare_values: *const hsa_signal_value_t,
                _wait_state_hint: hsa_wait_state_t,
                signal: *mut hsa_signal_t,
                value: *mut hsa_signal_value_t,
            ) -> hsa_status_t {
                require_open!();
                let members = GROUPS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .find(|g| g.0 == signal_group.handle)
                    .map(|g| g.1.clone());
                let Some(members) = members else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
                if conditions.is_null() || compare_values.is_null() || signal.is_null() || value.is_null() {
                    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
                }
                let n = members.len();
                // SAFETY: the API's promise: one condition and value per member.
                let (cs, vs) = unsafe {
                    (std::slice::from_raw_parts(conditions, n), std::slice::from_raw_parts(compare_values, n))
                };
                let mut list = Vec::new();
                for i in 0..n {
                    match signals::get(members[i].handle) {
                        Some(s) => list.push((s, cs[i], vs[i])),
                        None => return HSA_STATUS_ERROR_INVALID_SIGNAL,
                    }
                }
                let Some((i, v)) = wait_any(&list, None) else { return HSA_STATUS_ERROR };
                // SAFETY: checked non-null.
                unsafe {
                    signal.write_unaligned(members[i]);
                    value.write_unaligned(v);
                }
                HSA_STATUS_SUCCESS
            }
        )*
    };
}

group_waits!(hsa_signal_group_wait_any_scacquire, hsa_signal_group_wait_any_relaxed);

/// A C callback and its argument, sent to the runtime's handler thread.
struct Callback<F>(F, *mut c_void);
// SAFETY: the program hands the argument to the runtime to use from its
// own threads (the API's contract for asynchronous handlers).
unsafe impl<F> Send for Callback<F> {}

pub unsafe extern "C" fn hsa_amd_signal_async_handler(
    signal: hsa_signal_t,
    cond: hsa_signal_condition_t,
    value: hsa_signal_value_t,
    handler: hsa_amd_signal_handler,
    arg: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(h) = handler else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    let Some(s) = signals::get(signal.handle) else { return HSA_STATUS_ERROR_INVALID_SIGNAL };
    let cb = Callback(h, arg);
    signals::add_async_handler(
        s,
        cond,
        value,
        Box::new(move |v| {
            let c = &cb;
            // SAFETY: the program's handler, called as the API says.
            unsafe { (c.0)(v, c.1) }
        }),
    );
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_async_function(
    callback: Option<unsafe extern "C" fn(*mut c_void)>,
    arg: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(f) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    let cb = Callback(f, arg);
    let spawned = std::thread::Builder::new().name("hsa-async-fn".into()).spawn(move || {
        let c = &cb;
        // SAFETY: the program's function, called once on a runtime thread.
        unsafe { (c.0)(c.1) }
    });
    out::success_or(spawned.is_ok(), HSA_STATUS_ERROR_OUT_OF_RESOURCES)
}
