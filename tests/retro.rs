//! Retro-moves agree with forward move generation: the edges "ordinary move
//! from s to c" found forwards are exactly those found by undoing moves from c,
//! counters included.

use frisian_tb::retro::predecessors;
use frisian_tb::{fen, Material, MaterialIndex, Position, RuleSet};

/// An order-independent fingerprint of a multiset of edges.
#[derive(Default, PartialEq, Debug)]
struct Multiset {
    count: u64,
    sum: u64,
    sum_sq: u64,
}

impl Multiset {
    fn add(&mut self, edge: (usize, u64, u64)) {
        let mut h = (edge.0 as u64)
            ^ edge.1.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ edge.2.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        self.count += 1;
        self.sum = self.sum.wrapping_add(h);
        self.sum_sq = self.sum_sq.wrapping_add(h.wrapping_mul(h));
    }
}

fn quiet_children(s: &Position) -> Vec<Position> {
    if s.outcome().is_some() {
        return Vec::new();
    }
    s.legal_moves()
        .iter()
        .filter(|m| !m.is_capture() && !m.promotes())
        .map(|m| s.play(m))
        .collect()
}

/// Full check: every edge of the pair `{m, m.flip()}`, both ways.
fn check_pair(m: Material, rules: RuleSet) {
    let mats = [m, m.flip()];
    let ix = mats.map(|x| MaterialIndex::new(x, rules));
    let (mut forward, mut backward) = (Multiset::default(), Multiset::default());
    for t in 0..2 {
        let (here, there) = (&ix[t], &ix[1 - t]);
        for i in 0..here.size() {
            let s = here.position(i);
            for c in quiet_children(&s) {
                forward.add((t, i, there.index(&c)));
            }
            predecessors(&s, |p| {
                assert_eq!(
                    p.outcome(),
                    None,
                    "terminal predecessor {} of {}",
                    fen::write(p),
                    fen::write(&s)
                );
                let reached = quiet_children(p).iter().any(|c| here.index(c) == i);
                assert!(
                    reached,
                    "{} does not lead to {}",
                    fen::write(p),
                    fen::write(&s)
                );
                backward.add((1 - t, there.index(p), i));
            });
        }
    }
    assert_eq!(forward, backward, "{m} {rules}: edges differ");
}

/// Sampled check for large materials: for random states, every ordinary move's
/// result lists the state among its predecessors exactly once per move, and every
/// predecessor leads back.
fn check_sample(m: Material, rules: RuleSet, samples: u64) {
    let ix = MaterialIndex::new(m, rules);
    let there = MaterialIndex::new(m.flip(), rules);
    let mut x = 0x1234_5678_9ABC_DEF0u64;
    for _ in 0..samples {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = x % ix.size();
        let s = ix.position(i);
        for c in quiet_children(&s) {
            let c_idx = there.index(&c);
            let canonical = there.position(c_idx);
            let mut hits = 0;
            predecessors(&canonical, |p| {
                if ix.index(p) == i {
                    hits += 1;
                }
            });
            assert_eq!(hits, 1, "{} -> {}", fen::write(&s), fen::write(&c));
        }
        predecessors(&s, |p| {
            assert!(
                quiet_children(p).iter().any(|c| ix.index(c) == i),
                "{} does not lead to {}",
                fen::write(p),
                fen::write(&s)
            );
        });
    }
}

#[test]
fn retro_moves_match_forward_moves_up_to_three_pieces() {
    for rules in RuleSet::ALL {
        for m in Material::all(3) {
            check_pair(m, rules);
        }
    }
}

#[test]
fn retro_moves_match_forward_moves_with_a_three_move_count() {
    check_pair("KMvK".parse().unwrap(), RuleSet::Official);
}

#[test]
fn retro_moves_match_forward_moves_on_samples_of_larger_materials() {
    for name in ["KMvKM", "KKMvK", "KKvKM", "MMvKM"] {
        check_sample(name.parse().unwrap(), RuleSet::Official, 20_000);
    }
    check_sample("KKvK".parse().unwrap(), RuleSet::Lidraughts, 20_000);
}
