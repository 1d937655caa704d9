//! Retrograde generation of win/draw/loss and distance-to-win tables.
//!
//! Materials are solved in build order ([`Material::all`]), a material
//! together with its colour flip (an ordinary move of the side to move leads
//! from `A` to `A.flip()`). For each pair:
//!
//! 1. **Initialise** every state by forward move generation. Finished games get
//!    their adjudicated value. Moves that capture or promote lead to tables
//!    built earlier, whose values are read directly; ordinary moves stay in the
//!    pair and are only counted.
//! 2. **Propagate** in order of distance, with one bucket per ply count: when a
//!    state is finally lost in `d` plies, every predecessor (found by
//!    retro-moves, [`crate::retro`]) can win in `d + 1`; when a state is finally
//!    won, each predecessor has one fewer move left that does not lose, and
//!    when none is left it is lost, in one more ply than its longest reply.
//!    Buckets are processed in increasing order, so the first win found for a
//!    state is its shortest and the last reply to be refuted its longest.
//! 3. Whatever is still open is a **draw**: neither side can force a result.
//!
//! States are solved in parallel with rayon; per-state working values are atomics.

use crate::index::MaterialIndex;
use crate::material::Material;
use crate::position::Position;
use crate::retro::predecessors;
use crate::rules::{RuleSet, Wdl};
use crate::table::{self, Metric, TableData, TableError, TableFile};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, AtomicU8, Ordering::SeqCst};
use std::sync::Arc;

/// A solved value: result for the side to move and distance to win in plies
/// (0 for draws and finished games).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    /// Result for the side to move.
    pub wdl: Wdl,
    /// Plies to the end of the game with best play; 0 for draws.
    pub dtw: u16,
}

impl Value {
    /// Packed in 16 bits: 0 is "not yet known".
    #[inline]
    pub(crate) fn pack(self) -> u16 {
        ((self.wdl as u16 + 1) << 14) | self.dtw
    }
    #[inline]
    pub(crate) fn unpack(v: u16) -> Option<Value> {
        let wdl = match v >> 14 {
            1 => Wdl::Loss,
            2 => Wdl::Draw,
            3 => Wdl::Win,
            _ => return None,
        };
        Some(Value {
            wdl,
            dtw: v & 0x3FFF,
        })
    }
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A table could not be read or written.
    #[error(transparent)]
    Table(#[from] TableError),
    /// A table needed for captures or promotions is not there.
    #[error("table {0} is needed first (generate it, or run generate without --material)")]
    Missing(String),
    /// Solving a pair would need more memory than allowed.
    #[error("solving {material} needs about {needed_gib:.2} GiB of memory, more than the {limit_gib:.2} GiB allowed (--max-memory); tables of this size need the sliced generator, which is not written yet")]
    TooBig {
        /// The first material of the pair.
        material: Material,
        /// Estimated need.
        needed_gib: f64,
        /// The limit.
        limit_gib: f64,
    },
    /// The output directory could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The decoded values of finished tables, for reading the results of
/// captures and promotions.
pub struct Solved {
    tables: HashMap<Material, Arc<(MaterialIndex, Vec<u16>)>>,
}

impl Solved {
    fn value(&self, pos: &Position) -> Value {
        if let Some(o) = pos.outcome() {
            return Value { wdl: o.wdl, dtw: 0 };
        }
        let m = Material::of(pos);
        let (ix, values) = &*self.tables[&m];
        Value::unpack(values[ix.index(pos) as usize])
            .expect("finished tables hold only known values")
    }
}

/// Materials one move from `m` into another material (capture or promotion),
/// with the opponent to move; those where the opponent has no pieces are left out.
pub fn successor_materials(m: Material) -> Vec<Material> {
    let mut out = Vec::new();
    for men in 0..=m.opp_men {
        for kings in 0..=m.opp_kings {
            for promo in 0..=u8::from(m.stm_men > 0) {
                let captured = men < m.opp_men || kings < m.opp_kings;
                if !captured && promo == 0 {
                    continue;
                }
                let child = Material::new(men, kings, m.stm_men - promo, m.stm_kings + promo);
                if child.is_playable() && !out.contains(&child) {
                    out.push(child);
                }
            }
        }
    }
    out
}

/// Working state of one table during generation.
struct Work {
    index: MaterialIndex,
    result: Vec<AtomicU16>,
    remaining: Vec<AtomicU8>,
    best_win: Vec<AtomicU16>,
    longest_reply: Vec<AtomicU16>,
}

const NO_WIN: u16 = u16::MAX;

/// A bucket entry: table (bit 63), kind (bit 62: 1 = win, 0 = loss), index.
type Entry = u64;
const TABLE_BIT: u64 = 1 << 63;
const WIN_BIT: u64 = 1 << 62;
const INDEX_MASK: u64 = WIN_BIT - 1;

fn entry(table: usize, win: bool, idx: u64) -> Entry {
    (if table == 1 { TABLE_BIT } else { 0 }) | (if win { WIN_BIT } else { 0 }) | idx
}

/// Solve the pair `{m, m.flip()}`; returns the values of `m` (and of `m.flip()` if different).
pub fn solve_pair(
    m: Material,
    rules: RuleSet,
    solved: &Solved,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<(Material, Vec<u16>)> {
    let mats: Vec<Material> = if m.flip() == m {
        vec![m]
    } else {
        vec![m, m.flip()]
    };
    let works: Vec<Work> = mats
        .iter()
        .map(|&mat| {
            let index = MaterialIndex::new(mat, rules);
            let n = index.size() as usize;
            Work {
                index,
                result: (0..n).map(|_| AtomicU16::new(0)).collect(),
                remaining: (0..n).map(|_| AtomicU8::new(0)).collect(),
                best_win: (0..n).map(|_| AtomicU16::new(NO_WIN)).collect(),
                longest_reply: (0..n).map(|_| AtomicU16::new(0)).collect(),
            }
        })
        .collect();
    let other = |t: usize| if works.len() == 1 { 0 } else { 1 - t };

    // 1. Initialise.
    let mut buckets: Vec<Vec<Entry>> = Vec::new();
    let push_all = |buckets: &mut Vec<Vec<Entry>>, items: Vec<(u16, Entry)>| {
        for (d, e) in items {
            let d = d as usize;
            if buckets.len() <= d {
                buckets.resize_with(d + 1, Vec::new);
            }
            buckets[d].push(e);
        }
    };
    for (t, w) in works.iter().enumerate() {
        let size = w.index.size();
        const CHUNK: u64 = 1 << 14;
        let items: Vec<Vec<(u16, Entry)>> = (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut local = Vec::new();
                let mut moves = Vec::new();
                for i in c * CHUNK..((c + 1) * CHUNK).min(size) {
                    init_state(w, t, i, solved, &mut moves, &mut local);
                }
                progress(((c + 1) * CHUNK).min(size) - c * CHUNK);
                local
            })
            .collect();
        for v in items {
            push_all(&mut buckets, v);
        }
    }

    // 2. Propagate, bucket by bucket.
    let mut d = 0;
    while d < buckets.len() {
        let entries = std::mem::take(&mut buckets[d]);
        let found: Vec<Vec<(u16, Entry)>> = entries
            .par_chunks(4096)
            .map(|chunk| {
                let mut local = Vec::new();
                for &e in chunk {
                    let t = usize::from(e & TABLE_BIT != 0);
                    let win = e & WIN_BIT != 0;
                    let i = (e & INDEX_MASK) as usize;
                    let w = &works[t];
                    if win && w.best_win[i].load(SeqCst) != d as u16 {
                        continue; // a shorter win was found since
                    }
                    let value = Value {
                        wdl: if win { Wdl::Win } else { Wdl::Loss },
                        dtw: d as u16,
                    };
                    if w.result[i]
                        .compare_exchange(0, value.pack(), SeqCst, SeqCst)
                        .is_err()
                    {
                        continue; // already final
                    }
                    let o = other(t);
                    let ow = &works[o];
                    let pos = w.index.position(i as u64);
                    predecessors(&pos, |p| {
                        let j = ow.index.index(p) as usize;
                        if ow.result[j].load(SeqCst) != 0 {
                            return;
                        }
                        if win {
                            ow.longest_reply[j].fetch_max(d as u16, SeqCst);
                            if ow.remaining[j].fetch_sub(1, SeqCst) == 1
                                && ow.best_win[j].load(SeqCst) == NO_WIN
                            {
                                let dtw = 1 + ow.longest_reply[j].load(SeqCst);
                                local.push((dtw, entry(o, false, j as u64)));
                            }
                        } else {
                            let dtw = d as u16 + 1;
                            if ow.best_win[j].fetch_min(dtw, SeqCst) > dtw {
                                local.push((dtw, entry(o, true, j as u64)));
                            }
                        }
                    });
                }
                local
            })
            .collect();
        for v in found {
            push_all(&mut buckets, v);
        }
        d += 1;
    }

    // 3. The rest are draws.
    mats.iter()
        .zip(works)
        .map(|(&mat, w)| {
            let values: Vec<u16> = w
                .result
                .into_iter()
                .map(|r| {
                    let r = r.into_inner();
                    if r == 0 {
                        Value {
                            wdl: Wdl::Draw,
                            dtw: 0,
                        }
                        .pack()
                    } else {
                        r
                    }
                })
                .collect();
            (mat, values)
        })
        .collect()
}

fn init_state(
    w: &Work,
    t: usize,
    i: u64,
    solved: &Solved,
    moves: &mut Vec<crate::Move>,
    out: &mut Vec<(u16, Entry)>,
) {
    let pos = w.index.position(i);
    let i_us = i as usize;
    if let Some(o) = pos.outcome() {
        match o.wdl {
            Wdl::Loss => out.push((0, entry(t, false, i))),
            _ => w.result[i_us].store(Value { wdl: o.wdl, dtw: 0 }.pack(), SeqCst),
        }
        return;
    }
    pos.generate_moves(moves);
    let (mut internal, mut best_win, mut longest, mut draw) = (0u32, NO_WIN, 0u16, false);
    for m in moves.iter() {
        if !m.is_capture() && !m.promotes() {
            internal += 1;
            continue;
        }
        let v = solved.value(&pos.play(m));
        match v.wdl {
            Wdl::Loss => best_win = best_win.min(v.dtw + 1),
            Wdl::Win => longest = longest.max(v.dtw),
            Wdl::Draw => draw = true,
        }
    }
    if internal == 0 {
        if best_win != NO_WIN {
            w.best_win[i_us].store(best_win, SeqCst);
            out.push((best_win, entry(t, true, i)));
        } else if draw {
            w.result[i_us].store(
                Value {
                    wdl: Wdl::Draw,
                    dtw: 0,
                }
                .pack(),
                SeqCst,
            );
        } else {
            out.push((longest + 1, entry(t, false, i)));
        }
        return;
    }
    // A drawing escape counts as a reply that is never refuted.
    w.remaining[i_us].store((internal + u32::from(draw)) as u8, SeqCst);
    w.longest_reply[i_us].store(longest, SeqCst);
    if best_win != NO_WIN {
        w.best_win[i_us].store(best_win, SeqCst);
        out.push((best_win, entry(t, true, i)));
    }
}

/// Statistics of a solved table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TableStats {
    /// Material name.
    pub material: String,
    /// Rule set name.
    pub rules: String,
    /// Number of states.
    pub states: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Drawn.
    pub draws: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Longest win in plies.
    pub longest_win: u32,
    /// FNV-1a 64 over every state's (WDL byte, DTW as u16 little-endian), as hex.
    pub checksum: String,
}

/// Statistics and the manifest checksum of packed values.
pub fn stats(material: Material, rules: RuleSet, values: &[u16]) -> TableStats {
    let (mut w, mut d, mut l, mut longest) = (0, 0, 0, 0u32);
    let mut sum = table::Fnv::default();
    for &v in values {
        let v = Value::unpack(v).expect("solved");
        match v.wdl {
            Wdl::Win => {
                w += 1;
                longest = longest.max(v.dtw as u32);
            }
            Wdl::Draw => d += 1,
            Wdl::Loss => l += 1,
        }
        let dtw = v.dtw.to_le_bytes();
        sum.update(&[v.wdl as u8, dtw[0], dtw[1]]);
    }
    TableStats {
        material: material.to_string(),
        rules: rules.name().to_string(),
        states: values.len() as u64,
        wins: w,
        draws: d,
        losses: l,
        longest_win: longest,
        checksum: format!("{:016x}", sum.0),
    }
}

/// Write the WDL and DTW files of a solved table into `dir`.
pub fn write_tables(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    values: &[u16],
) -> Result<TableStats, GenerateError> {
    let st = stats(material, rules, values);
    let counts = (st.wins, st.draws, st.losses);
    let wdl: Vec<u16> = values
        .iter()
        .map(|&v| Value::unpack(v).unwrap().wdl as u16)
        .collect();
    let dtw: Vec<u16> = values
        .iter()
        .map(|&v| Value::unpack(v).unwrap().dtw)
        .collect();
    for (metric, vals) in [(Metric::Dtw, &dtw), (Metric::Wdl, &wdl)] {
        let path = dir.join(table::file_name(material, rules, metric));
        table::write_table(
            &path,
            &TableData {
                metric,
                rules,
                material,
                values: vals,
                counts,
                longest_win: st.longest_win,
            },
        )?;
    }
    Ok(st)
}

/// Whether both files of a table exist and open cleanly.
pub fn is_complete(dir: &Path, material: Material, rules: RuleSet) -> bool {
    [Metric::Wdl, Metric::Dtw].iter().all(|&metric| {
        let path = dir.join(table::file_name(material, rules, metric));
        TableFile::open_expecting(&path, material, rules, metric).is_ok()
    })
}

/// Read both files of a finished table back into packed values.
pub fn load_values(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<Vec<u16>, GenerateError> {
    let open = |metric| {
        let path = dir.join(table::file_name(material, rules, metric));
        if !path.exists() {
            return Err(GenerateError::Missing(table::file_name(
                material, rules, metric,
            )));
        }
        Ok(TableFile::open_expecting(&path, material, rules, metric)?)
    };
    let wdl = open(Metric::Wdl)?.read_all()?;
    let dtw = open(Metric::Dtw)?.read_all()?;
    Ok(wdl
        .iter()
        .zip(&dtw)
        .map(|(&w, &d)| {
            let wdl = match w {
                0 => Wdl::Loss,
                1 => Wdl::Draw,
                _ => Wdl::Win,
            };
            Value { wdl, dtw: d }.pack()
        })
        .collect())
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Rule set.
    pub rules: RuleSet,
    /// Output directory.
    pub dir: PathBuf,
    /// Materials (with their flips) to solve, in build order; complete ones are skipped.
    pub materials: Vec<Material>,
    /// Memory the generator may use, in bytes (default: what the system reports available).
    pub memory_limit: Option<u64>,
}

/// Bytes of working memory per state while solving: the per-state atomics (7 bytes)
/// and about one and a half bucket entries (8 bytes each). Measured: solving the
/// 71.7 M states of KMvKM peaks at 1.37 GB resident.
pub const BYTES_PER_STATE: u64 = 19;

/// Estimated peak memory for solving the pair of `m`, with its sub-tables loaded.
pub fn memory_estimate(m: Material, rules: RuleSet) -> u64 {
    let pair = if m == m.flip() {
        vec![m]
    } else {
        vec![m, m.flip()]
    };
    let states: u64 = pair
        .iter()
        .map(|&x| MaterialIndex::new(x, rules).size())
        .sum();
    let mut subs: Vec<Material> = pair.iter().flat_map(|&x| successor_materials(x)).collect();
    subs.sort();
    subs.dedup();
    let sub_states: u64 = subs
        .iter()
        .map(|&x| MaterialIndex::new(x, rules).size())
        .sum();
    states * BYTES_PER_STATE + sub_states * 2
}

/// Memory the system reports available, in bytes (Linux), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Plan {
    /// Every material up to `max_pieces`.
    pub fn all(rules: RuleSet, dir: &Path, max_pieces: u32) -> Plan {
        Plan {
            rules,
            dir: dir.to_path_buf(),
            materials: Material::all(max_pieces),
            memory_limit: None,
        }
    }

    /// One material, its flip, and everything they depend on.
    pub fn material(rules: RuleSet, dir: &Path, m: Material) -> Plan {
        let mut need = vec![m, m.flip()];
        let mut i = 0;
        while i < need.len() {
            for s in successor_materials(need[i]) {
                for x in [s, s.flip()] {
                    if !need.contains(&x) {
                        need.push(x);
                    }
                }
            }
            i += 1;
        }
        let materials = Material::all(m.pieces())
            .into_iter()
            .filter(|x| need.contains(x))
            .collect();
        Plan {
            rules,
            dir: dir.to_path_buf(),
            materials,
            memory_limit: None,
        }
    }

    /// The pairs still to solve (the first material of each), skipping complete ones.
    pub fn pending(&self) -> Vec<Material> {
        let mut out: Vec<Material> = Vec::new();
        for &m in &self.materials {
            if out.contains(&m.flip()) || out.contains(&m) {
                continue;
            }
            if is_complete(&self.dir, m, self.rules) && is_complete(&self.dir, m.flip(), self.rules)
            {
                continue;
            }
            out.push(m);
        }
        out
    }
}

/// Events reported while generating.
pub trait Progress: Sync {
    /// A pair starts: its materials and their total states.
    fn start(&self, _material: Material, _states: u64) {}
    /// States initialised so far in the current pair.
    fn advance(&self, _states: u64) {}
    /// A table was written.
    fn done(&self, _stats: &TableStats) {}
    /// A pair was not attempted (it would need more memory than allowed).
    fn refused(&self, _why: &GenerateError) {}
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

/// Generate every pending table of the plan, in build order. A pair that would need
/// more memory than allowed is reported through [`Progress::refused`] and skipped
/// (so are the pairs that depend on it, which then fail to find it).
pub fn run(plan: &Plan, progress: &dyn Progress) -> Result<Vec<TableStats>, GenerateError> {
    std::fs::create_dir_all(&plan.dir).map_err(|source| GenerateError::Dir {
        path: plan.dir.clone(),
        source,
    })?;
    let mut written = Vec::new();
    let limit = plan.memory_limit.or_else(available_memory);
    for m in plan.pending() {
        if let Some(limit) = limit {
            let needed = memory_estimate(m, plan.rules);
            if needed > limit {
                const GIB: f64 = (1u64 << 30) as f64;
                // Refuse this pair before allocating anything, and go on with the others.
                progress.refused(&GenerateError::TooBig {
                    material: m,
                    needed_gib: needed as f64 / GIB,
                    limit_gib: limit as f64 / GIB,
                });
                continue;
            }
        }
        let mut solved = Solved {
            tables: HashMap::new(),
        };
        let mut missing = None;
        for s in successor_materials(m)
            .into_iter()
            .chain(successor_materials(m.flip()))
        {
            if let std::collections::hash_map::Entry::Vacant(e) = solved.tables.entry(s) {
                match load_values(&plan.dir, s, plan.rules) {
                    Ok(values) => {
                        e.insert(Arc::new((MaterialIndex::new(s, plan.rules), values)));
                    }
                    // A table this pair needs was itself refused: skip this pair too.
                    Err(err @ GenerateError::Missing(_)) => {
                        missing = Some(err);
                        break;
                    }
                    Err(err) => return Err(err),
                }
            }
        }
        if let Some(err) = missing {
            progress.refused(&err);
            continue;
        }
        let states = MaterialIndex::new(m, plan.rules).size() * if m == m.flip() { 1 } else { 2 };
        progress.start(m, states);
        for (mat, values) in solve_pair(m, plan.rules, &solved, &|n| progress.advance(n)) {
            let st = write_tables(&plan.dir, mat, plan.rules, &values)?;
            progress.done(&st);
            written.push(st);
        }
    }
    Ok(written)
}
