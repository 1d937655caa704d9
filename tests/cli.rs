//! The command line, run as a user would.

mod common;

use common::{generated, run_cli as run};

use std::process::Command;

const START: &str = "W:W31-50:B1-20";

/// The line `verify` printed for material `m`.
fn table_line(out: &str, m: &str) -> String {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(m))
        .unwrap_or_else(|| panic!("no line for {m}: {out}"))
        .to_string()
}

#[test]
fn moves_json_lists_the_rulebook_captures() {
    let (code, out, _) = run(&[
        "moves",
        "--json",
        "--play",
        "32-27 20-24 33-29 24x33",
        START,
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let list = v.as_array().unwrap();
    let names: Vec<&str> = list.iter().map(|m| m["move"].as_str().unwrap()).collect();
    assert_eq!(names, ["34x32", "38x29", "39x28", "43x23"]);
    assert_eq!(list[3]["from"], 43);
    assert_eq!(list[3]["to"], 23);
    assert_eq!(list[3]["captures"], serde_json::json!([33]));
    assert_eq!(list[3]["path"], serde_json::json!([43, 23]));
}

#[test]
fn moves_json_gives_the_landing_path() {
    let (code, out, _) = run(&["moves", "--json", "W:W28:B9,18,20,29,38"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["captures"], serde_json::json!([9, 18, 20, 29, 38]));
    assert_eq!(v[0]["path"].as_array().unwrap().len(), 6);
}

#[test]
fn move_numbers_in_play_are_skipped() {
    let (code, out, _) = run(&[
        "moves",
        "--json",
        "--play",
        "1. 32-27 20-24 2. 33-29 24x33",
        START,
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn perft_json() {
    let (code, out, _) = run(&["perft", "--depth", "4", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), r#"{"depth":4,"nodes":3874}"#);
    let (_, out, _) = run(&["perft", "--depth", "4", "--json", "--start", "frysk"]);
    assert_eq!(out.trim(), r#"{"depth":4,"nodes":5329}"#);
    let (_, out, _) = run(&["perft", "--depth", "2", "--json", "--divide", START]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["nodes"], 81);
    assert_eq!(v["divide"].as_array().unwrap().len(), 9);
}

#[test]
fn illegal_move_names_the_move_and_lists_the_legal_ones() {
    let (code, _, err) = run(&["moves", "--play", "32-27 20-24 33-29 24-29", START]);
    assert_eq!(code, 2);
    assert!(err.contains("'24-29'"), "{err}");
    assert!(err.contains("24x33"), "{err}");
}

#[test]
fn bad_fen_exits_2_with_a_message() {
    let (code, out, err) = run(&["moves", "W:W31,51:B1"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("column 7") && err.contains("51"), "{err}");
    let (code, _, err) = run(&["perft", "--depth", "2", "--rules", "bogus"]);
    assert_eq!(code, 2);
    assert!(err.contains("bogus"), "{err}");
}

#[test]
fn show_draws_the_board_and_counters() {
    let (code, out, _) = run(&["show", "W:W31,K45:B7:TW45/2"]);
    assert_eq!(code, 0);
    assert!(out.contains("king on 45 has made 2"), "{out}");
    assert!(out.contains("W:W31,K45:B7:TW45/2"), "{out}");
    let (_, out, _) = run(&["show", "W:WK46:BK5"]);
    assert!(out.contains("Game over: loss"), "{out}");
}

#[test]
fn show_json_gives_pieces_counters_and_outcome() {
    let (code, out, _) = run(&["show", "--json", "--play", "45-40", "W:W31,K45:BK4"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["turn"], "black");
    assert_eq!(v["white"]["kings"], serde_json::json!([40]));
    assert_eq!(v["white"]["men"], serde_json::json!([31]));
    assert_eq!(
        v["white"]["three_move"],
        serde_json::json!({"king": 40, "count": 1})
    );
    // Black has no men: the three-move rule does not apply to it.
    assert_eq!(v["black"]["three_move"], serde_json::Value::Null);
    assert_eq!(v["outcome"], serde_json::Value::Null);
    let (_, out, _) = run(&["show", "--json", "W:WK1,K2:BK6"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["seven_move"],
        serde_json::json!({"side": "white", "moves": 0})
    );
    let (_, out, _) = run(&["show", "--json", "W:WK46:BK5"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["outcome"]["wdl"], "loss");
    assert_eq!(v["legal_moves"], 8);
}

#[test]
fn out_of_range_arguments_are_refused_with_the_range() {
    for (args, expect) in [
        (
            &["materials", "--max-pieces", "100"][..],
            "tables have 2 to 8 pieces",
        ),
        (
            &["generate", "--max-pieces", "9"][..],
            "tables have 2 to 8 pieces",
        ),
        (
            &["verify", "--max-pieces", "1"][..],
            "tables have 2 to 8 pieces",
        ),
        (
            &["generate", "--material", "KKKKKvKKKKK"][..],
            "has 10 pieces",
        ),
        (
            &["generate", "--max-memory=-1"][..],
            "not a positive number of GiB",
        ),
        (
            &["verify", "--max-memory", "NaN"][..],
            "not a positive number of GiB",
        ),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in [
        "moves",
        "perft",
        "show",
        "materials",
        "generate",
        "probe",
        "info",
        "verify",
    ] {
        let (code, out, _) = run(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(
            out.contains("Examples:") && out.contains("frisian-tb "),
            "{cmd}: {out}"
        );
    }
}

#[test]
fn generate_probe_info_and_verify_from_the_command_line() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-tables");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["generate", "--max-pieces", "2", "--out", d, "--json"]);
    assert_eq!(code, 0, "{err}");
    let written: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(written.as_array().unwrap().len(), 4);
    assert!(std::fs::read_to_string(dir.join("MANIFEST"))
        .unwrap()
        .contains("official KvK 7350 1296 6050 4 1 "));
    // Again: everything is complete and skipped.
    let (code, out, _) = run(&["generate", "--max-pieces", "2", "--out", d, "--json"]);
    assert_eq!((code, out.trim()), (0, "[]"));
    // Probe: a capture wins in one ply; the JSON gives every move.
    let (code, out, _) = run(&["probe", "--tables", d, "--json", "W:WK1:BK12"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["wdl"].as_str(), v["dtw"].as_u64()),
        (Some("win"), Some(1))
    );
    assert_eq!(v["moves"][0]["wdl"], "win");
    // More pieces than the tables: the capture is compulsory, so a search
    // reaches the tables in every line.
    let (code, out, err) = run(&["probe", "--tables", d, "W:WK1,K2:BK12"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("win in 1 ply for White"), "{out}");
    assert!(out.contains("3 pieces, more than the tables hold"), "{out}");
    // Where the search does not reach them: a clear error.
    let (code, _, err) = run(&[
        "probe",
        "--tables",
        d,
        "--search-depth",
        "0",
        "W:WK1,K2:BK12",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("3 pieces") && err.contains("at most 2") && err.contains("KKvK"),
        "{err}"
    );
    let (code, out, _) = run(&[
        "info",
        "--json",
        dir.join("KvK.official.wdl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["states"].as_u64(), v["body_checksum"].as_str()),
        (Some(7350), Some("ok"))
    );
    let (code, out, _) = run(&[
        "verify",
        "--tables",
        d,
        "--rules",
        "official",
        "--material",
        "KvM",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 table checked, 0 failed"), "{out}");
    // Against a manifest: the run's own agrees; a doctored line is named.
    let manifest = dir.join("MANIFEST");
    let (code, out, _) = run(&[
        "verify",
        "--tables",
        d,
        "--manifest",
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("4 tables checked, 0 failed (statistics"),
        "{out}"
    );
    let doctored = dir.join("MANIFEST.doctored");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &doctored,
        text.replace(
            "official KvK 7350 1296 6050 4 1 ",
            "official KvK 7350 1296 6050 4 2 ",
        ),
    )
    .unwrap();
    let (code, out, _) = run(&[
        "verify",
        "--tables",
        d,
        "--rules",
        "official",
        "--manifest",
        doctored.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains(" KvK ") && l.contains("FAILED"))
            && out.contains("differs from"),
        "{out}"
    );
    // A table that would need more memory than allowed is not checked, and that is
    // an error, not "0 failed".
    let low_memory = [
        "verify",
        "--tables",
        d,
        "--rules",
        "official",
        "--max-memory",
        "0.001",
    ];
    let (code, out, err) = run(&low_memory);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains(" KvM ") && l.contains("NOT CHECKED: needs about"))
            && out.contains("0 tables checked, 0 failed, 4 not checked for lack of memory"),
        "{out}"
    );
    assert!(
        err.contains("not verified for lack of memory: KvK (official)"),
        "{err}"
    );
    let (code, out, _) = run(&[&low_memory[..], &["--json"]].concat());
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["not_checked"].as_array().unwrap().len(), 4);
    assert_eq!(v["tables"].as_array().unwrap().len(), 0);
    // A material asked for by name that has no table is an error, not "0 failed".
    let (code, _, err) = run(&[
        "verify",
        "--tables",
        d,
        "--rules",
        "official",
        "--material",
        "KKvK",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no official table for KKvK"), "{err}");
    // Refused for memory: said, and nothing half-written is left.
    let small = dir.join("small");
    let (code, _, err) = run(&[
        "generate",
        "--max-pieces",
        "2",
        "--out",
        small.to_str().unwrap(),
        "--max-memory",
        "0.000001",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("needs about"), "{err}");
    assert!(std::fs::read_dir(&small).unwrap().all(|e| {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        !n.ends_with(".wdl") && !n.ends_with(".dtw") && !n.ends_with(".tmp")
    }));
}

/// A work file that cannot be written stops the run with an error that
/// names it (exit status 2), leaves no table behind, and no temporary
/// manifest. (A full disk, which used to kill the run with SIGBUS through
/// its memory map, fails the same way: checked by hand on a small tmpfs.)
#[test]
fn generate_names_a_work_file_it_cannot_write() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-unwritable");
    let _ = std::fs::remove_dir_all(&dir);
    // A directory where a work file should go cannot be opened as a file.
    for m in ["KvK", "KvM", "MvK", "MvM"] {
        std::fs::create_dir_all(dir.join(format!("{m}.official.work"))).unwrap();
    }
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&["generate", "--max-pieces", "2", "--out", d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".official.work"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".work") && n != "MANIFEST")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The tables up to two pieces, generated afresh into `name` under the test
/// directory, with `file` then cut to half its length (returned).
fn tables_with_one_cut_short(name: &str, file: &str) -> (std::path::PathBuf, u64) {
    let dir = generated(name, 2);
    let file = dir.join(file);
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    (dir, len)
}

/// A run that finds complete tables without their manifest lines (a run
/// stopped before it wrote its manifest, or a manifest removed) reads those
/// tables for their lines and says so; a line that disagrees with its
/// table's header is read again; lines that agree are kept as they are.
#[test]
fn generate_rebuilds_manifest_lines_of_tables_it_finds() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-manifest");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let manifest = dir.join("MANIFEST");
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    let original = std::fs::read_to_string(&manifest).unwrap();
    assert_eq!(original.lines().filter(|l| !l.starts_with('#')).count(), 16);

    std::fs::remove_file(&manifest).unwrap();
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("manifest: reading KKvK (official), complete before this run"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), original);

    // A line whose statistics are not the table's (KvK has 1296 wins).
    let doctored = original.replace("official KvK 7350 1296 ", "official KvK 7350 1297 ");
    assert_ne!(doctored, original);
    std::fs::write(&manifest, doctored).unwrap();
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("manifest: reading KvK (official)"), "{err}");
    assert!(!err.contains("manifest: reading KKvK"), "{err}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), original);

    // Nothing to read when every line agrees.
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("manifest: reading"), "{err}");

    // A manifest of the first version (FNV-1a checksums, named in its
    // header) is not kept line by line: its checksums would all differ.
    // `verify --manifest` refuses it rather than report every table as
    // differing.
    let declaration = original.lines().nth(2).unwrap();
    assert!(declaration.contains("manifest checksum 2"), "{original}");
    let old = original.replace(
        declaration,
        "# (checksum: FNV-1a 64 over every state's WDL byte and DTW as u16 little-endian, in index order)",
    );
    std::fs::write(&manifest, &old).unwrap();
    let (code, out, err) = run(&[
        "verify",
        "--tables",
        d,
        "--manifest",
        manifest.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("not a manifest of this version"), "{err}");
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("checksums of an older version"), "{err}");
    assert!(err.contains("manifest: reading KKvK (official)"), "{err}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), original);
}

/// A directory with the WDL files only (a fifth of the bytes, all an engine
/// needs): `probe` answers win, draw or loss without distances and says why;
/// the values agree with those of the full tables.
#[test]
fn probe_answers_from_wdl_files_alone_without_distances() {
    let dir = generated("cli-wdl-only", 3);
    let d = dir.to_str().unwrap();
    // King and man against king: some moves win, others lose the man.
    let fen = "W:W28,K10:BK46";
    let (code, full, err) = run(&["probe", "--tables", d, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    let full: serde_json::Value = serde_json::from_str(&full).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "dtw") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let (code, out, err) = run(&["probe", "--tables", d, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no DTW table for") && err.contains("no distances"),
        "{err}"
    );
    let wdl: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(wdl["wdl"], full["wdl"]);
    assert_eq!(wdl["dtw"], serde_json::Value::Null);
    let values = |v: &serde_json::Value| {
        let mut m: Vec<(String, String)> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["move"].to_string(), m["wdl"].to_string()))
            .collect();
        m.sort();
        m
    };
    assert_eq!(values(&wdl), values(&full));
    assert!(values(&full).iter().any(|(_, w)| w == "\"win\""));
    assert!(values(&full).iter().any(|(_, w)| w == "\"loss\""));
    assert!(wdl["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["dtw"].is_null()));
    // Text: the value without a distance.
    let (code, out, _) = run(&["probe", "--tables", d, fen]);
    assert_eq!(code, 0);
    assert!(out.starts_with("W:WK10,28:BK46: win for White ("), "{out}");
}

/// `generate --plan` lists what a run would solve, with the memory and disk
/// each pair needs, and generates nothing; complete tables are left out, and
/// pairs over `--max-memory` are marked as a run would refuse them.
#[test]
fn generate_plan_lists_the_pairs_and_writes_nothing() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-plan");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "generate",
            "--max-pieces",
            "3",
            "--out",
            d,
            "--plan",
            "--json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let (code, materials, _) = run(&["materials", "--max-pieces", "3", "--json"]);
    assert_eq!(code, 0);
    let materials: serde_json::Value = serde_json::from_str(&materials).unwrap();
    let materials = materials.as_array().unwrap();
    let all_states: u64 = materials
        .iter()
        .map(|m| m["states"].as_u64().unwrap())
        .sum();
    let p = plan(&[]);
    assert!(!dir.exists(), "--plan created {d}");
    assert_eq!(
        p["tables_to_generate"].as_u64(),
        Some(materials.len() as u64)
    );
    assert_eq!(p["tables_complete"].as_u64(), Some(0));
    assert_eq!(p["states"].as_u64(), Some(all_states));
    let pairs = p["pairs"].as_array().unwrap();
    assert_eq!(pairs[0]["materials"][0], "KvK");
    let pair_states: u64 = pairs.iter().map(|x| x["states"].as_u64().unwrap()).sum();
    assert_eq!(pair_states, all_states);
    assert!(pairs.iter().all(|x| x["refused"] == false
        && x["memory_bytes"].as_u64().unwrap() > x["states"].as_u64().unwrap()));
    assert_eq!(
        p["peak_memory_bytes"].as_u64(),
        pairs
            .iter()
            .map(|x| x["memory_bytes"].as_u64().unwrap())
            .max()
    );
    // The two-piece tables done: the plan leaves them out.
    let (code, _, err) = run(&["generate", "--max-pieces", "2", "--out", d]);
    assert_eq!(code, 0, "{err}");
    let p = plan(&[]);
    assert_eq!(p["tables_complete"].as_u64(), Some(4));
    assert_eq!(
        p["tables_to_generate"].as_u64(),
        Some(materials.len() as u64 - 4)
    );
    let names: Vec<String> = p["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["materials"][0].as_str().unwrap().to_string())
        .collect();
    assert!(!names.contains(&"KvK".to_string()) && names.contains(&"KKvK".to_string()));
    // A memory limit below a pair's need: marked refused.
    let p = plan(&["--max-memory", "0.01"]);
    assert!(p["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["refused"] == true));
    // The text form names the largest need.
    let (code, out, _) = run(&["generate", "--max-pieces", "3", "--out", d, "--plan"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("tables to generate") && out.contains("Largest need:"),
        "{out}"
    );
    // --plan generated nothing more.
    let tables = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "wdl")
        })
        .count();
    assert_eq!(tables, 4);
}

/// `--tables` repeated is a search path: tables split over two directories
/// answer as one directory does, and where both hold a table the first
/// directory's file is read.
#[test]
fn probe_reads_tables_from_several_directories() {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-two-dirs");
    let _ = std::fs::remove_dir_all(&base);
    let (small, three) = (base.join("small"), base.join("three"));
    let (s, t) = (small.to_str().unwrap(), three.to_str().unwrap());
    let (code, _, err) = run(&["generate", "--max-pieces", "3", "--out", s]);
    assert_eq!(code, 0, "{err}");
    let fen = "W:W28,K10:BK46";
    let (code, whole, err) = run(&["probe", "--tables", s, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    // The three-piece tables move to a directory of their own.
    std::fs::create_dir_all(&three).unwrap();
    for entry in std::fs::read_dir(&small).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let material = name.split('.').next().unwrap();
        if (name.ends_with(".wdl") || name.ends_with(".dtw")) && material.len() == 4 {
            std::fs::rename(&path, three.join(&name)).unwrap();
        }
    }
    let (code, split, err) = run(&["probe", "--tables", t, "--tables", s, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(split, whole);
    // Either directory alone lacks tables: the small ones answer the
    // three-piece position only by a search, and the three-piece ones hold
    // no table for two pieces.
    let (code, _, err) = run(&["probe", "--tables", s, "--search-depth", "0", fen]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["probe", "--tables", t, "W:WK1:BK12"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no wdl table for KvK"), "{err}");
    // A damaged copy of a table in the second directory is never read; in
    // the first it is, and named.
    let damaged = small.join("KMvK.official.wdl");
    std::fs::write(&damaged, b"not a table").unwrap();
    let (code, split, err) = run(&["probe", "--tables", t, "--tables", s, "--json", fen]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(split, whole);
    let (code, _, err) = run(&["probe", "--tables", s, "--tables", t, "--json", fen]);
    assert_eq!(code, 2);
    assert!(err.contains(damaged.to_str().unwrap()), "{err}");
    // Neither holds a table: both named.
    let (e1, e2) = (base.join("e1"), base.join("e2"));
    std::fs::create_dir_all(&e1).unwrap();
    std::fs::create_dir_all(&e2).unwrap();
    let (code, _, err) = run(&[
        "probe",
        "--tables",
        e1.to_str().unwrap(),
        "--tables",
        e2.to_str().unwrap(),
        fen,
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{} and {}", e1.display(), e2.display())),
        "{err}"
    );
}

/// A damaged table file (here cut short) is named with what is wrong and
/// generated again; the regenerated table verifies.
#[test]
fn generate_replaces_a_damaged_table_and_says_so() {
    let (dir, len) = tables_with_one_cut_short("cli-damaged", "KvM.official.dtw");
    let (d, file) = (dir.to_str().unwrap(), dir.join("KvM.official.dtw"));
    let (code, _, err) = run(&["generate", "--max-pieces", "2", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning:")
            && err.contains("KvM.official.dtw")
            && err.contains("generating it again"),
        "{err}"
    );
    assert!(
        err.contains("2 tables to generate, 2 already complete"),
        "{err}"
    );
    let (code, out, _) = run(&["verify", "--tables", d, "--rules", "official"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), len);
}

/// `verify` goes on past damaged tables: one whose own file is cut short
/// fails (status 1), those that need it are named as not checked, and the
/// rest are checked.
#[test]
fn verify_reports_a_damaged_table_and_checks_the_rest() {
    let (dir, _) = tables_with_one_cut_short("cli-verify-damaged", "KvK.official.dtw");
    let d = dir.to_str().unwrap();
    let (code, out, _) = run(&["verify", "--tables", d, "--rules", "official"]);
    assert_eq!(code, 1, "{out}");
    let line = |m: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(m))
            .unwrap_or_else(|| panic!("no line for {m}: {out}"))
            .to_string()
    };
    assert!(line("KvK").contains("FAILED"), "{out}");
    assert!(out.contains("KvK.official.dtw"), "{out}");
    // MvK's promotion leads to KvK; KvM and MvM need no KvK.
    assert!(line("MvK").contains("NOT CHECKED"), "{out}");
    assert!(line("KvM").contains(" ok "), "{out}");
    assert!(line("MvM").contains(" ok "), "{out}");
    assert!(
        out.contains("3 tables checked, 1 failed, 1 not checked"),
        "{out}"
    );
}

/// `verify --files-only` checks each table's files without the tables its
/// moves lead to: a file cut short or with a changed byte fails, a table
/// whose promotion table is damaged is still checked, a manifest line that
/// differs is named, and no memory limit keeps a table from being checked.
#[test]
fn verify_files_only_checks_the_files_alone() {
    let files_only = |d: &str, extra: &[&str]| {
        let args = [
            "verify",
            "--tables",
            d,
            "--rules",
            "official",
            "--files-only",
        ];
        run(&[&args[..], extra].concat())
    };
    let (dir, _) = tables_with_one_cut_short("cli-verify-files", "KvK.official.dtw");
    let (code, out, _) = files_only(dir.to_str().unwrap(), &[]);
    assert_eq!(code, 1, "{out}");
    let line = table_line;
    assert!(line(&out, "KvK").contains("FAILED"), "{out}");
    assert!(out.contains("KvK.official.dtw"), "{out}");
    // MvK promotes into the damaged KvK: checked all the same.
    for m in ["MvK", "KvM", "MvM"] {
        assert!(line(&out, m).contains(" ok "), "{out}");
    }
    assert!(
        out.contains("4 tables checked (files only: no value re-derived), 1 failed"),
        "{out}"
    );
    // Intact tables, then one byte changed inside a block of KvM's WDL file.
    let dir = generated("cli-verify-files-2", 2);
    let d = dir.to_str().unwrap();
    let manifest = dir.join("MANIFEST");
    let m = manifest.to_str().unwrap();
    let (code, out, _) = files_only(d, &["--manifest", m, "--max-memory", "0.001"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("4 tables checked (files only"), "{out}");
    let doctored = dir.join("MANIFEST.doctored");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let changed = text.replace(
        "official KvK 7350 1296 6050 4 1 ",
        "official KvK 7350 1296 6050 4 2 ",
    );
    assert_ne!(changed, text);
    std::fs::write(&doctored, changed).unwrap();
    let (code, out, _) = files_only(d, &["--manifest", doctored.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        line(&out, "KvK").contains("FAILED") && out.contains("differs from"),
        "{out}"
    );
    let wdl = dir.join("KvM.official.wdl");
    let mut bytes = std::fs::read(&wdl).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(&wdl, bytes).unwrap();
    let (code, out, _) = files_only(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(line(&out, "KvM").contains("FAILED"), "{out}");
    assert!(out.contains("KvM.official.wdl"), "{out}");
    assert!(line(&out, "KvK").contains(" ok "), "{out}");
}

/// `verify --journal FILE` records each table that passes and skips, on
/// the next run, the tables recorded with the files they have now: an
/// interrupted run resumes. A full check stands for a check of the files,
/// not the other way round; a changed file is checked again; the manifest
/// is still compared; a line cut short is ignored and a file that is not a
/// journal refused.
#[test]
fn verify_journal_resumes_and_checks_changed_files_again() {
    let dir = generated("cli-verify-journal", 2);
    let d = dir.to_str().unwrap();
    let journal = dir.join("verify.journal");
    let j = journal.to_str().unwrap();
    // `verify` of the official tables with journal `journal`, and `extra`.
    let with_journal = |journal: &str, extra: &[&str]| {
        let args = ["verify", "--tables", d, "--rules", "official"];
        run(&[&args[..], &["--journal", journal], extra].concat())
    };
    let verify = |extra: &[&str]| with_journal(j, extra);
    let line = table_line;
    let recorded = |out: &str, m: &str| line(out, m).contains("passed before");
    // A run stopped after KvK: the next checks the other three only.
    let (code, out, _) = verify(&["--material", "KvK"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = verify(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(recorded(&out, "KvK"), "{out}");
    for m in ["MvK", "KvM", "MvM"] {
        assert!(
            !recorded(&out, m) && line(&out, m).contains(" ok "),
            "{out}"
        );
    }
    assert!(out.contains("4 tables checked (1 passed before"), "{out}");
    // All four recorded now, by full checks, which cover --files-only too;
    // recorded tables need no memory to be skipped.
    for extra in [&[][..], &["--files-only"], &["--max-memory", "0.001"]] {
        let (code, out, _) = verify(extra);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("(4 passed before"), "{out}");
    }
    // A check of the files does not stand for a full one.
    let files_journal = dir.join("files.journal");
    let fj = files_journal.to_str().unwrap();
    let (code, _, _) = with_journal(fj, &["--files-only"]);
    assert_eq!(code, 0);
    let (code, out, _) = with_journal(fj, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("passed before"), "{out}");
    // The manifest is compared for recorded tables too.
    let doctored = dir.join("MANIFEST.doctored");
    let text = std::fs::read_to_string(dir.join("MANIFEST")).unwrap();
    let changed = text.replace(
        "official KvK 7350 1296 6050 4 1 ",
        "official KvK 7350 1296 6050 4 2 ",
    );
    assert_ne!(changed, text);
    std::fs::write(&doctored, changed).unwrap();
    let (code, out, _) = verify(&["--manifest", doctored.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        recorded(&out, "KvK") && line(&out, "KvK").contains("FAILED"),
        "{out}"
    );
    assert!(out.contains("differs from"), "{out}");
    // A byte changed inside a block of KvM's WDL file: KvM is checked again
    // and fails; a line cut short at the end of the journal is ignored.
    let wdl = dir.join("KvM.official.wdl");
    let mut bytes = std::fs::read(&wdl).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(&wdl, bytes).unwrap();
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("full 0123");
    std::fs::write(&journal, text).unwrap();
    let (code, out, _) = verify(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        !recorded(&out, "KvM") && line(&out, "KvM").contains("FAILED"),
        "{out}"
    );
    for m in ["KvK", "MvK", "MvM"] {
        assert!(recorded(&out, m), "{out}");
    }
    // The next run's lines start on a line of their own.
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.contains("full 0123\n"), "{text}");
    // Anything else given as the journal is refused, and left alone.
    let manifest = dir.join("MANIFEST");
    let before = std::fs::read(&manifest).unwrap();
    let args = [
        "verify",
        "--tables",
        d,
        "--journal",
        manifest.to_str().unwrap(),
    ];
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a verify journal") && err.contains("MANIFEST"),
        "{err}"
    );
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
}

/// A reader that goes away (`frisian-tb moves ... | head -1`) ends the
/// process quietly, as with other Unix tools, instead of a panic with a
/// backtrace from printing into the closed pipe.
#[cfg(unix)]
#[test]
fn a_closed_output_pipe_is_no_panic() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for _ in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_frisian-tb"))
            .args(["moves", START])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary runs");
        // Close the reading end before the program has printed.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        // Killed by SIGPIPE, or done before the pipe closed.
        assert!(
            out.status.success() || out.status.signal() == Some(13),
            "{:?}: {stderr}",
            out.status
        );
    }
}

/// A stray file named like a table of too many pieces makes `probe` and
/// `verify` warn and leave it out, not fail.
#[test]
fn a_stray_file_named_like_a_table_is_skipped_with_a_warning() {
    let dir = generated("cli-stray", 2);
    std::fs::write(dir.join("KKKKKKKMvK.official.wdl"), b"not a table").unwrap();
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["probe", "--tables", d, "W:WK46:BK5"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loss"), "{out}");
    assert!(
        err.contains("warning: skipped") && err.contains("KKKKKKKMvK.official.wdl"),
        "{err}"
    );
    let (code, out, err) = run(&["verify", "--tables", d, "--rules", "official"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("KKKKKKKMvK.official.wdl"), "{err}");
}
