//! Writing a solved table: its WDL and DTW files, its statistics and its
//! manifest line.

use super::{GenerateError, Value};
use crate::material::Material;
use crate::rules::{RuleSet, Wdl};
use crate::table::{self, Metric, TableData};
use rayon::prelude::*;
use std::path::Path;

/// Packed values of states `start..start + len`, read on demand.
type ValueSource<'a> = &'a (dyn Fn(u64, usize) -> Vec<u16> + Sync);

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
    fn merge(self, o: Counts) -> Counts {
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

/// A table's counts and its largest DTW (which decides the DTW file's value
/// width), gathered while its values are written or read.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Tally {
    counts: Counts,
    max_dtw: u16,
}

impl Tally {
    #[inline]
    pub(super) fn add(&mut self, v: Value) {
        self.counts.add(v);
        self.max_dtw = self.max_dtw.max(v.dtw);
    }

    pub(super) fn merge(self, o: Tally) -> Tally {
        Tally {
            counts: self.counts.merge(o.counts),
            max_dtw: self.max_dtw.max(o.max_dtw),
        }
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

impl TableStats {
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

/// Statistics and the manifest checksum of packed values.
pub fn stats(material: Material, rules: RuleSet, values: &[u16]) -> TableStats {
    stats_from(material, rules, values.len() as u64, &|start, len| {
        values[start as usize..start as usize + len].to_vec()
    })
    .0
}

/// Statistics of packed values read on demand, and the largest DTW.
fn stats_from(
    material: Material,
    rules: RuleSet,
    states: u64,
    read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync),
) -> (TableStats, u16) {
    let tally = counts_from(states, read);
    let st = stats_with(
        material,
        rules,
        states,
        tally.counts,
        manifest_checksum(states, read),
    );
    (st, tally.max_dtw)
}

/// States per read of a pass over a table: small enough that the buffers
/// come from the allocator's free lists (with 1 << 20 they were the largest
/// fresh allocations while the KKMvKM pair's files were written, of which
/// the kernel's zeroing of fresh pages took 7%).
const STATS_CHUNK: u64 = 1 << 15;

/// The counts of wins, draws and losses, the longest win and the largest
/// DTW of packed values read on demand (in parallel).
fn counts_from(states: u64, read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync)) -> Tally {
    (0..states.div_ceil(STATS_CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * STATS_CHUNK;
            let mut tally = Tally::default();
            for v in read(start, (states - start).min(STATS_CHUNK) as usize) {
                tally.add(Value::unpack(v).expect("solved"));
            }
            tally
        })
        .reduce(Tally::default, Tally::merge)
}

/// The manifest checksum (FNV-1a 64 over each state's WDL byte and DTW as
/// u16 little-endian, in index order): serial by its nature.
fn manifest_checksum(states: u64, read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync)) -> u64 {
    let mut sum = table::Fnv::default();
    for start in (0..states).step_by(STATS_CHUNK as usize) {
        for v in read(start, (states - start).min(STATS_CHUNK) as usize) {
            let v = Value::unpack(v).expect("solved");
            sum.update_record(v.wdl as u8, v.dtw);
        }
    }
    sum.0
}

fn stats_with(
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

/// Write the WDL and DTW files of a solved table into `dir`.
pub fn write_tables(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    values: &[u16],
) -> Result<TableStats, GenerateError> {
    let read = |start: u64, len: usize| values[start as usize..start as usize + len].to_vec();
    write_tables_from(dir, material, rules, values.len() as u64, &read, None)
}

/// Write the WDL and DTW files of a table whose packed values are read on demand.
pub(super) fn write_tables_from(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    states: u64,
    read: &(dyn Fn(u64, usize) -> Vec<u16> + Sync),
    tally: Option<Tally>,
) -> Result<TableStats, GenerateError> {
    let Tally { counts: c, max_dtw } = tally.unwrap_or_else(|| counts_from(states, read));
    let counts = (c.wins, c.draws, c.losses);
    let wdl = |start: u64, len: usize| -> Vec<u16> {
        let mut values = read(start, len);
        for v in &mut values {
            *v = Value::unpack(*v).expect("solved").wdl as u16;
        }
        values
    };
    // Called once per block: a drawn state repeats the DTW before it in the
    // block (a draw at the start takes the block's first DTW of a decided
    // state), so that draws do not break the runs zstd compresses.
    let dtw = |start: u64, len: usize| -> Vec<u16> {
        let mut values = read(start, len);
        let unpack = |v: u16| Value::unpack(v).expect("solved");
        let mut last = values
            .iter()
            .map(|&v| unpack(v))
            .find(|v| v.wdl != Wdl::Draw)
            .map_or(0, |v| v.dtw);
        for v in &mut values {
            let value = unpack(*v);
            if value.wdl != Wdl::Draw {
                // What makes the halved DTW files possible (`Header::dtw_halved`).
                debug_assert_eq!(value.dtw % 2 == 1, value.wdl == Wdl::Win, "DTW parity");
                last = value.dtw;
            }
            *v = last;
        }
        values
    };
    let sources: [(Metric, ValueSource<'_>, u16); 2] =
        [(Metric::Dtw, &dtw, max_dtw), (Metric::Wdl, &wdl, 2)];
    let write = || -> Result<(), GenerateError> {
        for (metric, values, max_value) in sources {
            let path = dir.join(table::file_name(material, rules, metric));
            table::write_table(
                &path,
                &TableData {
                    metric,
                    rules,
                    material,
                    states,
                    values,
                    max_value,
                    counts,
                    longest_win: c.longest_win,
                },
            )?;
        }
        Ok(())
    };
    // The manifest checksum is serial: one thread computes it while the
    // others compress (it was 15% of writing a pair's files).
    let (checksum, written) = rayon::join(|| manifest_checksum(states, read), write);
    written?;
    Ok(stats_with(material, rules, states, c, checksum))
}
