//! Entry points of the system, agents, ISAs, regions and memory pools.

use crate::agents::{self, Agent, Pool};
use crate::ffi::generated::*;
use crate::ffi::out::{self, put, require_open};
use crate::state;
use std::ffi::{c_char, c_void, CStr};

pub unsafe extern "C" fn hsa_init() -> hsa_status_t {
    state::init()
}

pub unsafe extern "C" fn hsa_shut_down() -> hsa_status_t {
    state::shut_down()
}

pub unsafe extern "C" fn hsa_system_get_info(attribute: hsa_system_info_t, value: *mut c_void) -> hsa_status_t {
    require_open!();
    use agents::Info;
    let v = match attribute {
        HSA_SYSTEM_INFO_VERSION_MAJOR => Some(Info::U16(1)),
        HSA_SYSTEM_INFO_VERSION_MINOR => Some(Info::U16(1)),
        HSA_SYSTEM_INFO_TIMESTAMP => Some(Info::U64(state::timestamp())),
        HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => Some(Info::U64(1_000_000_000)),
        HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT => Some(Info::U64(u64::MAX)),
        HSA_SYSTEM_INFO_ENDIANNESS => Some(Info::U32(HSA_ENDIANNESS_LITTLE)),
        HSA_SYSTEM_INFO_MACHINE_MODEL => Some(Info::U32(HSA_MACHINE_MODEL_LARGE)),
        HSA_SYSTEM_INFO_EXTENSIONS => Some(Info::Bytes(agents::extension_mask())),
        HSA_AMD_SYSTEM_INFO_BUILD_VERSION => {
            Some(Info::Text(format!("xfpx-emulated-{}", env!("CARGO_PKG_VERSION")), 64))
        }
        HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED => Some(Info::Bool(false)),
        HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT => Some(Info::Bool(false)),
        _ => None,
    };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, v) }
}

/// Whether the runtime offers `extension` at `major`.`minor`.
fn offers(extension: u16, major: u16, minor: u16) -> bool {
    u32::from(extension) == HSA_EXTENSION_AMD_LOADER && major == 1 && minor <= crate::ffi::loader::MINOR_VERSION
}

pub unsafe extern "C" fn hsa_system_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    require_open!();
    // SAFETY: the API's promise on `result`.
    unsafe { put(result, offers(extension, version_major, version_minor)) }
}

pub unsafe extern "C" fn hsa_system_major_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    require_open!();
    let yes = offers(extension, version_major, 0);
    if yes {
        // SAFETY: the API's promise on `version_minor`.
        let s = unsafe { put(version_minor, crate::ffi::loader::MINOR_VERSION) };
        if s != HSA_STATUS_SUCCESS {
            return s;
        }
    }
    // SAFETY: the API's promise on `result`.
    unsafe { put(result, yes) }
}

pub unsafe extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    table: *mut c_void,
) -> hsa_status_t {
    require_open!();
    if !offers(extension, version_major, version_minor) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the table the caller passes holds the version's functions.
    unsafe { crate::ffi::loader::fill_table(table, crate::ffi::loader::table_size(version_minor)) }
}

pub unsafe extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    require_open!();
    if !offers(extension, version_major, 0) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's table holds `table_length` bytes.
    unsafe { crate::ffi::loader::fill_table(table, table_length) }
}

pub unsafe extern "C" fn hsa_extension_get_name(extension: u16, name: *mut *const c_char) -> hsa_status_t {
    require_open!();
    let n: &'static CStr = match u32::from(extension) {
        HSA_EXTENSION_FINALIZER => c"HSA_EXTENSION_FINALIZER",
        HSA_EXTENSION_IMAGES => c"HSA_EXTENSION_IMAGES",
        HSA_EXTENSION_PERFORMANCE_COUNTERS => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
        HSA_EXTENSION_PROFILING_EVENTS => c"HSA_EXTENSION_PROFILING_EVENTS",
        HSA_EXTENSION_AMD_PROFILER => c"HSA_EXTENSION_AMD_PROFILER",
        HSA_EXTENSION_AMD_LOADER => c"HSA_EXTENSION_AMD_LOADER",
        HSA_EXTENSION_AMD_AQLPROFILE => c"HSA_EXTENSION_AMD_AQLPROFILE",
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    // SAFETY: the API's promise on `name`.
    unsafe { put(name, n.as_ptr()) }
}

/// The answer to whether an agent offers an extension: no agent offers any.
///
/// # Safety
/// `result` is null or valid for a write.
unsafe fn no_agent_extension(agent: hsa_agent_t, result: *mut bool) -> hsa_status_t {
    require_open!();
    if Agent::from_handle(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    // SAFETY: the caller's promise.
    unsafe { put(result, false) }
}

pub unsafe extern "C" fn hsa_agent_extension_supported(
    extension: u16,
    agent: hsa_agent_t,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    let _ = (extension, version_major, version_minor);
    // SAFETY: the API's promise on `result`.
    unsafe { no_agent_extension(agent, result) }
}

pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    extension: u16,
    agent: hsa_agent_t,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    let _ = (extension, version_major, version_minor);
    // SAFETY: the API's promise on `result`.
    unsafe { no_agent_extension(agent, result) }
}

pub unsafe extern "C" fn hsa_status_string(status: hsa_status_t, status_string: *mut *const c_char) -> hsa_status_t {
    let s: &'static CStr = match status {
        HSA_STATUS_SUCCESS => c"HSA_STATUS_SUCCESS: the call succeeded",
        HSA_STATUS_INFO_BREAK => c"HSA_STATUS_INFO_BREAK: a callback ended the traversal",
        HSA_STATUS_ERROR => c"HSA_STATUS_ERROR: a generic error",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: an argument is invalid",
        HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: bad queue size or type",
        HSA_STATUS_ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: the allocation is invalid",
        HSA_STATUS_ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: the agent is invalid",
        HSA_STATUS_ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: the region is invalid",
        HSA_STATUS_ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: the signal is invalid",
        HSA_STATUS_ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: the queue is invalid",
        HSA_STATUS_ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: out of resources",
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: a packet is malformed",
        HSA_STATUS_ERROR_RESOURCE_FREE => c"HSA_STATUS_ERROR_RESOURCE_FREE: a resource could not be freed",
        HSA_STATUS_ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: hsa_init has not been called",
        HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: too many hsa_init calls",
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: arguments do not match",
        HSA_STATUS_ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: the index is invalid",
        HSA_STATUS_ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: the ISA is invalid",
        HSA_STATUS_ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: the ISA name is invalid",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: the code object is invalid",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: the executable is invalid",
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: the executable is frozen",
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: no symbol of that name",
        HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED",
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED => c"HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
        HSA_STATUS_ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: a kernel raised an exception",
        HSA_STATUS_ERROR_INVALID_CODE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
        HSA_STATUS_ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: the memory pool is invalid",
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION",
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION",
        HSA_STATUS_ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: a kernel accessed unmapped memory",
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    // SAFETY: the API's promise on `status_string`.
    unsafe { put(status_string, s.as_ptr()) }
}

pub unsafe extern "C" fn hsa_iterate_agents(
    callback: Option<unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: the program's callback, called as the API says.
    out::each(Agent::ALL, |a| unsafe { cb(hsa_agent_t { handle: a.handle() }, data) })
}

pub unsafe extern "C" fn hsa_agent_get_info(
    agent: hsa_agent_t,
    attribute: hsa_agent_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, agents::agent_info(a, state::target(), attribute)) }
}

pub unsafe extern "C" fn hsa_agent_iterate_isas(
    agent: hsa_agent_t,
    callback: Option<unsafe extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    if a == Agent::Gpu {
        // SAFETY: the program's callback.
        return unsafe { cb(hsa_isa_t { handle: agents::isa_handle(state::target()) }, data) };
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, isa: *mut hsa_isa_t) -> hsa_status_t {
    require_open!();
    if name.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: a NUL-terminated string, the API's promise.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    match agents::isa_from_name(&name) {
        // SAFETY: the API's promise on `isa`.
        Some(t) => unsafe { put(isa, hsa_isa_t { handle: agents::isa_handle(t) }) },
        None => HSA_STATUS_ERROR_INVALID_ISA_NAME,
    }
}

pub unsafe extern "C" fn hsa_isa_get_info_alt(
    isa: hsa_isa_t,
    attribute: hsa_isa_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(t) = agents::isa_from_handle(isa.handle) else { return HSA_STATUS_ERROR_INVALID_ISA };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, agents::isa_info(t, attribute)) }
}

pub unsafe extern "C" fn hsa_isa_get_info(
    isa: hsa_isa_t,
    attribute: hsa_isa_info_t,
    index: u32,
    value: *mut c_void,
) -> hsa_status_t {
    if index != 0 {
        return HSA_STATUS_ERROR_INVALID_INDEX;
    }
    // SAFETY: forwarded as received.
    unsafe { hsa_isa_get_info_alt(isa, attribute, value) }
}

pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: hsa_agent_t,
    callback: Option<unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: the program's callback.
    out::each(agents::regions(a), |p| unsafe { cb(hsa_region_t { handle: p.handle() }, data) })
}

pub unsafe extern "C" fn hsa_region_get_info(
    region: hsa_region_t,
    attribute: hsa_region_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(p) = Pool::from_handle(region.handle) else { return HSA_STATUS_ERROR_INVALID_REGION };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, agents::region_info(p, attribute)) }
}

pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: hsa_agent_t,
    callback: Option<unsafe extern "C" fn(hsa_amd_memory_pool_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: the program's callback.
    out::each(agents::pools(a), |p| unsafe { cb(hsa_amd_memory_pool_t { handle: p.handle() }, data) })
}

pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    memory_pool: hsa_amd_memory_pool_t,
    attribute: hsa_amd_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(p) = Pool::from_handle(memory_pool.handle) else { return HSA_STATUS_ERROR_INVALID_MEMORY_POOL };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, agents::pool_info(p, attribute)) }
}

pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: hsa_agent_t,
    memory_pool: hsa_amd_memory_pool_t,
    attribute: hsa_amd_agent_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    let Some(p) = Pool::from_handle(memory_pool.handle) else { return HSA_STATUS_ERROR_INVALID_MEMORY_POOL };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, agents::agent_pool_info(a, p, attribute)) }
}

pub unsafe extern "C" fn hsa_amd_register_system_event_handler(
    callback: hsa_amd_system_event_callback_t,
    _data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    // The emulated GPU raises no system events (its faults reach the
    // queue's error callback), so the handler is never called.
    if callback.is_none() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    HSA_STATUS_SUCCESS
}
