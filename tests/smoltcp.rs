//! smoltcp as the other end of emulated flows: an ackwise sender against
//! an unmodified smoltcp receiver and a smoltcp sender against ackwise's
//! receiver policies, bytes intact under seeded loss and reordering; the
//! same seed gives the same run; lab strategies with
//! `+smoltcp-sender` / `+smoltcp-receiver` beside ackwise-only flows.
#![cfg(feature = "lab")]

use ackwise::connection::Config;
use ackwise::emu::{
    self, DumbbellSpec, FlowParams, FlowTransport, Jitter, LossModel, QueueSpec, RunResult,
    Scenario, SmoltcpEnd, DUMBBELL_MIDDLE,
};
use ackwise::lab::{RunPlan, Strategy};
use std::time::Duration;

fn config(strategy: &str) -> Config {
    let s: Strategy = strategy.parse().unwrap();
    s.apply(
        &Config {
            mss: 1000,
            ..Config::default()
        },
        Duration::from_millis(100),
        Duration::from_millis(100),
    )
}

fn lossy_path(flows: &[FlowParams], seed: u64) -> Scenario {
    let spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(20),
        QueueSpec::drop_tail(60),
    );
    let mut s = Scenario::dumbbell(&spec, flows);
    s.seed = seed;
    let middle = &mut s.links[DUMBBELL_MIDDLE.0];
    middle.loss = LossModel::Bernoulli { p: 0.01 };
    middle.jitter = Some(Jitter::reorder(0.01, Duration::from_millis(3)));
    s
}

fn smol_flow(strategy: &str, end: SmoltcpEnd, bytes: u64) -> FlowParams {
    FlowParams {
        transport: FlowTransport::Smoltcp(end),
        ..FlowParams::new(config(strategy), bytes)
    }
}

fn assert_intact(r: &RunResult, bytes: u64) {
    for f in &r.flows {
        assert!(f.finished && f.delivered_all && f.content_ok, "{f:?}");
        assert_eq!(f.measured_bytes, bytes, "{f:?}");
    }
}

#[test]
fn ackwise_senders_deliver_intact_to_a_smoltcp_receiver_under_loss() {
    let bytes = 1_500_000;
    for strategy in ["ae", "da", "4w", "4w-adaptive", "2waf"] {
        for seed in [1, 2] {
            let s = lossy_path(&[smol_flow(strategy, SmoltcpEnd::Receiver, bytes)], seed);
            let r = emu::run(&s).unwrap_or_else(|e| panic!("{strategy} seed {seed}: {e}"));
            assert_intact(&r, bytes);
            let f = &r.flows[0];
            assert!(r.links[DUMBBELL_MIDDLE.0].lost > 0, "loss model inactive");
            assert!(f.retransmissions > 0, "{strategy} seed {seed}: {f:?}");
            // smoltcp ignores the ACK-request option, so the sender falls
            // back to smoltcp's own ACKs, which it delays (up to 10 ms):
            // fewer than data segments.
            assert!(f.ack_packets < f.data_packets, "{strategy}: {f:?}");
        }
    }
}

#[test]
fn a_smoltcp_sender_delivers_intact_to_every_ackwise_receiver_policy() {
    let bytes = 1_000_000;
    for strategy in ["ae", "da", "smart", "smart-minrtt", "acc", "4w-adaptive"] {
        let s = lossy_path(&[smol_flow(strategy, SmoltcpEnd::Sender, bytes)], 3);
        let r = emu::run(&s).unwrap_or_else(|e| panic!("{strategy}: {e}"));
        assert_intact(&r, bytes);
        let f = &r.flows[0];
        // Retransmissions are counted from smoltcp's segments.
        assert!(f.retransmissions > 0, "{strategy}: {f:?}");
        assert!(f.ack_packets > 0 && f.data_packets >= bytes / 1000, "{f:?}");
    }
}

#[test]
fn ae_acknowledges_every_smoltcp_segment_and_smartacking_far_fewer() {
    // A clean path: smartacking thins ACKs once it sees the bottleneck
    // saturate, without the sender's help (paper 004); smoltcp timestamps
    // its segments, which is what the receiver's RTT estimate needs.
    let bytes = 2_000_000;
    let run = |strategy: &str| {
        let spec = DumbbellSpec::symmetric(
            10_000_000,
            Duration::from_millis(50),
            QueueSpec::drop_tail(125),
        );
        let s = Scenario::dumbbell(&spec, &[smol_flow(strategy, SmoltcpEnd::Sender, bytes)]);
        let r = emu::run(&s).unwrap();
        assert_intact(&r, bytes);
        r.flows[0].clone()
    };
    let ae = run("ae");
    let smart = run("smart-minrtt");
    // At least one ACK per segment that arrived (some of the segments sent
    // were dropped at the bottleneck: smoltcp's slow start overshoots).
    assert!(
        ae.ack_packets >= bytes / 1000,
        "ae acknowledged {} of {} segments",
        ae.ack_packets,
        ae.data_packets
    );
    assert!(
        smart.ack_packets * 3 < ae.ack_packets,
        "smart-minrtt {} ACKs, ae {}",
        smart.ack_packets,
        ae.ack_packets
    );
}

#[test]
fn the_same_seed_gives_the_same_smoltcp_run() {
    let flows = [
        smol_flow("4w-adaptive", SmoltcpEnd::Receiver, 500_000),
        smol_flow("smart-minrtt", SmoltcpEnd::Sender, 500_000),
        FlowParams::new(config("4w"), 500_000),
    ];
    let s = lossy_path(&flows, 11);
    let figures = |r: &RunResult| {
        r.flows
            .iter()
            .map(|f| {
                (
                    f.completion_time,
                    f.data_packets,
                    f.ack_packets,
                    f.retransmissions,
                )
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (emu::run(&s).unwrap(), emu::run(&s).unwrap());
    assert_intact(&a, 500_000);
    assert_eq!(figures(&a), figures(&b));
    let mut other = s.clone();
    other.seed = 12;
    assert_ne!(figures(&a), figures(&emu::run(&other).unwrap()));
}

#[test]
fn lab_strategies_name_the_smoltcp_end() {
    for name in [
        "4w-adaptive+smoltcp-receiver",
        "smart-minrtt+smoltcp-sender",
    ] {
        let s: Strategy = name.parse().unwrap();
        assert_eq!(s.name(), name);
    }
    for bad in [
        "ae+smoltcp-sender+smoltcp-receiver",
        "ae+smoltcp",
        "quic+smoltcp-sender",
    ] {
        assert!(bad.parse::<Strategy>().is_err(), "{bad}");
    }
}

#[test]
fn a_lab_run_puts_smoltcp_flows_beside_ackwise_flows() {
    let mut preset = ackwise::lab::presets::find("default").unwrap();
    preset.points.truncate(1);
    let strategies: Vec<Strategy> = [
        "4w-adaptive",
        "4w-adaptive+smoltcp-receiver",
        "smart-minrtt+smoltcp-sender",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let plan = RunPlan {
        preset,
        strategies: strategies.clone(),
        seed: 1,
        jobs: 1,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let records = ackwise::lab::run::run(&plan, false).unwrap();
    assert_eq!(records.len(), 3);
    for (r, s) in records.iter().zip(&strategies) {
        assert_eq!(r.strategy, s.name());
        assert!(r.all_finished, "{r:?}");
    }
}
