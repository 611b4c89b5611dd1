//! Putting the built tool library in place: written to a temporary file
//! created exclusively in the destination folder, then renamed over the
//! old library, so a failure at any point leaves the old one working.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Can files be created in `dir`? (Checked before anything is built.)
pub fn check_writable(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!("the install folder {} does not exist; give an existing one with --dest", dir.display()));
    }
    tempfile::Builder::new()
        .prefix(".xfpx-setup-check.")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("cannot write to the install folder {} ({e}); choose another with --dest", dir.display()))
}

/// Copy `built` to `dir/name` atomically; returns the installed path.
pub fn install(built: &Path, dir: &Path, name: &str) -> Result<PathBuf, String> {
    let dest = dir.join(name);
    if dest.is_dir() {
        return Err(format!("{} is a folder; remove it or choose another --dest", dest.display()));
    }
    let bytes = std::fs::read(built).map_err(|e| format!("cannot read the built library {}: {e}", built.display()))?;
    let fail = |e: std::io::Error| format!("cannot install {}: {e}", dest.display());
    let mut tmp = tempfile::Builder::new().prefix(&format!(".{name}.")).tempfile_in(dir).map_err(fail)?;
    tmp.write_all(&bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o755)).map_err(fail)?;
    }
    tmp.persist(&dest).map_err(|e| fail(e.error))?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_atomically_and_keeps_the_old_one_on_failure() {
        let d = tempfile::tempdir().expect("tmp");
        let built = d.path().join("built.so");
        std::fs::write(&built, b"new").expect("write");
        let dest_dir = d.path().join("bin");
        std::fs::create_dir(&dest_dir).expect("mkdir");
        std::fs::write(dest_dir.join("lib.so"), b"old").expect("write");
        // a failed build leaves nothing to install: the old one stays
        let e = install(&d.path().join("missing.so"), &dest_dir, "lib.so").expect_err("missing");
        assert!(e.contains("cannot read the built library"), "{e}");
        assert_eq!(std::fs::read(dest_dir.join("lib.so")).expect("read"), b"old");
        let p = install(&built, &dest_dir, "lib.so").expect("installed");
        assert_eq!(std::fs::read(&p).expect("read"), b"new");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777, 0o755);
        // no temporary file is left behind
        let names: Vec<_> = std::fs::read_dir(&dest_dir).expect("ls").flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("lib.so")]);
        std::fs::create_dir(dest_dir.join("dir.so")).expect("mkdir");
        assert!(install(&built, &dest_dir, "dir.so").expect_err("folder").contains("is a folder"));
    }

    #[test]
    fn writability() {
        let d = tempfile::tempdir().expect("tmp");
        check_writable(d.path()).expect("writable");
        assert!(check_writable(&d.path().join("nope")).expect_err("missing").contains("does not exist"));
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0, "the check leaves nothing behind");
    }
}
