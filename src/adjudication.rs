//! Adjudication: whether a game is over, and with what result.
//!
//! The end of play by the rulebook (2k: no pieces, no legal move), the
//! one-king-each rule (2j-I), the seven-move rule (2i) and, under the
//! lidraughts rule set, its ply limits for kings alone.

use crate::geometry::Square;
use crate::moves::Move;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl, SEVEN_MOVE_LIMIT};

/// Why a game is over.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The side to move has no pieces left (rulebook 2k).
    NoPieces,
    /// The side not to move has no pieces left: it lost when its last piece
    /// was taken (rulebook 2k), so the side to move has won. Play never
    /// reaches such a position; it is answered rather than looked up.
    OpponentHasNoPieces,
    /// The side to move has no legal move, perhaps because of the three-move rule (2k, 2h-I).
    NoLegalMove,
    /// One king each on 46 and 5: the side to move loses (2j-I).
    CornerKings,
    /// One king each and no capture: a draw (2j-I).
    OneKingEach,
    /// The two-king side would make an eighth move (2i).
    SevenMoveRule,
    /// Lidraughts: the ply count of kings-only, at-most-three-piece play ran out.
    PlyLimit,
}

impl Ending {
    /// A short human description.
    pub const fn describe(self) -> &'static str {
        match self {
            Ending::NoPieces => "no pieces left",
            Ending::OpponentHasNoPieces => "the opponent has no pieces left",
            Ending::NoLegalMove => "no legal move",
            Ending::CornerKings => "one king each on 46 and 5",
            Ending::OneKingEach => "one king each, no capture",
            Ending::SevenMoveRule => "seven-move rule",
            Ending::PlyLimit => "lidraughts ply limit",
        }
    }
}

/// The end of a game: the result for the side to move, and why.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// Result for the side to move.
    pub wdl: Wdl,
    /// The rule that ended the game.
    pub ending: Ending,
}

impl Position {
    /// Whether the game is over, and if so the result for the side to move.
    ///
    /// ```
    /// use frisian_tb::{fen, RuleSet, Wdl};
    /// let p = fen::parse("W:WK46:BK5", RuleSet::Official).unwrap();
    /// assert_eq!(p.outcome().unwrap().wdl, Wdl::Loss); // rulebook 2j-I
    /// let p = fen::parse("W:WK46:BK4", RuleSet::Official).unwrap();
    /// assert_eq!(p.outcome().unwrap().wdl, Wdl::Draw);
    /// ```
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome_with(self.has_legal_move())
    }

    /// [`Position::outcome`](Self::outcome) for a caller that already knows whether the side
    /// to move has a legal move (the generator, which generates the moves of
    /// a placement once for all its counter states).
    ///
    /// Inlined up to the rules for kings alone, which only positions of
    /// kings alone and at most three pieces need: the generator asks this of
    /// every state it initialises.
    #[inline]
    pub(crate) fn outcome_with(&self, has_legal_move: bool) -> Option<Outcome> {
        let over = |wdl, ending| Some(Outcome { wdl, ending });
        let us = self.turn();
        if self.pieces(us).is_empty() {
            return over(Wdl::Loss, Ending::NoPieces);
        }
        if self.pieces(us.opponent()).is_empty() {
            return over(Wdl::Win, Ending::OpponentHasNoPieces);
        }
        if !has_legal_move {
            return over(Wdl::Loss, Ending::NoLegalMove);
        }
        // The seven-move rule, one king each and the lidraughts ply limits
        // apply to kings alone, three pieces at most.
        if self.all_kings() != self.occupied() || self.all_kings().count() > 3 {
            return None;
        }
        self.kings_alone_outcome()
    }

    /// The end of a game of kings alone, three pieces at most, whose side to
    /// move has a legal move ([`Position::outcome_with`]).
    #[inline(never)]
    fn kings_alone_outcome(&self) -> Option<Outcome> {
        let over = |wdl, ending| Some(Outcome { wdl, ending });
        let us = self.turn();
        match self.rules() {
            RuleSet::Official => {
                let eighth_move = matches!(self.seven_move(), Some(sm) if sm.strong == us && sm.moves >= SEVEN_MOVE_LIMIT);
                if self.one_king_each() {
                    // 2j-I: the game ends at once unless the side to move can capture.
                    if self.has_capture() {
                        return if eighth_move {
                            over(Wdl::Draw, Ending::SevenMoveRule)
                        } else {
                            None
                        };
                    }
                    // Without a capture the lone king's moves are ordinary moves; a
                    // small stack buffer keeps this probe-time check allocation-free.
                    let mut buf =
                        [Move::quiet(Square::from_index(0), Square::from_index(0), true, false);
                            17];
                    let n = self.quiet_king_moves(&mut buf);
                    let all_lost = buf[..n].iter().all(|m| self.play(m).can_capture_legally());
                    return if all_lost {
                        over(Wdl::Loss, Ending::CornerKings)
                    } else {
                        over(Wdl::Draw, Ending::OneKingEach)
                    };
                }
                if eighth_move && self.two_kings_vs_one() == Some(us) {
                    return over(Wdl::Draw, Ending::SevenMoveRule);
                }
                None
            }
            RuleSet::Lidraughts => match self.ply_limit() {
                Some(limit) if self.plies() >= limit => over(Wdl::Draw, Ending::PlyLimit),
                _ => None,
            },
        }
    }

    /// Whether the game is over.
    pub fn is_game_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// Whether the side to move has a capture that the seven-move rule lets it play.
    fn can_capture_legally(&self) -> bool {
        let eighth = matches!(self.seven_move(), Some(sm) if sm.strong == self.turn() && sm.moves >= SEVEN_MOVE_LIMIT);
        self.has_capture() && !eighth
    }
}
