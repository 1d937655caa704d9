//! Independent verification of finished tables.
//!
//! For every state of every table, the stored value must equal the value
//! re-derived from its successors with the **forward** move generator (never
//! with retro-moves): a win in `1 + min` over the replies that lose, else a
//! draw if any reply draws, else a loss in `1 + max` over the replies; finished
//! games must hold their adjudicated value. File checksums and the header's
//! statistics are checked too. [`check_table_files`] makes the file checks
//! alone, quickly and without the other tables, for copied or downloaded files.

use crate::finished::Solved;
use crate::geometry::Square;
use crate::index::{MaterialIndex, PlacementCache};
use crate::material::successor_materials;
use crate::material::Material;
use crate::moves::MoveList;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl};
use crate::stats::{Counts, StreamStats, TableStats};
use crate::table::TableError;
use crate::table::{self, Metric, TableFile};
use crate::value::Value;
use rayon::prelude::*;
use std::path::Path;

/// One state whose stored value is wrong.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Mismatch {
    /// Material of the table.
    pub material: String,
    /// Index of the state.
    pub index: u64,
    /// The state as FEN.
    pub fen: String,
    /// Stored value, e.g. `win 7`.
    pub stored: String,
    /// Value re-derived from the successors.
    pub expected: String,
}

/// The outcome of verifying one table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableCheck {
    /// Material.
    pub material: String,
    /// States checked.
    pub states: u64,
    /// Problems with the files themselves (checksums, header statistics).
    pub file_errors: Vec<String>,
    /// Number of wrong values.
    pub mismatches: u64,
    /// The first wrong values.
    pub first_mismatches: Vec<Mismatch>,
    /// Statistics and checksum of the stored values, as `tables/MANIFEST` lists
    /// them (absent when the files themselves are damaged).
    pub stats: Option<TableStats>,
}

impl TableCheck {
    /// Whether everything checked out.
    pub fn ok(&self) -> bool {
        self.file_errors.is_empty() && self.mismatches == 0
    }

    /// A table whose files are damaged: their problems alone, since no value
    /// read from them can be trusted.
    fn damaged(material: Material, rules: RuleSet, file_errors: Vec<String>) -> TableCheck {
        TableCheck {
            material: material.to_string(),
            states: MaterialIndex::new(material, rules).size(),
            file_errors,
            mismatches: 0,
            first_mismatches: Vec::new(),
            stats: None,
        }
    }
}

/// The legal moves shared by the states of one placement whose three-move
/// states block the same king (the move generator reads only the pieces, the
/// side to move and the blocked king), and where each move's successor
/// placement lies.
#[derive(Default)]
struct PlacementMoves {
    blocked: Option<Square>,
    moves: MoveList,
    /// Per move: the table number of its successor and the index there of the
    /// successor's placement with every counter 0, or `None` where the side to
    /// move there has no piece left (no table holds it: a loss, over).
    targets: Vec<Option<(u32, u64)>>,
}

impl PlacementMoves {
    /// The moves of `pos`; where their successors' placements lie is found
    /// by the first [`derive`] that plays them.
    fn fill(&mut self, pos: &Position) {
        self.blocked = pos.blocked_king();
        pos.generate_moves(&mut self.moves);
        self.targets.clear();
    }
}

/// The value of `pos` from its successors' values; `pm` holds its legal
/// moves (and where their successors' placements lie, once a state of the
/// placement has been derived with them). `reads` is scratch space.
///
/// Each successor is played (so its counters are the rules engine's), and its
/// index is its placement's, found once for all the states of the placement
/// (counters never move a piece), plus its own counters' offset. All of a
/// state's successors are located first and their values asked for, then
/// read: they lie anywhere in tables of hundreds of megabytes, and reading
/// each as soon as it was located waited on memory every time.
fn derive(
    pos: &Position,
    values: &Solved,
    pm: &mut PlacementMoves,
    cache: &mut PlacementCache,
    reads: &mut Vec<Option<(u32, u64)>>,
) -> Value {
    if let Some(o) = pos.outcome_with(!pm.moves.is_empty()) {
        return Value { wdl: o.wdl, dtw: 0 };
    }
    reads.clear();
    let located = pm.targets.len() == pm.moves.len();
    for (k, mv) in pm.moves.iter().enumerate() {
        let next = pos.play(mv);
        if !located {
            pm.targets.push(
                (!next.pieces(next.turn()).is_empty())
                    .then(|| values.locate_placement(&next, cache)),
            );
        }
        // A successor whose side to move has no piece left has no table; every
        // other finished game is stored with its adjudicated value, which the
        // verification of its own table checks against `outcome` (so asking
        // for the outcome here, a move generation per successor, would check
        // nothing more: it was a tenth of the time).
        reads.push(pm.targets[k].map(|(t, base)| {
            debug_assert_eq!(
                (t, base),
                values.locate_placement(&next, &mut PlacementCache::new())
            );
            let i = base + values.counters_offset(t, &next);
            values.prefetch(t, i);
            (t, i)
        }));
    }
    let (mut win, mut draw, mut longest) = (None::<u16>, false, 0u16);
    for &read in reads.iter() {
        let v = match read {
            Some((t, i)) => values.at(t, i),
            None => Value {
                wdl: Wdl::Loss,
                dtw: 0,
            },
        };
        match v.wdl {
            Wdl::Loss => win = Some(win.map_or(v.dtw + 1, |w| w.min(v.dtw + 1))),
            Wdl::Draw => draw = true,
            Wdl::Win => longest = longest.max(v.dtw),
        }
    }
    match (win, draw) {
        (Some(d), _) => Value {
            wdl: Wdl::Win,
            dtw: d,
        },
        (None, true) => Value {
            wdl: Wdl::Draw,
            dtw: 0,
        },
        (None, false) => Value {
            wdl: Wdl::Loss,
            dtw: longest + 1,
        },
    }
}

fn show(v: Value) -> String {
    match v.wdl {
        Wdl::Draw => "draw".into(),
        w => format!("{w} {}", v.dtw),
    }
}

/// Verify the table of `material` in `dir`, keeping at most `keep` mismatches.
pub fn verify_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    keep: usize,
) -> Result<TableCheck, TableError> {
    verify_table_with_progress(dir, material, rules, keep, &|_| {})
}

/// The tables whose decoded values verifying `material` holds in memory: its
/// colour flip (ordinary moves lead there) and the tables captures and
/// promotions lead to, each once.
fn needed_materials(material: Material) -> Vec<Material> {
    let mut needed = vec![material.flip()];
    for m in successor_materials(material) {
        if !needed.contains(&m) {
            needed.push(m);
        }
    }
    needed
}

/// Estimated peak memory, in bytes, of verifying `material`: a byte per state
/// of every table that `needed_materials` lists (as [`Solved`] holds them; two
/// for a table with a DTW over 252 plies, which no table up to five pieces
/// has), one group of the table's own values, and a margin of an eighth for the
/// mapped table files (their pages count as resident while they are read),
/// the per-thread move lists, caches and allocator slack. On the largest
/// lidraughts five-piece tables it is 2.5-4% above the measured peaks (up
/// to 4.9 GB, KMMvKM).
pub fn memory_estimate(material: Material, rules: RuleSet) -> u64 {
    let states: u64 = needed_materials(material)
        .iter()
        .map(|&m| MaterialIndex::new(m, rules).size())
        .sum();
    let values = states;
    // The table's own values are read a group of blocks at a time (4 Mi
    // states as the writer lays them out), so its size adds nothing: one
    // group packed (2 bytes a state) and its blocks as decoded (1.25-2.25).
    let group = (4 << 20) * 6;
    values + values / 8 + group + (64 << 20)
}

/// Re-derive the values of the states `step..` of `ix` and compare them with
/// `stored` (packed, [`Value::pack`]), in parallel: the number of wrong
/// values and the first `keep` of them, per chunk of states.
fn check_states(
    ix: &MaterialIndex,
    values: &Solved,
    step: u64,
    stored: &[u16],
    keep: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<(u64, Vec<Mismatch>)> {
    const CHUNK: u64 = 1 << 14;
    let per = ix.counters_per_placement();
    stored
        .par_chunks(CHUNK as usize)
        .enumerate()
        .map(|(c, chunk)| {
            let (mut n, mut first) = (0, Vec::new());
            // The moves of the current placement, by blocked king (`used` of
            // them filled; the others' buffers are kept for reuse).
            let mut lists: Vec<PlacementMoves> = Vec::new();
            let mut used = 0;
            let mut reads = Vec::new();
            let mut cache = PlacementCache::new();
            let mut placement = u64::MAX;
            let mut pos = ix.placement_position(0);
            for (k, &have) in chunk.iter().enumerate() {
                let i = step + c as u64 * CHUNK + k as u64;
                if i / per != placement {
                    placement = i / per;
                    pos = ix.placement_position(placement);
                    used = 0;
                }
                ix.set_counters(&mut pos, i % per);
                let blocked = pos.blocked_king();
                let list = match lists[..used].iter().position(|l| l.blocked == blocked) {
                    Some(l) => l,
                    None => {
                        if used == lists.len() {
                            lists.push(PlacementMoves::default());
                        }
                        lists[used].fill(&pos);
                        used += 1;
                        used - 1
                    }
                };
                let want = derive(&pos, values, &mut lists[list], &mut cache, &mut reads);
                if want.pack() != have {
                    n += 1;
                    if first.len() < keep {
                        first.push(Mismatch {
                            material: ix.material().to_string(),
                            index: i,
                            fen: crate::fen::write(&pos),
                            stored: Value::unpack(have).map_or_else(|| "no value".into(), show),
                            expected: show(want),
                        });
                    }
                }
            }
            progress(chunk.len() as u64);
            (n, first)
        })
        .collect()
}

/// [`verify_table`], reporting the number of states checked as it goes.
///
/// Memory: the decoded values (a byte per state, see [`Solved`]) of the colour
/// flip, which the ordinary moves lead to, and of the tables captures and
/// promotions lead to.
pub fn verify_table_with_progress(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    keep: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<TableCheck, TableError> {
    check_table(dir, material, rules, Some(keep), progress)
}

/// The checks of [`verify_table`] on the files alone, without re-deriving
/// any value: header, body checksum, every block decoded (with zstd's content
/// checksums and the values checksum), the header's statistics against the
/// values, and the statistics and manifest checksum of the values (compare
/// them with a published manifest to know the values are those). It needs no
/// other table and little memory, and takes minutes where [`verify_table`]
/// takes most of an hour for the five-piece tables; it finds damage, not a
/// wrong generator.
pub fn check_table_files(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<TableCheck, TableError> {
    check_table(dir, material, rules, None, progress)
}

/// [`verify_table_with_progress`] if `keep` (mismatches kept) is given,
/// else [`check_table_files`].
fn check_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    keep: Option<usize>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<TableCheck, TableError> {
    let mut file_errors = Vec::new();
    let mut files = Vec::new();
    for metric in [Metric::Wdl, Metric::Dtw] {
        let path = dir.join(table::file_name(material, rules, metric));
        if !path.exists() {
            return Err(TableError::Missing {
                file: table::file_name(material, rules, metric),
            });
        }
        // A file that does not even open (cut short, a damaged header or
        // block index) fails the check like one whose body is damaged.
        let f = match TableFile::open_expecting(&path, material, rules, metric) {
            Ok(f) => f,
            Err(e) => {
                file_errors.push(e.to_string());
                continue;
            }
        };
        if let Err(e) = f.check_body() {
            file_errors.push(e.to_string());
        }
        files.push(f);
    }
    if !file_errors.is_empty() {
        // The values themselves cannot be trusted; report the file problems alone.
        return Ok(TableCheck::damaged(material, rules, file_errors));
    }
    // The full check reads other tables and takes long: damaged blocks are
    // found first, before any of that. The check of the files alone decodes
    // each block once, in the pass below, which compares the values
    // checksums at its end.
    if keep.is_some() {
        for f in &files {
            if let Err(e) = f.check_blocks() {
                file_errors.push(e.to_string());
            }
        }
        if !file_errors.is_empty() {
            return Ok(TableCheck::damaged(material, rules, file_errors));
        }
    }
    let values = match keep {
        Some(_) => Some(Solved::load(dir, rules, &needed_materials(material))?),
        None => None,
    };
    let ix = MaterialIndex::new(material, rules);
    let size = ix.size();
    let header = files[0].header().clone();
    let dtw_header = files[1].header().clone();

    let (mut mismatches, mut first_mismatches) = (0u64, Vec::new());
    let mut stats = StreamStats::default();
    let mut step = 0;
    // One group of blocks at a time (4 Mi states as the writer lays them
    // out), every part of the work in parallel. The values come packed
    // (`Value::pack`), as the manifest checksum reads them.
    let read = files[0].for_each_group_with_dtw(
        &files[1],
        |w, d| Value::stored(w, d, &dtw_header).pack(),
        |stored: &[u16]| {
            let ((), found): ((), Vec<(u64, Vec<Mismatch>)>) = rayon::join(
                || stats.add(stored),
                || match (&values, keep) {
                    (Some(values), Some(keep)) => {
                        check_states(&ix, values, step, stored, keep, progress)
                    }
                    _ => {
                        progress(stored.len() as u64);
                        Vec::new()
                    }
                },
            );
            for (n, first) in found {
                mismatches += n;
                let keep = keep.unwrap_or(0);
                let room = keep - first_mismatches.len().min(keep);
                first_mismatches.extend(first.into_iter().take(room));
            }
            step += stored.len() as u64;
        },
    );
    if let Err(e) = read {
        // A block that does not decode, or values that do not match their
        // checksum: nothing read from the file can be trusted.
        return Ok(TableCheck::damaged(material, rules, vec![e.to_string()]));
    }
    // Header statistics must match the values.
    let Counts {
        wins: w,
        draws: d,
        losses: l,
        longest_win: longest,
    } = stats.counts();
    if (header.wins, header.draws, header.losses, header.longest_win) != (w, d, l, longest) {
        file_errors.push(format!(
            "header statistics (win {} draw {} loss {} longest {}) differ from the values (win {w} draw {d} loss {l} longest {longest})",
            header.wins, header.draws, header.losses, header.longest_win
        ));
    }
    Ok(TableCheck {
        material: material.to_string(),
        states: size,
        file_errors,
        mismatches,
        first_mismatches,
        stats: Some(stats.finish(material, rules, size)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate covers the flip and the promotion table, and stays close to
    /// the peaks measured with `/usr/bin/time` (a byte per decoded state,
    /// the table's own values a group of blocks at a time).
    #[test]
    fn memory_estimate_is_just_above_the_measured_peaks() {
        for (name, peak_kib) in [
            ("KMMvKM", 4_773_760u64),
            ("KMvKKM", 3_651_832),
            ("KMvKMM", 1_992_924),
        ] {
            let m: Material = name.parse().unwrap();
            let peak = peak_kib * 1024;
            let est = memory_estimate(m, RuleSet::Lidraughts);
            assert!(
                est > peak && est < peak + peak / 10,
                "{name}: {est} against {peak}"
            );
        }
        // KMMvKM: its flip KMvKMM and, for promotions, KMvKKM (KKMvKM with Black to move).
        let needed = needed_materials("KMMvKM".parse().unwrap());
        assert!(
            needed.contains(&"KMvKMM".parse().unwrap())
                && needed.contains(&"KMvKKM".parse().unwrap())
        );
    }
}
