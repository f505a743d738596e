//! The sans-IO connection state machine (RFC 9293 section 3.3.2).
//!
//! A [`Connection`] never touches a socket or a clock. The driver feeds it
//! arriving segments with [`Connection::handle_segment`], asks for segments
//! to send with [`Connection::poll_transmit`], and calls
//! [`Connection::handle_timeout`] when [`Connection::poll_timeout`] says so.
//! The application side is [`Connection::write`], [`Connection::read`],
//! [`Connection::close`] and [`Connection::poll_event`].

pub mod ack_nonce;
pub mod autotune;
// The endpoint-wide budgets are shared between threads (a lock, an
// atomic counter behind `Arc`): with `std` only.
#[cfg(feature = "std")]
mod challenge_budget;
mod config;
mod ecn;
mod rx;
mod stats;
pub mod syn_cookie;
mod tx;
#[cfg(feature = "std")]
mod window_budget;

pub use crate::receiver::HoleAcks;
/// Congestion decrease rule, re-exported for [`CongestionConfig::decrease`].
pub use crate::sender::congestion::Decrease;
/// Pacing parameters, re-exported for [`Config::pacing`].
pub use crate::sender::PacingConfig;
pub use ack_nonce::AckNonceMode;
/// The polled receiver's rule for holes, re-exported for
/// [`AckPolicyConfig::Polled`].
use alloc::{boxed::Box, vec::Vec};
#[cfg(feature = "std")]
pub use challenge_budget::ChallengeBudget;
pub use config::{
    AckPolicyConfig, AckRequestConfig, Config, ConfigError, CongestionConfig, SmartParams, SmartRtt,
};
pub use stats::Stats;
#[cfg(feature = "std")]
pub use window_budget::WindowBudget;

use ack_nonce::{EchoTracker, NonceKey, SentEnds};

use crate::receiver::{AckPolicy, Reassembly};
use crate::sender::{Sender, SenderParams};
use crate::time::{earliest, Duration, Instant};
use crate::wire::{AckNonce, AckRequest, Checksum, Flags, SegmentRepr, SeqNum, WireError};
use alloc::collections::VecDeque;
use bytes::Bytes;
use core::fmt;
use rand_core::RngCore;

/// Retransmission timeouts in a row after which a connection with
/// [`Config::black_hole_mss`] takes the path for a black hole to its
/// full-sized segments. Linux's black-hole detection waits as many
/// (`tcp_retries1`, 3) before it lowers its MSS.
pub const BLACK_HOLE_TIMEOUTS: u32 = 3;

/// RFC 9293 connection states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Active open, SYN sent.
    SynSent,
    /// Passive open, SYN received and SYN-ACK sent.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// We closed; our FIN is not yet acknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// The peer closed; we may still send.
    CloseWait,
    /// Both closed at once; waiting for the ACK of our FIN.
    Closing,
    /// The peer closed first, then we did; waiting for the ACK of our FIN.
    LastAck,
    /// Both FINs acknowledged; lingering for retransmitted FINs.
    TimeWait,
    /// Nothing more will happen.
    Closed,
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// Both sides closed and every byte was acknowledged.
    Normal,
    /// The peer sent a reset.
    Reset,
    /// We aborted.
    Aborted,
    /// The handshake or the peer went silent for too long.
    TimedOut,
    /// The peer answered our SYN with a reset.
    Refused,
    /// The peer's SYN-ACK did not offer the ACK nonce, which this end
    /// requires ([`AckNonceMode::Require`]); we answered with a reset.
    NonceRequired,
    /// The peer, which declined the ACK nonce, acknowledged points where
    /// no segment we sent ends, as only a receiver acknowledging data it
    /// never got does; we reset the connection (see
    /// [`segment_cuts`](crate::sender::segment_cuts)).
    PeerMisbehaved,
    /// The endpoint's connection table was full and this connection had
    /// moved no data for longest: it was reset to make room for a new one.
    Evicted,
}

/// Something the application should know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// The peer will send no more data (its FIN arrived in order).
    PeerClosed,
    /// The connection is over.
    Closed(CloseReason),
}

/// Why an arriving segment was not processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentError {
    /// It did not parse.
    Malformed(WireError),
    /// It belongs to another connection.
    WrongPorts,
    /// It is not a SYN, so it cannot open a connection.
    NotSyn,
}

/// What [`Connection::poll_transmit_gather`] wrote into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emitted {
    /// A whole segment of this many bytes.
    Whole(usize),
    /// The first `header_len` bytes of a data segment, whose payload is
    /// the send stream's `payload_len` bytes from `payload_offset`
    /// ([`Connection::sent_payload`]): the segment is the header followed
    /// by them.
    Header {
        /// bytes of header written
        header_len: usize,
        /// send-stream offset of the payload's first byte
        payload_offset: u64,
        /// bytes of payload
        payload_len: usize,
    },
}

/// Options agreed during the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Negotiated {
    /// Both ends offered window scaling.
    pub window_scaling: bool,
    /// Both ends offered SACK.
    pub sack: bool,
    /// Both ends sent timestamps.
    pub timestamps: bool,
    /// Shift we apply to the peer's window field.
    pub send_window_shift: u8,
    /// Shift the peer applies to ours.
    pub recv_window_shift: u8,
    /// The peer's MSS (payload bytes per segment we may send).
    pub peer_mss: u16,
    /// The peer understands the ACK-request option.
    pub peer_ack_requests: bool,
    /// Both ends understand the ACK-request option.
    pub ack_requests: bool,
    /// Both ends offered ECN (RFC 3168 section 6.1.1).
    pub ecn: bool,
    /// Both ends offered the ACK nonce (see [`ack_nonce`]).
    pub ack_nonce: bool,
    /// Both ends offered to leave the TCP checksum out
    /// ([`Config::omit_checksums`]), so neither computes it.
    pub checksums_omitted: bool,
}

/// Receive-side state.
#[derive(Debug)]
struct RecvState {
    /// Initial receive sequence number.
    irs: SeqNum,
    reassembly: Reassembly,
    policy: Box<dyn AckPolicy>,
    /// Offset of the peer's FIN, once seen.
    fin_offset: Option<u64>,
    /// The FIN has been reached in order.
    fin_received: bool,
    /// An ACK must go out at the next transmit opportunity.
    ack_now: bool,
    /// Stream offsets of the last segment that brought only bytes already
    /// received, to report as a D-SACK block in the next ACK (RFC 2883):
    /// it tells the sender that a retransmission was unnecessary.
    dsack: Option<(u64, u64)>,
    /// The ACK policy's deadline.
    ack_deadline: Option<Instant>,
    /// RFC 7323 TS.Recent.
    ts_recent: u32,
    /// RCV.NXT (as an offset) carried by the last ACK we sent.
    last_ack_sent: u64,
    /// Right edge of the window we last advertised.
    last_window_edge: u64,
    /// The echoed timestamp that gave the last receiver-side RTT sample.
    last_echo_sampled: Option<u32>,
    /// The nonce our ACKs echo, when the nonce is in use.
    echo: EchoTracker,
    /// Without SACK: the nonce of the last out-of-order segment, for the
    /// duplicate ACK that reports it.
    arrival_echo: Option<u16>,
    /// The receive window's autotuning, when on.
    tuner: Option<autotune::ReceiveTuner>,
}

impl RecvState {
    /// Bytes `[start, end)` of a segment were all held already: the next
    /// ACK goes at once and carries them as a D-SACK block (RFC 2883), so
    /// the sender can tell lost ACKs from lost data.
    fn report_duplicate(&mut self, start: u64, end: u64) {
        if start < end {
            self.dsack = Some((start, end));
            self.ack_now = true;
        }
    }
}

/// One end of a connection.
#[derive(Debug)]
pub struct Connection {
    config: Config,
    state: State,
    local_port: u16,
    remote_port: u16,
    /// How arriving segments' checksums are checked (and this end's
    /// written, until both ends agree to omit them: `tx_checksum`).
    checksum: Checksum,
    /// Inside [`poll_transmit_gather`](Self::poll_transmit_gather): leave
    /// a data segment's payload in the send buffer.
    gather: bool,
    /// The payload (send-stream offset, bytes) the last gathered segment
    /// left in the send buffer.
    gathered: Option<(u64, usize)>,
    /// Initial send sequence number.
    iss: SeqNum,
    negotiated: Negotiated,
    sender: Sender,
    recv: Option<RecvState>,
    /// SYN or SYN-ACK awaiting (re)transmission.
    syn_due: bool,
    syn_deadline: Option<Instant>,
    syn_sent_count: u32,
    syn_sent_at: Option<Instant>,
    syn_rto: Duration,
    /// A reset to send: (seq, ack, has_ack).
    pending_rst: Option<(SeqNum, SeqNum, bool)>,
    time_wait_deadline: Option<Instant>,
    last_received: Instant,
    /// When data last moved: new bytes delivered in order, or new bytes of
    /// ours acknowledged (see [`last_progress`](Self::last_progress)).
    last_progress: Instant,
    /// Offset added to `now` in microseconds for our timestamps.
    ts_offset: u32,
    /// The segment being processed arrived marked Congestion Experienced.
    arrival_ce: bool,
    /// The arriving segment's bytes, while one handed over by reference
    /// is processed ([`Connection::handle_segment_shared`]): its payload
    /// may then be kept without a copy.
    arrival_bytes: Option<Bytes>,
    /// A segment of ours arrived marked CE (our ACKs, for a receiver of
    /// data): set ECE on the next data segment so the peer learns of it.
    reflect_ece: bool,
    /// RFC 3168 state of both directions, used once ECN is negotiated.
    ecn: ecn::EcnState,
    events: VecDeque<Event>,
    stats: Stats,
    sack_scratch: Vec<(u64, u64)>,
    /// The largest send window the peer has offered, in bytes (RFC 5961
    /// section 5's MAX.SND.WND): an ACK further below SND.UNA than this
    /// cannot come from the peer.
    max_snd_wnd: u64,
    /// Start of the current one-second challenge-ACK window and the
    /// challenge ACKs sent in it (RFC 5961 section 7).
    challenge_window: (Instant, u32),
    /// The endpoint's budget of challenge ACKs, shared with its other
    /// connections, if it has one.
    #[cfg(feature = "std")]
    challenge_budget: Option<alloc::sync::Arc<ChallengeBudget>>,
    /// This connection's part of its endpoint's receive-window budget,
    /// when autotuned windows may take a wider margin from one.
    #[cfg(feature = "std")]
    window_share: Option<window_budget::WindowShare>,
    /// When we last answered an invalid segment (see
    /// `rx::INVALID_REPLY_INTERVAL`).
    invalid_replied_at: Option<Instant>,
    /// The key of our data segments' nonces (drawn only when the nonce is
    /// offered, so that a connection without it draws what it always did).
    nonce_key: Option<NonceKey>,
    /// Where the segments sent above SND.UNA end: with the nonce but
    /// without SACK, each worth one duplicate ACK; with `end_guard`, the
    /// points an ACK may name.
    sent_ends: SentEnds,
    /// The peer declined the nonce this end offered: some segments are
    /// cut short at secret points, and an ACK or SACK block that names a
    /// point where no segment ends is refused (see
    /// [`segment_cuts`](crate::sender::segment_cuts)).
    end_guard: bool,
}

impl Connection {
    /// Gives back to the allocator the storage an idle connection does not
    /// need: the send buffer and the sender's scoreboard once everything
    /// written is acknowledged, the receive ring once everything received
    /// has been read. Each is allocated again, small, when data next
    /// moves, so calling this on a busy connection only costs
    /// allocations; an endpoint calls it on connections whose data has
    /// stood still for a while. After a 1 MiB transfer each way, an idle
    /// connection keeps about 2.5 KiB of heap instead of about 150 KiB
    /// (`tests/idle_memory.rs`).
    pub fn release_idle_memory(&mut self) {
        self.sender.release_idle_memory();
        if let Some(r) = self.recv.as_mut() {
            r.reassembly.release_if_drained();
        }
        self.sack_scratch = Vec::new();
        self.sent_ends.release_if_empty();
    }

    /// Starts an active open towards `remote_port`; the SYN comes out of
    /// the first [`poll_transmit`](Self::poll_transmit).
    pub fn connect(
        config: Config,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        rng: &mut dyn RngCore,
    ) -> Result<Connection, ConfigError> {
        config.validate()?;
        let mut conn = Connection::new(config, now, local_port, remote_port, rng);
        conn.state = State::SynSent;
        conn.syn_due = true;
        Ok(conn)
    }

    /// Answers a SYN that arrived at `local_port`: the returned connection
    /// is in SYN-RECEIVED and sends its SYN-ACK from the first
    /// [`poll_transmit`](Self::poll_transmit).
    pub fn accept(
        config: Config,
        now: Instant,
        syn: &[u8],
        rng: &mut dyn RngCore,
    ) -> Result<Connection, AcceptError> {
        Connection::accept_with(config, now, syn, None, rng)
    }

    /// [`accept`](Self::accept) with the initial send sequence number and
    /// the timestamp offset fixed by a listening endpoint that answers the
    /// SYN without keeping state: a SYN cookie ([`syn_cookie`]), whose
    /// [`Vouched`](syn_cookie::Vouched) gives all three.
    pub fn accept_stateless(
        config: Config,
        now: Instant,
        syn: &[u8],
        iss: SeqNum,
        ts_offset: u32,
        rng: &mut dyn RngCore,
    ) -> Result<Connection, AcceptError> {
        Connection::accept_with(config, now, syn, Some((iss, ts_offset)), rng)
    }

    /// The connection whose SYN-ACK a listening endpoint sent as a SYN
    /// cookie, rebuilt when the handshake's ACK returns: `syn` is the SYN
    /// the cookie vouches for (as the endpoint rebuilt it), `iss` and
    /// `ts_offset` what the SYN-ACK was sent with, and `ack` the segment
    /// that completes the handshake (`ce`: it arrived marked Congestion
    /// Experienced), which the connection then processes with any data
    /// it carries.
    pub fn accept_cookie_ack(
        config: Config,
        now: Instant,
        syn: &[u8],
        iss: SeqNum,
        ts_offset: u32,
        (ack, ce): (&[u8], bool),
        rng: &mut dyn RngCore,
    ) -> Result<Connection, AcceptError> {
        let mut conn = Connection::accept_with(config, now, syn, Some((iss, ts_offset)), rng)?;
        // The SYN-ACK went out once, at an unknown time: no handshake RTT
        // sample, and nothing to retransmit.
        conn.syn_due = false;
        conn.syn_sent_count = 1;
        conn.handle_segment_with_ce(now, ack, ce)?;
        if conn.state != State::Established {
            return Err(AcceptError::HandshakeIncomplete);
        }
        Ok(conn)
    }

    fn accept_with(
        config: Config,
        now: Instant,
        syn: &[u8],
        fixed: Option<(SeqNum, u32)>,
        rng: &mut dyn RngCore,
    ) -> Result<Connection, AcceptError> {
        config.validate()?;
        let checksum = checksum_mode(&config);
        let seg = SegmentRepr::parse(syn, checksum).map_err(SegmentError::from)?;
        if !seg.flags.contains(Flags::SYN)
            || seg.flags.contains(Flags::ACK)
            || seg.flags.contains(Flags::RST)
        {
            return Err(SegmentError::NotSyn.into());
        }
        let mut conn = match fixed {
            None => Connection::new(config, now, seg.dst_port, seg.src_port, rng),
            Some((iss, ts_offset)) => Connection::new_with(
                config,
                now,
                (seg.dst_port, seg.src_port),
                (iss, ts_offset),
                rng,
            ),
        };
        conn.state = State::SynReceived;
        conn.negotiate(&seg);
        if conn.config.ack_nonce == AckNonceMode::Require && !conn.negotiated.ack_nonce {
            return Err(AcceptError::NonceRequired);
        }
        conn.init_receiver(now, seg.seq, seg.options.timestamps.map(|t| t.tsval));
        conn.syn_due = true;
        conn.last_received = now;
        Ok(conn)
    }

    fn new(
        config: Config,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        rng: &mut dyn RngCore,
    ) -> Self {
        let iss = SeqNum(rng.next_u32());
        let ts_offset = rng.next_u32();
        Connection::new_with(
            config,
            now,
            (local_port, remote_port),
            (iss, ts_offset),
            rng,
        )
    }

    /// A closed connection with its initial sequence number and timestamp
    /// offset given; `rng` draws the rest.
    fn new_with(
        config: Config,
        now: Instant,
        (local_port, remote_port): (u16, u16),
        (iss, ts_offset): (SeqNum, u32),
        rng: &mut dyn RngCore,
    ) -> Self {
        let nonce_key = config
            .ack_nonce
            .offers()
            .then(|| NonceKey::new(rng.next_u64(), rng.next_u64()));
        let params = SenderParams {
            mss: usize::from(config.mss),
            send_buffer: config.send_buffer,
            dup_thresh: config.dup_thresh,
            limited_transmit: config.limited_transmit,
            nagle: config.nagle,
            initial_rto: config.initial_rto,
            min_rto: config.min_rto,
            max_rto: config.max_rto,
            rto_variance_floor: config.rto_variance_floor,
            ack_fixes: config.ack_fixes,
            abc_skips_sacked: config.abc_skips_sacked,
            impatient: config.impatient,
            hystart: config.hystart,
            tail_loss_probe: config.tail_loss_probe,
            loss_by_send_order: config.loss_by_send_order,
            sack_rtt_samples: config.sack_rtt_samples,
            timeout_keeps_sacks: config.timeout_keeps_sacks,
            early_retransmit: config.early_retransmit,
            af_waits_only_for_sparse_acks: config.af_waits_only_for_sparse_acks,
            reorder_timer: config.reorder_timer,
        };
        let cc = config.congestion.build(u64::from(config.mss));
        let mut sender = Sender::new(params, cc, config.sack, 0);
        if config.buffer_autotuning {
            let limit = autotune::send_limit(0, u64::from(config.mss));
            sender
                .send_limit_mut()
                .set(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        sender.set_pacing(config.pacing);
        sender.set_ack_spreading(config.ack_spreading.then_some(config.ack_spreading_burst));
        Connection {
            checksum: checksum_mode(&config),
            gather: false,
            gathered: None,
            syn_rto: config.initial_rto,
            state: State::Closed,
            local_port,
            remote_port,
            iss,
            negotiated: Negotiated::default(),
            sender,
            recv: None,
            syn_due: false,
            syn_deadline: None,
            syn_sent_count: 0,
            syn_sent_at: None,
            pending_rst: None,
            time_wait_deadline: None,
            last_received: now,
            last_progress: now,
            ts_offset,
            arrival_ce: false,
            arrival_bytes: None,
            reflect_ece: false,
            ecn: ecn::EcnState::default(),
            events: VecDeque::new(),
            stats: Stats::default(),
            sack_scratch: Vec::with_capacity(4),
            max_snd_wnd: 0,
            challenge_window: (now, 0),
            #[cfg(feature = "std")]
            challenge_budget: None,
            #[cfg(feature = "std")]
            window_share: None,
            invalid_replied_at: None,
            nonce_key,
            sent_ends: SentEnds::default(),
            end_guard: false,
            config,
        }
    }

    /// Records what the peer's SYN (or SYN-ACK) offered and rebuilds the
    /// sender for the agreed MSS and SACK setting.
    fn negotiate(&mut self, seg: &SegmentRepr<'_>) {
        let o = &seg.options;
        let ws = self.config.window_scaling && o.window_scale.is_some();
        let peer_mss = o.mss.unwrap_or(536).clamp(64, self.config.mss);
        let peer_ack_requests = matches!(o.ack_request, Some(AckRequest::Supported));
        self.negotiated = Negotiated {
            window_scaling: ws,
            sack: self.config.sack && o.sack_permitted,
            timestamps: self.config.timestamps && o.timestamps.is_some(),
            send_window_shift: if ws {
                o.window_scale.unwrap_or(0).min(14)
            } else {
                0
            },
            recv_window_shift: if ws { self.config.window_shift() } else { 0 },
            peer_mss,
            peer_ack_requests,
            ack_requests: peer_ack_requests && self.config.ack_requests,
            ecn: self.config.ecn && ecn::offered_ecn(seg),
            ack_nonce: self.config.ack_nonce.offers() && o.ack_nonce == Some(AckNonce::Permitted),
            checksums_omitted: offers_checksum_omission(&self.config) && o.checksum_omission,
        };
        let mss = usize::from(peer_mss) - self.option_bytes_per_data_segment();
        let cc = self.config.congestion.build(mss as u64);
        // The SYN's window field is never scaled (RFC 7323 2.2).
        self.sender
            .reconfigure(mss, self.negotiated.sack, cc, u64::from(seg.window));
        // A peer that declined the nonce this end offered, and SACK, gets
        // no proof of its duplicates either way: hold them to what an
        // honest receiver could send.
        self.sender.set_duplicate_guard(
            self.config.ack_nonce.offers() && !self.negotiated.ack_nonce && !self.negotiated.sack,
        );
        // Nor can its ACKs prove what they claim; they are held to the
        // ends of segments it cannot predict.
        let cuts = self.nonce_key.filter(|_| !self.negotiated.ack_nonce);
        self.end_guard = cuts.is_some();
        self.sender.set_segment_cuts(cuts.map(|k| k.segment_cuts()));
        self.max_snd_wnd = u64::from(seg.window);
        let requests = if self.negotiated.ack_requests {
            self.config.request_acks.build()
        } else {
            None
        };
        if requests.is_none() && self.config.request_acks != AckRequestConfig::None {
            // The peer cannot be polled, so it runs its own policy, most
            // likely delayed ACKs: count two segments per ACK (DAL2).
            self.sender.congestion_mut().set_byte_counting_limit(2);
        }
        self.sender.set_ack_requests(requests);
    }

    fn init_receiver(&mut self, now: Instant, irs: SeqNum, ts: Option<u32>) {
        let ranges = self.config.ooo_range_limit_for(self.mss());
        let mut reassembly = Reassembly::new(self.config.recv_buffer, ranges);
        let autotuning = self.config.buffer_autotuning;
        if autotuning {
            let limit = autotune::initial_receive_limit(u64::from(self.mss()));
            reassembly
                .limit_mut()
                .set(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        #[cfg(feature = "std")]
        if let Some(share) = &mut self.window_share {
            share.hold(reassembly.limit() as u64);
        }
        let edge = reassembly.window() as u64;
        self.recv = Some(RecvState {
            irs,
            reassembly,
            policy: self.config.ack_policy.build(),
            fin_offset: None,
            fin_received: false,
            ack_now: false,
            dsack: None,
            ack_deadline: None,
            ts_recent: ts.unwrap_or(0),
            last_ack_sent: 0,
            last_window_edge: edge,
            last_echo_sampled: None,
            echo: EchoTracker::new(ranges),
            arrival_echo: None,
            tuner: autotuning.then(|| autotune::ReceiveTuner::new(now)),
        });
    }

    /// Switches how this end acknowledges the data it receives, for
    /// example once the application has learned which strategy the peer's
    /// sender runs. Takes effect from the next arriving segment; an ACK
    /// already owed is still sent. The policy is checked as
    /// [`Config::validate`] would, and on error nothing changes.
    ///
    /// The ACK-request option was agreed in the handshake: switching to
    /// [`AckPolicyConfig::Polled`] only sees requests if this end's
    /// `ack_requests` was on then.
    pub fn set_ack_policy(&mut self, policy: AckPolicyConfig) -> Result<(), ConfigError> {
        Config {
            ack_policy: policy,
            ..self.config.clone()
        }
        .validate()?;
        self.config.ack_policy = policy;
        if let Some(recv) = self.recv.as_mut() {
            recv.policy = policy.build();
        }
        Ok(())
    }

    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// When data last moved on this connection: bytes delivered in order
    /// to the application's buffer, or bytes of ours newly acknowledged;
    /// its creation until then. Bare ACKs and keepalives do not count, so
    /// an endpoint short of room can tell a connection that only stays
    /// alive from one in use.
    pub fn last_progress(&self) -> Instant {
        self.last_progress
    }

    /// Draw challenge ACKs also from `budget`, which other connections
    /// share: RFC 5961 section 7's limit per endpoint, on top of
    /// [`Config::challenge_ack_limit`]'s per connection.
    #[cfg(feature = "std")]
    pub fn share_challenge_budget(&mut self, budget: alloc::sync::Arc<ChallengeBudget>) {
        self.challenge_budget = Some(budget);
    }

    /// Let autotuned receive windows ([`Config::buffer_autotuning`]) take
    /// a wider margin than Linux's out of `budget`, which the endpoint's
    /// other connections share (see [`WindowBudget`]). Without autotuning
    /// this changes nothing.
    #[cfg(feature = "std")]
    pub fn share_window_budget(&mut self, budget: alloc::sync::Arc<WindowBudget>) {
        let mut share = window_budget::WindowShare::new(budget);
        if let Some(recv) = &self.recv {
            share.hold(recv.reassembly.limit() as u64);
        }
        self.window_share = Some(share);
    }

    /// How this end's segments' checksums are written: as arriving ones
    /// are checked, unless both ends agreed to omit them.
    fn tx_checksum(&self) -> Checksum {
        if self.negotiated.checksums_omitted {
            Checksum::Ignore
        } else {
            self.checksum
        }
    }

    /// Options agreed in the handshake (meaningful once established).
    pub fn negotiated(&self) -> Negotiated {
        self.negotiated
    }

    /// Local port.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// Remote port.
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }

    /// The configuration this connection runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The sending half (congestion state, scoreboard, counters).
    pub fn sender(&self) -> &Sender {
        &self.sender
    }

    /// The handshake completed and the connection has not closed yet.
    pub fn is_established(&self) -> bool {
        !matches!(
            self.state,
            State::SynSent | State::SynReceived | State::Closed
        )
    }

    /// The connection is over.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Queues data for sending; returns how many bytes were taken (0 when
    /// the send buffer is full or the connection is closing).
    pub fn write(&mut self, data: &[u8]) -> usize {
        if !self.may_write() {
            return 0;
        }
        self.sender.write(data)
    }

    /// Queues `data` without copying it: the send buffer keeps a reference
    /// (`Bytes` is reference-counted) until the bytes are acknowledged.
    /// Returns how many bytes were taken; the rest, `data.slice(n..)`, is
    /// for a later call. For bulk senders that fill a fresh buffer per
    /// block or send one buffer again and again; buffers under 2 KiB are
    /// copied.
    ///
    /// ```
    /// # use ackwise::connection::{Config, Connection};
    /// # use ackwise::testing::TestRng;
    /// # use ackwise::time::Instant;
    /// # let mut rng = TestRng::seed_from_u64(1);
    /// let mut conn = Connection::connect(Config::default(), Instant::ZERO, 40_000, 80, &mut rng)?;
    /// let block = bytes::Bytes::from(vec![0xa5; 64 * 1024]);
    /// let taken = conn.write_shared(block.clone());
    /// assert_eq!(taken, block.len());
    /// # Ok::<(), ackwise::connection::ConfigError>(())
    /// ```
    pub fn write_shared(&mut self, data: bytes::Bytes) -> usize {
        if !self.may_write() {
            return 0;
        }
        self.sender.write_shared(data)
    }

    /// The application may still queue data: the sending half is open.
    fn may_write(&self) -> bool {
        matches!(
            self.state,
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
        )
    }

    /// How much the application may have in the send buffer now:
    /// `Config::send_buffer`, or less while it is autotuned
    /// ([`Config::buffer_autotuning`]).
    pub fn send_buffer_limit(&self) -> usize {
        self.sender.send_limit()
    }

    /// What the receive window is offered out of now (unread data plus
    /// the window): `Config::recv_buffer`, or less while it is autotuned
    /// ([`Config::buffer_autotuning`]); before the handshake, the former.
    pub fn recv_buffer_limit(&self) -> usize {
        self.recv
            .as_ref()
            .map_or(self.config.recv_buffer, |r| r.reassembly.limit())
    }

    /// Room in the send buffer.
    pub fn send_capacity(&self) -> usize {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait => {
                self.sender.free_space()
            }
            _ => 0,
        }
    }

    /// Reads in-order data; returns 0 when none is ready (see
    /// [`peer_closed`](Self::peer_closed) for the end of the stream).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let Some(recv) = self.recv.as_mut() else {
            return 0;
        };
        let n = recv.reassembly.read(buf);
        if n > 0 {
            self.maybe_window_update();
        }
        n
    }

    /// Reads the next in-order bytes, at most `max`, as a buffer of their
    /// own: data held by reference (see
    /// [`handle_segment_shared`](Self::handle_segment_shared)) is handed
    /// out without a copy, other data is copied into a new buffer. `None`
    /// when nothing is ready.
    pub fn read_chunk(&mut self, max: usize) -> Option<Bytes> {
        let chunk = self.recv.as_mut()?.reassembly.read_chunk(max)?;
        self.maybe_window_update();
        Some(chunk)
    }

    /// The next in-order bytes, at most `max`, only if they are held by
    /// reference (see [`handle_segment_shared`](Self::handle_segment_shared)
    /// and [`handle_segment_parts`](Self::handle_segment_parts)): handed out
    /// without a copy, as [`read_chunk`](Self::read_chunk) would. `None`
    /// when nothing is ready or the next bytes are in the receive buffer,
    /// where `read` or `read_chunk` takes them.
    pub fn read_in_place(&mut self, max: usize) -> Option<Bytes> {
        let chunk = self.recv.as_mut()?.reassembly.take_chunk(max)?;
        self.maybe_window_update();
        Some(chunk)
    }

    /// Bytes ready to [`read`](Self::read).
    pub fn readable(&self) -> usize {
        self.recv.as_ref().map_or(0, |r| r.reassembly.readable())
    }

    /// The peer's FIN arrived and every byte before it has been read.
    pub fn peer_closed(&self) -> bool {
        self.recv
            .as_ref()
            .is_some_and(|r| r.fin_received && r.reassembly.readable() == 0)
    }

    /// Graceful close: a FIN follows the data already written.
    pub fn close(&mut self) {
        match self.state {
            State::SynSent => self.finish(CloseReason::Aborted),
            State::SynReceived | State::Established => {
                self.sender.queue_fin();
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.sender.queue_fin();
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Abort: a reset goes out and the connection closes at once.
    pub fn abort(&mut self) {
        self.abort_for(CloseReason::Aborted);
    }

    /// [`abort`](Self::abort) for an endpoint that needs the connection's
    /// place: it closes as [`CloseReason::Evicted`].
    pub fn evict(&mut self) {
        self.abort_for(CloseReason::Evicted);
    }

    fn abort_for(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        if self.state != State::SynSent {
            // The peer accepts a reset only at its RCV.NXT (RFC 5961);
            // SND.MAX is where it is once everything sent has arrived.
            let seq = self.snd_seq(self.sender.max_sent());
            let ack = self.rcv_ack_seq();
            self.pending_rst = Some((seq, ack, true));
        }
        self.finish(reason);
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest time [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        let mut t = earliest(self.syn_deadline, self.time_wait_deadline);
        t = earliest(t, self.recv.as_ref().and_then(|r| r.ack_deadline));
        if self.is_established() {
            t = earliest(t, self.sender.poll_timeout());
        }
        earliest(t, self.config.idle_timeout.map(|d| self.last_received + d))
    }

    /// Runs the timers that are due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Closed {
            return;
        }
        if let Some(idle) = self.config.idle_timeout {
            if now >= self.last_received + idle {
                tracing::debug!("idle timeout");
                self.finish(CloseReason::TimedOut);
                return;
            }
        }
        if self.time_wait_deadline.is_some_and(|t| t <= now) {
            self.time_wait_deadline = None;
            self.finish(CloseReason::Normal);
            return;
        }
        if self.syn_deadline.is_some_and(|t| t <= now) {
            self.syn_deadline = None;
            if self.syn_sent_count > self.config.syn_retries {
                self.finish(CloseReason::TimedOut);
                return;
            }
            self.syn_rto = (self.syn_rto * 2).min(self.config.max_rto);
            self.syn_due = true;
        }
        if let Some(recv) = self.recv.as_mut() {
            if recv.ack_deadline.is_some_and(|t| t <= now) {
                recv.ack_deadline = None;
                match recv.policy.on_timer(now) {
                    crate::receiver::AckDecision::Now => {
                        recv.ack_now = true;
                        self.stats.ack_timer_expiries += 1;
                    }
                    crate::receiver::AckDecision::By(t) => recv.ack_deadline = Some(t),
                }
            }
        }
        if self.is_established() {
            self.sender.handle_timeout(now);
            self.leave_black_hole();
        }
    }

    /// RFC 8899 section 4.3's black-hole detection, for a path that no
    /// longer carries full-sized segments: after
    /// [`BLACK_HOLE_TIMEOUTS`] timeouts in a row, segments shrink to
    /// `Config::black_hole_mss` (a size every path takes), and the
    /// resent data with them. Loss alone rarely gives three timeouts in
    /// a row; when it does, smaller segments cost a few percent of
    /// header, not the connection.
    fn leave_black_hole(&mut self) {
        let Some(fallback) = self.config.black_hole_mss else {
            return;
        };
        if self.sender.timeouts_in_a_row() < BLACK_HOLE_TIMEOUTS {
            return;
        }
        let payload = usize::from(fallback)
            .saturating_sub(self.option_bytes_per_data_segment())
            .max(1);
        if self.sender.mss() <= payload as u64 {
            return;
        }
        tracing::info!(
            from = self.sender.mss(),
            to = payload,
            "full-sized segments keep timing out: smaller ones from here on"
        );
        self.sender.lower_mss(payload);
        self.stats.black_hole_fallbacks += 1;
    }

    /// The receive side's estimate of the peer's congestion window, in
    /// bytes, when its ACK policy keeps one (smartacking and ACC, paper
    /// 004 fig. 1); for logs and the lab's time series.
    pub fn receiver_cwnd_estimate(&self) -> Option<u64> {
        let segments = self.recv.as_ref()?.policy.cwnd_estimate_segments()?;
        Some(u64::from(segments) * self.peer_segment_size() as u64)
    }

    /// Payload bytes of a full-sized segment from the peer: the agreed
    /// segment size less the options it carries.
    fn peer_segment_size(&self) -> usize {
        usize::from(self.mss()) - self.option_bytes_per_data_segment()
    }

    /// The connection's MSS: the smaller of the two ends' MSS options
    /// once the handshake has agreed it (each end reads them the same way,
    /// `negotiate`), this end's `Config::mss` before. It is what the
    /// peer's full segments carry, which may be less than this end's
    /// `Config::mss` when that only says how much this end could take (on
    /// sockets the path decides). A data segment's payload is this less
    /// the options it carries (and less still after a black-hole
    /// fallback, `Config::black_hole_mss`).
    pub fn mss(&self) -> u16 {
        match self.negotiated.peer_mss {
            0 => self.config.mss,
            agreed => agreed,
        }
    }

    /// Option bytes every data segment carries, which the MSS leaves out:
    /// timestamps (12 with their NOPs) and the nonce (8 aligned).
    fn option_bytes_per_data_segment(&self) -> usize {
        12 * usize::from(self.negotiated.timestamps) + 8 * usize::from(self.negotiated.ack_nonce)
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> Stats {
        let c = self.sender.counters();
        Stats {
            data_segments_sent: c.data_segments,
            data_bytes_sent: c.data_bytes,
            retransmissions: c.retransmissions,
            fast_retransmits: c.fast_retransmits,
            timeouts: c.timeouts,
            ecn_reductions: c.ecn_reductions,
            spurious_timeouts: c.spurious_timeouts,
            tail_loss_probes: c.tail_loss_probes,
            tail_loss_repairs: c.tail_loss_repairs,
            reorder_timeouts: c.reorder_timeouts,
            duplicate_acks_received: c.duplicate_acks,
            cwnd: self.sender.cwnd(),
            ssthresh: self.sender.ssthresh(),
            srtt: self.sender.rtt().srtt(),
            rto: self.sender.rtt().rto(),
            ..self.stats
        }
    }

    fn finish(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        tracing::debug!(?reason, state = ?self.state, "connection closed");
        self.state = State::Closed;
        self.syn_deadline = None;
        self.time_wait_deadline = None;
        self.events.push_back(Event::Closed(reason));
    }

    /// Our sequence number for stream offset `offset` (offset 0 = first
    /// data byte, just after the SYN).
    fn snd_seq(&self, offset: u64) -> SeqNum {
        SeqNum::from_offset(self.iss.add(1), offset)
    }

    /// The acknowledgment number we send: next expected byte, plus one
    /// for a received FIN.
    fn rcv_ack_seq(&self) -> SeqNum {
        match &self.recv {
            Some(r) => seq_of(
                r.irs,
                r.reassembly.next_offset() + u64::from(r.fin_received),
            ),
            None => SeqNum(0),
        }
    }

    fn timestamp_now(&self, now: Instant) -> u32 {
        ((now.as_nanos() / 1_000) as u32).wrapping_add(self.ts_offset)
    }
}

/// Why a SYN could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptError {
    /// The configuration is invalid.
    Config(ConfigError),
    /// The segment is not a valid SYN.
    Segment(SegmentError),
    /// The SYN does not offer the ACK nonce, which this end requires
    /// ([`AckNonceMode::Require`]).
    NonceRequired,
    /// The segment answering a SYN cookie did not complete the handshake
    /// (a reset, or an ACK of something else).
    HandshakeIncomplete,
}

// The error traits are written out rather than derived so that the bare
// core needs no proc-macro crates.
impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CloseReason::Normal => "closed normally",
            CloseReason::Reset => "connection reset by peer",
            CloseReason::Aborted => "connection aborted locally",
            CloseReason::TimedOut => "connection timed out",
            CloseReason::Refused => "connection refused",
            CloseReason::NonceRequired => {
                "connection refused: the peer does not offer the ACK nonce this end requires"
            }
            CloseReason::Evicted => {
                "connection reset: idle while the endpoint needed its place for a new one"
            }
            CloseReason::PeerMisbehaved => {
                "connection reset: the peer acknowledged data it cannot have received"
            }
        })
    }
}

impl core::error::Error for CloseReason {}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegmentError::Malformed(e) => write!(f, "malformed segment: {e}"),
            SegmentError::WrongPorts => f.write_str("segment for another port pair"),
            SegmentError::NotSyn => f.write_str("not a SYN"),
        }
    }
}

impl core::error::Error for SegmentError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SegmentError::Malformed(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WireError> for SegmentError {
    fn from(e: WireError) -> Self {
        SegmentError::Malformed(e)
    }
}

impl fmt::Display for AcceptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AcceptError::Config(e) => e.fmt(f),
            AcceptError::Segment(e) => e.fmt(f),
            AcceptError::NonceRequired => {
                f.write_str("the SYN does not offer the ACK nonce this end requires")
            }
            AcceptError::HandshakeIncomplete => {
                f.write_str("the segment did not complete the handshake")
            }
        }
    }
}

impl core::error::Error for AcceptError {
    // Transparent: the inner error's own cause, as its message is shown.
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            AcceptError::Config(e) => core::error::Error::source(e),
            AcceptError::Segment(e) => core::error::Error::source(e),
            AcceptError::NonceRequired | AcceptError::HandshakeIncomplete => None,
        }
    }
}

impl From<ConfigError> for AcceptError {
    fn from(e: ConfigError) -> Self {
        AcceptError::Config(e)
    }
}

impl From<SegmentError> for AcceptError {
    fn from(e: SegmentError) -> Self {
        AcceptError::Segment(e)
    }
}

/// The sequence number of receive-stream offset `offset`.
fn seq_of(irs: SeqNum, offset: u64) -> SeqNum {
    SeqNum::from_offset(irs.add(1), offset)
}

fn checksum_mode(config: &Config) -> Checksum {
    if offers_checksum_omission(config) {
        Checksum::UNSPECIFIED_OR_OMITTED
    } else if config.checksums {
        Checksum::UNSPECIFIED
    } else {
        Checksum::Ignore
    }
}

/// Whether this end's SYN offers to leave checksums out: only an end that
/// checks them has anything to agree on.
fn offers_checksum_omission(config: &Config) -> bool {
    config.checksums && config.omit_checksums
}

#[cfg(test)]
mod tests;
