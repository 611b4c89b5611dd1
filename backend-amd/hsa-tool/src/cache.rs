//! One kernel of a code object rewritten for the run (the project's
//! rewriter, `xfpx_amd::rewrite`, with the table's address left patchable
//! and the rewrite's record in the object), kept on disk by content: the
//! key hashes the original code object, the kernel, what the rewrite
//! lowers (mode, kinds, instruction range) and the tool library's own
//! build, so a later run of the same program rewrites nothing. A kernel
//! the rewriter refuses is kept too, as its reason. With a dump folder
//! (`--dump DIR`), each rewrite's listing is written there as
//! `KERNEL.amd.txt` (the kernel is then rewritten, not read back). The
//! code of the object rewritten last is read once for all its kernels.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use xfpx_amd::rewrite::{self, Mode, ObjectCode, RewriteOptions, RewriteRecord, TableAddress};
use xfpx_common::config::{KernelFilter, RunConfig};
use xfpx_common::tool::{Detector, Screener, Tool};

/// A rewritten code object whose table is not placed yet.
#[derive(Debug, Clone)]
pub struct Rewritten {
    /// The ELF, its table's address to be written by [`RewriteRecord::place_table`].
    pub elf: Vec<u8>,
    pub record: RewriteRecord,
    /// What the user should read (a dump that could not be written).
    pub notes: Vec<String>,
}

/// What the run rewrites, and where rewrites are kept.
#[derive(Debug)]
pub struct Rewriter {
    mode: Mode,
    detector: Detector,
    /// The cache folder (none: every kernel is rewritten).
    dir: Option<PathBuf>,
    /// Identifies the build of the tool library (rewrites of another
    /// build are not reused).
    build: String,
    /// Where each rewrite's listing goes (`--dump`).
    dump: Option<PathBuf>,
    /// The code object read last (by its digest) and its reading: the
    /// kernels of one object are rewritten one at a time, each at its
    /// first launch, and the object's code is read once for them all.
    read: Mutex<Option<([u8; 32], Arc<ObjectCode>)>>,
}

impl Rewriter {
    /// The rewriter of `config` in `mode` (detect or screen), keeping its
    /// rewrites in `dir`; `build` identifies the library doing it.
    pub fn new(config: &RunConfig, mode: Mode, dir: Option<PathBuf>, build: String) -> Rewriter {
        let detector =
            Detector { kinds: config.kinds, instr_range: config.instr_range.map(|(a, b)| a..b), ..Detector::default() };
        Rewriter { mode, detector, dir, build, dump: config.dump_dir.clone(), read: Mutex::new(None) }
    }

    /// The cache key of `kernel` of the code object whose SHA-256 is `digest`.
    fn key(&self, digest: &[u8; 32], kernel: &str) -> String {
        let mut h = Sha256::new();
        for part in [
            self.build.as_bytes(),
            &rewrite::record::RECORD_FORMAT.to_le_bytes(),
            self.mode.name().as_bytes(),
            &[self.detector.kinds.0],
            format!("{:?}", self.detector.instr_range).as_bytes(),
            kernel.as_bytes(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.update(digest);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `kernel` of `elf` (whose SHA-256 is `digest`) rewritten (from the
    /// cache where it was before), or why it cannot be. `Ok` says nothing
    /// of the kernel's own state: the record does (instrumented, partial,
    /// skipped).
    pub fn rewrite(&self, elf: &[u8], digest: &[u8; 32], kernel: &str) -> Result<Rewritten, String> {
        let key = self.key(digest, kernel);
        if let Some(hit) = self.dir.as_deref().filter(|_| self.dump.is_none()).and_then(|d| cached(d, &key, kernel)) {
            return hit;
        }
        let made = self.rewrite_now(elf, digest, kernel);
        if let Some(dir) = &self.dir {
            match &made {
                Ok(r) => store(dir, &format!("{key}.co"), &r.elf),
                Err(reason) => store(dir, &format!("{key}.refused"), reason.as_bytes()),
            }
        }
        made
    }

    /// The reading of the code object `elf` (digest `digest`): the one
    /// kept when it is the object read last.
    fn object(&self, elf: &[u8], digest: &[u8; 32]) -> Result<Arc<ObjectCode>, String> {
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, object)) = read.as_ref().filter(|(d, _)| d == digest) {
            return Ok(object.clone());
        }
        let object = Arc::new(ObjectCode::read(elf).map_err(|e| e.to_string())?);
        *read = Some((*digest, object.clone()));
        Ok(object)
    }

    fn rewrite_now(&self, elf: &[u8], digest: &[u8; 32], kernel: &str) -> Result<Rewritten, String> {
        let opts = RewriteOptions {
            mode: self.mode,
            kernels: KernelFilter::exactly(kernel),
            table: TableAddress::Patchable,
            ..Default::default()
        };
        let tool: &dyn Tool = match self.mode {
            Mode::Screen => &Screener,
            _ => &self.detector,
        };
        let object = self.object(elf, digest)?;
        let prepared = rewrite::prepare_known(&object, &opts, tool).map_err(|e| e.to_string())?;
        let record = prepared.record().clone();
        // a patchable table: its address is written when the copy is placed
        let out = prepared.emit(0).map_err(|e| e.to_string())?;
        let mut notes = Vec::new();
        if let Some(dir) = &self.dump {
            let file = dir.join(format!("{}.amd.txt", xfpx_common::names::file_stem(kernel)));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&file, out.to_text())) {
                notes.push(format!("cannot write dump {}: {e}", file.display()));
            }
        }
        Ok(Rewritten { elf: out.bytes, record, notes })
    }
}

/// A rewrite kept under `key`, if one is there and reads back for `kernel`.
fn cached(dir: &Path, key: &str, kernel: &str) -> Option<Result<Rewritten, String>> {
    if let Ok(reason) = std::fs::read_to_string(dir.join(format!("{key}.refused"))) {
        return Some(Err(reason));
    }
    let elf = xfpx_common::limits::read(&dir.join(format!("{key}.co")), xfpx_common::limits::CODE_OBJECT).ok()?;
    let record = RewriteRecord::read(&elf).ok()??;
    record.kernels.iter().any(|k| k.name == kernel).then_some(Ok(Rewritten { elf, record, notes: Vec::new() }))
}

/// Writes a cache file whole or not at all (a failure only costs a later
/// rewrite).
fn store(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    let done = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&tmp, bytes))
        .and_then(|_| std::fs::rename(&tmp, dir.join(name)));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use xfpx_common::config::RunSettings;

    fn digest(elf: &[u8]) -> [u8; 32] {
        Sha256::digest(elf).into()
    }

    fn fixture() -> Vec<u8> {
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/demo/exceptions.gfx942.co")).unwrap()
    }

    #[test]
    fn an_object_is_read_once_for_all_its_kernels() {
        let config = RunSettings::default().check().unwrap();
        let elf = fixture();
        let names: Vec<String> =
            xfpx_amd::CodeObject::parse(&elf).unwrap().kernels.iter().map(|k| k.name.clone()).collect();
        assert!(names.len() >= 2, "{names:?}");
        let r = Rewriter::new(&config, Mode::Detect, None, "test".into());
        let first = r.rewrite(&elf, &digest(&elf), &names[0]).unwrap();
        let reading = r.read.lock().unwrap().as_ref().map(|(_, o)| Arc::as_ptr(o)).unwrap();
        let second = r.rewrite(&elf, &digest(&elf), &names[1]).unwrap();
        assert_eq!(r.read.lock().unwrap().as_ref().map(|(_, o)| Arc::as_ptr(o)), Some(reading), "read once");
        assert!(second.record.kernels.iter().any(|k| k.name == names[1]));
        assert_ne!(first.elf, second.elf);
        // each is what a rewrite reading the object again makes
        let fresh = Rewriter::new(&config, Mode::Detect, None, "test".into());
        assert_eq!(fresh.rewrite(&elf, &digest(&elf), &names[1]).unwrap().elf, second.elf);
    }

    #[test]
    fn rewrites_are_kept_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let config = RunSettings::default().check().unwrap();
        let elf = fixture();
        let kernel = xfpx_amd::CodeObject::parse(&elf).unwrap().kernels[0].name.clone();
        let r = Rewriter::new(&config, Mode::Detect, Some(dir.path().to_path_buf()), "test".into());
        let first = r.rewrite(&elf, &digest(&elf), &kernel).unwrap();
        assert!(first.record.kernels.iter().any(|k| k.name == kernel));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // the same content is read back, not rewritten
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        let again = r.rewrite(&elf, &digest(&elf), &kernel).unwrap();
        assert_eq!(again.elf, first.elf);
        assert_eq!(std::fs::read(&file).unwrap(), first.elf);
        // another mode or build is another key
        let screen = Rewriter::new(&config, Mode::Screen, Some(dir.path().to_path_buf()), "test".into());
        let id = digest(&elf);
        assert_ne!(screen.key(&id, &kernel), r.key(&id, &kernel));
        let other = Rewriter::new(&config, Mode::Detect, Some(dir.path().to_path_buf()), "other".into());
        assert_ne!(other.key(&id, &kernel), r.key(&id, &kernel));
        // a damaged cache file is rewritten, not trusted
        std::fs::write(&file, b"not an ELF").unwrap();
        assert_eq!(r.rewrite(&elf, &digest(&elf), &kernel).unwrap().elf, first.elf);
    }

    #[test]
    fn refusals_are_kept_too() {
        let dir = tempfile::tempdir().unwrap();
        let config = RunSettings::default().check().unwrap();
        let r = Rewriter::new(&config, Mode::Detect, Some(dir.path().to_path_buf()), "test".into());
        let bad = b"\x7fELF but not a code object";
        let e = r.rewrite(bad, &digest(bad), "k").unwrap_err();
        assert!(!e.is_empty() && !e.contains('\n'), "{e}");
        assert_eq!(r.rewrite(bad, &digest(bad), "k").unwrap_err(), e);
        assert!(std::fs::read_dir(dir.path()).unwrap().any(|f| f.unwrap().path().extension().unwrap() == "refused"));
    }
}
