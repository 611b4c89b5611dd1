//! The run configuration the CLI hands to a backend: one JSON file, named
//! by the environment variable [`CONFIG_ENV`] in the program under test.

use crate::fp::ExceptionKinds;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Environment variable naming the configuration file.
pub const CONFIG_ENV: &str = "XFPX_CONFIG";

/// What the backend instruments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Check only results that are not certain to reach a later check
    /// (see [`crate::observe`]): NaN, infinity and division by zero are
    /// found in every kernel where they occur; subnormals only where they
    /// are checked; findings may be located downstream of their origin.
    #[default]
    Fast,
    /// Check the result of every floating-point instruction (precise: every
    /// finding is located at its instruction).
    Detect,
}

impl Mode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [Mode; 2] = [Mode::Fast, Mode::Detect];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Fast => "fast",
            Mode::Detect => "detect",
        }
    }

    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Everything a backend needs to know about the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    pub mode: Mode,
    /// Exception kinds to look for.
    pub kinds: ExceptionKinds,
    /// Instrument only kernels whose (demangled or mangled) name matches
    /// one of these regular expressions (all when empty).
    pub kernels: Vec<String>,
    /// Never instrument kernels whose name matches one of these.
    pub exclude: Vec<String>,
    /// Instrument every k-th launch of each kernel (1: every launch).
    pub sample_every: u32,
    /// Instead: instrument launches 0 to 3 of each kernel, then launches
    /// 7, 15, 31, ... (gaps that double), so that a kernel launched n
    /// times costs about log2(n) instrumented launches.
    #[serde(default)]
    pub sample_doubling: bool,
    /// Only instructions whose index in the kernel is in [start, end).
    pub instr_range: Option<(u32, u32)>,
    /// Stop recording new findings after this many.
    pub max_records: Option<u64>,
    /// Where the final report goes.
    pub report_path: PathBuf,
    /// A Unix socket on which the CLI listens for events (JSON lines).
    pub events_socket: Option<PathBuf>,
    /// Write per-kernel instrumentation dumps here.
    pub dump_dir: Option<PathBuf>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            mode: Mode::Fast,
            kinds: ExceptionKinds::ALL,
            kernels: Vec::new(),
            exclude: Vec::new(),
            sample_every: 1,
            sample_doubling: false,
            instr_range: None,
            max_records: None,
            report_path: PathBuf::from("xfpx-report.json"),
            events_socket: None,
            dump_dir: None,
        }
    }
}

/// Failure to read or use a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration {path}: {source}")]
    Read { path: PathBuf, source: crate::limits::ReadError },
    #[error("configuration {path} is invalid: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("invalid kernel pattern `{pattern}`: {source}")]
    Pattern { pattern: String, source: Box<regex::Error> },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl RunConfig {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(text: &str, path: &Path) -> Result<RunConfig, ConfigError> {
        let c: RunConfig =
            serde_json::from_str(text).map_err(|source| ConfigError::Parse { path: path.to_path_buf(), source })?;
        c.validate()?;
        Ok(c)
    }

    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = crate::limits::read_text(path, crate::limits::CONFIG)
            .map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
        RunConfig::from_json(&text, path)
    }

    /// The configuration named by [`CONFIG_ENV`], or `None` when unset.
    pub fn from_env() -> Result<Option<RunConfig>, ConfigError> {
        match std::env::var_os(CONFIG_ENV) {
            Some(p) => RunConfig::load(Path::new(&p)).map(Some),
            None => Ok(None),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.sample_every == 0 {
            return Err(ConfigError::Invalid("sample_every must be at least 1".into()));
        }
        if let Some((a, b)) = self.instr_range {
            if a >= b {
                return Err(ConfigError::Invalid(format!("empty instruction range {a}:{b}")));
            }
        }
        self.filter().map(|_| ())
    }

    /// The compiled kernel filter.
    pub fn filter(&self) -> Result<KernelFilter, ConfigError> {
        KernelFilter::new(&self.kernels, &self.exclude)
    }

    /// The report's `sample_every`: the stride, or 0 when the launches
    /// are chosen with doubling gaps (`sample_auto`), never a false 1.
    pub fn reported_sample_every(&self) -> u32 {
        if self.sample_doubling {
            0
        } else {
            self.sample_every
        }
    }

    /// Whether launch number `index` (from 0) of a kernel is instrumented.
    pub fn samples_launch(&self, index: u64) -> bool {
        if self.sample_doubling {
            return index < 4 || (index + 1).is_power_of_two();
        }
        index.is_multiple_of(u64::from(self.sample_every.max(1)))
    }
}

/// Include/exclude regular expressions over kernel names.
#[derive(Debug, Clone)]
pub struct KernelFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
}

impl KernelFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<KernelFilter, ConfigError> {
        let compile =
            |p: &String| Regex::new(p).map_err(|e| ConfigError::Pattern { pattern: p.clone(), source: Box::new(e) });
        Ok(KernelFilter {
            include: include.iter().map(compile).collect::<Result<_, _>>()?,
            exclude: exclude.iter().map(compile).collect::<Result<_, _>>()?,
        })
    }

    /// True when a kernel known by any of `names` (e.g. mangled and
    /// demangled) is to be instrumented. A mangled name is also tried in
    /// its demangled form.
    pub fn admits(&self, names: &[&str]) -> bool {
        let demangled: Vec<String> = names.iter().filter_map(|n| crate::names::demangle(n)).collect();
        let all: Vec<&str> = names.iter().copied().chain(demangled.iter().map(String::as_str)).collect();
        let inc = self.include.is_empty() || all.iter().any(|n| self.include.iter().any(|r| r.is_match(n)));
        let exc = all.iter().any(|n| self.exclude.iter().any(|r| r.is_match(n)));
        inc && !exc
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_validation() {
        let c = RunConfig { kernels: vec!["^gemm".into()], sample_every: 3, ..RunConfig::default() };
        let back = RunConfig::from_json(&c.to_json(), Path::new("c.json")).expect("valid");
        assert_eq!(back, c);
        let bad = RunConfig { kernels: vec!["(".into()], ..RunConfig::default() };
        assert!(matches!(bad.validate(), Err(ConfigError::Pattern { .. })));
        let bad = RunConfig { sample_every: 0, ..RunConfig::default() };
        assert!(bad.validate().is_err());
        assert!(RunConfig::from_json("{", Path::new("c.json")).is_err());
    }

    #[test]
    fn filter_and_sampling() {
        let f = KernelFilter::new(&["gemm".into()], &["_small".into()]).expect("patterns");
        assert!(f.admits(&["_Z4gemmPf", "gemm(float*)"]));
        assert!(!f.admits(&["gemm_small"]));
        assert!(!f.admits(&["reduce"]));
        // a mangled name alone is matched in both forms
        let f = KernelFilter::new(&["^void lines_scale<float>".into()], &[]).expect("patterns");
        assert!(f.admits(&["_Z11lines_scaleIfEvPT_PKS0_S0_"]));
        assert!(!f.admits(&["_Z11lines_scaleIdEvPT_PKS0_S0_"]));
        let f = KernelFilter::new(&[], &["^app::".into()]).expect("patterns");
        assert!(!f.admits(&["_ZN3app10normalizedEPfPKfi"]));
        assert!(f.admits(&["_ZN3lib10normalizedEPfPKfi"]));
        assert_eq!(RunConfig { sample_every: 4, ..RunConfig::default() }.reported_sample_every(), 4);
        assert_eq!(RunConfig { sample_doubling: true, ..RunConfig::default() }.reported_sample_every(), 0);
        let c = RunConfig { sample_every: 4, ..RunConfig::default() };
        let sampled: Vec<u64> = (0..9).filter(|i| c.samples_launch(*i)).collect();
        assert_eq!(sampled, vec![0, 4, 8]);
        let c = RunConfig { sample_doubling: true, ..RunConfig::default() };
        let sampled: Vec<u64> = (0..100).filter(|i| c.samples_launch(*i)).collect();
        assert_eq!(sampled, vec![0, 1, 2, 3, 7, 15, 31, 63]);
    }
}
