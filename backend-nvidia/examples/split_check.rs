//! Checks the disassembly splitter against a capture folder of
//! `tests/gpu/launch-check.sh`: `functions.txt` (name, mangled name, size),
//! `funcN.bin` and `funcN.nvdisasm.txt` (each function disassembled alone),
//! `all.nvdisasm.txt` (all of them laid end to end, one run). Prints one
//! line: how many functions the cut gives byte for byte as their own run.
//!
//!   cargo run -p xfpx-nvidia --example split_check -- DIR

use std::path::Path;
use xfpx_nvidia::disasm_split::split;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("error: usage: split_check DIR");
        std::process::exit(2);
    };
    match check(Path::new(&dir)) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn check(dir: &Path) -> Result<String, String> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}"));
    let text = |name: &str| read(name).map(|b| String::from_utf8_lossy(&b).into_owned());
    let names: Vec<String> =
        text("functions.txt")?.lines().filter_map(|l| l.split_whitespace().next().map(str::to_string)).collect();
    let mut sizes = Vec::new();
    for n in &names {
        sizes.push(read(&format!("{n}.bin"))?.len() as u64);
    }
    let parts = split(&text("all.nvdisasm.txt")?, &sizes).map_err(|e| format!("the listing was not cut: {e}"))?;
    let (mut same, mut refused, mut first) = (0, 0, String::new());
    for (n, part) in names.iter().zip(parts) {
        let own = text(&format!("{n}.nvdisasm.txt"))?;
        match part {
            Ok(p) if p == own => same += 1,
            Ok(p) => {
                if first.is_empty() {
                    let d = p.lines().zip(own.lines()).find(|(a, b)| a != b);
                    first = format!("; {n} DIFFERS, first at {d:?}");
                }
            }
            Err(e) => {
                refused += 1;
                if first.is_empty() {
                    first = format!("; {n} refused: {e}");
                }
            }
        }
    }
    Ok(format!("{same}/{} identical after the split, {refused} refused{first}", names.len()))
}
