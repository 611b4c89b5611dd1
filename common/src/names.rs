//! Kernel names as people read them: the demangled form of an
//! Itanium-mangled C++ name (what HIP and CUDA compilers emit for
//! non-`extern "C"` kernels), spelled as `c++filt` spells it; and as file
//! names ([`file_stem`]).

/// The demangled form of `name` when it is an Itanium-mangled C++ name
/// (`_Z...`), e.g. `_Z6scaleIfEvPT_S1_S0_` → `void scale<float>(float*,
/// float*, float)`; `None` for any other name (C names, names already
/// demangled, and mangled names the demangler does not accept).
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name.as_bytes()).ok()?;
    let text = symbol.demangle().ok()?;
    (text != name && !text.is_empty()).then_some(text)
}

/// The name to show a person: demangled when `name` is mangled, else as is.
pub fn readable(name: &str) -> String {
    demangle(name).unwrap_or_else(|| name.to_string())
}

/// The first `shown` of `names`, each cut after `chars` characters (the
/// cut marked `...`), joined with commas, then how many more there are:
/// `a, b... and 2 more`.
pub fn listed(names: &[String], shown: usize, chars: usize) -> String {
    let cut = |n: &String| match n.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &n[..at]),
        None => n.clone(),
    };
    let listed: Vec<String> = names.iter().take(shown).map(cut).collect();
    match names.len().saturating_sub(shown) {
        0 => listed.join(", "),
        more => format!("{} and {more} more", listed.join(", ")),
    }
}

/// A kernel's name as a file name: characters other than ASCII letters,
/// digits and `_` become `_`, at most 150 of them (`kernel` when empty).
pub fn file_stem(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).take(150).collect();
    if s.is_empty() {
        "kernel".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected texts are those of GNU `c++filt` (binutils 2.40) on the same
    // names; `llvm-cxxfilt-19` agrees except that it writes lambdas as
    // `'lambda'(float)`.
    #[test]
    fn names_are_listed_cut_short_with_how_many_more() {
        let names: Vec<String> = ["alpha", "beta", "gamma", "delta"].map(String::from).to_vec();
        assert_eq!(listed(&names, 2, 3), "alp..., bet... and 2 more");
        assert_eq!(listed(&names[..2], 3, 10), "alpha, beta");
        assert_eq!(listed(&[], 3, 10), "");
    }

    #[test]
    fn demangles_plain_template_and_namespaced_kernels() {
        assert_eq!(demangle("_Z4gemmPfS_S_i").as_deref(), Some("gemm(float*, float*, float*, int)"));
        assert_eq!(
            demangle("_Z11lines_scaleIfEvPT_PKS0_S0_").as_deref(),
            Some("void lines_scale<float>(float*, float const*, float)")
        );
        assert_eq!(
            demangle("_ZN3app10normalizedEPfPKfi").as_deref(),
            Some("app::normalized(float*, float const*, int)")
        );
    }

    #[test]
    fn demangles_lambdas_and_hip_launch_names() {
        // A kernel template instantiated with a lambda (as HIP and CUDA
        // libraries launch them) and one with a non-type template argument.
        assert_eq!(
            demangle("_Z6launchIZ4mainEUlfE_EvT_").as_deref(),
            Some("void launch<main::{lambda(float)#1}>(main::{lambda(float)#1})")
        );
        assert_eq!(
            demangle("_Z9block_sumILi256EEvPKfPf").as_deref(),
            Some("void block_sum<256>(float const*, float*)")
        );
    }

    #[test]
    fn leaves_other_names_alone() {
        assert_eq!(demangle("exc_nan"), None);
        assert_eq!(demangle("gemm(float*, int)"), None);
        assert_eq!(demangle("_Znot a name"), None);
        assert_eq!(demangle(""), None);
        assert_eq!(readable("exc_nan"), "exc_nan");
        assert_eq!(readable("_Z4gemmPfS_S_i"), "gemm(float*, float*, float*, int)");
    }
}
