//! The capture format: what `xfpx run --capture DIR` writes (one folder
//! per captured launch, a manifest for the whole capture) and what `xfpx
//! replay DIR` reads. Documented in `docs/capture.md`.
//!
//! ```text
//! DIR/capture.json                the manifest (schema `xfpx-capture/1`)
//! DIR/0001-saxpy/launch.json      launch file, format 2 (the emulator's launch format, extended)
//! DIR/0001-saxpy/params.bin       the raw parameter bytes of the launch
//! DIR/0001-saxpy/arg0.before.bin  an allocation a parameter points into, before the launch
//! DIR/0001-saxpy/arg0.after.bin   ... and after it
//! DIR/0001-saxpy/outputs.json     the after-images as `xfpx compare --out-a` reads them
//! ```
//!
//! Each instrumented process writes its launch folders and its own part
//! (`process-PID.json`: its launches and what it did not capture); the
//! command line assembles the parts into `capture.json` when the program
//! has ended ([`assemble`]). The launch file is read by the emulator's
//! launch parser (`xfpx-amd-emu`, `launch.rs`); this module writes it
//! ([`LaunchFile`]).

pub mod memory;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Schema name and version of the manifest.
pub const SCHEMA: &str = "xfpx-capture/1";
/// The manifest's file name in the capture folder.
pub const MANIFEST: &str = "capture.json";
/// The launch file's name in each launch folder.
pub const LAUNCH_FILE: &str = "launch.json";
/// The raw parameter bytes' file name in each launch folder.
pub const PARAMS_FILE: &str = "params.bin";
/// The launch-file format this xfpx writes, and the newest it reads
/// (format 1: the emulator's launch files before captures existed, with
/// no `"format"` key; 2 added captures; 3 by-value aggregate arguments, the
/// stack of a kernel with a dynamic stack and the guard zone around
/// buffers).
pub const LAUNCH_FORMAT: u32 = 3;
/// Per-process parts are named `process-PID.json`.
const PART_PREFIX: &str = "process-";

/// Default of `--capture-max-launches`.
pub const DEFAULT_MAX_LAUNCHES: u64 = 64;
/// Default of `--capture-max-bytes` (memory images, before and after).
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Where the capturing device and program were.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `nvidia`, or `synthetic` for a capture made offline (see `note`).
    pub vendor: String,
    pub device: String,
    pub target: Option<String>,
    /// What a reader should know about how the capture was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One captured launch, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedLaunch {
    /// Its folder, relative to the capture folder.
    pub dir: String,
    /// The kernel's mangled name (the plain name of an `extern "C"` kernel).
    pub kernel: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// Index (from 0) of this launch among the kernel's launches in its process.
    pub launch: u64,
    /// The process that launched it.
    pub pid: u32,
    /// Bytes of memory images written (before and after).
    pub bytes: u64,
    /// False when the after-images could not be taken (the launch failed);
    /// `problem` says why.
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// What one process captured: written by it, assembled by the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessPart {
    pub pid: u32,
    pub source: Source,
    pub launches: Vec<CapturedLaunch>,
    /// One line per thing not captured (launches over a limit, pointers
    /// into memory that is not a device allocation).
    pub not_captured: Vec<String>,
}

/// The tool that wrote a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writer {
    pub name: String,
    pub version: String,
}

/// `capture.json`: the whole capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: String,
    pub tool: Writer,
    /// The program and its arguments.
    pub command: Vec<String>,
    pub source: Source,
    /// Every captured launch, in folder order.
    pub launches: Vec<CapturedLaunch>,
    pub not_captured: Vec<String>,
}

/// Why a capture folder cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0} is not a capture folder (it has no {MANIFEST})")]
    NotACapture(PathBuf),
    #[error("cannot read {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{path} is not a capture manifest: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("{path} is a capture of schema {found}, which this xfpx does not read (it reads {SCHEMA}): it was written by another version of xfpx")]
    Version { path: PathBuf, found: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: PathBuf, reason: String },
}

impl Manifest {
    /// Reads `DIR/capture.json`, refusing another schema version.
    pub fn read(dir: &Path) -> Result<Manifest, CaptureError> {
        let path = dir.join(MANIFEST);
        if !path.is_file() {
            return Err(CaptureError::NotACapture(dir.to_path_buf()));
        }
        let text = crate::limits::read_text(&path, crate::limits::LAUNCH)
            .map_err(|e| CaptureError::Read { path: path.clone(), reason: e.to_string() })?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CaptureError::Malformed { path: path.clone(), reason: e.to_string() })?;
        match value.get("schema").and_then(serde_json::Value::as_str) {
            Some(SCHEMA) => {}
            Some(other) => return Err(CaptureError::Version { path, found: other.to_string() }),
            None => return Err(CaptureError::Malformed { path, reason: "no \"schema\"".into() }),
        }
        serde_json::from_value(value).map_err(|e| CaptureError::Malformed { path, reason: e.to_string() })
    }
}

/// The file of process `pid`'s part in `dir`.
pub fn part_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{PART_PREFIX}{pid}.json"))
}

/// Writes `bytes` to `path` through a temporary file renamed over it, so
/// that a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CaptureError> {
    let err = |e: std::io::Error| CaptureError::Write { path: path.to_path_buf(), reason: e.to_string() };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

impl ProcessPart {
    /// Writes this part into the capture folder `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), CaptureError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        write_atomically(&part_path(dir, self.pid), text.as_bytes())
    }
}

/// Assembles the processes' parts in `dir` into `capture.json` (and
/// removes the parts): called once the program has ended. `command` is the
/// program as the user gave it. Returns the manifest, or `None` when no
/// process wrote a part (the capture never started in the program).
pub fn assemble(dir: &Path, command: Vec<String>) -> Result<Option<Manifest>, CaptureError> {
    let read_dir =
        std::fs::read_dir(dir).map_err(|e| CaptureError::Read { path: dir.into(), reason: e.to_string() })?;
    let mut parts: BTreeMap<u32, (PathBuf, ProcessPart)> = BTreeMap::new();
    for entry in read_dir.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(PART_PREFIX).and_then(|n| n.strip_suffix(".json")) else { continue };
        if pid.parse::<u32>().is_err() {
            continue;
        }
        let text = crate::limits::read_text(&path, crate::limits::LAUNCH)
            .map_err(|e| CaptureError::Read { path: path.clone(), reason: e.to_string() })?;
        let part: ProcessPart = serde_json::from_str(&text)
            .map_err(|e| CaptureError::Malformed { path: path.clone(), reason: e.to_string() })?;
        parts.insert(part.pid, (path, part));
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let several = parts.len() > 1;
    let mut manifest = Manifest {
        schema: SCHEMA.to_string(),
        tool: Writer { name: "xfpx".into(), version: env!("CARGO_PKG_VERSION").into() },
        command,
        source: parts.values().next().map(|(_, p)| p.source.clone()).unwrap_or_default(),
        launches: Vec::new(),
        not_captured: Vec::new(),
    };
    for (_, part) in parts.values() {
        manifest.launches.extend(part.launches.iter().cloned());
        for n in &part.not_captured {
            manifest.not_captured.push(if several { format!("process {}: {n}", part.pid) } else { n.clone() });
        }
    }
    manifest.launches.sort_by(|a, b| a.dir.cmp(&b.dir));
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    write_atomically(&dir.join(MANIFEST), text.as_bytes())?;
    for (path, _) in parts.values() {
        let _ = std::fs::remove_file(path);
    }
    Ok(Some(manifest))
}

/// The folder name of the `serial`-th captured launch (from 1) of a
/// process: the number and a short, file-safe form of the kernel's name.
pub fn launch_dir_name(serial: u64, kernel: &str) -> String {
    let readable = crate::names::demangle(kernel).unwrap_or_else(|| kernel.to_string());
    // the function's own name: before its parameter list and template
    // arguments, after its namespaces and return type
    let head = readable.split('(').next().unwrap_or(&readable);
    let head = head.split('<').next().unwrap_or(head);
    let head = head.rsplit([' ', ':']).next().unwrap_or(head);
    let short: String = head.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(40).collect::<String>();
    let short = if short.is_empty() { "kernel".to_string() } else { short };
    format!("{serial:04}-{short}")
}

/// The file naming a launch's output buffers (`xfpx replay --out DIR`
/// writes it beside them; each captured launch has one for its
/// after-images), which `xfpx compare --out-a/--out-b` reads.
pub const OUTPUTS: &str = "outputs.json";

/// `outputs.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputManifest {
    /// The launched kernel (its mangled name).
    pub kernel: String,
    pub outputs: Vec<OutputFile>,
}

/// One output buffer in `outputs.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    pub name: String,
    /// `f16`, `f32`, `f64`, `u8`, `i32`, `u32`, `i64`, `u64`, when known.
    pub elem: Option<String>,
    /// The file, relative to the folder.
    pub file: String,
}

impl OutputManifest {
    /// Writes `DIR/outputs.json`.
    pub fn write(&self, dir: &Path) -> Result<(), CaptureError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        write_atomically(&dir.join(OUTPUTS), text.as_bytes())
    }
}

/// One parameter's place in the parameter buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamSlot {
    pub offset: u64,
    pub size: u64,
}

/// The parameter bytes of a launch (format 2's `params`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The raw bytes' file, relative to the launch folder.
    pub file: String,
    /// Their size in bytes.
    pub size: u64,
    /// Each parameter's offset and size, in order, as the capturing
    /// driver gave them.
    pub layout: Vec<ParamSlot>,
}

/// One buffer of a captured launch: an allocation a parameter points into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    /// Element type (`f32`, ..., `u8` when unknown), from the pointer
    /// parameter's type in the kernel's signature.
    pub elem: String,
    pub count: u64,
    /// The allocation's address on the capturing device (`0x...`).
    pub address: String,
    /// Its contents before the launch: `{"file": "arg0.before.bin"}`.
    pub init: BTreeMap<String, String>,
    /// Its contents after the launch, on the capturing device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// A format-2 launch file as a capture writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchFile {
    pub format: u32,
    pub captured: Captured,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_lds: u32,
    pub params: Params,
    pub buffers: BTreeMap<String, Buffer>,
    /// Every buffer (the after-images are what the launch left).
    pub outputs: Vec<String>,
}

/// Where and when a launch was captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    #[serde(flatten)]
    pub source: Source,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// Index (from 0) of this launch among the kernel's launches.
    pub launch: u64,
}

/// Bytes per element of the format's element types (`u8 i32 u32 i64 u64
/// f16 f32 f64`); `None` for another name.
pub fn elem_size(elem: &str) -> Option<u64> {
    Some(match elem {
        "u8" => 1,
        "f16" => 2,
        "i32" | "u32" | "f32" => 4,
        "i64" | "u64" | "f64" => 8,
        _ => return None,
    })
}

/// The address text of the format (`0x` and hex digits).
pub fn address_text(a: u64) -> String {
    format!("{a:#x}")
}

/// Reads an address the way [`address_text`] writes it (a plain decimal
/// number is accepted too).
pub fn parse_address(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn launch_folders_are_named_by_number_and_function() {
        assert_eq!(launch_dir_name(1, "_Z5saxpyPfS_fi"), "0001-saxpy");
        assert_eq!(launch_dir_name(12, "_ZN3app10normalizedEPfPKfi"), "0012-normalized");
        assert_eq!(launch_dir_name(3, "_Z9block_sumILi256EEvPKfPf"), "0003-block_sum");
        assert_eq!(launch_dir_name(2, "xv_div"), "0002-xv_div");
        assert_eq!(launch_dir_name(2, "../../x"), "0002-x");
        assert_eq!(launch_dir_name(2, "()"), "0002-kernel");
    }

    #[test]
    fn addresses_round_trip() {
        assert_eq!(address_text(0x7f00_0000_1000), "0x7f0000001000");
        assert_eq!(parse_address("0x7f0000001000"), Some(0x7f00_0000_1000));
        assert_eq!(parse_address("4096"), Some(4096));
        assert_eq!(parse_address("0xZZ"), None);
    }

    #[test]
    fn parts_assemble_into_one_manifest() {
        let dir = std::env::temp_dir().join(format!("xfpx-capture-assemble-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(assemble(&dir, vec!["./app".into()]).unwrap().is_none(), "no parts: no manifest");
        let launch = |dir: &str, pid| CapturedLaunch {
            dir: dir.into(),
            kernel: "k".into(),
            demangled: None,
            launch: 0,
            pid,
            bytes: 8,
            complete: true,
            problem: None,
        };
        let source =
            Source { vendor: "nvidia".into(), device: "H100".into(), target: Some("sm_90".into()), note: None };
        for (pid, d) in [(20u32, "0001-k-p20"), (10, "0001-k")] {
            let part = ProcessPart {
                pid,
                source: source.clone(),
                launches: vec![launch(d, pid)],
                not_captured: vec!["1 launch of k over --capture-max-launches".into()],
            };
            part.write(&dir).unwrap();
        }
        let m = assemble(&dir, vec!["./app".into()]).unwrap().unwrap();
        assert_eq!(m.schema, SCHEMA);
        assert_eq!(m.launches.iter().map(|l| l.dir.as_str()).collect::<Vec<_>>(), ["0001-k", "0001-k-p20"]);
        assert_eq!(m.not_captured[0], "process 10: 1 launch of k over --capture-max-launches");
        assert!(!part_path(&dir, 10).exists(), "parts are removed once assembled");
        assert_eq!(Manifest::read(&dir).unwrap(), m);
        // another schema version is one line naming it
        let other = std::fs::read_to_string(dir.join(MANIFEST)).unwrap().replace(SCHEMA, "xfpx-capture/9");
        std::fs::write(dir.join(MANIFEST), other).unwrap();
        let e = Manifest::read(&dir).unwrap_err().to_string();
        assert!(e.contains("xfpx-capture/9") && e.contains("another version") && !e.contains('\n'), "{e}");
        let e = Manifest::read(&dir.join("nope")).unwrap_err().to_string();
        assert!(e.contains("not a capture folder"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
