//! The HSA programs' kernels: the committed code objects are what
//! `programs/build.sh` makes from `programs/kernels/*.hip` (where the clang-19
//! that `programs/TOOLS.txt` records is installed), the lines `fpe.expect.json` names hold the instructions that
//! raise each exception, and the rewriter instruments every kernel but the
//! one made to be refused, which it leaves alone with its reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd::{CodeObject, SourceLines};
use xfpx_amd_emu::decode::decode;

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];
const OBJECTS: [&str; 5] = ["fpe", "reduce", "scale", "unrewritable", "vector_add"];

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

fn object(target: &str, name: &str) -> Vec<u8> {
    let p = programs().join(target).join(format!("{name}.co"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn committed_code_objects_are_what_build_sh_makes() {
    let installed = Command::new("clang-19")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(|l| format!("{l}\n")));
    let recorded = std::fs::read_to_string(programs().join("TOOLS.txt")).expect("TOOLS.txt");
    match installed {
        None => {
            eprintln!("SKIPPED: clang-19 is not installed; the code objects were not rebuilt and compared");
            return;
        }
        Some(v) if v != recorded => {
            eprintln!("SKIPPED: clang-19 is {v:?}, the objects were built by {recorded:?}; not compared");
            return;
        }
        Some(_) => {}
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let st = Command::new(programs().join("build.sh")).arg(dir.path()).status().expect("build.sh runs");
    assert!(st.success(), "build.sh failed");
    for t in TARGETS {
        for o in OBJECTS {
            let fresh = std::fs::read(dir.path().join(t).join(format!("{o}.co"))).expect("rebuilt");
            assert!(fresh == object(t, o), "{t}/{o}.co differs from what build.sh makes: run programs/build.sh");
        }
    }
}

#[test]
fn the_expected_lines_hold_the_raising_instructions() {
    let expect: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(programs().join("kernels/fpe.expect.json")).expect("fpe.expect.json"),
    )
    .expect("json");
    let findings = expect["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 3);
    for t in TARGETS {
        let bytes = object(t, "fpe");
        let co = CodeObject::parse(&bytes).expect("parses");
        let lines = SourceLines::read(&co.elf).expect("reads").expect("has line tables");
        let target = xfpx_amd_isa::Target::from_name(t).expect("target");
        for f in findings {
            let kernel = f["kernel"].as_str().expect("kernel");
            let line = f["line"].as_u64().expect("line") as u32;
            // The instruction that raises it: the multiply, or the division's fixup.
            let raising = match (f["kind"].as_str(), f["format"].as_str()) {
                (Some("nan" | "inf"), Some("f32")) => "v_mul_f32",
                (Some("div0"), Some("f64")) => "v_div_fixup_f64",
                other => panic!("unexpected finding {other:?}"),
            };
            let k = co.kernel(kernel).unwrap_or_else(|| panic!("{t}: no kernel {kernel}"));
            let code = co.kernel_code(k).expect("code");
            let (mut at, mut found) = (0usize, 0);
            while at < code.len() {
                let i = decode(target, &code[at..]).expect("decodes");
                if i.mnemonic.starts_with(raising) {
                    let loc = lines.locate(k.code.start + at as u64).expect("located");
                    assert_eq!((loc.file.as_str(), loc.line), ("fpe.hip", line), "{t} {kernel}: {}", i.mnemonic);
                    found += 1;
                }
                at += usize::from(i.len);
            }
            assert_eq!(found, 1, "{t} {kernel}: {found} {raising} instructions");
        }
    }
}

#[test]
fn the_rewriter_refuses_only_the_kernel_made_for_it() {
    let opts = RewriteOptions { mode: Mode::Detect, table: TableAddress::Known(0x1000_0000), ..Default::default() };
    for t in TARGETS {
        for o in OBJECTS {
            let out = rewrite::rewrite(&object(t, o), &opts).unwrap_or_else(|e| panic!("{t}/{o}: {e}"));
            for k in &out.kernels {
                match (&k.state, k.name.as_str()) {
                    (KernelState::Skipped { reason }, "all_vgprs") => {
                        assert!(reason.contains("above v"), "{t}: {reason}")
                    }
                    (KernelState::Instrumented, name) if name != "all_vgprs" => {}
                    (state, name) => panic!("{t}/{o}: kernel {name} is {state:?}"),
                }
            }
        }
    }
}
