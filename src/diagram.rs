//! Board diagrams as SVG: the 10x10 board with its playing squares numbered
//! 1-50, men and kings of both sides, and optional arrows for moves.
//!
//! ```
//! use frisian_tb::{diagram, fen, RuleSet};
//! let pos = fen::parse("W:WK18,15:BK46", RuleSet::Official).unwrap();
//! let svg = diagram::svg(&pos, &[]);
//! assert!(svg.starts_with("<svg") && svg.contains("</svg>"));
//! ```
//!
//! The output is a self-contained SVG 1.1 document (no scripts, fonts or
//! external references), so it can be embedded in HTML or converted to PNG.

use crate::geometry::Square;
use crate::moves::Move;
use crate::piece::{Role, Side};
use crate::position::Position;
use std::fmt::Write;

/// Size of one square in SVG units.
const CELL: i32 = 40;
/// Margin around the board.
const MARGIN: i32 = 8;

/// Colours used in a diagram.
const LIGHT: &str = "#f0d9b5";
const DARK: &str = "#a57a52";
const WHITE_PIECE: &str = "#fbfbf6";
const BLACK_PIECE: &str = "#262626";
const ARROW: &str = "#1f6fd1";

/// Centre of a square in SVG coordinates.
fn centre(sq: Square) -> (i32, i32) {
    (
        MARGIN + sq.col() * CELL + CELL / 2,
        MARGIN + sq.row() * CELL + CELL / 2,
    )
}

/// The SVG document for `pos`, with an arrow along the path of each move in
/// `arrows` (every capture step drawn, so multi-captures are easy to follow).
pub fn svg(pos: &Position, arrows: &[Move]) -> String {
    let size = 10 * CELL + 2 * MARGIN;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{size}" height="{size}" viewBox="0 0 {size} {size}">"#
    );
    let _ = writeln!(
        s,
        r#"<defs><marker id="arrowhead" markerWidth="6" markerHeight="6" refX="3" refY="3" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="{ARROW}"/></marker></defs>"#
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{size}" height="{size}" fill="#5b3a21"/>"##
    );
    for row in 0..10 {
        for col in 0..10 {
            let fill = if Square::from_coords(row, col).is_some() {
                DARK
            } else {
                LIGHT
            };
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="{CELL}" height="{CELL}" fill="{fill}"/>"#,
                MARGIN + col * CELL,
                MARGIN + row * CELL
            );
        }
    }
    for sq in Square::all() {
        let (x, y) = centre(sq);
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="9" fill="#f3e6d3">{}</text>"##,
            x - CELL / 2 + 2,
            y - CELL / 2 + 10,
            sq.number()
        );
    }
    for sq in Square::all() {
        let Some(piece) = pos.piece_at(sq) else {
            continue;
        };
        let (x, y) = centre(sq);
        let (fill, line) = match piece.side {
            Side::White => (WHITE_PIECE, BLACK_PIECE),
            Side::Black => (BLACK_PIECE, WHITE_PIECE),
        };
        let r = CELL * 2 / 5;
        let _ = writeln!(
            s,
            r#"<circle cx="{x}" cy="{y}" r="{r}" fill="{fill}" stroke="{BLACK_PIECE}" stroke-width="1.5"/>"#
        );
        let _ = writeln!(
            s,
            r#"<circle cx="{x}" cy="{y}" r="{}" fill="none" stroke="{line}" stroke-width="1"/>"#,
            r * 2 / 3
        );
        if piece.role == Role::King {
            // A crown: three points on a band.
            let (w, h) = (CELL / 2, CELL / 4);
            let (x0, y0) = (x - w / 2, y + h / 2);
            let _ = writeln!(
                s,
                r#"<path d="M{x0},{y0} L{},{} L{},{} L{x},{} L{},{} L{},{} L{},{y0} z" fill="{line}"/>"#,
                x0,
                y0 - h,
                x0 + w / 4,
                y0 - h / 2,
                y0 - h - 2,
                x0 + 3 * w / 4,
                y0 - h / 2,
                x0 + w,
                y0 - h,
                x0 + w,
            );
        }
    }
    for mv in arrows {
        let points: Vec<String> = mv
            .path()
            .map(|sq| {
                let (x, y) = centre(sq);
                format!("{x},{y}")
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{ARROW}" stroke-width="4" stroke-opacity="0.85" stroke-linejoin="round" marker-end="url(#arrowhead)"/>"#,
            points.join(" ")
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fen, RuleSet};

    #[test]
    fn every_square_is_numbered_and_every_piece_drawn() {
        let pos = fen::parse("W:W31,K45:B7,K12", RuleSet::Official).unwrap();
        let svg = svg(&pos, &[]);
        for n in 1..=50 {
            assert!(svg.contains(&format!(">{n}</text>")), "square {n}");
        }
        // Two circles per piece, a crown per king.
        assert_eq!(svg.matches("<circle").count(), 8);
        assert_eq!(svg.matches("<path d=\"M").count(), 2 + 1); // two crowns and the arrowhead
    }

    #[test]
    fn an_arrow_follows_the_capture_path() {
        let pos = fen::parse("W:W28:B9,18,20,29,38", RuleSet::Official).unwrap();
        let mv = pos.legal_moves()[0];
        let svg = svg(&pos, &[mv]);
        assert_eq!(svg.matches("<polyline").count(), 1);
        let path_len = mv.path().count();
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        let points = line.split('"').nth(1).unwrap();
        assert_eq!(points.split(' ').count(), path_len);
    }
}
