//! Acknowledge every segment (the paper's AE).

use super::{AckDecision, AckPolicy, AckSent, ArrivalInfo};

/// Acknowledges every segment carrying data or FIN at once (the paper's
/// AE). This is the most ACK-hungry behaviour RFC 5681 section 4.2
/// permits ("an ACK SHOULD be generated for at least every second
/// full-sized segment" is an upper bound on delay, not a lower bound on
/// ACKs) and the baseline the other policies are compared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Every;

impl Every {
    /// The policy; it has no state.
    pub fn new() -> Self {
        Every
    }
}

impl AckPolicy for Every {
    fn name(&self) -> &'static str {
        "every"
    }

    fn on_segment(&mut self, _info: &ArrivalInfo) -> AckDecision {
        AckDecision::Now
    }

    fn on_ack_sent(&mut self, _ack: &AckSent) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Instant;

    #[test]
    fn every_segment_is_acknowledged_at_once() {
        let mut p = Every::new();
        let t = Instant::from_millis(3);
        let mut small = ArrivalInfo::in_order(t, 10, false);
        assert_eq!(p.on_segment(&small), AckDecision::Now);
        // No counting: the second in a row without an ACK between is
        // still acknowledged at once.
        assert_eq!(p.on_segment(&small), AckDecision::Now);
        small.duplicate = true;
        assert_eq!(p.on_segment(&small), AckDecision::Now);
        let full = ArrivalInfo::in_order(t, 1460, true);
        assert_eq!(p.on_segment(&full), AckDecision::Now);
        p.on_ack_sent(&AckSent::new(t, 0));
        assert_eq!(p.on_segment(&full), AckDecision::Now);
    }
}
