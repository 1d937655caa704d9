//! Writing a solved table: its WDL and DTW files, its statistics and its
//! manifest line.

use super::error::GenerateError;
use crate::checksum::ManifestChecksum;
use crate::material::Material;
use crate::rules::{RuleSet, Wdl};
use crate::stats::{stats_with, Counts, TableStats};
use crate::table::{self, compress_blocks, Metric, TableSpec, TableWriter};
use crate::value::Value;
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
        if let Some(v) = crate::value::byte_value(b as u8) {
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
    // A piece (see [`Piece`]) is one block of the larger size and whole
    // blocks of the other.
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
                let values = read(start, (states - start).min(piece as u64) as usize);
                encode_piece(&values, &dtw_file, &wdl_file, bufs)
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

/// A piece of values: the digests of its manifest chunks and its blocks of
/// each file, encoded (`bufs`: scratch). Each value is converted once, to
/// its packed form, which the manifest hashes and the two files' encodings
/// take apart with a shift or a mask.
fn encode_piece<T: Code>(
    values: &[T],
    dtw_file: &TableWriter,
    wdl_file: &TableWriter,
    bufs: &mut (Vec<u16>, Vec<u16>),
) -> Piece {
    let (dtw_block, wdl_block) = (
        dtw_file.block_states() as usize,
        wdl_file.block_states() as usize,
    );
    let (packed, out) = bufs;
    packed.clear();
    packed.extend(values.iter().map(|v| v.pack()));
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
