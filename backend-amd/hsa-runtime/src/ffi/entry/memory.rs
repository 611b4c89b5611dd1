//! Entry points of memory: allocation from regions and pools, access,
//! copies and fills, locking program memory, pointer information.

use crate::agents::{Agent, Pool};
use crate::ffi::generated::*;
use crate::ffi::host::HostRange;
use crate::ffi::out::{self, put, require_open};
use crate::ffi::types::hsa_amd_pointer_info_t;
use crate::memory::{self, Use};
use crate::signals;
use std::ffi::{c_int, c_void};
use std::mem::offset_of;
use std::sync::atomic::Ordering;

fn allocate(pool: Option<Pool>, size: usize, ptr: *mut *mut c_void) -> hsa_status_t {
    let Some(pool) = pool else { return HSA_STATUS_ERROR_INVALID_REGION };
    if size == 0 || ptr.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if !pool.allocatable() {
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
    if size as u64 > crate::agents::POOL_SIZE {
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
    match memory::allocate(size, Use::Pool(pool)) {
        // SAFETY: checked non-null; the API's promise.
        Some(base) => unsafe { put(ptr, base as *mut c_void) },
        None => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
    }
}

fn free(ptr: *mut c_void) -> hsa_status_t {
    if ptr.is_null() {
        return HSA_STATUS_SUCCESS;
    }
    out::success_or(memory::free(ptr as u64, |u| matches!(u, Use::Pool(_))), HSA_STATUS_ERROR_INVALID_ALLOCATION)
}

pub unsafe extern "C" fn hsa_memory_allocate(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t {
    require_open!();
    allocate(Pool::from_handle(region.handle), size, ptr)
}

pub unsafe extern "C" fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t {
    require_open!();
    free(ptr)
}

pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    memory_pool: hsa_amd_memory_pool_t,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    require_open!();
    match Pool::from_handle(memory_pool.handle) {
        Some(p) => allocate(Some(p), size, ptr),
        None => HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
    }
}

pub unsafe extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t {
    require_open!();
    free(ptr)
}

/// Copies `size` bytes; both ranges are the program's (host memory here).
///
/// # Safety
/// `dst` and `src` are valid for `size` bytes.
unsafe fn copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t {
    if size == 0 {
        return HSA_STATUS_SUCCESS;
    }
    if dst.is_null() || src.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's promise; `copy` allows overlap.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t {
    require_open!();
    // SAFETY: the API's promise on the ranges.
    unsafe { copy(dst, src, size) }
}

pub unsafe extern "C" fn hsa_memory_register(ptr: *mut c_void, size: usize) -> hsa_status_t {
    require_open!();
    if ptr.is_null() && size > 0 {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_memory_deregister(_ptr: *mut c_void, _size: usize) -> hsa_status_t {
    require_open!();
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_memory_assign_agent(
    ptr: *mut c_void,
    agent: hsa_agent_t,
    _access: hsa_access_permission_t,
) -> hsa_status_t {
    require_open!();
    if Agent::from_handle(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    if memory::find(ptr as u64).is_none() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    num_agents: u32,
    agents: *const hsa_agent_t,
    _flags: *const u32,
    ptr: *const c_void,
) -> hsa_status_t {
    require_open!();
    if num_agents == 0 || agents.is_null() || memory::find(ptr as u64).is_none() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API's promise: `num_agents` agents.
    let list = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
    if list.iter().any(|a| Agent::from_handle(a.handle).is_none()) {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    // Every agent reaches all memory here (it is the host's).
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_memory_pool_can_migrate(
    src_memory_pool: hsa_amd_memory_pool_t,
    dst_memory_pool: hsa_amd_memory_pool_t,
    result: *mut bool,
) -> hsa_status_t {
    require_open!();
    if Pool::from_handle(src_memory_pool.handle).is_none() || Pool::from_handle(dst_memory_pool.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    }
    // SAFETY: the API's promise on `result`.
    unsafe { put(result, false) }
}

pub unsafe extern "C" fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: c_int,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    require_open!();
    let _ = (agents, num_agent);
    if host_ptr.is_null() || size == 0 || agent_ptr.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // Already GPU-visible (allocated or locked before): the same address.
    if memory::find(host_ptr as u64).is_none() {
        // SAFETY: the program promises the range stays valid until unlocked.
        let range = unsafe { HostRange::new(host_ptr as u64, size) };
        if !memory::lock(range) {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
    }
    // SAFETY: checked non-null.
    unsafe { put(agent_ptr, host_ptr) }
}

pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: c_int,
    _pool: hsa_amd_memory_pool_t,
    _flags: u32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    // SAFETY: forwarded as received.
    unsafe { hsa_amd_memory_lock(host_ptr, size, agents, num_agent, agent_ptr) }
}

pub unsafe extern "C" fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t {
    require_open!();
    memory::free(host_ptr as u64, |u| u == Use::Locked);
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    require_open!();
    if ptr.is_null() || !(ptr as usize).is_multiple_of(4) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    match memory::find(ptr as u64) {
        Some(f) if ptr as u64 + 4 * count as u64 <= f.base + f.len as u64 => {}
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
    // SAFETY: inside one allocation (checked above), 4-aligned.
    let words = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u32>(), count) };
    words.fill(value);
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    require_open!();
    if Agent::from_handle(dst_agent.handle).is_none() || Agent::from_handle(src_agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    if (dst.is_null() || src.is_null()) && size > 0 || (num_dep_signals > 0 && dep_signals.is_null()) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let Some(done) = signals::get(completion_signal.handle) else { return HSA_STATUS_ERROR_INVALID_SIGNAL };
    let deps = if num_dep_signals == 0 {
        Vec::new()
    } else {
        // SAFETY: the API's promise: `num_dep_signals` signals.
        unsafe { std::slice::from_raw_parts(dep_signals, num_dep_signals as usize) }.to_vec()
    };
    let mut waits = Vec::new();
    for d in deps {
        match signals::get(d.handle) {
            Some(s) => waits.push(s),
            None => return HSA_STATUS_ERROR_INVALID_SIGNAL,
        }
    }
    // SAFETY: the program keeps both ranges valid until the completion
    // signal is decremented (the API's contract).
    let (from, to) = unsafe { (HostRange::new(src as u64, size), HostRange::new(dst as u64, size)) };
    let run = move || {
        let bytes = from.to_vec();
        to.write(0, &bytes);
        done.value().fetch_sub(1, Ordering::AcqRel);
        signals::changed();
    };
    if waits.iter().all(|s| s.value().load(Ordering::Acquire) == 0) {
        run();
    } else {
        // Copy once every dependency reached zero (checked from the handler thread).
        let mut run = Some(run);
        let first = waits[0].clone();
        signals::add_async_handler(
            first,
            HSA_SIGNAL_CONDITION_EQ,
            0,
            Box::new(move |_| {
                if waits.iter().all(|s| s.value().load(Ordering::Acquire) == 0) {
                    if let Some(r) = run.take() {
                        r();
                    }
                    false
                } else {
                    true
                }
            }),
        );
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut hsa_amd_pointer_info_t,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut hsa_agent_t,
) -> hsa_status_t {
    require_open!();
    if info.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let found = memory::find(ptr as u64);
    let (kind, base, len, user, owner, flags) = match found {
        Some(f) => {
            let (kind, owner, flags) = match f.usage {
                Use::Pool(p) => (
                    HSA_EXT_POINTER_TYPE_HSA,
                    p.owner(),
                    if p.fine_grained() {
                        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                    } else {
                        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
                    },
                ),
                Use::Locked => (HSA_EXT_POINTER_TYPE_LOCKED, Agent::Cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED),
                Use::Code | Use::Queue => {
                    (HSA_EXT_POINTER_TYPE_HSA, Agent::Gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
                }
            };
            (kind, f.base, f.len, f.user_data, owner, flags)
        }
        None => (HSA_EXT_POINTER_TYPE_UNKNOWN, 0, 0, 0, Agent::Cpu, 0),
    };
    // The caller's `size` says how much of the struct it has.
    // SAFETY: `info` points to a struct whose first field is its size.
    let have = unsafe { info.cast::<u32>().read_unaligned() } as usize;
    let full = hsa_amd_pointer_info_t {
        size: std::mem::size_of::<hsa_amd_pointer_info_t>() as u32,
        type_: kind,
        agentBaseAddress: base as *mut c_void,
        hostBaseAddress: base as *mut c_void,
        sizeInBytes: len,
        userData: user as *mut c_void,
        agentOwner: hsa_agent_t { handle: owner.handle() },
        global_flags: flags,
    };
    let n = have.min(std::mem::size_of::<hsa_amd_pointer_info_t>());
    if n < offset_of!(hsa_amd_pointer_info_t, type_) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: `full` is a plain struct; at most the caller's size is written.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&full as *const hsa_amd_pointer_info_t).cast::<u8>().add(4),
            info.cast::<u8>().add(4),
            n - 4,
        );
        info.cast::<u32>().write_unaligned(n as u32);
    }
    if !num_agents_accessible.is_null() && !accessible.is_null() {
        let Some(alloc) = alloc else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
        let agents: Vec<hsa_agent_t> = if found.is_some() {
            Agent::ALL.iter().map(|a| hsa_agent_t { handle: a.handle() }).collect()
        } else {
            Vec::new()
        };
        // SAFETY: the program's allocator, for the list it then owns.
        let list = unsafe { alloc(agents.len().max(1) * std::mem::size_of::<hsa_agent_t>()) }.cast::<hsa_agent_t>();
        if list.is_null() {
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        // SAFETY: `list` holds room for the agents; out pointers checked.
        unsafe {
            std::ptr::copy_nonoverlapping(agents.as_ptr(), list, agents.len());
            num_agents_accessible.write_unaligned(agents.len() as u32);
            accessible.write_unaligned(list);
        }
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_amd_pointer_info_set_userdata(ptr: *const c_void, userdata: *mut c_void) -> hsa_status_t {
    require_open!();
    match memory::find(ptr as u64) {
        Some(f) if memory::set_user_data(f.base, userdata as u64) => HSA_STATUS_SUCCESS,
        _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}
