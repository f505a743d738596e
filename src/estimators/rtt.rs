//! Round-trip time and retransmission timeout (RFC 6298).
//!
//! All arithmetic is on integer nanoseconds (`Duration`), never floats, so
//! two runs of the emulator with the same inputs produce identical timers.

use crate::time::Duration;

/// Smoothed RTT, RTT variation and the retransmission timeout with
/// exponential backoff (RFC 6298 sections 2 and 5).
///
/// The estimator only does arithmetic. Choosing which samples are valid
/// (Karn's algorithm, RFC 6298 section 3) and when to call
/// [`reset_backoff`](Self::reset_backoff) is the sender's job.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    min_rto: Duration,
    /// Lower bound of the `4 * RTTVAR` term (at least G).
    variance_floor: Duration,
    max_rto: Duration,
    /// RTO computed from the estimates (or the initial RTO), already clamped,
    /// without backoff.
    base_rto: Duration,
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Option<Duration>,
    min_rtt: Option<Duration>,
    /// Consecutive timeouts since the last `reset_backoff`.
    backoff: u32,
}

impl RttEstimator {
    /// Clock granularity G of RFC 6298 section 2: the variance term of the
    /// RTO is never allowed to be smaller than this.
    pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

    /// An estimator with no samples yet.
    ///
    /// RFC 6298 recommends `initial_rto` = 1 s (section 2.1),
    /// `min_rto` = 1 s (section 2.4; ackwise lets the emulator configure a
    /// lower floor) and `max_rto` of at least 60 s (section 2.5).
    /// Inconsistent limits are repaired rather than rejected: `max_rto` is
    /// raised to `min_rto` if needed and `initial_rto` is clamped into
    /// `[min_rto, max_rto]`.
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        let max_rto = max_rto.max(min_rto);
        RttEstimator {
            min_rto,
            variance_floor: Self::CLOCK_GRANULARITY,
            max_rto,
            base_rto: initial_rto.clamp(min_rto, max_rto),
            srtt: None,
            rttvar: Duration::ZERO,
            latest: None,
            min_rtt: None,
            backoff: 0,
        }
    }

    /// The RFC 6298 defaults: initial 1 s, minimum 1 s, maximum 60 s.
    pub fn rfc6298() -> Self {
        Self::new(
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::from_secs(60),
        )
    }

    /// The same estimator with the `4 * RTTVAR` term never below `floor`
    /// (and never below G). RFC 6298 floors it at G only; with a small
    /// `min_rto` and a path whose RTT hardly varies, RTTVAR decays towards
    /// zero and the RTO hugs SRTT, so the first RTT that grows by a queue's
    /// worth (a fast retransmit waiting behind a full buffer) times out
    /// spuriously. Linux avoids this by flooring the variance term at its
    /// minimum RTO (200 ms); a floor equal to `min_rto` models that.
    pub fn with_variance_floor(mut self, floor: Duration) -> Self {
        self.variance_floor = floor.max(Self::CLOCK_GRANULARITY);
        self
    }

    /// Feeds one RTT measurement R (RFC 6298 sections 2.2 and 2.3).
    ///
    /// First sample: SRTT = R, RTTVAR = R/2. Later samples update RTTVAR
    /// with the *old* SRTT before SRTT itself, as the RFC requires
    /// (alpha = 1/8, beta = 1/4). Then RTO = SRTT + max(G, floor, 4 * RTTVAR)
    /// (the floor is G unless [`with_variance_floor`](Self::with_variance_floor) raised it),
    /// clamped to `[min_rto, max_rto]` (sections 2.4 and 2.5).
    /// The backoff is not touched; see [`reset_backoff`](Self::reset_backoff).
    pub fn on_sample(&mut self, rtt: Duration) {
        self.latest = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let r = nanos(rtt);
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let s = nanos(srtt);
                let var = nanos(self.rttvar);
                // Computed in u128 nanoseconds so the weighted sums cannot
                // overflow and no precision is lost to a premature divide.
                let new_var = (3 * var + s.abs_diff(r)) / 4;
                let new_srtt = (7 * s + r) / 8;
                self.rttvar = from_nanos(new_var);
                self.srtt = Some(from_nanos(new_srtt));
            }
        }
        let srtt = self.srtt.unwrap_or(rtt);
        let var_term = self
            .rttvar
            .checked_mul(4)
            .unwrap_or(Duration::MAX)
            .max(self.variance_floor);
        self.base_rto = srtt
            .saturating_add(var_term)
            .clamp(self.min_rto, self.max_rto);
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// The smallest sample seen so far (never expires).
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// SRTT, `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTTVAR, `None` before the first sample.
    pub fn rttvar(&self) -> Option<Duration> {
        self.srtt.map(|_| self.rttvar)
    }

    /// The RTO to arm the retransmission timer with: the estimate-based RTO
    /// (or the initial RTO before any sample) times 2^backoff, never more
    /// than `max_rto` (RFC 6298 sections 5.5 and 2.5).
    pub fn rto(&self) -> Duration {
        // 2^32 or more would overflow the u32 multiplier; by then the
        // result is pinned at the maximum anyway.
        let factor = 1u32.checked_shl(self.backoff).unwrap_or(0);
        if factor == 0 {
            return self.max_rto;
        }
        self.base_rto
            .checked_mul(factor)
            .map_or(self.max_rto, |d| d.min(self.max_rto))
    }

    /// The retransmission timer expired: back off the timer
    /// (RFC 6298 section 5.5, RTO <- RTO * 2). The doubling saturates at
    /// `max_rto`; the count keeps increasing so the sender can give up after
    /// a number of consecutive timeouts (RFC 1122 section 4.2.3.5, R2).
    pub fn on_timeout(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Collapses the backoff to 1. RFC 6298 section 5.7 notes that the
    /// backed-off RTO is kept until an ACK for new data yields a valid RTT
    /// sample (Karn's algorithm); the sender calls this at that point.
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Consecutive timeouts since the last
    /// [`reset_backoff`](Self::reset_backoff).
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }

    /// The configured lower bound of the RTO (RFC 6298 section 2.4).
    pub fn min_rto(&self) -> Duration {
        self.min_rto
    }

    /// The configured upper bound of the RTO (RFC 6298 section 2.5).
    pub fn max_rto(&self) -> Duration {
        self.max_rto
    }
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    // Anything past u64 nanoseconds (584 years) is clamped; it only arises
    // from absurd samples and the RTO clamp hides it anyway.
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Min 1 ms so hand-computed values are not hidden by the clamp.
    fn low_floor() -> RttEstimator {
        RttEstimator::new(Duration::from_secs(1), ms(1), Duration::from_secs(60))
    }

    #[test]
    fn before_any_sample() {
        let e = RttEstimator::rfc6298();
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.rttvar(), None);
        assert_eq!(e.latest(), None);
        assert_eq!(e.min_rtt(), None);
        assert_eq!(e.backoff_count(), 0);
    }

    #[test]
    fn hand_computed_sequence() {
        let mut e = low_floor();
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), Some(ms(50)));
        assert_eq!(e.rto(), ms(300)); // 100 + 4*50
        e.on_sample(ms(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), Some(us(62_500)));
        assert_eq!(e.srtt(), Some(us(112_500)));
        assert_eq!(e.rto(), us(112_500 + 250_000));
        e.on_sample(ms(40));
        // RTTVAR = 3/4*62.5 + 1/4*72.5 = 65; SRTT = 7/8*112.5 + 1/8*40 = 103.4375
        assert_eq!(e.rttvar(), Some(ms(65)));
        assert_eq!(e.srtt(), Some(Duration::from_nanos(103_437_500)));
        assert_eq!(e.rto(), Duration::from_nanos(103_437_500 + 260_000_000));
        assert_eq!(e.latest(), Some(ms(40)));
        assert_eq!(e.min_rtt(), Some(ms(40)));
    }

    #[test]
    fn granularity_bounds_the_variance_term() {
        let mut e = RttEstimator::new(ms(1), Duration::ZERO, Duration::from_secs(60));
        // Identical samples drive RTTVAR toward zero; RTO stays >= SRTT + G.
        for _ in 0..64 {
            e.on_sample(us(200));
        }
        assert_eq!(e.srtt(), Some(us(200)));
        assert!(e.rttvar().unwrap() < us(1));
        assert_eq!(e.rto(), us(200) + RttEstimator::CLOCK_GRANULARITY);
        // A zero sample is legal and must not break anything.
        let mut z = RttEstimator::new(ms(1), Duration::ZERO, Duration::from_secs(60));
        z.on_sample(Duration::ZERO);
        assert_eq!(z.rto(), RttEstimator::CLOCK_GRANULARITY);
    }

    #[test]
    fn variance_floor_keeps_the_rto_above_srtt_plus_floor() {
        // A steady 150 ms path with a 200 ms minimum: RFC 6298 alone lets
        // the RTO shrink to the minimum, barely above SRTT.
        let mut plain = RttEstimator::new(ms(1000), ms(200), Duration::from_secs(60));
        let mut floored = RttEstimator::new(ms(1000), ms(200), Duration::from_secs(60))
            .with_variance_floor(ms(200));
        for _ in 0..64 {
            plain.on_sample(ms(150));
            floored.on_sample(ms(150));
        }
        assert_eq!(plain.rto(), ms(200));
        assert_eq!(floored.rto(), ms(350));
        // A large variance still wins over the floor.
        floored.on_sample(ms(950));
        assert!(floored.rto() > ms(150 + 4 * 150), "{:?}", floored.rto());
        // The floor never goes below G.
        let mut g = RttEstimator::new(ms(1), Duration::ZERO, Duration::from_secs(60))
            .with_variance_floor(Duration::ZERO);
        g.on_sample(Duration::ZERO);
        assert_eq!(g.rto(), RttEstimator::CLOCK_GRANULARITY);
    }

    #[test]
    fn min_and_max_clamp() {
        let mut e = RttEstimator::rfc6298();
        e.on_sample(ms(10));
        assert_eq!(e.rto(), Duration::from_secs(1), "RFC 6298 2.4 floor");
        let mut e = RttEstimator::new(ms(200), ms(200), Duration::from_secs(2));
        e.on_sample(Duration::from_secs(5));
        assert_eq!(e.rto(), Duration::from_secs(2), "RFC 6298 2.5 ceiling");
    }

    #[test]
    fn inconsistent_limits_are_repaired() {
        let e = RttEstimator::new(ms(10), ms(500), ms(100));
        assert_eq!(e.max_rto(), ms(500));
        assert_eq!(e.rto(), ms(500));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let mut e = RttEstimator::new(ms(300), ms(100), Duration::from_secs(3));
        e.on_timeout();
        assert_eq!(e.rto(), ms(600));
        e.on_timeout();
        assert_eq!(e.rto(), ms(1200));
        e.on_timeout();
        assert_eq!(e.rto(), ms(2400));
        e.on_timeout();
        assert_eq!(e.rto(), Duration::from_secs(3));
        for _ in 0..100 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), Duration::from_secs(3));
        assert_eq!(e.backoff_count(), 104);
        // A sample alone keeps the backoff (Karn); the reset removes it.
        e.on_sample(ms(100));
        assert_eq!(e.rto(), Duration::from_secs(3));
        e.reset_backoff();
        assert_eq!(e.backoff_count(), 0);
        assert_eq!(e.rto(), ms(300)); // 100 + 4*50
    }

    #[test]
    fn huge_samples_do_not_overflow() {
        let mut e = RttEstimator::new(ms(1), ms(1), Duration::MAX);
        e.on_sample(Duration::MAX);
        e.on_sample(Duration::ZERO);
        e.on_timeout();
        let _ = e.rto();
    }
}
