//! `xfpx dump`: show how a saved NVIDIA SASS listing or an AMD code object
//! would be instrumented, without a GPU. The reading and rendering belong
//! to the backends; this module reads the file and hands it over. With
//! `--rewrite MODE`, an AMD code object is rewritten for the exception
//! detector and the rewritten kernels are shown (and written with `--out`,
//! with a patchable table and the record `xfpx replay` reads).

use crate::args::{DumpArgs, DumpVendor, OutputFormat, RewriteMode};
use crate::console::show_raw;
use anyhow::{bail, Context, Result};
use xfpx_amd::rewrite::TableAddress;

pub fn dump(a: &DumpArgs) -> Result<i32> {
    let bytes = xfpx_common::limits::read(&a.file, xfpx_common::limits::CODE_OBJECT)
        .with_context(|| format!("cannot read {}", a.file.display()))?;
    if let Some(mode) = a.rewrite {
        if a.vendor != DumpVendor::Amd {
            bail!("--rewrite applies to AMD code objects only (--vendor amd)");
        }
        return rewrite(a, &bytes, mode);
    }
    match a.vendor {
        DumpVendor::Nvidia => {
            let listing = std::str::from_utf8(&bytes)
                .with_context(|| format!("{} is not a text SASS listing", a.file.display()))?;
            let opts = xfpx_nvidia::dump::DumpOptions {
                kernel: a.kernel.clone(),
                format: match a.format {
                    OutputFormat::Text => xfpx_nvidia::dump::DumpFormat::Text,
                    OutputFormat::Json => xfpx_nvidia::dump::DumpFormat::Json,
                },
                mode: a.mode.config_mode(),
            };
            let text =
                xfpx_nvidia::dump::dump_listing(listing, &opts).with_context(|| format!("{}", a.file.display()))?;
            show_raw!(if text.ends_with('\n') { text } else { format!("{text}\n") });
            Ok(0)
        }
        DumpVendor::Amd => {
            let opts = xfpx_amd::DumpOptions {
                kernel: a.kernel.clone(),
                format: match a.format {
                    OutputFormat::Text => xfpx_amd::DumpFormat::Text,
                    OutputFormat::Json => xfpx_amd::DumpFormat::Json,
                },
            };
            let text = xfpx_amd::dump(&bytes, &opts).with_context(|| format!("{}", a.file.display()))?;
            show_raw!(if text.ends_with('\n') { text } else { format!("{text}\n") });
            Ok(0)
        }
    }
}

/// The backend's rewrite mode for a command-line mode.
pub fn rewrite_mode(mode: RewriteMode) -> xfpx_amd::rewrite::Mode {
    match mode {
        RewriteMode::Detect => xfpx_amd::rewrite::Mode::Detect,
        RewriteMode::Screen => xfpx_amd::rewrite::Mode::Screen,
    }
}

fn rewrite(a: &DumpArgs, bytes: &[u8], mode: RewriteMode) -> Result<i32> {
    let work = std::sync::Arc::new(xfpx_amd::rewrite::Progress::default());
    let opts = xfpx_amd::rewrite::RewriteOptions {
        mode: rewrite_mode(mode),
        kernels: a.kernel.iter().cloned().collect(),
        progress: Some(work.clone()),
        // A file written is to run: its table is placed by whoever runs it.
        table: if a.out.is_some() { TableAddress::Patchable } else { TableAddress::Known(0) },
        ..Default::default()
    };
    let shown = crate::progress::Bar::kernels(work);
    let outcome = xfpx_amd::rewrite::rewrite(bytes, &opts);
    drop(shown);
    let outcome = outcome.with_context(|| format!("cannot rewrite {}", a.file.display()))?;
    if let Some(new) = &a.out {
        std::fs::write(new, &outcome.bytes).with_context(|| format!("cannot write {}", new.display()))?;
    }
    let text = match a.format {
        OutputFormat::Text => outcome.to_text(),
        OutputFormat::Json => outcome.to_json(),
    };
    show_raw!(if text.ends_with('\n') { text } else { format!("{text}\n") });
    Ok(0)
}
