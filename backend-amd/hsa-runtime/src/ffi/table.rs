//! The API tables of `hsa_api_trace.h` and the exported entry points that
//! call through them. Every `hsa_*` symbol the library exports reads its
//! entry from the live tables on each call, so an entry a tool replaced in
//! `OnLoad` takes effect for the program; the tables start out (and are
//! reset at shut-down to) the runtime's own entries, or, for what the
//! runtime does not implement, entries that say so once and fail.
//!
//! The layouts are ROCm 5.2's (the headers `generated.rs` is made from):
//! each table starts with its `ApiTableVersion`, `minor_id` holding the
//! table's size in bytes as the headers' container sets it.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use super::generated::{AmdExtTable, CoreApiTable, FinalizerExtTable, ImageExtTable};

/// The version every table starts with (`struct ApiTableVersion`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApiTableVersion {
    pub major_id: u32,
    pub minor_id: u32,
    pub step_id: u32,
    pub reserved: u32,
}

/// The root table a tool's `OnLoad` receives (`struct HsaApiTable`).
#[repr(C)]
#[derive(Debug)]
pub struct HsaApiTable {
    pub version: ApiTableVersion,
    pub core_: *mut CoreApiTable,
    pub amd_ext_: *mut AmdExtTable,
    pub finalizer_ext_: *mut FinalizerExtTable,
    pub image_ext_: *mut ImageExtTable,
}

/// Major version of the root table and of each child table (ROCm 5.2's
/// `HSA_*_API_TABLE_MAJOR_VERSION`; all step versions are 0).
pub const TABLE_MAJOR_VERSION: u32 = 1;

/// The root table and the tables it points to, in one allocation
/// (`struct HsaApiTableContainer`).
#[repr(C)]
#[derive(Debug)]
pub struct Container {
    pub root: HsaApiTable,
    pub core: CoreApiTable,
    pub amd_ext: AmdExtTable,
    pub finalizer_ext: FinalizerExtTable,
    pub image_ext: ImageExtTable,
}

fn version_of<T>() -> ApiTableVersion {
    ApiTableVersion {
        major_id: TABLE_MAJOR_VERSION,
        minor_id: std::mem::size_of::<T>() as u32,
        step_id: 0,
        reserved: 0,
    }
}

impl Container {
    /// Writes the runtime's own tables at `at`, the root pointing at them.
    ///
    /// # Safety
    /// `at` is valid for writes of a `Container` and nothing else reads or
    /// writes it meanwhile.
    unsafe fn write_runtime_tables(at: *mut Container) {
        let mut core = CoreApiTable::runtime();
        core.version = version_of::<CoreApiTable>();
        let mut amd_ext = AmdExtTable::runtime();
        amd_ext.version = version_of::<AmdExtTable>();
        let mut finalizer_ext = FinalizerExtTable::runtime();
        finalizer_ext.version = version_of::<FinalizerExtTable>();
        let mut image_ext = ImageExtTable::runtime();
        image_ext.version = version_of::<ImageExtTable>();
        // SAFETY: the caller's promise; field pointers are derived from `at`.
        unsafe {
            at.write(Container {
                root: HsaApiTable {
                    version: version_of::<HsaApiTable>(),
                    core_: std::ptr::addr_of_mut!((*at).core),
                    amd_ext_: std::ptr::addr_of_mut!((*at).amd_ext),
                    finalizer_ext_: std::ptr::addr_of_mut!((*at).finalizer_ext),
                    image_ext_: std::ptr::addr_of_mut!((*at).image_ext),
                },
                core,
                amd_ext,
                finalizer_ext,
                image_ext,
            });
        }
    }
}

static LIVE: AtomicPtr<Container> = AtomicPtr::new(std::ptr::null_mut());
static LIVE_INIT: Mutex<()> = Mutex::new(());

/// The live tables (allocated once, never freed; tools may keep pointers
/// into them).
pub fn live() -> *mut Container {
    let p = LIVE.load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let _guard = LIVE_INIT.lock().unwrap_or_else(|e| e.into_inner());
    let p = LIVE.load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let at = Box::into_raw(Box::<std::mem::MaybeUninit<Container>>::new_uninit()).cast::<Container>();
    // SAFETY: a fresh allocation of the right size, not yet shared.
    unsafe { Container::write_runtime_tables(at) };
    LIVE.store(at, Ordering::Release);
    at
}

/// The root table handed to tools.
pub fn root() -> *mut HsaApiTable {
    // SAFETY: `live` is a valid container; no reference is formed.
    unsafe { std::ptr::addr_of_mut!((*live()).root) }
}

/// Puts the runtime's own entries back (at shut-down, after the tools'
/// `OnUnload`, as the real runtime does in case a tool did not restore
/// what it replaced).
pub fn reset() {
    // SAFETY: the live container is valid; the runtime resets it only at
    // shut-down, when the program makes no other HSA calls.
    unsafe { Container::write_runtime_tables(live()) };
}

/// What an entry returns when it cannot do its work.
pub trait Fallback {
    fn fallback() -> Self;
}
impl Fallback for u32 {
    fn fallback() -> u32 {
        super::generated::HSA_STATUS_ERROR
    }
}
impl Fallback for i64 {
    fn fallback() -> i64 {
        0
    }
}
impl Fallback for u64 {
    fn fallback() -> u64 {
        0
    }
}
impl Fallback for () {
    fn fallback() {}
}

static REPORTED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

fn report_once(name: &'static str, why: &str) {
    let mut seen = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&name) {
        seen.push(name);
        eprintln!("error: xfpx emulated HSA runtime: {name} {why}");
    }
}

/// The entry of a function the runtime does not implement: one line on
/// the first call, then the function's failure value.
pub fn unsupported<R: Fallback>(name: &'static str) -> R {
    report_once(name, "is not supported (it returns an error)");
    R::fallback()
}

/// A call through a table entry a tool set to null.
pub fn null_entry<R: Fallback>(name: &'static str) -> R {
    report_once(name, "has a null entry in the API table (a tool cleared it)");
    R::fallback()
}

/// Generates, from the entry list in `generated.rs`: each table struct with
/// its runtime entries and entry offsets, the `unsupported` entries, and the
/// exported symbols that call through the live tables.
#[doc(hidden)]
#[macro_export]
macro_rules! hsa_api_tables {
    ($( $table:ident $field:ident {
        $( $fname:ident = $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty ; )*
    } )*) => {
        $(
            #[repr(C)]
            #[derive(Clone, Copy)]
            #[allow(clippy::type_complexity)]
            pub struct $table {
                pub version: $crate::ffi::table::ApiTableVersion,
                $( pub $fname: Option<unsafe extern "C" fn($($ty),*) -> $ret>, )*
            }

            impl std::fmt::Debug for $table {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.debug_struct(stringify!($table)).field("version", &self.version).finish_non_exhaustive()
                }
            }

            impl $table {
                /// The runtime's own entries (version left zero).
                pub fn runtime() -> $table {
                    $table {
                        version: $crate::ffi::table::ApiTableVersion::default(),
                        $( $fname: Some($crate::ffi::entry::$name), )*
                    }
                }

                /// (entry, byte offset) of every entry, in table order.
                pub fn offsets() -> Vec<(&'static str, usize)> {
                    vec![$( (stringify!($fname), std::mem::offset_of!($table, $fname)), )*]
                }
            }
        )*

        /// Entries of functions the runtime does not implement.
        #[allow(clippy::unused_unit)]
        pub mod unsupported {
            use super::*;
            $( $(
                pub unsafe extern "C" fn $name($(_: $ty),*) -> $ret {
                    $crate::ffi::table::unsupported(stringify!($name))
                }
            )* )*
        }

        /// The exported symbols: each calls through the live table.
        #[allow(clippy::unused_unit, clippy::missing_safety_doc, clippy::too_many_arguments)]
        pub mod exports {
            use super::*;
            $( $(
                #[no_mangle]
                pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                    // SAFETY: the live container is valid; the entry is
                    // copied out, no reference is kept.
                    let entry = unsafe { (*$crate::ffi::table::live()).$field.$fname };
                    match entry {
                        // SAFETY: an entry of this table has this signature.
                        Some(f) => unsafe { f($($arg),*) },
                        None => $crate::ffi::table::null_entry(stringify!($name)),
                    }
                }
            )* )*
        }
    };
}
