//! Step 1 of a batch: initialising every state by forward move generation,
//! in two passes (capture placements first).

use super::batch::Layout;
use super::buckets::{add_segment, segments, Buckets, Segment};
use super::divisor::Divisor;
#[cfg(test)]
use super::leaving::is_internal;
use super::leaving::{Leaving, Source, Target};
use super::memory::PerThread;
use super::pair_table::PairTable;
use super::work::{Cell, Entry, Work, NO_WIN, WIN_BIT};
use crate::finished::Solved;
use crate::geometry::Square;
use crate::index::{flipped_plain, MaterialIndex, MenCache, PlacementCache, PlacementCounters};
use crate::memory::prefetch;
use crate::movegen::{for_each_free_diagonal_square, king_quiet_move_count};
use crate::moves::{Move, MoveList};
use crate::piece::Side;
use crate::position::Position;
#[cfg(debug_assertions)]
use crate::retro::moved;
use crate::rules::{KingCount, Wdl, THREE_MOVE_LIMIT};
use crate::value::Value;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU16, AtomicU64};

/// The two passes of a batch's initialisation (see [`initialise`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pass {
    /// Placements where the side to move must capture: solved at once.
    Captures,
    /// The others, reading king moves into capture placements.
    Others,
}

/// Which placements of a batch have a capture (one bit each), and the values
/// of their states, found by the first pass of the initialisation and read
/// by the second.
///
/// A capture placement's states differ only in their carried counters (see
/// [`InitScratch::solve_capture_placement`]), so its values are kept once per
/// carried combination (`stride` slots a placement, packed as
/// [`Value::pack`]) rather than read from the states' cells: a king move into
/// a capture placement reads a few bytes instead of a placement's cells
/// (112 bytes in KKMvKM), and the values of a whole partner slice take an
/// eighth of the memory its cells do, which the processor's caches hold better.
struct CapturePlacements<'a> {
    bits: Vec<AtomicU64>,
    values: &'a [AtomicU16],
    stride: u64,
}

impl<'a> CapturePlacements<'a> {
    /// For `placements` placements of up to `stride` carried combinations;
    /// `values` has room for `placements * stride` (holding anything).
    fn new(placements: u64, stride: u64, values: &'a [AtomicU16]) -> CapturePlacements<'a> {
        assert!(values.len() as u64 >= placements * stride, "capture values");
        CapturePlacements {
            bits: (0..placements.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            values,
            stride,
        }
    }

    /// Placement `p` has a capture, and these values (one per carried combination).
    #[inline]
    fn set(&self, p: u64, values: &[Value]) {
        debug_assert!(values.len() as u64 <= self.stride);
        self.bits[(p / 64) as usize].fetch_or(1 << (p % 64), Relaxed);
        let at = (p * self.stride) as usize;
        for (slot, v) in self.values[at..at + values.len()].iter().zip(values) {
            slot.store(v.pack(), Relaxed);
        }
    }

    #[inline]
    fn get(&self, p: u64) -> bool {
        self.bits[(p / 64) as usize].load(Relaxed) >> (p % 64) & 1 != 0
    }

    /// The value of capture placement `p`'s states with carried combination `c`.
    #[inline]
    fn value(&self, p: u64, c: u64) -> Value {
        debug_assert!(self.get(p) && c < self.stride);
        Value::unpack(self.values[(p * self.stride + c) as usize].load(Relaxed))
            .expect("capture placements are solved in the first pass")
    }

    /// Ask for the values of capture placement `p`.
    #[inline]
    fn prefetch(&self, p: u64) {
        if let Some(v) = self.values.get((p * self.stride) as usize) {
            prefetch(v);
        }
    }
}

/// An ordinary king move of the placement being initialised that leads into
/// a capture placement, whose states are solved already.
#[derive(Copy, Clone, Debug)]
struct Known {
    king: Square,
    to: Square,
    /// The successor placement's number in the batch (its first state's
    /// batch position divided by the counter combinations a placement).
    placement: u64,
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
    /// Their working cells (first pass only).
    capture_cells: Vec<Cell>,
    /// The ordinary king moves into capture placements (second pass only).
    known: Vec<Known>,
    /// How many of each king's ordinary moves are in `known`.
    known_of_king: Vec<u32>,
    /// The summary of each king's moves in `known`, per carried combination
    /// and the count the move gives the king (1-3), filled on first use: the
    /// states of a placement share them (7 White three-move states, 4 Black
    /// ones in KKMvKM), so each successor is read a few times, not once per state.
    known_sums: Vec<Option<Leaving>>,
    /// The summary of the moves that leave the batch, for each combination
    /// of the counters they carry over ([`MaterialIndex::carried_counters`]);
    /// `None` where every state with those counters is over.
    leaving: Vec<Option<Leaving>>,
    /// Where each leaving move's value is read, per carried combination.
    sources: Vec<(u32, Source)>,
    /// The placement each leaving move leads to (the same for every
    /// carried combination), in the order of `moves`.
    targets: Vec<Target>,
    solved_cache: PlacementCache,
    next_cache: PlacementCache,
    /// The men of the last slice entered, per table of the pair.
    men: [MenCache; 2],
    /// The three-move states of the prepared placement's counter combinations.
    counters: PlacementCounters,
    /// The states a chunk finalised, with their distances (emptied by each
    /// chunk, kept for its memory).
    out: Vec<(u16, Entry)>,
}

impl InitScratch {
    pub(super) fn new(ix: &MaterialIndex) -> InitScratch {
        InitScratch {
            pos: ix.placement_position(0),
            moves: Vec::new(),
            internal: 0,
            king_moves: Vec::new(),
            capture_values: Vec::new(),
            capture_cells: Vec::new(),
            known: Vec::new(),
            known_of_king: Vec::new(),
            known_sums: Vec::new(),
            leaving: Vec::new(),
            sources: Vec::new(),
            targets: Vec::new(),
            solved_cache: PlacementCache::new(),
            next_cache: PlacementCache::new(),
            men: [MenCache::default(); 2],
            counters: PlacementCounters::default(),
            out: Vec::new(),
        }
    }

    /// How many ordinary moves king `k` of the prepared placement has.
    #[inline]
    fn king_move_count(&self, k: Square) -> u32 {
        self.king_moves
            .iter()
            .find(|&&(king, _)| king == k)
            .map_or(0, |&(_, n)| n)
    }

    /// The options that state `pos` of the prepared placement still has
    /// open where relay nodes stand for fresh king moves: each free king
    /// other than the tracked one is one option (its [`Fresh`] node, if any
    /// of its moves is open); the tracked king's further moves, if it may
    /// make more, stay one option each.
    ///
    /// [`Fresh`]: super::relay::Fresh
    #[inline]
    fn open_options_with_relays(&self, pos: &Position) -> u32 {
        let tracked = pos.three_move(Side::White);
        self.king_moves
            .iter()
            .zip(&self.known_of_king)
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
    }

    /// Go to placement `placement` of `ix` (table `table` of the pair): its
    /// position with every counter at 0.
    pub(super) fn locate(&mut self, ix: &MaterialIndex, table: usize, placement: u64) -> &Position {
        self.pos = ix.placement_position_cached(placement, &mut self.men[table]);
        &self.pos
    }

    /// Find the moves that the states of the located placement share (then
    /// [`InitScratch::summarise_leaving`] reads the values of those that
    /// leave the batch). `capture`: whether the side to move must capture
    /// (the first pass has tested it).
    fn prepare(&mut self, ix: &MaterialIndex, capture: bool) {
        self.moves.clear();
        self.king_moves.clear();
        self.known.clear();
        self.known_of_king.clear();
        self.known_sums.clear();
        self.internal = 0;
        let kings = self.pos.kings(self.pos.turn());
        debug_assert_eq!(capture, self.pos.has_capture());
        ix.placement_counters(&self.pos, &mut self.counters);
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
            let slots = ix.carried_counters() as usize * self.king_moves.len() * 3;
            self.known_sums.resize(slots, None);
        }
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
            ix.set_counters_of(&self.counters, &mut pos, c);
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
        per: Divisor,
    ) {
        let pos = &self.pos;
        let (white, black) = (pos.kings(Side::White), pos.kings(Side::Black));
        let men = pos.men(Side::White) | pos.men(Side::Black);
        let empty = !pos.occupied();
        // The men and Black's kings are ranked once for all the moves; the
        // partner slice starts at a whole placement.
        let flipped = ix.flipped_kings(men, black);
        let first = per.div(partner_start);
        debug_assert_eq!(first * ix.counters_per_placement(), partner_start);
        for &(king, n) in &self.king_moves {
            let mut known = 0;
            if n > 0 {
                let others = flipped_plain(white.without(king));
                for_each_free_diagonal_square(king, empty, |to| {
                    let kings = white.without(king).with(to);
                    let placement = first + flipped.placement(others, to);
                    debug_assert_eq!(
                        placement,
                        per.div(partner_start + ix.flipped_kings_offset(men, kings, black))
                    );
                    if captures.get(placement) {
                        // The successor's values are read for the states of
                        // this placement: ask for them now (they lie anywhere
                        // in the partner slice).
                        captures.prefetch(placement);
                        let count1 = Some(KingCount {
                            square: to,
                            count: 1,
                        });
                        let code1 = ix.three_move_code(Side::Black, false, kings, count1);
                        self.known.push(Known {
                            king,
                            to,
                            placement,
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
        // Counters do not move pieces: each move's successor placement is
        // located once, not once per carried combination (up to 7 in the
        // KKvKKM and KMvKKM tables).
        self.targets.clear();
        for m in self.moves.iter() {
            let target = Target::of(
                &self.pos,
                m,
                next,
                solved,
                &mut self.solved_cache,
                &mut self.next_cache,
            );
            self.targets.push(target);
        }
        let has_moves = self.internal > 0 || !self.moves.is_empty();
        for c in 0..carried {
            let mut pos = self.pos;
            ix.set_counters_of(&self.counters, &mut pos, c as u64);
            if pos.outcome_with(has_moves).is_some() {
                continue;
            }
            self.leaving[c] = Some(Leaving::NONE);
            for (m, target) in self.moves.iter().zip(&self.targets) {
                let src = target.source(&pos, m, next, solved);
                // The target found with every counter 0 is this state's.
                debug_assert_eq!(
                    src,
                    Source::of(
                        &pos,
                        m,
                        next,
                        solved,
                        &mut self.solved_cache,
                        &mut self.next_cache
                    )
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

/// The slots of capture values [`initialise`] needs for `layout` (see
/// [`CapturePlacements`]).
pub(super) fn capture_slots(layout: &Layout) -> usize {
    let stride = capture_stride(layout);
    (layout.total / layout.per * stride) as usize
}

/// Carried combinations a placement, the most of the batch's tables.
fn capture_stride(layout: &Layout) -> u64 {
    layout
        .tables
        .iter()
        .map(|t| t.index.carried_counters())
        .max()
        .unwrap_or(1)
}

/// Step 1 of a batch: initialise every state of `layout` in `work` (and the
/// relay nodes in `relays`), reading moves that leave the batch from
/// `solved` and the pair's work files; `capture_values` is room for
/// [`capture_slots`] values (holding anything). Returns each run's buckets:
/// the states finalised with a distance that propagation starts from.
pub(super) fn initialise(
    layout: &Layout,
    work: &Work,
    relays: &Work,
    capture_values: &[AtomicU16],
    solved: &Solved,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Buckets> {
    let captures = CapturePlacements::new(
        layout.total / layout.per,
        capture_stride(layout),
        capture_values,
    );
    let init = Init {
        layout,
        work,
        relays,
        solved,
        captures: &captures,
    };
    // Whole segments go to the buckets, which keeps this serial step short:
    // pushing every entry took 4.3% of the KKMvKM pair's samples, with the
    // other core idle.
    let mut run_buckets: Vec<Buckets> = vec![Vec::new(); layout.runs.len()];
    // The capture placements first, then the others (see [`Pass`]).
    for pass in [Pass::Captures, Pass::Others] {
        // One scratch per thread, not per chunk: a new one allocates and
        // clears its two placement caches (80 KB), which took 1.6% of a
        // five-piece run. Its caches are keyed by what they hold, so they
        // stay valid from chunk to chunk.
        let scratches = PerThread::new(|| InitScratch::new(&layout.tables[0].index));
        let items: Vec<Vec<Segment>> = (0..layout.total.div_ceil(INIT_CHUNK) as usize)
            .into_par_iter()
            // A job a chunk: chunks of capture placements take a fraction of
            // the time of others (see [`PerThread`]).
            .with_max_len(1)
            .map(|c| scratches.with(|scratch| init.chunk(pass, c as u64, scratch, progress)))
            .collect();
        for v in items {
            for s in v {
                add_segment(&mut run_buckets[s.run], s);
            }
        }
    }
    run_buckets
}

/// States per chunk of the initialisation. Each chunk hands over a vector
/// per distance it found (see `segments`): 16,384 states a chunk make a
/// quarter of the allocations of 4,096 (0.7-1.1% less time).
const INIT_CHUNK: u64 = 1 << 14;

/// What the initialisation of a batch works on.
struct Init<'a> {
    layout: &'a Layout<'a>,
    work: &'a Work,
    relays: &'a Work,
    solved: &'a Solved,
    captures: &'a CapturePlacements<'a>,
}

/// Where a chunk's walk through its states is: the placement of the last
/// state and that state's counters.
///
/// The states of one placement (they differ only in counters) are
/// consecutive, in one part of the batch: the table and index of the first
/// are found by division, the others by stepping through its counter
/// combinations.
struct Cursor {
    /// The table of the placement.
    t: usize,
    /// The state's counter combination.
    counters: u64,
    /// The batch position after the placement's last state.
    placement_end: u64,
    /// `counters` modulo the table's carried combinations (the low part of
    /// the counter offset), kept without dividing: a division a state was
    /// 1.4% of the KKMvKM pair.
    carried: u64,
    carried_n: u64,
}

impl Cursor {
    /// At the first state of the placement of batch position `g`; returns
    /// the placement's number in its table.
    #[inline]
    fn enter(layout: &Layout, g: u64) -> (Cursor, u64) {
        let (t, idx) = layout.global(g);
        let (placement, counters) = layout.per_div.div_rem(idx);
        let carried_n = layout.tables[t].index.carried_counters();
        let cursor = Cursor {
            t,
            counters,
            placement_end: g + layout.per - counters,
            carried: counters % carried_n,
            carried_n,
        };
        (cursor, placement)
    }

    /// On to the next state of the same placement.
    #[inline]
    fn step(&mut self) {
        self.counters += 1;
        self.carried += 1;
        if self.carried == self.carried_n {
            self.carried = 0;
        }
    }
}

impl Init<'_> {
    /// Initialise the states of chunk `c` that belong to `pass`; returns
    /// the states finalised with a distance, as segments of the runs' buckets.
    fn chunk(
        &self,
        pass: Pass,
        c: u64,
        scratch: &mut InitScratch,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Vec<Segment> {
        let mut out = std::mem::take(&mut scratch.out);
        out.clear();
        let mut done = 0;
        let end = ((c + 1) * INIT_CHUNK).min(self.layout.total);
        let mut next = c * INIT_CHUNK;
        let mut cursor: Option<Cursor> = None;
        while next < end {
            let g = next;
            match &mut cursor {
                Some(at) if g < at.placement_end => at.step(),
                _ => {
                    let (at, placement) = Cursor::enter(self.layout, g);
                    let ours = self.enter_placement(pass, g, at.t, placement, scratch);
                    if !ours {
                        // The other pass's placement: on to the next one.
                        next = at.placement_end;
                        cursor = None;
                        continue;
                    }
                    cursor = Some(at);
                }
            }
            let at = cursor.as_mut().expect("entered above");
            if pass == Pass::Captures {
                // The rest of the capture placement (in this chunk) at once.
                let stop = at.placement_end.min(end);
                self.set_capture_states(g, stop, at, scratch);
                done += stop - g;
                next = stop;
                continue;
            }
            done += 1;
            next = g + 1;
            self.init_other_state(g, at, scratch, &mut out);
        }
        progress(done);
        let segs = segments(&out, |e| self.layout.run_of(e));
        scratch.out = out;
        segs
    }

    /// Enter placement `placement` of table `t` (first state at batch
    /// position `g`) and prepare what its states share; false if the
    /// placement belongs to the other pass.
    fn enter_placement(
        &self,
        pass: Pass,
        g: u64,
        t: usize,
        placement: u64,
        scratch: &mut InitScratch,
    ) -> bool {
        let layout = self.layout;
        let (ix, next) = (
            &layout.tables[t].index,
            &layout.tables[layout.other_table(t)],
        );
        let batch_placement = layout.per_div.div(g);
        match pass {
            Pass::Captures => {
                let capture = scratch.locate(ix, t, placement).has_capture();
                if capture {
                    scratch.prepare(ix, true);
                    scratch.summarise_leaving(ix, next, self.solved);
                    scratch.solve_capture_placement(ix, next, self.solved);
                    self.captures.set(batch_placement, &scratch.capture_values);
                }
                capture
            }
            Pass::Others => {
                let capture = self.captures.get(batch_placement);
                if !capture {
                    scratch.locate(ix, t, placement);
                    scratch.prepare(ix, false);
                    // King moves into capture placements first: their values
                    // are asked for while the leaving moves' values are read
                    // (both wait on memory).
                    let partner_start = layout.partner[layout.len_div.div(g) as usize] * layout.len;
                    scratch.find_known(&next.index, partner_start, self.captures, layout.per_div);
                    scratch.summarise_leaving(ix, next, self.solved);
                    #[cfg(debug_assertions)]
                    self.check_known(t, scratch);
                }
                !capture
            }
        }
    }

    /// The known king moves found lead to the placements `Position::play` does.
    #[cfg(debug_assertions)]
    fn check_known(&self, t: usize, scratch: &InitScratch) {
        let layout = self.layout;
        let next = &layout.tables[layout.other_table(t)];
        for k in &scratch.known {
            let mut child = moved(&scratch.pos, Side::White, k.to, k.king, true);
            child.set_turn(Side::Black);
            assert_eq!(
                layout.global(k.placement * layout.per),
                (
                    layout.other_table(t),
                    next.index.placement_base(&child.flip())
                )
            );
        }
    }

    /// The states `g..stop` of the prepared capture placement: each takes
    /// its carried combination's value, which the first pass found.
    fn set_capture_states(&self, g: u64, stop: u64, at: &mut Cursor, scratch: &mut InitScratch) {
        let work = self.work;
        scratch.capture_cells.clear();
        for i in 0..scratch.capture_values.len() {
            let v = scratch.capture_values[i];
            scratch.capture_cells.push(work.with_value(Cell::OPEN, v));
        }
        for s in g..stop {
            if s > g {
                at.step();
            }
            work.set(s as usize, scratch.capture_cells[at.carried as usize]);
            #[cfg(debug_assertions)]
            self.check_capture_state(at, scratch);
        }
    }

    /// The shortcut of [`Init::set_capture_states`] against the state's own
    /// value (the state `at` is on).
    #[cfg(debug_assertions)]
    fn check_capture_state(&self, at: &Cursor, scratch: &mut InitScratch) {
        let layout = self.layout;
        let ix = &layout.tables[at.t].index;
        let mut pos = scratch.pos;
        ix.set_counters(&mut pos, at.counters);
        let next = &layout.tables[layout.other_table(at.t)];
        let own = match pos.outcome_with(true) {
            Some(o) => Value { wdl: o.wdl, dtw: 0 },
            None => leaving_moves(&pos, next, self.solved, scratch).value(),
        };
        assert_eq!(own, scratch.capture_values[at.carried as usize]);
    }

    /// Initialise state `g` of a placement without a capture, and the relay
    /// nodes its counters set up.
    fn init_other_state(
        &self,
        g: u64,
        at: &Cursor,
        scratch: &mut InitScratch,
        out: &mut Vec<(u16, Entry)>,
    ) {
        let layout = self.layout;
        let ix = &layout.tables[at.t].index;
        debug_assert_eq!(at.carried, at.counters % ix.carried_counters());
        let mut pos = scratch.pos;
        ix.set_counters_of(&scratch.counters, &mut pos, at.counters);
        if let Some(f) = layout.fresh[at.t] {
            // The state with three-move state none sets up the relay nodes
            // of its placement and carried counters: a node waits for its
            // king's moves that are not known yet.
            if at.counters < f.carried {
                let start = g - at.counters;
                for (king, &(_, n)) in scratch.king_moves.iter().enumerate() {
                    let node = f.node(
                        start,
                        at.counters,
                        king as u64,
                        layout.len_div,
                        layout.per_part,
                    );
                    let open = n - scratch.known_of_king[king];
                    self.relays
                        .set(node as usize, Cell::OPEN.with_remaining(open as u8));
                }
            }
        }
        let next = &layout.tables[layout.other_table(at.t)];
        let has_relays = layout.fresh[at.t].is_some();
        self.init_state(g, &pos, at.carried, has_relays, next, scratch, out);
    }

    /// Initialise state `g` (position `pos`, whose counters carried over by
    /// a move that leaves the batch are combination `carried`; `next`: the
    /// table its moves lead to).
    ///
    /// The moves come from `scratch`, generated once for the placement:
    /// counters change the legal moves only by the three-move rule blocking
    /// one king's ordinary moves (2h-I; captures, being compulsory, are
    /// unaffected, and the seven-move rule ends the game rather than
    /// restricting moves, see [`Position::outcome`]). A move that leaves the
    /// batch resets the mover's three-move state, so its successor depends
    /// only on the `carried` counters: their values are looked up once for
    /// all states sharing them. King moves into capture placements
    /// (`scratch.known`) are read from the first pass's values.
    #[allow(clippy::too_many_arguments)]
    fn init_state(
        &self,
        g: u64,
        pos: &Position,
        carried: u64,
        has_relays: bool,
        next: &PairTable,
        scratch: &mut InitScratch,
        out: &mut Vec<(u16, Entry)>,
    ) {
        let w = self.work;
        // The three-move rule only takes the blocked king's ordinary moves away.
        let blocked = pos.blocked_king();
        let internal = scratch.internal - blocked.map_or(0, |b| scratch.king_move_count(b));
        let leaves = !scratch.moves.is_empty();
        if let Some(o) = pos.outcome_with(internal > 0 || leaves) {
            match o.wdl {
                Wdl::Loss => out.push((0, g)),
                _ => w.set(
                    g as usize,
                    w.with_value(Cell::OPEN, Value { wdl: o.wdl, dtw: 0 }),
                ),
            }
            return;
        }
        let mut leaving = match scratch.leaving[carried as usize] {
            Some(l) => l,
            None => {
                let l = leaving_moves(pos, next, self.solved, scratch);
                scratch.leaving[carried as usize] = Some(l);
                l
            }
        };
        let known = self.add_known(pos, carried, blocked, next, scratch, &mut leaving);
        // The options still open: king moves into placements that are not
        // solved yet.
        let options = if has_relays {
            scratch.open_options_with_relays(pos)
        } else {
            internal - known
        };
        set_initial_value(w, g, leaving, options, out);
    }

    /// Add the king moves of `pos` into capture placements, whose values are
    /// known, to `leaving`; returns how many there are. The successor of a
    /// king's move depends only on the carried counters (the opponent's
    /// three-move state and the draw counter) and the count the move gives
    /// the king: summarised once for each.
    fn add_known(
        &self,
        pos: &Position,
        carried: u64,
        blocked: Option<Square>,
        next: &PairTable,
        scratch: &mut InitScratch,
        leaving: &mut Leaving,
    ) -> u32 {
        if scratch.known.is_empty() {
            return 0;
        }
        let tracked = pos.three_move(Side::White);
        let ix = &next.index;
        let plain = ix.draw_counters() == 1;
        let kings = scratch.king_moves.len();
        let (mut first, mut known) = (0, 0);
        for (ki, &(king, _)) in scratch.king_moves.iter().enumerate() {
            let n = scratch.known_of_king[ki] as usize;
            let moves = first..first + n;
            first += n;
            if n == 0 || Some(king) == blocked {
                continue;
            }
            let count = match tracked {
                Some(kc) if kc.square == king => kc.count as usize + 1,
                _ => 1,
            };
            let slot = (carried as usize * kings + ki) * 3 + count - 1;
            let l = *scratch.known_sums[slot].get_or_insert_with(|| {
                let mut l = Leaving::NONE;
                for k in &scratch.known[moves] {
                    l.add(
                        self.captures
                            .value(k.placement, known_carried(ix, pos, k, plain)),
                    );
                }
                l
            });
            leaving.merge(l);
            known += n as u32;
        }
        known
    }
}

/// Set state `g`'s initial cell from the summary `leaving` of its moves
/// whose values are known and the number of `options` still open, and hand
/// it to `out` if that finalises it (or gives it a win to propagate).
#[inline]
fn set_initial_value(
    w: &Work,
    g: u64,
    leaving: Leaving,
    options: u32,
    out: &mut Vec<(u16, Entry)>,
) {
    let Leaving {
        best_win,
        longest,
        draw,
    } = leaving;
    let gi = g as usize;
    if options == 0 {
        if best_win != NO_WIN {
            w.set(gi, w.with_best_win(Cell::OPEN, best_win));
            out.push((best_win, WIN_BIT | g));
        } else if draw {
            let draw = Value {
                wdl: Wdl::Draw,
                dtw: 0,
            };
            w.set(gi, w.with_value(Cell::OPEN, draw));
        } else {
            out.push((longest + 1, g));
        }
        return;
    }
    // A drawing escape counts as a reply that is never refuted.
    let open = Cell::OPEN.with_remaining((options + u32::from(draw)) as u8);
    w.set(
        gi,
        w.with_best_win(w.with_longest_reply(open, longest), best_win),
    );
    if best_win != NO_WIN {
        out.push((best_win, WIN_BIT | g));
    }
}

#[cfg(test)]
/// Whether `m`, legal in a position with no counters set, is still legal when
/// the three-move rule blocks king `blocked`. Counters change the legal moves
/// only that way: the blocked king loses its ordinary moves (2h-I); captures,
/// being compulsory, are unaffected (and the seven-move rule ends the game
/// rather than restricting moves, see [`Position::outcome`]).
fn legal_with_block(m: &Move, blocked: Option<Square>) -> bool {
    !(is_internal(m) && Some(m.from()) == blocked)
}

/// The carried combination, in `ix` (the successor's index), of the state
/// that the known king move `k` leads to from `pos` (White to move): its
/// counter offset but for Black's own three-move state, on which a capture
/// placement's value does not depend; `plain` if `ix` has no draw counter.
/// White's three-move state there is the moved king's, counting on if it
/// was the tracked one.
#[inline]
fn known_carried(ix: &MaterialIndex, pos: &Position, k: &Known, plain: bool) -> u64 {
    let c = if plain {
        let count = match pos.three_move(Side::White) {
            Some(kc) if kc.square == k.king => kc.count as u64 + 1,
            _ => 1,
        };
        let t_opp = if k.code1 == 0 { 0 } else { k.code1 + count - 1 };
        ix.counters_offset_of(0, t_opp, 0)
    } else {
        // A draw counter (two or three kings only): let `play` count it.
        ix.counters_offset(&pos.play(&Move::quiet(k.king, k.to, true, false)))
            % ix.carried_counters()
    };
    debug_assert_eq!(
        c,
        ix.counters_offset(&pos.play(&Move::quiet(k.king, k.to, true, false)))
            % ix.carried_counters()
    );
    c
}

/// The whole counter offset of that state, given the code `t_stm` of
/// Black's three-move state there (its state in `pos`, unchanged).
#[cfg(test)]
fn known_counters(ix: &MaterialIndex, pos: &Position, k: &Known, t_stm: u64, plain: bool) -> u64 {
    if plain {
        t_stm * ix.carried_counters() + known_carried(ix, pos, k, plain)
    } else {
        ix.counters_offset(&pos.play(&Move::quiet(k.king, k.to, true, false)))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;
    use crate::rules::RuleSet;

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
                                placement: 0,
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
                            assert_eq!(
                                known_carried(&next, &pos, &k, plain),
                                (next.index(&child) - base) % next.carried_counters(),
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
