//! Launch screening through the tool's core, as the shim drives it: the
//! launches sampling leaves out are screened where their buffers are
//! known, every other launch is counted with its reason, a screen record
//! becomes a screened finding at its launch, and the kernel's next launch
//! runs instrumented again.

use xfpx_common::capture::ParamSlot;
use xfpx_common::class::FpFormat;
use xfpx_common::config::{Mode, RunSettings};
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{KernelStatus, Report};
use xfpx_common::screened::{ScreenedBefore, Unchecked, UncheckedLaunches};
use xfpx_nvidia::runtime::{KernelNames, LaunchWay, ToolCore};
use xfpx_nvidia::screen::device::ScreenRecord;

const RELAX: KernelNames = KernelNames {
    mangled: "_Z10relax_stepiPfPKfS_fi",
    demangled: "relax_step(int, float*, float const*, float*, float, int)",
};
const X: u64 = 0x7f00_0000_0000;
const TARGET: u64 = 0x7f00_0001_0000;
const DIAG: u64 = 0x7f00_0002_0000;

fn relax_sass() -> Vec<(u64, String)> {
    vec![
        (0x00, "LDG.E R2, desc[UR4][R4.64] ;".into()),
        (0x10, "FADD R3, R2, -R6 ;".into()),
        (0x20, "FFMA R7, R3, 0.0020000000949949026108, R6 ;".into()),
        (0x30, "STG.E desc[UR4][R8.64], R7 ;".into()),
        (0x40, "MUFU.SQRT R9, R3 ;".into()),
        (0x50, "STG.E desc[UR4][R10.64], R9 ;".into()),
        (0x60, "EXIT ;".into()),
    ]
}

/// relax_step's parameters: int, three pointers, float, int.
fn params(step: u32) -> (Vec<u8>, Vec<ParamSlot>) {
    let mut p = vec![0u8; 40];
    p[0..4].copy_from_slice(&16384u32.to_le_bytes());
    p[8..16].copy_from_slice(&X.to_le_bytes());
    p[16..24].copy_from_slice(&TARGET.to_le_bytes());
    p[24..32].copy_from_slice(&DIAG.to_le_bytes());
    p[32..36].copy_from_slice(&1.0f32.to_le_bytes());
    p[36..40].copy_from_slice(&step.to_le_bytes());
    let layout = [(0, 4), (8, 8), (16, 8), (24, 8), (32, 4), (36, 4)]
        .into_iter()
        .map(|(offset, size)| ParamSlot { offset, size })
        .collect();
    (p, layout)
}

fn core(screen: bool, name: &str) -> (ToolCore, std::path::PathBuf) {
    let report = std::env::temp_dir().join(format!("xfpx-screening-{}-{name}.json", std::process::id()));
    let config = RunSettings {
        mode: Mode::Fast,
        sample_doubling: true,
        screen_launches: screen,
        report_path: report.clone(),
        ..RunSettings::default()
    }
    .check()
    .expect("valid");
    let mut core = ToolCore::new(config).expect("core");
    core.device("NVIDIA H100", Some("sm_90"));
    (core, report)
}

fn record(serial: u32, previous: u32, nan: (u64, u64)) -> ScreenRecord {
    ScreenRecord {
        seq: 1,
        serial,
        previous,
        param: 3,
        format: FpFormat::F32,
        nan_before: nan.0,
        nan_after: nan.1,
        inf_before: 0,
        inf_after: 0,
        first: Some(5000),
        bytes: 40_000,
    }
}

fn relax(r: &Report) -> &xfpx_common::report::KernelReport {
    r.kernels.iter().find(|k| k.name.starts_with("relax_step")).expect("relax_step in the report")
}

#[test]
fn sampled_out_launches_are_screened_and_a_late_nan_is_found_at_its_launch() {
    let (mut core, _) = core(true, "late");
    assert!(core.screening());
    core.instrument_function(RELAX, &relax_sass(), 0x1000).expect("instrumented");
    core.screen_ready(true);
    for (base, bytes) in [(X, 65_536), (TARGET, 65_536), (DIAG, 40_000)] {
        core.allocated(base, bytes);
    }
    let mut screened = 0;
    for step in 0..6000u32 {
        let (p, l) = params(step);
        let d = core.launch_with(RELAX, LaunchWay::Stream { params: &p, layout: &l });
        assert_eq!(d.serial, u64::from(step));
        let plan = d.screen.expect("every launch of relax_step has buffers to scan");
        // x and diag, never the read-only target
        let bases: Vec<u64> = plan.after.buffers().iter().map(|b| b.base).collect();
        assert_eq!(bases, vec![X, DIAG], "launch {step}");
        assert_eq!(plan.after.report, u32::from(!d.instrument), "launch {step}");
        if !d.instrument {
            screened += 1;
        }
        if step == 5000 {
            assert!(!d.instrument, "launch 5000 is left out by sampling");
            // the scan after it saw the NaN that launch wrote into diag
            core.on_screen_records(&record(5000, 4999, (0, 1)).encode());
        }
    }
    let r = core.report();
    let k = relax(&r);
    // the first launch, and the first after the finding restarted sampling
    assert_eq!(k.instrumented_launches, 2, "launches 0 and 5001: {k:?}");
    assert_eq!(k.screened_launches, screened);
    assert_eq!(k.instrumented_launches + k.screened_launches, 6000, "every launch checked");
    assert!(k.unchecked.is_empty());
    assert!(k.records.is_empty(), "no precise finding: the NaN never recurred");
    assert_eq!(k.screened.len(), 1);
    let f = &k.screened[0];
    assert_eq!((f.kind, f.format, f.param, f.first_launch), (ExceptionKind::Nan, FpFormat::F32, 3, 5000));
    assert_eq!((f.before, f.after, f.first_element, f.bytes), (0, 1, Some(5000), 40_000));
    assert_eq!(f.declared.as_deref(), Some("float*"));
    let before = ScreenedBefore { kernel: k.name.clone(), launch: 4999, just_before: false };
    assert_eq!(f.screened_before, Some(before));
}

#[test]
fn a_growth_that_repeats_counts_once_and_restarts_sampling_once() {
    let (mut core, _) = core(true, "again");
    core.instrument_function(RELAX, &relax_sass(), 0x1000).expect("instrumented");
    core.screen_ready(true);
    core.allocated(X, 65_536);
    core.allocated(DIAG, 40_000);
    let (p, l) = params(0);
    let way = LaunchWay::Stream { params: &p, layout: &l };
    let decisions: Vec<bool> = (0..40).map(|_| core.launch_with(RELAX, way).instrument).collect();
    assert!(!decisions[20]);
    // the first scan of a buffer ran just before the launch
    core.on_screen_records(&record(20, 20, (0, 2)).encode());
    core.on_screen_records(&record(21, 20, (2, 3)).encode());
    let next: Vec<bool> = (0..4).map(|_| core.launch_with(RELAX, way).instrument).collect();
    assert_eq!(next, vec![true, false, false, false], "sampling starts again after a new screened finding");
    let r = core.report();
    let f = &relax(&r).screened[0];
    assert_eq!((f.first_launch, f.again, f.after), (20, 1, 2));
    assert!(f.screened_before.as_ref().is_some_and(|b| b.just_before));
    // a record naming no launch is not a finding
    core.on_screen_records(&record(999_999, 0, (0, 1)).encode());
    core.on_screen_records(&[0u8; 7]);
    assert_eq!(relax(&core.report()).screened.len(), 1);
}

#[test]
fn launches_that_are_not_screened_are_counted_with_their_reason() {
    let (mut core, _) = core(true, "reasons");
    core.instrument_function(RELAX, &relax_sass(), 0x1000).expect("instrumented");
    core.screen_ready(true);
    core.allocated(X, 65_536);
    let (p, l) = params(0);
    let (q, m) = params(1);
    let mut unknown = q.clone();
    unknown[8..16].copy_from_slice(&0x1234_0000u64.to_le_bytes());
    let stream = LaunchWay::Stream { params: &p, layout: &l };
    let unknown_buffers = LaunchWay::Stream { params: &unknown, layout: &m };
    assert!(core.launch_with(RELAX, stream).instrument, "the first launch");
    assert!(!core.launch_with(RELAX, stream).instrument, "screened");
    // not screenable, and a launch sampling without screening instruments
    let d = core.launch_with(RELAX, unknown_buffers);
    assert!(d.instrument && d.screen.is_none(), "launch 2 instrumented instead: {d:?}");
    assert!(!core.launch_with(RELAX, stream).instrument, "screened");
    core.launch_with(RELAX, LaunchWay::Graph);
    core.launch_with(RELAX, LaunchWay::ParamsUnknown);
    core.launch_with(RELAX, LaunchWay::OtherContext);
    assert!(!core.launch_with(RELAX, stream).instrument, "launch 7: screenable, so screened");
    core.launch_with(RELAX, unknown_buffers);
    let d = core.launch_with(RELAX, LaunchWay::Stream { params: &q, layout: &m });
    assert!(d.screen.is_some());
    core.screen_lost(d.serial, "CUDA error 700");
    let r = core.report();
    let k = relax(&r);
    assert_eq!((k.launches, k.instrumented_launches, k.screened_launches), (10, 2, 3));
    let reasons: Vec<(Unchecked, u64)> = k.unchecked.iter().map(|u| (u.reason, u.launches)).collect();
    assert_eq!(
        reasons,
        vec![
            (Unchecked::NoBuffers, 1),
            (Unchecked::Graph, 1),
            (Unchecked::OtherContext, 1),
            (Unchecked::ParamsUnknown, 1),
            (Unchecked::ScreenFailed, 1)
        ]
    );
    assert!(r.run.notes.iter().any(|n| n.contains("could not be enqueued (CUDA error 700)")));
    // a kernel launched only in another context is not called instrumented
    let other = KernelNames { mangled: "_Z5otherv", demangled: "other()" };
    core.launch_with(other, LaunchWay::OtherContext);
    let r = core.report();
    let o = r.kernels.iter().find(|k| k.name == "other()").expect("other");
    assert!(matches!(&o.status, KernelStatus::Skipped { reason } if reason.contains("second CUDA context")));
    assert_eq!(o.unchecked, vec![UncheckedLaunches { reason: Unchecked::OtherContext, launches: 1 }]);
}

#[test]
fn without_screening_sampled_out_launches_say_so() {
    for (screen, ready) in [(false, true), (true, false)] {
        let (mut core, _) = core(screen, "off");
        assert_eq!(core.screening(), screen);
        core.instrument_function(RELAX, &relax_sass(), 0x1000).expect("instrumented");
        core.screen_ready(ready);
        core.allocated(X, 65_536);
        let (p, l) = params(0);
        for _ in 0..10 {
            let d = core.launch_with(RELAX, LaunchWay::Stream { params: &p, layout: &l });
            assert!(d.screen.is_none());
        }
        let r = core.report();
        let k = relax(&r);
        assert_eq!(k.instrumented_launches, 5, "launches 0-3 and 7");
        assert_eq!(k.unchecked, vec![UncheckedLaunches { reason: Unchecked::Sampled, launches: 5 }]);
        let said = r.run.notes.iter().any(|n| n.contains("launch screening is off"));
        assert_eq!(said, screen && !ready);
    }
}

#[test]
fn a_kernel_without_floating_point_results_has_nothing_to_check() {
    let (mut core, _) = core(true, "nothing");
    let copy = KernelNames { mangled: "_Z4copyPfPKf", demangled: "copy(float*, float const*)" };
    let sass: Vec<(u64, String)> = vec![
        (0, "LDG.E R2, desc[UR4][R4.64] ;".into()),
        (0x10, "STG.E desc[UR4][R6.64], R2 ;".into()),
        (0x20, "EXIT ;".into()),
    ];
    core.instrument_function(copy, &sass, 0x1000).expect("instrumented");
    core.screen_ready(true);
    core.allocated(X, 64);
    let mut p = vec![0u8; 16];
    p[0..8].copy_from_slice(&X.to_le_bytes());
    let l = [ParamSlot { offset: 0, size: 8 }, ParamSlot { offset: 8, size: 8 }];
    for _ in 0..6 {
        core.launch_with(copy, LaunchWay::Stream { params: &p, layout: &l });
    }
    let r = core.report();
    let k = r.kernels.iter().find(|k| k.name.starts_with("copy")).expect("copy");
    assert_eq!(k.unchecked, vec![UncheckedLaunches { reason: Unchecked::NothingToCheck, launches: 2 }]);
}

/// A kernel whose disassembly is made in the background at its first
/// launch: its launches run screened until it is ready, then sampling
/// starts again (its next launch is instrumented), and the summary says
/// how many launches waited.
#[test]
fn a_kernel_being_prepared_is_screened_until_it_is_ready() {
    let (mut core, _) = core(true, "preparing");
    assert!(!core.prepares_in_background(), "not before the screen's memory is made");
    core.screen_ready(true);
    assert!(core.prepares_in_background());
    core.allocated(X, 65_536);
    core.allocated(DIAG, 40_000);
    core.preparing(RELAX.mangled);
    let (p, l) = params(0);
    let launch = |core: &mut ToolCore| core.launch_with(RELAX, LaunchWay::Stream { params: &p, layout: &l });
    for i in 0..3 {
        let d = launch(&mut core);
        assert!(!d.instrument, "launch {i} waits for the disassembly");
        assert_eq!(d.screen.expect("screened").after.report, 1, "launch {i} is screened");
    }
    core.instrument_function(RELAX, &relax_sass(), 0x1000).expect("instrumented");
    core.prepared(RELAX.mangled);
    let instrumented: Vec<bool> = (0..6).map(|_| launch(&mut core).instrument).collect();
    // sampling from launch 3 as from a first launch: the first instrumented, the others screened
    assert_eq!(instrumented, [true, false, false, false, false, false]);
    core.finish().expect("finish");
    let r = core.report();
    let k = relax(&r);
    assert_eq!((k.instrumented_launches, k.screened_launches), (1, 8), "{k:?}");
    let note = r.run.notes.iter().find(|n| n.contains("while the disassembly NVBit needs")).expect("the note");
    // (the later two would have been screened anyway)
    assert!(note.starts_with("1 launch of 1 kernel ran screened"), "{note}");
    // a launch that cannot be screened (its buffers unknown) is not left
    // unchecked: the kernel is instrumented at once
    core.preparing("_Z5otherPf");
    let other = KernelNames { mangled: "_Z5otherPf", demangled: "other(float*)" };
    let (p, l) = params(0);
    let d = core.launch_with(other, LaunchWay::Stream { params: &p[..8], layout: &l[..1] });
    assert!(d.instrument && d.prepare_now, "instrumented now: {d:?}");
    let again = core.launch_with(other, LaunchWay::Stream { params: &p[..8], layout: &l[..1] });
    assert!(again.instrument && !again.prepare_now, "said once: {again:?}");
    // the setting turns it off
    let report = std::env::temp_dir().join(format!("xfpx-screening-{}-off.json", std::process::id()));
    let mut settings = RunSettings {
        mode: Mode::Fast,
        sample_doubling: true,
        screen_launches: true,
        report_path: report,
        ..RunSettings::default()
    };
    settings.tools.background_disassembly = false;
    let mut off = ToolCore::new(settings.check().expect("valid")).expect("core");
    off.screen_ready(true);
    assert!(off.screening() && !off.prepares_in_background());
}
