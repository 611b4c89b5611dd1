//! Launch screening, free of FFI: the host side of the cheap check that
//! watches the launches sampling leaves uninstrumented.
//!
//! After such a launch, the tool's scan kernel (compiled into the shim,
//! `xfpx_screen.cuh`) counts the NaN and infinite values in the device
//! buffers the launch's pointer arguments reach, compares each count with
//! the one kept on the device for that (allocation, reading format), and
//! sends a record only when one grew. This module decides which buffers a
//! launch gets scanned and how they are read ([`ScreenRun::plan`]), keeps
//! the allocations the program made (the interval map and the parameter
//! words of `xfpx_common::capture::memory`, shared with launch capture) and
//! the device counters given out, and decodes the records ([`device`]).

pub mod device;
pub mod params;
pub mod reading;

use device::{ScreenBuffer, ScreenLaunch, ScreenPlan, MAX_BUFFERS, SCRATCH, SLOTS};
use params::{declared, Declared};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use xfpx_common::capture::memory::{param_types, words, Allocations};
use xfpx_common::capture::ParamSlot;
use xfpx_common::class::FpFormat;
use xfpx_common::screened::Unchecked;

/// Alignment a buffer's base needs (the scan reads 16 bytes at a time).
pub const BASE_ALIGN: u64 = 16;

/// What the screen knows of one function (a kernel or one it calls).
#[derive(Debug, Default)]
struct FunctionInfo {
    /// Formats its floating-point results have (from its plan).
    formats: BTreeSet<FpFormat>,
    /// Whether it was planned (a function that could not be instrumented
    /// has no known formats).
    planned: bool,
    /// Functions it calls (for a kernel).
    callees: BTreeSet<String>,
}

/// The declared parameter types of a kernel, read once from its name.
#[derive(Debug)]
struct Signature {
    /// Types as written and what they say; `None`: not known.
    params: Option<Vec<(String, Declared)>>,
}

/// The host side of launch screening for one process.
#[derive(Debug, Default)]
pub struct ScreenRun {
    allocations: Allocations,
    /// Device counters by (allocation base, reading format code).
    slots: BTreeMap<(u64, u8), u32>,
    free_slots: Vec<u32>,
    next_slot: u32,
    /// Counters the device has ([`SLOTS`]; fewer in tests).
    slot_limit: u32,
    next_scratch: u32,
    functions: HashMap<String, FunctionInfo>,
    signatures: HashMap<String, Signature>,
    /// Kernels whose launches reached more buffers than a scan reads
    /// (noted once each).
    capped: BTreeSet<String>,
    /// Bases not aligned for the scan (noted once).
    misaligned_noted: bool,
    /// Notes for the user, taken by [`ScreenRun::take_notes`].
    notes: Vec<String>,
}

impl ScreenRun {
    pub fn new() -> ScreenRun {
        ScreenRun { slot_limit: SLOTS, ..ScreenRun::default() }
    }

    /// A screen whose device has `slots` counters.
    pub fn with_slots(slots: u32) -> ScreenRun {
        ScreenRun { slot_limit: slots.min(SLOTS), ..ScreenRun::default() }
    }

    /// The program allocated `bytes` of device memory at `base`.
    pub fn allocated(&mut self, base: u64, bytes: u64) {
        // memory whose free was not seen is reused: the counters of the
        // allocations it overlaps go (the map drops those allocations)
        if let Some((before, _)) = self.allocations.containing(base) {
            self.release_slots(before, before.saturating_add(1));
        }
        self.release_slots(base, base.saturating_add(bytes));
        self.allocations.add(base, bytes);
    }

    /// The program freed the device allocation at `base`.
    pub fn freed(&mut self, base: u64) {
        self.release_slots(base, base.saturating_add(1));
        self.allocations.remove(base);
    }

    /// Gives back the counters of the allocations whose base is in `from..to`.
    fn release_slots(&mut self, from: u64, to: u64) {
        let gone: Vec<(u64, u8)> = self.slots.range((from, 0)..(to, 0)).map(|(k, _)| *k).collect();
        for k in gone {
            if let Some(s) = self.slots.remove(&k) {
                self.free_slots.push(s);
            }
        }
    }

    /// Device allocations known now.
    pub fn allocations(&self) -> &Allocations {
        &self.allocations
    }

    /// Function `mangled` was planned; its results have `formats`.
    pub fn planned(&mut self, mangled: &str, formats: impl IntoIterator<Item = FpFormat>) {
        let f = self.functions.entry(mangled.to_string()).or_default();
        f.planned = true;
        f.formats.extend(formats.into_iter().map(reading::element_of));
    }

    /// Kernel `kernel` calls function `callee`.
    pub fn calls(&mut self, kernel: &str, callee: &str) {
        if kernel != callee {
            self.functions.entry(kernel.to_string()).or_default().callees.insert(callee.to_string());
        }
    }

    /// The formats a kernel's results (and those of the functions it
    /// calls) have; `None` when it was not planned.
    pub fn kernel_formats(&self, kernel: &str) -> Option<BTreeSet<FpFormat>> {
        let k = self.functions.get(kernel).filter(|k| k.planned)?;
        let mut all = k.formats.clone();
        for c in &k.callees {
            if let Some(f) = self.functions.get(c) {
                all.extend(f.formats.iter().copied());
            }
        }
        Some(all)
    }

    /// The signature of a kernel of `params` parameters from its name.
    fn read_signature(demangled: &str, params: usize) -> Signature {
        let types = param_types(demangled).filter(|t| t.len() == params);
        let params = types.map(|t| {
            t.into_iter()
                .map(|text| {
                    let d = declared(&text);
                    (text, d)
                })
                .collect()
        });
        Signature { params }
    }

    /// The declared type of parameter `param` of a kernel seen before.
    pub fn declared_type(&self, mangled: &str, param: usize) -> Option<String> {
        let s = self.signatures.get(mangled)?;
        s.params.as_ref()?.get(param).map(|(t, _)| t.clone())
    }

    fn slot_for(&mut self, base: u64, format: FpFormat) -> Option<(u32, bool)> {
        if let Some(&s) = self.slots.get(&(base, format.code())) {
            return Some((s, false));
        }
        let s = match self.free_slots.pop() {
            Some(s) => s,
            None if self.next_slot < self.slot_limit => {
                self.next_slot += 1;
                self.next_slot - 1
            }
            None => return None,
        };
        self.slots.insert((base, format.code()), s);
        Some((s, true))
    }

    fn scratch(&mut self) -> u32 {
        let s = self.next_scratch;
        self.next_scratch = (self.next_scratch + 1) % SCRATCH;
        s
    }

    /// The buffers launch `serial` of kernel (`mangled`, `demangled`) may
    /// write, from its parameter bytes and their layout, and how each is
    /// read: a pointer declared to floating-point data by that format
    /// (none when the data is `const`: the kernel does not write it); a
    /// pointer of unknown type (or a word of a structure passed by value)
    /// by the widest format the kernel computes in (for a kernel not
    /// planned yet, such as one first launched while it is disassembled,
    /// the widest its name names: [`params::formats_named`]); pointers to
    /// integers and numbers are not read. Each (allocation, format) once,
    /// in parameter order.
    fn buffers(
        &mut self,
        mangled: &str,
        demangled: &str,
        params: &[u8],
        layout: &[ParamSlot],
    ) -> Result<Vec<(u64, u64, usize, FpFormat)>, Unchecked> {
        let formats =
            self.kernel_formats(mangled).or_else(|| Some(params::formats_named(demangled)).filter(|f| !f.is_empty()));
        if formats.as_ref().is_some_and(BTreeSet::is_empty) {
            return Err(Unchecked::NothingToCheck);
        }
        let unknown = formats.and_then(reading::unknown_reading);
        if !self.signatures.contains_key(mangled) {
            let s = Self::read_signature(demangled, layout.len());
            self.signatures.insert(mangled.to_string(), s);
        }
        let signature = &self.signatures[mangled];
        let mut found: Vec<(u64, u64, usize, FpFormat)> = Vec::new();
        for (param, value, whole) in words(params, layout) {
            let decl = signature.params.as_ref().and_then(|p| p.get(param)).map(|(_, d)| d);
            let format = match decl {
                Some(Declared::FpPointer { format, read_only: false }) if whole => Some(reading::element_of(*format)),
                Some(Declared::FpPointer { .. } | Declared::OtherPointer | Declared::Scalar) => None,
                Some(Declared::Opaque) | None => unknown,
            };
            let Some(format) = format else { continue };
            let Some((base, bytes)) = self.allocations.containing(value) else { continue };
            if base % BASE_ALIGN != 0 {
                if !std::mem::replace(&mut self.misaligned_noted, true) {
                    self.notes.push(format!(
                        "a device allocation at {base:#x} is not {BASE_ALIGN}-byte aligned: launches writing it are \
                         not screened there"
                    ));
                }
                continue;
            }
            if !found.iter().any(|b| b.0 == base && b.3 == format) {
                found.push((base, bytes, param, format));
            }
        }
        if found.is_empty() {
            return Err(Unchecked::NoBuffers);
        }
        if found.len() > MAX_BUFFERS && self.capped.insert(mangled.to_string()) {
            self.notes.push(format!(
                "{}: launches reach {} buffers; each screen reads the first {MAX_BUFFERS}",
                xfpx_common::names::readable(demangled),
                found.len()
            ));
        }
        found.truncate(MAX_BUFFERS);
        Ok(found)
    }

    /// The scans of launch `serial` of a kernel: `report` for a launch that
    /// is screened (growth is sent), not for one that runs instrumented
    /// (its scan only brings the counts up to date, so that what its
    /// precise checks found is not blamed on a later launch). Buffers no
    /// scan has counted yet get a scan just before a screened launch too.
    /// `Err` says why the launch cannot be screened.
    pub fn plan(
        &mut self,
        mangled: &str,
        demangled: &str,
        params: &[u8],
        layout: &[ParamSlot],
        serial: u64,
        report: bool,
    ) -> Result<ScreenPlan, Unchecked> {
        let found = self.buffers(mangled, demangled, params, layout)?;
        let mut all = Vec::with_capacity(found.len());
        let mut fresh = Vec::new();
        let mut taken = Vec::new();
        for (base, bytes, param, format) in found {
            let Some((slot, new)) = self.slot_for(base, format) else {
                // give back what this launch took: its counters were never set
                for k in taken {
                    if let Some(s) = self.slots.remove(&k) {
                        self.free_slots.push(s);
                    }
                }
                return Err(Unchecked::Limits);
            };
            let b = ScreenBuffer {
                base,
                bytes,
                slot,
                param: u16::try_from(param).unwrap_or(u16::MAX),
                format: format.code(),
                reserved: 0,
            };
            if new {
                taken.push((base, format.code()));
                fresh.push(b);
            }
            all.push(b);
        }
        let before = if report && !fresh.is_empty() {
            let scratch = self.scratch();
            ScreenLaunch::new(serial, false, scratch, &fresh)
        } else {
            ScreenLaunch::default()
        };
        let scratch = self.scratch();
        Ok(ScreenPlan { before, after: ScreenLaunch::new(serial, report, scratch, &all) })
    }

    /// Notes gathered since the last call.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests;
