//! Relay nodes: one per placement, king and carried counters, standing for
//! "a fresh move of this king" (see [`Fresh`]).

use super::divisor::Divisor;
use crate::index::MaterialIndex;
use crate::rules::THREE_MOVE_LIMIT;

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
pub(super) struct Fresh {
    /// Kings of the side to move.
    pub(super) kings: u64,
    /// Counter combinations carried over (the opponent's three-move state and
    /// the draw counter): the low part of a state's counter offset.
    pub(super) carried: u64,
    /// Counter combinations per placement.
    pub(super) per: u64,
    /// `per` as a divisor, and the nodes per placement (`carried * kings`).
    per_div: Divisor,
    nodes_div: Divisor,
}

impl Fresh {
    /// The relay nodes of `ix`'s table, if its side to move has them.
    pub(super) fn of(ix: &MaterialIndex) -> Option<Fresh> {
        let m = ix.material();
        (m.stm_men > 0 && m.stm_kings >= 2).then(|| {
            let (kings, carried, per) = (
                m.stm_kings as u64,
                ix.carried_counters(),
                ix.counters_per_placement(),
            );
            Fresh {
                kings,
                carried,
                per,
                per_div: Divisor::new(per),
                nodes_div: Divisor::new(carried * kings),
            }
        })
    }

    /// Nodes per part of a batch (a slice of `len` states).
    pub(super) fn per_part(&self, len: u64) -> u64 {
        len / self.per * self.carried * self.kings
    }

    /// The node of king number `king` (in the White-to-move form's square
    /// order) for the placement starting at batch position `start`, counters
    /// `carried`; parts hold `len` states and `per_part` nodes.
    #[inline]
    pub(super) fn node(
        &self,
        start: u64,
        carried: u64,
        king: u64,
        len: Divisor,
        per_part: u64,
    ) -> u64 {
        let (part, offset) = len.div_rem(start);
        part * per_part
            + self.per_div.div(offset) * self.carried * self.kings
            + carried * self.kings
            + king
    }

    /// Call `f` with the batch position of every state that has node `node`
    /// as an option: three-move state none, or another king with any count.
    #[inline]
    pub(super) fn for_each_parent(
        &self,
        node: u64,
        len: u64,
        per_part: Divisor,
        mut f: impl FnMut(u64),
    ) {
        let (part, rest) = per_part.div_rem(node);
        let placement = self.nodes_div.div(rest);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::propagate::PredecessorCounters;
    use crate::material::Material;
    use crate::position::Position;
    use crate::retro::{for_each_king_retro_move, moved, Undoing};
    use crate::rules::{KingCount, RuleSet};

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
                let (len_div, per_part_div) = (Divisor::new(len), Divisor::new(per_part));
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
                            fresh.node(start, preds.carried(), (code - 1) / 3, len_div, per_part);
                        assert!(node < per_part);
                        let mut parents = Vec::new();
                        fresh.for_each_parent(node, len, per_part_div, |j| parents.push(j));
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
}
