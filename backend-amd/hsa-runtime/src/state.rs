//! The runtime's life: `hsa_init` and `hsa_shut_down` counted as the HSA
//! specification says, the GPU target chosen at the first `hsa_init`
//! (`XFPX_HSA_TARGET`, default gfx942), the tools of `HSA_TOOLS_LIB` loaded
//! then (after the runtime is open, so their `OnLoad` may call it) and
//! unloaded at the last `hsa_shut_down` (their `OnUnload` in reverse order,
//! then the API table reset and every runtime object released).

use crate::ffi::generated::*;
use crate::ffi::tools::{self, Tool};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;
use xfpx_amd_isa::Target;

/// The environment variable naming the GPU agent's target.
pub const TARGET_ENV: &str = "XFPX_HSA_TARGET";
pub const DEFAULT_TARGET: Target = Target::Gfx942;

/// Open references (`hsa_init` calls not yet shut down).
static REFS: AtomicU32 = AtomicU32::new(0);
/// The target, as an index into `TARGETS` (valid once open).
static TARGET: AtomicU8 = AtomicU8::new(0);
const TARGETS: [Target; 4] = [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950];
/// Serializes the first `hsa_init` and the last `hsa_shut_down`.
static LIFE: Mutex<Vec<Tool>> = Mutex::new(Vec::new());

/// The system timestamp (nanoseconds since the runtime first read it): the
/// clock of `HSA_SYSTEM_INFO_TIMESTAMP` and of dispatch times.
pub fn timestamp() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

pub fn is_open() -> bool {
    REFS.load(Ordering::Acquire) > 0
}

/// The GPU agent's target.
pub fn target() -> Target {
    TARGETS[TARGET.load(Ordering::Acquire) as usize % TARGETS.len()]
}

fn configured_target() -> Result<Target, String> {
    match std::env::var(TARGET_ENV) {
        Err(_) => Ok(DEFAULT_TARGET),
        Ok(v) if v.is_empty() => Ok(DEFAULT_TARGET),
        Ok(v) => Target::from_name(&v).ok_or_else(|| {
            let names: Vec<&str> = TARGETS.iter().map(|t| t.name()).collect();
            format!("{TARGET_ENV}={v} is not a target the emulator runs ({})", names.join(", "))
        }),
    }
}

/// `hsa_init`.
pub fn init() -> hsa_status_t {
    let mut tools = LIFE.lock().unwrap_or_else(|e| e.into_inner());
    let refs = REFS.load(Ordering::Acquire);
    if refs == u32::MAX {
        return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
    }
    if refs > 0 {
        REFS.store(refs + 1, Ordering::Release);
        return HSA_STATUS_SUCCESS;
    }
    let target = match configured_target() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: xfpx emulated HSA runtime: {e}");
            return HSA_STATUS_ERROR;
        }
    };
    TARGET.store(TARGETS.iter().position(|&t| t == target).unwrap_or(2) as u8, Ordering::Release);
    REFS.store(1, Ordering::Release);
    drop(tools);
    // Tools load with the runtime open and the lock released: their OnLoad
    // may call the runtime (even hsa_init).
    let loaded = tools::load_from_env();
    tools = LIFE.lock().unwrap_or_else(|e| e.into_inner());
    tools.extend(loaded);
    HSA_STATUS_SUCCESS
}

/// `hsa_shut_down`.
pub fn shut_down() -> hsa_status_t {
    let mut life = LIFE.lock().unwrap_or_else(|e| e.into_inner());
    let refs = REFS.load(Ordering::Acquire);
    if refs == 0 {
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    }
    if refs > 1 {
        REFS.store(refs - 1, Ordering::Release);
        return HSA_STATUS_SUCCESS;
    }
    let loaded = std::mem::take(&mut *life);
    drop(life);
    // OnUnload runs with the runtime still open.
    tools::call_on_unload(&loaded);
    crate::ffi::table::reset();
    crate::queues::destroy_all();
    crate::code::destroy_all();
    crate::signals::destroy_all();
    crate::memory::free_all();
    let _life = LIFE.lock().unwrap_or_else(|e| e.into_inner());
    REFS.store(0, Ordering::Release);
    tools::close(loaded);
    HSA_STATUS_SUCCESS
}
