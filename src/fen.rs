//! FMJD FEN with the project's counter extension, and the lidraughts tail.
//!
//! ```text
//! W:W31,32,K45:B1,2,K7                 side to move, White's pieces, Black's pieces
//! W:W31-50:B1-20                       ranges; any order; spaces are ignored
//! W:WK45,31:B7:TW45/2                  extension: White's king on 45 has made 2 ordinary moves in a row
//! W:WK43,K50:BK14:SW5                  extension: seven-move rule, White (two kings) has made 5 moves
//! W:WK1,K2:BK6:H3                      extension: lidraughts ply count of kings-only play
//! W:WK36,31:B7:H0:F12:+0+236           lidraughts tail: clock, move number, Black's then White's three-move state
//! [FEN "W:W31-50:B1-20"]               a PDN tag, as copied from a game file (so is the quoted value alone)
//! ```
//!
//! Extension fields (each optional, at most once, after the piece fields):
//! - `T<side><square>/<count>`: that side's three-move state (count 1-3).
//! - `S<side><moves>`: the official seven-move count, moves 0-7 made by the two-king side
//!   (in one king each, the side that had the two kings). In two kings against one,
//!   a missing field means 0.
//! - `H<plies>`: the lidraughts ply count (ignored under the official rules,
//!   so that a lidraughts FEN with its tail can be pasted; the command line
//!   warns when it ignores one).
//! - `F<number>`: the lidraughts move number (accepted and ignored).
//! - `+<count>[<square>]+<count>[<square>]`: the lidraughts three-move tail, Black first,
//!   the square in two digits (`+0+236`: Black none, White's king on 36 has moved twice).
//!
//! A FEN without extension fields means "no counters running".

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::piece::Side;
use crate::position::{Position, PositionError, Setup};
use crate::rules::{KingCount, RuleSet, SevenMove};
use std::fmt::Write as _;

/// What is wrong with a FEN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenErrorKind {
    /// Nothing given.
    #[error("empty FEN")]
    Empty,
    /// The side to move is not W or B.
    #[error("unknown side '{0}' (expected W or B)")]
    BadSide(String),
    /// A field that is neither a piece list nor a known extension.
    #[error("unknown field '{0}' (expected W..., B..., T..., S..., H..., F... or +...)")]
    BadField(String),
    /// A piece list item that is not a square number or range.
    #[error("'{0}' is not a square or range (expected e.g. 31, K45 or 31-35)")]
    BadSquare(String),
    /// A square number outside 1-50.
    #[error("square {0} is off the board (1-50)")]
    OffBoard(u32),
    /// A square listed twice.
    #[error("square {0} is given twice")]
    SquareTwice(u32),
    /// A man on its own promotion row.
    #[error("a {side} man cannot stand on {square} (its promotion row)", side = .0.name(), square = .1)]
    ManOnFarRow(Side, u32),
    /// A field given twice.
    #[error("field '{0}' is given twice")]
    FieldTwice(String),
    /// A required piece field is missing.
    #[error("no piece field for {0}")]
    MissingSide(Side),
    /// A counter field that does not parse.
    #[error("malformed counter field '{field}': {expected}")]
    BadCounter {
        /// The field text.
        field: String,
        /// What was expected.
        expected: &'static str,
    },
    /// Text after the end of the FEN.
    #[error("unexpected trailing text '{0}'")]
    TrailingJunk(String),
    /// The FEN parses but is not a legal position.
    #[error("{0}")]
    Position(#[from] PositionError),
}

/// A FEN error: what is wrong and where (1-based character column in the input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid FEN at column {column}: {kind}")]
pub struct FenError {
    /// 1-based character column in the text as given.
    pub column: usize,
    /// What is wrong.
    pub kind: FenErrorKind,
}

/// Parse a FEN (with optional counter extension) into a position.
///
/// ```
/// use frisian_tb::{fen, RuleSet};
/// let p = fen::parse("W:W31-50:B1-20", RuleSet::Official).unwrap();
/// assert_eq!(fen::write(&p), fen::write(&frisian_tb::Position::initial(RuleSet::Official)));
/// let err = fen::parse("W:W31,51:B1", RuleSet::Official).unwrap_err();
/// assert_eq!(err.to_string(), "invalid FEN at column 7: square 51 is off the board (1-50)");
/// ```
pub fn parse(text: &str, rules: RuleSet) -> Result<Position, FenError> {
    let (setup, columns) = parse_located(text)?;
    Position::from_setup(&setup, rules).map_err(|e| FenError {
        column: columns.of(&e),
        kind: e.into(),
    })
}

/// Parse a FEN into a [`Setup`], without checking counters against the material.
pub fn parse_setup(text: &str) -> Result<Setup, FenError> {
    parse_located(text).map(|(setup, _)| setup)
}

/// Where the counter fields of a FEN are (1-based columns), so that an error
/// found when the setup is checked points at the field it is about.
#[derive(Default)]
struct Columns {
    /// Each side's three-move state (a `T` field, or the lidraughts tail).
    three: [Option<usize>; 2],
    seven: Option<usize>,
    plies: Option<usize>,
}

impl Columns {
    /// The column of the field that position error `e` is about (1 for
    /// errors about the pieces, which may involve several fields).
    fn of(&self, e: &PositionError) -> usize {
        let column = match e {
            PositionError::ThreeMoveCount { side, .. }
            | PositionError::ThreeMoveNoKing { side, .. } => self.three[side.index()],
            PositionError::SevenMove { .. } => self.seven,
            PositionError::Plies(..) => self.plies,
            _ => None,
        };
        column.unwrap_or(1)
    }
}

/// [`parse_setup`], with the columns of the counter fields.
fn parse_located(text: &str) -> Result<(Setup, Columns), FenError> {
    // Each character with its column, for error messages; whitespace around
    // tokens is tolerated, inside a token it is not.
    let chars: Vec<(usize, char)> = text.chars().enumerate().map(|(i, c)| (i + 1, c)).collect();
    // A PDN tag as copied from a game file, `[FEN "..."]`, gives its value.
    let chars: &[(usize, char)] = match trim(&chars) {
        [(_, '['), (_, f), (_, e), (_, n), inner @ .., (_, ']')]
            if f.eq_ignore_ascii_case(&'F')
                && e.eq_ignore_ascii_case(&'E')
                && n.eq_ignore_ascii_case(&'N')
                && inner.first().is_some_and(|c| c.1.is_whitespace()) =>
        {
            trim(inner)
        }
        all => all,
    };
    let chars: &[(usize, char)] = match chars {
        [(_, '"'), inner @ .., (_, '"')] => inner,
        all => all,
    };
    let end_column = text.chars().count() + 1;
    if chars.is_empty() {
        return Err(FenError {
            column: 1,
            kind: FenErrorKind::Empty,
        });
    }
    // Split into fields at ':'.
    let mut fields: Vec<&[(usize, char)]> = Vec::new();
    let mut start = 0;
    for (i, &(_, c)) in chars.iter().enumerate() {
        if c == ':' {
            fields.push(token(&chars[start..i])?);
            start = i + 1;
        }
    }
    fields.push(token(&chars[start..])?);

    let col_of = |f: &[(usize, char)]| f.first().map(|&(c, _)| c).unwrap_or(end_column);
    let err = |column: usize, kind: FenErrorKind| FenError { column, kind };
    let text_of = |f: &[(usize, char)]| f.iter().map(|&(_, c)| c).collect::<String>();

    let mut setup = Setup::default();
    let side_field = fields[0];
    if fields.len() == 1 && side_field.len() > 1 {
        return Err(err(
            col_of(side_field),
            FenErrorKind::BadSide(text_of(side_field)),
        ));
    }
    setup.turn = Some(match text_of(side_field).as_str() {
        "W" | "w" => Side::White,
        "B" | "b" => Side::Black,
        other => {
            return Err(err(
                col_of(side_field),
                FenErrorKind::BadSide(other.to_string()),
            ))
        }
    });

    let mut columns = Columns::default();
    let mut seen_sides = [false; 2];
    let mut seen_ext: Vec<String> = Vec::new();
    let mut occupied: Vec<u32> = Vec::new();
    for field in &fields[1..] {
        let column = col_of(field);
        let Some(&(_, head)) = field.first() else {
            return Err(err(column, FenErrorKind::BadField(String::new())));
        };
        let body = &field[1..];
        match head.to_ascii_uppercase() {
            'W' | 'B' => {
                let side = if head.eq_ignore_ascii_case(&'W') {
                    Side::White
                } else {
                    Side::Black
                };
                if seen_sides[side.index()] {
                    return Err(err(
                        column,
                        FenErrorKind::FieldTwice(side.letter().to_string()),
                    ));
                }
                seen_sides[side.index()] = true;
                parse_pieces(body, side, &mut setup, &mut occupied, end_column)?;
            }
            h @ ('T' | 'S' | 'H' | 'F' | '+') => {
                let key = match h {
                    'T' => format!(
                        "T{}",
                        body.first()
                            .map(|c| c.1.to_ascii_uppercase())
                            .unwrap_or('?')
                    ),
                    _ => h.to_string(),
                };
                // The lidraughts tail sets both three-move states, so it excludes T fields.
                let clash = seen_ext.contains(&key)
                    || (h == '+' && seen_ext.iter().any(|k| k.starts_with('T')))
                    || (h == 'T' && seen_ext.iter().any(|k| k == "+"));
                if clash {
                    return Err(err(column, FenErrorKind::FieldTwice(key)));
                }
                seen_ext.push(key);
                parse_counter(h, field, &mut setup).map_err(|kind| err(column, kind))?;
                match h {
                    'T' => {
                        let white = body.first().is_some_and(|c| c.1.eq_ignore_ascii_case(&'W'));
                        columns.three[if white { 0 } else { 1 }] = Some(column);
                    }
                    '+' => columns.three = [Some(column); 2],
                    'S' => columns.seven = Some(column),
                    'H' => columns.plies = Some(column),
                    _ => {}
                }
            }
            _ => return Err(err(column, FenErrorKind::BadField(text_of(field)))),
        }
    }
    for side in Side::BOTH {
        if !seen_sides[side.index()] {
            return Err(err(end_column, FenErrorKind::MissingSide(side)));
        }
    }
    Ok((setup, columns))
}

type Chars<'a> = &'a [(usize, char)];

fn trim(t: Chars<'_>) -> Chars<'_> {
    let a = t
        .iter()
        .position(|c| !c.1.is_whitespace())
        .unwrap_or(t.len());
    let b = t
        .iter()
        .rposition(|c| !c.1.is_whitespace())
        .map_or(a, |i| i + 1);
    &t[a..b.max(a)]
}

/// A trimmed token; whitespace inside it means something follows that should not.
fn token(t: Chars<'_>) -> Result<Chars<'_>, FenError> {
    let t = trim(t);
    match t.iter().position(|c| c.1.is_whitespace()) {
        None => Ok(t),
        Some(i) => {
            let rest = trim(&t[i..]);
            Err(FenError {
                column: rest[0].0,
                kind: FenErrorKind::TrailingJunk(rest.iter().map(|c| c.1).collect()),
            })
        }
    }
}

fn parse_pieces(
    body: &[(usize, char)],
    side: Side,
    setup: &mut Setup,
    occupied: &mut Vec<u32>,
    end_column: usize,
) -> Result<(), FenError> {
    if body.is_empty() {
        return Ok(());
    }
    let mut items: Vec<&[(usize, char)]> = Vec::new();
    let mut start = 0;
    for (i, &(_, c)) in body.iter().enumerate() {
        if c == ',' {
            items.push(token(&body[start..i])?);
            start = i + 1;
        }
    }
    items.push(token(&body[start..])?);
    for item in items {
        let column = item.first().map(|&(c, _)| c).unwrap_or(end_column);
        let text: String = item.iter().map(|&(_, c)| c).collect();
        let bad = || FenError {
            column,
            kind: FenErrorKind::BadSquare(text.clone()),
        };
        let (king, rest) = match text.strip_prefix(['K', 'k']) {
            Some(r) => (true, r),
            None => (false, text.as_str()),
        };
        let (lo, hi) = match rest.split_once('-') {
            Some((a, b)) => (
                a.parse::<u32>().map_err(|_| bad())?,
                b.parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let n = rest.parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        // A range may be written either way round.
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        for n in lo..=hi {
            let Some(sq) = Square::new(n) else {
                return Err(FenError {
                    column,
                    kind: FenErrorKind::OffBoard(n),
                });
            };
            if occupied.contains(&n) {
                return Err(FenError {
                    column,
                    kind: FenErrorKind::SquareTwice(n),
                });
            }
            occupied.push(n);
            if king {
                setup.kings[side.index()] = setup.kings[side.index()].with(sq);
            } else {
                if Bitboard::promotion_row(side).contains(sq) {
                    return Err(FenError {
                        column,
                        kind: FenErrorKind::ManOnFarRow(side, n),
                    });
                }
                setup.men[side.index()] = setup.men[side.index()].with(sq);
            }
        }
    }
    Ok(())
}

fn parse_counter(
    head: char,
    field: &[(usize, char)],
    setup: &mut Setup,
) -> Result<(), FenErrorKind> {
    let text: String = field.iter().map(|&(_, c)| c).collect();
    let bad = |expected| FenErrorKind::BadCounter {
        field: text.clone(),
        expected,
    };
    let side_of = |c: char| match c {
        'W' | 'w' => Some(Side::White),
        'B' | 'b' => Some(Side::Black),
        _ => None,
    };
    let number = |s: &str| -> Option<u32> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    match head {
        'T' => {
            const EXPECTED: &str = "expected T<side><square>/<count>, e.g. TW45/2";
            let mut cs = text[1..].chars();
            let side = cs.next().and_then(side_of).ok_or_else(|| bad(EXPECTED))?;
            let rest: String = cs.collect();
            let (sq, count) = rest.split_once('/').ok_or_else(|| bad(EXPECTED))?;
            let square = number(sq)
                .and_then(Square::new)
                .ok_or_else(|| bad(EXPECTED))?;
            let count = number(count)
                .filter(|c| (1..=3).contains(c))
                .ok_or_else(|| bad("the count must be 1, 2 or 3"))?;
            setup.three_move[side.index()] = Some(KingCount {
                square,
                count: count as u8,
            });
        }
        'S' => {
            const EXPECTED: &str = "expected S<side><moves>, moves 0-7, e.g. SW5";
            let mut cs = text[1..].chars().peekable();
            let side = cs.peek().copied().and_then(side_of);
            if side.is_some() {
                cs.next();
            }
            let rest: String = cs.collect();
            let moves = number(&rest)
                .filter(|&m| m <= 7)
                .ok_or_else(|| bad(EXPECTED))?;
            // Without a side letter the two-king side is meant; it is resolved
            // against the material by `Position::from_setup`.
            let strong = match side {
                Some(s) => s,
                None => {
                    let counts = [0, 1].map(|i| (setup.men[i] | setup.kings[i]).count());
                    if counts[1] > counts[0] {
                        Side::Black
                    } else {
                        Side::White
                    }
                }
            };
            setup.seven_move = Some(SevenMove {
                strong,
                moves: moves as u8,
            });
        }
        'H' => {
            let plies = number(&text[1..])
                .filter(|&p| p <= 255)
                .ok_or_else(|| bad("expected H<plies>, e.g. H3"))?;
            setup.plies = plies as u8;
        }
        'F' => {
            number(&text[1..]).ok_or_else(|| bad("expected F<move number>, e.g. F12"))?;
        }
        '+' => {
            const EXPECTED: &str =
                "expected +<count>[<square>]+<count>[<square>], Black first, e.g. +0+236";
            let parts: Vec<&str> = text[1..].split('+').collect();
            if parts.len() != 2 {
                return Err(bad(EXPECTED));
            }
            for (part, side) in parts.iter().zip([Side::Black, Side::White]) {
                let digits = number(part).map(|_| *part).ok_or_else(|| bad(EXPECTED))?;
                let count = digits[..1].parse::<u8>().unwrap();
                let state = match (count, digits.len()) {
                    (0, 1) => None,
                    (1..=3, 2 | 3) => {
                        let square = number(&digits[1..])
                            .and_then(Square::new)
                            .ok_or_else(|| bad(EXPECTED))?;
                        Some(KingCount { square, count })
                    }
                    _ => return Err(bad(EXPECTED)),
                };
                setup.three_move[side.index()] = state;
            }
        }
        _ => unreachable!("only counter heads are passed"),
    }
    Ok(())
}

/// Write a position as FEN, with extension fields for any running counter.
///
/// ```
/// use frisian_tb::{fen, RuleSet};
/// let text = "W:WK45,31:B7:TW45/2";
/// let p = fen::parse(text, RuleSet::Official).unwrap();
/// assert_eq!(fen::write(&p), "W:W31,K45:B7:TW45/2");
/// ```
pub fn write(pos: &Position) -> String {
    let mut s = String::new();
    s.push(pos.turn().letter());
    for side in Side::BOTH {
        s.push(':');
        s.push(side.letter());
        let list: Vec<String> = pos
            .pieces(side)
            .squares()
            .map(|sq| {
                if pos.kings(side).contains(sq) {
                    format!("K{sq}")
                } else {
                    sq.to_string()
                }
            })
            .collect();
        s.push_str(&list.join(","));
    }
    for side in Side::BOTH {
        if let Some(kc) = pos.three_move(side) {
            let _ = write!(s, ":T{}{}/{}", side.letter(), kc.square, kc.count);
        }
    }
    if let Some(sm) = pos.seven_move() {
        // In two kings against one a count of 0 is what a bare FEN means.
        if sm.moves > 0 || pos.one_king_each() {
            let _ = write!(s, ":S{}{}", sm.strong.letter(), sm.moves);
        }
    }
    if pos.plies() > 0 {
        let _ = write!(s, ":H{}", pos.plies());
    }
    s
}
