//! The few HSA types and constants the tool uses, as `hsa.h` defines them
//! (checked against the headers by `tests/table_layout.rs`): status codes,
//! info attributes, and the AQL kernel dispatch packet.

/// `hsa_status_t` values.
pub const STATUS_SUCCESS: u32 = 0;
pub const STATUS_INFO_BREAK: u32 = 1;
pub const STATUS_ERROR: u32 = 0x1000;

/// `hsa_device_type_t`.
pub const DEVICE_TYPE_CPU: u32 = 0;
pub const DEVICE_TYPE_GPU: u32 = 1;

/// `hsa_agent_info_t`.
pub const AGENT_INFO_NAME: u32 = 0;
pub const AGENT_INFO_VENDOR_NAME: u32 = 1;
pub const AGENT_INFO_DEVICE: u32 = 17;
/// `HSA_AMD_AGENT_INFO_PRODUCT_NAME` (`hsa_ext_amd.h`): 64 characters.
pub const AMD_AGENT_INFO_PRODUCT_NAME: u32 = 0xA009;

/// `hsa_region_info_t`, `hsa_region_segment_t`, `hsa_region_global_flag_t`.
pub const REGION_INFO_SEGMENT: u32 = 0;
pub const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
pub const REGION_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const REGION_SEGMENT_GLOBAL: u32 = 0;
pub const REGION_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;

/// `hsa_executable_info_t`.
pub const EXECUTABLE_INFO_PROFILE: u32 = 1;
pub const EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE: u32 = 3;

/// `hsa_executable_symbol_info_t`, `hsa_symbol_kind_t`.
pub const SYMBOL_INFO_TYPE: u32 = 0;
pub const SYMBOL_INFO_NAME_LENGTH: u32 = 1;
pub const SYMBOL_INFO_NAME: u32 = 2;
pub const SYMBOL_INFO_AGENT: u32 = 20;
pub const SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
pub const SYMBOL_KIND_KERNEL: u32 = 1;

/// `hsa_signal_condition_t`, `hsa_wait_state_t`.
pub const SIGNAL_CONDITION_LT: u32 = 2;
pub const WAIT_STATE_BLOCKED: u32 = 0;

/// `hsa_packet_type_t` (bits 0-7 of a packet's header).
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
/// `HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE`: the first of the header's two
/// bits of the release fence's scope.
pub const PACKET_HEADER_SCRELEASE_FENCE_SCOPE: u16 = 11;
/// `HSA_FENCE_SCOPE_SYSTEM`.
pub const FENCE_SCOPE_SYSTEM: u16 = 2;

/// Bytes of one AQL packet.
pub const PACKET_BYTES: usize = 64;
/// Offset of `kernel_object` in a kernel dispatch packet.
pub const DISPATCH_KERNEL_OBJECT: usize = 32;
/// Offset of `completion_signal` in a kernel dispatch packet.
pub const DISPATCH_COMPLETION_SIGNAL: usize = 56;

/// Offsets of `start_ts` and `end_ts` in `amd_signal_t` (`amd_hsa_signal.h`):
/// where the packet processor writes when the dispatch that completes the
/// signal ran (a signal's handle is the address of its `amd_signal_t`).
pub const SIGNAL_START_TS: usize = 32;
pub const SIGNAL_END_TS: usize = 40;

/// The packet type of an AQL packet's header.
pub fn packet_type(header: u16) -> u16 {
    header & 0xff
}

/// A kernel dispatch packet's fields the tool reads and replaces, over
/// its 64 bytes (little-endian, as the packet lies in memory).
/// Aligned as the runtime's packets are, so that a slice of them can be
/// handed to the runtime as packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Packet(pub [u8; PACKET_BYTES]);

impl Packet {
    fn u64_at(&self, at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        u64::from_le_bytes(b)
    }

    pub fn header(&self) -> u16 {
        u16::from_le_bytes([self.0[0], self.0[1]])
    }

    pub fn is_kernel_dispatch(&self) -> bool {
        packet_type(self.header()) == PACKET_TYPE_KERNEL_DISPATCH
    }

    /// Makes the packet's completion release its memory at system scope,
    /// so that the host sees what the kernel wrote to host memory once the
    /// completion signal changes.
    pub fn release_to_system(&mut self) {
        let shift = PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
        let header = (self.header() & !(3 << shift)) | (FENCE_SCOPE_SYSTEM << shift);
        self.0[..2].copy_from_slice(&header.to_le_bytes());
    }

    pub fn kernel_object(&self) -> u64 {
        self.u64_at(DISPATCH_KERNEL_OBJECT)
    }

    pub fn set_kernel_object(&mut self, object: u64) {
        self.0[DISPATCH_KERNEL_OBJECT..DISPATCH_KERNEL_OBJECT + 8].copy_from_slice(&object.to_le_bytes());
    }

    /// The completion signal's handle (0: none).
    pub fn completion_signal(&self) -> u64 {
        self.u64_at(DISPATCH_COMPLETION_SIGNAL)
    }

    pub fn set_completion_signal(&mut self, signal: u64) {
        self.0[DISPATCH_COMPLETION_SIGNAL..DISPATCH_COMPLETION_SIGNAL + 8].copy_from_slice(&signal.to_le_bytes());
    }
}

/// A kernel's name from its symbol's: code objects of version 3 and later
/// name the kernel descriptor `NAME.kd`.
pub fn kernel_name(symbol: &str) -> &str {
    symbol.strip_suffix(".kd").unwrap_or(symbol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_fields_round_trip() {
        let mut p = Packet([0; PACKET_BYTES]);
        p.0[0] = 2;
        p.0[1] = 0x13;
        assert!(p.is_kernel_dispatch());
        p.set_kernel_object(0x7f00_1234_5678);
        p.set_completion_signal(42);
        assert_eq!((p.kernel_object(), p.completion_signal()), (0x7f00_1234_5678, 42));
        assert_eq!(p.0[32], 0x78);
        // type 2, barrier, acquire agent (1), release agent (1): release becomes system (2)
        p.0[..2].copy_from_slice(&(2u16 | 1 << 8 | 1 << 9 | 1 << 11).to_le_bytes());
        p.release_to_system();
        assert_eq!(p.header(), 2 | 1 << 8 | 1 << 9 | 2 << 11);
        p.0[0] = 3;
        assert!(!p.is_kernel_dispatch());
        assert_eq!(kernel_name("_Z3addPf.kd"), "_Z3addPf");
        assert_eq!(kernel_name("add"), "add");
    }
}
