//! SYNTHETIC captures: capture folders in the format `xfpx run --capture`
//! writes, made offline from emulator launch files, never on a GPU. They
//! stand in for real captures to test `xfpx replay DIR` until GPU captures
//! are committed, and say so in their manifest (`source.vendor`
//! `synthetic`, and a note).
//!
//! Each launch's buffers become "device allocations" at made-up addresses,
//! each with 256 bytes of padding in front, so that every pointer
//! parameter points 256 bytes into its allocation (relocation must keep
//! offsets); parameters are laid out as the kernel's metadata gives them
//! (the C ABI both vendors share); the after-images are the launch run
//! once on the emulator.

use std::collections::BTreeMap;
use std::path::Path;
use xfpx_amd_emu::arguments::explicit_args;
use xfpx_amd_emu::launch::{ArgSpec, Launch};
use xfpx_amd_emu::{Program, ReplayOptions};
use xfpx_common::capture::{
    address_text, launch_dir_name, Buffer, Captured, CapturedLaunch, LaunchFile, OutputFile, OutputManifest, ParamSlot,
    Params, ProcessPart, Source, LAUNCH_FILE, LAUNCH_FORMAT, PARAMS_FILE,
};

/// Bytes in front of each buffer in its made-up allocation.
pub const PADDING: u64 = 256;
/// Where the made-up allocations start, 1 MiB apart.
const BASE: u64 = 0x7f3a_0000_0000;

/// Writes a synthetic capture of `launches` (emulator launch files, run
/// with the code object they name for `target`) into the empty folder
/// `dir`, and assembles its manifest.
pub fn write(dir: &Path, launches: &[&Path], target: &str) {
    let names: Vec<String> = launches.iter().map(|p| p.display().to_string()).collect();
    let source = Source {
        vendor: "synthetic".into(),
        device: format!("xfpx CDNA emulator ({target})"),
        target: Some(target.into()),
        note: Some(format!(
            "SYNTHETIC: made offline from the emulator launch files {}, not captured on a GPU",
            names.join(", ")
        )),
    };
    let mut part = ProcessPart { pid: 1, source: source.clone(), ..ProcessPart::default() };
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for (i, path) in launches.iter().enumerate() {
        let launch = Launch::load(path).expect("launch file");
        let index = seen.entry(launch.kernel.clone()).or_insert(0);
        let entry = write_launch(dir, i as u64 + 1, *index, &launch, &source, target);
        *index += 1;
        part.launches.push(entry);
    }
    part.write(dir).expect("write the part");
    let command = vec!["synthetic".to_string()];
    xfpx_common::capture::assemble(dir, command).expect("assemble").expect("one part");
}

/// Writes launch `serial` of the capture, the `index`-th of its kernel.
fn write_launch(dir: &Path, serial: u64, index: u64, launch: &Launch, source: &Source, target: &str) -> CapturedLaunch {
    let opts = ReplayOptions { target: Some(target.into()), ..ReplayOptions::default() };
    let program: Program = xfpx_amd_emu::replay::load_code_object(launch, &opts).expect("code object");
    let kernel = program.kernel(&launch.kernel).expect("kernel in its code object");
    let explicit: Vec<_> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
    let folder = launch_dir_name(serial, &launch.kernel);
    let out = dir.join(&folder);
    std::fs::create_dir_all(&out).expect("launch folder");

    // every buffer in its own allocation, PADDING bytes in
    let base = |i: usize| BASE + (i as u64) * (1 << 20);
    let buffer_index = |name: &str| launch.buffers.iter().position(|b| b.name == name).expect("a buffer of the launch");
    let address_of = |name: &str| base(buffer_index(name)) + PADDING;
    let params = explicit_args(&kernel.name, &kernel.args, &launch.args, &address_of).expect("arguments");
    let layout: Vec<_> = explicit.iter().map(|meta| ParamSlot { offset: meta.offset, size: meta.size }).collect();
    std::fs::write(out.join(PARAMS_FILE), &params).expect("params");

    // after-images: the launch run once, every buffer an output
    let mut all = launch.clone();
    all.outputs = launch.buffers.iter().map(|b| b.name.clone()).collect();
    let (after, _) = xfpx_amd_emu::run_launch(&all, &program, 0).expect("the launch runs");
    let mut buffers = BTreeMap::new();
    let mut outputs = Vec::new();
    let mut bytes = 0;
    for (i, b) in launch.buffers.iter().enumerate() {
        let name =
            format!("arg{}", launch.args.iter().position(|a| *a == ArgSpec::Buffer(b.name.clone())).unwrap_or(i));
        let padded = |data: &[u8]| [vec![0u8; PADDING as usize], data.to_vec()].concat();
        let result = after.iter().find(|o| o.name == b.name).expect("every buffer is an output");
        std::fs::write(out.join(format!("{name}.before.bin")), padded(&b.bytes)).expect("before");
        std::fs::write(out.join(format!("{name}.after.bin")), padded(&result.bytes)).expect("after");
        let size = xfpx_common::capture::elem_size(b.elem.name()).unwrap_or(1);
        buffers.insert(
            name.clone(),
            Buffer {
                elem: b.elem.name().to_string(),
                count: (PADDING + b.bytes.len() as u64) / size,
                address: address_text(base(i)),
                init: BTreeMap::from([("file".to_string(), format!("{name}.before.bin"))]),
                after: Some(format!("{name}.after.bin")),
            },
        );
        outputs.push(OutputFile {
            name: name.clone(),
            elem: Some(b.elem.name().into()),
            file: format!("{name}.after.bin"),
        });
        bytes += 2 * (PADDING + b.bytes.len() as u64);
    }
    let file = LaunchFile {
        format: LAUNCH_FORMAT,
        captured: Captured { source: source.clone(), demangled: None, launch: index },
        kernel: launch.kernel.clone(),
        grid: launch.grid,
        block: launch.block,
        dynamic_lds: launch.dynamic_lds,
        params: Params { file: PARAMS_FILE.into(), size: params.len() as u64, layout },
        outputs: buffers.keys().cloned().collect(),
        buffers,
    };
    let text = serde_json::to_string_pretty(&file).expect("json") + "\n";
    std::fs::write(out.join(LAUNCH_FILE), text).expect("launch file");
    OutputManifest { kernel: launch.kernel.clone(), outputs }.write(&out).expect("outputs.json");
    CapturedLaunch {
        dir: folder,
        kernel: launch.kernel.clone(),
        demangled: None,
        launch: index,
        pid: 1,
        bytes,
        complete: true,
        problem: None,
    }
}
