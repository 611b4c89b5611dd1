//! Entry points of queues: creation (plain and intercept), destruction,
//! the read and write indices in every memory order (all sequentially
//! consistent here), and the AMD queue settings the emulator accepts and
//! ignores (compute-unit masks, priorities, profiling).

use crate::agents::Agent;
use crate::ffi::generated::*;
use crate::ffi::out::{self, open, put, require_open};
use crate::ffi::types::{hsa_amd_profiling_dispatch_time_t, hsa_queue_t};
use crate::queues::{self, ErrorCallback, Queue, QueueKind};
use std::ffi::c_void;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, OnceLock};

type QueueErrorFn = Option<unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void)>;

/// The program's error callback as the runtime calls it.
fn error_callback(callback: QueueErrorFn, data: *mut c_void) -> Option<ErrorCallback> {
    struct Data(*mut c_void);
    // SAFETY: the program hands `data` to the runtime for its callback,
    // which the API says runs on a runtime thread.
    unsafe impl Send for Data {}
    // SAFETY: as above; only the pointer value is shared.
    unsafe impl Sync for Data {}
    let f = callback?;
    let data = Data(data);
    Some(Arc::new(move |status, queue| {
        let d = &data;
        // SAFETY: the program's callback with the queue it created.
        unsafe { f(status, queue as *mut hsa_queue_t, d.0) }
    }))
}

/// Creates a queue of `kind` on `agent` and writes its address to `out`.
pub(crate) fn create(
    agent: hsa_agent_t,
    size: u32,
    queue_type: hsa_queue_type32_t,
    kind: QueueKind,
    on_error: Option<ErrorCallback>,
    out: *mut *mut hsa_queue_t,
) -> Result<Arc<Queue>, hsa_status_t> {
    open()?;
    match Agent::from_handle(agent.handle) {
        Some(Agent::Gpu) => {}
        Some(Agent::Cpu) => return Err(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION),
        None => return Err(HSA_STATUS_ERROR_INVALID_AGENT),
    }
    if out.is_null() || queue_type > HSA_QUEUE_TYPE_COOPERATIVE {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let q = queues::create(size, queue_type, kind, on_error).map_err(|e| {
        if e == HSA_STATUS_ERROR_INVALID_ARGUMENT {
            HSA_STATUS_ERROR_INVALID_QUEUE_CREATION
        } else {
            e
        }
    })?;
    // SAFETY: checked non-null.
    unsafe { put(out, q.address() as *mut hsa_queue_t) };
    Ok(q)
}

pub unsafe extern "C" fn hsa_queue_create(
    agent: hsa_agent_t,
    size: u32,
    type_: hsa_queue_type32_t,
    callback: QueueErrorFn,
    data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    match create(agent, size, type_, QueueKind::Hardware, error_callback(callback, data), queue) {
        Ok(_) => HSA_STATUS_SUCCESS,
        Err(e) => e,
    }
}

pub unsafe extern "C" fn hsa_amd_queue_intercept_create(
    agent_handle: hsa_agent_t,
    size: u32,
    type_: hsa_queue_type32_t,
    callback: QueueErrorFn,
    data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    crate::ffi::intercept::create(agent_handle, size, type_, error_callback(callback, data), queue)
}

pub unsafe extern "C" fn hsa_amd_queue_intercept_register(
    queue: *mut hsa_queue_t,
    callback: hsa_amd_queue_intercept_handler,
    user_data: *mut c_void,
) -> hsa_status_t {
    crate::ffi::intercept::register(queue as u64, callback, user_data)
}

pub unsafe extern "C" fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
    require_open!();
    out::success_or(
        crate::ffi::intercept::destroy(queue as u64) || queues::destroy(queue as u64),
        HSA_STATUS_ERROR_INVALID_QUEUE,
    )
}

pub unsafe extern "C" fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t {
    require_open!();
    match queues::get(queue as u64) {
        Some(q) => {
            q.inactivate();
            HSA_STATUS_SUCCESS
        }
        None => HSA_STATUS_ERROR_INVALID_QUEUE,
    }
}

/// The queue at a pointer; an unknown one is reported once.
fn queue(q: *const hsa_queue_t) -> Option<Arc<Queue>> {
    let found = queues::get(q as u64);
    if found.is_none() {
        static REPORTED: OnceLock<()> = OnceLock::new();
        REPORTED.get_or_init(|| {
            eprintln!("error: xfpx emulated HSA runtime: {q:p} is not a queue (index calls on it do nothing)")
        });
    }
    found
}

macro_rules! index_loads {
    ($($name:ident => $index:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(queue: *const hsa_queue_t) -> u64 {
                self::queue(queue).map_or(0, |q| q.$index().load(SeqCst))
            }
        )*
    };
}

index_loads!(
    hsa_queue_load_read_index_scacquire => read_index,
    hsa_queue_load_read_index_relaxed => read_index,
    hsa_queue_load_write_index_scacquire => write_index,
    hsa_queue_load_write_index_relaxed => write_index
);

macro_rules! index_stores {
    ($($name:ident => $index:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(queue: *const hsa_queue_t, value: u64) {
                if let Some(q) = self::queue(queue) {
                    q.$index().store(value, SeqCst);
                    crate::signals::changed();
                }
            }
        )*
    };
}

index_stores!(
    hsa_queue_store_write_index_relaxed => write_index,
    hsa_queue_store_write_index_screlease => write_index,
    hsa_queue_store_read_index_relaxed => read_index,
    hsa_queue_store_read_index_screlease => read_index
);

macro_rules! index_cas {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 {
                self::queue(queue).map_or(0, |q| match q.write_index().compare_exchange(expected, value, SeqCst, SeqCst) {
                    Ok(v) | Err(v) => v,
                })
            }
        )*
    };
}

index_cas!(
    hsa_queue_cas_write_index_scacq_screl,
    hsa_queue_cas_write_index_scacquire,
    hsa_queue_cas_write_index_relaxed,
    hsa_queue_cas_write_index_screlease
);

macro_rules! index_adds {
    ($($name:ident),*) => {
        $(
            pub unsafe extern "C" fn $name(queue: *const hsa_queue_t, value: u64) -> u64 {
                self::queue(queue).map_or(0, |q| q.write_index().fetch_add(value, SeqCst))
            }
        )*
    };
}

index_adds!(
    hsa_queue_add_write_index_scacq_screl,
    hsa_queue_add_write_index_scacquire,
    hsa_queue_add_write_index_relaxed,
    hsa_queue_add_write_index_screlease
);

/// The answer to a setting the emulated queues do not model (CU masks,
/// priorities, profiling): success for a queue of this runtime.
///
/// # Safety
/// None beyond the entry's: `queue` is only compared with the runtime's queues.
unsafe fn accept(queue: *const hsa_queue_t) -> hsa_status_t {
    require_open!();
    out::success_or(queues::get(queue as u64).is_some(), HSA_STATUS_ERROR_INVALID_QUEUE)
}

pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(
    queue: *const hsa_queue_t,
    _num_cu_mask_count: u32,
    _cu_mask: *const u32,
) -> hsa_status_t {
    // SAFETY: forwarded as received.
    unsafe { accept(queue) }
}

pub unsafe extern "C" fn hsa_amd_queue_set_priority(
    queue: *mut hsa_queue_t,
    _priority: hsa_amd_queue_priority_t,
) -> hsa_status_t {
    // SAFETY: forwarded as received.
    unsafe { accept(queue) }
}

pub unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    queue: *mut hsa_queue_t,
    _enable: std::ffi::c_int,
) -> hsa_status_t {
    // SAFETY: forwarded as received.
    unsafe { accept(queue) }
}

pub unsafe extern "C" fn hsa_amd_profiling_async_copy_enable(_enable: bool) -> hsa_status_t {
    require_open!();
    HSA_STATUS_SUCCESS
}

/// When the last dispatch that completed `signal` ran, in system timestamps.
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_dispatch_time_t,
) -> hsa_status_t {
    require_open!();
    if Agent::from_handle(agent.handle) != Some(Agent::Gpu) {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    let Some(s) = crate::signals::get(signal.handle) else { return HSA_STATUS_ERROR_INVALID_SIGNAL };
    let (start, end) = s.times();
    // SAFETY: the API's promise on `time`.
    unsafe { put(time, hsa_amd_profiling_dispatch_time_t { start, end }) }
}

/// The GPU's clock is the system's here.
pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: hsa_agent_t,
    agent_tick: u64,
    system_tick: *mut u64,
) -> hsa_status_t {
    require_open!();
    if Agent::from_handle(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    // SAFETY: the API's promise on `system_tick`.
    unsafe { put(system_tick, agent_tick) }
}
