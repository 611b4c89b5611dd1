//! Plans made ahead of a first launch (`runtime::ahead`): on every
//! function of the GPU suite's listings, a launch that finds its plan made
//! from the disassembler's listing gets exactly the calls, sites (ids,
//! texts, source lines) a plan made at the launch from NVBit's strings gives; a
//! plan whose instructions differ from NVBit's is dropped for one made
//! there.

use std::path::{Path, PathBuf};
use xfpx_common::config::{Mode, RunSettings};
use xfpx_nvidia::runtime::{KernelNames, ToolCore};

/// Each function of a listing: its name, its lines as the disassembler
/// prints them, and its instructions as NVBit's strings (offset, text).
type Listed = (String, String, Vec<(u64, String)>);

fn functions(listing: &str) -> Vec<Listed> {
    let mut out: Vec<Listed> = Vec::new();
    for line in listing.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            out.push((name.to_string(), String::new(), Vec::new()));
            continue;
        }
        let Some((_, raw, nvbit)) = out.last_mut() else { continue };
        raw.push_str(line);
        raw.push('\n');
        let Some((offset, rest)) = line.trim().strip_prefix("/*").and_then(|r| r.split_once("*/")) else { continue };
        let Ok(offset) = u64::from_str_radix(offset, 16) else { continue };
        // NVBit's string: the instruction and its `;`, no address or encoding
        let text = rest.split("/*").next().unwrap_or("").trim();
        if !text.is_empty() {
            nvbit.push((offset, text.to_string()));
        }
    }
    out
}

fn core(mode: Mode, report: &Path) -> ToolCore {
    let settings = RunSettings { mode, report_path: report.to_path_buf(), ..RunSettings::default() };
    ToolCore::new(settings.check().expect("valid")).expect("core")
}

fn listings() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/gpu/listings");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("listings")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sass") && !p.to_string_lossy().ends_with(".lines.sass"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_plan_made_ahead_gives_the_launch_what_planning_there_gives() {
    let report = std::env::temp_dir().join(format!("xfpx-ahead-{}.json", std::process::id()));
    let mut checked = 0;
    for file in listings() {
        let text = std::fs::read_to_string(&file).expect("read");
        for mode in [Mode::Fast, Mode::Detect] {
            let (mut there, mut ahead) = (core(mode, &report), core(mode, &report));
            let planner = ahead.ahead_planner().expect("the detector plans ahead");
            for (name, raw, nvbit) in functions(&text) {
                // both know the same source lines by the launch
                let lined = format!("\tFunction : {name}\n\t//## File \"k.cu\", line 7\n{raw}");
                there.load_listing_lines(&lined).expect("lines");
                ahead.load_listing_lines(&lined).expect("lines");
                assert!(planner.plan(&name, &raw) > 0, "{}: {name} planned ahead", file.display());
                let names = KernelNames { mangled: &name, demangled: &name };
                let made_there = there.instrument_function(names, &nvbit, 0x1000);
                let adopted = ahead.instrument_function(names, &nvbit, 0x1000);
                assert_eq!(adopted, made_there, "{}: {name} ({mode:?})", file.display());
                assert!(ahead.sites().iter().eq(there.sites().iter()), "{name}: the same sites, lines included");
                checked += 1;
            }
            let (a, t) = (ahead.report(), there.report());
            assert_eq!(serde_json::to_value(&a.kernels).ok(), serde_json::to_value(&t.kernels).ok());
            let note = a.run.notes.iter().any(|n| n.contains("functions were planned before their first launch"));
            assert!(!note, "the note is made when the run finishes");
        }
    }
    assert!(checked >= 30, "{checked} functions");
    let _ = std::fs::remove_file(&report);
}

#[test]
fn a_plan_made_ahead_of_other_instructions_is_dropped() {
    let report = std::env::temp_dir().join(format!("xfpx-ahead-differ-{}.json", std::process::id()));
    let text = std::fs::read_to_string(&listings()[0]).expect("read");
    let (name, raw, mut nvbit) = functions(&text).into_iter().max_by_key(|f| f.2.len()).expect("a function");
    let mut there = core(Mode::Fast, &report);
    let mut ahead = core(Mode::Fast, &report);
    ahead.ahead_planner().expect("planner").plan(&name, &raw);
    // NVBit saw other code than the disassembly ahead (relocated at load)
    assert_ne!(nvbit[0].1, "NOP ;");
    nvbit[0].1 = "NOP ;".to_string();
    let names = KernelNames { mangled: &name, demangled: &name };
    assert_eq!(ahead.instrument_function(names, &nvbit, 0), there.instrument_function(names, &nvbit, 0));
    ahead.finish().expect("finish");
    let written = std::fs::read_to_string(&report).expect("report");
    assert!(written.contains("1 plans made ahead were dropped"), "{written}");
    let _ = std::fs::remove_file(&report);
}

#[test]
fn other_tools_plan_at_the_launch() {
    let report = std::env::temp_dir().join(format!("xfpx-ahead-tools-{}.json", std::process::id()));
    let counters = RunSettings {
        tool: xfpx_common::tool::ToolKind::Counters,
        report_path: report.clone(),
        ..RunSettings::default()
    };
    let core = ToolCore::new(counters.check().expect("valid")).expect("core");
    assert!(core.ahead_planner().is_none());
}
