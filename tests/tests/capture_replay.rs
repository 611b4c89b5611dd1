//! `xfpx replay --code-object AMD_BUILD DIR` on capture folders, end to
//! end. Until captures from a GPU are committed, the folders are
//! SYNTHETIC (`xfpx_tests::synthetic_capture`: emulator fixture launches
//! written in the capture format, with made-up device addresses and every
//! pointer 256 bytes into its allocation): each launch replays with its
//! arguments laid out from the raw parameters and its pointers relocated,
//! its outputs equal the after-images and its findings those of the plain
//! replay; bad input is one line per launch and the others still replay.

mod common;

use common::{run, xfpx, Outcome};
use std::path::{Path, PathBuf};
use xfpx_common::report::Report;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../backend-amd/emulator/fixtures/launches")
        .join(format!("{name}.json"))
}

fn code_object(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../backend-amd/emulator/fixtures/gfx90a").join(format!("{name}.co"))
}

fn xfpx_in(dir: &Path, args: &[&str]) -> Outcome {
    let mut c = xfpx(dir);
    c.args(args);
    run(c)
}

fn report(path: &Path) -> Report {
    Report::from_json(&std::fs::read_to_string(path).expect("report")).expect("a report")
}

#[test]
fn a_synthetic_capture_replays_with_its_pointers_relocated() {
    let d = tempfile::tempdir().expect("scratch");
    let cap = d.path().join("cap");
    std::fs::create_dir(&cap).expect("mkdir");
    xfpx_tests::synthetic_capture::write(&cap, &[&fixture("exc_nan"), &fixture("exc_overflow")], "gfx90a");
    let co = code_object("exceptions");
    let o = xfpx_in(
        d.path(),
        &["replay", "--code-object", co.to_str().expect("utf-8"), "cap", "--out", "out", "--report", "amd.json"],
    );
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("xfpx: replayed 2 of 2 captured launches of cap (captured on synthetic"), "{}", o.stdout);
    // outputs equal what the launch left in the made-up allocations
    for launch in ["0001-exc_nan", "0002-exc_overflow"] {
        let c = xfpx_in(
            d.path(),
            &[
                "compare",
                "amd.json",
                "amd.json",
                "--out-a",
                &format!("cap/{launch}"),
                "--out-b",
                &format!("out/{launch}"),
            ],
        );
        assert_eq!(c.code, Some(0), "{launch}: {}", c.stdout);
        assert!(c.stdout.contains("  arg0 (f32): identical ("), "{}", c.stdout);
    }
    // the findings are those of the plain replays of the fixture launches
    let r = report(&d.path().join("amd.json"));
    assert!(r.run.notes.iter().any(|n| n.contains("SYNTHETIC")), "labelled: {:?}", r.run.notes);
    for name in ["exc_nan", "exc_overflow"] {
        let plain = format!("{name}.json");
        let o = xfpx_in(
            d.path(),
            &["replay", "--target", "gfx90a", fixture(name).to_str().expect("utf-8"), "--report", &plain],
        );
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let p = report(&d.path().join(&plain));
        let k = r.kernels.iter().find(|k| k.name == name).expect("kernel replayed from the capture");
        let classes = |k: &xfpx_common::report::KernelReport| {
            k.records.iter().map(|x| (x.site.offset, x.kind, x.format, x.occurrences)).collect::<Vec<_>>()
        };
        assert!(!classes(k).is_empty(), "{name} raises exceptions");
        assert_eq!(classes(k), classes(&p.kernels[0]), "{name}");
    }
}

/// Rewrites `file` in the launch folder `launch` of capture `cap`.
fn edit(cap: &Path, launch: &str, file: &str, f: impl Fn(String) -> String) {
    let p = cap.join(launch).join(file);
    let text = std::fs::read_to_string(&p).expect("read");
    std::fs::write(&p, f(text)).expect("write");
}

#[test]
fn bad_launches_are_one_line_each_and_the_others_still_replay() {
    let d = tempfile::tempdir().expect("scratch");
    let cap = d.path().join("cap");
    std::fs::create_dir(&cap).expect("mkdir");
    let l = ["exc_nan", "exc_overflow", "exc_div0", "exc_subnormal", "exc_none"].map(fixture);
    xfpx_tests::synthetic_capture::write(&cap, &l.iter().map(PathBuf::as_path).collect::<Vec<_>>(), "gfx90a");
    // 2: a kernel the AMD build lacks (a library's, as cuBLAS kernels are)
    let sgemm = "_Z5sgemmPKfS0_Pfi";
    for file in ["launch.json", "outputs.json", "../capture.json"] {
        edit(&cap, "0002-exc_overflow", file, |t| t.replace("\"exc_overflow\"", &format!("\"{sgemm}\"")));
    }
    // 3: one parameter more than the AMD kernel takes
    edit(&cap, "0003-exc_div0", "launch.json", |t| {
        let p = cap.join("0003-exc_div0/params.bin");
        let mut bytes = std::fs::read(&p).expect("params");
        let at = bytes.len();
        bytes.extend([0u8; 8]);
        std::fs::write(&p, &bytes).expect("params");
        t.replace(&format!("\"size\": {at},"), &format!("\"size\": {},", at + 8))
            .replace("\"layout\": [", &format!("\"layout\": [\n      {{\"offset\": {at}, \"size\": 8}},"))
    });
    // 4: a truncated memory image
    let image = cap.join("0004-exc_subnormal/arg2.before.bin");
    let bytes = std::fs::read(&image).expect("image");
    std::fs::write(&image, &bytes[..bytes.len() / 2]).expect("truncate");
    // 5: a launch file of a newer format
    edit(&cap, "0005-exc_none", "launch.json", |t| t.replace("\"format\": 3", "\"format\": 4"));

    let co = code_object("exceptions");
    let o = xfpx_in(
        d.path(),
        &["replay", "--code-object", co.to_str().expect("utf-8"), "cap", "--out", "out", "--report", "amd.json"],
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    let lines: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("xfpx: launch ")).collect();
    assert_eq!(lines.len(), 4, "one line per bad launch: {}", o.stderr);
    assert!(
        lines[0].starts_with("xfpx: launch 0002-exc_overflow (sgemm(float const*, float const*, float*, int)): "),
        "{}",
        lines[0]
    );
    assert!(
        lines[0]
            .contains(&format!("the AMD build has no kernel {sgemm} (sgemm(float const*, float const*, float*, int))")),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("argument layouts differ: the capture has 4 parameters (bytes: 8, 8, 8, 8), the AMD kernel exc_div0 takes 3 (bytes: 8, 8, 8)"), "{}", lines[1]);
    assert!(lines[2].contains("holds") && lines[2].contains("expected"), "{}", lines[2]);
    assert!(lines[3].contains("launch file format 4 is newer than this xfpx reads"), "{}", lines[3]);
    assert!(
        o.stderr.trim_end().ends_with("error: 4 of 5 captured launches could not be replayed (above)"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.contains("xfpx: replayed 1 of 5 captured launches"), "{}", o.stdout);
    // the good launch is in the report and its outputs written
    let r = report(&d.path().join("amd.json"));
    assert_eq!(r.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["exc_nan"]);
    assert_eq!(r.run.notes.iter().filter(|n| n.starts_with("not replayed: ")).count(), 4);
    assert!(d.path().join("out/0001-exc_nan/outputs.json").is_file());
}

#[test]
fn a_capture_of_another_version_or_no_capture_is_refused_in_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    let cap = d.path().join("cap");
    std::fs::create_dir(&cap).expect("mkdir");
    let co = code_object("exceptions");
    let co = co.to_str().expect("utf-8");
    let o = xfpx_in(d.path(), &["replay", "--code-object", co, "cap"]);
    o.assert_one_line_error(1, "is not a capture folder (it has no capture.json)");
    xfpx_tests::synthetic_capture::write(&cap, &[&fixture("exc_nan")], "gfx90a");
    let m = cap.join("capture.json");
    let text = std::fs::read_to_string(&m).expect("manifest").replace("xfpx-capture/1", "xfpx-capture/2");
    std::fs::write(&m, text).expect("write");
    let o = xfpx_in(d.path(), &["replay", "--code-object", co, "cap"]);
    o.assert_one_line_error(1, "is a capture of schema xfpx-capture/2, which this xfpx does not read");
    // without the AMD build: every launch says what to give
    std::fs::write(&m, std::fs::read_to_string(&m).expect("manifest").replace("xfpx-capture/2", "xfpx-capture/1"))
        .expect("write");
    let o = xfpx_in(d.path(), &["replay", "cap", "--no-report"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains(
            "the launch names no code object (it was captured on synthetic): give the AMD build with --code-object"
        ),
        "{}",
        o.stderr
    );
}

/// The NVIDIA tool's own capture writer (`xfpx_nvidia::capture_run`, as
/// the shim drives it on a GPU) fed with an emulator launch of a C++
/// kernel: allocations at made-up device addresses, the parameters laid
/// out as the driver would give them, the memory after the launch from
/// one emulator run. Its folder replays, buffers typed from the kernel's
/// signature, outputs equal to what it recorded.
#[test]
fn the_nvidia_tools_capture_writer_is_what_replay_reads() {
    use xfpx_amd_emu::arguments::explicit_args;
    use xfpx_amd_emu::launch::Launch;
    use xfpx_common::capture::ParamSlot;
    use xfpx_nvidia::capture_run::{CaptureRun, Geometry, Phase};
    use xfpx_nvidia::runtime::KernelNames;

    let suite = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("xvendor");
    let launch = Launch::load(&suite.join("launches/xv_fast_div.clean.json")).expect("launch");
    let opts = xfpx_amd_emu::ReplayOptions { target: Some("gfx90a".into()), ..Default::default() };
    let program = xfpx_amd_emu::replay::load_code_object(&launch, &opts).expect("code object");
    let kernel = program.kernel(&launch.kernel).expect("kernel");
    let explicit: Vec<_> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
    let d = tempfile::tempdir().expect("scratch");
    let cap = d.path().join("cap");
    std::fs::create_dir(&cap).expect("mkdir");
    let settings = xfpx_common::config::CaptureSettings { dir: cap.clone(), max_launches: 4, max_bytes: 1 << 20 };
    let mut c = CaptureRun::new(settings, 7);
    c.device("NVIDIA H100 80GB HBM3", Some("sm_90"));
    let base = |i: usize| 0x7f00_0000_0000u64 + (i as u64) * 0x10_0000;
    for (i, b) in launch.buffers.iter().enumerate() {
        c.allocated(base(i), b.bytes.len() as u64);
    }
    let address_of = |name: &str| base(launch.buffers.iter().position(|b| b.name == name).expect("buffer"));
    let params = explicit_args(&launch.kernel, &kernel.args, &launch.args, &address_of).expect("arguments");
    let layout: Vec<_> = explicit.iter().map(|meta| ParamSlot { offset: meta.offset, size: meta.size }).collect();
    let names = KernelNames {
        mangled: &launch.kernel,
        demangled: "xv_fast_div(float*, float const*, float const*, unsigned int)",
    };
    let geometry = Geometry { grid: launch.grid, block: launch.block, dynamic_shared: 0 };
    let (handle, ranges) = c.begin(names, true, geometry, &params, &layout).expect("captured");
    let mut all = launch.clone();
    all.outputs = launch.buffers.iter().map(|b| b.name.clone()).collect();
    let (after, _) = xfpx_amd_emu::run_launch(&all, &program, 0).expect("runs");
    for (i, (addr, _)) in ranges.iter().enumerate() {
        let b = &launch.buffers[(addr - base(0)) as usize / 0x10_0000];
        c.image(handle, i, Phase::Before, Some(&b.bytes));
        let out = after.iter().find(|o| o.name == b.name).expect("output");
        c.image(handle, i, Phase::After, Some(&out.bytes));
    }
    c.end(handle, true);
    c.finish();
    xfpx_common::capture::assemble(&cap, vec!["./xv_intrinsics".into()]).expect("assemble").expect("a part");
    let text = std::fs::read_to_string(cap.join("0001-xv_fast_div/launch.json")).expect("launch file");
    assert!(text.contains("\"elem\": \"f32\""), "typed from the signature: {text}");

    let co = suite.join("gfx90a/xv_intrinsics.co");
    let o = xfpx_in(
        d.path(),
        &["replay", "--code-object", co.to_str().expect("utf-8"), "cap", "--out", "out", "--report", "amd.json"],
    );
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    let c = xfpx_in(
        d.path(),
        &["compare", "amd.json", "amd.json", "--out-a", "cap/0001-xv_fast_div", "--out-b", "out/0001-xv_fast_div"],
    );
    assert_eq!(c.code, Some(0), "{}", c.stdout);
    assert!(c.stdout.contains("  arg0 (f32): identical (256 elements)"), "{}", c.stdout);
}
