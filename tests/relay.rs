//! The relay over real UDP sockets on 127.0.0.1: rate, delay, loss,
//! buffer overflow, the reverse direction, the reverse hook, and the
//! in-network ACK management (papers 000 and 001) plugged into it.
#![cfg(all(feature = "tokio", feature = "lab"))]
#![cfg(feature = "tokio")]

use ackwise::ack_path::{Filter, Service};
use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::net::Endpoint;
use ackwise::relay::{
    parse_ack_filter, parse_delay_control, AckManagement, Arrival, ClientLimits, HookAction,
    LinkConfig, QueueView, Relay, RelayConfig, RelayHandle, RelayStats, ReverseHook,
};
use ackwise::time::Instant as AwInstant;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UdpSocket;

fn link(rate_bps: u64, delay_ms: u64, buffer: usize) -> LinkConfig {
    LinkConfig::new(rate_bps, Duration::from_millis(delay_ms), buffer)
}

async fn start(
    to: SocketAddr,
    forward: LinkConfig,
    reverse: LinkConfig,
    seed: u64,
    hook: Option<Box<dyn ReverseHook>>,
) -> RelayHandle {
    let config = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to,
        forward,
        reverse,
        seed,
        ack_management: Default::default(),
    };
    spawn_relay(config, hook).await
}

async fn spawn_relay(config: RelayConfig, hook: Option<Box<dyn ReverseHook>>) -> RelayHandle {
    let mut relay = Relay::bind(config).await.expect("bind relay");
    if let Some(h) = hook {
        relay.set_reverse_hook(h);
    }
    relay.spawn()
}

async fn socket() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").await.unwrap()
}

/// Receives until `quiet` passes without a datagram; returns arrival times
/// and contents.
async fn collect(sock: &UdpSocket, quiet: Duration) -> Vec<(Instant, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_536];
    while let Ok(Ok(n)) = tokio::time::timeout(quiet, sock.recv(&mut buf)).await {
        out.push((Instant::now(), buf[..n].to_vec()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_rate_shapes_a_burst() {
    let sink = socket().await;
    // 1222 + 28 bytes at 1 Mbit/s: 10 ms per datagram.
    let relay = start(
        sink.local_addr().unwrap(),
        link(1_000_000, 0, 500),
        link(1_000_000, 0, 500),
        1,
        None,
    )
    .await;
    let client = socket().await;
    let n = 60;
    for i in 0..n {
        let mut d = vec![0u8; 1222];
        d[0] = i as u8;
        client.send_to(&d, relay.local_addr()).await.unwrap();
    }
    let got = collect(&sink, Duration::from_millis(300)).await;
    assert_eq!(got.len(), n, "stats: {}", relay.stats());
    let order: Vec<u8> = got.iter().map(|(_, d)| d[0]).collect();
    assert_eq!(order, (0..n as u8).collect::<Vec<_>>(), "FIFO order");
    let spread = got[n - 1].0 - got[0].0;
    let expected = Duration::from_millis(10 * (n as u64 - 1));
    let ratio = spread.as_secs_f64() / expected.as_secs_f64();
    assert!(
        (0.93..1.07).contains(&ratio),
        "spread {spread:?}, expected {expected:?}"
    );
    let s = relay.stats();
    assert_eq!(s.forward.forwarded_packets, n as u64);
    assert_eq!(s.forward.forwarded_bytes, 1222 * n as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_way_delay_is_at_least_the_configured_delay() {
    let sink = socket().await;
    let relay = start(
        sink.local_addr().unwrap(),
        link(100_000_000, 80, 50),
        link(100_000_000, 0, 50),
        1,
        None,
    )
    .await;
    let client = socket().await;
    for _ in 0..3 {
        let sent = Instant::now();
        client.send_to(b"ping", relay.local_addr()).await.unwrap();
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(Duration::from_secs(2), sink.recv(&mut buf))
            .await
            .expect("datagram arrives")
            .unwrap();
        let delay = sent.elapsed();
        assert_eq!(&buf[..n], b"ping");
        assert!(delay >= Duration::from_millis(80), "{delay:?}");
        assert!(delay < Duration::from_millis(130), "{delay:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_loss_matches_the_setting() {
    let sink = socket().await;
    let seed = 42;
    let mut fwd = link(1_000_000_000, 0, 10_000);
    fwd.loss = 0.1;
    let relay = start(
        sink.local_addr().unwrap(),
        fwd,
        link(1_000_000_000, 0, 50),
        seed,
        None,
    )
    .await;
    let client = socket().await;
    // Read while sending, so the sink's socket buffer never overflows.
    let collector = tokio::spawn(async move { collect(&sink, Duration::from_millis(500)).await });
    // Paced, so the relay's socket buffer never overflows.
    for burst in 0..40 {
        for i in 0..50u32 {
            let id = burst * 50 + i;
            client
                .send_to(&id.to_be_bytes(), relay.local_addr())
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let got = collector.await.unwrap();
    let s = relay.stats().forward;
    assert_eq!(s.packets_in, 2000, "seed {seed}: {s}");
    assert_eq!(s.forwarded_packets + s.random_losses, s.packets_in);
    assert_eq!(got.len() as u64, s.forwarded_packets);
    // Binomial(2000, 0.1): mean 200, sd 13.4; five sd either side.
    assert!(
        (133..=267).contains(&s.random_losses),
        "seed {seed}: {} lost of 2000",
        s.random_losses
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_tail_overflow_is_counted() {
    let sink = socket().await;
    // 972 + 28 bytes at 1 Mbit/s: 8 ms each; 5 may wait.
    let relay = start(
        sink.local_addr().unwrap(),
        link(1_000_000, 0, 5),
        link(1_000_000, 0, 5),
        1,
        None,
    )
    .await;
    let client = socket().await;
    for _ in 0..30 {
        client
            .send_to(&[7u8; 972], relay.local_addr())
            .await
            .unwrap();
    }
    let got = collect(&sink, Duration::from_millis(300)).await;
    let s = relay.stats().forward;
    assert_eq!(s.packets_in, 30, "{s}");
    // One on the wire and five waiting, plus at most a couple that left
    // while the burst was still arriving.
    assert!((21..=24).contains(&s.queue_drops), "{s}");
    assert_eq!(got.len() as u64, 30 - s.queue_drops);
    assert_eq!(s.peak_queue_packets, 5);
}

/// Echoes every datagram back to its sender.
async fn echo_server() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let sock = socket().await;
    let addr = sock.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok((n, from)) = sock.recv_from(&mut buf).await {
            let _ = sock.send_to(&buf[..n], from).await;
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_reach_the_right_client_over_the_reverse_link() {
    let (server, _task) = echo_server().await;
    // 64 kbit/s reverse: a 72 + 28 byte reply takes 12.5 ms.
    let relay = start(
        server,
        link(10_000_000, 20, 50),
        link(64_000, 30, 50),
        1,
        None,
    )
    .await;
    let a = socket().await;
    let b = socket().await;
    let mut msg_a = vec![b'a'; 72];
    let mut msg_b = vec![b'b'; 72];
    for round in 0..3u8 {
        msg_a[1] = round;
        msg_b[1] = round;
        let sent = Instant::now();
        a.send_to(&msg_a, relay.local_addr()).await.unwrap();
        b.send_to(&msg_b, relay.local_addr()).await.unwrap();
        for (sock, msg) in [(&a, &msg_a), (&b, &msg_b)] {
            let mut buf = [0u8; 128];
            let (n, from) = tokio::time::timeout(Duration::from_secs(2), sock.recv_from(&mut buf))
                .await
                .expect("reply arrives")
                .unwrap();
            assert_eq!(from, relay.local_addr());
            assert_eq!(&buf[..n], &msg[..]);
        }
        // Both replies crossed the reverse link one after the other.
        let rtt = sent.elapsed();
        assert!(rtt >= Duration::from_millis(50 + 25), "{rtt:?}");
    }
    let s = relay.stats();
    assert_eq!(s.clients, 2);
    assert_eq!(s.reverse.forwarded_packets, 6);
    assert_eq!(s.forward.forwarded_packets, 6);
}

/// Drops replies starting with `x`, and keeps only the newest reply
/// starting with `k` in the queue.
#[derive(Debug, Default)]
struct TestHook;

impl ReverseHook for TestHook {
    fn on_arrival(&mut self, _: AwInstant, a: &Arrival<'_>, q: &mut QueueView<'_>) -> HookAction {
        match a.datagram.first() {
            Some(b'x') => HookAction::Drop,
            Some(b'k') => {
                let older: Vec<usize> = q
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.datagram.first() == Some(&b'k'))
                    .map(|(i, _)| i)
                    .collect();
                for i in older.into_iter().rev() {
                    assert!(q.remove(i));
                }
                HookAction::Pass
            }
            _ => HookAction::Pass,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_hook_drops_and_removes() {
    let (server, _task) = echo_server().await;
    // Slow reverse link (100 + 28 bytes: 16 ms each), so replies queue.
    let relay = start(
        server,
        link(100_000_000, 0, 50),
        link(64_000, 0, 50),
        1,
        Some(Box::new(TestHook)),
    )
    .await;
    let client = socket().await;
    for (i, tag) in [b'p', b'x', b'k', b'k', b'k', b'k', b'x', b'p']
        .iter()
        .enumerate()
    {
        let mut d = vec![*tag; 100];
        d[1] = i as u8;
        client.send_to(&d, relay.local_addr()).await.unwrap();
    }
    let got = collect(&client, Duration::from_millis(400)).await;
    let tags: Vec<(u8, u8)> = got.iter().map(|(_, d)| (d[0], d[1])).collect();
    let s = relay.stats().reverse;
    // The first reply is on the wire before the others arrive; of the
    // `k`s only the newest survives.
    assert_eq!(tags, vec![(b'p', 0), (b'k', 5), (b'p', 7)], "{s}");
    assert_eq!(s.hook_drops, 2, "{s}");
    assert_eq!(s.hook_removed, 3, "{s}");
}

/// A connection configuration for a 1500-byte path with short timers.
fn net_config() -> Config {
    Config {
        mss: 1400,
        min_rto: Duration::from_millis(100),
        initial_rto: Duration::from_millis(200),
        nagle: false,
        idle_timeout: Some(Duration::from_secs(20)),
        ..Config::default()
    }
}

/// Sends `data` from a new client endpoint through `relay` to `server`
/// with connection settings `config`; returns what the server read.
/// Panics, with `label` and the relay's counters, after 60 s.
async fn transfer_through(
    relay: &RelayHandle,
    server: Endpoint,
    config: Config,
    data: &[u8],
    label: &str,
) -> Vec<u8> {
    let receiver = tokio::spawn(async move {
        let (mut stream, _) = server.accept().await.expect("accept");
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.expect("read");
        let _ = stream.shutdown().await;
        server.close(Duration::from_millis(300)).await;
        got
    });
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let transfer = async {
        let mut stream = client
            .connect(relay.local_addr(), config)
            .await
            .expect("connect through the relay");
        stream.write_all(data).await.expect("write");
        stream.shutdown().await.expect("shutdown");
        receiver.await.expect("receiver task")
    };
    tokio::time::timeout(Duration::from_secs(60), transfer)
        .await
        .unwrap_or_else(|_| panic!("{label}: timed out; relay {}", relay.stats()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ackwise_transfer_through_a_lossy_reordering_relay_arrives_intact() {
    let seed = 6;
    let server = Endpoint::server("127.0.0.1:0".parse().unwrap(), net_config()).unwrap();
    let mut fwd = link(20_000_000, 10, 100);
    let mut rev = link(20_000_000, 10, 100);
    for l in [&mut fwd, &mut rev] {
        l.loss = 0.02;
        l.reorder = 0.02;
    }
    let relay = start(server.local_addr(), fwd, rev, seed, None).await;
    let data: Vec<u8> = (0..600_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let label = format!("seed {seed}");
    let got = transfer_through(&relay, server, net_config(), &data, &label).await;
    let s = relay.stats();
    assert!(
        got == data,
        "seed {seed}: {} of {} bytes, data differs",
        got.len(),
        data.len()
    );
    // The path really was lossy and reordering in both directions.
    assert!(s.forward.random_losses > 0 && s.forward.reorders > 0, "{s}");
    assert!(s.reverse.random_losses + s.reverse.reorders > 0, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reverse_discipline_can_be_replaced() {
    let (server, _task) = echo_server().await;
    let config = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: server,
        forward: link(100_000_000, 0, 100),
        // The configured reverse buffer would hold all ten replies.
        reverse: link(64_000, 0, 100),
        seed: 1,
        ack_management: Default::default(),
    };
    let mut relay = Relay::bind(config).await.unwrap();
    relay.set_reverse_queue(Box::new(ackwise::emu::queue::DropTail::new(1, None)));
    let relay = relay.spawn();
    let client = socket().await;
    for i in 0..10u8 {
        client.send_to(&[i; 100], relay.local_addr()).await.unwrap();
    }
    let got = collect(&client, Duration::from_millis(400)).await;
    let s = relay.stats().reverse;
    assert_eq!(s.packets_in, 10, "{s}");
    // 128 bytes at 64 kbit/s take 16 ms: at most one waits behind the one
    // on the wire while the other replies arrive.
    assert!(s.queue_drops >= 6, "{s}");
    assert!(s.peak_queue_packets <= 1, "{s}");
    assert_eq!(got.len() as u64, 10 - s.queue_drops);
}

/// Receivers that acknowledge every segment, so the slow reverse link is
/// what limits the transfer.
fn every_segment_config() -> Config {
    Config {
        ack_policy: AckPolicyConfig::Every,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(300),
        ..net_config()
    }
}

/// Sends `data` through a relay with 10 Mbit/s forward and `reverse_bps`
/// back, 20 ms each way, under `ack`; returns what arrived and the relay's
/// counters.
async fn managed_transfer(
    data: &[u8],
    reverse_bps: u64,
    ack: AckManagement,
) -> (Vec<u8>, RelayStats) {
    let server = Endpoint::server("127.0.0.1:0".parse().unwrap(), every_segment_config()).unwrap();
    let config = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: server.local_addr(),
        forward: link(10_000_000, 20, 200),
        reverse: link(reverse_bps, 20, 200),
        seed: 1,
        ack_management: ack,
    };
    let relay = spawn_relay(config, None).await;
    let label = format!("{ack:?}");
    let got = transfer_through(&relay, server, every_segment_config(), data, &label).await;
    (got, relay.stats())
}

fn pseudo_random(len: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_in_the_relay_delivers_intact_with_fewer_acks_over_the_slow_link() {
    let data = pseudo_random(400_000);
    let (plain_got, plain) = managed_transfer(&data, 128_000, AckManagement::default()).await;
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
        let (got, s) = managed_transfer(&data, 128_000, ack).await;
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
    let data = pseudo_random(300_000);
    let ack = AckManagement {
        filter: None,
        // A tiny threshold, so that the forward queue passes it.
        delay_control: Some(parse_delay_control("--ack-delay-control", "3kB,0.25").unwrap()),
    };
    let (got, s) = managed_transfer(&data, 10_000_000, ack).await;
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

/// A relay whose `to` is its own listening address would multiply one
/// datagram into a socket per round trip: it is refused at bind.
#[tokio::test]
async fn a_forwarding_loop_is_refused() {
    let taken = socket().await;
    let port = taken.local_addr().unwrap().port();
    drop(taken);
    for (listen, to) in [
        (format!("127.0.0.1:{port}"), format!("127.0.0.1:{port}")),
        (format!("0.0.0.0:{port}"), format!("127.0.0.1:{port}")),
    ] {
        let config = RelayConfig {
            listen: listen.parse().unwrap(),
            to: to.parse().unwrap(),
            forward: link(1_000_000, 0, 10),
            reverse: link(1_000_000, 0, 10),
            seed: 1,
            ack_management: Default::default(),
        };
        let e = Relay::bind(config).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{listen}");
        assert!(e.to_string().contains("forwarding loop"), "{e}");
    }
}

/// At most `max_clients` client sockets are open; idle ones close, and
/// their clients get new ones when they come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_sockets_are_capped_and_expire() {
    let sink = socket().await;
    let config = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to: sink.local_addr().unwrap(),
        forward: link(100_000_000, 0, 100),
        reverse: link(100_000_000, 0, 100),
        seed: 1,
        ack_management: Default::default(),
    };
    let mut relay = Relay::bind(config).await.unwrap();
    relay.set_client_limits(ClientLimits {
        max_clients: 2,
        idle: Duration::from_millis(400),
    });
    let relay = relay.spawn();
    let clients = [socket().await, socket().await, socket().await];
    for (i, c) in clients.iter().enumerate() {
        c.send_to(&[i as u8], relay.local_addr()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = collect(&sink, Duration::from_millis(150)).await;
    let firsts: Vec<u8> = got.iter().map(|(_, d)| d[0]).collect();
    assert_eq!(firsts, vec![0, 1], "the third client is over the cap");
    let s = relay.stats();
    assert_eq!((s.clients, s.clients_refused), (2, 1));
    // Nothing moves for longer than the idle time: both sockets close.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let s = relay.stats();
    assert_eq!((s.clients, s.clients_expired), (0, 2), "{s}");
    // The third client now gets a socket.
    clients[2].send_to(&[2], relay.local_addr()).await.unwrap();
    let got = collect(&sink, Duration::from_millis(300)).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, vec![2]);
    assert_eq!(relay.stats().clients, 1);
}
