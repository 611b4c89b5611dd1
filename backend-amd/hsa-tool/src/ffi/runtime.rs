//! The session's [`Runtime`] over the saved table entries: the device an
//! agent is, record tables in the agent's fine-grained global memory (the
//! region HSA programs take kernel arguments from: host memory the GPU
//! reaches), and instrumented copies loaded into executables of their own.
//! These calls go to the entries saved at `OnLoad`, never to the table's
//! current ones, so the tool never sees its own loads.

use super::api::{Handle, Saved, Status};
use crate::hsa;
use crate::session::{Device, Runtime};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Mutex;

/// The runtime as the session uses it.
#[derive(Debug)]
pub struct HsaRuntime {
    pub saved: Saved,
    /// The fine-grained global region found for each agent.
    regions: Mutex<HashMap<Handle, Handle>>,
}

fn failed(what: &str, status: Status) -> String {
    format!("{what} returned status {status:#x}")
}

/// A fixed-size `char` array an info query fills, as text.
fn text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
}

unsafe extern "C" fn pick_region(region: Handle, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `(&Saved, Option<Handle>)` `fine_region` passes.
    let (saved, found) = unsafe { &mut *data.cast::<(Saved, Option<Handle>)>() };
    let info = |attr: u32| {
        let mut v = 0u32;
        // SAFETY: these attributes are 32-bit values.
        let s = unsafe { (saved.region_get_info)(region, attr, (&mut v as *mut u32).cast()) };
        (s == hsa::STATUS_SUCCESS).then_some(v)
    };
    let global = info(hsa::REGION_INFO_SEGMENT) == Some(hsa::REGION_SEGMENT_GLOBAL);
    let fine = info(hsa::REGION_INFO_GLOBAL_FLAGS).is_some_and(|f| f & hsa::REGION_GLOBAL_FLAG_FINE_GRAINED != 0);
    // a bool: its first byte
    let allocatable = info(hsa::REGION_INFO_RUNTIME_ALLOC_ALLOWED).is_some_and(|v| v & 0xff != 0);
    if global && fine && allocatable {
        *found = Some(region);
        return hsa::STATUS_INFO_BREAK;
    }
    hsa::STATUS_SUCCESS
}

impl HsaRuntime {
    pub fn new(saved: Saved) -> HsaRuntime {
        HsaRuntime { saved, regions: Mutex::new(HashMap::new()) }
    }

    fn fine_region(&self, agent: Handle) -> Result<Handle, String> {
        let mut regions = self.regions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&r) = regions.get(&agent) {
            return Ok(r);
        }
        let mut search: (Saved, Option<Handle>) = (self.saved, None);
        // SAFETY: the callback reads `search` only during the iteration.
        unsafe {
            (self.saved.agent_iterate_regions)(agent, pick_region, (&mut search as *mut (Saved, Option<Handle>)).cast())
        };
        let region = search.1.ok_or("the agent has no fine-grained global memory region")?;
        regions.insert(agent, region);
        Ok(region)
    }

    fn info_text(&self, agent: Handle, attr: u32) -> Option<String> {
        let mut buf = [0u8; 64];
        // SAFETY: these attributes fill at most 64 characters.
        let s = unsafe { (self.saved.agent_get_info)(agent, attr, buf.as_mut_ptr().cast()) };
        (s == hsa::STATUS_SUCCESS).then(|| text(&buf)).filter(|t| !t.is_empty())
    }

    fn executable_info(&self, executable: Handle, attr: u32) -> Result<u32, String> {
        let mut v = 0u32;
        // SAFETY: profile and rounding mode are 32-bit enums.
        let s = unsafe { (self.saved.executable_get_info)(executable, attr, (&mut v as *mut u32).cast()) };
        if s == hsa::STATUS_SUCCESS {
            Ok(v)
        } else {
            Err(failed("hsa_executable_get_info", s))
        }
    }

    /// A new signal of value 1 (a dispatch's completion), or why not.
    pub fn new_signal(&self) -> Result<Handle, String> {
        let mut signal = 0;
        // SAFETY: one signal written to `signal`.
        let s = unsafe { (self.saved.signal_create)(1, 0, std::ptr::null(), &mut signal) };
        if s == hsa::STATUS_SUCCESS {
            Ok(signal)
        } else {
            Err(failed("hsa_signal_create", s))
        }
    }
}

impl Runtime for HsaRuntime {
    fn device(&self, agent: Handle) -> Device {
        let gfx = self.info_text(agent, hsa::AGENT_INFO_NAME);
        let product = self.info_text(agent, hsa::AMD_AGENT_INFO_PRODUCT_NAME);
        let vendor = self.info_text(agent, hsa::AGENT_INFO_VENDOR_NAME).unwrap_or_default();
        let emulated = [&vendor, product.as_deref().unwrap_or("")].iter().any(|t| t.to_lowercase().contains("emulat"));
        Device {
            vendor: if emulated { "amd-emulated" } else { "amd" }.into(),
            name: product.or_else(|| gfx.clone()).unwrap_or_else(|| "unknown".into()),
            target: gfx.map(|g| g.split(':').next().unwrap_or(&g).to_string()),
        }
    }

    fn allocate_table(&self, agent: Handle, bytes: usize) -> Result<u64, String> {
        let region = self.fine_region(agent)?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: one allocation written to `ptr`.
        let s = unsafe { (self.saved.memory_allocate)(region, bytes, &mut ptr) };
        if s != hsa::STATUS_SUCCESS || ptr.is_null() {
            return Err(failed("hsa_memory_allocate", s));
        }
        // SAFETY: `bytes` bytes of host-accessible memory were just allocated at `ptr`.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(ptr as u64)
    }

    fn read_table(&self, address: u64, bytes: usize) -> Vec<u8> {
        let mut out = vec![0u8; bytes];
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: `address` is a table `allocate_table` made of at least
        // `bytes` bytes; it is never freed.
        unsafe { std::ptr::copy_nonoverlapping(address as *const u8, out.as_mut_ptr(), bytes) };
        out
    }

    fn load_copy(&self, agent: Handle, like: Handle, elf: &[u8], kernel: &str) -> Result<u64, String> {
        let s = &self.saved;
        let profile = self.executable_info(like, hsa::EXECUTABLE_INFO_PROFILE)?;
        let rounding = self.executable_info(like, hsa::EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE)?;
        // the runtime may read the code object until the executable goes,
        // which the copy's never does
        let bytes: &'static [u8] = Box::leak(elf.to_vec().into_boxed_slice());
        let check = |what: &str, status: Status| {
            if status == hsa::STATUS_SUCCESS {
                Ok(())
            } else {
                Err(failed(what, status))
            }
        };
        let (mut executable, mut reader, mut symbol, mut object) = (0, 0, 0, 0u64);
        // SAFETY: each call writes one handle to its out-parameter; the
        // options strings are null.
        unsafe {
            check(
                "hsa_executable_create_alt",
                (s.executable_create_alt)(profile, rounding, std::ptr::null(), &mut executable),
            )?;
            check(
                "hsa_code_object_reader_create_from_memory",
                (s.reader_create_from_memory)(bytes.as_ptr().cast(), bytes.len(), &mut reader),
            )?;
            check(
                "hsa_executable_load_agent_code_object",
                (s.executable_load_agent_code_object)(
                    executable,
                    agent,
                    reader,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                ),
            )?;
            check("hsa_executable_freeze", (s.executable_freeze)(executable, std::ptr::null()))?;
        }
        let mut found = hsa::STATUS_ERROR;
        for name in [format!("{kernel}.kd"), kernel.to_string()] {
            let name = CString::new(name).map_err(|_| "the kernel's name holds a NUL")?;
            // SAFETY: a NUL-terminated name, one agent, one symbol written.
            found = unsafe { (s.executable_get_symbol_by_name)(executable, name.as_ptr(), &agent, &mut symbol) };
            if found == hsa::STATUS_SUCCESS {
                break;
            }
        }
        check("hsa_executable_get_symbol_by_name", found)?;
        // SAFETY: the kernel object is a 64-bit value.
        let status = unsafe {
            (s.executable_symbol_get_info)(symbol, hsa::SYMBOL_INFO_KERNEL_OBJECT, (&mut object as *mut u64).cast())
        };
        check("hsa_executable_symbol_get_info", status)?;
        Ok(object)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn info_text_stops_at_the_nul() {
        let mut b = [0u8; 64];
        b[..6].copy_from_slice(b"gfx942");
        assert_eq!(super::text(&b), "gfx942");
        assert_eq!(super::text(b"AMD Instinct MI300X  "), "AMD Instinct MI300X");
    }
}
