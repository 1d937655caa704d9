//! Legal move generation.
//!
//! Captures are compulsory (rulebook 2d-II). When any capture exists, the legal
//! moves are the complete capture sequences of the highest value (2d-V, 2g-II),
//! made by a king if a king has one of that value (2g-I), each listed once per
//! (origin, destination, captured set). Otherwise they are the ordinary moves,
//! less those of a king that the three-move rule blocks (2h-I).

use crate::bitboard::{increasing, square_of_bit, Bitboard, NEIGHBOUR_BIT, RAY_BITS};
use crate::geometry::{Direction, Square, NEIGHBOUR, NONE, RAYS};
use crate::moves::{Move, MoveList, MAX_PATH};
use crate::piece::Side;
use crate::position::Position;
use crate::rules::RuleSet;

/// The diagonal directions in which a man of `side` moves.
#[inline]
const fn forward(side: Side) -> [Direction; 2] {
    match side {
        Side::White => [Direction::UpLeft, Direction::UpRight],
        Side::Black => [Direction::DownLeft, Direction::DownRight],
    }
}

impl Position {
    /// All legal moves.
    ///
    /// ```
    /// use frisian_tb::{Position, RuleSet};
    /// let start = Position::initial(RuleSet::Official);
    /// assert_eq!(start.legal_moves().len(), 9);
    /// ```
    pub fn legal_moves(&self) -> MoveList {
        let mut out = MoveList::new();
        self.generate_moves(&mut out);
        out
    }

    /// All legal moves into `out` (cleared first); reuse `out` to avoid allocating.
    pub fn generate_moves(&self, out: &mut MoveList) {
        out.clear();
        if self.has_capture() {
            self.generate_captures(out);
        } else {
            self.generate_quiet(out);
        }
    }

    /// The number of legal moves, counting ordinary moves without building them.
    pub fn count_moves(&self) -> usize {
        if self.has_capture() {
            let mut out = MoveList::new();
            self.generate_captures(&mut out);
            return out.len();
        }
        self.count_quiet()
    }

    /// [`Position::count_moves`] with a caller-provided buffer for captures.
    pub fn count_moves_with(&self, buf: &mut MoveList) -> usize {
        if self.has_capture() {
            buf.clear();
            self.generate_captures(buf);
            return buf.len();
        }
        self.count_quiet()
    }

    /// Whether the side to move has a capture (and so must capture).
    pub fn has_capture(&self) -> bool {
        let us = self.turn();
        let enemy = self.pieces(us.opponent());
        let empty = !self.occupied();
        let men = self.men(us);
        for d in Direction::ALL {
            if ((men.shift(d) & enemy).shift(d) & empty).any() {
                return true;
            }
        }
        self.kings(us)
            .squares()
            .any(|k| king_can_capture(k, enemy, empty))
    }

    /// For the side to move: `None` if it has no capture, else the squares
    /// on which one more piece of its own would leave it without any. Such a
    /// piece can only take captures away, by blocking a line or a landing
    /// square, so a square qualifies when it blocks every first jump: the
    /// landing square of a man's jump; for a king's, a square between the
    /// king and the piece it jumps or the square right behind that piece.
    pub(crate) fn capture_blockers(&self) -> Option<Bitboard> {
        let us = self.turn();
        let enemy = self.pieces(us.opponent());
        let empty = !self.occupied();
        let men = self.men(us);
        let (mut any, mut block) = (false, Bitboard::ALL);
        for d in Direction::ALL {
            // A man's jump in direction `d` lands on one square, and distinct
            // men land on distinct squares: two jumps leave no common blocker.
            let landings = (men.shift(d) & enemy).shift(d) & empty;
            if landings.any() {
                any = true;
                block &= if landings.count() == 1 {
                    landings
                } else {
                    Bitboard::EMPTY
                };
            }
        }
        let occupied = !empty.0;
        for k in self.kings(us).squares() {
            for (d, &ray) in RAY_BITS[k.index()].iter().enumerate() {
                let blockers = ray & occupied;
                if blockers == 0 {
                    continue;
                }
                let b = nearest_bit(blockers, d);
                if enemy.0 & (1u64 << b) == 0 {
                    continue;
                }
                let jumped = square_of_bit(b);
                let land = NEIGHBOUR_BIT[jumped][d] & empty.0;
                if land == 0 {
                    continue;
                }
                any = true;
                let path = ray & !(RAY_BITS[jumped][d] | 1u64 << b);
                block &= Bitboard(path | land);
            }
        }
        any.then_some(block)
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        let us = self.turn();
        let empty = !self.occupied();
        let men = self.men(us);
        if forward(us).iter().any(|&d| (men.shift(d) & empty).any()) {
            return true;
        }
        let blocked = self.blocked_king();
        let free_king = self
            .kings(us)
            .squares()
            .filter(|&k| Some(k) != blocked)
            .any(|k| {
                Direction::DIAGONALS.iter().any(|&d| {
                    let n = NEIGHBOUR[k.index()][d as usize];
                    n != NONE && empty.contains(Square::from_index(n as usize))
                })
            });
        free_king || self.has_capture()
    }

    fn generate_quiet(&self, out: &mut MoveList) {
        self.generate_man_moves(out);
        self.for_each_quiet_king_move(|k, to| out.push(Move::quiet(k, to, true, false)));
    }

    /// The ordinary moves of the side to move's men, added to `out`.
    pub(crate) fn generate_man_moves(&self, out: &mut MoveList) {
        let us = self.turn();
        let empty = !self.occupied();
        let promo = Bitboard::promotion_row(us);
        for m in self.men(us).squares() {
            for d in forward(us) {
                let n = NEIGHBOUR[m.index()][d as usize];
                if n != NONE {
                    let to = Square::from_index(n as usize);
                    if empty.contains(to) {
                        out.push(Move::quiet(m, to, false, promo.contains(to)));
                    }
                }
            }
        }
    }

    /// Call `f(from, to)` for every ordinary king move of the side to move,
    /// leaving out the king the three-move rule blocks.
    #[inline]
    fn for_each_quiet_king_move(&self, mut f: impl FnMut(Square, Square)) {
        let empty = !self.occupied();
        let blocked = self.blocked_king();
        for k in self
            .kings(self.turn())
            .squares()
            .filter(|&k| Some(k) != blocked)
        {
            for_each_free_diagonal_square(k, empty, |to| f(k, to));
        }
    }

    /// The ordinary moves of the side to move's kings into `out` (which must be
    /// large enough); returns how many. Used where no allocation is wanted.
    pub(crate) fn quiet_king_moves(&self, out: &mut [Move]) -> usize {
        let mut n = 0;
        self.for_each_quiet_king_move(|k, to| {
            out[n] = Move::quiet(k, to, true, false);
            n += 1;
        });
        n
    }

    fn count_quiet(&self) -> usize {
        let us = self.turn();
        let empty = !self.occupied();
        let men = self.men(us);
        let [f1, f2] = forward(us);
        let mut n = ((men.shift(f1) & empty).count() + (men.shift(f2) & empty).count()) as usize;
        let blocked = self.blocked_king();
        for k in self.kings(us).squares() {
            if Some(k) != blocked {
                n += king_quiet_move_count(k, empty) as usize;
            }
        }
        n
    }

    /// The legal captures into `out` (which must be empty); nothing if there is none.
    pub(crate) fn generate_captures(&self, out: &mut MoveList) {
        let us = self.turn();
        let them = us.opponent();
        let mut gen = CaptureGen {
            rules: self.rules(),
            enemy: self.pieces(them),
            enemy_kings: self.kings(them),
            empty: Bitboard::EMPTY,
            from: Square::from_index(0),
            king: false,
            promotion: Bitboard::promotion_row(us),
            landings: [0; MAX_PATH],
            depth: 0,
            best: 0,
            out,
        };
        let occupied = self.occupied();
        // Kings first: they set the bar that man captures must beat.
        let enemy = self.pieces(them);
        for k in self
            .kings(us)
            .squares()
            .filter(|&k| king_can_capture(k, enemy, !occupied))
        {
            gen.from = k;
            gen.king = true;
            gen.empty = !occupied.without(k);
            gen.king_search(k, Bitboard::EMPTY);
        }
        // Only men that can make a first jump start a search.
        let empty = !occupied;
        let mut starters = Bitboard::EMPTY;
        for d in Direction::ALL {
            let back = d.opposite();
            starters |= (gen.enemy & empty.shift(back)).shift(back);
        }
        for m in (self.men(us) & starters).squares() {
            gen.from = m;
            gen.king = false;
            gen.empty = !occupied.without(m);
            gen.man_search(m, Bitboard::EMPTY);
        }
    }
}

/// Call `f` with every square a king on `sq` reaches along its diagonals over
/// empty squares: the squares of an ordinary king move from `sq` (or, read
/// backwards, the squares an ordinary king move to `sq` can come from).
#[inline]
pub(crate) fn for_each_free_diagonal_square(
    sq: Square,
    empty: Bitboard,
    mut f: impl FnMut(Square),
) {
    for d in Direction::DIAGONALS {
        let ray = &RAYS[sq.index()][d as usize];
        for &s in &ray.squares[..ray.len as usize] {
            let to = Square::from_index(s as usize);
            if !empty.contains(to) {
                break;
            }
            f(to);
        }
    }
}

/// The squares [`for_each_free_diagonal_square`] gives, as a set: where a
/// callee tests each square against other sets, one intersection replaces a
/// test per square, whose outcome a branch predictor cannot learn.
#[inline]
pub(crate) fn free_diagonal_squares(sq: Square, empty: Bitboard) -> Bitboard {
    let occupied = !empty.0;
    let mut squares = 0;
    for d in Direction::DIAGONALS {
        squares |= open_ray(sq.index(), d as usize, occupied);
    }
    Bitboard(squares)
}

/// The squares of the ray from square index `sq` in direction `d` up to, not
/// including, the nearest occupied one (bits of `occupied`).
#[inline]
fn open_ray(sq: usize, d: usize, occupied: u64) -> u64 {
    let ray = RAY_BITS[sq][d];
    let blockers = ray & occupied;
    if blockers == 0 {
        ray
    } else {
        let b = nearest_bit(blockers, d);
        ray & !(RAY_BITS[square_of_bit(b)][d] | 1u64 << b)
    }
}

/// The bit of the square nearest the ray's origin among `bits` (non-empty),
/// all on one ray in direction `d`.
#[inline]
fn nearest_bit(bits: u64, d: usize) -> u32 {
    if increasing(d) {
        bits.trailing_zeros()
    } else {
        63 - bits.leading_zeros()
    }
}

/// How many ordinary moves a king on `k` has: the empty squares along its
/// diagonals up to the first occupied one ([`free_diagonal_squares`]).
#[inline]
pub(crate) fn king_quiet_move_count(k: Square, empty: Bitboard) -> u32 {
    free_diagonal_squares(k, empty).count()
}

/// Whether a king on `k` can make a first jump: along each line, the first
/// occupied square holds an enemy piece and the square behind it is empty.
#[inline]
pub(crate) fn king_can_capture(k: Square, enemy: Bitboard, empty: Bitboard) -> bool {
    let occupied = !empty;
    for d in 0..8 {
        let ray = RAY_BITS[k.index()][d];
        // Most lines hold no enemy piece at all (a handful of pieces on the board).
        if ray & enemy.0 == 0 {
            continue;
        }
        let blockers = ray & occupied.0;
        let bit = if increasing(d) {
            blockers.trailing_zeros()
        } else {
            63 - blockers.leading_zeros()
        };
        if enemy.0 & (1u64 << bit) != 0 && NEIGHBOUR_BIT[square_of_bit(bit)][d] & empty.0 != 0 {
            return true;
        }
    }
    false
}

/// Every square from which a king could make a first jump, given the enemy
/// pieces and the empty squares ([`king_can_capture`] for all squares at
/// once): for each enemy piece with an empty square behind it in some
/// direction, the squares before it on the opposite ray, up to the first
/// occupied one. The answer for a square does not depend on whether that
/// square itself counts as empty.
pub(crate) fn king_capture_origins(enemy: Bitboard, empty: Bitboard) -> Bitboard {
    let occupied = !empty;
    let mut origins = 0u64;
    for e in enemy.squares() {
        for d in Direction::ALL {
            if NEIGHBOUR_BIT[e.index()][d as usize] & empty.0 == 0 {
                continue; // nowhere to land
            }
            origins |= open_ray(e.index(), d.opposite() as usize, occupied.0);
        }
    }
    Bitboard(origins)
}

/// Depth-first search over capture sequences of one piece.
struct CaptureGen<'a> {
    rules: RuleSet,
    enemy: Bitboard,
    enemy_kings: Bitboard,
    /// Empty squares; the moving piece's origin counts as empty (docs/RULES.md, "Capturing").
    empty: Bitboard,
    from: Square,
    king: bool,
    promotion: Bitboard,
    landings: [u8; MAX_PATH],
    depth: usize,
    /// Priority of the best sequences so far: value, then king over man.
    best: u32,
    out: &'a mut MoveList,
}

impl CaptureGen<'_> {
    fn man_search(&mut self, cur: Square, captured: Bitboard) {
        let jumpable = (self.enemy & !captured).0;
        let empty = self.empty.0;
        let mut extended = false;
        for d in 0..8 {
            if NEIGHBOUR_BIT[cur.index()][d] & jumpable == 0 {
                continue;
            }
            let over = NEIGHBOUR[cur.index()][d] as usize;
            if NEIGHBOUR_BIT[over][d] & empty == 0 {
                continue;
            }
            let land = NEIGHBOUR[over][d];
            extended = true;
            self.landings[self.depth] = land;
            self.depth += 1;
            self.man_search(
                Square::from_index(land as usize),
                captured.with(Square::from_index(over)),
            );
            self.depth -= 1;
            // Kept zero past the path, so that `record` copies it whole.
            self.landings[self.depth] = 0;
        }
        if !extended && self.depth > 0 {
            self.record(cur, captured);
        }
    }

    fn king_search(&mut self, cur: Square, captured: Bitboard) {
        let jumpable = (self.enemy & !captured).0;
        // Captured pieces stay on the board until the sequence ends: they
        // block, and cannot be jumped again.
        let occupied = !self.empty.0;
        let mut extended = false;
        // Each line is scanned with bit operations: the nearest occupied
        // square must be a jumpable piece, and the landing squares are the
        // empty ones behind it up to the next occupied square (2e-II).
        for (d, &ray) in RAY_BITS[cur.index()].iter().enumerate() {
            // No piece to jump on this line: nothing to look for.
            if ray & jumpable == 0 {
                continue;
            }
            let blockers = ray & occupied;
            let over = nearest_bit(blockers, d);
            if jumpable & (1u64 << over) == 0 {
                continue;
            }
            let over = square_of_bit(over);
            let mut landings = open_ray(over, d, occupied);
            let captured = captured.with(Square::from_index(over));
            // Nearest landing first, as the moves were always listed.
            while landings != 0 {
                let b = nearest_bit(landings, d);
                landings &= !(1u64 << b);
                let land = square_of_bit(b);
                extended = true;
                self.landings[self.depth] = land as u8;
                self.depth += 1;
                self.king_search(Square::from_index(land), captured);
                self.depth -= 1;
                self.landings[self.depth] = 0;
            }
        }
        if !extended && self.depth > 0 {
            self.record(cur, captured);
        }
    }

    fn record(&mut self, to: Square, captured: Bitboard) {
        let kings = (captured & self.enemy_kings).count();
        let men = captured.count() - kings;
        let key = self.rules.capture_value(men, kings) * 2 + self.king as u32;
        if key < self.best {
            return;
        }
        if key > self.best {
            self.out.clear();
            self.best = key;
        }
        let from = self.from;
        if self
            .out
            .iter()
            .any(|m| m.from() == from && m.to() == to && m.captures() == captured)
        {
            return;
        }
        let promotes = !self.king && self.promotion.contains(to);
        self.out.push(Move::capture(
            from,
            to,
            self.landings,
            self.depth,
            captured,
            self.king,
            promotes,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (xorshift64) from `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Counting a king's ordinary moves by bit scans gives the number of
    /// squares the square-by-square walk visits, and the set of them its squares.
    #[test]
    fn king_quiet_move_counts_agree_with_the_walk() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut total = 0;
        for round in 0..2000 {
            let mut occupied = Bitboard::EMPTY;
            for _ in 0..round % 15 {
                occupied = occupied.with(Square::from_index((next() % 50) as usize));
            }
            let empty = !occupied;
            for k in 0..50 {
                let k = Square::from_index(k);
                let mut walked = 0;
                let mut set = Bitboard::EMPTY;
                for_each_free_diagonal_square(k, empty, |to| {
                    walked += 1;
                    set = set.with(to);
                });
                assert_eq!(king_quiet_move_count(k, empty), walked, "{}", k.number());
                assert_eq!(free_diagonal_squares(k, empty), set, "{}", k.number());
                total += walked;
            }
        }
        assert!(total > 100_000);
    }

    /// A king put back on an empty square leaves its side without a capture
    /// exactly when that square blocks every capture of the other pieces
    /// ([`Position::capture_blockers`] with the king lifted) and the king
    /// cannot capture from it: what the retro-move generator relies on.
    #[test]
    fn capture_blockers_agree_with_the_capture_test() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
        let (mut checked, mut blocked, mut paths) = (0, 0, 0);
        for round in 0..3000 {
            let mut pos = Position::initial(RuleSet::Official);
            pos.clear_pieces();
            for i in 0..2 + round % 9 {
                let sq = Square::from_index((next() % 50) as usize);
                // The first piece is a white king, so that there is one to move back.
                let side = if i == 0 || next().is_multiple_of(2) {
                    Side::White
                } else {
                    Side::Black
                };
                if pos.occupied().contains(sq) {
                    continue;
                }
                let king = i == 0
                    || next().is_multiple_of(3)
                    || Bitboard::promotion_row(side).contains(sq);
                pos.put(side, sq, king);
            }
            assert_eq!(pos.capture_blockers().is_some(), pos.has_capture());
            // One more man on `s`, where it cannot jump itself: the others'
            // captures are gone exactly on the blocking squares.
            let allowed = pos.capture_blockers().unwrap_or(Bitboard::ALL);
            for s in (!pos.occupied()).squares() {
                let mut p = pos;
                p.put(Side::White, s, false);
                let one = Bitboard::EMPTY.with(s);
                let man_jumps = Direction::ALL.iter().any(|&d| {
                    ((one.shift(d) & p.pieces(Side::Black)).shift(d) & !p.occupied()).any()
                });
                if !man_jumps {
                    assert_eq!(
                        !p.has_capture(),
                        allowed.contains(s),
                        "{} man {}",
                        crate::fen::write(&p),
                        s.number()
                    );
                    paths += usize::from(pos.has_capture() && allowed.contains(s));
                }
            }
            for to in pos.kings(Side::White).squares() {
                let mut without = pos;
                without.remove(Side::White, to);
                let allowed = without.capture_blockers().unwrap_or(Bitboard::ALL);
                let empty = !without.occupied();
                let origins = king_capture_origins(pos.pieces(Side::Black), empty);
                for from in empty.squares() {
                    let mut p = without;
                    p.put(Side::White, from, true);
                    let free = allowed.contains(from) && !origins.contains(from);
                    assert_eq!(
                        !p.has_capture(),
                        free,
                        "{} king {}",
                        crate::fen::write(&p),
                        from.number()
                    );
                    checked += 1;
                    blocked += usize::from(free && without.has_capture());
                }
            }
        }
        // Blocking must actually occur in the sample, or the test shows little.
        assert!(
            checked > 50_000 && blocked > 100 && paths > 100,
            "{checked} {blocked} {paths}"
        );
    }

    /// `king_capture_origins` answers `king_can_capture` for every square at
    /// once, on boards of every density (a fixed pseudo-random sequence).
    #[test]
    fn capture_origins_agree_with_the_one_square_test() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut origins_seen = 0;
        for round in 0..4000 {
            let (mut enemy, mut own) = (Bitboard::EMPTY, Bitboard::EMPTY);
            let pieces = 1 + round % 12;
            for _ in 0..pieces {
                let sq = Square::from_index((next() % 50) as usize);
                if next().is_multiple_of(2) {
                    enemy = enemy.with(sq);
                } else {
                    own = own.with(sq);
                }
            }
            own &= !enemy;
            let empty = !(enemy | own);
            let origins = king_capture_origins(enemy, empty);
            for i in 0..50 {
                let s = Square::from_index(i);
                if enemy.contains(s) || own.contains(s) {
                    continue;
                }
                let one = king_can_capture(s, enemy, empty.without(s));
                assert_eq!(one, king_can_capture(s, enemy, empty));
                assert_eq!(origins.contains(s), one, "square {}", s.number());
                origins_seen += usize::from(one);
            }
        }
        assert!(origins_seen > 1000);
    }
}
