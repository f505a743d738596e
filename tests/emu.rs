//! Cross-module tests of the link emulator: real connections over emulated
//! links, topologies, determinism, measurements and captures.
//!
//! Configs use MSS 1000 with timestamps off, so that data segments carry
//! exactly 1000 payload bytes as in the papers (the connection would
//! subtract 12 bytes of timestamp option from the MSS otherwise).
#![cfg(feature = "emu")]

use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::emu::{
    self, transmission_time, CaptureSpec, CrossTrafficSpec, DumbbellSpec, EmuError, FlowParams,
    HookAction, HopSpec, LinkHook, LinkQueue, LossModel, PacketInfo, PacketKind, Period, QueueSpec,
    Scenario, Simulator, DUMBBELL_MIDDLE,
};
use ackwise::time::Instant;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

fn config() -> Config {
    Config {
        mss: 1000,
        timestamps: false,
        ack_policy: AckPolicyConfig::Every,
        min_rto: Duration::from_millis(200),
        ..Config::standard_tcp()
    }
}

fn one_flow_dumbbell(rate_bps: u64, one_way: Duration, buffer: usize, bytes: u64) -> Scenario {
    let spec = DumbbellSpec::symmetric(rate_bps, one_way, QueueSpec::drop_tail(buffer));
    Scenario::dumbbell(&spec, &[FlowParams::new(config(), bytes)])
}

#[test]
fn single_flow_over_a_t1_bottleneck() {
    // 1.5 Mbit/s, 100 ms RTT, 19-packet DropTail, 1000 segments of 1000 B.
    let s = one_flow_dumbbell(1_500_000, Duration::from_millis(50), 19, 1_000_000);
    let r = emu::run(&s).unwrap();
    let f = &r.flows[0];
    assert!(
        r.all_finished && f.finished && f.delivered_all && f.content_ok,
        "{f:?}"
    );
    let goodput = f.goodput_bps.unwrap();
    assert!(
        goodput < 1_500_000.0 && goodput > 750_000.0,
        "goodput {goodput}"
    );
    assert!(f.data_packets >= 1000, "{}", f.data_packets);
    // ACK every segment: about one pure ACK per data segment, 40 B each
    // plus SACK blocks while recovering.
    assert!(f.ack_packets >= 900, "{f:?}");
    assert!(f.ack_bytes >= 40 * f.ack_packets && f.ack_bytes < 60 * f.ack_packets);
    assert_eq!(f.data_bytes, 1040 * f.data_packets);
    let middle = &r.links[DUMBBELL_MIDDLE.0];
    assert!(middle.utilization > 0.5 && middle.utilization <= 1.0);
    assert!(middle.peak_queue_packets <= 19);
}

/// Records the instants at which packets arrive at a link.
#[derive(Debug, Default)]
struct Recorder {
    seen: Rc<RefCell<Vec<(Instant, PacketInfo)>>>,
    drop_acks: bool,
}

impl LinkHook for Recorder {
    fn on_arrival(&mut self, now: Instant, pkt: &PacketInfo, _q: &dyn LinkQueue) -> HookAction {
        self.seen.borrow_mut().push((now, *pkt));
        if self.drop_acks && pkt.kind == PacketKind::PureAck {
            HookAction::Drop
        } else {
            HookAction::Pass
        }
    }
}

#[test]
fn serialisation_plus_delay() {
    // One 1250-byte datagram over a 1 Mbit/s, 7 ms link into a second
    // link whose hook timestamps it: 10 ms + 7 ms after it was sent.
    let mut s = Scenario::default();
    for (name, rate) in [("a", 1_000_000), ("b", 1_000_000_000)] {
        s.links.push(emu::LinkSpec {
            name: name.into(),
            rate_bps: rate,
            delay: Duration::from_millis(7),
            queue: QueueSpec::drop_tail(10),
            loss: LossModel::None,
            jitter: None,
        });
    }
    s.cross_traffic.push(CrossTrafficSpec {
        path: vec![0, 1],
        rate_bps: 1_000, // 10 s per datagram: only one in the on period
        packet_bytes: 1250,
        on: Period::Fixed(Duration::from_millis(1)),
        off: Period::Fixed(Duration::from_secs(100)),
        start: Duration::from_millis(3),
    });
    s.horizon = Duration::from_secs(1);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim = Simulator::new(&s).unwrap();
    sim.set_hook(
        1,
        Box::new(Recorder {
            seen: seen.clone(),
            drop_acks: false,
        }),
    )
    .unwrap();
    let r = sim.run().unwrap();
    assert_eq!(r.cross_packets, 1);
    let t = seen.borrow()[0].0;
    let expect =
        Duration::from_millis(3) + transmission_time(1250, 1_000_000) + Duration::from_millis(7);
    assert_eq!(t, Instant::ZERO + expect);
    assert_eq!(expect, Duration::from_millis(20));
    assert_eq!(r.links[1].packets, 1);
}

#[test]
fn custom_hook_is_called_and_can_drop() {
    let s = one_flow_dumbbell(10_000_000, Duration::from_millis(10), 50, 100_000);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim = Simulator::new(&s).unwrap();
    sim.set_hook(
        DUMBBELL_MIDDLE.1,
        Box::new(Recorder {
            seen: seen.clone(),
            drop_acks: false,
        }),
    )
    .unwrap();
    let r = sim.run().unwrap();
    assert!(r.flows[0].finished);
    let acks = seen
        .borrow()
        .iter()
        .filter(|(_, p)| p.kind == PacketKind::PureAck)
        .count() as u64;
    assert_eq!(acks, r.flows[0].ack_packets);
    assert!(seen.borrow().iter().all(|(_, p)| !p.toward_server));

    // Dropping every pure ACK on the reverse path stalls the transfer.
    let mut s2 = s.clone();
    s2.horizon = Duration::from_secs(5);
    let mut sim = Simulator::new(&s2).unwrap();
    let rec = Recorder {
        seen: Rc::default(),
        drop_acks: true,
    };
    sim.set_hook(DUMBBELL_MIDDLE.1, Box::new(rec)).unwrap();
    let r = sim.run().unwrap();
    assert!(!r.flows[0].finished && !r.all_finished);
    assert!(r.links[DUMBBELL_MIDDLE.1].hook_drops > 0);
    assert_eq!(r.elapsed, Duration::from_secs(5));
}

fn with_cross_traffic(seed: u64) -> Scenario {
    let spec = DumbbellSpec::symmetric(
        2_000_000,
        Duration::from_millis(20),
        QueueSpec::drop_tail(20),
    );
    let mut flows = vec![
        FlowParams::new(config(), 300_000),
        FlowParams::new(config(), 300_000),
    ];
    flows[1].start = Duration::from_millis(100);
    flows[1].access_delay = Duration::from_millis(5);
    let mut s = Scenario::dumbbell(&spec, &flows);
    s.cross_traffic.push(CrossTrafficSpec {
        path: vec![DUMBBELL_MIDDLE.0],
        rate_bps: 1_000_000,
        packet_bytes: 500,
        on: Period::Exponential {
            mean: Duration::from_millis(200),
        },
        off: Period::Exponential {
            mean: Duration::from_millis(200),
        },
        start: Duration::ZERO,
    });
    s.seed = seed;
    s.sample_interval = Some(Duration::from_millis(100));
    s.sampled_links = vec![DUMBBELL_MIDDLE.0];
    s
}

#[test]
fn same_seed_same_result_different_seed_different_timing() {
    let a = emu::run(&with_cross_traffic(1)).unwrap();
    let b = emu::run(&with_cross_traffic(1)).unwrap();
    assert_eq!(a, b);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert!(a.all_finished);
    let c = emu::run(&with_cross_traffic(2)).unwrap();
    assert!(c.all_finished);
    assert_ne!(a.cross_packets, c.cross_packets);
    assert_ne!(a.flows[0].completion_time, c.flows[0].completion_time);
    let series = a.series.as_ref().unwrap();
    assert_eq!(series.flows[0].cwnd.len(), series.times.len());
    assert_eq!(series.queues[0].1.len(), series.times.len());
    assert!(series.flows[0].cwnd.iter().any(|&w| w > 0));
}

/// Three 2 Mbit/s hops with 20-packet drop-tail queues and four flows of
/// `bytes` starting 100 ms apart.
fn parking_lot_setup(bytes: u64) -> (HopSpec, Vec<FlowParams>) {
    let hop = HopSpec {
        rate_bps: 2_000_000,
        delay: Duration::from_millis(10),
        queue: QueueSpec::drop_tail(20),
        loss: LossModel::None,
        jitter: None,
    };
    let flows = (0..4)
        .map(|i| FlowParams {
            start: Duration::from_millis(100 * i),
            ..FlowParams::new(config(), bytes)
        })
        .collect();
    (hop, flows)
}

#[test]
fn parking_lot_long_flow_gets_less() {
    let (hop, flows) = parking_lot_setup(1_000_000);
    let s = Scenario::parking_lot(&hop, &flows);
    let r = emu::run(&s).unwrap();
    assert!(r.all_finished, "{:?}", r.flows);
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps.unwrap()).collect();
    for short in &g[1..] {
        assert!(g[0] < *short, "goodputs {g:?}");
    }
    let j = r.goodput_fairness().unwrap();
    assert!(j < 1.0 && j > 0.25);
}

#[test]
fn shared_last_parking_lot_routes_every_flow_through_the_last_hop() {
    use ackwise::emu::{ParkingLotRoutes, PARKING_LOT_HOPS};
    let (hop, flows) = parking_lot_setup(300_000);
    let s = Scenario::parking_lot_with(&hop, &flows, ParkingLotRoutes::SharedLast);
    let [h0, h1, h2] = PARKING_LOT_HOPS;
    let hops = |f: &ackwise::emu::FlowSpec| -> Vec<usize> {
        f.forward_path
            .iter()
            .copied()
            .filter(|l| PARKING_LOT_HOPS.contains(l))
            .collect()
    };
    assert_eq!(hops(&s.flows[0]), vec![h2]);
    assert_eq!(hops(&s.flows[1]), vec![h1, h2]);
    assert_eq!(hops(&s.flows[2]), vec![h0, h1, h2]);
    assert_eq!(hops(&s.flows[3]), vec![h0, h1, h2]);
    let r = emu::run(&s).unwrap();
    assert!(r.all_finished, "{:?}", r.flows);
    // Every byte crossed the last hop; the first hop carried only the two
    // long flows' share.
    assert!(r.links[h2].bytes > r.links[h0].bytes);
}

#[test]
fn two_way_traffic_mixes_data_and_acks_on_the_middle_link() {
    let spec = DumbbellSpec::symmetric(
        5_000_000,
        Duration::from_millis(20),
        QueueSpec::drop_tail(25),
    );
    let flows: Vec<FlowParams> = (0..4)
        .map(|i| FlowParams {
            start: Duration::from_millis(100 * i),
            access_delay: Duration::from_millis(5),
            reverse: i % 2 == 1,
            ..FlowParams::new(config(), 200_000)
        })
        .collect();
    let r = emu::run(&Scenario::dumbbell(&spec, &flows)).unwrap();
    assert!(r.all_finished);
    // Both directions carry about the same data volume.
    let (f, b) = (&r.links[DUMBBELL_MIDDLE.0], &r.links[DUMBBELL_MIDDLE.1]);
    assert!(f.bytes > 400_000 && b.bytes > 400_000, "{f:?} {b:?}");
    assert!(r.completion_fairness().unwrap() > 0.5);
}

#[test]
fn asymmetric_reverse_link_slows_the_transfer() {
    let fast = one_flow_dumbbell(10_000_000, Duration::from_millis(5), 100, 500_000);
    let mut spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(5),
        QueueSpec::drop_tail(100),
    );
    spec.reverse = HopSpec {
        rate_bps: 28_800,
        delay: Duration::from_millis(50),
        queue: QueueSpec::drop_tail(10),
        loss: LossModel::None,
        jitter: None,
    };
    spec.access_rate_bps = Some(10_000_000);
    let slow = Scenario::dumbbell(&spec, &[FlowParams::new(config(), 500_000)]);
    let (a, b) = (emu::run(&fast).unwrap(), emu::run(&slow).unwrap());
    assert!(a.all_finished && b.all_finished);
    assert!(b.flows[0].completion_time.unwrap() > 2 * a.flows[0].completion_time.unwrap());
    assert!(b.links[DUMBBELL_MIDDLE.1].utilization > 0.5);
}

#[test]
fn red_with_ecn_marks_instead_of_dropping() {
    let red = emu::RedParams {
        ecn: true,
        ..emu::RedParams::paper_004(100)
    };
    let spec = DumbbellSpec::symmetric(2_000_000, Duration::from_millis(20), QueueSpec::Red(red));
    let mut fp = FlowParams::new(config(), 1_000_000);
    fp.ecn_capable = true;
    let r = emu::run(&Scenario::dumbbell(&spec, &[fp])).unwrap();
    let m = &r.links[DUMBBELL_MIDDLE.0];
    assert!(r.all_finished);
    assert!(m.ecn_marks > 0, "{m:?}");
    assert_eq!(r.flows[0].ce_marks, m.ecn_marks);
}

#[test]
fn invalid_scenarios_are_typed_errors() {
    let good = one_flow_dumbbell(1_000_000, Duration::from_millis(10), 10, 1000);
    let mut s = good.clone();
    s.links[0].rate_bps = 0;
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidLink { link: 0, .. })
    ));
    let mut s = good.clone();
    s.links[1].queue = QueueSpec::drop_tail(0);
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidLink { link: 1, .. })
    ));
    let mut s = good.clone();
    s.flows[0].forward_path.push(99);
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidFlow { flow: 0, .. })
    ));
    let mut s = good.clone();
    s.flows[0].bytes = 0;
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidFlow { flow: 0, .. })
    ));
    let mut s = good.clone();
    s.flows[0].server.mss = 1;
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidConfig { flow: 0, .. })
    ));
    let mut s = good.clone();
    s.horizon = Duration::ZERO;
    assert!(matches!(emu::run(&s), Err(EmuError::InvalidScenario(_))));
    let mut s = good.clone();
    s.links[0].queue = QueueSpec::Red(emu::RedParams {
        w_q: f64::NAN,
        ..emu::RedParams::paper_004(10)
    });
    assert!(matches!(
        emu::run(&s),
        Err(EmuError::InvalidLink { link: 0, .. })
    ));
    let mut sim = Simulator::new(&good).unwrap();
    assert!(sim.set_hook(1000, Box::new(emu::NoHook)).is_err());
}

fn capture_scenario(path: &std::path::Path) -> Scenario {
    let mut cfg = config();
    cfg.timestamps = true;
    cfg.mss = 1012;
    let spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(10),
        QueueSpec::drop_tail(50),
    );
    let mut s = Scenario::dumbbell(&spec, &[FlowParams::new(cfg, 50_000)]);
    s.captures.push(CaptureSpec {
        link: DUMBBELL_MIDDLE.0,
        path: path.to_path_buf(),
    });
    s
}

#[test]
fn pcap_capture_has_header_and_every_packet() {
    let path = std::env::temp_dir().join(format!("ackwise-emu-{}.pcap", std::process::id()));
    let r = emu::run(&capture_scenario(&path)).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[0..4], &0xa1b2_c3d4u32.to_le_bytes());
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101);
    let mut off = 24;
    let mut count = 0u64;
    while off + 16 <= bytes.len() {
        let incl = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        assert_eq!(bytes[off + 16] >> 4, 4, "IPv4");
        off += 16 + incl;
        count += 1;
    }
    assert_eq!(off, bytes.len());
    assert_eq!(count, r.links[DUMBBELL_MIDDLE.0].packets);
    assert!(count > 50);

    // Optional cross-check with tshark when it is installed.
    let out = std::process::Command::new("tshark")
        .args(["-r"])
        .arg(&path)
        .args(["-T", "fields", "-e", "tcp.seq", "-e", "tcp.options.sack_le"])
        .args([
            "-e",
            "tcp.options.timestamp.tsval",
            "-e",
            "ip.checksum.status",
        ])
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
        ])
        .args(["-e", "tcp.checksum.status"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len() as u64, count);
            for l in &lines {
                let cols: Vec<&str> = l.split('\t').collect();
                assert!(!cols[0].is_empty(), "tcp.seq missing: {l}");
                assert!(!cols[2].is_empty(), "tsval missing: {l}");
                assert_eq!(cols[3], "1", "ip checksum good (1 = good): {l}");
                assert_eq!(cols[4], "1", "tcp checksum good: {l}");
            }
        }
        _ => {
            assert!(
                std::env::var_os("ACKWISE_REQUIRE_TSHARK").is_none(),
                "ACKWISE_REQUIRE_TSHARK is set but tshark does not run"
            );
            eprintln!("tshark not available; skipping the decode check");
        }
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn measurement_window_leaves_out_the_start() {
    // A flow far larger than 20 s can carry: throughput and utilization
    // over [10 s, 20 s] are those of the steady state, and the counters
    // cover only the window.
    let mut whole = one_flow_dumbbell(1_000_000, Duration::from_millis(50), 13, 1 << 40);
    whole.horizon = Duration::from_secs(20);
    let mut window = whole.clone();
    window.measure_from = Duration::from_secs(10);
    let a = emu::run(&whole).unwrap();
    let b = emu::run(&window).unwrap();
    assert!(!a.all_finished && !b.all_finished);
    assert_eq!(a.elapsed, Duration::from_secs(20));
    assert_eq!(a.measured, Duration::from_secs(20));
    assert_eq!(b.measured, Duration::from_secs(10));
    let (fa, fb) = (&a.flows[0], &b.flows[0]);
    // The same run underneath: only the accounting differs.
    assert_eq!(fa.client_stats, fb.client_stats);
    assert!(fb.data_packets < fa.data_packets && fb.data_packets > fa.data_packets / 3);
    assert!(fb.measured_bytes < fa.measured_bytes);
    // 1000 payload bytes of every 1040 on the link: at most 96% of 1 Mbit/s.
    assert!(
        fb.throughput_bps > 0.85e6 && fb.throughput_bps < 0.962e6,
        "{fb:?}"
    );
    // Slow start is outside the window, so the window sees a busier link.
    let (ua, ub) = (
        a.links[DUMBBELL_MIDDLE.0].utilization,
        b.links[DUMBBELL_MIDDLE.0].utilization,
    );
    assert!(ub > 0.9 && ub >= ua, "{ua} {ub}");
    // A window that never opens is refused.
    let mut bad = whole;
    bad.measure_from = bad.horizon;
    assert!(emu::run(&bad).is_err());
}

#[test]
fn random_loss_on_the_wire_is_counted_apart_and_recovered() {
    // 1% Bernoulli loss on the forward middle link, a queue too big to
    // overflow: every loss there is the path's, none the queue's.
    let mut spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(10),
        QueueSpec::drop_tail(10_000),
    );
    spec.forward.loss = LossModel::Bernoulli { p: 0.01 };
    let s = Scenario::dumbbell(&spec, &[FlowParams::new(config(), 2_000_000)]);
    let r = emu::run(&s).unwrap();
    let f = &r.flows[0];
    assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
    let fwd = &r.links[DUMBBELL_MIDDLE.0];
    assert_eq!(fwd.drops, 0);
    // About 20 of ~2000 packets: within generous binomial bounds.
    assert!(fwd.lost >= 5 && fwd.lost <= 50, "lost {}", fwd.lost);
    assert!(f.retransmissions >= fwd.lost, "{f:?}");
    // A lost packet used the link: it is in the transmitted count.
    assert!(fwd.packets >= f.data_packets);
    assert_eq!(r.links[DUMBBELL_MIDDLE.1].lost, 0);
    // Same seed, same run; another seed, other losses.
    assert_eq!(emu::run(&s).unwrap(), r);
    let mut other = s.clone();
    other.seed = 1;
    assert_ne!(emu::run(&other).unwrap().links[0], r.links[0]);
}

/// Data segments in a capture of `LINKTYPE_RAW` IPv4 records: each
/// record's TCP sequence number and payload length, in capture order.
fn captured_segments(path: &std::path::Path) -> Vec<(u32, usize)> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let ip = &bytes[at + 16..at + 16 + len];
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let tcp = &ip[ihl..];
        let header = usize::from(tcp[12] >> 4) * 4;
        let payload = total - ihl - header;
        if payload > 0 {
            out.push((u32::from_be_bytes(tcp[4..8].try_into().unwrap()), payload));
        }
        at += 16 + len;
    }
    out
}

/// For each data segment's first transmission in a one-flow run over a
/// middle link that loses 3% at random (and whose queue drops nothing):
/// its sequence number and whether the link lost it. Captures record a
/// packet entering the middle link as it starts, lost or not; the
/// receiver's access link sees the survivors in the same order, so the
/// lost ones are what the second list skips.
fn first_transmissions_lost(config: Config, seed: u64, dir: &std::path::Path) -> Vec<(u32, bool)> {
    let mut spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(10),
        QueueSpec::drop_tail(10_000),
    );
    spec.forward.loss = LossModel::Bernoulli { p: 0.03 };
    let mut s = Scenario::dumbbell(&spec, &[FlowParams::new(config, 600_000)]);
    s.seed = seed;
    let out_link = s
        .links
        .iter()
        .position(|l| l.name == "f0.right.down")
        .unwrap();
    let (into, out) = (dir.join("into.pcap"), dir.join("out.pcap"));
    for (link, path) in [(DUMBBELL_MIDDLE.0, &into), (out_link, &out)] {
        s.captures.push(CaptureSpec {
            link,
            path: path.clone(),
        });
    }
    let r = emu::run(&s).unwrap();
    assert!(
        r.flows[0].finished && r.flows[0].content_ok,
        "{:?}",
        r.flows[0]
    );
    let (ins, outs) = (captured_segments(&into), captured_segments(&out));
    let mut next_out = outs.iter().peekable();
    let mut seen = std::collections::HashSet::new();
    let mut firsts = Vec::new();
    for seg in &ins {
        let delivered = next_out.peek() == Some(&seg);
        if delivered {
            next_out.next();
        }
        if seen.insert(seg.0) {
            firsts.push((seg.0, !delivered));
        }
    }
    assert!(next_out.next().is_none(), "the survivors are a subsequence");
    firsts
}

/// Two runs of one seed whose receivers acknowledge differently (every
/// segment, delayed ACKs) send their segments at other instants and
/// resend at other times, yet the link loses the same first
/// transmissions in both: a packet's loss is keyed by the packet, not by
/// how many draws came before it (common random numbers).
#[test]
fn two_strategies_on_one_seed_lose_the_same_segments() {
    let dir = std::env::temp_dir().join(format!("ackwise-emu-crn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let every = first_transmissions_lost(config(), 7, &dir);
    let delayed = first_transmissions_lost(
        Config {
            ack_policy: Config::standard_tcp().ack_policy,
            ..config()
        },
        7,
        &dir,
    );
    let other_seed = first_transmissions_lost(config(), 8, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let lost = |v: &[(u32, bool)]| -> std::collections::BTreeSet<u32> {
        v.iter().filter(|x| x.1).map(|x| x.0).collect()
    };
    assert_eq!(every.len(), 600, "600 segments of 1000 bytes");
    assert_eq!(
        every.iter().map(|x| x.0).collect::<Vec<_>>(),
        delayed.iter().map(|x| x.0).collect::<Vec<_>>()
    );
    assert!(lost(&every).len() >= 6, "3% of 600: {:?}", lost(&every));
    assert_eq!(lost(&every), lost(&delayed));
    assert_ne!(lost(&every), lost(&other_seed));
}

#[test]
fn bursty_loss_on_the_ack_path_and_bad_models_rejected() {
    let mut spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(10),
        QueueSpec::drop_tail(10_000),
    );
    spec.reverse.loss = LossModel::gilbert_elliott_bursty(0.05, 4.0);
    let s = Scenario::dumbbell(&spec, &[FlowParams::new(config(), 1_000_000)]);
    let r = emu::run(&s).unwrap();
    assert!(r.flows[0].finished, "{:?}", r.flows[0]);
    assert!(r.links[DUMBBELL_MIDDLE.1].lost > 0);
    assert_eq!(r.links[DUMBBELL_MIDDLE.0].lost, 0);

    let mut bad = s.clone();
    bad.links[0].loss = LossModel::Bernoulli { p: 2.0 };
    assert!(matches!(
        emu::run(&bad),
        Err(EmuError::InvalidLink { link: 0, .. })
    ));
}

#[test]
fn jitter_keeps_order_and_reordering_does_not() {
    use ackwise::emu::Jitter;
    let run = |jitter: Option<Jitter>| {
        let mut spec = DumbbellSpec::symmetric(
            10_000_000,
            Duration::from_millis(10),
            QueueSpec::drop_tail(10_000),
        );
        spec.forward.jitter = jitter;
        let s = Scenario::dumbbell(&spec, &[FlowParams::new(config(), 1_000_000)]);
        let r = emu::run(&s).unwrap();
        assert_eq!(emu::run(&s).unwrap(), r, "same seed, same run");
        let f = &r.flows[0];
        assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
        r
    };
    let plain = run(None);
    assert_eq!(plain.flows[0].client_stats.duplicate_acks_received, 0);
    // Order-keeping jitter of up to 3 ms: no duplicate ACK, no
    // retransmission, but the transfer takes longer.
    let jittered = run(Some(Jitter::uniform(Duration::from_millis(3))));
    let f = &jittered.flows[0];
    assert_eq!(f.client_stats.duplicate_acks_received, 0, "{f:?}");
    assert_eq!(f.retransmissions, 0);
    assert!(f.completion_time > plain.flows[0].completion_time);
    // 5% of segments held back 5 ms (several segment times at 10 Mbit/s):
    // the receiver sees holes, so duplicate ACKs come back.
    let reordered = run(Some(Jitter::reorder(0.05, Duration::from_millis(5))));
    let f = &reordered.flows[0];
    assert!(f.client_stats.duplicate_acks_received > 10, "{f:?}");
}

#[test]
fn a_shared_medium_serialises_both_directions_and_charges_per_frame() {
    use ackwise::emu::MediumSpec;
    let run = |policy: AckPolicyConfig, shared: bool| {
        let spec = DumbbellSpec::symmetric(
            54_000_000,
            Duration::from_millis(5),
            QueueSpec::drop_tail(10_000),
        );
        let mut c = config();
        c.ack_policy = policy;
        let mut s = Scenario::dumbbell(&spec, &[FlowParams::new(c, 5_000_000)]);
        if shared {
            s.media.push(MediumSpec {
                links: vec![DUMBBELL_MIDDLE.0, DUMBBELL_MIDDLE.1],
                per_frame_overhead: Duration::from_micros(120),
            });
        }
        let r = emu::run(&s).unwrap();
        assert_eq!(emu::run(&s).unwrap(), r, "deterministic");
        let f = &r.flows[0];
        assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
        r
    };
    let every = run(AckPolicyConfig::Every, true);
    let (fwd, rev) = (
        &every.links[DUMBBELL_MIDDLE.0],
        &every.links[DUMBBELL_MIDDLE.1],
    );
    // One transmitter: the two directions' airtime never exceeds the run.
    assert!(
        fwd.utilization + rev.utilization <= 1.0 + 1e-9,
        "{fwd:?} {rev:?}"
    );
    // Every frame pays 120 us: 5000 data frames alone take 0.6 s of air.
    let data_air_s = fwd.packets as f64 * (120e-6 + 1040.0 * 8.0 / 54e6);
    assert!(every.elapsed.as_secs_f64() > data_air_s);
    // The same flow on separate full-duplex links is much faster, and on
    // the medium fewer ACKs leave more airtime for data.
    let duplex = run(AckPolicyConfig::Every, false);
    let delayed = run(AckPolicyConfig::DELAYED, true);
    let gput = |r: &emu::RunResult| r.flows[0].goodput_bps.unwrap();
    assert!(
        gput(&duplex) > 1.2 * gput(&every),
        "{} {}",
        gput(&duplex),
        gput(&every)
    );
    assert!(
        gput(&delayed) > 1.1 * gput(&every),
        "{} {}",
        gput(&delayed),
        gput(&every)
    );
}

#[test]
fn ticks_deliver_in_bunches_and_only_the_data_sender_reads_them_whole() {
    use ackwise::emu::Jitter;
    // 50 Mbit/s, 50 ms RTT, a 100-packet buffer: slow start overshoots,
    // so the sender spends a recovery choosing what to resend.
    let run = |batches: bool| {
        let mut s = one_flow_dumbbell(50_000_000, Duration::from_millis(25), 100, 4_000_000);
        let f = &s.flows[0];
        let last_hops = [f.forward_path[2], f.reverse_path[2]];
        for l in last_hops {
            s.links[l].jitter = Some(Jitter::tick(Duration::from_micros(1100)));
        }
        s.client_reads_batches = batches;
        let r = emu::run(&s).unwrap();
        assert_eq!(emu::run(&s).unwrap(), r, "same seed, same run");
        let f = &r.flows[0];
        assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
        assert!(
            f.retransmissions > 0,
            "the path must make the sender recover"
        );
        // The receiver answers every segment in both: a batch read by
        // the receiver would draw one ACK per tick instead (about a
        // quarter as many here).
        assert!(
            f.ack_packets as f64 >= 0.95 * f.data_packets as f64,
            "{} ACKs for {} segments",
            f.ack_packets,
            f.data_packets
        );
        r
    };
    let (each, batched) = (run(false), run(true));
    // Reading a tick's SACKs whole before choosing what to send changes
    // the recovery (on this path: what is resent when).
    let key = |r: &emu::RunResult| {
        let f = &r.flows[0];
        (f.completion_time, f.retransmissions, f.data_packets)
    };
    assert_ne!(key(&each), key(&batched));
}

#[test]
fn payloads_left_out_in_flight_change_nothing() {
    // Without a capture, data payloads that are the pattern travel as
    // headers alone and are rebuilt for the receiver, the senders leave
    // them in their send buffers, and neither end computes checksums; a
    // capture keeps every byte in flight and every checksum. Loss,
    // reordering and two flows with timestamps and SACK: the two runs
    // must agree on every figure.
    use ackwise::emu::Jitter;
    let mut spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(10),
        QueueSpec::drop_tail(30),
    );
    spec.forward.loss = LossModel::Bernoulli { p: 0.01 };
    spec.forward.jitter = Some(Jitter::reorder(0.02, Duration::from_millis(3)));
    let mut cfg = config();
    cfg.timestamps = true;
    let s = Scenario::dumbbell(
        &spec,
        &[
            FlowParams::new(cfg.clone(), 1_500_000),
            FlowParams::new(config(), 700_000),
        ],
    );
    let elided = emu::run(&s).unwrap();
    for f in &elided.flows {
        assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
        assert!(f.retransmissions > 0, "the path should lose some: {f:?}");
    }
    let path = std::env::temp_dir().join(format!("ackwise-elide-{}.pcap", std::process::id()));
    let mut whole = s.clone();
    whole.captures.push(CaptureSpec {
        link: DUMBBELL_MIDDLE.1,
        path: path.clone(),
    });
    let kept = emu::run(&whole);
    let _ = std::fs::remove_file(&path);
    assert_eq!(kept.unwrap(), elided);
}
