//! ACK-clock spreading: data that a sparse ACK releases leaves at the rate
//! the path delivered it, not in one burst.
//!
//! When every segment is acknowledged, each ACK frees about one segment
//! and the ACKs come back spaced as the bottleneck delivered the data, so
//! new segments leave at the delivery rate: TCP's ACK clock. An ACK that
//! covers a group of `g` segments frees `g` segments at once, and they
//! reach the bottleneck queue back to back. With 4 ACKs per window that
//! burst is a quarter of the window: enough to overflow a short buffer,
//! and at a shared drop-tail queue a bursty flow loses more packets than
//! the smooth flows beside it (paper 003's equation 1 regime, and the
//! shared paths of ackwise's gauntlet, where the polled strategies got less
//! than AE's share).
//!
//! The spreader puts the clock's spacing back:
//!
//! * It measures the delivery rate from the ACKs themselves: the bytes an
//!   ACK newly acknowledges over the time since the previous ACK that
//!   acknowledged anything. An interval that contains idle time (the first
//!   ACK of a flight) understates the rate and never overstates it, so the
//!   spreader keeps the highest rate of the last one to two smoothed RTTs
//!   (two buckets of one SRTT each, as a windowed maximum).
//! * In congestion avoidance and in loss recovery, a data segment may
//!   leave only [`GAIN_NUM`]/[`GAIN_DEN`] (1.05) times as fast as that
//!   rate after the previous one. The margin keeps the sender a little
//!   ahead of its own ACK clock, so spreading never leaves the window
//!   unused for long, while a group reaches the bottleneck about as fast as
//!   the path drains it. The gain was 1.5 until the default strategy asked
//!   for 4 ACKs per window in congestion avoidance (see
//!   `AdaptivePerWindow::hold_credit_from`): groups of a quarter of the
//!   window released at 1.5 times the rate overflowed buffers of a few
//!   packets shared by several flows (gauntlet seed 1 case 24, two flows
//!   beside two competitors through a 2-packet buffer: 1.35x AE's
//!   completion at 1.5, 1.04x at 1.05). Over the gauntlet's seeds 1-3
//!   (600 cases, 5 replicates) 1.05 alone, with the old 4 to 32 ACKs per
//!   window, made the default 0.72% faster against AE (standard error
//!   0.22%; cases within 1.05x of AE 91.5% to 93.3%).
//! * The first segment after a pause leaves at once: the reference is the
//!   previous release, and a release in the past gives no credit beyond
//!   the [`burst`](Spreader::with_burst): a driver whose timers fire up
//!   to a tick late (a socket driver) sets its tick there, so that a late
//!   wake-up does not become lost time, as with the pacer's burst. The
//!   emulator's timers are exact and its spreaders have none.
//!
//! Loss recovery needs the spacing most. After a queue overflowed with
//! every other segment lost, RFC 6675's pipe falls with each ACK by the
//! holes it reveals as well as by what it delivered, so each sparse ACK
//! releases resends and new segments at about twice the rate the path
//! delivers them, into the queue that has just overflowed: a segment
//! sent in the recovery is lost and a second recovery halves the window
//! again (one flow at 108 Mbit/s through a 25-packet buffer, gauntlet seed
//! 5 case 54: 1.37x AE's completion unspread in recovery, 1.01x spread).
//! Only the fast retransmit, which starts the recovery, leaves at once.
//! Over the gauntlet's seeds 1-5 (1 000 cases, 5 draws each) spreading in
//! recovery too made the default strategy 0.58% faster against AE on
//! the geometric mean of the cases (standard error 0.18%; 0.73% on the
//! single-flow paths, 23 of them more than 2% faster and 5 slower).
//!
//! It does not act in slow start (ackwise's gauntlet measured slow start
//! slower with the spacing: its rate samples lag a window that doubles
//! every round trip), unless the strategy asks for sparse ACKs there
//! (`+sparse-start`): then it spaces at [`SLOW_START_GAIN`], twice the
//! delivery rate, which is how fast an ACK per segment would release
//! the data; without the spacing, 4 ACKs per window in slow start made
//! 31 of gauntlet seeds 1-3's 600 cases clearly slower than AE against
//! 21 with it (15 with the queue rule's ACK per segment). Nor does it
//! act while cwnd is under [`MIN_CWND_SEGMENTS`]: a
//! window that small releases at most a segment or two per ACK, there is
//! no burst to smooth, and holding those segments only delays the next
//! ACK. (On paper 003's long-flow preset at 1 Mbit/s, 10 to 100 flows with
//! windows of 1 to 3 segments each, spreading without this floor raised
//! timeouts from 1 to 56 at 10 flows; with it there are none, and 69
//! against the unspread sender's 157 at 20 flows, 504 against 422 at 50.)
//! While each requested ACK covers a group of two segments or more, the
//! floor is [`MIN_GROUPED_CWND_SEGMENTS`] instead: an ACK then does
//! release a burst. With `4w-adaptive` that is a window of 5 to 7 segments
//! over a standing queue of a sixth to a quarter of the RTT or more; a
//! window that draws an ACK per segment keeps the ACK clock as it is,
//! and with it its share beside AE flows.
//! Over the gauntlet's seeds 1-5 (5 draws each) this made the default
//! strategy 1.85% faster against AE on the paired geometric mean of the
//! cases (standard error 0.46%; 20% faster on the 84 paths with buffers
//! under 5 packets and a return link under a tenth of the forward rate),
//! with the cases within 1.05x of AE up from 91.9% to 92.2% and 16 above
//! 1.25x as before (held-out seeds 6-10: 1.71% faster, SE 0.37%; 92.1%
//! to 92.5% within 1.05x; 13 to 12 above 1.25x); a floor of 4 on every
//! window was 2.06% faster but lost to AE competitors where windows of 4
//! to 7 draw an ACK each (seed 1 case 4: 1.08x AE's completion to 1.32x;
//! seed 5 case 185: 0.92x to 1.10x), which this floor leaves as they
//! were. Paper 003's long-flow preset keeps its timeouts (21, 131, 379
//! and 625 at 1 Mbit/s and 10, 20, 50 and 100 flows).
//! It only decides *when*: cwnd and the peer window still decide
//! *whether*. Integer arithmetic only, so two runs give the same instants.

use crate::time::{Duration, Instant};

/// Numerator of the spreading gain: data leaves at up to `GAIN_NUM /
/// GAIN_DEN` times the measured delivery rate.
pub const GAIN_NUM: u64 = 21;
/// Denominator of the spreading gain.
pub const GAIN_DEN: u64 = 20;

/// Spreading gain in slow start, where a strategy asks for sparse ACKs
/// there ([`AckRequestStrategy::sparse_slow_start`](super::AckRequestStrategy::sparse_slow_start)):
/// twice the delivery rate, the pace at which an ACK per segment releases
/// data while each delivered segment adds one to the window.
pub const SLOW_START_GAIN: u64 = 2;

/// Largest [`Spreader::with_burst`], the pacer's: beyond a tenth of a
/// second a timer is not late but stopped.
pub const MAX_BURST: Duration = super::PacingConfig::MAX_BURST;

/// The burst [`Config::default`](crate::connection::Config) gives a
/// connection: the lateness of a millisecond timer wheel (tokio's) plus
/// scheduling, so that a connection driven by ordinary timers keeps its
/// rate (ackwise's socket driver allows its pacers as much,
/// `net::PACING_TIMER_TICK`). A driver with exact timers (ackwise's
/// emulator) sets zero.
pub const DEFAULT_BURST: Duration = Duration::from_millis(2);

/// Smallest congestion window, in segments, that the spreader spaces;
/// below it data leaves as the ACK clock releases it.
pub const MIN_CWND_SEGMENTS: u64 = 8;

/// Smallest congestion window, in segments, that the spreader spaces
/// while each requested ACK covers a group of two segments or more.
pub const MIN_GROUPED_CWND_SEGMENTS: u64 = 4;

/// Fixed-point scale of the per-byte gap: nanoseconds per 1024 bytes.
const GAP_SCALE: u128 = 1024;

/// The delivery-rate estimate and the release clock of ACK-clock
/// spreading. Sans-IO: [`on_ack`](Self::on_ack) feeds it ACKs,
/// [`may_send`](Self::may_send) asks whether data may leave now,
/// [`on_sent`](Self::on_sent) records what did, and
/// [`wake_at`](Self::wake_at) says when held data may go.
#[derive(Debug, Clone, Default)]
pub struct Spreader {
    /// When the last ACK that acknowledged new data arrived.
    last_ack: Option<Instant>,
    /// Start of the current bucket of the windowed maximum.
    bucket_start: Option<Instant>,
    /// Smallest gap per 1024 bytes (highest rate) in the current bucket.
    current: Option<u64>,
    /// The same for the bucket before it.
    previous: Option<u64>,
    /// The earliest instant the next data segment may leave.
    next_release: Option<Instant>,
    /// A segment was held back: the driver needs a wake-up.
    held: bool,
    /// How far behind the real clock the release clock may run.
    burst: Duration,
}

impl Spreader {
    /// A spreader with no rate measured yet (it holds nothing back until
    /// two ACKs have acknowledged data).
    pub fn new() -> Self {
        Self::default()
    }

    /// A spreader whose release clock may run up to `burst` (at most
    /// [`MAX_BURST`]) behind the real one: a segment that leaves late by
    /// at most that much is booked at its release instant, so what the
    /// late wake-up owes leaves at once.
    pub fn with_burst(burst: Duration) -> Self {
        Spreader {
            burst: burst.min(MAX_BURST),
            ..Self::default()
        }
    }

    /// An ACK arrived at `now` that newly acknowledged `acked_bytes`
    /// (zero for a duplicate); `srtt` sizes the buckets of the windowed
    /// maximum.
    pub fn on_ack(&mut self, now: Instant, acked_bytes: u64, srtt: Duration) {
        let bucket_over = self
            .bucket_start
            .is_none_or(|start| now.saturating_duration_since(start) > srtt);
        if bucket_over {
            self.previous = self.current.take();
            self.bucket_start = Some(now);
        }
        if acked_bytes == 0 {
            return;
        }
        if let Some(last) = self.last_ack {
            let interval = now.saturating_duration_since(last).as_nanos();
            let gap = interval * GAP_SCALE / u128::from(acked_bytes);
            let gap = u64::try_from(gap).unwrap_or(u64::MAX);
            self.current = Some(self.current.map_or(gap, |c| c.min(gap)));
        }
        self.last_ack = Some(now);
    }

    /// Nanoseconds per 1024 bytes at the highest rate of the last one to
    /// two buckets; `None` before any rate sample.
    pub fn gap_per_kib(&self) -> Option<u64> {
        match (self.current, self.previous) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the spacing lets a data segment leave at `now`. When it
    /// may not and `has_work` says a segment is waiting, the segment is
    /// marked held, so [`wake_at`](Self::wake_at) reports when it may go
    /// (as the pacer does).
    pub fn may_send(&mut self, now: Instant, has_work: bool) -> bool {
        if self.gap_per_kib().is_none() {
            return true;
        }
        match self.next_release {
            Some(at) if now < at => {
                self.held |= has_work;
                false
            }
            _ => true,
        }
    }

    /// A data segment of `bytes` left at `now` under the spacing: the next
    /// may leave once these bytes would have drained at the gain times
    /// the delivery rate.
    pub fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.on_sent_at_gain(now, bytes, GAIN_NUM, GAIN_DEN);
    }

    /// [`on_sent`](Self::on_sent) in slow start: the next segment may
    /// leave once these bytes would have drained at [`SLOW_START_GAIN`]
    /// times the delivery rate.
    pub fn on_sent_in_slow_start(&mut self, now: Instant, bytes: u64) {
        self.on_sent_at_gain(now, bytes, SLOW_START_GAIN, 1);
    }

    fn on_sent_at_gain(&mut self, now: Instant, bytes: u64, gain_num: u64, gain_den: u64) {
        self.held = false;
        let Some(gap) = self.gap_per_kib() else {
            return;
        };
        let wait_ns = u128::from(bytes)
            .saturating_mul(u128::from(gap))
            .saturating_mul(u128::from(gain_den))
            / (GAP_SCALE * u128::from(gain_num));
        let wait = Duration::from_nanos(u64::try_from(wait_ns).unwrap_or(u64::MAX));
        // Booked at its release instant if it left late by at most the
        // burst, else `burst` before `now`.
        let earliest = now - self.burst;
        let from = self.next_release.map_or(now, |at| at.max(earliest));
        self.next_release = Some(from + wait);
    }

    /// When a held segment may leave, if one is held.
    pub fn wake_at(&self) -> Option<Instant> {
        if self.held {
            self.next_release
        } else {
            None
        }
    }

    /// A timer fired at `now`: a release instant that has passed needs no
    /// further wake-up.
    pub fn on_timer(&mut self, now: Instant) {
        if self.next_release.is_some_and(|at| now >= at) {
            self.held = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRTT: Duration = Duration::from_millis(100);

    fn at(us: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(us)
    }

    #[test]
    fn holds_nothing_before_a_rate_is_measured() {
        let mut s = Spreader::new();
        assert!(s.may_send(at(0), true));
        s.on_sent(at(0), 1448);
        assert!(s.may_send(at(0), true));
        // One ACK alone gives no interval.
        s.on_ack(at(10), 14480, SRTT);
        assert_eq!(s.gap_per_kib(), None);
        assert!(s.may_send(at(10), true));
        assert_eq!(s.wake_at(), None);
    }

    #[test]
    fn spaces_released_data_at_the_gain_times_the_delivery_rate() {
        let mut s = Spreader::new();
        // 4096 bytes acknowledged 2.8 ms apart: 0.7 ms per 1024 bytes.
        s.on_ack(at(1200), 4096, SRTT);
        s.on_ack(at(4000), 4096, SRTT);
        assert_eq!(s.gap_per_kib(), Some(700_000));
        // Four 1536-byte segments released by this ACK: the first at once,
        // each next 1536 / 1024 * 0.7 ms / 1.05 = 1 ms after it.
        assert!(s.may_send(at(4000), true));
        s.on_sent(at(4000), 1536);
        assert!(!s.may_send(at(4999), true));
        assert_eq!(s.wake_at(), Some(at(5000)));
        assert!(s.may_send(at(5000), true));
        s.on_sent(at(5000), 1536);
        // Without a burst, a segment that leaves late (due at 6 ms) is
        // spaced from when it left...
        assert!(s.may_send(at(6300), true));
        s.on_sent(at(6300), 1536);
        assert_eq!(s.wake_at(), None);
        assert!(!s.may_send(at(7299), true));
        // ...and a pause earns no credit for a burst.
        assert!(s.may_send(at(50_000), true));
        s.on_sent(at(50_000), 1536);
        assert!(!s.may_send(at(50_500), true));
    }

    #[test]
    fn slow_start_spaces_at_twice_the_delivery_rate() {
        let mut s = Spreader::new();
        // 0.7 ms per 1024 bytes, as above: a 1536-byte segment drains in
        // 1.05 ms at the delivery rate, so the next may leave 0.525 ms
        // after it at twice that rate.
        s.on_ack(at(1200), 4096, SRTT);
        s.on_ack(at(4000), 4096, SRTT);
        s.on_sent_in_slow_start(at(4000), 1536);
        assert!(!s.may_send(at(4524), true));
        assert_eq!(s.wake_at(), Some(at(4525)));
        assert!(s.may_send(at(4525), true));
        // Back in avoidance the next waits 1 ms, at 1.05 times the rate.
        s.on_sent(at(4525), 1536);
        assert!(!s.may_send(at(5524), true));
        assert!(s.may_send(at(5525), true));
    }

    #[test]
    fn a_burst_lets_a_late_wake_up_catch_up_and_no_more() {
        let mut s = Spreader::with_burst(Duration::from_millis(2));
        s.on_ack(at(1200), 4096, SRTT);
        s.on_ack(at(4000), 4096, SRTT);
        // 1 ms between 1536-byte segments, as above.
        s.on_sent(at(4000), 1536);
        // The wake-up due at 5 ms comes at 6.3 ms: that segment is booked
        // at 5 ms and the one due at 6 ms leaves too, at once.
        assert!(s.may_send(at(6300), true));
        s.on_sent(at(6300), 1536);
        assert!(s.may_send(at(6300), true));
        s.on_sent(at(6300), 1536);
        assert!(!s.may_send(at(6300), true));
        assert_eq!(s.wake_at(), Some(at(7000)));
        // After a pause, at most the burst's worth goes back to back: the
        // release clock restarts 2 ms behind the real one, so the first
        // segment and two more (2 ms at 1 ms each) leave at once.
        let mut sent = 0;
        while s.may_send(at(50_000), true) {
            s.on_sent(at(50_000), 1536);
            sent += 1;
        }
        assert_eq!(sent, 3);
        // The burst is capped.
        let capped = Spreader::with_burst(Duration::from_secs(5));
        assert_eq!(capped.burst, MAX_BURST);
    }

    #[test]
    fn idle_intervals_do_not_lower_the_rate_within_the_window() {
        let mut s = Spreader::new();
        s.on_ack(at(0), 2048, SRTT);
        s.on_ack(at(2000), 2048, SRTT); // 1 ms per KiB
                                        // The first ACK of the next flight comes after a long pause.
        s.on_ack(at(60_000), 2048, SRTT); // 29 ms per KiB
        assert_eq!(s.gap_per_kib(), Some(1_000_000));
        // Duplicates move nothing.
        s.on_ack(at(61_000), 0, SRTT);
        assert_eq!(s.gap_per_kib(), Some(1_000_000));
    }

    #[test]
    fn old_samples_age_out_after_two_buckets() {
        let mut s = Spreader::new();
        s.on_ack(at(0), 2048, SRTT);
        s.on_ack(at(2000), 2048, SRTT); // fast: 1 ms per KiB
                                        // Next bucket (more than one SRTT later): slower samples.
        s.on_ack(at(150_000), 1024, SRTT);
        s.on_ack(at(154_000), 1024, SRTT); // 4 ms per KiB
        assert_eq!(s.gap_per_kib(), Some(1_000_000), "still in the window");
        // A third bucket: the fast sample is gone.
        s.on_ack(at(300_000), 1024, SRTT);
        s.on_ack(at(305_000), 1024, SRTT); // 5 ms per KiB
        assert_eq!(s.gap_per_kib(), Some(4_000_000));
    }

    #[test]
    fn a_passed_release_needs_no_wake_up() {
        let mut s = Spreader::new();
        // 0.7 ms per KiB: a 1536-byte segment holds the next back 1 ms.
        s.on_ack(at(300), 1024, SRTT);
        s.on_ack(at(1000), 1024, SRTT);
        s.on_sent(at(1000), 1536);
        // Nothing waiting: held back, but no wake-up is asked for.
        assert!(!s.may_send(at(1500), false));
        assert_eq!(s.wake_at(), None);
        assert!(!s.may_send(at(1500), true));
        assert_eq!(s.wake_at(), Some(at(2000)));
        s.on_timer(at(1999));
        assert_eq!(s.wake_at(), Some(at(2000)));
        s.on_timer(at(2000));
        assert_eq!(s.wake_at(), None);
    }

    #[test]
    fn extreme_values_saturate_instead_of_overflowing() {
        let mut s = Spreader::new();
        s.on_ack(at(0), 1, SRTT);
        s.on_ack(Instant::ZERO + Duration::from_secs(1_000_000), 1, SRTT);
        assert!(s.gap_per_kib().is_some());
        s.on_sent(at(0), u64::MAX);
        // The wait saturates at the longest duration; nothing panics.
        assert!(!s.may_send(at(1), true));
    }
}
