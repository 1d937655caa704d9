//! Perft: counting the leaf nodes of the legal-move tree, the standard test of
//! a move generator. Identical captures (same origin, destination and
//! captured set) count once.

use crate::moves::{Move, MoveList};
use crate::position::Position;

/// Leaf nodes at `depth`, counting the last ply without playing it (bulk counting).
///
/// ```
/// use frisian_tb::{perft, Position, RuleSet};
/// assert_eq!(perft::perft(&Position::initial(RuleSet::Official), 3), 658);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    let mut buffers = vec![MoveList::with_capacity(64); depth as usize + 1];
    bulk(pos, depth, &mut buffers)
}

fn bulk(pos: &Position, depth: u32, buffers: &mut [MoveList]) -> u64 {
    let (buf, rest) = buffers.split_first_mut().expect("one buffer per ply");
    match depth {
        0 => 1,
        1 => pos.count_moves_with(buf) as u64,
        _ => {
            pos.generate_moves(buf);
            buf.iter()
                .map(|m| bulk(&pos.play(m), depth - 1, rest))
                .sum()
        }
    }
}

/// Leaf nodes at `depth`, playing every move down to the leaves (no bulk counting).
pub fn perft_plain(pos: &Position, depth: u32) -> u64 {
    let mut buffers = vec![MoveList::with_capacity(64); depth as usize + 1];
    plain(pos, depth, &mut buffers)
}

fn plain(pos: &Position, depth: u32, buffers: &mut [MoveList]) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (buf, rest) = buffers.split_first_mut().expect("one buffer per ply");
    pos.generate_moves(buf);
    buf.iter()
        .map(|m| plain(&pos.play(m), depth - 1, rest))
        .sum()
}

/// Perft split by first move: each legal move with the leaf count below it.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|m| (m, perft(&pos.play(&m), depth - 1)))
        .collect()
}
