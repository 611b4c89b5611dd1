//! Output buffers of the same launch on two sides (`xfpx replay --out DIR`
//! writes `DIR/<name>.bin` and `DIR/outputs.json`, which names each
//! buffer's element type and the kernel): matched by name, compared as
//! their element type (floats: differing elements, the largest difference
//! in units in the last place, the first differing element); without a
//! known type as bytes and, where the size allows, as f32.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

use xfpx_common::capture::{OutputFile, OutputManifest, OUTPUTS};

/// One side's buffers: name -> (element type, bytes), and the kernel.
pub struct Buffers {
    pub kernel: Option<String>,
    pub by_name: BTreeMap<String, (Option<String>, Vec<u8>)>,
}

/// Reads the buffers of `dir`: those its manifest names, or every `*.bin`.
pub fn read(dir: &Path) -> Result<Buffers> {
    if !dir.is_dir() {
        bail!("cannot read output buffers: {} is not a directory", dir.display());
    }
    let manifest_path = dir.join(OUTPUTS);
    let manifest: Option<OutputManifest> = if manifest_path.is_file() {
        let text = std::fs::read_to_string(&manifest_path)
            .with_context(|| format!("cannot read {}", manifest_path.display()))?;
        Some(
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not an outputs manifest", manifest_path.display()))?,
        )
    } else {
        None
    };
    let entries: Vec<OutputFile> = match &manifest {
        Some(m) => m.outputs.clone(),
        None => {
            let mut v = Vec::new();
            for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
                let path = e.with_context(|| format!("cannot read {}", dir.display()))?.path();
                if path.extension().is_some_and(|x| x == "bin") {
                    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                    let file = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                    v.push(OutputFile { name, elem: None, file });
                }
            }
            v
        }
    };
    let mut by_name = BTreeMap::new();
    for e in entries {
        let p = dir.join(&e.file);
        let bytes = std::fs::read(&p).with_context(|| format!("cannot read output buffer {}", p.display()))?;
        by_name.insert(e.name, (e.elem, bytes));
    }
    Ok(Buffers { kernel: manifest.map(|m| m.kernel), by_name })
}

/// The first element that differs.
#[derive(Debug, Clone, Serialize)]
pub struct FirstDifference {
    pub index: usize,
    /// The values as text (floats in Rust's shortest round-trip form).
    pub a: String,
    pub b: String,
}

/// One buffer on both sides (or on one).
#[derive(Debug, Clone, Serialize)]
pub struct BufferDiff {
    pub buffer: String,
    /// The element type compared as (`bytes` when unknown).
    pub elem: String,
    /// Set when only one side has the buffer.
    pub only_in: Option<super::model::Side>,
    pub identical: bool,
    /// Sizes in bytes differ: nothing else is compared.
    pub size_a: usize,
    pub size_b: usize,
    pub elements: usize,
    pub differing: usize,
    /// Floats: the largest difference in units in the last place (a NaN
    /// against a number counts as the largest possible; both NaN as equal).
    pub max_ulp: Option<u64>,
    pub first_difference: Option<FirstDifference>,
    /// Without a known element type: the same bytes read as f32.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_f32: Option<Box<BufferDiff>>,
    /// Likely causes (empty when identical).
    pub causes: Vec<String>,
}

/// Float element types: bits, and the value as text.
fn float_bits(elem: &str, chunk: &[u8]) -> Option<(u64, bool, String)> {
    match elem {
        "f32" => {
            let v = f32::from_le_bytes(chunk.try_into().ok()?);
            Some((u64::from(v.to_bits()), v.is_nan(), format!("{v:e}")))
        }
        "f64" => {
            let v = f64::from_le_bytes(chunk.try_into().ok()?);
            Some((v.to_bits(), v.is_nan(), format!("{v:e}")))
        }
        "f16" => {
            let h = u16::from_le_bytes(chunk.try_into().ok()?);
            let nan = h & 0x7C00 == 0x7C00 && h & 0x3FF != 0;
            Some((u64::from(h), nan, format!("{h:#06x} (f16)")))
        }
        _ => None,
    }
}

/// Sign-magnitude bits of `width` bits to a line where adjacent floats
/// are one apart.
fn ordered(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    let mag = i128::from(bits & (sign - 1));
    if bits & sign != 0 {
        -mag
    } else {
        mag
    }
}

fn elem_size(elem: &str) -> usize {
    match elem {
        "u8" | "bytes" => 1,
        "f16" => 2,
        "f32" | "i32" | "u32" => 4,
        _ => 8,
    }
}

fn int_text(elem: &str, chunk: &[u8]) -> String {
    let mut b = [0u8; 8];
    b[..chunk.len()].copy_from_slice(chunk);
    let u = u64::from_le_bytes(b);
    match elem {
        "i32" => (u as u32 as i32).to_string(),
        "i64" => (u as i64).to_string(),
        _ => u.to_string(),
    }
}

/// Compares `a` and `b` as `elem` (`bytes` when unknown).
pub fn compare(buffer: &str, elem: &str, a: &[u8], b: &[u8]) -> BufferDiff {
    let size = elem_size(elem);
    let mut d = BufferDiff {
        buffer: buffer.to_string(),
        elem: elem.to_string(),
        only_in: None,
        identical: a == b,
        size_a: a.len(),
        size_b: b.len(),
        elements: a.len().min(b.len()) / size,
        differing: 0,
        max_ulp: None,
        first_difference: None,
        as_f32: None,
        causes: Vec::new(),
    };
    if a.len() != b.len() {
        return d;
    }
    let width = (size * 8) as u32;
    let mut max_ulp: Option<u64> = None;
    for (i, (ca, cb)) in a.chunks_exact(size).zip(b.chunks_exact(size)).enumerate() {
        if ca == cb {
            continue;
        }
        let (differs, text) = match (float_bits(elem, ca), float_bits(elem, cb)) {
            (Some((ba, na, ta)), Some((bb, nb, tb))) => {
                let ulp = match (na, nb) {
                    (true, true) => 0,
                    (false, false) => {
                        u64::try_from((ordered(ba, width) - ordered(bb, width)).unsigned_abs()).unwrap_or(u64::MAX)
                    }
                    _ => u64::MAX,
                };
                max_ulp = Some(max_ulp.unwrap_or(0).max(ulp));
                (ulp != 0, (ta, tb))
            }
            _ if elem == "bytes" || elem == "u8" => (true, (format!("{:#04x}", ca[0]), format!("{:#04x}", cb[0]))),
            _ => (true, (int_text(elem, ca), int_text(elem, cb))),
        };
        if differs {
            d.differing += 1;
            if d.first_difference.is_none() {
                d.first_difference = Some(FirstDifference { index: i, a: text.0, b: text.1 });
            }
        }
    }
    d.max_ulp = max_ulp;
    // NaNs of other payloads are the same value
    d.identical = d.differing == 0;
    if elem == "bytes" && a.len().is_multiple_of(4) && !d.identical {
        d.as_f32 = Some(Box::new(compare(buffer, "f32", a, b)));
    }
    d
}

/// The first differing element shows a subnormal on one side and zero on
/// the other: which side holds the zero.
pub fn flushed_side(d: &BufferDiff) -> Option<super::model::Side> {
    let d = d.as_f32.as_deref().unwrap_or(d);
    let f = d.first_difference.as_ref()?;
    let tiny = match d.elem.as_str() {
        "f32" => f64::from(f32::MIN_POSITIVE),
        "f64" => f64::MIN_POSITIVE,
        _ => return None,
    };
    let (a, b): (f64, f64) = (f.a.parse().ok()?, f.b.parse().ok()?);
    let subnormal = |v: f64| v != 0.0 && v.abs() < tiny;
    if subnormal(a) && b == 0.0 {
        Some(super::model::Side::B)
    } else if subnormal(b) && a == 0.0 {
        Some(super::model::Side::A)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn float_buffers_by_ulp() {
        let a = f32s(&[1.0, 2.0, f32::NAN, 1e-40]);
        assert!(compare("x", "f32", &a, &a).identical);
        let b = f32s(&[1.0, f32::from_bits(2.0f32.to_bits() + 3), f32::NAN, 0.0]);
        let d = compare("x", "f32", &a, &b);
        assert!(!d.identical);
        assert_eq!(d.differing, 2);
        assert_eq!(d.first_difference.as_ref().map(|f| f.index), Some(1));
        assert_eq!(d.max_ulp, Some(71362), "1e-40 is 71362 steps above 0");
        // across zero: -min and +min subnormals are two apart
        let d = compare("x", "f32", &f32s(&[-1e-45]), &f32s(&[1e-45]));
        assert_eq!(d.max_ulp, Some(2));
        let d = compare("x", "f32", &f32s(&[1.0]), &f32s(&[f32::NAN]));
        assert_eq!(d.max_ulp, Some(u64::MAX));
        // unknown type: bytes, and as f32
        let d = compare("x", "bytes", &a, &b);
        assert_eq!(d.as_f32.as_ref().map(|f| f.differing), Some(2));
        let z = compare("x", "f32", &f32s(&[1e-40]), &f32s(&[0.0]));
        assert_eq!(flushed_side(&z), Some(super::super::model::Side::B));
        assert_eq!(flushed_side(&compare("x", "f32", &f32s(&[1.0]), &f32s(&[0.0]))), None);
        // sizes differ
        let d = compare("x", "f32", &a, &a[..4]);
        assert!(!d.identical);
    }
}
