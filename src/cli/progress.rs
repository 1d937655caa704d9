//! Progress over a long job: a bar with ETA on a terminal, a line a minute
//! in a log.

use std::time::Instant;

/// Progress over a number of states: a bar with ETA on a terminal; when
/// stderr is not a terminal (a run in the background, output to a log), a
/// plain line every minute instead. Nothing for `--json` output.
pub(super) struct Meter {
    pub(super) bar: indicatif::ProgressBar,
    /// When the last log line was written, if logging lines.
    log: Option<std::sync::Mutex<Instant>>,
    /// States counted as done without work in this run (resumed from work files):
    /// they are left out of the rate, or a resumed run would promise a near end.
    skipped: std::sync::atomic::AtomicU64,
    pub(super) start: Instant,
}

impl Meter {
    pub(super) fn new(total: u64, json: bool) -> Meter {
        use std::io::IsTerminal;
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:>10} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} states, ETA {eta}",
            )
            .expect("valid template"),
        );
        let terminal = std::io::stderr().is_terminal();
        if json || !terminal {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let log = (!json && !terminal).then(|| std::sync::Mutex::new(Instant::now()));
        Meter {
            bar,
            log,
            skipped: Default::default(),
            start: Instant::now(),
        }
    }

    /// States already done before this run.
    pub(super) fn skip(&self, n: u64) {
        self.skipped
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        self.bar.inc(n);
        self.bar.reset_eta();
    }

    /// Seconds left at the average rate of this run so far (steadier than the
    /// bar's recent-rate estimate, which swings with the phases of a table).
    pub(super) fn eta(&self) -> Option<u64> {
        let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
        let done = pos.saturating_sub(self.skipped.load(std::sync::atomic::Ordering::Relaxed));
        (done > 0).then(|| {
            (len.saturating_sub(pos) as f64 * self.start.elapsed().as_secs_f64() / done as f64)
                as u64
        })
    }

    pub(super) fn inc(&self, n: u64) {
        self.bar.inc(n);
        if let Some(last) = &self.log {
            let mut last = last.lock().unwrap();
            if last.elapsed().as_secs() >= 60 {
                *last = Instant::now();
                let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
                eprintln!(
                    "{}: {pos}/{len} states ({:.1}%), {} s elapsed, ETA {}",
                    self.bar.message(),
                    100.0 * pos as f64 / len.max(1) as f64,
                    self.start.elapsed().as_secs(),
                    self.eta()
                        .map_or("unknown".to_string(), |s| format!("{s} s"))
                );
            }
        }
    }

    /// Print a line without breaking the bar; in a log (no terminal), print it
    /// plainly, since a hidden bar would swallow it.
    pub(super) fn println(&self, line: String) {
        if self.log.is_some() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}
