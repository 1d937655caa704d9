//! The `frisian-tb` command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use frisian_tb::generate::{self, Plan, TableStats};
use frisian_tb::material::{MaterialError, MAX_PIECES};
use frisian_tb::moves::parse_move;
use frisian_tb::probe::Tablebase;
use frisian_tb::table::{Metric, TableFile};
use frisian_tb::{fen, perft, Material, MaterialIndex, Move, Position, RuleSet, Side, Wdl};
use frisian_tb::{pdn, report, study};
use serde::Serialize;
use std::path::{Path, PathBuf};
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
    /// List the materials up to N pieces in build order, with their sizes.
    #[command(
        after_help = "Examples:\n  frisian-tb materials --max-pieces 3\n  frisian-tb materials --max-pieces 5 --json"
    )]
    Materials {
        /// Largest number of pieces.
        #[arg(long, default_value_t = 5, value_parser = pieces_arg)]
        max_pieces: u32,
        /// Rule set (sizes differ in the draw counters).
        #[arg(long, default_value = "official")]
        rules: RuleSet,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Generate tables. Complete ones are skipped, and a pair interrupted half way resumes
    /// from its last checkpoint (taken about once a minute), so an interrupted run loses little.
    #[command(
        after_help = "Examples:\n  frisian-tb generate --max-pieces 4\n  frisian-tb generate --max-pieces 3 --rules both --out /tmp/tables\n  frisian-tb generate --material KMvK --threads 2"
    )]
    Generate {
        /// Largest number of pieces.
        #[arg(long, default_value_t = 3, value_parser = pieces_arg)]
        max_pieces: u32,
        /// Only this material (e.g. KMvK), its colour flip and what they depend on.
        #[arg(long, value_parser = table_material_arg)]
        material: Option<Material>,
        /// Rule set: official, lidraughts or both.
        #[arg(long, default_value = "official")]
        rules: RulesChoice,
        /// Output directory.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Memory the generator may use, in GiB (default: what the system has available).
        /// A table pair that would need more is refused before it starts.
        #[arg(long, value_name = "GIB", value_parser = gib_arg)]
        max_memory: Option<f64>,
        /// Print the statistics of the tables written as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The value of a position and of every legal move, from the tables.
    #[command(
        after_help = "Examples:\n  frisian-tb probe 'W:WK18,15:BK46'\n  frisian-tb probe --json 'W:WK1,K2:BK6'\n  frisian-tb probe --play '43-34' 'W:WK43,K50:BK14:SW4'\n  frisian-tb probe 'W:W28,K1:B9,18,23,K50'   # six pieces: searched to the tables"
    )]
    Probe {
        #[command(flatten)]
        common: Common,
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Print JSON: {"wdl", "dtw", "moves": [{"move", "wdl", "dtw"}]}.
        #[arg(long)]
        json: bool,
        /// Explain the value: for a draw, every try of the stronger side with the
        /// defence that holds, and a line of best play to an adjudicated draw.
        #[arg(long)]
        explain: bool,
        /// Plies to search beyond the tables, for positions with more pieces than
        /// they hold (every line must reach the tables or the end of the game).
        #[arg(long, default_value_t = 6)]
        search_depth: u32,
        /// Position in FEN.
        fen: String,
    },
    /// Check an endgame study: is the claim true, the main line, duals and cooks.
    #[command(
        after_help = "Examples:\n  frisian-tb study --claim win 'W:WK18,15:BK39'\n  frisian-tb study --claim win --solution '1. 15-10 39-44 2. 10-4' 'W:WK18,15:BK39'\n  frisian-tb study --claim draw --json 'B:WK18,15:BK37'\n  frisian-tb study --pdn studies.pdn --html report.html\n\nThe claim is for the side to move. In a PDN file the claim comes from the Result tag\n(2-0 White wins, 0-2 Black wins, 1-1 the side to move draws), the position from the FEN\ntag, the solution from the move text; GameType must be 40 (Frisian) when given."
    )]
    Study {
        #[command(flatten)]
        common: Common,
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// What the side to move achieves.
        #[arg(long, value_enum, required_unless_present = "pdn")]
        claim: Option<ClaimArg>,
        /// The composer's solution, as PDN move text (move numbers allowed).
        #[arg(long, value_name = "MOVES")]
        solution: Option<String>,
        /// Check every study of a PDN file instead of one FEN.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["fen", "claim", "solution"])]
        pdn: Option<PathBuf>,
        /// Also write a self-contained HTML report with diagrams.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Plies to search beyond the tables, for positions with more pieces.
        #[arg(long, default_value_t = 6)]
        search_depth: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Position in FEN.
        #[arg(required_unless_present = "pdn")]
        fen: Option<String>,
    },
    /// Print the header and statistics of a table file.
    #[command(after_help = "Examples:\n  frisian-tb info tables/KMvK.official.wdl")]
    Info {
        /// The table file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Re-derive every stored value from its successors with the forward move generator.
    #[command(
        after_help = "Examples:\n  frisian-tb verify\n  frisian-tb verify --tables /tmp/tables --rules lidraughts --json\n  frisian-tb verify --material KMvK --material KvKM\n  frisian-tb verify --tables /var/tmp/tb --manifest tables/MANIFEST   # same values as published?\n  frisian-tb verify --max-pieces 5 --max-memory 12   # skip (and name) tables that need more\n\nExit status 1 if any value or checksum is wrong, a table file is damaged, or a table differs\nfrom --manifest; 2 if a table could not be checked (a table it needs missing or damaged, or\nmore memory needed than allowed). Every other table is still checked."
    )]
    Verify {
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Rule set: official, lidraughts or both.
        #[arg(long, default_value = "both")]
        rules: RulesChoice,
        /// Only tables with at most this many pieces.
        #[arg(long, value_parser = pieces_arg)]
        max_pieces: Option<u32>,
        /// Only these materials (repeatable), e.g. --material KMvK.
        #[arg(long, value_parser = table_material_arg)]
        material: Vec<Material>,
        /// Also compare each table's statistics and value checksum with its line in
        /// this manifest (e.g. the checked-in tables/MANIFEST).
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        /// Memory verification may use, in GiB (default: what the system has
        /// available). A table that would need more is not checked, and the run
        /// says so and exits with status 2.
        #[arg(long, value_name = "GIB", value_parser = gib_arg)]
        max_memory: Option<f64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Draw the board with its counter state.
    #[command(
        after_help = "Examples:\n  frisian-tb show 'W:W31-50:B1-20'\n  frisian-tb show 'W:WK45,31:B7:TW45/2'\n  frisian-tb show --svg board.svg --arrow 28x13 'W:W28:B9,18,20,29,38'\n  frisian-tb show --json --play '18-23' 'W:WK18,15:BK46'"
    )]
    Show {
        #[command(flatten)]
        common: Common,
        /// Write an SVG diagram to this file instead of printing the board.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Print the position, its counters and its state as JSON.
        #[arg(long, conflicts_with = "svg")]
        json: bool,
        /// Draw an arrow for this move (repeatable), with --svg.
        #[arg(long, value_name = "MOVE", requires = "svg")]
        arrow: Vec<String>,
        /// Position in FEN.
        fen: String,
    },
}

/// `--max-pieces`: tables have 2 to [`MAX_PIECES`] pieces.
fn pieces_arg(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of pieces"))?;
    if !(2..=MAX_PIECES).contains(&n) {
        return Err(format!("tables have 2 to {MAX_PIECES} pieces, not {n}"));
    }
    Ok(n)
}

/// `--material` of a table: a material name of at most [`MAX_PIECES`] pieces.
fn table_material_arg(s: &str) -> Result<Material, String> {
    let m: Material = s.parse().map_err(|e: MaterialError| e.to_string())?;
    if m.pieces() > MAX_PIECES {
        return Err(format!(
            "{m} has {} pieces; tables have at most {MAX_PIECES}",
            m.pieces()
        ));
    }
    Ok(m)
}

/// `--max-memory`: a positive number of GiB.
fn gib_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(g) if g.is_finite() && g > 0.0 => Ok(g),
        _ => Err(format!("'{s}' is not a positive number of GiB")),
    }
}

/// A study claim for the side to move.
#[derive(Copy, Clone, ValueEnum)]
enum ClaimArg {
    /// The side to move wins.
    Win,
    /// The side to move draws.
    Draw,
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

/// One rule set or both.
#[derive(Copy, Clone, ValueEnum)]
enum RulesChoice {
    /// FMJD rules.
    Official,
    /// Server rules.
    Lidraughts,
    /// Both rule sets.
    Both,
}

impl RulesChoice {
    fn sets(self) -> Vec<RuleSet> {
        match self {
            RulesChoice::Official => vec![RuleSet::Official],
            RulesChoice::Lidraughts => vec![RuleSet::Lidraughts],
            RulesChoice::Both => RuleSet::ALL.to_vec(),
        }
    }
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
    #[error(transparent)]
    Probe(#[from] frisian_tb::probe::ProbeError),
    #[error(transparent)]
    Generate(#[from] frisian_tb::generate::GenerateError),
    #[error(transparent)]
    Table(#[from] frisian_tb::table::TableError),
    #[error(transparent)]
    Study(#[from] study::StudyError),
    #[error("{0}")]
    Other(String),
    /// Verification found problems: already reported, exit status 1.
    #[error("verification failed")]
    VerifyFailed,
}

/// Run the command line; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => 0,
        Err(CliError::VerifyFailed) => 1,
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
        Command::Materials {
            max_pieces,
            rules,
            json,
        } => cmd_materials(max_pieces, rules, json),
        Command::Generate {
            max_pieces,
            material,
            rules,
            out,
            threads,
            max_memory,
            json,
        } => {
            if let Some(t) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build_global()
                    .map_err(|e| CliError::Other(e.to_string()))?;
            }
            for r in rules.sets() {
                cmd_generate(max_pieces, material, r, &out, max_memory, json)?;
            }
        }
        Command::Probe {
            common,
            tables,
            json,
            explain,
            search_depth,
            fen,
        } => {
            let pos = position(&common, Some(&fen), Start::Initial)?;
            if explain {
                cmd_explain(&pos, &tables, search_depth, json)?;
            } else {
                cmd_probe(&pos, &tables, search_depth, json)?;
            }
        }
        Command::Study {
            common,
            tables,
            claim,
            solution,
            pdn,
            html,
            search_depth,
            json,
            fen,
        } => match pdn {
            Some(file) => cmd_study_pdn(
                &file,
                &tables,
                common.rules,
                search_depth,
                html.as_deref(),
                json,
            )?,
            None => {
                let pos = position(&common, fen.as_deref(), Start::Initial)?;
                let goal = match claim.expect("required by clap") {
                    ClaimArg::Win => study::Goal::Win,
                    ClaimArg::Draw => study::Goal::Draw,
                };
                let claim = study::Claim {
                    side: pos.turn(),
                    goal,
                };
                cmd_study(
                    &pos,
                    claim,
                    solution.as_deref(),
                    &tables,
                    search_depth,
                    html.as_deref(),
                    json,
                )?;
            }
        },
        Command::Info { file, json } => cmd_info(&file, json)?,
        Command::Verify {
            tables,
            rules,
            max_pieces,
            material,
            manifest,
            max_memory,
            json,
        } => cmd_verify(
            &tables,
            &rules.sets(),
            max_pieces,
            &material,
            manifest.as_deref(),
            max_memory,
            json,
        )?,
        Command::Show {
            common,
            svg,
            json,
            arrow,
            fen,
        } => {
            let pos = position(&common, Some(&fen), Start::Initial)?;
            if json {
                println!("{}", show_json(&pos));
                return Ok(());
            }
            match svg {
                Some(file) => {
                    let legal = pos.legal_moves();
                    let arrows = arrow
                        .iter()
                        .map(|t| {
                            parse_move(t, &legal)
                                .map_err(|e| CliError::Other(format!("--arrow: {e}")))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    write_file(&file, &frisian_tb::diagram::svg(&pos, &arrows))?;
                }
                None => print!("{}", board_diagram(&pos)),
            }
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
        None => s.push_str(&format!("{} legal moves.\n", pos.legal_moves().len())),
    }
    s
}

/// `show --json`: the position, its pieces, its counters and whether the
/// game is over.
fn show_json(pos: &Position) -> serde_json::Value {
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

#[derive(Serialize)]
struct MaterialJson {
    material: String,
    pieces: u32,
    placements: u64,
    states: u64,
}

fn cmd_materials(max_pieces: u32, rules: RuleSet, json: bool) {
    let list: Vec<MaterialJson> = Material::all(max_pieces)
        .into_iter()
        .map(|m| {
            let ix = MaterialIndex::new(m, rules);
            MaterialJson {
                material: m.to_string(),
                pieces: m.pieces(),
                placements: ix.placements(),
                states: ix.size(),
            }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string(&list).expect("serialisable"));
        return;
    }
    println!(
        "{:<10} {:>6} {:>14} {:>16}",
        "material", "pieces", "placements", "states"
    );
    for m in &list {
        println!(
            "{:<10} {:>6} {:>14} {:>16}",
            m.material, m.pieces, m.placements, m.states
        );
    }
    let total: u64 = list.iter().map(|m| m.states).sum();
    println!(
        "{} materials, {} states ({} rules; side to move first, K = king, M = man)",
        list.len(),
        total,
        rules
    );
}

/// Progress over a number of states: a bar with ETA on a terminal; when
/// stderr is not a terminal (a run in the background, output to a log), a
/// plain line every minute instead. Nothing for `--json` output.
struct Meter {
    bar: indicatif::ProgressBar,
    /// When the last log line was written, if logging lines.
    log: Option<std::sync::Mutex<Instant>>,
    /// States counted as done without work in this run (resumed from work files):
    /// they are left out of the rate, or a resumed run would promise a near end.
    skipped: std::sync::atomic::AtomicU64,
    start: Instant,
}

impl Meter {
    fn new(total: u64, json: bool) -> Meter {
        use std::io::IsTerminal;
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:>10} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} states, ETA {eta}",
            )
            .expect("valid template"),
        );
        let terminal = std::io::stderr().is_terminal();
        if json || !terminal {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let log = (!json && !terminal).then(|| std::sync::Mutex::new(Instant::now()));
        Meter {
            bar,
            log,
            skipped: Default::default(),
            start: Instant::now(),
        }
    }

    /// States already done before this run.
    fn skip(&self, n: u64) {
        self.skipped
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        self.bar.inc(n);
        self.bar.reset_eta();
    }

    /// Seconds left at the average rate of this run so far (steadier than the
    /// bar's recent-rate estimate, which swings with the phases of a table).
    fn eta(&self) -> Option<u64> {
        let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
        let done = pos.saturating_sub(self.skipped.load(std::sync::atomic::Ordering::Relaxed));
        (done > 0).then(|| {
            (len.saturating_sub(pos) as f64 * self.start.elapsed().as_secs_f64() / done as f64)
                as u64
        })
    }

    fn inc(&self, n: u64) {
        self.bar.inc(n);
        if let Some(last) = &self.log {
            let mut last = last.lock().unwrap();
            if last.elapsed().as_secs() >= 60 {
                *last = Instant::now();
                let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
                eprintln!(
                    "{}: {pos}/{len} states ({:.1}%), {} s elapsed, ETA {}",
                    self.bar.message(),
                    100.0 * pos as f64 / len.max(1) as f64,
                    self.start.elapsed().as_secs(),
                    self.eta()
                        .map_or("unknown".to_string(), |s| format!("{s} s"))
                );
            }
        }
    }

    /// Print a line without breaking the bar; in a log (no terminal), print it
    /// plainly, since a hidden bar would swallow it.
    fn println(&self, line: String) {
        if self.log.is_some() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

/// Progress bar for generation.
struct Bar {
    bar: Meter,
    quiet: bool,
    refused: std::sync::Mutex<Vec<String>>,
    /// Where the tables go, and their rule set: each table's manifest line
    /// is added to `out/MANIFEST` as soon as it is written, so that a run
    /// stopped half way keeps the lines of what it finished (the run that
    /// resumes it would otherwise read those tables again for them).
    out: PathBuf,
    rules: RuleSet,
}

impl generate::Progress for Bar {
    fn refused(&self, why: &generate::GenerateError) {
        self.bar.bar.suspend(|| eprintln!("skipped: {why}"));
        self.refused.lock().unwrap().push(why.to_string());
    }
    fn start(&self, material: Material, _states: u64) {
        self.bar.bar.set_message(material.to_string());
    }
    fn advance(&self, states: u64) {
        self.bar.inc(states);
    }
    fn resumed(&self, states: u64) {
        self.bar.skip(states);
    }
    fn done(&self, st: &TableStats) {
        // When it was written (seconds into the run): the differences between
        // the lines are the time each pair took.
        let line = format!(
            "{:<8} {:<10} {:>12} states  win {:>11}  draw {:>11}  loss {:>11}  longest win {:>3}  at {:>7.1} s",
            st.rules,
            st.material,
            st.states,
            st.wins,
            st.draws,
            st.losses,
            st.longest_win,
            self.bar.start.elapsed().as_secs_f64()
        );
        let manifest = update_manifest(
            &self.out,
            self.rules,
            &[],
            std::slice::from_ref(st),
            true,
            false,
        );
        if let Err(e) = manifest {
            // The run goes on; the manifest is written again at its end.
            self.bar.bar.suspend(|| eprintln!("warning: {e}"));
        }
        if self.quiet {
            return;
        }
        self.bar.println(line);
    }
}

fn cmd_generate(
    max_pieces: u32,
    material: Option<Material>,
    rules: RuleSet,
    out: &Path,
    max_memory: Option<f64>,
    json: bool,
) -> Result<(), CliError> {
    if out.exists() && !out.is_dir() {
        return Err(CliError::Other(format!(
            "--out {}: not a directory",
            out.display()
        )));
    }
    let mut plan = match material {
        Some(m) => Plan::material(rules, out, m),
        None => Plan::all(rules, out, max_pieces),
    };
    plan.memory_limit = max_memory.map(|g| (g * (1u64 << 30) as f64) as u64);
    let pending = plan.pending();
    // A damaged file is generated again like a missing one; say which and why.
    for &m in &pending {
        let pair = if m == m.flip() {
            vec![m]
        } else {
            vec![m, m.flip()]
        };
        for m in pair {
            for e in generate::damaged(out, m, rules) {
                eprintln!("warning: {e}; generating it again");
            }
        }
    }
    let total: u64 = pending
        .iter()
        .map(|&m| MaterialIndex::new(m, rules).size() * if m == m.flip() { 1 } else { 2 })
        .sum();
    let meter = Meter::new(total, json);
    let skipped = plan.materials.len()
        - pending
            .iter()
            .map(|m| if *m == m.flip() { 1 } else { 2 })
            .sum::<usize>();
    if !json {
        eprintln!(
            "{} rules: {} tables to generate, {} already complete, {} states",
            rules,
            plan.materials.len() - skipped,
            skipped,
            total
        );
    }
    let t = Instant::now();
    let progress = Bar {
        bar: meter,
        quiet: json,
        refused: Default::default(),
        out: out.to_path_buf(),
        rules,
    };
    let written = generate::run(&plan, &progress);
    progress.bar.bar.finish_and_clear();
    let refused = progress.refused.into_inner().unwrap();
    // The manifest lists every complete table of the plan, even after a failure.
    let complete: Vec<Material> = plan
        .materials
        .iter()
        .copied()
        .filter(|&m| generate::is_complete(out, m, rules))
        .collect();
    let manifest = update_manifest(
        out,
        rules,
        &complete,
        written.as_deref().unwrap_or(&[]),
        json,
        true,
    );
    // A failed generation is the error to report; a manifest that could not be
    // updated after it (a full disk fails both) only adds a warning.
    let written = match (written, manifest) {
        (Ok(written), manifest) => {
            manifest?;
            written
        }
        (Err(e), Err(m)) => {
            eprintln!("warning: {m}");
            return Err(e.into());
        }
        (Err(e), Ok(())) => return Err(e.into()),
    };
    if json {
        println!("{}", serde_json::to_string(&written).expect("serialisable"));
    } else {
        eprintln!(
            "{} rules: wrote {} tables in {:.1} s; manifest: {}",
            rules,
            written.len(),
            t.elapsed().as_secs_f64(),
            out.join("MANIFEST").display()
        );
    }
    if !refused.is_empty() {
        return Err(CliError::Other(format!(
            "{} table pairs were not generated:\n  {}",
            refused.len(),
            refused.join("\n  ")
        )));
    }
    Ok(())
}

/// Whether a manifest line's statistics (states, wins, draws, losses,
/// longest win) are those in the header of the table's WDL file.
fn line_agrees_with_header(dir: &Path, m: Material, rules: RuleSet, line: &str) -> bool {
    let path = dir.join(frisian_tb::table::file_name(m, rules, Metric::Wdl));
    let Ok(file) = TableFile::open_expecting(&path, m, rules, Metric::Wdl) else {
        return false;
    };
    let h = file.header();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let expected = [
        h.states.to_string(),
        h.wins.to_string(),
        h.draws.to_string(),
        h.losses.to_string(),
        h.longest_win.to_string(),
    ];
    fields.len() == 8 && fields[2..7].iter().zip(&expected).all(|(a, b)| a == b)
}

/// The manifest: one line per table with its statistics and the checksum of its values.
///
/// Lines of `written` replace those of the same tables; every table of
/// `materials` without a line that agrees with its header is read (a group
/// of blocks at a time) for its line, saying so unless `quiet`. `durable`:
/// synced to disk before and after the rename (at the end of a run); the
/// update after each table is only renamed into place, since a sync there
/// waits for the gigabytes of work files the generator has in flight (it
/// made the ≤3-piece tables 40% slower), and a manifest that a power loss
/// leaves empty only costs the next run a recount.
fn update_manifest(
    dir: &Path,
    rules: RuleSet,
    materials: &[Material],
    written: &[TableStats],
    quiet: bool,
    durable: bool,
) -> Result<(), CliError> {
    let path = dir.join("MANIFEST");
    let mut lines: std::collections::BTreeMap<(String, usize, String), String> = Default::default();
    let order: Vec<Material> = Material::all(
        40.min(
            materials
                .iter()
                .map(|m| m.pieces())
                .max()
                .unwrap_or(2)
                .max(8),
        ),
    );
    let rank = |name: &str| {
        name.parse::<Material>()
            .ok()
            .and_then(|m| order.iter().position(|&x| x == m))
            .unwrap_or(usize::MAX)
    };
    if let Ok(text) = std::fs::read_to_string(&path) {
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let mut f = line.split_whitespace();
            if let (Some(r), Some(m)) = (f.next(), f.next()) {
                lines.insert((r.to_string(), rank(m), m.to_string()), line.to_string());
            }
        }
    }
    let fmt = TableStats::manifest_line;
    for st in written {
        lines.insert(
            (st.rules.clone(), rank(&st.material), st.material.clone()),
            fmt(st),
        );
    }
    for &m in materials {
        let key = (
            rules.name().to_string(),
            rank(&m.to_string()),
            m.to_string(),
        );
        // A line is kept if the table's header still gives its statistics
        // (a table generated again, or replaced, is read again).
        let kept = lines
            .get(&key)
            .is_some_and(|line| line_agrees_with_header(dir, m, rules, line));
        if !kept {
            if !quiet {
                eprintln!("manifest: reading {m} ({rules}), complete before this run");
            }
            let st = generate::table_stats(dir, m, rules)?;
            lines.insert(key, fmt(&st));
        }
    }
    let mut text = String::from("# frisian-tb table manifest: one line per table, written by `frisian-tb generate`.\n# rules material states wins draws losses longest_win checksum\n# (checksum: FNV-1a 64 over every state's WDL byte and DTW as u16 little-endian, in index order)\n");
    for line in lines.values() {
        text.push_str(line);
        text.push('\n');
    }
    // Written in full (and synced) under a temporary name, then renamed: a
    // reader never sees half a manifest, and a failed write leaves none.
    let tmp = dir.join("MANIFEST.tmp");
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())?;
            if durable {
                f.sync_all()?;
            }
            Ok(())
        })
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(CliError::Other(format!("{}: {e}", path.display())));
    }
    // Make the rename itself durable, as the table files' renames are.
    if durable {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct ProbeJson {
    wdl: &'static str,
    dtw: Option<u32>,
    moves: Vec<ProbeMoveJson>,
}

#[derive(Serialize)]
struct ProbeMoveJson {
    #[serde(rename = "move")]
    notation: String,
    wdl: &'static str,
    dtw: Option<u32>,
}

fn open_tablebase(dir: &Path, rules: RuleSet) -> Result<Tablebase, CliError> {
    let mut tb = Tablebase::new(rules);
    let n = tb.add_directory(dir).map_err(|e| {
        CliError::Other(format!(
            "cannot read table directory {}: {e}",
            dir.display()
        ))
    })?;
    if n == 0 {
        return Err(CliError::Other(format!(
            "no {rules} tables in {}; generate them with: frisian-tb generate --max-pieces 3 --rules {rules} --out {}",
            dir.display(),
            dir.display()
        )));
    }
    Ok(tb)
}

fn cmd_probe(pos: &Position, dir: &Path, depth: u32, json: bool) -> Result<(), CliError> {
    let tb = open_tablebase(dir, pos.rules())?;
    // From the tables; a position with more pieces by an exact search that
    // follows every line to the tables (or fails, naming the tables needed).
    let oracle = study::Oracle::with_depth(&tb, depth);
    let v = oracle.value(pos)?;
    let moves = oracle.move_values(pos)?;
    let legal: Vec<Move> = moves.iter().map(|m| m.mv).collect();
    if json {
        let out = ProbeJson {
            wdl: v.wdl.name(),
            dtw: v.dtw,
            moves: moves
                .iter()
                .map(|m| ProbeMoveJson {
                    notation: m.mv.notation_among(&legal),
                    wdl: m.wdl.name(),
                    dtw: m.dtw,
                })
                .collect(),
        };
        println!("{}", serde_json::to_string(&out).expect("serialisable"));
        return Ok(());
    }
    let describe = |wdl: Wdl, dtw: Option<u32>| match (wdl, dtw) {
        (Wdl::Draw, _) => "draw".to_string(),
        (w, Some(d)) => format!("{w} in {d} pl{}", if d == 1 { "y" } else { "ies" }),
        (w, None) => w.to_string(),
    };
    println!(
        "{}: {} for {} ({} rules)",
        fen::write(pos),
        describe(v.wdl, v.dtw),
        pos.turn(),
        pos.rules()
    );
    if let Some(o) = pos.outcome() {
        println!("The game is over: {}.", o.ending.describe());
    }
    if oracle.searched() {
        println!(
            "{} pieces, more than the tables hold: solved by a search that follows every line to the tables.",
            Material::of(pos).pieces()
        );
    }
    for m in &moves {
        println!(
            "  {:<12} {}",
            m.mv.notation_among(&legal),
            describe(m.wdl, m.dtw)
        );
    }
    Ok(())
}

fn cmd_info(file: &Path, json: bool) -> Result<(), CliError> {
    let t = TableFile::open(file)?;
    let h = t.header();
    let body = t
        .check_body()
        .map(|_| "ok".to_string())
        .unwrap_or_else(|e| e.to_string());
    if json {
        let v = serde_json::json!({
            "file": file.display().to_string(),
            "metric": h.metric.extension(),
            "rules": h.rules.name(),
            "material": h.material.to_string(),
            "format_version": h.format_version,
            "index_version": h.index_version,
            "states": h.states,
            "wins": h.wins,
            "draws": h.draws,
            "losses": h.losses,
            "longest_win": h.longest_win,
            "block_states": h.block_states,
            "blocks": h.blocks,
            "value_width": h.value_width,
            "dtw_halved": h.dtw_halved,
            "bytes": t.file_len(),
            "values_checksum": format!("{:016x}", h.values_checksum),
            "body_checksum": body,
        });
        println!("{v}");
        return Ok(());
    }
    println!("file:          {}", file.display());
    println!(
        "table:         {} {} ({})",
        h.material,
        h.rules,
        if h.metric == Metric::Wdl {
            "win/draw/loss"
        } else {
            "distance to win"
        }
    );
    println!(
        "format:        version {}, index scheme {}",
        h.format_version, h.index_version
    );
    println!("states:        {}", h.states);
    let pct = |n: u64| 100.0 * n as f64 / h.states.max(1) as f64;
    println!("wins:          {} ({:.2}%)", h.wins, pct(h.wins));
    println!("draws:         {} ({:.2}%)", h.draws, pct(h.draws));
    println!("losses:        {} ({:.2}%)", h.losses, pct(h.losses));
    println!("longest win:   {} plies", h.longest_win);
    let encoding = match (h.metric, h.value_width) {
        (Metric::Wdl, _) => "2-bit values".to_string(),
        (_, w) if h.dtw_halved => format!("{w} byte values, DTW halved"),
        (_, w) => format!("{w} byte values, DTW in plies"),
    };
    println!(
        "blocks:        {} of {} states, {encoding}",
        h.blocks, h.block_states
    );
    println!(
        "size:          {} bytes ({:.1} states per byte)",
        t.file_len(),
        h.states as f64 / t.file_len() as f64
    );
    println!(
        "checksums:     values {:016x}; body {}",
        h.values_checksum, body
    );
    Ok(())
}

fn cmd_verify(
    dir: &Path,
    rules: &[RuleSet],
    max_pieces: Option<u32>,
    only: &[Material],
    manifest: Option<&Path>,
    max_memory: Option<f64>,
    json: bool,
) -> Result<(), CliError> {
    const GIB: f64 = (1u64 << 30) as f64;
    let limit = max_memory
        .map(|g| (g * GIB) as u64)
        .or_else(frisian_tb::generate::available_memory);
    // Tables not checked because they would need more memory than allowed.
    let mut not_checked: Vec<(RuleSet, Material, f64, f64)> = Vec::new();
    // Tables not checked because a table they depend on could not be read.
    let mut unverifiable: Vec<(RuleSet, Material, String)> = Vec::new();
    // Manifest lines by (rules, material), read before any work starts.
    let published: Option<std::collections::HashMap<(String, String), String>> = manifest
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Other(format!("cannot read {}: {e}", path.display())))?;
            Ok::<_, CliError>(
                text.lines()
                    .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                    .filter_map(|l| {
                        let mut f = l.split_whitespace();
                        let key = (f.next()?.to_string(), f.next()?.to_string());
                        Some((key, l.split_whitespace().collect::<Vec<_>>().join(" ")))
                    })
                    .collect(),
            )
        })
        .transpose()?;
    let mut checks = Vec::new();
    let mut any = false;
    let mut bases = Vec::new();
    for &r in rules {
        let mut tb = Tablebase::new(r);
        tb.add_directory(dir).map_err(|e| {
            CliError::Other(format!(
                "cannot read table directory {}: {e}",
                dir.display()
            ))
        })?;
        bases.push((r, tb));
    }
    // A material asked for by name but present under none of the rule sets is an
    // error before any work starts: silently checking nothing would read as "ok".
    let missing: Vec<String> = only
        .iter()
        .filter(|m| !bases.iter().any(|(_, tb)| tb.materials().contains(m)))
        .map(|m| m.to_string())
        .collect();
    if !missing.is_empty() {
        let names: Vec<&str> = rules.iter().map(|r| r.name()).collect();
        return Err(CliError::Other(format!(
            "no {} table for {} in {}",
            names.join(" or "),
            missing.join(", "),
            dir.display()
        )));
    }
    for (r, tb) in bases {
        let mats: Vec<Material> = tb
            .materials()
            .into_iter()
            .filter(|m| max_pieces.is_none_or(|n| m.pieces() <= n))
            .filter(|m| only.is_empty() || only.contains(m))
            .collect();
        for m in mats {
            any = true;
            let t = Instant::now();
            let states = MaterialIndex::new(m, r).size();
            let needed = frisian_tb::verify::memory_estimate(m, r);
            if let Some(limit) = limit.filter(|&l| needed > l) {
                // Refuse before allocating: being killed for memory half-way
                // through a long run helps nobody.
                let (needed, limit) = (needed as f64 / GIB, limit as f64 / GIB);
                if !json {
                    println!(
                        "{:<10} {:<10} {:>12} states  NOT CHECKED: needs about {needed:.1} GiB of memory, {limit:.1} GiB allowed (--max-memory)",
                        r.name(),
                        m.to_string(),
                        states,
                    );
                }
                not_checked.push((r, m, needed, limit));
                continue;
            }
            let bar = Meter::new(states, json);
            bar.bar.set_message(m.to_string());
            let check =
                frisian_tb::verify::verify_table_with_progress(dir, m, r, 5, &|n| bar.inc(n));
            bar.bar.finish_and_clear();
            // A table that cannot be checked (a table its moves lead to is
            // missing or damaged) is reported, and the others still checked.
            let mut check = match check {
                Ok(check) => check,
                Err(e) => {
                    if !json {
                        println!(
                            "{:<10} {:<10} {:>12} states  NOT CHECKED: {e}",
                            r.name(),
                            m.to_string(),
                            states,
                        );
                    }
                    unverifiable.push((r, m, e.to_string()));
                    continue;
                }
            };
            if let (Some(lines), Some(path), Some(stats)) = (&published, manifest, &check.stats) {
                let found = stats.manifest_line();
                match lines.get(&(stats.rules.clone(), stats.material.clone())) {
                    None => check
                        .file_errors
                        .push(format!("not listed in {}", path.display())),
                    Some(line) if *line != found => check.file_errors.push(format!(
                        "differs from {}: listed `{line}`, found `{found}`",
                        path.display()
                    )),
                    Some(_) => {}
                }
            }
            if !json {
                let status = if check.ok() {
                    "ok".to_string()
                } else if check.mismatches > 0 {
                    format!("FAILED: {} wrong values", check.mismatches)
                } else {
                    "FAILED".to_string()
                };
                println!(
                    "{:<10} {:<10} {:>12} states  {}  ({:.1} s)",
                    r.name(),
                    m.to_string(),
                    check.states,
                    status,
                    t.elapsed().as_secs_f64()
                );
                for e in &check.file_errors {
                    println!("    {e}");
                }
                for mm in &check.first_mismatches {
                    println!(
                        "    index {}: {}  stored {}, expected {}",
                        mm.index, mm.fen, mm.stored, mm.expected
                    );
                }
            }
            checks.push((r, check));
        }
    }
    if !any {
        return Err(CliError::Other(format!("no tables in {}", dir.display())));
    }
    let failed = checks.iter().filter(|(_, c)| !c.ok()).count();
    if json {
        let list: Vec<serde_json::Value> = checks
            .iter()
            .map(|(r, c)| serde_json::json!({"rules": r.name(), "material": c.material, "states": c.states, "ok": c.ok(), "mismatches": c.mismatches, "file_errors": c.file_errors, "first_mismatches": c.first_mismatches, "checksum": c.stats.as_ref().map(|st| st.checksum.clone())}))
            .collect();
        let skipped: Vec<serde_json::Value> = not_checked
            .iter()
            .map(|(r, m, needed, limit)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "needed_gib": needed, "limit_gib": limit}))
            .collect();
        let unreadable: Vec<serde_json::Value> = unverifiable
            .iter()
            .map(|(r, m, e)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "error": e}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"tables": list, "failed": failed, "not_checked": skipped, "unverifiable": unreadable})
        );
    } else {
        println!(
            "{} tables checked, {} failed{}{}",
            checks.len(),
            failed,
            if not_checked.is_empty() {
                String::new()
            } else {
                format!(", {} not checked for lack of memory", not_checked.len())
            } + &if unverifiable.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} not checked: a table they need could not be read",
                    unverifiable.len()
                )
            },
            manifest.map_or(String::new(), |p| format!(
                " (statistics and checksums compared with {})",
                p.display()
            ))
        );
    }
    if failed > 0 {
        return Err(CliError::VerifyFailed);
    }
    if let Some((r, m, e)) = unverifiable.first() {
        return Err(CliError::Other(format!(
            "{} tables could not be checked; the first, {m} ({}): {e}",
            unverifiable.len(),
            r.name()
        )));
    }
    if !not_checked.is_empty() {
        let names: Vec<String> = not_checked
            .iter()
            .map(|(r, m, _, _)| format!("{m} ({})", r.name()))
            .collect();
        return Err(CliError::Other(format!(
            "not verified for lack of memory: {}; run on a machine with more memory, or raise --max-memory",
            names.join(", ")
        )));
    }
    Ok(())
}

/// Write a whole file (to a temporary name, then renamed, so a reader never
/// sees half of it).
fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            CliError::Other(format!("cannot write {}: {e}", path.display()))
        })
}

fn cmd_explain(pos: &Position, dir: &Path, depth: u32, json: bool) -> Result<(), CliError> {
    let tb = open_tablebase(dir, pos.rules())?;
    let oracle = study::Oracle::with_depth(&tb, depth);
    let e = study::explain(&oracle, pos)?;
    if json {
        println!("{}", serde_json::to_string(&e).expect("serialisable"));
    } else {
        print!("{}", report::explanation_text(&e));
    }
    Ok(())
}

fn cmd_study(
    pos: &Position,
    claim: study::Claim,
    solution: Option<&str>,
    dir: &Path,
    depth: u32,
    html: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let tb = open_tablebase(dir, pos.rules())?;
    let oracle = study::Oracle::with_depth(&tb, depth);
    let moves = solution
        .map(pdn::move_text)
        .transpose()
        .map_err(|e| CliError::Other(format!("--solution: {}", e.message)))?;
    let r = study::check(&oracle, pos, claim, moves.as_deref())?;
    if let Some(file) = html {
        let page = report::studies_html("Study check", &[(fen::write(pos), *pos, r.clone())]);
        write_file(file, &page)?;
    }
    if json {
        println!("{}", serde_json::to_string(&r).expect("serialisable"));
    } else {
        print!("{}", report::study_text(&r));
    }
    Ok(())
}

/// One study of a PDN file: its report, or why it could not be checked.
#[derive(Serialize)]
struct PdnStudyJson {
    game: usize,
    line: usize,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<study::StudyReport>,
}

/// The claim a PDN game states: its Result for the side that wins, or a draw
/// for the side to move.
fn pdn_claim(game: &pdn::PdnGame, pos: &Position) -> Result<study::Claim, String> {
    let result = game
        .tag("Result")
        .or(game.result.as_deref())
        .ok_or("no Result tag or result: the stipulation is unknown")?;
    let (side, goal) = match result {
        "2-0" | "1-0" => (Side::White, study::Goal::Win),
        "0-2" | "0-1" => (Side::Black, study::Goal::Win),
        "1-1" | "1/2-1/2" => (pos.turn(), study::Goal::Draw),
        other => return Err(format!("result '{other}' states no win or draw")),
    };
    Ok(study::Claim { side, goal })
}

fn cmd_study_pdn(
    file: &Path,
    dir: &Path,
    rules: RuleSet,
    depth: u32,
    html: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::Other(format!("cannot read {}: {e}", file.display())))?;
    let tb = open_tablebase(dir, rules)?;
    let mut results = Vec::new();
    let mut pages = Vec::new();
    for game in pdn::parse_games(&text) {
        let game = match game {
            Ok(g) => g,
            Err(e) => {
                results.push(PdnStudyJson {
                    game: e.game,
                    line: e.line,
                    name: format!("game {}", e.game),
                    error: Some(e.message),
                    report: None,
                });
                continue;
            }
        };
        let name = game
            .tag("Event")
            .map(str::to_string)
            .unwrap_or_else(|| format!("Study {}", game.number));
        let checked = (|| -> Result<(Position, study::StudyReport), (usize, String)> {
            if let Some(t) = game.tag("GameType") {
                if t.split(',').next().map(str::trim) != Some("40") {
                    return Err((
                        game.line,
                        format!("GameType {t} is not Frisian draughts (40)"),
                    ));
                }
            }
            let fen_text = game
                .tag("FEN")
                .ok_or((game.line, "no FEN tag".to_string()))?;
            let pos =
                fen::parse(fen_text, rules).map_err(|e| (game.line, format!("FEN tag: {e}")))?;
            let claim = pdn_claim(&game, &pos).map_err(|e| (game.line, e))?;
            let moves: Vec<String> = game.moves.iter().map(|m| m.text.clone()).collect();
            let oracle = study::Oracle::with_depth(&tb, depth);
            let solution = (!moves.is_empty()).then_some(moves.as_slice());
            match study::check(&oracle, &pos, claim, solution) {
                Ok(r) => Ok((pos, r)),
                Err(e) => {
                    let line = match &e {
                        study::StudyError::Solution { ply, .. }
                        | study::StudyError::GameOver { ply, .. } => game.moves[ply - 1].line,
                        _ => game.line,
                    };
                    Err((line, e.to_string()))
                }
            }
        })();
        match checked {
            Ok((pos, r)) => {
                pages.push((name.clone(), pos, r.clone()));
                results.push(PdnStudyJson {
                    game: game.number,
                    line: game.line,
                    name,
                    error: None,
                    report: Some(r),
                });
            }
            Err((line, message)) => results.push(PdnStudyJson {
                game: game.number,
                line,
                name,
                error: Some(message),
                report: None,
            }),
        }
    }
    let count = |f: &dyn Fn(&study::StudyReport) -> bool| {
        results
            .iter()
            .filter(|r| r.report.as_ref().is_some_and(f))
            .count()
    };
    let sound_unique = count(&|r| r.sound && r.unique);
    let sound_duals = count(&|r| r.sound && !r.unique);
    let false_claims = count(&|r| !r.holds);
    let spoiled = count(&|r| r.holds && !r.sound);
    let unreadable = results.iter().filter(|r| r.error.is_some()).count();
    let summary = format!(
        "{} studies: {sound_unique} sound with a unique solution, {sound_duals} sound with duals, {false_claims} with a false claim, {spoiled} whose solution leaves the claim, {unreadable} not checked",
        results.len()
    );
    if let Some(out) = html {
        let title = format!("Studies of {}", file.display());
        write_file(out, &report::studies_html(&title, &pages))?;
    }
    if json {
        println!(
            "{}",
            serde_json::json!({"studies": results, "summary": {"studies": results.len(), "sound_unique": sound_unique, "sound_with_duals": sound_duals, "false_claim": false_claims, "solution_fails": spoiled, "not_checked": unreadable}})
        );
        return Ok(());
    }
    for r in &results {
        println!("=== Game {} (line {}): {}", r.game, r.line, r.name);
        match (&r.report, &r.error) {
            (Some(rep), _) => println!("{}", report::study_text(rep)),
            (None, Some(e)) => println!("not checked: {e}\n"),
            _ => {}
        }
    }
    println!("{summary}");
    Ok(())
}
