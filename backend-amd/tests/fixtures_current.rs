//! The committed fixture corpus is what `fixtures/regen.sh` produces: where
//! the tool versions recorded in `fixtures/TOOLS.txt` are installed, the
//! generator is rerun into a temporary directory and every file compared byte
//! for byte. Elsewhere the test prints why it was skipped.

mod common;

use std::path::Path;
use std::process::Command;

const TOOLS: [&str; 13] = [
    "clang-19",
    "clang-22",
    "llvm-objdump-19",
    "llvm-objdump-22",
    "llvm-readelf-19",
    "llvm-readelf-22",
    "llvm-addr2line-19",
    "clang-offload-bundler-19",
    "clang-offload-bundler-22",
    "ld.lld-19",
    "ld.lld-22",
    "awk",
    "paste",
];

fn version_line(tool: &str) -> Option<String> {
    let out = Command::new(tool).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_string)
}

fn skip_reason() -> Option<String> {
    for tool in TOOLS {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("{tool} is not installed"));
        }
    }
    let recorded = common::read_text(&common::fixtures().join("TOOLS.txt"));
    let installed = format!("{}\n{}\n", version_line("clang-19")?, version_line("clang-22")?);
    if recorded != installed {
        return Some(format!("installed compilers differ from fixtures/TOOLS.txt:\n{installed}"));
    }
    None
}

fn files_under(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn committed_fixtures_are_current() {
    if let Some(reason) = skip_reason() {
        println!("skipped: fixture generator not rerun ({reason})");
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let script = common::fixtures().join("regen.sh");
    let status = Command::new("bash").arg(&script).arg(tmp.path()).status().expect("run regen.sh");
    assert!(status.success(), "regen.sh failed");
    let generated = files_under(tmp.path());
    let committed: Vec<String> = files_under(&common::fixtures())
        .into_iter()
        .filter(|f| !f.starts_with("src/") && f != "regen.sh" && f != "README.md")
        .collect();
    assert_eq!(generated, committed, "file lists differ");
    let mut stale = Vec::new();
    for f in &generated {
        if std::fs::read(tmp.path().join(f)).ok() != std::fs::read(common::fixtures().join(f)).ok() {
            stale.push(f.clone());
        }
    }
    assert!(stale.is_empty(), "stale fixtures (rerun backend-amd/fixtures/regen.sh): {stale:?}");
    println!("{} generated files identical to the committed corpus", generated.len());
}
