//! Fault injection on AMD, proven on the emulator: a micro-kernel
//! (`tests/inject/micro.s`, gfx90a and gfx942) rewritten with hand-built
//! plans of one injection each, run under the emulator's documented wave
//! placement (workgroup `i` on compute unit `i`, wave `w` on SIMD `w mod 4`).
//! Each model's output equals the faulty output computed here by hand, bit
//! for bit, and the activations slot holds exactly the corrupted lane
//! instances; a location where nothing runs changes nothing and counts 0.

use std::path::{Path, PathBuf};

use xfpx_amd::rewrite::table::SlotKind;
use xfpx_amd::rewrite::{self, KernelState, RewriteOptions, TableAddress};
use xfpx_amd_emu::{Launch, LaunchMemory, Program, RunLimits};
use xfpx_common::fault::{FaultLocation, LaneSet};
use xfpx_common::plan::Plan;
use xfpx_common::probe::{Action, Change, CounterDef, CounterId, CounterKind, Probe, When};
use xfpx_common::site::SiteTable;
use xfpx_common::view::{KernelView, Operand, RegFile, RegRange};

const K: u32 = 1000;
const WORKGROUPS: u32 = 3;
const BLOCK: u32 = 128;
const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inject")
}

/// What one test injects: at the instruction whose text starts with `at`;
/// `source`: the register whose position among the sources the change's
/// `use_index` becomes.
#[derive(Debug, Clone)]
struct Fault {
    at: &'static str,
    when: When,
    change: Change,
    threads: FaultLocation,
    source: Option<RegRange>,
}

impl xfpx_common::tool::Tool for Fault {
    fn name(&self) -> &'static str {
        "hand-built-injection"
    }

    fn plan(&self, view: &KernelView, sites: &mut SiteTable) -> Plan {
        let mut plan = Plan::new(view.name.clone());
        plan.counters.push(CounterDef { name: "activations".into(), kind: CounterKind::ThreadExecutions });
        let instr = view.instrs.iter().position(|i| i.text.starts_with(self.at)).expect("instruction in the kernel");
        let ins = &view.instrs[instr];
        let site = sites.intern(&view.name, ins.offset, ins.text.clone(), None);
        let mut change = self.change.clone();
        if let (Some(reg), Change::XorUse { use_index, .. } | Change::SubstituteUse { use_index, .. }) =
            (self.source, &mut change)
        {
            *use_index = ins.uses.iter().position(|o| *o == Operand::Reg(reg)).expect("source") as u8;
        }
        plan.probes.push(Probe {
            instr: instr as u32,
            site,
            when: self.when,
            action: Action::Inject { change, threads: self.threads.clone(), activations: CounterId(0) },
        });
        plan
    }
}

/// Output and activations of one faulty run (`Err`: the run stopped).
struct Faulty {
    out: Result<Vec<u32>, String>,
    activations: u32,
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn launch() -> Launch {
    Launch::load(&dir().join("micro.json")).expect("launch")
}

fn golden_run(target: &str) -> Vec<u32> {
    let launch = launch();
    let bytes = std::fs::read(dir().join(target).join("micro.co")).expect("code object");
    let program = Program::read(&bytes, Some(target)).expect("program");
    let (out, _) = LaunchMemory::new(&launch).run(&launch, &program, &RunLimits::default()).expect("runs");
    words(&out[0].bytes)
}

fn run(target: &str, fault: &Fault) -> Faulty {
    let launch = launch();
    let mut mem = LaunchMemory::new(&launch);
    let table = mem.allocate(vec![0; 256]);
    let bytes = std::fs::read(dir().join(target).join("micro.co")).expect("code object");
    let opts = RewriteOptions { table: TableAddress::Known(table), ..RewriteOptions::default() };
    let outcome = rewrite::rewrite_with(&bytes, &opts, fault).expect("rewrites");
    for k in &outcome.kernels {
        assert!(matches!(k.state, KernelState::Instrumented), "{target}: {} is {:?}", k.name, k.state);
        assert!(k.refused_sites.is_empty() && k.probes == 1, "{target}: {:?}", k.refused_sites);
    }
    let slot = outcome
        .table
        .slots
        .iter()
        .position(|s| matches!(&s.kind, SlotKind::Counter { name, per_lane: true } if name == "activations"))
        .expect("activations slot");
    let program = Program::read(&outcome.bytes, Some(target)).expect("rewritten program");
    let out = match mem.run(&launch, &program, &RunLimits::default()) {
        Ok((out, stats)) => {
            assert!(stats.hazards().is_empty(), "{target}: hazards {:?}", stats.hazards());
            Ok(words(&out[0].bytes))
        }
        Err(e) => Err(e.0),
    };
    let activations = words(mem.allocation(table).expect("table"))[slot];
    Faulty { out, activations }
}

/// One work-item's values in the kernel (see `micro.s`): its result, stored at `out[g]`.
fn result(g: u32, t: u32, a: u32) -> u32 {
    let _ = g;
    (a ^ 0x55) | u32::from(t < 8) << 16
}

/// The fault-free output, computed from the kernel's definition.
fn golden() -> Vec<u32> {
    let mut out = vec![0; (WORKGROUPS * BLOCK) as usize];
    for w in 0..WORKGROUPS {
        for t in 0..BLOCK {
            let g = BLOCK * w + t;
            out[g as usize] = result(g, t, g + K);
        }
    }
    out
}

/// Lanes 0-3 of the second wave (SIMD 1) of workgroup 1 (on compute unit 1).
fn four_lanes() -> FaultLocation {
    FaultLocation { sm: 1, subpartition: Some(1), warps: None, lanes: LaneSet(0xF) }
}

/// Work-items 64-67 of workgroup 1 (their `g`).
const HIT: std::ops::RangeInclusive<usize> = 192..=195;

fn v(n: u16) -> RegRange {
    RegRange::new(RegFile::PerLane, n, 1)
}

/// Checks a fault on every target: output and activations.
fn check(fault: Fault, expected: Result<Vec<u32>, &str>, activations: u32) {
    for target in TARGETS {
        assert_eq!(golden_run(target), golden(), "{target}: the model of the kernel");
        let got = run(target, &fault);
        match (&got.out, &expected) {
            (Ok(out), Ok(want)) => {
                for (i, (a, b)) in out.iter().zip(want).enumerate() {
                    assert_eq!(a, b, "{target} {fault:?}: out[{i}] is {a:#x}, predicted {b:#x}");
                }
            }
            (Err(e), Err(want)) => assert!(e.contains(want), "{target}: {e}"),
            (got, want) => panic!("{target} {fault:?}: got {got:?}, predicted {want:?}"),
        }
        assert_eq!(got.activations, activations, "{target} {fault:?}: activations");
    }
}

#[test]
fn iio_xors_the_result_of_an_instruction_with_an_immediate() {
    let mut want = golden();
    for g in HIT {
        want[g] ^= 0x100;
    }
    let change = Change::XorDef { def: 0, mask: 0x100 };
    check(fault("v_xor_b32_e32 v4", When::After, change, four_lanes()), Ok(want), 4);
}

#[test]
fn ims_corrupts_a_constant_load_for_the_whole_wave_and_a_shared_load_per_lane() {
    // s6 (k) is uniform: the wave with selected lanes reads k ^ 8 in all 64 lanes.
    let mut want = golden();
    for t in 64..128 {
        let g = BLOCK + t;
        want[g as usize] = result(g, t, g + (K ^ 8));
    }
    let change = Change::XorDef { def: 0, mask: 8 };
    check(fault("s_load_dword s6", When::After, change, four_lanes()), Ok(want), 4);
    let mut want = golden();
    for g in HIT {
        want[g] ^= 1 << 31;
    }
    let change = Change::XorDef { def: 0, mask: 1 << 31 };
    check(fault("ds_read_b32", When::After, change, four_lanes()), Ok(want), 4);
}

#[test]
fn imd_corrupts_the_data_or_the_address_of_a_shared_store() {
    let mut want = golden();
    for g in HIT {
        want[g] ^= 0x4000_0000;
    }
    let change = Change::XorUse { use_index: 0, mask: 0x4000_0000 };
    check(fault("ds_write_b32", When::Before, change, four_lanes()).source(v(4)), Ok(want), 4);
    // Address ^ 4: lanes 64-67 store into each other's words (64<->65, 66<->67).
    let gold = golden();
    let mut want = gold.clone();
    for g in HIT {
        want[g] = gold[g ^ 1];
    }
    let change = Change::XorUse { use_index: 0, mask: 4 };
    check(fault("ds_write_b32", When::Before, change, four_lanes()).source(v(7)), Ok(want), 4);
}

#[test]
fn ira_substitutes_a_source_and_redirects_a_destination() {
    let mut want = golden();
    for g in HIT {
        want[g] = result(g as u32, g as u32 - BLOCK, g as u32);
    }
    let change = Change::SubstituteUse { use_index: 0, from: v(2) };
    check(fault("v_xor_b32_e32 v4", When::Before, change, four_lanes()), Ok(want), 4);
    // The sum goes to v9; v3 keeps 0x1234.
    let mut want = golden();
    for g in HIT {
        want[g] = result(g as u32, g as u32 - BLOCK, 0x1234);
    }
    let change = Change::RedirectDef { def: 0, to: v(9) };
    check(fault("v_add_u32_e32 v3", When::After, change, four_lanes()), Ok(want.clone()), 4);
    // IAL (ignore): the lanes' result is dropped, the same observable effect.
    let change = Change::DiscardDef { def: 0 };
    check(fault("v_add_u32_e32 v3", When::After, change, four_lanes()), Ok(want), 4);
}

#[test]
fn ioc_executes_the_other_operation_on_the_same_operands() {
    // v_add_u32 v3, s6, v2 becomes v_sub_u32: k - g.
    let mut want = golden();
    for g in HIT {
        want[g] = result(g as u32, g as u32 - BLOCK, K.wrapping_sub(g as u32));
    }
    let change = Change::OtherOperation { def: 0 };
    check(fault("v_add_u32_e32 v3", When::After, change, four_lanes()), Ok(want), 4);
    // s_lshl_b32 s8, s7, 7 becomes s_lshr_b32 (1 >> 7 = 0): the selected
    // wave computes and stores workgroup 0's second half; its own stays 0.
    let mut want = golden();
    want[192..256].fill(0);
    let change = Change::OtherOperation { def: 0 };
    check(fault("s_lshl_b32 s8", When::After, change, four_lanes()), Ok(want), 4);
}

#[test]
fn wv_inverts_the_selected_lanes_of_a_compare_mask() {
    let mut want = golden();
    for g in HIT {
        want[g] ^= 1 << 16;
    }
    let change = Change::InvertPredicate { def: 0 };
    check(fault("v_cmp_gt_u32_e64", When::After, change, four_lanes()), Ok(want), 4);
}

#[test]
fn iat_iaw_iac_replace_the_thread_or_block_index() {
    // The indices arrive in v0 (x in bits 9:0) and s2 (workgroup x): XORed
    // before the kernel's first read of them, for good.
    let v0 = v(0);
    let s2 = RegRange::new(RegFile::Uniform, 2, 1);
    // IAT, lanes 0-2: t ^ 1 swaps 64<->65 (same outputs) and makes 66 do
    // 67's work, so out[g of 66] is never written.
    let mut want = golden();
    want[BLOCK as usize + 66] = 0;
    let three = FaultLocation { lanes: LaneSet(0x7), ..four_lanes() };
    let change = Change::XorInput { reg: v0, mask: 1 };
    check(fault("v_and_b32_e32 v1", When::Before, change, three), Ok(want), 3);
    // IAW: every lane of wave slot 0 on SIMD 1 reads t ^ 64: the wave redoes the first wave's work.
    let mut want = golden();
    want[192..256].fill(0);
    let wave = FaultLocation { sm: 1, subpartition: Some(1), warps: Some(vec![(0, 0)]), lanes: LaneSet::ALL };
    let change = Change::XorInput { reg: v0, mask: 64 };
    check(fault("v_and_b32_e32 v1", When::Before, change.clone(), wave.clone()), Ok(want.clone()), 64);
    // IAC: the wave reads block 0 instead of 1 (a uniform value: all its lanes).
    let change = Change::XorInput { reg: s2, mask: 1 };
    check(fault("s_mov_b32 s7", When::Before, change, four_lanes()), Ok(want), 4);
    // A wave slot no wave has: nothing changes.
    let empty = FaultLocation { warps: Some(vec![(1, 3)]), ..wave };
    check(fault("v_and_b32_e32 v1", When::Before, Change::XorInput { reg: v0, mask: 64 }, empty), Ok(golden()), 0);
}

#[test]
fn ivoc_traps_the_selected_wave() {
    let fault = fault("v_add_u32_e32 v3", When::Before, Change::Trap, four_lanes());
    check(fault, Err("s_trap 2"), 4);
}

#[test]
fn a_location_where_nothing_runs_is_never_activated() {
    for sm in [50, 1 << 8 | 1] {
        let threads = FaultLocation { sm, ..four_lanes() };
        let change = Change::XorDef { def: 0, mask: 0x100 };
        check(fault("v_xor_b32_e32 v4", When::After, change, threads), Ok(golden()), 0);
    }
    // SIMD 2 of a two-wave workgroup is idle.
    let threads = FaultLocation { subpartition: Some(2), ..four_lanes() };
    check(fault("v_xor_b32_e32 v4", When::Before, Change::Trap, threads), Ok(golden()), 0);
}

fn fault(at: &'static str, when: When, change: Change, threads: FaultLocation) -> Fault {
    Fault { at, when, change, threads, source: None }
}

impl Fault {
    fn source(mut self, reg: RegRange) -> Fault {
        self.source = Some(reg);
        self
    }
}
