//! The SASS opcode table: for each floating-point opcode (optionally
//! narrowed by one modifier), what it does numerically, how many leading
//! operands it writes, and the register widths of its operands. This is
//! the one place these facts live; `tests/fixtures.rs`
//! (`opcode_table_matches_the_listings`) checks it against the listings
//! captured in `tests/fixtures/`.

use xfpx_common::class::{FpFormat, FpOp, InstrClass};

/// What an opcode computes, before its format is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Arith(FpOp),
    Compare,
    Select,
    MinMax,
    Matrix,
    /// Reads floating-point values but writes an integer (F2I) or a
    /// predicate that is not a comparison result (FCHK): no FP result.
    FpToOther,
}

/// Where an opcode's format comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatRule {
    /// Always this format.
    Fixed(FpFormat),
    /// The first type modifier (`F16`, `BF16`, `F32`, `F64`), else the
    /// default (conversions: `F2F.F64.F32` produces f64).
    FirstType(FpFormat),
    /// The second type modifier if there are two, else the default
    /// (`F2I.S64.F64` reads f64).
    SourceType(FpFormat),
}

/// What the leading written operands hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefRole {
    /// A floating-point value of the instruction's format.
    Value,
    /// A floating-point value written to the high word of a 64-bit pair
    /// (`MUFU.RCP64H`, `MUFU.RSQ64H`): the register named is the odd one.
    HighWord,
    /// Predicates (comparisons, FCHK).
    Predicates,
    /// An integer or a mask (F2I, FSET/HSET2 masks).
    Integer,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// Base opcode, e.g. `FADD`, `MUFU`.
    pub opcode: &'static str,
    /// A modifier that must be present for this row to apply (e.g. `RCP`
    /// for `MUFU.RCP`, `BF16_V2` for `HADD2.BF16_V2`).
    pub modifier: Option<&'static str>,
    pub kind: OpKind,
    pub format: FormatRule,
    /// Number of leading operands written.
    pub defs: u8,
    pub def_role: DefRole,
    /// Width in 32-bit registers of each written value, when it differs
    /// from the format's (matrix accumulators).
    pub def_words: Option<u8>,
    /// Format of the sources, when it differs from the result's.
    pub source_format: Option<FormatRule>,
    /// Also present in the captured fixtures (checked by a test).
    pub in_fixtures: bool,
    /// With both multiplicands zero (`HFMA2.MMA R7, -RZ, RZ, 1.875, 0`)
    /// the instruction is the compiler's idiom for loading a 32-bit
    /// constant, not arithmetic.
    pub zero_product_is_move: bool,
    /// With one multiplicand `RZ` the instruction is the compiler's idiom
    /// for testing registers in a single-precision comparison, usually the
    /// high words of f64 values in a division (`FFMA R0, RZ, 2.6, R235`:
    /// the quotient's magnitude; `FFMA R0, RZ, R9, R235`: also whether the
    /// divisor's high word is infinite, which makes it NaN). Not
    /// arithmetic of the program: not checked (a NaN or infinity there is
    /// the f64's, checked where that is made); for the analyses, a copy of
    /// the addend.
    pub zero_multiplicand_is_test: bool,
}

use DefRole::*;
use FormatRule::*;
use FpFormat::*;
use FpOp::*;
use OpKind::*;

const fn row(opcode: &'static str, modifier: Option<&'static str>, kind: OpKind, format: FormatRule) -> OpcodeInfo {
    OpcodeInfo {
        opcode,
        modifier,
        kind,
        format,
        defs: 1,
        def_role: Value,
        def_words: None,
        source_format: None,
        in_fixtures: true,
        zero_product_is_move: false,
        zero_multiplicand_is_test: false,
    }
}

const fn constant_idiom(mut r: OpcodeInfo) -> OpcodeInfo {
    r.zero_product_is_move = true;
    r
}

const fn zero_multiplicand_test(mut r: OpcodeInfo) -> OpcodeInfo {
    r.zero_multiplicand_is_test = true;
    r
}

const fn defs(mut r: OpcodeInfo, n: u8, role: DefRole) -> OpcodeInfo {
    r.defs = n;
    r.def_role = role;
    r
}

const fn not_captured(mut r: OpcodeInfo) -> OpcodeInfo {
    r.in_fixtures = false;
    r
}

const fn sources(mut r: OpcodeInfo, f: FormatRule) -> OpcodeInfo {
    r.source_format = Some(f);
    r
}

const fn words(mut r: OpcodeInfo, n: u8) -> OpcodeInfo {
    r.def_words = Some(n);
    r
}

/// The table. Rows with a modifier come before the row without, for the
/// same opcode: the first matching row wins.
pub static OPCODES: &[OpcodeInfo] = &[
    // FP32
    row("FADD", None, Arith(Add), Fixed(F32)),
    not_captured(row("FADD32I", None, Arith(Add), Fixed(F32))),
    row("FMUL", None, Arith(Mul), Fixed(F32)),
    not_captured(row("FMUL32I", None, Arith(Mul), Fixed(F32))),
    zero_multiplicand_test(row("FFMA", None, Arith(Fma), Fixed(F32))),
    zero_multiplicand_test(not_captured(row("FFMA32I", None, Arith(Fma), Fixed(F32)))),
    row("MUFU", Some("RCP"), Arith(Div), FirstType(F32)),
    row("MUFU", Some("RSQ"), Arith(Rsqrt), FirstType(F32)),
    not_captured(row("MUFU", Some("SQRT"), Arith(Sqrt), FirstType(F32))),
    row("MUFU", Some("EX2"), Arith(Transcendental), FirstType(F32)),
    row("MUFU", Some("LG2"), Arith(Transcendental), FirstType(F32)),
    row("MUFU", Some("SIN"), Arith(Transcendental), FirstType(F32)),
    row("MUFU", Some("COS"), Arith(Transcendental), FirstType(F32)),
    row("MUFU", Some("TANH"), Arith(Transcendental), FirstType(F32)),
    defs(row("MUFU", Some("RCP64H"), Arith(Div), Fixed(F64)), 1, HighWord),
    defs(row("MUFU", Some("RSQ64H"), Arith(Rsqrt), Fixed(F64)), 1, HighWord),
    row("FMNMX", None, MinMax, Fixed(F32)),
    row("FSEL", None, Select, Fixed(F32)),
    defs(row("FSET", None, Compare, Fixed(F32)), 1, Integer),
    defs(row("FSETP", None, Compare, Fixed(F32)), 2, Predicates),
    defs(row("FCHK", None, FpToOther, Fixed(F32)), 1, Predicates),
    not_captured(row("FRND", Some("F64"), Arith(Conversion), Fixed(F64))),
    row("FRND", None, Arith(Conversion), Fixed(F32)),
    // FP64
    row("DADD", None, Arith(Add), Fixed(F64)),
    row("DMUL", None, Arith(Mul), Fixed(F64)),
    row("DFMA", None, Arith(Fma), Fixed(F64)),
    defs(row("DSETP", None, Compare, Fixed(F64)), 2, Predicates),
    not_captured(row("DMNMX", None, MinMax, Fixed(F64))),
    // packed halves: f16x2 by default, bf16x2 with .BF16_V2, f32 results with .F32
    sources(not_captured(row("HADD2", Some("F32"), Arith(Add), Fixed(F32))), Fixed(F16x2)),
    row("HADD2", Some("BF16_V2"), Arith(Add), Fixed(Bf16x2)),
    row("HADD2", None, Arith(Add), Fixed(F16x2)),
    row("HMUL2", Some("BF16_V2"), Arith(Mul), Fixed(Bf16x2)),
    row("HMUL2", None, Arith(Mul), Fixed(F16x2)),
    sources(not_captured(row("HFMA2", Some("F32"), Arith(Fma), Fixed(F32))), Fixed(F16x2)),
    constant_idiom(row("HFMA2", Some("BF16_V2"), Arith(Fma), Fixed(Bf16x2))),
    constant_idiom(row("HFMA2", None, Arith(Fma), Fixed(F16x2))),
    row("HMNMX2", Some("BF16_V2"), MinMax, Fixed(Bf16x2)),
    row("HMNMX2", None, MinMax, Fixed(F16x2)),
    defs(row("HSET2", Some("BF16_V2"), Compare, Fixed(Bf16x2)), 1, Integer),
    defs(row("HSET2", None, Compare, Fixed(F16x2)), 1, Integer),
    defs(not_captured(row("HSETP2", Some("BF16_V2"), Compare, Fixed(Bf16x2))), 2, Predicates),
    defs(not_captured(row("HSETP2", None, Compare, Fixed(F16x2))), 2, Predicates),
    // conversions
    sources(row("F2F", None, Arith(Conversion), FirstType(F32)), SourceType(F32)),
    row("I2F", None, Arith(Conversion), FirstType(F32)),
    // two f32 packed into one register of halves
    sources(not_captured(row("F2FP", Some("BF16"), Arith(Conversion), Fixed(Bf16x2))), Fixed(F32)),
    sources(row("F2FP", None, Arith(Conversion), Fixed(F16x2)), Fixed(F32)),
    row("I2FP", None, Arith(Conversion), FirstType(F32)),
    sources(defs(row("F2I", None, FpToOther, SourceType(F32)), 1, Integer), SourceType(F32)),
    // matrix: the accumulator format; 16x8 f32 accumulators are 4 registers.
    // HGMMA (sm_90 warpgroup MMA) is absent on purpose: it writes its
    // accumulators asynchronously, until a later warpgroup wait, so a check
    // right after it would read registers not yet written. Its results are
    // checked where floating-point instructions of the epilogue use them.
    words(row("HMMA", Some("F32"), Matrix, Fixed(F32)), 4),
    words(row("HMMA", Some("F16"), Matrix, Fixed(F16x2)), 2),
];

/// Opcodes whose result is NaN or infinite whenever one of their register
/// sources is (IEEE 754 arithmetic, conversions between float formats,
/// matrix multiply-accumulate), unless a modifier of [`CLAMPING`] is set.
pub static PROPAGATING: &[&str] =
    &["FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "DADD", "DMUL", "DFMA", "F2F", "FRND", "HMMA"];

/// Comparison modifiers of `FSETP`/`DSETP` that bound a magnitude: with
/// `|x|` compared to a constant, a guard reading the predicate negated
/// (`true`: `@!P0`) or as is (`false`: `@P0`) runs its instruction only
/// where `|x|` is at most the constant and `x` is a number (`GEU` is true
/// for NaN, so `@!P0` excludes it).
pub static MAGNITUDE_AT_MOST: &[(&str, bool)] = &[("GEU", true), ("GTU", true), ("LT", false), ("LE", false)];

/// `FSETP` comparisons that are false for NaN and true only above the
/// bound: `|x| GT bound` (the fast-path test of an f64 division).
pub static MAGNITUDE_ABOVE: &[&str] = &["GT", "GE"];

/// Multiplications that scale exactly by a power-of-two constant, and the
/// mantissa bits of their format: a scale of at least 2^mantissa makes
/// every nonzero result normal.
pub static SCALINGS: &[(&str, FpFormat, u32)] = &[("FMUL", F32, 23), ("DMUL", F64, 52)];

/// Reciprocals the compiler starts divisions with: opcode, modifier, and
/// the format of the value they read (`MUFU.RCP64H` reads the high word
/// of an f64 and takes its low word as 0).
pub static RECIPROCALS: &[(&str, &str, FpFormat)] = &[("MUFU", "RCP", F32), ("MUFU", "RCP64H", F64)];

/// Modifiers that clamp the result (saturation turns NaN into 0).
pub static CLAMPING: &[&str] = &["SAT"];

/// Register copies: opcode, the modifier it needs, and which source (by
/// index among the sources) the written register receives.
pub static COPIES: &[(&str, Option<&str>, u8)] = &[("MOV", None, 0), ("IMAD", Some("MOV"), 2)];

/// Modifiers that widen the register an instruction outside the table
/// writes, in 32-bit words (`LDG.E.64`, `IMAD.WIDE`, `F2I.S64`). Where a
/// modifier overstates the width (`SHF.L.U64.HI` writes one register) the
/// error is on the safe side for analyses that ask what is overwritten.
pub static WIDTH_MODIFIERS: &[(&str, u8)] =
    &[("128", 4), ("64", 2), ("WIDE", 2), ("U64", 2), ("S64", 2), ("F64", 2), ("32", 1)];

/// Opcodes outside the table that write several registers whatever their
/// modifiers say (texture and surface loads, matrix loads, warpgroup
/// matrix multiply): words written from the named register, at most.
pub static WIDE_WRITERS: &[(&str, u8)] = &[
    ("CS2R", 2),
    ("TEX", 4),
    ("TLD", 4),
    ("TLD4", 4),
    ("TXD", 4),
    ("TXQ", 4),
    ("TMML", 4),
    ("SULD", 4),
    ("LDSM", 4),
    ("MOVM", 4),
    ("IMMA", 8),
    ("DMMA", 8),
    ("BMMA", 8),
    ("HGMMA", 255),
    ("IGMMA", 255),
    ("QGMMA", 255),
    ("BGMMA", 255),
];

/// Warpgroup matrix multiplies (sm_90): they write their accumulators
/// asynchronously, until a `WARPGROUP.DEPBAR` waits for them (see
/// [`super::warpgroup`]).
pub static WARPGROUP_MMA: &[&str] = &["HGMMA", "IGMMA", "QGMMA", "BGMMA"];

/// Words written from the first written register of an instruction
/// outside the table.
pub fn written_words(opcode: &str, modifiers: &[&str]) -> u8 {
    let by_modifier = WIDTH_MODIFIERS.iter().find(|(m, _)| modifiers.contains(m)).map(|(_, w)| *w);
    let by_opcode = WIDE_WRITERS.iter().find(|(op, _)| *op == opcode).map(|(_, w)| *w);
    match (by_opcode, by_modifier) {
        (Some(1..=2), Some(w)) => w,
        (Some(o), m) => o.max(m.unwrap_or(1)),
        (None, m) => m.unwrap_or(1),
    }
}

/// Words a store reads from its data register: as many as its size
/// modifier names (`.64`, `.128`), one otherwise.
pub fn stored_words(modifiers: &[&str]) -> u8 {
    WIDTH_MODIFIERS.iter().find(|(m, _)| modifiers.contains(m)).map_or(1, |(_, w)| *w)
}

/// The type modifiers that name formats, as they appear in SASS.
pub fn type_modifier(m: &str) -> Option<FpFormat> {
    match m {
        "F16" => Some(F16),
        "BF16" => Some(Bf16),
        "F32" => Some(F32),
        "F64" => Some(F64),
        _ => None,
    }
}

/// The row for an opcode with its modifiers, if it is floating point.
pub fn lookup(opcode: &str, modifiers: &[&str]) -> Option<&'static OpcodeInfo> {
    OPCODES.iter().find(|r| r.opcode == opcode && r.modifier.is_none_or(|m| modifiers.contains(&m)))
}

/// `dest_typed`: the instruction's first type modifier names its result
/// (conversions to floating point), so a lone type modifier is not the
/// source's.
fn resolve(rule: FormatRule, modifiers: &[&str], dest_typed: bool) -> FpFormat {
    let types: Vec<FpFormat> = modifiers.iter().filter_map(|m| type_modifier(m)).collect();
    match rule {
        Fixed(f) => f,
        FirstType(d) => types.first().copied().unwrap_or(d),
        SourceType(d) => match types.len() {
            0 => d,
            1 if dest_typed => d,
            _ => types[types.len() - 1],
        },
    }
}

impl OpcodeInfo {
    /// The format of the result (or of the compared values).
    pub fn format(&self, modifiers: &[&str]) -> FpFormat {
        resolve(self.format, modifiers, false)
    }

    /// The format of the floating-point sources.
    pub fn source_format(&self, modifiers: &[&str]) -> FpFormat {
        match self.source_format {
            Some(r) => resolve(r, modifiers, matches!(self.format, FirstType(_))),
            None => self.format(modifiers),
        }
    }

    /// Whether the sources are integers (I2F).
    pub fn integer_sources(&self) -> bool {
        matches!(self.opcode, "I2F" | "I2FP")
    }

    /// The vendor-neutral class of an instruction with these modifiers.
    pub fn class(&self, modifiers: &[&str]) -> InstrClass {
        let format = self.format(modifiers);
        match self.kind {
            Arith(op) => InstrClass::Arith { format, op },
            Compare => InstrClass::Compare { format },
            Select => InstrClass::Select { format },
            MinMax => InstrClass::MinMax { format },
            Matrix => InstrClass::Matrix { format },
            FpToOther => InstrClass::Other,
        }
    }

    /// Width in registers of each written value.
    pub fn def_words(&self, modifiers: &[&str]) -> u8 {
        match self.def_role {
            Value => self.def_words.unwrap_or_else(|| self.format(modifiers).register_words()),
            HighWord => 2,
            Predicates => 1,
            Integer => {
                let types: Vec<&str> = modifiers.iter().copied().filter(|m| m.ends_with("64")).collect();
                if self.opcode == "F2I" && types.first().is_some_and(|t| t.starts_with('S') || t.starts_with('U')) {
                    2
                } else {
                    1
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifier_rows_win() {
        let r = lookup("MUFU", &["RCP64H"]).expect("row");
        assert_eq!(r.def_role, HighWord);
        assert_eq!(r.class(&["RCP64H"]), InstrClass::Arith { format: F64, op: Div });
        let h = lookup("HADD2", &["BF16_V2"]).expect("row");
        assert_eq!(h.format(&["BF16_V2"]), Bf16x2);
        assert_eq!(lookup("HADD2", &[]).map(|r| r.format(&[])), Some(F16x2));
        assert_eq!(
            lookup("HADD2", &["F32"]).map(|r| (r.format(&["F32"]), r.source_format(&["F32"]))),
            Some((F32, F16x2))
        );
        assert!(lookup("MUFU", &["UNKNOWN"]).is_none());
        assert!(lookup("IADD3", &[]).is_none());
    }

    #[test]
    fn half_precision_mufu() {
        let r = lookup("MUFU", &["EX2", "F16"]).expect("row");
        assert_eq!(r.class(&["EX2", "F16"]), InstrClass::Arith { format: F16, op: Transcendental });
        assert_eq!(lookup("MUFU", &["EX2"]).map(|r| r.format(&["EX2"])), Some(F32));
        assert_eq!(lookup("MUFU", &["RSQ64H"]).map(|r| r.format(&["RSQ64H"])), Some(F64));
    }

    #[test]
    fn conversions_take_formats_from_type_modifiers() {
        let f2f = lookup("F2F", &["F64", "F32"]).expect("row");
        assert_eq!(f2f.format(&["F64", "F32"]), F64);
        assert_eq!(f2f.source_format(&["F64", "F32"]), F32);
        let f2i = lookup("F2I", &["S64", "F64"]).expect("row");
        assert_eq!(f2i.source_format(&["S64", "F64"]), F64);
        assert_eq!(f2i.source_format(&["TRUNC", "NTZ"]), F32);
        assert_eq!(f2i.def_words(&["S64", "F64"]), 2);
        assert_eq!(f2i.class(&["F64"]), InstrClass::Other);
        assert_eq!(f2f.source_format(&["F32", "F64"]), F64);
        assert_eq!(lookup("I2FP", &["F32", "S32"]).map(|r| r.format(&["F32", "S32"])), Some(F32));
    }

    #[test]
    fn every_opcode_has_at_most_one_default_row() {
        for (i, a) in OPCODES.iter().enumerate() {
            for b in &OPCODES[i + 1..] {
                assert!(!(a.opcode == b.opcode && a.modifier == b.modifier), "duplicate row {a:?}");
                if a.opcode == b.opcode && a.modifier.is_none() {
                    panic!("row {b:?} comes after the default row of {} and can never match", a.opcode);
                }
            }
        }
    }
}
