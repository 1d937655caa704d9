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
use crate::movegen::{for_each_free_diagonal_square, king_can_capture};
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
    let mover = pos.turn().opponent();
    if pos.rules() == RuleSet::Official && pos.one_king_each() {
        // One king each only arises by a capture, and is never left by an ordinary move.
        return;
    }
    let seven = match (pos.rules(), pos.seven_move()) {
        (RuleSet::Official, Some(sm)) if sm.strong == mover => {
            if sm.moves == 0 {
                return; // the count started here: the last move was a capture or promotion
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
            return;
        }
        pos.plies() - 1
    } else {
        0
    };
    let empty = !pos.occupied();
    let men = pos.men(mover);
    let kings = pos.kings(mover);
    let rule_applies = men.any() && kings.any();
    let after_state = pos.three_move(mover);
    let back: [Direction; 2] = match mover {
        Side::White => [Direction::DownLeft, Direction::DownRight],
        Side::Black => [Direction::UpLeft, Direction::UpRight],
    };

    let enemy = pos.pieces(mover.opponent());
    // `king_alone`: the mover's other pieces cannot capture (see below), so
    // only the moved king itself, back on `from`, might.
    let mut emit = |from: Square, to: Square, king: bool, king_alone: bool| {
        let mut p = *pos;
        p.turn = mover;
        p.pieces[mover.index()] = p.pieces[mover.index()].without(to).with(from);
        if king {
            p.kings = p.kings.without(to).with(from);
        }
        p.seven = seven;
        p.plies = plies;
        let capture = if king_alone {
            king_can_capture(from, enemy, !p.occupied())
        } else {
            p.has_capture()
        };
        if capture {
            return;
        }
        if !rule_applies {
            p.three[mover.index()] = None;
            f(&p);
            return;
        }
        let mover_kings = p.kings(mover);
        // Before the move: none, or any king (other than `exclude`) with any count.
        let mut any_state = |exclude: Option<Square>, p: &mut Position| {
            p.three[mover.index()] = None;
            f(p);
            for k in mover_kings.squares().filter(|&k| Some(k) != exclude) {
                for count in 1..=THREE_MOVE_LIMIT {
                    p.three[mover.index()] = Some(KingCount { square: k, count });
                    f(p);
                }
            }
        };
        if king {
            match after_state {
                Some(kc) if kc.square == to && kc.count >= 2 => {
                    p.three[mover.index()] = Some(KingCount {
                        square: from,
                        count: kc.count - 1,
                    });
                    f(&p);
                }
                Some(kc) if kc.square == to => any_state(Some(from), &mut p),
                _ => {}
            }
        } else if after_state.is_none() {
            any_state(None, &mut p);
        }
    };

    for to in men.squares().filter(|_| undo == Undo::All) {
        // A man that stands on its far row got there by promotion: not an ordinary move.
        if Bitboard::promotion_row(mover).contains(to) {
            continue;
        }
        for d in back {
            if let Some(from) = to.step(d) {
                if empty.contains(from) {
                    emit(from, to, false, false);
                }
            }
        }
    }
    for to in kings.squares() {
        // A piece of one's own can only take captures away (it blocks a path
        // or a landing square). So when the mover's other pieces cannot capture
        // with this king off the board, a predecessor has a capture exactly when
        // the king can capture from its origin: one ray test instead of a
        // capture test of every piece, for each origin.
        let mut without = *pos;
        without.turn = mover;
        without.pieces[mover.index()] = without.pieces[mover.index()].without(to);
        without.kings = without.kings.without(to);
        let king_alone = !without.has_capture();
        for_each_free_diagonal_square(to, empty, |from| emit(from, to, true, king_alone));
    }
}
