//! A campaign's results: one JSON line per finished run, appended and
//! flushed to disk as each run ends (a killed campaign loses no finished
//! run; a line cut short by the kill is dropped on restart), then sorted
//! into `results.jsonl` and `results.csv`. Shards of a Slurm job array
//! write their own line files, which `merge` combines the same way.

use super::classify::Outcome;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use xfpx_common::fault::{ErrorModel, FaultSpec};

/// One finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Index of the fault in the campaign's list.
    pub id: u32,
    pub model: ErrorModel,
    pub outcome: Outcome,
    /// Why (for DUE and SDC), e.g. `killed by SIGSEGV`, `out.bin differs`.
    pub detail: String,
    /// Dynamic instances the fault corrupted, from the run's report (`null`: not recorded).
    pub activations: Option<u64>,
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    pub seconds: f64,
    pub fault: FaultSpec,
}

/// Lines appended by the workers of one process.
#[derive(Debug)]
pub struct Journal {
    file: Mutex<File>,
}

/// The results in a line file, by id, after dropping a last line a kill cut
/// short (the file is truncated to its whole lines).
pub fn load(path: &Path) -> Result<BTreeMap<u32, RunResult>> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read(path) else { return Ok(out) };
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        let f = OpenOptions::new().write(true).open(path).with_context(|| format!("cannot open {}", path.display()))?;
        f.set_len(whole as u64).with_context(|| format!("cannot truncate {}", path.display()))?;
    }
    for (n, line) in text[..whole].split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let r: RunResult = serde_json::from_slice(line)
            .with_context(|| format!("{} line {}: not a campaign result", path.display(), n + 1))?;
        out.entry(r.id).or_insert(r);
    }
    Ok(out)
}

impl Journal {
    pub fn open(path: &Path) -> Result<Journal> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Journal { file: Mutex::new(file) })
    }

    /// Append one result, on disk before this returns.
    pub fn append(&self, r: &RunResult) -> Result<()> {
        let mut line = serde_json::to_string(r)?;
        line.push('\n');
        let mut f = self.file.lock().map_err(|_| anyhow::anyhow!("results journal poisoned"))?;
        f.write_all(line.as_bytes()).context("cannot append a result")?;
        f.sync_data().context("cannot flush a result")?;
        Ok(())
    }
}

/// Write `path` whole through a temporary file and a rename.
fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Write the results sorted by id as `results.jsonl` and `results.csv` in `dir`.
pub fn write_sorted(dir: &Path, results: &BTreeMap<u32, RunResult>) -> Result<()> {
    let mut jsonl = String::new();
    let mut csv = String::from("id,model,outcome,detail,activations,exit_status,signal,seconds,fault\n");
    for r in results.values() {
        jsonl.push_str(&serde_json::to_string(r)?);
        jsonl.push('\n');
        let opt = |v: Option<String>| v.unwrap_or_default();
        let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{:.3},{}\n",
            r.id,
            r.model,
            r.outcome.name(),
            quoted(&r.detail),
            opt(r.activations.map(|a| a.to_string())),
            opt(r.exit_status.map(|a| a.to_string())),
            opt(r.signal.map(|a| a.to_string())),
            r.seconds,
            quoted(&r.fault.to_string())
        ));
    }
    replace(&dir.join("results.jsonl"), jsonl.as_bytes())?;
    replace(&dir.join("results.csv"), csv.as_bytes())
}

/// The line files of a campaign directory: its own journal and every shard's.
pub fn line_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = vec![dir.join("results.jsonl")];
    if let Ok(entries) = std::fs::read_dir(dir.join("shards")) {
        let mut shards: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        shards.sort();
        files.extend(shards);
    }
    Ok(files)
}

/// Every result found in `dir`'s line files, by id.
pub fn gather(dir: &Path) -> Result<BTreeMap<u32, RunResult>> {
    let mut all = BTreeMap::new();
    for f in line_files(dir)? {
        for (id, r) in load(&f)? {
            all.entry(id).or_insert(r);
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::fault::FaultLocation;

    fn result(id: u32) -> RunResult {
        RunResult {
            id,
            model: ErrorModel::Ivoc,
            outcome: Outcome::Due,
            detail: "killed by \"SIGSEGV\"".into(),
            activations: Some(1),
            exit_status: None,
            signal: Some(11),
            seconds: 0.5,
            fault: FaultSpec { model: ErrorModel::Ivoc, params: Default::default(), location: FaultLocation::sm(0) },
        }
    }

    #[test]
    fn a_line_cut_short_is_dropped_and_whole_lines_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("results.jsonl");
        let j = Journal::open(&path).expect("open");
        j.append(&result(3)).expect("append");
        j.append(&result(1)).expect("append");
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"id\":7,\"mod").expect("torn");
        drop(f);
        let got = load(&path).expect("loads");
        assert_eq!(got.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
        // appending after the restart gives whole lines again
        Journal::open(&path).expect("open").append(&result(7)).expect("append");
        assert_eq!(load(&path).expect("loads").len(), 3);
        write_sorted(dir.path(), &load(&path).expect("loads")).expect("writes");
        let csv = std::fs::read_to_string(dir.path().join("results.csv")).expect("csv");
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.lines().nth(1).expect("row").starts_with("1,IVOC,DUE,\"killed by \"\"SIGSEGV\"\"\",1,,11,0.500,"));
    }
}
