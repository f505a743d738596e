//! Per-connection counters, readable at any time.

use crate::time::Duration;

/// A snapshot of one connection's counters and congestion state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Segments carrying data or FIN that we sent, retransmissions included.
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Segments carrying data or FIN that arrived (duplicates included).
    pub data_segments_received: u64,
    /// Payload bytes that arrived (duplicates included).
    pub data_bytes_received: u64,
    /// Payload bytes delivered in order to the application's buffer.
    pub bytes_delivered: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Window reductions in answer to ECN-Echo (RFC 3168 section 6.1.2).
    pub ecn_reductions: u64,
    /// Timeouts whose window reduction was undone because D-SACK showed
    /// them spurious (see [`SpuriousTimeout`](crate::sender::SpuriousTimeout)).
    pub spurious_timeouts: u64,
    /// Tail loss probes sent (RFC 8985 section 7).
    pub tail_loss_probes: u64,
    /// Tail loss probes that resent data the peer lacked.
    pub tail_loss_repairs: u64,
    /// Holes of a stalled fast recovery found lost by the reordering timer
    /// (see [`Config::reorder_timer`](super::Config::reorder_timer)).
    pub reorder_timeouts: u64,
    /// Segments we sent that acknowledged without carrying data, SYN or FIN.
    pub pure_acks_sent: u64,
    /// Every segment we sent with a new or repeated acknowledgment,
    /// piggybacked ones included.
    pub acks_sent: u64,
    /// Times the ACK timer expired and an ACK was owed for it: the delayed
    /// ACK's timeout, or the polled receiver's fallback. With ACK requests
    /// a sender that keeps at least one requested ACK per window never
    /// leaves the receiver waiting for this timer while data flows.
    pub ack_timer_expiries: u64,
    /// Pure ACKs that arrived.
    pub pure_acks_received: u64,
    /// Duplicate ACKs that arrived.
    pub duplicate_acks_received: u64,
    /// Segments dropped because they did not parse.
    pub malformed_segments: u64,
    /// Segments dropped for other reasons (wrong ports, out of window,
    /// challenge ACK sent).
    pub discarded_segments: u64,
    /// ACKs ignored because they moved SND.UNA without the right nonce
    /// echo (see [`ack_nonce`](super::ack_nonce)): acknowledgments of
    /// data the peer could not show it holds.
    pub ack_nonce_failures: u64,
    /// Segments refused from a peer that declined the ACK nonce because
    /// their ACK or a SACK block named a point where no segment we sent
    /// ends (see [`segment_cuts`](crate::sender::segment_cuts)): data
    /// acknowledged before it arrived. A few reset the connection.
    pub segment_end_failures: u64,
    /// Challenge ACKs sent (RFC 5961 sections 3-5).
    pub challenge_acks: u64,
    /// Challenge ACKs withheld by the rate limit (RFC 5961 section 7).
    pub challenge_acks_suppressed: u64,
    /// Answers withheld to segments that claimed what we could not accept
    /// (a bare ACK outside the window, an ACK of data never sent): at
    /// most one goes out per 500 ms.
    pub invalid_replies_suppressed: u64,
    /// Times the segment size fell back to `Config::black_hole_mss`
    /// after timeouts in a row (at most once per connection).
    pub black_hole_fallbacks: u64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`u64::MAX` until the first loss).
    pub ssthresh: u64,
    /// Smoothed RTT.
    pub srtt: Option<Duration>,
    /// Current retransmission timeout.
    pub rto: Duration,
}
