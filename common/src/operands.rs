//! The operand lists of one instruction ([`crate::view::InstrView`]'s
//! `defs` and `uses`): a list that keeps its first `N` operands in place and
//! only goes to the heap beyond them, since an instruction has a handful.
//! It reads as a slice, is built like a `Vec`, and serializes as a sequence
//! exactly as a `Vec` does.

use crate::view::Operand;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// What an unused inline place holds (never seen through the list).
const UNUSED: Operand = Operand::Known { bits: 0 };

/// Up to `N` operands in place, more on the heap.
#[derive(Clone)]
pub struct Operands<const N: usize> {
    repr: Repr<N>,
}

#[derive(Clone)]
enum Repr<const N: usize> {
    Inline { len: u8, items: [Operand; N] },
    Heap(Vec<Operand>),
}

impl<const N: usize> Operands<N> {
    pub const fn new() -> Operands<N> {
        Operands { repr: Repr::Inline { len: 0, items: [UNUSED; N] } }
    }

    /// Appends `op`, moving the list to the heap when its places are full.
    pub fn push(&mut self, op: Operand) {
        match &mut self.repr {
            Repr::Inline { len, items } if (*len as usize) < N => {
                items[*len as usize] = op;
                *len += 1;
            }
            Repr::Inline { len, items } => {
                let mut v = Vec::with_capacity(N * 2);
                v.extend(items.iter_mut().take(*len as usize).map(|o| std::mem::replace(o, UNUSED)));
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
                    *o = UNUSED;
                }
                *n = (*n).min(len as u8);
            }
            Repr::Heap(v) => v.truncate(len),
        }
    }

    pub fn as_slice(&self) -> &[Operand] {
        match &self.repr {
            Repr::Inline { len, items } => &items[..*len as usize],
            Repr::Heap(v) => v,
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [Operand] {
        match &mut self.repr {
            Repr::Inline { len, items } => &mut items[..*len as usize],
            Repr::Heap(v) => v,
        }
    }

    pub fn to_vec(&self) -> Vec<Operand> {
        self.as_slice().to_vec()
    }
}

impl<const N: usize> Default for Operands<N> {
    fn default() -> Operands<N> {
        Operands::new()
    }
}

impl<const N: usize> Deref for Operands<N> {
    type Target = [Operand];
    fn deref(&self) -> &[Operand] {
        self.as_slice()
    }
}

impl<const N: usize> DerefMut for Operands<N> {
    fn deref_mut(&mut self) -> &mut [Operand] {
        self.as_mut_slice()
    }
}

impl<const N: usize> Extend<Operand> for Operands<N> {
    fn extend<I: IntoIterator<Item = Operand>>(&mut self, iter: I) {
        for op in iter {
            self.push(op);
        }
    }
}

impl<const N: usize> FromIterator<Operand> for Operands<N> {
    fn from_iter<I: IntoIterator<Item = Operand>>(iter: I) -> Operands<N> {
        let mut list = Operands::new();
        list.extend(iter);
        list
    }
}

impl<const N: usize> From<Vec<Operand>> for Operands<N> {
    fn from(v: Vec<Operand>) -> Operands<N> {
        if v.len() <= N {
            v.into_iter().collect()
        } else {
            Operands { repr: Repr::Heap(v) }
        }
    }
}

impl<const N: usize, const M: usize> From<[Operand; M]> for Operands<N> {
    fn from(a: [Operand; M]) -> Operands<N> {
        a.into_iter().collect()
    }
}

impl<'a, const N: usize> IntoIterator for &'a Operands<N> {
    type Item = &'a Operand;
    type IntoIter = std::slice::Iter<'a, Operand>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<const N: usize> fmt::Debug for Operands<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<const N: usize> PartialEq for Operands<N> {
    fn eq(&self, other: &Operands<N>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for Operands<N> {}

impl<const N: usize> PartialEq<Vec<Operand>> for Operands<N> {
    fn eq(&self, other: &Vec<Operand>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> PartialEq<[Operand]> for Operands<N> {
    fn eq(&self, other: &[Operand]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> Serialize for Operands<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, const N: usize> Deserialize<'de> for Operands<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Operands<N>, D::Error> {
        Vec::<Operand>::deserialize(d).map(Operands::from)
    }
}

#[cfg(test)]
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
        let short: Operands<2> = vec![known(7)].into();
        assert_eq!(short.as_slice(), &[known(7)]);
    }

    #[test]
    fn serializes_as_a_vec_does() {
        let ops = vec![known(1), Operand::Other { text: "x".into() }, known(3)];
        for n in 0..4 {
            let list: Operands<2> = ops.iter().take(n).cloned().collect();
            let as_vec: Vec<Operand> = ops.iter().take(n).cloned().collect();
            assert_eq!(serde_json::to_string(&list).unwrap(), serde_json::to_string(&as_vec).unwrap());
            assert_eq!(rmp_serde::to_vec(&list).unwrap(), rmp_serde::to_vec(&as_vec).unwrap());
            let back: Operands<2> = serde_json::from_str(&serde_json::to_string(&as_vec).unwrap()).unwrap();
            assert_eq!(back, as_vec);
            assert_eq!(format!("{list:?}"), format!("{as_vec:?}"));
        }
    }
}
