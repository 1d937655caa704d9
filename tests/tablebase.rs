//! Generated tables: the checked-in manifest, known results, agreement with the
//! move generator, and clear errors for missing or damaged files.
//!
//! Tables up to three pieces are generated once per test run into Cargo's
//! temporary directory, in both rule sets.

mod common;

use common::reseal_header;
use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::{ProbeError, Tablebase};
use frisian_tb::table::{self, Metric, TableError, TableFile};
use frisian_tb::{fen, Material, MaterialIndex, Position, RuleSet, Side, Wdl};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Tables up to three pieces, both rule sets, generated once.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tables-3");
        let _ = std::fs::remove_dir_all(&dir);
        for rules in RuleSet::ALL {
            generate::run(&Plan::all(rules, &dir, 3), &Quiet).expect("generation succeeds");
        }
        dir
    })
}

/// An empty scratch directory of this name in Cargo's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A scratch directory holding copies of the generated tables whose file names `keep` accepts.
fn copy_of_tables(name: &str, keep: impl Fn(&str) -> bool) -> PathBuf {
    let dir = fresh_dir(name);
    for entry in std::fs::read_dir(tables()).unwrap() {
        let p = entry.unwrap().path();
        let file = p.file_name().unwrap().to_string_lossy().to_string();
        if keep(&file) {
            std::fs::copy(&p, dir.join(&file)).unwrap();
        }
    }
    dir
}

fn tablebase(rules: RuleSet) -> Tablebase {
    let mut tb = Tablebase::new(rules);
    assert!(tb.add_directory(tables()).unwrap() > 0);
    tb
}

fn pos(text: &str, rules: RuleSet) -> Position {
    fen::parse(text, rules).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Manifest lines keyed by (rules, material).
fn manifest(text: &str) -> BTreeMap<(String, String), String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            ((f[0].to_string(), f[1].to_string()), l.to_string())
        })
        .collect()
}

#[test]
fn regenerated_tables_match_the_checked_in_manifest() {
    let checked_in = manifest(include_str!("../tables/MANIFEST"));
    for rules in RuleSet::ALL {
        let mut written = Vec::new();
        for m in Material::all(3) {
            let values = frisian_tb::finished::load_values(tables(), m, rules).unwrap();
            let st = frisian_tb::stats::stats(m, rules, &values);
            written.push(st.manifest_line());
        }
        for line in written {
            let f: Vec<&str> = line.split_whitespace().collect();
            let key = (f[0].to_string(), f[1].to_string());
            assert_eq!(
                checked_in.get(&key),
                Some(&line),
                "manifest line for {key:?}"
            );
        }
    }
}

#[test]
fn every_table_passes_forward_verification() {
    for rules in RuleSet::ALL {
        for m in Material::all(3) {
            let check = frisian_tb::verify::verify_table(tables(), m, rules, 3).unwrap();
            assert!(check.ok(), "{rules} {m}: {check:?}");
        }
    }
}

#[test]
fn known_positions_have_their_known_values() {
    let text = include_str!("data/known_positions.txt");
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        let rules: RuleSet = f[0].parse().unwrap();
        let p = pos(f[1], rules);
        let v = tablebase(rules)
            .probe(&p)
            .unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let dtw = v.dtw.map_or("-".to_string(), |d| d.to_string());
        assert_eq!(
            (v.wdl.name(), dtw.as_str()),
            (f[2], f[3]),
            "known_positions.txt line {}: {}",
            n + 1,
            f[1]
        );
        checked += 1;
    }
    assert!(checked >= 30);
}

#[test]
fn one_king_each_loses_at_once_only_on_46_and_5() {
    // Over every placement (no seven-move restriction), the side to move loses in exactly two.
    let ix = MaterialIndex::new("KvK".parse().unwrap(), RuleSet::Official);
    let tb = tablebase(RuleSet::Official);
    let mut losses = Vec::new();
    for i in 0..ix.size() {
        let p = ix.position(i);
        if p.seven_move().is_none() && tb.probe_wdl(&p).unwrap() == Wdl::Loss {
            losses.push(fen::write(&p));
        }
    }
    losses.sort();
    assert_eq!(losses, ["W:WK46:BK5", "W:WK5:BK46"]);
}

#[test]
fn two_kings_against_one_at_counter_zero_and_seven() {
    let ix = MaterialIndex::new("KKvK".parse().unwrap(), RuleSet::Official);
    let tb = tablebase(RuleSet::Official);
    let (mut won, mut drawn, mut longest, mut won_at_seven) = (0, 0, 0, 0);
    for i in 0..ix.size() {
        let p = ix.position(i);
        let moves = p.seven_move().unwrap().moves;
        let v = tb.probe(&p).unwrap();
        if moves == 0 {
            match v.wdl {
                Wdl::Win => {
                    won += 1;
                    longest = longest.max(v.dtw.unwrap());
                }
                Wdl::Draw => drawn += 1,
                Wdl::Loss => panic!("two kings lose: {}", fen::write(&p)),
            }
        } else if moves == 7 && v.wdl == Wdl::Win {
            won_at_seven += 1;
        }
    }
    // KNOWN_POSITIONS.md: 57,172 of 58,800 boards won, 1,628 drawn, longest 13.
    assert_eq!((won, drawn, longest, won_at_seven), (57_172, 1_628, 13, 0));
}

#[test]
fn the_defending_king_on_the_long_diagonal_draws_but_off_it_loses() {
    let tb = tablebase(RuleSet::Official);
    // Rulebook 2j-II: White must cross 46-5 with the man; every Black king square on the
    // long diagonal out of reach draws against the king on 18 and the man on 15.
    for black in [46, 41, 37] {
        let p = pos(&format!("W:WK18,15:BK{black}"), RuleSet::Official);
        assert_eq!(
            tb.probe_wdl(&p).unwrap(),
            Wdl::Draw,
            "black king on {black}"
        );
    }
    assert_eq!(
        tb.probe_wdl(&pos("W:WK18,15:BK39", RuleSet::Official))
            .unwrap(),
        Wdl::Win
    );
}

#[test]
fn probe_agrees_with_the_move_generator_where_a_capture_is_compulsory() {
    for rules in RuleSet::ALL {
        let tb = tablebase(rules);
        let mut captures = 0;
        for m in Material::all(3) {
            let ix = MaterialIndex::new(m, rules);
            for i in (0..ix.size()).step_by(7) {
                let p = ix.position(i);
                if !p.has_capture() || p.outcome().is_some() {
                    continue;
                }
                captures += 1;
                let v = tb.probe(&p).unwrap();
                let moves = tb.probe_moves(&p).unwrap();
                // Exactly the legal moves, all captures, and the best of them gives the value.
                assert_eq!(moves.len(), p.legal_moves().len());
                assert!(moves.iter().all(|mv| mv.mv.is_capture()));
                assert_eq!(
                    (moves[0].wdl, moves[0].dtw),
                    (v.wdl, v.dtw),
                    "{}",
                    fen::write(&p)
                );
            }
        }
        assert!(captures > 1000, "{captures}");
    }
}

#[test]
fn probing_black_to_move_uses_the_colour_flip() {
    let tb = tablebase(RuleSet::Official);
    let ix = MaterialIndex::new("KMvK".parse().unwrap(), RuleSet::Official);
    for i in (0..ix.size()).step_by(101) {
        let p = ix.position(i);
        assert_eq!(tb.probe(&p).unwrap(), tb.probe(&p.flip()).unwrap());
        assert_eq!(p.flip().turn(), Side::Black);
    }
}

#[test]
fn probing_from_many_threads_gives_the_same_answers() {
    let tb = tablebase(RuleSet::Official);
    let ix = MaterialIndex::new("KKvK".parse().unwrap(), RuleSet::Official);
    let single: Vec<_> = (0..2000)
        .map(|i| tb.probe(&ix.position(i * 97)).unwrap())
        .collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for (i, want) in single.iter().enumerate().rev() {
                    assert_eq!(&tb.probe(&ix.position(i as u64 * 97)).unwrap(), want);
                }
            });
        }
    });
}

#[test]
fn probe_errors_are_typed() {
    let tb = tablebase(RuleSet::Official);
    let four = pos("W:WK1,K2:BK6,K7", RuleSet::Official);
    assert!(matches!(
        tb.probe(&four),
        Err(ProbeError::TooManyPieces { pieces: 4, max: 3 })
    ));
    let other = pos("W:WK1,K2:BK6", RuleSet::Lidraughts);
    assert!(matches!(
        tb.probe(&other),
        Err(ProbeError::WrongRules { .. })
    ));
    // A directory with one table only: the others are missing.
    let dir = fresh_dir("tables-partial");
    let name = table::file_name("KvK".parse().unwrap(), RuleSet::Official, Metric::Wdl);
    std::fs::copy(tables().join(&name), dir.join(&name)).unwrap();
    let mut tb = Tablebase::new(RuleSet::Official);
    tb.add_directory(&dir).unwrap();
    // One king each without a capture is adjudicated, no table needed.
    assert!(matches!(
        tb.probe_wdl(&pos("W:WK1:BK20", RuleSet::Official)),
        Ok(Wdl::Draw)
    ));
    // With a capture on, the WDL table answers; its DTW needs the missing DTW file.
    let capture = pos("W:WK1:BK12", RuleSet::Official);
    assert_eq!(tb.probe_wdl(&capture).unwrap(), Wdl::Win);
    let e = tb.probe_dtw(&capture);
    assert!(
        matches!(
            e,
            Err(ProbeError::MissingTable {
                metric: Metric::Dtw,
                ..
            })
        ),
        "{e:?}"
    );
    assert!(e.unwrap_err().to_string().contains("frisian-tb generate"));
}

/// A position in which the side not to move has no pieces is over (it
/// lost when its last piece was taken): the prober answers it, win in 0 for
/// the side to move, instead of asking for a table with no pieces on one side.
#[test]
fn a_side_without_pieces_is_answered_not_looked_up() {
    for rules in [RuleSet::Official, RuleSet::Lidraughts] {
        let tb = tablebase(rules);
        for text in ["W:W31,32:B", "B:W:BK5,K6"] {
            let p = pos(text, rules);
            let v = tb.probe(&p).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((v.wdl, v.dtw), (Wdl::Win, Some(0)), "{text}");
            assert!(tb.probe_moves(&p).unwrap().is_empty(), "{text}");
        }
        // The side to move without pieces has lost, as before.
        let v = tb.probe(&pos("B:W31,32:B", rules)).unwrap();
        assert_eq!((v.wdl, v.dtw), (Wdl::Loss, Some(0)));
    }
}

/// A copy of a table file with `damage` applied, opened.
fn damaged(name: &str, damage: impl Fn(&mut Vec<u8>)) -> Result<TableFile, TableError> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tables-damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = std::fs::read(tables().join(name)).unwrap();
    damage(&mut bytes);
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    TableFile::open(&path)
}

#[test]
fn damaged_files_give_errors_that_name_the_file() {
    let name = "KKvK.official.wdl";
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Damage)> = vec![
        ("bad magic", Box::new(|b: &mut Vec<u8>| b[0] = b'X')),
        ("header checksum", Box::new(|b: &mut Vec<u8>| b[30] ^= 1)),
        ("version", Box::new(|b: &mut Vec<u8>| b[8] = 9)),
        (
            "truncated",
            Box::new(|b: &mut Vec<u8>| b.truncate(b.len() - 10)),
        ),
        (
            "shorter than the header",
            Box::new(|b: &mut Vec<u8>| b.truncate(20)),
        ),
    ];
    for (what, damage) in cases {
        let err = damaged(name, damage).expect_err(what);
        let msg = err.to_string();
        assert!(msg.contains(name), "{what}: {msg}");
    }
    // A flipped byte inside a compressed block opens, but reading it fails cleanly.
    let t = damaged(name, |b| {
        let n = b.len();
        b[n - 3] ^= 0x55;
    })
    .unwrap();
    assert!(t.check_body().is_err());
    assert!(t.read_all().is_err());
    let last = t.header().states - 1;
    assert!(t.get(last).is_err());
}

#[test]
fn a_file_under_the_wrong_name_is_refused() {
    let dir = fresh_dir("tables-misnamed");
    std::fs::copy(
        tables().join("KKvK.official.wdl"),
        dir.join("KvKK.official.wdl"),
    )
    .unwrap();
    let mut tb = Tablebase::new(RuleSet::Official);
    tb.add_directory(&dir).unwrap();
    let e = tb
        .probe_wdl(&pos("W:WK1:BK6,K7", RuleSet::Official))
        .unwrap_err();
    assert!(e.to_string().contains("expected KvKK"), "{e}");
}

/// A table's two files are decoded together: values of every DTW width come
/// back as written (a draw's DTW as 0), and a damaged DTW file is named.
#[test]
fn decoded_values_are_the_values_written() {
    let m: Material = "KMvK".parse().unwrap();
    let ix = MaterialIndex::new(m, RuleSet::Official);
    let dir = fresh_dir("tables-decoded");
    // DTW files store the DTW halved (a win's is odd, a loss's even): largest
    // DTW 511 (halved, one byte per value) and 999 (two bytes).
    for (top, width) in [(512u64, 1), (1000, 2)] {
        let values: Vec<u16> = (0..ix.size())
            .map(|i| {
                let wdl = [Wdl::Loss, Wdl::Draw, Wdl::Win][(i / 7 % 3) as usize];
                let dtw = match wdl {
                    Wdl::Draw => 0,
                    Wdl::Loss => (2 * i % top) as u16,
                    Wdl::Win => (2 * i % top) as u16 + 1,
                };
                frisian_tb::Value { wdl, dtw }.pack()
            })
            .collect();
        generate::write_tables(&dir, m, RuleSet::Official, &values).unwrap();
        let dtw = dir.join(table::file_name(m, RuleSet::Official, Metric::Dtw));
        let header = TableFile::open(&dtw).unwrap().header().clone();
        assert!(header.dtw_halved);
        assert_eq!(header.value_width, width, "largest DTW {}", top - 1);
        assert_eq!(
            frisian_tb::finished::load_values(&dir, m, RuleSet::Official).unwrap(),
            values,
            "largest DTW {}",
            top - 1
        );
    }
    let dtw = dir.join(table::file_name(m, RuleSet::Official, Metric::Dtw));
    let mut bytes = std::fs::read(&dtw).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x55;
    std::fs::write(&dtw, &bytes).unwrap();
    let err = frisian_tb::finished::load_values(&dir, m, RuleSet::Official)
        .unwrap_err()
        .to_string();
    assert!(err.contains("KMvK.official.dtw"), "{err}");
}

/// Rewrite a table file's header (fixing its checksum).
fn patch_header(path: &std::path::Path, patch: impl Fn(&mut [u8])) {
    let mut bytes = std::fs::read(path).unwrap();
    patch(&mut bytes[..table::HEADER_LEN]);
    reseal_header(&mut bytes);
    std::fs::write(path, &bytes).unwrap();
}

/// Version 3 on halves DTW values; files of versions 1 and 2 hold plies, and
/// byte 19 (reserved before version 3) marks which: readers honour it and
/// refuse it where it cannot apply.
#[test]
fn dtw_scale_follows_the_header() {
    let m: Material = "KKvK".parse().unwrap();
    let dir = copy_of_tables("tables-dtw-scale", |name| name.starts_with("KKvK."));
    let dtw = dir.join(table::file_name(m, RuleSet::Official, Metric::Dtw));
    let wdl = dir.join(table::file_name(m, RuleSet::Official, Metric::Wdl));
    let stored = TableFile::open(&dtw).unwrap().read_all().unwrap();
    let values = frisian_tb::finished::load_values(&dir, m, RuleSet::Official).unwrap();
    let h = TableFile::open(&dtw).unwrap().header().clone();
    assert!(h.dtw_halved && h.format_version >= 3);
    for (&s, &v) in stored.iter().zip(&values) {
        let v = frisian_tb::Value::unpack(v).unwrap();
        if v.wdl != Wdl::Draw {
            assert_eq!(h.dtw_plies(s, v.wdl), v.dtw);
            assert_eq!(v.dtw / 2, s);
        }
    }
    assert!(values
        .iter()
        .any(|&v| frisian_tb::Value::unpack(v).unwrap().dtw > 1));
    // The same bytes labelled version 2 are read as plies (with version
    // 2's checksum, over the decoded bytes: one a value here).
    let decoded: Vec<u8> = stored.iter().map(|&v| u8::try_from(v).unwrap()).collect();
    patch_header(&dtw, |h| {
        h[8..10].copy_from_slice(&2u16.to_le_bytes());
        h[19] = 0;
        h[64..72].copy_from_slice(&table::Fnv::of(&decoded).to_le_bytes());
    });
    let read = frisian_tb::finished::load_values(&dir, m, RuleSet::Official).unwrap();
    for ((&r, &v), &s) in read.iter().zip(&values).zip(&stored) {
        let (r, v) = (
            frisian_tb::Value::unpack(r).unwrap(),
            frisian_tb::Value::unpack(v).unwrap(),
        );
        assert_eq!(r.wdl, v.wdl);
        assert_eq!(r.dtw, if v.wdl == Wdl::Draw { 0 } else { s });
    }
    // A halved version 2 file, or a halved WDL file, is refused, naming the file.
    patch_header(&dtw, |h| h[19] = 1);
    let err = TableFile::open(&dtw).unwrap_err().to_string();
    assert!(
        err.contains("KKvK.official.dtw") && err.contains("DTW scale"),
        "{err}"
    );
    patch_header(&wdl, |h| h[19] = 1);
    let err = TableFile::open(&wdl).unwrap_err().to_string();
    assert!(
        err.contains("KKvK.official.wdl") && err.contains("DTW scale"),
        "{err}"
    );
}

/// A wrong value in a state with a three-move count is found in its own table,
/// and in the other table of the pair exactly at the states with a move into
/// it: each successor is found with its own counters, not its placement's
/// first state's.
#[test]
fn verify_finds_a_wrong_value_with_counters_from_both_sides() {
    let dir = copy_of_tables("tables-wrong-counters", |_| true);
    let (m, rules) = ("KMvK".parse::<Material>().unwrap(), RuleSet::Official);
    let ix = MaterialIndex::new(m, rules);
    let per = ix.counters_per_placement();
    assert!(per > 1, "KMvK has three-move states");
    let mut values = frisian_tb::finished::load_values(&dir, m, rules).unwrap();
    // A won state in which White's king has made two moves in a row.
    let i = (0..values.len())
        .find(|&i| {
            values[i] >> 14 == 3
                && ix
                    .position(i as u64)
                    .three_move(Side::White)
                    .is_some_and(|kc| kc.count == 2)
        })
        .unwrap();
    assert_ne!(i as u64 % per, 0);
    values[i] = 1 << 14; // now lost at once (DTW 0)
    generate::write_tables(&dir, m, rules, &values).unwrap();
    let own = frisian_tb::verify::verify_table(&dir, m, rules, 10).unwrap();
    assert_eq!(own.mismatches, 1);
    assert_eq!(own.first_mismatches[0].index, i as u64);
    // In the flip, every state with a move into state `i` now wins in 1 (none
    // did before: `i` was won for White), and no other state changes.
    let flip = frisian_tb::verify::verify_table(&dir, m.flip(), rules, 1000).unwrap();
    let flip_ix = MaterialIndex::new(m.flip(), rules);
    let expected: Vec<u64> = (0..flip_ix.size())
        .filter(|&j| {
            let p = flip_ix.position(j).flip(); // Black to move, as played
            p.legal_moves()
                .iter()
                .any(|mv| Material::of(&p.play(mv)) == m && ix.index(&p.play(mv)) == i as u64)
        })
        .collect();
    assert!(!expected.is_empty(), "state {i} has predecessors");
    let found: Vec<u64> = flip.first_mismatches.iter().map(|x| x.index).collect();
    assert_eq!(flip.mismatches, expected.len() as u64);
    assert_eq!(found, expected);
    assert!(flip.first_mismatches.iter().all(|x| x.expected == "win 1"));
}

#[test]
fn verify_reports_a_wrong_value() {
    // Rewrite KvM with one value changed (valid checksums): verification must catch it.
    let dir = copy_of_tables("tables-wrong", |_| true);
    let m: Material = "KvM".parse().unwrap();
    let mut values = frisian_tb::finished::load_values(&dir, m, RuleSet::Official).unwrap();
    let i = values.iter().position(|&v| v >> 14 == 3).unwrap(); // a win
    values[i] = 2 << 14; // now a draw, DTW 0
    generate::write_tables(&dir, m, RuleSet::Official, &values).unwrap();
    let check = frisian_tb::verify::verify_table(&dir, m, RuleSet::Official, 3).unwrap();
    assert_eq!(check.mismatches, 1);
    assert_eq!(check.first_mismatches[0].index, i as u64);
    // No temporary files are left behind.
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

#[test]
fn verify_reports_a_damaged_body_and_names_the_file() {
    let dir = copy_of_tables("tables-damaged-body", |_| true);
    let path = dir.join("KKvK.official.dtw");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    let m: Material = "KKvK".parse().unwrap();
    let check = frisian_tb::verify::verify_table(&dir, m, RuleSet::Official, 3).unwrap();
    assert!(!check.ok());
    assert!(
        check
            .file_errors
            .iter()
            .any(|e| e.contains("KKvK.official.dtw")),
        "{:?}",
        check.file_errors
    );
    // Verifying the flip reads the damaged table for its successors: an error naming it.
    let e = frisian_tb::verify::verify_table(&dir, m.flip(), RuleSet::Official, 3).unwrap_err();
    assert!(e.to_string().contains("KKvK.official.dtw"), "{e}");
}

#[test]
fn generation_resumes_by_skipping_complete_tables() {
    let plan = Plan::all(RuleSet::Official, tables(), 3);
    assert!(plan.pending().is_empty());
    let written = generate::run(&plan, &Quiet).unwrap();
    assert!(written.is_empty());
}

#[test]
fn header_counts_add_up() {
    for m in Material::all(3) {
        let f =
            TableFile::open(&tables().join(table::file_name(m, RuleSet::Official, Metric::Wdl)))
                .unwrap();
        let h = f.header();
        assert_eq!(h.states, MaterialIndex::new(m, RuleSet::Official).size());
        assert_eq!(h.wins + h.draws + h.losses, h.states);
    }
}

/// Progress that aborts (by panicking) once `limit` states have been reported.
struct Abort {
    seen: std::sync::atomic::AtomicU64,
    limit: u64,
}

impl generate::Progress for Abort {
    fn advance(&self, states: u64) {
        let n = self
            .seen
            .fetch_add(states, std::sync::atomic::Ordering::SeqCst)
            + states;
        if n > self.limit {
            panic!("interrupted on purpose");
        }
    }
}

#[test]
fn an_interrupted_generation_resumes_where_it_stopped() {
    let dir = copy_of_tables("tables-resume", |name| {
        !name.starts_with("KMvK.official") && !name.starts_with("KvKM.official")
    });
    let m: Material = "KMvK".parse().unwrap();
    let mut plan = Plan::material(RuleSet::Official, &dir, m);
    assert_eq!(plan.pending(), vec![m]);
    // Record every batch (the default records about once a minute).
    plan.checkpoint_every = std::time::Duration::ZERO;
    // Stop about half way through the pair.
    let abort = Abort {
        seen: Default::default(),
        limit: MaterialIndex::new(m, RuleSet::Official).size(),
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        generate::run(&plan, &abort)
    }));
    assert!(result.is_err());
    let marker = dir.join("KMvK.official.progress");
    // "<batches done> <plan fingerprint>"
    let text = std::fs::read_to_string(&marker).unwrap();
    let done: usize = text.split_whitespace().next().unwrap().parse().unwrap();
    assert!(done > 0, "some batches were recorded");
    assert!(
        !frisian_tb::finished::is_complete(&dir, m, RuleSet::Official),
        "no table under its final name yet"
    );
    // Run again: it picks up at the recorded batch and gives the same tables.
    let written = generate::run(&plan, &Quiet).unwrap();
    assert_eq!(written.len(), 2);
    let checked_in = manifest(include_str!("../tables/MANIFEST"));
    for st in written {
        let line = st.manifest_line();
        assert_eq!(
            checked_in.get(&(st.rules.clone(), st.material.clone())),
            Some(&line)
        );
    }
    assert!(!marker.exists());
    assert!(!dir.join("KMvK.official.work").exists());
}

/// Format version 2: a DTW file leaves drawn states unspecified (the writer
/// repeats the DTW before them, for compression); every reader takes draws
/// from the WDL file, so decoded values, probes and the manifest checksums do
/// not see what the DTW file holds there.
#[test]
fn dtw_files_leave_draws_unspecified_and_readers_ignore_them() {
    let m: Material = "KMvK".parse().unwrap();
    let open = |metric| {
        TableFile::open(&tables().join(table::file_name(m, RuleSet::Official, metric))).unwrap()
    };
    let (wdl, dtw) = (open(Metric::Wdl), open(Metric::Dtw));
    assert_eq!(dtw.header().format_version, table::FORMAT_VERSION);
    let (w, d) = (wdl.read_all().unwrap(), dtw.read_all().unwrap());
    let filled = w
        .iter()
        .zip(&d)
        .filter(|&(&w, &d)| w == 1 && d != 0)
        .count();
    assert!(filled > 0, "some draw follows a decided state in its block");
    // Decoded values give every draw DTW 0 ...
    let values = frisian_tb::finished::load_values(tables(), m, RuleSet::Official).unwrap();
    for (i, &v) in values.iter().enumerate() {
        let v = frisian_tb::Value::unpack(v).unwrap();
        assert!(v.wdl != Wdl::Draw || v.dtw == 0, "state {i}");
    }
    // ... and a probe of a drawn state gives no DTW.
    let ix = MaterialIndex::new(m, RuleSet::Official);
    let tb = tablebase(RuleSet::Official);
    let drawn = (0..ix.size())
        .find(|&i| w[i as usize] == 1 && d[i as usize] != 0 && ix.position(i).outcome().is_none())
        .expect("a drawn state with a filled DTW");
    let v = tb.probe(&ix.position(drawn)).unwrap();
    assert_eq!((v.wdl, v.dtw), (Wdl::Draw, None));
}

/// Files of format version 1 (DTW 0 for draws, in plies) are still read.
#[test]
fn version_one_files_are_still_read() {
    let t = damaged("KKvK.official.dtw", |b| {
        b[8..10].copy_from_slice(&1u16.to_le_bytes());
        b[19] = 0; // version 1 has DTW in plies
        reseal_header(b);
    })
    .unwrap();
    assert_eq!(t.header().format_version, 1);
    t.check_body().unwrap();
    let e = damaged("KKvK.official.dtw", |b| {
        b[8..10].copy_from_slice(&(table::FORMAT_VERSION + 1).to_le_bytes());
        reseal_header(b);
    })
    .expect_err("a newer version is refused");
    assert!(matches!(e, TableError::Version { .. }), "{e}");
    assert!(e.to_string().contains("versions 1 to 4"), "{e}");
}

/// Version 4's values checksum is FNV-1a 64 over the content checksums that
/// end the blocks' zstd frames; version 3's was over the decoded bytes.
/// Readers take each version's own, and refuse a file whose checksum does
/// not match.
#[test]
fn values_checksums_follow_the_format_version() {
    let name = "KMvK.official.dtw";
    let bytes = std::fs::read(tables().join(name)).unwrap();
    let t = TableFile::open(&tables().join(name)).unwrap();
    let h = t.header().clone();
    assert_eq!((h.format_version, h.value_width), (4, 1));
    // The frames' trailers, found from the offset table after the header.
    let offset = |i: usize| {
        let at = table::HEADER_LEN + 8 * i;
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
    };
    let mut frames = table::Fnv::default();
    for b in 0..h.blocks as usize {
        let (start, end) = (offset(b), offset(b + 1));
        assert_ne!(
            bytes[start + 4] & 0x04,
            0,
            "block {b} has a content checksum"
        );
        frames.update(&bytes[end - 4..end]);
    }
    assert_eq!(frames.0, h.values_checksum);
    let stored = t.read_all().unwrap();
    // As version 3: the checksum over the decoded bytes (one a value here).
    let decoded: Vec<u8> = stored.iter().map(|&v| u8::try_from(v).unwrap()).collect();
    let v3 = damaged(name, |b| {
        b[8..10].copy_from_slice(&3u16.to_le_bytes());
        b[64..72].copy_from_slice(&table::Fnv::of(&decoded).to_le_bytes());
        reseal_header(b);
    })
    .unwrap();
    assert_eq!(v3.read_all().unwrap(), stored);
    // Each version's checksum fails under the other's reading.
    for (version, sum) in [(3u16, frames.0), (4, table::Fnv::of(&decoded))] {
        let e = damaged(name, |b| {
            b[8..10].copy_from_slice(&version.to_le_bytes());
            b[64..72].copy_from_slice(&sum.to_le_bytes());
            reseal_header(b);
        })
        .unwrap()
        .read_all()
        .expect_err("a values checksum of the other kind");
        assert!(
            e.to_string().contains("checksum of the decoded values"),
            "{e}"
        );
    }
}

/// A table laid out otherwise than this crate writes it (a byte per WDL
/// value, 1,000 states a block, so the WDL and DTW blocks no longer line
/// up) is read alike by every reader that streams a table: `verify`, the
/// check of the files alone, the statistics, the generator's loading, and
/// probes; and a damaged block in it is still found.
#[test]
fn tables_laid_out_otherwise_read_alike() {
    let (m, rules) = ("KMvK".parse::<Material>().unwrap(), RuleSet::Official);
    let dir = copy_of_tables("other-layout", |_| true);
    let name = table::file_name(m, rules, Metric::Wdl);
    let original = TableFile::open(&tables().join(&name)).unwrap();
    let h = original.header().clone();
    let values = original.read_all().unwrap();
    let spec = table::TableSpec {
        metric: Metric::Wdl,
        rules,
        material: m,
        states: h.states,
        max_value: 2,
        counts: (h.wins, h.draws, h.losses),
        longest_win: h.longest_win,
    };
    let mut w = table::TableWriter::new(&dir.join(&name), &spec).with_layout(1, 1000);
    let raw: Vec<Vec<u8>> = values.chunks(1000).map(|c| w.encode(c)).collect();
    w.push(table::compress_blocks(w.level(), &raw).unwrap());
    w.finish().unwrap();
    let relaid = TableFile::open(&dir.join(&name)).unwrap();
    assert_eq!(
        (relaid.header().value_width, relaid.header().block_states),
        (1, 1000)
    );
    assert_eq!(relaid.read_all().unwrap(), values);

    let stats = frisian_tb::stats::table_stats(tables(), m, rules).unwrap();
    assert_eq!(
        frisian_tb::stats::table_stats(&dir, m, rules).unwrap(),
        stats
    );
    assert_eq!(
        frisian_tb::finished::load_values(&dir, m, rules).unwrap(),
        frisian_tb::finished::load_values(tables(), m, rules).unwrap()
    );
    let files = frisian_tb::verify::check_table_files(&dir, m, rules, &|_| {}).unwrap();
    assert!(files.ok(), "{:?}", files.file_errors);
    assert_eq!(files.stats.as_ref(), Some(&stats));
    let full = frisian_tb::verify::verify_table(&dir, m, rules, 3).unwrap();
    assert!(full.ok() && full.stats.as_ref() == Some(&stats));
    let mut tb = Tablebase::new(rules);
    tb.add_directory(&dir).unwrap();
    let reference = tablebase(rules);
    let ix = MaterialIndex::new(m, rules);
    for i in (0..ix.size()).step_by(997) {
        let p = ix.position(i);
        if p.outcome().is_none() {
            assert_eq!(
                tb.probe(&p).unwrap(),
                reference.probe(&p).unwrap(),
                "state {i}"
            );
        }
    }

    // One byte changed inside the last block's frame, the body checksum
    // made to match: zstd's content checksum finds it, in both checks.
    let mut bytes = std::fs::read(dir.join(&name)).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    let body = table::Fnv::of(&bytes[table::HEADER_LEN..]);
    bytes[72..80].copy_from_slice(&body.to_le_bytes());
    reseal_header(&mut bytes);
    std::fs::write(dir.join(&name), &bytes).unwrap();
    TableFile::open(&dir.join(&name))
        .unwrap()
        .check_body()
        .unwrap();
    for check in [
        frisian_tb::verify::check_table_files(&dir, m, rules, &|_| {}).unwrap(),
        frisian_tb::verify::verify_table(&dir, m, rules, 3).unwrap(),
    ] {
        assert!(!check.ok() && check.stats.is_none());
        assert!(
            check.file_errors.iter().any(|e| e.contains(&name)),
            "{:?}",
            check.file_errors
        );
    }
}
