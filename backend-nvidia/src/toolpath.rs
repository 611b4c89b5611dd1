//! Where the built NVBit tool library is found.

use std::path::{Path, PathBuf};
use xfpx_common::toolpath;

/// Environment variable naming the tool library explicitly.
pub const TOOL_ENV: &str = "XFPX_NVBIT_TOOL";
/// File name of the tool library.
pub const TOOL_FILE_NAME: &str = "libxfpx_nvbit.so";
/// File name of the hardware counters' library (`--counters hardware`),
/// installed beside the tool library where CUPTI was found.
pub const CUPTI_TOOL_FILE_NAME: &str = "libxfpx_cupti.so";

/// The tool library is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{TOOL_ENV} names {0}, which is not a file")]
    NotAFile(PathBuf),
    #[error("the NVBit tool ({TOOL_FILE_NAME}) is not installed; run `xfpx setup nvidia` (needs the CUDA toolkit and NVBit) or set {TOOL_ENV}")]
    Missing,
    #[error("the hardware counters' library ({CUPTI_TOOL_FILE_NAME}) is not installed beside {0}: `xfpx setup nvidia` builds it where it finds CUPTI (the CUDA toolkit's extras/CUPTI, CUDA 12.6 or newer)")]
    NoCupti(PathBuf),
}

/// The hardware counters' library: [`CUPTI_TOOL_FILE_NAME`] in the folder
/// of the tool library `tool` (as [`tool_library`] finds it).
pub fn cupti_library(tool: &Path) -> Result<PathBuf, ToolError> {
    let dir = tool.parent().unwrap_or(Path::new("."));
    let lib = dir.join(CUPTI_TOOL_FILE_NAME);
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(ToolError::NoCupti(dir.to_path_buf()))
    }
}

/// Find the tool: [`TOOL_ENV`], then beside the running executable (and
/// `../lib` from it), then the build output directory of this workspace.
pub fn tool_library() -> Result<PathBuf, ToolError> {
    let explicit = std::env::var_os(TOOL_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    find_tool(explicit.as_deref(), toolpath::exe_dir().as_deref(), Some(&build_output_dir()))
}

/// The directory `build-tool.sh` writes to by default: `target/nvbit-tool` of this
/// workspace.
pub fn build_output_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/nvbit-tool")
}

/// The lookup, apart from the process environment.
pub fn find_tool(
    explicit: Option<&Path>,
    exe_dir: Option<&Path>,
    build_dir: Option<&Path>,
) -> Result<PathBuf, ToolError> {
    let builds: Vec<PathBuf> = build_dir.into_iter().map(Path::to_path_buf).collect();
    toolpath::find(explicit, exe_dir, &builds, &[TOOL_FILE_NAME]).map_err(|m| match m {
        toolpath::Missing::NotAFile(p) => ToolError::NotAFile(p),
        toolpath::Missing::NotFound => ToolError::Missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_order_and_message() {
        let dir = std::env::temp_dir().join(format!("xfpx-nvidia-toolpath-{}", std::process::id()));
        let exe = dir.join("bin");
        let build = dir.join("build");
        std::fs::create_dir_all(&exe).expect("mkdir");
        std::fs::create_dir_all(&build).expect("mkdir");
        let e = find_tool(None, Some(&exe), Some(&build)).expect_err("missing");
        let msg = e.to_string();
        assert!(msg.contains("xfpx setup nvidia") && !msg.contains('\n'), "{msg}");
        std::fs::write(build.join(TOOL_FILE_NAME), b"").expect("write");
        assert_eq!(find_tool(None, Some(&exe), Some(&build)), Ok(build.join(TOOL_FILE_NAME)));
        std::fs::write(exe.join(TOOL_FILE_NAME), b"").expect("write");
        assert_eq!(find_tool(None, Some(&exe), Some(&build)), Ok(exe.join(TOOL_FILE_NAME)));
        let nope = dir.join("nope.so");
        assert_eq!(find_tool(Some(&nope), Some(&exe), None), Err(ToolError::NotAFile(nope)));
        // the hardware counters' library sits beside the tool
        let e = cupti_library(&exe.join(TOOL_FILE_NAME)).expect_err("not built");
        assert!(
            e.to_string().contains("`xfpx setup nvidia` builds it where it finds CUPTI")
                && !e.to_string().contains('\n')
        );
        std::fs::write(exe.join(CUPTI_TOOL_FILE_NAME), b"").expect("write");
        assert_eq!(cupti_library(&exe.join(TOOL_FILE_NAME)), Ok(exe.join(CUPTI_TOOL_FILE_NAME)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
