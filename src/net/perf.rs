//! `ackwise perf`: timed throughput runs in the manner of iperf3, with the
//! receiver's ACK count beside the goodput.
//!
//! A client opens `parallel` connections to a server ([`serve_perf`]) and
//! data flows for a fixed time, client to server or, with `reverse`,
//! server to client. Each connection starts with a hello naming the
//! direction, the duration and the client's strategy, so a server started
//! without `--strategy` acknowledges as that strategy's receiver does (as
//! `ackwise recv` follows `ackwise send`). When the client sends, the
//! server answers the end of the data with what it received and how many
//! pure ACKs it sent; when the server sends, the client counts both
//! itself. Goodput is bytes the receiver got over the time from the first
//! connection's start to the last one's end; interval reports count bytes
//! the peer has acknowledged (ackwise) or bytes handed to the carrier (TCP,
//! as iperf3 counts, and QUIC).
//!
//! Carriers: ackwise over UDP, the kernel's TCP, and (with the `quic-net`
//! feature) QUIC by quinn with a `quic*` strategy, one connection and one
//! bidirectional stream per `parallel`. A QUIC receiver's ACK count is
//! quinn's count of ACK frames sent; kernel TCP's is the segments its
//! receiving socket sent, as the kernel counts them (see
//! [`kernel_tcp`](super::kernel_tcp); Linux only). The
//! QUIC client accepts the server's self-signed certificate without a
//! pinned fingerprint: perf moves a fixed pattern.
//!
//! The wire format, all integers big-endian:
//!
//! ```text
//! hello  (client -> server): "AWPF" | version 1 | flags (bit 0: reverse)
//!                            | name length (u8) | 0 | duration ms (u32) | name
//! result (server -> client, client sending only):
//!                            bytes received (u64) | pure ACKs sent (u64)
//!                            | 1 if the ACK count is known, else 0
//! ```

use super::transfer::{strategy_config, Transport};
use super::{AckProbe, Endpoint, EndpointConfig, NetError, Stream};
use crate::connection::Stats;
use crate::lab::Strategy;
use bytes::Bytes;
use serde::Serialize;
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

const MAGIC: &[u8; 4] = b"AWPF";
const VERSION: u8 = 1;
const HELLO_LEN: usize = 12;
const RESULT_LEN: usize = 17;
/// Bytes per write: large enough that the per-call cost vanishes.
const WRITE_CHUNK: usize = 256 * 1024;
/// How long a server waits for a connection's hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long past the run's end a client waits for the rest (the data in
/// flight, the server's result).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest run accepted: a typo such as `--time 10h` should not tie up
/// both ends for good.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// Most connections of one run.
pub const MAX_PARALLEL: usize = 128;

/// What `ackwise perf client` does.
#[derive(Debug, Clone)]
pub struct PerfPlan {
    /// The server, `host:port`.
    pub to: String,
    /// The carrier (ackwise, kernel TCP or QUIC).
    pub transport: Transport,
    /// The strategy of the sending end when the client sends; named in
    /// the hello so the server's receiver follows it.
    pub strategy: Strategy,
    /// Largest segment payload offered (ackwise only).
    pub mss: u16,
    /// How long data flows.
    pub duration: Duration,
    /// Period of the interval reports.
    pub interval: Duration,
    /// Connections at once.
    pub parallel: usize,
    /// The server sends and the client receives.
    pub reverse: bool,
    /// How long to wait for each handshake.
    pub connect_timeout: Duration,
    /// Capture the client endpoint's segments (ackwise only).
    pub pcap: Option<PathBuf>,
}

/// What `ackwise perf server` does.
#[derive(Debug, Clone)]
pub struct PerfServerPlan {
    /// Address to listen on.
    pub listen: String,
    /// The carrier.
    pub transport: Transport,
    /// Pin the receiver's ACK policy to this strategy's (`None`: follow
    /// each client's hello); also the sending strategy for `reverse` runs.
    /// Over QUIC the receiver follows each client's ACK_FREQUENCY frames,
    /// and a `quic*` strategy here (else `quic`) sets how the server sends.
    pub strategy: Option<Strategy>,
    /// Largest segment payload offered (ackwise only).
    pub mss: u16,
    /// Capture the server endpoint's segments (ackwise only).
    pub pcap: Option<PathBuf>,
}

/// One interval report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IntervalReport {
    /// Start, seconds since the run began.
    pub start_s: f64,
    /// End, seconds since the run began.
    pub end_s: f64,
    /// Bytes acknowledged (or, on TCP, written) in the interval, all
    /// connections together.
    pub bytes: u64,
    /// The same as a rate.
    pub bits_per_second: f64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfReport {
    /// Carrier name.
    pub transport: String,
    /// Strategy the client named.
    pub strategy: String,
    /// Whether the server sent.
    pub reverse: bool,
    /// Connections.
    pub parallel: usize,
    /// Interval reports, in order.
    pub intervals: Vec<IntervalReport>,
    /// Bytes the receiving end got, all connections together.
    pub bytes: u64,
    /// From the first connection's start to the last one's end, seconds.
    pub elapsed_s: f64,
    /// `bytes` over `elapsed_s`, bits per second.
    pub goodput_bps: f64,
    /// Pure ACKs the receiving end sent (ackwise), its ACK frames (QUIC),
    /// or for kernel TCP every segment its socket sent (the kernel's
    /// `tcpi_segs_out`, Linux only; the SYN-ACK or FIN included).
    pub receiver_acks: Option<u64>,
    /// The same per GiB received.
    pub acks_per_gib: Option<f64>,
    /// Retransmissions and timeouts of the sending end, when it is this
    /// client (ackwise only).
    pub retransmissions: Option<u64>,
    /// See `retransmissions`.
    pub timeouts: Option<u64>,
    /// Payload bytes per full segment, as the handshake agreed after the
    /// client probed the path (ackwise only; the first connection's).
    pub segment_bytes: Option<u16>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// A setting that cannot work.
    #[error("{0}")]
    Invalid(String),
    /// No connection to the server.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The server as given.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The server cannot listen.
    #[error("cannot listen on {addr}: {reason}")]
    Listen {
        /// The address as given.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The peer broke the protocol or went away.
    #[error("{0}")]
    Protocol(String),
}

/// One connection, whatever the carrier: the byte stream, and for ackwise
/// what the connection knows of its ACKs and acknowledged bytes (for QUIC,
/// quinn's connection, which counts its ACK frames).
enum Conn {
    Ackwise(Stream, AckProbe),
    Tcp(TcpStream),
    #[cfg(feature = "quic-net")]
    Quic(super::transfer::quic::QuicStream, quinn::Connection),
}

/// Runs `plan` and returns its report; `on_interval` hears each interval
/// report as it is made (the CLI prints them).
pub async fn run_perf(
    plan: &PerfPlan,
    mut on_interval: impl FnMut(&IntervalReport),
) -> Result<PerfReport, PerfError> {
    check_plan(plan)?;
    let addr = tokio::net::lookup_host(&plan.to)
        .await
        .map_err(|e| connect_error(plan, format!("cannot resolve the address ({e})")))?
        .next()
        .ok_or_else(|| connect_error(plan, "the name has no address".into()))?;
    // The UDP carriers' own socket: any port, the server's family.
    let local: SocketAddr = if addr.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    #[cfg(feature = "quic-net")]
    let quic_client = match plan.transport {
        Transport::Quic => Some(
            super::transfer::quic::PerfQuicClient::new(local, plan.strategy)
                .map_err(|e| connect_error(plan, e))?,
        ),
        _ => None,
    };
    let endpoint = match plan.transport {
        Transport::Ackwise => {
            let config = EndpointConfig {
                connect_timeout: plan.connect_timeout,
                capture: plan.pcap.clone(),
                // Nothing is kept: what is measured is the transport.
                omit_tcp_checksums: true,
                ..EndpointConfig::default()
            };
            Some(
                Endpoint::with_config(local, config)
                    .map_err(|e| connect_error(plan, format!("cannot open a UDP socket: {e}")))?,
            )
        }
        _ => None,
    };
    let mut conns = Vec::with_capacity(plan.parallel);
    let mut segment_bytes = None;
    for _ in 0..plan.parallel {
        #[cfg(feature = "quic-net")]
        if let Some(client) = &quic_client {
            let (stream, conn) = client
                .connect(addr, plan.connect_timeout)
                .await
                .map_err(|e| connect_error(plan, e))?;
            conns.push(Conn::Quic(stream, conn));
            continue;
        }
        let conn = match &endpoint {
            Some(ep) => {
                let config = strategy_config(plan.strategy, plan.mss);
                let stream = ep.connect(addr, config).await.map_err(|e| match e {
                    NetError::TimedOut { .. } => connect_error(plan, "timed out".into()),
                    other => connect_error(plan, other.to_string()),
                })?;
                segment_bytes.get_or_insert(stream.negotiated().peer_mss);
                let probe = stream.ack_probe();
                Conn::Ackwise(stream, probe)
            }
            None => {
                let s = tokio::time::timeout(plan.connect_timeout, TcpStream::connect(addr))
                    .await
                    .map_err(|_| connect_error(plan, "timed out".into()))?
                    .map_err(|e| connect_error(plan, e.to_string()))?;
                Conn::Tcp(s)
            }
        };
        conns.push(conn);
    }
    let started = Instant::now();
    let deadline = started + plan.duration;
    let counters: Vec<Arc<AtomicU64>> = (0..plan.parallel)
        .map(|_| Arc::new(AtomicU64::new(0)))
        .collect();
    let mut tasks = JoinSet::new();
    let hello = hello(plan);
    for (conn, counter) in conns.into_iter().zip(&counters) {
        let (hello, counter, reverse) = (hello.clone(), counter.clone(), plan.reverse);
        tasks.spawn(async move { client_conn(conn, hello, reverse, deadline, counter).await });
    }
    let mut intervals = Vec::new();
    let mut last = (0.0, 0u64);
    let mut ticks = tokio::time::interval_at((started + plan.interval).into(), plan.interval);
    let mut outcomes = Vec::new();
    while outcomes.len() < plan.parallel {
        tokio::select! {
            _ = ticks.tick(), if Instant::now() < deadline + plan.interval / 2 => {
                let now_s = started.elapsed().as_secs_f64().min(plan.duration.as_secs_f64());
                let total: u64 = counters.iter().map(|c| c.load(Relaxed)).sum();
                let report = interval(last, (now_s, total));
                if report.end_s > report.start_s {
                    on_interval(&report);
                    intervals.push(report);
                }
                last = (now_s, total);
            }
            Some(done) = tasks.join_next() => {
                outcomes.push(done.map_err(|e| PerfError::Protocol(format!("a connection task failed: {e}")))??);
            }
        }
    }
    // The run's tail since the last tick. The connections stop at the
    // deadline, which may come before the tick due there (always so when
    // the run is one interval long), so the tail is reported here; a
    // sliver under a tenth of an interval after earlier reports is left
    // out, as iperf3 leaves it, since its rate says little.
    let end_s = started
        .elapsed()
        .as_secs_f64()
        .min(plan.duration.as_secs_f64());
    let tail = interval(
        last,
        (end_s, counters.iter().map(|c| c.load(Relaxed)).sum()),
    );
    let span_s = tail.end_s - tail.start_s;
    if span_s > 0.0 && (intervals.is_empty() || span_s >= plan.interval.as_secs_f64() / 10.0) {
        on_interval(&tail);
        intervals.push(tail);
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    if let Some(ep) = endpoint {
        ep.close(Duration::from_secs(1)).await;
    }
    #[cfg(feature = "quic-net")]
    if let Some(client) = quic_client {
        client.close().await;
    }
    let bytes: u64 = outcomes.iter().map(|o| o.received).sum();
    let receiver_acks = outcomes
        .iter()
        .map(|o| o.receiver_acks)
        .sum::<Option<u64>>();
    // The sender's counters, when the sender is this client.
    let sender: Option<(u64, u64)> = if plan.reverse {
        None
    } else {
        outcomes.iter().try_fold((0u64, 0u64), |(r, t), o| {
            o.local
                .as_ref()
                .map(|s| (r + s.retransmissions, t + s.timeouts))
        })
    };
    Ok(PerfReport {
        transport: plan.transport.to_string(),
        strategy: plan.strategy.name(),
        reverse: plan.reverse,
        parallel: plan.parallel,
        intervals,
        bytes,
        elapsed_s,
        goodput_bps: bytes as f64 * 8.0 / elapsed_s.max(1e-9),
        receiver_acks,
        acks_per_gib: receiver_acks
            .filter(|_| bytes > 0)
            .map(|a| a as f64 / (bytes as f64 / (1u64 << 30) as f64)),
        retransmissions: sender.map(|s| s.0),
        timeouts: sender.map(|s| s.1),
        segment_bytes,
    })
}

fn check_plan(plan: &PerfPlan) -> Result<(), PerfError> {
    let bad = |s: String| Err(PerfError::Invalid(s));
    if plan.duration.is_zero() || plan.duration > MAX_DURATION {
        return bad(format!(
            "--time: between 1 ms and {} h",
            MAX_DURATION.as_secs() / 3600
        ));
    }
    if plan.interval.is_zero() {
        return bad("--interval: must be positive".into());
    }
    if plan.parallel == 0 || plan.parallel > MAX_PARALLEL {
        return bad(format!("--parallel: 1 to {MAX_PARALLEL}"));
    }
    if plan.transport != Transport::Ackwise && plan.pcap.is_some() {
        return bad(
            "--pcap: records ackwise's own segments; capture TCP or QUIC with tcpdump".into(),
        );
    }
    #[cfg(feature = "quic-net")]
    if plan.transport == Transport::Quic {
        super::transfer::quic::quic_config(plan.strategy).map_err(PerfError::Invalid)?;
    }
    Ok(())
}

fn connect_error(plan: &PerfPlan, reason: String) -> PerfError {
    PerfError::Connect {
        addr: plan.to.clone(),
        reason,
    }
}

fn hello(plan: &PerfPlan) -> Vec<u8> {
    let name = plan.strategy.name();
    let mut h = Vec::with_capacity(HELLO_LEN + name.len());
    h.extend_from_slice(MAGIC);
    h.push(VERSION);
    h.push(u8::from(plan.reverse));
    h.push(name.len().min(255) as u8);
    h.push(0);
    let ms = u32::try_from(plan.duration.as_millis()).unwrap_or(u32::MAX);
    h.extend_from_slice(&ms.to_be_bytes());
    h.extend_from_slice(&name.as_bytes()[..name.len().min(255)]);
    h
}

fn interval((from_s, from_bytes): (f64, u64), (to_s, to_bytes): (f64, u64)) -> IntervalReport {
    let bytes = to_bytes.saturating_sub(from_bytes);
    let span = to_s - from_s;
    IntervalReport {
        start_s: from_s,
        end_s: to_s,
        bytes,
        bits_per_second: if span > 0.0 {
            bytes as f64 * 8.0 / span
        } else {
            0.0
        },
    }
}

/// What one connection of a run ended with.
struct ConnOutcome {
    received: u64,
    receiver_acks: Option<u64>,
    /// This end's counters (ackwise only).
    local: Option<Stats>,
}

async fn client_conn(
    conn: Conn,
    hello: Vec<u8>,
    reverse: bool,
    deadline: Instant,
    counter: Arc<AtomicU64>,
) -> Result<ConnOutcome, PerfError> {
    #[cfg(feature = "quic-net")]
    let mut quic: Option<quinn::Connection> = None;
    let mut ends = None;
    let (mut io, probe): (Box<dyn Duplex>, Option<AckProbe>) = match conn {
        Conn::Ackwise(s, p) => (Box::new(s), Some(p)),
        Conn::Tcp(s) => {
            ends = tcp_ends(&s);
            (Box::new(s), None)
        }
        #[cfg(feature = "quic-net")]
        Conn::Quic(s, c) => {
            quic = Some(c);
            (Box::new(s), None)
        }
    };
    io.write_all(&hello).await.map_err(lost)?;
    if reverse {
        let received =
            read_to_end(&mut *io, &counter, deadline + DRAIN_TIMEOUT, probe.as_ref()).await?;
        let local = probe.as_ref().map(AckProbe::stats);
        let mut receiver_acks = local.as_ref().map(|s| s.pure_acks_sent);
        if ends.is_some() {
            receiver_acks = kernel_segments_sent(ends);
        }
        io.shutdown().await.map_err(lost)?;
        // The server reads this end's FIN last, so it closes.
        #[cfg(feature = "quic-net")]
        if let Some(c) = &quic {
            receiver_acks = Some(c.stats().frame_tx.acks);
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, c.closed()).await;
        }
        return Ok(ConnOutcome {
            received,
            receiver_acks,
            local,
        });
    }
    let chunk = Bytes::from(vec![0x5a; WRITE_CHUNK]);
    let mut written = 0u64;
    while Instant::now() < deadline {
        let n = tokio::time::timeout_at(deadline.into(), io.write_block(&chunk)).await;
        match n {
            Ok(Ok(n)) => written += n as u64,
            Ok(Err(e)) => return Err(lost(e)),
            Err(_) => break,
        }
        counter.store(
            probe.as_ref().map_or(written, |p| {
                p.acknowledged_bytes().saturating_sub(hello.len() as u64)
            }),
            Relaxed,
        );
    }
    io.shutdown().await.map_err(lost)?;
    let mut result = [0u8; RESULT_LEN];
    tokio::time::timeout_at(
        (deadline + DRAIN_TIMEOUT).into(),
        io.read_exact(&mut result),
    )
    .await
    .map_err(|_| PerfError::Protocol("the server did not report what it received".into()))?
    .map_err(|e| PerfError::Protocol(format!("the server's report did not arrive: {e}")))?;
    let received = u64::from_be_bytes(result[0..8].try_into().expect("8 bytes"));
    let acks = u64::from_be_bytes(result[8..16].try_into().expect("8 bytes"));
    counter.store(received, Relaxed);
    // This end reads the last message, so it closes.
    #[cfg(feature = "quic-net")]
    if let Some(c) = &quic {
        c.close(0u32.into(), b"done");
    }
    Ok(ConnOutcome {
        received,
        receiver_acks: (result[16] == 1).then_some(acks),
        local: probe.as_ref().map(AckProbe::stats),
    })
}

/// A write in progress of [`Duplex::write_block`].
type BlockWrite<'a> = Pin<Box<dyn Future<Output = std::io::Result<usize>> + Send + 'a>>;
/// A boxed read of [`Duplex::read_block`].
type BlockRead<'a> = BlockWrite<'a>;

/// A byte stream of either carrier.
trait Duplex: AsyncRead + AsyncWrite + Unpin + Send {
    /// Writes some of `block`, as `write` does; an ackwise stream keeps it
    /// by reference instead of copying it ([`Stream::write_shared`]), as
    /// iperf3 and a kernel TCP sender copy their one buffer once.
    fn write_block<'a>(&'a mut self, block: &'a Bytes) -> BlockWrite<'a>;

    /// Reads up to `buf.len()` bytes and returns how many (0 at the end),
    /// as `read` does; an ackwise stream hands its data over by reference
    /// ([`Stream::read_chunk`]) and `buf` stays unused, as the perf
    /// receiver only counts the bytes.
    fn read_block<'a>(&'a mut self, buf: &'a mut [u8]) -> BlockRead<'a>;
}

impl Duplex for Stream {
    fn write_block<'a>(&'a mut self, block: &'a Bytes) -> BlockWrite<'a> {
        Box::pin(self.write_shared(block))
    }

    fn read_block<'a>(&'a mut self, buf: &'a mut [u8]) -> BlockRead<'a> {
        Box::pin(async move { Ok(self.read_chunk(buf.len()).await?.map_or(0, |b| b.len())) })
    }
}

impl Duplex for TcpStream {
    fn write_block<'a>(&'a mut self, block: &'a Bytes) -> BlockWrite<'a> {
        Box::pin(self.write(block))
    }

    fn read_block<'a>(&'a mut self, buf: &'a mut [u8]) -> BlockRead<'a> {
        Box::pin(self.read(buf))
    }
}

#[cfg(feature = "quic-net")]
impl Duplex for super::transfer::quic::QuicStream {
    fn write_block<'a>(&'a mut self, block: &'a Bytes) -> BlockWrite<'a> {
        Box::pin(self.write(block))
    }

    fn read_block<'a>(&'a mut self, buf: &'a mut [u8]) -> BlockRead<'a> {
        Box::pin(self.read(buf))
    }
}

/// Reads until the peer's FIN, counting into `counter`. A timeout names
/// what the connection (when `probe` shows it) saw, so that a stall can be
/// told from a slow path.
async fn read_to_end<S: Duplex + ?Sized>(
    io: &mut S,
    counter: &AtomicU64,
    give_up: Instant,
    probe: Option<&AckProbe>,
) -> Result<u64, PerfError> {
    let mut buf = vec![0u8; WRITE_CHUNK];
    let mut total = 0u64;
    loop {
        let n = tokio::time::timeout_at(give_up.into(), io.read_block(&mut buf))
            .await
            .map_err(|_| {
                let seen = probe.map_or(String::new(), |p| {
                    let s = p.stats();
                    format!(
                        " ({total} bytes read; the connection received {} data segments, \
                         discarded {} segments and sent {} ACKs)",
                        s.data_segments_received, s.discarded_segments, s.acks_sent
                    )
                });
                PerfError::Protocol(format!("the data did not end in time{seen}"))
            })?
            .map_err(|e| PerfError::Protocol(format!("the connection failed: {e}")))?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        counter.store(total, Relaxed);
    }
}

/// Serves perf clients until `shutdown` completes; each connection is
/// handled on its own task, and a failed one is reported and forgotten.
pub async fn serve_perf(
    plan: &PerfServerPlan,
    on_listening: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()>,
) -> Result<(), PerfError> {
    let listen_failed = |reason: String| PerfError::Listen {
        addr: plan.listen.clone(),
        reason,
    };
    let addr = tokio::net::lookup_host(&plan.listen)
        .await
        .map_err(|e| listen_failed(e.to_string()))?
        .next()
        .ok_or_else(|| listen_failed("the name has no address".into()))?;
    #[cfg(feature = "quic-net")]
    if let (Transport::Quic, Some(s)) = (plan.transport, plan.strategy) {
        super::transfer::quic::quic_config(s).map_err(PerfError::Invalid)?;
    }
    let strategy = plan.strategy.unwrap_or(Strategy::DEFAULT);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    match plan.transport {
        Transport::Ackwise => {
            let config = EndpointConfig {
                server: Some(strategy_config(strategy, plan.mss)),
                capture: plan.pcap.clone(),
                // Nothing is kept: what is measured is the transport.
                omit_tcp_checksums: true,
                ..EndpointConfig::default()
            };
            let endpoint =
                Endpoint::with_config(addr, config).map_err(|e| listen_failed(e.to_string()))?;
            on_listening(endpoint.local_addr());
            loop {
                tokio::select! {
                    () = &mut shutdown => break,
                    accepted = endpoint.accept() => match accepted {
                        Some((stream, peer)) => {
                            let probe = stream.ack_probe();
                            let pinned = plan.strategy;
                            tasks.spawn(serve_conn(Conn::Ackwise(stream, probe), pinned, peer));
                        }
                        None => break,
                    },
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                }
            }
            tasks.shutdown().await;
            endpoint.close(Duration::from_secs(1)).await;
        }
        Transport::Tcp => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|e| listen_failed(e.to_string()))?;
            on_listening(listener.local_addr().unwrap_or(addr));
            loop {
                tokio::select! {
                    () = &mut shutdown => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, peer)) => {
                            tasks.spawn(serve_conn(Conn::Tcp(stream), plan.strategy, peer));
                        }
                        Err(e) => eprintln!("accept failed: {e}"),
                    },
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                }
            }
            tasks.shutdown().await;
        }
        #[cfg(feature = "quic-net")]
        Transport::Quic => {
            let endpoint = super::transfer::quic::perf_quic_server(addr, plan.strategy)
                .map_err(listen_failed)?;
            on_listening(endpoint.local_addr().unwrap_or(addr));
            loop {
                tokio::select! {
                    () = &mut shutdown => break,
                    incoming = endpoint.accept() => match incoming {
                        Some(incoming) => {
                            let peer = incoming.remote_address();
                            tasks.spawn(async move {
                                match super::transfer::quic::perf_quic_accept(incoming).await {
                                    Ok((stream, conn)) => {
                                        serve_conn(Conn::Quic(stream, conn), None, peer).await;
                                    }
                                    Err(e) => eprintln!("perf client {peer}: {e}"),
                                }
                            });
                        }
                        None => break,
                    },
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                }
            }
            tasks.shutdown().await;
            endpoint.close(0u32.into(), b"");
            let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
        }
    }
    Ok(())
}

async fn serve_conn(conn: Conn, pinned: Option<Strategy>, peer: SocketAddr) {
    let result = match conn {
        Conn::Ackwise(mut stream, probe) => match read_hello(&mut stream).await {
            Ok(hello) => {
                // The receiver follows the client's strategy unless pinned.
                if let (Some(theirs), None, false) = (hello.strategy, pinned, hello.reverse) {
                    let policy = strategy_config(theirs, super::transfer::DEFAULT_MSS).ack_policy;
                    let _ = stream.set_ack_policy(policy);
                }
                let acks = || Some(probe.stats().pure_acks_sent);
                serve_body(&mut stream, &hello, Some(&probe), &acks).await
            }
            Err(e) => Err(e),
        },
        Conn::Tcp(mut stream) => match read_hello(&mut stream).await {
            Ok(hello) => {
                let ends = tcp_ends(&stream);
                let acks = || kernel_segments_sent(ends);
                serve_body(&mut stream, &hello, None, &acks).await
            }
            Err(e) => Err(e),
        },
        // quinn's receiver acknowledges as the client's ACK_FREQUENCY
        // frames ask, so there is no policy to set here.
        #[cfg(feature = "quic-net")]
        Conn::Quic(mut stream, conn) => match read_hello(&mut stream).await {
            Ok(hello) => {
                let acks = || Some(conn.stats().frame_tx.acks);
                let result = serve_body(&mut stream, &hello, None, &acks).await;
                if hello.reverse {
                    // This end reads the last message (the client's FIN).
                    conn.close(0u32.into(), b"done");
                } else {
                    let _ = tokio::time::timeout(DRAIN_TIMEOUT, conn.closed()).await;
                }
                result
            }
            Err(e) => Err(e),
        },
    };
    if let Err(e) = result {
        eprintln!("perf client {peer}: {e}");
    }
}

/// A kernel TCP socket's two ends, to ask the kernel about it.
fn tcp_ends(s: &TcpStream) -> Option<(SocketAddr, SocketAddr)> {
    Some((s.local_addr().ok()?, s.peer_addr().ok()?))
}

/// The segments the kernel's socket between `ends` sent (a receiver's
/// ACKs), as the kernel counts them.
fn kernel_segments_sent(ends: Option<(SocketAddr, SocketAddr)>) -> Option<u64> {
    let (local, remote) = ends?;
    super::kernel_tcp::counters(local, remote).map(|c| c.segs_out)
}

fn lost(e: std::io::Error) -> PerfError {
    PerfError::Protocol(format!("the connection failed: {e}"))
}

/// A client's hello, read.
struct Hello {
    reverse: bool,
    duration: Duration,
    /// The strategy it names, if this end knows it.
    strategy: Option<Strategy>,
}

async fn read_hello<S: AsyncRead + Unpin>(io: &mut S) -> Result<Hello, PerfError> {
    let mut head = [0u8; HELLO_LEN];
    tokio::time::timeout(HELLO_TIMEOUT, io.read_exact(&mut head))
        .await
        .map_err(|_| PerfError::Protocol("no hello within 5 s".into()))?
        .map_err(lost)?;
    if &head[0..4] != MAGIC || head[4] != VERSION {
        return Err(PerfError::Protocol(
            "not an ackwise perf client (bad hello)".into(),
        ));
    }
    let mut name = vec![0u8; usize::from(head[6])];
    tokio::time::timeout(HELLO_TIMEOUT, io.read_exact(&mut name))
        .await
        .map_err(|_| PerfError::Protocol("no hello within 5 s".into()))?
        .map_err(lost)?;
    let ms = u32::from_be_bytes(head[8..12].try_into().expect("4 bytes"));
    Ok(Hello {
        reverse: head[5] & 1 == 1,
        duration: Duration::from_millis(u64::from(ms)).min(MAX_DURATION),
        strategy: std::str::from_utf8(&name).ok().and_then(|n| n.parse().ok()),
    })
}

/// One connection's run on the server; `acks` tells how many ACKs this
/// end has sent, where the carrier counts them.
async fn serve_body<S: Duplex>(
    io: &mut S,
    hello: &Hello,
    probe: Option<&AckProbe>,
    acks: &(dyn Fn() -> Option<u64> + Sync),
) -> Result<(), PerfError> {
    let counter = AtomicU64::new(0);
    if hello.reverse {
        let chunk = Bytes::from(vec![0xa5; WRITE_CHUNK]);
        let deadline = Instant::now() + hello.duration;
        while Instant::now() < deadline {
            match tokio::time::timeout_at(deadline.into(), io.write_block(&chunk)).await {
                Ok(r) => {
                    r.map_err(lost)?;
                }
                Err(_) => break,
            }
        }
        io.shutdown().await.map_err(lost)?;
        // The client closes once it has everything.
        read_to_end(io, &counter, Instant::now() + DRAIN_TIMEOUT, probe).await?;
        return Ok(());
    }
    let give_up = Instant::now() + hello.duration + DRAIN_TIMEOUT;
    let received = read_to_end(io, &counter, give_up, probe).await?;
    let acks = acks();
    let mut result = [0u8; RESULT_LEN];
    result[0..8].copy_from_slice(&received.to_be_bytes());
    result[8..16].copy_from_slice(&acks.unwrap_or(0).to_be_bytes());
    result[16] = u8::from(acks.is_some());
    io.write_all(&result).await.map_err(lost)?;
    io.shutdown().await.map_err(lost)?;
    Ok(())
}

impl std::fmt::Display for PerfReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ({}, {} connection{}): {} bytes in {:.2} s, {}",
            if self.reverse { "received" } else { "sent" },
            self.transport,
            self.strategy,
            self.parallel,
            if self.parallel == 1 { "" } else { "s" },
            self.bytes,
            self.elapsed_s,
            super::transfer::fmt_rate(self.goodput_bps)
        )?;
        match (self.receiver_acks, self.acks_per_gib) {
            (Some(a), Some(g)) => write!(f, "; receiver ACKs {a} ({g:.0} per GiB)")?,
            (Some(a), None) => write!(f, "; receiver ACKs {a}")?,
            _ => write!(f, "; no ACK counters")?,
        }
        if let (Some(r), Some(t)) = (self.retransmissions, self.timeouts) {
            write!(f, "; {r} retransmissions, {t} timeouts")?;
        }
        if let Some(b) = self.segment_bytes {
            write!(f, "; segments of {b} bytes")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_rates_over_their_span() {
        let r = interval((1.0, 1000), (1.5, 3000));
        assert_eq!(r.bytes, 2000);
        assert!((r.bits_per_second - 32_000.0).abs() < 1e-9);
        assert_eq!(interval((2.0, 5), (2.0, 5)).bits_per_second, 0.0);
    }

    #[test]
    fn the_hello_names_direction_duration_and_strategy() {
        let plan = PerfPlan {
            to: "127.0.0.1:1".into(),
            transport: Transport::Ackwise,
            strategy: Strategy::W4,
            mss: 1400,
            duration: Duration::from_millis(2500),
            interval: Duration::from_secs(1),
            parallel: 1,
            reverse: true,
            connect_timeout: Duration::from_secs(1),
            pcap: None,
        };
        let h = hello(&plan);
        assert_eq!(&h[0..4], MAGIC);
        assert_eq!((h[4], h[5], usize::from(h[6])), (VERSION, 1, "4w".len()));
        assert_eq!(u32::from_be_bytes(h[8..12].try_into().unwrap()), 2500);
        assert_eq!(&h[12..], b"4w");
        for (change, flag) in [
            (
                PerfPlan {
                    parallel: 0,
                    ..plan.clone()
                },
                "--parallel",
            ),
            (
                PerfPlan {
                    duration: Duration::ZERO,
                    ..plan.clone()
                },
                "--time",
            ),
            (
                PerfPlan {
                    interval: Duration::ZERO,
                    ..plan.clone()
                },
                "--interval",
            ),
        ] {
            let e = check_plan(&change).unwrap_err().to_string();
            assert!(e.contains(flag), "{e}");
        }
    }
}
