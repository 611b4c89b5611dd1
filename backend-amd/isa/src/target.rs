//! The gfx9/CDNA processors this decoder knows, with their names.

use std::fmt;
use std::str::FromStr;

/// A gfx9-family CDNA processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Target {
    /// CDNA1 (MI100).
    Gfx908,
    /// CDNA2 (MI200).
    Gfx90a,
    /// CDNA3 (MI300).
    Gfx942,
    /// CDNA4 (MI350).
    Gfx950,
}

impl Target {
    pub const ALL: [Target; 4] = [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950];

    /// The processor name as LLVM spells it (`gfx90a`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx908 => "gfx908",
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// From a processor name such as `gfx90a` (any case; feature suffixes
    /// such as `:xnack+` ignored; no triple).
    pub fn from_name(name: &str) -> Option<Target> {
        let name = name.split(':').next().unwrap_or(name);
        Target::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Bit of this target in the availability masks of the instruction table.
    pub fn mask(self) -> u8 {
        1 << (self as u8)
    }

    /// gfx940 and later (gfx942, gfx950): renamed cache-policy bits and opcodes.
    pub fn is_gfx940_plus(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }

    /// gfx90a and later: unified VGPR/AGPR file, `acc` bits in memory instructions.
    pub fn is_gfx90a_plus(self) -> bool {
        !matches!(self, Target::Gfx908)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown processor name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown AMDGPU target '{}' (known: gfx908, gfx90a, gfx942, gfx950)", self.0)
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for Target {
    type Err = UnknownTarget;

    /// Accepts `gfx90a`, `amdgcn-amd-amdhsa--gfx90a` and feature suffixes (`gfx90a:xnack+`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let proc = s.rsplit('-').next().unwrap_or(s);
        let proc = proc.split(':').next().unwrap_or(proc);
        Target::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(proc))
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}
