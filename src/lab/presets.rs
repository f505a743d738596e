//! Built-in experiments: the papers' setups as sweeps of lab scenarios.
//!
//! Each preset lists the strategies it compares; mechanisms that land
//! later add their names to these lists rather than new presets.

use super::scenario::{
    CrossGroup, FlowGroup, LabScenario, LinkParams, QueueKind, SharedMedium, TopologyKind,
};
use super::strategy::{NetAck, Strategy};
use super::LabError;
use crate::emu::{LossModel, SmoltcpEnd};
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

/// Paper 003's strategies (sec. 3.2), then ackwise's `4w-adaptive` and
/// the default built on it.
const P003: [Strategy; 10] = [
    Strategy::AE,
    Strategy::DAL2,
    Strategy::A4L4,
    Strategy::A8L8,
    Strategy::W2,
    Strategy::W4,
    Strategy::W2AF,
    Strategy::W4AF,
    Strategy::W4_ADAPTIVE,
    Strategy::DEFAULT,
];

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn secs(v: u64) -> Duration {
    Duration::from_secs(v)
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
        queue: QueueKind::DropTail,
        loss: LossModel::None,
        jitter: None,
    }
}

fn group(count: u32, bytes: u64, start: Duration, stagger: Duration) -> FlowGroup {
    FlowGroup {
        start,
        stagger,
        ..FlowGroup::new(count, Some(bytes))
    }
}

fn long_lived(count: u32, stagger: Duration) -> FlowGroup {
    FlowGroup {
        stagger,
        ..FlowGroup::new(count, None)
    }
}

fn point(params: Vec<(&'static str, f64)>, scenario: LabScenario) -> Point {
    Point { params, scenario }
}

/// Builds one preset.
type Builder = fn() -> Preset;

/// Every built-in preset: name, builder.
const PRESETS: [(&str, Builder); 25] = [
    ("default", default),
    ("p003-fig3", p003_fig3),
    ("p003-fig6", p003_fig6),
    ("p003-fig8", p003_fig8),
    ("p003-fig11", p003_fig11),
    ("p003-fig11-red", p003_fig11_red),
    ("p004-1-0", p004_1_0),
    ("p004-asym", p004_asym),
    ("p004-2-2", p004_2_2),
    ("p004-highmux", p004_highmux),
    ("p004-diffrtt", p004_diffrtt),
    ("p004-tcp-udp", p004_tcp_udp),
    ("p004-parking-lot", p004_parking_lot),
    ("p004-buffer", p004_buffer),
    ("p004-red", p004_red),
    ("p004-parking-lot-red", p004_parking_lot_red),
    ("p004-friendly", p004_friendly),
    ("p000-single", p000_single),
    ("p000-multi", p000_multi),
    ("p002-asym20", p002_asym20),
    ("p001-sat", p001_sat),
    ("ack-mgmt", ack_mgmt),
    ("shared-medium", shared_medium),
    ("quic", quic),
    ("smoltcp", smoltcp),
];

/// The names of every preset, in `lab list` order.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(name, _)| *name)
}

/// Looks a preset up by name.
pub fn find(name: &str) -> Result<Preset, LabError> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, build)| build())
        .ok_or_else(|| LabError::UnknownPreset {
            name: name.to_string(),
            known: names().collect::<Vec<_>>().join(", "),
        })
}

/// A quick comparison: paper 003's single flow at 1.5 Mbit/s, 100 ms RTT,
/// one BDP of buffer, and the same at 10 Mbit/s.
fn default() -> Preset {
    let points = [1_500_000u64, 10_000_000]
        .into_iter()
        .map(|rate| {
            let s = LabScenario {
                forward: link(rate, ms(50), bdp_packets(rate, ms(100), 1.0)),
                flows: vec![group(1, 1_000_000, Duration::ZERO, Duration::ZERO)],
                ..LabScenario::default()
            };
            point(vec![("rate_mbps", rate as f64 / 1e6)], s)
        })
        .collect();
    Preset {
        name: "default".into(),
        description: "one 1 MB flow at 1.5 and 10 Mbit/s, 100 ms RTT, 1 BDP buffer",
        strategies: vec![
            Strategy::AE,
            Strategy::DA,
            Strategy::DAL2,
            Strategy::W4,
            Strategy::W4AF,
            Strategy::W4_ADAPTIVE,
            Strategy::DEFAULT,
        ],
        points,
    }
}

/// ackwise against smoltcp, an independent TCP implementation, on paper
/// 004's 1-0 path (one 10 000-segment flow, 100 ms RTT, 1 BDP drop-tail)
/// at 1.5, 10 and 100 Mbit/s: an unmodified smoltcp sender acknowledged
/// by ackwise's receiver policies (the deployment paper 004's receiver-only
/// smartacking is for), and ackwise senders against smoltcp's receiver
/// (polling not negotiated); ackwise at both ends beside them.
fn smoltcp() -> Preset {
    let points = [1_500_000u64, 10_000_000, 100_000_000]
        .into_iter()
        .map(|rate| {
            let s = LabScenario {
                forward: link(rate, ms(50), bdp_packets(rate, ms(100), 1.0)),
                flows: vec![group(1, P004_BYTES, Duration::ZERO, Duration::ZERO)],
                ..LabScenario::default()
            };
            point(vec![("rate_mbps", rate as f64 / 1e6)], s)
        })
        .collect();
    let sender = |s: Strategy| s.with_smoltcp(SmoltcpEnd::Sender);
    let receiver = |s: Strategy| s.with_smoltcp(SmoltcpEnd::Receiver);
    Preset {
        name: "smoltcp".into(),
        description: "smoltcp senders and receivers against ackwise's, 1-0 path, 1.5-100 Mbit/s",
        strategies: vec![
            Strategy::AE,
            Strategy::DA,
            Strategy::SMART_MINRTT,
            Strategy::W4_ADAPTIVE,
            sender(Strategy::AE),
            sender(Strategy::DA),
            sender(Strategy::SMART),
            sender(Strategy::SMART_MINRTT),
            sender(Strategy::ACC),
            receiver(Strategy::AE),
            receiver(Strategy::DAL2),
            receiver(Strategy::W4),
            receiver(Strategy::W4_ADAPTIVE),
        ],
        points,
    }
}

/// Paper 003 figures 2/3: one flow at a time over 1.5 Mbit/s with 100 ms
/// RTT (BDP about 19 segments), buffer size against transfer size.
fn p003_fig3() -> Preset {
    let mut points = Vec::new();
    for buffer in [4usize, 8, 12, 19, 28, 38] {
        for segments in [10u64, 30, 100, 300, 1000] {
            let s = LabScenario {
                forward: link(1_500_000, ms(50), buffer),
                flows: vec![group(1, segments * 1000, Duration::ZERO, Duration::ZERO)],
                ..LabScenario::default()
            };
            points.push(point(
                vec![
                    ("buffer_packets", buffer as f64),
                    ("transfer_segments", segments as f64),
                ],
                s,
            ));
        }
    }
    Preset {
        name: "p003-fig3".into(),
        description: "paper 003 fig. 3: 1.5 Mbit/s, 100 ms RTT, buffer x transfer size",
        strategies: P003.to_vec(),
        points,
    }
}

/// Paper 003 sec. 4.3, figures 5, 6, 7 and 9: 1 to 100 long-lived flows
/// over 1 and 100 Mbit/s, 100 ms RTT, one BDP of drop-tail buffer; 50 s
/// (1 Mbit/s) or 2000 s (100 Mbit/s) simulated, the first 40% left out.
/// Utilization (fig. 6), drops (fig. 7) and ACK bit rate (fig. 9) come
/// from the same runs. The paper's 1000 ms delayed-ACK interval exceeds
/// RFC 1122's 500 ms, which ackwise enforces; 500 ms is used.
fn p003_fig6() -> Preset {
    let mut points = Vec::new();
    for (rate, horizon) in [(1_000_000u64, secs(50)), (100_000_000, secs(2000))] {
        for flows in [1u32, 2, 5, 10, 20, 50, 100] {
            let s = LabScenario {
                forward: link(rate, ms(50), bdp_packets(rate, ms(100), 1.0)),
                flows: vec![long_lived(flows, ms(10))],
                delayed_ack: ms(500),
                poll_fallback: secs(1),
                measure_from: Duration::from_secs_f64(horizon.as_secs_f64() * 0.4),
                horizon,
                ..LabScenario::default()
            };
            points.push(point(
                vec![
                    ("rate_mbps", rate as f64 / 1e6),
                    ("flows", f64::from(flows)),
                ],
                s,
            ));
        }
    }
    Preset {
        name: "p003-fig6".into(),
        description: "paper 003 figs. 5-7, 9: 1-100 long flows, 1 and 100 Mbit/s, 1 BDP buffer",
        strategies: P003.to_vec(),
        points,
    }
}

/// Paper 003 figure 8: throughput of one flow over 50 s on 1 Mbit/s,
/// 100 ms RTT, against the buffer size; long ACK timers as in sec. 4.3
/// (500 ms delayed ACK, the RFC 1122 limit, and a 1 s poll fallback).
fn p003_fig8() -> Preset {
    let points = [2usize, 4, 6, 8, 12, 16, 24]
        .into_iter()
        .map(|buffer| {
            let s = LabScenario {
                forward: link(1_000_000, ms(50), buffer),
                flows: vec![long_lived(1, Duration::ZERO)],
                delayed_ack: ms(500),
                poll_fallback: secs(1),
                horizon: secs(50),
                ..LabScenario::default()
            };
            point(vec![("buffer_packets", buffer as f64)], s)
        })
        .collect();
    Preset {
        name: "p003-fig8".into(),
        description: "paper 003 fig. 8: one flow for 50 s on 1 Mbit/s, 100 ms RTT, buffer sweep",
        strategies: P003.to_vec(),
        points,
    }
}

/// Paper 003 sec. 4.5, figures 10-12: half the flows use AE, the other half
/// the strategy compared; four reverse AE flows limited to a 20-segment
/// window; about 50 ms RTT, 8 and 15 Mbit/s. Long-lived flows over 100 s,
/// the first 40 s left out (the paper does not give its duration).
fn p003_fairness(red: bool) -> Vec<Point> {
    let mut points = Vec::new();
    for rate in [8_000_000u64, 15_000_000] {
        let rtt = ms(50);
        let bdp = bdp_packets(rate, rtt, 1.0);
        let forward = if red {
            // Thresholds at 0.25 and 1.25 BDP, 10% at the upper one,
            // gentle; the hard limit leaves room for the gentle ramp.
            LinkParams {
                rate_bps: rate,
                delay: ms(25),
                buffer_packets: bdp * 5 / 2,
                queue: QueueKind::Red {
                    min_th_packets: 0.25 * bdp as f64,
                    max_th_packets: 1.25 * bdp as f64,
                    w_q: 0.002,
                    max_p: 0.1,
                    ecn: false,
                },
                loss: LossModel::None,
                jitter: None,
            }
        } else {
            link(rate, ms(25), bdp)
        };
        // "An RTT of approximately 50 ms": each group's flows spread over
        // 50-53 ms (four access links of 0-0.75 ms), the k-th compared
        // flow with the same RTT as the k-th AE flow. Identical RTTs
        // phase-lock the flows of a deterministic emulator (one AE flow
        // took over half the link), which the paper's "approximately"
        // does not describe.
        let spread = Duration::from_micros(750);
        for flows in [2u32, 4, 8, 16, 32, 64] {
            let ae = FlowGroup {
                strategy: Some(Strategy::AE),
                access_delay_spread: spread,
                ..long_lived(flows / 2, ms(20))
            };
            let compared = FlowGroup {
                start: ms(10),
                access_delay_spread: spread,
                ..long_lived(flows / 2, ms(20))
            };
            let back = FlowGroup {
                strategy: Some(Strategy::AE),
                reverse: true,
                recv_window_segments: Some(20),
                start: ms(5),
                ..long_lived(4, ms(20))
            };
            let s = LabScenario {
                forward: forward.clone(),
                flows: vec![ae, compared, back],
                delayed_ack: ms(500),
                poll_fallback: secs(1),
                measure_from: secs(40),
                horizon: secs(100),
                ..LabScenario::default()
            };
            points.push(point(
                vec![
                    ("rate_mbps", rate as f64 / 1e6),
                    ("flows", f64::from(flows)),
                ],
                s,
            ));
        }
    }
    points
}

/// The strategies paper 003 sec. 4.5 sets against AE (AE itself last, as
/// the fair reference), with ackwise's `4w-adaptive` and default.
const P003_AGAINST_AE: [Strategy; 10] = [
    Strategy::DAL2,
    Strategy::A4L4,
    Strategy::A8L8,
    Strategy::W2,
    Strategy::W4,
    Strategy::W2AF,
    Strategy::W4AF,
    Strategy::W4_ADAPTIVE,
    Strategy::DEFAULT,
    Strategy::AE,
];

fn p003_fig11() -> Preset {
    Preset {
        name: "p003-fig11".into(),
        description: "paper 003 figs. 10-12: half AE, half compared, 4 reverse flows, drop-tail",
        strategies: P003_AGAINST_AE.to_vec(),
        points: p003_fairness(false),
    }
}

fn p003_fig11_red() -> Preset {
    Preset {
        name: "p003-fig11-red".into(),
        description: "paper 003 sec. 4.5 with RED (0.25/1.25 BDP, max_p 0.1, gentle)",
        strategies: P003_AGAINST_AE.to_vec(),
        points: p003_fairness(true),
    }
}

/// Paper 004 common settings (sec. 4.2): 10 000 segments of 1000 bytes,
/// 200 ms maximum ACK delay, 100 ms start stagger, 0.5 BDP buffers, and
/// NewReno's initial window of one segment (sec. 2; with it the delayed
/// ACK of the first segment stalls NewReno, fig. 3a), and RFC 6298's
/// 1 s minimum RTO: with the lab's 200 ms floor the handshake's RTT
/// sample gives a 300 ms RTO, which the 200 ms delayed ACK of that first
/// segment loses to on a 100 ms path, and the spurious timeout leaves
/// NewReno in congestion avoidance from two segments, a handicap the
/// paper's NewReno did not have.
fn p004(forward: LinkParams, flows: Vec<FlowGroup>, access_delay: Duration) -> LabScenario {
    LabScenario {
        initial_window_segments: 1,
        min_rto: secs(1),
        forward,
        flows: flows
            .into_iter()
            .map(|g| FlowGroup { access_delay, ..g })
            .collect(),
        delayed_ack: ms(200),
        horizon: secs(1_800),
        ..LabScenario::default()
    }
}

const P004_BYTES: u64 = 10_000 * 1000;
const P004_RATES_BPS: [u64; 5] = [1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000];
/// Paper 004 sec. 4.1's designs: NewReno (`da`), AckEvery, ABC (`dal2`),
/// ACC, NewReno with pacing, smartacking with and without pacing,
/// extended smartacking, smartacking with fair queueing and with a fixed
/// RTT, ackwise's min-RTT smartacking, and smartacking told the window by
/// the sender (the paper's explicit assistance, to price estimation).
const P004_STRATEGIES: [Strategy; 12] = [
    Strategy::DA,
    Strategy::AE,
    Strategy::DAL2,
    Strategy::ACC,
    Strategy::DA.with_pacing(),
    Strategy::SMART,
    Strategy::SMART.with_pacing(),
    Strategy::SMART_EXT,
    Strategy::SMART.with_fq(),
    Strategy::SMART_FIXED_RTT,
    Strategy::SMART_MINRTT,
    Strategy::SMART_ASSISTED,
];

fn p004_preset(name: &str, description: &'static str, points: Vec<Point>) -> Preset {
    Preset {
        name: name.into(),
        description,
        strategies: P004_STRATEGIES.to_vec(),
        points,
    }
}

fn rate_point(rate: u64, s: LabScenario) -> Point {
    point(vec![("rate_mbps", rate as f64 / 1e6)], s)
}

/// A paper 004 preset over the capacities of `P004_RATES_BPS`, the
/// scenario at each built by `scenario`.
fn p004_capacity_sweep(
    name: &str,
    description: &'static str,
    scenario: impl Fn(u64) -> LabScenario,
) -> Preset {
    let points = P004_RATES_BPS
        .into_iter()
        .map(|rate| rate_point(rate, scenario(rate)))
        .collect();
    p004_preset(name, description, points)
}

/// Paper 004 1-0 at `rate`: one connection, 50 ms one-way delay (40 ms
/// middle + 5 ms on each access link), no reverse data, half a BDP of
/// drop-tail buffer.
fn one_zero(rate: u64) -> LabScenario {
    let buffer = bdp_packets(rate, ms(100), 0.5);
    p004(
        link(rate, ms(40), buffer),
        vec![group(1, P004_BYTES, Duration::ZERO, Duration::ZERO)],
        ms(5),
    )
}

/// Paper 004 1-0: one connection, 50 ms one-way delay, no reverse data.
fn p004_1_0() -> Preset {
    p004_capacity_sweep(
        "p004-1-0",
        "paper 004 1-0: one 10 000-segment flow, 100 ms RTT, capacity sweep",
        one_zero,
    )
}

/// Paper 004 Asymmetric: 10 Mbit/s, 1 ms edge links; the middle link runs
/// 10 Mbit/s with 5 ms forward and 5-30 kbit/s with 50 ms backward.
fn p004_asym() -> Preset {
    let points = [5_000u64, 10_000, 15_000, 20_000, 21_000, 25_000, 30_000]
        .into_iter()
        .map(|back| {
            let rtt = ms(2 + 5 + 2 + 50);
            let buffer = bdp_packets(10_000_000, rtt, 0.5);
            let mut s = p004(
                link(10_000_000, ms(5), buffer),
                vec![group(1, P004_BYTES, Duration::ZERO, Duration::ZERO)],
                ms(1),
            );
            // Balakrishnan et al.'s setup, which paper 004 adopts, marks
            // ACKs at the slow reverse link (RED with ECN): ACC's signal.
            // Only ACC reacts to the marks; for the others a mark is a
            // drop avoided.
            let mut reverse = link(back, ms(50), buffer);
            reverse.queue = QueueKind::RED_PAPER_004_ECN;
            s.reverse = Some(reverse);
            s.access_rate_bps = Some(10_000_000);
            point(vec![("reverse_kbps", back as f64 / 1e3)], s)
        })
        .collect();
    p004_preset(
        "p004-asym",
        "paper 004 Asymmetric: 10 Mbit/s forward, 5-30 kbit/s reverse, one flow",
        points,
    )
}

/// Paper 004 2-2 shape: `per_connection` flows for each of the two
/// connections in each direction, 20 ms middle link, 5 ms access links
/// (60 ms RTT); connections start at 0 and 200 ms forward, 100 and 300 ms
/// backward. Half a BDP of drop-tail buffer, as in most of the paper.
fn two_two(rate: u64, per_connection: u32) -> LabScenario {
    two_two_buffer(rate, per_connection, 0.5)
}

/// [`two_two`] with a bottleneck buffer of `buffer_bdp` bandwidth-delay
/// products (of the 60 ms RTT), in both directions.
fn two_two_buffer(rate: u64, per_connection: u32, buffer_bdp: f64) -> LabScenario {
    let buffer = bdp_packets(rate, ms(60), buffer_bdp);
    let conn = |start: u64, reverse: bool| FlowGroup {
        reverse,
        ..group(per_connection, P004_BYTES, ms(start), Duration::ZERO)
    };
    p004(
        link(rate, ms(20), buffer),
        vec![
            conn(0, false),
            conn(200, false),
            conn(100, true),
            conn(300, true),
        ],
        ms(5),
    )
}

/// Paper 004 2-2: two connections each way over a 60 ms RTT dumbbell.
fn p004_2_2() -> Preset {
    p004_capacity_sweep(
        "p004-2-2",
        "paper 004 2-2: two flows each way, 60 ms RTT, capacity sweep",
        |rate| two_two(rate, 1),
    )
}

/// Paper 004 High-Multiplexing: every connection of 2-2 becomes 50, so
/// 100 flows each way. The horizon grows with the load.
fn p004_highmux() -> Preset {
    p004_capacity_sweep(
        "p004-highmux",
        "paper 004 High-Multiplexing: 100 flows each way, 60 ms RTT",
        |rate| {
            let mut s = two_two(rate, 50);
            let per_direction_bits = 100.0 * P004_BYTES as f64 * 8.0;
            s.horizon = Duration::from_secs_f64(10.0 * per_direction_bits / rate as f64 + 60.0);
            s
        },
    )
}

/// Paper 004 Different-RTT at `rate`: 2-2 where the second connection
/// of each direction has a 120 ms RTT (20 ms access links instead of 5 ms).
fn diff_rtt(rate: u64) -> LabScenario {
    let mut s = two_two(rate, 1);
    s.flows[1].access_delay = ms(20);
    s.flows[3].access_delay = ms(20);
    s
}

/// Paper 004 Different-RTT: 2-2 with one 120 ms connection each way.
fn p004_diffrtt() -> Preset {
    p004_capacity_sweep(
        "p004-diffrtt",
        "paper 004 Different-RTT: 2-2 with one 120 ms flow each way",
        diff_rtt,
    )
}

/// Paper 004 TCP-UDP: 2-2 where the second connection of each direction
/// is an on/off UDP source at half the capacity, switching every 5 s.
fn p004_tcp_udp() -> Preset {
    p004_capacity_sweep(
        "p004-tcp-udp",
        "paper 004 TCP-UDP: one flow each way plus on/off UDP at half capacity",
        |rate| {
            let mut s = two_two(rate, 1);
            s.flows = vec![s.flows[0].clone(), s.flows[2].clone()];
            s.cross = [(200, false), (300, true)]
                .into_iter()
                .map(|(start, reverse)| CrossGroup {
                    rate_bps: rate / 2,
                    packet_bytes: 1000,
                    on: secs(5),
                    off: secs(5),
                    start: ms(start),
                    reverse,
                })
                .collect();
            s
        },
    )
}

/// Paper 004 Parking-Lot at `rate`: four flows over three bottlenecks,
/// starting 100 ms apart, all ending at the last hop as in the paper's
/// fig. 2b (connection 1 crosses one hop, connection 2 two, connections 3
/// and 4 all three). `red` puts RED on
/// every hop (see [`red_link`]) instead of half a BDP of drop-tail.
fn parking_lot(rate: u64, red: bool) -> LabScenario {
    let rtt = ms(80);
    let forward = if red {
        red_link(rate, ms(10), rtt)
    } else {
        link(rate, ms(10), bdp_packets(rate, rtt, 0.5))
    };
    let mut s = p004(
        forward,
        vec![group(4, P004_BYTES, Duration::ZERO, ms(100))],
        ms(5),
    );
    s.topology = TopologyKind::ParkingLotSharedLast;
    s
}

const P004_PARKING_LOT_RATES_BPS: [u64; 4] = [1_000_000, 2_000_000, 4_000_000, 10_000_000];

/// Paper 004 Parking-Lot (fig. 18a): drop-tail hops, capacity sweep.
fn p004_parking_lot() -> Preset {
    let points = P004_PARKING_LOT_RATES_BPS
        .into_iter()
        .map(|rate| rate_point(rate, parking_lot(rate, false)))
        .collect();
    p004_preset(
        "p004-parking-lot",
        "paper 004 Parking-Lot: 4 flows, 3 bottlenecks, capacity sweep",
        points,
    )
}

/// Paper 004 Parking-Lot with RED routers (fig. 18b).
fn p004_parking_lot_red() -> Preset {
    let points = P004_PARKING_LOT_RATES_BPS
        .into_iter()
        .map(|rate| rate_point(rate, parking_lot(rate, true)))
        .collect();
    p004_preset(
        "p004-parking-lot-red",
        "paper 004 Parking-Lot with RED (5/15 packets, max_p 0.1): fig. 18b",
        points,
    )
}

/// A middle link with paper 004's RED (thresholds 5 and 15 packets,
/// `w_q` 0.002, `max_p` 0.1, gentle). The paper does not give the RED
/// routers' buffer; the lab keeps half a BDP but never less than twice
/// `max_th`, where gentle RED drops everything: at 1-2 Mbit/s half a BDP
/// is only 4-12 packets, below `max_th`, and the tail rather than RED
/// would decide every drop.
fn red_link(rate: u64, delay: Duration, rtt: Duration) -> LinkParams {
    LinkParams {
        rate_bps: rate,
        delay,
        buffer_packets: bdp_packets(rate, rtt, 0.5).max(30),
        queue: QueueKind::RED_PAPER_004,
        loss: LossModel::None,
        jitter: None,
    }
}

/// Paper 004 fig. 11: 2-2 at 7 and 15 Mbit/s with the bottleneck buffer
/// (both directions) at 0.3 to 3 BDP of the 60 ms RTT.
fn p004_buffer() -> Preset {
    let mut points = Vec::new();
    for rate in [7_000_000u64, 15_000_000] {
        for bdp in [0.3, 0.5, 1.0, 2.0, 3.0] {
            points.push(point(
                vec![("rate_mbps", rate as f64 / 1e6), ("buffer_bdp", bdp)],
                two_two_buffer(rate, 1, bdp),
            ));
        }
    }
    p004_preset(
        "p004-buffer",
        "paper 004 fig. 11: 2-2 at 7 and 15 Mbit/s, buffer 0.3-3 BDP",
        points,
    )
}

/// Paper 004 fig. 12: RED routers (see [`red_link`]) in the 1-0
/// (`config` 0) and Different-RTT (`config` 1) configurations, capacity
/// sweep. One preset with a `config` parameter rather than two, so the
/// page and the plots set the two side by side.
fn p004_red() -> Preset {
    let mut points = Vec::new();
    for (config, build, rtt) in [
        (0.0, one_zero as fn(u64) -> LabScenario, ms(100)),
        (1.0, diff_rtt, ms(60)),
    ] {
        for rate in P004_RATES_BPS {
            let mut s = build(rate);
            // Both directions: the Different-RTT reverse connections
            // cross the reverse middle link, which mirrors the forward
            // one. The 60 ms of the shorter connections sizes the
            // Different-RTT buffer, as in the drop-tail preset.
            s.forward = red_link(rate, s.forward.delay, rtt);
            s.reverse = None;
            points.push(point(
                vec![("config", config), ("rate_mbps", rate as f64 / 1e6)],
                s,
            ));
        }
    }
    p004_preset(
        "p004-red",
        "paper 004 fig. 12: RED (5/15 packets), config 0 = 1-0, 1 = Different-RTT",
        points,
    )
}

/// Paper 004 fig. 19 (TCP-friendliness): the 2-2 configuration with
/// three connections pinned to NewReno (`da`) and the second forward
/// connection (starting at 200 ms) running the strategy compared, so a
/// run's `da` column is NewReno against NewReno. The first forward
/// connection is the parallel NewReno one the paper reports next to it.
fn p004_friendly() -> Preset {
    p004_capacity_sweep(
        "p004-friendly",
        "paper 004 fig. 19: 2-2, three NewReno (da) connections and one compared",
        |rate| {
            let mut s = two_two(rate, 1);
            for (i, g) in s.flows.iter_mut().enumerate() {
                if i != P004_FRIENDLY_COMPARED {
                    g.strategy = Some(Strategy::DA);
                }
            }
            s
        },
    )
}

/// Which flow group (and, one flow per group, which flow of a record) of
/// `p004-friendly` runs the compared strategy: the second forward
/// connection.
pub(super) const P004_FRIENDLY_COMPARED: usize = 1;

/// Paper 000's asymmetric path: 10 Mbit/s forward, 100 kbit/s reverse,
/// 200 ms round-trip propagation delay, large buffers.
fn p000_path(reverse_buffer: usize) -> LabScenario {
    LabScenario {
        forward: link(10_000_000, ms(100), 1000),
        reverse: Some(link(100_000, ms(100), reverse_buffer)),
        access_rate_bps: Some(100_000_000),
        // The paper's Reno source starts from a window of one segment.
        initial_window_segments: 1,
        ..LabScenario::default()
    }
}

/// Paper 000's static thresholds swept by `p000-single`, around the
/// optimum of eq. 1 (about 31 ACKs on this path).
pub const P000_DELTAS: [u16; 7] = [1, 3, 10, 30, 100, 300, 1000];

/// Paper 000 sec. 2-3 (figures 4-9): one transfer over the asymmetric
/// path, the receiver acknowledging every packet (d = 1, `ae`), the
/// reverse buffer filtering statically with each delta of
/// [`P000_DELTAS`], with delayed filtering, or not at all; transfer size
/// swept. The paper's forward buffer is large (it studies the reverse
/// path alone): 10 000 packets here.
fn p000_single() -> Preset {
    let points = [100u64, 300, 1000, 3000, 10_000]
        .into_iter()
        .map(|segments| {
            let s = LabScenario {
                flows: vec![group(1, segments * 1000, Duration::ZERO, Duration::ZERO)],
                forward: link(10_000_000, ms(100), 10_000),
                ..p000_path(1000)
            };
            point(vec![("transfer_segments", segments as f64)], s)
        })
        .collect();
    let mut strategies = vec![Strategy::AE, Strategy::AE.with_net_ack(NetAck::Classic)];
    strategies.extend(
        P000_DELTAS
            .iter()
            .map(|&d| Strategy::AE.with_net_ack(NetAck::Static(d))),
    );
    strategies.push(Strategy::AE.with_net_ack(NetAck::Delayed));
    Preset {
        name: "p000-single".into(),
        description:
            "paper 000 single: 10 Mbit/s down, 100 kbit/s ACK channel, T = 200 ms, delta sweep",
        strategies,
        points,
    }
}

/// Paper 000 sec. 4's five algorithms (figures 11-12): no filtering,
/// classic, single-flow delayed, per-connection delayed with FIFO and
/// with round-robin service; receivers acknowledge every packet.
const P000_MULTI: [Strategy; 5] = [
    Strategy::AE,
    Strategy::AE.with_net_ack(NetAck::Classic),
    Strategy::AE.with_net_ack(NetAck::Delayed),
    Strategy::AE.with_net_ack(NetAck::PerFlow),
    Strategy::AE.with_net_ack(NetAck::PerFlowRr),
];

/// A deterministic stream of uniform numbers in [0, 1) (SplitMix64), so
/// a preset's random sizes are the same on every machine and run.
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Paper 000 sec. 4 (figures 11-12): N sources share the 100 kbit/s ACK
/// channel; file sizes uniform in 10 kB..10 MB, access delays uniform in
/// 1..10 ms, with a large (1000) and a small (10-packet) reverse buffer.
/// Unlike the paper, each source sends one file (starting within the
/// first 2 s) rather than files back to back for 1000 s; the figure of
/// merit is the same, the mean throughput of a transfer (`gput` per flow).
fn p000_multi() -> Preset {
    let mut points = Vec::new();
    for reverse_buffer in [1000usize, 10] {
        for sources in [1u32, 2, 5, 10, 15, 20] {
            let mut draw = Uniform(u64::from(sources));
            let flows = (0..sources)
                .map(|_| {
                    let bytes = 10_000 + (draw.next() * 9_990_000.0) as u64;
                    let access = Duration::from_secs_f64(0.001 + draw.next() * 0.009);
                    let start = Duration::from_secs_f64(draw.next() * 2.0);
                    FlowGroup {
                        access_delay: access,
                        ..group(1, bytes, start, Duration::ZERO)
                    }
                })
                .collect();
            let s = LabScenario {
                flows,
                horizon: secs(3_000),
                ..p000_path(reverse_buffer)
            };
            points.push(point(
                vec![
                    ("reverse_buffer", reverse_buffer as f64),
                    ("sources", f64::from(sources)),
                ],
                s,
            ));
        }
    }
    Preset {
        name: "p000-multi".into(),
        description: "paper 000 multiple: 1-20 sources, random sizes, 100 kbit/s ACK channel",
        strategies: P000_MULTI.to_vec(),
        points,
    }
}

/// Paper 002 sec. III: 20 long-lived sources upload over 10 Mbit/s and
/// get their ACKs back over 300 kbit/s, the reverse buffer managed by RED
/// with ECN (ACC's signal). Starts 250 ms apart; 60 s, the first 10 s
/// left out. The paper gives neither delays nor buffer sizes: 20 ms
/// middle, 5 ms access links, 100-packet buffers here.
fn p002_asym20() -> Preset {
    let mut s = LabScenario {
        forward: link(10_000_000, ms(20), 100),
        reverse: Some(LinkParams {
            rate_bps: 300_000,
            delay: ms(20),
            buffer_packets: 100,
            queue: QueueKind::Red {
                min_th_packets: 5.0,
                max_th_packets: 15.0,
                w_q: 0.002,
                max_p: 0.1,
                ecn: true,
            },
            loss: LossModel::None,
            jitter: None,
        }),
        flows: vec![FlowGroup {
            access_delay: ms(5),
            ..long_lived(20, ms(250))
        }],
        measure_from: secs(10),
        horizon: secs(60),
        ..LabScenario::default()
    };
    s.delayed_ack = ms(100);
    Preset {
        name: "p002-asym20".into(),
        description: "paper 002: 20 sources, 10 Mbit/s up, 300 kbit/s RED/ECN down",
        strategies: P002_STRATEGIES.to_vec(),
        points: vec![point(Vec::new(), s)],
    }
}

/// Paper 002's comparison: NewReno (`da`), ACK filtering, ACC, and the
/// two together. A filtering strategy keeps the reverse RED queue as the
/// admission gate of its filtering buffer, so ACC still sees marks.
const P002_STRATEGIES: [Strategy; 5] = [
    Strategy::DA,
    Strategy::DA.with_net_ack(NetAck::Classic),
    Strategy::DA.with_net_ack(NetAck::Delayed),
    Strategy::ACC,
    Strategy::ACC.with_net_ack(NetAck::Classic),
];

/// Paper 001 sec. 4 (figures 4-10): one bulk transfer over a 30 Mbit/s
/// MEO satellite hop (130 ms each way), 150 Mbit/s 1 ms terrestrial
/// links, 536-byte segments, a 1 MB window, forward buffers of 1 MB and
/// 250 kB (in 576-byte packets), receivers acknowledging every segment;
/// with and without ACK delay control (`+adc`: 50 kB threshold, half
/// rate). The paper's sources run without SACK; ackwise's use it.
fn p001_sat() -> Preset {
    let packet = 536 + 40;
    let points = [1_000_000usize, 250_000]
        .into_iter()
        .map(|buffer_bytes| {
            let buffer = buffer_bytes / packet;
            let s = LabScenario {
                forward: link(30_000_000, ms(130), buffer),
                reverse: Some(link(30_000_000, ms(130), buffer)),
                access_rate_bps: Some(150_000_000),
                flows: vec![FlowGroup {
                    access_delay: ms(1),
                    recv_window_segments: Some((1 << 20) / 536),
                    ..group(1, 30_000_000, Duration::ZERO, Duration::ZERO)
                }],
                segment_bytes: 536,
                initial_window_segments: 1,
                horizon: secs(600),
                ..LabScenario::default()
            };
            point(vec![("buffer_kB", buffer_bytes as f64 / 1e3)], s)
        })
        .collect();
    Preset {
        name: "p001-sat".into(),
        description: "paper 001: 30 Mbit/s satellite, 130 ms one way, 1 MB window, delay control",
        strategies: vec![
            Strategy::AE,
            Strategy::AE.with_net_ack(NetAck::DelayControl),
            Strategy::DA,
            Strategy::DA.with_net_ack(NetAck::DelayControl),
        ],
        points,
    }
}

/// The strategies `ack-mgmt` compares on one asymmetric path: end-host
/// schemes (delayed ACK, ACC, sender polling, smartacking) against
/// in-network ones (ACK filtering behind delayed-ACK receivers).
pub const ACK_MGMT_STRATEGIES: [Strategy; 11] = [
    Strategy::DA,
    Strategy::AE,
    Strategy::DA.with_net_ack(NetAck::Classic),
    Strategy::DA.with_net_ack(NetAck::Delayed),
    Strategy::DA.with_net_ack(NetAck::PerFlowRr),
    Strategy::ACC,
    Strategy::W4,
    Strategy::W4_ADAPTIVE,
    Strategy::DEFAULT,
    Strategy::SMART_MINRTT,
    Strategy::SMART_MINRTT.with_net_ack(NetAck::Delayed),
];

/// Who wins on a slow ACK channel: four 5 MB uploads (started 0.5 s
/// apart) over 10 Mbit/s forward, 200 ms RTT, the reverse channel at 28.8,
/// 56 and 100 kbit/s with a 100-packet RED/ECN queue (ACC's signal; the
/// filtering strategies put their buffer behind it).
fn ack_mgmt() -> Preset {
    let points = [28_800u64, 56_000, 100_000]
        .into_iter()
        .map(|back| {
            let mut reverse = link(back, ms(100), 100);
            reverse.queue = QueueKind::RED_PAPER_004_ECN;
            let s = LabScenario {
                forward: link(10_000_000, ms(100), 250),
                reverse: Some(reverse),
                access_rate_bps: Some(100_000_000),
                flows: vec![group(4, 5_000_000, Duration::ZERO, ms(500))],
                min_rto: secs(1),
                horizon: secs(1_200),
                ..LabScenario::default()
            };
            point(vec![("reverse_kbps", back as f64 / 1e3)], s)
        })
        .collect();
    Preset {
        name: "ack-mgmt".into(),
        description: "who wins: end-host and in-network ACK reduction, 10 Mbit/s / 28.8-100 kbit/s",
        strategies: ACK_MGMT_STRATEGIES.to_vec(),
        points,
    }
}

/// A Wi-Fi-like shared half-duplex medium: two bulk flows of 20 MB over
/// one 54 Mbit/s transmitter that data and ACKs of both directions take
/// turns on, 10 ms RTT, a one-BDP buffer each way. Each frame pays a
/// fixed airtime overhead, swept over 100 and 150 us: 802.11a/g at
/// 54 Mbit/s spends about 28-34 us of DIFS, 67.5 us of mean backoff
/// (CWmin 15 slots of 9 us, halved), 20 us of preamble, 10-16 us of SIFS
/// and about 28 us of link-layer ACK per frame, some 150-165 us; 100 us
/// stands for a shorter contention window. Every ACK saved is airtime for
/// data: TACK (SIGCOMM 2020) reports about 28% more goodput with over 90%
/// fewer ACKs on Wi-Fi.
/// Beside 802.11g's 54 Mbit/s, a 300 Mbit/s PHY rate as 802.11n/ac
/// reach, where TACK (SIGCOMM 2020) measured its gains: the faster the
/// PHY, the more of a frame's airtime is the fixed overhead, and the more
/// each ACK costs the data.
fn shared_medium() -> Preset {
    let mut points = Vec::new();
    for rate in [54_000_000u64, 300_000_000] {
        for us in [100u64, 150] {
            let s = LabScenario {
                forward: link(rate, ms(5), bdp_packets(rate, ms(10), 1.0)),
                flows: vec![group(2, 20_000_000, Duration::ZERO, Duration::ZERO)],
                medium: Some(SharedMedium {
                    per_frame_overhead: Duration::from_micros(us),
                }),
                ..LabScenario::default()
            };
            let phy_mbps = (rate / 1_000_000) as f64;
            points.push(point(
                vec![("phy_mbps", phy_mbps), ("per_frame_us", us as f64)],
                s,
            ));
        }
    }
    Preset {
        name: "shared-medium".into(),
        description: "Wi-Fi-like shared medium: 2 flows of 20 MB, 54 and 300 Mbit/s PHY, 100/150 us per frame, 10 ms RTT",
        strategies: vec![
            Strategy::AE,
            Strategy::DA,
            Strategy::DAL2,
            Strategy::W4,
            Strategy::W4_ADAPTIVE,
            Strategy::DEFAULT,
            Strategy::SMART_MINRTT,
        ],
        points,
    }
}

/// QUIC beside ackwise (issue 13): paper 003's path (100 ms RTT, one BDP
/// of drop-tail buffer) at 1 and 100 Mbit/s, with one sized transfer and
/// with ten staggered ones, and a mixed point where five QUIC flows
/// running the compared strategy share the bottleneck with five 4W flows.
/// The QUIC strategies need feature `quic`; without it the preset
/// compares the TCP-style ones only.
fn quic() -> Preset {
    let mut points = Vec::new();
    for (rate, bytes) in [(1_000_000u64, 1_000_000u64), (100_000_000, 50_000_000)] {
        let base = LabScenario {
            forward: link(rate, ms(50), bdp_packets(rate, ms(100), 1.0)),
            flows: vec![group(1, bytes, Duration::ZERO, Duration::ZERO)],
            ..LabScenario::default()
        };
        let rate_mbps = rate as f64 / 1e6;
        points.push(point(
            vec![("rate_mbps", rate_mbps), ("flows", 1.0), ("mixed", 0.0)],
            base.clone(),
        ));
        let many = LabScenario {
            flows: vec![group(10, bytes / 10, Duration::ZERO, ms(100))],
            ..base.clone()
        };
        points.push(point(
            vec![("rate_mbps", rate_mbps), ("flows", 10.0), ("mixed", 0.0)],
            many,
        ));
        let mut fixed = group(5, bytes / 10, ms(50), ms(100));
        fixed.strategy = Some(Strategy::W4);
        let mixed = LabScenario {
            flows: vec![group(5, bytes / 10, Duration::ZERO, ms(100)), fixed],
            ..base
        };
        points.push(point(
            vec![("rate_mbps", rate_mbps), ("flows", 10.0), ("mixed", 1.0)],
            mixed,
        ));
    }
    let mut strategies = Strategy::quic();
    strategies.extend([
        Strategy::AE,
        Strategy::DAL2,
        Strategy::W4,
        Strategy::W4_ADAPTIVE,
        Strategy::DEFAULT,
        Strategy::SMART_MINRTT,
    ]);
    Preset {
        name: "quic".into(),
        description: "QUIC policies vs ackwise: 1 and 10 flows (and 5 QUIC + 5 4w) at 1 and 100 Mbit/s, 100 ms RTT",
        strategies,
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_preset_exists_and_validates() {
        for name in names() {
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
    fn paper_004_figure_presets_have_their_shapes() {
        // Every p004 preset runs the paper's eleven designs.
        for name in names().filter(|n| n.starts_with("p004-")) {
            assert_eq!(find(name).unwrap().strategies, P004_STRATEGIES.to_vec());
        }

        // Fig. 11: the buffer follows buffer_bdp of the 60 ms RTT.
        let buffer = find("p004-buffer").unwrap();
        assert_eq!(buffer.points.len(), 10);
        for p in &buffer.points {
            let (rate, bdp) = (p.params[0].1, p.params[1].1);
            let expected = bdp_packets((rate * 1e6) as u64, ms(60), bdp);
            assert_eq!(p.scenario.forward.buffer_packets, expected);
            assert_eq!(p.scenario.flows.len(), 4);
        }

        // Fig. 12 and 18b: paper 004's RED on every bottleneck, with room
        // for the gentle ramp.
        for name in ["p004-red", "p004-parking-lot-red"] {
            for p in &find(name).unwrap().points {
                assert_eq!(p.scenario.forward.queue, QueueKind::RED_PAPER_004, "{name}");
                assert!(p.scenario.reverse.is_none(), "{name}: reverse mirrors");
                assert!(p.scenario.forward.buffer_packets >= 30, "{name}");
            }
        }
        let red = find("p004-red").unwrap();
        let configs: Vec<usize> = red.points.iter().map(|p| p.scenario.flows.len()).collect();
        assert_eq!(configs, [vec![1; 5], vec![4; 5]].concat());

        // Fig. 19: exactly one forward connection follows the run.
        for p in &find("p004-friendly").unwrap().points {
            let roles = p.scenario.roles(Strategy::SMART);
            let compared: Vec<usize> = (0..roles.len())
                .filter(|&i| roles[i].strategy == Strategy::SMART)
                .collect();
            assert_eq!(compared, vec![P004_FRIENDLY_COMPARED]);
            assert!(!roles[P004_FRIENDLY_COMPARED].reverse);
            assert_eq!(
                roles.iter().filter(|r| r.strategy == Strategy::DA).count(),
                3
            );
        }
    }

    #[test]
    fn bdp_in_packets() {
        // 1.5 Mbit/s x 100 ms = 18 750 bytes, about 19 packets.
        assert_eq!(bdp_packets(1_500_000, ms(100), 1.0), 19);
        assert_eq!(bdp_packets(10_000_000, ms(100), 0.5), 63);
    }
}
