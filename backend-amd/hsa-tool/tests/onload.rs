//! The tool library as the HSA runtime loads it: `libxfpx_hsa.so` loaded
//! by a stand-in runtime (`harness`) through `OnLoad` with API tables laid
//! out as ROCm 5.2 and ROCm 6.3 lay them out, alone and chained with a
//! second tool library, and a small HSA program played against it. Each
//! scenario runs in a child process of this test binary (a tool loads
//! once per process); the parent checks the report and the child's stderr.

mod harness;

use harness::{ApiTables, App};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use xfpx_common::config::{Mode, RunSettings};
use xfpx_common::report::{KernelStatus, Report};
use xfpx_common::ExceptionKind;
use xfpx_hsa::layout::{Entry, KNOWN_LAYOUTS};

const SCENARIO: &str = "XFPX_HSA_SCENARIO";

fn demo_code_object() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/demo/exceptions.gfx942.co")).expect("demo")
}

/// The demo's code object with `exc_div0`'s descriptor asking for every
/// VGPR: it runs as before, but leaves the rewriter no scratch register.
fn unrewritable_code_object() -> Vec<u8> {
    let mut co = demo_code_object();
    let at = {
        let parsed = xfpx_amd::CodeObject::parse(&co).expect("parses");
        let kd = parsed.kernel("exc_div0").expect("kernel").descriptor_address;
        let section = parsed.elf.section_at_addr(kd).expect("section");
        (section.offset + (kd - section.addr)) as usize + 48
    };
    co[at] |= 0x3f;
    co
}

/// Runs scenario `name` in a child process with `env`.
fn child(name: &str, env: &[(&str, &Path)]) -> Output {
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", &format!("scenario_{name}"), "--nocapture", "--test-threads=1"])
        .env(SCENARIO, name)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "scenario {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn active(name: &str) -> bool {
    std::env::var(SCENARIO).is_ok_and(|v| v == name)
}

/// A run configuration for the children: detect mode, every other launch,
/// the report written into `dir` (no CLI listens).
fn config(dir: &Path) -> PathBuf {
    let c = RunSettings { mode: Mode::Detect, sample_every: 2, ..RunSettings::default() }
        .check()
        .expect("valid")
        .reporting_to(None, dir.join("report.json"));
    let path = dir.join("config.json");
    std::fs::write(&path, c.to_json()).expect("write config");
    path
}

/// Builds the second tool library for `layout`'s offsets.
fn second_tool(dir: &Path) -> PathBuf {
    let out = dir.join("libsecond_tool.so");
    let l = &KNOWN_LAYOUTS[0];
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(format!("-DQUEUE_CREATE={}", l.offset(Entry::QueueCreate)))
        .arg(format!("-DFREEZE={}", l.offset(Entry::ExecutableFreeze)))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness/second_tool.c"))
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success());
    out
}

fn report(dir: &Path) -> Report {
    Report::from_json(&std::fs::read_to_string(dir.join("report.json")).expect("the report was written"))
        .expect("reads")
}

/// How the program hands its code object to the runtime.
#[derive(Clone, Copy)]
enum Source<'a> {
    Memory,
    File(&'a Path),
    /// `hsa_code_object_deserialize` and `hsa_executable_load_code_object`.
    Deserialized,
}

/// The program the children play: the demo's three kernels, three
/// launches each, on one queue; then `hsa_shut_down` (`OnUnload`).
fn play(app: &App, code_object: &[u8], source: Source<'_>) {
    let exec = app.executable();
    let loaded = match source {
        Source::Memory => app.load(exec, app.reader_from_memory(code_object)),
        Source::File(path) => app.load(exec, app.reader_from_file(path)),
        Source::Deserialized => app.load_code_object(exec, app.deserialize(code_object)),
    };
    assert_eq!(loaded, 0);
    app.freeze(exec);
    let queue = app.queue();
    for kernel in ["exc_nan", "exc_overflow", "exc_div0"] {
        let object = app.kernel_object(exec, kernel);
        for _ in 0..3 {
            let signal = harness::new_signal();
            harness::submit(queue, &[harness::dispatch_packet(object, signal)]);
            assert!(harness::wait(signal), "the program's completion signal never dropped");
            // the dispatch's times reach the program's signal, instrumented or not
            let (start, end) = harness::times(signal);
            assert!(start > 0 && end == start + 500, "times {start} {end}");
        }
    }
    // every launch of a kernel wrote the same output, instrumented or not
    let ran = harness::ran();
    for kernel in ["exc_nan", "exc_overflow", "exc_div0"] {
        let outputs: Vec<&Vec<u8>> = ran.iter().filter(|r| r.0 == kernel).map(|r| &r.2).collect();
        assert_eq!(outputs.len(), 3);
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{kernel}: outputs differ");
    }
}

fn tables(layout: &str) -> (Box<ApiTables>, &'static xfpx_hsa::layout::Layout) {
    match layout {
        "5.2" => (ApiTables::rocm_5_2(), &KNOWN_LAYOUTS[0]),
        _ => (ApiTables::rocm_6_3(), &KNOWN_LAYOUTS[2]),
    }
}

#[test]
fn scenario_program() {
    if !active("program") {
        return;
    }
    let layout = std::env::var("XFPX_HSA_LAYOUT").expect("layout");
    let (mut t, layout) = tables(&layout);
    let tool = harness::tool_library();
    harness::load_tools(&mut t, std::slice::from_ref(&tool));
    let app = App { tables: t, layout };
    let source = if std::env::var_os("XFPX_HSA_DESERIALIZE").is_some() { Source::Deserialized } else { Source::Memory };
    play(&app, &demo_code_object(), source);
    let ran = harness::ran();
    assert_eq!(ran.iter().filter(|r| r.1).count(), 6, "launches 0 and 2 of each kernel ran the copy: {ran:?}");
    assert_eq!(harness::plain_queues(), 0);
    harness::unload_tool(&tool);
}

fn check_program_report(dir: &Path) {
    let r = report(dir);
    assert_eq!(r.run.device, "harness GPU");
    assert_eq!(r.run.target.as_deref(), Some("gfx942"));
    assert_eq!(r.run.mode, "detect");
    for (kernel, kind) in
        [("exc_nan", ExceptionKind::Nan), ("exc_overflow", ExceptionKind::Inf), ("exc_div0", ExceptionKind::Div0)]
    {
        let k = r.kernels.iter().find(|k| k.name == kernel).unwrap_or_else(|| panic!("{kernel} in {r:?}"));
        assert_eq!((k.launches, k.instrumented_launches), (3, 2), "{kernel}");
        assert_eq!(k.status, KernelStatus::Instrumented, "{kernel}");
        let found = k.records.iter().find(|rec| rec.kind == kind).unwrap_or_else(|| panic!("{kernel}: no {kind:?}"));
        assert!(found.site.location.is_some(), "{kernel}: located");
    }
}

#[test]
fn rocm_5_2_tables() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path());
    let out = child("program", &[("XFPX_CONFIG", &cfg), ("XFPX_HSA_LAYOUT", Path::new("5.2"))]);
    check_program_report(dir.path());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("xfpx:"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn rocm_6_3_tables() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path());
    child("program", &[("XFPX_CONFIG", &cfg), ("XFPX_HSA_LAYOUT", Path::new("6.3"))]);
    check_program_report(dir.path());
}

#[test]
fn the_deprecated_code_object_path() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path());
    let yes = Path::new("1");
    child("program", &[("XFPX_CONFIG", &cfg), ("XFPX_HSA_LAYOUT", Path::new("5.2")), ("XFPX_HSA_DESERIALIZE", yes)]);
    check_program_report(dir.path());
}

#[test]
fn scenario_chain() {
    if !active("chain") {
        return;
    }
    let second: PathBuf = std::env::var_os("XFPX_SECOND_TOOL").expect("second tool").into();
    let tool = harness::tool_library();
    let order = std::env::var("XFPX_CHAIN_ORDER").expect("order");
    let libs =
        if order == "xfpx-first" { vec![tool.clone(), second.clone()] } else { vec![second.clone(), tool.clone()] };
    let (mut t, layout) = tables("5.2");
    harness::load_tools(&mut t, &libs);
    let app = App { tables: t, layout };
    play(&app, &demo_code_object(), Source::Memory);
    // SAFETY: the second tool's counter, a plain C function.
    let calls = unsafe {
        let name = std::ffi::CString::new(second.as_os_str().as_encoded_bytes()).expect("path");
        let h = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        let f = libc::dlsym(h, c"second_tool_calls".as_ptr());
        std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> i32>(f)()
    };
    // loaded after xfpx's, it sees the program's calls; loaded before, also
    // the freezes of the three instrumented copies (xfpx calls the entries
    // it found), but not the queue's creation (made through the
    // interception entry)
    let expected = if order == "xfpx-first" { 101 } else { 4 };
    assert_eq!(calls, expected, "calls the second tool saw (queue creations * 100 + freezes)");
    assert_eq!(harness::ran().iter().filter(|r| r.1).count(), 6);
    harness::unload_tool(&tool);
}

#[test]
fn chains_with_a_second_tool_in_either_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let second = second_tool(dir.path());
    for order in ["xfpx-first", "xfpx-second"] {
        let cfg = config(dir.path());
        child("chain", &[("XFPX_CONFIG", &cfg), ("XFPX_SECOND_TOOL", &second), ("XFPX_CHAIN_ORDER", Path::new(order))]);
        check_program_report(dir.path());
        let noted = report(dir.path()).run.notes.iter().any(|n| n.contains("a tool loaded before xfpx's"));
        assert_eq!(noted, order == "xfpx-second");
        std::fs::remove_file(dir.path().join("report.json")).expect("rm");
    }
}

#[test]
fn scenario_unknown_layout() {
    if !active("unknown_layout") {
        return;
    }
    // an AMD extension table of a size no release used
    let layout = &KNOWN_LAYOUTS[0];
    let mut t = ApiTables::new((1, 48), (1, 1016), (1, 432), layout);
    let before: Vec<u64> = Entry::ALL.iter().map(|&e| t.entry(e, layout)).collect();
    harness::load_tools(&mut t, &[harness::tool_library()]);
    let after: Vec<u64> = Entry::ALL.iter().map(|&e| t.entry(e, layout)).collect();
    assert_eq!(before, after, "a refused layout is left as it was");
    let app = App { tables: t, layout };
    play(&app, &demo_code_object(), Source::Memory);
    assert!(harness::ran().iter().all(|r| !r.1));
    assert_eq!(harness::plain_queues(), 1);
}

#[test]
fn an_unknown_table_layout_is_refused_in_one_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path());
    let out = child("unknown_layout", &[("XFPX_CONFIG", &cfg)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("xfpx:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("AmdExtTable 1.0 (432 bytes)") && lines[0].contains("runs without instrumentation"),
        "{}",
        lines[0]
    );
    assert!(!dir.path().join("report.json").exists(), "nothing attached");
}

#[test]
fn scenario_refused() {
    if !active("refused") {
        return;
    }
    let (mut t, layout) = tables("6.3");
    let tool = harness::tool_library();
    harness::load_tools(&mut t, std::slice::from_ref(&tool));
    let app = App { tables: t, layout };
    // the code object comes from a file this time
    let file: PathBuf = std::env::var_os("XFPX_CODE_OBJECT").expect("file").into();
    play(&app, &std::fs::read(&file).expect("co"), Source::File(&file));
    let ran = harness::ran();
    assert!(ran.iter().filter(|r| r.0 == "exc_div0").all(|r| !r.1), "the refused kernel ran as it is");
    assert_eq!(ran.iter().filter(|r| r.1).count(), 4);
    // a corrupt code object: the runtime's own answer, nothing else
    let bad = app.reader_from_memory(b"\x7fELF\x02\x01\x01\0 truncated");
    let exec = app.executable();
    assert_ne!(app.load(exec, bad), 0);
    harness::unload_tool(&tool);
}

#[test]
fn a_refused_kernel_and_a_corrupt_code_object_run_as_they_are() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path());
    let co = dir.path().join("refused.co");
    std::fs::write(&co, unrewritable_code_object()).expect("write");
    child("refused", &[("XFPX_CONFIG", &cfg), ("XFPX_CODE_OBJECT", &co)]);
    let r = report(dir.path());
    let div0 = r.kernels.iter().find(|k| k.name == "exc_div0").expect("exc_div0");
    match &div0.status {
        KernelStatus::Skipped { reason } => assert!(reason.contains("VGPR"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!((div0.launches, div0.instrumented_launches), (3, 0));
    assert!(r.kernels.iter().any(|k| k.name == "exc_nan" && k.records.iter().any(|x| x.kind == ExceptionKind::Nan)));
    // the runtime refused the corrupt code object itself: xfpx adds nothing
    assert!(!r.run.notes.iter().any(|n| n.contains("cannot be read")), "{:?}", r.run.notes);
}
