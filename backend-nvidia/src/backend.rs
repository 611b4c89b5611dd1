//! The NVIDIA side of the CLI's seam ([`xfpx_common::backend`]): saved SASS
//! listings described and dumped, and programs run live with the NVBit tool
//! library loaded into them.

use crate::disasm_cache::find_on_path;
use crate::dump::{dump_listing, DumpOptions};
use crate::sass::{build_kernel, parse_listing};
use std::ffi::OsString;
use std::path::PathBuf;
use xfpx_common::backend::{
    Backend, BackendError, DumpRequest, Dumped, Inject, LaunchEnv, Launching, LiveBackend, Refusal, Settled,
};
use xfpx_common::config::{KernelFilter, Mode, RunConfig};
use xfpx_common::view::KernelView;

/// The NVIDIA backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct Nvidia;

/// A SASS listing must be text.
fn listing(image: &[u8]) -> Result<&str, BackendError> {
    std::str::from_utf8(image)
        .map_err(|_| "not a text SASS listing (expected `cuobjdump -sass` or `nvdisasm` output)".into())
}

impl Backend for Nvidia {
    fn name(&self) -> &'static str {
        "nvidia"
    }

    fn describe(&self, image: &[u8], kernels: &KernelFilter) -> Result<Vec<KernelView>, BackendError> {
        let functions = parse_listing(listing(image)?)?;
        Ok(functions.iter().filter(|f| kernels.admits(&[&f.name])).map(|f| build_kernel(f).view).collect())
    }

    /// A listing is always shown with the plans of a mode lowered (fast
    /// when the request names no configuration).
    fn dump(&self, image: &[u8], request: &DumpRequest<'_>) -> Result<Dumped, BackendError> {
        let opts = DumpOptions {
            kernel: request.kernel.cloned(),
            format: request.format,
            mode: request.lower.map_or(Mode::Fast, |c| c.mode),
            tool: request.lower.map_or(xfpx_common::tool::ToolKind::Detect, |c| c.tool),
            fault: request.lower.and_then(|c| c.fault.clone()),
        };
        Ok(Dumped { text: dump_listing(listing(image)?, &opts)?, image: None })
    }

    fn live(&self) -> Option<&dyn LiveBackend> {
        Some(self)
    }
}

impl LiveBackend for Nvidia {
    /// Screen mode reads the sticky exception bits of AMD waves: a usage
    /// error here.
    fn settle(&self, config: &RunConfig) -> Result<Settled, Refusal> {
        if config.mode == Mode::Screen {
            let e = "--mode screen reads the sticky exception bits of AMD waves: it is for --vendor amd";
            return Err(Refusal::Usage(e.to_string()));
        }
        Ok(Settled { mode: config.mode, notes: Vec::new() })
    }

    fn library(&self) -> Result<PathBuf, BackendError> {
        Ok(crate::tool_library()?)
    }

    /// NVBit disassembles each function it instruments with `nvdisasm`
    /// (from `NVDISASM`, else `PATH`): without it no kernel is checked, so
    /// the run stops before the program starts.
    fn check_machine(&self) -> Result<(), BackendError> {
        check_disassembler(std::env::var_os("NVDISASM"), std::env::var_os("PATH"))
    }

    /// `LD_PRELOAD` (appended to the existing value) or `CUDA_INJECTION64_PATH`.
    fn environment(&self, launching: &Launching<'_>) -> Result<LaunchEnv, BackendError> {
        let library = launching.library;
        let vars = match launching.inject {
            Inject::Preload => {
                let mut preload = (launching.existing)("LD_PRELOAD").filter(|v| !v.is_empty()).unwrap_or_default();
                if !preload.is_empty() {
                    preload.push(":");
                }
                preload.push(library.as_os_str());
                vec![("LD_PRELOAD".into(), preload)]
            }
            Inject::DriverHook => vec![("CUDA_INJECTION64_PATH".into(), library.as_os_str().to_owned())],
        };
        Ok(LaunchEnv { vars, warnings: Vec::new() })
    }
}

/// The disassembler check of [`LiveBackend::check_machine`], apart from
/// the process environment.
pub fn check_disassembler(nvdisasm: Option<OsString>, path: Option<OsString>) -> Result<(), BackendError> {
    let named = nvdisasm.filter(|v| !v.is_empty()).map(PathBuf::from);
    let found = match &named {
        Some(p) => p.is_file(),
        None => path.is_some_and(|p| find_on_path("nvdisasm", p).is_some()),
    };
    if found {
        return Ok(());
    }
    Err(match named {
        Some(p) => format!("NVDISASM names {}, which is not a file: NVBit needs CUDA's nvdisasm", p.display()).into(),
        None => "nvdisasm not found on PATH: NVBit needs it; put CUDA's bin directory on PATH (or set NVDISASM)".into(),
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn nvidia_runs_refuse_screen_mode_as_a_usage_error() {
        use xfpx_common::config::RunSettings;
        let config = |mode| RunSettings { mode, ..RunSettings::default() }.check().expect("valid");
        assert!(matches!(Nvidia.settle(&config(Mode::Screen)), Err(Refusal::Usage(_))));
        let fast = Nvidia.settle(&config(Mode::Fast)).expect("runs");
        assert_eq!((fast.mode, fast.notes.len()), (Mode::Fast, 0));
    }

    use super::*;
    use std::path::Path;

    #[test]
    fn a_missing_disassembler_stops_the_run() {
        let d = std::env::temp_dir().join(format!("xfpx-nvidia-backend-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch");
        let e = check_disassembler(None, Some(d.as_os_str().into())).expect_err("no nvdisasm");
        assert!(e.to_string().starts_with("nvdisasm not found on PATH"), "{e}");
        let fake = d.join("nvdisasm");
        std::fs::write(&fake, "").expect("write");
        check_disassembler(None, Some(d.as_os_str().into())).expect("found on PATH");
        check_disassembler(Some(fake.clone().into()), None).expect("named");
        let e = check_disassembler(Some(d.join("none").into()), Some(d.as_os_str().into())).expect_err("named, absent");
        assert!(e.to_string().starts_with("NVDISASM names "), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_library_is_preloaded_or_handed_to_the_driver() {
        let lib = Path::new("/opt/x/libxfpx_nvbit.so");
        let env = |inject, existing: Option<&str>| {
            let existing = move |name: &str| existing.filter(|_| name == "LD_PRELOAD").map(OsString::from);
            let launching = Launching {
                library: lib,
                inject,
                existing: &existing,
                scratch: Path::new("/nonexistent"),
                target: None,
            };
            Nvidia
                .environment(&launching)
                .expect("no failure")
                .vars
                .into_iter()
                .map(|(k, v)| (k.into_string().expect("utf-8"), v.into_string().expect("utf-8")))
                .collect::<Vec<_>>()
        };
        assert_eq!(env(Inject::Preload, None), [("LD_PRELOAD".into(), "/opt/x/libxfpx_nvbit.so".into())]);
        assert_eq!(env(Inject::Preload, Some("")), [("LD_PRELOAD".into(), "/opt/x/libxfpx_nvbit.so".into())]);
        assert_eq!(
            env(Inject::Preload, Some("libfoo.so")),
            [("LD_PRELOAD".into(), "libfoo.so:/opt/x/libxfpx_nvbit.so".into())]
        );
        assert_eq!(
            env(Inject::DriverHook, Some("libfoo.so")),
            [("CUDA_INJECTION64_PATH".into(), "/opt/x/libxfpx_nvbit.so".into())]
        );
    }

    #[test]
    fn listings_are_described_and_dumped() {
        let text = b"\tFunction : k\n        /*0000*/  FADD R1, R2, R3 ;\n        /*0010*/  EXIT ;\n\tFunction : j\n        /*0000*/  EXIT ;\n";
        let views = Nvidia.describe(text, &KernelFilter::default()).expect("described");
        assert_eq!(views.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["k", "j"]);
        assert_eq!(Nvidia.describe(text, &KernelFilter::exactly("j")).expect("described").len(), 1);
        let d = Nvidia
            .dump(text, &DumpRequest { kernel: Some(&KernelFilter::exactly("k")), ..DumpRequest::default() })
            .expect("dumped");
        assert!(d.text.contains("kernel k: 2 instructions") && d.image.is_none(), "{}", d.text);
        let e = Nvidia.dump(&[0xff, 0xfe], &DumpRequest::default()).expect_err("binary");
        assert!(e.to_string().contains("not a text SASS listing"), "{e}");
        let screen =
            xfpx_common::config::RunSettings { mode: Mode::Screen, ..Default::default() }.check().expect("valid");
        let e = Nvidia.dump(text, &DumpRequest { lower: Some(&screen), ..DumpRequest::default() }).expect_err("screen");
        assert_eq!(e.to_string(), "mode screen is not available for NVIDIA (fast, detect)");
    }
}
