//! A C interface to the prober, for engines written in C or C++.
//!
//! The declarations are in `include/frisian_tb.h`; build the library with
//! `cargo rustc --release --lib --crate-type staticlib` (or `cdylib`) and link
//! `target/release/libfrisian_tb.a` (with `-lpthread -ldl -lm`). A position is
//! passed as bitboards in the plain layout (bit `s - 1` for square `s`) with
//! its counter state, so an engine converts its own board without text.
//!
//! The functions never unwind into C: a panic (a bug) is caught and returned
//! as [`FTB_ERR_INTERNAL`]. A tablebase may be probed from many threads at
//! once; opening it and adding directories must happen before it is shared.

use crate::bitboard::Bitboard;
use crate::geometry::Square;
use crate::piece::Side;
use crate::position::{Position, Setup};
use crate::probe::{ProbeError, Tablebase};
use crate::rules::{KingCount, RuleSet, SevenMove, Wdl};
use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const FTB_OK: c_int = 0;
/// No table for the position's material (or for its DTW) is registered.
pub const FTB_ERR_MISSING_TABLE: c_int = 1;
/// The position has more pieces than the registered tables.
pub const FTB_ERR_TOO_MANY_PIECES: c_int = 2;
/// A table file is unreadable, damaged, or of another rule set or version.
pub const FTB_ERR_TABLE: c_int = 3;
/// The position is not legal (two pieces on a square, a man on its far row,
/// a counter out of range, ...), or its FEN does not parse.
pub const FTB_ERR_POSITION: c_int = 4;
/// A null pointer, an unknown rule set, or a directory that cannot be read.
pub const FTB_ERR_ARGUMENT: c_int = 5;
/// A bug in frisian-tb (a caught panic).
pub const FTB_ERR_INTERNAL: c_int = 6;

/// The official (FMJD) rules, for [`ftb_open`].
pub const FTB_OFFICIAL: c_int = 0;
/// The lidraughts/PlayStrategy server rules.
pub const FTB_LIDRAUGHTS: c_int = 1;

/// The side to move loses.
pub const FTB_LOSS: c_int = 0;
/// A draw.
pub const FTB_DRAW: c_int = 1;
/// The side to move wins.
pub const FTB_WIN: c_int = 2;

/// A position for [`ftb_probe`]: `struct FtbPosition` in the header.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FtbPosition {
    /// Men of White (`[0]`) and Black (`[1]`): bit `s - 1` for square `s`.
    pub men: [u64; 2],
    /// Kings, likewise.
    pub kings: [u64; 2],
    /// Side to move: 0 White, 1 Black.
    pub turn: u8,
    /// Each side's three-move state: the tracked king's square (1-50), 0 for none.
    pub three_move_square: [u8; 2],
    /// The tracked king's count of consecutive ordinary moves (1-3).
    pub three_move_count: [u8; 2],
    /// Official seven-move rule: the side with (or that had) two kings, 0 or
    /// 1; 255 when the rule is not running.
    pub seven_move_side: u8,
    /// Moves that side has made since the rule came into effect (0-7).
    pub seven_move_count: u8,
    /// Lidraughts: plies of kings-only play with at most three pieces.
    pub plies: u8,
}

/// An open tablebase: `FtbTablebase` in the header, opaque to C.
pub struct FtbTablebase(Tablebase);

/// Copy `message` into the caller's buffer (truncated, NUL-terminated).
unsafe fn write_error(buf: *mut c_char, len: usize, message: &str) {
    if buf.is_null() || len == 0 {
        return;
    }
    let n = message.len().min(len - 1);
    // SAFETY: the caller gives a buffer of `len` bytes; `n < len`.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
}

/// Run `f`, turning a panic into [`FTB_ERR_INTERNAL`].
fn guarded(f: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(FTB_ERR_INTERNAL)
}

fn rules_of(code: c_int) -> Option<RuleSet> {
    match code {
        FTB_OFFICIAL => Some(RuleSet::Official),
        FTB_LIDRAUGHTS => Some(RuleSet::Lidraughts),
        _ => None,
    }
}

fn probe_error_code(e: &ProbeError) -> c_int {
    match e {
        ProbeError::MissingTable { .. } => FTB_ERR_MISSING_TABLE,
        ProbeError::TooManyPieces { .. } => FTB_ERR_TOO_MANY_PIECES,
        ProbeError::WrongRules { .. } | ProbeError::Table(_) => FTB_ERR_TABLE,
    }
}

fn wdl_code(w: Wdl) -> c_int {
    match w {
        Wdl::Loss => FTB_LOSS,
        Wdl::Draw => FTB_DRAW,
        Wdl::Win => FTB_WIN,
    }
}

/// The squares of a plain bitboard (bit `s - 1` for square `s`), or `None`
/// if a bit beyond square 50 is set.
fn squares_of(bits: u64) -> Option<Bitboard> {
    if bits >> 50 != 0 {
        return None;
    }
    let mut b = Bitboard::EMPTY;
    let mut rest = bits;
    while rest != 0 {
        let s = rest.trailing_zeros() + 1;
        rest &= rest - 1;
        b = b.with(Square::new(s)?);
    }
    Some(b)
}

/// A plain bitboard: bit `s - 1` for square `s`.
fn plain(b: Bitboard) -> u64 {
    b.squares().map(|s| 1u64 << (s.number() - 1)).sum()
}

impl From<&Position> for FtbPosition {
    /// The position as C passes it (for Rust code that drives the C
    /// interface, such as its tests and benchmarks).
    fn from(pos: &Position) -> FtbPosition {
        let sides = [Side::White, Side::Black];
        let three = sides.map(|s| pos.three_move(s));
        FtbPosition {
            men: sides.map(|s| plain(pos.men(s))),
            kings: sides.map(|s| plain(pos.kings(s))),
            turn: (pos.turn() == Side::Black) as u8,
            three_move_square: three.map(|t| t.map_or(0, |k| k.square.number() as u8)),
            three_move_count: three.map(|t| t.map_or(0, |k| k.count)),
            seven_move_side: pos
                .seven_move()
                .map_or(255, |s| (s.strong == Side::Black) as u8),
            seven_move_count: pos.seven_move().map_or(0, |s| s.moves),
            plies: pos.plies(),
        }
    }
}

impl FtbPosition {
    /// The position this describes under `rules`, checked.
    fn to_position(self, rules: RuleSet) -> Option<Position> {
        let side = |i: u8| match i {
            0 => Some(Side::White),
            1 => Some(Side::Black),
            _ => None,
        };
        let mut setup = Setup {
            men: [squares_of(self.men[0])?, squares_of(self.men[1])?],
            kings: [squares_of(self.kings[0])?, squares_of(self.kings[1])?],
            turn: Some(side(self.turn)?),
            plies: self.plies,
            ..Setup::default()
        };
        for i in 0..2 {
            if self.three_move_square[i] != 0 {
                setup.three_move[i] = Some(KingCount {
                    square: Square::new(self.three_move_square[i] as u32)?,
                    count: self.three_move_count[i],
                });
            }
        }
        if self.seven_move_side != 255 {
            setup.seven_move = Some(SevenMove {
                strong: side(self.seven_move_side)?,
                moves: self.seven_move_count,
            });
        }
        Position::from_setup(&setup, rules).ok()
    }
}

/// Open the tables of rule set `rules` (0 official, 1 lidraughts) in
/// directory `dir`. Returns null on failure, with a message in `error`.
///
/// # Safety
/// `dir` must be a NUL-terminated string; `error` null or a writable buffer
/// of `error_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn ftb_open(
    dir: *const c_char,
    rules: c_int,
    error: *mut c_char,
    error_len: usize,
) -> *mut FtbTablebase {
    let Some(rules) = rules_of(rules) else {
        // SAFETY: as the caller promises.
        unsafe {
            write_error(
                error,
                error_len,
                "unknown rule set (0 official, 1 lidraughts)",
            )
        };
        return std::ptr::null_mut();
    };
    let mut tb = Box::new(FtbTablebase(Tablebase::new(rules)));
    // SAFETY: as the caller promises.
    let code = unsafe { ftb_add_directory(&mut *tb, dir, error, error_len) };
    if code == FTB_OK {
        Box::into_raw(tb)
    } else {
        std::ptr::null_mut()
    }
}

/// Register the tables in one more directory (a table registered from an
/// earlier directory keeps that file). Not while other threads probe.
///
/// # Safety
/// `tb` must come from [`ftb_open`] and not be in use by another thread;
/// `dir` a NUL-terminated string; `error` null or `error_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ftb_add_directory(
    tb: *mut FtbTablebase,
    dir: *const c_char,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    if tb.is_null() || dir.is_null() {
        // SAFETY: as the caller promises.
        unsafe { write_error(error, error_len, "null argument") };
        return FTB_ERR_ARGUMENT;
    }
    // SAFETY: non-null, a NUL-terminated string and a live tablebase, as promised.
    let (dir, tb) = unsafe { (CStr::from_ptr(dir), &mut (*tb).0) };
    let Ok(dir) = dir.to_str() else {
        // SAFETY: as the caller promises.
        unsafe { write_error(error, error_len, "directory name is not UTF-8") };
        return FTB_ERR_ARGUMENT;
    };
    let mut message = String::new();
    let code = guarded(|| match tb.add_directory(dir) {
        Ok(0) => {
            message = format!("no {} tables in {dir}", tb.rules());
            FTB_ERR_MISSING_TABLE
        }
        Ok(_) => FTB_OK,
        Err(e) => {
            message = format!("cannot read table directory {dir}: {e}");
            FTB_ERR_ARGUMENT
        }
    });
    // SAFETY: as the caller promises.
    unsafe { write_error(error, error_len, &message) };
    code
}

/// Close a tablebase (null is allowed).
///
/// # Safety
/// `tb` must come from [`ftb_open`], not be closed already, and not be in use.
#[no_mangle]
pub unsafe extern "C" fn ftb_close(tb: *mut FtbTablebase) {
    if !tb.is_null() {
        // SAFETY: from `Box::into_raw` in `ftb_open`, closed once.
        drop(unsafe { Box::from_raw(tb) });
    }
}

/// The most pieces in any registered table (0 for null).
///
/// # Safety
/// `tb` null or from [`ftb_open`].
#[no_mangle]
pub unsafe extern "C" fn ftb_max_pieces(tb: *const FtbTablebase) -> c_int {
    // SAFETY: null or a live tablebase, as promised.
    unsafe { tb.as_ref() }.map_or(0, |tb| tb.0.max_pieces() as c_int)
}

/// Win, draw or loss for the side to move ([`FTB_WIN`], [`FTB_DRAW`],
/// [`FTB_LOSS`] in `*wdl`): the probe for search. Allocates nothing once the
/// table's block is cached.
///
/// # Safety
/// `tb` from [`ftb_open`]; `pos` and `wdl` valid pointers.
#[no_mangle]
pub unsafe extern "C" fn ftb_probe_wdl(
    tb: *const FtbTablebase,
    pos: *const FtbPosition,
    wdl: *mut c_int,
) -> c_int {
    // SAFETY: null or valid, as promised.
    let (Some(tb), Some(pos)) = (unsafe { tb.as_ref() }, unsafe { pos.as_ref() }) else {
        return FTB_ERR_ARGUMENT;
    };
    if wdl.is_null() {
        return FTB_ERR_ARGUMENT;
    }
    guarded(|| {
        let Some(pos) = pos.to_position(tb.0.rules()) else {
            return FTB_ERR_POSITION;
        };
        match tb.0.probe_wdl(&pos) {
            Ok(w) => {
                // SAFETY: a valid pointer, as promised.
                unsafe { *wdl = wdl_code(w) };
                FTB_OK
            }
            Err(e) => probe_error_code(&e),
        }
    })
}

/// Win, draw or loss in `*wdl`, and the distance to win in plies in `*dtw`
/// (the winner shortest, the loser longest; -1 for a draw).
///
/// # Safety
/// `tb` from [`ftb_open`]; `pos`, `wdl` and `dtw` valid pointers.
#[no_mangle]
pub unsafe extern "C" fn ftb_probe(
    tb: *const FtbTablebase,
    pos: *const FtbPosition,
    wdl: *mut c_int,
    dtw: *mut c_int,
) -> c_int {
    // SAFETY: null or valid, as promised.
    let (Some(tb), Some(pos)) = (unsafe { tb.as_ref() }, unsafe { pos.as_ref() }) else {
        return FTB_ERR_ARGUMENT;
    };
    if wdl.is_null() || dtw.is_null() {
        return FTB_ERR_ARGUMENT;
    }
    guarded(|| {
        let Some(pos) = pos.to_position(tb.0.rules()) else {
            return FTB_ERR_POSITION;
        };
        // SAFETY: valid pointers, as promised.
        unsafe { store(tb.0.probe(&pos), wdl, dtw) }
    })
}

/// [`ftb_probe`] for a position in FEN (with the project's counter
/// extension, or the lidraughts tail); a message in `error` on failure.
///
/// # Safety
/// `tb` from [`ftb_open`]; `fen` a NUL-terminated string; `wdl`, `dtw`
/// valid pointers; `error` null or `error_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ftb_probe_fen(
    tb: *const FtbTablebase,
    fen: *const c_char,
    wdl: *mut c_int,
    dtw: *mut c_int,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    // SAFETY: null or valid, as promised.
    let Some(tb) = (unsafe { tb.as_ref() }) else {
        return FTB_ERR_ARGUMENT;
    };
    if fen.is_null() || wdl.is_null() || dtw.is_null() {
        return FTB_ERR_ARGUMENT;
    }
    // SAFETY: a NUL-terminated string, as promised.
    let text = unsafe { CStr::from_ptr(fen) }.to_string_lossy();
    let mut message = String::new();
    let code = guarded(|| match crate::fen::parse(&text, tb.0.rules()) {
        Err(e) => {
            message = e.to_string();
            FTB_ERR_POSITION
        }
        Ok(pos) => {
            let result = tb.0.probe(&pos);
            if let Err(e) = &result {
                message = e.to_string();
            }
            // SAFETY: valid pointers, as promised.
            unsafe { store(result, wdl, dtw) }
        }
    });
    // SAFETY: as the caller promises.
    unsafe { write_error(error, error_len, &message) };
    code
}

/// Write a probe's result through the caller's pointers; the return code.
unsafe fn store(
    result: Result<crate::probe::ProbeValue, ProbeError>,
    wdl: *mut c_int,
    dtw: *mut c_int,
) -> c_int {
    match result {
        Ok(v) => {
            // SAFETY: valid pointers (checked non-null by the callers).
            unsafe {
                *wdl = wdl_code(v.wdl);
                *dtw = v.dtw.map_or(-1, |d| d as c_int);
            }
            FTB_OK
        }
        Err(e) => probe_error_code(&e),
    }
}
