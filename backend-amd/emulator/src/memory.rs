//! Emulated memory: the global (device) address space as a set of
//! allocations, and the LDS of one workgroup. Every access is bounds-checked;
//! an access outside all allocations is a fault, never a silent read.

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
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory { allocations: BTreeMap::new(), next: FIRST_BASE }
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
