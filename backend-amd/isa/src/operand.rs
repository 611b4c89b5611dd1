//! Operands: register ranges, special registers, inline constants and
//! literals, with their rendering in LLVM's AMDGPU syntax. The operand-code
//! space (the 9-bit source encoding shared by SALU and VALU) is described
//! here and nowhere else.

use crate::table::ConstType;
use crate::text::Sink;
use std::fmt;

/// A register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegFile {
    Sgpr,
    Vgpr,
    Agpr,
    /// Trap-handler temporaries `ttmp0..15`.
    Ttmp,
}

/// A contiguous range of registers of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegRange {
    pub file: RegFile,
    pub first: u16,
    pub count: u8,
}

impl RegRange {
    pub fn new(file: RegFile, first: u16, count: u8) -> Self {
        RegRange { file, first, count }
    }

    /// Whether register `file[index]` lies in this range.
    pub fn contains(&self, file: RegFile, index: u16) -> bool {
        self.file == file && index >= self.first && index < self.first + self.count as u16
    }
}

impl fmt::Display for RegRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl RegRange {
    pub(crate) fn render<S: Sink>(&self, f: &mut S) -> fmt::Result {
        let p = match self.file {
            RegFile::Sgpr => "s",
            RegFile::Vgpr => "v",
            RegFile::Agpr => "a",
            RegFile::Ttmp => "ttmp",
        };
        f.put(p)?;
        if self.count <= 1 {
            return decimal(f, self.first);
        }
        f.put_char('[')?;
        decimal(f, self.first)?;
        f.put_char(':')?;
        decimal(f, self.first + self.count as u16 - 1)?;
        f.put_char(']')
    }
}

/// `v` in decimal, as `{}` writes it, without the formatting machinery
/// (register numbers are most of an instruction's text): up to three
/// digits at once out of [`DIGIT_TRIPLES`].
fn decimal<S: Sink>(f: &mut S, v: u16) -> fmt::Result {
    let triple = |n: u16| &DIGIT_TRIPLES[3 * n as usize..3 * n as usize + 3];
    match v {
        0..=9 => f.put(&triple(v)[2..]),
        10..=99 => f.put(&triple(v)[1..]),
        100..=999 => f.put(triple(v)),
        _ => {
            decimal(f, v / 1000)?;
            f.put(triple(v % 1000))
        }
    }
}

/// `000`, `001`, ... `999`.
const DIGIT_TRIPLES: &str = match std::str::from_utf8(&digit_triples()) {
    Ok(s) => s,
    Err(_) => panic!("digits are ASCII"),
};

const fn digit_triples() -> [u8; 3000] {
    let mut out = [0u8; 3000];
    let mut n = 0;
    while n < 1000 {
        out[3 * n] = b'0' + (n / 100) as u8;
        out[3 * n + 1] = b'0' + (n / 10 % 10) as u8;
        out[3 * n + 2] = b'0' + (n % 10) as u8;
        n += 1;
    }
    out
}

/// Special scalar registers and read-only sources named by operand codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    FlatScratch,
    XnackMask,
    Vcc,
    M0,
    Exec,
    Scc,
    Vccz,
    Execz,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    LdsDirect,
    /// `null` (operand code 125): reads as zero, writes are discarded.
    Null,
}

/// Operand codes of special registers: `(first code, register, name of the
/// pair, name of the low half, name of the high half)`.
const SPECIAL_CODES: &[(u16, SpecialReg, &str, &str, &str)] = &[
    (102, SpecialReg::FlatScratch, "flat_scratch", "flat_scratch_lo", "flat_scratch_hi"),
    (104, SpecialReg::XnackMask, "xnack_mask", "xnack_mask_lo", "xnack_mask_hi"),
    (106, SpecialReg::Vcc, "vcc", "vcc_lo", "vcc_hi"),
    (124, SpecialReg::M0, "m0", "m0", "m0"),
    (126, SpecialReg::Exec, "exec", "exec_lo", "exec_hi"),
    (235, SpecialReg::SharedBase, "src_shared_base", "src_shared_base", "src_shared_base"),
    (236, SpecialReg::SharedLimit, "src_shared_limit", "src_shared_limit", "src_shared_limit"),
    (237, SpecialReg::PrivateBase, "src_private_base", "src_private_base", "src_private_base"),
    (238, SpecialReg::PrivateLimit, "src_private_limit", "src_private_limit", "src_private_limit"),
    (
        239,
        SpecialReg::PopsExitingWaveId,
        "src_pops_exiting_wave_id",
        "src_pops_exiting_wave_id",
        "src_pops_exiting_wave_id",
    ),
    (251, SpecialReg::Vccz, "src_vccz", "src_vccz", "src_vccz"),
    (252, SpecialReg::Execz, "src_execz", "src_execz", "src_execz"),
    (253, SpecialReg::Scc, "src_scc", "src_scc", "src_scc"),
    (254, SpecialReg::LdsDirect, "src_lds_direct", "src_lds_direct", "src_lds_direct"),
    (125, SpecialReg::Null, "null", "null", "null"),
];

impl SpecialReg {
    /// Whether a 64-bit operand may name this register (as a pair).
    pub fn is_pair(self) -> bool {
        matches!(self, SpecialReg::FlatScratch | SpecialReg::XnackMask | SpecialReg::Vcc | SpecialReg::Exec)
    }
}

/// Float inline constants, codes 240..=248: `(f32 text, f64 text, f16 bits)`.
const FLOAT_CONSTANTS: [(&str, &str, u16); 9] = [
    ("0.5", "0.5", 0x3800),
    ("-0.5", "-0.5", 0xB800),
    ("1.0", "1.0", 0x3C00),
    ("-1.0", "-1.0", 0xBC00),
    ("2.0", "2.0", 0x4000),
    ("-2.0", "-2.0", 0xC000),
    ("4.0", "4.0", 0x4400),
    ("-4.0", "-4.0", 0xC400),
    ("0.15915494", "0.15915494309189532", 0x3118),
];

/// Operand code of a 32-bit literal following the instruction.
pub const LITERAL_CODE: u16 = 255;
/// Operand code of DPP (the source VGPR is in the extra dword).
pub const DPP_CODE: u16 = 0xFA;
/// Operand code of SDWA (the source is in the extra dword).
pub const SDWA_CODE: u16 = 0xF9;

/// Scalar register tuples are aligned: pairs to 2, larger tuples to 4 (the
/// hardware ignores the low bits of the register number).
fn align_scalar(first: u16, count: u8) -> u16 {
    match count {
        0 | 1 => first,
        2 => first & !1,
        _ => first & !3,
    }
}

/// How a literal whose value is also an inline constant is spelled. LLVM 19
/// (the reference for gfx908..gfx942) prints the inline constant; LLVM 22 (the
/// reference for gfx950) prints `lit(0x...)`. Other literals print in hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralForm {
    AsInline,
    Lit,
}

/// The inline-constant operand code equal to a 32-bit value, if any.
pub fn inline_code_of(value: u32, ty: ConstType) -> Option<u16> {
    let v = value as i32;
    if (0..=64).contains(&v) {
        return Some(128 + v as u16);
    }
    if (-16..=-1).contains(&v) {
        return Some((192 - v) as u16);
    }
    if ty == ConstType::B32 {
        const F32: [u32; 9] = [
            0x3F00_0000,
            0xBF00_0000,
            0x3F80_0000,
            0xBF80_0000,
            0x4000_0000,
            0xC000_0000,
            0x4080_0000,
            0xC080_0000,
            0x3E22_F983,
        ];
        return F32.iter().position(|&c| c == value).map(|i| 240 + i as u16);
    }
    None
}

/// One operand of a decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// Registers, possibly a range.
    Reg(RegRange),
    /// A special register; `count` 2 for the 64-bit pair, `half` 1 for the high half.
    Special { reg: SpecialReg, count: u8, half: u8 },
    /// An integer inline constant (-16..=64).
    InlineInt(i8),
    /// A float inline constant (code 240..=248) printed for `ty`.
    InlineFloat { code: u8, ty: ConstType },
    /// A 32-bit literal dword following the instruction.
    Literal { value: u32, ty: ConstType, form: LiteralForm },
    /// An operand code with no meaning on gfx9.
    Reserved(u16),
    /// A 16-bit immediate field.
    Imm(u16),
    /// Fixed text such as `off` or `vcc` (implicit in the encoding).
    Fixed(&'static str),
    /// A branch target: signed dword offset from the next instruction, and the
    /// absolute byte address when the instruction address is known.
    Label(i16),
    /// A preformatted symbolic immediate (hwreg, sendmsg, waitcnt, gpr_idx).
    Symbolic(String),
}

impl Operand {
    /// Decode an operand code of `count` 32-bit registers; `literal` is the
    /// dword following the instruction, if any.
    pub fn from_code(code: u16, count: u8, ty: ConstType, literal: Option<u32>) -> Operand {
        match code {
            0..=101 => Operand::Reg(RegRange::new(RegFile::Sgpr, align_scalar(code, count), count)),
            108..=123 => Operand::Reg(RegRange::new(RegFile::Ttmp, align_scalar(code - 108, count), count)),
            128..=192 => Operand::InlineInt((code - 128) as i8),
            193..=208 => Operand::InlineInt(-((code - 192) as i8)),
            240..=248 => Operand::InlineFloat { code: code as u8, ty },
            LITERAL_CODE => Operand::Literal { value: literal.unwrap_or(0), ty, form: LiteralForm::AsInline },
            256..=511 => Operand::Reg(RegRange::new(RegFile::Vgpr, code - 256, count)),
            _ => {
                for &(first, reg, ..) in SPECIAL_CODES {
                    let pair = matches!(first, 102 | 104 | 106 | 126);
                    if code == first || (pair && code == first + 1) {
                        return Operand::Special { reg, count: count.min(2), half: (code - first) as u8 };
                    }
                }
                Operand::Reserved(code)
            }
        }
    }

    /// Whether this operand is a constant (inline or literal).
    pub fn is_constant(&self) -> bool {
        matches!(self, Operand::InlineInt(_) | Operand::InlineFloat { .. } | Operand::Literal { .. })
    }

    /// The register range named, if any (special registers excluded).
    pub fn reg(&self) -> Option<RegRange> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl Operand {
    pub(crate) fn render<S: Sink>(&self, f: &mut S) -> fmt::Result {
        match self {
            Operand::Reg(r) => {
                if r.file == RegFile::Ttmp && r.count > 1 {
                    f.put_fmt(format_args!("ttmp[{}:{}]", r.first, r.first + r.count as u16 - 1))
                } else {
                    r.render(f)
                }
            }
            Operand::Special { reg, count, half } => {
                let row = SPECIAL_CODES.iter().find(|r| r.1 == *reg);
                let (pair, lo, hi) = row.map(|r| (r.2, r.3, r.4)).unwrap_or(("?", "?", "?"));
                let s = if *half == 1 {
                    hi
                } else if *count >= 2 && reg.is_pair() {
                    pair
                } else {
                    lo
                };
                f.put(s)
            }
            Operand::InlineInt(v) => {
                if *v < 0 {
                    f.put_char('-')?;
                }
                decimal(f, u16::from(v.unsigned_abs()))
            }
            Operand::InlineFloat { code, ty } => {
                let (t32, t64, bits) = FLOAT_CONSTANTS[(*code - 240) as usize];
                match ty {
                    ConstType::B32 | ConstType::F16 => f.put(t32),
                    ConstType::B64 => f.put(t64),
                    ConstType::I16 => f.put_fmt(format_args!("0x{bits:x}")),
                }
            }
            Operand::Literal { value, ty, form } => {
                if let (Some(code), ConstType::B32) = (inline_code_of(*value, *ty), ty) {
                    return match form {
                        LiteralForm::AsInline => f.put_fmt(format_args!("{}", Operand::from_code(code, 1, *ty, None))),
                        LiteralForm::Lit => f.put_fmt(format_args!("lit(0x{value:x})")),
                    };
                }
                match ty {
                    ConstType::F16 | ConstType::I16 => f.put_fmt(format_args!("0x{:x}", value & 0xFFFF)),
                    _ => f.put_fmt(format_args!("0x{value:x}")),
                }
            }
            Operand::Reserved(code) => f.put_fmt(format_args!("<reserved {code}>")),
            Operand::Imm(v) => {
                if *v <= 64 {
                    decimal(f, *v)
                } else {
                    f.put_fmt(format_args!("0x{v:x}"))
                }
            }
            Operand::Fixed(s) => f.put(s),
            Operand::Label(off) => decimal(f, *off as u16),
            Operand::Symbolic(s) => f.put(s),
        }
    }
}

/// Source modifiers of a VALU operand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SrcMods {
    pub neg: bool,
    pub abs: bool,
    /// SDWA sign extension.
    pub sext: bool,
}

/// An operand of a class its position does not accept (the reference
/// disassembler prints it with a note).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidOperand {
    Immediate,
    /// A register outside the named register class.
    Register(&'static str),
}

/// An operand with its source modifiers, as printed in an operand list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandSlot {
    pub operand: Operand,
    pub mods: SrcMods,
    /// Whether the instruction writes this operand.
    pub written: bool,
    /// Set when the operand's class is not allowed in its position.
    pub invalid: Option<InvalidOperand>,
}

impl OperandSlot {
    /// Operand category as the table's invalid-operand notes name it: `v`
    /// VGPR, `a` AGPR, `w`/`b` VGPR/AGPR tuple at an odd register, `s` SGPR or
    /// TTMP, `k` special register, `c` constant.
    pub fn category(&self) -> char {
        match &self.operand {
            // Misaligned tuples (odd first register) have their own notes on gfx90a+.
            Operand::Reg(r) if r.count >= 2 && r.first % 2 == 1 && r.file == RegFile::Vgpr => 'w',
            Operand::Reg(r) if r.count >= 2 && r.first % 2 == 1 && r.file == RegFile::Agpr => 'b',
            Operand::Reg(r) => match r.file {
                RegFile::Vgpr => 'v',
                RegFile::Agpr => 'a',
                RegFile::Sgpr | RegFile::Ttmp => 's',
            },
            Operand::Special { .. } => 'k',
            _ => 'c',
        }
    }
}

impl fmt::Display for OperandSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl OperandSlot {
    pub(crate) fn render<S: Sink>(&self, f: &mut S) -> fmt::Result {
        let m = self.mods;
        if !(m.abs || m.sext || m.neg) && self.invalid.is_none() {
            // the operand alone
            return self.operand.render(f);
        }
        // Written from the outside in: `neg(sext(|x|))` or `-sext(|x|)`,
        // the note inside `neg(...)` after a constant, else after it all.
        let constant = self.operand.is_constant();
        let note_inside = m.neg && constant;
        if m.neg {
            f.put(if constant { "neg(" } else { "-" })?;
        }
        if m.sext {
            f.put("sext(")?;
        }
        if m.abs {
            f.put_char('|')?;
        }
        self.operand.render(f)?;
        if note_inside {
            self.render_note(f)?;
        }
        if m.abs {
            f.put_char('|')?;
        }
        if m.sext {
            f.put_char(')')?;
        }
        if note_inside {
            f.put_char(')')?;
        }
        if !note_inside {
            self.render_note(f)?;
        }
        Ok(())
    }

    /// The reference's note on an operand its position does not accept.
    fn render_note<S: Sink>(&self, f: &mut S) -> fmt::Result {
        match self.invalid {
            Some(InvalidOperand::Immediate) => f.put("/*Invalid immediate*/"),
            Some(InvalidOperand::Register(class)) => {
                f.put("/*Invalid register, operand has '")?;
                f.put(class)?;
                f.put("' register class*/")
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_numbers_are_written_in_decimal() {
        for v in [0u16, 7, 9, 10, 42, 99, 100, 101, 255, 999, 1000, 1009, 65535] {
            let mut text = String::new();
            decimal(&mut text, v).expect("writes");
            assert_eq!(text, v.to_string());
        }
    }

    #[test]
    fn renders_operand_codes() {
        let r = |c, n| Operand::from_code(c, n, ConstType::B32, Some(0x1234_5678)).to_string();
        assert_eq!(r(20, 1), "s20");
        assert_eq!(r(20, 2), "s[20:21]");
        assert_eq!(r(106, 2), "vcc");
        assert_eq!(r(106, 1), "vcc_lo");
        assert_eq!(r(107, 1), "vcc_hi");
        assert_eq!(r(126, 2), "exec");
        assert_eq!(r(114, 2), "ttmp[6:7]");
        assert_eq!(r(114, 1), "ttmp6");
        assert_eq!(r(128, 1), "0");
        assert_eq!(r(193, 1), "-1");
        assert_eq!(r(208, 1), "-16");
        assert_eq!(r(242, 1), "1.0");
        assert_eq!(r(255, 1), "0x12345678");
        assert_eq!(r(276, 2), "v[20:21]");
        assert_eq!(Operand::from_code(248, 2, ConstType::B64, None).to_string(), "0.15915494309189532");
        assert_eq!(Operand::from_code(242, 1, ConstType::I16, None).to_string(), "0x3c00");
    }
}
