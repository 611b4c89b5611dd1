//! The committed fixtures against the reference tools: the emulator's
//! decoding (through xfpx-amd-isa) agrees with llvm-objdump's listings on
//! every instruction of every fixture; code objects and host-computed
//! expectations are current (checked only where clang-19 / llvm-objdump-19 /
//! g++ exist; a note is printed otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_amd_emu::decode::{decode, Target};
use xfpx_amd_emu::Program;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}
fn fixtures() -> PathBuf {
    root().join("fixtures")
}
fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}
fn sources() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures().join("src"))
        .expect("src")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".hip")).map(str::to_string))
        .collect();
    v.sort();
    v
}

/// Whether regen.sh keeps an llvm-objdump listing of `name`'s objects
/// (a source marked `// xfpx-no-listing` keeps none).
fn has_listing(name: &str) -> bool {
    let text = std::fs::read_to_string(fixtures().join(format!("src/{name}.hip"))).expect("source");
    !text.lines().any(|l| l.trim() == "// xfpx-no-listing")
}

/// Flags a source asks for on `target` (`// xfpx-device-flags T1,T2: FLAGS`).
fn source_flags(hip: &Path, target: &str) -> Vec<String> {
    let text = std::fs::read_to_string(hip).expect("source");
    let mut flags = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("// xfpx-device-flags ") else { continue };
        let Some((targets, f)) = rest.split_once(": ") else { continue };
        if targets.split(',').any(|t| t == target) {
            flags.extend(f.split_whitespace().map(str::to_string));
        }
    }
    flags
}

#[test]
fn decoder_agrees_with_objdump_listings() {
    let mut checked = 0;
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        for name in sources().into_iter().filter(|n| has_listing(n)) {
            let co = std::fs::read(fixtures().join(format!("{target}/{name}.co"))).expect("code object");
            let object = Program::parse(&co).expect("parses");
            let listing =
                std::fs::read_to_string(fixtures().join(format!("{target}/{name}.objdump"))).expect("listing");
            for line in listing.lines() {
                let Some((asm, enc)) = line.split_once("//") else { continue };
                let Some(mnemonic) = asm.split_whitespace().next() else { continue };
                let Some((addr, words)) = enc.trim().split_once(':') else { continue };
                let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else { continue };
                let words =
                    words.split_whitespace().take_while(|w| w.len() == 8 && u32::from_str_radix(w, 16).is_ok()).count();
                let inst = decode(object.target, &object.image[addr as usize..])
                    .unwrap_or_else(|e| panic!("{target}/{name} {addr:#x} {mnemonic}: {e}"));
                // The emulator names the stem; the DPP and SDWA forms are flags.
                let (dpp, sdwa) = (mnemonic.ends_with("_dpp"), mnemonic.ends_with("_sdwa"));
                let want =
                    ["_e32", "_e64", "_dpp", "_sdwa"].iter().find_map(|s| mnemonic.strip_suffix(s)).unwrap_or(mnemonic);
                assert_eq!((inst.mnemonic, inst.dpp, inst.sdwa), (want, dpp, sdwa), "{target}/{name} at {addr:#x}");
                assert_eq!(inst.len as usize, 4 * words, "{target}/{name} {want} at {addr:#x}");
                checked += 1;
            }
        }
    }
    // llvm-mc's encodings of tools/extra.s.
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let isa = Target::from_name(target).expect("target");
        let listing = std::fs::read_to_string(fixtures().join(format!("{target}/extra.mc"))).expect("extra listing");
        for line in listing.lines() {
            let Some((asm, enc)) = line.rsplit_once("//") else { continue };
            let Some(mnemonic) = asm.split_whitespace().next() else { continue };
            let words: Vec<u32> =
                enc.split_whitespace().map(|w| u32::from_str_radix(w, 16).expect("hex word")).collect();
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let inst = decode(isa, &bytes).unwrap_or_else(|e| panic!("{target} {asm}: {e}"));
            let want = mnemonic.strip_suffix("_e32").or_else(|| mnemonic.strip_suffix("_e64")).unwrap_or(mnemonic);
            assert_eq!(inst.mnemonic, want, "{target}: {asm}");
            assert_eq!(inst.len as usize, bytes.len(), "{target}: {asm}");
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} instructions checked");
    println!("{checked} instructions decode as llvm-objdump reads them");
}

#[test]
fn fixtures_are_current() {
    if !(have("clang-19") && have("llvm-objdump-19") && have("g++")) {
        println!("note: clang-19, llvm-objdump-19 or g++ missing; fixture currency not checked");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("xfpx-emu-regen-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("launches/matrix")).expect("tmp");
    std::fs::create_dir_all(tmp.join("data")).expect("tmp");
    let src = fixtures().join("src");
    for name in sources() {
        let hip = src.join(format!("{name}.hip"));
        for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
            let clang = if target == "gfx950" { "clang-22" } else { "clang-19" };
            if !have(clang) {
                println!("note: {clang} not found; {target} code objects not checked");
                continue;
            }
            let out = tmp.join(format!("{name}-{target}.co"));
            let st = Command::new(clang)
                .args([
                    "-x",
                    "hip",
                    "-nogpulib",
                    "-nogpuinc",
                    "--cuda-device-only",
                    "-O3",
                    "-cuid=xfpx",
                    "-c",
                    "-ffp-contract=off",
                    "--no-gpu-bundle-output",
                ])
                .args(if name.starts_with("ftz") { &["-fgpu-flush-denormals-to-zero"][..] } else { &[] })
                .args(source_flags(&hip, target))
                .arg(format!("--offload-arch={target}"))
                // as regen.sh compiles it (the path is part of `-g` line tables)
                .current_dir(fixtures())
                .arg(format!("src/{name}.hip"))
                .arg("-o")
                .arg(&out)
                .status()
                .expect("clang");
            assert!(st.success());
            let fresh = std::fs::read(&out).expect("compiled");
            let committed = std::fs::read(fixtures().join(format!("{target}/{name}.co"))).expect("committed");
            assert!(fresh == committed, "{target}/{name}.co is stale: run fixtures/regen.sh");
        }
        let exe = tmp.join(&name);
        let st = Command::new("g++")
            .args([
                "-x",
                "c++",
                "-std=c++20",
                "-O1",
                "-ffp-contract=off",
                "-frounding-math",
                "-fno-fast-math",
                "-pthread",
                "-I",
            ])
            .arg(&src)
            .arg(&hip)
            .arg("-o")
            .arg(&exe)
            .arg("-lm")
            .status()
            .expect("g++");
        assert!(st.success());
        assert!(Command::new(&exe).current_dir(&tmp).status().expect("host run").success());
    }
    for sub in ["launches", "launches/matrix", "data"] {
        for e in std::fs::read_dir(tmp.join(sub)).expect("dir").filter_map(|e| e.ok()).filter(|e| e.path().is_file()) {
            let fresh = std::fs::read(e.path()).expect("fresh");
            let committed = std::fs::read(fixtures().join(sub).join(e.file_name())).unwrap_or_default();
            assert!(fresh == committed, "{sub}/{} is stale: run fixtures/regen.sh", e.file_name().to_string_lossy());
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
}
