//! The `NT_AMDGPU_METADATA` note: a MessagePack map (`amdhsa.version`,
//! `amdhsa.target`, `amdhsa.kernels`) describing each kernel's arguments,
//! segment sizes, register counts and launch limits. The HIP runtime reads
//! the kernarg layout and segment sizes from here.

use serde::Serialize;

use crate::elf::Note;
use crate::error::{Error, Result};

/// Owner name of AMDGPU notes.
pub const NOTE_OWNER_AMDGPU: &str = "AMDGPU";
/// Note type of the MessagePack metadata (code object v3 and later).
pub const NT_AMDGPU_METADATA: u32 = 32;

/// One kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct KernelArg {
    pub name: Option<String>,
    pub type_name: Option<String>,
    pub offset: u64,
    pub size: u64,
    pub value_kind: String,
    pub address_space: Option<String>,
}

impl KernelArg {
    /// Hidden arguments are filled by the runtime, not passed by the caller.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// The metadata of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct KernelMetadata {
    pub name: String,
    pub symbol: String,
    pub args: Vec<KernelArg>,
    pub group_segment_fixed_size: u64,
    pub private_segment_fixed_size: u64,
    pub kernarg_segment_size: u64,
    pub kernarg_segment_align: u64,
    pub wavefront_size: u64,
    pub sgpr_count: u64,
    pub vgpr_count: u64,
    pub agpr_count: Option<u64>,
    pub sgpr_spill_count: u64,
    pub vgpr_spill_count: u64,
    pub max_flat_workgroup_size: u64,
    pub uses_dynamic_stack: Option<bool>,
}

/// The whole metadata note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Metadata {
    /// `amdhsa.version` (major, minor); [1, 2] is code object v5.
    pub version: Vec<u64>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx90a:xnack+`.
    pub target: Option<String>,
    pub kernels: Vec<KernelMetadata>,
}

/// Finds and decodes the metadata notes among `notes`; `None` if absent.
/// An object linked from partitions (clang-22's `-fgpu-rdc` link with
/// parallel code generation) has one note per partition: their kernels are
/// merged, version and target are the first note's.
pub fn from_notes(notes: &[Note<'_>]) -> Result<Option<Metadata>> {
    let mut merged: Option<Metadata> = None;
    for n in notes.iter().filter(|n| n.name == NOTE_OWNER_AMDGPU && n.n_type == NT_AMDGPU_METADATA) {
        let m = parse(n.desc)?;
        match &mut merged {
            None => merged = Some(m),
            Some(all) => all.kernels.extend(m.kernels),
        }
    }
    Ok(merged)
}

fn malformed(detail: impl Into<String>) -> Error {
    Error::malformed("metadata note", detail)
}

fn lookup<'v>(map: &'v [(rmpv::Value, rmpv::Value)], key: &str) -> Option<&'v rmpv::Value> {
    map.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

fn as_map<'v>(v: &'v rmpv::Value, what: &str) -> Result<&'v [(rmpv::Value, rmpv::Value)]> {
    v.as_map().map(Vec::as_slice).ok_or_else(|| malformed(format!("{what} is not a map")))
}

fn uint(map: &[(rmpv::Value, rmpv::Value)], key: &str) -> Result<Option<u64>> {
    match lookup(map, key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| malformed(format!("{key} is not an unsigned integer"))),
    }
}

fn req_uint(map: &[(rmpv::Value, rmpv::Value)], key: &str, owner: &str) -> Result<u64> {
    uint(map, key)?.ok_or_else(|| malformed(format!("{owner} has no {key}")))
}

fn string(map: &[(rmpv::Value, rmpv::Value)], key: &str) -> Result<Option<String>> {
    match lookup(map, key) {
        None => Ok(None),
        Some(v) => v.as_str().map(|s| Some(s.to_string())).ok_or_else(|| malformed(format!("{key} is not a string"))),
    }
}

/// Decodes the MessagePack descriptor of the metadata note.
pub fn parse(desc: &[u8]) -> Result<Metadata> {
    let mut reader = desc;
    let root = rmpv::decode::read_value(&mut reader).map_err(|e| malformed(e.to_string()))?;
    let root = as_map(&root, "the note")?;
    let version = match lookup(root, "amdhsa.version") {
        Some(v) => v
            .as_array()
            .ok_or_else(|| malformed("amdhsa.version is not an array"))?
            .iter()
            .map(|x| x.as_u64().ok_or_else(|| malformed("amdhsa.version holds a non-integer")))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let target = string(root, "amdhsa.target")?;
    let mut kernels = Vec::new();
    if let Some(list) = lookup(root, "amdhsa.kernels") {
        for k in list.as_array().ok_or_else(|| malformed("amdhsa.kernels is not an array"))? {
            kernels.push(parse_kernel(as_map(k, "a kernel entry")?)?);
        }
    }
    Ok(Metadata { version, target, kernels })
}

fn parse_kernel(m: &[(rmpv::Value, rmpv::Value)]) -> Result<KernelMetadata> {
    let name = string(m, ".name")?.ok_or_else(|| malformed("a kernel has no .name"))?;
    let owner = format!("kernel '{name}'");
    let mut args = Vec::new();
    if let Some(list) = lookup(m, ".args") {
        for a in list.as_array().ok_or_else(|| malformed(format!("{owner}: .args is not an array")))? {
            let a = as_map(a, "a kernel argument")?;
            args.push(KernelArg {
                name: string(a, ".name")?,
                type_name: string(a, ".type_name")?,
                offset: req_uint(a, ".offset", &owner)?,
                size: req_uint(a, ".size", &owner)?,
                value_kind: string(a, ".value_kind")?
                    .ok_or_else(|| malformed(format!("{owner}: argument has no .value_kind")))?,
                address_space: string(a, ".address_space")?,
            });
        }
    }
    let uses_dynamic_stack = match lookup(m, ".uses_dynamic_stack") {
        None => None,
        Some(v) => Some(v.as_bool().ok_or_else(|| malformed(format!("{owner}: .uses_dynamic_stack is not a bool")))?),
    };
    Ok(KernelMetadata {
        symbol: string(m, ".symbol")?.unwrap_or_default(),
        args,
        group_segment_fixed_size: req_uint(m, ".group_segment_fixed_size", &owner)?,
        private_segment_fixed_size: req_uint(m, ".private_segment_fixed_size", &owner)?,
        kernarg_segment_size: req_uint(m, ".kernarg_segment_size", &owner)?,
        kernarg_segment_align: req_uint(m, ".kernarg_segment_align", &owner)?,
        wavefront_size: req_uint(m, ".wavefront_size", &owner)?,
        sgpr_count: req_uint(m, ".sgpr_count", &owner)?,
        vgpr_count: req_uint(m, ".vgpr_count", &owner)?,
        agpr_count: uint(m, ".agpr_count")?,
        sgpr_spill_count: uint(m, ".sgpr_spill_count")?.unwrap_or(0),
        vgpr_spill_count: uint(m, ".vgpr_spill_count")?.unwrap_or(0),
        max_flat_workgroup_size: req_uint(m, ".max_flat_workgroup_size", &owner)?,
        uses_dynamic_stack,
        name,
    })
}
