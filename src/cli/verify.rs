//! `verify`: every stored value re-derived from its successors.

use super::{CliError, Meter};
use frisian_tb::generate::TableStats;
use frisian_tb::probe::Tablebase;
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
    let Selection {
        dir,
        rules,
        max_pieces,
        only,
    } = *selection;
    const GIB: f64 = (1u64 << 30) as f64;
    let limit = max_memory
        .map(|g| (g * GIB) as u64)
        .or_else(frisian_tb::generate::available_memory);
    // Tables not checked because they would need more memory than allowed.
    let mut not_checked: Vec<(RuleSet, Material, f64, f64)> = Vec::new();
    // Tables not checked because a table they depend on could not be read.
    let mut unverifiable: Vec<(RuleSet, Material, String)> = Vec::new();
    // Manifest lines by (rules, material), read before any work starts.
    let published: Option<HashMap<(String, String), String>> = manifest
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Other(format!("cannot read {}: {e}", path.display())))?;
            if !frisian_tb::generate::manifest_is_current(&text) {
                return Err(CliError::Other(format!(
                    "{}: not a manifest of this version (its header does not name manifest \
                     checksum 2); `frisian-tb generate` over the tables writes a current one",
                    path.display()
                )));
            }
            Ok::<_, CliError>(
                text.lines()
                    .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                    .filter_map(|l| {
                        let mut f = l.split_whitespace();
                        let key = (f.next()?.to_string(), f.next()?.to_string());
                        Some((key, l.split_whitespace().collect::<Vec<_>>().join(" ")))
                    })
                    .collect(),
            )
        })
        .transpose()?;
    let mut journal = journal.map(Journal::open).transpose()?;
    // Tables skipped as the journal records them passed.
    let mut from_journal = 0;
    let mut checks = Vec::new();
    let mut bases = Vec::new();
    for &r in rules {
        let mut tb = Tablebase::new(r);
        tb.add_directory(dir).map_err(|e| {
            CliError::Other(format!(
                "cannot read table directory {}: {e}",
                dir.display()
            ))
        })?;
        bases.push((r, tb));
    }
    // A material asked for by name but present under none of the rule sets is an
    // error before any work starts: silently checking nothing would read as "ok".
    let missing: Vec<String> = only
        .iter()
        .filter(|m| !bases.iter().any(|(_, tb)| tb.materials().contains(m)))
        .map(|m| m.to_string())
        .collect();
    if !missing.is_empty() {
        let names: Vec<&str> = rules.iter().map(|r| r.name()).collect();
        return Err(CliError::Other(format!(
            "no {} table for {} in {}",
            names.join(" or "),
            missing.join(", "),
            dir.display()
        )));
    }
    // Every table to check, first, so that one bar (or a log line a minute)
    // shows the whole run with its ETA.
    let work: Vec<(RuleSet, Material)> = bases
        .iter()
        .flat_map(|(r, tb)| {
            tb.materials()
                .into_iter()
                .filter(|m| max_pieces.is_none_or(|n| m.pieces() <= n))
                .filter(|m| only.is_empty() || only.contains(m))
                .map(|m| (*r, m))
                .collect::<Vec<_>>()
        })
        .collect();
    let total = work
        .iter()
        .map(|&(r, m)| MaterialIndex::new(m, r).size())
        .sum();
    let meter = Meter::new(total, json);
    // A line printed under the bar without breaking it.
    let say = |line: String| meter.bar.suspend(|| println!("{line}"));
    for (k, &(r, m)) in work.iter().enumerate() {
        let t = Instant::now();
        let states = MaterialIndex::new(m, r).size();
        // The table's line: rules, material, states, then what was found.
        let row = |states: u64, rest: String| {
            say(format!(
                "{:<10} {:<10} {states:>12} states  {rest}",
                r.name(),
                m.to_string()
            ))
        };
        let done_before = meter.bar.position();
        meter
            .bar
            .set_message(format!("{}/{} {m}", k + 1, work.len()));
        let identity = journal.as_ref().and_then(|_| Journal::identity(dir, m, r));
        let recorded = journal
            .as_ref()
            .zip(identity.as_deref())
            .and_then(|(j, id)| j.recorded(dir, m, r, id, !files_only));
        if let Some(stats) = recorded {
            // Passed before, files unchanged: only the manifest is
            // compared again (it may be another one this time).
            let mut check = TableCheck {
                material: m.to_string(),
                states,
                file_errors: Vec::new(),
                mismatches: 0,
                first_mismatches: Vec::new(),
                stats: Some(stats.clone()),
            };
            compare_with_manifest(&mut check, published.as_ref(), manifest);
            if !json {
                let status = if check.ok() { "ok" } else { "FAILED" };
                let path = journal.as_ref().map_or(Path::new(""), |j| &j.path);
                row(
                    states,
                    format!("{status}  (passed before: {})", path.display()),
                );
                for e in &check.file_errors {
                    say(format!("    {e}"));
                }
            }
            meter.skip(states);
            from_journal += 1;
            checks.push((r, check, true));
            continue;
        }
        let needed = frisian_tb::verify::memory_estimate(m, r);
        // Checking the files alone holds one step of values, not the
        // tables the moves lead to.
        if let Some(limit) = limit.filter(|&l| needed > l && !files_only) {
            // Refuse before allocating: being killed for memory half-way
            // through a long run helps nobody.
            let (needed, limit) = (needed as f64 / GIB, limit as f64 / GIB);
            if !json {
                row(states, format!("NOT CHECKED: needs about {needed:.1} GiB of memory, {limit:.1} GiB allowed (--max-memory)"));
            }
            meter.skip(states);
            not_checked.push((r, m, needed, limit));
            continue;
        }
        let check = if files_only {
            frisian_tb::verify::check_table_files(dir, m, r, &|n| meter.inc(n))
        } else {
            frisian_tb::verify::verify_table_with_progress(dir, m, r, 5, &|n| meter.inc(n))
        };
        // The whole table counted, also where the check stopped early.
        meter.bar.set_position(done_before + states);
        // A table that cannot be checked (a table its moves lead to is
        // missing or damaged) is reported, and the others still checked.
        let mut check = match check {
            Ok(check) => check,
            Err(e) => {
                if !json {
                    row(states, format!("NOT CHECKED: {e}"));
                }
                unverifiable.push((r, m, e.to_string()));
                continue;
            }
        };
        compare_with_manifest(&mut check, published.as_ref(), manifest);
        if let (Some(j), Some(id), Some(stats)) = (&mut journal, &identity, &check.stats) {
            if check.ok() {
                j.record(!files_only, id, stats)?;
            }
        }
        if !json {
            let status = if check.ok() {
                "ok".to_string()
            } else if check.mismatches > 0 {
                format!("FAILED: {} wrong values", check.mismatches)
            } else {
                "FAILED".to_string()
            };
            row(
                check.states,
                format!("{status}  ({:.1} s)", t.elapsed().as_secs_f64()),
            );
            for e in &check.file_errors {
                say(format!("    {e}"));
            }
            for mm in &check.first_mismatches {
                say(format!(
                    "    index {}: {}  stored {}, expected {}",
                    mm.index, mm.fen, mm.stored, mm.expected
                ));
            }
        }
        checks.push((r, check, false));
    }
    meter.bar.finish_and_clear();
    if work.is_empty() {
        return Err(CliError::Other(format!("no tables in {}", dir.display())));
    }
    let failed = checks.iter().filter(|(_, c, _)| !c.ok()).count();
    if json {
        let list: Vec<serde_json::Value> = checks
            .iter()
            .map(|(r, c, recorded)| serde_json::json!({"rules": r.name(), "material": c.material, "states": c.states, "ok": c.ok(), "mismatches": c.mismatches, "file_errors": c.file_errors, "first_mismatches": c.first_mismatches, "checksum": c.stats.as_ref().map(|st| st.checksum.clone()), "from_journal": recorded}))
            .collect();
        let skipped: Vec<serde_json::Value> = not_checked
            .iter()
            .map(|(r, m, needed, limit)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "needed_gib": needed, "limit_gib": limit}))
            .collect();
        let unreadable: Vec<serde_json::Value> = unverifiable
            .iter()
            .map(|(r, m, e)| serde_json::json!({"rules": r.name(), "material": m.to_string(), "error": e}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"tables": list, "failed": failed, "not_checked": skipped, "unverifiable": unreadable, "files_only": files_only, "from_journal": from_journal})
        );
    } else {
        println!(
            "{} tables checked{}{}, {} failed{}{}",
            checks.len(),
            if files_only {
                " (files only: no value re-derived)"
            } else {
                ""
            },
            if from_journal > 0 {
                format!(" ({from_journal} passed before, as the journal records)")
            } else {
                String::new()
            },
            failed,
            if not_checked.is_empty() {
                String::new()
            } else {
                format!(", {} not checked for lack of memory", not_checked.len())
            } + &if unverifiable.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} not checked: a table they need could not be read",
                    unverifiable.len()
                )
            },
            manifest.map_or(String::new(), |p| format!(
                " (statistics and checksums compared with {})",
                p.display()
            ))
        );
    }
    if failed > 0 {
        return Err(CliError::VerifyFailed);
    }
    if let Some((r, m, e)) = unverifiable.first() {
        return Err(CliError::Other(format!(
            "{} tables could not be checked; the first, {m} ({}): {e}",
            unverifiable.len(),
            r.name()
        )));
    }
    if !not_checked.is_empty() {
        let names: Vec<String> = not_checked
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

/// Add to `check` what differs from its line in the published manifest, if
/// one was given (`lines` by rules and material, read from `path`).
fn compare_with_manifest(
    check: &mut TableCheck,
    lines: Option<&HashMap<(String, String), String>>,
    path: Option<&Path>,
) {
    if let (Some(lines), Some(path), Some(stats)) = (lines, path, &check.stats) {
        let found = stats.manifest_line();
        match lines.get(&(stats.rules.clone(), stats.material.clone())) {
            None => check
                .file_errors
                .push(format!("not listed in {}", path.display())),
            Some(line) if *line != found => check.file_errors.push(format!(
                "differs from {}: listed `{line}`, found `{found}`",
                path.display()
            )),
            Some(_) => {}
        }
    }
}
