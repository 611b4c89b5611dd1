//! Writing results through the pointers the program passed: attribute
//! values of `*_get_info` calls, handles and indices (and handing handles
//! to the program's iteration callbacks). Every function checks
//! for null; callers pass pointers the API promises are valid for the
//! attribute's type.

use super::generated::*;
use crate::agents::Info;
use std::ffi::c_void;

/// Writes `v` to `out` (not null).
///
/// # Safety
/// `out` is null or valid for a write of a `T` (any alignment).
pub unsafe fn put<T>(out: *mut T, v: T) -> hsa_status_t {
    if out.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's promise.
    unsafe { out.write_unaligned(v) };
    HSA_STATUS_SUCCESS
}

/// Writes an attribute value; unknown attributes (None) are an invalid argument.
///
/// # Safety
/// `value` is null or valid for the attribute's type (a `Text` of n bytes
/// needs n bytes).
pub unsafe fn info(value: *mut c_void, info: Option<Info>) -> hsa_status_t {
    let Some(info) = info else { return HSA_STATUS_ERROR_INVALID_ARGUMENT };
    if value.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let bytes: Vec<u8> = match info {
        Info::U16(v) => v.to_le_bytes().to_vec(),
        Info::U32(v) => v.to_le_bytes().to_vec(),
        Info::U64(v) => v.to_le_bytes().to_vec(),
        Info::Bool(v) => vec![u8::from(v)],
        Info::Text(s, n) => {
            let mut b = vec![0u8; n];
            let len = s.len().min(n);
            b[..len].copy_from_slice(&s.as_bytes()[..len]);
            b
        }
        Info::Bytes(b) => b,
    };
    // SAFETY: the caller's promise that `value` holds the attribute's type.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
    HSA_STATUS_SUCCESS
}

/// `HSA_STATUS_ERROR_NOT_INITIALIZED` unless the runtime is open.
pub fn open() -> Result<(), hsa_status_t> {
    if crate::state::is_open() {
        Ok(())
    } else {
        Err(HSA_STATUS_ERROR_NOT_INITIALIZED)
    }
}

/// Hands each item to `call` (the program's callback) in turn; the first
/// status other than success ends the walk and is returned.
pub fn each<T>(items: impl IntoIterator<Item = T>, mut call: impl FnMut(T) -> hsa_status_t) -> hsa_status_t {
    for item in items {
        let s = call(item);
        if s != HSA_STATUS_SUCCESS {
            return s;
        }
    }
    HSA_STATUS_SUCCESS
}

/// Returns `HSA_STATUS_ERROR_NOT_INITIALIZED` from the calling entry point
/// unless the runtime is open (`open`).
macro_rules! require_open {
    () => {
        if let Err(e) = $crate::ffi::out::open() {
            return e;
        }
    };
}
pub(crate) use require_open;

/// Success where `ok`, else `failure`.
pub fn success_or(ok: bool, failure: hsa_status_t) -> hsa_status_t {
    if ok {
        HSA_STATUS_SUCCESS
    } else {
        failure
    }
}

/// The status of a result.
pub fn status(r: Result<(), hsa_status_t>) -> hsa_status_t {
    r.err().unwrap_or(HSA_STATUS_SUCCESS)
}
