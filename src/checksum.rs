//! Checksums of decoded values: XXH64, and the manifest checksum built on it.
//!
//! The manifest (`tables/MANIFEST`) gives each table a checksum of its
//! decoded values that does not depend on the file format, so that tables
//! written by another version (or another program) can be compared with it.
//! Since the manifest's second version it is a checksum of checksums
//! ([`ManifestChecksum`]): the chunks of a table are hashed independently,
//! in parallel, while the values pass by anyway. (The first version, FNV-1a
//! over every state's three bytes, was one serial multiplication chain over
//! every state: 2.6% of the largest five-piece pair's time.)
//!
//! XXH64 is Yann Collet's 64-bit hash, as its specification
//! (`xxhash_spec.md`) defines it; zstd's frame content checksum is its low
//! 32 bits, which the tests compare against.
//!
//! ```
//! use frisian_tb::checksum::xxh64;
//!
//! assert_eq!(xxh64(b"", 0), 0xef46_db37_51d8_e999);
//! ```

use rayon::prelude::*;

const PRIME_1: u64 = 0x9e37_79b1_85eb_ca87;
const PRIME_2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const PRIME_3: u64 = 0x1656_67b1_9e37_79f9;
const PRIME_4: u64 = 0x85eb_ca77_c2b2_ae63;
const PRIME_5: u64 = 0x27d4_eb2f_1656_67c5;

#[inline]
fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(PRIME_2))
        .rotate_left(31)
        .wrapping_mul(PRIME_1)
}

#[inline]
fn merge(acc: u64, v: u64) -> u64 {
    (acc ^ round(0, v))
        .wrapping_mul(PRIME_1)
        .wrapping_add(PRIME_4)
}

/// XXH64's four accumulators over the input's 32-byte stripes.
struct Stripes {
    v: [u64; 4],
    seed: u64,
    /// Bytes of input in all.
    len: usize,
}

impl Stripes {
    fn new(seed: u64, len: usize) -> Stripes {
        Stripes {
            v: [
                seed.wrapping_add(PRIME_1).wrapping_add(PRIME_2),
                seed.wrapping_add(PRIME_2),
                seed,
                seed.wrapping_sub(PRIME_1),
            ],
            seed,
            len,
        }
    }

    #[inline]
    fn stripe(&mut self, lanes: [u64; 4]) {
        for (v, lane) in self.v.iter_mut().zip(lanes) {
            *v = round(*v, lane);
        }
    }

    /// The hash, given the input's last `len % 32` bytes.
    fn finish(self, tail: &[u8]) -> u64 {
        debug_assert_eq!(tail.len(), self.len % 32);
        let [v1, v2, v3, v4] = self.v;
        let mut acc = if self.len >= 32 {
            let acc = v1
                .rotate_left(1)
                .wrapping_add(v2.rotate_left(7))
                .wrapping_add(v3.rotate_left(12))
                .wrapping_add(v4.rotate_left(18));
            [v1, v2, v3, v4].into_iter().fold(acc, merge)
        } else {
            self.seed.wrapping_add(PRIME_5)
        };
        acc = acc.wrapping_add(self.len as u64);
        let mut rest = tail;
        while rest.len() >= 8 {
            let lane = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
            acc = (acc ^ round(0, lane))
                .rotate_left(27)
                .wrapping_mul(PRIME_1)
                .wrapping_add(PRIME_4);
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            let lane = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as u64;
            acc = (acc ^ lane.wrapping_mul(PRIME_1))
                .rotate_left(23)
                .wrapping_mul(PRIME_2)
                .wrapping_add(PRIME_3);
            rest = &rest[4..];
        }
        for &b in rest {
            acc = (acc ^ (b as u64).wrapping_mul(PRIME_5))
                .rotate_left(11)
                .wrapping_mul(PRIME_1);
        }
        acc ^= acc >> 33;
        acc = acc.wrapping_mul(PRIME_2);
        acc ^= acc >> 29;
        acc = acc.wrapping_mul(PRIME_3);
        acc ^ (acc >> 32)
    }
}

/// XXH64 of `bytes` with `seed`.
pub fn xxh64(bytes: &[u8], seed: u64) -> u64 {
    let mut s = Stripes::new(seed, bytes.len());
    let mut stripes = bytes.chunks_exact(32);
    for st in &mut stripes {
        let lane = |i: usize| u64::from_le_bytes(st[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        s.stripe([lane(0), lane(1), lane(2), lane(3)]);
    }
    s.finish(stripes.remainder())
}

/// XXH64 of `values` as u16 little-endian (the bytes are not built: four
/// values make a lane).
pub fn xxh64_u16(values: &[u16], seed: u64) -> u64 {
    let mut s = Stripes::new(seed, 2 * values.len());
    let mut stripes = values.chunks_exact(16);
    for st in &mut stripes {
        let lane = |i: usize| {
            let q = &st[4 * i..4 * i + 4];
            q[0] as u64 | (q[1] as u64) << 16 | (q[2] as u64) << 32 | (q[3] as u64) << 48
        };
        s.stripe([lane(0), lane(1), lane(2), lane(3)]);
    }
    let mut tail = [0u8; 30];
    let rest = stripes.remainder();
    for (i, v) in rest.iter().enumerate() {
        tail[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
    }
    s.finish(&tail[..2 * rest.len()])
}

/// The manifest checksum of a table's values (version 2, named in the
/// manifest's header).
///
/// Each state's value is a 16-bit record, as [`crate::value::Value::pack`]
/// makes it: WDL + 1 in the top two bits (1 loss, 2 draw, 3 win), the DTW in
/// plies below. The states, in index order, are cut into chunks of
/// [`ManifestChecksum::CHUNK`] (the last may be shorter); a chunk's digest is
/// XXH64 (seed 0) of its records as u16 little-endian, and the checksum is
/// XXH64 (seed 0) of the digests as u64 little-endian, in order.
///
/// ```
/// use frisian_tb::checksum::ManifestChecksum;
///
/// // Records may come in pieces of any size.
/// let records: Vec<u16> = (0..40_000u32).map(|i| (1 << 14) | (i % 50) as u16).collect();
/// let mut whole = ManifestChecksum::default();
/// whole.update(&records);
/// let mut pieces = ManifestChecksum::default();
/// for piece in records.chunks(777) {
///     pieces.update(piece);
/// }
/// assert_eq!(whole.finish(), pieces.finish());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManifestChecksum {
    /// The records of a chunk not complete yet.
    partial: Vec<u16>,
    /// The digests of the chunks so far, as u64 little-endian.
    digests: Vec<u8>,
}

impl ManifestChecksum {
    /// States per chunk.
    pub const CHUNK: usize = 1 << 14;

    /// The digest of one chunk's records.
    #[inline]
    pub fn chunk_digest(records: &[u16]) -> u64 {
        debug_assert!(records.len() <= Self::CHUNK);
        xxh64_u16(records, 0)
    }

    /// Add the digest of the next chunk, computed by the caller
    /// ([`ManifestChecksum::chunk_digest`]); the records so far must make
    /// whole chunks.
    pub fn add_digest(&mut self, digest: u64) {
        assert!(
            self.partial.is_empty(),
            "a chunk digest added after part of a chunk"
        );
        self.digests.extend(digest.to_le_bytes());
    }

    /// Add the next records, any number of them (whole chunks are hashed in
    /// parallel).
    pub fn update(&mut self, mut records: &[u16]) {
        if !self.partial.is_empty() {
            let take = (Self::CHUNK - self.partial.len()).min(records.len());
            self.partial.extend_from_slice(&records[..take]);
            records = &records[take..];
            if self.partial.len() < Self::CHUNK {
                return;
            }
            let d = Self::chunk_digest(&self.partial);
            self.partial.clear();
            self.add_digest(d);
        }
        let whole = records.len() / Self::CHUNK * Self::CHUNK;
        let digests: Vec<u64> = records[..whole]
            .par_chunks(Self::CHUNK)
            .map(Self::chunk_digest)
            .collect();
        for d in digests {
            self.add_digest(d);
        }
        self.partial.extend_from_slice(&records[whole..]);
    }

    /// The checksum.
    pub fn finish(mut self) -> u64 {
        if !self.partial.is_empty() {
            let d = Self::chunk_digest(&self.partial);
            self.partial.clear();
            self.add_digest(d);
        }
        xxh64(&self.digests, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vectors of the XXH64 specification's reference implementation.
    #[test]
    fn xxh64_of_known_inputs() {
        assert_eq!(xxh64(b"", 0), 0xef46_db37_51d8_e999);
        assert_eq!(xxh64(b"a", 0), 0xd24e_c4f1_a98c_6e5b);
        assert_eq!(xxh64(b"abc", 0), 0x44bc_2cf5_ad77_0999);
    }

    /// Inputs of every length up to three stripes and a few long ones,
    /// against zstd's frame content checksum (XXH64's low 32 bits).
    #[test]
    fn xxh64_agrees_with_zstd_content_checksums() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut bytes = Vec::new();
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push(state as u8);
        }
        let lengths = (0..=100).chain([127, 128, 129, 1000, 4099, 5000]);
        for len in lengths {
            let input = &bytes[..len];
            let mut c = zstd::bulk::Compressor::new(1).unwrap();
            c.include_checksum(true).unwrap();
            let frame = c.compress(input).unwrap();
            let trailer = u32::from_le_bytes(frame[frame.len() - 4..].try_into().unwrap());
            assert_eq!(xxh64(input, 0) as u32, trailer, "length {len}");
        }
    }

    /// The u16 form equals the byte form of the same little-endian bytes,
    /// with and without a seed.
    #[test]
    fn xxh64_u16_hashes_the_little_endian_bytes() {
        let values: Vec<u16> = (0..300u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u16)
            .collect();
        for len in 0..values.len() {
            let v = &values[..len];
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            for seed in [0, 7, u64::MAX] {
                assert_eq!(xxh64_u16(v, seed), xxh64(&bytes, seed), "{len} values");
            }
        }
    }

    /// The manifest checksum as its definition says, computed the slow way,
    /// and independent of how the records are handed over (digests added by
    /// the caller included); any changed record changes it.
    #[test]
    fn manifest_checksum_follows_its_definition() {
        let n = 3 * ManifestChecksum::CHUNK + 1234;
        let records: Vec<u16> = (0..n as u32)
            .map(|i| ((1 + i % 3) << 14 | (i * 7 % 211)) as u16)
            .collect();
        let mut digests = Vec::new();
        for chunk in records.chunks(ManifestChecksum::CHUNK) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
            digests.extend(xxh64(&bytes, 0).to_le_bytes());
        }
        let slow = xxh64(&digests, 0);

        let mut whole = ManifestChecksum::default();
        whole.update(&records);
        assert_eq!(whole.finish(), slow);
        for piece in [
            1,
            1000,
            ManifestChecksum::CHUNK - 1,
            ManifestChecksum::CHUNK + 5,
        ] {
            let mut sum = ManifestChecksum::default();
            records.chunks(piece).for_each(|p| sum.update(p));
            assert_eq!(sum.finish(), slow, "pieces of {piece}");
        }
        let mut by_digest = ManifestChecksum::default();
        for chunk in records.chunks(ManifestChecksum::CHUNK) {
            by_digest.add_digest(ManifestChecksum::chunk_digest(chunk));
        }
        assert_eq!(by_digest.finish(), slow);

        for at in [0, 5, ManifestChecksum::CHUNK, n - 1] {
            let mut changed = records.clone();
            changed[at] ^= 1 << 15;
            let mut sum = ManifestChecksum::default();
            sum.update(&changed);
            assert_ne!(sum.finish(), slow, "record {at} changed");
        }
        assert_ne!(ManifestChecksum::default().finish(), slow);
    }
}
