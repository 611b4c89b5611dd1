//! The sweep's inputs and its host reference: per lane, the values of the
//! register pools, and for the opcodes whose result IEEE arithmetic (or a
//! documented rule) fixes, the expected result computed on the host with
//! Rust's own f32/f64 arithmetic. Opcodes without such a rule (approximate
//! transcendentals, the division helpers, legacy and mixed-precision forms,
//! matrix instructions) have none and are listed by the sweep as such.

use super::kernels::{self, SweepKernel};
use xfpx_amd_isa::{CmpCond, DataType, Family, Opcode};

/// Sixteen f32 values: zeros, normals, extremes, subnormals, infinities
/// and quiet NaNs (no signalling NaN: their handling is not documented
/// per instruction).
const F32_VALUES: [u32; 16] = [
    0x0000_0000,
    0x8000_0000,
    0x3F80_0000,
    0xBFC0_0000,
    0x4020_0000,
    0x7149_F2CA, // 1e30
    0x8DA2_4260, // -1e-30
    0x7F7F_FFFF,
    0x0080_0000,
    0x0000_0001,
    0x807F_FFFF,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x7FC1_2345,
    0x3DCC_CCCD, // 0.1
];
const F16_VALUES: [u16; 16] = [
    0x0000, 0x8000, 0x3C00, 0xBE00, 0x4100, 0x7BFF, 0x0400, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x7E00, 0x2E66, 0x63D0,
    0xC200, 0x3555,
];
const INT_VALUES: [u32; 16] = [
    0,
    1,
    u32::MAX,
    7,
    (-30i32) as u32,
    100,
    (1 << 24) + 1,
    i32::MAX as u32,
    i32::MIN as u32,
    0x7FFF,
    (-0x8000i32) as u32,
    255,
    3,
    1_000_000,
    (-150i32) as u32,
    0x8000_00FF,
];
const F64_VALUES: [u64; 16] = [
    0,
    1 << 63,
    0x3FF0_0000_0000_0000,
    0xBFF8_0000_0000_0000,
    0x4004_0000_0000_0000,
    0x7E37_E43C_8800_759C, // 1e300
    0x81B0_FAE5_44A0_D72E, // about -1e-300
    0x7FEF_FFFF_FFFF_FFFF,
    0x0010_0000_0000_0000,
    1,
    0x800F_FFFF_FFFF_FFFF,
    0x7FF0_0000_0000_0000,
    0xFFF0_0000_0000_0000,
    0x7FF8_0000_0000_0000,
    0x3FB9_9999_9999_999A, // 0.1
    0x3DDB_7CDF_D9D7_BDBB, // 1e-10
];

/// Input dwords per lane: lane `l` combines value `l mod 16` with
/// permutations of the others, so that 64 lanes meet every value in every
/// position.
pub fn inputs() -> Vec<[u32; kernels::INPUT_DWORDS]> {
    (0..64usize)
        .map(|l| {
            let ix = [l % 16, (7 * l + 3) % 16, (5 * l + 1) % 16];
            let mut d = [0u32; kernels::INPUT_DWORDS];
            let mut put = |reg: u16, v: u32| d[reg as usize - 2] = v;
            for (i, &x) in ix.iter().enumerate() {
                put(kernels::F32[i], F32_VALUES[x]);
                let hi = F16_VALUES[(x + 5 + i) % 16];
                put(kernels::F16X2[i], F16_VALUES[x] as u32 | (hi as u32) << 16);
                put(kernels::INT[i], INT_VALUES[x]);
                let f = F64_VALUES[x];
                put(kernels::F64[i], f as u32);
                put(kernels::F64[i] + 1, (f >> 32) as u32);
            }
            put(kernels::CLASS_MASK, ((l as u32 * 0x2F3) + 0x15) & 0x3FF);
            d
        })
        .collect()
}

/// An expected result of one lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Want {
    F32(f32),
    F64(f64),
    /// An f16 result in the low half, the high half zero.
    F16(u16),
    /// An f16 result in the high half, the low half as it was (given).
    F16Hi(u16, u16),
    /// Two f16 halves (low, high).
    F16x2(u16, u16),
    F32x2(f32, f32),
    /// A lane of a mask (0 or 1 in the output dword).
    Mask(bool),
    /// No rule for this lane (e.g. minimum of +0 and -0).
    Unspecified,
}

/// Why an opcode has no host reference.
pub const NO_RULE: &str = "no host reference (approximate, hardware-specific or not publicly specified)";

/// The expected result per lane of kernel `k` for `inputs`, or why there is none.
pub fn expected(k: &SweepKernel, inputs: &[[u32; kernels::INPUT_DWORDS]]) -> Result<Vec<Want>, &'static str> {
    let rule = rule(k.op()).ok_or(NO_RULE)?;
    Ok(inputs
        .iter()
        .map(|d| {
            let l = Lane { k, d };
            match (rule.apply(&l), k.sdwa) {
                // An SDWA destination select: the high half, the low one kept.
                (Want::F16(h), Some(f)) if f.dst_hi => Want::F16Hi(h, l.reg(l.acc()) as u16),
                (w, _) => w,
            }
        })
        .collect())
}

/// One lane's registers as kernel `k` reads them.
struct Lane<'a> {
    k: &'a SweepKernel,
    d: &'a [u32; kernels::INPUT_DWORDS],
}

impl Lane<'_> {
    fn reg(&self, r: u16) -> u32 {
        self.d[r as usize - 2]
    }
    /// Source `i` as the instruction reads it (an SDWA `WORD_1` select:
    /// its high half).
    fn src32(&self, i: usize) -> u32 {
        let v = self.reg(self.k.sources[i].first);
        match self.k.sdwa {
            Some(f) if i < 2 && f.src_hi[i] => v >> 16,
            _ => v,
        }
    }
    fn src64(&self, i: usize) -> u64 {
        let r = self.k.sources[i].first;
        self.reg(r) as u64 | (self.reg(r + 1) as u64) << 32
    }
    /// The destination's value before the instruction (the accumulator of
    /// `v_fmac`/`v_mac`): first register.
    fn acc(&self) -> u16 {
        self.k.dst_init.expect("an accumulating kernel starts its destination from a pool").first
    }
    /// Source `i`, or past the sources, the accumulator.
    fn src_or_acc32(&self, i: usize) -> u32 {
        if i < self.k.sources.len() {
            self.src32(i)
        } else {
            self.reg(self.acc())
        }
    }
    fn src_or_acc64(&self, i: usize) -> u64 {
        if i < self.k.sources.len() {
            self.src64(i)
        } else {
            self.reg(self.acc()) as u64 | (self.reg(self.acc() + 1) as u64) << 32
        }
    }
}

/// The operation of an opcode with a host rule.
#[derive(Debug, Clone, Copy)]
enum Rule {
    F32(F),
    F64(F),
    F16(F),
    PkF16(F),
    PkF32(F),
    Compare(DataType, CmpCond),
    /// Conversions between types: (from, to).
    Convert(DataType, DataType),
    /// `v_cvt_f32_ubyteN`.
    Ubyte(u32),
    /// `v_cvt_off_f32_i4`: a signed 4-bit integer in sixteenths.
    OffI4,
    /// `v_cvt_pkrtz_f16_f32`: two f32 to f16, rounded toward zero.
    PkRtz,
}

/// Floating-point operations, on values widened exactly to f64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum F {
    Add,
    Sub,
    Subrev,
    Mul,
    Fma,
    /// `D = S0 * S1 + D` (the destination holds the third pool's value).
    Fmac,
    /// Unfused multiply-add with f32 denormals flushed (`v_mad_f32`,
    /// `v_mac_f32`, `v_madmk`/`v_madak`): the ISA's "denormals are flushed".
    MadFlush,
    FmaMk,
    FmaAk,
    Min,
    Max,
    Min3,
    Max3,
    Med3,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    Fract,
    Ldexp,
    FrexpMant,
}

fn rule(op: Opcode) -> Option<Rule> {
    use Opcode as O;
    if let Some(c) = op.compare() {
        return matches!(c.ty, DataType::F16 | DataType::F32 | DataType::F64).then_some(Rule::Compare(c.ty, c.cond));
    }
    let f = match op.stem() {
        O::V_ADD_F32_E32 | O::V_ADD_F64 | O::V_ADD_F16_E32 | O::V_PK_ADD_F16 | O::V_PK_ADD_F32 => F::Add,
        O::V_SUB_F32_E32 | O::V_SUB_F16_E32 => F::Sub,
        O::V_SUBREV_F32_E32 | O::V_SUBREV_F16_E32 => F::Subrev,
        O::V_MUL_F32_E32 | O::V_MUL_F64 | O::V_MUL_F16_E32 | O::V_PK_MUL_F16 | O::V_PK_MUL_F32 => F::Mul,
        O::V_FMA_F32 | O::V_FMA_F64 | O::V_FMA_F16 | O::V_PK_FMA_F16 | O::V_PK_FMA_F32 => F::Fma,
        O::V_FMAC_F32_E32 | O::V_FMAC_F64_E32 | O::V_PK_FMAC_F16_E32 => F::Fmac,
        O::V_MAD_F32 | O::V_MAC_F32_E32 | O::V_MADMK_F32 | O::V_MADAK_F32 => F::MadFlush,
        O::V_FMAMK_F32 => F::FmaMk,
        O::V_FMAAK_F32 => F::FmaAk,
        O::V_MIN_F32_E32 | O::V_MIN_F64 | O::V_MIN_F16_E32 | O::V_PK_MIN_F16 => F::Min,
        O::V_MAX_F32_E32 | O::V_MAX_F64 | O::V_MAX_F16_E32 | O::V_PK_MAX_F16 => F::Max,
        O::V_MIN3_F32 | O::V_MIN3_F16 => F::Min3,
        O::V_MAX3_F32 | O::V_MAX3_F16 => F::Max3,
        O::V_MED3_F32 | O::V_MED3_F16 => F::Med3,
        O::V_FLOOR_F32_E32 | O::V_FLOOR_F64_E32 | O::V_FLOOR_F16_E32 => F::Floor,
        O::V_CEIL_F32_E32 | O::V_CEIL_F64_E32 | O::V_CEIL_F16_E32 => F::Ceil,
        O::V_TRUNC_F32_E32 | O::V_TRUNC_F64_E32 | O::V_TRUNC_F16_E32 => F::Trunc,
        O::V_RNDNE_F32_E32 | O::V_RNDNE_F64_E32 | O::V_RNDNE_F16_E32 => F::Rndne,
        O::V_FRACT_F32_E32 | O::V_FRACT_F64_E32 | O::V_FRACT_F16_E32 => F::Fract,
        O::V_LDEXP_F32 | O::V_LDEXP_F64 | O::V_LDEXP_F16_E32 => F::Ldexp,
        O::V_FREXP_MANT_F32_E32 | O::V_FREXP_MANT_F64_E32 | O::V_FREXP_MANT_F16_E32 => F::FrexpMant,
        O::V_CVT_OFF_F32_I4_E32 => return Some(Rule::OffI4),
        O::V_CVT_PKRTZ_F16_F32 => return Some(Rule::PkRtz),
        O::V_CVT_F32_UBYTE0_E32 => return Some(Rule::Ubyte(0)),
        O::V_CVT_F32_UBYTE1_E32 => return Some(Rule::Ubyte(1)),
        O::V_CVT_F32_UBYTE2_E32 => return Some(Rule::Ubyte(2)),
        O::V_CVT_F32_UBYTE3_E32 => return Some(Rule::Ubyte(3)),
        O::V_CVT_F32_I32_E32 => return Some(Rule::Convert(DataType::I32, DataType::F32)),
        O::V_CVT_F32_U32_E32 => return Some(Rule::Convert(DataType::U32, DataType::F32)),
        O::V_CVT_F64_I32_E32 => return Some(Rule::Convert(DataType::I32, DataType::F64)),
        O::V_CVT_F64_U32_E32 => return Some(Rule::Convert(DataType::U32, DataType::F64)),
        O::V_CVT_F32_F64_E32 => return Some(Rule::Convert(DataType::F64, DataType::F32)),
        O::V_CVT_F64_F32_E32 => return Some(Rule::Convert(DataType::F32, DataType::F64)),
        O::V_CVT_F32_F16_E32 => return Some(Rule::Convert(DataType::F16, DataType::F32)),
        O::V_CVT_F16_F32_E32 => return Some(Rule::Convert(DataType::F32, DataType::F16)),
        O::V_CVT_F16_I16_E32 => return Some(Rule::Convert(DataType::I16, DataType::F16)),
        O::V_CVT_F16_U16_E32 => return Some(Rule::Convert(DataType::U16, DataType::F16)),
        _ => return None,
    };
    let packed = op.family() == Family::Packed;
    Some(match op.data_type()? {
        DataType::F16 if packed => Rule::PkF16(f),
        DataType::F32 if packed => Rule::PkF32(f),
        DataType::F32 => Rule::F32(f),
        DataType::F64 => Rule::F64(f),
        DataType::F16 => Rule::F16(f),
        _ => return None,
    })
}

impl Rule {
    fn apply(self, l: &Lane<'_>) -> Want {
        let op = l.k.op();
        let s32 = |i: usize| l.src32(i);
        match self {
            Rule::F32(f) => {
                let x = |i: usize| f32::from_bits(l.src_or_acc32(i)) as f64;
                match f {
                    F::Ldexp => Want::F32(ldexp(x(0), l.src32(1) as i32) as f32),
                    F::MadFlush => {
                        let ftz = |v: f64| if (v as f32).is_subnormal() { 0.0f64.copysign(v) } else { v };
                        let (a, b, c) = match op.stem() {
                            Opcode::V_MADMK_F32 => (x(0), 1.5, x(1)),
                            Opcode::V_MADAK_F32 => (x(0), x(1), 1.5),
                            _ => (x(0), x(1), x(2)),
                        };
                        let p = ftz(((ftz(a) * ftz(b)) as f32) as f64);
                        Want::F32(ftz(((p + ftz(c)) as f32) as f64) as f32)
                    }
                    _ => op_f64(f, &x, 1.5, Width::F32).map_or(Want::Unspecified, |v| Want::F32(v as f32)),
                }
            }
            Rule::F64(f) => {
                let x = |i: usize| f64::from_bits(l.src_or_acc64(i));
                match f {
                    F::Ldexp => Want::F64(ldexp(x(0), l.src32(1) as i32)),
                    _ => op_f64(f, &x, 1.5, Width::F64).map_or(Want::Unspecified, Want::F64),
                }
            }
            Rule::F16(f) => f16_result(f, &|i| f16_to_f64(l.src_or_acc32(i) as u16), &s32),
            Rule::PkF16(f) => {
                let lo = |i: usize| f16_to_f64(l.src_or_acc32(i) as u16);
                let hi = |i: usize| f16_to_f64((l.src_or_acc32(i) >> 16) as u16);
                match (f16_result(f, &lo, &s32), f16_result(f, &hi, &s32)) {
                    (Want::F16(a), Want::F16(b)) => Want::F16x2(a, b),
                    _ => Want::Unspecified,
                }
            }
            Rule::PkF32(f) => {
                let lo = |i: usize| f32::from_bits(l.src64(i) as u32) as f64;
                let hi = |i: usize| f32::from_bits((l.src64(i) >> 32) as u32) as f64;
                match (op_f64(f, &lo, 0.0, Width::F32), op_f64(f, &hi, 0.0, Width::F32)) {
                    (Some(a), Some(b)) => Want::F32x2(a as f32, b as f32),
                    _ => Want::Unspecified,
                }
            }
            Rule::Compare(ty, CmpCond::Class) => {
                let (a, sub) = match ty {
                    DataType::F32 => {
                        let x = f32::from_bits(l.src32(0));
                        (x as f64, x.is_subnormal())
                    }
                    DataType::F16 => {
                        let h = l.src32(0) as u16;
                        (f16_to_f64(h), h & 0x7C00 == 0 && h & 0x3FF != 0)
                    }
                    _ => {
                        let x = f64::from_bits(l.src64(0));
                        (x, x.is_subnormal())
                    }
                };
                Want::Mask(l.src32(1) >> class_bit(a, sub) & 1 != 0)
            }
            Rule::Compare(ty, cond) => {
                let (a, b) = match ty {
                    DataType::F32 => (f32::from_bits(l.src32(0)) as f64, f32::from_bits(l.src32(1)) as f64),
                    DataType::F16 => (f16_to_f64(l.src32(0) as u16), f16_to_f64(l.src32(1) as u16)),
                    _ => (f64::from_bits(l.src64(0)), f64::from_bits(l.src64(1))),
                };
                compare(cond, a, b).map_or(Want::Unspecified, Want::Mask)
            }
            Rule::Convert(from, to) => {
                let v: f64 = match from {
                    DataType::I32 => l.src32(0) as i32 as f64,
                    DataType::U32 => l.src32(0) as f64,
                    DataType::I16 => l.src32(0) as u16 as i16 as f64,
                    DataType::U16 => l.src32(0) as u16 as f64,
                    DataType::F16 => f16_to_f64(l.src32(0) as u16),
                    DataType::F32 => f32::from_bits(l.src32(0)) as f64,
                    _ => f64::from_bits(l.src64(0)),
                };
                match to {
                    DataType::F32 => Want::F32(v as f32),
                    DataType::F16 => Want::F16(f16_of(v)),
                    _ => Want::F64(v),
                }
            }
            Rule::Ubyte(n) => Want::F32((l.src32(0) >> (8 * n) & 0xFF) as f32),
            Rule::OffI4 => {
                Want::F32(((l.src32(0) & 0xF) as i32 - if l.src32(0) & 8 != 0 { 16 } else { 0 }) as f32 / 16.0)
            }
            Rule::PkRtz => {
                let rtz = |bits: u32| f16_toward_zero(f32::from_bits(bits) as f64);
                Want::F16x2(rtz(l.src32(0)), rtz(l.src32(1)))
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    F16,
    F32,
    F64,
}

/// The exact (or, for f64, correctly rounded) value of `f` on the
/// sources, before rounding to the result format; `None` where no rule
/// fixes the result.
fn op_f64(f: F, x: &dyn Fn(usize) -> f64, k: f64, w: Width) -> Option<f64> {
    let nan = |v: f64| v.is_nan();
    Some(match f {
        F::Add => x(0) + x(1),
        F::Sub => x(0) - x(1),
        F::Subrev => x(1) - x(0),
        F::Mul => x(0) * x(1),
        F::Fma | F::Fmac | F::FmaMk | F::FmaAk => {
            let (a, b, c) = match f {
                F::FmaMk => (x(0), k, x(1)),
                F::FmaAk => (x(0), x(1), k),
                _ => (x(0), x(1), x(2)),
            };
            if w == Width::F32 {
                (a as f32).mul_add(b as f32, c as f32) as f64
            } else {
                a.mul_add(b, c)
            }
        }
        F::Min | F::Max => min_max(x(0), x(1), f == F::Max)?,
        F::Min3 | F::Max3 => {
            let t = min_max(x(0), x(1), f == F::Max3)?;
            min_max(t, x(2), f == F::Max3)?
        }
        F::Med3 => {
            let (a, b, c) = (x(0), x(1), x(2));
            if nan(a) || nan(b) || nan(c) || [a, b, c].iter().filter(|v| **v == 0.0).count() > 1 {
                return None;
            }
            let mut v = [a, b, c];
            v.sort_by(|p, q| p.partial_cmp(q).expect("no NaN"));
            v[1]
        }
        F::Floor => x(0).floor(),
        F::Ceil => x(0).ceil(),
        F::Trunc => x(0).trunc(),
        F::Rndne => x(0).round_ties_even(),
        F::Fract => {
            let v = x(0);
            if !v.is_finite() {
                return None;
            }
            let below_one = match w {
                Width::F16 => f16_to_f64(0x3BFF),
                Width::F32 => f32::from_bits(0x3F7F_FFFF) as f64,
                Width::F64 => f64::from_bits(0x3FEF_FFFF_FFFF_FFFF),
            };
            let r = v - v.floor();
            // The subtraction is exact in f64; the clamp applies to the
            // result rounded to its format.
            match w {
                Width::F16 => f16_to_f64(f16_of(r)).min(below_one),
                Width::F32 => ((r as f32) as f64).min(below_one),
                Width::F64 => r.min(below_one),
            }
        }
        F::FrexpMant => {
            let v = x(0);
            if !v.is_finite() {
                return None;
            }
            if v == 0.0 {
                v
            } else {
                // Two steps: 2^-e alone may not be a finite f64.
                let e = frexp_exp(v);
                v * 2f64.powi(-e / 2) * 2f64.powi(-e + e / 2)
            }
        }
        F::Ldexp | F::MadFlush => return None,
    })
}

fn f16_result(f: F, x: &dyn Fn(usize) -> f64, s32: &dyn Fn(usize) -> u32) -> Want {
    match f {
        F::Ldexp => Want::F16(f16_of(ldexp(x(0), s32(1) as i32))),
        F::Fma | F::Fmac => {
            let r = x(0).mul_add(x(1), x(2));
            // f64 rounding of an f16 fma is exact except where it lands
            // on an f16 rounding boundary, which the host cannot resolve.
            if is_f16_midpoint(r) {
                Want::Unspecified
            } else {
                Want::F16(f16_of(r))
            }
        }
        F::MadFlush => Want::Unspecified,
        _ => op_f64(f, x, 1.5, Width::F16).map_or(Want::Unspecified, |v| Want::F16(f16_of(v))),
    }
}

/// IEEE 754-2008 minNum/maxNum for quiet NaNs; `None` for +0 against -0
/// (which the standard leaves open).
fn min_max(a: f64, b: f64, max: bool) -> Option<f64> {
    if a.is_nan() {
        return Some(b);
    }
    if b.is_nan() {
        return Some(a);
    }
    if a == 0.0 && b == 0.0 && a.is_sign_negative() != b.is_sign_negative() {
        return None;
    }
    Some(if (a < b) != max { a } else { b })
}

/// A comparison; the negated ones are true on unordered operands.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn compare(cond: CmpCond, a: f64, b: f64) -> Option<bool> {
    let un = a.is_nan() || b.is_nan();
    Some(match cond {
        CmpCond::F => false,
        CmpCond::Tru => true,
        CmpCond::Lt => a < b,
        CmpCond::Eq => a == b,
        CmpCond::Le => a <= b,
        CmpCond::Gt => a > b,
        CmpCond::Lg => !un && a != b,
        CmpCond::Ge => a >= b,
        CmpCond::O => !un,
        CmpCond::U => un,
        CmpCond::Nge => !(a >= b),
        CmpCond::Nlg => un || a == b,
        CmpCond::Ngt => !(a > b),
        CmpCond::Nle => !(a <= b),
        CmpCond::Neq => a != b,
        CmpCond::Nlt => !(a < b),
        _ => return None,
    })
}

/// The `v_cmp_class` bit of a value (no signalling NaN among the inputs).
fn class_bit(x: f64, subnormal: bool) -> u32 {
    let neg = x.is_sign_negative();
    match () {
        _ if x.is_nan() => 1,
        _ if x.is_infinite() => {
            if neg {
                2
            } else {
                9
            }
        }
        _ if x == 0.0 => {
            if neg {
                5
            } else {
                6
            }
        }
        _ if subnormal => {
            if neg {
                4
            } else {
                7
            }
        }
        _ => {
            if neg {
                3
            } else {
                8
            }
        }
    }
}

/// x · 2^e with one rounding (to f64; the caller rounds to its format,
/// exact because the scaling is).
fn ldexp(x: f64, e: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let e = e.clamp(-2200, 2200);
    let mut r = x;
    let mut left = e;
    // Steps that stay exact: the result remains a normal f64.
    while left != 0 {
        let step = left.clamp(-1000, 1000);
        let t = r * 2f64.powi(step);
        if t.is_infinite() || (t != 0.0 && t.abs() >= f64::MIN_POSITIVE) || left == step {
            r = t;
            left -= step;
            if t.is_infinite() {
                break;
            }
        } else {
            // Going subnormal: one final multiplication rounds once.
            r *= 2f64.powi(step);
            left -= step;
            if r == 0.0 {
                break;
            }
        }
    }
    r
}

fn frexp_exp(v: f64) -> i32 {
    let mut e = v.abs().log2().floor() as i32 + 1;
    let m = v.abs() * 2f64.powi(-e / 2) * 2f64.powi(-e + e / 2);
    if m >= 1.0 {
        e += 1;
    } else if m < 0.5 {
        e -= 1;
    }
    e
}

/// An f16 as f64 (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10 & 0x1F) as i32;
    let m = (h & 0x3FF) as f64;
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// An f64 rounded to f16 (to nearest, ties to even; subnormals kept).
pub fn f16_of(v: f64) -> u16 {
    if v.is_nan() {
        return 0x7E00;
    }
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = v.abs();
    if a >= 65520.0 {
        return sign | 0x7C00;
    }
    // Units of the f16 grid at a's magnitude.
    let e = if a < 2f64.powi(-14) { -14 } else { a.log2().floor() as i32 };
    let e = e.max(-14);
    let ulp = 2f64.powi(e - 10);
    let q = (a / ulp).round_ties_even() * ulp;
    if q == 0.0 {
        return sign;
    }
    let qe = if q < 2f64.powi(-14) { 0 } else { (q.log2().floor() as i32 + 15) as u16 };
    if qe >= 31 {
        return sign | 0x7C00;
    }
    let mant =
        if qe == 0 { (q / 2f64.powi(-24)) as u16 } else { ((q / 2f64.powi(qe as i32 - 15) - 1.0) * 1024.0) as u16 };
    sign | qe << 10 | mant
}

/// An f64 rounded toward zero to f16: beyond the largest finite f16, that
/// f16 (infinities and NaN stay what they are).
fn f16_toward_zero(v: f64) -> u16 {
    if v.is_nan() || v.is_infinite() {
        return f16_of(v);
    }
    let h = f16_of(v);
    let h = if f16_to_f64(h).abs() > v.abs() { h - 1 } else { h };
    if h & 0x7FFF == 0x7C00 {
        h - 1
    } else {
        h
    }
}

/// Whether an f64 lies exactly halfway between two f16 values.
fn is_f16_midpoint(v: f64) -> bool {
    if !v.is_finite() || v == 0.0 {
        return false;
    }
    let a = v.abs();
    let e = if a < 2f64.powi(-14) { -14 } else { a.log2().floor() as i32 }.max(-14);
    let ulp = 2f64.powi(e - 10);
    (a / ulp).fract() == 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversions_round_trip_every_value() {
        for h in 0..=u16::MAX {
            let v = f16_to_f64(h);
            if v.is_nan() {
                continue;
            }
            assert_eq!(f16_of(v), h, "{h:#06x} {v}");
        }
        assert_eq!(f16_of(65519.0), 0x7BFF);
        assert_eq!(f16_of(65520.0), 0x7C00);
        assert_eq!(f16_of(2f64.powi(-25)), 0, "ties to even at the smallest subnormal");
        assert_eq!(f16_of(3.0 * 2f64.powi(-25)), 2);
    }
}
