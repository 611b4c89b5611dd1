//! Small sets of register ranges, and maps from them to kind bits, for
//! the dataflow analyses of [`crate::observe`]: kept sorted in one vector,
//! so that the operations those analyses repeat at every instruction
//! (membership, removing what a write overlaps, meeting two sets at a
//! join, comparing a block's set with its last one) walk a few cache
//! lines instead of a hash table, and a copy is one allocation.

use crate::view::{RegFile, RegRange};
use std::cmp::Ordering;

/// The order the sets keep: by file, first register, then count.
fn order(a: &RegRange, b: &RegRange) -> Ordering {
    sort_key(a).cmp(&sort_key(b))
}

/// File, first register and count packed so that comparing keys compares
/// them in that order.
fn sort_key(r: &RegRange) -> u32 {
    (u32::from(file_rank(r.file)) << 24) | (u32::from(r.first) << 8) | u32::from(r.count)
}

/// Removes the members of `sorted` (whose ranges span at most `widest`
/// registers) that share a register with `r`: they lie in one span of the
/// order, found by a binary search.
fn remove_overlaps<T: Copy>(sorted: &mut Vec<T>, range: impl Fn(&T) -> &RegRange, r: &RegRange, widest: u8) {
    let low = RegRange::new(r.file, r.first.saturating_sub(u16::from(widest.saturating_sub(1))), 0);
    let start = sorted.partition_point(|x| order(range(x), &low) == Ordering::Less);
    let end_first = u32::from(r.first) + u32::from(r.count);
    let end = start
        + sorted[start..]
            .iter()
            .take_while(|x| range(x).file == r.file && u32::from(range(x).first) < end_first)
            .count();
    let mut kept = start;
    for i in start..end {
        if !range(&sorted[i]).overlaps(r) {
            sorted[kept] = sorted[i];
            kept += 1;
        }
    }
    sorted.drain(kept..end);
}

/// Call `both` with the entries of sorted `a` and `b` whose ranges are
/// the same, in order.
fn for_each_common<T>(a: &[T], b: &[T], range: impl Fn(&T) -> &RegRange, mut both: impl FnMut(&T, &T)) {
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match order(range(x), range(y)) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                both(x, y);
                i += 1;
                j += 1;
            }
        }
    }
}

fn file_rank(f: RegFile) -> u8 {
    match f {
        RegFile::PerLane => 0,
        RegFile::Uniform => 1,
        RegFile::Accumulator => 2,
        RegFile::Predicate => 3,
        RegFile::Stack => 4,
    }
}

/// A set of register ranges (each range an element of its own: `R4` and
/// `R4:R5` are different members).
#[derive(Debug, Clone, Default)]
pub struct RangeSet {
    sorted: Vec<RegRange>,
    /// No member spans more registers (a bound kept for removals).
    widest: u8,
}

impl RangeSet {
    pub fn new() -> RangeSet {
        RangeSet::default()
    }

    fn find(&self, r: &RegRange) -> Result<usize, usize> {
        self.sorted.binary_search_by(|x| order(x, r))
    }

    pub fn contains(&self, r: &RegRange) -> bool {
        self.find(r).is_ok()
    }

    /// Adds `r`; whether it was not there yet.
    pub fn insert(&mut self, r: RegRange) -> bool {
        match self.find(&r) {
            Ok(_) => false,
            Err(at) => {
                self.sorted.insert(at, r);
                self.widest = self.widest.max(r.count);
                true
            }
        }
    }

    pub fn retain(&mut self, keep: impl FnMut(&RegRange) -> bool) {
        self.sorted.retain(keep);
    }

    /// Removes every member that shares a register with `r`.
    pub fn remove_overlapping(&mut self, r: &RegRange) {
        remove_overlaps(&mut self.sorted, |x| x, r, self.widest);
    }

    pub fn iter(&self) -> impl Iterator<Item = &RegRange> {
        self.sorted.iter()
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The members of both sets.
    pub fn intersection(&self, other: &RangeSet) -> RangeSet {
        let mut sorted = Vec::with_capacity(self.len().min(other.len()));
        for_each_common(&self.sorted, &other.sorted, |x| x, |x, _| sorted.push(*x));
        RangeSet { sorted, widest: self.widest.min(other.widest) }
    }
}

/// Equal when the members are (the bound kept for removals aside).
impl PartialEq for RangeSet {
    fn eq(&self, other: &RangeSet) -> bool {
        self.sorted == other.sorted
    }
}

impl Eq for RangeSet {}

impl Extend<RegRange> for RangeSet {
    fn extend<I: IntoIterator<Item = RegRange>>(&mut self, items: I) {
        for r in items {
            self.insert(r);
        }
    }
}

/// A map from register ranges to kind bits (which kinds of exception a
/// check has looked for in the range's value).
#[derive(Debug, Clone, Default)]
pub struct RangeKinds {
    sorted: Vec<(RegRange, u8)>,
    /// No range spans more registers (a bound kept for removals).
    widest: u8,
}

impl RangeKinds {
    fn find(&self, r: &RegRange) -> Result<usize, usize> {
        self.sorted.binary_search_by(|(x, _)| order(x, r))
    }

    pub fn get(&self, r: &RegRange) -> Option<u8> {
        self.find(r).ok().map(|i| self.sorted[i].1)
    }

    /// `r`'s bits, made (with none) when `r` is not there.
    fn bits(&mut self, r: RegRange) -> &mut u8 {
        let i = match self.find(&r) {
            Ok(i) => i,
            Err(at) => {
                self.sorted.insert(at, (r, 0));
                self.widest = self.widest.max(r.count);
                at
            }
        };
        &mut self.sorted[i].1
    }

    /// Sets `r`'s bits to `kinds`.
    pub fn insert(&mut self, r: RegRange, kinds: u8) {
        *self.bits(r) = kinds;
    }

    /// Adds `kinds` to `r`'s bits (a range not there starts with none).
    pub fn add(&mut self, r: RegRange, kinds: u8) {
        *self.bits(r) |= kinds;
    }

    /// Removes every range that shares a register with `r`.
    pub fn remove_overlapping(&mut self, r: &RegRange) {
        remove_overlaps(&mut self.sorted, |(x, _)| x, r, self.widest);
    }

    pub fn iter(&self) -> impl Iterator<Item = (&RegRange, u8)> {
        self.sorted.iter().map(|(r, k)| (r, *k))
    }

    /// The ranges of both maps, with the bits both give them; a range left
    /// with no bit is not kept.
    pub fn meet(&self, other: &RangeKinds) -> RangeKinds {
        let mut sorted = Vec::with_capacity(self.sorted.len().min(other.sorted.len()));
        for_each_common(
            &self.sorted,
            &other.sorted,
            |(x, _)| x,
            |(x, kx), (_, ky)| {
                if kx & ky != 0 {
                    sorted.push((*x, kx & ky));
                }
            },
        );
        RangeKinds { sorted, widest: self.widest.min(other.widest) }
    }
}

/// Equal when the entries are (the bound kept for removals aside).
impl PartialEq for RangeKinds {
    fn eq(&self, other: &RangeKinds) -> bool {
        self.sorted == other.sorted
    }
}

impl Eq for RangeKinds {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn r(file: RegFile, first: u16, count: u8) -> RegRange {
        RegRange::new(file, first, count)
    }

    /// A little generator of ranges that overlap often.
    fn ranges(seed: u64, n: usize) -> Vec<RegRange> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let file = [RegFile::PerLane, RegFile::Uniform, RegFile::Stack][(x >> 60) as usize % 3];
                r(file, ((x >> 20) % 24) as u16, [1, 2, 4][(x >> 40) as usize % 3])
            })
            .collect()
    }

    #[test]
    fn the_set_agrees_with_a_hash_set() {
        for seed in 0..40 {
            let items = ranges(seed, 30);
            let mut ours = RangeSet::new();
            let mut theirs = HashSet::new();
            for (k, x) in items.iter().enumerate() {
                assert_eq!(ours.insert(*x), theirs.insert(*x));
                if k % 7 == 6 {
                    ours.remove_overlapping(x);
                    theirs.retain(|y: &RegRange| !y.overlaps(x));
                }
            }
            let probe = ranges(seed + 100, 30);
            for x in &probe {
                assert_eq!(ours.contains(x), theirs.contains(x));
            }
            let mut other = RangeSet::new();
            other.extend(probe.iter().copied());
            let other_h: HashSet<RegRange> = probe.iter().copied().collect();
            let meet: HashSet<RegRange> = ours.intersection(&other).iter().copied().collect();
            assert_eq!(meet, theirs.intersection(&other_h).copied().collect::<HashSet<_>>());
            assert_eq!(ours.len(), theirs.len());
            assert!(ours.iter().zip(ours.iter().skip(1)).all(|(a, b)| order(a, b) == Ordering::Less));
        }
    }

    #[test]
    fn the_map_agrees_with_a_hash_map() {
        for seed in 0..40 {
            let items = ranges(seed, 30);
            let mut ours = RangeKinds::default();
            let mut theirs: HashMap<RegRange, u8> = HashMap::new();
            for (k, x) in items.iter().enumerate() {
                let bits = 1 << (k % 4);
                ours.add(*x, bits);
                *theirs.entry(*x).or_insert(0) |= bits;
                if k % 5 == 4 {
                    ours.remove_overlapping(x);
                    theirs.retain(|y, _| !y.overlaps(x));
                }
                if k % 9 == 8 {
                    ours.insert(*x, 0b10);
                    theirs.insert(*x, 0b10);
                }
            }
            for x in ranges(seed + 7, 30) {
                assert_eq!(ours.get(&x), theirs.get(&x).copied());
            }
            let mut other = RangeKinds::default();
            let mut other_h = HashMap::new();
            for (k, x) in ranges(seed + 3, 30).into_iter().enumerate() {
                other.add(x, 1 << (k % 3));
                *other_h.entry(x).or_insert(0u8) |= 1 << (k % 3);
            }
            let meet: HashMap<RegRange, u8> = ours.meet(&other).iter().map(|(r, k)| (*r, k)).collect();
            let expected: HashMap<RegRange, u8> = theirs
                .iter()
                .filter_map(|(r, k)| other_h.get(r).map(|k2| (*r, k & k2)).filter(|(_, k)| *k != 0))
                .collect();
            assert_eq!(meet, expected);
        }
    }
}
