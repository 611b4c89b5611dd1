//! Raw definitions of the 64-byte AMDHSA kernel descriptor: byte offsets of
//! its members and the bit fields inside `compute_pgm_rsrc1/2/3`,
//! `kernel_code_properties` and `kernarg_preload`, named as LLVM's
//! AMDGPUUsage names them. Positions only; interpretation lives in the parent
//! module.

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;
/// Required alignment of a kernel descriptor.
pub const KERNEL_DESCRIPTOR_ALIGN: u64 = 64;

/// Byte offsets of the descriptor's members.
pub mod offset {
    pub const GROUP_SEGMENT_FIXED_SIZE: usize = 0;
    pub const PRIVATE_SEGMENT_FIXED_SIZE: usize = 4;
    pub const KERNARG_SIZE: usize = 8;
    pub const RESERVED0: usize = 12;
    pub const KERNEL_CODE_ENTRY_BYTE_OFFSET: usize = 16;
    pub const RESERVED1: usize = 24;
    pub const COMPUTE_PGM_RSRC3: usize = 44;
    pub const COMPUTE_PGM_RSRC1: usize = 48;
    pub const COMPUTE_PGM_RSRC2: usize = 52;
    pub const KERNEL_CODE_PROPERTIES: usize = 56;
    pub const KERNARG_PRELOAD: usize = 58;
    pub const RESERVED3: usize = 60;
}

/// A bit field `[lsb + width - 1 : lsb]` of a descriptor word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitField {
    pub name: &'static str,
    pub lsb: u8,
    pub width: u8,
}

impl BitField {
    const fn new(name: &'static str, lsb: u8, width: u8) -> Self {
        BitField { name, lsb, width }
    }

    pub const fn mask(self) -> u32 {
        (((1u64 << self.width) - 1) as u32) << self.lsb
    }

    pub const fn get(self, word: u32) -> u32 {
        (word & self.mask()) >> self.lsb
    }

    /// `word` with this field replaced by `value`; `None` if `value` does not fit.
    pub const fn set(self, word: u32, value: u32) -> Option<u32> {
        if (value as u64) >= (1u64 << self.width) {
            return None;
        }
        Some((word & !self.mask()) | (value << self.lsb))
    }
}

/// `COMPUTE_PGM_RSRC1` (gfx9).
pub mod rsrc1 {
    use super::BitField;
    pub const GRANULATED_WORKITEM_VGPR_COUNT: BitField = BitField::new("GRANULATED_WORKITEM_VGPR_COUNT", 0, 6);
    pub const GRANULATED_WAVEFRONT_SGPR_COUNT: BitField = BitField::new("GRANULATED_WAVEFRONT_SGPR_COUNT", 6, 4);
    pub const PRIORITY: BitField = BitField::new("PRIORITY", 10, 2);
    pub const FLOAT_ROUND_MODE_32: BitField = BitField::new("FLOAT_ROUND_MODE_32", 12, 2);
    pub const FLOAT_ROUND_MODE_16_64: BitField = BitField::new("FLOAT_ROUND_MODE_16_64", 14, 2);
    pub const FLOAT_DENORM_MODE_32: BitField = BitField::new("FLOAT_DENORM_MODE_32", 16, 2);
    pub const FLOAT_DENORM_MODE_16_64: BitField = BitField::new("FLOAT_DENORM_MODE_16_64", 18, 2);
    pub const PRIV: BitField = BitField::new("PRIV", 20, 1);
    pub const ENABLE_DX10_CLAMP: BitField = BitField::new("ENABLE_DX10_CLAMP", 21, 1);
    pub const DEBUG_MODE: BitField = BitField::new("DEBUG_MODE", 22, 1);
    pub const ENABLE_IEEE_MODE: BitField = BitField::new("ENABLE_IEEE_MODE", 23, 1);
    pub const BULKY: BitField = BitField::new("BULKY", 24, 1);
    pub const CDBG_USER: BitField = BitField::new("CDBG_USER", 25, 1);
    pub const FP16_OVFL: BitField = BitField::new("FP16_OVFL", 26, 1);
    /// Bits gfx9 reserves (must be zero).
    pub const RESERVED: u32 = 0xf800_0000;
}

/// `COMPUTE_PGM_RSRC2` (gfx9).
pub mod rsrc2 {
    use super::BitField;
    pub const ENABLE_PRIVATE_SEGMENT: BitField = BitField::new("ENABLE_PRIVATE_SEGMENT", 0, 1);
    pub const USER_SGPR_COUNT: BitField = BitField::new("USER_SGPR_COUNT", 1, 5);
    pub const ENABLE_TRAP_HANDLER: BitField = BitField::new("ENABLE_TRAP_HANDLER", 6, 1);
    pub const ENABLE_SGPR_WORKGROUP_ID_X: BitField = BitField::new("ENABLE_SGPR_WORKGROUP_ID_X", 7, 1);
    pub const ENABLE_SGPR_WORKGROUP_ID_Y: BitField = BitField::new("ENABLE_SGPR_WORKGROUP_ID_Y", 8, 1);
    pub const ENABLE_SGPR_WORKGROUP_ID_Z: BitField = BitField::new("ENABLE_SGPR_WORKGROUP_ID_Z", 9, 1);
    pub const ENABLE_SGPR_WORKGROUP_INFO: BitField = BitField::new("ENABLE_SGPR_WORKGROUP_INFO", 10, 1);
    pub const ENABLE_VGPR_WORKITEM_ID: BitField = BitField::new("ENABLE_VGPR_WORKITEM_ID", 11, 2);
    pub const ENABLE_EXCEPTION_ADDRESS_WATCH: BitField = BitField::new("ENABLE_EXCEPTION_ADDRESS_WATCH", 13, 1);
    pub const ENABLE_EXCEPTION_MEMORY: BitField = BitField::new("ENABLE_EXCEPTION_MEMORY", 14, 1);
    pub const GRANULATED_LDS_SIZE: BitField = BitField::new("GRANULATED_LDS_SIZE", 15, 9);
    pub const ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION: BitField =
        BitField::new("ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION", 24, 1);
    pub const ENABLE_EXCEPTION_FP_DENORMAL_SOURCE: BitField =
        BitField::new("ENABLE_EXCEPTION_FP_DENORMAL_SOURCE", 25, 1);
    pub const ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO: BitField =
        BitField::new("ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO", 26, 1);
    pub const ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW: BitField =
        BitField::new("ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW", 27, 1);
    pub const ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW: BitField =
        BitField::new("ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW", 28, 1);
    pub const ENABLE_EXCEPTION_IEEE_754_FP_INEXACT: BitField =
        BitField::new("ENABLE_EXCEPTION_IEEE_754_FP_INEXACT", 29, 1);
    pub const ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO: BitField =
        BitField::new("ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO", 30, 1);
    pub const RESERVED: u32 = 0x8000_0000;
}

/// `COMPUTE_PGM_RSRC3` on gfx90a and later CDNA targets (gfx908 reserves the word).
pub mod rsrc3_gfx90a {
    use super::BitField;
    pub const ACCUM_OFFSET: BitField = BitField::new("ACCUM_OFFSET", 0, 6);
    pub const TG_SPLIT: BitField = BitField::new("TG_SPLIT", 16, 1);
    pub const RESERVED: u32 = 0xfffe_ffc0;
}

/// `KERNEL_CODE_PROPERTIES` (16 bits).
pub mod kernel_code_properties {
    use super::BitField;
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: BitField = BitField::new("ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER", 0, 1);
    pub const ENABLE_SGPR_DISPATCH_PTR: BitField = BitField::new("ENABLE_SGPR_DISPATCH_PTR", 1, 1);
    pub const ENABLE_SGPR_QUEUE_PTR: BitField = BitField::new("ENABLE_SGPR_QUEUE_PTR", 2, 1);
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: BitField = BitField::new("ENABLE_SGPR_KERNARG_SEGMENT_PTR", 3, 1);
    pub const ENABLE_SGPR_DISPATCH_ID: BitField = BitField::new("ENABLE_SGPR_DISPATCH_ID", 4, 1);
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: BitField = BitField::new("ENABLE_SGPR_FLAT_SCRATCH_INIT", 5, 1);
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: BitField = BitField::new("ENABLE_SGPR_PRIVATE_SEGMENT_SIZE", 6, 1);
    pub const ENABLE_WAVEFRONT_SIZE32: BitField = BitField::new("ENABLE_WAVEFRONT_SIZE32", 10, 1);
    pub const USES_DYNAMIC_STACK: BitField = BitField::new("USES_DYNAMIC_STACK", 11, 1);
    pub const RESERVED: u32 = 0xf380;
}

/// `KERNARG_PRELOAD` (16 bits): SGPR preload of kernel arguments.
pub mod kernarg_preload {
    use super::BitField;
    /// Number of dwords of kernel arguments preloaded into user SGPRs.
    pub const KERNARG_PRELOAD_SPEC_LENGTH: BitField = BitField::new("KERNARG_PRELOAD_SPEC_LENGTH", 0, 7);
    /// Dword offset in the kernarg segment of the first preloaded argument.
    pub const KERNARG_PRELOAD_SPEC_OFFSET: BitField = BitField::new("KERNARG_PRELOAD_SPEC_OFFSET", 7, 9);
}

/// Bytes at the start of a kernel with preloaded arguments that firmware
/// without preload support executes (`s_trap 2`, then `s_nop`s); preloading
/// firmware starts at entry + this. Not code to displace. clang-19 emits it
/// for gfx90a and gfx942; clang-22 does not for gfx950.
pub const KERNARG_PRELOAD_HEADER_BYTES: u64 = 256;
/// First instruction of the preload header: `s_trap 2`.
pub const KERNARG_PRELOAD_HEADER_TRAP: u32 = 0xBF92_0002;
/// The rest of the preload header: `s_nop 0`.
pub const KERNARG_PRELOAD_HEADER_NOP: u32 = 0xBF80_0000;
