//! The AMDHSA kernel descriptor: parsing the 64 bytes, encoding them back,
//! and decoding the packed fields per processor (register granules, user and
//! system SGPR layout, workitem-id packing, floating-point modes, kernarg
//! preload). Also renders the `.amdhsa_*` directive block the way
//! llvm-objdump prints it, which the tests compare against.

pub mod raw;

use std::fmt::Write as _;

use serde::Serialize;

use crate::bytes;
use crate::error::{Error, Result};
use crate::target::{self, Target};
use raw::{kernarg_preload as kp, kernel_code_properties as kcp, offset, rsrc1, rsrc2, rsrc3_gfx90a};

/// The 64-byte kernel descriptor, member by member, exactly as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub reserved0: [u8; 4],
    /// Byte offset of the kernel's first instruction from the descriptor's address.
    pub kernel_code_entry_byte_offset: i64,
    pub reserved1: [u8; 20],
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
    pub reserved3: [u8; 4],
}

fn le_u32(b: &[u8; 64], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le_u16(b: &[u8; 64], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn take<const N: usize>(b: &[u8; 64], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

impl KernelDescriptor {
    /// Reads a descriptor from the first 64 bytes of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let s = bytes::slice(bytes, 0, raw::KERNEL_DESCRIPTOR_SIZE as u64, "kernel descriptor")?;
        let mut b = [0u8; 64];
        b.copy_from_slice(s);
        Ok(Self::from_array(&b))
    }

    pub fn from_array(b: &[u8; 64]) -> Self {
        KernelDescriptor {
            group_segment_fixed_size: le_u32(b, offset::GROUP_SEGMENT_FIXED_SIZE),
            private_segment_fixed_size: le_u32(b, offset::PRIVATE_SEGMENT_FIXED_SIZE),
            kernarg_size: le_u32(b, offset::KERNARG_SIZE),
            reserved0: take(b, offset::RESERVED0),
            kernel_code_entry_byte_offset: i64::from_le_bytes(take(b, offset::KERNEL_CODE_ENTRY_BYTE_OFFSET)),
            reserved1: take(b, offset::RESERVED1),
            compute_pgm_rsrc3: le_u32(b, offset::COMPUTE_PGM_RSRC3),
            compute_pgm_rsrc1: le_u32(b, offset::COMPUTE_PGM_RSRC1),
            compute_pgm_rsrc2: le_u32(b, offset::COMPUTE_PGM_RSRC2),
            kernel_code_properties: le_u16(b, offset::KERNEL_CODE_PROPERTIES),
            kernarg_preload: le_u16(b, offset::KERNARG_PRELOAD),
            reserved3: take(b, offset::RESERVED3),
        }
    }

    /// The 64 bytes of this descriptor (inverse of [`KernelDescriptor::parse`]).
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(offset::GROUP_SEGMENT_FIXED_SIZE, &self.group_segment_fixed_size.to_le_bytes());
        put(offset::PRIVATE_SEGMENT_FIXED_SIZE, &self.private_segment_fixed_size.to_le_bytes());
        put(offset::KERNARG_SIZE, &self.kernarg_size.to_le_bytes());
        put(offset::RESERVED0, &self.reserved0);
        put(offset::KERNEL_CODE_ENTRY_BYTE_OFFSET, &self.kernel_code_entry_byte_offset.to_le_bytes());
        put(offset::RESERVED1, &self.reserved1);
        put(offset::COMPUTE_PGM_RSRC3, &self.compute_pgm_rsrc3.to_le_bytes());
        put(offset::COMPUTE_PGM_RSRC1, &self.compute_pgm_rsrc1.to_le_bytes());
        put(offset::COMPUTE_PGM_RSRC2, &self.compute_pgm_rsrc2.to_le_bytes());
        put(offset::KERNEL_CODE_PROPERTIES, &self.kernel_code_properties.to_le_bytes());
        put(offset::KERNARG_PRELOAD, &self.kernarg_preload.to_le_bytes());
        put(offset::RESERVED3, &self.reserved3);
        b
    }

    /// `USER_SGPR_COUNT` of `compute_pgm_rsrc2`: the user SGPRs the wave starts with.
    pub fn user_sgpr_count(&self) -> u32 {
        rsrc2::USER_SGPR_COUNT.get(self.compute_pgm_rsrc2)
    }

    /// Entry address of the kernel whose descriptor sits at `descriptor_address`.
    pub fn entry_address(&self, descriptor_address: u64) -> Option<u64> {
        descriptor_address.checked_add_signed(self.kernel_code_entry_byte_offset)
    }

    /// Decodes the packed fields for `processor`; errors on reserved bits set.
    pub fn decode(&self, processor: Target) -> Result<DecodedDescriptor> {
        decode(self, processor)
    }

    fn word_mut(&mut self, word: DescriptorWord) -> WordRef<'_> {
        match word {
            DescriptorWord::ComputePgmRsrc1 => WordRef::U32(&mut self.compute_pgm_rsrc1),
            DescriptorWord::ComputePgmRsrc2 => WordRef::U32(&mut self.compute_pgm_rsrc2),
            DescriptorWord::ComputePgmRsrc3 => WordRef::U32(&mut self.compute_pgm_rsrc3),
            DescriptorWord::KernelCodeProperties => WordRef::U16(&mut self.kernel_code_properties),
            DescriptorWord::KernargPreload => WordRef::U16(&mut self.kernarg_preload),
        }
    }

    /// The value of bit field `field` of `word`.
    pub fn field(&self, word: DescriptorWord, field: raw::BitField) -> u32 {
        let w = match word {
            DescriptorWord::ComputePgmRsrc1 => self.compute_pgm_rsrc1,
            DescriptorWord::ComputePgmRsrc2 => self.compute_pgm_rsrc2,
            DescriptorWord::ComputePgmRsrc3 => self.compute_pgm_rsrc3,
            DescriptorWord::KernelCodeProperties => u32::from(self.kernel_code_properties),
            DescriptorWord::KernargPreload => u32::from(self.kernarg_preload),
        };
        field.get(w)
    }

    /// Sets bit field `field` of `word` to `value` (an error if it does not fit).
    pub fn set_field(&mut self, word: DescriptorWord, field: raw::BitField, value: u32) -> Result<()> {
        let too_wide = || Error::malformed("kernel descriptor field", format!("{} cannot hold {value}", field.name));
        match self.word_mut(word) {
            WordRef::U32(w) => *w = field.set(*w, value).ok_or_else(too_wide)?,
            WordRef::U16(w) => {
                let v = field.set(u32::from(*w), value).ok_or_else(too_wide)?;
                *w = u16::try_from(v).map_err(|_| too_wide())?;
            }
        }
        Ok(())
    }

    /// Encodes a register allocation into the granulated counts (and, on
    /// gfx90a and later, `ACCUM_OFFSET`) the way LLVM does: VGPR granule
    /// `ceil(total / granule) - 1` where the unified total is the
    /// architected VGPRs rounded up to 4 plus the AGPRs; SGPR granule
    /// `ceil(sgprs / 8) - 1` with `sgprs` already including VCC, flat scratch
    /// and XNACK mask extras.
    pub fn set_register_allocation(&mut self, processor: Target, alloc: RegisterRequest) -> Result<()> {
        // Work on a copy so that an error leaves `self` unchanged.
        let mut kd = *self;
        kd.encode_register_allocation(processor, alloc)?;
        *self = kd;
        Ok(())
    }

    fn encode_register_allocation(&mut self, processor: Target, alloc: RegisterRequest) -> Result<()> {
        let info = target::info(processor);
        let granule_of = |n: u32, g: u32| n.max(1).div_ceil(g) - 1;
        let total = if info.unified_vgpr_file {
            let arch = alloc.vgprs.max(1).div_ceil(4).saturating_mul(4);
            self.set_field(DescriptorWord::ComputePgmRsrc3, rsrc3_gfx90a::ACCUM_OFFSET, arch / 4 - 1)?;
            arch.saturating_add(alloc.agprs)
        } else {
            // gfx908: VGPRs and AGPRs are separate files allocated alike.
            alloc.vgprs.max(alloc.agprs)
        };
        self.set_field(
            DescriptorWord::ComputePgmRsrc1,
            rsrc1::GRANULATED_WORKITEM_VGPR_COUNT,
            granule_of(total, info.vgpr_encoding_granule),
        )?;
        self.set_field(
            DescriptorWord::ComputePgmRsrc1,
            rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT,
            granule_of(alloc.sgprs, info.sgpr_encoding_granule),
        )
    }
}

/// Registers a kernel needs, as input to [`KernelDescriptor::set_register_allocation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterRequest {
    /// Architected VGPRs (next free VGPR).
    pub vgprs: u32,
    /// AGPRs (gfx908: a separate file of the same allocation, so the larger of
    /// the two counts sets the granule).
    pub agprs: u32,
    /// SGPRs including the reserved extras (VCC, flat scratch, XNACK mask).
    pub sgprs: u32,
}

/// The packed words of the descriptor, for [`KernelDescriptor::field`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescriptorWord {
    ComputePgmRsrc1,
    ComputePgmRsrc2,
    ComputePgmRsrc3,
    KernelCodeProperties,
    KernargPreload,
}

enum WordRef<'a> {
    U32(&'a mut u32),
    U16(&'a mut u16),
}

/// Floating-point rounding mode of a `FLOAT_ROUND_MODE_*` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RoundMode {
    NearEven,
    PlusInfinity,
    MinusInfinity,
    Zero,
}

impl RoundMode {
    const TABLE: [RoundMode; 4] =
        [RoundMode::NearEven, RoundMode::PlusInfinity, RoundMode::MinusInfinity, RoundMode::Zero];
}

/// Denormal handling of a `FLOAT_DENORM_MODE_*` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DenormMode {
    /// Flush source and destination denormals.
    FlushSrcDst,
    /// Flush destination denormals only.
    FlushDst,
    /// Flush source denormals only.
    FlushSrc,
    /// No flushing.
    FlushNone,
}

impl DenormMode {
    const TABLE: [DenormMode; 4] =
        [DenormMode::FlushSrcDst, DenormMode::FlushDst, DenormMode::FlushSrc, DenormMode::FlushNone];
}

/// Floating-point mode the wave starts in (`COMPUTE_PGM_RSRC1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FloatMode {
    pub round_32: RoundMode,
    pub round_16_64: RoundMode,
    pub denorm_32: DenormMode,
    pub denorm_16_64: DenormMode,
    /// DX10_CLAMP: NaN results of clamping become 0 (and, before gfx12, FP
    /// exceptions are not recorded in TRAPSTS).
    pub dx10_clamp: bool,
    pub ieee_mode: bool,
    pub fp16_overflow: bool,
}

/// IEEE exceptions whose traps are enabled at launch (`COMPUTE_PGM_RSRC2` bits 24-30).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExceptionEnables {
    pub invalid_op: bool,
    pub denorm_src: bool,
    pub div_zero: bool,
    pub overflow: bool,
    pub underflow: bool,
    pub inexact: bool,
    pub int_div_zero: bool,
}

/// How the workitem ids arrive in VGPRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum WorkitemIdLayout {
    /// gfx908: x in v0, y in v1, z in v2 (as many as enabled).
    Separate { vgprs: u32 },
    /// gfx90a and later: all in v0, x in bits 9:0, y in 19:10, z in 29:20.
    PackedInV0,
}

/// One user SGPR input, in the order the hardware loads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserSgpr {
    pub name: &'static str,
    /// First SGPR number.
    pub first: u32,
    pub count: u32,
}

/// Register allocation decoded from the granulated counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RegisterAllocation {
    /// Registers allocated per lane (gfx90a+: VGPRs and AGPRs together).
    pub vgprs: u32,
    /// gfx90a+: first AGPR in the unified file (`ACCUM_OFFSET`); the
    /// architected VGPRs are v0..accum_offset.
    pub accum_offset: Option<u32>,
    /// gfx90a+: AGPRs available (`vgprs - accum_offset`); gfx908: the separate
    /// AGPR file is not described by the descriptor.
    pub agprs: Option<u32>,
    /// SGPRs allocated, including VCC, flat scratch and XNACK mask when reserved.
    pub sgprs: u32,
}

/// A descriptor decoded for one processor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecodedDescriptor {
    pub processor: Target,
    pub registers: RegisterAllocation,
    pub float_mode: FloatMode,
    pub priority: u32,
    #[serde(rename = "priv")]
    pub priv_: bool,
    pub debug_mode: bool,
    pub bulky: bool,
    pub cdbg_user: bool,
    pub private_segment: bool,
    pub user_sgpr_count: u32,
    pub trap_handler: bool,
    pub workgroup_id: [bool; 3],
    pub workgroup_info: bool,
    /// Highest workitem dimension supplied: 0 = x, 1 = x,y, 2 = x,y,z.
    pub vgpr_workitem_id: u32,
    pub workitem_id_layout: WorkitemIdLayout,
    pub exceptions: ExceptionEnables,
    pub granulated_lds_size: u32,
    pub tg_split: bool,
    pub uses_dynamic_stack: bool,
    pub wavefront_size32: bool,
    /// User SGPRs in load order, preloaded kernel arguments last.
    pub user_sgprs: Vec<UserSgpr>,
    /// System SGPRs (workgroup ids, info, private segment wave offset), after the user SGPRs.
    pub system_sgprs: Vec<UserSgpr>,
    /// Dwords of kernel arguments preloaded into SGPRs.
    pub kernarg_preload_length: u32,
    /// Dword offset of the first preloaded argument.
    pub kernarg_preload_offset: u32,
}

fn bit(word: u32, f: raw::BitField) -> bool {
    f.get(word) != 0
}

fn decode(kd: &KernelDescriptor, processor: Target) -> Result<DecodedDescriptor> {
    let info = target::info(processor);
    let r1 = kd.compute_pgm_rsrc1;
    let r2 = kd.compute_pgm_rsrc2;
    let r3 = kd.compute_pgm_rsrc3;
    let props = u32::from(kd.kernel_code_properties);
    let reserved = |what: &'static str, bits: u32| -> Result<()> {
        if bits != 0 {
            Err(Error::malformed("kernel descriptor", format!("reserved bits 0x{bits:x} set in {what}")))
        } else {
            Ok(())
        }
    };
    reserved("compute_pgm_rsrc1", r1 & rsrc1::RESERVED)?;
    reserved("compute_pgm_rsrc2", r2 & rsrc2::RESERVED)?;
    reserved("kernel_code_properties", props & kcp::RESERVED)?;
    if info.unified_vgpr_file {
        reserved("compute_pgm_rsrc3", r3 & rsrc3_gfx90a::RESERVED)?;
    } else {
        reserved("compute_pgm_rsrc3", r3)?;
    }
    if !info.kernarg_preload {
        reserved("kernarg_preload", u32::from(kd.kernarg_preload))?;
    }
    if bit(props, kcp::ENABLE_WAVEFRONT_SIZE32) {
        return Err(Error::malformed("kernel descriptor", format!("wave32 is not available on {processor}")));
    }

    let vgprs = (rsrc1::GRANULATED_WORKITEM_VGPR_COUNT.get(r1) + 1) * info.vgpr_encoding_granule;
    let (accum_offset, agprs) = if info.unified_vgpr_file {
        let accum = (rsrc3_gfx90a::ACCUM_OFFSET.get(r3) + 1) * 4;
        (Some(accum), Some(vgprs.saturating_sub(accum)))
    } else {
        (None, None)
    };
    let sgprs = (rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT.get(r1) + 1) * info.sgpr_encoding_granule;

    let float_mode = FloatMode {
        round_32: RoundMode::TABLE[rsrc1::FLOAT_ROUND_MODE_32.get(r1) as usize & 3],
        round_16_64: RoundMode::TABLE[rsrc1::FLOAT_ROUND_MODE_16_64.get(r1) as usize & 3],
        denorm_32: DenormMode::TABLE[rsrc1::FLOAT_DENORM_MODE_32.get(r1) as usize & 3],
        denorm_16_64: DenormMode::TABLE[rsrc1::FLOAT_DENORM_MODE_16_64.get(r1) as usize & 3],
        dx10_clamp: bit(r1, rsrc1::ENABLE_DX10_CLAMP),
        ieee_mode: bit(r1, rsrc1::ENABLE_IEEE_MODE),
        fp16_overflow: bit(r1, rsrc1::FP16_OVFL),
    };

    // User SGPRs, in the order of kernel_code_properties bits.
    const USER_SGPR_INPUTS: [(raw::BitField, &str, u32, bool); 7] = [
        (kcp::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, "private_segment_buffer", 4, false),
        (kcp::ENABLE_SGPR_DISPATCH_PTR, "dispatch_ptr", 2, true),
        (kcp::ENABLE_SGPR_QUEUE_PTR, "queue_ptr", 2, true),
        (kcp::ENABLE_SGPR_KERNARG_SEGMENT_PTR, "kernarg_segment_ptr", 2, true),
        (kcp::ENABLE_SGPR_DISPATCH_ID, "dispatch_id", 2, true),
        (kcp::ENABLE_SGPR_FLAT_SCRATCH_INIT, "flat_scratch_init", 2, false),
        (kcp::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, "private_segment_size", 1, true),
    ];
    let mut user_sgprs = Vec::new();
    let mut next = 0u32;
    for (field, name, count, allowed_with_architected_scratch) in USER_SGPR_INPUTS {
        if bit(props, field) {
            if info.architected_flat_scratch && !allowed_with_architected_scratch {
                return Err(Error::malformed(
                    "kernel descriptor",
                    format!("{name} user SGPRs requested on {processor}, which has architected flat scratch"),
                ));
            }
            user_sgprs.push(UserSgpr { name, first: next, count });
            next += count;
        }
    }
    let kernarg_preload_length = kp::KERNARG_PRELOAD_SPEC_LENGTH.get(u32::from(kd.kernarg_preload));
    let kernarg_preload_offset = kp::KERNARG_PRELOAD_SPEC_OFFSET.get(u32::from(kd.kernarg_preload));
    if kernarg_preload_length > 0 {
        user_sgprs.push(UserSgpr { name: "kernarg_preload", first: next, count: kernarg_preload_length });
        next += kernarg_preload_length;
    }
    let user_sgpr_count = rsrc2::USER_SGPR_COUNT.get(r2);
    if next > user_sgpr_count {
        return Err(Error::malformed(
            "kernel descriptor",
            format!("enabled user SGPR inputs need {next} SGPRs but USER_SGPR_COUNT is {user_sgpr_count}"),
        ));
    }

    let workgroup_id = [
        bit(r2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_X),
        bit(r2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y),
        bit(r2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z),
    ];
    let workgroup_info = bit(r2, rsrc2::ENABLE_SGPR_WORKGROUP_INFO);
    let private_segment = bit(r2, rsrc2::ENABLE_PRIVATE_SEGMENT);
    let mut system_sgprs = Vec::new();
    let mut sys = user_sgpr_count;
    for (on, name) in [
        (workgroup_id[0], "workgroup_id_x"),
        (workgroup_id[1], "workgroup_id_y"),
        (workgroup_id[2], "workgroup_id_z"),
        (workgroup_info, "workgroup_info"),
        (private_segment && !info.architected_flat_scratch, "private_segment_wavefront_offset"),
    ] {
        if on {
            system_sgprs.push(UserSgpr { name, first: sys, count: 1 });
            sys += 1;
        }
    }

    let vgpr_workitem_id = rsrc2::ENABLE_VGPR_WORKITEM_ID.get(r2);
    if vgpr_workitem_id == 3 {
        return Err(Error::malformed("kernel descriptor", "ENABLE_VGPR_WORKITEM_ID is 3 (reserved)"));
    }
    let workitem_id_layout = if info.unified_vgpr_file {
        WorkitemIdLayout::PackedInV0
    } else {
        WorkitemIdLayout::Separate { vgprs: vgpr_workitem_id + 1 }
    };

    Ok(DecodedDescriptor {
        processor,
        registers: RegisterAllocation { vgprs, accum_offset, agprs, sgprs },
        float_mode,
        priority: rsrc1::PRIORITY.get(r1),
        priv_: bit(r1, rsrc1::PRIV),
        debug_mode: bit(r1, rsrc1::DEBUG_MODE),
        bulky: bit(r1, rsrc1::BULKY),
        cdbg_user: bit(r1, rsrc1::CDBG_USER),
        private_segment,
        user_sgpr_count,
        trap_handler: bit(r2, rsrc2::ENABLE_TRAP_HANDLER),
        workgroup_id,
        workgroup_info,
        vgpr_workitem_id,
        workitem_id_layout,
        exceptions: ExceptionEnables {
            invalid_op: bit(r2, rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION),
            denorm_src: bit(r2, rsrc2::ENABLE_EXCEPTION_FP_DENORMAL_SOURCE),
            div_zero: bit(r2, rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO),
            overflow: bit(r2, rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW),
            underflow: bit(r2, rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW),
            inexact: bit(r2, rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INEXACT),
            int_div_zero: bit(r2, rsrc2::ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO),
        },
        granulated_lds_size: rsrc2::GRANULATED_LDS_SIZE.get(r2),
        tg_split: info.unified_vgpr_file && bit(r3, rsrc3_gfx90a::TG_SPLIT),
        uses_dynamic_stack: bit(props, kcp::USES_DYNAMIC_STACK),
        wavefront_size32: false,
        user_sgprs,
        system_sgprs,
        kernarg_preload_length,
        kernarg_preload_offset,
    })
}

/// Renders the descriptor as the `.amdhsa_kernel` directive block, in the
/// order and with the values llvm-objdump prints when it disassembles a
/// `.kd` symbol. Register counts are the inverse of the granules (the
/// original `.amdhsa_next_free_*` and `.amdhsa_reserve_*` cannot be recovered).
/// `code_object_version` matters: `.amdhsa_uses_dynamic_stack` exists from v5.
pub fn render_amdhsa(kernel: &str, kd: &KernelDescriptor, processor: Target, code_object_version: u32) -> String {
    let info = target::info(processor);
    let r1 = kd.compute_pgm_rsrc1;
    let r2 = kd.compute_pgm_rsrc2;
    let r3 = kd.compute_pgm_rsrc3;
    let props = u32::from(kd.kernel_code_properties);
    let mut lines: Vec<(&str, u64)> = vec![
        ("group_segment_fixed_size", kd.group_segment_fixed_size.into()),
        ("private_segment_fixed_size", kd.private_segment_fixed_size.into()),
        ("kernarg_size", kd.kernarg_size.into()),
    ];
    if info.unified_vgpr_file {
        lines.push(("accum_offset", ((rsrc3_gfx90a::ACCUM_OFFSET.get(r3) + 1) * 4).into()));
        lines.push(("tg_split", rsrc3_gfx90a::TG_SPLIT.get(r3).into()));
    }
    let vgprs = (rsrc1::GRANULATED_WORKITEM_VGPR_COUNT.get(r1) + 1) * info.vgpr_encoding_granule;
    let sgprs = (rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT.get(r1) + 1) * info.sgpr_encoding_granule;
    lines.push(("next_free_vgpr", vgprs.into()));
    lines.push(("reserve_vcc", 0));
    if !info.architected_flat_scratch {
        lines.push(("reserve_flat_scratch", 0));
    }
    lines.push(("reserve_xnack_mask", 0));
    lines.push(("next_free_sgpr", sgprs.into()));
    for (name, f) in [
        ("float_round_mode_32", rsrc1::FLOAT_ROUND_MODE_32),
        ("float_round_mode_16_64", rsrc1::FLOAT_ROUND_MODE_16_64),
        ("float_denorm_mode_32", rsrc1::FLOAT_DENORM_MODE_32),
        ("float_denorm_mode_16_64", rsrc1::FLOAT_DENORM_MODE_16_64),
        ("dx10_clamp", rsrc1::ENABLE_DX10_CLAMP),
        ("ieee_mode", rsrc1::ENABLE_IEEE_MODE),
        ("fp16_overflow", rsrc1::FP16_OVFL),
    ] {
        lines.push((name, f.get(r1).into()));
    }
    let private = if info.architected_flat_scratch {
        "enable_private_segment"
    } else {
        "system_sgpr_private_segment_wavefront_offset"
    };
    lines.push((private, rsrc2::ENABLE_PRIVATE_SEGMENT.get(r2).into()));
    for (name, f) in [
        ("system_sgpr_workgroup_id_x", rsrc2::ENABLE_SGPR_WORKGROUP_ID_X),
        ("system_sgpr_workgroup_id_y", rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y),
        ("system_sgpr_workgroup_id_z", rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z),
        ("system_sgpr_workgroup_info", rsrc2::ENABLE_SGPR_WORKGROUP_INFO),
        ("system_vgpr_workitem_id", rsrc2::ENABLE_VGPR_WORKITEM_ID),
        ("exception_fp_ieee_invalid_op", rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION),
        ("exception_fp_denorm_src", rsrc2::ENABLE_EXCEPTION_FP_DENORMAL_SOURCE),
        ("exception_fp_ieee_div_zero", rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO),
        ("exception_fp_ieee_overflow", rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW),
        ("exception_fp_ieee_underflow", rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW),
        ("exception_fp_ieee_inexact", rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INEXACT),
        ("exception_int_div_zero", rsrc2::ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO),
    ] {
        lines.push((name, f.get(r2).into()));
    }
    let mut user = vec![
        ("user_sgpr_private_segment_buffer", kcp::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, false),
        ("user_sgpr_dispatch_ptr", kcp::ENABLE_SGPR_DISPATCH_PTR, true),
        ("user_sgpr_queue_ptr", kcp::ENABLE_SGPR_QUEUE_PTR, true),
        ("user_sgpr_kernarg_segment_ptr", kcp::ENABLE_SGPR_KERNARG_SEGMENT_PTR, true),
        ("user_sgpr_dispatch_id", kcp::ENABLE_SGPR_DISPATCH_ID, true),
        ("user_sgpr_flat_scratch_init", kcp::ENABLE_SGPR_FLAT_SCRATCH_INIT, false),
        ("user_sgpr_private_segment_size", kcp::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, true),
    ];
    user.retain(|&(_, _, always)| always || !info.architected_flat_scratch);
    for (name, f, _) in user {
        lines.push((name, f.get(props).into()));
    }
    if code_object_version >= 5 {
        lines.push(("uses_dynamic_stack", kcp::USES_DYNAMIC_STACK.get(props).into()));
    }
    let preload = u32::from(kd.kernarg_preload);
    if info.kernarg_preload && preload != 0 {
        lines.push(("user_sgpr_kernarg_preload_length", kp::KERNARG_PRELOAD_SPEC_LENGTH.get(preload).into()));
        let off = kp::KERNARG_PRELOAD_SPEC_OFFSET.get(preload);
        if off != 0 {
            lines.push(("user_sgpr_kernarg_preload_offset", off.into()));
        }
    }
    let mut out = format!(".amdhsa_kernel {kernel}\n");
    for (name, value) in lines {
        let _ = writeln!(out, "\t.amdhsa_{name} {value}");
    }
    out.push_str(".end_amdhsa_kernel\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KernelDescriptor {
        // gfx90a `add` kernel: rsrc1 0x00af0040-like values with preload and rsrc3.
        let mut b = [0u8; 64];
        b[8] = 20;
        b[16..24].copy_from_slice(&0x1080i64.to_le_bytes());
        b[44..48].copy_from_slice(&1u32.to_le_bytes());
        b[48..52].copy_from_slice(&0x00af_0040u32.to_le_bytes());
        b[52..56].copy_from_slice(&0x0000_008cu32.to_le_bytes());
        b[56..58].copy_from_slice(&0x0009u16.to_le_bytes());
        KernelDescriptor::from_array(&b)
    }

    #[test]
    fn bytes_round_trip() {
        let kd = sample();
        assert_eq!(KernelDescriptor::parse(&kd.to_bytes()).expect("parse"), kd);
    }

    #[test]
    fn decode_gfx90a_sample() {
        let d = sample().decode(Target::Gfx90a).expect("decode");
        assert_eq!(d.registers.vgprs, 8);
        assert_eq!(d.registers.accum_offset, Some(8));
        assert_eq!(d.registers.sgprs, 16);
        assert_eq!(d.user_sgpr_count, 6);
        assert_eq!(d.user_sgprs.len(), 2);
        assert_eq!(d.system_sgprs[0].name, "workgroup_id_x");
        assert_eq!(d.system_sgprs[0].first, 6);
        assert!(d.float_mode.dx10_clamp && d.float_mode.ieee_mode);
        assert_eq!(d.float_mode.denorm_32, DenormMode::FlushNone);
    }

    #[test]
    fn bit_field_set_rejects_overflow() {
        assert_eq!(rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT.set(0, 16), None);
        assert_eq!(rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT.set(0xffff_ffff, 0), Some(0xffff_fc3f));
    }

    #[test]
    fn register_allocation_encoding() {
        let mut kd = sample();
        // gfx90a: 6 VGPRs + 0 AGPRs -> accum_offset 8, 1 granule; 11 SGPRs -> granule 1.
        kd.set_register_allocation(Target::Gfx90a, RegisterRequest { vgprs: 6, agprs: 0, sgprs: 11 }).expect("set");
        let d = kd.decode(Target::Gfx90a).expect("decode");
        assert_eq!((d.registers.vgprs, d.registers.accum_offset, d.registers.sgprs), (8, Some(8), 16));
        // 33 VGPRs + 16 AGPRs: arch rounds to 36, total 52 -> 56 allocated.
        kd.set_register_allocation(Target::Gfx90a, RegisterRequest { vgprs: 33, agprs: 16, sgprs: 102 }).expect("set");
        let d = kd.decode(Target::Gfx90a).expect("decode");
        assert_eq!((d.registers.vgprs, d.registers.accum_offset, d.registers.agprs), (56, Some(36), Some(20)));
        assert_eq!(d.registers.sgprs, 104);
        assert!(kd
            .set_register_allocation(
                Target::Gfx90a,
                RegisterRequest { vgprs: u32::MAX, agprs: u32::MAX, sgprs: u32::MAX }
            )
            .is_err());
        // Too many: 513 unified registers do not fit the 6-bit granule.
        assert!(kd
            .set_register_allocation(Target::Gfx90a, RegisterRequest { vgprs: 256, agprs: 257, sgprs: 8 })
            .is_err());
        let mut kd = KernelDescriptor::from_array(&[0u8; 64]);
        kd.set_register_allocation(Target::Gfx908, RegisterRequest { vgprs: 5, agprs: 0, sgprs: 8 }).expect("set");
        assert_eq!(kd.compute_pgm_rsrc1 & 0x3ff, 1);
        let before = kd;
        assert!(kd
            .set_register_allocation(Target::Gfx908, RegisterRequest { vgprs: 300, agprs: 0, sgprs: 8 })
            .is_err());
        assert_eq!(kd, before, "unchanged after an error");
        assert_eq!(kd.compute_pgm_rsrc3, 0);
    }

    #[test]
    fn reserved_bits_are_errors() {
        let mut kd = sample();
        kd.compute_pgm_rsrc2 |= 1 << 31;
        assert!(kd.decode(Target::Gfx90a).is_err());
        let kd = sample();
        // rsrc3 = 1 is ACCUM_OFFSET on gfx90a but reserved on gfx908.
        assert!(kd.decode(Target::Gfx908).is_err());
    }
}
