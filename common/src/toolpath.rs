//! Where xfpx finds a library it loads into the programs it runs (a
//! vendor's tool library, the emulated HSA runtime): the file an
//! environment variable names, else the first of the library's names
//! beside the running `xfpx` executable, in `../lib` from it, then in the
//! build folders given.

use std::path::{Path, PathBuf};

/// Why a library was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The environment variable named this, which is not a file.
    NotAFile(PathBuf),
    /// None of the places holds it.
    NotFound,
}

/// The folder of the running executable.
pub fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf))
}

/// The lookup: `explicit` (the variable's value) when given, else the
/// first of `names` beside `exe_dir`, in `exe_dir/../lib`, then in each
/// of `build_dirs`.
pub fn find(
    explicit: Option<&Path>,
    exe_dir: Option<&Path>,
    build_dirs: &[PathBuf],
    names: &[&str],
) -> Result<PathBuf, Missing> {
    if let Some(p) = explicit {
        return if p.is_file() { Ok(p.to_path_buf()) } else { Err(Missing::NotAFile(p.to_path_buf())) };
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = exe_dir {
        dirs.push(d.to_path_buf());
        dirs.push(d.join("../lib"));
    }
    dirs.extend(build_dirs.iter().cloned());
    dirs.iter().flat_map(|d| names.iter().map(move |n| d.join(n))).find(|c| c.is_file()).ok_or(Missing::NotFound)
}

/// [`find`] with the explicit path from the environment variable `env`
/// (unset or empty: none) and this executable's folder.
pub fn find_from_env(env: &str, build_dirs: &[PathBuf], names: &[&str]) -> Result<PathBuf, Missing> {
    let explicit = std::env::var_os(env).filter(|v| !v.is_empty()).map(PathBuf::from);
    find(explicit.as_deref(), exe_dir().as_deref(), build_dirs, names)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lookup_order() {
        let dir = std::env::temp_dir().join(format!("xfpx-toolpath-{}", std::process::id()));
        let (exe, build) = (dir.join("bin"), dir.join("build"));
        std::fs::create_dir_all(&exe).unwrap();
        std::fs::create_dir_all(&build).unwrap();
        let names = ["liba.so.1", "liba.so"];
        let builds = [build.clone()];
        assert_eq!(find(None, Some(&exe), &builds, &names), Err(Missing::NotFound));
        std::fs::write(build.join("liba.so"), b"").unwrap();
        assert_eq!(find(None, Some(&exe), &builds, &names), Ok(build.join("liba.so")));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/liba.so.1"), b"").unwrap();
        assert_eq!(find(None, Some(&exe), &builds, &names), Ok(exe.join("../lib/liba.so.1")));
        std::fs::write(exe.join("liba.so"), b"").unwrap();
        assert_eq!(find(None, Some(&exe), &builds, &names), Ok(exe.join("liba.so")));
        let nope = dir.join("nope.so");
        assert_eq!(find(Some(&nope), Some(&exe), &builds, &names), Err(Missing::NotAFile(nope)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
