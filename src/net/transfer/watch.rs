//! The sender's view of a transfer while it waits: liveness and progress
//! both come from what the receiver acknowledged.
//!
//! A file sender spends most of a slow transfer blocked: in a write while
//! the send buffer is full, or waiting for the receiver's verdict with
//! megabytes still queued behind a slow link. Timing each of those waits
//! on its own would abort a healthy transfer whose link needs longer than
//! the idle timeout to drain the buffer. Instead the wait is cut into
//! ticks; at each tick the acknowledged byte count is read (through the
//! stream's [`AckProbe`]), and only a count that has not grown for the
//! whole idle timeout ends the transfer. The same ticks report progress,
//! so a line appears while a write is blocked, and the count shown is
//! what the receiver holds, never what is merely queued.
//!
//! Over a stream without a probe (kernel TCP, a pipe) the count is the
//! bytes written, which is the best such a stream can tell.

use super::error::TransferError;
use super::progress::{Observer, StatsSource, PROGRESS_INTERVAL};
use crate::net::AckProbe;
use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

/// Liveness and progress of one sending stream.
pub(crate) struct SendWatch<'o> {
    probe: Option<AckProbe>,
    /// The probe's written count when the watch began: earlier bytes are
    /// not this transfer's.
    probe_base: u64,
    idle: Duration,
    observer: &'o mut dyn Observer,
    /// Bytes this transfer wrote to the stream (headers, content,
    /// digests).
    written: u64,
    /// The delivered count at the last time it grew, and when.
    delivered_seen: u64,
    last_growth: Instant,
    /// The file whose content is moving: where its content starts in the
    /// written count, its length, and the offset it resumes from.
    file: Option<(u64, u64, u64)>,
    last_report: Instant,
}

impl<'o> SendWatch<'o> {
    /// Watches `stream`, reporting to `observer`; a count that stands
    /// still for `idle` is a stall.
    pub(crate) fn new<S: StatsSource + ?Sized>(
        stream: &S,
        idle: Duration,
        observer: &'o mut dyn Observer,
    ) -> SendWatch<'o> {
        let probe = stream.ack_probe();
        let probe_base = probe.as_ref().map_or(0, AckProbe::written_bytes);
        let now = Instant::now();
        SendWatch {
            probe,
            probe_base,
            idle,
            observer,
            written: 0,
            delivered_seen: 0,
            last_growth: now,
            file: None,
            last_report: now,
        }
    }

    /// The observer, for the events the watch does not produce.
    pub(crate) fn observer(&mut self) -> &mut dyn Observer {
        &mut *self.observer
    }

    /// Bytes of this transfer the receiver has acknowledged (written,
    /// without a probe). Bytes written before the watch began and not yet
    /// acknowledged make this an undercount, never an overcount.
    pub(crate) fn delivered(&self) -> u64 {
        match &self.probe {
            Some(p) => p
                .acknowledged_bytes()
                .saturating_sub(self.probe_base)
                .min(self.written),
            None => self.written,
        }
    }

    /// `n` more bytes were written to the stream.
    pub(crate) fn wrote(&mut self, n: usize) {
        self.written += n as u64;
    }

    /// The content of a file of `length_bytes` starts with the next byte
    /// written, from its byte `from_bytes` (0, or where it resumes: the
    /// receiver holds the bytes before it).
    pub(crate) fn start_file(&mut self, name: &str, length_bytes: u64, from_bytes: u64) {
        self.file = Some((self.written, length_bytes, from_bytes.min(length_bytes)));
        self.last_report = Instant::now();
        self.observer.file_started(name, length_bytes);
    }

    /// Content bytes of the current file the receiver has acknowledged
    /// (or held before a resumption).
    pub(crate) fn file_delivered(&self) -> u64 {
        match self.file {
            Some((start, length, from)) => {
                from + self.delivered().saturating_sub(start).min(length - from)
            }
            None => 0,
        }
    }

    /// Reports the current file's progress now.
    pub(crate) fn report(&mut self) {
        if self.file.is_some() {
            self.last_report = Instant::now();
            let done = self.file_delivered();
            let stats = self.probe.as_ref().map(AckProbe::stats);
            self.observer.progress(done, stats.as_ref());
        }
    }

    /// The peer answered: that is a sign of life too.
    pub(crate) fn heard_from_peer(&mut self) {
        self.last_growth = Instant::now();
    }

    /// One tick: notes growth, reports progress when due, and fails once
    /// nothing has grown for the idle timeout.
    fn tick(&mut self, what: &'static str) -> Result<(), TransferError> {
        let now = Instant::now();
        let delivered = self.delivered();
        if delivered > self.delivered_seen {
            self.delivered_seen = delivered;
            self.last_growth = now;
        } else if now.duration_since(self.last_growth) >= self.idle {
            return Err(TransferError::Stalled {
                what,
                after: self.idle,
            });
        }
        if now.duration_since(self.last_report) >= PROGRESS_INTERVAL {
            self.report();
        }
        Ok(())
    }

    /// Runs one stream operation (`what` names it for the error) until it
    /// completes, failing with [`TransferError::Stalled`] only when the
    /// delivered count stood still for the idle timeout meanwhile.
    pub(crate) async fn run<T>(
        &mut self,
        what: &'static str,
        op: impl Future<Output = io::Result<T>>,
    ) -> Result<T, TransferError> {
        tokio::pin!(op);
        // Fine enough for progress lines and for the idle timeout (which
        // may run out up to one tick late), coarse enough to cost nothing.
        let period = PROGRESS_INTERVAL
            .min(self.idle / 4)
            .max(Duration::from_millis(1));
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                done = &mut op => return done.map_err(TransferError::from_stream),
                _ = ticks.tick() => self.tick(what)?,
            }
        }
    }
}
