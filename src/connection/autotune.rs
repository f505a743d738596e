//! Buffer autotuning: a receive window that grows with what the
//! application reads per round trip, and a send buffer that grows with
//! the window the sender may fill ([`Config::buffer_autotuning`]).
//!
//! `recv_buffer` and `send_buffer` become ceilings. The receive side is
//! Dynamic Right-Sizing (Fisk and Feng, 2001; Linux's
//! `tcp_rcv_space_adjust` does the same): once per round trip (at least
//! a millisecond), measured at the receiver, it counts the bytes the
//! application read per round trip; when that is more than ever before,
//! the window may grow to twice it (plus a margin, and more while the rate
//! is still climbing), so a sender in slow start, which doubles each round
//! trip, is never held back by it. The round trip is the smallest the
//! receiver has measured, without the queues on the way: a window of
//! twice the reads per such round trip keeps the path full and lets at
//! most about a round trip's worth queue, where one measured with the
//! queues would grow with them. The send side follows Linux's `tcp_sndbuf_expand`: room
//! for twice what the sender may have in flight, so that a window's worth
//! is always queued behind the window in flight. An endpoint may let its
//! windows take a wider margin from a budget its connections share
//! (`WindowBudget`, with feature `std`).
//!
//! Why: a fixed window as large as the ceiling lets a fast sender fill
//! every queue on the way, socket buffers included, with data that then
//! waits there; on loopback, 8 MiB windows put each byte through memory
//! that has gone cold by the time it is copied again, and a sender 8 MiB
//! ahead of its peer gains nothing. Both only ever grow, as in Linux.
//!
//! [`Config::buffer_autotuning`]: super::Config::buffer_autotuning

use crate::time::{Duration, Instant};

/// Receive window limit before the first measurement: twice an initial
/// window of ten segments (RFC 6928), and no less than 64 KiB.
pub(super) fn initial_receive_limit(mss: u64) -> u64 {
    (20 * mss).max(64 << 10)
}

/// Send buffer room for a sender that may fill `window` bytes: twice
/// that, and no less than the initial receive limit (the first flights).
pub(super) fn send_limit(window: u64, mss: u64) -> u64 {
    (2 * window).max(initial_receive_limit(mss))
}

/// The shortest measurement: on a path of a few microseconds' round trip
/// (loopback), reads come in bursts of a driver's batch, and a count over
/// one round trip would read a burst as the rate.
pub(super) const MIN_PERIOD: Duration = Duration::from_millis(1);

/// Dynamic Right-Sizing's measurement, one per receiver.
#[derive(Debug, Clone)]
pub(super) struct ReceiveTuner {
    /// When the current measurement started, and the application's read
    /// offset then.
    started: Instant,
    read_at_start: u64,
    /// Smallest receiver RTT sample so far: the round trip without the
    /// queues on the way (a sample taken long after the ACK it echoes,
    /// which sparse ACKs make common, reads long). Against the round trip
    /// with them, the window would grow with the queue it lets build.
    min_rtt: Option<Duration>,
    /// Most bytes the application read per round trip so far.
    space: u64,
}

impl ReceiveTuner {
    pub(super) fn new(now: Instant) -> ReceiveTuner {
        ReceiveTuner {
            started: now,
            read_at_start: 0,
            min_rtt: None,
            space: 0,
        }
    }

    /// A receiver-side RTT sample (the time from one of our ACKs leaving
    /// to the first data echoing it arriving).
    pub(super) fn on_rtt_sample(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// At a segment's arrival, with the application's read offset
    /// `read_offset`: the receive window limit that the reads of the
    /// measurement just over call for, when it is larger than any before.
    /// A measurement lasts a round trip, at least [`MIN_PERIOD`]; what was
    /// read is scaled to one round trip.
    pub(super) fn on_arrival(&mut self, now: Instant, read_offset: u64, mss: u64) -> Option<u64> {
        let rtt = self.min_rtt?;
        if now < self.started + rtt.max(MIN_PERIOD) {
            return None;
        }
        let elapsed = now - self.started;
        let copied = read_offset.saturating_sub(self.read_at_start);
        self.started = now;
        self.read_at_start = read_offset;
        let per_rtt = u128::from(copied) * rtt.as_nanos() / elapsed.as_nanos().max(1);
        let per_rtt = u64::try_from(per_rtt).unwrap_or(u64::MAX);
        if per_rtt <= self.space {
            return None;
        }
        let base = per_rtt.saturating_mul(2).saturating_add(16 * mss);
        // While reads still climb (slow start doubles them each round
        // trip), grow ahead of them in proportion, as Linux does: the
        // window these reads set reaches the sender only with the ACKs of
        // the next round trip's data. Not where a measurement spans many
        // round trips (under `MIN_PERIOD`): its growth is that of many
        // doublings, the lag a fraction of it, and the window would
        // overshoot for good (on loopback, to several times what the
        // transfer ever needs, out of the caches).
        let growth = if self.space == 0 || rtt < MIN_PERIOD {
            0
        } else {
            let ratio =
                u128::from(per_rtt - self.space) * u128::from(base) / u128::from(self.space);
            u64::try_from(2 * ratio).unwrap_or(u64::MAX)
        };
        self.space = per_rtt;
        Some(base.saturating_add(growth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn no_measurement_before_a_round_trip_sample() {
        let mut t = ReceiveTuner::new(at(0));
        assert_eq!(t.on_arrival(at(500), 1 << 20, 1000), None);
    }

    #[test]
    fn window_follows_reads_per_round_trip_and_only_grows() {
        let mss = 1000;
        let mut t = ReceiveTuner::new(at(0));
        t.on_rtt_sample(Duration::from_millis(150));
        t.on_rtt_sample(Duration::from_millis(100));
        // Not a round trip yet.
        assert_eq!(t.on_arrival(at(50), 10_000, mss), None);
        // 20 000 bytes read in the first round trip: twice that plus the
        // margin, with nothing before to grow from.
        assert_eq!(t.on_arrival(at(100), 20_000, mss), Some(56_000));
        // Twice as much in the next: the growth term adds twice the base.
        assert_eq!(
            t.on_arrival(at(200), 60_000, mss),
            Some(96_000 + 2 * 96_000)
        );
        // As much again, or less: no change.
        assert_eq!(t.on_arrival(at(300), 100_000, mss), None);
        assert_eq!(t.on_arrival(at(400), 110_000, mss), None);
        // A later, longer sample does not stretch the round trip: 50 000
        // bytes in 200 ms is 25 000 per round trip, less than before.
        t.on_rtt_sample(Duration::from_millis(300));
        assert_eq!(t.on_arrival(at(600), 160_000, mss), None);
    }

    #[test]
    fn a_short_round_trip_is_measured_over_a_millisecond_and_scaled() {
        let mss = 1000;
        let mut t = ReceiveTuner::new(at(0));
        t.on_rtt_sample(Duration::from_micros(50));
        // 40 000 bytes in 2 ms: 1 000 per 50 us round trip.
        assert_eq!(t.on_arrival(Instant::from_micros(500), 40_000, mss), None);
        assert_eq!(t.on_arrival(at(2), 40_000, mss), Some(2_000 + 16_000));
        // Eight times as much in the next millisecond: twice that, with no
        // growth term, where a round trip of a millisecond or more would
        // add twice 7 times the base.
        assert_eq!(t.on_arrival(at(3), 200_000, mss), Some(16_000 + 16_000));
    }

    #[test]
    fn limits_start_at_twenty_segments_and_at_least_64_kib() {
        assert_eq!(initial_receive_limit(1000), 64 << 10);
        assert_eq!(initial_receive_limit(65_447), 20 * 65_447);
        assert_eq!(send_limit(1 << 20, 1448), 2 << 20);
        assert_eq!(send_limit(0, 1448), 64 << 10);
    }
}
