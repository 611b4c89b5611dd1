//! Launch capture during a run (`xfpx run --capture DIR`), free of FFI:
//! the device allocations the program makes (the shim reports the
//! driver's allocation and free calls), which launches are captured
//! within the limits, and the files of each: its parameter bytes, the
//! allocations its parameters point into before and after it (the shim
//! copies them), its launch file and the process's part of the manifest
//! (format: `xfpx_common::capture`).

use crate::runtime::KernelNames;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use xfpx_common::capture::memory::{self, Allocations, Pointed};
use xfpx_common::capture::{
    address_text, launch_dir_name, Buffer, Captured, CapturedLaunch, LaunchFile, OutputFile, OutputManifest, ParamSlot,
    Params, ProcessPart, Source, LAUNCH_FILE, LAUNCH_FORMAT, PARAMS_FILE,
};
use xfpx_common::config::CaptureSettings;
use xfpx_common::limits::human_bytes;

/// A launch's shape: grid and block in threads per dimension, and its
/// dynamic shared memory in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
}

/// Which copy of an allocation: before or after the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Before = 0,
    After = 1,
}

/// Notes of launches over `--capture-max-bytes` listed one by one; later
/// ones are counted.
const BYTE_NOTES: usize = 20;

/// A launch being captured: its files are written as the copies arrive.
#[derive(Debug)]
struct Pending {
    dir: PathBuf,
    entry: CapturedLaunch,
    file: LaunchFile,
    buffers: Vec<Pointed>,
    /// Per buffer: whether its before and after images were written.
    written: Vec<[bool; 2]>,
    problems: Vec<String>,
}

/// The capture of one process.
#[derive(Debug)]
pub struct CaptureRun {
    settings: CaptureSettings,
    allocations: Allocations,
    part: ProcessPart,
    /// Launches seen per kernel (mangled name).
    seen: HashMap<String, u64>,
    captured: u64,
    /// Bytes of images promised to captured launches.
    reserved: u64,
    over_launches: BTreeMap<String, u64>,
    over_bytes: usize,
    pending: HashMap<u64, Pending>,
    next_handle: u64,
    /// Why capturing stopped (a folder could not be written).
    stopped: Option<String>,
}

impl CaptureRun {
    pub fn new(settings: CaptureSettings, pid: u32) -> CaptureRun {
        let part = ProcessPart {
            pid,
            source: Source { vendor: "nvidia".into(), device: "unknown".into(), target: None, note: None },
            ..ProcessPart::default()
        };
        CaptureRun {
            settings,
            allocations: Allocations::default(),
            part,
            seen: HashMap::new(),
            captured: 0,
            reserved: 0,
            over_launches: BTreeMap::new(),
            over_bytes: 0,
            pending: HashMap::new(),
            next_handle: 1,
            stopped: None,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.settings.dir
    }

    /// The device the launches run on.
    pub fn device(&mut self, device: &str, target: Option<&str>) {
        self.part.source.device = device.to_string();
        self.part.source.target = target.map(str::to_string);
    }

    /// The program allocated `bytes` of device memory at `base`.
    pub fn allocated(&mut self, base: u64, bytes: u64) {
        self.allocations.add(base, bytes);
    }

    /// The program freed the allocation at `base`.
    pub fn freed(&mut self, base: u64) {
        self.allocations.remove(base);
    }

    /// Whether `addr` lies in a known allocation.
    pub fn knows(&self, addr: u64) -> bool {
        self.allocations.containing(addr).is_some()
    }

    /// Whether a launch may still be captured (under the launch limit, not
    /// stopped).
    pub fn has_room(&self) -> bool {
        self.stopped.is_none() && self.captured < self.settings.max_launches
    }

    /// A launch is about to start: decide whether it is captured and, if
    /// so, write its parameters and return its handle and the allocations
    /// (base, bytes) to copy before and after it. `admitted`: the kernel
    /// filter selects the kernel.
    pub fn begin(
        &mut self,
        names: KernelNames,
        admitted: bool,
        geometry: Geometry,
        params: &[u8],
        layout: &[ParamSlot],
    ) -> Option<(u64, Vec<(u64, u64)>)> {
        let seen = self.seen.entry(names.mangled.to_string()).or_insert(0);
        let index = *seen;
        *seen += 1;
        if !admitted || self.stopped.is_some() {
            return None;
        }
        let shown = if names.demangled.is_empty() { names.mangled } else { names.demangled };
        if self.captured >= self.settings.max_launches {
            *self.over_launches.entry(shown.to_string()).or_insert(0) += 1;
            return None;
        }
        let types = memory::param_types(names.demangled);
        let (buffers, unknown) = memory::pointed(&self.allocations, params, layout, types.as_deref());
        let need: u64 = buffers.iter().map(|b| b.bytes.saturating_mul(2)).sum();
        let left = self.settings.max_bytes.saturating_sub(self.reserved);
        if need > left {
            if self.over_bytes < BYTE_NOTES {
                self.part.not_captured.push(format!(
                    "launch {index} of {shown} not captured: its memory images take {} (before and after), more than \
                     the {} --capture-max-bytes leaves",
                    human_bytes(need),
                    human_bytes(left)
                ));
            }
            self.over_bytes += 1;
            return None;
        }
        let (dir, dir_name) = match self.make_dir(names.mangled) {
            Ok(d) => d,
            Err(e) => {
                self.stopped = Some(e.clone());
                self.part.not_captured.push(format!("capturing stopped: {e}"));
                let _ = self.part.write(&self.settings.dir);
                return None;
            }
        };
        if let Err(e) = std::fs::write(dir.join(PARAMS_FILE), params) {
            self.part.not_captured.push(format!("launch {index} of {shown}: cannot write its parameters: {e}"));
            return None;
        }
        let mut problems = Vec::new();
        for u in &unknown {
            problems.push(format!(
                "parameter {} points to {}, which is in no device allocation xfpx saw (host memory, or memory \
                 allocated outside the driver's allocation calls): not captured",
                u.param,
                address_text(u.value)
            ));
        }
        let mut files = BTreeMap::new();
        for b in &buffers {
            let elem = b.elem.filter(|e| b.bytes.is_multiple_of(elem_size(e))).unwrap_or("u8");
            files.insert(
                b.name.clone(),
                Buffer {
                    elem: elem.to_string(),
                    count: b.bytes / elem_size(elem),
                    address: address_text(b.base),
                    init: BTreeMap::from([("file".to_string(), image_file(&b.name, Phase::Before))]),
                    after: Some(image_file(&b.name, Phase::After)),
                },
            );
        }
        let demangled =
            (!names.demangled.is_empty() && names.demangled != names.mangled).then(|| names.demangled.to_string());
        let file = LaunchFile {
            format: LAUNCH_FORMAT,
            captured: Captured { source: self.part.source.clone(), demangled: demangled.clone(), launch: index },
            kernel: names.mangled.to_string(),
            grid: geometry.grid,
            block: geometry.block,
            dynamic_lds: geometry.dynamic_shared,
            params: Params { file: PARAMS_FILE.into(), size: params.len() as u64, layout: layout.to_vec() },
            outputs: buffers.iter().map(|b| b.name.clone()).collect(),
            buffers: files,
        };
        let entry = CapturedLaunch {
            dir: dir_name,
            kernel: names.mangled.to_string(),
            demangled,
            launch: index,
            pid: self.part.pid,
            bytes: need,
            complete: false,
            problem: None,
        };
        self.captured += 1;
        self.reserved = self.reserved.saturating_add(need);
        let handle = self.next_handle;
        self.next_handle += 1;
        let ranges = buffers.iter().map(|b| (b.base, b.bytes)).collect();
        let written = vec![[false; 2]; buffers.len()];
        self.pending.insert(handle, Pending { dir, entry, file, buffers, written, problems });
        Some((handle, ranges))
    }

    /// A launch folder of its own: `NNNN-kernel`, or with `-pPID` when
    /// another process of the program took that name.
    fn make_dir(&self, mangled: &str) -> Result<(PathBuf, String), String> {
        let name = launch_dir_name(self.captured + 1, mangled);
        for candidate in [name.clone(), format!("{name}-p{}", self.part.pid)] {
            let dir = self.settings.dir.join(&candidate);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok((dir, candidate)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
            }
        }
        Err(format!("cannot create a folder for launch {name} in {}", self.settings.dir.display()))
    }

    /// Allocation `index` (base, bytes) of the captured launch `handle`.
    pub fn range(&self, handle: u64, index: usize) -> Option<(u64, u64)> {
        self.pending.get(&handle)?.buffers.get(index).map(|b| (b.base, b.bytes))
    }

    /// The copy of buffer `index` of launch `handle` (`None`: the copy
    /// failed).
    pub fn image(&mut self, handle: u64, index: usize, phase: Phase, bytes: Option<&[u8]>) {
        let Some(p) = self.pending.get_mut(&handle) else { return };
        let Some(b) = p.buffers.get(index) else { return };
        let when = if phase == Phase::Before { "before" } else { "after" };
        match bytes {
            Some(data) if data.len() as u64 == b.bytes => {
                let path = p.dir.join(image_file(&b.name, phase));
                match std::fs::write(&path, data) {
                    Ok(()) => p.written[index][phase as usize] = true,
                    Err(e) => p.problems.push(format!("cannot write {}: {e}", path.display())),
                }
            }
            Some(data) => p.problems.push(format!(
                "the copy of {} {when} the launch holds {} bytes, not the allocation's {}",
                b.name,
                data.len(),
                b.bytes
            )),
            None => p.problems.push(format!(
                "the allocation of {} at {} could not be read {when} the launch",
                b.name,
                address_text(b.base)
            )),
        }
    }

    /// The launch `handle` has finished (`launched`: it started without
    /// error): its launch file and outputs go to its folder, and the
    /// process's part of the manifest is updated.
    pub fn end(&mut self, handle: u64, launched: bool) {
        let Some(mut p) = self.pending.remove(&handle) else { return };
        if !launched {
            p.problems.push("the launch failed; its memory after it is not what the kernel left".into());
        }
        let missing: Vec<String> = p
            .buffers
            .iter()
            .zip(&p.written)
            .flat_map(|(b, w)| {
                [(Phase::Before, w[0]), (Phase::After, w[1])]
                    .into_iter()
                    .filter(|(_, done)| !done)
                    .map(|(phase, _)| image_file(&b.name, phase))
            })
            .collect();
        if !missing.is_empty() && p.problems.is_empty() {
            p.problems.push(format!("memory images missing: {}", missing.join(", ")));
        }
        p.entry.complete = p.problems.is_empty();
        if !p.problems.is_empty() {
            p.entry.problem = Some(p.problems.join("; "));
            let shown = p.entry.demangled.clone().unwrap_or_else(|| p.entry.kernel.clone());
            self.part.not_captured.push(format!(
                "launch {} of {shown} ({}): {}",
                p.entry.launch,
                p.entry.dir,
                p.problems.join("; ")
            ));
        }
        let text = serde_json::to_string_pretty(&p.file).unwrap_or_default() + "\n";
        if let Err(e) = std::fs::write(p.dir.join(LAUNCH_FILE), text) {
            p.entry.complete = false;
            p.entry.problem = Some(format!("cannot write its launch file: {e}"));
        }
        let outputs = OutputManifest {
            kernel: p.file.kernel.clone(),
            outputs: p
                .file
                .buffers
                .iter()
                .map(|(name, b)| OutputFile {
                    name: name.clone(),
                    elem: Some(b.elem.clone()),
                    file: image_file(name, Phase::After),
                })
                .collect(),
        };
        if p.entry.complete {
            if let Err(e) = outputs.write(&p.dir) {
                p.entry.problem = Some(e.to_string());
            }
        }
        self.part.launches.push(p.entry);
        let _ = self.part.write(&self.settings.dir);
    }

    /// The run ends: launches still pending are written as incomplete,
    /// the limits' notes added, and the part written. Returns the notes
    /// for the report.
    pub fn finish(&mut self) -> Vec<String> {
        let handles: Vec<u64> = self.pending.keys().copied().collect();
        for h in handles {
            if let Some(p) = self.pending.get_mut(&h) {
                p.problems.push("the program ended before the launch finished".into());
            }
            self.end(h, false);
        }
        for (kernel, n) in &self.over_launches {
            self.part.not_captured.push(format!(
                "{n} launch{} of {kernel} not captured: over --capture-max-launches ({})",
                if *n == 1 { "" } else { "es" },
                self.settings.max_launches
            ));
        }
        self.over_launches.clear();
        if self.over_bytes > BYTE_NOTES {
            self.part
                .not_captured
                .push(format!("{} more launches not captured: over --capture-max-bytes", self.over_bytes - BYTE_NOTES));
        }
        let mut notes = vec![format!(
            "captured {} launch{} into {} ({} of memory images)",
            self.part.launches.len(),
            if self.part.launches.len() == 1 { "" } else { "es" },
            self.settings.dir.display(),
            human_bytes(self.part.launches.iter().map(|l| l.bytes).sum())
        )];
        notes.extend(self.part.not_captured.iter().map(|n| format!("capture: {n}")));
        if let Err(e) = self.part.write(&self.settings.dir) {
            notes.push(format!("capture: {e}"));
        }
        notes
    }
}

fn image_file(buffer: &str, phase: Phase) -> String {
    match phase {
        Phase::Before => format!("{buffer}.before.bin"),
        Phase::After => format!("{buffer}.after.bin"),
    }
}

fn elem_size(elem: &str) -> u64 {
    xfpx_common::capture::elem_size(elem).unwrap_or(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
