//! What the C-interface tests share: the configuration file the core reads
//! at `xfpx_init`, written with source lines off (no GPU, no cubin to read
//! them from).

use std::path::Path;
use xfpx_common::config::{RunSettings, SourceLines, ToolSettings, CONFIG_ENV};

/// Writes `settings`, source lines off, to `dir/config.json`, names that
/// file in the environment and initialises the core from it.
pub fn init(dir: &Path, settings: RunSettings) {
    let settings = RunSettings { tools: ToolSettings { source_lines: SourceLines::Off, ..settings.tools }, ..settings };
    let config = dir.join("config.json");
    std::fs::write(&config, serde_json::to_string(&settings).expect("json")).expect("write config");
    std::env::set_var(CONFIG_ENV, &config);
    assert_eq!(xfpx_nvbit::ffi::xfpx_init(), 0);
}
