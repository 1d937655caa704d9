//! Perft suites from `tests/data/perft.txt`, read by one harness.

use frisian_tb::{fen, perft, RuleSet};

/// Lines above this many nodes run only with `--ignored`.
const NODE_LIMIT: u64 = 3_000_000;

struct Case {
    rules: RuleSet,
    fen: String,
    depth: u32,
    nodes: u64,
    line: usize,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/perft.txt");
    let mut out = Vec::new();
    let (mut rules, mut fen) = (RuleSet::Official, String::new());
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').expect("key and value");
        match key {
            "rules" => rules = rest.parse().expect("rule set"),
            "fen" => fen = rest.to_string(),
            "perft" => {
                let (d, n) = rest.split_once(' ').expect("depth and nodes");
                out.push(Case {
                    rules,
                    fen: fen.clone(),
                    depth: d.parse().unwrap(),
                    nodes: n.parse().unwrap(),
                    line: i + 1,
                });
            }
            other => panic!("perft.txt line {}: unknown key {other}", i + 1),
        }
    }
    out
}

fn run(select: impl Fn(&Case) -> bool) {
    let mut ran = 0;
    for case in cases().iter().filter(|c| select(c)) {
        let pos = fen::parse(&case.fen, case.rules).expect("valid FEN in perft.txt");
        let got = perft::perft(&pos, case.depth);
        assert_eq!(
            got, case.nodes,
            "perft.txt line {}: {} depth {}",
            case.line, case.fen, case.depth
        );
        ran += 1;
    }
    assert!(ran > 0, "no perft case selected");
}

#[test]
fn perft_suites_within_node_limit() {
    run(|c| c.nodes <= NODE_LIMIT);
}

#[test]
#[ignore = "deep perft: run with cargo test --release -- --ignored"]
fn perft_suites_deep() {
    run(|c| c.nodes > NODE_LIMIT);
}

#[test]
fn plain_and_bulk_counting_agree() {
    let pos = fen::parse("W:W31-50:B1-20", RuleSet::Official).unwrap();
    for depth in 1..=5 {
        assert_eq!(perft::perft(&pos, depth), perft::perft_plain(&pos, depth));
    }
}

#[test]
fn divide_sums_to_perft() {
    let pos = fen::parse("W:W46-50:B1-5", RuleSet::Official).unwrap();
    let total: u64 = perft::divide(&pos, 4).iter().map(|(_, n)| n).sum();
    assert_eq!(total, 5329);
}
