//! Perft throughput from the initial position, with and without bulk counting.
//! Each benchmark checks its node count, so a fast wrong answer cannot pass.
//!
//! Run: `cargo bench --bench perft`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use frisian_tb::{perft, Position, RuleSet};
use std::hint::black_box;

fn bench_perft(c: &mut Criterion) {
    let start = Position::initial(RuleSet::Official);
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (depth, nodes) in [(8u32, 2_825_779u64), (10, 85_817_725)] {
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("bulk/depth{depth}"), |b| {
            b.iter(|| assert_eq!(perft::perft(black_box(&start), depth), nodes))
        });
    }
    let (depth, nodes) = (8u32, 2_825_779u64);
    group.throughput(Throughput::Elements(nodes));
    group.bench_function(format!("plain/depth{depth}"), |b| {
        b.iter(|| assert_eq!(perft::perft_plain(black_box(&start), depth), nodes))
    });
    group.finish();
}

criterion_group!(benches, bench_perft);
criterion_main!(benches);
