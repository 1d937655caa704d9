//! Moves: origin, destination, captured set and landing path; PDN notation.

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use std::fmt;

/// The longest capture path: the opponent has at most 20 pieces to take.
pub const MAX_PATH: usize = 20;

/// A move: an ordinary move or a complete capture sequence.
///
/// Two captures with the same origin, destination and captured set are the
/// same move (docs/RULES.md, "Board, pieces, notation"); move generation lists such a
/// move once and keeps the first landing path it found.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move {
    from: Square,
    to: Square,
    captures: Bitboard,
    path_len: u8,
    path: [u8; MAX_PATH],
    king: bool,
    promotes: bool,
}

impl Move {
    /// An ordinary (non-capturing) move.
    pub(crate) fn quiet(from: Square, to: Square, king: bool, promotes: bool) -> Move {
        let mut path = [0u8; MAX_PATH];
        path[0] = to.index() as u8;
        Move {
            from,
            to,
            captures: Bitboard::EMPTY,
            path_len: 1,
            path,
            king,
            promotes,
        }
    }

    /// A capture from its path as move generation keeps it: the landing
    /// squares in `path[..len]` (the last one `to`), zero beyond. Copying
    /// the whole array is cheaper than a copy of `len` bytes into a zeroed
    /// one (the copy was half of the time of recording a capture).
    #[inline]
    pub(crate) fn capture(
        from: Square,
        to: Square,
        path: [u8; MAX_PATH],
        len: usize,
        captures: Bitboard,
        king: bool,
        promotes: bool,
    ) -> Move {
        debug_assert!(len > 0 && path[len - 1] as usize == to.index());
        debug_assert!(path[len..].iter().all(|&b| b == 0));
        Move {
            from,
            to,
            captures,
            path_len: len as u8,
            path,
            king,
            promotes,
        }
    }

    /// Origin square.
    #[inline]
    pub fn from(&self) -> Square {
        self.from
    }

    /// Destination square.
    #[inline]
    pub fn to(&self) -> Square {
        self.to
    }

    /// The captured pieces (empty for an ordinary move).
    #[inline]
    pub fn captures(&self) -> Bitboard {
        self.captures
    }

    /// Whether this move captures.
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.captures.any()
    }

    /// Whether the moving piece is a king.
    #[inline]
    pub fn is_king_move(&self) -> bool {
        self.king
    }

    /// Whether a man ends on its far row and becomes a king.
    #[inline]
    pub fn promotes(&self) -> bool {
        self.promotes
    }

    /// Landing squares from the origin to the destination, both included.
    pub fn path(&self) -> impl Iterator<Item = Square> + '_ {
        std::iter::once(self.from).chain(
            self.path[..self.path_len as usize]
                .iter()
                .map(|&i| Square::from_index(i as usize)),
        )
    }

    /// Short PDN: `32-27` or `24x33`.
    pub fn pdn(&self) -> String {
        let sep = if self.is_capture() { 'x' } else { '-' };
        format!("{}{}{}", self.from, sep, self.to)
    }

    /// Long PDN with every landing square: `3x20x50x17`.
    pub fn pdn_long(&self) -> String {
        if !self.is_capture() {
            return self.pdn();
        }
        self.path()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("x")
    }

    /// The notation that tells this move apart from the others in `legal`:
    /// short PDN, or the long form when another legal move has the same
    /// origin and destination.
    pub fn notation_among(&self, legal: &[Move]) -> String {
        let ambiguous = legal
            .iter()
            .any(|m| m.from == self.from && m.to == self.to && m.captures != self.captures);
        if ambiguous {
            self.pdn_long()
        } else {
            self.pdn()
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.pdn_long())?;
        if self.is_capture() {
            write!(f, " {:?}", self.captures)?;
        }
        Ok(())
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pdn())
    }
}

/// A reusable list of moves.
pub type MoveList = Vec<Move>;

/// Why a move text could not be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not of the form `32-27`, `24x33` or `3x20x50x17`.
    #[error("'{text}' is not a move (expected e.g. 32-27, 24x33 or 3x20x50x17)")]
    Malformed {
        /// The text given.
        text: String,
    },
    /// Well-formed, but no legal move matches it.
    #[error("illegal move '{text}'; legal moves: {legal}")]
    Illegal {
        /// The text given.
        text: String,
        /// The legal moves, space separated.
        legal: String,
    },
    /// Several legal moves match the short form.
    #[error("ambiguous move '{text}': it could be {choices}")]
    Ambiguous {
        /// The text given.
        text: String,
        /// The matching moves in long form.
        choices: String,
    },
}

/// Find the legal move meant by `text` (PDN: `32-27`, `24x33`, the long form
/// `3x20x50x17`; `-` and `x` are accepted for either kind).
pub fn parse_move(text: &str, legal: &[Move]) -> Result<Move, MoveError> {
    let t = text.trim();
    let malformed = || MoveError::Malformed {
        text: t.to_string(),
    };
    let parts: Vec<&str> = t.split(['-', 'x', 'X', ':']).collect();
    if parts.len() < 2 {
        return Err(malformed());
    }
    let mut squares = Vec::with_capacity(parts.len());
    for p in &parts {
        let n: u32 = p.parse().map_err(|_| malformed())?;
        squares.push(Square::new(n).ok_or_else(malformed)?);
    }
    let (from, to) = (squares[0], *squares.last().unwrap());
    let matches: Vec<&Move> = legal
        .iter()
        .filter(|m| m.from == from && m.to == to)
        .filter(|m| {
            // With intermediate squares, they must be the landing path.
            squares.len() == 2 || m.path().eq(squares.iter().copied())
        })
        .collect();
    match matches.as_slice() {
        [] => Err(MoveError::Illegal {
            text: t.to_string(),
            legal: legal
                .iter()
                .map(|m| m.notation_among(legal))
                .collect::<Vec<_>>()
                .join(" "),
        }),
        [m] => Ok(**m),
        many => {
            // Equal up to the captured set means the same move; otherwise ambiguous.
            if many.iter().all(|m| m.captures == many[0].captures) {
                Ok(*many[0])
            } else {
                Err(MoveError::Ambiguous {
                    text: t.to_string(),
                    choices: many
                        .iter()
                        .map(|m| m.pdn_long())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
        }
    }
}
