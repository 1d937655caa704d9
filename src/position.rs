//! A position: pieces, side to move, rule set and the full counter state.
//!
//! [`Setup`] is a position as given (no invariants); [`Position::from_setup`]
//! checks it and normalises counters that the rules make irrelevant, so that
//! two positions that play the same compare equal.

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::moves::Move;
use crate::piece::{Piece, Role, Side};
use crate::rules::{
    KingCount, RuleSet, SevenMove, LIDRAUGHTS_ONE_VS_ONE_PLIES, LIDRAUGHTS_TWO_VS_ONE_PLIES,
    SEVEN_MOVE_LIMIT, THREE_MOVE_LIMIT,
};

/// A position as given, before any check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Setup {
    /// Squares of each side's men, indexed by [`Side::index`].
    pub men: [Bitboard; 2],
    /// Squares of each side's kings.
    pub kings: [Bitboard; 2],
    /// Side to move (`None` means White).
    pub turn: Option<Side>,
    /// Each side's three-move state.
    pub three_move: [Option<KingCount>; 2],
    /// Official seven-move count.
    pub seven_move: Option<SevenMove>,
    /// Lidraughts ply count of kings-only play with at most three pieces.
    pub plies: u8,
}

/// Why a [`Setup`] is not a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// A square holds two pieces.
    #[error("square {0} is given twice")]
    SquareTwice(Square),
    /// A man stands on its own promotion row.
    #[error("a {side} man cannot stand on {square} (its promotion row)", side = .side.name())]
    ManOnFarRow {
        /// Owner of the man.
        side: Side,
        /// Where it stands.
        square: Square,
    },
    /// A side has more than 20 pieces.
    #[error("{0} has more than 20 pieces")]
    TooManyPieces(Side),
    /// A three-move count outside 1-3.
    #[error("three-move count {count} for {side} is out of range (1-3)")]
    ThreeMoveCount {
        /// The side.
        side: Side,
        /// The count given.
        count: u8,
    },
    /// The three-move state names a square without a king of that side.
    #[error("three-move state of {side} names square {square}, which holds no {side} king")]
    ThreeMoveNoKing {
        /// The side.
        side: Side,
        /// The square named.
        square: Square,
    },
    /// A seven-move count above 7, or given for the wrong side.
    #[error("seven-move count {moves} for {side} does not fit this material (two kings against one, 0-7)")]
    SevenMove {
        /// The side named.
        side: Side,
        /// The count.
        moves: u8,
    },
    /// A lidraughts ply count beyond the limit of its material.
    #[error("lidraughts ply count {0} is beyond its limit ({1})")]
    Plies(u8, u8),
}

/// A legal Frisian draughts position with its counter state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pieces: [Bitboard; 2],
    kings: Bitboard,
    turn: Side,
    three: [Option<KingCount>; 2],
    seven: Option<SevenMove>,
    plies: u8,
    rules: RuleSet,
}

impl Position {
    /// The initial position: black men on 1-20, white men on 31-50, White to move.
    pub fn initial(rules: RuleSet) -> Position {
        Position::from_men(
            Bitboard::from_range(31, 50),
            Bitboard::from_range(1, 20),
            rules,
        )
    }

    /// The alternative "Frysk!" start: black men on 1-5, white men on 46-50.
    pub fn frysk(rules: RuleSet) -> Position {
        Position::from_men(
            Bitboard::from_range(46, 50),
            Bitboard::from_range(1, 5),
            rules,
        )
    }

    fn from_men(white: Bitboard, black: Bitboard, rules: RuleSet) -> Position {
        Position {
            pieces: [white, black],
            kings: Bitboard::EMPTY,
            turn: Side::White,
            three: [None, None],
            seven: None,
            plies: 0,
            rules,
        }
    }

    /// Check a setup and build the position.
    pub fn from_setup(setup: &Setup, rules: RuleSet) -> Result<Position, PositionError> {
        let mut seen = Bitboard::EMPTY;
        for bb in [setup.men[0], setup.kings[0], setup.men[1], setup.kings[1]] {
            if let Some(sq) = (seen & bb).first() {
                return Err(PositionError::SquareTwice(sq));
            }
            seen |= bb;
        }
        for side in Side::BOTH {
            if let Some(square) = (setup.men[side.index()] & Bitboard::promotion_row(side)).first()
            {
                return Err(PositionError::ManOnFarRow { side, square });
            }
            if (setup.men[side.index()] | setup.kings[side.index()]).count() > 20 {
                return Err(PositionError::TooManyPieces(side));
            }
            if let Some(kc) = setup.three_move[side.index()] {
                if kc.count == 0 || kc.count > THREE_MOVE_LIMIT {
                    return Err(PositionError::ThreeMoveCount {
                        side,
                        count: kc.count,
                    });
                }
                if !setup.kings[side.index()].contains(kc.square) {
                    return Err(PositionError::ThreeMoveNoKing {
                        side,
                        square: kc.square,
                    });
                }
            }
        }
        let mut pos = Position {
            pieces: [setup.men[0] | setup.kings[0], setup.men[1] | setup.kings[1]],
            kings: setup.kings[0] | setup.kings[1],
            turn: setup.turn.unwrap_or(Side::White),
            three: setup.three_move,
            seven: None,
            plies: 0,
            rules,
        };
        pos.normalise_three_move();
        if rules == RuleSet::Official {
            pos.seven = match (pos.two_kings_vs_one(), setup.seven_move) {
                (Some(strong), None) => Some(SevenMove { strong, moves: 0 }),
                (Some(strong), Some(sm)) if sm.strong == strong && sm.moves <= SEVEN_MOVE_LIMIT => {
                    Some(sm)
                }
                (None, Some(sm)) if pos.one_king_each() && sm.moves <= SEVEN_MOVE_LIMIT => Some(sm),
                (_, Some(sm)) => {
                    return Err(PositionError::SevenMove {
                        side: sm.strong,
                        moves: sm.moves,
                    })
                }
                (None, None) => None,
            };
        } else if let Some(limit) = pos.ply_limit() {
            if setup.plies > limit {
                return Err(PositionError::Plies(setup.plies, limit));
            }
            pos.plies = setup.plies;
        }
        Ok(pos)
    }

    /// The position as a [`Setup`].
    pub fn to_setup(&self) -> Setup {
        Setup {
            men: [self.men(Side::White), self.men(Side::Black)],
            kings: [self.kings(Side::White), self.kings(Side::Black)],
            turn: Some(self.turn),
            three_move: self.three,
            seven_move: self.seven,
            plies: self.plies,
        }
    }

    /// The rule set this position is played by.
    #[inline]
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The side to move.
    #[inline]
    pub fn turn(&self) -> Side {
        self.turn
    }

    /// All pieces of `side`.
    #[inline]
    pub fn pieces(&self, side: Side) -> Bitboard {
        self.pieces[side.index()]
    }

    /// The men of `side`.
    #[inline]
    pub fn men(&self, side: Side) -> Bitboard {
        self.pieces[side.index()] & !self.kings
    }

    /// The kings of `side`.
    #[inline]
    pub fn kings(&self, side: Side) -> Bitboard {
        self.pieces[side.index()] & self.kings
    }

    /// Every occupied square.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.pieces[0] | self.pieces[1]
    }

    /// The piece on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let side = if self.pieces[0].contains(sq) {
            Side::White
        } else if self.pieces[1].contains(sq) {
            Side::Black
        } else {
            return None;
        };
        let role = if self.kings.contains(sq) {
            Role::King
        } else {
            Role::Man
        };
        Some(Piece { side, role })
    }

    /// `side`'s three-move state: the king it last moved without capturing and its count.
    #[inline]
    pub fn three_move(&self, side: Side) -> Option<KingCount> {
        self.three[side.index()]
    }

    /// The official seven-move count, where it applies.
    #[inline]
    pub fn seven_move(&self) -> Option<SevenMove> {
        self.seven
    }

    /// The lidraughts ply count (0 where it does not apply).
    #[inline]
    pub fn plies(&self) -> u8 {
        self.plies
    }

    /// The king of the side to move that the three-move rule forbids to make an ordinary move.
    #[inline]
    pub(crate) fn blocked_king(&self) -> Option<Square> {
        match self.three[self.turn.index()] {
            Some(kc) if kc.count >= THREE_MOVE_LIMIT => Some(kc.square),
            _ => None,
        }
    }

    /// If exactly two kings stand against one king (and nothing else), the two-king side.
    pub fn two_kings_vs_one(&self) -> Option<Side> {
        if self.kings != self.occupied() || self.kings.count() != 3 {
            return None;
        }
        Side::BOTH
            .into_iter()
            .find(|&s| self.pieces(s).count() == 2)
    }

    /// Whether each side has exactly one piece, a king.
    pub fn one_king_each(&self) -> bool {
        self.kings == self.occupied() && self.pieces[0].count() == 1 && self.pieces[1].count() == 1
    }

    /// Lidraughts: the ply limit of the current material, if only kings and
    /// at most three pieces remain.
    pub fn ply_limit(&self) -> Option<u8> {
        if self.two_kings_vs_one().is_some() {
            Some(LIDRAUGHTS_TWO_VS_ONE_PLIES)
        } else if self.one_king_each() {
            Some(LIDRAUGHTS_ONE_VS_ONE_PLIES)
        } else {
            None
        }
    }

    /// Whether the three-move rule applies to `side`: only to a player with
    /// both men and kings (rulebook 2h-II).
    #[inline]
    pub fn three_move_applies(&self, side: Side) -> bool {
        self.men(side).any() && self.kings(side).any()
    }

    /// The three-move rule applies only to a player with both men and kings
    /// (rulebook 2h-II), and follows a king that still stands.
    fn normalise_three_move(&mut self) {
        for side in Side::BOTH {
            let i = side.index();
            let applies = self.three_move_applies(side);
            if let Some(kc) = self.three[i] {
                if !applies || !self.kings(side).contains(kc.square) {
                    self.three[i] = None;
                }
            }
        }
    }

    /// The position after `m`, which must be legal here. Every counter is updated.
    pub fn play(&self, m: &Move) -> Position {
        let us = self.turn;
        let them = us.opponent();
        let (from, to) = (m.from(), m.to());
        let captures = m.captures();
        let mut p = *self;

        p.pieces[us.index()] = p.pieces[us.index()].without(from).with(to);
        if self.kings.contains(from) {
            p.kings = p.kings.without(from).with(to);
        } else if m.promotes() {
            p.kings = p.kings.with(to);
        }
        p.pieces[them.index()] &= !captures;
        p.kings &= !captures;

        // Three-move rule (2h-I, 2h-II): an ordinary king move counts for that
        // king; a capture or any other piece's move releases it.
        p.three[us.index()] = if m.is_king_move() && captures.is_empty() {
            let count = match self.three[us.index()] {
                Some(kc) if kc.square == from => kc.count + 1,
                _ => 1,
            };
            Some(KingCount { square: to, count })
        } else {
            None
        };
        p.turn = them;
        p.normalise_three_move();

        let material_changed = captures.any() || m.promotes();
        match self.rules {
            RuleSet::Official => {
                // Seven-move rule (2i): count the two-king side's moves from the
                // moment two kings against one arises; the count carries into the
                // one-king-each position left when the lone king captures.
                let counted = match self.seven {
                    Some(sm) if sm.strong == us => SevenMove {
                        strong: sm.strong,
                        moves: sm.moves + 1,
                    },
                    Some(sm) => sm,
                    None => SevenMove {
                        strong: us,
                        moves: 0,
                    },
                };
                p.seven = match p.two_kings_vs_one() {
                    Some(strong) if material_changed => Some(SevenMove { strong, moves: 0 }),
                    Some(_) => Some(counted),
                    None if p.one_king_each() && self.seven.is_some() => Some(counted),
                    None => None,
                };
            }
            RuleSet::Lidraughts => {
                p.plies = match p.ply_limit() {
                    Some(_) if material_changed => 0,
                    Some(_) => self.plies + 1,
                    None => 0,
                };
            }
        }
        p
    }

    /// White's pieces `white` and Black's `black` (disjoint), of which
    /// `kings` are kings, White to move and no counters: a placement as the
    /// indexer unranks it, without the checks of [`Position::from_setup`].
    #[inline]
    pub(crate) fn from_pieces_unchecked(
        white: Bitboard,
        black: Bitboard,
        kings: Bitboard,
        rules: RuleSet,
    ) -> Position {
        debug_assert!((white & black).is_empty() && (kings & !(white | black)).is_empty());
        Position {
            pieces: [white, black],
            kings,
            turn: Side::White,
            three: [None, None],
            seven: None,
            plies: 0,
            rules,
        }
    }

    /// All kings, of both sides.
    #[inline]
    pub(crate) fn all_kings(&self) -> Bitboard {
        self.kings
    }

    // Raw changes. The indexer, the retro-move generator and the generator
    // build positions from codes or undo moves, and then set pieces, side to
    // move and counters directly, without the checks of `from_setup`: they
    // keep the invariants themselves (tests of `index(position(i)) == i` and
    // of retro-moves against forward moves check them). Nothing else writes
    // a position's fields.

    /// Put a piece of `side` on the empty square `sq` (a king if `king`).
    #[inline]
    pub(crate) fn put(&mut self, side: Side, sq: Square, king: bool) {
        debug_assert!(
            !self.occupied().contains(sq),
            "square {} taken",
            sq.number()
        );
        self.pieces[side.index()] = self.pieces[side.index()].with(sq);
        if king {
            self.kings = self.kings.with(sq);
        }
    }

    /// Take the piece of `side` off `sq`.
    #[inline]
    pub(crate) fn remove(&mut self, side: Side, sq: Square) {
        self.pieces[side.index()] = self.pieces[side.index()].without(sq);
        self.kings = self.kings.without(sq);
    }

    /// Take every piece off the board (to set up another with [`Position::put`]).
    #[cfg(test)]
    pub(crate) fn clear_pieces(&mut self) {
        self.pieces = [Bitboard::EMPTY; 2];
        self.kings = Bitboard::EMPTY;
    }

    /// Set the side to move, keeping pieces and counters.
    #[inline]
    pub(crate) fn set_turn(&mut self, side: Side) {
        self.turn = side;
    }

    /// Set the three-move state of `side`.
    #[inline]
    pub(crate) fn set_three_move(&mut self, side: Side, state: Option<KingCount>) {
        self.three[side.index()] = state;
    }

    /// Set both sides' three-move states (White's first).
    #[inline]
    pub(crate) fn set_three_moves(&mut self, states: [Option<KingCount>; 2]) {
        self.three = states;
    }

    /// Set the seven-move state and the lidraughts ply count.
    #[inline]
    pub(crate) fn set_draw_counters(&mut self, seven: Option<SevenMove>, plies: u8) {
        self.seven = seven;
        self.plies = plies;
    }

    /// The position, or its colour flip if Black is to move: how states
    /// are indexed.
    #[inline]
    pub(crate) fn white_to_move(&self) -> Position {
        if self.turn == Side::White {
            *self
        } else {
            self.flip()
        }
    }

    /// The same position with colours swapped and the board turned 180
    /// degrees: White to move becomes Black to move with mirrored pieces.
    pub fn flip(&self) -> Position {
        let flip_kc = |kc: Option<KingCount>| {
            kc.map(|k| KingCount {
                square: k.square.flip(),
                count: k.count,
            })
        };
        Position {
            pieces: [self.pieces[1].flip(), self.pieces[0].flip()],
            kings: self.kings.flip(),
            turn: self.turn.opponent(),
            three: [flip_kc(self.three[1]), flip_kc(self.three[0])],
            seven: self.seven.map(|sm| SevenMove {
                strong: sm.strong.opponent(),
                moves: sm.moves,
            }),
            plies: self.plies,
            rules: self.rules,
        }
    }

    /// The same position under another rule set, its counters reset to what
    /// a FEN without counters would give.
    pub fn with_rules(&self, rules: RuleSet) -> Position {
        let mut s = self.to_setup();
        s.seven_move = None;
        s.plies = 0;
        Position::from_setup(&s, rules).expect("a legal position stays legal")
    }
}

impl Bitboard {
    /// The squares numbered `lo..=hi`.
    pub fn from_range(lo: u32, hi: u32) -> Bitboard {
        (lo..=hi).filter_map(Square::new).collect()
    }

    /// The row where `side`'s men are promoted: 1-5 for White, 46-50 for Black.
    #[inline]
    pub const fn promotion_row(side: Side) -> Bitboard {
        match side {
            Side::White => Bitboard::WHITE_PROMOTION,
            Side::Black => Bitboard::BLACK_PROMOTION,
        }
    }
}
