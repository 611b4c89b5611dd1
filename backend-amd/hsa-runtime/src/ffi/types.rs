//! The C structs the runtime reads and writes field by field, laid out as
//! ROCm 5.2's headers declare them (x86-64, `HSA_LARGE_MODEL`): the queue
//! (`hsa_queue_t` inside AMD's `amd_queue_t`), the AQL packets, AMD's
//! signal (`amd_signal_t`), and the small structs of the AMD extension and
//! loader the runtime fills. `tests/layout.rs` checks every size and offset
//! against the headers.

use super::generated::{
    hsa_agent_t, hsa_amd_pointer_type_t, hsa_executable_t, hsa_queue_type32_t, hsa_signal_t,
    hsa_ven_amd_loader_code_object_storage_type_t,
};
use std::ffi::c_void;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hsa_queue_t {
    pub type_: hsa_queue_type32_t,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: hsa_signal_t,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct hsa_dim3_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hsa_kernel_dispatch_packet_t {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hsa_barrier_and_packet_t {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [hsa_signal_t; 5],
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

/// Same layout as the AND packet.
pub type hsa_barrier_or_packet_t = hsa_barrier_and_packet_t;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hsa_agent_dispatch_packet_t {
    pub header: u16,
    pub type_: u16,
    pub reserved0: u32,
    pub return_address: u64,
    pub arg: [u64; 4],
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

/// AMD's queue: the `hsa_queue_t` the program sees, then the dispatch ids
/// and the rest of the firmware's view.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
pub struct amd_queue_t {
    pub hsa_queue: hsa_queue_t,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: hsa_signal_t,
    pub reserved4: [u32; 14],
}

/// AMD's signal; `hsa_signal_t::handle` is its address.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
pub struct amd_signal_t {
    pub kind: i64,
    pub value: i64,
    pub event_mailbox_ptr: u64,
    pub event_id: u32,
    pub reserved1: u32,
    pub start_ts: u64,
    pub end_ts: u64,
    pub queue_ptr: u64,
    pub reserved3: [u32; 2],
}

/// `amd_signal_kind_t`.
pub const AMD_SIGNAL_KIND_USER: i64 = 1;
pub const AMD_SIGNAL_KIND_DOORBELL: i64 = -1;
/// `AMD_QUEUE_PROPERTIES_IS_PTR64`.
pub const AMD_QUEUE_PROPERTIES_IS_PTR64: u32 = 1 << 1;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hsa_amd_pointer_info_t {
    pub size: u32,
    pub type_: hsa_amd_pointer_type_t,
    pub agentBaseAddress: *mut c_void,
    pub hostBaseAddress: *mut c_void,
    pub sizeInBytes: usize,
    pub userData: *mut c_void,
    pub agentOwner: hsa_agent_t,
    pub global_flags: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hsa_amd_profiling_dispatch_time_t {
    pub start: u64,
    pub end: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hsa_amd_profiling_async_copy_time_t {
    pub start: u64,
    pub end: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hsa_ven_amd_loader_segment_descriptor_t {
    pub agent: hsa_agent_t,
    pub executable: hsa_executable_t,
    pub code_object_storage_type: hsa_ven_amd_loader_code_object_storage_type_t,
    pub code_object_storage_base: *const c_void,
    pub code_object_storage_size: usize,
    pub code_object_storage_offset: usize,
    pub segment_base: *const c_void,
    pub segment_size: usize,
}

/// Little-endian fields of a 64-byte packet, at the struct's offsets.
struct PacketBytes<'a>(&'a [u8; 64]);

impl PacketBytes<'_> {
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.0[at], self.0[at + 1]])
    }
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }
    fn u64(&self, at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        u64::from_le_bytes(b)
    }
    fn signal(&self, at: usize) -> hsa_signal_t {
        hsa_signal_t { handle: self.u64(at) }
    }
}

impl hsa_kernel_dispatch_packet_t {
    pub fn from_bytes(bytes: &[u8; 64]) -> hsa_kernel_dispatch_packet_t {
        use std::mem::offset_of;
        type P = hsa_kernel_dispatch_packet_t;
        let b = PacketBytes(bytes);
        P {
            header: b.u16(offset_of!(P, header)),
            setup: b.u16(offset_of!(P, setup)),
            workgroup_size_x: b.u16(offset_of!(P, workgroup_size_x)),
            workgroup_size_y: b.u16(offset_of!(P, workgroup_size_y)),
            workgroup_size_z: b.u16(offset_of!(P, workgroup_size_z)),
            reserved0: b.u16(offset_of!(P, reserved0)),
            grid_size_x: b.u32(offset_of!(P, grid_size_x)),
            grid_size_y: b.u32(offset_of!(P, grid_size_y)),
            grid_size_z: b.u32(offset_of!(P, grid_size_z)),
            private_segment_size: b.u32(offset_of!(P, private_segment_size)),
            group_segment_size: b.u32(offset_of!(P, group_segment_size)),
            kernel_object: b.u64(offset_of!(P, kernel_object)),
            kernarg_address: b.u64(offset_of!(P, kernarg_address)),
            reserved2: b.u64(offset_of!(P, reserved2)),
            completion_signal: b.signal(offset_of!(P, completion_signal)),
        }
    }
}

impl hsa_barrier_and_packet_t {
    pub fn from_bytes(bytes: &[u8; 64]) -> hsa_barrier_and_packet_t {
        use std::mem::offset_of;
        type P = hsa_barrier_and_packet_t;
        let b = PacketBytes(bytes);
        let deps = offset_of!(P, dep_signal);
        P {
            header: b.u16(offset_of!(P, header)),
            reserved0: b.u16(offset_of!(P, reserved0)),
            reserved1: b.u32(offset_of!(P, reserved1)),
            dep_signal: std::array::from_fn(|i| b.signal(deps + 8 * i)),
            reserved2: b.u64(offset_of!(P, reserved2)),
            completion_signal: b.signal(offset_of!(P, completion_signal)),
        }
    }
}
