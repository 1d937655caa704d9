//! Memory for arrays read at random across gigabytes (decoded tables,
//! the generator's working cells): anonymous mappings that ask for huge
//! pages, reused through a pool, and cache prefetching.

use memmap2::{MmapMut, UncheckedAdvice};
use rayon::prelude::*;

/// Ask the processor to bring the cache line of `r` into the cache, without
/// waiting for it.
#[inline]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Anonymous memory of at least `bytes` bytes, advised to use huge pages,
/// for the arrays the generator reads at random (working cells, decoded
/// tables); zeroed if `zeroed`, else holding whatever it last held. Dropped,
/// it goes back to a pool for the next array of at most its size.
///
/// Why a pool: a virtual machine whose balloon device reports freed memory to
/// its host (as the benchmark machine does) gets memory mapped afresh
/// faulted in through the host, slowly; zeroing fresh pages was 12% of the
/// samples of the start of the KMMvKM pair, which decodes a 5.8 GB table.
/// Reused memory is already there. To keep the process from growing, when no
/// free mapping is large enough the pool releases all of them before mapping
/// anew, and a reused mapping gives back what lies beyond the request
/// (keeping it raised a five-piece run's peak by a third).
pub(crate) fn huge_anon(bytes: usize, zeroed: bool) -> std::io::Result<HugeMap> {
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
pub(crate) fn trim_pool() {
    MAP_POOL.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A mapping from [`huge_anon`]; back to the pool when dropped.
pub(crate) struct HugeMap(Option<MmapMut>);

impl HugeMap {
    // Inlined: the generator's arrays reach their memory through these on
    // every access, from other modules.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.0.as_ref().expect("held until dropped").as_ptr()
    }
    #[inline]
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut().expect("held until dropped").as_mut_ptr()
    }
    #[inline]
    pub(crate) fn len(&self) -> usize {
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

/// Element types of a [`ValueArray`]: plain integers, for which every bit
/// pattern is a valid value (so memory holding anything may be read as them).
pub(crate) trait Plain: Copy + Send + Sync + 'static {}
impl Plain for u8 {}
impl Plain for u16 {}

/// Decoded values in anonymous memory that asks for transparent huge pages.
/// Generation and verification look successors up at random across tables of
/// several GB; with 2 MiB pages the TLB covers them far better (measured: a
/// random lookup in 2 GiB takes 59 ns instead of 103 ns).
pub(crate) struct ValueArray<T: Plain> {
    map: HugeMap,
    len: usize,
    _values: std::marker::PhantomData<T>,
}

impl<T: Plain> ValueArray<T> {
    /// `len` values, holding anything: for decoding into, which sets them all.
    pub(crate) fn for_decoding(len: usize) -> std::io::Result<ValueArray<T>> {
        Ok(ValueArray {
            map: huge_anon(std::mem::size_of::<T>() * len, false)?,
            len,
            _values: std::marker::PhantomData,
        })
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
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
