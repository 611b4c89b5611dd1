//! Programs run on AMD GPUs, instrumented: the HSA runtime loads xfpx's
//! tool library (`libxfpx_hsa.so`, crate `xfpx-hsa-tool`) through
//! `HSA_TOOLS_LIB`, ahead of any tools already named there. [`Hsa`] is
//! ROCm's runtime on a machine with an AMD GPU; [`EmulatedHsa`] is xfpx's
//! emulated runtime (`libhsa-runtime64.so.1` over the CDNA emulator,
//! crate `xfpx-hsa-runtime`), put first on `LD_LIBRARY_PATH`, with the GPU
//! target it emulates.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use xfpx_common::backend::{BackendError, LaunchEnv, Launching, LiveBackend, Refusal, Settled};
use xfpx_common::config::{Mode, RunConfig};
use xfpx_common::tool::ToolKind;
use xfpx_common::toolpath;

/// The variable naming the tool library explicitly.
pub const TOOL_ENV: &str = "XFPX_HSA_TOOL";
/// The tool library's file name.
pub const TOOL_FILE_NAME: &str = "libxfpx_hsa.so";
/// The variable naming the emulated runtime explicitly.
pub const RUNTIME_ENV: &str = "XFPX_HSA_RUNTIME";
/// The name programs load the HSA runtime by (its SONAME).
pub const RUNTIME_SONAME: &str = "libhsa-runtime64.so.1";
/// The emulated runtime's file names: installed, and as cargo builds it.
pub const RUNTIME_FILE_NAMES: [&str; 2] = [RUNTIME_SONAME, "libhsa_runtime64.so"];
/// The emulated runtime's variable naming the GPU target it emulates.
pub const TARGET_ENV: &str = "XFPX_HSA_TARGET";
/// The runtime's variable listing tool libraries.
pub const TOOLS_LIB_ENV: &str = "HSA_TOOLS_LIB";
/// ROCm 6's variable that keeps `HSA_TOOLS_LIB` tools loaded while a
/// rocprofiler-sdk tool is registered (ROCm 5 ignores it).
pub const V1_TOOLS_ENV: &str = "HSA_TOOLS_ROCPROFILER_V1_TOOLS";
/// What a run asked for fast mode hears: the rewriter lowers detect and screen.
pub const FAST_MODE_NOTE: &str = "AMD kernels have no fast mode: every floating-point result is checked (detect)";

/// How an AMD run takes `config` ([`LiveBackend::settle`], for `xfpx run`
/// and the tool library alike): the exception detector only; fast mode is
/// checked in detect mode, with [`FAST_MODE_NOTE`]; detect and screen as
/// they are.
pub fn settle(config: &RunConfig) -> Result<Settled, Refusal> {
    if config.tool != ToolKind::Detect {
        return Err(Refusal::Unavailable(format!(
            "--tool {} is not available for AMD runs (the exception detector only)",
            config.tool.name()
        )));
    }
    match config.mode {
        Mode::Fast => Ok(Settled { mode: Mode::Detect, notes: vec![FAST_MODE_NOTE.to_string()] }),
        m @ (Mode::Detect | Mode::Screen) => Ok(Settled { mode: m, notes: Vec::new() }),
        m => Err(Refusal::Unavailable(format!("mode {} is not available for AMD runs (detect, screen)", m.name()))),
    }
}

/// ROCm's HSA runtime on this machine's AMD GPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hsa;

/// xfpx's emulated HSA runtime.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmulatedHsa;

/// This workspace's build folders (a `cargo build` run from the sources).
fn build_dirs() -> Vec<PathBuf> {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    vec![target.join("release"), target.join("debug")]
}

/// The tool library: [`TOOL_ENV`], beside `xfpx`, in `../lib`, or in
/// this workspace's build folders.
pub fn tool_library() -> Result<PathBuf, BackendError> {
    toolpath::find_from_env(TOOL_ENV, &build_dirs(), &[TOOL_FILE_NAME]).map_err(|m| match m {
        toolpath::Missing::NotAFile(p) => format!("{TOOL_ENV} names {}, which is not a file", p.display()).into(),
        toolpath::Missing::NotFound => format!(
            "the xfpx HSA tool ({TOOL_FILE_NAME}) is not installed beside xfpx: build it with `cargo build --release -p \
             xfpx-hsa-tool` and copy it there, or set {TOOL_ENV}"
        )
        .into(),
    })
}

/// The emulated runtime: [`RUNTIME_ENV`], beside `xfpx`, in `../lib`, or
/// in this workspace's build folders.
pub fn emulated_runtime() -> Result<PathBuf, BackendError> {
    toolpath::find_from_env(RUNTIME_ENV, &build_dirs(), &RUNTIME_FILE_NAMES).map_err(|m| match m {
        toolpath::Missing::NotAFile(p) => format!("{RUNTIME_ENV} names {}, which is not a file", p.display()).into(),
        toolpath::Missing::NotFound => format!(
            "xfpx's emulated HSA runtime ({RUNTIME_SONAME}) is not installed beside xfpx: build it with `cargo build \
             --release -p xfpx-hsa-runtime` and copy it there, or set {RUNTIME_ENV}"
        )
        .into(),
    })
}

/// The names in an `HSA_TOOLS_LIB` value, read as ROCm's runtime reads
/// them: separated by spaces, a name in double quotes may hold spaces, a
/// backslash takes the next character as it is.
pub fn tool_names(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (mut name, mut quoted, mut chars) = (String::new(), false, value.chars());
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.extend(chars.next()),
            '"' if quoted => {
                quoted = false;
                names.push(std::mem::take(&mut name));
            }
            '"' => quoted = true,
            ' ' if !quoted => names.push(std::mem::take(&mut name)),
            c => name.push(c),
        }
    }
    names.push(name);
    names.retain(|n| !n.is_empty());
    names
}

/// A name as one entry of `HSA_TOOLS_LIB` (spaces, quotes and
/// backslashes escaped).
pub fn tool_name_entry(name: &str) -> String {
    name.chars().fold(String::new(), |mut s, c| {
        if matches!(c, ' ' | '"' | '\\') {
            s.push('\\');
        }
        s.push(c);
        s
    })
}

/// `HSA_TOOLS_LIB` with `library` first, then the tools already named
/// (kept as they are, `library` itself left out of them), and a warning
/// for each of those that names a file that is not there.
fn tools_lib(library: &Path, existing: Option<OsString>) -> Result<(OsString, Vec<String>), BackendError> {
    let ours = library.to_str().ok_or_else(|| format!("the tool library's path {} is not UTF-8", library.display()))?;
    let existing = existing.map(|v| v.to_string_lossy().into_owned()).unwrap_or_default();
    let mut warnings = Vec::new();
    let mut value = tool_name_entry(ours);
    for name in tool_names(&existing) {
        if name == ours {
            continue;
        }
        if name.contains('/') && !Path::new(&name).is_file() {
            warnings.push(format!("{TOOLS_LIB_ENV} names {name}, which is not a file: the HSA runtime will skip it"));
        }
        value.push(' ');
        value.push_str(&tool_name_entry(&name));
    }
    Ok((value.into(), warnings))
}

impl LiveBackend for Hsa {
    fn settle(&self, config: &RunConfig) -> Result<Settled, Refusal> {
        settle(config)
    }

    fn library(&self) -> Result<PathBuf, BackendError> {
        tool_library()
    }

    /// Nothing else: the program brings ROCm's runtime.
    fn check_machine(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// `HSA_TOOLS_LIB` with the tool first, kept by ROCm 6 beside a
    /// rocprofiler-sdk tool.
    fn environment(&self, launching: &Launching<'_>) -> Result<LaunchEnv, BackendError> {
        let (value, warnings) = tools_lib(launching.library, (launching.existing)(TOOLS_LIB_ENV))?;
        Ok(LaunchEnv { vars: vec![(TOOLS_LIB_ENV.into(), value), (V1_TOOLS_ENV.into(), "1".into())], warnings })
    }
}

impl LiveBackend for EmulatedHsa {
    fn settle(&self, config: &RunConfig) -> Result<Settled, Refusal> {
        settle(config)
    }

    fn library(&self) -> Result<PathBuf, BackendError> {
        tool_library()
    }

    fn check_machine(&self) -> Result<(), BackendError> {
        emulated_runtime().map(|_| ())
    }

    /// As [`Hsa`]'s, with the emulated runtime first on `LD_LIBRARY_PATH`
    /// (by its SONAME, linked from the run's private folder) and the
    /// target it emulates.
    fn environment(&self, launching: &Launching<'_>) -> Result<LaunchEnv, BackendError> {
        let mut env = Hsa.environment(launching)?;
        if let Some(t) = launching.target {
            if xfpx_amd_isa::Target::from_name(t).is_none() {
                let known: Vec<&str> = xfpx_amd_isa::Target::ALL.iter().map(|t| t.name()).collect();
                return Err(format!("--target {t} is not a target the emulator runs ({})", known.join(", ")).into());
            }
            env.vars.push((TARGET_ENV.into(), t.into()));
        }
        let runtime = std::path::absolute(emulated_runtime()?)?;
        let dir = launching.scratch.join("hsa-runtime");
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::os::unix::fs::symlink(&runtime, dir.join(RUNTIME_SONAME)))
            .map_err(|e| format!("cannot link the emulated runtime into {}: {e}", dir.display()))?;
        let mut path = dir.into_os_string();
        if let Some(existing) = (launching.existing)("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
            path.push(":");
            path.push(existing);
        }
        env.vars.push(("LD_LIBRARY_PATH".into(), path));
        Ok(env)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use xfpx_common::backend::Inject;

    #[test]
    fn amd_runs_settle_fast_mode_as_detect_and_refuse_other_tools() {
        use xfpx_common::config::RunSettings;
        let config = |mode, tool| RunSettings { mode, tool, ..RunSettings::default() }.check().expect("valid");
        let fast = Hsa.settle(&config(Mode::Fast, ToolKind::Detect)).expect("runs");
        assert_eq!((fast.mode, fast.notes), (Mode::Detect, vec![FAST_MODE_NOTE.to_string()]));
        let screen = EmulatedHsa.settle(&config(Mode::Screen, ToolKind::Detect)).expect("runs");
        assert_eq!((screen.mode, screen.notes.len()), (Mode::Screen, 0));
        match Hsa.settle(&config(Mode::Detect, ToolKind::Counters)) {
            Err(Refusal::Unavailable(e)) => assert!(e.starts_with("--tool counters is not available"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tools_lib_names_read_as_the_runtime_reads_them() {
        assert_eq!(tool_names("a.so b.so"), ["a.so", "b.so"]);
        assert_eq!(tool_names("  a.so   \"/x y/b.so\" c\\ d.so "), ["a.so", "/x y/b.so", "c d.so"]);
        assert_eq!(tool_names(""), Vec::<String>::new());
        for name in ["/p/lib.so", "/with space/l.so", "/q\"uote/l.so", "/back\\slash/l.so"] {
            assert_eq!(tool_names(&format!("{} x.so", tool_name_entry(name))), [name, "x.so"]);
        }
    }

    #[test]
    fn the_tool_goes_first_and_missing_chained_tools_are_said() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("libother.so");
        std::fs::write(&other, b"").unwrap();
        let ours = Path::new("/opt/x y/libxfpx_hsa.so");
        let existing =
            format!("{} /gone/libtracer.so libbare.so {}", other.display(), tool_name_entry(ours.to_str().unwrap()));
        let (value, warnings) = tools_lib(ours, Some(existing.into())).unwrap();
        let names = tool_names(value.to_str().unwrap());
        assert_eq!(names, [ours.to_str().unwrap(), other.to_str().unwrap(), "/gone/libtracer.so", "libbare.so"]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("/gone/libtracer.so") && !warnings[0].contains('\n'), "{warnings:?}");
        let (value, warnings) = tools_lib(ours, None).unwrap();
        assert_eq!(value, OsString::from("/opt/x\\ y/libxfpx_hsa.so"));
        assert!(warnings.is_empty());
    }

    #[test]
    fn the_emulated_runtime_comes_first_on_the_library_path() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("libhsa_runtime64.so");
        std::fs::write(&runtime, b"").unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        // read by this test alone
        std::env::set_var(RUNTIME_ENV, &runtime);
        let existing = |name: &str| (name == "LD_LIBRARY_PATH").then(|| OsString::from("/usr/lib/x"));
        let launching = |target| Launching {
            library: Path::new("/l/libxfpx_hsa.so"),
            inject: Inject::Preload,
            existing: &existing,
            scratch: &scratch,
            target,
        };
        let env = EmulatedHsa.environment(&launching(Some("gfx90a"))).unwrap();
        let var = |k: &str| env.vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.to_str().unwrap().to_string());
        assert_eq!(var(TARGET_ENV).as_deref(), Some("gfx90a"));
        assert_eq!(var(TOOLS_LIB_ENV).as_deref(), Some("/l/libxfpx_hsa.so"));
        let path = var("LD_LIBRARY_PATH").unwrap();
        let first = path.split(':').next().unwrap();
        assert_eq!(std::fs::read_link(Path::new(first).join(RUNTIME_SONAME)).unwrap(), runtime);
        assert!(path.ends_with(":/usr/lib/x"));
        let e = EmulatedHsa.environment(&launching(Some("gfx1100"))).unwrap_err().to_string();
        assert!(e.starts_with("--target gfx1100 is not a target the emulator runs (gfx908"), "{e}");
    }
}
