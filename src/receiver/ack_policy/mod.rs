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
//! * [`Smart`]: smartacking (paper 004 sec. 3), receiver only: ACK every
//!   segment while the bottleneck has room, one per window once it is
//!   full, from the receiver's own estimates of ISAT, RTT and the
//!   sender's congestion window.
//! * [`Acc`]: ACK Congestion Control (RFC 5690, paper 004 sec. 2): an ACK
//!   ratio that congestion marks double and quiet RTTs decrease.
//!
//! RFC 5681 section 4.2 also requires an immediate ACK for out-of-order
//! segments and for segments that fill a gap; [`ArrivalInfo`] carries the
//! facts a policy needs to follow that.

use crate::time::{Duration, Instant};
use crate::wire::AckRequest;

mod acc;
mod delayed;
mod every;
mod peer_model;
mod polled;
mod smart;

pub use acc::Acc;
pub use delayed::Delayed;
pub use every::Every;
pub use polled::{HoleAcks, Polled};
pub use smart::{Smart, SmartParams, SmartRtt};

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
    /// The segment starts above every byte received before it: it opened
    /// a new hole below itself (the first arrival after a loss).
    pub opened_hole: bool,
    /// The segment carried FIN.
    pub fin: bool,
    /// The segment carried PSH.
    pub push: bool,
    /// The sender's ACK-request countdown, if the segment carried one.
    pub ack_request: Option<AckRequest>,
    /// `RCV.NXT` after this segment, as a byte offset into the peer's
    /// stream: the in-order edge (paper 004's LastReceived, in bytes).
    pub rcv_nxt: u64,
    /// Payload bytes of a full-sized segment from the peer, to count in
    /// segments as the papers do.
    pub segment_size: usize,
    /// A round-trip time measured at the receiver: the segment echoed the
    /// timestamp of one of our ACKs (RFC 7323 section 4), and it is the
    /// first to echo that timestamp, so the sample is the time from that
    /// ACK leaving to the data it released arriving (paper 004 sec. 3.2
    /// needs the RTT at the receiver).
    pub rtt_sample: Option<Duration>,
    /// The segment arrived with the IP ECN field set to Congestion
    /// Experienced (RFC 3168): the forward path is congested.
    pub ce: bool,
    /// The segment carried ECE: the peer saw Congestion Experienced on
    /// segments we sent it, which for a receiver of data means on its
    /// ACKs (the ACK path is congested; RFC 5690's signal for ACC).
    pub ece: bool,
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
            opened_hole: false,
            fin: false,
            push: false,
            ack_request: None,
            rcv_nxt: payload_len as u64,
            segment_size: payload_len.max(1),
            rtt_sample: None,
            ce: false,
            ece: false,
        }
    }
}

/// An ACK that just left, as the policy is told about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSent {
    /// When it left.
    pub now: Instant,
    /// Its cumulative acknowledgment, as a byte offset into the peer's
    /// stream (paper 004's LastACKed, in bytes).
    pub acked_to: u64,
    /// It acknowledged nothing the previous ACK had not (a duplicate ACK,
    /// sent while a hole remains or for a repeated segment).
    pub duplicate: bool,
}

impl AckSent {
    /// A non-duplicate ACK at `now` acknowledging up to `acked_to`.
    pub fn new(now: Instant, acked_to: u64) -> Self {
        AckSent {
            now,
            acked_to,
            duplicate: false,
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
    fn on_ack_sent(&mut self, ack: &AckSent);

    /// The policy's estimate of the peer's congestion window, in
    /// segments, if it keeps one (paper 004 fig. 1); for logs and the
    /// lab's time series.
    fn cwnd_estimate_segments(&self) -> Option<u32> {
        None
    }
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
            p.on_ack_sent(&AckSent::new(Instant::from_millis(1), 0));
        }
    }
}
