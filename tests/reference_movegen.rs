//! An independent, deliberately naive move generator written from the text of
//! docs/RULES.md (board coordinates, no bitboards, no tables), compared with the
//! library's generator on many random positions.

mod common;

use common::{random_game, random_sparse};
use frisian_tb::{Bitboard, Position, RuleSet, Side};
use std::collections::BTreeSet;

#[derive(Copy, Clone, PartialEq)]
struct Piece {
    white: bool,
    king: bool,
}

type Board = [[Option<Piece>; 10]; 10];

/// A move as (origin, destination, sorted captured squares), in square numbers.
type Key = (u32, u32, Vec<u32>);

fn number(r: i32, c: i32) -> u32 {
    (r * 5 + c / 2 + 1) as u32
}

fn on_board(r: i32, c: i32) -> bool {
    (0..10).contains(&r) && (0..10).contains(&c) && (r + c) % 2 == 1
}

fn board_of(p: &Position) -> Board {
    let mut b: Board = [[None; 10]; 10];
    for side in Side::BOTH {
        for sq in p.pieces(side).squares() {
            b[sq.row() as usize][sq.col() as usize] = Some(Piece {
                white: side == Side::White,
                king: p.kings(side).contains(sq),
            });
        }
    }
    b
}

/// The eight capture lines: diagonals one step, rows and columns two squares on.
const LINES: [(i32, i32); 8] = [
    (-1, -1),
    (-1, 1),
    (1, -1),
    (1, 1),
    (0, -2),
    (0, 2),
    (-2, 0),
    (2, 0),
];

struct Seq {
    from: (i32, i32),
    to: (i32, i32),
    captured: Vec<(i32, i32)>,
    king: bool,
}

fn search(
    b: &Board,
    origin: (i32, i32),
    at: (i32, i32),
    king: bool,
    white: bool,
    captured: &mut Vec<(i32, i32)>,
    out: &mut Vec<Seq>,
) {
    // Empty: nothing there, or the moving piece's own origin.
    let empty = |r: i32, c: i32| {
        on_board(r, c) && ((r, c) == origin || b[r as usize][c as usize].is_none())
    };
    let enemy = |r: i32, c: i32| {
        on_board(r, c)
            && (r, c) != origin
            && matches!(b[r as usize][c as usize], Some(p) if p.white != white)
    };
    let mut extended = false;
    for (dr, dc) in LINES {
        let (mut r, mut c) = (at.0 + dr, at.1 + dc);
        if king {
            while empty(r, c) {
                r += dr;
                c += dc;
            }
        }
        if !enemy(r, c) || captured.contains(&(r, c)) {
            continue;
        }
        let over = (r, c);
        let (mut lr, mut lc) = (r + dr, c + dc);
        while empty(lr, lc) {
            extended = true;
            captured.push(over);
            search(b, origin, (lr, lc), king, white, captured, out);
            captured.pop();
            if !king {
                break;
            }
            lr += dr;
            lc += dc;
        }
    }
    if !extended && !captured.is_empty() {
        out.push(Seq {
            from: origin,
            to: at,
            captured: captured.clone(),
            king,
        });
    }
}

fn reference_moves(p: &Position) -> BTreeSet<Key> {
    let b = board_of(p);
    let white = p.turn() == Side::White;
    let rules = p.rules();
    let mut seqs = Vec::new();
    for r in 0..10 {
        for c in 0..10 {
            if let Some(piece) = b[r as usize][c as usize] {
                if piece.white == white {
                    search(
                        &b,
                        (r, c),
                        (r, c),
                        piece.king,
                        white,
                        &mut Vec::new(),
                        &mut seqs,
                    );
                }
            }
        }
    }
    if !seqs.is_empty() {
        // Value from the rule text: m men and k kings are worth m + 2k - 1/2 (official),
        // or 100 per man and 199 per king (lidraughts). Doubled to stay integral.
        let value = |s: &Seq| {
            let k = s
                .captured
                .iter()
                .filter(|&&(r, c)| b[r as usize][c as usize].unwrap().king)
                .count() as i64;
            let m = s.captured.len() as i64 - k;
            match rules {
                RuleSet::Official => 2 * m + if k > 0 { 4 * k - 1 } else { 0 },
                RuleSet::Lidraughts => 100 * m + 199 * k,
            }
        };
        let best = seqs.iter().map(value).max().unwrap();
        let mut top: Vec<&Seq> = seqs.iter().filter(|s| value(s) == best).collect();
        if top.iter().any(|s| s.king) {
            top.retain(|s| s.king);
        }
        return top
            .iter()
            .map(|s| {
                let mut caps: Vec<u32> = s.captured.iter().map(|&(r, c)| number(r, c)).collect();
                caps.sort();
                (number(s.from.0, s.from.1), number(s.to.0, s.to.1), caps)
            })
            .collect();
    }
    let mut out = BTreeSet::new();
    let forward = if white { -1 } else { 1 };
    let blocked = p
        .three_move(p.turn())
        .filter(|kc| kc.count >= 3)
        .map(|kc| (kc.square.row(), kc.square.col()));
    for r in 0..10 {
        for c in 0..10 {
            let Some(piece) = b[r as usize][c as usize] else {
                continue;
            };
            if piece.white != white {
                continue;
            }
            if !piece.king {
                for dc in [-1, 1] {
                    let (tr, tc) = (r + forward, c + dc);
                    if on_board(tr, tc) && b[tr as usize][tc as usize].is_none() {
                        out.insert((number(r, c), number(tr, tc), vec![]));
                    }
                }
            } else if blocked != Some((r, c)) {
                for (dr, dc) in [(-1, -1), (-1, 1), (1, -1), (1, 1)] {
                    let (mut tr, mut tc) = (r + dr, c + dc);
                    while on_board(tr, tc) && b[tr as usize][tc as usize].is_none() {
                        out.insert((number(r, c), number(tr, tc), vec![]));
                        tr += dr;
                        tc += dc;
                    }
                }
            }
        }
    }
    out
}

fn library_moves(p: &Position) -> BTreeSet<Key> {
    let legal = p.legal_moves();
    let set: BTreeSet<Key> = legal
        .iter()
        .map(|m| {
            (
                m.from().number(),
                m.to().number(),
                m.captures().squares().map(|s| s.number()).collect(),
            )
        })
        .collect();
    assert_eq!(
        set.len(),
        legal.len(),
        "a move listed twice in {}",
        frisian_tb::fen::write(p)
    );
    set
}

fn check(p: &Position) {
    assert_eq!(
        library_moves(p),
        reference_moves(p),
        "moves differ in {}",
        frisian_tb::fen::write(p)
    );
    // Playing a move moves the piece, removes the captured ones and promotes on the far row.
    for m in p.legal_moves() {
        let after = p.play(&m);
        let us = p.turn();
        let expected = (p.pieces(us) ^ Bitboard::from_square(m.from())).with(m.to());
        assert_eq!(after.pieces(us), expected);
        assert_eq!(
            after.pieces(us.opponent()),
            p.pieces(us.opponent()) & !m.captures()
        );
        let promoted =
            !p.kings(us).contains(m.from()) && Bitboard::promotion_row(us).contains(m.to());
        assert_eq!(
            after.kings(us).contains(m.to()),
            p.kings(us).contains(m.from()) || promoted
        );
    }
}

#[test]
fn reference_agrees_on_random_games() {
    let mut positions = 0;
    for seed in 0..300u64 {
        let rules = RuleSet::ALL[(seed % 2) as usize];
        let start = if seed % 3 == 0 {
            Position::frysk(rules)
        } else {
            Position::initial(rules)
        };
        for p in random_game(start, 200, seed) {
            check(&p);
            positions += 1;
        }
    }
    assert!(positions > 10_000, "{positions}");
}

#[test]
fn reference_agrees_on_random_sparse_positions() {
    for seed in 0..20_000u64 {
        let rules = RuleSet::ALL[(seed % 2) as usize];
        check(&random_sparse(seed, rules));
    }
}

#[test]
fn reference_agrees_on_kings_everywhere() {
    // Many kings make long, branching capture sequences.
    for seed in 0..3000u64 {
        let mut rng = common::Rng::new(seed ^ 0xABCD);
        let mut squares: Vec<u32> = (1..=50).collect();
        let mut text = String::from(if seed % 2 == 0 { "W:W" } else { "B:W" });
        let mut parts = [Vec::new(), Vec::new()];
        for i in 0..(4 + rng.below(14)) {
            let sq = squares.swap_remove(rng.below(squares.len()));
            let side = i % 2;
            let man_ok = if side == 0 { sq > 5 } else { sq < 46 };
            parts[side].push(if man_ok && rng.below(2) == 0 {
                sq.to_string()
            } else {
                format!("K{sq}")
            });
        }
        text += &parts[0].join(",");
        text += ":B";
        text += &parts[1].join(",");
        let p = frisian_tb::fen::parse(&text, RuleSet::ALL[(seed % 2) as usize]).unwrap();
        check(&p);
    }
}
