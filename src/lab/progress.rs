//! Progress of a sweep on stderr: a live bar on a terminal, a few plain
//! lines when stderr goes to a file or a CI log (where redrawing a bar
//! would leave hundreds of carriage returns), nothing when quiet.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many plain lines a sweep prints at most, roughly: enough to see it
/// move in a log, few enough not to bury the table.
const PLAIN_LINES: usize = 10;

pub(crate) enum Progress {
    Quiet,
    Bar(ProgressBar),
    Plain { done: AtomicUsize, total: usize },
}

impl Progress {
    /// A reporter for `total` runs; `shown` false gives one that says
    /// nothing.
    pub(crate) fn new(total: usize, shown: bool) -> Progress {
        if !shown || total == 0 {
            return Progress::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            return Progress::Plain {
                done: AtomicUsize::new(0),
                total,
            };
        }
        let bar = ProgressBar::new(total as u64);
        // The template is a constant, so it parses; the default style is
        // still a bar if it ever does not.
        if let Ok(style) = ProgressStyle::with_template(
            "[{bar:30}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}  {msg}",
        ) {
            bar.set_style(style.progress_chars("#>."));
        }
        // Ticks keep the elapsed time moving while long runs are busy.
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress::Bar(bar)
    }

    /// A run of `label` (point and strategy) starts.
    pub(crate) fn start(&self, label: impl FnOnce() -> String) {
        if let Progress::Bar(bar) = self {
            bar.set_message(label());
        }
    }

    /// A run finished.
    pub(crate) fn finish_one(&self) {
        match self {
            Progress::Quiet => {}
            Progress::Bar(bar) => bar.inc(1),
            Progress::Plain { done, total } => {
                // Counted under stderr's lock, so that the lines of runs
                // finishing together come out in order.
                let mut err = std::io::stderr().lock();
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                let step = (total / PLAIN_LINES).max(1);
                if d == *total || d % step == 0 {
                    let _ = writeln!(err, "{d}/{total} runs");
                }
            }
        }
    }

    /// The sweep is over: the bar makes room for what follows.
    pub(crate) fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
