//! Smartacking (paper 004 sec. 3): the receiver acknowledges every
//! segment while the bottleneck has room and, once it is saturated,
//! holds each ACK until just before the sender would run out of window.

use super::peer_model::{PeerModel, RttChoice};
use super::{AckDecision, AckPolicy, AckSent, ArrivalInfo};
use crate::estimators::Isat;
use crate::time::{Duration, Instant};
use crate::wire::AckRequest;

/// The RTT a smartacking receiver compares `LastSegmentTime` with
/// (paper 004 sec. 3.2 and 5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmartRtt {
    /// The smoothed RTT (RFC 6298) of the receiver's timestamp samples:
    /// the paper's receiver.
    Smoothed,
    /// The first sample, never updated (paper 004 sec. 5.4's "fixed
    /// RTT", which cured the receiver's losses on a slow reverse path).
    Fixed,
    /// ackwise's own: the minimum over the last 10 s. Like the fixed RTT
    /// it ignores queueing on the reverse path, but it follows a path
    /// whose base delay changes.
    WindowedMin,
}

impl SmartRtt {
    fn choice(self) -> RttChoice {
        match self {
            SmartRtt::Smoothed => RttChoice::Smoothed,
            SmartRtt::Fixed => RttChoice::First,
            SmartRtt::WindowedMin => RttChoice::WindowedMin,
        }
    }
}

/// Settings of a [`Smart`] receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmartParams {
    /// Longest an ACK is held after the first segment it covers (paper
    /// 004 sec. 4.2: 200 ms).
    pub max_delay: Duration,
    /// The RTT compared with `LastSegmentTime`.
    pub rtt: SmartRtt,
    /// Extended smartacking (sec. 4.1): alpha adapts.
    pub extended: bool,
    /// Where the congestion-window estimate starts, segments.
    pub initial_window_segments: u32,
    /// Outside slow start, never acknowledge more often than a delayed
    /// ACK would (every second segment), even while the bottleneck has
    /// room. ackwise's own (part of `smart-minrtt`): in congestion
    /// avoidance an ACK per segment only makes a NewReno sender grow
    /// faster than a standard receiver lets it, and when the estimate of
    /// the spacing is wrong (arrivals clumped by cross traffic, sec. 4.1)
    /// the paper's receiver falls back to exactly that.
    pub delayed_ack_floor: bool,
    /// Use the congestion window the sender announces
    /// ([`AckRequest::SenderWindow`]) instead of the estimate, while it
    /// announces one: paper 004's explicit assistance, which measures
    /// what receiver-only estimation costs.
    pub assisted: bool,
    /// Gaps averaged into each ISAT sample (see
    /// [`Isat::with_span`]); 1, the paper's, takes every gap. ackwise's
    /// `+span` uses [`SPAN_SEGMENTS`](Self::SPAN_SEGMENTS), for paths that
    /// deliver segments in clumps.
    pub isat_span_segments: u32,
    /// At least this many ACKs per estimated window (0: no floor): an ACK
    /// goes out once the segments held since the last one reach
    /// `CwndEst / min_acks_per_window` (at least 2), however long the
    /// spacing says it could wait. ackwise's own (`+floor`). Paper 003
    /// sec. 3.1: with `x` ACKs per window the window must reach
    /// `x / (x - 1)` BDP to keep the bottleneck busy; smartacking's one
    /// ACK per window leaves no margin when the estimate of the window or
    /// of the spacing is off, and a sender with a window near the BDP
    /// then idles between its bursts. [`FLOOR_ACKS`](Self::FLOOR_ACKS) is
    /// `+floor`'s.
    pub min_acks_per_window: u32,
}

impl SmartParams {
    /// Paper 004's receiver: smoothed RTT, 200 ms maximum delay, the
    /// estimate starting at one segment.
    pub const PAPER: SmartParams = SmartParams {
        max_delay: Duration::from_millis(200),
        rtt: SmartRtt::Smoothed,
        extended: false,
        initial_window_segments: 1,
        delayed_ack_floor: false,
        assisted: false,
        isat_span_segments: 1,
        min_acks_per_window: 0,
    };

    /// The span of `+span`: long enough to cover the clumps that receive
    /// offload or a shaper's bucket make of a burst, short enough to
    /// follow a window's spacing.
    pub const SPAN_SEGMENTS: u32 = 8;

    /// The floor of `+floor`: four ACKs per window need a window of 4/3
    /// BDP (paper 003's equation 1), as `4W` senders ask for. Measured
    /// through Linux's senders at 20 ms and 20 Mbit/s (`tun_interop`),
    /// `smart-minrtt+span` took 1.057x the kernel receiver's time against
    /// bbr with 142 ACKs; with this floor 1.013x with 215 (the kernel's
    /// receiver: 2 789).
    pub const FLOOR_ACKS: u32 = 4;
}

impl Default for SmartParams {
    fn default() -> Self {
        SmartParams::PAPER
    }
}

/// The receiver-only smartacking policy.
///
/// On each in-order arrival it predicts when the last segment the
/// sender's window allows will arrive (equation 1):
///
/// `LastSegmentTime = (CwndEst + LastACKed - LastReceived) * ISAT`
///
/// and acknowledges at once when that is less than `alpha * RTT` (the
/// bottleneck is not yet full: the sender's window runs out before an
/// RTT of spacing), otherwise within `LastSegmentTime - alpha * RTT`, so
/// the ACK reaches the sender as its window is about to close, and never
/// later than `max_delay` after the first unacknowledged segment. `alpha`
/// is 1 except in extended smartacking.
///
/// Out-of-order segments, gap fills, duplicates, FIN and arrivals while a
/// hole remains are acknowledged at once (RFC 5681 section 4.2), and so is
/// everything until the receiver has both an RTT and an ISAT.
#[derive(Debug, Clone)]
pub struct Smart {
    params: SmartParams,
    model: PeerModel,
    isat: Isat,
    /// Byte offset where the current window of the sender ends, by the
    /// estimate: the arrival that crosses it starts a new window, and the
    /// gap before it is idle time, not spacing (sec. 3.2).
    window_end: u64,
    first_unacked: Option<Instant>,
    alpha: Alpha,
    /// The sender's latest announced window, segments (assisted mode).
    announced: Option<u32>,
}

/// Extended smartacking's alpha, beta and gamma (paper 004 sec. 4.1).
///
/// alpha starts at 1 and is left alone until the receiver has sent a
/// third duplicate ACK; after that each decrease of the window estimate
/// multiplies it by 0.9. beta plays the threshold to alpha's window: the
/// paper does not say when beta is set, so ackwise sets it to the alpha
/// from before each such cut, which makes alpha climb back by 0.05 per
/// step up to where it was and then drift down by 0.01 per step, as a
/// window does in slow start and congestion avoidance. gamma counts ACKs
/// that covered a single segment (+1) against those that covered more
/// (-1); a step happens when gamma falls below `-4 * CwndEst`, i.e. when
/// most ACKs already cover several segments.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Alpha {
    enabled: bool,
    alpha: f64,
    beta: f64,
    gamma: i64,
    may_reduce: bool,
    last_estimate: u32,
}

impl Alpha {
    fn new(enabled: bool) -> Self {
        Alpha {
            enabled,
            alpha: 1.0,
            beta: 1.0,
            gamma: 0,
            may_reduce: false,
            last_estimate: 0,
        }
    }

    fn on_estimate(&mut self, estimate: u32) {
        if self.enabled && self.may_reduce && estimate < self.last_estimate {
            self.beta = self.alpha;
            self.alpha *= 0.9;
        }
        self.last_estimate = estimate;
    }

    fn on_ack(&mut self, segments_acked: u64, cwnd_estimate: u32) {
        if !self.enabled {
            return;
        }
        if segments_acked <= 1 {
            self.gamma += 1;
        } else {
            self.gamma -= 1;
        }
        if self.gamma < -4 * i64::from(cwnd_estimate) {
            self.gamma = 0;
            if self.beta > self.alpha {
                self.alpha = (self.alpha + 0.05).min(1.0);
            } else {
                self.alpha = (self.alpha - 0.01).max(0.0);
            }
        }
    }
}

impl Smart {
    /// A smartacking receiver.
    pub fn new(params: SmartParams) -> Self {
        Smart {
            params,
            model: PeerModel::new(params.initial_window_segments.max(1)),
            isat: Isat::with_span(params.isat_span_segments),
            window_end: 0,
            first_unacked: None,
            alpha: Alpha::new(params.extended),
            announced: None,
        }
    }

    /// The settings.
    pub fn params(&self) -> SmartParams {
        self.params
    }

    /// Current alpha (1 unless extended).
    pub fn alpha(&self) -> f64 {
        self.alpha.alpha
    }

    /// The smoothed inter-segment arrival time.
    pub fn isat(&self) -> Option<Duration> {
        self.isat.isat()
    }

    /// CwndEst: the sender's announced window in assisted mode, else the
    /// receiver's estimate (figure 1).
    fn cwnd_segments(&self) -> u32 {
        match self.announced {
            Some(w) if self.params.assisted => w.max(1),
            _ => self.model.cwnd_segments(),
        }
    }

    /// Equation 1: how long until the last segment the estimated window
    /// allows arrives, from now; `None` before ISAT is known.
    pub fn last_segment_time(&self) -> Option<Duration> {
        let isat = self.isat.isat()?;
        let expected = i64::from(self.cwnd_segments())
            - self.model.unacked_segments().min(i64::MAX as u64) as i64;
        let expected = u32::try_from(expected.max(0)).unwrap_or(u32::MAX);
        Some(isat.saturating_mul(expected))
    }

    /// Records the in-order arrival for ISAT, deciding whether it opens a
    /// new window of the sender.
    fn time_arrival(&mut self, info: &ArrivalInfo, previous_edge: u64) {
        let first_of_window = previous_edge >= self.window_end;
        if first_of_window {
            let window = u64::from(self.cwnd_segments()) * self.model.segment_size();
            self.window_end = previous_edge + window;
        }
        self.isat.on_arrival(info.now, first_of_window);
    }
}

impl AckPolicy for Smart {
    fn name(&self) -> &'static str {
        "smart"
    }

    fn on_segment(&mut self, info: &ArrivalInfo) -> AckDecision {
        let previous_edge = self.model.last_received();
        if let Some(AckRequest::SenderWindow(w)) = info.ack_request {
            self.announced = Some(w);
        }
        self.model.on_segment(info);
        self.alpha.on_estimate(self.model.cwnd_segments());
        let in_order_new = !info.out_of_order && !info.duplicate && info.rcv_nxt > previous_edge;
        if in_order_new && !info.filled_gap {
            self.time_arrival(info, previous_edge);
        }
        if info.out_of_order || info.filled_gap || info.duplicate || info.fin || info.has_gaps {
            return AckDecision::Now;
        }
        let first = *self.first_unacked.get_or_insert(info.now);
        if self.params.min_acks_per_window > 0 {
            let per_ack = (u64::from(self.cwnd_segments())
                / u64::from(self.params.min_acks_per_window))
            .max(2);
            if self.model.unacked_segments() >= per_ack {
                return AckDecision::Now;
            }
        }
        let (Some(rtt), Some(last)) = (
            self.model.rtt(self.params.rtt.choice()),
            self.last_segment_time(),
        ) else {
            return AckDecision::Now;
        };
        let threshold = rtt.mul_f64(self.alpha.alpha);
        if last < threshold {
            if self.params.delayed_ack_floor
                && self.model.in_congestion_avoidance()
                && self.model.unacked_segments() < 2
            {
                return AckDecision::By(first + self.params.max_delay);
            }
            return AckDecision::Now;
        }
        let deadline = (info.now + (last - threshold)).min(first + self.params.max_delay);
        if deadline <= info.now {
            AckDecision::Now
        } else {
            AckDecision::By(deadline)
        }
    }

    fn on_timer(&mut self, now: Instant) -> AckDecision {
        self.model.tick(now);
        AckDecision::Now
    }

    fn on_ack_sent(&mut self, ack: &AckSent) {
        if let Some(segments) = self.model.segments_newly_acked(ack) {
            self.alpha.on_ack(segments, self.model.cwnd_segments());
        }
        self.model.on_ack_sent(ack);
        if ack.duplicate && !self.alpha.may_reduce {
            // alpha may only shrink once loss has been seen (sec. 4.1);
            // the model counts the run, the third duplicate unlocks it.
            self.alpha.may_reduce = self.model.left_initial_slow_start();
        }
        self.alpha.on_estimate(self.model.cwnd_segments());
        self.first_unacked = None;
    }

    fn cwnd_estimate_segments(&self) -> Option<u32> {
        Some(self.cwnd_segments())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u64 = 1000;

    fn seg(n: u64, at: Duration) -> ArrivalInfo {
        let mut a = ArrivalInfo::in_order(Instant::ZERO + at, SEG as usize, true);
        a.rcv_nxt = n * SEG;
        a.segment_size = SEG as usize;
        a.rtt_sample = Some(Duration::from_millis(100));
        a
    }

    fn smart(initial_window_segments: u32) -> Smart {
        Smart::new(SmartParams {
            initial_window_segments,
            ..SmartParams::default()
        })
    }

    /// Feeds `count` in-order segments `gap` apart; sends the ACKs asked
    /// for at once and returns the decisions.
    fn feed(p: &mut Smart, count: u64, gap: Duration) -> Vec<AckDecision> {
        (1..=count)
            .map(|n| {
                let a = seg(n, gap * (n as u32));
                let d = p.on_segment(&a);
                if d == AckDecision::Now {
                    p.on_ack_sent(&AckSent::new(a.now, a.rcv_nxt));
                }
                d
            })
            .collect()
    }

    #[test]
    fn every_segment_is_acknowledged_while_the_window_drains_within_an_rtt() {
        // 10 segments 1 ms apart: whatever the window, the estimate says
        // the last one arrives within the 100 ms RTT: the bottleneck has
        // room, so nothing is held.
        let mut p = smart(1);
        assert!(feed(&mut p, 10, Duration::from_millis(1))
            .iter()
            .all(|d| *d == AckDecision::Now));
        assert_eq!(p.isat(), Some(Duration::from_millis(1)));
        // One per non-duplicate ACK in the initial slow start.
        assert_eq!(p.cwnd_estimate_segments(), Some(11));
    }

    #[test]
    fn acks_are_held_once_the_window_spreads_over_more_than_an_rtt() {
        // A 50-segment window arriving 5 ms apart spans 250 ms > RTT.
        let mut p = smart(50);
        let d = feed(&mut p, 2, Duration::from_millis(5));
        // The first has no ISAT yet.
        assert_eq!(d[0], AckDecision::Now);
        // Then LastSegmentTime = (51 - 1) * 5 ms = 250 ms: hold for
        // 250 - 100 = 150 ms.
        assert_eq!(p.last_segment_time(), Some(Duration::from_millis(250)));
        assert_eq!(d[1], AckDecision::By(Instant::from_millis(160)));
    }

    #[test]
    fn the_floor_acknowledges_a_quarter_window_however_long_the_hold() {
        // A 40-segment window 5 ms apart: the spacing alone holds every
        // ACK after the first (LastSegmentTime far beyond the RTT).
        let held = |min_acks_per_window| {
            let mut p = Smart::new(SmartParams {
                initial_window_segments: 40,
                min_acks_per_window,
                ..SmartParams::default()
            });
            let decisions = feed(&mut p, 21, Duration::from_millis(5));
            decisions
                .iter()
                .enumerate()
                .filter(|(_, d)| **d == AckDecision::Now)
                .map(|(i, _)| i + 1)
                .collect::<Vec<_>>()
        };
        assert_eq!(held(0), [1]);
        // With four per window: every 10th segment (40 / 4) after the
        // first; the estimate grows by one per ACK sent in slow start.
        assert_eq!(held(4), [1, 11, 21]);
        // A small window still waits for two segments.
        let mut p = Smart::new(SmartParams {
            initial_window_segments: 3,
            min_acks_per_window: 4,
            ..SmartParams::default()
        });
        let spaced = feed(&mut p, 3, Duration::from_millis(60));
        assert_eq!(spaced[0], AckDecision::Now);
    }

    #[test]
    fn the_hold_never_exceeds_the_maximum_delay() {
        let mut p = smart(500);
        let d = feed(&mut p, 2, Duration::from_millis(5));
        // 500 segments * 5 ms is far beyond 200 ms after segment 2.
        assert_eq!(d[1], AckDecision::By(Instant::from_millis(210)));
    }

    #[test]
    fn holes_and_unknown_rtt_mean_acknowledging_at_once() {
        let mut p = smart(500);
        feed(&mut p, 2, Duration::from_millis(5));
        let mut ooo = seg(5, Duration::from_millis(20));
        ooo.rcv_nxt = 2 * SEG;
        ooo.out_of_order = true;
        ooo.has_gaps = true;
        assert_eq!(p.on_segment(&ooo), AckDecision::Now);
        // No RTT sample ever: nothing is held.
        let mut p = smart(500);
        for n in 1..5 {
            let mut a = seg(n, Duration::from_millis(5 * n));
            a.rtt_sample = None;
            assert_eq!(p.on_segment(&a), AckDecision::Now);
        }
    }

    #[test]
    fn the_fixed_rtt_variant_keeps_the_first_sample() {
        let mut p = Smart::new(SmartParams {
            rtt: SmartRtt::Fixed,
            initial_window_segments: 50,
            ..SmartParams::default()
        });
        feed(&mut p, 1, Duration::from_millis(5));
        // The reverse path queues: later samples say 400 ms.
        let mut a = seg(2, Duration::from_millis(10));
        a.rtt_sample = Some(Duration::from_millis(400));
        // Still compared with 100 ms: hold for 250 - 100 ms.
        assert_eq!(p.on_segment(&a), AckDecision::By(Instant::from_millis(160)));
    }

    #[test]
    fn the_delayed_ack_floor_applies_in_congestion_avoidance_only() {
        let floor = SmartParams {
            delayed_ack_floor: true,
            ..SmartParams::default()
        };
        // Initial slow start: every segment, as the paper's receiver.
        let mut p = Smart::new(floor);
        assert!(feed(&mut p, 6, Duration::from_millis(1))
            .iter()
            .all(|d| *d == AckDecision::Now));
        // Leave slow start: three duplicate ACKs end the initial phase,
        // then intervals with far fewer segments than slow start would
        // deliver switch the estimate to congestion avoidance.
        for i in 0..3 {
            p.on_ack_sent(&AckSent {
                now: Instant::from_millis(7 + i),
                acked_to: 6 * SEG,
                duplicate: true,
            });
        }
        let mut n = 6;
        let mut decisions = Vec::new();
        for rtt in 1..=12u64 {
            for k in 0..4u64 {
                n += 1;
                let a = seg(n, Duration::from_millis(100 * rtt + 20 * k));
                let d = p.on_segment(&a);
                if d == AckDecision::Now {
                    p.on_ack_sent(&AckSent::new(a.now, a.rcv_nxt));
                } else if k % 2 == 1 {
                    // The delayed-ACK timer would fire; acknowledge.
                    p.on_ack_sent(&AckSent::new(a.now, a.rcv_nxt));
                }
                decisions.push(d);
            }
        }
        assert!(p.model.in_congestion_avoidance(), "{:?}", p.model);
        // In congestion avoidance a lone segment waits for a second one.
        let held = decisions[decisions.len() - 8..]
            .iter()
            .filter(|d| matches!(d, AckDecision::By(_)))
            .count();
        assert!(held >= 3, "{decisions:?}");
    }

    #[test]
    fn extended_alpha_follows_the_window_estimate() {
        let mut a = Alpha::new(true);
        a.on_estimate(20);
        a.on_estimate(10);
        // Not before a third duplicate ACK.
        assert_eq!(a.alpha, 1.0);
        a.may_reduce = true;
        a.on_estimate(20);
        a.on_estimate(10);
        assert!((a.alpha - 0.9).abs() < 1e-12);
        assert_eq!(a.beta, 1.0);
        // Most ACKs cover several segments: once gamma < -4 * CwndEst,
        // alpha climbs by 0.05 towards beta...
        for _ in 0..41 {
            a.on_ack(2, 10);
        }
        assert!((a.alpha - 0.95).abs() < 1e-12);
        assert_eq!(a.gamma, 0);
        for _ in 0..41 {
            a.on_ack(2, 10);
        }
        assert!((a.alpha - 1.0).abs() < 1e-12);
        // ...and past it drifts down by 0.01.
        for _ in 0..41 {
            a.on_ack(2, 10);
        }
        assert!((a.alpha - 0.99).abs() < 1e-12);
        // Single-segment ACKs push gamma up instead.
        a.on_ack(1, 10);
        assert_eq!(a.gamma, 1);
        // Disabled: nothing moves.
        let mut off = Alpha::new(false);
        off.may_reduce = true;
        off.on_estimate(20);
        off.on_estimate(1);
        off.on_ack(5, 1);
        assert_eq!(off.alpha, 1.0);
        assert_eq!(off.gamma, 0);
    }
}
