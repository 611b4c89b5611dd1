//! One disassembler run for many functions: cutting `nvdisasm`'s listing of
//! several functions laid end to end into the listing each function gets
//! alone, byte for byte.
//!
//! NVBit disassembles one function at a time (`nvdisasm -b SM<nn> FILE`,
//! FILE the function's raw code) and nearly all of each run's cost is the
//! disassembler starting. Given the code of several functions concatenated
//! (no padding: a cubin's `.text.<name>` sections are whole 16-byte
//! instructions, 128-byte aligned and sized), one run prints the same
//! header lines and then one line per instruction, `/*<addr>*/` giving its
//! address in the concatenation. Two things differ from the per-function
//! runs (checked on the H100 against every function of three programs):
//! the address comments, and every operand the disassembler computes from
//! the instruction's own address, which it prints as an absolute address
//! (`BRA`, `BRA.DIV`, `BSSY`, `CALL.REL`, `RET.REL`, `WARPSYNC.COLLECTIVE`
//! targets). Both are rebased by the function's offset.
//!
//! Only control-transfer instructions carry such operands; all other
//! operands print the same wherever the code sits. A control-transfer
//! instruction of a form not known here, a target outside its own function
//! (a call to another function, a jump table) or anything unexpected in the
//! listing makes the splitter refuse that function, or the whole listing,
//! rather than guess: the caller then disassembles it alone.

/// Bytes of one instruction (Volta and later).
pub const INSTRUCTION_BYTES: u64 = 16;

/// Most bytes cut from one listing: every address stays within the four
/// hex digits the per-function listings print (larger addresses are not
/// known to print alike).
pub const MAX_BATCH_BYTES: u64 = 0x1_0000;

/// Control-transfer and synchronisation instructions of every SASS
/// generation: the only ones whose operands may be code addresses.
const CONTROL: &[&str] = &[
    "ACQBULK",
    "BMOV",
    "BPT",
    "BRA",
    "BREAK",
    "BRK",
    "BRX",
    "BRXU",
    "BSSY",
    "BSYNC",
    "CAL",
    "CALL",
    "CONT",
    "ENDCOLLECTIVE",
    "EXIT",
    "JCAL",
    "JMP",
    "JMX",
    "JMXU",
    "KILL",
    "LEPC",
    "LONGJMP",
    "NANOSLEEP",
    "PBK",
    "PCNT",
    "PEXIT",
    "PLONGJMP",
    "PREEXIT",
    "PRET",
    "RET",
    "RPCMOV",
    "RTT",
    "SSY",
    "SYNC",
    "WARPSYNC",
    "YIELD",
];

/// Why a listing, or one function of it, is not cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("the functions' sizes do not fit one listing: {0}")]
    Sizes(String),
    #[error("line {line} of the listing is not an instruction at {expected:#x}: {text:?}")]
    Shape { line: usize, expected: u64, text: String },
    #[error("the listing has {found} instructions, the functions {expected}")]
    Length { found: u64, expected: u64 },
    #[error("instruction at {at:#x} of the function: {why}: {text:?}")]
    Instruction { at: u64, why: &'static str, text: String },
}

/// Cut `listing`, the disassembler's output for functions of `sizes`
/// bytes laid end to end in that order, into each function's own listing.
/// `Err` when the listing as a whole cannot be cut; else one result per
/// function, `Err` for a function that must be disassembled alone.
pub fn split(listing: &str, sizes: &[u64]) -> Result<Vec<Result<String, SplitError>>, SplitError> {
    let total: u64 = sizes.iter().sum();
    if total > MAX_BATCH_BYTES {
        return Err(SplitError::Sizes(format!("{total} bytes, more than {MAX_BATCH_BYTES}")));
    }
    if let Some(s) = sizes.iter().find(|s| **s == 0 || !s.is_multiple_of(INSTRUCTION_BYTES)) {
        return Err(SplitError::Sizes(format!("{s} bytes is not a whole number of instructions")));
    }
    let mut lines = listing.split_inclusive('\n').enumerate().peekable();
    let mut header = String::new();
    while let Some((_, l)) = lines.next_if(|(_, l)| address_comment(l).is_none()) {
        header.push_str(l);
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut expected = 0u64;
    for &size in sizes {
        let base = expected;
        let mut text = header.clone();
        let mut refused = None;
        while expected < base + size {
            let Some((n, line)) = lines.next() else {
                return Err(SplitError::Length {
                    found: expected / INSTRUCTION_BYTES,
                    expected: total / INSTRUCTION_BYTES,
                });
            };
            let shape = || SplitError::Shape { line: n + 1, expected, text: line.to_string() };
            let (comment, rest) = address_comment(line).ok_or_else(shape)?;
            if comment.value != expected {
                return Err(shape());
            }
            if refused.is_none() {
                match rebase_instruction(rest, base, size) {
                    Ok(body) => {
                        text.push_str(&line[..comment.start]);
                        text.push_str(&format!("/*{:04x}*/", expected - base));
                        text.push_str(&body);
                    }
                    Err(why) => {
                        let at = expected - base;
                        refused = Some(SplitError::Instruction { at, why, text: line.trim().to_string() });
                    }
                }
            }
            expected += INSTRUCTION_BYTES;
        }
        out.push(refused.map_or(Ok(text), Err));
    }
    if let Some((n, line)) = lines.next() {
        return Err(SplitError::Shape { line: n + 1, expected, text: line.to_string() });
    }
    Ok(out)
}

/// Where a line's `/*<4 hex digits>*/` address comment starts (after
/// nothing but spaces), its value, and the rest of the line after it.
struct AddressComment {
    start: usize,
    value: u64,
}

fn address_comment(line: &str) -> Option<(AddressComment, &str)> {
    let start = line.find("/*")?;
    if !line[..start].bytes().all(|b| b == b' ') {
        return None;
    }
    let digits = line.get(start + 2..start + 6)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return None;
    }
    let rest = line[start + 6..].strip_prefix("*/")?;
    Some((AddressComment { start, value: u64::from_str_radix(digits, 16).ok()? }, rest))
}

/// The rest of an instruction line (after its address comment) as the
/// function's own listing prints it, the function starting at `base` of
/// the batch and `size` bytes long.
fn rebase_instruction(rest: &str, base: u64, size: u64) -> Result<String, &'static str> {
    let body_end = rest.rfind(';').ok_or("no `;`")?;
    let body = &rest[..body_end];
    let mut words = body.split_whitespace();
    let mut mnemonic = words.next().ok_or("no mnemonic")?;
    if mnemonic.starts_with('@') {
        mnemonic = words.next().ok_or("no mnemonic")?;
    }
    let mut parts = mnemonic.split('.');
    let opcode = parts.next().unwrap_or_default();
    if !CONTROL.contains(&opcode) {
        return Ok(rest.to_string());
    }
    let modifiers: Vec<&str> = parts.collect();
    let operands = &body[body.find(mnemonic).map_or(0, |i| i + mnemonic.len())..];
    if operands.contains('`') || operands.contains(".L") {
        return Err("a label operand");
    }
    let numbers = operands.matches("0x").count();
    let relative = match opcode {
        "BRA" | "BSSY" => true,
        "CALL" | "RET" => modifiers.contains(&"REL"),
        "WARPSYNC" => modifiers.contains(&"COLLECTIVE"),
        _ => false,
    };
    if !relative {
        // a number here is a mask, a duration or a trap code, never an address
        let plain_number = matches!(opcode, "NANOSLEEP" | "BPT" | "WARPSYNC");
        return if numbers == 0 || plain_number { Ok(rest.to_string()) } else { Err("an operand not known to rebase") };
    }
    if numbers == 0 {
        // the target is in a register
        return if opcode == "BRA" { Ok(rest.to_string()) } else { Err("no target") };
    }
    let trimmed = body.trim_end();
    let token_start = trimmed.rfind([' ', ',']).map_or(0, |i| i + 1);
    let token = &trimmed[token_start..];
    let hex = token.strip_prefix("0x").ok_or("the target is not the last operand")?;
    if numbers != 1 || hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return Err("the target is not one hexadecimal address");
    }
    let target = u64::from_str_radix(hex, 16).map_err(|_| "the target is too large")?;
    let own = target.checked_sub(base).filter(|t| *t < size).ok_or("the target is outside the function")?;
    Ok(format!("{}0x{own:x}{}", &rest[..token_start], &rest[token_start + token.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "\t.headerflags\t@\"EF_CUDA_SM90\"\n";

    fn line(addr: u64, text: &str) -> String {
        format!("        /*{addr:04x}*/                   {text} ;\n")
    }

    #[test]
    fn targets_and_addresses_are_rebased() {
        let listing = [
            HEAD.to_string(),
            line(0x00, "BRA 0x10"),
            line(0x10, "EXIT"),
            line(0x20, "@!P0 BRA 0x30"),
            line(0x30, "BSSY B0, 0x20"),
            line(0x40, "WARPSYNC.COLLECTIVE R12, 0x40"),
            line(0x50, "RET.REL.NODEC R2 0x20"),
        ]
        .concat();
        let parts = split(&listing, &[0x20, 0x40]).expect("cut");
        assert_eq!(
            parts[0].as_ref().expect("first"),
            &[HEAD.to_string(), line(0, "BRA 0x10"), line(0x10, "EXIT")].concat()
        );
        let second = [
            HEAD.to_string(),
            line(0x00, "@!P0 BRA 0x10"),
            line(0x10, "BSSY B0, 0x0"),
            line(0x20, "WARPSYNC.COLLECTIVE R12, 0x20"),
            line(0x30, "RET.REL.NODEC R2 0x0"),
        ]
        .concat();
        assert_eq!(parts[1].as_ref().expect("second"), &second);
    }

    #[test]
    fn unsafe_targets_refuse_their_function_only() {
        let cases = [
            "BRA 0x40",           // past the end of its function
            "BRA 0x0",            // into the function before
            "CALL.ABS.NOINC 0x0", // an absolute address
            "BRX R2 -0x20",       // a jump table
            "SSY 0x30",           // a form not known here
            "BRA 0x30, 0x30",     // two numbers
        ];
        for case in cases {
            let listing =
                [HEAD.to_string(), line(0, "EXIT"), line(0x10, "NOP"), line(0x20, case), line(0x30, "EXIT")].concat();
            let parts = split(&listing, &[0x20, 0x20]).expect("cut");
            assert!(parts[0].is_ok(), "{case}");
            assert!(matches!(parts[1], Err(SplitError::Instruction { at: 0, .. })), "{case}: {:?}", parts[1]);
        }
        // numbers that are not addresses, and targets in registers
        for case in ["WARPSYNC 0xffffffff", "NANOSLEEP 0x100", "BRA R4", "FADD R1, R2, 0x1"] {
            let listing = [HEAD.to_string(), line(0, "EXIT"), line(0x10, case)].concat();
            let parts = split(&listing, &[0x10, 0x10]).expect("cut");
            assert_eq!(parts[1].as_ref().expect(case), &[HEAD.to_string(), line(0, case)].concat());
        }
    }

    #[test]
    fn a_listing_of_another_shape_is_refused_whole() {
        let ok = [HEAD.to_string(), line(0, "EXIT"), line(0x10, "EXIT")].concat();
        assert!(split(&ok, &[0x10, 0x10]).is_ok());
        assert!(matches!(split(&ok, &[0x10]), Err(SplitError::Shape { .. })), "an instruction left over");
        assert!(matches!(split(&ok, &[0x10, 0x20]), Err(SplitError::Length { .. })));
        assert!(matches!(split(&ok, &[0x10, 0x8]), Err(SplitError::Sizes(_))));
        assert!(matches!(split(&ok, &[0x10, 0x1_0000]), Err(SplitError::Sizes(_))));
        let gap = [HEAD.to_string(), line(0, "EXIT"), line(0x20, "EXIT")].concat();
        assert!(matches!(split(&gap, &[0x10, 0x10]), Err(SplitError::Shape { .. })));
        let label = [HEAD.to_string(), line(0, "EXIT"), ".L_x_1:\n".to_string(), line(0x10, "EXIT")].concat();
        assert!(matches!(split(&label, &[0x10, 0x10]), Err(SplitError::Shape { .. })));
        assert!(matches!(split("error: bad input\n", &[0x10]), Err(SplitError::Length { .. })));
    }
}
