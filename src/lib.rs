//! # frisian-tb
//!
//! Rules engine, endgame tablebase generator and prober for **Frisian
//! draughts**: international draughts (10x10, squares 1-50) in which every
//! piece also captures along rows and columns, captures follow a weighted
//! majority rule, and king play is limited by the three-move and seven-move
//! rules. The rules implemented are those of `docs/RULES.md`, in two rule sets:
//! [`RuleSet::Official`] (FMJD) and [`RuleSet::Lidraughts`] (the servers).
//!
//! ```
//! use frisian_tb::{fen, RuleSet};
//!
//! // The rulebook's example (2d-III): after 32-27 20-24 33-29 24x33 White has four captures.
//! let mut pos = fen::parse("W:W31-50:B1-20", RuleSet::Official).unwrap();
//! for text in ["32-27", "20-24", "33-29", "24x33"] {
//!     let m = frisian_tb::moves::parse_move(text, &pos.legal_moves()).unwrap();
//!     pos = pos.play(&m);
//! }
//! let mut moves: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
//! moves.sort();
//! assert_eq!(moves, ["34x32", "38x29", "39x28", "43x23"]);
//! ```
//!
//! ## Modules
//! The rules engine: squares, bitboards, pieces, rule sets and counters,
//! positions, move generation and adjudication live in private modules whose
//! types are re-exported here ([`Position`], [`Move`], [`RuleSet`],
//! [`Outcome`], ...); [`moves`] (the move type and PDN notation), [`fen`]
//! and [`perft`] are public.
//!
//! Tables:
//! - [`material`]: material names, build order, and what a material leads to.
//! - [`index`]: the bijection between a material's states and table positions.
//! - [`table`]: the table file format; [`checksum`]: XXH64 and the manifest
//!   checksum of decoded values; [`stats`]: a table's statistics;
//!   [`manifest`]: the manifest of tables.
//! - [`finished`]: finished tables decoded whole, for lookups while
//!   generating and verifying.
//! - [`probe`]: the tablebase prober ([`Tablebase`]); [`capi`]: its C
//!   interface (`include/frisian_tb.h`).
//!
//! Using them:
//! - [`study`]: checking studies (soundness, duals, cooks) and explaining draws.
//! - [`pdn`]: reading PDN files of games and studies.
//! - [`diagram`]: SVG board diagrams; [`report`]: study reports as text and HTML.
//!
//! With the `generate` feature (on by default; Unix):
//! - `retro`: retro-moves, the predecessors of a position.
//! - `generate`: retrograde solving of tables.
//! - `verify`: independent verification of tables.

#![warn(missing_docs)]
// Without the generator, the parts of the index and the rules engine that
// only it uses (retro-move helpers, placement caches) go unused.
#![cfg_attr(not(feature = "generate"), allow(dead_code))]

mod adjudication;
mod bitboard;
pub mod capi;
pub mod checksum;
pub mod diagram;
pub mod fen;
pub mod finished;
#[cfg(feature = "generate")]
pub mod generate;
mod geometry;
pub mod index;
pub mod manifest;
pub mod material;
pub(crate) mod memory;
mod movegen;
pub mod moves;
pub mod pdn;
pub mod perft;
mod piece;
mod position;
pub mod probe;
pub mod report;
#[cfg(feature = "generate")]
pub mod retro;
mod rules;
pub mod stats;
pub mod study;
pub mod table;
mod value;
#[cfg(feature = "generate")]
pub mod verify;

pub use adjudication::{Ending, Outcome};
pub use bitboard::Bitboard;
pub use geometry::{Direction, Square};
pub use index::{MaterialIndex, UnsupportedMaterial};
pub use material::Material;
pub use moves::{Move, MoveError, MoveList};
pub use piece::{Piece, Role, Side};
pub use position::{Position, PositionError, Setup};
pub use probe::{ProbeError, Tablebase};
pub use rules::{KingCount, RuleSet, SevenMove, UnknownRuleSet, Wdl};
pub use stats::TableStats;
pub use value::Value;

/// The README's Rust example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
