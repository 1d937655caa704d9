//! `study`: checking an endgame study given as FEN or PDN.

use super::{open_tablebase, write_file, CliError};
use frisian_tb::{fen, pdn, report, study, Position, RuleSet, Side};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub(super) fn cmd_study(
    pos: &Position,
    claim: study::Claim,
    solution: Option<&str>,
    dirs: &[PathBuf],
    depth: u32,
    html: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let tb = open_tablebase(dirs, pos.rules())?;
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

pub(super) fn cmd_study_pdn(
    file: &Path,
    dirs: &[PathBuf],
    rules: RuleSet,
    depth: u32,
    html: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::Other(format!("cannot read {}: {e}", file.display())))?;
    let games = pdn::parse_games(&text);
    if games.is_empty() {
        return Err(CliError::Other(format!(
            "{} holds no game: nothing to check",
            file.display()
        )));
    }
    let tb = open_tablebase(dirs, rules)?;
    let mut results = Vec::new();
    let mut pages = Vec::new();
    for game in games {
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
        "{} stud{}: {sound_unique} sound with a unique solution, {sound_duals} sound with duals, {false_claims} with a false claim, {spoiled} whose solution leaves the claim, {unreadable} not checked",
        results.len(),
        if results.len() == 1 { "y" } else { "ies" }
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
        return not_checked_error(unreadable, results.len());
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
    not_checked_error(unreadable, results.len())
}

/// The outcome of a PDN run in which `unreadable` of `total` studies could
/// not be checked: a failed check (exit status 1) if any, named in the
/// summary above.
fn not_checked_error(unreadable: usize, total: usize) -> Result<(), CliError> {
    if unreadable == 0 {
        return Ok(());
    }
    Err(CliError::CheckFailed(format!(
        "{unreadable} of {total} studies could not be checked (see each one's reason above)"
    )))
}
