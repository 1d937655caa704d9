//! Step 2 of a batch: propagation along king retro-moves, bucket by bucket
//! of distance.

use super::batch::Layout;
use super::buckets::{add_segment, put_in_state_order, segments, Buckets, Segment, StateOrder};
use super::memory::PerThread;
use super::work::{Entry, Work, NO_WIN, PREFETCH_AHEAD, WIN_BIT};
use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::index::{flipped_bit, flipped_plain, MaterialIndex, MenCache, PlacementCounters};
use crate::piece::Side;
use crate::position::Position;
use crate::retro::{for_each_king_retro_move, moved, Undoing};
use crate::rules::{KingCount, Wdl};
use crate::value::Value;
use rayon::prelude::*;
use std::cell::LazyCell;
use std::ops::Range;

/// A retro-move whose predecessor placement has not been ranked yet.
const UNRANKED: u64 = u64::MAX;

/// The counter parts of the indexes of a state's predecessors by king moves,
/// computed from codes instead of from each predecessor position: the
/// predecessors by one move share their placement and differ only in the
/// mover's three-move state ([`Undoing::for_each_mover_state`]).
pub(super) struct PredecessorCounters<'a> {
    ix: &'a MaterialIndex,
    undoing: &'a Undoing,
    /// The code of the predecessors' opponent's three-move state and their draw counter.
    t_opp: u64,
    s: u64,
}

impl<'a> PredecessorCounters<'a> {
    /// For the predecessors of `pos` (indexed by `ix`, their material's index).
    #[inline]
    pub(super) fn new(ix: &'a MaterialIndex, undoing: &'a Undoing, pos: &Position) -> Self {
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
    pub(super) fn carried(&self) -> u64 {
        self.ix.counters_offset_of(0, self.t_opp, self.s)
    }

    /// Call `f` with the counter offset of each predecessor by the king move
    /// `from`-`to` (`kings`: the mover's kings before it), in the order of
    /// [`Undoing::emit`].
    #[inline]
    pub(super) fn for_each(
        &self,
        kings: Bitboard,
        from: Square,
        to: Square,
        mut f: impl FnMut(u64),
    ) {
        let mover = self.undoing.mover();
        self.undoing
            .for_each_mover_state(kings, from, to, true, |state| {
                let t_stm = self.ix.three_move_code(mover, true, kings, state);
                f(self.ix.counters_offset_of(t_stm, self.t_opp, self.s))
            });
    }
}

/// Where the predecessor placements of a position by king moves of the
/// side that just moved start in the batch. Such a predecessor has the same
/// men, so it lies in the partner slice and only its kings need ranking.
/// The pieces that no king move of the mover changes, and the mover's kings,
/// are flipped once for all its moves.
struct PartnerPlacements {
    partner_start: u64,
    /// Both sides' men, White's kings and the mover's kings, flipped.
    men: u64,
    white_kings: u64,
    mover_kings: u64,
    #[cfg(debug_assertions)]
    pos: Position,
}

impl PartnerPlacements {
    /// For predecessors of `pos` by moves of `mover`, whose partner slice
    /// starts at `partner_start`.
    #[inline]
    fn new(pos: &Position, mover: Side, partner_start: u64) -> PartnerPlacements {
        PartnerPlacements {
            partner_start,
            men: flipped_plain(pos.men(Side::White) | pos.men(Side::Black)),
            white_kings: flipped_plain(pos.kings(Side::White)),
            mover_kings: flipped_plain(pos.kings(mover)),
            #[cfg(debug_assertions)]
            pos: *pos,
        }
    }

    /// Where the placement of the predecessor by the king move `from`-`to`
    /// starts (`ix`: the predecessors' index).
    #[inline]
    fn start(&self, ix: &MaterialIndex, from: Square, to: Square) -> u64 {
        let offset = ix.flipped_kings_offset_plain(
            self.men,
            self.white_kings,
            self.mover_kings & !flipped_bit(to) | flipped_bit(from),
        );
        #[cfg(debug_assertions)]
        {
            let pos = &self.pos;
            let mover = pos.turn().opponent();
            let kings = pos.kings(mover).without(to).with(from);
            let men = pos.men(Side::White) | pos.men(Side::Black);
            assert_eq!(
                offset,
                ix.flipped_kings_offset(men, pos.kings(Side::White), kings)
            );
        }
        self.partner_start + offset
    }
}

/// Per thread of a propagation step: the vectors each chunk fills and
/// empties again, so that a chunk allocates only the segments it hands over,
/// which lets chunks be small (see [`chunk_len`]).
#[derive(Default)]
struct Scratch {
    /// States finalised by the chunk's visits, with their distances.
    out: Vec<(u16, Entry)>,
    /// The king retro-moves into the current placement, and the batch
    /// position where each one's predecessor placement starts (found on
    /// first use): they depend on the pieces only, not on the counters, so
    /// the entries of one placement share them.
    retro_moves: Vec<(Square, Square, u64)>,
    /// The chunk's entries that this step finalised.
    finalised: Vec<Entry>,
    /// Predecessors to update: batch position, with WIN_BIT if the finalised
    /// state was a win.
    visits: Vec<u64>,
    /// The same for relay nodes: node, with WIN_BIT.
    relay_visits: Vec<u64>,
    /// Each table's men of the last placement unranked.
    men: [MenCache; 2],
}

/// Entries per chunk of a propagation step over `n` entries. A step ends when
/// its last chunk does, with the other threads idle meanwhile; chunks of
/// 16,384 entries left a core idle for 14-27% of the KKMvKK pair's
/// propagation (the late steps hold a few chunks each). So a step is cut into
/// about a hundred chunks, within bounds that keep the per-chunk overhead
/// small.
fn chunk_len(n: usize) -> usize {
    (n / 128).clamp(1024, 16384)
}

/// Step 2 of a batch: propagate, bucket by bucket, along king moves inside
/// each run of `layout`, from the buckets that [`initialise`] filled. `order`
/// is all zero and stays so.
///
/// [`initialise`]: super::init::initialise
pub(super) fn propagate(
    layout: &Layout,
    work: &Work,
    relays: &Work,
    run_buckets: Vec<Buckets>,
    order: &StateOrder,
) {
    // Runs are independent (king moves never leave one), so they are solved
    // side by side, each thread taking whole runs and stealing work inside
    // another's steps when it runs out. Run by run, every bucket of every run
    // ended in a join: with tens of thousands of small steps per pair, a core
    // waited at each one (6-13% of the largest pairs' time).
    layout
        .runs
        .par_iter()
        .zip(run_buckets)
        .for_each(|(run, buckets)| propagate_run(layout, work, relays, run, buckets, order));
}

/// Propagate one run of the batch, bucket by bucket of distance, from its
/// buckets as [`initialise`](super::init::initialise) filled them.
fn propagate_run(
    layout: &Layout,
    work: &Work,
    relays: &Work,
    run: &Range<u64>,
    mut buckets: Buckets,
    order: &StateOrder,
) {
    // One scratch per thread (see [`PerThread`]), whichever runs it works on.
    let scratches = PerThread::new(Scratch::default);
    let mut d = 0;
    while d < buckets.len() {
        // In state order, the counter states of one placement come together
        // and share its retro-moves and predecessor placements (6% less CPU
        // time on the KKKvKM pair).
        let entries = put_in_state_order(std::mem::take(&mut buckets[d]), order, run.clone());
        let step = Step {
            layout,
            work,
            relays,
            run,
            d: d as u16,
        };
        let found: Vec<Vec<Segment>> = entries
            .par_iter()
            .with_max_len(1)
            .flat_map(|s| s.par_chunks(chunk_len(s.len())).with_max_len(1))
            .map(|chunk| scratches.with(|scratch| step.chunk(chunk, scratch)))
            .collect();
        for v in found {
            for s in v {
                add_segment(&mut buckets, s);
            }
        }
        d += 1;
    }
}

/// One step of a run's propagation: the states finalised at distance `d`.
struct Step<'a> {
    layout: &'a Layout<'a>,
    work: &'a Work,
    relays: &'a Work,
    run: &'a Range<u64>,
    d: u16,
}

impl Step<'_> {
    /// Propagate a chunk of the step's entries; returns the states this
    /// finalises, as segments of the run's buckets.
    ///
    /// The cells touched lie anywhere in the run (up to hundreds of
    /// megabytes), so each access would wait for memory: the entries are
    /// finalised first, then their predecessors collected, then updated,
    /// each pass prefetching the cells a few steps ahead so that the memory
    /// accesses overlap.
    fn chunk(&self, chunk: &[Entry], scratch: &mut Scratch) -> Vec<Segment> {
        let Scratch {
            out,
            retro_moves,
            finalised,
            visits,
            relay_visits,
            men,
        } = scratch;
        out.clear();
        finalised.clear();
        visits.clear();
        relay_visits.clear();
        self.finalise(chunk, finalised);
        self.collect_predecessors(finalised, men, retro_moves, visits, relay_visits);
        self.resolve_relays(relay_visits, visits);
        self.update_predecessors(visits, out);
        segments(out, |e| {
            debug_assert!(self.run.contains(&(e & !WIN_BIT)));
            0
        })
    }

    /// Give each entry its value, a win or loss in `d`, unless it is final
    /// already or a shorter win was found since; the entries given theirs
    /// go to `finalised`.
    fn finalise(&self, chunk: &[Entry], finalised: &mut Vec<Entry>) {
        let (work, d) = (self.work, self.d);
        for (k, &e) in chunk.iter().enumerate() {
            if let Some(&ahead) = chunk.get(k + PREFETCH_AHEAD) {
                work.prefetch((ahead & !WIN_BIT) as usize);
            }
            let win = e & WIN_BIT != 0;
            let value = Value {
                wdl: if win { Wdl::Win } else { Wdl::Loss },
                dtw: d,
            };
            let (_, done) = work.update((e & !WIN_BIT) as usize, |c| {
                if c.is_final() || (win && c.best_win() != d) {
                    None
                } else {
                    Some(work.with_value(c, value))
                }
            });
            if done {
                finalised.push(e);
            }
        }
    }

    /// The predecessors by a king move of the `finalised` entries: into
    /// `visits` (batch positions) or, where the predecessors share a relay
    /// node, into `relay_visits` (nodes), each with the entry's WIN_BIT.
    fn collect_predecessors(
        &self,
        finalised: &[Entry],
        men: &mut [MenCache; 2],
        retro_moves: &mut Vec<(Square, Square, u64)>,
        visits: &mut Vec<u64>,
        relay_visits: &mut Vec<u64>,
    ) {
        let Layout {
            tables, per_div, ..
        } = *self.layout;
        let mut last: Option<(usize, u64, Position)> = None;
        let mut retro_built = false;
        let mut counters = PlacementCounters::default();
        for &e in finalised {
            let (t, idx) = self.layout.global(e & !WIN_BIT);
            // Entries of one placement (other counters) often follow each
            // other: unrank the placement once for them. Both tables have
            // `per` counter combinations a placement.
            let (p, c) = per_div.div_rem(idx);
            if last.map(|(lt, lp, _)| (lt, lp)) != Some((t, p)) {
                let placement = tables[t].index.placement_position_cached(p, &mut men[t]);
                tables[t]
                    .index
                    .placement_counters(&placement, &mut counters);
                retro_built = false;
                last = Some((t, p, placement));
            }
            let mut pos = last.expect("set above").2;
            tables[t].index.set_counters_of(&counters, &mut pos, c);
            let Some(undoing) = Undoing::new(&pos) else {
                continue; // no ordinary move leads here
            };
            if !undoing.king_may_have_moved() {
                // The three-move state says the last move was no king move
                // (a quarter of the entries of KKMvKM).
                continue;
            }
            if !retro_built {
                retro_moves.clear();
                for_each_king_retro_move(&pos, |from, to| retro_moves.push((from, to, UNRANKED)));
                retro_built = true;
            }
            self.predecessors_of(e, t, &pos, &undoing, retro_moves, visits, relay_visits);
        }
    }

    /// The predecessors of entry `e` (position `pos` of table `t`) by the
    /// king retro-moves `retro_moves` (with the batch position where each
    /// one's predecessor placement starts, ranked here on first use).
    ///
    /// The predecessors by one king move share a placement and differ only
    /// in the mover's three-move state: the placement is ranked once per move
    /// (neighbouring entries share them too, hence the cache) and the counter
    /// codes added. Predecessors have the other side to move; only the
    /// placement is ranked in its White-to-move form, the counters are coded
    /// relative to the side to move.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn predecessors_of(
        &self,
        e: Entry,
        t: usize,
        pos: &Position,
        undoing: &Undoing,
        retro_moves: &mut [(Square, Square, u64)],
        visits: &mut Vec<u64>,
        relay_visits: &mut Vec<u64>,
    ) {
        let Layout {
            tables,
            partner,
            len,
            ref fresh,
            per_part,
            len_div,
            ..
        } = *self.layout;
        let win_bit = e & WIN_BIT;
        let ot = self.layout.other_table(t);
        let ix = &tables[ot].index;
        let preds = PredecessorCounters::new(ix, undoing, pos);
        // Positions are in their White-to-move form, so the predecessors
        // have Black to move and are indexed flipped.
        let mover = undoing.mover();
        debug_assert_eq!(mover, Side::Black);
        let partner_start = partner[len_div.div(e & !WIN_BIT) as usize] * len;
        let placements = LazyCell::new(|| PartnerPlacements::new(pos, mover, partner_start));
        // Where the predecessors have relay nodes, a move of the king now
        // tracked at count 1 was a fresh move of it: its predecessor is that
        // king's relay node.
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
                *start = placements.start(ix, from, to);
                debug_assert_eq!(
                    self.layout.global(*start),
                    (
                        ot,
                        ix.placement_base(&moved(pos, mover, from, to, true).flip())
                    )
                );
            }
            let start = *start;
            if let Some(f) = relay {
                let tracked = Some(KingCount {
                    square: from,
                    count: 1,
                });
                let king = (ix.three_move_code(mover, true, kings, tracked) - 1) / 3;
                let node = f.node(start, preds.carried(), king, len_div, per_part);
                relay_visits.push(win_bit | node);
                continue;
            }
            preds.for_each(kings, from, to, |offset| {
                visits.push(win_bit | (start + offset))
            });
        }
    }

    /// Relay nodes that this step resolves pass their result on to their
    /// states, as visits of the same kind (they add no ply).
    fn resolve_relays(&self, relay_visits: &[u64], visits: &mut Vec<u64>) {
        let Layout {
            len, per_part_div, ..
        } = *self.layout;
        let (relays, d) = (self.relays, self.d);
        for (k, &v) in relay_visits.iter().enumerate() {
            if let Some(&ahead) = relay_visits.get(k + PREFETCH_AHEAD) {
                relays.prefetch((ahead & !WIN_BIT) as usize);
            }
            let node = v & !WIN_BIT;
            let resolved = if v & WIN_BIT != 0 {
                // One more successor won by the opponent: the node is lost
                // once none is left.
                let (c, done) = relays.update(node as usize, |c| {
                    (c.best_win() == NO_WIN).then(|| c.with_remaining(c.remaining() - 1))
                });
                done && c.remaining() == 1
            } else {
                // A successor lost: the node is won (first time only).
                relays
                    .update(node as usize, |c| {
                        (c.best_win() == NO_WIN).then(|| relays.with_best_win(c, d + 1))
                    })
                    .1
            };
            if resolved {
                let f = self
                    .layout
                    .relays_of_part(per_part_div.div(node))
                    .expect("relay nodes only in parts of tables that have them");
                f.for_each_parent(node, len, per_part_div, |j| visits.push((v & WIN_BIT) | j));
            }
        }
    }

    /// Update the predecessors `visits`: a lost successor makes a state won
    /// in `d + 1` (if shorter than a win it has), a won one leaves it one
    /// fewer reply that does not lose, and the last one refuted makes it lost
    /// (unless it can win). The states so finalised go to `out` with their
    /// distances.
    fn update_predecessors(&self, visits: &[u64], out: &mut Vec<(u16, Entry)>) {
        let (work, d) = (self.work, self.d);
        for (k, &v) in visits.iter().enumerate() {
            if let Some(&ahead) = visits.get(k + PREFETCH_AHEAD) {
                work.prefetch((ahead & !WIN_BIT) as usize);
            }
            let j = (v & !WIN_BIT) as usize;
            if v & WIN_BIT != 0 {
                let (c, done) = work.update(j, |c| {
                    (!c.is_final()).then(|| {
                        work.with_longest_reply(
                            c.with_remaining(c.remaining() - 1),
                            c.longest_reply().max(d),
                        )
                    })
                });
                if done && c.remaining() == 1 && c.best_win() == NO_WIN {
                    let dtw = 1 + c.longest_reply().max(d);
                    out.push((dtw, j as u64));
                }
            } else {
                let dtw = d + 1;
                let (_, shorter) = work.update(j, |c| {
                    (!c.is_final() && c.best_win() > dtw).then(|| work.with_best_win(c, dtw))
                });
                if shorter {
                    out.push((dtw, WIN_BIT | j as u64));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;
    use crate::retro::{for_each_king_retro_move, moved};
    use crate::rules::RuleSet;

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
}
