//! The CUDA toolkit and the NVIDIA driver as `xfpx setup nvidia` finds
//! them: nvcc and its version, nvdisasm (NVBit runs it), the host C++
//! compiler, the libraries to link against, CUPTI (for the hardware
//! counters' library; optional), and the local GPUs' targets (from
//! `nvidia-smi`). Each missing piece is one short problem text; the caller
//! joins them into one line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_nvidia::disasm_cache::find_on_path;
use xfpx_nvidia::toolbuild::SmArch;

/// Where tools are looked for: the process environment, or a test's.
#[derive(Debug, Clone)]
pub struct Search {
    pub path: OsString,
    /// `NVCC`: nvcc's path, taken as it is.
    pub nvcc: Option<PathBuf>,
    /// `CUDA_HOME`: the toolkit's root.
    pub cuda_home: Option<PathBuf>,
    /// `NVCC_CCBIN`: the host compiler nvcc is told to use.
    pub ccbin: Option<PathBuf>,
    /// The toolkit root looked at when neither `CUDA_HOME` nor `PATH` has nvcc.
    pub default_cuda: Vec<PathBuf>,
    /// The driver's libraries outside the toolkit.
    pub system_libcuda: Vec<PathBuf>,
}

impl Search {
    pub fn from_env() -> Search {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Search {
            path: std::env::var_os("PATH").unwrap_or_default(),
            nvcc: var("NVCC"),
            cuda_home: var("CUDA_HOME"),
            ccbin: var("NVCC_CCBIN"),
            default_cuda: vec![PathBuf::from("/usr/local/cuda")],
            system_libcuda: [
                "/usr/lib/x86_64-linux-gnu/libcuda.so",
                "/usr/lib64/libcuda.so",
                "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                "/usr/lib64/libcuda.so.1",
            ]
            .map(PathBuf::from)
            .to_vec(),
        }
    }
}

/// What the build needs from the toolkit.
#[derive(Debug, Clone)]
pub struct Toolkit {
    pub nvcc: PathBuf,
    /// `13.0`, from `nvcc --version`.
    pub cuda_version: String,
    pub nvdisasm: PathBuf,
    /// Whether `nvdisasm` is on `PATH`, where NVBit looks for it at run time.
    pub nvdisasm_on_path: bool,
    /// CUDA's library folder (with the CUDA runtime), when found.
    pub lib_dir: Option<PathBuf>,
    /// The driver library to link against.
    pub libcuda: PathBuf,
    /// CUPTI's headers and libraries, or why they were not found (one
    /// line): only the hardware counters' library needs them.
    pub cupti: Result<CuptiDirs, String>,
}

/// Where CUPTI is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuptiDirs {
    /// With `cupti_range_profiler.h` (CUDA 12.6 or newer).
    pub include_dir: PathBuf,
    /// With `libcupti.so`.
    pub lib_dir: PathBuf,
}

/// Find CUPTI under the toolkit roots: `extras/CUPTI` (the toolkit's own
/// layout), else the roots' `include` and `lib64`/`lib` (pip's layout).
pub fn find_cupti(roots: &[PathBuf]) -> Result<CuptiDirs, String> {
    let mut old = None;
    for r in roots {
        for (inc, libs) in [
            (r.join("extras/CUPTI/include"), vec![r.join("extras/CUPTI/lib64"), r.join("extras/CUPTI/lib")]),
            (r.join("include"), vec![r.join("lib64"), r.join("lib")]),
        ] {
            if !inc.join("cupti.h").is_file() {
                continue;
            }
            if !inc.join("cupti_range_profiler.h").is_file() {
                old = Some(inc.clone());
                continue;
            }
            if let Some(lib) = libs.into_iter().find(|l| l.join("libcupti.so").is_file()) {
                return Ok(CuptiDirs { include_dir: inc, lib_dir: lib });
            }
        }
    }
    let mut looked: Vec<String> = Vec::new();
    for r in roots.iter().map(|r| format!("{}/extras/CUPTI", r.display())) {
        if !looked.contains(&r) {
            looked.push(r);
        }
    }
    Err(match old {
        Some(inc) => {
            format!("the CUPTI at {} has no cupti_range_profiler.h (CUDA 12.6 or newer needed)", inc.display())
        }
        None if looked.is_empty() => "CUPTI not found (no CUDA toolkit root known)".into(),
        None => format!("CUPTI (cupti_range_profiler.h and libcupti.so) not found in {}", looked.join(", ")),
    })
}

const TOOLKIT_HINT: &str = "(install the CUDA toolkit, or set CUDA_HOME or NVCC)";

/// Find the toolkit; on failure, every problem found.
pub fn find_toolkit(s: &Search) -> Result<Toolkit, Vec<String>> {
    let mut problems = Vec::new();
    let nvcc = match find_nvcc(s) {
        Ok(p) => Some(p),
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let cuda_version = nvcc.as_deref().map(nvcc_version).transpose().unwrap_or_else(|e| {
        problems.push(e);
        None
    });
    let bin_dir = nvcc.as_deref().and_then(Path::parent);
    let nvdisasm_on_path = find_on_path("nvdisasm", &s.path);
    let nvdisasm = bin_dir.map(|d| d.join("nvdisasm")).filter(|p| p.is_file()).or_else(|| nvdisasm_on_path.clone());
    if nvdisasm.is_none() {
        problems.push("nvdisasm not beside nvcc nor on PATH (NVBit runs it: install CUDA's nvdisasm)".into());
    }
    if s.ccbin.is_none() && find_on_path("g++", &s.path).is_none() {
        problems.push("g++ not on PATH (nvcc's host compiler: install g++ or set NVCC_CCBIN)".into());
    }
    let roots: Vec<PathBuf> =
        s.cuda_home.iter().cloned().chain(bin_dir.and_then(Path::parent).map(Path::to_path_buf)).collect();
    let lib_dir = roots
        .iter()
        .flat_map(|r| ["lib64", "lib", "targets/x86_64-linux/lib"].map(|l| r.join(l)))
        .find(|d| d.join("libcudart_static.a").is_file() || d.join("libcudart.so").is_file());
    let libcuda = lib_dir
        .iter()
        .flat_map(|d| [d.join("libcuda.so"), d.join("stubs/libcuda.so")])
        .chain(s.system_libcuda.iter().cloned())
        .find(|p| p.is_file());
    if libcuda.is_none() && nvcc.is_some() {
        problems.push(
            "libcuda.so not found (looked in CUDA's lib64/stubs and the driver's library folders: install the CUDA toolkit's driver stub or the NVIDIA driver)".into(),
        );
    }
    let cupti = find_cupti(&roots);
    match (nvcc, cuda_version, nvdisasm, libcuda) {
        (Some(nvcc), Some(cuda_version), Some(nvdisasm), Some(libcuda)) if problems.is_empty() => Ok(Toolkit {
            nvcc,
            cuda_version,
            nvdisasm,
            nvdisasm_on_path: nvdisasm_on_path.is_some(),
            lib_dir,
            libcuda,
            cupti,
        }),
        _ => Err(problems),
    }
}

fn find_nvcc(s: &Search) -> Result<PathBuf, String> {
    if let Some(p) = &s.nvcc {
        return if p.is_file() {
            Ok(p.clone())
        } else {
            Err(format!("NVCC names {}, which is not a file", p.display()))
        };
    }
    if let Some(home) = &s.cuda_home {
        let p = home.join("bin/nvcc");
        if p.is_file() {
            return Ok(p);
        }
    }
    if let Some(p) = find_on_path("nvcc", &s.path) {
        return Ok(p);
    }
    if s.cuda_home.is_none() {
        if let Some(p) = s.default_cuda.iter().map(|d| d.join("bin/nvcc")).find(|p| p.is_file()) {
            return Ok(p);
        }
    }
    let looked = match &s.cuda_home {
        Some(h) => format!("not in CUDA_HOME ({}/bin) nor on PATH", h.display()),
        None => format!(
            "not on PATH{}",
            s.default_cuda.iter().map(|d| format!(" nor in {}/bin", d.display())).collect::<String>()
        ),
    };
    Err(format!("nvcc {looked} {TOOLKIT_HINT}"))
}

/// `release 13.0` from `nvcc --version`.
fn nvcc_version(nvcc: &Path) -> Result<String, String> {
    let out = run_text(Command::new(nvcc).arg("--version")).map_err(|e| format!("nvcc at {}: {e}", nvcc.display()))?;
    out.split("release ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| c == ',' || c.is_whitespace()).next())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("nvcc at {}: `nvcc --version` names no release", nvcc.display()))
}

/// The local GPUs as the driver reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpus {
    /// Their targets, without repeats.
    pub arches: Vec<SmArch>,
    pub driver: String,
    pub names: Vec<String>,
}

/// Ask the driver (`nvidia-smi`) for the GPUs' compute capabilities.
pub fn query_gpus(s: &Search) -> Result<Gpus, String> {
    let smi = find_on_path("nvidia-smi", &s.path).ok_or_else(|| "nvidia-smi not on PATH".to_string())?;
    let out =
        run_text(Command::new(&smi).args(["--query-gpu=compute_cap,driver_version,name", "--format=csv,noheader"]))
            .map_err(|e| format!("nvidia-smi {e}"))?;
    parse_gpus(&out)
}

fn parse_gpus(text: &str) -> Result<Gpus, String> {
    let mut gpus = Gpus { arches: Vec::new(), driver: String::new(), names: Vec::new() };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.splitn(3, ',').map(str::trim).collect();
        let [cap, driver, name] = fields[..] else {
            return Err(format!("unexpected nvidia-smi line `{line}`"));
        };
        let arch = SmArch::parse(cap).map_err(|e| format!("nvidia-smi's compute capability {e}"))?;
        if !gpus.arches.contains(&arch) {
            gpus.arches.push(arch);
        }
        gpus.driver = driver.to_string();
        gpus.names.push(name.to_string());
    }
    if gpus.arches.is_empty() {
        return Err("nvidia-smi lists no GPU".into());
    }
    Ok(gpus)
}

/// Run a command and return its stdout; an error names its status and the
/// last line it printed.
pub fn run_text(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!("failed ({}): {}", out.status, last_line(&out.stderr, &out.stdout)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The most telling line of a failed tool's output: its last line that
/// says `error`, else its last non-empty line.
pub fn last_line(stderr: &[u8], stdout: &[u8]) -> String {
    let text = format!("{}\n{}", String::from_utf8_lossy(stdout), String::from_utf8_lossy(stderr));
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let pick = lines.iter().rev().find(|l| l.to_ascii_lowercase().contains("error")).or(lines.last());
    pick.map_or_else(|| "no output".to_string(), |l| l.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, b"").expect("write");
    }

    fn search(path: &Path) -> Search {
        Search {
            path: path.as_os_str().to_owned(),
            nvcc: None,
            cuda_home: None,
            ccbin: None,
            default_cuda: Vec::new(),
            system_libcuda: Vec::new(),
        }
    }

    /// A fake toolkit under `root`: bin/nvcc, bin/nvdisasm, lib64 with the
    /// runtime and the driver stub.
    fn fake_cuda(root: &Path) {
        script(&root.join("bin"), "nvcc", "echo 'Cuda compilation tools, release 13.0, V13.0.88'");
        script(&root.join("bin"), "nvdisasm", "exit 0");
        touch(&root.join("lib64/libcudart_static.a"));
        touch(&root.join("lib64/stubs/libcuda.so"));
    }

    #[test]
    fn a_path_without_nvcc_names_nvcc_and_the_fix() {
        let d = tempfile::tempdir().expect("tmp");
        let bin = d.path().join("bin");
        script(&bin, "g++", "exit 0");
        let problems = find_toolkit(&search(&bin)).expect_err("no nvcc");
        assert!(problems[0].starts_with("nvcc not on PATH (install the CUDA toolkit"), "{problems:?}");
        assert!(problems[0].contains("CUDA_HOME"), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("nvdisasm")), "{problems:?}");
        assert!(problems.iter().all(|p| !p.contains('\n')));
        // CUDA_HOME without nvcc is named as such
        let mut s = search(&bin);
        s.cuda_home = Some(d.path().join("cuda"));
        let problems = find_toolkit(&s).expect_err("no nvcc");
        assert!(problems[0].contains("not in CUDA_HOME"), "{problems:?}");
        // the default root is looked at when nothing is set
        let mut s = search(&bin);
        s.default_cuda = vec![d.path().join("cuda")];
        fake_cuda(&d.path().join("cuda"));
        let tk = find_toolkit(&s).expect("default root");
        assert_eq!(tk.nvcc, d.path().join("cuda/bin/nvcc"));
        assert!(!tk.nvdisasm_on_path);
    }

    #[test]
    fn finds_a_whole_toolkit() {
        let d = tempfile::tempdir().expect("tmp");
        let cuda = d.path().join("cuda");
        fake_cuda(&cuda);
        let bin = d.path().join("bin");
        script(&bin, "g++", "exit 0");
        let mut s = search(&bin);
        s.cuda_home = Some(cuda.clone());
        let tk = find_toolkit(&s).expect("found");
        assert_eq!(tk.nvcc, cuda.join("bin/nvcc"));
        assert_eq!(tk.cuda_version, "13.0");
        assert_eq!(tk.nvdisasm, cuda.join("bin/nvdisasm"));
        assert_eq!(tk.lib_dir.as_deref(), Some(cuda.join("lib64").as_path()));
        assert_eq!(tk.libcuda, cuda.join("lib64/stubs/libcuda.so"));
        let no_cupti = tk.cupti.expect_err("no CUPTI in the fake toolkit");
        assert_eq!(
            no_cupti,
            format!("CUPTI (cupti_range_profiler.h and libcupti.so) not found in {}/extras/CUPTI", cuda.display())
        );
        // CUPTI of CUDA 12.6+ in the toolkit's layout, and an older one
        touch(&cuda.join("extras/CUPTI/include/cupti.h"));
        touch(&cuda.join("extras/CUPTI/lib64/libcupti.so"));
        let e = find_toolkit(&s).expect("found").cupti.expect_err("old");
        assert!(e.contains("no cupti_range_profiler.h (CUDA 12.6 or newer needed)"), "{e}");
        touch(&cuda.join("extras/CUPTI/include/cupti_range_profiler.h"));
        let c = find_toolkit(&s).expect("found").cupti.expect("CUPTI");
        assert_eq!((c.include_dir, c.lib_dir), (cuda.join("extras/CUPTI/include"), cuda.join("extras/CUPTI/lib64")));
        // without g++ and without a driver library
        std::fs::remove_file(bin.join("g++")).expect("rm");
        std::fs::remove_file(cuda.join("lib64/stubs/libcuda.so")).expect("rm");
        let problems = find_toolkit(&s).expect_err("missing");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("g++"), "{problems:?}");
        assert!(problems[1].starts_with("libcuda.so"), "{problems:?}");
        s.ccbin = Some("/opt/gcc/bin/g++".into());
        s.system_libcuda = vec![cuda.join("lib64/libcudart_static.a")];
        assert!(find_toolkit(&s).is_ok());
    }

    #[test]
    fn broken_nvcc_is_named() {
        let d = tempfile::tempdir().expect("tmp");
        let bin = d.path().join("bin");
        script(&bin, "nvcc", "echo 'nvcc: cannot load libnvvm' >&2; exit 1");
        script(&bin, "nvdisasm", "exit 0");
        script(&bin, "g++", "exit 0");
        let mut s = search(&bin);
        s.system_libcuda = vec![bin.join("g++")];
        let problems = find_toolkit(&s).expect_err("broken");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("cannot load libnvvm"), "{problems:?}");
        s.nvcc = Some(d.path().join("nope"));
        assert!(find_toolkit(&s).expect_err("bad NVCC")[0].contains("NVCC names"));
    }

    #[test]
    fn gpus_from_nvidia_smi() {
        let g = parse_gpus("9.0, 580.95.05, NVIDIA H100 80GB HBM3\n9.0, 580.95.05, NVIDIA H100 80GB HBM3\n8.0, 580.95.05, NVIDIA A100-SXM4-40GB\n")
            .expect("parsed");
        assert_eq!(g.arches.iter().map(ToString::to_string).collect::<Vec<_>>(), ["sm_90", "sm_80"]);
        assert_eq!(g.driver, "580.95.05");
        assert_eq!(g.names.len(), 3);
        assert!(parse_gpus("").expect_err("none").contains("no GPU"));
        assert!(parse_gpus("[N/A], 470.1, Old GPU").expect_err("old").contains("compute capability"));
        assert!(parse_gpus("garbage").expect_err("bad").contains("unexpected"));

        let d = tempfile::tempdir().expect("tmp");
        let e = query_gpus(&search(d.path())).expect_err("no smi");
        assert!(e.starts_with("nvidia-smi not on PATH"), "{e}");
        script(
            d.path(),
            "nvidia-smi",
            "echo 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate with the NVIDIA driver.'; exit 9",
        );
        let e = query_gpus(&search(d.path())).expect_err("no driver");
        assert!(e.contains("couldn't communicate with the NVIDIA driver"), "{e}");
        script(d.path(), "nvidia-smi", "echo '9.0, 580.95.05, NVIDIA H100'");
        assert_eq!(query_gpus(&search(d.path())).expect("ok").driver, "580.95.05");
    }
}
