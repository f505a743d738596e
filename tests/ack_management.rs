//! In-network ACK management in the emulator: ACK filtering at the slow
//! reverse link (paper 000) and ACK delay control at the forward
//! router (paper 001), with real connections end to end.
#![cfg(feature = "lab")]

use ackwise::ack_path::{AckBufferConfig, DelayControlConfig, Filter, Service};
use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::emu::{
    self, DelayControlSpec, DumbbellSpec, FlowParams, HopSpec, LossModel, QueueSpec, RunResult,
    Scenario, DUMBBELL_MIDDLE,
};
use ackwise::lab::run::{self, RunPlan};
use ackwise::lab::{presets, Strategy};
use std::time::Duration;

fn config() -> Config {
    let mut c = Config {
        mss: 1000,
        ack_policy: AckPolicyConfig::Every,
        min_rto: Duration::from_millis(200),
        ..Config::default()
    };
    // Paper 000's Reno source starts from one segment.
    c.congestion.initial_window = Some(1000);
    c
}

/// Paper 000's path: 10 Mbit/s forward, 100 kbit/s reverse, 200 ms RTT;
/// `flows` transfers of `bytes`, the reverse queue `reverse`.
fn asymmetric(flows: usize, bytes: u64, reverse: QueueSpec, seed: u64) -> Scenario {
    let spec = DumbbellSpec {
        forward: HopSpec {
            rate_bps: 10_000_000,
            delay: Duration::from_millis(100),
            queue: QueueSpec::drop_tail(10_000),
            loss: LossModel::None,
            jitter: None,
        },
        reverse: HopSpec {
            rate_bps: 100_000,
            delay: Duration::from_millis(100),
            queue: reverse,
            loss: LossModel::None,
            jitter: None,
        },
        access_rate_bps: Some(100_000_000),
        access_queue: QueueSpec::drop_tail(1000),
    };
    let params: Vec<FlowParams> = (0..flows)
        .map(|_| FlowParams::new(config(), bytes))
        .collect();
    let mut s = Scenario::dumbbell(&spec, &params);
    s.seed = seed;
    s
}

fn filtering(filter: Filter, service: Service, limit: usize) -> QueueSpec {
    QueueSpec::AckFilter {
        config: AckBufferConfig::paper_000(
            filter,
            service,
            limit,
            100_000,
            Duration::from_millis(200),
        ),
        red: None,
    }
}

fn assert_intact(r: &RunResult) {
    assert!(r.all_finished, "not all flows finished");
    for f in &r.flows {
        assert!(f.delivered_all && f.content_ok, "{f:?}");
    }
}

#[test]
fn every_filter_delivers_intact_and_unloads_the_reverse_channel() {
    let plain = emu::run(&asymmetric(3, 2_000_000, QueueSpec::drop_tail(1000), 1)).unwrap();
    assert_intact(&plain);
    let rev = DUMBBELL_MIDDLE.1;
    let mean_ct = |r: &RunResult| {
        r.flows
            .iter()
            .map(|f| f.completion_time.unwrap().as_secs_f64())
            .sum::<f64>()
            / r.flows.len() as f64
    };
    for (filter, service) in [
        (Filter::Classic, Service::Fifo),
        (Filter::Static { delta: 10 }, Service::Fifo),
        (Filter::DELAYED, Service::Fifo),
        (Filter::PER_FLOW_DELAYED, Service::Fifo),
        (Filter::PER_FLOW_DELAYED, Service::RoundRobin),
    ] {
        let r = emu::run(&asymmetric(
            3,
            2_000_000,
            filtering(filter, service, 1000),
            1,
        ))
        .unwrap();
        assert_intact(&r);
        let (l, p) = (&r.links[rev], &plain.links[rev]);
        assert!(l.filtered > 0, "{filter:?}: nothing filtered");
        assert!(
            l.packets < p.packets,
            "{filter:?}: {} reverse packets against {} unfiltered",
            l.packets,
            p.packets
        );
        // The point of filtering on this path: the ACK queue no longer
        // stretches the RTT, so transfers end sooner.
        assert!(
            mean_ct(&r) < mean_ct(&plain),
            "{filter:?}: {:.2} s against {:.2} s",
            mean_ct(&r),
            mean_ct(&plain)
        );
    }
}

#[test]
fn a_small_filtering_buffer_with_lossy_reverse_still_delivers() {
    for seed in 1..=3 {
        let r = emu::run(&asymmetric(
            5,
            500_000,
            filtering(Filter::PER_FLOW_DELAYED, Service::RoundRobin, 10),
            seed,
        ))
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_intact(&r);
    }
}

#[test]
fn delay_control_keeps_the_forward_queue_near_its_threshold() {
    // A satellite-like path: 30 Mbit/s, 130 ms each way, a 250 kB forward
    // buffer; paper 001 (sec. 4) loses packets here without delay control.
    let run_with = |control: bool| {
        let spec = DumbbellSpec::symmetric(
            30_000_000,
            Duration::from_millis(130),
            QueueSpec::drop_tail(434),
        );
        let mut c = config();
        c.mss = 536;
        c.recv_buffer = 1 << 20;
        let mut s = Scenario::dumbbell(&spec, &[FlowParams::new(c, 10_000_000)]);
        s.seed = 1;
        if control {
            let ack_links = vec![*s.flows[0].reverse_path.last().unwrap()];
            s.delay_control = Some(DelayControlSpec {
                forward_link: DUMBBELL_MIDDLE.0,
                ack_links,
                config: DelayControlConfig::paper_001(30_000_000, 576),
            });
        }
        emu::run(&s).unwrap()
    };
    let without = run_with(false);
    let with = run_with(true);
    assert_intact(&without);
    assert_intact(&with);
    let fwd = DUMBBELL_MIDDLE.0;
    assert!(without.links[fwd].drops > 0, "no drops to avoid");
    assert_eq!(with.links[fwd].drops, 0);
    let held: u64 = with.links.iter().map(|l| l.delayed).sum();
    assert!(held > 0);
    // 50 kB at 576 bytes a packet is 87 packets; the queue may overshoot
    // by what is in flight when the leak slows, but stays well below the
    // uncontrolled peak.
    assert!(
        with.links[fwd].peak_queue_packets < without.links[fwd].peak_queue_packets,
        "{} against {}",
        with.links[fwd].peak_queue_packets,
        without.links[fwd].peak_queue_packets
    );
}

#[test]
fn invalid_delay_control_is_refused() {
    let mut s = asymmetric(1, 10_000, QueueSpec::drop_tail(10), 1);
    s.delay_control = Some(DelayControlSpec {
        forward_link: 99,
        ack_links: vec![],
        config: DelayControlConfig::paper_001(1_000_000, 1040),
    });
    assert!(emu::run(&s).is_err());
    let mut s = asymmetric(1, 10_000, QueueSpec::drop_tail(10), 1);
    s.delay_control = Some(DelayControlSpec {
        forward_link: 0,
        ack_links: vec![1],
        config: DelayControlConfig {
            fraction: 1.5,
            ..DelayControlConfig::paper_001(1_000_000, 1040)
        },
    });
    assert!(emu::run(&s).is_err());
    let s = asymmetric(
        1,
        10_000,
        filtering(Filter::Static { delta: 0 }, Service::Fifo, 10),
        1,
    );
    assert!(emu::run(&s).is_err());
}

#[test]
fn lab_filters_are_strategy_options_and_the_presets_run() {
    for name in [
        "ae+af-classic",
        "da+af-static-30",
        "ae+af-delayed",
        "ae+af-perflow",
        "ae+af-perflow-rr",
        "ae+adc",
    ] {
        let s: Strategy = name.parse().unwrap();
        assert_eq!(s.to_string(), name);
    }
    for bad in [
        "ae+af-static-0",
        "ae+af-static-x",
        "ae+af-bogus",
        "ae+adc+af-classic",
    ] {
        assert!(bad.parse::<Strategy>().is_err(), "{bad}");
    }
    // Delay control needs the dumbbell's forward router.
    let plan = RunPlan {
        strategies: vec!["da+adc".parse().unwrap()],
        preset: presets::find("p004-parking-lot").unwrap(),
        seed: 1,
        jobs: 1,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let e = run::run(&plan, false).unwrap_err().to_string();
    assert!(e.contains("+adc"), "{e}");
    // The cheapest point of p000-single: the optimum static threshold
    // beats no filtering once the transfer is long enough to fill the ACK
    // channel.
    let mut preset = presets::find("p000-single").unwrap();
    preset.points.retain(|p| {
        p.params
            .iter()
            .any(|(k, v)| *k == "transfer_segments" && *v == 1000.0)
    });
    let plan = RunPlan {
        strategies: vec!["ae".parse().unwrap(), "ae+af-static-30".parse().unwrap()],
        preset,
        seed: 1,
        jobs: 1,
        shard: None,
        sample_interval: None,
        pcap_dir: None,
    };
    let records = run::run(&plan, false).unwrap();
    let ct = |s: &str| {
        records
            .iter()
            .find(|r| r.strategy == s)
            .and_then(|r| r.mean_completion_s())
            .unwrap()
    };
    assert!(
        ct("ae+af-static-30") < ct("ae"),
        "{} vs {}",
        ct("ae+af-static-30"),
        ct("ae")
    );
    let filtered = records
        .iter()
        .find(|r| r.strategy == "ae+af-static-30")
        .unwrap()
        .filtered_acks();
    assert!(filtered > 0);
}
