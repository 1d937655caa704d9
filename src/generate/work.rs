//! The per-state working values of a batch ([`Cell`]s in [`Work`]) and the
//! bucket entries that name states during propagation.

use super::error::GenerateError;
use super::memory::AtomicWords;
use crate::memory::prefetch;
use crate::rules::Wdl;
use crate::value::Value;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU16, AtomicU32};

/// Per-state working values of a batch of slices, each state's packed into
/// one atomic 32-bit word ([`Cell`]): every update of a state (finalising it,
/// counting down its replies, recording a shorter win) is one
/// compare-and-swap of that word, and touches one cache line. Relaxed
/// ordering suffices: no state's update depends on another's within a phase,
/// and the phases are separated by rayon's joins, which synchronise.
///
/// Four bytes a state (eight before) halve the memory that propagation
/// reads and writes at random, so that more of a run's cells stay in the
/// processor's cache.
pub(super) struct Work {
    pub(super) cells: AtomicWords<AtomicU32>,
    /// The longest distance to win that did not fit a cell (0: none did).
    /// Cells hold what the work files hold (a byte per value, [`Value::to_byte`]),
    /// so such a batch fails with [`GenerateError::TooLong`] rather than store
    /// a wrong value; no table up to five pieces comes near (the longest win
    /// is 83 plies).
    too_long: AtomicU16,
}

/// One state's working values: bits 0-7 its final value ([`Value::to_byte`],
/// 0 while open), 8-15 the replies left that do not lose, 16-23 the shortest
/// win found so far, 24-31 the longest reply that loses (the opponent's
/// longest win) so far. Both distances are odd (a win's), so each is kept
/// halved: the shortest win `d` as `(d - 1) / 2` (255: [`NO_WIN`]), the
/// longest reply `d` as `(d + 1) / 2` (0: none). [`Work`] checks that what is
/// stored fits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Cell(pub(super) u32);

/// The largest distance a cell's win fields can hold.
const MAX_FIELD_DTW: u16 = 509;

impl Cell {
    pub(super) const OPEN: Cell = Cell(0xFF << 16);

    /// The final value, if the state is solved.
    #[cfg(test)]
    pub(super) fn value(self) -> Option<Value> {
        Value::from_byte(self.0 as u8)
    }
    /// The final value's byte ([`Value::to_byte`]; 0 while open).
    #[inline]
    pub(super) fn value_byte(self) -> u8 {
        self.0 as u8
    }
    #[inline]
    pub(super) fn is_final(self) -> bool {
        self.0 as u8 != 0
    }
    #[inline]
    pub(super) fn remaining(self) -> u8 {
        (self.0 >> 8) as u8
    }
    #[inline]
    pub(super) fn best_win(self) -> u16 {
        match (self.0 >> 16) as u8 {
            0xFF => NO_WIN,
            c => 2 * c as u16 + 1,
        }
    }
    #[inline]
    pub(super) fn longest_reply(self) -> u16 {
        match (self.0 >> 24) as u8 {
            0 => 0,
            c => 2 * c as u16 - 1,
        }
    }
    /// With final value byte `b` ([`Work::with_value`] codes it).
    #[inline]
    fn with_byte(self, b: u8) -> Cell {
        Cell(self.0 & !0xFF | b as u32)
    }
    #[inline]
    pub(super) fn with_remaining(self, r: u8) -> Cell {
        Cell(self.0 & !(0xFF << 8) | (r as u32) << 8)
    }
    /// With shortest win `d` (odd, at most [`MAX_FIELD_DTW`], or [`NO_WIN`]).
    #[inline]
    fn with_best_win_code(self, d: u16) -> Cell {
        let c = if d == NO_WIN { 0xFF } else { (d - 1) / 2 };
        Cell(self.0 & !(0xFF << 16) | (c as u32) << 16)
    }
    /// With longest reply `d` (0 or odd, at most [`MAX_FIELD_DTW`]).
    #[inline]
    fn with_longest_reply_code(self, d: u16) -> Cell {
        Cell(self.0 & !(0xFF << 24) | (d.div_ceil(2) as u32) << 24)
    }
}

impl Work {
    /// `n` open cells, in `spare`'s memory if it has room.
    pub(super) fn new(
        n: usize,
        spare: Option<AtomicWords<AtomicU32>>,
    ) -> Result<Work, GenerateError> {
        // In parallel, like every other pass over the batch (up to 134 MB of
        // cells; serially this took 0.4% of the KKKvKM pair's time).
        let cells = AtomicWords::reuse(spare, n, false)?;
        cells
            .par_chunks(1 << 16)
            .for_each(|c| c.iter().for_each(|w| w.store(Cell::OPEN.0, Relaxed)));
        Ok(Work {
            cells,
            too_long: AtomicU16::new(0),
        })
    }

    /// The cell's memory, for the next batch.
    pub(super) fn into_cells(self) -> AtomicWords<AtomicU32> {
        self.cells
    }

    /// The longest distance to win that did not fit a cell, if any did not.
    pub(super) fn too_long(&self) -> Option<u16> {
        match self.too_long.load(Relaxed) {
            0 => None,
            d => Some(d),
        }
    }

    #[cold]
    fn record_too_long(&self, dtw: u16) {
        self.too_long.fetch_max(dtw.max(1), Relaxed);
    }

    /// `c` with final value `v`; a value that does not fit is recorded (see
    /// [`Work::too_long`]) and stored as the longest of its kind that does.
    #[inline]
    pub(super) fn with_value(&self, c: Cell, v: Value) -> Cell {
        match v.to_byte() {
            Some(b) => c.with_byte(b),
            None => {
                // Only a win or a loss can be too long; the batch fails, so
                // any final value will do: the longest of its kind.
                self.record_too_long(v.dtw);
                c.with_byte(if v.wdl == Wdl::Win {
                    LONGEST_WIN_BYTE
                } else {
                    LONGEST_LOSS_BYTE
                })
            }
        }
    }

    /// `c` with shortest win `d` (odd, a win's; checked as in [`Work::with_value`]).
    #[inline]
    pub(super) fn with_best_win(&self, c: Cell, d: u16) -> Cell {
        debug_assert!(d == NO_WIN || d % 2 == 1, "a win's distance is odd: {d}");
        if d != NO_WIN && d > MAX_FIELD_DTW {
            self.record_too_long(d);
            return c.with_best_win_code(MAX_FIELD_DTW);
        }
        c.with_best_win_code(d)
    }

    /// `c` with longest reply `d` (0 or odd; checked as in [`Work::with_value`]).
    #[inline]
    pub(super) fn with_longest_reply(&self, c: Cell, d: u16) -> Cell {
        debug_assert!(d % 2 == 1 || d == 0, "a win's distance is odd: {d}");
        if d > MAX_FIELD_DTW {
            self.record_too_long(d);
            return c.with_longest_reply_code(MAX_FIELD_DTW);
        }
        c.with_longest_reply_code(d)
    }

    /// Ask the processor to bring state `g`'s cell into the cache, without
    /// waiting for it.
    #[inline]
    pub(super) fn prefetch(&self, g: usize) {
        if let Some(cell) = self.cells.get(g) {
            prefetch(cell);
        }
    }

    #[inline]
    pub(super) fn set(&self, g: usize, c: Cell) {
        self.cells[g].store(c.0, Relaxed)
    }

    /// Apply `f` to state `g`'s cell atomically; `f` returns the new cell, or
    /// `None` to leave it. Returns the cell `f` was last applied to and whether
    /// the update happened.
    #[inline]
    pub(super) fn update(&self, g: usize, mut f: impl FnMut(Cell) -> Option<Cell>) -> (Cell, bool) {
        match self.cells[g].fetch_update(Relaxed, Relaxed, |c| f(Cell(c)).map(|n| n.0)) {
            Ok(c) => (Cell(c), true),
            Err(c) => (Cell(c), false),
        }
    }
}

pub(super) const NO_WIN: u16 = u16::MAX;

/// The bytes of the longest win and loss that [`Value::to_byte`] codes,
/// taken from its coding at compile time rather than written again here.
const LONGEST_WIN_BYTE: u8 = longest_byte(Wdl::Win, 253);
const LONGEST_LOSS_BYTE: u8 = longest_byte(Wdl::Loss, 252);

const fn longest_byte(wdl: Wdl, dtw: u16) -> u8 {
    match (Value { wdl, dtw }).to_byte() {
        Some(b) => b,
        None => panic!("not the longest value a byte codes"),
    }
}

/// How many steps ahead the propagation prefetches the cells it will update:
/// enough to cover a memory access, few enough to stay in the cache. Steps
/// come in groups (the counter states of one predecessor placement share a
/// cache line or two), so 16 steps were only a few lines ahead: 64 took
/// 1.1-1.8% off the KKMvKM pair, 128 nothing more.
pub(super) const PREFETCH_AHEAD: usize = 64;

/// A bucket entry: kind (bit 63: 1 = win, 0 = loss) and the state's position in the batch.
pub(super) type Entry = u64;

pub(super) const WIN_BIT: u64 = 1 << 63;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of a cell reads back what was stored in it, whatever the
    /// others hold, over the whole range each must hold; a distance beyond
    /// that is recorded as too long.
    #[test]
    fn cell_fields_round_trip() {
        let work = Work::new(1, None).unwrap();
        let wins = (1..=MAX_FIELD_DTW).step_by(2);
        let replies = std::iter::once(0).chain(wins.clone());
        for (k, (best, reply)) in wins
            .clone()
            .chain([NO_WIN])
            .zip(replies.cycle())
            .enumerate()
        {
            let remaining = (k % 256) as u8;
            let c = work.with_longest_reply(
                work.with_best_win(Cell::OPEN.with_remaining(remaining), best),
                reply,
            );
            assert_eq!(
                (c.best_win(), c.longest_reply(), c.remaining(), c.value()),
                (best, reply, remaining, None)
            );
            let v = Value {
                wdl: Wdl::Win,
                dtw: (best % 254) | 1,
            };
            let f = work.with_value(c, v);
            assert_eq!(
                (f.value(), f.best_win(), f.longest_reply(), f.remaining()),
                (Some(v), best, reply, remaining)
            );
        }
        assert_eq!(Cell::OPEN.best_win(), NO_WIN);
        assert_eq!(Cell::OPEN.longest_reply(), 0);
        assert!(!Cell::OPEN.is_final());
        assert_eq!(work.too_long(), None);
        work.with_best_win(Cell::OPEN, MAX_FIELD_DTW + 2);
        assert_eq!(work.too_long(), Some(MAX_FIELD_DTW + 2));
        work.with_longest_reply(Cell::OPEN, 601);
        assert_eq!(work.too_long(), Some(601));
    }
}
