//! Emulated memory: the global (device) address space as a set of
//! allocations, and the LDS of one workgroup. Every access is bounds-checked;
//! an access outside all allocations is a fault, never a silent read —
//! unless a guard zone is set: then a memory instruction's load of bytes
//! within that many bytes before or past an allocation reads them as zeros
//! (real programs read a little past their buffers, which hardware
//! serves from neighbouring memory). Stores and atomics still fault there.

use std::cell::Cell;
use std::collections::BTreeMap;

/// Base of the first allocation; addresses below it are never mapped.
const FIRST_BASE: u64 = 0x1_0000_0000;
/// Allocation alignment, and an unmapped gap between neighbours.
const ALIGN: u64 = 0x1_0000;

/// Global memory: disjoint allocations keyed by base address.
#[derive(Debug, Default, Clone)]
pub struct GlobalMemory {
    allocations: BTreeMap<u64, Vec<u8>>,
    next: u64,
    /// Bytes around each allocation that loads read as zeros (0: none).
    guard: u64,
    /// Loads that read bytes of a guard zone.
    guarded_loads: Cell<u64>,
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory { allocations: BTreeMap::new(), next: FIRST_BASE, guard: 0, guarded_loads: Cell::new(0) }
    }

    /// Loads of bytes within `bytes` before or past an allocation read
    /// zeros (0: they fault, the default).
    pub fn set_guard(&mut self, bytes: u64) {
        self.guard = bytes;
    }

    /// The loads so far that read bytes of a guard zone.
    pub fn guarded_loads(&self) -> u64 {
        self.guarded_loads.get()
    }

    /// Maps `bytes` at a fresh address and returns it (above every mapping
    /// [`GlobalMemory::map_at`] placed in its way, with a gap).
    pub fn allocate(&mut self, bytes: Vec<u8>) -> u64 {
        let len = bytes.len() as u64;
        let mut base = self.next;
        while let Some(end) = self.overlap_end(base, len + ALIGN) {
            base = end.div_ceil(ALIGN) * ALIGN + ALIGN;
        }
        self.next = (base + len + 2 * ALIGN - 1) / ALIGN * ALIGN;
        self.allocations.insert(base, bytes);
        base
    }

    /// Maps `bytes` at `base`, an address the caller chose (where a host
    /// runtime keeps that memory, say). Refused (one line) where the range
    /// is empty, wraps, or meets an existing mapping.
    pub fn map_at(&mut self, base: u64, bytes: Vec<u8>) -> Result<(), String> {
        let len = bytes.len() as u64;
        if len == 0 || base.checked_add(len).is_none() {
            return Err(format!("cannot map {len} bytes at {base:#x}"));
        }
        if let Some(end) = self.overlap_end(base, len) {
            return Err(format!("{len} bytes at {base:#x} overlap a mapping that ends at {end:#x}"));
        }
        self.allocations.insert(base, bytes);
        Ok(())
    }

    /// The end of a mapping that meets `[base, base + len)`, if any.
    fn overlap_end(&self, base: u64, len: u64) -> Option<u64> {
        let end = base.saturating_add(len);
        if let Some((&b, buf)) = self.allocations.range(..=base).next_back() {
            if b + buf.len() as u64 > base {
                return Some(b + buf.len() as u64);
            }
        }
        self.allocations.range(base..end).next().map(|(&b, buf)| b + buf.len() as u64)
    }

    /// Every mapping, by base address.
    pub fn mappings(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.allocations.iter().map(|(&b, v)| (b, v.as_slice()))
    }

    /// The contents of the allocation at `base`.
    pub fn allocation(&self, base: u64) -> Option<&[u8]> {
        self.allocations.get(&base).map(|v| v.as_slice())
    }

    fn locate(&self, addr: u64, len: usize) -> Option<(u64, usize)> {
        let (&base, buf) = self.allocations.range(..=addr).next_back()?;
        let off = (addr - base) as usize;
        (off.checked_add(len)? <= buf.len()).then_some((base, off))
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> bool {
        match self.locate(addr, out.len()) {
            Some((base, off)) => {
                out.copy_from_slice(&self.allocations[&base][off..off + out.len()]);
                true
            }
            None => false,
        }
    }

    pub fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.locate(addr, data.len()) {
            Some((base, off)) => {
                if let Some(buf) = self.allocations.get_mut(&base) {
                    buf[off..off + data.len()].copy_from_slice(data);
                }
                true
            }
            None => false,
        }
    }

    pub fn read_u32(&self, addr: u64) -> Option<u32> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b).then(|| u32::from_le_bytes(b))
    }

    /// A memory instruction's load: [`GlobalMemory::read`], except that with
    /// a guard zone set, bytes no allocation holds but within the guard of
    /// one read as zero (and the load is counted).
    pub fn load(&self, addr: u64, out: &mut [u8]) -> bool {
        if self.read(addr, out) {
            return true;
        }
        if self.guard == 0 {
            return false;
        }
        for (i, b) in out.iter_mut().enumerate() {
            let Some(p) = addr.checked_add(i as u64) else { return false };
            *b = match self.byte_at(p) {
                Some(v) => v,
                None if self.in_guard(p) => 0,
                None => return false,
            };
        }
        self.guarded_loads.set(self.guarded_loads.get() + 1);
        true
    }

    pub fn load_u32(&self, addr: u64) -> Option<u32> {
        let mut b = [0u8; 4];
        self.load(addr, &mut b).then(|| u32::from_le_bytes(b))
    }

    fn byte_at(&self, p: u64) -> Option<u8> {
        let (&base, buf) = self.allocations.range(..=p).next_back()?;
        buf.get((p - base) as usize).copied()
    }

    /// Whether `p` lies within the guard zone before or past an allocation.
    fn in_guard(&self, p: u64) -> bool {
        let past =
            self.allocations.range(..=p).next_back().is_some_and(|(&b, buf)| p - b < buf.len() as u64 + self.guard);
        let before = self.allocations.range(p..).next().is_some_and(|(&b, _)| b - p <= self.guard);
        past || before
    }
}

/// The LDS of one workgroup.
#[derive(Debug, Clone)]
pub struct Lds {
    pub bytes: Vec<u8>,
}

impl Lds {
    pub fn new(size: usize) -> Lds {
        Lds { bytes: vec![0; size] }
    }
    pub fn read(&self, addr: u32, out: &mut [u8]) -> bool {
        let a = addr as usize;
        match self.bytes.get(a..a + out.len()) {
            Some(s) => {
                out.copy_from_slice(s);
                true
            }
            None => false,
        }
    }
    pub fn write(&mut self, addr: u32, data: &[u8]) -> bool {
        let a = addr as usize;
        match self.bytes.get_mut(a..a + data.len()) {
            Some(s) => {
                s.copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_disjoint_and_bounds_checked() {
        let mut m = GlobalMemory::new();
        let a = m.allocate(vec![1, 2, 3, 4]);
        let b = m.allocate(vec![0; 8]);
        assert!(b > a + 4);
        assert_eq!(m.read_u32(a), Some(0x0403_0201));
        assert_eq!(m.read_u32(a + 1), None);
        assert!(!m.write(b + 6, &[0; 4]));
        assert!(m.write(b + 4, &[9; 4]));
        assert_eq!(m.read_u32(b + 4), Some(0x0909_0909));
        assert_eq!(m.read_u32(0), None);
    }

    #[test]
    fn guard_zones_read_zeros_around_allocations_only_for_loads() {
        let mut m = GlobalMemory::new();
        let a = m.allocate(vec![1, 2, 3, 4, 5, 6, 7, 8]);
        let mut b = [0xFFu8; 8];
        // Off by default.
        assert!(!m.load(a + 4, &mut b));
        m.set_guard(16);
        // Past the end: the allocation's bytes, then zeros.
        assert!(m.load(a + 4, &mut b));
        assert_eq!(b, [5, 6, 7, 8, 0, 0, 0, 0]);
        // Before the start, within the guard.
        assert_eq!(m.load_u32(a - 16), Some(0));
        assert_eq!(m.load_u32(a - 2), Some(0x0201_0000));
        // Beyond the guard, and plain reads and stores, still fault.
        assert_eq!(m.load_u32(a + 8 + 13), None);
        assert_eq!(m.load_u32(a - 17), None);
        assert_eq!(m.read_u32(a + 6), None);
        assert!(!m.write(a + 6, &[0; 4]));
        assert_eq!(m.guarded_loads(), 3);
        // In-bounds loads are not counted.
        assert_eq!(m.load_u32(a), Some(0x0403_0201));
        assert_eq!(m.guarded_loads(), 3);
    }

    #[test]
    fn mappings_at_chosen_addresses_are_kept_apart() {
        let mut m = GlobalMemory::new();
        m.map_at(FIRST_BASE + 0x100, vec![7; 0x20]).expect("maps");
        assert_eq!(m.read_u32(FIRST_BASE + 0x11c), Some(0x0707_0707));
        assert_eq!(m.read_u32(FIRST_BASE + 0x11e), None);
        // Overlaps on either side and empty ranges are refused.
        assert!(m.map_at(FIRST_BASE + 0x110, vec![0; 4]).is_err());
        assert!(m.map_at(FIRST_BASE + 0xF0, vec![0; 0x11]).is_err());
        assert!(m.map_at(FIRST_BASE + 0x200, Vec::new()).is_err());
        assert!(m.map_at(u64::MAX - 2, vec![0; 8]).is_err());
        m.map_at(FIRST_BASE + 0x120, vec![1; 4]).expect("adjacent is fine");
        // Fresh allocations step over what was mapped.
        let a = m.allocate(vec![0; 0x10]);
        assert!(a >= FIRST_BASE + 0x124, "{a:#x}");
        let b = m.allocate(vec![0; 0x10]);
        assert!(b > a + 0x10);
        let bases: Vec<u64> = m.mappings().map(|(b, _)| b).collect();
        assert_eq!(bases, vec![FIRST_BASE + 0x100, FIRST_BASE + 0x120, a, b]);
    }
}
