//! Entry points of code objects, executables and symbols: readers from
//! files and memory, the HSA 1.1 executable calls, the deprecated code
//! object calls (`hsa_code_object_deserialize`, `hsa_executable_create`,
//! `hsa_executable_load_code_object`, `hsa_executable_get_symbol`) and
//! symbol attributes.

use crate::agents::{Agent, Info};
use crate::code::{self, Failure, LoadedObject, SymbolKind};
use crate::ffi::generated::*;
use crate::ffi::out::{self, put, require_open};
use crate::state;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// The status of a failure, with its line on stderr where it has one.
fn status(f: Failure) -> hsa_status_t {
    if let Some(why) = f.why {
        eprintln!("warning: xfpx emulated HSA runtime: code object not loaded: {why}");
    }
    f.status
}

/// Largest code object read from a file or memory (1 GiB).
const MAX_CODE_OBJECT: usize = 1 << 30;

pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(
    file: hsa_file_t,
    code_object_reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    require_open!();
    if code_object_reader.is_null() || file < 0 {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // The whole file, from its start, through a descriptor the program keeps.
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        // SAFETY: reading into our buffer from the program's descriptor.
        let n = unsafe { libc::pread(file, chunk.as_mut_ptr().cast(), chunk.len(), bytes.len() as libc::off_t) };
        if n < 0 {
            return HSA_STATUS_ERROR_INVALID_FILE;
        }
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n as usize]);
        if bytes.len() > MAX_CODE_OBJECT {
            return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
        }
    }
    if bytes.is_empty() {
        return HSA_STATUS_ERROR_INVALID_FILE;
    }
    // SAFETY: checked non-null.
    unsafe { put(code_object_reader, hsa_code_object_reader_t { handle: code::create_reader(bytes) }) }
}

/// A copy of the program's `size` bytes at `bytes`; None where `bytes` is
/// null or `size` is 0 or over `MAX_CODE_OBJECT`.
///
/// # Safety
/// `bytes` is null or valid for reads of `size` bytes.
unsafe fn copy_in(bytes: *const c_void, size: usize) -> Option<Vec<u8>> {
    if bytes.is_null() || size == 0 || size > MAX_CODE_OBJECT {
        return None;
    }
    // SAFETY: the caller's promise.
    Some(unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), size) }.to_vec())
}

pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    code_object_reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    require_open!();
    if code_object_reader.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the program's `size` bytes.
    let Some(bytes) = (unsafe { copy_in(code_object, size) }) else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: checked non-null.
    unsafe { put(code_object_reader, hsa_code_object_reader_t { handle: code::create_reader(bytes) }) }
}

pub unsafe extern "C" fn hsa_code_object_reader_destroy(code_object_reader: hsa_code_object_reader_t) -> hsa_status_t {
    require_open!();
    out::success_or(code::destroy_reader(code_object_reader.handle), HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
}

pub unsafe extern "C" fn hsa_executable_create_alt(
    profile: hsa_profile_t,
    default_float_rounding_mode: hsa_default_float_rounding_mode_t,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    require_open!();
    if executable.is_null() || profile > HSA_PROFILE_FULL {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let h = code::create_executable(profile, default_float_rounding_mode);
    // SAFETY: checked non-null.
    unsafe { put(executable, hsa_executable_t { handle: h }) }
}

pub unsafe extern "C" fn hsa_executable_create(
    profile: hsa_profile_t,
    executable_state: hsa_executable_state_t,
    options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    if executable_state != HSA_EXECUTABLE_STATE_UNFROZEN {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: forwarded as received.
    unsafe { hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, options, executable) }
}

pub unsafe extern "C" fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    require_open!();
    out::success_or(code::destroy_executable(executable.handle), HSA_STATUS_ERROR_INVALID_EXECUTABLE)
}

fn load(exe: u64, agent: hsa_agent_t, bytes: Arc<Vec<u8>>, out: *mut hsa_loaded_code_object_t) -> hsa_status_t {
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    match code::load(exe, a, bytes, state::target()) {
        Ok(h) if !out.is_null() => {
            // SAFETY: checked non-null.
            unsafe { put(out, hsa_loaded_code_object_t { handle: h }) }
        }
        Ok(_) => HSA_STATUS_SUCCESS,
        Err(f) => status(f),
    }
}

pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    code_object_reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    require_open!();
    let Some(bytes) = code::reader(code_object_reader.handle) else {
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    };
    load(executable.handle, agent, bytes, loaded_code_object)
}

pub unsafe extern "C" fn hsa_executable_load_program_code_object(
    executable: hsa_executable_t,
    code_object_reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    require_open!();
    let Some(bytes) = code::reader(code_object_reader.handle) else {
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    };
    // Program code objects hold no agent code: every AMDGPU code object is
    // an agent's, so this is loaded for the GPU agent.
    load(executable.handle, hsa_agent_t { handle: Agent::Gpu.handle() }, bytes, loaded_code_object)
}

pub unsafe extern "C" fn hsa_code_object_deserialize(
    serialized_code_object: *mut c_void,
    serialized_code_object_size: usize,
    _options: *const c_char,
    code_object: *mut hsa_code_object_t,
) -> hsa_status_t {
    require_open!();
    if code_object.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the program's `serialized_code_object_size` bytes.
    let Some(bytes) = (unsafe { copy_in(serialized_code_object, serialized_code_object_size) }) else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    // SAFETY: checked non-null.
    unsafe { put(code_object, hsa_code_object_t { handle: code::create_code_object(bytes) }) }
}

pub unsafe extern "C" fn hsa_code_object_destroy(code_object: hsa_code_object_t) -> hsa_status_t {
    require_open!();
    out::success_or(code::destroy_code_object(code_object.handle), HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
}

pub unsafe extern "C" fn hsa_executable_load_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    code_object: hsa_code_object_t,
    _options: *const c_char,
) -> hsa_status_t {
    require_open!();
    let Some(bytes) = code::code_object(code_object.handle) else { return HSA_STATUS_ERROR_INVALID_CODE_OBJECT };
    load(executable.handle, agent, bytes, std::ptr::null_mut())
}

pub unsafe extern "C" fn hsa_executable_freeze(executable: hsa_executable_t, _options: *const c_char) -> hsa_status_t {
    require_open!();
    match code::freeze(executable.handle) {
        Ok(()) => HSA_STATUS_SUCCESS,
        Err(f) => status(f),
    }
}

pub unsafe extern "C" fn hsa_executable_get_info(
    executable: hsa_executable_t,
    attribute: hsa_executable_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some((profile, frozen, rounding)) = code::executable_state(executable.handle) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    };
    let v = match attribute {
        HSA_EXECUTABLE_INFO_PROFILE => Some(Info::U32(profile)),
        HSA_EXECUTABLE_INFO_STATE => {
            Some(Info::U32(if frozen { HSA_EXECUTABLE_STATE_FROZEN } else { HSA_EXECUTABLE_STATE_UNFROZEN }))
        }
        HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE => Some(Info::U32(rounding)),
        _ => None,
    };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, v) }
}

pub unsafe extern "C" fn hsa_executable_validate(executable: hsa_executable_t, result: *mut u32) -> hsa_status_t {
    require_open!();
    if code::executable_state(executable.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
    // SAFETY: the API's promise on `result`.
    unsafe { put(result, 0) }
}

pub unsafe extern "C" fn hsa_executable_validate_alt(
    executable: hsa_executable_t,
    _options: *const c_char,
    result: *mut u32,
) -> hsa_status_t {
    // SAFETY: forwarded as received.
    unsafe { hsa_executable_validate(executable, result) }
}

/// A NUL-terminated name from the program.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn name(name: *const c_char) -> Option<String> {
    // SAFETY: the caller's promise.
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    executable: hsa_executable_t,
    symbol_name: *const c_char,
    agent: *const hsa_agent_t,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    require_open!();
    // SAFETY: the API's promise on `symbol_name`.
    let Some(n) = (unsafe { name(symbol_name) }) else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    if symbol.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if !agent.is_null() {
        // SAFETY: non-null, the API's promise.
        let a = unsafe { agent.read_unaligned() };
        if Agent::from_handle(a.handle).is_none() {
            return HSA_STATUS_ERROR_INVALID_AGENT;
        }
    }
    match code::symbol_by_name(executable.handle, &n) {
        // SAFETY: checked non-null.
        Ok((o, i)) => unsafe { put(symbol, hsa_executable_symbol_t { handle: o.symbols[i].handle }) },
        Err(f) => f.status,
    }
}

pub unsafe extern "C" fn hsa_executable_get_symbol(
    executable: hsa_executable_t,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: hsa_agent_t,
    _call_convention: i32,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    // SAFETY: forwarded as received (the agent by address, valid for the call).
    unsafe { hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol) }
}

fn symbol_info(o: &LoadedObject, index: usize, attribute: hsa_executable_symbol_info_t) -> Option<Info> {
    let s = &o.symbols[index];
    let common = match attribute {
        HSA_EXECUTABLE_SYMBOL_INFO_TYPE => Some(Info::U32(match s.kind {
            SymbolKind::Kernel { .. } => HSA_SYMBOL_KIND_KERNEL,
            SymbolKind::Variable { .. } => HSA_SYMBOL_KIND_VARIABLE,
        })),
        HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH => Some(Info::U32(s.name.len() as u32)),
        HSA_EXECUTABLE_SYMBOL_INFO_NAME => Some(Info::Text(s.name.clone(), s.name.len())),
        HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH => Some(Info::U32(0)),
        HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME => Some(Info::Bytes(Vec::new())),
        HSA_EXECUTABLE_SYMBOL_INFO_AGENT => Some(Info::U64(o.agent.handle())),
        HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE => Some(Info::U32(HSA_SYMBOL_LINKAGE_PROGRAM)),
        HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION => Some(Info::Bool(true)),
        _ => None,
    };
    if common.is_some() {
        return common;
    }
    match (&s.kind, attribute) {
        (SymbolKind::Kernel { object, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT) => Some(Info::U64(*object)),
        (SymbolKind::Kernel { kernarg_size, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE) => {
            Some(Info::U32(*kernarg_size))
        }
        (SymbolKind::Kernel { kernarg_align, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT) => {
            Some(Info::U32(*kernarg_align))
        }
        (SymbolKind::Kernel { group_size, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE) => {
            Some(Info::U32(*group_size))
        }
        (SymbolKind::Kernel { private_size, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE) => {
            Some(Info::U32(*private_size))
        }
        (SymbolKind::Kernel { dynamic_stack, .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK) => {
            Some(Info::Bool(*dynamic_stack))
        }
        (SymbolKind::Kernel { .. }, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION) => Some(Info::U32(0)),
        (SymbolKind::Variable { address, .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS) => {
            Some(Info::U64(*address))
        }
        (SymbolKind::Variable { size, .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE) => Some(Info::U32(*size as u32)),
        (SymbolKind::Variable { .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION) => {
            Some(Info::U32(HSA_VARIABLE_ALLOCATION_AGENT))
        }
        (SymbolKind::Variable { .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT) => {
            Some(Info::U32(HSA_VARIABLE_SEGMENT_GLOBAL))
        }
        (SymbolKind::Variable { .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT) => Some(Info::U32(8)),
        (SymbolKind::Variable { .. }, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST) => Some(Info::Bool(false)),
        _ => None,
    }
}

pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    executable_symbol: hsa_executable_symbol_t,
    attribute: hsa_executable_symbol_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some((o, i)) = code::symbol(executable_symbol.handle) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
    };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, symbol_info(&o, i, attribute)) }
}

type SymbolCallback =
    Option<unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>;

fn iterate(exe: hsa_executable_t, mut each: impl FnMut(hsa_executable_symbol_t) -> hsa_status_t) -> hsa_status_t {
    let Some(objects) = code::loaded_objects(exe.handle) else { return HSA_STATUS_ERROR_INVALID_EXECUTABLE };
    out::each(objects.iter().flat_map(|o| &o.symbols), |s| each(hsa_executable_symbol_t { handle: s.handle }))
}

pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: the program's callback.
    iterate(executable, |s| unsafe { cb(executable, s, data) })
}

pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    if callback.is_none() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // Every symbol here belongs to an agent's code object.
    let _ = data;
    if code::executable_state(executable.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    }
    HSA_STATUS_SUCCESS
}

pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    callback: Option<
        unsafe extern "C" fn(hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t,
    >,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    let Some(a) = Agent::from_handle(agent.handle) else { return HSA_STATUS_ERROR_INVALID_AGENT };
    if a != Agent::Gpu {
        return out::success_or(
            code::executable_state(executable.handle).is_some(),
            HSA_STATUS_ERROR_INVALID_EXECUTABLE,
        );
    }
    // SAFETY: the program's callback.
    iterate(executable, |s| unsafe { cb(executable, agent, s, data) })
}
