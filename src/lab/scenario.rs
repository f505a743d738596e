//! Lab scenarios: a topology, a set of flows and the end-host parameters,
//! described once and turned into an emulator [`Scenario`] per strategy.
//!
//! The same structure is read from TOML files (schema in
//! `docs/scenarios.md`) and built by the presets.

use super::path_file::{parse_loss, parse_probability};
use super::strategy::{NetAck, Strategy};
use super::units::{parse_duration, parse_rate};
use super::LabError;
use crate::ack_path::{AckBufferConfig, DelayControlConfig, Filter, Service};
use crate::connection::{AckNonceMode, Config};
use crate::emu::Reorder;
use crate::emu::{
    CrossTrafficSpec, DelayControlSpec, DumbbellSpec, FlowParams, FlowTransport, HopSpec, Jitter,
    LossModel, MediumSpec, ParkingLotRoutes, Period, QueueSpec, RedParams, Scenario,
    DUMBBELL_MIDDLE,
};
use crate::time::Duration;
use serde::Deserialize;

/// Which topology builder a scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyKind {
    /// Flows share one middle link pair (paper 003 fig. 2/5, paper 004
    /// fig. 2).
    Dumbbell,
    /// Three bottlenecks in a chain; flow 0 crosses all, each other flow
    /// one hop ([`ParkingLotRoutes::Classic`]).
    ParkingLot,
    /// Three bottlenecks in a chain where every flow ends at the last hop
    /// (paper 004 fig. 2b and sec. 5.6, [`ParkingLotRoutes::SharedLast`]).
    ParkingLotSharedLast,
}

/// The queueing discipline of a middle link.
#[derive(Debug, Clone, PartialEq)]
pub enum QueueKind {
    /// First in, first out; arrivals to a full queue are dropped.
    DropTail,
    /// Per-flow round robin (the "fair queueing" of paper 004 sec. 4.1).
    RoundRobin,
    /// Paper 000's reverse buffer with ACK filtering, its TSW estimators
    /// over `rate_window` (set by the lab to the path's RTT).
    AckFilter {
        /// The filtering algorithm.
        filter: Filter,
        /// FIFO or round-robin service.
        service: Service,
        /// The TSW window.
        rate_window: Duration,
        /// The link's own queue when it was RED: kept as the buffer's
        /// admission gate (paper 002's filtering on RED/ECN).
        red_gate: Option<Box<QueueKind>>,
    },
    /// Random Early Detection with gentle mode (paper 004 sec. 4.2, paper
    /// 003 sec. 4.5); thresholds in packets.
    Red {
        /// Average queue where early drops (or marks) begin, packets.
        min_th_packets: f64,
        /// Average queue where the probability reaches `max_p`, packets.
        max_th_packets: f64,
        /// Weight of the newest sample in the average.
        w_q: f64,
        /// Drop probability at `max_th_packets`.
        max_p: f64,
        /// Mark ECN-capable packets instead of dropping them early; flows
        /// of the scenario then send ECN-capable packets.
        ecn: bool,
    },
}

impl QueueKind {
    /// Paper 004's RED setting: thresholds 5 and 15 packets, `w_q` 0.002,
    /// `max_p` 0.1.
    pub const RED_PAPER_004: QueueKind = QueueKind::Red {
        min_th_packets: 5.0,
        max_th_packets: 15.0,
        w_q: 0.002,
        max_p: 0.1,
        ecn: false,
    };

    /// [`RED_PAPER_004`](Self::RED_PAPER_004) marking ECN-capable packets.
    pub const RED_PAPER_004_ECN: QueueKind = QueueKind::Red {
        min_th_packets: 5.0,
        max_th_packets: 15.0,
        w_q: 0.002,
        max_p: 0.1,
        ecn: true,
    };
}

/// One direction of the bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    /// Capacity, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queue limit, packets.
    pub buffer_packets: usize,
    /// Queueing discipline.
    pub queue: QueueKind,
    /// Random loss on this direction's wire, passed through to the
    /// middle link (each hop of a parking lot) the lab builds. When
    /// `reverse` is absent the reverse direction mirrors it, loss included.
    pub loss: LossModel,
    /// Random extra propagation delay (order kept) and reordering on this
    /// direction, passed through like `loss`.
    pub jitter: Option<Jitter>,
}

impl LinkParams {
    fn hop(&self, mean_packet_bytes: u32) -> HopSpec {
        let queue = match &self.queue {
            QueueKind::DropTail => QueueSpec::drop_tail(self.buffer_packets),
            QueueKind::RoundRobin => QueueSpec::RoundRobin {
                limit_packets: self.buffer_packets,
            },
            QueueKind::AckFilter {
                filter,
                service,
                rate_window,
                red_gate,
            } => QueueSpec::AckFilter {
                config: AckBufferConfig::paper_000(
                    *filter,
                    *service,
                    self.buffer_packets,
                    self.rate_bps,
                    *rate_window,
                ),
                red: red_gate
                    .as_deref()
                    .and_then(|k| self.red_params(k, mean_packet_bytes)),
            },
            red @ QueueKind::Red { .. } => QueueSpec::Red(
                self.red_params(red, mean_packet_bytes)
                    .expect("a RED kind has RED parameters"),
            ),
        };
        HopSpec {
            rate_bps: self.rate_bps,
            delay: self.delay,
            queue,
            loss: self.loss,
            jitter: self.jitter,
        }
    }

    /// The RED parameters of `kind` on this link, `None` for other kinds.
    fn red_params(&self, kind: &QueueKind, mean_packet_bytes: u32) -> Option<RedParams> {
        match kind {
            QueueKind::Red {
                min_th_packets,
                max_th_packets,
                w_q,
                max_p,
                ecn,
            } => Some(RedParams {
                min_th: *min_th_packets,
                max_th: *max_th_packets,
                w_q: *w_q,
                max_p: *max_p,
                gentle: true,
                ecn: *ecn,
                limit_packets: self.buffer_packets,
                mean_packet_bytes,
            }),
            _ => None,
        }
    }

    fn ecn(&self) -> bool {
        match &self.queue {
            QueueKind::Red { ecn, .. } => *ecn,
            QueueKind::AckFilter { red_gate, .. } => {
                matches!(red_gate.as_deref(), Some(QueueKind::Red { ecn: true, .. }))
            }
            _ => false,
        }
    }
}

/// A group of identical flows.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowGroup {
    /// How many flows.
    pub count: u32,
    /// Payload bytes each flow transfers; `None` for a long-lived flow
    /// that sends until the horizon (measure it by throughput).
    pub bytes: Option<u64>,
    /// Start of the first flow of the group.
    pub start: Duration,
    /// Added to the start of each further flow of the group.
    pub stagger: Duration,
    /// One-way delay of each flow's access links.
    pub access_delay: Duration,
    /// Spreads the group's access delays evenly over
    /// `[access_delay, access_delay + access_delay_spread]`: flow `k` of
    /// `n` gets `access_delay + spread * k / (n - 1)`. Each flow crosses
    /// four access links per round trip, so RTTs spread by four times
    /// this. Identical RTTs phase-lock flows in a deterministic emulator
    /// (paper 003 fig. 11 and paper 004 spread them); a few ms of spread
    /// restores fairness. No randomness: zero (the default) changes
    /// nothing.
    pub access_delay_spread: Duration,
    /// Data flows from the right side to the left (two-way traffic).
    pub reverse: bool,
    /// This group always uses this strategy, whatever the run compares
    /// (e.g. the AE half of paper 003's fairness runs).
    pub strategy: Option<Strategy>,
    /// Receive window of these flows, segments (paper 003 sec. 4.5 limits
    /// its reverse flows to 20); `None` never limits the sender.
    pub recv_window_segments: Option<u32>,
}

impl FlowGroup {
    /// Access delay of flow `k` of the group (see
    /// [`access_delay_spread`](Self::access_delay_spread)).
    pub fn access_delay_of(&self, k: u32) -> Duration {
        if self.count < 2 || self.access_delay_spread.is_zero() {
            return self.access_delay;
        }
        let spread =
            self.access_delay_spread.as_nanos() * u128::from(k) / u128::from(self.count - 1);
        self.access_delay + Duration::from_nanos(u64::try_from(spread).unwrap_or(u64::MAX))
    }

    /// `count` flows of `bytes` each (`None`: long-lived), all starting at
    /// zero, left to right, with the run's strategy.
    pub fn new(count: u32, bytes: Option<u64>) -> FlowGroup {
        FlowGroup {
            count,
            bytes,
            start: Duration::ZERO,
            stagger: Duration::ZERO,
            access_delay: Duration::ZERO,
            access_delay_spread: Duration::ZERO,
            reverse: false,
            strategy: None,
            recv_window_segments: None,
        }
    }
}

/// An on/off constant-rate UDP source over the middle link (paper 004's
/// TCP-UDP configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct CrossGroup {
    /// Rate while on, bits per second.
    pub rate_bps: u64,
    /// Datagram size on the link, bytes.
    pub packet_bytes: u32,
    /// Length of each on period.
    pub on: Duration,
    /// Length of each off period.
    pub off: Duration,
    /// Start of the first on period.
    pub start: Duration,
    /// Sends right to left over the reverse middle link.
    pub reverse: bool,
}

/// The dumbbell's middle link pair as one shared half-duplex medium
/// (Wi-Fi-like, see `emu::MediumSpec`): data and ACKs of both directions
/// take turns on one transmitter, and every frame pays
/// `per_frame_overhead` of airtime on top of its bytes at the link rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedMedium {
    /// Airtime per frame beyond its bytes (802.11a/g at 54 Mbit/s: about
    /// 100-150 us for DIFS, backoff, preamble, SIFS and the link-layer ACK).
    pub per_frame_overhead: Duration,
}

/// What a flow of the built scenario is, for reports: the strategy it ran
/// and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRole {
    /// Strategy of this flow's ends.
    pub strategy: Strategy,
    /// Data flows right to left.
    pub reverse: bool,
}

/// A complete lab scenario, independent of the strategy compared.
#[derive(Debug, Clone, PartialEq)]
pub struct LabScenario {
    /// Topology.
    pub topology: TopologyKind,
    /// Forward bottleneck (each hop of a parking lot).
    pub forward: LinkParams,
    /// Reverse bottleneck; `None` mirrors `forward`.
    pub reverse: Option<LinkParams>,
    /// Capacity of every access link; `None` is ten times the faster
    /// middle direction, so access links never limit.
    pub access_rate_bps: Option<u64>,
    /// Flows.
    pub flows: Vec<FlowGroup>,
    /// Cross traffic (dumbbell only).
    pub cross: Vec<CrossGroup>,
    /// Payload bytes per full segment.
    pub segment_bytes: u16,
    /// Initial window, segments.
    pub initial_window_segments: u32,
    /// Minimum retransmission timeout.
    pub min_rto: Duration,
    /// Delayed-ACK timer.
    pub delayed_ack: Duration,
    /// Fallback timer of the polled receiver (strategies that ask for
    /// ACKs); paper 003 used 100 ms by default and up to 1000 ms so the
    /// timer would not interfere with the requested ACK rate.
    pub poll_fallback: Duration,
    /// Bytes added to each segment on links (IPv4 header).
    pub overhead_bytes: u32,
    /// Counters and throughput cover `[measure_from, end]` (paper 003
    /// sec. 4.3 leaves out the first 40% of long-lived runs).
    pub measure_from: Duration,
    /// Simulated time limit.
    pub horizon: Duration,
    /// The middle link pair shares one half-duplex transmitter (dumbbell
    /// only); `None`: two independent full-duplex directions.
    pub medium: Option<SharedMedium>,
    /// Packets reach the hosts only on the ticks of a clock with this
    /// period: the last hop into every host gets a `tick`. With
    /// `sender_reads_batches` and fast access links this models
    /// `ackwise relay` between two socket endpoints on one machine, whose
    /// timers fire on 1 ms ticks. Zero: none.
    pub access_tick: Duration,
    /// The data senders read what arrives together as one batch (see
    /// [`Scenario::client_reads_batches`]).
    pub sender_reads_batches: bool,
    /// The hosts' connections are configured as ackwise's socket endpoint
    /// configures them for its millisecond timers
    /// ([`Config::with_late_timers`], 2 ms): a spreading or paced sender
    /// may catch up after a late wake-up. The emulator's timers still fire
    /// exactly. For modelling `ackwise relay` with `access_tick`.
    pub socket_timers: bool,
}

impl Default for LabScenario {
    fn default() -> Self {
        LabScenario {
            topology: TopologyKind::Dumbbell,
            forward: LinkParams {
                rate_bps: 1_500_000,
                delay: Duration::from_millis(50),
                buffer_packets: 19,
                queue: QueueKind::DropTail,
                loss: LossModel::None,
                jitter: None,
            },
            reverse: None,
            access_rate_bps: None,
            access_tick: Duration::ZERO,
            sender_reads_batches: false,
            socket_timers: false,
            flows: vec![FlowGroup::new(1, Some(1_000_000))],
            cross: Vec::new(),
            segment_bytes: 1000,
            initial_window_segments: 4,
            min_rto: Duration::from_millis(200),
            delayed_ack: Duration::from_millis(100),
            poll_fallback: Duration::from_millis(100),
            overhead_bytes: 20,
            measure_from: Duration::ZERO,
            horizon: Duration::from_secs(600),
            medium: None,
        }
    }
}

/// Bytes a long-lived flow is given: more than any horizon can carry.
pub(crate) const LONG_LIVED_BYTES: u64 = 1 << 60;

impl LabScenario {
    /// Round-trip propagation delay of a flow without access delay.
    pub fn base_rtt(&self) -> Duration {
        self.forward.delay + self.reverse_link().delay
    }

    fn reverse_link(&self) -> &LinkParams {
        self.reverse.as_ref().unwrap_or(&self.forward)
    }

    /// Every flow of the scenario has a size (none is long-lived).
    pub fn all_flows_sized(&self) -> bool {
        self.flows.iter().all(|g| g.bytes.is_some())
    }

    /// The strategy and direction of each flow of [`to_emu`](Self::to_emu)'s
    /// scenario, in order.
    pub fn roles(&self, strategy: Strategy) -> Vec<FlowRole> {
        self.flows
            .iter()
            .flat_map(|g| {
                (0..g.count).map(move |_| FlowRole {
                    strategy: g.strategy.unwrap_or(strategy),
                    reverse: g.reverse,
                })
            })
            .collect()
    }

    /// The end-host configuration for `strategy`.
    fn config(&self, strategy: Strategy) -> Config {
        let base = Config {
            // Timestamps take 12 bytes of each segment's MSS.
            mss: self.segment_bytes.saturating_add(12),
            min_rto: self.min_rto,
            rto_variance_floor: self.min_rto,
            // ns-2's agents never give up on a handshake, and neither does
            // a lab host: one whose SYN-ACKs drown in a full reverse buffer
            // (paper 000's small ACK buffer, the gauntlet's slowest ACK
            // paths) keeps trying every `max_rto` until the run's horizon,
            // so the run measures the slowdown rather than a failed
            // connection, which would depend on where a drop happened to
            // fall rather than on the strategy.
            syn_retries: u32::MAX,
            initial_rto: Duration::from_secs(1).max(self.min_rto),
            send_buffer: 16 << 20,
            recv_buffer: 16 << 20,
            idle_timeout: None,
            time_wait: Duration::from_millis(1),
            nagle: false,
            // The lab's hosts trust each other, and the papers' (and
            // ns-2's) headers carry no nonce: its 6 to 8 bytes per segment
            // would move every figure the pages compare with them.
            ack_nonce: AckNonceMode::Off,
            // The emulator's timers fire exactly: a spreader there needs no
            // allowance for late wake-ups.
            ack_spreading_burst: Duration::ZERO,
            ..Config::default()
        };
        let mut base = base;
        base.congestion.initial_window =
            Some(u64::from(self.initial_window_segments) * u64::from(self.segment_bytes));
        let config = strategy.apply(&base, self.delayed_ack, self.poll_fallback);
        if self.socket_timers {
            config.with_late_timers(crate::sender::spread::DEFAULT_BURST)
        } else {
            config
        }
    }

    /// What carries a flow of `strategy`: ackwise's connections, with
    /// smoltcp at one end, or QUIC.
    fn transport(&self, strategy: Strategy, config: &Config) -> FlowTransport {
        if let Some(end) = strategy.options.smoltcp {
            return FlowTransport::Smoltcp(end);
        }
        #[cfg(feature = "quic")]
        return super::quic::transport(strategy, self, config);
        #[cfg(not(feature = "quic"))]
        {
            let _ = config;
            FlowTransport::Tcp
        }
    }

    /// The emulator scenario for `strategy` and `seed`.
    pub fn to_emu(&self, strategy: Strategy, seed: u64) -> Scenario {
        let ecn = self.forward.ecn() || self.reverse_link().ecn();
        let mut flows = Vec::new();
        for g in &self.flows {
            let mut config = self.config(g.strategy.unwrap_or(strategy));
            // A marking queue means ECN-capable end hosts (RFC 3168), as
            // in the papers' RED/ECN setups: senders answer marks on data,
            // and the flows' packets are sent ECN-capable below.
            config.ecn = ecn;
            if let Some(w) = g.recv_window_segments {
                // The receiver advertises this much; the buffer must
                // still hold a full segment.
                config.recv_buffer =
                    (w as usize * usize::from(self.segment_bytes)).max(usize::from(config.mss));
            }
            let transport = self.transport(g.strategy.unwrap_or(strategy), &config);
            for k in 0..g.count {
                let mut f = FlowParams::new(config.clone(), g.bytes.unwrap_or(LONG_LIVED_BYTES));
                f.transport = transport.clone();
                f.start = g.start + g.stagger * k;
                f.access_delay = g.access_delay_of(k);
                f.reverse = g.reverse;
                f.ecn_capable = ecn;
                flows.push(f);
            }
        }
        let mean_packet = u32::from(self.segment_bytes) + 40;
        // `+fq` replaces the bottleneck queues with per-flow round robin,
        // `+af-...` the reverse one with an ACK-filtering buffer.
        let bottleneck = |link: &LinkParams| {
            let mut link = link.clone();
            if strategy.options.fq {
                link.queue = QueueKind::RoundRobin;
            }
            link
        };
        let path_rtt = self.forward.delay + self.reverse_link().delay;
        let (forward, mut reverse) = (bottleneck(&self.forward), bottleneck(self.reverse_link()));
        if let Some((filter, service)) = strategy.options.net_ack.and_then(NetAck::filter) {
            let own = std::mem::replace(&mut reverse.queue, QueueKind::DropTail);
            reverse.queue = QueueKind::AckFilter {
                filter,
                service,
                rate_window: path_rtt,
                red_gate: matches!(own, QueueKind::Red { .. }).then(|| Box::new(own)),
            };
        }
        let mut scenario = match self.topology {
            TopologyKind::Dumbbell => {
                let spec = DumbbellSpec {
                    forward: forward.hop(mean_packet),
                    reverse: reverse.hop(mean_packet),
                    access_rate_bps: self.access_rate_bps,
                    access_queue: QueueSpec::drop_tail(1000),
                };
                Scenario::dumbbell(&spec, &flows)
            }
            TopologyKind::ParkingLot => Scenario::parking_lot(&forward.hop(mean_packet), &flows),
            TopologyKind::ParkingLotSharedLast => Scenario::parking_lot_with(
                &forward.hop(mean_packet),
                &flows,
                ParkingLotRoutes::SharedLast,
            ),
        };
        if !self.access_tick.is_zero() {
            let last_hops: Vec<usize> = scenario
                .flows
                .iter()
                .flat_map(|f| [f.forward_path.last(), f.reverse_path.last()])
                .flatten()
                .copied()
                .collect();
            for l in last_hops {
                scenario.links[l].jitter = Some(Jitter::tick(self.access_tick));
            }
        }
        scenario.client_reads_batches = self.sender_reads_batches;
        let (fwd, rev) = DUMBBELL_MIDDLE;
        if let (Some(m), TopologyKind::Dumbbell) = (self.medium, self.topology) {
            scenario.media.push(MediumSpec {
                links: vec![fwd, rev],
                per_frame_overhead: m.per_frame_overhead,
            });
        }
        for c in &self.cross {
            scenario.cross_traffic.push(CrossTrafficSpec {
                path: vec![if c.reverse { rev } else { fwd }],
                rate_bps: c.rate_bps,
                packet_bytes: c.packet_bytes,
                on: Period::Fixed(c.on),
                off: Period::Fixed(c.off),
                start: c.start,
            });
        }
        if strategy.options.net_ack == Some(NetAck::DelayControl)
            && self.topology == TopologyKind::Dumbbell
        {
            // The router before the forward bottleneck shapes the ACKs it
            // passes to the senders, i.e. at the input of their access
            // links (the last hop of each forward flow's reverse path).
            scenario.delay_control = Some(DelayControlSpec {
                forward_link: fwd,
                ack_links: scenario
                    .flows
                    .iter()
                    .zip(&flows)
                    .filter(|(_, f)| !f.reverse)
                    .filter_map(|(s, _)| s.reverse_path.last().copied())
                    .collect(),
                config: DelayControlConfig::paper_001(self.forward.rate_bps, mean_packet),
            });
        }
        scenario.overhead_bytes = self.overhead_bytes;
        scenario.horizon = self.horizon;
        scenario.measure_from = self.measure_from;
        scenario.seed = seed;
        scenario
    }

    /// Checks the parameters the way a user would want to hear about them:
    /// the error names the field.
    pub fn validate(&self) -> Result<(), LabError> {
        let bad = |field: &str, problem: &str| {
            Err(LabError::Field {
                field: field.to_string(),
                problem: problem.to_string(),
            })
        };
        for (name, link) in [
            ("bottleneck", Some(&self.forward)),
            ("reverse", self.reverse.as_ref()),
        ] {
            let Some(link) = link else { continue };
            if link.rate_bps == 0 {
                return bad(&format!("{name}.rate"), "must be positive");
            }
            if link.buffer_packets == 0 {
                return bad(
                    &format!("{name}.buffer_packets"),
                    "must be at least 1 packet",
                );
            }
            if let Err(problem) = link.hop(1000).queue.validate() {
                return bad(&format!("{name}.queue"), problem);
            }
            if let Err(problem) = link.loss.validate() {
                return bad(&format!("{name}.loss"), problem);
            }
            if let Some(Err(problem)) = link.jitter.map(|j| j.validate()) {
                return bad(&format!("{name}.reorder"), problem);
            }
        }
        if self.access_rate_bps == Some(0) {
            return bad("access_rate", "must be positive");
        }
        if self.flows.is_empty() || self.flows.iter().all(|g| g.count == 0) {
            return bad("flows", "at least one flow is needed");
        }
        for (i, g) in self.flows.iter().enumerate() {
            if g.bytes == Some(0) {
                return bad(&format!("flows[{i}].bytes"), "must be at least 1");
            }
            if g.recv_window_segments == Some(0) {
                return bad(
                    &format!("flows[{i}].recv_window_segments"),
                    "must be at least 1",
                );
            }
        }
        if !self.cross.is_empty() && self.topology != TopologyKind::Dumbbell {
            return bad("cross", "cross traffic needs the dumbbell topology");
        }
        if let Some(m) = self.medium {
            if self.topology != TopologyKind::Dumbbell {
                return bad("medium", "a shared medium needs the dumbbell topology");
            }
            if m.per_frame_overhead > Duration::from_secs(1) {
                return bad("medium.per_frame", "must be at most 1s");
            }
        }
        for (i, c) in self.cross.iter().enumerate() {
            if c.rate_bps == 0 || c.packet_bytes == 0 {
                return bad(
                    &format!("cross[{i}]"),
                    "rate and packet_bytes must be positive",
                );
            }
            if c.on.is_zero() || c.off.is_zero() {
                return bad(&format!("cross[{i}]"), "on and off must be positive");
            }
        }
        if self.segment_bytes < 64 {
            return bad("segment_bytes", "must be at least 64");
        }
        if self.initial_window_segments == 0 {
            return bad("initial_window_segments", "must be at least 1");
        }
        if self.delayed_ack > Duration::from_millis(500) {
            return bad("delayed_ack", "must be at most 500ms (RFC 1122)");
        }
        if self.poll_fallback.is_zero() || self.poll_fallback > Duration::from_secs(1) {
            return bad("poll_fallback", "must be positive and at most 1s");
        }
        if self.min_rto.is_zero() {
            return bad("min_rto", "must be positive");
        }
        if self.horizon.is_zero() {
            return bad("horizon", "must be positive");
        }
        if self.measure_from >= self.horizon {
            return bad("measure_from", "must be before the horizon");
        }
        // A flow that could not finish even alone on an idle bottleneck
        // within the horizon is a configuration mistake.
        for (i, g) in self.flows.iter().enumerate() {
            let Some(bytes) = g.bytes else { continue };
            let last_start = g.start + g.stagger * g.count.saturating_sub(1);
            let bits = bytes.saturating_mul(8);
            let serialise = Duration::from_secs_f64(bits as f64 / self.forward.rate_bps as f64);
            if last_start + serialise + self.base_rtt() > self.horizon {
                return bad(
                    &format!("flows[{i}]"),
                    "cannot finish within the horizon even alone on the bottleneck",
                );
            }
        }
        Ok(())
    }
}

/// The TOML form of a scenario (see `docs/scenarios.md`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Name used in reports.
    pub name: Option<String>,
    /// Seed of the run.
    pub seed: Option<u64>,
    /// Strategies compared.
    pub strategies: Option<Vec<String>>,
    /// `"dumbbell"` (default) or `"parking-lot"`.
    pub topology: Option<String>,
    /// Forward bottleneck.
    pub bottleneck: LinkFile,
    /// Reverse bottleneck, if it differs.
    pub reverse: Option<LinkFile>,
    /// Capacity of every access link, e.g. `"10mbit"`.
    pub access_rate: Option<String>,
    /// Packets reach the hosts only on a clock's ticks, e.g. `"1ms"`.
    pub access_tick: Option<String>,
    /// The data senders answer what arrives together once.
    pub sender_reads_batches: Option<bool>,
    /// Connections configured as the socket endpoint's (late timers).
    pub socket_timers: Option<bool>,
    /// Flow groups.
    pub flows: Vec<FlowFile>,
    /// On/off UDP sources.
    pub cross: Option<Vec<CrossFile>>,
    /// Payload bytes per segment.
    pub segment_bytes: Option<u16>,
    /// Initial window in segments.
    pub initial_window_segments: Option<u32>,
    /// Minimum RTO, e.g. `"200ms"`.
    pub min_rto: Option<String>,
    /// Delayed-ACK timer, e.g. `"100ms"`.
    pub delayed_ack: Option<String>,
    /// Polled receiver's fallback timer, e.g. `"1s"`.
    pub poll_fallback: Option<String>,
    /// Per-packet overhead on links, bytes.
    pub overhead_bytes: Option<u32>,
    /// Start of the measurement window, e.g. `"20s"`.
    pub measure_from: Option<String>,
    /// Simulated time limit, e.g. `"600s"`.
    pub horizon: Option<String>,
    /// A shared half-duplex medium in place of the middle link pair.
    pub medium: Option<MediumFile>,
}

/// The `[medium]` table of a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediumFile {
    /// `"shared"` (the only kind; default).
    pub kind: Option<String>,
    /// PHY rate of both directions, e.g. `"54mbit"`; replaces the
    /// bottleneck's (and reverse's) rate. Default: theirs.
    pub rate: Option<String>,
    /// Airtime overhead per frame, e.g. `"100us"`.
    pub per_frame: String,
}

/// A link in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    /// e.g. `"1.5mbit"`, `"64kbit"`, `"100mbit"`.
    pub rate: String,
    /// One-way delay, e.g. `"50ms"`.
    pub delay: String,
    /// Queue limit in packets.
    pub buffer_packets: usize,
    /// `"droptail"` (default), `"round-robin"` or `"red"`.
    pub queue: Option<String>,
    /// RED: average queue where early drops begin, packets (default 5).
    pub red_min_th: Option<f64>,
    /// RED: average queue where the probability reaches `red_max_p`,
    /// packets (default 15).
    pub red_max_th: Option<f64>,
    /// RED: averaging weight (default 0.002).
    pub red_w_q: Option<f64>,
    /// RED: drop probability at `red_max_th` (default 0.1).
    pub red_max_p: Option<f64>,
    /// RED: mark ECN-capable packets instead of dropping (default false).
    pub ecn: Option<bool>,
    /// Random loss on the wire: `"1%"`, `0.01`, `{ bernoulli = 0.01 }` or
    /// `{ gilbert_elliott = { mean = "1%", burst = 4 } }` (see
    /// `docs/scenarios.md`). Kept as a raw value so that a bad one is
    /// reported as one line naming the key.
    pub loss: Option<toml::Value>,
    /// Order-keeping delay jitter: each packet's extra propagation delay
    /// is uniform up to this, e.g. `"2ms"`.
    pub jitter: Option<String>,
    /// Reordering: `{ probability = 0.01, extra = "5ms" }`.
    pub reorder: Option<ReorderFile>,
    /// Timer granularity: packets arrive only on the ticks of a clock with
    /// this period, e.g. `"1ms"` (a real-time emulator's timers).
    pub tick: Option<String>,
}

/// The `reorder` table of a link in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderFile {
    /// Fraction of packets held back, a number or a percentage string.
    pub probability: toml::Value,
    /// How much longer a held-back packet propagates, e.g. `"5ms"`.
    pub extra: String,
}

/// A flow group in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    /// Number of identical flows (default 1).
    pub count: Option<u32>,
    /// Bytes per flow; absent for long-lived flows.
    pub bytes: Option<u64>,
    /// Start time of the first, e.g. `"0s"`.
    pub start: Option<String>,
    /// Added per further flow, e.g. `"100ms"`.
    pub stagger: Option<String>,
    /// One-way access-link delay.
    pub access_delay: Option<String>,
    /// The group's access delays spread evenly over
    /// `[access_delay, access_delay + access_delay_spread]`, e.g. `"1ms"`.
    pub access_delay_spread: Option<String>,
    /// Data flows right to left.
    pub reverse: Option<bool>,
    /// A strategy this group always uses.
    pub strategy: Option<String>,
    /// Receive window, segments.
    pub recv_window_segments: Option<u32>,
}

/// An on/off UDP source in a scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossFile {
    /// Rate while on, e.g. `"5mbit"`.
    pub rate: String,
    /// Datagram size on the link (default 1000).
    pub packet_bytes: Option<u32>,
    /// Length of on periods, e.g. `"5s"`.
    pub on: String,
    /// Length of off periods.
    pub off: String,
    /// Start of the first on period (default 0s).
    pub start: Option<String>,
    /// Sends over the reverse middle link (default false).
    pub reverse: Option<bool>,
}

fn field<T>(name: &str, r: Result<T, String>) -> Result<T, LabError> {
    r.map_err(|problem| LabError::Field {
        field: name.to_string(),
        problem,
    })
}

fn duration_or(name: &str, v: &Option<String>, default: Duration) -> Result<Duration, LabError> {
    match v {
        Some(s) => field(name, parse_duration(s)),
        None => Ok(default),
    }
}

impl LinkFile {
    fn to_params(&self, name: &str) -> Result<LinkParams, LabError> {
        let kind = self.queue.as_deref().unwrap_or("droptail");
        let red_keys = [
            self.red_min_th.is_some(),
            self.red_max_th.is_some(),
            self.red_w_q.is_some(),
            self.red_max_p.is_some(),
            self.ecn.is_some(),
        ];
        if kind != "red" && red_keys.into_iter().any(|k| k) {
            return field(
                &format!("{name}.queue"),
                Err("red_* and ecn keys need queue = \"red\"".to_string()),
            );
        }
        let queue = match kind {
            "droptail" => QueueKind::DropTail,
            "round-robin" => QueueKind::RoundRobin,
            "red" => QueueKind::Red {
                min_th_packets: self.red_min_th.unwrap_or(5.0),
                max_th_packets: self.red_max_th.unwrap_or(15.0),
                w_q: self.red_w_q.unwrap_or(0.002),
                max_p: self.red_max_p.unwrap_or(0.1),
                ecn: self.ecn.unwrap_or(false),
            },
            other => {
                return field(
                    &format!("{name}.queue"),
                    Err(format!(
                        "unknown queue `{other}` (droptail, round-robin, red)"
                    )),
                )
            }
        };
        let loss = match &self.loss {
            Some(v) => field(&format!("{name}.loss"), parse_loss(v))?,
            None => LossModel::None,
        };
        let max_extra = duration_or(&format!("{name}.jitter"), &self.jitter, Duration::ZERO)?;
        let reorder = self
            .reorder
            .as_ref()
            .map(|r| {
                Ok::<_, LabError>(Reorder {
                    probability: field(
                        &format!("{name}.reorder.probability"),
                        parse_probability(&r.probability),
                    )?,
                    extra: field(&format!("{name}.reorder.extra"), parse_duration(&r.extra))?,
                })
            })
            .transpose()?;
        let tick = duration_or(&format!("{name}.tick"), &self.tick, Duration::ZERO)?;
        let jitter =
            (!max_extra.is_zero() || reorder.is_some() || !tick.is_zero()).then_some(Jitter {
                max_extra,
                reorder,
                tick,
            });
        Ok(LinkParams {
            rate_bps: field(&format!("{name}.rate"), parse_rate(&self.rate))?,
            delay: field(&format!("{name}.delay"), parse_duration(&self.delay))?,
            buffer_packets: self.buffer_packets,
            queue,
            loss,
            jitter,
        })
    }
}

impl FlowFile {
    fn to_group(&self, i: usize) -> Result<FlowGroup, LabError> {
        let name = |key: &str| format!("flows[{i}].{key}");
        Ok(FlowGroup {
            count: self.count.unwrap_or(1),
            bytes: self.bytes,
            start: duration_or(&name("start"), &self.start, Duration::ZERO)?,
            stagger: duration_or(&name("stagger"), &self.stagger, Duration::ZERO)?,
            access_delay: duration_or(&name("access_delay"), &self.access_delay, Duration::ZERO)?,
            access_delay_spread: duration_or(
                &name("access_delay_spread"),
                &self.access_delay_spread,
                Duration::ZERO,
            )?,
            reverse: self.reverse.unwrap_or(false),
            strategy: self
                .strategy
                .as_deref()
                .map(str::parse::<Strategy>)
                .transpose()?,
            recv_window_segments: self.recv_window_segments,
        })
    }
}

impl CrossFile {
    fn to_group(&self, i: usize) -> Result<CrossGroup, LabError> {
        let name = |key: &str| format!("cross[{i}].{key}");
        Ok(CrossGroup {
            rate_bps: field(&name("rate"), parse_rate(&self.rate))?,
            packet_bytes: self.packet_bytes.unwrap_or(1000),
            on: field(&name("on"), parse_duration(&self.on))?,
            off: field(&name("off"), parse_duration(&self.off))?,
            start: duration_or(&name("start"), &self.start, Duration::ZERO)?,
            reverse: self.reverse.unwrap_or(false),
        })
    }
}

impl ScenarioFile {
    /// Parses TOML text.
    pub fn from_toml(text: &str) -> Result<ScenarioFile, LabError> {
        toml::from_str(text).map_err(|e| LabError::Toml(e.message().to_string()))
    }

    /// The scenario, with every value checked.
    pub fn to_scenario(&self) -> Result<LabScenario, LabError> {
        let d = LabScenario::default();
        let topology = match self.topology.as_deref().unwrap_or("dumbbell") {
            "dumbbell" => TopologyKind::Dumbbell,
            "parking-lot" => TopologyKind::ParkingLot,
            "parking-lot-shared-last" => TopologyKind::ParkingLotSharedLast,
            other => {
                return field(
                    "topology",
                    Err(format!(
                        "unknown topology `{other}` (dumbbell, parking-lot, \
                         parking-lot-shared-last)"
                    )),
                )
            }
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| f.to_group(i))
            .collect::<Result<Vec<_>, _>>()?;
        let cross = self
            .cross
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| c.to_group(i))
            .collect::<Result<Vec<_>, _>>()?;
        let mut forward = self.bottleneck.to_params("bottleneck")?;
        let mut reverse = self
            .reverse
            .as_ref()
            .map(|r| r.to_params("reverse"))
            .transpose()?;
        let medium = match &self.medium {
            None => None,
            Some(m) => {
                match m.kind.as_deref().unwrap_or("shared") {
                    "shared" => {}
                    other => {
                        return field(
                            "medium.kind",
                            Err(format!("unknown medium kind `{other}` (shared)")),
                        )
                    }
                }
                if let Some(rate) = &m.rate {
                    let bps = field("medium.rate", parse_rate(rate))?;
                    forward.rate_bps = bps;
                    if let Some(r) = reverse.as_mut() {
                        r.rate_bps = bps;
                    }
                }
                Some(SharedMedium {
                    per_frame_overhead: field("medium.per_frame", parse_duration(&m.per_frame))?,
                })
            }
        };
        let scenario = LabScenario {
            topology,
            forward,
            reverse,
            access_rate_bps: self
                .access_rate
                .as_deref()
                .map(|r| field("access_rate", parse_rate(r)))
                .transpose()?,
            access_tick: duration_or("access_tick", &self.access_tick, Duration::ZERO)?,
            sender_reads_batches: self.sender_reads_batches.unwrap_or(false),
            socket_timers: self.socket_timers.unwrap_or(false),
            flows,
            cross,
            segment_bytes: self.segment_bytes.unwrap_or(d.segment_bytes),
            initial_window_segments: self
                .initial_window_segments
                .unwrap_or(d.initial_window_segments),
            min_rto: duration_or("min_rto", &self.min_rto, d.min_rto)?,
            delayed_ack: duration_or("delayed_ack", &self.delayed_ack, d.delayed_ack)?,
            poll_fallback: duration_or("poll_fallback", &self.poll_fallback, d.poll_fallback)?,
            overhead_bytes: self.overhead_bytes.unwrap_or(d.overhead_bytes),
            measure_from: duration_or("measure_from", &self.measure_from, Duration::ZERO)?,
            horizon: duration_or("horizon", &self.horizon, d.horizon)?,
            medium,
        };
        scenario.validate()?;
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_hosts_spread_without_a_late_timer_allowance() {
        // The library default allows for millisecond timers; the
        // emulator's fire exactly, and an allowance would let a sender
        // that was window-limited past its release instant catch up.
        assert_eq!(
            Config::default().ack_spreading_burst,
            crate::sender::spread::DEFAULT_BURST
        );
        let c = LabScenario::default().config(Strategy::DEFAULT);
        assert!(c.ack_spreading);
        assert_eq!(c.ack_spreading_burst, Duration::ZERO);
    }

    const FULL: &str = r#"
        strategies = ["ae", "da"]
        access_rate = "10mbit"
        access_tick = "1100us"
        sender_reads_batches = true
        socket_timers = true
        measure_from = "20s"
        horizon = "50s"
        [bottleneck]
        rate = "10mbit"
        delay = "20ms"
        buffer_packets = 60
        queue = "red"
        red_min_th = 10
        red_max_th = 30
        ecn = true
        loss = "0.5%"
        jitter = "2ms"
        reorder = { probability = "1%", extra = "5ms" }
        tick = "1ms"
        [reverse]
        rate = "300kbit"
        delay = "20ms"
        buffer_packets = 10
        [[flows]]
        count = 2
        strategy = "ae"
        access_delay = "1ms"
        access_delay_spread = "2ms"
        [[flows]]
        bytes = 500000
        reverse = true
        recv_window_segments = 20
        [[cross]]
        rate = "5mbit"
        on = "5s"
        off = "5s"
    "#;

    #[test]
    fn every_key_reaches_the_emulator() {
        let s = ScenarioFile::from_toml(FULL)
            .unwrap()
            .to_scenario()
            .unwrap();
        assert!(!s.all_flows_sized());
        assert_eq!(s.measure_from, Duration::from_secs(20));
        let roles = s.roles(Strategy::DAL2);
        assert_eq!(roles.len(), 3);
        assert_eq!(roles[0].strategy, Strategy::AE);
        assert_eq!(roles[2].strategy, Strategy::DAL2);
        assert!(roles[2].reverse && !roles[0].reverse);
        let emu = s.to_emu(Strategy::DAL2, 3);
        assert_eq!(emu.seed, 3);
        assert_eq!(emu.measure_from, Duration::from_secs(20));
        assert_eq!(emu.flows.len(), 3);
        assert!(emu.flows.iter().all(|f| f.ecn_capable));
        assert!(emu.flows.iter().all(|f| f.client.ecn && f.server.ecn));
        assert_eq!(emu.flows[2].bytes, 500_000);
        // The access clock sits on each flow's last hop into each host,
        // and only there (the middle links keep their own settings).
        assert!(emu.client_reads_batches);
        for f in &emu.flows {
            for l in [f.forward_path[2], f.reverse_path[2]] {
                let tick = emu.links[l].jitter.map(|j| j.tick);
                assert_eq!(tick, Some(Duration::from_micros(1100)), "{l}");
            }
            let first = emu.links[f.forward_path[0]].jitter;
            assert_eq!(first, None, "first hops deliver to a router");
        }
        assert!(emu.flows[0].bytes > 1 << 50);
        assert_eq!(emu.flows[2].server.recv_buffer, 20 * 1000);
        // Configured as the socket endpoint configures its connections.
        assert!(emu.flows.iter().all(|f| {
            f.client.ack_spreading_burst == crate::sender::spread::DEFAULT_BURST
                && f.server.ack_spreading_burst == crate::sender::spread::DEFAULT_BURST
        }));
        // Access delays 1 ms and 3 ms: the first and second flow's access
        // links (four links per flow, after the two middle ones).
        assert_eq!(emu.links[2].delay, Duration::from_millis(1));
        assert_eq!(emu.links[6].delay, Duration::from_millis(3));
        assert_eq!(emu.cross_traffic.len(), 1);
        assert_eq!(emu.cross_traffic[0].path, vec![DUMBBELL_MIDDLE.0]);
        assert!(matches!(
            emu.links[DUMBBELL_MIDDLE.0].queue,
            QueueSpec::Red(RedParams {
                ecn: true,
                limit_packets: 60,
                ..
            })
        ));
        assert_eq!(emu.links[DUMBBELL_MIDDLE.1].rate_bps, 300_000);
        let fwd = &emu.links[DUMBBELL_MIDDLE.0];
        assert_eq!(fwd.loss, LossModel::Bernoulli { p: 0.005 });
        assert_eq!(
            fwd.jitter,
            Some(Jitter {
                max_extra: Duration::from_millis(2),
                reorder: Some(Reorder {
                    probability: 0.01,
                    extra: Duration::from_millis(5)
                }),
                tick: Duration::from_millis(1),
            })
        );
        // An explicit [reverse] has neither.
        let rev = &emu.links[DUMBBELL_MIDDLE.1];
        assert_eq!((rev.loss, rev.jitter), (LossModel::None, None));
        assert_eq!(emu.links[2].jitter, None, "access links are clean");
        // Access links run at the given rate.
        assert_eq!(emu.links[2].rate_bps, 10_000_000);
        emu.validate().unwrap();
    }

    const SHARED: &str = r#"
        [bottleneck]
        rate = "10mbit"
        delay = "5ms"
        buffer_packets = 50
        [medium]
        kind = "shared"
        rate = "54mbit"
        per_frame = "120us"
        [[flows]]
        count = 2
        bytes = 1000000
    "#;

    #[test]
    fn a_shared_medium_joins_the_middle_links() {
        let s = ScenarioFile::from_toml(SHARED)
            .unwrap()
            .to_scenario()
            .unwrap();
        assert_eq!(
            s.medium,
            Some(SharedMedium {
                per_frame_overhead: Duration::from_micros(120)
            })
        );
        let emu = s.to_emu(Strategy::DA, 1);
        assert_eq!(emu.media.len(), 1);
        assert_eq!(
            emu.media[0].links,
            vec![DUMBBELL_MIDDLE.0, DUMBBELL_MIDDLE.1]
        );
        assert_eq!(emu.media[0].per_frame_overhead, Duration::from_micros(120));
        // The medium's rate replaces both directions'.
        assert_eq!(emu.links[DUMBBELL_MIDDLE.0].rate_bps, 54_000_000);
        assert_eq!(emu.links[DUMBBELL_MIDDLE.1].rate_bps, 54_000_000);
        emu.validate().unwrap();
        // Without [medium], nothing is shared.
        let plain = SHARED.replace("[medium]", "[unused]");
        let plain =
            plain.split("[unused]").next().unwrap().to_string() + "[[flows]]\nbytes = 1000\n";
        let s = ScenarioFile::from_toml(&plain)
            .unwrap()
            .to_scenario()
            .unwrap();
        assert!(s.to_emu(Strategy::DA, 1).media.is_empty());

        for (from, to, expect) in [
            ("kind = \"shared\"", "kind = \"mesh\"", "medium.kind"),
            (
                "per_frame = \"120us\"",
                "per_frame = \"120\"",
                "medium.per_frame",
            ),
            (
                "per_frame = \"120us\"",
                "per_frame = \"2s\"",
                "medium.per_frame",
            ),
            ("rate = \"54mbit\"", "rate = \"0\"", "medium.rate"),
            (
                "[bottleneck]",
                "topology = \"parking-lot\"\n[bottleneck]",
                "medium",
            ),
        ] {
            let err = ScenarioFile::from_toml(&SHARED.replace(from, to))
                .and_then(|f| f.to_scenario())
                .unwrap_err()
                .to_string();
            assert!(err.contains(expect), "{to}: {err}");
        }
    }

    #[test]
    fn access_delays_spread_evenly() {
        let mut g = FlowGroup::new(5, Some(1000));
        g.access_delay = Duration::from_millis(2);
        assert_eq!(g.access_delay_of(3), Duration::from_millis(2));
        g.access_delay_spread = Duration::from_millis(4);
        let d: Vec<u128> = (0..5).map(|k| g.access_delay_of(k).as_millis()).collect();
        assert_eq!(d, vec![2, 3, 4, 5, 6]);
        g.count = 1;
        assert_eq!(g.access_delay_of(0), Duration::from_millis(2));
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases = [
            ("queue = \"red\"", "queue = \"fifo\"", "bottleneck.queue"),
            ("red_min_th = 10", "red_min_th = 40", "bottleneck.queue"),
            (
                "measure_from = \"20s\"",
                "measure_from = \"60s\"",
                "measure_from",
            ),
            (
                "access_rate = \"10mbit\"",
                "access_rate = \"0\"",
                "access_rate",
            ),
            ("strategy = \"ae\"", "strategy = \"9w\"", "9w"),
            (
                "recv_window_segments = 20",
                "recv_window_segments = 0",
                "flows[1]",
            ),
            ("on = \"5s\"", "on = \"5\"", "cross[0].on"),
            (
                "access_delay_spread = \"2ms\"",
                "access_delay_spread = \"x\"",
                "flows[0].access_delay_spread",
            ),
            ("loss = \"0.5%\"", "loss = \"5\"", "bottleneck.loss"),
            ("jitter = \"2ms\"", "jitter = \"2\"", "bottleneck.jitter"),
            ("tick = \"1ms\"", "tick = \"often\"", "bottleneck.tick"),
            (
                "access_tick = \"1100us\"",
                "access_tick = \"1\"",
                "access_tick",
            ),
            (
                "probability = \"1%\"",
                "probability = 2",
                "bottleneck.reorder.probability",
            ),
            (
                "extra = \"5ms\"",
                "extra = \"soon\"",
                "bottleneck.reorder.extra",
            ),
        ];
        for (from, to, expect) in cases {
            let text = FULL.replace(from, to);
            let err = ScenarioFile::from_toml(&text)
                .and_then(|f| f.to_scenario())
                .unwrap_err()
                .to_string();
            assert!(err.contains(expect), "{to}: {err}");
        }
        // RED keys on a drop-tail queue are a mistake, not ignored.
        let text = FULL.replace("queue = \"red\"", "queue = \"droptail\"");
        let err = ScenarioFile::from_toml(&text)
            .and_then(|f| f.to_scenario())
            .unwrap_err();
        assert!(err.to_string().contains("need queue"), "{err}");
    }
}
