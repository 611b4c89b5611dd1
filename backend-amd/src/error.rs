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
    /// The requested kernel is not in the code object.
    #[error("no kernel named '{0}'")]
    NoSuchKernel(String),
}

impl Error {
    pub(crate) fn malformed(what: &'static str, detail: impl Into<String>) -> Self {
        Error::Malformed { what, detail: detail.into() }
    }

    pub(crate) fn unsupported(what: &'static str, detail: impl Into<String>) -> Self {
        Error::Unsupported { what, detail: detail.into() }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
