//! `xfpx replay LAUNCH`: run a captured AMD kernel launch on the emulator
//! (no GPU needed), print what it found, write the report and, if asked,
//! the output buffers. Without `--mode` the emulator checks the original
//! kernel's results; with `--mode detect|screen`, or for a code object
//! rewritten already (`xfpx dump --rewrite MODE --out`), the report is what
//! the instrumentation recorded ([`crate::replay_rewritten`]). Launches beyond the wave limit are
//! refused before they start; long ones show progress on a terminal.

use crate::args::{self, ReplayArgs};
use crate::output::Outputs;
use crate::report_io::Destination;
use crate::run::exit_code;
use crate::{progress, summary};
use anyhow::{bail, Context, Result};

pub fn replay(a: &ReplayArgs) -> Result<i32> {
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on).transpose()?;
    let dest = (!a.no_report).then(|| Destination::from_arg(&a.report));
    let destinations = Outputs {
        report: dest.as_ref(),
        said_no_report: a.no_report,
        html: a.html.as_deref(),
        format: a.format,
        summary_on_stdout: true,
    };
    destinations.check()?;
    if a.max_waves == Some(0) {
        bail!("invalid --max-waves 0: a launch runs at least one wave");
    }
    let mut opts = xfpx_amd_emu::ReplayOptions {
        target: a.target.clone(),
        code_object: a.code_object.clone(),
        out_dir: None,
        max_instructions: a.max_instructions.unwrap_or(0),
        max_waves: a.max_waves.unwrap_or(0),
        progress: None,
    };
    let cannot = || format!("cannot replay {}", a.launch.display());
    let launch = xfpx_amd_emu::Launch::load(&a.launch).map_err(|e| anyhow::anyhow!("{e}")).with_context(cannot)?;
    opts.check_work(&launch).map_err(|e| anyhow::anyhow!("{e}")).with_context(cannot)?;
    let workgroups: u64 = launch.grid.iter().map(|&n| u64::from(n)).product();
    let (shown, counter) = progress::Bar::workgroups(workgroups);
    opts.progress = shown.is_some().then_some(counter);
    // Instrumented code (asked for, or a code object rewritten already) reports what it recorded.
    let instrumented = match a.mode {
        Some(mode) => crate::replay_rewritten::replay_rewritten(&a.launch, mode, &opts).map(Some),
        None => crate::replay_rewritten::replay_saved(&a.launch, &opts),
    };
    let outcome = match instrumented {
        Ok(Some(r)) => Ok((r.report, r.outputs, r.screened_kinds)),
        Ok(None) => xfpx_amd_emu::replay(&a.launch, &opts)
            .map(|mut o| {
                locate(&mut o.report, a);
                (o.report, o.outputs, Vec::new())
            })
            .map_err(|e| anyhow::anyhow!("{e}")),
        Err(e) => Err(e),
    };
    drop(shown);
    let (report, outputs, screened) = outcome.with_context(cannot)?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for o in &outputs {
            let p = dir.join(format!("{}.bin", o.name));
            std::fs::write(&p, &o.bytes).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    let mut text = summary::summary(&report, true);
    if let Some(dir) = &a.out {
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        text.push_str(&format!("xfpx: output buffers ({}) written to {}\n", names.join(", "), dir.display()));
    }
    destinations.finish(&report, &text)?;
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
        .and_then(|path| {
            xfpx_common::limits::read(&path, xfpx_common::limits::CODE_OBJECT)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        })
        .and_then(|bytes| {
            let elf = xfpx_amd::image::code_object_for(&bytes, a.target.as_deref()).map_err(|e| e.to_string())?;
            Ok(xfpx_amd::lines::locate_report(report, &elf.bytes))
        })
        .unwrap_or_else(|e| Some(format!("source lines are unknown: {e}")));
    report.run.notes.extend(note);
}
