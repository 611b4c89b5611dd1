//! Launches captured on a GPU (launch format 2, written by `xfpx run
//! --capture`): their raw parameter bytes, read from the launch folder,
//! and the kernel arguments made of them for the AMD build of the same
//! kernel. Parameter `i` of the capture is explicit argument `i` of the
//! AMD kernel's metadata; sizes must agree. A `global_buffer` argument
//! holds a captured address: the allocation it lies in (a captured
//! buffer's `address` and size) gives the replayed buffer, and the same
//! offset from its start. A `by_value` argument is copied; in one of 16
//! bytes or more (a structure), each 8-byte-aligned word that holds an
//! address inside a captured buffer is relocated the same way.

use crate::launch::{BufferSpec, LaunchError};
use serde_json::Value;
use std::path::Path;
use xfpx_amd_object::metadata::KernelArg;
use xfpx_common::capture::ParamSlot;

/// The raw parameters of a captured launch and each one's place in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedParams {
    pub bytes: Vec<u8>,
    pub layout: Vec<ParamSlot>,
}

/// Where a launch was captured (format 2's `"captured"`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedOn {
    pub vendor: String,
    pub device: String,
    pub target: Option<String>,
    pub demangled: Option<String>,
}

fn bad<T>(msg: impl Into<String>) -> Result<T, LaunchError> {
    Err(LaunchError(msg.into()))
}

/// Largest parameter buffer read (CUDA allows 32 KiB of parameters).
const MAX_PARAMS: u64 = 1 << 20;

/// `"params": {"file": "params.bin", "size": N, "layout": [{"offset": 0, "size": 8}, ...]}`.
pub fn parse_params(v: &Value, dir: &Path) -> Result<CapturedParams, LaunchError> {
    let Value::Object(o) = v else { return bad("launch: \"params\" must be an object") };
    let file = o
        .get("file")
        .and_then(Value::as_str)
        .ok_or_else(|| LaunchError("launch: params: \"file\" must be a file name".into()))?;
    let size = o
        .get("size")
        .and_then(Value::as_u64)
        .filter(|&n| n <= MAX_PARAMS)
        .ok_or_else(|| LaunchError(format!("launch: params: \"size\" must be a byte count up to {MAX_PARAMS}")))?;
    let Some(Value::Array(list)) = o.get("layout") else {
        return bad("launch: params: \"layout\" must be an array of {\"offset\", \"size\"}");
    };
    let mut layout = Vec::with_capacity(list.len());
    for (i, slot) in list.iter().enumerate() {
        let field = |k: &str| slot.get(k).and_then(Value::as_u64);
        let (Some(offset), Some(bytes)) = (field("offset"), field("size")) else {
            return bad(format!("launch: params: layout[{i}] needs \"offset\" and \"size\""));
        };
        if offset.checked_add(bytes).is_none_or(|end| end > size) {
            return bad(format!(
                "launch: params: layout[{i}] ({bytes} bytes at {offset}) lies outside the {size} bytes"
            ));
        }
        layout.push(ParamSlot { offset, size: bytes });
    }
    let path = dir.join(file);
    let limit = xfpx_common::limits::Limit { what: "the captured parameters", bytes: size };
    let bytes = xfpx_common::limits::read(&path, limit)
        .map_err(|e| LaunchError(format!("launch: params: cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 != size {
        return bad(format!(
            "launch: params: {} holds {} bytes, expected {size} (the capture is truncated)",
            path.display(),
            bytes.len()
        ));
    }
    Ok(CapturedParams { bytes, layout })
}

/// `"captured": {"vendor": ..., "device": ..., "target": ..., "demangled": ...}`.
pub fn parse_captured(v: &Value) -> Result<CapturedOn, LaunchError> {
    let Value::Object(o) = v else { return bad("launch: \"captured\" must be an object") };
    let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    Ok(CapturedOn {
        vendor: text("vendor").unwrap_or_else(|| "another GPU".into()),
        device: text("device").unwrap_or_default(),
        target: text("target"),
        demangled: text("demangled"),
    })
}

/// A buffer of the replay: its captured address, size and replayed address.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub captured: u64,
    pub bytes: u64,
    pub replayed: u64,
}

impl Placed {
    /// The buffers of `specs` placed at `replayed` (same order).
    pub fn all(specs: &[BufferSpec], replayed: &[u64]) -> Vec<Placed> {
        specs
            .iter()
            .zip(replayed)
            .filter_map(|(b, &r)| Some(Placed { captured: b.address?, bytes: b.bytes.len() as u64, replayed: r }))
            .collect()
    }
}

/// The replayed address of captured address `a`: in a buffer, or one
/// past its end (a pointer to an empty rest).
fn relocate(a: u64, buffers: &[Placed]) -> Option<u64> {
    let inside = buffers.iter().find(|b| a >= b.captured && a - b.captured < b.bytes);
    let end = || buffers.iter().find(|b| a == b.captured.wrapping_add(b.bytes));
    inside.or_else(end).map(|b| b.replayed + (a - b.captured))
}

/// The explicit kernel arguments of the AMD kernel `kernel` (its metadata
/// `explicit`, in order) made from the captured parameters: the bytes of
/// its kernarg segment up to the last explicit argument.
pub fn kernarg(
    kernel: &str,
    explicit: &[&KernelArg],
    params: &CapturedParams,
    buffers: &[Placed],
) -> Result<Vec<u8>, String> {
    let sizes = |v: &mut dyn Iterator<Item = u64>| v.map(|n| n.to_string()).collect::<Vec<_>>().join(", ");
    if explicit.len() != params.layout.len() {
        return Err(format!(
            "argument layouts differ: the capture has {} parameters (bytes: {}), the AMD kernel {kernel} takes {} \
             (bytes: {})",
            params.layout.len(),
            sizes(&mut params.layout.iter().map(|s| s.size)),
            explicit.len(),
            sizes(&mut explicit.iter().map(|a| a.size))
        ));
    }
    for (i, (meta, slot)) in explicit.iter().zip(&params.layout).enumerate() {
        if meta.size != slot.size {
            return Err(format!(
                "argument layouts differ: parameter {i} is {} bytes in the capture and {} bytes ({}) in the AMD kernel \
                 {kernel}",
                slot.size, meta.size, meta.value_kind
            ));
        }
    }
    let end = explicit.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0);
    let mut out = vec![0u8; end];
    for (i, (meta, slot)) in explicit.iter().zip(&params.layout).enumerate() {
        let src = &params.bytes[slot.offset as usize..(slot.offset + slot.size) as usize];
        let mut value = src.to_vec();
        match meta.value_kind.as_str() {
            "global_buffer" if value.len() == 8 => {
                let a = u64::from_le_bytes(src.try_into().unwrap_or([0; 8]));
                if a != 0 {
                    let r = relocate(a, buffers).ok_or_else(|| {
                        format!("parameter {i} holds the address {a:#x}, which is in no captured allocation")
                    })?;
                    value = r.to_le_bytes().to_vec();
                }
            }
            "by_value" => {
                if value.len() >= 16 {
                    // the structure's 8-byte-aligned words (aligned in the parameter buffer)
                    let first = (slot.offset.next_multiple_of(8) - slot.offset) as usize;
                    for at in (first..value.len().saturating_sub(7)).step_by(8) {
                        let mut w = [0u8; 8];
                        w.copy_from_slice(&value[at..at + 8]);
                        let word = u64::from_le_bytes(w);
                        if let Some(r) = relocate(word, buffers).filter(|_| word != 0) {
                            value[at..at + 8].copy_from_slice(&r.to_le_bytes());
                        }
                    }
                }
            }
            other => {
                return Err(format!(
                    "argument layouts differ: parameter {i} is a {other} argument of {} bytes in the AMD kernel \
                     {kernel}, which a captured launch cannot give",
                    meta.size
                ))
            }
        }
        let o = meta.offset as usize;
        out[o..o + value.len()].copy_from_slice(&value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(offset: u64, size: u64, kind: &str) -> KernelArg {
        KernelArg {
            name: None,
            type_name: None,
            offset,
            size,
            value_kind: kind.into(),
            address_space: (kind == "global_buffer").then(|| "global".into()),
        }
    }

    fn params(words: &[(u64, u64, Vec<u8>)]) -> CapturedParams {
        let end = words.iter().map(|(o, s, _)| o + s).max().unwrap_or(0);
        let mut bytes = vec![0u8; end as usize];
        let mut layout = Vec::new();
        for (o, s, v) in words {
            bytes[*o as usize..(*o + *s) as usize].copy_from_slice(v);
            layout.push(ParamSlot { offset: *o, size: *s });
        }
        CapturedParams { bytes, layout }
    }

    const BUFFERS: [Placed; 2] = [
        Placed { captured: 0x7f00_0000_0000, bytes: 4000, replayed: 0x1000 },
        Placed { captured: 0x7f00_0010_0000, bytes: 64, replayed: 0x3000 },
    ];

    #[test]
    fn pointers_are_relocated_into_the_replayed_buffers() {
        let p = params(&[
            (0, 8, 0x7f00_0000_0010u64.to_le_bytes().to_vec()),
            (8, 8, 0u64.to_le_bytes().to_vec()),
            (16, 4, 2.5f32.to_le_bytes().to_vec()),
            (24, 16, [0x7f00_0010_0040u64.to_le_bytes(), 7u64.to_le_bytes()].concat()),
        ]);
        let metas =
            [arg(0, 8, "global_buffer"), arg(8, 8, "global_buffer"), arg(16, 4, "by_value"), arg(24, 16, "by_value")];
        let explicit: Vec<&KernelArg> = metas.iter().collect();
        let k = kernarg("k", &explicit, &p, &BUFFERS).expect("lays out");
        assert_eq!(&k[0..8], &0x1010u64.to_le_bytes(), "base + 16 -> replayed base + 16");
        assert_eq!(&k[8..16], &0u64.to_le_bytes(), "null stays null");
        assert_eq!(&k[16..20], &2.5f32.to_le_bytes());
        assert_eq!(&k[24..32], &0x3040u64.to_le_bytes(), "one past the end of a buffer, inside a structure");
        assert_eq!(&k[32..40], &7u64.to_le_bytes());
    }

    #[test]
    fn mismatches_are_one_line_each() {
        let p = params(&[(0, 8, 0x5555u64.to_le_bytes().to_vec()), (8, 4, vec![0; 4])]);
        let cases: [(&[KernelArg], &str); 4] = [
            (
                &[arg(0, 8, "global_buffer")],
                "the capture has 2 parameters (bytes: 8, 4), the AMD kernel k takes 1 (bytes: 8)",
            ),
            (&[arg(0, 8, "global_buffer"), arg(8, 8, "by_value")], "parameter 1 is 4 bytes in the capture and 8 bytes"),
            (
                &[arg(0, 8, "global_buffer"), arg(8, 4, "by_value")],
                "parameter 0 holds the address 0x5555, which is in no captured allocation",
            ),
            (&[arg(0, 8, "image"), arg(8, 4, "by_value")], "parameter 0 is a image argument"),
        ];
        for (metas, want) in cases {
            let explicit: Vec<&KernelArg> = metas.iter().collect();
            let e = kernarg("k", &explicit, &p, &BUFFERS).expect_err(want);
            assert!(e.contains(want) && !e.contains('\n'), "{e}");
        }
    }
}
