//! The polled receiver (paper 003 sec. 4.1): the sender says when it wants
//! an ACK.

use super::{AckDecision, AckPolicy, AckSent, ArrivalInfo, Delayed};
use crate::time::{Duration, Instant};
use crate::wire::AckRequest;

/// Acknowledges when the sender's request countdown runs out.
///
/// Each segment of a requested group carries how many more segments may
/// arrive before an ACK is owed; the receiver keeps the smallest promise
/// it has seen, so it still acknowledges at the right segment when the
/// segment that carried the zero is lost or reordered (and a lost
/// segment leaves a hole, which is acknowledged at once anyway).
///
/// 1. Out-of-order segments, gap fills, duplicates, FIN and any arrival
///    while holes remain are acknowledged at once (RFC 5681 section 4.2;
///    paper 003 sec. 2.3: every segment is ACKed while a hole exists).
/// 2. A segment whose countdown (or the countdown inherited from earlier
///    segments of its group) reaches zero is acknowledged at once.
/// 3. Otherwise the ACK waits at most `fallback` after the first
///    unacknowledged segment, so a tail of a group that never arrives
///    still gets its ACK.
/// 4. Segments outside any request (a sender that does not poll) get
///    standard delayed ACKs, so a polled receiver serves any sender.
#[derive(Debug, Clone)]
pub struct Polled {
    fallback: Duration,
    /// Segments that may still arrive before an ACK is owed.
    remaining: Option<u32>,
    first_unacked: Option<Instant>,
    unrequested: Delayed,
}

impl Polled {
    /// Default fallback timer.
    pub const DEFAULT_FALLBACK: Duration = Duration::from_millis(100);

    /// A polled receiver whose fallback timer is `fallback`.
    pub fn new(fallback: Duration) -> Self {
        Polled {
            fallback,
            remaining: None,
            first_unacked: None,
            unrequested: Delayed::new(fallback, Delayed::DEFAULT_SEGMENTS),
        }
    }

    /// The fallback timer.
    pub fn fallback(&self) -> Duration {
        self.fallback
    }
}

impl Default for Polled {
    fn default() -> Self {
        Polled::new(Self::DEFAULT_FALLBACK)
    }
}

impl AckPolicy for Polled {
    fn name(&self) -> &'static str {
        "polled"
    }

    fn on_segment(&mut self, info: &ArrivalInfo) -> AckDecision {
        if info.out_of_order || info.filled_gap || info.duplicate || info.fin || info.has_gaps {
            return AckDecision::Now;
        }
        let carried = self.remaining.map(|r| r.saturating_sub(1));
        let asked = match info.ack_request {
            Some(AckRequest::Countdown(c)) => Some(u32::from(c)),
            _ => None,
        };
        self.remaining = match (carried, asked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some(remaining) = self.remaining else {
            return self.unrequested.on_segment(info);
        };
        let first = *self.first_unacked.get_or_insert(info.now);
        if remaining == 0 {
            AckDecision::Now
        } else {
            AckDecision::By(first + self.fallback)
        }
    }

    fn on_ack_sent(&mut self, ack: &AckSent) {
        self.remaining = None;
        self.first_unacked = None;
        self.unrequested.on_ack_sent(ack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(at_ms: u64, countdown: Option<u16>) -> ArrivalInfo {
        let mut info = ArrivalInfo::in_order(Instant::from_millis(at_ms), 1000, true);
        info.ack_request = countdown.map(AckRequest::Countdown);
        info
    }

    /// Feeds arrivals; returns the indices acknowledged at once (the ACK
    /// is then sent, as the connection would).
    fn acked_at(p: &mut Polled, arrivals: &[ArrivalInfo]) -> Vec<usize> {
        let mut acked = Vec::new();
        for (i, a) in arrivals.iter().enumerate() {
            if p.on_segment(a) == AckDecision::Now {
                acked.push(i);
                p.on_ack_sent(&AckSent::new(a.now, 0));
            }
        }
        acked
    }

    #[test]
    fn acknowledges_where_the_countdown_ends() {
        let mut p = Polled::default();
        let group: Vec<_> = [3, 2, 1, 0, 3, 2, 1, 0]
            .iter()
            .enumerate()
            .map(|(i, &c)| seg(i as u64, Some(c)))
            .collect();
        assert_eq!(acked_at(&mut p, &group), [3, 7]);
        // Between ACKs the fallback timer runs from the group's first
        // segment.
        assert_eq!(
            p.on_segment(&seg(50, Some(5))),
            AckDecision::By(Instant::from_millis(150))
        );
    }

    #[test]
    fn a_lost_requester_is_covered_by_the_next_segments_countdown() {
        // The segment with countdown 0 is reordered past the next group's
        // first segment: that segment inherits "owed now".
        let mut p = Polled::default();
        let arrivals = [seg(0, Some(2)), seg(1, Some(1)), seg(2, Some(5))];
        assert_eq!(acked_at(&mut p, &arrivals), [2]);
        // A group whose later countdowns are lower than promised still
        // ends at the earliest promise.
        let mut p = Polled::default();
        let arrivals = [seg(0, Some(1)), seg(1, Some(9))];
        assert_eq!(acked_at(&mut p, &arrivals), [1]);
    }

    #[test]
    fn holes_and_fins_are_acknowledged_at_once() {
        let mut p = Polled::default();
        let mut ooo = seg(0, Some(7));
        ooo.out_of_order = true;
        assert_eq!(p.on_segment(&ooo), AckDecision::Now);
        let mut fill = seg(1, Some(7));
        fill.filled_gap = true;
        assert_eq!(p.on_segment(&fill), AckDecision::Now);
        let mut fin = seg(2, Some(7));
        fin.fin = true;
        assert_eq!(p.on_segment(&fin), AckDecision::Now);
    }

    #[test]
    fn segments_without_requests_get_delayed_acks() {
        let mut p = Polled::new(Duration::from_millis(200));
        assert_eq!(
            p.on_segment(&seg(0, None)),
            AckDecision::By(Instant::from_millis(200))
        );
        assert_eq!(p.on_segment(&seg(1, None)), AckDecision::Now);
        p.on_ack_sent(&AckSent::new(Instant::from_millis(1), 0));
        // A request mid-way takes over.
        assert_eq!(
            p.on_segment(&seg(2, Some(1))),
            AckDecision::By(Instant::from_millis(202))
        );
        assert_eq!(p.on_segment(&seg(3, None)), AckDecision::Now);
    }

    #[test]
    fn fallback_can_exceed_the_delayed_ack_limit() {
        let mut p = Polled::new(Duration::from_millis(1000));
        assert_eq!(p.fallback(), Duration::from_millis(1000));
        assert_eq!(
            p.on_segment(&seg(0, Some(50))),
            AckDecision::By(Instant::from_millis(1000))
        );
    }
}
