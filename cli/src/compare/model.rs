//! The comparison of two reports (schema `xfpx-compare/1`, documented in
//! `docs/cli.md`): kernels matched by mangled name, then demangled; per
//! source line the (kind, format) classes each side found and what only
//! one side has, with the likely cause of each difference. Reports of two
//! vendors are compared by the user's line: the outermost frame of each
//! finding (a math function inlined from each vendor's own header counts
//! at the line that called it), its file by name.

use super::buffers::BufferDiff;
use super::causes;
use crate::findings::{self, LineFindings};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use xfpx_common::report::{Denormals, KernelReport, Report};

/// Schema name and version of the comparison's JSON.
pub const SCHEMA: &str = "xfpx-compare/1";

/// Which report a thing belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    A,
    B,
}

/// One report as the comparison names it.
#[derive(Debug, Clone, Serialize)]
pub struct ReportInfo {
    pub file: String,
    pub vendor: String,
    pub device: String,
    pub target: Option<String>,
}

/// One (kind, format) class on a line, with its occurrences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Class {
    pub kind: String,
    pub format: String,
    pub occurrences: u64,
}

/// One source line of a kernel found on either side.
#[derive(Debug, Clone, Serialize)]
pub struct LineDiff {
    /// `file:line`, or `unknown location`.
    pub place: String,
    pub a: Vec<Class>,
    pub b: Vec<Class>,
    /// Classes (`kind (format)`) only one side has.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Instructions with findings at the line, per side (their text as
    /// the report gives it).
    pub instr_a: Vec<String>,
    pub instr_b: Vec<String>,
    /// Likely causes of the difference (empty where the line is the same).
    pub causes: Vec<String>,
}

impl LineDiff {
    pub fn differs(&self) -> bool {
        !self.only_a.is_empty() || !self.only_b.is_empty()
    }
}

/// One kernel of either report.
#[derive(Debug, Clone, Serialize)]
pub struct KernelDiff {
    pub name: String,
    pub demangled: Option<String>,
    /// Set when only one report has the kernel.
    pub only_in: Option<Side>,
    pub denormals_a: Option<Denormals>,
    pub denormals_b: Option<Denormals>,
    pub lines: Vec<LineDiff>,
    /// The flows on each side, where both reports have a flow section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<super::flows::KernelFlows>,
}

impl KernelDiff {
    pub fn display_name(&self) -> &str {
        self.demangled.as_deref().unwrap_or(&self.name)
    }

    pub fn differs(&self) -> bool {
        self.lines.iter().any(LineDiff::differs) || self.flows.as_ref().is_some_and(|f| f.differs())
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub a: ReportInfo,
    pub b: ReportInfo,
    /// True when nothing differs: same kernels, same classes per line,
    /// identical compared outputs.
    pub same: bool,
    pub kernels: Vec<KernelDiff>,
    /// Output buffers compared (`--out-a`/`--out-b`), by name.
    pub outputs: Vec<BufferDiff>,
}

pub fn info(file: &str, r: &Report) -> ReportInfo {
    ReportInfo {
        file: file.to_string(),
        vendor: r.run.vendor.clone(),
        device: r.run.device.clone(),
        target: r.run.target.clone(),
    }
}

/// The kernel of `b` matched to `a`: by name, then by demangled name (an
/// NVIDIA report names kernels by their demangled name, an AMD one by the
/// symbol, with the demangled name beside it).
fn matching(a: &KernelReport, b: &Report, taken: &BTreeSet<usize>) -> Option<usize> {
    let free = |i: &usize| !taken.contains(i);
    let by_name = b.kernels.iter().enumerate().find(|(i, k)| free(i) && k.name == a.name);
    by_name
        .or_else(|| b.kernels.iter().enumerate().find(|(i, k)| free(i) && k.display_name() == a.display_name()))
        .map(|(i, _)| i)
}

/// Whether two reports come from different GPU vendors (the emulator's
/// replays are AMD's).
fn cross_vendor(a: &Report, b: &Report) -> bool {
    let family = |v: &str| if v.starts_with("amd") { "amd".to_string() } else { v.to_string() };
    family(&a.run.vendor) != family(&b.run.vendor)
}

/// Compares the findings of two reports, kernel by kernel and line by line.
pub fn kernels(a: &Report, b: &Report) -> Vec<KernelDiff> {
    let modes = (a.run.mode.as_str(), b.run.mode.as_str());
    let by_caller = cross_vendor(a, b);
    let sections = (a.flow.as_ref(), b.flow.as_ref());
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for ka in &a.kernels {
        match matching(ka, b, &taken) {
            Some(i) => {
                taken.insert(i);
                let mut d = kernel(ka, Some(&b.kernels[i]), modes, by_caller);
                d.flows = super::flows::kernel_flows(sections, Some(&ka.name), Some(&b.kernels[i].name));
                out.push(d);
            }
            None => {
                let mut d = kernel(ka, None, modes, by_caller).only(Side::A);
                d.flows = super::flows::kernel_flows(sections, Some(&ka.name), None);
                out.push(d);
            }
        }
    }
    for (i, kb) in b.kernels.iter().enumerate() {
        if !taken.contains(&i) {
            let mut d = kernel(kb, None, modes, by_caller).only(Side::B);
            d.flows = super::flows::kernel_flows(sections, None, Some(&kb.name));
            std::mem::swap(&mut d.denormals_a, &mut d.denormals_b);
            for l in &mut d.lines {
                std::mem::swap(&mut l.a, &mut l.b);
                std::mem::swap(&mut l.only_a, &mut l.only_b);
                std::mem::swap(&mut l.instr_a, &mut l.instr_b);
            }
            out.push(d);
        }
    }
    out
}

impl KernelDiff {
    fn only(mut self, side: Side) -> KernelDiff {
        self.only_in = Some(side);
        self
    }
}

/// Kernel `a` against its match `b` (none: `a`'s lines are all its own).
/// `by_caller`: lines are the outermost frames, files by name.
fn kernel(a: &KernelReport, b: Option<&KernelReport>, modes: (&str, &str), by_caller: bool) -> KernelDiff {
    let lines_of = |k: &KernelReport| -> BTreeMap<String, (Vec<Class>, Vec<String>)> {
        let grouped = findings::by_line_of(k);
        let mut out: BTreeMap<String, (Vec<Class>, Vec<String>)> = BTreeMap::new();
        for l in &grouped.lines {
            let place = if by_caller { caller_place(l.location) } else { l.place() };
            let (cs, is) = out.entry(place).or_default();
            for c in classes(l) {
                match cs.iter_mut().find(|x| x.kind == c.kind && x.format == c.format) {
                    Some(x) => x.occurrences += c.occurrences,
                    None => cs.push(c),
                }
            }
            for i in instructions(l) {
                if !is.contains(&i) {
                    is.push(i);
                }
            }
        }
        out
    };
    let la = lines_of(a);
    let lb = b.map(lines_of).unwrap_or_default();
    let places: BTreeSet<&String> = la.keys().chain(lb.keys()).collect();
    let empty = (Vec::new(), Vec::new());
    let denormals_b = b.and_then(|k| k.denormals.clone());
    let mut lines: Vec<LineDiff> = places
        .into_iter()
        .map(|place| {
            let (ca, ia) = la.get(place).unwrap_or(&empty);
            let (cb, ib) = lb.get(place).unwrap_or(&empty);
            let names = |c: &[Class]| c.iter().map(|c| format!("{} ({})", c.kind, c.format)).collect::<Vec<_>>();
            let (na, nb) = (names(ca), names(cb));
            let mut l = LineDiff {
                place: place.clone(),
                a: ca.clone(),
                b: cb.clone(),
                only_a: na.iter().filter(|n| !nb.contains(n)).cloned().collect(),
                only_b: nb.iter().filter(|n| !na.contains(n)).cloned().collect(),
                instr_a: ia.clone(),
                instr_b: ib.clone(),
                causes: Vec::new(),
            };
            if b.is_some() && l.differs() {
                l.causes = causes::of_line(&l, modes, a.denormals.as_ref(), denormals_b.as_ref());
            }
            l
        })
        .collect();
    // known lines by file and number, the unknown location last
    lines.sort_by_key(|l| line_order(&l.place));
    KernelDiff {
        name: a.name.clone(),
        demangled: a.demangled.clone(),
        only_in: None,
        denormals_a: a.denormals.clone(),
        denormals_b,
        lines,
        flows: None,
    }
}

/// The user's line of a finding: its outermost frame, `file:line` with
/// the file's name only (each vendor's build may name the folder
/// differently); `unknown location` without one.
fn caller_place(location: Option<&xfpx_common::site::SourceLoc>) -> String {
    let Some(l) = location else { return "unknown location".to_string() };
    let outer = l.inlined_at.as_deref().unwrap_or(l);
    let file = outer.file.rsplit('/').next().unwrap_or(&outer.file);
    format!("{file}:{}", outer.line)
}

pub fn line_order(place: &str) -> (bool, String, u64) {
    let own = place.split_once(" (").map_or(place, |(own, _)| own);
    match own.rsplit_once(':') {
        Some((file, rest)) => {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (false, file.to_string(), n.parse().unwrap_or(0))
        }
        None => (true, String::new(), 0),
    }
}

fn classes(l: &LineFindings) -> Vec<Class> {
    l.kinds
        .iter()
        .map(|k| Class { kind: k.kind.to_string(), format: k.format.to_string(), occurrences: k.occurrences })
        .collect()
}

fn instructions(l: &LineFindings) -> Vec<String> {
    let mut v: Vec<String> = l.instructions.iter().map(|i| i.instr.to_string()).collect();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::class::FpFormat;
    use xfpx_common::fp::ExceptionKind;
    use xfpx_common::report::{Collector, RunInfo, SiteRef};
    use xfpx_common::site::{SiteId, SourceLoc};

    /// A report of `vendor` with one kernel `name` (demangled `demangled`)
    /// and a NaN at each (instruction, innermost file, line) inlined at
    /// `src/xv.cu:14`.
    fn report(vendor: &str, name: &str, demangled: Option<&str>, sites: &[(&str, &str, u32)]) -> Report {
        let mut c = Collector::new(RunInfo::new(vendor, "d", "detect"), None);
        for (i, (instr, file, line)) in sites.iter().enumerate() {
            let loc = SourceLoc::new(*file, *line).inlined_into(SourceLoc::new("src/xv.cu", 14));
            let site =
                SiteRef { id: SiteId(i as u32), offset: 16 * i as u64, instr: instr.to_string(), location: Some(loc) };
            c.record(name, ExceptionKind::Nan, FpFormat::F32, site, 0, 1);
        }
        let mut r = c.report();
        r.kernels[0].demangled = demangled.map(str::to_string);
        r
    }

    #[test]
    fn two_vendors_compare_by_the_calling_line() {
        let nv = report("nvidia", "k(float*)", None, &[("MUFU.EX2 R1, R2", "crt/math.hpp", 900)]);
        let amd = report(
            "amd-emulated",
            "_Z1kPf",
            Some("k(float*)"),
            &[("v_exp_f32 v1, v2", "hip_math.h", 292), ("v_ldexp_f32 v1, v1, v3", "hip_math.h", 300)],
        );
        let k = kernels(&nv, &amd);
        assert_eq!(k.len(), 1, "matched by the demangled name: {k:?}");
        assert_eq!(k[0].lines.iter().map(|l| l.place.as_str()).collect::<Vec<_>>(), ["xv.cu:14"]);
        assert!(!k[0].differs(), "the same class at the calling line");
        assert_eq!(k[0].lines[0].instr_b.len(), 2, "both header lines' instructions");
        // one vendor: the header lines stay apart
        let k = kernels(&amd, &amd);
        assert_eq!(k[0].lines.len(), 2);
        assert!(k[0].lines[0].place.starts_with("hip_math.h:292 (inlined at src/xv.cu:14)"), "{}", k[0].lines[0].place);
    }
}
