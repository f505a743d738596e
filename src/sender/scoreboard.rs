//! The RFC 6675 SACK scoreboard.

/// What one ACK changed on the scoreboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// Bytes newly covered by the cumulative ACK.
    pub newly_acked: u64,
    /// Bytes newly marked SACKed (above the cumulative ACK).
    pub newly_sacked: u64,
    /// Of `newly_acked`, bytes that had already been SACKed before.
    pub acked_previously_sacked: u64,
    /// The highest SACKed offset moved up.
    pub highest_sack_advanced: bool,
}

/// Per-segment record of what was sent, SACKed and retransmitted between
/// the cumulative ACK point and the highest offset sent.
#[derive(Debug)]
pub struct Scoreboard {
    _todo: (),
}

impl Scoreboard {
    /// `mss` is SMSS in bytes; `dup_thresh` is DupThresh (3 in RFC 6675).
    pub fn new(mss: usize, dup_thresh: u32) -> Self {
        let _ = (mss, dup_thresh);
        todo!()
    }
}
