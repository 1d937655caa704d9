//! Solving one pair of tables (a material and its colour flip) batch by
//! batch into work files, resumably, and writing its tables.

use super::batch::{batches, Batch, Layout, BATCH_STATES};
use super::buckets::StateOrder;
use super::error::GenerateError;
use super::init::{capture_slots, initialise};
use super::kept::Kept;
use super::memory::{AtomicWords, Spare};
use super::os::{read_exact_at, will_read, write_all_at};
use super::pair_table::PairTable;
use super::progress::Progress;
use super::propagate::propagate;
use super::work::{Cell, Work};
use super::write::{write_tables_from, ByteCounts, Tally};
use crate::finished::Solved;
use crate::index::MaterialIndex;
use crate::material::Material;
use crate::memory::trim_pool;
use crate::rules::RuleSet;
use crate::stats::TableStats;
use crate::table::{self, Metric, TableError};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Stand-in for values a failed read could not deliver (a draw's byte): the
/// tables written from them are removed and the error reported.
const NOT_READ: u8 = DRAW_BYTE;

/// A draw as [`Value::to_byte`] codes it.
const DRAW_BYTE: u8 = 1;

/// The work files' layout, named in the progress marker so that a run never
/// resumes work files written in another: 2 is a byte per state.
const WORK_FORMAT: u32 = 2;

/// Solve one batch of slices into the work files; every slice its man moves
/// lead to is solved already.
fn solve_batch(
    tables: &[PairTable],
    batch: &Batch,
    solved: &Solved,
    spare: &mut Spare,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Tally>, GenerateError> {
    let layout = Layout::new(tables, batch);
    let work = Work::new(layout.total as usize, spare.cells.take())?;
    let relays = Work::new(
        (layout.parts.len() as u64 * layout.per_part) as usize,
        spare.relays.take(),
    )?;
    // 1. Initialise, in two passes. Where the side to move must capture,
    // every move leaves the batch, so the values of those placements' states
    // are final at once: the first pass solves them. The second initialises
    // the other placements and reads a king move into a capture placement
    // like a move that leaves the batch. Capture states thus never go through
    // propagation (in the KKMvKK pair they were 83% of the states it
    // finalised, and the cause of 80% of its predecessor updates).
    let captures = AtomicWords::reuse(spare.captures.take(), capture_slots(&layout), false)?;
    let run_buckets = initialise(&layout, &work, &relays, &captures, solved, progress);
    // 2. Propagate, bucket by bucket, along king moves inside each run.
    let order = StateOrder::new(layout.total, spare.order.take())?;
    propagate(&layout, &work, &relays, run_buckets, &order);
    // A distance too long for a cell (and for the work files) fails the
    // batch instead of storing a wrong value.
    if let Some(dtw) = work.too_long().max(relays.too_long()) {
        return Err(GenerateError::TooLong {
            material: tables[0].material,
            dtw,
        });
    }

    // 3. The rest are draws. Into the work files with them, counting each
    // table's values on the way (saving the writer a pass over the files).
    let tallies = write_batch(tables, batch, &layout, &work)?;
    *spare = Spare {
        cells: Some(work.into_cells()),
        relays: Some(relays.into_cells()),
        order: Some(order.bits),
        captures: Some(captures),
    };
    Ok(tallies)
}

/// A solved cell's code in the work file ([`Value::to_byte`]): an unsolved
/// cell is a draw. (Cells hold values as the work files do; [`Work`] has
/// checked that they fit.)
#[inline]
fn finished(c: &AtomicU32) -> u8 {
    match Cell(c.load(Relaxed)).value_byte() {
        0 => DRAW_BYTE,
        b => b,
    }
}

/// Slices of at least this many states are written in pieces of it, in
/// parallel; smaller ones are gathered by their place in the file.
const WRITE_CHUNK: usize = 1 << 16;

/// Bytes between two small slices of a batch that are written again with
/// what they hold, so that the two go out in one write.
const GAP_BYTES: u64 = 4096;

/// The most bytes one write of gathered small slices covers.
const GROUP_BYTES: u64 = 1 << 20;

/// Write the values of a solved batch into the work files, unsolved cells as
/// draws, and count each table's values.
///
/// Positioned writes, not stores through the map: a full disk is then an
/// error naming the work file, where a store into a shared file mapping
/// raised SIGBUS and killed the run.
fn write_batch(
    tables: &[PairTable],
    batch: &Batch,
    layout: &Layout,
    work: &Work,
) -> Result<Vec<Tally>, GenerateError> {
    let counted = if layout.len as usize >= WRITE_CHUNK {
        write_large_slices(tables, batch, layout, work)?
    } else {
        write_small_slices(tables, batch, layout, work)?
    };
    let mut tallies = vec![Tally::default(); tables.len()];
    for (t, tally) in counted {
        tallies[t] = tallies[t].merge(tally);
    }
    Ok(tallies)
}

/// The error of a failed write into table `t`'s work file.
fn write_failed(tables: &[PairTable], t: usize, source: std::io::Error) -> GenerateError {
    GenerateError::Table(TableError::Io {
        path: tables[t].path.clone(),
        source,
    })
}

/// [`write_batch`] for slices of at least [`WRITE_CHUNK`] states: every
/// piece of every slice, one table's after the other's. Rayon hands the two
/// halves of the list to the two threads, which so write into different
/// files: a positioned write holds its file's lock, and with both threads on
/// one file one of them spun on it (2.5% of the KKMvKM pair's samples while
/// it wrote). Returns the tally of each piece, by table.
fn write_large_slices(
    tables: &[PairTable],
    batch: &Batch,
    layout: &Layout,
    work: &Work,
) -> Result<Vec<(usize, Tally)>, GenerateError> {
    let (parts, len) = (&batch.parts, layout.len as usize);
    let pieces = len.div_ceil(WRITE_CHUNK);
    let mut jobs: Vec<(usize, usize)> = (0..parts.len())
        .flat_map(|i| (0..pieces).map(move |k| (i, k)))
        .collect();
    jobs.sort_by_key(|&(i, _)| parts[i].table);
    jobs.par_iter()
        .map(|&(i, k)| {
            let p = parts[i];
            let cells = &work.cells[i * len..(i + 1) * len];
            let src = &cells[k * WRITE_CHUNK..((k + 1) * WRITE_CHUNK).min(len)];
            let mut bytes = vec![0u8; src.len()];
            for (c, o) in src.iter().zip(bytes.iter_mut()) {
                *o = finished(c);
            }
            let mut counts = ByteCounts::default();
            counts.add(&bytes);
            let tally = counts.tally();
            let at = p.slice * len as u64 + (k * WRITE_CHUNK) as u64;
            write_all_at(&tables[p.table].file, &bytes, at)
                .map(|()| (p.table, tally))
                .map_err(|e| write_failed(tables, p.table, e))
        })
        .collect()
}

/// Small slices gathered by their place in a work file: a table, the bytes
/// of its file the group covers, and its slices (a range of the batch's
/// parts in file order).
struct Group {
    table: usize,
    bytes: std::ops::Range<u64>,
    parts: std::ops::Range<usize>,
}

/// [`write_batch`] for small slices (one man placement holds a single state
/// in MMMvMM), gathered by their place in the file: written one by one they
/// cost a system call per few bytes, which took 37% of that pair's time.
/// Returns the tally of each group, by table.
fn write_small_slices(
    tables: &[PairTable],
    batch: &Batch,
    layout: &Layout,
    work: &Work,
) -> Result<Vec<(usize, Tally)>, GenerateError> {
    let (parts, len) = (&batch.parts, layout.len as usize);
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_unstable_by_key(|&i| (parts[i].table, parts[i].slice));
    let bytes_of = |i: usize| {
        let start = parts[i].slice * len as u64;
        start..start + len as u64
    };
    let groups = group_slices(&order, |i| parts[i].table, bytes_of);
    groups
        .par_iter()
        .map(|group| {
            let table = &tables[group.table];
            let r = &group.bytes;
            // One pass: each part's values, and before it the gap since the
            // last as the file holds it (slices of other batches, solved or
            // not yet, which no one writes meanwhile: written back as they
            // are). Only the gaps are read from the map: a part not written
            // yet is a hole in the file, and reading it made the kernel fault
            // in and zero pages only for them to be overwritten.
            let mut bytes = Vec::with_capacity((r.end - r.start) as usize);
            let mut counts = ByteCounts::default();
            let mut at = r.start;
            for &i in &order[group.parts.clone()] {
                let part = bytes_of(i);
                bytes.extend_from_slice(&table.store[at as usize..part.start as usize]);
                let from = bytes.len();
                bytes.extend(work.cells[i * len..(i + 1) * len].iter().map(finished));
                counts.add(&bytes[from..]);
                at = part.end;
            }
            debug_assert_eq!(at, r.end);
            let tally = counts.tally();
            write_all_at(&table.file, &bytes, r.start)
                .map(|()| (group.table, tally))
                .map_err(|e| write_failed(tables, group.table, e))
        })
        .collect()
}

/// Groups of the parts `order` (in file order) that lie close together in
/// one file: at most [`GAP_BYTES`] apart, and [`GROUP_BYTES`] in all.
fn group_slices(
    order: &[usize],
    table_of: impl Fn(usize) -> usize,
    bytes_of: impl Fn(usize) -> std::ops::Range<u64>,
) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let (table, bytes) = (table_of(i), bytes_of(i));
        match groups.last_mut() {
            Some(g)
                if g.table == table
                    && bytes.start <= g.bytes.end + GAP_BYTES
                    && bytes.end - g.bytes.start <= GROUP_BYTES =>
            {
                g.bytes.end = bytes.end;
                g.parts.end = k + 1;
            }
            _ => groups.push(Group {
                table,
                bytes,
                parts: k..k + 1,
            }),
        }
    }
    groups
}

/// The work file of table `m` in `dir`.
fn work_path(dir: &Path, m: Material, rules: RuleSet) -> PathBuf {
    dir.join(format!("{m}.{}.work", rules.name()))
}

/// Solve the pair `{m, m.flip()}` slice by slice into work files in `dir`, then
/// write its tables. Resumes from the work files of an interrupted run, which
/// record the finished batches about every `checkpoint_every`.
pub fn solve_pair(
    m: Material,
    rules: RuleSet,
    dir: &Path,
    solved: &Solved,
    checkpoint_every: Duration,
    progress: &dyn Progress,
) -> Result<Vec<TableStats>, GenerateError> {
    solve_pair_keeping(m, rules, dir, solved, checkpoint_every, progress, None)
}

/// [`solve_pair`], offering the finished work files to `kept` for the pairs
/// that read these tables next.
pub(super) fn solve_pair_keeping(
    m: Material,
    rules: RuleSet,
    dir: &Path,
    solved: &Solved,
    checkpoint_every: Duration,
    progress: &dyn Progress,
    kept: Option<&mut Kept>,
) -> Result<Vec<TableStats>, GenerateError> {
    let mats = m.with_flip();
    let indexes: Vec<MaterialIndex> = mats.iter().map(|&x| MaterialIndex::new(x, rules)).collect();
    let batches = batches(&indexes.iter().collect::<Vec<_>>(), BATCH_STATES);
    let marker = Marker::new(dir, m, rules, &batches);
    let done_batches = marker.done_batches();
    let tables = mats
        .iter()
        .zip(indexes)
        .map(|(&mat, index)| {
            PairTable::open(&work_path(dir, mat, rules), mat, index, done_batches == 0)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Batches lay out slices of both tables at multiples of one length.
    assert!(tables.iter().all(|t| t.slice_len == tables[0].slice_len));
    let skipped: u64 = batches[..done_batches.min(batches.len())]
        .iter()
        .flat_map(|b| &b.parts)
        .map(|p| tables[p.table].slice_len)
        .sum();
    progress.resumed(skipped);
    let tallies = solve_batches(
        &tables,
        &batches,
        done_batches,
        &marker,
        solved,
        checkpoint_every,
        progress,
    )?;
    let materials: Vec<(Material, u64)> = tables
        .iter()
        .map(|t| (t.material, t.index.size()))
        .collect();
    drop(tables);
    let mut out = Vec::new();
    for (&(mat, states), tally) in materials.iter().zip(tallies) {
        // Counts of the values written by this run: all of them unless it resumed.
        let tally = (done_batches == 0).then_some(tally);
        let st = write_from_work_file(dir, mat, rules, states, tally)?;
        progress.done(&st);
        out.push(st);
    }
    hand_over_work_files(dir, rules, &materials, kept);
    marker.remove();
    Ok(out)
}

/// The marker of a pair's finished batches (`<material>.<rules>.progress`):
/// how many batches the work files hold, and a hash of the plan it counts
/// batches of, so that work files are only resumed by a run that solves the
/// same batches in the same order.
struct Marker {
    path: PathBuf,
    plan: String,
}

impl Marker {
    fn new(dir: &Path, m: Material, rules: RuleSet, batches: &[Batch]) -> Marker {
        let mut plan = table::Fnv::default();
        plan.update(
            format!(
                "{} {} {} {}",
                table::INDEX_VERSION,
                WORK_FORMAT,
                BATCH_STATES,
                batches.len()
            )
            .as_bytes(),
        );
        for batch in batches {
            for p in &batch.parts {
                plan.update(&[p.table as u8]);
                plan.update(&p.slice.to_le_bytes());
            }
            plan.update(b";");
        }
        Marker {
            path: dir.join(format!("{m}.{}.progress", rules.name())),
            plan: format!("{:016x}", plan.0),
        }
    }

    /// The batches an interrupted run of the same plan finished (0 if none).
    fn done_batches(&self) -> usize {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| {
                let (n, hash) = t.trim().split_once(' ')?;
                (hash == self.plan).then(|| n.parse().ok()).flatten()
            })
            .unwrap_or(0)
    }

    /// Record that the first `n` batches are finished (their values durable).
    fn record(&self, n: usize) -> Result<(), GenerateError> {
        std::fs::write(&self.path, format!("{n} {}\n", self.plan))
            .map_err(|e| io_error(&self.path, e))
    }

    fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// An I/O error on `path`.
fn io_error(path: &Path, source: std::io::Error) -> GenerateError {
    GenerateError::Table(TableError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Solve `batches` from number `first` on into the work files of `tables`,
/// recording finished batches in `marker` at most every `checkpoint_every`.
/// Returns the counts of each table's values written.
fn solve_batches(
    tables: &[PairTable],
    batches: &[Batch],
    first: usize,
    marker: &Marker,
    solved: &Solved,
    checkpoint_every: Duration,
    progress: &dyn Progress,
) -> Result<Vec<Tally>, GenerateError> {
    let mut last_checkpoint = Instant::now();
    let mut spare = Spare::default();
    std::thread::scope(|scope| -> Result<Vec<Tally>, GenerateError> {
        let mut tallies = vec![Tally::default(); tables.len()];
        // The checkpoint being written, if one is.
        let mut syncing: Option<std::thread::ScopedJoinHandle<'_, Result<(), GenerateError>>> =
            None;
        let finish = |h: std::thread::ScopedJoinHandle<'_, Result<(), GenerateError>>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        for (b, batch) in batches.iter().enumerate().skip(first) {
            let tally = solve_batch(tables, batch, solved, &mut spare, &|n| progress.advance(n))?;
            for (total, t) in tallies.iter_mut().zip(tally) {
                *total = total.merge(t);
            }
            if b == first {
                trim_pool();
            }
            // Make the finished batches durable, then record them, at most
            // every `checkpoint_every` (syncing after every batch cost several
            // percent of the time). On a thread of its own: the sync waits for
            // the disk, which left both cores idle, and the next batch changes
            // only slices the marker does not count yet. Not after the last
            // batch: the tables are written next, from the page cache, and an
            // interruption there repeats at most the batches since the last
            // checkpoint.
            if b + 1 < batches.len() && last_checkpoint.elapsed() >= checkpoint_every {
                if let Some(h) = syncing.take() {
                    finish(h)?;
                }
                syncing = Some(scope.spawn(move || {
                    for t in tables {
                        t.sync()?;
                    }
                    marker.record(b + 1)
                }));
                last_checkpoint = Instant::now();
            }
            for t in tables {
                t.release_pages();
            }
        }
        if let Some(h) = syncing.take() {
            finish(h)?;
        }
        Ok(tallies)
    })
}

/// Write the tables of `mat` (`states` states) from its finished work file
/// in `dir`; `tally`: the counts of its values, if this run counted them all.
///
/// The work file is read back with positioned reads rather than through a
/// mapping, so that the pass over it does not make it resident. Tables
/// written from values that could not be read are removed again.
fn write_from_work_file(
    dir: &Path,
    mat: Material,
    rules: RuleSet,
    states: u64,
    tally: Option<Tally>,
) -> Result<TableStats, GenerateError> {
    let path = work_path(dir, mat, rules);
    let file = std::fs::File::open(&path).map_err(|e| io_error(&path, e))?;
    // Pages of the work file the host dropped from its page cache come back
    // in large requests, not as the writer's small reads from two threads
    // (which fetched them at about 10 MB/s while a core waited).
    will_read(&file, states);
    let failed = std::sync::Mutex::new(None);
    let read = |start: u64, len: usize| {
        let mut bytes = vec![0u8; len];
        if let Err(e) = read_exact_at(&file, &mut bytes, start) {
            failed.lock().unwrap().get_or_insert(e);
            return vec![NOT_READ; len];
        }
        bytes
    };
    let st = write_tables_from(dir, mat, rules, states, &read, tally);
    if let Some(e) = failed.into_inner().unwrap() {
        for metric in [Metric::Wdl, Metric::Dtw] {
            let _ = std::fs::remove_file(dir.join(table::file_name(mat, rules, metric)));
        }
        return Err(io_error(&path, e));
    }
    st
}

/// Offer the finished work files of `materials` to `kept`, for the pairs
/// that read these tables next; remove those it does not keep.
fn hand_over_work_files(
    dir: &Path,
    rules: RuleSet,
    materials: &[(Material, u64)],
    mut kept: Option<&mut Kept>,
) {
    for &(mat, states) in materials {
        let path = work_path(dir, mat, rules);
        match kept.as_deref_mut() {
            Some(kept) => kept.offer(mat, &path, states),
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Wdl;
    use crate::value::Value;

    /// A cell goes into the work file as its value's byte, an open cell as
    /// a draw; a value too long for a byte is recorded as too long (which
    /// fails the batch), not stored as a wrong value.
    #[test]
    fn finished_cells_in_the_work_file() {
        let work = Work::new(1, None).unwrap();
        let cell = |v: Value| AtomicU32::new(work.with_value(Cell::OPEN, v).0);
        let draw = Value {
            wdl: Wdl::Draw,
            dtw: 0,
        };
        let b = finished(&AtomicU32::new(Cell::OPEN.0));
        assert_eq!(Value::from_byte(b), Some(draw));
        // What the writer gets where the work file could not be read.
        assert_eq!(Value::from_byte(NOT_READ), Some(draw));
        for v in [
            draw,
            Value {
                wdl: Wdl::Win,
                dtw: 83,
            },
            Value {
                wdl: Wdl::Win,
                dtw: 253,
            },
            Value {
                wdl: Wdl::Loss,
                dtw: 0,
            },
            Value {
                wdl: Wdl::Loss,
                dtw: 252,
            },
        ] {
            let b = finished(&cell(v));
            assert_eq!(Value::from_byte(b), Some(v));
        }
        assert_eq!(work.too_long(), None);
        let long = Value {
            wdl: Wdl::Loss,
            dtw: 300,
        };
        cell(long);
        assert_eq!(work.too_long(), Some(300));
    }
}
