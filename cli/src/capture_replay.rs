//! `xfpx replay [--code-object AMD_BUILD] DIR`: every launch of a capture
//! folder (`xfpx run --capture DIR`, format `xfpx_common::capture`) run on
//! the emulator, in the manifest's order: the kernel found by its mangled
//! name in the AMD build, its arguments laid out from the captured
//! parameters against the AMD metadata, pointers moved into the replayed
//! buffers. One report for the whole capture (each kernel's launches and
//! findings, each finding dated by the captured launch index); with `--out
//! OUT` each launch's buffers in `OUT/<launch folder>/` with their
//! `outputs.json`, beside which the capture's own after-images make the
//! other side of `xfpx compare --out-a/--out-b`. A launch that cannot be
//! replayed (a kernel the AMD build lacks, layouts that differ, a
//! truncated image, a launch file of another format) is one line and the
//! others still run; then the command ends with an `error:` line, the
//! report written.

use crate::args::{self, ReplayArgs};
use crate::console::say;
use crate::replay::checked_outputs;
use crate::report_io::Destination;
use crate::run::exit_code_gated;
use crate::summary;
use crate::vendor::emulator;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use xfpx_common::backend::{OutputBuffer, ReplayRequest};
use xfpx_common::capture::{CapturedLaunch, Manifest, OutputFile, OutputManifest, LAUNCH_FILE};
use xfpx_common::config::{Mode, RunConfig, RunSettings};
use xfpx_common::report::{Collector, KernelReport, Report, RunInfo};
use xfpx_common::tool::ToolKind;

/// What one captured launch gave.
struct Replayed {
    launch: CapturedLaunch,
    report: Report,
}

pub fn replay(a: &ReplayArgs) -> Result<i32> {
    if a.tool != ToolKind::Detect || a.region.is_some() {
        bail!("a capture folder is replayed with the exception detector: --tool and --region take a launch file");
    }
    let fail_on = a.fail_on.as_deref().map(args::parse_fail_on_gates).transpose()?;
    let dest = (!a.no_report).then(|| Destination::from_arg(&a.report));
    let destinations = checked_outputs(a, dest.as_ref())?;
    let config: Option<RunConfig> =
        a.mode.map(|mode: Mode| RunSettings { mode, ..RunSettings::default() }.check()).transpose()?;
    let manifest = Manifest::read(&a.launch)?;
    let mut replayed = Vec::new();
    let mut failed = Vec::new();
    for launch in &manifest.launches {
        let shown = launch.demangled.clone().unwrap_or_else(|| xfpx_common::names::readable(&launch.kernel));
        match replay_one(a, launch, config.as_ref()) {
            Ok((report, outputs)) => {
                if let Some(out) = &a.out {
                    write_outputs(&out.join(&launch.dir), &report, &outputs)?;
                }
                replayed.push(Replayed { launch: launch.clone(), report });
            }
            Err(e) => {
                let line = format!("launch {} ({shown}): {e:#}", launch.dir);
                say!("xfpx: {line}");
                failed.push(line);
            }
        }
    }
    let mut report = combine(&a.launch, &manifest, &replayed, &failed);
    let mut text = summary::summary(&report, true);
    text.push_str(&format!(
        "xfpx: replayed {} of {} captured launches of {} (captured on {} {}{})\n",
        replayed.len(),
        manifest.launches.len(),
        a.launch.display(),
        manifest.source.vendor,
        manifest.source.device,
        manifest.source.target.as_deref().map_or_else(String::new, |t| format!(", {t}"))
    ));
    if let (Some(out), false) = (&a.out, replayed.is_empty()) {
        text.push_str(&format!("xfpx: output buffers of each launch written to {}/<launch>/\n", out.display()));
    }
    report.run.finished_unix = Some(xfpx_common::report::unix_now());
    destinations.finish(&report, &text)?;
    if !failed.is_empty() {
        bail!("{} of {} captured launches could not be replayed (above)", failed.len(), manifest.launches.len());
    }
    Ok(exit_code_gated(&report, fail_on))
}

/// Runs one captured launch; its report and output buffers.
fn replay_one(
    a: &ReplayArgs,
    launch: &CapturedLaunch,
    config: Option<&RunConfig>,
) -> Result<(Report, Vec<OutputBuffer>)> {
    if !launch.complete {
        bail!("the capture of this launch is incomplete: {}", launch.problem.as_deref().unwrap_or("no reason given"));
    }
    let path = a.launch.join(&launch.dir).join(LAUNCH_FILE);
    let request = ReplayRequest {
        launch: &path,
        target: a.target.as_deref(),
        code_object: a.code_object.as_deref(),
        instrument: config,
        max_instructions: a.max_instructions.unwrap_or(0),
        max_waves: a.max_waves.unwrap_or(0),
        guard_bytes: a.guard_bytes.unwrap_or(0),
        progress: None,
    };
    let r = emulator().replay(&request).map_err(|e| anyhow!(e))?;
    if let Some(failure) = r.failure {
        bail!("{failure}");
    }
    Ok((r.report, r.outputs))
}

/// `DIR/<name>.bin` per buffer and `DIR/outputs.json`.
fn write_outputs(dir: &Path, report: &Report, outputs: &[OutputBuffer]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for o in outputs {
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
    Ok(manifest.write(dir)?)
}

/// One report of the replayed launches: kernels by name (launches added),
/// findings by instruction, kind and format (occurrences added, the first
/// captured launch that raised each).
fn combine(dir: &Path, manifest: &Manifest, replayed: &[Replayed], failed: &[String]) -> Report {
    let mut run = match replayed.first() {
        Some(r) => r.report.run.clone(),
        None => RunInfo::new("amd-emulated", "xfpx CDNA emulator", "replay"),
    };
    run.command = vec!["replay".into(), dir.display().to_string()];
    run.started_unix = replayed.iter().map(|r| r.report.run.started_unix).min().unwrap_or(run.started_unix);
    run.notes = vec![format!(
        "{} of {} launches captured on {} {} replayed (capture of `{}`)",
        replayed.len(),
        manifest.launches.len(),
        manifest.source.vendor,
        manifest.source.device,
        manifest.command.join(" ")
    )];
    if let Some(note) = &manifest.source.note {
        run.notes.push(format!("the capture says: {note}"));
    }
    run.notes.extend(failed.iter().map(|f| format!("not replayed: {f}")));
    let mut kernels: BTreeMap<String, KernelReport> = BTreeMap::new();
    for r in replayed {
        for n in &r.report.run.notes {
            if !run.notes.contains(n) {
                run.notes.push(n.clone());
            }
        }
        for k in &r.report.kernels {
            let merged = kernels.entry(k.name.clone()).or_insert_with(|| KernelReport {
                launches: 0,
                instrumented_launches: 0,
                records: Vec::new(),
                ..k.clone()
            });
            merged.launches += k.launches;
            merged.instrumented_launches += k.instrumented_launches;
            for rec in &k.records {
                let found = merged
                    .records
                    .iter_mut()
                    .find(|m| (m.site.offset, m.kind, m.format) == (rec.site.offset, rec.kind, rec.format));
                match found {
                    Some(m) => {
                        m.occurrences += rec.occurrences;
                        m.saw_in_launch(r.launch.launch);
                    }
                    None => {
                        let mut new = rec.clone();
                        new.first_launch = r.launch.launch;
                        new.first_launch_unknown = false;
                        merged.records.push(new);
                    }
                }
            }
        }
    }
    let mut kernels: Vec<KernelReport> = kernels.into_values().collect();
    for k in &mut kernels {
        k.records.sort_by_key(|r| (r.site.offset, r.kind, r.format));
    }
    let mut report = Collector::new(run, None).report();
    report.kernels = kernels;
    report
}
