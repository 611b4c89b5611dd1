//! Registers for the appended code: the scratch SGPRs and VGPRs above
//! everything the code object's functions use, and the one place where a
//! kernel's descriptor grows to hold them (VGPR/AGPR granule with
//! `ACCUM_OFFSET` on gfx90a+, SGPR granule with the reserved extras), with
//! the occupancy check its `max_flat_workgroup_size` imposes; for a kernel
//! at its register budget, which file still grows and which registers its
//! sites may borrow instead ([`super::scratch::Scavenger`]).

use serde::Serialize;

use crate::descriptor::{KernelDescriptor, RegisterRequest};
use crate::target::Target;
use xfpx_amd_isa::operand::RegFile;

use super::lower::{Scratch, SCRATCH_SGPRS, SCRATCH_VGPRS};
use super::view::DecodedInstr;
use super::RewriteError;

/// Highest SGPR number a kernel may name plus one (VCC and the rest follow).
const MAX_NEXT_FREE_SGPR: u16 = 102;
/// The largest reserved-SGPR extra (flat scratch 6 > XNACK mask 4 > VCC 2):
/// the extras share space, so the largest one bounds them all.
const SGPR_EXTRAS: u32 = 6;
/// Architected VGPRs a lane can name.
const MAX_ARCH_VGPRS: u16 = 256;
/// Physical VGPRs per SIMD lane: gfx908 has 256 (and 256 AGPRs apart),
/// gfx90a+ a unified file of 512.
fn vgpr_file(p: Target) -> u32 {
    if crate::target::info(p).unified_vgpr_file {
        512
    } else {
        256
    }
}

/// Registers some code names: (next free SGPR, next free VGPR).
pub fn used_registers<'d>(code: impl IntoIterator<Item = &'d DecodedInstr>) -> (u16, u16) {
    let mut s = 0u16;
    let mut v = 0u16;
    for d in code {
        for r in d.insn.regs_named() {
            let end = r.first + u16::from(r.count);
            match r.file {
                RegFile::Sgpr if r.first < MAX_NEXT_FREE_SGPR => s = s.max(end),
                RegFile::Vgpr => v = v.max(end),
                _ => {}
            }
        }
    }
    (s, v)
}

/// The descriptor's register counts before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegisterChange {
    pub vgprs_before: u32,
    pub vgprs_after: u32,
    pub accum_offset_before: Option<u32>,
    pub accum_offset_after: Option<u32>,
    pub sgprs_before: u32,
    pub sgprs_after: u32,
    pub scratch_sgpr: u16,
    pub scratch_vgpr: u16,
    /// Waves per SIMD the VGPR allocation leaves room for, before and after
    /// (an occupancy loss where they differ).
    pub waves_before: u32,
    pub waves_after: u32,
    /// Files whose scratch registers each site borrows (dead there) instead
    /// of the allocation growing.
    pub borrowed: Files,
}

/// Architected VGPRs allocated, and AGPRs after them (gfx90a+).
fn architected(regs: &crate::descriptor::RegisterAllocation) -> (u32, u32) {
    match regs.accum_offset {
        Some(acc) => (acc.min(regs.vgprs), regs.vgprs.saturating_sub(acc)),
        None => (regs.vgprs, 0),
    }
}

/// The first scratch registers [`grow`] chooses for a kernel whose code
/// (with what it may call) names registers below `used`: SGPRs above those
/// and the user/system SGPRs, on a multiple of 4; VGPRs above those and the
/// descriptor's architected allocation (which also covers registers reached
/// indirectly, through M0-relative moves or by callees). `grow` given this
/// base as `used` chooses this base again: a base shared by several kernels
/// (the scratch of the functions they call) is the component-wise maximum
/// of theirs.
pub fn scratch_base(processor: Target, kd: &KernelDescriptor, used: (u16, u16)) -> Result<Scratch, RewriteError> {
    let dec = kd.decode(processor).map_err(|e| RewriteError::Kernel(e.to_string()))?;
    let (arch, _) = architected(&dec.registers);
    let user_system = dec.user_sgpr_count + dec.system_sgprs.len() as u32;
    let sgpr = (u32::from(used.0).max(user_system)).div_ceil(4) * 4;
    let vgpr = u32::from(used.1).max(arch);
    Ok(Scratch::new(sgpr.min(u32::from(u16::MAX)) as u16, vgpr.min(u32::from(u16::MAX)) as u16))
}

/// Chooses scratch registers for a kernel and returns its grown descriptor.
/// `used` is what the code object's code names; `max_workgroup` the
/// metadata's `max_flat_workgroup_size` (None: unknown, taken as 1024).
pub fn grow(
    processor: Target,
    kd: &KernelDescriptor,
    used: (u16, u16),
    max_workgroup: Option<u64>,
) -> Result<(Scratch, KernelDescriptor, RegisterChange), RewriteError> {
    grow_files(processor, kd, used, max_workgroup, Files { sgprs: true, vgprs: true })
}

/// Which register files a descriptor grows to hold scratch registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Files {
    pub sgprs: bool,
    pub vgprs: bool,
}

/// [`grow`] for the files of `files` only: the other keeps its allocation
/// (its scratch registers are borrowed per site, see
/// [`super::scratch::Scavenger`], and the scratch base of that file means nothing).
pub fn grow_files(
    processor: Target,
    kd: &KernelDescriptor,
    used: (u16, u16),
    max_workgroup: Option<u64>,
    files: Files,
) -> Result<(Scratch, KernelDescriptor, RegisterChange), RewriteError> {
    let dec = kd.decode(processor).map_err(|e| RewriteError::Kernel(e.to_string()))?;
    let regs = dec.registers;
    let (arch, agprs) = architected(&regs);
    let base = scratch_base(processor, kd, used)?;
    let (sgpr_base, vgpr_base) = (u32::from(base.sgpr), u32::from(base.vgpr));
    let new_arch = vgpr_base + u32::from(SCRATCH_VGPRS);
    if files.vgprs && new_arch > u32::from(MAX_ARCH_VGPRS) {
        return Err(RewriteError::Kernel(format!(
            "needs {SCRATCH_VGPRS} VGPRs above v{} but a lane has only {MAX_ARCH_VGPRS}",
            vgpr_base.saturating_sub(1)
        )));
    }
    let new_sgprs = sgpr_base + u32::from(SCRATCH_SGPRS);
    if files.sgprs && new_sgprs > u32::from(MAX_NEXT_FREE_SGPR) {
        return Err(RewriteError::Kernel(format!(
            "needs {SCRATCH_SGPRS} SGPRs above s{} but only {MAX_NEXT_FREE_SGPR} are addressable",
            sgpr_base.saturating_sub(1)
        )));
    }
    let arch_after = if files.vgprs { new_arch.max(arch) } else { arch };
    let sgprs_after = if files.sgprs { (new_sgprs + SGPR_EXTRAS).max(regs.sgprs) } else { regs.sgprs };
    let mut grown = *kd;
    grown
        .set_register_allocation(processor, RegisterRequest { vgprs: arch_after, agprs, sgprs: sgprs_after })
        .map_err(|e| RewriteError::Kernel(format!("register allocation does not fit the descriptor: {e}")))?;
    let after = grown.decode(processor).map_err(|e| RewriteError::Kernel(e.to_string()))?.registers;
    // Occupancy: a workgroup of W lanes needs ceil(W/64) waves over 4 SIMDs.
    let waves = max_workgroup.unwrap_or(1024).div_ceil(64).div_ceil(4).max(1) as u32;
    let fits = vgpr_file(processor) / after.vgprs.max(1);
    if files.vgprs && fits < waves {
        return Err(RewriteError::Kernel(format!(
            "{} VGPRs per lane leave room for {fits} waves per SIMD, but a workgroup of {} lanes needs {waves}",
            after.vgprs,
            max_workgroup.unwrap_or(1024)
        )));
    }
    Ok((
        Scratch::new(sgpr_base as u16, vgpr_base as u16),
        grown,
        RegisterChange {
            vgprs_before: regs.vgprs,
            vgprs_after: after.vgprs,
            accum_offset_before: regs.accum_offset,
            accum_offset_after: after.accum_offset,
            sgprs_before: regs.sgprs,
            sgprs_after: after.sgprs,
            scratch_sgpr: sgpr_base as u16,
            scratch_vgpr: vgpr_base as u16,
            waves_before: waves_per_simd(processor, regs.vgprs),
            waves_after: waves_per_simd(processor, after.vgprs),
            borrowed: Files { sgprs: !files.sgprs, vgprs: !files.vgprs },
        },
    ))
}

/// Waves per SIMD that `vgprs` allocated VGPRs per lane leave room for, up
/// to the most a SIMD holds (10 on gfx908, 8 on gfx90a and later).
fn waves_per_simd(processor: Target, vgprs: u32) -> u32 {
    let most = if crate::target::info(processor).unified_vgpr_file { 8 } else { 10 };
    (vgpr_file(processor) / vgprs.max(1)).min(most)
}

/// The registers a kernel at its register budget may borrow at a site:
/// (SGPRs `s0..`, VGPRs `v0..` of its architected allocation, AGPRs `a0..`
/// its allocation holds besides those it uses: all of them on gfx908, whose
/// AGPR file matches the VGPR allocation; on gfx90a+ the unified file's
/// room after ACCUM_OFFSET up to the allocation).
pub fn borrowable(processor: Target, kd: &KernelDescriptor) -> Option<(u16, u16, u16)> {
    let regs = kd.decode(processor).ok()?.registers;
    let (arch, _) = architected(&regs);
    let sgprs = regs.sgprs.saturating_sub(SGPR_EXTRAS).min(u32::from(MAX_NEXT_FREE_SGPR));
    let agprs = match regs.accum_offset {
        Some(acc) => regs.vgprs.saturating_sub(acc),
        None if crate::target::info(processor).unified_vgpr_file => 0,
        None => regs.vgprs,
    };
    Some((sgprs as u16, arch.min(u32::from(MAX_ARCH_VGPRS)) as u16, agprs.min(256) as u16))
}

/// Scratch for appended code that runs only where every register of the
/// kernel is dead (the end of its waves, where screening reads the
/// exception flags): the lowest SGPRs and VGPRs of its own allocation, with
/// the descriptor as it is, so that a kernel at its register budget is
/// screened too. `None` when the allocation is too small to hold them.
pub fn within_allocation(
    processor: Target,
    kd: &KernelDescriptor,
) -> Option<(Scratch, KernelDescriptor, RegisterChange)> {
    let regs = kd.decode(processor).ok()?.registers;
    let (arch, _) = architected(&regs);
    if regs.sgprs.saturating_sub(SGPR_EXTRAS) < u32::from(SCRATCH_SGPRS) || arch < u32::from(SCRATCH_VGPRS) {
        return None;
    }
    let change = RegisterChange {
        vgprs_before: regs.vgprs,
        vgprs_after: regs.vgprs,
        accum_offset_before: regs.accum_offset,
        accum_offset_after: regs.accum_offset,
        sgprs_before: regs.sgprs,
        sgprs_after: regs.sgprs,
        scratch_sgpr: 0,
        scratch_vgpr: 0,
        waves_before: waves_per_simd(processor, regs.vgprs),
        waves_after: waves_per_simd(processor, regs.vgprs),
        borrowed: Files { sgprs: false, vgprs: false },
    };
    Some((Scratch::new(0, 0), *kd, change))
}

/// The registers the dispatch sets before a kernel's first instruction: its
/// user and system SGPRs and the workitem-id VGPRs (v0-v2).
pub fn at_entry(processor: Target, kd: &KernelDescriptor) -> Option<super::liveness::RegSet> {
    let dec = kd.decode(processor).ok()?;
    let mut set = super::liveness::RegSet::default();
    for r in 0..dec.user_sgpr_count + dec.system_sgprs.len() as u32 {
        set.insert(RegFile::Sgpr, r as u16);
    }
    for v in 0..3 {
        set.insert(RegFile::Vgpr, v);
    }
    Some(set)
}

/// Scratch for screening a kernel whose allocation cannot grow to hold it
/// (the code runs where its waves end, where every register is dead): its
/// own allocation's first registers (descriptor untouched), or, where that
/// holds too few of one file, that file grown and the other's first
/// registers. None where neither fits.
pub fn at_wave_end(
    processor: Target,
    kd: &KernelDescriptor,
    used: (u16, u16),
    max_workgroup: Option<u64>,
) -> Option<(Scratch, KernelDescriptor, RegisterChange)> {
    if let Some(within) = within_allocation(processor, kd) {
        return Some(within);
    }
    let (sgprs, vgprs, _) = borrowable(processor, kd)?;
    for files in [Files { sgprs: true, vgprs: false }, Files { sgprs: false, vgprs: true }] {
        let Ok((mut s, d, mut r)) = grow_files(processor, kd, used, max_workgroup, files) else { continue };
        if (!files.sgprs && sgprs < SCRATCH_SGPRS) || (!files.vgprs && vgprs < SCRATCH_VGPRS) {
            continue;
        }
        if !files.sgprs {
            (s.sgpr, r.scratch_sgpr) = (0, 0);
        }
        if !files.vgprs {
            (s.vgpr, r.scratch_vgpr) = (0, 0);
        }
        return Some((s, d, r));
    }
    None
}

/// The register counts the metadata note should report after `change`:
/// (VGPRs, SGPRs including the reserved extras), as the descriptor's request
/// (0 where the count need not rise).
pub fn metadata_counts(change: &RegisterChange) -> (u64, u64) {
    // (0 for a file whose registers are borrowed: its count stays)
    let vgprs = if change.borrowed.vgprs { 0 } else { u64::from(change.scratch_vgpr + SCRATCH_VGPRS) };
    let sgprs =
        if change.borrowed.sgprs { 0 } else { u64::from(change.scratch_sgpr + SCRATCH_SGPRS) + u64::from(SGPR_EXTRAS) };
    (vgprs, sgprs)
}
