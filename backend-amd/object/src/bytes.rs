//! Bounds-checked little-endian reads (and patching writes) on untrusted byte
//! slices. Every access either succeeds or is [`Error::Truncated`]; nothing
//! here can panic.

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

/// The `width`-byte (1 to 8) little-endian unsigned integer at `at`.
pub fn uint_at(bytes: &[u8], at: u64, width: usize, what: &'static str) -> Result<u64> {
    let s = slice(bytes, at, width.min(8) as u64, what)?;
    let mut v = [0u8; 8];
    v[..s.len()].copy_from_slice(s);
    Ok(u64::from_le_bytes(v))
}

/// Writes the low `width` bytes (1 to 8) of `value` at `at`, little-endian.
pub fn put_uint(bytes: &mut [u8], at: u64, width: usize, value: u64, what: &'static str) -> Result<()> {
    let width = width.min(8);
    // The range is checked here, so the slicing below stays inside `bytes`.
    slice(bytes, at, width as u64, what)?;
    let at = at as usize;
    bytes[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_stay_inside() {
        let mut b = [0x11, 0x22, 0x33, 0x44, 0x55];
        assert_eq!(uint_at(&b, 1, 2, "t"), Ok(0x3322));
        assert_eq!(u32_at(&b, 1, "t"), Ok(0x5544_3322));
        assert!(u32_at(&b, 2, "t").is_err());
        put_uint(&mut b, 3, 2, 0xbeef, "t").expect("inside");
        assert_eq!(b, [0x11, 0x22, 0x33, 0xef, 0xbe]);
        assert!(put_uint(&mut b, 4, 2, 0, "t").is_err());
        assert!(put_uint(&mut b, u64::MAX, 2, 0, "t").is_err());
        assert_eq!(b, [0x11, 0x22, 0x33, 0xef, 0xbe], "a refused write changes nothing");
    }
}
