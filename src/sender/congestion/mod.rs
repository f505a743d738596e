//! Congestion control behind a small trait.
//!
//! The loss-recovery driver (`sender.rs`) decides *when* something happened
//! (new data acknowledged, fast retransmit, end of recovery, timeout); the
//! controller decides what that does to cwnd and ssthresh. All sizes are in
//! bytes and every call takes `now` so that time-based controllers fit the
//! same sans-IO interface.

mod cubic;
mod reno;
pub use cubic::Cubic;
pub use reno::{Decrease, Reno, RenoConfig};

use crate::time::{Duration, Instant};

/// `bytes` x `num` / `den`, rounded down, for the decrease factors
/// (5/7, 7/10, 17/20); u128 so that the product cannot overflow.
fn fraction_of(bytes: u64, num: u64, den: u64) -> u64 {
    u64::try_from(u128::from(bytes) * u128::from(num) / u128::from(den.max(1))).unwrap_or(u64::MAX)
}

/// A window-based congestion controller (RFC 5681 terminology). All sizes
/// in bytes.
pub trait CongestionControl: core::fmt::Debug + Send {
    /// Current congestion window, cwnd (RFC 5681 section 2).
    fn window(&self) -> u64;

    /// Current slow start threshold, ssthresh (RFC 5681 section 3.1).
    fn ssthresh(&self) -> u64;

    /// `cwnd < ssthresh`: the controller is in slow start
    /// (RFC 5681 section 3.1).
    fn in_slow_start(&self) -> bool;

    /// New data cumulatively acknowledged outside loss recovery
    /// (RFC 5681 section 3.1, counted in bytes as RFC 3465 section 2
    /// prescribes). `acked_bytes` is how far SND.UNA advanced.
    fn on_ack(&mut self, now: Instant, acked_bytes: u64);

    /// Loss detected by fast retransmit: enter recovery with
    /// ssthresh = max(base / 2, 2 * SMSS) and cwnd = ssthresh
    /// (RFC 5681 section 3.2 equation 4, RFC 6675 section 5 step 4.2).
    /// Also the answer to ECN-Echo, which RFC 3168 section 6.1.2 makes the
    /// same reduction as for a dropped packet, with no recovery to follow.
    /// `flight_size` is the base the sender chose for the decrease: the
    /// window in use, i.e. min(cwnd, peak FlightSize of the last round
    /// trip), without limited transmit's data (RFC 5681 section 3.2 step
    /// 2); RFC 7661 section 4 is why it is not cwnd alone, and the
    /// sender's `WindowInUse` why it is not the instant FlightSize. A
    /// controller may use another decrease factor (Reno's
    /// [`Decrease::TwoSevenths`], paper 003 section 4.4).
    fn on_congestion_event(&mut self, now: Instant, flight_size: u64);

    /// Fast recovery finished: cwnd = ssthresh (the deflation step of
    /// RFC 6582 section 3.2 step 3, also used with RFC 6675).
    fn on_recovery_exit(&mut self, now: Instant);

    /// Retransmission timeout: ssthresh = max(base / 2, 2 * SMSS) and
    /// cwnd = loss window = 1 SMSS (RFC 5681 section 3.1 equation 4 and the
    /// paragraph after it), `base` chosen as for
    /// [`on_congestion_event`](Self::on_congestion_event).
    ///
    /// `flight_size` is `None` when the timeout ends a fast recovery whose
    /// entry already reduced ssthresh for this loss episode: ssthresh is
    /// kept and only cwnd collapses. FlightSize then counts the data that
    /// recovery sent (RFC 6675 NextSeg rule 2), often several RTTs of it,
    /// and half of it can lie above the path's capacity, which makes every
    /// later slow start overshoot into the next timeout. Linux's
    /// `tcp_enter_loss` likewise keeps ssthresh when the timer fires in
    /// recovery of the same episode. When the retransmission itself times
    /// out (no new data acknowledged since the previous timeout) RFC 5681
    /// section 3.1 also keeps ssthresh unchanged.
    fn on_retransmission_timeout(&mut self, now: Instant, flight_size: Option<u64>);

    /// The last retransmission timeout turned out spurious (see
    /// [`SpuriousTimeout`](crate::sender::SpuriousTimeout)): take its
    /// reduction back, cwnd and ssthresh at least `prior` again (RFC 4015
    /// section 3 restores ssthresh; cwnd as Linux's undo does, since the
    /// whole window had been delivered). The default keeps the reduction,
    /// for controllers that cannot tell what to restore.
    fn on_spurious_timeout(&mut self, now: Instant, prior: crate::sender::PriorWindow) {
        let _ = (now, prior);
    }

    /// Ends slow start where cwnd stands: ssthresh = cwnd (HyStart++'s
    /// exit at the end of Conservative Slow Start, RFC 9406 section 4.3;
    /// see `sender::hystart`).
    fn end_slow_start(&mut self, now: Instant);

    /// Sets the byte-counting limit L in segments (RFC 3465 section 2.2).
    /// ackwise changes it at run time when the ACK frequency changes.
    fn set_byte_counting_limit(&mut self, segments: u32);

    /// The byte-counting limit L in segments (RFC 3465 section 2.2).
    fn byte_counting_limit(&self) -> u32;

    /// Changes SMSS mid-connection (a smaller path MTU, RFC 8899 section
    /// 4.3). cwnd and ssthresh stay in bytes; what counts in segments
    /// (floors, increase per window) follows the new size.
    fn set_mss(&mut self, mss: u64);

    /// A new RTT sample was taken; `min_rtt` is the smallest seen so far.
    /// A time-based controller ([`Cubic`]) plans its window one round
    /// trip ahead; the default ignores it.
    fn on_rtt_sample(&mut self, now: Instant, min_rtt: Duration) {
        let _ = (now, min_rtt);
    }
}
