//! Launch screening through the C interface, as the shim drives it
//! without a GPU: the run asks for screening, the shim reports the
//! program's allocations, hands each launch's parameter bytes to
//! `xfpx_launch` and gets the scans to enqueue; a record of the screen's
//! ring becomes a screened finding in the report written at exit.

mod support;

use std::ffi::CString;
use xfpx_common::report::Report;
use xfpx_nvbit::ffi::*;
use xfpx_nvidia::screen::device::{ScreenPlan, ScreenRecord};

#[test]
fn screened_launch_from_allocation_to_report() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-screen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let report = dir.join("report.json");
    let cfg = xfpx_common::config::RunSettings {
        sample_doubling: true,
        screen_launches: true,
        report_path: report.clone(),
        ..Default::default()
    };
    support::init(&dir, cfg);
    assert_eq!(xfpx_screening(), 1);
    // allocations come before the tool's device memory (the first launch)
    xfpx_device_alloc(0x7f00_0000_0000, 4096);
    xfpx_device_alloc(0x7f00_0001_0000, 4096);
    xfpx_device_free(0x7f00_0001_0000);
    xfpx_screen_ready(1);

    let mangled = CString::new("_Z5scalePfS_f").expect("name");
    let demangled = CString::new("scale(float*, float*, float)").expect("name");
    let texts: Vec<CString> = ["FMUL R4, R2, R6 ;", "EXIT ;"].iter().map(|t| CString::new(*t).expect("text")).collect();
    let ptrs: Vec<*const std::ffi::c_char> = texts.iter().map(|t| t.as_ptr()).collect();
    let offsets = [0u32, 0x10];
    let mut calls: *mut XfpxCall = std::ptr::null_mut();
    // SAFETY: two valid entries behind each pointer; calls is valid.
    let n = unsafe {
        xfpx_instrument(mangled.as_ptr(), demangled.as_ptr(), 2, ptrs.as_ptr(), offsets.as_ptr(), 0x1000, &mut calls)
    };
    assert!(n > 0);
    // SAFETY: exactly what xfpx_instrument returned.
    unsafe { xfpx_free_calls(calls, n as u64) };

    // scale(float* out, float* freed, float k): out is known, the other was freed
    let mut params = [0u8; 20];
    params[0..8].copy_from_slice(&0x7f00_0000_0010u64.to_le_bytes());
    params[8..16].copy_from_slice(&0x7f00_0001_0000u64.to_le_bytes());
    params[16..20].copy_from_slice(&2.0f32.to_le_bytes());
    let layout = [0u64, 8, 8, 8, 16, 4];
    let mut plans = Vec::new();
    for _ in 0..5 {
        let mut serial = u64::MAX;
        let mut plan = ScreenPlan::default();
        // SAFETY: 20 parameter bytes, 3 layout pairs, valid out pointers.
        let instrument = unsafe {
            xfpx_launch(
                mangled.as_ptr(),
                demangled.as_ptr(),
                LAUNCH_STREAM,
                params.as_ptr(),
                params.len() as u64,
                layout.as_ptr(),
                3,
                &mut serial,
                &mut plan,
            )
        };
        plans.push((instrument, serial, plan));
    }
    // launch 0 instrumented (its scan only sets counts), launches 1-4 screened
    for (i, (instrument, serial, plan)) in plans.iter().enumerate() {
        assert_eq!((*instrument == 1, *serial), (i == 0, i as u64));
        let bases: Vec<u64> = plan.after.buffers().iter().map(|b| b.base).collect();
        assert_eq!(bases, vec![0x7f00_0000_0000], "launch {i}");
        assert_eq!(plan.after.report, u32::from(i > 0));
        assert_eq!(plan.before.count, 0, "launch 0's scan counted the buffer");
    }
    let rec = ScreenRecord {
        seq: 1,
        serial: 4,
        previous: 3,
        param: 0,
        format: xfpx_common::class::FpFormat::F32,
        nan_before: 0,
        nan_after: 0,
        inf_before: 1,
        inf_after: 2,
        first: Some(3),
        bytes: 4096,
    };
    let bytes = rec.encode();
    // SAFETY: 64 readable bytes.
    unsafe { xfpx_screen_records(bytes.as_ptr(), bytes.len() as u64) };
    xfpx_finish();
    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report written")).expect("valid report");
    let k = r.kernels.iter().find(|k| k.name.starts_with("scale")).expect("scale");
    assert_eq!((k.instrumented_launches, k.screened_launches), (1, 4));
    assert_eq!(k.screened.len(), 1);
    let f = &k.screened[0];
    assert_eq!((f.kind, f.first_launch, f.before, f.after), (xfpx_common::ExceptionKind::Inf, 4, 1, 2));
    assert_eq!(f.declared.as_deref(), Some("float*"));
    assert!(r.run.notes.iter().any(|n| n.contains("launches not instrumented were screened")));
    let _ = std::fs::remove_dir_all(&dir);
}
