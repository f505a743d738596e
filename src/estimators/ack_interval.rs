//! The interval between arriving ACKs, for paper 003's acknowledgment
//! fixes (sec. 4.3): the fast retransmit is postponed until the next ACK
//! is expected.

use crate::time::{Duration, Instant};

/// A smoothed inter-ACK interval.
///
/// Each ACK arrival after the first gives a sample, the time since the
/// previous arrival; the estimate is an EWMA with gain 1/8 (the RFC 6298
/// SRTT gain: it follows a change within a few RTTs of ACKs without being
/// thrown by one burst). Integer nanoseconds only, so runs repeat exactly.
#[derive(Debug, Clone, Default)]
pub struct AckInterval {
    last: Option<Instant>,
    /// The estimate in nanoseconds. Kept as a count rather than a
    /// `Duration`: each ACK updates it, and a `Duration` had to be turned
    /// into nanoseconds and back (multiplies and a division by 10^9 on the
    /// path of every ACK) for arithmetic that is on nanoseconds anyway.
    smoothed: Option<u64>,
}

impl AckInterval {
    /// No samples yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// An ACK arrived at `now`.
    pub fn on_ack(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let sample = now.as_nanos().saturating_sub(last.as_nanos());
            self.smoothed = Some(match self.smoothed {
                None => sample,
                Some(s) => {
                    let (s, x) = (u128::from(s), u128::from(sample));
                    ((s * 7 + x) / 8).min(u128::from(u64::MAX)) as u64
                }
            });
        }
        self.last = Some(now.max(self.last.unwrap_or(now)));
    }

    /// Forgets the last arrival but keeps the estimate: the gap up to the
    /// next ACK is not a sample (after a retransmission timeout the gap is
    /// the outage, which would inflate the estimate for many ACKs).
    pub fn restart(&mut self) {
        self.last = None;
    }

    /// The smoothed interval, once two ACKs have arrived.
    pub fn interval(&self) -> Option<Duration> {
        self.smoothed.map(Duration::from_nanos)
    }

    /// When the next ACK is expected, seen from `now`: one interval after
    /// the last arrival, and never before `now`. `None` without an
    /// estimate.
    pub fn next_expected(&self, now: Instant) -> Option<Instant> {
        let at = self.last? + Duration::from_nanos(self.smoothed?);
        Some(at.max(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn smooths_with_gain_one_eighth() {
        let mut a = AckInterval::new();
        assert_eq!(a.interval(), None);
        a.on_ack(ms(0));
        assert_eq!(a.next_expected(ms(0)), None);
        a.on_ack(ms(8));
        assert_eq!(a.interval(), Some(Duration::from_millis(8)));
        a.on_ack(ms(24));
        // 7/8 * 8 + 1/8 * 16 = 9 ms.
        assert_eq!(a.interval(), Some(Duration::from_millis(9)));
        assert_eq!(a.next_expected(ms(25)), Some(ms(33)));
        // Never in the past.
        assert_eq!(a.next_expected(ms(40)), Some(ms(40)));
    }

    #[test]
    fn a_restart_takes_no_sample_from_the_gap() {
        let mut a = AckInterval::new();
        a.on_ack(ms(0));
        a.on_ack(ms(10));
        a.restart();
        assert_eq!(a.next_expected(ms(10)), None);
        // 5 s of silence, then ACKs 10 ms apart again: still 10 ms.
        a.on_ack(ms(5_010));
        assert_eq!(a.interval(), Some(Duration::from_millis(10)));
        a.on_ack(ms(5_020));
        assert_eq!(a.interval(), Some(Duration::from_millis(10)));
    }

    #[test]
    fn nanosecond_estimate_is_the_duration_arithmetic() {
        // The estimate as Durations, sample by sample.
        let mut reference: Option<Duration> = None;
        let mut a = AckInterval::new();
        let mut now = 0u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        a.on_ack(Instant::from_nanos(now));
        for _ in 0..1_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Gaps from nanoseconds to minutes, and some of zero.
            let gap =
                (x % 7_919) * 10u64.pow((x >> 32) as u32 % 11) * u64::from(!x.is_multiple_of(13));
            now += gap;
            a.on_ack(Instant::from_nanos(now));
            let sample = Duration::from_nanos(gap);
            reference = Some(match reference {
                None => sample,
                Some(s) => {
                    let (s, x) = (s.as_nanos(), sample.as_nanos());
                    Duration::from_nanos(((s * 7 + x) / 8).min(u128::from(u64::MAX)) as u64)
                }
            });
            assert_eq!(a.interval(), reference);
        }
    }

    #[test]
    fn time_never_runs_backwards() {
        let mut a = AckInterval::new();
        a.on_ack(ms(10));
        a.on_ack(ms(5));
        assert_eq!(a.interval(), Some(Duration::ZERO));
        // The earlier time did not move `last` back: 12 - 10 = 2 ms.
        a.on_ack(ms(12));
        assert_eq!(a.interval(), Some(Duration::from_micros(250)));
        assert_eq!(
            a.next_expected(ms(12)),
            Some(ms(12) + Duration::from_micros(250))
        );
    }
}
