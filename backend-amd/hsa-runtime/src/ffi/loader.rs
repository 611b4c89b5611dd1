//! The AMD loader extension (`hsa_ven_amd_loader.h`, version 1.03): what
//! tools use to map device addresses (kernel objects) back to executables
//! and loaded code objects, and to read the code objects loaded. Offered
//! through `hsa_system_get_(major_)extension_table` and, as AMD's runtime
//! does, as exported symbols. Safety of each function: the extension's
//! contract (pointers valid as its header says).

#![allow(clippy::missing_safety_doc)]

use crate::agents::Agent;
use crate::code;
use crate::ffi::generated::*;
use crate::ffi::out::{self, put, require_open};
use crate::ffi::types::hsa_ven_amd_loader_segment_descriptor_t;
use std::ffi::c_void;

/// The extension's minor version offered (1.03).
pub const MINOR_VERSION: u16 = 3;

type LoadedCodeObjectCallback =
    Option<unsafe extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> hsa_status_t>;

/// `hsa_ven_amd_loader_1_03_pfn_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LoaderTable {
    pub query_host_address: unsafe extern "C" fn(*const c_void, *mut *const c_void) -> hsa_status_t,
    pub query_segment_descriptors:
        unsafe extern "C" fn(*mut hsa_ven_amd_loader_segment_descriptor_t, *mut usize) -> hsa_status_t,
    pub query_executable: unsafe extern "C" fn(*const c_void, *mut hsa_executable_t) -> hsa_status_t,
    pub executable_iterate_loaded_code_objects:
        unsafe extern "C" fn(hsa_executable_t, LoadedCodeObjectCallback, *mut c_void) -> hsa_status_t,
    pub loaded_code_object_get_info: unsafe extern "C" fn(
        hsa_loaded_code_object_t,
        hsa_ven_amd_loader_loaded_code_object_info_t,
        *mut c_void,
    ) -> hsa_status_t,
    pub code_object_reader_create_from_file_with_offset_size:
        unsafe extern "C" fn(hsa_file_t, usize, usize, *mut hsa_code_object_reader_t) -> hsa_status_t,
    pub iterate_executables: unsafe extern "C" fn(
        Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>,
        *mut c_void,
    ) -> hsa_status_t,
}

const TABLE: LoaderTable = LoaderTable {
    query_host_address: hsa_ven_amd_loader_query_host_address,
    query_segment_descriptors: hsa_ven_amd_loader_query_segment_descriptors,
    query_executable: hsa_ven_amd_loader_query_executable,
    executable_iterate_loaded_code_objects: hsa_ven_amd_loader_executable_iterate_loaded_code_objects,
    loaded_code_object_get_info: hsa_ven_amd_loader_loaded_code_object_get_info,
    code_object_reader_create_from_file_with_offset_size:
        hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size,
    iterate_executables: hsa_ven_amd_loader_iterate_executables,
};

/// Bytes of the table of minor version `minor` (1.00: 3 entries, 1.01: 5,
/// 1.02: 6, 1.03: 7).
pub fn table_size(minor: u16) -> usize {
    let entries = match minor {
        0 => 3,
        1 => 5,
        2 => 6,
        _ => 7,
    };
    entries * std::mem::size_of::<usize>()
}

/// Writes the first `len` bytes of the table to `table`.
///
/// # Safety
/// `table` is null or valid for `len` bytes.
pub unsafe fn fill_table(table: *mut c_void, len: usize) -> hsa_status_t {
    if table.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let n = len.min(std::mem::size_of::<LoaderTable>());
    // SAFETY: the caller's promise; `TABLE` is a plain struct of pointers.
    unsafe { std::ptr::copy_nonoverlapping((&TABLE as *const LoaderTable).cast::<u8>(), table.cast::<u8>(), n) };
    HSA_STATUS_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> hsa_status_t {
    require_open!();
    if device_address.is_null() || host_address.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // Loaded code lives in host memory: the same address.
    match code::loaded_object_at(device_address as u64) {
        // SAFETY: checked non-null.
        Some(_) => unsafe { put(host_address, device_address) },
        None => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

fn segment(o: &code::LoadedObject) -> hsa_ven_amd_loader_segment_descriptor_t {
    hsa_ven_amd_loader_segment_descriptor_t {
        agent: hsa_agent_t { handle: o.agent.handle() },
        executable: hsa_executable_t { handle: o.executable },
        code_object_storage_type: HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
        code_object_storage_base: o.storage.as_ptr().cast(),
        code_object_storage_size: o.storage.len(),
        code_object_storage_offset: 0,
        segment_base: o.image_base as *const c_void,
        segment_size: o.image_len,
    }
}

fn all_loaded() -> Vec<std::sync::Arc<code::LoadedObject>> {
    code::executables().into_iter().filter_map(code::loaded_objects).flatten().collect()
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_segment_descriptors(
    segment_descriptors: *mut hsa_ven_amd_loader_segment_descriptor_t,
    num_segment_descriptors: *mut usize,
) -> hsa_status_t {
    require_open!();
    if num_segment_descriptors.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let all: Vec<_> = all_loaded().iter().map(|o| segment(o)).collect();
    if segment_descriptors.is_null() {
        // SAFETY: checked non-null.
        return unsafe { put(num_segment_descriptors, all.len()) };
    }
    // SAFETY: the API's promise: room for `*num_segment_descriptors`.
    let room = unsafe { num_segment_descriptors.read_unaligned() };
    if room < all.len() {
        return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
    }
    // SAFETY: room checked above.
    unsafe {
        std::ptr::copy_nonoverlapping(all.as_ptr(), segment_descriptors, all.len());
        num_segment_descriptors.write_unaligned(all.len());
    }
    HSA_STATUS_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_executable(
    device_address: *const c_void,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    require_open!();
    if executable.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    match code::loaded_object_at(device_address as u64) {
        // SAFETY: checked non-null.
        Some(o) => unsafe { put(executable, hsa_executable_t { handle: o.executable }) },
        None => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
    executable: hsa_executable_t,
    callback: LoadedCodeObjectCallback,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    let Some(objects) = code::loaded_objects(executable.handle) else { return HSA_STATUS_ERROR_INVALID_EXECUTABLE };
    // SAFETY: the tool's callback.
    out::each(objects, |o| unsafe { cb(executable, hsa_loaded_code_object_t { handle: o.handle }, data) })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_loaded_code_object_get_info(
    loaded_code_object: hsa_loaded_code_object_t,
    attribute: hsa_ven_amd_loader_loaded_code_object_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    use crate::agents::Info;
    require_open!();
    let Some(o) = code::loaded_object(loaded_code_object.handle) else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    let uri =
        format!("memory://{}#offset={:#x}&size={}", std::process::id(), o.storage.as_ptr() as u64, o.storage.len());
    let v = match attribute {
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE => Some(Info::U64(o.executable)),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND => {
            Some(Info::U32(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT))
        }
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT => Some(Info::U64(Agent::Gpu.handle())),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE => {
            Some(Info::U32(HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY))
        }
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE => {
            Some(Info::U64(o.storage.as_ptr() as u64))
        }
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE => {
            Some(Info::U64(o.storage.len() as u64))
        }
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA => Some(Info::U64(o.image_base)),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE => Some(Info::U64(o.image_base)),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE => Some(Info::U64(o.image_len as u64)),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH => Some(Info::U32(uri.len() as u32)),
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI => Some(Info::Text(uri.clone(), uri.len())),
        _ => None,
    };
    // SAFETY: the API's promise on `value`.
    unsafe { out::info(value, v) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
    file: hsa_file_t,
    offset: usize,
    size: usize,
    code_object_reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    require_open!();
    if code_object_reader.is_null() || file < 0 || size == 0 || size > 1 << 30 {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: reading into our buffer from the program's descriptor.
    let n = unsafe { libc::pread(file, bytes.as_mut_ptr().cast(), size, offset as libc::off_t) };
    if n != size as isize {
        return HSA_STATUS_ERROR_INVALID_FILE;
    }
    // SAFETY: checked non-null.
    unsafe { put(code_object_reader, hsa_code_object_reader_t { handle: code::create_reader(bytes) }) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_ven_amd_loader_iterate_executables(
    callback: Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    require_open!();
    let Some(cb) = callback else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    // SAFETY: the tool's callback.
    out::each(code::executables(), |e| unsafe { cb(hsa_executable_t { handle: e }, data) })
}
