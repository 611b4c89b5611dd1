//! What the emulator executes, against what the decoder knows. Every
//! instruction of tools/extra.s has semantics: executed once on a fresh
//! wave it either runs or faults on memory, never stops as unsupported. And
//! every opcode the decoder knows per target (in each form, plain, SDWA and
//! DPP, that llvm-objdump decodes among the decoder's probe words) is tried
//! the same way: those the emulator does not execute are listed, with what
//! it says, in `tests/coverage/OPCODES.md` (`XFPX_BLESS=1` rewrites it; the
//! test fails when it differs). (Values are validated by the fixture suite,
//! not here.)

use std::collections::BTreeMap;
use std::path::Path;
use xfpx_amd_emu::decode::{decode, Instruction, Target};
use xfpx_amd_emu::memory::{GlobalMemory, Lds};
use xfpx_amd_emu::wave::{Env, ExecError, Observations, Wave, PRIVATE_BUFFER_MARK};

/// Executes `inst` once on a fresh wave: `None` when it runs (or faults on
/// memory, traps or cannot run where the fresh state leaves it), else what
/// the emulator says it does not execute.
fn execute_once(isa: Target, inst: &Instruction) -> Option<String> {
    // IEEE mode, no denormal flushing, DX10_CLAMP clear.
    let mut wave = Wave::new(0x1000, 0xF0 | 1 << 9);
    wave.sgpr[126] = u32::MAX;
    wave.sgpr[127] = u32::MAX;
    // s[0:3] is the private segment buffer; 4 bytes per lane.
    wave.sgpr[3] = PRIVATE_BUFFER_MARK;
    wave.private_size = 64;
    wave.private = vec![0; 64 * 64];
    let mut global = GlobalMemory::new();
    let mut lds = Lds::new(1 << 16);
    let mut obs = Observations::default();
    let mut env = Env { global: &mut global, lds: &mut lds, obs: &mut obs, target: isa };
    match wave.step(inst, &mut env) {
        Ok(_) | Err(ExecError::MemoryFault { .. }) | Err(ExecError::Trap { .. }) => None,
        Err(ExecError::Unsupported { what, .. }) => Some(what),
        Err(e) => Some(e.to_string()),
    }
}

#[test]
fn every_decodable_instruction_executes() {
    let mut unsupported = Vec::new();
    let mut ran = 0;
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let isa = Target::from_name(target).expect("target");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/{target}/extra.mc"));
        let listing = std::fs::read_to_string(path).expect("listing");
        for line in listing.lines() {
            let Some((asm, enc)) = line.rsplit_once("//") else { continue };
            let bytes: Vec<u8> =
                enc.split_whitespace().flat_map(|w| u32::from_str_radix(w, 16).expect("hex").to_le_bytes()).collect();
            let inst = decode(isa, &bytes).expect("decodes");
            match execute_once(isa, &inst) {
                None => ran += 1,
                Some(e) => unsupported.push(format!("{target}: {}: {e}", asm.trim())),
            }
        }
    }
    assert!(
        unsupported.is_empty(),
        "{} instructions without semantics:\n{}",
        unsupported.len(),
        unsupported.join("\n")
    );
    println!("{ran} instructions executed");
}

/// An opcode in one form: (mnemonic, "" | "SDWA" | "DPP").
type OpForm = (String, &'static str);

/// The coverage of one target: per (mnemonic, form) the decoder knows, what
/// stops the emulator (`None`: executed).
fn opcode_coverage(target: &str) -> BTreeMap<OpForm, Option<String>> {
    let isa = Target::from_name(target).expect("target");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../isa/tests/golden/{target}.txt"));
    let text = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
    // Per (opcode, form): the probe words, fewest modifiers first.
    let mut words: BTreeMap<OpForm, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut cols = line.split('\t');
        let (Some(hex), Some(len)) = (cols.next(), cols.next()) else { continue };
        if len.parse::<usize>().unwrap_or(0) == 0 {
            continue;
        }
        let bytes: Vec<u8> =
            hex.split_whitespace().flat_map(|w| u32::from_str_radix(w, 16).expect("hex").to_le_bytes()).collect();
        let Ok(i) = xfpx_amd_isa::decode(isa, &bytes) else { continue };
        let form = match i.variant {
            xfpx_amd_isa::Variant::Dpp => "DPP",
            xfpx_amd_isa::Variant::Sdwa => "SDWA",
            _ => "",
        };
        words.entry((i.base_mnemonic.to_string(), form)).or_default().push((i.modifiers.len(), bytes));
    }
    words
        .into_iter()
        .map(|(key, mut ws)| {
            ws.sort_by_key(|w| w.0);
            let mut first_refusal = None;
            for (_, bytes) in &ws {
                let refusal = match decode(isa, bytes) {
                    Ok(inst) => execute_once(isa, &inst),
                    Err(e) => Some(e.to_string()),
                };
                match refusal {
                    None => return (key, None),
                    Some(r) => {
                        first_refusal.get_or_insert(r);
                    }
                }
            }
            (key, first_refusal)
        })
        .collect()
}

/// What a refusal says, without the instruction-specific parts (program
/// counters, register numbers), to group instructions by it.
fn reason(what: &str, mnemonic: &str) -> String {
    let what = what.split(" at pc ").next().unwrap_or(what);
    let stem = mnemonic.strip_suffix("_e32").or_else(|| mnemonic.strip_suffix("_e64")).unwrap_or(mnemonic);
    if what == mnemonic || what == stem {
        let family = mnemonic.split('_').next().unwrap_or(mnemonic);
        return format!("no semantics in the emulator, `{family}_*`");
    }
    what.replace(stem, "…")
}

#[test]
fn opcode_coverage_is_listed() {
    let targets = ["gfx908", "gfx90a", "gfx942", "gfx950"];
    let mut summary = String::from(
        "| target | opcodes and forms the decoder knows | executed | not executed |\n|---|---:|---:|---:|\n",
    );
    let mut lists = String::new();
    for target in targets {
        let cov = opcode_coverage(target);
        let missing: Vec<_> = cov.iter().filter_map(|(k, r)| r.as_ref().map(|r| (k, r))).collect();
        summary.push_str(&format!(
            "| {target} | {} | {} | {} |\n",
            cov.len(),
            cov.len() - missing.len(),
            missing.len()
        ));
        let mut by_reason: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for ((m, form), r) in missing {
            let shown = if form.is_empty() { format!("`{m}`") } else { format!("`{m}` ({form})") };
            by_reason.entry(reason(r, m)).or_default().push(shown);
        }
        lists.push_str(&format!("\n## {target}\n\n"));
        for (r, ms) in by_reason {
            lists.push_str(&format!("- {r} ({}): {}\n", ms.len(), ms.join(", ")));
        }
    }
    let text = format!(
        "# Opcode coverage of the CDNA emulator\n\n\
         Produced by `cargo test -p xfpx-amd-emu --test coverage` (rewritten with\n\
         `XFPX_BLESS=1`; the test fails when this file differs from what it finds).\n\
         Every opcode the decoder knows for a target, in each form (plain, SDWA,\n\
         DPP) that llvm-objdump decodes among the decoder's probe words\n\
         (`backend-amd/isa/tests/golden/`), is executed once on a fresh wave, with\n\
         each of its probe words until one runs (a memory fault or a trap counts\n\
         as running: the instruction has semantics). The ones that never run are\n\
         listed below by what the emulator says.\n\n{summary}{lists}"
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/coverage/OPCODES.md");
    if std::env::var("XFPX_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
        std::fs::write(&path, &text).expect("write");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == text, "{} is stale (XFPX_BLESS=1 rewrites it)", path.display());
}
