//! ACK-request strategies: how often the sender asks the receiver for an
//! acknowledgment (paper 003 sec. 3).
//!
//! The sender knows its send window, so it, not the receiver, can keep the
//! ACK rate at a fixed number per window (`xW`) or at every n-th segment
//! without falling below the lower bound of two ACKs per send window
//! (sec. 3.1: one ACK per window turns TCP into stop-and-wait, two are the
//! least that can fill the pipe). Requests travel in the experimental
//! option as a countdown ([`AckRequest::Countdown`](crate::wire::AckRequest)):
//! every segment of a group says how many more segments the receiver may
//! take before it owes the ACK, so the receiver still knows when the ACK
//! is due if the last segment of the group is lost or reordered.
//!
//! A strategy only chooses the group size; [`Requester`] turns group sizes
//! into per-segment countdowns. The group size is also the number of
//! segments one ACK is expected to cover, which the sender uses as its
//! byte-counting limit L (paper 003 sec. 4.2).

use crate::time::Duration;
use alloc::boxed::Box;
use core::fmt::Debug;

/// What a strategy may look at when it sizes the next group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowInfo {
    /// The send window, min(cwnd, peer window), in whole segments (at
    /// least 1).
    pub window_segments: u64,
    /// The sender is in slow start.
    pub in_slow_start: bool,
    /// Smoothed RTT, once measured.
    pub srtt: Option<Duration>,
    /// Smallest RTT seen, once measured.
    pub min_rtt: Option<Duration>,
    /// Moving average of the requested ACKs that did not come back,
    /// scaled by [`ack_loss::SCALE`](super::ack_loss::SCALE).
    pub acks_lost: u32,
    /// The connection has had a retransmission timeout.
    pub timed_out: bool,
}

/// Chooses how many segments each requested ACK covers.
pub trait AckRequestStrategy: Debug + Send {
    /// Short name for logs.
    fn name(&self) -> &'static str;

    /// Segments the next ACK should cover (at least 1); `None` leaves the
    /// receiver to its own policy.
    fn group_segments(&self, window: &WindowInfo) -> Option<u32>;

    /// Whether the sender may count the segments the receiver holds for
    /// the current group as delivered ([`hold_credit`](super::hold_credit)):
    /// only strategies that size their groups for it say yes.
    fn credits_hold(&self) -> bool {
        false
    }

    /// Whether the strategy reads [`WindowInfo::acks_lost`]: the sender
    /// tracks its request points ([`ack_loss`](super::ack_loss)) only
    /// then.
    fn counts_ack_loss(&self) -> bool {
        false
    }

    /// Whether the strategy asks for groups of several segments in slow
    /// start: the sender then spreads what each ACK releases there too,
    /// at twice the delivery rate ([`spread`](super::spread)).
    fn sparse_slow_start(&self) -> bool {
        false
    }
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX).max(1)
}

/// `xW`: `acks` ACKs per send window (paper 003's 2W and 4W). Groups are
/// `ceil(window / acks)` segments, so a window never draws more than
/// `acks` ACKs and every window draws at least one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerWindow {
    /// ACKs per send window (at least 1; the paper uses 2 and 4).
    pub acks: u32,
}

impl AckRequestStrategy for PerWindow {
    fn name(&self) -> &'static str {
        "per-window"
    }

    fn group_segments(&self, window: &WindowInfo) -> Option<u32> {
        let acks = u64::from(self.acks.max(1));
        Some(clamp_u32(window.window_segments.div_ceil(acks)))
    }
}

/// `AnLn`: an ACK for every `segments`-th segment (paper 003's A4L4 and
/// A8L8), but never fewer than two ACKs per send window (sec. 3.2): in a
/// window of `w` segments a group is at most `w / 2` segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EveryN {
    /// Segments per ACK when the window is large enough.
    pub segments: u32,
}

impl AckRequestStrategy for EveryN {
    fn name(&self) -> &'static str {
        "every-n"
    }

    fn group_segments(&self, window: &WindowInfo) -> Option<u32> {
        let bound = (window.window_segments / 2).max(1);
        Some(clamp_u32(u64::from(self.segments.max(1)).min(bound)))
    }
}

/// `4w-adaptive`, ackwise's own: as many ACKs per window as the window
/// needs to keep the bottleneck busy, at least `min_acks`; or, with
/// [`hold_credit_from`](Self::hold_credit_from), `min_acks` in congestion
/// avoidance and the sender's hold credit in place of the extra ACKs.
///
/// Paper 003's equation 1 says `x` ACKs per window need a window of at
/// least `x / (x - 1)` BDP to fill the path. The sender does not know the
/// BDP, but its window in flight over the path's BDP is SRTT over the
/// minimum RTT (the rest is queue), so the condition becomes
/// `x >= SRTT / (SRTT - min RTT)`. Right after a halving the queue is
/// empty, SRTT is near the minimum and the window needs many ACKs; once a
/// third of an RTT of queue has built up, 4 per window are enough again,
/// so the extra ACKs are spent exactly when they matter. `max_acks` caps
/// the rate when the queue is empty altogether.
///
/// The gap equation 1 describes is the group the receiver holds until its
/// last segment arrives; the sender can instead count that group as
/// delivered ([`hold_credit`](super::hold_credit)), and then needs no extra
/// ACKs to fill the path. With `hold_credit_from: Some(n)`, a window of
/// `n` segments or more in congestion avoidance asks for `min_acks` only,
/// and the sender covers the hold. Slow start and smaller windows keep the
/// queue rule: in slow start an ACK for a quarter of the window releases
/// half a window at once (the spreader does not act there), which
/// overflows a short buffer a round trip early and leaves a lower
/// ssthresh (gauntlet seed 1 case 15, one flow, a 40-packet buffer at 0.12
/// BDP: slow start ended at a window of 145 segments instead of 204 and
/// the flow took 1.08x AE's time instead of 0.92x).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdaptivePerWindow {
    /// ACKs per window when a queue covers the ACK clock's gaps.
    pub min_acks: u32,
    /// ACKs per window with no queue at all.
    pub max_acks: u32,
    /// Window, in segments, from which congestion avoidance asks for
    /// `min_acks` and relies on the hold credit; `None` never does.
    pub hold_credit_from: Option<u32>,
    /// Once the connection has had a retransmission timeout, and where
    /// the hold credit sets the request count (congestion avoidance from
    /// `hold_credit_from` on), ask for more ACKs per window as requested
    /// ACKs go missing on the way back (see [`ack_loss`](super::ack_loss)),
    /// up to `max_acks`. Before a timeout the ACK clock has survived its
    /// losses; in smaller windows the groups are already of one to three
    /// segments, and asking more of a return link that drops ACKs only
    /// fills it further. Measured on the gauntlet in `ack_loss`.
    pub ack_loss_compensation: bool,
    /// In slow start, ask for this many ACKs per window instead of the
    /// queue rule (which asks for one per segment while the queue is
    /// empty, as it is through most of a slow start). The sender then
    /// spreads what each ACK releases at twice the delivery rate, the
    /// pace at which an ACK per segment would release it, so the groups
    /// do not reach the bottleneck as bursts. `None` keeps the queue
    /// rule. The lab's `+sparse-start`; measured in the README.
    pub slow_start_acks: Option<u32>,
}

impl AdaptivePerWindow {
    /// The default strategy's `hold_credit_from`, in segments: a window
    /// of 16 asks for groups of 4. Measured on the gauntlet (seeds 1-3,
    /// 5 replicates, against 32 per window below it): from 1 segment on,
    /// 43 of 600 cases were clearly above 1.05x AE's completion against
    /// 24 from 16 on (both with a spreading gain of 1.5), since groups of
    /// 2 and 3 in windows of 5 to 15 segments slow the ACK clock of
    /// flows that share a buffer of a few packets.
    pub const HOLD_CREDIT_FROM: u32 = 16;

    /// ACKs per window for this RTT and minimum RTT.
    pub fn acks_for(&self, srtt: Option<Duration>, min_rtt: Option<Duration>) -> u32 {
        let (lo, hi) = (
            self.min_acks.max(1),
            self.max_acks.max(self.min_acks.max(1)),
        );
        let (Some(srtt), Some(min)) = (srtt, min_rtt) else {
            return lo;
        };
        let queue = srtt.saturating_sub(min).as_nanos();
        if queue == 0 {
            return hi;
        }
        let needed = srtt.as_nanos().div_ceil(queue);
        u32::try_from(needed).unwrap_or(hi).clamp(lo, hi)
    }

    /// `acks` requests per window scaled up so that `acks` of them arrive
    /// when the fraction `lost` (scaled by
    /// [`ack_loss::SCALE`](super::ack_loss::SCALE)) goes missing, never
    /// above `max_acks` nor below `acks`.
    pub fn compensate_ack_loss(&self, acks: u32, lost: u32) -> u32 {
        let scale = u64::from(super::ack_loss::SCALE);
        let arriving = scale.saturating_sub(u64::from(lost)).max(1);
        let wanted = (u64::from(acks) * scale).div_ceil(arriving);
        clamp_u32(wanted).min(self.max_acks.max(acks))
    }
}

impl AckRequestStrategy for AdaptivePerWindow {
    fn name(&self) -> &'static str {
        "adaptive-per-window"
    }

    fn group_segments(&self, window: &WindowInfo) -> Option<u32> {
        let credited = self
            .hold_credit_from
            .is_some_and(|from| !window.in_slow_start && window.window_segments >= u64::from(from));
        let acks = if let (true, Some(n)) = (window.in_slow_start, self.slow_start_acks) {
            n.max(1)
        } else if !credited {
            self.acks_for(window.srtt, window.min_rtt)
        } else if self.ack_loss_compensation && window.timed_out {
            self.compensate_ack_loss(self.min_acks.max(1), window.acks_lost)
        } else {
            self.min_acks.max(1)
        };
        Some(clamp_u32(window.window_segments.div_ceil(u64::from(acks))))
    }

    fn credits_hold(&self) -> bool {
        self.hold_credit_from.is_some()
    }

    fn counts_ack_loss(&self) -> bool {
        self.ack_loss_compensation
    }

    fn sparse_slow_start(&self) -> bool {
        self.slow_start_acks.is_some()
    }
}

/// Asks for nothing: the receiver's own policy decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoRequests;

impl AckRequestStrategy for NoRequests {
    fn name(&self) -> &'static str {
        "none"
    }

    fn group_segments(&self, _window: &WindowInfo) -> Option<u32> {
        None
    }
}

/// Turns a strategy's group sizes into per-segment countdowns.
#[derive(Debug)]
pub struct Requester {
    strategy: Box<dyn AckRequestStrategy>,
    /// Ask for an ACK of every segment while in slow start, so that slow
    /// start doubles per RTT without paper 003's "byte counting delay"
    /// (sec. 4.2).
    every_segment_in_slow_start: bool,
    /// Segments still to send in the current group.
    left: u32,
    /// Size of the current group.
    group: u32,
}

impl Requester {
    /// A requester for `strategy`.
    pub fn new(strategy: Box<dyn AckRequestStrategy>, every_segment_in_slow_start: bool) -> Self {
        Requester {
            strategy,
            every_segment_in_slow_start,
            left: 0,
            group: 1,
        }
    }

    /// The strategy's name.
    pub fn name(&self) -> &'static str {
        self.strategy.name()
    }

    /// Size of the group being sent (segments one ACK covers).
    pub fn group_segments(&self) -> u32 {
        self.group
    }

    /// Whether the strategy lets the sender count the receiver's held
    /// group as delivered ([`AckRequestStrategy::credits_hold`]).
    pub fn credits_hold(&self) -> bool {
        self.strategy.credits_hold()
    }

    /// Whether the strategy reads the lost-ACK estimate
    /// ([`AckRequestStrategy::counts_ack_loss`]).
    pub fn counts_ack_loss(&self) -> bool {
        self.strategy.counts_ack_loss()
    }

    /// Whether slow start asks for sparse groups
    /// ([`AckRequestStrategy::sparse_slow_start`]); not when every
    /// segment is asked for there.
    pub fn sparse_slow_start(&self) -> bool {
        !self.every_segment_in_slow_start && self.strategy.sparse_slow_start()
    }

    /// The countdown for the next new segment; `None` when the strategy
    /// asks for nothing. Starting a group re-reads the window, so the
    /// group size follows cwnd.
    pub fn next_countdown(&mut self, window: &WindowInfo) -> Option<u16> {
        if self.left == 0 {
            let group = if self.every_segment_in_slow_start && window.in_slow_start {
                Some(1)
            } else {
                self.strategy.group_segments(window)
            }?;
            // The option carries 16 bits.
            self.group = group.clamp(1, u32::from(u16::MAX) + 1);
            self.left = self.group;
        }
        self.left -= 1;
        Some(self.left as u16)
    }

    /// Forgets the current group, so the next segment starts a fresh one
    /// sized from the window then (after a timeout or recovery the old
    /// group no longer matches the window).
    pub fn restart(&mut self) {
        self.left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(w: u64) -> WindowInfo {
        WindowInfo {
            window_segments: w,
            in_slow_start: false,
            srtt: None,
            min_rtt: None,
            acks_lost: 0,
            timed_out: false,
        }
    }

    #[test]
    fn adaptive_asks_for_more_when_the_queue_is_short() {
        let a = AdaptivePerWindow {
            min_acks: 4,
            max_acks: 32,
            hold_credit_from: None,
            ack_loss_compensation: false,
            slow_start_acks: None,
        };
        assert!(!a.credits_hold());
        let ms = Duration::from_millis;
        // No estimate yet: the floor.
        assert_eq!(a.acks_for(None, None), 4);
        // No queue: the ceiling.
        assert_eq!(a.acks_for(Some(ms(100)), Some(ms(100))), 32);
        // 10 ms of queue on 100 ms: 110 / 10 = 11 ACKs per window.
        assert_eq!(a.acks_for(Some(ms(110)), Some(ms(100))), 11);
        // A third of an RTT of queue or more: four are enough.
        assert_eq!(a.acks_for(Some(ms(134)), Some(ms(100))), 4);
        assert_eq!(a.acks_for(Some(ms(300)), Some(ms(100))), 4);
        let mut w = window(320);
        w.srtt = Some(ms(110));
        w.min_rtt = Some(ms(100));
        assert_eq!(a.group_segments(&w), Some(30));
    }

    #[test]
    fn after_a_timeout_lost_acks_raise_the_request_count_up_to_the_ceiling() {
        let mut a = AdaptivePerWindow {
            min_acks: 4,
            max_acks: 32,
            hold_credit_from: Some(16),
            ack_loss_compensation: true,
            slow_start_acks: None,
        };
        let scale = crate::sender::ack_loss::SCALE;
        let lost = |a: &AdaptivePerWindow, w: u64, lost: u32| {
            a.group_segments(&WindowInfo {
                acks_lost: lost,
                timed_out: true,
                ..window(w)
            })
        };
        // Below the hold credit's window the queue rule alone decides.
        let small = WindowInfo {
            acks_lost: scale / 2,
            timed_out: true,
            ..window(15)
        };
        assert_eq!(a.group_segments(&small), Some(4));
        let slow_start = WindowInfo {
            acks_lost: scale / 2,
            timed_out: true,
            in_slow_start: true,
            ..window(320)
        };
        assert_eq!(a.group_segments(&slow_start), Some(80));
        // Before the connection's first timeout, the loss is ignored.
        let before_timeout = WindowInfo {
            acks_lost: scale / 2,
            ..window(320)
        };
        assert_eq!(a.group_segments(&before_timeout), Some(80));
        // Nothing lost: the hold credit's 4 per window.
        assert_eq!(lost(&a, 320, 0), Some(80));
        // Half lost: 8 asked so that 4 arrive.
        assert_eq!(a.compensate_ack_loss(4, scale / 2), 8);
        assert_eq!(lost(&a, 320, scale / 2), Some(40));
        // Three in four lost: 16.
        assert_eq!(lost(&a, 320, scale / 4 * 3), Some(20));
        // All lost: the ceiling, not a division by zero.
        assert_eq!(a.compensate_ack_loss(4, scale), 32);
        assert_eq!(lost(&a, 320, scale), Some(10));
        // A request count above the ceiling is kept, never lowered.
        assert_eq!(a.compensate_ack_loss(40, scale / 2), 40);
        // Turned off: the loss estimate is ignored.
        a.ack_loss_compensation = false;
        assert_eq!(lost(&a, 320, scale / 2), Some(80));
    }

    /// The default's adaptive strategy, with `slow_start_acks`.
    fn with_hold_credit(slow_start_acks: Option<u32>) -> AdaptivePerWindow {
        AdaptivePerWindow {
            min_acks: 4,
            max_acks: 32,
            hold_credit_from: Some(16),
            ack_loss_compensation: false,
            slow_start_acks,
        }
    }

    /// A window of `w` segments on a path with no queue.
    fn empty_queue(w: u64, in_slow_start: bool) -> WindowInfo {
        let rtt = Duration::from_millis(100);
        WindowInfo {
            in_slow_start,
            srtt: Some(rtt),
            min_rtt: Some(rtt),
            ..window(w)
        }
    }

    #[test]
    fn with_the_hold_credit_large_windows_in_avoidance_ask_for_the_floor() {
        let a = with_hold_credit(None);
        assert!(a.credits_hold());
        // Congestion avoidance from 16 segments on: 4 per window, however
        // empty the queue.
        assert_eq!(a.group_segments(&empty_queue(320, false)), Some(80));
        assert_eq!(a.group_segments(&empty_queue(16, false)), Some(4));
        // Below it, and in slow start at any size, the queue rule (32 per
        // window with no queue).
        assert_eq!(a.group_segments(&empty_queue(15, false)), Some(1));
        assert_eq!(a.group_segments(&empty_queue(320, true)), Some(10));
        assert!(!a.sparse_slow_start());
    }

    #[test]
    fn sparse_start_asks_for_a_fixed_count_per_window_in_slow_start() {
        let a = with_hold_credit(Some(4));
        assert!(a.sparse_slow_start());
        // Slow start: 4 per window whatever the queue, down to groups of
        // one segment in the initial window.
        assert_eq!(a.group_segments(&empty_queue(320, true)), Some(80));
        assert_eq!(a.group_segments(&empty_queue(10, true)), Some(3));
        assert_eq!(a.group_segments(&empty_queue(4, true)), Some(1));
        assert_eq!(a.group_segments(&window(64)), Some(16));
        // Congestion avoidance is as without it.
        assert_eq!(a.group_segments(&empty_queue(15, false)), Some(1));
        assert_eq!(a.group_segments(&empty_queue(320, false)), Some(80));
        // Asking for every segment in slow start overrides it, and the
        // sender is not told to spread there.
        let every = Requester::new(Box::new(a), true);
        assert!(!every.sparse_slow_start());
        assert!(Requester::new(Box::new(a), false).sparse_slow_start());
    }

    #[test]
    fn per_window_never_exceeds_x_acks_and_never_drops_below_one() {
        let two = PerWindow { acks: 2 };
        let four = PerWindow { acks: 4 };
        assert_eq!(two.group_segments(&window(10)), Some(5));
        assert_eq!(four.group_segments(&window(10)), Some(3));
        assert_eq!(four.group_segments(&window(1)), Some(1));
        for w in 1..500u64 {
            for s in [two, four] {
                let g = u64::from(s.group_segments(&window(w)).unwrap());
                let acks = w.div_ceil(g);
                assert!(acks >= 1 && acks <= u64::from(s.acks), "w {w} g {g}");
            }
        }
    }

    #[test]
    fn every_n_keeps_two_acks_per_window() {
        let a8 = EveryN { segments: 8 };
        assert_eq!(a8.group_segments(&window(100)), Some(8));
        assert_eq!(a8.group_segments(&window(10)), Some(5));
        assert_eq!(a8.group_segments(&window(3)), Some(1));
        assert_eq!(a8.group_segments(&window(1)), Some(1));
        for w in 2..200u64 {
            let g = u64::from(a8.group_segments(&window(w)).unwrap());
            assert!(w / g >= 2, "w {w} g {g}");
        }
    }

    #[test]
    fn countdowns_run_down_to_zero_and_resize_with_the_window() {
        let mut r = Requester::new(Box::new(PerWindow { acks: 2 }), false);
        let got: Vec<u16> = (0..8)
            .map(|_| r.next_countdown(&window(8)).unwrap())
            .collect();
        assert_eq!(got, [3, 2, 1, 0, 3, 2, 1, 0]);
        // A new group picks up the new window.
        assert_eq!(r.next_countdown(&window(20)), Some(9));
        assert_eq!(r.group_segments(), 10);
        r.restart();
        assert_eq!(r.next_countdown(&window(2)), Some(0));
    }

    #[test]
    fn slow_start_option_asks_for_every_segment() {
        let mut r = Requester::new(Box::new(PerWindow { acks: 4 }), true);
        let ss = WindowInfo {
            in_slow_start: true,
            ..window(40)
        };
        assert_eq!(r.next_countdown(&ss), Some(0));
        assert_eq!(r.next_countdown(&ss), Some(0));
        assert_eq!(r.next_countdown(&window(40)), Some(9));
    }

    #[test]
    fn no_requests_and_huge_windows() {
        let mut none = Requester::new(Box::new(NoRequests), false);
        assert_eq!(none.next_countdown(&window(10)), None);
        let mut one = Requester::new(Box::new(PerWindow { acks: 1 }), false);
        // A window beyond what 16 bits can count still yields valid
        // countdowns.
        assert_eq!(one.next_countdown(&window(u64::MAX)), Some(u16::MAX));
        assert_eq!(one.group_segments(), 65_536);
    }
}
