//! The flat C interface of the disassembly at first launch
//! ([`xfpx_nvidia::prefill::at_launch`]): the shim asks, at a kernel's
//! first launch, whether NVBit's disassembly of it and of the functions it
//! calls is cached, and at its later launches whether it is ready. Like
//! [`crate::ffi`], every entry catches panics and reports failures as
//! return values or notes.

use crate::ffi::{str_arg, with_core, DEVICE_TARGET, NVDISASM_WRAPPER};
use std::ffi::{c_char, c_int};
use std::os::unix::ffi::OsStrExt as _;
use std::panic::catch_unwind;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use xfpx_nvidia::mapped::OwnMemory;
use xfpx_nvidia::module_image;
use xfpx_nvidia::prefill::at_launch::{AtLaunch, Readiness};
use xfpx_nvidia::prefill::library_index::LibraryIndex;
use xfpx_nvidia::prefill::{self, PrefillProgress};

/// The functions disassembled at first launches.
static PROGRESS: PrefillProgress = PrefillProgress::new();
static AT_LAUNCH: OnceLock<AtLaunch> = OnceLock::new();

/// The libraries' functions, for kernels whose module NVBit cannot dump.
static LIBRARY_INDEX: OnceLock<LibraryIndex> = OnceLock::new();

/// The libraries' index for target `sm` (made at the first call).
fn library_index(sm: u32) -> &'static LibraryIndex {
    LIBRARY_INDEX.get_or_init(|| LibraryIndex::new(sm, "/proc/self/exe".into()))
}

/// Index the functions of the libraries the program has mapped, in the
/// background, once the device's target is known (at most 30 s from now).
pub(crate) fn index_libraries() {
    let _ = std::thread::Builder::new().name("xfpx-library-index".into()).spawn(|| {
        let Some(sm) = DEVICE_TARGET.wait(prefill::TARGET_WAIT) else { return };
        library_index(sm).update_in_background();
    });
}

/// What the disassembly at first launch did, for the summary (none when
/// it did nothing).
pub(crate) fn finish_note() -> Option<String> {
    let indexed = LIBRARY_INDEX.get().map_or(0, LibraryIndex::len);
    let (images, image_functions) = LIBRARY_INDEX.get().map_or((0, 0), LibraryIndex::images);
    let answered = PROGRESS.answered();
    let unknown = AT_LAUNCH.get().map(AtLaunch::unknown).unwrap_or_default();
    (indexed > 0 || answered > 0).then(|| {
        format!(
            "background disassembly at first launches: {answered} functions filed in the cache; \
             {indexed} functions of the libraries and of {images} module images loaded from memory \
             ({image_functions} functions) indexed ({} functions not found in their module or in the \
             index at their kernel's first launch, left to NVBit{})",
            unknown.len(),
            named(&unknown)
        )
    })
}

/// The first few of `names`, each cut short, after a colon (none: "").
fn named(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(": {}", xfpx_common::names::listed(names, 4, 72))
}

/// The disassembly at first launch, once the cache and the device's
/// target are known (none when either is not).
fn at_launch() -> Option<&'static AtLaunch> {
    if let Some(a) = AT_LAUNCH.get() {
        return Some(a);
    }
    let Some(Some((cache, wrapper))) = NVDISASM_WRAPPER.get() else { return None };
    let sm = DEVICE_TARGET.wait(Duration::ZERO)?;
    let wrapper = Path::new(std::ffi::OsStr::from_bytes(wrapper.as_bytes())).to_path_buf();
    Some(AT_LAUNCH.get_or_init(|| AtLaunch::new(cache.clone(), wrapper, sm, &PROGRESS)))
}

/// The `n` names of `names`, the kernel's first.
///
/// # Safety
/// `names` points to `n` null or NUL-terminated strings.
unsafe fn name_list<'a>(names: *const *const c_char, n: u64) -> Vec<&'a str> {
    if names.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: forwarded from the caller's contract.
    unsafe { std::slice::from_raw_parts(names, n as usize).iter().map(|&p| str_arg(p)).collect() }
}

/// 1 when kernels whose disassembly is not cached at their first launch
/// may run screened while it is made (then the shim dumps a kernel's module
/// for [`xfpx_prepare_ahead`]).
#[no_mangle]
pub extern "C" fn xfpx_prepares_ahead() -> c_int {
    c_int::from(with_core(false, |c| c.prepares_in_background()) && at_launch().is_some())
}

/// At a kernel's first launch: 1 to instrument it now, 0 when its launches
/// run screened while the disassembly NVBit needs is made in the
/// background (ask [`xfpx_prepared`] at its next launches). `module` is
/// the file NVBit dumped the kernel's module into ("" when it could not);
/// `names` the mangled names of the kernel (first) and of the functions it
/// calls.
///
/// # Safety
/// `module` is null or a NUL-terminated string; `names` points to `n` null
/// or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_prepare_ahead(module: *const c_char, names: *const *const c_char, n: u64) -> c_int {
    // SAFETY: forwarded from the caller's contract.
    let (module, names) = unsafe { (str_arg(module), name_list(names, n)) };
    let decided = catch_unwind(|| {
        if names.is_empty() || !with_core(false, |c| c.prepares_in_background()) {
            return 1;
        }
        decide(module, &names)
    });
    decided.unwrap_or(1)
}

/// Start what the kernel (the first of `names`) needs, its code from the
/// dumped `module` ("": the libraries' index): 1 when it can be
/// instrumented now, 0 when it waits.
fn decide(module: &str, names: &[&str]) -> c_int {
    let Some(&kernel) = names.first() else { return 1 };
    let Some(at) = at_launch() else { return 1 };
    let functions = if module.is_empty() {
        Ok(LIBRARY_INDEX.get().map(|index| index.functions(names)).unwrap_or_default())
    } else {
        std::fs::read(module)
            .map_err(|e| e.to_string())
            .and_then(|bytes| xfpx_nvidia::fatbin::cubin_functions(&bytes).map_err(|e| e.to_string()))
    };
    match functions.and_then(|f| at.prepare(&f, names, |n| prefill::AHEAD.contains(n))) {
        Ok(Readiness::Ready) => 1,
        Ok(Readiness::Preparing { .. }) => {
            with_core((), |c| c.preparing(kernel));
            0
        }
        Err(e) => {
            // (said once: NVBit disassembles such kernels at their first launch, as without this)
            static SAID: AtomicBool = AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                with_core((), |c| c.note(&format!("a kernel's module could not be read ahead of NVBit: {e}")));
            }
            1
        }
    }
}

/// A module image the program hands the driver from memory (the `image`,
/// `fatCubin` or `code` argument of `cuModuleLoadData`, `cuModuleLoadDataEx`,
/// `cuModuleLoadFatBinary`, `cuLibraryLoadData`): a copy goes to the
/// libraries' index, for kernels whose module NVBit cannot dump. It is
/// read through `/proc/self/mem` ([`module_image::copy_from_memory`]), so
/// an image whose headers lie gives nothing rather than a fault; images
/// inside a mapped file's fat binary (the index reads those from the
/// file), PTX and anything else are left alone.
#[no_mangle]
pub extern "C" fn xfpx_module_image(image: *const std::ffi::c_void) {
    let addr = image as u64;
    let _ = catch_unwind(|| {
        let Some(sm) = DEVICE_TARGET.wait(Duration::ZERO) else { return };
        static MEMORY: OnceLock<Option<OwnMemory>> = OnceLock::new();
        let Some(memory) = MEMORY.get_or_init(OwnMemory::open) else { return };
        if let Some(bytes) = module_image::copy_from_memory(memory, addr) {
            library_index(sm).add_image(bytes);
        }
    });
}

/// At a later launch of a kernel [`xfpx_prepare_ahead`] made wait: 1 when
/// its functions (`names`, the kernel's first) are ready, and it is to be
/// instrumented now.
///
/// # Safety
/// `names` points to `n` null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_prepared(names: *const *const c_char, n: u64) -> c_int {
    // SAFETY: forwarded from the caller's contract.
    let names = unsafe { name_list(names, n) };
    let Some(&kernel) = names.first() else { return 1 };
    // (after a panic, as when ready: the shim instruments it, so the core must too)
    if catch_unwind(|| at_launch().is_some_and(|at| !at.ready(&names))).unwrap_or(false) {
        return 0;
    }
    with_core((), |c| c.prepared(kernel));
    1
}

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn names_left_to_nvbit_are_listed_short() {
        assert_eq!(named(&[]), "");
        let long = format!("_ZN2at6native{}", "x".repeat(100));
        let names: Vec<String> = vec!["a".into(), long, "c".into(), "d".into(), "e".into(), "f".into()];
        let said = named(&names);
        assert!(said.starts_with(": a, _ZN2at6native"), "{said}");
        assert!(said.contains("..., c, d and 2 more"), "{said}");
        assert!(said.len() < 120, "{said}");
    }
}
