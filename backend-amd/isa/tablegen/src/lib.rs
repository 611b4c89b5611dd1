//! Generator of `src/generated/gfx9.rs` of xfpx-amd-isa from `tables/gfx9.tsv`.
//! A separate crate so that it builds even when the generated file is stale.

/// Generate the Rust source of the table from the TSV text.
pub fn generate(tsv: &str) -> Result<String, String> {
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
        let text = format!(
            "    OpcodeRow {{ encoding: Encoding::{enc}, opcode: {op}, targets: {mask}, mnemonic: {:?}, operands: &[{}], flags: {flags}, class: {class} }},\n",
            cols[3],
            slots.join(", ")
        );
        rows.push((enc_rank, op, text));
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let mut out = String::new();
    out.push_str("//! Instruction table of gfx9/CDNA, generated from `tables/gfx9.tsv` by\n");
    out.push_str("//! `cargo run -p xfpx-amd-isa-tablegen`. Do not edit.\n\n");
    out.push_str("use crate::encoding::{Encoding, Field};\n");
    out.push_str("use crate::table::{flags, ConstType, ImmStyle, OpcodeRow, Slot, SlotKind, SlotMods};\n");
    out.push_str("use xfpx_common::{FpFormat, FpOp, InstrClass};\n\n");
    out.push_str("#[rustfmt::skip]\npub static OPCODES: &[OpcodeRow] = &[\n");
    for r in rows {
        out.push_str(&r.2);
    }
    out.push_str("];\n");
    Ok(out)
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
