//! Every table up to four pieces, in both rule sets: generated, compared with the
//! checked-in manifest, and verified by the forward pass. This is the slowest test
//! (about 2.5 minutes on two cores) and the strongest: it runs in CI.

use frisian_tb::generate::{self, Plan, Quiet};
use frisian_tb::{Material, RuleSet};
use std::path::Path;

#[test]
fn all_tables_up_to_four_pieces_match_the_manifest_and_verify() {
    let manifest = include_str!("../tables/MANIFEST");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tables-4");
    for rules in RuleSet::ALL {
        // Resumable: a previous run's complete tables are reused, then re-checked below.
        generate::run(&Plan::all(rules, &dir, 4), &Quiet).expect("generation succeeds");
        for m in Material::all(4) {
            let values = frisian_tb::finished::load_values(&dir, m, rules).unwrap();
            let st = frisian_tb::stats::stats(m, rules, &values);
            let line = st.manifest_line();
            assert!(
                manifest.lines().any(|l| l == line),
                "not in tables/MANIFEST: {line}"
            );
            let check = frisian_tb::verify::verify_table(&dir, m, rules, 3).unwrap();
            assert!(check.ok(), "{rules} {m}: {check:?}");
        }
    }
}
