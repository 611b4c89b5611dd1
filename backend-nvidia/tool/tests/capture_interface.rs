//! Launch capture through the C interface, as the shim drives it, without
//! a GPU: allocations reported by the driver callbacks, one launch offered
//! with its parameters, its memory copied before and after, and the
//! capture's files and report notes at exit.

mod support;

use std::ffi::CString;
use xfpx_common::capture::{assemble, LaunchFile};
use xfpx_common::report::Report;
use xfpx_nvbit::ffi::*;

#[test]
fn a_launch_is_captured_through_the_c_interface() {
    let dir = std::env::temp_dir().join(format!("xfpx-nvbit-capture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let capture = dir.join("capture");
    std::fs::create_dir_all(&capture).expect("mkdir");
    let report = dir.join("report.json");
    let cfg = xfpx_common::config::RunSettings {
        mode: xfpx_common::config::Mode::Detect,
        report_path: report.clone(),
        kernels: vec!["scale".into()],
        capture: Some(xfpx_common::config::CaptureSettings {
            dir: capture.clone(),
            max_launches: 1,
            max_bytes: 1 << 20,
        }),
        ..Default::default()
    };
    support::init(&dir, cfg);
    assert_eq!(xfpx_capturing(), 1);
    assert_eq!(xfpx_capture_room(), 1);
    let device = CString::new("NVIDIA H100 80GB HBM3").expect("name");
    let target = CString::new("sm_90").expect("name");
    // SAFETY: valid NUL-terminated strings.
    unsafe { xfpx_device(device.as_ptr(), target.as_ptr()) };

    // the shim's allocation calls, and one the driver named later
    xfpx_device_alloc(0x7000_0000, 64);
    xfpx_capture_alloc(0x7100_0000, 32);
    xfpx_device_free(0x7100_0000);
    assert_eq!(xfpx_capture_knows(0x7000_0010), 1);
    assert_eq!(xfpx_capture_knows(0x7100_0000), 0, "freed");

    let mangled = CString::new("_Z5scalePdd").expect("name");
    let demangled = CString::new("scale(double*, double)").expect("name");
    let geometry = [2u32, 1, 1, 32, 1, 1, 0];
    let mut params = 0x7000_0008u64.to_le_bytes().to_vec();
    params.extend(3.0f64.to_le_bytes());
    let layout = [0u64, 8, 8, 8];
    let mut handle = 0;
    // SAFETY: every pointer is valid for the sizes given.
    let n = unsafe {
        xfpx_capture_begin(
            mangled.as_ptr(),
            demangled.as_ptr(),
            geometry.as_ptr(),
            params.as_ptr(),
            params.len() as u64,
            layout.as_ptr(),
            2,
            &mut handle,
        )
    };
    assert_eq!(n, 1);
    let (mut base, mut bytes) = (0, 0);
    // SAFETY: valid pointers.
    assert_eq!(unsafe { xfpx_capture_range(handle, 0, &mut base, &mut bytes) }, 1);
    assert_eq!((base, bytes), (0x7000_0000, 64));
    // SAFETY: valid pointers.
    assert_eq!(unsafe { xfpx_capture_range(handle, 1, &mut base, &mut bytes) }, 0, "one allocation only");
    let before: Vec<u8> = (0..64).collect();
    let after = [9u8; 64];
    // SAFETY: 64 readable bytes each.
    unsafe {
        xfpx_capture_image(handle, 0, 0, before.as_ptr(), 64);
        xfpx_capture_image(handle, 0, 1, after.as_ptr(), 64);
    }
    xfpx_capture_end(handle, 1);
    // a second launch: over --capture-max-launches 1
    // SAFETY: as above.
    let n = unsafe {
        xfpx_capture_begin(
            mangled.as_ptr(),
            demangled.as_ptr(),
            geometry.as_ptr(),
            params.as_ptr(),
            params.len() as u64,
            layout.as_ptr(),
            2,
            &mut handle,
        )
    };
    assert_eq!(n, 0);
    assert_eq!(xfpx_capture_room(), 0, "the one launch allowed is taken");
    xfpx_finish();

    let m = assemble(&capture, vec!["./scale".into()]).expect("readable").expect("a part was written");
    assert_eq!(m.launches.len(), 1);
    let folder = capture.join(&m.launches[0].dir);
    let launch: LaunchFile =
        serde_json::from_str(&std::fs::read_to_string(folder.join("launch.json")).expect("launch file")).expect("json");
    assert_eq!((launch.grid, launch.block), ([2, 1, 1], [32, 1, 1]));
    assert_eq!(launch.buffers["arg0"].elem, "f64");
    assert_eq!(std::fs::read(folder.join("arg0.before.bin")).expect("image"), before);
    assert_eq!(std::fs::read(folder.join("params.bin")).expect("params"), params);
    assert_eq!(m.not_captured, ["1 launch of scale(double*, double) not captured: over --capture-max-launches (1)"]);
    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report written")).expect("valid report");
    assert!(r.run.notes.iter().any(|n| n.starts_with("captured 1 launch into")), "{:?}", r.run.notes);
    let _ = std::fs::remove_dir_all(dir);
}
