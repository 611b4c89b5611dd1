//! What `xfpx run` loads into the program: the live backend's library
//! (for NVIDIA the NVBit tool library: the environment variable
//! `XFPX_NVBIT_TOOL`, then `libxfpx_nvbit.so` beside the `xfpx` executable,
//! in `../lib/` from it, and in the workspace's `target/nvbit-tool/`; with
//! `--counters hardware` the hardware counters' library beside it), or
//! nothing under the test hook.
//!
//! Test hook: [`TOOL_LIBRARY_ENV`]`=none` makes `xfpx run` load no library
//! at all (and skip the driver check). The program then runs as it is, and
//! the CLI still listens for events: the test suite uses this with a
//! scripted program to exercise the event protocol and report writing. It
//! finds nothing in a real GPU program.

use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;
use xfpx_common::backend::LiveBackend;

/// Test hook: `none` loads no instrumentation library.
pub const TOOL_LIBRARY_ENV: &str = "XFPX_TOOL_LIBRARY";

/// What `xfpx run` loads into the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolLoad {
    /// This shared library.
    Library(PathBuf),
    /// Nothing (test hook).
    Nothing,
}

/// What a run with counters from `source` loads: with hardware counters,
/// the CUPTI library beside the tool library (NVIDIA's only; one line
/// when it was not built), else `load` itself.
pub fn for_counters(load: ToolLoad, source: xfpx_common::counters::CounterSource) -> Result<ToolLoad> {
    match (load, source) {
        (ToolLoad::Library(tool), xfpx_common::counters::CounterSource::Hardware) => {
            Ok(ToolLoad::Library(xfpx_nvidia::cupti_library(&tool).map_err(|e| anyhow!(e))?))
        }
        (load, _) => Ok(load),
    }
}

/// Resolve what to load: the test hook, else `live`'s library.
pub fn resolve(live: &dyn LiveBackend) -> Result<ToolLoad> {
    if let Some(v) = std::env::var_os(TOOL_LIBRARY_ENV) {
        if v == "none" {
            return Ok(ToolLoad::Nothing);
        }
        bail!("{TOOL_LIBRARY_ENV} accepts only `none` (a test hook), not `{}`", v.to_string_lossy());
    }
    let lib = live.library().map_err(|e| anyhow!(e))?;
    Ok(ToolLoad::Library(std::path::absolute(&lib).unwrap_or(lib)))
}
