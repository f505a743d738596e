//! Inter-segment arrival time (ISAT) for smartacking (paper 004, sec. 3.2).
//!
//! Smartacking predicts when the last segment of the sender's window will
//! arrive as "segments still expected times ISAT" (paper 004, sec. 3.1,
//! equation 1), so ISAT has to describe the spacing of segments inside a
//! window, not the idle time between windows or a one-off hiccup. Two
//! filters from sec. 3.2 keep it that way: the gap in front of the first
//! segment of a window is not a sample, and a sample of three or more times
//! the current estimate is dropped unless it keeps coming back.

use crate::time::{Duration, Instant};

/// Smoothed inter-segment arrival time (paper 004, sec. 3.2).
///
/// An EWMA with gain 1/4 over the gaps between consecutive data segment
/// arrivals: `ISAT <- 3/4 * ISAT + 1/4 * gap`. The first accepted gap
/// becomes the estimate as is. Arithmetic is on integer nanoseconds so a
/// run of the emulator repeats exactly.
///
/// Outliers (paper 004, sec. 3.2): a gap of at least
/// [`OUTLIER_FACTOR`](Self::OUTLIER_FACTOR) times the current estimate is
/// ignored, but no more than
/// [`MAX_IGNORED_OUTLIERS`](Self::MAX_IGNORED_OUTLIERS) in a row: a third
/// consecutive one is taken as a real change of spacing and accepted. A
/// zero gap (segments in one burst) is a valid sample and never an outlier,
/// even against a zero estimate.
///
/// With a span of `n` segments ([`with_span`](Self::with_span), ackwise's
/// own), a sample is the mean gap over `n` consecutive gaps inside a
/// window instead of each gap: a path that delivers segments in clumps (a
/// shaper's token bucket, receive offload, an aggregating link, a host
/// that reads its interface in batches) then still yields the rate the
/// segments come at, where single gaps would measure the gaps inside a
/// clump, near zero.
#[derive(Debug, Clone, Default)]
pub struct Isat {
    /// Gaps per sample (0 and 1: every gap is a sample).
    span: u32,
    /// Where the current span started and the gaps it holds so far.
    span_start: Option<(Instant, u32)>,
    /// Arrival time of the latest segment, `None` before the first one or
    /// after [`reset_gap`](Self::reset_gap).
    last_arrival: Option<Instant>,
    /// The smoothed gap, `None` until the first sample.
    estimate: Option<Duration>,
    /// Outliers ignored since the last accepted sample.
    ignored_outliers: u8,
}

impl Isat {
    /// A gap at least this many times the current estimate is an outlier
    /// (paper 004, sec. 3.2: "at least three times larger").
    pub const OUTLIER_FACTOR: u32 = 3;

    /// How many outliers in a row are ignored before the next one is
    /// accepted (paper 004, sec. 3.2: "up to two consecutively measured
    /// values").
    pub const MAX_IGNORED_OUTLIERS: u8 = 2;

    /// No arrivals and no estimate yet (paper 004, sec. 3.2).
    pub fn new() -> Self {
        Self::default()
    }

    /// An estimator whose samples are the mean gap over `segments`
    /// consecutive gaps (1: each gap, as [`new`](Self::new)).
    pub fn with_span(segments: u32) -> Self {
        Isat {
            span: segments,
            ..Self::default()
        }
    }

    /// Gaps per sample.
    pub fn span(&self) -> u32 {
        self.span.max(1)
    }

    /// A data segment arrived at `now` (paper 004, sec. 3.2).
    ///
    /// The gap since the previous arrival is a sample unless
    /// `first_of_window` is set: in front of the first segment of a window
    /// the gap is the sender's idle time waiting for ACKs, which says
    /// nothing about how tightly segments are spaced. The arrival time is
    /// recorded either way so the next segment measures from this one.
    /// A `now` earlier than the previous arrival gives a zero gap and does
    /// not move the recorded time back.
    pub fn on_arrival(&mut self, now: Instant, first_of_window: bool) {
        if self.span > 1 {
            self.on_arrival_spanned(now, first_of_window);
            return;
        }
        let previous = self.last_arrival;
        self.last_arrival = Some(previous.map_or(now, |p| p.max(now)));
        if first_of_window {
            return;
        }
        if let Some(previous) = previous {
            self.on_sample(now.saturating_duration_since(previous));
        }
    }

    /// The smoothed inter-segment arrival time, once one gap was measured
    /// (paper 004, sec. 3.2).
    pub fn isat(&self) -> Option<Duration> {
        self.estimate
    }

    /// Forgets the previous arrival so the next one yields no sample; the
    /// estimate and the outlier count are kept. Meant for after a long idle
    /// period, whose gap would otherwise be measured as spacing (paper 004,
    /// sec. 3.2 excludes such gaps).
    pub fn reset_gap(&mut self) {
        self.last_arrival = None;
        self.span_start = None;
    }

    /// [`on_arrival`](Self::on_arrival) with a span: the first segment of
    /// a window (or the first after a reset) starts a span, and every
    /// `span`-th gap after it closes one, whose mean gap is the sample.
    fn on_arrival_spanned(&mut self, now: Instant, first_of_window: bool) {
        self.last_arrival = Some(self.last_arrival.map_or(now, |p| p.max(now)));
        let (began, gaps) = match self.span_start {
            Some((began, gaps)) if !first_of_window => (began, gaps + 1),
            _ => {
                self.span_start = Some((now, 0));
                return;
            }
        };
        if gaps < self.span {
            self.span_start = Some((began, gaps));
            return;
        }
        self.span_start = Some((now, 0));
        self.on_sample(now.saturating_duration_since(began) / gaps);
    }

    fn on_sample(&mut self, gap: Duration) {
        let Some(current) = self.estimate else {
            self.estimate = Some(gap);
            return;
        };
        // u128 nanoseconds: three times any Duration still fits, so neither
        // the comparison nor the weighted sum can overflow.
        let gap_ns = gap.as_nanos();
        let current_ns = current.as_nanos();
        let is_outlier = gap_ns > 0 && gap_ns >= u128::from(Self::OUTLIER_FACTOR) * current_ns;
        if is_outlier && self.ignored_outliers < Self::MAX_IGNORED_OUTLIERS {
            self.ignored_outliers += 1;
            return;
        }
        self.ignored_outliers = 0;
        self.estimate = Some(from_nanos((3 * current_ns + gap_ns) / 4));
    }
}

fn from_nanos(n: u128) -> Duration {
    // The average of Durations that each fit is itself representable, but
    // clamp rather than trust that (584 years of nanoseconds is absurd).
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    /// Feeds arrivals at the given millisecond times, none first of window.
    fn feed(isat: &mut Isat, times_ms: &[u64]) {
        for &t in times_ms {
            isat.on_arrival(at(t), false);
        }
    }

    /// An estimator whose estimate is exactly 10 ms, last arrival at 10 ms.
    fn at_ten_ms() -> Isat {
        let mut i = Isat::new();
        feed(&mut i, &[0, 10]);
        assert_eq!(i.isat(), Some(ms(10)));
        i
    }

    #[test]
    fn a_span_measures_the_rate_of_clumped_arrivals() {
        // Pairs of segments 1 us apart every 200 us: 100 us per segment.
        let times: Vec<Instant> = (0..64u64)
            .map(|i| Instant::from_micros(i / 2 * 200 + i % 2))
            .collect();
        let mut single = Isat::new();
        let mut spanned = Isat::with_span(8);
        for &t in &times {
            single.on_arrival(t, false);
            spanned.on_arrival(t, false);
        }
        // Single gaps alternate 1 and 199 us; the outlier filter keeps the
        // estimate near the small ones.
        assert!(single.isat().unwrap() < us(60), "{:?}", single.isat());
        assert_eq!(spanned.isat(), Some(us(100)));
        assert_eq!((spanned.span(), Isat::new().span()), (8, 1));
    }

    #[test]
    fn a_span_starts_again_at_each_window_and_after_a_reset() {
        let mut isat = Isat::with_span(4);
        // Four gaps of 10 us: one sample.
        for t in [0, 10, 20, 30, 40] {
            isat.on_arrival(Instant::from_micros(t), false);
        }
        assert_eq!(isat.isat(), Some(us(10)));
        // A new window 1 ms later: its gap is not part of any span.
        for t in [1_000, 1_020, 1_040, 1_060] {
            isat.on_arrival(Instant::from_micros(t), t == 1_000);
        }
        assert_eq!(isat.isat(), Some(us(10)), "three gaps are no sample yet");
        isat.on_arrival(Instant::from_micros(1_080), false);
        assert_eq!(isat.isat(), Some(Duration::from_nanos(12_500)));
        isat.reset_gap();
        for t in [5_000, 5_010, 5_020, 5_030] {
            isat.on_arrival(Instant::from_micros(t), false);
        }
        assert_eq!(isat.isat(), Some(Duration::from_nanos(12_500)));
    }

    #[test]
    fn first_gap_initialises_the_estimate() {
        let mut i = Isat::default();
        assert_eq!(i.isat(), None);
        i.on_arrival(at(5), false);
        assert_eq!(i.isat(), None, "one arrival is no gap");
        i.on_arrival(at(12), false);
        assert_eq!(i.isat(), Some(ms(7)));
    }

    #[test]
    fn ewma_gain_one_quarter() {
        let mut i = Isat::new();
        feed(&mut i, &[0, 10, 30]);
        // 3/4 * 10 + 1/4 * 20 = 12.5 ms.
        assert_eq!(i.isat(), Some(us(12_500)));
        feed(&mut i, &[34]);
        // 3/4 * 12.5 + 1/4 * 4 = 10.375 ms.
        assert_eq!(i.isat(), Some(us(10_375)));
    }

    #[test]
    fn first_of_window_gap_is_not_a_sample() {
        let mut i = at_ten_ms();
        i.on_arrival(at(500), true);
        assert_eq!(i.isat(), Some(ms(10)));
        // The next gap is measured from 500 ms: 4 ms.
        feed(&mut i, &[504]);
        // 3/4 * 10 + 1/4 * 4 = 8.5 ms.
        assert_eq!(i.isat(), Some(us(8_500)));
        // A first-of-window arrival before any estimate does not start it.
        let mut fresh = Isat::new();
        fresh.on_arrival(at(0), false);
        fresh.on_arrival(at(40), true);
        assert_eq!(fresh.isat(), None);
    }

    #[test]
    fn one_outlier_is_ignored() {
        let mut i = at_ten_ms();
        // Exactly three times the estimate counts as an outlier.
        feed(&mut i, &[40]);
        assert_eq!(i.isat(), Some(ms(10)));
        feed(&mut i, &[50]);
        assert_eq!(i.isat(), Some(ms(10)));
        // Just under three times is an ordinary sample: (30 + 29) / 4.
        feed(&mut i, &[79]);
        assert_eq!(i.isat(), Some(us(14_750)));
    }

    #[test]
    fn two_outliers_ignored_third_accepted() {
        let mut i = at_ten_ms();
        feed(&mut i, &[50, 90]);
        assert_eq!(i.isat(), Some(ms(10)), "two outliers in a row ignored");
        feed(&mut i, &[130]);
        // The third is accepted: 3/4 * 10 + 1/4 * 40 = 17.5 ms.
        assert_eq!(i.isat(), Some(us(17_500)));
        // Acceptance restarted the run: 3 * 17.5 = 52.5 ms; 60 ms gaps are
        // outliers again, two ignored and the third taken.
        feed(&mut i, &[190, 250]);
        assert_eq!(i.isat(), Some(us(17_500)));
        feed(&mut i, &[310]);
        // 3/4 * 17.5 + 1/4 * 60 = 28.125 ms.
        assert_eq!(i.isat(), Some(us(28_125)));
    }

    #[test]
    fn normal_sample_breaks_the_outlier_run() {
        let mut i = at_ten_ms();
        feed(&mut i, &[50, 90]); // two outliers ignored
        feed(&mut i, &[100]); // normal 10 ms gap: estimate stays 10 ms
        assert_eq!(i.isat(), Some(ms(10)));
        feed(&mut i, &[140, 180]); // the count restarted: both ignored
        assert_eq!(i.isat(), Some(ms(10)));
        feed(&mut i, &[220]);
        assert_eq!(i.isat(), Some(us(17_500)));
    }

    #[test]
    fn skipped_gaps_do_not_break_or_extend_the_run() {
        let mut i = at_ten_ms();
        feed(&mut i, &[50]); // outlier 1
        i.on_arrival(at(1_000), true); // not a sample
        feed(&mut i, &[1_040]); // outlier 2
        assert_eq!(i.isat(), Some(ms(10)));
        i.reset_gap();
        i.on_arrival(at(5_000), false); // no previous arrival: no sample
        feed(&mut i, &[5_040]); // outlier 3: accepted
        assert_eq!(i.isat(), Some(us(17_500)));
    }

    #[test]
    fn zero_gaps_are_samples() {
        let mut i = at_ten_ms();
        feed(&mut i, &[10]);
        // 3/4 * 10 + 0 = 7.5 ms.
        assert_eq!(i.isat(), Some(us(7_500)));

        // A zero first sample gives a zero estimate; zero gaps keep it and
        // are not outliers, positive gaps are outliers against zero.
        let mut z = Isat::new();
        feed(&mut z, &[3, 3, 3]);
        assert_eq!(z.isat(), Some(Duration::ZERO));
        feed(&mut z, &[7, 11]);
        assert_eq!(z.isat(), Some(Duration::ZERO));
        feed(&mut z, &[15]);
        assert_eq!(z.isat(), Some(ms(1)), "1/4 * 4 ms");
    }

    #[test]
    fn reset_gap_skips_one_sample() {
        let mut i = at_ten_ms();
        i.reset_gap();
        i.on_arrival(at(10_000), false);
        assert_eq!(i.isat(), Some(ms(10)));
        feed(&mut i, &[10_006]);
        // 3/4 * 10 + 1/4 * 6 = 9 ms.
        assert_eq!(i.isat(), Some(ms(9)));
    }

    #[test]
    fn time_running_backwards_is_harmless() {
        let mut i = at_ten_ms();
        feed(&mut i, &[4]); // zero gap
        assert_eq!(i.isat(), Some(us(7_500)));
        // The recorded arrival stayed at 10 ms: gap 2 ms.
        feed(&mut i, &[12]);
        // 3/4 * 7.5 + 1/4 * 2 = 6.125 ms.
        assert_eq!(i.isat(), Some(us(6_125)));
        let mut far = Isat::new();
        far.on_arrival(Instant::ZERO, false);
        far.on_arrival(Instant::from_nanos(u64::MAX), false);
        far.on_arrival(Instant::from_nanos(u64::MAX), false);
        assert_eq!(
            far.isat(),
            Some(Duration::from_nanos((3 * u128::from(u64::MAX) / 4) as u64))
        );
    }
}
