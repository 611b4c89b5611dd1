//! Running a kernel in memory that a host runtime laid out: buffers,
//! kernarg segment and dispatch packet mapped at addresses the caller chose
//! (`GlobalMemory::map_at` + `run_dispatch`) give exactly the outputs of the
//! emulator's own layout (`run_launch`), preloaded kernel arguments included.

use std::path::Path;
use xfpx_amd_emu::arguments::explicit_args;
use xfpx_amd_emu::dispatch::kernarg_segment;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::replay::load_code_object;
use xfpx_amd_emu::{run_dispatch, run_launch, Dispatch, DispatchAddresses, LoadedCode, ReplayOptions, RunLimits};

/// Where the "host" keeps things: far from the emulator's own allocations.
const HOST_BASE: u64 = 0x7f3a_0000_0000;

fn launch(name: &str) -> Launch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches").join(format!("{name}.json"));
    Launch::load(&path).expect("launch")
}

/// Runs `launch` with everything mapped at host addresses; returns the
/// output buffers in the launch's order.
fn run_at_host_addresses(launch: &Launch, target: &str) -> Vec<Vec<u8>> {
    let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    let object = load_code_object(launch, &opts).expect("code object");
    let kernel = object.kernel(&launch.kernel).expect("kernel").clone();
    let mut mem = GlobalMemory::new();
    let mut next = HOST_BASE;
    let mut place = |mem: &mut GlobalMemory, bytes: Vec<u8>| {
        let at = next;
        next += (bytes.len() as u64).div_ceil(4096) * 4096 + 4096;
        mem.map_at(at, bytes).expect("maps");
        at
    };
    let buffers: Vec<(String, u64)> =
        launch.buffers.iter().map(|b| (b.name.clone(), place(&mut mem, b.bytes.clone()))).collect();
    let address_of = |n: &str| buffers.iter().find(|(b, _)| b == n).expect("buffer").1;
    let args = explicit_args(&kernel.name, &kernel.args, &launch.args, &address_of).expect("arguments");
    let d = Dispatch { grid: launch.grid, block: launch.block, dynamic_lds: launch.dynamic_lds };
    let kernarg = place(&mut mem, kernarg_segment(&kernel, &args, &d));
    let image = place(&mut mem, object.image.clone());
    let code = LoadedCode { object: object.clone(), base: image };
    // The packet's contents are not read by the dispatcher; the kernels
    // here read their shape from hidden arguments.
    let packet = place(&mut mem, vec![0; 64]);
    let at = DispatchAddresses { kernarg, packet, queue: 0, dispatch_id: 0 };
    run_dispatch(&mut mem, &code, &kernel, &at, &d, &RunLimits::default()).expect("runs");
    launch
        .outputs
        .iter()
        .map(|o| {
            let base = buffers.iter().find(|(b, _)| b == o).expect("output").1;
            mem.allocation(base).expect("mapped").to_vec()
        })
        .collect()
}

#[test]
fn host_placed_memory_runs_like_the_emulators_own_layout() {
    for (name, target) in
        [("saxpy", "gfx942"), ("saxpy", "gfx90a"), ("preload_scale", "gfx942"), ("preload_two", "gfx90a")]
    {
        let l = launch(name);
        let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
        let object = load_code_object(&l, &opts).expect("code object");
        let (want, _) = run_launch(&l, &object, 0).expect("runs");
        let got = run_at_host_addresses(&l, target);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(w.bytes.iter().any(|&b| b != 0), "{name}: the reference output is all zero");
            assert_eq!(g, &w.bytes, "{name} on {target}: output {} differs", w.name);
        }
    }
}

#[test]
fn a_kernarg_segment_too_short_for_the_preloaded_dwords_is_a_launch_error() {
    let l = launch("preload_scale");
    let opts = ReplayOptions { target: Some("gfx942".into()), ..Default::default() };
    let object = load_code_object(&l, &opts).expect("code object");
    let kernel = object.kernel(&l.kernel).expect("kernel");
    assert!(kernel.descriptor.kernarg_preload & 0x7F > 0, "the fixture preloads kernel arguments");
    let mut mem = GlobalMemory::new();
    mem.map_at(HOST_BASE, vec![0; 4]).expect("maps");
    mem.map_at(HOST_BASE + 0x10000, object.image.clone()).expect("maps");
    let code = LoadedCode { object: object.clone(), base: HOST_BASE + 0x10000 };
    let at = DispatchAddresses { kernarg: HOST_BASE, packet: 0, queue: 0, dispatch_id: 0 };
    let d = Dispatch { grid: [1, 1, 1], block: [64, 1, 1], dynamic_lds: 0 };
    let e = run_dispatch(&mut mem, &code, kernel, &at, &d, &RunLimits::default()).expect_err("refused");
    assert!(e.to_string().contains("preloads"), "{e}");
}
