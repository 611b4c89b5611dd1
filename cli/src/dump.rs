//! `xfpx dump`: show how a saved NVIDIA SASS listing or an AMD code object
//! would be instrumented, without a GPU. The reading and rendering belong
//! to the backends; this module reads the file and hands it over.

use crate::args::{DumpArgs, DumpVendor, OutputFormat};
use crate::console::show_raw;
use anyhow::{Context, Result};

pub fn dump(a: &DumpArgs) -> Result<i32> {
    let bytes = std::fs::read(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
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
