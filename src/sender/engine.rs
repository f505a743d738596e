//! The sending half of a connection: what to transmit next, what an ACK
//! means, and when the retransmission timer fires.
//!
//! Loss recovery follows RFC 6675 when the peer supports SACK: a duplicate
//! ACK is one that SACKs new data, recovery starts at DupThresh duplicates or
//! when `IsLost(HighACK)` holds, and transmission during recovery is clocked
//! by `cwnd - pipe` with `NextSeg` choosing between lost segments (including
//! retransmissions found lost, see the scoreboard), new data and other
//! unSACKed segments. Proportional Rate Reduction (RFC 6937) was tried and
//! left out: it removed no timeout that the lost-retransmission rule did
//! not, and with 4W's sparse ACKs at 100 Mbit/s it cost 11 points of
//! utilization (paper 003 fig. 6's one-flow point, 97.9% to 86.5%).
//!
//! Without SACK the same loop runs NewReno (RFC 6582): every duplicate ACK
//! counts one segment as having left the network, and each partial ACK
//! retransmits the next hole.
//!
//! Limited transmit (RFC 3042) lets the first two duplicate ACKs release new
//! data. The retransmission timer follows RFC 6298; after it fires the
//! sender goes back to the cumulative ACK point and resends in order, as the
//! SACK information may no longer be trusted (RFC 2018 section 8).

use super::ack_loss::AckLoss;
use super::ack_request::{Requester, WindowInfo};
use super::hold_credit::hold_credit;
use super::hystart::HyStart;
use super::segment_cuts::SegmentCuts;
use super::tail_loss_probe::{ProbeVerdict, TailLossProbe, WORST_CASE_ACK_DELAY};
use super::{
    AckOutcome, CongestionControl, PriorWindow, Scoreboard, SendBuffer, Slices, SpuriousTimeout,
};
use crate::buffer_limit::BufferLimit;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use bytes::Bytes;
// Pacing (paper 004 section 4.1).
use super::pacing::{Pacer, PacingConfig};
use super::spread::Spreader;
use super::window_in_use::WindowInUse;
use crate::estimators::{AckInterval, RttEstimator};
use crate::time::{earliest, Duration, Instant};

/// Parameters of the sending half.
#[derive(Debug, Clone)]
pub struct SenderParams {
    /// Sender maximum segment size, bytes of payload.
    pub mss: usize,
    /// Send buffer size, bytes.
    pub send_buffer: usize,
    /// RFC 6675 DupThresh.
    pub dup_thresh: u32,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// Nagle's algorithm (RFC 896): hold a partial segment while data is
    /// unacknowledged. Off means every write may leave as a small segment.
    pub nagle: bool,
    /// Initial retransmission timeout (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Lower bound of the retransmission timeout (RFC 6298: 1 s).
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout.
    pub max_rto: Duration,
    /// Lower bound of the RTO's variance term (see
    /// [`RttEstimator::with_variance_floor`]).
    pub rto_variance_floor: Duration,
    /// Paper 003's acknowledgment fixes (AF, sec. 4.3): outside recovery a
    /// cumulative ACK that carries SACK blocks releases no new data, and
    /// the fast retransmit waits until the next ACK is expected.
    pub ack_fixes: bool,
    /// Byte counting leaves out data the receiver had already SACKed when
    /// a cumulative ACK covers it: that data left the network earlier and
    /// was paid for then (paper 003 sec. 4.2 proposes this and leaves it
    /// unimplemented). On by default.
    pub abc_skips_sacked: bool,
    /// RFC 6582 section 4's "Impatient" variant: without SACK, only the
    /// first partial ACK of a recovery restarts the retransmission timer.
    pub impatient: bool,
    /// HyStart++ (RFC 9406, see `sender::hystart`): the initial slow start
    /// ends when the round-trip time starts to climb.
    pub hystart: bool,
    /// Tail loss probes (RFC 8985 section 7, see `sender::tail_loss_probe`):
    /// when no ACK comes for about two round trips, one segment goes out
    /// to draw one, instead of waiting for the retransmission timer. Acts
    /// only with SACK. It also turns on RFC 6675's rescue retransmission
    /// (NextSeg rule 4): once per fast recovery, the highest unSACKed
    /// segment when nothing else may go, the tail loss that recovery
    /// cannot probe for. Without it the sender is RFC 6675's rules 1-3, as
    /// ns-2's Sack1 (ackwise's AE baseline keeps that).
    pub tail_loss_probe: bool,
    /// RFC 8985's "a segment sent later was delivered" applied to segments
    /// sent once above the highest SACK (see [`Scoreboard::on_ack`]): the
    /// last segments of a flight, lost during a recovery, are resent by the
    /// recovery instead of the timer. Acts only with SACK.
    pub loss_by_send_order: bool,
    /// In loss recovery, ACKs that SACK segments sent once are RTT
    /// samples and the running timer keeps to the RTO they give
    /// ([`Config::sack_rtt_samples`](crate::connection::Config::sack_rtt_samples)).
    /// Acts only with SACK.
    pub sack_rtt_samples: bool,
    /// A retransmission timeout keeps what the receiver SACKed: the
    /// unSACKed data is resent, hole by hole, while the window
    /// slow-starts ([`Config::timeout_keeps_sacks`](crate::connection::Config::timeout_keeps_sacks)).
    /// Acts only with SACK.
    pub timeout_keeps_sacks: bool,
    /// Early retransmit (RFC 5827): with fewer than four segments
    /// outstanding and no new segment to send (all data out, or the
    /// peer's window full), a loss is deemed found once all but one of
    /// the outstanding segments are SACKed (or as many duplicate ACKs
    /// came), rather than DupThresh. A small window or the tail of a
    /// transfer cannot bring three duplicates; without it such a loss
    /// waits for a tail loss probe and then the retransmission timer.
    pub early_retransmit: bool,
    /// AF's postponed fast retransmit (see [`ack_fixes`](Self::ack_fixes))
    /// only while each requested ACK covers two or more segments. When
    /// the receiver is asked for every segment, as in a window of a few
    /// segments, no burst stands between the loss and the next ACK, and
    /// waiting only takes time from the repair before the timer fires
    /// (ackwise's own; paper 003 waits whatever the group).
    pub af_waits_only_for_sparse_acks: bool,
    /// In a fast recovery that can send nothing (`pipe` fills cwnd and no
    /// segment counts as lost), a hole below SACKed data that was sent
    /// once is declared lost a round trip plus a reordering window after
    /// it left, by a timer (RFC 8985 sections 6.2-6.3; see
    /// [`reorder_timer`](super::reorder_timer)), rather than waiting for
    /// DupThresh SACKs that a small window cannot bring, and then for the
    /// retransmission timer. Acts only with SACK.
    pub reorder_timer: bool,
}

/// One segment the sender wants on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxSegment {
    /// Stream offset of the first payload byte (or of the FIN when empty).
    pub start: u64,
    /// Payload bytes.
    pub len: usize,
    /// The segment carries the FIN.
    pub fin: bool,
    /// Some of it was sent before.
    pub retransmission: bool,
    /// The ACK-request countdown to carry, when the sender is asking for
    /// ACKs (see [`Sender::set_ack_requests`]).
    pub ack_request: Option<u16>,
}

/// What an arriving acknowledgment carried, in stream offsets.
#[derive(Debug, Clone, Copy)]
pub struct AckInput<'a> {
    /// Cumulative acknowledgment.
    pub ack: u64,
    /// SACK blocks, stream offsets.
    pub sack: &'a [(u64, u64)],
    /// Peer's receive window, already scaled, bytes beyond `ack`.
    pub window: u64,
    /// The segment also carried data or SYN/FIN (so it is not a duplicate
    /// ACK in the RFC 5681 sense).
    pub carries_data: bool,
    /// RTT measured from the timestamp echo, when timestamps are on.
    pub rtt_sample: Option<Duration>,
    /// Without SACK: the caller could not match this ACK to the arrival
    /// of a segment it sent (see `connection::ack_nonce`), so it is no
    /// duplicate ACK, whatever it looks like.
    pub unproven_duplicate: bool,
}

/// How the sender classified an acknowledgment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckEffect {
    /// Bytes newly acknowledged cumulatively (the FIN counts as one).
    pub newly_acked: u64,
    /// The ACK counted as a duplicate.
    pub duplicate: bool,
    /// The ACK started fast recovery.
    pub entered_recovery: bool,
    /// The ACK ended fast recovery.
    pub exited_recovery: bool,
    /// The ACK acknowledged something never sent; it was ignored.
    pub invalid: bool,
}

/// Counters kept by the sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Segments carrying data or FIN, including retransmissions.
    pub data_segments: u64,
    /// Payload bytes sent, including retransmissions.
    pub data_bytes: u64,
    /// Segments that were retransmissions.
    pub retransmissions: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Duplicate acknowledgments seen.
    pub duplicate_acks: u64,
    /// Probes of a closed peer window resent by the persist timer.
    pub window_probes: u64,
    /// Window reductions in answer to ECN-Echo (RFC 3168 section 6.1.2),
    /// at most one per round trip.
    pub ecn_reductions: u64,
    /// Retransmission timeouts undone because D-SACK showed every
    /// retransmission after them unnecessary (lost ACKs, not lost data).
    pub spurious_timeouts: u64,
    /// Initial slow starts that HyStart++ ended on a climbing RTT.
    pub hystart_exits: u64,
    /// Tail loss probes sent.
    pub tail_loss_probes: u64,
    /// Tail loss probes that resent data the receiver did not have (each
    /// answered with one window reduction).
    pub tail_loss_repairs: u64,
    /// Holes of a stalled fast recovery that the reordering timer declared
    /// lost (see [`SenderParams::reorder_timer`]).
    pub reorder_timeouts: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// Normal operation.
    Open,
    /// Fast recovery until the cumulative ACK reaches `point`;
    /// `partial_acks` counts the partial ACKs so far.
    Fast { point: u64, partial_acks: u32 },
    /// After a retransmission timeout that kept the SACK marks, until the
    /// cumulative ACK reaches `point` (HighData at the timeout): the holes
    /// are resent by NextSeg against `pipe` while the window slow-starts
    /// from the loss window (Linux's loss state; see
    /// [`SenderParams::timeout_keeps_sacks`]).
    AfterTimeout { point: u64 },
}

/// The sending half of a connection.
#[derive(Debug)]
pub struct Sender {
    params: SenderParams,
    mss: u64,
    buffer: SendBuffer,
    board: Scoreboard,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    sack: bool,
    /// Right edge of the peer's receive window, stream offset.
    window_edge: u64,
    /// The application will write no more; the FIN sits at `buffer.end()`.
    fin_queued: bool,
    recovery: Recovery,
    /// Highest offset ever transmitted, across go-back-N after a timeout;
    /// what lies below it is a retransmission.
    max_sent: u64,
    /// RFC 6582 "recover": no new fast recovery for losses detected by ACKs
    /// below this point after a timeout.
    recover: u64,
    dup_acks: u32,
    /// Duplicate ACKs counted as departed segments when the peer has no
    /// SACK (NewReno's window inflation, expressed in bytes).
    reno_departed: u64,
    /// Duplicates are held to what an honest receiver could have sent
    /// (see [`set_duplicate_guard`](Self::set_duplicate_guard)).
    duplicate_guard: bool,
    /// With the guard: when new data went out and how far it reached, so
    /// that duplicates are credited only for data old enough to have
    /// drawn them (see [`reno_creditable`](Self::reno_creditable)).
    reno_sent: VecDeque<(Instant, u64)>,
    /// With the guard: when the cumulative ACK advanced and to where, the
    /// oldest kept at or before an SRTT ago, for the rate the path
    /// delivered before a recovery.
    reno_acked: VecDeque<(Instant, u64)>,
    /// With the guard, from the start of fast recovery: when it began, the
    /// rate the path delivered data in the SRTT before (bytes per second),
    /// and the duplicates counted at entry (see
    /// [`reno_creditable`](Self::reno_creditable)).
    reno_clock: Option<(Instant, u64, u64)>,
    /// The segment at the cumulative ACK point must be resent now
    /// (fast retransmit, or a NewReno partial ACK).
    retransmit_head: bool,
    rto_deadline: Option<Instant>,
    /// When the retransmission timer was last started: the deadline is
    /// this plus RTO, moved later when RTO grows (see `on_sack_rtt`).
    rto_started: Instant,
    /// The highest offset sent before the last timeout's go-back-N
    /// rewind. Until SND.UNA passes it, a SACKed record may be a resend of
    /// data the peer had from before the timeout, so SACKs give no RTT
    /// samples.
    rewound_to: u64,
    /// A window probe is due at this time (peer window closed).
    persist_deadline: Option<Instant>,
    /// A one-byte probe of a closed peer window is outstanding; its timer
    /// expiring is the persist timer backing off, not a sign of congestion.
    probing: bool,
    /// Karn-safe RTT timing when timestamps are off: (end offset, sent at).
    rtt_probe: Option<(u64, Instant)>,
    /// ACK requests, when the peer accepts them.
    requests: Option<Requester>,
    /// End offset of the last segment that asked for an ACK at once.
    last_request_end: u64,
    /// A segment that asked for an ACK at once, timed: (end, sent at).
    /// Its ACK leaves the receiver as the segment arrives, so this RTT
    /// holds path and queue only, unlike a timestamp echo, which dates
    /// from the first segment of the group.
    request_probe: Option<(u64, Instant)>,
    /// RTTs of requested ACKs (only SRTT and the minimum are used).
    request_rtt: RttEstimator,
    /// Inter-ACK interval, for the postponed fast retransmit (AF).
    ack_interval: AckInterval,
    /// AF: while set, new data may not raise the outstanding bytes above
    /// this (limited transmit still adds its segments).
    af_cap: Option<u64>,
    /// AF: the fast retransmit is due then.
    fast_retransmit_at: Option<Instant>,
    /// When the oldest overtaken hole of a stalled recovery counts as
    /// lost (see [`SenderParams::reorder_timer`]).
    reorder_deadline: Option<Instant>,
    /// HyStart++'s detector while the initial slow start lasts.
    hystart: Option<HyStart>,
    /// Whether the last timeout turns out spurious (D-SACK).
    spurious: SpuriousTimeout,
    /// When the retransmission timer last fired.
    last_timeout_at: Option<Instant>,
    /// Retransmission timeouts since SND.UNA last moved (window probes
    /// left out).
    timeouts_in_a_row: u32,
    /// Shortens some new segments so that their ends cannot be guessed,
    /// toward a peer that declined the ACK nonce (see `segment_cuts`).
    cuts: Option<SegmentCuts>,
    counters: SenderCounters,
    /// Pacing (paper 004 section 4.1); `None` sends as the window allows.
    pacer: Option<Pacer>,
    /// ACK-clock spreading, when on (see `sender::spread`).
    spreader: Option<Spreader>,
    /// The window in use, base of the multiplicative decrease.
    in_use: WindowInUse,
    /// New data sent by limited transmit since the last cumulative ACK;
    /// RFC 5681 section 3.2 step 2 leaves it out of the ssthresh base.
    limited_transmit_bytes: u64,
    /// HighData at the last reduction for ECN-Echo: ECE on ACKs that do
    /// not reach past it belongs to the same round trip (RFC 3168
    /// section 6.1.2, "at most once per window of data").
    ecn_recover: Option<u64>,
    /// Tail loss probe (RFC 8985 section 7).
    tlp: TailLossProbe,
    /// Requested ACKs that come back (see [`ack_loss`](super::ack_loss)).
    ack_loss: AckLoss,
}

impl Sender {
    /// A sender whose first data byte has stream offset 0.
    pub fn new(
        params: SenderParams,
        cc: Box<dyn CongestionControl>,
        sack: bool,
        peer_window: u64,
    ) -> Self {
        let mss = params.mss.max(1) as u64;
        let hystart = params.hystart.then(HyStart::new);
        Sender {
            buffer: SendBuffer::new(params.send_buffer),
            board: Scoreboard::new(mss as usize, params.dup_thresh)
                .with_loss_by_send_order(params.loss_by_send_order),
            rtt: RttEstimator::new(params.initial_rto, params.min_rto, params.max_rto)
                .with_variance_floor(params.rto_variance_floor),
            params,
            mss,
            cc,
            sack,
            window_edge: peer_window,
            fin_queued: false,
            recovery: Recovery::Open,
            max_sent: 0,
            recover: 0,
            dup_acks: 0,
            reno_departed: 0,
            duplicate_guard: false,
            reno_sent: VecDeque::new(),
            reno_acked: VecDeque::new(),
            reno_clock: None,
            retransmit_head: false,
            rto_deadline: None,
            rto_started: Instant::ZERO,
            rewound_to: 0,
            persist_deadline: None,
            probing: false,
            rtt_probe: None,
            requests: None,
            last_request_end: 0,
            request_probe: None,
            request_rtt: RttEstimator::rfc6298(),
            ack_interval: AckInterval::new(),
            af_cap: None,
            fast_retransmit_at: None,
            reorder_deadline: None,
            hystart,
            spurious: SpuriousTimeout::default(),
            last_timeout_at: None,
            timeouts_in_a_row: 0,
            cuts: None,
            counters: SenderCounters::default(),
            pacer: None,
            spreader: None,
            in_use: WindowInUse::default(),
            limited_transmit_bytes: 0,
            ecn_recover: None,
            tlp: TailLossProbe::default(),
            ack_loss: AckLoss::default(),
        }
    }

    /// Starts (or, with `None`, stops) asking the receiver for ACKs with
    /// the experimental option; only once the peer has said it
    /// understands it. While requests run, the byte-counting limit L
    /// follows the group size: one ACK is expected to cover that many
    /// segments (paper 003 sec. 4.2).
    pub fn set_ack_requests(&mut self, requests: Option<Requester>) {
        self.requests = requests;
    }

    /// The ACK-request state, if requests are on.
    pub fn ack_requests(&self) -> Option<&Requester> {
        self.requests.as_ref()
    }

    /// Retransmission timeouts since the cumulative ACK last moved
    /// (zero-window probes do not count).
    pub fn timeouts_in_a_row(&self) -> u32 {
        self.timeouts_in_a_row
    }

    /// Lowers the segment size mid-connection, for a path whose MTU turned
    /// out smaller than the handshake's (a black hole, RFC 8899 section
    /// 4.3). New segments and every retransmission from here on are at
    /// most `mss` bytes (a resent range is cut to size, as any is); the
    /// scoreboard and the congestion controller count in the new size.
    /// Never raises it.
    pub fn lower_mss(&mut self, mss: usize) {
        let mss = mss.max(1);
        if mss >= self.params.mss {
            return;
        }
        self.params.mss = mss;
        self.mss = mss as u64;
        self.board.set_mss(mss);
        self.cc.set_mss(mss as u64);
    }

    /// Applies what the handshake agreed: segment size, SACK, a congestion
    /// controller sized for that MSS, and the peer's first window. Only
    /// valid before anything was transmitted; data already written stays.
    pub fn reconfigure(
        &mut self,
        mss: usize,
        sack: bool,
        cc: Box<dyn CongestionControl>,
        peer_window: u64,
    ) {
        debug_assert_eq!(self.max_sent, 0, "reconfigure after transmission");
        self.params.mss = mss.max(1);
        self.mss = self.params.mss as u64;
        self.board = Scoreboard::new(self.params.mss, self.params.dup_thresh)
            .with_loss_by_send_order(self.params.loss_by_send_order);
        self.sack = sack;
        self.cc = cc;
        self.window_edge = peer_window;
    }

    /// An RTT measured on the handshake (RFC 6298 2.1 allows it as the
    /// first sample when the SYN was not retransmitted).
    pub fn on_handshake_rtt(&mut self, rtt: Duration) {
        self.rtt.on_sample(rtt);
    }

    /// Queues application data; returns the bytes accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.fin_queued {
            return 0;
        }
        self.buffer.write(data)
    }

    /// Like [`write`](Self::write), but the send buffer keeps `data` by
    /// reference instead of copying it (see [`SendBuffer::write_shared`]);
    /// what was not taken is `data[n..]`.
    pub fn write_shared(&mut self, data: Bytes) -> usize {
        if self.fin_queued {
            return 0;
        }
        self.buffer.write_shared(data)
    }

    /// Bytes written but not yet sent once.
    pub fn unsent_bytes(&self) -> u64 {
        self.buffer.end().saturating_sub(self.board.high_data())
    }

    /// What the application may fill of the send buffer now (see
    /// [`SendBuffer::limit`]).
    pub fn send_limit(&self) -> usize {
        self.buffer.limit()
    }

    /// The send buffer's limit, to set at the start and raise later.
    pub fn send_limit_mut(&mut self) -> &mut BufferLimit {
        self.buffer.limit_mut()
    }

    /// The peer's receive window from SND.UNA.
    pub fn peer_window(&self) -> u64 {
        self.window_edge.saturating_sub(self.board.snd_una())
    }

    /// Room in the send buffer.
    pub fn free_space(&self) -> usize {
        if self.fin_queued {
            0
        } else {
            self.buffer.free()
        }
    }

    /// No more data will be written; a FIN follows the last byte.
    pub fn queue_fin(&mut self) {
        self.fin_queued = true;
    }

    /// The FIN was queued.
    pub fn fin_queued(&self) -> bool {
        self.fin_queued
    }

    /// Everything written, and the FIN if queued, is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.board.snd_una() >= self.stream_end()
    }

    /// Every data byte written is acknowledged (the FIN may not be).
    pub fn all_data_acked(&self) -> bool {
        self.board.snd_una() >= self.buffer.end()
    }

    /// Our FIN has been acknowledged.
    pub fn fin_acked(&self) -> bool {
        self.fin_queued && self.all_acked()
    }

    /// Offset one past everything that will ever be sent so far (data end,
    /// plus one for a queued FIN).
    fn stream_end(&self) -> u64 {
        self.buffer.end() + u64::from(self.fin_queued)
    }

    /// Gives the send buffer's and the scoreboard's storage back to the
    /// allocator when everything written has been acknowledged (see
    /// [`Connection::release_idle_memory`](crate::connection::Connection::release_idle_memory)).
    pub fn release_idle_memory(&mut self) {
        self.buffer.release_if_empty();
        self.board.release_if_empty();
        if self.board.outstanding() == 0 {
            self.reno_sent = VecDeque::new();
        }
    }

    /// Offset one past the last data byte written.
    pub fn data_end(&self) -> u64 {
        self.buffer.end()
    }

    /// Cumulative acknowledgment point.
    pub fn snd_una(&self) -> u64 {
        self.board.snd_una()
    }

    /// Next new offset to send.
    pub fn snd_nxt(&self) -> u64 {
        self.board.high_data()
    }

    /// Highest offset ever sent.
    pub fn max_sent(&self) -> u64 {
        self.max_sent
    }

    /// Payload bytes of a full-sized segment (SMSS).
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }

    /// Slow-start threshold, bytes.
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The congestion controller.
    pub fn congestion(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The congestion controller, for run-time tuning (e.g. the
    /// byte-counting limit).
    pub fn congestion_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Counters.
    pub fn counters(&self) -> SenderCounters {
        self.counters
    }

    /// The request strategy reads the lost-ACK estimate, so the sender
    /// keeps it (no per-ACK work otherwise).
    fn counts_ack_loss(&self) -> bool {
        self.requests
            .as_ref()
            .is_some_and(Requester::counts_ack_loss)
    }

    /// The request strategy asks for sparse groups in slow start, so the
    /// spreader acts there too.
    fn sparse_slow_start(&self) -> bool {
        self.requests
            .as_ref()
            .is_some_and(Requester::sparse_slow_start)
    }

    /// Fast recovery is in progress.
    pub fn in_recovery(&self) -> bool {
        matches!(self.recovery, Recovery::Fast { .. })
    }

    /// The holes are resent by RFC 6675's NextSeg against `pipe`: in fast
    /// recovery with SACK, or after a timeout that kept the SACK marks.
    fn repairing_by_sack(&self) -> bool {
        self.sack && !matches!(self.recovery, Recovery::Open)
    }

    /// Bytes in flight as RFC 6675 `pipe` estimates them.
    pub fn pipe(&self) -> u64 {
        self.board.pipe().saturating_sub(self.reno_departed)
    }

    /// What the window is compared against: RFC 6675's `pipe` during fast
    /// recovery and a timeout's repair, FlightSize (RFC 5681) otherwise. Outside recovery SACKed
    /// segments stay counted, so that limited transmit, not the SACKs,
    /// decides how much new data duplicate ACKs release.
    fn in_flight(&self) -> u64 {
        if !matches!(self.recovery, Recovery::Open) {
            self.pipe()
        } else {
            self.board.outstanding()
        }
    }

    /// Copies payload for a segment starting at `offset`.
    pub fn copy_payload(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.buffer.copy_out(offset, buf)
    }

    /// Up to `len` bytes of the send buffer from stream offset `offset`,
    /// in place (see [`SendBuffer::slices`]).
    pub fn payload(&self, offset: u64, len: usize) -> Option<Slices<'_>> {
        self.buffer.slices(offset, len)
    }

    /// The earliest sender timer (retransmission or persist), or the
    /// pacer's release instant when a paced segment is waiting.
    ///
    /// Inlined into the connection's, its one caller: both run after
    /// every event, and the call was about an eighth of their cost.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        // Asked after every event, so written out rather than as an
        // iterator over the seven.
        let mut t = earliest(self.rto_deadline, self.persist_deadline);
        t = earliest(t, self.fast_retransmit_at);
        t = earliest(t, self.reorder_deadline);
        t = earliest(t, self.tlp.deadline());
        t = earliest(t, self.pacing_wake_at());
        earliest(t, self.spreader.as_ref().and_then(Spreader::wake_at))
    }

    /// Processes an acknowledgment.
    pub fn on_ack(&mut self, now: Instant, input: AckInput<'_>) -> AckEffect {
        let mut effect = AckEffect::default();
        if input.ack > self.max_sent {
            effect.invalid = true;
            return effect;
        }
        let una_before = self.board.snd_una();
        self.ack_interval.on_ack(now);
        // The window edge never moves left (RFC 9293 3.8.6 discourages
        // shrinking; we simply don't honour it).
        self.window_edge = self.window_edge.max(input.ack + input.window);
        if input.window > 0 {
            self.persist_deadline = None;
            self.probing = false;
        }
        let sack: &[(u64, u64)] = if self.sack { input.sack } else { &[] };
        let outcome = if input.ack > self.board.high_data() {
            // After a go-back-N rewind the peer may acknowledge data it
            // holds from before the timeout, beyond what was resent.
            let newly_acked = input.ack - una_before;
            self.board.reset_to(input.ack);
            AckOutcome {
                newly_acked,
                ..AckOutcome::default()
            }
        } else {
            self.board.on_ack(input.ack, sack)
        };
        effect.newly_acked = outcome.newly_acked;
        if self.counts_ack_loss() {
            self.ack_loss
                .on_ack(input.ack, !sack.is_empty(), self.in_recovery());
        }
        if outcome.newly_acked == 0 {
            self.on_sack_rtt(now, &outcome);
        }
        // RFC 8985: the tail loss probe's resent bytes were delivered, so
        // every hole below them is lost (see
        // `TailLossProbe::delivered_from`).
        let probe_revealed = !self.in_recovery()
            && self
                .tlp
                .delivered_from(input.ack, sack)
                .is_some_and(|start| self.board.declare_lost_below(start));
        if let Some(prior) = self.spurious.on_ack(input.ack, sack) {
            self.counters.spurious_timeouts += 1;
            self.cc.on_spurious_timeout(now, prior);
            tracing::debug!(cwnd = self.cc.window(), "spurious timeout undone");
        }

        if outcome.newly_acked > 0 {
            let counted = if self.params.abc_skips_sacked {
                outcome.newly_acked - outcome.acked_previously_sacked.min(outcome.newly_acked)
            } else {
                outcome.newly_acked
            };
            self.on_new_ack(now, &input, counted, &mut effect);
        } else if self.is_duplicate(&input, &outcome, una_before) {
            effect.duplicate = true;
            self.counters.duplicate_acks += 1;
            self.dup_acks += 1;
            if !self.sack && self.in_recovery() {
                // An honest duplicate ACK stands for one segment that
                // arrived above the hole, and the hole itself is still
                // out, so at most all but one outstanding segment can have
                // left. A receiver that invents duplicate ACKs gains
                // nothing past that (Linux caps its Reno SACK count the
                // same way).
                let mut most = self.board.outstanding().saturating_sub(self.mss);
                if self.duplicate_guard {
                    most = most.min(self.reno_creditable(now));
                }
                self.reno_departed = (self.reno_departed + self.mss).min(most);
            }
            if !self.in_recovery() && self.should_enter_recovery() {
                self.start_fast_retransmit(now, &mut effect);
            }
        }
        if outcome.newly_acked > 0 && self.loss_seen_by_advancing_ack(&outcome, probe_revealed) {
            self.start_fast_retransmit(now, &mut effect);
        }
        if self.tlp.on_ack(input.ack, input.sack) == Some(ProbeVerdict::LossRepaired) {
            self.on_tail_loss_repaired(now);
        }
        self.arm_reorder_timer(now);
        if outcome.newly_acked > 0 {
            self.arm_tail_loss_probe(now);
            if self.duplicate_guard && !self.sack {
                self.note_delivery(now);
            }
        }
        effect
    }

    /// The reordering timer of a stalled fast recovery (see
    /// [`reorder_timer`](super::reorder_timer)): while the recovery can
    /// send nothing, declares the oldest overtaken hole lost once its time
    /// has come, or arms the timer for that time. Called after every ACK
    /// and when the timer fires; NextSeg then resends the hole, and the
    /// next call looks at the hole after it. A recovery that can send
    /// again, or that ended, leaves the timer disarmed.
    fn arm_reorder_timer(&mut self, now: Instant) {
        self.reorder_deadline = None;
        let stalled = || {
            matches!(self.recovery, Recovery::Fast { .. })
                && self.board.next_lost().is_none()
                && self.board.pipe() + self.mss > self.cc.window()
        };
        if !self.params.reorder_timer || !self.sack || !stalled() {
            return;
        }
        let (Some((end, sent_at)), Some(srtt)) =
            (self.board.oldest_overtaken_hole(), self.rtt.srtt())
        else {
            return;
        };
        let at = super::reorder_timer::lost_at(sent_at, srtt, self.rtt.min_rtt());
        if at > now {
            self.reorder_deadline = Some(at);
        } else if self.board.declare_lost_below(end) {
            self.counters.reorder_timeouts += 1;
            tracing::debug!(end, "reordering timer: overtaken hole lost");
        }
    }

    /// Fast retransmit now, or at the time AF postpones it to.
    fn start_fast_retransmit(&mut self, now: Instant, effect: &mut AckEffect) {
        let postpone = self.params.ack_fixes
            && self.fast_retransmit_at.is_none()
            && self.acks_sparse_enough_to_wait();
        match self.postponed_fast_retransmit(now) {
            // AF: the burst the last cumulative ACK released is still
            // ahead of a retransmission sent now; waiting until the next
            // ACK is due lets it drain first.
            Some(at) if postpone && at > now => self.fast_retransmit_at = Some(at),
            _ => {
                self.enter_recovery(now);
                effect.entered_recovery = true;
            }
        }
    }

    /// Whether an ACK that advanced the cumulative point reveals a loss to
    /// repair now. Such an ACK is no duplicate (RFC 6675 section 2: it
    /// acknowledges new data), so the duplicate path never asks; at the
    /// tail, with everything sent, no duplicate may follow it either, and
    /// the hole would wait for a probe or the timer (Linux looks for
    /// losses on every ACK that SACKs new data). Two narrow cases only,
    /// where nothing else can repair the hole (a DupThresh decision still
    /// waits for duplicates): it SACKed data above the new hole and early
    /// retransmit is due, or it reported a tail loss probe delivered.
    fn loss_seen_by_advancing_ack(&self, outcome: &AckOutcome, probe_revealed: bool) -> bool {
        if self.in_recovery() || self.board.snd_una() < self.recover {
            return false;
        }
        if probe_revealed {
            self.should_enter_recovery()
        } else {
            outcome.newly_sacked > 0 && self.early_retransmit_due()
        }
    }

    /// With the duplicate guard: the cumulative ACK advanced at `now`.
    fn note_delivery(&mut self, now: Instant) {
        let una = self.board.snd_una();
        if let Some(srtt) = self.rtt.srtt() {
            let cut = now - srtt;
            while self.reno_acked.len() > 1 && self.reno_acked[1].0 <= cut {
                self.reno_acked.pop_front();
            }
        }
        self.reno_acked.push_back((now, una));
    }

    /// With the duplicate guard: the rate, bytes per second, at which the
    /// cumulative ACK advanced over about the last SRTT; `None` before an
    /// SRTT's worth of ACKs.
    fn delivery_rate(&self, now: Instant) -> Option<u64> {
        let srtt = self.rtt.srtt()?;
        let &(then, una_then) = self.reno_acked.front()?;
        let span = now - then;
        if span < srtt {
            return None;
        }
        let bytes = self.board.snd_una().saturating_sub(una_then);
        let rate = u128::from(bytes) * 1_000_000_000 / span.as_nanos().max(1);
        Some(u64::try_from(rate).unwrap_or(u64::MAX))
    }

    /// RFC 8985 section 7.4: the probe resent data the receiver lacked,
    /// so a segment was lost and the window is reduced once, as fast
    /// recovery would have done, unless a recovery or timeout of the same
    /// data already answered it.
    fn on_tail_loss_repaired(&mut self, now: Instant) {
        self.counters.tail_loss_repairs += 1;
        if self.in_recovery() || self.board.snd_una() < self.recover {
            return;
        }
        let base = self.reduce_window(now);
        self.spurious.on_loss();
        tracing::debug!(base, "tail loss probe repaired a loss: window reduced");
    }

    /// One window reduction without a retransmission (ECN-Echo, a loss a
    /// tail loss probe repaired): ssthresh from the window in use, and the
    /// next reduction measured from the data sent after this one.
    /// Returns the base the reduction was computed from.
    fn reduce_window(&mut self, now: Instant) -> u64 {
        let base = self.reduction_base();
        self.cc.on_congestion_event(now, base);
        self.in_use.restart(self.board.high_data());
        self.limited_transmit_bytes = 0;
        base
    }

    /// Starts or restarts the probe timer (RFC 8985 section 7.2) after new
    /// data left or an ACK acknowledged new data, when a probe may go:
    /// SACK on, no loss recovery or timeout repair under way, data
    /// outstanding and an RTT known.
    fn arm_tail_loss_probe(&mut self, now: Instant) {
        let eligible = self.params.tail_loss_probe
            && self.sack
            && !self.in_recovery()
            && self.fast_retransmit_at.is_none()
            && !self.probing
            && self.board.snd_una() >= self.recover
            && self.board.outstanding() > 0;
        let Some(srtt) = self.rtt.srtt().filter(|_| eligible) else {
            self.tlp.disarm();
            return;
        };
        // A receiver asked for its ACKs sends the one the probe asks for
        // at once; any other may hold it for its delayed-ACK timer.
        let ack_delay = if self.requests.is_some() {
            Duration::ZERO
        } else {
            WORST_CASE_ACK_DELAY
        };
        // Due no later than the retransmission timer, as in Linux: where
        // two round trips outlast the timer, the first expiry at a tail
        // sends a probe instead of collapsing the window, and the timer
        // proper runs again from the probe.
        let mut at = now + TailLossProbe::timeout(srtt, ack_delay);
        if let Some(rto) = self.rto_deadline {
            at = at.min(rto);
        }
        self.tlp.arm(at);
    }

    /// The probe itself: one segment of new data if the peer's window
    /// takes it (cwnd does not limit a probe), else the last segment sent
    /// again; it asks for an ACK at once.
    fn send_tail_loss_probe(&mut self, now: Instant, max_payload: usize) -> Option<TxSegment> {
        let una = self.board.snd_una();
        let high = self.board.high_data();
        if una >= high || self.in_recovery() {
            self.tlp.drop_due();
            return None;
        }
        let mut resent = None;
        let mut seg = match self.next_new(now, max_payload, true) {
            Some(seg) => seg,
            None => {
                let data_end = self.buffer.end();
                let start = self.tlp.resend_start(una);
                let data_high = high.min(data_end);
                let mut end = (start + max_payload as u64).min(data_high);
                if high > data_end && end == data_end {
                    end += 1; // the FIN went out and goes again
                }
                if end <= start {
                    self.tlp.drop_due();
                    return None;
                }
                // A FIN alone carries no bytes a D-SACK could report.
                let data_stop = end.min(data_end);
                resent = (data_stop > start).then_some((start, data_stop));
                self.emit(now, start, end)
            }
        };
        if let Some(countdown) = seg.ack_request.as_mut() {
            *countdown = 0;
            self.last_request_end = self.last_request_end.max(seg.start + seg.len as u64);
        }
        // The retransmission timer runs from the probe (RFC 8985 7.3).
        self.start_rto_timer(now);
        self.tlp.on_probe_sent(self.board.high_data(), resent);
        self.counters.tail_loss_probes += 1;
        tracing::debug!(start = seg.start, len = seg.len, "tail loss probe");
        Some(seg)
    }

    /// HyStart++ (RFC 9406) sees an ACK outside recovery. The detector is
    /// dropped once the initial slow start is over, whatever ended it.
    fn hystart_on_ack(&mut self, now: Instant, ack: u64, rtt: Option<Duration>) {
        let Some(h) = self.hystart.as_mut() else {
            return;
        };
        if !self.cc.in_slow_start() {
            self.hystart = None;
            return;
        }
        if h.on_ack(ack, self.board.high_data(), rtt) {
            self.cc.end_slow_start(now);
            self.counters.hystart_exits += 1;
            self.hystart = None;
            tracing::debug!(
                cwnd = self.cc.window(),
                "HyStart++: slow start ends on delay"
            );
        }
    }

    /// When AF's postponed fast retransmit goes (paper 003 sec. 4.3): when
    /// the next ACK is expected, but no later than half an SRTT from now
    /// (the spacing of 2W's ACKs, the sparsest the fixes serve) and always
    /// before the retransmission timer. Waiting past the timer would turn
    /// a fast retransmit into a timeout; on a slow ACK path the expected
    /// interval can exceed the timer, and each timeout then breeds the
    /// next. `None`: no estimate, retransmit now.
    fn postponed_fast_retransmit(&self, now: Instant) -> Option<Instant> {
        let at = self
            .ack_interval
            .next_expected(now)?
            .min(now + self.rtt.srtt()? / 2);
        match self.rto_deadline {
            Some(rto) if at >= rto => None,
            _ => Some(at),
        }
    }

    /// Whether enough unacknowledged data is still in flight beyond the
    /// highest SACKed byte to bring the duplicate ACKs a fast retransmit
    /// needs. AF's burst hold is only safe then: held with less, the
    /// sender waits for ACKs that never come and ends in a timeout.
    /// Limited transmit could stretch one segment's duplicate ACK into
    /// the next two, but only while no ACK is lost; on the slow ACK paths
    /// where sparse ACKs matter, the gauntlet (seed 1) measured the
    /// one-segment rule at 92% of cases within 1.05x of AE against 94%
    /// for requiring all DupThresh in flight.
    fn acks_still_coming(&self) -> bool {
        let beyond = match self.board.highest_sacked() {
            Some(h) => self.board.high_data().saturating_sub(h),
            None => self.board.outstanding(),
        };
        beyond >= u64::from(self.board.dup_thresh()) * self.mss
    }

    /// `counted`: the bytes byte counting may count (see
    /// [`SenderParams::abc_skips_sacked`]).
    fn on_new_ack(
        &mut self,
        now: Instant,
        input: &AckInput<'_>,
        counted: u64,
        effect: &mut AckEffect,
    ) {
        let acked = effect.newly_acked;
        self.fast_retransmit_at = None;
        self.timeouts_in_a_row = 0;
        if let Some(s) = self.spreader.as_mut() {
            s.on_ack(now, acked, self.rtt.srtt().unwrap_or(INITIAL_SPREAD_BUCKET));
        }
        // Only while data is still out to bring more ACKs, and not while a
        // timeout's go-back-N repair resends what the receiver may hold
        // (its ACKs carry SACK blocks for data above the rewind, and
        // holding them would leave nothing in flight).
        self.af_cap = (self.params.ack_fixes
            && self.sack
            && !input.sack.is_empty()
            && self.acks_still_coming()
            && !self.in_recovery()
            && self.board.snd_una() >= self.recover
            && self.board.outstanding() > 0)
            .then(|| self.board.outstanding());
        self.buffer.release_to(input.ack.min(self.buffer.end()));
        self.dup_acks = 0;
        self.limited_transmit_bytes = 0;
        self.in_use.on_ack(
            self.board.snd_una(),
            self.board.high_data(),
            self.board.outstanding(),
        );
        // A timestamp echo from before the last timeout belongs to a
        // segment whose ACK was lost or late (else the timer would not
        // have fired): it measures the outage, not the path. Taken as a
        // sample, one such echo can make SRTT tens of seconds on a slow,
        // lossy ACK path and keep every later timer that long. Nor does
        // such an ACK end the timer's backoff: like an ACK of a
        // retransmitted segment under Karn's rule, it says nothing about
        // the RTT now, and where the RTT really is longer than the timer,
        // only the backoff lets a fresh sample arrive before it fires.
        let stale_echo = input.rtt_sample.is_some_and(|rtt| {
            self.last_timeout_at
                .is_some_and(|t| now.saturating_duration_since(t) < rtt)
        });
        let mut sample = None;
        if let Some(rtt) = input.rtt_sample {
            if !stale_echo {
                sample = Some(rtt);
            }
        } else if let Some((end, sent)) = self.rtt_probe {
            if input.ack >= end {
                sample = Some(now - sent);
                self.rtt_probe = None;
            }
        }
        if let Some(rtt) = sample {
            self.take_rtt_sample(now, rtt);
        }
        if !stale_echo {
            self.rtt.reset_backoff();
        }
        if let Some((end, sent)) = self.request_probe {
            if input.ack >= end {
                self.request_rtt.on_sample(now - sent);
                self.request_probe = None;
            }
        }

        match self.recovery {
            Recovery::Fast { point, .. } if input.ack >= point => {
                self.recovery = Recovery::Open;
                self.reno_departed = 0;
                self.cc.on_recovery_exit(now);
                effect.exited_recovery = true;
                tracing::debug!(ack = input.ack, "fast recovery complete");
            }
            Recovery::Fast {
                ref mut partial_acks,
                ..
            } => {
                // Partial ACK. Without SACK it names the next hole (RFC 6582
                // 3.2 step 3); with SACK the scoreboard already knows.
                *partial_acks = partial_acks.saturating_add(1);
                if !self.sack {
                    let segs = acked.div_ceil(self.mss) * self.mss;
                    self.reno_departed = self.reno_departed.saturating_sub(segs);
                    self.retransmit_head = true;
                }
            }
            Recovery::AfterTimeout { point } => {
                // The window slow-starts from the loss window as after a
                // go-back-N timeout; only what is resent differs.
                self.cc.on_ack(now, counted);
                if input.ack >= point {
                    self.recovery = Recovery::Open;
                    tracing::debug!(ack = input.ack, "timeout recovery complete");
                }
            }
            Recovery::Open => {
                let counted = match &self.hystart {
                    Some(h) if self.cc.in_slow_start() => {
                        let limit = u64::from(self.cc.byte_counting_limit()) * self.mss;
                        h.slow_start_credit(counted, limit)
                    }
                    _ => counted,
                };
                self.cc.on_ack(now, counted);
                self.hystart_on_ack(now, input.ack, sample);
            }
        }

        // RFC 6298 5.2 / 5.3.
        if self.board.snd_una() >= self.board.high_data() {
            self.rto_deadline = None;
        } else if !self.impatient_hold() {
            self.start_rto_timer(now);
        }
    }

    /// Starts (or restarts) the retransmission timer: RTO from `now`.
    fn start_rto_timer(&mut self, now: Instant) {
        self.rto_started = now;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    fn take_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.rtt.on_sample(rtt);
        if let Some(min_rtt) = self.rtt.min_rtt() {
            self.cc.on_rtt_sample(now, min_rtt);
        }
    }

    /// In loss recovery, an RTT sample from an ACK that SACKs new data but
    /// moves no cumulative point: from the send time of the latest segment
    /// it SACKs that was sent only once (`newest_sacked_sent_at`), as
    /// Linux samples SACKed segments and RACK (RFC 8985 section 6.2) times
    /// the latest delivered one, or from the last transmission of a resent
    /// segment whose first copy was lost beyond doubt
    /// (`newest_resent_sacked_at`), as RACK times retransmissions, where
    /// the sample is at least the minimum RTT (RACK's test against a
    /// spurious retransmission: a copy answered sooner than the path can
    /// answer was not the one delivered).
    ///
    /// Such ACKs are all a loss recovery hears until its first
    /// retransmission is acknowledged, and on a slow reverse link they are
    /// what shows the ACK path filling up: the recovery's ACKs (one per
    /// retransmission, and more while holes are open) can queue there for
    /// longer than the RTO measured before the loss, when the sender asked
    /// for few ACKs. Without these samples the timer, set from that old
    /// RTO when the fast retransmit left, fired while ACKs were still
    /// arriving every few milliseconds: one flow at 19 Mbit/s with a
    /// 212 kbit/s reverse link (gauntlet seed 5 case 183) timed out 0.45 s
    /// into its recovery, went back to one segment and took 1.6x AE's
    /// time. So the timer's deadline also moves when RTO grows: it stays
    /// RTO after the timer was started, by the estimate now. It never
    /// moves earlier.
    ///
    /// Outside recovery the cumulative ACKs' timestamps time the path, and
    /// SACK samples there only tilt the estimate towards the ACKs sent at
    /// once: over the gauntlet's seeds 1-5, sampling them outside recovery
    /// too gave the same completion figures but, on a 0.6 Mbit/s path with
    /// a 2-packet buffer shared with AE and delayed-ACK flows (seed 1 case
    /// 47), 16 timeouts for the default strategy to AE's 9 (10.4 to 16.6
    /// before; 15 to 16.8 with samples in recovery only).
    ///
    /// The resent segments' samples are what a recovery hears once the ACK
    /// path is full: every segment SACKed after the first RTT of the
    /// recovery is a repair. One flow at 126 Mbit/s, 25 ms, with a
    /// 430 kbit/s reverse link (gauntlet seed 15 case 162, no random loss)
    /// overshot in slow start, repaired about 500 holes, and the ACKs of
    /// those repairs queued for 0.7 s on the reverse link; the head's
    /// first repair was lost, its second left after all the others and
    /// had its ACK behind them all, and the timer (RTO from that resend,
    /// by the estimate from before the loss) fired with every byte
    /// already delivered.
    fn on_sack_rtt(&mut self, now: Instant, outcome: &AckOutcome) {
        let min_rtt = self.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let resent = outcome
            .newest_resent_sacked_at
            .filter(|&at| now.saturating_duration_since(at) >= min_rtt);
        let Some(sent_at) = outcome.newest_sacked_sent_at.max(resent) else {
            return;
        };
        if !self.params.sack_rtt_samples
            || !self.in_recovery()
            || self.board.snd_una() < self.rewound_to
        {
            return;
        }
        self.take_rtt_sample(now, now.saturating_duration_since(sent_at));
        if let Some(deadline) = self.rto_deadline {
            let by_now = self.rto_started + self.rtt.rto();
            self.rto_deadline = Some(deadline.max(by_now));
        }
    }

    /// An impatient NewReno keeps the timer that the first partial ACK of
    /// a recovery set (RFC 6582 section 4): neither later partial ACKs nor
    /// the head retransmissions they cause restart it.
    fn impatient_hold(&self) -> bool {
        self.params.impatient
            && !self.sack
            && self.rto_deadline.is_some()
            && matches!(self.recovery, Recovery::Fast { partial_acks, .. } if partial_acks > 1)
    }

    /// RFC 6675 section 2 (with SACK) or RFC 5681 section 2 (without).
    fn is_duplicate(&self, input: &AckInput<'_>, outcome: &AckOutcome, una_before: u64) -> bool {
        let outstanding = self.board.high_data() > una_before;
        if !outstanding || input.ack != una_before {
            return false;
        }
        if self.sack {
            outcome.newly_sacked > 0
        } else {
            !input.carries_data && !input.unproven_duplicate
        }
    }

    fn should_enter_recovery(&self) -> bool {
        if self.board.snd_una() < self.recover {
            // Losses from before a timeout are being repaired by go-back-N.
            return false;
        }
        self.dup_acks >= self.params.dup_thresh
            || (self.sack && self.board.is_lost(self.board.snd_una()))
            || self.early_retransmit_due()
    }

    /// RFC 5827 section 3: fewer than four segments outstanding, none
    /// new that could go out to draw more duplicates (cwnd does not
    /// count: it opens again once the loss is repaired), and `oseg - 1`
    /// of them reported above the first (SACKed segments, or duplicate
    /// ACKs without SACK).
    fn early_retransmit_due(&self) -> bool {
        if !self.params.early_retransmit {
            return false;
        }
        let oseg = self.board.segment_count();
        if !(2..4).contains(&oseg) {
            return false;
        }
        let new_segment_possible =
            self.unsent_bytes() > 0 && self.window_edge > self.board.high_data();
        if new_segment_possible {
            return false;
        }
        let threshold = oseg - 1;
        if self.sack {
            self.board.sacked_segments() >= threshold
        } else {
            self.dup_acks as usize >= threshold
        }
    }

    /// Whether AF may postpone a fast retransmit now (see
    /// [`SenderParams::af_waits_only_for_sparse_acks`]).
    fn acks_sparse_enough_to_wait(&self) -> bool {
        !self.params.af_waits_only_for_sparse_acks || self.acks_grouped()
    }

    /// Whether each ACK the sender asks for covers two segments or more:
    /// an ACK then releases a burst (AF's hold and the spreader's lower
    /// floor act only then).
    fn acks_grouped(&self) -> bool {
        self.requests
            .as_ref()
            .is_some_and(|r| r.group_segments() >= 2)
    }

    /// Shortens some new segments by amounts the peer cannot predict
    /// ([`SegmentCuts`]), so that an ACK for data it never received names
    /// a point where no segment ends; `None` sends full segments.
    pub fn set_segment_cuts(&mut self, cuts: Option<SegmentCuts>) {
        self.cuts = cuts;
    }

    /// Holds duplicate ACKs without SACK to what an honest receiver could
    /// have sent (`reno_creditable`). Without
    /// SACK and without the ACK nonce a sender cannot tell a forged
    /// duplicate from an honest one, and NewReno lets a segment out for
    /// each; a receiver that repeats its duplicates can make the sender
    /// push many times the path's rate. The connection turns the guard on
    /// when it offered the nonce and the peer declined both it and SACK
    /// (honest stacks of today offer SACK); it costs an honest peer some
    /// of NewReno's window inflation in a recovery.
    pub fn set_duplicate_guard(&mut self, on: bool) {
        self.duplicate_guard = on;
        if !on {
            self.reno_sent = VecDeque::new();
            self.reno_acked = VecDeque::new();
            self.reno_clock = None;
        }
    }

    /// Whether duplicates are held to what an honest receiver could send
    /// (see [`set_duplicate_guard`](Self::set_duplicate_guard)).
    pub fn duplicate_guard(&self) -> bool {
        self.duplicate_guard
    }

    /// With the duplicate guard, the bytes above the hole that duplicate
    /// ACKs may stand for at `now`. Each honest duplicate reports a
    /// segment that reached the receiver, and none can have done so and
    /// been reported back within a minimum RTT of leaving; nor can honest
    /// duplicates come faster than the path delivered data in the SRTT
    /// before the recovery (with a quarter to spare for jitter). A
    /// receiver that invents duplicates therefore releases no
    /// more than what had time to arrive, about a window per round trip,
    /// instead of a segment per forgery. Before the first RTT sample
    /// nothing is held back.
    fn reno_creditable(&mut self, now: Instant) -> u64 {
        let Some(min_rtt) = self.rtt.min_rtt() else {
            return u64::MAX;
        };
        let before = now - min_rtt;
        // Keep the newest mark at or before the cut: later cuts only move
        // forward, so older marks are never needed again.
        while self.reno_sent.len() > 1 && self.reno_sent[1].0 <= before {
            self.reno_sent.pop_front();
        }
        let reached = match self.reno_sent.front() {
            Some(&(at, end)) if at <= before => end,
            _ => 0,
        };
        let old_enough = reached
            .saturating_sub(self.board.snd_una())
            .saturating_sub(self.mss);
        // One honest duplicate per segment that arrives above the hole:
        // no faster than the delivery rate measured at entry.
        let clocked = self
            .reno_clock
            .map_or(u64::MAX, |(since, per_second, base)| {
                let nanos = u128::from(crate::time::duration_nanos_saturating(now - since));
                let bytes = u128::from(per_second) * nanos * 5 / 4 / 1_000_000_000;
                base.saturating_add(self.mss)
                    .saturating_add(u64::try_from(bytes).unwrap_or(u64::MAX))
            });
        old_enough.min(clocked)
    }

    /// The base of ssthresh at a congestion event: the window in use (see
    /// [`WindowInUse`]), never more than cwnd, and without limited
    /// transmit's data (RFC 5681 section 3.2 step 2).
    fn reduction_base(&self) -> u64 {
        let flight = self.board.high_data() - self.board.snd_una();
        let flight = flight.saturating_sub(self.limited_transmit_bytes);
        self.in_use.reduction_base(self.cc.window(), flight)
    }

    fn enter_recovery(&mut self, now: Instant) {
        let flight = self.board.high_data() - self.board.snd_una();
        let base = self.reduction_base();
        let point = self.board.high_data();
        self.recovery = Recovery::Fast {
            point,
            partial_acks: 0,
        };
        self.recover = point;
        self.cc.on_congestion_event(now, base);
        self.spurious.on_loss();
        self.in_use.restart(point);
        self.limited_transmit_bytes = 0;
        self.board.begin_recovery();
        self.tlp.cancel();
        self.af_cap = None;
        self.fast_retransmit_at = None;
        self.hystart = None;
        if let Some(r) = self.requests.as_mut() {
            r.restart();
        }
        self.counters.fast_retransmits += 1;
        // A head already resent in an earlier recovery, its copy still
        // out, needs no second copy: the scoreboard offers it again if
        // that one is found lost.
        self.retransmit_head = !(self.sack && self.board.is_retransmitted(self.board.snd_una()));
        if !self.sack {
            self.reno_departed = u64::from(self.dup_acks) * self.mss;
        }
        if !self.sack && self.duplicate_guard {
            // Honest duplicates come at most as fast as data reaches the
            // receiver: the rate the path delivered before the loss, or
            // before an SRTT of ACKs, the flight over the SRTT.
            let rate = self.delivery_rate(now).or_else(|| {
                let srtt = self.rtt.srtt()?;
                let per_second = u128::from(flight) * 1_000_000_000 / srtt.as_nanos().max(1);
                Some(u64::try_from(per_second).unwrap_or(u64::MAX))
            });
            self.reno_clock = rate.map(|r| (now, r, self.reno_departed));
        }
        tracing::debug!(
            recovery_point = point,
            flight,
            base,
            "entering fast recovery"
        );
    }

    /// An acknowledgment carried ECN-Echo (RFC 3168 section 6.1.2), to be
    /// called after [`on_ack`](Self::on_ack) for the same ACK. The sender
    /// answers as to a loss detected by fast retransmit, without the
    /// retransmission: ssthresh from the window in use by the congestion
    /// controller's decrease rule, cwnd = ssthresh. It answers at most
    /// once per round trip: not again until an ACK reaches past the data
    /// outstanding at the reduction (ECE keeps arriving until the peer
    /// sees our CWR, which rides on data sent after it), and not during
    /// fast recovery or after a timeout for the data of that episode,
    /// which were reduced already. The caller ignores an echo on an ACK
    /// that arrived with nothing of ours outstanding: it is about no
    /// window of ours (a peer that only receives, or ACC's echo of marked
    /// ACKs).
    ///
    /// Returns true when the window was reduced: the next new data
    /// segment must then carry CWR.
    pub fn on_ecn_echo(&mut self, now: Instant) -> bool {
        let una = self.board.snd_una();
        let high = self.board.high_data();
        if self.in_recovery() || una < self.recover {
            return false;
        }
        if self.ecn_recover.is_some_and(|point| una <= point) {
            return false;
        }
        let base = self.reduce_window(now);
        self.ecn_recover = Some(high);
        self.counters.ecn_reductions += 1;
        tracing::debug!(base, recover = high, "ECN-Echo: window reduced");
        true
    }

    /// Fires due timers. Returns true when a retransmission timeout
    /// happened.
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        self.pacing_on_timer(now);
        if self.reorder_deadline.is_some_and(|t| t <= now) {
            self.arm_reorder_timer(now);
        }
        if let Some(s) = self.spreader.as_mut() {
            s.on_timer(now);
        }
        if self.fast_retransmit_at.is_some_and(|t| t <= now) {
            self.fast_retransmit_at = None;
            if !self.in_recovery() && self.should_enter_recovery() {
                self.enter_recovery(now);
            }
        }
        if let Some(t) = self.persist_deadline {
            if t <= now {
                self.persist_deadline = None;
                // The probe goes out from poll_transmit with the window
                // forced open by one byte.
                self.window_edge = self.window_edge.max(self.board.high_data() + 1);
                self.probing = true;
            }
        }
        if self.tlp.on_timer(now) {
            // The probe goes out from poll_transmit and restarts the
            // retransmission timer.
            return false;
        }
        match self.rto_deadline {
            Some(t) if t <= now => {}
            _ => return false,
        }
        self.rto_deadline = None;
        self.tlp.cancel();
        if self.board.snd_una() >= self.board.high_data() {
            return false;
        }
        let flight = self.board.high_data() - self.board.snd_una();
        if self.probing && flight <= 1 {
            // RFC 9293 3.8.6.1: keep probing with backoff, cwnd untouched.
            self.counters.window_probes += 1;
            self.rtt.on_timeout();
            let una = self.board.snd_una();
            self.board.reset_to(una);
            return false;
        }
        self.counters.timeouts += 1;
        self.timeouts_in_a_row += 1;
        self.hystart = None;
        self.last_timeout_at = Some(now);
        // The silence that ended in this timeout is an outage, not the
        // spacing of an ACK train.
        self.ack_interval.restart();
        // A timeout that ends a fast recovery belongs to the loss episode
        // that recovery already answered: its FlightSize holds what
        // recovery sent since, so a second reduction from it would be
        // wrong in size (too high: ssthresh above the path, and the next
        // slow start overshoots again) and redundant in effect (Linux's
        // loss state keeps the episode's ssthresh the same way).
        let base = (!self.in_recovery()).then(|| self.reduction_base());
        let prior = PriorWindow {
            cwnd: self.cc.window(),
            ssthresh: self.cc.ssthresh(),
        };
        self.spurious
            .on_timeout(prior, self.board.snd_una(), self.board.high_data());
        self.cc.on_retransmission_timeout(now, base);
        self.in_use.restart(self.board.high_data());
        self.limited_transmit_bytes = 0;
        self.rtt.on_timeout();
        self.recover = self.board.high_data();
        self.recovery = Recovery::Open;
        self.dup_acks = 0;
        self.reno_departed = 0;
        self.retransmit_head = false;
        self.rtt_probe = None;
        self.rewound_to = self.rewound_to.max(self.max_sent);
        if self.sack && self.params.timeout_keeps_sacks && !self.board.sacks_reneged() {
            // Resend the holes only, as Linux does (its SACK marks survive
            // a timeout unless the receiver reneged); `recover` still holds
            // off a new fast recovery until RecoveryPoint (RFC 6675 5.1).
            self.board.on_retransmission_timeout_keeping_sacks();
            self.recovery = Recovery::AfterTimeout {
                point: self.board.high_data(),
            };
        } else {
            // Go back to the cumulative ACK point (RFC 5681 3.1, RFC 6675
            // 5.1), forgetting SACKs the receiver may have reneged on.
            let una = self.board.snd_una();
            self.board.reset_to(una);
        }
        if let Some(r) = self.requests.as_mut() {
            r.restart();
        }
        self.af_cap = None;
        self.fast_retransmit_at = None;
        tracing::debug!(flight, rto = ?self.rtt.rto(), "retransmission timeout");
        true
    }

    /// The next segment to send, if any, of at most `max_payload` bytes,
    /// before pacing (see [`poll_transmit`](Self::poll_transmit)).
    fn poll_transmit_unpaced(&mut self, now: Instant, max_payload: usize) -> Option<TxSegment> {
        let max_payload = max_payload.min(self.params.mss).max(1);
        if self.retransmit_head {
            self.retransmit_head = false;
            let una = self.board.snd_una();
            if una < self.board.high_data() {
                let end = self.record_end(una, max_payload);
                return Some(self.emit(now, una, end));
            }
        }
        if self.tlp.is_due() {
            if let Some(seg) = self.send_tail_loss_probe(now, max_payload) {
                return Some(seg);
            }
        }
        if self.repairing_by_sack() {
            if self.cc.window().saturating_sub(self.pipe()) < self.mss {
                return None;
            }
            // NextSeg rule 1: a segment presumed lost.
            if let Some((start, end)) = self.board.next_lost() {
                let end = self.clip(start, end, max_payload);
                return Some(self.emit(now, start, end));
            }
            // Rule 2: new data.
            if let Some(seg) = self.next_new(now, max_payload, true) {
                return Some(seg);
            }
            // Rule 3: an unSACKed segment below the highest SACK.
            if let Some((start, end)) = self.board.next_unsacked_rule3() {
                let end = self.clip(start, end, max_payload);
                return Some(self.emit(now, start, end));
            }
            // Rule 4: once per fast recovery, the highest unSACKed
            // segment. At a transfer's tail nothing above it can draw the
            // SACKs that would mark it lost, and a probe is not sent in
            // recovery: without the rescue, a partial ACK that leaves only
            // a lost last segment (the FIN's, typically) waits for the
            // retransmission timer (gauntlet seed 5 case 111: the one
            // timeout of the default on a loss-free single-flow path).
            if self.params.tail_loss_probe && matches!(self.recovery, Recovery::Fast { .. }) {
                if let Some((start, end)) = self.board.rescue_candidate() {
                    let end = self.clip(start, end, max_payload);
                    return Some(self.emit_as(now, start, end, Transmission::Rescue));
                }
            }
            return None;
        }
        self.next_new(now, max_payload, false)
    }

    /// Limits a resent range to one segment's payload, keeping a FIN that
    /// directly follows it.
    fn clip(&self, start: u64, end: u64, max_payload: usize) -> u64 {
        let cap = start + max_payload as u64;
        let data_end = self.buffer.end();
        if end <= cap || (self.fin_queued && end == data_end + 1 && cap >= data_end) {
            end
        } else {
            cap
        }
    }

    /// End of the range to resend starting at `start`: the data of one
    /// segment, plus the FIN when that segment reaches it.
    fn record_end(&self, start: u64, max_payload: usize) -> u64 {
        let data_end = self.buffer.end();
        let end = (start + max_payload as u64).min(data_end);
        if self.fin_queued && end == data_end {
            end + 1
        } else {
            end.max(start)
        }
    }

    /// Bytes of new data the congestion side lets this sender put in
    /// flight now, outside recovery: the congestion window (capped by
    /// AF's burst cap), plus RFC 3042's limited transmit and the credit
    /// for a group the receiver holds (`hold_credit`), less what is in
    /// flight. The peer's receive window is not counted here. An
    /// application that keeps this much unsent (or more) never leaves
    /// the sender waiting for data.
    #[inline(always)]
    pub fn congestion_room(&self) -> u64 {
        // RFC 3042: the first two duplicate ACKs may each release one
        // new segment beyond cwnd; not during recovery.
        let allowance = if self.params.limited_transmit && !self.in_recovery() {
            u64::from(self.dup_acks.min(2)) * self.mss
        } else {
            0
        };
        let window = match self.af_cap {
            Some(cap) => self.cc.window().min(cap),
            None => self.cc.window(),
        };
        // The group the receiver holds counts as delivered (see
        // `hold_credit`), outside recovery and slow start.
        let hold = match self.requests.as_ref() {
            Some(r) if r.credits_hold() && !self.in_recovery() && !self.cc.in_slow_start() => {
                hold_credit(
                    r.group_segments(),
                    self.mss,
                    window,
                    self.request_rtt.srtt(),
                    self.request_rtt.min_rtt(),
                )
            }
            _ => 0,
        };
        (window + allowance + hold).saturating_sub(self.in_flight())
    }

    /// Inlined into its callers (`#[inline]` alone was not taken): most
    /// polls end here, and out of line the segment it returns went back
    /// through memory, copied in wide loads of the narrow stores that
    /// wrote it, on every segment sent.
    #[inline(always)]
    fn next_new(
        &mut self,
        now: Instant,
        max_payload: usize,
        in_recovery: bool,
    ) -> Option<TxSegment> {
        let start = self.board.high_data();
        let data_end = self.buffer.end();
        let fin_pending = self.fin_queued && start <= data_end;
        if start >= data_end && !fin_pending {
            return None;
        }
        let cwnd_room = if in_recovery {
            self.mss
        } else {
            self.congestion_room()
        };
        let window_room = self.window_edge.saturating_sub(start);
        let mut len = (data_end - start).min(max_payload as u64).min(cwnd_room);
        if len < (data_end - start).min(max_payload as u64) {
            // Window-limited: only send a full segment's worth unless what
            // is left is smaller (avoids silly windows).
            if len < max_payload as u64 {
                len = 0;
            }
        }
        len = len.min(window_room);
        // The FIN needs no window room: it is accepted at a closed window.
        let fin = fin_pending && start + len == data_end;
        if len == 0 && !fin {
            if window_room == 0 && self.board.snd_una() >= start && self.persist_deadline.is_none()
            {
                // Peer window closed with nothing in flight: probe later.
                self.persist_deadline = Some(now + self.rtt.rto());
            }
            return None;
        }
        // Nagle (RFC 896): hold a partial segment while data is unacked,
        // unless the FIN goes with it.
        if self.params.nagle && (len as usize) < max_payload && !fin && self.board.snd_una() < start
        {
            return None;
        }
        if let Some(cuts) = self.cuts.filter(|_| !fin && len == max_payload as u64) {
            // Toward a peer without the ACK nonce: an end it cannot guess
            // (see `segment_cuts`).
            len = cuts.length(start, len);
        }
        let end = start + len + u64::from(fin);
        Some(self.emit(now, start, end))
    }

    /// Records and describes the transmission of `[start, end)`, where `end`
    /// may include the FIN's unit.
    fn emit(&mut self, now: Instant, start: u64, end: u64) -> TxSegment {
        self.emit_as(now, start, end, Transmission::Ordinary)
    }

    /// [`emit`](Self::emit), told whether the segment is RFC 6675's rescue
    /// retransmission (NextSeg rule 4), which the scoreboard records
    /// without raising HighRxt.
    fn emit_as(&mut self, now: Instant, start: u64, end: u64, kind: Transmission) -> TxSegment {
        let data_end = self.buffer.end();
        let fin = self.fin_queued && end > data_end;
        let len = (end.min(data_end)).saturating_sub(start) as usize;
        let retransmission = start < self.max_sent;
        if retransmission && start == self.board.snd_una() && !self.impatient_hold() {
            // The oldest outstanding data was just resent: the timer
            // measures from this transmission (RFC 6298 section 5 leaves
            // restarting to the implementation; Linux restarts it when it
            // resends the head). A lost retransmission of the head that
            // recovery repairs again must not inherit the first one's
            // deadline.
            self.start_rto_timer(now);
        }
        if kind == Transmission::Rescue {
            self.board.on_rescue_retransmit(start, end, now);
        } else {
            self.board.on_transmit(start, end, now);
        }
        if !retransmission && !self.in_recovery() {
            if self.dup_acks > 0 {
                self.limited_transmit_bytes += end - start;
            } else {
                self.in_use.on_send(self.board.outstanding());
            }
        }
        if end > self.max_sent {
            self.max_sent = end;
            if !self.sack && self.duplicate_guard {
                // Marks of acknowledged data can credit nothing.
                let una = self.board.snd_una();
                while self.reno_sent.front().is_some_and(|&(_, e)| e <= una) {
                    self.reno_sent.pop_front();
                }
                self.reno_sent.push_back((now, end));
            }
        }
        self.counters.data_segments += 1;
        self.counters.data_bytes += len as u64;
        if retransmission {
            self.counters.retransmissions += 1;
            self.spurious.on_retransmit(start, end.min(data_end));
            // Karn: no sample across a retransmission. Not only the timed
            // segment's own: repairing any hole below it would let the
            // cumulative ACK that covers it arrive late.
            self.rtt_probe = None;
        } else if self.rtt_probe.is_none() {
            self.rtt_probe = Some((end, now));
        }
        if self.rto_deadline.is_none() {
            self.start_rto_timer(now);
        }
        if !retransmission {
            self.tlp.on_new_data(start);
            self.arm_tail_loss_probe(now);
        }
        let ack_request = self.next_ack_request(retransmission);
        if ack_request == Some(0) {
            if !retransmission && self.counts_ack_loss() {
                self.ack_loss.on_request(end);
            }
            self.last_request_end = self.last_request_end.max(end);
            if !retransmission && self.request_probe.is_none() {
                self.request_probe = Some((end, now));
            }
        }
        if retransmission {
            self.request_probe = None;
        }
        TxSegment {
            start,
            len,
            fin,
            retransmission,
            ack_request,
        }
    }

    /// The countdown for a segment being sent. A retransmission asks for
    /// an ACK at once: it repairs a hole, and its ACK is what recovery
    /// waits for.
    fn next_ack_request(&mut self, retransmission: bool) -> Option<u16> {
        let window = self.cc.window().min(self.peer_window());
        let info = WindowInfo {
            window_segments: (window / self.mss).max(1),
            in_slow_start: self.cc.in_slow_start(),
            srtt: self.request_rtt.srtt(),
            min_rtt: self.request_rtt.min_rtt(),
            acks_lost: self.ack_loss.lost_fraction(),
            timed_out: self.counters.timeouts > 0,
        };
        // With nothing more to send, the group ends here (an application
        // that pauses must not wait for the receiver's timer).
        let room = self.next_send_room();
        let window_full = room == Some(false);
        let no_request_outstanding = self.board.snd_una() >= self.last_request_end;
        let requests = self.requests.as_mut()?;
        if retransmission {
            return Some(0);
        }
        let countdown = requests.next_countdown(&info)?;
        let group = requests.group_segments();
        self.cc.set_byte_counting_limit(group);
        if countdown == 0 {
            return Some(0);
        }
        if room.is_none() || (window_full && no_request_outstanding) {
            // Nothing more can leave until an ACK comes back (window full
            // or no data) and no requested ACK is outstanding: a group left
            // open here would make the receiver sit on its fallback timer.
            // Close it, so every window of data draws at least one ACK
            // (paper 003 sec. 3.1).
            requests.restart();
            return Some(0);
        }
        if window_full && mostly_sent(group, countdown) {
            // Group alignment. Left open at a full window, the group's
            // last segments leave only when the next requested ACK frees
            // room, up to RTT / x later with x ACKs per window, and its
            // first segments wait at the receiver that long for their
            // ACK. Groups that straddle the bursts ACKs release keep
            // drifting that way as the window grows, and 4W grew by 0.8
            // segment per RTT in congestion avoidance instead of 1
            // (`tests/recovery.rs`). A group at least half sent is closed
            // here instead, so the next group starts with the next burst;
            // ACKs per window stay within twice the strategy's number.
            // Groups under 4 segments come with many ACKs per window, so
            // the wait for the next one is short and they stay open.
            requests.restart();
            return Some(0);
        }
        Some(countdown)
    }

    /// Just after a segment was sent: `None` when no new data (nor a FIN)
    /// is waiting, otherwise whether both the congestion window and the
    /// peer's window have room for the next segment now.
    fn next_send_room(&self) -> Option<bool> {
        let next = self.board.high_data();
        let data_end = self.buffer.end();
        let waiting = data_end.saturating_sub(next).min(self.mss);
        let fin = self.fin_queued && next == data_end;
        if waiting == 0 && !fin {
            return None;
        }
        let room = (self.cc.window()).saturating_sub(self.in_flight());
        Some(room >= waiting.max(1) && (self.window_edge > next || fin))
    }
}

/// How [`Sender::emit_as`] records a segment on the scoreboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transmission {
    /// New data or a retransmission by NextSeg rules 1 and 3, a probe, a
    /// go-back-N resend.
    Ordinary,
    /// RFC 6675's rescue retransmission (NextSeg rule 4).
    Rescue,
}

/// Bucket of the spreader's windowed maximum before the first RTT sample.
const INITIAL_SPREAD_BUCKET: Duration = Duration::from_millis(100);

/// Whether a group of `group` segments whose segment being sent has
/// countdown `countdown` (segments still to come) is at least half sent,
/// and large enough that leaving it open would hold its ACK back long
/// (see the group alignment in `Sender::next_ack_request`).
fn mostly_sent(group: u32, countdown: u16) -> bool {
    let sent = group.saturating_sub(u32::from(countdown));
    group >= 4 && 2 * sent >= group
}

// ---------------------------------------------------------------------
// Pacing (paper 004 section 4.1). Kept in one block: the sender's
// transmit logic above is unchanged and only wrapped here.
// ---------------------------------------------------------------------
impl Sender {
    /// Turns pacing on with `config`, or off with `None` (paper 004
    /// section 4.1). Data segments then leave no faster than one
    /// congestion window per `fraction * SRTT`; see
    /// [`Pacer`](super::pacing::Pacer) for the exact rule.
    pub fn set_pacing(&mut self, config: Option<PacingConfig>) {
        self.pacer = config.map(Pacer::new);
    }

    /// Turns ACK-clock spreading on with `Some(burst)`, or off with
    /// `None` (see [`Spreader`](super::spread::Spreader)): in congestion
    /// avoidance and loss recovery, the data an ACK releases leaves at up
    /// to 1.05 times the delivery rate measured between ACKs instead of in
    /// one burst (the fast retransmit excepted), on
    /// windows of [`MIN_CWND_SEGMENTS`](super::spread::MIN_CWND_SEGMENTS)
    /// or more (of
    /// [`MIN_GROUPED_CWND_SEGMENTS`](super::spread::MIN_GROUPED_CWND_SEGMENTS)
    /// or more while each requested ACK covers two segments or more).
    /// `burst` is how late the driver's timers may wake this
    /// sender ([`Spreader::with_burst`]; zero for exact timers). For
    /// senders that ask for few ACKs per window.
    pub fn set_ack_spreading(&mut self, burst: Option<Duration>) {
        self.spreader = burst.map(Spreader::with_burst);
    }

    /// The pacer, when pacing is on.
    pub fn pacer(&self) -> Option<&Pacer> {
        self.pacer.as_ref()
    }

    /// The next segment to send, if any, of at most `max_payload` bytes.
    /// The caller must transmit it (the sender records it as sent).
    ///
    /// With pacing on (paper 004 section 4.1) this returns `None` while
    /// the pacer holds the next data segment back, and
    /// [`poll_timeout`](Self::poll_timeout) then includes the instant it
    /// may go. The segment that a fast retransmit or a NewReno partial ACK
    /// puts at the head is exempt: loss repair should not wait behind the
    /// pacing clock, and it is a single segment. It is still counted, so
    /// what follows it is spaced. Everything else (new data, SACK-based
    /// retransmissions during recovery, go-back-N after a timeout) is
    /// paced.
    ///
    /// With ACK-clock spreading on ([`set_ack_spreading`](Self::set_ack_spreading))
    /// it also returns `None` while the spreader holds data back, in
    /// congestion avoidance or loss recovery (the fast retransmit always
    /// leaves at once) with a window of at least
    /// [`MIN_CWND_SEGMENTS`](super::spread::MIN_CWND_SEGMENTS) (of
    /// [`MIN_GROUPED_CWND_SEGMENTS`](super::spread::MIN_GROUPED_CWND_SEGMENTS)
    /// while requested ACKs cover groups of two or more), and
    /// `poll_timeout` includes the release instant.
    pub fn poll_transmit(&mut self, now: Instant, max_payload: usize) -> Option<TxSegment> {
        // A driver polls after every event, and most polls find nothing to
        // send: everything written is out, no recovery (fast or after a
        // timeout), no probe and no resend of the head is due. The answer
        // is then `None` whatever the window, so give it before the
        // arithmetic below. Only a pacer must still be told (its hold is
        // cleared when a release is due); the spreader records nothing
        // without work.
        if !self.retransmit_head
            && self.pacer.is_none()
            && !self.tlp.is_due()
            && matches!(self.recovery, Recovery::Open)
            && self.board.high_data() >= self.stream_end()
        {
            return None;
        }
        let urgent = self.retransmit_head && self.board.snd_una() < self.board.high_data();
        let cwnd = self.cc.window();
        let srtt = self.rtt.srtt();
        // ACK-clock spreading acts in congestion avoidance and loss
        // recovery, and in slow start where the strategy asks for sparse
        // ACKs there, on windows of `MIN_CWND_SEGMENTS` or more (of
        // `MIN_GROUPED_CWND_SEGMENTS` or more while each requested ACK
        // covers two segments or more), and never holds the fast
        // retransmit (see `sender::spread`).
        let floor = if self.acks_grouped() {
            super::spread::MIN_GROUPED_CWND_SEGMENTS
        } else {
            super::spread::MIN_CWND_SEGMENTS
        };
        let in_slow_start = self.cc.in_slow_start();
        let spreading =
            !urgent && (!in_slow_start || self.sparse_slow_start()) && cwnd >= floor * self.mss;
        if !urgent {
            let has_work = self.board.high_data() < self.stream_end()
                || !matches!(self.recovery, Recovery::Open);
            if let Some(p) = self.pacer.as_mut() {
                if !p.may_send(now, cwnd, srtt, has_work) {
                    return None;
                }
            }
            if let (true, Some(s)) = (spreading, self.spreader.as_mut()) {
                if !s.may_send(now, has_work) {
                    return None;
                }
            }
        }
        let seg = self.poll_transmit_unpaced(now, max_payload)?;
        if let Some(p) = self.pacer.as_mut() {
            p.on_sent(now, seg.len as u64, cwnd, srtt);
        }
        if spreading {
            if let Some(s) = self.spreader.as_mut() {
                if in_slow_start {
                    s.on_sent_in_slow_start(now, seg.len as u64);
                } else {
                    s.on_sent(now, seg.len as u64);
                }
            }
        }
        Some(seg)
    }

    /// When a held paced segment may leave, if one is held.
    fn pacing_wake_at(&self) -> Option<Instant> {
        self.pacer
            .as_ref()
            .and_then(|p| p.wake_at(self.cc.window(), self.rtt.srtt()))
    }

    /// A pacing release that has passed needs no further wake-up.
    fn pacing_on_timer(&mut self, now: Instant) {
        let cwnd = self.cc.window();
        let srtt = self.rtt.srtt();
        if let Some(p) = self.pacer.as_mut() {
            p.on_timer(now, cwnd, srtt);
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
