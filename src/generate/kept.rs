//! Finished values kept between pairs: the work files of tables this run
//! solved, copied by the pairs that read them instead of decoding the
//! tables' files.

use super::os::{read_exact_at, resident_fraction};
use crate::finished::Solved;
use crate::material::Material;
use crate::rules::RuleSet;
use crate::table::TableError;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

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

    /// The finished tables `mats` from the run's directory: the values kept
    /// here copied, the others decoded.
    pub(super) fn load(&self, mats: &[Material]) -> Result<Solved, TableError> {
        Solved::load_with(&self.dir, self.rules, mats, &|m, out| self.read(m, out))
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
        if !self.files.iter().any(|f| f.0 == m) {
            return false;
        }
        let Ok(file) = std::fs::File::open(self.path(m)) else {
            return false;
        };
        if file.metadata().map(|md| md.len()).ok() != Some(out.len() as u64) {
            return false;
        }
        // A host may drop page cache left unused for a minute or so, and a
        // slow disk then reads a kept file far slower than its table files
        // decode (2.9 GB against 214 MB compressed for KKMvKM). So a file
        // mostly gone from the cache is not copied: the caller decodes.
        if resident_fraction(&file, out.len()).is_some_and(|f| f < MIN_RESIDENT) {
            return false;
        }
        // Pieces of 16 MiB on every thread: the copy and the faults of
        // fresh memory share the cores.
        const PIECE: usize = 1 << 24;
        out.par_chunks_mut(PIECE)
            .enumerate()
            .all(|(i, piece)| read_exact_at(&file, piece, (i * PIECE) as u64).is_ok())
    }
}

/// The least share of a kept file that must be in the page cache for
/// [`Kept::read`] to copy it rather than decode the table: the rest, read
/// from a slow disk (45 MB/s), then takes about as long as decoding.
const MIN_RESIDENT: f64 = 0.9;

impl Drop for Kept {
    fn drop(&mut self) {
        for &(m, _) in &self.files {
            let _ = std::fs::remove_file(self.path(m));
        }
    }
}

/// File name extension of [`Kept`] values.
const KEPT_EXTENSION: &str = "values";

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A solved pair's work file holds exactly its table's decoded values,
    /// so a later pair may copy them instead of decoding; what a run keeps
    /// it removes, and a new run removes what an interrupted one left.
    #[test]
    fn kept_work_files_are_the_decoded_tables() {
        use crate::finished::load_values;
        use crate::generate::{pair::solve_pair_keeping, run, Plan, Quiet};
        use crate::index::MaterialIndex;
        use crate::material::successor_materials;
        use crate::value::Value;
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
        let decoded = load_values(&dir, m, rules).unwrap();
        assert!(
            copied
                .iter()
                .map(|&b| Value::from_byte(b).map_or(0, Value::pack))
                .eq(decoded.iter().copied()),
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
}
