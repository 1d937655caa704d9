//! Buckets: the states finalised at each distance, waiting to be propagated,
//! handed over in segments and put in state order before each step.

use super::error::GenerateError;
use super::memory::AtomicWords;
use super::work::{Entry, WIN_BIT};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::Ordering::Relaxed;

/// A bitset over a batch's bucket entries (two bits per state: lost, won),
/// for putting large buckets in state order.
pub(super) struct StateOrder {
    pub(super) bits: AtomicWords,
}

impl StateOrder {
    /// The empty bitset, in `spare`'s memory (which must be all zero) if it has room.
    pub(super) fn new(
        states: u64,
        spare: Option<AtomicWords>,
    ) -> Result<StateOrder, GenerateError> {
        Ok(StateOrder {
            bits: AtomicWords::reuse(spare, (2 * states).div_ceil(64) as usize, true)?,
        })
    }
}

/// Bucket entries at one distance, in one run, handed over in one piece.
pub(super) struct Segment {
    pub(super) run: usize,
    pub(super) d: u16,
    pub(super) entries: Vec<Entry>,
}

/// A run's buckets: for each distance, its entries in segments.
pub(super) type Buckets = Vec<Vec<Vec<Entry>>>;

/// Group `out` (distances and entries, in runs that never decrease, as
/// `run_of` tells them) into segments, one per run and distance.
pub(super) fn segments(out: &[(u16, Entry)], run_of: impl Fn(Entry) -> usize) -> Vec<Segment> {
    let mut segs = Vec::new();
    let mut rest = out;
    while let Some(&(_, first)) = rest.first() {
        let run = run_of(first);
        let n = rest
            .iter()
            .position(|&(_, e)| run_of(e) != run)
            .unwrap_or(rest.len());
        let (span, more) = rest.split_at(n);
        // A counting sort by distance, into vectors of the exact size.
        let mut count: Vec<usize> = Vec::new();
        for &(d, _) in span {
            let d = d as usize;
            if count.len() <= d {
                count.resize(d + 1, 0);
            }
            count[d] += 1;
        }
        let mut by_d: Vec<Vec<Entry>> = count.iter().map(|&n| Vec::with_capacity(n)).collect();
        for &(d, e) in span {
            by_d[d as usize].push(e);
        }
        segs.extend(
            by_d.into_iter()
                .enumerate()
                .filter(|(_, v)| !v.is_empty())
                .map(|(d, entries)| Segment {
                    run,
                    d: d as u16,
                    entries,
                }),
        );
        rest = more;
    }
    segs
}

pub(super) fn add_segment(buckets: &mut Buckets, s: Segment) {
    let d = s.d as usize;
    if buckets.len() <= d {
        buckets.resize_with(d + 1, Vec::new);
    }
    buckets[d].push(s.entries);
}

/// Sort bucket entries (in segments), which lie in batch positions `states`,
/// by state and drop repeated ones (a state queued twice at one distance is
/// finalised once; the repeats were no-ops). The result is in segments too,
/// one after the other. A large bucket goes through the bitset, linear in the
/// number of states (sorting it took 16% of propagation on the KKKMvK pair);
/// a small one is sorted.
pub(super) fn put_in_state_order(
    segments: Vec<Vec<Entry>>,
    order: &StateOrder,
    states: Range<u64>,
) -> Vec<Vec<Entry>> {
    // The bitset's words that hold these states' bits. Runs are solved side
    // by side, so the first and last words may hold bits of neighbouring
    // runs: only this run's bits are taken out of those.
    let (lo, hi) = (2 * states.start, 2 * states.end);
    let words = &order.bits[(lo / 64) as usize..hi.div_ceil(64) as usize];
    let first_bit = lo / 64 * 64;
    let n: usize = segments.iter().map(Vec::len).sum();
    if (n as u64) < words.len() as u64 / 8 {
        let mut entries = if segments.len() == 1 {
            segments.into_iter().next().unwrap_or_default()
        } else {
            segments.concat()
        };
        entries.par_sort_unstable_by_key(|&e| e & !WIN_BIT);
        return vec![entries];
    }
    let bit = |e: Entry| 2 * (e & !WIN_BIT) + (e >> 63);
    segments
        .par_iter()
        .flat_map(|s| s.par_chunks(4096))
        .for_each(|chunk| {
            for &e in chunk {
                let b = bit(e);
                order.bits[(b / 64) as usize].fetch_or(1 << (b % 64), Relaxed);
            }
        });
    // Thousands of small vectors: freeing them one by one on this thread
    // would leave the other cores idle.
    segments.into_par_iter().for_each(drop);
    const WORDS: usize = 1 << 12;
    words
        .par_chunks(WORDS)
        .enumerate()
        .map(|(c, words)| {
            let mut run = Vec::new();
            for (i, w) in words.iter().enumerate() {
                let at = first_bit + ((c * WORDS + i) * 64) as u64;
                let mut x = if at >= lo && at + 64 <= hi {
                    // Only this run writes the word, and its marking is
                    // over: a plain load, and a store only where a bit is
                    // set (a swap of every word, a locked instruction, took
                    // 2.3% of the KKMvKM pair's time; most words are zero).
                    let x = w.load(Relaxed);
                    if x != 0 {
                        w.store(0, Relaxed);
                    }
                    x
                } else {
                    // A word shared with a neighbouring run.
                    let (from, to) = (lo.saturating_sub(at), (hi - at).min(64));
                    let mine = (u64::MAX >> (64 - to)) & (u64::MAX << from);
                    w.fetch_and(!mine, Relaxed) & mine
                };
                while x != 0 {
                    let b = at + x.trailing_zeros() as u64;
                    x &= x - 1;
                    run.push(((b & 1) << 63) | (b / 2));
                }
            }
            run
        })
        .filter(|run| !run.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs whose states share bitset words are put in order side by
    /// side: each takes out its own entries, once each, in state order, and
    /// leaves the other's bits in the shared word (they may be set while it
    /// reads); afterwards the bitset is all zero again.
    #[test]
    fn runs_side_by_side_take_only_their_own_bits() {
        // Boundaries inside words (2 bits a state, 32 states a word).
        let (a, b) = (0..37u64, 37..150u64);
        let order = StateOrder::new(b.end, None).unwrap();
        let entries = |r: &Range<u64>| -> Vec<Entry> {
            r.clone()
                .filter(|s| s % 3 != 1)
                .map(|s| if s % 2 == 0 { s | WIN_BIT } else { s })
                .rev()
                .collect()
        };
        let (ea, eb) = (entries(&a), entries(&b));
        // Run `b` has marked its entries and not read them yet.
        for &e in &eb {
            let bit = 2 * (e & !WIN_BIT) + (e >> 63);
            order.bits[(bit / 64) as usize].fetch_or(1 << (bit % 64), Relaxed);
        }
        // Twice each: a repeat is dropped.
        let got_a: Vec<Entry> =
            put_in_state_order(vec![ea.clone(), ea.clone()], &order, a.clone()).concat();
        let mut want_a = ea.clone();
        want_a.sort_unstable_by_key(|&e| e & !WIN_BIT);
        assert_eq!(got_a, want_a);
        let got_b: Vec<Entry> = put_in_state_order(vec![eb.clone()], &order, b.clone()).concat();
        let mut want_b = eb.clone();
        want_b.sort_unstable_by_key(|&e| e & !WIN_BIT);
        assert_eq!(got_b, want_b);
        assert!(order.bits.iter().all(|w| w.load(Relaxed) == 0));
    }
}
