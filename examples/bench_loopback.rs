//! Loopback benchmark: one bulk transfer per transport, receiver in a
//! child process so its CPU time can be measured alone.
//!
//! ```text
//! cargo run --release --example bench_loopback -- [--bytes 1GiB | --quick]
//!     [--only tcp,quinn,relay] [--relay-bytes 4MB]
//! ```
//!
//! For each transport the example re-executes itself as the receiver
//! (`--role receiver`), which binds 127.0.0.1, reads the whole transfer,
//! checks every byte against the pattern the sender writes, then reports
//! the bytes it received, the packets it sent (ACKs, for a
//! bulk receiver) and its own user+system CPU time from `/proc/self/stat`.
//! The parent is the sender; goodput is the payload over the time from
//! connecting to the receiver's report. Kernel TCP's receiver packets come
//! from the kernel (`segs_out` of the receiving socket, through
//! [`ackwise::net::kernel_tcp`]), quinn's from the
//! connection's statistics (`udp_tx.datagrams`; `frame_tx.acks` ACK
//! frames), ackwise's from `Stream::stats()`.
//!
//! `relay` runs each transfer through an in-process [`ackwise::relay`] at
//! 10 Mbit/s forward, 64 kbit/s reverse, 50 ms each way (100 ms RTT),
//! 50-packet DropTail buffers, where the reverse link's capacity for ACKs
//! limits throughput; it reports completion times.

use ackwise::connection::Config;
use ackwise::lab::strategy::Strategy;
use ackwise::net::{Endpoint, EndpointConfig};
use ackwise::relay::{LinkConfig, Relay, RelayConfig, RelayStats};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// Sender and receiver buffer size.
const CHUNK: usize = 1 << 20;

/// Segment payload of ackwise on loopback (a 1500-byte datagram with
/// headers), the size quinn's datagrams are near.
const LOOPBACK_MSS: u16 = 1460;
/// Segment payload through the relay: 1400 + up to 60 bytes of TCP header
/// + 28 of UDP/IP stay within a 1500-byte MTU.
const RELAY_MSS: u16 = 1400;

/// A transport under test.
#[derive(Debug, Clone, PartialEq)]
enum Proto {
    /// Kernel TCP through tokio's `TcpStream`.
    Tcp,
    /// quinn 0.11, one unidirectional stream.
    Quinn,
    /// ackwise's endpoint with a lab strategy (`ae`, `dal2`, `4w`, ...).
    Ackwise(Strategy),
    /// quinn 0.11 with a `quic*` strategy's ACK-frequency policy and
    /// controller on the sender, as `ackwise send --transport quic` runs.
    #[cfg(feature = "quic")]
    Quic(Strategy),
}

impl Proto {
    fn name(&self) -> String {
        match self {
            Proto::Tcp => "tcp".into(),
            Proto::Quinn => "quinn".into(),
            Proto::Ackwise(s) => s.name(),
            #[cfg(feature = "quic")]
            Proto::Quic(s) => s.name(),
        }
    }

    fn label(&self) -> String {
        match self {
            Proto::Ackwise(s) => format!("ackwise {s}"),
            #[cfg(feature = "quic")]
            Proto::Quic(s) => format!("quinn {s}"),
            other => format!("{} (reference)", other.name()),
        }
    }

    fn parse(s: &str) -> Result<Proto, String> {
        match s {
            "tcp" => Ok(Proto::Tcp),
            "quinn" => Ok(Proto::Quinn),
            #[cfg(feature = "quic")]
            other if other.parse::<Strategy>().is_ok_and(|s| s.base.is_quic()) => other
                .parse::<Strategy>()
                .map(Proto::Quic)
                .map_err(|e| e.to_string()),
            other => other.parse::<Strategy>().map(Proto::Ackwise).map_err(|e| {
                format!("`{other}` is neither tcp, quinn nor an ackwise strategy: {e}")
            }),
        }
    }

    /// How the sender reaches the receiver: UDP transports can go through
    /// the relay, TCP cannot.
    fn over_udp(&self) -> bool {
        !matches!(self, Proto::Tcp)
    }
}

/// What the receiver reports.
#[derive(Debug, Default, Clone)]
struct Report {
    bytes: u64,
    /// Packets the receiver sent (ACKs, handshake, close).
    packets_sent: Option<u64>,
    /// ACK frames (quinn) or pure ACKs (ackwise), where known.
    acks: Option<u64>,
    cpu: Duration,
}

impl Report {
    fn line(&self) -> String {
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        format!(
            "DONE bytes={} packets={} acks={} cpu_ns={}",
            self.bytes,
            opt(self.packets_sent),
            opt(self.acks),
            self.cpu.as_nanos()
        )
    }

    fn parse(line: &str) -> Result<Report, String> {
        let mut r = Report::default();
        for field in line.trim().strip_prefix("DONE ").unwrap_or("").split(' ') {
            let (k, v) = field.split_once('=').ok_or("bad report")?;
            let num = || v.parse::<u64>().ok();
            match k {
                "bytes" => r.bytes = num().ok_or("bad bytes")?,
                "packets" => r.packets_sent = num(),
                "acks" => r.acks = num(),
                "cpu_ns" => r.cpu = Duration::from_nanos(num().ok_or("bad cpu")?),
                _ => {}
            }
        }
        Ok(r)
    }
}

/// Parses `1GiB`, `64MiB`, `4MB`, `1500`.
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..end]
        .parse()
        .map_err(|_| format!("`{s}` is not a size"))?;
    let scale = match s[end..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => MIB,
        "g" | "gb" => 1_000_000_000,
        "gib" => GIB,
        other => return Err(format!("unknown size unit `{other}`")),
    };
    n.checked_mul(scale)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{s}` must be positive and fit in 64 bits"))
}

/// This process's user+system CPU time, from `/proc/self/stat`.
fn own_cpu_time(ticks_per_second: u64) -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall, 12th and 13th after the name.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    let ticks = f.iter().sum::<u64>();
    Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / ticks_per_second.max(1))
}

/// Clock ticks per second for `/proc` times (`getconf CLK_TCK`, else 100).
fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

// ---------------------------------------------------------------- receiver

fn receiver_main(args: &[String]) -> Result<(), String> {
    let mut proto = None;
    let mut bytes = None;
    let mut ticks = 100;
    let mut mss = LOOPBACK_MSS;
    let mut threads = 1usize;
    let mut per_segment = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--proto" => proto = Some(Proto::parse(&val()?)?),
            "--bytes" => bytes = Some(parse_size(&val()?)?),
            "--ticks" => ticks = val()?.parse().map_err(|_| "bad --ticks")?,
            "--threads" => threads = val()?.parse().map_err(|_| "bad --threads")?,
            "--mss" => mss = val()?.parse().map_err(|_| "bad --mss")?,
            "--per-segment" => per_segment = true,
            "--role" => {
                val()?;
            }
            other => return Err(format!("receiver: unexpected `{other}`")),
        }
    }
    let proto = proto.ok_or("receiver needs --proto")?;
    let bytes = bytes.ok_or("receiver needs --bytes")?;
    let rt = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    }
    .enable_all()
    .build()
    .map_err(|e| e.to_string())?;
    rt.block_on(async {
        match proto {
            Proto::Tcp => tcp_receive(bytes, ticks).await,
            Proto::Quinn => quinn_receive(bytes, ticks).await,
            // ACK frequency is the sender's request; the receiver is quinn's.
            #[cfg(feature = "quic")]
            Proto::Quic(_) => quinn_receive(bytes, ticks).await,
            Proto::Ackwise(s) => {
                ackwise_receive(ackwise_config(s, mss), per_segment, bytes, ticks).await
            }
        }
    })
}

/// Both ends' configuration for `strategy` (the lab's mapping, with
/// buffers and timers for a real path).
fn ackwise_config(strategy: Strategy, mss: u16) -> Config {
    let base = Config {
        mss,
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        min_rto: Duration::from_millis(200),
        initial_rto: Duration::from_millis(200),
        rto_variance_floor: Duration::from_millis(200),
        nagle: false,
        idle_timeout: Some(Duration::from_secs(30)),
        ..Config::default()
    };
    strategy.apply(&base, Duration::from_millis(40), Duration::from_millis(100))
}

/// Reads `reader` to its end, checking every byte against the sender's
/// pattern and the total against `expected`; returns the bytes read.
async fn read_all_checked<R: AsyncReadExt + Unpin>(
    reader: &mut R,
    expected: u64,
    label: &str,
) -> Result<u64, String> {
    let mut buf = vec![0u8; CHUNK];
    let mut got = 0u64;
    let mut verifier = Verifier::new();
    loop {
        let n = reader.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        verifier.check(&buf[..n])?;
        got += n as u64;
    }
    if got != expected {
        return Err(format!("{label}: received {got} of {expected} bytes"));
    }
    Ok(got)
}

async fn ackwise_receive(
    config: Config,
    per_segment: bool,
    expected: u64,
    ticks: u64,
) -> Result<(), String> {
    // Per segment, the receiver's ACK policy sees every segment as it
    // would on a wire; otherwise it answers once per receive batch (GRO),
    // as kernel TCP does.
    let endpoint = Endpoint::with_config(
        "127.0.0.1:0".parse().unwrap(),
        EndpointConfig {
            server: Some(config),
            transmit_per_segment: per_segment,
            ..EndpointConfig::default()
        },
    )
    .map_err(|e| e.to_string())?;
    announce(endpoint.local_addr(), "-");
    let (mut stream, _) = endpoint.accept().await.ok_or("ackwise: endpoint closed")?;
    let got = read_all_checked(&mut stream, expected, "ackwise").await?;
    let report = Report {
        bytes: got,
        packets_sent: Some(endpoint.stats().segments_sent),
        acks: Some(stream.stats().pure_acks_sent),
        cpu: Duration::ZERO,
    };
    report_done(report, ticks)?;
    let _ = stream.shutdown().await;
    endpoint.close(Duration::from_millis(500)).await;
    Ok(())
}

/// Sends the report to the parent, with the CPU time used so far (the
/// transfer's, before any closing handshake).
fn report_done(mut report: Report, ticks: u64) -> Result<(), String> {
    report.cpu = own_cpu_time(ticks);
    println!("{}", report.line());
    std::io::stdout().flush().map_err(|e| e.to_string())
}

fn announce(addr: SocketAddr, extra: &str) {
    println!("READY {addr} {extra}");
    let _ = std::io::stdout().flush();
}

async fn tcp_receive(expected: u64, ticks: u64) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    announce(addr, "-");
    let (mut stream, peer) = listener.accept().await.map_err(|e| e.to_string())?;
    let got = read_all_checked(&mut stream, expected, "tcp").await?;
    let local = stream.local_addr().map_err(|e| e.to_string())?;
    let packets_sent = ackwise::net::kernel_tcp::counters(local, peer).map(|c| c.segs_out);
    let report = Report {
        bytes: got,
        packets_sent,
        acks: None,
        cpu: Duration::ZERO,
    };
    report_done(report, ticks)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2).unwrap_or("x"), 16))
        .collect::<Result<_, _>>()
        .map_err(|_| "bad certificate hex".to_string())
}

async fn quinn_receive(expected: u64, ticks: u64) -> Result<(), String> {
    use quinn::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
        .map_err(|e| e.to_string())?;
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let server_config = quinn::ServerConfig::with_single_cert(vec![cert.clone()], key)
        .map_err(|e| e.to_string())?;
    let endpoint = quinn::Endpoint::server(server_config, "127.0.0.1:0".parse().unwrap())
        .map_err(|e| e.to_string())?;
    let addr = endpoint.local_addr().map_err(|e| e.to_string())?;
    announce(addr, &hex(&cert));
    let conn = endpoint
        .accept()
        .await
        .ok_or("quinn: endpoint closed")?
        .await
        .map_err(|e| e.to_string())?;
    let mut recv = conn.accept_uni().await.map_err(|e| e.to_string())?;
    let mut got = 0u64;
    let mut verifier = Verifier::new();
    while let Some(chunk) = recv
        .read_chunk(usize::MAX, true)
        .await
        .map_err(|e| e.to_string())?
    {
        verifier.check(&chunk.bytes)?;
        got += chunk.bytes.len() as u64;
    }
    if got != expected {
        return Err(format!("quinn: received {got} of {expected} bytes"));
    }
    let stats = conn.stats();
    let report = Report {
        bytes: got,
        packets_sent: Some(stats.udp_tx.datagrams),
        acks: Some(stats.frame_tx.acks),
        cpu: Duration::ZERO,
    };
    report_done(report, ticks)?;
    // The sender closes once it has read the report.
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.closed()).await;
    endpoint.close(0u32.into(), b"");
    Ok(())
}

// ------------------------------------------------------------------ sender

/// A receiver child and its announcements.
struct ReceiverProcess {
    child: Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
}

impl ReceiverProcess {
    fn spawn(proto: &Proto, bytes: u64, ticks: u64, mss: u16) -> Result<ReceiverProcess, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .args(["--role", "receiver", "--proto", &proto.name()])
            .args(["--bytes", &bytes.to_string(), "--ticks", &ticks.to_string()])
            .args(["--mss", &mss.to_string()])
            .args([
                "--threads",
                &RECEIVER_THREADS.get().copied().unwrap_or(1).to_string(),
            ])
            .args(PER_SEGMENT.get().filter(|&&on| on).map(|_| "--per-segment"))
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the receiver: {e}"))?;
        let stdout = child.stdout.take().ok_or("no receiver stdout")?;
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(ReceiverProcess { child, lines })
    }

    async fn next_line(&mut self, prefix: &str, timeout: Duration) -> Result<String, String> {
        loop {
            match tokio::time::timeout(timeout, self.lines.recv()).await {
                Err(_) => return Err(format!("no `{prefix}` from the receiver in {timeout:?}")),
                Ok(None) => return Err(format!("the receiver exited before `{prefix}`")),
                Ok(Some(l)) if l.starts_with(prefix) => return Ok(l),
                Ok(Some(_)) => {}
            }
        }
    }
}

impl Drop for ReceiverProcess {
    fn drop(&mut self) {
        // Reaped normally after the report; killed if the run failed.
        if matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(200));
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

/// One measured transfer.
#[derive(Debug, Clone)]
struct Outcome {
    name: String,
    elapsed: Duration,
    report: Report,
    relay: Option<RelayStats>,
    sender: SenderLosses,
}

/// The sender's view of losses: retransmitted segments (quinn: packets
/// declared lost) and retransmission timeouts, where the transport tells.
#[derive(Debug, Clone, Copy, Default)]
struct SenderLosses {
    retransmissions: Option<u64>,
    timeouts: Option<u64>,
}

impl Outcome {
    fn goodput_bps(&self) -> f64 {
        self.report.bytes as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

async fn tcp_send(to: SocketAddr, bytes: u64) -> Result<(), String> {
    let mut s = tokio::net::TcpStream::connect(to)
        .await
        .map_err(|e| format!("tcp connect: {e}"))?;
    write_pattern(&mut s, bytes).await?;
    s.shutdown().await.map_err(|e| e.to_string())
}

/// Writes `bytes` of the pattern to `w`.
async fn write_pattern<W: AsyncWriteExt + Unpin>(w: &mut W, bytes: u64) -> Result<(), String> {
    let buf = pattern();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        w.write_all(&buf[..n]).await.map_err(|e| e.to_string())?;
        left -= n as u64;
    }
    Ok(())
}

/// What the sender writes, over and over: a `CHUNK`-long pattern that the
/// receiver checks byte for byte.
fn pattern() -> Vec<u8> {
    (0..CHUNK).map(|i| (i % 251) as u8).collect()
}

/// Checks received bytes against the sender's repeating pattern.
struct Verifier {
    pattern: Vec<u8>,
    offset: u64,
}

impl Verifier {
    fn new() -> Verifier {
        Verifier {
            pattern: pattern(),
            offset: 0,
        }
    }

    /// Checks the next `data`; the error names the first wrong offset.
    fn check(&mut self, mut data: &[u8]) -> Result<(), String> {
        while !data.is_empty() {
            let at = (self.offset % CHUNK as u64) as usize;
            let n = data.len().min(CHUNK - at);
            if data[..n] != self.pattern[at..at + n] {
                let i = (0..n)
                    .find(|&i| data[i] != self.pattern[at + i])
                    .unwrap_or(0);
                return Err(format!("corrupt byte at offset {}", self.offset + i as u64));
            }
            self.offset += n as u64;
            data = &data[n..];
        }
        Ok(())
    }
}

/// Sends `bytes` on a new ackwise connection and shuts it down; the
/// endpoint stays open until the receiver has reported.
async fn ackwise_send(
    to: SocketAddr,
    config: Config,
    bytes: u64,
) -> Result<(Endpoint, ackwise::net::Stream), String> {
    let endpoint = Endpoint::bind("127.0.0.1:0".parse().unwrap()).map_err(|e| e.to_string())?;
    let mut s = endpoint
        .connect(to, config)
        .await
        .map_err(|e| format!("ackwise connect: {e}"))?;
    write_pattern(&mut s, bytes).await?;
    s.shutdown().await.map_err(|e| e.to_string())?;
    Ok((endpoint, s))
}

/// A connected quinn sender; kept open until the receiver has reported.
struct QuinnSender {
    endpoint: quinn::Endpoint,
    conn: quinn::Connection,
}

async fn quinn_send(
    to: SocketAddr,
    cert_hex: &str,
    bytes: u64,
    transport: Option<quinn::TransportConfig>,
) -> Result<QuinnSender, String> {
    let mut roots = quinn::rustls::RootCertStore::empty();
    roots
        .add(quinn::rustls::pki_types::CertificateDer::from(unhex(
            cert_hex,
        )?))
        .map_err(|e| e.to_string())?;
    let mut client_config =
        quinn::ClientConfig::with_root_certificates(Arc::new(roots)).map_err(|e| e.to_string())?;
    if let Some(t) = transport {
        client_config.transport_config(Arc::new(t));
    }
    let mut endpoint =
        quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).map_err(|e| e.to_string())?;
    endpoint.set_default_client_config(client_config);
    let conn = endpoint
        .connect(to, "localhost")
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| format!("quinn connect: {e}"))?;
    let mut send = conn.open_uni().await.map_err(|e| e.to_string())?;
    write_pattern(&mut send, bytes).await?;
    send.finish().map_err(|e| e.to_string())?;
    Ok(QuinnSender { endpoint, conn })
}

/// The asymmetric path of the issue: 10 Mbit/s forward, 64 kbit/s
/// reverse, 50 ms each way, 50-packet DropTail queues.
fn asymmetric_relay(to: SocketAddr) -> RelayConfig {
    RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to,
        forward: LinkConfig::new(10_000_000, Duration::from_millis(50), 50),
        reverse: LinkConfig::new(64_000, Duration::from_millis(50), 50),
        seed: 1,
        ack_management: Default::default(),
    }
}

/// What the sender keeps open until the receiver has reported.
enum Keep {
    Nothing,
    Quinn(QuinnSender),
    Ackwise((Endpoint, ackwise::net::Stream)),
}

async fn run_one(
    proto: &Proto,
    bytes: u64,
    through_relay: bool,
    ticks: u64,
    timeout: Duration,
) -> Result<Outcome, String> {
    let mss = if through_relay {
        RELAY_MSS
    } else {
        LOOPBACK_MSS
    };
    let mut rx = ReceiverProcess::spawn(proto, bytes, ticks, mss)?;
    let ready = rx.next_line("READY", Duration::from_secs(20)).await?;
    let mut parts = ready.split_whitespace().skip(1);
    let addr: SocketAddr = parts
        .next()
        .and_then(|a| a.parse().ok())
        .ok_or("bad READY line")?;
    let extra = parts.next().unwrap_or("-").to_string();
    let relay = if through_relay {
        Some(
            Relay::bind(asymmetric_relay(addr))
                .await
                .map_err(|e| e.to_string())?
                .spawn(),
        )
    } else {
        None
    };
    let to = relay.as_ref().map_or(addr, |r| r.local_addr());
    let started = Instant::now();
    let transfer = async {
        // The sender's handle stays alive until the report is in.
        let keep = match proto {
            Proto::Tcp => {
                tcp_send(to, bytes).await?;
                Keep::Nothing
            }
            Proto::Quinn => Keep::Quinn(quinn_send(to, &extra, bytes, None).await?),
            #[cfg(feature = "quic")]
            Proto::Quic(s) => {
                let mut t = s
                    .quic_flow_config()
                    .ok_or("not a QUIC strategy")?
                    .sender_transport();
                // A real path: MTU discovery and GSO on again, as on sockets.
                ackwise::quic::QuicFlowConfig::on_sockets(&mut t);
                Keep::Quinn(quinn_send(to, &extra, bytes, Some(t)).await?)
            }
            Proto::Ackwise(s) => {
                Keep::Ackwise(ackwise_send(to, ackwise_config(*s, mss), bytes).await?)
            }
        };
        let done = rx.next_line("DONE", timeout).await?;
        Ok::<_, String>((done, keep))
    };
    let (done, keep) = tokio::time::timeout(timeout, transfer)
        .await
        .map_err(|_| format!("timed out after {timeout:?}"))??;
    let elapsed = started.elapsed();
    let sender = match keep {
        Keep::Nothing => SenderLosses::default(),
        Keep::Quinn(q) => {
            let st = q.conn.stats();
            q.conn.close(0u32.into(), b"done");
            q.endpoint.wait_idle().await;
            SenderLosses {
                retransmissions: Some(st.path.lost_packets),
                timeouts: None,
            }
        }
        Keep::Ackwise((e, stream)) => {
            let st = stream.stats();
            drop(stream);
            e.close(Duration::from_millis(500)).await;
            SenderLosses {
                retransmissions: Some(st.retransmissions),
                timeouts: Some(st.timeouts),
            }
        }
    };
    let report = Report::parse(&done)?;
    let relay = match relay {
        Some(r) => Some(r.shutdown().await),
        None => None,
    };
    Ok(Outcome {
        name: proto.label(),
        elapsed,
        report,
        relay,
        sender,
    })
}

fn loopback_table(rows: &[Result<Outcome, (String, String)>]) -> String {
    let mut t = String::from(
        "| transport | bytes | time (s) | goodput (Gbit/s) | receiver packets | ACK packets per MiB | receiver CPU (s/GiB) |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        match row {
            Ok(o) => {
                let mib = o.report.bytes as f64 / MIB as f64;
                let per_mib = o
                    .report
                    .packets_sent
                    .map_or("n/a".into(), |p| format!("{:.1}", p as f64 / mib));
                let cpu_per_gib = o.report.cpu.as_secs_f64() * GIB as f64 / o.report.bytes as f64;
                t += &format!(
                    "| {} | {} | {:.2} | {:.2} | {} | {} | {:.2} |\n",
                    o.name,
                    o.report.bytes,
                    o.elapsed.as_secs_f64(),
                    o.goodput_bps() / 1e9,
                    o.report
                        .packets_sent
                        .map_or("n/a".into(), |p| p.to_string()),
                    per_mib,
                    cpu_per_gib
                );
            }
            Err((name, e)) => t += &format!("| {name} | failed: {e} | | | | | |\n"),
        }
    }
    t
}

fn relay_table(rows: &[Result<Outcome, (String, String)>]) -> String {
    let mut t = String::from(
        "| transport | bytes | completion (s) | goodput (Mbit/s) | receiver packets | reverse queue drops | forward queue drops | sender retransmissions | sender timeouts |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        match row {
            Ok(o) => {
                let r = o.relay.unwrap_or_default();
                let opt = |v: Option<u64>| v.map_or("n/a".to_string(), |v| v.to_string());
                t += &format!(
                    "| {} | {} | {:.2} | {:.2} | {} | {} | {} | {} | {} |\n",
                    o.name,
                    o.report.bytes,
                    o.elapsed.as_secs_f64(),
                    o.goodput_bps() / 1e6,
                    opt(o.report.packets_sent),
                    r.reverse.queue_drops,
                    r.forward.queue_drops,
                    opt(o.sender.retransmissions),
                    opt(o.sender.timeouts)
                );
            }
            Err((name, e)) => t += &format!("| {name} | failed: {e} | | | | | | | |\n"),
        }
    }
    t
}

/// Median, fastest and slowest completion per transport, and the median
/// relative to ackwise's delayed ACK (`dal2`) when it ran.
fn completion_summary(completions: &mut [(String, Vec<Duration>)]) -> String {
    let median = |v: &[Duration]| v[v.len() / 2];
    for (_, v) in completions.iter_mut() {
        v.sort();
    }
    let delayed = completions
        .iter()
        .find(|(n, _)| n == "ackwise dal2")
        .map(|(_, v)| median(v));
    let mut t = String::from(
        "| transport | runs | median completion (s) | fastest (s) | slowest (s) | median vs ackwise dal2 |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for (name, v) in completions.iter() {
        let m = median(v);
        let rel = delayed.map_or("n/a".to_string(), |d| {
            format!("{:+.0}%", (m.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0)
        });
        t += &format!(
            "| {name} | {} | {:.2} | {:.2} | {:.2} | {rel} |\n",
            v.len(),
            m.as_secs_f64(),
            v[0].as_secs_f64(),
            v[v.len() - 1].as_secs_f64()
        );
    }
    t
}

/// Worker threads of the receiver's runtime (1: a current-thread runtime).
static RECEIVER_THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
/// `--per-segment`: ackwise receivers answer segment by segment.
static PER_SEGMENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

struct Plan {
    bytes: u64,
    relay_bytes: u64,
    relay_runs: usize,
    loopback: Vec<Proto>,
    relay: Vec<Proto>,
}

const USAGE: &str = "usage: bench_loopback [--bytes SIZE | --quick] [--only LIST] [--relay LIST] [--relay-bytes SIZE] [--relay-runs N]
  --bytes SIZE        per loopback transfer (default 1GiB; --quick: 64MiB)
  --only LIST         loopback transports (default tcp,quinn,ae,dal2,4w,smart-minrtt; `none` skips)
  --relay LIST        transports through the asymmetric relay (default quinn,dal2,4w,smart-minrtt,4w+pacing,smart-minrtt+pacing; `none` skips)
  --relay-bytes SIZE  per relay transfer (default 4MB)
  --relay-runs N      runs of each relay transfer (default 3; the summary gives the median)
  --receiver-threads N  tokio worker threads in the receiver (default 1: a current-thread runtime)
  --per-segment       ackwise receivers run their ACK policy per segment (EndpointConfig::transmit_per_segment)
                      instead of once per receive batch (GRO), so the policies differ as on a wire
  transports: tcp, quinn, an ackwise lab strategy name (ae, dal2, 4w, smart-minrtt, ...),
              or a quic* strategy (quinn with its ACK frequency and controller: quic-af-16+ackwise-cc, ...)";

fn parse_list(list: &str) -> Result<Vec<Proto>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "none")
        .map(Proto::parse)
        .collect()
}

fn parse_plan(args: &[String]) -> Result<Plan, String> {
    let mut bytes = GIB;
    let mut relay_bytes = 4_000_000;
    let mut relay_runs = 3;
    let mut only = "tcp,quinn,ae,dal2,4w,smart-minrtt".to_string();
    let mut relay = "quinn,dal2,4w,smart-minrtt,4w+pacing,smart-minrtt+pacing".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--bytes" => bytes = parse_size(&val()?)?,
            "--quick" => bytes = 64 * MIB,
            "--receiver-threads" => {
                let n: usize = val()?
                    .parse()
                    .map_err(|_| "--receiver-threads needs a number")?;
                let _ = RECEIVER_THREADS.set(n.max(1));
            }
            "--per-segment" => {
                let _ = PER_SEGMENT.set(true);
            }
            "--relay-bytes" => relay_bytes = parse_size(&val()?)?,
            "--relay-runs" => {
                relay_runs = val()?
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--relay-runs needs a positive number")?;
            }
            "--only" => only = val()?,
            "--relay" => relay = val()?,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unexpected `{other}`\n{USAGE}")),
        }
    }
    let plan = Plan {
        bytes,
        relay_bytes,
        relay_runs,
        loopback: parse_list(&only)?,
        relay: parse_list(&relay)?,
    };
    if let Some(p) = plan.relay.iter().find(|p| !p.over_udp()) {
        return Err(format!(
            "--relay: {} cannot go through the UDP relay",
            p.name()
        ));
    }
    Ok(plan)
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--role") {
        return match receiver_main(&args) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench_loopback receiver: {e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    // Asked-for help is not an error: stdout and status 0.
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return std::process::ExitCode::SUCCESS;
    }
    let plan = match parse_plan(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bench_loopback: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let ticks = clock_ticks();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench_loopback: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    rt.block_on(async {
        let mut rows = Vec::new();
        for proto in &plan.loopback {
            eprintln!("loopback: {} ({} bytes) ...", proto.name(), plan.bytes);
            let r = run_one(proto, plan.bytes, false, ticks, Duration::from_secs(600)).await;
            failed |= r.is_err();
            rows.push(r.map_err(|e| (proto.label(), e)));
        }
        if !rows.is_empty() {
            println!("Loopback, {} bytes per transfer:\n", plan.bytes);
            println!("{}", loopback_table(&rows));
        }
        let mut rows = Vec::new();
        let mut completions: Vec<(String, Vec<Duration>)> = Vec::new();
        for run in 1..=plan.relay_runs {
            for proto in &plan.relay {
                eprintln!(
                    "relay: {} ({} bytes, run {run}/{}) ...",
                    proto.name(),
                    plan.relay_bytes,
                    plan.relay_runs
                );
                let r = run_one(
                    proto,
                    plan.relay_bytes,
                    true,
                    ticks,
                    Duration::from_secs(600),
                )
                .await;
                failed |= r.is_err();
                let label = if plan.relay_runs > 1 {
                    format!("{} (run {run})", proto.label())
                } else {
                    proto.label()
                };
                match r {
                    Ok(mut o) => {
                        match completions.iter_mut().find(|(n, _)| *n == o.name) {
                            Some((_, v)) => v.push(o.elapsed),
                            None => completions.push((o.name.clone(), vec![o.elapsed])),
                        }
                        o.name = label;
                        rows.push(Ok(o));
                    }
                    Err(e) => rows.push(Err((label, e))),
                }
            }
        }
        if !rows.is_empty() {
            println!(
                "Through the relay (10 Mbit/s forward, 64 kbit/s reverse, 50 ms each way, \
                 50-packet DropTail), {} bytes:\n",
                plan.relay_bytes
            );
            println!("{}", relay_table(&rows));
            println!("{}", completion_summary(&mut completions));
        }
    });
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
