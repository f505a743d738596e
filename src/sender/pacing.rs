//! Pacing: spreading a congestion window's worth of segments over a
//! fraction of the smoothed RTT instead of sending them back to back.
//!
//! Paper 004 (smartacking) section 4.1 paces the sender so that the
//! segments of one congestion window leave evenly over 0.9 RTT rather than
//! the whole RTT, because a receiver that looks for gaps between windows
//! must still see one. ackwise implements that rule with integer
//! arithmetic: after a segment of `b` bytes leaves at `t`, the next data
//! segment may leave at
//!
//! ```text
//! t + min(b, cwnd) / cwnd * fraction * SRTT
//! ```
//!
//! The gap is recomputed from the *current* cwnd and SRTT each time it is
//! asked for, so a window that grows while the sender waits (slow start)
//! shortens the wait at once instead of at the next segment.
//!
//! Design decisions:
//!
//! * No SRTT, no pacing. The first sample may come from the handshake
//!   (RFC 6298 section 2.1, see `Sender::on_handshake_rtt`); when it does,
//!   even the initial window is paced. Before any sample the sender has no
//!   time scale to spread the window over and sends as unpaced TCP does.
//! * Idle time earns almost no credit: the reference point is the last
//!   send, so after a pause the first segment goes at once and the
//!   following ones are spaced again. The only catch-up allowed is
//!   [`PacingConfig::burst`], the lateness of the timer that wakes the
//!   sender (see below), so a pause never becomes a window-sized burst.
//! * A late wake-up is not lost time. A socket driver's timers fire on a
//!   coarse tick (tokio's is a millisecond), so at a per-segment gap below
//!   the tick a strictly paced sender would send one segment per tick,
//!   whatever its window (9.8 Mbit/s on a 100 Mbit/s path with 1200-byte
//!   segments). With a `burst` of one tick the pacing clock may run up to
//!   that far behind the real one: a wake-up that comes late releases the
//!   segments that would have left meanwhile at once, as Linux's fq and
//!   quinn's pacer release a timer slot's quantum. The emulator's virtual
//!   timers fire exactly, so its runs use no burst and are unchanged.
//! * The pacer only decides *when*; cwnd, the peer window and Nagle still
//!   decide *whether*. It never lets more data out than the window allows.

use crate::time::{Duration, Instant};

/// Pacing parameters (paper 004 section 4.1).
///
/// The window is spread over `fraction_per_mille / 1000` of the smoothed
/// RTT. Stored as an integer per-mille so that no float ever enters a time
/// computation and two runs produce identical release instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacingConfig {
    /// Fraction of SRTT over which one congestion window is released, in
    /// thousandths; valid range 1..=1000. Paper 004 section 4.1 uses 0.9
    /// RTT, i.e. 900.
    pub fraction_per_mille: u16,
    /// How far the pacing clock may fall behind the real one: segments a
    /// late wake-up owes, up to this much of the pacing rate, leave at
    /// once. Zero paces every segment exactly from the last send (right
    /// for the emulator's exact timers); a socket endpoint raises it to
    /// its timer tick (`net::PACING_TIMER_TICK`). At most
    /// [`MAX_BURST`](Self::MAX_BURST).
    pub burst: Duration,
}

impl PacingConfig {
    /// The paper 004 section 4.1 setting: one window per 0.9 SRTT, exact
    /// release instants.
    pub const PAPER_004: PacingConfig = PacingConfig {
        fraction_per_mille: 900,
        burst: Duration::ZERO,
    };

    /// Largest valid [`burst`](Self::burst): beyond a tenth of a second of
    /// catch-up, pacing no longer smooths anything a path would notice.
    pub const MAX_BURST: Duration = Duration::from_millis(100);

    /// Largest valid `fraction_per_mille` (the whole SRTT).
    pub const MAX_FRACTION_PER_MILLE: u16 = 1000;

    /// The fraction is in 1..=1000 per mille. Zero would release
    /// everything at once (no pacing at all); more than the whole RTT would
    /// make the sender slower than its own window allows.
    pub fn is_valid(&self) -> bool {
        (1..=Self::MAX_FRACTION_PER_MILLE).contains(&self.fraction_per_mille)
            && self.burst <= Self::MAX_BURST
    }

    /// This config with a burst of at least `burst` (capped at
    /// [`MAX_BURST`](Self::MAX_BURST)): what a driver whose timers fire up
    /// to `burst` late applies to the configs it is given.
    pub fn with_min_burst(self, burst: Duration) -> Self {
        PacingConfig {
            burst: self.burst.max(burst).min(Self::MAX_BURST),
            ..self
        }
    }
}

impl Default for PacingConfig {
    fn default() -> Self {
        Self::PAPER_004
    }
}

/// The release clock of a paced sender (paper 004 section 4.1).
///
/// Sans-IO like the rest of the sender: [`may_send`](Self::may_send) says
/// whether a segment may leave now, [`on_sent`](Self::on_sent) records one
/// that did, and [`wake_at`](Self::wake_at) tells the driver when a segment
/// that was held back may go. No allocation, no clock.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// Per-mille fraction of SRTT per window, clamped to 1..=1000.
    fraction_per_mille: u16,
    /// How far the pacing clock may lag the real one (clamped to
    /// `PacingConfig::MAX_BURST`).
    burst: Duration,
    /// The pacing clock: when the last data segment was due to leave (its
    /// real departure, or up to `burst` earlier when it left late), and
    /// its payload bytes.
    last: Option<(Instant, u64)>,
    /// A segment was held back; the driver needs a wake-up at the release
    /// instant. Cleared once that instant is reached, so a stale release
    /// time never becomes a timer that is always due.
    held: bool,
}

impl Pacer {
    /// A pacer for `config`. A fraction outside 1..=1000 per mille (which
    /// `Config::validate` rejects) is clamped into that range rather than
    /// trusted, so a direct user of the sender cannot make it divide by
    /// zero or stall.
    pub fn new(config: PacingConfig) -> Self {
        Pacer {
            fraction_per_mille: config
                .fraction_per_mille
                .clamp(1, PacingConfig::MAX_FRACTION_PER_MILLE),
            burst: config.burst.min(PacingConfig::MAX_BURST),
            last: None,
            held: false,
        }
    }

    /// The fraction in use, per mille.
    pub fn fraction_per_mille(&self) -> u16 {
        self.fraction_per_mille
    }

    /// The time over which one full window is released:
    /// `fraction * srtt`, rounded down to the nanosecond.
    pub fn window_time(&self, srtt: Duration) -> Duration {
        let nanos = srtt
            .as_nanos()
            .saturating_mul(u128::from(self.fraction_per_mille))
            / 1000;
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// The gap that a segment of `bytes` earns before the next one:
    /// `min(bytes, cwnd) / cwnd` of [`window_time`](Self::window_time).
    /// A segment of a whole window or more (cwnd of one segment, or a
    /// zero cwnd) waits one window time, never longer; a zero-byte
    /// segment (a bare FIN) earns no gap.
    pub fn gap(&self, bytes: u64, cwnd_bytes: u64, srtt: Duration) -> Duration {
        let window = self.window_time(srtt);
        if bytes == 0 {
            return Duration::ZERO;
        }
        if bytes >= cwnd_bytes {
            return window;
        }
        // window fits u64 nanoseconds and bytes < cwnd <= u64::MAX, so the
        // product fits u128 and the quotient is below `window`.
        let window_nanos = crate::time::duration_nanos_saturating(window);
        let nanos = u128::from(window_nanos) * u128::from(bytes) / u128::from(cwnd_bytes);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// The earliest instant the next data segment may leave, or `None` when
    /// pacing imposes no wait (nothing sent yet, or no SRTT yet).
    pub fn release_at(&self, cwnd_bytes: u64, srtt: Option<Duration>) -> Option<Instant> {
        let srtt = srtt?;
        let (sent_at, bytes) = self.last?;
        Some(sent_at + self.gap(bytes, cwnd_bytes, srtt))
    }

    /// Whether a data segment may leave at `now`. When it may not and
    /// `has_work` says a segment is actually waiting, the pacer remembers
    /// to ask for a wake-up (see [`wake_at`](Self::wake_at)).
    pub fn may_send(
        &mut self,
        now: Instant,
        cwnd_bytes: u64,
        srtt: Option<Duration>,
        has_work: bool,
    ) -> bool {
        match self.release_at(cwnd_bytes, srtt) {
            Some(t) if t > now => {
                self.held |= has_work;
                false
            }
            _ => {
                self.held = false;
                true
            }
        }
    }

    /// Records a data segment of `bytes` payload bytes leaving at `now`
    /// (also the unpaced ones, such as a fast retransmit, so that what
    /// follows them is spaced). `cwnd_bytes` and `srtt` are the ones the
    /// release was judged by.
    ///
    /// The segment is booked at its release instant when it left late by
    /// at most the burst, so the next one's gap counts from when this one
    /// was due; later than that, from `now - burst`. A segment that left
    /// before its release (unpaced) or with no burst is booked at `now`.
    pub fn on_sent(&mut self, now: Instant, bytes: u64, cwnd_bytes: u64, srtt: Option<Duration>) {
        let due = self.release_at(cwnd_bytes, srtt).unwrap_or(now);
        let earliest = now - self.burst;
        let booked = due.max(earliest).min(now);
        self.last = Some((booked, bytes));
        self.held = false;
    }

    /// When the driver must wake the sender to release a held segment;
    /// `None` when nothing is held.
    pub fn wake_at(&self, cwnd_bytes: u64, srtt: Option<Duration>) -> Option<Instant> {
        if self.held {
            self.release_at(cwnd_bytes, srtt)
        } else {
            None
        }
    }

    /// Timers ran at `now`: a release instant that has passed no longer
    /// needs a wake-up, whether or not the driver polls for a segment.
    pub fn on_timer(&mut self, now: Instant, cwnd_bytes: u64, srtt: Option<Duration>) {
        if self.release_at(cwnd_bytes, srtt).is_none_or(|t| t <= now) {
            self.held = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn at_ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn config_default_and_validity() {
        assert_eq!(PacingConfig::default().fraction_per_mille, 900);
        assert!(PacingConfig::default().is_valid());
        for (f, ok) in [
            (0, false),
            (1, true),
            (1000, true),
            (1001, false),
            (u16::MAX, false),
        ] {
            assert_eq!(
                PacingConfig {
                    fraction_per_mille: f,
                    burst: Duration::ZERO,
                }
                .is_valid(),
                ok,
                "{f}"
            );
        }
    }

    #[test]
    fn ten_segment_window_over_0_9_srtt() {
        // cwnd 10 segments, SRTT 100 ms: one window per 90 ms, so one
        // segment every 9 ms.
        let mut p = Pacer::new(PacingConfig::default());
        let srtt = Some(ms(100));
        let cwnd = 10 * MSS;
        let mut now = at_ms(0);
        let mut sent = Vec::new();
        while sent.len() < 10 {
            if p.may_send(now, cwnd, srtt, true) {
                p.on_sent(now, MSS, cwnd, srtt);
                sent.push(now);
            } else {
                let wake = p.wake_at(cwnd, srtt).unwrap();
                assert!(wake > now);
                now = wake;
            }
        }
        let expect: Vec<Instant> = (0..10).map(|i| at_ms(9 * i)).collect();
        assert_eq!(sent, expect);
        // The whole window left within 0.9 SRTT of the first segment.
        assert_eq!(sent[9] + ms(9), at_ms(90));
    }

    #[test]
    fn partial_segment_earns_a_proportional_gap() {
        let p = Pacer::new(PacingConfig {
            fraction_per_mille: 1000,
            burst: Duration::ZERO,
        });
        assert_eq!(p.gap(500, 10 * MSS, ms(100)), ms(5));
        assert_eq!(p.gap(0, 10 * MSS, ms(100)), Duration::ZERO);
    }

    #[test]
    fn no_pacing_before_an_rtt_sample() {
        let mut p = Pacer::new(PacingConfig::default());
        for _ in 0..20 {
            assert!(p.may_send(at_ms(0), 10 * MSS, None, true));
            p.on_sent(at_ms(0), MSS, 10 * MSS, None);
        }
        assert_eq!(p.wake_at(10 * MSS, None), None);
        // The first sample switches pacing on.
        assert!(!p.may_send(at_ms(0), 10 * MSS, Some(ms(100)), true));
        assert_eq!(p.wake_at(10 * MSS, Some(ms(100))), Some(at_ms(9)));
    }

    #[test]
    fn first_segment_is_never_held() {
        let mut p = Pacer::new(PacingConfig::default());
        assert!(p.may_send(at_ms(5), 10 * MSS, Some(ms(100)), true));
        assert_eq!(p.release_at(10 * MSS, Some(ms(100))), None);
    }

    #[test]
    fn wake_only_when_something_is_held_and_cleared_once_due() {
        let mut p = Pacer::new(PacingConfig::default());
        let srtt = Some(ms(100));
        p.on_sent(at_ms(0), MSS, 10 * MSS, srtt);
        // Gate closed but nothing waiting: no timer.
        assert!(!p.may_send(at_ms(1), 10 * MSS, srtt, false));
        assert_eq!(p.wake_at(10 * MSS, srtt), None);
        // Held: a timer at the release instant.
        assert!(!p.may_send(at_ms(1), 10 * MSS, srtt, true));
        assert_eq!(p.wake_at(10 * MSS, srtt), Some(at_ms(9)));
        // A timer before the release keeps it; at the release it clears.
        p.on_timer(at_ms(8), 10 * MSS, srtt);
        assert_eq!(p.wake_at(10 * MSS, srtt), Some(at_ms(9)));
        p.on_timer(at_ms(9), 10 * MSS, srtt);
        assert_eq!(p.wake_at(10 * MSS, srtt), None);
    }

    #[test]
    fn growing_window_shortens_the_wait() {
        let mut p = Pacer::new(PacingConfig::default());
        let srtt = Some(ms(100));
        p.on_sent(at_ms(0), MSS, 10 * MSS, srtt);
        assert!(!p.may_send(at_ms(1), 10 * MSS, srtt, true));
        assert_eq!(p.wake_at(10 * MSS, srtt), Some(at_ms(9)));
        // cwnd doubled by ACKs meanwhile: the held segment may go at 4.5 ms.
        assert_eq!(p.wake_at(20 * MSS, srtt), Some(Instant::from_micros(4_500)));
        assert!(p.may_send(Instant::from_micros(4_500), 20 * MSS, srtt, true));
    }

    #[test]
    fn idle_time_earns_no_burst() {
        let mut p = Pacer::new(PacingConfig::default());
        let srtt = Some(ms(100));
        p.on_sent(at_ms(0), MSS, 10 * MSS, srtt);
        // A second later the first segment goes at once, the next waits.
        assert!(p.may_send(at_ms(1000), 10 * MSS, srtt, true));
        p.on_sent(at_ms(1000), MSS, 10 * MSS, srtt);
        assert!(!p.may_send(at_ms(1000), 10 * MSS, srtt, true));
        assert_eq!(p.wake_at(10 * MSS, srtt), Some(at_ms(1009)));
    }

    /// Sends as a driver whose timer fires only on whole `tick`s would:
    /// every wake-up sends what the pacer lets out, then sleeps until the
    /// first tick at or after the release instant. Returns how many
    /// segments left within `span`.
    fn sent_with_coarse_timer(burst: Duration, tick: Duration, span: Duration) -> usize {
        let mut p = Pacer::new(PacingConfig {
            fraction_per_mille: 1000,
            burst,
        });
        let srtt = Some(ms(10));
        // 100 segments per 10 ms: one every 100 us, ten per 1 ms tick.
        let cwnd = 100 * MSS;
        let tick_ns = tick.as_nanos() as u64;
        let mut now = at_ms(0);
        let mut sent = 0;
        while now < at_ms(0) + span {
            while p.may_send(now, cwnd, srtt, true) {
                p.on_sent(now, MSS, cwnd, srtt);
                sent += 1;
            }
            let wake = p.wake_at(cwnd, srtt).unwrap().as_nanos();
            now = Instant::from_nanos(wake.div_ceil(tick_ns) * tick_ns);
        }
        sent
    }

    #[test]
    fn a_coarse_timer_keeps_the_rate_with_a_burst_of_one_tick() {
        let span = ms(100);
        // Exact pacing and an exact timer: 1000 segments in 100 ms.
        let exact = sent_with_coarse_timer(Duration::ZERO, Duration::from_nanos(1), span);
        assert_eq!(exact, 1000);
        // A 1 ms timer without burst: one segment per tick.
        let strict = sent_with_coarse_timer(Duration::ZERO, ms(1), span);
        assert_eq!(strict, 100);
        // With one tick of burst, the late wake-ups catch up.
        let caught_up = sent_with_coarse_timer(ms(1), ms(1), span);
        assert!((990..=1010).contains(&caught_up), "{caught_up}");
    }

    #[test]
    fn burst_bounds_the_catch_up_after_idle() {
        let mut p = Pacer::new(PacingConfig {
            fraction_per_mille: 1000,
            burst: ms(2),
        });
        let srtt = Some(ms(100));
        let cwnd = 10 * MSS; // one segment per 10 ms
        p.on_sent(at_ms(0), MSS, cwnd, srtt);
        // A second of silence earns at most 2 ms of sending: the first
        // segment at once (booked 2 ms back), the next 8 ms later.
        let now = at_ms(1000);
        assert!(p.may_send(now, cwnd, srtt, true));
        p.on_sent(now, MSS, cwnd, srtt);
        assert!(!p.may_send(now, cwnd, srtt, true));
        assert_eq!(p.wake_at(cwnd, srtt), Some(at_ms(1008)));
        // An unpaced segment sent before its release is booked at its own
        // departure, never in the future.
        p.on_sent(at_ms(1001), MSS, cwnd, srtt);
        assert_eq!(p.release_at(cwnd, srtt), Some(at_ms(1011)));
    }

    #[test]
    fn min_burst_raises_but_never_lowers_and_is_capped() {
        let c = PacingConfig::default();
        assert_eq!(c.with_min_burst(ms(1)).burst, ms(1));
        let c = PacingConfig { burst: ms(5), ..c };
        assert_eq!(c.with_min_burst(ms(1)).burst, ms(5));
        assert_eq!(c.with_min_burst(ms(500)).burst, PacingConfig::MAX_BURST);
        assert!(!PacingConfig {
            burst: ms(101),
            ..c
        }
        .is_valid());
    }

    #[test]
    fn large_window_and_tiny_srtt_do_not_pace() {
        let mut p = Pacer::new(PacingConfig::default());
        p.on_sent(at_ms(0), MSS, 10 * MSS, Some(ms(100)));
        // A huge window: the per-segment gap rounds to zero.
        assert_eq!(p.gap(MSS, u64::MAX, ms(100)), Duration::ZERO);
        assert!(p.may_send(at_ms(0), u64::MAX, Some(ms(100)), true));
        // SRTT of one nanosecond.
        assert_eq!(
            p.gap(MSS, 10 * MSS, Duration::from_nanos(1)),
            Duration::ZERO
        );
        assert!(p.may_send(at_ms(0), 10 * MSS, Some(Duration::from_nanos(1)), true));
        assert!(p.may_send(at_ms(0), 10 * MSS, Some(Duration::ZERO), true));
    }

    #[test]
    fn zero_and_overflow_safety() {
        let p = Pacer::new(PacingConfig::default());
        // Zero window: one window time, no division by zero.
        assert_eq!(p.gap(MSS, 0, ms(100)), ms(90));
        // A segment larger than the window waits one window time.
        assert_eq!(p.gap(5 * MSS, MSS, ms(100)), ms(90));
        // Extreme SRTT and sizes saturate instead of overflowing.
        assert_eq!(
            p.gap(u64::MAX, u64::MAX, Duration::MAX).as_nanos(),
            u128::from(u64::MAX)
        );
        assert!(p.gap(u64::MAX - 1, u64::MAX, Duration::MAX) <= Duration::from_nanos(u64::MAX));
        let mut q = Pacer::new(PacingConfig::default());
        q.on_sent(Instant::from_nanos(u64::MAX - 1), u64::MAX, 1, None);
        // The release instant saturates at the far future.
        assert_eq!(
            q.release_at(1, Some(Duration::MAX)),
            Some(Instant::from_nanos(u64::MAX))
        );
        // Out-of-range fractions are clamped, not trusted.
        assert_eq!(
            Pacer::new(PacingConfig {
                fraction_per_mille: 0,
                burst: Duration::ZERO,
            })
            .fraction_per_mille(),
            1
        );
        assert_eq!(
            Pacer::new(PacingConfig {
                fraction_per_mille: 5000,
                burst: Duration::ZERO,
            })
            .fraction_per_mille(),
            1000
        );
    }
}
