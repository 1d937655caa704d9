//! The index is a bijection between a material's states and 0..size.

use frisian_tb::{fen, Material, MaterialIndex, Position, RuleSet};

fn check_bijection(m: Material, rules: RuleSet) {
    let ix = MaterialIndex::new(m, rules);
    for i in 0..ix.size() {
        let p = ix.position(i);
        assert_eq!(Material::of(&p), m);
        assert_eq!(ix.index(&p), i, "{m} {rules}: {}", fen::write(&p));
        // Every decoded state is a legal, normalised position.
        let again = Position::from_setup(&p.to_setup(), rules).unwrap();
        assert_eq!(again, p, "{m} {rules}: {}", fen::write(&p));
        // Its colour flip has the same index.
        assert_eq!(ix.index(&p.flip()), i);
    }
}

#[test]
fn index_is_a_bijection_for_every_material_up_to_three_pieces() {
    for rules in RuleSet::ALL {
        for m in Material::all(3) {
            check_bijection(m, rules);
        }
    }
}

#[test]
fn index_is_a_bijection_for_four_piece_materials_with_counters() {
    for name in ["KMvK", "KKvKK", "MMvK", "KMvM"] {
        check_bijection(name.parse().unwrap(), RuleSet::Official);
    }
}

#[test]
#[ignore = "slow: every 4-piece material; cargo test --release -- --ignored"]
fn index_is_a_bijection_for_every_four_piece_material() {
    for m in Material::all(4).into_iter().filter(|m| m.pieces() == 4) {
        check_bijection(m, RuleSet::Official);
    }
}

/// The documented size formula, computed independently by counting placements.
fn brute_force_placements(m: Material) -> u64 {
    // Count placements of men square by square: White men on 6-50, Black men on 1-45.
    let (a, wk, b, bk) = (
        m.stm_men as usize,
        m.stm_kings as usize,
        m.opp_men as usize,
        m.opp_kings as usize,
    );
    fn c(n: usize, k: usize) -> u64 {
        if k > n {
            return 0;
        }
        (0..k).fold(1u64, |acc, i| acc * (n - i) as u64 / (i + 1) as u64)
    }
    // j White men on 46-50 (only White may stand there); a-j on 6-45; Black men on 1-45 minus those.
    let mut men = 0;
    for j in 0..=a.min(5) {
        men += c(5, j) * c(40, a - j) * c(45 - (a - j), b);
    }
    men * c(50 - a - b, wk) * c(50 - a - b - wk, bk)
}

#[test]
fn size_follows_the_documented_formula() {
    for m in Material::all(5) {
        let ix = MaterialIndex::new(m, RuleSet::Official);
        assert_eq!(ix.placements(), brute_force_placements(m), "{m}");
        let t = |men: u8, kings: u8| {
            if men > 0 && kings > 0 {
                1 + 3 * kings as u64
            } else {
                1
            }
        };
        let s = match (m.stm_men + m.opp_men, m.stm_kings, m.opp_kings) {
            (0, 2, 1) | (0, 1, 2) => 8,
            (0, 1, 1) => 3,
            _ => 1,
        };
        assert_eq!(
            ix.size(),
            ix.placements() * t(m.stm_men, m.stm_kings) * t(m.opp_men, m.opp_kings) * s,
            "{m}"
        );
    }
    // Small cases by hand: one king each, 50 * 49 placements, three counter values.
    assert_eq!(
        MaterialIndex::new("KvK".parse().unwrap(), RuleSet::Official).size(),
        50 * 49 * 3
    );
    assert_eq!(
        MaterialIndex::new("KvK".parse().unwrap(), RuleSet::Lidraughts).size(),
        50 * 49 * 5
    );
    // A man each: White's man on 6-50 (45), Black's on 1-45 less White's square.
    assert_eq!(
        MaterialIndex::new("MvM".parse().unwrap(), RuleSet::Official).size(),
        5 * 45 + 40 * 44
    );
}

/// Counts placements by trying every square for every piece (pieces of one kind in
/// increasing square order), for materials of up to three pieces.
fn enumerate_placements(m: Material) -> u64 {
    // Kinds: (count, allowed squares).
    let kinds: Vec<(u8, Vec<u32>)> = vec![
        (m.stm_men, (6..=50).collect()),
        (m.stm_kings, (1..=50).collect()),
        (m.opp_men, (1..=45).collect()),
        (m.opp_kings, (1..=50).collect()),
    ];
    fn go(kinds: &[(u8, Vec<u32>)], kind: usize, left: u8, min: u32, used: &mut Vec<u32>) -> u64 {
        if kind == kinds.len() {
            return 1;
        }
        if left == 0 {
            let next = kinds.get(kind + 1).map_or(0, |k| k.0);
            return go(kinds, kind + 1, next, 0, used);
        }
        let mut n = 0;
        for &sq in &kinds[kind].1 {
            if sq <= min || used.contains(&sq) {
                continue;
            }
            used.push(sq);
            n += go(kinds, kind, left - 1, sq, used);
            used.pop();
        }
        n
    }
    go(&kinds, 0, kinds[0].0, 0, &mut Vec::new())
}

#[test]
fn size_matches_a_brute_force_count_up_to_three_pieces() {
    for m in Material::all(3) {
        assert_eq!(
            MaterialIndex::new(m, RuleSet::Official).placements(),
            enumerate_placements(m),
            "{m}"
        );
    }
}

/// The generator lays out the slices of a material and of its colour flip
/// at multiples of one length, so the two must have slices of equal size.
#[test]
fn a_material_and_its_flip_have_slices_of_one_length() {
    for rules in RuleSet::ALL {
        for m in Material::all(7) {
            let (a, b) = (
                MaterialIndex::new(m, rules),
                MaterialIndex::new(m.flip(), rules),
            );
            assert_eq!(a.slice_len(), b.slice_len(), "{m} {rules}");
            assert_eq!(
                a.counters_per_placement(),
                b.counters_per_placement(),
                "{m} {rules}"
            );
        }
    }
}
