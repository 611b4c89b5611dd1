//! Generator of `src/generated/{gfx9,opcode}.rs` of xfpx-amd-isa from
//! `tables/gfx9.tsv` (the instruction rows) and `tables/control.tsv` (the
//! control-flow kind of each branching mnemonic). A separate crate so that it
//! builds even when the generated files are stale.

use std::collections::{BTreeMap, BTreeSet};

/// The generated Rust sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// `src/generated/gfx9.rs`: the instruction rows.
    pub table: String,
    /// `src/generated/opcode.rs`: the `Opcode` enum and its per-mnemonic facts.
    pub opcodes: String,
}

/// Generate the Rust sources from the text of `tables/gfx9.tsv` and `tables/control.tsv`.
pub fn generate(tsv: &str, control_tsv: &str) -> Result<Generated, String> {
    let mut mnemonics = BTreeSet::new();
    let mut rows: Vec<(u8, u16, String)> = Vec::new();
    for (n, line) in tsv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 7 {
            return Err(format!("tables/gfx9.tsv:{}: expected 7 columns", n + 1));
        }
        let (enc_rank, enc) =
            encoding(cols[0]).ok_or_else(|| format!("line {}: unknown encoding {}", n + 1, cols[0]))?;
        let op: u16 = cols[1].parse().map_err(|_| format!("line {}: bad opcode", n + 1))?;
        let mut mask = 0u8;
        for t in cols[2].split(',') {
            mask |= match t {
                "gfx908" => 1,
                "gfx90a" => 2,
                "gfx942" => 4,
                "gfx950" => 8,
                _ => return Err(format!("line {}: unknown target {t}", n + 1)),
            };
        }
        let mut slots = Vec::new();
        if cols[4] != "-" {
            for el in cols[4].split(' ') {
                slots.push(slot(el).ok_or_else(|| format!("line {}: bad operand {el}", n + 1))?);
            }
        }
        let mut fl = Vec::new();
        if cols[5] != "-" {
            for f in cols[5].split(',') {
                fl.push(format!("flags::{}", f.to_uppercase()));
            }
        }
        let flags = if fl.is_empty() { "0".to_string() } else { fl.join(" | ") };
        let class = class(cols[6]).ok_or_else(|| format!("line {}: bad class {}", n + 1, cols[6]))?;
        let mnemonic = cols[3];
        if mnemonic.is_empty() || !mnemonic.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            return Err(format!("line {}: mnemonic {mnemonic:?} is not a Rust identifier", n + 1));
        }
        mnemonics.insert(mnemonic.to_string());
        let variant = variant(mnemonic);
        let text = format!(
            "    OpcodeRow {{ encoding: Encoding::{enc}, opcode: {op}, targets: {mask}, op: Opcode::{variant}, operands: &[{}], flags: {flags}, class: {class} }},\n",
            slots.join(", ")
        );
        rows.push((enc_rank, op, text));
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let mut out = String::new();
    out.push_str("//! Instruction table of gfx9/CDNA, generated from `tables/gfx9.tsv` by\n");
    out.push_str("//! `cargo run -p xfpx-amd-isa-tablegen`. Do not edit.\n\n");
    // Imports in the order rustfmt keeps them.
    out.push_str("use super::opcode::Opcode;\n");
    out.push_str("use crate::encoding::{Encoding, Field};\n");
    out.push_str("use crate::table::{flags, ConstType, ImmStyle, OpcodeRow, Slot, SlotKind, SlotMods};\n");
    out.push_str("use xfpx_common::{FpFormat, FpOp, InstrClass};\n\n");
    out.push_str("#[rustfmt::skip]\npub static OPCODES: &[OpcodeRow] = &[\n");
    for r in rows {
        out.push_str(&r.2);
    }
    out.push_str("];\n");
    let control = control_kinds(control_tsv, &mnemonics)?;
    Ok(Generated { table: out, opcodes: opcodes(&mnemonics, &control) })
}

/// The enum variant of a mnemonic: the mnemonic in upper case, as the ISA
/// manuals spell it (`v_add_f32_e32` is `V_ADD_F32_E32`).
fn variant(mnemonic: &str) -> String {
    mnemonic.to_ascii_uppercase()
}

const CONTROL_KINDS: &[(&str, &str)] = &[
    ("branch", "Branch"),
    ("cbranch", "CondBranch"),
    ("call", "Call"),
    ("getpc", "GetPc"),
    ("indirect", "Indirect"),
    ("end", "End"),
    ("trap", "Trap"),
];

/// `mnemonic -> ControlKind variant` from `tables/control.tsv`; every
/// mnemonic must be one the instruction table defines.
fn control_kinds(tsv: &str, mnemonics: &BTreeSet<String>) -> Result<BTreeMap<String, &'static str>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in tsv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != 2 {
            return Err(format!("tables/control.tsv:{}: expected 2 columns", n + 1));
        }
        if !mnemonics.contains(cols[0]) {
            return Err(format!("tables/control.tsv:{}: {} is not in tables/gfx9.tsv", n + 1, cols[0]));
        }
        let kind = CONTROL_KINDS
            .iter()
            .find(|k| k.0 == cols[1])
            .ok_or_else(|| format!("tables/control.tsv:{}: unknown kind {}", n + 1, cols[1]))?;
        if out.insert(cols[0].to_string(), kind.1).is_some() {
            return Err(format!("tables/control.tsv:{}: {} listed twice", n + 1, cols[0]));
        }
    }
    Ok(out)
}

/// The source of `src/generated/opcode.rs`.
fn opcodes(mnemonics: &BTreeSet<String>, control: &BTreeMap<String, &'static str>) -> String {
    let mut out = String::new();
    out.push_str("//! Opcodes of gfx9/CDNA (one per mnemonic of the table) and their control-flow\n");
    out.push_str("//! kinds, generated from `tables/gfx9.tsv` and `tables/control.tsv` by\n");
    out.push_str("//! `cargo run -p xfpx-amd-isa-tablegen`. Do not edit.\n\n");
    out.push_str("use crate::semantics::ControlKind;\n\n");
    out.push_str("/// An instruction's opcode: one variant per mnemonic of the instruction table\n");
    out.push_str("/// (`_e32`/`_e64` forms are distinct), spelled as the mnemonic in upper case.\n");
    out.push_str("/// Variants are in the mnemonics' alphabetical order.\n");
    out.push_str("#[rustfmt::skip]\n#[allow(non_camel_case_types, clippy::upper_case_acronyms)]\n");
    out.push_str(
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[repr(u16)]\npub enum Opcode {\n",
    );
    for m in mnemonics {
        out.push_str(&format!("    {},\n", variant(m)));
    }
    out.push_str("}\n\n");
    out.push_str(&format!(
        "/// Every opcode, in declaration order.\n#[rustfmt::skip]\npub static ALL: [Opcode; {}] = [\n",
        mnemonics.len()
    ));
    for m in mnemonics {
        out.push_str(&format!("    Opcode::{},\n", variant(m)));
    }
    out.push_str("];\n\n");
    out.push_str(&format!("/// The mnemonic of each opcode, indexed by the opcode (sorted).\n#[rustfmt::skip]\npub static MNEMONICS: [&str; {}] = [\n", mnemonics.len()));
    for m in mnemonics {
        out.push_str(&format!("    {m:?},\n"));
    }
    out.push_str("];\n\n");
    out.push_str("/// The control-flow kind of an opcode (`None` for one that falls through).\n");
    out.push_str("#[rustfmt::skip]\npub const fn control(op: Opcode) -> ControlKind {\n    match op {\n");
    for (m, kind) in control {
        out.push_str(&format!("        Opcode::{} => ControlKind::{kind},\n", variant(m)));
    }
    out.push_str("        _ => ControlKind::None,\n    }\n}\n");
    out
}

const ENCODINGS: &[&str] = &[
    "SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC", "VOP3", "VOP3P", "DS", "FLAT", "SCRATCH",
    "GLOBAL", "MUBUF", "MTBUF", "MIMG", "EXP", "VINTRP",
];
const ENCODING_NAMES: &[&str] = &[
    "Sop2", "Sopk", "Sop1", "Sopc", "Sopp", "Smem", "Vop2", "Vop1", "Vopc", "Vop3", "Vop3p", "Ds", "Flat", "Scratch",
    "Global", "Mubuf", "Mtbuf", "Mimg", "Exp", "Vintrp",
];

fn encoding(s: &str) -> Option<(u8, &'static str)> {
    ENCODINGS.iter().position(|e| *e == s).map(|i| (i as u8, ENCODING_NAMES[i]))
}

fn field(name: &str) -> Option<&'static str> {
    Some(match name {
        "sdst" => "Sdst",
        "ssrc0" => "Ssrc0",
        "ssrc1" => "Ssrc1",
        "simm16" => "Simm16",
        "sdata" => "Sdata",
        "sbase" => "Sbase",
        "offset" => "SmemOffset",
        "vdst" => "Vdst",
        "src0" => "Src0",
        "src1" => "Src1",
        "src2" => "Src2",
        "vsrc1" => "Vsrc1",
        "addr" => "Addr",
        "data0" => "Data0",
        "data1" => "Data1",
        "data" => "Data",
        "saddr" => "Saddr",
        "vaddr" => "Vaddr",
        "vdata" => "Vdata",
        "srsrc" => "Srsrc",
        "soffset" => "Soffset",
        "ssamp" => "Ssamp",
        _ => "Op",
    })
}

fn slot(el: &str) -> Option<String> {
    if el == "?" {
        return Some(
            "Slot { field: Field::Op, kind: SlotKind::Unknown, width: 0, mods: SlotMods::NONE, invalid: &[] }".into(),
        );
    }
    let all: Vec<&str> = el.split(':').collect();
    let p: Vec<&str> = all.iter().copied().filter(|x| !x.starts_with('!') && !x.starts_with('~')).collect();
    let styles = all.iter().find(|x| x.starts_with('~')).map(|x| &x[1..]).unwrap_or("");
    let mods = format!(
        "SlotMods {{ abs: {}, neg: {}, sext: {} }}",
        styles.contains('a'),
        styles.contains('n'),
        styles.contains('s')
    );
    let mut invalid = Vec::new();
    for note in all.iter().filter(|x| x.starts_with('!')) {
        let (cat, class) = note[1..].split_once('=')?;
        let cat = cat.chars().next()?;
        invalid.push(format!("({cat:?}, {class:?})"));
    }
    if p.len() < 3 {
        return None;
    }
    let width: u8 = p[2].parse().ok()?;
    let f = field(p[0])?;
    let kind = match p[1] {
        "x" => {
            let ty = match p.get(3).copied().unwrap_or("b32") {
                "b32" => "B32",
                "b64" => "B64",
                "f16" => "F16",
                "i16" => "I16",
                _ => return None,
            };
            format!("SlotKind::Code(ConstType::{ty})")
        }
        "v" => "SlotKind::Vgpr".into(),
        "a" => "SlotKind::Agpr".into(),
        "k" if p[0] == "K" => "SlotKind::Constant".into(),
        "k" => format!("SlotKind::Fixed({:?})", p[0]),
        "o" => "SlotKind::SmemOffset".into(),
        "i" => "SlotKind::Number".into(),
        "udec" => "SlotKind::Imm(ImmStyle::Udec)".into(),
        "hex" => "SlotKind::Imm(ImmStyle::Hex)".into(),
        "hwreg" => "SlotKind::Imm(ImmStyle::Hwreg)".into(),
        "sendmsg" => "SlotKind::Imm(ImmStyle::Sendmsg)".into(),
        "waitcnt" => "SlotKind::Imm(ImmStyle::Waitcnt)".into(),
        "gpridx" => "SlotKind::Imm(ImmStyle::GprIdx)".into(),
        _ => return None,
    };
    let width = if p[0] == "K" { width / 16 } else { width };
    Some(format!(
        "Slot {{ field: Field::{f}, kind: {kind}, width: {width}, mods: {mods}, invalid: &[{}] }}",
        invalid.join(", ")
    ))
}

fn class(s: &str) -> Option<String> {
    if s == "other" {
        return Some("InstrClass::Other".into());
    }
    let (fmt, op) = s.split_once('.')?;
    let format = match fmt {
        "f16" => "F16",
        "f16x2" => "F16x2",
        "bf16" => "Bf16",
        "bf16x2" => "Bf16x2",
        "f32" => "F32",
        "f64" => "F64",
        _ => return None,
    };
    let f = format!("FpFormat::{format}");
    Some(match op {
        "cmp" => format!("InstrClass::Compare {{ format: {f} }}"),
        "sel" => format!("InstrClass::Select {{ format: {f} }}"),
        "minmax" => format!("InstrClass::MinMax {{ format: {f} }}"),
        "matrix" => format!("InstrClass::Matrix {{ format: {f} }}"),
        other => {
            let o = match other {
                "add" => "Add",
                "mul" => "Mul",
                "fma" => "Fma",
                "div" => "Div",
                "sqrt" => "Sqrt",
                "rsqrt" => "Rsqrt",
                "transcendental" => "Transcendental",
                "conversion" => "Conversion",
                _ => return None,
            };
            format!("InstrClass::Arith {{ format: {f}, op: FpOp::{o} }}")
        }
    })
}
