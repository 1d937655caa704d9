//! `probe` (and `probe --explain`): a position's value and its moves' values.

use super::{describe_dirs, open_tablebase, CliError};
use frisian_tb::probe::{ProbeError, ProbeValue};
use frisian_tb::table::Metric;
use frisian_tb::{fen, report, study, Material, Move, Position, Wdl};
use serde::Serialize;
use std::path::PathBuf;

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

pub(super) fn cmd_probe(
    pos: &Position,
    dirs: &[PathBuf],
    depth: u32,
    json: bool,
) -> Result<(), CliError> {
    let tb = open_tablebase(dirs, pos.rules())?;
    // From the tables; a position with more pieces by an exact search that
    // follows every line to the tables (or fails, naming the tables needed).
    let oracle = study::Oracle::with_depth(&tb, depth);
    let (v, moves, note) = match oracle
        .value(pos)
        .and_then(|v| Ok((v, oracle.move_values(pos)?)))
    {
        Ok((v, moves)) => (v, moves, None),
        // A directory with WDL files only (a fifth of the bytes, all that
        // an engine needs): answer from them, without distances.
        Err(study::StudyError::Probe(ProbeError::MissingTable {
            material,
            metric: Metric::Dtw,
            ..
        })) if Material::of(pos).pieces() <= tb.max_pieces() => {
            let v = ProbeValue {
                wdl: tb.probe_wdl(pos)?,
                dtw: None,
            };
            let moves = tb.probe_moves_wdl(pos)?;
            let note = format!(
                "no DTW table for {material} ({} rules) in {}: win, draw or loss only, no distances",
                pos.rules(),
                describe_dirs(dirs)
            );
            (v, moves, Some(note))
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(note) = &note {
        eprintln!("note: {note}");
    }
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

pub(super) fn cmd_explain(
    pos: &Position,
    dirs: &[PathBuf],
    depth: u32,
    json: bool,
) -> Result<(), CliError> {
    let tb = open_tablebase(dirs, pos.rules())?;
    let oracle = study::Oracle::with_depth(&tb, depth);
    let e = study::explain(&oracle, pos)?;
    if json {
        println!("{}", serde_json::to_string(&e).expect("serialisable"));
    } else {
        print!("{}", report::explanation_text(&e));
    }
    Ok(())
}
