//! Minimum RTT over a sliding time window.
//!
//! Smartacking delays an ACK by `LastSegmentTime - RTT` (paper 004,
//! sec. 3.1), so an RTT inflated by queueing shrinks every delay; sec. 5.4
//! shows this on a slow reverse path, where a receiver that keeps the RTT
//! measured at the start ("fixed RTT") does much better. A windowed minimum
//! sits between the two: it ignores queueing delay yet still follows a real
//! path change once the old minimum has aged out of the window.
//!
//! The filter keeps three candidates, as Kathleen Nichols' windowed min-max
//! filter used by Linux does: the best sample in the window and the best
//! ones from its later parts, so that when the best expires a recent
//! replacement is at hand. Memory is constant and every update is O(1).
//! The answer is exact whenever the minimum is recent; after an expiry it
//! may be a little above the true minimum of the window, but it is always
//! a sample taken within the window.

use crate::time::{Duration, Instant};

/// One RTT measurement and when it was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    at: Instant,
    rtt: Duration,
}

/// Minimum RTT over the last `window` of time (for paper 004, sec. 3.1's
/// ACK delay and the fixed-RTT discussion of sec. 5.4).
///
/// The window is measured back from the most recent sample: with no new
/// samples the reported value does not expire by itself (the owner, not
/// this filter, knows whether silence means the path is idle).
#[derive(Debug, Clone)]
pub struct WindowedMinRtt {
    window: Duration,
    /// Best, second and third candidates: RTTs non-decreasing, timestamps
    /// non-decreasing. `None` until the first sample.
    candidates: Option<[Sample; 3]>,
}

impl Default for WindowedMinRtt {
    /// A 10 s window, long enough to span several RTTs and a few cycles of
    /// a queue filling and draining (the value BBR uses for its min RTT).
    fn default() -> Self {
        Self::new(Duration::from_secs(10))
    }
}

impl WindowedMinRtt {
    /// A filter over the last `window` of time with no samples yet (for
    /// paper 004, sec. 3.1 and 5.4). A zero window keeps only the samples
    /// sharing the latest timestamp.
    pub fn new(window: Duration) -> Self {
        WindowedMinRtt {
            window,
            candidates: None,
        }
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Feeds an RTT measured at `now` (for paper 004, sec. 3.1). A `now`
    /// earlier than a previous sample is treated as that sample's time, so
    /// stored timestamps never go backwards.
    pub fn on_sample(&mut self, now: Instant, rtt: Duration) {
        let Some(c) = self.candidates.as_mut() else {
            self.candidates = Some([Sample { at: now, rtt }; 3]);
            return;
        };
        // The third candidate is always the newest of the three.
        let now = now.max(c[2].at);
        let fresh = Sample { at: now, rtt };
        let window = self.window;

        // A new overall minimum makes every older candidate useless, and if
        // even the newest candidate has expired there is nothing to keep.
        if rtt <= c[0].rtt || now.saturating_duration_since(c[2].at) > window {
            *c = [fresh; 3];
            return;
        }
        // Otherwise the sample may still be the best of a later stretch of
        // the window, which is what the second and third candidates track.
        if rtt <= c[1].rtt {
            c[1] = fresh;
            c[2] = fresh;
        } else if rtt <= c[2].rtt {
            c[2] = fresh;
        }

        let best_age = now.saturating_duration_since(c[0].at);
        if best_age > window {
            // The best has expired: promote the later candidates. The
            // second may have expired too; the third cannot (checked above).
            *c = [c[1], c[2], fresh];
            if now.saturating_duration_since(c[0].at) > window {
                *c = [c[1], c[2], fresh];
            }
        } else if c[1].at == c[0].at && best_age > window / 4 {
            // The best has no successor lined up although a quarter of the
            // window has passed: start one from this sample, so an expiry
            // does not have to fall back on something much newer than
            // necessary.
            c[1] = fresh;
            c[2] = fresh;
        } else if c[2].at == c[1].at && best_age > window / 2 {
            // Same for the third candidate once half the window has passed.
            c[2] = fresh;
        }
    }

    /// The minimum RTT within the window ending at the latest sample,
    /// `None` before the first sample (for paper 004, sec. 3.1).
    pub fn get(&self) -> Option<Duration> {
        self.candidates.map(|c| c[0].rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Instant {
        Instant::from_millis(s * 1_000)
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn empty_then_first_sample() {
        let mut f = WindowedMinRtt::default();
        assert_eq!(f.window(), Duration::from_secs(10));
        assert_eq!(f.get(), None);
        f.on_sample(secs(3), ms(40));
        assert_eq!(f.get(), Some(ms(40)));
    }

    #[test]
    fn tracks_a_decreasing_minimum_at_once() {
        let mut f = WindowedMinRtt::default();
        for (t, rtt) in [(0, 100), (1, 90), (1, 70), (2, 71), (3, 50), (4, 50)] {
            f.on_sample(secs(t), ms(rtt));
        }
        assert_eq!(f.get(), Some(ms(50)));
        f.on_sample(secs(4), ms(49));
        assert_eq!(f.get(), Some(ms(49)));
    }

    #[test]
    fn old_minimum_expires_and_a_larger_recent_value_takes_over() {
        let mut f = WindowedMinRtt::default();
        f.on_sample(secs(0), ms(10));
        for t in 1..=10 {
            f.on_sample(secs(t), ms(30));
            // Exactly one window old is still inside the window.
            assert_eq!(f.get(), Some(ms(10)), "t = {t} s");
        }
        f.on_sample(secs(11), ms(30));
        assert_eq!(f.get(), Some(ms(30)));
    }

    #[test]
    fn expiry_falls_back_on_the_best_of_the_later_window() {
        let mut f = WindowedMinRtt::new(Duration::from_secs(8));
        f.on_sample(secs(0), ms(10));
        // 3 s > 8/4 s: 40 ms becomes the second candidate.
        f.on_sample(secs(3), ms(40));
        // Better than the second: replaces second and third.
        f.on_sample(secs(5), ms(20));
        // Worse than the second: only the third.
        f.on_sample(secs(7), ms(60));
        assert_eq!(f.get(), Some(ms(10)));
        // At 9 s the 10 ms sample has expired; 20 ms (from 5 s) remains.
        f.on_sample(secs(9), ms(80));
        assert_eq!(f.get(), Some(ms(20)));
        // At 14 s, 20 ms (5 s) has expired; 60 ms from 7 s is next.
        f.on_sample(secs(14), ms(90));
        assert_eq!(f.get(), Some(ms(60)));
        // A long silence: everything stored expired, the new sample rules.
        f.on_sample(secs(100), ms(95));
        assert_eq!(f.get(), Some(ms(95)));
    }

    #[test]
    fn never_reports_a_sample_older_than_the_window() {
        // Deterministic pseudo-random RTTs and gaps (an LCG), checked after
        // every sample against the full history.
        let window = Duration::from_secs(2);
        let mut f = WindowedMinRtt::new(window);
        let mut history: Vec<(Instant, Duration)> = Vec::new();
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut now = Instant::ZERO;
        for _ in 0..5_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let rtt = ms(10 + (state >> 33) % 200);
            now += Duration::from_millis((state >> 20) % 700);
            f.on_sample(now, rtt);
            history.push((now, rtt));
            let got = f.get().expect("a sample was fed");
            let in_window = |&&(at, _): &&(Instant, Duration)| now - at <= window;
            let true_min = history
                .iter()
                .filter(in_window)
                .map(|&(_, r)| r)
                .min()
                .expect("the latest sample is in the window");
            assert!(got >= true_min, "below every sample in the window");
            assert!(got <= rtt, "the latest sample is a valid candidate");
            assert!(
                history.iter().filter(in_window).any(|&(_, r)| r == got),
                "{got:?} was not sampled within the window ending at {now:?}"
            );
        }
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let mut f = WindowedMinRtt::new(Duration::ZERO);
        f.on_sample(secs(5), ms(30));
        f.on_sample(secs(5), ms(40));
        assert_eq!(
            f.get(),
            Some(ms(30)),
            "same instant is within a zero window"
        );
        f.on_sample(secs(6), ms(40));
        assert_eq!(f.get(), Some(ms(40)));
        // Time running backwards counts as the latest time seen.
        f.on_sample(secs(1), ms(50));
        assert_eq!(f.get(), Some(ms(40)));
        let mut g = WindowedMinRtt::new(Duration::MAX);
        g.on_sample(Instant::from_nanos(u64::MAX), Duration::MAX);
        g.on_sample(Instant::ZERO, Duration::ZERO);
        assert_eq!(g.get(), Some(Duration::ZERO));
    }
}
