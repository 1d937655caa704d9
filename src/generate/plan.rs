//! What to generate, and what it will take: the plan of a run, the pairs
//! still pending, and each pair's memory estimate.

use super::batch::BATCH_STATES;
use crate::finished::is_complete;
use crate::index::MaterialIndex;
use crate::material::{successor_materials, Material};
use crate::rules::RuleSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
/// decoded sub-tables (a byte per state, see [`Solved`](crate::finished::Solved); two for a table with
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
