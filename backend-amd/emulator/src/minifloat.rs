//! The 8-bit and 16-bit float formats of matrix and conversion instructions,
//! decoded exactly into f32: bf16, and the two 8-bit formats in the
//! encoding of each generation — gfx940-gfx942 use the "FNUZ" variants
//! (E4M3 with bias 8, E5M2 with bias 16; no infinities, no negative zero,
//! 0x80 the only NaN), gfx950 the OCP variants (E4M3FN with bias 7, NaN
//! S.1111.111 and no infinities; E5M2 with bias 15, IEEE-like infinities
//! and NaNs).

/// An 8-bit float format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F8 {
    /// E4M3 ("fp8").
    E4m3,
    /// E5M2 ("bf8").
    E5m2,
}

/// The encoding family of the 8-bit formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F8Encoding {
    /// gfx940-gfx942: E4M3FNUZ / E5M2FNUZ.
    Fnuz,
    /// gfx950: OCP E4M3FN / E5M2.
    Ocp,
}

/// A bf16 value (the high half of an f32) as f32.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// An 8-bit float as f32 (exact: every value is an f32 normal number).
pub fn f8_to_f32(bits: u8, format: F8, encoding: F8Encoding) -> f32 {
    let (exp_bits, bias) = match (format, encoding) {
        (F8::E4m3, F8Encoding::Fnuz) => (4, 8),
        (F8::E4m3, F8Encoding::Ocp) => (4, 7),
        (F8::E5m2, F8Encoding::Fnuz) => (5, 16),
        (F8::E5m2, F8Encoding::Ocp) => (5, 15),
    };
    let man_bits = 7 - exp_bits;
    let negative = bits & 0x80 != 0;
    let e = ((bits >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let m = (bits & ((1 << man_bits) - 1)) as i32;
    let top = (1 << exp_bits) - 1;
    match encoding {
        F8Encoding::Fnuz if bits == 0x80 => return f32::NAN,
        F8Encoding::Ocp if format == F8::E4m3 && e == top && m == (1 << man_bits) - 1 => {
            return if negative { -f32::NAN } else { f32::NAN };
        }
        F8Encoding::Ocp if format == F8::E5m2 && e == top => {
            let v = if m == 0 { f32::INFINITY } else { f32::NAN };
            return if negative { -v } else { v };
        }
        _ => {}
    }
    let magnitude = if e == 0 {
        m as f32 * (2f32).powi(1 - bias - man_bits)
    } else {
        (((1 << man_bits) + m) as f32) * (2f32).powi(e - bias - man_bits)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        use F8Encoding::*;
        // Largest finite values: E4M3FNUZ 240, E4M3FN 448, E5M2(FNUZ) 57344.
        assert_eq!(f8_to_f32(0x7F, F8::E4m3, Fnuz), 240.0);
        assert_eq!(f8_to_f32(0x7E, F8::E4m3, Ocp), 448.0);
        assert!(f8_to_f32(0x7F, F8::E4m3, Ocp).is_nan());
        assert_eq!(f8_to_f32(0x7F, F8::E5m2, Fnuz), 57344.0);
        assert_eq!(f8_to_f32(0x7B, F8::E5m2, Ocp), 57344.0);
        assert_eq!(f8_to_f32(0x7C, F8::E5m2, Ocp), f32::INFINITY);
        assert_eq!(f8_to_f32(0xFC, F8::E5m2, Ocp), f32::NEG_INFINITY);
        assert!(f8_to_f32(0x7D, F8::E5m2, Ocp).is_nan());
        // FNUZ: 0x80 is the NaN, 0x00 the only zero.
        assert!(f8_to_f32(0x80, F8::E4m3, Fnuz).is_nan());
        assert!(f8_to_f32(0x80, F8::E5m2, Fnuz).is_nan());
        // OCP 0x80 is -0.
        assert_eq!(f8_to_f32(0x80, F8::E4m3, Ocp).to_bits(), (-0.0f32).to_bits());
        // One: E4M3FNUZ 0x40, E4M3FN 0x38, E5M2FNUZ 0x40, E5M2 0x3C.
        assert_eq!(f8_to_f32(0x40, F8::E4m3, Fnuz), 1.0);
        assert_eq!(f8_to_f32(0x38, F8::E4m3, Ocp), 1.0);
        assert_eq!(f8_to_f32(0x40, F8::E5m2, Fnuz), 1.0);
        assert_eq!(f8_to_f32(0x3C, F8::E5m2, Ocp), 1.0);
        // Smallest subnormals: 2^-10, 2^-9, 2^-17, 2^-16.
        assert_eq!(f8_to_f32(0x01, F8::E4m3, Fnuz), (2f32).powi(-10));
        assert_eq!(f8_to_f32(0x01, F8::E4m3, Ocp), (2f32).powi(-9));
        assert_eq!(f8_to_f32(0x01, F8::E5m2, Fnuz), (2f32).powi(-17));
        assert_eq!(f8_to_f32(0x81, F8::E5m2, Ocp), -(2f32).powi(-16));
        assert_eq!(bf16_to_f32(0x3F80), 1.0);
    }
}
