use super::*;
use xfpx_common::capture::{assemble, Manifest};

fn folder(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xfpx-capture-run-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SAXPY: KernelNames =
    KernelNames { mangled: "_Z5saxpyPfPKffi", demangled: "saxpy(float*, float const*, float, int)" };
const GEOMETRY: Geometry = Geometry { grid: [4, 1, 1], block: [256, 1, 1], dynamic_shared: 0 };
const OUT: u64 = 0x7f00_0000_0000;
const X: u64 = 0x7f00_0001_0000;

fn saxpy_params(out: u64, x: u64) -> (Vec<u8>, Vec<ParamSlot>) {
    let mut p = Vec::new();
    p.extend(out.to_le_bytes());
    p.extend(x.to_le_bytes());
    p.extend(2.5f32.to_le_bytes());
    p.extend(1000i32.to_le_bytes());
    let layout = [(0, 8), (8, 8), (16, 4), (20, 4)].map(|(offset, size)| ParamSlot { offset, size }).to_vec();
    (p, layout)
}

fn run(dir: &Path, max_launches: u64, max_bytes: u64) -> CaptureRun {
    let mut c = CaptureRun::new(CaptureSettings { dir: dir.into(), max_launches, max_bytes }, 42);
    c.device("NVIDIA H100 80GB HBM3", Some("sm_90"));
    c.allocated(OUT, 4000);
    c.allocated(X, 4000);
    c
}

#[test]
fn a_launch_is_written_with_its_memory_before_and_after() {
    let dir = folder("one");
    let mut c = run(&dir, 8, 1 << 20);
    // x points 16 bytes into its allocation: the whole allocation is captured
    let (params, layout) = saxpy_params(OUT, X + 16);
    let (handle, ranges) = c.begin(SAXPY, true, GEOMETRY, &params, &layout).expect("captured");
    assert_eq!(ranges, [(OUT, 4000), (X, 4000)]);
    c.image(handle, 0, Phase::Before, Some(&[0u8; 4000]));
    c.image(handle, 1, Phase::Before, Some(&[1u8; 4000]));
    c.image(handle, 0, Phase::After, Some(&[2u8; 4000]));
    c.image(handle, 1, Phase::After, Some(&[1u8; 4000]));
    c.end(handle, true);
    let notes = c.finish();
    assert!(notes[0].starts_with("captured 1 launch into"), "{notes:?}");

    let launch = dir.join("0001-saxpy");
    assert_eq!(std::fs::read(launch.join("params.bin")).unwrap(), params);
    assert_eq!(std::fs::read(launch.join("arg0.after.bin")).unwrap(), [2u8; 4000]);
    assert_eq!(std::fs::read(launch.join("arg1.before.bin")).unwrap(), [1u8; 4000]);
    let file: LaunchFile = serde_json::from_str(&std::fs::read_to_string(launch.join(LAUNCH_FILE)).unwrap()).unwrap();
    assert_eq!(file.format, LAUNCH_FORMAT);
    assert_eq!(file.kernel, SAXPY.mangled);
    assert_eq!(file.captured.source.target.as_deref(), Some("sm_90"));
    assert_eq!(file.params.layout, layout);
    let b = &file.buffers["arg1"];
    assert_eq!((b.elem.as_str(), b.count, b.address.as_str()), ("f32", 1000, "0x7f0000010000"));
    assert_eq!(file.outputs, ["arg0", "arg1"]);
    let outputs: OutputManifest =
        serde_json::from_str(&std::fs::read_to_string(launch.join("outputs.json")).unwrap()).unwrap();
    assert_eq!(outputs.outputs[0].file, "arg0.after.bin");

    let m = assemble(&dir, vec!["./saxpy".into()]).unwrap().expect("a part was written");
    assert_eq!(m.launches.len(), 1);
    assert!(m.launches[0].complete && m.launches[0].bytes == 16000);
    assert_eq!(m.source.device, "NVIDIA H100 80GB HBM3");
    assert_eq!(Manifest::read(&dir).unwrap(), m);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn limits_leave_launches_out_with_notes() {
    let dir = folder("limits");
    // room for one launch's images (16000 bytes), two launches allowed
    let mut c = run(&dir, 2, 20_000);
    let (params, layout) = saxpy_params(OUT, X);
    let take = |c: &mut CaptureRun| {
        let (h, ranges) = c.begin(SAXPY, true, GEOMETRY, &params, &layout)?;
        for (i, (_, n)) in ranges.iter().enumerate() {
            let data = vec![0u8; *n as usize];
            c.image(h, i, Phase::Before, Some(&data));
            c.image(h, i, Phase::After, Some(&data));
        }
        c.end(h, true);
        Some(h)
    };
    assert!(take(&mut c).is_some());
    assert!(take(&mut c).is_none(), "over --capture-max-bytes");
    // a kernel the filter does not admit is neither captured nor noted
    assert!(c.begin(KernelNames { mangled: "other", demangled: "" }, false, GEOMETRY, &params, &layout).is_none());
    // a small launch still fits; then the launch limit is reached
    let small = KernelNames { mangled: "fill", demangled: "" };
    c.allocated(0x1000, 8);
    let p = 0x1000u64.to_le_bytes();
    let slot = [ParamSlot { offset: 0, size: 8 }];
    let (h, _) = c.begin(small, true, GEOMETRY, &p, &slot).expect("fits");
    c.end(h, true);
    assert!(c.begin(small, true, GEOMETRY, &p, &slot).is_none(), "over --capture-max-launches");
    let notes = c.finish().join("\n");
    assert!(notes.contains("launch 1 of saxpy(float*, float const*, float, int) not captured"), "{notes}");
    assert!(notes.contains("more than the 4000 bytes --capture-max-bytes leaves"), "{notes}");
    assert!(notes.contains("1 launch of fill not captured: over --capture-max-launches (2)"), "{notes}");
    // the small launch's images never arrived: it is listed as incomplete
    let m = assemble(&dir, vec![]).unwrap().unwrap();
    assert_eq!(m.launches.iter().map(|l| l.complete).collect::<Vec<_>>(), [true, false]);
    let problem = m.launches[1].problem.as_deref().unwrap_or("");
    assert!(problem.contains("memory images missing: arg0.before.bin, arg0.after.bin"), "{problem}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pointers_outside_allocations_and_failed_launches_are_said() {
    let dir = folder("problems");
    let mut c = run(&dir, 8, 1 << 20);
    let (params, layout) = saxpy_params(OUT, 0x5555_0000);
    let (h, ranges) = c.begin(SAXPY, true, GEOMETRY, &params, &layout).expect("captured");
    assert_eq!(ranges, [(OUT, 4000)], "only the known allocation is copied");
    c.image(h, 0, Phase::Before, Some(&[0u8; 4000]));
    c.image(h, 0, Phase::After, None);
    c.end(h, false);
    let m = {
        c.finish();
        assemble(&dir, vec![]).unwrap().unwrap()
    };
    let l = &m.launches[0];
    assert!(!l.complete);
    let problem = l.problem.as_deref().unwrap_or("");
    assert!(problem.contains("parameter 1 points to 0x55550000, which is in no device allocation"), "{problem}");
    assert!(problem.contains("could not be read after the launch") && problem.contains("the launch failed"));
    assert!(!dir.join(&l.dir).join("outputs.json").exists(), "no outputs for an incomplete launch");
    assert_eq!(m.not_captured.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_folder_that_cannot_be_written_stops_the_capture_with_a_note() {
    let dir = folder("stopped");
    let mut c = run(&dir.join("missing"), 8, 1 << 20);
    let (params, layout) = saxpy_params(OUT, X);
    assert!(c.begin(SAXPY, true, GEOMETRY, &params, &layout).is_none());
    assert!(c.begin(SAXPY, true, GEOMETRY, &params, &layout).is_none());
    let notes = c.finish().join("\n");
    assert!(notes.contains("capturing stopped: cannot create"), "{notes}");
    let _ = std::fs::remove_dir_all(&dir);
}
