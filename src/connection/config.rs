//! Connection configuration: which algorithms run at each end, and with
//! which parameters.

use super::ack_nonce::AckNonceMode;
use crate::estimators::RttEstimator;
use crate::receiver::{Acc, AckPolicy, Delayed, Every, HoleAcks, Polled, Smart};
pub use crate::receiver::{SmartParams, SmartRtt};
use crate::sender::congestion::{Cubic, Decrease, Reno, RenoConfig};
use crate::sender::CongestionControl;
use crate::sender::PacingConfig;
use crate::sender::{AdaptivePerWindow, EveryN, PerWindow, Requester};
use crate::time::Duration;
use alloc::boxed::Box;

/// How the receiver decides when to acknowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPolicyConfig {
    /// Acknowledge every segment (the papers' AE).
    Every,
    /// Delayed ACK (RFC 5681 4.2): every `segments`-th segment or after
    /// `max_delay`, and at once for out-of-order data and gap fills.
    Delayed {
        /// Upper bound on holding an ACK (at most 500 ms, RFC 1122).
        max_delay: Duration,
        /// Segments per ACK (2 in standard TCP).
        segments: u32,
    },
    /// The polled receiver (paper 003 sec. 4.1): acknowledge when the
    /// sender's request countdown runs out, at once for out-of-order data
    /// and gap fills, and at the latest `fallback` after the first
    /// unacknowledged segment, or an eighth of the receiver's RTT where
    /// that is longer, up to 500 ms (`Polled::FALLBACK_RTT_DIVISOR`).
    /// Segments without a request get standard delayed ACKs, so a sender
    /// that never asks is served as usual.
    Polled {
        /// Shortest time an ACK is held for the rest of a requested
        /// group (100 ms by default; the paper also used up to 1000 ms).
        fallback: Duration,
        /// Which arrivals are acknowledged at once while a hole is open
        /// (every one by default, as the paper has it).
        holes: HoleAcks,
    },
    /// Receiver-only smartacking (paper 004 sec. 3): ACK every segment
    /// while the bottleneck is underused, and once it is saturated hold
    /// each ACK until just before the sender would run out of window.
    Smart(SmartParams),
    /// ACK Congestion Control (RFC 5690; paper 004 sec. 2, paper 002
    /// sec. II.B): one ACK per `d` segments, `d` doubled on a congestion
    /// mark and lowered by one per RTT without marks, between 1 and half
    /// the estimated congestion window.
    Acc {
        /// Longest an ACK is held.
        max_delay: Duration,
        /// The sender's initial window, in segments, where the receiver's
        /// estimate of it starts.
        initial_window_segments: u32,
    },
}

impl AckPolicyConfig {
    /// Smartacking with the paper's settings: smoothed RTT, 200 ms
    /// maximum delay, estimate starting at one segment.
    pub const SMART: AckPolicyConfig = AckPolicyConfig::Smart(SmartParams::PAPER);

    /// ACC with a 200 ms maximum delay, estimate starting at one segment.
    pub const ACC: AckPolicyConfig = AckPolicyConfig::Acc {
        max_delay: Duration::from_millis(200),
        initial_window_segments: 1,
    };

    /// Standard delayed ACK: every second segment, 100 ms timer.
    pub const DELAYED: AckPolicyConfig = AckPolicyConfig::Delayed {
        max_delay: Duration::from_millis(100),
        segments: 2,
    };

    pub(crate) fn build(&self) -> Box<dyn AckPolicy> {
        match *self {
            AckPolicyConfig::Every => Box::new(Every),
            AckPolicyConfig::Delayed {
                max_delay,
                segments,
            } => Box::new(Delayed::new(max_delay, segments)),
            AckPolicyConfig::Polled { fallback, holes } => {
                Box::new(Polled::new(fallback).with_hole_acks(holes))
            }
            AckPolicyConfig::Smart(params) => Box::new(Smart::new(params)),
            AckPolicyConfig::Acc {
                max_delay,
                initial_window_segments,
            } => Box::new(Acc::new(max_delay, initial_window_segments)),
        }
    }
}

/// Congestion control parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CongestionConfig {
    /// Initial window in bytes; `None` means RFC 6928's
    /// `min(10 MSS, max(2 MSS, 14600))`.
    pub initial_window: Option<u64>,
    /// Appropriate Byte Counting limit L, in segments (RFC 3465; 2 by
    /// default, the papers' DAL2).
    pub byte_counting_limit: u32,
    /// Paper 003 sec. 4.2's extended byte counting after a timeout: L =
    /// min(L, cwnd in segments) instead of RFC 3465's L = 1, so slow start
    /// can still double when each ACK covers several segments. Off by
    /// default (RFC 3465).
    pub extended_abc: bool,
    /// Multiplicative decrease on congestion events: RFC 5681 halving by
    /// default, or paper 003 section 4.4's beta = 2/7 after the initial
    /// slow start ([`Decrease::TwoSevenths`]).
    pub decrease: Decrease,
    /// Count ACKs, not bytes, in congestion avoidance (RFC 5681 equation
    /// 3; paper 004's NewReno). Off by default (RFC 3465 byte counting).
    pub ack_counting_avoidance: bool,
    /// CUBIC (RFC 9438, [`Cubic`](crate::sender::congestion::Cubic))
    /// instead of Reno in congestion avoidance, with beta_cubic = 0.7 for
    /// every reduction after the one that ends the initial slow start
    /// ([`Decrease::SevenTenths`]); slow start and the loss rules stay as
    /// configured here. `decrease` and `ack_counting_avoidance` are then
    /// unused. Off by default.
    pub cubic: bool,
}

/// What the sender asks of the receiver with the ACK-request option
/// (paper 003 sec. 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckRequestConfig {
    /// Ask for nothing; the receiver's policy decides.
    #[default]
    None,
    /// `acks` ACKs per send window (2W, 4W).
    PerWindow {
        /// ACKs per window.
        acks: u32,
        /// Ask for every segment during slow start (sec. 4.2).
        every_segment_in_slow_start: bool,
    },
    /// Between `min_acks` and `max_acks` ACKs per window, as many as the
    /// queue needs (ackwise's `4w-adaptive`, see `AdaptivePerWindow`).
    Adaptive {
        /// ACKs per window with a queue.
        min_acks: u32,
        /// ACKs per window without one.
        max_acks: u32,
        /// Ask for every segment during slow start.
        every_segment_in_slow_start: bool,
        /// From this window (segments) on, congestion avoidance asks for
        /// `min_acks` and the sender counts the receiver's held group as
        /// delivered (`sender::hold_credit`); `None`: never.
        hold_credit_from: Option<u32>,
        /// After a retransmission timeout, where the hold credit sets the
        /// count, ask for more ACKs per window, up to `max_acks`, as
        /// requested ACKs go missing on the way back
        /// (`sender::ack_loss`, `AdaptivePerWindow::ack_loss_compensation`).
        ack_loss_compensation: bool,
        /// In slow start, ask for this many ACKs per window (the sender
        /// then spreads there too); `None`: the queue rule
        /// (`AdaptivePerWindow::slow_start_acks`).
        slow_start_acks: Option<u32>,
    },
    /// An ACK every `segments` segments, at least two per window (A4L4,
    /// A8L8).
    EveryN {
        /// Segments per ACK.
        segments: u32,
        /// Ask for every segment during slow start (sec. 4.2).
        every_segment_in_slow_start: bool,
    },
}

impl AckRequestConfig {
    /// The requester, or `None` when nothing is asked.
    pub(crate) fn build(&self) -> Option<Requester> {
        match *self {
            AckRequestConfig::None => None,
            AckRequestConfig::PerWindow {
                acks,
                every_segment_in_slow_start,
            } => Some(Requester::new(
                Box::new(PerWindow { acks }),
                every_segment_in_slow_start,
            )),
            AckRequestConfig::Adaptive {
                min_acks,
                max_acks,
                every_segment_in_slow_start,
                hold_credit_from,
                ack_loss_compensation,
                slow_start_acks,
            } => Some(Requester::new(
                Box::new(AdaptivePerWindow {
                    min_acks,
                    max_acks,
                    hold_credit_from,
                    ack_loss_compensation,
                    slow_start_acks,
                }),
                every_segment_in_slow_start,
            )),
            AckRequestConfig::EveryN {
                segments,
                every_segment_in_slow_start,
            } => Some(Requester::new(
                Box::new(EveryN { segments }),
                every_segment_in_slow_start,
            )),
        }
    }
}

impl Default for CongestionConfig {
    fn default() -> Self {
        CongestionConfig {
            initial_window: None,
            byte_counting_limit: 2,
            extended_abc: false,
            decrease: Decrease::Half,
            ack_counting_avoidance: false,
            cubic: false,
        }
    }
}

impl CongestionConfig {
    pub(crate) fn build(&self, mss: u64) -> Box<dyn CongestionControl> {
        let mut reno = RenoConfig::new(mss);
        if let Some(iw) = self.initial_window {
            reno.initial_window = iw.max(mss);
        }
        reno.byte_counting_limit = self.byte_counting_limit;
        reno.extended_abc = self.extended_abc;
        reno.decrease = self.decrease;
        reno.ack_counting_avoidance = self.ack_counting_avoidance;
        if self.cubic {
            return Box::new(Cubic::new(reno));
        }
        Box::new(Reno::new(reno))
    }
}

/// Everything a connection needs to know before it starts.
///
/// ```
/// use ackwise::connection::{AckPolicyConfig, Config};
/// use std::time::Duration;
///
/// let mut config = Config::default();
/// config.ack_policy = AckPolicyConfig::Every;
/// config.min_rto = Duration::from_millis(200);
/// config.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Largest payload we accept per segment, advertised in the MSS option.
    pub mss: u16,
    /// Send buffer, bytes.
    pub send_buffer: usize,
    /// Receive buffer, bytes; the advertised window never exceeds it.
    pub recv_buffer: usize,
    /// Offer window scaling (RFC 7323).
    pub window_scaling: bool,
    /// Offer SACK (RFC 2018).
    pub sack: bool,
    /// Offer timestamps (RFC 7323).
    pub timestamps: bool,
    /// Advertise support for the experimental ACK-request option.
    pub ack_requests: bool,
    /// ACKs this end asks its peer for when sending (needs `ack_requests`
    /// on both ends; otherwise, including when this end turns
    /// `ack_requests` off, the sender asks for nothing and falls back to
    /// byte counting with L = 2, as for a delayed-ACK receiver).
    pub request_acks: AckRequestConfig,
    /// Receiver ACK policy.
    pub ack_policy: AckPolicyConfig,
    /// Sender congestion control.
    pub congestion: CongestionConfig,
    /// RFC 6675 DupThresh.
    pub dup_thresh: u32,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// Paper 003's acknowledgment fixes (AF, sec. 4.3), for low ACK
    /// rates: outside loss recovery a cumulative ACK carrying SACK blocks
    /// releases no new data, and the fast retransmit waits until the next
    /// ACK is expected. Off by default.
    pub ack_fixes: bool,
    /// Byte counting leaves out data already SACKed when the cumulative
    /// ACK covers it (paper 003 sec. 4.2's proposal). On by default.
    pub abc_skips_sacked: bool,
    /// NewReno's "Impatient" timer (RFC 6582 section 4): in recovery
    /// without SACK only the first partial ACK restarts the retransmission
    /// timer, so a window with many losses ends in a timeout instead of
    /// one repair per RTT. ns-2's NewReno sender behaves this way; the
    /// default, "Slow-but-Steady", restarts it on every partial ACK. Off
    /// by default.
    pub impatient: bool,
    /// HyStart++ (RFC 9406): end the initial slow start when the RTT
    /// climbs, before the queue overflows (see `sender::hystart`).
    pub hystart: bool,
    /// Tail loss probes (RFC 8985 section 7): when no ACK has come for
    /// about two round trips while data is out, one segment is sent to
    /// draw an ACK, so a loss at the tail of a burst, or a lost last ACK,
    /// is repaired by fast recovery rather than by a timeout (see
    /// `sender::tail_loss_probe`). Needs SACK. On by default.
    pub tail_loss_probe: bool,
    /// A segment above the highest SACKed one, where RFC 6675's count of
    /// SACKed segments above can never decide, is deemed lost once a
    /// segment sent three or more transmissions after it (a resend) has
    /// been delivered and it has not (RFC 8985's rule, counted in
    /// transmissions rather than time). Without it, the last segments of
    /// a flight lost during a recovery wait for the retransmission timer.
    /// Needs SACK. On by default; off in [`Config::standard_tcp`], as
    /// ns-2's SACK sender has no such rule.
    pub loss_by_send_order: bool,
    /// In loss recovery, an ACK that SACKs segments sent only once is an
    /// RTT sample (from the latest of them), and so is one that SACKs a
    /// repair of a segment lost beyond doubt (from the repair, when at
    /// least the minimum RTT ago, as RFC 8985 times retransmissions; other
    /// resent segments are left out by Karn's rule), and the running
    /// retransmission timer keeps to the RTO the
    /// samples give, never firing earlier than it would have: a recovery
    /// whose ACKs queue on a slow reverse link then does not time out
    /// while they are still arriving. Needs SACK. On by default; off in
    /// [`Config::standard_tcp`], as ns-2's SACK sender times only
    /// cumulative ACKs.
    pub sack_rtt_samples: bool,
    /// A retransmission timeout keeps what the receiver SACKed, as Linux
    /// does: every unSACKed segment then outstanding is lost and resent in
    /// order against RFC 6675's `pipe`, skipping the SACKed ones, while the
    /// window slow-starts from one segment; going back to SND.UNA instead
    /// (RFC 5681's go-back-N) resends the SACKed data too. The marks are
    /// dropped when the receiver has reneged on them (it acknowledged up
    /// to SACKed data and no further). Needs SACK. On by default; off in
    /// [`Config::standard_tcp`], as ns-2's SACK sender goes back.
    pub timeout_keeps_sacks: bool,
    /// Early retransmit (RFC 5827): with fewer than four segments out and
    /// no new one to send, a loss is found once all but one of them are
    /// SACKed (or as many duplicate ACKs came), so a small window or the
    /// tail of a transfer is repaired by fast retransmit rather than by
    /// the timer. On by default; off in [`Config::standard_tcp`].
    pub early_retransmit: bool,
    /// The acknowledgment fixes postpone a fast retransmit only while
    /// each requested ACK covers two or more segments: with an ACK asked
    /// for every segment (a window of a few segments) there is no burst
    /// to let drain, and waiting takes time from the repair before the
    /// timer fires. On by default (ackwise's own); paper 003's AF waits
    /// whatever the group.
    pub af_waits_only_for_sparse_acks: bool,
    /// In a fast recovery that can send nothing (the window full, no
    /// segment counted lost), a hole below SACKed data is declared lost a
    /// round trip plus a quarter of the minimum RTT after it was sent, by
    /// a timer (RFC 8985's reordering timer; see
    /// [`reorder_timer`](crate::sender::reorder_timer)), instead of
    /// waiting for DupThresh SACKs a small window cannot bring and then
    /// for the retransmission timer. Needs SACK. On by default (ackwise's
    /// own); off in [`Config::standard_tcp`].
    pub reorder_timer: bool,
    /// ACK nonces (see [`ack_nonce`](super::ack_nonce)): every data
    /// segment carries a nonce only a receiver holding it can echo, and
    /// ACKs without the right echo are ignored, so a receiver cannot
    /// acknowledge data still in flight to speed the sender up. Offered
    /// by default; [`AckNonceMode::Require`] refuses peers without it.
    /// Toward a peer that declines an offer, some segments are cut short
    /// at secret points and its ACKs must name where segments end
    /// ([`segment_cuts`](crate::sender::segment_cuts)); `Off` does
    /// neither, as standard TCP.
    pub ack_nonce: AckNonceMode,
    /// Announce the congestion window, in segments, on every data segment
    /// that carries no ACK request, when the peer understands the
    /// experimental option: paper 004's "explicit assistance", for a
    /// smartacking receiver that uses it instead of its estimate. Off by
    /// default.
    pub announce_window: bool,
    /// Nagle's algorithm (RFC 896).
    pub nagle: bool,
    /// Initial retransmission timeout (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Minimum retransmission timeout (RFC 6298: 1 s; an emulator may go lower).
    pub min_rto: Duration,
    /// Maximum retransmission timeout.
    pub max_rto: Duration,
    /// Lower bound of the RTO's `4 * RTTVAR` term. The default, 1 ms (the
    /// clock granularity G), is RFC 6298's formula; setting it to a small
    /// `min_rto` (as the lab does, 200 ms) bounds the variance term the way
    /// Linux does, so a steady path does not time out spuriously when its
    /// RTT grows by a queue. See `RttEstimator::with_variance_floor`.
    pub rto_variance_floor: Duration,
    /// SYN or SYN-ACK transmissions before giving up.
    pub syn_retries: u32,
    /// Challenge ACKs (RFC 5961) a connection sends per second at most;
    /// the rest are withheld (section 7). Zero sends none.
    pub challenge_ack_limit: u32,
    /// A path MTU black hole's way out (RFC 8899 section 4.3): after
    /// [`BLACK_HOLE_TIMEOUTS`](super::BLACK_HOLE_TIMEOUTS) retransmission
    /// timeouts in a row, a sender whose segments are larger than this
    /// MSS sends no larger from then on, so a path that stops carrying
    /// the size the handshake agreed (a route change, a tunnel, a probe
    /// that passed where data does not) costs a few timeouts instead of
    /// the connection. `None` (the default, and the lab's): never. The
    /// socket endpoint sets it to the base size whenever its path probe
    /// raised the MSS above it.
    pub black_hole_mss: Option<u16>,
    /// The connection is dropped when nothing arrives for this long.
    pub idle_timeout: Option<Duration>,
    /// How long TIME-WAIT lasts (2 MSL). It must outlast the peer's
    /// retransmissions of its FIN, or a peer whose last ACK was lost ends
    /// with a reset instead of a normal close.
    pub time_wait: Duration,
    /// Out-of-order ranges the receiver keeps, at least: the limit in force
    /// is [`ooo_range_limit`](Self::ooo_range_limit), never fewer than
    /// `recv_buffer / mss + 1`, so that every hole a sender can open in a
    /// full receive window of full-sized segments is held and SACKed (RFC
    /// 2018 section 4; a receiver that refuses out-of-order data inside
    /// its window makes the sender send it twice and stalls recovery).
    /// Raise it only for peers that send many small segments.
    pub max_ooo_ranges: usize,
    /// Compute and verify checksums (over an unspecified-address
    /// pseudo-header).
    pub checksums: bool,
    /// Offer in the handshake to leave the TCP checksum out, and take a
    /// zero checksum field as left out from the start. Where both ends
    /// offer it (and `checksums` is on at both), neither computes the
    /// checksum after the SYN or SYN-ACK that completes the agreement
    /// ([`Negotiated::checksums_omitted`](super::Negotiated::checksums_omitted)),
    /// which saves one pass over every segment's bytes at each end. Only
    /// for carriers that check what they deliver themselves: UDP's
    /// checksum covers the same bytes, and the socket endpoint
    /// (`crate::net`) turns this on for every connection. Off by
    /// default (the sans-IO core does not know its carrier), and on a
    /// connection answered with a SYN cookie, which does not keep the
    /// offer.
    pub omit_checksums: bool,
    /// Grow the receive window with what the application reads per round
    /// trip and the send buffer with the window the sender may fill,
    /// instead of offering and filling all of `recv_buffer` and
    /// `send_buffer` from the start, which become ceilings (see
    /// [`autotune`](super::autotune)). Keeps data out of queues where it
    /// would only wait, and memory and caches small where the path needs
    /// little. Off by default and in the lab, whose experiments fix their
    /// windows as the papers did; `ackwise send`, `recv` and `perf` turn
    /// it on.
    pub buffer_autotuning: bool,
    /// Pace data segments so that one congestion window leaves over a
    /// fraction of the smoothed RTT (paper 004 section 4.1); `None`, the
    /// default, sends as fast as the window allows.
    pub pacing: Option<PacingConfig>,
    /// ACK-clock spreading (see [`Spreader`](crate::sender::Spreader)):
    /// in congestion avoidance and loss recovery the data an ACK releases
    /// leaves at up to 1.05 times the delivery rate measured between ACKs,
    /// not in one burst. Meant for senders that ask for few ACKs per window
    /// ([`request_acks`](Self::request_acks)); on by default, as those
    /// are the default.
    pub ack_spreading: bool,
    /// How late the driver's timers may wake the connection, so that
    /// ACK-clock spreading catches up after a late wake-up instead of
    /// losing the time (see
    /// [`Spreader::with_burst`](crate::sender::Spreader::with_burst));
    /// at most 100 ms. The default, 2 ms
    /// ([`DEFAULT_BURST`](crate::sender::spread::DEFAULT_BURST)), covers a
    /// millisecond timer wheel, so a connection embedded in an ordinary
    /// event loop keeps its rate (with zero, one whose timers fire a
    /// millisecond late sends about one segment per millisecond); the
    /// lab's emulator, whose timers fire exactly, sets zero.
    pub ack_spreading_burst: Duration,
    /// Offer Explicit Congestion Notification (RFC 3168 section 6.1.1):
    /// an active opener sends its SYN with ECE and CWR, a listener answers
    /// an ECN-setup SYN with ECE on its SYN-ACK, and ECN is in use only
    /// when both ends offered it. Then the receiver echoes CE marks with
    /// ECE (section 6.1.3) and the sender halves its window at most once
    /// per round trip for them, without retransmitting (section 6.1.2).
    /// Off by default: the driver must also send the packets ECN-capable
    /// (ECT) and report CE through
    /// [`handle_segment_with_ce`](super::Connection::handle_segment_with_ce).
    pub ecn: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1460,
            send_buffer: 1 << 20,
            recv_buffer: 1 << 20,
            window_scaling: true,
            sack: true,
            timestamps: true,
            ack_requests: true,
            // The default strategy (`4w-adaptive+spread+sparse-holes`,
            // the lab's `Strategy::DEFAULT`): the sender asks for 4 to 32
            // ACKs per window as its queue needs in slow start and in
            // windows under 16 segments, 4 in congestion avoidance beyond
            // (counting the group the receiver holds as delivered), and
            // spreads what each ACK releases over the delivery rate, the receiver answers
            // requests, ACKs sparsely while a hole is open and gives
            // delayed ACKs to a sender that does not ask, byte counting
            // follows the ACK group, and the acknowledgment fixes (their
            // fast-retransmit wait only while ACKs are sparse) and early
            // retransmit keep the low ACK rate safe in loss recovery. It held completion
            // closest to ACK-every-segment's across the gauntlet's random
            // paths with the fewest ACKs (docs/results/gauntlet.md).
            request_acks: AckRequestConfig::Adaptive {
                min_acks: 4,
                max_acks: 32,
                every_segment_in_slow_start: false,
                hold_credit_from: Some(AdaptivePerWindow::HOLD_CREDIT_FROM),
                ack_loss_compensation: false,
                slow_start_acks: None,
            },
            ack_policy: AckPolicyConfig::Polled {
                fallback: Polled::DEFAULT_FALLBACK,
                holes: HoleAcks::Openings,
            },
            congestion: CongestionConfig {
                extended_abc: true,
                ..CongestionConfig::default()
            },
            dup_thresh: 3,
            limited_transmit: true,
            ack_fixes: true,
            abc_skips_sacked: true,
            impatient: false,
            hystart: false,
            tail_loss_probe: true,
            loss_by_send_order: true,
            sack_rtt_samples: true,
            timeout_keeps_sacks: true,
            early_retransmit: true,
            af_waits_only_for_sparse_acks: true,
            reorder_timer: true,
            ack_nonce: AckNonceMode::Offer,
            announce_window: false,
            nagle: true,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            rto_variance_floor: RttEstimator::CLOCK_GRANULARITY,
            syn_retries: 6,
            challenge_ack_limit: 10,
            black_hole_mss: None,
            idle_timeout: Some(Duration::from_secs(120)),
            time_wait: Duration::from_secs(30),
            max_ooo_ranges: 64,
            checksums: true,
            omit_checksums: false,
            buffer_autotuning: false,
            pacing: None,
            ack_spreading: true,
            ack_spreading_burst: crate::sender::spread::DEFAULT_BURST,
            ecn: false,
        }
    }
}

impl Config {
    /// The settings of a standard TCP end, as before ackwise's ACK economy:
    /// delayed ACKs (every second segment, 100 ms), no ACK requests asked
    /// for, RFC 3465 byte counting with L = 2, no acknowledgment fixes, no
    /// tail loss probes and no early retransmit (ns-2's agents, which the
    /// cross-checks compare with, have neither), no ACK-clock spreading
    /// and no ACK nonce (it is ackwise's own option); everything else as
    /// in [`Config::default`]. What tests and cross-checks that model an
    /// unmodified stack start from.
    pub fn standard_tcp() -> Config {
        Config {
            request_acks: AckRequestConfig::None,
            ack_policy: AckPolicyConfig::DELAYED,
            congestion: CongestionConfig::default(),
            ack_fixes: false,
            tail_loss_probe: false,
            loss_by_send_order: false,
            sack_rtt_samples: false,
            timeout_keeps_sacks: false,
            early_retransmit: false,
            af_waits_only_for_sparse_acks: false,
            reorder_timer: false,
            ack_spreading: false,
            ack_nonce: AckNonceMode::Off,
            ..Config::default()
        }
    }
}

/// A configuration value that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A field is out of range.
    Invalid {
        /// field name
        field: &'static str,
        /// what is wrong
        problem: &'static str,
    },
}

// Written out rather than derived: the bare core needs no proc-macro crates.
impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ConfigError::Invalid { field, problem } => {
                write!(f, "config field `{field}`: {problem}")
            }
        }
    }
}

impl core::error::Error for ConfigError {}

fn invalid(field: &'static str, problem: &'static str) -> Result<(), ConfigError> {
    Err(ConfigError::Invalid { field, problem })
}

impl Config {
    /// This config as a driver whose timers may wake the connection up to
    /// `tick` late runs it: a paced or spreading sender may catch up by
    /// `tick` after a late wake-up instead of losing the time (without
    /// that, such a flow sends about one segment per tick). ackwise's
    /// socket endpoint applies it with its timer tick; the lab, whose
    /// timers fire exactly, only to model that endpoint.
    pub fn with_late_timers(mut self, tick: Duration) -> Config {
        self.pacing = self.pacing.map(|p| p.with_min_burst(tick));
        self.ack_spreading_burst = self.ack_spreading_burst.max(tick);
        self
    }

    /// Checks that the configuration can work.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.black_hole_mss.is_some_and(|m| m < 64) {
            return invalid("black_hole_mss", "must be at least 64");
        }
        if self.mss < 64 {
            return invalid("mss", "must be at least 64 bytes");
        }
        if self.send_buffer < usize::from(self.mss) {
            return invalid("send_buffer", "must hold at least one segment");
        }
        if self.recv_buffer < usize::from(self.mss) {
            return invalid("recv_buffer", "must hold at least one segment");
        }
        if self.recv_buffer > (1 << 30) {
            return invalid("recv_buffer", "must be at most 1 GiB (window scale 14)");
        }
        if !self.window_scaling && self.recv_buffer > 65_535 {
            return invalid("recv_buffer", "over 65535 bytes needs window_scaling");
        }
        if let AckPolicyConfig::Delayed {
            max_delay,
            segments,
        } = self.ack_policy
        {
            if max_delay > Duration::from_millis(500) {
                return invalid("ack_policy.max_delay", "must be at most 500 ms (RFC 1122)");
            }
            if segments == 0 {
                return invalid("ack_policy.segments", "must be at least 1");
            }
        }
        if let AckPolicyConfig::Smart(SmartParams {
            max_delay,
            initial_window_segments,
            ..
        })
        | AckPolicyConfig::Acc {
            max_delay,
            initial_window_segments,
        } = self.ack_policy
        {
            if max_delay.is_zero() || max_delay > Duration::from_millis(500) {
                return invalid(
                    "ack_policy.max_delay",
                    "must be between 1 ns and 500 ms (RFC 1122)",
                );
            }
            if initial_window_segments == 0 {
                return invalid("ack_policy.initial_window_segments", "must be at least 1");
            }
        }
        if self.ack_spreading_burst > crate::sender::spread::MAX_BURST {
            return invalid("ack_spreading_burst", "must be at most 100 ms");
        }
        if let AckPolicyConfig::Polled { fallback, .. } = self.ack_policy {
            if fallback.is_zero() || fallback > Duration::from_secs(1) {
                return invalid("ack_policy.fallback", "must be between 1 ns and 1 s");
            }
        }
        match self.request_acks {
            AckRequestConfig::PerWindow { acks: 0, .. } => {
                return invalid("request_acks.acks", "must be at least 1");
            }
            AckRequestConfig::EveryN { segments: 0, .. } => {
                return invalid("request_acks.segments", "must be at least 1");
            }
            AckRequestConfig::Adaptive {
                min_acks, max_acks, ..
            } if min_acks == 0 || max_acks < min_acks => {
                return invalid("request_acks", "need 1 <= min_acks <= max_acks");
            }
            _ => {}
        }
        if self.congestion.byte_counting_limit == 0 {
            return invalid("congestion.byte_counting_limit", "must be at least 1");
        }
        if self.dup_thresh == 0 {
            return invalid("dup_thresh", "must be at least 1");
        }
        if self.rto_variance_floor > self.max_rto {
            return invalid("rto_variance_floor", "must be at most max_rto");
        }
        if self.min_rto.is_zero() || self.min_rto > self.max_rto {
            return invalid("min_rto", "must be non-zero and at most max_rto");
        }
        if self.initial_rto.is_zero() {
            return invalid("initial_rto", "must be non-zero");
        }
        if self.max_ooo_ranges == 0 {
            return invalid("max_ooo_ranges", "must be at least 1");
        }
        if let Some(p) = self.pacing {
            if !(1..=PacingConfig::MAX_FRACTION_PER_MILLE).contains(&p.fraction_per_mille) {
                return invalid(
                    "pacing.fraction_per_mille",
                    "must be between 1 and 1000 (a fraction of SRTT in thousandths)",
                );
            }
            if p.burst > PacingConfig::MAX_BURST {
                return invalid("pacing.burst", "must be at most 100 ms");
            }
        }
        Ok(())
    }

    /// The out-of-order range limit the receiver uses: `max_ooo_ranges`,
    /// raised to `recv_buffer / mss + 1`. Memory stays bounded by the
    /// receive buffer (one 24-byte record per `mss` bytes of window,
    /// reserved when the connection starts, so nothing is allocated per
    /// segment), whatever a hostile peer sends: a segment that would open
    /// a range beyond the limit is refused, and two ranges always need a
    /// missing byte between them.
    pub fn ooo_range_limit(&self) -> usize {
        self.ooo_range_limit_for(self.mss)
    }

    /// [`ooo_range_limit`](Self::ooo_range_limit) for segments of `mss`
    /// bytes, the size the handshake agreed, which is smaller than this
    /// end's `mss` when the peer (or the path) takes less.
    pub(crate) fn ooo_range_limit_for(&self, mss: u16) -> usize {
        let per_window = self.recv_buffer / usize::from(mss).max(1) + 1;
        self.max_ooo_ranges.max(per_window)
    }

    /// Window scale shift needed to advertise the whole receive buffer.
    pub(crate) fn window_shift(&self) -> u8 {
        let mut shift = 0u8;
        while (self.recv_buffer >> shift) > 65_535 && shift < 14 {
            shift += 1;
        }
        shift
    }
}
