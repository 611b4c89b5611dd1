//! Where the built NVBit tool library is found.

use std::path::{Path, PathBuf};
use xfpx_common::toolpath;

/// Environment variable naming the tool library explicitly.
pub const TOOL_ENV: &str = "XFPX_NVBIT_TOOL";
/// File name of the tool library.
pub const TOOL_FILE_NAME: &str = "libxfpx_nvbit.so";

/// The tool library is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{TOOL_ENV} names {0}, which is not a file")]
    NotAFile(PathBuf),
    #[error("the NVBit tool ({TOOL_FILE_NAME}) is not installed; run `xfpx setup nvidia` (needs the CUDA toolkit and NVBit) or set {TOOL_ENV}")]
    Missing,
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
