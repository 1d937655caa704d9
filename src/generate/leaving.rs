//! Moves that leave a batch (man moves, captures, promotions): where their
//! successors' values are read, and the summary of those values that the
//! states of a placement share.

use super::pair_table::PairTable;
use super::work::NO_WIN;
use crate::finished::Solved;
use crate::index::{CarriedThreeMove, MaterialIndex, PlacementCache};
use crate::moves::Move;
use crate::position::Position;
use crate::rules::Wdl;
use crate::value::Value;

/// The placement a move that leaves the batch leads to: the part of
/// [`Source`] that does not depend on the counters.
#[derive(Copy, Clone, Debug)]
pub(super) enum Target {
    /// The move takes the opponent's last piece.
    LastPiece,
    /// A capture or promotion: table number in [`Solved`], the index of
    /// the placement's first state, and how the counters add to it where
    /// only the three-move state is carried over.
    Solved(u32, u64, Option<CarriedThreeMove>),
    /// The same into a table without counters: the placement's only state.
    Plain(u32, u64),
    /// A man move: the index of the placement's first state in the other
    /// table of the pair, and how the counters add to it.
    Next(u64, Option<CarriedThreeMove>),
}

impl Target {
    /// Where `pos` after `m` (a move that leaves the batch) lies, but for
    /// the counters.
    #[inline]
    pub(super) fn of(
        pos: &Position,
        m: &Move,
        next: &PairTable,
        solved: &Solved,
        solved_cache: &mut PlacementCache,
        next_cache: &mut PlacementCache,
    ) -> Target {
        debug_assert!(!is_internal(m));
        let child = pos.play(m);
        if m.is_capture() || m.promotes() {
            // A finished table holds the adjudicated value of every state
            // where the game is over (no legal move, seven-move draw, ...), so
            // no move generation is needed here (it took 4% of a pair's time);
            // `verify` re-derives those values with [`Position::outcome`].
            if child.pieces(child.turn()).is_empty() {
                return Target::LastPiece;
            }
            let (t, base) = solved.locate_placement(&child, solved_cache);
            if solved.has_counters(t) {
                Target::Solved(t, base, solved.index_of(t).carried_three_move(&child))
            } else {
                Target::Plain(t, base)
            }
        } else {
            let (_, base) = next_cache.get(&child, || {
                (0, next.index.placement_base(&child.white_to_move()))
            });
            Target::Next(base, next.index.carried_three_move(&child))
        }
    }

    /// Where the value of `pos` (the placement this target was found for,
    /// with its counters set) after `m` is read. Always inlined: left to the
    /// compiler it became a call, which cost more instructions than
    /// not replaying the move saved (measured with cachegrind).
    #[inline(always)]
    pub(super) fn source(
        &self,
        pos: &Position,
        m: &Move,
        next: &PairTable,
        solved: &Solved,
    ) -> Source {
        match *self {
            Target::LastPiece => Source::LastPiece,
            Target::Plain(t, i) => Source::Solved(t, i),
            Target::Solved(t, base, ref carried) => Source::Solved(
                t,
                base + successor_offset(carried, pos, m, solved.index_of(t)),
            ),
            Target::Next(base, ref carried) => {
                Source::Next(base + successor_offset(carried, pos, m, &next.index))
            }
        }
    }
}

/// The counter offset of `pos` after `m` in `ix`, the successor's index:
/// from the carried three-move state where that is all it depends on, else
/// from the successor itself.
#[inline(always)]
fn successor_offset(
    carried: &Option<CarriedThreeMove>,
    pos: &Position,
    m: &Move,
    ix: &MaterialIndex,
) -> u64 {
    let offset = match carried {
        Some(k) => k.offset(pos.three_move(pos.turn().opponent())),
        None => ix.counters_offset(&pos.play(m)),
    };
    debug_assert_eq!(offset, ix.counters_offset(&pos.play(m)));
    offset
}

/// Where the value of a move that leaves the batch is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The move took the opponent's last piece: the successor is lost at once.
    LastPiece,
    /// A capture or promotion: table number and index in [`Solved`].
    Solved(u32, u64),
    /// A man move: index in the other table of the pair.
    Next(u64),
}

impl Source {
    /// Where the value of `pos` after `m` (a move that leaves the batch) is.
    #[inline]
    pub(super) fn of(
        pos: &Position,
        m: &Move,
        next: &PairTable,
        solved: &Solved,
        solved_cache: &mut PlacementCache,
        next_cache: &mut PlacementCache,
    ) -> Source {
        Target::of(pos, m, next, solved, solved_cache, next_cache).source(pos, m, next, solved)
    }

    #[inline]
    pub(super) fn prefetch(self, next: &PairTable, solved: &Solved) {
        match self {
            Source::LastPiece => {}
            Source::Solved(t, i) => solved.prefetch(t, i),
            Source::Next(i) => next.prefetch(i),
        }
    }

    /// The successor's value, for its side to move.
    #[inline]
    pub(super) fn read(self, next: &PairTable, solved: &Solved) -> Value {
        match self {
            Source::LastPiece => Value {
                wdl: Wdl::Loss,
                dtw: 0,
            },
            Source::Solved(t, i) => solved.at(t, i),
            Source::Next(i) => Value::from_byte(next.get(i)).unwrap_or_else(|| {
                panic!(
                    "{}: state {i} read before its slice {} was solved",
                    next.material,
                    i / next.slice_len
                )
            }),
        }
    }
}

/// The values of the moves of a state that lead out of the batch (man moves,
/// captures, promotions), seen from the side that plays them.
#[derive(Copy, Clone, Debug)]
pub(super) struct Leaving {
    /// Plies to the shortest win ([`NO_WIN`] if none).
    pub(super) best_win: u16,
    /// The longest of the opponent's wins.
    pub(super) longest: u16,
    /// Some move draws.
    pub(super) draw: bool,
}

impl Leaving {
    /// No move leaves the batch.
    pub(super) const NONE: Leaving = Leaving {
        best_win: NO_WIN,
        longest: 0,
        draw: false,
    };

    /// The value of a state whose every move is one of these.
    #[inline]
    pub(super) fn value(self) -> Value {
        if self.best_win != NO_WIN {
            Value {
                wdl: Wdl::Win,
                dtw: self.best_win,
            }
        } else if self.draw {
            Value {
                wdl: Wdl::Draw,
                dtw: 0,
            }
        } else {
            Value {
                wdl: Wdl::Loss,
                dtw: self.longest + 1,
            }
        }
    }

    /// Count the moves that `o` summarises too.
    #[inline]
    pub(super) fn merge(&mut self, o: Leaving) {
        self.best_win = self.best_win.min(o.best_win);
        self.longest = self.longest.max(o.longest);
        self.draw |= o.draw;
    }

    /// Count one move whose successor has value `v` (for the opponent).
    #[inline]
    pub(super) fn add(&mut self, v: Value) {
        // Selects, not branches on the result: the successors' results come
        // in no order a branch predictor could learn (plain `if`s were
        // compiled into branches).
        use std::hint::select_unpredictable as select;
        let (loss, win) = (v.wdl == Wdl::Loss, v.wdl == Wdl::Win);
        self.best_win = self.best_win.min(select(loss, v.dtw + 1, NO_WIN));
        self.longest = self.longest.max(select(win, v.dtw, 0));
        self.draw |= v.wdl == Wdl::Draw;
    }
}

/// An ordinary king move: the only kind that stays inside the batch (it
/// keeps the men where they are).
#[inline]
pub(super) fn is_internal(m: &Move) -> bool {
    m.is_king_move() && !m.is_capture()
}
