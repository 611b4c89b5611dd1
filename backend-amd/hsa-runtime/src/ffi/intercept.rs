//! Intercept queues (`hsa_amd_queue_intercept_create/register`), the way
//! AMD's runtime lets tools see and rewrite every packet a program submits.
//! The program gets a queue with no packet processor; a store to its
//! doorbell runs, in the storing thread, for each published packet in
//! order, the interceptors from the last registered to the first, each
//! handing its packets on through the `writer` it receives; the first
//! registered one's writer submits to the hardware queue the intercept
//! queue wraps. Each consumed slot is marked INVALID and the read index
//! advances. A store made from inside an interceptor is not processed
//! recursively: the running pass picks its packets up.

use crate::ffi::entry::queues::create as create_queue;
use crate::ffi::generated::*;
use crate::ffi::host::HostRange;
use crate::ffi::out::require_open;
use crate::ffi::types::hsa_queue_t;
use crate::queues::{self, ErrorCallback, Queue, QueueKind, INVALID_HEADER, PACKET_BYTES};
use crate::signals;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type HandlerFn = unsafe extern "C" fn(*const c_void, u64, u64, *mut c_void, hsa_amd_queue_intercept_packet_writer);

/// A registered interceptor and its user data.
#[derive(Clone, Copy)]
struct Interceptor(HandlerFn, *mut c_void);
// SAFETY: the tool hands both to the runtime to call from the threads that
// ring the doorbell (the API's contract).
unsafe impl Send for Interceptor {}

struct Intercept {
    proxy: Arc<Queue>,
    wrapped: Arc<Queue>,
    interceptors: Mutex<Vec<Interceptor>>,
    /// The next packet to hand to the interceptors.
    next: Mutex<u64>,
}

static INTERCEPTS: Mutex<Option<HashMap<u64, Arc<Intercept>>>> = Mutex::new(None);

fn registry<R>(f: impl FnOnce(&mut HashMap<u64, Arc<Intercept>>) -> R) -> R {
    let mut g = INTERCEPTS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// `hsa_amd_queue_intercept_create`: the program's queue and the hardware
/// queue behind it (whose errors are reported on the program's queue).
pub fn create(
    agent: hsa_agent_t,
    size: u32,
    queue_type: hsa_queue_type32_t,
    on_error: Option<ErrorCallback>,
    out: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let proxy = match create_queue(agent, size, queue_type, QueueKind::Intercept, on_error.clone(), out) {
        Ok(q) => q,
        Err(e) => return e,
    };
    let address = proxy.address();
    let wrapped_error: Option<ErrorCallback> =
        on_error.map(|cb| -> ErrorCallback { Arc::new(move |s, _| cb(s, address)) });
    let wrapped = match queues::create(size, queue_type, QueueKind::Hardware, wrapped_error) {
        Ok(q) => q,
        Err(e) => {
            queues::destroy(address);
            return e;
        }
    };
    registry(|r| {
        r.insert(
            address,
            Arc::new(Intercept { proxy, wrapped, interceptors: Mutex::new(Vec::new()), next: Mutex::new(0) }),
        )
    });
    HSA_STATUS_SUCCESS
}

/// `hsa_amd_queue_intercept_register`.
pub fn register(queue: u64, handler: hsa_amd_queue_intercept_handler, data: *mut c_void) -> hsa_status_t {
    require_open!();
    let Some(h) = handler else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    match registry(|r| r.get(&queue).cloned()) {
        Some(ic) => {
            ic.interceptors.lock().unwrap_or_else(|e| e.into_inner()).push(Interceptor(h, data));
            HSA_STATUS_SUCCESS
        }
        None => HSA_STATUS_ERROR_INVALID_QUEUE,
    }
}

/// Destroys an intercept queue and the queue it wraps; false if `queue` is not one.
pub fn destroy(queue: u64) -> bool {
    let Some(ic) = registry(|r| r.remove(&queue)) else { return false };
    queues::destroy(ic.proxy.address());
    queues::destroy(ic.wrapped.address());
    true
}

/// Where a pass is: the interceptors it runs and the one now running.
struct Cursor {
    wrapped: Arc<Queue>,
    interceptors: Vec<Interceptor>,
    level: usize,
    packet_index: u64,
}

thread_local! {
    static CURSOR: RefCell<Option<Cursor>> = const { RefCell::new(None) };
}

/// A store to the doorbell of intercept queue `queue`.
pub fn doorbell(queue: u64) {
    let Some(ic) = registry(|r| r.get(&queue).cloned()) else { return };
    if CURSOR.with(|c| c.borrow().is_some()) {
        return;
    }
    let mut next = ic.next.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let end = ic.proxy.write_index().load(Ordering::Acquire);
        let start = *next;
        while *next < end && ic.proxy.is_active() {
            let header = ic.proxy.header(*next).load(Ordering::Acquire);
            if header & 0xFF == INVALID_HEADER {
                break;
            }
            let packet = ic.proxy.packet(*next);
            let interceptors = ic.interceptors.lock().unwrap_or_else(|e| e.into_inner()).clone();
            match interceptors.last().copied() {
                None => submit(&ic.wrapped, &[packet]),
                Some(Interceptor(f, data)) => {
                    let level = interceptors.len() - 1;
                    CURSOR.with(|c| {
                        *c.borrow_mut() =
                            Some(Cursor { wrapped: ic.wrapped.clone(), interceptors, level, packet_index: *next })
                    });
                    // SAFETY: the tool's interceptor, called as the API says
                    // with one packet and the runtime's writer.
                    unsafe { f(packet.as_ptr().cast(), 1, *next, data, Some(writer)) };
                    CURSOR.with(|c| *c.borrow_mut() = None);
                }
            }
            ic.proxy.header(*next).store(INVALID_HEADER, Ordering::Release);
            *next += 1;
        }
        ic.proxy.read_index().store(*next, Ordering::Release);
        if *next == start || *next >= ic.proxy.write_index().load(Ordering::Acquire) {
            break;
        }
    }
    signals::changed();
}

/// The writer each interceptor receives: hands the packets to the
/// interceptor registered before it, or after the first to the hardware queue.
unsafe extern "C" fn writer(packets: *const c_void, count: u64) {
    if packets.is_null() || count == 0 {
        return;
    }
    // SAFETY: the interceptor passes `count` packets of 64 bytes.
    let bytes = unsafe { HostRange::new(packets as u64, count as usize * PACKET_BYTES) }.to_vec();
    let list: Vec<[u8; PACKET_BYTES]> =
        bytes.chunks_exact(PACKET_BYTES).map(|c| c.try_into().unwrap_or([0; PACKET_BYTES])).collect();
    let step = CURSOR.with(|c| {
        let mut c = c.borrow_mut();
        let cur = c.as_mut()?;
        if cur.level == 0 {
            Some(Err(cur.wrapped.clone()))
        } else {
            cur.level -= 1;
            Some(Ok((cur.interceptors[cur.level], cur.packet_index)))
        }
    });
    match step {
        None => {
            eprintln!("error: xfpx emulated HSA runtime: a queue intercept writer was called outside its interceptor")
        }
        Some(Err(wrapped)) => submit(&wrapped, &list),
        Some(Ok((Interceptor(f, data), index))) => {
            // SAFETY: the previous interceptor, called as the API says.
            unsafe { f(packets, count, index, data, Some(writer)) };
            CURSOR.with(|c| {
                if let Some(cur) = c.borrow_mut().as_mut() {
                    cur.level += 1;
                }
            });
        }
    }
}

/// Puts `packets` on a hardware queue and rings its doorbell; waits for
/// room if the ring is full.
fn submit(q: &Queue, packets: &[[u8; PACKET_BYTES]]) {
    let n = packets.len() as u64;
    if n == 0 || n > u64::from(q.size) {
        return;
    }
    let first = loop {
        let seen = signals::generation();
        let write = q.write_index().load(Ordering::Acquire);
        let read = q.read_index().load(Ordering::Acquire);
        if write - read + n <= u64::from(q.size)
            && q.write_index().compare_exchange(write, write + n, Ordering::AcqRel, Ordering::Acquire).is_ok()
        {
            break write;
        }
        signals::wait_for_change(seen, Duration::from_millis(2));
    };
    for (i, p) in packets.iter().enumerate() {
        q.write_body(first + i as u64, p);
    }
    for (i, p) in packets.iter().enumerate().skip(1) {
        q.header(first + i as u64).store(u16::from_le_bytes([p[0], p[1]]), Ordering::Release);
    }
    q.header(first).store(u16::from_le_bytes([packets[0][0], packets[0][1]]), Ordering::Release);
    q.doorbell.value().store((first + n - 1) as i64, Ordering::Release);
    signals::changed();
}
