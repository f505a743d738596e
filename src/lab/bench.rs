//! `ackwise lab bench`: the emulator's speed on a fixed scenario, measured
//! as simulated data packets per wall-clock second.
//!
//! The scenario is the reference: one flow over 100 Mbit/s with
//! 100 ms RTT and one bandwidth-delay product of DropTail buffer, ACK every
//! segment, 200 simulated seconds, 1000-byte segments.
//!
//! [`run_ns2`] runs the same experiment in ns-2 without a trace, so the
//! two speeds can be compared on the same machine in the same run.

use super::ns2::{Ns2Bench, Ns2Dumbbell, Ns2Sink};
use super::strategy::Strategy;
use super::LabError;
use crate::connection::{AckNonceMode, Config};
use crate::emu::{self, FlowParams, HopSpec, LossModel, QueueSpec, Scenario};
use crate::time::Duration;

/// What one benchmark run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchResult {
    /// Data packets the emulator moved.
    pub data_packets: u64,
    /// Events processed.
    pub events: u64,
    /// Simulated time covered.
    pub simulated: Duration,
    /// Wall time taken.
    pub wall: std::time::Duration,
}

impl BenchResult {
    /// Simulated data packets per wall second.
    pub fn packets_per_second(&self) -> f64 {
        self.data_packets as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// One point of the scaling table: `flows` long-lived AE flows sharing
/// one link pair of `rate_bps` with 100 ms RTT and one bandwidth-delay
/// product of drop-tail buffer, for `simulated` of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalePoint {
    /// Flows, all starting at 0.
    pub flows: usize,
    /// Bottleneck rate, bits per second.
    pub rate_bps: u64,
    /// Virtual time simulated.
    pub simulated: Duration,
    /// Socket buffers (send and receive) of every connection, bytes;
    /// `None` for the lab's 16 MiB.
    pub socket_buffer_bytes: Option<usize>,
}

impl ScalePoint {
    /// The reference point of `lab bench` (the scenario).
    pub const REFERENCE: ScalePoint = ScalePoint {
        flows: 1,
        rate_bps: 100_000_000,
        simulated: Duration::from_secs(200),
        socket_buffer_bytes: None,
    };

    /// The buffer: one bandwidth-delay product of 1000-byte packets at
    /// 100 ms (at least 2).
    pub fn buffer_packets(&self) -> usize {
        usize::try_from(self.rate_bps / 8 / 10 / 1000)
            .unwrap_or(usize::MAX)
            .max(2)
    }
}

/// The benchmark scenario with `simulated` seconds of horizon.
pub fn scenario(simulated: Duration) -> Scenario {
    scale_scenario(&ScalePoint {
        simulated,
        ..ScalePoint::REFERENCE
    })
}

/// The scenario of a scaling point.
pub fn scale_scenario(p: &ScalePoint) -> Scenario {
    let rate_bps = p.rate_bps;
    let one_way = Duration::from_millis(50);
    // At 100 Mbit/s: 100 ms = 1.25 MB = 1250 packets of 1000 bytes.
    let hop = HopSpec {
        rate_bps,
        delay: one_way,
        queue: QueueSpec::drop_tail(p.buffer_packets()),
        loss: LossModel::None,
        jitter: None,
    };
    // 16 MiB socket buffers unless asked otherwise, the lab's: above about
    // 1.3 Gbit/s at 100 ms they, not the path, bound the window (see the
    // speed page).
    let buffer = p.socket_buffer_bytes.unwrap_or(16 << 20);
    let base = Config {
        mss: 1012,
        min_rto: Duration::from_millis(200),
        send_buffer: buffer,
        recv_buffer: buffer,
        idle_timeout: None,
        nagle: false,
        // The emulator never corrupts packets; ns-2 computes no checksums.
        checksums: false,
        // Nor do ns-2's headers carry a nonce.
        ack_nonce: AckNonceMode::Off,
        ..Config::default()
    };
    let d = Duration::from_millis(100);
    let config = Strategy::AE.apply(&base, d, d);
    // More than the link can carry in the horizon: the flows run throughout.
    let flows = p.flows.max(1);
    let bytes = rate_bps / 8 * (p.simulated.as_secs() + 10) / flows as u64;
    let flow = FlowParams::new(config, bytes.max(1000));
    let mut s = Scenario::shared_link(&hop, &hop, &vec![flow; flows]);
    s.horizon = p.simulated;
    s
}

/// The benchmark scenario as an ns-2 setup: the same link pair, ACK every
/// segment, 1000-byte payload, and a `queue-limit` one larger than the
/// emulator's DropTail limit because ns-2 counts the packet in
/// transmission.
pub fn ns2_setup(simulated: Duration) -> Ns2Dumbbell {
    ns2_scale_setup(&ScalePoint {
        simulated,
        ..ScalePoint::REFERENCE
    })
}

/// A scaling point as an ns-2 setup (see [`ns2_setup`]): every flow's
/// agents on the same two nodes.
pub fn ns2_scale_setup(p: &ScalePoint) -> Ns2Dumbbell {
    let s = scale_scenario(p);
    let (rate_bps, delay, limit) = match (s.links.first(), s.links.first().map(|l| &l.queue)) {
        (Some(l), Some(QueueSpec::DropTail { limit_packets, .. })) => {
            (l.rate_bps, l.delay, *limit_packets)
        }
        // The scenario above is a DropTail single link; keep a sane value
        // should it ever change shape.
        _ => (100_000_000, Duration::from_millis(50), 1250),
    };
    let mut d =
        Ns2Dumbbell::new(s.flows.len().max(1), rate_bps, delay, limit + 1).sink(Ns2Sink::AckEvery);
    d.segments = s.flows.first().map_or(1, |f| f.bytes / 1000);
    d.horizon = p.simulated;
    // ns-2 is much slower than the emulator; give it room.
    d.wall_timeout = std::time::Duration::from_secs(1800);
    d
}

/// Runs the benchmark scenario in ns-2 (see [`ns2_setup`]).
pub fn run_ns2(simulated: Duration) -> Result<Ns2Bench, LabError> {
    Ok(ns2_setup(simulated).run_bench()?)
}

/// Runs the benchmark scenario once.
pub fn run(simulated: Duration) -> Result<BenchResult, LabError> {
    run_point(&ScalePoint {
        simulated,
        ..ScalePoint::REFERENCE
    })
}

/// What `lab bench --flows N --rate R --seconds S --json FILE` writes
/// for one scaling point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PointRecord {
    /// Flows.
    pub flows: usize,
    /// Bottleneck rate, bits per second.
    pub rate_bps: u64,
    /// Virtual seconds simulated.
    pub simulated_s: f64,
    /// Data packets moved.
    pub data_packets: u64,
    /// Events processed.
    pub events: u64,
    /// Wall seconds of the run.
    pub wall_s: f64,
    /// The process's peak resident set after the run, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Socket buffers when not the lab's 16 MiB, bytes.
    #[serde(default)]
    pub socket_buffer_bytes: Option<u64>,
}

impl PointRecord {
    /// The record of `r`, a run of `p`.
    pub fn new(p: &ScalePoint, r: &BenchResult, peak_rss_bytes: Option<u64>) -> PointRecord {
        PointRecord {
            flows: p.flows,
            rate_bps: p.rate_bps,
            simulated_s: r.simulated.as_secs_f64(),
            data_packets: r.data_packets,
            events: r.events,
            wall_s: r.wall.as_secs_f64(),
            peak_rss_bytes,
            socket_buffer_bytes: p.socket_buffer_bytes.map(|b| b as u64),
        }
    }

    /// Wall nanoseconds per data packet.
    pub fn ns_per_packet(&self) -> f64 {
        self.wall_s * 1e9 / (self.data_packets.max(1) as f64)
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        format!(
            "{} flow(s), {} bit/s{}, {:.0} s simulated: {} data packets, {} events in {:.2} s wall ({:.0} ns per packet), peak RSS {}",
            self.flows,
            self.rate_bps,
            self.socket_buffer_bytes
                .map_or(String::new(), |b| format!(", {b}-byte socket buffers")),
            self.simulated_s,
            self.data_packets,
            self.events,
            self.wall_s,
            self.ns_per_packet(),
            self.peak_rss_bytes
                .map_or("unknown".to_string(), |b| format!("{:.1} MiB", b as f64 / 1048576.0))
        )
    }

    /// The record as one JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Runs a scaling point in ns-2 (see [`ns2_scale_setup`]).
pub fn run_ns2_point(p: &ScalePoint) -> Result<Ns2Bench, LabError> {
    Ok(ns2_scale_setup(p).run_bench()?)
}

/// The peak resident set of this process so far, bytes (`VmHWM` in
/// `/proc/self/status`; `None` where that is not available).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs a scaling point once.
pub fn run_point(p: &ScalePoint) -> Result<BenchResult, LabError> {
    let scenario = scale_scenario(p);
    let started = std::time::Instant::now();
    let result = emu::run(&scenario)?;
    Ok(BenchResult {
        data_packets: result.data_packets,
        events: result.events,
        simulated: result.elapsed,
        wall: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_bench_moves_the_link_rate() {
        // Two simulated seconds: slow start then about 12 500 packets/s.
        let r = run(Duration::from_secs(2)).unwrap();
        assert!(r.data_packets > 5_000, "{r:?}");
        assert!(r.data_packets < 25_000, "{r:?}");
        assert!(r.packets_per_second() > 0.0);
    }

    #[test]
    fn flows_of_a_scaling_point_share_the_link() {
        let p = ScalePoint {
            flows: 10,
            rate_bps: 10_000_000,
            simulated: Duration::from_secs(4),
            socket_buffer_bytes: None,
        };
        let s = scale_scenario(&p);
        assert_eq!(s.flows.len(), 10);
        assert_eq!(s.links.len(), 2);
        assert_eq!(p.buffer_packets(), 125);
        let r = run_point(&p).unwrap();
        // 10 Mbit/s of 1040-byte packets for most of 4 s, shared.
        assert!(r.data_packets > 3_000 && r.data_packets < 5_000, "{r:?}");
        assert!(peak_rss_bytes().is_some_and(|b| b > 1 << 20));
    }

    #[test]
    fn ns2_side_moves_the_link_rate_too() {
        if !super::super::ns2::ns2_available() {
            eprintln!("skipped: ns-2 is not installed");
            return;
        }
        let r = run_ns2(Duration::from_secs(2)).unwrap();
        assert!(r.data_packets > 5_000, "{r:?}");
        assert!(r.data_packets < 25_000, "{r:?}");
    }
}
