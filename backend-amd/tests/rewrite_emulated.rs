//! Proof on the emulator: every fixture launch of the emulator suite runs
//! original and rewritten (detect mode) on gfx908, gfx90a, gfx942 and gfx950. The rewritten
//! kernel's output buffers equal the original's bit for bit, the emulator
//! reports no hazard, and the table's exception records are exactly the
//! (site, kind, format) set the emulator observed in the original run
//! (results, and the NaN sources of comparisons and min/max, which the
//! detector also checks: those the emulator saw the flow tool's probes
//! read, `xfpx_amd::flow::observe_flow`).
//! Screen mode: the kernel's slot holds the TRAPSTS bits the emulator saw.

mod common;
mod exact_records;

use common::REFUSED_KERNEL as REFUSED;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use exact_records::{
    detect_run, emulator_lacks, instr_at, locate, observed, rewritten_records, rewritten_run, rewritten_run_with, run,
    screen_check, Key, TARGETS,
};
use xfpx_amd::rewrite::{self, table, KernelState, Mode, RewriteOptions};
use xfpx_amd_emu::launch::Launch;
use xfpx_common::config::KernelFilter;
use xfpx_common::FpFormat;

fn emulator_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures")
}

fn launches() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(emulator_fixtures().join("launches"))
        .expect("launches")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    v.sort();
    v
}

fn run_info(target: &str) -> xfpx_common::report::RunInfo {
    xfpx_common::report::RunInfo {
        vendor: "amd-emulated".into(),
        device: "xfpx CDNA emulator".into(),
        target: Some(target.into()),
        command: Vec::new(),
        mode: "detect".into(),
        started_unix: 0,
        finished_unix: None,
        exit: xfpx_common::report::ExitStatus::Unknown,
        sample_every: 1,
        sample_auto: false,
        truncated: false,
        notes: Vec::new(),
        attached: true,
    }
}

#[test]
fn rewritten_fixture_kernels_match_the_original_on_the_emulator() {
    let mut compared = 0usize;
    let mut failures = Vec::new();
    let mut not_proven = Vec::new();
    let mut total_records = 0usize;
    let mut callee_records = 0usize;
    // Launches whose kernel has matrix (MFMA) instructions, per target, and
    // the records at MFMA sites.
    let mut matrix_launches: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut matrix_records = 0usize;
    let (mut dyn_orig, mut dyn_detect, mut dyn_screen) = (0u64, 0u64, 0u64);
    for target in TARGETS {
        for path in launches() {
            let launch = Launch::load(&path).expect("launch");
            if !launch.runs_on(target) {
                continue;
            }
            let co_path = launch.dir.join(launch.code_object.replace("{target}", target));
            let Ok(original) = std::fs::read(&co_path) else { continue };
            let name = format!("{target}/{}", launch.kernel);
            let orig = match run(&launch, &|_| original.clone()) {
                Ok(r) => r,
                Err(e) => {
                    // The emulator cannot run this launch at all: nothing to compare.
                    not_proven.push(format!("{name}: the original does not run on the emulator: {e}"));
                    continue;
                }
            };
            let parsed = xfpx_amd::CodeObject::parse(&original).expect("parses");
            let isa: xfpx_amd_isa::Target = target.parse().expect("target");
            let observed = match observed(&path, target, &original, &orig) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            // Detect mode.
            let (rw, out) = detect_run(&launch, &original, KernelFilter::exactly(&launch.kernel));
            let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel outcome");
            // Every device function this kernel reaches is instrumented: in
            // place, or (another kernel reaching it being excluded by the
            // filter) in a copy made for this kernel.
            let expected = observed.clone();
            for f in out.functions.iter().filter(|f| f.reached_by.contains(&launch.kernel)) {
                if let Err(why) = runs_instrumented(&out, f, &launch.kernel) {
                    failures.push(format!("{name}: function {}: {why}", f.name));
                }
            }
            callee_records += expected.iter().filter(|key| key.0 != launch.kernel).count();
            let Some((rw, got, found)) = rewritten_records(&name, &orig, rw, &out, &mut failures, &mut not_proven)
            else {
                continue;
            };
            if k.state.instrumented() && found != expected {
                failures.push(format!(
                    "{name}: records differ: missing {:?}, extra {:?}",
                    expected.difference(&found).collect::<Vec<_>>(),
                    found.difference(&expected).collect::<Vec<_>>()
                ));
            }
            if launch.kernel == REFUSED.0 && !refused_as_expected(&launch.kernel, &k.state) {
                failures.push(format!("{name}: not refused as expected: {:?}", k.state));
            }
            if k.state != KernelState::Instrumented && !expected.is_empty() && launch.kernel != REFUSED.0 {
                failures.push(format!("{name}: not instrumented ({:?}) but raises {expected:?}", k.state));
            }
            if std::env::var("RW_DEBUG").is_ok_and(|d| name.contains(&d)) {
                println!("{name}: table {:?}", &rw.table[..out.table.bytes() as usize]);
                println!("{name}: slots {:?}", out.table.slots);
                println!("{name}: expected {expected:?}");
            }
            // The same records reach an xfpx-report/1 report.
            let mut collector = xfpx_common::report::Collector::new(run_info(target), None);
            got.record_into(&mut collector, 0);
            let report =
                xfpx_common::report::Report::from_json(&collector.report().to_json()).expect("report round-trips");
            if report.records().count() != found.len() {
                failures.push(format!(
                    "{name}: report has {} records, table {}",
                    report.records().count(),
                    found.len()
                ));
            }
            total_records += found.len();
            let mfma_at =
                |addr: u64| instr_at(&parsed, isa, addr).is_some_and(|i| i.base_mnemonic.starts_with("v_mfma"));
            let kernel_code = parsed.functions.iter().find(|f| f.name == launch.kernel).map(|f| f.code.clone());
            let has_mfma = kernel_code.is_some_and(|c| {
                parsed.elf.bytes_at_addr(c.start, c.end - c.start).ok().is_some_and(|b| {
                    xfpx_amd_isa::disassemble(isa, b, c.start)
                        .any(|(_, i)| i.is_ok_and(|i| i.base_mnemonic.starts_with("v_mfma")))
                })
            });
            if has_mfma {
                *matrix_launches.entry(target).or_default() += 1;
                matrix_records += found
                    .iter()
                    .filter(|key| {
                        parsed.functions.iter().find(|f| f.name == key.0).is_some_and(|f| mfma_at(f.code.start + key.1))
                    })
                    .count();
            }
            // Screen mode.
            dyn_screen += screen_check(&name, &launch, &original, &orig, &mut failures, &mut not_proven);
            dyn_orig += orig.stats.instructions;
            dyn_detect += rw.stats.instructions;
            compared += 1;
        }
    }
    println!(
        "emulated launches compared: {compared} (not proven {}); exception records {total_records} ({callee_records} in device functions); dynamic instructions original {dyn_orig}, detect {dyn_detect} ({:.2}x), screen {dyn_screen} ({:.2}x)",
        not_proven.len(),
        dyn_detect as f64 / dyn_orig.max(1) as f64,
        dyn_screen as f64 / dyn_orig.max(1) as f64
    );
    println!("launches with MFMA compared: {matrix_launches:?}; records at MFMA sites {matrix_records}");
    for n in &not_proven {
        println!("NOT PROVEN {n}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(compared >= 40, "only {compared} launches ran");
    // The MFMA proof: kernels with MFMA on gfx90a and gfx942 (and
    // the other targets) ran identical, hazard-free, with exact records, and
    // their planted NaN/Inf inputs were recorded at the MFMA.
    // gfx908 lacks the f64 and bf16_1k MFMA launches; one launch keeps its
    // accumulators in AGPRs on every target (the unified file on gfx90a+).
    for t in TARGETS {
        let want = if t == "gfx908" { 4 } else { 6 };
        assert!(
            matrix_launches.get(t).copied().unwrap_or(0) >= want,
            "{t}: too few MFMA launches: {matrix_launches:?}"
        );
    }
    assert!(matrix_records >= 48, "only {matrix_records} records at MFMA sites");
    assert!(callee_records > 0, "no exception raised inside a device function was recorded");
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// Appended code 4 MiB above the object (beyond `s_branch` reach): anchors
/// reach their trampolines through long-jump islands in the padding between
/// kernels, trampolines return with `s_setpc_b64`; where no island space is
/// left the site is refused with a reason. What is instrumented still
/// matches the original run exactly.
#[test]
fn far_trampolines_through_islands_match_the_original() {
    let mut islands = 0usize;
    let mut refused = 0usize;
    let mut compared = 0usize;
    let (mut function_islands, mut function_records) = (0usize, 0usize);
    for target in ["gfx90a", "gfx942"] {
        for kernel in
            ["exc_nan", "exc_div0", "exc_overflow", "f32_div", "daxpy", "f64_divsqrt", "call_nested", "call_f64"]
        {
            let path = emulator_fixtures().join("launches").join(format!("{kernel}.json"));
            let launch = Launch::load(&path).expect("launch");
            if !launch.runs_on(target) {
                continue;
            }
            let original = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))).expect("co");
            let orig = run(&launch, &|_| original.clone()).expect("original runs");
            let opts = RewriteOptions {
                mode: Mode::Detect,
                kernels: KernelFilter::exactly(&launch.kernel),
                min_distance: Some(4 << 20),
                ..Default::default()
            };
            let (rw, out) = rewritten_run(&launch, &original, opts);
            let rw = rw.expect("rewritten runs");
            assert_eq!(out.strategy, Some(xfpx_amd::builder::Strategy::NewSegment));
            let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel");
            assert_eq!(rw.outputs, orig.outputs, "{target}/{kernel}");
            assert!(rw.stats.hazards().is_empty(), "{target}/{kernel}");
            islands += k.islands;
            refused += k.refused_sites.len();
            let functions = out.functions.iter().filter(|f| f.reached_by.contains(&launch.kernel));
            for r in k.refused_sites.iter().chain(functions.clone().flat_map(|f| &f.refused_sites)) {
                assert!(r.reason.contains("island"), "{}", r.reason);
            }
            for f in functions {
                assert!(f.state.instrumented(), "{target}/{kernel} {}", f.name);
                function_islands += f.islands;
            }
            // Every record found is one the emulator observed at that site
            // (of the kernel or of a function it calls).
            let parsed = xfpx_amd::CodeObject::parse(&original).expect("co");
            let seen: BTreeSet<(String, u64)> = orig
                .stats
                .observations
                .results
                .keys()
                .filter_map(|(pc, _, _)| locate(&parsed, pc - orig.stats.code_base))
                .collect();
            let got = table::decode(&out.table, &out.sites, &rw.table, 0).expect("decodes");
            for (f, r) in &got.records {
                assert!(
                    seen.contains(&(f.clone(), r.site.offset)),
                    "{target}/{kernel}: record at {f}+{:#x} not observed",
                    r.site.offset
                );
                function_records += usize::from(f != &launch.kernel);
            }
            compared += 1;
        }
    }
    println!(
        "far placement: {compared} launches, {islands} islands ({function_islands} for device functions), {refused} sites refused for want of island space; {function_records} records in device functions"
    );
    assert!(islands > 0 && function_islands > 0 && function_records > 0);
}

/// Count mode puts a probe before every instruction, so every kind of
/// instruction is displaced and re-executed (branches re-encoded, calls and
/// `s_getpc_b64` relocated). On every fixture launch: outputs bit-identical,
/// no hazard, and the counter equals the emulator's dynamic wave-instruction
/// count of the original kernel, the instructions of the device functions
/// it calls included (they are instrumented too, and count into counters of
/// their own).
#[test]
fn counting_every_instruction_matches_the_emulators_count() {
    let mut compared = 0usize;
    let mut refused = 0usize;
    let mut failures = Vec::new();
    let mut not_proven = Vec::new();
    for target in TARGETS {
        for path in launches() {
            let launch = Launch::load(&path).expect("launch");
            if !launch.runs_on(target) {
                continue;
            }
            let Ok(original) = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))) else {
                continue;
            };
            let name = format!("{target}/{}", launch.kernel);
            let Ok(orig) = run(&launch, &|_| original.clone()) else { continue };
            let (rw, out) = rewritten_run(
                &launch,
                &original,
                RewriteOptions {
                    mode: Mode::Count,
                    kernels: KernelFilter::exactly(&launch.kernel),
                    ..Default::default()
                },
            );
            let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel");
            if launch.kernel == REFUSED.0 {
                match refused_as_expected(&launch.kernel, &k.state) {
                    true => refused += 1,
                    false => failures.push(format!("{name}: not refused as expected: {:?}", k.state)),
                }
                continue;
            }
            let rw = match rw {
                Ok(r) => r,
                Err(e) if emulator_lacks(&e) => {
                    not_proven.push(format!("{name}: {e}"));
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{name}: rewritten does not run: {e}"));
                    continue;
                }
            };
            if !k.refused_sites.is_empty() {
                failures.push(format!("{name}: refused {:?}", k.refused_sites));
            }
            if rw.outputs != orig.outputs {
                failures.push(format!("{name}: output buffers differ"));
            }
            if !rw.stats.hazards().is_empty() {
                failures.push(format!("{name}: hazards {:?}", rw.stats.hazards()));
            }
            let got = table::decode(&out.table, &out.sites, &rw.table, 0).expect("decodes");
            let count: u64 = got.counters.iter().map(|c| u64::from(c.value)).sum();
            // A function shared with a kernel the filter excludes counts in
            // the copy made for this kernel.
            for f in out.functions.iter().filter(|f| f.reached_by.contains(&launch.kernel)) {
                if let Err(why) = runs_instrumented(&out, f, &launch.kernel) {
                    failures.push(format!("{name}: function {}: {why}", f.name));
                }
                if !f.refused_sites.is_empty() {
                    failures.push(format!("{name}: function {} refused {:?}", f.name, f.refused_sites));
                }
            }
            if count != orig.stats.instructions {
                failures.push(format!("{name}: counted {count}, the emulator executed {}", orig.stats.instructions));
            }
            compared += 1;
        }
    }
    println!("count mode: {compared} launches compared, not proven {}", not_proven.len());
    for n in &not_proven {
        println!("NOT PROVEN {n}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(compared >= 40, "{compared}");
    assert!(failures.is_empty(), "{} failures", failures.len());
    assert_eq!(refused, TARGETS.len(), "{} refused on every target", REFUSED.0);
}

/// Whether `kernel` is [`REFUSED`]'s and `state` refuses it with its reason.
fn refused_as_expected(kernel: &str, state: &KernelState) -> bool {
    kernel == REFUSED.0 && matches!(state, KernelState::Skipped { reason } if reason.contains(REFUSED.1))
}

/// Whether `kernel` runs function `f` instrumented: `f` is instrumented in
/// place, is a copy made for it, has such a copy (the original stays as it
/// is for a kernel the filter excludes, or one that cannot hold its scratch
/// registers), or has nothing to instrument.
fn runs_instrumented(out: &rewrite::RewriteOutcome, f: &rewrite::FunctionOutcome, kernel: &str) -> Result<(), String> {
    let copied = || {
        out.functions
            .iter()
            .any(|c| c.copy_of == Some(f.address) && c.reached_by == [kernel] && c.state == KernelState::Instrumented)
    };
    match &f.state {
        KernelState::Instrumented => Ok(()),
        KernelState::Skipped { .. } if copied() => Ok(()),
        KernelState::Skipped { reason } if reason == "nothing to instrument" => Ok(()),
        other => Err(format!("not instrumented for {kernel}: {other:?}")),
    }
}

/// A tool whose probes read what a load has just written: each
/// `global_load_dword` (f32) and `global_load_dwordx2` (f64) result is checked right after the load. The wait pass
/// must make the probe wait for that load (and only for it); without the
/// waits the emulator reports the probe reading an in-flight register.
#[derive(Debug)]
struct LoadedValueChecker;

impl xfpx_common::tool::Tool for LoadedValueChecker {
    fn name(&self) -> &'static str {
        "loaded-values"
    }

    fn plan(
        &self,
        view: &xfpx_common::view::KernelView,
        sites: &mut xfpx_common::site::SiteTable,
    ) -> xfpx_common::plan::Plan {
        use xfpx_common::probe::{Action, Probe, ValueRef, When};
        let mut plan = xfpx_common::plan::Plan::new(view.name.clone());
        for (i, ins) in view.instrs.iter().enumerate() {
            let format = if ins.text.starts_with("global_load_dword ") {
                FpFormat::F32
            } else if ins.text.starts_with("global_load_dwordx2 ") {
                FpFormat::F64
            } else {
                continue;
            };
            {
                let site = sites.intern(&view.name, ins.offset, ins.text.clone(), None);
                plan.probes.push(Probe {
                    instr: i as u32,
                    site,
                    when: When::After,
                    action: Action::CheckFp {
                        values: [ValueRef::Def(0)].into(),
                        format,
                        kinds: xfpx_common::fp::ExceptionKinds::VALUE,
                    },
                });
            }
        }
        plan
    }
}

#[test]
fn probes_reading_loaded_registers_wait_for_exactly_their_loads() {
    let mut waits = 0usize;
    let mut hazards_without = 0usize;
    for target in ["gfx90a", "gfx942"] {
        for kernel in ["exc_nan", "exc_none", "saxpy", "daxpy", "f32_arith"] {
            let launch =
                Launch::load(&emulator_fixtures().join("launches").join(format!("{kernel}.json"))).expect("launch");
            let original = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))).expect("co");
            let orig = run(&launch, &|_| original.clone()).expect("original runs");
            for insert_waits in [true, false] {
                let opts = RewriteOptions {
                    kernels: KernelFilter::exactly(&launch.kernel),
                    insert_waits,
                    ..Default::default()
                };
                let (rw, out) = rewritten_run_with(&launch, &original, opts, &|b, o| {
                    rewrite::rewrite_with(b, o, &LoadedValueChecker).expect("rewrites")
                });
                let rw = rw.expect("runs");
                let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel");
                assert_eq!(rw.outputs, orig.outputs, "{target}/{kernel}");
                if insert_waits {
                    assert!(rw.stats.hazards().is_empty(), "{target}/{kernel}: {:?}", rw.stats.hazards());
                    assert!(k.waits_added > 0, "{target}/{kernel}");
                    // Never a blanket wait: each names vmcnt only.
                    assert!(
                        k.appended
                            .iter()
                            .filter(|l| l.text.starts_with("s_waitcnt"))
                            .all(|l| !l.text.contains("lgkmcnt")),
                        "{:?}",
                        k.appended
                    );
                    waits += k.waits_added;
                } else {
                    hazards_without += rw.stats.hazards().len();
                }
            }
        }
    }
    println!("loaded-value probes: {waits} waits added; without them the emulator reports {hazards_without} hazards");
    assert!(hazards_without > 0);
}

/// The call graph of the calls fixture: each kernel reaches exactly the
/// functions its source calls (through `s_swappc_b64` targets computed by
/// `s_getpc_b64` + add, the second call of `call_f64` after the first
/// returned), and a function two kernels call is reached by both.
#[test]
fn calls_fixture_reaches_exactly_the_called_functions() {
    for target in TARGETS {
        let path = emulator_fixtures().join(target).join("calls.co");
        let original = std::fs::read(&path).expect("calls.co");
        let out = rewrite::rewrite(&original, &RewriteOptions::default()).expect("rewrites");
        let reached: Vec<(&str, Vec<&str>)> = out
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.reached_by.iter().map(String::as_str).collect()))
            .collect();
        let mut reached = reached;
        reached.sort();
        assert_eq!(
            reached,
            vec![
                ("_Z10square_sumff", vec!["call_shared_a", "call_shared_b"]),
                ("_Z14scaled_productff", vec!["call_nested"]),
                ("_Z5blendff", vec!["call_nested"]),
                ("_Z6spreaddd", vec!["call_f64"]),
            ],
            "{target}"
        );
        for f in &out.functions {
            assert_eq!(f.state, KernelState::Instrumented, "{target} {}", f.name);
            assert!(f.trampolines > 0, "{target} {}", f.name);
        }
    }
}

/// A function shared by two kernels is instrumented when both are (its
/// scratch above both kernels' registers, both descriptors grown): each
/// kernel's run records exactly the exceptions the emulator saw, the
/// shared function's under its own name; with a filter that leaves one of
/// the two out, the function stays as it was (the rewrite says why) and the
/// selected kernel calls an instrumented copy of its own: the same records.
#[test]
fn a_function_shared_by_two_kernels_is_instrumented_when_both_are() {
    let mut records_in_shared = 0usize;
    let mut copied_records = 0usize;
    for target in TARGETS {
        for kernel in ["call_shared_a", "call_shared_b"] {
            let launch =
                Launch::load(&emulator_fixtures().join("launches").join(format!("{kernel}.json"))).expect("launch");
            let original = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))).expect("co");
            let parsed = xfpx_amd::CodeObject::parse(&original).expect("parses");
            let orig = run(&launch, &|_| original.clone()).expect("original runs");
            let observed: BTreeSet<Key> = orig
                .stats
                .observations
                .results
                .keys()
                .map(|&(pc, k, f)| {
                    let (function, off) = locate(&parsed, pc - orig.stats.code_base).expect("located");
                    (function, off, k, f)
                })
                .collect();
            let (rw, out) = detect_run(&launch, &original, KernelFilter::default());
            let rw = rw.expect("rewritten runs");
            assert_eq!(rw.outputs, orig.outputs, "{target}/{kernel}");
            assert!(rw.stats.hazards().is_empty(), "{target}/{kernel}: {:?}", rw.stats.hazards());
            let shared = out.functions.iter().find(|f| f.name == "_Z10square_sumff").expect("shared function");
            assert_eq!(shared.state, KernelState::Instrumented, "{target}");
            let (sg, vg) = shared.scratch.expect("scratch");
            for name in ["call_shared_a", "call_shared_b"] {
                let k = out.kernels.iter().find(|k| k.name == name).expect("kernel");
                let r = k.registers.as_ref().expect("grown");
                assert!(r.scratch_sgpr >= sg && r.scratch_vgpr >= vg, "{target}/{name}: {r:?}");
                assert!(r.vgprs_after >= u32::from(vg) + 5, "{target}/{name}: {r:?}");
            }
            let got = table::decode(&out.table, &out.sites, &rw.table, 0).expect("decodes");
            let found: BTreeSet<Key> =
                got.records.iter().map(|(f, r)| (f.clone(), r.site.offset, r.kind, r.format)).collect();
            assert_eq!(found, observed, "{target}/{kernel}");
            records_in_shared += found.iter().filter(|k| k.0 == "_Z10square_sumff").count();
            // Only one of the two selected: the function stays as it is for
            // the other, and the selected kernel calls a copy of its own,
            // whose records are the function's.
            let (rw, out) = detect_run(&launch, &original, KernelFilter::exactly(kernel));
            let rw = rw.expect("runs");
            assert_eq!(rw.outputs, orig.outputs, "{target}/{kernel}");
            assert!(rw.stats.hazards().is_empty(), "{target}/{kernel}: {:?}", rw.stats.hazards());
            let shared = out.functions.iter().find(|f| f.name == "_Z10square_sumff" && f.copy_of.is_none());
            let shared = shared.expect("shared function");
            match &shared.state {
                KernelState::Skipped { reason } => {
                    assert!(reason.contains("which is excluded"), "{reason}")
                }
                other => panic!("{target}/{kernel}: {other:?}"),
            }
            assert!(shared.anchors.is_empty());
            let copy = out.functions.iter().find(|f| f.copy_of == Some(shared.address)).expect("a copy");
            assert_eq!(
                (&copy.state, copy.reached_by.as_slice()),
                (&KernelState::Instrumented, &[kernel.to_string()][..])
            );
            let got = table::decode(&out.table, &out.sites, &rw.table, 0).expect("decodes");
            let found: BTreeSet<Key> =
                got.records.iter().map(|(f, r)| (f.clone(), r.site.offset, r.kind, r.format)).collect();
            assert_eq!(found, observed, "{target}/{kernel} alone");
            copied_records += found.iter().filter(|k| k.0 == "_Z10square_sumff").count();
        }
    }
    println!("shared function: {records_in_shared} records; in copies made for one kernel: {copied_records}");
    assert!(records_in_shared >= 8, "{records_in_shared}");
    assert!(copied_records >= 8, "{copied_records}");
}

/// A kernel whose descriptor cannot grow (all 256 VGPRs of a gfx908 lane
/// already allocated) keeps the functions it reaches uninstrumented, and
/// the rewrite says which kernel and why; the object still runs as before.
#[test]
fn a_function_whose_caller_cannot_grow_is_left_alone() {
    let launch = Launch::load(&emulator_fixtures().join("launches").join("call_nested.json")).expect("launch");
    let mut original = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", "gfx908"))).expect("co");
    {
        let co = xfpx_amd::CodeObject::parse(&original).expect("parses");
        let kd = co.kernel("call_nested").expect("kernel").descriptor_address;
        let section = co.elf.section_at_addr(kd).expect("section");
        // compute_pgm_rsrc1 (descriptor byte 48): GRANULATED_WORKITEM_VGPR_COUNT [5:0] at its maximum.
        let at = (section.offset + (kd - section.addr)) as usize + 48;
        original[at] |= 0x3f;
    }
    let orig = run(&launch, &|_| original.clone()).expect("original runs");
    let (rw, out) = detect_run(&launch, &original, KernelFilter::exactly("call_nested"));
    assert_eq!(rw.expect("runs").outputs, orig.outputs);
    for name in ["_Z5blendff", "_Z14scaled_productff"] {
        let f = out.functions.iter().find(|f| f.name == name).expect("function");
        match &f.state {
            KernelState::Skipped { reason } => {
                assert!(reason.contains("kernel call_nested cannot hold its scratch registers"), "{reason}");
                assert!(reason.contains("VGPRs"), "{reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(f.anchors.is_empty());
    }
}
