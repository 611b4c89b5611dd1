//! Reading and writing report files: MessagePack when the name ends in
//! `.msgpack` (or, when reading, when the content is not JSON), JSON
//! otherwise. Writes go to a temporary file first and are then renamed,
//! so an interrupted write never leaves half a report.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use xfpx_common::report::Report;

/// Whether `path` names a MessagePack report.
pub fn is_msgpack(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("msgpack"))
}

/// Write `report` to `path` in the format its name asks for.
pub fn write(report: &Report, path: &Path) -> Result<()> {
    let bytes = if is_msgpack(path) {
        report.to_msgpack().with_context(|| format!("cannot encode report for {}", path.display()))?
    } else {
        let mut s = report.to_json();
        s.push('\n');
        s.into_bytes()
    };
    let tmp = temp_sibling(path);
    std::fs::write(&tmp, &bytes).with_context(|| format!("cannot write report {}", path.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write report {}", path.display())
    })
}

fn temp_sibling(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Read a report from `path`, JSON or MessagePack.
pub fn read(path: &Path) -> Result<Report> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read report {}", path.display()))?;
    parse(&bytes).with_context(|| format!("cannot read report {}", path.display()))
}

/// Parse report bytes: JSON when they start (after white space) with `{`,
/// MessagePack otherwise.
pub fn parse(bytes: &[u8]) -> Result<Report> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'{') {
        let text = std::str::from_utf8(bytes).context("report is not UTF-8")?;
        Ok(Report::from_json(text)?)
    } else {
        Ok(Report::from_msgpack(bytes)?)
    }
}

/// Fail early, before the program runs, when the report cannot be
/// written where asked.
pub fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("--report {} is a directory", path.display());
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        anyhow::bail!("cannot write report {}: directory {} does not exist", path.display(), parent.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_common::report::{Collector, ExitStatus, RunInfo};

    fn report() -> Report {
        let run = RunInfo {
            vendor: "nvidia".into(),
            device: "d".into(),
            target: None,
            command: vec!["./a".into()],
            mode: "detect".into(),
            started_unix: 0,
            finished_unix: None,
            exit: ExitStatus::Code { code: 0 },
            sample_every: 1,
            truncated: false,
            notes: vec![],
        };
        Collector::new(run, None).report()
    }

    #[test]
    fn both_formats_round_trip() {
        let dir = std::env::temp_dir().join(format!("xfpx-report-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let r = report();
        for name in ["r.json", "r.msgpack", "r.MSGPACK", "r"] {
            let p = dir.join(name);
            write(&r, &p).expect("write");
            assert_eq!(read(&p).expect("read"), r, "{name}");
        }
        assert!(read(&dir.join("missing.json")).is_err());
        std::fs::write(dir.join("bad.json"), b"{not json").expect("write");
        assert!(read(&dir.join("bad.json")).is_err());
        std::fs::write(dir.join("bad.msgpack"), [0xc1u8, 0, 1]).expect("write");
        assert!(read(&dir.join("bad.msgpack")).is_err());
        assert!(check_writable(&dir.join("ok.json")).is_ok());
        assert!(check_writable(&dir).is_err());
        assert!(check_writable(&dir.join("no/such/dir.json")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parse_never_panics_on_garbage() {
        // A cheap deterministic sweep over byte strings (xorshift).
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..400usize {
            let bytes: Vec<u8> = (0..len % 64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = parse(&bytes);
        }
        let good = report().to_msgpack().expect("encode");
        for cut in 0..good.len() {
            assert!(parse(&good[..cut]).is_err());
        }
    }
}
