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

    /// Maps `bytes` at a fresh address and returns it.
    pub fn allocate(&mut self, bytes: Vec<u8>) -> u64 {
        let base = self.next;
        let len = bytes.len() as u64;
        self.next = (base + len + 2 * ALIGN - 1) / ALIGN * ALIGN;
        self.allocations.insert(base, bytes);
        base
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
}
