//! The lowering trait each backend implements: from a verified plan over a
//! kernel view to whatever that backend executes (NVBit call insertions,
//! rewritten AMDGPU code).

use crate::plan::Plan;
use crate::site::SiteTable;
use crate::view::KernelView;

/// Lowers plans of one kernel at a time.
pub trait Lowering {
    /// What lowering produces for one kernel.
    type Output;
    /// Why a kernel could not be lowered (the kernel is then left as it was).
    type Error: std::error::Error;

    /// Lower `plan`, which [`crate::plan::verify`] has accepted for `view`.
    fn lower(&mut self, view: &KernelView, plan: &Plan, sites: &SiteTable) -> Result<Self::Output, Self::Error>;
}
