//! CUBIC (RFC 9438): congestion avoidance that grows the window as a cubic
//! function of the time since the last reduction.
//!
//! Reno's avoidance adds one segment per round trip, so after a loss on a
//! path of thousands of segments a flow takes thousands of round trips to
//! fill it again. CUBIC's window is a function of elapsed time: it returns
//! to the window of the last loss within K seconds whatever the path's
//! size (from a window of a few segments the curve is slow too: K grows
//! with the cube root of the gap), and it grows with bytes acknowledged
//! rather than with ACKs, so four ACKs per window grow it as fast as one
//! per segment. It is also what Linux's senders run, so an ackwise sender
//! with it shares a path with them on equal terms.
//!
//! Only congestion avoidance and the decrease factor are CUBIC's. Slow
//! start (with ackwise's byte counting), the floors, the timeout rules and
//! their undo are [`Reno`]'s, which [`Cubic`] wraps with
//! [`Decrease::SevenTenths`] (beta_cubic = 0.7 after the initial slow
//! start, whose end halves: see there). Arithmetic is in integers (bytes,
//! microseconds) so that runs are identical on every platform.

use super::{fraction_of, CongestionControl, Decrease, Reno, RenoConfig};
use crate::sender::PriorWindow;
use crate::time::{Duration, Instant};

/// RFC 9438 section 5's C = 0.4 segments per second cubed, as a fraction.
const C_NUM: u128 = 4;
const C_DEN: u128 = 10;

/// Microseconds cubed per second cubed.
const US3_PER_S3: u128 = 1_000_000_000_000_000_000;

/// Time past K beyond which the curve is not followed further (1000 s):
/// keeps the cube inside `i128` whatever the epoch's length; the window
/// is clamped to 1.5x per update long before.
const MAX_CURVE_US: i128 = 1_000_000_000;

/// CUBIC congestion control (RFC 9438) over Reno's slow start and loss
/// rules.
///
/// ```
/// use ackwise::sender::congestion::{CongestionControl, Cubic, RenoConfig};
/// use ackwise::time::Instant;
///
/// let mss = 1000;
/// let mut cc = Cubic::new(RenoConfig { initial_window: 100 * mss, initial_ssthresh: 100 * mss, ..RenoConfig::new(mss) });
/// cc.on_congestion_event(Instant::ZERO, 100 * mss);
/// // beta_cubic = 0.7
/// assert_eq!(cc.window(), 70 * mss);
/// ```
#[derive(Debug, Clone)]
pub struct Cubic {
    reno: Reno,
    /// W_max, bytes: the window in use before the last reduction, after
    /// fast convergence (RFC 9438 section 4.7). Zero when no reduction
    /// applies (before the first, after a timeout, after a delay-based
    /// exit from slow start): the next epoch then starts from its own
    /// window with K = 0 (section 4.8).
    w_max: u64,
    /// W_max when the last timeout cleared it, for its undo.
    w_max_before_timeout: u64,
    /// The current congestion-avoidance stage, from its first ACK.
    epoch: Option<Epoch>,
    /// The path's smallest RTT: the curve is read one RTT ahead
    /// (section 4.2's W_cubic(t + RTT)).
    min_rtt: Option<Duration>,
    /// When congestion avoidance last counted an ACK.
    last_ack: Option<Instant>,
}

/// One congestion-avoidance stage (RFC 9438 section 4.2's t_epoch).
#[derive(Debug, Clone, Copy)]
struct Epoch {
    start: Instant,
    /// K, microseconds: when the curve reaches `origin` (equation 2).
    k_us: u64,
    /// The curve's plateau, bytes: W_max, or the window at the epoch's
    /// start when that is larger.
    origin: u64,
    /// Reno-friendly estimate W_est, bytes (section 4.3).
    w_est: u64,
    /// Remainders of the two per-ACK increases, in the units of their
    /// numerators, so that many small ACKs add up as one large one.
    cubic_credit: u128,
    est_credit: u128,
}

impl Cubic {
    /// A controller with `config`; its `decrease` is replaced by
    /// [`Decrease::SevenTenths`] and its `ack_counting_avoidance` has no
    /// effect (avoidance is CUBIC's, counted in bytes).
    pub fn new(config: RenoConfig) -> Self {
        Cubic {
            reno: Reno::new(RenoConfig {
                decrease: Decrease::SevenTenths,
                ..config
            }),
            w_max: 0,
            w_max_before_timeout: 0,
            epoch: None,
            min_rtt: None,
            last_ack: None,
        }
    }

    /// W_max in bytes (0 when no reduction applies).
    pub fn w_max(&self) -> u64 {
        self.w_max
    }

    fn mss(&self) -> u128 {
        u128::from(self.reno.mss().max(1))
    }

    fn start_epoch(&self, now: Instant, cwnd: u64) -> Epoch {
        let (origin, k_us) = if self.w_max > cwnd {
            // Equation 2: K = cbrt((W_max - cwnd_epoch) / C), in seconds;
            // bytes over (C x SMSS) give segments over C.
            let gap = u128::from(self.w_max - cwnd);
            let k3 = gap * C_DEN * US3_PER_S3 / (C_NUM * self.mss());
            (self.w_max, cube_root(k3))
        } else {
            (cwnd, 0)
        };
        Epoch {
            start: now,
            k_us,
            origin,
            w_est: cwnd,
            cubic_credit: 0,
            est_credit: 0,
        }
    }

    /// Equation 1, W_cubic(t) = C (t - K)^3 + W_max, in bytes, `t_us`
    /// microseconds into the epoch.
    fn w_cubic(&self, epoch: &Epoch, t_us: u64) -> u64 {
        let d = (i128::from(t_us) - i128::from(epoch.k_us)).clamp(-MAX_CURVE_US, MAX_CURVE_US);
        let delta = C_NUM as i128 * self.mss() as i128 * d * d * d / (C_DEN * US3_PER_S3) as i128;
        let w = i128::from(epoch.origin) + delta;
        u64::try_from(w.max(0)).unwrap_or(u64::MAX)
    }

    /// Congestion avoidance for `acked` new bytes (sections 4.3 to 4.5).
    fn avoid(&mut self, now: Instant, acked: u64) {
        let cwnd = self.reno.window().max(1);
        let mss = self.mss();
        let mut epoch = match self.epoch {
            Some(mut e) => {
                // Section 4.2: time in which the window was not in use
                // must not count toward the curve, or an application that
                // paused would find cwnd far up it. ACKs more than two
                // minimum RTTs apart mean a round trip went by with
                // nothing delivered: the epoch moves on by the silence
                // beyond one RTT (Linux shifts it by the idle time when
                // sending resumes).
                if let (Some(last), Some(rtt)) = (self.last_ack, self.min_rtt) {
                    let gap = now.saturating_duration_since(last);
                    if gap > rtt * 2 {
                        e.start += gap - rtt;
                    }
                }
                e
            }
            None => self.start_epoch(now, cwnd),
        };
        self.last_ack = Some(now);
        // W_est grows as Reno with alpha_cubic = 3 (1 - beta) / (1 + beta)
        // = 9/17 segments per window, and as Reno itself (1) once it has
        // reached the last loss's window.
        let (a_num, a_den) = if epoch.w_est >= epoch.origin {
            (1, 1)
        } else {
            (9, 17)
        };
        epoch.est_credit += u128::from(acked) * mss * a_num;
        let per = u128::from(cwnd) * a_den;
        let grown = epoch.est_credit / per;
        epoch.est_credit %= per;
        epoch.w_est = epoch
            .w_est
            .saturating_add(u64::try_from(grown).unwrap_or(u64::MAX));

        let ahead = self.min_rtt.unwrap_or(Duration::ZERO);
        let t = now.saturating_duration_since(epoch.start) + ahead;
        let t_us = u64::try_from(t.as_micros()).unwrap_or(u64::MAX);
        let w_t = self.w_cubic(&epoch, t_us);
        let new = if w_t < epoch.w_est {
            // The Reno-friendly region (section 4.3).
            epoch.w_est.max(cwnd)
        } else {
            // Concave and convex regions (sections 4.4, 4.5): a target at
            // most 1.5 cwnd, approached by (target - cwnd) / cwnd per
            // segment acknowledged.
            let target = w_t.clamp(cwnd, cwnd.saturating_add(cwnd / 2));
            epoch.cubic_credit += u128::from(target - cwnd) * u128::from(acked);
            let grown = epoch.cubic_credit / u128::from(cwnd);
            epoch.cubic_credit %= u128::from(cwnd);
            cwnd.saturating_add(u64::try_from(grown).unwrap_or(u64::MAX))
        };
        self.epoch = Some(epoch);
        if new != cwnd {
            self.reno.set_avoidance_window(new, "cubic");
        }
    }
}

/// Integer cube root: the largest `r` with `r^3 <= x`.
fn cube_root(x: u128) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 43);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let m = u128::from(mid);
        match m.checked_mul(m).and_then(|s| s.checked_mul(m)) {
            Some(c) if c <= x => lo = mid,
            _ => hi = mid - 1,
        }
    }
    lo
}

impl CongestionControl for Cubic {
    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }

    fn in_slow_start(&self) -> bool {
        self.reno.in_slow_start()
    }

    fn on_ack(&mut self, now: Instant, acked_bytes: u64) {
        if acked_bytes == 0 {
            return;
        }
        if self.reno.in_slow_start() {
            self.reno.on_ack(now, acked_bytes);
        } else {
            self.reno.note_progress();
            self.avoid(now, acked_bytes);
        }
    }

    fn on_congestion_event(&mut self, now: Instant, flight_size: u64) {
        // Fast convergence (section 4.7): a window below the last W_max
        // says the share is shrinking, so give some of it up.
        self.w_max = if flight_size < self.w_max {
            fraction_of(flight_size, 17, 20)
        } else {
            flight_size
        };
        self.epoch = None;
        self.reno.on_congestion_event(now, flight_size);
    }

    fn on_recovery_exit(&mut self, now: Instant) {
        self.epoch = None;
        self.reno.on_recovery_exit(now);
    }

    fn on_retransmission_timeout(&mut self, now: Instant, flight_size: Option<u64>) {
        // Section 4.8: the first avoidance stage after a timeout starts
        // from its own window with K = 0.
        if self.w_max > 0 {
            self.w_max_before_timeout = self.w_max;
        }
        self.w_max = 0;
        self.epoch = None;
        self.reno.on_retransmission_timeout(now, flight_size);
    }

    fn on_spurious_timeout(&mut self, now: Instant, prior: PriorWindow) {
        self.w_max = self.w_max_before_timeout;
        self.epoch = None;
        self.reno.on_spurious_timeout(now, prior);
    }

    fn end_slow_start(&mut self, now: Instant) {
        self.epoch = None;
        self.reno.end_slow_start(now);
    }

    fn set_byte_counting_limit(&mut self, segments: u32) {
        self.reno.set_byte_counting_limit(segments);
    }

    fn set_mss(&mut self, mss: u64) {
        self.reno.set_mss(mss);
    }

    fn byte_counting_limit(&self) -> u32 {
        self.reno.byte_counting_limit()
    }

    fn on_rtt_sample(&mut self, _now: Instant, min_rtt: Duration) {
        self.min_rtt = Some(min_rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const RTT: Duration = Duration::from_millis(100);

    /// A controller in congestion avoidance at `segments`, on a path of
    /// minimum RTT `rtt`.
    fn cubic_on(segments: u64, rtt: Duration) -> Cubic {
        let mut c = Cubic::new(RenoConfig {
            initial_window: segments * MSS,
            initial_ssthresh: segments * MSS,
            ..RenoConfig::new(MSS)
        });
        c.on_rtt_sample(Instant::ZERO, rtt);
        c
    }

    fn cubic(segments: u64) -> Cubic {
        cubic_on(segments, RTT)
    }

    /// Feeds one window of ACKs per RTT, `acks` ACKs per window, for
    /// `rounds` RTTs from `start`; returns the time after the last round.
    fn rounds(c: &mut Cubic, start: Instant, rounds: u32, acks: u64) -> Instant {
        let mut now = start;
        for _ in 0..rounds {
            let window = c.window();
            for i in 0..acks {
                let share = window / acks + u64::from(i < window % acks);
                c.on_ack(now, share);
            }
            now += RTT;
        }
        now
    }

    #[test]
    fn cube_root_is_exact_on_cubes_and_floors_between() {
        assert_eq!(cube_root(0), 0);
        assert_eq!(cube_root(26), 2);
        assert_eq!(cube_root(27), 3);
        let r = 4_217_163u64;
        let c = u128::from(r).pow(3);
        assert_eq!(cube_root(c), r);
        assert_eq!(cube_root(c - 1), r - 1);
        assert_eq!(cube_root(u128::MAX), 6_981_463_658_331);
    }

    #[test]
    fn a_loss_keeps_seven_tenths_and_remembers_the_window() {
        let mut c = cubic(100);
        c.on_congestion_event(Instant::ZERO, 100 * MSS);
        assert_eq!(c.window(), 70 * MSS);
        assert_eq!(c.ssthresh(), 70 * MSS);
        assert_eq!(c.w_max(), 100 * MSS);
        // Fast convergence: the next loss comes below W_max.
        c.on_congestion_event(Instant::ZERO, 80 * MSS);
        assert_eq!(c.w_max(), 68 * MSS);
        assert_eq!(c.window(), 56 * MSS);
    }

    #[test]
    fn the_loss_that_ends_the_initial_slow_start_halves() {
        let mut c = Cubic::new(RenoConfig::new(MSS));
        while c.window() < 100 * MSS {
            c.on_ack(Instant::ZERO, 2 * MSS);
        }
        assert!(c.in_slow_start());
        c.on_congestion_event(Instant::ZERO, 100 * MSS);
        assert_eq!(c.window(), 50 * MSS);
        assert_eq!(c.w_max(), 100 * MSS);
        // Later losses keep 7/10, timeouts too.
        c.on_congestion_event(Instant::ZERO, 50 * MSS);
        assert_eq!(c.window(), 35 * MSS);
        c.on_retransmission_timeout(Instant::ZERO, Some(40 * MSS));
        assert_eq!(c.ssthresh(), 28 * MSS);
        // A timeout in the initial slow start halves as well.
        let mut t = Cubic::new(RenoConfig::new(MSS));
        t.on_retransmission_timeout(Instant::ZERO, Some(10 * MSS));
        assert_eq!(t.ssthresh(), 5 * MSS);
    }

    #[test]
    fn the_window_returns_to_w_max_after_k_seconds_and_probes_beyond() {
        // From W_max = 1000 segments: K = cbrt(300 / 0.4) = 9.09 s.
        let mut c = cubic(1000);
        c.on_congestion_event(Instant::ZERO, 1000 * MSS);
        assert_eq!(c.window(), 700 * MSS);
        let at = |c: &Cubic| c.window() / MSS;
        let mut now = rounds(&mut c, Instant::ZERO, 30, 4);
        let w3 = at(&c);
        now = rounds(&mut c, now, 30, 4);
        let w6 = at(&c);
        now = rounds(&mut c, now, 30, 4);
        let w9 = at(&c);
        // Concave: most of the gap closes in the first third of K.
        assert!(w3 > 850 && w3 < 1000, "3 s: {w3}");
        assert!(w6 - w3 < w3 - 700, "slows toward W_max: {w3} -> {w6}");
        assert!((985..=1015).contains(&w9), "at K: {w9}");
        rounds(&mut c, now, 60, 4);
        let w15 = at(&c);
        // Convex past K: 0.4 x 6^3 = 86 segments over W_max at 15 s.
        assert!((1050..=1130).contains(&w15), "15 s: {w15}");
        // Reno in the same 15 s (150 RTTs) would have grown 150 segments
        // from 500.
    }

    #[test]
    fn growth_follows_bytes_not_acks() {
        let mut per_segment = cubic(200);
        let mut per_window = cubic(200);
        for c in [&mut per_segment, &mut per_window] {
            c.on_congestion_event(Instant::ZERO, 200 * MSS);
        }
        rounds(&mut per_segment, Instant::ZERO, 40, 140);
        rounds(&mut per_window, Instant::ZERO, 40, 4);
        let (a, b) = (per_segment.window(), per_window.window());
        assert!(a > 140 * MSS && b > 140 * MSS);
        assert!(a.abs_diff(b) <= 2 * MSS, "{a} vs {b}");
    }

    #[test]
    fn short_round_trips_grow_at_least_as_reno_friendly_estimate() {
        // 1 ms RTT: the curve barely moves in 100 rounds (0.1 s, K is
        // 3.1 s), while W_est grows 9/17 segment per window up to W_max =
        // 40 (23 rounds) and one per window after.
        let mut c = cubic_on(40, Duration::from_millis(1));
        c.on_congestion_event(Instant::ZERO, 40 * MSS);
        assert_eq!(c.window(), 28 * MSS);
        let mut now = Instant::ZERO;
        for _ in 0..100 {
            let w = c.window();
            c.on_ack(now, w);
            now += Duration::from_millis(1);
        }
        let w = c.window() / MSS;
        // 40 + 77 = 117.
        assert!((112..=118).contains(&w), "{w}");
    }

    #[test]
    fn a_pause_does_not_count_toward_the_curve() {
        let mut steady = cubic(1000);
        let mut paused = cubic(1000);
        for c in [&mut steady, &mut paused] {
            c.on_congestion_event(Instant::ZERO, 1000 * MSS);
        }
        let now = rounds(&mut steady, Instant::ZERO, 30, 4);
        rounds(&mut paused, Instant::ZERO, 30, 4);
        assert_eq!(steady.window(), paused.window());
        // Ten seconds of silence, then the same round for both: without
        // the shift the paused flow would jump toward the curve's value
        // at 13 s, past W_max.
        rounds(&mut steady, now, 1, 4);
        rounds(&mut paused, now + Duration::from_secs(10), 1, 4);
        assert!(
            paused.window() <= steady.window() + MSS,
            "{} vs {}",
            paused.window(),
            steady.window()
        );
        // A new stage starts at its own first ACK, however long before
        // the previous stage's last one came (a recovery between them).
        let loss = Instant::ZERO + Duration::from_secs(5);
        let mut fresh = cubic(1000);
        let mut after_ack = cubic(1000);
        after_ack.on_ack(Instant::ZERO, MSS);
        for c in [&mut fresh, &mut after_ack] {
            c.on_congestion_event(loss, 1000 * MSS);
            rounds(c, loss, 30, 4);
        }
        assert_eq!(fresh.window(), after_ack.window());
    }

    #[test]
    fn after_a_timeout_the_next_stage_grows_from_its_own_window() {
        let mut c = cubic(100);
        c.on_retransmission_timeout(Instant::ZERO, Some(100 * MSS));
        assert_eq!(c.window(), MSS);
        assert_eq!(c.ssthresh(), 70 * MSS);
        assert_eq!(c.w_max(), 0);
        // Slow start (one segment per ACK after a timeout) back to
        // ssthresh, then K = 0: growth from 70 at once.
        let now = rounds(&mut c, Instant::ZERO, 12, 8);
        assert!(!c.in_slow_start());
        let start = c.window();
        rounds(&mut c, now, 20, 4);
        assert!(c.window() > start, "{} after {start}", c.window());
        // A spurious timeout gives W_max back.
        let mut u = cubic(100);
        u.on_congestion_event(Instant::ZERO, 100 * MSS);
        let prior = PriorWindow {
            cwnd: u.window(),
            ssthresh: u.ssthresh(),
        };
        u.on_retransmission_timeout(Instant::ZERO, Some(70 * MSS));
        u.on_spurious_timeout(Instant::ZERO, prior);
        assert_eq!(u.w_max(), 100 * MSS);
        assert_eq!(u.window(), 70 * MSS);
    }
}
