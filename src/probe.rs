//! Probing: the value of a position and of each of its moves, from table files.
//!
//! ```no_run
//! use frisian_tb::{fen, probe::Tablebase, RuleSet, Wdl};
//! let mut tb = Tablebase::new(RuleSet::Official);
//! tb.add_directory("tables")?;
//! let pos = fen::parse("W:WK18,15:BK46", RuleSet::Official)?;
//! assert_eq!(tb.probe_wdl(&pos)?, Wdl::Draw); // the long diagonal holds (rulebook 2j-II)
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`Tablebase`] registers files by name and opens each on first use (several
//! directories form a search path, see [`Tablebase::add_directory`]); it is
//! `Send + Sync`, so engines can probe from many threads. A probe decodes at
//! most one block, into a per-thread cache that is reused, so a warm probe does
//! not allocate. Positions with a capture on the board are in the tables like
//! any other; finished games are answered by adjudication without a table.

use crate::index::MaterialIndex;
use crate::material::Material;
use crate::moves::Move;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl};
use crate::table::{Metric, TableError, TableFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why a probe failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    /// No table for this material was registered.
    #[error("no {metric} table for {material} ({rules}) in the table directories; generate it with: frisian-tb generate --material {material} --rules {rules}", metric = .metric.extension())]
    MissingTable {
        /// The material.
        material: Material,
        /// WDL or DTW.
        metric: Metric,
        /// Rule set.
        rules: RuleSet,
    },
    /// More pieces than any registered table holds.
    #[error("the position has {pieces} pieces; the tables hold at most {max}")]
    TooManyPieces {
        /// Pieces in the position.
        pieces: u32,
        /// Most pieces in a registered table.
        max: u32,
    },
    /// The position is played by another rule set than the tables.
    #[error("the position is played by the {position} rules, the tables by the {tables} rules")]
    WrongRules {
        /// The position's rule set.
        position: RuleSet,
        /// The tables' rule set.
        tables: RuleSet,
    },
    /// A table file is unreadable, corrupt, or not what its name says.
    #[error("{0}")]
    Table(Arc<TableError>),
}

/// The value of a position for the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProbeValue {
    /// Win, draw or loss for the side to move.
    pub wdl: Wdl,
    /// Plies to the end of the game with best play; `None` for a draw.
    pub dtw: Option<u32>,
}

/// A legal move with the value it leads to, for the side that plays it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The move.
    pub mv: Move,
    /// Result for the side playing the move.
    pub wdl: Wdl,
    /// Plies to the end of the game from the position before the move,
    /// if this move is played and then best play follows; `None` for a draw.
    pub dtw: Option<u32>,
}

struct Slot {
    path: PathBuf,
    file: OnceLock<Result<TableFile, Arc<TableError>>>,
}

/// A set of tables for one rule set, opened lazily.
pub struct Tablebase {
    rules: RuleSet,
    slots: HashMap<(Material, Metric), Slot>,
    indexes: HashMap<Material, MaterialIndex>,
    max_pieces: u32,
    /// Files named like tables that were left out, and why.
    skipped: Vec<(PathBuf, String)>,
}

impl Tablebase {
    /// An empty tablebase for `rules`.
    pub fn new(rules: RuleSet) -> Tablebase {
        Tablebase {
            rules,
            slots: HashMap::new(),
            indexes: HashMap::new(),
            max_pieces: 0,
            skipped: Vec::new(),
        }
    }

    /// The rule set.
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// Register every table of this rule set in `dir` (by file name; nothing is
    /// opened yet). Returns how many table files of the rule set `dir` holds.
    ///
    /// Directories form a search path: a table already registered from a
    /// directory added earlier keeps that file, so the first directory that
    /// holds a table is the one read (as with a shell's `PATH`).
    pub fn add_directory(&mut self, dir: impl AsRef<Path>) -> std::io::Result<usize> {
        let mut added = 0;
        for entry in std::fs::read_dir(dir.as_ref())? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let parts: Vec<&str> = name.split('.').collect();
            let [material, rules, metric] = parts.as_slice() else {
                continue;
            };
            let (Ok(material), Ok(rules)) =
                (material.parse::<Material>(), rules.parse::<RuleSet>())
            else {
                continue;
            };
            let metric = match *metric {
                "wdl" => Metric::Wdl,
                "dtw" => Metric::Dtw,
                _ => continue,
            };
            if rules != self.rules {
                continue;
            }
            // A file named like a table of a material no table is made for
            // is left out, and said so, rather than indexed.
            let index = match self.indexes.get(&material) {
                Some(_) => None,
                None => match MaterialIndex::try_new(material, rules) {
                    Ok(ix) => Some(ix),
                    Err(e) => {
                        self.skipped.push((path, e.to_string()));
                        continue;
                    }
                },
            };
            if let Some(ix) = index {
                self.indexes.insert(material, ix);
            }
            self.slots.entry((material, metric)).or_insert(Slot {
                path,
                file: OnceLock::new(),
            });
            self.max_pieces = self.max_pieces.max(material.pieces());
            added += 1;
        }
        Ok(added)
    }

    /// Files that [`Tablebase::add_directory`] found named like tables of
    /// this rule set but left out, with the reason (a material no table is
    /// made for).
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.skipped
    }

    /// The most pieces in any registered table.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// The registered materials, sorted.
    pub fn materials(&self) -> Vec<Material> {
        let mut v: Vec<Material> = self.indexes.keys().copied().collect();
        v.sort();
        v
    }

    fn table(&self, material: Material, metric: Metric) -> Result<&TableFile, ProbeError> {
        let slot = self
            .slots
            .get(&(material, metric))
            .ok_or(ProbeError::MissingTable {
                material,
                metric,
                rules: self.rules,
            })?;
        slot.file
            .get_or_init(|| {
                TableFile::open_expecting(&slot.path, material, self.rules, metric)
                    .map_err(Arc::new)
            })
            .as_ref()
            .map_err(|e| ProbeError::Table(e.clone()))
    }

    /// The stored value of `pos` in its `metric` table, with the table (whose
    /// header says how to read it), or the outcome if the game is over.
    fn lookup(
        &self,
        pos: &Position,
        metric: Metric,
    ) -> Result<Result<(u16, &TableFile), crate::adjudication::Outcome>, ProbeError> {
        if pos.rules() != self.rules {
            return Err(ProbeError::WrongRules {
                position: pos.rules(),
                tables: self.rules,
            });
        }
        if let Some(o) = pos.outcome() {
            return Ok(Err(o));
        }
        let material = Material::of(pos);
        if material.pieces() > self.max_pieces {
            return Err(ProbeError::TooManyPieces {
                pieces: material.pieces(),
                max: self.max_pieces,
            });
        }
        let table = self.table(material, metric)?;
        let ix = &self.indexes[&material];
        table
            .get(ix.index(pos))
            .map(|v| Ok((v, table)))
            .map_err(|e| ProbeError::Table(Arc::new(e)))
    }

    /// Win, draw or loss for the side to move.
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        Ok(match self.lookup(pos, Metric::Wdl)? {
            Ok((0, _)) => Wdl::Loss,
            Ok((1, _)) => Wdl::Draw,
            Ok(_) => Wdl::Win,
            Err(o) => o.wdl,
        })
    }

    /// Plies to the end of the game with best play (the winner shortest, the
    /// loser longest); `None` for a draw.
    pub fn probe_dtw(&self, pos: &Position) -> Result<Option<u32>, ProbeError> {
        Ok(self.probe(pos)?.dtw)
    }

    /// Both metrics.
    pub fn probe(&self, pos: &Position) -> Result<ProbeValue, ProbeError> {
        let wdl = self.probe_wdl(pos)?;
        if wdl == Wdl::Draw {
            return Ok(ProbeValue { wdl, dtw: None });
        }
        let dtw = match self.lookup(pos, Metric::Dtw)? {
            Ok((d, table)) => table.header().dtw_plies(d, wdl) as u32,
            Err(_) => 0,
        };
        Ok(ProbeValue {
            wdl,
            dtw: Some(dtw),
        })
    }

    /// Every legal move with its value for the side playing it, best first:
    /// wins (fastest first), draws, losses (slowest first).
    pub fn probe_moves(&self, pos: &Position) -> Result<Vec<MoveValue>, ProbeError> {
        move_values_by(pos, |p| self.probe(p))
    }

    /// Every legal move with its win, draw or loss for the side playing it,
    /// best first, from the WDL tables alone (`dtw` is `None`): for a
    /// directory that holds no DTW files.
    pub fn probe_moves_wdl(&self, pos: &Position) -> Result<Vec<MoveValue>, ProbeError> {
        move_values_by(pos, |p| {
            Ok(ProbeValue {
                wdl: self.probe_wdl(p)?,
                dtw: None,
            })
        })
    }
}

/// Every legal move of `pos` with its value for the side playing it, from
/// `value` (the value of a position for its side to move), best first.
pub(crate) fn move_values_by<E>(
    pos: &Position,
    mut value: impl FnMut(&Position) -> Result<ProbeValue, E>,
) -> Result<Vec<MoveValue>, E> {
    let mut out = Vec::new();
    if pos.outcome().is_some() {
        return Ok(out);
    }
    for mv in pos.legal_moves() {
        let v = value(&pos.play(&mv))?;
        out.push(MoveValue {
            mv,
            wdl: v.wdl.flip(),
            dtw: v.dtw.map(|d| d + 1),
        });
    }
    out.sort_by_key(|m| sort_key(m.wdl, m.dtw));
    Ok(out)
}

/// Order moves best first for the side playing them.
pub(crate) fn sort_key(wdl: Wdl, dtw: Option<u32>) -> (u8, i64) {
    match wdl {
        Wdl::Win => (0, dtw.unwrap_or(0) as i64),
        Wdl::Draw => (1, 0),
        Wdl::Loss => (2, -(dtw.unwrap_or(0) as i64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablebase_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Tablebase>();
    }
}
