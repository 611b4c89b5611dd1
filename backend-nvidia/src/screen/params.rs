//! What a kernel parameter's declared type (from the kernel's demangled
//! name, `xfpx_common::capture::memory::param_types`) says of the memory it
//! points to, for launch screening: its floating-point format, and whether
//! the kernel may write it.

use std::collections::BTreeSet;

use xfpx_common::class::FpFormat;

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

/// The floating-point element types a kernel's demangled name names (its
/// template arguments and parameter types: `FillFunctor<float>`,
/// `c10::Half`), each a whole name: what a kernel not yet planned is
/// taken to compute in. Empty for a name that names none (a C name, one
/// whose types are spelled otherwise).
pub fn formats_named(demangled: &str) -> BTreeSet<FpFormat> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    demangled.split(|c: char| !name_char(c)).filter_map(|word| fp_format_of(word.trim_matches(':'))).collect()
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

    #[test]
    fn a_name_names_the_formats_of_its_type_arguments() {
        let named = |n: &str| formats_named(n).into_iter().collect::<Vec<_>>();
        assert_eq!(
            named(
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, \
                 std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
            ),
            [FpFormat::F32]
        );
        assert_eq!(
            named("void k<c10::Half, double>(c10::Half*, double, c10::complex<float>)"),
            [FpFormat::F16, FpFormat::F32, FpFormat::F64]
        );
        assert_eq!(named("void k<c10::BFloat16>(int)"), [FpFormat::Bf16]);
        // words that only contain a type's name, and names with no type
        assert!(named("void to_float_kernel(at::native::half_helper, floatish)").is_empty());
        assert!(named("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n").is_empty());
        assert!(named("k(void*)").is_empty());
    }
}
