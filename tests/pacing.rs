//! Pacing (paper 004 section 4.1) over the link emulator and over the
//! in-memory pipe: a paced flow builds a smaller bottleneck queue in slow
//! start, still delivers everything intact, runs deterministically, and a
//! pacing release is an ordinary wake-up, never a retransmission timeout.
//!
//! Configs use MSS 1000 with timestamps off, as in `tests/emu.rs`, so that
//! data segments carry exactly 1000 payload bytes.
#![cfg(feature = "emu")]

use ackwise::connection::{
    AckNonceMode, AckPolicyConfig, Config, ConfigError, Decrease, PacingConfig,
};
use ackwise::emu::{
    self, DumbbellSpec, EmuError, FlowParams, QueueSpec, RunResult, Scenario, DUMBBELL_MIDDLE,
};
use ackwise::testing::{transfer, Pipe, PipeConfig};
use ackwise::time::Instant;
use std::time::Duration;

fn config(pacing: Option<PacingConfig>) -> Config {
    Config {
        mss: 1000,
        timestamps: false,
        ack_policy: AckPolicyConfig::Every,
        min_rto: Duration::from_millis(200),
        pacing,
        // Full 1000-byte payloads, as docs/pacing.md's figures have them.
        ack_nonce: AckNonceMode::Off,
        ..Config::default()
    }
}

/// One flow over a 10 Mbit/s, 100 ms RTT bottleneck whose `buffer`-packet
/// DropTail queue is the only limit; the access links run at ten times
/// the bottleneck rate, so unpaced slow-start bursts reach the bottleneck
/// back to back. `docs/pacing.md` quotes this scenario.
fn scenario(pacing: Option<PacingConfig>, bytes: u64, buffer: usize, seed: u64) -> Scenario {
    let spec = DumbbellSpec::symmetric(
        10_000_000,
        Duration::from_millis(50),
        QueueSpec::drop_tail(buffer),
    );
    let mut s = Scenario::dumbbell(&spec, &[FlowParams::new(config(pacing), bytes)]);
    s.seed = seed;
    s
}

fn run(pacing: Option<PacingConfig>, bytes: u64, buffer: usize) -> RunResult {
    emu::run(&scenario(pacing, bytes, buffer, 1)).unwrap()
}

fn assert_intact(r: &RunResult) {
    let f = &r.flows[0];
    assert!(
        r.all_finished && f.finished && f.delivered_all && f.content_ok,
        "{f:?}"
    );
}

#[test]
fn paced_slow_start_builds_a_smaller_bottleneck_queue() {
    // 200 segments: the transfer ends in slow start, before the window
    // reaches the 125-segment path BDP plus a queue's worth.
    let mut table = String::new();
    for bytes in [100_000u64, 200_000] {
        let plain = run(None, bytes, 1000);
        let paced = run(Some(PacingConfig::default()), bytes, 1000);
        assert_intact(&plain);
        assert_intact(&paced);
        let q_plain = plain.links[DUMBBELL_MIDDLE.0].peak_queue_packets;
        let q_paced = paced.links[DUMBBELL_MIDDLE.0].peak_queue_packets;
        let t_plain = plain.flows[0].completion_time.unwrap();
        let t_paced = paced.flows[0].completion_time.unwrap();
        table += &format!(
            "{bytes} B: peak queue {q_plain} -> {q_paced} packets, \
             completion {t_plain:?} -> {t_paced:?}\n"
        );
        // Unpaced, every ACK releases two back-to-back segments that the
        // bottleneck drains at a tenth of their arrival rate.
        assert!(q_plain >= 15, "{table}");
        assert!(q_paced * 4 <= q_plain, "{table}");
        // Pacing costs a little time in slow start (the window is spread
        // over 0.9 SRTT rather than sent at once), but not much.
        assert!(t_paced >= t_plain, "{table}");
        assert!(t_paced < t_plain + t_plain / 4, "{table}");
        for r in [&plain, &paced] {
            assert_eq!(r.flows[0].retransmissions, 0, "{table}");
            assert_eq!(r.flows[0].timeouts, 0, "{table}");
        }
    }
    println!("{table}");
}

#[test]
fn paced_flow_recovers_from_drops_intact() {
    // A 20-packet buffer overflows at the end of slow start: fast recovery
    // and (possibly) timeouts run with the pacer in the way.
    for bytes in [1_000_000u64, 3_000_000] {
        let r = run(Some(PacingConfig::default()), bytes, 20);
        assert_intact(&r);
        assert!(r.flows[0].retransmissions > 0, "{:?}", r.flows[0]);
        assert!(r.links[DUMBBELL_MIDDLE.0].drops > 0);
    }
}

#[test]
fn paced_runs_are_deterministic() {
    for buffer in [1000, 20] {
        let p = Some(PacingConfig {
            fraction_per_mille: 700,
            ..PacingConfig::default()
        });
        let a = emu::run(&scenario(p, 500_000, buffer, 42)).unwrap();
        let b = emu::run(&scenario(p, 500_000, buffer, 42)).unwrap();
        assert_eq!(a, b);
        assert_intact(&a);
    }
}

#[test]
fn pacing_fraction_is_validated() {
    for (fraction, ok) in [
        (0u16, false),
        (1, true),
        (900, true),
        (1000, true),
        (1001, false),
    ] {
        let c = config(Some(PacingConfig {
            fraction_per_mille: fraction,
            ..PacingConfig::default()
        }));
        match c.validate() {
            Ok(()) => assert!(ok, "{fraction} accepted"),
            Err(ConfigError::Invalid { field, .. }) => {
                assert!(!ok, "{fraction} rejected");
                assert_eq!(field, "pacing.fraction_per_mille");
            }
        }
    }
    let bad = Some(PacingConfig {
        fraction_per_mille: 0,
        ..PacingConfig::default()
    });
    assert!(matches!(
        emu::run(&scenario(bad, 1000, 10, 1)),
        Err(EmuError::InvalidConfig { .. })
    ));
}

#[test]
fn a_pacing_release_is_a_wake_up_not_a_timeout() {
    let pipe_config = PipeConfig {
        delay: Duration::from_millis(20),
        ..PipeConfig::default()
    };
    let paced = config(Some(PacingConfig::default()));
    let mut pipe = Pipe::new(pipe_config, paced.clone(), paced).unwrap();
    let ok = pipe
        .run_until(Instant::from_millis(5_000), |p| {
            p.client().is_established() && p.server().is_some_and(|s| s.is_established())
        })
        .unwrap();
    assert!(ok);
    // Let the handshake's last ACK settle, then drive the client by hand.
    let mut now = pipe.now();
    let client = pipe.client();
    while client.poll_transmit(now, &mut [0u8; 1100]).is_some() {}
    let srtt = client.stats().srtt.expect("handshake RTT sample");
    assert_eq!(srtt, Duration::from_millis(40));
    assert_eq!(client.write(&[1u8; 10_000]), 10_000);
    let mut buf = [0u8; 1100];
    let mut sent_at = Vec::new();
    while sent_at.len() < 10 {
        if client.poll_transmit(now, &mut buf).is_some() {
            sent_at.push(now);
            continue;
        }
        let wake = client.poll_timeout().expect("a paced segment is waiting");
        assert!(wake > now, "the release lies ahead");
        // Well before any retransmission timer.
        assert!(wake < now + Duration::from_millis(200));
        client.handle_timeout(wake);
        now = wake;
    }
    // Ten segments, IW 10, spread over 0.9 x 40 ms: one per 3.6 ms.
    let first = sent_at[0];
    for (i, t) in sent_at.iter().enumerate() {
        assert_eq!(*t - first, Duration::from_micros(3_600) * i as u32);
    }
    let stats = client.stats();
    assert_eq!(stats.timeouts, 0);
    assert_eq!(stats.retransmissions, 0);
    assert_eq!(stats.data_segments_sent, 10);
    // The window is full: nothing is held, so no pacing wake-up remains,
    // only the loss timers: the tail loss probe's, two SRTTs after the
    // last segment, ahead of the retransmission timer.
    assert!(client.poll_transmit(now, &mut buf).is_none());
    let timer_at = client.poll_timeout().unwrap();
    assert_eq!(timer_at, *sent_at.last().unwrap() + 2 * srtt);
}

#[test]
fn paced_pipe_transfer_with_loss_is_intact() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let pipe = PipeConfig {
        loss: 0.02,
        seed: 9,
        ..PipeConfig::default()
    };
    let paced = config(Some(PacingConfig::default()));
    let out = transfer(
        pipe,
        paced.clone(),
        paced,
        &data,
        &[],
        Duration::from_secs(600),
    )
    .unwrap();
    assert!(out.closed_cleanly, "{:?}", out.close_reasons);
    assert_eq!(out.server_received, data);
}

/// Paper 003 section 4.4's beta = 2/7 over a 40-packet buffer, a third of
/// the 125-packet BDP, where halving leaves the link idle after each loss:
/// keeping 5/7 of the window fills it better. 10 MB, so the flow spends
/// most of its time in congestion avoidance. `docs/pacing.md` quotes the
/// printed table.
#[test]
fn beta27_over_a_buffer_below_the_bdp() {
    let mut table = String::new();
    let mut times = Vec::new();
    for pacing in [None, Some(PacingConfig::default())] {
        for decrease in [Decrease::Half, Decrease::TwoSevenths] {
            let mut s = scenario(pacing, 10_000_000, 40, 1);
            s.flows[0].client.congestion.decrease = decrease;
            let r = emu::run(&s).unwrap();
            assert_intact(&r);
            let f = &r.flows[0];
            let m = &r.links[DUMBBELL_MIDDLE.0];
            let t = f.completion_time.unwrap();
            table += &format!(
                "pacing {:5} {decrease:?}: completion {t:?}, utilization {:.3}, \
                 drops {}, retransmissions {}, timeouts {}\n",
                pacing.is_some(),
                m.utilization,
                m.drops,
                f.retransmissions,
                f.timeouts
            );
            times.push(t);
        }
    }
    println!("{table}");
    // Unpaced, 2/7 finishes sooner than halving.
    assert!(times[1] < times[0], "{table}");
    // Paced, it is at least no worse.
    assert!(times[3] <= times[2], "{table}");
}
