//! `materials` and `generate`: the build order, table generation with its
//! progress display, and the output directory's `MANIFEST`.

use super::{CliError, Meter};
use frisian_tb::finished;
use frisian_tb::generate::{self, Plan};
use frisian_tb::manifest::{Manifest, ManifestError};
use frisian_tb::stats::{self, TableStats};
use frisian_tb::table::{Metric, TableFile};
use frisian_tb::{Material, MaterialIndex, RuleSet};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Serialize)]
struct MaterialJson {
    material: String,
    pieces: u32,
    placements: u64,
    states: u64,
}

pub(super) fn cmd_materials(max_pieces: u32, rules: RuleSet, json: bool) {
    let list: Vec<MaterialJson> = Material::all(max_pieces)
        .into_iter()
        .map(|m| {
            let ix = MaterialIndex::new(m, rules);
            MaterialJson {
                material: m.to_string(),
                pieces: m.pieces(),
                placements: ix.placements(),
                states: ix.size(),
            }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string(&list).expect("serialisable"));
        return;
    }
    println!(
        "{:<10} {:>6} {:>14} {:>16}",
        "material", "pieces", "placements", "states"
    );
    for m in &list {
        println!(
            "{:<10} {:>6} {:>14} {:>16}",
            m.material, m.pieces, m.placements, m.states
        );
    }
    let total: u64 = list.iter().map(|m| m.states).sum();
    println!(
        "{} materials, {} states ({} rules; side to move first, K = king, M = man)",
        list.len(),
        total,
        rules
    );
}

/// Progress bar for generation.
struct Bar {
    bar: Meter,
    quiet: bool,
    refused: std::sync::Mutex<Vec<String>>,
    /// Where the tables go, and their rule set: each table's manifest line
    /// is added to `out/MANIFEST` as soon as it is written, so that a run
    /// stopped half way keeps the lines of what it finished (the run that
    /// resumes it would otherwise read those tables again for them).
    out: PathBuf,
    rules: RuleSet,
}

impl generate::Progress for Bar {
    fn refused(&self, why: &generate::GenerateError) {
        self.bar.bar.suspend(|| eprintln!("skipped: {why}"));
        self.refused.lock().unwrap().push(why.to_string());
    }
    fn start(&self, material: Material, _states: u64) {
        self.bar.bar.set_message(material.to_string());
    }
    fn advance(&self, states: u64) {
        self.bar.inc(states);
    }
    fn resumed(&self, states: u64) {
        self.bar.skip(states);
    }
    fn done(&self, st: &TableStats) {
        // When it was written (seconds into the run): the differences between
        // the lines are the time each pair took.
        let line = format!(
            "{:<8} {:<10} {:>12} states  win {:>11}  draw {:>11}  loss {:>11}  longest win {:>3}  at {:>7.1} s",
            st.rules,
            st.material,
            st.states,
            st.wins,
            st.draws,
            st.losses,
            st.longest_win,
            self.bar.start.elapsed().as_secs_f64()
        );
        let manifest = update_manifest(
            &self.out,
            self.rules,
            &[],
            std::slice::from_ref(st),
            true,
            false,
        );
        if let Err(e) = manifest {
            // The run goes on; the manifest is written again at its end.
            self.bar.bar.suspend(|| eprintln!("warning: {e}"));
        }
        if self.quiet {
            return;
        }
        self.bar.println(line);
    }
}

/// One pair of `generate --plan`.
#[derive(Serialize)]
struct PlanPairJson {
    materials: Vec<String>,
    states: u64,
    memory_bytes: u64,
    work_file_bytes: u64,
    refused: bool,
}

/// `generate --plan`: what a run of `generate` would do, for one rule set.
#[derive(Serialize)]
struct PlanJson {
    rules: String,
    out: String,
    tables_to_generate: usize,
    tables_complete: usize,
    states: u64,
    pairs: Vec<PlanPairJson>,
    peak_memory_bytes: u64,
    memory_limit_bytes: Option<u64>,
    peak_work_file_bytes: u64,
    free_disk_bytes: Option<u64>,
}

/// What `generate` is asked for, for one rule set.
pub(super) struct What<'a> {
    pub(super) max_pieces: u32,
    pub(super) material: Option<Material>,
    pub(super) rules: RuleSet,
    pub(super) out: &'a Path,
    pub(super) max_memory: Option<f64>,
}

impl What<'_> {
    /// The plan, and the pairs it would solve; an error if `out` exists and
    /// is not a directory.
    fn plan(&self) -> Result<(Plan, Vec<Material>), CliError> {
        let out = self.out;
        if out.exists() && !out.is_dir() {
            return Err(CliError::Other(format!(
                "--out {}: not a directory",
                out.display()
            )));
        }
        let mut plan = match self.material {
            Some(m) => Plan::material(self.rules, out, m),
            None => Plan::all(self.rules, out, self.max_pieces),
        };
        plan.memory_limit = self.max_memory.map(|g| (g * (1u64 << 30) as f64) as u64);
        let pending = plan.pending();
        Ok((plan, pending))
    }
}

/// Say before a run starts which pairs it will refuse for lack of memory
/// (and so skip, with the pairs that need them), rather than only when it
/// reaches them, perhaps hours later.
fn warn_of_refusals(plan: &Plan, pending: &[Material]) {
    let Some(limit) = plan.memory_limit.or_else(generate::available_memory) else {
        return;
    };
    let refused: Vec<String> = pending
        .iter()
        .filter(|&&m| generate::memory_estimate(m, plan.rules) > limit)
        .map(|&m| {
            let names: Vec<String> = m.with_flip().iter().map(|x| x.to_string()).collect();
            names.join(" + ")
        })
        .collect();
    if refused.is_empty() {
        return;
    }
    eprintln!(
        "warning: {} of {} pairs need more memory than the {:.1} GiB allowed, and this run \
         will skip them and the pairs that need them: {}; `generate --plan` shows what each needs",
        refused.len(),
        pending.len(),
        limit as f64 / (1u64 << 30) as f64,
        refused.join(", ")
    );
}

/// `generate --plan`: list the pairs still to solve with the memory and
/// work-file disk each needs, against the limit and the free disk; generate
/// nothing. A pair over the limit is marked as a run would refuse it.
pub(super) fn cmd_plan(what: &What, json: bool) -> Result<(), CliError> {
    let (plan, pending) = what.plan()?;
    let (rules, out, max_memory) = (what.rules, what.out, what.max_memory);
    let limit = plan.memory_limit.or_else(generate::available_memory);
    // The free disk of the directory, or of the nearest existing parent when
    // the run would create it.
    let free_disk = generate::free_disk(
        out.ancestors()
            .find(|d| d.is_dir())
            .unwrap_or(Path::new(".")),
    );
    let pairs: Vec<PlanPairJson> = pending
        .iter()
        .map(|&m| {
            let materials = m.with_flip();
            let states: u64 = materials
                .iter()
                .map(|&x| MaterialIndex::new(x, rules).size())
                .sum();
            let memory = generate::memory_estimate(m, rules);
            PlanPairJson {
                materials: materials.iter().map(|x| x.to_string()).collect(),
                states,
                memory_bytes: memory,
                work_file_bytes: states,
                refused: limit.is_some_and(|l| memory > l),
            }
        })
        .collect();
    let to_generate: usize = pairs.iter().map(|p| p.materials.len()).sum();
    let report = PlanJson {
        rules: rules.name().to_string(),
        out: out.display().to_string(),
        tables_to_generate: to_generate,
        tables_complete: plan.materials.len() - to_generate,
        states: pairs.iter().map(|p| p.states).sum(),
        peak_memory_bytes: pairs.iter().map(|p| p.memory_bytes).max().unwrap_or(0),
        memory_limit_bytes: limit,
        peak_work_file_bytes: pairs.iter().map(|p| p.work_file_bytes).max().unwrap_or(0),
        free_disk_bytes: free_disk,
        pairs,
    };
    if json {
        println!("{}", serde_json::to_string(&report).expect("serialisable"));
        return Ok(());
    }
    const GIB: f64 = (1u64 << 30) as f64;
    const GB: f64 = 1e9;
    println!(
        "{} rules, into {}: {} tables to generate ({} pairs), {} already complete; {} states",
        rules,
        out.display(),
        report.tables_to_generate,
        report.pairs.len(),
        report.tables_complete,
        report.states
    );
    if report.pairs.is_empty() {
        return Ok(());
    }
    println!(
        "  {:<16} {:>14} {:>10} {:>12}",
        "pair", "states", "memory", "work files"
    );
    for p in &report.pairs {
        println!(
            "  {:<16} {:>14} {:>6.2} GiB {:>9.2} GB{}",
            p.materials.join(" + "),
            p.states,
            p.memory_bytes as f64 / GIB,
            p.work_file_bytes as f64 / GB,
            if p.refused {
                "  REFUSED: more memory than allowed"
            } else {
                ""
            }
        );
    }
    let peak = report
        .pairs
        .iter()
        .max_by_key(|p| p.memory_bytes)
        .expect("not empty");
    let limit = match report.memory_limit_bytes {
        Some(l) => format!(
            "{:.1} GiB {}",
            l as f64 / GIB,
            if max_memory.is_some() {
                "allowed (--max-memory)"
            } else {
                "available"
            }
        ),
        None => "unknown here".to_string(),
    };
    println!(
        "Largest need: {} ({:.2} GiB, counting its work files as resident; {limit}).",
        peak.materials.join(" + "),
        peak.memory_bytes as f64 / GIB,
    );
    let free = report.free_disk_bytes.map_or("unknown".to_string(), |b| {
        format!("{:.1} GB", b as f64 / GB)
    });
    println!(
        "Work files: at most {:.2} GB at once, plus finished ones kept for later pairs \
         (within half the free disk); free disk: {free}.",
        report.peak_work_file_bytes as f64 / GB,
    );
    if report
        .free_disk_bytes
        .is_some_and(|b| b < report.peak_work_file_bytes)
    {
        println!(
            "Not enough free disk for the largest pair's work files: a run stops there, naming the file."
        );
    }
    let refused = report.pairs.iter().filter(|p| p.refused).count();
    if refused > 0 {
        println!(
            "{refused} pairs need more memory than allowed: a run skips them and the pairs that need them."
        );
    }
    Ok(())
}

pub(super) fn cmd_generate(what: &What, json: bool) -> Result<(), CliError> {
    let (plan, pending) = what.plan()?;
    let (rules, out) = (what.rules, what.out);
    // A damaged file is generated again like a missing one; say which and why.
    for &m in &pending {
        for m in m.with_flip() {
            for e in finished::damaged(out, m, rules) {
                eprintln!("warning: {e}; generating it again");
            }
        }
    }
    warn_of_refusals(&plan, &pending);
    let total: u64 = pending
        .iter()
        .map(|&m| MaterialIndex::new(m, rules).size() * m.with_flip().len() as u64)
        .sum();
    let meter = Meter::new(total, json);
    let skipped =
        plan.materials.len() - pending.iter().map(|&m| m.with_flip().len()).sum::<usize>();
    if !json {
        eprintln!(
            "{} rules: {} tables to generate, {} already complete, {} states",
            rules,
            plan.materials.len() - skipped,
            skipped,
            total
        );
    }
    let t = Instant::now();
    let progress = Bar {
        bar: meter,
        quiet: json,
        refused: Default::default(),
        out: out.to_path_buf(),
        rules,
    };
    let written = generate::run(&plan, &progress);
    progress.bar.bar.finish_and_clear();
    let refused = progress.refused.into_inner().unwrap();
    // The manifest lists every complete table of the plan, even after a failure.
    let complete: Vec<Material> = plan
        .materials
        .iter()
        .copied()
        .filter(|&m| finished::is_complete(out, m, rules))
        .collect();
    let manifest = update_manifest(
        out,
        rules,
        &complete,
        written.as_deref().unwrap_or(&[]),
        json,
        true,
    );
    // A failed generation is the error to report; a manifest that could not be
    // updated after it (a full disk fails both) only adds a warning.
    let written = match (written, manifest) {
        (Ok(written), manifest) => {
            manifest?;
            written
        }
        (Err(e), Err(m)) => {
            eprintln!("warning: {m}");
            return Err(e.into());
        }
        (Err(e), Ok(())) => return Err(e.into()),
    };
    if json {
        println!("{}", serde_json::to_string(&written).expect("serialisable"));
    } else {
        eprintln!(
            "{} rules: wrote {} tables in {:.1} s; manifest: {}",
            rules,
            written.len(),
            t.elapsed().as_secs_f64(),
            out.join("MANIFEST").display()
        );
    }
    if !refused.is_empty() {
        return Err(CliError::Other(format!(
            "{} table pairs were not generated:\n  {}",
            refused.len(),
            refused.join("\n  ")
        )));
    }
    Ok(())
}

/// Whether a manifest line's statistics (states, wins, draws, losses,
/// longest win) are those in the header of the table's WDL file.
fn line_agrees_with_header(dir: &Path, m: Material, rules: RuleSet, line: &str) -> bool {
    let path = dir.join(frisian_tb::table::file_name(m, rules, Metric::Wdl));
    let Ok(file) = TableFile::open_expecting(&path, m, rules, Metric::Wdl) else {
        return false;
    };
    let h = file.header();
    TableStats::from_manifest_line(line).is_some_and(|st| {
        (st.states, st.wins, st.draws, st.losses, st.longest_win)
            == (h.states, h.wins, h.draws, h.losses, h.longest_win)
    })
}

/// The manifest: one line per table with its statistics and the checksum of its values.
///
/// Lines of `written` replace those of the same tables; every table of
/// `materials` without a line that agrees with its header is read (a group
/// of blocks at a time) for its line, saying so unless `quiet`. `durable`:
/// synced to disk before and after the rename (at the end of a run); the
/// update after each table is only renamed into place, since a sync there
/// waits for the gigabytes of work files the generator has in flight (it
/// made the ≤3-piece tables 40% slower), and a manifest that a power loss
/// leaves empty only costs the next run a recount.
fn update_manifest(
    dir: &Path,
    rules: RuleSet,
    materials: &[Material],
    written: &[TableStats],
    quiet: bool,
    durable: bool,
) -> Result<(), CliError> {
    let path = dir.join("MANIFEST");
    // A manifest of an older version has another checksum: its lines are
    // not kept (each table is read again for its line).
    let mut manifest = match Manifest::read(&path) {
        Ok(manifest) => manifest,
        Err(ManifestError::OldVersion { .. }) => {
            if !quiet {
                eprintln!(
                    "manifest: {} has checksums of an older version; reading every table again",
                    path.display()
                );
            }
            Manifest::new()
        }
        Err(ManifestError::Io { .. }) => Manifest::new(),
    };
    for st in written {
        manifest.insert(st);
    }
    for &m in materials {
        // A line is kept if the table's header still gives its statistics
        // (a table generated again, or replaced, is read again).
        let kept = manifest
            .get(rules.name(), &m.to_string())
            .is_some_and(|line| line_agrees_with_header(dir, m, rules, line));
        if !kept {
            if !quiet {
                eprintln!("manifest: reading {m} ({rules}), complete before this run");
            }
            manifest.insert(&stats::table_stats(dir, m, rules)?);
        }
    }
    manifest
        .write(&path, durable)
        .map_err(|e| CliError::Other(e.to_string()))
}
