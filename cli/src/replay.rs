//! `xfpx replay LAUNCH`: run a captured AMD kernel launch on the emulator
//! (no GPU needed), print what it found, write the report and, if asked,
//! the output buffers. Without `--mode` the emulator checks the original
//! kernel's results; with `--mode detect|screen` the kernel is rewritten
//! and the report is what the instrumentation recorded
//! ([`crate::replay_rewritten`]).

use crate::args::{self, OutputFormat, ReplayArgs};
use crate::console::{say, show_raw};
use crate::run::exit_code;
use crate::{report_io, summary};
use anyhow::{Context, Result};

pub fn replay(a: &ReplayArgs) -> Result<i32> {
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on).transpose()?;
    report_io::check_writable(&a.report)?;
    let (report, outputs, screened) = match a.mode {
        None => {
            let opts = xfpx_amd_emu::ReplayOptions {
                target: a.target.clone(),
                code_object: a.code_object.clone(),
                out_dir: None,
                max_instructions: a.max_instructions.unwrap_or(0),
            };
            let outcome = xfpx_amd_emu::replay(&a.launch, &opts)
                .with_context(|| format!("cannot replay {}", a.launch.display()))?;
            let mut report = outcome.report;
            locate(&mut report, a);
            (report, outcome.outputs, Vec::new())
        }
        Some(mode) => {
            let r = crate::replay_rewritten::replay_rewritten(
                &a.launch,
                mode,
                a.target.as_deref(),
                a.code_object.as_deref(),
                a.max_instructions.unwrap_or(0),
            )
            .with_context(|| format!("cannot replay {}", a.launch.display()))?;
            (r.report, r.outputs, r.screened_kinds)
        }
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for o in &outputs {
            let p = dir.join(format!("{}.bin", o.name));
            std::fs::write(&p, &o.bytes).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    let written = report_io::write(&report, &a.report);
    match a.format {
        OutputFormat::Text => {
            let mut text = summary::summary(&report, true);
            if let Some(dir) = &a.out {
                let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
                text.push_str(&format!("xfpx: output buffers ({}) written to {}\n", names.join(", "), dir.display()));
            }
            show_raw!(text);
            if written.is_ok() {
                say!("xfpx: report written to {}", a.report.display());
            }
        }
        OutputFormat::Json => show_raw!(format!("{}\n", report.to_json())),
    }
    written?;
    if fail_on.is_some_and(|k| screened.iter().any(|s| k.contains(*s))) {
        return Ok(crate::exit::EXIT_FINDINGS);
    }
    Ok(exit_code(&report, fail_on))
}

/// Source lines for the findings of an emulator replay, from the launch's
/// code object (where it has line tables); a table that cannot be read is a
/// note in the report.
fn locate(report: &mut xfpx_common::report::Report, a: &ReplayArgs) {
    let note = xfpx_amd_emu::launch::Launch::load(&a.launch)
        .map_err(|e| e.0)
        .and_then(|launch| {
            crate::replay_rewritten::code_object_path(&launch, a.target.as_deref(), a.code_object.as_deref())
                .map_err(|e| e.to_string())
        })
        .and_then(|path| std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display())))
        .and_then(|bytes| {
            let elf = xfpx_amd_emu::codeobject::unbundle(&bytes, a.target.as_deref()).map_err(|e| e.to_string())?;
            Ok(xfpx_amd::lines::locate_report(report, elf))
        })
        .unwrap_or_else(|e| Some(format!("source lines are unknown: {e}")));
    report.run.notes.extend(note);
}
