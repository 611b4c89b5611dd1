//! Parser of SASS text as nvdisasm, `cuobjdump -sass` and NVBit's
//! `Instr::getSass()` print it: one instruction (guard, opcode, modifiers,
//! operands), and whole listings (functions, offsets, line-table comments).

use std::fmt;
use xfpx_common::site::SourceLoc;

/// A SASS register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// `R0`..`R254`, `RZ` (255).
    R,
    /// `UR0`..`UR62`, `URZ` (63).
    Ur,
    /// `P0`..`P6`, `PT` (7).
    P,
    /// `UP0`..`UP6`, `UPT` (7).
    Up,
}

impl RegKind {
    /// The register number that always reads zero (or true, for predicates).
    pub fn zero(self) -> u16 {
        match self {
            RegKind::R => 255,
            RegKind::Ur => 63,
            RegKind::P | RegKind::Up => 7,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            RegKind::R => "R",
            RegKind::Ur => "UR",
            RegKind::P => "P",
            RegKind::Up => "UP",
        }
    }
}

/// A register operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Register {
    pub kind: RegKind,
    pub num: u16,
    /// `-R1` (arithmetic negation) or `!P0` (logical not).
    pub negated: bool,
    /// `|R1|`.
    pub absolute: bool,
    /// Suffixes other than `.reuse`, e.g. `H0_H0`, `64`, `F32`.
    pub suffixes: Vec<String>,
}

impl Register {
    /// `RZ`, `URZ`, `PT` or `UPT`.
    pub fn is_zero(&self) -> bool {
        self.num == self.kind.zero()
    }
}

/// The bank of a constant-bank operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Bank {
    Index(u32),
    /// `cx[UR4][...]`: the bank is in a uniform register.
    Uniform(u16),
}

/// One operand.
#[derive(Debug, Clone, PartialEq)]
pub enum SassOperand {
    Reg(Register),
    /// A hexadecimal immediate: raw bits.
    ImmBits {
        text: String,
        bits: u64,
    },
    /// A decimal immediate (integer or float, `+INF`, `-QNAN`).
    ImmValue {
        text: String,
        value: f64,
    },
    /// `c[0x0][0x160]`, `cx[UR4][0x10]`.
    ConstBank {
        text: String,
        bank: Bank,
        offset: i64,
        negated: bool,
        absolute: bool,
    },
    /// `[R2.64+0x10]`, `desc[UR4][R8.64]`.
    Memory {
        text: String,
    },
    /// Special registers, labels, anything else.
    Other {
        text: String,
    },
}

/// A guard predicate: `@P0`, `@!UP1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub pred: Register,
}

/// One parsed instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct SassInstr {
    /// Byte offset in its function (0 when the text had none).
    pub offset: u64,
    pub guard: Option<Guard>,
    /// Base opcode, e.g. `FSETP`.
    pub opcode: String,
    /// Modifiers in order, e.g. `["GT", "AND"]`.
    pub modifiers: Vec<String>,
    pub operands: Vec<SassOperand>,
    /// The instruction as written (without offset, `;` and encoding).
    pub text: String,
    pub location: Option<SourceLoc>,
}

impl SassInstr {
    pub fn modifier_refs(&self) -> Vec<&str> {
        self.modifiers.iter().map(String::as_str).collect()
    }

    /// True when the guard may be false (anything but none or `@PT`).
    pub fn is_guarded(&self) -> bool {
        self.guard.as_ref().is_some_and(|g| !g.pred.is_zero() || g.pred.negated)
    }

    /// True for `@!PT`, which never executes.
    pub fn never_executes(&self) -> bool {
        self.guard.as_ref().is_some_and(|g| g.pred.is_zero() && g.pred.negated)
    }
}

/// A function of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct SassFunction {
    pub name: String,
    pub instrs: Vec<SassInstr>,
}

/// Why SASS text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line in the listing (0 for a single instruction).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for ParseError {}

fn err(message: impl Into<String>) -> ParseError {
    ParseError { line: 0, message: message.into() }
}

/// Split at commas outside brackets and bars.
fn split_operands(s: &str) -> Result<Vec<&str>, ParseError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(err(format!("unbalanced `{c}` in `{s}`")));
                }
            }
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(err(format!("unbalanced brackets in `{s}`")));
    }
    let last = s[start..].trim();
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    if out.iter().any(|o| o.is_empty()) {
        return Err(err(format!("empty operand in `{s}`")));
    }
    Ok(out)
}

fn parse_u64(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_i64(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(r) => parse_u64(r).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        None => parse_u64(s.strip_prefix('+').unwrap_or(s)).and_then(|v| i64::try_from(v).ok()),
    }
}

/// A register name with its number, e.g. `R12`, `URZ`, `PT`.
fn parse_register_name(s: &str) -> Option<(RegKind, u16)> {
    let (kind, rest) = if let Some(r) = s.strip_prefix("UR") {
        (RegKind::Ur, r)
    } else if let Some(r) = s.strip_prefix("UP") {
        (RegKind::Up, r)
    } else if let Some(r) = s.strip_prefix('R') {
        (RegKind::R, r)
    } else if let Some(r) = s.strip_prefix('P') {
        (RegKind::P, r)
    } else {
        return None;
    };
    let num = match rest {
        "Z" if matches!(kind, RegKind::R | RegKind::Ur) => kind.zero(),
        "T" if matches!(kind, RegKind::P | RegKind::Up) => kind.zero(),
        _ if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) => rest.parse().ok()?,
        _ => return None,
    };
    if num > kind.zero() {
        return None;
    }
    Some((kind, num))
}

fn parse_register(s: &str) -> Option<Register> {
    let mut negated = false;
    let mut absolute = false;
    let mut t = s;
    if let Some(r) = t.strip_prefix('-').or_else(|| t.strip_prefix('!')) {
        negated = true;
        t = r;
    }
    if let Some(r) = t.strip_prefix('~') {
        negated = true;
        t = r;
    }
    // `|R2|.reuse`: bars around the name, suffixes after them
    let owned;
    if let Some(r) = t.strip_prefix('|') {
        let (inner, after) = r.split_once('|')?;
        absolute = true;
        owned = format!("{inner}{after}");
        t = &owned;
    }
    let mut parts = t.split('.');
    let (kind, num) = parse_register_name(parts.next()?)?;
    let suffixes = parts.filter(|p| *p != "reuse").map(str::to_string).collect();
    Some(Register { kind, num, negated, absolute, suffixes })
}

fn parse_float(s: &str) -> Option<f64> {
    let (sign, body) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    let v = match body {
        "INF" => f64::INFINITY,
        "QNAN" | "NAN" | "SNAN" => f64::NAN,
        _ => {
            if !body.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
            body.parse::<f64>().ok()?
        }
    };
    Some(if sign < 0.0 { -v } else { v })
}

fn parse_const_bank(s: &str) -> Option<SassOperand> {
    let mut t = s;
    let mut negated = false;
    let mut absolute = false;
    if let Some(r) = t.strip_prefix('-') {
        negated = true;
        t = r;
    }
    if let Some(r) = t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        absolute = true;
        t = r;
    }
    let rest = t.strip_prefix("cx[").or_else(|| t.strip_prefix("c["))?;
    let (bank_text, rest) = rest.split_once("][")?;
    let offset_text = rest.strip_suffix(']')?;
    let bank = match parse_register_name(bank_text) {
        Some((RegKind::Ur, n)) => Bank::Uniform(n),
        Some(_) => return None,
        None => Bank::Index(u32::try_from(parse_u64(bank_text)?).ok()?),
    };
    let offset = parse_i64(offset_text)?;
    Some(SassOperand::ConstBank { text: s.to_string(), bank, offset, negated, absolute })
}

/// Parse one operand.
pub fn parse_operand(s: &str) -> SassOperand {
    if let Some(r) = parse_register(s) {
        return SassOperand::Reg(r);
    }
    if let Some(c) = parse_const_bank(s) {
        return c;
    }
    if s.contains('[') {
        return SassOperand::Memory { text: s.to_string() };
    }
    let unsigned = s.strip_prefix('-').unwrap_or(s);
    if unsigned.starts_with("0x") || unsigned.starts_with("0X") {
        if let Some(bits) = parse_u64(unsigned) {
            let bits = if s.starts_with('-') { bits.wrapping_neg() } else { bits };
            return SassOperand::ImmBits { text: s.to_string(), bits };
        }
    }
    if let Some(value) = parse_float(s) {
        return SassOperand::ImmValue { text: s.to_string(), value };
    }
    SassOperand::Other { text: s.to_string() }
}

/// Parse one instruction, e.g. `@!P0 FFMA R1, -R2, |R3|, c[0x0][0x160] ;`.
/// A leading `/*0040*/` offset and trailing `;` and `/* 0x... */` are
/// accepted.
pub fn parse_instruction(text: &str) -> Result<SassInstr, ParseError> {
    let Written { offset, guard: guard_text, mnemonic, ops } = written(text)?;
    let guard = match guard_text {
        Some(g) => Some(Guard {
            pred: parse_register(g)
                .filter(|r| matches!(r.kind, RegKind::P | RegKind::Up))
                .ok_or_else(|| err(format!("bad guard predicate `@{g}`")))?,
        }),
        None => None,
    };
    let mut parts = mnemonic.split('.');
    let opcode = parts.next().unwrap_or_default().to_string();
    if opcode.is_empty() || !opcode.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        return Err(err(format!("bad opcode `{mnemonic}`")));
    }
    let modifiers: Vec<String> = parts.map(str::to_string).collect();
    if modifiers.iter().any(String::is_empty) {
        return Err(err(format!("empty modifier in `{mnemonic}`")));
    }
    let operands =
        if ops.is_empty() { Vec::new() } else { split_operands(ops)?.into_iter().map(parse_operand).collect() };
    let text = rebuild_text(mnemonic, ops, guard_text);
    Ok(SassInstr { offset, guard, opcode, modifiers, operands, text, location: None })
}

/// An instruction line as written: its offset comment (0 when none), its
/// guard predicate, mnemonic and operands, without `;` and encoding.
struct Written<'a> {
    offset: u64,
    guard: Option<&'a str>,
    mnemonic: &'a str,
    ops: &'a str,
}

fn written(text: &str) -> Result<Written<'_>, ParseError> {
    let mut s = text.trim();
    let mut offset = 0;
    if let Some(rest) = s.strip_prefix("/*") {
        let (num, rest) = rest.split_once("*/").ok_or_else(|| err(format!("unterminated offset in `{text}`")))?;
        offset = u64::from_str_radix(num.trim(), 16).map_err(|_| err(format!("bad offset `{num}`")))?;
        s = rest.trim();
    }
    if let Some(i) = s.find(';') {
        s = s[..i].trim();
    } else if let Some(i) = s.find("/*") {
        s = s[..i].trim();
    }
    if s.is_empty() {
        return Err(err(format!("no instruction in `{}`", text.trim())));
    }
    let mut guard = None;
    if let Some(rest) = s.strip_prefix('@') {
        let (g, rest) =
            rest.split_once(char::is_whitespace).ok_or_else(|| err(format!("guard without opcode in `{s}`")))?;
        guard = Some(g);
        s = rest.trim_start();
    }
    let (mnemonic, ops) = match s.split_once(char::is_whitespace) {
        Some((m, o)) => (m, o.trim()),
        None => (s, ""),
    };
    Ok(Written { offset, guard, mnemonic, ops })
}

/// The text [`parse_instruction`] gives an instruction ([`SassInstr::text`]),
/// without parsing its operands: two lines with the same text parse alike.
pub fn instruction_text(line: &str) -> Result<String, ParseError> {
    let w = written(line)?;
    Ok(rebuild_text(w.mnemonic, w.ops, w.guard))
}

fn rebuild_text(mnemonic: &str, ops: &str, guard: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(g) = guard {
        out.push('@');
        out.push_str(g);
        out.push(' ');
    }
    out.push_str(mnemonic);
    if !ops.is_empty() {
        out.push(' ');
        out.push_str(ops);
    }
    out
}

/// The function a listing line starts, if it is a function header:
/// `Function : name` (cuobjdump) or `.section .text.name,...` (nvdisasm).
fn function_header(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("Function :").or_else(|| t.strip_prefix("Function:")) {
        return Some(rest.trim().to_string());
    }
    if let Some(rest) = t.strip_prefix(".section") {
        let rest = rest.trim();
        if let Some(name) = rest.strip_prefix(".text.") {
            let name = name.split(',').next().unwrap_or(name).trim().trim_matches('"');
            return Some(name.to_string());
        }
    }
    None
}

/// A line-table comment of `nvdisasm -g`, `//## File "a.cu", line 12`, or
/// of `nvdisasm -gi`, which may add the frame it was inlined into:
/// `//## File "<cuda>/include/cuda_fp16.hpp", line 264 inlined at "a.cu", line 13`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineComment {
    at: SourceLoc,
    inlined_at: Option<SourceLoc>,
}

/// `"file", line N` at the start of `text`, and the rest.
fn file_line(text: &str) -> Option<(SourceLoc, &str)> {
    let rest = text.strip_prefix('"')?;
    let (file, rest) = rest.split_once('"')?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start().strip_prefix("line")?.trim_start();
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    Some((SourceLoc::new(file, rest[..end].parse().ok()?), &rest[end..]))
}

fn line_comment(line: &str) -> Option<LineComment> {
    let rest = line.trim().strip_prefix("//## File ")?;
    let (at, rest) = file_line(rest)?;
    let inlined_at =
        rest.trim_start().strip_prefix("inlined at ").and_then(|r| file_line(r.trim_start())).map(|(l, _)| l);
    Some(LineComment { at, inlined_at })
}

/// The comments before an instruction, innermost frame first: `nvdisasm
/// -gi` writes a frame, then the frame it was inlined into (whose position
/// is the first one's `inlined at`), down to the outermost, which is not
/// inlined. The instruction's position is the innermost frame, inlined
/// into the outermost.
#[derive(Debug, Default)]
struct InlineChain {
    frames: Vec<LineComment>,
    /// An instruction came after the last comment: the next comment starts a new chain.
    closed: bool,
}

impl InlineChain {
    fn push(&mut self, c: LineComment) {
        let continues = !self.closed && self.frames.last().and_then(|f| f.inlined_at.as_ref()) == Some(&c.at);
        if !continues {
            self.frames.clear();
        }
        self.frames.push(c);
        self.closed = false;
    }

    fn location(&self) -> Option<SourceLoc> {
        let inner = self.frames.first()?.at.clone();
        let last = self.frames.last()?;
        Some(inner.inlined_into(last.inlined_at.clone().unwrap_or_else(|| last.at.clone())))
    }
}

/// True for a line that carries an instruction: `/*0040*/ ...`.
fn instruction_line(line: &str) -> bool {
    let t = line.trim_start();
    t.strip_prefix("/*").and_then(|r| r.split_once("*/")).is_some_and(|(n, rest)| {
        !n.trim().is_empty()
            && n.trim().bytes().all(|b| b.is_ascii_hexdigit())
            && !rest.trim().is_empty()
            && !rest.trim_start().starts_with("/*")
    })
}

/// Parse a listing of one or more functions. Lines that are neither
/// headers, line-table comments nor instructions are skipped.
pub fn parse_listing(text: &str) -> Result<Vec<SassFunction>, ParseError> {
    let mut functions: Vec<SassFunction> = Vec::new();
    let mut chain = InlineChain::default();
    for (n, line) in text.lines().enumerate() {
        if let Some(name) = function_header(line) {
            functions.push(SassFunction { name, instrs: Vec::new() });
            chain = InlineChain::default();
            continue;
        }
        if let Some(c) = line_comment(line) {
            chain.push(c);
            continue;
        }
        if !instruction_line(line) {
            continue;
        }
        chain.closed = true;
        let mut ins = parse_instruction(line).map_err(|e| ParseError { line: n + 1, message: e.message })?;
        ins.location = chain.location();
        match functions.last_mut() {
            Some(f) => f.instrs.push(ins),
            None => {
                return Err(ParseError {
                    line: n + 1,
                    message: "instruction before any function header (`Function : name` or `.section .text.name`)"
                        .into(),
                })
            }
        }
    }
    Ok(functions)
}

impl fmt::Display for Register {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = if self.negated {
            if matches!(self.kind, RegKind::P | RegKind::Up) {
                "!"
            } else {
                "-"
            }
        } else {
            ""
        };
        let name = if self.is_zero() {
            match self.kind {
                RegKind::R | RegKind::Ur => format!("{}Z", self.kind.prefix()),
                RegKind::P | RegKind::Up => format!("{}T", self.kind.prefix()),
            }
        } else {
            format!("{}{}", self.kind.prefix(), self.num)
        };
        if self.absolute {
            write!(f, "{neg}|{name}|")
        } else {
            write!(f, "{neg}{name}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_opcode_modifiers_operands() {
        let i = parse_instruction(
            "        /*0530*/               @!P0 FSETP.GEU.AND P0, PT, |R2|.reuse, -c[0x0][0x160], PT ;  /* 0x0 */",
        )
        .expect("parses");
        assert_eq!(i.offset, 0x530);
        assert!(i.is_guarded());
        assert_eq!(i.opcode, "FSETP");
        assert_eq!(i.modifiers, vec!["GEU", "AND"]);
        assert_eq!(i.operands.len(), 5);
        match &i.operands[2] {
            SassOperand::Reg(r) => assert!(r.absolute && r.num == 2 && r.suffixes.is_empty()),
            o => panic!("{o:?}"),
        }
        match &i.operands[3] {
            SassOperand::ConstBank { bank, offset, negated, .. } => {
                assert_eq!((bank, *offset, *negated), (&Bank::Index(0), 0x160, true))
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(i.text, "@!P0 FSETP.GEU.AND P0, PT, |R2|.reuse, -c[0x0][0x160], PT");
    }

    #[test]
    fn immediates_and_special_operands() {
        let i = parse_instruction("MUFU.RSQ R2, -QNAN ;").expect("parses");
        assert!(matches!(&i.operands[1], SassOperand::ImmValue { value, .. } if value.is_nan()));
        let i = parse_instruction("FFMA R1, R2, 1.5, +INF").expect("parses");
        assert!(matches!(&i.operands[2], SassOperand::ImmValue { value, .. } if *value == 1.5));
        assert!(matches!(&i.operands[3], SassOperand::ImmValue { value, .. } if *value == f64::INFINITY));
        let i = parse_instruction("LOP3.LUT R2, R5, 0x3, RZ, 0xc0, !PT").expect("parses");
        assert!(matches!(&i.operands[2], SassOperand::ImmBits { bits: 3, .. }));
        assert!(matches!(&i.operands[5], SassOperand::Reg(Register { kind: RegKind::P, num: 7, negated: true, .. })));
        let i = parse_instruction("LDG.E R4, desc[UR4][R8.64+0x100] ;").expect("parses");
        assert!(matches!(&i.operands[1], SassOperand::Memory { .. }));
        let i = parse_instruction("FSEL R2, R2, UR6, P0").expect("parses");
        assert!(matches!(&i.operands[2], SassOperand::Reg(Register { kind: RegKind::Ur, num: 6, .. })));
        let i = parse_instruction("LDC R1, cx[UR4][0x28]").expect("parses");
        assert!(matches!(&i.operands[1], SassOperand::ConstBank { bank: Bank::Uniform(4), .. }));
        let i = parse_instruction("S2R R0, SR_TID.X").expect("parses");
        assert!(matches!(&i.operands[1], SassOperand::Other { .. }));
        let i = parse_instruction("HADD2 R10, R2.H0_H0, R5.H1_H1").expect("parses");
        assert!(matches!(&i.operands[1], SassOperand::Reg(r) if r.suffixes == vec!["H0_H0".to_string()]));
        let i = parse_instruction("EXIT").expect("parses");
        assert!(i.operands.is_empty());
        assert!(parse_instruction("@!PT NOP").expect("parses").never_executes());
    }

    #[test]
    fn inlined_at_chains_give_innermost_and_outermost() {
        let text = r#"
	.section	.text.k,"ax",@progbits
	//## File "a.cu", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "<cuda>/include/x.hpp", line 9 inlined at "<cuda>/include/x.hpp", line 20
	//## File "<cuda>/include/x.hpp", line 20 inlined at "a.cu", line 7
	//## File "a.cu", line 7
        /*0010*/                   HADD2 R2, R2, R3 ;
        /*0020*/                   HADD2 R2, R2, R3 ;
	//## File "<cuda>/include/x.hpp", line 4 inlined at "a.cu", line 8
	//## File "a.cu", line 8
        /*0030*/                   HMUL2 R2, R2, R3 ;
	//## File "a.cu", line 8
	//## File "a.cu", line 9
        /*0040*/                   EXIT ;
"#;
        let fs = parse_listing(text).expect("parses");
        let at: Vec<String> =
            fs[0].instrs.iter().map(|i| i.location.as_ref().map(ToString::to_string).unwrap_or_default()).collect();
        assert_eq!(
            at,
            [
                "a.cu:3",
                "<cuda>/include/x.hpp:9 (inlined at a.cu:7)",
                "<cuda>/include/x.hpp:9 (inlined at a.cu:7)",
                "<cuda>/include/x.hpp:4 (inlined at a.cu:8)",
                // two plain comments in a row: the later one holds
                "a.cu:9",
            ]
        );
        assert_eq!(
            line_comment(r#"//## File "h.hpp", line 5 inlined at "a.cu", line 2"#),
            Some(LineComment { at: SourceLoc::new("h.hpp", 5), inlined_at: Some(SourceLoc::new("a.cu", 2)) })
        );
    }

    #[test]
    fn bad_instructions_are_errors() {
        for bad in ["", ";", "@P0", "fadd R1", "FADD R1,, R2", "FADD R1, [R2", "@Q1 FADD R1, R2, R3", "/*00zz*/ FADD"] {
            assert!(parse_instruction(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn listing_functions_and_lines() {
        let text = "\tFunction : k\n\t//## File \"a.cu\", line 7\n        /*0000*/  FADD R1, R2, R3 ;  /* 0x1 */\n                                  /* 0x2 */\n        /*0010*/  EXIT ;\n";
        let fs = parse_listing(text).expect("parses");
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].name, "k");
        assert_eq!(fs[0].instrs.len(), 2);
        assert_eq!(fs[0].instrs[0].location, Some(SourceLoc::new("a.cu", 7)));
        assert!(parse_listing("/*0000*/ FADD R1, R2, R3 ;").is_err());
    }
}
