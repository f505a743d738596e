//! Built-in experiments: the papers' setups as sweeps of lab scenarios.
//!
//! Each preset lists the strategies it compares; mechanisms that land
//! later add their names to these lists rather than new presets.

use super::scenario::{FlowGroup, LabScenario, LinkParams, TopologyKind};
use super::strategy::Strategy;
use super::LabError;
use crate::time::Duration;

/// One point of a sweep.
#[derive(Debug, Clone)]
pub struct Point {
    /// Swept parameters and their values at this point, for reports.
    pub params: Vec<(&'static str, f64)>,
    /// The scenario.
    pub scenario: LabScenario,
}

/// A named experiment.
#[derive(Debug, Clone)]
pub struct Preset {
    /// Stable name (`ackwise lab NAME`).
    pub name: String,
    /// One line for `ackwise lab list`.
    pub description: &'static str,
    /// Strategies compared by default.
    pub strategies: Vec<Strategy>,
    /// Sweep points.
    pub points: Vec<Point>,
}

const BASELINES: [Strategy; 3] = [Strategy::Ae, Strategy::Da, Strategy::Dal2];

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Buffer of `fraction` bandwidth-delay products, in 1000-byte packets.
fn bdp_packets(rate_bps: u64, rtt: Duration, fraction: f64) -> usize {
    let packets = rate_bps as f64 * rtt.as_secs_f64() / 8.0 / 1000.0 * fraction;
    (packets.round() as usize).max(2)
}

fn link(rate_bps: u64, delay: Duration, buffer_packets: usize) -> LinkParams {
    LinkParams {
        rate_bps,
        delay,
        buffer_packets,
        round_robin: false,
    }
}

fn group(count: u32, bytes: u64, start: Duration, stagger: Duration) -> FlowGroup {
    FlowGroup {
        count,
        bytes,
        start,
        stagger,
        access_delay: Duration::ZERO,
        reverse: false,
    }
}

/// The names of every preset, in `lab list` order.
pub const NAMES: [&str; 6] = [
    "default",
    "p003-fig3",
    "p003-fig8",
    "p004-1-0",
    "p004-2-2",
    "p004-parking-lot",
];

/// Looks a preset up by name.
pub fn find(name: &str) -> Result<Preset, LabError> {
    let preset = match name {
        "default" => default(),
        "p003-fig3" => p003_fig3(),
        "p003-fig8" => p003_fig8(),
        "p004-1-0" => p004_1_0(),
        "p004-2-2" => p004_2_2(),
        "p004-parking-lot" => p004_parking_lot(),
        _ => {
            return Err(LabError::UnknownPreset {
                name: name.to_string(),
                known: NAMES.join(", "),
            })
        }
    };
    Ok(preset)
}

/// A quick comparison: paper 003's single flow at 1.5 Mbit/s, 100 ms RTT,
/// one BDP of buffer, and the same at 10 Mbit/s.
fn default() -> Preset {
    let points = [1_500_000u64, 10_000_000]
        .into_iter()
        .map(|rate| {
            let rtt = ms(100);
            LabScenario {
                forward: link(rate, ms(50), bdp_packets(rate, rtt, 1.0)),
                flows: vec![group(1, 1_000_000, Duration::ZERO, Duration::ZERO)],
                ..LabScenario::default()
            }
        })
        .map(|s| Point {
            params: vec![("rate_mbps", s.forward.rate_bps as f64 / 1e6)],
            scenario: s,
        })
        .collect();
    Preset {
        name: "default".into(),
        description: "one 1 MB flow at 1.5 and 10 Mbit/s, 100 ms RTT, 1 BDP buffer",
        strategies: BASELINES.to_vec(),
        points,
    }
}

/// Paper 003 figures 2/3: one flow at a time over 1.5 Mbit/s with 100 ms
/// RTT (BDP about 19 segments), buffer size against transfer size.
fn p003_fig3() -> Preset {
    let mut points = Vec::new();
    for buffer in [4usize, 8, 12, 19, 28, 38] {
        for segments in [10u64, 30, 100, 300, 1000] {
            points.push(Point {
                params: vec![
                    ("buffer_packets", buffer as f64),
                    ("transfer_segments", segments as f64),
                ],
                scenario: LabScenario {
                    forward: link(1_500_000, ms(50), buffer),
                    flows: vec![group(1, segments * 1000, Duration::ZERO, Duration::ZERO)],
                    ..LabScenario::default()
                },
            });
        }
    }
    Preset {
        name: "p003-fig3".into(),
        description: "paper 003 fig. 3: 1.5 Mbit/s, 100 ms RTT, buffer x transfer size",
        strategies: BASELINES.to_vec(),
        points,
    }
}

/// Paper 003 figure 8: throughput against buffer size, one flow on
/// 1 Mbit/s (a 5 MB transfer stands in for the paper's 50 s run).
fn p003_fig8() -> Preset {
    let points = [2usize, 4, 6, 8, 12, 16, 24]
        .into_iter()
        .map(|buffer| Point {
            params: vec![("buffer_packets", buffer as f64)],
            scenario: LabScenario {
                forward: link(1_000_000, ms(50), buffer),
                flows: vec![group(1, 5_000_000, Duration::ZERO, Duration::ZERO)],
                ..LabScenario::default()
            },
        })
        .collect();
    Preset {
        name: "p003-fig8".into(),
        description: "paper 003 fig. 8: one flow on 1 Mbit/s, 100 ms RTT, buffer sweep",
        strategies: BASELINES.to_vec(),
        points,
    }
}

/// Paper 004 common settings: 10 000 segments of 1000 bytes, 200 ms
/// maximum ACK delay, 100 ms start stagger, 0.5 BDP buffers.
fn p004(forward: LinkParams, flows: Vec<FlowGroup>, access_delay: Duration) -> LabScenario {
    LabScenario {
        forward,
        flows: flows
            .into_iter()
            .map(|g| FlowGroup { access_delay, ..g })
            .collect(),
        delayed_ack: ms(200),
        horizon: Duration::from_secs(1_800),
        ..LabScenario::default()
    }
}

const P004_BYTES: u64 = 10_000 * 1000;
const P004_RATES_BPS: [u64; 5] = [1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000];

/// Paper 004 1-0: one connection, 50 ms one-way delay, no reverse data.
fn p004_1_0() -> Preset {
    let points = P004_RATES_BPS
        .into_iter()
        .map(|rate| {
            // 40 ms middle + 5 ms on each access link = 50 ms one way.
            let buffer = bdp_packets(rate, ms(100), 0.5);
            Point {
                params: vec![("rate_mbps", rate as f64 / 1e6)],
                scenario: p004(
                    link(rate, ms(40), buffer),
                    vec![group(1, P004_BYTES, Duration::ZERO, Duration::ZERO)],
                    ms(5),
                ),
            }
        })
        .collect();
    Preset {
        name: "p004-1-0".into(),
        description: "paper 004 1-0: one 10 000-segment flow, 100 ms RTT, capacity sweep",
        strategies: vec![Strategy::Da, Strategy::Ae, Strategy::Dal2],
        points,
    }
}

/// Paper 004 2-2: two flows each way over a 20 ms middle link with 5 ms
/// access links (60 ms RTT); starts at 0 and 200 ms forward, 100 and
/// 300 ms reverse.
fn p004_2_2() -> Preset {
    let points = P004_RATES_BPS
        .into_iter()
        .map(|rate| {
            let buffer = bdp_packets(rate, ms(60), 0.5);
            let mut back = group(2, P004_BYTES, ms(100), ms(200));
            back.reverse = true;
            Point {
                params: vec![("rate_mbps", rate as f64 / 1e6)],
                scenario: p004(
                    link(rate, ms(20), buffer),
                    vec![group(2, P004_BYTES, Duration::ZERO, ms(200)), back],
                    ms(5),
                ),
            }
        })
        .collect();
    Preset {
        name: "p004-2-2".into(),
        description: "paper 004 2-2: two flows each way, 60 ms RTT, capacity sweep",
        strategies: vec![Strategy::Da, Strategy::Ae, Strategy::Dal2],
        points,
    }
}

/// Paper 004 Parking-Lot: four flows over three bottlenecks, starting
/// 100 ms apart; flow 0 crosses all three.
fn p004_parking_lot() -> Preset {
    let points = [1_000_000u64, 5_000_000, 10_000_000]
        .into_iter()
        .map(|rate| {
            let buffer = bdp_packets(rate, ms(80), 0.5);
            let mut s = p004(
                link(rate, ms(10), buffer),
                vec![group(4, P004_BYTES, Duration::ZERO, ms(100))],
                ms(5),
            );
            s.topology = TopologyKind::ParkingLot;
            Point {
                params: vec![("rate_mbps", rate as f64 / 1e6)],
                scenario: s,
            }
        })
        .collect();
    Preset {
        name: "p004-parking-lot".into(),
        description: "paper 004 Parking-Lot: 4 flows, 3 bottlenecks, capacity sweep",
        strategies: vec![Strategy::Da, Strategy::Ae, Strategy::Dal2],
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_preset_exists_and_validates() {
        for name in NAMES {
            let p = find(name).unwrap();
            assert_eq!(p.name, name);
            assert!(!p.points.is_empty() && !p.strategies.is_empty());
            for point in &p.points {
                point
                    .scenario
                    .validate()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        assert!(matches!(find("p999"), Err(LabError::UnknownPreset { .. })));
    }

    #[test]
    fn bdp_in_packets() {
        // 1.5 Mbit/s x 100 ms = 18 750 bytes, about 19 packets.
        assert_eq!(bdp_packets(1_500_000, ms(100), 1.0), 19);
        assert_eq!(bdp_packets(10_000_000, ms(100), 0.5), 63);
    }
}
