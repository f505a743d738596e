//! ECN end to end (RFC 3168) over the emulator: a RED bottleneck that
//! marks ECN-capable packets instead of dropping them early, shared by a
//! flow that negotiated ECN and one that did not.
#![cfg(feature = "emu")]

use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::emu::{self, DumbbellSpec, FlowParams, QueueSpec, Scenario, DUMBBELL_MIDDLE};
use std::time::Duration;

fn config(ecn: bool) -> Config {
    Config {
        mss: 1000,
        timestamps: false,
        ack_policy: AckPolicyConfig::DELAYED,
        min_rto: Duration::from_millis(200),
        ecn,
        ..Config::default()
    }
}

/// 2 Mbit/s, 40 ms RTT plus access links, RED 5/15 packets with ECN and
/// a 300-packet hard limit; two 2 MB flows. `ecn` says which flows
/// negotiate ECN; those also send ECN-capable packets, as a host with ECN
/// on would.
fn run(ecn: [bool; 2]) -> emu::RunResult {
    let red = emu::RedParams {
        ecn: true,
        // A queue average that follows within a few round trips, and
        // room for slow start's overshoot before it does: the test is
        // about answering marks, not about RED's reaction time.
        w_q: 0.02,
        ..emu::RedParams::paper_004(300)
    };
    let spec = DumbbellSpec::symmetric(2_000_000, Duration::from_millis(20), QueueSpec::Red(red));
    let flows: Vec<FlowParams> = ecn
        .iter()
        .enumerate()
        .map(|(k, &on)| {
            let mut fp = FlowParams::new(config(on), 2_000_000);
            fp.ecn_capable = on;
            // The plain flow first: once it holds the queue average
            // inside RED's range, the ECN flow's slow start meets marks
            // early instead of overshooting into forced drops.
            fp.start = Duration::from_millis(if on { 1_000 } else { 0 });
            fp.access_delay = Duration::from_millis(1 + 2 * k as u64);
            fp
        })
        .collect();
    emu::run(&Scenario::dumbbell(&spec, &flows)).unwrap()
}

#[test]
fn ecn_flow_is_slowed_by_marks_without_drops_and_plain_flow_by_drops() {
    let r = run([true, false]);
    assert!(r.all_finished, "{r:?}");
    let (ecn, plain) = (&r.flows[0], &r.flows[1]);
    for f in [ecn, plain] {
        assert!(f.delivered_all && f.content_ok, "{f:?}");
    }
    let m = &r.links[DUMBBELL_MIDDLE.0];
    eprintln!(
        "marks {} drops {}; ecn flow: {:?}; plain flow: {:?}",
        m.ecn_marks, m.drops, ecn.client_stats, plain.client_stats
    );
    assert!(m.ecn_marks > 0, "{m:?}");
    // The ECN flow answered the marks: reductions, and (almost) nothing
    // to resend, since RED marked its packets instead of dropping them.
    let e = ecn.client_stats;
    assert!(e.ecn_reductions > 0, "{e:?}");
    assert!(e.retransmissions <= 2, "{e:?}");
    assert_eq!(e.timeouts, 0, "{e:?}");
    // The flow without ECN meets the same queue as drops.
    let p = plain.client_stats;
    assert_eq!(p.ecn_reductions, 0);
    assert!(p.retransmissions > e.retransmissions, "{p:?} vs {e:?}");
    assert!(m.drops > 0, "{m:?}");
}

#[test]
fn marks_without_negotiation_are_not_answered() {
    // Both flows send ECN-capable packets but only as far as the queue is
    // concerned: without the Config switch nothing echoes the marks, the
    // queue fills to its limit and drops.
    let red = emu::RedParams {
        ecn: true,
        ..emu::RedParams::paper_004(30)
    };
    let spec = DumbbellSpec::symmetric(2_000_000, Duration::from_millis(20), QueueSpec::Red(red));
    let mut fp = FlowParams::new(config(false), 2_000_000);
    fp.ecn_capable = true;
    let r = emu::run(&Scenario::dumbbell(&spec, &[fp])).unwrap();
    assert!(r.all_finished);
    let m = &r.links[DUMBBELL_MIDDLE.0];
    assert!(m.ecn_marks > 0 && m.drops > 0, "{m:?}");
    assert_eq!(r.flows[0].client_stats.ecn_reductions, 0);
}
