//! The cross-check: the same dumbbell experiments in ns-2 (the papers'
//! simulator) and in the ackwise emulator with the baseline TCP, compared
//! metric by metric.
//!
//! Scenarios follow paper 003 sec. 4 and paper 004 sec. 4.2: 100 ms
//! round-trip propagation (5 ms access links on each side, 40 ms
//! bottleneck each way), 1000-byte segments, DropTail buffers of about one
//! bandwidth-delay product, 1000-segment transfers, each run once with an
//! ACK-every-segment receiver and once with a delayed-ACK receiver.
//!
//! The emulator side is configured to match ns-2 wherever the transport
//! allows it (see [`CrossScenario::emulator`]); what cannot match is
//! explained in `docs/validation.md`. Completion time (mean over flows)
//! and aggregate goodput must agree within [`TOLERANCE`]; the other
//! figures are reported for information.

use super::ns2::{Ns2Dumbbell, Ns2Result, Ns2Sink};
use super::LabError;
use crate::connection::{AckPolicyConfig, Config, CongestionConfig};
use crate::emu::{
    self, DumbbellSpec, FlowParams, HopSpec, LossModel, QueueSpec, RunResult, Scenario,
};
use crate::time::Duration;
use serde::Serialize;
use std::fmt::Write;

/// Largest relative difference allowed on the checked metrics.
pub const TOLERANCE: f64 = 0.10;

/// Payload per segment in every scenario, bytes (the papers' 1000).
pub const PAYLOAD_BYTES: u32 = 1000;

/// One experiment of the cross-check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossScenario {
    /// Short stable name.
    pub name: &'static str,
    /// One line for reports.
    pub description: &'static str,
    /// Number of flows.
    pub flows: usize,
    /// Bottleneck capacity, both directions.
    pub bottleneck_rate_bps: u64,
    /// Bottleneck one-way propagation delay.
    pub bottleneck_delay: Duration,
    /// Access link one-way propagation delay, each side.
    pub access_delay: Duration,
    /// Access link capacity.
    pub access_rate_bps: u64,
    /// Bottleneck buffer in packets, counting the one in transmission
    /// (ns-2's `queue-limit`).
    pub buffer_packets: usize,
    /// Data segments per flow.
    pub segments: u64,
    /// Start offset between consecutive flows.
    pub start_stagger: Duration,
}

/// The four setups: (a) one flow at 1.5 Mbit/s with 19 packets of buffer
/// (paper 003 figure 2), (b) the same at 10 Mbit/s with 125, (c) two
/// staggered flows at 1 Mbit/s with 13 (paper 003 figure 5), (d) eight
/// staggered flows at 10 Mbit/s with 125.
pub fn scenarios() -> Vec<CrossScenario> {
    let base = CrossScenario {
        name: "",
        description: "",
        flows: 1,
        bottleneck_rate_bps: 1_500_000,
        bottleneck_delay: Duration::from_millis(40),
        access_delay: Duration::from_millis(5),
        access_rate_bps: 100_000_000,
        buffer_packets: 19,
        segments: 1000,
        start_stagger: Duration::from_millis(100),
    };
    vec![
        CrossScenario {
            name: "a",
            description: "1 flow, 1.5 Mbit/s, 100 ms RTT, 19 pkt buffer",
            ..base.clone()
        },
        CrossScenario {
            name: "b",
            description: "1 flow, 10 Mbit/s, 100 ms RTT, 125 pkt buffer",
            bottleneck_rate_bps: 10_000_000,
            buffer_packets: 125,
            ..base.clone()
        },
        CrossScenario {
            name: "c",
            description: "2 flows 100 ms apart, 1 Mbit/s, 100 ms RTT, 13 pkt buffer",
            flows: 2,
            bottleneck_rate_bps: 1_000_000,
            buffer_packets: 13,
            ..base.clone()
        },
        CrossScenario {
            name: "d",
            description: "8 flows 100 ms apart, 10 Mbit/s, 100 ms RTT, 125 pkt buffer",
            flows: 8,
            bottleneck_rate_bps: 10_000_000,
            buffer_packets: 125,
            ..base
        },
    ]
}

/// Which ns-2 sender the emulator is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Reference {
    /// ns-2's Sack1 agent as shipped, except that with the delayed-ACK
    /// sink congestion avoidance adds 2 segments per window of ACKs
    /// (`increase_num_ 2`), so that each ACK for two segments counts both,
    /// as RFC 3465 byte counting does in ackwise and in the papers'
    /// modified ns-2 (paper 003 sec. 4.1). Slow start needs no change: with
    /// L = 1 both grow by one segment per ACK.
    #[default]
    ByteCounting,
    /// ns-2's Sack1 agent as shipped: one segment per window of ACKs in
    /// congestion avoidance whatever the ACKs cover, i.e. half ackwise's
    /// growth behind a delayed-ACK receiver.
    Stock,
}

impl CrossScenario {
    /// The ns-2 side, for `reference`.
    pub fn reference(&self, sink: Ns2Sink, reference: Reference) -> Ns2Dumbbell {
        let mut d = self.ns2(sink);
        if reference == Reference::ByteCounting && sink == Ns2Sink::DelayedAck {
            d.ca_increase_segments = 2.0;
        }
        d
    }

    /// The ns-2 side with ns-2's stock sender.
    pub fn ns2(&self, sink: Ns2Sink) -> Ns2Dumbbell {
        let mut d = Ns2Dumbbell::new(
            self.flows,
            self.bottleneck_rate_bps,
            self.bottleneck_delay,
            self.buffer_packets,
        )
        .segments(self.segments)
        .sink(sink)
        .access_delay(self.access_delay)
        .start_stagger(self.start_stagger);
        d.access_rate_bps = self.access_rate_bps;
        d.payload_bytes = PAYLOAD_BYTES;
        d
    }

    /// The ackwise connection configuration matching the ns-2 agents of
    /// [`ns2`](Self::ns2): 1000-byte segments without timestamps (so data
    /// is 1040 bytes on a link, as in ns-2), SACK, limited transmit, no
    /// Nagle, initial window 2 segments, 200 ms minimum and 3 s initial
    /// RTO, byte-counting limit 1 (ns-2 counts ACKs, and L = 1 gives the
    /// same slow-start growth), and the sink's ACK policy with its 100 ms
    /// timer. Buffers are large enough never to limit the window, like
    /// ns-2's `window_`.
    pub fn config(&self, sink: Ns2Sink, ns2: &Ns2Dumbbell) -> Config {
        let ack_policy = match sink {
            Ns2Sink::AckEvery => AckPolicyConfig::Every,
            Ns2Sink::DelayedAck => AckPolicyConfig::Delayed {
                max_delay: ns2.delack_interval,
                segments: 2,
            },
        };
        Config {
            mss: PAYLOAD_BYTES as u16,
            send_buffer: 4 << 20,
            recv_buffer: 4 << 20,
            window_scaling: true,
            sack: true,
            timestamps: false,
            ack_requests: false,
            ack_policy,
            congestion: CongestionConfig {
                initial_window: Some(
                    u64::from(ns2.initial_window_segments) * u64::from(PAYLOAD_BYTES),
                ),
                byte_counting_limit: 1,
                ..CongestionConfig::default()
            },
            limited_transmit: true,
            nagle: false,
            initial_rto: ns2.initial_rto,
            min_rto: ns2.min_rto,
            idle_timeout: None,
            // ns-2's sinks remember every out-of-order segment; the
            // connection's default bound (64 ranges, against memory
            // attacks) refuses new ranges beyond it, which after a large
            // slow-start overshoot leaves the tail of the window unSACKed
            // and ends recovery in a timeout. One range per two segments
            // is the most a transfer can need.
            max_ooo_ranges: usize::try_from(self.segments / 2 + 1).unwrap_or(usize::MAX),
            // The emulator never corrupts packets and ns-2 has no checksums.
            checksums: false,
            ..Config::standard_tcp()
        }
    }

    /// The emulator side: the same dumbbell built with
    /// [`Scenario::dumbbell`]. The emulator's DropTail limit does not count
    /// the packet in transmission, so it is one less than ns-2's
    /// `queue-limit` for the same capacity.
    pub fn emulator(&self, sink: Ns2Sink) -> Scenario {
        let ns2 = self.ns2(sink);
        let config = self.config(sink, &ns2);
        let hop = HopSpec {
            rate_bps: self.bottleneck_rate_bps,
            delay: self.bottleneck_delay,
            queue: QueueSpec::drop_tail(self.buffer_packets.saturating_sub(1)),
            loss: LossModel::None,
            jitter: None,
        };
        let spec = DumbbellSpec {
            forward: hop.clone(),
            reverse: hop,
            access_rate_bps: Some(self.access_rate_bps),
            access_queue: QueueSpec::drop_tail(ns2.access_queue_limit_packets.saturating_sub(1)),
        };
        let flows: Vec<FlowParams> = (0..self.flows)
            .map(|i| FlowParams {
                start: self.start_stagger * u32::try_from(i).unwrap_or(u32::MAX),
                access_delay: self.access_delay,
                ..FlowParams::new(config.clone(), self.segments * u64::from(PAYLOAD_BYTES))
            })
            .collect();
        let mut s = Scenario::dumbbell(&spec, &flows);
        // ns-2's `useHeaders_` adds 40 bytes: 20 of TCP, 20 of IP. The
        // emulator encodes the TCP header and adds the IP one here.
        s.overhead_bytes = 20;
        s.horizon = ns2.horizon;
        s.seed = 1;
        s
    }
}

/// One side's figures for a scenario and sink.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Flows in the scenario.
    pub flows: usize,
    /// Flows that delivered everything before the horizon.
    pub finished: usize,
    /// Mean completion time over flows, seconds (if all finished).
    pub completion_mean_s: Option<f64>,
    /// Longest completion time, seconds (if all finished).
    pub completion_max_s: Option<f64>,
    /// Payload bits of all flows over the span from the first data segment
    /// to the last ACK (bits per second; if all finished).
    pub goodput_bps: Option<f64>,
    /// Data segments sent, retransmissions included.
    pub data_packets: u64,
    /// ACKs sent by the receivers.
    pub ack_packets: u64,
    /// Their bytes on the links.
    pub ack_bytes: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Packets dropped at the bottleneck (data direction).
    pub bottleneck_drops: u64,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
}

/// Completion mean and max, and aggregate goodput, from per-flow
/// (first data, last ACK) pairs; `None`s unless every flow finished.
fn summarise(
    spans: &[Option<(Duration, Duration)>],
    payload_bits: f64,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let Some(spans) = spans.iter().copied().collect::<Option<Vec<_>>>() else {
        return (None, None, None);
    };
    if spans.is_empty() {
        return (None, None, None);
    }
    let times: Vec<f64> = spans
        .iter()
        .map(|(a, b)| b.saturating_sub(*a).as_secs_f64())
        .collect();
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let max = times.iter().copied().fold(0.0, f64::max);
    let first = spans.iter().map(|s| s.0).min().unwrap_or_default();
    let last = spans.iter().map(|s| s.1).max().unwrap_or_default();
    let span = last.saturating_sub(first).as_secs_f64();
    let goodput = (span > 0.0).then(|| payload_bits * spans.len() as f64 / span);
    (Some(mean), Some(max), goodput)
}

impl Figures {
    fn from_ns2(s: &CrossScenario, r: &Ns2Result) -> Figures {
        let spans: Vec<_> = r
            .flows
            .iter()
            .map(|f| f.first_data_at.zip(f.last_ack_at))
            .collect();
        let bits = s.segments as f64 * f64::from(PAYLOAD_BYTES) * 8.0;
        let (completion_mean_s, completion_max_s, goodput_bps) = summarise(&spans, bits);
        Figures {
            flows: r.flows.len(),
            finished: r
                .flows
                .iter()
                .filter(|f| f.completion_time.is_some())
                .count(),
            completion_mean_s,
            completion_max_s,
            goodput_bps,
            data_packets: r.flows.iter().map(|f| f.data_packets).sum(),
            ack_packets: r.flows.iter().map(|f| f.ack_packets).sum(),
            ack_bytes: r.flows.iter().map(|f| f.ack_bytes).sum(),
            retransmissions: r.flows.iter().map(|f| f.retransmissions).sum(),
            bottleneck_drops: r.bottleneck_drops,
            wall_s: r.wall.as_secs_f64(),
        }
    }

    fn from_emulator(s: &CrossScenario, r: &RunResult, wall: std::time::Duration) -> Figures {
        let ok = |f: &emu::FlowResult| f.finished && f.delivered_all && f.content_ok;
        let spans: Vec<_> = r
            .flows
            .iter()
            .map(|f| {
                let a = f.first_data_at?.since_epoch();
                let b = f.last_ack_at?.since_epoch();
                ok(f).then_some((a, b))
            })
            .collect();
        let bits = s.segments as f64 * f64::from(PAYLOAD_BYTES) * 8.0;
        let (completion_mean_s, completion_max_s, goodput_bps) = summarise(&spans, bits);
        Figures {
            flows: r.flows.len(),
            finished: r.flows.iter().filter(|f| ok(f)).count(),
            completion_mean_s,
            completion_max_s,
            goodput_bps,
            data_packets: r.flows.iter().map(|f| f.data_packets).sum(),
            ack_packets: r.flows.iter().map(|f| f.ack_packets).sum(),
            ack_bytes: r.flows.iter().map(|f| f.ack_bytes).sum(),
            retransmissions: r.flows.iter().map(|f| f.retransmissions).sum(),
            bottleneck_drops: r.links.get(emu::DUMBBELL_MIDDLE.0).map_or(0, |l| l.drops),
            wall_s: wall.as_secs_f64(),
        }
    }
}

/// One scenario with one sink, on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// The scenario.
    pub scenario: CrossScenario,
    /// The receiver kind.
    pub sink: Ns2Sink,
    /// The ns-2 sender compared with.
    pub reference: Reference,
    /// ns-2's figures.
    pub ns2: Figures,
    /// The emulator's figures.
    pub ackwise: Figures,
}

/// One metric of a case on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Metric name with its unit.
    pub metric: &'static str,
    /// ns-2's value (`None`: not every flow finished).
    pub ns2: Option<f64>,
    /// The emulator's value.
    pub ackwise: Option<f64>,
    /// ackwise / ns-2.
    pub ratio: Option<f64>,
    /// Whether the metric is held to [`TOLERANCE`].
    pub checked: bool,
    /// For checked metrics: both values exist and are within tolerance.
    pub within: bool,
}

fn compare(
    metric: &'static str,
    ns2: Option<f64>,
    ackwise: Option<f64>,
    checked: bool,
) -> Comparison {
    let ratio = match (ns2, ackwise) {
        (Some(a), Some(b)) if a != 0.0 => Some(b / a),
        _ => None,
    };
    let within = ratio.is_some_and(|r| (r - 1.0).abs() <= TOLERANCE);
    Comparison {
        metric,
        ns2,
        ackwise,
        ratio,
        checked,
        within: checked && within,
    }
}

impl CaseResult {
    /// Every metric, the checked ones first.
    pub fn comparisons(&self) -> Vec<Comparison> {
        let (n, a) = (&self.ns2, &self.ackwise);
        let count = |v: u64| Some(v as f64);
        vec![
            compare(
                "completion mean (s)",
                n.completion_mean_s,
                a.completion_mean_s,
                true,
            ),
            compare(
                "goodput (Mbit/s)",
                n.goodput_bps.map(|g| g / 1e6),
                a.goodput_bps.map(|g| g / 1e6),
                true,
            ),
            compare(
                "completion max (s)",
                n.completion_max_s,
                a.completion_max_s,
                false,
            ),
            compare(
                "data packets",
                count(n.data_packets),
                count(a.data_packets),
                false,
            ),
            compare(
                "ACK packets",
                count(n.ack_packets),
                count(a.ack_packets),
                false,
            ),
            compare("ACK bytes", count(n.ack_bytes), count(a.ack_bytes), false),
            compare(
                "retransmissions",
                count(n.retransmissions),
                count(a.retransmissions),
                false,
            ),
            compare(
                "bottleneck drops",
                count(n.bottleneck_drops),
                count(a.bottleneck_drops),
                false,
            ),
        ]
    }

    /// Every checked metric is within tolerance.
    pub fn passed(&self) -> bool {
        self.comparisons()
            .iter()
            .filter(|c| c.checked)
            .all(|c| c.within)
    }
}

/// Runs one scenario with one sink in ns-2 and in the emulator.
pub fn run_case(
    s: &CrossScenario,
    sink: Ns2Sink,
    reference: Reference,
) -> Result<CaseResult, LabError> {
    let ns2 = s.reference(sink, reference).run()?;
    let scenario = s.emulator(sink);
    let started = std::time::Instant::now();
    let ours = emu::run(&scenario)?;
    let wall = started.elapsed();
    Ok(CaseResult {
        scenario: s.clone(),
        sink,
        reference,
        ns2: Figures::from_ns2(s, &ns2),
        ackwise: Figures::from_emulator(s, &ours, wall),
    })
}

/// Runs every scenario with both sinks, the cases in parallel (each is
/// independent: its own ns-2 process and temp dir, its own emulator), and
/// returns them in [`scenarios`] order, AE first. `progress` reports each
/// finished case on stderr.
pub fn run_all(reference: Reference, progress: bool) -> Result<Vec<CaseResult>, LabError> {
    let cases: Vec<(CrossScenario, Ns2Sink)> = scenarios()
        .into_iter()
        .flat_map(|s| Ns2Sink::ALL.map(|k| (s.clone(), k)))
        .collect();
    let total = cases.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<CaseResult, LabError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .map(|(s, k)| {
                let done = &done;
                scope.spawn(move || {
                    let r = run_case(s, *k, reference);
                    let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    if progress {
                        eprintln!("crosscheck: [{d}/{total}] {} {} done", s.name, k.name());
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(LabError::Field {
                        field: "crosscheck".into(),
                        problem: "a case panicked".into(),
                    })
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 1000.0 || v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The comparison as a text table: one row per case and metric; the last
/// column is `ok` or `FAIL` for checked metrics and empty for reported
/// ones.
pub fn table(cases: &[CaseResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<3} {:<7} {:<20} {:>10} {:>10} {:>7}  check",
        "", "sink", "metric", "ns-2", "ackwise", "ratio"
    );
    for c in cases {
        for m in c.comparisons() {
            let mark = match (m.checked, m.within) {
                (false, _) => "",
                (true, true) => "ok",
                (true, false) => "FAIL",
            };
            let ratio = m.ratio.map_or("-".into(), |r| format!("{r:.3}"));
            let _ = writeln!(
                out,
                "{:<3} {:<7} {:<20} {:>10} {:>10} {:>7}  {mark}",
                c.scenario.name,
                c.sink.name(),
                m.metric,
                cell(m.ns2),
                cell(m.ackwise),
                ratio
            );
        }
    }
    for s in scenarios() {
        let _ = writeln!(out, "({}) {}", s.name, s.description);
    }
    let _ = writeln!(
        out,
        "checked: completion mean and aggregate goodput within {:.0}%",
        TOLERANCE * 100.0
    );
    out
}

/// The cases with their comparisons as pretty-printed JSON.
pub fn to_json(cases: &[CaseResult]) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        case: &'a CaseResult,
        comparisons: Vec<Comparison>,
        passed: bool,
    }
    let out: Vec<Out<'_>> = cases
        .iter()
        .map(|c| Out {
            case: c,
            comparisons: c.comparisons(),
            passed: c.passed(),
        })
        .collect();
    serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
