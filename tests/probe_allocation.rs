//! Probing allocates nothing once warm: an engine probes inside its search,
//! from many threads, and must not meet the allocator there.
//!
//! A counting global allocator (counting per thread, so that other tests'
//! threads do not disturb the count) watches `probe_wdl` and `probe_dtw` over
//! states of every three-piece table, after a warm-up over other states of
//! the same tables (which opens the tables and sizes the block cache).

use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::Tablebase;
use frisian_tb::{Material, MaterialIndex, Position, RuleSet};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; the
// count is a const-initialised thread-local, which does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(|n| n.get())
}

/// The tables up to three pieces of `rules`, generated into a directory of
/// their own for the test `tag` (tests run at once).
fn tables(rules: RuleSet, tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tables-3-{tag}-{rules}"));
    let _ = std::fs::remove_dir_all(&dir);
    generate::run(&Plan::all(rules, &dir, 3), &Quiet).expect("generation succeeds");
    dir
}

/// States spread over each table: `per_table` of them, starting at `phase`
/// (a fraction of the spacing), both sides to move.
fn positions(rules: RuleSet, per_table: u64, phase: u64) -> Vec<Position> {
    let mut out = Vec::new();
    for m in Material::all(3) {
        let ix = MaterialIndex::new(m, rules);
        let step = (ix.size() / per_table).max(1);
        let mut i = step * phase / 4;
        while i < ix.size() {
            let p = ix.position(i);
            out.push(p.flip());
            out.push(p);
            i += step;
        }
    }
    out
}

#[test]
fn probing_allocates_nothing_once_warm() {
    for rules in RuleSet::ALL {
        let dir = tables(rules, "alloc");
        let mut tb = Tablebase::new(rules);
        tb.add_directory(&dir).unwrap();
        let (warm, probed) = (positions(rules, 400, 0), positions(rules, 400, 2));
        let mut answers = 0u64;
        for p in &warm {
            answers += tb.probe_wdl(p).unwrap() as u64;
            answers += tb.probe_dtw(p).unwrap().unwrap_or(0) as u64;
        }
        let before = allocations();
        for p in &probed {
            answers += tb.probe_wdl(p).unwrap() as u64;
            answers += tb.probe_dtw(p).unwrap().unwrap_or(0) as u64;
        }
        let during = allocations() - before;
        assert!(answers > 0);
        assert!(probed.len() > 10_000, "{}", probed.len());
        assert_eq!(
            during,
            0,
            "{rules}: {during} allocations in {} probes of each kind",
            probed.len()
        );
    }
}

#[test]
fn the_counter_sees_allocations() {
    // Or the test above could not fail.
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(vec![1, 2, 3]);
    assert!(allocations() > before);
    drop(v);
}

/// The same through the C interface (`ftb_probe_wdl`, `ftb_probe`): the
/// conversion from bitboards and the catching of panics allocate nothing.
#[test]
fn c_probes_allocate_nothing_once_warm() {
    use frisian_tb::capi::{ftb_close, ftb_open, ftb_probe, ftb_probe_wdl, FtbPosition, FTB_OK};
    let rules = RuleSet::Official;
    let dir = tables(rules, "alloc-c");
    let path = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated string; no error buffer.
    let tb = unsafe { ftb_open(path.as_ptr(), 0, std::ptr::null_mut(), 0) };
    assert!(!tb.is_null());
    let warm: Vec<FtbPosition> = positions(rules, 400, 0)
        .iter()
        .map(FtbPosition::from)
        .collect();
    let probed: Vec<FtbPosition> = positions(rules, 400, 2)
        .iter()
        .map(FtbPosition::from)
        .collect();
    let mut answers = 0i64;
    let mut probe_all = |list: &[FtbPosition]| {
        for p in list {
            let (mut wdl, mut dtw) = (0, 0);
            // SAFETY: a live tablebase and valid pointers.
            unsafe {
                assert_eq!(ftb_probe_wdl(tb, p, &mut wdl), FTB_OK);
                assert_eq!(ftb_probe(tb, p, &mut wdl, &mut dtw), FTB_OK);
            }
            answers += (wdl + dtw) as i64;
        }
    };
    probe_all(&warm);
    let before = allocations();
    probe_all(&probed);
    let during = allocations() - before;
    assert!(answers != 0);
    assert_eq!(
        during,
        0,
        "{during} allocations in {} C probes of each kind",
        probed.len()
    );
    // SAFETY: closed once, no longer used.
    unsafe { ftb_close(tb) };
}
