//! The cross-vendor suite (tests/xvendor/) against its expectations
//! (tests/xvendor/expectations.json), offline.
//!
//! The AMD half always runs: each program's launches (tests/xvendor/launches/,
//! the inputs the CUDA programs use) replayed with `--mode detect` on the
//! AMD builds for gfx90a and gfx942 find exactly the expected classes at
//! each marked line, and nothing anywhere else.
//!
//! The NVIDIA half runs once GPU captures are committed
//! (tests/xvendor/captures/PROGRAM/ and PROGRAM.nvidia.json, written by
//! tests/gpu/xvendor-check.sh): each capture replayed with the AMD build,
//! `xfpx compare` against the NVIDIA report finds every expected per-line
//! difference with its expected cause and no unexplained one, and the
//! outputs of the clean launches are equal within the program's ULP bound.
//! Without captures it says loudly that it did not run.

mod common;

use common::{run, xfpx};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use xfpx_common::report::Report;

fn suite() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("xvendor")
}

fn expectations() -> Value {
    let text = std::fs::read_to_string(suite().join("expectations.json")).expect("expectations.json");
    serde_json::from_str(&text).expect("expectations.json is JSON")
}

/// `file:line` of each `// xv: MARKER` in the program's source.
fn markers(program: &str) -> BTreeMap<String, String> {
    let file = format!("{program}.cu");
    let text = std::fs::read_to_string(suite().join("src").join(&file)).expect("source");
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, m)) = line.split_once("// xv: ") {
            out.insert(m.trim().to_string(), format!("{file}:{}", i + 1));
        }
    }
    out
}

/// The function's own name of a mangled kernel name (`_Z8xv_arithPf...` → `xv_arith`).
fn short(kernel: &str) -> String {
    let d = xfpx_common::names::readable(kernel);
    d.split('(').next().unwrap_or(&d).to_string()
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
}

/// Classes per calling line (the outermost frame, file by name) of one
/// kernel's records.
fn classes_by_line(report: &Report, kernel: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let Some(k) = report.kernels.iter().find(|k| k.name == kernel) else { return out };
    for r in &k.records {
        let place = match &r.site.location {
            Some(l) => {
                let outer = l.inlined_at.as_deref().unwrap_or(l);
                format!("{}:{}", outer.file.rsplit('/').next().unwrap_or(&outer.file), outer.line)
            }
            None => "unknown location".into(),
        };
        out.entry(place).or_default().insert(format!("{} ({})", r.kind, r.format));
    }
    out
}

#[test]
fn the_amd_side_of_the_expectations_holds_on_the_emulator() {
    let e = expectations();
    let d = tempfile::tempdir().expect("scratch");
    let mut checked = 0;
    for (program, p) in e["programs"].as_object().expect("programs") {
        let places = markers(program);
        for (kernel, labels) in p["launches"].as_object().expect("launches") {
            let files: Vec<PathBuf> = strings(labels)
                .iter()
                .map(|label| suite().join("launches").join(format!("{}.{label}.json", short(kernel))))
                .filter(|f| f.is_file())
                .collect();
            if files.is_empty() {
                continue;
            }
            let expected: BTreeMap<String, BTreeSet<String>> = p["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .filter(|l| l["kernel"] == kernel.as_str())
                .map(|l| (places[l["marker"].as_str().expect("marker")].clone(), strings(&l["amd"])))
                .collect();
            for target in ["gfx90a", "gfx942"] {
                let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
                for f in &files {
                    let report = d.path().join("r.json");
                    let mut c = xfpx(d.path());
                    c.args(["replay", "--mode", "detect", "--target", target, "--report"]).arg(&report).arg(f);
                    let o = run(c);
                    assert_eq!(o.code, Some(0), "{}: {}", f.display(), o.stderr);
                    let r = Report::from_json(&std::fs::read_to_string(&report).expect("report")).expect("report");
                    for (line, cs) in classes_by_line(&r, kernel) {
                        seen.entry(line).or_default().extend(cs);
                    }
                }
                assert_eq!(seen, expected, "{program} {} on {target}: classes per line", short(kernel));
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "every kernel with launch files on both targets ({checked})");
}

/// Whether a program is on `PATH`.
fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_amd_builds_are_current() {
    let tools = ["clang-19", "llvm-as-19", "llvm-dis-19", "llvm-objdump-19"];
    let libs = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc").is_file()
        && Path::new("/usr/include/hip/hip_runtime.h").is_file();
    if !libs || !tools.iter().all(|t| have(t)) {
        let why = "clang-19/LLVM 19, rocm-device-libs or libamdhip64-dev missing";
        assert!(std::env::var_os("CI").is_none(), "{why} (CI installs them: .ci/run)");
        println!("note: {why}: the cross-vendor suite's AMD builds are not checked for currency");
        return;
    }
    let d = tempfile::tempdir().expect("scratch");
    let o = std::process::Command::new("bash")
        .arg(suite().join("build-amd.sh"))
        .arg(d.path())
        .output()
        .expect("run build-amd.sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for t in ["gfx90a", "gfx942"] {
        for p in ["xv_basic", "xv_intrinsics", "xv_sgemm"] {
            for ext in ["co", "objdump"] {
                let f = format!("{t}/{p}.{ext}");
                let built = std::fs::read(d.path().join(&f)).expect("built");
                let kept = std::fs::read(suite().join(&f)).expect("committed");
                assert!(built == kept, "tests/xvendor/{f} is not what build-amd.sh builds now: run it and commit");
            }
        }
    }
}

/// `xfpx compare A B ...` as JSON.
fn compare(dir: &Path, args: &[&str]) -> Value {
    let mut c = xfpx(dir);
    c.arg("compare").args(args).args(["--format", "json"]);
    let o = run(c);
    assert!(matches!(o.code, Some(0 | 3)), "compare {args:?}: {}", o.stderr);
    serde_json::from_str(&o.stdout).expect("comparison JSON")
}

#[test]
fn nvidia_captures_replay_and_compare_as_expected() {
    let e = expectations();
    let captures = suite().join("captures");
    let mut ran = Vec::new();
    for (program, p) in e["programs"].as_object().expect("programs") {
        let capture = captures.join(program);
        let nvidia = captures.join(format!("{program}.nvidia.json"));
        if !capture.join("capture.json").is_file() || !nvidia.is_file() {
            println!(
                "SKIPPED: no GPU capture of {program} committed ({} and {}): the NVIDIA half of the cross-vendor \
                 suite did not run; tests/gpu/xvendor-check.sh on an NVIDIA GPU makes them",
                capture.display(),
                nvidia.display()
            );
            continue;
        }
        check_nvidia_half(program, p, &capture, &nvidia);
        ran.push(program.clone());
    }
    println!("NVIDIA captures compared: {ran:?}");
}

/// SIMULATED: the NVIDIA half's checks on a synthetic capture of the AMD
/// launch files and an NVIDIA report made from the expectations'
/// predicted classes and instructions. It tests the checks themselves
/// and that `xfpx compare` gives the expected cause of each predicted
/// difference; it says nothing of what an NVIDIA GPU does.
#[test]
fn the_nvidia_half_checks_a_simulated_capture() {
    let e = expectations();
    let d = tempfile::tempdir().expect("scratch");
    let mut simulated = 0;
    for (program, p) in e["programs"].as_object().expect("programs") {
        if p["library_kernels"].is_string() {
            continue; // a library's kernels have no AMD launch files
        }
        let mut files = Vec::new();
        for (kernel, labels) in p["launches"].as_object().expect("launches") {
            for label in labels.as_array().expect("labels").iter().filter_map(Value::as_str) {
                files.push(suite().join("launches").join(format!("{}.{label}.json", short(kernel))));
            }
        }
        let capture = d.path().join(program);
        std::fs::create_dir(&capture).expect("mkdir");
        let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        xfpx_tests::synthetic_capture::write(&capture, &paths, "gfx90a");
        let nvidia = d.path().join(format!("{program}.nvidia.json"));
        std::fs::write(&nvidia, simulated_nvidia_report(program, p).to_json()).expect("write");
        check_nvidia_half(program, p, &capture, &nvidia);
        simulated += 1;
    }
    assert_eq!(simulated, 2);
}

/// An NVIDIA report as the expectations predict it: per expected line,
/// each predicted class at one of its predicted instructions, every
/// instruction with at least one.
fn simulated_nvidia_report(program: &str, p: &Value) -> Report {
    use xfpx_common::class::FpFormat;
    use xfpx_common::fp::ExceptionKind;
    use xfpx_common::report::{Collector, RunInfo, SiteRef};
    use xfpx_common::site::{SiteId, SourceLoc};
    let places = markers(program);
    let mut c = Collector::new(RunInfo::new("nvidia", "SIMULATED from expectations.json", "detect"), None);
    for (n, l) in p["lines"].as_array().expect("lines").iter().enumerate() {
        let kernel = xfpx_common::names::readable(l["kernel"].as_str().expect("kernel"));
        let (file, line) = places[l["marker"].as_str().expect("marker")].rsplit_once(':').expect("file:line");
        let classes: Vec<String> = strings(&l["nvidia"]).into_iter().collect();
        let instrs: Vec<&str> =
            l["nvidia_instructions"].as_array().expect("instructions").iter().filter_map(Value::as_str).collect();
        for k in 0..classes.len().max(instrs.len()) {
            let (kind, format) = classes[k % classes.len()].trim_end_matches(')').split_once(" (").expect("class");
            let i = k % instrs.len();
            let site = SiteRef {
                id: SiteId((16 * n + i) as u32),
                offset: 16 * (16 * n + i) as u64,
                instr: instrs[i].into(),
                location: Some(SourceLoc::new(file, line.parse().expect("line"))),
            };
            let kind = ExceptionKind::from_name(kind).expect("a kind");
            let format = FpFormat::from_name(format).expect("a format");
            c.record(&kernel, kind, format, site, 0, 1);
        }
    }
    c.report()
}

/// Replays `capture` with the program's AMD build, compares it with the
/// NVIDIA report, and checks every line and the clean launches' outputs
/// against the expectations `p`.
fn check_nvidia_half(program: &str, p: &Value, capture: &Path, nvidia: &Path) {
    let d = tempfile::tempdir().expect("scratch");
    let co = suite().join("gfx90a").join(format!("{program}.co"));
    let mut c = xfpx(d.path());
    c.args(["replay", "--mode", "detect", "--code-object"]).arg(&co).arg(capture);
    c.args(["--out", "out", "--report", "amd.json"]);
    let o = run(c);
    let library = p["library_kernels"].as_str();
    let failed: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("xfpx: launch ")).collect();
    match library {
        None => assert_eq!(o.code, Some(0), "{program}: {}{}", o.stdout, o.stderr),
        Some(_) => {
            assert_eq!(o.code, Some(1), "{program}: the library's launches cannot be replayed: {}", o.stderr);
            assert!(!failed.is_empty(), "{program}: the library's launches were captured: {}", o.stderr);
            // a library launch either has no kernel in the AMD build, or
            // (cuBLAS's split-K reduction, whose alpha and beta live in
            // host memory) could not be captured whole: one line each
            for l in &failed {
                let said =
                    l.contains("the AMD build has no kernel") || l.contains("the capture of this launch is incomplete");
                assert!(said, "{program}: {l}");
            }
            assert!(failed.iter().any(|l| l.contains("the AMD build has no kernel")), "{program}: {}", o.stderr);
        }
    }
    let nv = nvidia.to_str().expect("utf-8");
    let c = compare(d.path(), &[nv, "amd.json"]);
    let places = markers(program);
    let mut lines_seen = BTreeSet::new();
    for k in c["kernels"].as_array().expect("kernels") {
        let name = k["name"].as_str().unwrap_or("");
        if k["only_in"] == "a" {
            let lib = library.is_some_and(|re| contains_word(re, name));
            assert!(lib, "{program}: kernel {name} only in the NVIDIA report");
            continue;
        }
        assert!(k["only_in"].is_null(), "{program}: kernel {name} only in the AMD replay");
        for line in k["lines"].as_array().expect("lines") {
            let place = line["place"].as_str().unwrap_or("");
            let expected = p["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .find(|l| places.get(l["marker"].as_str().unwrap_or("")).map(String::as_str) == Some(place));
            let Some(x) = expected else { panic!("{program}: a line no expectation names: {line}") };
            lines_seen.insert(place.to_string());
            let side = |s: &str| -> BTreeSet<String> {
                line[s]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|c| {
                                format!("{} ({})", c["kind"].as_str().unwrap_or(""), c["format"].as_str().unwrap_or(""))
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            assert_eq!(side("a"), strings(&x["nvidia"]), "{program} {place}: the NVIDIA side");
            assert_eq!(side("b"), strings(&x["amd"]), "{program} {place}: the AMD side");
            let causes: Vec<&str> =
                line["causes"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            assert!(!causes.contains(&"cause unknown"), "{program} {place}: an unexplained difference");
            match x["cause"].as_str() {
                Some(want) => {
                    assert!(causes.iter().any(|c| c.contains(want)), "{program} {place}: {causes:?} lack `{want}`")
                }
                None => assert!(causes.is_empty(), "{program} {place}: an unexpected difference {causes:?}"),
            }
        }
    }
    assert_eq!(lines_seen.len(), p["lines"].as_array().map_or(0, Vec::len), "{program}: every expected line found");
    // the clean launches' outputs, within the program's bound
    let bound = p["max_ulp"].as_u64().expect("max_ulp");
    let manifest = xfpx_common::capture::Manifest::read(capture).expect("manifest");
    let mut clean = 0;
    for l in &manifest.launches {
        let labels = p["launches"][l.kernel.as_str()].as_array();
        let Some(label) = labels.and_then(|a| a.get(l.launch as usize)).and_then(Value::as_str) else { continue };
        if label != "clean" {
            continue;
        }
        let a = capture.join(&l.dir);
        let b = d.path().join("out").join(&l.dir);
        let args = ["--out-a", a.to_str().expect("utf-8"), "--out-b", b.to_str().expect("utf-8")];
        let c = compare(d.path(), &[&[nv, "amd.json"][..], &args[..]].concat());
        for buf in c["outputs"].as_array().expect("outputs") {
            let ulp = buf["max_ulp"].as_u64().unwrap_or(0);
            assert!(buf["only_in"].is_null(), "{program} {}: {buf}", l.dir);
            assert!(ulp <= bound, "{program} {} {}: {ulp} ULP, more than {bound}", l.dir, buf["buffer"]);
        }
        clean += 1;
    }
    assert!(clean > 0, "{program}: no clean launch compared");
}

/// Whether `name` contains `word`, ignoring case (the expectations'
/// library patterns are plain words).
/// Whether `name` contains one of the `|`-separated `words` (any case).
fn contains_word(words: &str, name: &str) -> bool {
    let name = name.to_lowercase();
    words.split('|').any(|w| name.contains(&w.to_lowercase()))
}
