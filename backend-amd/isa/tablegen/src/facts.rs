//! The rule tables of per-opcode facts (`tables/traits.tsv`, `access.tsv`,
//! `counters.tsv`, `hazard.tsv`, `other.tsv`) and the conversion formats
//! read from the mnemonics, compiled into `src/generated/facts.rs`.

use std::collections::{BTreeMap, BTreeSet};

use crate::{glob, two_columns, variant, Tables, ENCODINGS};

/// What a rule of `tables/{access,counters,hazard,traits}.tsv` selects: a
/// mnemonic glob, `enc=ENCODING` (the encoding column of `tables/gfx9.tsv`)
/// or `class=GLOB` (its class column).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    Mnemonic(String),
    Encoding(String),
    Class(String),
}

/// One rule: its selector and its value.
#[derive(Debug, Clone)]
struct Rule {
    selector: Selector,
    value: String,
}

/// What the instruction table says of one mnemonic besides its rows.
#[derive(Debug, Clone, Default)]
pub(crate) struct MnemonicInfo {
    /// The encoding column (`SMEM`).
    pub(crate) encoding: String,
    /// The class column (`f32.div`).
    pub(crate) class: String,
}

impl Selector {
    fn parse(s: &str) -> Selector {
        if let Some(e) = s.strip_prefix("enc=") {
            Selector::Encoding(e.to_string())
        } else if let Some(c) = s.strip_prefix("class=") {
            Selector::Class(c.to_string())
        } else {
            Selector::Mnemonic(s.to_string())
        }
    }

    fn matches(&self, mnemonic: &str, info: &MnemonicInfo) -> bool {
        match self {
            Selector::Mnemonic(p) => glob(p, mnemonic),
            Selector::Encoding(e) => *e == info.encoding,
            Selector::Class(p) => glob(p, &info.class),
        }
    }
}

/// The rules of `tables/{file}`: two columns (selector, value), each value
/// one of `values` (or, where `list` is set, a comma-separated list of them).
fn rules(file: &str, tsv: &str, values: &[&str], list: bool) -> Result<Vec<Rule>, String> {
    let mut out = Vec::new();
    for (n, selector, value) in two_columns(file, tsv)? {
        let parts: Vec<&str> = if list { value.split(',').collect() } else { vec![value] };
        if let Some(bad) = parts.iter().find(|p| !values.contains(p)) {
            return Err(format!("tables/{file}:{n}: unknown value {bad}"));
        }
        let selector = Selector::parse(selector);
        if let Selector::Encoding(e) = &selector {
            if !ENCODINGS.contains(&e.as_str()) {
                return Err(format!("tables/{file}:{n}: unknown encoding {e}"));
            }
        }
        out.push(Rule { selector, value: value.to_string() });
    }
    Ok(out)
}

/// The value of the first rule selecting `mnemonic`.
fn first<'r>(rules: &'r [Rule], mnemonic: &str, info: &MnemonicInfo) -> Option<&'r str> {
    rules.iter().find(|r| r.selector.matches(mnemonic, info)).map(|r| r.value.as_str())
}

/// Encodings of memory instructions, the ones `tables/access.tsv` describes.
const MEMORY_ENCODINGS: &[&str] = &["SMEM", "DS", "FLAT", "SCRATCH", "GLOBAL", "MUBUF", "MTBUF", "MIMG"];

const TRAITS: &[(&str, &str)] = &[
    ("writes_exec", "WRITES_EXEC"),
    ("reads_destination", "READS_DESTINATION"),
    ("move", "MOVE"),
    ("div_scale", "DIV_SCALE"),
    ("div_fmas", "DIV_FMAS"),
    ("div_fixup", "DIV_FIXUP"),
    ("gather4", "GATHER4"),
    ("cmpswap", "CMPSWAP"),
    ("sparse", "SPARSE"),
    ("f8f6f4", "F8F6F4"),
    ("partial_write", "PARTIAL_WRITE"),
];
const ACCESSES: &[(&str, &str)] = &[("load", "Load"), ("store", "Store"), ("atomic", "Atomic")];
const COUNTERS: &[&str] = &["vm", "lgkm", "exp", "-"];
const HAZARDS: &[(&str, &str)] = &[("matrix", "MatrixResult"), ("trans", "TransResult")];

/// Words of a conversion's mnemonic that come before its destination type.
const CONVERSION_PREFIX_WORDS: [&str; 6] = ["flr", "rpi", "norm", "off", "sr", "scalef32"];

/// Whether a `v_cvt_*` writes something other than a value of its class's
/// format: an integer, packed or 8-bit float destination (the first type
/// after the rounding and packing words).
fn conversion_writes_other_format(mnemonic: &str) -> bool {
    let Some(rest) = mnemonic.strip_prefix("v_cvt_") else { return false };
    let Some(dst) = rest.split('_').find(|t| !CONVERSION_PREFIX_WORDS.contains(t)) else { return false };
    dst == "pk" || dst.starts_with('i') || dst.starts_with('u') || dst == "fp8" || dst == "bf8"
}

/// The `SourceFormat` a `v_cvt_*` reads: the type after its destination's
/// (`v_cvt_f32_f64` reads f64), not a float for integer and byte types.
fn conversion_source(mnemonic: &str) -> Option<&'static str> {
    let rest = mnemonic.strip_prefix("v_cvt_")?;
    let mut types = rest.split('_').filter(|t| !CONVERSION_PREFIX_WORDS.contains(t) && !t.starts_with('e'));
    let _dst = types.next();
    Some(match types.next() {
        Some("f64") => "SourceFormat::Is(FpFormat::F64)",
        Some("f32") => "SourceFormat::Is(FpFormat::F32)",
        Some("f16") => "SourceFormat::Is(FpFormat::F16)",
        Some("bf16") => "SourceFormat::Is(FpFormat::Bf16)",
        Some(_) => "SourceFormat::NotFloat",
        None => "SourceFormat::OfClass",
    })
}

/// The opcode an IOC fault runs instead of `mnemonic`: its second word
/// swapped by the first pair of `tables/other.tsv` that names an existing
/// mnemonic.
fn other_operation<'m>(mnemonic: &str, pairs: &[(String, String)], mnemonics: &'m BTreeSet<String>) -> Option<&'m str> {
    let words: Vec<&str> = mnemonic.split('_').collect();
    if words.len() < 2 {
        return None;
    }
    pairs.iter().filter(|(from, _)| words[1] == from).find_map(|(_, to)| {
        let mut other = words.clone();
        other[1] = to;
        mnemonics.get(&other.join("_")).map(String::as_str)
    })
}

/// `(word, other word)` rows of `tables/other.tsv`, in order.
fn other_pairs(tsv: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, word, other) in two_columns("other.tsv", tsv)? {
        if [word, other].iter().any(|c| c.is_empty() || c.contains('_')) {
            return Err(format!("tables/other.tsv:{n}: expected two words"));
        }
        out.push((word.to_string(), other.to_string()));
    }
    Ok(out)
}

/// The source of `src/generated/facts.rs`.
pub(crate) fn facts(mnemonics: &BTreeMap<String, MnemonicInfo>, t: &Tables) -> Result<String, String> {
    let negated: Vec<String> = TRAITS.iter().map(|t| format!("!{}", t.0)).collect();
    let trait_names: Vec<&str> = TRAITS.iter().map(|t| t.0).chain(negated.iter().map(String::as_str)).collect();
    let traits = rules("traits.tsv", &t.traits, &trait_names, false)?;
    let access_names: Vec<&str> = ACCESSES.iter().map(|a| a.0).chain(["none"]).collect();
    let access = rules("access.tsv", &t.access, &access_names, false)?;
    let counters = rules("counters.tsv", &t.counters, COUNTERS, true)?;
    let hazard_names: Vec<&str> = HAZARDS.iter().map(|h| h.0).collect();
    let hazards = rules("hazard.tsv", &t.hazard, &hazard_names, false)?;
    let pairs = other_pairs(&t.other)?;
    let names: BTreeSet<String> = mnemonics.keys().cloned().collect();
    let mut out = String::new();
    out.push_str("//! Facts of each opcode that its lowering and execution dispatch on (traits,\n");
    out.push_str("//! memory access, wait counters, result hazard, the other operation of an IOC\n");
    out.push_str("//! fault, conversion formats), generated from `tables/gfx9.tsv` and\n");
    out.push_str("//! `tables/{traits,access,counters,hazard,other}.tsv` by\n");
    out.push_str("//! `cargo run -p xfpx-amd-isa-tablegen`. Do not edit.\n\n");
    out.push_str("use super::opcode::Opcode;\n");
    out.push_str("use crate::facts::{Access, Conversion, Hazard, Traits};\n");
    out.push_str("use crate::semantics::Counters;\n");
    out.push_str("use xfpx_common::view::SourceFormat;\n");
    out.push_str("use xfpx_common::FpFormat;\n\n");
    out.push_str(
        "/// The traits of an opcode (every matching rule of `tables/traits.tsv` but those a `!` rule takes away).\n",
    );
    out.push_str("#[rustfmt::skip]\npub const fn traits(op: Opcode) -> Traits {\n    match op {\n");
    for (m, info) in mnemonics {
        let set: Vec<&str> = TRAITS
            .iter()
            .filter(|(name, _)| {
                let selects = |value: &str| traits.iter().any(|r| r.value == value && r.selector.matches(m, info));
                selects(name) && !selects(&format!("!{name}"))
            })
            .map(|t| t.1)
            .collect();
        if let Some((head, rest)) = set.split_first() {
            let expr = rest.iter().fold(format!("Traits::{head}"), |e, t| format!("{e}.with(Traits::{t})"));
            out.push_str(&format!("        Opcode::{} => {expr},\n", variant(m)));
        }
    }
    out.push_str("        _ => Traits::NONE,\n    }\n}\n\n");
    out.push_str("/// The memory access of a memory instruction (the first matching rule of `tables/access.tsv`).\n");
    out.push_str("#[rustfmt::skip]\npub const fn access(op: Opcode) -> Option<Access> {\n    match op {\n");
    for (m, info) in mnemonics {
        if !MEMORY_ENCODINGS.contains(&info.encoding.as_str()) {
            continue;
        }
        if let Some(a) = first(&access, m, info).and_then(|v| ACCESSES.iter().find(|a| a.0 == v)) {
            out.push_str(&format!("        Opcode::{} => Some(Access::{}),\n", variant(m), a.1));
        }
    }
    out.push_str("        _ => None,\n    }\n}\n\n");
    out.push_str("/// The wait counters an opcode increments (the first matching rule of `tables/counters.tsv`).\n");
    out.push_str("#[rustfmt::skip]\npub const fn counters(op: Opcode) -> Counters {\n    match op {\n");
    for (m, info) in mnemonics {
        let Some(v) = first(&counters, m, info) else { continue };
        if v == "-" {
            continue;
        }
        let has = |c: &str| v.split(',').any(|x| x == c);
        out.push_str(&format!(
            "        Opcode::{} => Counters {{ vm: {}, lgkm: {}, exp: {} }},\n",
            variant(m),
            has("vm"),
            has("lgkm"),
            has("exp")
        ));
    }
    out.push_str("        _ => Counters { vm: false, lgkm: false, exp: false },\n    }\n}\n\n");
    out.push_str(
        "/// The hazard a reader of an opcode's result faces (the first matching rule of `tables/hazard.tsv`).\n",
    );
    out.push_str("#[rustfmt::skip]\npub const fn hazard(op: Opcode) -> Hazard {\n    match op {\n");
    for (m, info) in mnemonics {
        if let Some(h) = first(&hazards, m, info).and_then(|v| HAZARDS.iter().find(|h| h.0 == v)) {
            out.push_str(&format!("        Opcode::{} => Hazard::{},\n", variant(m), h.1));
        }
    }
    out.push_str("        _ => Hazard::None,\n    }\n}\n\n");
    out.push_str("/// The opcode an IOC fault executes instead (`tables/other.tsv`).\n");
    out.push_str("#[rustfmt::skip]\npub const fn other_operation(op: Opcode) -> Option<Opcode> {\n    match op {\n");
    for m in mnemonics.keys() {
        if let Some(o) = other_operation(m, &pairs, &names) {
            out.push_str(&format!("        Opcode::{} => Some(Opcode::{}),\n", variant(m), variant(o)));
        }
    }
    out.push_str("        _ => None,\n    }\n}\n\n");
    out.push_str("/// What a conversion (`v_cvt_*`) writes and reads, from its mnemonic.\n");
    out.push_str("#[rustfmt::skip]\npub const fn conversion(op: Opcode) -> Option<Conversion> {\n    match op {\n");
    for m in mnemonics.keys() {
        if let Some(source) = conversion_source(m) {
            out.push_str(&format!(
                "        Opcode::{} => Some(Conversion {{ writes_other_format: {}, source: {source} }}),\n",
                variant(m),
                conversion_writes_other_format(m)
            ));
        }
    }
    out.push_str("        _ => None,\n    }\n}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_select_by_mnemonic_encoding_and_class() {
        let info = |encoding: &str, class: &str| MnemonicInfo { encoding: encoding.into(), class: class.into() };
        let counters = rules(
            "counters.tsv",
            "selector\tcounters\ns_dcache_wb\t-\nenc=SMEM\tlgkm\nenc=FLAT\tvm,lgkm\n",
            COUNTERS,
            true,
        )
        .expect("parses");
        assert_eq!(first(&counters, "s_dcache_wb", &info("SMEM", "other")), Some("-"));
        assert_eq!(first(&counters, "s_load_dword", &info("SMEM", "other")), Some("lgkm"));
        assert_eq!(first(&counters, "flat_load_dword", &info("FLAT", "other")), Some("vm,lgkm"));
        assert_eq!(first(&counters, "v_add_f32_e32", &info("VOP2", "f32.add")), None);
        let hazards = rules("hazard.tsv", "selector\thazard\nclass=*.sqrt\ttrans\n", &["matrix", "trans"], false)
            .expect("parses");
        assert_eq!(first(&hazards, "v_sqrt_f32_e32", &info("VOP1", "f32.sqrt")), Some("trans"));
        assert_eq!(first(&hazards, "v_sqrt_f32_e32", &info("VOP1", "f32.add")), None);
        assert!(rules("hazard.tsv", "selector\thazard\nv_*\tslow\n", &["matrix", "trans"], false).is_err());
        assert!(rules("counters.tsv", "selector\tcounters\nenc=SMEMX\tlgkm\n", COUNTERS, true).is_err());
        assert!(rules("counters.tsv", "selector\tcounters\nenc=SMEM\tlgkm,vmcnt\n", COUNTERS, true).is_err());
    }

    #[test]
    fn other_operations_take_the_first_pair_naming_a_mnemonic() {
        let pairs = other_pairs("word\tother\nadd\tsub\nadd\tmul\n").expect("parses");
        let names: BTreeSet<String> = ["v_add_f64", "v_mul_f64", "v_add_f32", "v_sub_f32"].map(String::from).into();
        assert_eq!(other_operation("v_add_f32", &pairs, &names), Some("v_sub_f32"));
        assert_eq!(other_operation("v_add_f64", &pairs, &names), Some("v_mul_f64"));
        assert_eq!(other_operation("v_mul_f64", &pairs, &names), None);
        assert!(other_pairs("word\tother\nadd_x\tsub\n").is_err());
    }
}
