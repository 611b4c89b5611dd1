//! The argument lists of the injected device functions, read from the one
//! declaration both sides share (`asm-snippets/nvidia/abi.def`).

use std::fmt;

/// What one device-function parameter receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// `guard_pred`: the instruction's guard predicate (int32).
    GuardPred,
    /// `value32`: a register, uniform register, constant-bank word or constant.
    Value32,
    /// `const32`.
    Const32,
    /// `const64`.
    Const64,
    /// `launch64`: the per-launch value.
    Launch64,
    /// `preds`: the thread's predicate registers, P0-P6 as bits 0-6.
    Preds,
}

impl ArgKind {
    fn from_name(s: &str) -> Option<ArgKind> {
        Some(match s {
            "guard_pred" => ArgKind::GuardPred,
            "value32" => ArgKind::Value32,
            "const32" => ArgKind::Const32,
            "const64" => ArgKind::Const64,
            "launch64" => ArgKind::Launch64,
            "preds" => ArgKind::Preds,
            _ => return None,
        })
    }

    /// The C types a parameter of this kind may have.
    pub fn c_types(self) -> &'static [&'static str] {
        match self {
            ArgKind::GuardPred => &["int32_t", "int"],
            ArgKind::Value32 | ArgKind::Const32 | ArgKind::Preds => &["uint32_t"],
            ArgKind::Const64 | ArgKind::Launch64 => &["uint64_t"],
        }
    }
}

/// One parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceParam {
    pub c_type: String,
    pub name: String,
    pub kind: ArgKind,
}

/// One device function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFunction {
    pub name: String,
    pub params: Vec<DeviceParam>,
}

/// A malformed declaration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiError(pub String);

impl fmt::Display for AbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device-function declaration: {}", self.0)
    }
}

impl std::error::Error for AbiError {}

fn strip_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Parse `XFPX_DEVICE_FN(name, (params), kinds...)` entries.
pub fn parse_abi(text: &str) -> Result<Vec<DeviceFunction>, AbiError> {
    let text = strip_comments(text);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("XFPX_DEVICE_FN(") {
        rest = &rest[i + "XFPX_DEVICE_FN(".len()..];
        let (name, after) = rest.split_once(',').ok_or_else(|| AbiError("entry without parameters".into()))?;
        let after = after.trim_start();
        let after = after
            .strip_prefix('(')
            .ok_or_else(|| AbiError(format!("{}: parameter list must be parenthesized", name.trim())))?;
        let (params, after) = after.split_once(')').ok_or_else(|| AbiError("unterminated parameter list".into()))?;
        let after = after.trim_start().strip_prefix(',').ok_or_else(|| AbiError("missing argument kinds".into()))?;
        let (kinds, after) = after.split_once(')').ok_or_else(|| AbiError("unterminated entry".into()))?;
        rest = after;
        let kinds: Vec<&str> = kinds.split(',').map(str::trim).filter(|k| !k.is_empty()).collect();
        let params: Vec<&str> = params.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if kinds.len() != params.len() {
            return Err(AbiError(format!(
                "{}: {} parameters but {} argument kinds",
                name.trim(),
                params.len(),
                kinds.len()
            )));
        }
        let mut ps = Vec::new();
        for (p, k) in params.iter().zip(&kinds) {
            let (ty, pname) =
                p.rsplit_once(char::is_whitespace).ok_or_else(|| AbiError(format!("parameter `{p}` has no type")))?;
            let kind = ArgKind::from_name(k).ok_or_else(|| AbiError(format!("unknown argument kind `{k}`")))?;
            if !kind.c_types().contains(&ty.trim()) {
                return Err(AbiError(format!(
                    "parameter `{p}` has kind {k}, which needs {}",
                    kind.c_types().join(" or ")
                )));
            }
            ps.push(DeviceParam { c_type: ty.trim().to_string(), name: pname.to_string(), kind });
        }
        out.push(DeviceFunction { name: name.trim().to_string(), params: ps });
    }
    if out.is_empty() {
        return Err(AbiError("no XFPX_DEVICE_FN entries".into()));
    }
    Ok(out)
}

/// The device functions of this build.
pub fn device_functions() -> Result<Vec<DeviceFunction>, AbiError> {
    parse_abi(xfpx_asm_snippets::NVIDIA_ABI_DEF)
}

/// Name of the value-check function.
pub const CHECK_VALUE: &str = "xfpx_check_value";

/// Name of the function that checks up to three values in one call (site
/// and meta packed per slot, empty slots with meta 0).
pub const CHECK_VALUES3: &str = "xfpx_check_values3";

/// Name of the counters' region function (one call per count region).
pub const COUNT_REGION: &str = "xfpx_count_region";

/// Name of the counters' guard function (lanes whose guard held).
pub const COUNT_GUARD: &str = "xfpx_count_guard";

/// Name of the counters' function for several guards at once (lanes whose
/// guards held, read from the predicates where each has its value).
pub const COUNT_GUARDS: &str = "xfpx_count_guards";

/// Name of the counters' function for a region and guards of it at once.
pub const COUNT_REGION_GUARDS: &str = "xfpx_count_region_guards";

/// Name of the fault-injection function (the inject tool).
pub const INJECT: &str = "xfpx_inject";

/// Names of the flow tool's functions: one call with sources and result,
/// and the pair for an instruction that overwrites a source (sources held
/// before it, the result after).
pub const FLOW: &str = "xfpx_flow";
pub const FLOW_HOLD: &str = "xfpx_flow_hold";
pub const FLOW_HELD: &str = "xfpx_flow_held";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_declaration_parses() {
        let fns = device_functions().expect("abi.def parses");
        let check = fns.iter().find(|f| f.name == CHECK_VALUE).expect("check function declared");
        let kinds: Vec<ArgKind> = check.params.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ArgKind::GuardPred,
                ArgKind::Value32,
                ArgKind::Value32,
                ArgKind::Const32,
                ArgKind::Const32,
                ArgKind::Const64,
                ArgKind::Launch64
            ]
        );
    }

    #[test]
    fn drift_is_detected() {
        assert!(parse_abi("XFPX_DEVICE_FN(f, (uint32_t a, uint32_t b), value32)").is_err());
        assert!(parse_abi("XFPX_DEVICE_FN(f, (uint32_t a), const64)").is_err());
        assert!(parse_abi("XFPX_DEVICE_FN(f, (uint32_t a), bogus)").is_err());
        assert!(parse_abi("nothing here").is_err());
        assert!(parse_abi("/* XFPX_DEVICE_FN(f, (uint32_t a), value32) */").is_err());
    }
}
