//! The `--report` name of `xfpx run` as a template, so that each process
//! of a parallel job started as `mpirun -np 4 xfpx run --report r.%r.json`
//! writes its own file: `%r` is the launcher's rank, `%h` the host name,
//! `%p` the process id of xfpx, `%%` a literal `%`.

use anyhow::{bail, Result};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use xfpx_common::launcher::{self, RANK_VARIABLES};

/// What the placeholders stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameFields {
    pub rank: Option<u32>,
    pub host: String,
    pub pid: u32,
}

impl NameFields {
    /// This process: the launcher's rank (if any), host name, process id.
    pub fn of_this_process() -> NameFields {
        NameFields {
            rank: launcher::rank_from_env().map(|r| r.rank),
            host: launcher::host_name(),
            pid: std::process::id(),
        }
    }
}

/// `template` with its placeholders replaced; an unknown placeholder, a
/// lone `%` at the end, or `%r` without a launcher rank is an error.
pub fn expand(template: &Path, fields: &NameFields) -> Result<PathBuf> {
    let bytes = template.as_os_str().as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut it = bytes.iter();
    while let Some(&b) = it.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        match it.next() {
            Some(b'%') => out.push(b'%'),
            Some(b'r') => match fields.rank {
                Some(rank) => out.extend_from_slice(rank.to_string().as_bytes()),
                None => bail!(
                    "--report {} uses %r, but no launcher set a rank ({RANK_VARIABLES}): start xfpx under mpirun or srun",
                    shown(template)
                ),
            },
            Some(b'h') => out.extend_from_slice(fields.host.as_bytes()),
            Some(b'p') => out.extend_from_slice(fields.pid.to_string().as_bytes()),
            Some(&other) => bail!(
                "--report {}: unknown placeholder %{} (known: %r rank, %h host, %p process id, %% a literal %)",
                shown(template),
                char::from(other).escape_default()
            ),
            None => bail!("--report {}: a lone % at the end (write %% for a literal %)", shown(template)),
        }
    }
    Ok(PathBuf::from(OsString::from_vec(out)))
}

/// The template as messages show it, control characters escaped.
fn shown(template: &Path) -> String {
    template.to_string_lossy().escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(rank: Option<u32>) -> NameFields {
        NameFields { rank, host: "node07".into(), pid: 4242 }
    }

    fn ok(t: &str, rank: Option<u32>) -> String {
        expand(Path::new(t), &fields(rank)).expect("expands").to_string_lossy().into_owned()
    }

    fn err(t: &str, rank: Option<u32>) -> String {
        expand(Path::new(t), &fields(rank)).expect_err("refused").to_string()
    }

    #[test]
    fn placeholders() {
        assert_eq!(ok("r.%r.json", Some(3)), "r.3.json");
        assert_eq!(ok("out/%h/r-%r-%p.msgpack", Some(12)), "out/node07/r-12-4242.msgpack");
        assert_eq!(ok("100%%.json", None), "100%.json");
        assert_eq!(ok("%%r.json", None), "%r.json");
        assert_eq!(ok("plain.json", None), "plain.json");
        assert_eq!(ok("%p.json", None), "4242.json");
    }

    #[test]
    fn bad_templates_are_one_line_errors() {
        let e = err("r.%r.json", None);
        assert!(e.contains("no launcher set a rank") && e.contains("OMPI_COMM_WORLD_RANK"), "{e}");
        assert!(err("r.%x.json", Some(0)).contains("unknown placeholder %x"));
        assert!(err("r.json%", Some(0)).contains("lone %"));
        for e in [err("r.%r", None), err("%\n", None), err("r%", None)] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn non_utf8_names_survive() {
        use std::os::unix::ffi::OsStrExt;
        let t = Path::new(std::ffi::OsStr::from_bytes(b"r\xff.%r.json"));
        let got = expand(t, &fields(Some(1))).expect("expands");
        assert_eq!(got.as_os_str().as_bytes(), b"r\xff.1.json");
    }
}
