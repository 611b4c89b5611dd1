//! Reading and writing report files: MessagePack when the name ends in
//! `.msgpack` (or, when reading, when the content is not JSON), JSON
//! otherwise; `-` is standard output (JSON).
//!
//! What the user named is never replaced by something else: a regular
//! file (or a new name) is replaced atomically, through a temporary file
//! created exclusively, under an unpredictable name, in the same folder;
//! a symbolic link is written through (its target replaced the same way
//! when that is a regular file); a character device or a FIFO is opened
//! and written; anything else is refused in one line. Reads are capped
//! ([`xfpx_common::limits::REPORT`]).

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use xfpx_common::limits;
use xfpx_common::report::Report;

/// Where a report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (`-`), as JSON.
    Stdout,
    /// A file, device or FIFO the user named.
    File(PathBuf),
}

impl Destination {
    /// `-` is standard output; anything else a path.
    pub fn from_arg(arg: &Path) -> Destination {
        if arg.as_os_str() == "-" {
            Destination::Stdout
        } else {
            Destination::File(arg.to_path_buf())
        }
    }

    /// The same destination with a file's path made absolute (so that it
    /// does not depend on the working directory).
    pub fn absolute(self) -> Destination {
        match self {
            Destination::File(p) => Destination::File(std::path::absolute(&p).unwrap_or(p)),
            d => d,
        }
    }
}

/// Whether `path` names a MessagePack report.
pub fn is_msgpack(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("msgpack"))
}

/// What a written file holds, for its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Report,
    HtmlPage,
}

impl FileKind {
    fn flag(self) -> &'static str {
        match self {
            FileKind::Report => "--report",
            FileKind::HtmlPage => "--html",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            FileKind::Report => "report",
            FileKind::HtmlPage => "HTML page",
        }
    }
}

/// How a path is written.
#[derive(Debug, PartialEq, Eq)]
enum How {
    /// Replace this regular file (or create it) atomically.
    Replace(PathBuf),
    /// Open it (a device or FIFO, possibly through a link) and write.
    WriteThrough,
    /// A link whose target does not exist yet: create the target through it.
    CreateThrough,
}

/// Decide how `path` is written, or refuse it.
fn how(path: &Path, kind: FileKind) -> Result<How> {
    let (flag, noun) = (kind.flag(), kind.noun());
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(How::Replace(path.to_path_buf())),
        Err(e) => return Err(e).with_context(|| format!("cannot write {noun} {shown}")),
    };
    let (meta, linked) = if meta.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(m) => (m, true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(How::CreateThrough),
            Err(e) => return Err(e).with_context(|| format!("cannot write {noun} {shown}")),
        }
    } else {
        (meta, false)
    };
    let t = meta.file_type();
    if t.is_file() {
        let real = if linked {
            std::fs::canonicalize(path).with_context(|| format!("cannot resolve the link {shown}"))?
        } else {
            path.to_path_buf()
        };
        Ok(How::Replace(real))
    } else if t.is_char_device() || t.is_fifo() {
        Ok(How::WriteThrough)
    } else if t.is_dir() {
        bail!("{flag} {shown} is a directory");
    } else {
        let what = if t.is_block_device() { "a block device" } else { "a socket" };
        bail!("{flag} {shown} is {what}: name a file, a character device or a FIFO");
    }
}

/// The folder a file is replaced in.
fn folder(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Fail early, before the program runs, when the report cannot be
/// written where asked.
pub fn check(dest: &Destination) -> Result<()> {
    match dest {
        Destination::File(path) => check_file(path, FileKind::Report),
        Destination::Stdout => Ok(()),
    }
}

/// Fail early when a file of this kind cannot be written at `path`.
pub fn check_file(path: &Path, kind: FileKind) -> Result<()> {
    let noun = kind.noun();
    if let How::Replace(real) = how(path, kind)? {
        let dir = folder(&real);
        if !dir.is_dir() {
            bail!("cannot write {noun} {}: directory {} does not exist", path.display(), dir.display());
        }
        // A real attempt: a temporary file made (and removed) where the file will go.
        tempfile::Builder::new().prefix(".xfpx-check.").tempfile_in(&dir).with_context(|| {
            format!("cannot write {noun} {}: cannot create a file in {}", path.display(), dir.display())
        })?;
    }
    Ok(())
}

/// The report's bytes in the format `dest` asks for.
fn encode(report: &Report, dest: &Destination) -> Result<Vec<u8>> {
    match dest {
        Destination::File(p) if is_msgpack(p) => {
            report.to_msgpack().with_context(|| format!("cannot encode report for {}", p.display()))
        }
        _ => {
            let mut s = report.to_json();
            s.push('\n');
            Ok(s.into_bytes())
        }
    }
}

/// Write `report` where `dest` says, in the format its name asks for.
pub fn write(report: &Report, dest: &Destination) -> Result<()> {
    let bytes = encode(report, dest)?;
    match dest {
        Destination::Stdout => crate::console::show_bytes(&bytes),
        Destination::File(path) => write_file(path, &bytes, FileKind::Report),
    }
}

/// Write `bytes` to `path` as the module's rules say (never replacing
/// what the user named by something else).
pub fn write_file(path: &Path, bytes: &[u8], kind: FileKind) -> Result<()> {
    write_through(path, bytes, kind).with_context(|| format!("cannot write {} {}", kind.noun(), path.display()))
}

fn write_through(path: &Path, bytes: &[u8], kind: FileKind) -> Result<()> {
    match how(path, kind)? {
        How::WriteThrough => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()?;
        }
        How::CreateThrough => {
            let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(path)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        How::Replace(real) => replace(&real, bytes)?,
    }
    Ok(())
}

/// Replace (or create) the regular file `path` atomically, keeping the
/// permissions of the file it replaces.
fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).ok();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Created with O_EXCL under a random name: nothing existing is opened.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o666)))
        .tempfile_in(folder(path))?;
    if let Some(mode) = mode {
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Read a report from `path`, JSON or MessagePack.
pub fn read(path: &Path) -> Result<Report> {
    let bytes = limits::read(path, limits::REPORT).with_context(|| format!("cannot read report {}", path.display()))?;
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
            sample_auto: false,
            truncated: false,
            notes: vec![],
            attached: true,
        };
        Collector::new(run, None).report()
    }

    fn file(p: &Path) -> Destination {
        Destination::File(p.to_path_buf())
    }

    #[test]
    fn both_formats_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = dir.path();
        let r = report();
        for name in ["r.json", "r.msgpack", "r.MSGPACK", "r"] {
            let p = dir.join(name);
            write(&r, &file(&p)).expect("write");
            assert_eq!(read(&p).expect("read"), r, "{name}");
        }
        assert!(read(&dir.join("missing.json")).is_err());
        std::fs::write(dir.join("bad.json"), b"{not json").expect("write");
        assert!(read(&dir.join("bad.json")).is_err());
        std::fs::write(dir.join("bad.msgpack"), [0xc1u8, 0, 1]).expect("write");
        assert!(read(&dir.join("bad.msgpack")).is_err());
        assert!(check(&file(&dir.join("ok.json"))).is_ok());
        assert!(check(&file(dir)).is_err());
        assert!(check(&file(&dir.join("no/such/dir.json"))).is_err());
        assert!(check(&Destination::Stdout).is_ok());
        let left: Vec<_> = std::fs::read_dir(dir).expect("list").flatten().map(|e| e.file_name()).collect();
        assert!(!left.iter().any(|n| n.to_string_lossy().ends_with(".tmp")), "{left:?}");
    }

    #[test]
    fn links_are_written_through_and_permissions_kept() {
        let d = tempfile::tempdir().expect("tempdir");
        let target = d.path().join("target.json");
        std::fs::write(&target, "old").expect("write");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        write(&report(), &file(&link)).expect("write");
        assert!(std::fs::symlink_metadata(&link).expect("stat").file_type().is_symlink());
        assert_eq!(read(&target).expect("read"), report());
        assert_eq!(std::fs::metadata(&target).expect("stat").permissions().mode() & 0o777, 0o640);
        let dangling = d.path().join("dangling.json");
        std::os::unix::fs::symlink(d.path().join("new.json"), &dangling).expect("symlink");
        write(&report(), &file(&dangling)).expect("write");
        assert!(std::fs::symlink_metadata(&dangling).expect("stat").file_type().is_symlink());
        assert_eq!(read(&d.path().join("new.json")).expect("read"), report());
        assert_eq!(how(Path::new("/dev/null"), FileKind::Report).expect("how"), How::WriteThrough);
        write(&report(), &file(Path::new("/dev/null"))).expect("write /dev/null");
        assert!(write(&report(), &file(Path::new("/dev/full"))).is_err());
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
