//! `xfpx replay LAUNCH`: run a captured kernel launch on the emulator of
//! the AMD backend (no GPU needed), print what it found, write the report
//! and, if asked, the output buffers (with `outputs.json`, their element
//! types, for `xfpx compare`). Without `--mode` the emulator checks
//! the original kernel's results; with `--mode detect|screen`, or for a code
//! object rewritten already (`xfpx dump --rewrite MODE --out`), the report
//! is what the instrumentation recorded. Launches beyond the wave limit are
//! refused before they start; long ones show progress on a terminal.

use crate::args::{self, ReplayArgs};
use crate::output::Outputs;
use crate::report_io::Destination;
use crate::run::exit_code_gated;
use crate::vendor::emulator;
use crate::{compare, progress, summary};
use anyhow::{anyhow, bail, Context, Result};
use std::sync::Arc;
use xfpx_common::backend::{Progress, ReplayRequest};
use xfpx_common::config::RunSettings;

pub fn replay(a: &ReplayArgs) -> Result<i32> {
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on_run).transpose()?;
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
    let config = a.mode.map(|mode| RunSettings { mode, ..RunSettings::default() }.check()).transpose()?;
    let work = Arc::new(Progress::default());
    let shown = progress::Bar::workgroups(work.clone());
    let request = ReplayRequest {
        launch: &a.launch,
        target: a.target.as_deref(),
        code_object: a.code_object.as_deref(),
        instrument: config.as_ref(),
        max_instructions: a.max_instructions.unwrap_or(0),
        max_waves: a.max_waves.unwrap_or(0),
        progress: shown.is_some().then_some(work),
    };
    let outcome = emulator().replay(&request);
    drop(shown);
    let replayed = outcome.map_err(|e| anyhow!(e)).with_context(|| format!("cannot replay {}", a.launch.display()))?;
    let (report, outputs) = (replayed.report, replayed.outputs);
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for o in &outputs {
            let p = dir.join(format!("{}.bin", o.name));
            std::fs::write(&p, &o.bytes).with_context(|| format!("cannot write {}", p.display()))?;
        }
        let manifest = compare::Manifest {
            kernel: report.kernels.first().map(|k| k.name.clone()).unwrap_or_default(),
            outputs: outputs
                .iter()
                .map(|o| compare::ManifestEntry {
                    name: o.name.clone(),
                    elem: o.elem.clone(),
                    file: format!("{}.bin", o.name),
                })
                .collect(),
        };
        let p = dir.join(compare::MANIFEST);
        let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
        std::fs::write(&p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let mut text = summary::summary(&report, true);
    if let Some(dir) = &a.out {
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        text.push_str(&format!("xfpx: output buffers ({}) written to {}\n", names.join(", "), dir.display()));
    }
    destinations.finish(&report, &text)?;
    if fail_on.and_then(|f| f.kinds).is_some_and(|k| replayed.screened_kinds.iter().any(|s| k.contains(*s))) {
        return Ok(crate::exit::EXIT_FINDINGS);
    }
    Ok(exit_code_gated(&report, fail_on))
}
