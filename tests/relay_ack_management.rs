//! In-network ACK management in the relay over real UDP on 127.0.0.1:
//! the emulator's ACK filtering (paper 000) and ACK delay control (paper
//! 001) on real ackwise transfers.
#![cfg(feature = "tokio")]

use ackwise::ack_path::{Filter, Service};
use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::net::Endpoint;
use ackwise::relay::{
    parse_ack_filter, parse_delay_control, AckManagement, LinkConfig, Relay, RelayConfig,
    RelayStats,
};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Receivers that acknowledge every segment, so the slow reverse link is
/// what limits the transfer.
fn net_config() -> Config {
    Config {
        mss: 1400,
        ack_policy: AckPolicyConfig::Every,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(300),
        nagle: false,
        idle_timeout: Some(Duration::from_secs(20)),
        ..Config::default()
    }
}

/// Sends `data` from a client to a server through a relay with 10 Mbit/s
/// forward and `reverse_bps` back, 20 ms each way; returns what arrived
/// and the relay's counters.
async fn transfer(data: &[u8], reverse_bps: u64, ack: AckManagement) -> (Vec<u8>, RelayStats) {
    let server = Endpoint::server("127.0.0.1:0".parse().unwrap(), net_config()).unwrap();
    let config = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: server.local_addr(),
        forward: LinkConfig::new(10_000_000, Duration::from_millis(20), 200),
        reverse: LinkConfig::new(reverse_bps, Duration::from_millis(20), 200),
        seed: 1,
        ack_management: ack,
    };
    let relay = Relay::bind(config).await.expect("bind relay").spawn();
    let receiver = tokio::spawn(async move {
        let (mut stream, _) = server.accept().await.expect("accept");
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.expect("read");
        let _ = stream.shutdown().await;
        server.close(Duration::from_millis(300)).await;
        got
    });
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let run = async {
        let mut stream = client
            .connect(relay.local_addr(), net_config())
            .await
            .expect("connect through the relay");
        stream.write_all(data).await.expect("write");
        stream.shutdown().await.expect("shutdown");
        receiver.await.expect("receiver task")
    };
    let got = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap_or_else(|_| panic!("timed out; relay {}", relay.stats()));
    let stats = relay.stats();
    (got, stats)
}

fn data(len: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_in_the_relay_delivers_intact_with_fewer_acks_over_the_slow_link() {
    let data = data(400_000);
    let (plain_got, plain) = transfer(&data, 128_000, AckManagement::default()).await;
    assert!(plain_got == data, "unfiltered transfer corrupted");
    for (filter, service) in [
        (Filter::Classic, Service::Fifo),
        (Filter::DELAYED, Service::Fifo),
        (Filter::PER_FLOW_DELAYED, Service::RoundRobin),
    ] {
        let ack = AckManagement {
            filter: Some((filter, service)),
            delay_control: None,
        };
        let (got, s) = transfer(&data, 128_000, ack).await;
        assert!(
            got == data,
            "{filter:?}: {} of {} bytes, or corrupted",
            got.len(),
            data.len()
        );
        eprintln!(
            "{filter:?}/{service:?}: {} reverse datagrams ({} filtered) against {} unfiltered",
            s.reverse.forwarded_packets, s.reverse.filtered, plain.reverse.forwarded_packets
        );
        assert!(s.reverse.filtered > 0, "{filter:?}: nothing filtered; {s}");
        assert!(
            s.reverse.forwarded_packets < plain.reverse.forwarded_packets,
            "{filter:?}: {} datagrams over the slow link against {} unfiltered",
            s.reverse.forwarded_packets,
            plain.reverse.forwarded_packets
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_control_in_the_relay_spaces_acks_and_delivers_intact() {
    let data = data(300_000);
    let ack = AckManagement {
        filter: None,
        // A tiny threshold, so that the forward queue passes it.
        delay_control: Some(parse_delay_control("--ack-delay-control", "3kB,0.25").unwrap()),
    };
    let (got, s) = transfer(&data, 10_000_000, ack).await;
    assert!(
        got == data,
        "{} of {} bytes, or corrupted",
        got.len(),
        data.len()
    );
    assert!(s.reverse.hook_delayed > 0, "no ACK was held back; {s}");
}

#[test]
fn ack_management_flags_parse_or_say_what_is_wrong() {
    let f = |v| parse_ack_filter("--ack-filter", v);
    assert_eq!(f("classic").unwrap(), (Filter::Classic, Service::Fifo));
    assert_eq!(
        f("static:30").unwrap(),
        (Filter::Static { delta: 30 }, Service::Fifo)
    );
    assert_eq!(f("Delayed").unwrap(), (Filter::DELAYED, Service::Fifo));
    assert_eq!(
        f("per-flow-rr").unwrap(),
        (Filter::PER_FLOW_DELAYED, Service::RoundRobin)
    );
    for bad in ["", "static:0", "static:", "static:x", "fifo"] {
        let e = f(bad).unwrap_err().to_string();
        assert!(e.starts_with("--ack-filter: "), "{e}");
    }
    let d = |v| parse_delay_control("--ack-delay-control", v);
    let s = d("50kB").unwrap();
    assert_eq!((s.threshold_bytes, s.fraction), (50_000, 0.5));
    let s = d("1MB,0.25").unwrap();
    assert_eq!((s.threshold_bytes, s.fraction), (1_000_000, 0.25));
    assert_eq!(d("4096").unwrap().threshold_bytes, 4096);
    for bad in ["", "lots", "50kB,0", "50kB,2", "-5kB"] {
        let e = d(bad).unwrap_err().to_string();
        assert!(e.starts_with("--ack-delay-control: "), "{bad}: {e}");
    }
}
