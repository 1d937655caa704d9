//! Writing a solved table: its WDL and DTW files, its statistics and its
//! manifest line.

use super::{GenerateError, Value};
use crate::checksum::ManifestChecksum;
use crate::material::Material;
use crate::rules::{RuleSet, Wdl};
use crate::table::{self, compress_blocks, Metric, TableSpec, TableWriter};
use rayon::prelude::*;
use std::path::Path;

/// The values of states `start..start + len` of a table, read on demand, as
/// the codes `T` (see [`Code`]).
type ValueSource<'a, T> = &'a (dyn Fn(u64, usize) -> Vec<T> + Sync);

/// A solved value as a source of a table holds it: a work file's byte
/// ([`Value::to_byte`]) or a packed `u16` ([`Value::pack`]).
pub(super) trait Code: Copy + Send + Sync + 'static {
    /// The value; every state of a table being written is solved.
    fn value(self) -> Value;
    /// The value packed ([`Value::pack`]); 0 for a state not solved.
    fn pack(self) -> u16;
}

impl Code for u8 {
    #[inline]
    fn value(self) -> Value {
        Value::from_byte(self).expect("solved")
    }
    #[inline]
    fn pack(self) -> u16 {
        PACKED_BYTES[self as usize]
    }
}

impl Code for u16 {
    #[inline]
    fn value(self) -> Value {
        Value::unpack(self).expect("solved")
    }
    #[inline]
    fn pack(self) -> u16 {
        self
    }
}

/// [`Value::pack`] of each work-file byte ([`Value::from_byte`]), 0 for 0
/// (test `packed_bytes_are_the_packed_values_of_the_bytes`).
static PACKED_BYTES: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut b = 0;
    while b < 256 {
        if let Some(v) = super::byte_value(b as u8) {
            t[b] = v.pack();
        }
        b += 1;
    }
    t
};

/// The WDL code (0 loss, 1 draw, 2 win) of a packed value.
#[inline]
fn packed_wdl(p: u16) -> u16 {
    debug_assert!(p >> 14 != 0, "a state not solved");
    (p >> 14).wrapping_sub(1)
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

    /// Count `n` states of value `v`.
    pub(super) fn add_many(&mut self, v: Value, n: u64) {
        let c = &mut self.counts;
        match v.wdl {
            Wdl::Win => {
                c.wins += n;
                c.longest_win = c.longest_win.max(v.dtw as u32);
            }
            Wdl::Draw => c.draws += n,
            Wdl::Loss => c.losses += n,
        }
        self.max_dtw = self.max_dtw.max(v.dtw);
    }

    pub(super) fn merge(self, o: Tally) -> Tally {
        Tally {
            counts: self.counts.merge(o.counts),
            max_dtw: self.max_dtw.max(o.max_dtw),
        }
    }
}

/// How many states have each work-file byte ([`Value::to_byte`]), turned
/// into a [`Tally`] at the end: counting a byte does not decode it. Four
/// tables, used in turn, so that a run of equal bytes does not wait on its
/// own increments.
pub(super) struct ByteCounts([[u64; 256]; 4]);

impl Default for ByteCounts {
    fn default() -> Self {
        ByteCounts([[0; 256]; 4])
    }
}

impl ByteCounts {
    /// Count `bytes` (each a solved value's byte).
    #[inline]
    pub(super) fn add(&mut self, bytes: &[u8]) {
        let [a, b, c, d] = &mut self.0;
        let mut quads = bytes.chunks_exact(4);
        for q in &mut quads {
            a[q[0] as usize] += 1;
            b[q[1] as usize] += 1;
            c[q[2] as usize] += 1;
            d[q[3] as usize] += 1;
        }
        for &x in quads.remainder() {
            a[x as usize] += 1;
        }
    }

    /// The tally of the bytes counted.
    pub(super) fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for byte in 0..256 {
            let n: u64 = self.0.iter().map(|t| t[byte]).sum();
            if n > 0 {
                let v = Value::from_byte(byte as u8).expect("solved");
                tally.add_many(v, n);
            }
        }
        tally
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
    /// The manifest checksum of the decoded values ([`ManifestChecksum`]), as hex.
    pub checksum: String,
}

/// The comment lines that open a manifest. The last names the checksum's
/// definition: a manifest without it was written by an older version, with
/// another checksum (see [`manifest_is_current`]).
pub const MANIFEST_HEADER: &str = "# frisian-tb table manifest: one line per table, written by `frisian-tb generate`.\n\
# rules material states wins draws losses longest_win checksum\n\
# checksum: manifest checksum 2 (XXH64 of the XXH64 digests of 16,384-state chunks of 16-bit values; docs/FORMAT.md)\n";

/// Whether manifest text `text` has checksums as this version computes
/// them (version 1, FNV-1a over every state, is not compared: its lines
/// would all differ).
pub fn manifest_is_current(text: &str) -> bool {
    let declaration = MANIFEST_HEADER.lines().last().expect("a header line");
    text.lines().any(|l| l == declaration)
}

impl TableStats {
    /// The statistics a manifest line gives (see [`TableStats::manifest_line`]);
    /// `None` if the line does not have that form.
    ///
    /// ```
    /// use frisian_tb::generate::TableStats;
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

/// Statistics and the manifest checksum of packed values.
pub fn stats(material: Material, rules: RuleSet, values: &[u16]) -> TableStats {
    stats_from(material, rules, values.len() as u64, &|start, len| {
        values[start as usize..start as usize + len].to_vec()
    })
    .0
}

/// Statistics and the manifest checksum of a finished table in `dir`, read
/// a group of blocks at a time (memory bounded by the group, not the table:
/// loading the largest five-piece table whole took 5.8 GB), its files'
/// value checksums checked.
pub fn table_stats(
    dir: &Path,
    material: Material,
    rules: RuleSet,
) -> Result<TableStats, GenerateError> {
    let (wdl_file, dtw_file) = super::solved::open_pair(dir, material, rules)?;
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

/// Statistics of packed values read on demand, and the largest DTW: one
/// parallel pass, a manifest chunk at a time.
fn stats_from<T: Code>(
    material: Material,
    rules: RuleSet,
    states: u64,
    read: ValueSource<'_, T>,
) -> (TableStats, u16) {
    const CHUNK: u64 = ManifestChecksum::CHUNK as u64;
    let parts: Vec<(Tally, u64)> = (0..states.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(Vec::new, |records: &mut Vec<u16>, c| {
            let start = c * CHUNK;
            let mut tally = Tally::default();
            records.clear();
            for v in read(start, (states - start).min(CHUNK) as usize) {
                let v = v.value();
                tally.add(v);
                records.push(v.pack());
            }
            (tally, ManifestChecksum::chunk_digest(records))
        })
        .collect();
    let (mut tally, mut sum) = (Tally::default(), ManifestChecksum::default());
    for (t, digest) in parts {
        tally = tally.merge(t);
        sum.add_digest(digest);
    }
    let st = stats_with(material, rules, states, tally.counts, sum.finish());
    (st, tally.max_dtw)
}

/// States per read of a pass over a table: small enough that the buffers
/// come from the allocator's free lists (with 1 << 20 they were the largest
/// fresh allocations while the KKMvKM pair's files were written, of which
/// the kernel's zeroing of fresh pages took 7%).
const STATS_CHUNK: u64 = 1 << 15;

/// The counts of wins, draws and losses, the longest win and the largest
/// DTW of packed values read on demand (in parallel).
fn counts_from<T: Code>(states: u64, read: ValueSource<'_, T>) -> Tally {
    (0..states.div_ceil(STATS_CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * STATS_CHUNK;
            let mut tally = Tally::default();
            for v in read(start, (states - start).min(STATS_CHUNK) as usize) {
                tally.add(v.value());
            }
            tally
        })
        .reduce(Tally::default, Tally::merge)
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

/// A piece of a table's values as the writer reads it: the digests of its
/// manifest chunks, and its blocks of each file, encoded.
type Piece = (Vec<u64>, Vec<Vec<u8>>, Vec<Vec<u8>>);

/// Blocks of the larger block size per batch of the writer: a batch is read,
/// encoded and compressed in parallel, and checksummed in order.
const WRITE_BATCH_PIECES: u64 = 256;

/// Write the WDL and DTW files of a table whose values are read on demand,
/// and compute its statistics; `tally` if its values were counted already.
///
/// One pass over the values feeds both files and the manifest checksum: each
/// piece of values is read once, encoded for both files and hashed for the
/// manifest, in parallel. (Three passes, one per file and one for the
/// checksum, read the 2.9-billion-state tables of the largest pair three
/// times and converted each value three times.)
pub(super) fn write_tables_from<T: Code>(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    states: u64,
    read: ValueSource<'_, T>,
    tally: Option<Tally>,
) -> Result<TableStats, GenerateError> {
    let Tally { counts: c, max_dtw } = tally.unwrap_or_else(|| counts_from(states, read));
    let spec = |metric, max_value| TableSpec {
        metric,
        rules,
        material,
        states,
        max_value,
        counts: (c.wins, c.draws, c.losses),
        longest_win: c.longest_win,
    };
    let path = |metric| dir.join(table::file_name(material, rules, metric));
    let mut dtw_file = TableWriter::new(&path(Metric::Dtw), &spec(Metric::Dtw, max_dtw));
    let mut wdl_file = TableWriter::new(&path(Metric::Wdl), &spec(Metric::Wdl, 2));
    let (dtw_block, wdl_block) = (
        dtw_file.block_states() as usize,
        wdl_file.block_states() as usize,
    );
    // A piece is one block of the larger size and whole blocks of the other.
    let piece = dtw_block.max(wdl_block);
    assert_eq!(piece % dtw_block.min(wdl_block), 0, "block sizes");
    assert_eq!(
        piece % ManifestChecksum::CHUNK,
        0,
        "block and manifest chunk sizes"
    );
    let pieces = states.div_ceil(piece as u64);
    let mut sum = ManifestChecksum::default();
    for first in (0..pieces).step_by(WRITE_BATCH_PIECES as usize) {
        let batch: Vec<Piece> = (first..(first + WRITE_BATCH_PIECES).min(pieces))
            .into_par_iter()
            .map_init(Default::default, |bufs: &mut (Vec<u16>, Vec<u16>), p| {
                let start = p * piece as u64;
                // Each value converted once, to its packed form, which the
                // manifest hashes and the two files' encodings take apart
                // with a shift or a mask.
                let (packed, out) = bufs;
                packed.clear();
                packed.extend(
                    read(start, (states - start).min(piece as u64) as usize)
                        .iter()
                        .map(|v| v.pack()),
                );
                let digests = packed
                    .chunks(ManifestChecksum::CHUNK)
                    .map(ManifestChecksum::chunk_digest)
                    .collect();
                let dtw = packed
                    .chunks(dtw_block)
                    .map(|b| {
                        dtw_of_block(b, out);
                        dtw_file.encode(out)
                    })
                    .collect();
                let wdl = packed
                    .chunks(wdl_block)
                    .map(|b| {
                        out.clear();
                        out.extend(b.iter().map(|&p| packed_wdl(p)));
                        wdl_file.encode(out)
                    })
                    .collect();
                (digests, dtw, wdl)
            })
            .collect();
        let (mut dtw_raw, mut wdl_raw) = (Vec::new(), Vec::new());
        for (digests, d, w) in batch {
            digests.into_iter().for_each(|d| sum.add_digest(d));
            dtw_raw.extend(d);
            wdl_raw.extend(w);
        }
        let (dtw_level, wdl_level) = (dtw_file.level(), wdl_file.level());
        let (dtw_packed, wdl_packed) = rayon::join(
            || compress_blocks(dtw_level, &dtw_raw),
            || compress_blocks(wdl_level, &wdl_raw),
        );
        dtw_file.push(dtw_packed.map_err(|e| dtw_file.io_error(e))?);
        wdl_file.push(wdl_packed.map_err(|e| wdl_file.io_error(e))?);
    }
    // Each file's finish is serial (its body checksum, its write and its
    // sync): the two side by side.
    let (dtw, wdl) = rayon::join(|| dtw_file.finish(), || wdl_file.finish());
    dtw?;
    wdl?;
    Ok(stats_with(material, rules, states, c, sum.finish()))
}

/// One DTW block's values (packed, [`Value::pack`]) as the DTW file gets
/// them, in `out`: a drawn state repeats the DTW before it in the block (a
/// draw at the start takes the block's first DTW of a decided state), so
/// that draws do not break the runs zstd compresses.
fn dtw_of_block(block: &[u16], out: &mut Vec<u16>) {
    const DRAW: u16 = 2;
    out.clear();
    let mut last = block
        .iter()
        .find(|&&p| p >> 14 != DRAW)
        .map_or(0, |&p| p & 0x3fff);
    out.extend(block.iter().map(|&p| {
        debug_assert!(p >> 14 != 0, "a state not solved");
        if p >> 14 != DRAW {
            // What makes the halved DTW files possible (`Header::dtw_halved`).
            debug_assert_eq!(p & 1 == 1, p >> 14 == 3, "DTW parity");
            last = p & 0x3fff;
        }
        last
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting bytes gives the tally of counting their values one by one.
    #[test]
    fn byte_counts_tally_like_the_values() {
        let bytes: Vec<u8> = (0..10_007u32).map(|i| 1 + (i * 37 % 255) as u8).collect();
        let mut one_by_one = Tally::default();
        for &b in &bytes {
            one_by_one.add(Value::from_byte(b).unwrap());
        }
        let mut counts = ByteCounts::default();
        counts.add(&bytes[..5]);
        counts.add(&bytes[5..]);
        let t = counts.tally();
        let c = (t.counts, one_by_one.counts);
        assert_eq!(
            (c.0.wins, c.0.draws, c.0.losses, c.0.longest_win, t.max_dtw),
            (
                c.1.wins,
                c.1.draws,
                c.1.losses,
                c.1.longest_win,
                one_by_one.max_dtw
            )
        );
        assert!(c.0.wins > 0 && c.0.draws > 0 && c.0.losses > 0);
    }

    #[test]
    fn packed_bytes_are_the_packed_values_of_the_bytes() {
        for b in 0..=255u8 {
            assert_eq!(
                b.pack(),
                Value::from_byte(b).map_or(0, Value::pack),
                "byte {b}"
            );
        }
    }

    /// A draw repeats the DTW before it (the block's first decided DTW at
    /// its start); decided states keep theirs.
    #[test]
    fn drawn_states_repeat_the_dtw_before_them() {
        let v = |wdl, dtw| Value { wdl, dtw }.pack();
        let block = [
            v(Wdl::Draw, 0),
            v(Wdl::Win, 7),
            v(Wdl::Draw, 0),
            v(Wdl::Loss, 4),
            v(Wdl::Draw, 0),
        ];
        let mut out = Vec::new();
        dtw_of_block(&block, &mut out);
        assert_eq!(out, [7, 7, 7, 4, 4]);
        dtw_of_block(&[v(Wdl::Draw, 0); 3], &mut out);
        assert_eq!(out, [0, 0, 0]);
    }
}
