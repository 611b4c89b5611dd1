//! How a screen reads a buffer: the format (f64, f32, bf16 or f16
//! elements), and the counting rule the device's scan applies (mirrored
//! here and tested: [`count`]).
//!
//! Reading memory in the wrong format misleads in one direction only. Data
//! read as a narrower format than it holds shows random mantissa bits as
//! exponents: an f64 array read as f32 words has about one low word in 256
//! that looks like NaN or infinity. Data read as a wider format shows a
//! value as non-finite only where one of its narrower elements is
//! non-finite too (an f64 read of f32 data sees the high word's exponent).
//! So where the element type is not known, a buffer is read in the widest
//! format the kernel computes in, in the order f64, f32, bf16, f16 (each
//! reading's non-finite values are a subset of the next one's).

use xfpx_common::class::FpFormat;

/// The formats a buffer can be read as, widest first.
pub const READINGS: [FpFormat; 4] = [FpFormat::F64, FpFormat::F32, FpFormat::Bf16, FpFormat::F16];

/// The element a format is read as: a pair format reads its halves.
pub fn element_of(f: FpFormat) -> FpFormat {
    match f {
        FpFormat::F16x2 => FpFormat::F16,
        FpFormat::Bf16x2 => FpFormat::Bf16,
        other => other,
    }
}

/// Bytes of one element read as `f`.
pub fn element_bytes(f: FpFormat) -> u64 {
    match element_of(f) {
        FpFormat::F64 => 8,
        FpFormat::F32 => 4,
        _ => 2,
    }
}

/// The reading of a buffer whose element type is unknown, for a kernel
/// computing in `formats`: the widest of them (`None`: no format).
pub fn unknown_reading(formats: impl IntoIterator<Item = FpFormat>) -> Option<FpFormat> {
    let used: Vec<FpFormat> = formats.into_iter().map(element_of).collect();
    READINGS.into_iter().find(|r| used.contains(r))
}

/// NaN and infinite elements of a buffer read as one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub nan: u64,
    pub inf: u64,
    /// Lowest index of an element counted.
    pub first: Option<u64>,
}

/// Whether the element `bits` (in the low bits) of format `f` is NaN
/// (`Some(true)`), infinite (`Some(false)`) or finite (`None`).
pub fn classify(bits: u64, f: FpFormat) -> Option<bool> {
    let (exp_bits, mant_bits) = match element_of(f) {
        FpFormat::F64 => (11, 52),
        FpFormat::F32 => (8, 23),
        FpFormat::Bf16 => (8, 7),
        _ => (5, 10),
    };
    let emax = (1u64 << exp_bits) - 1;
    if (bits >> mant_bits) & emax != emax {
        return None;
    }
    Some(bits & ((1u64 << mant_bits) - 1) != 0)
}

/// The device scan's rule: every whole element of `bytes` read as `f`
/// (little-endian; a partial element at the end is not read) is counted
/// as NaN or infinite by its exponent and mantissa.
pub fn count(bytes: &[u8], f: FpFormat) -> Counts {
    let size = element_bytes(f) as usize;
    let mut c = Counts::default();
    for (i, e) in bytes.chunks_exact(size).enumerate() {
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(e);
        match classify(u64::from_le_bytes(b), f) {
            None => continue,
            Some(true) => c.nan += 1,
            Some(false) => c.inf += 1,
        }
        c.first.get_or_insert(i as u64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic bytes (splitmix64).
    fn noise(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
        }
        out.truncate(n);
        out
    }

    #[test]
    fn each_format_counts_nan_and_infinity() {
        let f32s: Vec<u8> = [1.0f32, f32::NAN, f32::INFINITY, -f32::INFINITY, f32::MAX, 0.0, f32::MIN_POSITIVE / 2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(count(&f32s, FpFormat::F32), Counts { nan: 1, inf: 2, first: Some(1) });
        let f64s: Vec<u8> = [2.0f64, f64::NEG_INFINITY, -f64::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(count(&f64s, FpFormat::F64), Counts { nan: 1, inf: 1, first: Some(1) });
        // f16: 0x7c00 inf, 0xfe00 NaN, 0x7bff max; bf16: 0x7f80 inf, 0x7fc1 NaN
        let halves = |hs: &[u16]| -> Vec<u8> { hs.iter().flat_map(|h| h.to_le_bytes()).collect() };
        assert_eq!(count(&halves(&[0x7bff, 0x7c00, 0xfe00]), FpFormat::F16), Counts { nan: 1, inf: 1, first: Some(1) });
        assert_eq!(
            count(&halves(&[0x7bff, 0x7c00, 0xfe00]), FpFormat::F16x2),
            Counts { nan: 1, inf: 1, first: Some(1) }
        );
        assert_eq!(
            count(&halves(&[0x7f80, 0x7fc1, 0x7c00]), FpFormat::Bf16),
            Counts { nan: 1, inf: 1, first: Some(0) }
        );
        // a partial element at the end is not read
        let mut cut = f32s.clone();
        cut.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert_eq!(count(&cut, FpFormat::F32), count(&f32s, FpFormat::F32));
        assert_eq!(count(&[], FpFormat::F64), Counts::default());
    }

    #[test]
    fn wider_readings_see_a_subset_narrower_ones_invent_values() {
        // random bit patterns standing for data of each format
        for seed in 0..20 {
            let data = noise(seed, 1 << 14);
            for (i, wide) in READINGS.iter().enumerate() {
                for narrow in &READINGS[i + 1..] {
                    let (w, n) = (count(&data, *wide), count(&data, *narrow));
                    assert!(w.nan + w.inf <= n.nan + n.inf, "{wide:?} over {narrow:?} data, seed {seed}");
                }
            }
        }
        // finite f64 data read as f32 words: about 1 in 256 low words
        // look non-finite, which is why unknown buffers are read wide
        let doubles: Vec<u8> = noise(7, 1 << 16)
            .chunks_exact(8)
            .flat_map(|c| {
                let u = u64::from_le_bytes(c.try_into().expect("8 bytes")) >> 12;
                (1.0 + u as f64 / (1u64 << 52) as f64).to_le_bytes()
            })
            .collect();
        assert_eq!(count(&doubles, FpFormat::F64), Counts::default());
        let misread = count(&doubles, FpFormat::F32);
        assert!(misread.nan + misread.inf > 10, "{misread:?}");
    }

    #[test]
    fn unknown_buffers_are_read_in_the_widest_format() {
        assert_eq!(unknown_reading([FpFormat::F32, FpFormat::F64]), Some(FpFormat::F64));
        assert_eq!(unknown_reading([FpFormat::F16x2, FpFormat::F32]), Some(FpFormat::F32));
        assert_eq!(unknown_reading([FpFormat::F16x2, FpFormat::Bf16]), Some(FpFormat::Bf16));
        assert_eq!(unknown_reading([FpFormat::F16x2]), Some(FpFormat::F16));
        assert_eq!(unknown_reading([]), None);
        assert_eq!(element_bytes(FpFormat::Bf16x2), 2);
    }
}
