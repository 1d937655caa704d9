//! A run: every pending pair of a plan, in build order.

use super::error::GenerateError;
use super::kept::Kept;
use super::os::free_disk;
use super::pair::solve_pair_keeping;
use super::plan::{available_memory, memory_estimate, Plan};
use super::progress::Progress;
use crate::index::MaterialIndex;
use crate::material::{successor_materials, Material};
use crate::stats::TableStats;

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
        let solved = match kept.load(&needed).map_err(GenerateError::from) {
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
        written.extend(solve_pair_keeping(
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
    use crate::generate::os::free_disk;
    use std::path::Path;

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
