//! AMDGPU processor facts and target ids: the ELF `e_flags` encoding (machine
//! number and the xnack/sramecc feature settings) and the textual target id
//! (`gfx90a:sramecc+:xnack-`) used in bundle ids and the metadata note.

use std::fmt;

use crate::error::{Error, Result};
pub use xfpx_amd_isa::Target;

/// One row of the processor table: the target, its `EF_AMDGPU_MACH_*` value,
/// and the register-file facts the descriptor decoder needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessorInfo {
    pub target: Target,
    pub mach: u32,
    /// VGPR allocation granule as encoded in `GRANULATED_WORKITEM_VGPR_COUNT` (wave64).
    pub vgpr_encoding_granule: u32,
    /// SGPR allocation granule as encoded in `GRANULATED_WAVEFRONT_SGPR_COUNT`.
    pub sgpr_encoding_granule: u32,
    /// VGPRs and AGPRs form one file with the AGPRs at `ACCUM_OFFSET` (gfx90a and later).
    pub unified_vgpr_file: bool,
    /// Flat scratch is architected: no private segment buffer or flat scratch init user SGPRs.
    pub architected_flat_scratch: bool,
    /// Kernel arguments can be preloaded into user SGPRs.
    pub kernarg_preload: bool,
}

/// Processor facts, indexed by [`Target`]'s discriminant (mach values from
/// the `EF_AMDGPU_MACH_*` list of LLVM's AMDGPUUsage).
pub const PROCESSORS: [ProcessorInfo; 4] = [
    ProcessorInfo {
        target: Target::Gfx908,
        mach: 0x030,
        vgpr_encoding_granule: 4,
        sgpr_encoding_granule: 8,
        unified_vgpr_file: false,
        architected_flat_scratch: false,
        kernarg_preload: false,
    },
    ProcessorInfo {
        target: Target::Gfx90a,
        mach: 0x03f,
        vgpr_encoding_granule: 8,
        sgpr_encoding_granule: 8,
        unified_vgpr_file: true,
        architected_flat_scratch: false,
        kernarg_preload: true,
    },
    ProcessorInfo {
        target: Target::Gfx942,
        mach: 0x04c,
        vgpr_encoding_granule: 8,
        sgpr_encoding_granule: 8,
        unified_vgpr_file: true,
        architected_flat_scratch: true,
        kernarg_preload: true,
    },
    ProcessorInfo {
        target: Target::Gfx950,
        mach: 0x04f,
        vgpr_encoding_granule: 8,
        sgpr_encoding_granule: 8,
        unified_vgpr_file: true,
        architected_flat_scratch: true,
        kernarg_preload: true,
    },
];

/// Mask of the machine number in `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// xnack setting in `e_flags` (code object v4 and later).
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// sramecc setting in `e_flags` (code object v4 and later).
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;

/// The processor facts of `target`.
pub fn info(target: Target) -> &'static ProcessorInfo {
    // PROCESSORS is indexed by the enum's discriminant.
    &PROCESSORS[target as usize]
}

/// The target an `EF_AMDGPU_MACH_*` value names.
pub fn from_mach(mach: u32) -> Result<Target> {
    PROCESSORS.iter().find(|p| p.mach == mach).map(|p| p.target).ok_or(Error::UnknownProcessor { mach })
}

/// Setting of a target feature (xnack, sramecc) in a target id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    Unsupported,
    /// Code runs with the feature on or off (no suffix in the target id).
    Any,
    Off,
    On,
}

impl FeatureSetting {
    /// Decodes the two-bit v4 encoding (0 unsupported, 1 any, 2 off, 3 on).
    fn from_v4_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => FeatureSetting::Unsupported,
            1 => FeatureSetting::Any,
            2 => FeatureSetting::Off,
            _ => FeatureSetting::On,
        }
    }

    fn suffix(self) -> Option<char> {
        match self {
            FeatureSetting::On => Some('+'),
            FeatureSetting::Off => Some('-'),
            _ => None,
        }
    }
}

/// A target id: processor plus feature settings, as in `gfx90a:sramecc+:xnack-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TargetId {
    pub processor: Target,
    pub sramecc: FeatureSetting,
    pub xnack: FeatureSetting,
}

impl TargetId {
    /// The target id an ELF's `e_flags` describes.
    pub fn from_e_flags(e_flags: u32) -> Result<Self> {
        let processor = from_mach(e_flags & EF_AMDGPU_MACH)?;
        Ok(TargetId {
            processor,
            xnack: FeatureSetting::from_v4_bits((e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
            sramecc: FeatureSetting::from_v4_bits((e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
        })
    }

    /// Parses `gfx90a`, `gfx90a:xnack+` or a full `amdgcn-amd-amdhsa--gfx90a:xnack+`.
    pub fn parse(text: &str) -> Result<Self> {
        // A triple ends in `--` (empty environment) before the target id.
        let id = text.rsplit_once("--").map(|(_, t)| t).unwrap_or(text);
        let mut parts = id.split(':');
        let name = parts.next().unwrap_or_default();
        let processor = Target::from_name(name)
            .ok_or_else(|| Error::unsupported("target", format!("processor '{name}' in '{text}'")))?;
        let mut target = TargetId { processor, sramecc: FeatureSetting::Any, xnack: FeatureSetting::Any };
        for feature in parts {
            let (fname, setting) = match feature.as_bytes().last() {
                Some(b'+') => (&feature[..feature.len() - 1], FeatureSetting::On),
                Some(b'-') => (&feature[..feature.len() - 1], FeatureSetting::Off),
                _ => return Err(Error::malformed("target id", format!("feature '{feature}' in '{text}' has no +/-"))),
            };
            match fname {
                "xnack" => target.xnack = setting,
                "sramecc" => target.sramecc = setting,
                _ => return Err(Error::unsupported("target feature", format!("'{fname}' in '{text}'"))),
            }
        }
        Ok(target)
    }
}

impl fmt::Display for TargetId {
    /// Canonical spelling: features in alphabetical order, only `+`/`-` settings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor.name())?;
        if let Some(c) = self.sramecc.suffix() {
            write!(f, ":sramecc{c}")?;
        }
        if let Some(c) = self.xnack.suffix() {
            write!(f, ":xnack{c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_discriminant() {
        for (i, p) in PROCESSORS.iter().enumerate() {
            assert_eq!(p.target as usize, i);
            assert_eq!(Target::ALL[i], p.target);
        }
    }

    #[test]
    fn e_flags_of_clang_defaults() {
        let t = TargetId::from_e_flags(0x53f).expect("gfx90a");
        assert_eq!(t.processor, Target::Gfx90a);
        assert_eq!(t.xnack, FeatureSetting::Any);
        assert_eq!(t.sramecc, FeatureSetting::Any);
        assert_eq!(t.to_string(), "gfx90a");
        let t = TargetId::from_e_flags(0x04c | 0x300 | 0x800).expect("gfx942");
        assert_eq!(t.to_string(), "gfx942:sramecc-:xnack+");
        assert!(TargetId::from_e_flags(0x2c).is_err());
    }

    #[test]
    fn parse_target_ids() {
        let t = TargetId::parse("amdgcn-amd-amdhsa--gfx90a:xnack+").expect("parse");
        assert_eq!((t.processor, t.xnack), (Target::Gfx90a, FeatureSetting::On));
        let t = TargetId::parse("gfx942:sramecc+:xnack-").expect("parse");
        assert_eq!(t.to_string(), "gfx942:sramecc+:xnack-");
        assert!(TargetId::parse("gfx1100").is_err());
        assert!(TargetId::parse("gfx90a:xnack").is_err());
    }
}
