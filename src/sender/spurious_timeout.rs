//! Undoing a retransmission timeout that D-SACK shows was spurious
//! (detection after RFC 3708, response after RFC 4015).
//!
//! With few ACKs each one carries more of the ACK clock, and on a reverse
//! path that drops ACKs (a slow uplink shared with ACK-every-segment
//! flows) losing all the ACKs of a window is enough for the timer to fire
//! although every data segment arrived. The sender then resends the head,
//! collapses cwnd to one segment and halves ssthresh, and on a fast path
//! crawls back in congestion avoidance for seconds: one such timeout made
//! a 7 MB transfer at 957 Mbit/s take 3.2 s instead of 0.7 s in the
//! gauntlet (case 156 of seed 1).
//!
//! The receiver reports a segment it already held in a D-SACK block
//! (RFC 2883). When every segment resent since the timeout comes back
//! D-SACKed, none of them was needed: the timeout was caused by lost or
//! late ACKs, not by lost data, and the window reduction is taken back
//! (cwnd and ssthresh restored to at least what they were before the
//! timeout, as Linux's undo does). A retransmission that repaired a real
//! loss is never D-SACKed, so a genuine timeout is never undone.
//! Timestamps (RFC 3522's Eifel detection) cannot tell this case apart:
//! RFC 7323 makes the receiver echo the retransmission's timestamp on the
//! duplicate ACK that follows it.

/// cwnd and ssthresh as they were before the timeout, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorWindow {
    /// cwnd before the timeout, bytes.
    pub cwnd: u64,
    /// ssthresh before the timeout, bytes.
    pub ssthresh: u64,
}

/// The state of one timeout whose necessity is still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    prior: PriorWindow,
    /// SND.UNA at the timeout: D-SACK blocks below it are about older
    /// retransmissions.
    from: u64,
    /// SND.NXT at the timeout: once SND.UNA passes it without every
    /// retransmission D-SACKed, the question is closed.
    until: u64,
    /// Bytes retransmitted since the timeout not yet reported as
    /// duplicates.
    undecided_bytes: u64,
}

/// Decides whether the last retransmission timeout was spurious.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpuriousTimeout {
    pending: Option<Pending>,
}

impl SpuriousTimeout {
    /// A retransmission timeout fired with `prior` the window before it,
    /// SND.UNA at `snd_una` and SND.NXT at `snd_nxt`. A repeated timeout
    /// keeps the first one's prior window: undoing restores what the flow
    /// had before the whole episode.
    pub fn on_timeout(&mut self, prior: PriorWindow, snd_una: u64, snd_nxt: u64) {
        match self.pending.as_mut() {
            Some(p) => p.until = p.until.max(snd_nxt),
            None => {
                self.pending = Some(Pending {
                    prior,
                    from: snd_una,
                    until: snd_nxt,
                    undecided_bytes: 0,
                })
            }
        }
    }

    /// Bytes `[start, end)` were retransmitted.
    pub fn on_retransmit(&mut self, start: u64, end: u64) {
        if let Some(p) = self.pending.as_mut() {
            p.undecided_bytes += end.saturating_sub(start);
        }
    }

    /// A fast retransmit found a real loss: the episode is no longer one
    /// that only lost ACKs.
    pub fn on_loss(&mut self) {
        self.pending = None;
    }

    /// An ACK up to `ack` arrived with `sack` blocks (stream offsets, the
    /// D-SACK block first when there is one). Returns the window to
    /// restore when it shows the timeout spurious.
    pub fn on_ack(&mut self, ack: u64, sack: &[(u64, u64)]) -> Option<PriorWindow> {
        let p = self.pending.as_mut()?;
        // RFC 2883 section 4: a first block below the cumulative ACK is a
        // D-SACK.
        if let Some(&(left, right)) = sack.first() {
            if right <= ack && left >= p.from && left < right {
                p.undecided_bytes = p.undecided_bytes.saturating_sub(right - left);
                if p.undecided_bytes == 0 {
                    let prior = p.prior;
                    self.pending = None;
                    return Some(prior);
                }
            }
        }
        if ack > p.until {
            // Data first sent after the timeout is acknowledged, so the
            // ACKs for the retransmissions before it have come, and one of
            // them was not a duplicate: it was needed.
            self.pending = None;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const PRIOR: PriorWindow = PriorWindow {
        cwnd: 16 * MSS,
        ssthresh: u64::MAX,
    };

    #[test]
    fn a_dsacked_head_retransmission_undoes_the_timeout() {
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 12 * MSS, 28 * MSS);
        s.on_retransmit(12 * MSS, 13 * MSS);
        // The whole flight had arrived; the duplicate is reported.
        assert_eq!(s.on_ack(28 * MSS, &[(12 * MSS, 13 * MSS)]), Some(PRIOR));
        // Decided once.
        assert_eq!(s.on_ack(28 * MSS, &[(12 * MSS, 13 * MSS)]), None);
    }

    #[test]
    fn a_needed_retransmission_keeps_the_reduction() {
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 12 * MSS, 28 * MSS);
        s.on_retransmit(12 * MSS, 13 * MSS);
        // The head was really lost: its retransmission fills the hole and
        // draws no D-SACK.
        assert_eq!(s.on_ack(28 * MSS, &[]), None);
        // Data sent after the timeout is acknowledged: the question is
        // closed, and no later report revives it.
        assert_eq!(s.on_ack(30 * MSS, &[]), None);
        assert_eq!(s.on_ack(30 * MSS, &[(12 * MSS, 13 * MSS)]), None);
    }

    #[test]
    fn every_retransmission_must_be_reported() {
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 0, 10 * MSS);
        s.on_retransmit(0, MSS);
        s.on_retransmit(MSS, 2 * MSS);
        assert_eq!(s.on_ack(MSS, &[(0, MSS)]), None);
        // The second retransmission was needed: ACKs go past the flight
        // with it unreported.
        assert_eq!(s.on_ack(10 * MSS, &[]), None);
        assert_eq!(s.on_ack(11 * MSS, &[]), None);
        assert_eq!(s.on_ack(11 * MSS, &[(MSS, 2 * MSS)]), None);
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 0, 10 * MSS);
        s.on_retransmit(0, MSS);
        s.on_retransmit(MSS, 2 * MSS);
        assert_eq!(s.on_ack(MSS, &[(0, MSS)]), None);
        assert_eq!(s.on_ack(10 * MSS, &[(MSS, 2 * MSS)]), Some(PRIOR));
    }

    #[test]
    fn old_dsacks_and_sack_blocks_do_not_count() {
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 12 * MSS, 28 * MSS);
        s.on_retransmit(12 * MSS, 13 * MSS);
        // A D-SACK of a retransmission from before the timeout.
        assert_eq!(s.on_ack(12 * MSS, &[(5 * MSS, 6 * MSS)]), None);
        // An ordinary SACK block above the cumulative ACK.
        assert_eq!(s.on_ack(12 * MSS, &[(14 * MSS, 15 * MSS)]), None);
        // A real fast retransmit ends the question.
        s.on_loss();
        assert_eq!(s.on_ack(28 * MSS, &[(12 * MSS, 13 * MSS)]), None);
    }

    #[test]
    fn a_repeated_timeout_keeps_the_first_prior_window() {
        let mut s = SpuriousTimeout::default();
        s.on_timeout(PRIOR, 0, 10 * MSS);
        s.on_retransmit(0, MSS);
        let collapsed = PriorWindow {
            cwnd: MSS,
            ssthresh: 8 * MSS,
        };
        s.on_timeout(collapsed, 0, MSS);
        s.on_retransmit(0, MSS);
        assert_eq!(s.on_ack(10 * MSS, &[(0, MSS)]), None, "one of two");
        assert_eq!(s.on_ack(10 * MSS, &[(0, MSS)]), Some(PRIOR));
    }
}
