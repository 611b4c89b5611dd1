//! The explicit kernel arguments of a launch file (`"args"`): their parsing
//! (a buffer, a scalar, and from format 3 raw bytes and by-value
//! aggregates) and their layout against the kernel's metadata, the one
//! place that turns a launch's arguments into kernarg bytes.
//!
//! ```json
//! "args": [{"buffer": "out"},
//!          {"u32": 1000},
//!          {"bytes": "0000803f02000000"},
//!          {"struct": [{"offset": 0, "f32": 1.5}, {"offset": 8, "buffer": "x"}]}]
//! ```
//! A `bytes` argument is the argument's bytes in hex, exactly its size in
//! the metadata. A `struct` argument (a structure passed by value) takes
//! its size from the metadata: each field is placed at its byte offset
//! (a scalar, a buffer's 8-byte address, or hex bytes), the bytes no field
//! covers are zero, and fields may not overlap or run past the end.

use crate::launch::{bad, special_bytes, Elem, LaunchError};
use serde_json::Value;
use xfpx_amd_object::metadata::KernelArg;

/// One kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A buffer's address.
    Buffer(String),
    Scalar(Elem, Vec<u8>),
    /// Raw bytes (format 3): a by-value argument of exactly this size.
    Bytes(Vec<u8>),
    /// A structure passed by value (format 3): fields at byte offsets.
    Struct(Vec<(u32, ArgSpec)>),
}

/// Parses `args[i]` (an object of one key), whose buffers must be among
/// `buffers`; `format` gates the forms of format 3.
pub(crate) fn parse(v: &Value, i: usize, buffers: &[&str], format: u32) -> Result<ArgSpec, LaunchError> {
    let what = format!("args[{i}]");
    let Value::Object(o) = v else { return bad(format!("launch: {what} must be an object")) };
    if o.len() != 1 {
        return bad(format!("launch: {what} must have exactly one key"));
    }
    let Some((k, val)) = o.iter().next() else { return bad(format!("launch: {what} is empty")) };
    if matches!(k.as_str(), "bytes" | "struct") && format < 3 {
        return bad(format!("launch: {what}: \"{k}\" needs \"format\": 3"));
    }
    if k != "struct" {
        return value(k, val, buffers, &what);
    }
    let Value::Array(fields) = val else {
        return bad(format!("launch: {what}.struct must be an array of fields"));
    };
    let mut out = Vec::new();
    for (j, f) in fields.iter().enumerate() {
        let what = format!("{what}.struct[{j}]");
        let Value::Object(fo) = f else { return bad(format!("launch: {what} must be an object")) };
        let offset = fo
            .get("offset")
            .and_then(Value::as_u64)
            .filter(|&n| n < 1 << 16)
            .ok_or_else(|| LaunchError(format!("launch: {what}.offset must be a byte offset below 65536")))?;
        let mut rest = fo.iter().filter(|(k, _)| k.as_str() != "offset");
        let (Some((k, val)), None) = (rest.next(), rest.next()) else {
            return bad(format!("launch: {what} must have an offset and exactly one value"));
        };
        if k == "struct" {
            return bad(format!("launch: {what}: a field cannot be a struct (give its fields at their offsets)"));
        }
        out.push((offset as u32, value(k, val, buffers, &what)?));
    }
    Ok(ArgSpec::Struct(out))
}

/// A `buffer`, `bytes` or scalar value.
fn value(k: &str, val: &Value, buffers: &[&str], what: &str) -> Result<ArgSpec, LaunchError> {
    match k {
        "buffer" => {
            let name = val.as_str().ok_or_else(|| LaunchError(format!("launch: {what}.buffer must be a name")))?;
            if !buffers.contains(&name) {
                return bad(format!("launch: {what} names unknown buffer \"{name}\""));
            }
            Ok(ArgSpec::Buffer(name.to_string()))
        }
        "bytes" => {
            let hex = val
                .as_str()
                .filter(|s| s.len() % 2 == 0 && !s.is_empty())
                .and_then(|s| (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect());
            Ok(ArgSpec::Bytes(
                hex.ok_or_else(|| LaunchError(format!("launch: {what}.bytes must be hex digits, two per byte")))?,
            ))
        }
        _ => {
            let elem =
                Elem::parse(k).ok_or_else(|| LaunchError(format!("launch: {what}: unknown argument type \"{k}\"")))?;
            Ok(ArgSpec::Scalar(elem, special_bytes(elem, val, what)?))
        }
    }
}

impl ArgSpec {
    /// What the argument is, for messages.
    fn describe(&self) -> String {
        match self {
            ArgSpec::Buffer(_) => "a buffer".into(),
            ArgSpec::Scalar(e, b) => format!("{} ({} bytes)", e.name(), b.len()),
            ArgSpec::Bytes(b) => format!("{} bytes", b.len()),
            ArgSpec::Struct(_) => "a struct".into(),
        }
    }

    /// The argument's bytes against its metadata `meta`; `address_of`
    /// gives a buffer's address.
    fn layout(&self, meta: &KernelArg, what: &str, address_of: &dyn Fn(&str) -> u64) -> Result<Vec<u8>, String> {
        let mismatch = || {
            format!(
                "argument mismatch: {what} is {} but the kernel's argument is {} ({} bytes)",
                self.describe(),
                meta.value_kind,
                meta.size
            )
        };
        let by_value = meta.value_kind == "by_value";
        match self {
            ArgSpec::Buffer(name) if meta.value_kind == "global_buffer" && meta.size == 8 => {
                Ok(address_of(name).to_le_bytes().to_vec())
            }
            ArgSpec::Scalar(_, b) | ArgSpec::Bytes(b) if by_value && meta.size as usize == b.len() => Ok(b.clone()),
            ArgSpec::Struct(fields) if by_value => {
                let mut bytes = vec![0u8; meta.size as usize];
                let mut covered = vec![false; bytes.len()];
                for (j, (offset, field)) in fields.iter().enumerate() {
                    let v = match field {
                        ArgSpec::Buffer(name) => address_of(name).to_le_bytes().to_vec(),
                        ArgSpec::Scalar(_, b) | ArgSpec::Bytes(b) => b.clone(),
                        ArgSpec::Struct(_) => return Err(format!("{what}.struct[{j}] is a struct")),
                    };
                    let (start, end) = (*offset as usize, *offset as usize + v.len());
                    if end > bytes.len() {
                        return Err(format!(
                            "argument mismatch: {what}.struct[{j}] (bytes {start} to {end}) runs past the kernel's \
                             {}-byte argument",
                            meta.size
                        ));
                    }
                    if covered[start..end].iter().any(|&c| c) {
                        return Err(format!("{what}.struct[{j}] overlaps an earlier field"));
                    }
                    covered[start..end].fill(true);
                    bytes[start..end].copy_from_slice(&v);
                }
                Ok(bytes)
            }
            _ => Err(mismatch()),
        }
    }
}

/// The explicit-argument bytes of `args` laid out against the kernel's
/// metadata `kernel_args` (hidden arguments are left zero, for the
/// dispatcher): one argument per explicit metadata entry, in order.
pub fn explicit_args(
    kernel: &str,
    kernel_args: &[KernelArg],
    args: &[ArgSpec],
    address_of: &dyn Fn(&str) -> u64,
) -> Result<Vec<u8>, String> {
    let explicit: Vec<_> = kernel_args.iter().filter(|a| !a.is_hidden()).collect();
    if explicit.len() != args.len() {
        return Err(format!(
            "argument mismatch: kernel \"{kernel}\" takes {} explicit arguments, the launch gives {}",
            explicit.len(),
            args.len()
        ));
    }
    let end = explicit.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0);
    let mut kernarg = vec![0u8; end];
    for (i, (meta, arg)) in explicit.iter().zip(args).enumerate() {
        let bytes = arg.layout(meta, &format!("args[{i}]"), address_of)?;
        let o = meta.offset as usize;
        kernarg[o..o + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(kernarg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(offset: u64, size: u64, kind: &str) -> KernelArg {
        KernelArg { name: None, type_name: None, offset, size, value_kind: kind.into(), address_space: None }
    }

    #[test]
    fn structs_and_bytes_lay_out_at_their_offsets() {
        let bufs = ["x"];
        let s = json!({"struct": [{"offset": 0, "f32": 1.5}, {"offset": 8, "buffer": "x"}, {"offset": 20, "bytes": "abcd"}]});
        let a = parse(&s, 0, &bufs, 3).expect("struct");
        let raw = parse(&json!({"bytes": "01020304"}), 1, &bufs, 3).expect("bytes");
        let metas = [meta(0, 24, "by_value"), meta(24, 4, "by_value"), meta(32, 8, "hidden_block_count_x")];
        let k = explicit_args("k", &metas, &[a.clone(), raw], &|n| if n == "x" { 0x1122_3344_5566_7788 } else { 0 })
            .expect("lays out");
        assert_eq!(&k[0..4], &1.5f32.to_le_bytes());
        assert_eq!(&k[4..8], &[0; 4]);
        assert_eq!(&k[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&k[20..24], &[0xab, 0xcd, 0, 0]);
        assert_eq!(&k[24..28], &[1, 2, 3, 4]);
        // Too small a struct, a struct for a buffer, bytes of the wrong size.
        let e =
            explicit_args("k", &[meta(0, 12, "by_value")], std::slice::from_ref(&a), &|_| 0).expect_err("past the end");
        assert!(e.contains("args[0].struct[1] (bytes 8 to 16) runs past the kernel's 12-byte argument"), "{e}");
        let e = explicit_args("k", &[meta(0, 8, "global_buffer")], &[a], &|_| 0).expect_err("a buffer");
        assert!(e.contains("args[0] is a struct but the kernel's argument is global_buffer (8 bytes)"), "{e}");
        let raw = parse(&json!({"bytes": "0102"}), 0, &bufs, 3).expect("bytes");
        let e = explicit_args("k", &[meta(0, 4, "by_value")], &[raw], &|_| 0).expect_err("size");
        assert!(e.contains("args[0] is 2 bytes"), "{e}");
        let overlap =
            parse(&json!({"struct": [{"offset": 0, "u64": 1}, {"offset": 4, "u32": 2}]}), 0, &bufs, 3).expect("parses");
        let e = explicit_args("k", &[meta(0, 16, "by_value")], &[overlap], &|_| 0).expect_err("overlap");
        assert!(e.contains("overlaps"), "{e}");
    }

    #[test]
    fn malformed_entries_are_one_line_errors() {
        let bufs = ["x"];
        for (v, format, want) in [
            (json!({"struct": []}), 2, "\"struct\" needs \"format\": 3"),
            (json!({"bytes": "00"}), 1, "\"bytes\" needs \"format\": 3"),
            (json!({"bytes": "0g"}), 3, "hex digits"),
            (json!({"bytes": "abc"}), 3, "hex digits"),
            (json!({"struct": {"offset": 0}}), 3, "must be an array"),
            (json!({"struct": [{"f32": 1.0}]}), 3, "offset must be a byte offset"),
            (json!({"struct": [{"offset": 0}]}), 3, "exactly one value"),
            (json!({"struct": [{"offset": 0, "f32": 1, "u32": 2}]}), 3, "exactly one value"),
            (json!({"struct": [{"offset": 0, "buffer": "y"}]}), 3, "unknown buffer \"y\""),
            (json!({"struct": [{"offset": 0, "struct": []}]}), 3, "cannot be a struct"),
            (json!({"struct": [{"offset": 0, "f99": 1}]}), 3, "unknown argument type \"f99\""),
        ] {
            let e = parse(&v, 2, &bufs, format).expect_err(want).0;
            assert!(e.contains(want) && !e.contains('\n'), "{v}: {e}");
        }
    }
}
