//! How the NVBit tool library `libxfpx_nvbit.so` is made: its C++/CUDA
//! sources (the shim with the screen's scan kernel, and the injected device functions, carried inside
//! the binary so that no source tree is needed), the GPU targets it is
//! compiled for, and the three nvcc steps that turn the sources, NVBit's
//! core and the Rust core (the static library of crate `xfpx-nvbit`) into
//! the library; where CUPTI was found, two more steps make the hardware
//! counters' library `libxfpx_cupti.so` from `xfpx_cupti.cpp`, the same
//! Rust core and CUPTI (no NVBit). Finding the tools and running the steps
//! is the caller's job (`xfpx setup nvidia`).

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use xfpx_asm_snippets::{
    NVIDIA_ABI_DEF, NVIDIA_DEVICE_SOURCE, NVIDIA_FLOW_SOURCE, NVIDIA_INJECT_SOURCE, NVIDIA_LAYOUT_HEADER,
    NVIDIA_SCREEN_SOURCE,
};

/// Folder of the shim's sources under the directory [`write_sources`] fills.
const SHIM_DIR: &str = "shim";
/// Folder of the device functions' sources.
const SNIPPET_DIR: &str = "snippets";

/// The tool's sources: (path under the sources directory, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("shim/xfpx_nvbit.cu", include_str!("../tool/shim/xfpx_nvbit.cu")),
    ("shim/xfpx_nvbit.h", include_str!("../tool/shim/xfpx_nvbit.h")),
    ("shim/xfpx_cupti.cpp", include_str!("../tool/shim/xfpx_cupti.cpp")),
    ("shim/xfpx_disasm_cache.c", include_str!("../tool/shim/xfpx_disasm_cache.c")),
    ("snippets/xfpx_device.cu", NVIDIA_DEVICE_SOURCE),
    ("snippets/xfpx_inject.cuh", NVIDIA_INJECT_SOURCE),
    ("snippets/xfpx_flow.cuh", NVIDIA_FLOW_SOURCE),
    ("snippets/xfpx_layout.h", NVIDIA_LAYOUT_HEADER),
    ("snippets/xfpx_screen.cuh", NVIDIA_SCREEN_SOURCE),
    ("snippets/abi.def", NVIDIA_ABI_DEF),
];

/// Write [`SOURCES`] under `dir`.
pub fn write_sources(dir: &Path) -> std::io::Result<()> {
    for (name, text) in SOURCES {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The header `xfpx_cupti.cpp` includes for where CUPTI's libraries are
/// (`xfpx_cupti_paths.h`, written beside the sources by the build): the
/// folder as a C string, empty when it is not one that can be written as
/// plain ASCII without quotes or backslashes.
pub const CUPTI_PATHS_HEADER: &str = "shim/xfpx_cupti_paths.h";

/// The text of [`CUPTI_PATHS_HEADER`] for CUPTI's library folder `lib_dir`.
pub fn cupti_paths_header(lib_dir: &Path) -> String {
    let dir = lib_dir.to_str().filter(|d| d.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'));
    format!(
        "/* written by xfpx setup nvidia: CUPTI's library folder */\n#define XFPX_CUPTI_LIB_DIR \"{}\"\n",
        dir.unwrap_or("")
    )
}

/// CUPTI as the build of the hardware counters' library needs it.
#[derive(Debug, Clone, Copy)]
pub struct Cupti<'a> {
    /// Its headers (`cupti_range_profiler.h`, CUDA 12.6 or newer).
    pub include_dir: &'a Path,
    /// Its libraries (`libcupti.so`, `libnvperf_host.so`): linked against
    /// and named as the library's run path.
    pub lib_dir: &'a Path,
}

/// A GPU target of the tool, `sm_<number><suffix>` (e.g. `sm_90`, `sm_90a`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SmArch {
    number: u32,
    suffix: &'static str,
}

impl SmArch {
    /// `sm_90`, `sm_90a`, `sm_100f`, `90`, or a compute capability `9.0`.
    pub fn parse(text: &str) -> Result<SmArch, String> {
        let t = text.trim();
        let bad = || format!("`{t}` is not a GPU target (expected e.g. sm_90, 90 or 9.0)");
        if let Some((major, minor)) = t.split_once('.') {
            let (major, minor) = (small_number(major).ok_or_else(bad)?, small_number(minor).ok_or_else(bad)?);
            if minor >= 10 {
                return Err(bad());
            }
            return SmArch::checked(major * 10 + minor, "").ok_or_else(bad);
        }
        let t2 = t.strip_prefix("sm_").unwrap_or(t);
        let (digits, suffix) = match t2.strip_suffix('a') {
            Some(d) => (d, "a"),
            None => match t2.strip_suffix('f') {
                Some(d) => (d, "f"),
                None => (t2, ""),
            },
        };
        SmArch::checked(small_number(digits).ok_or_else(bad)?, suffix).ok_or_else(bad)
    }

    fn checked(number: u32, suffix: &'static str) -> Option<SmArch> {
        (10..1000).contains(&number).then_some(SmArch { number, suffix })
    }

    /// The virtual architecture of the same target, `compute_90`.
    fn virtual_name(&self) -> String {
        format!("compute_{}{}", self.number, self.suffix)
    }
}

impl fmt::Display for SmArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.number, self.suffix)
    }
}

fn small_number(s: &str) -> Option<u32> {
    (!s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// A comma-separated list of targets (`sm_90,sm_80`), without repeats, in
/// the order given.
pub fn parse_arch_list(text: &str) -> Result<Vec<SmArch>, String> {
    let mut list: Vec<SmArch> = Vec::new();
    for item in text.split(',') {
        if item.trim().is_empty() {
            return Err(format!("`{text}` has an empty item (expected e.g. sm_90,sm_80)"));
        }
        let arch = SmArch::parse(item)?;
        if !list.contains(&arch) {
            list.push(arch);
        }
    }
    Ok(list)
}

/// nvcc's target options: `-arch=sm_90` for one target (SASS and PTX of
/// that target), one `-gencode` with the same pair per target for several.
fn target_flags(arches: &[SmArch]) -> Vec<OsString> {
    match arches {
        [one] => vec![format!("-arch={one}").into()],
        many => many
            .iter()
            .map(|a| format!("-gencode=arch={},code=[{a},{}]", a.virtual_name(), a.virtual_name()).into())
            .collect(),
    }
}

/// One nvcc run: what it makes, and its arguments (nvcc itself not included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub what: &'static str,
    pub args: Vec<OsString>,
    pub part: Part,
}

/// What a step makes: only a step of the tool library stops the setup
/// when it fails; another leaves its part out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    ToolLibrary,
    /// The disassembly cache's helper ([`crate::disasm_cache::HELPER_FILE_NAME`]).
    DisasmHelper,
    /// The hardware counters' library.
    HardwareCounters,
}

/// Everything the build of the tool library needs.
#[derive(Debug, Clone)]
pub struct ToolBuild<'a> {
    /// Where [`write_sources`] wrote [`SOURCES`].
    pub sources: &'a Path,
    /// NVBit's `core` directory (`nvbit.h`, `nvbit_tool.h`, `libnvbit.a`).
    pub nvbit_core: &'a Path,
    /// The Rust core: `libxfpx_nvbit.a` of crate `xfpx-nvbit`.
    pub core_lib: &'a Path,
    pub arches: &'a [SmArch],
    /// CUDA's library folder (with `libcudart_static.a`), when found.
    pub cuda_lib_dir: Option<&'a Path>,
    /// The driver library to link against (CUDA's stub or the driver's own).
    pub libcuda: &'a Path,
    /// Where the objects and the library go.
    pub out_dir: &'a Path,
    /// CUPTI, when found: the hardware counters' library is built too.
    pub cupti: Option<Cupti<'a>>,
}

impl ToolBuild<'_> {
    /// The library the last step writes.
    pub fn library(&self) -> PathBuf {
        self.out_dir.join(crate::TOOL_FILE_NAME)
    }

    /// The disassembly cache's helper, beside the library.
    pub fn disasm_helper(&self) -> PathBuf {
        self.out_dir.join(crate::disasm_cache::HELPER_FILE_NAME)
    }

    /// The hardware counters' library the CUPTI steps write, when CUPTI was found.
    pub fn cupti_library(&self) -> Option<PathBuf> {
        self.cupti.map(|_| self.out_dir.join(crate::CUPTI_TOOL_FILE_NAME))
    }

    /// The nvcc steps, in order: the shim (relocatable device code), the
    /// device functions (kept for NVBit to patch in), the link.
    pub fn steps(&self) -> Vec<Step> {
        let shim = self.sources.join(SHIM_DIR);
        let snippets = self.sources.join(SNIPPET_DIR);
        let shim_obj = self.out_dir.join("xfpx_nvbit.o");
        let device_obj = self.out_dir.join("xfpx_device.o");
        let include = |dir: &Path| -> OsString {
            let mut s = OsString::from("-I");
            s.push(dir);
            s
        };
        let targets = target_flags(self.arches);
        let mut shim_args: Vec<OsString> = vec!["-dc".into(), "-c".into(), "-std=c++17".into()];
        shim_args.extend([include(self.nvbit_core), include(&snippets), include(&shim)]);
        shim_args.extend(["-Xptxas".into(), "-cloning=no".into()]);
        shim_args.extend(targets.iter().cloned());
        shim_args.extend(["-O3".into(), "-Xcompiler".into(), "-fPIC".into()]);
        shim_args.extend([shim.join("xfpx_nvbit.cu").into(), "-o".into(), shim_obj.clone().into()]);

        let mut device_args: Vec<OsString> = vec![include(self.nvbit_core), include(&snippets)];
        device_args.extend(["-Xptxas".into(), "-astoolspatch".into(), "--keep-device-functions".into()]);
        device_args.extend(targets.iter().cloned());
        device_args.extend(["-Xcompiler".into(), "-fPIC".into(), "-c".into()]);
        device_args.extend([snippets.join("xfpx_device.cu").into(), "-o".into(), device_obj.clone().into()]);

        let mut link_args: Vec<OsString> = targets;
        link_args.push("-O3".into());
        link_args.extend([shim_obj.into(), device_obj.into(), self.core_lib.into()]);
        let mut nvbit_dir = OsString::from("-L");
        nvbit_dir.push(self.nvbit_core);
        link_args.extend([nvbit_dir, "-lnvbit".into()]);
        if let Some(dir) = self.cuda_lib_dir {
            let mut l = OsString::from("-L");
            l.push(dir);
            link_args.push(l);
        }
        link_args.push(self.libcuda.into());
        link_args.extend(["-lcudart_static", "-lpthread", "-ldl", "-lm", "-shared"].map(OsString::from));
        link_args.extend(["-o".into(), self.library().into()]);
        // a plain C program: without it, cached disassembly goes through the
        // wrapper script alone
        let mut helper_args: Vec<OsString> = vec!["-O2".into(), "--cudart".into(), "none".into()];
        helper_args.extend([shim.join("xfpx_disasm_cache.c").into(), "-o".into(), self.disasm_helper().into()]);
        let mut steps = vec![
            Step { what: "the shim (xfpx_nvbit.cu)", args: shim_args, part: Part::ToolLibrary },
            Step { what: "the device functions (xfpx_device.cu)", args: device_args, part: Part::ToolLibrary },
            Step { what: "the link of libxfpx_nvbit.so", args: link_args, part: Part::ToolLibrary },
            Step {
                what: "the disassembly cache's helper (xfpx_disasm_cache.c)",
                args: helper_args,
                part: Part::DisasmHelper,
            },
        ];
        if let (Some(c), Some(lib)) = (self.cupti, self.cupti_library()) {
            let obj = self.out_dir.join("xfpx_cupti.o");
            let mut compile: Vec<OsString> = vec!["-c".into(), "-std=c++17".into(), "-O3".into()];
            compile.extend([include(c.include_dir), include(&shim)]);
            compile.extend(["-Xcompiler".into(), "-fPIC".into()]);
            compile.extend([shim.join("xfpx_cupti.cpp").into(), "-o".into(), obj.clone().into()]);
            let mut link: Vec<OsString> = vec!["-shared".into(), "-O3".into(), "--cudart".into(), "none".into()];
            link.extend([obj.into(), self.core_lib.into()]);
            let mut l = OsString::from("-L");
            l.push(c.lib_dir);
            let mut rpath = OsString::from("-rpath=");
            rpath.push(c.lib_dir);
            link.extend([l, "-lcupti".into(), "-Xlinker".into(), rpath, self.libcuda.into()]);
            link.extend(["-lpthread", "-ldl", "-lm"].map(OsString::from));
            link.extend(["-o".into(), lib.into()]);
            steps.push(Step {
                what: "the hardware counters' library (xfpx_cupti.cpp)",
                args: compile,
                part: Part::HardwareCounters,
            });
            steps.push(Step { what: "the link of libxfpx_cupti.so", args: link, part: Part::HardwareCounters });
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_forms() {
        let p = |s: &str| SmArch::parse(s).map(|a| a.to_string());
        assert_eq!(p("sm_90"), Ok("sm_90".into()));
        assert_eq!(p(" 90 "), Ok("sm_90".into()));
        assert_eq!(p("9.0"), Ok("sm_90".into()));
        assert_eq!(p("12.0"), Ok("sm_120".into()));
        assert_eq!(p("8.6"), Ok("sm_86".into()));
        assert_eq!(p("sm_90a"), Ok("sm_90a".into()));
        assert_eq!(p("sm_100f"), Ok("sm_100f".into()));
        for bad in
            ["", "sm_", "sm90x", "compute_90", "9", "9.10", "9.", ".0", "sm_9", "sm_1000", "-90", "sm_+90", "sm_90b"]
        {
            let e = SmArch::parse(bad).expect_err(bad);
            assert!(e.contains("not a GPU target") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn arch_lists() {
        let l = parse_arch_list("sm_90,8.0,sm_90").expect("valid");
        assert_eq!(l.iter().map(ToString::to_string).collect::<Vec<_>>(), ["sm_90", "sm_80"]);
        assert!(parse_arch_list("sm_90,,sm_80").expect_err("empty").contains("empty item"));
        assert!(parse_arch_list("").is_err());
        assert!(parse_arch_list("sm_90,bogus").expect_err("bad").contains("`bogus`"));
    }

    #[test]
    fn one_target_is_arch_several_are_gencodes() {
        let one = [SmArch::parse("sm_90").expect("valid")];
        assert_eq!(target_flags(&one), vec![OsString::from("-arch=sm_90")]);
        let two = parse_arch_list("sm_90a,sm_80").expect("valid");
        assert_eq!(
            target_flags(&two),
            vec![
                OsString::from("-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"),
                OsString::from("-gencode=arch=compute_80,code=[sm_80,compute_80]")
            ]
        );
    }

    /// The steps are those `build-tool.sh` ran before `xfpx setup` (checked
    /// on the H100), for one target.
    #[test]
    fn steps_for_one_target() {
        let arches = [SmArch::parse("sm_90").expect("valid")];
        let b = ToolBuild {
            sources: Path::new("/s"),
            nvbit_core: Path::new("/nv"),
            core_lib: Path::new("/r/libxfpx_nvbit.a"),
            arches: &arches,
            cuda_lib_dir: Some(Path::new("/cuda/lib64")),
            libcuda: Path::new("/cuda/lib64/stubs/libcuda.so"),
            out_dir: Path::new("/o"),
            cupti: None,
        };
        let lines: Vec<String> = b
            .steps()
            .iter()
            .map(|s| s.args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            lines,
            [
                "-dc -c -std=c++17 -I/nv -I/s/snippets -I/s/shim -Xptxas -cloning=no -arch=sm_90 -O3 -Xcompiler -fPIC /s/shim/xfpx_nvbit.cu -o /o/xfpx_nvbit.o",
                "-I/nv -I/s/snippets -Xptxas -astoolspatch --keep-device-functions -arch=sm_90 -Xcompiler -fPIC -c /s/snippets/xfpx_device.cu -o /o/xfpx_device.o",
                "-arch=sm_90 -O3 /o/xfpx_nvbit.o /o/xfpx_device.o /r/libxfpx_nvbit.a -L/nv -lnvbit -L/cuda/lib64 /cuda/lib64/stubs/libcuda.so -lcudart_static -lpthread -ldl -lm -shared -o /o/libxfpx_nvbit.so",
                "-O2 --cudart none /s/shim/xfpx_disasm_cache.c -o /o/xfpx-nvdisasm-cache",
            ]
        );
        assert_eq!(b.library(), Path::new("/o/libxfpx_nvbit.so"));
        assert_eq!(b.cupti_library(), None);
        // with CUPTI: the hardware counters' library from the same Rust core, without NVBit
        let cupti = Cupti { include_dir: Path::new("/cuda/extras/CUPTI/include"), lib_dir: Path::new("/cupti/lib64") };
        let with = ToolBuild { cupti: Some(cupti), ..b.clone() };
        let steps = with.steps();
        use Part::*;
        let parts: Vec<Part> = steps.iter().map(|s| s.part).collect();
        assert_eq!(parts, [ToolLibrary, ToolLibrary, ToolLibrary, DisasmHelper, HardwareCounters, HardwareCounters]);
        let line = |s: &Step| s.args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        assert_eq!(
            line(&steps[4]),
            "-c -std=c++17 -O3 -I/cuda/extras/CUPTI/include -I/s/shim -Xcompiler -fPIC /s/shim/xfpx_cupti.cpp -o /o/xfpx_cupti.o"
        );
        assert_eq!(
            line(&steps[5]),
            "-shared -O3 --cudart none /o/xfpx_cupti.o /r/libxfpx_nvbit.a -L/cupti/lib64 -lcupti -Xlinker -rpath=/cupti/lib64 /cuda/lib64/stubs/libcuda.so -lpthread -ldl -lm -o /o/libxfpx_cupti.so"
        );
        assert!(!line(&steps[5]).contains("nvbit -l") && !line(&steps[5]).contains("-lnvbit"));
        assert_eq!(with.cupti_library(), Some(PathBuf::from("/o/libxfpx_cupti.so")));
    }

    #[test]
    fn cupti_paths_header_names_the_folder_or_nothing() {
        let h = cupti_paths_header(Path::new("/usr/local/cuda-13.0/extras/CUPTI/lib64"));
        assert!(h.ends_with("#define XFPX_CUPTI_LIB_DIR \"/usr/local/cuda-13.0/extras/CUPTI/lib64\"\n"), "{h}");
        for odd in ["/a\"b", "/a\\b", "/caf\u{e9}"] {
            assert!(cupti_paths_header(Path::new(odd)).contains("XFPX_CUPTI_LIB_DIR \"\""), "{odd}");
        }
    }

    #[test]
    fn sources_are_complete() {
        let dir = std::env::temp_dir().join(format!("xfpx-toolbuild-{}", std::process::id()));
        write_sources(&dir).expect("write");
        // every quoted include of the sources is among them
        for (name, text) in SOURCES {
            let folder = Path::new(name).parent().expect("folder");
            for line in text.lines().filter(|l| l.trim_start().starts_with("#include \"")) {
                let inc = line.split('"').nth(1).expect("quoted");
                let found = dir.join(folder).join(inc).is_file()
                    || dir.join(SNIPPET_DIR).join(inc).is_file()
                    || inc.starts_with("nvbit")
                    || Path::new(CUPTI_PATHS_HEADER).ends_with(inc);
                assert!(found, "{name} includes {inc}, which is not among the sources");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
