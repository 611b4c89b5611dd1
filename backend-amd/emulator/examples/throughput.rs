//! Emulator throughput: wave instructions per second over every fixture
//! launch on gfx90a and gfx942 (a benchmark, not a test).
//!
//!     cargo run --release -p xfpx-amd-emu --example throughput [REPEAT]

use std::path::Path;
use std::time::Instant;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::replay::{load_code_object, run_launch};
use xfpx_amd_emu::ReplayOptions;

fn main() {
    let repeat: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    files.retain(|p: &std::path::PathBuf| {
        p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json")
    });
    files.sort();
    let (mut total_insts, mut total_secs) = (0u64, 0f64);
    println!("{:<20} {:>7} {:>12} {:>10} {:>12}", "launch", "target", "instructions", "ms", "inst/s");
    for target in ["gfx90a", "gfx942"] {
        for f in &files {
            let launch = match Launch::load(f) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("{}: {e}", f.display());
                    continue;
                }
            };
            let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
            let object = match load_code_object(&launch, &opts) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{}: {e}", f.display());
                    continue;
                }
            };
            let start = Instant::now();
            let mut insts = 0;
            for _ in 0..repeat {
                match run_launch(&launch, &object, 0) {
                    Ok((_, s)) => insts += s.instructions,
                    Err(e) => eprintln!("{}: {e}", f.display()),
                }
            }
            let secs = start.elapsed().as_secs_f64();
            total_insts += insts;
            total_secs += secs;
            let name = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            println!(
                "{:<20} {:>7} {:>12} {:>10.2} {:>12.0}",
                name,
                target,
                insts / repeat as u64,
                1e3 * secs / repeat as f64,
                insts as f64 / secs
            );
        }
    }
    println!(
        "total: {total_insts} wave instructions in {total_secs:.3} s = {:.0} wave instructions/s",
        total_insts as f64 / total_secs
    );
}
