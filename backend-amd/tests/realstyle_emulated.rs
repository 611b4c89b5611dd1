//! The fixtures in the styles of real code that broke the rewriter
//! (`tests/realcode/fixtures`: library-style template kernels, a large
//! unrolled transcendental-heavy kernel, a device-function tree, a kernel
//! without launch bounds at the register limit, a library linked from 26
//! translation units; real HIP headers and device math), on the emulator
//! for gfx908, gfx90a, gfx942 and gfx950.
//!
//! Every launch the emulator runs: outputs of the rewritten kernel (detect
//! and screen) bit-identical to the original's, no hazard, and the recorded
//! (site, kind, format) set equal to what the emulator observed, except at
//! sites the rewrite refused (each such site named in the outcome). The
//! coverage of each whole object is printed per target (FP sites, checked,
//! refused by reason). The kernel at its register budget is checked whole
//! on every target ([`WHOLE`]).

mod exact_records;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use exact_records::{detect_run, observed, rewritten_records, run, screen_check, Key, TARGETS};
use xfpx_amd::replay::replay_saved;
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::ReplayOptions;
use xfpx_common::config::KernelFilter;
use xfpx_common::report::{KernelStatus, SiteCoverage};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/realcode/fixtures")
}

fn launches() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures().join("launches"))
        .expect("launches")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn code_object(launch: &Launch, target: &str) -> Vec<u8> {
    std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))).expect("code object")
}

/// The (unit, offset) sites a rewrite left unchecked for `kernel`: its own
/// refused sites and those of the functions it reaches, and every site of
/// a unit that was not instrumented at all.
fn unchecked_in(out: &rewrite::RewriteOutcome, kernel: &str) -> (BTreeSet<(String, u64)>, BTreeSet<String>) {
    let mut sites = BTreeSet::new();
    let mut units = BTreeSet::new();
    if let Some(k) = out.kernels.iter().find(|k| k.name == kernel) {
        sites.extend(k.refused_sites.iter().map(|r| (k.name.clone(), r.offset)));
        if !k.state.instrumented() {
            units.insert(k.name.clone());
        }
    }
    for f in out.functions.iter().filter(|f| f.reached_by.iter().any(|r| r == kernel)) {
        sites.extend(f.refused_sites.iter().map(|r| (f.name.clone(), r.offset)));
        if !f.state.instrumented() {
            units.insert(f.name.clone());
        }
    }
    (sites, units)
}

/// Kernels every site of which must be checked: `register_limit`, at its
/// register budget on gfx90a and later (its sites borrow SGPRs, saving
/// live ones in lanes where too few are dead).
const WHOLE: [&str; 1] = ["register_limit"];

/// One target in CI (about 20 s of a debug build: each library launch
/// rewrites a 44-kernel object three times).
#[test]
fn real_style_launches_run_transparently_and_record_what_the_emulator_observes() {
    check_launches(&["gfx942"], 8);
}

/// Every target (about a minute and a half in a debug build): `cargo test
/// -p xfpx-amd --test realstyle_emulated -- --ignored`.
#[test]
#[ignore]
fn real_style_launches_on_every_target() {
    check_launches(&TARGETS, 24);
}

/// Runs every launch on `targets`; at least `at_least` must run.
fn check_launches(targets: &[&str], at_least: usize) {
    let (mut compared, mut records, mut unchecked_records) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut not_proven = Vec::new();
    for &target in targets {
        for path in launches() {
            let launch = Launch::load(&path).expect("launch");
            let original = code_object(&launch, target);
            let name = format!("{target}/{}", path.file_stem().unwrap_or_default().to_string_lossy());
            let orig = match run(&launch, &|_| original.clone()) {
                Ok(r) => r,
                Err(e) => {
                    not_proven.push(format!("{name}: the original does not run on the emulator: {e}"));
                    continue;
                }
            };
            let expected = match observed(&path, target, &original, &orig) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let (rw, out) = detect_run(&launch, &original, KernelFilter::exactly(&launch.kernel));
            let k = out.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel outcome");
            let (refused, uninstrumented) = unchecked_in(&out, &launch.kernel);
            if WHOLE.contains(&launch.kernel.as_str()) && (k.state != KernelState::Instrumented || !refused.is_empty())
            {
                let c = k.coverage.clone().unwrap_or_default();
                failures.push(format!("{name}: not checked whole: {:?} {c:?}", k.state));
            }
            let Some((_, _, found)) = rewritten_records(&name, &orig, rw, &out, &mut failures, &mut not_proven) else {
                continue;
            };
            let extra: Vec<&Key> = found.difference(&expected).collect();
            // What was observed but not recorded must sit where the rewrite
            // said it does not look.
            let missed: Vec<&Key> = expected.difference(&found).collect();
            let unexplained: Vec<&&Key> = missed
                .iter()
                .filter(|key| !uninstrumented.contains(&key.0) && !refused.contains(&(key.0.clone(), key.1)))
                .collect();
            if !extra.is_empty() || !unexplained.is_empty() {
                failures.push(format!("{name}: records differ: missing {unexplained:?}, extra {extra:?}"));
            }
            let c = k.coverage.clone().unwrap_or_default();
            println!(
                "{name}: {} ({} of {} FP sites checked); {} records = observed {} less {} at unchecked sites",
                state_word(&k.state),
                c.checked,
                c.fp_sites,
                found.len(),
                expected.len(),
                missed.len()
            );
            records += found.len();
            unchecked_records += missed.len();
            // Screen mode keeps the outputs too, and records the exception bits.
            screen_check(&name, &launch, &original, &orig, &mut failures, &mut not_proven);
            compared += 1;
        }
    }
    println!(
        "real-style launches compared: {compared} (not proven {}); {records} records, {unchecked_records} observed exceptions at sites left unchecked",
        not_proven.len()
    );
    for n in &not_proven {
        println!("NOT PROVEN {n}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(compared >= at_least, "only {compared} launches ran");
    assert!(records > 0, "no exception was recorded");
    assert!(failures.is_empty(), "{} failures", failures.len());
}

fn state_word(s: &KernelState) -> String {
    match s {
        KernelState::Instrumented => "instrumented".into(),
        KernelState::Partial => "partial".into(),
        KernelState::Excluded => "excluded".into(),
        KernelState::Skipped { reason } => format!("skipped: {reason}"),
    }
}

/// A refusal's reason without the addresses and numbers that make each
/// site's reason its own.
fn reason_class(reason: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for ch in reason.chars() {
        let digit = ch.is_ascii_hexdigit() && (in_number || ch.is_ascii_digit());
        if digit || (in_number && ch == 'x') {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    out
}

/// Each fixture object rewritten whole (every kernel) for detect and for
/// screen, per target: kernels by state, FP sites, checked, refused by
/// reason. The library is library-sized, and every kernel's coverage adds
/// up; the figures themselves are printed, not asserted (the rewriter's
/// coverage of these styles is what is being measured). A measurement
/// (tens of seconds): `cargo test -p xfpx-amd --test realstyle_emulated --
/// --ignored`; `tests/realcode/measure.py` tabulates the same per variant.
#[test]
#[ignore]
fn real_style_objects_report_their_coverage() {
    let mut library_checked = false;
    for target in TARGETS {
        let dir = fixtures().join(target);
        let mut objects: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("fixture folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "co"))
            .collect();
        objects.sort();
        for object in objects {
            let bytes = std::fs::read(&object).expect("object");
            let file = object.file_name().unwrap_or_default().to_string_lossy().to_string();
            for mode in [Mode::Detect, Mode::Screen] {
                let out = rewrite::rewrite(&bytes, &RewriteOptions { mode, ..Default::default() }).expect("rewrites");
                let mut states: BTreeMap<&str, usize> = BTreeMap::new();
                let mut total = SiteCoverage::default();
                let units = out.kernels.iter().map(|k| (&k.state, &k.coverage, k.instructions)).chain(
                    out.functions
                        .iter()
                        .filter(|f| !f.reached_by.is_empty())
                        .map(|f| (&f.state, &f.coverage, f.instructions)),
                );
                let mut instructions = 0usize;
                for (state, coverage, n) in units {
                    instructions += n;
                    let Some(c) = coverage else { continue };
                    assert!(c.checked + c.refused_sites() <= c.fp_sites, "{target}/{file}: {c:?}");
                    match state {
                        KernelState::Partial => assert!(c.refused_sites() > 0, "{target}/{file}: {c:?}"),
                        KernelState::Skipped { .. } => assert_eq!(c.checked, 0, "{target}/{file}: {c:?}"),
                        _ => {}
                    }
                    total.fp_sites += c.fp_sites;
                    total.checked += c.checked;
                    for r in &c.refused {
                        total.refuse(&reason_class(&r.reason), r.sites);
                    }
                }
                for k in &out.kernels {
                    *states
                        .entry(match k.state {
                            KernelState::Instrumented => "instrumented",
                            KernelState::Partial => "partial",
                            KernelState::Excluded => "excluded",
                            KernelState::Skipped { .. } => "skipped",
                        })
                        .or_default() += 1;
                }
                println!(
                    "{target}/{file} {}: {} kernels {states:?}, {instructions} instructions; {} of {} FP sites checked",
                    mode.name(),
                    out.kernels.len(),
                    total.checked,
                    total.fp_sites
                );
                for r in &total.refused {
                    println!("  {} refused: {}", r.sites, r.reason);
                }
                if file == "library.co" {
                    // 26 translation units, 49 kernels, a few thousand instructions.
                    assert!(out.kernels.len() >= 40 && instructions >= 3000, "{target}: {instructions}");
                    library_checked = true;
                }
            }
        }
    }
    assert!(library_checked, "no library object");
}

/// The whole library, and the object of the kernel at its register
/// budget, rewritten at once (gfx942): every kernel instrumented whole,
/// and so in replay's report of the saved object. The library once had
/// kernels partial for anchors out of reach of the appended code (relays
/// and long jumps now reach every one); `register_limit` had most sites
/// refused for want of dead SGPRs. (A partial kernel's report:
/// `coverage.rs`.)
#[test]
fn whole_objects_rewritten_at_once_are_instrumented_whole_in_replays_report() {
    let target = "gfx942";
    let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    for name in ["lib_black_scholes", "register_limit"] {
        let path = fixtures().join(format!("launches/{name}.json"));
        let launch = Launch::load(&path).expect("launch");
        let whole = rewrite::rewrite(
            &code_object(&launch, target),
            &RewriteOptions { mode: Mode::Detect, table: TableAddress::Patchable, ..Default::default() },
        )
        .expect("rewrites");
        let not_whole: Vec<(&str, &KernelState)> = whole
            .kernels
            .iter()
            .filter(|k| k.state != KernelState::Instrumented)
            .map(|k| (k.name.as_str(), &k.state))
            .collect();
        assert!(not_whole.is_empty(), "{name}: kernels not instrumented whole: {not_whole:?}");
        let dir = tempfile::tempdir().expect("tempdir");
        let saved = dir.path().join("whole.co");
        std::fs::write(&saved, &whole.bytes).expect("write");
        let replayed = replay_saved(&path, &ReplayOptions { code_object: Some(saved), ..opts.clone() })
            .expect("replays")
            .expect("rewritten");
        let k = whole.kernels.iter().find(|k| k.name == launch.kernel).expect("kernel");
        let kr = replayed.report.kernels.iter().find(|r| r.name == launch.kernel).expect("kernel report");
        assert_eq!((&kr.status, kr.coverage.as_ref()), (&KernelStatus::Instrumented, k.coverage.as_ref()), "{name}");
        assert_eq!(replayed.report.coverage_lost().count(), 0, "{name}");
    }
}

/// The library linked by clang-22 (gfx950) carries one metadata note per
/// code-generation partition: the object reader merges them, so every
/// kernel the symbols name has its metadata (the first note alone has 9 of
/// the 44), on every target.
#[test]
fn the_library_objects_metadata_lists_every_kernel() {
    for target in TARGETS {
        let bytes = std::fs::read(fixtures().join(target).join("library.co")).expect("library");
        let co = xfpx_amd::CodeObject::parse(&bytes).expect("parses");
        let meta = co.metadata.as_ref().expect("metadata");
        assert_eq!(meta.kernels.len(), 44, "{target}");
        let program = xfpx_amd_emu::Program::parse(&bytes).expect("loads");
        assert_eq!(program.kernels.len(), 44, "{target}");
    }
}
