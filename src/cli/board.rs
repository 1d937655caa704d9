//! `moves`, `perft` and `show`: the rules engine on the command line.

use frisian_tb::{fen, perft, Move, Position, RuleSet, Side};
use serde::Serialize;
use std::time::Instant;

#[derive(Serialize)]
struct MoveJson {
    #[serde(rename = "move")]
    notation: String,
    from: u32,
    to: u32,
    captures: Vec<u32>,
    path: Vec<u32>,
}

fn move_json(m: &Move, legal: &[Move]) -> MoveJson {
    MoveJson {
        notation: m.notation_among(legal),
        from: m.from().number(),
        to: m.to().number(),
        captures: m.captures().squares().map(|s| s.number()).collect(),
        path: m.path().map(|s| s.number()).collect(),
    }
}

/// Legal moves sorted by origin, destination, then captured squares.
fn sorted_moves(pos: &Position) -> Vec<Move> {
    let mut legal = pos.legal_moves();
    legal.sort_by_key(|m| {
        (
            m.from(),
            m.to(),
            m.captures()
                .squares()
                .map(|s| s.number())
                .collect::<Vec<_>>(),
        )
    });
    legal
}

pub(super) fn cmd_moves(pos: &Position, json: bool) {
    let legal = sorted_moves(pos);
    if json {
        let list: Vec<MoveJson> = legal.iter().map(|m| move_json(m, &legal)).collect();
        println!("{}", serde_json::to_string(&list).expect("serialisable"));
        return;
    }
    if let Some(o) = pos.outcome() {
        println!(
            "Game over: {} ({}) for {}.",
            o.wdl,
            o.ending.describe(),
            pos.turn()
        );
    }
    println!(
        "{} legal move{} for {}:",
        legal.len(),
        if legal.len() == 1 { "" } else { "s" },
        pos.turn()
    );
    for m in &legal {
        let mut line = format!("  {}", m.notation_among(&legal));
        if m.is_capture() {
            let caps: Vec<String> = m.captures().squares().map(|s| s.to_string()).collect();
            line += &format!("  captures {}", caps.join(","));
            if m.path().count() > 2 {
                line += &format!("  via {}", m.pdn_long());
            }
        }
        if m.promotes() {
            line += "  (promotes)";
        }
        println!("{line}");
    }
}

#[derive(Serialize)]
struct PerftJson {
    depth: u32,
    nodes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    divide: Option<Vec<DivideJson>>,
}

#[derive(Serialize)]
struct DivideJson {
    #[serde(rename = "move")]
    notation: String,
    nodes: u64,
}

pub(super) fn cmd_perft(pos: &Position, depth: u32, divide: bool, json: bool) {
    let t = Instant::now();
    let (nodes, split) = if divide {
        let legal = pos.legal_moves();
        let d = perft::divide(pos, depth);
        let total = if depth == 0 {
            1
        } else {
            d.iter().map(|(_, n)| n).sum()
        };
        let rows: Vec<(String, u64)> = d
            .iter()
            .map(|(m, n)| (m.notation_among(&legal), *n))
            .collect();
        (total, Some(rows))
    } else {
        (perft::perft(pos, depth), None)
    };
    let secs = t.elapsed().as_secs_f64();
    if json {
        let out = PerftJson {
            depth,
            nodes,
            divide: split.map(|rows| {
                rows.into_iter()
                    .map(|(notation, nodes)| DivideJson { notation, nodes })
                    .collect()
            }),
        };
        println!("{}", serde_json::to_string(&out).expect("serialisable"));
        return;
    }
    if let Some(rows) = split {
        for (m, n) in rows {
            println!("{m:>10} {n}");
        }
    }
    println!(
        "perft {depth}: {nodes} nodes in {secs:.3} s ({:.1} M nodes/s)",
        nodes as f64 / secs.max(1e-9) / 1e6
    );
}

/// A text diagram: the board with pieces (w/b men, W/B kings), the square
/// numbers of each row, the side to move and the counters.
pub(super) fn board_diagram(pos: &Position) -> String {
    use frisian_tb::{Role, Square};
    let mut s = String::new();
    s.push_str("    +---------------------+\n");
    for row in 0..10 {
        s.push_str("    | ");
        for col in 0..10 {
            let cell = match Square::from_coords(row, col) {
                None => ' ',
                Some(sq) => match pos.piece_at(sq) {
                    None => '.',
                    Some(p) => match (p.side, p.role) {
                        (Side::White, Role::Man) => 'w',
                        (Side::White, Role::King) => 'W',
                        (Side::Black, Role::Man) => 'b',
                        (Side::Black, Role::King) => 'B',
                    },
                },
            };
            s.push(cell);
            s.push(' ');
        }
        s.push_str(&format!("|  {:>2}-{:<2}\n", row * 5 + 1, row * 5 + 5));
    }
    s.push_str("    +---------------------+\n");
    s.push_str(&format!("FEN: {}\n", fen::write(pos)));
    s.push_str(&format!(
        "Rules: {}. {} to move.\n",
        pos.rules(),
        pos.turn()
    ));
    for side in Side::BOTH {
        let state = match pos.three_move(side) {
            Some(kc) => format!(
                "king on {} has made {} ordinary move{} in a row",
                kc.square,
                kc.count,
                if kc.count == 1 { "" } else { "s" }
            ),
            None if pos.three_move_applies(side) => "no king move counted".to_string(),
            None => "does not apply".to_string(),
        };
        s.push_str(&format!("Three-move rule, {side}: {state}.\n"));
    }
    if let Some(sm) = pos.seven_move() {
        s.push_str(&format!(
            "Seven-move rule: {} has made {} of 7 moves.\n",
            sm.strong, sm.moves
        ));
    }
    if let Some(limit) = pos
        .ply_limit()
        .filter(|_| pos.rules() == RuleSet::Lidraughts)
    {
        s.push_str(&format!(
            "Lidraughts draw count: {} of {} plies.\n",
            pos.plies(),
            limit
        ));
    }
    match pos.outcome() {
        Some(o) => s.push_str(&format!(
            "Game over: {} for {} ({}).\n",
            o.wdl,
            pos.turn(),
            o.ending.describe()
        )),
        None => {
            let n = pos.legal_moves().len();
            s.push_str(&format!(
                "{n} legal move{}.\n",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    s
}

/// `show --json`: the position, its pieces, its counters and whether the
/// game is over.
pub(super) fn show_json(pos: &Position) -> serde_json::Value {
    use serde_json::json;
    let squares = |b: frisian_tb::Bitboard| b.squares().map(|s| s.number()).collect::<Vec<_>>();
    let side = |side: Side| {
        let three_move = match pos.three_move(side) {
            Some(kc) => json!({"king": kc.square.number(), "count": kc.count}),
            None if pos.three_move_applies(side) => {
                json!({"king": null, "count": 0})
            }
            None => serde_json::Value::Null,
        };
        json!({
            "men": squares(pos.men(side)),
            "kings": squares(pos.kings(side)),
            "three_move": three_move,
        })
    };
    let outcome = pos
        .outcome()
        .map(|o| json!({"wdl": o.wdl.to_string(), "ending": o.ending.describe()}));
    json!({
        "fen": fen::write(pos),
        "rules": pos.rules().name(),
        "turn": pos.turn().to_string().to_lowercase(),
        "white": side(Side::White),
        "black": side(Side::Black),
        "seven_move": pos.seven_move().map(|sm| json!({
            "side": sm.strong.to_string().to_lowercase(),
            "moves": sm.moves,
        })),
        "lidraughts_plies": pos
            .ply_limit()
            .filter(|_| pos.rules() == RuleSet::Lidraughts)
            .map(|limit| json!({"plies": pos.plies(), "limit": limit})),
        "legal_moves": pos.legal_moves().len(),
        "outcome": outcome,
    })
}
