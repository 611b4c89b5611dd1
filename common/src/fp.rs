//! Floating-point exception kinds and host-side classification of bit
//! patterns. Device code implements the same rules; these functions are the
//! reference the tests hold it to.

use crate::class::FpFormat;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A floating-point exception xfpx reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExceptionKind {
    /// A NaN result.
    Nan,
    /// An infinite result (overflow, or an infinite operand propagated).
    Inf,
    /// A subnormal (denormal) result.
    Sub,
    /// Division by zero: an infinite result of a reciprocal/division.
    Div0,
}

impl ExceptionKind {
    pub const ALL: [ExceptionKind; 4] =
        [ExceptionKind::Nan, ExceptionKind::Inf, ExceptionKind::Sub, ExceptionKind::Div0];

    pub fn name(self) -> &'static str {
        match self {
            ExceptionKind::Nan => "nan",
            ExceptionKind::Inf => "inf",
            ExceptionKind::Sub => "sub",
            ExceptionKind::Div0 => "div0",
        }
    }

    pub fn from_name(s: &str) -> Option<ExceptionKind> {
        match s.to_ascii_lowercase().as_str() {
            "nan" => Some(ExceptionKind::Nan),
            "inf" | "infinity" => Some(ExceptionKind::Inf),
            "sub" | "subnormal" | "denormal" => Some(ExceptionKind::Sub),
            "div0" | "divzero" | "div-by-zero" => Some(ExceptionKind::Div0),
            _ => None,
        }
    }

    /// Stable code used in device records and table keys.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<ExceptionKind> {
        Self::ALL.get(c as usize).copied()
    }

    pub fn bit(self) -> u8 {
        1 << self.code()
    }
}

impl fmt::Display for ExceptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of exception kinds, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExceptionKinds(pub u8);

impl ExceptionKinds {
    pub const NONE: ExceptionKinds = ExceptionKinds(0);
    /// NaN, Inf and subnormal: what a value check can see.
    pub const VALUE: ExceptionKinds = ExceptionKinds(0b0111);
    /// All kinds, division by zero included.
    pub const ALL: ExceptionKinds = ExceptionKinds(0b1111);

    pub fn contains(self, k: ExceptionKind) -> bool {
        self.0 & k.bit() != 0
    }

    pub fn with(self, k: ExceptionKind) -> ExceptionKinds {
        ExceptionKinds(self.0 | k.bit())
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = ExceptionKind> {
        ExceptionKind::ALL.into_iter().filter(move |k| self.contains(*k))
    }

    /// Parse a comma-separated list such as `nan,inf` (or `all`).
    pub fn parse_list(s: &str) -> Result<ExceptionKinds, String> {
        let mut set = ExceptionKinds::NONE;
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.eq_ignore_ascii_case("all") || part.eq_ignore_ascii_case("any") {
                set = ExceptionKinds::ALL;
                continue;
            }
            let k = ExceptionKind::from_name(part)
                .ok_or_else(|| format!("unknown exception kind `{part}` (expected nan, inf, sub, div0 or all)"))?;
            set = set.with(k);
        }
        Ok(set)
    }
}

/// The IEEE class of one scalar value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueClass {
    Zero,
    Normal,
    Subnormal,
    Infinite,
    Nan,
}

/// Layout of a scalar IEEE-style format: exponent and mantissa widths.
fn layout(format: FpFormat) -> (u32, u32) {
    match format {
        FpFormat::F16 | FpFormat::F16x2 => (5, 10),
        FpFormat::Bf16 | FpFormat::Bf16x2 => (8, 7),
        FpFormat::F32 => (8, 23),
        FpFormat::F64 => (11, 52),
    }
}

/// Classify one scalar of `format` (for packed formats: one lane) from its
/// bits in the low bits of `bits`.
pub fn classify_scalar(format: FpFormat, bits: u64) -> ValueClass {
    let (e, m) = layout(format);
    let mant = bits & ((1u64 << m) - 1);
    let exp = (bits >> m) & ((1u64 << e) - 1);
    let exp_max = (1u64 << e) - 1;
    match (exp, mant) {
        (0, 0) => ValueClass::Zero,
        (0, _) => ValueClass::Subnormal,
        (x, 0) if x == exp_max => ValueClass::Infinite,
        (x, _) if x == exp_max => ValueClass::Nan,
        _ => ValueClass::Normal,
    }
}

/// The exception kinds a value shows, for a register value of `format`
/// (both lanes of packed formats). `is_division` turns an infinite result
/// into division by zero, as a reciprocal's infinity can only come from a
/// zero (or infinitely small) divisor.
pub fn exceptions_of(format: FpFormat, bits: u64, is_division: bool) -> ExceptionKinds {
    let lanes: Vec<u64> = match format {
        FpFormat::F16x2 | FpFormat::Bf16x2 => vec![bits & 0xffff, (bits >> 16) & 0xffff],
        FpFormat::F16 | FpFormat::Bf16 => vec![bits & 0xffff],
        FpFormat::F32 => vec![bits & 0xffff_ffff],
        FpFormat::F64 => vec![bits],
    };
    let mut set = ExceptionKinds::NONE;
    for lane in lanes {
        match classify_scalar(format, lane) {
            ValueClass::Nan => set = set.with(ExceptionKind::Nan),
            ValueClass::Infinite if is_division => set = set.with(ExceptionKind::Div0),
            ValueClass::Infinite => set = set.with(ExceptionKind::Inf),
            ValueClass::Subnormal => set = set.with(ExceptionKind::Sub),
            ValueClass::Zero | ValueClass::Normal => {}
        }
    }
    set
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn f32_classes() {
        assert_eq!(classify_scalar(FpFormat::F32, f32::NAN.to_bits() as u64), ValueClass::Nan);
        assert_eq!(classify_scalar(FpFormat::F32, f32::INFINITY.to_bits() as u64), ValueClass::Infinite);
        assert_eq!(classify_scalar(FpFormat::F32, 1e-40f32.to_bits() as u64), ValueClass::Subnormal);
        assert_eq!(classify_scalar(FpFormat::F32, (-0.0f32).to_bits() as u64), ValueClass::Zero);
        assert_eq!(classify_scalar(FpFormat::F32, 1.5f32.to_bits() as u64), ValueClass::Normal);
    }

    #[test]
    fn f64_and_halves() {
        assert_eq!(classify_scalar(FpFormat::F64, f64::NEG_INFINITY.to_bits()), ValueClass::Infinite);
        assert_eq!(classify_scalar(FpFormat::F64, 5e-324f64.to_bits()), ValueClass::Subnormal);
        assert_eq!(classify_scalar(FpFormat::F16, 0x7c00), ValueClass::Infinite);
        assert_eq!(classify_scalar(FpFormat::F16, 0x7e00), ValueClass::Nan);
        assert_eq!(classify_scalar(FpFormat::F16, 0x0001), ValueClass::Subnormal);
        assert_eq!(classify_scalar(FpFormat::Bf16, 0x7f80), ValueClass::Infinite);
        assert_eq!(classify_scalar(FpFormat::Bf16, 0x3f80), ValueClass::Normal);
    }

    #[test]
    fn packed_lanes_and_division() {
        // high lane NaN, low lane 1.0
        let s = exceptions_of(FpFormat::F16x2, 0x7e00_3c00, false);
        assert!(s.contains(ExceptionKind::Nan) && !s.contains(ExceptionKind::Inf));
        let d = exceptions_of(FpFormat::F32, f32::INFINITY.to_bits() as u64, true);
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![ExceptionKind::Div0]);
        assert!(exceptions_of(FpFormat::F64, 2.0f64.to_bits(), false).is_empty());
    }

    #[test]
    fn kind_lists() {
        assert_eq!(ExceptionKinds::parse_list("nan,inf").unwrap().0, 0b11);
        assert_eq!(ExceptionKinds::parse_list("all").unwrap(), ExceptionKinds::ALL);
        assert!(ExceptionKinds::parse_list("nan,bogus").is_err());
        for k in ExceptionKind::ALL {
            assert_eq!(ExceptionKind::from_code(k.code()), Some(k));
        }
    }
}
