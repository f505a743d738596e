//! Scenarios as plain data: links, flows with their static routes, cross
//! traffic, and what to measure. Builders for the papers' topologies live
//! in the `topology` module; anything can also be assembled by hand.

use super::jitter::Jitter;
use super::loss::LossModel;
use super::medium::MediumSpec;
use super::queue::QueueSpec;
use super::EmuError;
use crate::ack_path::DelayControlConfig;
use crate::connection::Config;
use crate::time::Duration;
use std::path::PathBuf;

/// Index of a link in [`Scenario::links`].
pub type LinkId = usize;

/// A simplex link: a queue at its input, then serialisation at `rate_bps`,
/// then `delay` of propagation.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// Name for reports.
    pub name: String,
    /// Capacity, bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queueing discipline at the input.
    pub queue: QueueSpec,
    /// Random loss on the wire, after serialisation (default none).
    pub loss: LossModel,
    /// Random extra propagation delay and reordering (default none).
    pub jitter: Option<Jitter>,
}

/// One TCP transfer: a client that sends `bytes` and a server that reads
/// them, over static routes.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Name for reports.
    pub name: String,
    /// Configuration of the sending end.
    pub client: Config,
    /// Configuration of the receiving end.
    pub server: Config,
    /// Payload bytes to transfer (at least 1).
    pub bytes: u64,
    /// When the client opens the connection, from the start of the run.
    pub start: Duration,
    /// Links from client to server, in order.
    pub forward_path: Vec<LinkId>,
    /// Links from server to client, in order.
    pub reverse_path: Vec<LinkId>,
    /// Packets carry ECT in their IP header, so RED may mark them. The
    /// connection itself does not react to marks yet; marks are counted.
    pub ecn_capable: bool,
    /// Which transport carries the transfer.
    pub transport: FlowTransport,
}

/// The transport a flow runs between its client and server.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FlowTransport {
    /// ackwise's TCP-style [`Connection`](crate::connection::Connection)s
    /// configured by [`FlowSpec::client`] and [`FlowSpec::server`].
    #[default]
    Tcp,
    /// quinn-proto endpoints (feature `quic`); the flow's TCP configs
    /// are unused. Packets on links are QUIC datagrams plus the 8-byte
    /// UDP header plus [`Scenario::overhead_bytes`] (the IP header). They
    /// are not written to pcap captures, which frame TCP only.
    #[cfg(feature = "quic")]
    Quic(Box<crate::quic::QuicFlowConfig>),
    /// One end is smoltcp's TCP (see [`SmoltcpEnd`](super::SmoltcpEnd)),
    /// the other an ackwise connection configured by the flow's client or
    /// server config as usual. Packets are TCP segments like `Tcp`'s.
    Smoltcp(super::SmoltcpEnd),
}

/// How long an on or off period lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Period {
    /// Always this long.
    Fixed(Duration),
    /// Exponentially distributed with this mean, drawn from the cross
    /// source's own RNG (seeded from the run's seed).
    Exponential {
        /// mean period
        mean: Duration,
    },
}

/// An on/off constant-rate UDP source (paper 004 sec. 4.2, TCP-UDP
/// configuration). It has no connection and only occupies capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossTrafficSpec {
    /// Links the datagrams traverse.
    pub path: Vec<LinkId>,
    /// Sending rate while on, bits per second of on-link size.
    pub rate_bps: u64,
    /// On-link size of each datagram, bytes.
    pub packet_bytes: u32,
    /// Length of on periods.
    pub on: Period,
    /// Length of off periods.
    pub off: Period,
    /// When the first on period starts.
    pub start: Duration,
}

/// Write one link's packets to a pcap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureSpec {
    /// The captured link. TCP packets are recorded as they start
    /// transmission, framed as IPv4 between the flow's host addresses
    /// (10.0.x.y, see `pcap::host_address`); cross-traffic datagrams carry
    /// no bytes and are not recorded.
    pub link: LinkId,
    /// Output file.
    pub path: PathBuf,
}

/// A complete experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The simplex links.
    pub links: Vec<LinkSpec>,
    /// The TCP flows.
    pub flows: Vec<FlowSpec>,
    /// Cross-traffic sources.
    pub cross_traffic: Vec<CrossTrafficSpec>,
    /// Bytes added to each segment's length on links (20 = IPv4 header).
    pub overhead_bytes: u32,
    /// The run stops here even if flows are unfinished.
    pub horizon: Duration,
    /// Seed of the run: every random draw is a function of it and of what
    /// is drawn for (the packet, the link, the flow).
    pub seed: u64,
    /// Start of the measurement window: link counters, per-flow packet
    /// counters and throughput cover `[measure_from, end]`, so that a
    /// long-lived run can leave out its start-up (paper 003 sec. 4.3
    /// discards the first 40% of each simulation). Zero measures all.
    pub measure_from: Duration,
    /// Sampling period of the time series, if wanted.
    pub sample_interval: Option<Duration>,
    /// Links whose queue length is sampled.
    pub sampled_links: Vec<LinkId>,
    /// pcap captures.
    pub captures: Vec<CaptureSpec>,
    /// ACK delay control (paper 001), if installed.
    pub delay_control: Option<DelayControlSpec>,
    /// Groups of links sharing one half-duplex transmitter.
    pub media: Vec<MediumSpec>,
    /// Each flow's client (the end that sends the data) reads the packets
    /// that reach it at the same instant (from a link with a `tick`) as
    /// one batch and answers once, after the last, as a socket endpoint
    /// answers a batch of datagrams; its peer still answers each packet.
    /// False: every end answers each packet as it arrives.
    pub client_reads_batches: bool,
}

/// Where ACK delay control (paper 001) sits: one shaper, shared by the
/// input of every link in `ack_links`, watching the queue of
/// `forward_link`. Pure ACKs it holds back are queued at their link when
/// released (a middlebox hook on that link does not see them again).
#[derive(Debug, Clone, PartialEq)]
pub struct DelayControlSpec {
    /// The congested forward link whose queue decides the leak rate.
    pub forward_link: LinkId,
    /// Links whose arriving pure ACKs pass the shaper (the router's
    /// links back towards the senders).
    pub ack_links: Vec<LinkId>,
    /// Threshold, fraction and normal spacing.
    pub config: DelayControlConfig,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            links: Vec::new(),
            flows: Vec::new(),
            cross_traffic: Vec::new(),
            overhead_bytes: 20,
            horizon: Duration::from_secs(600),
            seed: 0,
            measure_from: Duration::ZERO,
            sample_interval: None,
            sampled_links: Vec::new(),
            captures: Vec::new(),
            delay_control: None,
            media: Vec::new(),
            client_reads_batches: false,
        }
    }
}

impl Scenario {
    /// Checks every parameter and reference; the error names the first
    /// problem found.
    pub fn validate(&self) -> Result<(), EmuError> {
        for (i, l) in self.links.iter().enumerate() {
            let bad = |problem| Err(EmuError::InvalidLink { link: i, problem });
            if l.rate_bps == 0 {
                return bad("rate_bps must be positive");
            }
            if let Err(problem) = l.queue.validate() {
                return bad(problem);
            }
            if let Err(problem) = l.loss.validate() {
                return bad(problem);
            }
            if let Some(Err(problem)) = l.jitter.map(|j| j.validate()) {
                return bad(problem);
            }
        }
        let n_links = self.links.len();
        let path_ok =
            |p: &[LinkId]| !p.is_empty() && p.len() < 1000 && p.iter().all(|&l| l < n_links);
        if self.flows.len() + self.cross_traffic.len() >= (1 << 30) {
            return Err(EmuError::InvalidScenario("too many flows"));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let bad = |problem| Err(EmuError::InvalidFlow { flow: i, problem });
            if f.bytes == 0 {
                return bad("bytes must be at least 1");
            }
            if !path_ok(&f.forward_path) || !path_ok(&f.reverse_path) {
                return bad("path is empty, too long or names a missing link");
            }
            for c in [&f.client, &f.server] {
                c.validate()
                    .map_err(|source| EmuError::InvalidConfig { flow: i, source })?;
            }
        }
        if let Some(dc) = &self.delay_control {
            if !dc
                .ack_links
                .iter()
                .chain([&dc.forward_link])
                .all(|&l| l < n_links)
            {
                return Err(EmuError::InvalidScenario(
                    "delay control names a missing link",
                ));
            }
            dc.config.validate().map_err(EmuError::InvalidScenario)?;
        }
        for (i, c) in self.cross_traffic.iter().enumerate() {
            let bad = |problem| {
                Err(EmuError::InvalidCross {
                    source_index: i,
                    problem,
                })
            };
            if !path_ok(&c.path) {
                return bad("path is empty, too long or names a missing link");
            }
            if c.rate_bps == 0 || c.packet_bytes == 0 {
                return bad("rate_bps and packet_bytes must be positive");
            }
            for p in [c.on, c.off] {
                let d = match p {
                    Period::Fixed(d) => d,
                    Period::Exponential { mean } => mean,
                };
                if d.is_zero() {
                    return bad("on and off periods must be positive");
                }
            }
        }
        let mut in_medium = vec![false; n_links];
        for m in &self.media {
            if m.links.is_empty() {
                return Err(EmuError::InvalidScenario(
                    "a medium needs at least one link",
                ));
            }
            for &l in &m.links {
                if l >= n_links {
                    return Err(EmuError::InvalidScenario("medium names a missing link"));
                }
                if std::mem::replace(&mut in_medium[l], true) {
                    return Err(EmuError::InvalidScenario(
                        "a link belongs to at most one medium",
                    ));
                }
            }
        }
        if self.horizon.is_zero() {
            return Err(EmuError::InvalidScenario("horizon must be positive"));
        }
        if self.measure_from >= self.horizon {
            return Err(EmuError::InvalidScenario(
                "measure_from must be before the horizon",
            ));
        }
        if self.sample_interval.is_some_and(|d| d.is_zero()) {
            return Err(EmuError::InvalidScenario(
                "sample_interval must be positive",
            ));
        }
        if self.sampled_links.iter().any(|&l| l >= n_links) {
            return Err(EmuError::InvalidScenario("sampled link does not exist"));
        }
        if self.captures.iter().any(|c| c.link >= n_links) {
            return Err(EmuError::InvalidScenario("captured link does not exist"));
        }
        Ok(())
    }
}
