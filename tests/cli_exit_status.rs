//! The command line as a script uses it: every command exits non-zero
//! whenever it did not do what was asked, and says why.

mod common;

use common::{generated, run_cli as run};

use std::path::Path;

/// Flip one byte of a table file's body (past its header and offsets).
fn flip_a_body_byte(file: &Path) {
    let mut b = std::fs::read(file).unwrap();
    let at = b.len() - 10;
    b[at] ^= 0x40;
    std::fs::write(file, b).unwrap();
}

/// `info` on a file whose body no longer matches its checksum prints the
/// header, says DAMAGED, and exits 1, as text and as JSON.
#[test]
fn info_on_a_damaged_table_exits_1() {
    let dir = generated("exit-info", 2);
    let file = dir.join("KvK.official.wdl");
    flip_a_body_byte(&file);
    let f = file.to_str().unwrap();
    let (code, out, err) = run(&["info", f]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("states:") && out.contains("DAMAGED"), "{out}");
    assert!(err.contains("body checksum"), "{err}");
    let (code, out, _) = run(&["info", "--json", f]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["body_checksum"].as_str().unwrap().starts_with("DAMAGED"));
}

/// `info` on a directory says so instead of an operating-system error.
#[test]
fn info_on_a_directory_says_it_is_one() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (code, _, err) = run(&["info", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("is a directory; give a table file"), "{err}");
}

/// `study --pdn` exits 1 when a study could not be checked (and names each),
/// 2 for a file with no game at all, and 0 when every study was checked.
#[test]
fn study_pdn_exits_non_zero_unless_every_study_was_checked() {
    let tables = generated("exit-study", 4);
    let t = tables.to_str().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pdn = |name: &str| root.join(name).to_str().unwrap().to_string();
    let (code, out, err) = run(&[
        "study",
        "--tables",
        t,
        "--pdn",
        &pdn("tests/data/studies.pdn"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("8 studies:") && out.contains("3 not checked"),
        "{out}"
    );
    assert!(err.contains("3 of 8 studies could not be checked"), "{err}");
    let (code, out, err) = run(&[
        "study",
        "--tables",
        t,
        "--pdn",
        &pdn("examples/studies.pdn"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("5 studies:") && out.contains("0 not checked"),
        "{out}"
    );
    let empty = tables.join("empty.pdn");
    std::fs::write(&empty, "").unwrap();
    let (code, _, err) = run(&["study", "--tables", t, "--pdn", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("holds no game"), "{err}");
    // One study: "1 study", not "1 studies".
    let one = tables.join("one.pdn");
    let text = std::fs::read_to_string(pdn("examples/studies.pdn")).unwrap();
    let first = text.split("\n\n[").nth(1).unwrap();
    std::fs::write(&one, format!("[{first}\n")).unwrap();
    let (code, out, _) = run(&["study", "--tables", t, "--pdn", one.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\n1 study: "), "{out}");
}

/// `verify --manifest` names the tables the manifest lists that the
/// directory lacks (up to the directory's largest table) and exits 1.
#[test]
fn verify_names_tables_the_manifest_lists_but_the_directory_lacks() {
    let dir = generated("exit-verify-missing", 3);
    let d = dir.to_str().unwrap();
    let manifest = dir.join("MANIFEST");
    let m = manifest.to_str().unwrap();
    for f in ["KMvK.official.wdl", "KMvK.official.dtw"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let (code, out, err) = run(&["verify", "--files-only", "--tables", d, "--manifest", m]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("1 listed in") && out.contains("missing from the directory"),
        "{out}"
    );
    assert!(err.contains("KMvK (official)"), "{err}");
    // A manifest that goes on to more pieces than the directory holds:
    // only the tables up to the directory's largest are asked for.
    let (code, out, err) = run(&[
        "verify",
        "--files-only",
        "--tables",
        d,
        "--max-pieces",
        "2",
        "--manifest",
        m,
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `--play` takes moves; a bare number is a mistyped move, not a move number.
#[test]
fn a_bare_number_in_play_is_an_error() {
    let (code, _, err) = run(&["moves", "--play", "32 27", "W:W31-50:B1-20"]);
    assert_eq!(code, 2);
    assert!(err.contains("'32' is not a move"), "{err}");
    // Move numbers, also written together with the move, are skipped.
    let (code, out, err) = run(&[
        "moves",
        "--play",
        "1.32-27 20-24 2. 33-29",
        "W:W31-50:B1-20",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("legal move for Black"), "{out}");
}

/// `--threads` must be at least 1 and at most four per processor.
#[test]
fn thread_counts_are_checked() {
    for t in ["0", "100000"] {
        let (code, _, err) = run(&["generate", "--threads", t, "--max-pieces", "2", "--plan"]);
        assert_eq!(code, 2, "{t}");
        assert!(err.contains(&format!("--threads {t}: give 1 to")), "{err}");
    }
}

/// A run that will refuse pairs for lack of memory says so before it starts.
#[test]
fn generate_warns_of_refused_pairs_before_it_starts() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exit-refused");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&[
        "generate",
        "--max-pieces",
        "3",
        "--max-memory",
        "0.0001",
        "--out",
        d,
    ]);
    assert_eq!(code, 2, "{err}");
    let warning = err.find("warning: ").expect("a warning");
    let start = err.find("tables to generate").expect("the start line");
    assert!(warning < start, "{err}");
    assert!(
        err[warning..].contains("need more memory than the"),
        "{err}"
    );
}

/// A missing directory of a search path is a warning; the others answer.
#[test]
fn a_missing_directory_of_the_search_path_is_a_warning() {
    let dir = generated("exit-search-path", 2);
    let missing = dir.join("not-there");
    let (code, out, err) = run(&[
        "probe",
        "--tables",
        dir.to_str().unwrap(),
        "--tables",
        missing.to_str().unwrap(),
        "W:WK46:BK5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loss"), "{out}");
    assert!(
        err.contains("warning: table directory") && err.contains("not-there"),
        "{err}"
    );
}

/// One legal move is "1 legal move".
#[test]
fn one_legal_move_is_singular() {
    let (code, out, _) = run(&["show", "W:W28:B9,18,20,29,38"]);
    assert_eq!(code, 0);
    assert!(out.contains("1 legal move."), "{out}");
}

/// A counter field that does not fit the position is named by its column.
#[test]
fn a_wrong_counter_field_is_named_by_its_column() {
    let (code, _, err) = run(&["show", "W:W31,K45:B7:TW40/2"]);
    assert_eq!(code, 2);
    assert!(err.contains("column 14"), "{err}");
    assert!(err.contains("names square 40"), "{err}");
}

/// The lidraughts ply count under the official rules, which have none, is
/// ignored with a warning (a lidraughts FEN may be pasted with its tail);
/// under the lidraughts rules it counts.
#[test]
fn a_ply_count_under_the_official_rules_is_ignored_with_a_warning() {
    let (code, _, err) = run(&["show", "W:WK45:BK5,K6:H9"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: the lidraughts ply count H9 is ignored"),
        "{err}"
    );
    let (code, _, err) = run(&["show", "W:WK45:BK5,K6:H0"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, out, err) = run(&["show", "--rules", "lidraughts", "W:WK45:BK5,K6:H9"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.is_empty() && out.contains("9 of 14 plies"),
        "{out}{err}"
    );
}

/// A table whose body bytes changed since it was written is not taken as
/// complete: `generate` names it, generates it again, and the manifest
/// lines are the published ones.
#[test]
fn generate_regenerates_a_table_whose_bytes_changed() {
    let dir = generated("exit-bit-rot", 3);
    let d = dir.to_str().unwrap();
    let file = dir.join("KMvK.official.dtw");
    flip_a_body_byte(&file);
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("KMvK.official.dtw")
            && err.contains("body checksum")
            && err.contains("generating it again"),
        "{err}"
    );
    let (code, out, err) = run(&[
        "verify",
        "--files-only",
        "--tables",
        d,
        "--manifest",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tables/MANIFEST")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
}
