//! Time-sliding-window rate estimator (paper 000 sec. 3.1, after Clark
//! and Fang's TSW): the rate of ACKs leaving a reverse buffer, whose decay
//! depends on the rate itself, so a slow flow's estimate converges quickly.

use crate::time::{Duration, Instant};

/// Average rate of departures over a sliding time window.
///
/// On each departure of `size` bytes at `now`:
/// `rate = (rate * window + size) / (now - last + window)`, `last = now`.
/// The window sets how much of the past counts; paper 000 takes it of the
/// order of the RTT. Between departures the estimate is read with
/// [`rate_at`](Self::rate_at), which applies the same formula with no
/// bytes, so an idle output decays instead of keeping its last rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TswRate {
    window: Duration,
    bytes_per_sec: f64,
    last: Option<Instant>,
}

impl TswRate {
    /// An estimator with `window` (a zero window is raised to 1 ns, which
    /// makes the estimate the last inter-departure rate).
    pub fn new(window: Duration) -> Self {
        TswRate {
            window: window.max(Duration::from_nanos(1)),
            bytes_per_sec: 0.0,
            last: None,
        }
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// A departure of `size_bytes` at `now`. A time before the previous
    /// departure counts as the same instant.
    pub fn on_departure(&mut self, now: Instant, size_bytes: u64) {
        let window_s = self.window.as_secs_f64();
        let since = self
            .last
            .map_or(Duration::ZERO, |last| now.saturating_duration_since(last));
        let volume = self.bytes_per_sec * window_s + size_bytes as f64;
        self.bytes_per_sec = volume / (since.as_secs_f64() + window_s);
        self.last = Some(self.last.map_or(now, |last| last.max(now)));
    }

    /// The rate as of `now`, bytes per second, decayed over the time since
    /// the last departure.
    pub fn rate_at(&self, now: Instant) -> f64 {
        let Some(last) = self.last else {
            return 0.0;
        };
        let window_s = self.window.as_secs_f64();
        let since = now.saturating_duration_since(last).as_secs_f64();
        self.bytes_per_sec * window_s / (since + window_s)
    }

    /// The rate as of `now` over a channel of `capacity_bps` bits per
    /// second: the utilization paper 000's delayed filtering compares with
    /// 90%. Zero for a zero capacity.
    pub fn utilization(&self, now: Instant, capacity_bps: u64) -> f64 {
        if capacity_bps == 0 {
            return 0.0;
        }
        self.rate_at(now) * 8.0 / capacity_bps as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn hand_computed_updates() {
        let mut t = TswRate::new(Duration::from_millis(100));
        assert_eq!(t.rate_at(ms(5)), 0.0);
        // First departure: (0 * 0.1 + 40) / (0 + 0.1) = 400 B/s.
        t.on_departure(ms(0), 40);
        assert!((t.rate_at(ms(0)) - 400.0).abs() < 1e-9);
        // 10 ms later: (400 * 0.1 + 40) / (0.01 + 0.1) = 727.27 B/s.
        t.on_departure(ms(10), 40);
        assert!((t.rate_at(ms(10)) - 80.0 / 0.11).abs() < 1e-9);
        // Read 100 ms after that: 727.27 * 0.1 / 0.2, half of it.
        assert!((t.rate_at(ms(110)) - 40.0 / 0.11).abs() < 1e-9);
    }

    #[test]
    fn a_steady_stream_converges_to_its_rate() {
        // One 40-byte ACK every 4 ms is 10 000 B/s = 80 kbit/s.
        let mut t = TswRate::new(Duration::from_millis(200));
        for i in 0..1_000 {
            t.on_departure(ms(4 * i), 40);
        }
        let rate = t.rate_at(ms(3_996));
        assert!((rate - 10_000.0).abs() < 100.0, "{rate}");
        // On a 100 kbit/s channel that is 80% utilization.
        let u = t.utilization(ms(3_996), 100_000);
        assert!((u - 0.8).abs() < 0.01, "{u}");
        assert_eq!(t.utilization(ms(3_996), 0), 0.0);
    }

    #[test]
    fn a_slow_rate_converges_faster_than_a_fast_one() {
        // From zero, after one window's worth of time, the slow stream's
        // estimate is closer to its true rate (relative error) than the
        // fast stream's: the decay depends on the rate.
        let window = Duration::from_millis(100);
        let relative_error = |gap_ms: u64| {
            let mut t = TswRate::new(window);
            let mut now = 0;
            while now <= 100 {
                t.on_departure(ms(now), 40);
                now += gap_ms;
            }
            let truth = 40.0 * 1000.0 / gap_ms as f64;
            (t.rate_at(ms(now - gap_ms)) - truth).abs() / truth
        };
        assert!(relative_error(50) < relative_error(1));
    }

    #[test]
    fn time_going_backwards_is_the_same_instant() {
        let mut t = TswRate::new(Duration::ZERO);
        assert_eq!(t.window(), Duration::from_nanos(1));
        t.on_departure(ms(10), 40);
        t.on_departure(ms(5), 40);
        assert!(t.rate_at(ms(10)).is_finite());
    }
}
