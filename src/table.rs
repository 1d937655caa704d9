//! The table file format: a checksummed header, a block offset table and
//! zstd-compressed blocks of values, read through a memory map.
//!
//! See `docs/FORMAT.md` for the byte layout. One file holds one metric (WDL or
//! DTW) of one material under one rule set. Files are written under a
//! temporary name, synced and renamed, so a file with the final name is always
//! complete.

use crate::material::Material;
use crate::rules::{RuleSet, Wdl};
use memmap2::Mmap;
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"FRTB\r\n\x1a\n";
/// The version of the file layout this library writes. Version 4 takes the
/// values checksum from the blocks' zstd content checksums
/// ([`Header::values_checksum`]); version 3 stores a DTW halved
/// ([`Header::dtw_halved`]); version 2 leaves the DTW of drawn states
/// unspecified (see [`Metric::Dtw`]); version 1 wrote 0 there.
pub const FORMAT_VERSION: u16 = 4;
/// The first version whose values checksum is taken over the blocks' zstd
/// content checksums rather than over the decoded bytes.
const FRAME_CHECKSUMS_VERSION: u16 = 4;
/// The oldest version this library reads: versions 1 to 4 differ only in
/// what a DTW file holds, which readers convert ([`Header::dtw_plies`]),
/// and in how the values checksum is taken.
pub const OLDEST_FORMAT_VERSION: u16 = 1;
/// The version of the index scheme (`crate::index`) the values are ordered by.
pub const INDEX_VERSION: u16 = 1;
/// Size of the fixed header in bytes.
pub const HEADER_LEN: usize = 88;
/// The largest block a reader accepts, in states: a block is decoded whole,
/// so this bounds the memory a forged header can make a probe ask for (the
/// writer uses 16,384).
pub const MAX_BLOCK_STATES: u32 = 1 << 20;
/// The most pieces a table's material may have.
pub use crate::material::MAX_PIECES;
/// zstd level of WDL files. For inputs of at most 16 KiB (our blocks) zstd
/// switches to its optimal parser from level 9 up, which costs 10-20 times the
/// time of level 7 for 2-5% smaller tables; level 6 with 16 KiB DTW blocks
/// compresses 1.3-2.2 times as fast as level 7 with 8 KiB ones, the files
/// within 1% of the size.
const WDL_COMPRESSION_LEVEL: i32 = 6;
/// zstd level of DTW files: halved values at level 5 are smaller than whole
/// ones were at level 6, and compress in two thirds of the time.
const DTW_COMPRESSION_LEVEL: i32 = 5;
/// Blocks decoded together by [`TableFile::decode_with_dtw_into`]: enough
/// to keep every thread busy, few enough that the group's decoded bytes
/// (kept for the checksum) stay small.
const PAIR_GROUP: usize = 256;
/// States per compressed block of a WDL table (4 KiB of packed values: a probe
/// decompresses little).
pub const WDL_BLOCK_STATES: u32 = 16 * 1024;
/// States per compressed block of a DTW table (16 KiB at most: DTW is
/// probed at the root rather than in search, so a cold probe may decode more).
pub const DTW_BLOCK_STATES: u32 = 16 * 1024;

/// Value encoding: four 2-bit values per byte, state `i` in bits `2*(i%4)..`.
pub const PACKED_2BIT: u8 = 4;

/// Bytes that hold `n` values in `encoding`.
#[inline]
fn encoded_len(n: usize, encoding: u8) -> usize {
    match encoding {
        PACKED_2BIT => n.div_ceil(4),
        w => n * w as usize,
    }
}

/// Value `i` of a decoded block.
#[inline]
fn decode_at(buf: &[u8], i: usize, encoding: u8) -> u16 {
    match encoding {
        1 => buf[i] as u16,
        2 => u16::from_le_bytes([buf[2 * i], buf[2 * i + 1]]),
        _ => ((buf[i / 4] >> (2 * (i % 4))) & 3) as u16,
    }
}

/// Which metric a file holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Win, draw or loss: one byte per state (0 loss, 1 draw, 2 win).
    Wdl,
    /// Distance to win in plies (0 for finished games), stored halved since
    /// format version 3 ([`Header::dtw_halved`]). Meaningful only where
    /// the WDL file says win or loss: for a drawn state the writer repeats the
    /// value stored before it (runs compress better; 4-18% smaller DTW files on
    /// the four-piece tables), so readers must take draws from the WDL file.
    Dtw,
}

impl Metric {
    /// File name extension: `wdl` or `dtw`.
    pub const fn extension(self) -> &'static str {
        match self {
            Metric::Wdl => "wdl",
            Metric::Dtw => "dtw",
        }
    }
    const fn code(self) -> u8 {
        match self {
            Metric::Wdl => 1,
            Metric::Dtw => 2,
        }
    }
}

/// The file name of a table: `KMvK.official.wdl`.
pub fn file_name(material: Material, rules: RuleSet, metric: Metric) -> String {
    format!("{material}.{}.{}", rules.name(), metric.extension())
}

/// What is wrong with a table file.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A table that is needed is not in the directory.
    #[error("table {file} is missing")]
    Missing {
        /// The file name of the table.
        file: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is not a frisian-tb table, or is damaged.
    #[error("{path}: corrupt table file: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// Written by another format version.
    #[error("{path}: table format version {found}, this library reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}")]
    Version {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: u16,
    },
    /// Built for another rule set, material or metric than its name says.
    #[error("{path}: table is for {found}, expected {expected}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What the file holds.
        found: String,
        /// What was asked for.
        expected: String,
    },
}

/// Statistics and identity of a table, as stored in its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version the file was written in.
    pub format_version: u16,
    /// Which metric.
    pub metric: Metric,
    /// Rule set the table was built for.
    pub rules: RuleSet,
    /// Material (side to move first).
    pub material: Material,
    /// Index scheme version.
    pub index_version: u16,
    /// Value encoding: 1 (one byte), 2 (two bytes, little-endian; long DTW),
    /// or 4 (four 2-bit values per byte; WDL).
    pub value_width: u8,
    /// A DTW file (version 3 on) whose values are the DTW halved, rounded
    /// down: a won state's DTW is odd and a lost state's even (the winner
    /// makes the last move), so the WDL value restores it
    /// ([`Header::dtw_plies`]). Halving takes the parity, which the WDL file
    /// holds already, out of the DTW file: at level 5, 2-4% smaller than
    /// whole values at level 6, and a third faster to compress.
    pub dtw_halved: bool,
    /// States per block.
    pub block_states: u32,
    /// Number of states.
    pub states: u64,
    /// States won by the side to move.
    pub wins: u64,
    /// Drawn states.
    pub draws: u64,
    /// States lost by the side to move.
    pub losses: u64,
    /// Longest win, in plies.
    pub longest_win: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// The checksum of the values: from version 4, FNV-1a 64 over the
    /// content checksum that ends each block's zstd frame (the low 4 bytes of
    /// XXH64 of the block's decoded bytes, which zstd checks on decoding), in
    /// block order; before, FNV-1a 64 over the decoded bytes themselves. The
    /// writer computed the older one serially over every decoded byte, about
    /// 1.6% of the largest pair's time; this one costs nothing and still
    /// changes with any value.
    pub values_checksum: u64,
    /// FNV-1a 64 of the offset table and the compressed blocks.
    pub body_checksum: u64,
}

/// FNV-1a, 64 bits: the checksum used throughout the format.
#[derive(Clone, Copy, Debug)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Add bytes.
    #[inline]
    pub fn update(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
    /// The checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut f = Fnv::default();
        f.update(bytes);
        f.0
    }
}

impl Header {
    /// The DTW in plies of a state whose value in this (DTW) file is
    /// `stored` and whose WDL value is `wdl`; 0 for a draw, whose DTW the
    /// file leaves unspecified.
    #[inline]
    pub fn dtw_plies(&self, stored: u16, wdl: Wdl) -> u16 {
        match wdl {
            Wdl::Draw => 0,
            _ if !self.dtw_halved => stored,
            // Saturating: a damaged file must not overflow (verify reports it).
            Wdl::Win => stored.saturating_mul(2).saturating_add(1),
            Wdl::Loss => stored.saturating_mul(2),
        }
    }

    /// The header checksum a file with this header stores (offset 80). It
    /// covers the body and values checksums too, so it names a file's
    /// contents: `verify --journal` records it for every table that passed.
    pub fn checksum(&self) -> u64 {
        Fnv::of(&self.encode()[..80])
    }

    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&self.format_version.to_le_bytes());
        h[10] = self.metric.code();
        h[11] = match self.rules {
            RuleSet::Official => 0,
            RuleSet::Lidraughts => 1,
        };
        let m = self.material;
        h[12..16].copy_from_slice(&[m.stm_men, m.stm_kings, m.opp_men, m.opp_kings]);
        h[16..18].copy_from_slice(&self.index_version.to_le_bytes());
        h[18] = self.value_width;
        h[19] = self.dtw_halved as u8;
        h[20..24].copy_from_slice(&self.block_states.to_le_bytes());
        h[24..32].copy_from_slice(&self.states.to_le_bytes());
        h[32..40].copy_from_slice(&self.wins.to_le_bytes());
        h[40..48].copy_from_slice(&self.draws.to_le_bytes());
        h[48..56].copy_from_slice(&self.losses.to_le_bytes());
        h[56..60].copy_from_slice(&self.longest_win.to_le_bytes());
        h[60..64].copy_from_slice(&self.blocks.to_le_bytes());
        h[64..72].copy_from_slice(&self.values_checksum.to_le_bytes());
        h[72..80].copy_from_slice(&self.body_checksum.to_le_bytes());
        let sum = Fnv::of(&h[..80]);
        h[80..88].copy_from_slice(&sum.to_le_bytes());
        h
    }

    fn decode(path: &Path, b: &[u8]) -> Result<Header, TableError> {
        let corrupt = |what: &str| TableError::Corrupt {
            path: path.to_path_buf(),
            what: what.to_string(),
        };
        if b.len() < HEADER_LEN {
            return Err(corrupt("shorter than the header"));
        }
        if b[0..8] != MAGIC {
            return Err(corrupt("bad magic: not a frisian-tb table"));
        }
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let version = u16_at(8);
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(TableError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        if Fnv::of(&b[..80]) != u64_at(80) {
            return Err(corrupt("header checksum mismatch"));
        }
        let metric = match b[10] {
            1 => Metric::Wdl,
            2 => Metric::Dtw,
            _ => return Err(corrupt("unknown metric")),
        };
        let rules = match b[11] {
            0 => RuleSet::Official,
            1 => RuleSet::Lidraughts,
            _ => return Err(corrupt("unknown rule set")),
        };
        let material = Material::new(b[12], b[13], b[14], b[15]);
        let header = Header {
            format_version: version,
            metric,
            rules,
            material,
            index_version: u16_at(16),
            value_width: b[18],
            dtw_halved: b[19] == 1,
            block_states: u32_at(20),
            states: u64_at(24),
            wins: u64_at(32),
            draws: u64_at(40),
            losses: u64_at(48),
            longest_win: u32_at(56),
            blocks: u32_at(60),
            values_checksum: u64_at(64),
            body_checksum: u64_at(72),
        };
        if header.index_version != INDEX_VERSION {
            return Err(corrupt(&format!(
                "index scheme version {} (expected {INDEX_VERSION})",
                header.index_version
            )));
        }
        // Byte 19 was reserved (0) before version 3.
        let halving_allowed = metric == Metric::Dtw && version >= 3;
        if b[19] > halving_allowed as u8 {
            return Err(corrupt(&format!("bad DTW scale byte {}", b[19])));
        }
        if !matches!(header.value_width, 1 | 2 | PACKED_2BIT) {
            return Err(corrupt(&format!(
                "bad value encoding {}",
                header.value_width
            )));
        }
        if !(1..=MAX_BLOCK_STATES).contains(&header.block_states) {
            return Err(corrupt(&format!(
                "block size {} states (at most {MAX_BLOCK_STATES})",
                header.block_states
            )));
        }
        // The material decides the number of states: checked here, a forged
        // count cannot make a reader allocate for it.
        let pieces = [b[12], b[13], b[14], b[15]].map(u32::from);
        if pieces.iter().sum::<u32>() > MAX_PIECES || !material.is_playable() {
            return Err(corrupt(&format!(
                "material {pieces:?} is not a table's material (at most {MAX_PIECES} pieces, both sides with pieces)"
            )));
        }
        let size = crate::index::MaterialIndex::new(material, rules).size();
        if header.states != size {
            return Err(corrupt(&format!(
                "{} states, but {material} has {size} under the {rules} rules",
                header.states
            )));
        }
        let counted = header
            .wins
            .checked_add(header.draws)
            .and_then(|n| n.checked_add(header.losses));
        if counted != Some(header.states) {
            return Err(corrupt("win/draw/loss counts do not add up to the states"));
        }
        if header.blocks as u64 != header.states.div_ceil(header.block_states as u64) {
            return Err(corrupt("block count does not match the states"));
        }
        Ok(header)
    }
}

/// What a table file's header says about its values, known before they are
/// written.
#[derive(Copy, Clone, Debug)]
pub struct TableSpec {
    /// Metric of the values.
    pub metric: Metric,
    /// Rule set.
    pub rules: RuleSet,
    /// Material.
    pub material: Material,
    /// Number of states.
    pub states: u64,
    /// The largest value (decides the value width).
    pub max_value: u16,
    /// Wins, draws, losses.
    pub counts: (u64, u64, u64),
    /// Longest win.
    pub longest_win: u32,
}

/// Writes one table file from its blocks, given in order: each block's
/// values are encoded ([`TableWriter::encode`]), compressed (in parallel,
/// [`compress_blocks`]) and handed over in order ([`TableWriter::push`],
/// which adds each frame's content checksum to the values checksum);
/// [`TableWriter::finish`] writes the file atomically. Several writers can be
/// fed from one pass over the values (the generator writes a table's WDL and
/// DTW files so).
pub struct TableWriter {
    path: PathBuf,
    header: Header,
    level: i32,
    values_sum: Fnv,
    blocks: Vec<Vec<u8>>,
}

impl TableWriter {
    /// A writer of the file `path` for a table as `spec` describes it.
    pub fn new(path: &Path, spec: &TableSpec) -> TableWriter {
        // DTW is stored halved (see [`Header::dtw_halved`]).
        let halved = spec.metric == Metric::Dtw;
        let (value_width, block_states, level) = match spec.metric {
            Metric::Wdl => (PACKED_2BIT, WDL_BLOCK_STATES, WDL_COMPRESSION_LEVEL),
            Metric::Dtw if spec.max_value >> 1 < 256 => {
                (1, DTW_BLOCK_STATES, DTW_COMPRESSION_LEVEL)
            }
            Metric::Dtw => (2, DTW_BLOCK_STATES, DTW_COMPRESSION_LEVEL),
        };
        let n_blocks = spec.states.div_ceil(block_states as u64);
        TableWriter {
            path: path.to_path_buf(),
            header: Header {
                metric: spec.metric,
                rules: spec.rules,
                material: spec.material,
                format_version: FORMAT_VERSION,
                index_version: INDEX_VERSION,
                value_width,
                dtw_halved: halved,
                block_states,
                states: spec.states,
                wins: spec.counts.0,
                draws: spec.counts.1,
                losses: spec.counts.2,
                longest_win: spec.longest_win,
                blocks: 0,
                values_checksum: 0,
                body_checksum: 0,
            },
            level,
            values_sum: Fnv::default(),
            blocks: Vec::with_capacity(n_blocks as usize),
        }
    }

    /// States per block (the last block may hold fewer).
    pub fn block_states(&self) -> u32 {
        self.header.block_states
    }

    /// The same writer with another value width (1, 2 or 4 values a byte)
    /// and block size: files laid out as older versions or other writers
    /// lay them out, which every reader must take, for tests.
    #[doc(hidden)]
    pub fn with_layout(mut self, value_width: u8, block_states: u32) -> TableWriter {
        self.header.value_width = value_width;
        self.header.block_states = block_states;
        self.blocks.clear();
        self
    }

    /// The zstd level of this file's blocks, for [`compress_blocks`].
    pub fn level(&self) -> i32 {
        self.level
    }

    /// One block's values encoded as the file stores them: WDL values
    /// ([`Wdl`] as `u16`), or DTW in plies (a draw's DTW may be anything: it
    /// is not specified).
    pub fn encode(&self, values: &[u16]) -> Vec<u8> {
        let h = &self.header;
        let stored = |v: u16| if h.dtw_halved { v >> 1 } else { v };
        match h.value_width {
            1 => values.iter().map(|&v| stored(v) as u8).collect(),
            2 => values
                .iter()
                .flat_map(|&v| stored(v).to_le_bytes())
                .collect(),
            _ => {
                // Four values a byte, the first in the low bits, by a fixed
                // expression, which the compiler vectorises (a fold per
                // group took 1.3% of the KKMvKM pair's samples).
                let byte = |[a, b, c, d]: [u16; 4]| {
                    (a as u8 & 3) | (b as u8 & 3) << 2 | (c as u8 & 3) << 4 | (d as u8 & 3) << 6
                };
                let (quads, rest) = values.as_chunks::<4>();
                let mut out: Vec<u8> = Vec::with_capacity(values.len().div_ceil(4));
                out.extend(quads.iter().map(|&q| byte(q)));
                if !rest.is_empty() {
                    let mut q = [0; 4];
                    q[..rest.len()].copy_from_slice(rest);
                    out.push(byte(q));
                }
                out
            }
        }
    }

    /// Append the next compressed blocks ([`compress_blocks`]: zstd frames
    /// with their content checksums, which the values checksum is taken over).
    pub fn push(&mut self, packed: Vec<Vec<u8>>) {
        for b in &packed {
            // `compress_blocks` always asks zstd for it; a frame without one
            // would be a writer bug, not something to paper over.
            let sum = content_checksum(b).expect("compress_blocks writes content checksums");
            self.values_sum.update(sum);
        }
        self.blocks.extend(packed);
    }

    /// An I/O error of this file.
    pub fn io_error(&self, source: io::Error) -> TableError {
        TableError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Write the file: to `<path>.tmp`, synced, then renamed to its name.
    pub fn finish(self) -> Result<Header, TableError> {
        let TableWriter {
            path,
            mut header,
            values_sum,
            blocks,
            ..
        } = self;
        let io_err = |source| TableError::Io {
            path: path.to_path_buf(),
            source,
        };
        if blocks.len() as u64 != header.states.div_ceil(header.block_states as u64) {
            return Err(io_err(io::Error::other(format!(
                "{} blocks written of {}",
                blocks.len(),
                header.states.div_ceil(header.block_states as u64)
            ))));
        }
        let offsets_len = (blocks.len() + 1) * 8;
        let mut offsets = Vec::with_capacity(offsets_len);
        let mut at = (HEADER_LEN + offsets_len) as u64;
        for b in &blocks {
            offsets.extend_from_slice(&at.to_le_bytes());
            at += b.len() as u64;
        }
        offsets.extend_from_slice(&at.to_le_bytes());
        let mut body_sum = Fnv::default();
        body_sum.update(&offsets);
        for b in &blocks {
            body_sum.update(b);
        }
        header.blocks = blocks.len() as u32;
        header.values_checksum = values_sum.0;
        header.body_checksum = body_sum.0;
        let tmp = path.with_extension(format!(
            "{}.tmp",
            path.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        let write = || -> io::Result<()> {
            let mut f = io::BufWriter::new(File::create(&tmp)?);
            f.write_all(&header.encode())?;
            f.write_all(&offsets)?;
            for b in &blocks {
                f.write_all(b)?;
            }
            let f = f.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            if let Some(dir) = path.parent() {
                // Make the rename itself durable.
                if let Ok(d) = File::open(if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                }) {
                    let _ = d.sync_all();
                }
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io_err(e)
        })?;
        Ok(header)
    }
}

/// Compress encoded blocks at zstd level `level`, in parallel, each a zstd
/// frame with its content checksum. Each block is compressed into a reused
/// buffer and copied out at its size: a `Vec` from `Compressor::compress`
/// keeps the capacity of the worst case (the raw size), which, for the
/// hundreds of thousands of blocks a file holds until it is written, took a
/// gigabyte of heap for the largest five-piece tables.
pub fn compress_blocks(level: i32, raw: &[Vec<u8>]) -> io::Result<Vec<Vec<u8>>> {
    raw.par_iter()
        .map_init(
            || {
                let mut enc = zstd::bulk::Compressor::new(level)?;
                enc.include_checksum(true)?;
                Ok::<_, io::Error>((enc, Vec::new()))
            },
            |state, r| match state {
                Ok((enc, buf)) => {
                    buf.clear();
                    buf.reserve(zstd::zstd_safe::compress_bound(r.len()));
                    enc.compress_to_buffer(r, buf)?;
                    Ok(buf.to_vec())
                }
                Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
            },
        )
        .collect()
}

/// The content checksum that ends a zstd frame, if the frame has one: the
/// low four bytes of XXH64 of its decoded content (RFC 8878, 3.1.1: bit 2 of
/// the frame header descriptor, the byte after the four-byte magic number,
/// says whether the frame ends with it).
fn content_checksum(frame: &[u8]) -> Option<&[u8]> {
    // Magic, descriptor, the shortest block header, checksum.
    const SHORTEST: usize = 4 + 1 + 3 + 4;
    (frame.len() >= SHORTEST && frame[4] & 0x04 != 0).then(|| &frame[frame.len() - 4..])
}

static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);

/// An open table file, memory-mapped. Safe to share between threads.
pub struct TableFile {
    path: PathBuf,
    header: Header,
    map: Mmap,
    id: u64,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("header", &self.header)
            .finish()
    }
}

/// Per-thread cache of decompressed blocks, so probing allocates nothing once warm.
struct BlockCache {
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    slots: Vec<(u64, u32, Vec<u8>)>,
    next: usize,
}

const CACHE_SLOTS: usize = 8;

thread_local! {
    static CACHE: RefCell<BlockCache> = const { RefCell::new(BlockCache { decompressor: None, slots: Vec::new(), next: 0 }) };
}

impl TableFile {
    /// Open and check a table file: header, checksum of the header, offsets.
    ///
    /// The file is memory-mapped: it must not be changed or truncated while
    /// open (frisian-tb only ever replaces tables by renaming a new file over
    /// the old name, which leaves an existing mapping intact).
    pub fn open(path: &Path) -> Result<TableFile, TableError> {
        let io_err = |source| TableError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        // Safety: the mapping is read-only and the format is only ever replaced by
        // rename (see above); every read below is bounds-checked against its length.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        let header = Header::decode(path, &map)?;
        let corrupt = |what: String| TableError::Corrupt {
            path: path.to_path_buf(),
            what,
        };
        let offsets_end = HEADER_LEN + (header.blocks as usize + 1) * 8;
        if map.len() < offsets_end {
            return Err(corrupt("truncated offset table".into()));
        }
        let t = TableFile {
            path: path.to_path_buf(),
            header,
            map,
            id: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
        };
        let mut prev = offsets_end as u64;
        for i in 0..=t.header.blocks as usize {
            let o = t.offset(i);
            if o < prev || o > t.map.len() as u64 {
                return Err(corrupt(format!(
                    "block offset {i} out of order or beyond the end of the file"
                )));
            }
            prev = o;
        }
        if prev != t.map.len() as u64 {
            return Err(corrupt(format!(
                "file is {} bytes, blocks end at {prev}",
                t.map.len()
            )));
        }
        Ok(t)
    }

    /// Open and check that the file holds what its caller expects.
    pub fn open_expecting(
        path: &Path,
        material: Material,
        rules: RuleSet,
        metric: Metric,
    ) -> Result<TableFile, TableError> {
        let t = TableFile::open(path)?;
        let h = &t.header;
        if h.material != material || h.rules != rules || h.metric != metric {
            return Err(TableError::Mismatch {
                path: path.to_path_buf(),
                found: format!("{} {} {}", h.material, h.rules, h.metric.extension()),
                expected: format!("{material} {rules} {}", metric.extension()),
            });
        }
        Ok(t)
    }

    fn offset(&self, i: usize) -> u64 {
        let o = HEADER_LEN + i * 8;
        u64::from_le_bytes(self.map[o..o + 8].try_into().unwrap())
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    /// The value of state `idx`.
    pub fn get(&self, idx: u64) -> Result<u16, TableError> {
        if idx >= self.header.states {
            return Err(TableError::Corrupt {
                path: self.path.clone(),
                what: format!("index {idx} beyond {} states", self.header.states),
            });
        }
        let block = (idx / self.header.block_states as u64) as u32;
        let within = (idx % self.header.block_states as u64) as usize;
        let encoding = self.header.value_width;
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let hit = cache
                .slots
                .iter()
                .position(|(id, b, _)| *id == self.id && *b == block);
            let slot = match hit {
                Some(s) => s,
                None => self.fill(&mut cache, block)?,
            };
            let buf = &cache.slots[slot].2;
            Ok(decode_at(buf, within, encoding))
        })
    }

    /// A block's number of states, decoded size, and compressed byte range.
    fn block_bounds(&self, block: u32) -> (usize, usize, usize, usize) {
        let per = self.header.block_states as u64;
        let states_here = (self.header.states - block as u64 * per).min(per) as usize;
        let expect = encoded_len(states_here, self.header.value_width);
        let (start, end) = (
            self.offset(block as usize) as usize,
            self.offset(block as usize + 1) as usize,
        );
        (states_here, expect, start, end)
    }

    fn fill(&self, cache: &mut BlockCache, block: u32) -> Result<usize, TableError> {
        let slot = if cache.slots.len() < CACHE_SLOTS {
            cache.slots.push((0, 0, Vec::new()));
            cache.slots.len() - 1
        } else {
            cache.next = (cache.next + 1) % CACHE_SLOTS;
            cache.next
        };
        if cache.decompressor.is_none() {
            cache.decompressor = Some(self.decompressor()?);
        }
        let BlockCache {
            decompressor,
            slots,
            ..
        } = cache;
        slots[slot].0 = 0; // invalid until filled
        self.decode_block(decompressor.as_mut().unwrap(), block, &mut slots[slot].2)?;
        slots[slot].0 = self.id;
        slots[slot].1 = block;
        Ok(slot)
    }

    /// Decode one block into `buf` (cleared first), checking its length.
    fn decode_block(
        &self,
        dec: &mut zstd::bulk::Decompressor<'static>,
        block: u32,
        buf: &mut Vec<u8>,
    ) -> Result<usize, TableError> {
        let (states_here, expect, start, end) = self.block_bounds(block);
        buf.clear();
        buf.reserve(expect);
        let n = dec
            .decompress_to_buffer(&self.map[start..end], buf)
            .map_err(|e| self.corrupt(format!("block {block} does not decompress: {e}")))?;
        if n != expect {
            return Err(self.corrupt(format!("block {block} holds {n} bytes, expected {expect}")));
        }
        Ok(states_here)
    }

    /// Add block `block`, decoded into `decoded`, to the values checksum
    /// ([`Header::values_checksum`]): from version 4 its frame's content
    /// checksum (which zstd compared with the decoded bytes), before that the
    /// decoded bytes.
    fn add_to_values_sum(
        &self,
        sum: &mut Fnv,
        block: u32,
        decoded: &[u8],
    ) -> Result<(), TableError> {
        if self.header.format_version < FRAME_CHECKSUMS_VERSION {
            sum.update(decoded);
            return Ok(());
        }
        let (_, _, start, end) = self.block_bounds(block);
        let trailer = content_checksum(&self.map[start..end])
            .ok_or_else(|| self.corrupt(format!("block {block} has no content checksum")))?;
        sum.update(trailer);
        Ok(())
    }

    /// Compare the checksum of every decoded value, in order, with the header's.
    fn check_values(&self, sum: Fnv) -> Result<(), TableError> {
        if sum.0 != self.header.values_checksum {
            return Err(
                self.corrupt("checksum of the decoded values does not match the header".into())
            );
        }
        Ok(())
    }

    fn corrupt(&self, what: String) -> TableError {
        TableError::Corrupt {
            path: self.path.clone(),
            what,
        }
    }

    fn decompressor(&self) -> Result<zstd::bulk::Decompressor<'static>, TableError> {
        zstd::bulk::Decompressor::new().map_err(|e| TableError::Io {
            path: self.path.clone(),
            source: e,
        })
    }

    /// Decode every block in order, handing each block's values to `f`, and
    /// check the checksum of the decoded values against the header.
    pub fn for_each_block(&self, mut f: impl FnMut(&[u16])) -> Result<(), TableError> {
        let mut dec = self.decompressor()?;
        let mut sum = Fnv::default();
        let (mut buf, mut values) = (Vec::new(), Vec::new());
        for block in 0..self.header.blocks {
            let states_here = self.decode_block(&mut dec, block, &mut buf)?;
            self.add_to_values_sum(&mut sum, block, &buf)?;
            values.clear();
            values.extend((0..states_here).map(|i| decode_at(&buf, i, self.header.value_width)));
            f(&values);
        }
        self.check_values(sum)
    }

    /// Decode every block (zstd compares each with its content checksum) and
    /// compare the values checksum with the header's, keeping no value: the
    /// check of a whole file's body, its blocks decoded in parallel a group at
    /// a time (only the checksum runs in order).
    pub fn check_blocks(&self) -> Result<(), TableError> {
        // As in `decode_into`: every thread busy, little memory held.
        const GROUP: u32 = 256;
        let mut sum = Fnv::default();
        for first in (0..self.header.blocks).step_by(GROUP as usize) {
            let last = (first + GROUP).min(self.header.blocks);
            let decoded: Vec<Result<Vec<u8>, TableError>> = (first..last)
                .into_par_iter()
                .map_init(
                    || None,
                    |dec: &mut Option<zstd::bulk::Decompressor<'static>>, block| {
                        if dec.is_none() {
                            *dec = Some(self.decompressor()?);
                        }
                        let mut buf = Vec::new();
                        self.decode_block(dec.as_mut().unwrap(), block, &mut buf)?;
                        Ok(buf)
                    },
                )
                .collect();
            for (block, buf) in (first..).zip(decoded) {
                self.add_to_values_sum(&mut sum, block, &buf?)?;
            }
        }
        self.check_values(sum)
    }

    /// Decode every value into `out` (one slot per state), calling
    /// `f(slot, value)` for each state, and check the checksum of the decoded
    /// values against the header. Blocks are decoded in parallel, a group at
    /// a time; only the checksum runs in order.
    pub fn decode_into<T: Send>(
        &self,
        out: &mut [T],
        f: impl Fn(&mut T, u16) + Sync,
    ) -> Result<(), TableError> {
        if out.len() as u64 != self.header.states {
            return Err(self.corrupt(format!(
                "{} states, expected {}",
                self.header.states,
                out.len()
            )));
        }
        // Enough blocks per group to keep every thread busy, few enough that
        // the group's decoded bytes (kept for the checksum) stay small.
        const GROUP: usize = 256;
        let per = self.header.block_states as usize;
        let width = self.header.value_width;
        let mut sum = Fnv::default();
        for (g, group) in out.chunks_mut(per * GROUP).enumerate() {
            let decoded: Vec<Result<Vec<u8>, TableError>> = group
                .par_chunks_mut(per)
                .enumerate()
                .map_init(
                    || None,
                    |dec: &mut Option<zstd::bulk::Decompressor<'static>>, (k, chunk)| {
                        if dec.is_none() {
                            *dec = Some(self.decompressor()?);
                        }
                        let mut buf = Vec::new();
                        let block = (g * GROUP + k) as u32;
                        let n = self.decode_block(dec.as_mut().unwrap(), block, &mut buf)?;
                        debug_assert_eq!(n, chunk.len());
                        // One loop per encoding, not a test per value.
                        match width {
                            1 => chunk
                                .iter_mut()
                                .zip(&buf)
                                .for_each(|(s, &b)| f(s, b as u16)),
                            2 => chunk
                                .iter_mut()
                                .zip(buf.chunks_exact(2))
                                .for_each(|(s, b)| f(s, u16::from_le_bytes([b[0], b[1]]))),
                            _ => chunk.chunks_mut(4).zip(&buf).for_each(|(q, &b)| {
                                for (i, s) in q.iter_mut().enumerate() {
                                    f(s, ((b >> (2 * i)) & 3) as u16)
                                }
                            }),
                        }
                        Ok(buf)
                    },
                )
                .collect();
            for (k, buf) in decoded.into_iter().enumerate() {
                self.add_to_values_sum(&mut sum, (g * GROUP + k) as u32, &buf?)?;
            }
        }
        self.check_values(sum)
    }

    /// Decode a table's WDL file (`self`) and its DTW file together into
    /// `out`, one slot per state, setting each to `f(wdl, dtw)`, and check
    /// both files' checksums of decoded values against their headers.
    ///
    /// One pass instead of [`TableFile::decode_into`] on each file: every
    /// slot is written once, not written and then read and written again,
    /// and the serial checksums of one group of blocks run while the next
    /// group is decoded (decoding the finished tables that a pair reads took
    /// 4.5% of the samples of a five-piece run, mostly in the two passes).
    pub fn decode_with_dtw_into<T: Send>(
        &self,
        dtw: &TableFile,
        out: &mut [T],
        f: impl Fn(u16, u16) -> T + Sync,
    ) -> Result<(), TableError> {
        for file in [self, dtw] {
            if out.len() as u64 != file.header.states {
                return Err(file.corrupt(format!(
                    "{} states, expected {}",
                    file.header.states,
                    out.len()
                )));
            }
        }
        let ww = self.header.value_width;
        if self.header.block_states != dtw.header.block_states || ww != PACKED_2BIT {
            // Not as this crate writes them, but readable: two passes, the
            // WDL values kept aside (a byte per state) in between.
            let mut wdl = vec![0u8; out.len()];
            self.decode_into(&mut wdl, |slot, w| *slot = w as u8)?;
            let mut at = 0;
            return dtw.for_each_block(|values| {
                for (k, &d) in values.iter().enumerate() {
                    out[at + k] = f(wdl[at + k] as u16, d);
                }
                at += values.len();
            });
        }
        self.decode_pair_groups(dtw, out, false, &f, |_| {})
    }

    /// Decode both files of a table a group of blocks at a time into one
    /// buffer, calling `f(wdl, dtw)` for each state and `sink` with each
    /// group's values in index order, and check both files' value checksums
    /// at the end: what [`TableFile::decode_with_dtw_into`] does, in memory
    /// bounded by the group (4 Mi states) instead of the table. `self` is
    /// the WDL file.
    pub fn for_each_group_with_dtw<T: Send + Clone + Default>(
        &self,
        dtw: &TableFile,
        f: impl Fn(u16, u16) -> T + Sync,
        mut sink: impl FnMut(&[T]),
    ) -> Result<(), TableError> {
        let states = self.header.states;
        if states != dtw.header.states {
            return Err(dtw.corrupt(format!("{} states, expected {states}", dtw.header.states)));
        }
        if self.header.block_states != dtw.header.block_states
            || self.header.value_width != PACKED_2BIT
        {
            // Not as this crate writes them, but readable in bounded memory
            // too: each file's blocks checked on their own, then both read a
            // range at a time (each block decoded twice).
            self.check_blocks()?;
            dtw.check_blocks()?;
            const RANGE: u64 = 1 << 22;
            let mut buf = Vec::new();
            for start in (0..states).step_by(RANGE as usize) {
                let len = (states - start).min(RANGE) as usize;
                let (w, d) = (self.read_range(start, len)?, dtw.read_range(start, len)?);
                w.par_iter()
                    .zip(&d)
                    .map(|(&w, &d)| f(w, d))
                    .collect_into_vec(&mut buf);
                sink(&buf);
            }
            return Ok(());
        }
        let group = self.header.block_states as u64 * PAIR_GROUP as u64;
        let mut buf = vec![T::default(); group.min(states) as usize];
        self.decode_pair_groups(dtw, &mut buf, true, &f, &mut sink)
    }

    /// The loop of [`TableFile::decode_with_dtw_into`] and
    /// [`TableFile::for_each_group_with_dtw`]: each group (`PAIR_GROUP`
    /// blocks, the last maybe fewer) is decoded in parallel, into its place
    /// in `area` (one slot per state) or, `streaming`, into the start of
    /// `area` (one group's slots), and then given to `sink`. The value
    /// checksums run in order on one thread while the others decode the
    /// next group.
    fn decode_pair_groups<T: Send>(
        &self,
        dtw: &TableFile,
        area: &mut [T],
        streaming: bool,
        f: &(impl Fn(u16, u16) -> T + Sync),
        mut sink: impl FnMut(&[T]),
    ) -> Result<(), TableError> {
        let per = self.header.block_states as usize;
        let dw = dtw.header.value_width;
        let states = self.header.states as usize;
        let group_len = per * PAIR_GROUP;
        let (mut wsum, mut dsum) = (Fnv::default(), Fnv::default());
        type Decoded = Vec<(Vec<u8>, Vec<u8>)>;
        // The last group's decoded blocks, summed while the next decodes,
        // and the number of its first block.
        let (mut pending, mut pending_first): (Decoded, u32) = (Vec::new(), 0);
        let sum = |wsum: &mut Fnv, dsum: &mut Fnv, pending: &Decoded, first: u32| {
            for (k, (w, d)) in pending.iter().enumerate() {
                let block = first + k as u32;
                self.add_to_values_sum(wsum, block, w)?;
                dtw.add_to_values_sum(dsum, block, d)?;
            }
            Ok::<(), TableError>(())
        };
        for g in 0..states.div_ceil(group_len) {
            let len = (states - g * group_len).min(group_len);
            let at = if streaming { 0 } else { g * group_len };
            let group = &mut area[at..at + len];
            let (decoded, summed) = rayon::join(
                || {
                    group
                        .par_chunks_mut(per)
                        .enumerate()
                        .map_init(
                            || None,
                            |decs: &mut Option<_>, (k, chunk)| {
                                if decs.is_none() {
                                    *decs = Some((self.decompressor()?, dtw.decompressor()?));
                                }
                                let (wd, dd) = decs.as_mut().unwrap();
                                let block = (g * PAIR_GROUP + k) as u32;
                                let (mut wbuf, mut dbuf) = (Vec::new(), Vec::new());
                                let n = self.decode_block(wd, block, &mut wbuf)?;
                                if dtw.decode_block(dd, block, &mut dbuf)? != n {
                                    return Err(dtw.corrupt(format!(
                                        "block {block} does not match the WDL file's"
                                    )));
                                }
                                debug_assert_eq!(n, chunk.len());
                                let wdl = |i: usize| decode_at(&wbuf, i, PACKED_2BIT);
                                match dw {
                                    1 => chunk
                                        .iter_mut()
                                        .zip(&dbuf)
                                        .enumerate()
                                        .for_each(|(i, (s, &d))| *s = f(wdl(i), d as u16)),
                                    _ => chunk
                                        .iter_mut()
                                        .zip(dbuf.chunks_exact(2))
                                        .enumerate()
                                        .for_each(|(i, (s, d))| {
                                            *s = f(wdl(i), u16::from_le_bytes([d[0], d[1]]))
                                        }),
                                }
                                Ok((wbuf, dbuf))
                            },
                        )
                        .collect::<Result<Decoded, TableError>>()
                },
                || sum(&mut wsum, &mut dsum, &pending, pending_first),
            );
            summed?;
            pending = decoded?;
            pending_first = (g * PAIR_GROUP) as u32;
            sink(&area[at..at + len]);
        }
        sum(&mut wsum, &mut dsum, &pending, pending_first)?;
        self.check_values(wsum)?;
        dtw.check_values(dsum)
    }

    /// Decode every value (for generation and verification).
    pub fn read_all(&self) -> Result<Vec<u16>, TableError> {
        let mut out = vec![0; self.header.states as usize];
        self.decode_into(&mut out, |slot, v| *slot = v)?;
        Ok(out)
    }

    /// Decode the values of states `start..start + len` (without the checksum
    /// of the whole table; see [`TableFile::for_each_block`]), the blocks in
    /// parallel.
    pub fn read_range(&self, start: u64, len: usize) -> Result<Vec<u16>, TableError> {
        let end = match start.checked_add(len as u64) {
            Some(end) if end <= self.header.states => end,
            _ => {
                return Err(self.corrupt(format!(
                    "states {start}..+{len} beyond {} states",
                    self.header.states
                )))
            }
        };
        if len == 0 {
            return Ok(Vec::new());
        }
        let per = self.header.block_states as u64;
        let blocks = (start / per) as u32..=((end - 1) / per) as u32;
        let parts: Vec<Vec<u16>> = blocks
            .into_par_iter()
            .map_init(
                || (self.decompressor().map_err(|e| e.to_string()), Vec::new()),
                |(dec, buf), block| {
                    let dec = dec.as_mut().map_err(|e| TableError::Io {
                        path: self.path.clone(),
                        source: io::Error::other(e.clone()),
                    })?;
                    let states_here = self.decode_block(dec, block, buf)? as u64;
                    let first = block as u64 * per;
                    let from = start.max(first) - first;
                    let to = end.min(first + states_here) - first;
                    Ok((from..to)
                        .map(|i| decode_at(buf, i as usize, self.header.value_width))
                        .collect())
                },
            )
            .collect::<Result<_, TableError>>()?;
        Ok(parts.concat())
    }

    /// Check the checksum of the compressed body against the header.
    pub fn check_body(&self) -> Result<(), TableError> {
        let start = HEADER_LEN;
        if Fnv::of(&self.map[start..]) != self.header.body_checksum {
            return Err(TableError::Corrupt {
                path: self.path.clone(),
                what: "body checksum mismatch".into(),
            });
        }
        Ok(())
    }
}
