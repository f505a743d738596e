//! ns-2, the simulator the papers used (paper 003 sec. 4.1, paper 004
//! sec. 4.2), as a reference for the emulator and the baseline TCP.
//!
//! [`Ns2Dumbbell`] describes N one-way SACK TCP flows over a dumbbell,
//! writes it as a Tcl script, runs Debian's `ns` (package `ns2`, 2.35) on
//! it in a private temporary directory and reads the packet trace back
//! into per-flow figures measured the way the emulator measures them
//! ([`Ns2Flow`]).
//!
//! ```no_run
//! use ackwise::lab::ns2::{Ns2Dumbbell, Ns2Sink};
//! use std::time::Duration;
//!
//! let run = Ns2Dumbbell::new(1, 1_500_000, Duration::from_millis(40), 19)
//!     .segments(1000)
//!     .sink(Ns2Sink::DelayedAck)
//!     .run()?;
//! println!("{:?}", run.flows[0].completion_time);
//! # Ok::<(), ackwise::lab::ns2::Ns2Error>(())
//! ```
//!
//! # ns-2 facts the setup relies on (checked with ns-2.35)
//!
//! - `packetSize_` is the payload; with `useHeaders_` (default on) 40
//!   bytes of TCP/IP header are added, so data is 1040 bytes on a link.
//!   ACKs are 40 bytes plus 8 per SACK block (at most 3 blocks).
//! - With `syn_` (default on) the one-way agent first sends a 40-byte SYN
//!   (sequence number 0) and data segments are numbered from 1; a lost SYN
//!   waits `rtxcur_init_` (3 s by default).
//! - `queue-limit n` on a DropTail link holds n packets counting the one
//!   being transmitted; the emulator's DropTail limit excludes it.
//! - Defaults that shape results: `window_` 20 packets (set large here),
//!   `windowInit_` 2, `minrto_` 0.2 s, `tcpTick_` 0.01 s (RTT samples and
//!   timers in 10 ms ticks), `maxburst_` 0 (no limit), `singledup_` 1
//!   (limited transmit), no byte counting (cwnd grows per ACK), DelAck
//!   `interval_` 100 ms.

mod paths;
mod process;
mod tcl;
pub mod trace;

#[cfg(test)]
mod tests;

pub use paths::{Ns2FlowDone, Ns2FlowSpec, Ns2Red};
pub use process::{find_ns, NS2_PROGRAM_ENV};
pub use trace::{EventKind, PacketType, TraceError, TraceEvent};

use crate::time::Duration;
use thiserror::Error;

/// Whether an `ns` binary is available (see [`find_ns`]).
pub fn ns2_available() -> bool {
    find_ns().is_some()
}

/// Why an ns-2 run produced no result.
#[derive(Debug, Error)]
pub enum Ns2Error {
    /// No `ns` binary on `PATH` (nor in `ACKWISE_NS2`).
    #[error("ns-2 is not installed: no `ns` on PATH (Debian/Ubuntu: apt-get install ns2)")]
    NotInstalled,
    /// A parameter cannot be expressed or makes no sense.
    #[error("ns-2 setup: {field} {problem}")]
    Invalid {
        /// the field
        field: &'static str,
        /// what is wrong
        problem: &'static str,
    },
    /// Creating, writing or reading a file failed.
    #[error("{context}: {source}")]
    Io {
        /// what was being done
        context: String,
        /// why it failed
        source: std::io::Error,
    },
    /// `ns` exited unsuccessfully.
    #[error("ns-2 failed ({status}): {message}")]
    Failed {
        /// exit status as text
        status: String,
        /// first line of its standard error (Tcl's error message)
        message: String,
    },
    /// `ns` ran longer than allowed and was killed.
    #[error("ns-2 did not finish within {after:?} and was stopped")]
    TimedOut {
        /// the limit
        after: std::time::Duration,
    },
    /// The trace has a line that does not parse.
    #[error("ns-2 trace: {0}")]
    Trace(#[from] TraceError),
    /// `ns` exited normally without printing what the script prints.
    #[error("ns-2 output: {0}")]
    Output(String),
}

/// The receiving agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Ns2Sink {
    /// `Agent/TCPSink/Sack1`: an ACK for every segment (the papers' AE).
    AckEvery,
    /// `Agent/TCPSink/Sack1/DelAck`: an ACK for every second segment, or
    /// when `interval_` has passed since the first unacknowledged one, and
    /// at once for out-of-order segments.
    DelayedAck,
}

impl Ns2Sink {
    /// Both sinks, AE first.
    pub const ALL: [Ns2Sink; 2] = [Ns2Sink::AckEvery, Ns2Sink::DelayedAck];

    /// Short name for tables: `ae` or `delack`.
    pub fn name(self) -> &'static str {
        match self {
            Ns2Sink::AckEvery => "ae",
            Ns2Sink::DelayedAck => "delack",
        }
    }
}

/// N one-way `Agent/TCP/Sack1` flows over a dumbbell: flow i's sender and
/// receiver each hang off a router by their own access link; all flows
/// share the router-to-router bottleneck. Flow i starts at
/// `i * start_stagger`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ns2Dumbbell {
    /// Number of flows.
    pub flows: usize,
    /// Bottleneck capacity, both directions.
    pub bottleneck_rate_bps: u64,
    /// Bottleneck one-way propagation delay.
    pub bottleneck_delay: Duration,
    /// ns-2 `queue-limit` of the bottleneck in both directions, packets,
    /// counting the one in transmission.
    pub queue_limit_packets: usize,
    /// Access link capacity.
    pub access_rate_bps: u64,
    /// Access link one-way propagation delay (each side).
    pub access_delay: Duration,
    /// ns-2 `queue-limit` of every access link.
    pub access_queue_limit_packets: usize,
    /// Data segments per flow.
    pub segments: u64,
    /// Payload per segment (`packetSize_`), bytes.
    pub payload_bytes: u32,
    /// Start time offset between consecutive flows.
    pub start_stagger: Duration,
    /// Receiving agent.
    pub sink: Ns2Sink,
    /// Delayed-ACK timer (`interval_`), for [`Ns2Sink::DelayedAck`].
    pub delack_interval: Duration,
    /// `windowInit_`, segments.
    pub initial_window_segments: u32,
    /// `minrto_`.
    pub min_rto: Duration,
    /// `rtxcur_init_`: the RTO before the first RTT sample.
    pub initial_rto: Duration,
    /// `tcpTick_`: ns-2's timer and RTT-sample granularity.
    pub tcp_tick: Duration,
    /// `increase_num_`: segments added to cwnd per window's worth of ACKs
    /// in congestion avoidance (each ACK adds this over cwnd).
    pub ca_increase_segments: f64,
    /// Simulated time at which the run stops, finished or not.
    pub horizon: Duration,
    /// Wall-clock limit for the `ns` process.
    pub wall_timeout: std::time::Duration,
    /// Per-flow start, size, access delay and sink for
    /// [`run_untraced`](Self::run_untraced); empty for [`run`](Self::run).
    pub per_flow: Vec<Ns2FlowSpec>,
    /// Rate of the bottleneck's ACK direction when it differs from the
    /// data direction's (`run_untraced` only).
    pub reverse_rate_bps: Option<u64>,
    /// RED instead of DropTail on the data direction (`run_untraced`
    /// only).
    pub red: Option<Ns2Red>,
    /// Bernoulli loss probability per packet on the data direction, by an
    /// `ErrorModel` after the queue (`run_untraced` only).
    pub loss_rate: f64,
}

impl Ns2Dumbbell {
    /// `flows` flows over a bottleneck of `rate_bps` and `delay` each way
    /// with a DropTail `queue-limit` of `queue_limit_packets`; everything
    /// else at ns-2's defaults or the papers' values: 100 Mbit/s access
    /// links without delay, 1000 segments of 1000 bytes, no stagger, ACK
    /// every segment, 100 ms delayed-ACK interval, initial window 2,
    /// 200 ms minimum RTO, 3 s initial RTO, 10 ms tick, 600 s horizon.
    pub fn new(
        flows: usize,
        rate_bps: u64,
        delay: Duration,
        queue_limit_packets: usize,
    ) -> Ns2Dumbbell {
        Ns2Dumbbell {
            flows,
            bottleneck_rate_bps: rate_bps,
            bottleneck_delay: delay,
            queue_limit_packets,
            access_rate_bps: 100_000_000,
            access_delay: Duration::ZERO,
            access_queue_limit_packets: 1000,
            segments: 1000,
            payload_bytes: 1000,
            start_stagger: Duration::ZERO,
            sink: Ns2Sink::AckEvery,
            delack_interval: Duration::from_millis(100),
            initial_window_segments: 2,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(3),
            tcp_tick: Duration::from_millis(10),
            ca_increase_segments: 1.0,
            horizon: Duration::from_secs(600),
            wall_timeout: std::time::Duration::from_secs(120),
            per_flow: Vec::new(),
            reverse_rate_bps: None,
            red: None,
            loss_rate: 0.0,
        }
    }

    /// Sets the data segments per flow.
    pub fn segments(mut self, segments: u64) -> Self {
        self.segments = segments;
        self
    }

    /// Sets the receiving agent.
    pub fn sink(mut self, sink: Ns2Sink) -> Self {
        self.sink = sink;
        self
    }

    /// Sets the access link delay (each side).
    pub fn access_delay(mut self, delay: Duration) -> Self {
        self.access_delay = delay;
        self
    }

    /// Sets the start offset between consecutive flows.
    pub fn start_stagger(mut self, stagger: Duration) -> Self {
        self.start_stagger = stagger;
        self
    }

    /// Checks what the script generator and ns-2 cannot handle.
    pub fn validate(&self) -> Result<(), Ns2Error> {
        let bad = |field, problem| Err(Ns2Error::Invalid { field, problem });
        if self.flows == 0 || self.flows > 10_000 {
            return bad("flows", "must be between 1 and 10000");
        }
        if self.bottleneck_rate_bps == 0 || self.access_rate_bps == 0 {
            return bad("rate_bps", "must be positive");
        }
        if self.queue_limit_packets == 0 || self.access_queue_limit_packets == 0 {
            return bad("queue_limit_packets", "must be at least 1");
        }
        // ns-2 keeps sequence numbers in a C int.
        if self.segments == 0 || self.segments > (1 << 30) {
            return bad("segments", "must be between 1 and 2^30");
        }
        if self.payload_bytes == 0 || self.payload_bytes > 65_000 {
            return bad("payload_bytes", "must be between 1 and 65000");
        }
        if self.initial_window_segments == 0 {
            return bad("initial_window_segments", "must be at least 1");
        }
        if self.min_rto.is_zero() || self.initial_rto.is_zero() || self.tcp_tick.is_zero() {
            return bad("min_rto, initial_rto and tcp_tick", "must be positive");
        }
        if !(self.ca_increase_segments > 0.0 && self.ca_increase_segments <= 100.0) {
            return bad("ca_increase_segments", "must be in (0, 100]");
        }
        if self.horizon.is_zero() {
            return bad("horizon", "must be positive");
        }
        Ok(())
    }

    /// The traced run models none of the untraced run's extras.
    fn check_traced(&self) -> Result<(), Ns2Error> {
        if !self.per_flow.is_empty()
            || self.reverse_rate_bps.is_some()
            || self.red.is_some()
            || self.loss_rate != 0.0
        {
            return Err(Ns2Error::Invalid {
                field: "per_flow, reverse_rate_bps, red and loss_rate",
                problem: "apply to run_untraced only",
            });
        }
        Ok(())
    }

    /// The Tcl script [`run`](Self::run) gives ns-2, for reading or for
    /// running by hand (it writes `trace.tr` in the current directory).
    pub fn script(&self) -> String {
        tcl::dumbbell(self)
    }

    /// Runs the dumbbell in ns-2 and measures every flow from the trace.
    pub fn run(&self) -> Result<Ns2Result, Ns2Error> {
        self.validate()?;
        self.check_traced()?;
        let dir = process::TempDir::new()?;
        let finished = process::run_script(&dir, &tcl::dumbbell(self), self.wall_timeout)?;
        let path = dir.path().join(tcl::TRACE_FILE);
        let file = std::fs::File::open(&path).map_err(|source| Ns2Error::Io {
            context: "opening the ns-2 trace".into(),
            source,
        })?;
        let mut result = analyse(std::io::BufReader::new(file), self)?;
        read_agent_counters(&finished.stdout, &mut result.flows)?;
        result.wall = finished.wall;
        Ok(result)
    }

    /// Runs flow 0 alone over one link pair with the bottleneck's
    /// parameters (no access links) and no trace, and reports how many data
    /// packets it sent by the horizon and how long ns-2 took: the
    /// reference for the emulator's speed.
    pub fn run_bench(&self) -> Result<Ns2Bench, Ns2Error> {
        self.validate()?;
        let dir = process::TempDir::new()?;
        let finished = process::run_script(&dir, &tcl::bench(self), self.wall_timeout)?;
        let data_packets = finished
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(tcl::BENCH_LINE))
            .and_then(|rest| rest.trim().parse::<u64>().ok())
            .ok_or_else(|| Ns2Error::Output(format!("no `{}` line", tcl::BENCH_LINE)))?;
        Ok(Ns2Bench {
            data_packets,
            wall: finished.wall,
        })
    }
}

/// What one ns-2 flow did, measured from the trace as the emulator
/// measures its flows.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Ns2Flow {
    /// When the sender emitted its first data segment.
    pub first_data_at: Option<Duration>,
    /// When the ACK covering the last segment reached the sender.
    pub last_ack_at: Option<Duration>,
    /// `last_ack_at - first_data_at` (paper 004 sec. 4.3).
    pub completion_time: Option<Duration>,
    /// Payload bits over completion time.
    pub goodput_bps: Option<f64>,
    /// Data segments the sender emitted, retransmissions included (the SYN
    /// is not counted).
    pub data_packets: u64,
    /// Their bytes on the link.
    pub data_bytes: u64,
    /// ACKs the sink emitted (the SYN's ACK included).
    pub ack_packets: u64,
    /// Their bytes on the link.
    pub ack_bytes: u64,
    /// Data segments sent more than once, counted per extra copy.
    pub retransmissions: u64,
    /// This flow's data segments dropped anywhere.
    pub drops: u64,
    /// The sender's own `ndatapack_` (SYN included) at the horizon.
    pub agent_data_packets: u64,
    /// The sender's own `nrexmitpack_` at the horizon.
    pub agent_retransmissions: u64,
}

/// What a dumbbell run measured.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Ns2Result {
    /// Per flow, in order.
    pub flows: Vec<Ns2Flow>,
    /// Packets dropped at the bottleneck's data direction.
    pub bottleneck_drops: u64,
    /// Packets dropped at the bottleneck's ACK direction.
    pub reverse_drops: u64,
    /// Trace lines read.
    pub trace_events: u64,
    /// Wall time of the `ns` process.
    #[serde(skip)]
    pub wall: std::time::Duration,
}

/// What the speed benchmark measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns2Bench {
    /// Data packets the sender emitted (ns-2 `ndatapack_`).
    pub data_packets: u64,
    /// Wall time of the `ns` process, startup included.
    pub wall: std::time::Duration,
}

impl Ns2Bench {
    /// Simulated data packets per wall second.
    pub fn packets_per_second(&self) -> f64 {
        self.data_packets as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Per-flow tallies while reading a trace.
#[derive(Default)]
struct Tally {
    flow: Ns2Flow,
    /// Sequence numbers already sent once (index = seqno).
    seen: Vec<bool>,
}

/// The flow whose sender (`offset` 0) or receiver (`offset` 1) is `node`.
fn flow_of(node: u32, offset: u32, flows: usize) -> Option<usize> {
    let rel = node.checked_sub(tcl::sender_node(0) + offset)?;
    let i = usize::try_from(rel / 2).ok()?;
    (rel % 2 == 0 && i < flows).then_some(i)
}

/// Reads a trace of the script [`tcl::dumbbell`] generates for `d`.
pub(crate) fn analyse<R: std::io::BufRead>(
    reader: R,
    d: &Ns2Dumbbell,
) -> Result<Ns2Result, Ns2Error> {
    let segments = usize::try_from(d.segments).unwrap_or(usize::MAX);
    let mut tallies: Vec<Tally> = (0..d.flows)
        .map(|_| Tally {
            flow: Ns2Flow::default(),
            seen: vec![false; segments.saturating_add(1)],
        })
        .collect();
    let mut result = Ns2Result::default();
    trace::for_each_event(reader, |e| -> Result<(), Ns2Error> {
        result.trace_events += 1;
        match (e.kind, e.packet) {
            (EventKind::Enqueue, PacketType::Tcp) if e.seqno >= 1 => {
                if let Some(i) = flow_of(e.from_node, 0, d.flows) {
                    let t = &mut tallies[i];
                    t.flow.first_data_at.get_or_insert(e.at);
                    t.flow.data_packets += 1;
                    t.flow.data_bytes += u64::from(e.size_bytes);
                    let slot = usize::try_from(e.seqno)
                        .ok()
                        .and_then(|s| t.seen.get_mut(s));
                    match slot {
                        Some(seen) if *seen => t.flow.retransmissions += 1,
                        Some(seen) => *seen = true,
                        // Beyond the transfer: cannot happen with a sane
                        // ns-2, and is not a retransmission either.
                        None => {}
                    }
                }
            }
            (EventKind::Enqueue, PacketType::Ack) => {
                if let Some(i) = flow_of(e.from_node, 1, d.flows) {
                    tallies[i].flow.ack_packets += 1;
                    tallies[i].flow.ack_bytes += u64::from(e.size_bytes);
                }
            }
            (EventKind::Receive, PacketType::Ack) => {
                if let Some(i) = flow_of(e.to_node, 0, d.flows) {
                    let f = &mut tallies[i].flow;
                    if f.last_ack_at.is_none()
                        && e.seqno >= i64::try_from(d.segments).unwrap_or(i64::MAX)
                    {
                        f.last_ack_at = Some(e.at);
                    }
                }
            }
            (EventKind::Drop, _) => {
                if (e.from_node, e.to_node) == (tcl::LEFT_ROUTER, tcl::RIGHT_ROUTER) {
                    result.bottleneck_drops += 1;
                } else if (e.from_node, e.to_node) == (tcl::RIGHT_ROUTER, tcl::LEFT_ROUTER) {
                    result.reverse_drops += 1;
                }
                if e.packet == PacketType::Tcp && e.seqno >= 1 {
                    if let Some(i) = flow_of(e.src_node, 0, d.flows) {
                        tallies[i].flow.drops += 1;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    let bits = d.segments as f64 * f64::from(d.payload_bytes) * 8.0;
    result.flows = tallies
        .into_iter()
        .map(|t| {
            let mut f = t.flow;
            if let (Some(first), Some(last)) = (f.first_data_at, f.last_ack_at) {
                let ct = last.saturating_sub(first);
                f.completion_time = Some(ct);
                f.goodput_bps = (!ct.is_zero()).then(|| bits / ct.as_secs_f64());
            }
            f
        })
        .collect();
    Ok(result)
}

/// Fills the agents' own counters from the script's summary lines.
fn read_agent_counters(stdout: &str, flows: &mut [Ns2Flow]) -> Result<(), Ns2Error> {
    let mut filled = 0;
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix(tcl::FLOW_LINE) else {
            continue;
        };
        // Flow index, ndatapack_, nrexmitpack_; the last field (ack_) may
        // be -1 and is only there for people reading the output.
        let v: Vec<u64> = rest
            .split_ascii_whitespace()
            .take(3)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| Ns2Error::Output(format!("bad summary line `{line}`")))?;
        let [i, data, rexmit] = v[..] else {
            return Err(Ns2Error::Output(format!("bad summary line `{line}`")));
        };
        let f = usize::try_from(i)
            .ok()
            .and_then(|i| flows.get_mut(i))
            .ok_or_else(|| Ns2Error::Output(format!("summary for unknown flow `{line}`")))?;
        f.agent_data_packets = data;
        f.agent_retransmissions = rexmit;
        filled += 1;
    }
    if filled != flows.len() {
        return Err(Ns2Error::Output(format!(
            "{filled} of {} per-flow summary lines",
            flows.len()
        )));
    }
    Ok(())
}
