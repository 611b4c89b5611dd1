//! `xfpx demo`: the bundled demo, needing no GPU. Three kernels of a small
//! AMD program (gfx942), one raising a NaN, one an overflow and one a
//! division by zero, are rewritten for the exception detector and run on
//! the CDNA emulator with inputs chosen to raise them (as `xfpx replay
//! --mode detect` does); the findings the instrumentation recorded are
//! shown as a user would see them.
//!
//! The kernels are the emulator's `exceptions` fixture (its HIP source
//! lives with the emulator's fixtures), built the same way plus a line
//! table by `cli/demo/regen.sh`, so that findings show their source line;
//! the launch descriptions are in `cli/demo/`.

use crate::args::DemoArgs;
use crate::output::Outputs;
use crate::report_io::Destination;
use crate::summary;
use anyhow::{anyhow, Context, Result};
use xfpx_common::backend::ReplayRequest;
use xfpx_common::config::{Mode, RunSettings};
use xfpx_common::report::Report;

/// The code object the demo runs: the emulator's `exceptions` fixture for
/// gfx942 with a line table, built by `cli/demo/regen.sh`.
const CODE_OBJECT: &[u8] = include_bytes!("../demo/exceptions.gfx942.co");
/// The launches, in the order they run: (file name, launch description).
const LAUNCHES: [(&str, &str); 3] = [
    ("nan.json", include_str!("../demo/nan.json")),
    ("overflow.json", include_str!("../demo/overflow.json")),
    ("div0.json", include_str!("../demo/div0.json")),
];

/// Replay every launch of the demo from a private directory and merge
/// the reports into one.
pub fn demo_report() -> Result<Report> {
    let dir = crate::run::Scratch::create()?;
    std::fs::write(dir.path().join("exceptions.co"), CODE_OBJECT).context("cannot write the demo's code object")?;
    let detect = RunSettings { mode: Mode::Detect, ..RunSettings::default() }.check()?;
    let mut merged: Option<Report> = None;
    for (name, text) in LAUNCHES {
        let path = dir.path().join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write the demo launch {name}"))?;
        let request = ReplayRequest {
            launch: &path,
            target: None,
            code_object: None,
            instrument: Some(&detect),
            max_instructions: 0,
            max_waves: 0,
            guard_bytes: 0,
            progress: None,
        };
        let outcome = crate::vendor::emulator()
            .replay(&request)
            .map_err(|e| anyhow!(e))
            .with_context(|| format!("demo launch {name}"))?;
        let mut r = outcome.report;
        let kernel = r.kernels.first().map(|k| k.name.clone()).unwrap_or_default();
        r.run.notes = r.run.notes.iter().map(|n| format!("{kernel}: {n}")).collect();
        merged = Some(match merged {
            None => r,
            Some(mut m) => {
                m.kernels.extend(r.kernels);
                m.run.notes.extend(r.run.notes);
                m.run.finished_unix = r.run.finished_unix;
                m
            }
        });
    }
    let mut report = merged.context("the demo has no launches")?;
    report.kernels.sort_by(|a, b| a.name.cmp(&b.name));
    report.run.command = vec!["xfpx".into(), "demo".into()];
    Ok(report)
}

pub fn demo(a: &DemoArgs) -> Result<i32> {
    let dest = a.report.as_deref().map(Destination::from_arg);
    let outputs = Outputs {
        report: dest.as_ref(),
        said_no_report: false,
        html: a.html.as_deref(),
        format: a.format,
        summary_on_stdout: true,
    };
    outputs.check()?;
    let report = demo_report()?;
    let intro = concat!(
        "xfpx demo: three kernels of a small AMD program (gfx942), one with a NaN, one with an\n",
        "overflow and one with a division by zero, instrumented for exception detection and run\n",
        "on xfpx's CDNA emulator (no GPU needed).\n\n"
    );
    outputs.finish(&report, &format!("{intro}{}", summary::summary(&report, true)))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::fp::ExceptionKind;

    fn text_of(bytes: &[u8]) -> Vec<u8> {
        let co = xfpx_amd::CodeObject::parse(bytes).expect("code object");
        let text = co.elf.section_by_name(".text").expect(".text");
        co.elf.section_data(text).expect("contents").to_vec()
    }

    #[test]
    fn the_demo_runs_the_emulator_fixtures_code() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../backend-amd/emulator/fixtures/gfx942/exceptions.co");
        let bytes = std::fs::read(&fixture).expect("the emulator's exceptions fixture");
        assert!(text_of(&bytes) == text_of(CODE_OBJECT), "the demo's code differs from {}", fixture.display());
        let co = xfpx_amd::CodeObject::parse(CODE_OBJECT).expect("code object");
        assert!(xfpx_amd::SourceLines::read(&co.elf).expect("readable").is_some(), "the demo has no line table");
    }

    #[test]
    fn the_demo_code_object_is_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let recorded = std::fs::read_to_string(root.join("backend-amd/fixtures/TOOLS.txt")).unwrap_or_default();
        let installed = std::process::Command::new("clang-19")
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string));
        match installed {
            Some(v) if recorded.lines().next() == Some(v.as_str()) => {
                let tmp = crate::run::Scratch::create().expect("temp dir");
                let status = std::process::Command::new("bash")
                    .arg(root.join("cli/demo/regen.sh"))
                    .arg(tmp.path())
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("run regen.sh");
                assert!(status.success(), "cli/demo/regen.sh failed");
                let built = std::fs::read(tmp.path().join("exceptions.gfx942.co")).expect("built");
                assert!(built == CODE_OBJECT, "cli/demo/exceptions.gfx942.co is stale: run cli/demo/regen.sh");
            }
            other => println!(
                "skipped: the demo's code object is not rebuilt (clang-19 {}, the fixtures were built with {})",
                other.map_or("is not installed".to_string(), |v| format!("is {v}")),
                recorded.lines().next().unwrap_or("an unrecorded compiler")
            ),
        }
    }

    #[test]
    fn the_demo_finds_a_nan_an_overflow_and_a_division_by_zero() {
        let r = demo_report().expect("demo");
        let found: Vec<(&str, ExceptionKind)> = r.records().map(|(k, rec)| (k, rec.kind)).collect();
        assert!(found.contains(&("exc_nan", ExceptionKind::Nan)), "{found:?}");
        assert!(found.contains(&("exc_overflow", ExceptionKind::Inf)), "{found:?}");
        assert!(found.contains(&("exc_div0", ExceptionKind::Div0)), "{found:?}");
        assert!(found.iter().all(|(k, _)| ["exc_nan", "exc_overflow", "exc_div0"].contains(k)), "{found:?}");
        assert_eq!(r.run.vendor, "amd-emulated");
        assert_eq!(r.kernels.len(), 3);
    }

    #[test]
    fn the_demo_findings_have_source_lines() {
        let r = demo_report().expect("demo");
        let at: Vec<(&str, String)> = r
            .records()
            .map(|(k, rec)| (k, rec.site.location.as_ref().map(ToString::to_string).unwrap_or_default()))
            .collect();
        assert_eq!(
            at,
            [
                ("exc_div0", "xfpx_kernel.h:28 (inlined at exceptions.hip:34)".to_string()),
                ("exc_nan", "exceptions.hip:10".to_string()),
                ("exc_overflow", "exceptions.hip:18".to_string()),
                ("exc_overflow", "exceptions.hip:18".to_string()),
            ]
        );
    }
}
