//! The rules that are not geometry: rule sets, the counters of the
//! three-move and seven-move rules, and results. Whether a game is over is
//! decided in [`crate::adjudication`].
//!
//! Each rule cites its article in the federation's rulebook (`2d-IV` etc.),
//! as `docs/RULES.md` gives them.

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
