//! Solving one pair of tables (a material and its colour flip) batch by
//! batch into work files, resumably, and writing its tables.

use super::batch::{batches, Batch, Layout, BATCH_STATES};
use super::buckets::StateOrder;
use super::init::{capture_slots, initialise};
use super::memory::{prefetch, trim_pool, AtomicWords, Spare};
use super::propagate::propagate;
use super::solved::{Kept, Solved};
use super::work::{Cell, Work};
use super::write::{write_tables_from, ByteCounts, TableStats, Tally};
use super::{GenerateError, Progress};
use crate::index::MaterialIndex;
use crate::material::Material;
use crate::rules::RuleSet;
use crate::table::{self, Metric, TableError};
use memmap2::{Mmap, UncheckedAdvice};
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

/// One table of the pair being solved: its index and its finished values,
/// kept in a work file (a byte per state as [`Value::to_byte`] codes it, 0 =
/// not solved yet), written with positioned writes and read through a memory
/// map of it. (Two bytes per state, as before, wrote and read back twice the
/// bytes: 11.5 GB for the largest pair.)
pub(super) struct PairTable {
    pub(super) material: Material,
    pub(super) index: MaterialIndex,
    pub(super) slice_len: u64,
    pub(super) store: Mmap,
    /// The work file itself, for writing finished values, and its path.
    file: std::fs::File,
    path: PathBuf,
}

impl PairTable {
    #[inline]
    pub(super) fn get(&self, idx: u64) -> u8 {
        self.store[idx as usize]
    }

    /// Ask the processor to fetch the value [`PairTable::get`] will read (a
    /// hint only: a page not mapped yet is not faulted in).
    #[inline]
    pub(super) fn prefetch(&self, idx: u64) {
        if let Some(b) = self.store.get(idx as usize) {
            prefetch(b);
        }
    }
}

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
/// raised SIGBUS and killed the run. Small slices (one man placement holds a
/// single state in MMMvMM) are gathered by their place in the file: written
/// one by one they cost a system call per few bytes, which took 37% of that
/// pair's time (BENCHMARKS.md, 2026-12-05).
fn write_batch(
    tables: &[PairTable],
    batch: &Batch,
    layout: &Layout,
    work: &Work,
) -> Result<Vec<Tally>, GenerateError> {
    use std::os::unix::fs::FileExt;
    let (parts, len) = (&batch.parts, layout.len as usize);
    let failed = |t: usize, source: std::io::Error| {
        GenerateError::Table(TableError::Io {
            path: tables[t].path.clone(),
            source,
        })
    };
    let mut tallies = vec![Tally::default(); tables.len()];
    if len >= WRITE_CHUNK {
        // Every piece of every slice, one table's after the other's: rayon
        // hands the two halves of the list to the two threads, which so write
        // into different files. A positioned write holds its file's lock, and
        // with both threads on one file one of them spun on it (2.5% of the
        // KKMvKM pair's samples while it wrote, BENCHMARKS.md, 2026-12-07).
        let pieces = len.div_ceil(WRITE_CHUNK);
        let mut jobs: Vec<(usize, usize)> = (0..parts.len())
            .flat_map(|i| (0..pieces).map(move |k| (i, k)))
            .collect();
        jobs.sort_by_key(|&(i, _)| parts[i].table);
        let counted = jobs
            .par_iter()
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
                tables[p.table]
                    .file
                    .write_all_at(&bytes, at)
                    .map(|()| (p.table, tally))
                    .map_err(|e| failed(p.table, e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (t, tally) in counted {
            tallies[t] = tallies[t].merge(tally);
        }
        return Ok(tallies);
    }
    // Groups of parts close together in one file: the table, the bytes of
    // the file the group covers, and its parts (in `order`).
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_unstable_by_key(|&i| (parts[i].table, parts[i].slice));
    let bytes_of = |i: usize| {
        let start = parts[i].slice * len as u64;
        start..start + len as u64
    };
    let mut groups: Vec<(usize, std::ops::Range<u64>, std::ops::Range<usize>)> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let (table, bytes) = (parts[i].table, bytes_of(i));
        match groups.last_mut() {
            Some((t, r, ks))
                if *t == table
                    && bytes.start <= r.end + GAP_BYTES
                    && bytes.end - r.start <= GROUP_BYTES =>
            {
                r.end = bytes.end;
                ks.end = k + 1;
            }
            _ => groups.push((table, bytes, k..k + 1)),
        }
    }
    let counted = groups
        .par_iter()
        .map(|(t, r, ks)| {
            let table = &tables[*t];
            // One pass: each part's values, and before it the gap since the
            // last as the file holds it (slices of other batches, solved or
            // not yet, which no one writes meanwhile: written back as they
            // are). Only the gaps are read from the map: a part not written
            // yet is a hole in the file, and reading it made the kernel fault
            // in and zero pages only for them to be overwritten (1.5% of the
            // KMMvKM pair's samples, BENCHMARKS.md 2026-12-07).
            let mut bytes = Vec::with_capacity((r.end - r.start) as usize);
            let mut counts = ByteCounts::default();
            let mut at = r.start;
            for &i in &order[ks.clone()] {
                let part = bytes_of(i);
                bytes.extend_from_slice(&table.store[at as usize..part.start as usize]);
                let from = bytes.len();
                bytes.extend(work.cells[i * len..(i + 1) * len].iter().map(finished));
                counts.add(&bytes[from..]);
                at = part.end;
            }
            debug_assert_eq!(at, r.end);
            let tally = counts.tally();
            table
                .file
                .write_all_at(&bytes, r.start)
                .map(|()| (*t, tally))
                .map_err(|e| failed(*t, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (t, tally) in counted {
        tallies[t] = tallies[t].merge(tally);
    }
    Ok(tallies)
}

/// Tell the kernel that the whole work file is about to be read. Its pages
/// are mostly in the page cache, but some of the largest pair's had been
/// dropped (up to 350 MB of 5.8 GB), and the writer's reads of 16 KB
/// pieces, from two threads at once, fetched those at about 10 MB/s while a
/// core waited; asked for at once, they come in large requests. Only a hint:
/// an error changes nothing.
fn will_read(file: &std::fs::File, len: u64) {
    use std::os::fd::AsRawFd;
    // Safety: a plain system call on an open descriptor; it reads no memory.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            0,
            len as libc::off_t,
            libc::POSIX_FADV_WILLNEED,
        );
    }
}

fn work_path(dir: &Path, m: Material, rules: RuleSet, ext: &str) -> PathBuf {
    dir.join(format!("{m}.{}.{ext}", rules.name()))
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
    mut kept: Option<&mut Kept>,
) -> Result<Vec<TableStats>, GenerateError> {
    let mats = m.with_flip();
    let io = |path: &Path, source: std::io::Error| {
        GenerateError::Table(TableError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let indexes: Vec<MaterialIndex> = mats.iter().map(|&x| MaterialIndex::new(x, rules)).collect();
    let batches = batches(&indexes.iter().collect::<Vec<_>>(), BATCH_STATES);
    // The marker names the plan it counts batches of, so that work files are
    // only resumed by a run that solves the same batches in the same order.
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
    for batch in &batches {
        for p in &batch.parts {
            plan.update(&[p.table as u8]);
            plan.update(&p.slice.to_le_bytes());
        }
        plan.update(b";");
    }
    let plan = format!("{:016x}", plan.0);
    let marker = work_path(dir, m, rules, "progress");
    let done_batches: usize = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|t| {
            let (n, hash) = t.trim().split_once(' ')?;
            (hash == plan).then(|| n.parse().ok()).flatten()
        })
        .unwrap_or(0);
    let mut tables = Vec::new();
    for (&mat, index) in mats.iter().zip(indexes) {
        let path = work_path(dir, mat, rules, "work");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(done_batches == 0)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        file.set_len(index.size()).map_err(|e| io(&path, e))?;
        // Safety: the work file is private to this run (a name no reader opens) and
        // is not resized while mapped; it changes only through positioned
        // writes to slices that no reader is reading yet.
        let store = unsafe { Mmap::map(&file) }.map_err(|e| io(&path, e))?;
        let slice_len = index.slice_len();
        tables.push(PairTable {
            material: mat,
            index,
            slice_len,
            store,
            file,
            path,
        });
    }
    // Batches lay out slices of both tables at multiples of one length.
    assert!(tables.iter().all(|t| t.slice_len == tables[0].slice_len));
    let skipped: u64 = batches[..done_batches.min(batches.len())]
        .iter()
        .flat_map(|b| &b.parts)
        .map(|p| tables[p.table].slice_len)
        .sum();
    progress.resumed(skipped);
    let mut last_checkpoint = Instant::now();
    let mut spare = Spare::default();
    let (tables_ref, marker_ref, plan_ref, io_ref) = (&tables, &marker, &plan, &io);
    // Counts of the values written by this run: all of them unless it resumed.
    let tallies = std::thread::scope(|scope| -> Result<Vec<Tally>, GenerateError> {
        let mut tallies = vec![Tally::default(); tables.len()];
        // The checkpoint being written, if one is.
        let mut syncing: Option<std::thread::ScopedJoinHandle<'_, Result<(), GenerateError>>> =
            None;
        let finish = |h: std::thread::ScopedJoinHandle<'_, Result<(), GenerateError>>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        for (b, batch) in batches.iter().enumerate().skip(done_batches) {
            let tally = solve_batch(&tables, batch, solved, &mut spare, &|n| progress.advance(n))?;
            for (total, t) in tallies.iter_mut().zip(tally) {
                *total = total.merge(t);
            }
            if b == done_batches {
                trim_pool();
            }
            // Make the finished batches durable, then record them, at most
            // every `checkpoint_every` (syncing after every batch cost several
            // percent of the time). On a thread of its own: the sync waits for
            // the disk, which left both cores idle (0.4% of a five-piece run),
            // and the next batch changes only slices the marker does not
            // count yet. Not after the last batch: the tables are written
            // next, from the page cache, and an interruption there repeats at
            // most the batches since the last checkpoint.
            if b + 1 < batches.len() && last_checkpoint.elapsed() >= checkpoint_every {
                if let Some(h) = syncing.take() {
                    finish(h)?;
                }
                syncing = Some(scope.spawn(move || {
                    for t in tables_ref {
                        t.file.sync_data().map_err(|e| io_ref(&t.path, e))?;
                    }
                    std::fs::write(marker_ref, format!("{} {plan_ref}\n", b + 1))
                        .map_err(|e| io_ref(marker_ref, e))
                }));
                last_checkpoint = Instant::now();
            }
            for t in &tables {
                // Safety: no slice of the mapping is borrowed here. For a shared
                // file mapping MADV_DONTNEED only unmaps the pages: they stay in
                // the page cache (written back, or synced at the next checkpoint),
                // and later reads fault them back in, so no data is lost. It keeps
                // the resident size to what one batch reads instead of growing to
                // both work files.
                let _ = unsafe { t.store.unchecked_advise(UncheckedAdvice::DontNeed) };
            }
        }
        if let Some(h) = syncing.take() {
            finish(h)?;
        }
        Ok(tallies)
    })?;
    // Read the work files back with positioned reads rather than through the
    // mappings, so that the pass over them does not make them resident.
    let materials: Vec<(Material, u64)> = tables
        .iter()
        .map(|t| (t.material, t.index.size()))
        .collect();
    drop(tables);
    let mut out = Vec::new();
    for (&(mat, states), tally) in materials.iter().zip(tallies) {
        let path = work_path(dir, mat, rules, "work");
        let file = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
        will_read(&file, states);
        let failed = std::sync::Mutex::new(None);
        let read = |start: u64, len: usize| {
            use std::os::unix::fs::FileExt;
            let mut bytes = vec![0u8; len];
            if let Err(e) = file.read_exact_at(&mut bytes, start) {
                failed.lock().unwrap().get_or_insert(e);
                return vec![NOT_READ; len];
            }
            bytes
        };
        let tally = (done_batches == 0).then_some(tally);
        let st = write_tables_from(dir, mat, rules, states, &read, tally);
        if let Some(e) = failed.into_inner().unwrap() {
            // The tables written from unreadable values are not kept.
            for metric in [Metric::Wdl, Metric::Dtw] {
                let _ = std::fs::remove_file(dir.join(table::file_name(mat, rules, metric)));
            }
            return Err(io(&path, e));
        }
        let st = st?;
        progress.done(&st);
        out.push(st);
    }
    for (mat, states) in materials {
        let path = work_path(dir, mat, rules, "work");
        match kept.as_deref_mut() {
            Some(kept) => kept.offer(mat, &path, states),
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    let _ = std::fs::remove_file(&marker);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Value;
    use crate::rules::Wdl;

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
