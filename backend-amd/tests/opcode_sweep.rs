//! The opcode sweep: every floating-point VALU opcode the decoder's table
//! lists for gfx90a and gfx942, assembled by llvm-mc into a kernel of its
//! own (`tests/sweep/<target>.co`), rewritten in detect mode and run
//! original and rewritten on the emulator against a host reference; the
//! counts are committed in `tests/sweep/RESULTS.md`.

#[path = "sweep/kernels.rs"]
mod kernels;

use std::path::{Path, PathBuf};
use std::process::Command;

use kernels::SweepKernel;
use xfpx_amd_isa::Target;

const TARGETS: [Target; 2] = [Target::Gfx90a, Target::Gfx942];

fn sweep_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sweep")
}

fn sweep_kernels(target: Target) -> (Vec<SweepKernel>, Vec<String>) {
    let mut out = Vec::new();
    let mut unwritten = Vec::new();
    for row in kernels::fp_rows(target) {
        match kernels::kernel(row) {
            Some(k) => out.push(k),
            None => unwritten.push(row.mnemonic().to_string()),
        }
    }
    // The SDWA forms after the plain ones.
    for row in kernels::fp_rows(target) {
        out.extend(kernels::sdwa_kernel(row));
    }
    (out, unwritten)
}

fn tool(name: &str) -> bool {
    Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Assembles `source` for `target` with llvm-mc-19 and links it with
/// ld.lld-19 into `dir/<target>.co`.
fn build(target: Target, source: &Path, dir: &Path) -> Result<PathBuf, String> {
    let obj = dir.join(format!("{}.o", target.name()));
    let co = dir.join(format!("{}.co", target.name()));
    let st = Command::new("llvm-mc-19")
        .args(["-triple=amdgcn-amd-amdhsa", &format!("-mcpu={}", target.name()), "-filetype=obj", "-o"])
        .arg(&obj)
        .arg(source)
        .output()
        .map_err(|e| e.to_string())?;
    if !st.status.success() {
        return Err(String::from_utf8_lossy(&st.stderr).into_owned());
    }
    let st = Command::new("ld.lld-19")
        .args(["-shared", "--no-undefined", "-o"])
        .arg(&co)
        .arg(&obj)
        .output()
        .map_err(|e| e.to_string())?;
    if !st.status.success() {
        return Err(String::from_utf8_lossy(&st.stderr).into_owned());
    }
    Ok(co)
}

/// The committed objects are what llvm-mc and ld.lld make of the assembly
/// the generator writes now (`XFPX_BLESS=1` rebuilds them).
#[test]
fn committed_sweep_objects_are_current() {
    let bless = std::env::var("XFPX_BLESS").is_ok_and(|v| v == "1");
    if !(tool("llvm-mc-19") && tool("ld.lld-19")) {
        println!("SKIPPED: llvm-mc-19/ld.lld-19 not installed; the sweep objects were not rebuilt");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    for target in TARGETS {
        let (ks, unwritten) = sweep_kernels(target);
        assert!(unwritten.is_empty(), "{}: no kernel for {unwritten:?}", target.name());
        let s_path = tmp.path().join(format!("{}.s", target.name()));
        std::fs::write(&s_path, kernels::assembly(target, &ks)).expect("write .s");
        let co = build(target, &s_path, tmp.path()).unwrap_or_else(|e| panic!("{}: {e}", target.name()));
        let co_path = sweep_dir().join(format!("{}.co", target.name()));
        if bless {
            std::fs::copy(&co, &co_path).expect("write .co");
        }
        assert!(
            std::fs::read(&co).ok() == std::fs::read(&co_path).ok(),
            "{} is stale (XFPX_BLESS=1 rebuilds it)",
            co_path.display()
        );
    }
}

#[path = "sweep/reference.rs"]
mod reference;

use std::collections::{BTreeMap, BTreeSet};

use reference::Want;
use xfpx_amd::rewrite::division;
use xfpx_amd::rewrite::view::DecodedInstr;
use xfpx_amd::rewrite::{self, table, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::dispatch::{run_kernel, Dispatch, LoadedCode, RunLimits, RunStats};
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::Program;
use xfpx_common::{ExceptionKind, FpFormat, FpOp, InstrClass};

const TABLE_BYTES: usize = 1 << 20;

/// Where the detect table lies: the first allocation of a fresh emulated memory.
fn table_address() -> u64 {
    GlobalMemory::new().allocate(vec![0u8; TABLE_BYTES])
}

/// A kernel's run on the emulator: output dwords per lane, statistics and
/// the detect table's bytes.
struct Run {
    out: Vec<[u32; kernels::OUTPUT_DWORDS]>,
    stats: RunStats,
    table: Vec<u8>,
}

/// Runs kernel `name` of `object`, one wave of 64 lanes, on the sweep's
/// inputs, with a zeroed table at [`table_address`].
fn run(object: &Program, name: &str, inputs: &[[u32; kernels::INPUT_DWORDS]]) -> Result<Run, String> {
    let mut mem = GlobalMemory::new();
    let table_addr = mem.allocate(vec![0u8; TABLE_BYTES]);
    let kernel = object.kernel(name).ok_or("no kernel")?.clone();
    let input: Vec<u8> = inputs.iter().flatten().flat_map(|w| w.to_le_bytes()).collect();
    let in_addr = mem.allocate(input);
    let out_addr = mem.allocate(vec![0u8; 64 * 4 * kernels::OUTPUT_DWORDS]);
    let mut kernarg = in_addr.to_le_bytes().to_vec();
    kernarg.extend(out_addr.to_le_bytes());
    let loaded = LoadedCode::load(&mut mem, object.clone());
    let d = Dispatch { grid: [1, 1, 1], block: [64, 1, 1], dynamic_lds: 0 };
    let stats =
        run_kernel(&mut mem, &loaded, &kernel, &kernarg, &d, &RunLimits::default()).map_err(|e| e.to_string())?;
    let bytes = mem.allocation(out_addr).ok_or("output")?;
    let out = (0..64)
        .map(|l| {
            let mut o = [0u32; kernels::OUTPUT_DWORDS];
            for (j, w) in o.iter_mut().enumerate() {
                let at = 4 * (l * kernels::OUTPUT_DWORDS + j);
                *w = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
            }
            o
        })
        .collect();
    let table = mem.allocation(table_addr).unwrap_or(&[]).to_vec();
    Ok(Run { out, stats, table })
}

/// Whether a lane's output dwords hold the expected value (NaNs compare as
/// NaNs; an f16 result's high half is zero).
fn matches(want: Want, o: &[u32; kernels::OUTPUT_DWORDS], at: usize) -> bool {
    let f32_eq = |a: f32, bits: u32| {
        let b = f32::from_bits(bits);
        (a.is_nan() && b.is_nan()) || a.to_bits() == bits
    };
    let f16_eq = |a: u16, bits: u16| {
        let nan = |h: u16| h & 0x7FFF > 0x7C00;
        (nan(a) && nan(bits)) || a == bits
    };
    match want {
        Want::F32(v) => f32_eq(v, o[0]),
        Want::F64(v) => {
            let b = f64::from_bits(o[0] as u64 | (o[1] as u64) << 32);
            (v.is_nan() && b.is_nan()) || v.to_bits() == b.to_bits()
        }
        Want::F16(h) => o[0] >> 16 == 0 && f16_eq(h, o[0] as u16),
        Want::F16Hi(h, lo) => o[0] as u16 == lo && f16_eq(h, (o[0] >> 16) as u16),
        Want::F16x2(lo, hi) => f16_eq(lo, o[0] as u16) && f16_eq(hi, (o[0] >> 16) as u16),
        Want::F32x2(a, b) => f32_eq(a, o[0]) && f32_eq(b, o[1]),
        Want::Mask(m) => o[at] == m as u32,
        Want::Unspecified => true,
    }
}

/// What the sweep found for one target.
#[derive(Default)]
struct Tally {
    opcodes: usize,
    /// Kernels of SDWA forms (beside the one per opcode).
    sdwa: usize,
    fp_sites: u64,
    checked: u64,
    refused: BTreeMap<String, Vec<String>>,
    /// Opcodes the rewriter's view does not count as FP sites, by why.
    not_sites: Vec<String>,
    emulated: usize,
    emulator_lacks: BTreeMap<String, Vec<String>>,
    identical: usize,
    records_equal: usize,
    /// Kernels instrumented in screen mode; of the emulated, those whose
    /// screened run computes the same with the wave's TRAPSTS in its slots.
    screened: usize,
    screen_equal: usize,
    /// Of those, kernels whose waves raised some exception bit.
    screen_bits: usize,
    referenced: usize,
    reference_lanes: usize,
    no_reference: Vec<String>,
    failures: Vec<String>,
}

/// (site offset, kind, format) of a kernel's detect records or observations.
type Found = BTreeSet<(u64, ExceptionKind, FpFormat)>;

/// What detect mode must record for kernel `k`: the emulator's
/// observations of the original run, at offsets from the kernel's entry,
/// except that steps of a division sequence are judged at its
/// `v_div_fixup` (no records of their own) and an infinite result is a
/// division by zero only at a quotient (`v_rsq` of 0 is inf).
fn expected_records(orig: &Run, entry: u64, co: &xfpx_amd::CodeObject<'_>, target: Target, k: &SweepKernel) -> Found {
    let code: Vec<DecodedInstr> = {
        let f = co.functions.iter().find(|f| f.name == k.name).expect("kernel function");
        let bytes = co.elf.bytes_at_addr(f.code.start, f.code.end - f.code.start).expect("kernel bytes");
        xfpx_amd_isa::disassemble(target, bytes, f.code.start)
            .map_while(|(a, r)| r.ok().map(|insn| DecodedInstr { addr: a, insn }))
            .collect()
    };
    orig.stats
        .observations
        .results
        .keys()
        .filter_map(|&(pc, kind, f)| {
            let addr = pc - orig.stats.code_base;
            let i = code.iter().position(|d| d.addr == addr).expect("observed at an instruction");
            if division::is_step(&code, i) {
                return None;
            }
            let quotient = matches!(code[i].insn.class(), InstrClass::Arith { op: FpOp::Div, .. });
            let kind = if kind == ExceptionKind::Div0 && !quotient { ExceptionKind::Inf } else { kind };
            Some((addr - entry, kind, f))
        })
        .collect()
}

fn sweep(target: Target) -> Tally {
    let co = std::fs::read(sweep_dir().join(format!("{}.co", target.name()))).expect("committed sweep object");
    let (ks, _) = sweep_kernels(target);
    let inputs = reference::inputs();
    let sdwa = ks.iter().filter(|k| k.sdwa.is_some()).count();
    let mut t = Tally { opcodes: ks.len() - sdwa, sdwa, ..Default::default() };
    // Every kernel rewritten at once, as a run would.
    let opts = RewriteOptions { mode: Mode::Detect, table: TableAddress::Known(table_address()), ..Default::default() };
    let out = rewrite::rewrite(&co, &opts).expect("rewrites");
    let original = Program::parse(&co).expect("parses");
    let rewritten = Program::parse(&out.bytes).expect("rewritten parses");
    let isa_code = xfpx_amd::CodeObject::parse(&co).expect("code object");
    // And rewritten for screening.
    let sopts = RewriteOptions { mode: Mode::Screen, ..opts.clone() };
    let sout = rewrite::rewrite(&co, &sopts).expect("rewrites for screening");
    let screened = Program::parse(&sout.bytes).expect("screened parses");
    for k in &ks {
        let m = k.name.trim_start_matches("sweep_");
        let ko = out.kernels.iter().find(|x| x.name == k.name).expect("kernel outcome");
        match &sout.kernels.iter().find(|x| x.name == k.name).expect("screen outcome").state {
            KernelState::Instrumented => t.screened += 1,
            other => t.failures.push(format!("{m}: not screened: {other:?}")),
        }
        let cov = ko.coverage.clone().unwrap_or_default();
        t.fp_sites += cov.fp_sites;
        t.checked += cov.checked;
        for r in &cov.refused {
            t.refused.entry(r.reason.clone()).or_default().push(m.to_string());
        }
        if cov.fp_sites == 0 {
            t.not_sites.push(m.to_string());
        }
        if cov.checked + cov.refused_sites() != cov.fp_sites {
            t.failures.push(format!("{m}: coverage does not add up: {cov:?}"));
        }
        // A kernel left alone must say why, site by site.
        if !ko.state.instrumented() && cov.refused.is_empty() {
            t.failures.push(format!("{m}: kernel not instrumented: {:?}", ko.state));
        }
        // The original on the emulator.
        let orig = match run(&original, &k.name, &inputs) {
            Ok(r) => r,
            Err(e) => {
                let why = if e.contains("unsupported matrix instruction") {
                    "a matrix instruction outside the emulator's table"
                } else if e.contains("Unsupported(") {
                    "no semantics in the emulator"
                } else {
                    &e
                };
                t.emulator_lacks.entry(why.to_string()).or_default().push(m.to_string());
                continue;
            }
        };
        t.emulated += 1;
        // Screened, it computes the same, and its slots hold the wave's TRAPSTS bits.
        match run(&screened, &k.name, &inputs) {
            Err(e) => t.failures.push(format!("{m}: the screened kernel does not run: {e}")),
            Ok(sr) => {
                let got = table::decode(&sout.table, &sout.sites, &sr.table, 0).expect("table decodes");
                let bits = got.screened.iter().filter(|x| x.kernel == k.name).fold(0, |a, x| a | x.trapsts);
                if sr.out == orig.out && sr.stats.hazards().is_empty() && bits == sr.stats.trapsts & 0x1FF {
                    t.screen_equal += 1;
                    t.screen_bits += usize::from(bits != 0);
                } else {
                    t.failures.push(format!(
                        "{m}: screened: outputs equal {}, hazards {:?}, bits {bits:#x} vs TRAPSTS {:#x}",
                        sr.out == orig.out,
                        sr.stats.hazards(),
                        sr.stats.trapsts
                    ));
                }
            }
        }
        // The rewritten kernel computes the same, without hazards, and
        // records what the emulator observed.
        match run(&rewritten, &k.name, &inputs) {
            Err(e) => t.failures.push(format!("{m}: the rewritten kernel does not run: {e}")),
            Ok(rw) => {
                if rw.out == orig.out {
                    t.identical += 1;
                } else {
                    t.failures.push(format!("{m}: outputs differ between original and rewritten"));
                }
                let hazards = rw.stats.hazards();
                if !hazards.is_empty() || !orig.stats.hazards().is_empty() {
                    t.failures.push(format!("{m}: hazards {hazards:?}"));
                }
                let entry = original.kernel(&k.name).expect("kernel").entry_vaddr;
                let expected = expected_records(&orig, entry, &isa_code, target, k);
                let got = table::decode(&out.table, &out.sites, &rw.table, 0).expect("table decodes");
                let found: Found = got
                    .records
                    .iter()
                    .filter(|(f, _)| *f == k.name)
                    .map(|(_, r)| (r.site.offset, r.kind, r.format))
                    .collect();
                // Detect mode also reports NaN operands of compares and min/max.
                let operand_checks = matches!(k.row.class, InstrClass::Compare { .. } | InstrClass::MinMax { .. });
                let extra: Vec<_> = found
                    .difference(&expected)
                    .filter(|(_, kind, _)| !(operand_checks && *kind == ExceptionKind::Nan))
                    .collect();
                let missing: Vec<_> = expected.difference(&found).collect();
                if extra.is_empty() && (missing.is_empty() || cov.checked == 0) {
                    t.records_equal += 1;
                } else {
                    t.failures.push(format!("{m}: records differ: missing {missing:?}, extra {extra:?}"));
                }
            }
        }
        // The host reference.
        match reference::expected(k, &inputs) {
            Err(why) => {
                let _ = why;
                t.no_reference.push(m.to_string());
            }
            Ok(want) => {
                let at = match k.result {
                    kernels::Result::Mask { at, .. } => at as usize,
                    kernels::Result::Value(_) => 0,
                };
                let bad: Vec<usize> = (0..64).filter(|&l| !matches(want[l], &orig.out[l], at)).collect();
                t.reference_lanes += want.iter().filter(|w| **w != Want::Unspecified).count();
                if bad.is_empty() {
                    t.referenced += 1;
                } else {
                    let l = bad[0];
                    t.failures.push(format!(
                        "{m}: {} lanes differ from the host reference, first lane {l}: inputs {:08x?}, got {:08x?}, want {:?}",
                        bad.len(),
                        &inputs[l],
                        orig.out[l],
                        want[l]
                    ));
                }
            }
        }
    }
    t
}

/// The committed result table of one target.
fn table_of(target: Target, t: &Tally) -> String {
    let pct = |n: u64, d: u64| if d == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * n as f64 / d as f64) };
    let refused: u64 = t.refused.values().map(|v| v.len() as u64).sum();
    let lacks: usize = t.emulator_lacks.values().map(Vec::len).sum();
    let mut s = format!("## {}\n\n| | opcodes or sites |\n|---|---:|\n", target.name());
    for (what, n) in [
        ("FP opcodes of the decoder's table (VALU; one kernel each)".to_string(), t.opcodes.to_string()),
        ("their SDWA forms (f16 operands in the high halves; one kernel each)".to_string(), t.sdwa.to_string()),
        ("FP sites of all these kernels (the rewriter's view)".to_string(), t.fp_sites.to_string()),
        ("sites checked in detect mode".to_string(), format!("{} ({})", t.checked, pct(t.checked, t.fp_sites))),
        ("sites refused".to_string(), refused.to_string()),
        (
            "opcodes whose result detect mode does not read as FP (8-bit float results)".to_string(),
            t.not_sites.len().to_string(),
        ),
        ("kernels screened in screen mode".to_string(), format!("{} of {}", t.screened, t.opcodes + t.sdwa)),
        ("kernels the emulator executes".to_string(), t.emulated.to_string()),
        ("of those, instrumented outputs bit-identical, no hazard".to_string(), t.identical.to_string()),
        ("of those, detect records = the emulator's observations".to_string(), t.records_equal.to_string()),
        (
            "of those, screened outputs bit-identical, slots = TRAPSTS (some bit set)".to_string(),
            format!("{} ({})", t.screen_equal, t.screen_bits),
        ),
        (
            "of those, bit-identical to the host reference".to_string(),
            format!("{} ({} lanes)", t.referenced, t.reference_lanes),
        ),
        ("of those, without host reference".to_string(), t.no_reference.len().to_string()),
        ("kernels the emulator does not execute".to_string(), lacks.to_string()),
    ] {
        s.push_str(&format!("| {what} | {n} |\n"));
    }
    let list = |v: &[String]| v.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    if !t.refused.is_empty() {
        s.push_str("\nRefused, by reason:\n\n");
        for (why, ms) in &t.refused {
            s.push_str(&format!("- {why}: {}\n", list(ms)));
        }
    }
    if !t.not_sites.is_empty() {
        s.push_str(&format!("\nNot read as FP results: {}\n", list(&t.not_sites)));
    }
    if !t.emulator_lacks.is_empty() {
        s.push_str("\nNot executed by the emulator, by what it says:\n\n");
        for (why, ms) in &t.emulator_lacks {
            s.push_str(&format!("- {why}: {}\n", list(ms)));
        }
    }
    if !t.no_reference.is_empty() {
        s.push_str(&format!("\nExecuted, {}: {}\n", reference::NO_RULE, list(&t.no_reference)));
    }
    s
}

const RESULTS_HEAD: &str = "# Opcode sweep: every floating-point VALU opcode, rewritten and emulated

Produced by `cargo test -p xfpx-amd --test opcode_sweep` (rewritten with
`XFPX_BLESS=1`; the test fails when this file differs from what it finds).
Each floating-point VALU opcode of the decoder's table for the target, and
the SDWA form of each that has one (f16 sources read from their high
halves, an f16 result written to the high half with the low one kept), is
assembled by llvm-mc into a kernel of its own (`tests/sweep/<target>.co`, from the
assembly `backend-amd/tests/sweep/kernels.rs` writes): 64 lanes load
special and ordinary values (zeros, subnormals, infinities, quiet NaNs,
extremes) into f32, f16x2, f64 and integer registers, run the opcode once
and store its result. The object is rewritten in detect mode (every kernel
at once); each kernel runs original and rewritten on the emulator, whose
outputs must be bit-identical with no hazard, with detect records equal to
the (site, kind, format) set the emulator observes (plus NaN operands of
comparisons and min/max); rewritten in screen mode, each computes the same
and its slots hold the wave's TRAPSTS bits. Where IEEE arithmetic or a documented rule fixes
the result, the original's output must equal a host reference computed
with Rust's f32/f64 arithmetic (NaNs compare as NaNs; lanes where the rule
leaves the result open, such as the minimum of +0 and -0, are not compared).

";

#[test]
fn every_fp_opcode_is_checked_or_refused_and_emulated() {
    let mut failures = Vec::new();
    let mut results = RESULTS_HEAD.to_string();
    for target in TARGETS {
        let t = sweep(target);
        results.push_str(&table_of(target, &t));
        results.push('\n');
        failures.extend(t.failures.iter().map(|f| format!("{}: {f}", target.name())));
        // The bar: at least 99% of the FP sites checked in detect mode.
        assert!(t.checked * 100 >= t.fp_sites * 99, "{}: {} of {} sites checked", target.name(), t.checked, t.fp_sites);
    }
    println!("{results}");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    let path = sweep_dir().join("RESULTS.md");
    if std::env::var("XFPX_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &results).expect("write RESULTS.md");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == results, "{} differs from what the sweep finds (XFPX_BLESS=1 rewrites it)", path.display());
}

/// A floating-point instruction inside a VGPR indexing region is refused
/// with its reason (the check's own VGPR operands would be indexed), the
/// kernel stays partially instrumented, and it computes what the original
/// computes on the emulator, which indexes the region's operands.
#[test]
fn sites_inside_a_vgpr_indexing_region_are_refused() {
    if !(tool("llvm-mc-19") && tool("ld.lld-19")) {
        println!("SKIPPED: llvm-mc-19/ld.lld-19 not installed; the indexing-region kernel cannot be built");
        return;
    }
    let target = Target::Gfx90a;
    // The sweep's v_add_f32_e32 kernel, with the addition inside a region
    // that offsets source 0 by 1 (v2 reads v3) and a second addition after it.
    let (ks, _) = sweep_kernels(target);
    let mut k = ks.into_iter().find(|k| k.op() == xfpx_amd_isa::Opcode::V_ADD_F32_E32).expect("v_add_f32_e32 kernel");
    k.name = "indexed_add".into();
    k.line = format!("s_mov_b32 s12, 1\n\ts_set_gpr_idx_on s12, gpr_idx(SRC0)\n\t{}\n\ts_set_gpr_idx_off\n\tv_add_f32_e32 v41, v2, v3", k.line);
    let tmp = tempfile::tempdir().expect("tempdir");
    let s_path = tmp.path().join("indexed.s");
    std::fs::write(&s_path, kernels::assembly(target, std::slice::from_ref(&k))).expect("write .s");
    let co = std::fs::read(build(target, &s_path, tmp.path()).expect("builds")).expect("object");
    let opts = RewriteOptions { mode: Mode::Detect, table: TableAddress::Known(table_address()), ..Default::default() };
    let out = rewrite::rewrite(&co, &opts).expect("rewrites");
    let ko = &out.kernels[0];
    assert_eq!(ko.state, KernelState::Partial, "{:?}", ko.refused_sites);
    let cov = ko.coverage.clone().expect("coverage");
    assert_eq!((cov.fp_sites, cov.checked, cov.refused_sites()), (2, 1, 1), "{cov:?}");
    assert!(cov.refused[0].reason.contains("VGPR indexing region"), "{cov:?}");
    let inputs = reference::inputs();
    let orig = run(&Program::parse(&co).expect("parses"), &k.name, &inputs).expect("original runs");
    let rw = run(&Program::parse(&out.bytes).expect("parses"), &k.name, &inputs).expect("rewritten runs");
    assert!(rw.out == orig.out && rw.stats.hazards().is_empty());
    // The indexed addition read v3 for v2: v3 + v3.
    let l = 5;
    let v3 = f32::from_bits(inputs[l][1]);
    assert!(matches(Want::F32(v3 + v3), &orig.out[l], 0), "{:08x?}", orig.out[l]);
}
