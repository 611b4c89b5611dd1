//! The flags of one permanent fault (`--tool inject`), shared by `xfpx run`
//! and `xfpx replay`, turned into a validated [`FaultSpec`].

use anyhow::{anyhow, Result};
use clap::Args;
use xfpx_common::fault::{FaultFlags, FaultSpec};
use xfpx_common::tool::ToolKind;

#[derive(Debug, Args, Default)]
pub struct FaultArgs {
    /// Inject: the error model (IOC, IVOC, IRA, IVRA, IIO, IMS, IMD, WV, IAT, IAW, IAC, IAL).
    #[arg(long, value_name = "MODEL", help_heading = "Fault (--tool inject)")]
    pub model: Option<String>,
    /// The SM (AMD: compute unit) the fault sits on.
    #[arg(long, value_name = "N", help_heading = "Fault (--tool inject)")]
    pub sm: Option<String>,
    /// The sub-partition / warp scheduler (AMD: SIMD); default all.
    #[arg(long, value_name = "N", help_heading = "Fault (--tool inject)")]
    pub subpartition: Option<String>,
    /// Warp slots on the sub-partition, e.g. 0,4-5; default all.
    #[arg(long, value_name = "LIST", help_heading = "Fault (--tool inject)")]
    pub warps: Option<String>,
    /// Lanes, e.g. 0-3; default all.
    #[arg(long, value_name = "LIST", help_heading = "Fault (--tool inject)")]
    pub lanes: Option<String>,
    /// IRA, IVRA: src0, src1, ... or dst.
    #[arg(long, value_name = "OPERAND", help_heading = "Fault (--tool inject)")]
    pub operand: Option<String>,
    /// IRA: the wrong register addressed.
    #[arg(long, value_name = "N", help_heading = "Fault (--tool inject)")]
    pub register: Option<String>,
    /// IOC, IAL: int or fp.
    #[arg(long, value_name = "UNIT", help_heading = "Fault (--tool inject)")]
    pub unit: Option<String>,
    /// IIO, IMS, IMD, IAT, IAW, IAC: the error mask (XORed).
    #[arg(long, value_name = "BITS", help_heading = "Fault (--tool inject)")]
    pub mask: Option<String>,
    /// IMD: data or address of the shared-memory store.
    #[arg(long, value_name = "WHAT", help_heading = "Fault (--tool inject)")]
    pub store: Option<String>,
    /// WV: the predicate whose writes are inverted.
    #[arg(long, value_name = "N", help_heading = "Fault (--tool inject)")]
    pub predicate: Option<String>,
    /// IAT, IAW, IAC: x, y or z.
    #[arg(long, value_name = "DIM", help_heading = "Fault (--tool inject)")]
    pub dim: Option<String>,
    /// IAL: ignore (results dropped) or force (predicated-off instructions run).
    #[arg(long = "lane-fault", value_name = "HOW", help_heading = "Fault (--tool inject)")]
    pub lane_fault: Option<String>,
}

impl FaultArgs {
    fn flags(&self) -> FaultFlags {
        FaultFlags {
            model: self.model.clone(),
            sm: self.sm.clone(),
            subpartition: self.subpartition.clone(),
            warps: self.warps.clone(),
            lanes: self.lanes.clone(),
            operand: self.operand.clone(),
            register: self.register.clone(),
            unit: self.unit.clone(),
            mask: self.mask.clone(),
            target: self.store.clone(),
            predicate: self.predicate.clone(),
            dim: self.dim.clone(),
            lane_fault: self.lane_fault.clone(),
        }
    }

    fn any(&self) -> bool {
        self.flags() != FaultFlags::default()
    }

    /// `xfpx run`: with `--tool inject`, or with `--tool counters` (the
    /// counters of a run with the fault in it), the validated fault.
    pub fn check_run(&self, tool: ToolKind) -> Result<Option<FaultSpec>> {
        match tool {
            ToolKind::Counters if self.any() => {
                self.flags().spec().map(Some).map_err(|e| anyhow!("invalid fault: {e}"))
            }
            ToolKind::Detect if self.any() => {
                Err(anyhow!("fault flags (--model, --sm, ...) need --tool inject (or --tool counters)"))
            }
            _ => self.check(tool),
        }
    }

    /// With `--tool inject`: the validated fault. Without: fault flags are
    /// an error.
    pub fn check(&self, tool: ToolKind) -> Result<Option<FaultSpec>> {
        match tool {
            ToolKind::Detect | ToolKind::Counters | ToolKind::Flow if self.any() => {
                Err(anyhow!("fault flags (--model, --sm, ...) need --tool inject"))
            }
            ToolKind::Detect | ToolKind::Counters | ToolKind::Flow => Ok(None),
            ToolKind::Inject => self.flags().spec().map(Some).map_err(|e| anyhow!("invalid fault: {e}")),
        }
    }
}
