//! The index: a bijection between the states of one material and `0..size`.
//!
//! A state is a White-to-move position (Black to move is looked up as its colour
//! flip, see [`crate::material`]) with every counter the rules make relevant:
//!
//! ```text
//! index = ((placement * T_stm + t_stm) * T_opp + t_opp) * S + s
//! ```
//!
//! - `placement`: where the pieces stand. Men never stand on their own far row.
//!   Let `a`, `b` be the men of the side to move (White) and of the opponent,
//!   `j` the number of White men on White's back row 46-50 (where Black men may
//!   not stand). Then, in the combinatorial number system, `placement` is
//!   `offset[j] + ((back * C(40, a-j) + middle) * C(45-(a-j), b) + black_men) * K + kings`,
//!   where `back` ranks White's men on 46-50 among C(5, j), `middle` those on
//!   6-45, `black_men` Black's men among the squares 1-45 not holding a White
//!   man, and `kings` ranks White's kings, then Black's, among the squares
//!   left free (`K = C(50-a-b, wk) * C(50-a-b-wk, bk)`).
//! - `t_stm`, `t_opp`: each side's three-move state, where it applies (the side
//!   has men and kings): 0 for none, else `1 + 3*i + (count-1)` for its `i`-th
//!   king in square order; `T = 1 + 3*kings`, or 1 where the rule does not apply.
//! - `s`: the draw counter. Official rules: in two kings against one, the
//!   two-king side's seven-move count 0-7 (`S = 8`); in one king each, 0 = no
//!   restriction, 1 = the side to move may not capture (its eighth move), 2 =
//!   the opponent may not (`S = 3`). Lidraughts: the ply count, 0-14 in two
//!   kings against one and 0-4 in one king each. Elsewhere `S = 1`.
//!
//! Counters appear innermost, so states that differ only in counters, which
//! mostly share a value, sit side by side and compress well.
//!
//! Size: `sum over j of C(5,j) C(40,a-j) C(45-(a-j),b)`, times `K`, `T_stm`, `T_opp` and `S`.

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::material::{Material, MAX_PIECES};
use crate::piece::Side;
use crate::position::Position;
use crate::rules::{KingCount, RuleSet, SevenMove, SEVEN_MOVE_LIMIT};

const fn build_binomials() -> [[u64; 51]; 51] {
    let mut t = [[0u64; 51]; 51];
    let mut n = 0;
    while n <= 50 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
}

static BINOMIAL: [[u64; 51]; 51] = build_binomials();

/// C(n, k), 0 when k > n (the table holds those zeros), for `n, k <= 50`.
#[inline]
fn binom(n: u32, k: u32) -> u64 {
    BINOMIAL[n as usize][k as usize]
}

/// `RANK_BINOMIAL[i][c]` = C(c, i) for `i < 8`, `c < 64`: [`rank`]'s terms,
/// indexed by masked values so that neither index needs a bounds check.
static RANK_BINOMIAL: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut i = 0;
    while i < 8 {
        let mut c = 0;
        while c <= 50 {
            t[i][c] = BINOMIAL[c][i];
            c += 1;
        }
        i += 1;
    }
    t
};

/// Plain masks (bit i = square index i).
const ALL: u64 = (1 << 50) - 1;
const WHITE_BACK: u64 = 0x1F << 45; // 46-50
const WHITE_MIDDLE: u64 = ((1 << 45) - 1) & !0x1F; // 6-45
const BLACK_ALLOWED: u64 = (1 << 45) - 1; // 1-45

/// The plain mask (bit i = square index i) of the colour flip of `set`.
#[inline]
pub(crate) fn flipped_plain(set: Bitboard) -> u64 {
    set.flip().to_plain()
}

/// The bit of square `sq`'s colour flip in a plain mask: the flip turns the
/// board, so square index i becomes 49 - i.
#[inline]
pub(crate) fn flipped_bit(sq: Square) -> u64 {
    1 << (49 - sq.index())
}

/// The placements, within their slice, of the colour flips of Black-to-move
/// positions with given men and Black kings, by White's kings
/// ([`MaterialIndex::flipped_kings`]).
#[derive(Copy, Clone, Debug)]
pub(crate) struct FlippedKings {
    /// Where the flip's opponent kings (White's) may stand: the free squares
    /// but Black's kings, flipped, as a plain mask.
    opp_avail: u64,
    /// The part of the placement that Black's kings give.
    base: u64,
}

impl FlippedKings {
    /// The placement (a number of placements, not of states, from the start
    /// of the slice) when White's kings are `others` (flipped, [`flipped_plain`])
    /// and one more on `to`.
    #[inline]
    pub(crate) fn placement(&self, others: u64, to: Square) -> u64 {
        self.base + rank(others | flipped_bit(to), self.opp_avail)
    }
}

/// Rank of a set of squares, each given by its position among `avail` (combinatorial number system).
#[inline]
fn rank(set: u64, avail: u64) -> u64 {
    debug_assert!(set.count_ones() < 8 && avail < 1 << 50);
    let mut r = 0;
    let mut s = set;
    let mut i = 1;
    while s != 0 {
        let sq = s.trailing_zeros();
        let c = (avail & ((1u64 << sq) - 1)).count_ones();
        r += RANK_BINOMIAL[i & 7][c as usize & 63];
        i += 1;
        s &= s - 1;
    }
    r
}

/// The largest `c` with `C(c, k) <= r`, for `2 <= k <= 4` and `r < C(50, k)`,
/// by table: the binary search it replaces was a third of unranking a
/// placement, which the generator does for every placement it visits.
struct InverseBinomial {
    /// `of[k - 2][r]`.
    of: [Box<[u8]>; 3],
}

static INVERSE_BINOMIAL: std::sync::LazyLock<InverseBinomial> =
    std::sync::LazyLock::new(|| InverseBinomial {
        of: [2, 3, 4].map(|k| {
            let mut t = Vec::with_capacity(binom(50, k) as usize);
            let mut c = k - 1;
            for r in 0..binom(50, k) {
                while binom(c + 1, k) <= r {
                    c += 1;
                }
                t.push(c as u8);
            }
            t.into_boxed_slice()
        }),
    });

/// The largest `c < hi` with `C(c, k) <= r` (`k >= 2`, `r < C(hi, k)`).
#[inline]
fn inverse_binomial(r: u64, k: u32, hi: u32) -> u32 {
    if k <= 4 {
        // Every rank below C(hi, k) has its `c` below `hi`, so the table
        // (built up to 50) answers for every `hi`.
        return INVERSE_BINOMIAL.of[k as usize - 2][r as usize] as u32;
    }
    let (mut lo, mut top) = (k - 1, hi - 1);
    while lo < top {
        let mid = (lo + top).div_ceil(2);
        if binom(mid, k) <= r {
            lo = mid;
        } else {
            top = mid - 1;
        }
    }
    lo
}

/// The set of `k` squares among `avail` with rank `r`.
#[inline]
fn unrank(mut r: u64, k: u32, avail: u64) -> u64 {
    let mut set = 0;
    let mut hi = avail.count_ones();
    for i in (1..=k).rev() {
        debug_assert!(r < binom(hi, i));
        let c = if i == 1 {
            r as u32
        } else {
            inverse_binomial(r, i, hi)
        };
        r -= binom(c, i);
        hi = c;
        set |= 1u64 << nth_bit(avail, c);
    }
    set
}

/// The subset of `avail` that follows `set` (of the same size, not the last
/// one) in the order of [`unrank`], which is increasing as numbers: carry the
/// lowest run of `set`'s squares, skipping squares not in `avail`, into the
/// next free square, and put the rest of the run back at the bottom.
#[inline]
fn next_combination(set: u64, avail: u64) -> u64 {
    debug_assert!(set != 0 && set & !avail == 0);
    let low = set & set.wrapping_neg();
    let carried = (set | !avail).wrapping_add(low) & avail;
    let run = (set & !carried).count_ones();
    debug_assert!(
        carried.count_ones() + run - 1 == set.count_ones(),
        "not the last"
    );
    carried | lowest_bits(avail, run - 1)
}

/// The `n` lowest squares of `avail`.
#[inline]
fn lowest_bits(mut avail: u64, n: u32) -> u64 {
    let mut set = 0;
    for _ in 0..n {
        let b = avail & avail.wrapping_neg();
        set |= b;
        avail ^= b;
    }
    set
}

/// Position of the `n`-th set bit of `mask` (0-based): skip whole bytes by
/// their population count, then step through the last byte.
#[inline]
fn nth_bit(mask: u64, mut n: u32) -> u32 {
    let mut shift = 0;
    loop {
        let c = ((mask >> shift) & 0xFF).count_ones();
        if n < c {
            break;
        }
        n -= c;
        shift += 8;
    }
    let mut byte = (mask >> shift) & 0xFF;
    for _ in 0..n {
        byte &= byte - 1;
    }
    shift + byte.trailing_zeros()
}

/// What the innermost counter `s` means for a material.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Special {
    None,
    /// Official, two kings against one: the count of the side with two kings.
    Seven {
        strong: Side,
    },
    /// Official, one king each: whose capture the seven-move rule forbids.
    SevenCarried,
    /// Lidraughts: ply count.
    Plies,
}

/// The index of one material under one rule set.
#[derive(Clone, Debug)]
pub struct MaterialIndex {
    material: Material,
    rules: RuleSet,
    offsets: [u64; 7],
    kings: u64,
    t_stm: u64,
    t_opp: u64,
    special: Special,
    s_size: u64,
    size: u64,
    /// Each counter combination's parts: the side to move's and the
    /// opponent's three-move codes and the draw counter code, for
    /// [`MaterialIndex::set_counters`] and [`MaterialIndex::set_counters_of`],
    /// which run for every state the generator visits.
    codes: Vec<[u8; 3]>,
}

/// A material no table is made for: more pieces than
/// [`crate::material::MAX_PIECES`], or a side without pieces.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}: no table is made for it (at most {max} pieces, both sides with pieces)", max = crate::material::MAX_PIECES)]
pub struct UnsupportedMaterial(pub Material);

impl MaterialIndex {
    /// The index of `material` under `rules`, if tables are made for it.
    pub fn try_new(
        material: Material,
        rules: RuleSet,
    ) -> Result<MaterialIndex, UnsupportedMaterial> {
        if material.pieces() > crate::material::MAX_PIECES || !material.is_playable() {
            return Err(UnsupportedMaterial(material));
        }
        Ok(MaterialIndex::new(material, rules))
    }

    /// The index of `material` under `rules`.
    ///
    /// Panics if no table is made for `material` (see [`MaterialIndex::try_new`]).
    pub fn new(material: Material, rules: RuleSet) -> MaterialIndex {
        let (a, wk) = (material.stm_men as u32, material.stm_kings as u32);
        let (b, bk) = (material.opp_men as u32, material.opp_kings as u32);
        let free = 50 - a - b;
        let kings = binom(free, wk) * binom(free - wk, bk);
        let mut offsets = [0u64; 7];
        for j in 0..6u32 {
            let here = if j <= a {
                binom(5, j) * binom(40, a - j) * binom(45 - (a - j), b) * kings
            } else {
                0
            };
            offsets[j as usize + 1] = offsets[j as usize] + here;
        }
        let t = |men: u32, k: u32| {
            if men > 0 && k > 0 {
                1 + 3 * k as u64
            } else {
                1
            }
        };
        let kings_only = a == 0 && b == 0;
        let (special, s_size) = match rules {
            RuleSet::Official if kings_only && wk == 2 && bk == 1 => (
                Special::Seven {
                    strong: Side::White,
                },
                8,
            ),
            RuleSet::Official if kings_only && wk == 1 && bk == 2 => (
                Special::Seven {
                    strong: Side::Black,
                },
                8,
            ),
            RuleSet::Official if kings_only && wk == 1 && bk == 1 => (Special::SevenCarried, 3),
            RuleSet::Lidraughts if kings_only && wk + bk == 3 => (Special::Plies, 15),
            RuleSet::Lidraughts if kings_only && wk + bk == 2 => (Special::Plies, 5),
            _ => (Special::None, 1),
        };
        let (t_stm, t_opp) = (t(a, wk), t(b, bk));
        assert!(
            t_stm.max(t_opp) as usize <= THREE_MOVE_CODES,
            "{material}: too many kings"
        );
        let size = offsets[6] * t_stm * t_opp * s_size;
        let codes = (0..t_stm * t_opp * s_size)
            .map(|c| {
                let code = |x: u64| u8::try_from(x).expect("counter codes fit in a byte");
                [
                    code(c / s_size / t_opp),
                    code(c / s_size % t_opp),
                    code(c % s_size),
                ]
            })
            .collect();
        MaterialIndex {
            codes,
            material,
            rules,
            offsets,
            kings,
            t_stm,
            t_opp,
            special,
            s_size,
            size,
        }
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// The rule set.
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// Number of states.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of piece placements (states without counters).
    pub fn placements(&self) -> u64 {
        self.offsets[6]
    }

    /// States per slice: all states with one placement of the men (kings and
    /// counters vary). Slice `k` holds the indexes `k * slice_len .. (k+1) * slice_len`.
    pub fn slice_len(&self) -> u64 {
        self.kings * self.t_stm * self.t_opp * self.s_size
    }

    /// States per placement (the counter combinations).
    pub fn counters_per_placement(&self) -> u64 {
        self.t_stm * self.t_opp * self.s_size
    }

    /// The counter combinations that a move other than an ordinary king move
    /// carries over to its successor: the opponent's three-move state and the
    /// draw counter. Such a move resets the mover's own three-move state, so
    /// states whose counter combinations agree modulo this number have the
    /// same successors by these moves.
    pub(crate) fn carried_counters(&self) -> u64 {
        self.t_opp * self.s_size
    }

    /// The number of draw-counter values (seven-move or ply count) per
    /// placement and three-move states: 1 where no draw counter applies.
    pub(crate) fn draw_counters(&self) -> u64 {
        self.s_size
    }

    /// The index of a position of this material. A position with Black to move
    /// is indexed as its colour flip.
    ///
    /// The position's material must be this index's (see [`Material::of`]).
    pub fn index(&self, pos: &Position) -> u64 {
        let base = if pos.turn() == Side::Black {
            self.placement_base(&pos.flip())
        } else {
            self.placement_base(pos)
        };
        base + self.counters_offset(pos)
    }

    /// The index of a White-to-move position with every counter at 0: the
    /// placement part, shared by all counter states of the same pieces.
    #[inline]
    pub(crate) fn placement_base(&self, pos: &Position) -> u64 {
        debug_assert_eq!(Material::of(pos), self.material);
        let a = self.material.stm_men as u32;
        let b = self.material.opp_men as u32;
        let wm = pos.men(Side::White).to_plain();
        let bm = pos.men(Side::Black).to_plain();
        let wk = pos.kings(Side::White).to_plain();
        let bk = pos.kings(Side::Black).to_plain();

        let back = wm & WHITE_BACK;
        let middle = wm & WHITE_MIDDLE;
        let j = back.count_ones();
        let r_back = rank(back, WHITE_BACK);
        let r_mid = rank(middle, WHITE_MIDDLE);
        let b_avail = BLACK_ALLOWED & !middle;
        let r_bm = rank(bm, b_avail);
        let men = self.offsets[j as usize]
            + ((r_back * binom(40, a - j) + r_mid) * binom(45 - (a - j), b) + r_bm) * self.kings;
        men * self.counters_per_placement() + self.kings_offset(wk, bk, ALL & !(wm | bm))
    }

    /// The kings' part of [`MaterialIndex::placement_base`]: the offset of a
    /// placement within its slice (the men fix the slice, the kings the
    /// placement in it). Plain masks of the White-to-move form: the kings of
    /// the side to move and of the opponent, and the squares the men leave free.
    #[inline]
    fn kings_offset(&self, wk: u64, bk: u64, free: u64) -> u64 {
        let r_wk = rank(wk, free);
        let r_bk = rank(bk, free & !wk);
        (r_wk * self.opp_kings_placements() + r_bk) * self.counters_per_placement()
    }

    /// The placements of the opponent's kings once the men and the side to
    /// move's kings stand: the factor of the side to move's kings' rank.
    #[inline]
    fn opp_kings_placements(&self) -> u64 {
        let m = self.material;
        let free_n = 50 - m.stm_men as u32 - m.opp_men as u32;
        binom(free_n - m.stm_kings as u32, m.opp_kings as u32)
    }

    /// The offset within its slice of the placement of the colour flip of a
    /// Black-to-move position with these men and kings (squares as in that
    /// position): where the generator finds a predecessor by a king move,
    /// whose men are those of a slice it knows, without ranking the men.
    #[inline]
    pub(crate) fn flipped_kings_offset(
        &self,
        men: Bitboard,
        white_kings: Bitboard,
        black_kings: Bitboard,
    ) -> u64 {
        self.flipped_kings_offset_plain(
            flipped_plain(men),
            flipped_plain(white_kings),
            flipped_plain(black_kings),
        )
    }

    /// [`MaterialIndex::flipped_kings_offset`] from the sets already flipped
    /// ([`flipped_plain`]), so that a caller ranking many king moves of one
    /// placement flips the pieces that stay once.
    #[inline]
    pub(crate) fn flipped_kings_offset_plain(
        &self,
        men: u64,
        white_kings: u64,
        black_kings: u64,
    ) -> u64 {
        self.kings_offset(black_kings, white_kings, ALL & !men)
    }

    /// [`MaterialIndex::flipped_kings_offset`] for the positions that White
    /// king moves lead to from one placement, its parts that no such move
    /// changes (the men and Black's kings) ranked once: the generator asks
    /// for every ordinary king move of every placement it initialises.
    #[inline]
    pub(crate) fn flipped_kings(&self, men: Bitboard, black_kings: Bitboard) -> FlippedKings {
        let free = ALL & !flipped_plain(men);
        let stm = flipped_plain(black_kings);
        FlippedKings {
            opp_avail: free & !stm,
            base: rank(stm, free) * self.opp_kings_placements(),
        }
    }

    /// The counter part of a position's index. For Black to move it is that
    /// of the colour flip, computed without flipping: counters are relative to
    /// the side to move, and the flip reverses the order of the squares.
    #[inline]
    pub(crate) fn counters_offset(&self, pos: &Position) -> u64 {
        let stm = pos.turn();
        let opp = stm.opponent();
        self.counters_offset_of(
            self.three_move_code(stm, true, pos.kings(stm), pos.three_move(stm)),
            self.three_move_code(stm, false, pos.kings(opp), pos.three_move(opp)),
            self.draw_counter_code(stm, pos.seven_move(), pos.plies()),
        )
    }

    /// The counter offset from its three parts: the side to move's and the
    /// opponent's three-move codes and the draw counter code.
    #[inline]
    pub(crate) fn counters_offset_of(&self, t_stm: u64, t_opp: u64, s: u64) -> u64 {
        (t_stm * self.t_opp + t_opp) * self.s_size + s
    }

    /// The code of one side's three-move state `state`, its kings being
    /// `kings`, in a position with `stm` to move; `own` tells whether the side
    /// is the side to move. 0 where the rule does not apply.
    #[inline]
    pub(crate) fn three_move_code(
        &self,
        stm: Side,
        own: bool,
        kings: Bitboard,
        state: Option<KingCount>,
    ) -> u64 {
        let size = if own { self.t_stm } else { self.t_opp };
        three_move_code_of(size, stm, kings, state)
    }

    /// How the counter offset of the positions after a move that leaves a
    /// placement (a man move, capture or promotion) depends on the counters
    /// they carry over, for `child`, the position after that move from any
    /// state of the placement. Such a move releases the mover's three-move
    /// state, so only the new side to move's state is carried (see
    /// [`Position::play`]); `None` where this index has a draw counter too,
    /// which the move may start or carry.
    #[inline]
    pub(crate) fn carried_three_move(&self, child: &Position) -> Option<CarriedThreeMove> {
        if self.special != Special::None {
            return None;
        }
        let stm = child.turn();
        debug_assert!(
            child.three_move(stm.opponent()).is_none(),
            "the mover is released"
        );
        let mut none = *child;
        none.set_three_move(stm, None);
        Some(CarriedThreeMove {
            stm,
            kings: child.kings(stm),
            size: self.t_stm,
            scale: self.t_opp * self.s_size,
            fixed: self.counters_offset(&none),
        })
    }

    /// The code of the draw counter (seven-move count or ply count) of a
    /// position with `stm` to move.
    #[inline]
    pub(crate) fn draw_counter_code(&self, stm: Side, seven: Option<SevenMove>, plies: u8) -> u64 {
        match self.special {
            Special::None => 0,
            Special::Seven { .. } => seven.map_or(0, |sm| sm.moves as u64),
            Special::SevenCarried => match seven {
                Some(sm) if sm.moves >= SEVEN_MOVE_LIMIT => {
                    if sm.strong == stm {
                        1
                    } else {
                        2
                    }
                }
                _ => 0,
            },
            Special::Plies => plies as u64,
        }
    }

    /// The White-to-move position with index `idx` (which must be below [`MaterialIndex::size`]).
    pub fn position(&self, idx: u64) -> Position {
        debug_assert!(idx < self.size);
        let per = self.counters_per_placement();
        let mut pos = self.placement_position(idx / per);
        self.set_counters(&mut pos, idx % per);
        pos
    }

    /// The White-to-move position of placement `placement` (below
    /// [`MaterialIndex::placements`]) with every counter at 0: the state with
    /// index `placement * counters_per_placement()`.
    pub(crate) fn placement_position(&self, placement: u64) -> Position {
        self.placement_position_cached(placement, &mut MenCache::default())
    }

    /// [`MaterialIndex::placement_position`], reusing the men of the last
    /// placement looked up through `cache` if they are the same: placements
    /// of one slice share their men, and unranking the men is most of the work.
    #[inline]
    pub(crate) fn placement_position_cached(
        &self,
        placement: u64,
        cache: &mut MenCache,
    ) -> Position {
        let slice = placement / self.kings;
        if cache.slice != Some(slice) {
            let (wm, bm) = self.men_of_slice(slice);
            *cache = MenCache {
                slice: Some(slice),
                wm,
                bm,
                placement: u64::MAX,
                wk: 0,
                bk: 0,
            };
        }
        let (wm, bm) = (cache.wm, cache.bm);
        let wk_n = self.material.stm_kings as u32;
        let bk_n = self.material.opp_kings as u32;
        let free = 50 - self.material.stm_men as u32 - self.material.opp_men as u32;
        let kings = placement % self.kings;
        let k_avail = ALL & !(wm | bm);
        let n_bk = binom(free - wk_n, bk_n);
        // Placements are mostly visited in order: the kings of the next one
        // are the next combination of the last one's, cheaper than unranking
        // (which was 4-5% of the king-heavy pairs' generation).
        let (wk, bk) = if kings != 0 && cache.placement.wrapping_add(1) == placement {
            if !kings.is_multiple_of(n_bk) {
                (cache.wk, next_combination(cache.bk, k_avail & !cache.wk))
            } else {
                let wk = next_combination(cache.wk, k_avail);
                (wk, lowest_bits(k_avail & !wk, bk_n))
            }
        } else {
            let wk = unrank(kings / n_bk, wk_n, k_avail);
            (wk, unrank(kings % n_bk, bk_n, k_avail & !wk))
        };
        debug_assert_eq!(wk, unrank(kings / n_bk, wk_n, k_avail));
        debug_assert_eq!(bk, unrank(kings % n_bk, bk_n, k_avail & !wk));
        (cache.placement, cache.wk, cache.bk) = (placement, wk, bk);
        let white = Bitboard::from_plain(wm | wk);
        let black = Bitboard::from_plain(bm | bk);
        Position::from_pieces_unchecked(white, black, Bitboard::from_plain(wk | bk), self.rules)
    }

    /// The White and Black men (plain masks) of slice `slice` (placements
    /// `slice * K ..` share them).
    fn men_of_slice(&self, slice: u64) -> (u64, u64) {
        let placement = slice * self.kings;
        let a = self.material.stm_men as u32;
        let b = self.material.opp_men as u32;
        let j = (0..6)
            .rev()
            .find(|&j| self.offsets[j] <= placement && self.offsets[j + 1] > placement)
            .unwrap() as u32;
        let mut p = (placement - self.offsets[j as usize]) / self.kings;
        let n_b = binom(45 - (a - j), b);
        let r_bm = p % n_b;
        p /= n_b;
        let n_mid = binom(40, a - j);
        let r_mid = p % n_mid;
        let r_back = p / n_mid;

        let back = unrank(r_back, j, WHITE_BACK);
        let middle = unrank(r_mid, a - j, WHITE_MIDDLE);
        let wm = back | middle;
        let bm = unrank(r_bm, b, BLACK_ALLOWED & !middle);
        (wm, bm)
    }

    /// Set the counters of a White-to-move position of this material to
    /// counter combination `c` (below [`MaterialIndex::counters_per_placement`]),
    /// the inverse of [`MaterialIndex::counters_offset`].
    #[inline]
    pub(crate) fn set_counters(&self, pos: &mut Position, c: u64) {
        let [t_w, t_b, s] = self.codes[c as usize];
        pos.set_three_moves([
            three_move_state(t_w, pos.kings(Side::White).to_plain()),
            three_move_state(t_b, pos.kings(Side::Black).to_plain()),
        ]);
        self.set_draw_counter(pos, s);
    }

    /// The three-move states of every counter combination of the placement
    /// of `pos` (White to move), for [`MaterialIndex::set_counters_of`].
    pub(crate) fn placement_counters(&self, pos: &Position, out: &mut PlacementCounters) {
        for (states, t, side) in [
            (&mut out.white, self.t_stm, Side::White),
            (&mut out.black, self.t_opp, Side::Black),
        ] {
            // Code 0 is none, then each king in square order with counts 1-3
            // (as [`three_move_state`] decodes them), written king by king:
            // once per placement the generator visits.
            let mut kings = pos.kings(side).to_plain();
            states[0] = None;
            let mut code = 1;
            while code < t as usize {
                let square = Square::from_index(kings.trailing_zeros() as usize);
                kings &= kings - 1;
                for count in 1..=3 {
                    states[code] = Some(KingCount { square, count });
                    code += 1;
                }
            }
            debug_assert!((0..t as u8)
                .all(|c| states[c as usize] == three_move_state(c, pos.kings(side).to_plain())));
        }
    }

    /// [`MaterialIndex::set_counters`] for a position of the placement that
    /// `counters` was made for ([`MaterialIndex::placement_counters`]): the
    /// three-move states are looked up instead of found among the kings, for
    /// every state the generator visits (the KKMvKM pair: 2% less CPU time).
    #[inline]
    pub(crate) fn set_counters_of(&self, counters: &PlacementCounters, pos: &mut Position, c: u64) {
        let [t_w, t_b, s] = self.codes[c as usize];
        pos.set_three_moves([counters.white[t_w as usize], counters.black[t_b as usize]]);
        self.set_draw_counter(pos, s);
        #[cfg(debug_assertions)]
        {
            let mut slow = *pos;
            self.set_counters(&mut slow, c);
            debug_assert_eq!(slow, *pos, "placement counters of another placement");
        }
    }

    /// Set the draw counter of a White-to-move position from its code `s`.
    #[inline]
    fn set_draw_counter(&self, pos: &mut Position, s: u8) {
        let seven = match self.special {
            Special::Seven { strong } => Some(SevenMove { strong, moves: s }),
            Special::SevenCarried if s == 1 => Some(SevenMove {
                strong: Side::White,
                moves: SEVEN_MOVE_LIMIT,
            }),
            Special::SevenCarried if s == 2 => Some(SevenMove {
                strong: Side::Black,
                moves: SEVEN_MOVE_LIMIT,
            }),
            _ => None,
        };
        let plies = if self.special == Special::Plies { s } else { 0 };
        pos.set_draw_counters(seven, plies);
    }
}

/// The counter offsets of the positions after one move that leaves a
/// placement, by the three-move state they carry over
/// ([`MaterialIndex::carried_three_move`]): the generator reads such a
/// successor for every counter combination of the placement, and this
/// spares playing the move and coding all its counters again each time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct CarriedThreeMove {
    /// The successor's side to move, and its kings.
    stm: Side,
    kings: Bitboard,
    /// Its index's three-move codes for the side to move, and the offset
    /// between consecutive ones.
    size: u64,
    scale: u64,
    /// The offset with the side to move's three-move state "none".
    fixed: u64,
}

impl CarriedThreeMove {
    /// The successor's counter offset when the new side to move's
    /// three-move state before the move was `state`. A state whose king was
    /// just captured is dropped, as [`Position::play`] drops it.
    #[inline(always)]
    pub(crate) fn offset(&self, state: Option<KingCount>) -> u64 {
        let state = state.filter(|kc| self.kings.contains(kc.square));
        self.fixed + self.scale * three_move_code_of(self.size, self.stm, self.kings, state)
    }
}

/// [`MaterialIndex::three_move_code`] for an index with `size` codes for the side.
#[inline]
fn three_move_code_of(size: u64, stm: Side, kings: Bitboard, state: Option<KingCount>) -> u64 {
    match state {
        Some(kc) if size > 1 => {
            let kings = kings.to_plain();
            let bit = 1u64 << kc.square.index();
            // The king's rank among its side's kings in the White-to-move form.
            let before = if stm == Side::White {
                kings & (bit - 1)
            } else {
                kings & !(bit | (bit - 1))
            };
            1 + 3 * before.count_ones() as u64 + (kc.count as u64 - 1)
        }
        _ => 0,
    }
}

/// The three-move state with code `t` (0 for none, else `1 + 3*i + (count-1)`
/// for the `i`-th king in square order) of a side whose kings are `kings`.
#[inline]
fn three_move_state(t: u8, kings: u64) -> Option<KingCount> {
    if t == 0 {
        return None;
    }
    // The (t-1)/3-th king: drop the lower ones (a side has few kings).
    let mut kings = kings;
    for _ in 0..(t - 1) / 3 {
        kings &= kings - 1;
    }
    Some(KingCount {
        square: Square::from_index(kings.trailing_zeros() as usize),
        count: (t - 1) % 3 + 1,
    })
}

/// Each side's three-move state for each of its codes, in one placement: what
/// [`MaterialIndex::set_counters_of`] looks up for the placement's states.
#[derive(Clone, Debug, Default)]
pub(crate) struct PlacementCounters {
    white: [Option<KingCount>; THREE_MOVE_CODES],
    black: [Option<KingCount>; THREE_MOVE_CODES],
}

/// The most three-move codes a side can have: none, or one of its kings
/// (fewer than [`MAX_PIECES`], since it has men too) with a count of 1-3.
/// Arrays of this length, not vectors: filling vectors was 2.4% of the
/// KKMvKK pair's samples.
const THREE_MOVE_CODES: usize = 1 + 3 * (MAX_PIECES as usize - 2);

/// The men of the last slice unranked by
/// [`MaterialIndex::placement_position_cached`].
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct MenCache {
    slice: Option<u64>,
    wm: u64,
    bm: u64,
    /// The last placement looked up (`u64::MAX` if none in this slice) and
    /// its kings: the next placement's kings follow from them.
    placement: u64,
    wk: u64,
    bk: u64,
}

/// A direct-mapped cache from a placement to a table number and the index of
/// its states with every counter at 0 ([`MaterialIndex::placement_base`]).
///
/// States that differ only in counters sit side by side and share the
/// placements of their successors, so ranking each placement once and reusing
/// it for the following states saves most of the ranking work. Keys are the
/// pieces and the side to move, which determine the material.
pub(crate) struct PlacementCache {
    entries: Vec<([u64; 3], u32, u64)>,
}

impl PlacementCache {
    const SLOTS: usize = 1024;
    /// No placement has White and Black pieces on the same squares.
    const EMPTY: [u64; 3] = [u64::MAX; 3];

    pub(crate) fn new() -> PlacementCache {
        PlacementCache {
            entries: vec![(Self::EMPTY, 0, 0); Self::SLOTS],
        }
    }

    /// The table number and placement base of `pos` (of its White-to-move
    /// form), computed by `compute` when not cached.
    #[inline]
    pub(crate) fn get(
        &mut self,
        pos: &Position,
        compute: impl FnOnce() -> (u32, u64),
    ) -> (u32, u64) {
        // Bitboards use bits 0-54: bit 63 can tell the side to move.
        let key = [
            pos.pieces(Side::White).0,
            pos.pieces(Side::Black).0,
            pos.kings(Side::White).0 | pos.kings(Side::Black).0 | ((pos.turn() as u64) << 63),
        ];
        let h = key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ key[1].wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ key[2].wrapping_mul(0x1656_67B1_9E37_79F9);
        let slot = (h >> 54) as usize % Self::SLOTS;
        let e = &mut self.entries[slot];
        if e.0 != key {
            let (t, b) = compute();
            *e = (key, t, b);
        }
        (e.1, e.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters looked up in a placement's table are those
    /// `set_counters` finds among the kings, for every counter combination
    /// of sampled placements of materials with each kind of counter.
    #[test]
    fn placement_counters_set_what_set_counters_sets() {
        let mut checked = 0;
        let mut pc = PlacementCounters::default();
        for rules in [RuleSet::Official, RuleSet::Lidraughts] {
            for name in [
                "KKMvKM", "KMvKKM", "KKKMvK", "KMMvK", "KKvK", "KvKK", "KvK", "MMvM",
            ] {
                let ix = MaterialIndex::new(name.parse().unwrap(), rules);
                for p in (0..ix.placements()).step_by((ix.placements() / 3000).max(1) as usize) {
                    let base = ix.placement_position(p);
                    ix.placement_counters(&base, &mut pc);
                    for c in 0..ix.counters_per_placement() {
                        let (mut fast, mut slow) = (base, base);
                        ix.set_counters_of(&pc, &mut fast, c);
                        ix.set_counters(&mut slow, c);
                        assert_eq!(
                            fast, slow,
                            "{name} {rules:?} placement {p}, combination {c}"
                        );
                        assert_eq!(ix.index(&fast), p * ix.counters_per_placement() + c);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100_000, "only {checked} states checked");
    }

    /// The counter offsets of the successors of moves that leave a placement
    /// (man moves, captures, promotions), found from the carried three-move
    /// state alone, equal those of the successor positions, for every
    /// counter combination of sampled placements, with either side to move.
    #[test]
    fn carried_three_move_offsets_match_the_successors() {
        let (mut checked, mut declined) = (0, 0);
        let mut pc = PlacementCounters::default();
        for rules in [RuleSet::Official, RuleSet::Lidraughts] {
            for name in [
                "KKMvKM", "KMvKKM", "KMvKK", "KKMvK", "KvKKM", "KKvKM", "MMvKM", "KMvK",
            ] {
                let ix = MaterialIndex::new(name.parse().unwrap(), rules);
                for p in (0..ix.placements()).step_by((ix.placements() / 2000).max(1) as usize) {
                    let base = ix.placement_position(p);
                    ix.placement_counters(&base, &mut pc);
                    for flip in [false, true] {
                        let at_zero = if flip { base.flip() } else { base };
                        for m in at_zero.legal_moves().iter() {
                            if m.is_king_move() && !m.is_capture() {
                                continue; // stays in the placement's slice
                            }
                            let child = at_zero.play(m);
                            if child.pieces(child.turn()).is_empty() {
                                continue;
                            }
                            let w = if child.turn() == Side::Black {
                                child.flip()
                            } else {
                                child
                            };
                            let succ = MaterialIndex::new(Material::of(&w), rules);
                            let Some(carried) = succ.carried_three_move(&child) else {
                                declined += 1;
                                continue;
                            };
                            for c in 0..ix.counters_per_placement() {
                                let mut pos = base;
                                ix.set_counters_of(&pc, &mut pos, c);
                                if flip {
                                    pos = pos.flip();
                                }
                                if !pos.legal_moves().iter().any(|x| x == m) {
                                    continue; // the counters forbid it here
                                }
                                let them = pos.turn().opponent();
                                assert_eq!(
                                    carried.offset(pos.three_move(them)),
                                    succ.counters_offset(&pos.play(m)),
                                    "{name} {rules:?} placement {p} combination {c} flip {flip} move {m:?}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 100_000, "only {checked} successors checked");
        assert!(
            declined > 100,
            "only {declined} successors with a draw counter"
        );
    }

    /// Reusing the men of the last slice gives the same positions as
    /// unranking afresh, whether the next placement is in the same slice,
    /// the next one, or far away.
    #[test]
    fn placement_positions_through_the_men_cache_are_unchanged() {
        for name in ["MMMvKM", "KMvMMM", "KKMvKM", "MMvMM", "KKvK", "MMMMvK"] {
            let ix = MaterialIndex::new(name.parse().unwrap(), RuleSet::Official);
            let mut cache = MenCache::default();
            let n = ix.placements();
            let mut p = 0u64;
            for step in 0..30_000u64 {
                let fresh = ix.placement_position(p);
                assert_eq!(
                    ix.placement_position_cached(p, &mut cache),
                    fresh,
                    "{name} {p}"
                );
                assert_eq!(ix.placement_base(&fresh), p * ix.counters_per_placement());
                // Mostly small steps (same slice), sometimes jumps.
                p = if step % 7 == 0 {
                    p.wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407)
                        % n
                } else {
                    (p + 1 + step % 3) % n
                };
            }
        }
    }

    /// Stepping to the next combination visits every subset of the
    /// available squares in the order of their ranks.
    #[test]
    fn next_combination_follows_the_ranks() {
        for (avail, k) in [
            (ALL, 1),
            (ALL, 2),
            (ALL & !0b1011 & !(1 << 30), 3),
            (ALL & !(0x5555 << 8), 4),
            (0b1111, 4),
        ] {
            let n = binom(avail.count_ones(), k);
            let mut set = lowest_bits(avail, k);
            for r in 0..n {
                assert_eq!(set, unrank(r, k, avail), "{avail:b} {k} {r}");
                if r + 1 < n {
                    set = next_combination(set, avail);
                }
            }
        }
    }

    /// Placements looked up one after the other (the generator's order),
    /// across slices, give the positions unranked afresh, in materials with
    /// no kings, kings on one side only, and up to four kings on a side.
    #[test]
    fn consecutive_placements_through_the_cache_are_unchanged() {
        for name in [
            "KKMvKM", "KMvKKM", "MMvMM", "KKKKvK", "KvKKKK", "MMMvKK", "KKMvMM",
        ] {
            let ix = MaterialIndex::new(name.parse().unwrap(), RuleSet::Official);
            let mut cache = MenCache::default();
            let n = ix.placements();
            for start in [0, n / 3, n - 20_000.min(n)] {
                for p in start..(start + 20_000).min(n) {
                    assert_eq!(
                        ix.placement_position_cached(p, &mut cache),
                        ix.placement_position(p),
                        "{name} {p}"
                    );
                }
            }
        }
    }

    /// The generator places a predecessor by a king move (Black to move, the
    /// same men) in the partner slice by ranking its kings alone: that offset
    /// is the flip's placement base within its slice, and the partner slice
    /// is the one its men give.
    #[test]
    fn kings_offset_of_a_flip_is_its_place_in_the_partner_slice() {
        for name in ["KKMvKM", "KMvKK", "KKvKM", "MMvKK", "KKKvK", "KvKKM"] {
            let m: Material = name.parse().unwrap();
            let ix = MaterialIndex::new(m, RuleSet::Official);
            let flip_ix = MaterialIndex::new(m.flip(), RuleSet::Official);
            let mut p = 0u64;
            for _ in 0..20_000 {
                p = p
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mut pos = ix.placement_position(p % ix.placements());
                pos.set_turn(Side::Black);
                let flipped = flip_ix.placement_base(&pos.flip());
                let men = pos.men(Side::White) | pos.men(Side::Black);
                let offset = flip_ix.flipped_kings_offset(
                    men,
                    pos.kings(Side::White),
                    pos.kings(Side::Black),
                );
                assert_eq!(offset, flipped % flip_ix.slice_len(), "{name}");
                // Moving a king keeps the slice.
                let slice = flipped / flip_ix.slice_len();
                let mut other = pos;
                if let Some(k) = pos.kings(Side::Black).squares().next() {
                    if let Some(to) = (!pos.occupied()).squares().next() {
                        other.remove(Side::Black, k);
                        other.put(Side::Black, to, true);
                        let moved = flip_ix.placement_base(&other.flip());
                        assert_eq!(moved / flip_ix.slice_len(), slice, "{name}");
                    }
                }
            }
        }
    }

    /// The shortcuts for many king moves of one placement (the fixed pieces
    /// flipped and ranked once) give the same places as ranking each
    /// successor whole: White's king moves ([`FlippedKings`], the
    /// generator's initialisation) and Black's ([`MaterialIndex::flipped_kings_offset_plain`],
    /// its propagation).
    #[test]
    fn kings_ranked_once_for_many_moves_match_whole_ranking() {
        use crate::movegen::for_each_free_diagonal_square;
        for name in ["KKMvKM", "KMvKK", "KKKvKK", "KKvKKM", "KvKKK"] {
            let m: Material = name.parse().unwrap();
            let ix = MaterialIndex::new(m, RuleSet::Official);
            let flip_ix = MaterialIndex::new(m.flip(), RuleSet::Official);
            let cpp = flip_ix.counters_per_placement();
            let mut p = 0u64;
            let mut moves = 0;
            for _ in 0..5_000 {
                p = p
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pos = ix.placement_position(p % ix.placements());
                let men = pos.men(Side::White) | pos.men(Side::Black);
                let (white, black) = (pos.kings(Side::White), pos.kings(Side::Black));
                let empty = !pos.occupied();
                let fixed = flip_ix.flipped_kings(men, black);
                for king in white.squares() {
                    let others = flipped_plain(white.without(king));
                    for_each_free_diagonal_square(king, empty, |to| {
                        let kings = white.without(king).with(to);
                        assert_eq!(
                            fixed.placement(others, to) * cpp,
                            flip_ix.flipped_kings_offset(men, kings, black),
                            "{name}"
                        );
                        moves += 1;
                    });
                }
                let (men_f, white_f, black_f) = (
                    flipped_plain(men),
                    flipped_plain(white),
                    flipped_plain(black),
                );
                for king in black.squares() {
                    for_each_free_diagonal_square(king, empty, |to| {
                        let kings = black.without(king).with(to);
                        assert_eq!(
                            flip_ix.flipped_kings_offset_plain(
                                men_f,
                                white_f,
                                black_f & !flipped_bit(king) | flipped_bit(to)
                            ),
                            flip_ix.flipped_kings_offset(men, white, kings),
                            "{name}"
                        );
                        moves += 1;
                    });
                }
            }
            assert!(moves > 10_000, "{name}: {moves} moves");
        }
    }

    #[test]
    fn binomials() {
        assert_eq!(binom(50, 2), 1225);
        assert_eq!(binom(45, 4), 148_995);
        assert_eq!(binom(3, 5), 0);
    }

    #[test]
    fn inverse_binomials_by_table_and_by_search_agree() {
        for k in 2..=4 {
            for hi in k..=50 {
                for r in 0..binom(hi, k) {
                    let c = inverse_binomial(r, k, hi);
                    assert!(
                        c < hi && binom(c, k) <= r && r < binom(c + 1, k),
                        "k {k} r {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn rank_and_unrank_are_inverse() {
        // Up to four by table, five by binary search (on fewer squares).
        for (k, avail) in [
            (1, WHITE_MIDDLE),
            (2, ALL),
            (3, WHITE_MIDDLE),
            (4, WHITE_MIDDLE),
            (5, WHITE_MIDDLE & 0xFFFFF << 10),
        ] {
            for r in 0..binom(avail.count_ones(), k) {
                let set = unrank(r, k, avail);
                assert_eq!(set.count_ones(), k);
                assert_eq!(set & !avail, 0);
                assert_eq!(rank(set, avail), r);
            }
        }
    }
}
