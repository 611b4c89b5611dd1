//! User-mode queues: an `amd_queue_t` (whose first member is the
//! `hsa_queue_t` the program sees) and a ring of 64-byte AQL packets in
//! host memory. A hardware queue has a packet processor: a host thread that
//! takes packets in order once the program has published them (header type
//! no longer INVALID, write index past them), runs kernel dispatches on the
//! emulated device, waits out barrier-AND/OR dependencies, marks each slot
//! INVALID again, advances the read index and decrements the completion
//! signal. An intercept queue has no processor of its own: stores to its
//! doorbell hand its packets to the interceptors (see `ffi::intercept`),
//! which pass them on to the hardware queue it wraps.
//!
//! An error (a packet the emulator cannot run, a memory fault, a trap) stops
//! the queue: its error callback is called, or without one the process
//! aborts with a line, as AMD's runtime does.

use crate::agents::{QUEUE_MAX_SIZE, QUEUE_MIN_SIZE};
use crate::device::{self, PacketPlace};
use crate::ffi::generated::*;
use crate::ffi::host::HostBlock;
use crate::ffi::types::{amd_queue_t, hsa_barrier_and_packet_t, hsa_kernel_dispatch_packet_t, hsa_queue_t};
use crate::memory::{self, Use};
use crate::signals::{self, Kind, Signal};
use std::collections::HashMap;
use std::mem::offset_of;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub const PACKET_BYTES: usize = 64;
/// The header of a consumed slot: type INVALID.
pub const INVALID_HEADER: u16 = HSA_PACKET_TYPE_INVALID as u16;

/// What the program asked to hear about a queue error (status, queue address).
pub type ErrorCallback = Arc<dyn Fn(hsa_status_t, u64) + Send + Sync>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    Hardware,
    Intercept,
}

pub struct Queue {
    amd: HostBlock,
    ring: HostBlock,
    pub size: u32,
    pub kind: QueueKind,
    pub doorbell: Arc<Signal>,
    on_error: Option<ErrorCallback>,
    stop: AtomicBool,
    inactive: AtomicBool,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("address", &self.address()).field("size", &self.size).finish_non_exhaustive()
    }
}

impl Queue {
    /// The `hsa_queue_t` (and `amd_queue_t`) address.
    pub fn address(&self) -> u64 {
        self.amd.address()
    }

    pub fn ring_address(&self) -> u64 {
        self.ring.address()
    }

    pub fn write_index(&self) -> &AtomicU64 {
        self.amd.atomic_u64(offset_of!(amd_queue_t, write_dispatch_id))
    }

    pub fn read_index(&self) -> &AtomicU64 {
        self.amd.atomic_u64(offset_of!(amd_queue_t, read_dispatch_id))
    }

    fn slot(&self, index: u64) -> usize {
        (index % u64::from(self.size)) as usize * PACKET_BYTES
    }

    /// The header of the packet at `index` (modulo the ring).
    pub fn header(&self, index: u64) -> &AtomicU16 {
        self.ring.atomic_u16(self.slot(index))
    }

    pub fn packet(&self, index: u64) -> [u8; PACKET_BYTES] {
        let mut p = [0u8; PACKET_BYTES];
        self.ring.read(self.slot(index), &mut p);
        p
    }

    /// Writes the body of a packet (all but its header) at `index`.
    pub fn write_body(&self, index: u64, packet: &[u8; PACKET_BYTES]) {
        self.ring.write(self.slot(index) + 2, &packet[2..]);
    }

    /// Stops taking packets (`hsa_queue_inactivate`).
    pub fn inactivate(&self) {
        self.inactive.store(true, Ordering::Release);
    }

    pub fn is_active(&self) -> bool {
        !self.inactive.load(Ordering::Acquire)
    }

    /// Stops the queue after an error: the callback, or a line and abort.
    pub fn fail(&self, status: hsa_status_t, why: &str) {
        self.inactive.store(true, Ordering::Release);
        eprintln!("error: xfpx emulated GPU: queue {:#x}: {why}", self.address());
        match &self.on_error {
            Some(cb) => cb(status, self.address()),
            None => {
                eprintln!("error: xfpx emulated GPU: the queue has no error callback; aborting, as AMD's runtime does");
                std::process::abort();
            }
        }
    }
}

static QUEUES: Mutex<Option<HashMap<u64, Arc<Queue>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn registry<R>(f: impl FnOnce(&mut HashMap<u64, Arc<Queue>>) -> R) -> R {
    let mut g = QUEUES.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

pub fn get(address: u64) -> Option<Arc<Queue>> {
    registry(|q| q.get(&address).cloned())
}

/// A new queue of `size` packets (a power of two within the agent's limits).
pub fn create(
    size: u32,
    queue_type: hsa_queue_type32_t,
    kind: QueueKind,
    on_error: Option<ErrorCallback>,
) -> Result<Arc<Queue>, hsa_status_t> {
    if !size.is_power_of_two() || !(QUEUE_MIN_SIZE..=QUEUE_MAX_SIZE).contains(&size) {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let amd = HostBlock::zeroed(std::mem::size_of::<amd_queue_t>(), 4096).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    let ring = HostBlock::zeroed(size as usize * PACKET_BYTES, 4096).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    let doorbell_kind = match kind {
        QueueKind::Hardware => Kind::Doorbell,
        QueueKind::Intercept => Kind::InterceptDoorbell(amd.address()),
    };
    let doorbell = signals::create(0, doorbell_kind, amd.address()).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let put32 = |at: usize, v: u32| amd.write(at, &v.to_le_bytes());
    let put64 = |at: usize, v: u64| amd.write(at, &v.to_le_bytes());
    put32(offset_of!(hsa_queue_t, type_), queue_type);
    put32(offset_of!(hsa_queue_t, features), HSA_QUEUE_FEATURE_KERNEL_DISPATCH);
    put64(offset_of!(hsa_queue_t, base_address), ring.address());
    put64(offset_of!(hsa_queue_t, doorbell_signal), doorbell.handle());
    put32(offset_of!(hsa_queue_t, size), size);
    put64(offset_of!(hsa_queue_t, id), id);
    put32(offset_of!(amd_queue_t, queue_properties), crate::ffi::types::AMD_QUEUE_PROPERTIES_IS_PTR64);
    put32(offset_of!(amd_queue_t, max_wave_id), 31);
    let cus = xfpx_amd_emu::placement::default_compute_units(crate::state::target());
    put32(offset_of!(amd_queue_t, max_cu_id), cus - 1);
    for i in 0..u64::from(size) {
        ring.write((i as usize) * PACKET_BYTES, &INVALID_HEADER.to_le_bytes());
    }
    memory::register_view(amd.range(), Use::Queue);
    memory::register_view(ring.range(), Use::Queue);
    let q = Arc::new(Queue {
        amd,
        ring,
        size,
        kind,
        doorbell,
        on_error,
        stop: AtomicBool::new(false),
        inactive: AtomicBool::new(false),
        worker: Mutex::new(None),
    });
    if kind == QueueKind::Hardware {
        let served = q.clone();
        let worker = std::thread::Builder::new()
            .name(format!("hsa-queue-{id}"))
            .spawn(move || serve(&served))
            .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
        *q.worker.lock().unwrap_or_else(|e| e.into_inner()) = Some(worker);
    }
    registry(|r| r.insert(q.address(), q.clone()));
    Ok(q)
}

/// Stops and releases a queue.
pub fn destroy(address: u64) -> bool {
    let Some(q) = registry(|r| r.remove(&address)) else { return false };
    q.stop.store(true, Ordering::Release);
    signals::changed();
    let worker = q.worker.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(w) = worker {
        if w.thread().id() != std::thread::current().id() {
            let _ = w.join();
        }
    }
    memory::free(q.amd.address(), |u| u == Use::Queue);
    memory::free(q.ring.address(), |u| u == Use::Queue);
    signals::destroy(q.doorbell.handle());
    true
}

pub fn destroy_all() {
    let all: Vec<u64> = registry(|r| r.keys().copied().collect());
    for a in all {
        destroy(a);
    }
}

/// What became of a packet.
enum Outcome {
    /// Done: the completion signal and, for a dispatch, when it ran.
    Done(hsa_signal_t, Option<(u64, u64)>),
    Failed(hsa_status_t, String),
    Stopped,
}

/// The packet processor of a hardware queue.
fn serve(q: &Arc<Queue>) {
    loop {
        if q.stop.load(Ordering::Acquire) {
            return;
        }
        let seen = signals::generation();
        let read = q.read_index().load(Ordering::Acquire);
        let write = q.write_index().load(Ordering::Acquire);
        if read < write && q.is_active() {
            let header = q.header(read).load(Ordering::Acquire);
            if header & 0xFF != INVALID_HEADER {
                match process(q, header, &q.packet(read), read) {
                    Outcome::Done(completion, times) => {
                        q.header(read).store(INVALID_HEADER, Ordering::Release);
                        q.read_index().store(read + 1, Ordering::Release);
                        complete(completion, times);
                        signals::changed();
                        continue;
                    }
                    Outcome::Failed(status, why) => {
                        q.fail(status, &why);
                        continue;
                    }
                    Outcome::Stopped => return,
                }
            }
        }
        signals::wait_for_change(seen, Duration::from_millis(2));
    }
}

fn process(q: &Queue, header: u16, bytes: &[u8; PACKET_BYTES], index: u64) -> Outcome {
    let packet_type = u32::from(header & 0xFF);
    match packet_type {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => {
            let p = hsa_kernel_dispatch_packet_t::from_bytes(bytes);
            let place = PacketPlace {
                packet_address: q.ring_address() + q.slot(index) as u64,
                queue_address: q.address(),
                dispatch_id: index,
            };
            let start = crate::state::timestamp();
            match device::dispatch(&p, place) {
                Ok(()) => Outcome::Done(p.completion_signal, Some((start, crate::state::timestamp()))),
                Err(e) => Outcome::Failed(e.status, e.message),
            }
        }
        HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR => {
            let p = hsa_barrier_and_packet_t::from_bytes(bytes);
            let deps: Vec<Arc<Signal>> =
                p.dep_signal.iter().filter(|s| s.handle != 0).filter_map(|s| signals::get(s.handle)).collect();
            if deps.len() != p.dep_signal.iter().filter(|s| s.handle != 0).count() {
                return Outcome::Failed(
                    HSA_STATUS_ERROR_INVALID_SIGNAL,
                    "a barrier depends on an unknown signal".into(),
                );
            }
            let and = packet_type == HSA_PACKET_TYPE_BARRIER_AND;
            loop {
                let seen = signals::generation();
                let zero: Vec<bool> = deps.iter().map(|s| s.value().load(Ordering::Acquire) == 0).collect();
                let met = if and { zero.iter().all(|&z| z) } else { deps.is_empty() || zero.iter().any(|&z| z) };
                if met {
                    return Outcome::Done(p.completion_signal, None);
                }
                if q.stop.load(Ordering::Acquire) {
                    return Outcome::Stopped;
                }
                signals::wait_for_change(seen, Duration::from_millis(2));
            }
        }
        other => Outcome::Failed(
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
            format!("packet type {other} at index {index} is not run by the emulated GPU"),
        ),
    }
}

/// Decrements a completion signal (none: handle 0), after recording when
/// its dispatch ran.
fn complete(signal: hsa_signal_t, times: Option<(u64, u64)>) {
    if signal.handle == 0 {
        return;
    }
    match signals::get(signal.handle) {
        Some(s) => {
            if let Some((start, end)) = times {
                s.set_times(start, end);
            }
            s.value().fetch_sub(1, Ordering::AcqRel);
        }
        None => eprintln!("error: xfpx emulated GPU: completion signal {:#x} is not a signal", signal.handle),
    }
}
