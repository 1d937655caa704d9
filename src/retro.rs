//! Retro-moves: the positions from which one ordinary (non-capturing,
//! non-promoting) move leads to a given position, with their counters.
//!
//! These are the only moves that stay inside one material, so they are the
//! only ones the generator has to undo; captures and promotions lead to
//! tables built earlier and are followed forwards.
//!
//! The counters are undone by inverting `Position::play`:
//! - the mover's three-move state: after an ordinary king move to `to` it is
//!   `(to, c)`; before it was `(from, c-1)` if `c >= 2`, and if `c == 1` it was
//!   none or any other king with any count. After a man move it is none;
//!   before it was none or any king with any count. (Only where the rule
//!   applies: the mover has men and kings.)
//! - the other side's three-move state is unchanged;
//! - official seven-move count: one less if the two-king side moved;
//! - lidraughts ply count: one less.
//!
//! A predecessor must also have had no capture (captures are compulsory).
//! Tests check both directions against forward move generation.

use crate::bitboard::Bitboard;
use crate::geometry::{Direction, Square};
use crate::movegen::{free_diagonal_squares, king_capture_origins};
use crate::piece::Side;
use crate::position::Position;
use crate::rules::{KingCount, RuleSet, SevenMove, THREE_MOVE_LIMIT};

/// Which retro-moves to undo.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Undo {
    /// Every ordinary move: men and kings.
    All,
    /// King moves only: these keep the men where they are, so they stay inside
    /// one slice of the generator.
    Kings,
}

/// Call `f` with every position from which one ordinary move leads to `pos`.
/// The predecessors have the other side to move.
pub fn predecessors(pos: &Position, f: impl FnMut(&Position)) {
    predecessors_of(pos, Undo::All, f)
}

/// [`predecessors`], restricted to the moves `undo` names.
pub fn predecessors_of(pos: &Position, undo: Undo, mut f: impl FnMut(&Position)) {
    let Some(undoing) = Undoing::new(pos) else {
        return;
    };
    let mover = undoing.mover;
    if undo == Undo::All {
        let empty = !pos.occupied();
        let back: [Direction; 2] = match mover {
            Side::White => [Direction::DownLeft, Direction::DownRight],
            Side::Black => [Direction::UpLeft, Direction::UpRight],
        };
        for to in pos.men(mover).squares() {
            // A man that stands on its far row got there by promotion: not an ordinary move.
            if Bitboard::promotion_row(mover).contains(to) {
                continue;
            }
            for d in back {
                if let Some(from) = to.step(d) {
                    if empty.contains(from) && !moved(pos, mover, from, to, false).has_capture() {
                        undoing.emit(pos, from, to, false, &mut f);
                    }
                }
            }
        }
    }
    for_each_king_retro_move(pos, |from, to| {
        if undoing.king_may_have_moved_to(to) {
            undoing.emit(pos, from, to, true, &mut f)
        }
    });
}

/// `pos` with the mover's piece on `to` put back on `from`, the mover to move
/// (counters as in `pos`).
#[inline]
pub(crate) fn moved(pos: &Position, mover: Side, from: Square, to: Square, king: bool) -> Position {
    let mut p = *pos;
    p.set_turn(mover);
    p.remove(mover, to);
    p.put(mover, from, king);
    p
}

/// Call `g(from, to)` for every ordinary king move of the side that just
/// moved that leads to `pos`'s pieces from a position without a capture.
/// Depends only on the pieces and the side to move, not on counters, so the
/// generator computes it once for all counter states of a placement.
pub(crate) fn for_each_king_retro_move(pos: &Position, mut g: impl FnMut(Square, Square)) {
    let mover = pos.turn().opponent();
    let empty = !pos.occupied();
    let enemy = pos.pieces(mover.opponent());
    for to in pos.kings(mover).squares() {
        // A predecessor (the king back on `from`, `to` empty) has no capture
        // when the king cannot capture from `from` and its presence there
        // blocks every capture the mover's other pieces have with it lifted
        // (a piece of one's own can only take captures away). Both are
        // computed once per king as sets of squares, instead of a capture
        // test for each origin.
        let mut without = *pos;
        without.set_turn(mover);
        without.remove(mover, to);
        let allowed = without.capture_blockers().unwrap_or(Bitboard::ALL);
        if allowed.is_empty() {
            continue;
        }
        // The squares a king could capture from, with this one lifted.
        let origins = king_capture_origins(enemy, empty.with(to));
        let from = free_diagonal_squares(to, empty) & allowed & !origins;
        for from in from.squares() {
            g(from, to)
        }
    }
}

/// The counters a predecessor of one position must have, apart from the
/// three-move state of the king that moved (see the module docs). `None` from
/// [`Undoing::new`] when no ordinary move can have led to the position.
pub(crate) struct Undoing {
    mover: Side,
    seven: Option<SevenMove>,
    plies: u8,
    rule_applies: bool,
    after_state: Option<KingCount>,
}

impl Undoing {
    pub(crate) fn new(pos: &Position) -> Option<Undoing> {
        let mover = pos.turn().opponent();
        if pos.rules() == RuleSet::Official && pos.one_king_each() {
            // One king each only arises by a capture, and is never left by an ordinary move.
            return None;
        }
        let seven = match (pos.rules(), pos.seven_move()) {
            (RuleSet::Official, Some(sm)) if sm.strong == mover => {
                if sm.moves == 0 {
                    return None; // the count started here: the last move was a capture or promotion
                }
                Some(SevenMove {
                    strong: sm.strong,
                    moves: sm.moves - 1,
                })
            }
            (_, other) => other,
        };
        let plies = if pos.rules() == RuleSet::Lidraughts && pos.ply_limit().is_some() {
            if pos.plies() == 0 {
                return None;
            }
            pos.plies() - 1
        } else {
            0
        };
        Some(Undoing {
            mover,
            seven,
            plies,
            rule_applies: pos.three_move_applies(mover),
            after_state: pos.three_move(mover),
        })
    }

    /// Whether an ordinary king move can have led to the position: not where
    /// the three-move rule applies and the mover's three-move state names no
    /// king (its last move was a man move, a capture or a promotion).
    #[inline]
    pub(crate) fn king_may_have_moved(&self) -> bool {
        !self.rule_applies || self.after_state.is_some()
    }

    /// Whether an ordinary move of the king that now stands on `to` can have
    /// led to the position: where the three-move rule applies, the mover's
    /// three-move state names the king that moved last, if any moved.
    #[inline]
    pub(crate) fn king_may_have_moved_to(&self, to: Square) -> bool {
        !self.rule_applies || matches!(self.after_state, Some(kc) if kc.square == to)
    }

    /// The side that made the move being undone (the predecessors' side to move).
    #[inline]
    pub(crate) fn mover(&self) -> Side {
        self.mover
    }

    /// The predecessors' seven-move count.
    #[inline]
    pub(crate) fn seven(&self) -> Option<SevenMove> {
        self.seven
    }

    /// The predecessors' ply count.
    #[inline]
    pub(crate) fn plies(&self) -> u8 {
        self.plies
    }

    /// Call `f` with every predecessor of `pos` by the ordinary move
    /// `from`-`to` of the side that just moved, one per counter state. The
    /// move must be one whose origin position has no capture.
    #[inline]
    pub(crate) fn emit(
        &self,
        pos: &Position,
        from: Square,
        to: Square,
        king: bool,
        f: &mut impl FnMut(&Position),
    ) {
        let mover = self.mover;
        let mut p = moved(pos, mover, from, to, king);
        p.set_draw_counters(self.seven, self.plies);
        let kings = p.kings(mover);
        self.for_each_mover_state(kings, from, to, king, |state| {
            p.set_three_move(mover, state);
            f(&p);
        });
    }

    /// Call `f` with each three-move state of the mover that a predecessor by
    /// the ordinary move `from`-`to` can have (the predecessors differ in
    /// nothing else); `mover_kings` are the mover's kings before the move.
    /// This is all [`Undoing::emit`] varies, so the generator can compute the
    /// predecessors' indexes from it without building each position.
    #[inline]
    pub(crate) fn for_each_mover_state(
        &self,
        mover_kings: Bitboard,
        from: Square,
        to: Square,
        king: bool,
        mut f: impl FnMut(Option<KingCount>),
    ) {
        if !self.rule_applies {
            f(None);
            return;
        }
        // Before the move: none, or any king (other than `exclude`) with any count.
        let mut any_state = |exclude: Option<Square>| {
            f(None);
            for k in mover_kings.squares().filter(|&k| Some(k) != exclude) {
                for count in 1..=THREE_MOVE_LIMIT {
                    f(Some(KingCount { square: k, count }));
                }
            }
        };
        if king {
            match self.after_state {
                Some(kc) if kc.square == to && kc.count >= 2 => f(Some(KingCount {
                    square: from,
                    count: kc.count - 1,
                })),
                Some(kc) if kc.square == to => any_state(Some(from)),
                _ => {}
            }
        } else if self.after_state.is_none() {
            any_state(None);
        }
    }
}
