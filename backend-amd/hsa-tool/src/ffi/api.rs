//! The runtime's API table through raw pointers: the versions it states,
//! the entries the tool calls (saved as the table held them at `OnLoad`,
//! so tools loaded before this one stay in the chain), and the entries it
//! replaces. Offsets come from [`crate::layout`], never from a guess.

use crate::layout::{self, Entry, Layout, Table, Version};
use std::ffi::{c_char, c_int, c_void};

pub type Status = u32;
pub type Handle = u64;

pub type QueueErrorCallback = unsafe extern "C" fn(Status, *mut c_void, *mut c_void);
pub type PacketWriter = unsafe extern "C" fn(*const c_void, u64);
pub type InterceptHandler = unsafe extern "C" fn(*const c_void, u64, u64, *mut c_void, PacketWriter);
pub type HandleCallback = unsafe extern "C" fn(Handle, *mut c_void) -> Status;
pub type SymbolCallback = unsafe extern "C" fn(Handle, Handle, *mut c_void) -> Status;

pub type GetInfoFn = unsafe extern "C" fn(Handle, u32, *mut c_void) -> Status;
pub type QueueCreateFn = unsafe extern "C" fn(
    Handle,
    u32,
    u32,
    Option<QueueErrorCallback>,
    *mut c_void,
    u32,
    u32,
    *mut *mut c_void,
) -> Status;
pub type IterateRegionsFn = unsafe extern "C" fn(Handle, HandleCallback, *mut c_void) -> Status;
pub type MemoryAllocateFn = unsafe extern "C" fn(Handle, usize, *mut *mut c_void) -> Status;
pub type SignalCreateFn = unsafe extern "C" fn(i64, u32, *const Handle, *mut Handle) -> Status;
pub type SignalDestroyFn = unsafe extern "C" fn(Handle) -> Status;
pub type SignalLoadFn = unsafe extern "C" fn(Handle) -> i64;
pub type SignalSubtractFn = unsafe extern "C" fn(Handle, i64);
pub type DeserializeFn = unsafe extern "C" fn(*mut c_void, usize, *const c_char, *mut Handle) -> Status;
pub type HandleFn = unsafe extern "C" fn(Handle) -> Status;
pub type LoadCodeObjectFn = unsafe extern "C" fn(Handle, Handle, Handle, *const c_char) -> Status;
pub type FreezeFn = unsafe extern "C" fn(Handle, *const c_char) -> Status;
pub type IterateSymbolsFn = unsafe extern "C" fn(Handle, SymbolCallback, *mut c_void) -> Status;
pub type ReaderFromFileFn = unsafe extern "C" fn(c_int, *mut Handle) -> Status;
pub type ReaderFromMemoryFn = unsafe extern "C" fn(*const c_void, usize, *mut Handle) -> Status;
pub type ExecutableCreateAltFn = unsafe extern "C" fn(u32, u32, *const c_char, *mut Handle) -> Status;
pub type LoadProgramCodeObjectFn = unsafe extern "C" fn(Handle, Handle, *const c_char, *mut Handle) -> Status;
pub type LoadAgentCodeObjectFn = unsafe extern "C" fn(Handle, Handle, Handle, *const c_char, *mut Handle) -> Status;
pub type GetSymbolByNameFn = unsafe extern "C" fn(Handle, *const c_char, *const Handle, *mut Handle) -> Status;
pub type InterceptRegisterFn = unsafe extern "C" fn(*mut c_void, InterceptHandler, *mut c_void) -> Status;

/// The entries the tool calls, as the table held them at `OnLoad`.
#[derive(Debug, Clone, Copy)]
pub struct Saved {
    pub agent_get_info: GetInfoFn,
    pub queue_create: QueueCreateFn,
    pub agent_iterate_regions: IterateRegionsFn,
    pub region_get_info: GetInfoFn,
    pub memory_allocate: MemoryAllocateFn,
    pub signal_create: SignalCreateFn,
    pub signal_destroy: SignalDestroyFn,
    pub signal_load_scacquire: SignalLoadFn,
    pub signal_subtract_screlease: SignalSubtractFn,
    pub code_object_deserialize: DeserializeFn,
    pub executable_destroy: HandleFn,
    pub executable_load_code_object: LoadCodeObjectFn,
    pub executable_freeze: FreezeFn,
    pub executable_get_info: GetInfoFn,
    pub executable_symbol_get_info: GetInfoFn,
    pub executable_iterate_symbols: IterateSymbolsFn,
    pub reader_create_from_file: ReaderFromFileFn,
    pub reader_create_from_memory: ReaderFromMemoryFn,
    pub reader_destroy: HandleFn,
    pub executable_create_alt: ExecutableCreateAltFn,
    pub executable_load_program_code_object: LoadProgramCodeObjectFn,
    pub executable_load_agent_code_object: LoadAgentCodeObjectFn,
    pub executable_get_symbol_by_name: GetSymbolByNameFn,
    pub queue_intercept_create: QueueCreateFn,
    pub queue_intercept_register: InterceptRegisterFn,
}

/// The runtime's core and AMD extension tables, laid out as `layout` says.
#[derive(Debug, Clone, Copy)]
pub struct Tables {
    core: *mut u8,
    amd_ext: *mut u8,
    pub layout: &'static Layout,
}

/// Reads the version at the start of a table.
///
/// # Safety
/// `table` points to a readable `ApiTableVersion`.
unsafe fn version(table: *const u8) -> Version {
    let word = |i: usize| {
        // SAFETY: the version is four readable u32 words (caller's contract).
        unsafe { std::ptr::read_unaligned(table.add(4 * i).cast::<u32>()) }
    };
    Version { major: word(0), minor: word(1), step: word(2) }
}

impl Tables {
    /// The tables under the root table `root`, if their layout is known.
    ///
    /// # Safety
    /// `root` is null or the runtime's `HsaApiTable`, whose `core_` and
    /// `amd_ext_` pointers are null or point to their tables.
    pub unsafe fn read(root: *mut c_void) -> Result<Tables, String> {
        let root = root.cast::<u8>();
        if root.is_null() {
            return Err("the HSA runtime passed no API table".into());
        }
        // SAFETY: the root table starts with its version (caller's contract).
        let root_version = unsafe { version(root) };
        if (root_version.minor as usize) < layout::ROOT_AMD_EXT + 8 {
            return Err(format!("the HSA runtime's root API table is too small ({} bytes)", root_version.minor));
        }
        // SAFETY: the root table holds both pointers (its size was checked above).
        let (core, amd_ext) = unsafe {
            (
                std::ptr::read_unaligned(root.add(layout::ROOT_CORE).cast::<*mut u8>()),
                std::ptr::read_unaligned(root.add(layout::ROOT_AMD_EXT).cast::<*mut u8>()),
            )
        };
        if core.is_null() || amd_ext.is_null() {
            return Err("the HSA runtime's API table has no core or AMD extension table".into());
        }
        // SAFETY: both point to tables, each starting with its version.
        let (core_version, amd_version) = unsafe { (version(core), version(amd_ext)) };
        let layout = layout::choose(root_version, core_version, amd_version)?;
        Ok(Tables { core, amd_ext, layout })
    }

    fn slot(&self, entry: Entry) -> *mut usize {
        let base = match entry.table() {
            Table::AmdExt => self.amd_ext,
            _ => self.core,
        };
        // the offset lies inside the table (the layout was chosen for its size)
        base.wrapping_add(self.layout.offset(entry)).cast::<usize>()
    }

    /// The entry's current value (0: none).
    ///
    /// # Safety
    /// The tables are the runtime's, alive.
    pub unsafe fn get(&self, entry: Entry) -> usize {
        // SAFETY: an aligned slot of a live table (caller's contract).
        unsafe { std::ptr::read_volatile(self.slot(entry)) }
    }

    /// Replaces the entry.
    ///
    /// # Safety
    /// The tables are the runtime's, alive and writable (as during `OnLoad`);
    /// `f` is a function of the entry's type.
    pub unsafe fn set(&self, entry: Entry, f: usize) {
        // SAFETY: an aligned slot of a live table (caller's contract).
        unsafe { std::ptr::write_volatile(self.slot(entry), f) }
    }

    /// The entries the tool calls; the first null one is an error.
    ///
    /// # Safety
    /// As [`Tables::get`]; each non-null entry is a function of its type.
    pub unsafe fn saved(&self) -> Result<Saved, String> {
        let mut missing = None;
        let mut take = |e: Entry| {
            // SAFETY: forwarded from the caller's contract.
            let v = unsafe { self.get(e) };
            if v == 0 && missing.is_none() {
                missing = Some(e);
            }
            v
        };
        macro_rules! entry {
            ($e:expr, $ty:ty) => {{
                let v = take($e);
                if v == 0 {
                    None
                } else {
                    // SAFETY: a non-null entry of the table holds a function
                    // of the type its field declares (caller's contract).
                    Some(unsafe { std::mem::transmute::<usize, $ty>(v) })
                }
            }};
        }
        let saved = (|| {
            Some(Saved {
                agent_get_info: entry!(Entry::AgentGetInfo, GetInfoFn)?,
                queue_create: entry!(Entry::QueueCreate, QueueCreateFn)?,
                agent_iterate_regions: entry!(Entry::AgentIterateRegions, IterateRegionsFn)?,
                region_get_info: entry!(Entry::RegionGetInfo, GetInfoFn)?,
                memory_allocate: entry!(Entry::MemoryAllocate, MemoryAllocateFn)?,
                signal_create: entry!(Entry::SignalCreate, SignalCreateFn)?,
                signal_destroy: entry!(Entry::SignalDestroy, SignalDestroyFn)?,
                signal_load_scacquire: entry!(Entry::SignalLoadScacquire, SignalLoadFn)?,
                signal_subtract_screlease: entry!(Entry::SignalSubtractScrelease, SignalSubtractFn)?,
                code_object_deserialize: entry!(Entry::CodeObjectDeserialize, DeserializeFn)?,
                executable_destroy: entry!(Entry::ExecutableDestroy, HandleFn)?,
                executable_load_code_object: entry!(Entry::ExecutableLoadCodeObject, LoadCodeObjectFn)?,
                executable_freeze: entry!(Entry::ExecutableFreeze, FreezeFn)?,
                executable_get_info: entry!(Entry::ExecutableGetInfo, GetInfoFn)?,
                executable_symbol_get_info: entry!(Entry::ExecutableSymbolGetInfo, GetInfoFn)?,
                executable_iterate_symbols: entry!(Entry::ExecutableIterateSymbols, IterateSymbolsFn)?,
                reader_create_from_file: entry!(Entry::ReaderCreateFromFile, ReaderFromFileFn)?,
                reader_create_from_memory: entry!(Entry::ReaderCreateFromMemory, ReaderFromMemoryFn)?,
                reader_destroy: entry!(Entry::ReaderDestroy, HandleFn)?,
                executable_create_alt: entry!(Entry::ExecutableCreateAlt, ExecutableCreateAltFn)?,
                executable_load_program_code_object: entry!(
                    Entry::ExecutableLoadProgramCodeObject,
                    LoadProgramCodeObjectFn
                )?,
                executable_load_agent_code_object: entry!(Entry::ExecutableLoadAgentCodeObject, LoadAgentCodeObjectFn)?,
                executable_get_symbol_by_name: entry!(Entry::ExecutableGetSymbolByName, GetSymbolByNameFn)?,
                queue_intercept_create: entry!(Entry::QueueInterceptCreate, QueueCreateFn)?,
                queue_intercept_register: entry!(Entry::QueueInterceptRegister, InterceptRegisterFn)?,
            })
        })();
        saved.ok_or_else(|| {
            let field = missing.map_or("?", Entry::field);
            format!("the HSA runtime's API table has no {field}")
        })
    }
}
