//! The one error type of the crate: every failure to read a container, a code
//! object, a descriptor or a metadata note, rendered as a single line.

/// Why a code object or container could not be read.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input ended before a structure that had to be there.
    #[error("truncated input: {what} needs bytes {start}..{end} but the input has {len}")]
    Truncated { what: &'static str, start: u64, end: u64, len: u64 },
    /// The input is not any container or ELF this crate knows.
    #[error("unrecognized input: not an ELF, offload bundle, compressed bundle or HIP fat binary")]
    UnknownFormat,
    /// A structure has an impossible value.
    #[error("malformed {what}: {detail}")]
    Malformed { what: &'static str, detail: String },
    /// A well-formed input of a kind this crate does not handle.
    #[error("unsupported {what}: {detail}")]
    Unsupported { what: &'static str, detail: String },
    /// The ELF's processor is not one of the CDNA targets.
    #[error("unknown AMDGPU processor: e_flags mach 0x{mach:03x}")]
    UnknownProcessor { mach: u32 },
    /// Decompressing a compressed bundle failed.
    #[error("decompression failed ({method}): {detail}")]
    Decompress { method: &'static str, detail: String },
    /// No kernel of the code object matches the requested name or pattern.
    #[error("no kernel matches '{}'", one_line(.0.clone()))]
    NoSuchKernel(String),
}

impl Error {
    pub fn malformed(what: &'static str, detail: impl Into<String>) -> Self {
        Error::Malformed { what, detail: one_line(detail.into()) }
    }

    pub fn unsupported(what: &'static str, detail: impl Into<String>) -> Self {
        Error::Unsupported { what, detail: one_line(detail.into()) }
    }

    pub fn decompress(method: &'static str, detail: impl Into<String>) -> Self {
        Error::Decompress { method, detail: one_line(detail.into()) }
    }
}

/// `text` with control characters escaped: names and messages taken from
/// hostile input must not break an error onto several lines.
pub fn one_line(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        let e = Error::malformed("metadata note", "kernel 'a\nb\u{14}' has no .name");
        assert_eq!(e.to_string(), "malformed metadata note: kernel 'a\\nb\\u{14}' has no .name");
        assert_eq!(Error::NoSuchKernel("x\ny".into()).to_string(), "no kernel matches 'x\\ny'");
    }
}
