//! Working memory of the generator: arrays of atomic words in huge-page
//! mappings, the spare arrays a pair reuses from batch to batch, and
//! scratch space per thread.

use super::error::GenerateError;
use crate::memory::{huge_anon, HugeMap};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Scratch space kept per rayon thread, for parallel loops cut into jobs of
/// one item each.
///
/// Why: rayon hands a thread a range of items to do one after the other and
/// splits it further only when another thread steals from it; a range already
/// being worked through is not split. With items of uneven cost (chunks of
/// capture placements, which are quick, next to others), one thread was often
/// left with a long range while the other waited at the end of the loop.
/// Jobs of one item each (`with_max_len(1)`) end that, but `map_init` would
/// then build its scratch for every item; this keeps one per thread instead.
pub(super) struct PerThread<T, F: Fn() -> T> {
    slots: Vec<std::sync::Mutex<T>>,
    make: F,
}

impl<T, F: Fn() -> T> PerThread<T, F> {
    /// A scratch made by `make` for each thread of the current rayon pool.
    pub(super) fn new(make: F) -> Self {
        let slots = (0..rayon::current_num_threads())
            .map(|_| std::sync::Mutex::new(make()))
            .collect();
        PerThread { slots, make }
    }

    /// Run `f` with this thread's scratch. A thread that finds its scratch in
    /// use (a job run while it waits inside another, which the loops here do
    /// not do) or that is no thread of the pool gets a new one.
    #[inline]
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let slot = rayon::current_thread_index().and_then(|i| self.slots.get(i));
        match slot.map(|s| s.try_lock()) {
            Some(Ok(mut scratch)) => f(&mut scratch),
            _ => f(&mut (self.make)()),
        }
    }
}

/// Atomic integers that [`AtomicWords`] holds: any bit pattern is a valid
/// value, and each can be set to zero.
pub(super) trait Word: Send + Sync + 'static {
    fn clear(&self);
}
impl Word for AtomicU64 {
    #[inline]
    fn clear(&self) {
        self.store(0, Relaxed)
    }
}
impl Word for AtomicU32 {
    #[inline]
    fn clear(&self) {
        self.store(0, Relaxed)
    }
}
impl Word for AtomicU16 {
    #[inline]
    fn clear(&self) {
        self.store(0, Relaxed)
    }
}

/// A zeroed array of atomic words in anonymous memory advised to use huge
/// pages. The propagation touches cells all over a batch (hundreds of
/// megabytes): with 4 KiB pages nearly every access also missed the TLB.
pub(super) struct AtomicWords<W: Word = AtomicU64> {
    map: HugeMap,
    len: usize,
    _words: std::marker::PhantomData<W>,
}

impl<W: Word> AtomicWords<W> {
    /// `len` words, zeroed if `zeroed` (else holding anything).
    fn new(len: usize, zeroed: bool) -> Result<AtomicWords<W>, GenerateError> {
        let bytes = std::mem::size_of::<W>() * len;
        let map =
            huge_anon(bytes, zeroed).map_err(|source| GenerateError::Memory { bytes, source })?;
        Ok(AtomicWords {
            map,
            len,
            _words: std::marker::PhantomData,
        })
    }

    /// `len` words: those of `spare` if it has room (holding whatever it
    /// held), else others; if `zeroed`, those beyond the spare's are zeroed
    /// (a mapping from the pool may be longer than the part that was zeroed).
    pub(super) fn reuse(
        spare: Option<AtomicWords<W>>,
        len: usize,
        zeroed: bool,
    ) -> Result<AtomicWords<W>, GenerateError> {
        match spare {
            Some(mut w) if w.map.len() >= std::mem::size_of::<W>() * len => {
                let old = w.len;
                w.len = len;
                if zeroed && len > old {
                    w[old..].par_iter().for_each(W::clear);
                }
                Ok(w)
            }
            spare => {
                drop(spare); // to the pool, before asking it for a larger one
                AtomicWords::new(len, zeroed)
            }
        }
    }
}

/// Working memory kept from one batch of a pair to the next. Mapping it
/// afresh for every batch had the kernel zero (and fault in) hundreds of
/// megabytes each time (with this, the KKKvKM pair's system time fell from
/// 9.9 to 4.0 s).
#[derive(Default)]
pub(super) struct Spare {
    pub(super) cells: Option<AtomicWords<AtomicU32>>,
    pub(super) relays: Option<AtomicWords<AtomicU32>>,
    /// All zero whenever it is put back (see [`put_in_state_order`](super::buckets::put_in_state_order)).
    pub(super) order: Option<AtomicWords>,
    /// The values of the capture placements (see `initialise`).
    pub(super) captures: Option<AtomicWords<AtomicU16>>,
}

impl<W: Word> std::ops::Deref for AtomicWords<W> {
    type Target = [W];
    #[inline]
    fn deref(&self) -> &[W] {
        // SAFETY: the mapping is page-aligned (so aligned for `W`) and at
        // least `size_of::<W>() * len` bytes long; any bits are a valid `W`
        // (an atomic integer, with the layout of its integer), and every
        // access goes through the atomics. The borrow of `self` keeps the
        // mapping alive.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<W>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory handed out again by the pool holds old contents; asked for
    /// zeroed words, even a reused and then enlarged bitset reads all zero.
    #[test]
    fn reused_memory_asked_zeroed_is_zero() {
        let dirty = AtomicWords::<AtomicU64>::new(1 << 16, false).unwrap();
        dirty.par_iter().for_each(|w| w.store(u64::MAX, Relaxed));
        drop(dirty); // to the pool
        let small = AtomicWords::<AtomicU64>::reuse(None, 2, true).unwrap();
        assert!(small.iter().all(|w| w.load(Relaxed) == 0));
        let larger = AtomicWords::reuse(Some(small), 2 << 10, true).unwrap();
        assert_eq!(larger.len(), 2 << 10);
        assert!(larger.iter().all(|w| w.load(Relaxed) == 0));
    }
}
