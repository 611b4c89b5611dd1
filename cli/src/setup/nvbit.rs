//! The NVBit release xfpx is built with, pinned here and nowhere else:
//! its version, the upstream tarball and the SHA-256 of its `libnvbit.a`
//! (the code that is linked into the tool). A tarball or folder the user
//! gives, or the tarball downloaded where the machine is online, is
//! checked against the pin before anything is built with it.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_nvidia::disasm_cache::find_on_path;

use super::toolkit::last_line;

macro_rules! pinned_version {
    () => {
        "1.7.7.1"
    };
}

/// The NVBit release xfpx is built with.
pub const VERSION: &str = pinned_version!();
/// Its upstream tarball.
pub const TARBALL: &str = concat!("nvbit-Linux-x86_64-", pinned_version!(), ".tar.bz2");
/// Where the tarball is downloaded from.
pub const URL: &str = concat!(
    "https://github.com/NVlabs/NVBit/releases/download/v",
    pinned_version!(),
    "/nvbit-Linux-x86_64-",
    pinned_version!(),
    ".tar.bz2"
);
/// SHA-256 of the release's `core/libnvbit.a`.
pub const LIBNVBIT_SHA256: &str = "c21caaae0ec8fa5c5ead55f28179c76bdf6b663bfbf0ce403ec6d2f9500ea124";

/// Test hook, honoured only by debug builds: the SHA-256 expected of
/// `libnvbit.a`, so that the end-to-end tests can build with a stand-in
/// NVBit where the real one is absent. Release builds always use the pin.
const TEST_SHA256_ENV: &str = "XFPX_TEST_LIBNVBIT_SHA256";

fn expected_sha256() -> String {
    match std::env::var(TEST_SHA256_ENV) {
        Ok(v) if cfg!(debug_assertions) => v,
        _ => LIBNVBIT_SHA256.to_string(),
    }
}

/// How to get the pinned release, for messages.
fn how_to_get() -> String {
    format!("(get {TARBALL} from https://github.com/NVlabs/NVBit/releases and pass --nvbit FILE)")
}

/// A checked NVBit core folder (`nvbit.h`, `nvbit_tool.h`, `libnvbit.a`),
/// with the temporary folder it was unpacked into, if any.
#[derive(Debug)]
pub struct Core {
    pub dir: PathBuf,
    _unpacked: Option<tempfile::TempDir>,
}

/// The core of a tarball or folder the user named, checked.
pub fn from_path(given: &Path) -> Result<Core, String> {
    if given.is_dir() {
        let dir = find_core(given)
            .ok_or_else(|| format!("no NVBit core (nvbit.h and libnvbit.a) in {} {}", given.display(), how_to_get()))?;
        verify(&dir, &dir.display().to_string())?;
        return Ok(Core { dir, _unpacked: None });
    }
    if !given.is_file() {
        return Err(format!("--nvbit {}: no such file or folder", given.display()));
    }
    let tmp = tempfile::Builder::new()
        .prefix("xfpx-nvbit-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    unpack(given, tmp.path())?;
    let dir = find_core(tmp.path()).ok_or_else(|| {
        format!("{} holds no NVBit core (core/nvbit.h and core/libnvbit.a) {}", given.display(), how_to_get())
    })?;
    verify(&dir, &format!("{}:{}", given.display(), strip(&dir, tmp.path())))?;
    Ok(Core { dir, _unpacked: Some(tmp) })
}

/// Download the pinned tarball into `dir` with curl or wget.
pub fn download(dir: &Path, path_var: &std::ffi::OsStr) -> Result<PathBuf, String> {
    let file = dir.join(TARBALL);
    let mut cmd = if let Some(curl) = find_on_path("curl", path_var) {
        let mut c = Command::new(curl);
        c.args(["-fsSL", "--connect-timeout", "20", "--retry", "2", "-o"]).arg(&file).arg(URL);
        c
    } else if let Some(wget) = find_on_path("wget", path_var) {
        let mut c = Command::new(wget);
        c.args(["-q", "--timeout=20", "-O"]).arg(&file).arg(URL);
        c
    } else {
        return Err(format!(
            "NVBit {VERSION} not given with --nvbit, and neither curl nor wget is here to download it {}",
            how_to_get()
        ));
    };
    let out = cmd.output().map_err(|e| format!("cannot run the download of NVBit: {e}"))?;
    if !out.status.success() || !file.is_file() {
        return Err(format!(
            "NVBit {VERSION} not given with --nvbit, and its download from {URL} failed: {} {}",
            last_line(&out.stderr, &out.stdout),
            how_to_get()
        ));
    }
    Ok(file)
}

/// Unpack a tarball with the system's `tar` (which picks the compression).
fn unpack(tarball: &Path, into: &Path) -> Result<(), String> {
    let name = tarball.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let known = [".tar.bz2", ".tbz2", ".tar.gz", ".tgz", ".tar.xz", ".tar"];
    if !known.iter().any(|k| name.ends_with(k)) {
        return Err(format!(
            "--nvbit {} is not a tarball (.tar.bz2, .tar.gz, .tar.xz) nor a folder {}",
            tarball.display(),
            how_to_get()
        ));
    }
    let out = Command::new("tar").arg("-xf").arg(tarball).arg("-C").arg(into).output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("tar not on PATH (needed to unpack {})", tarball.display()),
        _ => format!("cannot run tar to unpack {}: {e}", tarball.display()),
    })?;
    if !out.status.success() {
        return Err(format!("cannot unpack {} with tar: {}", tarball.display(), last_line(&out.stderr, &out.stdout)));
    }
    Ok(())
}

/// The NVBit core in `dir`: `dir` itself, `dir/core`, or `dir/*/core`
/// (the release unpacks to `nvbit_release_x86_64/core`).
fn find_core(dir: &Path) -> Option<PathBuf> {
    let is_core = |d: &Path| d.join("nvbit.h").is_file() && d.join("libnvbit.a").is_file();
    if is_core(dir) {
        return Some(dir.to_path_buf());
    }
    if is_core(&dir.join("core")) {
        return Some(dir.join("core"));
    }
    let mut subdirs: Vec<PathBuf> =
        std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    subdirs.sort();
    subdirs.into_iter().map(|d| d.join("core")).find(|c| is_core(c))
}

/// The version in `nvbit.h` and the checksum of `libnvbit.a` against the
/// pin; `shown` names the core folder in messages.
fn verify(core: &Path, shown: &str) -> Result<(), String> {
    let header = std::fs::read_to_string(core.join("nvbit.h"))
        .map_err(|e| format!("cannot read {}: {e}", core.join("nvbit.h").display()))?;
    match header_version(&header) {
        Some(v) if v == VERSION => {}
        Some(v) => {
            return Err(format!("NVBit {v} found in {shown}, xfpx is built with NVBit {VERSION} {}", how_to_get()))
        }
        None => {
            return Err(format!(
                "{shown}/nvbit.h names no NVBIT_VERSION, xfpx is built with NVBit {VERSION} {}",
                how_to_get()
            ))
        }
    }
    let lib = core.join("libnvbit.a");
    let sum = sha256_file(&lib)?;
    let expected = expected_sha256();
    if sum != expected {
        return Err(format!(
            "{shown}/libnvbit.a is not the libnvbit.a of NVBit {VERSION}: sha256 {sum}, expected {expected} {}",
            how_to_get()
        ));
    }
    Ok(())
}

/// `1.7.7.1` from `#define NVBIT_VERSION "1.7.7.1"`.
fn header_version(header: &str) -> Option<&str> {
    header.lines().find_map(|l| {
        let rest = l.trim().strip_prefix('#')?.trim_start().strip_prefix("define")?;
        let rest = rest.trim_start().strip_prefix("NVBIT_VERSION")?;
        rest.trim().strip_prefix('"')?.split('"').next()
    })
}

fn sha256_file(path: &Path) -> Result<String, String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `path` relative to `base`, for messages about unpacked files.
fn strip(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).display().to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// NVBit's core as the repository's git-ignored `third_party/nvbit`
    /// holds it, when it is there.
    pub(crate) fn real_core() -> Option<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/nvbit");
        dir.join("libnvbit.a").is_file().then_some(dir)
    }

    /// A core folder with the pinned version in nvbit.h and `lib` as libnvbit.a.
    pub(crate) fn fake_core(dir: &Path, version: &str, lib: &[u8]) {
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::write(dir.join("nvbit.h"), format!("#pragma once\n#define NVBIT_VERSION \"{version}\"\n"))
            .expect("write");
        std::fs::write(dir.join("nvbit_tool.h"), "").expect("write");
        std::fs::write(dir.join("libnvbit.a"), lib).expect("write");
    }

    /// `tar -cjf` of `dir`'s `top` folder (as the release is packed).
    pub(crate) fn tarball(dir: &Path, top: &str, name: &str) -> PathBuf {
        let file = dir.join(name);
        let flag = if name.ends_with(".gz") { "-czf" } else { "-cjf" };
        let st = Command::new("tar").arg(flag).arg(&file).arg("-C").arg(dir).arg(top).status().expect("tar");
        assert!(st.success(), "tar failed");
        file
    }

    #[test]
    fn pin_is_consistent() {
        assert_eq!(TARBALL, "nvbit-Linux-x86_64-1.7.7.1.tar.bz2");
        assert!(URL.ends_with(&format!("/v{VERSION}/{TARBALL}")), "{URL}");
        assert_eq!(LIBNVBIT_SHA256.len(), 64);
    }

    #[test]
    fn header_versions() {
        assert_eq!(header_version("x\n#define NVBIT_VERSION \"1.7.7.1\"\n"), Some("1.7.7.1"));
        assert_eq!(header_version("#  define   NVBIT_VERSION   \"1.5.5\""), Some("1.5.5"));
        assert_eq!(header_version("#define NVBIT_VERSION_MAJOR 1"), None);
        assert_eq!(header_version(""), None);
    }

    #[test]
    fn sha256_known_value() {
        let d = tempfile::tempdir().expect("tmp");
        let f = d.path().join("abc");
        std::fs::write(&f, b"abc").expect("write");
        assert_eq!(sha256_file(&f).expect("hash"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn fake_libnvbit_is_refused_by_checksum() {
        let d = tempfile::tempdir().expect("tmp");
        fake_core(&d.path().join("nvbit_release_x86_64/core"), VERSION, b"!<arch>\nnot nvbit\n");
        // as a folder (the release folder, its core, or above it)
        for given in
            [d.path().join("nvbit_release_x86_64"), d.path().join("nvbit_release_x86_64/core"), d.path().to_path_buf()]
        {
            let e = from_path(&given).expect_err("fake");
            assert!(e.contains("is not the libnvbit.a of NVBit 1.7.7.1") && e.contains(LIBNVBIT_SHA256), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // as tarballs
        for name in [TARBALL, "nvbit.tar.gz"] {
            let t = tarball(d.path(), "nvbit_release_x86_64", name);
            let e = from_path(&t).expect_err("fake");
            assert!(e.contains("is not the libnvbit.a of NVBit 1.7.7.1"), "{e}");
            assert!(e.contains("nvbit_release_x86_64/core"), "{e}");
        }
    }

    #[test]
    fn other_versions_are_refused_by_name() {
        let d = tempfile::tempdir().expect("tmp");
        fake_core(&d.path().join("nvbit_release/core"), "1.5.5", b"x");
        let t = tarball(d.path(), "nvbit_release", "nvbit-Linux-x86_64-1.5.5.tar.bz2");
        let e = from_path(&t).expect_err("old");
        assert!(e.contains("NVBit 1.5.5 found") && e.contains("xfpx is built with NVBit 1.7.7.1"), "{e}");
        assert!(e.contains(TARBALL), "{e}");
        std::fs::write(d.path().join("nvbit_release/core/nvbit.h"), "// no version\n").expect("write");
        let e = from_path(&d.path().join("nvbit_release")).expect_err("none");
        assert!(e.contains("names no NVBIT_VERSION"), "{e}");
    }

    #[test]
    fn bad_inputs_are_one_line() {
        let d = tempfile::tempdir().expect("tmp");
        let e = from_path(&d.path().join("nope.tar.bz2")).expect_err("missing");
        assert!(e.contains("no such file or folder"), "{e}");
        let e = from_path(d.path()).expect_err("empty folder");
        assert!(e.starts_with("no NVBit core"), "{e}");
        let junk = d.path().join("junk.tar.bz2");
        std::fs::write(&junk, b"not a tarball").expect("write");
        let e = from_path(&junk).expect_err("junk");
        assert!(e.starts_with("cannot unpack") && !e.contains('\n'), "{e}");
        let other = d.path().join("nvbit.zip");
        std::fs::write(&other, b"PK").expect("write");
        assert!(from_path(&other).expect_err("zip").contains("not a tarball"));
        // a tarball without a core
        std::fs::create_dir_all(d.path().join("empty/core")).expect("mkdir");
        let t = tarball(d.path(), "empty", "empty.tar.bz2");
        assert!(from_path(&t).expect_err("no core").contains("holds no NVBit core"));
    }

    #[test]
    fn the_real_core_passes() {
        let Some(core) = real_core() else {
            eprintln!(
                "SKIPPED: third_party/nvbit (NVBit {VERSION}'s core) is not here; the real checksum is not checked"
            );
            return;
        };
        let d = tempfile::tempdir().expect("tmp");
        let top = d.path().join("nvbit_release_x86_64");
        std::fs::create_dir_all(&top).expect("mkdir");
        let st = Command::new("cp").arg("-r").arg(&core).arg(top.join("core")).status().expect("cp");
        assert!(st.success());
        let t = tarball(d.path(), "nvbit_release_x86_64", TARBALL);
        let c = from_path(&t).expect("the release's core passes");
        assert!(c.dir.ends_with("nvbit_release_x86_64/core"));
        assert!(c.dir.join("nvbit_tool.h").is_file());
        from_path(&core).expect("as a folder");
    }

    #[test]
    fn download_without_tools_or_network_says_how() {
        let d = tempfile::tempdir().expect("tmp");
        let e = download(d.path(), d.path().as_os_str()).expect_err("no curl");
        assert!(e.contains("neither curl nor wget") && e.contains(TARBALL), "{e}");
    }
}
