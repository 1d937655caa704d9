//! The `frisian-tb` command line: argument parsing and dispatch here, one
//! submodule per group of commands.

mod board;
mod info;
mod probe;
mod progress;
mod studies;
mod tables;
mod verify;

use board::{board_diagram, cmd_moves, cmd_perft, show_json};
use info::cmd_info;
use probe::{cmd_explain, cmd_probe};
use progress::Meter;
use studies::{cmd_study, cmd_study_pdn};
use tables::{cmd_generate, cmd_materials, cmd_plan, What};
use verify::{cmd_verify, Selection};

use clap::{Args, Parser, Subcommand, ValueEnum};
use frisian_tb::material::{MaterialError, MAX_PIECES};
use frisian_tb::moves::parse_move;
use frisian_tb::probe::Tablebase;
use frisian_tb::study;
use frisian_tb::{fen, Material, Position, RuleSet};
use std::path::{Path, PathBuf};

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
        #[arg(long, default_value_t = DEFAULT_MAX_PIECES, value_parser = pieces_arg)]
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
    /// Work files (a byte per state) stay in the output directory while it runs, finished ones
    /// for the pairs that read them (within half the memory limit and half the free disk);
    /// all are removed at the end.
    #[command(
        after_help = "Examples:\n  frisian-tb generate --max-pieces 4\n  frisian-tb generate --max-pieces 3 --rules both --out /tmp/tables\n  frisian-tb generate --material KMvK --threads 2\n  frisian-tb generate --max-pieces 5 --plan   # what a run needs, before starting it"
    )]
    Generate {
        /// Largest number of pieces.
        #[arg(long, default_value_t = DEFAULT_MAX_PIECES, value_parser = pieces_arg)]
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
        /// Generate nothing: list the pairs still to solve, each with its
        /// states and the memory and work-file disk it needs, against what
        /// the machine has.
        #[arg(long)]
        plan: bool,
    },
    /// The value of a position and of every legal move, from the tables.
    #[command(
        after_help = "Examples:\n  frisian-tb probe 'W:WK18,15:BK46'\n  frisian-tb probe --json 'W:WK1,K2:BK6'\n  frisian-tb probe --play '43-34' 'W:WK43,K50:BK14:SW4'\n  frisian-tb probe 'W:W28,K1:B9,18,23,K50'   # six pieces: searched to the tables\n  frisian-tb probe --tables tables --tables /data/five 'W:W15,K18:B40,K46'"
    )]
    Probe {
        #[command(flatten)]
        common: Common,
        /// Table directory; repeat it for several (the first that holds a
        /// table is read), e.g. --tables tables --tables /data/five-piece.
        #[arg(long, value_name = "DIR", default_value = "tables")]
        tables: Vec<PathBuf>,
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
        after_help = "Examples:\n  frisian-tb study --claim win 'W:WK18,15:BK39'\n  frisian-tb study --claim win --solution '1. 15-10 39-44 2. 10-4' 'W:WK18,15:BK39'\n  frisian-tb study --claim draw --json 'B:WK18,15:BK37'\n  frisian-tb study --pdn examples/studies.pdn --html report.html\n\nThe claim is for the side to move. In a PDN file the claim comes from the Result tag\n(2-0 White wins, 0-2 Black wins, 1-1 the side to move draws), the position from the FEN\ntag, the solution from the move text; GameType must be 40 (Frisian) when given."
    )]
    Study {
        #[command(flatten)]
        common: Common,
        /// Table directory; repeat it for several (the first that holds a
        /// table is read).
        #[arg(long, value_name = "DIR", default_value = "tables")]
        tables: Vec<PathBuf>,
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
        after_help = "Examples:\n  frisian-tb verify\n  frisian-tb verify --tables /tmp/tables --rules lidraughts --json\n  frisian-tb verify --material KMvK --material KvKM\n  frisian-tb verify --tables /var/tmp/tb --max-pieces 3 --manifest tables/MANIFEST   # same values as published?\n  frisian-tb verify --max-pieces 3 --max-memory 12   # skip (and name) tables that need more\n  frisian-tb verify --files-only --manifest tables/MANIFEST   # copied tables intact? (under a minute)\n  frisian-tb verify --max-pieces 3 --journal /tmp/verify.journal   # run again after an interruption: resumes\n\nExit status 1 if any value or checksum is wrong, a table file is damaged, or a table differs\nfrom --manifest; 2 if a table could not be checked (a table it needs missing or damaged, or\nmore memory needed than allowed). Every other table is still checked."
    )]
    Verify {
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Rule set: official, lidraughts or both.
        #[arg(long, default_value = "official")]
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
        /// Check the files only: header, checksums, every block decoded, the
        /// header's statistics, and the values' manifest checksum (with
        /// --manifest: the values are the published ones). No value is
        /// re-derived, so it needs no other table and little memory, and it
        /// finds damaged or altered files, not a wrong generator.
        #[arg(long)]
        files_only: bool,
        /// Record each table that passes in this file, and skip the tables it
        /// records as passed whose files have not changed since (same header
        /// checksum, length and modification time): an interrupted run given
        /// the same journal resumes where it stopped. A full check recorded
        /// also stands for --files-only, not the other way round.
        #[arg(long, value_name = "FILE")]
        journal: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Draw the board with its counter state.
    #[command(
        after_help = "Examples:\n  frisian-tb show 'W:W31-50:B1-20'\n  frisian-tb show 'W:WK45,31:B7:TW45/2'\n  frisian-tb show --svg board.svg --arrow 28x48 'W:W28:B9,18,20,29,38'\n  frisian-tb show --json --play '18-23' 'W:WK18,15:BK46'"
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

/// The default of `--max-pieces`, for `materials` and `generate` alike:
/// what `generate` builds in seconds.
const DEFAULT_MAX_PIECES: u32 = 4;

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

/// Threads beyond this many per processor only add switching.
const THREADS_PER_PROCESSOR: usize = 4;

/// `--threads`: at least one, at most [`THREADS_PER_PROCESSOR`] per processor.
fn check_threads(t: usize) -> Result<(), CliError> {
    let processors = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = THREADS_PER_PROCESSOR * processors;
    if t == 0 || t > most {
        return Err(CliError::Other(format!(
            "--threads {t}: give 1 to {most} ({THREADS_PER_PROCESSOR} per processor; this machine has {processors})"
        )));
    }
    Ok(())
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
    /// A check found a damaged or wrong file, or a study that could not be
    /// checked: exit status 1.
    #[error("{0}")]
    CheckFailed(String),
}

/// Run the command line; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => 0,
        Err(CliError::VerifyFailed) => 1,
        Err(e @ CliError::CheckFailed(_)) => {
            eprintln!("error: {e}");
            1
        }
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
            plan,
        } => {
            if let Some(t) = threads {
                check_threads(t)?;
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build_global()
                    .map_err(|e| CliError::Other(e.to_string()))?;
            }
            for r in rules.sets() {
                let what = What {
                    max_pieces,
                    material,
                    rules: r,
                    out: &out,
                    max_memory,
                };
                if plan {
                    cmd_plan(&what, json)?;
                } else {
                    cmd_generate(&what, json)?;
                }
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
            files_only,
            journal,
            json,
        } => cmd_verify(
            &Selection {
                dir: &tables,
                rules: &rules.sets(),
                max_pieces,
                only: &material,
            },
            manifest.as_deref(),
            max_memory,
            files_only,
            journal.as_deref(),
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
        (Some(text), _) => {
            let pos = fen::parse(text, common.rules)?;
            warn_of_ignored_plies(text, common.rules);
            pos
        }
        (None, Start::Initial) => Position::initial(common.rules),
        (None, Start::Frysk) => Position::frysk(common.rules),
    };
    if let Some(moves) = &common.play {
        for (i, text) in play_tokens(moves)?.into_iter().enumerate() {
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

/// The lidraughts ply count has no meaning under the official rules, which
/// ignore it (a lidraughts FEN keeps its tail when pasted): say so rather
/// than drop it silently.
fn warn_of_ignored_plies(text: &str, rules: RuleSet) {
    if rules != RuleSet::Official {
        return;
    }
    if let Ok(setup) = fen::parse_setup(text) {
        if setup.plies > 0 {
            eprintln!(
                "warning: the lidraughts ply count H{} is ignored under the official rules \
                 (--rules lidraughts plays by it)",
                setup.plies
            );
        }
    }
}

/// The moves of `--play` text: PDN moves separated by spaces, with move
/// numbers (`1.`, `12...`, or `1.32-27` written together) left out. A bare
/// number is an error, not a move number: `32 27` is a mistyped `32-27`.
fn play_tokens(text: &str) -> Result<Vec<&str>, CliError> {
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        let is_number = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
        // A move number ends with dots; a move may follow it without a space.
        let mov = match token.rfind('.') {
            Some(dot) if is_number(token.trim_end_matches('.').split('.').next().unwrap_or("")) => {
                &token[dot + 1..]
            }
            _ => token,
        };
        if mov.is_empty() {
            continue;
        }
        if is_number(mov) {
            return Err(CliError::Play(format!(
                "'{mov}' is not a move: write a move as 32-27 or 27x18, and a move number with a dot (1.)"
            )));
        }
        out.push(mov);
    }
    Ok(out)
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

/// The tablebase of the directories `dirs` (a search path: the first that
/// holds a table is read) for `rules`; an error if a directory cannot be
/// read or none holds a table.
fn open_tablebase(dirs: &[PathBuf], rules: RuleSet) -> Result<Tablebase, CliError> {
    let mut tb = Tablebase::new(rules);
    let mut n = 0;
    for dir in dirs {
        // A directory of the search path that is not there is left out (a
        // disk not mounted, say): the others may still hold every table.
        if dirs.len() > 1 && !dir.exists() {
            eprintln!(
                "warning: table directory {} does not exist; skipped",
                dir.display()
            );
            continue;
        }
        n += tb.add_directory(dir).map_err(|e| {
            CliError::Other(format!(
                "cannot read table directory {}: {e}",
                dir.display()
            ))
        })?;
    }
    warn_skipped(&tb);
    if n == 0 {
        let out = dirs.first().map_or(Path::new("tables"), |d| d.as_path());
        return Err(CliError::Other(format!(
            "no {rules} tables in {}; generate them with: frisian-tb generate --max-pieces 3 --rules {rules} --out {}",
            describe_dirs(dirs),
            out.display()
        )));
    }
    Ok(tb)
}

/// A warning for each file the tablebase left out (see [`Tablebase::skipped`]).
fn warn_skipped(tb: &Tablebase) {
    for (path, why) in tb.skipped() {
        eprintln!("warning: skipped {}: {why}", path.display());
    }
}

/// Table directories for a message: `a`, or `a, b and c`.
fn describe_dirs(dirs: &[PathBuf]) -> String {
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
