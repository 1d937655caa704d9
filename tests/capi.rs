//! The C interface (`include/frisian_tb.h`, `src/capi.rs`) against the
//! library: the same values from bitboards, from FEN and from `Tablebase`;
//! every failure a code and a message, never a crash.

mod common;

use frisian_tb::capi::*;
use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::Tablebase;
use frisian_tb::{Bitboard, Position, RuleSet, Side, Wdl};
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The official tables up to three pieces, generated once.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capi-tables-3");
        let _ = std::fs::remove_dir_all(&dir);
        generate::run(&Plan::all(RuleSet::Official, &dir, 3), &Quiet).expect("generation succeeds");
        dir
    })
}

fn c_string(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Open `dir` through C: the tablebase, or the error message.
fn open(dir: &Path, rules: c_int) -> Result<*mut FtbTablebase, String> {
    let mut error = [0 as c_char; 200];
    let dir = c_string(dir.to_str().unwrap());
    // SAFETY: a NUL-terminated string and a buffer of its stated length.
    let tb = unsafe { ftb_open(dir.as_ptr(), rules, error.as_mut_ptr(), error.len()) };
    if tb.is_null() {
        // SAFETY: ftb_open NUL-terminates the message within the buffer.
        Err(unsafe { CStr::from_ptr(error.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    } else {
        Ok(tb)
    }
}

/// `ftb_probe_fen` on `fen`: its code, WDL, DTW and message.
fn probe_fen(tb: *const FtbTablebase, fen: &str) -> (c_int, c_int, c_int, String) {
    let fen = c_string(fen);
    let mut error = [0 as c_char; 100];
    let (mut wdl, mut dtw) = (-9, -9);
    // SAFETY: a live tablebase, a NUL-terminated FEN and a buffer of its length.
    let code = unsafe {
        ftb_probe_fen(
            tb,
            fen.as_ptr(),
            &mut wdl,
            &mut dtw,
            error.as_mut_ptr(),
            error.len(),
        )
    };
    // SAFETY: ftb_probe_fen NUL-terminates the message within the buffer.
    let message = unsafe { CStr::from_ptr(error.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    (code, wdl, dtw, message)
}

/// Plain bitboard: bit `s - 1` for square `s`.
fn plain(b: Bitboard) -> u64 {
    b.squares().map(|s| 1u64 << (s.number() - 1)).sum()
}

/// `pos` as C passes it.
fn c_position(pos: &Position) -> FtbPosition {
    let mut c = FtbPosition {
        men: [plain(pos.men(Side::White)), plain(pos.men(Side::Black))],
        kings: [plain(pos.kings(Side::White)), plain(pos.kings(Side::Black))],
        turn: (pos.turn() == Side::Black) as u8,
        seven_move_side: 255,
        plies: pos.plies(),
        ..FtbPosition::default()
    };
    for (i, side) in [Side::White, Side::Black].into_iter().enumerate() {
        if let Some(kc) = pos.three_move(side) {
            c.three_move_square[i] = kc.square.number() as u8;
            c.three_move_count[i] = kc.count;
        }
    }
    if let Some(sm) = pos.seven_move() {
        c.seven_move_side = (sm.strong == Side::Black) as u8;
        c.seven_move_count = sm.moves;
    }
    c
}

fn wdl_code(w: Wdl) -> c_int {
    match w {
        Wdl::Loss => FTB_LOSS,
        Wdl::Draw => FTB_DRAW,
        Wdl::Win => FTB_WIN,
    }
}

/// Random legal positions of at most three pieces, with counters where they apply.
fn small_positions(n: usize) -> Vec<Position> {
    (0u64..)
        .map(|seed| common::random_sparse(seed, RuleSet::Official))
        .filter(|p| p.occupied().count() <= 3)
        .take(n)
        .collect()
}

/// `struct FtbPosition` in the header: four 8-byte words, then 8 bytes.
#[test]
fn the_position_struct_has_the_header_layout() {
    assert_eq!(std::mem::size_of::<FtbPosition>(), 40);
    assert_eq!(std::mem::align_of::<FtbPosition>(), 8);
    let p = FtbPosition::default();
    let base = &p as *const FtbPosition as usize;
    let at = |field: *const u8| field as usize - base;
    assert_eq!(at(&p.turn), 32);
    assert_eq!(at(&p.three_move_square[0]), 33);
    assert_eq!(at(&p.three_move_count[0]), 35);
    assert_eq!(at(&p.seven_move_side), 37);
    assert_eq!(at(&p.seven_move_count), 38);
    assert_eq!(at(&p.plies), 39);
}

#[test]
fn c_probes_agree_with_the_library() {
    let tb = open(tables(), FTB_OFFICIAL).unwrap();
    let mut lib = Tablebase::new(RuleSet::Official);
    lib.add_directory(tables()).unwrap();
    // SAFETY: a tablebase from ftb_open.
    assert_eq!(unsafe { ftb_max_pieces(tb) }, 3);
    let positions = small_positions(400);
    assert!(positions.iter().any(|p| p.three_move(p.turn()).is_some()));
    assert!(positions.iter().any(|p| p.seven_move().is_some()));
    let mut seen = [0; 3];
    for pos in &positions {
        let expect = lib.probe(pos).unwrap();
        let want = (wdl_code(expect.wdl), expect.dtw.map_or(-1, |d| d as c_int));
        seen[want.0 as usize] += 1;
        let c = c_position(pos);
        assert_eq!(c, FtbPosition::from(pos));
        let (mut wdl, mut dtw) = (-9, -9);
        // SAFETY: live tablebase, valid pointers.
        assert_eq!(unsafe { ftb_probe(tb, &c, &mut wdl, &mut dtw) }, FTB_OK);
        assert_eq!((wdl, dtw), want, "{}", frisian_tb::fen::write(pos));
        let mut only = -9;
        // SAFETY: as above.
        assert_eq!(unsafe { ftb_probe_wdl(tb, &c, &mut only) }, FTB_OK);
        assert_eq!(only, want.0);
        let (code, wdl, dtw, _) = probe_fen(tb, &frisian_tb::fen::write(pos));
        assert_eq!((code, wdl, dtw), (FTB_OK, want.0, want.1));
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "wins, draws and losses: {seen:?}"
    );
    // SAFETY: closed once.
    unsafe { ftb_close(tb) };
}

#[test]
fn c_failures_are_codes_and_messages() {
    let tb = open(tables(), FTB_OFFICIAL).unwrap();
    let (mut wdl, mut dtw) = (-9, -9);
    let probe = |c: &FtbPosition, wdl: &mut c_int, dtw: &mut c_int| {
        // SAFETY: live tablebase, valid pointers.
        unsafe { ftb_probe(tb, c, wdl, dtw) }
    };
    let pos = frisian_tb::fen::parse("W:WK18,15:BK46", RuleSet::Official).unwrap();
    let good = c_position(&pos);
    assert_eq!(probe(&good, &mut wdl, &mut dtw), FTB_OK);
    assert_eq!(
        (wdl, dtw),
        (FTB_DRAW, -1),
        "rulebook 2j-II: the long diagonal holds"
    );
    // Illegal positions: two pieces on one square, a man on its far row, a
    // square beyond 50, a three-move count for a king that is not there or
    // out of range, a side to move that is neither.
    let mut twice = good;
    twice.men[1] = 1 << 17;
    let mut far_row = good;
    far_row.men[0] = 1 << 2;
    let mut beyond = good;
    beyond.kings[1] |= 1 << 55;
    let mut no_king = good;
    no_king.three_move_square[0] = 20;
    no_king.three_move_count[0] = 1;
    let mut count = good;
    count.three_move_square[0] = 18;
    count.three_move_count[0] = 4;
    let mut turn = good;
    turn.turn = 2;
    for bad in [twice, far_row, beyond, no_king, count, turn] {
        assert_eq!(probe(&bad, &mut wdl, &mut dtw), FTB_ERR_POSITION, "{bad:?}");
    }
    // Four pieces: more than these tables hold.
    let mut four = good;
    four.men[1] = 1 << 9;
    assert_eq!(probe(&four, &mut wdl, &mut dtw), FTB_ERR_TOO_MANY_PIECES);
    // A FEN that does not parse, with the parser's message.
    let (code, _, _, message) = probe_fen(tb, "W:W51:B1");
    assert_eq!(code, FTB_ERR_POSITION);
    assert!(message.contains("square 51"), "{message}");
    let fen = c_string("W:W51:B1");
    // A message cut to a small buffer is still a C string.
    let mut small = [1 as c_char; 8];
    // SAFETY: as above.
    unsafe {
        ftb_probe_fen(
            tb,
            fen.as_ptr(),
            &mut wdl,
            &mut dtw,
            small.as_mut_ptr(),
            small.len(),
        )
    };
    assert_eq!(small[7], 0);
    // Null pointers.
    // SAFETY: null is what is being tested; nothing is dereferenced.
    unsafe {
        assert_eq!(
            ftb_probe(tb, std::ptr::null(), &mut wdl, &mut dtw),
            FTB_ERR_ARGUMENT
        );
        assert_eq!(
            ftb_probe(std::ptr::null(), &good, &mut wdl, &mut dtw),
            FTB_ERR_ARGUMENT
        );
        assert_eq!(
            ftb_probe_wdl(tb, &good, std::ptr::null_mut()),
            FTB_ERR_ARGUMENT
        );
        assert_eq!(ftb_max_pieces(std::ptr::null()), 0);
        ftb_close(std::ptr::null_mut());
        ftb_close(tb);
    }
    // Opening: an unknown rule set, a missing directory, one without tables
    // of the rule set, a tablebase of the other rule set.
    assert!(open(tables(), 7).unwrap_err().contains("unknown rule set"));
    let missing = tables().join("no-such-directory");
    assert!(open(&missing, FTB_OFFICIAL)
        .unwrap_err()
        .contains("cannot read table directory"));
    assert!(open(tables(), FTB_LIDRAUGHTS)
        .unwrap_err()
        .contains("no lidraughts tables"));
}

/// One tablebase probed from several threads at once gives each thread the
/// values it gets alone.
#[test]
fn c_probes_from_many_threads() {
    struct Shared(*mut FtbTablebase);
    // SAFETY: the tablebase is Sync (`Tablebase` is Send + Sync); only probes
    // run while it is shared.
    unsafe impl Sync for Shared {}
    let tb = Shared(open(tables(), FTB_OFFICIAL).unwrap());
    let positions: Vec<FtbPosition> = small_positions(300).iter().map(c_position).collect();
    let alone: Vec<c_int> = positions
        .iter()
        .map(|p| {
            let mut w = -1;
            // SAFETY: live tablebase, valid pointers.
            assert_eq!(unsafe { ftb_probe_wdl(tb.0, p, &mut w) }, FTB_OK);
            w
        })
        .collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (tb, positions, alone) = (&tb, &positions, &alone);
            s.spawn(move || {
                for (i, p) in positions.iter().enumerate().skip(t) {
                    let mut w = -1;
                    // SAFETY: as above; the tablebase outlives the scope.
                    assert_eq!(unsafe { ftb_probe_wdl(tb.0, p, &mut w) }, FTB_OK);
                    assert_eq!(w, alone[i]);
                }
            });
        }
    });
    // SAFETY: every thread has ended; closed once.
    unsafe { ftb_close(tb.0) };
}

/// The C example, built against the static library (without default
/// features, as an engine links it) and run: it compiles with the header as
/// C and prints the long-diagonal draw. Ignored by a plain `cargo test`: it
/// builds the library again as a static archive (about a minute); `.ci/run`
/// runs it.
#[test]
#[ignore]
fn the_c_example_builds_and_probes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capi-build");
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "rustc",
            "--release",
            "--lib",
            "--no-default-features",
            "--crate-type",
            "staticlib",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
    let exe = target.join("probe-example");
    let status = std::process::Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(root.join("examples/c/probe.c"))
        .arg(target.join("release/libfrisian_tb.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&exe)
            .arg(tables())
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}");
        text
    };
    assert_eq!(
        run(&["W:WK18,15:BK39"]),
        "W:WK18,15:BK39: win in 11 plies\n"
    );
    assert_eq!(
        run(&[]),
        "W:WK18,15:BK46 from bitboards: draw\n",
        "the bitboard position"
    );
    // One ply, in the singular.
    assert_eq!(run(&["W:WK1:BK2"]), "W:WK1:BK2: win in 1 ply\n");
}
