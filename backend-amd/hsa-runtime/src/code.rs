//! Code objects and executables: readers (the bytes a program handed over),
//! executables with the code objects loaded into them, and their symbols.
//! Loading places a code object's image in host memory (page-aligned,
//! dynamic relocations applied) where kernels run from it, and records each
//! kernel's `kernel_object` (the address of its descriptor in that image) so
//! a dispatch packet maps back to the code object and kernel.

use crate::agents::Agent;
use crate::ffi::generated::*;
use crate::ffi::host::HostBlock;
use crate::memory::{self, Use};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use xfpx_amd_emu::program::{Kernel, Program};
use xfpx_amd_isa::Target;
use xfpx_amd_object::CodeObject;

/// A failed call: its status and, where useful, a line saying why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: hsa_status_t,
    pub why: Option<String>,
}

fn fail<T>(status: hsa_status_t) -> Result<T, Failure> {
    Err(Failure { status, why: None })
}

fn fail_because<T>(status: hsa_status_t, why: String) -> Result<T, Failure> {
    Err(Failure { status, why: Some(why) })
}

#[derive(Debug, Clone)]
pub enum SymbolKind {
    Kernel {
        object: u64,
        /// Index into the loaded object's program's kernels.
        kernel: usize,
        kernarg_size: u32,
        kernarg_align: u32,
        group_size: u32,
        private_size: u32,
        dynamic_stack: bool,
    },
    Variable {
        address: u64,
        size: u64,
    },
}

#[derive(Debug, Clone)]
pub struct Symbol {
    pub handle: u64,
    /// The ELF symbol's name (`vadd.kd` for a kernel).
    pub name: String,
    pub kind: SymbolKind,
}

/// A code object loaded into an executable for an agent.
#[derive(Debug)]
pub struct LoadedObject {
    pub handle: u64,
    pub executable: u64,
    pub agent: Agent,
    /// The code object as loaded (the loader extension reports it).
    pub storage: Arc<Vec<u8>>,
    pub image_base: u64,
    pub image_len: usize,
    pub program: Program,
    pub symbols: Vec<Symbol>,
}

impl LoadedObject {
    pub fn kernel(&self, index: usize) -> Option<&Kernel> {
        self.program.kernels.get(index)
    }
}

#[derive(Debug)]
pub struct Executable {
    pub profile: hsa_profile_t,
    pub rounding: hsa_default_float_rounding_mode_t,
    pub frozen: bool,
    pub objects: Vec<Arc<LoadedObject>>,
}

#[derive(Debug, Default)]
struct Registry {
    next: u64,
    readers: HashMap<u64, Arc<Vec<u8>>>,
    /// Deprecated `hsa_code_object_t`s (from `hsa_code_object_deserialize`).
    code_objects: HashMap<u64, Arc<Vec<u8>>>,
    executables: HashMap<u64, Executable>,
    /// symbol handle -> (loaded object, index into its symbols)
    symbols: HashMap<u64, (Arc<LoadedObject>, usize)>,
    /// kernel object -> (loaded object, kernel index)
    kernels: HashMap<u64, (Arc<LoadedObject>, usize)>,
}

impl Registry {
    fn handle(&mut self) -> u64 {
        self.next += 16;
        0x7866_7800_0000 + self.next
    }
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Registry::default))
}

/// A reader of `bytes` (`hsa_code_object_reader_create_from_*`).
pub fn create_reader(bytes: Vec<u8>) -> u64 {
    with(|r| {
        let h = r.handle();
        r.readers.insert(h, Arc::new(bytes));
        h
    })
}

pub fn destroy_reader(h: u64) -> bool {
    with(|r| r.readers.remove(&h).is_some())
}

pub fn reader(h: u64) -> Option<Arc<Vec<u8>>> {
    with(|r| r.readers.get(&h).cloned())
}

/// A deprecated code object (`hsa_code_object_deserialize`).
pub fn create_code_object(bytes: Vec<u8>) -> u64 {
    with(|r| {
        let h = r.handle();
        r.code_objects.insert(h, Arc::new(bytes));
        h
    })
}

pub fn code_object(h: u64) -> Option<Arc<Vec<u8>>> {
    with(|r| r.code_objects.get(&h).cloned())
}

pub fn destroy_code_object(h: u64) -> bool {
    with(|r| r.code_objects.remove(&h).is_some())
}

pub fn create_executable(profile: hsa_profile_t, rounding: hsa_default_float_rounding_mode_t) -> u64 {
    with(|r| {
        let h = r.handle();
        r.executables.insert(h, Executable { profile, rounding, frozen: false, objects: Vec::new() });
        h
    })
}

/// Destroys an executable, its images and symbols.
pub fn destroy_executable(h: u64) -> bool {
    let Some(exe) = with(|r| r.executables.remove(&h)) else { return false };
    with(|r| {
        r.symbols.retain(|_, (o, _)| o.executable != h);
        r.kernels.retain(|_, (o, _)| o.executable != h);
    });
    for o in exe.objects {
        memory::free(o.image_base, |u| u == Use::Code);
    }
    true
}

pub fn freeze(h: u64) -> Result<(), Failure> {
    with(|r| match r.executables.get_mut(&h) {
        None => fail(HSA_STATUS_ERROR_INVALID_EXECUTABLE),
        Some(e) if e.frozen => fail(HSA_STATUS_ERROR_FROZEN_EXECUTABLE),
        Some(e) => {
            e.frozen = true;
            Ok(())
        }
    })
}

/// (profile, frozen, rounding) of an executable.
pub fn executable_state(h: u64) -> Option<(hsa_profile_t, bool, hsa_default_float_rounding_mode_t)> {
    with(|r| r.executables.get(&h).map(|e| (e.profile, e.frozen, e.rounding)))
}

/// Every executable, oldest first.
pub fn executables() -> Vec<u64> {
    let mut all: Vec<u64> = with(|r| r.executables.keys().copied().collect());
    all.sort_unstable();
    all
}

/// The code objects loaded into an executable, in load order.
pub fn loaded_objects(h: u64) -> Option<Vec<Arc<LoadedObject>>> {
    with(|r| r.executables.get(&h).map(|e| e.objects.clone()))
}

/// The loaded object with handle `h`.
pub fn loaded_object(h: u64) -> Option<Arc<LoadedObject>> {
    with(|r| r.executables.values().flat_map(|e| e.objects.iter()).find(|o| o.handle == h).cloned())
}

/// The loaded object whose image holds `addr`.
pub fn loaded_object_at(addr: u64) -> Option<Arc<LoadedObject>> {
    with(|r| {
        r.executables
            .values()
            .flat_map(|e| e.objects.iter())
            .find(|o| addr >= o.image_base && addr < o.image_base + o.image_len as u64)
            .cloned()
    })
}

/// Loads `bytes` (one AMDGPU code object) for `agent` into executable `exe`.
pub fn load(exe: u64, agent: Agent, bytes: Arc<Vec<u8>>, target: Target) -> Result<u64, Failure> {
    match with(|r| r.executables.get(&exe).map(|e| e.frozen)) {
        None => return fail(HSA_STATUS_ERROR_INVALID_EXECUTABLE),
        Some(true) => return fail(HSA_STATUS_ERROR_FROZEN_EXECUTABLE),
        Some(false) => {}
    }
    if agent != Agent::Gpu {
        return fail(HSA_STATUS_ERROR_INVALID_AGENT);
    }
    let program = Program::parse(&bytes)
        .map_err(|e| Failure { status: HSA_STATUS_ERROR_INVALID_CODE_OBJECT, why: Some(e.to_string()) })?;
    if program.target != target {
        return fail_because(
            HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
            format!("the code object is for {}, the agent is {}", program.target.name(), target.name()),
        );
    }
    let co = CodeObject::parse(&bytes)
        .map_err(|e| Failure { status: HSA_STATUS_ERROR_INVALID_CODE_OBJECT, why: Some(e.to_string()) })?;
    let Some(block) = HostBlock::zeroed(program.image.len().max(1), 4096) else {
        return fail(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    };
    block.write(0, &program.image);
    let base = block.address();
    crate::relocate::apply(&co, &block)
        .map_err(|e| Failure { status: HSA_STATUS_ERROR_INVALID_CODE_OBJECT, why: Some(e) })?;
    let image_len = block.len();
    memory::register(block, Use::Code);
    let symbols = with(|r| symbols_of(&co, &program, base, r));
    let loaded = with(|r| {
        let handle = r.handle();
        let o = Arc::new(LoadedObject {
            handle,
            executable: exe,
            agent,
            storage: bytes,
            image_base: base,
            image_len,
            program,
            symbols,
        });
        for (i, s) in o.symbols.iter().enumerate() {
            r.symbols.insert(s.handle, (o.clone(), i));
            if let SymbolKind::Kernel { object, kernel, .. } = s.kind {
                r.kernels.insert(object, (o.clone(), kernel));
            }
        }
        if let Some(e) = r.executables.get_mut(&exe) {
            e.objects.push(o.clone());
        }
        o
    });
    Ok(loaded.handle)
}

/// The symbols a loaded code object defines: kernels (their descriptor
/// symbols, `name.kd`) and global variables.
fn symbols_of(co: &CodeObject<'_>, program: &Program, base: u64, r: &mut Registry) -> Vec<Symbol> {
    const STT_OBJECT: u8 = 1;
    const SHT_DYNSYM: u32 = 11;
    const SHT_SYMTAB: u32 = 2;
    let table = co.elf.symbols(SHT_DYNSYM).ok().filter(|s| !s.is_empty()).or_else(|| co.elf.symbols(SHT_SYMTAB).ok());
    let mut out = Vec::new();
    for (i, k) in program.kernels.iter().enumerate() {
        let meta = co.metadata.as_ref().and_then(|m| m.kernels.iter().find(|m| m.name == k.name));
        out.push(Symbol {
            handle: r.handle(),
            name: meta.map_or_else(|| format!("{}.kd", k.name), |m| m.symbol.clone()),
            kind: SymbolKind::Kernel {
                object: base + k.descriptor_vaddr,
                kernel: i,
                kernarg_size: k.kernarg_segment_size.max(k.descriptor.kernarg_size),
                kernarg_align: meta.map_or(16, |m| m.kernarg_segment_align as u32).max(16),
                group_size: k.group_segment_fixed_size,
                private_size: k.private_segment_fixed_size,
                dynamic_stack: meta.and_then(|m| m.uses_dynamic_stack).unwrap_or(false),
            },
        });
    }
    for s in table.unwrap_or_default() {
        let global = s.bind == 1 || s.bind == 2;
        if s.kind == STT_OBJECT && global && s.shndx != 0 && !s.name.ends_with(".kd") && !s.name.is_empty() {
            out.push(Symbol {
                handle: r.handle(),
                name: s.name.clone(),
                kind: SymbolKind::Variable { address: base + s.value, size: s.size },
            });
        }
    }
    out
}

/// The symbol named `name` in executable `exe`.
pub fn symbol_by_name(exe: u64, name: &str) -> Result<(Arc<LoadedObject>, usize), Failure> {
    let Some(objects) = loaded_objects(exe) else { return fail(HSA_STATUS_ERROR_INVALID_EXECUTABLE) };
    for o in objects {
        if let Some(i) = o.symbols.iter().position(|s| s.name == name) {
            return Ok((o, i));
        }
    }
    fail(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
}

/// The symbol with handle `h`.
pub fn symbol(h: u64) -> Option<(Arc<LoadedObject>, usize)> {
    with(|r| r.symbols.get(&h).cloned())
}

/// The loaded object and kernel index a `kernel_object` names.
pub fn kernel_for_object(object: u64) -> Option<(Arc<LoadedObject>, usize)> {
    with(|r| r.kernels.get(&object).cloned())
}

/// Releases everything (at shut-down).
pub fn destroy_all() {
    let exes: Vec<u64> = with(|r| r.executables.keys().copied().collect());
    for e in exes {
        destroy_executable(e);
    }
    *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()) = None;
}
