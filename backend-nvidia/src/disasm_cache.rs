//! A cache of NVBit's disassembler calls across runs.
//!
//! NVBit disassembles every function it instruments by running `nvdisasm`
//! on the function's code, one process per function; on the H100 each run
//! takes 0.35-0.5 s, almost all of it `nvdisasm` starting up, whatever the
//! size of the function. A program's kernels are the same from one run to
//! the next, so the tool gives NVBit a small wrapper script instead: it
//! keys each call by the bytes disassembled, the options and the
//! disassembler it stands for, answers from the cache when it can, and
//! otherwise runs the real `nvdisasm` and keeps its output. While one call
//! disassembles some bytes (a `.<key>.busy` folder marks it), a second call
//! for the same bytes waits for that answer instead of starting its own
//! disassembler: [`crate::prefill`] disassembles a program's functions
//! ahead, in parallel, and NVBit's call for one still in progress waits
//! for it. A mark older than a minute is stale (a killed call) and removed.
//! [`DisasmCache::claim`] and [`DisasmCache::store`] let the prefill file
//! answers itself (from one disassembler run over many functions) under
//! the same keys and marks, as the wrapper would.
//!
//! A call the cache can answer need not start the script's processes:
//! `xfpx setup nvidia` also builds a small program,
//! [`HELPER_FILE_NAME`], beside the tool library, which computes the same
//! key and writes a cached answer out by itself, handing every other call
//! to the script ([`DisasmCache::helper_env`] says where things are).
//!
//! The run configuration's `tools.disassembly_cache` (environment variable
//! `XFPX_NVDISASM_CACHE`) names the cache folder (default
//! `$XDG_CACHE_HOME/xfpx/nvdisasm`, else `~/.cache/xfpx/nvdisasm`) or turns
//! the cache off. The disassembler is `NVDISASM` when set (as NVBit itself
//! reads it), else `nvdisasm` on `PATH`.

use std::path::{Path, PathBuf};
use xfpx_common::config::CacheFolder;

/// Where the cache lives and which disassembler it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisasmCache {
    pub dir: PathBuf,
    pub real: PathBuf,
}

impl DisasmCache {
    /// The cache `setting` asks for, the default folder and the
    /// disassembler found through the system's variables (`var` reads one:
    /// `XDG_CACHE_HOME`, `HOME`, `NVDISASM`, `PATH`); `None` when it is
    /// turned off, no folder can be named, or no disassembler is found.
    pub fn resolve(setting: &CacheFolder, var: impl Fn(&str) -> Option<String>) -> Option<DisasmCache> {
        let dir = setting.resolve("nvdisasm", &var)?;
        let real = match var("NVDISASM").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => find_on_path("nvdisasm", &var("PATH")?)?,
        };
        Some(DisasmCache { dir, real })
    }

    /// Write the wrapper script into the cache folder (created if
    /// needed) and return its path. Paths that cannot be quoted for the
    /// shell are refused.
    pub fn write_wrapper(&self) -> Result<PathBuf, String> {
        let quote = |p: &Path| -> Result<String, String> {
            let s = p.to_str().ok_or_else(|| format!("{} is not UTF-8", p.display()))?;
            if s.contains('\'') || s.contains('\n') {
                return Err(format!("{s} cannot be quoted for the shell"));
            }
            Ok(format!("'{s}'"))
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let tag = self.tag()?;
        let script = format!(
            "#!/bin/sh\n\
             # xfpx: NVBit's disassembler calls, answered from a cache keyed by the bytes disassembled\n\
             real={real}\n\
             dir={dir}\n\
             tag={tag}\n\
             n=$#; i=0; opts=''; file=''\n\
             for a in \"$@\"; do i=$((i+1)); if [ \"$i\" -lt \"$n\" ]; then opts=\"$opts $a\"; else file=$a; fi; done\n\
             key=''\n\
             if [ -f \"$file\" ]; then key=$( (printf '%s|%s|' \"$tag\" \"$opts\"; cat -- \"$file\") | sha256sum 2>/dev/null | cut -c1-64); fi\n\
             if [ \"${{#key}}\" -eq 64 ]; then\n\
             \x20 if [ -s \"$dir/$key\" ]; then exec cat -- \"$dir/$key\"; fi\n\
             \x20 busy=\"$dir/.$key.busy\"\n\
             \x20 if [ -d \"$busy\" ] && [ -n \"$(find \"$busy\" -maxdepth 0 -mmin +{stale} 2>/dev/null)\" ]; then rmdir -- \"$busy\" 2>/dev/null; fi\n\
             \x20 if mkdir -- \"$busy\" 2>/dev/null; then\n\
             \x20   tmp=\"$dir/.$key.$$\"\n\
             \x20   trap 'rm -f -- \"$tmp\"; rmdir -- \"$busy\" 2>/dev/null; exit 1' HUP INT TERM\n\
             \x20   if \"$real\" \"$@\" > \"$tmp\" 2>/dev/null && [ -s \"$tmp\" ] && mv -f -- \"$tmp\" \"$dir/$key\"; then rmdir -- \"$busy\"; exec cat -- \"$dir/$key\"; fi\n\
             \x20   rm -f -- \"$tmp\"; rmdir -- \"$busy\" 2>/dev/null; trap - HUP INT TERM\n\
             \x20 else\n\
             \x20   w=0\n\
             \x20   while [ -d \"$busy\" ] && [ \"$w\" -lt 3000 ]; do sleep 0.01; w=$((w+1)); done\n\
             \x20   if [ -s \"$dir/$key\" ]; then exec cat -- \"$dir/$key\"; fi\n\
             \x20 fi\n\
             fi\n\
             exec \"$real\" \"$@\"\n",
            real = quote(&self.real)?,
            dir = quote(&self.dir)?,
            tag = quote(Path::new(&tag))?,
            stale = STALE_MARK_MINUTES,
        );
        // one script per disassembler, written atomically
        let name = format!("nvdisasm-{:016x}.sh", fnv1a(script.as_bytes()));
        let path = self.dir.join(&name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(script.as_str()) {
            let tmp = self.dir.join(format!(".{name}.{}", std::process::id()));
            std::fs::write(&tmp, &script).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
                .and_then(|_| std::fs::rename(&tmp, &path))
                .map_err(|e| format!("cannot install {}: {e}", path.display()))?;
        }
        Ok(path)
    }
}

/// File name of the helper that answers cached calls alone (built from
/// `xfpx_disasm_cache.c` beside the tool library).
pub const HELPER_FILE_NAME: &str = "xfpx-nvdisasm-cache";
/// The helper's settings, read from its environment: the cache folder,
/// the disassembler's tag ([`DisasmCache::tag`]) and the wrapper script
/// every call it does not answer goes to.
pub const HELPER_DIR_ENV: &str = "XFPX_DISASM_CACHE_DIR";
pub const HELPER_TAG_ENV: &str = "XFPX_DISASM_CACHE_TAG";
pub const HELPER_SCRIPT_ENV: &str = "XFPX_DISASM_CACHE_SCRIPT";

impl DisasmCache {
    /// The environment the helper needs to stand for this cache, whose
    /// wrapper script is `script` ([`DisasmCache::write_wrapper`]).
    pub fn helper_env(&self, script: &Path) -> Result<[(&'static str, String); 3], String> {
        let text = |p: &Path| p.to_str().map(str::to_string).ok_or_else(|| format!("{} is not UTF-8", p.display()));
        Ok([(HELPER_DIR_ENV, text(&self.dir)?), (HELPER_TAG_ENV, self.tag()?), (HELPER_SCRIPT_ENV, text(script)?)])
    }
}

/// Minutes after which a busy mark is taken for a killed call's and removed.
const STALE_MARK_MINUTES: u64 = 1;

/// What [`DisasmCache::claim`] found for some bytes.
#[derive(Debug)]
pub enum Claim {
    /// The answer is in the cache.
    Cached,
    /// Another call is disassembling them now.
    Busy,
    /// Ours to disassemble: the mark is removed when this is dropped.
    Mine(BusyMark),
}

/// A `.<key>.busy` mark this process holds.
#[derive(Debug)]
pub struct BusyMark(PathBuf);

impl Drop for BusyMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

impl DisasmCache {
    /// The disassembler's identity, part of every key: its path, size and
    /// modification time (another disassembler, other answers).
    pub fn tag(&self) -> Result<String, String> {
        let meta = std::fs::metadata(&self.real).map_err(|e| format!("{}: {e}", self.real.display()))?;
        let mtime =
            meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs());
        Ok(format!("{}:{}:{}", self.real.display(), meta.len(), mtime))
    }

    /// The key the wrapper files a call under: the SHA-256 of the tag, the
    /// options (each after a space) and the bytes disassembled.
    pub fn key(tag: &str, options: &[String], code: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(tag.as_bytes());
        h.update(b"|");
        for o in options {
            h.update(b" ");
            h.update(o.as_bytes());
        }
        h.update(b"|");
        h.update(code);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether the answer for `key` is cached.
    pub fn holds(&self, key: &str) -> bool {
        std::fs::metadata(self.dir.join(key)).is_ok_and(|m| m.len() > 0)
    }

    /// The answer filed under `key`, if there is one.
    pub fn answer(&self, key: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(key)).ok().filter(|a| !a.is_empty())
    }

    /// Whether the answer for `key` is cached, being made, or ours to make
    /// (a stale mark is removed first, as the wrapper does).
    pub fn claim(&self, key: &str) -> Claim {
        if self.holds(key) {
            return Claim::Cached;
        }
        let busy = self.dir.join(format!(".{key}.busy"));
        let stale = std::time::Duration::from_secs(60 * STALE_MARK_MINUTES);
        if std::fs::metadata(&busy).and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|a| a > stale)) {
            let _ = std::fs::remove_dir(&busy);
        }
        match std::fs::create_dir(&busy) {
            Ok(()) => Claim::Mine(BusyMark(busy)),
            Err(_) => Claim::Busy,
        }
    }

    /// File `answer` under `key`: written to a private temporary file and
    /// renamed into place, so a reader sees all of it or nothing.
    pub fn store(&self, key: &str, answer: &[u8]) -> std::io::Result<()> {
        static STORED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STORED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self.dir.join(format!(".{key}.p{}-{n}", std::process::id()));
        let written = std::fs::write(&tmp, answer).and_then(|()| std::fs::rename(&tmp, self.dir.join(key)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// The first file named `name` in the folders of a `PATH`-style list.
pub fn find_on_path(name: &str, path: impl AsRef<std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// FNV-1a, for a stable file name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xfpx-disasm-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }

    #[test]
    fn the_setting_and_the_system_name_the_cache() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let default = CacheFolder::Default;
        let c =
            DisasmCache::resolve(&default, env(&[("HOME", "/h"), ("NVDISASM", "/cuda/bin/nvdisasm")])).expect("cache");
        assert_eq!(c, DisasmCache { dir: "/h/.cache/xfpx/nvdisasm".into(), real: "/cuda/bin/nvdisasm".into() });
        let c = DisasmCache::resolve(&default, env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h"), ("NVDISASM", "/n")]))
            .expect("cache");
        assert_eq!(c.dir, PathBuf::from("/x/xfpx/nvdisasm"));
        let c = DisasmCache::resolve(&CacheFolder::At("/c".into()), env(&[("NVDISASM", "/n")])).expect("cache");
        assert_eq!(c.dir, PathBuf::from("/c"));
        assert_eq!(DisasmCache::resolve(&CacheFolder::Off, env(&[("HOME", "/h"), ("NVDISASM", "/n")])), None);
        // no disassembler anywhere
        assert_eq!(DisasmCache::resolve(&default, env(&[("HOME", "/h"), ("PATH", "/nonexistent")])), None);
    }

    #[test]
    fn the_wrapper_answers_repeated_calls_from_the_cache() {
        let dir = temp("wrap");
        let marks = dir.join("marks");
        // a fake disassembler: leaves a mark, prints what it was given
        let real = dir.join("nvdisasm");
        std::fs::write(&real, format!("#!/bin/sh\necho run >> '{}'\necho \"$1 $2\"; cat \"$3\"\n", marks.display()))
            .expect("write");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let cache = DisasmCache { dir: dir.join("cache"), real: real.clone() };
        let wrapper = cache.write_wrapper().expect("wrapper");
        assert_eq!(cache.write_wrapper().expect("again"), wrapper, "one script per disassembler");
        let code = dir.join("raw.bin");
        let call = |arch: &str| {
            let out = Command::new(&wrapper).args(["-b", arch, code.to_str().expect("utf-8")]).output().expect("runs");
            assert!(out.status.success());
            String::from_utf8(out.stdout).expect("text")
        };
        let runs = || std::fs::read_to_string(&marks).map_or(0, |t| t.lines().count());
        std::fs::write(&code, b"FADD R1").expect("write");
        assert_eq!(call("SM90"), "-b SM90\nFADD R1");
        assert_eq!(call("SM90"), "-b SM90\nFADD R1");
        assert_eq!(runs(), 1, "the second call came from the cache");
        assert_eq!(call("SM80"), "-b SM80\nFADD R1");
        assert_eq!(runs(), 2, "other options, another entry");
        std::fs::write(&code, b"FMUL R2").expect("write");
        assert_eq!(call("SM90"), "-b SM90\nFMUL R2");
        assert_eq!(runs(), 3, "other bytes, another entry");
        // a failing disassembler fails through the wrapper too
        std::fs::write(&real, "#!/bin/sh\necho broken >&2\nexit 3\n").expect("write");
        let broken = DisasmCache { dir: dir.join("cache2"), real }.write_wrapper().expect("wrapper");
        let out = Command::new(&broken).args(["-b", "SM90", code.to_str().expect("utf-8")]).output().expect("runs");
        assert_eq!(out.status.code(), Some(3));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Processes of one node (MPI ranks) asking for the same bytes at once:
    /// one disassembler run, every caller gets the whole answer, and the
    /// cache holds it once with no leftovers.
    #[test]
    fn concurrent_callers_share_one_disassembler_run() {
        let dir = temp("concurrent");
        let marks = dir.join("marks");
        let real = dir.join("nvdisasm");
        // slow enough that every caller arrives while the first still runs;
        // a long answer, so a torn read would show
        std::fs::write(
            &real,
            format!(
                "#!/bin/sh\necho run >> '{}'\nsleep 0.5\nseq 2000 | sed \"s/$/ $(cat \"$3\")/\"\n",
                marks.display()
            ),
        )
        .expect("write");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let cache = DisasmCache { dir: dir.join("cache"), real };
        let wrapper = cache.write_wrapper().expect("wrapper");
        let code = dir.join("raw.bin");
        std::fs::write(&code, b"FFMA R1").expect("write");
        let callers: Vec<_> = (0..8)
            .map(|_| {
                Command::new(&wrapper)
                    .args(["-b", "SM90"])
                    .arg(&code)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let outputs: Vec<String> = callers
            .into_iter()
            .map(|c| {
                let out = c.wait_with_output().expect("wait");
                assert!(out.status.success());
                String::from_utf8(out.stdout).expect("text")
            })
            .collect();
        assert_eq!(outputs[0].lines().count(), 2000);
        assert!(outputs.iter().all(|o| *o == outputs[0]), "every caller got the same, whole answer");
        assert_eq!(std::fs::read_to_string(&marks).expect("marks").lines().count(), 1, "one disassembler run");
        let names: Vec<String> = std::fs::read_dir(&cache.dir)
            .expect("cache")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.iter().filter(|n| n.starts_with('.')).count(),
            0,
            "no busy mark or partial file left: {names:?}"
        );
        assert_eq!(names.len(), 2, "the wrapper and one answer: {names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An answer filed by [`DisasmCache::store`] under [`DisasmCache::key`]
    /// is the one the wrapper finds for the same call: the key is computed
    /// alike on both sides.
    #[test]
    fn answers_stored_here_are_found_by_the_wrapper() {
        let dir = temp("store");
        let marks = dir.join("marks");
        let real = dir.join("nvdisasm");
        std::fs::write(&real, format!("#!/bin/sh\necho run >> '{}'\necho real\n", marks.display())).expect("write");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let cache = DisasmCache { dir: dir.join("cache"), real };
        let wrapper = cache.write_wrapper().expect("wrapper");
        let code = dir.join("raw.bin");
        std::fs::write(&code, b"\x00\x01FFMA R1|x").expect("write");
        let options = ["-b".to_string(), "SM90".to_string()];
        let key = DisasmCache::key(&cache.tag().expect("tag"), &options, b"\x00\x01FFMA R1|x");
        let Claim::Mine(mark) = cache.claim(&key) else { panic!("the bytes were free") };
        assert!(matches!(cache.claim(&key), Claim::Busy), "a second claim while the first holds the mark");
        cache.store(&key, b"stored answer\n").expect("store");
        drop(mark);
        assert!(matches!(cache.claim(&key), Claim::Cached));
        let out = Command::new(&wrapper).args(&options).arg(&code).output().expect("runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "stored answer\n");
        assert!(!marks.exists(), "the disassembler did not run");
        // other options: another key, the disassembler runs
        let out = Command::new(&wrapper).args(["-b", "SM80"]).arg(&code).output().expect("runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "real\n");
        let names: Vec<String> = std::fs::read_dir(&cache.dir)
            .expect("cache")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unquotable_paths_are_refused() {
        let dir = temp("quote");
        let c = DisasmCache { dir: dir.join("it's"), real: "/bin/sh".into() };
        assert!(c.write_wrapper().is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
