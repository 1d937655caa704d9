//! Board geometry: squares 1-50, the eight capture directions, and the
//! neighbour and ray tables that move generation walks.
//!
//! Squares are numbered 1-50 row by row from the top left (docs/RULES.md, "Board
//! pieces, notation"). Row `r = (s-1) / 5` (row 0 holds 1-5, Black's back row);
//! column `c = 2*((s-1) % 5) + 1` on even rows and `2*((s-1) % 5)` on odd rows.
//!
//! Every table here is computed at compile time by `const fn`, so there is no
//! lazy initialisation and no build script.

use std::fmt;

/// A playable square, 1-50 in FMJD numbering. Internally `number - 1`.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// Number of playable squares.
    pub const COUNT: usize = 50;

    /// The square with FMJD number `n` (1-50), or `None`.
    ///
    /// ```
    /// use frisian_tb::Square;
    /// assert_eq!(Square::new(46).unwrap().number(), 46);
    /// assert!(Square::new(0).is_none() && Square::new(51).is_none());
    /// ```
    pub const fn new(n: u32) -> Option<Square> {
        if n >= 1 && n <= 50 {
            Some(Square((n - 1) as u8))
        } else {
            None
        }
    }

    /// The square with index `i` (0-49, i.e. number minus one).
    ///
    /// # Panics
    /// If `i >= 50`.
    pub const fn from_index(i: usize) -> Square {
        assert!(i < 50, "square index out of range");
        Square(i as u8)
    }

    /// FMJD number, 1-50.
    #[inline]
    pub const fn number(self) -> u32 {
        self.0 as u32 + 1
    }

    /// Index 0-49 (number minus one), for arrays indexed by square.
    #[inline]
    pub const fn index(self) -> usize {
        // SAFETY: every constructor of `Square` checks or computes an index
        // below 50, and nothing else writes the field. Telling the compiler
        // lets it drop the bounds checks of the square-indexed tables that
        // move generation and the generator read in their inner loops.
        unsafe { std::hint::assert_unchecked(self.0 < 50) };
        self.0 as usize
    }

    /// Row 0-9 from the top (row 0 holds 1-5, row 9 holds 46-50).
    #[inline]
    pub const fn row(self) -> i32 {
        self.0 as i32 / 5
    }

    /// Column 0-9 from the left.
    #[inline]
    pub const fn col(self) -> i32 {
        let r = self.row();
        2 * (self.0 as i32 % 5) + if r % 2 == 0 { 1 } else { 0 }
    }

    /// The square at (row, col), if that is a playable square on the board.
    pub const fn from_coords(row: i32, col: i32) -> Option<Square> {
        if row < 0 || row > 9 || col < 0 || col > 9 || (row + col) % 2 == 0 {
            return None;
        }
        Some(Square((row * 5 + col / 2) as u8))
    }

    /// The square seen from the other side of the board (the board turned 180
    /// degrees): `s` becomes `51 - s`.
    #[inline]
    pub const fn flip(self) -> Square {
        Square(49 - self.0)
    }

    /// The neighbouring square one step in `dir`, if on the board.
    #[inline]
    pub fn step(self, dir: Direction) -> Option<Square> {
        let n = NEIGHBOUR[self.index()][dir as usize];
        if n == NONE {
            None
        } else {
            Some(Square(n))
        }
    }

    /// Iterator over all 50 squares in numerical order.
    pub fn all() -> impl Iterator<Item = Square> + Clone {
        (0..50u8).map(Square)
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// One of the eight lines along which pieces capture. Only the four diagonal
/// ones are used for ordinary (non-capturing) moves.
///
/// "Up" is toward row 0 (squares 1-5), the direction White's men move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Diagonal toward row 0 and column 0.
    UpLeft = 0,
    /// Diagonal toward row 0 and column 9.
    UpRight = 1,
    /// Diagonal toward row 9 and column 0.
    DownLeft = 2,
    /// Diagonal toward row 9 and column 9.
    DownRight = 3,
    /// Along the row toward column 0 (the next playable square is two columns away).
    Left = 4,
    /// Along the row toward column 9.
    Right = 5,
    /// Along the column toward row 0 (the next playable square is two rows away).
    Up = 6,
    /// Along the column toward row 9.
    Down = 7,
}

impl Direction {
    /// All eight capture directions.
    pub const ALL: [Direction; 8] = [
        Direction::UpLeft,
        Direction::UpRight,
        Direction::DownLeft,
        Direction::DownRight,
        Direction::Left,
        Direction::Right,
        Direction::Up,
        Direction::Down,
    ];

    /// The four diagonals, the only directions of ordinary moves.
    pub const DIAGONALS: [Direction; 4] = [
        Direction::UpLeft,
        Direction::UpRight,
        Direction::DownLeft,
        Direction::DownRight,
    ];

    /// (row, column) change of one step.
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Direction::UpLeft => (-1, -1),
            Direction::UpRight => (-1, 1),
            Direction::DownLeft => (1, -1),
            Direction::DownRight => (1, 1),
            Direction::Left => (0, -2),
            Direction::Right => (0, 2),
            Direction::Up => (-2, 0),
            Direction::Down => (2, 0),
        }
    }

    /// The opposite direction.
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::UpLeft => Direction::DownRight,
            Direction::UpRight => Direction::DownLeft,
            Direction::DownLeft => Direction::UpRight,
            Direction::DownRight => Direction::UpLeft,
            Direction::Left => Direction::Right,
            Direction::Right => Direction::Left,
            Direction::Up => Direction::Down,
            Direction::Down => Direction::Up,
        }
    }

    /// True for the four diagonal directions.
    pub const fn is_diagonal(self) -> bool {
        (self as u8) < 4
    }
}

/// Marker for "no square" in the compact tables.
pub(crate) const NONE: u8 = u8::MAX;

const fn build_neighbours() -> [[u8; 8]; 50] {
    let mut t = [[NONE; 8]; 50];
    let mut s = 0;
    while s < 50 {
        let sq = Square(s as u8);
        let mut d = 0;
        while d < 8 {
            let (dr, dc) = Direction::ALL[d].delta();
            if let Some(n) = Square::from_coords(sq.row() + dr, sq.col() + dc) {
                t[s][d] = n.0;
            }
            d += 1;
        }
        s += 1;
    }
    t
}

/// `NEIGHBOUR[s][d]`: index of the square one step from `s` in direction `d`, or `NONE`.
pub(crate) static NEIGHBOUR: [[u8; 8]; 50] = build_neighbours();

/// A ray: the squares from a square (exclusive) to the edge of the board in one
/// direction, nearest first. At most 9 squares (a diagonal of the 10x10 board).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Ray {
    pub(crate) len: u8,
    pub(crate) squares: [u8; 9],
}

const fn build_rays() -> [[Ray; 8]; 50] {
    let mut t = [[Ray {
        len: 0,
        squares: [NONE; 9],
    }; 8]; 50];
    let nb = build_neighbours();
    let mut s = 0;
    while s < 50 {
        let mut d = 0;
        while d < 8 {
            let mut cur = s;
            let mut len = 0;
            while nb[cur][d] != NONE {
                cur = nb[cur][d] as usize;
                t[s][d].squares[len] = cur as u8;
                len += 1;
            }
            t[s][d].len = len as u8;
            d += 1;
        }
        s += 1;
    }
    t
}

/// `RAYS[s][d]`: the squares beyond `s` in direction `d`, nearest first.
pub(crate) static RAYS: [[Ray; 8]; 50] = build_rays();

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(n: u32) -> Square {
        Square::new(n).unwrap()
    }

    #[test]
    fn numbering_matches_the_rules_text() {
        // 46 is the bottom-left corner, 5 the top-right corner.
        assert_eq!((sq(46).row(), sq(46).col()), (9, 0));
        assert_eq!((sq(5).row(), sq(5).col()), (0, 9));
        assert_eq!((sq(1).row(), sq(1).col()), (0, 1));
        assert_eq!((sq(6).row(), sq(6).col()), (1, 0));
        for s in Square::all() {
            assert_eq!(Square::from_coords(s.row(), s.col()), Some(s));
        }
    }

    #[test]
    fn long_diagonal_is_a_diagonal() {
        // The long diagonal 46-41-37-32-28-23-19-14-10-5.
        for w in [46, 41, 37, 32, 28, 23, 19, 14, 10, 5].windows(2) {
            assert_eq!(sq(w[0]).step(Direction::UpRight), Some(sq(w[1])));
        }
    }

    #[test]
    fn orthogonal_steps_skip_one_line() {
        // Along a row the next playable square is the next number; along a column, ten on.
        assert_eq!(sq(34).step(Direction::Left), Some(sq(33)));
        assert_eq!(sq(43).step(Direction::Up), Some(sq(33)));
        assert_eq!(sq(5).step(Direction::Right), None);
        assert_eq!(sq(6).step(Direction::Left), None);
        assert_eq!(sq(46).step(Direction::Down), None);
        assert_eq!(sq(3).step(Direction::Up), None);
    }

    #[test]
    fn flip_turns_the_board() {
        for s in Square::all() {
            assert_eq!(s.flip().row(), 9 - s.row());
            assert_eq!(s.flip().col(), 9 - s.col());
        }
    }
}
