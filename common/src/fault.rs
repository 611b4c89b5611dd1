//! Permanent faults: the error models of Guerrero-Balaguera et al. (SC'23),
//! where a fault sits on the GPU, and the one fault spec a faulty run
//! carries.
//!
//! A [`FaultSpec`] is a model, its parameters and its location. It is
//! permanent: every dynamic instance it selects, in every launch, for the
//! whole run. The spec is written as command-line flags
//! (`--model IRA --operand src0 --register 7 --sm 3 --lanes 0-3`, see
//! [`FaultSpec::to_args`]) and as JSON (a campaign's results). Vendor
//! words: an SM is an AMD compute unit, a sub-partition (warp scheduler)
//! an AMD SIMD, a warp a wave, a lane a lane.
//!
//! Lowering a spec to probe actions ([`crate::probe::Action::Inject`]) is
//! the backends' work; [`FaultSpec::validate`] refuses, in one line, the
//! combinations no model defines.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The error models, with the paper's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ErrorModel {
    /// Incorrect operation code: a valid but different operation on the same operands (integer or FP unit).
    Ioc,
    /// Invalid operation code: the instruction cannot execute (a trap).
    Ivoc,
    /// Incorrect register addressed: a wrong but valid register as a source or the destination.
    Ira,
    /// Invalid register addressed: a register outside the thread's allocation.
    Ivra,
    /// Incorrect immediate operand: an error mask on results of instructions with an immediate.
    Iio,
    /// Incorrect memory source: an error mask on results of instructions reading constant or shared memory.
    Ims,
    /// Incorrect memory destination: an error mask on the data or the address of stores to shared memory.
    Imd,
    /// Work-flow violation: instructions writing a chosen predicate write its inverse.
    Wv,
    /// Incorrect active thread: the thread index a thread reads is replaced.
    Iat,
    /// Incorrect active warp: the thread index of every lane of a warp is replaced.
    Iaw,
    /// Incorrect active block: the block index a thread reads is replaced.
    Iac,
    /// Incorrect active lane: a lane's results of one unit ignored, or its predicated-off instructions forced on.
    Ial,
}

impl ErrorModel {
    pub const ALL: [ErrorModel; 12] = [
        ErrorModel::Ioc,
        ErrorModel::Ivoc,
        ErrorModel::Ira,
        ErrorModel::Ivra,
        ErrorModel::Iio,
        ErrorModel::Ims,
        ErrorModel::Imd,
        ErrorModel::Wv,
        ErrorModel::Iat,
        ErrorModel::Iaw,
        ErrorModel::Iac,
        ErrorModel::Ial,
    ];

    /// The paper's name (`IRA`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorModel::Ioc => "IOC",
            ErrorModel::Ivoc => "IVOC",
            ErrorModel::Ira => "IRA",
            ErrorModel::Ivra => "IVRA",
            ErrorModel::Iio => "IIO",
            ErrorModel::Ims => "IMS",
            ErrorModel::Imd => "IMD",
            ErrorModel::Wv => "WV",
            ErrorModel::Iat => "IAT",
            ErrorModel::Iaw => "IAW",
            ErrorModel::Iac => "IAC",
            ErrorModel::Ial => "IAL",
        }
    }

    /// A model by name, in any case.
    pub fn parse(s: &str) -> Result<ErrorModel, FaultError> {
        ErrorModel::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| FaultError(format!("unknown error model `{s}` (one of {})", ErrorModel::names())))
    }

    /// Every name, comma-separated.
    pub fn names() -> String {
        ErrorModel::ALL.map(ErrorModel::name).join(", ")
    }

    /// The parameters this model needs (and the only ones it accepts).
    pub fn needs(self) -> &'static [Param] {
        use Param::*;
        match self {
            ErrorModel::Ioc => &[Unit],
            ErrorModel::Ivoc => &[],
            ErrorModel::Ira => &[Operand, Register],
            ErrorModel::Ivra => &[Operand],
            ErrorModel::Iio | ErrorModel::Ims => &[Mask],
            ErrorModel::Imd => &[Mask, Target],
            ErrorModel::Wv => &[Predicate],
            ErrorModel::Iat | ErrorModel::Iaw | ErrorModel::Iac => &[Dim, Mask],
            ErrorModel::Ial => &[Unit, LaneFault],
        }
    }
}

impl fmt::Display for ErrorModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model parameter, by its flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Operand,
    Register,
    Unit,
    Mask,
    Target,
    Predicate,
    Dim,
    LaneFault,
}

impl Param {
    pub fn flag(self) -> &'static str {
        match self {
            Param::Operand => "--operand",
            Param::Register => "--register",
            Param::Unit => "--unit",
            Param::Mask => "--mask",
            Param::Target => "--store",
            Param::Predicate => "--predicate",
            Param::Dim => "--dim",
            Param::LaneFault => "--lane-fault",
        }
    }
}

/// Which operand a register-addressing fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperandSel {
    /// The n-th source: the wrong register is read (the right one is restored after).
    Src(u8),
    /// The destination: the result goes to the wrong register (the right one keeps its old value).
    Dst,
}

/// The functional unit whose instructions a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Int,
    Fp,
}

/// What IMD corrupts in a store to shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreTarget {
    Data,
    Address,
}

/// A dimension of a thread or block index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    X,
    Y,
    Z,
}

/// The two faces of IAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneFault {
    /// The lane's results of the unit are dropped (the destination keeps its old value).
    Ignore,
    /// The lane's predicated-off instructions of the unit execute.
    Force,
}

/// The parameters of a model; those it does not need are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operand: Option<OperandSel>,
    /// The wrong register (IRA), an index into the per-lane file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub register: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// The error mask, XORed into a value (IIO, IMS, IMD) or an index (IAT, IAW, IAC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<StoreTarget>,
    /// The predicate register whose writes are inverted (WV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dim: Option<Dim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane_fault: Option<LaneFault>,
}

/// Lanes of a warp or wave, as a bit set (lane n is bit n; up to 64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LaneSet(pub u64);

impl LaneSet {
    pub const ALL: LaneSet = LaneSet(u64::MAX);

    /// Lanes from a list like `0-3,8,10-12`.
    pub fn parse(s: &str) -> Result<LaneSet, FaultError> {
        let mut bits = 0u64;
        for (a, b) in parse_ranges("--lanes", s)? {
            if b > 63 {
                return Err(FaultError(format!("invalid --lanes `{s}`: lanes are 0 to 63")));
            }
            for l in a..=b {
                bits |= 1 << l;
            }
        }
        Ok(LaneSet(bits))
    }

    pub fn contains(self, lane: u32) -> bool {
        lane < 64 && self.0 >> lane & 1 == 1
    }

    pub fn count(self) -> u32 {
        self.0.count_ones()
    }
}

impl fmt::Display for LaneSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lanes: Vec<u32> = (0..64).filter(|&l| self.contains(l)).collect();
        f.write_str(&format_ranges(&lanes))
    }
}

/// Where a fault sits: every thread it touches runs on this SM (compute
/// unit), on this sub-partition (SIMD) when one is named, in one of these
/// warps (waves, by their index among those resident on the sub-partition)
/// when named, in one of these lanes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultLocation {
    pub sm: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subpartition: Option<u32>,
    /// Inclusive ranges of warp slots; `None`: every warp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warps: Option<Vec<(u32, u32)>>,
    pub lanes: LaneSet,
}

impl FaultLocation {
    /// Every thread of SM `sm`.
    pub fn sm(sm: u32) -> FaultLocation {
        FaultLocation { sm, subpartition: None, warps: None, lanes: LaneSet::ALL }
    }

    /// Whether a thread at (sm, sub-partition, warp slot, lane) is selected.
    pub fn selects(&self, sm: u32, subpartition: u32, warp: u32, lane: u32) -> bool {
        sm == self.sm
            && self.subpartition.is_none_or(|s| s == subpartition)
            && self.warps.as_ref().is_none_or(|w| w.iter().any(|&(a, b)| (a..=b).contains(&warp)))
            && self.lanes.contains(lane)
    }
}

/// One permanent fault: what it does and where.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultSpec {
    pub model: ErrorModel,
    #[serde(default)]
    pub params: FaultParams,
    pub location: FaultLocation,
}

/// A refused fault, as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FaultError(pub String);

fn bad(msg: impl Into<String>) -> FaultError {
    FaultError(msg.into())
}

/// Inclusive ranges from `0-3,8`.
pub fn parse_ranges(flag: &str, s: &str) -> Result<Vec<(u32, u32)>, FaultError> {
    let invalid = || bad(format!("invalid {flag} `{s}`: expected a list like 0-3,8"));
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: u32 = a.parse().map_err(|_| invalid())?;
        let b: u32 = b.parse().map_err(|_| invalid())?;
        if a > b {
            return Err(bad(format!("invalid {flag} `{s}`: range {a}-{b} is empty")));
        }
        out.push((a, b));
    }
    Ok(out)
}

/// `0-3,8` from sorted numbers.
fn format_ranges(values: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { values[i].to_string() } else { format!("{}-{}", values[i], values[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// A number in decimal or `0x` hexadecimal.
pub fn parse_number(flag: &str, s: &str) -> Result<u64, FaultError> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| bad(format!("invalid {flag} `{s}`: expected a number (decimal or 0x hexadecimal)")))
}

/// The fault flags as given on a command line, before validation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultFlags {
    pub model: Option<String>,
    pub sm: Option<String>,
    pub subpartition: Option<String>,
    pub warps: Option<String>,
    pub lanes: Option<String>,
    pub operand: Option<String>,
    pub register: Option<String>,
    pub unit: Option<String>,
    pub mask: Option<String>,
    pub target: Option<String>,
    pub predicate: Option<String>,
    pub dim: Option<String>,
    pub lane_fault: Option<String>,
}

fn one_of<T: Copy>(flag: &str, s: &str, choices: &[(&str, T)]) -> Result<T, FaultError> {
    choices.iter().find(|(n, _)| n.eq_ignore_ascii_case(s.trim())).map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        bad(format!("invalid {flag} `{s}`: one of {}", names.join(", ")))
    })
}

impl FaultFlags {
    /// Which parameter flags were given.
    fn given(&self) -> Vec<Param> {
        let all = [
            (Param::Operand, &self.operand),
            (Param::Register, &self.register),
            (Param::Unit, &self.unit),
            (Param::Mask, &self.mask),
            (Param::Target, &self.target),
            (Param::Predicate, &self.predicate),
            (Param::Dim, &self.dim),
            (Param::LaneFault, &self.lane_fault),
        ];
        all.into_iter().filter(|(_, v)| v.is_some()).map(|(p, _)| p).collect()
    }

    /// The spec these flags describe, validated.
    pub fn spec(&self) -> Result<FaultSpec, FaultError> {
        let model = ErrorModel::parse(self.model.as_deref().ok_or_else(|| bad("a fault needs --model"))?)?;
        // what applies to the model is checked before what a value says
        for p in self.given() {
            if !model.needs().contains(&p) {
                return Err(bad(format!("{} does not apply to the {model} model", p.flag())));
            }
        }
        let sm = self.sm.as_deref().ok_or_else(|| bad("a fault needs --sm (the SM or compute unit it sits on)"))?;
        let num32 = |flag: &str, s: &str| -> Result<u32, FaultError> {
            u32::try_from(parse_number(flag, s)?).map_err(|_| bad(format!("invalid {flag} `{s}`: too large")))
        };
        let location = FaultLocation {
            sm: num32("--sm", sm)?,
            subpartition: self.subpartition.as_deref().map(|s| num32("--subpartition", s)).transpose()?,
            warps: self.warps.as_deref().map(|s| parse_ranges("--warps", s)).transpose()?,
            lanes: self.lanes.as_deref().map(LaneSet::parse).transpose()?.unwrap_or(LaneSet::ALL),
        };
        let operand = self
            .operand
            .as_deref()
            .map(|s| match s.trim() {
                "dst" => Ok(OperandSel::Dst),
                o => o
                    .strip_prefix("src")
                    .and_then(|n| n.parse::<u8>().ok())
                    .map(OperandSel::Src)
                    .ok_or_else(|| bad(format!("invalid --operand `{s}`: src0, src1, ... or dst"))),
            })
            .transpose()?;
        let register = self
            .register
            .as_deref()
            .map(|s| {
                u16::try_from(parse_number("--register", s)?)
                    .map_err(|_| bad(format!("invalid --register `{s}`: too large")))
            })
            .transpose()?;
        let predicate = self
            .predicate
            .as_deref()
            .map(|s| {
                u8::try_from(parse_number("--predicate", s)?)
                    .map_err(|_| bad(format!("invalid --predicate `{s}`: too large")))
            })
            .transpose()?;
        let params = FaultParams {
            operand,
            register,
            unit: self
                .unit
                .as_deref()
                .map(|s| one_of("--unit", s, &[("int", Unit::Int), ("fp", Unit::Fp)]))
                .transpose()?,
            mask: self.mask.as_deref().map(|s| parse_number("--mask", s)).transpose()?,
            target: self
                .target
                .as_deref()
                .map(|s| one_of("--store", s, &[("data", StoreTarget::Data), ("address", StoreTarget::Address)]))
                .transpose()?,
            predicate,
            dim: self
                .dim
                .as_deref()
                .map(|s| one_of("--dim", s, &[("x", Dim::X), ("y", Dim::Y), ("z", Dim::Z)]))
                .transpose()?,
            lane_fault: self
                .lane_fault
                .as_deref()
                .map(|s| one_of("--lane-fault", s, &[("ignore", LaneFault::Ignore), ("force", LaneFault::Force)]))
                .transpose()?,
        };
        let spec = FaultSpec { model, params, location };
        spec.validate()?;
        Ok(spec)
    }
}

impl FaultSpec {
    /// Refuse what no model defines (in one line).
    pub fn validate(&self) -> Result<(), FaultError> {
        let m = self.model;
        let p = &self.params;
        let loc = &self.location;
        let given = [
            (Param::Operand, p.operand.is_some()),
            (Param::Register, p.register.is_some()),
            (Param::Unit, p.unit.is_some()),
            (Param::Mask, p.mask.is_some()),
            (Param::Target, p.target.is_some()),
            (Param::Predicate, p.predicate.is_some()),
            (Param::Dim, p.dim.is_some()),
            (Param::LaneFault, p.lane_fault.is_some()),
        ];
        for (param, set) in given {
            match (set, m.needs().contains(&param)) {
                (true, false) => return Err(bad(format!("{} does not apply to the {m} model", param.flag()))),
                (false, true) => return Err(bad(format!("the {m} model needs {}", param.flag()))),
                _ => {}
            }
        }
        if p.mask == Some(0) {
            return Err(bad(format!("the {m} model needs a non-zero --mask (a zero mask changes nothing)")));
        }
        if loc.lanes.0 == 0 {
            return Err(bad("the fault selects no lane"));
        }
        if matches!(&loc.warps, Some(w) if w.is_empty()) {
            return Err(bad("the fault selects no warp"));
        }
        match m {
            ErrorModel::Iat if loc.lanes.0 & 0xffff_ffff == 0xffff_ffff => {
                Err(bad("IAT keeps at least one thread of the warp: name --lanes that leave one of 0-31 out"))
            }
            ErrorModel::Iaw if loc.lanes != LaneSet::ALL => {
                Err(bad("IAW replaces the index of every lane of a warp: choose warps with --warps, not --lanes"))
            }
            ErrorModel::Iaw if p.mask.is_some_and(|k| k % 32 != 0) => {
                Err(bad("IAW moves a whole warp: --mask must be a multiple of 32 (of 64 on wave64)"))
            }
            _ => Ok(()),
        }
    }

    /// The command-line flags that describe this spec (what `xfpx run
    /// --tool inject` reads back into the same spec).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec!["--model".to_string(), self.model.name().to_string()];
        let mut push = |flag: &str, v: String| {
            a.push(flag.to_string());
            a.push(v);
        };
        let p = &self.params;
        if let Some(o) = p.operand {
            push(
                "--operand",
                match o {
                    OperandSel::Src(n) => format!("src{n}"),
                    OperandSel::Dst => "dst".into(),
                },
            );
        }
        if let Some(r) = p.register {
            push("--register", r.to_string());
        }
        if let Some(u) = p.unit {
            push("--unit", if u == Unit::Int { "int" } else { "fp" }.into());
        }
        if let Some(k) = p.mask {
            push("--mask", format!("{k:#x}"));
        }
        if let Some(t) = p.target {
            push("--store", if t == StoreTarget::Data { "data" } else { "address" }.into());
        }
        if let Some(n) = p.predicate {
            push("--predicate", n.to_string());
        }
        if let Some(d) = p.dim {
            push(
                "--dim",
                match d {
                    Dim::X => "x",
                    Dim::Y => "y",
                    Dim::Z => "z",
                }
                .into(),
            );
        }
        if let Some(f) = p.lane_fault {
            push("--lane-fault", if f == LaneFault::Ignore { "ignore" } else { "force" }.into());
        }
        let loc = &self.location;
        push("--sm", loc.sm.to_string());
        if let Some(s) = loc.subpartition {
            push("--subpartition", s.to_string());
        }
        if let Some(w) = &loc.warps {
            let parts: Vec<String> =
                w.iter().map(|&(x, y)| if x == y { x.to_string() } else { format!("{x}-{y}") }).collect();
            push("--warps", parts.join(","));
        }
        if loc.lanes != LaneSet::ALL {
            push("--lanes", loc.lanes.to_string());
        }
        a
    }

    /// The spec as one JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<FaultSpec, FaultError> {
        let spec: FaultSpec = serde_json::from_str(text).map_err(|e| bad(format!("invalid fault spec: {e}")))?;
        spec.validate()?;
        Ok(spec)
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_args().join(" "))
    }
}

#[cfg(test)]
mod tests;
