//! Benchmark of the rewriter (not a timed test; run it explicitly):
//!
//!     cargo test --release -p xfpx-amd --test rewrite_bench -- --ignored --nocapture
//!
//! Per emulator fixture launch: dynamic wave instructions of the rewritten
//! kernel over the original's in detect and screen modes, probes and waits
//! added; then the rewrite time per 10k instructions over the corpus.

mod common;

use std::path::Path;
use std::time::Instant;

use xfpx_amd::rewrite::{self, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::dispatch::{run_kernel, Dispatch, LoadedCode, RunLimits};
use xfpx_amd_emu::launch::{ArgSpec, Launch};
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
    let explicit: Vec<_> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
    let mut kernarg = vec![0u8; explicit.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0)];
    for (meta, arg) in explicit.iter().zip(&launch.args) {
        let v = match arg {
            ArgSpec::Buffer(n) => {
                addrs.iter().find(|(x, _)| x == n).map(|(_, a)| *a).unwrap_or(0).to_le_bytes().to_vec()
            }
            ArgSpec::Scalar(_, b) => b.clone(),
        };
        kernarg[meta.offset as usize..meta.offset as usize + v.len()].copy_from_slice(&v);
    }
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
}
