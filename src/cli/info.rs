//! `info`: one table file's header and statistics.

use super::CliError;
use frisian_tb::table::{Metric, TableFile};
use std::path::Path;

/// Print a table file's header and statistics; a file whose body does not
/// match its checksum is reported, after the header, as a failed check.
pub(super) fn cmd_info(file: &Path, json: bool) -> Result<(), CliError> {
    if file.is_dir() {
        return Err(CliError::Other(format!(
            "{} is a directory; give a table file, e.g. {}",
            file.display(),
            file.join("KvK.official.wdl").display()
        )));
    }
    let t = TableFile::open(file)?;
    let checked = t.check_body();
    let body = match &checked {
        Ok(()) => "ok".to_string(),
        Err(_) => "DAMAGED (does not match the header's checksum)".to_string(),
    };
    print_info(file, &t, &body, json);
    checked.map_err(|e| CliError::CheckFailed(e.to_string()))
}

/// The header and statistics of table `t` (read from `file`), with `body`
/// the outcome of its body check.
fn print_info(file: &Path, t: &TableFile, body: &str, json: bool) {
    let h = t.header();
    if json {
        let v = serde_json::json!({
            "file": file.display().to_string(),
            "metric": h.metric.extension(),
            "rules": h.rules.name(),
            "material": h.material.to_string(),
            "format_version": h.format_version,
            "index_version": h.index_version,
            "states": h.states,
            "wins": h.wins,
            "draws": h.draws,
            "losses": h.losses,
            "longest_win": h.longest_win,
            "block_states": h.block_states,
            "blocks": h.blocks,
            "value_width": h.value_width,
            "dtw_halved": h.dtw_halved,
            "bytes": t.file_len(),
            "values_checksum": format!("{:016x}", h.values_checksum),
            "body_checksum": body,
        });
        println!("{v}");
        return;
    }
    println!("file:          {}", file.display());
    println!(
        "table:         {} {} ({})",
        h.material,
        h.rules,
        if h.metric == Metric::Wdl {
            "win/draw/loss"
        } else {
            "distance to win"
        }
    );
    println!(
        "format:        version {}, index scheme {}",
        h.format_version, h.index_version
    );
    println!("states:        {}", h.states);
    let pct = |n: u64| 100.0 * n as f64 / h.states.max(1) as f64;
    println!("wins:          {} ({:.2}%)", h.wins, pct(h.wins));
    println!("draws:         {} ({:.2}%)", h.draws, pct(h.draws));
    println!("losses:        {} ({:.2}%)", h.losses, pct(h.losses));
    println!("longest win:   {} plies", h.longest_win);
    let encoding = match (h.metric, h.value_width) {
        (Metric::Wdl, _) => "2-bit values".to_string(),
        (_, w) if h.dtw_halved => format!("{w} byte values, DTW halved"),
        (_, w) => format!("{w} byte values, DTW in plies"),
    };
    println!(
        "blocks:        {} of {} states, {encoding}",
        h.blocks, h.block_states
    );
    println!(
        "size:          {} bytes ({:.1} states per byte)",
        t.file_len(),
        h.states as f64 / t.file_len() as f64
    );
    println!(
        "checksums:     values {:016x}; body {}",
        h.values_checksum, body
    );
}
