//! The C interface end to end, as the shim drives it, without a GPU:
//! configuration, instrumentation of one function, a launch, device
//! records and the final site table, and the report written at exit.

mod support;

use std::ffi::{CStr, CString};
use xfpx_common::report::Report;
use xfpx_nvbit::ffi::*;
use xfpx_nvidia::record::{DeviceRecord, SITE_ENTRY_SIZE};

#[test]
fn instrument_launch_record_finish() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let report = dir.join("report.json");
    let cfg = xfpx_common::config::RunSettings {
        mode: xfpx_common::config::Mode::Detect,
        report_path: report.clone(),
        ..Default::default()
    };
    support::init(&dir, cfg);
    assert_eq!(xfpx_lines_enabled(), 0, "source lines off in the configuration");

    let mangled = CString::new("_Z1kPd").expect("name");
    let demangled = CString::new("k(double*)").expect("name");
    let device = CString::new("NVIDIA H100 80GB HBM3").expect("name");
    let target = CString::new("sm_90").expect("name");
    // SAFETY: valid NUL-terminated strings.
    unsafe { xfpx_device(device.as_ptr(), target.as_ptr()) };
    // SAFETY: as above.
    assert_eq!(unsafe { xfpx_wants_kernel(mangled.as_ptr(), demangled.as_ptr()) }, 1);

    let texts: Vec<CString> = ["DFMA R4, R2, R6, R4 ;", "@P0 MUFU.RCP64H R9, R3 ;", "EXIT ;"]
        .iter()
        .map(|t| CString::new(*t).expect("text"))
        .collect();
    let ptrs: Vec<*const std::ffi::c_char> = texts.iter().map(|t| t.as_ptr()).collect();
    let offsets = [0u32, 0x10, 0x20];
    let mut calls: *mut XfpxCall = std::ptr::null_mut();
    // SAFETY: three valid entries behind each pointer; calls is valid.
    let n = unsafe {
        xfpx_instrument(
            mangled.as_ptr(),
            demangled.as_ptr(),
            3,
            ptrs.as_ptr(),
            offsets.as_ptr(),
            0xabc0_0000,
            &mut calls,
        )
    };
    assert_eq!(n, 2);
    // SAFETY: n calls were returned.
    let list = unsafe { std::slice::from_raw_parts(calls, n as usize) }.to_vec();
    // SAFETY: exactly what xfpx_instrument returned.
    unsafe { xfpx_free_calls(calls, n as u64) };
    // SAFETY: a static string.
    let name = unsafe { CStr::from_ptr(xfpx_function_name(list[0].function)) };
    assert_eq!(name.to_str(), Ok("xfpx_check_value"));
    let dfma = &list[0];
    assert_eq!((dfma.instr, dfma.after, dfma.nargs), (0, 1, 7));
    let kinds: Vec<u32> = dfma.args[..7].iter().map(|a| a.kind).collect();
    assert_eq!(kinds, vec![ARG_GUARD_PRED, ARG_REG, ARG_REG, ARG_CONST32, ARG_CONST32, ARG_CONST64, ARG_LAUNCH64]);
    assert_eq!((dfma.args[1].a, dfma.args[2].a, dfma.args[5].b), (4, 5, 0xabc0_0000));
    let rcp = &list[1];
    assert_eq!((rcp.args[1].kind, rcp.args[1].a, rcp.args[2].kind, rcp.args[2].a), (ARG_CONST32, 0, ARG_REG, 9));
    assert_eq!(xfpx_site_count(), 2);

    let mut serial = u64::MAX;
    // SAFETY: valid strings and pointer.
    let launched = unsafe {
        xfpx_launch(
            mangled.as_ptr(),
            demangled.as_ptr(),
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
    assert_eq!(serial, 0);

    let site = rcp.args[3].a;
    let rec = DeviceRecord {
        site: xfpx_common::site::SiteId(site),
        launch: 0,
        kinds: xfpx_common::fp::ExceptionKinds(0b1000),
        format: xfpx_common::class::FpFormat::F64,
        seq: 1,
    };
    let bytes = rec.encode();
    // SAFETY: 16 readable bytes.
    unsafe { xfpx_records(bytes.as_ptr(), bytes.len() as u64) };
    let mut table = [0u8; 2 * SITE_ENTRY_SIZE];
    let e = &mut table[site as usize * SITE_ENTRY_SIZE..];
    e[0..4].copy_from_slice(&(0b1000u32 << 20).to_le_bytes()); // f64 (code 5): div0
    e[32..40].copy_from_slice(&3u64.to_le_bytes());
    // SAFETY: the whole buffer is readable.
    unsafe { xfpx_table_chunk(0, table.as_ptr(), table.len() as u64) };
    xfpx_finish();

    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report written")).expect("valid report");
    let k = &r.kernels[0];
    assert_eq!((k.name.as_str(), k.launches, k.probes), ("k(double*)", 1, 2));
    assert_eq!(k.records.len(), 1);
    assert_eq!(k.records[0].occurrences, 3);
    assert_eq!(k.records[0].site.instr, "@P0 MUFU.RCP64H R9, R3");
    assert_eq!(r.run.device, "NVIDIA H100 80GB HBM3");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_configuration_is_refused_in_one_line() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ not json").expect("write");
    let e = xfpx_common::config::RunConfig::load(&bad).expect_err("not json").to_string();
    assert!(e.contains("bad.json") && !e.contains('\n'), "{e}");
    std::fs::write(&bad, r#"{"mode":"detect","kinds":15,"kernels":[],"exclude":[],"sample_every":0,"instr_range":null,"max_records":null,"report_path":"r.json","events_socket":null,"dump_dir":null}"#).expect("write");
    let e = xfpx_common::config::RunConfig::load(&bad).expect_err("invalid").to_string();
    assert!(e.contains("sample_every") && !e.contains('\n'), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}
