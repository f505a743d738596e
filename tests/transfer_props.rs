//! Property: whatever the pipe does (loss up to 30 %, reordering,
//! duplication), a transfer in both directions delivers exactly the bytes
//! written and both ends close cleanly, with every ACK policy.
//!
//! A failing case prints its inputs, seed included; rerun it by pasting
//! them into `regression` below.

use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::testing::{transfer, PipeConfig, TransferOutcome};
use proptest::prelude::*;
use sha2::{Digest, Sha256};
use std::time::Duration;

fn payload(len: usize, seed: u64) -> Vec<u8> {
    // A cheap deterministic byte stream (xorshift) that differs per seed.
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn config(policy: AckPolicyConfig) -> Config {
    Config {
        ack_policy: policy,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(500),
        max_rto: Duration::from_secs(8),
        idle_timeout: Some(Duration::from_secs(3_600)),
        time_wait: Duration::from_millis(500),
        send_buffer: 256 * 1024,
        recv_buffer: 256 * 1024,
        ..Config::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    seed: u64,
    loss: f64,
    reorder: f64,
    duplicate: f64,
    up: usize,
    down: usize,
    delayed: bool,
) -> (Vec<u8>, Vec<u8>, TransferOutcome) {
    let policy = if delayed {
        AckPolicyConfig::DELAYED
    } else {
        AckPolicyConfig::Every
    };
    let pipe = PipeConfig {
        delay: Duration::from_millis(20),
        loss,
        reorder,
        reorder_delay: Duration::from_millis(15),
        duplicate,
        seed,
    };
    let a = payload(up, seed ^ 0xA);
    let b = payload(down, seed ^ 0xB);
    let out = transfer(
        pipe,
        config(policy),
        config(policy),
        &a,
        &b,
        Duration::from_secs(36_000),
    )
    .expect("pipe setup");
    (a, b, out)
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_byte_arrives_in_order_and_both_ends_close(
        seed in any::<u64>(),
        loss in 0.0f64..0.30,
        reorder in 0.0f64..0.30,
        duplicate in 0.0f64..0.20,
        up in prop_oneof![Just(0usize), 1usize..5_000, 0usize..=2_000_000],
        down in prop_oneof![Just(0usize), 1usize..5_000, 0usize..=2_000_000],
        delayed in any::<bool>(),
    ) {
        let (a, b, out) = run(seed, loss, reorder, duplicate, up, down, delayed);
        prop_assert_eq!(out.server_received.len(), a.len(), "seed {}", seed);
        prop_assert_eq!(out.client_received.len(), b.len(), "seed {}", seed);
        prop_assert_eq!(digest(&out.server_received), digest(&a), "seed {}", seed);
        prop_assert_eq!(digest(&out.client_received), digest(&b), "seed {}", seed);
        prop_assert!(out.closed_cleanly, "seed {} did not close cleanly: {:?}", seed, out.client_stats);
    }
}

#[test]
fn same_seed_same_outcome() {
    let (_, _, x) = run(42, 0.1, 0.1, 0.05, 300_000, 100_000, true);
    let (_, _, y) = run(42, 0.1, 0.1, 0.05, 300_000, 100_000, true);
    assert_eq!(x.elapsed, y.elapsed);
    assert_eq!(x.client_stats, y.client_stats);
    assert_eq!(x.server_stats, y.server_stats);
    assert_eq!(x.pipe_stats, y.pipe_stats);
}

#[test]
fn regression() {
    // Cases that once failed: (seed, loss, reorder, duplicate, up, down, delayed).
    let cases: &[(u64, f64, f64, f64, usize, usize, bool)] =
        &[(1, 0.3, 0.3, 0.2, 50_000, 50_000, true)];
    for &(seed, loss, reorder, dup, up, down, delayed) in cases {
        let (a, b, out) = run(seed, loss, reorder, dup, up, down, delayed);
        assert_eq!(digest(&out.server_received), digest(&a), "seed {seed}");
        assert_eq!(digest(&out.client_received), digest(&b), "seed {seed}");
        assert!(out.closed_cleanly, "seed {seed}");
    }
}
