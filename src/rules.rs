//! The rules that are not geometry: rule sets, capture values, the counters of
//! the three-move and seven-move rules, and adjudication.
//!
//! Each rule cites its article in the federation's rulebook (`2d-IV` etc.) or
//! the section of `RULES.md` it implements.

use crate::geometry::Square;
use crate::piece::Side;
use std::fmt;
use std::str::FromStr;

/// Which interpretation of the rules to play by.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum RuleSet {
    /// The FMJD / Frisian federation rules (the default).
    #[default]
    Official,
    /// The PlayStrategy / lidraughts server interpretation: a king is worth
    /// 199 against a man's 100, and draws by ply counts once only three or
    /// fewer kings remain.
    Lidraughts,
}

impl RuleSet {
    /// Both rule sets.
    pub const ALL: [RuleSet; 2] = [RuleSet::Official, RuleSet::Lidraughts];

    /// Lower-case name: `official` or `lidraughts`.
    pub const fn name(self) -> &'static str {
        match self {
            RuleSet::Official => "official",
            RuleSet::Lidraughts => "lidraughts",
        }
    }

    /// The value of a capture sequence taking `men` men and `kings` kings,
    /// on an integer scale where higher must be preferred.
    ///
    /// Official (rulebook 2d-V, 2g-II): `m` men and `k` kings are worth
    /// `m + 2k - 1/2` men when `k > 0`; doubled here to stay integral.
    /// Lidraughts: man 100, king 199.
    ///
    /// ```
    /// use frisian_tb::RuleSet;
    /// let v = |m, k| RuleSet::Official.capture_value(m, k);
    /// assert!(v(1, 0) < v(0, 1) && v(0, 1) < v(2, 0)); // a king: more than a man, less than two
    /// assert_eq!(v(0, 3), 11); // three kings: 5.5 men (values are in half-men)
    /// assert_eq!(v(2, 1), v(0, 2)); // 1 king + 2 men = 2 kings in official play ...
    /// let l = |m, k| RuleSet::Lidraughts.capture_value(m, k);
    /// assert!(l(0, 2) < l(2, 1)); // ... but not on the servers
    /// ```
    #[inline]
    pub const fn capture_value(self, men: u32, kings: u32) -> u32 {
        match self {
            RuleSet::Official => 2 * men + 4 * kings - if kings > 0 { 1 } else { 0 },
            RuleSet::Lidraughts => 100 * men + 199 * kings,
        }
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown rule-set name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule set '{0}' (expected 'official' or 'lidraughts')")]
pub struct UnknownRuleSet(pub String);

impl FromStr for RuleSet {
    type Err = UnknownRuleSet;
    fn from_str(s: &str) -> Result<RuleSet, UnknownRuleSet> {
        match s.to_ascii_lowercase().as_str() {
            "official" | "fmjd" => Ok(RuleSet::Official),
            "lidraughts" | "playstrategy" => Ok(RuleSet::Lidraughts),
            _ => Err(UnknownRuleSet(s.to_string())),
        }
    }
}

/// Three-move rule (rulebook 2h-I): at most this many consecutive ordinary
/// moves with the same king while the player also has men.
pub const THREE_MOVE_LIMIT: u8 = 3;

/// Seven-move rule (rulebook 2i): moves the two-king side may make in two
/// kings against one.
pub const SEVEN_MOVE_LIMIT: u8 = 7;

/// Lidraughts: plies after which two kings against one is drawn.
pub const LIDRAUGHTS_TWO_VS_ONE_PLIES: u8 = 14;

/// Lidraughts: plies after which one king against one king is drawn.
pub const LIDRAUGHTS_ONE_VS_ONE_PLIES: u8 = 4;

/// One player's three-move state: the king it last moved without capturing
/// and how many consecutive ordinary moves that king has made (1-3).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct KingCount {
    /// Where the tracked king stands now.
    pub square: Square,
    /// Consecutive ordinary moves made by it, 1-3.
    pub count: u8,
}

/// The seven-move count (official rules): which side has (or had) the two
/// kings, and how many moves it has made since two kings against one arose.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SevenMove {
    /// The side with two kings (in one king each: the side that had them).
    pub strong: Side,
    /// Moves made by that side since the rule came into effect, 0-7.
    pub moves: u8,
}

/// A game result from the point of view of the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wdl {
    /// The side to move loses.
    Loss = 0,
    /// Neither side can force a win.
    Draw = 1,
    /// The side to move wins.
    Win = 2,
}

impl Wdl {
    /// The same result seen from the other side.
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::Draw => Wdl::Draw,
            Wdl::Win => Wdl::Loss,
        }
    }

    /// `win`, `draw` or `loss`.
    pub const fn name(self) -> &'static str {
        match self {
            Wdl::Loss => "loss",
            Wdl::Draw => "draw",
            Wdl::Win => "win",
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

impl crate::position::Position {
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
        if self.kings != self.occupied() || self.kings.count() > 3 {
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
                    let mut buf = [crate::moves::Move::quiet(
                        crate::geometry::Square::from_index(0),
                        crate::geometry::Square::from_index(0),
                        true,
                        false,
                    ); 17];
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
