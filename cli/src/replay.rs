//! `xfpx replay LAUNCH`: run a captured kernel launch on the emulator of
//! the AMD backend (no GPU needed), print what it found, write the report
//! and, if asked, the output buffers (with `outputs.json`, their element
//! types, for `xfpx compare`). Without `--mode` the emulator checks
//! the original kernel's results; with `--mode detect|screen`, or for a code
//! object rewritten already (`xfpx dump --rewrite MODE --out`), the report
//! is what the instrumentation recorded. With `--tool counters` the kernel
//! is rewritten to count what it executes (the report's counters section),
//! checked against `--region` when given (`--fail-on region`: status 3 when
//! a window is outside); with `--tool flow` it is rewritten to follow
//! exceptional values through its instructions (the report's flow section). Launches beyond the wave limit are
//! refused before they start; long ones show progress on a terminal.

use crate::args::{self, ReplayArgs};
use crate::exit::{ExitError, EXIT_USAGE};
use crate::output::Outputs;
use crate::report_io::Destination;
use crate::run::exit_code_gated;
use crate::vendor::emulator;
use crate::{progress, region_cmd, summary};
use anyhow::{anyhow, bail, Context, Result};
use std::sync::Arc;
use xfpx_common::backend::{Progress, ReplayRequest};
use xfpx_common::capture::{OutputFile, OutputManifest};
use xfpx_common::config::{Mode, RunSettings};
use xfpx_common::fault::FaultSpec;
use xfpx_common::tool::ToolKind;

pub fn replay(a: &ReplayArgs, fault: Option<FaultSpec>) -> Result<i32> {
    if a.launch.is_dir() {
        if fault.is_some() {
            bail!("a capture folder is replayed with the exception detector: --tool inject takes a launch file");
        }
        return crate::capture_replay::replay(a);
    }
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on_gates).transpose()?;
    let fail_on_region = fail_on.is_some_and(|f| f.region);
    let counting = a.tool == ToolKind::Counters;
    let flowing = a.tool == ToolKind::Flow;
    if a.region.is_some() && !counting {
        return Err(ExitError::new(EXIT_USAGE, "--region needs --tool counters".to_string()).into());
    }
    if fail_on_region && a.region.is_none() {
        return Err(ExitError::new(EXIT_USAGE, "--fail-on region needs --region REGION".to_string()).into());
    }
    if (counting || flowing) && a.mode.is_some() {
        return Err(ExitError::new(
            EXIT_USAGE,
            format!("--tool {} rewrites the kernel itself: leave out --mode", a.tool.name()),
        )
        .into());
    }
    let region = a.region.as_deref().map(region_cmd::read).transpose()?;
    let dest = (!a.no_report).then(|| Destination::from_arg(&a.report));
    let destinations = checked_outputs(a, dest.as_ref())?;
    let config = match (fault, a.mode) {
        _ if counting => {
            Some(RunSettings { mode: Mode::Count, tool: ToolKind::Counters, ..RunSettings::default() }.check()?)
        }
        _ if flowing => {
            Some(RunSettings { mode: Mode::Detect, tool: ToolKind::Flow, ..RunSettings::default() }.check()?)
        }
        (Some(_), Some(mode)) => {
            bail!("--mode {} and --tool inject: a replay injects a fault or checks, not both", mode.name())
        }
        (Some(fault), None) => {
            Some(RunSettings { tool: ToolKind::Inject, fault: Some(fault), ..RunSettings::default() }.check()?)
        }
        (None, mode) => mode.map(|mode| RunSettings { mode, ..RunSettings::default() }.check()).transpose()?,
    };
    let work = Arc::new(Progress::default());
    let shown = progress::Bar::workgroups(work.clone());
    let request = ReplayRequest {
        launch: &a.launch,
        target: a.target.as_deref(),
        code_object: a.code_object.as_deref(),
        instrument: config.as_ref(),
        max_instructions: a.max_instructions.unwrap_or(0),
        max_waves: a.max_waves.unwrap_or(0),
        guard_bytes: a.guard_bytes.unwrap_or(0),
        progress: shown.is_some().then_some(work),
    };
    let outcome = emulator().replay(&request);
    drop(shown);
    let replayed = outcome.map_err(|e| anyhow!(e)).with_context(|| format!("cannot replay {}", a.launch.display()))?;
    let (mut report, outputs) = (replayed.report, replayed.outputs);
    let outside = match (&region, &a.region) {
        (Some(_), Some(path)) => {
            !region_cmd::check(&mut report, &a.launch.display().to_string(), path)?.deviations.is_empty()
        }
        _ => false,
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for o in &outputs {
            let p = dir.join(format!("{}.bin", o.name));
            std::fs::write(&p, &o.bytes).with_context(|| format!("cannot write {}", p.display()))?;
        }
        let manifest = OutputManifest {
            kernel: report.kernels.first().map(|k| k.name.clone()).unwrap_or_default(),
            outputs: outputs
                .iter()
                .map(|o| OutputFile { name: o.name.clone(), elem: o.elem.clone(), file: format!("{}.bin", o.name) })
                .collect(),
        };
        manifest.write(dir)?;
    }
    let mut text = summary::summary(&report, true);
    text.push_str(&region_cmd::table(&report));
    if let (Some(dir), None) = (&a.out, &replayed.failure) {
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        text.push_str(&format!("xfpx: output buffers ({}) written to {}\n", names.join(", "), dir.display()));
    }
    if let Some(i) = &report.injection {
        text.push_str(&format!("xfpx: fault `{}` {}\n", i.fault, fired(i.activations)));
    }
    destinations.finish(&report, &text)?;
    if let Some(failure) = &replayed.failure {
        // the fault stopped the kernel as a crash stops a program
        bail!("{failure}");
    }
    if fail_on_region && outside {
        return Ok(crate::exit::EXIT_FINDINGS);
    }
    if fail_on.and_then(|f| f.kinds).is_some_and(|k| replayed.screened_kinds.iter().any(|s| k.contains(*s))) {
        return Ok(crate::exit::EXIT_FINDINGS);
    }
    Ok(exit_code_gated(&report, fail_on))
}

/// What the summary says of a fault's activations.
fn fired(activations: u64) -> String {
    match activations {
        0 => "never fired (not activated)".to_string(),
        n => format!("corrupted {n} thread instances"),
    }
}

/// Where a replay (of one launch or of a capture folder) writes its report,
/// HTML page and summary, checked before anything runs; `--max-waves 0`
/// refused.
pub(crate) fn checked_outputs<'a>(a: &'a ReplayArgs, dest: Option<&'a Destination>) -> Result<Outputs<'a>> {
    let destinations = Outputs {
        report: dest,
        said_no_report: a.no_report,
        html: a.html.as_deref(),
        format: a.format,
        summary_on_stdout: true,
    };
    destinations.check()?;
    if a.max_waves == Some(0) {
        bail!("invalid --max-waves 0: a launch runs at least one wave");
    }
    Ok(destinations)
}
