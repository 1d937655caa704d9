//! Finished tables read back: decoded values for looking up the results of
//! captures and promotions.

use super::memory::{prefetch, ValueArray};
use super::{white_to_move, GenerateError, Value};
use crate::index::{MaterialIndex, PlacementCache};
use crate::material::Material;
use crate::position::Position;
use crate::rules::RuleSet;
use crate::table::{self, Metric, TableError, TableFile};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The decoded values of finished tables, for reading the results of
/// captures and promotions (and, in [`crate::verify`], of every successor).
/// There are only a handful, so a linear search beats hashing.
pub struct Solved {
    tables: Vec<(Material, MaterialIndex, Values)>,
}

/// One finished table's values in memory: a byte per state wherever every
/// value fits one ([`Value::to_byte`]; so in every table up to five pieces),
/// else two ([`Value::pack`]). A byte halves the largest part of a
/// five-piece pair's memory (KMMvKM reads KKMvKM, 2.9e9 states) and the
/// span of the lookups at random into it.
enum Values {
    Bytes(ValueArray<u8>),
    Wide(ValueArray<u16>),
}

impl Values {
    /// Decode the table of `m` from `dir`: in bytes, or, if some value does
    /// not fit one, again in two bytes per state.
    /// Values this run kept (`kept`) are copied instead.
    fn load(
        dir: &Path,
        m: Material,
        rules: RuleSet,
        kept: Option<&Kept>,
    ) -> Result<Values, GenerateError> {
        let states = table_states(dir, m, rules)? as usize;
        let no_memory = |source| {
            GenerateError::Table(TableError::Io {
                path: dir.join(table::file_name(m, rules, Metric::Wdl)),
                source,
            })
        };
        let mut bytes = ValueArray::<u8>::for_decoding(states).map_err(no_memory)?;
        if kept.is_some_and(|k| k.read(m, bytes.as_mut_slice())) {
            return Ok(Values::Bytes(bytes));
        }
        let too_long = AtomicBool::new(false);
        decode_values_into(dir, m, rules, bytes.as_mut_slice(), |v| {
            v.to_byte().unwrap_or_else(|| {
                too_long.store(true, Relaxed);
                0
            })
        })?;
        if !too_long.load(Relaxed) {
            return Ok(Values::Bytes(bytes));
        }
        drop(bytes);
        let mut wide = ValueArray::<u16>::for_decoding(states).map_err(no_memory)?;
        decode_values_into(dir, m, rules, wide.as_mut_slice(), Value::pack)?;
        Ok(Values::Wide(wide))
    }

    #[inline]
    fn at(&self, i: u64) -> Value {
        match self {
            Values::Bytes(a) => Value::from_byte(a[i as usize]),
            Values::Wide(a) => Value::unpack(a[i as usize]),
        }
        .expect("finished tables hold only known values")
    }

    #[inline]
    fn prefetch(&self, i: u64) {
        match self {
            Values::Bytes(a) => a.get(i as usize).map(prefetch),
            Values::Wide(a) => a.get(i as usize).map(prefetch),
        };
    }
}

impl Solved {
    /// Decode the tables of `mats` (each once) from `dir`.
    pub(crate) fn load(
        dir: &Path,
        rules: RuleSet,
        mats: &[Material],
    ) -> Result<Solved, GenerateError> {
        Solved::load_keeping(dir, rules, mats, None)
    }

    /// [`Solved::load`], reading the values `kept` holds from there.
    pub(super) fn load_keeping(
        dir: &Path,
        rules: RuleSet,
        mats: &[Material],
        kept: Option<&Kept>,
    ) -> Result<Solved, GenerateError> {
        let mut tables: Vec<(Material, MaterialIndex, Values)> = Vec::new();
        for &m in mats {
            if !tables.iter().any(|t| t.0 == m) {
                let values = Values::load(dir, m, rules, kept)?;
                tables.push((m, MaterialIndex::new(m, rules), values));
            }
        }
        Ok(Solved { tables })
    }

    /// The table number of `pos` and the index of its placement's first
    /// state (every counter 0) there. Its own index there adds
    /// [`Solved::counters_offset`]. The placement part is cached.
    #[inline]
    pub(crate) fn locate_placement(
        &self,
        pos: &Position,
        cache: &mut PlacementCache,
    ) -> (u32, u64) {
        cache.get(pos, || {
            let w = white_to_move(pos);
            let m = Material::of(&w);
            let t = self
                .tables
                .iter()
                .position(|x| x.0 == m)
                .expect("the table of every successor is loaded");
            (t as u32, self.tables[t].1.placement_base(&w))
        })
    }

    /// Whether the states of table number `t` have counters (more than one
    /// state per placement).
    #[inline]
    pub(super) fn has_counters(&self, t: u32) -> bool {
        self.tables[t as usize].1.counters_per_placement() > 1
    }

    /// The index of table number `t`.
    #[inline]
    pub(super) fn index(&self, t: u32) -> &MaterialIndex {
        &self.tables[t as usize].1
    }

    /// The counter part of the index of `pos` in table number `t`.
    #[inline]
    pub(crate) fn counters_offset(&self, t: u32, pos: &Position) -> u64 {
        self.tables[t as usize].1.counters_offset(pos)
    }

    /// The value at index `i` of table number `t`: a placement's first state
    /// ([`Solved::locate_placement`]) plus [`Solved::counters_offset`].
    #[inline]
    pub(crate) fn at(&self, t: u32, i: u64) -> Value {
        self.tables[t as usize].2.at(i)
    }

    /// Ask the processor to fetch the value [`Solved::at`] will read.
    #[inline]
    pub(crate) fn prefetch(&self, t: u32, i: u64) {
        self.tables[t as usize].2.prefetch(i)
    }
}

/// The values of tables this run solved, kept in the work files they were
/// solved in, for the pairs that read them later.
///
/// Once a pair is solved, its work file holds exactly what decoding its table
/// gives: a byte per state as [`Value::to_byte`] codes it, in index order
/// (the table files are written from it). Copying it back is much cheaper
/// than decoding both compressed files: KMMvKM reads KKMvKM (2.9e9 states)
/// for its promotions, which took 6.4-9.0 s to decode.
///
/// Only files this process kept are trusted: [`Kept::new`] removes those an
/// interrupted run left behind, and dropping a `Kept` removes its own. A
/// file is kept only while a later pair needs it and the files kept fit a
/// budget (about what the page cache can hold, so that a copy does not wait
/// for the disk); one the host has mostly dropped from the cache since is
/// decoded from its table instead (see [`Kept::read`]).
pub(super) struct Kept {
    dir: PathBuf,
    rules: RuleSet,
    budget: u64,
    /// Materials whose work files are wanted (some pair still to solve reads them).
    wanted: Vec<Material>,
    /// Files kept, with their sizes.
    files: Vec<(Material, u64)>,
}

impl Kept {
    /// Keep values in `dir` up to `budget` bytes; files of an earlier run are removed.
    pub(super) fn new(dir: &Path, rules: RuleSet, budget: u64) -> Kept {
        let tail = format!(".{}.{KEPT_EXTENSION}", rules.name());
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().ends_with(&tail) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Kept {
            dir: dir.to_path_buf(),
            rules,
            budget,
            wanted: Vec::new(),
            files: Vec::new(),
        }
    }

    fn path(&self, m: Material) -> PathBuf {
        self.dir
            .join(format!("{m}.{}.{KEPT_EXTENSION}", self.rules.name()))
    }

    /// From now on, keep only the values of `wanted` (removing others kept so far).
    pub(super) fn want(&mut self, wanted: Vec<Material>) {
        let (keep, drop): (Vec<_>, Vec<_>) =
            self.files.iter().partition(|(m, _)| wanted.contains(m));
        for (m, _) in drop {
            let _ = std::fs::remove_file(self.path(m));
        }
        self.files = keep;
        self.wanted = wanted;
    }

    /// Take the finished work file `work` of `m` (`bytes` long): kept if
    /// wanted and within the budget, else removed.
    pub(super) fn offer(&mut self, m: Material, work: &Path, bytes: u64) {
        let used: u64 = self.files.iter().map(|f| f.1).sum();
        if self.wanted.contains(&m)
            && used + bytes <= self.budget
            && std::fs::rename(work, self.path(m)).is_ok()
        {
            self.files.push((m, bytes));
        } else {
            let _ = std::fs::remove_file(work);
        }
    }

    /// Copy the kept values of `m` into `out` (one byte per state); false if
    /// they are not kept or cannot be read whole, and then `out` must be
    /// filled otherwise.
    fn read(&self, m: Material, out: &mut [u8]) -> bool {
        use std::os::unix::fs::FileExt;
        if !self.files.iter().any(|f| f.0 == m) {
            return false;
        }
        let Ok(file) = std::fs::File::open(self.path(m)) else {
            return false;
        };
        if file.metadata().map(|md| md.len()).ok() != Some(out.len() as u64) {
            return false;
        }
        // The host's page reclaim drops page cache left unused for about a
        // minute (BENCHMARKS.md, 2026-12-07), and the disk then read a kept
        // file at 45 MB/s: the KMMvKM pair waited 65 s for KKMvKM's 2.9 GB,
        // where decoding its table files (214 MB) takes 6-9 s. So a file
        // mostly gone from the cache is not copied: the caller decodes.
        if resident_fraction(&file, out.len()).is_some_and(|f| f < MIN_RESIDENT) {
            return false;
        }
        // Pieces of 16 MiB on every thread: the copy and the faults of
        // fresh memory share the cores.
        const PIECE: usize = 1 << 24;
        out.par_chunks_mut(PIECE)
            .enumerate()
            .all(|(i, piece)| file.read_exact_at(piece, (i * PIECE) as u64).is_ok())
    }
}

/// The least share of a kept file that must be in the page cache for
/// [`Kept::read`] to copy it rather than decode the table: the rest, read
/// from a slow disk (45 MB/s), then takes about as long as decoding.
const MIN_RESIDENT: f64 = 0.9;

/// The share of the first `len` bytes of `file` that is in the page cache;
/// `None` if the kernel does not say.
fn resident_fraction(file: &std::fs::File, len: usize) -> Option<f64> {
    if len == 0 {
        return Some(1.0);
    }
    // SAFETY: the map is only passed to `mincore`, which reads no byte of it,
    // so a change to the file meanwhile cannot matter.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    let mut resident = vec![0u8; len.div_ceil(page)];
    // SAFETY: `map` covers `len` bytes from a page-aligned address, and
    // `resident` has a byte for each of its pages, as `mincore` requires.
    let ok = unsafe { libc::mincore(map.as_ptr() as *mut _, len, resident.as_mut_ptr()) } == 0;
    ok.then(|| resident.iter().filter(|&&b| b & 1 != 0).count() as f64 / resident.len() as f64)
}

impl Drop for Kept {
    fn drop(&mut self) {
        for &(m, _) in &self.files {
            let _ = std::fs::remove_file(self.path(m));
        }
    }
}

/// File name extension of [`Kept`] values.
const KEPT_EXTENSION: &str = "values";

/// Whether both files of a table exist and open cleanly.
pub fn is_complete(dir: &Path, material: Material, rules: RuleSet) -> bool {
    [Metric::Wdl, Metric::Dtw].iter().all(|&metric| {
        let path = dir.join(table::file_name(material, rules, metric));
        TableFile::open_expecting(&path, material, rules, metric).is_ok()
    })
}

/// The files of a table that exist but do not open cleanly (truncated,
/// corrupt, or built for another rule set, material or format version), with
/// what is wrong: a run generates them again, and says so.
pub fn damaged(dir: &Path, material: Material, rules: RuleSet) -> Vec<TableError> {
    [Metric::Wdl, Metric::Dtw]
        .iter()
        .filter_map(|&metric| {
            let path = dir.join(table::file_name(material, rules, metric));
            if !path.exists() {
                return None;
            }
            TableFile::open_expecting(&path, material, rules, metric).err()
        })
        .collect()
}

/// The decoded values of a finished table (packed as `Value::pack` does).
pub fn load_values(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<Vec<u16>, GenerateError> {
    let mut out = vec![0u16; table_states(dir, material, rules)? as usize];
    decode_values_into(dir, material, rules, &mut out, Value::pack)?;
    Ok(out)
}

fn open_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    metric: Metric,
) -> Result<TableFile, GenerateError> {
    let path = dir.join(table::file_name(material, rules, metric));
    if !path.exists() {
        return Err(GenerateError::Missing(table::file_name(
            material, rules, metric,
        )));
    }
    Ok(TableFile::open_expecting(&path, material, rules, metric)?)
}

/// A finished table's WDL and DTW files.
pub(super) fn open_pair(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<(TableFile, TableFile), GenerateError> {
    Ok((
        open_table(dir, material, rules, Metric::Wdl)?,
        open_table(dir, material, rules, Metric::Dtw)?,
    ))
}

/// The number of states of a finished table (from its WDL file's header).
fn table_states(dir: &Path, material: Material, rules: RuleSet) -> Result<u64, GenerateError> {
    Ok(open_table(dir, material, rules, Metric::Wdl)?
        .header()
        .states)
}

/// Decode a finished table's values into `out`, which must have one slot per
/// state, each coded by `code`: both files together, a group of blocks at a
/// time, so the peak is the coded values alone.
fn decode_values_into<T: Send>(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    out: &mut [T],
    code: impl Fn(Value) -> T + Sync,
) -> Result<(), GenerateError> {
    let (wdl_file, dtw_file) = open_pair(dir, material, rules)?;
    // `decode_with_dtw_into` checks that each file has one value per slot of
    // `out`.
    let dtw_header = dtw_file.header();
    wdl_file.decode_with_dtw_into(&dtw_file, out, |w, d| code(Value::stored(w, d, dtw_header)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Wdl;
    use std::time::Duration;

    /// A file just written is in the page cache, so a kept file is copied
    /// after the pair that wrote it; a file of no bytes counts as resident.
    #[test]
    fn a_file_just_written_is_resident() {
        let dir = std::env::temp_dir().join(format!("ftb-resident-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("values");
        std::fs::write(&path, vec![7u8; 3 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let f = resident_fraction(&file, 3 << 20).unwrap();
        assert!(f >= MIN_RESIDENT, "{f}");
        assert_eq!(resident_fraction(&file, 0), Some(1.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Every value that fits a byte comes back from it unchanged, every byte
    /// but 0 ("not known yet") is some value's code, and values that do not
    /// fit are refused.
    #[test]
    fn values_in_a_byte_round_trip() {
        let mut coded = 0;
        for wdl in [Wdl::Loss, Wdl::Draw, Wdl::Win] {
            for dtw in 0..400u16 {
                let v = Value { wdl, dtw };
                // A win's DTW is odd, a loss's even, a draw's 0.
                let fits = match wdl {
                    Wdl::Draw => dtw == 0,
                    Wdl::Win => dtw % 2 == 1 && dtw <= 253,
                    Wdl::Loss => dtw % 2 == 0 && dtw <= 252,
                };
                assert_eq!(v.to_byte().is_some(), fits, "{v:?}");
                if let Some(b) = v.to_byte() {
                    assert_eq!(Value::from_byte(b), Some(v));
                    coded += 1;
                }
            }
        }
        assert_eq!(coded, 255);
        assert_eq!(Value::from_byte(0), None);
        for b in 1..=255u8 {
            assert_eq!(Value::from_byte(b).and_then(Value::to_byte), Some(b));
        }
    }

    /// A solved pair's work file holds exactly its table's decoded values,
    /// so a later pair may copy them instead of decoding; what a run keeps
    /// it removes, and a new run removes what an interrupted one left.
    #[test]
    fn kept_work_files_are_the_decoded_tables() {
        use crate::generate::{pair::solve_pair_keeping, run, successor_materials, Plan, Quiet};
        let dir = std::env::temp_dir().join(format!("frisian-tb-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rules = RuleSet::Official;
        let m: Material = "KMvK".parse().unwrap();
        // Everything KMvK needs, by a whole run: which leaves only table files.
        let mut plan = Plan::material(rules, &dir, m);
        plan.materials.retain(|&x| x != m && x != m.flip());
        run(&plan, &Quiet).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(
                name.ends_with(".wdl") || name.ends_with(".dtw"),
                "{name} left behind"
            );
        }
        let mut needed = successor_materials(m);
        needed.extend(successor_materials(m.flip()));
        let solved = Solved::load(&dir, rules, &needed).unwrap();
        let stale = dir.join(format!("KKvK.{}.{KEPT_EXTENSION}", rules.name()));
        std::fs::write(&stale, b"left by an interrupted run").unwrap();
        let mut kept = Kept::new(&dir, rules, u64::MAX);
        assert!(!stale.exists());
        // KMvK is wanted, its flip is not.
        kept.want(vec![m]);
        solve_pair_keeping(
            m,
            rules,
            &dir,
            &solved,
            Duration::ZERO,
            &Quiet,
            Some(&mut kept),
        )
        .unwrap();
        assert!(!kept.path(m.flip()).exists());
        let states = MaterialIndex::new(m, rules).size() as usize;
        let mut copied = vec![0u8; states];
        assert!(kept.read(m, &mut copied));
        assert!(!kept.read(m.flip(), &mut copied[..1]));
        let Values::Bytes(decoded) = Values::load(&dir, m, rules, None).unwrap() else {
            panic!("KMvK fits a byte a state");
        };
        assert!(
            copied.iter().eq(decoded.iter()),
            "kept values differ from the table's"
        );
        // Wrong length: refused, so the caller decodes.
        assert!(!kept.read(m, &mut copied[1..]));
        let path = kept.path(m);
        assert!(path.exists());
        drop(kept);
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A table whose values all fit a byte is held in bytes; one with a win
    /// too long for a byte in two bytes a state; either way every value reads
    /// back as written.
    #[test]
    fn finished_tables_read_back_in_bytes_or_wide() {
        let dir = std::env::temp_dir().join(format!("frisian-tb-solved-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m: Material = "KvK".parse().unwrap();
        let rules = RuleSet::Official;
        let states = MaterialIndex::new(m, rules).size() as usize;
        for (longest, bytes) in [(253u16, true), (301, false)] {
            let values: Vec<u16> = (0..states)
                .map(|i| {
                    let (wdl, dtw) = match i % 5 {
                        0 => (Wdl::Draw, 0),
                        1 => (Wdl::Win, longest),
                        2 => (Wdl::Win, (2 * i as u16 + 1) % 254),
                        3 => (Wdl::Loss, 252),
                        _ => (Wdl::Loss, (2 * i as u16) % 254),
                    };
                    Value { wdl, dtw }.pack()
                })
                .collect();
            crate::generate::write_tables(&dir, m, rules, &values).unwrap();
            let solved = Solved::load(&dir, rules, &[m]).unwrap();
            assert_eq!(matches!(solved.tables[0].2, Values::Bytes(_)), bytes);
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(solved.at(0, i as u64).pack(), v, "state {i}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
