//! Round-trip time and retransmission timeout (RFC 6298).

/// Smoothed RTT, RTT variation and the retransmission timeout with backoff.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    _todo: (),
}
