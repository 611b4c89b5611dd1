//! Host memory the runtime hands out as device memory, and memory the
//! program owns that the runtime reads and writes on the device's behalf.
//! [`HostBlock`] owns a zeroed, aligned allocation whose address the
//! program uses directly; [`HostRange`] is a range of the program's memory
//! (locked memory, copy arguments) the runtime may touch while the program
//! keeps it valid. Both copy bytes in and out; programs and kernels may race
//! on the same bytes exactly as a CPU and GPU would.

use std::alloc::Layout;
use std::sync::atomic::{AtomicI64, AtomicU16, AtomicU64};

/// An owned, zeroed allocation at a fixed address.
#[derive(Debug)]
pub struct HostBlock {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the block is plain memory; concurrent access goes through copies
// and atomics, as device memory would.
unsafe impl Send for HostBlock {}
// SAFETY: as above.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// `len` zeroed bytes aligned to `align` (a power of two); None when the
    /// size is zero or the allocation fails.
    pub fn zeroed(len: usize, align: usize) -> Option<HostBlock> {
        let layout = Layout::from_size_align(len, align).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(HostBlock { ptr, layout })
    }

    pub fn address(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    /// The block as a range (valid while the block lives).
    pub fn range(&self) -> HostRange {
        HostRange { ptr: self.ptr, len: self.len() }
    }

    /// Copies `bytes` in at `offset`; false where they do not fit.
    pub fn write(&self, offset: usize, bytes: &[u8]) -> bool {
        self.range().write(offset, bytes)
    }

    /// Copies `out.len()` bytes out from `offset`; false where out of range.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        self.range().read(offset, out)
    }

    fn field<T>(&self, offset: usize) -> &T {
        assert!(
            offset.is_multiple_of(std::mem::align_of::<T>()) && offset + std::mem::size_of::<T>() <= self.len(),
            "field at {offset} outside the block"
        );
        // SAFETY: in bounds and aligned (the block's alignment is at least
        // the field's: blocks holding atomics are allocated 64-aligned); the
        // reference lives no longer than the block.
        unsafe { &*(self.ptr.add(offset) as *const T) }
    }

    /// The 64-bit atomic at `offset` (8-aligned).
    pub fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        self.field(offset)
    }

    pub fn atomic_i64(&self, offset: usize) -> &AtomicI64 {
        self.field(offset)
    }

    pub fn atomic_u16(&self, offset: usize) -> &AtomicU16 {
        self.field(offset)
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `zeroed`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// A range of memory the runtime does not own.
#[derive(Debug, Clone, Copy)]
pub struct HostRange {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: see HostBlock.
unsafe impl Send for HostRange {}
// SAFETY: see HostBlock.
unsafe impl Sync for HostRange {}

impl HostRange {
    /// # Safety
    /// `[address, address + len)` stays valid for reads and writes for as
    /// long as the range is used (the program's promise when it locks or
    /// passes the memory).
    pub unsafe fn new(address: u64, len: usize) -> HostRange {
        HostRange { ptr: address as *mut u8, len }
    }

    pub fn address(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn write(&self, offset: usize, bytes: &[u8]) -> bool {
        if offset.checked_add(bytes.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        // SAFETY: in bounds of a range valid for writes (constructor's promise).
        unsafe { std::ptr::copy(bytes.as_ptr(), self.ptr.add(offset), bytes.len()) };
        true
    }

    pub fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        if offset.checked_add(out.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        // SAFETY: in bounds of a range valid for reads.
        unsafe { std::ptr::copy(self.ptr.add(offset), out.as_mut_ptr(), out.len()) };
        true
    }

    /// The whole range, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.len];
        self.read(0, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_zeroed_and_bounds_checked() {
        let b = HostBlock::zeroed(100, 4096).expect("allocates");
        assert_eq!(b.address() % 4096, 0);
        assert_eq!(b.range().to_vec(), vec![0; 100]);
        assert!(b.write(96, &[1, 2, 3, 4]));
        assert!(!b.write(97, &[1, 2, 3, 4]));
        let mut out = [0; 2];
        assert!(b.read(97, &mut out));
        assert_eq!(out, [2, 3]);
        assert!(HostBlock::zeroed(0, 64).is_none());
        let s = HostBlock::zeroed(64, 64).expect("allocates");
        s.atomic_i64(8).store(-5, std::sync::atomic::Ordering::Relaxed);
        let mut v = [0; 8];
        s.read(8, &mut v);
        assert_eq!(i64::from_le_bytes(v), -5);
    }
}
