//! Study reports and draw explanations for people: plain text, and a
//! self-contained HTML page with a board diagram.

use crate::diagram;
use crate::position::Position;
use crate::rules::Wdl;
use crate::study::{line_text, Alternative, Defence, Explanation, Goal, Ply, StudyReport};
use std::fmt::Write;

/// `win in 11 plies`, `draw`, `loss in 4 plies`.
pub fn value_words(wdl: Wdl, dtw: Option<u32>) -> String {
    match (wdl, dtw) {
        (Wdl::Draw, _) => "draw".to_string(),
        (w, Some(d)) => format!("{w} in {d} pl{}", if d == 1 { "y" } else { "ies" }),
        (w, None) => w.to_string(),
    }
}

fn alt_words(a: &Alternative) -> String {
    format!(
        "{} ({}{})",
        a.notation,
        value_words(a.wdl, a.dtw),
        if a.slower { ", slower" } else { "" }
    )
}

fn line_rows(line: &[Ply], out: &mut String) {
    for p in line {
        let _ = writeln!(
            out,
            "  {:>3}{} {:<12} {}",
            p.number,
            if p.side == crate::Side::White {
                ". "
            } else {
                "..."
            },
            p.notation,
            value_words(p.wdl, p.dtw)
        );
    }
}

fn defence_rows(defences: &[Defence], out: &mut String) {
    for d in defences {
        let reply = match (&d.reply, d.reply_wdl) {
            (Some(r), Some(w)) => format!("{r} ({w} for the defender)"),
            _ => "the game ends".to_string(),
        };
        let _ = writeln!(
            out,
            "  ply {:>2}: try {:<10} ({}) -> {}",
            d.ply, d.attempt, d.wdl, reply
        );
    }
}

/// The one-line verdict of a study report.
pub fn verdict(r: &StudyReport) -> String {
    let spoiled = r.solution.as_ref().and_then(|s| s.spoiler.as_ref());
    if !r.holds {
        let actual = if r.claim.side == pos_turn(&r.fen) {
            value_words(r.wdl, r.dtw)
        } else {
            value_words(r.wdl.flip(), r.dtw)
        };
        format!(
            "UNSOUND: the claim '{}' is false ({} for {})",
            r.claim.describe(),
            actual,
            r.claim.side
        )
    } else if let Some(sp) = spoiled {
        format!(
            "the claim holds, but the solution leaves it at move {} ({})",
            sp.number, sp.played
        )
    } else if r.unique {
        "sound; the solution is unique".to_string()
    } else {
        let moves: Vec<String> = r.duals.iter().map(|d| d.number.to_string()).collect();
        format!("sound, with duals at move {}", moves.join(", "))
    }
}

/// Side to move of a FEN string (its first letter).
fn pos_turn(fen: &str) -> crate::Side {
    if fen.trim_start().starts_with(['B', 'b']) {
        crate::Side::Black
    } else {
        crate::Side::White
    }
}

/// A study report as plain text.
pub fn study_text(r: &StudyReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Study: {} ({} rules)", r.fen, r.rules);
    let _ = writeln!(
        s,
        "Claim: {} -- {}; the position is a {} for {}",
        r.claim.describe(),
        if r.holds { "true" } else { "FALSE" },
        value_words(r.wdl, r.dtw),
        pos_turn(&r.fen)
    );
    let _ = writeln!(s, "Verdict: {}", verdict(r));
    if r.searched {
        let _ = writeln!(
            s,
            "Note: the position has more pieces than the tables; values were found by searching until every line reached them."
        );
    }
    let _ = writeln!(s, "\nMain line (best play): {}", line_text(&r.main_line));
    line_rows(&r.main_line, &mut s);
    let _ = writeln!(s, "  => {}", r.line_end);
    if let Some(sol) = &r.solution {
        let _ = writeln!(s, "\nSolution as given: {}", line_text(&sol.line));
        line_rows(&sol.line, &mut s);
        match &sol.spoiler {
            Some(sp) => {
                let better: Vec<String> = sp.better.iter().map(alt_words).collect();
                let _ = writeln!(
                    s,
                    "  Move {} {} leaves the claim (it is a {} for {}); it keeps with: {}",
                    sp.number,
                    sp.played,
                    sp.wdl,
                    r.claim.side,
                    better.join(", ")
                );
            }
            None if r.holds => {
                let _ = writeln!(s, "  Every move of {} keeps the claim.", r.claim.side);
            }
            None => {}
        }
        for w in &sol.weak_defences {
            let _ = writeln!(
                s,
                "  Move {} {}: not the toughest defence; {} is",
                w.number,
                alt_words(&w.played),
                alt_words(&w.toughest)
            );
        }
    }
    if r.duals.is_empty() {
        if r.holds {
            let _ = writeln!(s, "\nDuals: none");
        }
    } else {
        let _ = writeln!(s, "\nDuals (other moves that also keep the claim):");
        for d in &r.duals {
            let alts: Vec<String> = d.alternatives.iter().map(alt_words).collect();
            let _ = writeln!(
                s,
                "  move {} {}: also {}",
                d.number,
                d.played,
                alts.join(", ")
            );
        }
    }
    if let Some(refutation) = &r.refutation {
        let _ = writeln!(s, "\nRefutation (best play): {}", line_text(refutation));
    }
    if !r.defences.is_empty() {
        let title = if r.claim.goal == Goal::Draw && r.holds {
            format!(
                "Every try of {}, with the defence that holds",
                r.claim.side.opponent()
            )
        } else {
            format!("Every try of {}, with the defence that holds", r.claim.side)
        };
        let _ = writeln!(s, "\n{title}:");
        defence_rows(&r.defences, &mut s);
    }
    s
}

/// An explanation as plain text.
pub fn explanation_text(e: &Explanation) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} for {}",
        e.fen,
        value_words(e.wdl, None),
        pos_turn(&e.fen)
    );
    if e.wdl == Wdl::Draw {
        let _ = writeln!(s, "The stronger side is {}; it cannot win:", e.stronger);
        if !e.holding_moves.is_empty() {
            let _ = writeln!(
                s,
                "  {} holds with {}",
                e.stronger.opponent(),
                e.holding_moves.join(", ")
            );
        }
        defence_rows(&e.tries, &mut s);
    }
    let _ = writeln!(s, "Line of best play: {}", line_text(&e.line));
    let _ = writeln!(s, "  => {}", e.line_end);
    if e.searched {
        let _ = writeln!(s, "(values beyond the tables found by search)");
    }
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Self-contained HTML for one or more study reports: for each, a diagram of
/// the position (with the first move of the main line drawn), the verdict and
/// the lines. `studies` pairs each report with its title and position.
pub fn studies_html(title: &str, studies: &[(String, Position, StudyReport)]) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}} .study{{border-top:1px solid #ccc;padding-top:1em;margin-top:1em;display:flex;gap:2em;flex-wrap:wrap}} pre{{background:#f6f6f6;padding:.6em;overflow-x:auto}} .ok{{color:#17702a}} .bad{{color:#b3261e}}</style></head><body>\n<h1>{}</h1>",
        escape(title),
        escape(title)
    );
    for (name, pos, r) in studies {
        let first: Vec<_> = r
            .main_line
            .first()
            .and_then(|p| p.mv())
            .into_iter()
            .collect();
        let class = if r.sound && r.unique {
            "ok"
        } else if r.sound {
            ""
        } else {
            "bad"
        };
        let _ = writeln!(
            h,
            "<div class=\"study\"><div>{}</div><div><h2>{}</h2><p class=\"{class}\"><b>{}</b></p><pre>{}</pre></div></div>",
            diagram::svg(pos, &first),
            escape(name),
            escape(&verdict(r)),
            escape(&study_text(r))
        );
    }
    h.push_str("</body></html>\n");
    h
}
