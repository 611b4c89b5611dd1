//! The C interface of the counters tool as the shim drives it, without a
//! GPU: a kernel and the function it calls instrumented with count calls
//! whose table is the per-launch value, a launch's table shaped from its
//! grid, the bytes the device would leave in it (`XfpxCountTable` of
//! xfpx_layout.h), and the report's counters at exit. (Its own test
//! binary: the tool core is one per process.)

mod support;

use std::ffi::{c_char, CStr, CString};
use xfpx_common::report::Report;
use xfpx_nvbit::ffi::*;

/// Instrument one function through the C interface; its calls.
fn instrument(mangled: &CStr, demangled: &CStr, sass: &[&str]) -> Vec<XfpxCall> {
    let texts: Vec<CString> = sass.iter().map(|t| CString::new(*t).expect("text")).collect();
    let ptrs: Vec<*const c_char> = texts.iter().map(|t| t.as_ptr()).collect();
    let offsets: Vec<u32> = (0..sass.len() as u32).map(|i| 0x10 * i).collect();
    let mut calls: *mut XfpxCall = std::ptr::null_mut();
    // SAFETY: sass.len() valid entries behind each pointer; calls is valid.
    let n = unsafe {
        xfpx_instrument(
            mangled.as_ptr(),
            demangled.as_ptr(),
            sass.len() as u32,
            ptrs.as_ptr(),
            offsets.as_ptr(),
            0,
            &mut calls,
        )
    };
    assert!(n > 0, "instrumented");
    // SAFETY: n calls were returned.
    let list = unsafe { std::slice::from_raw_parts(calls, n as usize) }.to_vec();
    // SAFETY: exactly what xfpx_instrument returned.
    unsafe { xfpx_free_calls(calls, n as u64) };
    list
}

#[test]
fn a_counted_launch_from_instrumentation_to_report() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let report = dir.join("report.json");
    let cfg = xfpx_common::config::RunSettings {
        report_path: report.clone(),
        tool: xfpx_common::tool::ToolKind::Counters,
        count_window_blocks: 8,
        ..Default::default()
    };
    support::init(&dir, cfg);
    assert_eq!(xfpx_counting(), 1);

    let kernel = CString::new("_Z6reducePf").expect("name");
    let kernel_d = CString::new("reduce(float*)").expect("name");
    let callee = CString::new("_Z3addff").expect("name");
    // SAFETY: a valid NUL-terminated string.
    unsafe { xfpx_instrumenting_for(kernel.as_ptr()) };
    // the shim instruments the called function first, then the kernel
    let f = instrument(&callee, &callee, &["FADD R1, R2, R3 ;", "RET.REL.NODEC R20 0x0 ;"]);
    let k = instrument(&kernel, &kernel_d, &["S2R R0, SR_TID.X ;", "CALL.REL.NOINC 0x40 ;", "EXIT ;"]);
    let name = |c: &XfpxCall| {
        // SAFETY: a static string.
        unsafe { CStr::from_ptr(xfpx_function_name(c.function)) }.to_str().expect("utf-8").to_string()
    };
    for c in f.iter().chain(&k) {
        assert_eq!(name(c), "xfpx_count_region");
        let kinds: Vec<u32> = c.args[..c.nargs as usize].iter().map(|a| a.kind).collect();
        assert_eq!(kinds, [ARG_PREDS, ARG_CONST64, ARG_LAUNCH64]);
    }
    // the callee's slot 0, the kernel's after it
    assert_eq!((f[0].args[1].b, k[0].args[1].b, k[1].args[1].b), (0, 1, 2));

    let mut serial = u64::MAX;
    // SAFETY: valid strings and pointer.
    let launched = unsafe {
        xfpx_launch(
            kernel.as_ptr(),
            kernel_d.as_ptr(),
            LAUNCH_PARAMS_UNKNOWN,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            &mut serial,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(launched, 1);
    let mut header = [0u8; 32];
    let mut bytes = 0u64;
    // SAFETY: 32 writable bytes and a valid pointer.
    assert_eq!(unsafe { xfpx_count_table(serial, 20, header.as_mut_ptr(), &mut bytes) }, 1);
    // 20 blocks in windows of 8: 3 windows of 3 slots (the callee's
    // region, the kernel's two: the call ends a block), in 16 copies (one
    // per SM a warp may count on, up to 16) 128 slots (4 KiB) apart
    let word = |i: usize| u32::from_le_bytes(header[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    assert_eq!((word(0), word(1), word(2), word(3), word(4)), (3, 3, 8, 16, 128));
    assert_eq!(bytes, 32 + 16 * 128 * 32);
    // SAFETY: as above; the table was handed out already.
    assert_eq!(unsafe { xfpx_count_table(serial, 20, header.as_mut_ptr(), &mut bytes) }, 0);
    // the device's writes: in window 2, 3 warps of 32 lanes ran the
    // kernel and called the function (XfpxCountSlot: warps, lanes, ...),
    // two of them on SMs counting into copy 0, one into copy 7
    let mut table = vec![0u8; bytes as usize];
    table[..32].copy_from_slice(&header);
    for (copy, warps) in [(0usize, 2u64), (7, 1)] {
        for slot in 0..3 {
            let at = 32 + (copy * 128 + 2 * 3 + slot) * 32;
            table[at..at + 8].copy_from_slice(&warps.to_le_bytes());
            table[at + 8..at + 16].copy_from_slice(&(32 * warps).to_le_bytes());
        }
    }
    // SAFETY: the whole buffer is readable.
    unsafe { xfpx_count_result(serial, table.as_ptr(), table.len() as u64) };
    xfpx_finish();

    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report written")).expect("valid report");
    assert_eq!(r.run.mode, "counters");
    let s = r.counters.expect("counters");
    assert_eq!((s.window_blocks, s.warp_size), (8, 32));
    let k = &s.kernels[0];
    assert_eq!((k.kernel.as_str(), k.launches.len()), ("reduce(float*)", 1));
    let w = &k.launches[0].windows;
    assert_eq!(w.len(), 3);
    assert_eq!((w[2].warp_instructions, w[2].thread_instructions), (3 * 5, 96 * 5));
    assert_eq!(w[0].warp_instructions + w[1].warp_instructions, 0);
    let _ = std::fs::remove_dir_all(dir);
}
