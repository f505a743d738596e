//! The programs around the protocol: dial or listen on a transport, run
//! the transfer, report. `ackwise send` / `ackwise recv` and the examples
//! are thin wrappers over these.

use super::error::TransferError;
use super::progress::{Console, ConsoleMode, StatsSource, Summary};
use super::receive::{receive_files, ReceiveOptions};
use super::send::{open_files, send_files, SendOptions};
use super::sweep::{stale_age, sweep_partials};
use crate::connection::{AckNonceMode, Config};
use crate::lab::{LabScenario, Strategy};
use crate::net::{Endpoint, EndpointConfig, NetError};
use crate::time::Duration;
use indicatif::MultiProgress;
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// What carries the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// ackwise connections over UDP ([`Endpoint`]), configured by the
    /// strategy.
    Ackwise,
    /// The kernel's TCP, a reference to compare with; the strategy and
    /// MSS do not apply.
    Tcp,
    /// QUIC over UDP by quinn, with a `quic*` strategy's ACK-frequency
    /// policy and controller (feature `quic-net`); MSS does not apply.
    #[cfg(feature = "quic-net")]
    Quic,
}

impl std::str::FromStr for Transport {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ackwise" => Ok(Transport::Ackwise),
            "tcp" => Ok(Transport::Tcp),
            #[cfg(feature = "quic-net")]
            "quic" => Ok(Transport::Quic),
            other => Err(format!(
                "unknown transport `{other}` (known: ackwise, tcp{})",
                if cfg!(feature = "quic-net") {
                    ", quic"
                } else {
                    ""
                }
            )),
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Ackwise => "ackwise",
            Transport::Tcp => "tcp",
            #[cfg(feature = "quic-net")]
            Transport::Quic => "quic",
        })
    }
}

/// The segment size `send`, `recv` and `perf` ask for unless told
/// otherwise: the most a UDP datagram holds. The connecting end probes
/// the path first and lowers it to what the path carries (see
/// [`EndpointConfig::probe_path_mtu`](crate::net::EndpointConfig::probe_path_mtu)):
/// 1 412 on a 1 500-byte Ethernet MTU, all of it on loopback.
pub const DEFAULT_MSS: u16 = crate::net::MAX_MSS;

/// The smallest segment size a connection accepts
/// ([`Config::validate`](crate::connection::Config::validate)).
pub const MIN_MSS: u16 = 64;

/// Checks a segment size for an ackwise carrier before anything starts:
/// at least [`MIN_MSS`], at most [`MAX_MSS`](crate::net::MAX_MSS) (one
/// UDP datagram).
pub fn check_mss(mss: u16) -> Result<(), TransferError> {
    if (MIN_MSS..=crate::net::MAX_MSS).contains(&mss) {
        Ok(())
    } else {
        Err(TransferError::SegmentSize { mss })
    }
}

/// The connection configuration for `strategy` on a real network, by the
/// lab's mapping ([`Strategy::apply`]) so that a name means the same in
/// the lab and on sockets.
///
/// What matters for a file transfer, where data flows from sender to
/// receiver: the *sender* uses the strategy's ACK requests (2W, 4W, A4L4,
/// ...), byte-counting limit and congestion options; the *receiver* uses
/// its ACK policy (every, delayed, polled, smart, acc). The sender names
/// its strategy in each file header ([`SendOptions::strategy`]) and a
/// receiver without one of its own ([`ReceiveOptions::strategy`] `None`)
/// switches to that strategy's ACK policy; until then it runs the polled
/// receiver, which answers whatever a polling sender asks and gives
/// delayed ACKs to a sender that does not poll.
///
/// On top of the defaults of [`Config`]: the given `mss` (see
/// [`DEFAULT_MSS`]; the smaller of the two ends' applies), Nagle off (the transfer writes
/// large chunks and small verdicts that must not wait), buffers of up to
/// 8 MiB that grow with what the transfer needs
/// ([`Config::buffer_autotuning`]: on loopback, where a round trip is tens
/// of microseconds, they stay near a megabyte, and the data stays in the
/// caches), a 200 ms minimum RTO as in the lab, and the lab's 100 ms
/// delayed-ACK and polled fallback timers.
pub fn strategy_config(strategy: Strategy, mss: u16) -> Config {
    let base = Config {
        mss,
        nagle: false,
        send_buffer: 8 << 20,
        recv_buffer: 8 << 20,
        buffer_autotuning: true,
        min_rto: Duration::from_millis(200),
        ..Config::default()
    };
    // The lab's timers, so that a strategy name means the same here.
    let lab = LabScenario::default();
    strategy.apply(&base, lab.delayed_ack, lab.poll_fallback)
}

/// How long a sender whose handshake timed out waits for a QUIC server to
/// answer its probe.
const QUIC_PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How long closing an endpoint waits for its connections' last FINs and
/// ACKs.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What `ackwise send` does.
#[derive(Debug, Clone)]
pub struct SendPlan {
    /// The files, in order.
    pub paths: Vec<PathBuf>,
    /// The receiver, `host:port`.
    pub to: String,
    /// The carrier.
    pub transport: Transport,
    /// The strategy (ackwise transport only).
    pub strategy: Strategy,
    /// Largest segment payload offered (ackwise transport only).
    pub mss: u16,
    /// How long to wait for the connection.
    pub connect_timeout: Duration,
    /// QUIC only: the SHA-256 of the certificate the receiver must
    /// present (`ackwise recv --transport quic` prints it).
    pub quic_cert_sha256: Option<[u8; 32]>,
    /// Progress and timeouts of the transfer.
    pub options: SendOptions,
    /// Progress display.
    pub console: ConsoleMode,
    /// Write what crosses the socket to this pcap file, as IP/TCP
    /// (ackwise transport only; see [`EndpointConfig::capture`]).
    pub pcap: Option<PathBuf>,
}

/// What `ackwise recv` does.
#[derive(Debug, Clone)]
pub struct ServePlan {
    /// Address to listen on.
    pub listen: String,
    /// The carrier.
    pub transport: Transport,
    /// The strategy (ackwise transport only).
    pub strategy: Strategy,
    /// Largest segment payload offered (ackwise transport only).
    pub mss: u16,
    /// Where files go and whether they may replace others.
    pub options: ReceiveOptions,
    /// Progress display.
    pub console: ConsoleMode,
    /// Write what crosses the socket to this pcap file, as IP/TCP
    /// (ackwise transport only; see [`EndpointConfig::capture`]).
    pub pcap: Option<PathBuf>,
}

/// Every address `addr` names, in the resolver's order; the error is the
/// reason, for the caller to put in context.
async fn resolve(addr: &str) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .map_err(|e| format!("cannot resolve the address ({e})"))?
        .collect();
    if addrs.is_empty() {
        return Err("the name has no address".into());
    }
    Ok(addrs)
}

fn describe_connect_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        std::io::ErrorKind::TimedOut => "timed out".into(),
        _ => e.to_string(),
    }
}

/// Opens the files (before any connection, so that a missing file is the
/// first thing reported), connects, sends, and returns the summary. The
/// caller decides what a summary with a rejected file means; `ackwise
/// send` exits non-zero.
pub async fn run_send(plan: &SendPlan) -> Result<Summary, TransferError> {
    run_send_until(plan, std::future::pending()).await
}

/// [`run_send`] that stops when `interrupt` completes (`ackwise send`
/// passes Ctrl-C) with [`TransferError::Interrupted`]. The connection is
/// reset rather than closed, so the receiver learns at once that the file
/// in progress will not be finished and removes its partial file.
pub async fn run_send_until(
    plan: &SendPlan,
    interrupt: impl Future<Output = ()>,
) -> Result<Summary, TransferError> {
    if plan.transport == Transport::Ackwise {
        check_mss(plan.mss)?;
    }
    let files = open_files(&plan.paths)?;
    let addrs = resolve(&plan.to)
        .await
        .map_err(|reason| TransferError::Connect {
            addr: plan.to.clone(),
            reason,
        })?;
    // `ackwise send` lists the failed files in its final error line.
    let mut console = Console::new(plan.console, "").without_failures();
    match plan.transport {
        Transport::Ackwise => {
            let (endpoint, mut stream) = first_of(&addrs, |a| connect_ackwise(a, plan)).await?;
            if !console.is_quiet() {
                console.line(&format!(
                    "segments of {} bytes (what the path to {} carries, up to --mss)",
                    stream.negotiated().peer_mss,
                    stream.remote_addr()
                ));
            }
            // The receiver follows the strategy the headers name.
            let options = SendOptions {
                strategy: Some(plan.strategy.name()),
                ..plan.options.clone()
            };
            let result = tokio::select! {
                r = send_files(&mut stream, files, &options, &mut console) => r,
                () = interrupt => Err(TransferError::Interrupted),
            };
            if result.is_err() {
                // A failed transfer must not look finished to the
                // receiver: reset rather than close.
                stream.abort();
            }
            drop(stream);
            endpoint.close(CLOSE_GRACE).await;
            report_capture(&console, plan.pcap.as_deref(), &endpoint);
            result
        }
        Transport::Tcp => {
            let mut stream = first_of(&addrs, |a| connect_tcp(a, plan)).await?;
            let result = tokio::select! {
                r = send_files(&mut stream, files, &plan.options, &mut console) => r,
                () = interrupt => Err(TransferError::Interrupted),
            };
            if result.is_err() {
                // Closing with a zero linger sends a RST instead of a FIN.
                // (Deprecated because a non-zero linger blocks the thread
                // on drop; a zero one resets at once.)
                #[allow(deprecated)]
                let _ = stream.set_linger(Some(std::time::Duration::ZERO));
            }
            result
        }
        #[cfg(feature = "quic-net")]
        Transport::Quic => {
            // Dropping the connection closes it with an error code, which
            // the receiver treats as a failure.
            tokio::select! {
                r = super::quic::run_send_quic(plan, files, &addrs, &mut console) => r,
                () = interrupt => Err(TransferError::Interrupted),
            }
        }
    }
}

/// Tries `connect` on each address in turn (a name such as `localhost`
/// may list `::1` before `127.0.0.1`); the first connection wins, else the
/// last address's error stands.
async fn first_of<T, F, Fut>(addrs: &[SocketAddr], connect: F) -> Result<T, TransferError>
where
    F: Fn(SocketAddr) -> Fut,
    Fut: Future<Output = Result<T, TransferError>>,
{
    let Some((&first, rest)) = addrs.split_first() else {
        return Err(TransferError::Connect {
            addr: String::new(),
            reason: "no address to try".into(),
        });
    };
    let mut result = connect(first).await;
    for &addr in rest {
        if result.is_ok() {
            break;
        }
        result = connect(addr).await;
    }
    result
}

async fn connect_ackwise(
    addr: SocketAddr,
    plan: &SendPlan,
) -> Result<(Endpoint, crate::net::Stream), TransferError> {
    let failed = |reason: String| TransferError::Connect {
        addr: plan.to.clone(),
        reason,
    };
    let local: SocketAddr = if addr.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let endpoint = Endpoint::with_config(
        local,
        EndpointConfig {
            connect_timeout: plan.connect_timeout,
            capture: plan.pcap.clone(),
            // Every file is checked by its SHA-256 digest.
            omit_tcp_checksums: true,
            ..EndpointConfig::default()
        },
    )
    .map_err(|e| failed(format!("cannot open a UDP socket: {e}")))?;
    // `ackwise recv` always offers the ACK nonce; requiring it means a
    // receiver that strips the offer cannot get around the check and make
    // this sender believe optimistic ACKs (see `connection::ack_nonce`).
    let config = Config {
        ack_nonce: AckNonceMode::Require,
        ..strategy_config(plan.strategy, plan.mss)
    };
    match endpoint.connect(addr, config).await {
        Ok(stream) => Ok((endpoint, stream)),
        Err(NetError::TimedOut { after, .. }) => {
            // Nothing answered the SYNs: perhaps a QUIC receiver, which
            // ignores them; one probe tells (see `net::foreign`).
            if crate::net::foreign::answers_as_quic(addr, QUIC_PROBE_WAIT).await {
                return Err(failed(
                    "the receiver speaks QUIC (it answered a QUIC probe, not the handshake): \
                     send with --transport quic"
                        .into(),
                ));
            }
            Err(TransferError::ConnectTimeout {
                addr: plan.to.clone(),
                after,
            })
        }
        Err(NetError::ConnectionRefused { .. }) => Err(failed("connection refused".into())),
        Err(other) => Err(failed(other.to_string())),
    }
}

async fn connect_tcp(addr: SocketAddr, plan: &SendPlan) -> Result<TcpStream, TransferError> {
    let connected = tokio::time::timeout(plan.connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| TransferError::ConnectTimeout {
            addr: plan.to.clone(),
            after: plan.connect_timeout,
        })?;
    let stream = connected.map_err(|e| TransferError::Connect {
        addr: plan.to.clone(),
        reason: describe_connect_error(&e),
    })?;
    // Verdicts are tiny and awaited: they must not sit in Nagle's buffer.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Serves until `shutdown` completes: every incoming connection is
/// handled concurrently, each with its own summary line on stderr.
/// Partial files that a killed receiver left in the output directory are
/// removed at start and then every idle timeout ([`sweep_partials`] with
/// [`stale_age`], and bytes kept for a resumption after
/// [`ReceiveOptions::keep_partial`](super::ReceiveOptions::keep_partial)). A
/// connection that fails is reported and the server goes on; transfers
/// still running at shutdown are dropped, which removes their partial
/// files.
pub async fn serve(
    plan: &ServePlan,
    shutdown: impl Future<Output = ()>,
) -> Result<(), TransferError> {
    if plan.transport == Transport::Ackwise {
        check_mss(plan.mss)?;
    }
    plan.options.check_out_dir()?;
    // What a killed receiver left behind goes now, and what one that dies
    // while this one runs leaves goes on the timer.
    let stale = stale_age(plan.options.idle_timeout);
    let keep = plan.options.keep_partial;
    let swept = sweep_partials(&plan.options.out_dir, stale, keep).unwrap_or(0);
    if swept > 0 && plan.console != ConsoleMode::Quiet {
        eprintln!(
            "removed {swept} abandoned partial file{} from {}",
            if swept == 1 { "" } else { "s" },
            plan.options.out_dir.display()
        );
    }
    let _sweeper = AbortOnDrop(tokio::spawn(sweep_every(
        plan.options.out_dir.clone(),
        plan.options.idle_timeout,
        stale,
        keep,
    )));
    let listen_failed = |reason: String| TransferError::Listen {
        addr: plan.listen.clone(),
        reason,
    };
    // A name listens on its first address (`127.0.0.1:4433` is one).
    let addr = resolve(&plan.listen)
        .await
        .map_err(listen_failed)?
        .first()
        .copied()
        .ok_or_else(|| listen_failed("the name has no address".into()))?;
    #[cfg(feature = "quic-net")]
    if plan.transport == Transport::Quic {
        let identity =
            crate::quic::SelfSigned::generate().map_err(|e| listen_failed(e.to_string()))?;
        return super::quic::serve_quic(plan, &identity, addr, shutdown).await;
    }
    let multi = MultiProgress::new();
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    match plan.transport {
        Transport::Ackwise => {
            let endpoint = Endpoint::with_config(
                addr,
                EndpointConfig {
                    server: Some(strategy_config(plan.strategy, plan.mss)),
                    capture: plan.pcap.clone(),
                    // The ACK policy decides per segment, as in the lab:
                    // answering a receive-offload batch as a whole sends
                    // one ACK per batch whatever the policy (AE then sent
                    // a third of its ACKs through a relay). The polled
                    // strategies ask for few ACKs, so this costs them
                    // little.
                    transmit_per_segment: true,
                    // Every file is checked by its SHA-256 digest.
                    omit_tcp_checksums: true,
                    ..EndpointConfig::default()
                },
            )
            .map_err(|e| listen_failed(e.to_string()))?;
            announce(plan, Some(endpoint.local_addr()));
            loop {
                tokio::select! {
                    () = &mut shutdown => break,
                    accepted = endpoint.accept() => match accepted {
                        Some((stream, peer)) => {
                            spawn_receiver(&mut tasks, stream, peer, plan, &multi);
                        }
                        None => break,
                    },
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                }
            }
            tasks.shutdown().await;
            endpoint.close(CLOSE_GRACE).await;
            let console = Console::new(plan.console, "");
            report_capture(&console, plan.pcap.as_deref(), &endpoint);
        }
        Transport::Tcp => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|e| listen_failed(e.to_string()))?;
            announce(plan, listener.local_addr().ok());
            loop {
                tokio::select! {
                    () = &mut shutdown => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, peer)) => {
                            let _ = stream.set_nodelay(true);
                            spawn_receiver(&mut tasks, stream, peer, plan, &multi);
                        }
                        // Out of file descriptors and the like: the
                        // listener itself is still fine.
                        Err(e) => eprintln!("accept failed: {e}"),
                    },
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                }
            }
            tasks.shutdown().await;
        }
        #[cfg(feature = "quic-net")]
        Transport::Quic => {}
    }
    Ok(())
}

/// Where the capture went, or that it stopped early (a full disk, say):
/// the transfer's result does not depend on it, so this is a line of its
/// own and not an error.
fn report_capture(console: &Console, pcap: Option<&Path>, endpoint: &Endpoint) {
    let Some(path) = pcap else {
        return;
    };
    let stats = endpoint.stats();
    if stats.capture_errors > 0 {
        eprintln!(
            "capture: writing {} failed after {} segments; the file ends there",
            path.display(),
            stats.segments_captured
        );
    } else if !console.is_quiet() {
        console.line(&format!(
            "capture: {} segments in {}",
            stats.segments_captured,
            path.display()
        ));
    }
}

/// Sweeps `dir` every `period` for partial files untouched for `stale`.
async fn sweep_every(
    dir: PathBuf,
    period: std::time::Duration,
    stale: std::time::Duration,
    keep: std::time::Duration,
) {
    let start = tokio::time::Instant::now() + period;
    let mut ticks = tokio::time::interval_at(start, period);
    loop {
        ticks.tick().await;
        let dir = dir.clone();
        let _ = tokio::task::spawn_blocking(move || sweep_partials(&dir, stale, keep)).await;
    }
}

/// Aborts a background task when the scope that started it ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn announce(plan: &ServePlan, local: Option<SocketAddr>) {
    if plan.console != ConsoleMode::Quiet {
        let at = local.map_or_else(|| plan.listen.clone(), |a| a.to_string());
        eprintln!(
            "receiving on {at} ({}) into {}; Ctrl-C stops",
            plan.transport,
            plan.options.out_dir.display()
        );
    }
}

fn spawn_receiver<S>(
    tasks: &mut JoinSet<()>,
    mut stream: S,
    peer: SocketAddr,
    plan: &ServePlan,
    multi: &MultiProgress,
) where
    S: AsyncRead + AsyncWrite + Unpin + StatsSource + Send + 'static,
{
    let options = plan.options.clone();
    let mut console = Console::new(plan.console, peer.to_string()).with_multi(multi.clone());
    tasks.spawn(async move {
        match receive_files(&mut stream, &options, &mut console).await {
            Ok(summary) => {
                if !summary.files.is_empty() && !console.is_quiet() {
                    console.line(&format!("{peer}: {summary}"));
                }
            }
            Err(e) => console.line(&format!("{peer}: error: {e}")),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_sizes_outside_a_datagram_are_refused() {
        for bad in [0, 1, MIN_MSS - 1, crate::net::MAX_MSS + 1, u16::MAX] {
            let e = check_mss(bad).unwrap_err();
            assert!(matches!(e, TransferError::SegmentSize { mss } if mss == bad));
            assert!(e.to_string().contains("UDP datagram"), "{e}");
        }
        for good in [MIN_MSS, DEFAULT_MSS, 16_000, crate::net::MAX_MSS] {
            check_mss(good).unwrap();
        }
        // Every size check_mss passes also passes the connection's own
        // validation, so nothing fails late.
        for good in [MIN_MSS, crate::net::MAX_MSS] {
            strategy_config(Strategy::DEFAULT, good).validate().unwrap();
        }
    }
}
