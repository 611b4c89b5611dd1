//! The C interface of hardware counters as the CUPTI library drives it,
//! without a GPU: the configuration, the metric names it asks for, launches
//! (one the filters leave out), each launch's metric values handed back
//! after its range was read, one lost range, and the report's counters at
//! exit. (Its own test binary: the tool core is one per process.)

mod support;

use std::ffi::{CStr, CString};
use xfpx_common::counters::CounterSource;
use xfpx_common::report::Report;
use xfpx_nvbit::ffi::*;
use xfpx_nvbit::hw_ffi::*;

fn launch(mangled: &CStr) -> u64 {
    let mut serial = u64::MAX;
    // SAFETY: a valid name, no parameters, a valid serial pointer.
    let instrument = unsafe {
        xfpx_launch(
            mangled.as_ptr(),
            mangled.as_ptr(),
            LAUNCH_PARAMS_UNKNOWN,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            &mut serial,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(instrument, 0, "nothing is instrumented");
    serial
}

#[test]
fn launches_counted_by_the_hardware_reach_the_report() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-hw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let report = dir.join("report.json");
    let cfg = xfpx_common::config::RunSettings {
        report_path: report.clone(),
        tool: xfpx_common::tool::ToolKind::Counters,
        counter_source: CounterSource::Hardware,
        exclude: vec!["^_Z4skip".into()],
        ..Default::default()
    };
    support::init(&dir, cfg);
    assert_eq!((xfpx_hw_counting(), xfpx_counting()), (1, 0));
    // SAFETY: a static string.
    let first = unsafe { CStr::from_ptr(xfpx_hw_metric(0)) };
    assert_eq!(first.to_str(), Ok("smsp__inst_executed.sum"));
    assert!(xfpx_hw_metric(3).is_null());

    let k = CString::new("_Z6reducePf").expect("name");
    let skip = CString::new("_Z4skipv").expect("name");
    let serials = [launch(&k), launch(&skip), launch(&k), launch(&k)];
    // the ranges in launch order, as the library decodes them
    let values = [[100.0, 3200.0, 3000.0], [7.0, 7.0, 7.0], [100.0, 3136.0, 3100.0]];
    for (s, v) in serials.iter().zip(&values) {
        // SAFETY: three readable values.
        unsafe { xfpx_hw_result(*s, v.as_ptr(), v.len() as u64) };
    }
    let why = CString::new("its range was dropped").expect("text");
    // SAFETY: a valid string.
    unsafe { xfpx_hw_lost(serials[3], why.as_ptr()) };
    xfpx_finish();

    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("valid");
    let s = r.counters.expect("counters");
    assert_eq!((s.source, s.window_blocks), (CounterSource::Hardware, 0));
    assert_eq!(s.kernels.len(), 1);
    let got: Vec<(u64, u64, u64)> = s.kernels[0]
        .launches
        .iter()
        .map(|l| (l.launch, l.windows[0].warp_instructions, l.windows[0].inactive_lanes))
        .collect();
    assert_eq!(got, [(0, 100, 0), (1, 100, 64)]);
    assert!(r.run.notes.iter().any(|n| n == "1 launches not counted by the hardware counters: its range was dropped"));
    let _ = std::fs::remove_dir_all(&dir);
}
