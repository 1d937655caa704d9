//! Probing (warm and cold) and generation throughput.
//!
//! Run: `cargo bench --bench tablebase`. Tables up to three pieces are generated
//! into `target/bench-tables` first if they are not there.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use frisian_tb::capi;
use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::probe::Tablebase;
use frisian_tb::{Material, MaterialIndex, Position, RuleSet, Wdl};
use std::hint::black_box;
use std::path::PathBuf;

fn tables() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-tables");
    generate::run(&Plan::all(RuleSet::Official, &dir, 3), &Quiet).expect("generation succeeds");
    dir
}

/// Random positions of a material (fixed seed).
fn sample(m: &str, n: usize) -> Vec<Position> {
    let ix = MaterialIndex::new(m.parse().unwrap(), RuleSet::Official);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ix.position(x % ix.size())
        })
        .collect()
}

fn bench_probe(c: &mut Criterion) {
    let dir = tables();
    let mut tb = Tablebase::new(RuleSet::Official);
    tb.add_directory(&dir).unwrap();
    let positions = sample("KMvK", 1000);
    let mut group = c.benchmark_group("probe");
    group.throughput(Throughput::Elements(1));
    // Warm, same block: the decoded block is in the per-thread cache.
    let p = positions[0];
    tb.probe_wdl(&p).unwrap();
    group.bench_function("wdl/warm-cached-block", |b| {
        b.iter(|| black_box(tb.probe_wdl(black_box(&p)).unwrap()))
    });
    // The same through the C interface: the bitboards are converted and the
    // position checked on every probe.
    let ctb = {
        let path = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path, no error buffer.
        unsafe { capi::ftb_open(path.as_ptr(), capi::FTB_OFFICIAL, std::ptr::null_mut(), 0) }
    };
    assert!(!ctb.is_null());
    let cp = capi::FtbPosition::from(&p);
    group.bench_function("wdl/warm-cached-block-c", |b| {
        b.iter(|| {
            let mut wdl = -1;
            // SAFETY: a live tablebase and valid pointers.
            let code = unsafe { capi::ftb_probe_wdl(ctb, black_box(&cp), &mut wdl) };
            assert_eq!(code, capi::FTB_OK);
            black_box(wdl)
        })
    });
    // Warm file, random positions: mostly a block decompression each.
    let mut i = 0;
    group.bench_function("wdl/warm-random", |b| {
        b.iter(|| {
            i = (i + 1) % positions.len();
            black_box(tb.probe_wdl(&positions[i]).unwrap())
        })
    });
    group.bench_function("wdl+dtw/warm-random", |b| {
        b.iter(|| {
            i = (i + 1) % positions.len();
            black_box(tb.probe(&positions[i]).unwrap())
        })
    });
    // Cold: a new tablebase, so the file is opened and mapped, then one probe.
    group.bench_function("wdl/cold-open-and-probe", |b| {
        b.iter_batched(
            || {
                let mut tb = Tablebase::new(RuleSet::Official);
                tb.add_directory(&dir).unwrap();
                tb
            },
            |tb| {
                i = (i + 1) % positions.len();
                let v = tb.probe_wdl(&positions[i]).unwrap();
                assert!(matches!(v, Wdl::Win | Wdl::Draw | Wdl::Loss));
                v
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn bench_generate(c: &mut Criterion) {
    let dir = tables();
    let m: Material = "KMvK".parse().unwrap();
    let states = 2 * MaterialIndex::new(m, RuleSet::Official).size();
    let mut group = c.benchmark_group("generate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(states));
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-generate");
    group.bench_function("KMvK+KvKM/solve-and-write", |b| {
        b.iter(|| {
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out).unwrap();
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if !name.starts_with("KMvK.") && !name.starts_with("KvKM.") && name != "MANIFEST" {
                    std::fs::copy(&p, out.join(&name)).unwrap();
                }
            }
            let written =
                generate::run(&Plan::material(RuleSet::Official, &out, m), &Quiet).unwrap();
            assert_eq!(written.len(), 2);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_probe, bench_generate);
criterion_main!(benches);
