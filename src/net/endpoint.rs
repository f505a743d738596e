//! [`Endpoint`]: a UDP socket carrying many ackwise connections.

use super::capture::SocketCapture;
use super::clock::Clock;
use super::driver::{Command, Driver, DriverParams};
use super::error::NetError;
use super::pmtu::{self, ProbeRound};
use super::shared::DriverLink;
use super::stats::{EndpointStats, StatsCell};
use super::stream::Stream;
use crate::connection::Config;
use quinn_udp::UdpSocketState;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::future::poll_fn;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How an [`Endpoint`] behaves.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Accept connections with this configuration; `None` for an endpoint
    /// that only connects out.
    pub server: Option<Config>,
    /// How long [`Endpoint::connect`] waits for the handshake.
    pub connect_timeout: Duration,
    /// Connections at most, open or opening. A SYN that finds the table
    /// full is answered with a SYN cookie (or, without cookies, takes the
    /// place of the oldest half-open connection, if there is one, and is
    /// dropped otherwise).
    pub max_connections: usize,
    /// Half-open connections (SYN answered, handshake not complete) at
    /// most; a SYN beyond is answered with a SYN cookie, or without
    /// cookies takes the place of the oldest of the peer with the most, so
    /// that a SYN flood cannot keep real clients out.
    pub max_half_open: usize,
    /// Half-open connections from one peer address at most; a SYN beyond
    /// takes the place of that peer's oldest.
    pub max_half_open_per_peer: usize,
    /// Connections one peer address may have opened to this endpoint at
    /// once, half-open or established; its SYNs beyond are refused with a
    /// reset (the client sees "connection refused"), so that one address
    /// cannot take the whole table. Default 1024, a quarter of the
    /// default table. IPv6 addresses count one by one: a peer with a
    /// whole prefix is not held back by this.
    pub max_connections_per_peer: usize,
    /// Answer SYNs beyond the half-open limits with SYN cookies (no state
    /// kept until the handshake's ACK returns; see `docs/security.md`)
    /// instead of dropping an older half-open connection. On by default.
    pub syn_cookies: bool,
    /// When the table is full, a new connection takes the place of the
    /// established one whose data has not moved for longest (see
    /// [`Connection::last_progress`](crate::connection::Connection::last_progress)),
    /// if that is at least this long; it is reset and its stream fails
    /// with `ConnectionReset`. `None`: never. Default 30 s.
    pub idle_eviction: Option<Duration>,
    /// A connection whose data has stood still this long gives its send
    /// buffer and receive ring back to the allocator (see
    /// [`Connection::release_idle_memory`](crate::connection::Connection::release_idle_memory)):
    /// an idle connection then holds a few KiB instead of its largest
    /// window. The sweep that finds them runs as often. `None`: never.
    /// Default 5 s.
    pub idle_release: Option<Duration>,
    /// Challenge ACKs (RFC 5961) all connections of the endpoint may send
    /// per second together, on top of each connection's
    /// [`Config::challenge_ack_limit`]; each second's budget is drawn
    /// between this and twice this. `None` (the default): only the limit
    /// per connection, because a shared counter lets an off-path attacker
    /// who can exhaust it learn when other connections send challenge
    /// ACKs (see [`ChallengeBudget`](crate::connection::ChallengeBudget)).
    pub challenge_ack_limit: Option<u32>,
    /// Socket send and receive buffer sizes asked of the kernel (which
    /// caps them at `net.core.wmem_max` / `rmem_max`). Half the receive
    /// buffer granted is the budget out of which autotuned windows take a
    /// margin wider than Linux's (see
    /// [`WindowBudget`](crate::connection::WindowBudget)).
    pub socket_buffer_bytes: usize,
    /// Send equal-sized segments of a connection in one system call
    /// (UDP generic segmentation offload) where the kernel supports it.
    pub gso: bool,
    /// Let each connection transmit after every arriving segment instead
    /// of once per receive batch. Off by default: with GRO a batch holds
    /// dozens of segments, and answering it as a whole (one ACK, whatever
    /// the ACK policy) is much cheaper. On, every ACK policy acts per
    /// segment as on a path without receive offload (AE sends an ACK per
    /// segment, delayed ACK one per two), each ACK in a datagram of its
    /// own, which is what comparisons of ACK policies want and what the
    /// lab's emulator does; `ackwise recv` turns it on.
    pub transmit_per_segment: bool,
    /// Write every segment that crosses the socket, both ways, to this
    /// pcap file as IP/TCP (see [`crate::pcap`]); the file is created, or
    /// truncated, when the endpoint binds. `None` by default.
    pub capture: Option<PathBuf>,
    /// Probe the path's MTU before each connection this endpoint opens,
    /// and lower the connection's `Config::mss` to what fits it; answer
    /// the probes of connecting peers. On by default.
    ///
    /// The probes (one padding datagram per candidate size in
    /// [`CANDIDATE_DATAGRAM_BYTES`](super::pmtu::CANDIDATE_DATAGRAM_BYTES),
    /// 1 280 to 65 535 bytes, and the size `Config::mss` itself needs;
    /// the kernel refuses at once those above the interface's MTU) go
    /// out before the SYN, so connecting takes one round trip more,
    /// and at least 10 ms more when a probe is lost on the way; a peer
    /// that answers none (one with this off, or a lossy path) is reached
    /// after up to a second (half the connect timeout at most) with
    /// segments that fit 1 200-byte datagrams (RFC 8899's base). Give
    /// `Config::mss` the most this end may send or take, and the path
    /// decides the rest: [`MAX_MSS`](super::MAX_MSS) on both ends gets
    /// 65 447-byte segments on loopback and 1 412 on Ethernet. Both ends'
    /// connections also get `Config::black_hole_mss` at the base size
    /// (unless it is set), so a path that later stops carrying the size
    /// found costs three timeouts, not the connection. See
    /// [`super::pmtu`].
    pub probe_path_mtu: bool,
    /// Offer every connection's peer to leave the TCP checksum out
    /// ([`Config::omit_checksums`](crate::connection::Config::omit_checksums)),
    /// since the datagram's UDP checksum covers the same bytes: where the
    /// peer's endpoint offers too, neither end computes it, which saves a
    /// pass over each segment's bytes at both ends (`ackwise perf` on
    /// loopback: 16.0 against 14.9 Gbit/s).
    ///
    /// Off by default, because the two checksums are not quite the same
    /// guard: TCP's is computed and checked by the connection itself, end
    /// to end, while UDP's is often computed and checked by the network
    /// cards (checksum offload), so bytes damaged in a host between the
    /// application and the card, or by a middlebox that rewrites payload
    /// and recomputes UDP's checksum, pass it. Turn it on where the
    /// application checks its data anyway: `ackwise send` and `recv`
    /// (a SHA-256 digest of every file) and `ackwise perf` do.
    pub omit_tcp_checksums: bool,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            server: None,
            connect_timeout: Duration::from_secs(10),
            max_connections: 4096,
            max_half_open: 1024,
            max_half_open_per_peer: 64,
            max_connections_per_peer: 1024,
            syn_cookies: true,
            idle_eviction: Some(Duration::from_secs(30)),
            idle_release: Some(Duration::from_secs(5)),
            challenge_ack_limit: None,
            socket_buffer_bytes: 8 << 20,
            gso: true,
            transmit_per_segment: false,
            capture: None,
            probe_path_mtu: true,
            omit_tcp_checksums: false,
        }
    }
}

/// A UDP socket on which ackwise connections are opened and accepted.
///
/// Each datagram carries one TCP segment (several with GSO/GRO, which the
/// kernel splits at equal strides); connections are told apart by the
/// peer's socket address and the port pair in the TCP header, so one
/// endpoint serves many connections, in both directions. A single tokio
/// task per endpoint (the driver) owns the socket and all connections.
///
/// Bind an endpoint from within a tokio runtime. Cloning it gives another
/// handle to the same endpoint. When the last handle is dropped, the
/// driver resets every connection left and stops: streams still held
/// then fail with `NotConnected`. [`close`](Self::close) shuts down
/// gracefully instead.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use ackwise::connection::Config;
/// use ackwise::net::Endpoint;
/// use tokio::io::AsyncWriteExt;
///
/// let server = Endpoint::server("127.0.0.1:4433".parse()?, Config::default())?;
/// let client = Endpoint::bind("127.0.0.1:0".parse()?)?;
/// let mut stream = client.connect(server.local_addr(), Config::default()).await?;
/// stream.write_all(b"hello").await?;
/// stream.shutdown().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Endpoint {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    cmd_tx: mpsc::UnboundedSender<Command>,
    accept_rx: tokio::sync::Mutex<Option<mpsc::UnboundedReceiver<(Stream, SocketAddr)>>>,
    link: Arc<DriverLink>,
    stats: Arc<StatsCell>,
    local_addr: SocketAddr,
    connect_timeout: Duration,
    probe_path_mtu: bool,
}

impl Endpoint {
    /// An endpoint that only opens connections, on `addr` (port 0 for any).
    pub fn bind(addr: SocketAddr) -> io::Result<Endpoint> {
        Endpoint::with_config(addr, EndpointConfig::default())
    }

    /// An endpoint that accepts connections with `config` (and may also
    /// open some).
    pub fn server(addr: SocketAddr, config: Config) -> io::Result<Endpoint> {
        Endpoint::with_config(
            addr,
            EndpointConfig {
                server: Some(config),
                ..EndpointConfig::default()
            },
        )
    }

    /// An endpoint with every setting chosen.
    ///
    /// Fails with `InvalidInput` for an invalid server configuration,
    /// with `Other` outside a tokio runtime, and with the file's error
    /// (its path in the message) when the capture file cannot be created.
    pub fn with_config(addr: SocketAddr, config: EndpointConfig) -> io::Result<Endpoint> {
        let handle = tokio::runtime::Handle::try_current().map_err(|e| {
            io::Error::other(format!("ackwise endpoint needs a tokio runtime: {e}"))
        })?;
        if let Some(server) = &config.server {
            check_config(server).map_err(io::Error::from)?;
        }
        let std_socket = std::net::UdpSocket::bind(addr)?;
        std_socket.set_nonblocking(true)?;
        let socket = {
            let _guard = handle.enter();
            tokio::net::UdpSocket::from_std(std_socket)?
        };
        let udp = UdpSocketState::new((&socket).into())?;
        // Larger buffers absorb bursts; the kernel may grant less, which
        // only costs throughput.
        let _ = udp.set_recv_buffer_size((&socket).into(), config.socket_buffer_bytes);
        let _ = udp.set_send_buffer_size((&socket).into(), config.socket_buffer_bytes);
        // What the kernel granted bounds the windows that may burst into
        // the socket together (see `WindowBudget`); half of it, as the
        // rest goes to the kernel's per-datagram overhead.
        let window_budget_bytes = udp
            .recv_buffer_size((&socket).into())
            .ok()
            .map(|granted| granted as u64 / 2);
        // ICMP errors (port unreachable) let a connect fail fast.
        let _ = udp.enable_transport_errors((&socket).into());
        let local_addr = socket.local_addr()?;
        let capture = config
            .capture
            .as_deref()
            .map(|path| SocketCapture::create(path, local_addr))
            .transpose()?;

        let mut rng = ChaCha8Rng::seed_from_u64(seed());
        let first_port = 49_152 + (rng.next_u32() % 16_384) as u16;
        let link = Arc::new(DriverLink::default());
        let stats = Arc::new(StatsCell::default());
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (accept_tx, accept_rx) = if config.server.is_some() {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let driver = Driver::new(
            socket,
            udp,
            link.clone(),
            stats.clone(),
            Clock::new(),
            DriverParams {
                server: config.server,
                max_connections: config.max_connections,
                max_half_open: config.max_half_open,
                max_half_open_per_peer: config.max_half_open_per_peer,
                max_connections_per_peer: config.max_connections_per_peer,
                syn_cookies: config.syn_cookies,
                idle_eviction: config.idle_eviction,
                idle_release: config.idle_release,
                challenge_ack_limit: config.challenge_ack_limit,
                gso: config.gso,
                transmit_per_segment: config.transmit_per_segment,
                echo_probes: config.probe_path_mtu,
                omit_checksums: config.omit_tcp_checksums,
                window_budget_bytes,
                capture,
            },
            accept_tx,
            cmd_rx,
            rng,
            first_port,
        );
        let span = tracing::info_span!("endpoint", local = %local_addr);
        handle.spawn(tracing::Instrument::instrument(driver.run(), span));
        Ok(Endpoint {
            inner: Arc::new(Inner {
                cmd_tx,
                accept_rx: tokio::sync::Mutex::new(accept_rx),
                link,
                stats,
                local_addr,
                connect_timeout: config.connect_timeout,
                probe_path_mtu: config.probe_path_mtu,
            }),
        })
    }

    /// The socket's local address.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr
    }

    /// The endpoint's counters.
    pub fn stats(&self) -> EndpointStats {
        self.inner.stats.snapshot()
    }

    /// Opens a connection to `remote` and resolves once its handshake
    /// completes. Fails with [`NetError::ConnectionRefused`] when the peer
    /// resets the SYN or its host reports the port unreachable, and with
    /// [`NetError::TimedOut`] after the endpoint's connect timeout.
    ///
    /// With [`EndpointConfig::probe_path_mtu`] (the default) the path's
    /// MTU is probed first and `config.mss` lowered to fit it.
    pub async fn connect(&self, remote: SocketAddr, config: Config) -> Result<Stream, NetError> {
        check_config(&config)?;
        let problem = if remote.port() == 0 {
            Some("port 0")
        } else if remote.ip().is_unspecified() {
            Some("unspecified address")
        } else if remote.is_ipv6() && self.inner.local_addr.is_ipv4() {
            Some("IPv6 address from an IPv4 socket")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(NetError::InvalidRemote { remote, problem });
        }
        let timeout = self.inner.connect_timeout;
        let started = tokio::time::Instant::now();
        let config = if self.inner.probe_path_mtu {
            self.fit_to_path(remote, config, timeout / 2).await?
        } else {
            config
        };
        let (reply, rx) = oneshot::channel();
        self.inner
            .cmd_tx
            .send(Command::Connect {
                remote,
                config: Box::new(config),
                reply,
            })
            .map_err(|_| NetError::EndpointClosed)?;
        let shared = rx.await.map_err(|_| NetError::EndpointClosed)??;
        let stream = Stream::new(shared, self.inner.link.clone());
        let handshake = poll_fn(|cx| stream.poll_connected(cx));
        match tokio::time::timeout_at(started + timeout, handshake).await {
            Ok(Ok(())) => Ok(stream),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                stream.abort();
                Err(NetError::TimedOut {
                    remote,
                    after: timeout,
                })
            }
        }
    }

    /// `config` with its MSS lowered to what the path to `remote` carries,
    /// by one round of probes (see [`super::pmtu`]) that lasts at most
    /// `most`.
    async fn fit_to_path(
        &self,
        remote: SocketAddr,
        mut config: Config,
        most: Duration,
    ) -> Result<Config, NetError> {
        let sizes = pmtu::sizes_to_probe(config.mss, remote);
        if sizes.is_empty() {
            return Ok(config);
        }
        let overhead = pmtu::ip_udp_overhead(remote);
        let payload = |datagram: usize| (datagram - overhead).min(super::MAX_UDP_PAYLOAD_BYTES);
        let token = seed();
        let (events, mut rx) = mpsc::unbounded_channel();
        self.inner
            .cmd_tx
            .send(Command::Probe {
                remote,
                token,
                sizes: sizes.iter().map(|&s| payload(s)).collect(),
                events,
            })
            .map_err(|_| NetError::EndpointClosed)?;
        let mut round = ProbeRound::new(&sizes);
        // Back from UDP payload to datagram bytes (the largest IPv6 size
        // is capped to the largest payload, and maps back to itself).
        let datagram = |p: usize| {
            sizes
                .iter()
                .copied()
                .find(|&s| payload(s) == p)
                .unwrap_or(p + overhead)
        };
        let started = tokio::time::Instant::now();
        loop {
            let elapsed = started.elapsed();
            if round.is_done(elapsed) || elapsed >= most {
                break;
            }
            let wait = round.deadline().min(most) - elapsed;
            match tokio::time::timeout(wait, rx.recv()).await {
                Ok(Some(event)) => round.on_event(event.map_size(datagram), started.elapsed()),
                Ok(None) => return Err(NetError::EndpointClosed),
                Err(_) => {}
            }
        }
        let _ = self.inner.cmd_tx.send(Command::ProbeDone { token });
        let path_mtu = round.path_mtu();
        let fitted = config.mss.min(pmtu::mss_for_datagram(path_mtu, remote));
        tracing::debug!(%remote, path_mtu, mss = fitted, asked = config.mss, after = ?started.elapsed(), "path MTU probed");
        config.mss = fitted;
        // Should the path stop carrying what the probe found, fall back
        // to the base (RFC 8899 section 4.3).
        config
            .black_hole_mss
            .get_or_insert(pmtu::mss_for_datagram(pmtu::BASE_DATAGRAM_BYTES, remote));
        Ok(config)
    }

    /// The next connection a peer opened, once its handshake has
    /// completed, with the peer's address. `None` when the endpoint does
    /// not listen or has shut down.
    pub async fn accept(&self) -> Option<(Stream, SocketAddr)> {
        let mut rx = self.inner.accept_rx.lock().await;
        rx.as_mut()?.recv().await
    }

    /// Graceful shutdown: no new connections are accepted or opened, every
    /// connection is closed (a FIN follows its data) and the endpoint
    /// waits up to `grace` for them to finish; connections still open
    /// after that are reset. Resolves when the driver has stopped.
    pub async fn close(&self, grace: Duration) {
        let (done, rx) = oneshot::channel();
        if self
            .inner
            .cmd_tx
            .send(Command::Close { grace, done })
            .is_ok()
        {
            let _ = rx.await;
        }
    }
}

/// A seed for initial sequence numbers and ports that differs between
/// endpoints and runs.
fn seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// A connection configuration that works on real sockets: valid, and
/// with segments that fit a UDP datagram.
fn check_config(config: &Config) -> Result<(), NetError> {
    config.validate()?;
    if config.mss > super::MAX_MSS {
        return Err(NetError::SegmentTooLarge {
            mss: config.mss,
            max: super::MAX_MSS,
        });
    }
    Ok(())
}
