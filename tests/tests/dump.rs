//! `xfpx dump` end to end on committed fixtures (no GPU needed).

mod common;

use common::{run, xfpx};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

const AMD_CODE_OBJECT: &str = "backend-amd/fixtures/gfx942/divsqrt.co";

#[test]
fn amd_code_object_text_and_json() {
    let d = tempfile::tempdir().expect("scratch");
    let co = fixture(AMD_CODE_OBJECT);
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd"]).arg(&co);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("target: gfx942"), "{}", o.stdout);
    for k in ["div_f32", "div_f64", "sqrt_f32"] {
        assert!(o.stdout.contains(&format!("  kernel {k}\n")), "{k} missing");
    }

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--kernel", "sqrt_f32", "--format", "json"]).arg(&co);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    let text = v.to_string();
    assert!(text.contains("sqrt_f32") && !text.contains("\"div_f32\""), "the kernel filter was not applied");

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--kernel", "no_such_kernel"]).arg(&co);
    run(c).assert_one_line_error(1, "no_such_kernel");
}

#[test]
fn amd_dump_of_damaged_input_is_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    let bytes = std::fs::read(fixture(AMD_CODE_OBJECT)).expect("fixture");
    std::fs::write(d.path().join("text.co"), b"hello, not a code object\n").expect("write");
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "text.co"]);
    run(c).assert_one_line_error(1, "text.co");
    // Cut the code object at a few places: each either dumps or fails in one line.
    for cut in [0, 16, 64, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(d.path().join("cut.co"), &bytes[..cut]).expect("write");
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "amd", "cut.co"]);
        let o = run(c);
        assert!(!o.stderr.contains("panicked"), "cut at {cut}: {}", o.stderr);
        if o.code != Some(0) {
            o.assert_one_line_error(1, "cut.co");
        }
    }
}

const NVIDIA_LISTINGS: [&str; 2] =
    ["backend-nvidia/tests/fixtures/ops.sm_90.cuobjdump.sass", "backend-nvidia/tests/fixtures/ops.sm_90.nvdisasm.sass"];

#[test]
fn nvidia_listing_text_and_json() {
    let d = tempfile::tempdir().expect("scratch");
    for listing in NVIDIA_LISTINGS {
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "nvidia"]).arg(fixture(listing));
        let o = run(c);
        assert_eq!(o.code, Some(0), "{listing}: {}", o.stderr);
        assert!(o.stdout.contains("kernel more_ops: "), "{listing}: {}", o.stdout);
        assert!(o.stdout.contains("xfpx_check_value("), "{listing}: no probe shown");
        assert!(o.stdout.contains("[f64.mul]"), "{listing}: no instruction class shown");
    }
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--kernel", "more_ops", "--format", "json"]).arg(fixture(NVIDIA_LISTINGS[0]));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let text = o.stdout.trim();
    assert!(text.starts_with('[') || text.starts_with('{'), "{text}");
    assert!(text.contains("more_ops") && !text.contains("mma_f16"), "the kernel filter was not applied");

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--kernel", "no_such_kernel"]).arg(fixture(NVIDIA_LISTINGS[0]));
    run(c).assert_one_line_error(1, "no_such_kernel");
}

#[test]
fn nvidia_dump_of_non_listings_is_one_line() {
    let d = tempfile::tempdir().expect("scratch");
    std::fs::write(d.path().join("prose.txt"), "just some words\n").expect("write");
    std::fs::write(d.path().join("binary.sass"), [0xffu8, 0xfe, 0x00, 0x80]).expect("write");
    for (name, needle) in [("prose.txt", "prose.txt"), ("binary.sass", "not a text SASS listing")] {
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "nvidia", name]);
        run(c).assert_one_line_error(1, needle);
    }
}

#[test]
fn amd_rewrite_shows_and_writes_the_rewritten_object() {
    let d = tempfile::tempdir().expect("scratch");
    let co = fixture("backend-amd/emulator/fixtures/gfx942/exceptions.co");
    for mode in ["detect", "screen"] {
        let new = format!("{mode}.co");
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "amd", "--rewrite", mode, "--out", &new]).arg(&co);
        let o = run(c);
        assert_eq!(o.code, Some(0), "{mode}: {}", o.stderr);
        assert!(o.stdout.contains("kernel exc_nan: instrumented"), "{mode}: {}", o.stdout);
        // The rewritten object is a code object again.
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", "amd", &new]);
        let again = run(c);
        assert_eq!(again.code, Some(0), "{mode}: {}", again.stderr);
        assert!(again.stdout.contains("  kernel exc_nan\n"), "{mode}");
    }
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--rewrite", "detect", "--kernel", "exc_div0", "--format", "json"]).arg(&co);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    let states: Vec<(String, String)> = v["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| (k["name"].as_str().unwrap_or("").to_string(), k["state"].as_str().unwrap_or("").to_string()))
        .collect();
    assert!(states.contains(&("exc_div0".into(), "instrumented".into())), "{states:?}");
    assert!(states.contains(&("exc_nan".into(), "excluded".into())), "{states:?}");

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--rewrite", "detect"]).arg(&co);
    run(c).assert_one_line_error(1, "--rewrite applies to AMD code objects only");
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--out", "x.co"]).arg(&co);
    assert_eq!(run(c).code, Some(2), "--out needs --rewrite");
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--rewrite", "detect", "text.co"]);
    std::fs::write(d.path().join("text.co"), "not a code object").expect("write");
    run(c).assert_one_line_error(1, "cannot rewrite text.co");
}

/// `--kernel` of an AMD rewrite is a regular expression over the mangled or
/// demangled name, as `xfpx run --kernels` is (it was a substring, which no
/// kernel name contains here); a bad one is one `error:` line.
#[test]
fn amd_rewrite_kernel_filter_is_a_regular_expression() {
    let d = tempfile::tempdir().expect("scratch");
    let co = fixture(AMD_CODE_OBJECT);
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--rewrite", "detect", "--format", "json", "--kernel", "^(div|sqrt)_f32$"])
        .arg(&co);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    let states: Vec<(String, String)> = v["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| (k["name"].as_str().unwrap_or("").to_string(), k["state"].as_str().unwrap_or("").to_string()))
        .collect();
    let instrumented: Vec<&str> = states.iter().filter(|(_, s)| s == "instrumented").map(|(n, _)| n.as_str()).collect();
    assert_eq!(instrumented, ["div_f32", "sqrt_f32"], "{states:?}");
    assert!(states.iter().filter(|(_, s)| s == "excluded").count() == 3, "{states:?}");

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--rewrite", "detect", "--kernel", "(div"]).arg(&co);
    run(c).assert_one_line_error(1, "invalid --kernel pattern `(div`: unclosed group");
}

/// `--kernel` of a plain dump is the same regular expression on both
/// vendors (it was an exact name: no kernel is named `^(div|sqrt)_f32$`);
/// a bad one is one `error:` line before the file is read.
#[test]
fn dump_kernel_filter_is_a_regular_expression_on_both_vendors() {
    let d = tempfile::tempdir().expect("scratch");
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "amd", "--format", "json", "--kernel", "^(div|sqrt)_f32$"])
        .arg(fixture(AMD_CODE_OBJECT));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    let names: Vec<&str> = v["code_objects"]
        .as_array()
        .expect("code objects")
        .iter()
        .flat_map(|co| co["kernels"].as_array().into_iter().flatten())
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert_eq!(names, ["div_f32", "sqrt_f32"], "{}", o.stdout);

    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--kernel", "^more_"]).arg(fixture(NVIDIA_LISTINGS[0]));
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("kernel more_ops: ") && !o.stdout.contains("kernel mma_f16"), "{}", o.stdout);

    for vendor in ["amd", "nvidia"] {
        let mut c = xfpx(d.path());
        c.args(["dump", "--vendor", vendor, "--kernel", "(div", "no-such-file"]);
        run(c).assert_one_line_error(1, "invalid --kernel pattern `(div`: unclosed group");
    }
}

/// The committed GPU listings the inject tool's plans are shown on.
const INJECT_LISTINGS: &[&str] = &[
    "tests/gpu/listings/fpx_basic.sass",
    "tests/gpu/listings/fpx_clean.sass",
    "tests/gpu/listings/fpx_half.sass",
    "tests/gpu/listings/fpx_loops.sass",
    "tests/gpu/listings/ms_threads.sass",
    "tests/gpu/listings/many_sites.sass",
];

/// Instructions the fault touches over the inject listings, and the lines
/// of kernels it leaves alone.
fn inject_dump(dir: &std::path::Path, fault: &[&str]) -> (u64, Vec<String>) {
    let (mut touched, mut untouched) = (0, Vec::new());
    for listing in INJECT_LISTINGS {
        let mut c = xfpx(dir);
        c.args(["dump", "--vendor", "nvidia", "--tool", "inject"]).args(fault).arg(fixture(listing));
        let o = run(c);
        assert_eq!(o.code, Some(0), "{fault:?} on {listing}: {}", o.stderr);
        let before = touched;
        for line in o.stdout.lines().filter(|l| l.starts_with("inject: ")) {
            match line.split(" touches ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse::<u64>().ok()) {
                Some(n) => touched += n,
                None => untouched.push(line.to_string()),
            }
        }
        assert_eq!(touched > before, o.stdout.contains("xfpx_inject("), "{fault:?} on {listing}: calls shown");
    }
    (touched, untouched)
}

#[test]
fn nvidia_inject_plans_on_gpu_listings() {
    let d = tempfile::tempdir().expect("scratch");
    let faults: &[&[&str]] = &[
        &["--model", "IOC", "--unit", "fp"],
        &["--model", "IOC", "--unit", "int"],
        &["--model", "IVOC"],
        &["--model", "IRA", "--operand", "src0", "--register", "9"],
        &["--model", "IRA", "--operand", "dst", "--register", "9"],
        &["--model", "IVRA", "--operand", "src1"],
        &["--model", "IIO", "--mask", "0x10"],
        &["--model", "IMS", "--mask", "0x1"],
        &["--model", "WV", "--predicate", "0"],
        &["--model", "IAT", "--dim", "x", "--mask", "1", "--lanes", "0-3"],
        &["--model", "IAW", "--dim", "x", "--mask", "32"],
        &["--model", "IAC", "--dim", "x", "--mask", "1"],
        &["--model", "IAL", "--unit", "fp", "--lane-fault", "ignore", "--lanes", "5"],
        &["--model", "IAL", "--unit", "int", "--lane-fault", "force", "--lanes", "5"],
    ];
    for fault in faults {
        let mut args = fault.to_vec();
        args.extend(["--sm", "3"]);
        let (touched, _) = inject_dump(d.path(), &args);
        assert!(touched > 0, "{fault:?} touches nothing on the GPU listings");
    }
    // no listing stores to shared memory: each kernel says so in one line
    let (touched, untouched) =
        inject_dump(d.path(), &["--model", "IMD", "--mask", "4", "--store", "data", "--sm", "1"]);
    assert_eq!(touched, 0);
    assert!(!untouched.is_empty());
    assert!(
        untouched.iter().all(|l| l.starts_with("inject: IMD touches nothing in ")
            && l.ends_with(": it has no stores to shared memory through registers")),
        "{untouched:?}"
    );
    // a fault flag without the inject tool, the inject tool without a fault
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--model", "IVOC", "--sm", "0"]).arg(fixture(INJECT_LISTINGS[0]));
    run(c).assert_one_line_error(1, "need --tool inject");
    let mut c = xfpx(d.path());
    c.args(["dump", "--vendor", "nvidia", "--tool", "inject"]).arg(fixture(INJECT_LISTINGS[0]));
    run(c).assert_one_line_error(1, "a fault needs --model");
}
