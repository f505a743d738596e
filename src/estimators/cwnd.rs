//! The receiver's estimate of a NewReno sender's congestion window
//! (paper 004, sec. 3.2, figure 1 "EstimateCwnd").
//!
//! Smartacking needs the sender's window to predict when the window's last
//! segment will arrive (paper 004, sec. 3.1, equation 1), but a receiver-only
//! deployment cannot ask for it. Figure 1 reconstructs it from what the
//! receiver sees: the non-duplicate ACKs it sends (each one grows a NewReno
//! window), the in-order segments it gets per RTT, and the duplicate ACKs
//! and silent RTTs that betray a loss.
//!
//! [`CwndEstimator`] is figure 1 statement by statement; [`RttIntervals`]
//! turns "once per RTT" into calls the owner makes lazily from its event
//! handlers, so no timer is needed. How the figure's open points are read
//! is documented on [`CwndEstimator`].

use crate::time::{Duration, Instant};

/// `SsthreshEst` before the first loss: no threshold is known yet.
const SSTHRESH_UNKNOWN: i64 = i64::MAX;

/// Which branch of figure 1's `EstimateCwnd` (paper 004, sec. 3.2) is in
/// force, mirroring the NewReno sender's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CwndPhase {
    /// `StartingCwnd > -1`: the sender's first slow start, before any loss;
    /// the window is one plus the non-duplicate ACKs sent.
    InitialSlowStart,
    /// `PastSsthresh` false after a loss: the post-congestion slow start,
    /// estimated from the last two RTT intervals' counts.
    SlowStart,
    /// `PastSsthresh` true after a loss: congestion avoidance, tracked by
    /// `CwndEst` growing by `1/CwndEst` per non-duplicate ACK.
    CongestionAvoidance,
}

/// The receiver's estimate of a NewReno sender's congestion window, in
/// segments: paper 004, sec. 3.2, figure 1.
///
/// The owner reports four kinds of event: each non-duplicate ACK it sends
/// ([`on_non_duplicate_ack_sent`](Self::on_non_duplicate_ack_sent)), the
/// third duplicate ACK of a loss
/// ([`on_third_duplicate_ack_sent`](Self::on_third_duplicate_ack_sent)),
/// each in-order data segment
/// ([`on_in_order_segment`](Self::on_in_order_segment)) and the end of
/// each RTT-long interval ([`on_interval_end`](Self::on_interval_end),
/// usually through [`RttIntervals`]).
///
/// # Reading figure 1
///
/// The figure leaves a few things open; the choices made here:
///
/// - **The third duplicate ACK.** Sec. 3.2 says only that it sets
///   `StartingCwnd` to -1. Figure 1 itself notices a loss in one way only,
///   two RTT intervals without in-order segments (a retransmission timeout),
///   so on its own a fast retransmit would neither lower `SsthreshEst` nor
///   end the congestion-avoidance phase. The third duplicate ACK therefore
///   also sets `SeenLossThisInterval`; the reduction itself happens at the
///   end of the interval, in the figure's order, like a timeout-detected
///   loss.
/// - **Initial values.** `CwndEst` starts at 0, so its `CwndEst > 0` guard
///   keeps it still until the first switch to congestion avoidance sets it.
///   `SsthreshEst` starts unknown (stored as `i64::MAX`), like a NewReno
///   sender's initial threshold (RFC 5681: arbitrarily high): until the
///   first reduction the post-congestion formula then returns the plain
///   slow-start sum. The interval counters start at 0, both loss flags
///   false.
/// - **Order of the once-per-RTT block** is the figure's, with two
///   consequences kept deliberately (the tests pin them down). In the
///   interval where a loss happens, fewer in-order segments arrive than slow
///   start predicts, so the switch to congestion avoidance usually fires
///   first and the loss block then halves the `CwndEst` it has just set
///   (`NumSegmentsThisInterval + 1`), not the slow-start sum. And
///   `SeenLossRecently` only changes in an interval with more than one
///   segment, so each further empty interval of a long stall counts as a
///   new loss and drives `SsthreshEst` down to 2 (the sum is 0 by then).
/// - **The switch test is not guarded by the initial slow start** in the
///   figure, so it can set `PastSsthresh` and `CwndEst` while
///   `StartingCwnd > -1`; `EstimateCwnd` ignores both until the initial
///   slow start ends.
/// - **Integers.** Counters saturate instead of wrapping; `(int) CwndEst`
///   truncates towards zero;
///   [`estimate_segments`](Self::estimate_segments) reports at least one
///   segment, since no sender window is smaller.
#[derive(Debug, Clone, PartialEq)]
pub struct CwndEstimator {
    /// Window during the initial slow start; -1 once it is over.
    starting_cwnd: i64,
    /// After a loss: true in congestion avoidance, false in slow start.
    past_ssthresh: bool,
    /// Window in congestion avoidance; 0 until first set.
    cwnd_est: f64,
    /// Estimated slow-start threshold, [`SSTHRESH_UNKNOWN`] before a loss.
    ssthresh_est: i64,
    num_segments_this_interval: u64,
    num_segments_last_interval: u64,
    num_acks_this_interval: u64,
    num_acks_last_interval: u64,
    /// The window the interval just begun would carry if the sender were
    /// in slow start, computed at its start.
    cwnd_if_slow_start: u64,
    seen_loss_this_interval: bool,
    seen_loss_recently: bool,
}

impl Default for CwndEstimator {
    /// Starts from a one-segment window, as paper 004, sec. 3.2 does.
    fn default() -> Self {
        Self::new(1)
    }
}

impl CwndEstimator {
    /// A connection that has not started: the sender's window is
    /// `initial_window_segments` (paper 004, sec. 3.2 uses 1; RFC 5681
    /// allows up to 4) and the estimator is in the initial slow start.
    pub fn new(initial_window_segments: u32) -> Self {
        CwndEstimator {
            starting_cwnd: i64::from(initial_window_segments),
            past_ssthresh: false,
            cwnd_est: 0.0,
            ssthresh_est: SSTHRESH_UNKNOWN,
            num_segments_this_interval: 0,
            num_segments_last_interval: 0,
            num_acks_this_interval: 0,
            num_acks_last_interval: 0,
            cwnd_if_slow_start: 0,
            seen_loss_this_interval: false,
            seen_loss_recently: false,
        }
    }

    /// The receiver sent an ACK for new data (figure 1, "when sending a
    /// non-duplicate ACK"; paper 004, sec. 3.2). A NewReno sender grows its
    /// window on every such ACK: by one in slow start, by `1/cwnd` in
    /// congestion avoidance; the estimate follows both.
    pub fn on_non_duplicate_ack_sent(&mut self) {
        self.num_acks_this_interval = self.num_acks_this_interval.saturating_add(1);
        if self.starting_cwnd > -1 {
            self.starting_cwnd = self.starting_cwnd.saturating_add(1);
        }
        if self.cwnd_est > 0.0 {
            self.cwnd_est += 1.0 / self.cwnd_est;
        }
    }

    /// The receiver sent the third duplicate ACK for the same data, which
    /// makes a NewReno sender retransmit and halve its window (paper 004,
    /// sec. 3.2).
    ///
    /// Ends the initial slow start at once (`StartingCwnd = -1`, as
    /// sec. 3.2 says) and marks a loss in the current interval
    /// (`SeenLossThisInterval = true`): figure 1 has no other way to learn
    /// of a fast retransmit, and the threshold is then lowered at the end
    /// of the interval in the figure's order. Calling it again in the same
    /// interval changes nothing.
    pub fn on_third_duplicate_ack_sent(&mut self) {
        self.starting_cwnd = -1;
        self.seen_loss_this_interval = true;
    }

    /// A data segment arrived in order (figure 1, "whenever an in-order
    /// segment arrives"; paper 004, sec. 3.2).
    pub fn on_in_order_segment(&mut self) {
        self.num_segments_this_interval = self.num_segments_this_interval.saturating_add(1);
    }

    /// One RTT-long interval ended (figure 1, "once per RTT"; paper 004,
    /// sec. 3.2), statements in the figure's order: maybe switch to
    /// congestion avoidance, detect a silent loss, react to a loss, update
    /// the loss memory, then shift the interval counters.
    pub fn on_interval_end(&mut self) {
        // Fewer segments than slow start would have delivered, with enough
        // ACKs last interval to judge and no loss in the way: the sender
        // has passed its threshold.
        if !self.past_ssthresh
            && self.cwnd_if_slow_start > self.num_segments_this_interval.saturating_add(2)
            && self.num_acks_last_interval > 2
            && !self.seen_loss_recently
        {
            self.past_ssthresh = true;
            self.cwnd_est = self.num_segments_this_interval as f64 + 1.0;
        }
        // Two RTTs without a single in-order segment: the sender is
        // waiting for its retransmission timer.
        if self.num_segments_this_interval == 0 && self.num_segments_last_interval == 0 {
            self.seen_loss_this_interval = true;
        }
        // One reduction per loss episode, like the sender's.
        if self.seen_loss_this_interval && !self.seen_loss_recently {
            self.ssthresh_est = (self.estimate_raw() / 2).max(2);
            self.starting_cwnd = -1;
            self.past_ssthresh = false;
        }
        // An interval with (almost) nothing delivered says nothing about
        // whether the loss episode is over.
        if self.num_segments_this_interval > 1 {
            self.seen_loss_recently = self.seen_loss_this_interval;
        }
        self.seen_loss_this_interval = false;
        self.cwnd_if_slow_start = self
            .num_segments_last_interval
            .saturating_add(self.num_acks_last_interval)
            .saturating_add(self.num_acks_this_interval);
        self.num_segments_last_interval = self.num_segments_this_interval;
        self.num_acks_last_interval = self.num_acks_this_interval;
        self.num_segments_this_interval = 0;
        self.num_acks_this_interval = 0;
    }

    /// Figure 1's `EstimateCwnd` (paper 004, sec. 3.2): the sender's
    /// congestion window in segments, never less than one.
    pub fn estimate_segments(&self) -> u32 {
        let clamped = self.estimate_raw().clamp(1, i64::from(u32::MAX));
        u32::try_from(clamped).unwrap_or(u32::MAX)
    }

    /// Which of figure 1's three phases the estimate comes from (paper 004,
    /// sec. 3.2), for tests and logs.
    pub fn phase(&self) -> CwndPhase {
        if self.starting_cwnd > -1 {
            CwndPhase::InitialSlowStart
        } else if self.past_ssthresh {
            CwndPhase::CongestionAvoidance
        } else {
            CwndPhase::SlowStart
        }
    }

    /// Figure 1's `SsthreshEst` in segments (paper 004, sec. 3.2), `None`
    /// until the first loss has been handled at an interval end.
    pub fn ssthresh_estimate_segments(&self) -> Option<u32> {
        if self.ssthresh_est == SSTHRESH_UNKNOWN {
            return None;
        }
        let clamped = self.ssthresh_est.clamp(0, i64::from(u32::MAX));
        Some(u32::try_from(clamped).unwrap_or(u32::MAX))
    }

    /// `EstimateCwnd` without the lower bound, as the figure computes it;
    /// the loss block halves this value. Never negative.
    fn estimate_raw(&self) -> i64 {
        if self.starting_cwnd > -1 {
            return self.starting_cwnd;
        }
        if self.past_ssthresh {
            // `as` truncates towards zero and saturates, like the figure's
            // (int) cast but without undefined behaviour on huge values.
            return self.cwnd_est as i64;
        }
        let total = to_i64(
            self.num_segments_last_interval
                .saturating_add(self.num_acks_last_interval)
                .saturating_add(self.num_acks_this_interval),
        );
        if total > self.ssthresh_est {
            // Past the threshold the sender adds about one segment per RTT,
            // so last interval's delivery plus a little is the window.
            self.ssthresh_est
                .max(to_i64(self.num_segments_last_interval))
                .saturating_add(2)
        } else {
            total
        }
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Drives [`CwndEstimator::on_interval_end`] once per RTT without a timer
/// (figure 1's "once per RTT", paper 004, sec. 3.2).
///
/// The owner calls [`advance`](Self::advance) from every event handler,
/// before reporting the event to the estimator, so that an event at `now`
/// is counted in the interval that contains `now`. Intervals are half-open:
/// one ending exactly at `now` is closed first.
#[derive(Debug, Clone, Default)]
pub struct RttIntervals {
    next_end: Option<Instant>,
}

impl RttIntervals {
    /// At most this many interval ends are replayed by one
    /// [`advance`](Self::advance). After a few empty intervals figure 1's
    /// state stops changing (paper 004, sec. 3.2), so replaying more would
    /// only cost time.
    pub const MAX_CATCH_UP: u64 = 64;

    /// Not started: the first [`advance`](Self::advance) opens the first
    /// interval (paper 004, sec. 3.2).
    pub fn new() -> Self {
        Self::default()
    }

    /// When the current interval ends, `None` before the first
    /// [`advance`](Self::advance) with a non-zero RTT; an owner that does
    /// want a timer can arm it here.
    pub fn next_end(&self) -> Option<Instant> {
        self.next_end
    }

    /// Closes every interval that ended at or before `now`, calling
    /// [`CwndEstimator::on_interval_end`] once for each (figure 1's "once per
    /// RTT", paper 004, sec. 3.2).
    ///
    /// The first call only opens an interval of length `rtt`. The current
    /// interval keeps the end it was given; the ones after it last the
    /// `rtt` of the call that opens them. After a gap of more than
    /// [`MAX_CATCH_UP`](Self::MAX_CATCH_UP) intervals only that many ends are
    /// replayed and the schedule skips ahead to the interval containing
    /// `now`. A zero `rtt` (no estimate yet) does nothing.
    pub fn advance(&mut self, now: Instant, rtt: Duration, est: &mut CwndEstimator) {
        self.advance_counted(now, rtt, est);
    }

    /// [`advance`](Self::advance), returning how many interval ends ran.
    fn advance_counted(&mut self, now: Instant, rtt: Duration, est: &mut CwndEstimator) -> u64 {
        if rtt.is_zero() {
            return 0;
        }
        let Some(end) = self.next_end else {
            self.next_end = Some(now + rtt);
            return 0;
        };
        if now < end {
            return 0;
        }
        let rtt_ns = rtt.as_nanos();
        // The interval ending at `end` plus every whole one after it up to
        // `now`; rtt_ns > 0 was checked above.
        let ended = (now - end).as_nanos() / rtt_ns + 1;
        let replay = u64::try_from(ended)
            .unwrap_or(u64::MAX)
            .min(Self::MAX_CATCH_UP);
        for _ in 0..replay {
            est.on_interval_end();
        }
        // Saturates at the far future rather than wrapping; `Instant + _`
        // saturates too.
        let skip =
            Duration::from_nanos(u64::try_from(ended.saturating_mul(rtt_ns)).unwrap_or(u64::MAX));
        self.next_end = Some(end + skip);
        replay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One interval: `segments` in-order segments, `acks` non-duplicate
    /// ACKs, then the interval end.
    fn interval(e: &mut CwndEstimator, segments: u64, acks: u64) {
        for _ in 0..segments {
            e.on_in_order_segment();
        }
        for _ in 0..acks {
            e.on_non_duplicate_ack_sent();
        }
        e.on_interval_end();
    }

    /// Initial slow start with one ACK per segment, windows 1, 2, 4, 8.
    ///
    /// The switch test never fires: CwndIfSlowStart is 0, 1, 4, 8 at the
    /// four ends against 1 + 2, 2 + 2, 4 + 2, 8 + 2 segments.
    fn initial_slow_start_to_16() -> CwndEstimator {
        let mut e = CwndEstimator::default();
        for w in [1, 2, 4, 8] {
            interval(&mut e, w, w);
        }
        assert_eq!(e.estimate_segments(), 16);
        assert_eq!(e.phase(), CwndPhase::InitialSlowStart);
        assert_eq!(e.cwnd_if_slow_start, 16); // 4 + 4 + 8
        assert_eq!(
            (e.num_segments_last_interval, e.num_acks_last_interval),
            (8, 8)
        );
        assert!(!e.past_ssthresh);
        assert_eq!(e.cwnd_est, 0.0);
        e
    }

    /// A fast retransmit late in the fifth interval: 15 segments and ACKs,
    /// then the third duplicate ACK. SsthreshEst = 31 / 2 = 15.
    fn fast_retransmit_late() -> CwndEstimator {
        let mut e = initial_slow_start_to_16();
        for _ in 0..15 {
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        assert_eq!(e.estimate_segments(), 31);
        e.on_third_duplicate_ack_sent();
        e.on_interval_end();
        // Switch test: 16 > 15 + 2 fails. Loss block: Total = 8 + 8 + 15.
        assert_eq!(e.ssthresh_estimate_segments(), Some(15));
        assert!(e.seen_loss_recently);
        e
    }

    /// An RTO stall right after the initial slow start reached 16.
    fn rto_stall() -> CwndEstimator {
        let mut e = initial_slow_start_to_16();
        // First empty interval: 16 > 0 + 2, 8 ACKs last interval, no loss
        // seen: the switch fires (CwndEst = 1), though EstimateCwnd still
        // follows StartingCwnd. One empty interval is no loss yet.
        interval(&mut e, 0, 0);
        assert!(e.past_ssthresh);
        assert_eq!(e.cwnd_est, 1.0);
        assert_eq!(e.phase(), CwndPhase::InitialSlowStart);
        assert_eq!(e.ssthresh_estimate_segments(), None);
        // Second empty interval: the loss. SsthreshEst = 16 / 2.
        interval(&mut e, 0, 0);
        assert_eq!(e.ssthresh_estimate_segments(), Some(8));
        e
    }

    /// After the RTO stall, a post-congestion slow start 1, 2, 4, then an
    /// interval of 8 segments in which the sender passed SsthreshEst = 8.
    /// Leaves CwndIfSlowStart = 16, 8 ACKs last interval, no recent loss.
    fn ready_to_switch() -> CwndEstimator {
        let mut e = rto_stall();
        for w in [1, 2, 4, 8] {
            interval(&mut e, w, w);
        }
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert_eq!(e.cwnd_if_slow_start, 16);
        assert_eq!(e.num_acks_last_interval, 8);
        assert!(!e.seen_loss_recently);
        e
    }

    #[test]
    fn initial_slow_start_counts_non_duplicate_acks() {
        let mut e = CwndEstimator::default();
        assert_eq!(e.estimate_segments(), 1);
        assert_eq!(e.phase(), CwndPhase::InitialSlowStart);
        assert_eq!(e.ssthresh_estimate_segments(), None);
        for _ in 0..5 {
            e.on_in_order_segment(); // segments alone change nothing here
        }
        assert_eq!(e.estimate_segments(), 1);
        for n in 2..=4 {
            e.on_non_duplicate_ack_sent();
            assert_eq!(e.estimate_segments(), n);
        }
        assert_eq!(CwndEstimator::new(3).estimate_segments(), 3);
        // A zero initial window is still reported as one segment.
        let mut z = CwndEstimator::new(0);
        assert_eq!(z.estimate_segments(), 1);
        z.on_non_duplicate_ack_sent();
        z.on_non_duplicate_ack_sent();
        assert_eq!(z.estimate_segments(), 2);
        assert_eq!(initial_slow_start_to_16().starting_cwnd, 16);
    }

    #[test]
    fn third_duplicate_ack_leaves_initial_slow_start() {
        let mut e = initial_slow_start_to_16();
        for _ in 0..15 {
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        e.on_third_duplicate_ack_sent();
        e.on_third_duplicate_ack_sent(); // idempotent
        assert_eq!(e.starting_cwnd, -1);
        assert!(e.seen_loss_this_interval);
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        // SsthreshEst is still unknown, so EstimateCwnd is the plain sum
        // NumSegmentsLast + NumACKsLast + NumACKsThis = 8 + 8 + 15.
        assert_eq!(e.estimate_segments(), 31);
        assert_eq!(e.ssthresh_estimate_segments(), None);
        e.on_interval_end();
        assert_eq!(e.ssthresh_estimate_segments(), Some(15));
        assert!(!e.seen_loss_this_interval);
        // Total = 15 + 15 + 0 = 30 > 15: max(15, 15) + 2.
        assert_eq!(e.estimate_segments(), 17);
        assert_eq!(e, fast_retransmit_late());
    }

    #[test]
    fn loss_early_in_the_interval_halves_the_fresh_cwnd_est() {
        // Figure 1's order: the switch test runs before the loss block. With
        // only 5 in-order segments before the loss, 16 > 5 + 2 and the
        // switch fires (CwndEst = 6); the loss block then halves that.
        let mut e = initial_slow_start_to_16();
        for _ in 0..5 {
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        e.on_third_duplicate_ack_sent();
        assert_eq!(e.estimate_segments(), 21); // 8 + 8 + 5
        e.on_interval_end();
        assert_eq!(e.cwnd_est, 6.0);
        assert_eq!(e.ssthresh_estimate_segments(), Some(3));
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        // Total = 5 + 5 + 0 = 10 > 3: max(3, 5) + 2.
        assert_eq!(e.estimate_segments(), 7);
    }

    #[test]
    fn two_empty_intervals_are_a_loss() {
        let e = rto_stall();
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert!(!e.past_ssthresh, "the loss block cleared the switch");
        // Total = 0: the window after a timeout, reported as one segment.
        assert_eq!(e.estimate_raw(), 0);
        assert_eq!(e.estimate_segments(), 1);
        assert_eq!(e.cwnd_if_slow_start, 0);
        // A single empty interval after traffic is not a loss.
        let mut one = initial_slow_start_to_16();
        interval(&mut one, 0, 0);
        interval(&mut one, 1, 1);
        assert_eq!(one.ssthresh_estimate_segments(), None);
    }

    #[test]
    fn long_stall_drives_ssthresh_est_to_two() {
        // SeenLossRecently is only updated by intervals with more than one
        // segment, so a third empty interval is another loss, and Total is
        // 0 by then: SsthreshEst = max(0 / 2, 2).
        let mut e = rto_stall();
        interval(&mut e, 0, 0);
        assert_eq!(e.ssthresh_estimate_segments(), Some(2));
        // Further empty intervals leave the state alone.
        let before = e.clone();
        for _ in 0..10 {
            interval(&mut e, 0, 0);
        }
        assert_eq!(e, before);
    }

    #[test]
    fn loss_in_congestion_avoidance_halves_cwnd_est() {
        let mut e = ready_to_switch();
        interval(&mut e, 9, 9); // switch: CwndEst = 10
        assert_eq!(e.phase(), CwndPhase::CongestionAvoidance);
        for _ in 0..4 {
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        e.on_third_duplicate_ack_sent();
        // Still congestion avoidance until the interval ends.
        assert_eq!(e.phase(), CwndPhase::CongestionAvoidance);
        assert_eq!(e.estimate_segments(), 10);
        e.on_interval_end();
        // (int) 10.394... / 2 = 5.
        assert_eq!(e.ssthresh_estimate_segments(), Some(5));
        assert_eq!(e.phase(), CwndPhase::SlowStart);
    }

    #[test]
    fn post_congestion_slow_start_uses_cwnd_if_slow_start() {
        let mut e = rto_stall(); // SsthreshEst = 8
        let mut during = Vec::new();
        for w in [1u64, 2, 4] {
            for _ in 0..w {
                e.on_in_order_segment();
                e.on_non_duplicate_ack_sent();
            }
            during.push(e.estimate_segments());
            e.on_interval_end();
        }
        // Total = last segments + last ACKs + ACKs so far: 0+0+1, 1+1+2,
        // 2+2+4, never above SsthreshEst = 8.
        assert_eq!(during, [1, 4, 8]);
        // Total = 4 + 4 + 0.
        assert_eq!(e.estimate_segments(), 8);
        // One more ACK: Total = 9 > 8, the sender is past its threshold:
        // max(SsthreshEst, NumSegmentsLast) + 2 = max(8, 4) + 2.
        e.on_in_order_segment();
        e.on_non_duplicate_ack_sent();
        assert_eq!(e.estimate_segments(), 10);
        for _ in 0..7 {
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        e.on_interval_end();
        // Switch test: 8 > 8 + 2 fails. Total = 8 + 8 + 0 = 16 > 8:
        // max(8, 8) + 2.
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert_eq!(e.estimate_segments(), 10);
        // More segments last interval than SsthreshEst: that count wins.
        // 14 segments keep the switch off (16 > 14 + 2 fails); then
        // Total = 14 + 14 + 0 > 8 and the estimate is max(8, 14) + 2.
        interval(&mut e, 14, 14);
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert_eq!(e.estimate_segments(), 16);
    }

    #[test]
    fn switch_to_congestion_avoidance_when_all_four_conditions_hold() {
        let mut e = ready_to_switch();
        // 16 > 9 + 2, 8 > 2, no recent loss, not yet past the threshold.
        interval(&mut e, 9, 9);
        assert_eq!(e.phase(), CwndPhase::CongestionAvoidance);
        assert_eq!(e.cwnd_est, 10.0);
        assert_eq!(e.estimate_segments(), 10);
        // The boundary of the segment condition: 16 > 13 + 2 still holds.
        let mut b = ready_to_switch();
        interval(&mut b, 13, 13);
        assert_eq!(b.phase(), CwndPhase::CongestionAvoidance);
        assert_eq!(b.cwnd_est, 14.0);
    }

    #[test]
    fn switch_needs_cwnd_if_slow_start_above_segments_plus_two() {
        let mut e = ready_to_switch();
        interval(&mut e, 14, 14); // 16 > 14 + 2 fails
        assert_eq!(e.phase(), CwndPhase::SlowStart);
    }

    #[test]
    fn switch_needs_more_than_two_acks_last_interval() {
        // As in ready_to_switch, but the fourth interval delivered its 8
        // segments with only 2 or 3 (stretch) ACKs.
        let prepare = |acks: u64| {
            let mut e = rto_stall();
            for w in [1, 2, 4] {
                interval(&mut e, w, w);
            }
            interval(&mut e, 8, acks);
            e
        };
        let mut two = prepare(2);
        assert_eq!(two.cwnd_if_slow_start, 10); // 4 + 4 + 2
        interval(&mut two, 5, 5); // 10 > 7 holds, 2 > 2 fails
        assert_eq!(two.phase(), CwndPhase::SlowStart);
        let mut three = prepare(3);
        interval(&mut three, 5, 5); // 11 > 7 and 3 > 2
        assert_eq!(three.phase(), CwndPhase::CongestionAvoidance);
    }

    #[test]
    fn switch_needs_no_recent_loss() {
        let mut e = fast_retransmit_late();
        // 31 > 8 + 2 and 15 > 2, but the loss was last interval.
        interval(&mut e, 8, 8);
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert!(!e.seen_loss_recently, "an 8-segment interval clears it");
        // The same conditions one interval later: 38 > 16 + 2, 8 > 2.
        assert_eq!(e.cwnd_if_slow_start, 38);
        interval(&mut e, 16, 16);
        assert_eq!(e.phase(), CwndPhase::CongestionAvoidance);
        assert_eq!(e.estimate_segments(), 17);
    }

    #[test]
    fn switch_happens_only_once() {
        let mut e = ready_to_switch();
        interval(&mut e, 9, 9); // CwndEst = 10
                                // CwndIfSlowStart = 8 + 8 + 9.
        assert_eq!(e.cwnd_if_slow_start, 25);
        // 25 > 3 + 2, 9 > 2, no recent loss: only PastSsthresh stops a
        // re-initialisation to 3 + 1.
        interval(&mut e, 3, 3);
        assert!((e.cwnd_est - 10.297_058_634_122_804).abs() < 1e-12);
        assert_eq!(e.estimate_segments(), 10);
    }

    #[test]
    fn congestion_avoidance_grows_by_inverse_cwnd_est() {
        let mut e = ready_to_switch();
        interval(&mut e, 9, 9);
        assert_eq!(e.cwnd_est, 10.0);
        e.on_non_duplicate_ack_sent();
        assert!((e.cwnd_est - 10.1).abs() < 1e-12);
        e.on_non_duplicate_ack_sent();
        // 10.1 + 1 / 10.1
        assert!((e.cwnd_est - 10.199_009_900_990_099).abs() < 1e-12);
        for _ in 2..10 {
            e.on_non_duplicate_ack_sent();
        }
        // About 10.9586 after ten ACKs, 11.0499 after eleven.
        assert_eq!(e.estimate_segments(), 10);
        e.on_non_duplicate_ack_sent();
        assert_eq!(e.estimate_segments(), 11);
        // In-order segments do not grow it.
        e.on_in_order_segment();
        assert_eq!(e.estimate_segments(), 11);
    }

    #[test]
    fn counters_saturate() {
        let mut e = CwndEstimator {
            starting_cwnd: i64::MAX - 1,
            num_acks_this_interval: u64::MAX - 1,
            num_segments_this_interval: u64::MAX,
            ..CwndEstimator::default()
        };
        e.on_non_duplicate_ack_sent();
        e.on_non_duplicate_ack_sent();
        e.on_in_order_segment();
        assert_eq!(e.estimate_segments(), u32::MAX);
        e.on_third_duplicate_ack_sent();
        e.on_interval_end();
        e.on_interval_end();
        let _ = e.estimate_segments();
        let _ = e.ssthresh_estimate_segments();
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn at(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn intervals_start_on_first_call_and_close_at_their_end() {
        let mut r = RttIntervals::new();
        let mut e = CwndEstimator::default();
        assert_eq!(r.next_end(), None);
        assert_eq!(r.advance_counted(at(100), ms(100), &mut e), 0);
        assert_eq!(r.next_end(), Some(at(200)));
        e.on_in_order_segment();
        e.on_in_order_segment();
        assert_eq!(r.advance_counted(at(199), ms(100), &mut e), 0);
        assert_eq!(e.num_segments_this_interval, 2);
        // An interval ending exactly now is closed.
        r.advance(at(200), ms(100), &mut e);
        assert_eq!(e.num_segments_last_interval, 2);
        assert_eq!(e.num_segments_this_interval, 0);
        assert_eq!(r.next_end(), Some(at(300)));
        // Ends at 300, 400 and 500 ms.
        assert_eq!(r.advance_counted(at(560), ms(100), &mut e), 3);
        assert_eq!(r.next_end(), Some(at(600)));
        // A new RTT applies from the pending end on: 600, then 650, 700.
        assert_eq!(r.advance_counted(at(700), ms(50), &mut e), 3);
        assert_eq!(r.next_end(), Some(at(750)));
    }

    #[test]
    fn zero_rtt_is_ignored() {
        let mut r = RttIntervals::default();
        let mut e = CwndEstimator::default();
        r.advance(at(0), Duration::ZERO, &mut e);
        assert_eq!(r.next_end(), None, "no interval starts without an RTT");
        r.advance(at(0), ms(10), &mut e);
        assert_eq!(r.advance_counted(at(1_000), Duration::ZERO, &mut e), 0);
        assert_eq!(r.next_end(), Some(at(10)));
    }

    #[test]
    fn catch_up_detects_a_stall() {
        let mut e = initial_slow_start_to_16();
        let mut r = RttIntervals::new();
        r.advance(at(0), ms(100), &mut e);
        for _ in 0..8 {
            r.advance(at(50), ms(100), &mut e);
            e.on_in_order_segment();
            e.on_non_duplicate_ack_sent();
        }
        assert_eq!(e.estimate_segments(), 24);
        // Nothing more until 350 ms: ends at 100 (8 segments), 200 and 300
        // (empty). The second empty interval is the loss: 24 / 2.
        assert_eq!(r.advance_counted(at(350), ms(100), &mut e), 3);
        assert_eq!(e.ssthresh_estimate_segments(), Some(12));
        assert_eq!(e.phase(), CwndPhase::SlowStart);
        assert_eq!(e.estimate_segments(), 1);
    }

    #[test]
    fn catch_up_is_capped_and_skips_ahead() {
        let mut e = CwndEstimator::default();
        let mut r = RttIntervals::new();
        r.advance(at(0), ms(1), &mut e);
        // A million intervals passed; 64 are replayed.
        assert_eq!(r.advance_counted(at(1_000_000), ms(1), &mut e), 64);
        assert_eq!(r.next_end(), Some(at(1_000_001)));
        assert_eq!(r.advance_counted(at(1_000_000), ms(1), &mut e), 0);
        // The far future with a one-nanosecond RTT: still 64, no overflow.
        let far = Instant::from_nanos(u64::MAX);
        assert_eq!(
            r.advance_counted(far, Duration::from_nanos(1), &mut e),
            RttIntervals::MAX_CATCH_UP
        );
        assert_eq!(r.next_end(), Some(far));
        r.advance(far, Duration::MAX, &mut e);
    }
}
