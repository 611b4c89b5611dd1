//! Every piece of memory a kernel may touch, by base address: allocations
//! from the memory pools, code object images, queue rings and queue
//! structures the runtime made, and program memory locked for the GPU.
//! A dispatch maps a copy of all of it into the emulator at the same
//! addresses ([`snapshot`]) and writes back the bytes the kernel changed
//! ([`write_back`]), so bytes the program changed meanwhile elsewhere in the
//! same allocation are kept.

use crate::agents::{Pool, ALLOC_GRANULE};
use crate::ffi::host::{HostBlock, HostRange};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What an allocation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// `hsa_memory_allocate` / `hsa_amd_memory_pool_allocate`.
    Pool(Pool),
    /// A loaded code object's image.
    Code,
    /// A queue's ring buffer or `amd_queue_t`.
    Queue,
    /// Program memory `hsa_amd_memory_lock` made visible to the GPU.
    Locked,
}

#[derive(Debug)]
enum Backing {
    Owned(HostBlock),
    /// Memory owned elsewhere (the program's, or a queue's block), kept
    /// valid by its owner until it is freed here.
    Borrowed(HostRange),
}

impl Backing {
    fn range(&self) -> HostRange {
        match self {
            Backing::Owned(b) => b.range(),
            Backing::Borrowed(r) => *r,
        }
    }
}

#[derive(Debug)]
struct Allocation {
    backing: Backing,
    usage: Use,
    user_data: u64,
}

static ALLOCATIONS: Mutex<BTreeMap<u64, Allocation>> = Mutex::new(BTreeMap::new());

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<u64, Allocation>> {
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// What [`find`] knows of the allocation holding an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub base: u64,
    pub len: usize,
    pub usage: Use,
    pub user_data: u64,
}

/// Allocates `size` bytes (rounded up to the granule) for `usage`; None when
/// the host cannot.
pub fn allocate(size: usize, usage: Use) -> Option<u64> {
    let len = size.checked_next_multiple_of(ALLOC_GRANULE)?;
    let block = HostBlock::zeroed(len, ALLOC_GRANULE)?;
    Some(register(block, usage))
}

/// Keeps `block` (made elsewhere, e.g. with a stricter layout) as an allocation.
pub fn register(block: HostBlock, usage: Use) -> u64 {
    let base = block.address();
    allocations().insert(base, Allocation { backing: Backing::Owned(block), usage, user_data: 0 });
    base
}

/// Makes `range` (owned elsewhere, e.g. by a queue, until it is freed
/// here) visible to kernels.
pub fn register_view(range: HostRange, usage: Use) -> u64 {
    allocations().insert(range.address(), Allocation { backing: Backing::Borrowed(range), usage, user_data: 0 });
    range.address()
}

/// Frees the allocation at `base` if it is one of `usage`; false otherwise.
pub fn free(base: u64, usage: fn(Use) -> bool) -> bool {
    let mut all = allocations();
    match all.get(&base) {
        Some(a) if usage(a.usage) => {
            all.remove(&base);
            true
        }
        _ => false,
    }
}

/// Makes the program's `range` visible to kernels; false if it overlaps
/// memory already known.
pub fn lock(range: HostRange) -> bool {
    let mut all = allocations();
    let (base, end) = (range.address(), range.address() + range.len() as u64);
    let overlaps = all.range(..end).next_back().is_some_and(|(&b, a)| b + a.backing.range().len() as u64 > base);
    if overlaps || range.is_empty() {
        return false;
    }
    all.insert(base, Allocation { backing: Backing::Borrowed(range), usage: Use::Locked, user_data: 0 });
    true
}

/// The allocation holding `addr`.
pub fn find(addr: u64) -> Option<Found> {
    let all = allocations();
    let (&base, a) = all.range(..=addr).next_back()?;
    let len = a.backing.range().len();
    (addr < base + len as u64).then_some(Found { base, len, usage: a.usage, user_data: a.user_data })
}

/// Sets the user data `hsa_amd_pointer_info` reports for the allocation at `base`.
pub fn set_user_data(base: u64, data: u64) -> bool {
    match allocations().get_mut(&base) {
        Some(a) => {
            a.user_data = data;
            true
        }
        None => false,
    }
}

/// A copy of every allocation, by base address.
pub fn snapshot() -> Vec<(u64, Vec<u8>)> {
    allocations().iter().map(|(&b, a)| (b, a.backing.range().to_vec())).collect()
}

/// Writes into the allocation at `base` the bytes where `after` differs
/// from `before` (the snapshot a kernel started from).
pub fn write_back(base: u64, before: &[u8], after: &[u8]) {
    let all = allocations();
    let Some(a) = all.get(&base) else { return };
    let range = a.backing.range();
    let n = before.len().min(after.len()).min(range.len());
    let mut i = 0;
    while i < n {
        if before[i] == after[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && before[i] != after[i] {
            i += 1;
        }
        range.write(start, &after[start..i]);
    }
}

/// Frees everything (at shut-down).
pub fn free_all() {
    allocations().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_back_changes_only_what_the_kernel_changed() {
        let base = allocate(16, Use::Pool(Pool::SystemFine)).expect("allocates");
        let found = find(base + 5).expect("found");
        assert_eq!((found.base, found.len), (base, ALLOC_GRANULE));
        let before = snapshot().into_iter().find(|(b, _)| *b == base).expect("in the snapshot").1;
        // The "program" writes byte 0 meanwhile; the "kernel" wrote bytes 2 and 3.
        let r = {
            let all = allocations();
            all[&base].backing.range()
        };
        r.write(0, &[9]);
        let mut after = before.clone();
        after[2] = 7;
        after[3] = 8;
        write_back(base, &before, &after);
        let now = r.to_vec();
        assert_eq!(&now[..5], &[9, 0, 7, 8, 0]);
        assert!(free(base, |u| matches!(u, Use::Pool(_))));
        assert!(find(base).is_none());
    }
}
