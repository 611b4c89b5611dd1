//! The emulated GPU: runs one kernel dispatch packet on the emulator. The
//! packet's `kernel_object` names a kernel of a loaded code object; every
//! allocation the runtime knows is mapped into the emulator at its own
//! address (so the program's pointers, the kernarg segment, the packet
//! itself and the code image are where the kernel expects them), the kernel
//! runs, and the bytes it changed are written back. One dispatch runs at a
//! time (queues take turns).

use crate::code;
use crate::ffi::generated::*;
use crate::ffi::types::hsa_kernel_dispatch_packet_t;
use crate::memory;
use std::sync::Mutex;
use xfpx_amd_emu::memory::GlobalMemory;
use xfpx_amd_emu::wave::ExecError;
use xfpx_amd_emu::{run_dispatch, Dispatch, DispatchAddresses, LoadedCode, RunError, RunLimits};

static DEVICE: Mutex<()> = Mutex::new(());

/// Where a packet sits and what it runs on.
#[derive(Debug, Clone, Copy)]
pub struct PacketPlace {
    pub packet_address: u64,
    /// The `amd_queue_t` the packet was read from.
    pub queue_address: u64,
    pub dispatch_id: u64,
}

/// Why a dispatch failed: the status the queue's error callback receives
/// and one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchError {
    pub status: hsa_status_t,
    pub message: String,
}

impl std::fmt::Display for DispatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A packet the emulated GPU cannot take.
fn bad_packet(message: String) -> DispatchError {
    DispatchError { status: HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, message }
}

/// The status AMD's runtime reports for what stopped a kernel.
fn status_of(e: &RunError) -> hsa_status_t {
    match e {
        RunError::Exec(ExecError::MemoryFault { .. }) => HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
        RunError::Exec(ExecError::Decode { .. } | ExecError::Unsupported { .. }) => {
            HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION
        }
        RunError::Launch(_) => HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
        RunError::Exec(ExecError::Trap { .. }) | RunError::InstructionLimit(_) | RunError::Deadlock => {
            HSA_STATUS_ERROR_EXCEPTION
        }
    }
}

/// The grid of a packet in workgroups, refused where the emulator cannot
/// run it.
fn shape(p: &hsa_kernel_dispatch_packet_t) -> Result<Dispatch, DispatchError> {
    let dims = (p.setup & 3).clamp(1, 3) as usize;
    let mut wg = [p.workgroup_size_x as u32, p.workgroup_size_y as u32, p.workgroup_size_z as u32];
    let mut grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    for i in dims..3 {
        wg[i] = 1;
        grid[i] = 1;
    }
    let mut groups = [1u32; 3];
    for i in 0..3 {
        if wg[i] == 0 || grid[i] == 0 {
            return Err(bad_packet(format!("dimension {i}: workgroup size {} and grid size {}", wg[i], grid[i])));
        }
        if !grid[i].is_multiple_of(wg[i]) {
            return Err(bad_packet(format!(
                "dimension {i}: the grid ({}) is not a multiple of the workgroup size ({}); the emulator runs whole workgroups only",
                grid[i], wg[i]
            )));
        }
        groups[i] = grid[i] / wg[i];
    }
    Ok(Dispatch { grid: groups, block: wg, dynamic_lds: 0 })
}

/// Runs the kernel dispatch packet `p` (read from `place`).
pub fn dispatch(p: &hsa_kernel_dispatch_packet_t, place: PacketPlace) -> Result<(), DispatchError> {
    let (object, index) = code::kernel_for_object(p.kernel_object).ok_or_else(|| {
        bad_packet(format!("kernel object {:#x} is not a kernel of a loaded executable", p.kernel_object))
    })?;
    let kernel = object.kernel(index).ok_or_else(|| bad_packet("kernel index out of range".into()))?;
    let mut d = shape(p)?;
    d.dynamic_lds = p.group_segment_size.saturating_sub(kernel.group_segment_fixed_size);
    let _device = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let snapshot = memory::snapshot();
    let mut mem = GlobalMemory::new();
    for (base, bytes) in &snapshot {
        mem.map_at(*base, bytes.clone())
            .map_err(|message| DispatchError { status: HSA_STATUS_ERROR_OUT_OF_RESOURCES, message })?;
    }
    let code = LoadedCode { object: object.program.clone(), base: object.image_base };
    let at = DispatchAddresses {
        kernarg: p.kernarg_address,
        packet: place.packet_address,
        queue: place.queue_address,
        dispatch_id: place.dispatch_id,
    };
    let run = run_dispatch(&mut mem, &code, kernel, &at, &d, &RunLimits::default());
    // a memory hazard is a defect of the code (a rewritten kernel's, in
    // xfpx's tests): said, though the emulator's values are not affected
    if let Some(first) = run.as_ref().ok().and_then(|stats| stats.hazards().into_iter().next()) {
        let n = run.as_ref().map_or(0, |s| s.hazards().len());
        eprintln!("xfpx emulated HSA runtime: kernel {}: {n} memory hazards, the first: {first}", kernel.name);
    }
    // What the kernel wrote before a fault is visible, as on a GPU.
    for (base, before) in &snapshot {
        if let Some(after) = mem.allocation(*base) {
            memory::write_back(*base, before, after);
        }
    }
    run.map(|_| ()).map_err(|e| DispatchError {
        status: status_of(&e),
        message: format!("kernel {} (code object at {:#x}): {e}", kernel.name, object.image_base),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_workgroups_and_empty_grids_are_refused() {
        let mut p = hsa_kernel_dispatch_packet_t {
            setup: 1,
            workgroup_size_x: 64,
            workgroup_size_y: 9,
            workgroup_size_z: 9,
            grid_size_x: 256,
            grid_size_y: 5,
            grid_size_z: 7,
            ..Default::default()
        };
        let d = shape(&p).expect("1-D");
        assert_eq!((d.grid, d.block), ([4, 1, 1], [64, 1, 1]));
        p.setup = 2;
        assert!(shape(&p).expect_err("5 rows of 9").message.contains("not a multiple"));
        p.grid_size_x = 0;
        assert!(shape(&p).is_err());
    }
}
