//! Independent verification of finished tables.
//!
//! For every state of every table, the stored value must equal the value
//! re-derived from its successors with the **forward** move generator (never
//! with retro-moves): a win in `1 + min` over the replies that lose, else a
//! draw if any reply draws, else a loss in `1 + max` over the replies; finished
//! games must hold their adjudicated value. File checksums and the header's
//! statistics are checked too.

use crate::generate::{load_values, stats, successor_materials, GenerateError, Value};
use crate::index::MaterialIndex;
use crate::material::Material;
use crate::position::Position;
use crate::rules::{RuleSet, Wdl};
use crate::table::{self, Metric, TableFile};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// One state whose stored value is wrong.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Mismatch {
    /// Material of the table.
    pub material: String,
    /// Index of the state.
    pub index: u64,
    /// The state as FEN.
    pub fen: String,
    /// Stored value, e.g. `win 7`.
    pub stored: String,
    /// Value re-derived from the successors.
    pub expected: String,
}

/// The outcome of verifying one table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableCheck {
    /// Material.
    pub material: String,
    /// States checked.
    pub states: u64,
    /// Problems with the files themselves (checksums, header statistics).
    pub file_errors: Vec<String>,
    /// Number of wrong values.
    pub mismatches: u64,
    /// The first wrong values.
    pub first_mismatches: Vec<Mismatch>,
}

impl TableCheck {
    /// Whether everything checked out.
    pub fn ok(&self) -> bool {
        self.file_errors.is_empty() && self.mismatches == 0
    }
}

/// Packed values of the tables a material's successors live in, loaded on demand.
struct Values {
    dir: std::path::PathBuf,
    rules: RuleSet,
    tables: HashMap<Material, (MaterialIndex, Vec<u16>)>,
}

impl Values {
    fn ensure(&mut self, m: Material) -> Result<(), GenerateError> {
        if !self.tables.contains_key(&m) {
            let v = load_values(&self.dir, m, self.rules)?;
            self.tables
                .insert(m, (MaterialIndex::new(m, self.rules), v));
        }
        Ok(())
    }

    fn value(&self, pos: &Position) -> Value {
        if let Some(o) = pos.outcome() {
            return Value { wdl: o.wdl, dtw: 0 };
        }
        let (ix, v) = &self.tables[&Material::of(pos)];
        unpack(v[ix.index(pos) as usize])
    }
}

fn unpack(v: u16) -> Value {
    Value::unpack(v).expect("finished tables hold only known values")
}

/// The value of `pos` from its successors' values.
fn derive(pos: &Position, values: &Values) -> Value {
    if let Some(o) = pos.outcome() {
        return Value { wdl: o.wdl, dtw: 0 };
    }
    let (mut win, mut draw, mut longest) = (None::<u16>, false, 0u16);
    for mv in pos.legal_moves() {
        let v = values.value(&pos.play(&mv));
        match v.wdl {
            Wdl::Loss => win = Some(win.map_or(v.dtw + 1, |w| w.min(v.dtw + 1))),
            Wdl::Draw => draw = true,
            Wdl::Win => longest = longest.max(v.dtw),
        }
    }
    match (win, draw) {
        (Some(d), _) => Value {
            wdl: Wdl::Win,
            dtw: d,
        },
        (None, true) => Value {
            wdl: Wdl::Draw,
            dtw: 0,
        },
        (None, false) => Value {
            wdl: Wdl::Loss,
            dtw: longest + 1,
        },
    }
}

fn show(v: Value) -> String {
    match v.wdl {
        Wdl::Draw => "draw".into(),
        w => format!("{w} {}", v.dtw),
    }
}

/// Verify the table of `material` in `dir`, keeping at most `keep` mismatches.
pub fn verify_table(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    keep: usize,
) -> Result<TableCheck, GenerateError> {
    let mut file_errors = Vec::new();
    for metric in [Metric::Wdl, Metric::Dtw] {
        let path = dir.join(table::file_name(material, rules, metric));
        let f = TableFile::open_expecting(&path, material, rules, metric)?;
        if let Err(e) = f.check_body() {
            file_errors.push(e.to_string());
        }
    }
    let mut values = Values {
        dir: dir.to_path_buf(),
        rules,
        tables: HashMap::new(),
    };
    values.ensure(material)?;
    values.ensure(material.flip())?;
    for s in successor_materials(material) {
        values.ensure(s)?;
    }
    let (ix, stored) = &values.tables[&material];
    let size = ix.size();
    // Header statistics must match the values.
    let st = stats(material, rules, stored);
    let header = TableFile::open(&dir.join(table::file_name(material, rules, Metric::Wdl)))?
        .header()
        .clone();
    if (header.wins, header.draws, header.losses, header.longest_win)
        != (st.wins, st.draws, st.losses, st.longest_win)
    {
        file_errors.push(format!(
            "header statistics (win {} draw {} loss {} longest {}) differ from the values (win {} draw {} loss {} longest {})",
            header.wins, header.draws, header.losses, header.longest_win, st.wins, st.draws, st.losses, st.longest_win
        ));
    }
    const CHUNK: u64 = 1 << 14;
    let found: Vec<(u64, Vec<Mismatch>)> = (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut n = 0;
            let mut first = Vec::new();
            for i in c * CHUNK..((c + 1) * CHUNK).min(size) {
                let pos = ix.position(i);
                let want = derive(&pos, &values);
                let have = unpack(stored[i as usize]);
                if want != have {
                    n += 1;
                    if first.len() < keep {
                        first.push(Mismatch {
                            material: material.to_string(),
                            index: i,
                            fen: crate::fen::write(&pos),
                            stored: show(have),
                            expected: show(want),
                        });
                    }
                }
            }
            (n, first)
        })
        .collect();
    let mismatches = found.iter().map(|(n, _)| n).sum();
    let first_mismatches = found.into_iter().flat_map(|(_, v)| v).take(keep).collect();
    Ok(TableCheck {
        material: material.to_string(),
        states: size,
        file_errors,
        mismatches,
        first_mismatches,
    })
}
