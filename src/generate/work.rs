//! The per-state working values of a batch ([`Cell`]s in [`Work`]) and the
//! bucket entries that name states during propagation.

use super::memory::{prefetch, AtomicWords};
use super::GenerateError;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

/// Per-state working values of a batch of slices, each state's packed into
/// one atomic word ([`Cell`]): every update of a state (finalising it,
/// counting down its replies, recording a shorter win) is one
/// compare-and-swap of that word, and touches one cache line. Relaxed
/// ordering suffices: no state's update depends on another's within a phase,
/// and the phases are separated by rayon's joins, which synchronise.
pub(super) struct Work {
    pub(super) cells: AtomicWords,
}

/// One state's working values: bits 0-15 its final value ([`Value::pack`](super::Value::pack), 0
/// while open), 16-23 the replies left that do not lose, 24-39 the shortest
/// win found so far ([`NO_WIN`] if none), 40-55 the longest reply that loses
/// (the opponent's longest win) so far.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Cell(pub(super) u64);

impl Cell {
    pub(super) const OPEN: Cell = Cell((NO_WIN as u64) << 24);

    #[inline]
    pub(super) fn result(self) -> u16 {
        self.0 as u16
    }
    #[inline]
    pub(super) fn remaining(self) -> u8 {
        (self.0 >> 16) as u8
    }
    #[inline]
    pub(super) fn best_win(self) -> u16 {
        (self.0 >> 24) as u16
    }
    #[inline]
    pub(super) fn longest_reply(self) -> u16 {
        (self.0 >> 40) as u16
    }
    #[inline]
    pub(super) fn with_result(self, v: u16) -> Cell {
        Cell(self.0 & !0xFFFF | v as u64)
    }
    #[inline]
    pub(super) fn with_remaining(self, r: u8) -> Cell {
        Cell(self.0 & !(0xFF << 16) | (r as u64) << 16)
    }
    #[inline]
    pub(super) fn with_best_win(self, d: u16) -> Cell {
        Cell(self.0 & !(0xFFFF << 24) | (d as u64) << 24)
    }
    #[inline]
    pub(super) fn with_longest_reply(self, d: u16) -> Cell {
        Cell(self.0 & !(0xFFFF << 40) | (d as u64) << 40)
    }
}

impl Work {
    /// `n` open cells, in `spare`'s memory if it has room.
    pub(super) fn new(n: usize, spare: Option<AtomicWords>) -> Result<Work, GenerateError> {
        // In parallel, like every other pass over the batch (up to 268 MB of
        // cells; serially this took 0.4% of the KKKvKM pair's time).
        let cells = AtomicWords::reuse(spare, n, false)?;
        cells
            .par_chunks(1 << 16)
            .for_each(|c| c.iter().for_each(|w| w.store(Cell::OPEN.0, Relaxed)));
        Ok(Work { cells })
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

/// How many steps ahead the propagation prefetches the cells it will update:
/// enough to cover a memory access, few enough to stay in the cache.
pub(super) const PREFETCH_AHEAD: usize = 16;

/// A bucket entry: kind (bit 63: 1 = win, 0 = loss) and the state's position in the batch.
pub(super) type Entry = u64;

pub(super) const WIN_BIT: u64 = 1 << 63;
