//! Finding the NVBit tool library that `xfpx run` loads into the program,
//! and the test hook that loads none.
//!
//! Lookup order: the environment variable [`NVBIT_TOOL_ENV`] (a path), then
//! [`TOOL_FILE_NAME`] beside the `xfpx` executable and in `../lib/` from it.
//!
//! Test hook: [`TOOL_LIBRARY_ENV`]`=none` makes `xfpx run` load no library
//! at all (and skip the driver check). The program then runs as it is, and
//! the CLI still listens for events: the test suite uses this with a
//! scripted program to exercise the event protocol and report writing. It
//! finds nothing in a real GPU program.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// Path of the NVBit tool library, overriding the lookup.
pub const NVBIT_TOOL_ENV: &str = "XFPX_NVBIT_TOOL";
/// Test hook: `none` loads no instrumentation library.
pub const TOOL_LIBRARY_ENV: &str = "XFPX_TOOL_LIBRARY";
/// File name of the NVBit tool library.
pub const TOOL_FILE_NAME: &str = "libxfpx_nvbit.so";

/// What `xfpx run` loads into the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolLoad {
    /// This shared library.
    Library(PathBuf),
    /// Nothing (test hook).
    Nothing,
}

/// Resolve what to load, from the environment and the executable's place.
pub fn resolve() -> Result<ToolLoad> {
    if let Some(v) = std::env::var_os(TOOL_LIBRARY_ENV) {
        if v == "none" {
            return Ok(ToolLoad::Nothing);
        }
        bail!("{TOOL_LIBRARY_ENV} accepts only `none` (a test hook), not `{}`", v.to_string_lossy());
    }
    let explicit = std::env::var_os(NVBIT_TOOL_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    find_library(explicit.as_deref(), exe_dir.as_deref()).map(ToolLoad::Library)
}

/// The lookup itself, separated from the process environment for testing.
pub fn find_library(explicit: Option<&Path>, exe_dir: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(absolute(p));
        }
        bail!("{NVBIT_TOOL_ENV} names {}, which is not a file", p.display());
    }
    if let Some(dir) = exe_dir {
        for candidate in [dir.join(TOOL_FILE_NAME), dir.join("../lib").join(TOOL_FILE_NAME)] {
            if candidate.is_file() {
                return Ok(absolute(&candidate));
            }
        }
    }
    bail!(
        "the NVBit tool library ({TOOL_FILE_NAME}) was not found; build it with `NVBIT_PATH=/path/to/nvbit ./backend-nvidia/build-tool.sh` or set {NVBIT_TOOL_ENV} to its path"
    )
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup() {
        let dir = std::env::temp_dir().join(format!("xfpx-tool-lookup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let e = find_library(None, Some(&dir)).expect_err("absent").to_string();
        assert!(e.contains("build-tool.sh") && !e.contains('\n'), "{e}");
        let e = find_library(Some(&dir.join("nope.so")), Some(&dir)).expect_err("absent").to_string();
        assert!(e.contains(NVBIT_TOOL_ENV), "{e}");
        std::fs::write(dir.join(TOOL_FILE_NAME), b"").expect("write");
        assert_eq!(find_library(None, Some(&dir)).expect("found"), absolute(&dir.join(TOOL_FILE_NAME)));
        let other = dir.join("other.so");
        std::fs::write(&other, b"").expect("write");
        assert_eq!(find_library(Some(&other), Some(&dir)).expect("found"), absolute(&other));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
