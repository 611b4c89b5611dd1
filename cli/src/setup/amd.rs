//! `xfpx setup amd`: installs the AMD libraries this xfpx carries (release
//! builds, see `build.rs`) beside the executable, or into `--dest`, where
//! `xfpx run --vendor amd` finds them: the HSA tool library
//! (`libxfpx_hsa.so`) and xfpx's emulated HSA runtime (as
//! `libhsa-runtime64.so.1`, for `--emulate`). Nothing is built: both are
//! Rust libraries, built with xfpx.

use super::install;
use crate::args::SetupArgs;
use crate::console::say;
use anyhow::{bail, Context as _, Result};
use xfpx_amd::live::{RUNTIME_SONAME, TOOL_FILE_NAME};

/// The tool library and the emulated runtime, zstd-compressed; empty in
/// builds that do not carry them (debug builds).
const EMBEDDED_TOOL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hsa-tool.so.zst"));
const EMBEDDED_RUNTIME: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hsa-runtime.so.zst"));

pub fn setup(a: &SetupArgs) -> Result<i32> {
    for (given, flag) in
        [(a.nvbit.is_some(), "--nvbit"), (a.arch.is_some(), "--arch"), (a.core_lib.is_some(), "--core-lib")]
    {
        if given {
            bail!("{flag} is for `xfpx setup nvidia`");
        }
    }
    let dest = match &a.dest {
        Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
        None => super::exe_dir()?,
    };
    install::check_writable(&dest).map_err(anyhow::Error::msg)?;
    if EMBEDDED_TOOL.is_empty() || EMBEDDED_RUNTIME.is_empty() {
        bail!(
            "this xfpx carries no AMD libraries (a debug build: use `cargo install --path cli` or `cargo build --release \
             -p xfpx`; a debug build's `xfpx run` finds them in its own build folder after `cargo build -p xfpx-hsa-tool \
             -p xfpx-hsa-runtime`)"
        );
    }
    let work = tempfile::Builder::new().prefix("xfpx-setup-").tempdir().context("cannot make a temporary folder")?;
    for (packed, name) in [(EMBEDDED_TOOL, TOOL_FILE_NAME), (EMBEDDED_RUNTIME, RUNTIME_SONAME)] {
        let bytes = zstd::decode_all(packed).with_context(|| format!("the carried {name} is damaged"))?;
        let unpacked = work.path().join(name);
        std::fs::write(&unpacked, bytes).with_context(|| format!("cannot write {}", unpacked.display()))?;
        let installed = install::install(&unpacked, &dest, name).map_err(anyhow::Error::msg)?;
        say!("xfpx: installed {}", installed.display());
    }
    Ok(0)
}
