//! Checking endgame studies and explaining draws with the tables.
//!
//! A study is a position with a stipulation, a [`Claim`]: a side wins, or a
//! side draws. [`check`] says whether the claim is true (with the full counter
//! state), gives the main line of best play, the **duals** (other moves of the
//! claiming side that also achieve the claim, slower ones marked), and the
//! **cooks**: the refutation when the claim is false, the first move of a given
//! solution that leaves the claim, and defender moves in the solution that are
//! not the toughest defence. For a draw claim it lists, at each move of the
//! stronger side, the defence that holds. [`explain`] says why a drawn
//! position is drawn: every try of the stronger side with the defence that
//! holds, and a line of best play that ends in an adjudicated draw.
//!
//! Values come from an [`Oracle`]: the tables, and for positions with more
//! pieces than the tables hold, a short full-width search that must reach
//! table positions (usually by compulsory captures) within a few plies.
//!
//! ```no_run
//! use frisian_tb::{fen, probe::Tablebase, study, RuleSet, Side};
//! let mut tb = Tablebase::new(RuleSet::Official);
//! tb.add_directory("tables")?;
//! let oracle = study::Oracle::new(&tb);
//! let pos = fen::parse("W:WK18,15:BK39", RuleSet::Official)?;
//! let claim = study::Claim { side: Side::White, goal: study::Goal::Win };
//! let report = study::check(&oracle, &pos, claim, None)?;
//! assert!(report.holds);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::fen;
use crate::material::Material;
use crate::moves::{parse_move, Move, MoveError};
use crate::piece::Side;
use crate::position::Position;
use crate::probe::{move_values_by, sort_key, MoveValue, ProbeError, ProbeValue, Tablebase};
use crate::rules::Wdl;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// What the claiming side achieves.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// It wins.
    Win,
    /// It draws (the position is exactly a draw).
    Draw,
}

/// A study's stipulation: `side` wins, or `side` draws.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Claim {
    /// The side that must achieve the goal.
    #[serde(serialize_with = "side_name")]
    pub side: Side,
    /// The goal.
    pub goal: Goal,
}

fn side_name<S: serde::Serializer>(side: &Side, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(side.name())
}

fn wdl_name<S: serde::Serializer>(wdl: &Wdl, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(wdl.name())
}

impl Claim {
    /// Whether a result for the claiming side achieves the goal (a win also
    /// achieves a draw).
    pub fn met_by(self, wdl: Wdl) -> bool {
        match self.goal {
            Goal::Win => wdl == Wdl::Win,
            Goal::Draw => wdl >= Wdl::Draw,
        }
    }

    /// The claim as words: `White wins`, `Black draws`.
    pub fn describe(self) -> String {
        match self.goal {
            Goal::Win => format!("{} wins", self.side),
            Goal::Draw => format!("{} draws", self.side),
        }
    }
}

/// Why a study could not be checked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StudyError {
    /// A table could not be read (missing, corrupt, wrong rules...).
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The position has more pieces than the tables and search could not reach them.
    #[error("the tables hold at most {max} pieces, and a search of {depth} plies does not reach them in every line: {line} has {pieces} pieces. Tables needed: {needed}")]
    BeyondTables {
        /// Pieces at the end of `line`, where the search stopped.
        pieces: u32,
        /// Most pieces the tables hold.
        max: u32,
        /// The search depth tried.
        depth: u32,
        /// Where the search stopped beyond the tables: "the position itself",
        /// or "the position after" a line of moves.
        line: String,
        /// The materials that would be needed, e.g. `KMMvKM, KMvKMM`.
        needed: String,
    },
    /// A move of the solution is not legal (or not a move).
    #[error("solution move {ply} ({side} to move): {source}")]
    Solution {
        /// The ply, from 1.
        ply: usize,
        /// The side to move.
        side: Side,
        /// What is wrong with the move.
        source: MoveError,
    },
    /// The solution goes on after the game is over.
    #[error("solution move {ply} ('{text}'): the game is already over")]
    GameOver {
        /// The ply, from 1.
        ply: usize,
        /// The move text.
        text: String,
    },
}

/// Values of positions: from the tables, or by search for positions with more
/// pieces than the tables hold. Not `Sync` (it keeps a cache); make one per thread.
pub struct Oracle<'a> {
    tb: &'a Tablebase,
    depth: u32,
    searched: Cell<bool>,
    memo: RefCell<HashMap<Position, ProbeValue>>,
    /// Nodes searched, to bound the work of one search.
    nodes: Cell<u64>,
}

/// Positions one search may visit before giving up.
const NODE_BUDGET: u64 = 2_000_000;

impl<'a> Oracle<'a> {
    /// An oracle on `tb` that searches up to 6 plies beyond the tables.
    pub fn new(tb: &'a Tablebase) -> Oracle<'a> {
        Oracle::with_depth(tb, 6)
    }

    /// An oracle that searches up to `depth` plies beyond the tables.
    pub fn with_depth(tb: &'a Tablebase, depth: u32) -> Oracle<'a> {
        Oracle {
            tb,
            depth,
            searched: Cell::new(false),
            memo: RefCell::new(HashMap::new()),
            nodes: Cell::new(0),
        }
    }

    /// Whether some value so far came from search rather than straight from the tables.
    pub fn searched(&self) -> bool {
        self.searched.get()
    }

    /// The value of `pos` for the side to move.
    pub fn value(&self, pos: &Position) -> Result<ProbeValue, StudyError> {
        if let Some(o) = pos.outcome() {
            return Ok(ProbeValue {
                wdl: o.wdl,
                dtw: (o.wdl != Wdl::Draw).then_some(0),
            });
        }
        if Material::of(pos).pieces() <= self.tb.max_pieces() {
            return Ok(self.tb.probe(pos)?);
        }
        self.nodes.set(0);
        let mut line = Vec::new();
        self.search(pos, self.depth, &mut line)
    }

    /// Full-width search of a position beyond the tables: exact, since every
    /// line is followed until it reaches the tables or the game ends.
    fn search(
        &self,
        pos: &Position,
        depth: u32,
        line: &mut Vec<String>,
    ) -> Result<ProbeValue, StudyError> {
        if let Some(o) = pos.outcome() {
            return Ok(ProbeValue {
                wdl: o.wdl,
                dtw: (o.wdl != Wdl::Draw).then_some(0),
            });
        }
        let m = Material::of(pos);
        if m.pieces() <= self.tb.max_pieces() {
            return Ok(self.tb.probe(pos)?);
        }
        if let Some(v) = self.memo.borrow().get(pos) {
            return Ok(*v);
        }
        self.nodes.set(self.nodes.get() + 1);
        if depth == 0 || self.nodes.get() > NODE_BUDGET {
            let mut needed = vec![m, m.flip()];
            needed.dedup();
            return Err(StudyError::BeyondTables {
                pieces: Material::of(pos).pieces(),
                max: self.tb.max_pieces(),
                depth: self.depth,
                line: if line.is_empty() {
                    "the position itself".into()
                } else {
                    format!("the position after {}", line.join(" "))
                },
                needed: if m.pieces() > crate::material::MAX_PIECES {
                    format!("none can hold {} pieces", m.pieces())
                } else {
                    needed
                        .iter()
                        .map(|m| m.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            });
        }
        self.searched.set(true);
        let legal = pos.legal_moves();
        let (mut win, mut draw, mut longest) = (None::<u32>, false, 0u32);
        for mv in &legal {
            line.push(mv.notation_among(&legal));
            let v = self.search(&pos.play(mv), depth - 1, line)?;
            line.pop();
            match v.wdl {
                Wdl::Loss => {
                    let d = v.dtw.unwrap_or(0) + 1;
                    win = Some(win.map_or(d, |w| w.min(d)));
                }
                Wdl::Draw => draw = true,
                Wdl::Win => longest = longest.max(v.dtw.unwrap_or(0)),
            }
        }
        let v = match (win, draw) {
            (Some(d), _) => ProbeValue {
                wdl: Wdl::Win,
                dtw: Some(d),
            },
            (None, true) => ProbeValue {
                wdl: Wdl::Draw,
                dtw: None,
            },
            (None, false) => ProbeValue {
                wdl: Wdl::Loss,
                dtw: Some(longest + 1),
            },
        };
        self.memo.borrow_mut().insert(*pos, v);
        Ok(v)
    }

    /// Every legal move with its value for the side playing it, best first
    /// (as [`Tablebase::probe_moves`]).
    pub fn move_values(&self, pos: &Position) -> Result<Vec<MoveValue>, StudyError> {
        move_values_by(pos, |p| self.value(p))
    }
}

/// One move of a line, with its value for the side that plays it.
#[derive(Clone, Debug, Serialize)]
pub struct Ply {
    /// Move number as in PDN (1 for the first move of each side).
    pub number: usize,
    /// The side playing it.
    #[serde(serialize_with = "side_name")]
    pub side: Side,
    /// The move (PDN).
    #[serde(rename = "move")]
    pub notation: String,
    /// Its result for the side playing it.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// Plies to the end of the game from before this move, with best play after it.
    pub dtw: Option<u32>,
    /// Whether the side playing it is the claiming side.
    pub claimant: bool,
    #[serde(skip)]
    mv: Option<Move>,
}

impl Ply {
    /// The move itself.
    pub fn mv(&self) -> Option<Move> {
        self.mv
    }
}

/// A move and its value for the side that plays it.
#[derive(Clone, Debug, Serialize)]
pub struct Alternative {
    /// The move (PDN).
    #[serde(rename = "move")]
    pub notation: String,
    /// Its result for the side playing it.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// Its DTW from before the move.
    pub dtw: Option<u32>,
    /// A win that is slower than the best.
    pub slower: bool,
}

/// Other moves of the claiming side that also achieve the claim.
#[derive(Clone, Debug, Serialize)]
pub struct Dual {
    /// Index of the ply in the line, from 1.
    pub ply: usize,
    /// Move number (PDN).
    pub number: usize,
    /// The move of the line.
    pub played: String,
    /// The other moves that also achieve the claim, best first.
    pub alternatives: Vec<Alternative>,
}

/// A try of the stronger side and the defence that holds against it.
#[derive(Clone, Debug, Serialize)]
pub struct Defence {
    /// Index of the ply in the line at which the try is made, from 1.
    pub ply: usize,
    /// The try (PDN).
    #[serde(rename = "try")]
    pub attempt: String,
    /// Its result for the side trying.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// The reply that holds (keeps at least the claim), if the try does not
    /// end the game.
    pub reply: Option<String>,
    /// The reply's result for the side replying.
    #[serde(serialize_with = "wdl_opt_name")]
    pub reply_wdl: Option<Wdl>,
}

fn wdl_opt_name<S: serde::Serializer>(wdl: &Option<Wdl>, s: S) -> Result<S::Ok, S::Error> {
    match wdl {
        Some(w) => s.serialize_str(w.name()),
        None => s.serialize_none(),
    }
}

/// The first move of a solution that leaves the claim.
#[derive(Clone, Debug, Serialize)]
pub struct Spoiler {
    /// Index of the ply, from 1.
    pub ply: usize,
    /// Move number (PDN).
    pub number: usize,
    /// The move played.
    pub played: String,
    /// Its result for the claiming side.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// The moves that would have kept the claim, best first.
    pub better: Vec<Alternative>,
}

/// A defender move of the solution that is not the toughest defence.
#[derive(Clone, Debug, Serialize)]
pub struct WeakDefence {
    /// Index of the ply, from 1.
    pub ply: usize,
    /// Move number (PDN).
    pub number: usize,
    /// The move played, with its value for the defender.
    pub played: Alternative,
    /// The toughest defence, with its value for the defender.
    pub toughest: Alternative,
}

/// What a given solution does.
#[derive(Clone, Debug, Serialize)]
pub struct SolutionCheck {
    /// The solution's moves as played (PDN), with their values.
    pub line: Vec<Ply>,
    /// The first claimant move that leaves the claim.
    pub spoiler: Option<Spoiler>,
    /// Defender moves that are not the toughest defence.
    pub weak_defences: Vec<WeakDefence>,
}

/// The outcome of checking a study.
#[derive(Clone, Debug, Serialize)]
pub struct StudyReport {
    /// The position.
    pub fen: String,
    /// The rule set.
    pub rules: String,
    /// The claim checked.
    pub claim: Claim,
    /// The value for the side to move.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// Its DTW (`None` for a draw).
    pub dtw: Option<u32>,
    /// Whether the claim is true.
    pub holds: bool,
    /// The claim holds and the solution (if given) keeps it throughout.
    pub sound: bool,
    /// No duals on the line checked.
    pub unique: bool,
    /// Best play: to the end of the game for a win; for a draw, a line that
    /// ends in an adjudicated draw where one was found.
    pub main_line: Vec<Ply>,
    /// How the main line ends.
    pub line_end: String,
    /// Duals on the line checked (the solution, else the main line).
    pub duals: Vec<Dual>,
    /// The given solution, checked move by move.
    pub solution: Option<SolutionCheck>,
    /// When the claim is false: the line that refutes it.
    pub refutation: Option<Vec<Ply>>,
    /// For a draw claim (or a false win claim): the stronger side's tries on
    /// the line checked, each with the defence that holds.
    pub defences: Vec<Defence>,
    /// Some values came from search beyond the tables.
    pub searched: bool,
}

/// The longest line followed (a safeguard; DTW bounds real lines far below it).
const MAX_LINE: usize = 1000;

fn alternative(mv: &MoveValue, legal: &[Move], best_dtw: Option<u32>) -> Alternative {
    Alternative {
        notation: mv.mv.notation_among(legal),
        wdl: mv.wdl,
        dtw: mv.dtw,
        slower: mv.wdl == Wdl::Win && best_dtw.is_some() && mv.dtw > best_dtw,
    }
}

/// Move number (PDN) of the ply `index` (from 0) of a line that starts with `first` to move.
fn move_number(index: usize, first: Side) -> usize {
    let offset = usize::from(first == Side::Black);
    (index + offset) / 2 + 1
}

/// Best play from `pos` while the value is a win or a loss: the winner
/// shortest, the loser longest (by DTW), to the end of the game.
fn best_line(
    oracle: &Oracle,
    pos: &Position,
    claim: Claim,
) -> Result<(Vec<Ply>, String), StudyError> {
    let mut line = Vec::new();
    let mut p = *pos;
    while line.len() < MAX_LINE {
        if let Some(o) = p.outcome() {
            return Ok((
                line,
                format!("{} ({} for {})", o.ending.describe(), o.wdl, p.turn()),
            ));
        }
        let values = oracle.move_values(&p)?;
        let best = &values[0];
        if best.wdl == Wdl::Draw {
            let (rest, end) = draw_line(oracle, &p, claim, line.len(), pos.turn())?;
            line.extend(rest);
            return Ok((line, end));
        }
        let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
        line.push(Ply {
            number: move_number(line.len(), pos.turn()),
            side: p.turn(),
            notation: best.mv.notation_among(&legal),
            wdl: best.wdl,
            dtw: best.dtw,
            claimant: p.turn() == claim.side,
            mv: Some(best.mv),
        });
        p = p.play(&best.mv);
    }
    Ok((line, "line cut off".into()))
}

/// Order for looking for an adjudicated draw: captures, promotions and man
/// moves first (they bring the game nearer to its end), king moves last.
fn progress_rank(m: &Move) -> u8 {
    if m.is_capture() {
        0
    } else if m.promotes() {
        1
    } else if !m.is_king_move() {
        2
    } else {
        3
    }
}

/// Plies searched for a draw line before settling for a shorter one.
const DRAW_LINE_PLIES: usize = 60;
const DRAW_LINE_NODES: u64 = 200_000;

/// A line of drawing moves from drawn `pos` that ends in an adjudicated draw
/// (one king each, the seven-move rule, a ply limit), found by depth-first
/// search over the moves that keep the draw; if none is found within the
/// limits, a few drawing moves and a note that the draw goes on.
fn draw_line(
    oracle: &Oracle,
    pos: &Position,
    claim: Claim,
    offset: usize,
    first: Side,
) -> Result<(Vec<Ply>, String), StudyError> {
    fn dfs(
        oracle: &Oracle,
        p: &Position,
        path: &mut Vec<(Move, Vec<Move>)>,
        seen: &mut std::collections::HashSet<Position>,
        nodes: &mut u64,
    ) -> Result<Option<String>, StudyError> {
        if let Some(o) = p.outcome() {
            return Ok((o.wdl == Wdl::Draw).then(|| o.ending.describe().to_string()));
        }
        *nodes += 1;
        if path.len() >= DRAW_LINE_PLIES || *nodes > DRAW_LINE_NODES || !seen.insert(*p) {
            return Ok(None);
        }
        let values = oracle.move_values(p)?;
        let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
        let mut drawing: Vec<&MoveValue> = values.iter().filter(|v| v.wdl == Wdl::Draw).collect();
        drawing.sort_by_key(|v| progress_rank(&v.mv));
        for v in drawing {
            path.push((v.mv, legal.clone()));
            if let Some(end) = dfs(oracle, &p.play(&v.mv), path, seen, nodes)? {
                return Ok(Some(end));
            }
            path.pop();
        }
        Ok(None)
    }
    let mut path = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut nodes = 0;
    let found = dfs(oracle, pos, &mut path, &mut seen, &mut nodes)?;
    let (moves, end) = match found {
        Some(end) => (path, format!("{end} (draw)")),
        None => {
            // No adjudicated end found: show a few plies of drawing moves.
            let mut moves = Vec::new();
            let mut p = *pos;
            for _ in 0..8 {
                let values = oracle.move_values(&p)?;
                let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
                let Some(v) = values.iter().find(|v| v.wdl == Wdl::Draw) else {
                    break;
                };
                moves.push((v.mv, legal));
                p = p.play(&v.mv);
            }
            (
                moves,
                "the draw goes on (no adjudicated end found within the search limits)".into(),
            )
        }
    };
    let mut p = *pos;
    let mut line = Vec::new();
    for (mv, legal) in moves {
        line.push(Ply {
            number: move_number(offset + line.len(), first),
            side: p.turn(),
            notation: mv.notation_among(&legal),
            wdl: Wdl::Draw,
            dtw: None,
            claimant: p.turn() == claim.side,
            mv: Some(mv),
        });
        p = p.play(&mv);
    }
    Ok((line, end))
}

/// The main line of best play from `pos`.
fn main_line(
    oracle: &Oracle,
    pos: &Position,
    claim: Claim,
) -> Result<(Vec<Ply>, String), StudyError> {
    if oracle.value(pos)?.wdl == Wdl::Draw {
        draw_line(oracle, pos, claim, 0, pos.turn())
    } else {
        best_line(oracle, pos, claim)
    }
}

/// The tries of the side to move at `pos`, each with the opponent's reply
/// that holds at least `holder`'s goal (the best reply when none holds).
fn tries(
    oracle: &Oracle,
    pos: &Position,
    ply: usize,
    holder: Claim,
) -> Result<Vec<Defence>, StudyError> {
    let mut out = Vec::new();
    let values = oracle.move_values(pos)?;
    let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
    for t in &values {
        let after = pos.play(&t.mv);
        let replies = oracle.move_values(&after)?;
        let reply_legal: Vec<Move> = replies.iter().map(|v| v.mv).collect();
        let reply = replies
            .iter()
            .find(|r| holder.met_by(r.wdl))
            .or(replies.first());
        out.push(Defence {
            ply,
            attempt: t.mv.notation_among(&legal),
            wdl: t.wdl,
            reply: reply.map(|r| r.mv.notation_among(&reply_legal)),
            reply_wdl: reply.map(|r| r.wdl),
        });
    }
    Ok(out)
}

/// Check a study: `claim` from `pos`, and the `solution` moves if given.
pub fn check(
    oracle: &Oracle,
    pos: &Position,
    claim: Claim,
    solution: Option<&[String]>,
) -> Result<StudyReport, StudyError> {
    let value = oracle.value(pos)?;
    let claimant_wdl = if pos.turn() == claim.side {
        value.wdl
    } else {
        value.wdl.flip()
    };
    let holds = match claim.goal {
        Goal::Win => claimant_wdl == Wdl::Win,
        Goal::Draw => claimant_wdl == Wdl::Draw,
    };
    let (main, line_end) = main_line(oracle, pos, claim)?;

    // Walk the solution, if any.
    let mut solution_check = None;
    if let Some(moves) = solution {
        let mut p = *pos;
        let mut line = Vec::new();
        let mut spoiler = None;
        let mut weak = Vec::new();
        for (i, text) in moves.iter().enumerate() {
            if p.outcome().is_some() {
                return Err(StudyError::GameOver {
                    ply: i + 1,
                    text: text.clone(),
                });
            }
            let legal = p.legal_moves();
            let mv = parse_move(text, &legal).map_err(|source| StudyError::Solution {
                ply: i + 1,
                side: p.turn(),
                source,
            })?;
            let values = oracle.move_values(&p)?;
            let played = values.iter().find(|v| v.mv == mv).expect("a legal move");
            let number = move_number(i, pos.turn());
            if p.turn() == claim.side {
                let achievable = claim.met_by(values[0].wdl);
                if spoiler.is_none() && achievable && !claim.met_by(played.wdl) {
                    spoiler = Some(Spoiler {
                        ply: i + 1,
                        number,
                        played: mv.notation_among(&legal),
                        wdl: played.wdl,
                        better: values
                            .iter()
                            .filter(|v| claim.met_by(v.wdl))
                            .map(|v| alternative(v, &legal, values[0].dtw))
                            .collect(),
                    });
                }
            } else if sort_key(played.wdl, played.dtw) != sort_key(values[0].wdl, values[0].dtw) {
                weak.push(WeakDefence {
                    ply: i + 1,
                    number,
                    played: alternative(played, &legal, None),
                    toughest: alternative(&values[0], &legal, None),
                });
            }
            line.push(Ply {
                number,
                side: p.turn(),
                notation: mv.notation_among(&legal),
                wdl: played.wdl,
                dtw: played.dtw,
                claimant: p.turn() == claim.side,
                mv: Some(mv),
            });
            p = p.play(&mv);
        }
        solution_check = Some(SolutionCheck {
            line,
            spoiler,
            weak_defences: weak,
        });
    }

    // Duals along the line checked: the solution up to its first spoiling
    // move, else the main line.
    let checked: Vec<Ply> = match &solution_check {
        Some(s) => {
            let end = s.spoiler.as_ref().map_or(s.line.len(), |sp| sp.ply - 1);
            s.line[..end].to_vec()
        }
        None if holds => main.clone(),
        None => Vec::new(),
    };
    let mut duals = Vec::new();
    let mut defences = Vec::new();
    let stronger_tries = claim.goal == Goal::Draw;
    let mut p = *pos;
    for (i, ply) in checked.iter().enumerate() {
        let values = oracle.move_values(&p)?;
        let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
        let mv = ply.mv.expect("lines hold their moves");
        if ply.claimant {
            let alternatives: Vec<Alternative> = values
                .iter()
                .filter(|v| v.mv != mv && claim.met_by(v.wdl))
                .map(|v| alternative(v, &legal, ply.dtw.filter(|_| ply.wdl == Wdl::Win)))
                .collect();
            if !alternatives.is_empty() {
                duals.push(Dual {
                    ply: i + 1,
                    number: ply.number,
                    played: ply.notation.clone(),
                    alternatives,
                });
            }
        } else if stronger_tries {
            defences.extend(tries(oracle, &p, i + 1, claim)?);
        }
        p = p.play(&mv);
    }
    // A false win claim: the defender's answer to each try of the claiming side.
    let refutation = (!holds).then(|| main.clone());
    if !holds && claim.goal == Goal::Win && pos.turn() == claim.side {
        let holder = Claim {
            side: claim.side.opponent(),
            goal: Goal::Draw,
        };
        defences.extend(tries(oracle, pos, 1, holder)?);
    }
    if holds && claim.goal == Goal::Draw && pos.turn() != claim.side && checked.is_empty() {
        defences.extend(tries(oracle, pos, 1, claim)?);
    }

    let spoiled = solution_check.as_ref().is_some_and(|s| s.spoiler.is_some());
    Ok(StudyReport {
        fen: fen::write(pos),
        rules: pos.rules().name().to_string(),
        claim,
        wdl: value.wdl,
        dtw: value.dtw,
        holds,
        sound: holds && !spoiled,
        unique: duals.is_empty(),
        main_line: main,
        line_end,
        duals,
        solution: solution_check,
        refutation,
        defences,
        searched: oracle.searched(),
    })
}

/// Why a drawn position is drawn.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The position.
    pub fen: String,
    /// Its value for the side to move.
    #[serde(serialize_with = "wdl_name")]
    pub wdl: Wdl,
    /// The side with more material (the side to move when equal).
    #[serde(serialize_with = "side_name")]
    pub stronger: Side,
    /// When the weaker side is to move: its moves that hold the draw.
    pub holding_moves: Vec<String>,
    /// Every try of the stronger side (after the first holding move when the
    /// weaker side is to move), each with the defence that holds.
    pub tries: Vec<Defence>,
    /// A line of best play; for a draw, one that ends in an adjudicated draw where found.
    pub line: Vec<Ply>,
    /// How the line ends.
    pub line_end: String,
    /// Some values came from search beyond the tables.
    pub searched: bool,
}

/// Explain the value of `pos`; for a draw, why the stronger side cannot win.
pub fn explain(oracle: &Oracle, pos: &Position) -> Result<Explanation, StudyError> {
    let value = oracle.value(pos)?;
    let material = |side: Side| {
        pos.rules()
            .capture_value(pos.men(side).count(), pos.kings(side).count())
    };
    let us = pos.turn();
    let stronger = if material(us.opponent()) > material(us) {
        us.opponent()
    } else {
        us
    };
    let weaker = stronger.opponent();
    let holder = Claim {
        side: weaker,
        goal: Goal::Draw,
    };
    let claim = Claim {
        side: stronger,
        goal: Goal::Win,
    };
    let (line, line_end) = main_line(oracle, pos, claim)?;
    let mut holding_moves = Vec::new();
    let mut tries_list = Vec::new();
    if value.wdl == Wdl::Draw {
        if us == stronger {
            tries_list = tries(oracle, pos, 1, holder)?;
        } else {
            let values = oracle.move_values(pos)?;
            let legal: Vec<Move> = values.iter().map(|v| v.mv).collect();
            holding_moves = values
                .iter()
                .filter(|v| holder.met_by(v.wdl))
                .map(|v| v.mv.notation_among(&legal))
                .collect();
            if let Some(first) = values.iter().find(|v| holder.met_by(v.wdl)) {
                tries_list = tries(oracle, &pos.play(&first.mv), 2, holder)?;
            }
        }
    }
    Ok(Explanation {
        fen: fen::write(pos),
        wdl: value.wdl,
        stronger,
        holding_moves,
        tries: tries_list,
        line,
        line_end,
        searched: oracle.searched(),
    })
}

/// A line as PDN move text: `1. 15-10 46-37 2. 10-4`.
pub fn line_text(line: &[Ply]) -> String {
    let mut s = String::new();
    for (i, p) in line.iter().enumerate() {
        if p.side == Side::White || i == 0 {
            if !s.is_empty() {
                s.push(' ');
            }
            if p.side == Side::White {
                s.push_str(&format!("{}. ", p.number));
            } else {
                s.push_str(&format!("{}... ", p.number));
            }
        } else {
            s.push(' ');
        }
        s.push_str(&p.notation);
    }
    s
}
