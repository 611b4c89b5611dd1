//! Benchmark of the rewriter (not a timed test; run it explicitly):
//!
//!     cargo test --release -p xfpx-amd --test rewrite_bench -- --ignored --nocapture
//!
//! Per emulator fixture launch: dynamic wave instructions of the rewritten
//! kernel over the original's in detect and screen modes, probes and waits
//! added; then the rewrite time per 10k instructions over the corpus, and
//! the rewrite speed (instructions and kernels per second) on the largest
//! code objects of the repository. Results: `tests/REWRITE_BENCH.md`.

mod common;

use std::path::Path;
use std::time::Instant;

use xfpx_amd::rewrite::{self, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::arguments::explicit_args;
use xfpx_amd_emu::dispatch::{run_kernel, Dispatch, LoadedCode, RunLimits};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::Program as EmuObject;
use xfpx_common::config::KernelFilter;

/// Dynamic wave instructions of `launch` on the code `make(table)` returns.
fn instructions(launch: &Launch, make: &dyn Fn(u64) -> Vec<u8>) -> Option<u64> {
    let mut mem = GlobalMemory::new();
    let table = mem.allocate(vec![0u8; 1 << 16]);
    let object = match EmuObject::parse(&make(table)) {
        Ok(o) => o,
        Err(e) => {
            println!("{}: {}", launch.kernel, e.0);
            return None;
        }
    };
    let kernel = object.kernel(&launch.kernel)?.clone();
    let addrs: Vec<(String, u64)> =
        launch.buffers.iter().map(|b| (b.name.clone(), mem.allocate(b.bytes.clone()))).collect();
    let address_of = |n: &str| addrs.iter().find(|(x, _)| x == n).map_or(0, |(_, a)| *a);
    let kernarg = explicit_args(&kernel.name, &kernel.args, &launch.args, &address_of).ok()?;
    let code = LoadedCode::load(&mut mem, object);
    let d = Dispatch { grid: launch.grid, block: launch.block, dynamic_lds: launch.dynamic_lds };
    match run_kernel(&mut mem, &code, &kernel, &kernarg, &d, &RunLimits::default()) {
        Ok(s) => Some(s.instructions),
        Err(e) => {
            println!("{}: {e}", launch.kernel);
            None
        }
    }
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn rewrite_benchmark() {
    let launches = Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures/launches");
    let mut paths: Vec<_> = std::fs::read_dir(&launches)
        .expect("launches")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    paths.sort();
    println!("| target | kernel | original | detect | ratio | screen | ratio | probes | waits added |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for target in ["gfx90a", "gfx942"] {
        for p in &paths {
            let launch = Launch::load(p).expect("launch");
            let Ok(original) = std::fs::read(launch.dir.join(launch.code_object.replace("{target}", target))) else {
                continue;
            };
            let Some(base) = instructions(&launch, &|_| original.clone()) else { continue };
            let mut row = vec![base.to_string()];
            let counts = std::cell::Cell::new((0usize, 0usize));
            for mode in [Mode::Detect, Mode::Screen] {
                let n = instructions(&launch, &|table| {
                    let opts = RewriteOptions {
                        mode,
                        kernels: KernelFilter::exactly(&launch.kernel),
                        table: TableAddress::Known(table),
                        ..Default::default()
                    };
                    let out = rewrite::rewrite(&original, &opts).expect("rewrites");
                    if let Some(k) = out.kernels.iter().find(|k| k.name == launch.kernel) {
                        if mode == Mode::Detect {
                            counts.set((k.probes, k.waits_added));
                        }
                    }
                    out.bytes
                });
                match n {
                    Some(n) => row.extend([n.to_string(), format!("{:.2}", n as f64 / base.max(1) as f64)]),
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            let (probes, waits) = counts.get();
            println!("| {target} | {} | {} | {probes} | {waits} |", launch.kernel, row.join(" | "));
        }
    }
    // Rewrite time per 10k instructions over the corpus, detect mode.
    let mut instrs = 0usize;
    let start = Instant::now();
    for _ in 0..5 {
        for (_, _, path) in common::code_objects() {
            let bytes = common::read(&path);
            let out = rewrite::rewrite(&bytes, &RewriteOptions { mode: Mode::Detect, ..Default::default() })
                .expect("rewrites");
            instrs += out.kernels.iter().map(|k| k.instructions).sum::<usize>();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "\nrewrite time: {:.2} ms per 10k instructions ({instrs} instructions in {:.3} s)",
        secs * 1e3 * 1e4 / instrs.max(1) as f64,
        secs
    );
    largest_objects();
}

/// Every code object the repository holds (fixture corpus, emulator
/// fixtures, applications, opcode sweep).
fn repository_objects() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("tests/sweep")];
    for t in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        dirs.push(root.join("fixtures").join(t));
        dirs.push(root.join("emulator/fixtures").join(t));
        dirs.push(root.join("../tests/apps/amd").join(t));
    }
    let mut out = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        out.extend(
            entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "co")),
        );
    }
    out.sort();
    out
}

/// Rewrite speed (detect mode, every kernel) on the largest code objects:
/// the mean of repeated rewrites of each, as instructions and kernels per
/// second and milliseconds per 10k instructions.
fn largest_objects() {
    let detect = RewriteOptions { mode: Mode::Detect, ..Default::default() };
    let mut sized: Vec<(usize, usize, std::path::PathBuf)> = repository_objects()
        .into_iter()
        .filter_map(|p| {
            let out = rewrite::rewrite(&common::read(&p), &detect).ok()?;
            Some((out.kernels.iter().map(|k| k.instructions).sum::<usize>(), out.kernels.len(), p))
        })
        .collect();
    sized.sort_by_key(|s| std::cmp::Reverse(s.0));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf();
    println!("\n| code object | instructions | kernels | ms per rewrite | instructions/s | kernels/s | ms per 10k instructions |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (instrs, kernels, path) in sized.iter().take(6) {
        let bytes = common::read(path);
        let (mut runs, start) = (0u32, Instant::now());
        while runs < 3 || (start.elapsed().as_secs_f64() < 2.0 && runs < 50) {
            rewrite::rewrite(&bytes, &detect).expect("rewrites");
            runs += 1;
        }
        let secs = start.elapsed().as_secs_f64() / runs as f64;
        let path = path.canonicalize().unwrap_or(path.clone());
        let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        println!(
            "| {name} | {instrs} | {kernels} | {:.1} | {:.0} | {:.0} | {:.1} |",
            secs * 1e3,
            *instrs as f64 / secs,
            *kernels as f64 / secs,
            secs * 1e3 * 1e4 / *instrs as f64
        );
    }
}
