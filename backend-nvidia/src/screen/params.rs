//! A launch's parameters as a screen reads them: the 8-byte words that
//! may be device pointers (by parameter), and what each parameter's
//! declared type, from the kernel's demangled name, says of the memory it
//! points to (its floating-point format, whether the kernel may write it).

use xfpx_common::class::FpFormat;

/// Where one parameter lies in the parameter bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSlot {
    pub offset: u64,
    pub size: u64,
}

/// One 8-byte-aligned word of the parameter bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamWord {
    /// The parameter holding it (index from 0).
    pub param: usize,
    pub value: u64,
    /// True when the word is the whole parameter (a pointer parameter);
    /// false for a word inside a larger one (a structure passed by value).
    pub whole: bool,
}

/// The 8-byte-aligned words of each parameter of at least 8 bytes.
pub fn words(params: &[u8], layout: &[ParamSlot]) -> Vec<ParamWord> {
    let mut out = Vec::new();
    for (param, slot) in layout.iter().enumerate() {
        let end = slot.offset.saturating_add(slot.size);
        let Some(mut at) = slot.offset.checked_next_multiple_of(8) else { continue };
        while at.saturating_add(8) <= end {
            let Some(b) = usize::try_from(at).ok().and_then(|a| params.get(a..a + 8)) else { break };
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            out.push(ParamWord { param, value: u64::from_le_bytes(w), whole: slot.size == 8 && at == slot.offset });
            at += 8;
        }
    }
    out
}

/// What a parameter's declared type says of the memory it may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// A pointer to floating-point data of `format`; `read_only` when the
    /// data is `const` (the kernel does not write it).
    FpPointer { format: FpFormat, read_only: bool },
    /// A pointer to data that is not floating-point (integers, pointers).
    OtherPointer,
    /// A number passed by value: no pointer.
    Scalar,
    /// Unknown: raw bytes (`void*`, `char*`), a structure by value, a type
    /// not known here. Its words may point to memory of any format.
    Opaque,
}

/// The parameter types of a demangled function name
/// (`relax_step(int, float*, float const*)` → `int`, `float*`,
/// `float const*`); `None` when the name has no parameter list (a C name).
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
    let inner = s[open? + 1..s.len() - 1].trim();
    if inner.is_empty() || inner == "void" {
        return Some(Vec::new());
    }
    let mut types = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                types.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    types.push(inner[start..].trim().to_string());
    Some(types)
}

/// Words a type may end with that qualify the pointer itself.
const POINTER_QUALIFIERS: &[&str] = &["const", "volatile", "restrict", "__restrict", "__restrict__"];

/// What declared type `t` says (see [`Declared`]).
pub fn declared(t: &str) -> Declared {
    let mut t = t.trim();
    // qualifiers of the pointer itself (`float* const`)
    while let Some(q) = POINTER_QUALIFIERS.iter().find(|q| t.ends_with(*q) && t.len() > q.len()) {
        let head = &t[..t.len() - q.len()];
        if !head.ends_with([' ', '*']) {
            break;
        }
        t = head.trim_end();
    }
    let Some(pointee) = t.strip_suffix('*') else {
        return if is_scalar(t) { Declared::Scalar } else { Declared::Opaque };
    };
    if pointee.contains('*') || pointee.contains('&') {
        return Declared::OtherPointer;
    }
    let words: Vec<&str> = pointee.split_whitespace().collect();
    let read_only = words.contains(&"const");
    let base: Vec<&str> = words.into_iter().filter(|w| *w != "const" && *w != "volatile").collect();
    let base = base.join(" ");
    match fp_format_of(&base) {
        Some(format) => Declared::FpPointer { format, read_only },
        None if matches!(base.as_str(), "void" | "char" | "signed char" | "unsigned char") => Declared::Opaque,
        None if is_scalar(&base) => Declared::OtherPointer,
        None => Declared::Opaque,
    }
}

/// The floating-point format of an element type's name, if it is one.
fn fp_format_of(base: &str) -> Option<FpFormat> {
    let f = match base {
        "float" | "float1" | "float2" | "float3" | "float4" | "cuComplex" | "cuFloatComplex" => FpFormat::F32,
        "double" | "double1" | "double2" | "double3" | "double4" | "cuDoubleComplex" => FpFormat::F64,
        "__half" | "half" | "__half2" | "half2" | "c10::Half" => FpFormat::F16,
        "__nv_bfloat16" | "nv_bfloat16" | "__nv_bfloat162" | "nv_bfloat162" | "c10::BFloat16" => FpFormat::Bf16,
        _ if base.ends_with("complex<float>") => FpFormat::F32,
        _ if base.ends_with("complex<double>") => FpFormat::F64,
        _ => return None,
    };
    Some(f)
}

/// Built-in numbers (as the demangler spells them), which are no pointer.
fn is_scalar(t: &str) -> bool {
    let t = t.strip_prefix("const ").unwrap_or(t);
    let t = t.strip_suffix(" const").unwrap_or(t);
    fp_format_of(t).is_some()
        || matches!(
            t,
            "bool"
                | "char"
                | "signed char"
                | "unsigned char"
                | "short"
                | "unsigned short"
                | "int"
                | "unsigned int"
                | "long"
                | "unsigned long"
                | "long long"
                | "unsigned long long"
                | "__int128"
                | "unsigned __int128"
                | "wchar_t"
                | "char16_t"
                | "char32_t"
                | "std::nullptr_t"
                | "decltype(nullptr)"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_aligned_eight_bytes_of_each_parameter() {
        // int n at 0, float* x at 8, a 24-byte structure at 16, float at 40
        let mut p = vec![0u8; 48];
        p[0..4].copy_from_slice(&7u32.to_le_bytes());
        p[8..16].copy_from_slice(&0x7f00_0000_1000u64.to_le_bytes());
        p[16..24].copy_from_slice(&11u64.to_le_bytes());
        p[24..32].copy_from_slice(&0x7f00_0000_2000u64.to_le_bytes());
        p[32..40].copy_from_slice(&13u64.to_le_bytes());
        let layout = [
            ParamSlot { offset: 0, size: 4 },
            ParamSlot { offset: 8, size: 8 },
            ParamSlot { offset: 16, size: 24 },
            ParamSlot { offset: 40, size: 4 },
        ];
        let w = words(&p, &layout);
        assert_eq!(
            w,
            vec![
                ParamWord { param: 1, value: 0x7f00_0000_1000, whole: true },
                ParamWord { param: 2, value: 11, whole: false },
                ParamWord { param: 2, value: 0x7f00_0000_2000, whole: false },
                ParamWord { param: 2, value: 13, whole: false },
            ]
        );
        // a layout past the bytes given stops there, never panics
        assert_eq!(words(&p[..20], &layout).len(), 1);
        assert!(words(&[], &[ParamSlot { offset: u64::MAX - 3, size: 8 }]).is_empty());
        // an unaligned 12-byte parameter has one aligned word inside
        assert_eq!(
            words(&p, &[ParamSlot { offset: 4, size: 12 }]),
            vec![ParamWord { param: 0, value: 0x7f00_0000_1000, whole: false }]
        );
    }

    #[test]
    fn parameter_types_come_from_the_last_parenthesised_group() {
        assert_eq!(
            param_types("relax_step(int, float*, float const*, float*, float, int)"),
            Some(
                vec!["int", "float*", "float const*", "float*", "float", "int"].into_iter().map(String::from).collect()
            )
        );
        assert_eq!(
            param_types("void gemm<float, 64>(Params<float, (int)2>, double (*)(int))"),
            Some(vec!["Params<float, (int)2>".to_string(), "double (*)(int)".to_string()])
        );
        assert_eq!(param_types("k()"), Some(vec![]));
        assert_eq!(param_types("k(void)"), Some(vec![]));
        assert_eq!(param_types("extern_c_kernel"), None);
        assert_eq!(param_types("broken)"), None);
    }

    #[test]
    fn declared_types_say_format_and_whether_written() {
        let fp = |format, read_only| Declared::FpPointer { format, read_only };
        assert_eq!(declared("float*"), fp(FpFormat::F32, false));
        assert_eq!(declared("float const*"), fp(FpFormat::F32, true));
        assert_eq!(declared("const double*"), fp(FpFormat::F64, true));
        assert_eq!(declared("double* __restrict__"), fp(FpFormat::F64, false));
        assert_eq!(declared("float4*"), fp(FpFormat::F32, false));
        assert_eq!(declared("__half2*"), fp(FpFormat::F16, false));
        assert_eq!(declared("__nv_bfloat16 const*"), fp(FpFormat::Bf16, true));
        assert_eq!(declared("c10::complex<double>*"), fp(FpFormat::F64, false));
        assert_eq!(declared("int*"), Declared::OtherPointer);
        assert_eq!(declared("unsigned long long*"), Declared::OtherPointer);
        assert_eq!(declared("float**"), Declared::OtherPointer);
        assert_eq!(declared("void*"), Declared::Opaque);
        assert_eq!(declared("unsigned char*"), Declared::Opaque);
        assert_eq!(declared("Node<float>*"), Declared::Opaque);
        assert_eq!(declared("float"), Declared::Scalar);
        assert_eq!(declared("unsigned long"), Declared::Scalar);
        assert_eq!(declared("int const"), Declared::Scalar);
        assert_eq!(declared("Params<float, (int)2>"), Declared::Opaque);
    }
}
