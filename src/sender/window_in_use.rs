//! The window the sender actually used, the base of every multiplicative
//! decrease.
//!
//! RFC 5681 section 3.1 equation 4 sets ssthresh = max(FlightSize / 2,
//! 2 * SMSS) at a loss, and RFC 7661 section 4 explains why FlightSize and
//! not cwnd: a cwnd that grew while the application left it unused says
//! nothing about the path. But FlightSize measured *at the moment* of the
//! event is wrong in both directions in ackwise:
//!
//! * too large: a timeout that ends a failed SACK recovery sees every byte
//!   sent during the several RTTs of that recovery (RFC 6675 NextSeg rule
//!   2 sends new data), so ssthresh lands above BDP + buffer, the next
//!   slow start overshoots again, and a timeout follows every couple of
//!   seconds (issue 18, paper 003 fig. 6 at 100 Mbit/s). Limited transmit
//!   inflates it too, and RFC 5681 section 3.2 step 2 excludes that data.
//! * too small: a stretch ACK that arrives with SACK blocks just before
//!   the fast retransmit has already taken half a window out of flight
//!   (2W), and paper 003's AF holds the refill (sec. 4.3), so FlightSize
//!   is about W/2 and the decrease cuts to W/4 instead of W/2.
//!
//! The base used here is therefore `min(cwnd, in_use)`, where `in_use` is
//! the largest FlightSize seen right after a transmission of ordinary data
//! (not limited transmit, not loss recovery) during the current and the
//! previous round trip. The `min` with cwnd removes data sent beyond cwnd
//! (limited transmit, recovery); taking the peak over the last round trip
//! instead of the instant value keeps a window that sparse ACKs or AF took
//! out of flight a moment ago; and a cwnd the application never filled is
//! capped by what it did fill (RFC 7661). ns-2 (min(cwnd, rwnd) / 2) and
//! Linux (cwnd / 2 for Reno) use cwnd alone, which is the same base while
//! the sender is cwnd-limited.

/// Peak FlightSize over the current and previous round trip.
#[derive(Debug, Clone, Default)]
pub struct WindowInUse {
    /// Peak in the round that ends when SND.UNA reaches `round_end`.
    current: u64,
    /// Peak of the round before.
    previous: u64,
    /// HighData when the current round began.
    round_end: u64,
}

impl WindowInUse {
    /// Ordinary data was sent; `flight` is FlightSize right after it.
    pub fn on_send(&mut self, flight: u64) {
        self.current = self.current.max(flight);
    }

    /// SND.UNA advanced to `snd_una`, with `flight` bytes still
    /// outstanding and HighData at `high_data`. A round ends when all the
    /// data outstanding at its start is acknowledged.
    pub fn on_ack(&mut self, snd_una: u64, high_data: u64, flight: u64) {
        if snd_una >= self.round_end {
            self.previous = self.current;
            self.current = flight;
            self.round_end = high_data;
        }
    }

    /// The peak FlightSize over the last one to two round trips.
    pub fn peak(&self) -> u64 {
        self.current.max(self.previous)
    }

    /// A congestion event reduced the window: what was in use before it
    /// is not a measure of the reduced window. `high_data` starts the
    /// next round.
    pub fn restart(&mut self, high_data: u64) {
        self.current = 0;
        self.previous = 0;
        self.round_end = high_data;
    }

    /// The base for ssthresh (see the module doc): `min(cwnd, in_use)`,
    /// where `in_use` is the larger of the peak and `flight` (FlightSize
    /// now, without data sent by limited transmit).
    pub fn reduction_base(&self, cwnd: u64, flight: u64) -> u64 {
        cwnd.min(self.peak().max(flight))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_survives_one_round_boundary_then_fades() {
        let mut w = WindowInUse::default();
        w.on_send(10);
        // The round began at HighData 0, so the first ACK ends it.
        w.on_ack(4, 10, 6);
        assert_eq!(w.peak(), 10, "the previous round's peak is kept");
        w.on_send(8);
        w.on_ack(9, 12, 3);
        assert_eq!(w.peak(), 10, "still inside the round that ends at 10");
        w.on_ack(10, 12, 2);
        assert_eq!(w.peak(), 8, "two rounds later the 10 is gone");
    }

    #[test]
    fn base_is_capped_by_cwnd_and_by_use() {
        let mut w = WindowInUse::default();
        w.on_send(6);
        // Limited transmit or recovery data beyond cwnd: cwnd caps it.
        assert_eq!(w.reduction_base(4, 8), 4);
        // An application-limited sender with a large unused cwnd.
        assert_eq!(w.reduction_base(20, 5), 6);
        // Sparse ACKs took data out of flight a moment ago.
        assert_eq!(w.reduction_base(8, 3), 6);
        w.restart(100);
        assert_eq!(w.reduction_base(8, 3), 3);
    }
}
