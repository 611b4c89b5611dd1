//! Short per-instruction lists (an [`crate::view::InstrView`]'s `defs`
//! and `uses`, a check's values): a list that keeps its first `N` items in
//! place and only goes to the heap beyond them, since an instruction has a
//! handful. It reads as a slice, is built like a `Vec`, and serializes,
//! prints, compares and hashes exactly as a `Vec` does.

use crate::view::Operand;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// An item an [`InlineList`] can hold: it names what an unused place holds
/// (never seen through the list).
pub trait Unused: Sized {
    const UNUSED: Self;
}

impl Unused for Operand {
    const UNUSED: Operand = Operand::Known { bits: 0 };
}

/// The operands of one instruction: up to `N` in place, more on the heap.
pub type Operands<const N: usize> = InlineList<Operand, N>;

/// Up to `N` items in place, more on the heap.
#[derive(Clone)]
pub struct InlineList<T, const N: usize> {
    repr: Repr<T, N>,
}

#[derive(Clone)]
enum Repr<T, const N: usize> {
    Inline { len: u8, items: [T; N] },
    Heap(Vec<T>),
}

impl<T: Unused, const N: usize> InlineList<T, N> {
    pub const fn new() -> InlineList<T, N> {
        InlineList { repr: Repr::Inline { len: 0, items: [const { T::UNUSED }; N] } }
    }

    /// Appends `op`, moving the list to the heap when its places are full.
    pub fn push(&mut self, op: T) {
        match &mut self.repr {
            Repr::Inline { len, items } if (*len as usize) < N => {
                items[*len as usize] = op;
                *len += 1;
            }
            Repr::Inline { len, items } => {
                let mut v = Vec::with_capacity(N * 2);
                v.extend(items.iter_mut().take(*len as usize).map(|o| std::mem::replace(o, T::UNUSED)));
                v.push(op);
                self.repr = Repr::Heap(v);
            }
            Repr::Heap(v) => v.push(op),
        }
    }

    /// Keeps the first `len` operands.
    pub fn truncate(&mut self, len: usize) {
        match &mut self.repr {
            Repr::Inline { len: n, items } => {
                for o in items.iter_mut().take(*n as usize).skip(len) {
                    *o = T::UNUSED;
                }
                *n = (*n).min(len as u8);
            }
            Repr::Heap(v) => v.truncate(len),
        }
    }

    /// Keeps the items `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        match &mut self.repr {
            Repr::Inline { len, items } => {
                let n = *len as usize;
                let mut kept = 0;
                for i in 0..n {
                    if keep(&items[i]) {
                        items.swap(kept, i);
                        kept += 1;
                    }
                }
                for o in &mut items[kept..n] {
                    *o = T::UNUSED;
                }
                *len = kept as u8;
            }
            Repr::Heap(v) => v.retain(|x| keep(x)),
        }
    }

    pub fn as_slice(&self) -> &[T] {
        match &self.repr {
            Repr::Inline { len, items } => &items[..*len as usize],
            Repr::Heap(v) => v,
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.repr {
            Repr::Inline { len, items } => &mut items[..*len as usize],
            Repr::Heap(v) => v,
        }
    }
}

impl<T: Unused, const N: usize> Default for InlineList<T, N> {
    fn default() -> InlineList<T, N> {
        InlineList::new()
    }
}

impl<T: Unused, const N: usize> Deref for InlineList<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Unused, const N: usize> DerefMut for InlineList<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Unused, const N: usize> Extend<T> for InlineList<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for item in iter {
            self.push(item);
        }
    }
}

impl<T: Unused, const N: usize> FromIterator<T> for InlineList<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> InlineList<T, N> {
        let mut list = InlineList::new();
        list.extend(iter);
        list
    }
}

impl<T: Unused, const N: usize> From<Vec<T>> for InlineList<T, N> {
    fn from(v: Vec<T>) -> InlineList<T, N> {
        if v.len() <= N {
            v.into_iter().collect()
        } else {
            InlineList { repr: Repr::Heap(v) }
        }
    }
}

impl<T: Unused, const N: usize, const M: usize> From<[T; M]> for InlineList<T, N> {
    fn from(a: [T; M]) -> InlineList<T, N> {
        a.into_iter().collect()
    }
}

impl<'a, T: Unused, const N: usize> IntoIterator for &'a InlineList<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Unused + fmt::Debug, const N: usize> fmt::Debug for InlineList<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T: Unused + PartialEq, const N: usize> PartialEq for InlineList<T, N> {
    fn eq(&self, other: &InlineList<T, N>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Unused + Eq, const N: usize> Eq for InlineList<T, N> {}

impl<T: Unused + PartialEq, const N: usize> PartialEq<Vec<T>> for InlineList<T, N> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Unused + PartialEq, const N: usize> PartialEq<[T]> for InlineList<T, N> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: Unused + Hash, const N: usize> Hash for InlineList<T, N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h)
    }
}

impl<T: Unused + Serialize, const N: usize> Serialize for InlineList<T, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, T: Unused + Deserialize<'de>, const N: usize> Deserialize<'de> for InlineList<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<InlineList<T, N>, D::Error> {
        Vec::<T>::deserialize(d).map(InlineList::from)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Operands;
    use crate::view::Operand;

    fn known(bits: u64) -> Operand {
        Operand::Known { bits }
    }

    #[test]
    fn keeps_order_in_place_and_beyond() {
        let mut list = Operands::<2>::new();
        assert!(list.is_empty());
        for b in 0..5 {
            list.push(known(b));
            assert_eq!(list.len(), b as usize + 1);
        }
        assert_eq!(list, (0..5).map(known).collect::<Vec<_>>());
        list.truncate(1);
        assert_eq!(list.as_slice(), &[known(0)]);
        let mut inline: Operands<3> = [known(1), known(2)].into();
        inline.truncate(1);
        assert_eq!(inline.as_slice(), &[known(1)]);
        for n in [3, 5] {
            let mut odd: Operands<3> = (0..n).map(known).collect();
            odd.retain(|o| matches!(o, Operand::Known { bits } if bits % 2 == 1));
            assert_eq!(odd, (0..n).filter(|b| b % 2 == 1).map(known).collect::<Vec<_>>());
        }
        let short: Operands<2> = vec![known(7)].into();
        assert_eq!(short.as_slice(), &[known(7)]);
    }

    #[test]
    fn serializes_as_a_vec_does() {
        let ops = [known(1), Operand::Other { text: "x".into() }, known(3)];
        for n in 0..4 {
            let list: Operands<2> = ops.iter().take(n).cloned().collect();
            let as_vec: Vec<Operand> = ops.iter().take(n).cloned().collect();
            assert_eq!(serde_json::to_string(&list).unwrap(), serde_json::to_string(&as_vec).unwrap());
            assert_eq!(rmp_serde::to_vec(&list).unwrap(), rmp_serde::to_vec(&as_vec).unwrap());
            let back: Operands<2> = serde_json::from_str(&serde_json::to_string(&as_vec).unwrap()).unwrap();
            assert_eq!(back, as_vec);
            assert_eq!(format!("{list:?}"), format!("{as_vec:?}"));
            let hash = |h: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
                let mut s = std::collections::hash_map::DefaultHasher::new();
                h(&mut s);
                std::hash::Hasher::finish(&s)
            };
            use std::hash::Hash;
            assert_eq!(hash(&|s| list.hash(s)), hash(&|s| as_vec.hash(s)));
        }
    }
}
