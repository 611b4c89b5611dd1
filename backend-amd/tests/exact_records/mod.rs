//! What the detector must record on the emulator, and the runs that show
//! it: a launch run plain or rewritten (a zeroed table allocated first),
//! and the (site, kind, format) set the emulator observed in the original
//! run (results, and the NaN sources of comparisons and min/max, which the
//! detector also checks: those the emulator saw the flow tool's probes
//! read, `xfpx_amd::flow::observe_flow`). Shared by the emulated rewrite
//! tests of the emulator's fixtures and of the real-code-style fixtures.

use std::collections::BTreeSet;
use std::path::Path;

use xfpx_amd::rewrite::{self, Mode, RewriteOptions, TableAddress};
use xfpx_amd_emu::arguments::explicit_args;
use xfpx_amd_emu::dispatch::{run_kernel, Dispatch, LoadedCode, RunLimits, RunStats};
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::Program as EmuObject;
use xfpx_common::config::KernelFilter;
use xfpx_common::{ExceptionKind, FpFormat};

/// Room for the table of the largest fixture (a slot per site, kind and format).
const TABLE_BYTES: usize = 1 << 20;

/// Targets the emulator runs the fixtures for (gfx90a and gfx942 are the
/// issue's; gfx908 and gfx950 share the fixtures' instructions).
pub const TARGETS: [&str; 4] = ["gfx908", "gfx90a", "gfx942", "gfx950"];

/// What a run left: the launch's output buffers, the emulator's statistics
/// (observations, hazards) and the table's bytes.
pub struct Run {
    pub outputs: Vec<(String, Vec<u8>)>,
    pub stats: RunStats,
    pub table: Vec<u8>,
}

/// Runs `launch` with a zeroed table allocated first in emulated memory;
/// `rewrite_with` gives the code object (an ELF) that runs, given the
/// table's address.
pub fn run(launch: &Launch, rewrite_with: &dyn Fn(u64) -> Vec<u8>) -> Result<Run, String> {
    let mut mem = GlobalMemory::new();
    let table_addr = mem.allocate(vec![0u8; TABLE_BYTES]);
    let bytes = rewrite_with(table_addr);
    let object = EmuObject::parse(&bytes).map_err(|e| e.0)?;
    let kernel = object.kernel(&launch.kernel).ok_or("no kernel")?.clone();
    let mut addrs = Vec::new();
    for b in &launch.buffers {
        addrs.push((b.name.clone(), mem.allocate(b.bytes.clone())));
    }
    let address_of = |name: &str| addrs.iter().find(|(n, _)| n == name).map_or(0, |(_, a)| *a);
    let kernarg = explicit_args(&kernel.name, &kernel.args, &launch.args, &address_of)?;
    let loaded = LoadedCode::load(&mut mem, object);
    let d = Dispatch { grid: launch.grid, block: launch.block, dynamic_lds: launch.dynamic_lds };
    let stats = run_kernel(
        &mut mem,
        &loaded,
        &kernel,
        &kernarg,
        &d,
        &RunLimits { max_instructions: 2_000_000_000, ..RunLimits::default() },
    )
    .map_err(|e| e.to_string())?;
    let outputs = launch
        .outputs
        .iter()
        .map(|n| {
            let a = addrs.iter().find(|(x, _)| x == n).map(|(_, a)| *a).unwrap_or(0);
            (n.clone(), mem.allocation(a).unwrap_or(&[]).to_vec())
        })
        .collect();
    let table = mem.allocation(table_addr).unwrap_or(&[]).to_vec();
    Ok(Run { outputs, stats, table })
}
/// (function or kernel, offset in it, kind, format).
pub type Key = (String, u64, ExceptionKind, FpFormat);

/// The function (kernel or device function) holding code address `addr`,
/// and `addr`'s offset in it.
pub fn locate(co: &xfpx_amd::CodeObject<'_>, addr: u64) -> Option<(String, u64)> {
    co.functions.iter().find(|f| f.code.contains(&addr)).map(|f| (f.name.clone(), addr - f.code.start))
}

/// The instruction at `addr` of a code object (8 bytes read where there
/// are 8, else 4).
pub fn instr_at(
    co: &xfpx_amd::CodeObject<'_>,
    isa: xfpx_amd_isa::Target,
    addr: u64,
) -> Option<xfpx_amd_isa::Instruction> {
    let bytes = co.elf.bytes_at_addr(addr, 8).or_else(|_| co.elf.bytes_at_addr(addr, 4)).ok()?;
    xfpx_amd_isa::decode(isa, bytes).ok()
}
/// The emulator stops at an instruction its opcode table does not list
/// (e.g. `v_cmp_class_f16`, `global_atomic_or`, which the appended code uses):
/// such runs prove nothing either way and are listed, not failed.
pub fn emulator_lacks(e: &str) -> bool {
    e.contains("cannot decode the instruction")
}

/// The (site, kind, format) set the detector must record for `launch`
/// (file `path`) on `target`, from the original's run `orig`: the results
/// the emulator observed exceptional, and the NaN sources of comparisons
/// and min/max (the documented extra comparison-operand sites).
pub fn observed(path: &Path, target: &str, original: &[u8], orig: &Run) -> Result<BTreeSet<Key>, String> {
    let code_base = orig.stats.code_base;
    // A division's check records div0 where the divisor was ±0 and inf
    // where the quotient overflowed, as the emulator observes; the
    // steps of a division sequence are judged at its v_div_fixup (no
    // records of their own). Any other infinite result (v_rsq of 0
    // included) is inf.
    let parsed = xfpx_amd::CodeObject::parse(original).expect("parses");
    let isa: xfpx_amd_isa::Target = target.parse().expect("target");
    let is_div = |addr: u64| {
        instr_at(&parsed, isa, addr)
            .is_some_and(|i| matches!(i.class(), xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Div, .. }))
    };
    let is_step = |addr: u64, off: u64| {
        let start = addr - off;
        let Ok(bytes) = parsed.elf.bytes_at_addr(start, off + 8).or_else(|_| parsed.elf.bytes_at_addr(start, off + 4))
        else {
            return false;
        };
        let code: Vec<xfpx_amd::rewrite::view::DecodedInstr> = xfpx_amd_isa::disassemble(isa, bytes, start)
            .map_while(|(a, r)| r.ok().map(|insn| xfpx_amd::rewrite::view::DecodedInstr { addr: a, insn }))
            .collect();
        code.iter().position(|d| d.addr == addr).is_some_and(|i| xfpx_amd::rewrite::division::is_step(&code, i))
    };
    let observed: BTreeSet<Key> = orig
        .stats
        .observations
        .results
        .keys()
        .filter_map(|&(pc, k, f)| {
            let addr = pc - code_base;
            let (function, off) = locate(&parsed, addr).expect("observed in a function");
            if is_step(addr, off) {
                return None;
            }
            let k = match k {
                ExceptionKind::Div0 if !is_div(addr) => ExceptionKind::Inf,
                k => k,
            };
            Some((function, off, k, f))
        })
        .collect();
    // The detector also checks the sources of comparisons and
    // min/max for NaN (a NaN they hide is found where it disappears).
    let opts =
        xfpx_amd_emu::ReplayOptions { target: Some(target.to_string()), ..xfpx_amd_emu::ReplayOptions::default() };
    let mut observed = observed;
    match xfpx_amd::flow::observe_flow(path, &opts) {
        Ok(flows) => {
            for ((unit, off, _, _), seen) in flows {
                let (format, op) = seen.class.split_once('.').unwrap_or_default();
                let hides = op == "cmp" || op == "minmax";
                if hides && seen.classes & xfpx_common::flow::lane::SRC_NAN != 0 {
                    observed.insert((unit, off, ExceptionKind::Nan, FpFormat::from_name(format).expect("format")));
                }
            }
        }
        Err(e) => return Err(format!("the emulator's view of the sources failed: {e:#}")),
    }
    Ok(observed)
}

/// Runs `launch` on `original` rewritten by `rewrite_fn` with `opts`, whose
/// table address is filled in; also returns what the rewrite did.
pub fn rewritten_run_with(
    launch: &Launch,
    original: &[u8],
    opts: RewriteOptions,
    rewrite_fn: &dyn Fn(&[u8], &RewriteOptions) -> rewrite::RewriteOutcome,
) -> (Result<Run, String>, rewrite::RewriteOutcome) {
    let outcome = std::cell::RefCell::new(None);
    let rw = run(launch, &|addr| {
        let out = rewrite_fn(original, &RewriteOptions { table: TableAddress::Known(addr), ..opts.clone() });
        assert!(out.table.bytes() <= TABLE_BYTES as u64, "the table ({} bytes) outgrows the test's", out.table.bytes());
        let b = out.bytes.clone();
        *outcome.borrow_mut() = Some(out);
        b
    });
    (rw, outcome.into_inner().expect("outcome"))
}

/// [`rewritten_run_with`] the rewriter's own tools.
pub fn rewritten_run(
    launch: &Launch,
    original: &[u8],
    opts: RewriteOptions,
) -> (Result<Run, String>, rewrite::RewriteOutcome) {
    rewritten_run_with(launch, original, opts, &|b, o| rewrite::rewrite(b, o).expect("rewrites"))
}

/// Detect mode with the given kernel filter.
pub fn detect_run(
    launch: &Launch,
    original: &[u8],
    kernels: KernelFilter,
) -> (Result<Run, String>, rewrite::RewriteOutcome) {
    rewritten_run(launch, original, RewriteOptions { mode: Mode::Detect, kernels, ..Default::default() })
}

/// Judges a rewritten run `rw` (of `out`) against the original's `orig`:
/// differing outputs or a hazard is a failure; returns the run and the
/// table's contents with their (site, kind, format) records, or None when it did not
/// run (listed in `not_proven` where the emulator lacks an instruction, in
/// `failures` otherwise).
pub fn rewritten_records(
    name: &str,
    orig: &Run,
    rw: Result<Run, String>,
    out: &rewrite::RewriteOutcome,
    failures: &mut Vec<String>,
    not_proven: &mut Vec<String>,
) -> Option<(Run, rewrite::table::TableContents, BTreeSet<Key>)> {
    let rw = match rw {
        Ok(r) => r,
        Err(e) if emulator_lacks(&e) => {
            not_proven.push(format!("{name}: detect: {e}"));
            return None;
        }
        Err(e) => {
            failures.push(format!("{name}: rewritten does not run: {e}"));
            return None;
        }
    };
    if rw.outputs != orig.outputs {
        failures.push(format!("{name}: output buffers differ"));
    }
    let hazards = rw.stats.hazards();
    if !hazards.is_empty() {
        failures.push(format!("{name}: hazards {:?}", hazards.iter().map(|h| h.to_string()).collect::<Vec<_>>()));
    }
    let got = rewrite::table::decode(&out.table, &out.sites, &rw.table, 0).expect("table decodes");
    let found = got.records.iter().map(|(f, r)| (f.clone(), r.site.offset, r.kind, r.format)).collect();
    Some((rw, got, found))
}

/// Runs `launch` with its kernel rewritten for screening: outputs equal to
/// the original's run `orig`, no hazard, and the table's exception bits the
/// TRAPSTS bits the emulator saw (else a failure); returns the dynamic
/// instruction count (0 when it did not run: listed in `not_proven` where
/// the emulator lacks an instruction, in `failures` otherwise).
pub fn screen_check(
    name: &str,
    launch: &Launch,
    original: &[u8],
    orig: &Run,
    failures: &mut Vec<String>,
    not_proven: &mut Vec<String>,
) -> u64 {
    let (sr, sout) = rewritten_run(
        launch,
        original,
        RewriteOptions { mode: Mode::Screen, kernels: KernelFilter::exactly(&launch.kernel), ..Default::default() },
    );
    match sr {
        Ok(sr) => {
            if sr.outputs != orig.outputs {
                failures.push(format!("{name}: screen: output buffers differ"));
            }
            if !sr.stats.hazards().is_empty() {
                failures.push(format!("{name}: screen: hazards"));
            }
            let got = rewrite::table::decode(&sout.table, &sout.sites, &sr.table, 0).expect("decodes");
            let bits = got.screened.iter().map(|s| s.trapsts).fold(0, |a, b| a | b);
            if bits != sr.stats.trapsts & 0x1ff {
                failures.push(format!("{name}: screen: table {bits:#x}, emulator TRAPSTS {:#x}", sr.stats.trapsts));
            }
            sr.stats.instructions
        }
        Err(e) if emulator_lacks(&e) => {
            not_proven.push(format!("{name}: screen: {e}"));
            0
        }
        Err(e) => {
            failures.push(format!("{name}: screen: does not run: {e}"));
            0
        }
    }
}
