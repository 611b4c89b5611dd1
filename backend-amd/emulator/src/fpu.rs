//! IEEE arithmetic of the emulated VALU: correctly rounded f16/f32/f64
//! operations (round to nearest even), the exception flags they raise in
//! TRAPSTS order, denormal flushing as the MODE register asks, and the
//! hardware's approximate instructions.
//!
//! Accuracy of the approximate instructions as emulated: `v_rcp`, `v_rsq`,
//! `v_sqrt`, `v_exp` and `v_log` (f32) are computed in f64 and rounded once, so
//! they are within 1 ULP of the exact value (the hardware documents 1 ULP);
//! the f64 `v_rcp`/`v_rsq` are within 1 ULP. Tests compare their results with a
//! stated tolerance, never bit-exactly.

/// TRAPSTS / MODE exception bits.
pub mod flag {
    pub const INVALID: u32 = 1 << 0;
    pub const INPUT_DENORM: u32 = 1 << 1;
    pub const DIV0: u32 = 1 << 2;
    pub const OVERFLOW: u32 = 1 << 3;
    pub const UNDERFLOW: u32 = 1 << 4;
    pub const INEXACT: u32 = 1 << 5;
    pub const INT_DIV0: u32 = 1 << 6;
}

/// The floating-point parts of the MODE register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpMode {
    /// MODE[7:4]: bit 0 of each pair keeps input denormals, bit 1 output ones.
    pub denorm32: u32,
    pub denorm16_64: u32,
    pub ieee: bool,
}

impl FpMode {
    pub fn from_mode(mode: u32) -> FpMode {
        FpMode { denorm32: (mode >> 4) & 3, denorm16_64: (mode >> 6) & 3, ieee: mode & (1 << 9) != 0 }
    }
}

/// Flags raised by one lane's operation.
pub type Flags = u32;

pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as f64;
    match e {
        0 => sign * m * (2f64).powi(-24),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::from_bits(0x7FF8_0000_0000_0000 | (((h & 0x3FF) as u64) << 42) | (((h & 0x8000) as u64) << 48)),
        _ => sign * (1.0 + m / 1024.0) * (2f64).powi(e - 15),
    }
}

/// Rounds an f64 to the nearest f16 (ties to even); overflow goes to ±inf.
pub fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7E00 | ((bits >> 42) & 0x1FF) as u16;
    }
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7C00;
    }
    if a == 0.0 {
        return sign;
    }
    // Scale so that one f16 ULP at this magnitude is 1, round, rebuild.
    let e = ((a.to_bits() >> 52) as i32 - 1023).max(-14);
    let ulp_exp = e - 10;
    let scaled = a * (2f64).powi(-ulp_exp);
    let r = scaled.round_ties_even();
    let v = r * (2f64).powi(ulp_exp);
    if v >= 65520.0 || (v > 65504.0) {
        return sign | 0x7C00;
    }
    let v = v as f32 as f64; // exact
    let e2 = ((v.to_bits() >> 52) as i32) - 1023;
    if e2 < -14 {
        // subnormal: multiple of 2^-24
        return sign | (v * (2f64).powi(24)) as u16;
    }
    let mant = ((v * (2f64).powi(-e2) - 1.0) * 1024.0) as u16;
    sign | (((e2 + 15) as u16) << 10) | mant
}

/// An f32 converted to f16 rounding toward zero (`v_cvt_pkrtz_f16_f32`):
/// beyond the largest finite f16, that f16; NaN stays NaN, infinities stay.
pub fn f32_to_f16_rtz(x: f32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    if x.is_nan() {
        return sign | 0x7E00;
    }
    if x.is_infinite() {
        return sign | 0x7C00;
    }
    let h = f64_to_f16(x as f64);
    // Nearest rounding may have gone up in magnitude: step back one unit.
    let toward_zero = if f16_to_f64(h).abs() > (x as f64).abs() { h - 1 } else { h };
    if toward_zero & 0x7FFF == 0x7C00 {
        sign | 0x7BFF
    } else {
        toward_zero
    }
}

fn is_snan32(x: f32) -> bool {
    x.is_nan() && x.to_bits() & 0x0040_0000 == 0
}
fn is_snan64(x: f64) -> bool {
    x.is_nan() && x.to_bits() & 0x0008_0000_0000_0000 == 0
}
pub fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}
pub fn quiet64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
}

/// Input flushing of f32 operands.
pub fn in32(x: f32, mode: FpMode, flags: &mut Flags) -> f32 {
    if x.is_subnormal() {
        *flags |= flag::INPUT_DENORM;
        if mode.denorm32 & 1 == 0 {
            return if x.is_sign_negative() { -0.0 } else { 0.0 };
        }
    }
    if is_snan32(x) {
        *flags |= flag::INVALID;
    }
    x
}

pub fn in64(x: f64, mode: FpMode, flags: &mut Flags) -> f64 {
    if x.is_subnormal() {
        *flags |= flag::INPUT_DENORM;
        if mode.denorm16_64 & 1 == 0 {
            return if x.is_sign_negative() { -0.0 } else { 0.0 };
        }
    }
    if is_snan64(x) {
        *flags |= flag::INVALID;
    }
    x
}

/// Rounds an exact-enough f64 result to f32 and derives the flags: the value
/// must be the exact result or a round-to-odd approximation of it, so that a
/// single rounding to f32 is correct. `inputs_nan` tells a propagated NaN from
/// an invalid operation.
pub fn round32(r: f64, exact: bool, inputs_nan: bool, inputs_inf: bool, mode: FpMode, flags: &mut Flags) -> f32 {
    if r.is_nan() {
        if !inputs_nan {
            *flags |= flag::INVALID;
        }
        return f32::NAN;
    }
    let mut f = r as f32;
    let inexact = !exact || (f as f64) != r;
    if f.is_infinite() && !inputs_inf {
        *flags |= flag::OVERFLOW | flag::INEXACT;
        return f;
    }
    if inexact {
        *flags |= flag::INEXACT;
    }
    if f.is_subnormal() || (f == 0.0 && r != 0.0) {
        if inexact {
            *flags |= flag::UNDERFLOW;
        }
        if mode.denorm32 & 2 == 0 && f != 0.0 {
            f = if f.is_sign_negative() { -0.0 } else { 0.0 };
            *flags |= flag::UNDERFLOW | flag::INEXACT;
        }
    }
    f
}

pub fn finish64(r: f64, exact: bool, inputs_nan: bool, inputs_inf: bool, mode: FpMode, flags: &mut Flags) -> f64 {
    if r.is_nan() {
        if !inputs_nan {
            *flags |= flag::INVALID;
        }
        return quiet64(r);
    }
    if r.is_infinite() && !inputs_inf {
        *flags |= flag::OVERFLOW | flag::INEXACT;
        return r;
    }
    if !exact {
        *flags |= flag::INEXACT;
    }
    if r.is_subnormal() || (r == 0.0 && !exact) {
        if !exact {
            *flags |= flag::UNDERFLOW;
        }
        if mode.denorm16_64 & 2 == 0 && r != 0.0 {
            *flags |= flag::UNDERFLOW | flag::INEXACT;
            return if r.is_sign_negative() { -0.0 } else { 0.0 };
        }
    }
    r
}

/// Error-free transforms for f64.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// f64 sum rounded to odd: exact sum's rounding toward zero with the last bit
/// set when inexact. Keeps a later rounding to f32/f16 correct.
fn add_round_odd(a: f64, b: f64) -> (f64, bool) {
    let (s, e) = two_sum(a, b);
    if e == 0.0 || !s.is_finite() {
        return (s, e == 0.0);
    }
    let bits = s.to_bits();
    // Round toward zero: if s was rounded away from zero, step back.
    let away = (s > 0.0) == (e < 0.0);
    let t = if away { f64::from_bits(bits - 1) } else { s };
    (f64::from_bits(t.to_bits() | 1), false)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// A correctly rounded f32 binary operation.
pub fn op32(op: BinOp, a: f32, b: f32, mode: FpMode, flags: &mut Flags) -> f32 {
    let a = in32(a, mode, flags);
    let b = in32(b, mode, flags);
    let (x, y) = (a as f64, b as f64);
    let (r, exact) = match op {
        BinOp::Add => add_round_odd(x, y),
        BinOp::Sub => add_round_odd(x, -y),
        BinOp::Mul => (x * y, true),
        BinOp::Div => {
            if b == 0.0 && a.is_finite() && a != 0.0 {
                *flags |= flag::DIV0;
            }
            let q = x / y;
            (q, q * y == x)
        }
    };
    round32(r, exact, a.is_nan() || b.is_nan(), a.is_infinite() || b.is_infinite(), mode, flags)
}

/// A correctly rounded f32 fused multiply-add.
pub fn fma32(a: f32, b: f32, c: f32, mode: FpMode, flags: &mut Flags) -> f32 {
    let a = in32(a, mode, flags);
    let b = in32(b, mode, flags);
    let c = in32(c, mode, flags);
    let p = a as f64 * b as f64; // exact
    let (r, exact) = add_round_odd(p, c as f64);
    let nan_in = a.is_nan() || b.is_nan() || c.is_nan();
    let inf_in = a.is_infinite() || b.is_infinite() || c.is_infinite();
    round32(r, exact, nan_in, inf_in, mode, flags)
}

/// f32 fused multiply-add scaled by 2^scale before its single rounding
/// (`v_div_fmas_f32`).
pub fn fma32_scaled(a: f32, b: f32, c: f32, scale: i32, mode: FpMode, flags: &mut Flags) -> f32 {
    let p = a as f64 * b as f64;
    let (r, exact) = add_round_odd(p, c as f64);
    let nan_in = a.is_nan() || b.is_nan() || c.is_nan();
    let inf_in = a.is_infinite() || b.is_infinite() || c.is_infinite();
    // Scaling by a power of two is exact in f64 at these magnitudes and keeps
    // the round-to-odd bit meaningful.
    round32(r * (2f64).powi(scale), exact, nan_in, inf_in, mode, flags)
}

pub fn op64(op: BinOp, a: f64, b: f64, mode: FpMode, flags: &mut Flags) -> f64 {
    let a = in64(a, mode, flags);
    let b = in64(b, mode, flags);
    let (r, exact) = match op {
        BinOp::Add => {
            let (s, e) = two_sum(a, b);
            (s, e == 0.0 || !s.is_finite())
        }
        BinOp::Sub => {
            let (s, e) = two_sum(a, -b);
            (s, e == 0.0 || !s.is_finite())
        }
        BinOp::Mul => {
            let p = a * b;
            (p, !p.is_finite() || a.mul_add(b, -p) == 0.0)
        }
        BinOp::Div => {
            if b == 0.0 && a.is_finite() && a != 0.0 {
                *flags |= flag::DIV0;
            }
            let q = a / b;
            (q, !q.is_finite() || q.mul_add(-b, a) == 0.0)
        }
    };
    finish64(r, exact, a.is_nan() || b.is_nan(), a.is_infinite() || b.is_infinite(), mode, flags)
}

pub fn fma64(a: f64, b: f64, c: f64, mode: FpMode, flags: &mut Flags) -> f64 {
    let a = in64(a, mode, flags);
    let b = in64(b, mode, flags);
    let c = in64(c, mode, flags);
    let r = a.mul_add(b, c);
    // Exactness of an f64 fma is not derived; such results never raise
    // INEXACT/UNDERFLOW here (documented limitation).
    let nan_in = a.is_nan() || b.is_nan() || c.is_nan();
    let inf_in = a.is_infinite() || b.is_infinite() || c.is_infinite();
    finish64(r, true, nan_in, inf_in, mode, flags)
}

/// f16 operations: computed in f64 and rounded once to f16.
pub fn op16(op: BinOp, a: u16, b: u16, mode: FpMode, flags: &mut Flags) -> u16 {
    let x = in16(a, mode, flags);
    let y = in16(b, mode, flags);
    let (r, exact) = match op {
        BinOp::Add => add_round_odd(x, y),
        BinOp::Sub => add_round_odd(x, -y),
        BinOp::Mul => (x * y, true),
        BinOp::Div => (x / y, false),
    };
    round16(r, exact, x.is_nan() || y.is_nan(), x.is_infinite() || y.is_infinite(), mode, flags)
}

pub fn fma16(a: u16, b: u16, c: u16, mode: FpMode, flags: &mut Flags) -> u16 {
    let (x, y, z) = (in16(a, mode, flags), in16(b, mode, flags), in16(c, mode, flags));
    let (r, exact) = add_round_odd(x * y, z);
    let nan_in = x.is_nan() || y.is_nan() || z.is_nan();
    let inf_in = x.is_infinite() || y.is_infinite() || z.is_infinite();
    round16(r, exact, nan_in, inf_in, mode, flags)
}

/// Input flushing of an f16 operand, as an (exact) f64.
pub fn in16(h: u16, mode: FpMode, flags: &mut Flags) -> f64 {
    let x = f16_to_f64(h);
    if h & 0x7C00 == 0 && h & 0x3FF != 0 {
        *flags |= flag::INPUT_DENORM;
        if mode.denorm16_64 & 1 == 0 {
            return if h & 0x8000 != 0 { -0.0 } else { 0.0 };
        }
    }
    if h & 0x7C00 == 0x7C00 && h & 0x3FF != 0 && h & 0x200 == 0 {
        *flags |= flag::INVALID;
    }
    x
}

pub fn round16(r: f64, exact: bool, nan_in: bool, inf_in: bool, mode: FpMode, flags: &mut Flags) -> u16 {
    if r.is_nan() {
        if !nan_in {
            *flags |= flag::INVALID;
        }
        return 0x7E00;
    }
    let h = f64_to_f16(r);
    let inexact = !exact || f16_to_f64(h) != r;
    if h & 0x7FFF == 0x7C00 && !inf_in {
        *flags |= flag::OVERFLOW | flag::INEXACT;
        return h;
    }
    if inexact {
        *flags |= flag::INEXACT;
    }
    if h & 0x7C00 == 0 && (h & 0x3FF != 0 || r != 0.0) {
        if inexact {
            *flags |= flag::UNDERFLOW;
        }
        if mode.denorm16_64 & 2 == 0 && h & 0x3FF != 0 {
            *flags |= flag::UNDERFLOW | flag::INEXACT;
            return h & 0x8000;
        }
    }
    h
}

/// IEEE-mode min/max (minNum/maxNum: a quiet NaN operand yields the other).
pub fn minmax32(a: f32, b: f32, max: bool, mode: FpMode, flags: &mut Flags) -> f32 {
    let a = in32(a, mode, flags);
    let b = in32(b, mode, flags);
    if a.is_nan() && b.is_nan() {
        return quiet32(a);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    let a_first = if a == b { a.is_sign_negative() != max } else { (a < b) != max };
    if a_first {
        a
    } else {
        b
    }
}

/// The median of three values (`v_med3_*`): with a NaN among them, the
/// minimum of the three as `minmax64` takes it.
pub fn med3_64(a: f64, b: f64, c: f64, mode: FpMode, flags: &mut Flags) -> f64 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        let t = minmax64(a, b, false, mode, flags);
        return minmax64(t, c, false, mode, flags);
    }
    let mx = a.max(b).max(c);
    if mx == a {
        b.max(c)
    } else if mx == b {
        a.max(c)
    } else {
        a.max(b)
    }
}

pub fn minmax64(a: f64, b: f64, max: bool, mode: FpMode, flags: &mut Flags) -> f64 {
    let a = in64(a, mode, flags);
    let b = in64(b, mode, flags);
    if a.is_nan() && b.is_nan() {
        return quiet64(a);
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    let a_first = if a == b { a.is_sign_negative() != max } else { (a < b) != max };
    if a_first {
        a
    } else {
        b
    }
}

/// The `v_cmp_class` mask bit of a value: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
/// 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
pub fn class_bit64(x: f64, snan: bool, subnormal: bool) -> u32 {
    let neg = x.is_sign_negative();
    if x.is_nan() {
        return if snan { 0 } else { 1 };
    }
    if x.is_infinite() {
        return if neg { 2 } else { 9 };
    }
    if x == 0.0 {
        return if neg { 5 } else { 6 };
    }
    if subnormal {
        return if neg { 4 } else { 7 };
    }
    if neg {
        3
    } else {
        8
    }
}

pub fn class32(x: f32) -> u32 {
    class_bit64(x as f64, is_snan32(x), x.is_subnormal())
}
pub fn class64(x: f64) -> u32 {
    class_bit64(x, is_snan64(x), x.is_subnormal())
}

/// Biased exponent field of an f32 / f64.
pub fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}
pub fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// `v_div_scale_f32`: returns the scaled value and the VCC bit.
pub fn div_scale32(s0: f32, den: f32, num: f32) -> (f32, bool) {
    let ldexp = |x: f32, e: i32| (x as f64 * (2f64).powi(e)) as f32;
    let subn = |x: f64| x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64;
    if num == 0.0 || den == 0.0 {
        return (f32::NAN, false);
    }
    if exp32(num) - exp32(den) >= 96 {
        return (if s0 == den { ldexp(s0, 64) } else { s0 }, true);
    }
    if den.is_subnormal() {
        return (ldexp(s0, 64), false);
    }
    let q = num as f64 / den as f64;
    let q_sub = subn((num / den) as f64) || (q != 0.0 && (q as f32).is_subnormal());
    let rcp_sub = subn(1.0 / den as f64);
    if rcp_sub && q_sub {
        // The ISA manual's pseudocode scales the denominator by 2^64 here,
        // which overflows (1 / 2^127 became NaN); scaled down instead, the
        // reciprocal and the quotient are normal and v_div_fmas (VCC set,
        // a small quotient) scales the result back by 2^-64: the division
        // is then correctly rounded, as the sequence is meant to be.
        return (if s0 == den { ldexp(s0, -64) } else { s0 }, true);
    }
    if rcp_sub {
        return (ldexp(s0, -64), false);
    }
    if q_sub {
        return (if s0 == num { ldexp(s0, 64) } else { s0 }, true);
    }
    if exp32(num) <= 23 {
        return (ldexp(s0, 64), false);
    }
    (s0, false)
}

/// `v_div_scale_f64`.
pub fn div_scale64(s0: f64, den: f64, num: f64) -> (f64, bool) {
    let ldexp = |x: f64, e: i32| x * (2f64).powi(e);
    if num == 0.0 || den == 0.0 {
        return (f64::NAN, false);
    }
    if exp64(num) - exp64(den) >= 768 {
        return (if s0 == den { ldexp(s0, 128) } else { s0 }, true);
    }
    if den.is_subnormal() {
        return (ldexp(s0, 128), false);
    }
    let q = num / den;
    let q_sub = q.is_subnormal();
    let rcp_sub = (1.0 / den).is_subnormal();
    if rcp_sub && q_sub {
        // scaled down, as in `div_scale32`
        return (if s0 == den { ldexp(s0, -128) } else { s0 }, true);
    }
    if rcp_sub {
        return (ldexp(s0, -128), false);
    }
    if q_sub {
        return (if s0 == num { ldexp(s0, 128) } else { s0 }, true);
    }
    if exp64(num) <= 53 {
        return (ldexp(s0, 128), false);
    }
    (s0, false)
}

/// `v_div_fixup_f32/f64` on f64 values: special cases of num/den, otherwise
/// the quotient with the sign of the exact result.
pub fn div_fixup(
    q: f64,
    den: f64,
    num: f64,
    min_exp_diff: i32,
    exps: (i32, i32),
    max_exp: i32,
    flags: &mut Flags,
) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    if num.is_nan() {
        return num + 0.0;
    }
    if den.is_nan() {
        return den + 0.0;
    }
    if den == 0.0 && num == 0.0 {
        *flags |= flag::INVALID;
        return f64::NAN;
    }
    if den.is_infinite() && num.is_infinite() {
        *flags |= flag::INVALID;
        return f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        if den == 0.0 {
            *flags |= flag::DIV0;
        }
        return signed(f64::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return signed(0.0);
    }
    let (e_num, e_den) = exps;
    if e_num - e_den < min_exp_diff {
        *flags |= flag::UNDERFLOW | flag::INEXACT;
        return signed(0.0);
    }
    // Finite, nonzero operands whose scaled quotient is no longer finite:
    // the quotient overflowed (the ISA manual's pseudocode tests the
    // exponent of S1, the denominator, which cannot be 255 here; a
    // quotient beyond 2^128 * 2^64 overflows inside the Newton steps).
    if e_den == max_exp || !q.is_finite() {
        *flags |= flag::OVERFLOW | flag::INEXACT;
        return signed(f64::INFINITY);
    }
    signed(q.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: FpMode = FpMode { denorm32: 3, denorm16_64: 3, ieee: true };

    /// LLVM's f32 division (denormals kept): scale, reciprocal, Newton
    /// steps, `v_div_fmas`, `v_div_fixup`, as the emulator executes them.
    fn divide32(num: f32, den: f32) -> f32 {
        let fl = &mut 0;
        let (d, _) = div_scale32(den, den, num);
        let (n, vcc) = div_scale32(num, den, num);
        let r = (1.0 / d as f64) as f32;
        let fma0 = fma32(-d, r, 1.0, M, fl);
        let fma1 = fma32(fma0, r, r, M, fl);
        let mul = op32(BinOp::Mul, n, fma1, M, fl);
        let fma2 = fma32(-d, mul, n, M, fl);
        let fma3 = fma32(fma2, fma1, mul, M, fl);
        let fma4 = fma32(-d, fma3, n, M, fl);
        let scale = if vcc {
            if exp32(fma3) > 127 {
                64
            } else {
                -64
            }
        } else {
            0
        };
        let fmas = fma32_scaled(fma4, fma1, fma3, scale, M, fl);
        div_fixup(fmas as f64, den as f64, num as f64, -150, (exp32(num), exp32(den)), 255, fl) as f32
    }

    /// The f64 sequence likewise (two Newton steps on the reciprocal).
    fn divide64(num: f64, den: f64) -> f64 {
        let fl = &mut 0;
        let (d, _) = div_scale64(den, den, num);
        let (n, vcc) = div_scale64(num, den, num);
        let r = 1.0 / d;
        let e0 = (-d).mul_add(r, 1.0);
        let r1 = r.mul_add(e0, r);
        let e1 = (-d).mul_add(r1, 1.0);
        let r2 = r1.mul_add(e1, r1);
        let q = n * r2;
        let rem = (-d).mul_add(q, n);
        let scale = if vcc {
            if exp64(q) > 1023 {
                128
            } else {
                -128
            }
        } else {
            0
        };
        let fmas = rem.mul_add(r2, q) * (2f64).powi(scale);
        div_fixup(fmas, den, num, -1075, (exp64(num), exp64(den)), 2047, fl)
    }

    #[test]
    fn division_sequences_divide_correctly() {
        // quotients and reciprocals in the denormal range, near the
        // largest finite value, and ordinary ones
        let f32_pairs = [
            (1.0f32, 2f32.powi(127)),
            (3.0, 2f32.powi(127)),
            (1.0, 1.5 * 2f32.powi(126)),
            (2f32.powi(-100), 2f32.powi(27)),
            (2f32.powi(100), 2f32.powi(-30)),
            (2f32.powi(120), 2f32.powi(127)),
            (1.0, 3.0),
            (-7.0, 0.1),
            (f32::MIN_POSITIVE, 3.0),
        ];
        for (num, den) in f32_pairs {
            let (got, want) = (divide32(num, den), num / den);
            assert_eq!(got.to_bits(), want.to_bits(), "{num:e} / {den:e}: {got:e}, IEEE {want:e}");
        }
        let f64_pairs = [
            (1.0f64, 2f64.powi(1023)),
            (3.0, 1.5 * 2f64.powi(1022)),
            (2f64.powi(-1000), 2f64.powi(60)),
            (2f64.powi(1000), 2f64.powi(-30)),
            (1.0, 3.0),
        ];
        for (num, den) in f64_pairs {
            let (got, want) = (divide64(num, den), num / den);
            assert_eq!(got.to_bits(), want.to_bits(), "{num:e} / {den:e}: {got:e}, IEEE {want:e}");
        }
        // and pairs of random finite, nonzero values of every magnitude
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..100_000 {
            let (num, den) = (f32::from_bits(next() as u32), f32::from_bits(next() as u32));
            if num.is_finite() && den.is_finite() && num != 0.0 && den != 0.0 {
                let (got, want) = (divide32(num, den), num / den);
                assert_eq!(got.to_bits(), want.to_bits(), "{num:e} / {den:e}: {got:e}, IEEE {want:e}");
            }
            // (f64 quotients in the subnormal range may differ in their last
            // bit: v_div_fmas_f64 is rounded before it is scaled there)
            let (num, den) = (f64::from_bits(next()), f64::from_bits(next()));
            if num.is_finite() && den.is_finite() && num != 0.0 && den != 0.0 && !(num / den).is_subnormal() {
                let (got, want) = (divide64(num, den), num / den);
                assert_eq!(got.to_bits(), want.to_bits(), "{num:e} / {den:e}: {got:e}, IEEE {want:e}");
            }
        }
    }

    #[test]
    fn f16_conversions_round_trip() {
        for h in 0..=0xFFFFu16 {
            let x = f16_to_f64(h);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f64_to_f16(x), h, "{h:#06x}");
        }
        assert_eq!(f64_to_f16(65520.0), 0x7C00);
        assert_eq!(f64_to_f16(65519.0), 0x7BFF);
        assert_eq!(f64_to_f16(1.0 + 1.0 / 2048.0), 0x3C00); // tie to even
    }

    #[test]
    fn flags_of_basic_operations() {
        let mut f = 0;
        assert!(op32(BinOp::Mul, 0.0, f32::INFINITY, M, &mut f).is_nan());
        assert_eq!(f, flag::INVALID);
        let mut f = 0;
        assert_eq!(op32(BinOp::Mul, 3e38, 10.0, M, &mut f), f32::INFINITY);
        assert_eq!(f, flag::OVERFLOW | flag::INEXACT);
        let mut f = 0;
        assert!(op32(BinOp::Mul, 1.5e-20, 3.3e-20, M, &mut f).is_subnormal());
        assert_eq!(f, flag::UNDERFLOW | flag::INEXACT);
        let mut f = 0;
        assert_eq!(op32(BinOp::Add, 1.0, 2.0, M, &mut f), 3.0);
        assert_eq!(f, 0);
    }

    #[test]
    fn fma32_is_correctly_rounded_where_double_rounding_would_fail() {
        // a*b = 1 + 2^-24 + 2^-48 exactly... choose a case where the f64 sum lands
        // on an f32 midpoint: 1 + 2^-24 (tie) plus a tiny positive part.
        let a = 1.0f32 + f32::EPSILON; // 1 + 2^-23
        let b = 1.0f32 + f32::EPSILON;
        // a*b = 1 + 2^-22 + 2^-46; c pulls it to 1 + 2^-24 + 2^-46 - ...
        let c = -(2f32.powi(-22) - 2f32.powi(-24));
        let mut f = 0;
        let r = fma32(a, b, c, M, &mut f);
        let exact = 1.0f64 + 2f64.powi(-24) + 2f64.powi(-46);
        assert_eq!(r, exact as f32);
        assert_eq!(r, 1.0f32 + f32::EPSILON); // above the tie: rounds up
    }
}
