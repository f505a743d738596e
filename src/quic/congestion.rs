//! ackwise's Reno with extended byte counting as a quinn-proto
//! [`Controller`](quinn_proto::congestion::Controller).
//!
//! The arithmetic is the sender's own [`Reno`]; this module only maps
//! quinn-proto's callbacks onto it by their meaning:
//!
//! | quinn-proto | ackwise [`CongestionControl`] | why |
//! |---|---|---|
//! | `on_ack` (one per newly acknowledged packet), slow start | summed, not forwarded | byte counting limits the credit *per ACK*, and one ACK frame acknowledges many packets |
//! | `on_end_acks` (once per ACK frame) | `on_ack(sum)` | RFC 3465 section 2.2: min(acked bytes, L * SMSS) per ACK in slow start; what a frame that reaches ssthresh acknowledged beyond that step counts toward congestion avoidance |
//! | `on_ack`, congestion avoidance | `on_ack(bytes)` per packet | one SMSS each time the credit reaches cwnd, however many times one frame's credit does (Linux's `tcp_cong_avoid_ai`, quinn-proto's NewReno) |
//! | `on_sent` | the instant of the first datagram kept | it marks the first flight |
//! | `on_congestion_event` for the first flight (the handshake, sent at that instant) | ignored | the handshake's loss is not a congestion signal for the data window (Linux keeps the initial window after one lost SYN) |
//! | `on_congestion_event`, not persistent | `on_congestion_event(cwnd)` | RFC 9002 section 7.3.2 recovery entry; one per recovery period |
//! | `on_congestion_event`, persistent | `on_retransmission_timeout(Some(cwnd))` | RFC 9002 section 7.6 is QUIC's RTO; paper 003 sec. 4.2's min(L, cwnd) applies after it with `extended_abc` |
//! | packets sent before recovery started | ignored by `on_ack` | RFC 9002 section 7.3.2: recovery ends when a packet sent after its start is acknowledged (the RFC 6582 deflation step is then a no-op: cwnd already equals ssthresh) |
//! | `on_mtu_update` | [`Reno::set_mss`] | SMSS is the datagram size |
//!
//! Two [`RenoConfig`] settings differ from ackwise's TCP sender, both as
//! quinn-proto's NewReno has them, so that the two controllers differ only
//! where byte counting and the decrease do: the smallest window is two
//! datagrams (RFC 9002 section 7.2's kMinimumWindow, also after persistent
//! congestion), and the congestion-avoidance credit gathered before a loss
//! survives the decrease
//! ([`avoidance_credit_survives_decrease`](RenoConfig::avoidance_credit_survives_decrease)).
//!
//! The decrease base is cwnd, as in quinn-proto's NewReno: quinn-proto
//! reports bytes in flight only per ACK frame, not at the loss, and it
//! does not grow cwnd while application-limited, so cwnd is not inflated
//! above what the path carried the way an idle TCP sender's can be.
//!
//! Pacing: quinn-proto paces every connection itself from cwnd and the
//! smoothed RTT; the `Controller` trait has no input for a pacing rate.
//! [`metrics`](quinn_proto::congestion::Controller::metrics) reports
//! cwnd / SRTT as the pacing hint (it reaches qlog traces), which is the
//! most the trait allows.

use crate::sender::congestion::{CongestionControl, Decrease, Reno, RenoConfig};
use crate::time::Instant as VirtualInstant;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};
use quinn_proto::RttEstimator;
use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Parameters of [`AckwiseReno`], and the factory quinn-proto builds one
/// controller per connection from
/// ([`TransportConfig::congestion_controller_factory`](quinn_proto::TransportConfig::congestion_controller_factory)).
///
/// ```
/// use ackwise::quic::{AckwiseRenoConfig, SelfSigned};
/// use quinn_proto::{Endpoint, EndpointConfig, TransportConfig};
/// use std::sync::Arc;
///
/// let mut transport = TransportConfig::default();
/// // L = 8: one ACK frame may credit up to 8 datagrams' worth of bytes,
/// // which an ACK frequency of one ACK per 8 packets needs.
/// transport.congestion_controller_factory(Arc::new(AckwiseRenoConfig::new(8)));
/// // Any rustls setup works; this one trusts a certificate made here.
/// let cert = SelfSigned::generate()?;
/// let client_config = cert.client_config(transport)?;
/// let server_config = cert.server_config(TransportConfig::default())?;
/// let mut client = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
/// let _server = Endpoint::new(
///     Arc::new(EndpointConfig::default()),
///     Some(Arc::new(server_config)),
///     false,
///     None,
/// );
/// let now = std::time::Instant::now();
/// let server_addr = "127.0.0.1:4433".parse()?;
/// let (_handle, conn) =
///     client.connect(now, client_config, server_addr, ackwise::quic::SERVER_NAME)?;
/// // The connection's controller is ackwise's: 10 datagrams of 1200 bytes.
/// assert_eq!(conn.congestion_state().initial_window(), 12_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckwiseRenoConfig {
    /// Byte-counting limit L in datagrams (RFC 3465 section 2.2): the most
    /// one ACK frame may add to cwnd in slow start is L * SMSS.
    pub byte_counting_limit: u32,
    /// After persistent congestion, limit slow start to min(L, cwnd)
    /// datagrams per ACK frame (paper 003 sec. 4.2) instead of one
    /// (RFC 3465 section 2.3).
    pub extended_abc: bool,
    /// Multiplicative decrease (halving, or paper 003 sec. 4.4's 2/7).
    pub decrease: Decrease,
    /// Initial window in bytes; `None` is RFC 9002 section 7.2's
    /// min(10 * SMSS, max(2 * SMSS, 14720)).
    pub initial_window: Option<u64>,
}

impl AckwiseRenoConfig {
    /// Limit `byte_counting_limit` datagrams per ACK frame, extended byte
    /// counting after persistent congestion, halving on loss.
    pub fn new(byte_counting_limit: u32) -> Self {
        AckwiseRenoConfig {
            byte_counting_limit: byte_counting_limit.max(1),
            extended_abc: true,
            decrease: Decrease::Half,
            initial_window: None,
        }
    }

    fn initial_window_for(&self, mtu_bytes: u64) -> u64 {
        // RFC 9002 section 7.2.
        self.initial_window
            .unwrap_or_else(|| (10 * mtu_bytes).min((2 * mtu_bytes).max(14_720)))
    }
}

impl ControllerFactory for AckwiseRenoConfig {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(AckwiseReno::new(&self, now, current_mtu))
    }
}

/// ackwise's [`Reno`] behind quinn-proto's controller trait; see the
/// module documentation for how each callback maps.
#[derive(Debug, Clone)]
pub struct AckwiseReno {
    reno: Reno,
    /// quinn-proto's clock at creation: [`Reno`] takes ackwise instants,
    /// measured from here.
    epoch: Instant,
    mtu_bytes: u64,
    initial_window: u64,
    /// Packets sent at or before this instant belong to the current (or a
    /// finished) recovery period: their ACKs do not grow cwnd and their
    /// losses do not reduce it again.
    recovery_start: Option<Instant>,
    /// Bytes newly acknowledged by the ACK frame being processed.
    acked_in_frame: u64,
    /// When the first datagram went out: packets sent then are the
    /// connection's first flight.
    first_sent: Option<Instant>,
    /// Smoothed RTT at the last ACK, for the pacing hint.
    srtt: Option<Duration>,
}

impl AckwiseReno {
    /// A controller for a connection whose datagrams are `current_mtu`
    /// bytes, created at `now`.
    pub fn new(config: &AckwiseRenoConfig, now: Instant, current_mtu: u16) -> Self {
        let mtu_bytes = u64::from(current_mtu).max(1);
        let initial_window = config.initial_window_for(mtu_bytes);
        let reno = Reno::new(RenoConfig {
            initial_window,
            byte_counting_limit: config.byte_counting_limit,
            extended_abc: config.extended_abc,
            decrease: config.decrease,
            minimum_window_segments: 2,
            avoidance_credit_survives_decrease: true,
            ..RenoConfig::new(mtu_bytes)
        });
        AckwiseReno {
            reno,
            epoch: now,
            mtu_bytes,
            initial_window,
            recovery_start: None,
            acked_in_frame: 0,
            first_sent: None,
            srtt: None,
        }
    }

    /// The Reno state underneath (ssthresh, byte counter, limits).
    pub fn reno(&self) -> &Reno {
        &self.reno
    }

    fn virtual_now(&self, now: Instant) -> VirtualInstant {
        let since = now.saturating_duration_since(self.epoch);
        VirtualInstant::from_nanos(crate::time::duration_nanos_saturating(since))
    }

    /// Whether a packet went out with the connection's first datagrams:
    /// its first flight, the handshake (the client's Initial, or the
    /// server's answer to it), sent before any RTT sample. Its loss leaves
    /// the window alone, as Linux keeps the initial window after one lost
    /// SYN (`tcp_init_transfer`) and RFC 9002 section 7.6.2 keeps packets
    /// sent before the first RTT sample out of persistent congestion: one
    /// lost handshake packet says little about the path, and ending slow
    /// start at two datagrams because of it leaves the transfer to crawl by
    /// one datagram per RTT from the start. A retransmission of the
    /// handshake that is lost again is a second loss, and counts.
    fn is_first_flight(&self, sent: Instant) -> bool {
        self.first_sent.is_some_and(|first| sent <= first)
    }

    fn in_recovery_period(&self, sent: Instant) -> bool {
        self.recovery_start.is_some_and(|start| sent <= start)
    }

    /// One newly acknowledged packet of the ACK frame being processed.
    fn packet_acked(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool) {
        // An application-limited sender has not tested the window it would
        // grow (RFC 9002 section 7.8), and ACKs of packets sent before the
        // loss belong to the recovery period.
        if app_limited || self.in_recovery_period(sent) {
            return;
        }
        if self.reno.in_slow_start() {
            self.acked_in_frame = self.acked_in_frame.saturating_add(bytes);
        } else {
            // Congestion avoidance adds one SMSS each time the credit
            // reaches cwnd. Counted per packet, an ACK frame whose credit
            // (with what survived the last decrease) spans more than one
            // window adds one SMSS for each, as Linux's tcp_cong_avoid_ai
            // and quinn-proto's NewReno do; counted per frame it would add
            // one and leave the rest waiting for the next frame, which a
            // low ACK frequency makes long.
            let now = self.virtual_now(now);
            self.reno.on_ack(now, bytes);
        }
    }

    /// RFC 9002 section 7.2: the window never goes below two datagrams,
    /// while ackwise's Reno floors at one segment (RFC 5681's loss window).
    fn minimum_window(&self) -> u64 {
        2 * self.mtu_bytes
    }
}

impl Controller for AckwiseReno {
    fn on_sent(&mut self, now: Instant, _bytes: u64, _last_packet_number: u64) {
        self.first_sent.get_or_insert(now);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.srtt = Some(rtt.get());
        self.packet_acked(now, sent, bytes, app_limited);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        _in_flight: u64,
        _app_limited: bool,
        _largest_packet_num_acked: Option<u64>,
    ) {
        let acked = std::mem::take(&mut self.acked_in_frame);
        if acked == 0 {
            return;
        }
        let now = self.virtual_now(now);
        let before = self.reno.window();
        self.reno.on_ack(now, acked);
        if !self.reno.in_slow_start() {
            // The frame took cwnd to ssthresh, where Reno's slow start
            // stops; the bytes it acknowledged beyond what that step used
            // are congestion-avoidance credit, as RFC 3465's byte counter
            // and quinn-proto's NewReno count them, rather than lost.
            let used = self.reno.window().saturating_sub(before);
            let rest = acked.saturating_sub(used);
            if rest > 0 {
                self.reno.on_ack(now, rest);
            }
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        _lost_bytes: u64,
    ) {
        if self.is_first_flight(sent) {
            return;
        }
        let in_recovery = self.in_recovery_period(sent);
        if in_recovery && !is_persistent_congestion {
            return;
        }
        self.recovery_start = Some(now);
        let base = self.reno.window();
        let vnow = self.virtual_now(now);
        match (is_persistent_congestion, in_recovery) {
            // RFC 9002 section 7.6.2 with its appendix B.8: the losses
            // belong to the recovery period that already set ssthresh, so
            // only the window collapses; halving again would quarter it.
            (true, true) => self.reno.on_retransmission_timeout(vnow, None),
            (true, false) => self.reno.on_retransmission_timeout(vnow, Some(base)),
            (false, _) => self.reno.on_congestion_event(vnow, base),
        }
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu_bytes = u64::from(new_mtu).max(1);
        self.reno.set_mss(self.mtu_bytes);
    }

    fn window(&self) -> u64 {
        self.reno.window().max(self.minimum_window())
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut m = ControllerMetrics::default();
        m.congestion_window = self.window();
        m.ssthresh = Some(self.reno.ssthresh());
        m.pacing_rate = self
            .srtt
            .filter(|d| !d.is_zero())
            .map(|srtt| (self.window() as f64 * 8.0 / srtt.as_secs_f64()) as u64);
        m
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }

    fn initial_window(&self) -> u64 {
        self.initial_window
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u16 = 1200;
    const M: u64 = MTU as u64;
    /// When the handshake's acknowledgment arrives in [`established`], and
    /// the tests' lost packets went out: after the first flight, whose loss
    /// the controller ignores.
    const AFTER_HANDSHAKE: Duration = Duration::from_micros(1);

    /// A controller made at `t0` that sent its first flight then and has
    /// had it acknowledged (application-limited, so the window has not
    /// moved).
    fn established(config: &AckwiseRenoConfig, t0: Instant) -> AckwiseReno {
        let mut c = AckwiseReno::new(config, t0, MTU);
        c.on_sent(t0, M, 0);
        let t = t0 + AFTER_HANDSHAKE;
        c.packet_acked(t, t0, M, true);
        c.on_end_acks(t, 0, true, None);
        c
    }

    /// One ACK frame acknowledging `packets` full datagrams sent at `sent`.
    fn ack_frame(c: &mut AckwiseReno, now: Instant, sent: Instant, packets: u64) {
        // RttEstimator has no public constructor, so the tests enter
        // below `Controller::on_ack`, which only adds the SRTT sample.
        for _ in 0..packets {
            c.packet_acked(now, sent, M, false);
        }
        c.on_end_acks(now, 0, false, None);
    }

    #[test]
    fn slow_start_credits_at_most_l_datagrams_per_ack_frame() {
        let t0 = Instant::now();
        let cfg = AckwiseRenoConfig::new(4);
        let mut c = AckwiseReno::new(&cfg, t0, MTU);
        let iw = c.window();
        assert_eq!(iw, 10 * M);
        // One frame acknowledging 8 datagrams grows cwnd by L = 4 only.
        ack_frame(&mut c, t0, t0, 8);
        assert_eq!(c.window(), iw + 4 * M);
        // Two frames of 2 datagrams each grow it by 2 + 2.
        ack_frame(&mut c, t0, t0, 2);
        ack_frame(&mut c, t0, t0, 2);
        assert_eq!(c.window(), iw + 8 * M);
    }

    #[test]
    fn one_decrease_per_recovery_period_and_no_growth_from_its_packets() {
        let t0 = Instant::now();
        let mut c = established(&AckwiseRenoConfig::new(2), t0);
        let w = c.window();
        let t1 = t0 + Duration::from_millis(10);
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, false, M);
        assert_eq!(c.window(), w / 2);
        // A second loss of a packet sent before recovery began: ignored.
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, false, M);
        assert_eq!(c.window(), w / 2);
        // ACKs of packets sent before recovery began: no growth.
        ack_frame(&mut c, t1, t0, 4);
        assert_eq!(c.window(), w / 2);
        // A packet sent after: congestion avoidance counts it.
        let t2 = t1 + Duration::from_millis(1);
        ack_frame(&mut c, t2, t2, 1);
        assert_eq!(c.reno().bytes_acked(), M);
        // A loss of a packet sent after the start of recovery: new period.
        // The avoidance credit gathered so far stays, as in quinn-proto's
        // NewReno and Linux.
        c.on_congestion_event(t2, t2, false, M);
        assert_eq!(c.window(), (w / 4).max(2 * M));
        assert_eq!(c.reno().bytes_acked(), M);
    }

    #[test]
    fn a_lost_first_flight_leaves_the_window_and_slow_start() {
        let t0 = Instant::now();
        let mut c = AckwiseReno::new(&AckwiseRenoConfig::new(2), t0, MTU);
        let iw = c.window();
        let t1 = t0 + Duration::from_millis(300);
        // The handshake sent at creation is declared lost, even as
        // persistent congestion: neither cwnd nor ssthresh moves.
        c.on_sent(t0, M, 0);
        c.on_congestion_event(t1, t0, false, M);
        c.on_congestion_event(t1, t0, true, M);
        assert_eq!(c.window(), iw);
        assert_eq!(c.reno().ssthresh(), u64::MAX);
        // Slow start goes on: a frame of 2 datagrams sent later adds 2.
        let t2 = t1 + Duration::from_millis(1);
        ack_frame(&mut c, t2, t1, 2);
        assert_eq!(c.window(), iw + 2 * M);
        // A loss of a packet sent after the first flight halves (the
        // handshake's retransmission at t1, say).
        c.on_congestion_event(t2, t1, false, M);
        assert_eq!(c.window(), (iw + 2 * M) / 2);
    }

    #[test]
    fn bytes_past_ssthresh_count_toward_avoidance() {
        let t0 = Instant::now();
        let mut c = established(&AckwiseRenoConfig::new(8), t0);
        let t1 = t0 + Duration::from_millis(10);
        // Persistent congestion: ssthresh 5 datagrams, cwnd 2.
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, true, 10 * M);
        assert_eq!((c.window(), c.reno().ssthresh()), (2 * M, 5 * M));
        let t2 = t1 + Duration::from_millis(1);
        ack_frame(&mut c, t2, t2, 4);
        assert_eq!(c.window(), 4 * M, "min(L, cwnd) = 2 per frame");
        // 4 datagrams: one takes cwnd to ssthresh, the other 3 are
        // avoidance credit.
        ack_frame(&mut c, t2, t2, 4);
        assert_eq!(c.window(), 5 * M);
        assert_eq!(c.reno().bytes_acked(), 3 * M);
    }

    #[test]
    fn avoidance_adds_one_datagram_per_window_of_credit_within_one_frame() {
        let t0 = Instant::now();
        let mut c = established(&AckwiseRenoConfig::new(2), t0);
        let t1 = t0 + Duration::from_millis(10);
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, false, M);
        let w = c.window();
        assert_eq!(w, 5 * M);
        assert!(!c.reno().in_slow_start());
        // One frame of 11 datagrams sent after recovery began: 5 of them
        // fill the 5-datagram window (+1), the next 6 the 6-datagram one
        // (+1 again). Counted per frame, the second would wait for the
        // next frame.
        let t2 = t1 + Duration::from_millis(1);
        ack_frame(&mut c, t2, t2, 11);
        assert_eq!(c.window(), w + 2 * M);
        assert_eq!(c.reno().bytes_acked(), 0);
    }

    #[test]
    fn two_sevenths_after_the_initial_slow_start() {
        let t0 = Instant::now();
        let cfg = AckwiseRenoConfig {
            decrease: Decrease::TwoSevenths,
            initial_window: Some(70 * M),
            ..AckwiseRenoConfig::new(2)
        };
        let mut c = established(&cfg, t0);
        let t1 = t0 + Duration::from_millis(1);
        // The event ending the initial slow start halves.
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, false, M);
        assert_eq!(c.window(), 35 * M);
        let t2 = t1 + Duration::from_millis(1);
        c.on_congestion_event(t2, t2, false, M);
        assert_eq!(c.window(), 25 * M);
    }

    #[test]
    fn persistent_congestion_then_min_of_l_and_cwnd_per_frame() {
        let t0 = Instant::now();
        // A window of 40 datagrams leaves ssthresh at 20, out of the way.
        let cfg = AckwiseRenoConfig {
            initial_window: Some(40 * M),
            ..AckwiseRenoConfig::new(8)
        };
        let mut c = established(&cfg, t0);
        let t1 = t0 + Duration::from_millis(1);
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, true, 10 * M);
        // RFC 9002's minimum window of two datagrams, in Reno itself, so
        // that growth starts from two.
        assert_eq!(c.window(), 2 * M);
        assert_eq!(c.reno().window(), 2 * M);
        // cwnd = 2 datagrams: a frame acknowledging 8 credits min(8, 2).
        let t2 = t1 + Duration::from_millis(1);
        ack_frame(&mut c, t2, t2, 8);
        assert_eq!(c.reno().window(), 4 * M);
        // Then min(8, 4) = 4.
        ack_frame(&mut c, t2, t2, 8);
        assert_eq!(c.reno().window(), 8 * M);
        // Without the extension, RFC 3465 section 2.3's one datagram.
        let mut plain = established(
            &AckwiseRenoConfig {
                extended_abc: false,
                ..cfg
            },
            t0,
        );
        plain.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, true, 10 * M);
        ack_frame(&mut plain, t2, t2, 8);
        ack_frame(&mut plain, t2, t2, 8);
        assert_eq!(plain.reno().window(), 4 * M);
    }

    #[test]
    fn persistent_congestion_inside_a_recovery_period_keeps_its_ssthresh() {
        let t0 = Instant::now();
        let cfg = AckwiseRenoConfig {
            initial_window: Some(40 * M),
            ..AckwiseRenoConfig::new(2)
        };
        let mut c = established(&cfg, t0);
        let t1 = t0 + Duration::from_millis(10);
        // Recovery starts at t1: ssthresh = 20 datagrams.
        c.on_congestion_event(t1, t0 + AFTER_HANDSHAKE, false, M);
        assert_eq!(c.reno().ssthresh(), 20 * M);
        // Persistent congestion of packets sent before t1: the window
        // collapses, ssthresh stays (RFC 9002 section 7.6.2).
        let t2 = t1 + Duration::from_secs(1);
        c.on_congestion_event(t2, t0 + AFTER_HANDSHAKE, true, 10 * M);
        assert_eq!(c.window(), 2 * M);
        assert_eq!(c.reno().ssthresh(), 20 * M);
        // Persistent congestion of packets sent after the last recovery
        // began is a new episode: ssthresh halves from the window then.
        let mut d = established(&cfg, t0);
        d.on_congestion_event(t1, t1, true, 10 * M);
        assert_eq!(d.reno().ssthresh(), 20 * M);
        assert_eq!(d.window(), 2 * M);
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window_and_mtu_updates_apply() {
        let t0 = Instant::now();
        let mut c = AckwiseReno::new(&AckwiseRenoConfig::new(2), t0, MTU);
        let w = c.window();
        c.packet_acked(t0, t0, M, true);
        c.on_end_acks(t0, 0, true, None);
        assert_eq!(c.window(), w);
        c.on_mtu_update(1400);
        assert_eq!(c.reno().mss(), 1400);
        assert_eq!(c.metrics().pacing_rate, None);
        c.srtt = Some(Duration::from_millis(100));
        assert_eq!(c.metrics().pacing_rate, Some(w * 8 * 10));
    }
}
