//! Damaged and forged table files: whatever their bytes, opening, reading,
//! checking and probing give a value or a typed error, never a panic, an
//! abort or an allocation the size of a forged header field.
//!
//! Two kinds of damage, as property tests over the real two-piece tables:
//! random bytes changed anywhere (the header checksum catches most header
//! damage), and header fields forged with the header checksum made to match
//! again (what a careless tool, or a malicious file, would produce).

mod common;

use common::reseal_header;
use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::Tablebase;
use frisian_tb::table::{TableFile, HEADER_LEN};
use frisian_tb::{fen, RuleSet};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Tables up to two pieces in the official rules, generated once.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tables-2-fuzz");
        let _ = std::fs::remove_dir_all(&dir);
        generate::run(&Plan::all(RuleSet::Official, &dir, 2), &Quiet).expect("generation succeeds");
        dir
    })
}

const FILES: [&str; 4] = [
    "KvK.official.wdl",
    "KvK.official.dtw",
    "KvM.official.wdl",
    "MvK.official.dtw",
];

/// A directory of its own for each case (cases may run on several threads).
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "tables-fuzz-{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// [`exercise`] in a scratch directory, removed afterwards.
fn in_scratch(name: &str, bytes: &[u8]) -> Answers {
    let dir = scratch();
    let answers = exercise(&dir, name, bytes);
    let _ = std::fs::remove_dir_all(&dir);
    answers
}

/// What the readers answered about a file: each answer a value or an
/// error (as text, since errors name their scratch directory).
#[derive(Debug, PartialEq)]
struct Answers {
    header_states: Result<u64, String>,
    values: Vec<Result<u16, String>>,
    range: Result<Vec<u16>, String>,
    all: Result<Vec<u16>, String>,
    probe: Result<String, String>,
    probe_wdl: Result<String, String>,
    probe_dtw: Result<String, String>,
}

impl Answers {
    /// Every answer of `self` is an error or the same as in `good`'s.
    fn agree_with(&self, good: &Answers) -> Result<(), String> {
        fn short<T: std::fmt::Debug>(r: &Result<T, String>) -> String {
            let text = format!("{r:?}");
            text.chars().take(200).collect()
        }
        fn same<T: PartialEq + std::fmt::Debug>(
            what: &str,
            got: &Result<T, String>,
            good: &Result<T, String>,
        ) -> Result<(), String> {
            match (got, good) {
                (Err(_), _) => Ok(()),
                (Ok(a), Ok(b)) if a == b => Ok(()),
                _ => Err(format!(
                    "{what}: {} where the undamaged file gives {}",
                    short(got),
                    short(good)
                )),
            }
        }
        same("states", &self.header_states, &good.header_states)?;
        for (k, (got, want)) in self.values.iter().zip(&good.values).enumerate() {
            same(&format!("value {k}"), got, want)?;
        }
        same("range", &self.range, &good.range)?;
        same("all", &self.all, &good.all)?;
        same("probe", &self.probe, &good.probe)?;
        same("probe_wdl", &self.probe_wdl, &good.probe_wdl)?;
        same("probe_dtw", &self.probe_dtw, &good.probe_dtw)
    }
}

/// Everything a reader may do with a file; each must return, not panic.
fn exercise(dir: &Path, name: &str, bytes: &[u8]) -> Answers {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let text = |e: &dyn std::fmt::Display| e.to_string();
    let opened = TableFile::open(&path);
    let mut answers = Answers {
        header_states: opened
            .as_ref()
            .map(|t| t.header().states)
            .map_err(|e| text(e)),
        values: Vec::new(),
        range: Err("not opened".into()),
        all: Err("not opened".into()),
        probe: Err(String::new()),
        probe_wdl: Err(String::new()),
        probe_dtw: Err(String::new()),
    };
    if let Ok(t) = &opened {
        let h = t.header().clone();
        let _ = t.check_body();
        // The parallel check of every block (`verify`'s) finds what the
        // serial pass over the blocks finds.
        assert_eq!(
            t.check_blocks().is_ok(),
            t.for_each_block(|_| {}).is_ok(),
            "{name}"
        );
        // The same indexes whatever the header says, so that answers about
        // one state compare with the undamaged file's.
        answers.values = [
            0,
            1,
            100,
            1000,
            3000,
            h.states / 2,
            h.states.saturating_sub(1),
            h.states,
        ]
        .iter()
        .map(|&idx| t.get(idx).map_err(|e| text(&e)))
        .collect();
        answers.range = t
            .read_range(0, (h.states.min(100)) as usize)
            .map_err(|e| text(&e));
        answers.all = t.read_all().map_err(|e| text(&e));
    }
    // Probing a position of the file's material through a tablebase.
    let mut tb = Tablebase::new(RuleSet::Official);
    let _ = tb.add_directory(dir);
    let fen = if name.starts_with("KvK") {
        "W:WK28:BK23"
    } else if name.starts_with("KvM") {
        "W:WK28:B23"
    } else {
        "W:W28:BK23"
    };
    let pos = fen::parse(fen, RuleSet::Official).unwrap();
    let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
    answers.probe = tb.probe(&pos).map(|v| debug(&v)).map_err(|e| text(&e));
    answers.probe_wdl = tb.probe_wdl(&pos).map(|v| debug(&v)).map_err(|e| text(&e));
    answers.probe_dtw = tb.probe_dtw(&pos).map(|v| debug(&v)).map_err(|e| text(&e));
    answers
}

/// The answers about each undamaged file, found once.
fn undamaged(file: &str) -> &'static Answers {
    static ANSWERS: OnceLock<Vec<(String, Answers)>> = OnceLock::new();
    let all = ANSWERS.get_or_init(|| {
        FILES
            .iter()
            .map(|&f| {
                let b = std::fs::read(tables().join(f)).unwrap();
                (f.to_string(), in_scratch(f, &b))
            })
            .collect()
    });
    &all.iter().find(|(f, _)| f == file).expect("one of FILES").1
}

/// A header field: offset and width in bytes.
fn field() -> impl Strategy<Value = (usize, usize)> {
    prop::sample::select(vec![
        (8, 2),  // format version
        (10, 1), // metric
        (11, 1), // rule set
        (12, 1), // material
        (13, 1),
        (14, 1),
        (15, 1),
        (16, 2), // index scheme
        (18, 1), // value width
        (19, 1), // DTW scale
        (20, 4), // block size
        (24, 8), // states
        (32, 8), // wins
        (40, 8), // draws
        (48, 8), // losses
        (56, 4), // longest win
        (60, 4), // blocks
        (64, 8), // values checksum
        (72, 8), // body checksum
    ])
}

/// A value for a field: small, extreme, or anything.
fn field_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..4,
        Just(u64::MAX),
        Just(u32::MAX as u64),
        Just(1 << 31),
        Just(1 << 40),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn changed_bytes_anywhere_give_errors_not_panics(
        file in prop::sample::select(FILES.to_vec()),
        changes in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut b = std::fs::read(tables().join(file)).unwrap();
        for (at, x) in changes {
            let i = at.index(b.len());
            b[i] ^= x;
        }
        if let Some(c) = cut {
            b.truncate(c.index(b.len() + 1));
        }
        let answers = in_scratch(file, &b);
        if let Err(e) = answers.agree_with(undamaged(file)) {
            return Err(TestCaseError::fail(format!("{file}: {e}")));
        }
    }

    #[test]
    fn forged_header_fields_give_errors_not_panics(
        file in prop::sample::select(FILES.to_vec()),
        forged in prop::collection::vec((field(), field_value()), 1..4),
        extra in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut b = std::fs::read(tables().join(file)).unwrap();
        for ((at, width), v) in forged {
            b[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        }
        reseal_header(&mut b);
        b.extend(extra);
        let _ = in_scratch(file, &b);
    }
}

#[test]
fn the_undamaged_files_read_and_probe() {
    // The exercise itself must work on good files, or the properties above
    // would pass by never reaching the readers.
    for file in FILES {
        let b = std::fs::read(tables().join(file)).unwrap();
        let dir = scratch();
        let answers = exercise(&dir, file, &b);
        assert!(answers.all.is_ok(), "{file}: {:?}", answers.all.err());
        let t = TableFile::open(&dir.join(file)).unwrap();
        t.check_body().unwrap();
        assert_eq!(t.read_all().unwrap().len() as u64, t.header().states);
    }
    let mut tb = Tablebase::new(RuleSet::Official);
    tb.add_directory(tables()).unwrap();
    let pos = fen::parse("W:WK28:BK23", RuleSet::Official).unwrap();
    assert!(tb.probe(&pos).is_ok());
}

/// A header whose sizes agree with each other (states, block size, blocks,
/// counts), forged over a real file with its offset table rebuilt to match:
/// it passes every check of the header and the offsets, so only the
/// readers' own limits stand between it and a huge allocation.
fn forged_sizes(file: &str, states: u64, block_states: u32, width: u8) -> Vec<u8> {
    let b = std::fs::read(tables().join(file)).unwrap();
    let blocks = states.div_ceil(block_states as u64);
    let mut h = b[..HEADER_LEN].to_vec();
    h[18] = width;
    h[20..24].copy_from_slice(&block_states.to_le_bytes());
    h[24..32].copy_from_slice(&states.to_le_bytes());
    h[32..40].copy_from_slice(&states.to_le_bytes());
    h[40..56].fill(0);
    h[60..64].copy_from_slice(&(blocks as u32).to_le_bytes());
    reseal_header(&mut h);
    // Every block the original's first block (or empty, past the first).
    let first = {
        let o = |i: usize| u64::from_le_bytes(b[HEADER_LEN + 8 * i..][..8].try_into().unwrap());
        b[o(0) as usize..o(1) as usize].to_vec()
    };
    let start = (HEADER_LEN as u64) + (blocks + 1) * 8;
    let mut out = h;
    out.extend(start.to_le_bytes());
    for _ in 0..blocks {
        out.extend((start + first.len() as u64).to_le_bytes());
    }
    out.extend(first);
    out
}

#[test]
fn forged_sizes_give_errors_not_huge_allocations() {
    for file in FILES {
        let real = TableFile::open(&tables().join(file))
            .unwrap()
            .header()
            .states;
        for (states, block_states, width) in [
            (1u64 << 40, u32::MAX, 2u8),
            (u32::MAX as u64, u32::MAX, 2),
            (1 << 36, 1 << 31, 1),
            (1 << 33, 1 << 31, 4),
            (3, 1, 2),
            // The true number of states: past the header's checks, on to the blocks.
            (real, frisian_tb::table::MAX_BLOCK_STATES, 2),
            (real, frisian_tb::table::MAX_BLOCK_STATES + 1, 2),
            (real, 1, 4),
            (real, 3, 1),
        ] {
            if states.div_ceil(block_states as u64) > 1 << 20 {
                continue;
            }
            let bytes = forged_sizes(file, states, block_states, width);
            let _ = in_scratch(file, &bytes);
        }
    }
}

/// A file named like a table of a material no table is made for (more
/// pieces than any index holds) is left out of the tablebase and named in
/// its list of skipped files; the other tables still probe.
#[test]
fn a_file_named_like_a_table_of_too_many_pieces_is_skipped() {
    let dir = scratch();
    for f in ["KvK.official.wdl", "KvK.official.dtw"] {
        std::fs::copy(tables().join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("KKKKKKKMvK.official.wdl"), b"not a table").unwrap();
    let mut tb = Tablebase::new(RuleSet::Official);
    assert_eq!(tb.add_directory(&dir).unwrap(), 2);
    let skipped = tb.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].0.ends_with("KKKKKKKMvK.official.wdl"));
    assert!(
        skipped[0].1.contains("at most 8 pieces"),
        "{}",
        skipped[0].1
    );
    let pos = fen::parse("W:WK28:BK23", RuleSet::Official).unwrap();
    assert!(tb.probe(&pos).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}
