//! Property tests on random reachable and random sparse positions.

mod common;

use common::{random_game, random_sparse};
use frisian_tb::{fen, Bitboard, Direction, KingCount, Move, Position, RuleSet, Side, Square};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// Positions from one random game (both rule sets, both starts) or one sparse placement.
fn positions() -> impl Strategy<Value = Vec<Position>> {
    (any::<u64>(), 0usize..2, 0usize..3).prop_map(|(seed, r, kind)| {
        let rules = RuleSet::ALL[r];
        match kind {
            0 => random_game(Position::initial(rules), 250, seed),
            1 => random_game(Position::frysk(rules), 250, seed),
            _ => {
                let p = random_sparse(seed, rules);
                random_game(p, 30, seed)
            }
        }
    })
}

fn key(m: &Move) -> (Square, Square, Bitboard) {
    (m.from(), m.to(), m.captures())
}

/// The captured piece between two landing squares: the one enemy piece on the line between
/// them, everything else on the way empty (or the mover's origin). `None` if not a jump.
fn jumped(p: &Position, origin: Square, a: Square, b: Square, king: bool) -> Option<Square> {
    for d in Direction::ALL {
        let mut between = Vec::new();
        let mut cur = a;
        while let Some(n) = cur.step(d) {
            if n == b {
                let enemies: Vec<Square> = between
                    .iter()
                    .copied()
                    .filter(|&s| p.pieces(p.turn().opponent()).contains(s))
                    .collect();
                let others_empty = between.iter().all(|&s| {
                    s == origin
                        || !p.occupied().contains(s)
                        || p.pieces(p.turn().opponent()).contains(s)
                });
                if enemies.len() == 1 && others_empty && (king || between.len() == 1) {
                    return Some(enemies[0]);
                }
                return None;
            }
            between.push(n);
            cur = n;
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn fen_round_trips(line in positions()) {
        for p in line {
            let text = fen::write(&p);
            let back = fen::parse(&text, p.rules()).unwrap();
            prop_assert_eq!(back, p, "{}", text);
        }
    }

    #[test]
    fn colour_symmetry_maps_moves_onto_moves(line in positions()) {
        for p in line {
            let flipped = p.flip();
            prop_assert_eq!(flipped.flip(), p);
            let mapped: BTreeSet<_> = p.legal_moves().iter().map(|m| {
                (m.from().flip(), m.to().flip(), m.captures().flip())
            }).collect();
            let theirs: BTreeSet<_> = flipped.legal_moves().iter().map(key).collect();
            prop_assert_eq!(mapped, theirs, "{}", fen::write(&p));
            prop_assert_eq!(p.outcome(), flipped.outcome());
        }
    }

    #[test]
    fn captured_squares_are_enemy_pieces_on_the_path(line in positions()) {
        for p in line {
            for m in p.legal_moves().iter().filter(|m| m.is_capture()) {
                let path: Vec<Square> = m.path().collect();
                let mut taken = Bitboard::EMPTY;
                for leg in path.windows(2) {
                    let j = jumped(&p, m.from(), leg[0], leg[1], m.is_king_move());
                    prop_assert!(j.is_some(), "{:?} in {}: leg {:?}", m, fen::write(&p), leg);
                    let j = j.unwrap();
                    prop_assert!(!taken.contains(j), "{:?} jumps {} twice", m, j);
                    taken = taken.with(j);
                }
                prop_assert_eq!(taken, m.captures());
            }
        }
    }

    #[test]
    fn counters_follow_the_rules_after_every_move(line in positions()) {
        for p in line {
            let us = p.turn();
            for m in p.legal_moves() {
                let after = p.play(&m);
                // Three-move rule: an ordinary king move counts, anything else releases.
                let applies = after.men(us).any() && after.kings(us).any();
                let expected = if !applies || m.is_capture() || !m.is_king_move() {
                    None
                } else {
                    let count = match p.three_move(us) {
                        Some(kc) if kc.square == m.from() => kc.count + 1,
                        _ => 1,
                    };
                    Some(KingCount { square: m.to(), count })
                };
                prop_assert_eq!(after.three_move(us), expected, "{:?} in {}", m, fen::write(&p));
                prop_assert!(after.three_move(us).is_none_or(|kc| kc.count <= 3));
                // The opponent's state stays unless its king was taken or its last man went.
                let them = us.opponent();
                if let Some(kc) = p.three_move(them) {
                    let keeps = !m.captures().contains(kc.square) && after.men(them).any();
                    prop_assert_eq!(after.three_move(them).is_some(), keeps);
                }
                match p.rules() {
                    RuleSet::Official => {
                        let material_changed = m.is_capture() || m.promotes();
                        match after.two_kings_vs_one() {
                            Some(strong) => {
                                let moves = if material_changed { 0 } else { p.seven_move().unwrap().moves + u8::from(strong == us) };
                                prop_assert_eq!(after.seven_move().map(|s| (s.strong, s.moves)), Some((strong, moves)));
                            }
                            None if !after.one_king_each() => prop_assert_eq!(after.seven_move(), None),
                            None => {}
                        }
                    }
                    RuleSet::Lidraughts => {
                        let expect = match after.ply_limit() {
                            Some(_) if m.is_capture() || m.promotes() => 0,
                            Some(_) => p.plies() + 1,
                            None => 0,
                        };
                        prop_assert_eq!(after.plies(), expect);
                    }
                }
                prop_assert_eq!(after.turn(), them);
            }
        }
    }
}

#[test]
fn side_letters_are_stable() {
    assert_eq!(Side::White.letter(), 'W');
    assert_eq!(Side::Black.opponent(), Side::White);
}

#[test]
fn random_games_are_long_and_varied() {
    let lengths: Vec<usize> = (0..20)
        .map(|s| random_game(Position::initial(RuleSet::Official), 250, s).len())
        .collect();
    let total: usize = lengths.iter().sum();
    assert!(total > 20 * 40, "{lengths:?}");
    let with_kings = (0..20)
        .flat_map(|s| random_game(Position::initial(RuleSet::Official), 250, s))
        .filter(|p| p.kings(Side::White).any() || p.kings(Side::Black).any())
        .count();
    assert!(with_kings > 100, "{with_kings}");
}

/// Text that looks like FEN, PDN or a move, damaged: the alphabet of those
/// notations with a few stray characters.
fn notation_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[WBKwbk0-9:,.\\-x\"\\[\\] HhGg]{0,60}",
        ".{0,40}",
        // A valid FEN with one character replaced or dropped.
        (
            any::<u64>(),
            any::<prop::sample::Index>(),
            any::<char>(),
            any::<bool>()
        )
            .prop_map(|(seed, at, c, drop)| {
                let line = random_game(Position::initial(RuleSet::Official), 60, seed);
                let mut chars: Vec<char> = fen::write(line.last().unwrap()).chars().collect();
                let i = at.index(chars.len());
                if drop {
                    chars.remove(i);
                } else {
                    chars[i] = c;
                }
                chars.into_iter().collect()
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Bad input gets an error, never a panic: FEN, moves and PDN.
    #[test]
    fn damaged_notation_gives_errors_not_panics(text in notation_like()) {
        for rules in RuleSet::ALL {
            if let Ok(p) = fen::parse(&text, rules) {
                // What parses is a position the rest of the library can use.
                let again = fen::parse(&fen::write(&p), rules);
                prop_assert_eq!(again.as_ref().ok(), Some(&p));
                let _ = p.legal_moves();
            }
        }
        let legal = Position::initial(RuleSet::Official).legal_moves();
        let _ = frisian_tb::moves::parse_move(&text, &legal);
        let _ = frisian_tb::pdn::move_text(&text);
        let _ = frisian_tb::pdn::parse_games(&text);
    }
}
