//! Study checking on constructed studies, PDN files end to end, draw
//! explanations, search beyond the tables, and the SVG/HTML pictures.
//!
//! Uses the official tables up to four pieces, generated into Cargo's temporary
//! directory (shared with `tablebase_four.rs`; complete tables are reused).

use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::Tablebase;
use frisian_tb::study::{self, Claim, Goal, Oracle, StudyError};
use frisian_tb::{diagram, fen, Position, RuleSet, Side, Wdl};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tables-4");
        generate::run(&Plan::all(RuleSet::Official, &dir, 4), &Quiet).expect("generation succeeds");
        dir
    })
}

fn tablebase() -> Tablebase {
    let mut tb = Tablebase::new(RuleSet::Official);
    tb.add_directory(tables()).unwrap();
    tb
}

fn pos(text: &str) -> Position {
    fen::parse(text, RuleSet::Official).unwrap()
}

fn moves(text: &str) -> Vec<String> {
    frisian_tb::pdn::move_text(text).unwrap()
}

fn win_for(side: Side) -> Claim {
    Claim {
        side,
        goal: Goal::Win,
    }
}

#[test]
fn a_sound_win_with_a_unique_solution() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let p = pos("W:W16,20,21:BK38");
    let solution = moves("1. 21-17 38x15 2. 17-12 15x11 3. 16x7");
    let r = study::check(&oracle, &p, win_for(Side::White), Some(&solution)).unwrap();
    assert!(r.holds && r.sound && r.unique, "{r:?}");
    assert_eq!((r.wdl, r.dtw), (Wdl::Win, Some(5)));
    assert_eq!(
        study::line_text(&r.main_line),
        "1. 21-17 38x15 2. 17-12 15x11 3. 16x7"
    );
    assert!(r.duals.is_empty());
    let sol = r.solution.unwrap();
    assert!(sol.spoiler.is_none() && sol.weak_defences.is_empty());
    assert!(!r.searched);
}

#[test]
fn a_win_with_a_dual_at_move_two() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let r = study::check(&oracle, &pos("W:W25,35:B14"), win_for(Side::White), None).unwrap();
    assert!(r.holds && r.sound && !r.unique);
    assert_eq!(r.duals.len(), 1, "{:?}", r.duals);
    let dual = &r.duals[0];
    assert_eq!((dual.number, dual.played.as_str()), (2, "30-24"));
    assert_eq!(dual.alternatives.len(), 1);
    let alt = &dual.alternatives[0];
    assert_eq!(alt.notation, "25-20");
    assert_eq!(alt.wdl, Wdl::Win);
    assert!(alt.slower, "25-20 wins more slowly than 30-24: {alt:?}");
}

#[test]
fn a_win_claim_that_is_a_draw_is_cooked_with_the_refutation() {
    // Rulebook 2j-II: the black king holds the long diagonal the man must cross.
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let r = study::check(&oracle, &pos("W:WK18,15:BK46"), win_for(Side::White), None).unwrap();
    assert!(!r.holds && !r.sound);
    assert_eq!(r.wdl, Wdl::Draw);
    assert!(r.refutation.is_some());
    // Every White try, with Black's answer: none of them wins.
    let legal = pos("W:WK18,15:BK46").legal_moves().len();
    assert_eq!(r.defences.len(), legal);
    for d in &r.defences {
        assert_ne!(d.wdl, Wdl::Win, "{d:?}");
        let reply = d.reply_wdl.expect("the game goes on");
        assert!(reply >= Wdl::Draw, "Black holds after {}: {d:?}", d.attempt);
    }
}

#[test]
fn a_solution_whose_third_move_spoils_the_win() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let solution = moves("1. 48-42 16-21 2. 42-37 21-26 3. 37-32 26-31");
    let r = study::check(
        &oracle,
        &pos("W:W45,48:B16"),
        win_for(Side::White),
        Some(&solution),
    )
    .unwrap();
    assert!(r.holds && !r.sound);
    let sp = r.solution.as_ref().unwrap().spoiler.as_ref().unwrap();
    assert_eq!((sp.number, sp.ply, sp.played.as_str()), (3, 5, "37-32"));
    assert_eq!(sp.wdl, Wdl::Draw);
    let better: Vec<&str> = sp.better.iter().map(|a| a.notation.as_str()).collect();
    assert_eq!(better, ["45-40"]);
    // The main line keeps the win the solution lost.
    assert_eq!(
        study::line_text(&r.main_line),
        "1. 48-42 16-21 2. 42-37 21-26 3. 45-40 26-31 4. 37x26"
    );
}

#[test]
fn a_defence_that_is_not_the_toughest_is_named() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let p = pos("W:W25,35:B14");
    let after = p.play(&frisian_tb::moves::parse_move("35-30", &p.legal_moves()).unwrap());
    // Pick the Black reply that loses fastest; the checker must name a tougher one.
    let replies = tb.probe_moves(&after).unwrap();
    let fastest = replies.last().unwrap();
    let toughest = &replies[0];
    assert!(fastest.dtw < toughest.dtw, "{replies:?}");
    let solution = vec!["35-30".to_string(), fastest.mv.to_string()];
    let r = study::check(&oracle, &p, win_for(Side::White), Some(&solution)).unwrap();
    let weak = &r.solution.unwrap().weak_defences;
    assert_eq!(weak.len(), 1);
    assert_eq!(weak[0].played.notation, fastest.mv.to_string());
    assert_eq!(weak[0].toughest.dtw, toughest.dtw);
}

#[test]
fn a_draw_study_where_every_try_is_held() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    let claim = Claim {
        side: Side::Black,
        goal: Goal::Draw,
    };
    let r = study::check(&oracle, &pos("B:WK18,15:BK46"), claim, None).unwrap();
    assert!(r.holds && r.sound);
    assert!(!r.defences.is_empty());
    for d in &r.defences {
        // Each White try is answered by a Black move that keeps at least the draw.
        assert!(
            d.reply_wdl.is_some_and(|w| w >= Wdl::Draw),
            "try {} not held: {d:?}",
            d.attempt
        );
    }
    // The line ends in an adjudicated draw.
    assert!(r.line_end.contains("draw"), "{}", r.line_end);
    let last = r.main_line.last().unwrap();
    let mut p = pos("B:WK18,15:BK46");
    for ply in &r.main_line {
        p = p.play(&ply.mv().unwrap());
    }
    assert_eq!(p.outcome().map(|o| o.wdl), Some(Wdl::Draw), "{last:?}");
}

#[test]
fn explain_shows_every_try_and_a_line_to_an_adjudicated_draw() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    for text in ["W:WK18,15:BK46", "B:WK4:BK23,16"] {
        let p = pos(text);
        let e = study::explain(&oracle, &p).unwrap();
        assert_eq!(e.wdl, Wdl::Draw);
        // The stronger side is the one with the man; each of its tries is held.
        let tries_at = if e.stronger == p.turn() {
            p
        } else {
            let holding = &e.holding_moves[0];
            p.play(&frisian_tb::moves::parse_move(holding, &p.legal_moves()).unwrap())
        };
        assert_eq!(e.tries.len(), tries_at.legal_moves().len(), "{text}");
        assert!(e.tries.iter().all(|d| d.wdl != Wdl::Win));
        assert!(e.line_end.contains("(draw)"), "{text}: {}", e.line_end);
    }
}

#[test]
fn positions_beyond_the_tables_are_solved_by_search_through_captures() {
    let tb = tablebase();
    let oracle = Oracle::new(&tb);
    // Five pieces; White must capture (into four-piece tables).
    let p = pos("W:W28,K46,K1:B23,K5");
    let r = study::check(&oracle, &p, win_for(Side::White), None).unwrap();
    assert!(r.searched);
    // The search value equals the best table value over the captures.
    let best = p
        .legal_moves()
        .iter()
        .map(|m| tb.probe(&p.play(m)).unwrap())
        .map(|v| (v.wdl.flip(), v.dtw.map(|d| d + 1)))
        .max_by_key(|&(w, d)| {
            let d = d.unwrap_or(0) as i64;
            // Best for White: wins (shortest first), draws, losses (longest first).
            (w, if w == Wdl::Win { -d } else { d })
        })
        .unwrap();
    assert_eq!((r.wdl, r.dtw), best);
}

#[test]
fn positions_beyond_the_tables_without_captures_name_the_tables_needed() {
    let tb = tablebase();
    let oracle = Oracle::with_depth(&tb, 2);
    let e = study::check(
        &oracle,
        &pos("W:W31,32,K46:B19,20,K5"),
        win_for(Side::White),
        None,
    )
    .unwrap_err();
    match &e {
        StudyError::BeyondTables { pieces, max, .. } => assert_eq!((*pieces, *max), (6, 4)),
        other => panic!("{other}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("Tables needed"), "{msg}");
}

fn frisian_tb_cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_frisian-tb"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_pdn_file_of_studies_is_checked_end_to_end() {
    let dir = tables().to_str().unwrap().to_string();
    let pdn = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/studies.pdn");
    let out = frisian_tb_cli(&["study", "--tables", &dir, "--pdn", pdn, "--json"]);
    // Three of the eight games cannot be checked: a failed check (status 1),
    // after the whole report.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let studies = v["studies"].as_array().unwrap();
    assert_eq!(studies.len(), 8);
    let report = |i: usize| &studies[i]["report"];
    assert_eq!(report(0)["sound"], true);
    assert_eq!(report(0)["unique"], true);
    assert_eq!(report(1)["unique"], false);
    assert_eq!(report(1)["duals"][0]["number"], 2);
    assert_eq!(report(2)["holds"], false);
    assert_eq!(report(3)["solution"]["spoiler"]["played"], "37-32");
    assert_eq!(report(4)["holds"], true);
    assert_eq!(report(4)["claim"]["goal"], "draw");
    assert_eq!(report(4)["claim"]["side"], "black");
    // The broken games: by number and line, with the reason.
    assert_eq!(studies[5]["game"], 6);
    assert!(studies[5]["error"].as_str().unwrap().contains("square 51"));
    assert!(studies[6]["error"]
        .as_str()
        .unwrap()
        .contains("GameType 20"));
    assert_eq!(studies[7]["line"], 49);
    assert!(studies[7]["error"].as_str().unwrap().contains("17-13"));
    assert_eq!(v["summary"]["not_checked"], 3);
    assert_eq!(v["summary"]["sound_unique"], 1);

    // The text report and the HTML page.
    let html = Path::new(env!("CARGO_TARGET_TMPDIR")).join("studies.html");
    let out = frisian_tb_cli(&[
        "study",
        "--tables",
        &dir,
        "--pdn",
        pdn,
        "--html",
        html.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("=== Game 8 (line 49)"), "{text}");
    assert!(
        text.contains("8 studies: 1 sound with a unique solution"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<svg").count(), 5);
    assert!(page.contains("sound; the solution is unique"));
}

#[test]
fn probe_explain_from_the_command_line() {
    let dir = tables().to_str().unwrap().to_string();
    let out = frisian_tb_cli(&["probe", "--tables", &dir, "--explain", "W:WK18,15:BK46"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("The stronger side is White; it cannot win"),
        "{text}"
    );
    assert!(text.contains("try 15-10"), "{text}");
    assert!(text.contains("one king each"), "{text}");
}

/// Render an SVG to pixels.
fn render(svg: &str) -> resvg::tiny_skia::Pixmap {
    let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
}

#[test]
fn the_svg_diagram_renders_with_pieces_where_they_stand() {
    let p = pos("W:W28,K45:B7,K12");
    let arrows = vec![p.legal_moves()[0]];
    let pixmap = render(&diagram::svg(&p, &arrows));
    assert_eq!((pixmap.width(), pixmap.height()), (416, 416));
    // Centre of square n: column and row of the 10x10 board, 40 units each, 8 of margin.
    let at = |n: u32| {
        let sq = frisian_tb::Square::new(n).unwrap();
        let (x, y) = (8 + sq.col() as u32 * 40 + 20, 8 + sq.row() as u32 * 40 + 20);
        let c = pixmap.pixel(x, y).unwrap();
        (c.red() as u32 + c.green() as u32 + c.blue() as u32) / 3
    };
    assert!(at(28) > 200, "white man on 28");
    assert!(at(7) < 60, "black man on 7");
    assert!((60..200).contains(&at(30)), "empty dark square 30");
    // The PNG encoding works too (what a user converting the file gets).
    let png = pixmap.encode_png().unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}

#[test]
fn show_svg_writes_the_file() {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("board.svg");
    let out = frisian_tb_cli(&[
        "show",
        "--svg",
        file.to_str().unwrap(),
        "--arrow",
        "28x48",
        "W:W28:B9,18,20,29,38",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.contains("<polyline"));
    render(&svg);
    let out = frisian_tb_cli(&[
        "show",
        "--svg",
        file.to_str().unwrap(),
        "--arrow",
        "28-22",
        "W:W28:B9,18,20,29,38",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--arrow"));
}

#[test]
fn bad_study_input_gives_clear_errors() {
    let dir = tables().to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["study", "--tables", &dir];
        all.extend_from_slice(args);
        let out = frisian_tb_cli(&all);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, err) = run(&[
        "--claim",
        "win",
        "--solution",
        "1. 21-18",
        "W:W16,20,21:BK38",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("solution move 1 (White to move): illegal move '21-18'"),
        "{err}"
    );
    let (code, err) = run(&[
        "--claim",
        "win",
        "--solution",
        "1. 21-17 banana",
        "W:W16,20,21:BK38",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("banana"), "{err}");
    let (code, err) = run(&["--claim", "win", "W:W16,20,21:BK51"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("column"), "{err}");
    let (code, err) = run(&["--pdn", "/nonexistent/studies.pdn"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("/nonexistent/studies.pdn"), "{err}");
}
