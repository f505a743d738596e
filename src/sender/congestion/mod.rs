//! Congestion control behind a small trait.
//!
//! The loss-recovery driver (`sender.rs`) decides *when* something happened
//! (new data acknowledged, fast retransmit, end of recovery, timeout); the
//! controller decides what that does to cwnd and ssthresh. All sizes are in
//! bytes and every call takes `now` so that time-based controllers fit the
//! same sans-IO interface.

mod reno;
pub use reno::{Decrease, Reno, RenoConfig};

use crate::time::Instant;

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
    /// ssthresh = max(FlightSize / 2, 2 * SMSS) and cwnd = ssthresh
    /// (RFC 5681 section 3.2 equation 4, RFC 6675 section 5 step 4.2).
    /// `flight_size` is the FlightSize of RFC 5681, *not* cwnd. A
    /// controller may use another decrease factor (Reno's
    /// [`Decrease::TwoSevenths`], paper 003 section 4.4).
    fn on_congestion_event(&mut self, now: Instant, flight_size: u64);

    /// Fast recovery finished: cwnd = ssthresh (the deflation step of
    /// RFC 6582 section 3.2 step 3, also used with RFC 6675).
    fn on_recovery_exit(&mut self, now: Instant);

    /// Retransmission timeout: ssthresh = max(FlightSize / 2, 2 * SMSS) and
    /// cwnd = loss window = 1 SMSS (RFC 5681 section 3.1 equation 4 and the
    /// paragraph after it). When the retransmission itself times out (no
    /// new data acknowledged since the previous timeout) RFC 5681 section
    /// 3.1 keeps ssthresh unchanged and only cwnd is reset.
    fn on_retransmission_timeout(&mut self, now: Instant, flight_size: u64);

    /// Sets the byte-counting limit L in segments (RFC 3465 section 2.2).
    /// ackwise changes it at run time when the ACK frequency changes.
    fn set_byte_counting_limit(&mut self, segments: u32);

    /// The byte-counting limit L in segments (RFC 3465 section 2.2).
    fn byte_counting_limit(&self) -> u32;
}
