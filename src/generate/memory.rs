//! Memory for the generator: huge-page mappings reused through a pool,
//! arrays of atomic words, decoded values, and cache prefetching.

use super::GenerateError;
use memmap2::{MmapMut, UncheckedAdvice};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Ask the processor to bring the cache line of `r` into the cache, without
/// waiting for it.
#[inline]
pub(super) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

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

/// Anonymous memory of at least `bytes` bytes, advised to use huge pages,
/// for the arrays the generator reads at random (working cells, decoded
/// tables); zeroed if `zeroed`, else holding whatever it last held. Dropped,
/// it goes back to a pool for the next array of at most its size.
///
/// Why a pool: a virtual machine whose balloon device reports freed memory to
/// its host (as on the machine of BENCHMARKS.md) gets memory mapped afresh
/// faulted in through the host, slowly; zeroing fresh pages was 12% of the
/// samples of the start of the KMMvKM pair, which decodes a 5.8 GB table.
/// Reused memory is already there. To keep the process from growing, when no
/// free mapping is large enough the pool releases all of them before mapping
/// anew, and a reused mapping gives back what lies beyond the request (the
/// first version kept it, and the five-piece run peaked at 10.6 GiB instead
/// of 7.3; with this it peaked at 7.7 GiB, a rise not yet explained).
fn huge_anon(bytes: usize, zeroed: bool) -> std::io::Result<HugeMap> {
    let bytes = bytes.max(1);
    let reused = {
        let mut pool = MAP_POOL.lock().unwrap_or_else(|e| e.into_inner());
        let best = (0..pool.len())
            .filter(|&i| pool[i].len() >= bytes)
            .min_by_key(|&i| pool[i].len());
        match best {
            Some(i) => Some(pool.swap_remove(i)),
            None => {
                pool.clear();
                None
            }
        }
    };
    let map = match reused {
        Some(mut map) => {
            // Give back what lies beyond the request, so that a small array in
            // a large mapping does not keep the rest resident.
            let keep = bytes.next_multiple_of(HUGE_PAGE).min(map.len());
            if keep < map.len() {
                // SAFETY: nothing borrows the mapping; the tail's contents
                // are not needed (anonymous pages read back as zeros).
                let _ = unsafe {
                    map.unchecked_advise_range(UncheckedAdvice::DontNeed, keep, map.len() - keep)
                };
            }
            if zeroed {
                map[..bytes].par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
            }
            map
        }
        None => {
            let map = MmapMut::map_anon(bytes)?;
            // Only a hint: where huge pages are disabled the memory is ordinary.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            map
        }
    };
    Ok(HugeMap(Some(map)))
}

/// The size of a huge page (x86-64, and the usual one elsewhere).
const HUGE_PAGE: usize = 2 << 20;

/// Free mappings of [`huge_anon`], for reuse.
static MAP_POOL: std::sync::Mutex<Vec<MmapMut>> = std::sync::Mutex::new(Vec::new());

/// Release the free mappings of the pool: called once a pair has taken what
/// it reuses (its decoded tables and its first batch's working memory), so
/// that the rest does not stay resident beside it.
pub(super) fn trim_pool() {
    MAP_POOL.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A mapping from [`huge_anon`]; back to the pool when dropped.
struct HugeMap(Option<MmapMut>);

impl HugeMap {
    fn as_ptr(&self) -> *const u8 {
        self.0.as_ref().expect("held until dropped").as_ptr()
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut().expect("held until dropped").as_mut_ptr()
    }
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.len())
    }
}

impl Drop for HugeMap {
    fn drop(&mut self) {
        if let Some(map) = self.0.take() {
            MAP_POOL.lock().unwrap_or_else(|e| e.into_inner()).push(map);
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

/// Element types of a [`ValueArray`]: plain integers, for which every bit
/// pattern is a valid value (so memory holding anything may be read as them).
pub(crate) trait Plain: Copy + Send + Sync + 'static {}
impl Plain for u8 {}
impl Plain for u16 {}

/// Decoded values in anonymous memory that asks for transparent huge pages.
/// Generation and verification look successors up at random across tables of
/// several GB; with 2 MiB pages the TLB covers them far better (measured: a
/// random lookup in 2 GiB takes 59 ns instead of 103 ns, BENCHMARKS.md).
pub(crate) struct ValueArray<T: Plain> {
    map: HugeMap,
    len: usize,
    _values: std::marker::PhantomData<T>,
}

impl<T: Plain> ValueArray<T> {
    /// `len` values, holding anything: for decoding into, which sets them all.
    pub(super) fn for_decoding(len: usize) -> std::io::Result<ValueArray<T>> {
        Ok(ValueArray {
            map: huge_anon(std::mem::size_of::<T>() * len, false)?,
            len,
            _values: std::marker::PhantomData,
        })
    }

    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        // Safety: the mapping is page-aligned (so aligned for `T`, an
        // integer) and at least `len` values long; any bits are a valid `T`
        // (`Plain`), and it is borrowed mutably here.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> std::ops::Deref for ValueArray<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // Safety: as in `as_mut_slice`; the borrow of `self` keeps the mapping alive.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<T>(), self.len) }
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
