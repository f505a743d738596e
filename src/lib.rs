//! ackwise: a sans-IO TCP-style transport that sends far fewer ACKs.
//!
//! The crate is layered as in the project's design map:
//!
//! - [`wire`]: TCP segments (RFC 9293) and their options, parsed into typed
//!   errors, never panics;
//! - [`sender`] and [`receiver`]: the two halves of a connection — send
//!   buffer, SACK scoreboard, loss recovery and congestion control on one
//!   side; reassembly, SACK generation and ACK policies on the other;
//! - [`estimators`]: RTT and retransmission timeout, the receiver's ISAT,
//!   minimum RTT and congestion-window estimate, the ACK interval, and the
//!   TSW rate of a reverse channel;
//! - [`connection`]: the state machine tying them together behind a
//!   quinn-proto style `handle_segment` / `poll_transmit` / `poll_timeout`
//!   API;
//! - [`testing`]: a deterministic in-memory pipe for tests and benchmarks;
//! - [`ack_path`]: in-network ACK management for reverse-path queues;
//! - `emu` and `lab`: the link emulator and the experiments run on it
//!   (behind the features of the same names).
//!
//! # Cargo features
//!
//! With `default-features = false` the crate is the sans-IO core alone
//! (`wire`, `connection`, `sender`, `receiver`, `estimators`, `ack_path`,
//! `testing`), `#![no_std]` with `alloc`, depending only on smoltcp's
//! wire types, `tracing`, `rand_core` and `bytes`. The `std` feature adds
//! `pcap`, `fuzzing` and the endpoint-wide budgets of `connection`
//! (`ChallengeBudget`, `WindowBudget`); every other feature implies it.
//! The features add `emu` (the link emulator), `lab` (the
//! experiments, implies `emu`), `tokio` (`net`, and with `lab` the file
//! transfer and `relay`), `quic` (quinn-proto integration), `quic-net`
//! (QUIC over real sockets) and `cli` (the `ackwise` binary); the default
//! enables them all.
//!
//! Nothing here reads a clock or a random source of its own: every call
//! takes `now`, and randomness comes from a seeded RNG the caller hands in.
//!
//! # Example
//!
//! A client and a server over a pipe with 2 % loss; every byte arrives and
//! both ends close cleanly.
//!
//! ```
//! use ackwise::connection::{AckPolicyConfig, Config};
//! use ackwise::testing::{transfer, PipeConfig};
//! use std::time::Duration;
//!
//! let config = Config {
//!     ack_policy: AckPolicyConfig::DELAYED,
//!     min_rto: Duration::from_millis(200),
//!     ..Config::default()
//! };
//! let pipe = PipeConfig { loss: 0.02, seed: 1, ..PipeConfig::default() };
//! let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
//! let out = transfer(pipe, config.clone(), config, &data, b"reply", Duration::from_secs(600))?;
//! assert_eq!(out.server_received, data);
//! assert_eq!(out.client_received, b"reply");
//! assert!(out.closed_cleanly);
//! println!("{} ACKs from the receiver", out.server_stats.pure_acks_sent);
//! # Ok::<(), ackwise::testing::PipeError>(())
//! ```
#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod ack_path;
pub mod buffer_limit;
pub mod connection;
#[cfg(feature = "emu")]
pub mod emu;
pub mod estimators;
#[cfg(feature = "std")]
pub mod fuzzing;
#[cfg(feature = "lab")]
pub mod lab;
#[cfg(feature = "tokio")]
pub mod net;
#[cfg(feature = "std")]
pub mod pcap;
#[cfg(feature = "quic")]
pub mod quic;
pub mod receiver;
#[cfg(all(feature = "tokio", feature = "lab"))]
pub mod relay;
pub mod sender;
pub mod testing;
pub mod time;
#[cfg(all(feature = "tun", target_os = "linux"))]
pub mod tun;
pub mod wire;

/// Test-only helpers shared by the unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use proptest::test_runner::{Config, RngSeed};

    /// `cases` cases from a fixed `seed`, so every run (and CI) tries the
    /// same inputs; `PROPTEST_CASES` and `ACKWISE_PROPTEST_SEED` explore
    /// further. The seed is printed so a failure can be rerun.
    pub(crate) fn proptest_config(cases: u32, seed: u64) -> Config {
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let seed = env("ACKWISE_PROPTEST_SEED").unwrap_or(seed);
        eprintln!("proptest seed {seed} (set ACKWISE_PROPTEST_SEED to change)");
        Config {
            cases: env("PROPTEST_CASES").map_or(cases, |c| c as u32),
            rng_seed: RngSeed::Fixed(seed),
            failure_persistence: None,
            ..Config::default()
        }
    }
}
