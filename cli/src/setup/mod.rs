//! `xfpx setup amd` installs the AMD libraries this xfpx carries
//! ([`amd`]). `xfpx setup nvidia`: builds the NVBit tool library for this machine's
//! GPUs (or the targets given) and installs it beside the `xfpx`
//! executable, where `xfpx run` looks; where CUPTI is found, also the
//! hardware counters' library beside it (`--counters hardware`; without
//! CUPTI one note says why it was not built, and the rest works). Everything is checked first (nvcc,
//! nvdisasm, the host compiler, the driver, NVBit's version and checksum,
//! the install folder) and what is missing is said in one line. The
//! library is built in a temporary folder from the sources and the Rust
//! core carried inside this binary (see `build.rs`), so no source tree
//! and no Rust toolchain is needed, and replaces an installed one only
//! once it is complete.

mod amd;
mod install;
mod nvbit;
mod toolkit;

use crate::args::{SetupArgs, SetupVendor};
use crate::console::say;
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use toolkit::{Gpus, Search, Toolkit};
use xfpx_nvidia::disasm_cache::HELPER_FILE_NAME;
use xfpx_nvidia::toolbuild::{self, Part, SmArch, Step, ToolBuild};

/// The tool's Rust core, zstd-compressed; empty in builds that do not
/// carry it (debug builds, see `build.rs`).
const EMBEDDED_CORE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tool-core.a.zst"));

pub fn setup(a: &SetupArgs) -> Result<i32> {
    if a.vendor == SetupVendor::Amd {
        return amd::setup(a);
    }
    // nvcc runs in a temporary folder: the paths given are made absolute
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let a = &SetupArgs {
        vendor: a.vendor,
        nvbit: a.nvbit.as_deref().map(absolute),
        arch: a.arch.clone(),
        dest: a.dest.as_deref().map(absolute),
        core_lib: a.core_lib.as_deref().map(absolute),
        verbose: a.verbose,
    };
    let given_arches = match a.arch.as_deref() {
        Some(s) => Some(toolbuild::parse_arch_list(s).map_err(|e| anyhow::anyhow!("invalid --arch: {e}"))?),
        None => None,
    };
    let search = Search::from_env();
    let dest = match &a.dest {
        Some(d) => d.clone(),
        None => exe_dir()?,
    };

    // Check everything before building anything.
    let mut problems: Vec<String> = Vec::new();
    let toolkit = toolkit::find_toolkit(&search).map_err(|p| problems.extend(p)).ok();
    let gpus = toolkit::query_gpus(&search);
    let arches = match (given_arches, &gpus) {
        (Some(list), _) => list,
        (None, Ok(g)) => g.arches.clone(),
        (None, Err(e)) => {
            problems.push(format!(
                "no GPU target: {e} (install the NVIDIA driver, or give --arch sm_XX to build for another machine)"
            ));
            Vec::new()
        }
    };
    match &a.core_lib {
        Some(p) if !p.is_file() => problems.push(format!("--core-lib {} is not a file", p.display())),
        Some(_) => {}
        None if EMBEDDED_CORE.is_empty() => problems.push(
            "this xfpx carries no tool core (a debug build: use `cargo install --path cli` or `cargo build --release -p xfpx`, or pass --core-lib libxfpx_nvbit.a)".into(),
        ),
        None => {}
    }
    if let Err(e) = install::check_writable(&dest) {
        problems.push(e);
    }
    let download_dir =
        tempfile::Builder::new().prefix("xfpx-setup-").tempdir().context("cannot make a temporary folder")?;
    let core = match &a.nvbit {
        Some(p) => nvbit::from_path(p).map_err(|e| problems.push(e)).ok(),
        // download only when nothing else is missing
        None if problems.is_empty() => nvbit::download(download_dir.path(), &search.path)
            .and_then(|t| nvbit::from_path(&t))
            .map_err(|e| problems.push(e))
            .ok(),
        None => None,
    };
    let (Some(toolkit), Some(core)) = (toolkit, core) else {
        bail!("cannot set up the NVIDIA tool: {}", problems.join("; "));
    };
    if !problems.is_empty() {
        bail!("cannot set up the NVIDIA tool: {}", problems.join("; "));
    }

    let targets = arches.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
    say!(
        "xfpx: building {} for {targets} with nvcc (CUDA {}) and NVBit {}",
        xfpx_nvidia::TOOL_FILE_NAME,
        toolkit.cuda_version,
        nvbit::VERSION
    );
    let work = tempfile::Builder::new().prefix("xfpx-setup-").tempdir().context("cannot make a temporary folder")?;
    let built = build(a, &toolkit, &core.dir, &arches, work.path())?;
    let installed = install::install(&built.library, &dest, xfpx_nvidia::TOOL_FILE_NAME).map_err(anyhow::Error::msg)?;
    let helper_note = match &built.disasm_helper {
        Ok(helper) => {
            install::install(helper, &dest, HELPER_FILE_NAME).map_err(anyhow::Error::msg)?;
            None
        }
        Err(why) => {
            // one an earlier setup installed would outlive this note
            let stale = dest.join(HELPER_FILE_NAME);
            if stale.is_file() {
                let _ = std::fs::remove_file(&stale);
            }
            Some(format!(
                "the disassembly cache's helper was not built: {why} (cached disassembly is answered by a shell script instead, a few milliseconds more per kernel)"
            ))
        }
    };
    let cupti_note = match &built.cupti {
        Ok(lib) => {
            let at = install::install(lib, &dest, xfpx_nvidia::CUPTI_TOOL_FILE_NAME).map_err(anyhow::Error::msg)?;
            format!("hardware counters (--counters hardware): installed {}", at.display())
        }
        Err(why) => {
            // an earlier setup's library would not match this core
            let stale = dest.join(xfpx_nvidia::CUPTI_TOOL_FILE_NAME);
            let removed = stale.is_file() && std::fs::remove_file(&stale).is_ok();
            format!(
                "the hardware counters' library was not built: {why} (--counters hardware is unavailable; install the CUDA toolkit's CUPTI and run the setup again){}",
                if removed { "; the one an earlier setup installed was removed" } else { "" }
            )
        }
    };

    let driver = match &gpus {
        Ok(g) => format!("driver {}", g.driver),
        Err(_) => "no driver here".to_string(),
    };
    say!(
        "xfpx: installed {} for {targets} (NVBit {}, CUDA {}, {driver})",
        installed.display(),
        nvbit::VERSION,
        toolkit.cuda_version
    );
    for note in notes(&toolkit, &gpus, &arches, &installed).into_iter().chain(helper_note).chain(Some(cupti_note)) {
        say!("xfpx: note: {note}");
    }
    Ok(0)
}

/// What was built: the tool library, and the disassembly cache's helper
/// and the hardware counters' library or why there is none (one line).
struct Built {
    library: PathBuf,
    disasm_helper: Result<PathBuf, String>,
    cupti: Result<PathBuf, String>,
}

/// Write the sources and the core, run the nvcc steps; returns the tool
/// library and, where CUPTI was found and its steps passed, the hardware
/// counters' library.
fn build(a: &SetupArgs, tk: &Toolkit, nvbit_core: &Path, arches: &[SmArch], work: &Path) -> Result<Built> {
    let sources = work.join("src");
    toolbuild::write_sources(&sources).context("cannot write the tool's sources")?;
    let cupti = tk.cupti.as_ref().ok().map(|c| toolbuild::Cupti { include_dir: &c.include_dir, lib_dir: &c.lib_dir });
    if let Some(c) = &cupti {
        let header = sources.join(toolbuild::CUPTI_PATHS_HEADER);
        std::fs::write(&header, toolbuild::cupti_paths_header(c.lib_dir))
            .with_context(|| format!("cannot write {}", header.display()))?;
    }
    let core_lib = match &a.core_lib {
        Some(p) => p.clone(),
        None => {
            let p = work.join("libxfpx_nvbit.a");
            let bytes = zstd::decode_all(EMBEDDED_CORE).context("the carried tool core is damaged")?;
            std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))?;
            p
        }
    };
    let out_dir = work.join("build");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let plan = ToolBuild {
        sources: &sources,
        nvbit_core,
        core_lib: &core_lib,
        arches,
        cuda_lib_dir: tk.lib_dir.as_deref(),
        libcuda: &tk.libcuda,
        out_dir: &out_dir,
        cupti,
    };
    let mut cupti_failed = None;
    let mut helper_failed = None;
    for step in plan.steps() {
        match (run_step(&tk.nvcc, &step, work, a.verbose), step.part) {
            (Err(e), Part::HardwareCounters) => {
                cupti_failed = Some(e.to_string());
                break;
            }
            (Err(e), Part::DisasmHelper) => helper_failed = Some(e.to_string()),
            (r, _) => r?,
        }
    }
    let lib = plan.library();
    let head = std::fs::read(&lib).map(|b| b.get(..4) == Some(b"\x7fELF")).unwrap_or(false);
    if !head {
        bail!("nvcc reported success but {} is missing or not a shared library", lib.display());
    }
    let cupti = match (cupti_failed, plan.cupti_library(), &tk.cupti) {
        (Some(e), _, _) => Err(e),
        (None, Some(lib), _) => Ok(lib),
        (None, None, Err(why)) => Err(why.clone()),
        (None, None, Ok(_)) => Err("CUPTI was found but not built (internal)".into()),
    };
    let helper = match helper_failed {
        Some(e) => Err(e),
        None => Ok(plan.disasm_helper()),
    };
    Ok(Built { library: lib, disasm_helper: helper, cupti })
}

fn run_step(nvcc: &Path, step: &Step, work: &Path, verbose: bool) -> Result<()> {
    if verbose {
        let args: Vec<String> = step.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        say!("xfpx: {} {}", nvcc.display(), args.join(" "));
    }
    let out = Command::new(nvcc)
        .args(&step.args)
        .current_dir(work)
        .output()
        .with_context(|| format!("cannot run {}", nvcc.display()))?;
    if verbose {
        crate::console::say_raw!(String::from_utf8_lossy(&out.stdout));
        crate::console::say_raw!(String::from_utf8_lossy(&out.stderr));
    }
    if !out.status.success() {
        bail!(
            "nvcc failed on {} ({}): {} (rerun with --verbose for its whole output)",
            step.what,
            out.status,
            toolkit::last_line(&out.stderr, &out.stdout)
        );
    }
    Ok(())
}

/// What the user should know after a successful setup.
fn notes(tk: &Toolkit, gpus: &Result<Gpus, String>, arches: &[SmArch], installed: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    if !tk.nvdisasm_on_path {
        let dir = tk.nvdisasm.parent().unwrap_or(Path::new("."));
        notes.push(format!(
            "nvdisasm is not on PATH; NVBit runs it, so add {} to PATH before `xfpx run`",
            dir.display()
        ));
    }
    match gpus {
        Ok(g) => {
            let missing: Vec<String> =
                g.arches.iter().filter(|a| !arches.contains(a)).map(ToString::to_string).collect();
            if !missing.is_empty() {
                notes.push(format!("this machine's GPUs are {}, which the tool was not built for", missing.join(",")));
            }
        }
        Err(e) => notes.push(format!("no NVIDIA driver answered ({e}); `xfpx run` needs one")),
    }
    // what `xfpx run` would load now
    let loads = xfpx_nvidia::tool_library().ok().map(|p| p.canonicalize().unwrap_or(p));
    if loads.is_none() || loads != installed.canonicalize().ok() {
        let now = loads.map_or("finds no tool library".to_string(), |p| format!("loads {}", p.display()));
        notes.push(format!(
            "`xfpx run` {now} (it looks in {}, beside the xfpx executable, in ../lib from it); set {}={} to use this one",
            xfpx_nvidia::TOOL_ENV,
            xfpx_nvidia::TOOL_ENV,
            installed.display()
        ));
    }
    notes
}

/// The folder of the running `xfpx`, where `xfpx run` looks first.
fn exe_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot tell where the xfpx executable is; give --dest")?;
    Ok(exe.parent().map(Path::to_path_buf).unwrap_or_default())
}
