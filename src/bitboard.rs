//! Sets of squares as 64-bit words.
//!
//! The layout is *padded*: square index `i` (number minus one) lives at bit
//! `i + i/10`, leaving a ghost bit after every second row. With that gap, one
//! diagonal step is the same shift on every row (5 or 6 bits), so whole sets
//! of men can be moved or tested for captures with a few shifts and masks.
//! Row steps are 1 bit and column steps 11 bits; a per-direction mask keeps
//! every shift on the board.

use crate::geometry::{Direction, Square};
use std::fmt;

/// A set of squares.
///
/// ```
/// use frisian_tb::{Bitboard, Square};
/// let bb: Bitboard = [1, 5, 46].iter().map(|&n| Square::new(n).unwrap()).collect();
/// assert_eq!(bb.count(), 3);
/// assert!(bb.contains(Square::new(46).unwrap()));
/// assert_eq!(bb.squares().map(|s| s.number()).collect::<Vec<_>>(), vec![1, 5, 46]);
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bitboard(pub(crate) u64);

const fn bit_of(i: usize) -> u32 {
    (i + i / 10) as u32
}

const fn build_square_bits() -> [u64; 50] {
    let mut t = [0u64; 50];
    let mut i = 0;
    while i < 50 {
        t[i] = 1u64 << bit_of(i);
        i += 1;
    }
    t
}

/// The square at each padded bit. Ghost bits give square 1; nothing asks for
/// them. Squares, not numbers, so that a bit scan needs no range check.
const fn build_bit_squares() -> [Square; 64] {
    let mut t = [Square::from_index(0); 64];
    let mut i = 0;
    while i < 50 {
        t[bit_of(i) as usize] = Square::from_index(i);
        i += 1;
    }
    t
}

static SQUARE_BIT: [u64; 50] = build_square_bits();
static BIT_SQUARE: [Square; 64] = build_bit_squares();

/// Bit shift of one step in each direction (positive: toward higher bits).
const SHIFT: [i32; 8] = [-6, -5, 5, 6, -1, 1, -11, 11];

const fn build_step_masks() -> [u64; 8] {
    let mut t = [0u64; 8];
    let mut d = 0;
    while d < 8 {
        let (dr, dc) = Direction::ALL[d].delta();
        let mut i = 0;
        while i < 50 {
            let s = Square::from_index(i);
            if let Some(n) = Square::from_coords(s.row() + dr, s.col() + dc) {
                // The padded layout makes every step in one direction the same shift.
                assert!(bit_of(n.index()) as i32 - bit_of(i) as i32 == SHIFT[d]);
                t[d] |= 1u64 << bit_of(i);
            }
            i += 1;
        }
        d += 1;
    }
    t
}

const fn build_neighbour_bits() -> [[u64; 8]; 50] {
    let mut t = [[0u64; 8]; 50];
    let mut i = 0;
    while i < 50 {
        let s = Square::from_index(i);
        let mut d = 0;
        while d < 8 {
            let (dr, dc) = Direction::ALL[d].delta();
            if let Some(n) = Square::from_coords(s.row() + dr, s.col() + dc) {
                t[i][d] = 1u64 << bit_of(n.index());
            }
            d += 1;
        }
        i += 1;
    }
    t
}

/// `NEIGHBOUR_BIT[s][d]`: the bit of the square one step from `s` in direction `d`, or 0.
pub(crate) static NEIGHBOUR_BIT: [[u64; 8]; 50] = build_neighbour_bits();

const fn build_ray_bits() -> [[u64; 8]; 50] {
    let mut t = [[0u64; 8]; 50];
    let mut i = 0;
    while i < 50 {
        let mut d = 0;
        while d < 8 {
            let (dr, dc) = Direction::ALL[d].delta();
            let s = Square::from_index(i);
            let (mut r, mut c) = (s.row() + dr, s.col() + dc);
            while let Some(n) = Square::from_coords(r, c) {
                t[i][d] |= 1u64 << bit_of(n.index());
                r += dr;
                c += dc;
            }
            d += 1;
        }
        i += 1;
    }
    t
}

/// `RAY_BITS[s][d]`: every square beyond `s` in direction `d`, as padded bits.
pub(crate) static RAY_BITS: [[u64; 8]; 50] = build_ray_bits();

/// Whether direction `d` runs toward higher bits (so the nearest square on a ray is its lowest bit).
#[inline]
pub(crate) const fn increasing(d: usize) -> bool {
    SHIFT[d] > 0
}

/// The square index of a single padded bit position.
#[inline]
pub(crate) fn square_of_bit(bit: u32) -> usize {
    BIT_SQUARE[bit as usize & 63].index()
}

/// `STEP_MASK[d]`: the squares from which one step in direction `d` stays on the board.
static STEP_MASK: [u64; 8] = build_step_masks();

const ALL_BITS: u64 = {
    let mut m = 0;
    let mut i = 0;
    while i < 50 {
        m |= 1u64 << bit_of(i);
        i += 1;
    }
    m
};

const fn range_bits(lo: usize, hi: usize) -> u64 {
    let mut m = 0;
    let mut i = lo - 1;
    while i < hi {
        m |= 1u64 << bit_of(i);
        i += 1;
    }
    m
}

impl Bitboard {
    /// White's promotion row, 1-5.
    pub const WHITE_PROMOTION: Bitboard = Bitboard(range_bits(1, 5));
    /// Black's promotion row, 46-50.
    pub const BLACK_PROMOTION: Bitboard = Bitboard(range_bits(46, 50));

    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 50 squares.
    pub const ALL: Bitboard = Bitboard(ALL_BITS);

    /// The set holding just `sq`.
    #[inline]
    pub fn from_square(sq: Square) -> Bitboard {
        Bitboard(SQUARE_BIT[sq.index()])
    }

    /// The set of squares with the given numbers; numbers outside 1-50 are ignored.
    pub fn from_numbers(numbers: &[u32]) -> Bitboard {
        numbers.iter().filter_map(|&n| Square::new(n)).collect()
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub fn contains(self, sq: Square) -> bool {
        self.0 & SQUARE_BIT[sq.index()] != 0
    }

    /// Number of squares in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set is not empty.
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// The set with `sq` added.
    #[inline]
    pub fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | SQUARE_BIT[sq.index()])
    }

    /// The set with `sq` removed.
    #[inline]
    pub fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !SQUARE_BIT[sq.index()])
    }

    /// The lowest-numbered square, if any.
    #[inline]
    pub fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(BIT_SQUARE[self.0.trailing_zeros() as usize & 63])
        }
    }

    /// Iterator over the squares in ascending order.
    #[inline]
    pub fn squares(self) -> Squares {
        Squares(self.0)
    }

    /// Every square moved one step in `dir`; squares that would leave the board drop out.
    #[inline]
    pub fn shift(self, dir: Direction) -> Bitboard {
        let d = dir as usize;
        let masked = self.0 & STEP_MASK[d];
        let s = SHIFT[d];
        Bitboard(if s > 0 { masked << s } else { masked >> -s })
    }

    /// The set as a plain 50-bit mask: bit `i` for the square with index `i` (number minus one).
    #[inline]
    pub const fn to_plain(self) -> u64 {
        let b = self.0;
        (b & 0x3FF)
            | ((b >> 11) & 0x3FF) << 10
            | ((b >> 22) & 0x3FF) << 20
            | ((b >> 33) & 0x3FF) << 30
            | ((b >> 44) & 0x3FF) << 40
    }

    /// The set from a plain 50-bit mask (see [`Bitboard::to_plain`]); higher bits are ignored.
    #[inline]
    pub const fn from_plain(p: u64) -> Bitboard {
        Bitboard(
            (p & 0x3FF)
                | ((p >> 10) & 0x3FF) << 11
                | ((p >> 20) & 0x3FF) << 22
                | ((p >> 30) & 0x3FF) << 33
                | ((p >> 40) & 0x3FF) << 44,
        )
    }

    /// The board turned 180 degrees (each square `s` to `51 - s`).
    #[inline]
    pub const fn flip(self) -> Bitboard {
        Bitboard::from_plain(self.to_plain().reverse_bits() >> 14)
    }
}

/// Iterator over the squares of a [`Bitboard`], ascending.
pub struct Squares(u64);

impl Iterator for Squares {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(BIT_SQUARE[b as usize & 63])
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

macro_rules! bitop {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl std::ops::$tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl std::ops::$atr for Bitboard {
            #[inline]
            fn $af(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}
bitop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bitop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl std::ops::Not for Bitboard {
    type Output = Bitboard;
    /// Complement within the 50 squares (ghost bits stay clear).
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & ALL_BITS)
    }
}

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.squares()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_agree_with_the_neighbour_table() {
        for s in Square::all() {
            for d in Direction::ALL {
                let shifted = Bitboard::from_square(s).shift(d);
                match s.step(d) {
                    Some(n) => assert_eq!(shifted, Bitboard::from_square(n), "{s:?} {d:?}"),
                    None => assert!(shifted.is_empty(), "{s:?} {d:?}"),
                }
            }
        }
    }

    #[test]
    fn plain_masks_round_trip() {
        for s in Square::all() {
            let b = Bitboard::from_square(s);
            assert_eq!(b.to_plain(), 1u64 << s.index());
            assert_eq!(Bitboard::from_plain(b.to_plain()), b);
        }
    }

    #[test]
    fn flip_turns_every_square() {
        for s in Square::all() {
            assert_eq!(
                Bitboard::from_square(s).flip(),
                Bitboard::from_square(s.flip())
            );
        }
        let all: Bitboard = Square::all().collect();
        assert_eq!(all.flip(), all);
        let some: Bitboard = [1, 10, 11, 21, 40, 50]
            .iter()
            .filter_map(|&n| Square::new(n))
            .collect();
        let turned: Bitboard = some.squares().map(Square::flip).collect();
        assert_eq!(some.flip(), turned);
        assert_eq!(some.flip().flip(), some);
    }

    #[test]
    fn complement_stays_on_the_board() {
        assert_eq!((!Bitboard::EMPTY).count(), 50);
        assert_eq!(Bitboard::ALL.squares().count(), 50);
    }
}
