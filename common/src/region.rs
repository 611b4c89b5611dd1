//! Operational regions (Guerrero-Balaguera et al., ICECS'21): per kernel,
//! the range (min, max) of each normalised counter over every sampling
//! window of fault-free runs; in the field, a window outside its kernel's
//! region may be a fault. A region file is JSON of schema
//! [`REGION_SCHEMA`] (documented in `docs/report-schema.md`).
//!
//! A region remembers where its runs' counters came from
//! ([`CounterSource`]): counters of the other source are refused (the two
//! count per window or per launch, and hardware counters measure fewer
//! counters), and a region learnt from hardware counters learns only the
//! counters they measure.
//!
//! Everything here is pure: reports' counter sections in, a region or the
//! deviations out.

use crate::counters::{CounterSource, CountersSection, Deviation, Normalised, RegionCheck};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema name and version of region files.
pub const REGION_SCHEMA: &str = "xfpx-region/1";

/// Counters a region is learnt on when none are named: the paper's two.
pub const DEFAULT_COUNTERS: [&str; 2] = ["inact", "stack"];

/// The counters a region of runs with counters from `source` is learnt on
/// when none are named: [`DEFAULT_COUNTERS`] for instrumented counters;
/// for hardware counters, which do not count divergence (no STACK),
/// `inact` and `pred_on`.
pub fn default_counters(source: CounterSource) -> Vec<String> {
    match source {
        CounterSource::Instrumented => DEFAULT_COUNTERS.iter().map(|c| c.to_string()).collect(),
        CounterSource::Hardware => ["inact", "pred_on"].iter().map(|c| c.to_string()).collect(),
    }
}

/// How far `xfpx region build` widens each learnt range unless told
/// ([`Region::widen`]): one width on each side. The runs' own min and max
/// (margin 0, the paper's region) flag fault-free runs whose inputs move a
/// counter a little past what the learning runs showed: on an H200, 20
/// such runs per application of tests/apps against 10 learning runs were
/// flagged 10 times in 140 with instrumented counters and 20 times with
/// hardware counters (sobel, sort). Widening by 0.1, 0.25, 0.5 or 1 left
/// none of the instrumented alarms, and 7, 4, 1 and 0 of the hardware
/// ones; the faulty runs flagged went from 3 of 21 at margin 0 to 2 at
/// every margin from 0.05 to 1 (tests/apps/RESULTS.md). A kernel whose
/// counters do not move with the input keeps a region of one point, which
/// no margin widens.
pub const DEFAULT_MARGIN: f64 = 1.0;

/// A value this close to a bound is inside (the bounds are written as
/// decimal JSON numbers).
const SLACK: f64 = 1e-9;

/// The range of one normalised counter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub min: f64,
    pub max: f64,
}

/// One kernel's operational region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRegion {
    /// Reports (runs) the kernel was seen in.
    pub runs: u32,
    /// Windows learnt from, over all runs and launches.
    pub windows: u64,
    /// Per counter name.
    pub bounds: BTreeMap<String, Bounds>,
}

/// A region file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub schema: String,
    /// Where the counters of the runs it was learnt from came from (absent
    /// in files written before hardware counters existed: instrumented); a
    /// check needs counters of the same source.
    #[serde(default)]
    pub source: CounterSource,
    /// The sampling windows the runs used (thread blocks per window, 0:
    /// whole launches); a check needs the same.
    pub window_blocks: u32,
    pub warp_size: u32,
    /// The normalised counters learnt, in order.
    pub counters: Vec<String>,
    /// How far each range was widened beyond what the runs showed, as a
    /// fraction of its width (0: the learnt min and max; see
    /// [`Region::widen`]).
    #[serde(default)]
    pub margin: f64,
    pub kernels: BTreeMap<String, KernelRegion>,
}

/// Why a region could not be learnt, read or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    #[error("invalid margin {0}: a fraction of each range's width, 0 or more")]
    BadMargin(String),
    #[error("unknown counter `{0}` (known: inact, stack, lane_efficiency, pred_on, divergence)")]
    UnknownCounter(String),
    #[error("no counters named")]
    NoCounters,
    #[error("{0} has no counters (run it with --tool counters)")]
    NoCountersIn(String),
    #[error("{name} used windows of {got} blocks, the others {want} (0: whole launches)")]
    WindowMismatch { name: String, got: u32, want: u32 },
    #[error("{name} was run with warps of {got} lanes, the others {want}")]
    WarpMismatch { name: String, got: u32, want: u32 },
    #[error("mismatched region: {name} has {g} counters, the region {w} ones (learn it from runs with --counters {g})", g = .got.name(), w = .want.name())]
    SourceMismatch { name: String, got: CounterSource, want: CounterSource },
    #[error("{name} has {g} counters, the others {w} ones (learn a region from runs of one source)", g = .got.name(), w = .want.name())]
    MixedSources { name: String, got: CounterSource, want: CounterSource },
    #[error("counter `{counter}` is not measured by {s} counters (they give {m})", s = .by.name(), m = .by.measured().join(", "))]
    NotMeasured { counter: String, by: CounterSource },
    #[error("region file is not valid JSON of schema {REGION_SCHEMA}: {0}")]
    Json(String),
    #[error("region file has schema `{0}`, expected `{REGION_SCHEMA}`")]
    Schema(String),
    #[error("region file: kernel `{kernel}`, counter `{counter}`: {what}")]
    Malformed { kernel: String, counter: String, what: &'static str },
}

/// Check counter names against [`Normalised::NAMES`].
pub fn parse_counters(list: &str) -> Result<Vec<String>, RegionError> {
    let names: Vec<String> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    if names.is_empty() {
        return Err(RegionError::NoCounters);
    }
    for n in &names {
        if !Normalised::NAMES.contains(&n.as_str()) {
            return Err(RegionError::UnknownCounter(n.clone()));
        }
    }
    Ok(names)
}

/// Learn the region of every kernel in `runs` (name, counters section,
/// one per fault-free run) on `counters`.
pub fn learn(runs: &[(String, Option<&CountersSection>)], counters: &[String]) -> Result<Region, RegionError> {
    if counters.is_empty() {
        return Err(RegionError::NoCounters);
    }
    if let Some(c) = counters.iter().find(|c| !Normalised::NAMES.contains(&c.as_str())) {
        return Err(RegionError::UnknownCounter(c.clone()));
    }
    let mut region: Option<Region> = None;
    for (name, section) in runs {
        let s = section.ok_or_else(|| RegionError::NoCountersIn(name.clone()))?;
        if let Some(c) = counters.iter().find(|c| !s.source.measures(c)) {
            return Err(RegionError::NotMeasured { counter: c.clone(), by: s.source });
        }
        let r = region.get_or_insert_with(|| Region {
            schema: REGION_SCHEMA.into(),
            source: s.source,
            window_blocks: s.window_blocks,
            warp_size: s.warp_size,
            counters: counters.to_vec(),
            margin: 0.0,
            kernels: BTreeMap::new(),
        });
        if s.source != r.source {
            return Err(RegionError::MixedSources { name: name.clone(), got: s.source, want: r.source });
        }
        same_windows(r, name, s)?;
        for k in &s.kernels {
            let kr = r.kernels.entry(k.kernel.clone()).or_insert_with(|| KernelRegion {
                runs: 0,
                windows: 0,
                bounds: BTreeMap::new(),
            });
            kr.runs += 1;
            for w in k.launches.iter().flat_map(|l| &l.windows) {
                kr.windows += 1;
                let n = w.normalised(s.warp_size);
                for c in counters {
                    let v = n.get(c).unwrap_or(0.0);
                    let b = kr.bounds.entry(c.clone()).or_insert(Bounds { min: v, max: v });
                    b.min = b.min.min(v);
                    b.max = b.max.max(v);
                }
            }
        }
    }
    region.ok_or(RegionError::NoCounters)
}

fn same_windows(r: &Region, name: &str, s: &CountersSection) -> Result<(), RegionError> {
    if s.window_blocks != r.window_blocks {
        return Err(RegionError::WindowMismatch { name: name.into(), got: s.window_blocks, want: r.window_blocks });
    }
    if s.warp_size != r.warp_size {
        return Err(RegionError::WarpMismatch { name: name.into(), got: s.warp_size, want: r.warp_size });
    }
    Ok(())
}

impl Region {
    /// Widens every learnt range by `margin` times its width on each side
    /// (a range that is one value stays one value), never past the values
    /// the counter can take ([`Normalised::span`]): fewer false alarms on
    /// inputs the learning runs did not cover, at the price of faults that
    /// move a counter only a little. `margin` is a finite fraction ≥ 0.
    pub fn widen(&mut self, margin: f64) -> Result<(), RegionError> {
        if !margin.is_finite() || margin < 0.0 {
            return Err(RegionError::BadMargin(margin.to_string()));
        }
        for (name, b) in self.kernels.values_mut().flat_map(|k| k.bounds.iter_mut()) {
            let (low, high) = Normalised::span(name);
            let spread = (b.max - b.min) * margin;
            b.min = (b.min - spread).max(low);
            b.max = (b.max + spread).min(high);
        }
        self.margin += margin;
        Ok(())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Read and validate a region file's text.
    pub fn from_json(text: &str) -> Result<Region, RegionError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| RegionError::Json(e.to_string()))?;
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(REGION_SCHEMA) => {}
            Some(other) => return Err(RegionError::Schema(other.into())),
            None => return Err(RegionError::Json("no `schema` field".into())),
        }
        let r: Region = serde_json::from_value(v).map_err(|e| RegionError::Json(e.to_string()))?;
        for c in &r.counters {
            if !Normalised::NAMES.contains(&c.as_str()) {
                return Err(RegionError::UnknownCounter(c.clone()));
            }
            if !r.source.measures(c) {
                return Err(RegionError::NotMeasured { counter: c.clone(), by: r.source });
            }
        }
        for (kernel, k) in &r.kernels {
            let bad =
                |counter: &str, what| RegionError::Malformed { kernel: kernel.clone(), counter: counter.into(), what };
            for c in &r.counters {
                if !k.bounds.contains_key(c) && k.windows > 0 {
                    return Err(bad(c, "no bounds"));
                }
            }
            for (c, b) in &k.bounds {
                if !r.counters.contains(c) {
                    return Err(RegionError::UnknownCounter(c.clone()));
                }
                if !(b.min.is_finite() && b.max.is_finite()) || b.min > b.max {
                    return Err(bad(c, "bounds must be finite with min <= max"));
                }
            }
        }
        Ok(r)
    }

    /// Check every window of a run (`name` for messages) against the region.
    pub fn check(&self, name: &str, s: &CountersSection) -> Result<RegionCheck, RegionError> {
        if s.source != self.source {
            return Err(RegionError::SourceMismatch { name: name.into(), got: s.source, want: self.source });
        }
        same_windows(self, name, s)?;
        let mut out = RegionCheck::default();
        for k in &s.kernels {
            let Some(kr) = self.kernels.get(&k.kernel) else {
                out.unknown_kernels.push(k.kernel.clone());
                continue;
            };
            for l in &k.launches {
                for w in &l.windows {
                    out.windows_checked += 1;
                    let n = w.normalised(s.warp_size);
                    for (c, b) in &kr.bounds {
                        let v = n.get(c).unwrap_or(0.0);
                        if v < b.min - SLACK || v > b.max + SLACK {
                            out.deviations.push(Deviation {
                                kernel: k.kernel.clone(),
                                launch: l.launch,
                                window: w.index,
                                counter: c.clone(),
                                value: v,
                                min: b.min,
                                max: b.max,
                            });
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::counters::{fold, CountLayout, KernelCounters, LaunchCounters, RegionShape, SlotCount};

    /// A kernel of one 4-instruction region ending in a branch and a
    /// 2-instruction region merging after it; `split` lanes take the
    /// branch in each of `windows` windows.
    fn section(splits: &[u32]) -> CountersSection {
        let layout = CountLayout {
            kernel: "k".into(),
            regions: vec![
                RegionShape {
                    first: 0,
                    end: 4,
                    mix: BTreeMap::new(),
                    reconverges_into: None,
                    mask_saves: 0,
                    mask_restores: 0,
                },
                RegionShape {
                    first: 4,
                    end: 6,
                    mix: BTreeMap::new(),
                    reconverges_into: None,
                    mask_saves: 0,
                    mask_restores: 0,
                },
            ],
            guards: vec![],
            warp_size: 32,
        };
        let windows = splits
            .iter()
            .enumerate()
            .map(|(i, &taken)| {
                let divergent = u64::from(taken != 0 && taken != 32);
                let slots = [
                    SlotCount { warps: 1, lanes: 32, divergent },
                    SlotCount { warps: 1, lanes: u64::from(32 - taken), divergent: 0 },
                ];
                fold(&layout, i as u32, &slots).unwrap()
            })
            .collect();
        CountersSection {
            source: CounterSource::Instrumented,
            window_blocks: 4,
            warp_size: 32,
            kernels: vec![KernelCounters { kernel: "k".into(), launches: vec![LaunchCounters { launch: 0, windows }] }],
            region_check: None,
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn learns_min_and_max_over_runs_and_flags_windows_outside() {
        let a = section(&[0, 8]);
        let b = section(&[4]);
        let r = learn(&[("a".into(), Some(&a)), ("b".into(), Some(&b))], &names(&["inact", "stack"])).unwrap();
        let k = &r.kernels["k"];
        assert_eq!((k.runs, k.windows), (2, 3));
        // inact = taken*2 / (6*32): 0 .. 16/192
        assert_eq!(k.bounds["inact"].min, 0.0);
        assert!((k.bounds["inact"].max - 16.0 / 192.0).abs() < 1e-12);
        let back = Region::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        // inside: no deviation; 16 lanes off: inact above the region
        assert!(back.check("c", &section(&[2, 8])).unwrap().deviations.is_empty());
        let c = back.check("c", &section(&[0, 16])).unwrap();
        assert_eq!(c.windows_checked, 2);
        assert_eq!(c.deviations.len(), 1);
        assert_eq!((c.deviations[0].window, c.deviations[0].counter.as_str()), (1, "inact"));
    }

    #[test]
    fn a_margin_widens_each_range_by_its_width() {
        let a = section(&[0, 8]);
        let mut r = learn(&[("a".into(), Some(&a))], &names(&["inact"])).unwrap();
        let width = 16.0 / 192.0;
        // 10 lanes off is outside the learnt range, inside it widened by half
        let c = section(&[10]);
        assert_eq!(r.check("c", &c).unwrap().deviations.len(), 1);
        r.widen(0.5).unwrap();
        let b = r.kernels["k"].bounds["inact"];
        // the learnt minimum is 0: widened, it stays 0 (no counter is negative)
        assert!(b.min == 0.0 && (b.max - 1.5 * width).abs() < 1e-12, "{b:?}");
        assert!(r.check("c", &c).unwrap().deviations.is_empty());
        assert_eq!(Region::from_json(&r.to_json()).unwrap().margin, 0.5);
        // a fraction is never widened past 1
        r.kernels.get_mut("k").unwrap().bounds.insert("pred_on".into(), Bounds { min: 0.9, max: 0.98 });
        r.widen(1.0).unwrap();
        assert_eq!(r.kernels["k"].bounds["pred_on"].max, 1.0);
        assert!(matches!(r.widen(-1.0), Err(RegionError::BadMargin(_))));
        assert!(matches!(r.widen(f64::NAN), Err(RegionError::BadMargin(_))));
    }

    /// A hardware section: one window per launch, the lanes of `idle`
    /// inactive in each launch's 100 warp instructions.
    fn hardware(idle: &[u64]) -> CountersSection {
        use crate::counters::{KernelCounters, LaunchCounters, WindowCounters};
        let launches = idle
            .iter()
            .enumerate()
            .map(|(i, &off)| {
                let w = WindowCounters {
                    warp_instructions: 100,
                    thread_instructions: 3200 - off,
                    thread_instructions_pred_on: 3000 - off,
                    inactive_lanes: off,
                    ..WindowCounters::default()
                };
                LaunchCounters { launch: i as u64, windows: vec![w] }
            })
            .collect();
        CountersSection {
            source: CounterSource::Hardware,
            window_blocks: 0,
            warp_size: 32,
            kernels: vec![KernelCounters { kernel: "k".into(), launches }],
            region_check: None,
        }
    }

    #[test]
    fn a_region_keeps_to_the_source_of_its_counters() {
        let hw = hardware(&[0, 64]);
        let defaults = default_counters(CounterSource::Hardware);
        assert_eq!(defaults, names(&["inact", "pred_on"]));
        let r = learn(&[("a".into(), Some(&hw))], &defaults).unwrap();
        assert_eq!((r.source, r.kernels["k"].windows), (CounterSource::Hardware, 2));
        let back = Region::from_json(&r.to_json()).unwrap();
        assert_eq!((back.source, &back.counters), (CounterSource::Hardware, &defaults));
        // per launch: inside, and a launch with more idle lanes outside
        assert!(back.check("b", &hardware(&[32])).unwrap().deviations.is_empty());
        let c = back.check("c", &hardware(&[0, 640])).unwrap();
        let flagged: Vec<(u64, &str)> = c.deviations.iter().map(|d| (d.launch, d.counter.as_str())).collect();
        assert_eq!((c.windows_checked, flagged), (2, vec![(1, "inact"), (1, "pred_on")]));
        // hardware counters have no divergence: STACK is refused
        let e = learn(&[("a".into(), Some(&hw))], &names(&["inact", "stack"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "counter `stack` is not measured by hardware counters (they give inact, lane_efficiency, pred_on)"
        );
        let text = r.to_json().replace("\"pred_on\"", "\"divergence\"");
        assert!(matches!(Region::from_json(&text), Err(RegionError::NotMeasured { .. })));
        // a region of one source checks no counters of the other: one line
        let inst = section(&[0, 8]);
        let e = back.check("run.json", &inst).unwrap_err().to_string();
        assert_eq!(e, "mismatched region: run.json has instrumented counters, the region hardware ones (learn it from runs with --counters instrumented)");
        let ri = learn(&[("i".into(), Some(&inst))], &names(&["inact"])).unwrap();
        assert!(matches!(ri.check("h", &hw), Err(RegionError::SourceMismatch { .. })));
        // and is learnt from one source
        let mixed = learn(&[("i".into(), Some(&inst)), ("h".into(), Some(&hw))], &names(&["inact"]));
        assert!(matches!(mixed, Err(RegionError::MixedSources { .. })), "{mixed:?}");
        // a region file written before sources existed is instrumented
        let old = ri.to_json().replace("\"source\": \"instrumented\",", "");
        assert!(!old.contains("source"));
        assert_eq!(Region::from_json(&old).unwrap().source, CounterSource::Instrumented);
    }

    #[test]
    fn unknown_kernels_are_listed_not_flagged() {
        let r = learn(&[("a".into(), Some(&section(&[0])))], &names(&["stack"])).unwrap();
        let mut other = section(&[16]);
        other.kernels[0].kernel = "j".into();
        let c = r.check("o", &other).unwrap();
        assert_eq!(c.unknown_kernels, vec!["j".to_string()]);
        assert!(c.deviations.is_empty());
        assert_eq!(c.windows_checked, 0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let a = section(&[0]);
        assert!(matches!(learn(&[("a".into(), Some(&a))], &names(&["bogus"])), Err(RegionError::UnknownCounter(_))));
        assert!(matches!(learn(&[("a".into(), None)], &names(&["inact"])), Err(RegionError::NoCountersIn(_))));
        let mut w = section(&[0]);
        w.window_blocks = 8;
        assert!(matches!(
            learn(&[("a".into(), Some(&a)), ("w".into(), Some(&w))], &names(&["inact"])),
            Err(RegionError::WindowMismatch { .. })
        ));
        let r = learn(&[("a".into(), Some(&a))], &names(&["inact"])).unwrap();
        assert!(matches!(r.check("w", &w), Err(RegionError::WindowMismatch { .. })));
        assert!(matches!(Region::from_json("{"), Err(RegionError::Json(_))));
        assert!(matches!(Region::from_json(r#"{"schema":"x/9"}"#), Err(RegionError::Schema(_))));
        let text = r.to_json().replace("\"inact\"", "\"bogus\"");
        assert!(matches!(Region::from_json(&text), Err(RegionError::UnknownCounter(_))));
        let mut m = r.clone();
        m.kernels.get_mut("k").unwrap().bounds.get_mut("inact").unwrap().min = 1.0;
        assert!(matches!(Region::from_json(&m.to_json()), Err(RegionError::Malformed { .. })));
        assert!(parse_counters("inact,,stack").is_ok());
        assert!(matches!(parse_counters("inact,nope"), Err(RegionError::UnknownCounter(_))));
        assert!(matches!(parse_counters(""), Err(RegionError::NoCounters)));
    }
}
