//! The program's live device allocations, as the driver's allocation and
//! free calls report them (`cuMemAlloc`, `cuMemAllocPitch`,
//! `cuMemAllocManaged`, `cuMemAllocAsync`, `cuMemAllocFromPoolAsync`,
//! `cuMemFree`, `cuMemFreeAsync`): an interval map from base address to
//! size, asked which allocation holds an address.

use std::collections::BTreeMap;

/// The live device allocations: base address → size in bytes.
#[derive(Debug, Clone, Default)]
pub struct Allocations {
    by_base: BTreeMap<u64, u64>,
}

impl Allocations {
    /// An allocation of `bytes` at `base`. Entries it overlaps are dropped:
    /// their free was not seen (memory the tool never saw freed is reused).
    pub fn add(&mut self, base: u64, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let end = base.saturating_add(bytes);
        // those starting inside it, and the one before it if it reaches in
        let mut overlapped: Vec<u64> = self.by_base.range(base..end).map(|(&b, _)| b).collect();
        if let Some((&b, &n)) = self.by_base.range(..base).next_back() {
            if b.saturating_add(n) > base {
                overlapped.push(b);
            }
        }
        for b in overlapped {
            self.by_base.remove(&b);
        }
        self.by_base.insert(base, bytes);
    }

    /// The allocation at `base` was freed; returns its size when known.
    pub fn remove(&mut self, base: u64) -> Option<u64> {
        self.by_base.remove(&base)
    }

    /// The allocation holding `addr`: (base, bytes).
    pub fn containing(&self, addr: u64) -> Option<(u64, u64)> {
        let (&base, &bytes) = self.by_base.range(..=addr).next_back()?;
        (addr < base.saturating_add(bytes)).then_some((base, bytes))
    }

    pub fn len(&self) -> usize {
        self.by_base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_base.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_find_their_allocation() {
        let mut a = Allocations::default();
        a.add(0x1000, 0x100);
        a.add(0x2000, 0x10);
        assert_eq!(a.containing(0x1000), Some((0x1000, 0x100)));
        assert_eq!(a.containing(0x10ff), Some((0x1000, 0x100)));
        assert_eq!(a.containing(0x1100), None, "one past the end");
        assert_eq!(a.containing(0xfff), None);
        assert_eq!(a.containing(0x200f), Some((0x2000, 0x10)));
        assert_eq!(a.containing(0), None);
        assert_eq!(a.containing(u64::MAX), None);
        assert_eq!(a.remove(0x1000), Some(0x100));
        assert_eq!(a.containing(0x1010), None);
        assert_eq!(a.remove(0x1000), None, "freed twice");
        a.add(0x3000, 0);
        assert_eq!(a.len(), 1, "an empty allocation holds nothing");
    }

    #[test]
    fn a_new_allocation_replaces_those_it_overlaps() {
        let mut a = Allocations::default();
        a.add(0x1000, 0x100);
        a.add(0x1100, 0x100);
        a.add(0x1200, 0x100);
        a.add(0x0f00, 0x100); // touches 0x1000 without overlapping
                              // reused memory whose free was not seen: 0x1080..0x1180 overlaps two
        a.add(0x1080, 0x100);
        assert_eq!(a.containing(0x1000), None);
        assert_eq!(a.containing(0x1150), Some((0x1080, 0x100)));
        assert_eq!(a.containing(0x1250), Some((0x1200, 0x100)));
        assert_eq!(a.containing(0x0f80), Some((0x0f00, 0x100)));
        assert_eq!(a.len(), 3);
        // one that covers several from below their bases
        a.add(0x0e00, 0x1000);
        assert_eq!(a.len(), 1);
        assert_eq!(a.containing(0x1250), Some((0x0e00, 0x1000)));
    }
}
