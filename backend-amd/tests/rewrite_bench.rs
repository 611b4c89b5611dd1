//! Benchmark of the rewriter (not a timed test; run it explicitly):
//!
//!     cargo test --release -p xfpx-amd --test rewrite_bench -- --ignored --nocapture
//!
//! Per emulator fixture launch: dynamic wave instructions of the rewritten
//! kernel over the original's in detect and screen modes, probes and waits
//! added; then the rewrite time per 10k instructions over the corpus, and
//! the rewrite speed (instructions and kernels per second) on the largest
//! code objects of the repository and on generated objects of about 100k
//! instructions ([`generated_objects`]). Results: `tests/REWRITE_BENCH.md`.
//!
//! The speed on the generated objects alone:
//!
//!     cargo test --release -p xfpx-amd --test rewrite_bench -- --ignored --nocapture large
//!
//! Speed work must leave the outputs as they were: [`rewrite_digests`]
//! writes a digest of every output (see there) to compare before and after.

/// The allocator the CLI and the AMD tool library use, so that the figures are theirs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    let mut objects = repository_objects();
    objects.extend(generated_objects());
    speed_table(&objects);
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn large_object_benchmark() {
    // (Objects named in XFPX_BENCH_OBJECTS, `:`-separated, instead: the
    // generated ones copied to a machine with no clang-19.)
    match std::env::var("XFPX_BENCH_OBJECTS") {
        Ok(named) => speed_table(&named.split(':').filter(|p| !p.is_empty()).map(Into::into).collect::<Vec<_>>()),
        Err(_) => speed_table(&generated_objects()),
    }
}

/// Kernels and unrolled steps of the generated source: about 100k
/// instructions once compiled for gfx90a or gfx942.
const GENERATED_KERNELS: usize = 160;
const GENERATED_STEPS: usize = 120;

/// HIP source of many kernels of unrolled floating-point steps (f32, f64
/// and f16 arithmetic, divisions, square roots, conversions, min/max),
/// some calling non-inlined device functions; the steps are drawn from a
/// fixed sequence, so the source is the same on every run.
fn generated_source(kernels: usize, steps: usize) -> String {
    const STEPS: [&str; 10] = [
        "a = __builtin_fmaf(a, b, c);",
        "b = a * c - b;",
        "c = __builtin_fmaxf(a, b) + c;",
        "d = d * (double)a + 1.0;",
        "h = h * (half)b + (half)0.5f;",
        "a = a / (b + 2.0f);",
        "d = __builtin_sqrt(d) + (double)c;",
        "c = (float)(int)a + c;",
        "b = __builtin_fminf(b, c * 0.25f);",
        "a = __builtin_amdgcn_rcpf(a) + b;",
    ];
    const FUNCTIONS: usize = 8;
    let mut seed = 0x12345u32;
    let mut draw = |n: usize| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345) & 0x7fff_ffff;
        (seed >> 8) as usize % n
    };
    let mut s = String::from("#include \"xfpx_hip.h\"\n");
    for f in 0..FUNCTIONS {
        s += &format!(
            "__device__ __noinline__ float dev{f}(float a, float b) {{ float r = a; \
             for (int i = 0; i < 4; ++i) r = __builtin_fmaf(r, b, {f}.5f) / (b + {f}.25f); return r; }}\n"
        );
    }
    for k in 0..kernels {
        s += &format!("KERNEL void k{k}(float *out, const float *in, double *dout, half *hout, int n) {{\n");
        s += "  unsigned i = gid_x(); if (i >= (unsigned)n) return;\n";
        s += "  float a = in[i], b = in[i + 1], c = in[i + 2]; double d = (double)in[i + 3]; half h = (half)in[i + 4];\n";
        for _ in 0..steps {
            s += &format!("  {}\n", STEPS[draw(STEPS.len())]);
            if draw(40) == 0 {
                s += &format!("  a = dev{}(a, b);\n", draw(FUNCTIONS));
            }
        }
        s += "  out[i] = a + b + c; dout[i] = d; hout[i] = h;\n}\n";
    }
    s
}

/// The generated source compiled by clang-19 for gfx90a and gfx942 (as
/// the fixtures are: device only, no HIP headers or device libraries),
/// into the build's temporary folder. None, said loudly, where clang-19
/// is missing or fails.
fn generated_objects() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rewrite_bench");
    let source = dir.join("generated.hip");
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&source, generated_source(GENERATED_KERNELS, GENERATED_STEPS)));
    if let Err(e) = written {
        println!("\nSKIPPED the generated objects: cannot write {}: {e}", source.display());
        return Vec::new();
    }
    let include = common::fixtures().join("src");
    let mut out = Vec::new();
    for target in ["gfx90a", "gfx942"] {
        let object = dir.join(format!("generated-{target}.co"));
        let status = std::process::Command::new("clang-19")
            .args(["-x", "hip", "-nogpulib", "-nogpuinc", "--cuda-device-only", "-O3", "-cuid=xfpx", "-c"])
            .arg(format!("--offload-arch={target}"))
            .arg("--no-gpu-bundle-output")
            .arg("-I")
            .arg(&include)
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .status();
        match status {
            Ok(s) if s.success() => out.push(object),
            Ok(s) => println!("\nSKIPPED the generated {target} object: clang-19 failed ({s})"),
            Err(e) => println!("\nSKIPPED the generated {target} object: clang-19 cannot run ({e})"),
        }
    }
    out
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

/// Rewrite speed (detect mode, every kernel) on the largest of `objects`:
/// the mean of repeated rewrites of each, as instructions and kernels per
/// second and milliseconds per 10k instructions, elapsed and of CPU time
/// (the machine may be shared: CPU time is what the rewrite itself took).
/// For generated objects, also the rewrite of one kernel (what a run
/// rewriting each kernel as it is launched does per kernel).
fn speed_table(objects: &[std::path::PathBuf]) {
    let detect = RewriteOptions { mode: Mode::Detect, ..Default::default() };
    let mut sized: Vec<(usize, usize, std::path::PathBuf)> = objects
        .iter()
        .filter_map(|p| {
            let out = rewrite::rewrite(&common::read(p), &detect).ok()?;
            Some((out.kernels.iter().map(|k| k.instructions).sum::<usize>(), out.kernels.len(), p.clone()))
        })
        .collect();
    sized.sort_by_key(|s| std::cmp::Reverse(s.0));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\n{threads} hardware threads; each rewrite timed alone (at least 5, up to 2 s or 50), with the \
         drop of its outcome\n\n| code object | instructions | kernels | rewrites | median ms | fastest ms \
         | mean CPU ms | kernels/s (median) | median ms per 10k instructions | fastest ms per 10k instructions |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (instrs, kernels, path) in sized.iter().take(8) {
        let bytes = common::read(path);
        let path = path.canonicalize().unwrap_or(path.clone());
        let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        let name = name.strip_prefix("target/tmp/rewrite_bench/").unwrap_or(&name).to_string();
        row(&name, *instrs, *kernels, &Timing::of(&|| drop(rewrite::rewrite(&bytes, &detect).expect("rewrites"))));
        if !name.contains("generated") {
            continue;
        }
        // One kernel of it (the first), as a run rewriting kernels at launch does.
        let one = RewriteOptions { kernels: KernelFilter::exactly("k0"), ..detect.clone() };
        let out = rewrite::rewrite(&bytes, &one).expect("rewrites");
        let n = out.kernels.iter().map(|k| k.instructions).sum::<usize>();
        let timing = Timing::of(&|| drop(rewrite::rewrite(&bytes, &one).expect("rewrites")));
        row(&format!("{name}, kernel k0 alone"), n, 1, &timing);
        // The same with the object's code read before (a run reads each
        // object once, then rewrites each kernel at its first launch).
        let object = rewrite::ObjectCode::read(&bytes).expect("reads");
        let tool = rewrite::outcome::mode_tool(Mode::Detect).expect("a tool");
        let known = || {
            let prepared = rewrite::prepare_known(&object, &one, tool.as_ref()).expect("prepares");
            drop(prepared.emit(0).expect("rewrites"));
        };
        row(&format!("{name}, kernel k0 alone, its object read before"), n, 1, &Timing::of(&known));
        let read = Timing::of(&|| drop(rewrite::ObjectCode::read(&bytes).expect("reads")));
        row(&format!("{name}, reading its code once (no rewrite)"), *instrs, *kernels, &read);
    }
}

/// Wall seconds of repeated runs of a piece of work, each timed alone
/// (the median and the fastest, which a busy machine moves less than
/// the mean), and the mean CPU seconds of one.
struct Timing {
    runs: usize,
    median: f64,
    fastest: f64,
    cpu: Option<f64>,
}

impl Timing {
    /// At least 5 runs of `work`, more up to 2 s (at most 50).
    fn of(work: &dyn Fn()) -> Timing {
        let (start, cpu) = (Instant::now(), cpu_seconds());
        let mut each = Vec::new();
        while each.len() < 5 || (start.elapsed().as_secs_f64() < 2.0 && each.len() < 50) {
            let one = Instant::now();
            work();
            each.push(one.elapsed().as_secs_f64());
        }
        let cpu = cpu.zip(cpu_seconds()).map(|(a, b)| (b - a) / each.len() as f64);
        Timing::from_runs(each, cpu)
    }

    fn from_runs(mut each: Vec<f64>, cpu: Option<f64>) -> Timing {
        each.sort_by(f64::total_cmp);
        let runs = each.len();
        Timing { runs, median: each.get(runs / 2).copied().unwrap_or(0.0), fastest: each[0], cpu }
    }
}

fn row(name: &str, instrs: usize, kernels: usize, t: &Timing) {
    let ms = |s: f64| format!("{:.1}", s * 1e3);
    let per_10k = |s: f64| format!("{:.1}", s * 1e3 * 1e4 / instrs.max(1) as f64);
    println!(
        "| {name} | {instrs} | {kernels} | {} | {} | {} | {} | {:.0} | {} | {} |",
        t.runs,
        ms(t.median),
        ms(t.fastest),
        t.cpu.map(ms).unwrap_or_else(|| "-".into()),
        kernels as f64 / t.median,
        per_10k(t.median),
        per_10k(t.fastest),
    );
}

/// CPU time the whole process has run, every thread's (the rewriter reads
/// on several), ended ones included, in seconds (None where the system does
/// not say: Linux's `/proc/self/stat` gives user and system time in clock
/// ticks of 1/100 s, so a measurement wants many rewrites).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name: state is the first, utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// Digests of the rewriter's outputs, for speed work that must not change
/// them: every code object of the repository (outside build folders), the
/// generated objects, and every object under the folders of
/// `XFPX_DIGEST_DIRS` (`:`-separated), each rewritten in detect, screen and
/// count modes (count through the counters planner with a patchable
/// table) and in detect mode for its first kernel alone. One line per
/// rewrite: object, mode, SHA-256 of the bytes and the outcome's JSON (or of
/// the error). Written to `XFPX_DIGEST_OUT` (default: the build's
/// temporary folder); with `XFPX_DIGEST_EXPECT` naming an earlier list,
/// every line must match it.
#[test]
#[ignore = "output digests: run with --ignored --nocapture"]
fn rewrite_digests() {
    use sha2::{Digest, Sha256};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf();
    let mut objects: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut walk = vec![(root.clone(), String::new())];
    for dir in std::env::var("XFPX_DIGEST_DIRS").unwrap_or_default().split(':').filter(|d| !d.is_empty()) {
        walk.push((Path::new(dir).to_path_buf(), format!("{dir}/")));
    }
    while let Some((dir, prefix)) = walk.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if p.is_dir() && !(prefix.is_empty() && ["target", "third_party", ".git"].contains(&name.as_str())) {
                walk.push((p, format!("{prefix}{name}/")));
            } else if name.ends_with(".co") {
                objects.push((format!("{prefix}{name}"), p));
            }
        }
    }
    objects.extend(
        generated_objects()
            .into_iter()
            .map(|p| (format!("generated/{}", p.file_name().unwrap_or_default().to_string_lossy()), p)),
    );
    objects.sort();
    let digest = |r: Result<rewrite::RewriteOutcome, rewrite::RewriteError>| {
        let mut h = Sha256::new();
        match r {
            Ok(out) => {
                h.update(&out.bytes);
                h.update(serde_json::to_vec(&out).expect("outcome serializes"));
            }
            Err(e) => h.update(format!("error: {e}")),
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let mut lines = Vec::new();
    for (name, path) in &objects {
        let bytes = common::read(path);
        let detect = RewriteOptions { mode: Mode::Detect, ..Default::default() };
        let first = rewrite::rewrite(&bytes, &detect).ok().and_then(|o| o.kernels.first().map(|k| k.name.clone()));
        lines.push(format!("{name} detect {}", digest(rewrite::rewrite(&bytes, &detect))));
        let screen = RewriteOptions { mode: Mode::Screen, ..Default::default() };
        lines.push(format!("{name} screen {}", digest(rewrite::rewrite(&bytes, &screen))));
        let count = RewriteOptions { mode: Mode::Count, table: TableAddress::Patchable, ..Default::default() };
        let counted = rewrite::prepare_counters(&bytes, &count).and_then(|p| p.emit(0x7f00_0000_0000));
        lines.push(format!("{name} count {}", digest(counted)));
        if let Some(first) = first {
            let one = RewriteOptions { kernels: KernelFilter::exactly(&first), ..detect };
            lines.push(format!("{name} detect-first {}", digest(rewrite::rewrite(&bytes, &one))));
        }
    }
    let out = std::env::var("XFPX_DIGEST_OUT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_TARGET_TMPDIR")).join("rewrite_digests.txt"));
    std::fs::write(&out, lines.join("\n") + "\n").expect("digests written");
    println!("{} objects, {} digests written to {}", objects.len(), lines.len(), out.display());
    let Ok(expect) = std::env::var("XFPX_DIGEST_EXPECT") else { return };
    let expected = common::read_text(Path::new(&expect));
    let expected: std::collections::BTreeSet<&str> = expected.lines().collect();
    let differ: Vec<&String> = lines.iter().filter(|l| !expected.contains(l.as_str())).collect();
    for l in &differ {
        println!("DIFFERS: {l}");
    }
    println!("{} of {} digests identical to {expect}", lines.len() - differ.len(), lines.len());
    assert!(differ.is_empty() && lines.len() == expected.len(), "outputs changed");
}

/// A profiling driver: rewrites each code object `XFPX_PROFILE_OBJECT`
/// names (`:`-separated) in detect mode `XFPX_PROFILE_ROUNDS` times
/// (default 5), prints the CPU and wall time of each rewrite, and the
/// median and fastest wall time and mean CPU time per 10k instructions;
/// run it under a sampling profiler (`perf record`), or to compare two
/// builds one after the other. `XFPX_PROFILE_KERNEL` names one kernel to
/// rewrite alone (as a launch does), instead of all; with
/// `XFPX_PROFILE_KNOWN=1` the object's code is read once, before the
/// rewrites, as the live path does ([`rewrite::prepare_known`]).
#[test]
#[ignore = "profiling driver: set XFPX_PROFILE_OBJECT and run with --ignored --nocapture"]
fn rewrite_profile() {
    let Ok(paths) = std::env::var("XFPX_PROFILE_OBJECT") else {
        println!("SKIPPED: XFPX_PROFILE_OBJECT names no code object");
        return;
    };
    let rounds: usize = std::env::var("XFPX_PROFILE_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut detect = RewriteOptions { mode: Mode::Detect, ..Default::default() };
    if let Ok(kernel) = std::env::var("XFPX_PROFILE_KERNEL") {
        detect.kernels = KernelFilter::exactly(&kernel);
    }
    let known = std::env::var("XFPX_PROFILE_KNOWN").is_ok_and(|v| v == "1");
    let tool = rewrite::outcome::mode_tool(Mode::Detect).expect("a tool");
    for path in paths.split(':').filter(|p| !p.is_empty()) {
        let bytes = common::read(Path::new(path));
        let object = known.then(|| rewrite::ObjectCode::read(&bytes).expect("reads"));
        let mut instrs = 0;
        let (mut each, mut cpu_total) = (Vec::new(), Some(0.0));
        for _ in 0..rounds {
            let cpu = cpu_seconds();
            let start = Instant::now();
            let out = match &object {
                Some(o) => rewrite::prepare_known(o, &detect, tool.as_ref()).and_then(|p| {
                    let at = p.known_table_address().unwrap_or(0);
                    p.emit(at)
                }),
                None => rewrite::rewrite(&bytes, &detect),
            }
            .expect("rewrites");
            instrs = out.kernels.iter().map(|k| k.instructions).sum::<usize>();
            drop(out);
            let elapsed = start.elapsed().as_secs_f64();
            each.push(elapsed);
            let cpu = cpu.zip(cpu_seconds()).map(|(a, b)| b - a);
            cpu_total = cpu_total.zip(cpu).map(|(t, c)| t + c);
            let cpu = cpu.map_or_else(|| "-".into(), |c| format!("{:.1}", c * 1e3));
            println!("{cpu} CPU ms, {:.1} wall ms", elapsed * 1e3);
        }
        if each.is_empty() {
            continue;
        }
        let t = Timing::from_runs(each, cpu_total.map(|c| c / rounds as f64));
        let per_10k = |s: f64| s * 1e3 * 1e4 / instrs.max(1) as f64;
        println!(
            "{path}: {instrs} instructions; per 10k instructions, over {rounds} rewrites: median {:.1} wall ms, \
             fastest {:.1}, mean CPU {}",
            per_10k(t.median),
            per_10k(t.fastest),
            t.cpu.map_or_else(|| "-".into(), |c| format!("{:.1} ms", per_10k(c)))
        );
    }
}
