//! Watching a transfer: the transport's counters, an observer the
//! transfer loops report to, a console implementation (a bar on a
//! terminal, plain lines otherwise) and the end-of-run summary.

use crate::connection::Stats;
use crate::net::AckProbe;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::fmt;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A stream that may know its transport's counters.
///
/// ackwise streams answer with their connection's [`Stats`]; kernel TCP
/// and in-memory pipes have none to give, which the summary says rather
/// than inventing numbers.
pub trait StatsSource {
    /// The transport's counters now, if it keeps any.
    fn transport_stats(&self) -> Option<Stats> {
        None
    }

    /// A handle on what the peer has acknowledged, for a transport that
    /// knows. The sender then counts progress, and judges liveness, by
    /// acknowledged bytes; without one it counts bytes written.
    fn ack_probe(&self) -> Option<AckProbe> {
        None
    }

    /// Makes this end acknowledge as `policy` says, for a transport whose
    /// ACK policy can change (the ackwise transport); false when it
    /// cannot, and the transport keeps its own.
    fn set_ack_policy(&mut self, _policy: crate::connection::AckPolicyConfig) -> bool {
        false
    }
}

impl StatsSource for crate::net::Stream {
    fn transport_stats(&self) -> Option<Stats> {
        Some(self.stats())
    }

    fn ack_probe(&self) -> Option<AckProbe> {
        Some(crate::net::Stream::ack_probe(self))
    }

    fn set_ack_policy(&mut self, policy: crate::connection::AckPolicyConfig) -> bool {
        crate::net::Stream::set_ack_policy(self, policy).is_ok()
    }
}

impl StatsSource for tokio::net::TcpStream {}
impl StatsSource for tokio::io::DuplexStream {}

impl<T: StatsSource + ?Sized> StatsSource for Box<T> {
    fn transport_stats(&self) -> Option<Stats> {
        (**self).transport_stats()
    }

    fn ack_probe(&self) -> Option<AckProbe> {
        (**self).ack_probe()
    }
}

impl<T: StatsSource + ?Sized> StatsSource for &mut T {
    fn transport_stats(&self) -> Option<Stats> {
        (**self).transport_stats()
    }

    fn ack_probe(&self) -> Option<AckProbe> {
        (**self).ack_probe()
    }
}

/// Which way the content flows at this end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// This end sends.
    Send,
    /// This end receives.
    Receive,
}

/// Told about a transfer as it happens. Every method has an empty
/// default, so an observer implements only what it shows.
pub trait Observer: Send {
    /// A file's header was accepted and its content starts.
    fn file_started(&mut self, _name: &str, _length_bytes: u64) {}
    /// `done_bytes` of the current file have been acknowledged by the
    /// receiver (sending over a transport with an
    /// [`ack_probe`](StatsSource::ack_probe); written to the stream over
    /// others) or read for the disk (receiving). Never more than that, so
    /// a sender's bar does not run ahead of the receiver. Called every
    /// [`PROGRESS_INTERVAL`] while the file moves, even while a write or
    /// the wait for a verdict blocks, and once at the end of each file.
    fn progress(&mut self, _done_bytes: u64, _stats: Option<&Stats>) {}
    /// A file is finished, stored (`Ok`) or not.
    fn file_finished(&mut self, _report: &FileReport) {}
}

/// An observer that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {}

/// How often the transfer loops report progress.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// The outcome of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The name it travelled under.
    pub name: String,
    /// Content bytes moved on this connection (all of them from
    /// `resumed_from_bytes` on when `verdict` is ok).
    pub bytes: u64,
    /// Where the content started: 0, or the bytes the receiver held from
    /// an interrupted transfer of the file ([`super::protocol::Offer`]).
    pub resumed_from_bytes: u64,
    /// From the header to the final verdict.
    pub elapsed: Duration,
    /// The receiver's final word.
    pub verdict: super::Verdict,
}

/// What one connection's transfers amounted to, at either end.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Which end this is.
    pub direction: Direction,
    /// Every file in order, stored or not.
    pub files: Vec<FileReport>,
    /// From the first header to the end of the connection.
    pub elapsed: Duration,
    /// The transport's counters at the end, if it keeps any.
    pub stats: Option<Stats>,
}

impl Summary {
    /// Content bytes of the files that were stored.
    pub fn stored_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.verdict.is_ok())
            .map(|f| f.bytes)
            .sum()
    }

    /// Every file was stored.
    pub fn all_ok(&self) -> bool {
        self.files.iter().all(|f| f.verdict.is_ok())
    }

    /// Stored content bits per second of elapsed time.
    pub fn goodput_bps(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.stored_bytes() as f64 * 8.0 / secs
        } else {
            0.0
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ok = self.files.iter().filter(|r| r.verdict.is_ok()).count();
        let verb = match self.direction {
            Direction::Send => "sent",
            Direction::Receive => "received",
        };
        write!(
            f,
            "{verb} {ok}/{} files, {} bytes in {:.3} s: {}",
            self.files.len(),
            self.stored_bytes(),
            self.elapsed.as_secs_f64(),
            fmt_rate(self.goodput_bps())
        )?;
        match &self.stats {
            Some(s) => write!(
                f,
                "; ACKs sent {}, received {}; {} retransmissions, {} timeouts",
                s.pure_acks_sent, s.pure_acks_received, s.retransmissions, s.timeouts
            ),
            None => f.write_str("; no ACK counters (not an ackwise stream)"),
        }
    }
}

/// `bits_per_second` with a unit that keeps it readable.
pub fn fmt_rate(bits_per_second: f64) -> String {
    if bits_per_second >= 1e9 {
        format!("{:.2} Gbit/s", bits_per_second / 1e9)
    } else if bits_per_second >= 1e6 {
        format!("{:.1} Mbit/s", bits_per_second / 1e6)
    } else {
        format!("{:.1} kbit/s", bits_per_second / 1e3)
    }
}

/// How a [`Console`] shows progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleMode {
    /// A bar when stderr is a terminal, plain lines otherwise.
    Auto,
    /// Plain lines, every second at most and every 10 % of a file.
    Plain,
    /// Nothing but failures.
    Quiet,
}

/// An [`Observer`] that reports on stderr: an indicatif bar with the rate
/// (bit/s, as in the summaries) and ACK counts on a terminal, a plain line
/// every second (and at each 10 % of a file) when stderr is a file or a
/// pipe, whatever the file's size.
pub struct Console {
    plain: bool,
    quiet: bool,
    show_failures: bool,
    label: String,
    multi: Option<MultiProgress>,
    bar: Option<ProgressBar>,
    length_bytes: u64,
    started: Instant,
    last_line: Instant,
    last_tenth: u64,
}

impl Console {
    /// A console reporter; `label` prefixes each line (e.g. the peer's
    /// address at a receiver serving several connections).
    pub fn new(mode: ConsoleMode, label: impl Into<String>) -> Console {
        let plain = match mode {
            ConsoleMode::Auto => !std::io::stderr().is_terminal(),
            ConsoleMode::Plain | ConsoleMode::Quiet => true,
        };
        let now = Instant::now();
        Console {
            plain,
            quiet: mode == ConsoleMode::Quiet,
            show_failures: true,
            label: label.into(),
            multi: None,
            bar: None,
            length_bytes: 0,
            started: now,
            last_line: now,
            last_tenth: 0,
        }
    }

    /// Draws bars inside `multi`, so that concurrent transfers (a receiver
    /// serving several senders) each get their own line.
    pub fn with_multi(mut self, multi: MultiProgress) -> Console {
        self.multi = Some(multi);
        self
    }

    /// Leaves failed files out (even when quiet): for a program that
    /// reports them itself, once, at the end.
    pub fn without_failures(mut self) -> Console {
        self.show_failures = false;
        self
    }

    /// Whether this console shows nothing but failures.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    fn prefix(&self) -> String {
        if self.label.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.label)
        }
    }

    /// Prints a line without tearing a bar that is being drawn.
    pub fn line(&self, text: &str) {
        if self.plain {
            eprintln!("{text}");
            return;
        }
        match (&self.multi, &self.bar) {
            (Some(m), _) => {
                let _ = m.println(text);
            }
            (None, Some(bar)) => bar.println(text),
            (None, None) => eprintln!("{text}"),
        }
    }
}

/// The counters worth watching during a transfer, with a leading
/// separator; nothing for a transport without counters.
fn acks(stats: Option<&Stats>) -> String {
    match stats {
        Some(s) => format!(
            ", ACKs sent {} received {}, {} retx",
            s.pure_acks_sent, s.pure_acks_received, s.retransmissions
        ),
        None => String::new(),
    }
}

impl Observer for Console {
    fn file_started(&mut self, name: &str, length_bytes: u64) {
        self.length_bytes = length_bytes;
        self.started = Instant::now();
        self.last_line = self.started;
        self.last_tenth = 0;
        if self.quiet {
            return;
        }
        if self.plain {
            eprintln!("{}{name}: {length_bytes} bytes ...", self.prefix());
            return;
        }
        // Into the multi-bar first: a bar drawn on its own before would
        // leave a stale line behind.
        let bar = ProgressBar::new(length_bytes);
        let bar = match &self.multi {
            Some(m) => m.add(bar),
            None => bar,
        };
        // A constant template, so it parses; the default style otherwise.
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{bar:25}] {bytes}/{total_bytes} {elapsed} {msg}",
        ) {
            bar.set_style(style.progress_chars("#>."));
        }
        bar.set_prefix(format!("{}{name}", self.prefix()));
        self.bar = Some(bar);
    }

    fn progress(&mut self, done_bytes: u64, stats: Option<&Stats>) {
        if self.quiet {
            return;
        }
        let now = Instant::now();
        // In bit/s like the summaries (indicatif's own rate is in bytes).
        let secs = now.duration_since(self.started).as_secs_f64();
        let rate = if secs > 0.0 {
            done_bytes as f64 * 8.0 / secs
        } else {
            0.0
        };
        if let Some(bar) = &self.bar {
            bar.set_position(done_bytes);
            bar.set_message(format!("{}{}", fmt_rate(rate), acks(stats)));
            return;
        }
        // The end of a file gets its own line from `file_finished`.
        if !self.plain || done_bytes >= self.length_bytes {
            return;
        }
        let tenth = (done_bytes.saturating_mul(10))
            .checked_div(self.length_bytes)
            .unwrap_or(10);
        if tenth > self.last_tenth || now.duration_since(self.last_line) >= Duration::from_secs(1) {
            self.last_tenth = tenth;
            self.last_line = now;
            let percent = if self.length_bytes > 0 {
                done_bytes as f64 * 100.0 / self.length_bytes as f64
            } else {
                100.0
            };
            eprintln!(
                "{}{done_bytes}/{} bytes ({percent:.0} %), {}{}",
                self.prefix(),
                self.length_bytes,
                fmt_rate(rate),
                acks(stats)
            );
        }
    }

    fn file_finished(&mut self, report: &FileReport) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
            if let Some(m) = &self.multi {
                m.remove(&bar);
            }
        }
        if report.verdict.is_ok() {
            if !self.quiet {
                let secs = report.elapsed.as_secs_f64();
                let rate = if secs > 0.0 {
                    report.bytes as f64 * 8.0 / secs
                } else {
                    0.0
                };
                let resumed = if report.resumed_from_bytes > 0 {
                    format!(" (resumed after {} held bytes)", report.resumed_from_bytes)
                } else {
                    String::new()
                };
                self.line(&format!(
                    "{}{}: {} bytes in {secs:.3} s ({}){resumed}, digest ok",
                    self.prefix(),
                    report.name,
                    report.bytes,
                    fmt_rate(rate)
                ));
            }
        } else if self.show_failures {
            self.line(&format!(
                "{}{}: failed: {}",
                self.prefix(),
                report.name,
                report.verdict
            ));
        }
    }
}
