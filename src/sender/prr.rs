//! Proportional Rate Reduction (RFC 6937) for SACK loss recovery.
//!
//! RFC 6675 alone sends nothing during recovery until `pipe` has fallen
//! below the reduced cwnd. After a slow-start overshoot the window in
//! flight is about twice the path's capacity, so the sender is silent for
//! half a round trip, and the first data sent after the retransmissions
//! reaches the receiver only then. That data is what reveals a lost
//! retransmission (see the scoreboard's lost-retransmission rule), so a
//! late start leaves the repair to the retransmission timer. PRR instead
//! spreads the reduction over the round trip: while `pipe > ssthresh`,
//! each ACK releases `ssthresh / RecoverFS` of the data it reports
//! delivered (RFC 6937 section 3.1's proportional part); once `pipe` has
//! fallen to ssthresh, slow start reduction bound (PRR-SSRB) refills up to
//! ssthresh at most one segment beyond what was delivered.
//!
//! All quantities are bytes.

/// PRR state for one recovery episode (RFC 6937 section 3.1).
#[derive(Debug, Clone, Copy, Default)]
pub struct Prr {
    /// `prr_delivered`: bytes the receiver reported delivered (cumulatively
    /// ACKed or newly SACKed) since recovery began.
    delivered: u64,
    /// `prr_out`: bytes sent since recovery began.
    out: u64,
    /// `RecoverFS`: FlightSize when recovery began.
    recover_fs: u64,
    /// `sndcnt` from the last ACK, less what was sent since.
    allowance: u64,
}

impl Prr {
    /// Recovery begins with `flight_size` = SND.NXT - SND.UNA (RFC 6937
    /// section 3.1 initialisation). The fast retransmit that follows is
    /// counted by [`on_sent`](Self::on_sent) like any other segment.
    pub fn begin(flight_size: u64) -> Self {
        Prr {
            recover_fs: flight_size.max(1),
            ..Prr::default()
        }
    }

    /// An ACK during recovery reported `delivered` bytes (RFC 6937
    /// DeliveredData: the change in SND.UNA plus newly SACKed bytes); after
    /// it `pipe` bytes are in flight. Computes `sndcnt`, the bytes that may
    /// be sent now.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) {
        self.delivered = self.delivered.saturating_add(delivered);
        let sndcnt = if pipe > ssthresh {
            // Proportional reduction: ceil(prr_delivered * ssthresh /
            // RecoverFS) - prr_out, in u128 so the product cannot overflow.
            let target = (u128::from(self.delivered) * u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs));
            u64::try_from(target)
                .unwrap_or(u64::MAX)
                .saturating_sub(self.out)
        } else {
            // PRR-SSRB: grow back towards ssthresh, at most one segment
            // more than was delivered, so ACK clocking is kept.
            let limit = self
                .delivered
                .saturating_sub(self.out)
                .max(delivered)
                .saturating_add(mss);
            ssthresh.saturating_sub(pipe).min(limit)
        };
        self.allowance = sndcnt;
    }

    /// Bytes that may be sent now.
    pub fn allowance(&self) -> u64 {
        self.allowance
    }

    /// `len` bytes were sent during recovery.
    pub fn on_sent(&mut self, len: u64) {
        self.out = self.out.saturating_add(len);
        self.allowance = self.allowance.saturating_sub(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 section 3's first example: 20 segments in flight, one
    /// lost, ssthresh 10. Each ACK delivers one segment; PRR sends one
    /// segment for every two delivered, from the first ACK on, instead of
    /// staying silent for ten ACKs.
    #[test]
    fn proportional_part_sends_half_as_it_receives() {
        let mut prr = Prr::begin(20 * MSS);
        prr.on_sent(MSS); // the fast retransmit
        let mut sent = Vec::new();
        let mut pipe = 19 * MSS;
        for _ in 0..18 {
            pipe -= MSS;
            prr.on_ack(MSS, pipe, 10 * MSS, MSS);
            let n = prr.allowance() / MSS;
            for _ in 0..n {
                prr.on_sent(MSS);
                pipe += MSS;
            }
            sent.push(n);
        }
        // ceil(d * ssthresh / RecoverFS) - out in bytes, the retransmission
        // counted: a segment leaves once a whole one is allowed, i.e. at
        // every second ACK from the fourth on.
        assert_eq!(&sent[..6], &[0, 0, 0, 1, 0, 1], "{sent:?}");
        // When pipe reaches ssthresh, PRR-SSRB holds it there: one segment
        // per segment delivered.
        assert_eq!(&sent[14..], &[1, 1, 1, 1], "{sent:?}");
        assert_eq!(pipe, 10 * MSS, "recovery ends with pipe = ssthresh");
    }

    #[test]
    fn slow_start_reduction_bound_refills_to_ssthresh() {
        let mut prr = Prr::begin(20 * MSS);
        // A burst of losses left pipe far below ssthresh; an ACK reporting
        // two segments delivered releases at most three.
        prr.on_ack(2 * MSS, 3 * MSS, 10 * MSS, MSS);
        assert_eq!(prr.allowance(), 3 * MSS);
        prr.on_sent(3 * MSS);
        // Close to ssthresh the gap is the limit.
        prr.on_ack(5 * MSS, 9 * MSS, 10 * MSS, MSS);
        assert_eq!(prr.allowance(), MSS);
    }
}
