//! Finished tables read back: decoded values for looking up the results of
//! captures and promotions.

use super::memory::{prefetch, ValueArray};
use super::{white_to_move, GenerateError, Value};
use crate::index::{MaterialIndex, PlacementCache};
use crate::material::Material;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl};
use crate::table::{self, Metric, TableError, TableFile};
use std::path::Path;

/// The decoded values of finished tables, for reading the results of
/// captures and promotions (and, in [`crate::verify`], of every successor).
/// There are only a handful, so a linear search beats hashing.
pub struct Solved {
    tables: Vec<(Material, MaterialIndex, ValueArray)>,
}

impl Solved {
    /// Decode the tables of `mats` (each once) from `dir`.
    pub(crate) fn load(
        dir: &Path,
        rules: RuleSet,
        mats: &[Material],
    ) -> Result<Solved, GenerateError> {
        let mut tables: Vec<(Material, MaterialIndex, ValueArray)> = Vec::new();
        for &m in mats {
            if !tables.iter().any(|t| t.0 == m) {
                let states = table_states(dir, m, rules)?;
                let mut values = ValueArray::for_decoding(states as usize).map_err(|source| {
                    GenerateError::Table(TableError::Io {
                        path: dir.join(table::file_name(m, rules, Metric::Wdl)),
                        source,
                    })
                })?;
                decode_values_into(dir, m, rules, values.as_mut_slice())?;
                tables.push((m, MaterialIndex::new(m, rules), values));
            }
        }
        Ok(Solved { tables })
    }

    /// The stored value of a position that is not over. The placement part of
    /// its index is cached; the counter part is computed without flipping.
    #[inline]
    pub(crate) fn stored(&self, pos: &Position, cache: &mut PlacementCache) -> Value {
        let (t, i) = self.locate(pos, cache);
        self.at(t, i)
    }

    /// Where [`Solved::stored`] reads `pos`'s value: table number and index.
    #[inline]
    pub(super) fn locate(&self, pos: &Position, cache: &mut PlacementCache) -> (u32, u64) {
        let (t, base) = cache.get(pos, || {
            let w = white_to_move(pos);
            let m = Material::of(&w);
            let t = self
                .tables
                .iter()
                .position(|x| x.0 == m)
                .expect("the table of every successor is loaded");
            (t as u32, self.tables[t].1.placement_base(&w))
        });
        (t, base + self.tables[t as usize].1.counters_offset(pos))
    }

    /// The value at index `i` of table number `t` (from [`Solved::locate`]).
    #[inline]
    pub(super) fn at(&self, t: u32, i: u64) -> Value {
        Value::unpack(self.tables[t as usize].2[i as usize])
            .expect("finished tables hold only known values")
    }

    /// Ask the processor to fetch the value [`Solved::at`] will read.
    #[inline]
    pub(super) fn prefetch(&self, t: u32, i: u64) {
        if let Some(v) = self.tables[t as usize].2.get(i as usize) {
            prefetch(v);
        }
    }
}

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
    decode_values_into(dir, material, rules, &mut out)?;
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

/// The number of states of a finished table (from its WDL file's header).
fn table_states(dir: &Path, material: Material, rules: RuleSet) -> Result<u64, GenerateError> {
    Ok(open_table(dir, material, rules, Metric::Wdl)?
        .header()
        .states)
}

/// Decode a finished table's values into `out`, which must have one slot per
/// state: both files together, a group of blocks at a time, so the peak is
/// the packed values alone.
fn decode_values_into(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    out: &mut [u16],
) -> Result<(), GenerateError> {
    let wdl_file = open_table(dir, material, rules, Metric::Wdl)?;
    let dtw_file = open_table(dir, material, rules, Metric::Dtw)?;
    // `decode_with_dtw_into` checks that each file has one value per slot of
    // `out`. A draw's DTW is 0, whatever the file holds there (see
    // `Metric::Dtw`).
    let dtw_header = dtw_file.header();
    wdl_file.decode_with_dtw_into(&dtw_file, out, |w, d| {
        let wdl = match w {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            _ => Wdl::Win,
        };
        let dtw = dtw_header.dtw_plies(d, wdl);
        Value { wdl, dtw }.pack()
    })?;
    Ok(())
}
