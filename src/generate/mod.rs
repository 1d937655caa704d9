//! Retrograde generation of win/draw/loss and distance-to-win tables.
//!
//! Materials are solved in build order ([`Material::all`]), a material
//! together with its colour flip (an ordinary move of the side to move leads
//! from `A` to `A.flip()`).
//!
//! **Slices.** A pair is solved one *slice* at a time: all states with one
//! placement of the men (kings and counters vary), together with its partner
//! slice (the same men, the other side to move). Ordinary king moves stay
//! between a slice and its partner; man moves lead to slices whose men are
//! further advanced, captures and promotions to tables built earlier. Slices
//! are solved most advanced first (`advancement` falls by one with every man
//! move), so everything outside the slice pair being solved is final. Finished
//! values go to a work file (a byte per state, written with positioned writes
//! and read through a memory map); working memory is one batch of slices. The
//! work files and a marker of finished batches let an interrupted run resume.
//!
//! Within a batch:
//! 1. **Initialise** every state by forward move generation, in two passes.
//!    Finished games get their adjudicated value; moves that leave the batch
//!    are read from finished values. The first pass solves the placements
//!    where the side to move must capture: all their moves leave the batch.
//!    The second initialises the others: an ordinary king move into a capture
//!    placement is read like a move that leaves the batch, the rest are only
//!    counted. Capture states (most of the states of king-heavy materials)
//!    thus never enter propagation.
//! 2. **Propagate** in order of distance, with one bucket per ply count, run by
//!    run (a run is whole slice pairs, about two million states where slices
//!    are that small, so that its cells stay in the processor's cache): when a
//!    state is finally lost in `d` plies, every predecessor by a king move
//!    (found by retro-moves, [`crate::retro`]) can win in `d + 1`; when a state
//!    is finally won, each predecessor has one fewer move left that does not
//!    lose, and when none is left it is lost, in one more ply than its longest
//!    reply. Buckets are processed in increasing order, so the first win found
//!    for a state is its shortest and the last reply to be refuted its longest.
//! 3. Whatever is still open is a **draw**: neither side can force a result.
//!
//! Where the side to move has men and two or more kings, a *relay node* per
//! placement, king and carried counters stands for "a fresh move of this
//! king" (see `Fresh`): every state whose three-move state leaves that king
//! free shares it, so a finalised successor updates the node once instead of
//! each of those states.
//!
//! States are solved in parallel with rayon; per-state working values are atomics.
//!
//! The stages live in submodules: `pair` solves a pair batch by batch into
//! work files and resumes them; `batch` orders slices into batches and runs;
//! `init` is step 1 (with `leaving`: where the values of moves that leave the
//! batch are read, and their summary) and `propagate` step 2, handing states
//! over through `buckets`; `relay` holds the relay nodes, `work` the per-state cells,
//! `memory` the huge-page mappings they live in; `solved` reads finished
//! tables back (copying the work files of tables this run solved, which a
//! run keeps as `<material>.<rules>.values` while a later pair reads them,
//! instead of decoding the table files), and `write` writes a solved table's
//! files and statistics.

mod batch;
mod buckets;
mod divisor;
mod init;
mod leaving;
mod memory;
mod pair;
mod propagate;
mod relay;
mod solved;
mod work;
mod write;

pub use pair::solve_pair;
use solved::Kept;
pub use solved::{damaged, is_complete, load_values, Solved};
pub use write::{
    manifest_is_current, stats, table_stats, write_tables, TableStats, MANIFEST_HEADER,
};
pub(crate) use write::{Counts, StreamStats};

use crate::index::MaterialIndex;
use crate::material::Material;
use crate::piece::Side;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl};
use crate::table::TableError;
use batch::BATCH_STATES;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// A state's value as its table files store it: the WDL file's code
    /// (0 loss, 1 draw, 2 win) and the DTW file's value `dtw`, read as the
    /// DTW file's header `dtw_header` says (a draw's DTW is 0, whatever the
    /// file holds there: see `Metric::Dtw`).
    #[inline]
    pub(crate) fn stored(wdl: u16, dtw: u16, dtw_header: &crate::table::Header) -> Value {
        let wdl = match wdl {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            _ => Wdl::Win,
        };
        Value {
            wdl,
            dtw: dtw_header.dtw_plies(dtw, wdl),
        }
    }

    /// Packed in 16 bits (WDL + 1 in the top two, DTW below), as
    /// [`load_values`] returns them; 0 is "not yet known".
    #[inline]
    pub const fn pack(self) -> u16 {
        ((self.wdl as u16 + 1) << 14) | self.dtw
    }
    /// The value packed by [`Value::pack`]; `None` for 0 ("not yet known").
    #[inline]
    pub fn unpack(v: u16) -> Option<Value> {
        // A table, not a match: a match compiled to a jump on the result,
        // which the generator's reads of successors mispredicted.
        const WDL: [Wdl; 4] = [Wdl::Loss, Wdl::Loss, Wdl::Draw, Wdl::Win];
        (v >> 14 != 0).then_some(Value {
            wdl: WDL[(v >> 14) as usize],
            dtw: v & 0x3FFF,
        })
    }

    /// The value in one byte, as finished values are held in memory and in
    /// the work files: 0 not known yet, 1 a draw, `c` in 2..=128 a win in
    /// `2c - 3` plies, `c` in 129..=255 a loss in `2(c - 129)` plies. A win's
    /// DTW is odd and a loss's even (the winner makes the last move), so the
    /// parity costs no bit. `None` where it does not fit: a win over 253 plies
    /// or a loss over 252 (none up to five pieces: the longest is 83), or a
    /// DTW of the wrong parity.
    #[inline]
    pub(crate) const fn to_byte(self) -> Option<u8> {
        match self.wdl {
            Wdl::Draw if self.dtw == 0 => Some(1),
            Wdl::Win if self.dtw % 2 == 1 && self.dtw <= 253 => Some((self.dtw / 2 + 2) as u8),
            Wdl::Loss if self.dtw.is_multiple_of(2) && self.dtw <= 252 => {
                Some(129 + (self.dtw / 2) as u8)
            }
            _ => None,
        }
    }

    /// The value coded by [`Value::to_byte`]; `None` for 0 ("not known yet").
    #[inline]
    pub(crate) fn from_byte(b: u8) -> Option<Value> {
        BYTE_VALUES[b as usize]
    }
}

/// [`Value::from_byte`] of every byte (1 KiB: stays in the cache).
static BYTE_VALUES: [Option<Value>; 256] = {
    let mut t = [None; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = byte_value(b as u8);
        b += 1;
    }
    t
};

/// The value coded by byte `b` ([`Value::to_byte`]), computed: the one place
/// that decodes the byte coding, for the lookup tables built from it.
pub(crate) const fn byte_value(b: u8) -> Option<Value> {
    let b = b as u16;
    match b {
        0 => None,
        1 => Some(Value {
            wdl: Wdl::Draw,
            dtw: 0,
        }),
        2..=128 => Some(Value {
            wdl: Wdl::Win,
            dtw: 2 * b - 3,
        }),
        _ => Some(Value {
            wdl: Wdl::Loss,
            dtw: 2 * (b - 129),
        }),
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
    #[error("solving {material} needs about {needed_gib:.2} GiB of memory, more than the {limit_gib:.2} GiB allowed (--max-memory); lower the need by freeing memory, or raise --max-memory if the estimate is too cautious")]
    TooBig {
        /// The first material of the pair.
        material: Material,
        /// Estimated need.
        needed_gib: f64,
        /// The limit.
        limit_gib: f64,
    },
    /// The working memory of a batch could not be mapped.
    #[error(
        "cannot map {bytes} bytes of working memory: {source} (lower --max-memory or free memory)"
    )]
    Memory {
        /// The size asked for.
        bytes: usize,
        /// The error.
        source: std::io::Error,
    },
    /// A distance to win too long for the work files' byte per state.
    #[error("{material}: a value with a distance of {dtw} plies, longer than the generator's work files hold (252)")]
    TooLong {
        /// The material of the table.
        material: Material,
        /// The distance in plies.
        dtw: u16,
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

/// The position, or its colour flip if Black is to move (how states are indexed).
#[inline]
fn white_to_move(pos: &Position) -> Position {
    if pos.turn() == Side::White {
        *pos
    } else {
        pos.flip()
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

/// The finished tables that the pairs of `pairs` (first materials) read.
fn read_by(pairs: &[Material]) -> Vec<Material> {
    pairs
        .iter()
        .flat_map(|&x| {
            successor_materials(x)
                .into_iter()
                .chain(successor_materials(x.flip()))
        })
        .collect()
}

/// Disk space free for an unprivileged user in the file system of `dir`, in
/// bytes, if known.
pub fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // Safety: `path` is a NUL-terminated string and `st` room for the result,
    // which is read only when the call succeeds.
    let st = unsafe {
        if libc::statvfs(path.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some(st.f_bavail as u64 * st.f_frsize as u64)
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
    /// How often an interrupted run's work is made durable, so that a new run
    /// resumes from it (default [`CHECKPOINT_EVERY`]); a pair's work is always
    /// recorded when the pair is solved.
    pub checkpoint_every: Duration,
}

/// Default of [`Plan::checkpoint_every`]: an interruption loses at most about a minute.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Bytes of working memory per state of a batch: the per-state atomic cell
/// (4 bytes), about one and a half bucket entries (8 bytes each), the relay
/// nodes (at most 3/10 of a cell per state), the bitset that orders the
/// buckets (2 bits) and the values of capture placements (at most 2 bytes).
pub const BYTES_PER_BATCH_STATE: u64 = 20;

/// Estimated peak memory for solving the pair of `m`: one batch of slices, the
/// decoded sub-tables (a byte per state, see [`Solved`]; two for a table with
/// a DTW over 252 plies, which no table up to five pieces has), the
/// compressed blocks of the output, and the work files (memory-mapped, a byte
/// per state; the kernel may page them out, but they are counted so that a
/// run never depends on that).
pub fn memory_estimate(m: Material, rules: RuleSet) -> u64 {
    let pair = m.with_flip();
    let indexes: Vec<MaterialIndex> = pair.iter().map(|&x| MaterialIndex::new(x, rules)).collect();
    let states: u64 = indexes.iter().map(|ix| ix.size()).sum();
    let largest_slice_pair: u64 = indexes.iter().map(|ix| ix.slice_len()).sum();
    let batch = BATCH_STATES.max(largest_slice_pair).min(states);
    let mut subs: Vec<Material> = pair.iter().flat_map(|&x| successor_materials(x)).collect();
    subs.sort();
    subs.dedup();
    let sub_states: u64 = subs
        .iter()
        .map(|&x| MaterialIndex::new(x, rules).size())
        .sum();
    batch * BYTES_PER_BATCH_STATE + sub_states + states + states / 8
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
            checkpoint_every: CHECKPOINT_EVERY,
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
            checkpoint_every: CHECKPOINT_EVERY,
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
    /// A pair starts: its first material and the states of the pair.
    fn start(&self, _material: Material, _states: u64) {}
    /// States initialised so far in the current pair.
    fn advance(&self, _states: u64) {}
    /// States of the current pair already solved by an interrupted run.
    fn resumed(&self, _states: u64) {}
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
    let pending = plan.pending();
    // Finished values kept for the pairs that read them, within what the page
    // cache can be expected to hold and half the free disk space.
    let budget = limit.unwrap_or(0).min(free_disk(&plan.dir).unwrap_or(0)) / 2;
    let mut kept = Kept::new(&plan.dir, plan.rules, budget);
    for (i, &m) in pending.iter().enumerate() {
        // This pair reads them now (so from `i`, not `i + 1`), later pairs later.
        kept.want(read_by(&pending[i..]));
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
        let needed = read_by(&[m]);
        let solved = match Solved::load_keeping(&plan.dir, plan.rules, &needed, Some(&kept)) {
            Ok(solved) => solved,
            // A table this pair needs was itself refused: skip this pair too.
            Err(err @ GenerateError::Missing(_)) => {
                progress.refused(&err);
                continue;
            }
            Err(err) => return Err(err),
        };
        let states = MaterialIndex::new(m, plan.rules).size() * m.with_flip().len() as u64;
        progress.start(m, states);
        written.extend(pair::solve_pair_keeping(
            m,
            plan.rules,
            &plan.dir,
            &solved,
            plan.checkpoint_every,
            progress,
            Some(&mut kept),
        )?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair of KMMvKM reads, with the opponent to move, KMvKKM (White
    /// promotes), KvKMM and MvKMM (White takes Black's man or king), not
    /// itself.
    #[test]
    fn what_a_pair_reads() {
        let m: Material = "KMMvKM".parse().unwrap();
        let read = read_by(&[m]);
        for x in ["KMvKKM", "KvKMM", "MvKMM"] {
            assert!(read.contains(&x.parse().unwrap()), "{x} in {read:?}");
        }
        assert!(!read.contains(&m) && !read.contains(&m.flip()));
    }

    #[test]
    fn free_disk_space_is_known_for_the_temporary_directory() {
        assert!(free_disk(&std::env::temp_dir()).is_some_and(|b| b > 0));
        assert_eq!(free_disk(Path::new("/no/such/directory")), None);
    }
}
