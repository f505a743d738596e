//! Standard delayed acknowledgments (RFC 5681 section 4.2, RFC 1122
//! section 4.2.3.2).

use super::{AckDecision, AckPolicy, AckSent, ArrivalInfo};
use crate::time::{Duration, Instant};

/// Delayed ACK as specified by RFC 5681 section 4.2 and RFC 1122 section
/// 4.2.3.2; with a byte-counting sender (limit 2, RFC 3465) this is the
/// paper's DAL2.
///
/// Rules, in order:
///
/// 1. Acknowledge at once when the segment is out of order, fills a gap,
///    is a duplicate, carries FIN, or while holes remain in the received
///    data (RFC 5681 section 4.2: out-of-order and gap-filling segments
///    SHOULD be acknowledged immediately, so that fast retransmit and
///    recovery get their duplicate ACKs and their progress promptly). A
///    duplicate is answered at once because it usually means our ACK was
///    lost and the sender is retransmitting on a timeout. FIN is answered
///    at once so the peer's close does not wait for the timer.
/// 2. Otherwise count the segment. When the count since the last ACK
///    reaches `segments` (default 2: "at least every second full-sized
///    segment"), acknowledge at once.
/// 3. Otherwise acknowledge by `first_unacked_arrival + max_delay`, where
///    the first unacknowledged arrival is the oldest segment not yet
///    covered by an ACK. Later segments do not move the deadline, so no
///    segment waits longer than `max_delay`.
///
/// Counting choice: every data segment counts as one, whether or not it
/// is full-sized. RFC 5681 only requires an ACK for every second
/// *full-sized* segment, so this never acknowledges later than required;
/// it acknowledges earlier when small segments arrive, which keeps the
/// sender's ACK clock running when its segments are below our MSS (path
/// MTU, options, or an application writing small chunks) instead of
/// leaving them to the timer. [`ArrivalInfo::full_sized`] is therefore
/// not consulted.
///
/// PSH is not a reason to acknowledge at once (no RFC asks for it), and
/// the experimental ACK request is ignored: this is the standard baseline
/// that policies honouring the request are compared against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delayed {
    max_delay: Duration,
    segments: u32,
    /// Segments counted since the last ACK.
    unacked: u32,
    /// Arrival time of the oldest segment not yet acknowledged.
    first_unacked_arrival: Option<Instant>,
}

impl Delayed {
    /// Upper bound on `max_delay`: RFC 1122 section 4.2.3.2 says the delay
    /// MUST be less than 0.5 seconds.
    pub const MAX_DELAY_LIMIT: Duration = Duration::from_millis(500);
    /// Default `max_delay`, a common choice of implementations (and the
    /// paper's setting).
    pub const DEFAULT_MAX_DELAY: Duration = Duration::from_millis(100);
    /// Default segment limit: acknowledge every second segment (RFC 5681
    /// section 4.2).
    pub const DEFAULT_SEGMENTS: u32 = 2;

    /// A delayed-ACK policy that waits at most `max_delay` and
    /// acknowledges at once when `segments` segments are unacknowledged.
    ///
    /// `max_delay` is clamped to [`MAX_DELAY_LIMIT`](Self::MAX_DELAY_LIMIT)
    /// (RFC 1122 section 4.2.3.2), and `segments` is raised to at least 1,
    /// since a limit of zero can only mean "acknowledge every segment".
    pub fn new(max_delay: Duration, segments: u32) -> Self {
        Delayed {
            max_delay: max_delay.min(Self::MAX_DELAY_LIMIT),
            segments: segments.max(1),
            unacked: 0,
            first_unacked_arrival: None,
        }
    }

    /// The effective maximum delay (after clamping).
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The effective segment limit (after clamping).
    pub fn segments(&self) -> u32 {
        self.segments
    }
}

impl Default for Delayed {
    /// 100 ms, every second segment.
    fn default() -> Self {
        Delayed::new(Self::DEFAULT_MAX_DELAY, Self::DEFAULT_SEGMENTS)
    }
}

impl AckPolicy for Delayed {
    fn name(&self) -> &'static str {
        "delayed"
    }

    fn on_segment(&mut self, info: &ArrivalInfo) -> AckDecision {
        if info.out_of_order || info.filled_gap || info.duplicate || info.fin || info.has_gaps {
            return AckDecision::Now;
        }
        self.unacked = self.unacked.saturating_add(1);
        let first = *self.first_unacked_arrival.get_or_insert(info.now);
        if self.unacked >= self.segments {
            AckDecision::Now
        } else {
            AckDecision::By(first + self.max_delay)
        }
    }

    fn on_ack_sent(&mut self, _ack: &AckSent) {
        self.unacked = 0;
        self.first_unacked_arrival = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    fn full(at: u64) -> ArrivalInfo {
        ArrivalInfo::in_order(ms(at), 1460, true)
    }

    #[test]
    fn second_full_segment_is_acknowledged_at_once() {
        let mut p = Delayed::default();
        assert_eq!(p.on_segment(&full(10)), AckDecision::By(ms(110)));
        assert_eq!(p.on_segment(&full(20)), AckDecision::Now);
    }

    #[test]
    fn counting_restarts_after_an_ack() {
        let mut p = Delayed::default();
        p.on_segment(&full(10));
        p.on_ack_sent(&AckSent::new(ms(15), 0));
        // Without the reset this would be the second segment.
        assert_eq!(p.on_segment(&full(20)), AckDecision::By(ms(120)));
        assert_eq!(p.on_segment(&full(30)), AckDecision::Now);
        p.on_ack_sent(&AckSent::new(ms(30), 0));
        assert_eq!(p.on_segment(&full(40)), AckDecision::By(ms(140)));
    }

    #[test]
    fn deadline_stays_at_the_first_arrival() {
        let mut p = Delayed::new(Duration::from_millis(100), 4);
        assert_eq!(p.on_segment(&full(10)), AckDecision::By(ms(110)));
        assert_eq!(p.on_segment(&full(50)), AckDecision::By(ms(110)));
        assert_eq!(p.on_segment(&full(90)), AckDecision::By(ms(110)));
        assert_eq!(p.on_segment(&full(95)), AckDecision::Now);
    }

    #[test]
    fn small_segments_count_too() {
        let mut p = Delayed::default();
        let small = |at| ArrivalInfo::in_order(ms(at), 100, false);
        assert_eq!(p.on_segment(&small(10)), AckDecision::By(ms(110)));
        assert_eq!(p.on_segment(&small(20)), AckDecision::Now);
        p.on_ack_sent(&AckSent::new(ms(20), 0));
        assert_eq!(p.on_segment(&small(30)), AckDecision::By(ms(130)));
        assert_eq!(p.on_segment(&full(40)), AckDecision::Now);
    }

    #[test]
    fn immediate_cases() {
        type SetFlag = fn(&mut ArrivalInfo);
        let cases: [(&str, SetFlag); 5] = [
            ("out of order", |i| i.out_of_order = true),
            ("gap fill", |i| i.filled_gap = true),
            ("duplicate", |i| i.duplicate = true),
            ("fin", |i| i.fin = true),
            ("holes remain", |i| i.has_gaps = true),
        ];
        for (what, set) in cases {
            let mut info = ArrivalInfo::in_order(ms(10), 100, false);
            // Without the flag the same segment would be delayed.
            let delayed = Delayed::default().on_segment(&info);
            assert_eq!(delayed, AckDecision::By(ms(110)), "{what}");
            set(&mut info);
            assert_eq!(
                Delayed::default().on_segment(&info),
                AckDecision::Now,
                "{what}"
            );
        }
    }

    #[test]
    fn push_and_ack_request_do_not_hurry_it() {
        let mut p = Delayed::default();
        let mut info = full(10);
        info.push = true;
        info.ack_request = Some(crate::wire::AckRequest::Countdown(0));
        assert_eq!(p.on_segment(&info), AckDecision::By(ms(110)));
    }

    #[test]
    fn max_delay_is_clamped_to_500_ms() {
        let p = Delayed::new(Duration::from_secs(3), 2);
        assert_eq!(p.max_delay(), Duration::from_millis(500));
        let mut p = Delayed::new(Duration::from_secs(3), 3);
        assert_eq!(p.on_segment(&full(10)), AckDecision::By(ms(510)));
        assert_eq!(
            Delayed::new(Duration::from_millis(40), 2).max_delay(),
            Duration::from_millis(40)
        );
    }

    #[test]
    fn zero_segment_limit_acknowledges_every_segment() {
        let mut p = Delayed::new(Duration::from_millis(100), 0);
        assert_eq!(p.segments(), 1);
        assert_eq!(p.on_segment(&full(10)), AckDecision::Now);
    }

    #[test]
    fn timer_fires_an_ack() {
        let mut p = Delayed::default();
        p.on_segment(&full(10));
        assert_eq!(p.on_timer(ms(110)), AckDecision::Now);
        p.on_ack_sent(&AckSent::new(ms(110), 0));
        assert_eq!(p.on_segment(&full(200)), AckDecision::By(ms(300)));
    }

    #[test]
    fn far_future_deadline_saturates() {
        let mut p = Delayed::default();
        let info = ArrivalInfo::in_order(Instant::from_nanos(u64::MAX - 1), 10, false);
        assert_eq!(
            p.on_segment(&info),
            AckDecision::By(Instant::from_nanos(u64::MAX))
        );
    }
}
