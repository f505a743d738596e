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
use crate::connection::Config;
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

/// The benchmark scenario with `simulated` seconds of horizon.
pub fn scenario(simulated: Duration) -> Scenario {
    let rate_bps = 100_000_000;
    let one_way = Duration::from_millis(50);
    // 100 Mbit/s x 100 ms = 1.25 MB = 1250 packets of 1000 bytes.
    let hop = HopSpec {
        rate_bps,
        delay: one_way,
        queue: QueueSpec::drop_tail(1250),
        loss: LossModel::None,
    };
    let base = Config {
        mss: 1012,
        min_rto: Duration::from_millis(200),
        send_buffer: 16 << 20,
        recv_buffer: 16 << 20,
        idle_timeout: None,
        nagle: false,
        // The emulator never corrupts packets; ns-2 computes no checksums.
        checksums: false,
        ..Config::default()
    };
    let d = Duration::from_millis(100);
    let config = Strategy::AE.apply(&base, d, d);
    // More than the link can carry in the horizon: the flow runs throughout.
    let bytes = rate_bps / 8 * (simulated.as_secs() + 10);
    let mut s = Scenario::single_link(&hop, &hop, &FlowParams::new(config, bytes));
    s.horizon = simulated;
    s
}

/// The benchmark scenario as an ns-2 setup: the same link pair, ACK every
/// segment, 1000-byte payload, and a `queue-limit` one larger than the
/// emulator's DropTail limit because ns-2 counts the packet in
/// transmission.
pub fn ns2_setup(simulated: Duration) -> Ns2Dumbbell {
    let s = scenario(simulated);
    let (rate_bps, delay, limit) = match (s.links.first(), s.links.first().map(|l| &l.queue)) {
        (Some(l), Some(QueueSpec::DropTail { limit_packets, .. })) => {
            (l.rate_bps, l.delay, *limit_packets)
        }
        // The scenario above is a DropTail single link; keep a sane value
        // should it ever change shape.
        _ => (100_000_000, Duration::from_millis(50), 1250),
    };
    let mut d = Ns2Dumbbell::new(1, rate_bps, delay, limit + 1).sink(Ns2Sink::AckEvery);
    d.segments = s.flows.first().map_or(1, |f| f.bytes / 1000);
    d.horizon = simulated;
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
    let scenario = scenario(simulated);
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
