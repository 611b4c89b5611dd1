//! `xfpx dump`: show how a saved NVIDIA SASS listing or an AMD code object
//! would be instrumented, without a GPU. The reading and rendering belong
//! to the backends, reached through their seam; this module reads the file
//! and hands it over. With `--rewrite MODE`, an AMD code object is
//! rewritten for that mode and the rewritten kernels are shown (and written
//! with `--out`, with a patchable table and the record `xfpx replay` reads).

use crate::args::{DumpArgs, DumpVendor};
use crate::console::show_raw;
use crate::vendor::backend_of;
use anyhow::{anyhow, bail, Context, Result};
use xfpx_common::backend::{DumpRequest, Progress};
use xfpx_common::config::{ConfigError, KernelFilter, RunSettings};

pub fn dump(a: &DumpArgs) -> Result<i32> {
    if a.rewrite.is_some() && a.vendor != DumpVendor::Amd {
        bail!("--rewrite applies to AMD code objects only (--vendor amd)");
    }
    if a.tool != xfpx_common::tool::ToolKind::Detect && a.vendor != DumpVendor::Nvidia {
        bail!("--tool {} is dumped for NVIDIA listings only (--vendor nvidia)", a.tool.name());
    }
    // fault flags only with the inject tool (whose counters-style refusal
    // for runs does not apply to dumps)
    let fault = match a.tool {
        xfpx_common::tool::ToolKind::Inject => a.fault.check(a.tool)?,
        _ => a.fault.check(xfpx_common::tool::ToolKind::Detect)?,
    };
    // What is lowered: NVIDIA listings always in `--mode`; AMD code objects
    // with `--rewrite` only. `--kernel` is a regular expression on either
    // vendor: the lowering's filter, or else which kernels are shown.
    let bad_pattern = |e: ConfigError| match e {
        ConfigError::Pattern { pattern, reason, .. } => anyhow!("invalid --kernel pattern `{pattern}`: {reason}"),
        other => other.into(),
    };
    let (mode, shown, patterns) = match (a.vendor, a.rewrite) {
        (DumpVendor::Nvidia, _) => (Some(a.mode), a.kernel.clone(), Vec::new()),
        (DumpVendor::Amd, Some(mode)) => (Some(mode), None, a.kernel.iter().cloned().collect()),
        (DumpVendor::Amd, None) => (None, a.kernel.clone(), Vec::new()),
    };
    let kernel = shown.map(|p| KernelFilter::new(&[p], &[])).transpose().map_err(bad_pattern)?;
    let config = mode
        .map(|mode| {
            RunSettings { mode, kernels: patterns, tool: a.tool, fault: fault.clone(), ..RunSettings::default() }
                .check()
        })
        .transpose()
        .map_err(bad_pattern)?;
    let bytes = xfpx_common::limits::read(&a.file, xfpx_common::limits::CODE_OBJECT)
        .with_context(|| format!("cannot read {}", a.file.display()))?;
    let backend = backend_of(a.vendor);
    let progress = std::sync::Arc::new(Progress::default());
    let shown = a.rewrite.is_some().then(|| crate::progress::Bar::kernels(progress.clone())).flatten();
    let request = DumpRequest {
        kernel: kernel.as_ref(),
        format: a.format,
        lower: config.as_ref(),
        progress: Some(progress.clone()),
        runnable: a.out.is_some(),
    };
    let dumped = backend.dump(&bytes, &request);
    drop(shown);
    let what = if a.rewrite.is_some() { "cannot rewrite " } else { "" };
    let dumped = dumped.map_err(|e| anyhow!(e)).with_context(|| format!("{what}{}", a.file.display()))?;
    if let (Some(new), Some(image)) = (&a.out, &dumped.image) {
        std::fs::write(new, image).with_context(|| format!("cannot write {}", new.display()))?;
    }
    let text = dumped.text;
    show_raw!(if text.ends_with('\n') { text } else { format!("{text}\n") });
    Ok(0)
}
