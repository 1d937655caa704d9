//! Shared test helpers: random positions, reachable by play or placed at random;
//! a table header's checksum made to match after a change; the command line
//! run as a user runs it.

#![allow(dead_code)]

use frisian_tb::{fen, Position, RuleSet};

/// A small deterministic generator (SplitMix64), so failures reproduce from the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The positions of one random game from `start`, at most `plies` long, ending early
/// when the game is over.
pub fn random_game(start: Position, plies: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let mut line = vec![start];
    let mut pos = start;
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.outcome().is_some() {
            break;
        }
        pos = pos.play(&moves[rng.below(moves.len())]);
        line.push(pos);
    }
    line
}

/// A random sparse position: a few men and kings per side placed at random, a random side
/// to move, and (where they apply) random counters.
pub fn random_sparse(seed: u64, rules: RuleSet) -> Position {
    let mut rng = Rng::new(seed);
    loop {
        let mut squares: Vec<u32> = (1..=50).collect();
        let mut take = |rng: &mut Rng| squares.swap_remove(rng.below(squares.len()));
        let mut sides = [Vec::new(), Vec::new()];
        for (i, side) in sides.iter_mut().enumerate() {
            let n = 1 + rng.below(6);
            for _ in 0..n {
                let sq = take(&mut rng);
                let promotion = if i == 0 { sq <= 5 } else { sq >= 46 };
                if promotion || rng.below(3) == 0 {
                    side.push(format!("K{sq}"));
                } else {
                    side.push(sq.to_string());
                }
            }
        }
        let turn = if rng.below(2) == 0 { "W" } else { "B" };
        let mut text = format!("{turn}:W{}:B{}", sides[0].join(","), sides[1].join(","));
        // A three-move count for a side with men and kings.
        for (i, letter) in ["W", "B"].iter().enumerate() {
            let kings: Vec<&String> = sides[i].iter().filter(|s| s.starts_with('K')).collect();
            let men = sides[i].iter().any(|s| !s.starts_with('K'));
            if men && !kings.is_empty() && rng.below(2) == 0 {
                let k = &kings[rng.below(kings.len())][1..];
                text += &format!(":T{letter}{k}/{}", 1 + rng.below(3));
            }
        }
        let Ok(mut pos) = fen::parse(&text, rules) else {
            continue;
        };
        if pos.two_kings_vs_one().is_some() || pos.one_king_each() {
            let extra = match rules {
                RuleSet::Official => {
                    let strong = if pos.pieces(frisian_tb::Side::White).count()
                        >= pos.pieces(frisian_tb::Side::Black).count()
                    {
                        "W"
                    } else {
                        "B"
                    };
                    format!(":S{strong}{}", rng.below(8))
                }
                RuleSet::Lidraughts => {
                    format!(":H{}", rng.below(pos.ply_limit().unwrap() as usize + 1))
                }
            };
            if let Ok(p) = fen::parse(&(text.clone() + &extra), rules) {
                pos = p;
            }
        }
        return pos;
    }
}

/// Recompute a table header's checksum (FNV-1a 64 of bytes 0..80, stored at
/// 80..88), so that a changed header field gets past it.
pub fn reseal_header(b: &mut [u8]) {
    if b.len() >= frisian_tb::table::HEADER_LEN {
        let sum = frisian_tb::table::Fnv::of(&b[..80]);
        b[80..88].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Run the `frisian-tb` binary: its exit status, standard output and error.
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_frisian-tb"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The official tables up to `pieces` pieces, generated afresh by the
/// command line into `name` under the test directory.
pub fn generated(name: &str, pieces: u32) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let (n, d) = (pieces.to_string(), dir.to_str().unwrap().to_string());
    let (code, _, err) = run_cli(&["generate", "--max-pieces", &n, "--out", &d]);
    assert_eq!(code, 0, "{err}");
    dir
}
