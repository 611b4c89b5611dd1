//! Bounds-checked little-endian reads from untrusted byte slices. Every read
//! either returns the value or [`Error::Truncated`]; nothing here can panic.

use crate::error::{Error, Result};

/// The sub-slice `bytes[start..start + len]`, or a truncation error naming `what`.
pub fn slice<'a>(bytes: &'a [u8], start: u64, len: u64, what: &'static str) -> Result<&'a [u8]> {
    let end = start.checked_add(len).ok_or(Error::Truncated { what, start, end: u64::MAX, len: bytes.len() as u64 })?;
    let truncated = Error::Truncated { what, start, end, len: bytes.len() as u64 };
    let s = usize::try_from(start).map_err(|_| truncated.clone())?;
    let e = usize::try_from(end).map_err(|_| truncated.clone())?;
    bytes.get(s..e).ok_or(truncated)
}

fn array<const N: usize>(bytes: &[u8], at: u64, what: &'static str) -> Result<[u8; N]> {
    let s = slice(bytes, at, N as u64, what)?;
    let mut out = [0u8; N];
    out.copy_from_slice(s);
    Ok(out)
}

pub fn u16_at(bytes: &[u8], at: u64, what: &'static str) -> Result<u16> {
    array::<2>(bytes, at, what).map(u16::from_le_bytes)
}

pub fn u32_at(bytes: &[u8], at: u64, what: &'static str) -> Result<u32> {
    array::<4>(bytes, at, what).map(u32::from_le_bytes)
}

pub fn u64_at(bytes: &[u8], at: u64, what: &'static str) -> Result<u64> {
    array::<8>(bytes, at, what).map(u64::from_le_bytes)
}

/// A NUL-terminated string starting at `at` (without the NUL), as UTF-8 (lossy).
pub fn cstr_at(bytes: &[u8], at: u64, what: &'static str) -> Result<String> {
    let rest = slice(bytes, at, (bytes.len() as u64).saturating_sub(at), what)?;
    let n = rest.iter().position(|&b| b == 0).ok_or_else(|| Error::malformed(what, "string is not NUL-terminated"))?;
    Ok(String::from_utf8_lossy(&rest[..n]).into_owned())
}
