//! The committed derived files are current: the generated Rust table, opcode
//! enum, operation facts and opcode facts equal what the generator makes of
//! the tables under `tables/` (always checked), the table
//! equals what `tools/mktable.py` makes of the golden sweep (when python3 is
//! installed), and the golden sweep equals what `tools/probe.py` gets from
//! llvm-objdump (when python3 and the LLVM tools are installed). Otherwise a
//! note is printed and the check is skipped. `XFPX_BLESS=1` rewrites the
//! generated Rust table instead of failing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd).arg(arg).output().map(|o| o.status.success()).unwrap_or(false)
}

#[test]
fn generated_table_is_current() {
    let tables = xfpx_amd_isa_tablegen::Tables::read(&crate_dir().join("tables")).expect("tables read");
    let generated = xfpx_amd_isa_tablegen::generate(&tables).expect("tables parse");
    for (name, expected) in generated.files() {
        let path = crate_dir().join("src/generated").join(name);
        if std::env::var("XFPX_BLESS").as_deref() == Ok("1") {
            std::fs::write(&path, expected).expect("write generated table");
            continue;
        }
        assert!(
            read(&path) == *expected,
            "src/generated/{name} is stale: run `cargo run -p xfpx-amd-isa-tablegen` (or XFPX_BLESS=1)"
        );
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xfpx-amd-isa-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn table_is_current_with_the_sweep() {
    if !have("python3", "--version") {
        println!("note: python3 not installed; tables/gfx9.tsv not rechecked against tests/golden");
        return;
    }
    let dir = temp_dir("table");
    let out = dir.join("gfx9.tsv");
    let status = Command::new("python3")
        .arg(crate_dir().join("tools/mktable.py"))
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run mktable.py");
    assert!(status.success(), "tools/mktable.py failed");
    let fresh = read(&out);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(fresh == read(&crate_dir().join("tables/gfx9.tsv")), "tables/gfx9.tsv is stale: run tools/mktable.py");
}

#[test]
fn golden_sweep_is_current_with_llvm() {
    if !have("python3", "--version") {
        println!("note: python3 not installed; golden sweep not regenerated");
        return;
    }
    let mut targets = Vec::new();
    for (target, suffix) in [("gfx908", "-19"), ("gfx90a", "-19"), ("gfx942", "-19"), ("gfx950", "-22")] {
        if have(&format!("llvm-objdump{suffix}"), "--version") && have(&format!("llvm-mc{suffix}"), "--version") {
            targets.push(target);
        } else {
            println!("note: llvm-objdump{suffix} not installed; golden sweep of {target} not regenerated");
        }
    }
    if targets.is_empty() {
        return;
    }
    let dir = temp_dir("golden");
    for extra in [&[][..], &["--random", "20000", "--seed", "1", "--prefix", "random-"][..]] {
        let status = Command::new("python3")
            .arg(crate_dir().join("tools/probe.py"))
            .arg("--out")
            .arg(&dir)
            .arg("--targets")
            .arg(targets.join(","))
            .args(extra)
            .status()
            .expect("run probe.py");
        assert!(status.success(), "tools/probe.py failed");
    }
    for t in &targets {
        for prefix in ["", "random-"] {
            let fresh = read(&dir.join(format!("{prefix}{t}.txt")));
            let committed = read(&crate_dir().join(format!("tests/golden/{prefix}{t}.txt")));
            assert!(fresh == committed, "tests/golden/{prefix}{t}.txt differs from the oracle: rerun tools/probe.py");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
