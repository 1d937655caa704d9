//! FEN input and output: accepted forms, round trips, and errors that say what and where.

use frisian_tb::fen::{self, FenErrorKind};
use frisian_tb::{Position, RuleSet, Side, Square};

fn parse(text: &str) -> Position {
    fen::parse(text, RuleSet::Official).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn error(text: &str) -> (usize, FenErrorKind) {
    let e = fen::parse(text, RuleSet::Official).expect_err(text);
    (e.column, e.kind)
}

#[test]
fn ranges_any_order_and_spaces_are_accepted() {
    let a = parse("W:W31-50:B1-20");
    assert_eq!(a, Position::initial(RuleSet::Official));
    let b = parse(" W : B20-1 : W50,49,48,47,46,31-45 ");
    assert_eq!(b, a);
    assert_eq!(parse("\"W:W31-50:B1-20\""), a);
    // A PDN tag as copied from a game file; its errors point into the tag.
    assert_eq!(parse("[FEN \"W:W31-50:B1-20\"]"), a);
    assert_eq!(parse(" [fen  \"W:W31-50:B1-20\" ] "), a);
    assert_eq!(
        error("[FEN \"W:W31-51:B1-20\"]"),
        (10, FenErrorKind::OffBoard(51))
    );
    assert!(matches!(
        error("[FENW:W31:B20]").1,
        FenErrorKind::BadSide(_)
    ));
    let k = parse("B:W31,32,K45:B1,2,K7");
    assert_eq!(k.turn(), Side::Black);
    assert_eq!(
        k.kings(Side::White)
            .squares()
            .map(|s| s.number())
            .collect::<Vec<_>>(),
        [45]
    );
    assert_eq!(
        k.kings(Side::Black)
            .squares()
            .map(|s| s.number())
            .collect::<Vec<_>>(),
        [7]
    );
    assert_eq!(parse("W:WK31-33:B").kings(Side::White).count(), 3);
}

#[test]
fn writing_lists_every_square_in_order() {
    assert_eq!(
        fen::write(&parse("W:WK45,32,31:BK7,2,1")),
        "W:W31,32,K45:B1,2,K7"
    );
}

#[test]
fn counter_extension_round_trips() {
    for text in [
        "W:W31,K45:B7:TW45/2",
        "B:W31,K45:B7,K20:TW45/3:TB20/1",
        "W:WK43,K50:BK14:SW5",
        "W:WK44:BK50:SW7",
        "W:WK1,K2:BK6",
    ] {
        let p = parse(text);
        assert_eq!(fen::write(&p), text);
        assert_eq!(parse(&fen::write(&p)), p);
    }
    let p = fen::parse("W:WK1,K2:BK6:H3", RuleSet::Lidraughts).unwrap();
    assert_eq!(fen::write(&p), "W:WK1,K2:BK6:H3");
}

#[test]
fn the_seven_move_side_may_be_left_out_in_two_kings_against_one() {
    let p = parse("B:WK1:BK6,K7:S4");
    assert_eq!(
        p.seven_move().map(|s| (s.strong, s.moves)),
        Some((Side::Black, 4))
    );
}

#[test]
fn lidraughts_tail_is_accepted() {
    let p = fen::parse("W:W31,K36:B7:H0:F12:+0+236", RuleSet::Lidraughts).unwrap();
    let kc = p.three_move(Side::White).unwrap();
    assert_eq!((kc.square, kc.count), (Square::new(36).unwrap(), 2));
    assert_eq!(p.three_move(Side::Black), None);
    let p = fen::parse("B:W31,K5:B7,K45:H2:F30:+145+105", RuleSet::Lidraughts).unwrap();
    assert_eq!(
        p.three_move(Side::Black)
            .map(|k| (k.square.number(), k.count)),
        Some((45, 1))
    );
    assert_eq!(
        p.three_move(Side::White)
            .map(|k| (k.square.number(), k.count)),
        Some((5, 1))
    );
    // Under the official rules the clock is ignored but the three-move tail kept.
    let p = fen::parse("W:W31,K36:B7:H5:F12:+0+236", RuleSet::Official).unwrap();
    assert_eq!(p.three_move(Side::White).map(|k| k.count), Some(2));
}

#[test]
fn unknown_side_is_an_error() {
    assert_eq!(error("X:W31:B1"), (1, FenErrorKind::BadSide("X".into())));
    assert_eq!(error("W:W31:X1").1, FenErrorKind::BadField("X1".into()));
}

#[test]
fn squares_off_the_board_are_errors() {
    assert_eq!(error("W:W0:B1"), (4, FenErrorKind::OffBoard(0)));
    assert_eq!(error("W:W31:B1,51"), (10, FenErrorKind::OffBoard(51)));
    assert_eq!(error("W:W31:BK45-51").1, FenErrorKind::OffBoard(51));
}

#[test]
fn a_square_given_twice_is_an_error() {
    assert_eq!(error("W:W31,32:B32"), (11, FenErrorKind::SquareTwice(32)));
    assert_eq!(error("W:W31,K31:B1").1, FenErrorKind::SquareTwice(31));
}

#[test]
fn men_on_their_promotion_row_are_errors() {
    assert_eq!(
        error("W:W3:B10"),
        (4, FenErrorKind::ManOnFarRow(Side::White, 3))
    );
    assert_eq!(
        error("W:W30:B48"),
        (8, FenErrorKind::ManOnFarRow(Side::Black, 48))
    );
    // Kings may stand there.
    parse("W:WK3:BK48");
}

#[test]
fn malformed_counter_fields_are_errors() {
    for (text, column) in [
        ("W:W31,K45:B7:TW45", 14),
        ("W:W31,K45:B7:TW45/4", 14),
        ("W:W31,K45:B7:TX45/1", 14),
        ("W:WK1,K2:BK6:SW8", 14),
        ("W:WK1,K2:BK6:Sx", 14),
        ("W:WK1,K2:BK6:H", 14),
        ("W:W31:B7:+0+7", 10),
    ] {
        let (col, kind) = error(text);
        assert!(
            matches!(kind, FenErrorKind::BadCounter { .. }),
            "{text}: {kind:?}"
        );
        assert_eq!(col, column, "{text}");
    }
    // Well-formed but inconsistent with the position.
    assert!(matches!(
        error("W:W31,K45:B7:TW44/1").1,
        FenErrorKind::Position(_)
    ));
    assert!(matches!(
        error("W:W31,K45:B7:SW3").1,
        FenErrorKind::Position(_)
    ));
    assert!(matches!(
        error("W:W31,K45:B7:TW45/1:TW45/2").1,
        FenErrorKind::FieldTwice(_)
    ));
}

#[test]
fn trailing_junk_is_an_error() {
    assert_eq!(
        error("W:W31:B1 xyz"),
        (10, FenErrorKind::TrailingJunk("xyz".into()))
    );
    assert_eq!(
        error("W:W31,32 33:B1").1,
        FenErrorKind::TrailingJunk("33".into())
    );
    assert_eq!(error("W:W31:B1,2x").1, FenErrorKind::BadSquare("2x".into()));
}

#[test]
fn missing_pieces_fields_and_empty_input_are_errors() {
    assert_eq!(error("").1, FenErrorKind::Empty);
    assert_eq!(error("W").1, FenErrorKind::MissingSide(Side::White));
    assert_eq!(error("W:W31").1, FenErrorKind::MissingSide(Side::Black));
    assert_eq!(
        error("W:W31:W32:B1").1,
        FenErrorKind::FieldTwice("W".into())
    );
}

#[test]
fn error_messages_say_what_and_where() {
    let e = fen::parse("W:W31,32:B1,55", RuleSet::Official).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid FEN at column 13: square 55 is off the board (1-50)"
    );
}
