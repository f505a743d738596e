//! Sender-polled ACKs (paper 003): the sender's ACK-request countdowns,
//! the polled receiver, negotiation fallback, and the property that a
//! window of data always draws an ACK without the receiver's timer.
//!
//! The property test prints its proptest seed; rerun a failure with
//! `ACKWISE_PROPTEST_SEED` or paste its inputs into a regression case.

use ackwise::connection::{AckPolicyConfig, AckRequestConfig, Config, Connection, HoleAcks};
use ackwise::testing::{transfer, PipeConfig, TransferOutcome};
use ackwise::time::Instant;
use ackwise::wire::{AckRequest, Checksum, SegmentRepr};
use proptest::prelude::*;

mod common;
use common::payload;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::time::Duration;

fn polled(request_acks: AckRequestConfig) -> Config {
    Config {
        ack_policy: AckPolicyConfig::Polled {
            fallback: Duration::from_millis(100),
            holes: HoleAcks::Every,
        },
        request_acks,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(500),
        max_rto: Duration::from_secs(8),
        idle_timeout: Some(Duration::from_secs(3_600)),
        syn_retries: 40,
        time_wait: Duration::from_secs(600),
        send_buffer: 256 * 1024,
        recv_buffer: 256 * 1024,
        nagle: false,
        congestion: ackwise::connection::CongestionConfig {
            extended_abc: true,
            ..Default::default()
        },
        ..Config::default()
    }
}

const W4: AckRequestConfig = AckRequestConfig::PerWindow {
    acks: 4,
    every_segment_in_slow_start: false,
};

fn pipe(seed: u64, loss: f64, reorder: f64, duplicate: f64) -> PipeConfig {
    PipeConfig {
        delay: Duration::from_millis(20),
        loss,
        reorder,
        reorder_delay: Duration::from_millis(15),
        duplicate,
        seed,
    }
}

fn run(p: PipeConfig, client: Config, server: Config, up: &[u8], down: &[u8]) -> TransferOutcome {
    transfer(p, client, server, up, down, Duration::from_secs(36_000)).expect("pipe setup")
}

#[test]
fn a_clean_path_never_leaves_the_receiver_waiting_for_its_timer() {
    let data = payload(2_000_000, 7);
    for requests in [
        W4,
        AckRequestConfig::PerWindow {
            acks: 2,
            every_segment_in_slow_start: false,
        },
        AckRequestConfig::EveryN {
            segments: 8,
            every_segment_in_slow_start: true,
        },
    ] {
        let c = polled(requests);
        let out = run(pipe(1, 0.0, 0.0, 0.0), c.clone(), c, &data, &[]);
        assert_eq!(out.server_received, data, "{requests:?}");
        assert!(out.closed_cleanly, "{requests:?}");
        let s = out.server_stats;
        assert_eq!(s.ack_timer_expiries, 0, "{requests:?}: {s:?}");
        // Far fewer ACKs than segments: at least four segments per ACK on
        // average (windows grow to hundreds of segments here). With
        // `every_segment_in_slow_start` a loss-free path never leaves slow
        // start, so every segment is acknowledged.
        let ss_every = matches!(
            requests,
            AckRequestConfig::EveryN {
                every_segment_in_slow_start: true,
                ..
            }
        );
        assert!(
            ss_every || s.pure_acks_sent * 4 < s.data_segments_received,
            "{requests:?}: {} ACKs for {} segments",
            s.pure_acks_sent,
            s.data_segments_received
        );
    }
}

#[test]
fn a_peer_without_the_option_gets_no_requests_and_the_sender_counts_two() {
    let client = polled(W4);
    let server = Config {
        ack_requests: false,
        ack_policy: AckPolicyConfig::DELAYED,
        ..polled(AckRequestConfig::None)
    };
    let data = payload(300_000, 3);
    let p = pipe(2, 0.0, 0.0, 0.0);
    let mut pipe = ackwise::testing::Pipe::new(p.clone(), client.clone(), server.clone()).unwrap();
    pipe.run_until(Instant::from_millis(500), |p| {
        p.client().is_established() && p.server().is_some_and(|s| s.is_established())
    })
    .unwrap();
    let n = pipe.client().negotiated();
    assert!(!n.ack_requests && !n.peer_ack_requests);
    assert!(pipe.client().sender().ack_requests().is_none());
    assert_eq!(pipe.client().sender().congestion().byte_counting_limit(), 2);
    // And the transfer works against the delayed-ACK peer.
    let out = run(p, client, server, &data, &[]);
    assert_eq!(out.server_received, data);
    assert!(out.closed_cleanly);
}

/// Drives two connections by hand so a test can choose the fate of each
/// segment.
struct Wire {
    client: Connection,
    server: Connection,
    now: Instant,
    buf: Vec<u8>,
    pending: Vec<Vec<u8>>,
}

impl Wire {
    fn open(config: Config) -> Wire {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut client = Connection::connect(config.clone(), Instant::ZERO, 1000, 80, &mut rng)
            .expect("valid config");
        let mut buf = vec![0u8; 2048];
        let n = client.poll_transmit(Instant::ZERO, &mut buf).unwrap();
        let mut server =
            Connection::accept(config, Instant::ZERO, &buf[..n], &mut rng).expect("SYN");
        let n = server.poll_transmit(Instant::ZERO, &mut buf).unwrap();
        client.handle_segment(Instant::ZERO, &buf[..n]).unwrap();
        while let Some(n) = client.poll_transmit(Instant::ZERO, &mut buf) {
            server.handle_segment(Instant::ZERO, &buf[..n]).unwrap();
        }
        assert!(client.is_established() && server.is_established());
        assert!(client.negotiated().ack_requests);
        Wire {
            client,
            server,
            now: Instant::ZERO,
            buf,
            pending: Vec::new(),
        }
    }

    /// Everything the client sends now, as (bytes, countdown).
    fn client_burst(&mut self) -> Vec<(Vec<u8>, Option<AckRequest>)> {
        let mut out = Vec::new();
        while let Some(n) = self.client.poll_transmit(self.now, &mut self.buf) {
            let seg = SegmentRepr::parse(&self.buf[..n], Checksum::UNSPECIFIED).unwrap();
            let request = seg.options.ack_request;
            if !seg.payload.is_empty() {
                out.push((self.buf[..n].to_vec(), request));
            }
        }
        out
    }

    /// Delivers one segment to the server; returns how many pure ACKs it
    /// sends at once, and keeps them for [`Wire::acks_to_client`].
    fn deliver_to_server(&mut self, bytes: &[u8]) -> usize {
        self.server.handle_segment(self.now, bytes).unwrap();
        let mut acks = 0;
        while let Some(n) = self.server.poll_transmit(self.now, &mut self.buf) {
            self.pending.push(self.buf[..n].to_vec());
            acks += 1;
        }
        acks
    }

    /// Delivers the server's ACKs so far to the client.
    fn acks_to_client(&mut self) {
        for ack in std::mem::take(&mut self.pending) {
            self.client.handle_segment(self.now, &ack).unwrap();
        }
    }
}

#[test]
fn the_receiver_acks_on_time_when_the_requesting_segment_is_lost_or_late() {
    let mut config = polled(AckRequestConfig::EveryN {
        segments: 4,
        every_segment_in_slow_start: false,
    });
    config.congestion.initial_window = Some(16 * 1460);
    let mut w = Wire::open(config);
    assert_eq!(w.client.write(&payload(16 * 1460, 9)), 16 * 1460);
    let burst = w.client_burst();
    let countdowns: Vec<Option<AckRequest>> = burst.iter().map(|(_, r)| *r).collect();
    use AckRequest::Countdown as C;
    assert_eq!(
        &countdowns[..8],
        [C(3), C(2), C(1), C(0), C(3), C(2), C(1), C(0)].map(Some)
    );
    // In order, the ACK comes exactly at the segment that asked.
    let acks: Vec<usize> = burst[..4]
        .iter()
        .map(|(b, _)| w.deliver_to_server(b))
        .collect();
    assert_eq!(acks, [0, 0, 0, 1]);
    // The next group's requester (index 7) is lost: the segment after it
    // leaves a hole and is acknowledged at once, with no timer.
    let acks: Vec<usize> = burst[4..7]
        .iter()
        .map(|(b, _)| w.deliver_to_server(b))
        .collect();
    assert_eq!(acks, [0, 0, 0]);
    assert_eq!(w.deliver_to_server(&burst[8].0), 1);
    // A late requester (index 11 held back past 12) is covered the same
    // way, and its late arrival fills the hole and is acknowledged too.
    let acks: Vec<usize> = burst[9..11]
        .iter()
        .map(|(b, _)| w.deliver_to_server(b))
        .collect();
    assert_eq!(acks, [1, 1], "holes remain below: every segment is ACKed");
    assert_eq!(w.server.stats().ack_timer_expiries, 0);
}

#[test]
fn a_full_window_or_a_pause_never_leaves_a_group_hanging() {
    // cwnd 7 segments (1448 bytes each, timestamps on), A8L8 would ask
    // for every 8th: the bound of two per window makes groups of 3, so
    // the 7th segment opens a group the window cannot finish. That is
    // fine while requested ACKs are still to come: they release the
    // rest of the group.
    use AckRequest::Countdown as C;
    let mut config = polled(AckRequestConfig::EveryN {
        segments: 8,
        every_segment_in_slow_start: false,
    });
    config.congestion.initial_window = Some(7 * 1448);
    let mut w = Wire::open(config);
    w.client.write(&payload(100 * 1460, 1));
    let burst = w.client_burst();
    let countdowns: Vec<_> = burst.iter().map(|(_, r)| *r).collect();
    assert_eq!(
        countdowns,
        [C(2), C(1), C(0), C(2), C(1), C(0), C(2)].map(Some)
    );
    let acks: usize = burst.iter().map(|(b, _)| w.deliver_to_server(b)).sum();
    assert_eq!(acks, 2);
    w.acks_to_client();
    let next: Vec<_> = w.client_burst().iter().map(|(_, r)| *r).collect();
    assert_eq!(&next[..2], [C(1), C(0)].map(Some), "{next:?}");
    assert_eq!(w.server.stats().ack_timer_expiries, 0);
    let acks: usize = burst.iter().map(|(b, _)| w.deliver_to_server(b)).sum();
    assert!(acks >= 1, "a window of data drew no ACK");
    // An application that stops writing mid-group does not leave the
    // receiver waiting either: its last segment asks.
    let mut config = polled(W4);
    config.congestion.initial_window = Some(40 * 1460);
    let mut w = Wire::open(config);
    w.client.write(&payload(4000, 2));
    let burst = w.client_burst();
    let countdowns: Vec<_> = burst.iter().map(|(_, r)| *r).collect();
    // Window 40: groups of 10, but only three segments of data.
    assert_eq!(countdowns, [C(9), C(8), C(0)].map(Some));
}

fn proptest_config() -> ProptestConfig {
    common::proptest_config(512, 0x00ac_4e57)
}

fn strategy() -> impl Strategy<Value = AckRequestConfig> {
    (
        prop_oneof![Just(0u32), Just(2), Just(4), 1u32..16],
        any::<bool>(),
    )
        .prop_map(|(k, ss)| match k {
            0 => AckRequestConfig::EveryN {
                segments: 8,
                every_segment_in_slow_start: ss,
            },
            acks => AckRequestConfig::PerWindow {
                acks,
                every_segment_in_slow_start: ss,
            },
        })
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Whatever is lost, reordered or duplicated, with or without the
    /// acknowledgment fixes, every byte arrives, and
    /// the receivers' fallback timers fire at most once per packet the
    /// path lost (plus the tail of each direction): each window of data
    /// draws a requested ACK, never one the receiver had to time out for.
    #[test]
    fn every_window_draws_an_ack_and_every_byte_arrives(
        seed in any::<u64>(),
        loss in prop_oneof![Just(0.0f64), 0.0f64..0.2],
        reorder in prop_oneof![Just(0.0f64), 0.0f64..0.2],
        duplicate in prop_oneof![Just(0.0f64), 0.0f64..0.1],
        up in 1usize..600_000,
        down in prop_oneof![Just(0usize), 1usize..100_000],
        client_requests in strategy(),
        server_requests in strategy(),
        fixes in any::<bool>(),
    ) {
        let a = payload(up, seed ^ 0xA);
        let b = payload(down, seed ^ 0xB);
        let out = run(
            pipe(seed, loss, reorder, duplicate),
            Config { ack_fixes: fixes, ..polled(client_requests) },
            Config { ack_fixes: fixes, ..polled(server_requests) },
            &a,
            &b,
        );
        prop_assert!(out.server_received == a, "seed {}", seed);
        prop_assert!(out.client_received == b, "seed {}", seed);
        prop_assert!(out.closed_cleanly, "seed {} {:?}", seed, out.close_reasons);
        let expiries = out.server_stats.ack_timer_expiries + out.client_stats.ack_timer_expiries;
        prop_assert!(
            expiries <= out.pipe_stats.lost + 2,
            "seed {}: {} timer ACKs for {} lost packets\nclient {:?}\nserver {:?}",
            seed, expiries, out.pipe_stats.lost, out.client_stats, out.server_stats
        );
    }
}
