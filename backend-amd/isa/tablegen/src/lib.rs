//! Generator of `src/generated/{gfx9,opcode,operation,facts}.rs` of
//! xfpx-amd-isa from the hand-written and swept tables under `tables/`:
//! `gfx9.tsv` (the instruction rows), `control.tsv` (the control-flow kind
//! of each branching mnemonic), `family.tsv` (operation families) and the
//! rule tables of further per-opcode facts (`traits.tsv`, `access.tsv`,
//! `counters.tsv`, `hazard.tsv`, `other.tsv`). A separate crate so that it
//! builds even when the generated files are stale.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod facts;
use facts::{facts, MnemonicInfo};

/// The tables the generator reads, as text.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// `gfx9.tsv`: the instruction rows.
    pub gfx9: String,
    /// `control.tsv`: the control-flow kind of each branching mnemonic.
    pub control: String,
    /// `family.tsv`: operation families (first matching rule).
    pub family: String,
    /// `traits.tsv`: traits (every matching rule; a `!TRAIT` rule takes the trait away).
    pub traits: String,
    /// `access.tsv`: the memory access of memory instructions (first matching rule).
    pub access: String,
    /// `counters.tsv`: the wait counters an instruction increments (first matching rule).
    pub counters: String,
    /// `hazard.tsv`: the hazard a reader of the result faces (first matching rule).
    pub hazard: String,
    /// `other.tsv`: the word pairs of an IOC fault's other operation.
    pub other: String,
}

impl Tables {
    /// Reads every table from `dir` (the `tables/` folder).
    pub fn read(dir: &Path) -> Result<Tables, String> {
        let read =
            |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| format!("cannot read tables/{name}: {e}"));
        Ok(Tables {
            gfx9: read("gfx9.tsv")?,
            control: read("control.tsv")?,
            family: read("family.tsv")?,
            traits: read("traits.tsv")?,
            access: read("access.tsv")?,
            counters: read("counters.tsv")?,
            hazard: read("hazard.tsv")?,
            other: read("other.tsv")?,
        })
    }
}

/// The generated Rust sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// `src/generated/gfx9.rs`: the instruction rows.
    pub table: String,
    /// `src/generated/opcode.rs`: the `Opcode` enum and its per-mnemonic facts.
    pub opcodes: String,
    /// `src/generated/operation.rs`: data types, compares, families and stems.
    pub operations: String,
    /// `src/generated/facts.rs`: traits, memory access, counters, hazards,
    /// other operations and conversions.
    pub facts: String,
}

impl Generated {
    /// Each generated file's name under `src/generated/` and its text.
    pub fn files(&self) -> [(&'static str, &str); 4] {
        [
            ("gfx9.rs", &self.table),
            ("opcode.rs", &self.opcodes),
            ("operation.rs", &self.operations),
            ("facts.rs", &self.facts),
        ]
    }
}

/// Generate the Rust sources from the tables.
pub fn generate(t: &Tables) -> Result<Generated, String> {
    let mut mnemonics = BTreeSet::new();
    let mut infos: BTreeMap<String, MnemonicInfo> = BTreeMap::new();
    let mut rows: Vec<(u8, u16, String)> = Vec::new();
    for (n, line) in t.gfx9.lines().enumerate().skip(1) {
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
        let info = MnemonicInfo { encoding: cols[0].to_string(), class: cols[6].to_string() };
        match infos.get(mnemonic) {
            Some(known) if known.encoding != info.encoding || known.class != info.class => {
                return Err(format!("line {}: {mnemonic} has another encoding or class on another row", n + 1))
            }
            Some(_) => {}
            None => {
                infos.insert(mnemonic.to_string(), info);
            }
        }
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
    let control = control_kinds(&t.control, &mnemonics)?;
    let operations = operations(&mnemonics, &t.family)?;
    let facts = facts(&infos, t)?;
    Ok(Generated { table: out, opcodes: opcodes(&mnemonics, &control), operations, facts })
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

/// The rows of a two-column table `tables/{file}` after its header, each
/// with its line number; blank lines are skipped.
fn two_columns<'t>(file: &str, tsv: &'t str) -> Result<Vec<(usize, &'t str, &'t str)>, String> {
    let mut out = Vec::new();
    for (n, line) in tsv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        match line.split('\t').collect::<Vec<&str>>()[..] {
            [a, b] => out.push((n + 1, a, b)),
            _ => return Err(format!("tables/{file}:{}: expected 2 columns", n + 1)),
        }
    }
    Ok(out)
}

/// `mnemonic -> ControlKind variant` from `tables/control.tsv`; every
/// mnemonic must be one the instruction table defines.
fn control_kinds(tsv: &str, mnemonics: &BTreeSet<String>) -> Result<BTreeMap<String, &'static str>, String> {
    let mut out = BTreeMap::new();
    for (n, mnemonic, kind) in two_columns("control.tsv", tsv)? {
        if !mnemonics.contains(mnemonic) {
            return Err(format!("tables/control.tsv:{n}: {mnemonic} is not in tables/gfx9.tsv"));
        }
        let kind = CONTROL_KINDS
            .iter()
            .find(|k| k.0 == kind)
            .ok_or_else(|| format!("tables/control.tsv:{n}: unknown kind {kind}"))?;
        if out.insert(mnemonic.to_string(), kind.1).is_some() {
            return Err(format!("tables/control.tsv:{n}: {mnemonic} listed twice"));
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

/// A mnemonic without its form suffix (`_e32`, `_e64`).
fn stem(mnemonic: &str) -> &str {
    mnemonic.strip_suffix("_e32").or_else(|| mnemonic.strip_suffix("_e64")).unwrap_or(mnemonic)
}

/// The `DataType` variant of a type part of a mnemonic.
fn data_type(part: &str) -> Option<&'static str> {
    Some(match part {
        "b16" => "B16",
        "b32" => "B32",
        "b64" => "B64",
        "i8" => "I8",
        "u8" => "U8",
        "i16" => "I16",
        "u16" => "U16",
        "i24" => "I24",
        "u24" => "U24",
        "i32" => "I32",
        "u32" => "U32",
        "i64" => "I64",
        "u64" => "U64",
        "f16" => "F16",
        "bf16" => "Bf16",
        "f32" => "F32",
        "f64" => "F64",
        _ => return None,
    })
}

const CMP_CONDS: &[(&str, &str)] = &[
    ("f", "F"),
    ("lt", "Lt"),
    ("eq", "Eq"),
    ("le", "Le"),
    ("gt", "Gt"),
    ("lg", "Lg"),
    ("ge", "Ge"),
    ("o", "O"),
    ("u", "U"),
    ("nge", "Nge"),
    ("nlg", "Nlg"),
    ("ngt", "Ngt"),
    ("nle", "Nle"),
    ("neq", "Neq"),
    ("nlt", "Nlt"),
    ("tru", "Tru"),
    ("ne", "Ne"),
    ("t", "T"),
    ("class", "Class"),
];

/// The `Compare` of a compare mnemonic (`v_cmpx_lt_f32_e64`), `None` for
/// other mnemonics; a compare whose condition or type is unknown is an error.
fn compare(mnemonic: &str) -> Result<Option<String>, String> {
    let stem = stem(mnemonic);
    let Some((unit, rest)) =
        [("v_cmpx_", "VectorExec"), ("v_cmp_", "Vector"), ("s_cmpk_", "ScalarImm"), ("s_cmp_", "Scalar")]
            .iter()
            .find_map(|(p, unit)| stem.strip_prefix(p).map(|rest| (*unit, rest)))
    else {
        return Ok(None);
    };
    let parsed = rest.rsplit_once('_').and_then(|(cond, ty)| {
        let cond = CMP_CONDS.iter().find(|c| c.0 == cond)?.1;
        Some((cond, data_type(ty)?))
    });
    let (cond, ty) = parsed.ok_or_else(|| format!("compare {mnemonic}: unknown condition or type"))?;
    Ok(Some(format!("Compare {{ unit: CmpUnit::{unit}, cond: CmpCond::{cond}, ty: DataType::{ty} }}")))
}

const FAMILIES: &[(&str, &str)] = &[
    ("packed", "Packed"),
    ("fma_mix", "FmaMix"),
    ("matrix", "Matrix"),
    ("accvgpr_move", "AccvgprMove"),
    ("convert", "Convert"),
    ("flat_atomic", "FlatAtomic"),
    ("lds_read", "LdsRead"),
    ("lds_return", "LdsReturn"),
    ("save_exec", "SaveExec"),
];

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else { return false };
            (0..=rest.len()).any(|i| rest.is_char_boundary(i) && glob(tail, &rest[i..]))
        }
    }
}

/// `(pattern, Family variant)` rows of `tables/family.tsv`, in order.
fn family_rules(tsv: &str) -> Result<Vec<(String, &'static str)>, String> {
    let mut rules = Vec::new();
    for (n, pattern, family) in two_columns("family.tsv", tsv)? {
        let family = FAMILIES
            .iter()
            .find(|f| f.0 == family)
            .ok_or_else(|| format!("tables/family.tsv:{n}: unknown family {family}"))?;
        rules.push((pattern.to_string(), family.1));
    }
    Ok(rules)
}

/// The source of `src/generated/operation.rs`.
fn operations(mnemonics: &BTreeSet<String>, family_tsv: &str) -> Result<String, String> {
    let rules = family_rules(family_tsv)?;
    let mut out = String::new();
    out.push_str("//! What each opcode's mnemonic says about its operation (data type, compare,\n");
    out.push_str("//! family, stem), generated from `tables/gfx9.tsv` and `tables/family.tsv` by\n");
    out.push_str("//! `cargo run -p xfpx-amd-isa-tablegen`. Do not edit.\n\n");
    out.push_str("use super::opcode::Opcode;\n");
    out.push_str("use crate::operation::{CmpCond, CmpUnit, Compare, DataType, Family};\n\n");
    out.push_str("/// The data type the mnemonic names last.\n");
    out.push_str("#[rustfmt::skip]\npub const fn data_type(op: Opcode) -> Option<DataType> {\n    match op {\n");
    for m in mnemonics {
        if let Some(t) = stem(m).rsplit('_').next().and_then(data_type) {
            out.push_str(&format!("        Opcode::{} => Some(DataType::{t}),\n", variant(m)));
        }
    }
    out.push_str("        _ => None,\n    }\n}\n\n");
    out.push_str("/// The comparison a compare opcode makes.\n");
    out.push_str("#[rustfmt::skip]\npub const fn compare(op: Opcode) -> Option<Compare> {\n    match op {\n");
    for m in mnemonics {
        if let Some(c) = compare(m)? {
            out.push_str(&format!("        Opcode::{} => Some({c}),\n", variant(m)));
        }
    }
    out.push_str("        _ => None,\n    }\n}\n\n");
    out.push_str("/// The operation family of an opcode (the first matching rule of `tables/family.tsv`).\n");
    out.push_str("#[rustfmt::skip]\npub const fn family(op: Opcode) -> Family {\n    match op {\n");
    for m in mnemonics {
        if let Some((_, f)) = rules.iter().find(|(p, _)| glob(p, m)) {
            out.push_str(&format!("        Opcode::{} => Family::{f},\n", variant(m)));
        }
    }
    out.push_str("        _ => Family::Other,\n    }\n}\n\n");
    out.push_str("/// The opcode of every form of a mnemonic: its `_e32` form where there is one.\n");
    out.push_str("#[rustfmt::skip]\npub const fn stem(op: Opcode) -> Opcode {\n    match op {\n");
    for m in mnemonics {
        let e32 = format!("{}_e32", stem(m));
        if *m != e32 && mnemonics.contains(&e32) {
            out.push_str(&format!("        Opcode::{} => Opcode::{},\n", variant(m), variant(&e32)));
        }
    }
    out.push_str("        _ => op,\n    }\n}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_prefixes_and_infixes() {
        assert!(glob("v_pk_*", "v_pk_add_f16"));
        assert!(!glob("v_pk_*", "v_add_f16"));
        assert!(glob("ds_*_rtn_*", "ds_add_rtn_u32"));
        assert!(!glob("ds_*_rtn_*", "ds_add_u32"));
        assert!(glob("s_*_saveexec_b64", "s_and_saveexec_b64"));
        assert!(!glob("s_*_saveexec_b64", "s_and_saveexec_b32"));
    }

    #[test]
    fn compares_parse_and_unknown_ones_are_errors() {
        assert_eq!(
            compare("v_cmpx_lt_f32_e64").expect("parses").as_deref(),
            Some("Compare { unit: CmpUnit::VectorExec, cond: CmpCond::Lt, ty: DataType::F32 }")
        );
        assert_eq!(
            compare("s_cmpk_lg_u32").expect("parses").as_deref(),
            Some("Compare { unit: CmpUnit::ScalarImm, cond: CmpCond::Lg, ty: DataType::U32 }")
        );
        assert_eq!(compare("v_add_f32_e32").expect("parses"), None);
        assert!(compare("v_cmp_zz_f32_e32").is_err());
    }
}
