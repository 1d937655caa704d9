//! One named test per rule of docs/RULES.md, each on a position built for it.

use frisian_tb::moves::parse_move;
use frisian_tb::{fen, Ending, Position, RuleSet, Square, Wdl};

fn pos(text: &str) -> Position {
    fen::parse(text, RuleSet::Official).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn pos_in(text: &str, rules: RuleSet) -> Position {
    fen::parse(text, rules).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Legal moves in long PDN, sorted, so that paths show too.
fn moves(p: &Position) -> Vec<String> {
    let legal = p.legal_moves();
    let mut v: Vec<String> = legal.iter().map(|m| m.notation_among(&legal)).collect();
    v.sort();
    v
}

fn sorted(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

fn play(p: &Position, line: &str) -> Position {
    line.split_whitespace().fold(*p, |p, text| {
        let m = parse_move(text, &p.legal_moves()).unwrap_or_else(|e| panic!("{text}: {e}"));
        p.play(&m)
    })
}

fn sq(n: u32) -> Square {
    Square::new(n).unwrap()
}

// --- Rulebook examples ---------------------------------------------------------

#[test]
fn rulebook_2d_iii_four_captures_after_the_opening_shot() {
    let p = play(
        &Position::initial(RuleSet::Official),
        "32-27 20-24 33-29 24x33",
    );
    assert_eq!(moves(&p), sorted(&["38x29", "39x28", "43x23", "34x32"]));
}

#[test]
fn white_moves_first_and_men_move_diagonally_forward() {
    let p = Position::initial(RuleSet::Official);
    assert_eq!(
        moves(&p),
        sorted(&["31-26", "31-27", "32-27", "32-28", "33-28", "33-29", "34-29", "34-30", "35-30"])
    );
}

// --- Men capture in eight directions ----------------------------------------------

#[test]
fn man_captures_orthogonally_forward() {
    assert_eq!(moves(&pos("W:W28:B18")), ["28x8"]);
}

#[test]
fn man_captures_orthogonally_backward() {
    assert_eq!(moves(&pos("W:W28:B38")), ["28x48"]);
}

#[test]
fn man_captures_along_the_row_both_ways() {
    assert_eq!(moves(&pos("W:W28:B29")), ["28x30"]);
    assert_eq!(moves(&pos("W:W28:B27")), ["28x26"]);
}

#[test]
fn man_captures_diagonally_backward() {
    assert_eq!(moves(&pos("W:W28:B33")), ["28x39"]);
}

#[test]
fn capture_is_compulsory() {
    // White could move 46-41, but must capture.
    assert_eq!(moves(&pos("W:W28,46:B33")), ["28x39"]);
}

// --- Kings --------------------------------------------------------------------

#[test]
fn king_moves_any_distance_diagonally_but_never_orthogonally() {
    assert_eq!(
        moves(&pos("W:WK46:BK25")),
        sorted(&["46-41", "46-37", "46-32", "46-28", "46-23", "46-19", "46-14", "46-10", "46-5"])
    );
}

#[test]
fn king_captures_at_range_with_a_choice_of_landing_squares() {
    assert_eq!(
        moves(&pos("W:WK46:B28")),
        sorted(&["46x23", "46x19", "46x14", "46x10", "46x5"])
    );
    // Along the row and the column, too.
    assert_eq!(moves(&pos("W:WK46:BK48")), sorted(&["46x49", "46x50"]));
    assert_eq!(moves(&pos("W:WK46:B26")), sorted(&["46x16", "46x6"]));
}

// --- Sequences --------------------------------------------------------------------

#[test]
fn a_capture_may_pass_a_square_twice() {
    // 28 right over 29, up over 20, left over 9, down over 18 back to 28, down over 38.
    let p = pos("W:W28:B9,18,20,29,38");
    let legal = p.legal_moves();
    assert_eq!(
        legal.len(),
        1,
        "both ways round the loop are the same move: {legal:?}"
    );
    let m = legal[0];
    assert_eq!((m.from(), m.to()), (sq(28), sq(48)));
    assert_eq!(
        m.captures()
            .squares()
            .map(|s| s.number())
            .collect::<Vec<_>>(),
        [9, 18, 20, 29, 38]
    );
    assert_eq!(m.path().filter(|&s| s == sq(28)).count(), 2);
}

#[test]
fn a_piece_may_not_be_jumped_twice() {
    // Round the loop back to the origin; jumping 29 or 18 a second time is not allowed.
    let p = pos("W:W28:B9,18,20,29");
    let legal = p.legal_moves();
    assert_eq!(legal.len(), 1);
    assert_eq!(
        (legal[0].from(), legal[0].to(), legal[0].captures().count()),
        (sq(28), sq(28), 4)
    );
    assert_eq!(legal[0].to_string(), "28x28");
}

#[test]
fn captured_pieces_stay_on_the_board_and_block() {
    // After taking 33 the king cannot fly back over it to take 17, nor the other way round.
    assert_eq!(
        moves(&pos("W:WK28:B17,33")),
        sorted(&["28x6", "28x11", "28x39", "28x44", "28x50"])
    );
}

#[test]
fn identical_captures_are_listed_once() {
    // Two routes round the same loop: same origin, destination and captured set.
    let p = pos("W:W28:B9,18,20,29");
    assert_eq!(p.legal_moves().len(), 1);
    // A king with two routes to the same end: 46 over 37 and 19, landing on 5 either way
    // is one move per landing square, never two.
    let p = pos("W:WK46:B37,19");
    let legal = p.legal_moves();
    for (i, a) in legal.iter().enumerate() {
        for b in &legal[i + 1..] {
            assert!(
                !(a.from() == b.from() && a.to() == b.to() && a.captures() == b.captures()),
                "{a:?} twice"
            );
        }
    }
}

#[test]
fn a_man_crossing_the_far_row_during_a_capture_stays_a_man() {
    // 13 over 8 to 2 (the far row), then down over 12 to 22: still a man.
    let p = pos("W:W13:B8,12");
    let legal = p.legal_moves();
    assert_eq!(moves(&p), ["13x22"]);
    assert!(!legal[0].promotes());
    assert_eq!(fen::write(&p.play(&legal[0])), "B:W22:B");
}

#[test]
fn a_man_ending_on_the_far_row_is_promoted() {
    let p = pos("W:W13:B8");
    let m = p.legal_moves()[0];
    assert!(m.promotes());
    assert_eq!(fen::write(&p.play(&m)), "B:WK2:B");
    let p = pos("W:W7:B40");
    let after = play(&p, "7-1");
    assert_eq!(fen::write(&after), "B:WK1:B40");
}

// --- Highest value ----------------------------------------------------------------------

/// The value chain of docs/RULES.md, lowest first, as (men, kings).
const CHAIN: [(u32, u32); 8] = [
    (1, 0),
    (0, 1),
    (2, 0),
    (1, 1),
    (3, 0),
    (0, 2),
    (2, 1),
    (4, 0),
];

#[test]
fn capture_values_are_ordered_as_the_rules_say() {
    for rules in RuleSet::ALL {
        for w in CHAIN.windows(2) {
            let (a, b) = (
                rules.capture_value(w[0].0, w[0].1),
                rules.capture_value(w[1].0, w[1].1),
            );
            if w[0] == (0, 2) && rules == RuleSet::Official {
                assert_eq!(a, b, "two kings equal a king and two men (official)");
            } else {
                assert!(a < b, "{rules}: {:?} < {:?}", w[0], w[1]);
            }
        }
    }
    // Three kings are worth 5.5 men: more than five, less than six.
    let v = |m, k| RuleSet::Official.capture_value(m, k);
    assert!(v(5, 0) < v(0, 3) && v(0, 3) < v(6, 0));
    assert_eq!(2 * v(0, 3), v(11, 0));
}

/// Two separate capture chains for White. Chain A: the man on 36 takes along
/// row 7 (37, 39), then 34 and 28; chain B: the man on 10 takes 9, 7, 16, 21.
/// `a` and `b` give each chain's pieces, `K` for a king.
fn two_chains(a: &[&str], b: &[&str]) -> Position {
    let mut black = Vec::new();
    for (piece, square) in a.iter().zip(["37", "39", "34", "28"]) {
        black.push(format!("{}{square}", if *piece == "K" { "K" } else { "" }));
    }
    for (piece, square) in b.iter().zip(["9", "7", "16", "21"]) {
        black.push(format!("{}{square}", if *piece == "K" { "K" } else { "" }));
    }
    pos(&format!("W:W36,10:B{}", black.join(",")))
}

#[test]
fn the_chains_capture_as_designed() {
    assert_eq!(moves(&two_chains(&["M", "M", "M", "M"], &[])), ["36x27"]);
    assert_eq!(moves(&two_chains(&[], &["M", "M", "M", "M"])), ["10x17"]);
    assert_eq!(
        moves(&two_chains(&["M", "M", "M"], &["M", "M", "M"])),
        sorted(&["36x29", "10x26"])
    );
}

#[test]
fn two_men_outweigh_one_king() {
    // Rulebook 2g-II: taking two men is compulsory over taking a king.
    assert_eq!(moves(&two_chains(&["M", "M"], &["K"])), ["36x40"]);
}

#[test]
fn one_king_outweighs_one_man() {
    assert_eq!(moves(&two_chains(&["M"], &["K"])), ["10x8"]);
}

/// Black's pieces for a chain: `n` pieces of which the given ones are kings.
fn material(men: u32, kings: u32) -> Vec<&'static str> {
    let mut v = vec!["K"; kings as usize];
    v.extend(std::iter::repeat_n("M", men as usize));
    v
}

#[test]
fn every_step_of_the_value_chain_decides_the_capture() {
    // Chain A's destination for 1-4 pieces, and chain B's.
    let a_to = ["36x38", "36x40", "36x29", "36x27"];
    let b_to = ["10x8", "10x6", "10x26", "10x17"];
    for rules in RuleSet::ALL {
        for w in CHAIN.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let (lo_n, hi_n) = ((lo.0 + lo.1) as usize, (hi.0 + hi.1) as usize);
            let equal = rules == RuleSet::Official && lo == (0, 2);
            // Lower value in chain A, higher in chain B, then the other way round.
            let p = two_chains(&material(lo.0, lo.1), &material(hi.0, hi.1)).with_rules(rules);
            let want = if equal {
                sorted(&[a_to[lo_n - 1], b_to[hi_n - 1]])
            } else {
                sorted(&[b_to[hi_n - 1]])
            };
            assert_eq!(moves(&p), want, "{rules}: {lo:?} in A against {hi:?} in B");
            let p = two_chains(&material(hi.0, hi.1), &material(lo.0, lo.1)).with_rules(rules);
            let want = if equal {
                sorted(&[a_to[hi_n - 1], b_to[lo_n - 1]])
            } else {
                sorted(&[a_to[hi_n - 1]])
            };
            assert_eq!(moves(&p), want, "{rules}: {hi:?} in A against {lo:?} in B");
        }
    }
}

#[test]
fn two_kings_equal_a_king_and_two_men_officially_but_not_on_the_servers() {
    let setup = |rules| {
        let p = two_chains(&["K", "M", "M"], &["K", "K"]);
        p.with_rules(rules)
    };
    assert_eq!(moves(&setup(RuleSet::Official)), sorted(&["36x29", "10x6"]));
    assert_eq!(moves(&setup(RuleSet::Lidraughts)), ["36x29"]);
}

#[test]
fn three_kings_outweigh_four_men() {
    // Three kings are worth 5.5 men.
    assert_eq!(
        moves(&two_chains(&["K", "K", "K"], &["M", "M", "M", "M"])),
        ["36x29"]
    );
    assert_eq!(
        moves(&two_chains(&["K", "K"], &["M", "M", "M", "M"])),
        ["10x17"]
    );
}

#[test]
fn the_king_must_capture_when_values_are_equal() {
    // Rulebook 2g-I: the man on 46 and the king on 5 can each take one king.
    assert_eq!(
        moves(&pos("W:W46,K5:BK4,K47")),
        sorted(&["5x3", "5x2", "5x1"])
    );
    // With a higher value for the man, the man takes.
    assert_eq!(moves(&pos("W:W46,K5:BK4,K47,K49")), ["46x50"]);
}

// --- Three-move rule ------------------------------------------------------------------

#[test]
fn three_move_rule_forbids_a_fourth_ordinary_move_with_the_same_king() {
    let p = pos("W:W46,K45:BK3");
    let p = play(&p, "45-40 3-9 40-45 9-3 45-40 3-9");
    let kc = p.three_move(frisian_tb::Side::White).unwrap();
    assert_eq!((kc.square, kc.count), (sq(40), 3));
    assert_eq!(moves(&p), ["46-41"]);
}

#[test]
fn three_move_rule_counts_one_two_three() {
    let mut p = pos("W:W46,K45:BK3");
    for (i, (w, b)) in [("45-40", "3-9"), ("40-45", "9-3"), ("45-40", "3-9")]
        .iter()
        .enumerate()
    {
        p = play(&p, w);
        assert_eq!(
            p.three_move(frisian_tb::Side::White).map(|k| k.count),
            Some(i as u8 + 1)
        );
        p = play(&p, b);
    }
}

#[test]
fn three_move_rule_releases_on_another_piece_moving() {
    let p = play(
        &pos("W:W46,K45:BK3"),
        "45-40 3-9 40-45 9-3 45-40 3-9 46-41 9-3",
    );
    assert_eq!(p.three_move(frisian_tb::Side::White), None);
    assert!(moves(&p).contains(&"40-45".to_string()));
}

#[test]
fn three_move_rule_releases_on_another_king_moving() {
    let p = pos("W:W46,K45,K1:BK20:TW45/3");
    assert!(!moves(&p).iter().any(|m| m.starts_with("45-")));
    let p = play(&p, "1-6 20-14");
    assert_eq!(
        p.three_move(frisian_tb::Side::White)
            .map(|k| (k.square, k.count)),
        Some((sq(6), 1))
    );
    assert!(moves(&p).iter().any(|m| m.starts_with("45-")));
}

#[test]
fn a_blocked_king_may_still_capture_and_is_then_released() {
    // The king on 45 has made three moves but may take 34.
    let p = pos("W:W46,K45:B34,6:TW45/3");
    assert_eq!(
        moves(&p),
        sorted(&["45x29", "45x23", "45x18", "45x12", "45x7", "45x1"])
    );
    let after = play(&p, "45x23");
    assert_eq!(after.three_move(frisian_tb::Side::White), None);
}

#[test]
fn three_move_rule_does_not_apply_without_men() {
    // White has only kings: no state is kept, every king move stays legal.
    let p = play(
        &pos("W:WK45,K1:BK36"),
        "45-50 36-41 50-45 41-36 45-50 36-41",
    );
    assert_eq!(p.three_move(frisian_tb::Side::White), None);
    assert!(moves(&p).iter().any(|m| m.starts_with("50-")));
    // A count given in FEN for a side without men is dropped.
    assert_eq!(
        pos("W:WK45:BK3:TW45/3").three_move(frisian_tb::Side::White),
        None
    );
}

#[test]
fn a_side_whose_only_moves_the_three_move_rule_forbids_has_lost() {
    // The man on 6 is blocked by the king on 1; the king on 45 has moved three times.
    let p = pos("W:W6,K45:BK1:TW45/3");
    assert!(p.legal_moves().is_empty());
    let o = p.outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Loss, Ending::NoLegalMove));
    // With one move fewer the king may move.
    assert!(pos("W:W6,K45:BK1:TW45/2").outcome().is_none());
}

/// Rulebook 2k: a player with no pieces has lost. Play ends when the last
/// piece is taken, so the loser is to move; with the winner to move the game
/// is over just the same (a prober must answer it, not look for a table with
/// no pieces on one side).
#[test]
fn a_side_without_pieces_has_lost_whoever_is_to_move() {
    let taken = play(&pos("W:W32:B27"), "32x21");
    let o = taken.outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Loss, Ending::NoPieces));
    let o = pos("W:W31,32:B").outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Win, Ending::OpponentHasNoPieces));
    let o = pos("B:W:BK5").outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Win, Ending::OpponentHasNoPieces));
}

// --- One king each --------------------------------------------------------------------

#[test]
fn one_king_each_on_46_and_5_the_side_to_move_loses() {
    for text in ["W:WK46:BK5", "B:WK46:BK5", "W:WK5:BK46", "B:WK5:BK46"] {
        let o = pos(text)
            .outcome()
            .unwrap_or_else(|| panic!("{text} should be over"));
        assert_eq!(
            (o.wdl, o.ending),
            (Wdl::Loss, Ending::CornerKings),
            "{text}"
        );
    }
}

#[test]
fn one_king_each_elsewhere_is_a_draw_unless_a_capture_is_on() {
    let o = pos("W:WK46:BK4").outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Draw, Ending::OneKingEach));
    // White can take the king on 2 along the row: the game goes on (and White wins by it).
    let p = pos("W:WK1:BK2");
    assert_eq!(p.outcome(), None);
    assert_eq!(moves(&p), sorted(&["1x3", "1x4", "1x5"]));
    assert_eq!(
        p.play(&p.legal_moves()[0]).outcome().unwrap().wdl,
        Wdl::Loss
    );
    // Black to move there cannot capture: a draw.
    assert_eq!(pos("B:WK1:BK2").outcome().unwrap().wdl, Wdl::Draw);
}

#[test]
fn only_46_and_5_lose_at_once() {
    // Over every placement of one king each, the side to move loses at once only on 46/5.
    let mut losses = Vec::new();
    for w in 1..=50 {
        for b in 1..=50 {
            if w != b {
                for turn in ["W", "B"] {
                    let p = pos(&format!("{turn}:WK{w}:BK{b}"));
                    if matches!(p.outcome(), Some(o) if o.wdl == Wdl::Loss) {
                        losses.push((turn, w, b));
                    }
                }
            }
        }
    }
    assert_eq!(losses.len(), 4, "{losses:?}");
}

// --- Seven-move rule ---------------------------------------------------------------

#[test]
fn seven_move_count_starts_when_two_kings_against_one_arises() {
    // A man promotes: two kings against one from here, count 0.
    let p = play(&pos("W:WK45,7:BK30"), "7-1");
    assert_eq!(
        p.seven_move().map(|s| (s.strong, s.moves)),
        Some((frisian_tb::Side::White, 0))
    );
    let p = play(&p, "30-24 45-50");
    assert_eq!(p.seven_move().map(|s| s.moves), Some(1));
}

#[test]
fn seven_move_rule_the_eighth_move_is_a_draw() {
    let p = pos("W:WK1,K2:BK23:SW7");
    let o = p.outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Draw, Ending::SevenMoveRule));
    assert_eq!(pos("W:WK1,K2:BK23:SW6").outcome(), None);
    // The lone king's moves do not count.
    let p = pos("B:WK1,K2:BK23:SW7");
    assert_eq!(p.outcome(), None);
}

#[test]
fn seven_move_count_carries_into_one_king_each() {
    // Rulebook 2i: 43-34 14x44 50x.. wins only if the last capture is at most the seventh move.
    let four = play(&pos("W:WK43,K50:BK14:SW4"), "43-34 14x44");
    assert_eq!(four.seven_move().map(|s| s.moves), Some(5));
    assert_eq!(four.outcome(), None, "White may still capture");
    let six = play(&pos("W:WK43,K50:BK14:SW6"), "43-34 14x44");
    let o = six.outcome().unwrap();
    assert_eq!((o.wdl, o.ending), (Wdl::Draw, Ending::SevenMoveRule));
}

#[test]
fn seven_move_count_is_reset_by_a_new_two_against_one() {
    // Two kings each: a capture makes two against one, count 0.
    let p = pos("W:WK1,K30:BK24,K40");
    assert_eq!(p.seven_move(), None);
    let p = play(&p, "30x50");
    assert_eq!(
        p.seven_move().map(|s| (s.strong, s.moves)),
        Some((frisian_tb::Side::White, 0))
    );
    // A bare FEN of two kings against one means count 0.
    assert_eq!(pos("B:WK1,K2:BK23").seven_move().map(|s| s.moves), Some(0));
}

// --- Lidraughts ------------------------------------------------------------------------

#[test]
fn lidraughts_draws_two_kings_against_one_after_fourteen_plies() {
    let p = pos_in("W:WK1,K2:BK23:H14", RuleSet::Lidraughts);
    assert_eq!(
        p.outcome().map(|o| (o.wdl, o.ending)),
        Some((Wdl::Draw, Ending::PlyLimit))
    );
    let p = pos_in("W:WK1,K2:BK25:H13", RuleSet::Lidraughts);
    assert_eq!(p.outcome(), None);
    assert_eq!(play(&p, "1-7").plies(), 14);
}

#[test]
fn lidraughts_plays_out_one_king_each_for_four_plies() {
    // No immediate adjudication on 46 and 5: it is played out.
    let p = pos_in("W:WK46:BK5", RuleSet::Lidraughts);
    assert_eq!(p.outcome(), None);
    let p = pos_in("W:WK46:BK4:H4", RuleSet::Lidraughts);
    assert_eq!(p.outcome().map(|o| o.wdl), Some(Wdl::Draw));
    // At the limit it is a draw even with a capture on.
    let p = pos_in("W:WK1:BK2:H4", RuleSet::Lidraughts);
    assert_eq!(
        p.outcome().map(|o| (o.wdl, o.ending)),
        Some((Wdl::Draw, Ending::PlyLimit))
    );
}

#[test]
fn lidraughts_count_restarts_when_two_against_one_becomes_one_each() {
    let p = pos_in("B:WK50,K34:BK14:H9", RuleSet::Lidraughts);
    let p = play(&p, "14x44");
    assert_eq!(p.plies(), 0);
}
