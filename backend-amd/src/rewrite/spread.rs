//! Work spread over the machine's threads (at most 8), its results given
//! in index order: what one thread would give, in the same order, whatever
//! thread computed each. Reading a code object runs on these.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// The threads the reading may use.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

/// `f(0)`, ..., `f(n - 1)`, in that order, computed on up to [`threads`]
/// threads.
pub fn spread<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    spread_with(n, || (), |_, i| f(i))
}

/// [`spread`], where each thread computing gets its own `state()`, passed
/// to each `f` it computes (work one computation leaves for the next,
/// such as a cache; what `f` gives must not depend on it).
pub fn spread_with<S, T: Send>(
    n: usize,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    spread_in_order_with(n, state, f, |_, r| out.push(r));
    out
}

/// `f(0)`, ..., `f(n - 1)` computed on up to [`threads`] threads (each
/// takes the next index not yet taken), handed to `each` on the calling
/// thread in index order as they are ready; while the next is not, the
/// calling thread computes one itself. Each thread computing gets its own
/// `state()` (as [`spread_with`]).
pub fn spread_in_order_with<S, T: Send>(
    n: usize,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> T + Sync,
    mut each: impl FnMut(usize, T),
) {
    let workers = threads().min(n);
    let mut own = state();
    if workers <= 1 {
        (0..n).for_each(|i| each(i, f(&mut own, i)));
        return;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 1..workers {
            let (tx, next, f, state) = (tx.clone(), &next, &f, &state);
            s.spawn(move || {
                let mut mine = state();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || tx.send((i, f(&mut mine, i))).is_err() {
                        return;
                    }
                }
            });
        }
        // (Only the workers send: once they are gone, nothing more comes.)
        drop(tx);
        let mut ready: Vec<Option<T>> = (0..n).map(|_| None).collect();
        for i in 0..n {
            while ready[i].is_none() {
                if let Ok((j, r)) = rx.try_recv() {
                    ready[j] = Some(r);
                    continue;
                }
                let j = next.fetch_add(1, Ordering::Relaxed);
                if j < n {
                    ready[j] = Some(f(&mut own, j));
                    continue;
                }
                match rx.recv() {
                    Ok((j, r)) => ready[j] = Some(r),
                    // A worker panicked: the scope passes its panic on.
                    Err(_) => return,
                }
            }
            if let Some(r) = ready[i].take() {
                each(i, r);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_keeps_the_order() {
        assert_eq!(spread(100, |i| i * 2), (0..100).map(|i| i * 2).collect::<Vec<_>>());
        assert!(spread(0, |i| i).is_empty());
        let mut seen = Vec::new();
        spread_in_order_with(50, || (), |_, i| i + 1, |i, r| seen.push((i, r)));
        assert_eq!(seen, (0..50).map(|i| (i, i + 1)).collect::<Vec<_>>());
    }
}
