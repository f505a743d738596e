//! A quick loopback measurement of `ackwise::net`: one bulk transfer from
//! this process to a child process (the receiver), reporting goodput, the
//! receiver's ACK counts and its CPU time.
//!
//! ```text
//! cargo run --release --example net_loopback -- [STRATEGY] [MIB] [MSS] [nogso] [nocsum] [perseg]
//! cargo run --release --example net_loopback -- 4w 1024 1460
//! ```
//!
//! STRATEGY is a lab strategy name (`ae`, `dal2`, `4w`, ...; default
//! `dal2`) or `quinn` for the same transfer over quinn as a reference, MIB the amount to send (default 1024), MSS the segment payload
//! (default 1460; loopback takes up to about 65 000). `nogso` sends one
//! segment per system call, `nocsum` leaves the TCP checksum to UDP's, `perseg` lets connections
//! answer every arriving segment (`EndpointConfig::transmit_per_segment`).

use ackwise::connection::Config;
use ackwise::lab::strategy::Strategy;
use ackwise::net::{Endpoint, EndpointConfig};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Cleared by the `nocsum` flag.
static CHECKSUMS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

fn config(strategy: &str, mss: u16) -> Config {
    let strategy: Strategy = strategy.parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut base = Config {
        mss,
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(200),
        rto_variance_floor: Duration::from_millis(200),
        nagle: false,
        ..Config::default()
    };
    base.idle_timeout = Some(Duration::from_secs(10));
    // UDP's own checksum already covers the segment.
    base.checksums = CHECKSUMS.load(std::sync::atomic::Ordering::Relaxed);
    strategy.apply(&base, Duration::from_millis(40), Duration::from_millis(100))
}

/// User plus system CPU seconds of this process, from /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are
    // the 14th and 15th fields overall.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

async fn serve(strategy: &str, mss: u16, gso: bool, per_segment: bool) {
    let endpoint = Endpoint::with_config(
        "127.0.0.1:0".parse().unwrap(),
        EndpointConfig {
            server: Some(config(strategy, mss)),
            gso,
            transmit_per_segment: per_segment,
            ..EndpointConfig::default()
        },
    )
    .expect("bind");
    println!("PORT {}", endpoint.local_addr().port());
    let (mut stream, _) = endpoint.accept().await.expect("accept");
    let cpu0 = cpu_seconds();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match stream.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) => {
                eprintln!("receiver: {e}");
                std::process::exit(1);
            }
        }
    }
    let cpu = cpu_seconds() - cpu0;
    let s = stream.stats();
    let e = endpoint.stats();
    println!(
        "DONE {total} {cpu:.3} {} {} {} {} {}",
        s.acks_sent,
        s.pure_acks_sent,
        e.datagrams_received,
        e.segments_received,
        e.malformed_dropped
    );
    // Let the FIN's ACK go out before the endpoint goes away.
    endpoint.close(Duration::from_millis(500)).await;
}

/// The quinn reference: one unidirectional stream, self-signed
/// certificate; the receiver side.
async fn quinn_serve() {
    use quinn::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));
    let config = quinn::ServerConfig::with_single_cert(vec![cert.cert.der().clone()], key).unwrap();
    let endpoint = quinn::Endpoint::server(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    // The client trusts this certificate; hand it over with the port.
    let der: String = cert.cert.der().iter().map(|b| format!("{b:02x}")).collect();
    println!("PORT {} {der}", endpoint.local_addr().unwrap().port());
    let conn = endpoint.accept().await.unwrap().await.unwrap();
    let mut recv = conn.accept_uni().await.unwrap();
    let cpu0 = cpu_seconds();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    while let Some(n) = recv.read(&mut buf).await.unwrap() {
        total += n as u64;
    }
    let cpu = cpu_seconds() - cpu0;
    let s = conn.stats();
    println!(
        "DONE {total} {cpu:.3} {} {} {} {} 0",
        s.frame_tx.acks, s.udp_tx.datagrams, s.udp_rx.datagrams, s.udp_rx.datagrams
    );
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
}

async fn quinn_send(port: u16, der_hex: &str, mib: u64) {
    use quinn::rustls::pki_types::CertificateDer;
    let der: Vec<u8> = (0..der_hex.len() / 2)
        .map(|i| u8::from_str_radix(&der_hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut roots = quinn::rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(der)).unwrap();
    let client_config =
        quinn::ClientConfig::with_root_certificates(std::sync::Arc::new(roots)).unwrap();
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    endpoint.set_default_client_config(client_config);
    let conn = endpoint
        .connect(format!("127.0.0.1:{port}").parse().unwrap(), "localhost")
        .unwrap()
        .await
        .unwrap();
    let mut send = conn.open_uni().await.unwrap();
    let chunk = vec![0x5au8; 1 << 20];
    let start = Instant::now();
    for _ in 0..mib {
        send.write_all(&chunk).await.unwrap();
    }
    send.finish().unwrap();
    let _ = conn.closed().await;
    let elapsed = start.elapsed();
    let gbit = (mib << 20) as f64 * 8.0 / elapsed.as_secs_f64() / 1e9;
    print!(
        "quinn: {mib} MiB in {:.3} s = {gbit:.2} Gbit/s; ",
        elapsed.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let strategy = args.get(1).map_or("dal2", String::as_str).to_string();
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let mss: u16 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1460);
    let flags = args.get(4..).unwrap_or_default();
    let gso = !flags.iter().any(|f| f == "nogso");
    let checksums = !flags.iter().any(|f| f == "nocsum");
    let per_segment = flags.iter().any(|f| f == "perseg");
    CHECKSUMS.store(checksums, std::sync::atomic::Ordering::Relaxed);
    if strategy == "quinn" && std::env::var_os("NET_LOOPBACK_SERVE").is_some() {
        quinn_serve().await;
        return;
    }
    if std::env::var_os("NET_LOOPBACK_SERVE").is_some() {
        serve(&strategy, mss, gso, per_segment).await;
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(&args[1..])
        .env("NET_LOOPBACK_SERVE", "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn receiver");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port_line = lines.next().unwrap().unwrap();
    let mut words = port_line.split_whitespace().skip(1);
    let port: u16 = words.next().unwrap().parse().unwrap();
    if strategy == "quinn" {
        quinn_send(port, words.next().unwrap(), mib).await;
        let done = lines.next().unwrap().unwrap();
        let f: Vec<&str> = done.split_whitespace().collect();
        let _ = child.wait();
        let rx_cpu: f64 = f[2].parse().unwrap();
        let gib = (mib << 20) as f64 / (1u64 << 30) as f64;
        println!(
            "receiver: ACK frames sent={} ({:.1} per MiB), datagrams sent={}, cpu={rx_cpu:.2} s ({:.2} s/GiB)",
            f[3],
            f[3].parse::<f64>().unwrap() / mib as f64,
            f[4],
            rx_cpu / gib
        );
        return;
    }

    let endpoint = Endpoint::with_config(
        "127.0.0.1:0".parse().unwrap(),
        EndpointConfig {
            gso,
            transmit_per_segment: per_segment,
            ..EndpointConfig::default()
        },
    )
    .unwrap();
    let mut stream = endpoint
        .connect(
            format!("127.0.0.1:{port}").parse().unwrap(),
            config(&strategy, mss),
        )
        .await
        .expect("connect");
    let chunk = vec![0x5au8; 1 << 20];
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    for _ in 0..mib {
        stream.write_all(&chunk).await.expect("write");
    }
    stream.shutdown().await.expect("shutdown");
    let elapsed = start.elapsed();
    let sender_cpu = cpu_seconds() - cpu0;
    let done = lines.next().unwrap().unwrap();
    let f: Vec<&str> = done.split_whitespace().collect();
    let _ = child.wait();
    let bytes = mib << 20;
    let s = stream.stats();
    let gbit = bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e9;
    let rx_cpu: f64 = f[2].parse().unwrap();
    let gib = bytes as f64 / (1u64 << 30) as f64;
    println!(
        "{strategy} mss={mss} gso={gso} checksums={checksums} per_segment={per_segment}: {mib} MiB in {:.3} s = {gbit:.2} Gbit/s; \
         receiver: acks_sent={} pure_acks={} ({:.1} per MiB), cpu={rx_cpu:.2} s ({:.2} s/GiB), \
         datagrams={} segments={} malformed={}; sender: cpu={sender_cpu:.2} s, \
         data_segments={} retransmissions={} timeouts={} cwnd={} srtt={:?}",
        elapsed.as_secs_f64(),
        f[3],
        f[4],
        f[4].parse::<f64>().unwrap() / mib as f64,
        rx_cpu / gib,
        f[5],
        f[6],
        f[7],
        s.data_segments_sent,
        s.retransmissions,
        s.timeouts,
        s.cwnd,
        s.srtt,
    );
}
