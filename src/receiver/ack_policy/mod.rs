//! When to acknowledge.
//!
//! An [`AckPolicy`] sees every arriving segment that carried data or FIN
//! (as an [`ArrivalInfo`]) and answers with an [`AckDecision`]: acknowledge
//! now, or by a deadline. The connection owns the timer and the actual ACK;
//! it keeps the earliest deadline it was given, calls
//! [`AckPolicy::on_timer`] when that deadline passes and
//! [`AckPolicy::on_ack_sent`] whenever an ACK leaves, piggybacked or not.
//!
//! Policies, with the names used in the paper's evaluation:
//!
//! * [`Every`] (AE): acknowledge every segment at once.
//! * [`Delayed`]: the standard delayed ACK of RFC 5681 section 4.2 and
//!   RFC 1122 section 4.2.3.2, at most every second full-sized segment and
//!   within a bounded delay. Paired with a sender doing byte counting with
//!   limit 2 (RFC 3465) this is the paper's DAL2.
//! * [`Polled`]: acknowledge when the sender's request countdown says so
//!   (paper 003's A4L4, A8L8, 2W and 4W receivers).
//!
//! RFC 5681 section 4.2 also requires an immediate ACK for out-of-order
//! segments and for segments that fill a gap; [`ArrivalInfo`] carries the
//! facts a policy needs to follow that.

use crate::time::Instant;
use crate::wire::AckRequest;

mod delayed;
mod every;
mod polled;

pub use delayed::Delayed;
pub use every::Every;
pub use polled::Polled;

/// What the receiver learned from one arriving segment that carried data or
/// FIN.
///
/// The reassembly facts come from
/// [`InsertOutcome`](crate::receiver::InsertOutcome) and
/// [`Reassembly::has_gaps`](crate::receiver::Reassembly::has_gaps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrivalInfo {
    /// When the segment arrived.
    pub now: Instant,
    /// Payload bytes carried (FIN not counted).
    pub payload_len: usize,
    /// `payload_len` is at least the receiver's MSS (the "full-sized
    /// segment" of RFC 5681 section 4.2).
    pub full_sized: bool,
    /// The segment started above `RCV.NXT`, leaving a hole before it.
    pub out_of_order: bool,
    /// The segment filled all or part of a hole below held out-of-order
    /// data.
    pub filled_gap: bool,
    /// Nothing new: a retransmission of data already received.
    pub duplicate: bool,
    /// Holes remain after this segment.
    pub has_gaps: bool,
    /// The segment carried FIN.
    pub fin: bool,
    /// The segment carried PSH.
    pub push: bool,
    /// The sender's ACK-request countdown, if the segment carried one.
    pub ack_request: Option<AckRequest>,
}

impl ArrivalInfo {
    /// An in-order, new, non-FIN arrival of `payload_len` bytes at `now`
    /// with all flags clear; a starting point for building the real one.
    pub fn in_order(now: Instant, payload_len: usize, full_sized: bool) -> Self {
        ArrivalInfo {
            now,
            payload_len,
            full_sized,
            out_of_order: false,
            filled_gap: false,
            duplicate: false,
            has_gaps: false,
            fin: false,
            push: false,
            ack_request: None,
        }
    }
}

/// What a policy wants done about acknowledging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckDecision {
    /// Acknowledge at once.
    Now,
    /// Acknowledge no later than this deadline unless something triggers an
    /// earlier ACK (the connection keeps the earliest deadline).
    By(Instant),
}

impl AckDecision {
    /// The more urgent of two decisions: `Now` wins, otherwise the earlier
    /// deadline.
    pub fn earliest(self, other: AckDecision) -> AckDecision {
        match (self, other) {
            (AckDecision::By(a), AckDecision::By(b)) => AckDecision::By(a.min(b)),
            _ => AckDecision::Now,
        }
    }
}

/// Decides when the receiver acknowledges.
///
/// Implementations are pure state machines driven by the connection; they
/// read no clock and never send anything themselves.
pub trait AckPolicy: core::fmt::Debug + Send {
    /// Short name for logs and experiment labels.
    fn name(&self) -> &'static str;

    /// A segment carrying data or FIN arrived.
    fn on_segment(&mut self, info: &ArrivalInfo) -> AckDecision;

    /// The ACK timer fired; the default is to acknowledge now, a policy may
    /// postpone.
    fn on_timer(&mut self, now: Instant) -> AckDecision {
        let _ = now;
        AckDecision::Now
    }

    /// An ACK was just sent (for any reason, including piggybacked on
    /// data): reset what the policy counts.
    fn on_ack_sent(&mut self, now: Instant);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_prefers_now_then_the_earlier_deadline() {
        let a = AckDecision::By(Instant::from_millis(5));
        let b = AckDecision::By(Instant::from_millis(9));
        assert_eq!(a.earliest(b), a);
        assert_eq!(b.earliest(a), a);
        assert_eq!(a.earliest(AckDecision::Now), AckDecision::Now);
        assert_eq!(AckDecision::Now.earliest(b), AckDecision::Now);
    }

    #[test]
    fn policies_are_usable_as_trait_objects() {
        let mut policies: Vec<Box<dyn AckPolicy>> =
            vec![Box::new(Every::new()), Box::new(Delayed::default())];
        let info = ArrivalInfo::in_order(Instant::ZERO, 1000, true);
        let names: Vec<_> = policies.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["every", "delayed"]);
        for p in &mut policies {
            // The default timer behaviour is to acknowledge.
            p.on_segment(&info);
            assert_eq!(p.on_timer(Instant::from_millis(1)), AckDecision::Now);
            p.on_ack_sent(Instant::from_millis(1));
        }
    }
}
