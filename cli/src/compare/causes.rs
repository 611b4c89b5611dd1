//! Likely causes of a difference, from what the reports really show: the
//! kernels' denormal modes (AMD: the descriptor's `FLOAT_DENORM_MODE_*`),
//! flush-to-zero instruction flavours (NVIDIA `.FTZ`), approximate
//! reciprocal or reciprocal square root instructions, other
//! special-function instructions (a math routine computed differently)
//! and contracted FMAs at the line (the instructions with findings
//! there). Nothing else is guessed: without evidence the cause is "cause
//! unknown".

use super::model::LineDiff;
use xfpx_common::report::Denormals;

pub const UNKNOWN: &str = "cause unknown";

/// The denormal handling of `d` for values of `format` (f32, or the f16/f64 group).
fn denormals_for<'a>(d: &'a Denormals, format: &str) -> &'a str {
    if format == "f32" {
        &d.f32
    } else {
        &d.f16_f64
    }
}

fn says(mode: &str, format: &str) -> String {
    let group = if format == "f32" { "f32" } else { "f16/f64" };
    match mode {
        "keep" => format!("keeps {group} denormals"),
        "flush" => format!("flushes {group} denormals"),
        "flush-inputs" => format!("flushes {group} denormal inputs"),
        "flush-results" => format!("flushes {group} denormal results"),
        other => format!("{group} denormals: {other}"),
    }
}

/// The cause named when two kernels' denormal modes differ for `format`.
pub fn denormal_mode(a: Option<&Denormals>, b: Option<&Denormals>, format: &str) -> Option<String> {
    let (ma, mb) = (denormals_for(a?, format), denormals_for(b?, format));
    (ma != mb)
        .then(|| format!("denormal mode: A {}, B {} (the kernels' code objects)", says(ma, format), says(mb, format)))
}

fn is_ftz(i: &str) -> bool {
    i.split_whitespace().next().is_some_and(|op| op.split('.').any(|p| p == "FTZ"))
}

/// The operation of an instruction text: its first word, without an AMD
/// encoding suffix (`v_rcp_f32_e32` and `v_rcp_f32` are one operation).
fn mnemonic(i: &str) -> &str {
    let m = i.split_whitespace().next().unwrap_or("");
    ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|s| m.strip_suffix(s)).unwrap_or(m)
}

fn is_approx(i: &str) -> bool {
    let m = mnemonic(i);
    m.starts_with("v_rcp_") || m.starts_with("v_rsq_") || m.starts_with("MUFU.RCP") || m.starts_with("MUFU.RSQ")
}

/// Special-function instructions other than the reciprocal and its
/// square root: what math routines are made of (NVIDIA `MUFU.EX2`,
/// `MUFU.LG2`, `MUFU.SIN`, ...; AMD `v_exp_f32`, `v_log_f32`, `v_sin_f32`, ...).
fn is_transcendental(i: &str) -> bool {
    let m = mnemonic(i);
    if let Some(op) = m.strip_prefix("MUFU.") {
        return !op.starts_with("RCP") && !op.starts_with("RSQ");
    }
    ["v_exp_", "v_log_", "v_sin_", "v_cos_", "v_sqrt_"].iter().any(|p| m.starts_with(p))
}

fn is_fma(i: &str) -> bool {
    let m = mnemonic(i);
    ["v_fma_", "v_fmac_", "v_pk_fma_", "v_mad_", "v_mac_", "FFMA", "DFMA", "HFMA2"].iter().any(|p| m.starts_with(p))
}

fn is_mul_or_add(i: &str) -> bool {
    let m = mnemonic(i);
    ["v_mul_f", "v_add_f", "v_sub_f", "v_pk_mul_f", "v_pk_add_f", "FMUL", "FADD", "DMUL", "DADD", "HMUL2", "HADD2"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// A select that picks a NaN or infinity constant: the value is written,
/// not computed (NVIDIA `FSEL R5, R0, +QNAN, P0`; AMD `v_cndmask_b32` with
/// such a literal).
fn is_special_constant_select(i: &str) -> bool {
    let m = mnemonic(i);
    let select = m.starts_with("FSEL") || m.starts_with("SEL") || m.starts_with("v_cndmask");
    let special = ["QNAN", "INF", "0x7fc00000", "0x7f800000", "0xff800000"].iter().any(|c| i.contains(c));
    select && special
}

fn listed(instrs: &[String], pick: fn(&str) -> bool) -> Vec<&str> {
    let mut v: Vec<&str> = instrs.iter().map(|i| mnemonic(i)).filter(|m| pick(m)).collect();
    v.dedup();
    v
}

/// The likely causes of a line's difference ("cause unknown" when the
/// reports show none). `modes`: the reports' instrumentation modes.
pub fn of_line(l: &LineDiff, modes: (&str, &str), a: Option<&Denormals>, b: Option<&Denormals>) -> Vec<String> {
    let mut causes = Vec::new();
    // denormal modes, for the formats whose classes differ
    let mut formats: Vec<&str> =
        l.a.iter()
            .chain(&l.b)
            .filter(|c| {
                let name = format!("{} ({})", c.kind, c.format);
                l.only_a.contains(&name) || l.only_b.contains(&name)
            })
            .map(|c| c.format.as_str())
            .collect();
    formats.sort_unstable();
    formats.dedup();
    causes.extend(formats.iter().filter_map(|f| denormal_mode(a, b, f)));
    // flush-to-zero flavours at the line
    let (fa, fb) = (listed(&l.instr_a, is_ftz), listed(&l.instr_b, is_ftz));
    for (side, mine, other, theirs) in [("A", &fa, "B", &l.instr_b), ("B", &fb, "A", &l.instr_a)] {
        if !mine.is_empty() && !theirs.is_empty() && !theirs.iter().any(|i| is_ftz(i)) {
            causes.push(format!(
                "flush-to-zero instruction on {side} only at this line ({}); {other} keeps denormals there",
                mine.join(", ")
            ));
        }
    }
    // approximate reciprocal / rsqrt
    let (ra, rb) = (listed(&l.instr_a, is_approx), listed(&l.instr_b, is_approx));
    match (ra.is_empty(), rb.is_empty()) {
        (false, true) if !l.instr_b.is_empty() => {
            causes.push(format!("approximate reciprocal or rsqrt instruction on A only ({})", ra.join(", ")))
        }
        (true, false) if !l.instr_a.is_empty() => {
            causes.push(format!("approximate reciprocal or rsqrt instruction on B only ({})", rb.join(", ")))
        }
        (false, false) if ra != rb => causes.push(format!(
            "different approximate reciprocal or rsqrt instructions ({} on A, {} on B)",
            ra.join(", "),
            rb.join(", ")
        )),
        _ => {}
    }
    // a math routine made of different special-function instructions
    let (ta, tb) = (listed(&l.instr_a, is_transcendental), listed(&l.instr_b, is_transcendental));
    match (ta.is_empty(), tb.is_empty()) {
        (false, false) if ta != tb => causes.push(format!(
            "a math routine computed differently: {} on A, {} on B (each side's own implementation of the function)",
            ta.join(", "),
            tb.join(", ")
        )),
        (false, true) if !l.instr_b.is_empty() => causes.push(format!(
            "a math routine computed differently: special-function instructions on A only ({})",
            ta.join(", ")
        )),
        (true, false) if !l.instr_a.is_empty() => causes.push(format!(
            "a math routine computed differently: special-function instructions on B only ({})",
            tb.join(", ")
        )),
        _ => {}
    }
    // a NaN or infinity constant picked by a select, checked on one side
    // (the constant is an operand: judged on the whole instruction text)
    let selects = |instrs: &[String]| -> Vec<String> {
        let mut v: Vec<String> =
            instrs.iter().filter(|i| is_special_constant_select(i)).map(|i| mnemonic(i).to_string()).collect();
        v.dedup();
        v
    };
    let (sa, sb) = (selects(&l.instr_a), selects(&l.instr_b));
    for (side, sel, other, theirs) in [("A", &sa, "B", &l.instr_b), ("B", &sb, "A", &l.instr_a)] {
        if !sel.is_empty() && !theirs.iter().any(|i| is_special_constant_select(i)) {
            causes.push(format!(
                "a NaN or infinity constant picked by a select on {side} ({}): written, not computed; {side}'s detector checks select results, {other}'s checks none at this line",
                sel.join(", ")
            ));
        }
    }
    // contracted FMA on one side, separate multiply and add on the other
    let (ma, mb) = (listed(&l.instr_a, is_fma), listed(&l.instr_b, is_fma));
    for (side, fmas, other, theirs) in [("A", &ma, "B", &l.instr_b), ("B", &mb, "A", &l.instr_a)] {
        if !fmas.is_empty() && !theirs.iter().any(|i| is_fma(i)) && theirs.iter().any(|i| is_mul_or_add(i)) {
            causes.push(format!(
                "contracted FMA on {side} only ({}); {other} multiplies and adds separately",
                fmas.join(", ")
            ));
        }
    }
    if modes.0 != modes.1 {
        causes.push(format!(
            "the reports were made in different modes (A: {}, B: {}), which may classify one result differently",
            modes.0, modes.1
        ));
    }
    if causes.is_empty() {
        causes.push(UNKNOWN.to_string());
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::Class;

    fn line(a: &[(&str, &str)], b: &[(&str, &str)], ia: &[&str], ib: &[&str]) -> LineDiff {
        let classes = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(k, f)| Class { kind: k.to_string(), format: f.to_string(), occurrences: 1 })
                .collect::<Vec<_>>()
        };
        let names = |v: &[(&str, &str)]| v.iter().map(|(k, f)| format!("{k} ({f})")).collect::<Vec<_>>();
        let (na, nb) = (names(a), names(b));
        LineDiff {
            place: "k.cu:3".into(),
            a: classes(a),
            b: classes(b),
            only_a: na.iter().filter(|n| !nb.contains(n)).cloned().collect(),
            only_b: nb.iter().filter(|n| !na.contains(n)).cloned().collect(),
            instr_a: ia.iter().map(|s| s.to_string()).collect(),
            instr_b: ib.iter().map(|s| s.to_string()).collect(),
            causes: Vec::new(),
        }
    }

    const M: (&str, &str) = ("detect", "detect");

    fn mode(f32: &str) -> Denormals {
        Denormals { f32: f32.into(), f16_f64: "keep".into() }
    }

    #[test]
    fn a_selected_nan_constant_is_named_only_with_the_constant() {
        let sel = line(&[("nan", "f32")], &[], &["FSEL R5, R0, +QNAN , P0"], &[]);
        let c = of_line(&sel, M, None, None);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].starts_with("a NaN or infinity constant picked by a select on A (FSEL)"), "{c:?}");
        // a select of computed values says nothing
        let plain = line(&[("nan", "f32")], &[], &["FSEL R5, R0, R3, P0"], &[]);
        assert_eq!(of_line(&plain, M, None, None), [UNKNOWN]);
    }

    #[test]
    fn causes_come_only_from_evidence() {
        let l = line(&[("sub", "f32")], &[], &["v_mul_f32"], &[]);
        let (keep, flush) = (mode("keep"), mode("flush"));
        let c = of_line(&l, M, Some(&keep), Some(&flush));
        assert_eq!(c, ["denormal mode: A keeps f32 denormals, B flushes f32 denormals (the kernels' code objects)"]);
        assert_eq!(of_line(&l, M, Some(&keep), Some(&keep)), [UNKNOWN]);
        assert_eq!(of_line(&l, M, None, Some(&flush)), [UNKNOWN], "one side's mode unknown");
        // f64 classes look at the f16/f64 mode, which is the same here
        let d = line(&[("sub", "f64")], &[], &["v_mul_f64"], &[]);
        assert_eq!(of_line(&d, M, Some(&keep), Some(&flush)), [UNKNOWN]);

        let ftz = line(&[("sub", "f32")], &[], &["FMUL R1, R2, R3"], &["FMUL.FTZ R1, R2, R3"]);
        assert!(of_line(&ftz, M, None, None)[0].starts_with("flush-to-zero instruction on B only"));
        let rcp = line(&[("inf", "f32")], &[("div0", "f32")], &["v_rcp_f32"], &["MUFU.RCP R1, R2"]);
        assert!(of_line(&rcp, M, None, None)[0].contains("v_rcp_f32 on A, MUFU.RCP on B"));
        let fma = line(&[("nan", "f32")], &[], &["FFMA R1, R2, R3, R4"], &["FMUL R1, R2, R3", "FADD R1, R1, R4"]);
        assert!(of_line(&fma, M, None, None)[0].starts_with("contracted FMA on A only (FFMA)"));
        let pow = line(
            &[("nan", "f32"), ("inf", "f32")],
            &[("inf", "f32")],
            &["MUFU.LG2 R2, R2", "FMUL R3, R2, R4", "MUFU.EX2 R5, R3"],
            &["v_log_f32_e32 v1, v1", "v_exp_f32_e32 v2, v2"],
        );
        assert_eq!(
            of_line(&pow, M, None, None),
            ["a math routine computed differently: MUFU.LG2, MUFU.EX2 on A, v_log_f32, v_exp_f32 on B (each side's own \
              implementation of the function)"]
        );
        let one_side = line(&[("nan", "f32")], &[], &["MUFU.EX2 R5, R3"], &[]);
        assert_eq!(of_line(&one_side, M, None, None), [UNKNOWN], "no instruction on B to compare with");
        let same_op = line(&[("inf", "f32")], &[("div0", "f32")], &["v_rcp_f32"], &["v_rcp_f32_e32 v2, v2"]);
        assert_eq!(of_line(&same_op, M, None, None), [UNKNOWN], "one operation in two spellings");
        assert!(of_line(&same_op, ("replay", "detect"), None, None)[0]
            .starts_with("the reports were made in different modes"));
    }
}
