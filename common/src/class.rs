//! Instruction classes: what an instruction does numerically, independent of
//! any ISA. Backends map their opcodes onto these classes from tables.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A floating-point value format, including packed two-lane formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FpFormat {
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    F32,
    F64,
}

impl FpFormat {
    pub const ALL: [FpFormat; 6] =
        [FpFormat::F16, FpFormat::F16x2, FpFormat::Bf16, FpFormat::Bf16x2, FpFormat::F32, FpFormat::F64];

    /// Name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FpFormat::F16 => "f16",
            FpFormat::F16x2 => "f16x2",
            FpFormat::Bf16 => "bf16",
            FpFormat::Bf16x2 => "bf16x2",
            FpFormat::F32 => "f32",
            FpFormat::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<FpFormat> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Number of 32-bit registers one value of this format occupies.
    pub fn register_words(self) -> u8 {
        match self {
            FpFormat::F64 => 2,
            _ => 1,
        }
    }

    /// Number of values packed into one register (or register pair).
    pub fn lanes(self) -> u8 {
        match self {
            FpFormat::F16x2 | FpFormat::Bf16x2 => 2,
            _ => 1,
        }
    }

    /// Small stable code used in device records and table keys.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<FpFormat> {
        Self::ALL.get(c as usize).copied()
    }
}

impl fmt::Display for FpFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of floating-point arithmetic an instruction performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FpOp {
    Add,
    Mul,
    Fma,
    /// Reciprocal or division (and division helper steps). A result of
    /// infinity from a reciprocal is reported as division by zero.
    Div,
    Sqrt,
    Rsqrt,
    /// exp, log, sin, cos, tanh and friends.
    Transcendental,
    /// Conversion between formats (including from integers).
    Conversion,
}

impl FpOp {
    pub fn name(self) -> &'static str {
        match self {
            FpOp::Add => "add",
            FpOp::Mul => "mul",
            FpOp::Fma => "fma",
            FpOp::Div => "div",
            FpOp::Sqrt => "sqrt",
            FpOp::Rsqrt => "rsqrt",
            FpOp::Transcendental => "transcendental",
            FpOp::Conversion => "conversion",
        }
    }
}

/// What an instruction is, numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum InstrClass {
    /// Floating-point arithmetic producing a value of `format`.
    Arith { format: FpFormat, op: FpOp },
    /// Comparison of floating-point values (writes a predicate or mask).
    Compare { format: FpFormat },
    /// Selection between floating-point values.
    Select { format: FpFormat },
    /// Minimum or maximum of floating-point values.
    MinMax { format: FpFormat },
    /// Matrix multiply-accumulate on tensor/matrix units; `format` is the
    /// accumulator format.
    Matrix { format: FpFormat },
    /// Everything else (integer, memory, control flow, ...).
    Other,
}

impl InstrClass {
    /// The floating-point format this instruction works on, if any.
    pub fn format(self) -> Option<FpFormat> {
        match self {
            InstrClass::Arith { format, .. }
            | InstrClass::Compare { format }
            | InstrClass::Select { format }
            | InstrClass::MinMax { format }
            | InstrClass::Matrix { format } => Some(format),
            InstrClass::Other => None,
        }
    }

    pub fn is_fp(self) -> bool {
        self.format().is_some()
    }

    /// Whether the instruction produces a floating-point value in a register
    /// (as opposed to a predicate/mask, or nothing floating-point at all).
    pub fn produces_fp_value(self) -> bool {
        matches!(
            self,
            InstrClass::Arith { .. }
                | InstrClass::Select { .. }
                | InstrClass::MinMax { .. }
                | InstrClass::Matrix { .. }
        )
    }

    /// Short human-readable label, e.g. `f32.fma`, `f64.cmp`.
    pub fn label(self) -> String {
        match self {
            InstrClass::Arith { format, op } => format!("{}.{}", format, op.name()),
            InstrClass::Compare { format } => format!("{format}.cmp"),
            InstrClass::Select { format } => format!("{format}.sel"),
            InstrClass::MinMax { format } => format!("{format}.minmax"),
            InstrClass::Matrix { format } => format!("{format}.matrix"),
            InstrClass::Other => "other".to_string(),
        }
    }
}

impl fmt::Display for InstrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn format_codes_round_trip() {
        for f in FpFormat::ALL {
            assert_eq!(FpFormat::from_code(f.code()), Some(f));
            assert_eq!(FpFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(FpFormat::from_code(6), None);
    }

    #[test]
    fn labels() {
        let c = InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma };
        assert_eq!(c.label(), "f64.fma");
        assert!(c.produces_fp_value());
        assert!(!InstrClass::Compare { format: FpFormat::F32 }.produces_fp_value());
        assert_eq!(InstrClass::Other.format(), None);
    }
}
