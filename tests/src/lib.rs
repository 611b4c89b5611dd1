//! End-to-end tests of the `xfpx` command line (in `tests/`), the scripted
//! stand-in program they run under `xfpx run` (`src/bin/`), and shared
//! functions. GPU programs with known findings live in `gpu/`.

pub mod synthetic_capture;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use xfpx_common::class::FpFormat;
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::SiteRef;
use xfpx_common::site::{SiteId, SourceLoc};

/// `cargo build` of these arguments (packages and targets) into the same
/// target directory and profile as the running test; returns the profile's
/// output folder.
fn cargo_build(args: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // <target>/<profile>/deps/<test> -> <target>/<profile>
    let profile_dir = exe.parent().and_then(|d| d.parent()).expect("profile directory").to_path_buf();
    let profile = profile_dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet"]).args(args);
    cmd.args(["--profile", if profile == "debug" { "dev" } else { profile }]);
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "cargo build {} failed: {status}", args.join(" "));
    profile_dir
}

/// The `xfpx` binary of this workspace, built (once per test process) in
/// the same target directory and profile as the running test.
pub fn xfpx_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let bin = cargo_build(&["-p", "xfpx", "--bin", "xfpx"]).join("xfpx");
            assert!(bin.is_file(), "{} was not built", bin.display());
            bin
        })
        .clone()
}

/// `xfpx` with what AMD runs load beside it, built once per test process:
/// the HSA tool library (`libxfpx_hsa.so`) and the emulated HSA runtime
/// (`libhsa_runtime64.so`). Returns their folder.
pub fn amd_live_built() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = cargo_build(&["-p", "xfpx", "-p", "xfpx-hsa-tool", "-p", "xfpx-hsa-runtime"]);
            for f in ["xfpx", "libxfpx_hsa.so", "libhsa_runtime64.so"] {
                assert!(dir.join(f).is_file(), "{} was not built", dir.join(f).display());
            }
            dir
        })
        .clone()
}

/// A finding event as the instrumentation library would send it.
#[allow(clippy::too_many_arguments)]
pub fn finding(
    kernel: &str,
    kind: ExceptionKind,
    format: FpFormat,
    site: u32,
    offset: u64,
    instr: &str,
    location: Option<(&str, u32)>,
    launch: u64,
    occurrences: u64,
) -> Event {
    Event::Finding {
        kernel: kernel.to_string(),
        kind,
        format,
        site: SiteRef {
            id: SiteId(site),
            offset,
            instr: instr.to_string(),
            location: location.map(|(file, line)| SourceLoc::new(file, line)),
        },
        launch,
        occurrences,
    }
}

/// Events as JSON lines, ready for `scripted-event-app --events`.
pub fn event_lines(events: &[Event]) -> String {
    events.iter().map(Event::to_line).collect()
}
