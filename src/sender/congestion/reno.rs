//! Reno (RFC 5681) with Appropriate Byte Counting (RFC 3465).
//!
//! Growth is driven by the number of bytes each ACK newly acknowledges, not
//! by the number of ACKs. That is what lets ackwise thin out ACKs without
//! slowing the sender down: a stretch ACK covering four segments is worth
//! as much as four ACKs, up to the byte-counting limit L.

use super::{fraction_of, CongestionControl};
use crate::time::Instant;

/// The multiplicative decrease applied to FlightSize when a congestion
/// event sets ssthresh (RFC 5681 section 3.1 equation 4, and its use for
/// fast retransmit in section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Decrease {
    /// ssthresh = FlightSize / 2, the RFC 5681 rule, for every event.
    #[default]
    Half,
    /// Paper 003 section 4.4: beta = 2/7 after the initial slow start, so
    /// ssthresh = FlightSize x 5/7 (computed in integers, rounded down).
    /// With the AIMD TCP-friendliness condition alpha = 3 beta / (2 - beta)
    /// (its equation 2), beta = 2/7 is what an increase of alpha = 1/2
    /// segment per RTT allows, which is what a sender acknowledged twice
    /// per window (2W) achieves. The congestion event that ends the
    /// initial slow start still halves, because the window that overshot
    /// in slow start says little about the path; so does any event before
    /// slow start first ends. Only fast-retransmit events use it: equation
    /// 2 describes the congestion-avoidance sawtooth, while the FlightSize
    /// at a retransmission timeout may be a slow-start overshoot far above
    /// the path, and keeping 5/7 of that makes the next slow start
    /// overshoot again (see `docs/pacing.md`). Timeouts halve as RFC 5681
    /// section 3.1 says, but they do end the initial slow start.
    TwoSevenths,
    /// RFC 9438's beta_cubic = 0.7: ssthresh = FlightSize x 7/10 for fast
    /// retransmits and timeouts alike (sections 4.6 and 4.8), except for
    /// the reduction that ends the initial slow start, which halves, as
    /// with [`TwoSevenths`](Self::TwoSevenths): the window that overshot
    /// says little about the path, and 7/10 of a slow-start overshoot can
    /// still be above the path and the buffer, so the recovery overflows
    /// the queue again (on the gauntlet, `ae+cubic` with 0.7 there took
    /// 2.4x plain AE's time on a 892 Mbit/s, 9 ms path, 1 302 drops and a
    /// timeout against 857 drops and none). What [`Cubic`](super::Cubic)
    /// runs its Reno with.
    SevenTenths,
}

/// Parameters of [`Reno`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenoConfig {
    /// SMSS in bytes.
    pub mss: u64,
    /// Initial window IW in bytes (RFC 5681 section 3.1, RFC 6928).
    pub initial_window: u64,
    /// Byte-counting limit L in segments (RFC 3465 section 2.2).
    pub byte_counting_limit: u32,
    /// After a timeout, limit slow start to min(L, cwnd) segments per ACK
    /// (paper 003 sec. 4.2) instead of 1 (RFC 3465 section 2.3).
    pub extended_abc: bool,
    /// Initial ssthresh in bytes; RFC 5681 section 3.1 says "arbitrarily
    /// high", e.g. `u64::MAX`.
    pub initial_ssthresh: u64,
    /// Multiplicative decrease on congestion events (RFC 5681 halving by
    /// default; paper 003 section 4.4's beta = 2/7 as an option).
    pub decrease: Decrease,
    /// Congestion avoidance adds SMSS * SMSS / cwnd per new ACK (RFC
    /// 5681 section 3.1, equation 3) instead of one SMSS per window of
    /// acknowledged bytes (RFC 3465 section 2.1). This is the NewReno of
    /// paper 004 and of ns-2, whose window grows with the number of ACKs:
    /// it is why fewer ACKs slow the growth, which smartacking relies on
    /// (paper 004 sec. 3.1) and delayed ACKs suffer from.
    pub ack_counting_avoidance: bool,
    /// The smallest cwnd, in segments: the loss window after a timeout
    /// and the floor of every decrease. RFC 5681 section 3.1's loss
    /// window is 1; QUIC's kMinimumWindow (RFC 9002 section 7.2) is 2.
    pub minimum_window_segments: u32,
    /// Bytes counted toward the next congestion-avoidance increase stay
    /// counted across a fast-retransmit decrease, as in Linux
    /// (`tcp_cong_avoid_ai` spends credit gathered at a larger window) and
    /// quinn-proto's NewReno; off, the count restarts at the decrease, as
    /// in ns-2's Reno, whose fractional window increase is lost when cwnd
    /// is set to ssthresh. A timeout restarts it either way.
    pub avoidance_credit_survives_decrease: bool,
}

impl RenoConfig {
    /// The RFC 6928 section 2 initial window:
    /// min(10 * MSS, max(2 * MSS, 14600)).
    pub fn rfc6928_initial_window(mss: u64) -> u64 {
        mss.saturating_mul(10)
            .min(mss.saturating_mul(2).max(14_600))
    }

    /// Defaults for a given SMSS: IW per RFC 6928, L = 2 (the largest value
    /// RFC 3465 section 2.2 recommends) and an unbounded initial ssthresh
    /// (RFC 5681 section 3.1), halving on congestion.
    pub fn new(mss: u64) -> Self {
        RenoConfig {
            mss,
            initial_window: Self::rfc6928_initial_window(mss),
            byte_counting_limit: 2,
            extended_abc: false,
            initial_ssthresh: u64::MAX,
            decrease: Decrease::Half,
            ack_counting_avoidance: false,
            minimum_window_segments: 1,
            avoidance_credit_survives_decrease: false,
        }
    }
}

/// Reno congestion control with Appropriate Byte Counting.
///
/// * Slow start (RFC 3465 section 2.2): each ACK grows cwnd by
///   min(acked bytes, L * SMSS), and growth stops at ssthresh.
/// * Congestion avoidance (RFC 3465 section 2.1): acknowledged bytes are
///   accumulated in `bytes_acked`; whenever a full cwnd's worth has been
///   acknowledged, cwnd grows by one SMSS.
/// * Floors: cwnd never drops below the minimum window (1 SMSS unless
///   configured) and ssthresh never below 2 SMSS
///   (RFC 5681 section 3.1).
#[derive(Debug, Clone)]
pub struct Reno {
    config: RenoConfig,
    cwnd: u64,
    ssthresh: u64,
    /// RFC 3465 `bytes_acked`: bytes acknowledged since cwnd last grew in
    /// congestion avoidance.
    bytes_acked: u64,
    /// ACK-counting avoidance: bytes of ACKs too small to count yet. An
    /// ACK counts once it, with the small ones before it, covers a whole
    /// segment, so a receiver that splits one segment's ACK into many
    /// ("ACK division", Savage et al. 1999) gains nothing over one ACK.
    ack_division_bytes: u64,
    /// The configured limit L, in segments.
    limit: u32,
    /// Set by a retransmission timeout, cleared when ssthresh is reached or
    /// at the next fast-retransmit congestion event. While set, slow start
    /// uses L = 1 SMSS regardless of `limit` (RFC 3465 section 2.3), because
    /// an ACK after an RTO may cover segments that were never lost but
    /// merely delayed, and counting them all would burst.
    post_rto_slow_start: bool,
    /// An RTO happened and no new data has been acknowledged since. A second
    /// timeout in that state is a repeated timeout of the same segment, for
    /// which RFC 5681 section 3.1 holds ssthresh constant.
    rto_without_progress: bool,
    /// The connection's first slow start has not ended yet (by a
    /// congestion event, a timeout or reaching ssthresh). Paper 003
    /// section 4.4 applies beta = 2/7 only after it.
    initial_slow_start: bool,
}

impl Reno {
    /// A controller with `config`, repaired where inconsistent: SMSS of at
    /// least 1 byte, cwnd of at least 1 SMSS, ssthresh of at least 2 SMSS and
    /// L of at least 1 segment.
    pub fn new(config: RenoConfig) -> Self {
        let mss = config.mss.max(1);
        let config = RenoConfig { mss, ..config };
        let cwnd = config
            .initial_window
            .max(mss.saturating_mul(u64::from(config.minimum_window_segments.max(1))));
        let ssthresh = config.initial_ssthresh.max(mss.saturating_mul(2));
        Reno {
            config,
            cwnd,
            ssthresh,
            bytes_acked: 0,
            ack_division_bytes: 0,
            limit: config.byte_counting_limit.max(1),
            post_rto_slow_start: false,
            rto_without_progress: false,
            initial_slow_start: cwnd < ssthresh,
        }
    }

    /// The configuration in use (after repair by [`new`](Self::new)).
    pub fn config(&self) -> &RenoConfig {
        &self.config
    }

    /// SMSS in bytes.
    pub fn mss(&self) -> u64 {
        self.config.mss
    }

    /// Changes SMSS, e.g. when a path MTU probe succeeds (RFC 8899). cwnd
    /// and ssthresh stay in bytes; the floors, the increase per window and
    /// the byte-counting limit follow the new size from the next ACK on.
    pub fn set_mss(&mut self, mss: u64) {
        self.config.mss = mss.max(1);
    }

    /// The RFC 3465 section 2.1 congestion-avoidance byte counter.
    pub fn bytes_acked(&self) -> u64 {
        self.bytes_acked
    }

    /// Whether the RFC 3465 section 2.3 rule (L = 1 SMSS in the slow start
    /// that follows an RTO) is currently in force.
    pub fn in_post_rto_slow_start(&self) -> bool {
        self.post_rto_slow_start
    }

    /// The L, in segments, that applies to slow start right now.
    ///
    /// This is the single place that decides the slow-start increase limit,
    /// so a different rule (ackwise's extended ABC) replaces only this.
    pub fn effective_slow_start_limit(&self) -> u32 {
        if self.post_rto_slow_start {
            if self.config.extended_abc {
                // Paper 003 sec. 4.2: min(L, cwnd) lets slow start double
                // per RTT although each ACK covers several segments, and
                // still counts no more than was sent since the timeout.
                let cwnd_segments = (self.cwnd / self.config.mss.max(1)).max(1);
                u32::try_from(cwnd_segments.min(u64::from(self.limit))).unwrap_or(self.limit)
            } else {
                1
            }
        } else {
            self.limit
        }
    }

    fn floor_cwnd(&self) -> u64 {
        self.config
            .mss
            .saturating_mul(u64::from(self.config.minimum_window_segments.max(1)))
    }

    fn floor_ssthresh(&self) -> u64 {
        self.config.mss.saturating_mul(2)
    }

    /// Whether the connection's first slow start is still running (see
    /// [`Decrease::TwoSevenths`]).
    pub fn in_initial_slow_start(&self) -> bool {
        self.initial_slow_start
    }

    /// RFC 5681 equation 4: ssthresh = max(FlightSize / 2, 2 * SMSS), or
    /// 7/10 of FlightSize with [`Decrease::SevenTenths`] after the initial
    /// slow start (RFC 9438 section 4.8 keeps beta_cubic at a timeout).
    fn reduced_ssthresh(&self, flight_size: u64) -> u64 {
        let reduced = match self.config.decrease {
            Decrease::SevenTenths if !self.initial_slow_start => fraction_of(flight_size, 7, 10),
            _ => flight_size / 2,
        };
        reduced.max(self.floor_ssthresh())
    }

    /// The fast-retransmit ssthresh: [`reduced_ssthresh`](Self::reduced_ssthresh),
    /// or with [`Decrease::TwoSevenths`] after the initial slow start
    /// max(FlightSize x 5/7, 2 * SMSS) (paper 003 section 4.4).
    fn decreased_ssthresh(&self, flight_size: u64) -> u64 {
        match self.config.decrease {
            Decrease::TwoSevenths if !self.initial_slow_start => {
                fraction_of(flight_size, 5, 7).max(self.floor_ssthresh())
            }
            _ => self.reduced_ssthresh(flight_size),
        }
    }

    /// New data was acknowledged in congestion avoidance of a controller
    /// that grows cwnd by a rule of its own: a later timeout is a new
    /// episode again (RFC 5681 section 3.1's hold on ssthresh ends).
    pub(super) fn note_progress(&mut self) {
        self.rto_without_progress = false;
    }

    /// Sets cwnd in congestion avoidance for a controller that grows it by
    /// a rule of its own ([`Cubic`](super::Cubic)); floors apply as for
    /// every update.
    pub(super) fn set_avoidance_window(&mut self, cwnd: u64, reason: &'static str) {
        self.set(cwnd, self.ssthresh, reason);
    }

    fn set(&mut self, cwnd: u64, ssthresh: u64, reason: &'static str) {
        let cwnd = cwnd.max(self.floor_cwnd());
        let ssthresh = ssthresh.max(self.floor_ssthresh());
        if cwnd == self.cwnd && ssthresh == self.ssthresh {
            return;
        }
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
        tracing::debug!(cwnd, ssthresh, reason, "reno window update");
    }
}

impl CongestionControl for Reno {
    fn set_mss(&mut self, mss: u64) {
        Reno::set_mss(self, mss);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    fn on_ack(&mut self, _now: Instant, acked_bytes: u64) {
        if acked_bytes == 0 {
            return;
        }
        self.rto_without_progress = false;
        if self.in_slow_start() {
            let limit =
                u64::from(self.effective_slow_start_limit()).saturating_mul(self.config.mss);
            // Stopping at ssthresh keeps an ACK that straddles the threshold
            // from overshooting into congestion avoidance by up to L * SMSS.
            let cwnd = self
                .cwnd
                .saturating_add(acked_bytes.min(limit))
                .min(self.ssthresh);
            self.set(cwnd, self.ssthresh, "slow start");
            if !self.in_slow_start() {
                self.post_rto_slow_start = false;
                self.initial_slow_start = false;
            }
        } else if self.config.ack_counting_avoidance {
            let mss = self.config.mss;
            let covered = self.ack_division_bytes.saturating_add(acked_bytes);
            if covered < mss {
                self.ack_division_bytes = covered;
                return;
            }
            self.ack_division_bytes = 0;
            let increase = (mss.saturating_mul(mss) / self.cwnd.max(1)).max(1);
            let cwnd = self.cwnd.saturating_add(increase);
            self.set(cwnd, self.ssthresh, "congestion avoidance");
        } else {
            self.bytes_acked = self.bytes_acked.saturating_add(acked_bytes);
            // At most one SMSS per ACK, as in RFC 3465 section 2.1; any
            // excess stays in the counter for the next ACK.
            if self.bytes_acked >= self.cwnd {
                self.bytes_acked -= self.cwnd;
                let cwnd = self.cwnd.saturating_add(self.config.mss);
                self.set(cwnd, self.ssthresh, "congestion avoidance");
            }
        }
    }

    fn end_slow_start(&mut self, _now: Instant) {
        if self.in_slow_start() {
            self.set(self.cwnd, self.cwnd, "slow start ended by delay");
            self.initial_slow_start = false;
            self.post_rto_slow_start = false;
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, flight_size: u64) {
        let ssthresh = self.decreased_ssthresh(flight_size);
        self.initial_slow_start = false;
        if !self.config.avoidance_credit_survives_decrease {
            self.bytes_acked = 0;
        }
        self.post_rto_slow_start = false;
        self.rto_without_progress = false;
        self.set(ssthresh, ssthresh, "fast retransmit");
    }

    fn on_recovery_exit(&mut self, _now: Instant) {
        self.bytes_acked = 0;
        self.set(self.ssthresh, self.ssthresh, "recovery exit");
    }

    fn on_retransmission_timeout(&mut self, _now: Instant, flight_size: Option<u64>) {
        // RFC 5681 section 3.1: ssthresh is reduced only on the first timeout
        // of a segment; when the retransmission itself times out, FlightSize
        // no longer says anything about the path and ssthresh is held. The
        // same when the sender says this episode was already answered.
        let ssthresh = match flight_size {
            Some(flight_size) if !self.rto_without_progress => self.reduced_ssthresh(flight_size),
            _ => self.ssthresh,
        };
        self.initial_slow_start = false;
        self.bytes_acked = 0;
        self.post_rto_slow_start = true;
        self.rto_without_progress = true;
        self.set(self.floor_cwnd(), ssthresh, "retransmission timeout");
    }

    fn on_spurious_timeout(&mut self, _now: Instant, prior: crate::sender::PriorWindow) {
        // The timeout's own effects go: the L = 1 slow start that guards
        // against counting delayed segments, and the hold on ssthresh for
        // a repeated timeout.
        self.post_rto_slow_start = false;
        self.rto_without_progress = false;
        let cwnd = self.cwnd.max(prior.cwnd);
        let ssthresh = self.ssthresh.max(prior.ssthresh);
        self.set(cwnd, ssthresh, "spurious timeout undone");
    }

    fn set_byte_counting_limit(&mut self, segments: u32) {
        // L = 0 would freeze slow start; one segment is the RFC 3465 minimum.
        self.limit = segments.max(1);
    }

    fn byte_counting_limit(&self) -> u32 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const T: Instant = Instant::ZERO;

    fn reno(cwnd_segments: u64, limit: u32) -> Reno {
        Reno::new(RenoConfig {
            mss: MSS,
            initial_window: cwnd_segments * MSS,
            byte_counting_limit: limit,
            extended_abc: false,
            initial_ssthresh: u64::MAX,
            decrease: Decrease::Half,
            ack_counting_avoidance: false,
            minimum_window_segments: 1,
            avoidance_credit_survives_decrease: false,
        })
    }

    #[test]
    fn extended_abc_after_a_timeout_counts_min_of_l_and_cwnd() {
        // L = 8 (A8L8); a timeout leaves cwnd at 1 segment.
        let mut plain = reno(40, 8);
        let mut ext = Reno::new(RenoConfig {
            extended_abc: true,
            ..*plain.config()
        });
        for r in [&mut plain, &mut ext] {
            r.on_retransmission_timeout(T, Some(40 * MSS));
            assert_eq!(r.window(), MSS);
            assert!(r.in_post_rto_slow_start());
        }
        // RFC 3465: one segment per ACK whatever the ACK covers.
        assert_eq!(plain.effective_slow_start_limit(), 1);
        // Paper 003 sec. 4.2: min(L, cwnd) = min(8, 1) = 1 at first ...
        assert_eq!(ext.effective_slow_start_limit(), 1);
        // ... so an ACK for 8 segments (only one was sent) adds one.
        ext.on_ack(T, 8 * MSS);
        plain.on_ack(T, 8 * MSS);
        assert_eq!(ext.window(), 2 * MSS);
        assert_eq!(plain.window(), 2 * MSS);
        // Then the limit grows with cwnd and slow start doubles per ACK
        // round, where RFC 3465's L = 1 creeps by one segment per ACK.
        assert_eq!(ext.effective_slow_start_limit(), 2);
        ext.on_ack(T, 8 * MSS);
        plain.on_ack(T, 8 * MSS);
        assert_eq!(ext.window(), 4 * MSS);
        assert_eq!(plain.window(), 3 * MSS);
        ext.on_ack(T, 8 * MSS);
        assert_eq!(ext.window(), 8 * MSS);
        // Capped by L itself.
        ext.on_ack(T, 16 * MSS);
        assert_eq!(ext.window(), 16 * MSS);
        assert_eq!(ext.effective_slow_start_limit(), 8);
    }

    #[test]
    fn rfc6928_initial_window() {
        assert_eq!(RenoConfig::rfc6928_initial_window(1460), 14_600);
        assert_eq!(RenoConfig::rfc6928_initial_window(1000), 10_000);
        assert_eq!(RenoConfig::rfc6928_initial_window(9000), 18_000);
        assert_eq!(RenoConfig::rfc6928_initial_window(536), 5_360);
        let c = RenoConfig::new(1460);
        assert_eq!(c.byte_counting_limit, 2);
        assert_eq!(c.initial_ssthresh, u64::MAX);
        let r = Reno::new(c);
        assert_eq!(r.window(), 14_600);
        assert!(r.in_slow_start());
    }

    #[test]
    fn slow_start_limit_one_vs_two() {
        let mut one = reno(10, 1);
        let mut two = reno(10, 2);
        one.on_ack(T, 2 * MSS);
        two.on_ack(T, 2 * MSS);
        assert_eq!(one.window(), 11 * MSS);
        assert_eq!(two.window(), 12 * MSS);
        // A stretch ACK of 4 segments is capped at L = 2.
        two.on_ack(T, 4 * MSS);
        assert_eq!(two.window(), 14 * MSS);
        // A small ACK counts its bytes, not a full segment.
        two.on_ack(T, 100);
        assert_eq!(two.window(), 14 * MSS + 100);
    }

    #[test]
    fn limit_changes_at_run_time() {
        let mut r = reno(10, 2);
        r.set_byte_counting_limit(8);
        assert_eq!(r.byte_counting_limit(), 8);
        r.on_ack(T, 8 * MSS);
        assert_eq!(r.window(), 18 * MSS);
        r.set_byte_counting_limit(0);
        assert_eq!(r.byte_counting_limit(), 1);
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut r = Reno::new(RenoConfig {
            initial_ssthresh: 11 * MSS + 500,
            ..RenoConfig::new(MSS)
        });
        r.on_ack(T, 2 * MSS);
        assert_eq!(r.window(), 11 * MSS + 500);
        assert!(!r.in_slow_start());
    }

    /// One RTT of ACKs, each acknowledging `per_ack` bytes, covering one
    /// full window of data.
    fn one_rtt(r: &mut Reno, per_ack: u64) {
        let window = r.window();
        let mut acked = 0;
        while acked < window {
            let n = per_ack.min(window - acked);
            r.on_ack(T, n);
            acked += n;
        }
    }

    #[test]
    fn congestion_avoidance_grows_one_mss_per_window() {
        for per_ack in [MSS, 2 * MSS, 300, 7 * MSS] {
            let mut r = Reno::new(RenoConfig {
                initial_ssthresh: 20 * MSS,
                ..reno(20, 2).config
            });
            assert!(!r.in_slow_start());
            for rtt in 1..=5 {
                one_rtt(&mut r, per_ack);
                assert_eq!(r.window(), (20 + rtt) * MSS, "per_ack {per_ack}");
            }
        }
        // Less than a window of ACKed data does not grow cwnd.
        let mut r = Reno::new(RenoConfig {
            initial_ssthresh: 10 * MSS,
            ..reno(10, 2).config
        });
        r.on_ack(T, 10 * MSS - 1);
        assert_eq!(r.window(), 10 * MSS);
        assert_eq!(r.bytes_acked(), 10 * MSS - 1);
        r.on_ack(T, 2);
        assert_eq!(r.window(), 11 * MSS);
        assert_eq!(r.bytes_acked(), 1);
    }

    #[test]
    fn congestion_event_halves_flight_size_not_cwnd() {
        let mut r = reno(40, 2);
        r.on_congestion_event(T, 16 * MSS);
        assert_eq!(r.ssthresh(), 8 * MSS);
        assert_eq!(r.window(), 8 * MSS);
        assert!(!r.in_slow_start());
        // Floor: ssthresh >= 2 SMSS even for a tiny flight.
        r.on_congestion_event(T, MSS);
        assert_eq!(r.ssthresh(), 2 * MSS);
        assert_eq!(r.window(), 2 * MSS);
    }

    #[test]
    fn congestion_event_resets_ca_counter_and_recovery_exit_deflates() {
        let mut r = Reno::new(RenoConfig {
            initial_ssthresh: 10 * MSS,
            ..reno(10, 2).config
        });
        r.on_ack(T, 5 * MSS);
        assert_eq!(r.bytes_acked(), 5 * MSS);
        r.on_congestion_event(T, 10 * MSS);
        assert_eq!(r.bytes_acked(), 0);
        r.on_recovery_exit(T);
        assert_eq!(r.window(), 5 * MSS);
        assert_eq!(r.ssthresh(), 5 * MSS);
        // A full new window is needed before the next increase.
        r.on_ack(T, 5 * MSS - 1);
        assert_eq!(r.window(), 5 * MSS);
    }

    #[test]
    fn rto_sets_loss_window_and_uses_flight_size() {
        let mut r = reno(40, 2);
        r.on_retransmission_timeout(T, Some(30 * MSS));
        assert_eq!(r.window(), MSS);
        assert_eq!(r.ssthresh(), 15 * MSS);
        assert!(r.in_slow_start());
        assert_eq!(r.bytes_acked(), 0);
    }

    #[test]
    fn repeated_rto_holds_ssthresh() {
        let mut r = reno(40, 2);
        r.on_retransmission_timeout(T, Some(30 * MSS));
        // The retransmission timed out too; FlightSize is now tiny.
        r.on_retransmission_timeout(T, Some(MSS));
        assert_eq!(r.ssthresh(), 15 * MSS);
        assert_eq!(r.window(), MSS);
        // After progress a new timeout reduces ssthresh again.
        r.on_ack(T, MSS);
        r.on_retransmission_timeout(T, Some(6 * MSS));
        assert_eq!(r.ssthresh(), 3 * MSS);
    }

    #[test]
    fn rto_ending_a_recovery_keeps_the_episodes_ssthresh() {
        let mut r = reno(40, 2);
        r.on_congestion_event(T, 40 * MSS);
        assert_eq!(r.ssthresh(), 20 * MSS);
        r.on_retransmission_timeout(T, None);
        assert_eq!(r.ssthresh(), 20 * MSS, "no second reduction");
        assert_eq!(r.window(), MSS, "loss window all the same");
        assert!(r.in_post_rto_slow_start());
    }

    #[test]
    fn limit_is_one_segment_after_rto_until_ssthresh() {
        let mut r = reno(40, 2);
        r.on_retransmission_timeout(T, Some(8 * MSS));
        assert!(r.in_post_rto_slow_start());
        assert_eq!(r.effective_slow_start_limit(), 1);
        assert_eq!(r.byte_counting_limit(), 2, "configured L is kept");
        r.on_ack(T, 2 * MSS);
        assert_eq!(r.window(), 2 * MSS);
        r.on_ack(T, 4 * MSS);
        assert_eq!(r.window(), 3 * MSS);
        r.on_ack(T, MSS);
        assert_eq!(r.window(), 4 * MSS);
        assert_eq!(r.ssthresh(), 4 * MSS);
        assert!(!r.in_post_rto_slow_start());
        // Reaching ssthresh restores the configured L for later slow starts.
        assert_eq!(r.effective_slow_start_limit(), 2);
    }

    #[test]
    fn fast_retransmit_ends_post_rto_rule() {
        let mut r = reno(40, 2);
        r.on_retransmission_timeout(T, Some(20 * MSS));
        r.on_ack(T, MSS);
        r.on_congestion_event(T, 2 * MSS);
        assert!(!r.in_post_rto_slow_start());
        assert_eq!(r.effective_slow_start_limit(), 2);
    }

    #[test]
    fn floors_hold() {
        let mut r = Reno::new(RenoConfig {
            mss: MSS,
            initial_window: 0,
            byte_counting_limit: 0,
            extended_abc: false,
            initial_ssthresh: 0,
            decrease: Decrease::Half,
            ack_counting_avoidance: false,
            minimum_window_segments: 0,
            avoidance_credit_survives_decrease: false,
        });
        assert_eq!(r.window(), MSS);
        assert_eq!(r.ssthresh(), 2 * MSS);
        assert_eq!(r.byte_counting_limit(), 1);
        r.on_retransmission_timeout(T, Some(0));
        assert_eq!(r.window(), MSS);
        assert_eq!(r.ssthresh(), 2 * MSS);
        r.on_congestion_event(T, 0);
        assert_eq!(r.window(), 2 * MSS);
        let z = Reno::new(RenoConfig::new(0));
        assert_eq!(z.mss(), 1);
        assert!(z.window() >= 1);
    }

    fn reno_2_7() -> Reno {
        Reno::new(RenoConfig {
            decrease: Decrease::TwoSevenths,
            ack_counting_avoidance: false,
            ..reno(10, 2).config
        })
    }

    #[test]
    fn two_sevenths_halves_at_the_end_of_initial_slow_start_only() {
        let mut r = reno_2_7();
        assert!(r.in_initial_slow_start());
        // The event that ends the initial slow start halves.
        r.on_congestion_event(T, 70 * MSS);
        assert!(!r.in_initial_slow_start());
        assert_eq!(r.ssthresh(), 35 * MSS);
        r.on_recovery_exit(T);
        // Every later one keeps 5/7 of FlightSize (beta = 2/7).
        r.on_congestion_event(T, 70 * MSS);
        assert_eq!(r.ssthresh(), 50 * MSS);
        assert_eq!(r.window(), 50 * MSS);
        r.on_congestion_event(T, 14 * MSS);
        assert_eq!(r.ssthresh(), 10 * MSS);
    }

    #[test]
    fn two_sevenths_rounds_down_and_keeps_the_floor() {
        let mut r = reno_2_7();
        r.on_congestion_event(T, 10 * MSS);
        // 7001 x 5 / 7 = 5000.7 bytes.
        r.on_congestion_event(T, 7001);
        assert_eq!(r.ssthresh(), 5000);
        // 2 SMSS floor.
        r.on_congestion_event(T, 2 * MSS);
        assert_eq!(r.ssthresh(), 2 * MSS);
        r.on_congestion_event(T, 0);
        assert_eq!(r.ssthresh(), 2 * MSS);
        // No overflow at the extreme.
        r.on_congestion_event(T, u64::MAX);
        // u64::MAX = 7k + 1, so floor(5 u64::MAX / 7) = 5k.
        assert_eq!(u64::MAX % 7, 1);
        assert_eq!(r.ssthresh(), u64::MAX / 7 * 5);
    }

    #[test]
    fn two_sevenths_leaves_timeouts_halving_but_they_end_initial_slow_start() {
        let mut r = reno_2_7();
        // A timeout ends the initial slow start and halves.
        r.on_retransmission_timeout(T, Some(28 * MSS));
        assert_eq!(r.ssthresh(), 14 * MSS);
        assert_eq!(r.window(), MSS);
        // The slow start after a timeout is not the initial one.
        r.on_ack(T, MSS);
        assert!(r.in_slow_start() && !r.in_initial_slow_start());
        // Later timeouts still halve.
        r.on_retransmission_timeout(T, Some(28 * MSS));
        assert_eq!(r.ssthresh(), 14 * MSS);
        // A fast retransmit after it keeps 5/7.
        r.on_ack(T, MSS);
        r.on_congestion_event(T, 7 * MSS);
        assert_eq!(r.ssthresh(), 5 * MSS);
    }

    #[test]
    fn two_sevenths_after_slow_start_ends_at_ssthresh() {
        // Slow start that ends by reaching ssthresh, without loss, is over:
        // the first congestion event already uses 5/7.
        let mut r = Reno::new(RenoConfig {
            initial_ssthresh: 12 * MSS,
            ..reno_2_7().config
        });
        r.on_ack(T, 2 * MSS);
        assert!(!r.in_slow_start() && !r.in_initial_slow_start());
        r.on_congestion_event(T, 14 * MSS);
        assert_eq!(r.ssthresh(), 10 * MSS);
        // Starting in congestion avoidance, there is no initial slow start.
        let mut ca = Reno::new(RenoConfig {
            initial_ssthresh: 10 * MSS,
            ..reno_2_7().config
        });
        assert!(!ca.in_initial_slow_start());
        ca.on_congestion_event(T, 14 * MSS);
        assert_eq!(ca.ssthresh(), 10 * MSS);
    }

    #[test]
    fn half_is_the_default_and_unchanged() {
        assert_eq!(RenoConfig::new(MSS).decrease, Decrease::Half);
        let mut r = reno(10, 2);
        r.on_congestion_event(T, 70 * MSS);
        r.on_congestion_event(T, 70 * MSS);
        assert_eq!(r.ssthresh(), 35 * MSS);
    }

    #[test]
    fn usable_as_trait_object() {
        let mut cc: Box<dyn CongestionControl> = Box::new(Reno::new(RenoConfig::new(MSS)));
        cc.on_ack(T, MSS);
        assert_eq!(cc.window(), 11 * MSS);
    }

    #[test]
    fn ack_counting_avoidance_grows_with_the_number_of_acks() {
        let config = |ack_counting_avoidance| RenoConfig {
            initial_window: 10 * MSS,
            initial_ssthresh: 10 * MSS,
            ack_counting_avoidance,
            ..RenoConfig::new(MSS)
        };
        let mut bytes = Reno::new(config(false));
        let mut acks = Reno::new(config(true));
        // One window acknowledged by 5 ACKs of 2 segments each.
        for _ in 0..5 {
            bytes.on_ack(T, 2 * MSS);
            acks.on_ack(T, 2 * MSS);
        }
        // Byte counting: one SMSS per window, however it was ACKed.
        assert_eq!(bytes.window(), 11 * MSS);
        // ACK counting: SMSS^2/cwnd per ACK, about half an SMSS here.
        assert!(acks.window() > 10 * MSS + MSS * 4 / 10, "{}", acks.window());
        assert!(acks.window() < 10 * MSS + MSS / 2, "{}", acks.window());
        // Ten single-segment ACKs: about one SMSS.
        let mut acks = Reno::new(config(true));
        for _ in 0..10 {
            acks.on_ack(T, MSS);
        }
        assert!(acks.window() > 10 * MSS + MSS * 9 / 10, "{}", acks.window());
    }

    #[test]
    fn ack_division_earns_no_more_than_one_ack_per_segment() {
        let config = RenoConfig {
            initial_window: 10 * MSS,
            initial_ssthresh: 10 * MSS,
            ack_counting_avoidance: true,
            ..RenoConfig::new(MSS)
        };
        let mut honest = Reno::new(config);
        let mut divided = Reno::new(config);
        // Ten segments: ten honest ACKs, or each split into ten slices.
        for _ in 0..10 {
            honest.on_ack(T, MSS);
            for _ in 0..10 {
                divided.on_ack(T, MSS / 10);
            }
        }
        assert_eq!(divided.window(), honest.window());
        // A small ACK still counts once enough of them cover a segment.
        let mut small = Reno::new(config);
        small.on_ack(T, MSS / 2);
        assert_eq!(small.window(), 10 * MSS);
        small.on_ack(T, MSS / 2);
        assert!(small.window() > 10 * MSS);
    }

    #[test]
    fn minimum_window_and_avoidance_credit_across_a_decrease() {
        let config = RenoConfig {
            initial_window: 10 * MSS,
            initial_ssthresh: 10 * MSS,
            ..RenoConfig::new(MSS)
        };
        // Six segments of credit toward the next increase, then a loss.
        let credit_after_loss = |config: RenoConfig| {
            let mut r = Reno::new(config);
            r.on_ack(T, 6 * MSS);
            assert_eq!(r.bytes_acked(), 6 * MSS);
            r.on_congestion_event(T, 10 * MSS);
            assert_eq!(r.window(), 5 * MSS);
            r.bytes_acked()
        };
        assert_eq!(credit_after_loss(config), 0);
        let keeping = RenoConfig {
            avoidance_credit_survives_decrease: true,
            ..config
        };
        assert_eq!(credit_after_loss(keeping), 6 * MSS);
        // A timeout restarts the count and leaves the loss window.
        let mut r = Reno::new(RenoConfig {
            minimum_window_segments: 2,
            ..keeping
        });
        r.on_ack(T, 6 * MSS);
        r.on_retransmission_timeout(T, Some(10 * MSS));
        assert_eq!((r.window(), r.bytes_acked()), (2 * MSS, 0));
        let mut one = Reno::new(config);
        one.on_retransmission_timeout(T, Some(10 * MSS));
        assert_eq!(one.window(), MSS);
    }
}
