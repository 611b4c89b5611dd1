//! The launch description: a JSON file naming a code object (or offload
//! bundle) and kernel, the grid, the buffers with their initial contents, the
//! kernel arguments in order, and the buffers to write out. See the crate's
//! README for the format. Paths are relative to the launch file; `{target}`
//! in the code-object path is replaced by the chosen target.
//!
//! ```json
//! {
//!   "code_object": "../{target}/elem_f32.co",
//!   "kernel": "saxpy",
//!   "grid": [4, 1, 1],
//!   "block": [256, 1, 1],
//!   "buffers": {
//!     "x":   {"elem": "f32", "count": 1000, "init": {"random": {"seed": 7, "min": -1, "max": 1}},
//!             "specials": [{"index": 3, "value": "nan"}, {"index": 9, "value": "-inf"}]},
//!     "out": {"elem": "f32", "count": 1000, "init": "zero"}
//!   },
//!   "args": [{"buffer": "out"}, {"buffer": "x"}, {"f32": 2.5}, {"u32": 1000}],
//!   "outputs": ["out"]
//! }
//! ```
//! An optional `"targets": ["gfx90a", ...]` names the only targets whose code
//! object has the kernel; an optional `"compute_units": N` the compute units
//! the emulator places workgroups on (see [`crate::placement`]).
//! Format 2 (`"format": 2`; files without the key are format 1) adds
//! launches captured on another GPU (`xfpx run --capture`): `"captured"`
//! (where), `"params"` (the raw parameter bytes and their layout, in place
//! of `"args"`; laid out against the AMD kernel's metadata by
//! [`crate::captured`]), per buffer its `"address"` on the capturing
//! device and `"after"` (its contents after the launch there); the code
//! object is then optional (`--code-object` gives the AMD build).
//! `init` is `"zero"`, `{"constant": v}`, `{"range": {"start": a, "step": b}}`,
//! `{"random": {"seed": s, "min": a, "max": b}}` or `{"file": "path"}` (raw
//! little-endian bytes). `specials` values: `nan`, `inf`, `-inf`, `zero`,
//! `-zero`, `subnormal`, `-subnormal`, `max`, or a number.

use crate::fpu::f64_to_f16;
use serde_json::Value;
use std::path::{Path, PathBuf};
use xfpx_common::capture::LAUNCH_FORMAT as FORMAT;

/// Element types of buffers and scalar arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    U8,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

impl Elem {
    pub fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "u8" => Elem::U8,
            "i32" => Elem::I32,
            "u32" => Elem::U32,
            "i64" => Elem::I64,
            "u64" => Elem::U64,
            "f16" => Elem::F16,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }
    pub fn size(self) -> usize {
        match self {
            Elem::U8 => 1,
            Elem::F16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Elem::U8 => "u8",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
            Elem::F16 => "f16",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }
    /// Encodes a number as this element type.
    pub fn encode(self, v: f64) -> Vec<u8> {
        match self {
            Elem::U8 => vec![v as u8],
            Elem::I32 => (v as i32).to_le_bytes().to_vec(),
            Elem::U32 => (v as u32).to_le_bytes().to_vec(),
            Elem::I64 => (v as i64).to_le_bytes().to_vec(),
            Elem::U64 => (v as u64).to_le_bytes().to_vec(),
            Elem::F16 => f64_to_f16(v).to_le_bytes().to_vec(),
            Elem::F32 => (v as f32).to_le_bytes().to_vec(),
            Elem::F64 => v.to_le_bytes().to_vec(),
        }
    }
}

/// A buffer of the launch.
#[derive(Debug, Clone)]
pub struct BufferSpec {
    pub name: String,
    pub elem: Elem,
    pub count: usize,
    pub bytes: Vec<u8>,
    /// Its address on the device it was captured on (format 2).
    pub address: Option<u64>,
}

pub use crate::arguments::ArgSpec;

/// A parsed launch description with buffer contents materialised.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The launch file's format (1: no `"format"` key).
    pub format: u32,
    /// The code object's path (empty: none named, as in a capture from
    /// another vendor's GPU).
    pub code_object: String,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_lds: u32,
    pub buffers: Vec<BufferSpec>,
    pub args: Vec<ArgSpec>,
    pub outputs: Vec<String>,
    /// A launch captured on a GPU: its raw parameters (in place of `args`).
    pub params: Option<crate::captured::CapturedParams>,
    /// Where it was captured (format 2's `"captured"`).
    pub captured: Option<crate::captured::CapturedOn>,
    /// The targets whose code object has the kernel (`"targets"`; absent:
    /// every target).
    pub targets: Option<Vec<String>>,
    /// Compute units the emulator places workgroups on (`"compute_units"`;
    /// absent: the target's, see [`crate::placement`]).
    pub compute_units: Option<u32>,
    /// Private bytes per work-item given to a kernel with a dynamic stack
    /// (`"stack_bytes"`, format 3; absent: the HIP runtime's default,
    /// [`crate::dispatch::DEFAULT_STACK_BYTES`]).
    pub stack_bytes: Option<u32>,
    /// Reads up to this many bytes before or past a buffer return zeros
    /// instead of faulting (`"guard_bytes"`, format 3; absent: 0).
    pub guard_bytes: Option<u64>,
    /// Directory the relative paths are resolved against.
    pub dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError(pub String);

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The largest stack per work-item a launch may ask for (the hardware's
/// scratch limit per lane is of this order).
pub const MAX_STACK_BYTES: u64 = 1 << 20;
/// The largest guard zone around buffers a launch may ask for.
pub const MAX_GUARD_BYTES: u64 = 1 << 20;

pub(crate) fn bad<T>(msg: impl Into<String>) -> Result<T, LaunchError> {
    Err(LaunchError(msg.into()))
}

/// Deterministic generator for `random` (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(2654435761).wrapping_add(1) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(2685821657736338717)
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn num(v: &Value, what: &str) -> Result<f64, LaunchError> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| LaunchError(format!("{what}: not a number"))),
        Value::String(s) => special(s).ok_or_else(|| LaunchError(format!("{what}: unknown value {s:?}"))),
        _ => bad(format!("{what}: expected a number")),
    }
}

fn special(s: &str) -> Option<f64> {
    Some(match s {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "zero" => 0.0,
        "-zero" => -0.0,
        _ => return s.parse().ok(),
    })
}

pub(crate) fn special_bytes(elem: Elem, v: &Value, what: &str) -> Result<Vec<u8>, LaunchError> {
    if let Value::String(s) = v {
        let neg = s.starts_with('-');
        let bytes = match (s.trim_start_matches('-'), elem) {
            ("subnormal", Elem::F32) => Some(f32::from_bits(1 | 0x0000_1000).to_le_bytes().to_vec()),
            ("subnormal", Elem::F64) => Some(f64::from_bits(0x0000_1000_0000_0001).to_le_bytes().to_vec()),
            ("subnormal", Elem::F16) => Some(0x0011u16.to_le_bytes().to_vec()),
            ("max", Elem::F32) => Some(f32::MAX.to_le_bytes().to_vec()),
            ("max", Elem::F64) => Some(f64::MAX.to_le_bytes().to_vec()),
            ("max", Elem::F16) => Some(0x7BFFu16.to_le_bytes().to_vec()),
            _ => None,
        };
        if let Some(mut b) = bytes {
            if neg {
                let last = b.len() - 1;
                b[last] |= 0x80;
            }
            return Ok(b);
        }
    }
    Ok(elem.encode(num(v, what)?))
}

fn triple(v: Option<&Value>, what: &str) -> Result<[u32; 3], LaunchError> {
    let Some(Value::Array(a)) = v else {
        return bad(format!("launch: \"{what}\" must be an array of 1 to 3 positive integers"));
    };
    if a.is_empty() || a.len() > 3 {
        return bad(format!("launch: \"{what}\" must have 1 to 3 entries"));
    }
    let mut out = [1u32; 3];
    for (i, x) in a.iter().enumerate() {
        match x.as_u64() {
            Some(n) if n > 0 && n <= u32::MAX as u64 => out[i] = n as u32,
            _ => return bad(format!("launch: \"{what}\"[{i}] must be a positive integer")),
        }
    }
    Ok(out)
}

impl Launch {
    /// Waves the launch runs: workgroups times the waves (of 64
    /// work-items) of each.
    pub fn waves(&self) -> u64 {
        let workgroups: u64 = self.grid.iter().map(|&n| u64::from(n)).product();
        let threads: u64 = self.block.iter().map(|&n| u64::from(n)).product();
        workgroups * threads.div_ceil(64)
    }

    /// Reads and parses a launch file.
    pub fn load(path: &Path) -> Result<Launch, LaunchError> {
        let text = xfpx_common::limits::read_text(path, xfpx_common::limits::LAUNCH)
            .map_err(|e| LaunchError(format!("cannot read launch file {}: {e}", path.display())))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Launch::parse(&text, &dir)
    }

    /// Parses launch JSON; relative paths resolve against `dir`.
    pub fn parse(text: &str, dir: &Path) -> Result<Launch, LaunchError> {
        let v: Value = serde_json::from_str(text).map_err(|e| LaunchError(format!("malformed launch file: {e}")))?;
        let Value::Object(o) = &v else { return bad("malformed launch file: expected a JSON object") };
        for key in o.keys() {
            if !matches!(
                key.as_str(),
                "code_object"
                    | "kernel"
                    | "grid"
                    | "block"
                    | "dynamic_lds"
                    | "buffers"
                    | "args"
                    | "outputs"
                    | "targets"
                    | "compute_units"
                    | "stack_bytes"
                    | "guard_bytes"
                    | "format"
                    | "captured"
                    | "params"
            ) {
                return bad(format!("launch: unknown key \"{key}\""));
            }
        }
        let format = match o.get("format") {
            None => 1,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=u64::from(FORMAT)).contains(&n) => n as u32,
                Some(n) if n > u64::from(FORMAT) => {
                    return bad(format!(
                        "launch file format {n} is newer than this xfpx reads (formats 1 to {FORMAT}): it was \
                         written by another version of xfpx"
                    ))
                }
                _ => return bad("launch: \"format\" must be a positive integer"),
            },
        };
        if format < 2 {
            if let Some(key) = ["captured", "params"].into_iter().find(|k| o.contains_key(*k)) {
                return bad(format!("launch: \"{key}\" needs \"format\": 2"));
            }
        }
        if format < 3 {
            if let Some(key) = ["stack_bytes", "guard_bytes"].into_iter().find(|k| o.contains_key(*k)) {
                return bad(format!("launch: \"{key}\" needs \"format\": 3"));
            }
        }
        let code_object = match o.get("code_object") {
            Some(Value::String(p)) => p.clone(),
            None if format >= 2 => String::new(),
            _ => return bad("launch: \"code_object\" (a path) is required"),
        };
        let kernel = o
            .get("kernel")
            .and_then(Value::as_str)
            .ok_or_else(|| LaunchError("launch: \"kernel\" (a name) is required".into()))?
            .to_string();
        let grid = triple(o.get("grid"), "grid")?;
        let block = triple(o.get("block"), "block")?;
        let dynamic_lds = match o.get("dynamic_lds") {
            None => 0,
            Some(x) => x
                .as_u64()
                .filter(|&n| n <= 65536)
                .ok_or_else(|| LaunchError("launch: \"dynamic_lds\" must be at most 65536".into()))?
                as u32,
        };
        let mut buffers = Vec::new();
        if let Some(b) = o.get("buffers") {
            let Value::Object(bo) = b else { return bad("launch: \"buffers\" must be an object") };
            for (name, spec) in bo {
                buffers.push(parse_buffer(name, spec, dir, format)?);
            }
        }
        let params = match o.get("params") {
            Some(p) => Some(crate::captured::parse_params(p, dir)?),
            None => None,
        };
        let captured = o.get("captured").map(crate::captured::parse_captured).transpose()?;
        let mut args = Vec::new();
        let none = Vec::new();
        let al: &Vec<Value> = match (o.get("args"), &params) {
            (Some(Value::Array(al)), None) => al,
            (Some(_), Some(_)) => return bad("launch: \"args\" and \"params\" exclude each other"),
            (None, Some(_)) => &none,
            _ => return bad("launch: \"args\" (an array) is required"),
        };
        let names: Vec<&str> = buffers.iter().map(|b| b.name.as_str()).collect();
        for (i, a) in al.iter().enumerate() {
            args.push(crate::arguments::parse(a, i, &names, format)?);
        }
        let mut outputs = Vec::new();
        if let Some(out) = o.get("outputs") {
            let Value::Array(ol) = out else { return bad("launch: \"outputs\" must be an array of buffer names") };
            for x in ol {
                let name = x
                    .as_str()
                    .ok_or_else(|| LaunchError("launch: \"outputs\" must be an array of buffer names".into()))?;
                if !buffers.iter().any(|b| b.name == name) {
                    return bad(format!("launch: output names unknown buffer \"{name}\""));
                }
                outputs.push(name.to_string());
            }
        }
        let targets = match o.get("targets") {
            None => None,
            Some(Value::Array(tl)) if tl.iter().all(Value::is_string) => {
                Some(tl.iter().filter_map(Value::as_str).map(str::to_string).collect())
            }
            Some(_) => return bad("launch: \"targets\" must be an array of processor names"),
        };
        let compute_units = match o.get("compute_units") {
            None => None,
            Some(x) => Some(
                x.as_u64()
                    .filter(|&n| (1..=4096).contains(&n))
                    .ok_or_else(|| LaunchError("launch: \"compute_units\" must be from 1 to 4096".into()))?
                    as u32,
            ),
        };
        let stack_bytes = match o.get("stack_bytes") {
            None => None,
            Some(x) => Some(
                x.as_u64()
                    .filter(|&n| n <= MAX_STACK_BYTES)
                    .ok_or_else(|| LaunchError(format!("launch: \"stack_bytes\" must be at most {MAX_STACK_BYTES}")))?
                    as u32,
            ),
        };
        let guard_bytes =
            match o.get("guard_bytes") {
                None => None,
                Some(x) => Some(x.as_u64().filter(|&n| n <= MAX_GUARD_BYTES).ok_or_else(|| {
                    LaunchError(format!("launch: \"guard_bytes\" must be at most {MAX_GUARD_BYTES}"))
                })?),
            };
        Ok(Launch {
            format,
            params,
            captured,
            compute_units,
            stack_bytes,
            guard_bytes,
            code_object,
            kernel,
            grid,
            block,
            dynamic_lds,
            buffers,
            args,
            outputs,
            targets,
            dir: dir.to_path_buf(),
        })
    }

    /// The code object file the launch names (`{target}` filled in), or
    /// `explicit` when given. A captured launch names none: the AMD build
    /// must be given.
    pub fn code_object_path(&self, target: Option<&str>, explicit: Option<&Path>) -> Result<PathBuf, LaunchError> {
        if let Some(p) = explicit {
            return Ok(p.to_path_buf());
        }
        if self.code_object.is_empty() {
            let on = self.captured.as_ref().map_or_else(String::new, |c| format!(" (it was captured on {})", c.vendor));
            return bad(format!("the launch names no code object{on}: give the AMD build with --code-object"));
        }
        let rel = if self.code_object.contains("{target}") {
            let t = target.ok_or_else(|| {
                LaunchError(format!("the launch's code object {} needs a target (--target)", self.code_object))
            })?;
            self.code_object.replace("{target}", t)
        } else {
            self.code_object.clone()
        };
        Ok(self.dir.join(rel))
    }

    /// Whether the launch is meant for `target` (its `"targets"` list, if
    /// any, names it).
    pub fn runs_on(&self, target: &str) -> bool {
        self.targets.as_ref().is_none_or(|t| t.iter().any(|x| x == target))
    }
}

fn parse_buffer(name: &str, spec: &Value, dir: &Path, format: u32) -> Result<BufferSpec, LaunchError> {
    let what = format!("buffer \"{name}\"");
    let Value::Object(o) = spec else { return bad(format!("launch: {what} must be an object")) };
    for key in o.keys() {
        let known = matches!(key.as_str(), "elem" | "count" | "init" | "specials")
            || (format >= 2 && matches!(key.as_str(), "address" | "after"));
        if !known {
            return bad(format!("launch: {what}: unknown key \"{key}\""));
        }
    }
    let address = match o.get("address") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(xfpx_common::capture::parse_address)
                .or_else(|| v.as_u64())
                .ok_or_else(|| LaunchError(format!("launch: {what}: \"address\" must be an address (\"0x...\")")))?,
        ),
    };
    if o.get("after").is_some_and(|a| !a.is_string()) {
        return bad(format!("launch: {what}: \"after\" must be a file name"));
    }
    let elem = o.get("elem").and_then(Value::as_str).and_then(Elem::parse).ok_or_else(|| {
        LaunchError(format!("launch: {what}: \"elem\" must be one of u8 i32 u32 i64 u64 f16 f32 f64"))
    })?;
    let count = o
        .get("count")
        .and_then(Value::as_u64)
        .filter(|&n| n <= 1 << 28)
        .ok_or_else(|| LaunchError(format!("launch: {what}: \"count\" must be an integer up to 2^28")))?
        as usize;
    let es = elem.size();
    let mut bytes = Vec::with_capacity(count * es);
    match o.get("init").unwrap_or(&Value::String("zero".into())) {
        Value::String(s) if s == "zero" => bytes.resize(count * es, 0),
        Value::Object(io) if io.len() == 1 => {
            let Some((k, val)) = io.iter().next() else { return bad(format!("launch: {what}: empty init")) };
            match k.as_str() {
                "constant" => {
                    let b = special_bytes(elem, val, &what)?;
                    for _ in 0..count {
                        bytes.extend_from_slice(&b);
                    }
                }
                "range" => {
                    let start = num(val.get("start").unwrap_or(&Value::from(0)), &what)?;
                    let step = num(val.get("step").unwrap_or(&Value::from(1)), &what)?;
                    for i in 0..count {
                        bytes.extend(elem.encode(start + step * i as f64));
                    }
                }
                "random" => {
                    let seed = val
                        .get("seed")
                        .and_then(Value::as_u64)
                        .ok_or_else(|| LaunchError(format!("launch: {what}: random needs an integer \"seed\"")))?;
                    let lo = num(val.get("min").unwrap_or(&Value::from(0)), &what)?;
                    let hi = num(val.get("max").unwrap_or(&Value::from(1)), &what)?;
                    let mut r = Rng::new(seed);
                    for _ in 0..count {
                        let x = r.uniform(lo, hi);
                        let x = if matches!(elem, Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64 | Elem::U8) {
                            x.floor()
                        } else {
                            x
                        };
                        bytes.extend(elem.encode(x));
                    }
                }
                "file" => {
                    let p =
                        val.as_str().ok_or_else(|| LaunchError(format!("launch: {what}: \"file\" must be a path")))?;
                    let path = dir.join(p);
                    // No more than the buffer holds is read.
                    let limit = xfpx_common::limits::Limit { what: "this buffer", bytes: (count * es) as u64 };
                    let data = xfpx_common::limits::read(&path, limit)
                        .map_err(|e| LaunchError(format!("launch: {what}: cannot read {}: {e}", path.display())))?;
                    if data.len() != count * es {
                        return bad(format!(
                            "launch: {what}: {} holds {} bytes, expected {} ({} x {})",
                            path.display(),
                            data.len(),
                            count * es,
                            count,
                            elem.name()
                        ));
                    }
                    bytes = data;
                }
                _ => return bad(format!("launch: {what}: unknown init \"{k}\"")),
            }
        }
        _ => return bad(format!("launch: {what}: \"init\" must be \"zero\" or an object with one key")),
    }
    if let Some(sp) = o.get("specials") {
        let Value::Array(list) = sp else { return bad(format!("launch: {what}: \"specials\" must be an array")) };
        for s in list {
            let idx = s
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| LaunchError(format!("launch: {what}: special needs an \"index\"")))?
                as usize;
            if idx >= count {
                return bad(format!("launch: {what}: special index {idx} is out of range (count {count})"));
            }
            let v = s.get("value").ok_or_else(|| LaunchError(format!("launch: {what}: special needs a \"value\"")))?;
            let b = special_bytes(elem, v, &what)?;
            bytes[idx * es..(idx + 1) * es].copy_from_slice(&b);
        }
    }
    Ok(BufferSpec { name: name.to_string(), elem, count, bytes, address })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Launch, LaunchError> {
        Launch::parse(s, Path::new("."))
    }

    #[test]
    fn generators_and_specials() {
        let l = parse(
            r#"{"code_object": "a.co", "kernel": "k", "grid": [2], "block": [64],
                "buffers": {"x": {"elem": "f32", "count": 8, "init": {"range": {"start": 1, "step": 0.5}},
                                  "specials": [{"index": 2, "value": "nan"}, {"index": 3, "value": "-inf"},
                                               {"index": 4, "value": "subnormal"}, {"index": 5, "value": "-zero"}]},
                            "r": {"elem": "i32", "count": 4, "init": {"random": {"seed": 3, "min": -5, "max": 5}}},
                            "c": {"elem": "f16", "count": 2, "init": {"constant": 1.5}}},
                "args": [{"buffer": "x"}, {"u32": 8}], "outputs": ["x"]}"#,
        )
        .expect("parses");
        let x: Vec<f32> = l.buffers[2].bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(l.buffers[2].name, "x");
        assert_eq!(x[0], 1.0);
        assert_eq!(x[1], 1.5);
        assert!(x[2].is_nan());
        assert_eq!(x[3], f32::NEG_INFINITY);
        assert!(x[4].is_subnormal());
        assert!(x[5] == 0.0 && x[5].is_sign_negative());
        assert_eq!(x[6], 4.0);
        assert_eq!(l.buffers[0].bytes, [0x00, 0x3E, 0x00, 0x3E]); // f16 1.5
        let r: Vec<i32> = l.buffers[1].bytes.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert!(r.iter().all(|&v| (-5..5).contains(&v)));
        assert_eq!(l.grid, [2, 1, 1]);
        assert_eq!(l.args[1], ArgSpec::Scalar(Elem::U32, 8u32.to_le_bytes().to_vec()));
    }

    #[test]
    fn errors_are_one_line() {
        for (text, want) in [
            ("{", "malformed launch file"),
            ("[]", "expected a JSON object"),
            (r#"{"kernel": "k"}"#, "\"code_object\""),
            (r#"{"code_object": "a", "kernel": "k", "grid": [0], "block": [1], "args": []}"#, "positive integer"),
            (
                r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [{"buffer": "nope"}]}"#,
                "unknown buffer",
            ),
            (
                r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [{"f31": 1}]}"#,
                "unknown argument type",
            ),
            (
                r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [], "extra": 1}"#,
                "unknown key",
            ),
            (
                r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [],
                 "buffers": {"b": {"elem": "f32", "count": 2, "specials": [{"index": 2, "value": "nan"}]}}}"#,
                "out of range",
            ),
            (
                r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [], "targets": "gfx90a"}"#,
                "\"targets\" must be",
            ),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.0.contains(want), "{e} lacks {want}");
            assert!(!e.0.contains('\n'), "{e}");
        }
    }

    #[test]
    fn format_two_captured_launches() {
        let dir = std::env::temp_dir().join(format!("xfpx-launch-format2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("params.bin"), [1u8; 12]).expect("write");
        std::fs::write(dir.join("a.before.bin"), [0u8; 8]).expect("write");
        let captured = r#"{"format": 2, "kernel": "k", "grid": [1], "block": [64],
            "captured": {"vendor": "nvidia", "device": "H100", "target": "sm_90", "launch": 0},
            "params": {"file": "params.bin", "size": 12, "layout": [{"offset": 0, "size": 8}, {"offset": 8, "size": 4}]},
            "buffers": {"a": {"elem": "f32", "count": 2, "address": "0x7f0000000000",
                              "init": {"file": "a.before.bin"}, "after": "a.after.bin"}},
            "outputs": ["a"]}"#;
        let l = Launch::parse(captured, &dir).expect("format 2 parses");
        assert_eq!(l.format, 2);
        assert_eq!(l.buffers[0].address, Some(0x7f00_0000_0000));
        let p = l.params.as_ref().expect("params");
        assert_eq!((p.bytes.len(), p.layout.len()), (12, 2));
        assert_eq!(l.captured.as_ref().map(|c| c.vendor.as_str()), Some("nvidia"));
        let e = l.code_object_path(Some("gfx90a"), None).expect_err("no code object").0;
        assert_eq!(
            e,
            "the launch names no code object (it was captured on nvidia): give the AMD build with --code-object"
        );
        assert_eq!(l.code_object_path(None, Some(Path::new("app.co"))).expect("explicit"), Path::new("app.co"));
        // truncated parameters, a newer format, keys of format 2 in format 1
        for (text, want) in [
            (
                captured.replace("\"size\": 12", "\"size\": 16"),
                "holds 12 bytes, expected 16 (the capture is truncated)",
            ),
            (
                captured.replace("\"format\": 2", "\"format\": 4"),
                "launch file format 4 is newer than this xfpx reads (formats 1 to 3)",
            ),
            (captured.replace("\"format\": 2,", ""), "\"captured\" needs \"format\": 2"),
            (
                captured.replace("\"outputs\"", "\"args\": [], \"outputs\""),
                "\"args\" and \"params\" exclude each other",
            ),
            (
                captured.replace("\"address\": \"0x7f0000000000\"", "\"address\": \"far\""),
                "\"address\" must be an address",
            ),
        ] {
            let e = Launch::parse(&text, &dir).expect_err(want).0;
            assert!(e.contains(want) && !e.contains('\n'), "{e}");
        }
        let old = r#"{"code_object": "a", "kernel": "k", "grid": [1], "block": [1], "args": [],
                      "buffers": {"b": {"elem": "f32", "count": 1, "address": "0x10"}}}"#;
        assert!(parse(old).expect_err("format 1 has no addresses").0.contains("unknown key \"address\""));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn random_json_never_panics() {
        let mut r = Rng::new(99);
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            "\"grid\"",
            ":",
            ",",
            "1",
            "-3",
            "\"buffers\"",
            "\"args\"",
            "\"x\"",
            "{\"elem\":\"f32\",\"count\":4}",
            "\"code_object\":\"a\"",
            "\"kernel\":\"k\"",
            "null",
            "1e400",
        ];
        for _ in 0..20000 {
            let n = (r.next_u64() % 12) as usize;
            let s: String = (0..n).map(|_| pieces[(r.next_u64() % pieces.len() as u64) as usize]).collect();
            let _ = parse(&s);
        }
    }
}
