//! The tokio endpoint on 127.0.0.1: transfers with digests, many
//! concurrent connections, garbage at the server's port, refused and
//! timed-out connects, and a client that disappears mid-transfer.
#![cfg(feature = "tokio")]
#![cfg(feature = "tokio")]

use ackwise::connection::Config;
use ackwise::net::{Endpoint, EndpointConfig, NetError, Stream};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UdpSocket;

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A configuration for loopback: short timers so that failures show
/// quickly.
fn config() -> Config {
    Config {
        initial_rto: Duration::from_millis(200),
        min_rto: Duration::from_millis(200),
        rto_variance_floor: Duration::from_millis(200),
        idle_timeout: Some(Duration::from_secs(5)),
        time_wait: Duration::from_secs(1),
        ..Config::default()
    }
}

fn random_bytes(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Reads to the end of the stream, hashing. Reads alternate between
/// copying ones and ones that take the data by reference
/// (`Stream::read_chunk`), so every transfer checks both.
async fn read_digest(stream: &mut Stream) -> io::Result<([u8; 32], u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0u64;
    for i in 0.. {
        let n = if i % 2 == 0 {
            let n = stream.read(&mut buf).await?;
            hasher.update(&buf[..n]);
            n
        } else {
            let chunk = stream.read_chunk(40 << 10).await?.unwrap_or_default();
            assert!(chunk.len() <= 40 << 10);
            hasher.update(&chunk);
            chunk.len()
        };
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    Ok((hasher.finalize().into(), total))
}

/// Serves every accepted connection: reads it to the end and writes back
/// the SHA-256 of what arrived.
fn spawn_digest_server(server: Endpoint) {
    tokio::spawn(async move {
        while let Some((mut stream, _)) = server.accept().await {
            tokio::spawn(async move {
                if let Ok((digest, _)) = read_digest(&mut stream).await {
                    let _ = stream.write_all(&digest).await;
                    let _ = stream.shutdown().await;
                }
            });
        }
    });
}

/// Sends `data` on a new connection and checks the digest the server
/// sends back.
async fn send_and_check(client: &Endpoint, server: SocketAddr, data: &[u8]) -> Result<(), String> {
    let mut stream = client
        .connect(server, config())
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream
        .write_all(data)
        .await
        .map_err(|e| format!("write: {e}"))?;
    stream
        .shutdown()
        .await
        .map_err(|e| format!("shutdown: {e}"))?;
    let mut echoed = Vec::new();
    stream
        .read_to_end(&mut echoed)
        .await
        .map_err(|e| format!("read digest: {e}"))?;
    if echoed != sha256(data) {
        return Err(format!(
            "digest mismatch for {} bytes (got {} bytes back)",
            data.len(),
            echoed.len()
        ));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfer_of_a_few_megabytes_arrives_intact() {
    let server = Endpoint::server(localhost(), config()).unwrap();
    let addr = server.local_addr();
    let client = Endpoint::bind(localhost()).unwrap();
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(1), 6 << 20);
    let expected = sha256(&data);

    let receiver = tokio::spawn({
        let server = server.clone();
        async move {
            let (mut stream, from) = server.accept().await.expect("accept");
            let (digest, len) = read_digest(&mut stream).await.expect("read");
            (digest, len, from, stream.stats())
        }
    });
    let mut stream = client.connect(addr, config()).await.expect("connect");
    assert_eq!(stream.remote_addr(), addr);
    // Endpoints keep TCP's checksum unless told otherwise.
    assert!(!stream.negotiated().checksums_omitted);
    stream.write_all(&data).await.unwrap();
    stream.shutdown().await.unwrap();
    let (digest, len, from, rx_stats) = tokio::time::timeout(Duration::from_secs(20), receiver)
        .await
        .expect("receiver finished")
        .unwrap();
    assert_eq!(len, data.len() as u64);
    assert_eq!(digest, expected);
    assert_eq!(from, client.local_addr());
    assert_eq!(rx_stats.bytes_delivered, data.len() as u64);
    let tx_stats = stream.stats();
    assert!(tx_stats.data_bytes_sent >= data.len() as u64);
    assert!(rx_stats.acks_sent > 0);
    // Writing after shutdown is refused.
    let err = stream.write_all(b"more").await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    let e = client.stats();
    assert!(e.segments_sent >= e.datagrams_sent);
    assert_eq!(server.stats().malformed_dropped, 0);
}

/// Endpoints that both offer to leave TCP's checksum out (UDP's covers
/// the same bytes) do, and data still arrives whole; where one of the two
/// does not offer, both keep it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_checksums_are_left_out_where_both_endpoints_offer_it() {
    let seed = 0xc5_0417;
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(seed), 3 << 20);
    let endpoint = |omit: bool, server: bool| {
        Endpoint::with_config(
            localhost(),
            EndpointConfig {
                server: server.then(config),
                omit_tcp_checksums: omit,
                ..EndpointConfig::default()
            },
        )
        .unwrap()
    };
    for (client_omits, server_omits) in [(true, true), (true, false), (false, true)] {
        let server = endpoint(server_omits, true);
        let addr = server.local_addr();
        spawn_digest_server(server.clone());
        let client = endpoint(client_omits, false);
        let stream = client.connect(addr, config()).await.unwrap();
        assert_eq!(
            stream.negotiated().checksums_omitted,
            client_omits && server_omits,
            "seed {seed:#x}: client {client_omits}, server {server_omits}"
        );
        drop(stream);
        send_and_check(&client, addr, &data).await.unwrap();
        assert_eq!(server.stats().malformed_dropped, 0);
        assert_eq!(client.stats().malformed_dropped, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_concurrent_connections_arrive_with_matching_digests() {
    let seed = 0x5eed_0100;
    let server = Endpoint::server(localhost(), config()).unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    // Four client endpoints, 25 connections each: connections differ by
    // source address and by port pair.
    let clients: Vec<Endpoint> = (0..4)
        .map(|_| Endpoint::bind(localhost()).unwrap())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tasks = Vec::new();
    for i in 0..100 {
        let len = (rng.next_u32() % (256 << 10)) as usize;
        let data = random_bytes(&mut rng, len);
        let client = clients[i % 4].clone();
        tasks.push(tokio::spawn(async move {
            send_and_check(&client, addr, &data)
                .await
                .map_err(|e| format!("connection {i} ({len} bytes): {e}"))
        }));
    }
    let deadline = Duration::from_secs(20);
    for t in tasks {
        let r = tokio::time::timeout(deadline, t)
            .await
            .unwrap_or_else(|_| panic!("seed {seed:#x}: a connection hung"))
            .unwrap();
        if let Err(e) = r {
            panic!("seed {seed:#x}: {e}");
        }
    }
    assert_eq!(server.stats().connections_accepted, 100);
}

/// Forwards datagrams between one client and the server, keeping a copy
/// of what the client sent.
struct Proxy {
    addr: SocketAddr,
    /// The socket facing the server: what it sends looks like the client.
    back: Arc<UdpSocket>,
    captured: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Set to drop everything in both directions.
    cut: Arc<AtomicBool>,
    /// Datagrams above this many bytes of UDP payload are dropped.
    max_payload: Arc<AtomicUsize>,
}

async fn proxy(server: SocketAddr) -> Proxy {
    proxy_with_mtu(server, usize::MAX).await
}

/// A proxy that drops datagrams of more than `max_payload` bytes (UDP
/// payload) both ways, as a path with a smaller MTU than loopback's does.
async fn proxy_with_mtu(server: SocketAddr, max_payload: usize) -> Proxy {
    let max_payload = Arc::new(AtomicUsize::new(max_payload));
    let front = Arc::new(UdpSocket::bind(localhost()).await.unwrap());
    let back = Arc::new(UdpSocket::bind(localhost()).await.unwrap());
    let captured = Arc::new(Mutex::new(Vec::new()));
    let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
    let cut = Arc::new(AtomicBool::new(false));
    let addr = front.local_addr().unwrap();
    tokio::spawn({
        let (front, back, captured, client, cut, max_payload) = (
            front.clone(),
            back.clone(),
            captured.clone(),
            client.clone(),
            cut.clone(),
            max_payload.clone(),
        );
        async move {
            let mut buf = vec![0u8; 65_536];
            while let Ok((n, from)) = front.recv_from(&mut buf).await {
                if cut.load(Ordering::Relaxed) || n > max_payload.load(Ordering::Relaxed) {
                    continue;
                }
                *client.lock().unwrap() = Some(from);
                {
                    let mut c = captured.lock().unwrap();
                    if c.len() < 10_000 {
                        c.push(buf[..n].to_vec());
                    }
                }
                let _ = back.send_to(&buf[..n], server).await;
            }
        }
    });
    tokio::spawn({
        let (back, cut, max_payload) = (back.clone(), cut.clone(), max_payload.clone());
        async move {
            let mut buf = vec![0u8; 65_536];
            while let Ok((n, _)) = back.recv_from(&mut buf).await {
                if cut.load(Ordering::Relaxed) || n > max_payload.load(Ordering::Relaxed) {
                    continue;
                }
                let to = *client.lock().unwrap();
                if let Some(to) = to {
                    let _ = front.send_to(&buf[..n], to).await;
                }
            }
        }
    });
    Proxy {
        addr,
        back,
        captured,
        cut,
        max_payload,
    }
}

/// Issue 16 item 5: connections ask for the largest segments a datagram
/// holds and the path decides. Loopback carries them whole; a path with
/// a 1 500 or 1 400-byte MTU (the proxy) gets segments that fit it,
/// where before the first full segment was lost on every try.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_take_the_largest_segments_the_path_carries() {
    let seed = 0x9a7_4a1e;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let big = || Config {
        mss: ackwise::net::MAX_MSS,
        ..config()
    };
    let server = Endpoint::server(localhost(), big()).unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    let data = random_bytes(&mut rng, 2_000_000);

    // Loopback: every candidate echoed, the largest taken.
    let client = Endpoint::bind(localhost()).unwrap();
    let stream = client.connect(addr, big()).await.unwrap();
    assert_eq!(stream.negotiated().peer_mss, ackwise::net::MAX_MSS);
    drop(stream);
    assert_eq!(client.stats().mtu_probes_sent, 7, "{:?}", client.stats());
    assert!(server.stats().mtu_probes_echoed >= 7);
    send_big(&client, addr, &data, ackwise::net::MAX_MSS).await;

    // Paths of smaller MTUs (IP bytes; the proxy counts UDP payload).
    for (mtu, mss) in [(1500, 1412), (1450, 1332), (1300, 1192), (9000, 8912)] {
        let proxy = proxy_with_mtu(addr, mtu - 28).await;
        let stream = client.connect(proxy.addr, big()).await.unwrap();
        assert_eq!(
            stream.negotiated().peer_mss,
            mss,
            "seed {seed:#x}, MTU {mtu}"
        );
        drop(stream);
        send_big(&client, proxy.addr, &data, mss).await;
    }

    // A peer that answers no probes: RFC 8899's base after a second.
    let quiet = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(big()),
            probe_path_mtu: false,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    spawn_digest_server(quiet.clone());
    let start = Instant::now();
    let stream = client.connect(quiet.local_addr(), big()).await.unwrap();
    let waited = start.elapsed();
    assert_eq!(stream.negotiated().peer_mss, 1112);
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(3)).contains(&waited),
        "{waited:?}"
    );
    assert_eq!(quiet.stats().mtu_probes_echoed, 0);

    // A client that does not probe keeps its MSS, and the server's large
    // one only says what it could take.
    let plain = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            probe_path_mtu: false,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let stream = plain.connect(addr, config()).await.unwrap();
    assert_eq!(stream.negotiated().peer_mss, config().mss);
    assert_eq!(plain.stats().mtu_probes_sent, 0);
}

/// RFC 8899 section 4.3 on sockets: the path's MTU drops from loopback's
/// to Ethernet's in the middle of a transfer. The sender's full-sized
/// segments are lost from then on; after three timeouts in a row it
/// falls back to the base size and the data arrives whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_survives_the_path_mtu_shrinking_under_it() {
    let big = || Config {
        mss: ackwise::net::MAX_MSS,
        ..config()
    };
    let server = Endpoint::server(localhost(), big()).unwrap();
    spawn_digest_server(server.clone());
    let proxy = proxy_with_mtu(server.local_addr(), usize::MAX).await;
    let client = Endpoint::bind(localhost()).unwrap();
    let stream = client.connect(proxy.addr, big()).await.unwrap();
    assert_eq!(stream.negotiated().peer_mss, ackwise::net::MAX_MSS);
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(0x81ac), 40_000_000);
    let probe = stream.ack_probe();
    let transfer = tokio::spawn(send_for_digest(stream, data.clone()));
    while probe.acknowledged_bytes() < 2_000_000 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    proxy.max_payload.store(1500 - 28, Ordering::Relaxed);
    assert_eq!(transfer.await.unwrap(), sha256(&data));
    let stats = probe.stats();
    assert_eq!(stats.black_hole_fallbacks, 1, "{stats:?}");
    assert!(stats.timeouts >= 3, "{stats:?}");
}

/// `data` through a connection to `to` that must agree on `mss`, checked
/// by the digest server.
async fn send_big(client: &Endpoint, to: SocketAddr, data: &[u8], mss: u16) {
    let config = Config {
        mss: ackwise::net::MAX_MSS,
        ..config()
    };
    let stream = client.connect(to, config).await.unwrap();
    assert_eq!(stream.negotiated().peer_mss, mss);
    assert_eq!(
        send_for_digest(stream, data.to_vec()).await,
        sha256(data),
        "MSS {mss}"
    );
}

/// Writes `data` to the digest server on `stream` while reading its
/// answer, within 30 s; the digest it sent back.
async fn send_for_digest(stream: Stream, data: Vec<u8>) -> Vec<u8> {
    let (mut rd, mut wr) = stream.into_split();
    let writer = tokio::spawn(async move {
        wr.write_all(&data).await.unwrap();
        wr.shutdown().await.unwrap();
    });
    let mut echoed = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), rd.read_to_end(&mut echoed))
        .await
        .expect("the transfer stalled")
        .unwrap();
    writer.await.unwrap();
    echoed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_survives_garbage_and_mutated_segments() {
    let seed = 0x6a_4ba6e;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let server = Endpoint::server(localhost(), config()).unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    let proxy = proxy(addr).await;
    // Without GSO every segment crosses the proxy as its own datagram.
    // The client keeps TCP checksums, which are what tells a mutated
    // segment from a real one here: the mutator sends each afresh, so
    // UDP's checksum, all that guards a connection that left TCP's out,
    // is right on every one.
    let client = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            gso: false,
            omit_tcp_checksums: false,
            ..EndpointConfig::default()
        },
    )
    .unwrap();

    // A first transfer, captured by the proxy.
    let first = random_bytes(&mut rng, 300_000);
    send_and_check(&client, proxy.addr, &first).await.unwrap();
    // A second connection stays open across the attack.
    let mut live = client.connect(proxy.addr, config()).await.unwrap();
    assert!(!live.negotiated().checksums_omitted);
    let head = random_bytes(&mut rng, 100_000);
    live.write_all(&head).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let captured = proxy.captured.lock().unwrap().clone();
    assert!(captured.len() > 100, "captured {} segments", captured.len());

    // 10 000 datagrams of random bytes from a stranger.
    let stranger = UdpSocket::bind(localhost()).await.unwrap();
    for i in 0..10_000 {
        let len = 1 + (rng.next_u32() % 1_500) as usize;
        let junk = random_bytes(&mut rng, len);
        let _ = stranger.send_to(&junk, addr).await;
        if i % 500 == 0 {
            tokio::task::yield_now().await;
        }
    }
    // 10 000 mutated real segments, from the client's own address (the
    // proxy), so they reach the live connection too.
    for i in 0..10_000 {
        let mut seg = captured[(rng.next_u32() as usize) % captured.len()].clone();
        let flips = 1 + rng.next_u32() % 3;
        for _ in 0..flips {
            let at = (rng.next_u32() as usize) % seg.len();
            seg[at] ^= 1 + (rng.next_u32() % 255) as u8;
        }
        let _ = proxy.back.send_to(&seg, addr).await;
        if i % 500 == 0 {
            tokio::task::yield_now().await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stats = server.stats();
    assert!(
        stats.malformed_dropped >= 10_000,
        "seed {seed:#x}: only {} of 20 000 bad datagrams counted as malformed ({stats:?})",
        stats.malformed_dropped
    );

    // The live connection finishes intact ...
    let tail = random_bytes(&mut rng, 200_000);
    live.write_all(&tail).await.unwrap();
    live.shutdown().await.unwrap();
    let mut echoed = Vec::new();
    live.read_to_end(&mut echoed).await.unwrap();
    let mut all = head.clone();
    all.extend_from_slice(&tail);
    assert_eq!(
        echoed,
        sha256(&all),
        "seed {seed:#x}: live connection corrupted"
    );
    // ... and new ones still work, directly and through the proxy.
    let direct = Endpoint::bind(localhost()).unwrap();
    let third = random_bytes(&mut rng, 500_000);
    send_and_check(&direct, addr, &third).await.unwrap();
    send_and_check(&client, proxy.addr, &third).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_to_a_closed_port_fails_within_the_timeout() {
    // A port nobody listens on: the kernel answers with ICMP.
    let closed = {
        let s = std::net::UdpSocket::bind(localhost()).unwrap();
        s.local_addr().unwrap()
    };
    let timeout = Duration::from_secs(2);
    let client = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            connect_timeout: timeout,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let start = Instant::now();
    let err = client.connect(closed, config()).await.unwrap_err();
    let elapsed = start.elapsed();
    assert!(
        elapsed < timeout + Duration::from_millis(1500),
        "took {elapsed:?}"
    );
    assert!(
        matches!(
            err,
            NetError::ConnectionRefused { .. } | NetError::TimedOut { .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&closed.to_string()), "{err}");
    eprintln!("closed port: {err} after {elapsed:?}");

    // A socket that swallows everything: only the timeout can tell.
    let silent = UdpSocket::bind(localhost()).await.unwrap();
    let start = Instant::now();
    let err = client
        .connect(silent.local_addr().unwrap(), config())
        .await
        .unwrap_err();
    let elapsed = start.elapsed();
    assert!(matches!(err, NetError::TimedOut { .. }), "{err}");
    assert!(elapsed >= timeout && elapsed < timeout + Duration::from_millis(1500));
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::TimedOut);

    // An ackwise endpoint that does not listen answers with a reset.
    let not_listening = Endpoint::bind(localhost()).unwrap();
    let start = Instant::now();
    let err = client
        .connect(not_listening.local_addr(), config())
        .await
        .unwrap_err();
    assert!(matches!(err, NetError::ConnectionRefused { .. }), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(not_listening.stats().resets_sent >= 1);

    // Addresses that cannot work fail at once.
    for bad in ["127.0.0.1:0", "0.0.0.0:9", "[::1]:9"] {
        let err = client
            .connect(bad.parse().unwrap(), config())
            .await
            .unwrap_err();
        assert!(
            matches!(err, NetError::InvalidRemote { .. }),
            "{bad}: {err}"
        );
    }
}

/// Starts a transfer that never ends and returns the server's stream once
/// some data arrived, with the client endpoint and its task.
async fn endless_transfer(
    server: &Endpoint,
    client_addr_target: SocketAddr,
) -> (Stream, Endpoint, tokio::task::JoinHandle<()>) {
    let client = Endpoint::bind(localhost()).unwrap();
    let (connected, accepted) = tokio::join!(
        client.connect(client_addr_target, config()),
        server.accept()
    );
    // The writer holds only its stream: the test's `client` is the
    // endpoint's last handle, so dropping it resets a connection that is
    // still open, rather than racing a FIN sent by a dropped stream.
    let mut s = connected.unwrap();
    let task = tokio::spawn(async move {
        let chunk = vec![7u8; 64 << 10];
        while s.write_all(&chunk).await.is_ok() {}
    });
    let (mut stream, _) = accepted.unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut got = 0;
    while got < 1 << 20 {
        got += stream.read(&mut buf).await.unwrap();
    }
    (stream, client, task)
}

/// Reads until an error, which must come within `limit`.
async fn read_until_error(stream: &mut Stream, limit: Duration) -> io::Error {
    let mut buf = vec![0u8; 64 << 10];
    let r = tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(e),
            }
        }
    })
    .await;
    match r {
        Ok(Some(e)) => e,
        Ok(None) => panic!("stream ended cleanly instead of failing"),
        Err(_) => panic!("read hung for {limit:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_client_endpoint_fails_the_server_read() {
    let mut cfg = config();
    cfg.idle_timeout = Some(Duration::from_secs(1));
    let server = Endpoint::server(localhost(), cfg).unwrap();

    // Dropping the endpoint resets its connections, the writer's still
    // open one included.
    let (mut stream, client, task) = endless_transfer(&server, server.local_addr()).await;
    drop(client);
    let err = read_until_error(&mut stream, Duration::from_secs(5)).await;
    task.abort();
    let _ = task.await;
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::TimedOut
        ),
        "{err:?}"
    );
    eprintln!("dropped endpoint: {err}");

    // A client that vanishes without a word (the path is cut before its
    // endpoint goes, so not even its reset arrives) runs into the
    // server's idle timeout.
    let p = proxy(server.local_addr()).await;
    let (mut stream, client, task) = endless_transfer(&server, p.addr).await;
    p.cut.store(true, Ordering::Relaxed);
    task.abort();
    let _ = task.await;
    drop(client);
    let start = Instant::now();
    let err = read_until_error(&mut stream, Duration::from_secs(5)).await;
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_close_finishes_connections_then_refuses_work() {
    let server = Endpoint::server(localhost(), config()).unwrap();
    let addr = server.local_addr();
    let client = Endpoint::bind(localhost()).unwrap();
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(7), 1 << 20);
    let mut stream = client.connect(addr, config()).await.unwrap();
    let (mut accepted, _) = server.accept().await.unwrap();
    stream.write_all(&data).await.unwrap();
    // The client endpoint closes with the data possibly still in flight:
    // the FIN follows it, the server reads everything and then the end.
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        accepted.read_to_end(&mut got).await.map(|_| got)
    });
    let start = Instant::now();
    client.close(Duration::from_secs(5)).await;
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    let got = reader.await.unwrap().unwrap();
    assert!(
        got == data,
        "server got {} of {} bytes",
        got.len(),
        data.len()
    );
    // The endpoint is gone: no new connections, no more writes.
    let err = client.connect(addr, config()).await.unwrap_err();
    assert!(matches!(err, NetError::EndpointClosed), "{err}");
    let err = stream.write_all(b"late").await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::NotConnected | io::ErrorKind::BrokenPipe
        ),
        "{err:?}"
    );
}

/// Sends `len` bytes from a fresh client to `server` and returns the
/// receiving stream's counters.
async fn receiver_stats(
    endpoint: EndpointConfig,
    config: Config,
    len: usize,
) -> ackwise::connection::Stats {
    let server = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(config.clone()),
            ..endpoint.clone()
        },
    )
    .unwrap();
    let client = Endpoint::with_config(localhost(), endpoint).unwrap();
    let mut stream = client.connect(server.local_addr(), config).await.unwrap();
    let (mut accepted, _) = server.accept().await.unwrap();
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(9), len);
    let writer = tokio::spawn(async move {
        stream.write_all(&data).await.unwrap();
        stream.shutdown().await.unwrap();
        stream
    });
    let (_, n) = read_digest(&mut accepted).await.unwrap();
    assert_eq!(n, len as u64);
    writer.await.unwrap();
    accepted.stats()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_segment_transmission_lets_the_ack_policy_act_per_segment() {
    let mut ae = config();
    ae.ack_policy = ackwise::connection::AckPolicyConfig::Every;
    let per_segment = EndpointConfig {
        transmit_per_segment: true,
        ..EndpointConfig::default()
    };
    let s = receiver_stats(per_segment, ae.clone(), 4 << 20).await;
    // Every data segment drew its own ACK.
    assert!(
        s.pure_acks_sent * 10 >= s.data_segments_received * 9,
        "{} ACKs for {} segments",
        s.pure_acks_sent,
        s.data_segments_received
    );
    // Per batch, one ACK answers many segments (GRO delivers dozens at
    // once on loopback; without GRO a receive call still brings several).
    let s = receiver_stats(EndpointConfig::default(), ae, 4 << 20).await;
    assert!(
        s.pure_acks_sent * 2 <= s.data_segments_received,
        "{} ACKs for {} segments",
        s.pure_acks_sent,
        s.data_segments_received
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_small_reads_keep_the_window_moving() {
    let mut cfg = config();
    cfg.recv_buffer = 64 << 10;
    cfg.send_buffer = 64 << 10;
    let server = Endpoint::server(localhost(), cfg.clone()).unwrap();
    let client = Endpoint::bind(localhost()).unwrap();
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(11), 2 << 20);
    let expected = sha256(&data);
    let mut stream = client.connect(server.local_addr(), cfg).await.unwrap();
    let writer = tokio::spawn(async move {
        stream.write_all(&data).await.unwrap();
        stream.shutdown().await.unwrap();
    });
    let (mut accepted, _) = server.accept().await.unwrap();
    let read = async {
        let mut hasher = Sha256::new();
        let mut buf = [0u8; 1000];
        let mut reads = 0u32;
        loop {
            let n = accepted.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            reads += 1;
            // Let the buffer fill up now and then: the window closes and
            // must reopen as the reader catches up.
            if reads.is_multiple_of(200) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        <[u8; 32]>::from(hasher.finalize())
    };
    let digest = tokio::time::timeout(Duration::from_secs(15), read)
        .await
        .expect("transfer stalled");
    assert_eq!(digest, expected);
    writer.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_halves_echo_with_tokio_copy() {
    let server = Endpoint::server(localhost(), config()).unwrap();
    let addr = server.local_addr();
    tokio::spawn(async move {
        let (stream, _) = server.accept().await.unwrap();
        let (mut r, mut w) = stream.into_split();
        tokio::io::copy(&mut r, &mut w).await.unwrap();
        w.shutdown().await.unwrap();
    });
    let client = Endpoint::bind(localhost()).unwrap();
    let stream = client.connect(addr, config()).await.unwrap();
    let (mut r, mut w) = tokio::io::split(stream);
    let data = random_bytes(&mut ChaCha8Rng::seed_from_u64(12), 3 << 20);
    let writer = tokio::spawn({
        let data = data.clone();
        async move {
            w.write_all(&data).await.unwrap();
            w.shutdown().await.unwrap();
        }
    });
    let mut echoed = Vec::new();
    tokio::time::timeout(Duration::from_secs(15), r.read_to_end(&mut echoed))
        .await
        .expect("echo stalled")
        .unwrap();
    writer.await.unwrap();
    assert!(
        echoed == data,
        "echoed {} of {} bytes",
        echoed.len(),
        data.len()
    );
}

/// A segment that cannot fit one UDP datagram is refused when the
/// connection or server is set up, not found out by a stalled transfer.
#[tokio::test]
async fn segments_larger_than_a_datagram_are_refused_up_front() {
    let too_big = Config {
        mss: ackwise::net::MAX_MSS + 1,
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        ..config()
    };
    let server = Endpoint::server(localhost(), config()).unwrap();
    let client = Endpoint::bind(localhost()).unwrap();
    match client.connect(server.local_addr(), too_big.clone()).await {
        Err(NetError::SegmentTooLarge { mss, max }) => {
            assert_eq!(
                (mss, max),
                (ackwise::net::MAX_MSS + 1, ackwise::net::MAX_MSS)
            );
        }
        other => panic!("expected SegmentTooLarge, got {:?}", other.map(|_| ())),
    }
    let e = Endpoint::server(localhost(), too_big).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("UDP datagram"), "{e}");
    // The largest size that fits still works end to end on loopback.
    let max = Config {
        mss: ackwise::net::MAX_MSS,
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        ..config()
    };
    let server = Endpoint::server(localhost(), max.clone()).unwrap();
    let accepting = server.clone();
    let echo = tokio::spawn(async move {
        let (mut s, _) = accepting.accept().await.unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        got
    });
    let mut s = client.connect(server.local_addr(), max).await.unwrap();
    let data = vec![0x5au8; 300_000];
    s.write_all(&data).await.unwrap();
    s.shutdown().await.unwrap();
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(20), echo)
            .await
            .unwrap()
            .unwrap(),
        data
    );
}

/// A SYN from `port` to `dst_port`, as a SYN flood sends them from
/// spoofed or random ports.
fn syn(port: u16, dst_port: u16, isn: u32) -> Vec<u8> {
    use ackwise::wire::{Checksum, Flags, Options, SegmentRepr, SeqNum};
    let repr = SegmentRepr {
        src_port: port,
        dst_port,
        seq: SeqNum(isn),
        ack: SeqNum(0),
        flags: Flags::SYN,
        window: 65_535,
        options: Options {
            mss: Some(1460),
            ..Options::default()
        },
        payload: &[],
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf, Checksum::UNSPECIFIED).unwrap();
    buf
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_connects_within_a_second_during_a_syn_flood() {
    // 10 000 SYNs from distinct ports that never complete their
    // handshake fill any half-open table many times over. With SYN
    // cookies (the default) every SYN beyond the half-open limits is
    // answered without keeping state, once, and a real client that starts
    // in the middle of the flood still gets through.
    let stats = flood_while_a_client_connects(true).await;
    assert!(stats.syn_cookies_sent > 0, "{stats:?}");
    assert_eq!(stats.half_open_evicted, 0, "{stats:?}");
    // One SYN-ACK per SYN at most: the half-open connections kept (256)
    // may retransmit theirs within the test's second or two, nothing else.
    let answered = stats.syn_cookies_sent + 256 * 3;
    assert!(
        stats.segments_sent <= answered + 1_000,
        "reflection: {} segments sent for 10 000 SYNs; {stats:?}",
        stats.segments_sent
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_cookies_a_syn_flood_displaces_only_half_open_connections() {
    // Without cookies the endpoint drops the oldest half-open connection
    // for each new SYN instead, which also lets the client through.
    let stats = flood_while_a_client_connects(false).await;
    assert!(stats.half_open_evicted > 0, "{stats:?}");
    assert_eq!(stats.syn_cookies_sent, 0, "{stats:?}");
}

async fn flood_while_a_client_connects(syn_cookies: bool) -> ackwise::net::EndpointStats {
    let server = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(config()),
            max_half_open: 256,
            syn_cookies,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    // The flood comes from 200 addresses (127.0.0.2 to 127.0.0.201), as
    // spoofed sources would, so that the total half-open limit, not the
    // per-peer one, is what it fills.
    let mut floods = Vec::new();
    for host in 2..202u8 {
        let from = SocketAddr::from(([127, 0, 0, host], 0));
        floods.push(UdpSocket::bind(from).await.unwrap());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut sent = 0u32;
    // Half the flood first, so the table is full when the client comes.
    while sent < 5_000 {
        let port = 1024 + (sent as u16 % 60_000);
        floods[sent as usize % floods.len()]
            .send_to(&syn(port, 80, rng.next_u32()), addr)
            .await
            .unwrap();
        sent += 1;
    }
    let client = Endpoint::with_config(localhost(), EndpointConfig::default()).unwrap();
    let flooding = tokio::spawn(async move {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for k in 5_000u32..10_000 {
            let port = 1024 + (k as u16 % 60_000);
            let flood = &floods[k as usize % floods.len()];
            let _ = flood.send_to(&syn(port, 80, rng.next_u32()), addr).await;
            if k % 100 == 0 {
                tokio::task::yield_now().await;
            }
        }
    });
    let started = Instant::now();
    let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    let result = send_and_check(&client, addr, &data).await;
    let took = started.elapsed();
    flooding.await.unwrap();
    let stats = server.stats();
    result.unwrap_or_else(|e| panic!("{e}: server {stats:?}, client {:?}", client.stats()));
    assert!(
        took < Duration::from_secs(1),
        "the client needed {took:?} under the flood (cookies {syn_cookies}); server {stats:?}"
    );
    stats
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_answered_with_a_syn_cookie_transfers_intact() {
    // One half-open connection at most, held by a SYN that never
    // completes: the client's SYN gets a cookie, its ACK rebuilds the
    // connection, and 2 MB arrive intact over it (which options survive
    // the cookie is tested in `connection::syn_cookie`).
    let server = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(config()),
            max_half_open: 1,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    let stuck = UdpSocket::bind(localhost()).await.unwrap();
    stuck.send_to(&syn(2000, 80, 12_345), addr).await.unwrap();
    let client = Endpoint::with_config(localhost(), EndpointConfig::default()).unwrap();
    // Give the stuck SYN time to take the only place.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let data = random_bytes(&mut rng, 2_000_000);
    let result = send_and_check(&client, addr, &data).await;
    let stats = server.stats();
    result.unwrap_or_else(|e| panic!("{e}: server {stats:?}, client {:?}", client.stats()));
    assert_eq!(stats.syn_cookies_sent, 1, "{stats:?}");
    assert_eq!(stats.syn_cookies_accepted, 1, "{stats:?}");
    assert_eq!(stats.connections_accepted, 1, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_table_gives_the_place_of_an_idle_connection_to_a_new_one() {
    // Twenty connections that completed their handshake and never send
    // fill the table. A new client is refused while they are fresh and
    // served once they have stood still for the eviction time; the
    // evicted connection's stream fails with a reset.
    let server = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(config()),
            max_connections: 20,
            idle_eviction: Some(Duration::from_millis(300)),
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    let holder = Endpoint::with_config(localhost(), EndpointConfig::default()).unwrap();
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(holder.connect(addr, config()).await.unwrap());
    }
    let client = Endpoint::with_config(localhost(), EndpointConfig::default()).unwrap();
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 3) as u8).collect();
    let early = send_and_check(&client, addr, &data).await;
    assert!(
        early.is_err(),
        "served with a full table of fresh connections"
    );
    assert_eq!(server.stats().idle_evicted, 0);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let started = Instant::now();
    let result = send_and_check(&client, addr, &data).await;
    let stats = server.stats();
    result.unwrap_or_else(|e| panic!("{e}: server {stats:?}"));
    assert!(started.elapsed() < Duration::from_secs(1), "{stats:?}");
    assert_eq!(stats.idle_evicted, 1, "{stats:?}");
    // Exactly one of the idle streams learns that it was reset (its reset
    // went out before the new client's transfer, so it has arrived).
    let mut reset = 0;
    for mut s in idle {
        let mut buf = [0u8; 16];
        match tokio::time::timeout(Duration::from_millis(20), s.read(&mut buf)).await {
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => reset += 1,
            Ok(other) => panic!("an idle stream read {other:?}"),
            Err(_) => {}
        }
    }
    assert_eq!(reset, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_peer_address_cannot_take_more_than_its_share_of_the_table() {
    // Three connections from 127.0.0.1 fill that address's share; its
    // fourth is refused at once, another address is served, and the
    // share comes back when one of the three ends.
    let server = Endpoint::with_config(
        localhost(),
        EndpointConfig {
            server: Some(config()),
            max_connections_per_peer: 3,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    spawn_digest_server(server.clone());
    let holder = Endpoint::with_config(localhost(), EndpointConfig::default()).unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(holder.connect(addr, config()).await.unwrap());
    }
    let started = Instant::now();
    let err = holder.connect(addr, config()).await.unwrap_err();
    assert!(
        matches!(err, NetError::ConnectionRefused { .. }),
        "{err}: {:?}",
        server.stats()
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(server.stats().per_peer_refused, 1);
    let other =
        Endpoint::with_config("127.0.0.2:0".parse().unwrap(), EndpointConfig::default()).unwrap();
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7) as u8).collect();
    send_and_check(&other, addr, &data).await.unwrap();
    held.pop().unwrap().abort();
    // The reset reaches the server and its entry goes.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match send_and_check(&holder, addr, &data).await {
            Ok(()) => break,
            Err(e) if Instant::now() > deadline => panic!("{e}: {:?}", server.stats()),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}
