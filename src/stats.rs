//! Statistics of a table: its counts of wins, draws and losses, its longest
//! win, and the manifest checksum of its values, with the manifest line
//! that records them.

use crate::checksum::ManifestChecksum;
use crate::finished::open_pair;
use crate::material::Material;
use crate::rules::{RuleSet, Wdl};
use crate::table::TableError;
use crate::value::Value;
use rayon::prelude::*;
use std::path::Path;

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
    /// The manifest checksum of the decoded values ([`ManifestChecksum`]), as hex.
    pub checksum: String,
}

impl TableStats {
    /// The statistics a manifest line gives (see [`TableStats::manifest_line`]);
    /// `None` if the line does not have that form.
    ///
    /// ```
    /// use frisian_tb::TableStats;
    /// let line = "official KvK 7350 1296 6050 4 1 0123456789abcdef";
    /// let stats = TableStats::from_manifest_line(line).unwrap();
    /// assert_eq!((stats.material.as_str(), stats.wins), ("KvK", 1296));
    /// assert_eq!(stats.manifest_line(), line);
    /// assert!(TableStats::from_manifest_line("official KvK 7350").is_none());
    /// ```
    pub fn from_manifest_line(line: &str) -> Option<TableStats> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [rules, material, states, wins, draws, losses, longest_win, checksum] = f[..] else {
            return None;
        };
        (checksum.len() == 16 && checksum.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())?;
        Some(TableStats {
            material: material.to_string(),
            rules: rules.to_string(),
            states: states.parse().ok()?,
            wins: wins.parse().ok()?,
            draws: draws.parse().ok()?,
            losses: losses.parse().ok()?,
            longest_win: longest_win.parse().ok()?,
            checksum: checksum.to_string(),
        })
    }

    /// The table's line in `tables/MANIFEST`:
    /// `rules material states wins draws losses longest_win checksum`.
    pub fn manifest_line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {}",
            self.rules,
            self.material,
            self.states,
            self.wins,
            self.draws,
            self.losses,
            self.longest_win,
            self.checksum
        )
    }
}

/// Win, draw and loss counts and the longest win of a run of values.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Counts {
    pub(crate) wins: u64,
    pub(crate) draws: u64,
    pub(crate) losses: u64,
    pub(crate) longest_win: u32,
}

impl Counts {
    /// The counts of two parts of a table together.
    pub(crate) fn merge(self, o: Counts) -> Counts {
        Counts {
            wins: self.wins + o.wins,
            draws: self.draws + o.draws,
            losses: self.losses + o.losses,
            longest_win: self.longest_win.max(o.longest_win),
        }
    }

    /// Count one value. Without branches: wins, draws and losses alternate
    /// unpredictably, and this runs for every state of every table.
    #[inline]
    pub(crate) fn add(&mut self, v: Value) {
        let win = v.wdl == Wdl::Win;
        self.wins += win as u64;
        self.draws += (v.wdl == Wdl::Draw) as u64;
        self.losses += (v.wdl == Wdl::Loss) as u64;
        self.longest_win = self.longest_win.max(if win { v.dtw as u32 } else { 0 });
    }
}

/// Statistics and the manifest checksum of packed values ([`Value::pack`]).
pub fn stats(material: Material, rules: RuleSet, values: &[u16]) -> TableStats {
    let mut s = StreamStats::default();
    s.add(values);
    s.finish(material, rules, values.len() as u64)
}

/// Statistics and the manifest checksum of a finished table in `dir`, read
/// a group of blocks at a time (memory bounded by the group, not the table:
/// loading the largest five-piece table whole took 5.8 GB), its files'
/// value checksums checked.
pub fn table_stats(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<TableStats, TableError> {
    let (wdl_file, dtw_file) = open_pair(dir, material, rules)?;
    let dtw_header = dtw_file.header().clone();
    let mut stats = StreamStats::default();
    wdl_file.for_each_group_with_dtw(
        &dtw_file,
        |w, d| Value::stored(w, d, &dtw_header).pack(),
        |values: &[u16]| stats.add(values),
    )?;
    Ok(stats.finish(material, rules, wdl_file.header().states))
}

/// Statistics and the manifest checksum of a table's packed values
/// ([`Value::pack`]) given a group at a time, in index order: each group is
/// counted and hashed in parallel.
#[derive(Default)]
pub(crate) struct StreamStats {
    counts: Counts,
    sum: ManifestChecksum,
}

impl StreamStats {
    /// Add the next group.
    pub(crate) fn add(&mut self, packed: &[u16]) {
        let counts = packed
            .par_chunks(ManifestChecksum::CHUNK)
            .map(|c| {
                let mut k = Counts::default();
                c.iter()
                    .filter_map(|&v| Value::unpack(v))
                    .for_each(|v| k.add(v));
                k
            })
            .reduce(Counts::default, Counts::merge);
        self.counts = self.counts.merge(counts);
        self.sum.update(packed);
    }

    /// The counts so far.
    pub(crate) fn counts(&self) -> Counts {
        self.counts
    }

    /// The statistics of the table (`states` states in all).
    pub(crate) fn finish(self, material: Material, rules: RuleSet, states: u64) -> TableStats {
        stats_with(material, rules, states, self.counts, self.sum.finish())
    }
}

/// The statistics of a table from its counts and checksum.
pub(crate) fn stats_with(
    material: Material,
    rules: RuleSet,
    states: u64,
    counts: Counts,
    checksum: u64,
) -> TableStats {
    TableStats {
        material: material.to_string(),
        rules: rules.name().to_string(),
        states,
        wins: counts.wins,
        draws: counts.draws,
        losses: counts.losses,
        longest_win: counts.longest_win,
        checksum: format!("{checksum:016x}"),
    }
}
