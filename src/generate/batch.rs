//! Slices and batches: the order in which a pair's states are solved, and
//! the runs a batch propagates in.

use super::divisor::Divisor;
use super::pair_table::PairTable;
use super::relay::Fresh;
use super::work::{Entry, WIN_BIT};
use crate::index::MaterialIndex;
use crate::piece::Side;
use crate::position::Position;
use rayon::prelude::*;
use std::ops::Range;

/// A slice: the states of one table with one placement of the men. Ordinary
/// king moves stay between a slice and its partner (the same men, the other side
/// to move); man moves lead to slices with the men further advanced.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Slice {
    pub(super) table: usize,
    pub(super) slice: u64,
}

/// How far the men still have to go: White's men count their row (they move
/// toward row 0), Black's men their distance to row 9. Every man move lowers it
/// by one, so slices solved in increasing order find their man moves solved.
pub(super) fn advancement(pos: &Position) -> u32 {
    let white: u32 = pos.men(Side::White).squares().map(|s| s.row() as u32).sum();
    let black: u32 = pos
        .men(Side::Black)
        .squares()
        .map(|s| 9 - s.row() as u32)
        .sum();
    white + black
}

/// A batch: slices solved together, and where each one's partner is among
/// them (the same men, the other side to move: king moves lead there).
#[derive(Clone, Debug, Default)]
pub(super) struct Batch {
    pub(super) parts: Vec<Slice>,
    pub(super) partner: Vec<u64>,
}

/// Slices of the pair in solving order, grouped into batches of at most
/// `batch_states` states (a batch never splits a slice from its partner).
pub(super) fn batches(tables: &[&MaterialIndex], batch_states: u64) -> Vec<Batch> {
    let symmetric = tables.len() == 1;
    let t0 = tables[0];
    let slices = t0.size() / t0.slice_len();
    // Per slice: its level, and its partner's table and slice if it is
    // listed with it (`NONE` for a symmetric slice that is its own partner).
    // Plain tuples sorted in place: with a vector per slice, planning MMMvMM
    // (12.4 M one-state slices) took a sixth of its pair's time.
    const NONE: u64 = u64::MAX;
    let other = if symmetric { 0 } else { 1 };
    let mut groups: Vec<(u32, u64, u64)> = (0..slices)
        .into_par_iter()
        .filter_map(|s| {
            let p = t0.position(s * t0.slice_len());
            // The same men with the other side to move (the index flips it into its table).
            let mut q = p;
            q.set_turn(Side::Black);
            let partner = tables[other].index(&q) / tables[other].slice_len();
            if symmetric && partner < s {
                return None; // listed with its partner
            }
            let partner = if symmetric && partner == s {
                NONE
            } else {
                partner
            };
            Some((advancement(&p), s, partner))
        })
        .collect();
    // Slices are unique, so an unstable sort gives the same order.
    groups.par_sort_unstable_by_key(|&(level, s, _)| (level, s));
    let mut out: Vec<Batch> = Vec::new();
    let mut current = Batch::default();
    let (mut level, mut states) = (u32::MAX, 0u64);
    for (l, s, partner) in groups {
        let n = t0.slice_len()
            + if partner == NONE {
                0
            } else {
                tables[other].slice_len()
            };
        if !current.parts.is_empty() && (l != level || states + n > batch_states) {
            out.push(std::mem::take(&mut current));
            states = 0;
        }
        level = l;
        states += n;
        let at = current.parts.len() as u64;
        current.parts.push(Slice { table: 0, slice: s });
        if partner == NONE {
            current.partner.push(at);
        } else {
            current.partner.extend([at + 1, at]);
            current.parts.push(Slice {
                table: other,
                slice: partner,
            });
        }
    }
    if !current.parts.is_empty() {
        out.push(current);
    }
    out
}

/// States per batch: about [`BYTES_PER_BATCH_STATE`](super::BYTES_PER_BATCH_STATE) bytes each of working memory.
pub(super) const BATCH_STATES: u64 = 1 << 25;

/// States that propagation goes through together where slice pairs are
/// small: about 8 MB of cells, which the processor's cache can hold.
const LOCAL_STATES: u64 = 1 << 21;

/// The batch's runs for propagation: ranges of batch positions made of whole
/// groups of parts closed under `partner` (slice pairs: king moves never
/// leave one), at least about `LOCAL_STATES / 2` states each where the slices
/// allow; and each part's run. Parts hold `len` states.
fn local_runs(partner: &[u64], len: u64) -> (Vec<Range<u64>>, Vec<usize>) {
    let (mut runs, mut run_of_part) = (Vec::new(), Vec::with_capacity(partner.len()));
    let (mut start, mut reach) = (0u64, 0u64);
    for (i, &p) in partner.iter().enumerate() {
        let i = i as u64;
        reach = reach.max(p).max(i);
        run_of_part.push(runs.len());
        // A run may end after part `i` when no part in it has its partner further on.
        if reach == i && (i + 1 - start) * len * 2 >= LOCAL_STATES {
            runs.push(start * len..(i + 1) * len);
            start = i + 1;
        }
    }
    if start < partner.len() as u64 {
        runs.push(start * len..partner.len() as u64 * len);
    }
    (runs, run_of_part)
}

/// A batch as it lies in working memory, and what initialisation and
/// propagation share about it. Part `i` of the batch (a slice) holds batch
/// positions `i * len .. (i + 1) * len`.
pub(super) struct Layout<'a> {
    /// The tables of the pair (one if the material is its own flip).
    pub(super) tables: &'a [PairTable],
    /// The batch's slices, in batch order.
    pub(super) parts: &'a [Slice],
    /// Where each part's partner (the same men, the other side to move) is
    /// among the parts: king moves lead there.
    pub(super) partner: &'a [u64],
    /// States per part. The two tables of a pair have slices of one length
    /// (the flip swaps the sides' kings and counters, which leaves the
    /// products unchanged).
    pub(super) len: u64,
    /// States in the batch.
    pub(super) total: u64,
    /// Counter combinations per placement. Both tables of a pair have the
    /// same (the flip swaps the sides' counters), so a placement of the batch
    /// is `g / per`, whichever table it is in.
    pub(super) per: u64,
    /// Each table's relay nodes, if it has them.
    pub(super) fresh: Vec<Option<Fresh>>,
    /// Relay nodes per part: room for the most that either table needs.
    pub(super) per_part: u64,
    /// `len`, `per` and `per_part` as divisors: batch positions are divided
    /// by them several times per state.
    pub(super) len_div: Divisor,
    pub(super) per_div: Divisor,
    pub(super) per_part_div: Divisor,
    /// The runs that propagation goes through one at a time
    /// ([`local_runs`]).
    pub(super) runs: Vec<Range<u64>>,
    /// The run of each part.
    pub(super) run_of_part: Vec<usize>,
}

impl<'a> Layout<'a> {
    pub(super) fn new(tables: &'a [PairTable], batch: &'a Batch) -> Layout<'a> {
        let len = tables[0].slice_len;
        let per = tables[0].index.counters_per_placement();
        debug_assert!(tables
            .iter()
            .all(|t| t.slice_len == len && t.index.counters_per_placement() == per));
        let fresh: Vec<Option<Fresh>> = tables.iter().map(|t| Fresh::of(&t.index)).collect();
        let per_part = fresh
            .iter()
            .flatten()
            .map(|f| f.per_part(len))
            .max()
            .unwrap_or(0);
        // King moves stay inside a slice pair, so the batch propagates run by
        // run: whole slice pairs of about `LOCAL_STATES` states together, where
        // slices are that small, so that the cells a run updates stay in the
        // processor's cache instead of lying anywhere in hundreds of megabytes.
        let (runs, run_of_part) = local_runs(&batch.partner, len);
        Layout {
            tables,
            parts: &batch.parts,
            partner: &batch.partner,
            len,
            total: batch.parts.len() as u64 * len,
            per,
            fresh,
            per_part,
            len_div: Divisor::new(len),
            per_div: Divisor::new(per),
            // Without relay nodes nothing divides by it.
            per_part_div: Divisor::new(per_part.max(1)),
            runs,
            run_of_part,
        }
    }

    /// Table and index of batch position `g`.
    #[inline]
    pub(super) fn global(&self, g: u64) -> (usize, u64) {
        let (part, offset) = self.len_div.div_rem(g);
        let p = self.parts[part as usize];
        (p.table, p.slice * self.len + offset)
    }

    /// The other table of the pair: where ordinary moves from table `t` lead
    /// (`t` itself if the material is its own flip).
    #[inline]
    pub(super) fn other_table(&self, t: usize) -> usize {
        if self.tables.len() == 1 {
            0
        } else {
            1 - t
        }
    }

    /// The run that bucket entry `e` belongs to.
    #[inline]
    pub(super) fn run_of(&self, e: Entry) -> usize {
        self.run_of_part[self.len_div.div(e & !WIN_BIT) as usize]
    }

    /// The relay nodes of the table that part `part` belongs to.
    #[inline]
    pub(super) fn relays_of_part(&self, part: u64) -> Option<Fresh> {
        self.fresh[self.parts[part as usize].table]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Propagation runs cover the batch in order, never separate a part from
    /// its partner, and gather small parts up to about `LOCAL_STATES` states.
    #[test]
    fn propagation_runs_keep_slice_pairs_together() {
        // Pairs of tables: parts alternate with their partners.
        let pairs: Vec<u64> = (0..40u64).map(|i| i ^ 1).collect();
        // One symmetric table: some slices are their own partners.
        let symmetric: Vec<u64> = vec![0, 2, 1, 3, 4, 6, 5, 7];
        for (partner, len) in [
            (&pairs, 1000),
            (&pairs, LOCAL_STATES / 3),
            (&pairs, LOCAL_STATES * 4),
            (&symmetric, 1000),
            (&symmetric, LOCAL_STATES / 2),
        ] {
            let (runs, run_of_part) = local_runs(partner, len);
            assert_eq!(runs.first().unwrap().start, 0);
            assert_eq!(runs.last().unwrap().end, partner.len() as u64 * len);
            for w in runs.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            for (i, &p) in partner.iter().enumerate() {
                assert_eq!(run_of_part[i], run_of_part[p as usize]);
                assert!(runs[run_of_part[i]].contains(&(i as u64 * len)));
            }
            for r in &runs[..runs.len() - 1] {
                let n = r.end - r.start;
                assert!(
                    2 * n >= LOCAL_STATES && (n <= LOCAL_STATES || n <= 2 * len),
                    "{r:?}"
                );
            }
        }
    }
}
