//! Size limits on the files xfpx reads, in one place, and the one reader
//! that enforces them: a file larger than its limit (a 6 GB file, or
//! `/dev/zero`) is refused after at most limit + 1 bytes, with one line
//! naming the limit.

use std::io::Read;
use std::path::Path;

/// What kind of input a limit applies to, and how many bytes it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The inputs it applies to, in words (`reports`, `launch files`, ...).
    pub what: &'static str,
    pub bytes: u64,
}

/// Reports (`xfpx report`, JSON or MessagePack).
pub const REPORT: Limit = Limit { what: "reports", bytes: 256 << 20 };
/// Launch descriptions of `xfpx replay` (JSON; large data lives in files).
pub const LAUNCH: Limit = Limit { what: "launch files", bytes: 16 << 20 };
/// Code objects, offload bundles, executables and SASS listings read by
/// `xfpx dump` and `xfpx replay`.
pub const CODE_OBJECT: Limit = Limit { what: "code objects and listings", bytes: 512 << 20 };
/// One line of the event stream (a longer one ends its connection).
pub const EVENT_LINE: Limit = Limit { what: "event lines", bytes: 1 << 20 };
/// The run configuration handed to a backend.
pub const CONFIG: Limit = Limit { what: "run configurations", bytes: 1 << 20 };

impl Limit {
    /// The limit in words, e.g. `256 MiB`.
    pub fn size(&self) -> String {
        human_bytes(self.bytes)
    }
}

/// `n` bytes in the largest binary unit that divides it (`512 MiB`, `1000 bytes`).
pub fn human_bytes(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// Failure of [`read`]; the caller names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("larger than {size}, the limit for {what}")]
    TooLarge { size: String, what: &'static str },
}

/// Read all of `path`, refusing it when it holds more than `limit` bytes:
/// a regular file by its size before reading, anything else (a device, a
/// pipe) after limit + 1 bytes.
pub fn read(path: &Path, limit: Limit) -> Result<Vec<u8>, ReadError> {
    let too_large = || ReadError::TooLarge { size: limit.size(), what: limit.what };
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory").into());
    }
    if meta.is_file() && meta.len() > limit.bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() { meta.len() as usize } else { 0 });
    file.take(limit.bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.bytes {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, limit: Limit) -> Result<String, ReadError> {
    String::from_utf8(read(path, limit)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text").into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_words() {
        assert_eq!(REPORT.size(), "256 MiB");
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(3 << 10), "3 KiB");
    }

    #[test]
    fn files_within_and_beyond_the_limit() {
        let dir = std::env::temp_dir().join(format!("xfpx-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small");
        std::fs::write(&small, b"12345").unwrap();
        let five = Limit { what: "tests", bytes: 5 };
        assert_eq!(read(&small, five).unwrap(), b"12345");
        let four = Limit { what: "tests", bytes: 4 };
        let e = read(&small, four).unwrap_err().to_string();
        assert_eq!(e, "larger than 4 bytes, the limit for tests");
        // A device is read up to the limit, not to its end.
        let e = read(Path::new("/dev/zero"), four).unwrap_err().to_string();
        assert!(e.contains("larger than 4 bytes"), "{e}");
        assert!(read(&dir, five).unwrap_err().to_string().contains("directory"));
        assert!(read(&dir.join("missing"), five).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
