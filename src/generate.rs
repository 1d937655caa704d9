//! Retrograde generation of win/draw/loss and distance-to-win tables.
//!
//! Materials are solved in build order ([`Material::all`]), a material
//! together with its colour flip (an ordinary move of the side to move leads
//! from `A` to `A.flip()`).
//!
//! **Slices.** A pair is solved one *slice* at a time: all states with one
//! placement of the men (kings and counters vary), together with its partner
//! slice (the same men, the other side to move). Ordinary king moves stay
//! between a slice and its partner; man moves lead to slices whose men are
//! further advanced, captures and promotions to tables built earlier. Slices
//! are solved most advanced first (`advancement` falls by one with every man
//! move), so everything outside the slice pair being solved is final. Finished
//! values go to a memory-mapped work file (2 bytes per state); working memory is
//! one batch of slices. The work files and a marker of finished batches let an
//! interrupted run resume.
//!
//! Within a batch:
//! 1. **Initialise** every state by forward move generation, in two passes.
//!    Finished games get their adjudicated value; moves that leave the batch
//!    are read from finished values. The first pass solves the placements
//!    where the side to move must capture: all their moves leave the batch.
//!    The second initialises the others: an ordinary king move into a capture
//!    placement is read like a move that leaves the batch, the rest are only
//!    counted. Capture states (most of the states of king-heavy materials)
//!    thus never enter propagation.
//! 2. **Propagate** in order of distance, with one bucket per ply count, run by
//!    run (a run is whole slice pairs, about two million states where slices
//!    are that small, so that its cells stay in the processor's cache): when a
//!    state is finally lost in `d` plies, every predecessor by a king move
//!    (found by retro-moves, [`crate::retro`]) can win in `d + 1`; when a state
//!    is finally won, each predecessor has one fewer move left that does not
//!    lose, and when none is left it is lost, in one more ply than its longest
//!    reply. Buckets are processed in increasing order, so the first win found
//!    for a state is its shortest and the last reply to be refuted its longest.
//! 3. Whatever is still open is a **draw**: neither side can force a result.
//!
//! Where the side to move has men and two or more kings, a *relay node* per
//! placement, king and carried counters stands for "a fresh move of this
//! king" (see `Fresh`): every state whose three-move state leaves that king
//! free shares it, so a finalised successor updates the node once instead of
//! each of those states.
//!
//! States are solved in parallel with rayon; per-state working values are atomics.

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::index::{MaterialIndex, MenCache, PlacementCache};
use crate::material::Material;
use crate::movegen::{for_each_free_diagonal_square, king_quiet_move_count};
use crate::moves::{Move, MoveList};
use crate::piece::Side;
use crate::position::Position;
use crate::retro::{for_each_king_retro_move, moved, Undoing};
use crate::rules::{KingCount, RuleSet, Wdl, THREE_MOVE_LIMIT};
use crate::table::{self, Metric, TableData, TableError, TableFile};
use memmap2::{MmapMut, UncheckedAdvice};
use rayon::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// A solved value: result for the side to move and distance to win in plies
/// (0 for draws and finished games).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    /// Result for the side to move.
    pub wdl: Wdl,
    /// Plies to the end of the game with best play; 0 for draws.
    pub dtw: u16,
}

impl Value {
    /// Packed in 16 bits (WDL + 1 in the top two, DTW below), as
    /// [`load_values`] returns them; 0 is "not yet known".
    #[inline]
    pub const fn pack(self) -> u16 {
        ((self.wdl as u16 + 1) << 14) | self.dtw
    }
    /// The value packed by [`Value::pack`]; `None` for 0 ("not yet known").
    #[inline]
    pub fn unpack(v: u16) -> Option<Value> {
        let wdl = match v >> 14 {
            1 => Wdl::Loss,
            2 => Wdl::Draw,
            3 => Wdl::Win,
            _ => return None,
        };
        Some(Value {
            wdl,
            dtw: v & 0x3FFF,
        })
    }
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A table could not be read or written.
    #[error(transparent)]
    Table(#[from] TableError),
    /// A table needed for captures or promotions is not there.
    #[error("table {0} is needed first (generate it, or run generate without --material)")]
    Missing(String),
    /// Solving a pair would need more memory than allowed.
    #[error("solving {material} needs about {needed_gib:.2} GiB of memory, more than the {limit_gib:.2} GiB allowed (--max-memory); lower the need by freeing memory, or raise --max-memory if the estimate is too cautious")]
    TooBig {
        /// The first material of the pair.
        material: Material,
        /// Estimated need.
        needed_gib: f64,
        /// The limit.
        limit_gib: f64,
    },
    /// The working memory of a batch could not be mapped.
    #[error(
        "cannot map {bytes} bytes of working memory: {source} (lower --max-memory or free memory)"
    )]
    Memory {
        /// The size asked for.
        bytes: usize,
        /// The error.
        source: std::io::Error,
    },
    /// The output directory could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The decoded values of finished tables, for reading the results of
/// captures and promotions (and, in [`crate::verify`], of every successor).
/// There are only a handful, so a linear search beats hashing.
pub struct Solved {
    tables: Vec<(Material, MaterialIndex, ValueArray)>,
}

impl Solved {
    /// Decode the tables of `mats` (each once) from `dir`.
    pub(crate) fn load(
        dir: &Path,
        rules: RuleSet,
        mats: &[Material],
    ) -> Result<Solved, GenerateError> {
        let mut tables: Vec<(Material, MaterialIndex, ValueArray)> = Vec::new();
        for &m in mats {
            if !tables.iter().any(|t| t.0 == m) {
                let states = table_states(dir, m, rules)?;
                let mut values = ValueArray::for_decoding(states as usize).map_err(|source| {
                    GenerateError::Table(TableError::Io {
                        path: dir.join(table::file_name(m, rules, Metric::Wdl)),
                        source,
                    })
                })?;
                decode_values_into(dir, m, rules, values.as_mut_slice())?;
                tables.push((m, MaterialIndex::new(m, rules), values));
            }
        }
        Ok(Solved { tables })
    }

    /// The stored value of a position that is not over. The placement part of
    /// its index is cached; the counter part is computed without flipping.
    #[inline]
    pub(crate) fn stored(&self, pos: &Position, cache: &mut PlacementCache) -> Value {
        let (t, i) = self.locate(pos, cache);
        self.at(t, i)
    }

    /// Where [`Solved::stored`] reads `pos`'s value: table number and index.
    #[inline]
    fn locate(&self, pos: &Position, cache: &mut PlacementCache) -> (u32, u64) {
        let (t, base) = cache.get(pos, || {
            let w = white_to_move(pos);
            let m = Material::of(&w);
            let t = self
                .tables
                .iter()
                .position(|x| x.0 == m)
                .expect("the table of every successor is loaded");
            (t as u32, self.tables[t].1.placement_base(&w))
        });
        (t, base + self.tables[t as usize].1.counters_offset(pos))
    }

    /// The value at index `i` of table number `t` (from [`Solved::locate`]).
    #[inline]
    fn at(&self, t: u32, i: u64) -> Value {
        Value::unpack(self.tables[t as usize].2[i as usize])
            .expect("finished tables hold only known values")
    }

    /// Ask the processor to fetch the value [`Solved::at`] will read.
    #[inline]
    fn prefetch(&self, t: u32, i: u64) {
        if let Some(v) = self.tables[t as usize].2.get(i as usize) {
            prefetch(v);
        }
    }
}

/// Ask the processor to bring the cache line of `r` into the cache, without
/// waiting for it.
#[inline]
fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// The position, or its colour flip if Black is to move (how states are indexed).
#[inline]
fn white_to_move(pos: &Position) -> Position {
    if pos.turn() == Side::White {
        *pos
    } else {
        pos.flip()
    }
}

/// Packed values of states `start..start + len`, read on demand.
type ValueSource<'a> = &'a (dyn Fn(u64, usize) -> Vec<u16> + Sync);

/// Materials one move from `m` into another material (capture or promotion),
/// with the opponent to move; those where the opponent has no pieces are left out.
pub fn successor_materials(m: Material) -> Vec<Material> {
    let mut out = Vec::new();
    for men in 0..=m.opp_men {
        for kings in 0..=m.opp_kings {
            for promo in 0..=u8::from(m.stm_men > 0) {
                let captured = men < m.opp_men || kings < m.opp_kings;
                if !captured && promo == 0 {
                    continue;
                }
                let child = Material::new(men, kings, m.stm_men - promo, m.stm_kings + promo);
                if child.is_playable() && !out.contains(&child) {
                    out.push(child);
                }
            }
        }
    }
    out
}

/// Per-state working values of a batch of slices, each state's packed into
/// one atomic word ([`Cell`]): every update of a state (finalising it,
/// counting down its replies, recording a shorter win) is one
/// compare-and-swap of that word, and touches one cache line. Relaxed
/// ordering suffices: no state's update depends on another's within a phase,
/// and the phases are separated by rayon's joins, which synchronise.
struct Work {
    cells: AtomicWords,
}

/// Anonymous memory of at least `bytes` bytes, advised to use huge pages,
/// for the arrays the generator reads at random (working cells, decoded
/// tables); zeroed if `zeroed`, else holding whatever it last held. Dropped,
/// it goes back to a pool for the next array of at most its size.
///
/// Why a pool: a virtual machine whose balloon device reports freed memory to
/// its host (as on the machine of BENCHMARKS.md) gets memory mapped afresh
/// faulted in through the host, slowly; zeroing fresh pages was 12% of the
/// samples of the start of the KMMvKM pair, which decodes a 5.8 GB table.
/// Reused memory is already there. To keep the process from growing, when no
/// free mapping is large enough the pool releases all of them before mapping
/// anew, and a reused mapping gives back what lies beyond the request (the
/// first version kept it, and the five-piece run peaked at 10.6 GiB instead
/// of 7.3; with this it peaked at 7.7 GiB, a rise not yet explained).
fn huge_anon(bytes: usize, zeroed: bool) -> std::io::Result<HugeMap> {
    let bytes = bytes.max(1);
    let reused = {
        let mut pool = MAP_POOL.lock().unwrap_or_else(|e| e.into_inner());
        let best = (0..pool.len())
            .filter(|&i| pool[i].len() >= bytes)
            .min_by_key(|&i| pool[i].len());
        match best {
            Some(i) => Some(pool.swap_remove(i)),
            None => {
                pool.clear();
                None
            }
        }
    };
    let map = match reused {
        Some(mut map) => {
            // Give back what lies beyond the request, so that a small array in
            // a large mapping does not keep the rest resident.
            let keep = bytes.next_multiple_of(HUGE_PAGE).min(map.len());
            if keep < map.len() {
                // SAFETY: nothing borrows the mapping; the tail's contents
                // are not needed (anonymous pages read back as zeros).
                let _ = unsafe {
                    map.unchecked_advise_range(UncheckedAdvice::DontNeed, keep, map.len() - keep)
                };
            }
            if zeroed {
                map[..bytes].par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
            }
            map
        }
        None => {
            let map = MmapMut::map_anon(bytes)?;
            // Only a hint: where huge pages are disabled the memory is ordinary.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            map
        }
    };
    Ok(HugeMap(Some(map)))
}

/// The size of a huge page (x86-64, and the usual one elsewhere).
const HUGE_PAGE: usize = 2 << 20;

/// Free mappings of [`huge_anon`], for reuse.
static MAP_POOL: std::sync::Mutex<Vec<MmapMut>> = std::sync::Mutex::new(Vec::new());

/// Release the free mappings of the pool: called once a pair has taken what
/// it reuses (its decoded tables and its first batch's working memory), so
/// that the rest does not stay resident beside it.
fn trim_pool() {
    MAP_POOL.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A mapping from [`huge_anon`]; back to the pool when dropped.
struct HugeMap(Option<MmapMut>);

impl HugeMap {
    fn as_ptr(&self) -> *const u8 {
        self.0.as_ref().expect("held until dropped").as_ptr()
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut().expect("held until dropped").as_mut_ptr()
    }
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.len())
    }
}

impl Drop for HugeMap {
    fn drop(&mut self) {
        if let Some(map) = self.0.take() {
            MAP_POOL.lock().unwrap_or_else(|e| e.into_inner()).push(map);
        }
    }
}

/// A zeroed array of atomic words in anonymous memory advised to use huge
/// pages. The propagation touches cells all over a batch (hundreds of
/// megabytes): with 4 KiB pages nearly every access also missed the TLB.
struct AtomicWords {
    map: HugeMap,
    len: usize,
}

impl AtomicWords {
    /// `len` words, zeroed if `zeroed` (else holding anything).
    fn new(len: usize, zeroed: bool) -> Result<AtomicWords, GenerateError> {
        let bytes = 8 * len;
        let map =
            huge_anon(bytes, zeroed).map_err(|source| GenerateError::Memory { bytes, source })?;
        Ok(AtomicWords { map, len })
    }

    /// `len` words: those of `spare` if it has room (holding whatever it
    /// held), else others; if `zeroed`, those beyond the spare's are zeroed
    /// (a mapping from the pool may be longer than the part that was zeroed).
    fn reuse(
        spare: Option<AtomicWords>,
        len: usize,
        zeroed: bool,
    ) -> Result<AtomicWords, GenerateError> {
        match spare {
            Some(mut w) if w.map.len() >= 8 * len => {
                let old = w.len;
                w.len = len;
                if zeroed && len > old {
                    w[old..].par_iter().for_each(|x| x.store(0, Relaxed));
                }
                Ok(w)
            }
            spare => {
                drop(spare); // to the pool, before asking it for a larger one
                AtomicWords::new(len, zeroed)
            }
        }
    }
}

/// Working memory kept from one batch of a pair to the next. Mapping it
/// afresh for every batch had the kernel zero (and fault in) hundreds of
/// megabytes each time (with this, the KKKvKM pair's system time fell from
/// 9.9 to 4.0 s).
#[derive(Default)]
struct Spare {
    cells: Option<AtomicWords>,
    relays: Option<AtomicWords>,
    /// All zero whenever it is put back (see [`put_in_state_order`]).
    order: Option<AtomicWords>,
}

impl std::ops::Deref for AtomicWords {
    type Target = [AtomicU64];
    #[inline]
    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so aligned for u64) and at
        // least 8 * len bytes long; any bits are a valid `AtomicU64`, which
        // has the layout of `u64`, and every access goes through the atomics.
        // The borrow of `self` keeps the mapping alive.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), self.len) }
    }
}

/// One state's working values: bits 0-15 its final value ([`Value::pack`], 0
/// while open), 16-23 the replies left that do not lose, 24-39 the shortest
/// win found so far ([`NO_WIN`] if none), 40-55 the longest reply that loses
/// (the opponent's longest win) so far.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Cell(u64);

impl Cell {
    const OPEN: Cell = Cell((NO_WIN as u64) << 24);

    #[inline]
    fn result(self) -> u16 {
        self.0 as u16
    }
    #[inline]
    fn remaining(self) -> u8 {
        (self.0 >> 16) as u8
    }
    #[inline]
    fn best_win(self) -> u16 {
        (self.0 >> 24) as u16
    }
    #[inline]
    fn longest_reply(self) -> u16 {
        (self.0 >> 40) as u16
    }
    #[inline]
    fn with_result(self, v: u16) -> Cell {
        Cell(self.0 & !0xFFFF | v as u64)
    }
    #[inline]
    fn with_remaining(self, r: u8) -> Cell {
        Cell(self.0 & !(0xFF << 16) | (r as u64) << 16)
    }
    #[inline]
    fn with_best_win(self, d: u16) -> Cell {
        Cell(self.0 & !(0xFFFF << 24) | (d as u64) << 24)
    }
    #[inline]
    fn with_longest_reply(self, d: u16) -> Cell {
        Cell(self.0 & !(0xFFFF << 40) | (d as u64) << 40)
    }
}

impl Work {
    /// `n` open cells, in `spare`'s memory if it has room.
    fn new(n: usize, spare: Option<AtomicWords>) -> Result<Work, GenerateError> {
        // In parallel, like every other pass over the batch (up to 268 MB of
        // cells; serially this took 0.4% of the KKKvKM pair's time).
        let cells = AtomicWords::reuse(spare, n, false)?;
        cells
            .par_chunks(1 << 16)
            .for_each(|c| c.iter().for_each(|w| w.store(Cell::OPEN.0, Relaxed)));
        Ok(Work { cells })
    }

    /// Ask the processor to bring state `g`'s cell into the cache, without
    /// waiting for it.
    #[inline]
    fn prefetch(&self, g: usize) {
        if let Some(cell) = self.cells.get(g) {
            prefetch(cell);
        }
    }

    #[inline]
    fn set(&self, g: usize, c: Cell) {
        self.cells[g].store(c.0, Relaxed)
    }

    /// Apply `f` to state `g`'s cell atomically; `f` returns the new cell, or
    /// `None` to leave it. Returns the cell `f` was last applied to and whether
    /// the update happened.
    #[inline]
    fn update(&self, g: usize, mut f: impl FnMut(Cell) -> Option<Cell>) -> (Cell, bool) {
        match self.cells[g].fetch_update(Relaxed, Relaxed, |c| f(Cell(c)).map(|n| n.0)) {
            Ok(c) => (Cell(c), true),
            Err(c) => (Cell(c), false),
        }
    }
}

const NO_WIN: u16 = u16::MAX;

/// A retro-move whose predecessor placement has not been ranked yet.
const UNRANKED: u64 = u64::MAX;

/// How many steps ahead the propagation prefetches the cells it will update:
/// enough to cover a memory access, few enough to stay in the cache.
const PREFETCH_AHEAD: usize = 16;

/// Stand-in for values a failed read could not deliver (a draw): the tables
/// written from them are removed and the error reported.
const NOT_READ: u16 = 2 << 14;

/// A bucket entry: kind (bit 63: 1 = win, 0 = loss) and the state's position in the batch.
type Entry = u64;
const WIN_BIT: u64 = 1 << 63;

/// The "fresh king move" nodes of a table whose side to move has men and at
/// least two kings (where the three-move rule applies and more than one king
/// can be free).
///
/// Such a side's states with three-move state "none" or "king `k'`, any count"
/// (`k' != k`) all have the same options by a fresh move of king `k`: its
/// ordinary moves, each to the state with the count `(k, 1)`. Instead of
/// linking every one of those states (1 + 3 * (kings - 1) of them) to each of
/// these successors, one relay node per placement, carried counters and king
/// stands between them: it is won as soon as one successor is lost, lost
/// when all are won, and only then passes its result on to the states, which
/// count it as one option. A finalised successor thus updates one node instead
/// of up to seven states (two kings: four), the same value as by the direct
/// links, in the same ply (the relay adds no ply).
#[derive(Copy, Clone, Debug)]
struct Fresh {
    /// Kings of the side to move.
    kings: u64,
    /// Counter combinations carried over (the opponent's three-move state and
    /// the draw counter): the low part of a state's counter offset.
    carried: u64,
    /// Counter combinations per placement.
    per: u64,
}

impl Fresh {
    /// The relay nodes of `ix`'s table, if its side to move has them.
    fn of(ix: &MaterialIndex) -> Option<Fresh> {
        let m = ix.material();
        (m.stm_men > 0 && m.stm_kings >= 2).then(|| Fresh {
            kings: m.stm_kings as u64,
            carried: ix.carried_counters(),
            per: ix.counters_per_placement(),
        })
    }

    /// Nodes per part of a batch (a slice of `len` states).
    fn per_part(&self, len: u64) -> u64 {
        len / self.per * self.carried * self.kings
    }

    /// The node of king number `king` (in the White-to-move form's square
    /// order) for the placement starting at batch position `start`, counters
    /// `carried`; parts hold `len` states and `per_part` nodes.
    #[inline]
    fn node(&self, start: u64, carried: u64, king: u64, len: u64, per_part: u64) -> u64 {
        (start / len) * per_part
            + (start % len) / self.per * self.carried * self.kings
            + carried * self.kings
            + king
    }

    /// Call `f` with the batch position of every state that has node `node`
    /// as an option: three-move state none, or another king with any count.
    #[inline]
    fn for_each_parent(&self, node: u64, len: u64, per_part: u64, mut f: impl FnMut(u64)) {
        let (part, rest) = (node / per_part, node % per_part);
        let placement = rest / (self.carried * self.kings);
        let carried = rest / self.kings % self.carried;
        let king = rest % self.kings;
        let base = part * len + placement * self.per + carried;
        f(base);
        for other in (0..self.kings).filter(|&k| k != king) {
            for count in 0..THREE_MOVE_LIMIT as u64 {
                f(base + (1 + 3 * other + count) * self.carried);
            }
        }
    }
}

/// One table of the pair being solved: its index and its finished values,
/// kept in a memory-mapped work file (2 bytes per state, 0 = not solved yet).
struct PairTable {
    material: Material,
    index: MaterialIndex,
    slice_len: u64,
    store: MmapMut,
}

impl PairTable {
    #[inline]
    fn get(&self, idx: u64) -> u16 {
        let o = 2 * idx as usize;
        u16::from_le_bytes([self.store[o], self.store[o + 1]])
    }

    /// Ask the processor to fetch the value [`PairTable::get`] will read (a
    /// hint only: a page not mapped yet is not faulted in).
    #[inline]
    fn prefetch(&self, idx: u64) {
        if let Some(b) = self.store.get(2 * idx as usize) {
            prefetch(b);
        }
    }
}

/// A slice: the states of one table with one placement of the men. Ordinary
/// king moves stay between a slice and its partner (the same men, the other side
/// to move); man moves lead to slices with the men further advanced.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Slice {
    table: usize,
    slice: u64,
}

/// How far the men still have to go: White's men count their row (they move
/// toward row 0), Black's men their distance to row 9. Every man move lowers it
/// by one, so slices solved in increasing order find their man moves solved.
fn advancement(pos: &Position) -> u32 {
    let white: u32 = pos.men(Side::White).squares().map(|s| s.row() as u32).sum();
    let black: u32 = pos
        .men(Side::Black)
        .squares()
        .map(|s| 9 - s.row() as u32)
        .sum();
    white + black
}

/// A batch: slices solved together, and where each one's partner is among
/// them (the same men, the other side to move: king moves lead there).
#[derive(Clone, Debug, Default)]
struct Batch {
    parts: Vec<Slice>,
    partner: Vec<u64>,
}

/// Slices of the pair in solving order, grouped into batches of at most
/// `batch_states` states (a batch never splits a slice from its partner).
fn batches(tables: &[&MaterialIndex], batch_states: u64) -> Vec<Batch> {
    let symmetric = tables.len() == 1;
    let t0 = tables[0];
    let slices = t0.size() / t0.slice_len();
    let mut groups: Vec<(u32, Vec<Slice>)> = (0..slices)
        .into_par_iter()
        .filter_map(|s| {
            let p = t0.position(s * t0.slice_len());
            let other = if symmetric { 0 } else { 1 };
            // The same men with the other side to move (the index flips it into its table).
            let mut q = p;
            q.turn = Side::Black;
            let partner = tables[other].index(&q) / tables[other].slice_len();
            let mut parts = vec![Slice { table: 0, slice: s }];
            if symmetric {
                if partner < s {
                    return None; // listed with its partner
                }
                if partner != s {
                    parts.push(Slice {
                        table: 0,
                        slice: partner,
                    });
                }
            } else {
                parts.push(Slice {
                    table: 1,
                    slice: partner,
                });
            }
            Some((advancement(&p), parts))
        })
        .collect();
    groups.sort_by_key(|(level, parts)| (*level, parts[0].slice));
    let mut out: Vec<Batch> = Vec::new();
    let mut current = Batch::default();
    let (mut level, mut states) = (u32::MAX, 0u64);
    for (l, parts) in groups {
        let n: u64 = parts.iter().map(|p| tables[p.table].slice_len()).sum();
        if !current.parts.is_empty() && (l != level || states + n > batch_states) {
            out.push(std::mem::take(&mut current));
            states = 0;
        }
        level = l;
        states += n;
        let at = current.parts.len() as u64;
        current.partner.extend(match parts.len() {
            1 => vec![at],
            _ => vec![at + 1, at],
        });
        current.parts.extend(parts);
    }
    if !current.parts.is_empty() {
        out.push(current);
    }
    out
}

/// States per batch: about [`BYTES_PER_BATCH_STATE`] bytes each of working memory.
const BATCH_STATES: u64 = 1 << 25;

/// Solve one batch of slices into the work files; every slice its man moves
/// lead to is solved already.
fn solve_batch(
    tables_mut: &mut [PairTable],
    batch: &Batch,
    solved: &Solved,
    spare: &mut Spare,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Tally>, GenerateError> {
    let tables: &[PairTable] = tables_mut;
    let symmetric = tables.len() == 1;
    let other_table = |t: usize| if symmetric { 0 } else { 1 - t };
    // The two tables of a pair have slices of one length (the flip swaps the
    // sides' kings and counters, which leaves the products unchanged), so
    // part `i` of the batch starts at `i * len`.
    let len = tables[0].slice_len;
    let (parts, partner) = (&batch.parts, &batch.partner);
    let total = parts.len() as u64 * len;
    // Table and index of a batch position.
    let global = |g: u64| -> (usize, u64) {
        let p = parts[(g / len) as usize];
        (p.table, p.slice * len + g % len)
    };
    let work = Work::new(total as usize, spare.cells.take())?;
    // Relay nodes (see [`Fresh`]): every part gets room for the most nodes
    // either table of the pair needs.
    let fresh: Vec<Option<Fresh>> = tables.iter().map(|t| Fresh::of(&t.index)).collect();
    let per_part = fresh
        .iter()
        .flatten()
        .map(|f| f.per_part(len))
        .max()
        .unwrap_or(0);
    let relays = Work::new(
        (parts.len() as u64 * per_part) as usize,
        spare.relays.take(),
    )?;
    let relay_of_part: Vec<Option<Fresh>> = parts.iter().map(|p| fresh[p.table]).collect();

    // 1. Initialise, in two passes. Where the side to move must capture,
    // every move leaves the batch, so the values of those placements' states
    // are final at once: the first pass solves them. The second initialises
    // the other placements and reads a king move into a capture placement
    // like a move that leaves the batch. Capture states thus never go through
    // propagation (in the KKMvKK pair they were 83% of the states it
    // finalised, and the cause of 80% of its predecessor updates).
    const CHUNK: u64 = 1 << 12;
    // King moves stay inside a slice pair, so the batch propagates run by
    // run: whole slice pairs of about `LOCAL_STATES` states together, where
    // slices are that small, so that the cells a run updates stay in the
    // processor's cache instead of lying anywhere in hundreds of megabytes.
    let (runs, run_of_part) = local_runs(partner, len);
    let run_of = |e: Entry| run_of_part[((e & !WIN_BIT) / len) as usize];
    // Both tables of a pair have the same counter combinations per placement
    // (the flip swaps the sides' counters), so a placement of the batch is
    // `g / per`, whichever table it is in.
    let per = tables[0].index.counters_per_placement();
    debug_assert!(tables
        .iter()
        .all(|t| t.index.counters_per_placement() == per));
    let captures = CapturePlacements::new(total / per);
    // Handing whole segments to the buckets keeps this serial step short (it
    // used to push every entry: 4.3% of the KKMvKM pair's samples, about 49 s
    // with the other core idle).
    let mut run_buckets: Vec<Buckets> = vec![Vec::new(); runs.len()];
    for pass in [Pass::Captures, Pass::Others] {
        let items: Vec<Vec<Segment>> = (0..total.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut out = Vec::new();
                let mut scratch = InitScratch::new(&tables[0].index);
                // The states of one placement (they differ only in counters) are
                // consecutive, in one part of the batch: find the table and index
                // of the first, then step through its counter combinations.
                let (mut t, mut counters, mut placement_end, mut skip) = (0, 0, 0, true);
                let mut done = 0;
                for g in c * CHUNK..((c + 1) * CHUNK).min(total) {
                    if g < placement_end {
                        counters += 1;
                    } else {
                        let idx;
                        (t, idx) = global(g);
                        counters = idx % per;
                        placement_end = g + per - counters;
                        let (ix, next) = (&tables[t].index, &tables[other_table(t)]);
                        skip = match pass {
                            Pass::Captures => {
                                let capture = scratch.locate(ix, t, idx / per).has_capture();
                                if capture {
                                    captures.set(g / per);
                                    scratch.prepare(ix, next, solved, true);
                                    scratch.solve_capture_placement(ix, next, solved);
                                }
                                !capture
                            }
                            Pass::Others => {
                                let capture = captures.get(g / per);
                                if !capture {
                                    scratch.locate(ix, t, idx / per);
                                    scratch.prepare(ix, next, solved, false);
                                    let partner_start = partner[(g / len) as usize] * len;
                                    scratch.find_known(
                                        &next.index,
                                        partner_start,
                                        &captures,
                                        per,
                                        &work,
                                    );
                                    debug_assert!(scratch.known.iter().all(|k| {
                                        let mut child =
                                            moved(&scratch.pos, Side::White, k.to, k.king, true);
                                        child.turn = Side::Black;
                                        global(k.start)
                                            == (
                                                other_table(t),
                                                next.index.placement_base(&child.flip()),
                                            )
                                    }));
                                }
                                capture
                            }
                        };
                    }
                    if skip {
                        continue;
                    }
                    done += 1;
                    let ix = &tables[t].index;
                    if pass == Pass::Captures {
                        let v = scratch.capture_values[(counters % ix.carried_counters()) as usize];
                        work.set(g as usize, Cell::OPEN.with_result(v.pack()));
                        #[cfg(debug_assertions)]
                        {
                            // The shortcut against this state's own value.
                            let mut pos = scratch.pos;
                            ix.set_counters(&mut pos, counters);
                            let next = &tables[other_table(t)];
                            let own = match pos.outcome_with(true) {
                                Some(o) => Value { wdl: o.wdl, dtw: 0 },
                                None => leaving_moves(&pos, next, solved, &mut scratch).value(),
                            };
                            assert_eq!(own, v);
                        }
                        continue;
                    }
                    let mut pos = scratch.pos;
                    ix.set_counters(&mut pos, counters);
                    if let Some(f) = fresh[t] {
                        // The state with three-move state none sets up the relay
                        // nodes of its placement and carried counters: a node
                        // waits for its king's moves that are not known yet.
                        if counters < f.carried {
                            let start = g - counters;
                            for (king, &(_, n)) in scratch.king_moves.iter().enumerate() {
                                let node = f.node(start, counters, king as u64, len, per_part);
                                let open = n - scratch.known_of_king[king];
                                relays.set(node as usize, Cell::OPEN.with_remaining(open as u8));
                            }
                        }
                    }
                    init_state(
                        &work,
                        g,
                        &pos,
                        counters % ix.carried_counters(),
                        fresh[t].is_some(),
                        &tables[other_table(t)],
                        solved,
                        &mut scratch,
                        &mut out,
                    );
                }
                progress(done);
                segments(out, run_of)
            })
            .collect();
        for v in items {
            for s in v {
                add_segment(&mut run_buckets[s.run], s);
            }
        }
    }

    // 2. Propagate, bucket by bucket, along king moves inside each run.
    let order = StateOrder::new(total, spare.order.take())?;
    for (run, mut buckets) in runs.iter().zip(run_buckets) {
        let mut d = 0;
        while d < buckets.len() {
            // In state order, the counter states of one placement come together
            // and share its retro-moves and predecessor placements (measured on
            // the KKKvKM pair: 6% less CPU time, BENCHMARKS.md 2026-12-04).
            let entries = put_in_state_order(std::mem::take(&mut buckets[d]), &order, run.clone());
            let found: Vec<Vec<Segment>> = entries
                .par_iter()
                .flat_map(|s| s.par_chunks(4096))
                .map(|chunk| {
                    let mut out = Vec::new();
                    let mut last: Option<(usize, u64, Position)> = None;
                    // The king retro-moves into the current placement, and the batch
                    // position where each one's predecessor placement starts (found
                    // on first use): they depend on the pieces only, not on the
                    // counters, so the entries of one placement share them.
                    let mut retro_moves: Vec<(Square, Square, u64)> = Vec::new();
                    let mut retro_built = false;
                    let mut men = [MenCache::default(); 2];
                    // The cells touched here lie anywhere in the run (up to hundreds
                    // of megabytes), so each access would wait for memory: first the
                    // entries are finalised, then their predecessors are collected,
                    // then updated, each pass prefetching the cells a few steps
                    // ahead so that the memory accesses overlap.
                    let mut finalised = Vec::with_capacity(chunk.len());
                    for (k, &e) in chunk.iter().enumerate() {
                        if let Some(&ahead) = chunk.get(k + PREFETCH_AHEAD) {
                            work.prefetch((ahead & !WIN_BIT) as usize);
                        }
                        let win = e & WIN_BIT != 0;
                        let g = (e & !WIN_BIT) as usize;
                        let value = Value {
                            wdl: if win { Wdl::Win } else { Wdl::Loss },
                            dtw: d as u16,
                        };
                        let (_, done) = work.update(g, |c| {
                            if c.result() != 0 || (win && c.best_win() != d as u16) {
                                None // already final, or a shorter win was found since
                            } else {
                                Some(c.with_result(value.pack()))
                            }
                        });
                        if done {
                            finalised.push(e);
                        }
                    }
                    // Predecessors to update: batch position, with WIN_BIT if the
                    // finalised state was a win.
                    let mut visits: Vec<u64> = Vec::with_capacity(4 * finalised.len());
                    // The same for relay nodes: node, with WIN_BIT.
                    let mut relay_visits: Vec<u64> = Vec::new();
                    for &e in &finalised {
                        let win_bit = e & WIN_BIT;
                        let (t, idx) = global(e & !WIN_BIT);
                        let ot = other_table(t);
                        // Entries of one placement (other counters) often follow each
                        // other: unrank the placement once for them.
                        let per = tables[t].index.counters_per_placement();
                        if last.map(|(lt, lp, _)| (lt, lp)) != Some((t, idx / per)) {
                            let placement = tables[t]
                                .index
                                .placement_position_cached(idx / per, &mut men[t]);
                            retro_built = false;
                            last = Some((t, idx / per, placement));
                        }
                        let mut pos = last.unwrap().2;
                        tables[t].index.set_counters(&mut pos, idx % per);
                        let Some(undoing) = Undoing::new(&pos) else {
                            continue; // no ordinary move leads here
                        };
                        if !undoing.king_may_have_moved() {
                            // The three-move state says the last move was no
                            // king move (a quarter of the entries of KKMvKM).
                            continue;
                        }
                        if !retro_built {
                            retro_moves.clear();
                            for_each_king_retro_move(&pos, |from, to| {
                                retro_moves.push((from, to, UNRANKED))
                            });
                            retro_built = true;
                        }
                        // The predecessors by one king move share a placement and
                        // differ only in the mover's three-move state: rank the
                        // placement once per move (neighbouring entries share
                        // them too, hence the cache), and add the counter codes.
                        // Predecessors have the other side to move; only the
                        // placement is ranked in its White-to-move form, the
                        // counters are coded relative to the side to move.
                        let ix = &tables[ot].index;
                        let preds = PredecessorCounters::new(ix, &undoing, &pos);
                        // Positions are in their White-to-move form, so the
                        // predecessors have Black to move and are indexed flipped.
                        let mover = undoing.mover();
                        debug_assert_eq!(mover, Side::Black);
                        let men_all = pos.men(Side::White) | pos.men(Side::Black);
                        let partner_start = partner[((e & !WIN_BIT) / len) as usize] * len;
                        // Where the predecessors have relay nodes, a move of the
                        // king now tracked at count 1 was a fresh move of it: its
                        // predecessor is that king's relay node.
                        let relay = match (fresh[ot], pos.three_move(mover)) {
                            (Some(f), Some(kc)) if kc.count == 1 => Some(f),
                            _ => None,
                        };
                        for (from, to, start) in retro_moves.iter_mut() {
                            let (from, to) = (*from, *to);
                            if !undoing.king_may_have_moved_to(to) {
                                continue;
                            }
                            let kings = pos.kings(mover).without(to).with(from);
                            if *start == UNRANKED {
                                // The predecessor has the same men: it lies in
                                // the partner slice, and only its kings need ranking.
                                *start = partner_start
                                    + ix.flipped_kings_offset(
                                        men_all,
                                        pos.kings(Side::White),
                                        kings,
                                    );
                                debug_assert_eq!(
                                    global(*start),
                                    (
                                        ot,
                                        ix.placement_base(
                                            &moved(&pos, mover, from, to, true).flip()
                                        )
                                    )
                                );
                            }
                            let start = *start;
                            if let Some(f) = relay {
                                let tracked = Some(KingCount {
                                    square: from,
                                    count: 1,
                                });
                                let king =
                                    (ix.three_move_code(mover, true, kings, tracked) - 1) / 3;
                                let node = f.node(start, preds.carried(), king, len, per_part);
                                relay_visits.push(win_bit | node);
                                continue;
                            }
                            preds.for_each(kings, from, to, |offset| {
                                visits.push(win_bit | (start + offset))
                            });
                        }
                    }
                    // Relay nodes that this pass resolves pass their result on to
                    // their states, as visits of the same kind (they add no ply).
                    for (k, &v) in relay_visits.iter().enumerate() {
                        if let Some(&ahead) = relay_visits.get(k + PREFETCH_AHEAD) {
                            relays.prefetch((ahead & !WIN_BIT) as usize);
                        }
                        let node = v & !WIN_BIT;
                        let resolved = if v & WIN_BIT != 0 {
                            // One more successor won by the opponent: the node is
                            // lost once none is left.
                            let (c, done) = relays.update(node as usize, |c| {
                                (c.best_win() == NO_WIN)
                                    .then(|| c.with_remaining(c.remaining() - 1))
                            });
                            done && c.remaining() == 1
                        } else {
                            // A successor lost: the node is won (first time only).
                            relays
                                .update(node as usize, |c| {
                                    (c.best_win() == NO_WIN).then(|| c.with_best_win(d as u16 + 1))
                                })
                                .1
                        };
                        if resolved {
                            let f = relay_of_part[(node / per_part) as usize]
                                .expect("relay nodes only in parts of tables that have them");
                            f.for_each_parent(node, len, per_part, |j| {
                                visits.push((v & WIN_BIT) | j)
                            });
                        }
                    }
                    for (k, &v) in visits.iter().enumerate() {
                        if let Some(&ahead) = visits.get(k + PREFETCH_AHEAD) {
                            work.prefetch((ahead & !WIN_BIT) as usize);
                        }
                        let j = (v & !WIN_BIT) as usize;
                        if v & WIN_BIT != 0 {
                            // One fewer reply that does not lose; the last one
                            // refuted makes the state lost (unless it can win).
                            let (c, done) = work.update(j, |c| {
                                (c.result() == 0).then(|| {
                                    c.with_remaining(c.remaining() - 1)
                                        .with_longest_reply(c.longest_reply().max(d as u16))
                                })
                            });
                            if done && c.remaining() == 1 && c.best_win() == NO_WIN {
                                let dtw = 1 + c.longest_reply().max(d as u16);
                                out.push((dtw, j as u64));
                            }
                        } else {
                            let dtw = d as u16 + 1;
                            let (_, shorter) = work.update(j, |c| {
                                (c.result() == 0 && c.best_win() > dtw)
                                    .then(|| c.with_best_win(dtw))
                            });
                            if shorter {
                                out.push((dtw, WIN_BIT | j as u64));
                            }
                        }
                    }
                    segments(out, |e| {
                        debug_assert!(run.contains(&(e & !WIN_BIT)));
                        0
                    })
                })
                .collect();
            for v in found {
                for s in v {
                    add_segment(&mut buckets, s);
                }
            }
            d += 1;
        }
    }

    // 3. The rest are draws. Into the work files with them, counting each
    // table's values on the way (saving the writer a pass over the files).
    let len = len as usize;
    const DRAW: u16 = Value {
        wdl: Wdl::Draw,
        dtw: 0,
    }
    .pack();
    let mut tallies = vec![Tally::default(); tables_mut.len()];
    for (i, p) in parts.iter().enumerate() {
        let start = 2 * p.slice as usize * len;
        const CHUNK: usize = 1 << 15;
        let tally = tables_mut[p.table].store[start..start + 2 * len]
            .par_chunks_mut(2 * CHUNK)
            .zip(work.cells[i * len..(i + 1) * len].par_chunks(CHUNK))
            .map(|(dst, src)| {
                let mut tally = Tally::default();
                for (d, c) in dst.chunks_exact_mut(2).zip(src) {
                    let v = match Cell(c.load(Relaxed)).result() {
                        0 => DRAW,
                        v => v,
                    };
                    tally.add(Value::unpack(v).expect("a solved value"));
                    d.copy_from_slice(&v.to_le_bytes());
                }
                tally
            })
            .reduce(Tally::default, Tally::merge);
        tallies[p.table] = tallies[p.table].merge(tally);
    }
    *spare = Spare {
        cells: Some(work.cells),
        relays: Some(relays.cells),
        order: Some(order.bits),
    };
    Ok(tallies)
}

/// States that [`solve_batch`] propagates on together where slice pairs are
/// small: about 16 MB of cells, which the processor's cache can hold.
const LOCAL_STATES: u64 = 1 << 21;

/// The batch's runs for propagation: ranges of batch positions made of whole
/// groups of parts closed under `partner` (slice pairs: king moves never
/// leave one), at least about `LOCAL_STATES / 2` states each where the slices
/// allow; and each part's run. Parts hold `len` states.
fn local_runs(partner: &[u64], len: u64) -> (Vec<Range<u64>>, Vec<usize>) {
    let (mut runs, mut run_of_part) = (Vec::new(), Vec::with_capacity(partner.len()));
    let (mut start, mut reach) = (0u64, 0u64);
    for (i, &p) in partner.iter().enumerate() {
        let i = i as u64;
        reach = reach.max(p).max(i);
        run_of_part.push(runs.len());
        // A run may end after part `i` when no part in it has its partner further on.
        if reach == i && (i + 1 - start) * len * 2 >= LOCAL_STATES {
            runs.push(start * len..(i + 1) * len);
            start = i + 1;
        }
    }
    if start < partner.len() as u64 {
        runs.push(start * len..partner.len() as u64 * len);
    }
    (runs, run_of_part)
}

/// A bitset over a batch's bucket entries (two bits per state: lost, won),
/// for putting large buckets in state order.
struct StateOrder {
    bits: AtomicWords,
}

impl StateOrder {
    /// The empty bitset, in `spare`'s memory (which must be all zero) if it has room.
    fn new(states: u64, spare: Option<AtomicWords>) -> Result<StateOrder, GenerateError> {
        Ok(StateOrder {
            bits: AtomicWords::reuse(spare, (2 * states).div_ceil(64) as usize, true)?,
        })
    }
}

/// Bucket entries at one distance, in one run, handed over in one piece.
struct Segment {
    run: usize,
    d: u16,
    entries: Vec<Entry>,
}

/// A run's buckets: for each distance, its entries in segments.
type Buckets = Vec<Vec<Vec<Entry>>>;

/// Group `out` (distances and entries, in runs that never decrease, as
/// `run_of` tells them) into segments, one per run and distance.
fn segments(out: Vec<(u16, Entry)>, run_of: impl Fn(Entry) -> usize) -> Vec<Segment> {
    let mut segs = Vec::new();
    let mut rest = &out[..];
    while let Some(&(_, first)) = rest.first() {
        let run = run_of(first);
        let n = rest
            .iter()
            .position(|&(_, e)| run_of(e) != run)
            .unwrap_or(rest.len());
        let (span, more) = rest.split_at(n);
        // A counting sort by distance, into vectors of the exact size.
        let mut count: Vec<usize> = Vec::new();
        for &(d, _) in span {
            let d = d as usize;
            if count.len() <= d {
                count.resize(d + 1, 0);
            }
            count[d] += 1;
        }
        let mut by_d: Vec<Vec<Entry>> = count.iter().map(|&n| Vec::with_capacity(n)).collect();
        for &(d, e) in span {
            by_d[d as usize].push(e);
        }
        segs.extend(
            by_d.into_iter()
                .enumerate()
                .filter(|(_, v)| !v.is_empty())
                .map(|(d, entries)| Segment {
                    run,
                    d: d as u16,
                    entries,
                }),
        );
        rest = more;
    }
    segs
}

fn add_segment(buckets: &mut Buckets, s: Segment) {
    let d = s.d as usize;
    if buckets.len() <= d {
        buckets.resize_with(d + 1, Vec::new);
    }
    buckets[d].push(s.entries);
}

/// Sort bucket entries (in segments), which lie in batch positions `states`,
/// by state and drop repeated ones (a state queued twice at one distance is
/// finalised once; the repeats were no-ops). The result is in segments too,
/// one after the other. A large bucket goes through the bitset, linear in the
/// number of states (sorting it took 16% of propagation on the KKKMvK pair);
/// a small one is sorted.
fn put_in_state_order(
    segments: Vec<Vec<Entry>>,
    order: &StateOrder,
    states: Range<u64>,
) -> Vec<Vec<Entry>> {
    // The bitset's words that hold these states' bits. Runs are processed one
    // at a time, so a word shared with a neighbouring run holds no bits of it.
    let words =
        &order.bits[(2 * states.start / 64) as usize..(2 * states.end).div_ceil(64) as usize];
    let first_bit = 2 * states.start / 64 * 64;
    let n: usize = segments.iter().map(Vec::len).sum();
    if (n as u64) < words.len() as u64 / 8 {
        let mut entries = if segments.len() == 1 {
            segments.into_iter().next().unwrap_or_default()
        } else {
            segments.concat()
        };
        entries.par_sort_unstable_by_key(|&e| e & !WIN_BIT);
        return vec![entries];
    }
    let bit = |e: Entry| 2 * (e & !WIN_BIT) + (e >> 63);
    segments
        .par_iter()
        .flat_map(|s| s.par_chunks(4096))
        .for_each(|chunk| {
            for &e in chunk {
                let b = bit(e);
                order.bits[(b / 64) as usize].fetch_or(1 << (b % 64), Relaxed);
            }
        });
    // Thousands of small vectors: freeing them one by one on this thread
    // would leave the other cores idle.
    segments.into_par_iter().for_each(drop);
    const WORDS: usize = 1 << 12;
    words
        .par_chunks(WORDS)
        .enumerate()
        .map(|(c, words)| {
            let mut run = Vec::new();
            for (i, w) in words.iter().enumerate() {
                let mut x = w.swap(0, Relaxed);
                while x != 0 {
                    let b = first_bit + ((c * WORDS + i) * 64) as u64 + x.trailing_zeros() as u64;
                    x &= x - 1;
                    run.push(((b & 1) << 63) | (b / 2));
                }
            }
            run
        })
        .filter(|run| !run.is_empty())
        .collect()
}

/// The counter parts of the indexes of a state's predecessors by king moves,
/// computed from codes instead of from each predecessor position: the
/// predecessors by one move share their placement and differ only in the
/// mover's three-move state ([`Undoing::for_each_mover_state`]).
struct PredecessorCounters<'a> {
    ix: &'a MaterialIndex,
    undoing: &'a Undoing,
    /// The code of the predecessors' opponent's three-move state and their draw counter.
    t_opp: u64,
    s: u64,
}

impl<'a> PredecessorCounters<'a> {
    /// For the predecessors of `pos` (indexed by `ix`, their material's index).
    #[inline]
    fn new(ix: &'a MaterialIndex, undoing: &'a Undoing, pos: &Position) -> Self {
        let mover = undoing.mover();
        let stm = mover.opponent();
        PredecessorCounters {
            ix,
            undoing,
            t_opp: ix.three_move_code(mover, false, pos.kings(stm), pos.three_move(stm)),
            s: ix.draw_counter_code(mover, undoing.seven(), undoing.plies()),
        }
    }

    /// The predecessors' carried counters (see [`MaterialIndex::carried_counters`]).
    #[inline]
    fn carried(&self) -> u64 {
        self.ix.counters_offset_of(0, self.t_opp, self.s)
    }

    /// Call `f` with the counter offset of each predecessor by the king move
    /// `from`-`to` (`kings`: the mover's kings before it), in the order of
    /// [`Undoing::emit`].
    #[inline]
    fn for_each(&self, kings: Bitboard, from: Square, to: Square, mut f: impl FnMut(u64)) {
        let mover = self.undoing.mover();
        self.undoing
            .for_each_mover_state(kings, from, to, true, |state| {
                let t_stm = self.ix.three_move_code(mover, true, kings, state);
                f(self.ix.counters_offset_of(t_stm, self.t_opp, self.s))
            });
    }
}

/// The two passes of a batch's initialisation (see [`solve_batch`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pass {
    /// Placements where the side to move must capture: solved at once.
    Captures,
    /// The others, reading king moves into capture placements.
    Others,
}

/// Which placements of a batch have a capture (one bit each), found by the
/// first pass of the initialisation and read by the second.
struct CapturePlacements(Vec<AtomicU64>);

impl CapturePlacements {
    fn new(placements: u64) -> CapturePlacements {
        CapturePlacements(
            (0..placements.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        )
    }

    #[inline]
    fn set(&self, p: u64) {
        self.0[(p / 64) as usize].fetch_or(1 << (p % 64), Relaxed);
    }

    #[inline]
    fn get(&self, p: u64) -> bool {
        self.0[(p / 64) as usize].load(Relaxed) >> (p % 64) & 1 != 0
    }
}

/// An ordinary king move of the placement being initialised that leads into
/// a capture placement, whose states are solved already.
#[derive(Copy, Clone, Debug)]
struct Known {
    king: Square,
    to: Square,
    /// The batch position where the successor placement starts.
    start: u64,
    /// The code, in the successor's index, of the mover's three-move state
    /// after the move at count 1 (0 where the rule does not apply).
    code1: u64,
}

/// Per-thread scratch of the initialisation: the current placement, what
/// all of its states share, and cached placement indexes of successors.
struct InitScratch {
    /// The placement's position with every counter at 0.
    pos: Position,
    /// Its legal moves that leave the batch (captures, promotions, man
    /// moves); the ordinary king moves, which stay in it, are only counted.
    moves: MoveList,
    /// How many ordinary king moves it has.
    internal: u32,
    /// The ordinary moves of each king of the side to move, in square order.
    king_moves: Vec<(Square, u32)>,
    /// In a capture placement, the value of the states of each carried
    /// combination (first pass only).
    capture_values: Vec<Value>,
    /// The ordinary king moves into capture placements (second pass only).
    known: Vec<Known>,
    /// How many of each king's ordinary moves are in `known`.
    known_of_king: Vec<u32>,
    /// The summary of the moves that leave the batch, for each combination
    /// of the counters they carry over ([`MaterialIndex::carried_counters`]);
    /// `None` where every state with those counters is over.
    leaving: Vec<Option<Leaving>>,
    /// Where each leaving move's value is read, per carried combination.
    sources: Vec<(u32, Source)>,
    solved_cache: PlacementCache,
    next_cache: PlacementCache,
    /// The men of the last slice entered, per table of the pair.
    men: [MenCache; 2],
}

impl InitScratch {
    fn new(ix: &MaterialIndex) -> InitScratch {
        InitScratch {
            pos: ix.placement_position(0),
            moves: Vec::new(),
            internal: 0,
            king_moves: Vec::new(),
            capture_values: Vec::new(),
            known: Vec::new(),
            known_of_king: Vec::new(),
            leaving: Vec::new(),
            sources: Vec::new(),
            solved_cache: PlacementCache::new(),
            next_cache: PlacementCache::new(),
            men: [MenCache::default(); 2],
        }
    }

    /// Go to placement `placement` of `ix` (table `table` of the pair): its
    /// position with every counter at 0.
    fn locate(&mut self, ix: &MaterialIndex, table: usize, placement: u64) -> &Position {
        self.pos = ix.placement_position_cached(placement, &mut self.men[table]);
        &self.pos
    }

    /// Find what the states of the located placement share: its moves, and
    /// the values of those that leave the batch; `next` is the other table of
    /// the pair (where man moves lead). `capture`: whether the side to move
    /// must capture (the first pass has tested it).
    fn prepare(&mut self, ix: &MaterialIndex, next: &PairTable, solved: &Solved, capture: bool) {
        self.moves.clear();
        self.king_moves.clear();
        self.known.clear();
        self.known_of_king.clear();
        self.internal = 0;
        let kings = self.pos.kings(self.pos.turn());
        debug_assert_eq!(capture, self.pos.has_capture());
        if capture {
            // Captures are compulsory: every move leaves the batch.
            self.pos.generate_captures(&mut self.moves);
            self.king_moves.extend(kings.squares().map(|k| (k, 0)));
        } else {
            // Ordinary king moves are counted, not built (building them was
            // most of the move generation of king-heavy placements).
            self.pos.generate_man_moves(&mut self.moves);
            let empty = !self.pos.occupied();
            for k in kings.squares() {
                let n = king_quiet_move_count(k, empty);
                self.internal += n;
                self.king_moves.push((k, n));
            }
        }
        self.summarise_leaving(ix, next, solved);
    }

    /// The values of the (prepared) capture placement's states. A capture
    /// resets the mover's three-move state, and a king the rule blocks may
    /// still capture, so the states differ only in their carried counters:
    /// one value per carried combination, instead of one per state (7 and 4
    /// states share each in the KKMvKM pair).
    fn solve_capture_placement(&mut self, ix: &MaterialIndex, next: &PairTable, solved: &Solved) {
        debug_assert!(self.internal == 0 && !self.moves.is_empty());
        self.capture_values.clear();
        for c in 0..ix.carried_counters() {
            let mut pos = self.pos;
            ix.set_counters(&mut pos, c);
            let v = match pos.outcome_with(true) {
                Some(o) => Value { wdl: o.wdl, dtw: 0 },
                None => {
                    let l = match self.leaving[c as usize] {
                        Some(l) => l,
                        None => leaving_moves(&pos, next, solved, self),
                    };
                    l.value()
                }
            };
            self.capture_values.push(v);
        }
    }

    /// Find the ordinary king moves of the (prepared) placement that lead
    /// into capture placements. `ix` indexes the successors (the other table
    /// of the pair), whose slice starts at batch position `partner_start`.
    fn find_known(
        &mut self,
        ix: &MaterialIndex,
        partner_start: u64,
        captures: &CapturePlacements,
        per: u64,
        work: &Work,
    ) {
        let pos = &self.pos;
        let (white, black) = (pos.kings(Side::White), pos.kings(Side::Black));
        let men = pos.men(Side::White) | pos.men(Side::Black);
        let empty = !pos.occupied();
        for &(king, n) in &self.king_moves {
            let mut known = 0;
            if n > 0 {
                for_each_free_diagonal_square(king, empty, |to| {
                    let kings = white.without(king).with(to);
                    let start = partner_start + ix.flipped_kings_offset(men, kings, black);
                    if captures.get(start / per) {
                        // The successor's states are read for each state of
                        // this placement: ask for their cells now (they lie
                        // anywhere in the partner slice, tens of megabytes).
                        for g in (start..start + per).step_by(8) {
                            work.prefetch(g as usize);
                        }
                        let count1 = Some(KingCount {
                            square: to,
                            count: 1,
                        });
                        let code1 = ix.three_move_code(Side::Black, false, kings, count1);
                        self.known.push(Known {
                            king,
                            to,
                            start,
                            code1,
                        });
                        known += 1;
                    }
                });
            }
            self.known_of_king.push(known);
        }
    }

    /// Fill `leaving` for every carried combination at once: first locate
    /// every successor value and ask for it, then read them. They lie in
    /// tables of hundreds of megabytes, so reading each as soon as it was
    /// located waited on memory every time (about a third of the
    /// initialisation's own time on the KKMvKK pair).
    ///
    /// A combination whose states are all over needs no summary: it is the
    /// one whose state with the side to move's three-move state "none" (no
    /// king blocked, so every move legal) is over.
    fn summarise_leaving(&mut self, ix: &MaterialIndex, next: &PairTable, solved: &Solved) {
        let carried = ix.carried_counters() as usize;
        self.leaving.clear();
        self.leaving.resize(carried, None);
        self.sources.clear();
        let has_moves = self.internal > 0 || !self.moves.is_empty();
        for c in 0..carried {
            let mut pos = self.pos;
            ix.set_counters(&mut pos, c as u64);
            if pos.outcome_with(has_moves).is_some() {
                continue;
            }
            self.leaving[c] = Some(Leaving::NONE);
            for m in self.moves.iter() {
                let src = Source::of(
                    &pos,
                    m,
                    next,
                    solved,
                    &mut self.solved_cache,
                    &mut self.next_cache,
                );
                src.prefetch(next, solved);
                self.sources.push((c as u32, src));
            }
        }
        for &(c, src) in &self.sources {
            if let Some(l) = &mut self.leaving[c as usize] {
                l.add(src.read(next, solved));
            }
        }
    }
}

/// Where the value of a move that leaves the batch is read.
#[derive(Copy, Clone, Debug)]
enum Source {
    /// The move took the opponent's last piece: the successor is lost at once.
    LastPiece,
    /// A capture or promotion: table number and index in [`Solved`].
    Solved(u32, u64),
    /// A man move: index in the other table of the pair.
    Next(u64),
}

impl Source {
    /// Where the value of `pos` after `m` (a move that leaves the batch) is.
    #[inline]
    fn of(
        pos: &Position,
        m: &Move,
        next: &PairTable,
        solved: &Solved,
        solved_cache: &mut PlacementCache,
        next_cache: &mut PlacementCache,
    ) -> Source {
        debug_assert!(!is_internal(m));
        let child = pos.play(m);
        if m.is_capture() || m.promotes() {
            // A finished table holds the adjudicated value of every state
            // where the game is over (no legal move, seven-move draw, ...), so
            // no move generation is needed here (it took 4% of a pair's time);
            // `verify` re-derives those values with [`Position::outcome`].
            if child.pieces(child.turn()).is_empty() {
                return Source::LastPiece;
            }
            let (t, i) = solved.locate(&child, solved_cache);
            Source::Solved(t, i)
        } else {
            let (_, base) = next_cache.get(&child, || {
                (0, next.index.placement_base(&white_to_move(&child)))
            });
            Source::Next(base + next.index.counters_offset(&child))
        }
    }

    #[inline]
    fn prefetch(self, next: &PairTable, solved: &Solved) {
        match self {
            Source::LastPiece => {}
            Source::Solved(t, i) => solved.prefetch(t, i),
            Source::Next(i) => next.prefetch(i),
        }
    }

    /// The successor's value, for its side to move.
    #[inline]
    fn read(self, next: &PairTable, solved: &Solved) -> Value {
        match self {
            Source::LastPiece => Value {
                wdl: Wdl::Loss,
                dtw: 0,
            },
            Source::Solved(t, i) => solved.at(t, i),
            Source::Next(i) => Value::unpack(next.get(i)).unwrap_or_else(|| {
                panic!(
                    "{}: state {i} read before its slice {} was solved",
                    next.material,
                    i / next.slice_len
                )
            }),
        }
    }
}

/// The values of the moves of a state that lead out of the batch (man moves,
/// captures, promotions), seen from the side that plays them.
#[derive(Copy, Clone, Debug)]
struct Leaving {
    /// Plies to the shortest win ([`NO_WIN`] if none).
    best_win: u16,
    /// The longest of the opponent's wins.
    longest: u16,
    /// Some move draws.
    draw: bool,
}

impl Leaving {
    /// No move leaves the batch.
    const NONE: Leaving = Leaving {
        best_win: NO_WIN,
        longest: 0,
        draw: false,
    };

    /// The value of a state whose every move is one of these.
    #[inline]
    fn value(self) -> Value {
        if self.best_win != NO_WIN {
            Value {
                wdl: Wdl::Win,
                dtw: self.best_win,
            }
        } else if self.draw {
            Value {
                wdl: Wdl::Draw,
                dtw: 0,
            }
        } else {
            Value {
                wdl: Wdl::Loss,
                dtw: self.longest + 1,
            }
        }
    }

    /// Count one move whose successor has value `v` (for the opponent).
    #[inline]
    fn add(&mut self, v: Value) {
        match v.wdl {
            Wdl::Loss => self.best_win = self.best_win.min(v.dtw + 1),
            Wdl::Win => self.longest = self.longest.max(v.dtw),
            Wdl::Draw => self.draw = true,
        }
    }
}

/// An ordinary king move: the only kind that stays inside the batch (it
/// keeps the men where they are).
#[inline]
fn is_internal(m: &Move) -> bool {
    m.is_king_move() && !m.is_capture()
}

/// Whether `m`, legal in a position with no counters set, is still legal when
/// the three-move rule blocks king `blocked`. Counters change the legal moves
/// only that way: the blocked king loses its ordinary moves (2h-I); captures,
/// being compulsory, are unaffected (and the seven-move rule ends the game
/// rather than restricting moves, see [`Position::outcome`]).
#[inline]
#[cfg(test)]
fn legal_with_block(m: &Move, blocked: Option<Square>) -> bool {
    !(is_internal(m) && Some(m.from()) == blocked)
}

/// Initialise state `g` (position `pos`, whose counters carried over by a
/// move that leaves the batch are combination `carried`).
///
/// The moves come from `scratch`, generated once for the placement: counters
/// change the legal moves only by the three-move rule blocking one king's
/// ordinary moves (2h-I; captures, being compulsory, are unaffected, and the
/// seven-move rule ends the game rather than restricting moves, see
/// [`Position::outcome`]). A move that leaves the batch resets the mover's
/// three-move state, so its successor depends only on the `carried`
/// counters: their values are looked up once for all states sharing them.
/// King moves into capture placements (`scratch.known`) are read from the
/// first pass's values.
#[allow(clippy::too_many_arguments)]
fn init_state(
    w: &Work,
    g: u64,
    pos: &Position,
    carried: u64,
    has_relays: bool,
    next: &PairTable,
    solved: &Solved,
    scratch: &mut InitScratch,
    out: &mut Vec<(u16, Entry)>,
) {
    let gi = g as usize;
    // The three-move rule only takes the blocked king's ordinary moves away.
    let blocked = pos.blocked_king();
    let internal = match blocked {
        None => scratch.internal,
        Some(b) => {
            let of_blocked = scratch.king_moves.iter().find(|&&(k, _)| k == b);
            scratch.internal - of_blocked.map_or(0, |&(_, n)| n)
        }
    };
    let leaves = !scratch.moves.is_empty();
    if let Some(o) = pos.outcome_with(internal > 0 || leaves) {
        match o.wdl {
            Wdl::Loss => out.push((0, g)),
            _ => w.set(
                gi,
                Cell::OPEN.with_result(Value { wdl: o.wdl, dtw: 0 }.pack()),
            ),
        }
        return;
    }
    let mut leaving = match scratch.leaving[carried as usize] {
        Some(l) => l,
        None => {
            let l = leaving_moves(pos, next, solved, scratch);
            scratch.leaving[carried as usize] = Some(l);
            l
        }
    };
    // King moves into capture placements: the successor's value is known.
    let tracked = pos.three_move(Side::White);
    let mut known = 0;
    if !scratch.known.is_empty() {
        let ix = &next.index;
        // The successor has Black to move, whose three-move state is unchanged.
        let t_stm = ix.three_move_code(
            Side::Black,
            true,
            pos.kings(Side::Black),
            pos.three_move(Side::Black),
        );
        let plain = ix.draw_counters() == 1;
        for k in &scratch.known {
            if Some(k.king) == blocked {
                continue;
            }
            let child = k.start + known_counters(ix, pos, k, t_stm, plain);
            let v = Value::unpack(Cell(w.cells[child as usize].load(Relaxed)).result())
                .expect("capture placements are solved in the first pass");
            leaving.add(v);
            known += 1;
        }
    }
    let Leaving {
        best_win,
        longest,
        draw,
    } = leaving;
    // The options still open: king moves into placements that are not
    // solved yet. With relay nodes, each free king other than the tracked
    // one is one option (its [`Fresh`] node, if any of its moves is open);
    // the tracked king's further moves, if it may make more, stay one
    // option each.
    let options = if has_relays {
        scratch
            .king_moves
            .iter()
            .zip(&scratch.known_of_king)
            .map(|(&(k, n), &kn)| match tracked {
                Some(kc) if kc.square == k => {
                    if kc.count < THREE_MOVE_LIMIT {
                        n - kn
                    } else {
                        0
                    }
                }
                _ => u32::from(n > kn),
            })
            .sum()
    } else {
        internal - known
    };
    if options == 0 {
        if best_win != NO_WIN {
            w.set(gi, Cell::OPEN.with_best_win(best_win));
            out.push((best_win, WIN_BIT | g));
        } else if draw {
            let draw = Value {
                wdl: Wdl::Draw,
                dtw: 0,
            };
            w.set(gi, Cell::OPEN.with_result(draw.pack()));
        } else {
            out.push((longest + 1, g));
        }
        return;
    }
    // A drawing escape counts as a reply that is never refuted.
    w.set(
        gi,
        Cell::OPEN
            .with_remaining((options + u32::from(draw)) as u8)
            .with_longest_reply(longest)
            .with_best_win(best_win),
    );
    if best_win != NO_WIN {
        out.push((best_win, WIN_BIT | g));
    }
}

/// The counter offset, in `ix` (the successor's index), of the state that
/// the known king move `k` leads to from `pos` (White to move), given the
/// code `t_stm` of Black's three-move state there; `plain` if `ix` has no
/// draw counter. The successor's three-move state for White is the moved
/// king's, counting on if it was the tracked one.
#[inline]
fn known_counters(ix: &MaterialIndex, pos: &Position, k: &Known, t_stm: u64, plain: bool) -> u64 {
    let off = if plain {
        let count = match pos.three_move(Side::White) {
            Some(kc) if kc.square == k.king => kc.count as u64 + 1,
            _ => 1,
        };
        let t_opp = if k.code1 == 0 { 0 } else { k.code1 + count - 1 };
        ix.counters_offset_of(t_stm, t_opp, 0)
    } else {
        // A draw counter (two or three kings only): let `play` count it.
        ix.counters_offset(&pos.play(&Move::quiet(k.king, k.to, true, false)))
    };
    debug_assert_eq!(
        off,
        ix.counters_offset(&pos.play(&Move::quiet(k.king, k.to, true, false)))
    );
    off
}

/// The summary of the moves of `pos` that leave the batch, read from
/// finished values: captures and promotions from earlier tables, man moves
/// from slices with the men further advanced (solved before this batch).
/// [`InitScratch::summarise_leaving`] does this for all carried combinations
/// of a placement at once; this is for a state it left out.
fn leaving_moves(
    pos: &Position,
    next: &PairTable,
    solved: &Solved,
    scratch: &mut InitScratch,
) -> Leaving {
    let mut l = Leaving::NONE;
    for m in scratch.moves.iter() {
        let src = Source::of(
            pos,
            m,
            next,
            solved,
            &mut scratch.solved_cache,
            &mut scratch.next_cache,
        );
        l.add(src.read(next, solved));
    }
    l
}

fn work_path(dir: &Path, m: Material, rules: RuleSet, ext: &str) -> PathBuf {
    dir.join(format!("{m}.{}.{ext}", rules.name()))
}

/// Solve the pair `{m, m.flip()}` slice by slice into work files in `dir`, then
/// write its tables. Resumes from the work files of an interrupted run, which
/// record the finished batches every `checkpoint_every` and at the end.
pub fn solve_pair(
    m: Material,
    rules: RuleSet,
    dir: &Path,
    solved: &Solved,
    checkpoint_every: Duration,
    progress: &dyn Progress,
) -> Result<Vec<TableStats>, GenerateError> {
    let mats: Vec<Material> = if m.flip() == m {
        vec![m]
    } else {
        vec![m, m.flip()]
    };
    let io = |path: &Path, source: std::io::Error| {
        GenerateError::Table(TableError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let indexes: Vec<MaterialIndex> = mats.iter().map(|&x| MaterialIndex::new(x, rules)).collect();
    let batches = batches(&indexes.iter().collect::<Vec<_>>(), BATCH_STATES);
    // The marker names the plan it counts batches of, so that work files are
    // only resumed by a run that solves the same batches in the same order.
    let mut plan = table::Fnv::default();
    plan.update(
        format!(
            "{} {} {}",
            table::INDEX_VERSION,
            BATCH_STATES,
            batches.len()
        )
        .as_bytes(),
    );
    for batch in &batches {
        for p in &batch.parts {
            plan.update(&[p.table as u8]);
            plan.update(&p.slice.to_le_bytes());
        }
        plan.update(b";");
    }
    let plan = format!("{:016x}", plan.0);
    let marker = work_path(dir, m, rules, "progress");
    let done_batches: usize = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|t| {
            let (n, hash) = t.trim().split_once(' ')?;
            (hash == plan).then(|| n.parse().ok()).flatten()
        })
        .unwrap_or(0);
    let mut tables = Vec::new();
    for (&mat, index) in mats.iter().zip(indexes) {
        let path = work_path(dir, mat, rules, "work");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(done_batches == 0)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        file.set_len(index.size() * 2).map_err(|e| io(&path, e))?;
        // Safety: the work file is private to this run (a name no reader opens) and
        // is not resized while mapped.
        let store = unsafe { MmapMut::map_mut(&file) }.map_err(|e| io(&path, e))?;
        let slice_len = index.slice_len();
        tables.push(PairTable {
            material: mat,
            index,
            slice_len,
            store,
        });
    }
    // Batches lay out slices of both tables at multiples of one length.
    assert!(tables.iter().all(|t| t.slice_len == tables[0].slice_len));
    let skipped: u64 = batches[..done_batches.min(batches.len())]
        .iter()
        .flat_map(|b| &b.parts)
        .map(|p| tables[p.table].slice_len)
        .sum();
    progress.resumed(skipped);
    let mut last_checkpoint = Instant::now();
    let mut spare = Spare::default();
    // Counts of the values written by this run: all of them unless it resumed.
    let mut tallies = vec![Tally::default(); tables.len()];
    for (b, batch) in batches.iter().enumerate().skip(done_batches) {
        let tally = solve_batch(&mut tables, batch, solved, &mut spare, &|n| {
            progress.advance(n)
        })?;
        for (total, t) in tallies.iter_mut().zip(tally) {
            *total = total.merge(t);
        }
        if b == done_batches {
            trim_pool();
        }
        // Make the finished batches durable, then record them: after the last
        // batch, and otherwise at most every `checkpoint_every` (syncing after
        // every batch cost several percent of the time).
        if b + 1 == batches.len() || last_checkpoint.elapsed() >= checkpoint_every {
            for t in &tables {
                t.store
                    .flush()
                    .map_err(|e| io(&work_path(dir, t.material, rules, "work"), e))?;
            }
            std::fs::write(&marker, format!("{} {plan}\n", b + 1)).map_err(|e| io(&marker, e))?;
            last_checkpoint = Instant::now();
        }
        for t in &tables {
            // Safety: no slice of the mapping is borrowed here. For a shared
            // file mapping MADV_DONTNEED only unmaps the pages: dirty ones stay
            // in the page cache, to be written back (or synced at the next
            // checkpoint), and later reads fault them back in, so no data is
            // lost. It keeps the resident size to what one batch touches
            // instead of growing to both work files.
            let _ = unsafe { t.store.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
    }
    // Read the work files back with positioned reads rather than through the
    // mappings, so that the pass over them does not make them resident.
    let materials: Vec<(Material, u64)> = tables
        .iter()
        .map(|t| (t.material, t.index.size()))
        .collect();
    drop(tables);
    let mut out = Vec::new();
    for ((mat, states), tally) in materials.into_iter().zip(tallies) {
        let path = work_path(dir, mat, rules, "work");
        let file = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
        let failed = std::sync::Mutex::new(None);
        let read = |start: u64, len: usize| {
            use std::os::unix::fs::FileExt;
            let mut bytes = vec![0u8; 2 * len];
            if let Err(e) = file.read_exact_at(&mut bytes, 2 * start) {
                failed.lock().unwrap().get_or_insert(e);
                return vec![NOT_READ; len];
            }
            bytes
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect::<Vec<u16>>()
        };
        let tally = (done_batches == 0).then_some(tally);
        let st = write_tables_from(dir, mat, rules, states, &read, tally);
        if let Some(e) = failed.into_inner().unwrap() {
            // The tables written from unreadable values are not kept.
            for metric in [Metric::Wdl, Metric::Dtw] {
                let _ = std::fs::remove_file(dir.join(table::file_name(mat, rules, metric)));
            }
            return Err(io(&path, e));
        }
        let st = st?;
        progress.done(&st);
        out.push(st);
    }
    for &mat in &mats {
        let _ = std::fs::remove_file(work_path(dir, mat, rules, "work"));
    }
    let _ = std::fs::remove_file(&marker);
    Ok(out)
}

/// Win, draw and loss counts and the longest win of a run of values.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Counts {
    pub(crate) wins: u64,
    pub(crate) draws: u64,
    pub(crate) losses: u64,
    pub(crate) longest_win: u32,
}

impl Counts {
    /// The counts of two parts of a table together.
    fn merge(self, o: Counts) -> Counts {
        Counts {
            wins: self.wins + o.wins,
            draws: self.draws + o.draws,
            losses: self.losses + o.losses,
            longest_win: self.longest_win.max(o.longest_win),
        }
    }

    #[inline]
    pub(crate) fn add(&mut self, v: Value) {
        match v.wdl {
            Wdl::Win => {
                self.wins += 1;
                self.longest_win = self.longest_win.max(v.dtw as u32);
            }
            Wdl::Draw => self.draws += 1,
            Wdl::Loss => self.losses += 1,
        }
    }
}

/// A table's counts and its largest DTW (which decides the DTW file's value
/// width), gathered while its values are written or read.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Tally {
    counts: Counts,
    max_dtw: u16,
}

impl Tally {
    #[inline]
    fn add(&mut self, v: Value) {
        self.counts.add(v);
        self.max_dtw = self.max_dtw.max(v.dtw);
    }

    fn merge(self, o: Tally) -> Tally {
        Tally {
            counts: self.counts.merge(o.counts),
            max_dtw: self.max_dtw.max(o.max_dtw),
        }
    }
}

/// Statistics of a solved table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TableStats {
    /// Material name.
    pub material: String,
    /// Rule set name.
    pub rules: String,
    /// Number of states.
    pub states: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Drawn.
    pub draws: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Longest win in plies.
    pub longest_win: u32,
    /// FNV-1a 64 over every state's (WDL byte, DTW as u16 little-endian), as hex.
    pub checksum: String,
}

impl TableStats {
    /// The table's line in `tables/MANIFEST`:
    /// `rules material states wins draws losses longest_win checksum`.
    pub fn manifest_line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {}",
            self.rules,
            self.material,
            self.states,
            self.wins,
            self.draws,
            self.losses,
            self.longest_win,
            self.checksum
        )
    }
}

/// Statistics and the manifest checksum of packed values.
pub fn stats(material: Material, rules: RuleSet, values: &[u16]) -> TableStats {
    stats_from(material, rules, values.len() as u64, &|start, len| {
        values[start as usize..start as usize + len].to_vec()
    })
    .0
}

/// Statistics of packed values read on demand, and the largest DTW.
fn stats_from(
    material: Material,
    rules: RuleSet,
    states: u64,
    read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync),
) -> (TableStats, u16) {
    let tally = counts_from(states, read);
    let st = stats_with(
        material,
        rules,
        states,
        tally.counts,
        manifest_checksum(states, read),
    );
    (st, tally.max_dtw)
}

/// States per read of a pass over a table: small enough that the buffers
/// come from the allocator's free lists (with 1 << 20 they were the largest
/// fresh allocations while the KKMvKM pair's files were written, of which
/// the kernel's zeroing of fresh pages took 7%).
const STATS_CHUNK: u64 = 1 << 15;

/// The counts of wins, draws and losses, the longest win and the largest
/// DTW of packed values read on demand (in parallel).
fn counts_from(states: u64, read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync)) -> Tally {
    (0..states.div_ceil(STATS_CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * STATS_CHUNK;
            let mut tally = Tally::default();
            for v in read(start, (states - start).min(STATS_CHUNK) as usize) {
                tally.add(Value::unpack(v).expect("solved"));
            }
            tally
        })
        .reduce(Tally::default, Tally::merge)
}

/// The manifest checksum (FNV-1a 64 over each state's WDL byte and DTW as
/// u16 little-endian, in index order): serial by its nature.
fn manifest_checksum(states: u64, read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync)) -> u64 {
    let mut sum = table::Fnv::default();
    for start in (0..states).step_by(STATS_CHUNK as usize) {
        for v in read(start, (states - start).min(STATS_CHUNK) as usize) {
            let v = Value::unpack(v).expect("solved");
            let dtw = v.dtw.to_le_bytes();
            sum.update(&[v.wdl as u8, dtw[0], dtw[1]]);
        }
    }
    sum.0
}

fn stats_with(
    material: Material,
    rules: RuleSet,
    states: u64,
    counts: Counts,
    checksum: u64,
) -> TableStats {
    TableStats {
        material: material.to_string(),
        rules: rules.name().to_string(),
        states,
        wins: counts.wins,
        draws: counts.draws,
        losses: counts.losses,
        longest_win: counts.longest_win,
        checksum: format!("{checksum:016x}"),
    }
}

/// Write the WDL and DTW files of a solved table into `dir`.
pub fn write_tables(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    values: &[u16],
) -> Result<TableStats, GenerateError> {
    let read = |start: u64, len: usize| values[start as usize..start as usize + len].to_vec();
    write_tables_from(dir, material, rules, values.len() as u64, &read, None)
}

/// Write the WDL and DTW files of a table whose packed values are read on demand.
fn write_tables_from(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    states: u64,
    read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync),
    tally: Option<Tally>,
) -> Result<TableStats, GenerateError> {
    let Tally { counts: c, max_dtw } = tally.unwrap_or_else(|| counts_from(states, read));
    let counts = (c.wins, c.draws, c.losses);
    let wdl = |start: u64, len: usize| -> Vec<u16> {
        let mut values = read(start, len);
        for v in &mut values {
            *v = Value::unpack(*v).expect("solved").wdl as u16;
        }
        values
    };
    // Called once per block: a drawn state repeats the DTW before it in the
    // block (a draw at the start takes the block's first DTW of a decided
    // state), so that draws do not break the runs zstd compresses.
    let dtw = |start: u64, len: usize| -> Vec<u16> {
        let mut values = read(start, len);
        let unpack = |v: u16| Value::unpack(v).expect("solved");
        let mut last = values
            .iter()
            .map(|&v| unpack(v))
            .find(|v| v.wdl != Wdl::Draw)
            .map_or(0, |v| v.dtw);
        for v in &mut values {
            let value = unpack(*v);
            if value.wdl != Wdl::Draw {
                last = value.dtw;
            }
            *v = last;
        }
        values
    };
    let sources: [(Metric, ValueSource<'_>, u16); 2] =
        [(Metric::Dtw, &dtw, max_dtw), (Metric::Wdl, &wdl, 2)];
    let write = || -> Result<(), GenerateError> {
        for (metric, values, max_value) in sources {
            let path = dir.join(table::file_name(material, rules, metric));
            table::write_table(
                &path,
                &TableData {
                    metric,
                    rules,
                    material,
                    states,
                    values,
                    max_value,
                    counts,
                    longest_win: c.longest_win,
                },
            )?;
        }
        Ok(())
    };
    // The manifest checksum is serial: one thread computes it while the
    // others compress (it was 15% of writing a pair's files).
    let (checksum, written) = rayon::join(|| manifest_checksum(states, read), write);
    written?;
    Ok(stats_with(material, rules, states, c, checksum))
}

/// Whether both files of a table exist and open cleanly.
pub fn is_complete(dir: &Path, material: Material, rules: RuleSet) -> bool {
    [Metric::Wdl, Metric::Dtw].iter().all(|&metric| {
        let path = dir.join(table::file_name(material, rules, metric));
        TableFile::open_expecting(&path, material, rules, metric).is_ok()
    })
}

/// The decoded values of a finished table (packed as `Value::pack` does).
pub fn load_values(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<Vec<u16>, GenerateError> {
    let mut out = vec![0u16; table_states(dir, material, rules)? as usize];
    decode_values_into(dir, material, rules, &mut out)?;
    Ok(out)
}

fn open_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    metric: Metric,
) -> Result<TableFile, GenerateError> {
    let path = dir.join(table::file_name(material, rules, metric));
    if !path.exists() {
        return Err(GenerateError::Missing(table::file_name(
            material, rules, metric,
        )));
    }
    Ok(TableFile::open_expecting(&path, material, rules, metric)?)
}

/// The number of states of a finished table (from its WDL file's header).
fn table_states(dir: &Path, material: Material, rules: RuleSet) -> Result<u64, GenerateError> {
    Ok(open_table(dir, material, rules, Metric::Wdl)?
        .header()
        .states)
}

/// Decode a finished table's values into `out`, which must have one slot per
/// state. A group of blocks at a time, WDL first and then DTW merged in place, so the peak
/// is the packed values alone.
fn decode_values_into(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    out: &mut [u16],
) -> Result<(), GenerateError> {
    let wdl_file = open_table(dir, material, rules, Metric::Wdl)?;
    let dtw_file = open_table(dir, material, rules, Metric::Dtw)?;
    // `decode_into` checks that each file has one value per slot of `out`.
    wdl_file.decode_into(out, |v, w| {
        let wdl = match w {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            _ => Wdl::Win,
        };
        *v = Value { wdl, dtw: 0 }.pack();
    })?;
    // A draw's DTW is 0, whatever the file holds there (see `Metric::Dtw`).
    let draw = Value {
        wdl: Wdl::Draw,
        dtw: 0,
    }
    .pack();
    dtw_file.decode_into(out, |v, d| {
        if *v != draw {
            *v |= d
        }
    })?;
    Ok(())
}

/// Decoded values in anonymous memory that asks for transparent huge pages.
/// Generation and verification look successors up at random across tables of
/// several GB; with 2 MiB pages the TLB covers them far better (measured: a
/// random lookup in 2 GiB takes 59 ns instead of 103 ns, BENCHMARKS.md).
pub(crate) struct ValueArray {
    map: HugeMap,
    len: usize,
}

impl ValueArray {
    /// `len` values, holding anything: for decoding into, which sets them all.
    fn for_decoding(len: usize) -> std::io::Result<ValueArray> {
        Ok(ValueArray {
            map: huge_anon(2 * len, false)?,
            len,
        })
    }

    fn as_mut_slice(&mut self) -> &mut [u16] {
        // Safety: the mapping is page-aligned (so aligned for u16) and at
        // least 2 * len bytes long (any bits are a valid u16), and it is
        // borrowed mutably here.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<u16>(), self.len) }
    }
}

impl std::ops::Deref for ValueArray {
    type Target = [u16];
    #[inline]
    fn deref(&self) -> &[u16] {
        // Safety: as in `as_mut_slice`; the borrow of `self` keeps the mapping alive.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<u16>(), self.len) }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Rule set.
    pub rules: RuleSet,
    /// Output directory.
    pub dir: PathBuf,
    /// Materials (with their flips) to solve, in build order; complete ones are skipped.
    pub materials: Vec<Material>,
    /// Memory the generator may use, in bytes (default: what the system reports available).
    pub memory_limit: Option<u64>,
    /// How often an interrupted run's work is made durable, so that a new run
    /// resumes from it (default [`CHECKPOINT_EVERY`]); a pair's work is always
    /// recorded when the pair is solved.
    pub checkpoint_every: Duration,
}

/// Default of [`Plan::checkpoint_every`]: an interruption loses at most about a minute.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Bytes of working memory per state of a batch: the per-state atomic word
/// (8 bytes), about one and a half bucket entries (8 bytes each), the relay
/// nodes (at most 3/10 of a word per state) and the bitset that orders the
/// buckets (2 bits).
pub const BYTES_PER_BATCH_STATE: u64 = 23;

/// Estimated peak memory for solving the pair of `m`: one batch of slices, the
/// decoded sub-tables, the compressed blocks of the output, and the work files
/// (memory-mapped, 2 bytes per state; the kernel may page them out, but they are
/// counted so that a run never depends on that).
pub fn memory_estimate(m: Material, rules: RuleSet) -> u64 {
    let pair = if m == m.flip() {
        vec![m]
    } else {
        vec![m, m.flip()]
    };
    let indexes: Vec<MaterialIndex> = pair.iter().map(|&x| MaterialIndex::new(x, rules)).collect();
    let states: u64 = indexes.iter().map(|ix| ix.size()).sum();
    let largest_slice_pair: u64 = indexes.iter().map(|ix| ix.slice_len()).sum();
    let batch = BATCH_STATES.max(largest_slice_pair).min(states);
    let mut subs: Vec<Material> = pair.iter().flat_map(|&x| successor_materials(x)).collect();
    subs.sort();
    subs.dedup();
    let sub_states: u64 = subs
        .iter()
        .map(|&x| MaterialIndex::new(x, rules).size())
        .sum();
    batch * BYTES_PER_BATCH_STATE + sub_states * 2 + states * 2 + states / 8
}

/// Memory the system reports available, in bytes (Linux), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Plan {
    /// Every material up to `max_pieces`.
    pub fn all(rules: RuleSet, dir: &Path, max_pieces: u32) -> Plan {
        Plan {
            rules,
            dir: dir.to_path_buf(),
            materials: Material::all(max_pieces),
            memory_limit: None,
            checkpoint_every: CHECKPOINT_EVERY,
        }
    }

    /// One material, its flip, and everything they depend on.
    pub fn material(rules: RuleSet, dir: &Path, m: Material) -> Plan {
        let mut need = vec![m, m.flip()];
        let mut i = 0;
        while i < need.len() {
            for s in successor_materials(need[i]) {
                for x in [s, s.flip()] {
                    if !need.contains(&x) {
                        need.push(x);
                    }
                }
            }
            i += 1;
        }
        let materials = Material::all(m.pieces())
            .into_iter()
            .filter(|x| need.contains(x))
            .collect();
        Plan {
            rules,
            dir: dir.to_path_buf(),
            materials,
            memory_limit: None,
            checkpoint_every: CHECKPOINT_EVERY,
        }
    }

    /// The pairs still to solve (the first material of each), skipping complete ones.
    pub fn pending(&self) -> Vec<Material> {
        let mut out: Vec<Material> = Vec::new();
        for &m in &self.materials {
            if out.contains(&m.flip()) || out.contains(&m) {
                continue;
            }
            if is_complete(&self.dir, m, self.rules) && is_complete(&self.dir, m.flip(), self.rules)
            {
                continue;
            }
            out.push(m);
        }
        out
    }
}

/// Events reported while generating.
pub trait Progress: Sync {
    /// A pair starts: its first material and the states of the pair.
    fn start(&self, _material: Material, _states: u64) {}
    /// States initialised so far in the current pair.
    fn advance(&self, _states: u64) {}
    /// States of the current pair already solved by an interrupted run.
    fn resumed(&self, _states: u64) {}
    /// A table was written.
    fn done(&self, _stats: &TableStats) {}
    /// A pair was not attempted (it would need more memory than allowed).
    fn refused(&self, _why: &GenerateError) {}
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

/// Generate every pending table of the plan, in build order. A pair that would need
/// more memory than allowed is reported through [`Progress::refused`] and skipped
/// (so are the pairs that depend on it, which then fail to find it).
pub fn run(plan: &Plan, progress: &dyn Progress) -> Result<Vec<TableStats>, GenerateError> {
    std::fs::create_dir_all(&plan.dir).map_err(|source| GenerateError::Dir {
        path: plan.dir.clone(),
        source,
    })?;
    let mut written = Vec::new();
    let limit = plan.memory_limit.or_else(available_memory);
    for m in plan.pending() {
        if let Some(limit) = limit {
            let needed = memory_estimate(m, plan.rules);
            if needed > limit {
                const GIB: f64 = (1u64 << 30) as f64;
                // Refuse this pair before allocating anything, and go on with the others.
                progress.refused(&GenerateError::TooBig {
                    material: m,
                    needed_gib: needed as f64 / GIB,
                    limit_gib: limit as f64 / GIB,
                });
                continue;
            }
        }
        let mut needed = successor_materials(m);
        needed.extend(successor_materials(m.flip()));
        let solved = match Solved::load(&plan.dir, plan.rules, &needed) {
            Ok(solved) => solved,
            // A table this pair needs was itself refused: skip this pair too.
            Err(err @ GenerateError::Missing(_)) => {
                progress.refused(&err);
                continue;
            }
            Err(err) => return Err(err),
        };
        let states = MaterialIndex::new(m, plan.rules).size() * if m == m.flip() { 1 } else { 2 };
        progress.start(m, states);
        written.extend(solve_pair(
            m,
            plan.rules,
            &plan.dir,
            &solved,
            plan.checkpoint_every,
            progress,
        )?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retro::for_each_king_retro_move;

    /// The successor of a king move as the second initialisation pass finds
    /// it (kings ranked within the partner slice, counters from codes) is
    /// the state `Position::play` leads to, for every ordinary king move of
    /// sampled states without a capture, in materials with each kind of counter.
    #[test]
    fn known_successor_indexes_match_the_positions() {
        let mut checked = 0;
        for rules in [RuleSet::Official, RuleSet::Lidraughts] {
            for name in [
                "KMvKM", "KKMvK", "KMvKK", "KKvK", "KvKK", "KvK", "KKMvKM", "KMvKKM", "KKKMvK",
            ] {
                let m: Material = name.parse().unwrap();
                let ix = MaterialIndex::new(m, rules);
                let next = MaterialIndex::new(m.flip(), rules);
                let plain = next.draw_counters() == 1;
                for idx in (0..ix.size()).step_by((ix.size() / 20_000).max(1) as usize) {
                    let pos = ix.position(idx);
                    if pos.has_capture() || pos.outcome().is_some() {
                        continue;
                    }
                    let (white, black) = (pos.kings(Side::White), pos.kings(Side::Black));
                    let men = pos.men(Side::White) | pos.men(Side::Black);
                    let t_stm =
                        next.three_move_code(Side::Black, true, black, pos.three_move(Side::Black));
                    for king in white.squares() {
                        if Some(king) == pos.blocked_king() {
                            continue;
                        }
                        for_each_free_diagonal_square(king, !pos.occupied(), |to| {
                            let kings = white.without(king).with(to);
                            let count1 = Some(KingCount {
                                square: to,
                                count: 1,
                            });
                            let k = Known {
                                king,
                                to,
                                start: 0,
                                code1: next.three_move_code(Side::Black, false, kings, count1),
                            };
                            let child = pos.play(&Move::quiet(king, to, true, false));
                            let base = next.placement_base(&child.flip());
                            assert_eq!(
                                base % next.slice_len(),
                                next.flipped_kings_offset(men, kings, black),
                                "{name} {rules:?} state {idx}: {king}-{to}"
                            );
                            assert_eq!(
                                base + known_counters(&next, &pos, &k, t_stm, plain),
                                next.index(&child),
                                "{name} {rules:?} state {idx}: {king}-{to}"
                            );
                            checked += 1;
                        });
                    }
                }
            }
        }
        assert!(checked > 100_000, "only {checked} moves checked");
    }

    /// The predecessors' indexes computed from counter codes equal those of
    /// the predecessor positions themselves, for every king retro-move of
    /// sampled states of materials with each kind of counter.
    #[test]
    fn predecessor_indexes_from_codes_match_the_positions() {
        let mut checked = 0;
        for rules in [RuleSet::Official, RuleSet::Lidraughts] {
            for name in [
                "KMvKM", "KKMvK", "KMvKK", "KKvK", "KvKK", "KvK", "KKMvKM", "KMvKKM",
            ] {
                let m: Material = name.parse().unwrap();
                let ix = MaterialIndex::new(m, rules);
                let pred_ix = MaterialIndex::new(m.flip(), rules);
                for idx in (0..ix.size()).step_by((ix.size() / 20_000).max(1) as usize) {
                    let pos = ix.position(idx);
                    let Some(undoing) = Undoing::new(&pos) else {
                        continue;
                    };
                    let preds = PredecessorCounters::new(&pred_ix, &undoing, &pos);
                    for_each_king_retro_move(&pos, |from, to| {
                        if !undoing.king_may_have_moved_to(to) {
                            return;
                        }
                        let p = moved(&pos, undoing.mover(), from, to, true);
                        let base = pred_ix.placement_base(&p.flip());
                        let mut fast = Vec::new();
                        preds.for_each(p.kings(undoing.mover()), from, to, |o| fast.push(base + o));
                        let mut slow = Vec::new();
                        undoing.emit(&pos, from, to, true, &mut |q: &Position| {
                            slow.push(pred_ix.index(q))
                        });
                        assert_eq!(fast, slow, "{name} {rules:?} state {idx}, {from:?}-{to:?}");
                        checked += fast.len();
                    });
                }
            }
        }
        assert!(checked > 100_000, "only {checked} predecessors checked");
    }

    #[test]
    fn relay_nodes_stand_for_the_predecessors_by_a_fresh_king_move() {
        // For states whose mover's king is tracked at count 1, the relay node
        // that the propagation updates must have as parents exactly the
        // predecessors by that king move (checked here with the whole table
        // as one part of a batch).
        let mut checked = 0;
        for rules in [RuleSet::Official, RuleSet::Lidraughts] {
            for name in ["KvKKM", "KMvKKM", "KvKKKM", "MvKKM"] {
                let m: Material = name.parse().unwrap();
                let ix = MaterialIndex::new(m, rules);
                let pred_ix = MaterialIndex::new(m.flip(), rules);
                let fresh = Fresh::of(&pred_ix).expect("the mover has men and two kings or more");
                let len = pred_ix.size();
                let per_part = fresh.per_part(len);
                for idx in (0..ix.size()).step_by((ix.size() / 20_000).max(1) as usize) {
                    let pos = ix.position(idx);
                    let Some(undoing) = Undoing::new(&pos) else {
                        continue;
                    };
                    let mover = undoing.mover();
                    if !matches!(pos.three_move(mover), Some(kc) if kc.count == 1) {
                        continue;
                    }
                    let preds = PredecessorCounters::new(&pred_ix, &undoing, &pos);
                    for_each_king_retro_move(&pos, |from, to| {
                        if !undoing.king_may_have_moved_to(to) {
                            return;
                        }
                        let p = moved(&pos, mover, from, to, true);
                        let start = pred_ix.placement_base(&p.flip());
                        let tracked = Some(KingCount {
                            square: from,
                            count: 1,
                        });
                        let code = pred_ix.three_move_code(mover, true, p.kings(mover), tracked);
                        let node =
                            fresh.node(start, preds.carried(), (code - 1) / 3, len, per_part);
                        assert!(node < per_part);
                        let mut parents = Vec::new();
                        fresh.for_each_parent(node, len, per_part, |j| parents.push(j));
                        let mut slow = Vec::new();
                        undoing.emit(&pos, from, to, true, &mut |q: &Position| {
                            slow.push(pred_ix.index(q))
                        });
                        parents.sort_unstable();
                        slow.sort_unstable();
                        assert_eq!(
                            parents, slow,
                            "{name} {rules:?} state {idx}, {from:?}-{to:?}"
                        );
                        checked += parents.len();
                    });
                }
            }
        }
        assert!(checked > 50_000, "only {checked} predecessors checked");
    }

    /// Memory handed out again by the pool holds old contents; asked for
    /// zeroed words, even a reused and then enlarged bitset reads all zero.
    #[test]
    fn reused_memory_asked_zeroed_is_zero() {
        let dirty = AtomicWords::new(1 << 16, false).unwrap();
        dirty.par_iter().for_each(|w| w.store(u64::MAX, Relaxed));
        drop(dirty); // to the pool
        let small = StateOrder::new(64, None).unwrap();
        assert!(small.bits.iter().all(|w| w.load(Relaxed) == 0));
        let larger = StateOrder::new(64 << 10, Some(small.bits)).unwrap();
        assert_eq!(larger.bits.len(), 2 << 10);
        assert!(larger.bits.iter().all(|w| w.load(Relaxed) == 0));
    }

    /// Propagation runs cover the batch in order, never separate a part from
    /// its partner, and gather small parts up to about `LOCAL_STATES` states.
    #[test]
    fn propagation_runs_keep_slice_pairs_together() {
        // Pairs of tables: parts alternate with their partners.
        let pairs: Vec<u64> = (0..40u64).map(|i| i ^ 1).collect();
        // One symmetric table: some slices are their own partners.
        let symmetric: Vec<u64> = vec![0, 2, 1, 3, 4, 6, 5, 7];
        for (partner, len) in [
            (&pairs, 1000),
            (&pairs, LOCAL_STATES / 3),
            (&pairs, LOCAL_STATES * 4),
            (&symmetric, 1000),
            (&symmetric, LOCAL_STATES / 2),
        ] {
            let (runs, run_of_part) = local_runs(partner, len);
            assert_eq!(runs.first().unwrap().start, 0);
            assert_eq!(runs.last().unwrap().end, partner.len() as u64 * len);
            for w in runs.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            for (i, &p) in partner.iter().enumerate() {
                assert_eq!(run_of_part[i], run_of_part[p as usize]);
                assert!(runs[run_of_part[i]].contains(&(i as u64 * len)));
            }
            for r in &runs[..runs.len() - 1] {
                let n = r.end - r.start;
                assert!(
                    2 * n >= LOCAL_STATES && (n <= LOCAL_STATES || n <= 2 * len),
                    "{r:?}"
                );
            }
        }
    }

    /// The moves of a placement with no counters, filtered for the blocked
    /// king, are exactly the legal moves of each of its counter states.
    #[test]
    fn counters_only_remove_the_blocked_kings_ordinary_moves() {
        // (material, rules, whether it has three-move states)
        for (name, rules, three_move) in [
            ("KMvKM", RuleSet::Official, true),
            ("KKMvK", RuleSet::Official, true),
            ("KKvK", RuleSet::Official, false),
            ("KMvKM", RuleSet::Lidraughts, true),
        ] {
            let ix = MaterialIndex::new(name.parse().unwrap(), rules);
            let per = ix.counters_per_placement();
            let mut checked_blocked = 0;
            for placement in (0..ix.placements()).step_by(97) {
                let base = ix.placement_position(placement);
                let base_moves = base.legal_moves();
                for c in 0..per {
                    let mut pos = base;
                    ix.set_counters(&mut pos, c);
                    assert_eq!(pos, ix.position(placement * per + c));
                    let blocked = pos.blocked_king();
                    checked_blocked += usize::from(blocked.is_some());
                    let filtered: Vec<Move> = base_moves
                        .iter()
                        .filter(|m| legal_with_block(m, blocked))
                        .cloned()
                        .collect();
                    assert_eq!(filtered, pos.legal_moves(), "{}", crate::fen::write(&pos));
                }
            }
            assert_eq!(checked_blocked > 0, three_move, "{name}");
        }
    }

    /// A move that leaves the batch (man move, capture, promotion) leads to
    /// the same successor from every state whose counters agree in the part
    /// it carries over, which lets the initialisation look up its value once
    /// for all of them.
    #[test]
    fn moves_leaving_the_batch_depend_only_on_the_carried_counters() {
        for (name, rules) in [
            ("KMvKM", RuleSet::Official),
            ("KKMvK", RuleSet::Official),
            ("KMvKK", RuleSet::Official),
            ("KKvK", RuleSet::Official),
            ("KvKK", RuleSet::Official),
            ("KvK", RuleSet::Official),
            ("KMvKM", RuleSet::Lidraughts),
            ("KKvK", RuleSet::Lidraughts),
            ("KMvM", RuleSet::Lidraughts),
        ] {
            let ix = MaterialIndex::new(name.parse().unwrap(), rules);
            let (per, carried) = (ix.counters_per_placement(), ix.carried_counters());
            assert_eq!(per % carried, 0, "{name}");
            let mut compared = 0;
            for placement in (0..ix.placements()).step_by(89) {
                let base = ix.placement_position(placement);
                let moves: Vec<Move> = base
                    .legal_moves()
                    .into_iter()
                    .filter(|m| !is_internal(m))
                    .collect();
                for c in carried..per {
                    let (mut pos, mut first) = (base, base);
                    ix.set_counters(&mut pos, c);
                    ix.set_counters(&mut first, c % carried);
                    for m in &moves {
                        assert_eq!(pos.play(m), first.play(m), "{}", crate::fen::write(&pos));
                        compared += 1;
                    }
                }
            }
            assert!(compared > 0 || per == carried, "{name}");
        }
    }
}
