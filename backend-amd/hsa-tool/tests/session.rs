//! The session's decisions end to end without a runtime: the demo's code
//! object handed over as a reader's, kernels dispatched, and each
//! instrumented copy run on the emulator in place of a GPU (its table in
//! emulated memory), so the findings the session reads back are what the
//! rewritten kernel itself recorded.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use xfpx_amd_emu::{Launch, LaunchMemory, Program, RunLimits};
use xfpx_common::config::{Mode, RunSettings};
use xfpx_common::report::{KernelStatus, Report};
use xfpx_common::{ExceptionKind, FpFormat};
use xfpx_hsa::session::{Device, Handle, Runtime, Session};

const AGENT: Handle = 0x100;
const EXECUTABLE: Handle = 0x200;
const READER: Handle = 0x300;

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/demo").join(name)
}

/// A runtime whose device is the emulator: one memory per launch
/// description, copies kept as programs by their kernel object.
struct Emulated {
    memory: RefCell<LaunchMemory>,
    copies: RefCell<HashMap<u64, Program>>,
    refuse_loads: bool,
}

impl Emulated {
    fn new(launch: &Launch) -> Emulated {
        Emulated {
            memory: RefCell::new(LaunchMemory::new(launch)),
            copies: RefCell::new(HashMap::new()),
            refuse_loads: false,
        }
    }

    /// Runs the dispatch's kernel object: an instrumented copy on the
    /// emulator (an original one is not run: nothing would read it).
    fn run(&self, launch: &Launch, object: u64) -> Vec<u8> {
        let copies = self.copies.borrow();
        let program = copies.get(&object).expect("an instrumented copy");
        let (outputs, stats) = self.memory.borrow_mut().run(launch, program, &RunLimits::default()).expect("runs");
        assert!(stats.hazards().is_empty(), "hazards in the instrumented copy");
        outputs[0].bytes.clone()
    }
}

impl Runtime for Emulated {
    fn device(&self, _agent: Handle) -> Device {
        Device { vendor: "amd-emulated".into(), name: "test device".into(), target: Some("gfx942".into()) }
    }

    fn allocate_table(&self, _agent: Handle, bytes: usize) -> Result<u64, String> {
        Ok(self.memory.borrow_mut().allocate(vec![0; bytes]))
    }

    fn read_table(&self, address: u64, bytes: usize) -> Vec<u8> {
        self.memory.borrow().allocation(address).map(|a| a[..bytes].to_vec()).unwrap_or_default()
    }

    fn load_copy(&self, _agent: Handle, like: Handle, elf: &[u8], kernel: &str) -> Result<u64, String> {
        assert_eq!(like, EXECUTABLE);
        if self.refuse_loads {
            return Err("HSA_STATUS_ERROR_INVALID_CODE_OBJECT".into());
        }
        let program = Program::parse(elf).map_err(|e| e.0)?;
        assert!(program.kernel(kernel).is_some());
        let object = 0xC000 + self.copies.borrow().len() as u64;
        self.copies.borrow_mut().insert(object, program);
        Ok(object)
    }
}

/// Kernel objects of the demo's kernels in the (pretend) frozen executable.
fn originals() -> Vec<(String, u64, Handle)> {
    ["exc_nan", "exc_overflow", "exc_div0"]
        .iter()
        .enumerate()
        .map(|(i, k)| (format!("{k}.kd"), 0xA000 + i as u64, AGENT))
        .collect()
}

fn session(settings: RunSettings, dir: &Path) -> Session {
    let config = settings.check().expect("valid").reporting_to(None, dir.join("report.json"));
    let mut s = Session::new(config, Some(dir.join("cache")), "test".into()).expect("session");
    s.reader_created(READER, std::fs::read(demo("exceptions.gfx942.co")).expect("demo code object"));
    s.reader_loaded(EXECUTABLE, Some(AGENT), READER);
    s.frozen(EXECUTABLE, originals());
    s
}

fn object_of(kernel: &str) -> u64 {
    originals().into_iter().find(|(s, _, _)| s == &format!("{kernel}.kd")).expect("known").1
}

#[test]
fn sampled_launches_run_the_copy_and_report_what_it_recorded() {
    let dir = tempfile::tempdir().expect("tmp");
    let settings = RunSettings { mode: Mode::Detect, sample_every: 2, ..RunSettings::default() };
    let mut s = session(settings, dir.path());
    let launch = Launch::load(&demo("nan.json")).expect("launch");
    let rt = Emulated::new(&launch);
    let plain_output = {
        let mut m = LaunchMemory::new(&launch);
        let original = Program::parse(&std::fs::read(demo("exceptions.gfx942.co")).expect("co")).expect("parses");
        m.run(&launch, &original, &RunLimits::default()).expect("runs").0[0].bytes.clone()
    };
    for i in 0..3 {
        let d = s.dispatch(object_of("exc_nan"), &rt);
        if i == 1 {
            assert_eq!((d.kernel_object, d.ticket), (object_of("exc_nan"), None), "launch 1 is not sampled");
            continue;
        }
        assert_ne!(d.kernel_object, object_of("exc_nan"));
        // the instrumented copy computes what the original computes
        assert_eq!(rt.run(&launch, d.kernel_object), plain_output);
        s.completed(d.ticket.expect("a ticket"), &rt);
    }
    // a kernel launched only as its original: never rewritten
    assert_eq!(rt.copies.borrow().len(), 1);
    s.finish(&rt).expect("report written");
    let report =
        Report::from_json(&std::fs::read_to_string(dir.path().join("report.json")).expect("report")).expect("reads");
    let k = report.kernels.iter().find(|k| k.name == "exc_nan").expect("exc_nan");
    assert_eq!((k.launches, k.instrumented_launches), (3, 2));
    assert_eq!(k.status, KernelStatus::Instrumented);
    assert!(k.coverage.is_some());
    let nan = k.records.iter().find(|r| r.kind == ExceptionKind::Nan && r.format == FpFormat::F32).expect("a NaN");
    assert_eq!(nan.first_launch, 0);
    // launches 0 and 2 each recorded it once per wave: counts add up, not repeat
    let once: u64 = k
        .records
        .iter()
        .filter(|r| r.site.offset == nan.site.offset && r.kind == nan.kind)
        .map(|r| r.occurrences)
        .sum();
    assert_eq!(once, 2);
    assert!(nan.site.location.is_some(), "the demo has a line table");
    assert_eq!(report.run.vendor, "amd-emulated");
    assert_eq!(report.run.target.as_deref(), Some("gfx942"));
}

#[test]
fn rewrites_are_lazy_and_filters_hold() {
    let dir = tempfile::tempdir().expect("tmp");
    let dump = dir.path().join("dump");
    let settings =
        RunSettings { kernels: vec!["overflow".into()], dump_dir: Some(dump.clone()), ..RunSettings::default() };
    let mut s = session(settings, dir.path());
    let rt = Emulated::new(&Launch::load(&demo("overflow.json")).expect("launch"));
    let d = s.dispatch(object_of("exc_nan"), &rt);
    assert_eq!(d.ticket, None, "excluded by --kernels");
    let d = s.dispatch(object_of("exc_overflow"), &rt);
    assert!(d.ticket.is_some());
    // unknown kernel objects run as they are, said once
    assert_eq!(s.dispatch(0xdead, &rt).kernel_object, 0xdead);
    s.dispatch(0xdead, &rt);
    let report = s.report();
    let status = |n: &str| report.kernels.iter().find(|k| k.name == n).map(|k| k.status.clone());
    assert_eq!(status("exc_nan"), Some(KernelStatus::Excluded));
    assert_eq!(status("exc_overflow"), Some(KernelStatus::Instrumented));
    assert_eq!(status("exc_div0"), None, "never dispatched, never rewritten");
    assert_eq!(report.run.notes.iter().filter(|n| n.contains("0xdead")).count(), 1);
    // fast mode is detect on AMD, said in a note; auto sampling is noted
    assert_eq!(report.run.mode, "detect");
    assert!(report.run.notes.iter().any(|n| n.contains("no fast mode")));
    // the cache holds the one rewrite; --dump has its listing
    assert_eq!(std::fs::read_dir(dir.path().join("cache")).expect("cache").count(), 1);
    let listing = std::fs::read_to_string(dump.join("exc_overflow.amd.txt")).expect("dumped");
    assert!(listing.contains("kernel exc_overflow: instrumented"), "{listing}");
    // the copy runs, but its completion never comes: its findings are read at the end
    let launch = Launch::load(&demo("overflow.json")).expect("launch");
    rt.run(&launch, d.kernel_object);
    s.finish(&rt).expect("finish");
    let written = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
    assert!(written.contains("1 instrumented launch had not completed"), "the launch never completed");
    let report = Report::from_json(&written).expect("reads");
    let k = report.kernels.iter().find(|k| k.name == "exc_overflow").expect("kernel");
    assert!(k.records.iter().any(|r| r.kind == ExceptionKind::Inf && r.first_launch_unknown), "{k:?}");
}

#[test]
fn unreadable_code_objects_and_refused_loads_run_unchecked() {
    let dir = tempfile::tempdir().expect("tmp");
    let config = RunSettings::default().check().expect("valid").reporting_to(None, dir.path().join("r.json"));
    let mut s = Session::new(config, None, "test".into()).expect("session");
    s.reader_created(READER, b"\x7fELF\x02\x01\x01 corrupt".to_vec());
    s.reader_loaded(EXECUTABLE, Some(AGENT), READER);
    s.frozen(EXECUTABLE, vec![("broken.kd".into(), 0xB000, AGENT)]);
    let mut rt = Emulated::new(&Launch::load(&demo("nan.json")).expect("launch"));
    assert_eq!(s.dispatch(0xB000, &rt).ticket, None);
    // a runtime that will not load the copy: the original runs
    s.reader_created(READER + 1, std::fs::read(demo("exceptions.gfx942.co")).expect("co"));
    s.reader_loaded(EXECUTABLE, Some(AGENT), READER + 1);
    s.frozen(EXECUTABLE, originals());
    rt.refuse_loads = true;
    assert_eq!(s.dispatch(object_of("exc_div0"), &rt).ticket, None);
    let report = s.report();
    assert!(report.run.notes.iter().any(|n| n.starts_with("a code object (") && n.contains("loaded unmodified")));
    let status = |n: &str| report.kernels.iter().find(|k| k.name == n).map(|k| k.status.clone());
    assert!(matches!(status("broken"), Some(KernelStatus::Skipped { .. })));
    match status("exc_div0") {
        Some(KernelStatus::Skipped { reason }) => assert!(reason.contains("does not load"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_tools_are_refused_in_one_line() {
    let settings = RunSettings { tool: xfpx_common::tool::ToolKind::Counters, ..RunSettings::default() };
    let e = Session::new(settings.check().expect("valid"), None, "t".into()).expect_err("refused");
    assert!(e.contains("--tool counters") && !e.contains('\n'), "{e}");
    // what `xfpx run` says; OnLoad adds what happens next, once
    assert_eq!(e, "--tool counters is not available for AMD runs (the exception detector only)");
}

#[test]
fn asked_launch_screening_is_said_to_be_nvidia_only() {
    let note = "launch screening is NVIDIA only";
    for (screen, said) in [(true, true), (false, false)] {
        let dir = tempfile::tempdir().expect("tmp");
        let settings =
            RunSettings { mode: Mode::Detect, sample_every: 2, screen_launches: screen, ..RunSettings::default() };
        let mut s = session(settings, dir.path());
        s.finish(&Emulated::new(&Launch::load(&demo("nan.json")).expect("launch"))).expect("report written");
        let text = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
        let report = Report::from_json(&text).expect("reads");
        assert_eq!(report.run.notes.iter().any(|n| n.starts_with(note)), said, "{:?}", report.run.notes);
    }
}
