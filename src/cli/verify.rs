//! `verify`: every stored value re-derived from its successors.

use super::{CliError, Meter};
use frisian_tb::manifest::Manifest;
use frisian_tb::probe::Tablebase;
use frisian_tb::stats::TableStats;
use frisian_tb::table::{self, Metric, TableFile};
use frisian_tb::verify::TableCheck;
use frisian_tb::{Material, MaterialIndex, RuleSet};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Instant, UNIX_EPOCH};

/// `verify --journal FILE`: the tables earlier runs found ok, and the lines
/// this run adds as tables pass, so that an interrupted run resumes.
///
/// A line is `full|files IDENTITY MANIFEST-LINE`: what was checked, the
/// identity of the table's two files when the check began (header checksum,
/// length and modification time of each: the header checksum covers the
/// body and values checksums, and a file changed in place has a new time),
/// and the statistics found, as a manifest line. A line cut short by a crash
/// does not parse and is ignored.
struct Journal {
    path: PathBuf,
    /// By (rules, material): the last line of each table.
    passed: HashMap<(String, String), (bool, String, TableStats)>,
    file: std::fs::File,
}

impl Journal {
    const HEADER: &'static str =
        "# frisian-tb verify journal 1: full|files, the files' identities, the manifest line found";

    fn open(path: &Path) -> Result<Journal, CliError> {
        let err = |e: std::io::Error| CliError::Other(format!("{}: {e}", path.display()));
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(err(e)),
        };
        if !text.is_empty() && text.lines().next() != Some(Self::HEADER) {
            return Err(CliError::Other(format!(
                "{}: not a verify journal (its first line is not `{}`); give another file",
                path.display(),
                Self::HEADER
            )));
        }
        let mut passed = HashMap::new();
        for l in text.lines().skip(1) {
            let mut f = l.splitn(3, ' ');
            let (Some(kind), Some(identity), Some(line)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let (Some(full), Some(stats)) = (
                match kind {
                    "full" => Some(true),
                    "files" => Some(false),
                    _ => None,
                },
                TableStats::from_manifest_line(line),
            ) {
                let key = (stats.rules.clone(), stats.material.clone());
                passed.insert(key, (full, identity.to_string(), stats));
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(err)?;
        if text.is_empty() {
            writeln!(file, "{}", Self::HEADER).map_err(err)?;
        } else if !text.ends_with('\n') {
            // A line cut short: the next starts on a line of its own.
            writeln!(file).map_err(err)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            passed,
            file,
        })
    }

    /// The identity of a table's two files (see [`Journal`]); `None` if
    /// either cannot be read, which the check itself then reports.
    fn identity(dir: &Path, m: Material, r: RuleSet) -> Option<String> {
        let mut parts = Vec::new();
        for metric in [Metric::Wdl, Metric::Dtw] {
            let path = dir.join(table::file_name(m, r, metric));
            let meta = std::fs::metadata(&path).ok()?;
            let time = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
            let header = TableFile::open(&path).ok()?.header().checksum();
            parts.push(format!("{header:016x}:{}:{}", meta.len(), time.as_nanos()));
        }
        Some(parts.join(","))
    }

    /// The statistics recorded for the table, if it passed a check that
    /// covers this one (`full`: values re-derived) with the files it has now:
    /// the same identity, and bodies that still match the checksum their
    /// headers give (a second or so for the largest five-piece table, so
    /// that a file changed in place is found even where the file system
    /// keeps coarse times).
    fn recorded(
        &self,
        dir: &Path,
        m: Material,
        r: RuleSet,
        identity: &str,
        full: bool,
    ) -> Option<&TableStats> {
        let (was_full, id, stats) = self.passed.get(&(r.name().to_string(), m.to_string()))?;
        let intact = || {
            [Metric::Wdl, Metric::Dtw].iter().all(|&metric| {
                TableFile::open(&dir.join(table::file_name(m, r, metric)))
                    .is_ok_and(|f| f.check_body().is_ok())
            })
        };
        (id == identity && (*was_full || !full) && intact()).then_some(stats)
    }

    /// Record a table that passed, on disk at once.
    fn record(&mut self, full: bool, identity: &str, stats: &TableStats) -> Result<(), CliError> {
        let kind = if full { "full" } else { "files" };
        writeln!(self.file, "{kind} {identity} {}", stats.manifest_line())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| CliError::Other(format!("{}: {e}", self.path.display())))
    }
}

/// The tables `verify` checks.
pub(super) struct Selection<'a> {
    pub(super) dir: &'a Path,
    pub(super) rules: &'a [RuleSet],
    /// Only tables with at most this many pieces.
    pub(super) max_pieces: Option<u32>,
    /// Only these materials (all if empty).
    pub(super) only: &'a [Material],
}

pub(super) fn cmd_verify(
    selection: &Selection,
    manifest: Option<&Path>,
    max_memory: Option<f64>,
    files_only: bool,
    journal: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let limit = max_memory
        .map(|g| (g * GIB) as u64)
        .or_else(frisian_tb::generate::available_memory);
    // Manifest lines by (rules, material), read before any work starts.
    let published: Option<Manifest> = manifest
        .map(|path| Manifest::read(path).map_err(|e| CliError::Other(e.to_string())))
        .transpose()?;
    let mut journal = journal.map(Journal::open).transpose()?;
    let bases = open_tablebases(selection)?;
    refuse_missing_materials(selection, &bases)?;
    // Every table to check, first, so that one bar (or a log line a minute)
    // shows the whole run with its ETA.
    let work = tables_to_check(selection, &bases);
    let missing = published
        .as_ref()
        .map(|m| missing_from_directory(selection, m, &work))
        .unwrap_or_default();
    let total = work
        .iter()
        .map(|&(r, m)| MaterialIndex::new(m, r).size())
        .sum();
    let run = Run {
        dir: selection.dir,
        manifest: manifest.zip(published.as_ref()),
        files_only,
        json,
        limit,
        meter: Meter::new(total, json),
    };
    let mut report = Report {
        missing,
        ..Report::default()
    };
    for (k, &(r, m)) in work.iter().enumerate() {
        run.meter
            .bar
            .set_message(format!("{}/{} {m}", k + 1, work.len()));
        run.check(r, m, journal.as_mut(), &mut report)?;
    }
    run.meter.bar.finish_and_clear();
    if work.is_empty() {
        return Err(CliError::Other(format!(
            "no tables in {}",
            selection.dir.display()
        )));
    }
    report.print(json, files_only, manifest);
    report.status(selection.dir, manifest)
}

/// The tables `manifest` lists that the directory should hold but does not:
/// those of the selection (rule sets, `--max-pieces`, `--material`) with no
/// more pieces than the largest table of their rule set found (`work`), so
/// that tables up to four pieces compare with a manifest that goes on to
/// five.
fn missing_from_directory(
    selection: &Selection,
    manifest: &Manifest,
    work: &[(RuleSet, Material)],
) -> Vec<(RuleSet, Material)> {
    let mut out = Vec::new();
    for &r in selection.rules {
        let largest = work
            .iter()
            .filter(|(wr, _)| *wr == r)
            .map(|(_, m)| m.pieces())
            .max()
            .unwrap_or(0);
        for (rules, material, _) in manifest.iter() {
            let Ok(m) = material.parse::<Material>() else {
                continue;
            };
            let wanted = rules == r.name()
                && m.pieces() <= largest
                && selection.max_pieces.is_none_or(|n| m.pieces() <= n)
                && (selection.only.is_empty() || selection.only.contains(&m));
            if wanted && !work.contains(&(r, m)) {
                out.push((r, m));
            }
        }
    }
    out
}

const GIB: f64 = (1u64 << 30) as f64;

/// A tablebase over the directory for each rule set of the selection.
fn open_tablebases(selection: &Selection) -> Result<Vec<(RuleSet, Tablebase)>, CliError> {
    let dir = selection.dir;
    selection
        .rules
        .iter()
        .map(|&r| {
            let mut tb = Tablebase::new(r);
            tb.add_directory(dir).map_err(|e| {
                CliError::Other(format!(
                    "cannot read table directory {}: {e}",
                    dir.display()
                ))
            })?;
            super::warn_skipped(&tb);
            Ok((r, tb))
        })
        .collect()
}

/// A material asked for by name but present under none of the rule sets is
/// an error before any work starts: silently checking nothing would read as
/// "ok".
fn refuse_missing_materials(
    selection: &Selection,
    bases: &[(RuleSet, Tablebase)],
) -> Result<(), CliError> {
    let missing: Vec<String> = selection
        .only
        .iter()
        .filter(|m| !bases.iter().any(|(_, tb)| tb.materials().contains(m)))
        .map(|m| m.to_string())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = selection.rules.iter().map(|r| r.name()).collect();
    Err(CliError::Other(format!(
        "no {} table for {} in {}",
        names.join(" or "),
        missing.join(", "),
        selection.dir.display()
    )))
}

/// The tables of the selection present in the directory, by rule set.
fn tables_to_check(
    selection: &Selection,
    bases: &[(RuleSet, Tablebase)],
) -> Vec<(RuleSet, Material)> {
    bases
        .iter()
        .flat_map(|(r, tb)| {
            tb.materials()
                .into_iter()
                .filter(|m| selection.max_pieces.is_none_or(|n| m.pieces() <= n))
                .filter(|m| selection.only.is_empty() || selection.only.contains(m))
                .map(|m| (*r, m))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// How a verify run checks each table.
struct Run<'a> {
    dir: &'a Path,
    /// The manifest to compare with, and its lines.
    manifest: Option<(&'a Path, &'a Manifest)>,
    files_only: bool,
    json: bool,
    /// The memory a check may use, in bytes, if known.
    limit: Option<u64>,
    meter: Meter,
}

/// What a verify run found, table by table.
#[derive(Default)]
struct Report {
    /// Tables checked (or passed before, as the journal records: true).
    checks: Vec<(RuleSet, TableCheck, bool)>,
    /// Tables not checked because they would need more memory than allowed
    /// (needed and allowed, in GiB).
    not_checked: Vec<(RuleSet, Material, f64, f64)>,
    /// Tables not checked because a table they depend on could not be read.
    unverifiable: Vec<(RuleSet, Material, String)>,
    /// Tables skipped as the journal records them passed.
    from_journal: usize,
    /// Tables the manifest lists that the directory lacks.
    missing: Vec<(RuleSet, Material)>,
}

impl Run<'_> {
    /// A line printed under the bar without breaking it.
    fn say(&self, line: String) {
        self.meter.bar.suspend(|| println!("{line}"));
    }

    /// The table's line: rules, material, states, then what was found.
    fn row(&self, r: RuleSet, m: Material, states: u64, rest: String) {
        self.say(format!(
            "{:<10} {:<10} {states:>12} states  {rest}",
            r.name(),
            m.to_string()
        ));
    }

    /// Check the table of `m` under `r`, unless the journal records that it
    /// passed with the files it has now, and add what was found to `report`.
    fn check(
        &self,
        r: RuleSet,
        m: Material,
        journal: Option<&mut Journal>,
        report: &mut Report,
    ) -> Result<(), CliError> {
        let states = MaterialIndex::new(m, r).size();
        let identity = journal
            .as_ref()
            .and_then(|_| Journal::identity(self.dir, m, r));
        let recorded = journal
            .as_deref()
            .zip(identity.as_deref())
            .and_then(|(j, id)| {
                j.recorded(self.dir, m, r, id, !self.files_only)
                    .map(|st| (j, st.clone()))
            });
        if let Some((j, stats)) = recorded {
            self.passed_before(r, m, states, stats, &j.path, report);
            return Ok(());
        }
        let needed = frisian_tb::verify::memory_estimate(m, r);
        // Checking the files alone holds one step of values, not the
        // tables the moves lead to.
        if let Some(limit) = self.limit.filter(|&l| needed > l && !self.files_only) {
            // Refuse before allocating: being killed for memory half-way
            // through a long run helps nobody.
            let (needed, limit) = (needed as f64 / GIB, limit as f64 / GIB);
            if !self.json {
                self.row(r, m, states, format!("NOT CHECKED: needs about {needed:.1} GiB of memory, {limit:.1} GiB allowed (--max-memory)"));
            }
            self.meter.skip(states);
            report.not_checked.push((r, m, needed, limit));
            return Ok(());
        }
        let t = Instant::now();
        let done_before = self.meter.bar.position();
        let check = if self.files_only {
            frisian_tb::verify::check_table_files(self.dir, m, r, &|n| self.meter.inc(n))
        } else {
            frisian_tb::verify::verify_table_with_progress(self.dir, m, r, 5, &|n| {
                self.meter.inc(n)
            })
        };
        // The whole table counted, also where the check stopped early.
        self.meter.bar.set_position(done_before + states);
        // A table that cannot be checked (a table its moves lead to is
        // missing or damaged) is reported, and the others still checked.
        let mut check = match check {
            Ok(check) => check,
            Err(e) => {
                if !self.json {
                    self.row(r, m, states, format!("NOT CHECKED: {e}"));
                }
                report.unverifiable.push((r, m, e.to_string()));
                return Ok(());
            }
        };
        compare_with_manifest(&mut check, self.manifest);
        if let (Some(j), Some(id), Some(stats)) = (journal, &identity, &check.stats) {
            if check.ok() {
                j.record(!self.files_only, id, stats)?;
            }
        }
        if !self.json {
            self.print_check(r, m, &check, t.elapsed().as_secs_f64());
        }
        report.checks.push((r, check, false));
        Ok(())
    }

    /// A table that passed before, with the files it has now: only the
    /// manifest is compared again (it may be another one this time).
    fn passed_before(
        &self,
        r: RuleSet,
        m: Material,
        states: u64,
        stats: TableStats,
        journal: &Path,
        report: &mut Report,
    ) {
        let mut check = TableCheck {
            material: m.to_string(),
            states,
            file_errors: Vec::new(),
            mismatches: 0,
            first_mismatches: Vec::new(),
            stats: Some(stats),
        };
        compare_with_manifest(&mut check, self.manifest);
        if !self.json {
            let status = if check.ok() { "ok" } else { "FAILED" };
            self.row(
                r,
                m,
                states,
                format!("{status}  (passed before: {})", journal.display()),
            );
            for e in &check.file_errors {
                self.say(format!("    {e}"));
            }
        }
        self.meter.skip(states);
        report.from_journal += 1;
        report.checks.push((r, check, true));
    }

    /// The line of a table checked (`seconds`: how long it took), with its
    /// file errors and first wrong values under it.
    fn print_check(&self, r: RuleSet, m: Material, check: &TableCheck, seconds: f64) {
        let status = if check.ok() {
            "ok".to_string()
        } else if check.mismatches > 0 {
            format!("FAILED: {} wrong values", check.mismatches)
        } else {
            "FAILED".to_string()
        };
        self.row(r, m, check.states, format!("{status}  ({seconds:.1} s)"));
        for e in &check.file_errors {
            self.say(format!("    {e}"));
        }
        for mm in &check.first_mismatches {
            self.say(format!(
                "    index {}: {}  stored {}, expected {}",
                mm.index, mm.fen, mm.stored, mm.expected
            ));
        }
    }
}

impl Report {
    fn failed(&self) -> usize {
        self.checks.iter().filter(|(_, c, _)| !c.ok()).count()
    }

    /// The summary: a JSON document, or a line.
    fn print(&self, json: bool, files_only: bool, manifest: Option<&Path>) {
        if json {
            println!("{}", self.to_json(files_only));
            return;
        }
        let n = self.checks.len();
        let mut line = format!("{n} table{} checked", if n == 1 { "" } else { "s" });
        if files_only {
            line += " (files only: no value re-derived)";
        }
        if self.from_journal > 0 {
            line += &format!(
                " ({} passed before, as the journal records)",
                self.from_journal
            );
        }
        line += &format!(", {} failed", self.failed());
        if !self.not_checked.is_empty() {
            line += &format!(
                ", {} not checked for lack of memory",
                self.not_checked.len()
            );
        }
        if !self.unverifiable.is_empty() {
            line += &format!(
                ", {} not checked: a table they need could not be read",
                self.unverifiable.len()
            );
        }
        if let Some(p) = manifest {
            if !self.missing.is_empty() {
                line += &format!(
                    ", {} listed in {} missing from the directory",
                    self.missing.len(),
                    p.display()
                );
            }
            line += &format!(" (statistics and checksums compared with {})", p.display());
        }
        println!("{line}");
    }

    fn to_json(&self, files_only: bool) -> serde_json::Value {
        let list: Vec<serde_json::Value> = self
            .checks
            .iter()
            .map(|(r, c, recorded)| serde_json::json!({"rules": r.name(), "material": c.material, "states": c.states, "ok": c.ok(), "mismatches": c.mismatches, "file_errors": c.file_errors, "first_mismatches": c.first_mismatches, "checksum": c.stats.as_ref().map(|st| st.checksum.clone()), "from_journal": recorded}))
            .collect();
        let skipped: Vec<serde_json::Value> = self
            .not_checked
            .iter()
            .map(|(r, m, needed, limit)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "needed_gib": needed, "limit_gib": limit}))
            .collect();
        let unreadable: Vec<serde_json::Value> = self
            .unverifiable
            .iter()
            .map(|(r, m, e)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "error": e}))
            .collect();
        let missing: Vec<serde_json::Value> = self
            .missing
            .iter()
            .map(|(r, m)| serde_json::json!({"rules": r.name(), "material": m.to_string()}))
            .collect();
        serde_json::json!({"tables": list, "failed": self.failed(), "not_checked": skipped, "unverifiable": unreadable, "missing": missing, "files_only": files_only, "from_journal": self.from_journal})
    }

    /// The run's result: an error if any table failed, is missing from
    /// `dir` though the manifest lists it, could not be checked, or was not
    /// checked for lack of memory.
    fn status(&self, dir: &Path, manifest: Option<&Path>) -> Result<(), CliError> {
        if self.failed() > 0 {
            return Err(CliError::VerifyFailed);
        }
        if let (false, Some(path)) = (self.missing.is_empty(), manifest) {
            let names: Vec<String> = self
                .missing
                .iter()
                .map(|(r, m)| format!("{m} ({})", r.name()))
                .collect();
            return Err(CliError::CheckFailed(format!(
                "{} tables listed in {} are not in {}: {}",
                names.len(),
                path.display(),
                dir.display(),
                names.join(", ")
            )));
        }
        if let Some((r, m, e)) = self.unverifiable.first() {
            return Err(CliError::Other(format!(
                "{} tables could not be checked; the first, {m} ({}): {e}",
                self.unverifiable.len(),
                r.name()
            )));
        }
        if !self.not_checked.is_empty() {
            let names: Vec<String> = self
                .not_checked
                .iter()
                .map(|(r, m, _, _)| format!("{m} ({})", r.name()))
                .collect();
            return Err(CliError::Other(format!(
                "not verified for lack of memory: {}; run on a machine with more memory, or raise --max-memory",
                names.join(", ")
            )));
        }
        Ok(())
    }
}

/// Add to `check` what differs from its line in the published manifest, if
/// one was given (read from `path`).
fn compare_with_manifest(check: &mut TableCheck, manifest: Option<(&Path, &Manifest)>) {
    if let (Some((path, lines)), Some(stats)) = (manifest, &check.stats) {
        let found = stats.manifest_line();
        match lines.get(&stats.rules, &stats.material) {
            None => check
                .file_errors
                .push(format!("not listed in {}", path.display())),
            Some(line) if line != found => check.file_errors.push(format!(
                "differs from {}: listed `{line}`, found `{found}`",
                path.display()
            )),
            Some(_) => {}
        }
    }
}
