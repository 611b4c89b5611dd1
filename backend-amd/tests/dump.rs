//! `dump` over the corpus: text and JSON, kernel selection, errors, and the
//! disassembly it embeds compared with llvm-objdump's listing.

mod common;

use std::collections::BTreeMap;

use xfpx_amd::{dump, CodeObject, DumpOptions, Error, OutputFormat};
use xfpx_common::config::KernelFilter;

/// Instruction lines of an llvm-objdump listing: address -> (text, dwords, branch label).
fn objdump_instructions(text: &str) -> BTreeMap<u64, (String, Vec<u32>, Option<String>)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(body) = line.strip_prefix('\t') else { continue };
        let Some((insn, comment)) = body.split_once("// ") else { continue };
        let Some((addr, rest)) = comment.split_once(": ") else { continue };
        let Ok(addr) = u64::from_str_radix(addr, 16) else { continue };
        let words = rest
            .split_whitespace()
            .take_while(|w| !w.starts_with('<'))
            .filter_map(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        let label = rest.split_once(" <").and_then(|(_, l)| l.strip_suffix('>')).map(str::to_string);
        out.insert(addr, (insn.trim_end().to_string(), words, label));
    }
    out
}

#[test]
fn dump_every_code_object() {
    let mut lines = 0usize;
    let mut same_text = 0usize;
    let mut mismatched = Vec::new();
    let mut rejected = 0usize;
    let mut out_of_step = 0usize;
    let mut wrong_length = 0usize;
    let mut labels = 0usize;
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let text = dump(&bytes, &DumpOptions::default()).unwrap_or_else(|e| panic!("{target}/{name}: {e}"));
        for k in &co.kernels {
            assert!(text.contains(&format!("\n  kernel {}\n", k.name)), "{target}/{name}: {}", k.name);
        }
        let json = dump(&bytes, &DumpOptions { kernel: None, format: OutputFormat::Json }).expect("json");
        let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        let kernels = v["code_objects"][0]["kernels"].as_array().expect("kernels");
        assert_eq!(kernels.len(), co.kernels.len());
        assert_eq!(v["code_objects"][0]["target"], co.target.to_string());

        // The dump's disassembly covers each kernel's code contiguously, and
        // each line's dwords are the file's bytes at its address.
        for (k, kr) in kernels.iter().zip(&co.kernels) {
            let code = co.kernel_code(kr).expect("code");
            let mut next = kr.code.start;
            for l in k["disassembly"].as_array().expect("disassembly") {
                let addr = l["address"].as_u64().expect("address");
                assert_eq!(addr, next, "{target}/{name} {}: disassembly is not contiguous", kr.name);
                let words: Vec<u32> =
                    l["words"].as_array().expect("words").iter().map(|w| w.as_u64().expect("w") as u32).collect();
                let at = (addr - kr.code.start) as usize;
                for (i, w) in words.iter().enumerate() {
                    let b = &code[at + 4 * i..at + 4 * i + 4];
                    assert_eq!(*w, u32::from_le_bytes([b[0], b[1], b[2], b[3]]), "{target}/{name} at 0x{addr:x}");
                }
                next = addr + 4 * words.len() as u64;
            }
            assert_eq!(next, kr.code.end, "{target}/{name} {}: disassembly stops early", kr.name);
        }

        // Agreement with llvm-objdump: every instruction starts where
        // llvm-objdump's does, with the same dwords and the same text.
        let golden = objdump_instructions(&common::read_text(&path.with_extension("objdump")));
        let functions = v["code_objects"][0]["functions"].as_array().expect("functions");
        for k in kernels.iter().chain(functions) {
            for l in k["disassembly"].as_array().expect("disassembly") {
                let addr = l["address"].as_u64().expect("address");
                if !l["decoded"].as_bool().expect("decoded") {
                    rejected += 1;
                    continue;
                }
                let Some((gtext, gwords, glabel)) = golden.get(&addr) else {
                    out_of_step += 1;
                    continue;
                };
                let words: Vec<u32> =
                    l["words"].as_array().expect("words").iter().map(|w| w.as_u64().expect("w") as u32).collect();
                lines += 1;
                if &words != gwords {
                    wrong_length += 1;
                    if mismatched.len() < 10 {
                        mismatched.push(format!(
                            "{target}/{name} 0x{addr:x}: {} dwords, llvm-objdump {}",
                            words.len(),
                            gwords.len()
                        ));
                    }
                    continue;
                }
                let ours = l["text"].as_str().expect("text");
                let our_label = l["branch_target"].as_array().and_then(|t| t[1].as_str()).map(str::to_string);
                assert_eq!(&our_label, glabel, "{target}/{name} at 0x{addr:x}: branch target label");
                if our_label.is_some() {
                    labels += 1;
                }
                if ours == gtext {
                    same_text += 1;
                } else if mismatched.len() < 10 {
                    mismatched.push(format!("{target}/{name} 0x{addr:x}: ours `{ours}` llvm-objdump `{gtext}`"));
                }
            }
        }
    }
    println!(
        "{lines} decoded instructions at llvm-objdump's addresses: {same_text} identical, {wrong_length} of another length; \
         {rejected} words rejected by the decoder, {out_of_step} decoded out of step"
    );
    for m in &mismatched {
        println!("  {m}");
    }
    println!("{labels} branch targets labelled as llvm-objdump labels them");
    assert!(lines > 4000, "corpus disassembly is too small");
    assert!(labels > 50);
    assert_eq!(
        (rejected, out_of_step, wrong_length),
        (0, 0, 0),
        "dump disagrees with llvm-objdump on instruction boundaries"
    );
    assert_eq!(same_text, lines, "dump text differs from llvm-objdump");
}

#[test]
fn fp_instructions_are_annotated() {
    let bytes = common::read(&common::fixtures().join("gfx90a/divsqrt.co"));
    let text =
        dump(&bytes, &DumpOptions { kernel: Some(KernelFilter::exactly("div_f32")), format: OutputFormat::Text })
            .expect("dump");
    let div_scale = text.lines().find(|l| l.contains("v_div_scale_f32")).expect("v_div_scale_f32 in div_f32");
    assert!(div_scale.contains("  ["), "no IR class on {div_scale}");
    let waitcnt = text.lines().find(|l| l.contains("s_waitcnt")).expect("s_waitcnt");
    assert!(!waitcnt.contains("  ["), "integer/control instruction annotated: {waitcnt}");
}

#[test]
fn kernel_selection() {
    let bytes = common::read(&common::fixtures().join("bundles/multi.bundle"));
    let text =
        dump(&bytes, &DumpOptions { kernel: Some(KernelFilter::exactly("fp32_mixed")), format: OutputFormat::Text })
            .expect("dump");
    assert_eq!(text.matches("\n  kernel fp32_mixed\n").count(), 2, "one per target");
    assert!(!text.contains("kernel fp32_axpy"));
    assert!(text.contains("bundle id: hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"));
    let err = dump(&bytes, &DumpOptions { kernel: Some(KernelFilter::exactly("nope")), format: OutputFormat::Text })
        .expect_err("no such kernel");
    assert_eq!(err, Error::NoSuchKernel("nope".into()));
    assert_eq!(err.to_string(), "no kernel matches 'nope'");
}

#[test]
fn slack_is_reported() {
    let bytes = common::read(&common::fixtures().join("gfx942/noslack.co"));
    let text = dump(&bytes, &DumpOptions::default()).expect("dump");
    assert!(text.contains("slack 0x0 bytes"), "{}", text.lines().find(|l| l.contains(".text 0x")).unwrap_or(""));
}

#[test]
fn bad_input_is_one_line_error() {
    for bad in [&b""[..], b"\x7fELF", b"__CLANG_OFFLOAD_BUNDLE__\x05", b"CCOB\x09\x00", b"not a code object"] {
        let e = dump(bad, &DumpOptions::default()).expect_err("bad input").to_string();
        assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
    }
}
