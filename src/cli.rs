//! The `frisian-tb` command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use frisian_tb::moves::parse_move;
use frisian_tb::{fen, perft, Move, Position, RuleSet, Side};
use serde::Serialize;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "frisian-tb",
    version,
    about = "Frisian draughts rules engine and endgame tablebases",
    after_help = "Examples:\n  frisian-tb moves 'W:W31-50:B1-20'\n  frisian-tb perft --depth 8\n  frisian-tb show --play '32-27 20-24' 'W:W31-50:B1-20'"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the legal moves of a position.
    #[command(
        after_help = "Examples:\n  frisian-tb moves 'W:W31-50:B1-20'\n  frisian-tb moves --play '32-27 20-24 33-29 24x33' --json 'W:W31-50:B1-20'"
    )]
    Moves {
        #[command(flatten)]
        common: Common,
        /// Print JSON: a list of {move, from, to, captures, path}.
        #[arg(long)]
        json: bool,
        /// Position in FEN, e.g. 'W:W31-50:B1-20'.
        fen: String,
    },
    /// Count the leaf nodes of the move tree (perft).
    #[command(
        after_help = "Examples:\n  frisian-tb perft --depth 8\n  frisian-tb perft --start frysk --depth 6 --divide\n  frisian-tb perft --depth 3 --json 'W:WK46:BK5'"
    )]
    Perft {
        #[command(flatten)]
        common: Common,
        /// Depth in plies.
        #[arg(long, short)]
        depth: u32,
        /// Also count the nodes below each first move.
        #[arg(long)]
        divide: bool,
        /// Print JSON: {"depth": N, "nodes": M} (with --divide also "divide": [{move, nodes}]).
        #[arg(long)]
        json: bool,
        /// Start position when no FEN is given.
        #[arg(long, value_enum, default_value = "initial")]
        start: Start,
        /// Position in FEN; default: the start position.
        fen: Option<String>,
    },
    /// Draw the board with its counter state.
    #[command(
        after_help = "Examples:\n  frisian-tb show 'W:W31-50:B1-20'\n  frisian-tb show 'W:WK45,31:B7:TW45/2'"
    )]
    Show {
        #[command(flatten)]
        common: Common,
        /// Position in FEN.
        fen: String,
    },
}

#[derive(Args)]
struct Common {
    /// Rule set: official (FMJD) or lidraughts (server interpretation).
    #[arg(long, default_value = "official")]
    rules: RuleSet,
    /// Moves to play first, space separated PDN (e.g. "32-27 20-24 33-29 24x33"); move numbers are skipped.
    #[arg(long, value_name = "MOVES")]
    play: Option<String>,
}

#[derive(Copy, Clone, ValueEnum)]
enum Start {
    /// Black men on 1-20, white men on 31-50.
    Initial,
    /// The "Frysk!" start: black men on 1-5, white men on 46-50.
    Frysk,
}

/// A command-line failure: printed to stderr, exit status 2.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    Fen(#[from] fen::FenError),
    #[error("--play: {0}")]
    Play(String),
}

/// Run the command line; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Moves { common, json, fen } => {
            let pos = position(&common, Some(&fen), Start::Initial)?;
            cmd_moves(&pos, json);
        }
        Command::Perft {
            common,
            depth,
            divide,
            json,
            start,
            fen,
        } => {
            let pos = position(&common, fen.as_deref(), start)?;
            cmd_perft(&pos, depth, divide, json);
        }
        Command::Show { common, fen } => {
            let pos = position(&common, Some(&fen), Start::Initial)?;
            print!("{}", board_diagram(&pos));
        }
    }
    Ok(())
}

/// The position from a FEN (or a start position), after the `--play` moves.
fn position(common: &Common, fen_text: Option<&str>, start: Start) -> Result<Position, CliError> {
    let mut pos = match (fen_text, start) {
        (Some(text), _) => fen::parse(text, common.rules)?,
        (None, Start::Initial) => Position::initial(common.rules),
        (None, Start::Frysk) => Position::frysk(common.rules),
    };
    if let Some(moves) = &common.play {
        let tokens = moves
            .split_whitespace()
            .filter(|t| !t.ends_with('.') && !t.chars().all(|c| c.is_ascii_digit()));
        for (i, text) in tokens.enumerate() {
            let legal = pos.legal_moves();
            if let Some(outcome) = pos.outcome() {
                return Err(CliError::Play(format!(
                    "cannot play '{text}' (move {}): the game is over ({}: {} for {})",
                    i + 1,
                    outcome.ending.describe(),
                    outcome.wdl,
                    pos.turn()
                )));
            }
            let m = parse_move(text, &legal).map_err(|e| {
                CliError::Play(format!("move {} ({} to move): {e}", i + 1, pos.turn()))
            })?;
            pos = pos.play(&m);
        }
    }
    Ok(pos)
}

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

fn cmd_moves(pos: &Position, json: bool) {
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

fn cmd_perft(pos: &Position, depth: u32, divide: bool, json: bool) {
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
fn board_diagram(pos: &Position) -> String {
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
            None if pos.men(side).any() && pos.kings(side).any() => {
                "no king move counted".to_string()
            }
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
        None => s.push_str(&format!("{} legal moves.\n", pos.legal_moves().len())),
    }
    s
}
