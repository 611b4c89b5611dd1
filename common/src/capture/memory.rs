//! Device memory as a capture sees it: the allocations a program made
//! (tracked through the driver's allocation and free calls), which of them
//! a launch's parameters point into, and the element type a pointer
//! parameter's declared type gives its buffer.

use super::ParamSlot;
use std::collections::BTreeMap;

/// The live device allocations: base address → size in bytes.
#[derive(Debug, Clone, Default)]
pub struct Allocations {
    by_base: BTreeMap<u64, u64>,
}

impl Allocations {
    /// An allocation of `bytes` at `base`. Entries it overlaps are gone
    /// (their free was not seen).
    pub fn add(&mut self, base: u64, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let end = base.saturating_add(bytes);
        let stale: Vec<u64> =
            self.by_base.range(..end).filter(|(&b, &n)| b.saturating_add(n) > base).map(|(&b, _)| b).collect();
        for b in stale {
            self.by_base.remove(&b);
        }
        self.by_base.insert(base, bytes);
    }

    /// The allocation at `base` was freed.
    pub fn remove(&mut self, base: u64) {
        self.by_base.remove(&base);
    }

    /// The allocation holding `addr`: (base, bytes).
    pub fn containing(&self, addr: u64) -> Option<(u64, u64)> {
        let (&base, &bytes) = self.by_base.range(..=addr).next_back()?;
        (addr < base.saturating_add(bytes)).then_some((base, bytes))
    }

    pub fn len(&self) -> usize {
        self.by_base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_base.is_empty()
    }
}

/// An allocation a launch's parameters point into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointed {
    pub base: u64,
    pub bytes: u64,
    /// Its buffer's name in the launch file: `argI` for the first
    /// parameter `I` pointing into it (`argI_K` for the K-th further
    /// allocation a structure parameter points into).
    pub name: String,
    /// Element type from the pointing parameter's declared type.
    pub elem: Option<&'static str>,
}

/// A pointer parameter holding an address that is no known allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub param: usize,
    pub value: u64,
}

/// The 8-byte-aligned words of the parameter buffer, by parameter: each
/// (parameter index, value, whether the word is the whole parameter).
pub fn words(params: &[u8], layout: &[ParamSlot]) -> Vec<(usize, u64, bool)> {
    let mut out = Vec::new();
    for (i, slot) in layout.iter().enumerate() {
        let end = slot.offset.saturating_add(slot.size);
        let mut at = slot.offset.next_multiple_of(8);
        while at.saturating_add(8) <= end {
            let Some(b) = params.get(at as usize..at as usize + 8) else { break };
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            out.push((i, u64::from_le_bytes(w), slot.size == 8 && at == slot.offset));
            at += 8;
        }
    }
    out
}

/// The allocations the parameters point into, each once, in parameter
/// order; and the pointer parameters (by `types`, the declared types,
/// where known) whose non-null value is in no allocation.
pub fn pointed(
    allocations: &Allocations,
    params: &[u8],
    layout: &[ParamSlot],
    types: Option<&[String]>,
) -> (Vec<Pointed>, Vec<Unknown>) {
    let mut found: Vec<Pointed> = Vec::new();
    let mut unknown = Vec::new();
    for (param, value, whole) in words(params, layout) {
        let declared = types.and_then(|t| t.get(param)).filter(|_| whole);
        match allocations.containing(value) {
            Some((base, bytes)) => {
                if found.iter().any(|p| p.base == base) {
                    continue;
                }
                let stem = format!("arg{param}");
                let prefix = format!("{stem}_");
                let taken = found.iter().filter(|p| p.name == stem || p.name.starts_with(&prefix)).count();
                let name = if taken == 0 { stem } else { format!("{stem}_{taken}") };
                let elem = declared.and_then(|t| pointee_elem(t));
                found.push(Pointed { base, bytes, name, elem });
            }
            None if value != 0 && declared.is_some_and(|t| is_pointer(t)) => unknown.push(Unknown { param, value }),
            None => {}
        }
    }
    (found, unknown)
}

/// The parameter types of a demangled function name
/// (`saxpy(float*, float const*, float, int)` → `float*`, `float const*`,
/// `float`, `int`); `None` when the name has no parameter list (a C name).
pub fn param_types(demangled: &str) -> Option<Vec<String>> {
    let s = demangled.trim_end();
    if !s.ends_with(')') {
        return None;
    }
    // the parameter list is the last parenthesised group
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &s[open? + 1..s.len() - 1];
    if inner.trim().is_empty() || inner.trim() == "void" {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim().to_string());
    Some(out)
}

/// Whether a declared type is a pointer (`float*`, `float const*`, `float* __restrict__`).
pub fn is_pointer(ty: &str) -> bool {
    strip_qualifiers(ty).ends_with('*')
}

fn strip_qualifiers(ty: &str) -> String {
    let spaced = ty.replace('*', " * ");
    let words: Vec<&str> = spaced
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"))
        .collect();
    // `float * *` back to `float**`
    words.join(" ").replace(" *", "*")
}

/// The element type a pointer type points to (`float*` → `f32`), for the
/// element types the launch format knows; `None` for other types.
pub fn pointee_elem(ty: &str) -> Option<&'static str> {
    let t = strip_qualifiers(ty);
    let base = t.strip_suffix('*')?.trim_end();
    if base.ends_with('*') {
        return None;
    }
    Some(match base {
        "float" => "f32",
        "double" => "f64",
        "__half" | "half" | "_Float16" => "f16",
        "int" => "i32",
        "unsigned int" | "unsigned" => "u32",
        "long" | "long long" => "i64",
        "unsigned long" | "unsigned long long" => "u64",
        "unsigned char" | "char" | "signed char" | "bool" => "u8",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_answer_by_range() {
        let mut a = Allocations::default();
        a.add(0x1000, 0x100);
        a.add(0x2000, 0x10);
        assert_eq!(a.containing(0x1000), Some((0x1000, 0x100)));
        assert_eq!(a.containing(0x10ff), Some((0x1000, 0x100)));
        assert_eq!(a.containing(0x1100), None, "one past the end is no allocation");
        assert_eq!(a.containing(0xfff), None);
        a.add(0x1080, 0x100); // reuses memory whose free was not seen
        assert_eq!(a.containing(0x1000), None);
        assert_eq!(a.containing(0x1100), Some((0x1080, 0x100)));
        a.remove(0x2000);
        assert_eq!(a.containing(0x2000), None);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn parameters_point_into_allocations() {
        let mut a = Allocations::default();
        a.add(0x7f00_0000_0000, 4000);
        a.add(0x7f00_0010_0000, 64);
        // (float* out, const float* x [into out's allocation + 16], float s, int n, {ptr, ptr} pair)
        let mut p = Vec::new();
        p.extend(0x7f00_0000_0000u64.to_le_bytes());
        p.extend(0x7f00_0000_0010u64.to_le_bytes());
        p.extend(2.5f32.to_le_bytes());
        p.extend(7i32.to_le_bytes());
        p.extend(0x7f00_0010_0008u64.to_le_bytes());
        p.extend(0xdead_0000u64.to_le_bytes());
        let layout = [
            ParamSlot { offset: 0, size: 8 },
            ParamSlot { offset: 8, size: 8 },
            ParamSlot { offset: 16, size: 4 },
            ParamSlot { offset: 20, size: 4 },
            ParamSlot { offset: 24, size: 16 },
        ];
        let types: Vec<String> = ["float*", "float const*", "float", "int", "pair"].map(String::from).to_vec();
        let (found, unknown) = pointed(&a, &p, &layout, Some(&types));
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].name.as_str(), found[0].elem, found[0].bytes), ("arg0", Some("f32"), 4000));
        assert_eq!((found[1].name.as_str(), found[1].elem), ("arg4", None), "inside a structure: type unknown");
        assert!(unknown.is_empty(), "a structure's unknown word is not a pointer parameter");
        // a pointer parameter whose value is no allocation
        p[8..16].copy_from_slice(&0x5555_0000u64.to_le_bytes());
        let (_, unknown) = pointed(&a, &p, &layout, Some(&types));
        assert_eq!(unknown, [Unknown { param: 1, value: 0x5555_0000 }]);
        // without declared types every word is still looked up
        let (found, unknown) = pointed(&a, &p, &layout, None);
        assert_eq!(found.len(), 2);
        assert!(unknown.is_empty());
    }

    #[test]
    fn parameter_types_from_demangled_names() {
        let t = param_types("saxpy(float*, float const*, float, int)").expect("a list");
        assert_eq!(t, ["float*", "float const*", "float", "int"]);
        let t = param_types("void scale<float, 3>(float*, std::pair<int, int>, double (*)(double))").expect("list");
        assert_eq!(t, ["float*", "std::pair<int, int>", "double (*)(double)"]);
        assert_eq!(param_types("k()"), Some(vec![]));
        assert_eq!(param_types("xv_div"), None);
        assert_eq!(pointee_elem("float const*"), Some("f32"));
        assert_eq!(pointee_elem("double* __restrict__"), Some("f64"));
        assert_eq!(pointee_elem("unsigned int*"), Some("u32"));
        assert_eq!(pointee_elem("float**"), None);
        assert_eq!(pointee_elem("float"), None);
        assert_eq!(pointee_elem("Foo*"), None);
        assert!(is_pointer("Foo const*") && !is_pointer("int"));
    }
}
