//! The flat C interface of hardware counters (`--counters hardware`): what
//! the CUPTI library (`shim/xfpx_cupti.cpp`, declared in
//! `shim/xfpx_nvbit.h`) asks the core and hands it. Like [`crate::ffi`],
//! every entry catches panics and reports failures as return values or
//! notes; the decisions are [`xfpx_nvidia::runtime::ToolCore`]'s.

use crate::ffi::{str_arg, with_core};
#[cfg(test)]
use std::ffi::CStr;
use std::ffi::{c_char, c_int};
use std::sync::OnceLock;
use xfpx_nvidia::runtime::ToolCore;

/// 1 when the run reads hardware counters (the counters tool with
/// `--counters hardware`, and the counters still available).
#[no_mangle]
pub extern "C" fn xfpx_hw_counting() -> c_int {
    with_core(0, |c| c_int::from(c.hardware_counting()))
}

/// The metric the library reads `index`-th (a static string), null past
/// the last: the values of [`xfpx_hw_result`] come in this order.
#[no_mangle]
pub extern "C" fn xfpx_hw_metric(index: u32) -> *const c_char {
    static NAMES: OnceLock<Vec<std::ffi::CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        (0..).map_while(ToolCore::hardware_metric).filter_map(|m| std::ffi::CString::new(m).ok()).collect()
    });
    names.get(index as usize).map_or(std::ptr::null(), |n| n.as_ptr())
}

/// The metric values of launch `serial` (`n` of them, in
/// [`xfpx_hw_metric`] order), read after it ran.
///
/// # Safety
/// `values` is null or points to `n` readable doubles.
#[no_mangle]
pub unsafe extern "C" fn xfpx_hw_result(serial: u64, values: *const f64, n: u64) {
    // SAFETY: the caller guarantees n readable values.
    let v: &[f64] = if values.is_null() { &[] } else { unsafe { std::slice::from_raw_parts(values, n as usize) } };
    with_core((), |c| c.on_hardware_counters(serial, v));
}

/// Launch `serial`'s values will not come, for `why` (one line).
///
/// # Safety
/// `why` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_hw_lost(serial: u64, why: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let why = unsafe { str_arg(why) };
    with_core((), |c| c.hardware_lost(serial, why));
}

/// The library cannot read hardware counters, for `why` (one line):
/// nothing more is counted.
///
/// # Safety
/// `why` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_hw_unavailable(why: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let why = unsafe { str_arg(why) };
    with_core((), |c| c.hardware_unavailable(why));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_declares_the_hardware_entries_and_the_metrics_end() {
        let header = include_str!("../shim/xfpx_nvbit.h");
        for f in ["xfpx_hw_counting", "xfpx_hw_metric", "xfpx_hw_result", "xfpx_hw_lost", "xfpx_hw_unavailable"] {
            assert!(header.contains(&format!(" {f}(")) || header.contains(&format!("*{f}(")), "{f} missing");
        }
        let names: Vec<String> = (0u32..)
            .map(|i| xfpx_hw_metric(i))
            .take_while(|p| !p.is_null())
            // SAFETY: non-null pointers from xfpx_hw_metric are static C strings.
            .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, xfpx_nvidia::hw_counts::METRICS);
    }
}
