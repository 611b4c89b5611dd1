//! The shared libraries' part of the disassembly ahead: the functions of
//! the cubins for the device's target in the libraries a program has
//! mapped (cuBLAS, cuDNN, PyTorch's own), read container by container
//! within the byte and function limits of [`PrefillLimits`].

use super::PrefillLimits;
use crate::fatbin::{self, DeviceFunction};
use crate::mapped;
use std::collections::HashSet;
use std::path::PathBuf;

/// What the libraries contribute, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LibraryPlan {
    pub functions: Vec<DeviceFunction>,
    /// Libraries whose device code was read (all of it or some).
    pub libraries: usize,
    /// Libraries with device code not looked at (over the limit on libraries).
    pub libraries_left_out: usize,
    /// Bytes of fat binaries left unread (over a byte limit, or once the
    /// function limit was reached).
    pub bytes_left_out: u64,
    /// Functions found but not planned: repeated, filtered or over the limit.
    pub functions_left_out: usize,
    /// Cubins of the target that could not be read.
    pub unreadable: usize,
}

/// Plan the functions for target `sm` of `files` (host ELF files with
/// device code), in order, that `wanted` admits and `seen` (code already
/// planned) does not hold, at most `room` of them, within `limits`.
pub fn plan(
    files: &[PathBuf],
    sm: u32,
    wanted: impl Fn(&str) -> bool,
    limits: &PrefillLimits,
    room: usize,
    seen: &mut HashSet<Vec<u8>>,
) -> LibraryPlan {
    let mut p = LibraryPlan::default();
    let mut bytes_read = 0u64;
    for (i, file) in files.iter().enumerate() {
        let Some(range) = mapped::fatbin_section(file) else { continue };
        if i >= limits.libraries {
            p.libraries_left_out += 1;
            p.bytes_left_out += range.size;
            continue;
        }
        let budget = limits.library_fatbin_bytes.min(limits.libraries_fatbin_bytes.saturating_sub(bytes_read));
        let read = mapped::for_each_container(file, range, budget, |_, container| {
            if p.functions.len() >= room {
                return false;
            }
            match fatbin::functions_for_target(container, sm) {
                Ok((found, unreadable)) => {
                    p.unreadable += unreadable;
                    for f in found {
                        if p.functions.len() < room && wanted(&f.name) && seen.insert(f.code.clone()) {
                            p.functions.push(f);
                        } else {
                            p.functions_left_out += 1;
                        }
                    }
                }
                Err(_) => p.unreadable += 1,
            }
            true
        });
        match read {
            Ok(r) => {
                p.libraries += usize::from(r.containers > 0);
                bytes_read += r.bytes;
                p.bytes_left_out += r.left;
            }
            Err(_) => p.bytes_left_out += range.size,
        }
    }
    p
}
