//! Finished tables read back whole: the decoded values of the tables that
//! a pair being generated, or a table being verified, looks its captures,
//! promotions (and, in verification, every move) up in; whether a table's
//! files are complete; and a table's values decoded in one pass.

use crate::index::{MaterialIndex, PlacementCache};
use crate::material::Material;
use crate::memory::{prefetch, ValueArray};
use crate::position::Position;
use crate::rules::RuleSet;
use crate::table::{self, Metric, TableError, TableFile};
use crate::value::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The decoded values of finished tables, for reading the results of
/// captures and promotions (and, in verification, of every successor).
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
    /// not fit one, again in two bytes per state. Where `copy` fills the
    /// bytes itself (from values the caller kept, see [`Solved::load_with`])
    /// they are taken from there instead.
    fn load(
        dir: &Path,
        m: Material,
        rules: RuleSet,
        copy: &dyn Fn(Material, &mut [u8]) -> bool,
    ) -> Result<Values, TableError> {
        let states = table_states(dir, m, rules)? as usize;
        let no_memory = |source| TableError::Io {
            path: dir.join(table::file_name(m, rules, Metric::Wdl)),
            source,
        };
        let mut bytes = ValueArray::<u8>::for_decoding(states).map_err(no_memory)?;
        if copy(m, bytes.as_mut_slice()) {
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
    pub fn load(dir: &Path, rules: RuleSet, mats: &[Material]) -> Result<Solved, TableError> {
        Solved::load_with(dir, rules, mats, &|_, _| false)
    }

    /// [`Solved::load`], except where `copy` fills a table's bytes (one per
    /// state, as [`Value::to_byte`] codes them) itself and returns true: the
    /// generator copies the values of tables it has just solved from its
    /// work files instead of decoding their files.
    pub fn load_with(
        dir: &Path,
        rules: RuleSet,
        mats: &[Material],
        copy: &dyn Fn(Material, &mut [u8]) -> bool,
    ) -> Result<Solved, TableError> {
        let mut tables: Vec<(Material, MaterialIndex, Values)> = Vec::new();
        for &m in mats {
            if !tables.iter().any(|t| t.0 == m) {
                let values = Values::load(dir, m, rules, copy)?;
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
            let w = pos.white_to_move();
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
    pub fn has_counters(&self, t: u32) -> bool {
        self.tables[t as usize].1.counters_per_placement() > 1
    }

    /// The index of table number `t`.
    #[inline]
    pub fn index_of(&self, t: u32) -> &MaterialIndex {
        &self.tables[t as usize].1
    }

    /// The counter part of the index of `pos` in table number `t`.
    #[inline]
    pub fn counters_offset(&self, t: u32, pos: &Position) -> u64 {
        self.tables[t as usize].1.counters_offset(pos)
    }

    /// The value at index `i` of table number `t`: a placement's first state
    /// (its position in the table of a successor's placement) plus
    /// [`Solved::counters_offset`].
    #[inline]
    pub fn at(&self, t: u32, i: u64) -> Value {
        self.tables[t as usize].2.at(i)
    }

    /// Ask the processor to fetch the value [`Solved::at`] will read.
    #[inline]
    pub fn prefetch(&self, t: u32, i: u64) {
        self.tables[t as usize].2.prefetch(i)
    }
}

/// Whether both files of a table exist, open cleanly and hold the bytes
/// their headers' body checksums record (a table whose bytes rotted on disk
/// is not complete, and a run generates it again).
pub fn is_complete(dir: &Path, material: Material, rules: RuleSet) -> bool {
    [Metric::Wdl, Metric::Dtw]
        .iter()
        .all(|&metric| check_file(dir, material, rules, metric).is_ok())
}

/// The files of a table that exist but are not sound (truncated, corrupt,
/// bytes changed since they were written, or built for another rule set,
/// material or format version), with what is wrong: a run generates them
/// again, and says so.
pub fn damaged(dir: &Path, material: Material, rules: RuleSet) -> Vec<TableError> {
    [Metric::Wdl, Metric::Dtw]
        .iter()
        .filter(|&&metric| dir.join(table::file_name(material, rules, metric)).exists())
        .filter_map(|&metric| check_file(dir, material, rules, metric).err())
        .collect()
}

/// Open one file of a table and check its body against its checksum.
fn check_file(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    metric: Metric,
) -> Result<(), TableError> {
    let path = dir.join(table::file_name(material, rules, metric));
    TableFile::open_expecting(&path, material, rules, metric)?.check_body()
}

/// The decoded values of a finished table (packed as `Value::pack` does).
pub fn load_values(dir: &Path, material: Material, rules: RuleSet) -> Result<Vec<u16>, TableError> {
    let mut out = vec![0u16; table_states(dir, material, rules)? as usize];
    decode_values_into(dir, material, rules, &mut out, Value::pack)?;
    Ok(out)
}

fn open_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    metric: Metric,
) -> Result<TableFile, TableError> {
    let path = dir.join(table::file_name(material, rules, metric));
    if !path.exists() {
        return Err(TableError::Missing {
            file: table::file_name(material, rules, metric),
        });
    }
    TableFile::open_expecting(&path, material, rules, metric)
}

/// A finished table's WDL and DTW files.
pub fn open_pair(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<(TableFile, TableFile), TableError> {
    Ok((
        open_table(dir, material, rules, Metric::Wdl)?,
        open_table(dir, material, rules, Metric::Dtw)?,
    ))
}

/// The number of states of a finished table (from its WDL file's header).
pub(crate) fn table_states(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<u64, TableError> {
    Ok(open_table(dir, material, rules, Metric::Wdl)?
        .header()
        .states)
}

/// Decode a finished table's values into `out`, which must have one slot per
/// state, each coded by `code`: both files together, a group of blocks at a
/// time, so the peak is the coded values alone.
pub(crate) fn decode_values_into<T: Send>(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    out: &mut [T],
    code: impl Fn(Value) -> T + Sync,
) -> Result<(), TableError> {
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

    #[cfg(feature = "generate")]
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
